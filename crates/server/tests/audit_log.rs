//! `--audit-policy-file` and `--audit-log-path`: kubectl 1.33 requests
//! (create, get, list, watch, a 404, a 403 through impersonation) leave
//! audit.k8s.io/v1 Event lines as kube-apiserver writes them, at the level
//! and stages the policy gives; the `Audit-Id` response header is the
//! event's `auditID`, also on a server that does not audit.
#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use ferrokube_testkit::{kubectl_path, TestServer};
use http_body_util::BodyExt;
use serde_json::Value;

const POLICY: &str = r#"apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*", "/openapi*", "/api", "/api/v1", "/apis*", "/version"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["configmaps"]
- level: Request
  omitStages: ["RequestReceived"]
  resources:
  - group: ""
    resources: ["secrets"]
- level: Metadata
"#;

fn kubectl(server: &TestServer, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(kubectl_path("1.33"))
        .arg("--kubeconfig")
        .arg(&server.kubeconfig)
        .args(args)
        .env_remove("KUBECONFIG")
        .output()
        .unwrap();
    let text = |bytes: &[u8]| String::from_utf8_lossy(bytes).into_owned();
    (out.status.success(), text(&out.stdout), text(&out.stderr))
}

fn events(log: &Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
        .collect()
}

/// The events of the requests matching `predicate`, once `count` of them
/// are written (the writer thread is asynchronous).
fn wait_for(log: &Path, count: usize, predicate: impl Fn(&Value) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found: Vec<Value> = events(log).into_iter().filter(|e| predicate(e)).collect();
        if found.len() >= count || Instant::now() > deadline {
            return found;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn text<'a>(event: &'a Value, pointer: &str) -> &'a str {
    event.pointer(pointer).and_then(Value::as_str).unwrap_or("")
}

fn stages(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| text(e, "/stage")).collect()
}

fn is_micro_time(value: &str) -> bool {
    // 2006-01-02T15:04:05.000000Z
    value.len() == 27 && value.as_bytes()[19] == b'.' && value.ends_with('Z')
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_requests_are_audited_as_the_policy_says() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = directory.path().join("audit").join("audit.log");
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
        "--audit-log-mode",
        "batch",
    ]);
    let create = kubectl(
        &server,
        &[
            "create",
            "configmap",
            "audited",
            "-n",
            "default",
            "--from-literal=a=b",
        ],
    );
    assert!(create.0, "{create:?}");
    let get = kubectl(
        &server,
        &["get", "configmap", "audited", "-n", "default", "-o", "json"],
    );
    assert!(get.0, "{get:?}");
    let list = kubectl(&server, &["get", "configmaps", "-n", "default"]);
    assert!(list.0, "{list:?}");
    let missing = kubectl(&server, &["get", "configmap", "missing", "-n", "default"]);
    assert!(!missing.0 && missing.2.contains("NotFound"), "{missing:?}");
    let forbidden = kubectl(&server, &["get", "pods", "-n", "default", "--as=nobody"]);
    assert!(
        !forbidden.0 && forbidden.2.contains("Forbidden"),
        "{forbidden:?}"
    );
    let secret = kubectl(
        &server,
        &[
            "create",
            "secret",
            "generic",
            "audited",
            "-n",
            "default",
            "--from-literal=k=v",
        ],
    );
    assert!(secret.0, "{secret:?}");
    let watch = kubectl(
        &server,
        &[
            "get",
            "--raw",
            "/api/v1/namespaces/default/configmaps?watch=true&timeoutSeconds=1",
        ],
    );
    assert!(watch.0, "{watch:?}");

    let configmap = |verb: &'static str| {
        move |e: &Value| {
            text(e, "/verb") == verb
                && text(e, "/objectRef/resource") == "configmaps"
                && text(e, "/objectRef/namespace") == "default"
        }
    };
    // create: RequestResponse, both stages, the objects in full.
    // `RequestReceived` of a create names no object yet (as kube's: the
    // name comes from the decoded body, after it).
    let created = wait_for(&log, 1, |e| {
        configmap("create")(e) && text(e, "/objectRef/name") == "audited"
    });
    assert_eq!(created.len(), 1, "{:#?}", events(&log));
    let id = text(&created[0], "/auditID").to_string();
    let created = wait_for(&log, 2, |e| text(e, "/auditID") == id);
    assert!(created[0]["objectRef"].get("name").is_none());
    assert_eq!(
        stages(&created),
        ["RequestReceived", "ResponseComplete"],
        "{created:#?}"
    );
    let complete = &created[1];
    assert_eq!(complete["kind"], "Event");
    assert_eq!(complete["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(complete["level"], "RequestResponse");
    assert_eq!(complete["auditID"], created[0]["auditID"]);
    assert_eq!(
        complete["requestURI"],
        "/api/v1/namespaces/default/configmaps?fieldManager=kubectl-create&fieldValidation=Strict"
    );
    assert_eq!(complete["objectRef"]["apiVersion"], "v1");
    assert!(complete["objectRef"].get("apiGroup").is_none());
    assert_eq!(
        complete["responseStatus"],
        serde_json::json!({"metadata": {}, "code": 201})
    );
    assert_eq!(complete["requestObject"]["data"]["a"], "b");
    assert_eq!(complete["responseObject"]["metadata"]["name"], "audited");
    assert!(complete["responseObject"]["metadata"]["uid"].is_string());
    assert!(created[0].get("responseStatus").is_none());
    assert!(!text(complete, "/user/username").is_empty());
    assert!(complete["user"]["groups"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g == "system:masters"));
    assert_eq!(complete["sourceIPs"], serde_json::json!(["127.0.0.1"]));
    assert!(
        text(complete, "/userAgent").starts_with("kubectl"),
        "{complete}"
    );
    assert_eq!(
        complete["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert!(
        complete["annotations"]["authorization.k8s.io/reason"].is_string(),
        "{complete}"
    );
    assert!(is_micro_time(text(complete, "/requestReceivedTimestamp")));
    assert!(is_micro_time(text(complete, "/stageTimestamp")));
    assert_eq!(
        created[0]["requestReceivedTimestamp"],
        created[0]["stageTimestamp"]
    );

    // get and list: the response object is the object and the list.
    let got = wait_for(&log, 2, |e| {
        configmap("get")(e) && text(e, "/objectRef/name") == "audited"
    });
    assert_eq!(stages(&got), ["RequestReceived", "ResponseComplete"]);
    assert_eq!(got[1]["responseStatus"]["code"], 200);
    assert_eq!(got[1]["responseObject"]["data"]["a"], "b");
    assert!(got[1].get("requestObject").is_none());
    let listed = wait_for(&log, 2, configmap("list"));
    assert_eq!(listed[1]["responseStatus"]["code"], 200);
    assert!(listed[1]["responseObject"].is_object(), "{:#?}", listed[1]);

    // 404: the Status's bounded fields.
    let not_found = wait_for(&log, 2, |e| {
        configmap("get")(e) && text(e, "/objectRef/name") == "missing"
    });
    let status = &not_found[1]["responseStatus"];
    assert_eq!(status["code"], 404);
    assert_eq!(status["reason"], "NotFound");
    assert_eq!(status["status"], "Failure");
    assert_eq!(status["message"], "configmaps \"missing\" not found");
    assert_eq!(
        status["details"],
        serde_json::json!({"name": "missing", "kind": "configmaps"})
    );

    // 403 through impersonation: Metadata level, the impersonated user.
    let denied = wait_for(&log, 2, |e| {
        text(e, "/objectRef/resource") == "pods" && text(e, "/verb") == "list"
    });
    assert_eq!(stages(&denied), ["RequestReceived", "ResponseComplete"]);
    let denied = &denied[1];
    assert_eq!(denied["level"], "Metadata");
    assert_eq!(denied["responseStatus"]["code"], 403);
    assert_eq!(denied["responseStatus"]["reason"], "Forbidden");
    assert_eq!(denied["impersonatedUser"]["username"], "nobody");
    assert_eq!(
        denied["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    assert!(denied.get("responseObject").is_none() && denied.get("requestObject").is_none());

    // Request level with RequestReceived omitted: one event, the request
    // object only.
    let secrets = wait_for(&log, 1, |e| text(e, "/objectRef/resource") == "secrets");
    assert_eq!(stages(&secrets), ["ResponseComplete"]);
    assert_eq!(secrets[0]["level"], "Request");
    assert_eq!(secrets[0]["requestObject"]["kind"], "Secret");
    assert!(secrets[0].get("responseObject").is_none());

    // watch: long-running, so ResponseStarted when the headers go and
    // ResponseComplete when the stream ends.
    let watched = wait_for(&log, 3, configmap("watch"));
    assert_eq!(
        stages(&watched),
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert_eq!(
        watched[1]["responseStatus"],
        serde_json::json!({"metadata": {}, "code": 200})
    );

    // Nothing for what the policy says None of.
    assert!(events(&log)
        .iter()
        .all(|e| !text(e, "/requestURI").starts_with("/readyz")));
    assert!(events(&log)
        .iter()
        .all(|e| !text(e, "/requestURI").starts_with("/api?")));
}

async fn get_with_audit_id(server: &TestServer, audit_id: Option<&str>) -> String {
    let client = server.client().await;
    let mut request = http::Request::builder()
        .method("GET")
        .uri("/api/v1/namespaces/default");
    if let Some(id) = audit_id {
        request = request.header("Audit-ID", id);
    }
    let request = request.body(kube::client::Body::empty()).unwrap();
    let response = client.send(request).await.unwrap();
    assert_eq!(response.status(), 200);
    let id = response
        .headers()
        .get("audit-id")
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default();
    let _ = response.into_body().collect().await;
    id
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_audit_id_header_is_the_events_audit_id() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(&policy, POLICY).unwrap();
    let log = directory.path().join("audit.log");
    let server = TestServer::start_with(&[
        "--audit-policy-file",
        policy.to_str().unwrap(),
        "--audit-log-path",
        log.to_str().unwrap(),
    ]);
    let generated = get_with_audit_id(&server, None).await;
    assert_eq!(generated.len(), 36, "a UUID: {generated:?}");
    let chosen = get_with_audit_id(&server, Some("my-own-audit-id")).await;
    assert_eq!(chosen, "my-own-audit-id");
    for id in [generated, chosen] {
        let found = wait_for(&log, 2, |e| text(e, "/auditID") == id);
        assert_eq!(
            stages(&found),
            ["RequestReceived", "ResponseComplete"],
            "{id}"
        );
        assert_eq!(found[1]["objectRef"]["resource"], "namespaces");
    }
    // A refused credential: one ResponseStarted event with the 401, no user
    // (kube's `WithFailedAuthenticationAudit`).
    let mut config = ferrokube_testkit::config_from(&server.kubeconfig).await;
    config.auth_info = Default::default();
    config.auth_info.token = Some("not-a-valid-token".to_string().into());
    let stranger = kube::Client::try_from(config).unwrap();
    let request = http::Request::builder()
        .uri("/api/v1/namespaces/kube-system/secrets")
        .body(kube::client::Body::empty())
        .unwrap();
    let response = stranger.send(request).await.unwrap();
    assert_eq!(response.status(), 401);
    let id = response.headers()["audit-id"].to_str().unwrap().to_string();
    let refused = wait_for(&log, 1, |e| text(e, "/auditID") == id);
    assert_eq!(stages(&refused), ["ResponseStarted"], "{refused:#?}");
    assert_eq!(refused[0]["responseStatus"]["code"], 401);
    assert_eq!(refused[0]["user"], serde_json::json!({}));
    assert_eq!(refused[0]["objectRef"]["resource"], "secrets");
    // Without a policy nothing is audited, yet every response has an ID.
    let plain = TestServer::start();
    let id = get_with_audit_id(&plain, None).await;
    assert_eq!(id.len(), 36, "{id:?}");
}

#[test]
fn a_bad_policy_stops_the_start_with_kubes_message() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- users: [a]\n",
    )
    .unwrap();
    let out = Command::new(ferrokube_testkit::ferrokube_bin())
        .args(["serve", "--ephemeral", "--audit-policy-file"])
        .arg(&policy)
        .args(["--audit-log-path", "-"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!(
            "loading audit policy file: rules[0].level: Required value: from file {}",
            policy.display()
        )),
        "{stderr}"
    );
}
