//! Webhook conversion (`spec.conversion.strategy: Webhook`): the test runs
//! its own HTTPS conversion webhook (hyper + rustls, a CA made here) that
//! converts between v1 `spec.size` and v2 `spec.dimensions.size`.

use super::*;

use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex};

use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair, SanType};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// How the webhook answers.
const GOOD: u8 = 0;
const BAD_UID: u8 = 1;
const FAILURE: u8 = 2;

struct Webhook {
    port: u16,
    ca_pem: String,
    mode: Arc<AtomicU8>,
    /// The number of objects of each review received.
    reviews: Arc<Mutex<Vec<usize>>>,
}

/// v1 `spec.size` ⇄ v2 `spec.dimensions.size`; everything else as sent
/// (and a label, which kube lets a webhook change).
fn convert_object(mut object: Value, desired: &str) -> Value {
    let spec = object["spec"].take();
    object["spec"] = if desired.ends_with("/v2") {
        json!({"dimensions": {"size": spec["size"].clone()}})
    } else {
        json!({"size": spec["dimensions"]["size"].clone()})
    };
    object["apiVersion"] = json!(desired);
    object["metadata"]["labels"] = json!({"converted-to": desired.rsplit('/').next().unwrap()});
    object
}

fn answer(review: &Value, mode: u8) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap();
    let objects: Vec<Value> = request["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|object| convert_object(object.clone(), desired))
        .collect();
    let (uid, result) = match mode {
        GOOD => (request["uid"].clone(), json!({"status": "Success"})),
        BAD_UID => (json!("not-the-uid"), json!({"status": "Success"})),
        _ => (
            request["uid"].clone(),
            json!({"status": "Failure", "message": "the webhook refuses"}),
        ),
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
           "response": {"uid": uid, "result": result, "convertedObjects": objects}})
}

/// Serves the webhook on 127.0.0.1 with a certificate for 127.0.0.1 and
/// `conv.<ns>.svc`, issued by a CA of its own.
async fn start_webhook(ns: &str) -> Webhook {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::from_params(&ca, &ca_key);
    let key = KeyPair::generate().unwrap();
    let mut params = CertificateParams::new(vec![format!("conv.{ns}.svc")]).unwrap();
    params
        .subject_alt_names
        .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
    let cert = params.signed_by(&key, &issuer).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let mode = Arc::new(AtomicU8::new(GOOD));
    let reviews = Arc::new(Mutex::new(Vec::new()));
    let (served_mode, served_reviews) = (mode.clone(), reviews.clone());
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                return;
            };
            let (acceptor, mode, reviews) = (
                acceptor.clone(),
                served_mode.clone(),
                served_reviews.clone(),
            );
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |request: http::Request<Incoming>| {
                        let (mode, reviews) = (mode.clone(), reviews.clone());
                        async move {
                            assert_eq!(request.uri().path(), "/convert");
                            assert_eq!(request.uri().query(), Some("timeout=30s"));
                            let body = request.into_body().collect().await?.to_bytes();
                            let review: Value = serde_json::from_slice(&body).unwrap();
                            reviews
                                .lock()
                                .unwrap()
                                .push(review["request"]["objects"].as_array().unwrap().len());
                            let out = answer(&review, mode.load(Ordering::SeqCst));
                            Ok::<_, hyper::Error>(http::Response::new(Full::new(
                                bytes::Bytes::from(serde_json::to_vec(&out).unwrap()),
                            )))
                        }
                    });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    Webhook {
        port,
        ca_pem: ca_cert.pem(),
        mode,
        reviews,
    }
}

fn conversion_crd(group: &str, client_config: Value) -> Value {
    let v1 = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer"}}},
    }}});
    let v2 = json!({"openAPIV3Schema": {"type": "object", "properties": {
        "spec": {"type": "object", "properties": {"dimensions": {"type": "object", "properties": {
            "size": {"type": "integer"},
        }}}},
    }}});
    let mut crd = widget_crd(
        group,
        json!([
            {"name": "v1", "served": true, "storage": true, "schema": v1},
            {"name": "v2", "served": true, "storage": false, "schema": v2},
        ]),
    );
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": client_config,
        "conversionReviewVersions": ["v1", "v1beta1"],
    }});
    crd
}

fn widget(group: &str, version: &str, name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": format!("{group}/{version}"), "kind": "Widget",
        "metadata": {"name": name}, "spec": spec,
    }))
    .unwrap()
}

fn spec(object: &DynamicObject) -> Value {
    object.data["spec"].clone()
}

/// Created at v1 (the storage version), read at v2 through the webhook
/// (get, list in one review, watch), written at v2 and read at v1; a
/// webhook answering another uid or a failure fails the read with kube's
/// 500; the same webhook reached as a Service through its Endpoints.
#[tokio::test]
async fn webhook_conversion_between_versions_of_different_shape() {
    use base64::Engine as _;
    let env = TestEnv::new("crd-webhook").await;
    let ns = env.ns.clone();
    let group = format!("g{}.example.com", suffix());
    let hook = start_webhook(&ns).await;
    let ca_bundle = base64::engine::general_purpose::STANDARD.encode(&hook.ca_pem);
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let crd = conversion_crd(
        &group,
        json!({"url": format!("https://127.0.0.1:{}/convert", hook.port), "caBundle": ca_bundle}),
    );
    crds.create(
        &PostParams::default(),
        &serde_json::from_value(crd).unwrap(),
    )
    .await
    .unwrap();
    let (v1, v2) = (
        widgets_at(&env.client, &env.ns, &group, "v1"),
        widgets_at(&env.client, &env.ns, &group, "v2"),
    );
    let reviews = || hook.reviews.lock().unwrap().clone();

    // At the storage version: no review.
    create_once_served(&v1, &widget(&group, "v1", "w1", json!({"size": 3})))
        .await
        .unwrap();
    v1.create(
        &PostParams::default(),
        &widget(&group, "v1", "w2", json!({"size": 4})),
    )
    .await
    .unwrap();
    assert_eq!(reviews(), Vec::<usize>::new());

    // Get and list at v2: converted by the webhook, the list in one review.
    let got = v2.get("w1").await.unwrap();
    assert_eq!(api_version(&got), format!("{group}/v2"));
    assert_eq!(spec(&got), json!({"dimensions": {"size": 3}}));
    assert_eq!(got.metadata.labels.unwrap()["converted-to"], "v2");
    let listed = v2.list(&ListParams::default()).await.unwrap();
    let specs: Vec<Value> = listed.items.iter().map(spec).collect();
    assert_eq!(
        specs,
        [
            json!({"dimensions": {"size": 3}}),
            json!({"dimensions": {"size": 4}})
        ]
    );
    assert_eq!(reviews(), [1, 2]);
    // Written at v2: stored at v1 (read there without a review), answered at v2.
    let created = v2
        .create(
            &PostParams::default(),
            &widget(&group, "v2", "w3", json!({"dimensions": {"size": 7}})),
        )
        .await
        .unwrap();
    assert_eq!(api_version(&created), format!("{group}/v2"));
    let before = reviews().len();
    let stored = v1.get("w3").await.unwrap();
    assert_eq!(spec(&stored), json!({"size": 7}));
    assert_eq!(reviews().len(), before, "read at the storage version");
    // A merge patch at v2: the base converted to v2, the result back to v1.
    let patched = v2
        .patch(
            "w1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"dimensions": {"size": 5}}})),
        )
        .await
        .unwrap();
    assert_eq!(spec(&patched), json!({"dimensions": {"size": 5}}));
    assert_eq!(spec(&v1.get("w1").await.unwrap()), json!({"size": 5}));

    // A watch at v2 converts each event.
    let from = v1
        .get("w2")
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    let mut events = v2
        .watch(&WatchParams::default().timeout(10), &from)
        .await
        .unwrap()
        .boxed();
    v1.patch(
        "w2",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"size": 9}})),
    )
    .await
    .unwrap();
    let event = loop {
        match events.try_next().await.unwrap() {
            Some(WatchEvent::Modified(object)) if object.metadata.name.as_deref() == Some("w2") => {
                break object
            }
            Some(WatchEvent::Added(_) | WatchEvent::Modified(_) | WatchEvent::Bookmark(_)) => {
                continue
            }
            other => panic!("unexpected {other:?}"),
        }
    };
    assert_eq!(api_version(&event), format!("{group}/v2"));
    assert_eq!(spec(&event), json!({"dimensions": {"size": 9}}));

    // A wrong uid or a failure: kube's 500 without a reason.
    let one = format!("/apis/{group}/v2/namespaces/{ns}/widgets/w1");
    hook.mode.store(BAD_UID, Ordering::SeqCst);
    let failed = env.raw("GET", &one, None, vec![]).await;
    assert_eq!(failed.status, 500, "{}", failed.body);
    let status = failed.json();
    assert_eq!(status["kind"], "Status");
    assert_eq!(status["code"], 500);
    assert_eq!(status.get("reason"), None, "{status}");
    let message = status["message"].as_str().unwrap();
    let prefix =
        format!("conversion webhook for {group}/v1, Kind=Widget failed: expected response.uid=\"");
    assert!(message.starts_with(&prefix), "{message}");
    assert!(message.ends_with(r#"", got "not-the-uid""#), "{message}");
    hook.mode.store(FAILURE, Ordering::SeqCst);
    let failed = env
        .raw(
            "GET",
            &format!("/apis/{group}/v2/namespaces/{ns}/widgets"),
            None,
            vec![],
        )
        .await;
    assert_eq!(failed.status, 500, "{}", failed.body);
    assert_eq!(
        failed.json()["message"],
        format!("conversion webhook for {group}/v2, Kind=WidgetList failed: the webhook refuses")
    );
    match v2
        .create(
            &PostParams::default(),
            &widget(&group, "v2", "w4", json!({"dimensions": {"size": 1}})),
        )
        .await
    {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 500);
            assert_eq!(
                status.message,
                format!(
                    "conversion webhook for {group}/v2, Kind=Widget failed: the webhook refuses"
                )
            );
        }
        other => panic!("a create through a failing webhook answered {other:?}"),
    }
    assert!(v1.get_opt("w4").await.unwrap().is_none(), "nothing stored");
    // The storage version needs no webhook.
    assert_eq!(spec(&v1.get("w1").await.unwrap()), json!({"size": 5}));
    hook.mode.store(GOOD, Ordering::SeqCst);

    // The same webhook as a Service: its Endpoints give the address, the
    // certificate is checked for conv.<ns>.svc.
    let raw_create = |path: String, body: Value| {
        let env = &env;
        async move {
            let created = env
                .raw(
                    "POST",
                    &path,
                    Some("application/json"),
                    body.to_string().into_bytes(),
                )
                .await;
            assert_eq!(created.status, 201, "{}", created.body);
        }
    };
    raw_create(
        format!("/api/v1/namespaces/{ns}/services"),
        json!({"metadata": {"name": "conv"}, "spec": {"ports": [{"name": "https", "port": 443}]}}),
    )
    .await;
    raw_create(
        format!("/api/v1/namespaces/{ns}/endpoints"),
        json!({"metadata": {"name": "conv"}, "subsets": [{
            "addresses": [{"ip": "127.0.0.1"}],
            "ports": [{"name": "https", "port": hook.port}],
        }]}),
    )
    .await;
    crds.patch(
        &format!("widgets.{group}"),
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"conversion": {"webhook": {"clientConfig": {
            "url": null,
            "service": {"namespace": ns, "name": "conv", "path": "/convert", "port": 443},
        }}}}})),
    )
    .await
    .unwrap();
    let reviews_before = reviews().len();
    let mut by_service = None;
    for _ in 0..100 {
        let object = v2.get("w3").await.unwrap();
        if reviews().len() > reviews_before && spec(&object) == json!({"dimensions": {"size": 7}}) {
            by_service = Some(object);
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(by_service.is_some(), "never converted through the Service");
    // Without Endpoints, kube's resolver error.
    let gone = env
        .raw(
            "DELETE",
            &format!("/api/v1/namespaces/{ns}/endpoints/conv"),
            None,
            vec![],
        )
        .await;
    assert_eq!(gone.status, 200, "{}", gone.body);
    let failed = env.raw("GET", &one, None, vec![]).await;
    assert_eq!(failed.status, 500, "{}", failed.body);
    assert_eq!(
        failed.json()["message"],
        format!(
            "conversion webhook for {group}/v1, Kind=Widget failed: Post \"https://conv.{ns}.svc:443/convert?timeout=30s\": endpoints \"conv\" not found"
        )
    );
}

fn api_version(object: &DynamicObject) -> String {
    object
        .types
        .as_ref()
        .map(|types| types.api_version.clone())
        .unwrap_or_default()
}
