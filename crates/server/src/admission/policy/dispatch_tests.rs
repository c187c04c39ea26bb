use super::*;
use crate::admission::attributes::{GroupVersionName, Operation};
use serde_json::json;

async fn store() -> ObjectStore {
    use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    Store::open(backend, crate::object::ObjectCodec)
        .await
        .expect("store")
}

fn namespace_create(name: &str) -> Attributes<'_> {
    Attributes {
        operation: Operation::Create,
        kind: GroupVersionName::new("", "v1", "Namespace"),
        resource: GroupVersionName::new("", "v1", "namespaces"),
        subresource: "",
        name,
        namespace: name,
        old_object: None,
        options: Value::Null,
        dry_run: false,
        user: None,
    }
}

fn compiled(policy: Value, bindings: &[Value]) -> Compiled {
    let policy = Arc::new(compile::policy(&policy).expect("compiles"));
    Compiled {
        stamp: Vec::new(),
        hooks: vec![Hook {
            key: String::new(),
            policy,
            bindings: bindings
                .iter()
                .map(|binding| Arc::new(compile::binding(binding)))
                .collect(),
        }],
    }
}

fn namespaces_policy(extra: Value) -> Value {
    let mut spec = json!({
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["namespaces"]}]},
        "validations": [{"expression": "object.metadata.name != 'blocked'", "reason": "Unauthorized"}],
    });
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"metadata": {"name": "ns-policy"}, "spec": spec})
}

fn binding(name: &str, actions: Value, extra: Value) -> Value {
    let mut spec = json!({"policyName": "ns-policy", "validationActions": actions});
    if let (Some(spec), Some(extra)) = (spec.as_object_mut(), extra.as_object()) {
        spec.extend(extra.clone());
    }
    json!({"metadata": {"name": name}, "spec": spec})
}

#[tokio::test]
async fn the_first_deny_answers_with_the_validations_reason_and_warn_adds_kubes_warning() {
    let store = store().await;
    let compiled = compiled(
        namespaces_policy(json!({})),
        &[
            binding("warn", json!(["Warn"]), json!({})),
            binding("deny", json!(["Deny", "Audit"]), json!({})),
        ],
    );
    let object = json!({"metadata": {"name": "blocked"}});
    let attributes = namespace_create("blocked");
    let caller = Caller::internal();
    let status = validate(
        &store,
        None,
        &compiled,
        &attributes,
        Some(&object),
        &caller,
        None,
    )
    .expect_err("denied");
    let message = "ValidatingAdmissionPolicy 'ns-policy' with binding 'deny' denied request: failed expression: object.metadata.name != 'blocked'";
    assert_eq!((status.code, status.reason), (401, "Unauthorized"));
    assert_eq!(
        status.message,
        format!("namespaces \"blocked\" is forbidden: {message}")
    );
    let details = status.details.expect("details");
    assert_eq!(
        (details.name.as_str(), details.kind.as_str()),
        ("blocked", "namespaces")
    );
    assert_eq!(details.causes[0].message, message);
    assert_eq!(
        caller.take_warnings(),
        vec!["299 - \"Validation failed for ValidatingAdmissionPolicy 'ns-policy' with binding 'warn': failed expression: object.metadata.name != 'blocked'\"".to_string()]
    );
    let allowed = json!({"metadata": {"name": "fine"}});
    let attributes = namespace_create("fine");
    assert!(validate(
        &store,
        None,
        &compiled,
        &attributes,
        Some(&allowed),
        &caller,
        None
    )
    .is_ok());
}

#[tokio::test]
async fn params_that_cannot_be_found_are_configuration_errors() {
    let store = store().await;
    let object = json!({"metadata": {"name": "blocked"}});
    let attributes = namespace_create("blocked");
    let caller = Caller::internal();
    let with_param_kind =
        namespaces_policy(json!({"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"}}));
    let param_ref = json!({"paramRef": {"name": "limits", "parameterNotFoundAction": "Deny"}});
    // No registry: the kind is not known (kube: no informer for it).
    let unknown = compiled(
        with_param_kind.clone(),
        &[binding("b", json!(["Deny"]), param_ref.clone())],
    );
    let status = validate(
        &store,
        None,
        &unknown,
        &attributes,
        Some(&object),
        &caller,
        None,
    )
    .expect_err("denied");
    assert_eq!((status.code, status.reason), (422, "Invalid"));
    assert!(status.message.ends_with(
        "ValidatingAdmissionPolicy 'ns-policy' with binding 'b' denied request: failed to configure binding: paramKind kind `/v1, Kind=ConfigMap` not known"
    ), "{}", status.message);
    // A namespaced param for a cluster-scoped request needs a namespace.
    let registry = LiveRegistry::new(crate::registry::Registry::new(
        crate::registry::builtin_resources(),
    ));
    let status = validate(
        &store,
        Some(&registry),
        &unknown,
        &attributes,
        Some(&object),
        &caller,
        None,
    )
    .expect_err("denied");
    assert!(status.message.ends_with(
        "failed to configure binding: cannot use namespaced paramRef in policy binding that matches cluster-scoped resources"
    ), "{}", status.message);
    // Missing params: Deny refuses, Allow admits.
    let in_default = json!({"paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"}});
    let denying = compiled(
        with_param_kind.clone(),
        &[binding("b", json!(["Deny"]), in_default)],
    );
    let status = validate(
        &store,
        Some(&registry),
        &denying,
        &attributes,
        Some(&object),
        &caller,
        None,
    )
    .expect_err("denied");
    assert!(status.message.ends_with(
        "failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    ), "{}", status.message);
    let allow = json!({"paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Allow"}});
    let allowing = compiled(with_param_kind, &[binding("b", json!(["Deny"]), allow)]);
    assert!(validate(
        &store,
        Some(&registry),
        &allowing,
        &attributes,
        Some(&object),
        &caller,
        None
    )
    .is_ok());
}

#[test]
fn group_version_kinds_print_as_go_prints_them() {
    assert_eq!(gvk_string("v1", "ConfigMap"), "/v1, Kind=ConfigMap");
    assert_eq!(
        gvk_string("apps/v1", "Deployment"),
        "apps/v1, Kind=Deployment"
    );
}

#[tokio::test]
async fn deeply_nested_expressions_are_evaluated_on_a_large_stack() {
    let store = store().await;
    let nested = format!("{}1{}.size() == 1", "[".repeat(80), "]".repeat(80));
    let policy = json!({"metadata": {"name": "ns-policy"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["namespaces"]}]},
        "validations": [{"expression": nested}],
    }});
    let compiled = compiled(policy, &[binding("deny", json!(["Deny"]), json!({}))]);
    assert!(compiled.hooks[0].policy.depth > crate::cel_env::SHALLOW_DEPTH);
    let object = json!({"metadata": {"name": "deep"}});
    let attributes = namespace_create("deep");
    let caller = Caller::internal();
    assert!(validate(
        &store,
        None,
        &compiled,
        &attributes,
        Some(&object),
        &caller,
        None
    )
    .is_ok());
}

#[tokio::test]
async fn audit_bindings_and_audit_annotations_become_kubes_audit_annotations() {
    let store = store().await;
    let compiled = compiled(
        namespaces_policy(json!({
            "validations": [
                {"expression": "true"},
                {"expression": "object.metadata.name != 'blocked'", "message": "no <blocked> & co"},
            ],
            "auditAnnotations": [
                {"key": "name", "valueExpression": "'ns ' + object.metadata.name"},
                {"key": "nothing", "valueExpression": "null"},
                {"key": "blank", "valueExpression": "'  '"},
            ],
        })),
        &[
            binding("first", json!(["Audit", "Warn"]), json!({})),
            binding("second", json!(["Audit"]), json!({})),
        ],
    );
    let object = json!({"metadata": {"name": "blocked"}});
    let attributes = namespace_create("blocked");
    let caller = Caller::internal();
    validate(
        &store,
        None,
        &compiled,
        &attributes,
        Some(&object),
        &caller,
        None,
    )
    .expect("audit admits");
    assert_eq!(
        caller.take_audit_annotations(),
        vec![
            (
                "validation.policy.admission.k8s.io/validation_failure".to_string(),
                r#"[{"message":"no \u003cblocked\u003e \u0026 co","policy":"ns-policy","binding":"first","expressionIndex":1,"validationActions":["Audit","Warn"]}]"#.to_string(),
            ),
            // Both bindings produced the same value: published once.
            ("ns-policy/name".to_string(), "ns blocked".to_string()),
        ]
    );
}

#[tokio::test]
async fn an_audit_annotation_of_another_type_denies_the_request() {
    let store = store().await;
    let compiled = compiled(
        namespaces_policy(json!({
            "validations": [],
            "auditAnnotations": [{"key": "count", "valueExpression": "1"}],
        })),
        &[binding("audit", json!(["Audit"]), json!({}))],
    );
    let object = json!({"metadata": {"name": "a"}});
    let attributes = namespace_create("a");
    let status = validate(
        &store,
        None,
        &compiled,
        &attributes,
        Some(&object),
        &Caller::internal(),
        None,
    )
    .expect_err("denied");
    assert!(
        status.message.ends_with("ValidatingAdmissionPolicy 'ns-policy' with binding 'audit' denied request: valueExpression '1' resulted in unsupported return type: int. Return type must be either string or null."),
        "{}",
        status.message
    );
}

#[test]
fn validation_failure_values_are_gos_json() {
    let bound = compile::binding(&binding("b", json!(["Audit"]), json!({})));
    assert_eq!(
        validation_failure_value(&bound, 2, "a \"quoted\" <b>"),
        r#"[{"message":"a \"quoted\" \u003cb\u003e","policy":"ns-policy","binding":"b","expressionIndex":2,"validationActions":["Audit"]}]"#
    );
    assert_eq!(truncated("héllo".to_string(), 2), "h");
    assert_eq!(truncated("abc".to_string(), 5), "abc");
}
