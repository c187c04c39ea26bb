//! Authorization as kube-apiserver 1.34 does it, through real clients:
//! users of a `--token-auth-file` refused with kube's 403 until an admin's
//! `kubectl create role` / `create rolebinding` lets the very next request
//! through, watches refused then allowed, kube-rs as such a user, and the
//! `AlwaysAllow` / `AlwaysDeny` modes, the access reviews behind
//! `kubectl auth can-i`, `kubectl auth reconcile`, and impersonation
//! (`kubectl --as`), a ServiceAccount's TokenRequest token watching before
//! and after its RoleBinding. The Roles and bindings are the
//! tests' own (the bootstrap policy is another part of issue 15); the
//! `authorizer` of ValidatingAdmissionPolicy expressions.
#![allow(clippy::unwrap_used)]

mod bindings;
mod escalation;
mod impersonation;
mod modes;
mod policy_authorizer;
mod reconcile;
mod refusal;
mod reviews;
mod service_account_watch;

use std::path::{Path, PathBuf};
use std::process::Command;

use ferrokube_testkit as common;

use common::{config_from, kubectl_path, raw_request, RawResponse, TestServer};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::Client;
use serde_json::{json, Value};

const JANE_TOKEN: &str = "jane-token-0123456789";
const BOT_TOKEN: &str = "bot-token-0123456789";

/// A server with a token file naming jane (group `team`) and a
/// service-account-shaped user, plus the directory holding both.
struct Cluster {
    server: TestServer,
    dir: tempfile::TempDir,
}

impl Cluster {
    fn start(extra: &[&str]) -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens.csv");
        std::fs::write(
            &tokens,
            format!(
                "{JANE_TOKEN},jane,uid-jane,\"team\"\n{BOT_TOKEN},system:serviceaccount:dev:bot,uid-bot,\"system:serviceaccounts,system:serviceaccounts:dev\"\n"
            ),
        )
        .unwrap();
        let mut args = vec![
            "--token-auth-file".to_string(),
            tokens.display().to_string(),
        ];
        args.extend(extra.iter().map(|arg| arg.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let server = TestServer::start_with(&args);
        Cluster { server, dir }
    }

    async fn admin(&self) -> Client {
        self.server.client().await
    }

    /// A client without credentials (the server's CA only).
    async fn anonymous(&self) -> Client {
        let mut config = config_from(&self.server.kubeconfig).await;
        config.auth_info = Default::default();
        Client::try_from(config).unwrap()
    }

    async fn user(&self, token: &str) -> Client {
        let mut config = config_from(&self.server.kubeconfig).await;
        config.auth_info = Default::default();
        config.auth_info.token = Some(token.to_string().into());
        Client::try_from(config).unwrap()
    }

    /// A kubeconfig that authenticates with `token` only.
    fn kubeconfig_for(&self, token: &str) -> PathBuf {
        let ca = self.server.data_dir.join("pki").join("ca.crt");
        let path = self.dir.path().join(format!("{token}.kubeconfig"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: {token}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
                self.server.url,
                ca.display()
            ),
        )
        .unwrap();
        path
    }

    fn kubectl(&self, version: &str, kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
        let cache = self.dir.path().join("kubectl-cache");
        let out = Command::new(kubectl_path(version))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(&cache)
            .args(args)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (out.status.success(), text(&out.stdout), text(&out.stderr))
    }

    #[track_caller]
    fn kubectl_admin(&self, args: &[&str]) -> String {
        let (ok, out, err) = self.kubectl("1.33", &self.server.kubeconfig, args);
        assert!(ok, "kubectl {args:?}: {out}{err}");
        out
    }
}

async fn raw(client: &Client, method: &str, path: &str, body: Option<Value>) -> RawResponse {
    let (content_type, body) = match body {
        Some(body) => (Some("application/json"), serde_json::to_vec(&body).unwrap()),
        None => (None, Vec::new()),
    };
    raw_request(client, method, path, content_type, body).await
}

/// Asserts kube's 403 `Status`, with its details.
#[track_caller]
fn forbidden(res: &RawResponse, message: &str, details: Value) {
    assert_eq!(res.status, 403, "{res:?}");
    assert_eq!(
        res.json(),
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": message,
            "reason": "Forbidden",
            "details": details,
            "code": 403,
        })
    );
}

/// What kubectl and kube-rs need before any resource request: discovery
/// and version (kube's `system:discovery`, granted here by the test).
fn grant_discovery(cluster: &Cluster) {
    cluster.kubectl_admin(&[
        "create",
        "clusterrole",
        "test-discovery",
        "--verb=get",
        "--non-resource-url=/api,/api/*,/apis,/apis/*,/version,/openapi,/openapi/*",
    ]);
    cluster.kubectl_admin(&[
        "create",
        "clusterrolebinding",
        "test-discovery",
        "--clusterrole=test-discovery",
        "--group=system:authenticated",
    ]);
}
