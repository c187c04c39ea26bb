//! `apf-get`: what API Priority and Fairness costs a GET. Servers started
//! --runs times alternating `--enable-priority-and-fairness=false` (the
//! max-in-flight limits) and the default (APF on); both authorize with
//! `AlwaysAllow` and know user `bench` from a token file, so the only
//! difference is APF. C clients GET one ConfigMap as `bench`, who is not
//! exempt (kube's `global-default` level queues its requests). The issue's
//! goal: APF costs at most 3% of GET throughput at 32 clients.

use std::path::Path;
use std::sync::Arc;

use bytes::Bytes;

use super::paired::{self, Configuration, PairedLoad};
use super::{configmap_body, FixedGet};
use crate::cli::Cli;
use crate::kubeconfig::Credentials;
use crate::launch::unique_dir;
use crate::report::{Ratio, ScenarioResult};
use crate::runner::Workload;
use crate::BenchError;

/// The bearer token of user `bench` in the token file the servers read.
const TOKEN: &str = "ferrokube-bench-apf";

struct UserGets {
    size: usize,
}

impl UserGets {
    fn name(run: &str) -> String {
        format!("bench-{run}-apf")
    }
}

impl PairedLoad for UserGets {
    fn workload(&self, namespace: &str, run: &str) -> Arc<dyn Workload> {
        Arc::new(FixedGet {
            path: format!(
                "/api/v1/namespaces/{namespace}/configmaps/{}",
                UserGets::name(run)
            ),
        })
    }

    fn probe(&self, namespace: &str, run: &str) -> (String, Bytes) {
        (
            format!("/api/v1/namespaces/{namespace}/configmaps"),
            Bytes::from(configmap_body(
                &UserGets::name(run),
                namespace,
                run,
                self.size,
            )),
        )
    }

    fn credentials(&self) -> Option<Credentials> {
        Some(Credentials::Token(TOKEN.into()))
    }
}

fn common_args(dir: &Path) -> Result<Vec<String>, BenchError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| BenchError::Setup(format!("creating {}: {e}", dir.display())))?;
    let tokens = dir.join("tokens.csv");
    std::fs::write(&tokens, format!("{TOKEN},bench,bench-uid\n"))
        .map_err(|e| BenchError::Setup(format!("writing {}: {e}", tokens.display())))?;
    Ok(vec![
        format!("--token-auth-file={}", tokens.display()),
        "--authorization-mode=AlwaysAllow".to_string(),
    ])
}

pub async fn run(cli: &Cli) -> Result<(Vec<ScenarioResult>, Vec<Ratio>), BenchError> {
    let dir = unique_dir();
    let common = common_args(&dir)?;
    let configurations = [
        Configuration {
            name: "max-in-flight",
            server_args: common
                .iter()
                .cloned()
                .chain(["--enable-priority-and-fairness=false".to_string()])
                .collect(),
        },
        Configuration {
            name: "apf",
            server_args: common,
        },
    ];
    let outcome = paired::run(cli, "apf-get", configurations, &UserGets { size: cli.size }).await;
    let _ = std::fs::remove_dir_all(&dir);
    outcome
}
