//! The plugin on attributes and a store: namespaces' labels, pods,
//! pod controllers, updates and subresources.

use serde_json::{json, Value};

use super::checks::Pod;
use super::evaluation::{evaluate_pod, is_significant_pod_update};
use super::level::{policy_to_evaluate, Policy};

fn restricted_namespace() -> Value {
    json!({"pod-security.kubernetes.io/enforce": "restricted",
           "pod-security.kubernetes.io/warn": "baseline",
           "pod-security.kubernetes.io/warn-version": "v1.30",
           "pod-security.kubernetes.io/audit": "restricted"})
}

#[test]
fn enforce_denies_audit_annotates_and_warnings_are_left_off_denials() {
    let (policy, errors) = policy_to_evaluate(Some(&restricted_namespace()), Policy::default());
    assert!(errors.is_empty());
    let metadata = json!({});
    let spec = json!({"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]});
    let pod = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let decision = evaluate_pod(&policy, None, &pod, true);
    let denied = decision.denied.expect("denied");
    assert!(
        denied
            .starts_with(r#"violates PodSecurity "restricted:latest": privileged (container "c""#),
        "{denied}"
    );
    assert!(decision.warnings.is_empty());
    assert_eq!(
        decision.audit_annotations[0],
        ("enforce-policy".into(), "restricted:latest".into())
    );
    assert_eq!(decision.audit_annotations[1].0, "audit-violations");
    assert!(decision.audit_annotations[1]
        .1
        .starts_with(r#"would violate PodSecurity "restricted:latest": privileged"#));

    // A controller's template: warn and audit, never enforce.
    let decision = evaluate_pod(&policy, None, &pod, false);
    assert_eq!(decision.denied, None);
    assert_eq!(
        decision.warnings,
        vec![r#"would violate PodSecurity "baseline:v1.30": privileged (container "c" must not set securityContext.privileged=true)"#.to_string()]
    );
}

#[test]
fn unparsable_labels_are_recorded_for_audit() {
    let labels = json!({"pod-security.kubernetes.io/warn": "bogus"});
    let (policy, errors) = policy_to_evaluate(Some(&labels), Policy::default());
    let metadata = json!({});
    let spec = json!({"containers": [{"name": "c"}]});
    let pod = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let text = errors[0].to_string();
    let decision = evaluate_pod(&policy, Some(text.clone()), &pod, true);
    assert_eq!(decision.denied, None);
    assert_eq!(
        decision.audit_annotations[0],
        ("error".into(), format!("Failed to parse policy: {text}"))
    );
}

#[test]
fn only_container_changes_make_a_pod_update_significant() {
    let pod = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "x"}]}});
    let mut relabelled = pod.clone();
    relabelled["metadata"]["labels"]["a"] = json!("z");
    assert!(!is_significant_pod_update(&relabelled, &pod));
    let mut new_image = pod.clone();
    new_image["spec"]["containers"][0]["image"] = json!("y");
    assert!(is_significant_pod_update(&new_image, &pod));
    let mut ephemeral = pod.clone();
    ephemeral["spec"]["ephemeralContainers"] = json!([{"name": "debug", "image": "busybox"}]);
    assert!(is_significant_pod_update(&ephemeral, &pod));
    assert!(!is_significant_pod_update(&ephemeral, &ephemeral));
    let mut seccomp = pod.clone();
    seccomp["metadata"]["annotations"] =
        json!({"container.seccomp.security.alpha.kubernetes.io/c": "unconfined"});
    assert!(is_significant_pod_update(&seccomp, &pod));
}

#[tokio::test]
async fn a_stricter_enforce_label_reports_existing_pods_grouped_by_violation() {
    use crate::admission::attributes::{Attributes, GroupVersionName, Operation};
    use crate::object::{ObjectCodec, ObjectStore};
    use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};

    let backend: std::sync::Arc<dyn Backend> =
        std::sync::Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store: ObjectStore = Store::open(backend, ObjectCodec).await.expect("store");
    let privileged = |name: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "team"},
            "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}})
    };
    let host_network = json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "net", "namespace": "team"},
        "spec": {"hostNetwork": true, "containers": [{"name": "c", "image": "x"}]}});
    for pod in [
        privileged("b"),
        privileged("a"),
        privileged("c"),
        host_network,
    ] {
        let name = pod["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        store
            .commit(Txn::single(Op::Put {
                key: format!("/registry/pods/team/{name}"),
                value: serde_json::to_vec(&pod).expect("json").into(),
                expect: Expect::Any,
            }))
            .await
            .expect("commit");
    }
    let old = json!({"metadata": {"name": "team"}});
    let new = json!({"metadata": {"name": "team", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}});
    let attributes = Attributes {
        operation: Operation::Update,
        kind: GroupVersionName::new("", "v1", "Namespace"),
        resource: GroupVersionName::new("", "v1", "namespaces"),
        subresource: "",
        name: "team",
        namespace: "team",
        old_object: Some(&old),
        options: Value::Null,
        dry_run: false,
        user: None,
    };
    let warnings = super::namespace::validate(&store, &Default::default(), &attributes, &new)
        .expect("allowed");
    assert_eq!(
        warnings,
        vec![
            r#"existing pods in namespace "team" violate the new PodSecurity enforce level "baseline:latest""#.to_string(),
            "a (and 2 other pods): privileged".to_string(),
            "net: host namespaces".to_string(),
        ]
    );
    // Relaxing the level, or the same level again, checks nothing.
    let relaxed = json!({"metadata": {"name": "team", "labels": {"pod-security.kubernetes.io/enforce": "privileged"}}});
    let attributes = Attributes {
        old_object: Some(&new),
        ..attributes
    };
    assert!(
        super::namespace::validate(&store, &Default::default(), &attributes, &relaxed)
            .expect("allowed")
            .is_empty()
    );
    assert!(
        super::namespace::validate(&store, &Default::default(), &attributes, &new)
            .expect("allowed")
            .is_empty()
    );
}

/// `Validate` with a configuration: the default policy applies to
/// namespaces without labels; exempt namespaces, users and runtime classes
/// are allowed with the `exempt` audit annotation saying why
/// (`ExemptionReasonAnnotationKey`), and exempt runtime classes' pods are
/// left out when a namespace's new level is tried on its pods.
#[tokio::test]
async fn exemptions_allow_with_their_reason_and_defaults_apply() {
    use crate::admission::attributes::{Attributes, Caller, GroupVersionName, Operation};
    use crate::authn::UserInfo;
    use crate::object::{ObjectCodec, ObjectStore};
    use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};

    let backend: std::sync::Arc<dyn Backend> =
        std::sync::Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store: ObjectStore = Store::open(backend, ObjectCodec).await.expect("store");
    for (key, object) in [
        (
            "/registry/namespaces/team",
            json!({"metadata": {"name": "team"}}),
        ),
        (
            "/registry/namespaces/free",
            json!({"metadata": {"name": "free"}}),
        ),
        (
            "/registry/pods/team/sandboxed",
            json!({"metadata": {"name": "sandboxed", "namespace": "team"},
                   "spec": {"runtimeClassName": "gvisor", "hostNetwork": true, "containers": [{"name": "c"}]}}),
        ),
    ] {
        store
            .commit(Txn::single(Op::Put {
                key: key.into(),
                value: serde_json::to_vec(&object).expect("json").into(),
                expect: Expect::Any,
            }))
            .await
            .expect("commit");
    }
    let configuration = super::PodSecurityConfiguration::parse(&json!({
        "apiVersion": "pod-security.admission.config.k8s.io/v1",
        "kind": "PodSecurityConfiguration",
        "defaults": {"enforce": "baseline"},
        "exemptions": {"usernames": ["ci"], "namespaces": ["free"], "runtimeClasses": ["gvisor"]},
    }))
    .expect("valid");
    let pod = |namespace: &str, runtime_class: Option<&str>| {
        let mut pod = json!({"metadata": {"name": "p", "namespace": namespace},
            "spec": {"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]}});
        if let Some(class) = runtime_class {
            pod["spec"]["runtimeClassName"] = json!(class);
        }
        pod
    };
    let user = |name: &str| UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: vec!["system:authenticated".into()],
        extra: Default::default(),
    };
    let try_pod = |namespace: &'static str, user: UserInfo, object: Value| {
        let store = store.clone();
        let configuration = configuration.clone();
        async move {
            let attributes = Attributes {
                operation: Operation::Create,
                kind: GroupVersionName::new("", "v1", "Pod"),
                resource: GroupVersionName::new("", "v1", "pods"),
                subresource: "",
                name: "p",
                namespace,
                old_object: None,
                options: Value::Null,
                dry_run: false,
                user: Some(&user),
            };
            let caller = Caller::new(Some(user.clone()), false, Value::Null);
            let result =
                super::validate(&store, &configuration, &attributes, Some(&object), &caller);
            (
                result.map_err(|status| status.message),
                caller.take_audit_annotations(),
            )
        }
    };
    let exempt = |reason: &str| {
        vec![(
            "pod-security.kubernetes.io/exempt".to_string(),
            reason.to_string(),
        )]
    };

    let (denied, _) = try_pod("team", user("dev"), pod("team", None)).await;
    assert_eq!(
        denied.expect_err("the default policy"),
        r#"pods "p" is forbidden: violates PodSecurity "baseline:latest": privileged (container "c" must not set securityContext.privileged=true)"#
    );
    let (allowed, annotations) = try_pod("free", user("dev"), pod("free", None)).await;
    assert!(allowed.is_ok());
    assert_eq!(annotations, exempt("namespace"));
    let (allowed, annotations) = try_pod("team", user("ci"), pod("team", None)).await;
    assert!(allowed.is_ok());
    assert_eq!(annotations, exempt("user"));
    let (allowed, annotations) = try_pod("team", user("dev"), pod("team", Some("gvisor"))).await;
    assert!(allowed.is_ok());
    assert_eq!(annotations, exempt("runtimeClass"));

    // Restricting "team" tries its pods, but not the exempt runtime class's.
    let old = json!({"metadata": {"name": "team"}});
    let new = json!({"metadata": {"name": "team", "labels": {"pod-security.kubernetes.io/enforce": "restricted"}}});
    let attributes = Attributes {
        operation: Operation::Update,
        kind: GroupVersionName::new("", "v1", "Namespace"),
        resource: GroupVersionName::new("", "v1", "namespaces"),
        subresource: "",
        name: "team",
        namespace: "team",
        old_object: Some(&old),
        options: Value::Null,
        dry_run: false,
        user: None,
    };
    let warnings =
        super::namespace::validate(&store, &configuration, &attributes, &new).expect("allowed");
    assert!(warnings.is_empty(), "{warnings:?}");

    // An exempt namespace labelled with the default policy is not warned.
    let free_default = json!({"metadata": {"name": "free", "labels": {"pod-security.kubernetes.io/enforce": "baseline"}}});
    let attributes = Attributes {
        name: "free",
        namespace: "free",
        old_object: None,
        operation: Operation::Create,
        ..attributes
    };
    assert!(
        super::namespace::validate(&store, &configuration, &attributes, &free_default)
            .expect("allowed")
            .is_empty()
    );
    let free_audited = json!({"metadata": {"name": "free", "labels": {"pod-security.kubernetes.io/audit": "restricted"}}});
    assert_eq!(
        super::namespace::validate(&store, &configuration, &attributes, &free_audited).expect("allowed"),
        vec![r#"namespace "free" is exempt from Pod Security, and the policy (audit=restricted:latest) will be ignored"#.to_string()]
    );
}
