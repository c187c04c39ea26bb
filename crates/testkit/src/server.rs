//! Black-box test harness: runs the `ferrokube` binary (or talks to any
//! Kubernetes API server named by `FERROKUBE_TEST_KUBECONFIG`) and hands tests
//! a `kube::Client`, a namespace of their own, raw HTTP and `kubectl`.
//!
//! Environment:
//! - `FERROKUBE_TEST_KUBECONFIG=PATH`: start nothing and test the cluster that
//!   kubeconfig points at (e.g. a real kube-apiserver 1.34). Tests that must
//!   restart the server are skipped then.
//! - `FERROKUBE_KUBECTL_DIR=DIR`: where `kubectl.1.33` and `kubectl.1.27` live;
//!   by default the folder of `readlink -f $(which kubectl)` (the Google Cloud
//!   SDK layout).
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use http_body_util::BodyExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use kube::config::{KubeConfigOptions, Kubeconfig};
use kube::{Client, Config};

pub const KUBECONFIG_ENV: &str = "FERROKUBE_TEST_KUBECONFIG";
pub const KUBECTL_DIR_ENV: &str = "FERROKUBE_KUBECTL_DIR";
const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);

/// The kubeconfig of an external cluster under test, if one was named.
pub fn external_kubeconfig() -> Option<PathBuf> {
    std::env::var_os(KUBECONFIG_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// True (after printing why) when a test that restarts the server must be
/// skipped because the suite points at an external cluster.
pub fn skip_if_external(test: &str) -> bool {
    if let Some(kc) = external_kubeconfig() {
        eprintln!(
            "SKIPPED {test}: {KUBECONFIG_ENV}={} points at an external cluster, \
             and this test needs to stop and restart the server itself",
            kc.display()
        );
        return true;
    }
    false
}

/// A short random suffix for names: lowercase hex, valid in DNS labels.
pub fn suffix() -> String {
    uuid::Uuid::new_v4().simple().to_string()[..8].to_string()
}

// ---- Owned servers ----

/// A `ferrokube serve` process owned by one test; killed on drop.
pub struct TestServer {
    child: Option<Child>,
    pub data_dir: PathBuf,
    pub kubeconfig: PathBuf,
    pub url: String,
    stderr: Arc<Mutex<String>>,
    _tmp: Option<tempfile::TempDir>,
}

impl TestServer {
    /// Starts a server on a fresh temporary data dir (`--fsync=false`).
    pub fn start() -> TestServer {
        let tmp = tempdir();
        let mut server = TestServer::start_in(tmp.path(), false);
        server._tmp = Some(tmp);
        server
    }

    /// Starts a server on `data_dir` (kept by the caller, so a later server
    /// can reuse it) with `--fsync=<fsync>`.
    pub fn start_in(data_dir: &Path, fsync: bool) -> TestServer {
        TestServer::start_in_with(data_dir, fsync, &[])
    }

    /// Starts a server on a fresh temporary data dir with extra `serve` flags.
    #[allow(dead_code)]
    pub fn start_with(extra: &[&str]) -> TestServer {
        let tmp = tempdir();
        let mut server = TestServer::start_in_with(tmp.path(), false, extra);
        server._tmp = Some(tmp);
        server
    }

    /// As [`start_in`](Self::start_in), with extra `serve` flags.
    pub fn start_in_with(data_dir: &Path, fsync: bool, extra: &[&str]) -> TestServer {
        let mut cmd = Command::new(ferrokube_bin());
        cmd.args(serve_args(data_dir, fsync))
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", ferrokube_bin().display()));
        let stderr = drain_to_string(child.stderr.take().unwrap());
        let (url, kubeconfig) = match read_serving_line(child.stdout.take().unwrap()) {
            Ok(v) => v,
            Err(e) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "ferrokube did not start: {e}\nstderr:\n{}",
                    stderr.lock().unwrap()
                );
            }
        };
        let server = TestServer {
            child: Some(child),
            data_dir: data_dir.to_path_buf(),
            kubeconfig,
            url,
            stderr,
            _tmp: None,
        };
        if let Err(e) = wait_ready(&server.kubeconfig) {
            panic!(
                "ferrokube never became ready: {e}\nstderr:\n{}",
                server.stderr()
            );
        }
        server
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("server already stopped").id()
    }

    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// Sends `signal` (e.g. "TERM", "KILL") and waits up to 30 s for the exit.
    pub fn stop_with(&mut self, signal: &str) -> ExitStatus {
        let mut child = self.child.take().expect("server already stopped");
        let st = Command::new("kill")
            .arg(format!("-{signal}"))
            .arg(child.id().to_string())
            .status()
            .expect("run kill");
        assert!(st.success(), "kill -{signal} {} failed", child.id());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = child.try_wait().expect("wait for ferrokube") {
                return status;
            }
            if Instant::now() > deadline {
                let _ = child.kill();
                let _ = child.wait();
                panic!(
                    "ferrokube did not exit within 30 s of SIG{signal}\nstderr:\n{}",
                    self.stderr()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    pub async fn client(&self) -> Client {
        client_from(&self.kubeconfig).await
    }

    /// Runs `kubectl.<version>` against this server, feeding `stdin`.
    pub fn kubectl_stdin(
        &self,
        version: &str,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (ExitStatus, String, String) {
        run_kubectl(&self.kubeconfig, None, version, args, stdin)
    }

    /// Runs `ferrokube serve --ephemeral <extra>`, which must refuse to
    /// start; answers what it printed on stderr.
    pub fn refused_start(extra: &[&std::ffi::OsStr]) -> String {
        let out = Command::new(ferrokube_bin())
            .args(["serve", "--ephemeral"])
            .args(extra)
            .stdin(Stdio::null())
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", ferrokube_bin().display()));
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert!(!out.status.success(), "ferrokube started:\n{stderr}");
        stderr
    }
}

impl Drop for TestServer {
    fn drop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// Environment variable naming the `ferrokube` binary to run; by default the
/// one cargo built beside the running test (`target/<profile>/ferrokube`).
pub const BIN_ENV: &str = "FERROKUBE_BIN";

/// The `ferrokube` binary: `$FERROKUBE_BIN`, or the one in the directory above
/// the test executable's (`target/debug/deps/<test>` → `target/debug/ferrokube`;
/// cargo builds a package's binaries before running its integration tests).
pub fn ferrokube_bin() -> PathBuf {
    if let Some(path) = std::env::var_os(BIN_ENV).filter(|path| !path.is_empty()) {
        return PathBuf::from(path);
    }
    let test_exe = std::env::current_exe().unwrap();
    let built = test_exe
        .parent()
        .and_then(Path::parent)
        .map(|profile_dir| profile_dir.join(format!("ferrokube{}", std::env::consts::EXE_SUFFIX)));
    match built {
        Some(path) if path.is_file() => path,
        _ => panic!(
            "no ferrokube binary beside {}: run the tests with `cargo test -p ferrokube` \
             (which builds it) or set {BIN_ENV}=/path/to/ferrokube",
            test_exe.display()
        ),
    }
}

fn serve_args(data_dir: &Path, fsync: bool) -> Vec<String> {
    vec![
        "serve".into(),
        "--data-dir".into(),
        data_dir.display().to_string(),
        "--secure-port".into(),
        "0".into(),
        format!("--fsync={fsync}"),
        // As kind, kubeadm and envtest start kube-apiserver, so privileged
        // pods reach admission (PodSecurity) as they do there.
        "--allow-privileged=true".into(),
    ]
}

fn tempdir() -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix("ferrokube-test-")
        .tempdir()
        .expect("create temp dir")
}

fn drain_to_string(mut r: impl Read + Send + 'static) -> Arc<Mutex<String>> {
    let buf = Arc::new(Mutex::new(String::new()));
    let out = buf.clone();
    std::thread::spawn(move || {
        let mut chunk = [0u8; 4096];
        while let Ok(n) = r.read(&mut chunk) {
            if n == 0 {
                break;
            }
            out.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&chunk[..n]));
        }
    });
    buf
}

/// Reads `ferrokube serving on https://HOST:PORT — export KUBECONFIG=PATH`,
/// then keeps draining stdout so the server never blocks on a full pipe.
fn read_serving_line(stdout: impl Read + Send + 'static) -> Result<(String, PathBuf), String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let res = reader.read_line(&mut line).map(|_| line);
        let _ = tx.send(res);
        let mut sink = Vec::new();
        let _ = reader.read_to_end(&mut sink);
    });
    let line = match rx.recv_timeout(STARTUP_TIMEOUT) {
        Ok(Ok(line)) => line,
        Ok(Err(e)) => return Err(format!("reading stdout: {e}")),
        Err(_) => return Err("no `serving on` line within 60 s".into()),
    };
    let line = line.trim();
    let url = line
        .split("serving on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .ok_or_else(|| format!("unexpected first line {line:?}"))?;
    let kubeconfig = line
        .split("KUBECONFIG=")
        .nth(1)
        .ok_or_else(|| format!("no KUBECONFIG= in first line {line:?}"))?;
    Ok((url.to_string(), PathBuf::from(kubeconfig.trim())))
}

/// Polls `/readyz` until it answers 200 (runs its own runtime on a thread, so
/// it may be called from sync code and from inside async tests alike).
fn wait_ready(kubeconfig: &Path) -> Result<(), String> {
    let kubeconfig = kubeconfig.to_path_buf();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        rt.block_on(async move {
            let client = client_from(&kubeconfig).await;
            let deadline = Instant::now() + STARTUP_TIMEOUT;
            let mut last = String::new();
            while Instant::now() < deadline {
                let req = http::Request::get("/readyz").body(Vec::new()).unwrap();
                match client.request_text(req).await {
                    Ok(_) => return Ok(()),
                    Err(e) => last = e.to_string(),
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            Err(format!("/readyz never returned 200; last error: {last}"))
        })
    })
    .join()
    .map_err(|_| "readiness thread panicked".to_string())?
}

// ---- The shared cluster (one per test binary) ----

struct Shared {
    kubeconfig: PathBuf,
    /// `--cache-dir` for kubectl, so discovery caches never outlive a server.
    kubectl_cache: Option<PathBuf>,
    /// Held open for the life of the test process: when it closes, the
    /// watchdog shell stops the server and removes its data dir.
    _watchdog_stdin: Option<Mutex<ChildStdin>>,
}

static SHARED: OnceLock<Shared> = OnceLock::new();

fn shared() -> &'static Shared {
    SHARED.get_or_init(|| {
        if let Some(kubeconfig) = external_kubeconfig() {
            assert!(
                kubeconfig.is_file(),
                "{KUBECONFIG_ENV}={} is not a file",
                kubeconfig.display()
            );
            return Shared {
                kubeconfig,
                kubectl_cache: None,
                _watchdog_stdin: None,
            };
        }
        start_shared_server()
    })
}

/// Starts the server behind a watchdog `sh` that kills it (and deletes its
/// data dir) once this test process exits and the watchdog's stdin closes;
/// statics are never dropped, so `Drop` cannot do that job.
#[allow(clippy::zombie_processes)] // lives (and is reaped) with the test process
fn start_shared_server() -> Shared {
    let dir = tempdir().keep();
    let script = r#"dir="$1"; shift
"$@" &
pid=$!
while read -r _; do :; done
kill -TERM "$pid" 2>/dev/null
wait "$pid"
rm -rf "$dir""#;
    let mut child = Command::new("sh")
        .arg("-c")
        .arg(script)
        .arg("ferrokube-watchdog")
        .arg(&dir)
        .arg(ferrokube_bin())
        .args(serve_args(&dir, false))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn sh for the shared ferrokube server");
    let stderr = drain_to_string(child.stderr.take().unwrap());
    let (_url, kubeconfig) = read_serving_line(child.stdout.take().unwrap()).unwrap_or_else(|e| {
        panic!(
            "shared ferrokube did not start: {e}\nstderr:\n{}",
            stderr.lock().unwrap()
        )
    });
    if let Err(e) = wait_ready(&kubeconfig) {
        panic!(
            "shared ferrokube never became ready: {e}\nstderr:\n{}",
            stderr.lock().unwrap()
        );
    }
    let cache = dir.join("kubectl-cache");
    std::fs::create_dir_all(&cache).expect("create kubectl cache dir");
    Shared {
        kubeconfig,
        kubectl_cache: Some(cache),
        _watchdog_stdin: Some(Mutex::new(child.stdin.take().unwrap())),
    }
}

// ---- Clients ----

pub async fn config_from(kubeconfig: &Path) -> Config {
    let kc = Kubeconfig::read_from(kubeconfig)
        .unwrap_or_else(|e| panic!("read kubeconfig {}: {e}", kubeconfig.display()));
    Config::from_custom_kubeconfig(kc, &KubeConfigOptions::default())
        .await
        .unwrap_or_else(|e| panic!("load kubeconfig {}: {e}", kubeconfig.display()))
}

pub async fn client_from(kubeconfig: &Path) -> Client {
    Client::try_from(config_from(kubeconfig).await).expect("build kube client")
}

/// Creates namespace `name` and returns it as the server stored it.
pub async fn create_namespace(client: &Client, name: &str) -> Namespace {
    let ns: Namespace = serde_json::from_value(serde_json::json!({
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": { "name": name },
    }))
    .unwrap();
    Api::<Namespace>::all(client.clone())
        .create(&PostParams::default(), &ns)
        .await
        .unwrap_or_else(|e| panic!("create namespace {name}: {e}"))
}

/// The `kube::Error::Api` status inside `e`, or a panic naming what came.
pub fn api_status(e: kube::Error) -> kube::core::Status {
    match e {
        kube::Error::Api(s) => *s,
        other => panic!("expected an API error Status, got {other:?}"),
    }
}

/// Asserts `res` failed with the given code, reason and message.
#[track_caller]
pub fn expect_api_error<T: std::fmt::Debug>(
    res: Result<T, kube::Error>,
    code: u16,
    reason: &str,
    message: &str,
) -> kube::core::Status {
    let st = match res {
        Ok(v) => panic!("expected {code} {reason}, got success: {v:?}"),
        Err(e) => api_status(e),
    };
    assert_eq!(st.code, code, "code of {st:?}");
    assert_eq!(st.reason, reason, "reason of {st:?}");
    assert_eq!(st.message, message, "message of {st:?}");
    st
}

// ---- Per-test environment ----

/// One test's view of the shared cluster: a client and a namespace of its own.
pub struct TestEnv {
    pub client: Client,
    pub ns: String,
    pub kubeconfig: PathBuf,
    kubectl_cache: Option<PathBuf>,
}

/// The outcome of a raw HTTP request.
#[derive(Debug)]
pub struct RawResponse {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: String,
}

impl RawResponse {
    /// A response header as text ("" when absent).
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body)
            .unwrap_or_else(|e| panic!("response body is not JSON ({e}): {:?}", self.body))
    }
}

impl TestEnv {
    /// Connects to the shared cluster and creates namespace `<prefix>-<random>`.
    pub async fn new(prefix: &str) -> TestEnv {
        let shared = shared();
        let client = client_from(&shared.kubeconfig).await;
        let ns = format!("{prefix}-{}", suffix());
        create_namespace(&client, &ns).await;
        TestEnv {
            client,
            ns,
            kubeconfig: shared.kubeconfig.clone(),
            kubectl_cache: shared.kubectl_cache.clone(),
        }
    }

    pub fn api<K>(&self) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        Api::namespaced(self.client.clone(), &self.ns)
    }

    /// A client for the same server and CA that sends `token` as a bearer
    /// token, or no credentials at all when `token` is `None`.
    pub async fn client_with_token(&self, token: Option<&str>) -> Client {
        let mut config = config_from(&self.kubeconfig).await;
        config.auth_info = Default::default();
        config.auth_info.token = token.map(|t| t.to_string().into());
        Client::try_from(config).expect("build client")
    }

    /// Sends a raw request with the admin credentials; never fails on HTTP
    /// error codes (they are returned for the test to check).
    pub async fn raw(
        &self,
        method: &str,
        path: &str,
        content_type: Option<&str>,
        body: Vec<u8>,
    ) -> RawResponse {
        raw_request(&self.client, method, path, content_type, body).await
    }

    /// Runs `kubectl.<version>` with this cluster's kubeconfig.
    pub fn kubectl(&self, version: &str, args: &[&str]) -> (ExitStatus, String, String) {
        self.kubectl_stdin(version, args, None)
    }

    /// Like [`kubectl`](Self::kubectl), feeding `stdin` (for `-f -`).
    pub fn kubectl_stdin(
        &self,
        version: &str,
        args: &[&str],
        stdin: Option<&str>,
    ) -> (ExitStatus, String, String) {
        run_kubectl(
            &self.kubeconfig,
            self.kubectl_cache.as_deref(),
            version,
            args,
            stdin,
        )
    }

    /// Runs kubectl and panics (with its output) unless it exits 0; returns stdout.
    #[track_caller]
    pub fn kubectl_ok(&self, version: &str, args: &[&str]) -> String {
        let (st, out, err) = self.kubectl(version, args);
        assert!(
            st.success(),
            "kubectl.{version} {args:?} failed ({st}):\nstdout:\n{out}\nstderr:\n{err}"
        );
        out
    }
}

pub async fn raw_request(
    client: &Client,
    method: &str,
    path: &str,
    content_type: Option<&str>,
    body: Vec<u8>,
) -> RawResponse {
    let mut req = http::Request::builder()
        .method(method)
        .uri(path)
        .header("Accept", "application/json");
    if let Some(ct) = content_type {
        req = req.header("Content-Type", ct);
    }
    let req = req.body(kube::client::Body::from(body)).unwrap();
    let res = client
        .send(req)
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: transport error {e:?}"));
    let status = res.status().as_u16();
    let headers = res.headers().clone();
    let bytes = res
        .into_body()
        .collect()
        .await
        .unwrap_or_else(|e| panic!("{method} {path}: reading body: {e:?}"))
        .to_bytes();
    RawResponse {
        status,
        headers,
        body: String::from_utf8_lossy(&bytes).into_owned(),
    }
}

// ---- kubectl ----

/// Runs `kubectl.<version>` with `kubeconfig` (and a discovery `cache`
/// folder), feeding `stdin`: (status, stdout, stderr).
fn run_kubectl(
    kubeconfig: &Path,
    cache: Option<&Path>,
    version: &str,
    args: &[&str],
    stdin: Option<&str>,
) -> (ExitStatus, String, String) {
    let bin = kubectl_path(version);
    let mut cmd = Command::new(&bin);
    cmd.arg("--kubeconfig").arg(kubeconfig);
    if let Some(cache) = cache {
        cmd.arg("--cache-dir").arg(cache);
    }
    let input = if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    };
    cmd.args(args).env_remove("KUBECONFIG").stdin(input);
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", bin.display()));
    if let Some(text) = stdin {
        use std::io::Write;
        let mut w = child.stdin.take().unwrap();
        w.write_all(text.as_bytes()).expect("write kubectl stdin");
    }
    let out = child.wait_with_output().expect("wait for kubectl");
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status, text(&out.stdout), text(&out.stderr))
}

/// The folder holding the versioned kubectl binaries.
pub fn kubectl_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os(KUBECTL_DIR_ENV).filter(|v| !v.is_empty()) {
        return PathBuf::from(dir);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    let found = std::env::split_paths(&path)
        .map(|d| d.join("kubectl"))
        .find(|p| p.is_file());
    let Some(kubectl) = found else {
        panic!("{}", kubectl_missing("no `kubectl` on PATH"));
    };
    let real = std::fs::canonicalize(&kubectl).unwrap_or(kubectl);
    real.parent()
        .expect("kubectl has a parent dir")
        .to_path_buf()
}

fn kubectl_missing(why: &str) -> String {
    format!(
        "{why}. These tests need the versioned kubectl binaries `kubectl.1.33` and \
         `kubectl.1.27` (as shipped by the Google Cloud SDK's kubectl component) in the \
         folder of `readlink -f $(which kubectl)`, or set {KUBECTL_DIR_ENV}=DIR to a \
         folder holding them."
    )
}

/// `<kubectl_dir>/kubectl.<version>`, or a panic saying what is missing.
pub fn kubectl_path(version: &str) -> PathBuf {
    let p = kubectl_dir().join(format!("kubectl.{version}"));
    assert!(
        p.is_file(),
        "{}",
        kubectl_missing(&format!("{} does not exist", p.display()))
    );
    p
}
