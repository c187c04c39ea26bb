//! etcd for tests: one member or a cluster of members on loopback, each in a
//! temporary directory, on free ports; stopped (SIGKILL) and removed on drop.
//!
//! Needs the `etcd` binary (Debian's `etcd-server`; `scripts/test.sh`
//! installs it), found on PATH, in /usr/bin, or at `$FERROKUBE_ETCD`.
//! Shared by the store's conformance suite (`crates/store/tests`) and the
//! server's replica and fault tests.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const ETCD_ENV: &str = "FERROKUBE_ETCD";

/// The etcd binary, or a panic that says how to get one.
pub fn etcd_binary() -> PathBuf {
    if let Some(path) = std::env::var_os(ETCD_ENV).filter(|path| !path.is_empty()) {
        return PathBuf::from(path);
    }
    let on_path = std::env::var_os("PATH")
        .map(|paths| std::env::split_paths(&paths).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .chain([PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")])
        .map(|dir| dir.join("etcd"))
        .find(|candidate| candidate.is_file());
    on_path.unwrap_or_else(|| {
        panic!(
            "these tests need the etcd binary: install Debian's etcd-server \
             (scripts/test.sh does: apt-get install -y etcd-server) or set {ETCD_ENV}=/path/to/etcd"
        )
    })
}

/// A port nobody listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

struct Member {
    name: String,
    client_port: u16,
    peer_port: u16,
    data_dir: PathBuf,
    child: Option<Child>,
}

/// PEM files for an etcd that serves clients over TLS and asks for client certificates.
#[derive(Clone)]
pub struct EtcdTlsFiles {
    pub ca: PathBuf,
    pub cert: PathBuf,
    pub key: PathBuf,
}

/// One etcd member or a cluster of them.
pub struct Etcd {
    members: Vec<Member>,
    initial_cluster: String,
    tls: Option<EtcdTlsFiles>,
    dir: tempfile::TempDir,
}

impl Etcd {
    /// A single-member etcd.
    pub fn start() -> Etcd {
        Etcd::cluster(1)
    }

    /// A single member serving clients on `https://` with `tls`
    /// (`--client-cert-auth`: clients need a certificate from `tls.ca`).
    pub fn start_tls(tls: EtcdTlsFiles) -> Etcd {
        Etcd::cluster_with(1, Some(tls))
    }

    /// A cluster of `size` members, every one started and healthy.
    pub fn cluster(size: usize) -> Etcd {
        Etcd::cluster_with(size, None)
    }

    fn cluster_with(size: usize, tls: Option<EtcdTlsFiles>) -> Etcd {
        let dir = tempfile::Builder::new()
            .prefix("ferrokube-etcd-")
            .tempdir()
            .unwrap();
        let members: Vec<Member> = (0..size)
            .map(|index| Member {
                name: format!("m{index}"),
                client_port: free_port(),
                peer_port: free_port(),
                data_dir: dir.path().join(format!("m{index}")),
                child: None,
            })
            .collect();
        let initial_cluster = members
            .iter()
            .map(|member| format!("{}=http://127.0.0.1:{}", member.name, member.peer_port))
            .collect::<Vec<_>>()
            .join(",");
        let mut etcd = Etcd {
            members,
            initial_cluster,
            tls,
            dir,
        };
        for index in 0..size {
            etcd.spawn(index, "new");
        }
        for index in 0..size {
            etcd.wait_healthy(index);
        }
        etcd
    }

    fn spawn(&mut self, index: usize, state: &str) {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(self.dir.path().join(format!("m{index}.log")))
            .unwrap();
        let scheme = self.scheme();
        let member = &mut self.members[index];
        let client = format!("{scheme}://127.0.0.1:{}", member.client_port);
        let peer = format!("http://127.0.0.1:{}", member.peer_port);
        let mut command = Command::new(etcd_binary());
        if let Some(tls) = &self.tls {
            command
                .arg("--client-cert-auth")
                .arg("--trusted-ca-file")
                .arg(&tls.ca)
                .arg("--cert-file")
                .arg(&tls.cert)
                .arg("--key-file")
                .arg(&tls.key);
        }
        let child = command
            .args([
                "--name",
                &member.name,
                "--data-dir",
                &member.data_dir.display().to_string(),
                "--listen-client-urls",
                &client,
                "--advertise-client-urls",
                &client,
                "--listen-peer-urls",
                &peer,
                "--initial-advertise-peer-urls",
                &peer,
                "--initial-cluster",
                &self.initial_cluster,
                "--initial-cluster-state",
                state,
                "--initial-cluster-token",
                "ferrokube-test",
                "--log-level",
                "warn",
                "--logger",
                "zap",
            ])
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot run {}: {error}", etcd_binary().display()));
        member.child = Some(child);
    }

    fn scheme(&self) -> &'static str {
        if self.tls.is_some() {
            "https"
        } else {
            "http"
        }
    }

    /// Wait until member `index` answers `/health` with `"health":"true"`
    /// (over TLS: until it accepts connections; clients retry their first request).
    pub fn wait_healthy(&self, index: usize) {
        let port = self.members[index].client_port;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = if self.tls.is_some() {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
            } else {
                health(port)
            };
            if ready {
                return;
            }
            if Instant::now() > deadline {
                panic!(
                    "etcd member {index} not healthy after 60 s; log:\n{}",
                    self.log(index)
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn log(&self, index: usize) -> String {
        std::fs::read_to_string(self.dir.path().join(format!("m{index}.log"))).unwrap_or_default()
    }

    /// `http://127.0.0.1:P` of every member.
    pub fn endpoints(&self) -> Vec<String> {
        self.members
            .iter()
            .map(|member| format!("{}://127.0.0.1:{}", self.scheme(), member.client_port))
            .collect()
    }

    /// `--etcd-servers` for every member.
    pub fn servers_flag(&self) -> String {
        format!("--etcd-servers={}", self.endpoints().join(","))
    }

    /// SIGKILL member `index` (its data stays).
    pub fn kill(&mut self, index: usize) {
        if let Some(mut child) = self.members[index].child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Start member `index` again on its data, and wait until it is healthy.
    pub fn restart(&mut self, index: usize) {
        assert!(self.members[index].child.is_none(), "member {index} runs");
        self.spawn(index, "existing");
        self.wait_healthy(index);
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        for index in 0..self.members.len() {
            self.kill(index);
        }
    }
}

/// etcd's `/health` endpoint on plain HTTP.
fn health(port: u16) -> bool {
    let Ok(mut stream) = TcpStream::connect(("127.0.0.1", port)) else {
        return false;
    };
    let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
    if stream
        .write_all(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
        .is_err()
    {
        return false;
    }
    let mut response = String::new();
    let _ = stream.read_to_string(&mut response);
    response.contains("\"health\":\"true\"")
}
