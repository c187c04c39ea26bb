//! The write pipeline's typed check (`typed.rs`) and bounds
//! (`object::bounds`) through `Api::handle`: every write path refuses what a
//! typed client could not read back, as kube-apiserver words it, and a
//! randomized run of every patch type over every built-in kind stores only
//! objects the `k8s-openapi` structs decode.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::handler_tests::{admin, api};
use super::{Api, ApiRequest, ApiResponse};
use crate::registry::builtin_resources;
use crate::rng::Rng;
use crate::route::Method;

async fn send(
    api: &Arc<Api>,
    method: Method,
    path: &str,
    content_type: &str,
    body: Vec<u8>,
) -> ApiResponse {
    let mut request = ApiRequest::new(method, path);
    request.user = admin();
    request.body = bytes::Bytes::from(body);
    if let Ok(value) = http::HeaderValue::from_str(content_type) {
        request.headers.insert(http::header::CONTENT_TYPE, value);
    }
    api.handle(request).await
}

async fn send_json(
    api: &Arc<Api>,
    method: Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> ApiResponse {
    send(
        api,
        method,
        path,
        content_type,
        serde_json::to_vec(body).expect("json"),
    )
    .await
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const POD_TEMPLATES: &str = "/api/v1/namespaces/default/podtemplates";

fn deployment(name: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        }
    })
}

async fn create(api: &Arc<Api>, collection: &str, object: Value) -> Value {
    let created = send_json(api, Method::Post, collection, "application/json", &object).await;
    assert_eq!(created.status, 201, "{}", created.body_json());
    created.body_json()
}

fn message(response: &ApiResponse) -> String {
    response.body_json()["message"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

/// The repro: 16 copies of `/data` into itself would have stored a 70 MB
/// ConfigMap; kube's `JSONPatchMaxCopyBytes` stops the patch with a 422.
#[tokio::test]
async fn json_patch_copies_are_bounded_as_kube_bounds_them() {
    let api = api().await;
    let before = create(
        &api,
        CONFIGMAPS,
        json!({"metadata": {"name": "c"}, "data": {"a": "x".repeat(1024)}}),
    )
    .await;
    let copies: Vec<Value> = (0..16)
        .map(|n| json!({"op": "copy", "from": "/data", "path": format!("/data/d{n}")}))
        .collect();
    let patched = send_json(
        &api,
        Method::Patch,
        &format!("{CONFIGMAPS}/c"),
        "application/json-patch+json",
        &Value::Array(copies),
    )
    .await;
    assert_eq!(patched.status, 422);
    assert_eq!(patched.body_json()["reason"], "Invalid");
    assert!(
        message(&patched)
            .starts_with("Unable to complete the copy, the accumulated size increase of copy is "),
        "{}",
        message(&patched)
    );
    let after = send(
        &api,
        Method::Get,
        &format!("{CONFIGMAPS}/c"),
        "",
        Vec::new(),
    )
    .await;
    assert_eq!(after.body_json(), before);
}

/// Each patch type, `/scale` and server-side apply refuse a result whose
/// types a typed client cannot decode, with kube's status and wording.
#[tokio::test]
async fn patched_objects_must_decode_as_the_typed_object() {
    let api = api().await;
    create(
        &api,
        CONFIGMAPS,
        json!({"metadata": {"name": "c"}, "data": {"a": "b"}}),
    )
    .await;
    create(&api, DEPLOYMENTS, deployment("d")).await;
    let huge = 1_099_511_627_776u64;
    let cases: Vec<(String, &str, Value, u16, &str)> = vec![
        (format!("{CONFIGMAPS}/c"), "application/json-patch+json",
         json!([{"op": "add", "path": "/data/x", "value": {"y": 1}}]), 422,
         "json: cannot unmarshal object into Go struct field ConfigMap.data of type string"),
        (format!("{CONFIGMAPS}/c"), "application/merge-patch+json",
         json!({"data": {"x": 5}}), 422,
         "json: cannot unmarshal number into Go struct field ConfigMap.data of type string"),
        (format!("{CONFIGMAPS}/c"), "application/strategic-merge-patch+json",
         json!({"data": {"x": {"y": 1}}}), 422,
         ": \"map[data:map[x:map[y:1]]]\": unrecognized type: string"),
        (format!("{CONFIGMAPS}/c"), "application/merge-patch+json",
         json!({"metadata": {"creationTimestamp": "yesterday"}}), 422,
         "parsing time \"yesterday\""),
        (format!("{DEPLOYMENTS}/d"), "application/merge-patch+json",
         json!({"spec": {"replicas": huge}}), 422,
         "json: cannot unmarshal number 1099511627776 into Go struct field DeploymentSpec.spec.replicas of type int32"),
        (format!("{DEPLOYMENTS}/d"), "application/strategic-merge-patch+json",
         json!({"spec": {"replicas": huge}}), 422, "cannot convert int64 to int32"),
        (format!("{DEPLOYMENTS}/d"), "application/strategic-merge-patch+json",
         json!({"spec": {"template": {"spec": {"containers": {"a": 1}}}}}), 422, ""),
        (format!("{DEPLOYMENTS}/d/scale"), "application/merge-patch+json",
         json!({"spec": {"replicas": huge}}), 422,
         "into Go struct field ScaleSpec.spec.replicas of type int32"),
        (format!("{DEPLOYMENTS}/d/status"), "application/merge-patch+json",
         json!({"status": {"replicas": "three"}}), 422,
         "json: cannot unmarshal string into Go struct field DeploymentStatus.status.replicas of type int32"),
    ];
    for (path, content_type, patch, code, expected) in cases {
        let response = send_json(&api, Method::Patch, &path, content_type, &patch).await;
        let body = response.body_json();
        assert_eq!(response.status, code, "{content_type} {patch}: {body}");
        assert_eq!(body["reason"], "Invalid", "{body}");
        let text = message(&response);
        assert!(
            text.starts_with(" \"\" is invalid: patch: Invalid value: "),
            "{text}"
        );
        assert!(text.contains(expected), "{content_type} {patch}: {text}");
        assert_eq!(body["details"]["causes"][0]["field"], "patch");
    }
    // Nothing was stored.
    let stored = send(
        &api,
        Method::Get,
        &format!("{DEPLOYMENTS}/d"),
        "",
        Vec::new(),
    )
    .await
    .body_json();
    assert_eq!(stored["metadata"]["generation"], 1);
    assert!(stored["spec"]["replicas"].is_u64());

    // Server-side apply: kube fails converting the merged object (a 500
    // with the converter's text, `structuredMergeManager.Apply`).
    let config = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: d, namespace: default}}\nspec:\n  replicas: {huge}\n"
    );
    for path in [format!("{DEPLOYMENTS}/d"), format!("{DEPLOYMENTS}/d/scale")] {
        let config = if path.ends_with("/scale") {
            format!("apiVersion: autoscaling/v1\nkind: Scale\nmetadata: {{name: d, namespace: default}}\nspec:\n  replicas: {huge}\n")
        } else {
            config.clone()
        };
        let applied = send(
            &api,
            Method::Patch,
            &format!("{path}?fieldManager=t&force=true"),
            "application/apply-patch+yaml",
            config.into_bytes(),
        )
        .await;
        assert_eq!(applied.status, 500, "{}", applied.body_json());
        assert_eq!(applied.body_json().get("reason"), None);
        assert!(
            message(&applied).starts_with("failed to convert new object (")
                && message(&applied).ends_with("cannot convert int64 to int32"),
            "{}",
            message(&applied)
        );
    }
}

/// An object larger than kube-on-etcd stores is refused as etcd refuses
/// it, on every backend; the limit is the stored object's, not the body's.
/// (A PodTemplate with long container args: kube's validation bounds a
/// ConfigMap's data at 1 MiB, below etcd's limit, but not a pod's args.)
#[tokio::test]
async fn objects_larger_than_one_etcd_request_are_refused() {
    let api = api().await;
    let template = |length: usize| {
        json!({"metadata": {"name": "big"}, "template": {"spec": {"containers": [
            {"name": "c", "image": "nginx", "args": ["y".repeat(length)]}]}}})
    };
    let refused = send_json(
        &api,
        Method::Post,
        POD_TEMPLATES,
        "application/json",
        &template(1_600_000),
    )
    .await;
    assert_eq!(refused.status, 500);
    assert_eq!(message(&refused), "etcdserver: request is too large");
    assert_eq!(refused.body_json().get("reason"), None);
    let created = create(&api, POD_TEMPLATES, template(1_500_000)).await;
    let grow = json!({"metadata": {"annotations": {"x": "z".repeat(100_000)}}});
    let grown = send_json(
        &api,
        Method::Patch,
        &format!("{POD_TEMPLATES}/big"),
        "application/merge-patch+json",
        &grow,
    )
    .await;
    assert_eq!(
        (grown.status, message(&grown)),
        (500, "etcdserver: request is too large".to_string())
    );
    let after = send(
        &api,
        Method::Get,
        &format!("{POD_TEMPLATES}/big"),
        "",
        Vec::new(),
    )
    .await
    .body_json();
    assert_eq!(
        after["metadata"]["resourceVersion"],
        created["metadata"]["resourceVersion"]
    );
}

/// CBOR bodies get the type check JSON bodies get; a tag chain is a 400,
/// not a stack overflow.
#[tokio::test]
async fn cbor_bodies_are_checked_and_bounded() {
    let api = api().await;
    let object = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"d0": {"a": "b"}}});
    let refused = send(
        &api,
        Method::Post,
        CONFIGMAPS,
        "application/cbor",
        crate::cbor::encode(&object),
    )
    .await;
    assert_eq!(refused.status, 400, "{}", refused.body_json());
    assert_eq!(
        message(&refused),
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct field ConfigMap.data of type string"
    );
    let bomb = vec![0xd5u8; 2 * 1024 * 1024];
    let refused = send(&api, Method::Post, CONFIGMAPS, "application/cbor", bomb).await;
    assert_eq!(refused.status, 400);
    assert!(
        message(&refused).contains("cbor: exceeded max nested level 64"),
        "{}",
        message(&refused)
    );
}

// ---------------------------------------------------------------------------
// Random patches of every type over every built-in kind
// ---------------------------------------------------------------------------

/// Decodes `json` with the `k8s-openapi` struct of `api_version`/`kind`
/// (what kube-rs's `Api<K>` does with every object it reads), or `None`
/// for a kind it has no struct for.
macro_rules! typed_kinds {
    ($($ty:ty),* $(,)?) => {
        fn decode_typed(api_version: &str, kind: &str, json: &[u8]) -> Option<Result<(), String>> {
            use k8s_openapi::Resource;
            $(
                if api_version == <$ty>::API_VERSION && kind == <$ty>::KIND {
                    return Some(serde_json::from_slice::<$ty>(json).map(|_| ()).map_err(|error| error.to_string()));
                }
            )*
            None
        }
    };
}

typed_kinds!(
    k8s_openapi::api::core::v1::ConfigMap,
    k8s_openapi::api::core::v1::Endpoints,
    k8s_openapi::api::core::v1::Event,
    k8s_openapi::api::core::v1::LimitRange,
    k8s_openapi::api::core::v1::Namespace,
    k8s_openapi::api::core::v1::Node,
    k8s_openapi::api::core::v1::PersistentVolumeClaim,
    k8s_openapi::api::core::v1::PersistentVolume,
    k8s_openapi::api::core::v1::Pod,
    k8s_openapi::api::core::v1::PodTemplate,
    k8s_openapi::api::core::v1::ReplicationController,
    k8s_openapi::api::core::v1::ResourceQuota,
    k8s_openapi::api::core::v1::Secret,
    k8s_openapi::api::core::v1::ServiceAccount,
    k8s_openapi::api::core::v1::Service,
    k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService,
    k8s_openapi::api::apps::v1::ControllerRevision,
    k8s_openapi::api::apps::v1::DaemonSet,
    k8s_openapi::api::apps::v1::Deployment,
    k8s_openapi::api::apps::v1::ReplicaSet,
    k8s_openapi::api::apps::v1::StatefulSet,
    k8s_openapi::api::events::v1::Event,
    k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler,
    k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler,
    k8s_openapi::api::batch::v1::CronJob,
    k8s_openapi::api::batch::v1::Job,
    k8s_openapi::api::certificates::v1::CertificateSigningRequest,
    k8s_openapi::api::networking::v1::IngressClass,
    k8s_openapi::api::networking::v1::Ingress,
    k8s_openapi::api::networking::v1::IPAddress,
    k8s_openapi::api::networking::v1::NetworkPolicy,
    k8s_openapi::api::networking::v1::ServiceCIDR,
    k8s_openapi::api::policy::v1::PodDisruptionBudget,
    k8s_openapi::api::rbac::v1::ClusterRoleBinding,
    k8s_openapi::api::rbac::v1::ClusterRole,
    k8s_openapi::api::rbac::v1::RoleBinding,
    k8s_openapi::api::rbac::v1::Role,
    k8s_openapi::api::storage::v1::CSIDriver,
    k8s_openapi::api::storage::v1::CSINode,
    k8s_openapi::api::storage::v1::CSIStorageCapacity,
    k8s_openapi::api::storage::v1::StorageClass,
    k8s_openapi::api::storage::v1::VolumeAttachment,
    k8s_openapi::api::storage::v1::VolumeAttributesClass,
    k8s_openapi::api::admissionregistration::v1::MutatingWebhookConfiguration,
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy,
    k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding,
    k8s_openapi::api::admissionregistration::v1::ValidatingWebhookConfiguration,
    k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    k8s_openapi::api::scheduling::v1::PriorityClass,
    k8s_openapi::api::coordination::v1::Lease,
    k8s_openapi::api::node::v1::RuntimeClass,
    k8s_openapi::api::discovery::v1::EndpointSlice,
    k8s_openapi::api::resource::v1::DeviceClass,
    k8s_openapi::api::resource::v1::ResourceClaim,
    k8s_openapi::api::resource::v1::ResourceClaimTemplate,
    k8s_openapi::api::resource::v1::ResourceSlice,
    k8s_openapi::api::flowcontrol::v1::FlowSchema,
    k8s_openapi::api::flowcontrol::v1::PriorityLevelConfiguration,
);

/// The schema of a property, `$ref` followed.
fn resolve<'a>(api: &'a Api, schema: &'a Value) -> &'a Value {
    let mut schema = schema;
    for _ in 0..8 {
        let reference = schema
            .get("$ref")
            .or_else(|| {
                schema
                    .get("allOf")
                    .and_then(|all| all.get(0))
                    .and_then(|first| first.get("$ref"))
            })
            .and_then(Value::as_str);
        let Some(name) = reference.and_then(|reference| reference.strip_prefix("#/definitions/"))
        else {
            return schema;
        };
        match api.openapi.definition(name) {
            Ok(Some(definition)) => schema = definition,
            _ => return schema,
        }
    }
    schema
}

/// A path into the kind's schema, chosen at random: property names,
/// `0` for list items, a made-up key for map values.
fn random_path(api: &Api, root: &Value, rng: &mut Rng) -> Vec<String> {
    let mut path = Vec::new();
    let mut schema = resolve(api, root);
    for _ in 0..8 {
        if path.len() >= 2 && rng.chance(30) {
            break;
        }
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            let names: Vec<&String> = properties
                .keys()
                .filter(|name| !matches!(name.as_str(), "apiVersion" | "kind"))
                .collect();
            if names.is_empty() {
                break;
            }
            let name = *rng.pick(&names);
            if name == "metadata" && !rng.chance(20) {
                continue;
            }
            path.push(name.clone());
            schema = resolve(api, &properties[name]);
        } else if let Some(items) = schema.get("items") {
            path.push("0".into());
            schema = resolve(api, items);
        } else if let Some(values) = schema.get("additionalProperties") {
            path.push(format!("k{}", rng.below(3)));
            schema = resolve(api, values);
        } else {
            break;
        }
    }
    path
}

fn random_value(rng: &mut Rng, depth: usize) -> Value {
    match rng.below(if depth > 2 { 9 } else { 11 }) {
        0 => json!("text"),
        1 => json!(""),
        2 => json!(rng.below(100)),
        3 => json!(1_099_511_627_776u64),
        4 => json!(-7),
        5 => json!(2.5),
        6 => json!(true),
        7 => Value::Null,
        8 => json!("2024-01-02T03:04:05Z"),
        9 => json!([random_value(rng, depth + 1)]),
        _ => {
            let mut map = Map::new();
            map.insert(format!("f{}", rng.below(3)), random_value(rng, depth + 1));
            map.insert("name".into(), json!("n"));
            Value::Object(map)
        }
    }
}

/// The nested object that sets `value` at `path` (list steps become
/// one-item lists).
fn nest(path: &[String], value: Value) -> Value {
    path.iter().rev().fold(value, |inner, step| {
        if step == "0" {
            Value::Array(vec![inner])
        } else {
            let mut map = Map::new();
            map.insert(step.clone(), inner);
            Value::Object(map)
        }
    })
}

fn pointer(path: &[String]) -> String {
    path.iter().map(|step| format!("/{step}")).collect()
}

/// What k8s-openapi refuses that kube-apiserver stores all the same: a
/// `metav1.Time` missing or `null` where the Go field has no `omitempty`
/// (a condition's `lastTransitionTime`, an event series'
/// `lastObservedTime`) or as a map value (a PodDisruptionBudget's
/// `disruptedPods`), and a `null` slice as a map value (a
/// CertificateSigningRequest's `extra`). Go decodes these as zero values,
/// which it encodes as `null`; what refuses some of them on a cluster is
/// validation (`ValidateConditions`, issue 17), not the decoder.
fn kube_stores_it_too(result: &Result<(), String>) -> bool {
    result.as_ref().is_err_and(|error| {
        error.starts_with("missing field `lastTransitionTime`")
            || error.starts_with("missing field `lastObservedTime`")
            || error.starts_with("invalid type: null, expected a timestamp string")
            || error.starts_with("invalid type: null, expected a sequence")
    })
}

/// The failures kube-apiserver itself answers with a 500 (plain errors of
/// the field manager and etcd).
fn kube_answers_500(message: &str) -> bool {
    message.starts_with("failed to convert new object (")
        || message.starts_with("failed to create typed patch object (")
        || message == "etcdserver: request is too large"
}

/// What kinds with required fields need beyond metadata to be created
/// (kube's validation refuses them without).
fn valid_spec(kind: &str) -> Option<Map<String, Value>> {
    let template = json!({"metadata": {"labels": {"app": "p"}},
                          "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    let selector = json!({"matchLabels": {"app": "p"}});
    let fields = match kind {
        "Pod" => json!({"spec": template["spec"]}),
        "PodTemplate" => json!({"template": template}),
        "ReplicationController" => json!({"spec": {"template": template}}),
        "Deployment" | "ReplicaSet" | "DaemonSet" | "StatefulSet" => {
            json!({"spec": {"selector": selector, "template": template}})
        }
        "Service" => json!({"spec": {"ports": [{"port": 80}]}}),
        "Job" => {
            let mut template = template;
            template["spec"]["restartPolicy"] = json!("Never");
            json!({"spec": {"template": template}})
        }
        "CronJob" => {
            let mut template = template;
            template["spec"]["restartPolicy"] = json!("Never");
            json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template}}}})
        }
        // The kinds whose validation needs more than their name.
        "PersistentVolumeClaim" => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}}}),
        "PersistentVolume" => json!({"spec": {"accessModes": ["ReadWriteOnce"],
            "capacity": {"storage": "1Gi"}, "hostPath": {"path": "/tmp/p"}}}),
        "StorageClass" => json!({"provisioner": "example.com/p"}),
        "VolumeAttachment" => json!({"spec": {"attacher": "example.com/p", "nodeName": "n",
            "source": {"persistentVolumeName": "pv"}}}),
        "IngressClass" => json!({"spec": {"controller": "example.com/p"}}),
        "Ingress" => json!({"spec": {"defaultBackend": {"service": {"name": "s",
            "port": {"number": 80}}}}}),
        "RuntimeClass" => json!({"handler": "runc"}),
        "EndpointSlice" => json!({"addressType": "IPv4"}),
        "ControllerRevision" => json!({"data": {}, "revision": 1}),
        "HorizontalPodAutoscaler" => json!({"spec": {"maxReplicas": 3,
            "scaleTargetRef": {"kind": "Deployment", "name": "d"}}}),
        // Both versions' names: core/v1 and events.k8s.io/v1 each drop the other's.
        "Event" => json!({"eventTime": "2026-01-01T00:00:00.000000Z", "type": "Normal",
            "reportingComponent": "example.com/c", "reportingController": "example.com/c",
            "reportingInstance": "i", "action": "Tested", "reason": "Testing"}),
        "FlowSchema" => json!({"spec": {"priorityLevelConfiguration": {"name": "p"}}}),
        "PriorityLevelConfiguration" => json!({"spec": {"type": "Limited",
            "limited": {"limitResponse": {"type": "Reject"}}}}),
        "ServiceCIDR" => json!({"spec": {"cidrs": ["10.96.0.0/24"]}}),
        "IPAddress" => json!({"spec": {"parentRef": {"resource": "services", "name": "s"}}}),
        "CSIStorageCapacity" => json!({"storageClassName": "fast"}),
        "VolumeAttributesClass" => json!({"driverName": "example.com/d", "parameters": {"a": "b"}}),
        "ResourceSlice" => json!({"spec": {"driver": "example.com", "nodeName": "n",
            "pool": {"name": "p", "resourceSliceCount": 1}}}),
        "APIService" => json!({"spec": {"group": "example.com", "version": "v1",
            "groupPriorityMinimum": 1, "versionPriority": 1}}),
        "ValidatingAdmissionPolicy" => json!({"spec": {"matchConstraints": {"resourceRules": [
            {"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps"]}]},
            "validations": [{"expression": "true"}]}}),
        "ValidatingAdmissionPolicyBinding" => json!({"spec": {"policyName": "p",
            "validationActions": ["Audit"]}}),
        _ => return None,
    };
    fields.as_object().cloned()
}

/// Every built-in kind, patched at random with every patch type: whatever
/// is stored decodes with the typed clients' structs, and nothing answers
/// a 5xx but the statuses kube itself answers with one.
#[tokio::test]
async fn random_patches_store_only_what_typed_clients_decode() {
    let api = api().await;
    let mut rng = Rng::new(0x5eed_0021);
    let mut kinds_patched = 0;
    let mut stored_writes = 0;
    for resource in builtin_resources()
        .iter()
        .filter(|resource| resource.verbs.contains(&"patch"))
    {
        let api_version = resource.api_version();
        let Ok(Some(schema)) =
            api.openapi
                .schema_for_kind(resource.group, resource.version, resource.kind)
        else {
            continue;
        };
        let base = if resource.group.is_empty() {
            "/api/v1".to_string()
        } else {
            format!("/apis/{api_version}")
        };
        let collection = if resource.namespaced {
            format!("{base}/namespaces/default/{}", resource.plural)
        } else {
            format!("{base}/{}", resource.plural)
        };
        // Kinds whose names are data (`ValidateIPAddressName`, `version.group`).
        let name = match resource.kind {
            "IPAddress" => "10.0.0.1".to_string(),
            "APIService" => "v1.example.com".to_string(),
            _ => format!("p-{}", resource.plural),
        };
        let mut object =
            json!({"apiVersion": api_version, "kind": resource.kind, "metadata": {"name": name}});
        if let (Some(map), Some(required)) = (object.as_object_mut(), valid_spec(resource.kind)) {
            map.extend(required);
        }
        let created = send_json(&api, Method::Post, &collection, "application/json", &object).await;
        if created.status != 201 {
            continue;
        }
        kinds_patched += 1;
        let path = format!("{collection}/{name}");
        let has_status = resource.subresource("status").is_some();
        for _ in 0..64 {
            let field = random_path(&api, schema, &mut rng);
            if field.is_empty() {
                continue;
            }
            let value = random_value(&mut rng, 0);
            let (content_type, body, query) = match rng.below(4) {
                0 => {
                    let operation = match rng.below(3) {
                        0 => json!({"op": "add", "path": pointer(&field), "value": value}),
                        1 => json!({"op": "replace", "path": pointer(&field), "value": value}),
                        _ => {
                            json!({"op": "copy", "from": pointer(&field[..1]), "path": pointer(&field)})
                        }
                    };
                    (
                        "application/json-patch+json",
                        serde_json::to_vec(&json!([operation])).expect("json"),
                        "",
                    )
                }
                1 => (
                    "application/merge-patch+json",
                    serde_json::to_vec(&nest(&field, value)).expect("json"),
                    "",
                ),
                2 => (
                    "application/strategic-merge-patch+json",
                    serde_json::to_vec(&nest(&field, value)).expect("json"),
                    "",
                ),
                _ => {
                    let mut config = nest(&field, value);
                    if let Some(map) = config.as_object_mut() {
                        map.insert("apiVersion".into(), json!(api_version));
                        map.insert("kind".into(), json!(resource.kind));
                        map.insert("metadata".into(), json!({"name": name}));
                    }
                    (
                        "application/apply-patch+yaml",
                        serde_json::to_vec(&config).expect("json"),
                        "?fieldManager=random&force=true",
                    )
                }
            };
            let target = if has_status && rng.chance(25) {
                format!("{path}/status{query}")
            } else {
                format!("{path}{query}")
            };
            let response = send(&api, Method::Patch, &target, content_type, body.clone()).await;
            if response.status >= 500 {
                let text = message(&response);
                // The strategic merge patch engine answers kube's own
                // plain-error 500s (`interpretStrategicMergePatchError`
                // passes most engine errors through).
                let strategic_engine = content_type == "application/strategic-merge-patch+json"
                    && response.body_json().get("reason").is_none();
                assert!(
                    kube_answers_500(&text) || strategic_engine,
                    "{} {content_type} {}: {} {text}",
                    resource.kind,
                    String::from_utf8_lossy(&body),
                    response.status
                );
                continue;
            }
            if response.status >= 300 {
                continue;
            }
            stored_writes += 1;
            let stored = send(&api, Method::Get, &path, "", Vec::new()).await;
            let json = serde_json::to_vec(&stored.body_json()).expect("json");
            let decoded = decode_typed(&api_version, resource.kind, &json);
            if let Some(Err(error)) = decoded.filter(|result| !kube_stores_it_too(result)) {
                panic!(
                    "{} patched with {content_type} {} stored what k8s-openapi cannot decode: {error}\n{}",
                    resource.kind,
                    String::from_utf8_lossy(&body),
                    String::from_utf8_lossy(&json)
                );
            }
        }
    }
    assert!(
        kinds_patched >= 50,
        "only {kinds_patched} kinds could be created"
    );
    assert!(stored_writes >= 500, "only {stored_writes} patches applied");
}
