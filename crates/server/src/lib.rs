//! ferrokube: a Kubernetes API server in one binary.

// The wire formats live in `ferrokube-formats` (crates/formats); they keep
// their paths here so the layers above name them as before.
pub use ferrokube_formats::{cbor, go, protobuf, quantity, segments, selector, yaml};

pub mod admission;
pub mod allocator;
pub mod api;
pub mod audit;
pub mod authn;
pub mod authz;
pub mod bootstrap;
pub mod cel_env;
pub mod cluster_authentication_trust;
pub mod coalesce;
pub mod connection_timeouts;
pub mod controllers;
pub mod crd;
pub mod data_dir;
pub mod decode_error;
pub mod defaults;
pub mod defaults_non_core;
pub mod discovery;
pub mod disruption_budget;
pub mod encryption_config;
pub mod envtest;
pub mod field_validation;
pub mod fieldmanager;
pub mod flowcontrol;
pub mod flowcontrol_consumer;
pub mod flowcontrol_producer;
#[doc(hidden)]
pub mod fuzzing;
pub mod kubeconfig;
pub mod label_selector;
pub mod leader_election;
pub mod legacy_token_tracking;
pub mod metrics;
pub mod names;
pub mod negotiate;
pub mod object;
pub mod openapi;
pub mod patch;
pub mod pki;
pub mod pod_condition;
pub mod post_start_hooks;
pub mod priority_classes;
pub mod query;
pub mod rbac_policy;
pub mod registry;
pub mod rng;
pub mod route;
pub mod schema;
pub mod schema_walk;
pub mod server;
pub mod serviceaccount;
pub mod snapshot_cell;
pub mod status;
pub mod table;
pub mod tls;
pub mod uid;
pub mod validation;
pub mod versions;
