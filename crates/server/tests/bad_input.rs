//! Bad requests, sent raw: each must fail with the code, reason and message
//! text kube-apiserver 1.34 sends (wording from k8s.io/apiserver's handlers
//! and k8s.io/apimachinery's api/errors, runtime and json serializer).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{suffix, RawResponse, TestEnv};
use serde_json::{json, Value};

const JSON: Option<&str> = Some("application/json");

/// Asserts a JSON `Status` failure with exactly this code, reason and message.
#[track_caller]
fn failure(res: &RawResponse, code: u16, reason: &str, message: &str) -> Value {
    assert_eq!(res.status, code, "HTTP status of {res:?}");
    let ct = res.header("content-type");
    assert!(
        ct.starts_with("application/json"),
        "content-type {ct:?} of {res:?}"
    );
    let v = res.json();
    assert_eq!(v["kind"], "Status", "{v}");
    assert_eq!(v["apiVersion"], "v1", "{v}");
    assert_eq!(v["metadata"], json!({}), "{v}");
    assert_eq!(v["status"], "Failure", "{v}");
    assert_eq!(v["code"], code, "{v}");
    assert_eq!(v["reason"], reason, "{v}");
    assert_eq!(v["message"], message, "{v}");
    v
}

fn body(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

fn cm_body(name: &str) -> Vec<u8> {
    body(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
}

fn cms(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps")
}

const SUBDOMAIN_RULE: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_RULE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

#[tokio::test]
async fn malformed_json_is_bad_request() {
    let env = TestEnv::new("bad-json").await;
    let cases: &[(&[u8], &str)] = &[
        (br#"{"kind":"#, r#"unexpected end of JSON input ({"kind":)"#),
        (
            b"{not json}",
            "invalid character 'n' looking for beginning of object key string ({not json})",
        ),
        (b"", "unexpected end of JSON input (<empty>)"),
    ];
    let put_path = format!("{}/target", cms(&env.ns));
    let res = env
        .raw("POST", &cms(&env.ns), JSON, cm_body("target"))
        .await;
    assert_eq!(res.status, 201, "{res:?}");
    for (input, tail) in cases {
        let msg = format!(
            "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: {tail}"
        );
        let res = env.raw("POST", &cms(&env.ns), JSON, input.to_vec()).await;
        failure(&res, 400, "BadRequest", &msg);
        let res = env.raw("PUT", &put_path, JSON, input.to_vec()).await;
        failure(&res, 400, "BadRequest", &msg);
    }
}

#[tokio::test]
async fn wrong_api_version_in_body() {
    let env = TestEnv::new("bad-ver").await;
    // A kind the data's group/version does not have: the scheme cannot make one.
    let data =
        body(json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "x"}}));
    let res = env.raw("POST", &cms(&env.ns), JSON, data).await;
    let msg = r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#;
    failure(&res, 400, "BadRequest", msg);

    // A convertible object of another version of the same group.
    let hpa = json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "h"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 3
        }
    });
    let path = format!(
        "/apis/autoscaling/v1/namespaces/{}/horizontalpodautoscalers",
        env.ns
    );
    let res = env.raw("POST", &path, JSON, body(hpa)).await;
    let msg = "the API version in the data (autoscaling/v2) does not match the expected API version (autoscaling/v1)";
    failure(&res, 400, "BadRequest", msg);
}

#[tokio::test]
async fn missing_type_meta_defaults_to_the_endpoint() {
    let env = TestEnv::new("bad-tm").await;
    let res = env
        .raw(
            "POST",
            &cms(&env.ns),
            JSON,
            body(json!({"metadata": {"name": "bare"}})),
        )
        .await;
    assert_eq!(res.status, 201, "{res:?}");
    let v = res.json();
    assert_eq!(
        (v["apiVersion"].as_str(), v["kind"].as_str()),
        (Some("v1"), Some("ConfigMap"))
    );
}

#[tokio::test]
async fn unknown_fields_warn_or_fail() {
    let env = TestEnv::new("bad-field").await;
    let data = |name: &str| {
        body(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "foo": 1}))
    };
    // Default (Warn): created, the field dropped, a warning returned.
    let res = env.raw("POST", &cms(&env.ns), JSON, data("warned")).await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(
        res.header("warning"),
        r#"299 - "unknown field \"foo\"""#,
        "{res:?}"
    );
    assert!(
        res.json().get("foo").is_none(),
        "unknown field kept: {}",
        res.body
    );
    let got = env
        .raw("GET", &format!("{}/warned", cms(&env.ns)), None, vec![])
        .await;
    assert!(
        got.json().get("foo").is_none(),
        "unknown field stored: {}",
        got.body
    );

    let path = format!("{}?fieldValidation=Strict", cms(&env.ns));
    let res = env.raw("POST", &path, JSON, data("strict")).await;
    let msg = r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "foo""#;
    failure(&res, 400, "BadRequest", msg);

    let path = format!("{}?fieldValidation=Ignore", cms(&env.ns));
    let res = env.raw("POST", &path, JSON, data("ignored")).await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(res.header("warning"), "", "{res:?}");
}

#[tokio::test]
async fn oversized_body_is_413() {
    let env = TestEnv::new("bad-big").await;
    // kube-apiserver reads up to limit+1 bytes before it answers and drains
    // a short remainder, so a client that writes the whole body reads the 413
    // (rather than a broken pipe).
    let big = "x".repeat(3 * 1024 * 1024 + 16);
    let data = body(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"a": big}}),
    );
    let res = env.raw("POST", &cms(&env.ns), JSON, data).await;
    failure(
        &res,
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    );
    let res = env
        .raw("GET", &format!("{}/big", cms(&env.ns)), None, vec![])
        .await;
    assert_eq!(res.status, 404, "nothing was stored: {res:?}");
}

#[tokio::test]
async fn invalid_names_are_422() {
    let env = TestEnv::new("bad-name").await;
    let res = env
        .raw("POST", &cms(&env.ns), JSON, cm_body("Bad_Name"))
        .await;
    let cause = format!(r#"Invalid value: "Bad_Name": {SUBDOMAIN_RULE}"#);
    let v = failure(
        &res,
        422,
        "Invalid",
        &format!(r#"ConfigMap "Bad_Name" is invalid: metadata.name: {cause}"#),
    );
    let want = json!({
        "name": "Bad_Name", "kind": "ConfigMap",
        "causes": [{"reason": "FieldValueInvalid", "message": cause, "field": "metadata.name"}]
    });
    assert_eq!(v["details"], want);

    let dep = json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "Bad_Name"},
        "spec": {
            "selector": {"matchLabels": {"app": "x"}},
            "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        }
    });
    let path = format!("/apis/apps/v1/namespaces/{}/deployments", env.ns);
    let res = env.raw("POST", &path, JSON, body(dep)).await;
    let msg = format!(r#"Deployment.apps "Bad_Name" is invalid: metadata.name: {cause}"#);
    let v = failure(&res, 422, "Invalid", &msg);
    assert_eq!(
        (
            v["details"]["group"].as_str(),
            v["details"]["kind"].as_str()
        ),
        (Some("apps"), Some("Deployment"))
    );

    // Namespaces are RFC 1123 labels.
    let ns =
        body(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "Bad_Name"}}));
    let res = env.raw("POST", "/api/v1/namespaces", JSON, ns).await;
    let msg = format!(
        r#"Namespace "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": {LABEL_RULE}"#
    );
    failure(&res, 422, "Invalid", &msg);

    // Neither name nor generateName.
    let res = env
        .raw(
            "POST",
            &cms(&env.ns),
            JSON,
            body(json!({"apiVersion": "v1", "kind": "ConfigMap"})),
        )
        .await;
    let cause = "Required value: name or generateName is required";
    let v = failure(
        &res,
        422,
        "Invalid",
        &format!(r#"ConfigMap "" is invalid: metadata.name: {cause}"#),
    );
    let want = json!({"kind": "ConfigMap", "causes": [{"reason": "FieldValueRequired", "message": cause, "field": "metadata.name"}]});
    assert_eq!(v["details"], want);
}

#[tokio::test]
async fn create_in_missing_namespace_is_404() {
    let env = TestEnv::new("bad-nons").await;
    let nope = format!("nope-{}", suffix());
    let res = env.raw("POST", &cms(&nope), JSON, cm_body("x")).await;
    let v = failure(
        &res,
        404,
        "NotFound",
        &format!(r#"namespaces "{nope}" not found"#),
    );
    assert_eq!(v["details"], json!({"name": nope, "kind": "namespaces"}));
}

#[tokio::test]
async fn unknown_resources_are_404() {
    let env = TestEnv::new("bad-res").await;
    // Inside a served group/version: a Status from the API's router.
    for path in [
        format!("/api/v1/namespaces/{}/widgets", env.ns),
        format!("/apis/apps/v1/namespaces/{}/widgets", env.ns),
        "/api/v1/widgets".to_string(),
    ] {
        let res = env.raw("GET", &path, None, vec![]).await;
        let v = failure(
            &res,
            404,
            "NotFound",
            "the server could not find the requested resource",
        );
        assert_eq!(v["details"], json!({}), "{path}");
    }
    // Outside any served group: the last handler's plain Go 404.
    for path in [
        "/apis/nope.example.com/v1/widgets",
        "/apis/nope.example.com",
        "/nothing/here",
    ] {
        let res = env.raw("GET", path, None, vec![]).await;
        assert_eq!(res.status, 404, "{path}: {res:?}");
        assert_eq!(
            res.header("content-type"),
            "text/plain; charset=utf-8",
            "{path}"
        );
        assert_eq!(res.body, "404 page not found\n", "{path}");
    }
}

#[tokio::test]
async fn post_to_cluster_wide_list_is_405() {
    let env = TestEnv::new("bad-405").await;
    for path in ["/api/v1/configmaps", "/apis/apps/v1/deployments"] {
        let res = env.raw("POST", path, JSON, cm_body("x")).await;
        let msg = "the server does not allow this method on the requested resource";
        let v = failure(&res, 405, "MethodNotAllowed", msg);
        assert_eq!(v["details"], json!({}), "{path}");
    }
}

/// Without credentials a request is kube's `system:anonymous`, whom the
/// bootstrap policy (`system:public-info-viewer`) lets reach the health
/// checks and `/version` and nothing else: 403 with kube's text, decided
/// before the body is read. A bearer token nobody issued is refused
/// everywhere with 401.
#[tokio::test]
async fn anonymous_requests_are_authorized_and_bad_credentials_are_401() {
    let env = TestEnv::new("bad-authn").await;
    let anon = env.client_with_token(None).await;
    for path in ["/healthz", "/readyz", "/livez"] {
        let res = common::raw_request(&anon, "GET", path, None, vec![]).await;
        assert_eq!((res.status, res.body.as_str()), (200, "ok"), "{path}");
    }
    let res = common::raw_request(&anon, "GET", "/version", None, vec![]).await;
    assert_eq!(res.status, 200, "{res:?}");
    assert!(res.json()["gitVersion"]
        .as_str()
        .unwrap()
        .starts_with("v1.34."));

    let ns_path = format!("/api/v1/namespaces/{}/configmaps", env.ns);
    let anonymous_refusals = [
        (
            "GET",
            "/api/v1/namespaces".to_string(),
            r#"namespaces is forbidden: User "system:anonymous" cannot list resource "namespaces" in API group "" at the cluster scope"#.to_string(),
        ),
        (
            "GET",
            ns_path.clone(),
            format!(r#"configmaps is forbidden: User "system:anonymous" cannot list resource "configmaps" in API group "" in the namespace "{}""#, env.ns),
        ),
        (
            "GET",
            "/apis".to_string(),
            r#"forbidden: User "system:anonymous" cannot get path "/apis""#.to_string(),
        ),
        (
            "GET",
            "/openapi/v2".to_string(),
            r#"forbidden: User "system:anonymous" cannot get path "/openapi/v2""#.to_string(),
        ),
    ];
    for (method, path, message) in &anonymous_refusals {
        let res = common::raw_request(&anon, method, path, None, vec![]).await;
        failure(&res, 403, "Forbidden", message);
    }
    let create_refused = format!(
        r#"configmaps is forbidden: User "system:anonymous" cannot create resource "configmaps" in API group "" in the namespace "{}""#,
        env.ns
    );
    let res = common::raw_request(&anon, "POST", &ns_path, JSON, cm_body("x")).await;
    failure(&res, 403, "Forbidden", &create_refused);
    // Authorization comes before the body is read: an oversized body from
    // nobody is a 403, not a 413 after buffering it.
    let oversized = vec![b' '; 4 * 1024 * 1024];
    let res = common::raw_request(&anon, "POST", &ns_path, JSON, oversized).await;
    failure(&res, 403, "Forbidden", &create_refused);

    let bogus = format!("bogus-{}", suffix());
    let bad_token = env.client_with_token(Some(&bogus)).await;
    for path in ["/api/v1/namespaces", "/healthz", "/version"] {
        let res = common::raw_request(&bad_token, "GET", path, None, vec![]).await;
        failure(&res, 401, "Unauthorized", "Unauthorized");
    }
}

#[tokio::test]
async fn unsupported_content_type_is_415() {
    let env = TestEnv::new("bad-ct").await;
    // CBOR is served too (kube lists it once its CBOR serializer is enabled).
    let msg = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor";
    for ct in ["text/plain", "application/xml"] {
        let res = env.raw("POST", &cms(&env.ns), Some(ct), cm_body("x")).await;
        failure(&res, 415, "UnsupportedMediaType", msg);
    }
    let res = env
        .raw("POST", &cms(&env.ns), JSON, cm_body("target"))
        .await;
    assert_eq!(res.status, 201, "{res:?}");
    let res = env
        .raw(
            "PUT",
            &format!("{}/target", cms(&env.ns)),
            Some("text/plain"),
            cm_body("target"),
        )
        .await;
    failure(&res, 415, "UnsupportedMediaType", msg);

    // YAML bodies are accepted.
    let yaml =
        b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  k: v\n".to_vec();
    let res = env
        .raw("POST", &cms(&env.ns), Some("application/yaml"), yaml)
        .await;
    assert_eq!(res.status, 201, "{res:?}");
    assert_eq!(res.json()["data"], json!({"k": "v"}));
}

#[tokio::test]
async fn namespace_and_name_mismatches_are_400() {
    let env = TestEnv::new("bad-mis").await;
    let ns_msg =
        "the namespace of the provided object does not match the namespace sent on the request";
    let other = body(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "elsewhere"}}),
    );
    let res = env.raw("POST", &cms(&env.ns), JSON, other.clone()).await;
    failure(&res, 400, "BadRequest", ns_msg);

    let res = env.raw("POST", &cms(&env.ns), JSON, cm_body("x")).await;
    assert_eq!(res.status, 201, "{res:?}");
    let item = format!("{}/x", cms(&env.ns));
    let res = env.raw("PUT", &item, JSON, other).await;
    failure(&res, 400, "BadRequest", ns_msg);

    let res = env.raw("PUT", &item, JSON, cm_body("y")).await;
    failure(
        &res,
        400,
        "BadRequest",
        "the name of the object (y) does not match the name on the URL (x)",
    );

    // The namespace in the body may be left out, or equal the URL's.
    let same = body(
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": env.ns}}),
    );
    let res = env.raw("PUT", &item, JSON, same).await;
    assert_eq!(res.status, 200, "{res:?}");

    // PUT never creates a configmap.
    let res = env
        .raw(
            "PUT",
            &format!("{}/absent", cms(&env.ns)),
            JSON,
            cm_body("absent"),
        )
        .await;
    let v = failure(&res, 404, "NotFound", r#"configmaps "absent" not found"#);
    assert_eq!(
        v["details"],
        json!({"name": "absent", "kind": "configmaps"})
    );
}

/// `WithRequestDeadline`: a `timeout` that is no Go duration is a 400 on
/// any request that is not long-running; a valid one is accepted.
#[tokio::test]
async fn invalid_timeout_parameter_is_bad_request() {
    let env = TestEnv::new("bad-timeout").await;
    let cases = [
        ("invalid", "time: invalid duration \"invalid\""),
        ("5", "time: missing unit in duration \"5\""),
        ("1d", "time: unknown unit \"d\" in duration \"1d\""),
    ];
    for (value, error) in cases {
        let message = format!("invalid timeout specified in the request URL - {error}");
        let list = format!("{}?timeout={value}", cms(&env.ns));
        failure(
            &env.raw("GET", &list, None, Vec::new()).await,
            400,
            "BadRequest",
            &message,
        );
        let res = env.raw("POST", &list, JSON, cm_body("t")).await;
        failure(&res, 400, "BadRequest", &message);
    }
    let res = env
        .raw(
            "GET",
            &format!("{}?timeout=30s", cms(&env.ns)),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 200, "{res:?}");
    let res = env
        .raw("GET", "/version?timeout=1h30m", None, Vec::new())
        .await;
    assert_eq!(res.status, 200, "{res:?}");
}

/// `WithRequestDeadline` + `WithTimeoutForNonLongRunningRequests`: a
/// request whose `timeout` has passed before its handler could answer gets
/// the timeout filter's 504 (`Status` JSON without `kind`, sniffed as
/// `text/plain` by Go), and a create refused so is not applied; watches are
/// exempt. kube-rs reads the `Status`; kubectl (client-go cannot decode a
/// `text/plain` body) reports its generic 504 text.
#[tokio::test]
async fn a_request_past_its_deadline_is_a_gateway_timeout() {
    let env = TestEnv::new("deadline").await;
    // kube-rs retries 504s (15 times, backing off to minutes) by default:
    // this client answers the first one.
    let mut config = common::config_from(&env.kubeconfig).await;
    config.default_retry = false;
    let client = kube::Client::try_from(config).unwrap();
    let expected = concat!(
        r#"{"metadata":{},"status":"Failure","#,
        r#""message":"Timeout: request did not complete within the allotted timeout","#,
        r#""reason":"Timeout","details":{},"code":504}"#,
        "\n"
    );
    let list = format!("{}?timeout=1ns", cms(&env.ns));
    let res = common::raw_request(&client, "GET", &list, None, Vec::new()).await;
    assert_eq!(res.status, 504, "{res:?}");
    assert_eq!(res.header("content-type"), "text/plain; charset=utf-8");
    assert_eq!(res.body, expected);
    let res = common::raw_request(&client, "POST", &list, JSON, cm_body("late")).await;
    assert_eq!(res.status, 504, "{res:?}");
    let res = env
        .raw("GET", &format!("{}/late", cms(&env.ns)), None, Vec::new())
        .await;
    assert_eq!(res.status, 404, "the timed-out create was applied: {res:?}");
    // A timeout beyond --request-timeout is capped to it, not refused.
    let res = env
        .raw(
            "GET",
            &format!("{}?timeout=10h", cms(&env.ns)),
            None,
            Vec::new(),
        )
        .await;
    assert_eq!(res.status, 200, "{res:?}");
    // Long-running requests are exempt.
    let watch = format!("{}?watch=true&timeout=1ns&timeoutSeconds=1", cms(&env.ns));
    let res = env.raw("GET", &watch, None, Vec::new()).await;
    assert_eq!(res.status, 200, "{res:?}");

    let request = http::Request::get(&list).body(Vec::new()).unwrap();
    let status = common::expect_api_error(
        client.request::<Value>(request).await,
        504,
        "Timeout",
        "Timeout: request did not complete within the allotted timeout",
    );
    assert!(status.is_failure(), "{status:?}");

    let (exit, _, stderr) = env.kubectl("1.33", &["get", "--raw", &list]);
    assert!(!exit.success());
    assert!(
        stderr.contains("Error from server (Timeout): the server was unable to return a response in the time allotted, but may still be processing the request"),
        "{stderr}"
    );
}

/// Invented groups, resources and subresources, with or without
/// credentials, make no `/metrics` series: label values come only from what
/// the server serves (kube instruments its installed routes only).
#[tokio::test]
async fn invented_paths_make_no_metrics_series() {
    let env = TestEnv::new("bad-metrics").await;
    let anonymous = env.client_with_token(None).await;
    for n in 0..40 {
        let invented = format!("/apis/made{n}.example.com/v1/things{n}");
        let res = common::raw_request(&anonymous, "GET", &invented, None, Vec::new()).await;
        assert_eq!(res.status, 403, "{res:?}");
        let res = env.raw("GET", &invented, None, Vec::new()).await;
        assert_eq!(res.status, 404, "{res:?}");
        let bogus = format!("{}/c/bogus{n}", cms(&env.ns));
        env.raw("GET", &bogus, None, Vec::new()).await;
    }
    let metrics = env.raw("GET", "/metrics", None, Vec::new()).await;
    assert_eq!(metrics.status, 200);
    for invented in ["made0.example.com", "things1", "bogus2"] {
        assert!(!metrics.body.contains(invented), "{invented} in /metrics");
    }
}
