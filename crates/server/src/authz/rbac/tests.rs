//! Rule matching and rule resolution, after kube's
//! `plugin/pkg/auth/authorizer/rbac/rbac_test.go` (`TestAuthorizer`,
//! `TestRuleMatches`) and `pkg/registry/rbac/validation/rule_test.go`.

use std::borrow::Cow;

use serde_json::{json, Value};

use super::*;
use crate::authz::{Authorizer, Mode, Verdict};

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        extra: Default::default(),
    }
}

fn resource<'a>(
    user: &'a UserInfo,
    verb: &'a str,
    group: &'a str,
    resource: &'a str,
    subresource: &'a str,
    namespace: &'a str,
    name: &'a str,
) -> Attributes<'a> {
    Attributes {
        verb,
        resource_request: true,
        api_group: group,
        api_version: "v1",
        resource,
        subresource,
        namespace,
        name: Cow::Borrowed(name),
        ..Attributes::non_resource(user, verb, "/")
    }
}

fn rule(value: Value) -> PolicyRule {
    PolicyRule::from_json(&value)
}

#[test]
fn rules_match_as_kube_evaluation_helpers() {
    let jane = user("jane", &[]);
    // (rule, attributes, allowed)
    let cases: Vec<(Value, Attributes<'_>, bool)> = vec![
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource(&jane, "get", "", "pods", "", "ns", "p"),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource(&jane, "list", "", "pods", "", "ns", ""),
            false,
        ),
        (
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}),
            resource(
                &jane,
                "escalate",
                "rbac.authorization.k8s.io",
                "roles",
                "",
                "",
                "",
            ),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": ["apps"], "resources": ["pods"]}),
            resource(&jane, "get", "", "pods", "", "ns", "p"),
            false,
        ),
        // A subresource needs its own rule: `pods` does not grant `pods/log`.
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}),
            resource(&jane, "get", "", "pods", "log", "ns", "p"),
            false,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}),
            resource(&jane, "get", "", "pods", "log", "ns", "p"),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}),
            resource(&jane, "get", "", "pods", "", "ns", "p"),
            false,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/scale"]}),
            resource(&jane, "update", "apps", "deployments", "scale", "ns", "d"),
            true,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/scale"]}),
            resource(&jane, "update", "apps", "deployments", "status", "ns", "d"),
            false,
        ),
        (
            json!({"verbs": ["update"], "apiGroups": ["*"], "resources": ["*/scale"]}),
            resource(&jane, "update", "apps", "deployments", "", "ns", "d"),
            false,
        ),
        // kube has no `resource/*` wildcard: `pods/*` names a subresource "*".
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/*"]}),
            resource(&jane, "get", "", "pods", "log", "ns", "p"),
            false,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a", "b"]}),
            resource(&jane, "get", "", "pods", "", "ns", "b"),
            true,
        ),
        (
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            resource(&jane, "get", "", "pods", "", "ns", "c"),
            false,
        ),
        // A list has no name: resourceNames never allow it.
        (
            json!({"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}),
            resource(&jane, "list", "", "pods", "", "ns", ""),
            false,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
            Attributes::non_resource(&jane, "get", "/healthz"),
            true,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
            Attributes::non_resource(&jane, "get", "/healthz/ping"),
            false,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz*"]}),
            Attributes::non_resource(&jane, "get", "/healthz/ping"),
            true,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["/apis/*"]}),
            Attributes::non_resource(&jane, "get", "/apis"),
            false,
        ),
        (
            json!({"verbs": ["*"], "nonResourceURLs": ["*"]}),
            Attributes::non_resource(&jane, "post", "/anything"),
            true,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
            Attributes::non_resource(&jane, "post", "/healthz"),
            false,
        ),
        // A resource rule never allows a path, a path rule never a resource.
        (
            json!({"verbs": ["get"], "apiGroups": ["*"], "resources": ["*"]}),
            Attributes::non_resource(&jane, "get", "/api"),
            false,
        ),
        (
            json!({"verbs": ["get"], "nonResourceURLs": ["*"]}),
            resource(&jane, "get", "", "pods", "", "ns", "p"),
            false,
        ),
    ];
    for (value, attributes, allowed) in cases {
        assert_eq!(
            rule(value.clone()).allows(&attributes),
            allowed,
            "{value} on {attributes:?}"
        );
    }
}

fn role(namespace: &str, name: &str, rules: Value) -> (String, Value) {
    (
        format!("/registry/roles/{namespace}/{name}"),
        json!({"metadata": {"name": name, "namespace": namespace}, "rules": rules}),
    )
}

fn cluster_role(name: &str, rules: Value) -> (String, Value) {
    (
        format!("/registry/clusterroles/{name}"),
        json!({"metadata": {"name": name}, "rules": rules}),
    )
}

fn role_binding(
    namespace: &str,
    name: &str,
    role_kind: &str,
    role: &str,
    subjects: Value,
) -> (String, Value) {
    (
        format!("/registry/rolebindings/{namespace}/{name}"),
        json!({
            "metadata": {"name": name, "namespace": namespace},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": role_kind, "name": role},
            "subjects": subjects,
        }),
    )
}

fn cluster_role_binding(name: &str, role: &str, subjects: Value) -> (String, Value) {
    (
        format!("/registry/clusterrolebindings/{name}"),
        json!({
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
            "subjects": subjects,
        }),
    )
}

fn rbac(objects: Vec<(String, Value)>) -> Rbac {
    Rbac::from_objects(
        objects
            .iter()
            .map(|(key, value)| (key.as_str(), value.clone())),
    )
}

fn policy() -> Rbac {
    let read_pods =
        json!([{"verbs": ["get", "list", "watch"], "apiGroups": [""], "resources": ["pods"]}]);
    rbac(vec![
        cluster_role("pod-reader", read_pods.clone()),
        cluster_role(
            "healthz",
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/version"]}]),
        ),
        role(
            "dev",
            "cm-writer",
            json!([{"verbs": ["create", "update"], "apiGroups": [""], "resources": ["configmaps"]}]),
        ),
        role_binding(
            "dev",
            "jane-writes",
            "Role",
            "cm-writer",
            json!([{"kind": "User", "name": "jane"}]),
        ),
        role_binding(
            "dev",
            "team-reads",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "Group", "name": "team"}]),
        ),
        role_binding(
            "dev",
            "sa-reads",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "ServiceAccount", "name": "bot"}]),
        ),
        role_binding(
            "dev",
            "other-sa",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "ServiceAccount", "name": "robot", "namespace": "ops"}]),
        ),
        role_binding(
            "dev",
            "dangling",
            "Role",
            "gone",
            json!([{"kind": "User", "name": "jane"}]),
        ),
        cluster_role_binding(
            "everyone-healthz",
            "healthz",
            json!([{"kind": "Group", "name": "system:authenticated"}]),
        ),
        cluster_role_binding(
            "ops-reads",
            "pod-reader",
            json!([{"kind": "User", "name": "olga"}]),
        ),
        cluster_role_binding(
            "sa-no-namespace",
            "pod-reader",
            json!([{"kind": "ServiceAccount", "name": "bot"}]),
        ),
    ])
}

#[test]
fn bindings_grant_their_roles_where_they_apply() {
    let rbac = policy();
    let jane = user("jane", &["system:authenticated"]);
    let teammate = user("tom", &["team", "system:authenticated"]);
    let olga = user("olga", &[]);
    let bot = user("system:serviceaccount:dev:bot", &["system:serviceaccounts"]);
    let robot = user("system:serviceaccount:ops:robot", &[]);
    let other_bot = user("system:serviceaccount:ops:bot", &[]);
    let cases = [
        // A RoleBinding to a Role: only in its namespace.
        (
            resource(&jane, "create", "", "configmaps", "", "dev", ""),
            true,
        ),
        (
            resource(&jane, "create", "", "configmaps", "", "prod", ""),
            false,
        ),
        (
            resource(&jane, "delete", "", "configmaps", "", "dev", "x"),
            false,
        ),
        // A RoleBinding to a ClusterRole, through a group: only in its namespace.
        (resource(&teammate, "list", "", "pods", "", "dev", ""), true),
        (resource(&teammate, "list", "", "pods", "", "", ""), false),
        (
            resource(&teammate, "list", "", "pods", "", "prod", ""),
            false,
        ),
        // A ClusterRoleBinding: everywhere, cluster-wide lists included.
        (resource(&olga, "watch", "", "pods", "", "", ""), true),
        (resource(&olga, "get", "", "pods", "", "prod", "p"), true),
        // A ServiceAccount subject without namespace is the binding's namespace's.
        (resource(&bot, "get", "", "pods", "", "dev", "p"), true),
        (
            resource(&other_bot, "get", "", "pods", "", "dev", "p"),
            false,
        ),
        (resource(&robot, "get", "", "pods", "", "dev", "p"), true),
        // ...and in a ClusterRoleBinding it names nobody.
        (resource(&bot, "get", "", "pods", "", "prod", "p"), false),
        (Attributes::non_resource(&jane, "get", "/healthz"), true),
        (Attributes::non_resource(&olga, "get", "/healthz"), false),
    ];
    for (attributes, allowed) in cases {
        assert_eq!(
            rbac.authorize(&attributes).allowed(),
            allowed,
            "{attributes:?}"
        );
    }
}

#[test]
fn reasons_are_worded_as_kube() {
    let rbac = policy();
    let jane = user("jane", &["system:authenticated"]);
    let allowed = rbac.authorize(&resource(&jane, "create", "", "configmaps", "", "dev", ""));
    assert_eq!(
        allowed.reason,
        r#"RBAC: allowed by RoleBinding "jane-writes/dev" of Role "cm-writer" to User "jane""#
    );
    let healthz = rbac.authorize(&Attributes::non_resource(&jane, "get", "/version"));
    assert_eq!(
        healthz.reason,
        r#"RBAC: allowed by ClusterRoleBinding "everyone-healthz" of ClusterRole "healthz" to Group "system:authenticated""#
    );
    let bot = user("system:serviceaccount:dev:bot", &[]);
    let by_sa = rbac.authorize(&resource(&bot, "get", "", "pods", "", "dev", "p"));
    assert_eq!(
        by_sa.reason,
        r#"RBAC: allowed by RoleBinding "sa-reads/dev" of ClusterRole "pod-reader" to ServiceAccount "bot/dev""#
    );
    // Refused while a binding of hers names a missing Role: kube says so.
    let refused = rbac.authorize(&resource(&jane, "delete", "", "configmaps", "", "dev", "x"));
    assert_eq!(refused.verdict, Verdict::NoOpinion);
    assert_eq!(
        refused.reason,
        r#"RBAC: role.rbac.authorization.k8s.io "gone" not found"#
    );
    // Elsewhere the dangling binding is not read.
    let elsewhere = rbac.authorize(&resource(
        &jane,
        "delete",
        "",
        "configmaps",
        "",
        "prod",
        "x",
    ));
    assert_eq!(elsewhere.reason, "");
}

/// The request path asks without the allow reason; the decision is the
/// same, and a refusal still says why.
#[test]
fn requests_are_decided_alike_without_the_allow_reason() {
    let rbac = policy();
    let jane = user("jane", &["system:authenticated"]);
    let cases = [
        resource(&jane, "create", "", "configmaps", "", "dev", ""),
        resource(&jane, "delete", "", "configmaps", "", "dev", "x"),
        resource(&jane, "get", "", "pods", "", "prod", "x"),
        Attributes::non_resource(&jane, "get", "/version"),
    ];
    for attributes in &cases {
        let described = rbac.authorize(attributes);
        let quiet = rbac.decide(attributes, AllowReason::Omit);
        assert_eq!(quiet.verdict, described.verdict, "{attributes:?}");
        if described.allowed() {
            assert!(described.reason.starts_with("RBAC: allowed by "));
            assert_eq!(quiet.reason, "");
        } else {
            assert_eq!(quiet.reason, described.reason);
        }
    }
    let chain = Authorizer::with_rbac(&[Mode::Rbac], std::sync::Arc::new(policy()));
    let allowed = chain.authorize_request(&cases[0]);
    assert!(allowed.allowed());
    assert_eq!(allowed.reason, "");
}

/// The request path reads a namespace's bindings before the cluster's;
/// the verdict and a refusal's errors (cluster first, as kube lists them)
/// are those of kube's order.
#[test]
fn namespace_bindings_first_decide_and_refuse_as_kubes_order() {
    let rbac = rbac(vec![
        cluster_role(
            "pod-reader",
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        ),
        cluster_role_binding("a", "missing-a", json!([{"kind": "Group", "name": "team"}])),
        cluster_role_binding("z", "pod-reader", json!([{"kind": "User", "name": "jane"}])),
        role_binding(
            "dev",
            "b",
            "Role",
            "missing-b",
            json!([{"kind": "User", "name": "jane"}]),
        ),
        role_binding(
            "dev",
            "c",
            "ClusterRole",
            "pod-reader",
            json!([{"kind": "Group", "name": "team"}]),
        ),
    ]);
    let jane = user("jane", &["team"]);
    let cases = [
        // Allowed by the cluster binding, and by the namespace's.
        resource(&jane, "get", "", "pods", "", "dev", "p"),
        // Allowed by the cluster binding only.
        resource(&jane, "get", "", "pods", "", "prod", "p"),
        // Refused: both missing roles named, the cluster's first.
        resource(&jane, "delete", "", "pods", "", "dev", "p"),
        resource(&jane, "delete", "", "pods", "", "", "p"),
    ];
    for attributes in &cases {
        let described = rbac.authorize(attributes);
        let quiet = rbac.decide(attributes, AllowReason::Omit);
        assert_eq!(quiet.verdict, described.verdict, "{attributes:?}");
        if !described.allowed() {
            assert_eq!(quiet.reason, described.reason, "{attributes:?}");
        }
    }
    assert_eq!(
        rbac.decide(&cases[2], AllowReason::Omit).reason,
        r#"RBAC: [clusterrole.rbac.authorization.k8s.io "missing-a" not found, role.rbac.authorization.k8s.io "missing-b" not found]"#
    );
}

/// `resource/subresource` rules are compared without joining the request's
/// two parts: a rule for another subresource, or for the resource alone, or
/// a prefix of the resource, does not match.
#[test]
fn subresource_rules_match_only_their_subresource() {
    let pods_log = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"]}));
    let jane = user("jane", &[]);
    let get = |resource_name: &'static str, subresource: &'static str| {
        pods_log.allows(&resource(
            &jane,
            "get",
            "",
            resource_name,
            subresource,
            "dev",
            "p",
        ))
    };
    assert!(get("pods", "log"));
    assert!(!get("pods", "logs"));
    assert!(!get("pods", "lo"));
    assert!(!get("pods", ""));
    assert!(!get("pod", "s/log"));
    assert!(!get("po", "ds/log"));
    let plain = rule(json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}));
    assert!(plain.allows(&resource(&jane, "get", "", "pods", "", "dev", "p")));
    assert!(!plain.allows(&resource(&jane, "get", "", "pods", "log", "dev", "p")));
}

#[test]
fn several_missing_roles_are_aggregated() {
    let rbac = rbac(vec![
        cluster_role_binding("a", "missing-a", json!([{"kind": "User", "name": "jane"}])),
        role_binding(
            "dev",
            "b",
            "Role",
            "missing-b",
            json!([{"kind": "User", "name": "jane"}]),
        ),
        role_binding(
            "dev",
            "c",
            "Role",
            "missing-b",
            json!([{"kind": "User", "name": "jane"}]),
        ),
    ]);
    let jane = user("jane", &[]);
    let refused = rbac.authorize(&resource(&jane, "get", "", "pods", "", "dev", "p"));
    assert_eq!(
        refused.reason,
        r#"RBAC: [clusterrole.rbac.authorization.k8s.io "missing-a" not found, role.rbac.authorization.k8s.io "missing-b" not found]"#
    );
}

#[test]
fn rules_for_lists_what_applies_in_a_namespace() {
    let rbac = policy();
    let jane = user("jane", &["system:authenticated"]);
    let (rules, errors) = rbac.rules_for(&jane, "dev");
    assert_eq!(rules.len(), 2, "{rules:?}");
    assert_eq!(errors, vec![RoleRefError::RoleNotFound("gone".into())]);
    assert_eq!(
        errors[0].registry_message(),
        r#"roles.rbac.authorization.k8s.io "gone" not found"#
    );
    let (rules, errors) = rbac.rules_for(&jane, "");
    assert_eq!(rules.len(), 1);
    assert!(errors.is_empty());
}

#[test]
fn the_union_chains_modes_as_kube() {
    let rbac = std::sync::Arc::new(policy());
    let jane = user("jane", &["system:authenticated"]);
    let admin = user("admin", &["system:masters"]);
    let denied = resource(&jane, "delete", "", "configmaps", "", "dev", "x");
    let allowed = resource(&jane, "create", "", "configmaps", "", "dev", "");

    let deny_then_rbac = Authorizer::with_rbac(&[Mode::AlwaysDeny, Mode::Rbac], rbac.clone());
    assert!(deny_then_rbac.authorize(&allowed).allowed());
    assert_eq!(
        deny_then_rbac.authorize(&denied).reason,
        "Everything is forbidden.\nRBAC: role.rbac.authorization.k8s.io \"gone\" not found"
    );
    let deny = Authorizer::with_rbac(&[Mode::AlwaysDeny], rbac.clone());
    assert!(!deny.authorize(&allowed).allowed());
    // system:masters is allowed before any mode is asked.
    assert!(deny
        .authorize(&resource(&admin, "delete", "", "nodes", "", "", "n"))
        .allowed());
    let allow = Authorizer::with_rbac(&[Mode::Rbac, Mode::AlwaysAllow], rbac);
    assert_eq!(allow.authorize(&denied), crate::authz::Decision::allow(""));
}

/// With many bindings for other users, a user's request reads only the
/// bindings that name it (its user, groups or service account): the index
/// selection that makes authorization cost independent of the others.
#[test]
fn the_index_selects_only_the_bindings_that_name_the_user() {
    let mut objects = Vec::new();
    for i in 0..1000 {
        let namespace = format!("ns-{}", i % 10);
        objects.push(role(
            &namespace,
            &format!("role-{i}"),
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["configmaps"]}]),
        ));
        objects.push(role_binding(
            &namespace,
            &format!("binding-{i}"),
            "Role",
            &format!("role-{i}"),
            json!([{"kind": "User", "name": format!("user-{i}")}, {"kind": "Group", "name": format!("group-{i}")}]),
        ));
        objects.push(cluster_role_binding(
            &format!("cluster-binding-{i}"),
            "none",
            json!([{"kind": "ServiceAccount", "name": format!("sa-{i}"), "namespace": "ns-0"}]),
        ));
    }
    let rbac = rbac(objects);
    let index = rbac.read_index();
    assert_eq!(index.binding_count(), 2000);

    // user-7 holds one RoleBinding (in ns-7) and is in group-8's (also ns-8).
    let user7 = user("user-7", &["group-8", "group-7", "system:authenticated"]);
    let in_ns7: Vec<&str> = index
        .bindings_for(&user7, "ns-7")
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(in_ns7, ["binding-7"], "named by the user and a group: once");
    let in_ns8: Vec<&str> = index
        .bindings_for(&user7, "ns-8")
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(in_ns8, ["binding-8"]);
    assert!(index.bindings_for(&user7, "ns-1").is_empty());
    assert!(index.cluster_bindings_for(&user7).is_empty());

    let sa = user(
        "system:serviceaccount:ns-0:sa-42",
        &["system:serviceaccounts"],
    );
    let cluster: Vec<&str> = index
        .cluster_bindings_for(&sa)
        .iter()
        .map(|b| b.name.as_str())
        .collect();
    assert_eq!(cluster, ["cluster-binding-42"]);
    drop(index);

    // The decisions read the same bindings.
    let allowed = rbac.authorize(&resource(&user7, "get", "", "configmaps", "", "ns-7", "x"));
    assert_eq!(
        allowed.reason,
        r#"RBAC: allowed by RoleBinding "binding-7/ns-7" of Role "role-7" to User "user-7""#
    );
    assert!(!rbac
        .authorize(&resource(&user7, "get", "", "configmaps", "", "ns-3", "x"))
        .allowed());
}

#[test]
fn changes_and_deletes_reindex_bindings() {
    let mut index = RbacIndex::default();
    let (key, binding) = role_binding(
        "dev",
        "b",
        "Role",
        "r",
        json!([{"kind": "User", "name": "jane"}]),
    );
    index.apply(&key, Some(&binding));
    let jane = user("jane", &[]);
    let tom = user("tom", &[]);
    assert_eq!(index.bindings_for(&jane, "dev").len(), 1);
    // The same binding now names tom instead.
    let (_, moved) = role_binding(
        "dev",
        "b",
        "Role",
        "r",
        json!([{"kind": "User", "name": "tom"}]),
    );
    index.apply(&key, Some(&moved));
    assert!(index.bindings_for(&jane, "dev").is_empty());
    assert_eq!(index.bindings_for(&tom, "dev").len(), 1);
    index.apply(&key, None);
    assert!(index.bindings_for(&tom, "dev").is_empty());
    assert_eq!(index.binding_count(), 0);
    // Keys of other kinds are ignored.
    index.apply("/registry/configmaps/dev/x", Some(&json!({})));
    assert_eq!(index.binding_count(), 0);
}
