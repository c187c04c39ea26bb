//! The process-wide template: the state a new server has once its
//! bootstrap post-start hooks have run (the system namespaces, the
//! bootstrap RBAC policy, the system priority classes), made once per
//! process by a server started the long way, kept as a [`Snapshot`], and
//! the state every later default server starts from.
//!
//! Writing the bootstrap policy is most of a fresh start (a few hundred
//! objects reconciled through the API); starting from the template is the
//! store's O(1) `open_checkpoint`. Each server still gets its own store (a
//! persistent map shared copy-on-write, never a shared mutable one), runs
//! the rest of a start as before (the `default/kubernetes` Service's
//! endpoints are reconciled to its own port, its controllers start), and
//! its bootstrap objects are the template's, uids, resourceVersions and
//! creationTimestamps included: as on two kube-apiservers, those values
//! are arbitrary, what they say is not (`tests/template.rs` compares a
//! templated server's objects with a fresh one's).

use tokio::sync::OnceCell;

use crate::error::Result;
use crate::server::TestServerBuilder;
use crate::snapshot::Snapshot;

static TEMPLATE: OnceCell<Snapshot> = OnceCell::const_new();

/// The template, made on the first call (a failed attempt is retried by
/// the next call).
pub(crate) async fn template() -> Result<Snapshot> {
    TEMPLATE.get_or_try_init(make).await.cloned()
}

/// A server without controllers (so the template holds only what the
/// server itself writes at start), started the long way, snapshotted once
/// ready, and stopped.
async fn make() -> Result<Snapshot> {
    // Boxed: `start` awaits this function (a recursive future type).
    let server = Box::pin(
        TestServerBuilder::default()
            .controllers(Vec::<String>::new())
            .without_template()
            .start(),
    )
    .await?;
    server.snapshot().await
}
