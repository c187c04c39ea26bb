//! `secret-create`: what encryption at rest costs a Secret create. Servers
//! started --runs times alternating without an encryption configuration
//! and with `--encryption-provider-config` naming `aesgcm` (one 32-byte
//! key) for Secrets; C clients create Secrets of about --size bytes on
//! each. The issue's goal: aesgcm costs at most 10% of Secret create
//! throughput.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use hyper::Method;

use super::paired::{self, Configuration, PairedLoad};
use crate::cli::Cli;
use crate::launch::unique_dir;
use crate::report::{Ratio, ScenarioResult};
use crate::runner::Workload;
use crate::BenchError;

/// A Secret of about `size` bytes of JSON: its payload is base64 of `x`s.
pub fn secret_body(name: &str, namespace: &str, run: &str, size: usize) -> Vec<u8> {
    let head = format!(
        r#"{{"apiVersion":"v1","kind":"Secret","metadata":{{"name":"{name}","namespace":"{namespace}","labels":{{"app.kubernetes.io/managed-by":"ferrokube-bench","ferrokube-bench/run":"{run}"}}}},"type":"Opaque","data":{{"payload":""#
    );
    let tail = r#""}}"#;
    let encoded_len = size.saturating_sub(head.len() + tail.len());
    let raw = vec![b'x'; encoded_len / 4 * 3];
    let mut body = head.into_bytes();
    body.extend_from_slice(
        base64::engine::general_purpose::STANDARD
            .encode(raw)
            .as_bytes(),
    );
    body.extend_from_slice(tail.as_bytes());
    body
}

/// C clients creating Secrets, each with a name of its own.
struct SecretCreates {
    namespace: String,
    run: String,
    path: String,
    size: usize,
}

impl Workload for SecretCreates {
    fn request(&self, worker: usize, seq: u64) -> (Method, String, Option<Bytes>) {
        let name = format!("bench-{}-{worker}-{seq}", self.run);
        let body = secret_body(&name, &self.namespace, &self.run, self.size);
        (Method::POST, self.path.clone(), Some(Bytes::from(body)))
    }
}

struct Secrets {
    size: usize,
}

impl PairedLoad for Secrets {
    fn workload(&self, namespace: &str, run: &str) -> Arc<dyn Workload> {
        Arc::new(SecretCreates {
            namespace: namespace.to_string(),
            run: run.to_string(),
            path: format!("/api/v1/namespaces/{namespace}/secrets"),
            size: self.size,
        })
    }

    fn probe(&self, namespace: &str, run: &str) -> (String, Bytes) {
        (
            format!("/api/v1/namespaces/{namespace}/secrets"),
            Bytes::from(secret_body(
                &format!("bench-{run}-probe"),
                namespace,
                run,
                self.size,
            )),
        )
    }
}

/// An `EncryptionConfiguration` encrypting Secrets with aesgcm.
fn encryption_config(key: &[u8; 32]) -> String {
    let secret = base64::engine::general_purpose::STANDARD.encode(key);
    format!(
        "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\nresources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - name: bench\n        secret: {secret}\n  - identity: {{}}\n"
    )
}

fn encryption_args(dir: &Path) -> Result<Vec<String>, BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::Setup(format!("creating {}: {e}", dir.display())))?;
    let path = dir.join("encryption.yaml");
    // A fixed key: the bench measures cost, not secrecy.
    std::fs::write(&path, encryption_config(&[0x5a; 32]))
        .map_err(|e| BenchError::Setup(format!("writing {}: {e}", path.display())))?;
    Ok(vec![format!(
        "--encryption-provider-config={}",
        path.display()
    )])
}

pub async fn run(cli: &Cli) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let dir = unique_dir();
    let configurations = [
        Configuration {
            name: "plain",
            server_args: Vec::new(),
        },
        Configuration {
            name: "aesgcm",
            server_args: encryption_args(&dir)?,
        },
    ];
    let outcome = paired::run(
        cli,
        "secret-create",
        configurations,
        &Secrets { size: cli.size },
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_are_json_of_about_the_size_asked() {
        let body = secret_body("a", "ns", "r", 1024);
        let value: serde_json::Value = serde_json::from_slice(&body).expect("JSON");
        assert_eq!(value["kind"], "Secret");
        let payload = value["data"]["payload"].as_str().expect("payload");
        base64::engine::general_purpose::STANDARD
            .decode(payload)
            .expect("base64");
        assert!(body.len() <= 1024 && body.len() > 1000, "{}", body.len());
    }

    #[test]
    fn the_encryption_configuration_names_aesgcm_for_secrets() {
        let config = encryption_config(&[1; 32]);
        assert!(config.contains("- aesgcm:"));
        assert!(config.contains("secret: AQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQEBAQE="));
    }
}
