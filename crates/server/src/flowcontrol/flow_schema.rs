//! FlowSchemas compiled for matching, as kube's `apf_filter`/`rule.go`
//! (`staging/src/k8s.io/apiserver/pkg/util/flowcontrol/rule.go`,
//! `matchesFlowSchema`): a request matches a schema when one of its
//! `rules` has a subject matching the user and a resource rule (resource
//! requests) or non-resource rule (the others) matching the request.
//! Compiled once per configuration change, so matching a request only
//! compares strings.

use serde_json::Value;

use crate::authz::Attributes;

/// `flowcontrol.FlowDistinguisherMethodType`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distinguisher {
    None,
    ByUser,
    ByNamespace,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Subject {
    User(String),
    Group(String),
    /// `namespace`, `name` (`*`: every service account of the namespace).
    ServiceAccount(String, String),
}

#[derive(Debug, Clone, Default)]
struct ResourceRule {
    verbs: Vec<String>,
    api_groups: Vec<String>,
    resources: Vec<String>,
    namespaces: Vec<String>,
    cluster_scope: bool,
}

#[derive(Debug, Clone, Default)]
struct NonResourceRule {
    verbs: Vec<String>,
    urls: Vec<String>,
}

#[derive(Debug, Clone, Default)]
struct PolicyRules {
    subjects: Vec<Subject>,
    resource_rules: Vec<ResourceRule>,
    non_resource_rules: Vec<NonResourceRule>,
}

/// One FlowSchema, ready for matching.
#[derive(Debug, Clone)]
pub struct CompiledFlowSchema {
    pub name: String,
    pub uid: String,
    pub priority_level: String,
    pub matching_precedence: i64,
    pub distinguisher: Distinguisher,
    rules: Vec<PolicyRules>,
}

fn strings(value: &Value) -> Vec<String> {
    crate::object::string_list(Some(value))
}

fn text(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn subject(value: &Value) -> Option<Subject> {
    match value["kind"].as_str()? {
        "User" => Some(Subject::User(text(&value["user"]["name"]))),
        "Group" => Some(Subject::Group(text(&value["group"]["name"]))),
        "ServiceAccount" => Some(Subject::ServiceAccount(
            text(&value["serviceAccount"]["namespace"]),
            text(&value["serviceAccount"]["name"]),
        )),
        _ => None,
    }
}

impl CompiledFlowSchema {
    /// A stored FlowSchema (validated on write, so missing fields read as empty).
    pub fn compile(object: &Value) -> CompiledFlowSchema {
        let spec = &object["spec"];
        let distinguisher = match spec["distinguisherMethod"]["type"].as_str() {
            Some("ByUser") => Distinguisher::ByUser,
            Some("ByNamespace") => Distinguisher::ByNamespace,
            _ => Distinguisher::None,
        };
        let rules = spec["rules"]
            .as_array()
            .map(|rules| {
                rules
                    .iter()
                    .map(|rule| PolicyRules {
                        subjects: rule["subjects"]
                            .as_array()
                            .map(|subjects| subjects.iter().filter_map(subject).collect())
                            .unwrap_or_default(),
                        resource_rules: rule["resourceRules"]
                            .as_array()
                            .map(|rules| {
                                rules
                                    .iter()
                                    .map(|rule| ResourceRule {
                                        verbs: strings(&rule["verbs"]),
                                        api_groups: strings(&rule["apiGroups"]),
                                        resources: strings(&rule["resources"]),
                                        namespaces: strings(&rule["namespaces"]),
                                        cluster_scope: rule["clusterScope"]
                                            .as_bool()
                                            .unwrap_or(false),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                        non_resource_rules: rule["nonResourceRules"]
                            .as_array()
                            .map(|rules| {
                                rules
                                    .iter()
                                    .map(|rule| NonResourceRule {
                                        verbs: strings(&rule["verbs"]),
                                        urls: strings(&rule["nonResourceURLs"]),
                                    })
                                    .collect()
                            })
                            .unwrap_or_default(),
                    })
                    .collect()
            })
            .unwrap_or_default();
        CompiledFlowSchema {
            name: text(&object["metadata"]["name"]),
            uid: text(&object["metadata"]["uid"]),
            priority_level: text(&spec["priorityLevelConfiguration"]["name"]),
            matching_precedence: spec["matchingPrecedence"].as_i64().unwrap_or(1000),
            distinguisher,
            rules,
        }
    }

    /// `matchesFlowSchema`.
    pub fn matches(&self, request: &Attributes<'_>) -> bool {
        self.rules.iter().any(|rules| {
            rules
                .subjects
                .iter()
                .any(|subject| matches_subject(subject, request))
                && if request.resource_request {
                    rules
                        .resource_rules
                        .iter()
                        .any(|rule| matches_resource_rule(rule, request))
                } else {
                    rules
                        .non_resource_rules
                        .iter()
                        .any(|rule| matches_non_resource_rule(rule, request))
                }
        })
    }

    /// `computeFlowDistinguisher`.
    pub fn flow_distinguisher<'a>(&self, request: &Attributes<'a>) -> &'a str {
        match self.distinguisher {
            Distinguisher::None => "",
            Distinguisher::ByUser => &request.user.name,
            Distinguisher::ByNamespace => request.namespace,
        }
    }
}

/// `containsString` with kube's wildcard.
fn contains(items: &[String], seek: &str, wildcard: &str) -> bool {
    items.iter().any(|item| item == seek || item == wildcard)
}

const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";

/// `matchesSubject`.
fn matches_subject(subject: &Subject, request: &Attributes<'_>) -> bool {
    let user = request.user;
    match subject {
        Subject::User(name) => name == "*" || *name == user.name,
        Subject::Group(name) => name == "*" || user.groups.iter().any(|group| group == name),
        Subject::ServiceAccount(namespace, name) => {
            let Some(rest) = user.name.strip_prefix(SERVICE_ACCOUNT_PREFIX) else {
                return false;
            };
            let Some((user_namespace, user_name)) = rest.split_once(':') else {
                return false;
            };
            // `serviceAccountMatchesNamespace` / `MatchesUsername`.
            user_namespace == namespace
                && (name == "*" || (user_name == name && !user_name.contains(':')))
        }
    }
}

/// `matchesResourcePolicyRule`.
fn matches_resource_rule(rule: &ResourceRule, request: &Attributes<'_>) -> bool {
    if !contains(&rule.verbs, request.verb, "*") {
        return false;
    }
    let resource_matches = if request.subresource.is_empty() {
        contains(&rule.resources, request.resource, "*")
    } else {
        // `matchPolicyRuleResource`: "resource/subresource".
        rule.resources.iter().any(|item| {
            item == "*"
                || item
                    .strip_prefix(request.resource)
                    .and_then(|rest| rest.strip_prefix('/'))
                    == Some(request.subresource)
        })
    };
    if !resource_matches || !contains(&rule.api_groups, request.api_group, "*") {
        return false;
    }
    if request.namespace.is_empty() {
        return rule.cluster_scope;
    }
    contains(&rule.namespaces, request.namespace, "*")
}

/// `matchesNonResourceRule` / `matchPolicyRuleNonResourceURL`.
fn matches_non_resource_rule(rule: &NonResourceRule, request: &Attributes<'_>) -> bool {
    if !contains(&rule.verbs, request.verb, "*") {
        return false;
    }
    let path = request.path;
    rule.urls.iter().any(|url| {
        if url == "*" || url == path {
            return true;
        }
        match url.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => path
                .strip_prefix(url.as_str())
                .is_some_and(|rest| rest.starts_with('/')),
        }
    })
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;
    use crate::authn::UserInfo;
    use crate::flowcontrol::bootstrap;

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|group| (*group).to_string()).collect(),
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
    ) -> Attributes<'a> {
        Attributes {
            resource_request: true,
            api_group: group,
            resource,
            subresource,
            namespace,
            name: Cow::Borrowed(""),
            ..Attributes::non_resource(user, verb, "/apis/x")
        }
    }

    /// The name of the first matching bootstrap schema, by precedence then name.
    fn classify(request: &Attributes<'_>) -> String {
        let mut schemas: Vec<CompiledFlowSchema> = bootstrap::mandatory_flow_schemas()
            .iter()
            .chain(bootstrap::suggested_flow_schemas().iter())
            .map(CompiledFlowSchema::compile)
            .collect();
        schemas.sort_by(|a, b| {
            (a.matching_precedence, &a.name).cmp(&(b.matching_precedence, &b.name))
        });
        schemas
            .iter()
            .find(|schema| schema.matches(request))
            .map(|schema| schema.name.clone())
            .unwrap_or_default()
    }

    #[test]
    fn bootstrap_schemas_classify_as_kube_does() {
        let admin = user("admin", &["system:masters", "system:authenticated"]);
        assert_eq!(
            classify(&resource(&admin, "list", "", "pods", "", "a")),
            "exempt"
        );
        let node = user("system:node:n1", &["system:nodes", "system:authenticated"]);
        assert_eq!(
            classify(&resource(&node, "patch", "", "nodes", "status", "")),
            "system-node-high"
        );
        assert_eq!(
            classify(&resource(
                &node,
                "update",
                "coordination.k8s.io",
                "leases",
                "",
                "kube-node-lease"
            )),
            "system-node-high"
        );
        assert_eq!(
            classify(&resource(&node, "list", "", "pods", "", "a")),
            "system-nodes"
        );
        let controller = user(
            "system:serviceaccount:kube-system:deployment-controller",
            &[
                "system:serviceaccounts",
                "system:serviceaccounts:kube-system",
                "system:authenticated",
            ],
        );
        assert_eq!(
            classify(&resource(
                &controller,
                "list",
                "apps",
                "deployments",
                "",
                "x"
            )),
            "kube-system-service-accounts"
        );
        assert_eq!(
            classify(&resource(
                &controller,
                "update",
                "coordination.k8s.io",
                "leases",
                "",
                "kube-system"
            )),
            "system-leader-election"
        );
        let endpoints = user(
            "system:serviceaccount:kube-system:endpoint-controller",
            &["system:serviceaccounts", "system:authenticated"],
        );
        assert_eq!(
            classify(&resource(&endpoints, "update", "", "endpoints", "", "x")),
            "endpoint-controller"
        );
        let manager = user("system:kube-controller-manager", &["system:authenticated"]);
        assert_eq!(
            classify(&resource(&manager, "list", "", "secrets", "", "")),
            "kube-controller-manager"
        );
        let scheduler = user("system:kube-scheduler", &["system:authenticated"]);
        assert_eq!(
            classify(&resource(&scheduler, "create", "", "pods", "binding", "x")),
            "kube-scheduler"
        );
        let workload = user(
            "system:serviceaccount:dev:builder",
            &["system:serviceaccounts", "system:authenticated"],
        );
        assert_eq!(
            classify(&resource(&workload, "get", "", "configmaps", "", "dev")),
            "service-accounts"
        );
        let jane = user("jane", &["system:authenticated"]);
        assert_eq!(
            classify(&resource(&jane, "get", "", "configmaps", "", "dev")),
            "global-default"
        );
        let anonymous = user("system:anonymous", &["system:unauthenticated"]);
        assert_eq!(
            classify(&Attributes::non_resource(&anonymous, "get", "/readyz")),
            "probes"
        );
        assert_eq!(
            classify(&Attributes::non_resource(&anonymous, "get", "/readyz/ping")),
            "probes"
        );
        assert_eq!(
            classify(&Attributes::non_resource(&anonymous, "get", "/readyzz")),
            "global-default"
        );
        assert_eq!(
            classify(&Attributes::non_resource(&anonymous, "post", "/healthz")),
            "global-default"
        );
        let nobody = user("nobody", &[]);
        assert_eq!(classify(&resource(&nobody, "get", "", "pods", "", "a")), "");
    }

    #[test]
    fn distinguishers_and_subresources() {
        let schema = CompiledFlowSchema::compile(&serde_json::json!({
            "metadata": {"name": "s", "uid": "u"},
            "spec": {
                "priorityLevelConfiguration": {"name": "p"},
                "matchingPrecedence": 5,
                "distinguisherMethod": {"type": "ByNamespace"},
                "rules": [{
                    "subjects": [{"kind": "ServiceAccount", "serviceAccount": {"namespace": "ns", "name": "sa"}}],
                    "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods/log"], "namespaces": ["*"]}],
                }],
            },
        }));
        let account = user("system:serviceaccount:ns:sa", &[]);
        let other = user("system:serviceaccount:ns:sa2", &[]);
        let log = resource(&account, "get", "", "pods", "log", "team");
        assert!(schema.matches(&log));
        assert_eq!(schema.flow_distinguisher(&log), "team");
        assert!(!schema.matches(&resource(&account, "get", "", "pods", "", "team")));
        assert!(!schema.matches(&resource(&other, "get", "", "pods", "log", "team")));
        // Namespaced rules never match cluster-scoped requests.
        assert!(!schema.matches(&resource(&account, "get", "", "pods", "log", "")));
    }
}
