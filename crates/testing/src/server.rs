//! [`TestServer`]: ferrokube on a memory store in this process, on its own
//! thread and runtime, with a ready admin `kube::Client`.

use std::collections::BTreeSet;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;

use ferrokube::authz::Mode;
use ferrokube::object::ObjectStore;
use ferrokube::registry::LiveRegistry;
use ferrokube::server::{Server, ServerConfig};
use kube::config::{KubeConfigOptions, Kubeconfig};
use tokio::sync::oneshot;

use crate::error::{Error, Result};
use crate::snapshot::Snapshot;

/// The name of a server's thread and of its runtime's blocking threads.
pub const SERVER_THREAD_NAME: &str = "ferrokube-test-server";

/// What a started server hands back to the test.
struct Started {
    store: ObjectStore,
    registry: Arc<LiveRegistry>,
    address: SocketAddr,
    kubeconfig_path: PathBuf,
}

/// A Kubernetes API server (ferrokube) running inside the test process on a
/// memory store and an ephemeral 127.0.0.1 port.
///
/// It runs on a thread and Tokio runtime of its own, so it works from any
/// `#[tokio::test]` flavor and several run side by side. Dropping it stops
/// it: the accept loop and every connection end, the built-in controllers
/// and the store's committer thread stop, its thread is joined, and the
/// temporary directory holding its certificates and kubeconfig is removed.
pub struct TestServer {
    client: kube::Client,
    store: ObjectStore,
    registry: Arc<LiveRegistry>,
    address: SocketAddr,
    kubeconfig_path: PathBuf,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
    /// Last: removed once the server has stopped.
    _data_dir: tempfile::TempDir,
}

/// How a [`TestServer`] starts: [`TestServer::builder`].
#[derive(Clone, Default)]
pub struct TestServerBuilder {
    controllers: Option<Vec<String>>,
    authorization_modes: Option<Vec<Mode>>,
    start_from: Option<Snapshot>,
    without_template: bool,
    forbid_privileged: bool,
}

impl TestServerBuilder {
    /// `--controllers`, as kube-controller-manager reads it: `*` every
    /// default-on controller, `name` one more, `-name` one fewer; an empty
    /// list runs none. Default: `*`.
    pub fn controllers<I, S>(mut self, controllers: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.controllers = Some(controllers.into_iter().map(Into::into).collect());
        self
    }

    /// `--authorization-mode`, in order. Default: RBAC (the admin client is
    /// in `system:masters` and allowed everything either way).
    pub fn authorization_modes(mut self, modes: impl IntoIterator<Item = Mode>) -> Self {
        self.authorization_modes = Some(modes.into_iter().collect());
        self
    }

    /// Start from `snapshot` (of any server of this process) instead of an
    /// empty store: a fixture built once, each test on its own server.
    pub fn from_snapshot(mut self, snapshot: &Snapshot) -> Self {
        self.start_from = Some(snapshot.clone());
        self
    }

    /// Run the bootstrap post-start hooks as a new kube-apiserver does
    /// (writing the bootstrap RBAC policy: tens of milliseconds) instead of
    /// starting from the process's template of their result (see the
    /// crate docs). Ignored with [`Self::from_snapshot`].
    pub fn without_template(mut self) -> Self {
        self.without_template = true;
        self
    }

    /// `--allow-privileged`: whether pods and pod templates may ask for
    /// `privileged: true` (and Windows host-process containers). Default:
    /// true, as envtest, kind and kubeadm start kube-apiserver; `false` is
    /// kube-apiserver's own default. Each server keeps its own setting.
    pub fn allow_privileged(mut self, allow: bool) -> Self {
        self.forbid_privileged = !allow;
        self
    }

    /// Start the server and wait until it is ready (its post-start hooks,
    /// such as the bootstrap RBAC policy, have run and the controllers are
    /// started).
    pub async fn start(self) -> Result<TestServer> {
        let data_dir = tempfile::Builder::new()
            .prefix("ferrokube-testing-")
            .tempdir()
            .map_err(Error::TempDir)?;
        crate::pki_cache::install(data_dir.path())?;
        let allow_privileged = !self.forbid_privileged;
        let mut config = ServerConfig::ephemeral(data_dir.path().to_path_buf());
        if let Some(controllers) = &self.controllers {
            config.controllers = parse_controllers(controllers)?;
        }
        if let Some(modes) = self.authorization_modes {
            config.authorization_modes = modes;
        }
        match (self.start_from, self.without_template) {
            // A snapshot of the caller's: kube reconciles the bootstrap
            // policy on every start, over whatever the store holds.
            (Some(snapshot), _) => config.start_from = Some(snapshot.into_checkpoint()),
            (None, false) => {
                config.start_from = Some(crate::template::template().await?.into_checkpoint());
                config.start_from_bootstrapped = true;
            }
            (None, true) => {}
        }
        let (ready_sender, ready) = oneshot::channel();
        let (stop, stopped) = oneshot::channel::<()>();
        let thread = std::thread::Builder::new()
            .name(SERVER_THREAD_NAME.into())
            .spawn(move || run(config, allow_privileged, ready_sender, stopped))
            .map_err(Error::Thread)?;
        let started = match ready.await {
            Ok(Ok(started)) => started,
            Ok(Err(error)) => {
                let _ = thread.join();
                return Err(error);
            }
            Err(_) => {
                let _ = thread.join();
                return Err(Error::Stopped);
            }
        };
        let client = match client_from(&started.kubeconfig_path).await {
            Ok(client) => client,
            Err(error) => {
                drop(stop);
                let _ = thread.join();
                return Err(error);
            }
        };
        Ok(TestServer {
            client,
            store: started.store,
            registry: started.registry,
            address: started.address,
            kubeconfig_path: started.kubeconfig_path,
            stop: Some(stop),
            thread: Some(thread),
            _data_dir: data_dir,
        })
    }
}

fn parse_controllers(values: &[String]) -> Result<BTreeSet<&'static str>> {
    if values.is_empty() {
        return Ok(BTreeSet::new());
    }
    ferrokube::controllers::parse_controllers(values)
        .map_err(|error| Error::Controllers(error.to_string()))
}

/// The server thread: bind, report ready, serve until stopped, then drop
/// the runtime, which ends every task the server spawned.
fn run(
    config: ServerConfig,
    allow_privileged: bool,
    ready: oneshot::Sender<Result<Started>>,
    stopped: oneshot::Receiver<()>,
) {
    // This server's `--allow-privileged`, on its thread and its runtime's
    // blocking threads: other servers of the process keep theirs.
    let allow =
        move || ferrokube::validation::capabilities::set_thread_allow_privileged(allow_privileged);
    allow();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .on_thread_start(allow)
        .build()
    {
        Ok(runtime) => runtime,
        Err(error) => {
            let _ = ready.send(Err(Error::Thread(error)));
            return;
        }
    };
    runtime.block_on(async move {
        let server = match Server::bind(config).await {
            Ok(server) => server,
            Err(error) => {
                let _ = ready.send(Err(error.into()));
                return;
            }
        };
        server.api.post_start_hooks.all_completed().await;
        let started = Started {
            store: server.api.store.clone(),
            registry: server.api.registry.clone(),
            address: server.address,
            kubeconfig_path: server.kubeconfig_path.clone(),
        };
        if ready.send(Ok(started)).is_err() {
            return;
        }
        server
            .serve(async move {
                let _ = stopped.await;
            })
            .await;
    });
    drop(runtime);
}

/// The admin client of `kubeconfig_path`.
async fn client_from(kubeconfig_path: &Path) -> Result<kube::Client> {
    let kubeconfig = Kubeconfig::read_from(kubeconfig_path)
        .map_err(|error| Error::Kubeconfig(error.to_string()))?;
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
        .await
        .map_err(|error| Error::Kubeconfig(error.to_string()))?;
    Ok(kube::Client::try_from(config)?)
}

impl TestServer {
    /// A server with the defaults: every default controller, RBAC.
    pub async fn start() -> Result<TestServer> {
        TestServerBuilder::default().start().await
    }

    pub fn builder() -> TestServerBuilder {
        TestServerBuilder::default()
    }

    /// An admin client (`system:masters`); clone it freely.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// The admin kubeconfig, for tools (kubectl, client-go, the Python client).
    pub fn kubeconfig_path(&self) -> &Path {
        &self.kubeconfig_path
    }

    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("https://{}", self.address)
    }

    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// The whole state now: every object with its resourceVersion and
    /// managedFields, and the revision. O(1): the store's persistent maps
    /// are shared, not copied.
    pub async fn snapshot(&self) -> Result<Snapshot> {
        Ok(Snapshot::new(self.store.checkpoint().await?))
    }

    /// Make `snapshot` (taken from this server) the state again. The
    /// revision moves on (never back), each object keeps the snapshot's
    /// resourceVersion, and every watch opened before ends with 410 Expired,
    /// as after an etcd compaction, so informers and kube-rs watchers
    /// relist. Returns once custom resources are served as the snapshot's
    /// CRDs say.
    pub async fn restore(&self, snapshot: &Snapshot) -> Result<()> {
        let before = self.store.snapshot();
        let revision = self.store.restore(snapshot.checkpoint()).await?;
        // The served resources change only when the CRDs do; then wait for
        // the registry to follow (requests that would answer 404 wait for
        // it anyway, but a CRD the restore removed would still be served).
        let after = snapshot.checkpoint().snapshot();
        let crds = |state: &ferrokube_store::Snapshot<_>| {
            state
                .range(ferrokube::crd::serving::CRD_PREFIX, None)
                .map(|(key, entry)| (key.clone(), entry.mod_revision))
                .collect::<Vec<_>>()
        };
        if crds(&before) != crds(after) {
            self.registry.caught_up(revision).await;
        }
        Ok(())
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
