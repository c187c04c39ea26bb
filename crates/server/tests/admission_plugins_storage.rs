//! kube-apiserver 1.34's storage, ingress and certificate admission plugins
//! and the CertificateSigningRequest subresources, through real clients:
//! a PVC created with kubectl 1.33 gets the default StorageClass and the
//! `kubernetes.io/pvc-protection` finalizer (which the pvc-protection
//! controller removes on delete), growing a bound claim follows its class's
//! `allowVolumeExpansion`; a kube-rs Ingress gets the default IngressClass;
//! `kubectl certificate approve` / `deny` (1.33) work for an admin and are
//! refused with kube's text for a user without `approve` on the signer;
//! `/status` needs `sign`; a `system:masters` request for the
//! kube-apiserver-client signer is refused. Needs `kubectl.1.33`.
#![allow(clippy::unwrap_used)]

use std::future::Future;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use ferrokube_testkit as common;

use base64::Engine as _;
use common::{config_from, kubectl_path, raw_request, RawResponse, TestServer};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::networking::v1::Ingress;
use kube::api::{Api, DeleteParams, PostParams};
use kube::Client;
use serde_json::{json, Value};

const KUBECTL: &str = "1.33";
const JANE_TOKEN: &str = "jane-token-0123456789";
const WAIT: Duration = Duration::from_secs(60);

/// A server with a token file naming jane, and a directory for kubeconfigs.
struct Cluster {
    server: TestServer,
    dir: tempfile::TempDir,
}

impl Cluster {
    fn start() -> Cluster {
        let dir = tempfile::tempdir().unwrap();
        let tokens = dir.path().join("tokens.csv");
        std::fs::write(&tokens, format!("{JANE_TOKEN},jane,uid-jane,\"team\"\n")).unwrap();
        let tokens = tokens.display().to_string();
        let server = TestServer::start_with(&["--token-auth-file", &tokens]);
        Cluster { server, dir }
    }

    async fn admin(&self) -> Client {
        self.server.client().await
    }

    async fn jane(&self) -> Client {
        let mut config = config_from(&self.server.kubeconfig).await;
        config.auth_info = Default::default();
        config.auth_info.token = Some(JANE_TOKEN.to_string().into());
        Client::try_from(config).unwrap()
    }

    fn jane_kubeconfig(&self) -> PathBuf {
        let ca = self.server.data_dir.join("pki").join("ca.crt");
        let path = self.dir.path().join("jane.kubeconfig");
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority: {}\nusers:\n- name: u\n  user:\n    token: {JANE_TOKEN}\ncontexts:\n- name: x\n  context:\n    cluster: c\n    user: u\ncurrent-context: x\n",
                self.server.url,
                ca.display()
            ),
        )
        .unwrap();
        path
    }

    /// kubectl 1.33 with `kubeconfig`, `stdin` fed when given.
    fn kubectl(&self, kubeconfig: &Path, args: &[&str], stdin: Option<&str>) -> (bool, String) {
        use std::io::Write;
        let mut child = Command::new(kubectl_path(KUBECTL))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(self.dir.path().join("kubectl-cache"))
            .args(args)
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input
            .write_all(stdin.unwrap_or_default().as_bytes())
            .unwrap();
        drop(input);
        let out = child.wait_with_output().unwrap();
        let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
        (
            out.status.success(),
            format!("{}{}", text(&out.stdout), text(&out.stderr)),
        )
    }

    #[track_caller]
    fn kubectl_admin(&self, args: &[&str], stdin: Option<&str>) -> String {
        let (ok, out) = self.kubectl(&self.server.kubeconfig, args, stdin);
        assert!(ok, "kubectl {args:?}: {out}");
        out
    }
}

/// Polls `check` until it returns Some, or panics after a minute naming `what`.
async fn eventually<T, F, Fut>(what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let deadline = Instant::now() + WAIT;
    loop {
        if let Some(found) = check().await {
            return found;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

async fn raw(client: &Client, method: &str, path: &str, body: Value) -> RawResponse {
    let content_type = if method == "PATCH" {
        "application/merge-patch+json"
    } else {
        "application/json"
    };
    raw_request(
        client,
        method,
        path,
        Some(content_type),
        serde_json::to_vec(&body).unwrap(),
    )
    .await
}

#[tokio::test]
async fn kubectl_claims_get_the_default_class_and_protection_and_grow_only_where_the_class_allows()
{
    let cluster = Cluster::start();
    let client = cluster.admin().await;
    cluster.kubectl_admin(
        &["apply", "-f", "-"],
        Some(
            "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: standard\n  annotations:\n    storageclass.kubernetes.io/is-default-class: \"true\"\nprovisioner: example.com/standard\n---\napiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: growing\nprovisioner: example.com/growing\nallowVolumeExpansion: true\n",
        ),
    );
    let claim = |name: &str, class: &str| {
        let class = if class.is_empty() {
            String::new()
        } else {
            format!("  storageClassName: {class}\n")
        };
        format!("apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n{class}  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n")
    };
    cluster.kubectl_admin(&["create", "-f", "-"], Some(&claim("data", "")));
    cluster.kubectl_admin(&["create", "-f", "-"], Some(&claim("elastic", "growing")));
    // A server-side dry run is admitted the same way.
    let preview = cluster.kubectl_admin(
        &["create", "--dry-run=server", "-o", "json", "-f", "-"],
        Some(&claim("preview", "")),
    );
    let preview: Value = serde_json::from_str(&preview).unwrap();
    assert_eq!(preview["spec"]["storageClassName"], "standard");
    assert_eq!(
        preview["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(client.clone(), "default");
    assert!(claims.get_opt("preview").await.unwrap().is_none());
    let data = claims.get("data").await.unwrap();
    assert_eq!(
        data.spec.as_ref().unwrap().storage_class_name.as_deref(),
        Some("standard")
    );
    assert_eq!(
        data.metadata.finalizers,
        Some(vec!["kubernetes.io/pvc-protection".to_string()])
    );
    let elastic = claims.get("elastic").await.unwrap();
    assert_eq!(
        elastic.spec.as_ref().unwrap().storage_class_name.as_deref(),
        Some("growing")
    );

    // Growing a claim that is not bound: kube's validation refuses it
    // before admission is asked.
    let grow = r#"{"spec":{"resources":{"requests":{"storage":"2Gi"}}}}"#;
    let (ok, out) = cluster.kubectl(
        &cluster.server.kubeconfig,
        &["patch", "pvc", "data", "-n", "default", "-p", grow],
        None,
    );
    assert!(!ok);
    assert!(
        out.starts_with("The PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"),
        "{out}"
    );
    // Bound (as the volume binder would say), the class decides.
    for name in ["data", "elastic"] {
        let bound = raw(
            &client,
            "PATCH",
            &format!("/api/v1/namespaces/default/persistentvolumeclaims/{name}/status"),
            json!({"status": {"phase": "Bound"}}),
        )
        .await;
        assert_eq!(bound.status, 200, "{bound:?}");
    }
    let (ok, out) = cluster.kubectl(
        &cluster.server.kubeconfig,
        &["patch", "pvc", "data", "-n", "default", "-p", grow],
        None,
    );
    assert!(!ok);
    assert_eq!(
        out,
        "Error from server (Forbidden): persistentvolumeclaims \"data\" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize\n"
    );
    cluster.kubectl_admin(
        &["patch", "pvc", "elastic", "-n", "default", "-p", grow],
        None,
    );
    let grown = claims.get("elastic").await.unwrap();
    let requests = grown.spec.unwrap().resources.unwrap().requests.unwrap();
    assert_eq!(requests["storage"].0, "2Gi");

    // Deleted and used by no pod: the pvc-protection controller lets it go
    // (kubectl waits for it to be gone).
    cluster.kubectl_admin(&["delete", "pvc", "data", "-n", "default"], None);
    assert!(claims.get_opt("data").await.unwrap().is_none());

    // A volume gets its finalizer too, and goes once deleted unbound.
    let volumes: Api<PersistentVolume> = Api::all(client.clone());
    let volume: PersistentVolume = serde_json::from_value(json!({
        "metadata": {"name": "pv-storadm"},
        "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                 "hostPath": {"path": "/tmp/pv"}}
    }))
    .unwrap();
    let created = volumes
        .create(&PostParams::default(), &volume)
        .await
        .unwrap();
    assert_eq!(
        created.metadata.finalizers,
        Some(vec!["kubernetes.io/pv-protection".to_string()])
    );
    volumes
        .delete("pv-storadm", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the volume to be gone", || async {
        volumes
            .get_opt("pv-storadm")
            .await
            .unwrap()
            .is_none()
            .then_some(())
    })
    .await;
}

#[tokio::test]
async fn kube_rs_ingresses_get_the_default_ingress_class() {
    let cluster = Cluster::start();
    let client = cluster.admin().await;
    let classes = raw(
        &client,
        "POST",
        "/apis/networking.k8s.io/v1/ingressclasses",
        json!({"apiVersion": "networking.k8s.io/v1", "kind": "IngressClass",
               "metadata": {"name": "nginx",
                            "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
               "spec": {"controller": "k8s.io/ingress-nginx"}}),
    )
    .await;
    assert_eq!(classes.status, 201, "{classes:?}");
    let ingresses: Api<Ingress> = Api::namespaced(client, "default");
    let ingress = |name: &str, class: Option<&str>| -> Ingress {
        let mut value = json!({
            "metadata": {"name": name},
            "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}
        });
        if let Some(class) = class {
            value["spec"]["ingressClassName"] = json!(class);
        }
        serde_json::from_value(value).unwrap()
    };
    let defaulted = ingresses
        .create(&PostParams::default(), &ingress("web", None))
        .await
        .unwrap();
    assert_eq!(
        defaulted.spec.unwrap().ingress_class_name.as_deref(),
        Some("nginx")
    );
    let chosen = ingresses
        .create(&PostParams::default(), &ingress("other", Some("traefik")))
        .await
        .unwrap();
    assert_eq!(
        chosen.spec.unwrap().ingress_class_name.as_deref(),
        Some("traefik")
    );
}

/// A PEM certificate request for `cn` in organization `organization`, base64.
fn request(cn: &str, organization: &str) -> String {
    let key = rcgen::KeyPair::generate().unwrap();
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, cn);
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, organization);
    let pem = params.serialize_request(&key).unwrap().pem().unwrap();
    base64::engine::general_purpose::STANDARD.encode(pem)
}

fn csr_manifest(name: &str, organization: &str) -> String {
    format!(
        "apiVersion: certificates.k8s.io/v1\nkind: CertificateSigningRequest\nmetadata:\n  name: {name}\nspec:\n  request: {}\n  signerName: kubernetes.io/kube-apiserver-client\n  usages: [client auth]\n",
        request(name, organization)
    )
}

fn conditions(csr: &Value) -> Vec<(String, String)> {
    csr["status"]["conditions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .map(|condition| {
            (
                condition["type"].as_str().unwrap_or_default().to_string(),
                condition["reason"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect()
}

#[tokio::test]
async fn kubectl_certificate_approve_needs_approve_on_the_signer() {
    let cluster = Cluster::start();
    let admin = cluster.admin().await;
    let jane = cluster.jane_kubeconfig();
    for name in ["alice", "bob"] {
        cluster.kubectl_admin(&["create", "-f", "-"], Some(&csr_manifest(name, "dev")));
    }
    // Discovery lists both subresources.
    let discovery = raw(&admin, "GET", "/apis/certificates.k8s.io/v1", Value::Null)
        .await
        .json();
    let names: Vec<&str> = discovery["resources"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|resource| resource["name"].as_str())
        .collect();
    assert!(
        names.contains(&"certificatesigningrequests/approval")
            && names.contains(&"certificatesigningrequests/status"),
        "{names:?}"
    );
    let path =
        |name: &str| format!("/apis/certificates.k8s.io/v1/certificatesigningrequests/{name}");
    // The requester is recorded; the status starts empty.
    let alice = raw(&admin, "GET", &path("alice"), Value::Null).await.json();
    assert_eq!(alice["spec"]["username"], "ferrokube-admin");
    assert_eq!(alice["status"], json!({}));

    // An admin approves.
    assert_eq!(
        cluster.kubectl_admin(&["certificate", "approve", "alice"], None),
        "certificatesigningrequest.certificates.k8s.io/alice approved\n"
    );
    let approved = raw(
        &admin,
        "GET",
        &format!("{}/approval", path("alice")),
        Value::Null,
    )
    .await
    .json();
    assert_eq!(
        conditions(&approved),
        vec![("Approved".to_string(), "KubectlApprove".to_string())]
    );
    let condition = &approved["status"]["conditions"][0];
    assert!(condition["lastUpdateTime"].is_string(), "{condition}");
    assert!(condition["lastTransitionTime"].is_string(), "{condition}");

    // jane may update the approval subresource but not approve for the signer.
    cluster.kubectl_admin(
        &["create", "clusterrole", "csr-approver", "--verb=get,list,update,patch",
          "--resource=certificatesigningrequests,certificatesigningrequests/approval,certificatesigningrequests/status"],
        None,
    );
    cluster.kubectl_admin(
        &[
            "create",
            "clusterrolebinding",
            "jane-csr",
            "--clusterrole=csr-approver",
            "--user=jane",
        ],
        None,
    );
    let (ok, out) = cluster.kubectl(&jane, &["certificate", "approve", "bob"], None);
    assert!(!ok);
    assert_eq!(
        out,
        "Error from server (Forbidden): certificatesigningrequests.certificates.k8s.io \"bob\" is forbidden: user not permitted to approve requests with signerName \"kubernetes.io/kube-apiserver-client\"\n"
    );
    // `approve` on the signer's domain (`kubernetes.io/*`) lets her deny.
    cluster.kubectl_admin(
        &["apply", "-f", "-"],
        Some("apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: kubernetes-io-approver\nrules:\n- apiGroups: [certificates.k8s.io]\n  resources: [signers]\n  verbs: [approve]\n  resourceNames: [\"kubernetes.io/*\"]\n"),
    );
    cluster.kubectl_admin(
        &[
            "create",
            "clusterrolebinding",
            "jane-approver",
            "--clusterrole=kubernetes-io-approver",
            "--user=jane",
        ],
        None,
    );
    let (ok, out) = cluster.kubectl(&jane, &["certificate", "deny", "bob"], None);
    assert!(ok, "{out}");
    let bob = raw(&admin, "GET", &path("bob"), Value::Null).await.json();
    assert_eq!(
        conditions(&bob),
        vec![("Denied".to_string(), "KubectlDeny".to_string())]
    );

    // Issuing the certificate through /status needs `sign`.
    let certificate = {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["alice".to_string()]).unwrap();
        base64::engine::general_purpose::STANDARD.encode(params.self_signed(&key).unwrap().pem())
    };
    let status_path = format!("{}/status", path("alice"));
    let issue = json!({"status": {"certificate": certificate}});
    let refused = raw(&cluster.jane().await, "PATCH", &status_path, issue.clone()).await;
    assert_eq!(refused.status, 403, "{refused:?}");
    assert_eq!(
        refused.json()["message"],
        "certificatesigningrequests.certificates.k8s.io \"alice\" is forbidden: user not permitted to sign requests with signerName \"kubernetes.io/kube-apiserver-client\""
    );
    let issued = raw(&admin, "PATCH", &status_path, issue).await;
    assert_eq!(issued.status, 200, "{issued:?}");
    assert_eq!(issued.json()["status"]["certificate"], certificate);
    // /status keeps the approval; the main resource changes neither.
    assert_eq!(
        conditions(&issued.json()),
        vec![("Approved".to_string(), "KubectlApprove".to_string())]
    );
    let main = raw(
        &admin,
        "PATCH",
        &path("alice"),
        json!({"metadata": {"labels": {"a": "b"}}, "spec": {"usages": ["server auth"]}, "status": {"certificate": null}}),
    )
    .await
    .json();
    assert_eq!(main["metadata"]["labels"]["a"], "b");
    assert_eq!(main["spec"]["usages"], json!(["client auth"]));
    assert_eq!(main["status"]["certificate"], certificate);

    // No system:masters certificates from the kube-apiserver-client signer.
    let (ok, out) = cluster.kubectl(
        &cluster.server.kubeconfig,
        &["create", "-f", "-"],
        Some(&csr_manifest("mallory", "system:masters")),
    );
    assert!(!ok);
    assert_eq!(
        out,
        "Error from server (Forbidden): error when creating \"STDIN\": certificatesigningrequests.certificates.k8s.io \"mallory\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed\n"
    );
}
