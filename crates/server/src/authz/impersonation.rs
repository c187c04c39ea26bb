//! User impersonation: `staging/src/k8s.io/apiserver/pkg/endpoints/filters/impersonation.go`
//! (`WithImpersonation`, `buildImpersonationRequests`).
//!
//! The `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` headers each name something the requestor must
//! be allowed to `impersonate` (users, serviceaccounts, groups, uids,
//! userextras/<key>); when every check passes, the request goes on as the
//! impersonated user, and its own authorization is done as that user.

use std::borrow::Cow;
use std::collections::BTreeMap;

use http::HeaderMap;

use super::{forbidden, Attributes, Authorizer};
use crate::authn::{UserInfo, ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER};
use crate::status::Status;

/// `authenticationv1.ImpersonateUserHeader` and its siblings, lowercase as
/// `http::HeaderMap` keeps names.
const USER_HEADER: &str = "impersonate-user";
const GROUP_HEADER: &str = "impersonate-group";
const UID_HEADER: &str = "impersonate-uid";
const EXTRA_HEADER_PREFIX: &str = "impersonate-extra-";
/// `serviceaccount.ServiceAccountUsernamePrefix`.
const SERVICE_ACCOUNT_PREFIX: &str = "system:serviceaccount:";
/// The group version of `UserExtra` and `UID` impersonation requests.
const AUTHENTICATION_V1: &str = "authentication.k8s.io/v1";

/// One thing the requestor asks to impersonate (`v1.ObjectReference` in
/// `buildImpersonationRequests`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    ServiceAccount { namespace: String, name: String },
    User(String),
    Group(String),
    UserExtra { key: String, value: String },
    Uid(String),
}

impl Request {
    /// Go's `%v` of the `v1.ObjectReference` value: its seven fields (Kind,
    /// Namespace, Name, UID, APIVersion, ResourceVersion, FieldPath)
    /// separated by spaces.
    fn go_value(&self) -> String {
        let (kind, namespace, name, api_version, field_path) = match self {
            Request::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Request::User(name) => ("User", "", name.as_str(), "", ""),
            Request::Group(name) => ("Group", "", name.as_str(), "", ""),
            Request::UserExtra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                AUTHENTICATION_V1,
                key.as_str(),
            ),
            Request::Uid(uid) => ("UID", "", uid.as_str(), AUTHENTICATION_V1, ""),
        };
        format!("{{{kind} {namespace} {name}  {api_version}  {field_path}}}")
    }
}

/// Whether a request carries any impersonation header (the caller leaves
/// the request alone otherwise).
pub fn has_impersonation_headers(headers: &HeaderMap) -> bool {
    headers
        .keys()
        .any(|name| name.as_str().starts_with("impersonate-"))
}

fn header_text(value: &http::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// `serviceaccount.SplitUsername`: namespace and name of a
/// `system:serviceaccount:<ns>:<name>` user whose parts are a valid
/// namespace and service-account name.
fn split_service_account(user: &str) -> Option<(String, String)> {
    let rest = user.strip_prefix(SERVICE_ACCOUNT_PREFIX)?;
    let mut parts = rest.split(':');
    let (namespace, name) = (parts.next()?, parts.next()?);
    if parts.next().is_some()
        || !crate::names::dns1123_label(namespace).is_empty()
        || !crate::names::dns1123_subdomain(name).is_empty()
    {
        return None;
    }
    Some((namespace.to_string(), name.to_string()))
}

/// Go's `url.PathUnescape`, falling back to the key as sent when it is
/// malformed (`unescapeExtraKey`).
fn unescape_extra_key(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = bytes
                .get(index + 1..index + 3)
                .and_then(|pair| std::str::from_utf8(pair).ok())
                .and_then(|pair| u8::from_str_radix(pair, 16).ok());
            match hex {
                Some(byte) => {
                    out.push(byte);
                    index += 3;
                    continue;
                }
                None => return encoded.to_string(),
            }
        }
        out.push(bytes[index]);
        index += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| encoded.to_string())
}

/// `buildImpersonationRequests`: what the headers ask for, in kube's order
/// (user, groups, extras, uid); 400 when groups, extras or a uid come
/// without a user.
fn requests_of(headers: &HeaderMap) -> Result<Vec<Request>, Status> {
    let mut requests = Vec::new();
    let user = headers
        .get(USER_HEADER)
        .map(header_text)
        .unwrap_or_default();
    let has_user = !user.is_empty();
    if has_user {
        requests.push(match split_service_account(&user) {
            Some((namespace, name)) => Request::ServiceAccount { namespace, name },
            None => Request::User(user),
        });
    }
    let mut has_others = false;
    for group in headers.get_all(GROUP_HEADER) {
        has_others = true;
        requests.push(Request::Group(header_text(group)));
    }
    for (name, value) in headers {
        let Some(key) = name.as_str().strip_prefix(EXTRA_HEADER_PREFIX) else {
            continue;
        };
        has_others = true;
        requests.push(Request::UserExtra {
            key: unescape_extra_key(key),
            value: header_text(value),
        });
    }
    let uid = headers.get(UID_HEADER).map(header_text).unwrap_or_default();
    if !uid.is_empty() {
        has_others = true;
        requests.push(Request::Uid(uid));
    }
    if has_others && !has_user {
        let listed: Vec<String> = requests.iter().map(Request::go_value).collect();
        return Err(Status::bad_request(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    Ok(requests)
}

/// `WithImpersonation`: `None` when the request impersonates no one, the
/// impersonated user when `requestor` may impersonate everything the
/// headers ask for, else kube's 400 or 403.
pub fn impersonate(
    authorizer: &Authorizer,
    requestor: &UserInfo,
    headers: &HeaderMap,
) -> Result<Option<UserInfo>, Status> {
    let requests = requests_of(headers)?;
    if requests.is_empty() {
        return Ok(None);
    }
    // Given groups are the authority; a service account's are its fixed
    // groups otherwise.
    let groups_specified = headers.contains_key(GROUP_HEADER);
    let mut name = String::new();
    let mut uid = String::new();
    let mut groups: Vec<String> = Vec::new();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for request in &requests {
        let (api_group, api_version, resource, subresource, namespace, object) = match request {
            Request::ServiceAccount {
                namespace,
                name: account,
            } => {
                name = format!("{SERVICE_ACCOUNT_PREFIX}{namespace}:{account}");
                if !groups_specified {
                    groups = vec![
                        "system:serviceaccounts".to_string(),
                        format!("system:serviceaccounts:{namespace}"),
                    ];
                }
                ("", "", "serviceaccounts", "", namespace.as_str(), account)
            }
            Request::User(user) => {
                name = user.clone();
                ("", "", "users", "", "", user)
            }
            Request::Group(group) => {
                groups.push(group.clone());
                ("", "", "groups", "", "", group)
            }
            Request::UserExtra { key, value } => {
                extra.entry(key.clone()).or_default().push(value.clone());
                (
                    "authentication.k8s.io",
                    "v1",
                    "userextras",
                    key.as_str(),
                    "",
                    value,
                )
            }
            Request::Uid(value) => {
                uid = value.clone();
                ("authentication.k8s.io", "v1", "uids", "", "", value)
            }
        };
        let attributes = Attributes {
            user: requestor,
            verb: "impersonate",
            resource_request: true,
            path: "",
            api_group,
            api_version,
            resource,
            subresource,
            namespace,
            name: Cow::Borrowed(object.as_str()),
        };
        let decision = authorizer.authorize(&attributes);
        if !decision.allowed() {
            return Err(forbidden(&attributes, &decision.reason));
        }
    }
    if name != ANONYMOUS_USER {
        if !groups
            .iter()
            .any(|group| group == ALL_AUTHENTICATED || group == ALL_UNAUTHENTICATED)
        {
            groups.push(ALL_AUTHENTICATED.to_string());
        }
    } else if !groups.iter().any(|group| group == ALL_UNAUTHENTICATED) {
        groups.push(ALL_UNAUTHENTICATED.to_string());
    }
    Ok(Some(UserInfo {
        name,
        uid,
        groups,
        extra,
    }))
}

/// Removes the impersonation headers once they were used, as kube does, so
/// nothing after this step reads them.
pub fn remove_impersonation_headers(headers: &mut HeaderMap) {
    let names: Vec<http::HeaderName> = headers
        .keys()
        .filter(|name| {
            let name = name.as_str();
            name == USER_HEADER
                || name == GROUP_HEADER
                || name == UID_HEADER
                || name.starts_with(EXTRA_HEADER_PREFIX)
        })
        .cloned()
        .collect();
    for name in names {
        headers.remove(name);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use serde_json::json;

    use super::*;
    use crate::authz::rbac::Rbac;
    use crate::authz::Mode;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                http::HeaderValue::from_str(value).unwrap(),
            );
        }
        map
    }

    fn user(name: &str, groups: &[&str]) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        }
    }

    /// `ops` may impersonate users and groups, `sa-ops` service accounts in
    /// `dev`, `extra-ops` the `scopes` extra and uids.
    fn authorizer() -> Authorizer {
        let role = |name: &str, rules: serde_json::Value| {
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": name}, "rules": rules})
        };
        let binding = |name: &str, user: &str| {
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": name},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]})
        };
        let objects = [
            (
                "/registry/clusterroles/ops",
                role(
                    "ops",
                    json!([{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users", "groups"]}]),
                ),
            ),
            ("/registry/clusterrolebindings/ops", binding("ops", "ops")),
            (
                "/registry/clusterroles/extra-ops",
                role(
                    "extra-ops",
                    json!([{"verbs": ["impersonate"], "apiGroups": [""], "resources": ["users"]},
                           {"verbs": ["impersonate"], "apiGroups": ["authentication.k8s.io"], "resources": ["userextras/scopes", "uids"]}]),
                ),
            ),
            (
                "/registry/clusterrolebindings/extra-ops",
                binding("extra-ops", "extra-ops"),
            ),
        ];
        let rbac = Rbac::from_objects(objects.iter().map(|(key, value)| (*key, value.clone())));
        Authorizer::with_rbac(&[Mode::Rbac], Arc::new(rbac))
    }

    #[test]
    fn no_headers_impersonate_no_one() {
        assert_eq!(
            impersonate(&authorizer(), &user("ops", &[]), &HeaderMap::new()),
            Ok(None)
        );
    }

    #[test]
    fn users_get_system_authenticated_unless_a_group_says_otherwise() {
        let authorizer = authorizer();
        let ops = user("ops", &[]);
        let jane = impersonate(&authorizer, &ops, &headers(&[("Impersonate-User", "jane")]))
            .unwrap()
            .unwrap();
        assert_eq!(jane, user("jane", &["system:authenticated"]));
        let jane = impersonate(
            &authorizer,
            &ops,
            &headers(&[
                ("Impersonate-User", "jane"),
                ("Impersonate-Group", "dev"),
                ("Impersonate-Group", "system:unauthenticated"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(jane, user("jane", &["dev", "system:unauthenticated"]));
        let anonymous = impersonate(
            &authorizer,
            &ops,
            &headers(&[("Impersonate-User", "system:anonymous")]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            anonymous,
            user("system:anonymous", &["system:unauthenticated"])
        );
    }

    #[test]
    fn refusals_are_kubes_403_and_400() {
        let authorizer = authorizer();
        let refused = impersonate(
            &authorizer,
            &user("jane", &[]),
            &headers(&[("Impersonate-User", "bob")]),
        )
        .unwrap_err();
        assert_eq!(refused.code, 403);
        assert_eq!(
            refused.message,
            r#"users "bob" is forbidden: User "jane" cannot impersonate resource "users" in API group "" at the cluster scope"#
        );
        // Service accounts are checked as serviceaccounts in their namespace.
        let refused = impersonate(
            &authorizer,
            &user("ops", &[]),
            &headers(&[("Impersonate-User", "system:serviceaccount:dev:bot")]),
        )
        .unwrap_err();
        assert_eq!(
            refused.message,
            r#"serviceaccounts "bot" is forbidden: User "ops" cannot impersonate resource "serviceaccounts" in API group "" in the namespace "dev""#
        );
        // An extra key is the subresource of userextras.
        let refused = impersonate(
            &authorizer,
            &user("extra-ops", &[]),
            &headers(&[
                ("Impersonate-User", "bob"),
                ("Impersonate-Extra-Project", "p1"),
            ]),
        )
        .unwrap_err();
        assert_eq!(
            refused.message,
            r#"userextras.authentication.k8s.io "p1" is forbidden: User "extra-ops" cannot impersonate resource "userextras/project" in API group "authentication.k8s.io" at the cluster scope"#
        );
        let refused = impersonate(
            &authorizer,
            &user("ops", &[]),
            &headers(&[
                ("Impersonate-Group", "dev"),
                ("Impersonate-Extra-Scopes", "a"),
                ("Impersonate-Uid", "u-1"),
            ]),
        )
        .unwrap_err();
        assert_eq!(refused.code, 400);
        assert_eq!(
            refused.message,
            "requested [{Group  dev    } {UserExtra  a  authentication.k8s.io/v1  scopes} {UID  u-1  authentication.k8s.io/v1  }] without impersonating a user"
        );
    }

    #[test]
    fn extras_uids_and_service_accounts_are_impersonated() {
        let authorizer = authorizer();
        let bob = impersonate(
            &authorizer,
            &user("extra-ops", &[]),
            &headers(&[
                ("Impersonate-User", "bob"),
                ("Impersonate-Extra-Scopes", "a"),
                ("Impersonate-Extra-Scopes", "b"),
                ("Impersonate-Uid", "u-1"),
            ]),
        )
        .unwrap()
        .unwrap();
        assert_eq!(bob.uid, "u-1");
        assert_eq!(
            bob.extra.get("scopes"),
            Some(&vec!["a".to_string(), "b".to_string()])
        );
        assert_eq!(
            unescape_extra_key("example.org%2fscope"),
            "example.org/scope"
        );
        assert_eq!(unescape_extra_key("bad%zz"), "bad%zz");
        assert_eq!(
            split_service_account("system:serviceaccount:dev:bot"),
            Some(("dev".into(), "bot".into()))
        );
        assert_eq!(split_service_account("system:serviceaccount:dev"), None);
        assert_eq!(split_service_account("system:serviceaccount:Dev:bot"), None);
        let mut map = headers(&[
            ("Impersonate-User", "bob"),
            ("Impersonate-Extra-Scopes", "a"),
            ("Accept", "application/json"),
        ]);
        remove_impersonation_headers(&mut map);
        assert_eq!(map.len(), 1);
    }
}
