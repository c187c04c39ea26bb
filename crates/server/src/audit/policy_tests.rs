//! Policy loading, validation and matching against kube's
//! (`audit/policy/checker_test.go`, `apis/audit/validation/validation_test.go`).

use std::borrow::Cow;

use super::*;

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.to_string(),
        groups: groups.iter().map(|group| group.to_string()).collect(),
        ..UserInfo::default()
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
        user,
        verb,
        resource_request: true,
        path: "/api/v1/whatever",
        api_group: group,
        api_version: "v1",
        resource,
        subresource,
        namespace,
        name: Cow::Borrowed(name),
    }
}

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: None
  users: ["system:kube-proxy"]
- level: None
  userGroups: ["system:nodes"]
  verbs: ["get"]
- level: RequestResponse
  resources:
  - group: ""
    resources: ["pods/log", "*/status"]
- level: Request
  omitStages: ["ResponseStarted"]
  omitManagedFields: true
  resources:
  - group: ""
    resources: ["configmaps"]
    resourceNames: ["special"]
- level: Metadata
  resources:
  - group: "apps"
    resources: ["deployments/*"]
- level: Request
  namespaces: ["audited"]
- level: Metadata
  nonResourceURLs: ["/healthz*", "/version"]
- level: Metadata
  verbs: ["create", "delete"]
"#;

fn policy() -> Policy {
    Policy::parse(POLICY.as_bytes()).unwrap()
}

#[test]
fn rules_match_in_order_by_user_group_verb_resource_and_url() {
    let policy = policy();
    let admin = user("admin", &["system:masters"]);
    let proxy = user("system:kube-proxy", &[]);
    let node = user("system:node:a", &["system:nodes"]);
    let level =
        |user: Option<&UserInfo>, attributes: &Attributes| policy.evaluate(user, attributes).level;
    let pods =
        |user, verb, subresource| resource(user, verb, "", "pods", subresource, "default", "p");
    // users
    assert_eq!(
        level(Some(&proxy), &pods(&proxy, "create", "")),
        Level::None
    );
    // userGroups with verbs: a node's get is not audited, its create is.
    assert_eq!(level(Some(&node), &pods(&node, "get", "")), Level::None);
    assert_eq!(
        level(Some(&node), &pods(&node, "create", "")),
        Level::Metadata
    );
    // resource/subresource and */subresource
    assert_eq!(
        level(Some(&admin), &pods(&admin, "get", "log")),
        Level::RequestResponse
    );
    assert_eq!(
        level(Some(&admin), &pods(&admin, "update", "status")),
        Level::RequestResponse
    );
    let services = resource(&admin, "patch", "", "services", "status", "default", "s");
    assert_eq!(level(Some(&admin), &services), Level::RequestResponse);
    // a plain pod get falls through every rule
    assert_eq!(level(Some(&admin), &pods(&admin, "get", "")), Level::None);
    // resourceNames
    let special = resource(&admin, "get", "", "configmaps", "", "default", "special");
    let other = resource(&admin, "get", "", "configmaps", "", "default", "other");
    assert_eq!(level(Some(&admin), &special), Level::Request);
    assert_eq!(level(Some(&admin), &other), Level::None);
    // resource/* matches the resource and each subresource
    let deployment = resource(&admin, "get", "apps", "deployments", "", "default", "d");
    let scale = resource(
        &admin,
        "get",
        "apps",
        "deployments",
        "scale",
        "default",
        "d",
    );
    assert_eq!(level(Some(&admin), &deployment), Level::Metadata);
    assert_eq!(level(Some(&admin), &scale), Level::Metadata);
    // the group must match: core deployments do not exist, so no match
    let core = resource(&admin, "get", "", "deployments", "", "default", "d");
    assert_eq!(level(Some(&admin), &core), Level::None);
    // namespaces
    let audited = resource(&admin, "list", "", "secrets", "", "audited", "");
    assert_eq!(level(Some(&admin), &audited), Level::Request);
    // nonResourceURLs, with a trailing * and exact
    let url = |path| Attributes::non_resource(&admin, "get", path);
    assert_eq!(level(Some(&admin), &url("/healthz/ready")), Level::Metadata);
    assert_eq!(level(Some(&admin), &url("/version")), Level::Metadata);
    assert_eq!(level(Some(&admin), &url("/version/x")), Level::None);
    // a namespace rule never matches a non-resource request
    assert_eq!(level(Some(&admin), &url("/apis")), Level::None);
    // no user (failed authentication): user rules cannot match
    assert_eq!(level(None, &pods(&admin, "create", "")), Level::Metadata);
}

#[test]
fn omit_stages_union_with_the_policys_and_omit_managed_fields_overrides() {
    let policy = policy();
    let admin = user("admin", &[]);
    let special = resource(&admin, "get", "", "configmaps", "", "default", "special");
    let config = policy.evaluate(Some(&admin), &special);
    assert!(config.omit_stages.contains(Stage::RequestReceived));
    assert!(config.omit_stages.contains(Stage::ResponseStarted));
    assert!(!config.omit_stages.contains(Stage::ResponseComplete));
    assert!(config.omit_managed_fields);
    let log = resource(&admin, "get", "", "pods", "log", "default", "p");
    let config = policy.evaluate(Some(&admin), &log);
    assert!(config.omit_stages.contains(Stage::RequestReceived));
    assert!(!config.omit_stages.contains(Stage::ResponseStarted));
    assert!(!config.omit_managed_fields);
    // no rule matched: level None with the policy's own settings
    let pod = resource(&admin, "get", "", "pods", "", "default", "p");
    let config = policy.evaluate(Some(&admin), &pod);
    assert_eq!(config.level, Level::None);
}

#[test]
fn invalid_policies_fail_with_kubes_messages() {
    let cases: &[(&str, &str)] = &[
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- users: [a]\n",
            "rules[0].level: Required value",
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Everything\n",
            r#"rules[0].level: Unsupported value: "Everything": supported values: "None", "Metadata", "Request", "RequestResponse""#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  nonResourceURLs: [healthz, /a*b]\n",
            r#"[rules[0].nonResourceURLs[0]: Invalid value: "healthz": non-resource URL rules must begin with a '/' character, rules[0].nonResourceURLs[1]: Invalid value: "/a*b": non-resource URL wildcards '*' must be the final character of the rule]"#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  omitStages: [Sometime]\n",
            r#"rules[0].omitStages[0]: Invalid value: "Sometime": allowed stages are RequestReceived,ResponseStarted,ResponseComplete,Panic"#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - resourceNames: [x]\n",
            r#"rules[0].resources.resourceNames: Invalid value: []string{"x"}: using resourceNames requires at least one resource"#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  namespaces: [a]\n  nonResourceURLs: [/a]\n",
            r#"rules[0].nonResourceURLs: Invalid value: []string{"/a"}: rules cannot apply to both regular resources and non-resource URLs"#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n  resources:\n  - group: rbac.authorization.k8s.io/v1\n",
            r#"rules[0].resources.group: Invalid value: "rbac.authorization.k8s.io/v1": a lowercase RFC 1123 subdomain"#,
        ),
        (
            "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
            "loaded illegal policy with 0 rules",
        ),
        (
            "apiVersion: audit.k8s.io/v1beta1\nkind: Policy\nrules:\n- level: None\n",
            r#"failed decoding: no kind "Policy" is registered for version "audit.k8s.io/v1beta1""#,
        ),
        ("rules: []\n", "failed decoding: Object 'Kind' is missing"),
    ];
    for (text, expected) in cases {
        let error = Policy::parse(text.as_bytes()).unwrap_err();
        assert!(
            error.starts_with(expected),
            "{text}\n got: {error}\nwant: {expected}"
        );
    }
}

#[test]
fn a_policy_file_error_names_the_file() {
    let directory = tempfile::tempdir().unwrap();
    let path = directory.path().join("policy.yaml");
    std::fs::write(
        &path,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules: []\n",
    )
    .unwrap();
    let error = Policy::load(&path).unwrap_err().to_string();
    assert_eq!(
        error,
        format!(
            "loading audit policy file: loaded illegal policy with 0 rules: from file {}",
            path.display()
        )
    );
    let missing = directory.path().join("missing.yaml");
    let error = Policy::load(&missing).unwrap_err().to_string();
    assert!(
        error.starts_with("loading audit policy file: failed to read file path"),
        "{error}"
    );
}
