//! ferrokube inside your tests: a Kubernetes API server per test, started in
//! milliseconds in the test process, with a ready [`kube::Client`].
//!
//! ```no_run
//! use ferrokube_testing::TestServer;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, PostParams};
//!
//! #[tokio::test]
//! async fn creates_a_config_map() -> Result<(), Box<dyn std::error::Error>> {
//!     let server = TestServer::start().await?;
//!     let config_maps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
//!     let mut config_map = ConfigMap::default();
//!     config_map.metadata.name = Some("settings".into());
//!     config_maps.create(&PostParams::default(), &config_map).await?;
//!     Ok(())
//! } // the server stops here
//! ```
//!
//! - [`TestServer::start`] / [`TestServer::builder`]: a memory store on an
//!   ephemeral 127.0.0.1 port, the built-in controllers (garbage collector,
//!   namespaces, service accounts, …) on unless
//!   [`TestServerBuilder::controllers`] says otherwise; the admin client
//!   ([`TestServer::client`]) and a kubeconfig for tools
//!   ([`TestServer::kubeconfig_path`]). Dropping the server stops it.
//! - [`TestServer::install_crds`]: CRDs from `CustomResourceExt::crd()`,
//!   returned once established and served; [`TestServer::apply_yaml`] seeds
//!   objects from manifests.
//! - [`TestServer::snapshot`] / [`TestServer::restore`]: the whole state in
//!   O(1), so a fixture is built once and every test starts from it (or
//!   [`TestServerBuilder::from_snapshot`]: a new server from it). Watches
//!   opened before a restore end with 410 Expired, as after an etcd
//!   compaction, so informers relist.
//! - Starts are fast because the first server of the process runs the
//!   bootstrap (system namespaces, the bootstrap RBAC policy, system
//!   priority classes) and later ones open their store from a snapshot of
//!   its result ([`TestServerBuilder::without_template`] runs it again).
//!
//! A complete example, a kube-rs `Controller` for a custom resource tested
//! against a `TestServer` from a snapshot fixture, is
//! `crates/testing/tests/controller_example.rs` (see the crate's README).

mod crds;
mod error;
mod pki_cache;
mod seed;
mod server;
mod snapshot;
mod template;

pub use error::{Error, Result};
pub use ferrokube::authz::Mode as AuthorizationMode;
pub use server::{TestServer, TestServerBuilder, SERVER_THREAD_NAME};
pub use snapshot::Snapshot;

/// The field manager of [`TestServer::apply_yaml`] and [`TestServer::install_crds`].
pub const FIELD_MANAGER: &str = "ferrokube-testing";
