//! ferrokube: a Kubernetes API server in one binary.

pub mod allocator;
pub mod api;
pub mod authn;
pub mod bootstrap;
pub mod cbor;
pub mod coalesce;
pub mod controllers;
pub mod decode_error;
pub mod defaults;
pub mod discovery;
pub mod field_validation;
pub mod fieldmanager;
#[doc(hidden)]
pub mod fuzzing;
pub mod kubeconfig;
pub mod leader_election;
pub mod metrics;
pub mod names;
pub mod negotiate;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod pki;
pub mod protobuf;
pub mod quantity;
pub mod query;
pub mod registry;
pub mod route;
pub mod schema_walk;
pub mod segments;
pub mod selector;
pub mod server;
pub mod status;
pub mod table;
pub mod tls;
pub mod yaml;
