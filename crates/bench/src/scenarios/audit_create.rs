//! `audit-create`: what an audit log costs a create. Servers started
//! --runs times alternating without auditing and with
//! `--audit-policy-file` (one rule: every request at `Metadata`) and
//! `--audit-log-path` (a file in a temporary directory, removed after);
//! C clients create ConfigMaps of --size bytes on each. The goal:
//! Metadata-level auditing costs at most 15% of create throughput.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::configmap_body;
use super::create::Creates;
use super::paired::{self, Configuration, PairedLoad};
use crate::cli::Cli;
use crate::launch::unique_dir;
use crate::report::{Ratio, ScenarioResult};
use crate::runner::Workload;
use crate::BenchError;

/// Every request at the Metadata level, as the goal states it.
const POLICY: &str = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n";

struct ConfigMapCreates {
    size: usize,
}

impl PairedLoad for ConfigMapCreates {
    fn workload(&self, namespace: &str, run: &str) -> Arc<dyn Workload> {
        Arc::new(Creates::new(namespace, run, self.size))
    }

    fn probe(&self, namespace: &str, run: &str) -> (String, Bytes) {
        (
            format!("/api/v1/namespaces/{namespace}/configmaps"),
            Bytes::from(configmap_body(
                &format!("bench-{run}-probe"),
                namespace,
                run,
                self.size,
            )),
        )
    }
}

fn audit_args(dir: &Path) -> Result<Vec<String>, BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::Setup(format!("creating {}: {e}", dir.display())))?;
    let policy = dir.join("audit-policy.yaml");
    std::fs::write(&policy, POLICY)
        .map_err(|e| BenchError::Setup(format!("writing {}: {e}", policy.display())))?;
    Ok(vec![
        format!("--audit-policy-file={}", policy.display()),
        format!("--audit-log-path={}", dir.join("audit.log").display()),
    ])
}

pub async fn run(cli: &Cli) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let dir = unique_dir();
    let configurations = [
        Configuration {
            name: "unaudited",
            server_args: Vec::new(),
        },
        Configuration {
            name: "audited",
            server_args: audit_args(&dir)?,
        },
    ];
    let outcome = paired::run(
        cli,
        "audit-create",
        configurations,
        &ConfigMapCreates { size: cli.size },
    )
    .await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}
