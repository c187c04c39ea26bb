//! `--encryption-provider-config`: Secrets written through kubectl reach
//! SQLite and etcd encrypted with kube's prefix
//! (`k8s:enc:aesgcm:v1:<key>:`, no plaintext), read back through kubectl,
//! and move to a new key when rewritten with `kubectl get -o json |
//! kubectl replace -f -` after a restart with the new key first.
#![allow(clippy::unwrap_used)]

use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use base64::Engine;
use ferrokube_store::encryption::{Cipher, Transformer};
use ferrokube_testkit::etcd;
use ferrokube_testkit::{kubectl_path, TestServer};

const KEY1: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";
const KEY2: &str = "ZmVkY2JhOTg3NjU0MzIxMGZlZGNiYTk4NzY1NDMyMTA=";
const PASSWORD: &str = "topsecret-value";

/// Secrets encrypted with aesgcm by the keys named, in order, then identity
/// (values written before encryption stay readable).
fn write_config(dir: &Path, keys: &[(&str, &str)]) -> String {
    let keys: String = keys
        .iter()
        .map(|(name, secret)| format!("      - name: {name}\n        secret: {secret}\n"))
        .collect();
    let text = format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n\
         resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n{keys}  - identity: {{}}\n"
    );
    let path = dir.join("encryption.yaml");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

fn kubectl(server: &TestServer, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(text.as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "kubectl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn read_password(server: &TestServer) -> String {
    let encoded = kubectl(
        server,
        &[
            "get",
            "secret",
            "s1",
            "-n",
            "default",
            "-o",
            "jsonpath={.data.password}",
        ],
        None,
    );
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .unwrap();
    String::from_utf8(decoded).unwrap()
}

fn sqlite_value(data_dir: &Path, key: &str) -> Vec<u8> {
    let db = rusqlite::Connection::open(data_dir.join("store.db")).unwrap();
    db.query_row("SELECT value FROM kv WHERE key = ?1", [key], |row| {
        row.get(0)
    })
    .unwrap()
}

#[track_caller]
fn assert_encrypted(value: &[u8], key_name: &str) {
    let prefix = format!("k8s:enc:aesgcm:v1:{key_name}:");
    assert!(
        value.starts_with(prefix.as_bytes()),
        "{:?}",
        String::from_utf8_lossy(value)
    );
    let encoded = base64::engine::general_purpose::STANDARD.encode(PASSWORD);
    for plaintext in [
        PASSWORD,
        &encoded,
        "\"kind\":\"Secret\"",
        "\"namespace\":\"default\"",
    ] {
        assert!(
            !value
                .windows(plaintext.len())
                .any(|window| window == plaintext.as_bytes()),
            "{plaintext} is readable in the stored value"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_sqlite_are_encrypted_and_rotate_to_a_new_key_when_rewritten() {
    let data = tempfile::tempdir().unwrap();
    let config_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &[("key1", KEY1)]);
    let flags = ["--encryption-provider-config", config.as_str()];
    let mut server = TestServer::start_in_with(data.path(), true, &flags);
    let literal = format!("--from-literal=password={PASSWORD}");
    kubectl(
        &server,
        &[
            "create", "secret", "generic", "s1", "-n", "default", &literal,
        ],
        None,
    );
    kubectl(
        &server,
        &[
            "create",
            "configmap",
            "c1",
            "-n",
            "default",
            "--from-literal=k=plain",
        ],
        None,
    );
    assert_eq!(read_password(&server), PASSWORD);
    assert!(server.stop_with("TERM").success());
    assert_encrypted(
        &sqlite_value(data.path(), "/registry/secrets/default/s1"),
        "key1",
    );
    // Resources the configuration does not name are stored as they are.
    let configmap = sqlite_value(data.path(), "/registry/configmaps/default/c1");
    assert!(
        configmap.starts_with(b"{"),
        "{}",
        String::from_utf8_lossy(&configmap)
    );

    // The new key first, the old one still there to read.
    write_config(config_dir.path(), &[("key2", KEY2), ("key1", KEY1)]);
    let mut server = TestServer::start_in_with(data.path(), true, &flags);
    assert_eq!(read_password(&server), PASSWORD);
    let secrets = kubectl(
        &server,
        &["get", "secrets", "-n", "default", "-o", "json"],
        None,
    );
    kubectl(&server, &["replace", "-f", "-"], Some(&secrets));
    assert_eq!(read_password(&server), PASSWORD);
    assert!(server.stop_with("TERM").success());
    assert_encrypted(
        &sqlite_value(data.path(), "/registry/secrets/default/s1"),
        "key2",
    );

    // Without the configuration the value cannot be read, and the rest of
    // the store still serves.
    let server = TestServer::start_in(data.path(), true);
    kubectl(&server, &["get", "configmap", "c1", "-n", "default"], None);
}

/// One key's value read raw from etcd through its JSON gateway.
fn etcd_value(endpoint: &str, key: &str) -> Vec<u8> {
    let engine = base64::engine::general_purpose::STANDARD;
    let address = endpoint.trim_start_matches("http://");
    let body = format!("{{\"key\":\"{}\"}}", engine.encode(key));
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(
        stream,
        "POST /v3/kv/range HTTP/1.0\r\nHost: {address}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (_, json) = response.split_once("\r\n\r\n").unwrap();
    let range: serde_json::Value = serde_json::from_str(json).unwrap();
    let value = range["kvs"][0]["value"]
        .as_str()
        .unwrap_or_else(|| panic!("{range}"));
    engine.decode(value).unwrap()
}

/// On etcd (under a non-default `--etcd-prefix`) the value carries the
/// prefix, and decrypts as kube-apiserver decrypts it: AES-GCM with the
/// etcd key as authenticated data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn secrets_in_etcd_carry_the_providers_prefix() {
    let etcd = etcd::Etcd::start();
    let config_dir = tempfile::tempdir().unwrap();
    let config = write_config(config_dir.path(), &[("key1", KEY1)]);
    let server = TestServer::start_with(&[
        "--storage-backend=etcd3",
        &etcd.servers_flag(),
        "--etcd-prefix=/custom-prefix",
        "--encryption-provider-config",
        &config,
    ]);
    let literal = format!("--from-literal=password={PASSWORD}");
    kubectl(
        &server,
        &[
            "create", "secret", "generic", "s1", "-n", "default", &literal,
        ],
        None,
    );
    assert_eq!(read_password(&server), PASSWORD);
    let etcd_key = "/custom-prefix/secrets/default/s1";
    let value = etcd_value(&etcd.endpoints()[0], etcd_key);
    assert_encrypted(&value, "key1");

    let engine = base64::engine::general_purpose::STANDARD;
    let mut transformer = Transformer::new();
    transformer.push(
        "aesgcm",
        "key1",
        Cipher::aes_gcm(&engine.decode(KEY1).unwrap()).unwrap(),
    );
    let plaintext = transformer
        .from_storage(&value, etcd_key.as_bytes())
        .unwrap();
    let stored: serde_json::Value = serde_json::from_slice(&plaintext).unwrap();
    assert_eq!(stored["kind"], "Secret");
    assert_eq!(stored["data"]["password"], engine.encode(PASSWORD));
}

/// A configuration kube refuses stops the start with kube's error.
#[test]
fn an_invalid_configuration_stops_the_start_with_kubes_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = write_config(dir.path(), &[("key1", "c2hvcnQ=")]);
    let data_dir = dir.path().join("data");
    let out = Command::new(env!("CARGO_BIN_EXE_ferrokube"))
        .args(["serve", "--secure-port", "0", "--fsync=false"])
        .arg("--data-dir")
        .arg(&data_dir)
        .args(["--encryption-provider-config", &config])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "ferrokube: error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: \
             Invalid value: \"REDACTED\": secret is not of the expected length, got 5, expected one of [16 24 32]"
        ),
        "{stderr}"
    );
}
