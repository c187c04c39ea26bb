//! The cases of kube's `plugin/pkg/auth/authorizer/rbac/rbac_test.go`
//! (`TestAuthorizer`, `TestRuleMatches`), ported as they are.

use serde_json::{json, Value};

use super::*;

fn split(list: &str) -> Vec<&str> {
    list.split(',').collect()
}

/// `newRule(verbs, apiGroups, resources, nonResourceURLs)`: each a comma list
/// (an empty one is `[""]`, as Go's `strings.Split`).
fn new_rule(verbs: &str, groups: &str, resources: &str, urls: &str) -> Value {
    json!({"verbs": split(verbs), "apiGroups": split(groups), "resources": split(resources), "nonResourceURLs": split(urls)})
}

/// `"Kind:name"` subjects.
fn subjects(list: &[&str]) -> Value {
    let subjects: Vec<Value> = list
        .iter()
        .map(|subject| {
            let (kind, name) = subject.split_once(':').unwrap_or_default();
            json!({"kind": kind, "name": name})
        })
        .collect();
    Value::Array(subjects)
}

fn user(name: &str, groups: &str) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: split(groups).into_iter().map(str::to_string).collect(),
        extra: Default::default(),
    }
}

/// `defaultAttributes{user, groups, verb, resource, subresource, namespace, apiGroup}`.
fn resource<'a>(
    user: &'a UserInfo,
    verb: &'a str,
    resource: &'a str,
    subresource: &'a str,
    namespace: &'a str,
) -> Attributes<'a> {
    Attributes {
        verb,
        resource_request: true,
        resource,
        subresource,
        namespace,
        ..Attributes::non_resource(user, verb, "")
    }
}

fn rbac(objects: Vec<(String, Value)>) -> Rbac {
    Rbac::from_objects(
        objects
            .iter()
            .map(|(key, value)| (key.as_str(), value.clone())),
    )
}

fn cluster_role(name: &str, rule: Value) -> (String, Value) {
    (
        format!("/registry/clusterroles/{name}"),
        json!({"rules": [rule]}),
    )
}

fn role_binding_to_cluster_role(ns: &str, role: &str, who: &[&str]) -> (String, Value) {
    (
        format!("/registry/rolebindings/{ns}/{role}-binding"),
        json!({"roleRef": {"kind": "ClusterRole", "name": role}, "subjects": subjects(who)}),
    )
}

fn cluster_role_binding(role: &str, who: &[&str]) -> (String, Value) {
    (
        format!("/registry/clusterrolebindings/{role}-binding"),
        json!({"roleRef": {"kind": "ClusterRole", "name": role}, "subjects": subjects(who)}),
    )
}

#[test]
fn test_authorizer_namespaced_admin() {
    let rbac = rbac(vec![
        cluster_role("admin", new_rule("*", "*", "*", "*")),
        role_binding_to_cluster_role("ns1", "admin", &["User:admin", "Group:admins"]),
    ]);
    let pass = [
        ("admin", "", "get", "Pods", "ns1"),
        ("admin", "", "watch", "Pods", "ns1"),
        ("admin", "group1", "watch", "Foobar", "ns1"),
        ("joe", "admins", "watch", "Foobar", "ns1"),
        ("joe", "group1,admins", "watch", "Foobar", "ns1"),
    ];
    let fail = [
        ("admin", "", "GET", "Pods", "ns2"),
        ("admin", "", "GET", "Nodes", ""),
        ("admin", "admins", "GET", "Pods", "ns2"),
        ("admin", "admins", "GET", "Nodes", ""),
    ];
    for (cases, expected) in [(&pass[..], true), (&fail[..], false)] {
        for (name, groups, verb, res, ns) in cases.iter() {
            let user = user(name, groups);
            let attributes = resource(&user, verb, res, "", ns);
            assert_eq!(
                rbac.authorize(&attributes).allowed(),
                expected,
                "{attributes:?}"
            );
        }
    }
}

#[test]
fn test_authorizer_non_resource_urls() {
    let rbac = rbac(vec![
        cluster_role("non-resource-url-getter", new_rule("get", "", "", "/apis")),
        cluster_role("non-resource-url", new_rule("*", "", "", "/apis")),
        cluster_role(
            "non-resource-url-prefix",
            new_rule("get", "", "", "/apis/*"),
        ),
        cluster_role_binding("non-resource-url-getter", &["User:foo", "Group:bar"]),
        cluster_role_binding("non-resource-url", &["User:admin", "Group:admin"]),
        cluster_role_binding(
            "non-resource-url-prefix",
            &["User:prefixed", "Group:prefixed"],
        ),
    ]);
    // (user, groups, verb, path, allowed)
    let cases = [
        ("foo", "", "get", "/apis", true),
        ("", "bar", "get", "/apis", true),
        ("admin", "", "get", "/apis", true),
        ("", "admin", "get", "/apis", true),
        ("admin", "", "watch", "/apis", true),
        ("", "admin", "watch", "/apis", true),
        ("prefixed", "", "get", "/apis/v1", true),
        ("", "prefixed", "get", "/apis/v1", true),
        ("prefixed", "", "get", "/apis/v1/foobar", true),
        ("", "prefixed", "get", "/apis/v1/foorbar", true),
        ("foo", "", "watch", "/apis", false),
        ("", "bar", "watch", "/apis", false),
        ("foo", "", "get", "/api/v1", false),
        ("", "bar", "get", "/api/v1", false),
        ("admin", "", "get", "/api/v1", false),
        ("", "admin", "get", "/api/v1", false),
        ("prefixed", "", "get", "/api/v1", false),
        ("", "prefixed", "get", "/api/v1", false),
    ];
    for (name, groups, verb, path, expected) in cases {
        let user = user(name, groups);
        let attributes = Attributes::non_resource(&user, verb, path);
        assert_eq!(
            rbac.authorize(&attributes).allowed(),
            expected,
            "{attributes:?}"
        );
    }
}

#[test]
fn test_authorizer_subresource_resolution() {
    for (rule_resource, subresource_allowed) in [("pods", false), ("pods/status", true)] {
        let rbac = rbac(vec![
            cluster_role("admin", new_rule("*", "*", rule_resource, "*")),
            role_binding_to_cluster_role("ns1", "admin", &["User:admin", "Group:admins"]),
        ]);
        let admin = user("admin", "");
        let plain = resource(&admin, "get", "pods", "", "ns1");
        let status = resource(&admin, "get", "pods", "status", "ns1");
        assert_eq!(rbac.authorize(&plain).allowed(), !subresource_allowed);
        assert_eq!(rbac.authorize(&status).allowed(), subresource_allowed);
    }
}

/// One request of `TestRuleMatches`: verb, group, resource, subresource, allowed.
type ResourceCase<'a> = (&'a str, &'a str, &'a str, &'a str, bool);

/// `TestRuleMatches`: (rule, its requests).
#[test]
fn test_rule_matches_resources() {
    let tuple = json!({"verbs": ["verb1", "verb2"], "apiGroups": ["group1", "group2"], "resources": ["resource1", "resource2"]});
    let cases: Vec<(Value, Vec<ResourceCase<'_>>)> = vec![
        (
            json!({"verbs": ["*"], "apiGroups": ["group1"], "resources": ["resource1"]}),
            vec![
                ("verb1", "group1", "resource1", "", true),
                ("verb1", "group2", "resource1", "", false),
                ("verb1", "group1", "resource2", "", false),
                ("verb2", "group1", "resource1", "", true),
                ("verb2", "group2", "resource2", "", false),
            ],
        ),
        (
            json!({"verbs": ["verb1"], "apiGroups": ["*"], "resources": ["resource1"]}),
            vec![
                ("verb1", "group1", "resource1", "", true),
                ("verb1", "group2", "resource1", "", true),
                ("verb1", "group1", "resource2", "", false),
                ("verb2", "group1", "resource1", "", false),
            ],
        ),
        (
            json!({"verbs": ["verb1"], "apiGroups": ["group1"], "resources": ["*"]}),
            vec![
                ("verb1", "group1", "resource1", "", true),
                ("verb1", "group2", "resource1", "", false),
                ("verb1", "group1", "resource2", "", true),
                ("verb2", "group1", "resource1", "", false),
            ],
        ),
        (
            tuple,
            vec![
                ("verb1", "group1", "resource1", "", true),
                ("verb1", "group2", "resource2", "", true),
                ("verb2", "group1", "resource2", "", true),
                ("verb2", "group2", "resource1", "", true),
            ],
        ),
        (
            json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["resource1/subresource1"]}),
            vec![
                ("verb1", "group1", "resource1", "subresource1", true),
                ("verb1", "group2", "resource1", "subresource2", false),
                ("verb1", "group1", "resource2", "subresource1", false),
                ("verb2", "group1", "resource1", "subresource1", true),
            ],
        ),
    ];
    let nobody = user("", "");
    for (rule, requests) in cases {
        let rule = PolicyRule::from_json(&rule);
        for (verb, group, res, subresource, expected) in requests {
            let attributes = Attributes {
                api_group: group,
                ..resource(&nobody, verb, res, subresource, "")
            };
            assert_eq!(
                rule.allows(&attributes),
                expected,
                "{rule:?} {attributes:?}"
            );
        }
    }
}

#[test]
fn test_rule_matches_non_resource_urls() {
    let paths = [
        "/foo",
        "/foo/bar",
        "/foo/baz",
        "/foo/bar/one",
        "/foo/baz/one",
    ];
    let nobody = user("", "");
    // (rule, verb, allowed paths among `paths` and the `/notfoo` ones)
    let cases = [
        (
            json!({"verbs": ["verb1"], "nonResourceURLs": ["*"]}),
            "verb1",
            vec![
                "/foo",
                "/foo/bar",
                "/foo/baz",
                "/foo/bar/one",
                "/foo/baz/one",
                "/notfoo",
                "/notfoo/bar",
                "/notfoo/bar/one",
            ],
        ),
        (
            json!({"verbs": ["verb1"], "nonResourceURLs": ["*"]}),
            "verb2",
            vec![],
        ),
        (
            json!({"verbs": ["verb1"], "nonResourceURLs": ["/foo/*"]}),
            "verb1",
            vec!["/foo/bar", "/foo/baz", "/foo/bar/one", "/foo/baz/one"],
        ),
        (
            json!({"verbs": ["*"], "nonResourceURLs": ["/foo", "/foo/bar/one"]}),
            "verb1",
            vec!["/foo", "/foo/bar/one"],
        ),
        (
            json!({"verbs": ["*"], "nonResourceURLs": ["/foo", "/foo/bar/one"]}),
            "verb2",
            vec!["/foo", "/foo/bar/one"],
        ),
    ];
    for (rule, verb, allowed) in cases {
        let rule = PolicyRule::from_json(&rule);
        for path in paths
            .iter()
            .chain(["/notfoo", "/notfoo/bar", "/notfoo/bar/one"].iter())
        {
            let attributes = Attributes::non_resource(&nobody, verb, path);
            assert_eq!(
                rule.allows(&attributes),
                allowed.contains(path),
                "{rule:?} {verb} {path}"
            );
        }
    }
}
