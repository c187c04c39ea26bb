//! Admission webhooks through real clients: the test runs its own HTTPS
//! webhook (hyper with HTTP/2 and HTTP/1.1, rustls, a CA made here),
//! registers it with Validating and MutatingWebhookConfigurations, and
//! kubectl 1.33 and kube-rs write objects it denies, mutates and warns
//! about. Configurations are cluster-wide, so each test's webhooks select
//! only its own namespace (`namespaceSelector` on a label naming it).
#![allow(clippy::unwrap_used)]

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use ferrokube_testkit as common;

use base64::Engine as _;
use common::{api_status, TestEnv};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{json, Value};

/// One review the webhook received: its path and query, and the review.
#[derive(Debug, Clone)]
struct Received {
    path: String,
    query: String,
    review: Value,
}

struct Webhook {
    port: u16,
    ca_bundle: String,
    received: Arc<Mutex<Vec<Received>>>,
    /// TLS connections accepted.
    connections: Arc<AtomicUsize>,
}

impl Webhook {
    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.port)
    }
}

fn labels(object: &Value) -> &Value {
    &object["metadata"]["labels"]
}

/// What the webhook answers: `/validate` denies objects labelled
/// `deny: "true"` and deletes of objects labelled `keep: "true"`, with a
/// warning on every answer; `/mutate` adds the label `mutated: "true"`,
/// `/mutate-second` the label `second: "true"`; `/connect` denies an exec
/// whose command starts with `sh`, `/connect-mutate` sets its container to
/// `sidecar`; `/pull-never` replaces a pod's first container's
/// `imagePullPolicy` with `Never`; `/break-managed-fields` replaces the
/// managedFields with an entry of an unknown operation.
/// An allowing answer carrying `patch` as its base64 JSONPatch.
fn patched(uid: Value, patch: &Value) -> Value {
    let patch =
        base64::engine::general_purpose::STANDARD.encode(serde_json::to_vec(patch).unwrap());
    json!({"uid": uid, "allowed": true, "patchType": "JSONPatch", "patch": patch})
}

/// A webhook entry of this test's kind: `rules`, the test's namespace
/// selector, no side effects.
fn hook_entry(name: &str, url: &str, ca_bundle: &str, rules: Value, selector: &Value) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": ca_bundle},
        "rules": rules,
        "namespaceSelector": selector,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

fn answer(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let uid = request["uid"].clone();
    let response = match path {
        "/connect" if request["object"]["command"][0] == "sh" => {
            json!({"uid": uid, "allowed": false,
                   "status": {"code": 403, "reason": "Forbidden", "message": "no shells in pods"}})
        }
        "/connect" => json!({"uid": uid, "allowed": true}),
        "/break-managed-fields" => {
            let patch = json!([{"op": "replace", "path": "/metadata/managedFields",
                                "value": [{"manager": "outdated", "operation": "Bogus",
                                           "apiVersion": "v1", "fieldsType": "FieldsV1",
                                           "fieldsV1": {}}]}]);
            patched(uid, &patch)
        }
        "/pull-never" => {
            // `replace` needs the field: the pod must arrive defaulted.
            let patch = json!([{"op": "replace", "path": "/spec/containers/0/imagePullPolicy",
                                "value": "Never"}]);
            patched(uid, &patch)
        }
        "/connect-mutate" => {
            let patch = json!([{"op": "replace", "path": "/container", "value": "sidecar"}]);
            patched(uid, &patch)
        }
        "/validate" => {
            let denied = labels(&request["object"])["deny"] == "true";
            let kept =
                request["operation"] == "DELETE" && labels(&request["oldObject"])["keep"] == "true";
            let message = if denied {
                "configmaps labelled deny are refused"
            } else {
                "configmaps labelled keep stay"
            };
            if denied || kept {
                json!({"uid": uid, "allowed": false, "warnings": ["checked by the test webhook"],
                       "status": {"code": 403, "reason": "Forbidden", "message": message}})
            } else {
                json!({"uid": uid, "allowed": true, "warnings": ["checked by the test webhook"]})
            }
        }
        _ => {
            let label = if path == "/mutate-second" {
                "second"
            } else {
                "mutated"
            };
            let patch = if labels(&request["object"]).is_object() {
                json!([{"op": "add", "path": format!("/metadata/labels/{label}"), "value": "true"}])
            } else {
                json!([{"op": "add", "path": "/metadata/labels", "value": {label: "true"}}])
            };
            patched(uid, &patch)
        }
    };
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// Serves the webhook on 127.0.0.1 (HTTP/2 or HTTP/1.1 by ALPN) with a
/// certificate for 127.0.0.1 and `hook.<ns>.svc`, issued by its own CA.
async fn start_webhook(ns: &str) -> Webhook {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec![format!("hook.{ns}.svc")]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    let cert = params.signed_by(&key, &issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let received = Arc::new(Mutex::new(Vec::new()));
    let served = received.clone();
    let connections = Arc::new(AtomicUsize::new(0));
    let accepted = connections.clone();
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            accepted.fetch_add(1, Ordering::SeqCst);
            let (acceptor, served) = (acceptor.clone(), served.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: http::Request<Incoming>| {
                        let served = served.clone();
                        async move {
                            let path = request.uri().path().to_string();
                            let query = request.uri().query().unwrap_or("").to_string();
                            let body = request.into_body().collect().await?.to_bytes();
                            let review: Value = serde_json::from_slice(&body).unwrap();
                            let out = answer(&path, &review);
                            served.lock().unwrap().push(Received {
                                path,
                                query,
                                review,
                            });
                            Ok::<_, hyper::Error>(http::Response::new(Full::new(
                                bytes::Bytes::from(serde_json::to_vec(&out).unwrap()),
                            )))
                        }
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    Webhook {
        port,
        ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_cert.pem()),
        received,
        connections,
    }
}

/// Labels the test's namespace so that only its webhooks see its requests.
async fn select_namespace(env: &TestEnv) -> Value {
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    namespaces
        .patch(
            &env.ns,
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"webhook-test": env.ns}}})),
        )
        .await
        .unwrap();
    json!({"matchLabels": {"webhook-test": env.ns}})
}

fn webhook_configuration(kind: &str, name: &str, webhooks: Value) -> (ApiResource, DynamicObject) {
    let resource = ApiResource {
        group: "admissionregistration.k8s.io".into(),
        version: "v1".into(),
        api_version: "admissionregistration.k8s.io/v1".into(),
        kind: kind.into(),
        plural: format!("{}s", kind.to_lowercase()),
    };
    let object = serde_json::from_value(json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": kind,
        "metadata": {"name": name},
        "webhooks": webhooks,
    }))
    .unwrap();
    (resource, object)
}

async fn register(env: &TestEnv, kind: &str, name: &str, webhooks: Value) {
    let (resource, object) = webhook_configuration(kind, name, webhooks);
    let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    api.create(&PostParams::default(), &object).await.unwrap();
}

async fn unregister(env: &TestEnv, kind: &str, name: &str) {
    let (resource, _) = webhook_configuration(kind, name, json!([]));
    let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    api.delete(name, &DeleteParams::default()).await.unwrap();
}

fn configmaps_rule(operations: Value) -> Value {
    json!([{"operations": operations, "apiGroups": [""], "apiVersions": ["v1"],
            "resources": ["configmaps"], "scope": "Namespaced"}])
}

fn configmap(name: &str, labels: Value) -> ConfigMap {
    serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": labels}, "data": {"a": "b"}}))
    .unwrap()
}

// Multi-threaded: the webhook keeps serving while kubectl blocks this thread.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn validating_webhook_denies_and_warns_as_kube_for_kubectl_and_kube_rs() {
    let env = TestEnv::new("vwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    let name = format!("deny.{}.example.com", env.ns);
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([{
            "name": name,
            "clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle},
            "rules": configmaps_rule(json!(["CREATE", "UPDATE", "DELETE"])),
            "namespaceSelector": namespace_selector,
            "objectSelector": {"matchExpressions": [{"key": "skip-webhook", "operator": "DoesNotExist"}]},
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }]),
    )
    .await;

    // kubectl 1.33: a denied create reads as kube's, warnings are shown.
    let manifest = |name: &str, label: &str| {
        format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels:\n    {label}: \"true\"\ndata:\n  a: b\n")
    };
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &env.ns, "-f", "-"],
        Some(&manifest("blue", "deny")),
    );
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            r#"Error from server (Forbidden): error when creating "STDIN": admission webhook "{name}" denied the request: configmaps labelled deny are refused"#
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("Warning: checked by the test webhook"),
        "{stderr}"
    );
    let (status, stdout, stderr) = env.kubectl_stdin(
        "1.33",
        &["create", "-n", &env.ns, "-f", "-"],
        Some(&manifest("green", "keep")),
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "configmap/green created");
    assert!(
        stderr.contains("Warning: checked by the test webhook"),
        "{stderr}"
    );

    // kube-rs: the Status as the webhook gave it, with kube's message.
    let configmaps: Api<ConfigMap> = env.api();
    let denied = configmaps
        .create(
            &PostParams::default(),
            &configmap("red", json!({"deny": "true"})),
        )
        .await
        .unwrap_err();
    let denied = api_status(denied);
    assert_eq!((denied.code, denied.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        denied.message,
        format!(
            r#"admission webhook "{name}" denied the request: configmaps labelled deny are refused"#
        )
    );
    // An update that adds the label is an UPDATE with the old object.
    let update = configmaps
        .patch(
            "green",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"deny": "true"}}})),
        )
        .await
        .unwrap_err();
    assert_eq!(api_status(update).code, 403);
    // DELETE: the object being deleted is the old object.
    let delete = configmaps
        .delete("green", &DeleteParams::default())
        .await
        .unwrap_err();
    assert_eq!(
        api_status(delete).message,
        format!(r#"admission webhook "{name}" denied the request: configmaps labelled keep stay"#)
    );
    // objectSelector: a labelled object the selector leaves out is not sent.
    configmaps
        .create(
            &PostParams::default(),
            &configmap("skipped", json!({"deny": "true", "skip-webhook": "yes"})),
        )
        .await
        .unwrap();
    // namespaceSelector: another namespace is not this webhook's.
    let other = TestEnv::new("vwh-other").await;
    let elsewhere: Api<ConfigMap> = other.api();
    elsewhere
        .create(
            &PostParams::default(),
            &configmap("red", json!({"deny": "true"})),
        )
        .await
        .unwrap();

    let received = hook.received();
    assert!(received
        .iter()
        .all(|r| r.path == "/validate" && r.query == "timeout=10s"));
    // Every review of this sequence went over one kept HTTP/2 connection.
    assert_eq!(received.len(), 5, "{received:?}");
    assert_eq!(hook.connections.load(Ordering::SeqCst), 1);
    assert!(received
        .iter()
        .all(|r| r.review["request"]["name"] != "skipped"));
    assert!(received
        .iter()
        .all(|r| r.review["request"]["namespace"] == env.ns.as_str()));
    let create = received
        .iter()
        .find(|r| r.review["request"]["name"] == "red")
        .expect("the kube-rs create was reviewed");
    let request = &create.review["request"];
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["options"]["kind"], "CreateOptions");
    assert_eq!(request["dryRun"], false);
    assert_eq!(request["oldObject"], Value::Null);
    assert!(request["userInfo"]["username"].is_string(), "{request}");
    let deleted = received
        .iter()
        .find(|r| r.review["request"]["operation"] == "DELETE")
        .expect("the delete was reviewed");
    assert_eq!(deleted.review["request"]["object"], Value::Null);
    assert_eq!(
        deleted.review["request"]["oldObject"]["metadata"]["name"],
        "green"
    );
    assert_eq!(
        deleted.review["request"]["options"]["kind"],
        "DeleteOptions"
    );
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
}

#[tokio::test]
async fn mutating_webhook_through_its_service_labels_what_kube_rs_creates() {
    let env = TestEnv::new("mwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    // The webhook's Service and Endpoints, resolved as kube's aggregator routing does.
    let services: Api<DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        &env.ns,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Service>(&()),
    );
    services
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"apiVersion": "v1", "kind": "Service",
                "metadata": {"name": "hook"},
                "spec": {"ports": [{"name": "https", "port": 443, "targetPort": hook.port}]}}))
            .unwrap(),
        )
        .await
        .unwrap();
    let endpoints: Api<DynamicObject> = Api::namespaced_with(
        env.client.clone(),
        &env.ns,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Endpoints>(&()),
    );
    endpoints
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": "hook"},
                "subsets": [{"addresses": [{"ip": "127.0.0.1"}],
                             "ports": [{"name": "https", "port": hook.port}]}]}))
            .unwrap(),
        )
        .await
        .unwrap();
    let name = format!("label.{}.example.com", env.ns);
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        json!([{
            "name": name,
            "clientConfig": {"service": {"namespace": env.ns, "name": "hook", "path": "/mutate"},
                             "caBundle": hook.ca_bundle},
            "rules": configmaps_rule(json!(["CREATE"])),
            "namespaceSelector": namespace_selector,
            "sideEffects": "NoneOnDryRun",
            "timeoutSeconds": 5,
            "reinvocationPolicy": "IfNeeded",
            "admissionReviewVersions": ["v1"],
        }, {
            "name": format!("second.{}.example.com", env.ns),
            "clientConfig": {"url": hook.url("/mutate-second"), "caBundle": hook.ca_bundle},
            "rules": configmaps_rule(json!(["CREATE"])),
            "namespaceSelector": namespace_selector,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }]),
    )
    .await;
    let configmaps: Api<ConfigMap> = env.api();
    let created = configmaps
        .create(
            &PostParams::default(),
            &configmap("plain", json!({"app": "x"})),
        )
        .await
        .unwrap();
    let created_labels = created.metadata.labels.clone().unwrap();
    assert_eq!(created_labels["mutated"], "true");
    assert_eq!(created_labels["second"], "true");
    assert_eq!(created_labels["app"], "x");
    let read = configmaps.get("plain").await.unwrap();
    assert_eq!(read.metadata.labels.unwrap()["mutated"], "true");
    // Without labels at all, the webhook's patch adds the map.
    let bare: ConfigMap = serde_json::from_value(json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "bare"}}))
    .unwrap();
    let created = configmaps
        .create(&PostParams::default(), &bare)
        .await
        .unwrap();
    assert_eq!(created.metadata.labels.unwrap()["mutated"], "true");
    // Dry run: NoneOnDryRun webhooks are called, told it is a dry run, and
    // their patch shows in the answer; nothing is stored.
    let dry = configmaps
        .create(
            &PostParams {
                dry_run: true,
                field_manager: None,
            },
            &configmap("dry", json!({})),
        )
        .await
        .unwrap();
    assert_eq!(dry.metadata.labels.unwrap()["mutated"], "true");
    assert!(configmaps.get_opt("dry").await.unwrap().is_none());

    let received = hook.received();
    let first: Vec<&Received> = received.iter().filter(|r| r.path == "/mutate").collect();
    assert!(first.iter().all(|r| r.query == "timeout=5s"));
    // reinvocationPolicy IfNeeded: the second webhook changed the object, so
    // the first (IfNeeded) is called once more and sees that change.
    let plain: Vec<&&Received> = first
        .iter()
        .filter(|r| r.review["request"]["name"] == "plain")
        .collect();
    assert_eq!(plain.len(), 2, "{plain:?}");
    assert_eq!(
        labels(&plain[0].review["request"]["object"]).get("second"),
        None
    );
    assert_eq!(
        labels(&plain[1].review["request"]["object"])["second"],
        "true"
    );
    let second: Vec<&Received> = received
        .iter()
        .filter(|r| r.path == "/mutate-second" && r.review["request"]["name"] == "plain")
        .collect();
    assert_eq!(second.len(), 1, "the second webhook is not IfNeeded");
    assert_eq!(
        labels(&second[0].review["request"]["object"])["mutated"],
        "true"
    );
    let dry_review = first
        .iter()
        .find(|r| r.review["request"]["name"] == "dry")
        .expect("the dry run was reviewed");
    assert_eq!(dry_review.review["request"]["dryRun"], true);
    assert_eq!(
        dry_review.review["request"]["options"]["dryRun"],
        json!(["All"])
    );
    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
}

#[tokio::test]
async fn failure_policy_decides_when_the_webhook_is_down() {
    let env = TestEnv::new("fwh").await;
    let namespace_selector = select_namespace(&env).await;
    // A port nothing listens on.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let hook = start_webhook(&env.ns).await;
    let webhook = |name: &str, policy: &str| {
        json!({
            "name": name,
            "clientConfig": {"url": format!("https://127.0.0.1:{port}/validate"), "caBundle": hook.ca_bundle},
            "rules": configmaps_rule(json!(["CREATE"])),
            "namespaceSelector": namespace_selector,
            "failurePolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    };
    let ignored = format!("ignored.{}.example.com", env.ns);
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(&ignored, "Ignore")]),
    )
    .await;
    let configmaps: Api<ConfigMap> = env.api();
    configmaps
        .create(&PostParams::default(), &configmap("allowed", json!({})))
        .await
        .unwrap();
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;

    let failing = format!("failing.{}.example.com", env.ns);
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(&failing, "Fail")]),
    )
    .await;
    let refused = configmaps
        .create(&PostParams::default(), &configmap("refused", json!({})))
        .await
        .unwrap_err();
    let refused = api_status(refused);
    assert_eq!(
        (refused.code, refused.reason.as_str()),
        (500, "InternalError")
    );
    assert_eq!(
        refused.message,
        format!(
            r#"Internal error occurred: failed calling webhook "{failing}": failed to call webhook: Post "https://127.0.0.1:{port}/validate?timeout=10s": dial tcp 127.0.0.1:{port}: connect: connection refused"#
        )
    );
    assert!(configmaps.get_opt("refused").await.unwrap().is_none());
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
}

#[tokio::test]
async fn configurations_and_immortal_namespaces_are_refused_as_kube_refuses_them() {
    let env = TestEnv::new("cwh").await;
    let name = format!("unknown.{}.example.com", env.ns);
    // v1 refuses side effects a dry run could not skip.
    let (resource, object) = webhook_configuration(
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([{
            "name": name,
            "clientConfig": {"url": "https://127.0.0.1:1/validate"},
            "rules": configmaps_rule(json!(["CREATE"])),
            "sideEffects": "Unknown",
            "admissionReviewVersions": ["v1"],
        }]),
    );
    let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    let refused = api_status(
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_err(),
    );
    assert_eq!((refused.code, refused.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        refused.message,
        format!(
            r#"ValidatingWebhookConfiguration.admissionregistration.k8s.io "{}" is invalid: webhooks[0].sideEffects: Unsupported value: "Unknown": supported values: "None", "NoneOnDryRun""#,
            env.ns
        )
    );
    // NamespaceLifecycle: the immortal namespaces stay (asked as a dry run).
    let namespaces: Api<Namespace> = Api::all(env.client.clone());
    let dry_run = DeleteParams {
        dry_run: true,
        ..DeleteParams::default()
    };
    let kept = api_status(
        namespaces
            .delete("kube-public", &dry_run)
            .await
            .unwrap_err(),
    );
    assert_eq!((kept.code, kept.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        kept.message,
        r#"namespaces "kube-public" is forbidden: this namespace may not be deleted"#
    );
}

/// `matchConditions` (`plugin/webhook/matchconditions`): the webhook is
/// called only when every condition is true; a condition that fails to
/// evaluate refuses the request under `failurePolicy: Fail` with kube's
/// 403; a condition that does not parse is refused at create with kube's
/// 422.
#[tokio::test]
async fn match_conditions_decide_whether_the_webhook_is_called() {
    let env = TestEnv::new("mcwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    let name = format!("conditional.{}.example.com", env.ns);
    let webhook = |conditions: Value, policy: &str| {
        json!({
            "name": name,
            "clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle},
            "rules": configmaps_rule(json!(["CREATE"])),
            "namespaceSelector": namespace_selector,
            "matchConditions": conditions,
            "failurePolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    };
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(
            json!([
                {"name": "checked", "expression": "has(object.metadata.labels) && 'checked' in object.metadata.labels"},
                {"name": "creates", "expression": "request.operation == 'CREATE' && oldObject == null"},
            ]),
            "Fail"
        )]),
    )
    .await;
    let configmaps: Api<ConfigMap> = env.api();
    // A condition is false: the webhook is not called, its denial not given.
    configmaps
        .create(
            &PostParams::default(),
            &configmap("unchecked", json!({"deny": "true"})),
        )
        .await
        .unwrap();
    assert!(hook.received().is_empty(), "{:?}", hook.received());
    // Every condition is true: the webhook is called and denies.
    let denied = api_status(
        configmaps
            .create(
                &PostParams::default(),
                &configmap("checked", json!({"deny": "true", "checked": "yes"})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        format!(
            r#"admission webhook "{name}" denied the request: configmaps labelled deny are refused"#
        )
    );
    assert_eq!(hook.received().len(), 1);
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;

    // A condition that fails to evaluate: refused under Fail ...
    let failing = json!([{"name": "reads-a-missing-key", "expression": "object.metadata.labels.missing == 'x'"}]);
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(failing.clone(), "Fail")]),
    )
    .await;
    let refused = api_status(
        configmaps
            .create(
                &PostParams::default(),
                &configmap("failing", json!({"a": "b"})),
            )
            .await
            .unwrap_err(),
    );
    assert_eq!((refused.code, refused.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        refused.message,
        r#"configmaps "failing" is forbidden: expression 'object.metadata.labels.missing == 'x'' resulted in error: no such key: missing"#
    );
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
    // ... and the webhook skipped under Ignore.
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(failing, "Ignore")]),
    )
    .await;
    configmaps
        .create(
            &PostParams::default(),
            &configmap("ignored", json!({"deny": "true"})),
        )
        .await
        .unwrap();
    assert_eq!(hook.received().len(), 1);
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;

    // A condition that does not parse, and a duplicate name: kube's 422.
    let (resource, object) = webhook_configuration(
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook(
            json!([
                {"name": "same", "expression": "true"},
                {"name": "same", "expression": "object.x =="},
            ]),
            "Fail"
        )]),
    );
    let api: Api<DynamicObject> = Api::all_with(env.client.clone(), &resource);
    let invalid = api_status(
        api.create(&PostParams::default(), &object)
            .await
            .unwrap_err(),
    );
    assert_eq!((invalid.code, invalid.reason.as_str()), (422, "Invalid"));
    assert!(
        invalid.message.starts_with(&format!(
            r#"ValidatingWebhookConfiguration.admissionregistration.k8s.io "{}" is invalid: [webhooks[0].matchConditions[1].expression: Invalid value: "object.x ==": compilation failed: ERROR: <input>:1:12: Syntax error: "#,
            env.ns
        )),
        "{}",
        invalid.message
    );
    assert!(
        invalid
            .message
            .ends_with(r#", webhooks[0].matchConditions[1].name: Duplicate value: "same"]"#),
        "{}",
        invalid.message
    );
}

/// `matchPolicy: Equivalent` (`generic/webhook.go` `ShouldCallHook`): a
/// webhook whose rules name events.k8s.io/v1 events is called for a core
/// v1 Event, with the object converted to events.k8s.io/v1 and the
/// review's `requestKind` naming the request's version; with `Exact` it
/// is not called.
#[tokio::test]
async fn equivalent_match_policy_converts_the_object_for_the_webhook() {
    let env = TestEnv::new("eqwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    let name = format!("events.{}.example.com", env.ns);
    let webhook = |policy: &str| {
        json!({
            "name": name,
            "clientConfig": {"url": hook.url("/validate"), "caBundle": hook.ca_bundle},
            "rules": [{"operations": ["CREATE"], "apiGroups": ["events.k8s.io"], "apiVersions": ["v1"],
                       "resources": ["events"], "scope": "Namespaced"}],
            "namespaceSelector": namespace_selector,
            "matchPolicy": policy,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        })
    };
    let core_events = ApiResource {
        group: "".into(),
        version: "v1".into(),
        api_version: "v1".into(),
        kind: "Event".into(),
        plural: "events".into(),
    };
    let events: Api<DynamicObject> =
        Api::namespaced_with(env.client.clone(), &env.ns, &core_events);
    let event = |event_name: &str| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": event_name, "namespace": env.ns, "labels": {"deny": "true"}},
            "involvedObject": {"kind": "Pod", "namespace": env.ns, "name": "p", "apiVersion": "v1"},
            "reason": "Started", "message": "Started container app", "type": "Normal",
            "source": {"component": "kubelet", "host": "node-1"},
            "eventTime": "2026-01-01T00:00:00.000001Z",
            "reportingComponent": "kubelet", "reportingInstance": "node-1",
            // kube's legacyValidateEvent: an event with an eventTime needs an action.
            "action": "Start",
        }))
        .unwrap()
    };

    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook("Exact")]),
    )
    .await;
    events
        .create(&PostParams::default(), &event("exact"))
        .await
        .unwrap();
    assert!(hook.received().is_empty());
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;

    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([webhook("Equivalent")]),
    )
    .await;
    let denied = api_status(
        events
            .create(&PostParams::default(), &event("equivalent"))
            .await
            .unwrap_err(),
    );
    assert_eq!(
        denied.message,
        format!(
            r#"admission webhook "{name}" denied the request: configmaps labelled deny are refused"#
        )
    );
    let received = hook.received();
    assert_eq!(received.len(), 1);
    let request = &received[0].review["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "events.k8s.io", "version": "v1", "kind": "Event"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "events.k8s.io", "version": "v1", "resource": "events"})
    );
    assert_eq!(
        request["requestKind"],
        json!({"group": "", "version": "v1", "kind": "Event"})
    );
    assert_eq!(
        request["requestResource"],
        json!({"group": "", "version": "v1", "resource": "events"})
    );
    // The object as events.k8s.io/v1 has it: `note` and `regarding`.
    let object = &request["object"];
    assert_eq!(object["apiVersion"], "events.k8s.io/v1");
    assert_eq!(object["note"], "Started container app");
    assert_eq!(object["regarding"]["name"], "p");
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
}

/// `serviceaccounts/{name}/token` is admitted as kube 1.34 admits it
/// (`createHandler`, then `TokenREST.Create`'s `createValidation`): the
/// webhooks see kind `authentication.k8s.io/v1 TokenRequest`, resource
/// `v1 serviceaccounts`, subresource `token`, the ServiceAccount's name;
/// the mutating one gets the request as sent (expiry defaulted), the
/// validating one the TokenRequest `TokenREST` completed (name, uid,
/// audiences); a mutation shows in the answer, a denial refuses the token,
/// and a dry run is admitted as one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn token_requests_are_admitted_by_webhooks() {
    let env = TestEnv::new("tokwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    let rules = json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"],
                        "resources": ["serviceaccounts/token"], "scope": "Namespaced"}]);
    let webhook = |path: &str| {
        json!([{
            "name": format!("token{}.{}.example.com", path.replace('/', "-"), env.ns),
            "clientConfig": {"url": hook.url(path), "caBundle": hook.ca_bundle},
            "rules": rules,
            "namespaceSelector": namespace_selector,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }])
    };
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        webhook("/mutate"),
    )
    .await;
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        webhook("/validate"),
    )
    .await;
    let created = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/serviceaccounts", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({"metadata": {"name": "robot"}})).unwrap(),
        )
        .await;
    assert_eq!(created.status, 201, "{}", created.body);
    let account_uid = created.json()["metadata"]["uid"].clone();
    let token_path = format!("/api/v1/namespaces/{}/serviceaccounts/robot/token", env.ns);
    let request = |labels: Value| {
        serde_json::to_vec(
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "metadata": {"labels": labels}, "spec": {}}),
        )
        .unwrap()
    };

    let issued = env
        .raw(
            "POST",
            &token_path,
            Some("application/json"),
            request(json!({"app": "x"})),
        )
        .await;
    assert_eq!(issued.status, 201, "{}", issued.body);
    let issued = issued.json();
    assert_eq!(
        issued["metadata"]["labels"],
        json!({"app": "x", "mutated": "true"})
    );
    assert!(issued["status"]["token"]
        .as_str()
        .is_some_and(|token| !token.is_empty()));
    let received = hook.received();
    assert_eq!(
        received.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
        ["/mutate", "/validate"]
    );
    for Received { review, .. } in &received {
        let request = &review["request"];
        assert_eq!(
            request["kind"],
            json!({"group": "authentication.k8s.io", "version": "v1", "kind": "TokenRequest"})
        );
        assert_eq!(request["requestKind"], request["kind"]);
        assert_eq!(
            request["resource"],
            json!({"group": "", "version": "v1", "resource": "serviceaccounts"})
        );
        assert_eq!(request["subResource"], "token");
        assert_eq!(request["requestSubResource"], "token");
        assert_eq!(request["name"], "robot");
        assert_eq!(request["namespace"], env.ns);
        assert_eq!(request["operation"], "CREATE");
        assert_eq!(request["dryRun"], false);
        assert_eq!(request["options"]["kind"], "CreateOptions");
        assert_eq!(request["object"]["kind"], "TokenRequest");
        assert_eq!(request["object"]["spec"]["expirationSeconds"], 3600);
        assert_eq!(request["object"]["metadata"]["namespace"], env.ns);
    }
    // Before TokenREST: the request as sent; inside it: completed.
    let mutated = &received[0].review["request"]["object"];
    assert_eq!(mutated["metadata"].get("uid"), None);
    let validated = &received[1].review["request"]["object"];
    assert_eq!(validated["metadata"]["name"], "robot");
    assert_eq!(validated["metadata"]["uid"], account_uid);
    assert_eq!(validated["metadata"]["labels"]["mutated"], "true");
    assert!(validated["spec"]["audiences"]
        .as_array()
        .is_some_and(|a| !a.is_empty()));

    let denied = env
        .raw(
            "POST",
            &token_path,
            Some("application/json"),
            request(json!({"deny": "true"})),
        )
        .await;
    assert_eq!(denied.status, 403, "{}", denied.body);
    assert!(
        denied.json()["message"]
            .as_str()
            .unwrap()
            .ends_with("denied the request: configmaps labelled deny are refused"),
        "{}",
        denied.body
    );

    let dry = env
        .raw(
            "POST",
            &format!("{token_path}?dryRun=All"),
            Some("application/json"),
            request(json!({})),
        )
        .await;
    assert_eq!(dry.status, 201, "{}", dry.body);
    let last = hook.received().last().cloned().unwrap();
    assert_eq!(last.review["request"]["dryRun"], true);

    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
}

/// `kubectl exec` is admitted as kube's `ConnectResource` admits it: a
/// validating webhook on `CONNECT` `pods/exec` sees the PodExecOptions
/// kubectl sent (operation CONNECT, no old object, no options, no dry run)
/// and its denial is kubectl's error; an allowed exec goes on to the
/// kubelet lookup (here: the pod has no node); other connect subresources
/// and a `dryRun` parameter (kube's 400) never reach it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connect_admission_lets_a_webhook_deny_kubectl_exec() {
    let env = TestEnv::new("conwh").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    let name = format!("no-shell.{}.example.com", env.ns);
    register(
        &env,
        "ValidatingWebhookConfiguration",
        &env.ns,
        json!([{
            "name": name,
            "clientConfig": {"url": hook.url("/connect"), "caBundle": hook.ca_bundle},
            "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods/exec"], "scope": "Namespaced"}],
            "namespaceSelector": namespace_selector,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }]),
    )
    .await;
    let pod = env
        .raw(
            "POST",
            &format!("/api/v1/namespaces/{}/pods", env.ns),
            Some("application/json"),
            serde_json::to_vec(&json!({"metadata": {"name": "p"},
                "spec": {"containers": [{"name": "c", "image": "busybox"}]}}))
            .unwrap(),
        )
        .await;
    assert_eq!(pod.status, 201, "{}", pod.body);

    // kubectl 1.33 (websocket, then its SPDY fallback): refused by the webhook.
    let (status, _, stderr) = env.kubectl(
        "1.33",
        &["exec", "-n", &env.ns, "p", "--", "sh", "-c", "id"],
    );
    assert!(!status.success());
    assert!(
        stderr.contains(&format!(
            r#"admission webhook "{name}" denied the request: no shells in pods"#
        )),
        "{stderr}"
    );
    let received = hook.received();
    assert!(!received.is_empty());
    for Received { review, .. } in &received {
        let request = &review["request"];
        assert_eq!(request["operation"], "CONNECT");
        assert_eq!(
            request["kind"],
            json!({"group": "", "version": "v1", "kind": "PodExecOptions"})
        );
        assert_eq!(request["requestKind"], request["kind"]);
        assert_eq!(
            request["resource"],
            json!({"group": "", "version": "v1", "resource": "pods"})
        );
        assert_eq!(request["subResource"], "exec");
        assert_eq!(request["name"], "p");
        assert_eq!(request["namespace"], env.ns);
        assert_eq!(
            request["object"],
            json!({"kind": "PodExecOptions", "apiVersion": "v1", "stdout": true,
                   "stderr": true, "container": "c", "command": ["sh", "-c", "id"]})
        );
        assert_eq!(request["oldObject"], Value::Null);
        assert_eq!(request["options"], Value::Null);
        assert_eq!(request["dryRun"], false);
        assert!(request["userInfo"]["username"].is_string(), "{request}");
    }

    // Allowed: answered as before, without a kubelet.
    let (status, _, stderr) = env.kubectl("1.33", &["exec", "-n", &env.ns, "p", "--", "ls"]);
    assert!(!status.success());
    assert!(
        stderr.contains("pod p does not have a host assigned"),
        "{stderr}"
    );
    let calls = hook.received().len();
    assert!(calls > received.len());
    let last = hook.received().last().cloned().unwrap();
    assert_eq!(last.review["request"]["object"]["command"], json!(["ls"]));

    // A mutating webhook's patch of the options is what the lookup uses.
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        json!([{
            "name": format!("sidecar.{}.example.com", env.ns),
            "clientConfig": {"url": hook.url("/connect-mutate"), "caBundle": hook.ca_bundle},
            "rules": [{"operations": ["CONNECT"], "apiGroups": [""], "apiVersions": ["v1"],
                       "resources": ["pods/attach"], "scope": "Namespaced"}],
            "namespaceSelector": namespace_selector,
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }]),
    )
    .await;
    let attach = env
        .raw(
            "POST",
            &format!(
                "/api/v1/namespaces/{}/pods/p/attach?container=c&stdout=true",
                env.ns
            ),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(attach.status, 400, "{}", attach.body);
    assert_eq!(
        attach.json()["message"],
        "container sidecar is not valid for pod p"
    );
    let last = hook.received().last().cloned().unwrap();
    assert_eq!(last.path, "/connect-mutate");
    assert_eq!(
        last.review["request"]["object"],
        json!({"kind": "PodAttachOptions", "apiVersion": "v1", "stdout": true, "container": "c"})
    );
    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
    let calls = hook.received().len();

    // A denied exec of a pod that does not exist: admission comes first.
    let base = format!("/api/v1/namespaces/{}/pods", env.ns);
    let gone = env
        .raw(
            "POST",
            &format!("{base}/gone/exec?command=sh&stdout=1"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(gone.status, 403, "{}", gone.body);
    assert_eq!(
        gone.json()["message"],
        format!(r#"admission webhook "{name}" denied the request: no shells in pods"#)
    );
    let calls = calls + 1;
    assert_eq!(hook.received().len(), calls);
    // dryRun is refused before admission; portforward is not in the rules.
    let dry = env
        .raw(
            "POST",
            &format!("{base}/p/exec?command=sh&dryRun=All"),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(dry.status, 400, "{}", dry.body);
    assert_eq!(dry.json()["message"], "dryRun is not supported");
    let portforward = env
        .raw("POST", &format!("{base}/p/portforward"), None, Vec::new())
        .await;
    assert_eq!(portforward.status, 400, "{}", portforward.body);
    assert_eq!(hook.received().len(), calls);

    unregister(&env, "ValidatingWebhookConfiguration", &env.ns).await;
}

/// kube's decoder defaults what it decodes, so mutating webhooks see the
/// defaulted object and may `replace` a field the client left out
/// (`kubectl run` sends no `imagePullPolicy`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_webhooks_see_and_patch_the_defaulted_object() {
    let env = TestEnv::new("mwh-defaults").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        json!([hook_entry(
            &format!("pull.{}.example.com", env.ns),
            &hook.url("/pull-never"),
            &hook.ca_bundle,
            json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": [""], "apiVersions": ["v1"],
                    "resources": ["pods"], "scope": "Namespaced"}]),
            &namespace_selector,
        )]),
    )
    .await;
    let (status, stdout, stderr) = env.kubectl(
        "1.33",
        &[
            "run",
            "web",
            "-n",
            &env.ns,
            "--image=nginx:1.27",
            "--labels=app=web",
        ],
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "pod/web created");
    let received = hook.received();
    assert_eq!(received.len(), 1, "{received:?}");
    let seen = &received[0].review["request"]["object"];
    assert_eq!(
        seen["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(
        seen["spec"]["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    assert_eq!(seen["spec"]["restartPolicy"], "Always");
    assert_eq!(seen["spec"]["dnsPolicy"], "ClusterFirst");
    let (status, stdout, stderr) = env.kubectl(
        "1.33",
        &[
            "get",
            "pod",
            "web",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.containers[0].imagePullPolicy}",
        ],
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout, "Never");

    // A replace that leaves defaulted fields out is defaulted before the
    // webhook too.
    let (status, stdout, stderr) =
        env.kubectl("1.33", &["get", "pod", "web", "-n", &env.ns, "-o", "json"]);
    assert!(status.success(), "{stderr}");
    let mut pod: Value = serde_json::from_str(&stdout).unwrap();
    let spec = pod["spec"].as_object_mut().unwrap();
    spec.remove("restartPolicy");
    spec["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("terminationMessagePolicy");
    pod["metadata"]["labels"]["tier"] = json!("front");
    let (status, _, stderr) = env.kubectl_stdin(
        "1.33",
        &["replace", "-n", &env.ns, "-f", "-"],
        Some(&pod.to_string()),
    );
    assert!(status.success(), "{stderr}");
    let received = hook.received();
    assert_eq!(received.len(), 2, "{received:?}");
    let seen = &received[1].review["request"];
    assert_eq!(seen["operation"], "UPDATE");
    assert_eq!(seen["object"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        seen["object"]["spec"]["containers"][0]["terminationMessagePolicy"],
        "File"
    );
    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
}

/// The `/mutate` hook (labels `mutated: "true"`) on ConfigMap `operations`.
fn label_hook(env: &TestEnv, hook: &Webhook, operations: Value, selector: &Value) -> Value {
    hook_entry(
        &format!("label.{}.example.com", env.ns),
        &hook.url("/mutate"),
        &hook.ca_bundle,
        configmaps_rule(operations),
        selector,
    )
}

/// The ConfigMap `settings` as kubectl 1.33 gets it, managedFields shown.
fn settings_with_managed_fields(env: &TestEnv) -> Value {
    let get = [
        "get",
        "configmap",
        "settings",
        "-n",
        &env.ns,
        "-o",
        "json",
        "--show-managed-fields",
    ];
    let (status, stdout, stderr) = env.kubectl("1.33", &get);
    assert!(status.success(), "{stderr}");
    serde_json::from_str(&stdout).unwrap()
}

/// kube's create handler records managedFields before mutating admission:
/// what a webhook adds is nobody's, and managedFields a webhook leaves
/// invalid are reset to the request's with kube's warning.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_mutating_webhooks_add_is_nobodys_and_broken_managed_fields_are_reset() {
    let env = TestEnv::new("mwh-managed").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        json!([
            label_hook(&env, &hook, json!(["CREATE"]), &namespace_selector),
            hook_entry(
                &format!("break.{}.example.com", env.ns),
                &hook.url("/break-managed-fields"),
                &hook.ca_bundle,
                configmaps_rule(json!(["CREATE"])),
                &namespace_selector,
            ),
        ]),
    )
    .await;
    let (status, stdout, stderr) = env.kubectl(
        "1.33",
        &[
            "create",
            "configmap",
            "settings",
            "-n",
            &env.ns,
            "--from-literal=a=b",
        ],
    );
    assert!(status.success(), "{stderr}");
    assert_eq!(stdout.trim(), "configmap/settings created");
    assert!(
        stderr.contains(
            "Warning: .metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: operation must be `Apply` or `Update`"
        ),
        "{stderr}"
    );
    let stored = settings_with_managed_fields(&env);
    assert_eq!(stored["metadata"]["labels"], json!({"mutated": "true"}));
    let entries = stored["metadata"]["managedFields"].as_array().unwrap();
    assert_eq!(entries.len(), 1, "{entries:?}");
    assert_eq!(entries[0]["manager"], "kubectl-create");
    assert_eq!(entries[0]["operation"], "Update");
    // The label the webhook added belongs to nobody.
    assert_eq!(
        entries[0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:a": {}}})
    );
    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
}

/// An update's managedFields are recorded before mutating admission too
/// (`handlers/update.go`, `patch.go`: the field manager is the first
/// transformer): a label a webhook adds on UPDATE belongs to nobody, so
/// another manager applies it without a conflict.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_mutating_webhooks_add_on_update_is_nobodys() {
    let env = TestEnv::new("mwh-managed-update").await;
    let hook = start_webhook(&env.ns).await;
    let namespace_selector = select_namespace(&env).await;
    register(
        &env,
        "MutatingWebhookConfiguration",
        &env.ns,
        json!([label_hook(
            &env,
            &hook,
            json!(["UPDATE"]),
            &namespace_selector
        )]),
    )
    .await;
    let ns = env.ns.as_str();
    let create = [
        "create",
        "configmap",
        "settings",
        "-n",
        ns,
        "--from-literal=a=b",
    ];
    let (status, _, stderr) = env.kubectl("1.33", &create);
    assert!(status.success(), "{stderr}");
    let patch = [
        "patch",
        "configmap",
        "settings",
        "-n",
        ns,
        "--type=merge",
        "-p",
        r#"{"data":{"c":"d"}}"#,
    ];
    let (status, _, stderr) = env.kubectl("1.33", &patch);
    assert!(status.success(), "{stderr}");
    let stored = settings_with_managed_fields(&env);
    assert_eq!(stored["metadata"]["labels"], json!({"mutated": "true"}));
    let entries = stored["metadata"]["managedFields"].as_array().unwrap();
    let fields: Vec<(&str, &Value)> = entries
        .iter()
        .map(|entry| (entry["manager"].as_str().unwrap(), &entry["fieldsV1"]))
        .collect();
    assert_eq!(
        fields,
        [
            ("kubectl-create", &json!({"f:data": {".": {}, "f:a": {}}})),
            ("kubectl-patch", &json!({"f:data": {"f:c": {}}})),
        ]
    );
    // Nobody owns the label: another manager takes it without --force-conflicts.
    let config = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\n  namespace: {ns}\n  labels:\n    mutated: ops\n"
    );
    let apply = ["apply", "--server-side", "--field-manager=ops", "-f", "-"];
    let (status, _, stderr) = env.kubectl_stdin("1.33", &apply, Some(&config));
    assert!(status.success(), "{stderr}");
    unregister(&env, "MutatingWebhookConfiguration", &env.ns).await;
}
