//! ferrokube: a Kubernetes API server in one binary.

pub mod openapi;
pub mod registry;
pub mod selector;
pub mod authn;
pub mod kubeconfig;
pub mod pki;
pub mod tls;
pub mod discovery;
pub mod names;
pub mod negotiate;
pub mod protobuf;
pub mod object;
pub mod query;
pub mod route;
pub mod status;
pub mod table;
pub mod api;
pub mod defaults;
pub mod server;
pub mod bootstrap;
pub mod quantity;
pub mod schema_walk;
pub mod patch;
pub mod decode_error;
pub mod yaml;
pub mod field_validation;
