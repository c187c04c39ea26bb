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

/// What etcd logs when a port it was given is taken.
const ADDRESS_IN_USE: &str = "address already in use";

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

/// Where [`free_port`] looks: below Linux's ephemeral range (32768–60999),
/// which the kernel hands to outgoing connections and to `bind(0)`.
const PORTS: std::ops::Range<u16> = 15000..32000;

/// A port nobody listens on right now, picked at random below the
/// kernel's ephemeral range. A port from `bind(0)` is an ephemeral one:
/// between this call and its user's `bind`, any outgoing connection of a
/// concurrent test could take it (an etcd member once failed with
/// `bind: address already in use` that way). Here only another caller of
/// this function could, by picking the same port at random.
pub fn free_port() -> u16 {
    use std::hash::{BuildHasher, Hasher};
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let span = u64::from(PORTS.end - PORTS.start);
    loop {
        // RandomState is seeded per process, so concurrent test
        // processes draw different sequences.
        let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
        hasher.write_u64(CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed));
        let offset = u16::try_from(hasher.finish() % span).unwrap_or(0);
        let candidate = PORTS.start + offset;
        if TcpListener::bind(("127.0.0.1", candidate)).is_ok() {
            return candidate;
        }
    }
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
        Etcd::cluster_with(1, Some(tls), free_port)
    }

    /// A cluster of `size` members, every one started and healthy.
    pub fn cluster(size: usize) -> Etcd {
        Etcd::cluster_with(size, None, free_port)
    }

    /// Members that lose their ports to another process before binding
    /// them exit at once; the whole cluster then starts again on new ports
    /// (a member's peer port is part of every member's flags).
    fn cluster_with(
        size: usize,
        tls: Option<EtcdTlsFiles>,
        mut pick_port: impl FnMut() -> u16,
    ) -> Etcd {
        const ATTEMPTS: usize = 4;
        let mut attempt = 0;
        loop {
            attempt += 1;
            let mut etcd = Etcd::spawn_cluster(size, tls.clone(), &mut pick_port);
            let mut failed = None;
            for index in 0..size {
                if let Err(log) = etcd.wait_ready(index) {
                    failed = Some((index, log));
                    break;
                }
            }
            match failed {
                None => return etcd,
                Some((index, log)) if attempt < ATTEMPTS && log.contains(ADDRESS_IN_USE) => {
                    eprintln!("etcd member {index} lost its port ({ADDRESS_IN_USE}); starting the cluster again on new ports");
                }
                Some((index, log)) => {
                    panic!("etcd member {index} did not become healthy; log:\n{log}")
                }
            }
        }
    }

    fn spawn_cluster(
        size: usize,
        tls: Option<EtcdTlsFiles>,
        pick_port: &mut impl FnMut() -> u16,
    ) -> Etcd {
        let dir = tempfile::Builder::new()
            .prefix("ferrokube-etcd-")
            .tempdir()
            .unwrap();
        let members: Vec<Member> = (0..size)
            .map(|index| Member {
                name: format!("m{index}"),
                client_port: pick_port(),
                peer_port: pick_port(),
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
    pub fn wait_healthy(&mut self, index: usize) {
        if let Err(log) = self.wait_ready(index) {
            panic!("etcd member {index} did not become healthy; log:\n{log}");
        }
    }

    /// Wait until member `index` is healthy (see [`Etcd::wait_healthy`]);
    /// its log if it exits first or is not healthy after 60 s.
    fn wait_ready(&mut self, index: usize) -> Result<(), String> {
        let port = self.members[index].client_port;
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let ready = if self.tls.is_some() {
                TcpStream::connect(("127.0.0.1", port)).is_ok()
            } else {
                health(port)
            };
            if ready {
                return Ok(());
            }
            let exited = match self.members[index].child.as_mut() {
                Some(child) => !matches!(child.try_wait(), Ok(None)),
                None => true,
            };
            if exited {
                return Err(format!("(exited)\n{}", self.log(index)));
            }
            if Instant::now() > deadline {
                return Err(format!("(not healthy after 60 s)\n{}", self.log(index)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_ports_are_below_the_ephemeral_range() {
        for _ in 0..100 {
            assert!(PORTS.contains(&free_port()));
        }
    }

    #[test]
    fn a_cluster_whose_member_loses_its_port_starts_again_on_new_ports() {
        // The first port handed out (member 0's client port) is one this
        // test listens on, as another process could between pick and bind.
        let taken = TcpListener::bind("127.0.0.1:0").unwrap();
        let taken_port = taken.local_addr().unwrap().port();
        let mut picks = 0;
        let etcd = Etcd::cluster_with(2, None, || {
            picks += 1;
            if picks == 1 {
                taken_port
            } else {
                free_port()
            }
        });
        assert_eq!(picks, 8, "two clusters of two members, two ports each");
        assert!(!etcd
            .endpoints()
            .iter()
            .any(|url| url.ends_with(&format!(":{taken_port}"))));
        for index in 0..2 {
            assert!(health(etcd.members[index].client_port));
        }
        assert_eq!(taken.local_addr().unwrap().port(), taken_port);
    }
}
