//! The access reviews of `authorization.k8s.io/v1`, as pure functions of
//! the decoded review and the authorizer (`api/reviews.rs` is the handler):
//!
//! - validation: `pkg/apis/authorization/validation/validation.go`
//!   (`ValidateSubjectAccessReviewSpec`, `ValidateSelfSubjectAccessReviewSpec`,
//!   `ValidateSubjectAccessReview`, `ValidateSelfSubjectAccessReview`,
//!   `ValidateLocalSubjectAccessReview`);
//! - attributes: `pkg/registry/authorization/util/helpers.go`
//!   (`ResourceAttributesFrom`, `NonResourceAttributesFrom`,
//!   `AuthorizationAttributesFrom`);
//! - answers: `pkg/registry/authorization/{subjectaccessreview,
//!   selfsubjectaccessreview,localsubjectaccessreview,selfsubjectrulesreview}/rest.go`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use super::{Attributes, Authorizer, Verdict};
use crate::authn::UserInfo;
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind, Status};

/// The group of every access review.
pub const GROUP: &str = "authorization.k8s.io";

/// The kinds of access review, each with its own validation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewKind {
    SubjectAccessReview,
    SelfSubjectAccessReview,
    LocalSubjectAccessReview,
}

/// `authorizationv1.ResourceAttributes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceAttributes {
    pub namespace: String,
    pub verb: String,
    pub group: String,
    pub version: String,
    pub resource: String,
    pub subresource: String,
    pub name: String,
    pub field_selector: Option<SelectorAttributes>,
    pub label_selector: Option<SelectorAttributes>,
}

/// `FieldSelectorAttributes` / `LabelSelectorAttributes`, as far as
/// validation reads them (RBAC does not evaluate selectors).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SelectorAttributes {
    pub raw_selector: String,
    pub requirements: usize,
}

impl SelectorAttributes {
    fn of(value: &Value) -> SelectorAttributes {
        SelectorAttributes {
            raw_selector: string_of(value, "rawSelector"),
            requirements: value
                .get("requirements")
                .and_then(Value::as_array)
                .map_or(0, Vec::len),
        }
    }

    /// `validateFieldSelectorAttributes` / `validateLabelSelectorAttributes`
    /// (without the per-requirement checks).
    fn validate(&self, path: &str, errors: &mut Vec<FieldError>) {
        if !self.raw_selector.is_empty() && self.requirements > 0 {
            errors.push(FieldError::invalid(
                &format!("{path}.rawSelector"),
                &self.raw_selector,
                "may not specified at the same time as requirements",
            ));
        }
        if self.raw_selector.is_empty() && self.requirements == 0 {
            errors.push(FieldError::required(
                &format!("{path}.requirements"),
                format!("when {path} is specified, requirements or rawSelector is required"),
            ));
        }
    }
}

/// `authorizationv1.NonResourceAttributes`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NonResourceAttributes {
    pub path: String,
    pub verb: String,
}

/// `SubjectAccessReviewSpec` (a SelfSubjectAccessReview's spec has only the
/// two attribute members).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReviewSpec {
    pub resource_attributes: Option<ResourceAttributes>,
    pub non_resource_attributes: Option<NonResourceAttributes>,
    pub user: String,
    pub groups: Vec<String>,
    pub uid: String,
    pub extra: BTreeMap<String, Vec<String>>,
}

fn string_of(object: &Value, member: &str) -> String {
    object
        .get(member)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn strings_of(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .map(|items| {
            items
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// A member that is an object (`null` is absent, as Go decodes a nil pointer).
fn object_member<'a>(object: &'a Value, member: &str) -> Option<&'a Value> {
    object.get(member).filter(|value| value.is_object())
}

impl ReviewSpec {
    /// The spec of a decoded review (already checked by the typed decoder).
    pub fn from_review(review: &Value) -> ReviewSpec {
        let spec = review.get("spec").cloned().unwrap_or_else(|| json!({}));
        let resource_attributes =
            object_member(&spec, "resourceAttributes").map(|attributes| ResourceAttributes {
                namespace: string_of(attributes, "namespace"),
                verb: string_of(attributes, "verb"),
                group: string_of(attributes, "group"),
                version: string_of(attributes, "version"),
                resource: string_of(attributes, "resource"),
                subresource: string_of(attributes, "subresource"),
                name: string_of(attributes, "name"),
                field_selector: object_member(attributes, "fieldSelector")
                    .map(SelectorAttributes::of),
                label_selector: object_member(attributes, "labelSelector")
                    .map(SelectorAttributes::of),
            });
        let non_resource_attributes =
            object_member(&spec, "nonResourceAttributes").map(|attributes| NonResourceAttributes {
                path: string_of(attributes, "path"),
                verb: string_of(attributes, "verb"),
            });
        let extra = spec
            .get("extra")
            .and_then(Value::as_object)
            .map(|extra| {
                extra
                    .iter()
                    .map(|(key, values)| (key.clone(), strings_of(Some(values))))
                    .collect()
            })
            .unwrap_or_default();
        ReviewSpec {
            resource_attributes,
            non_resource_attributes,
            user: string_of(&spec, "user"),
            groups: strings_of(spec.get("groups")),
            uid: string_of(&spec, "uid"),
            extra,
        }
    }

    /// `AuthorizationAttributesFrom`'s user: the spec's, as given (no
    /// `system:authenticated` is added).
    pub fn subject(&self) -> UserInfo {
        UserInfo {
            name: self.user.clone(),
            uid: self.uid.clone(),
            groups: self.groups.clone(),
            extra: self.extra.clone(),
        }
    }
}

/// Go's `%#v` of an internal `authorization.NonResourceAttributes`.
fn non_resource_go_value(attributes: &NonResourceAttributes) -> String {
    format!(
        "authorization.NonResourceAttributes{{Path:{}, Verb:{}}}",
        quote(&attributes.path),
        quote(&attributes.verb)
    )
}

/// A field error whose value is already rendered (`field.Invalid` of a
/// struct, printed with `%#v`).
fn invalid_rendered(field: &str, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field: field.to_string(),
        detail: detail.to_string(),
    }
}

/// Go's `%#v` of a `map[string]string` (nil when absent; keys sorted).
fn string_map_go_value(value: Option<&Value>) -> String {
    let Some(map) = value.and_then(Value::as_object) else {
        return "map[string]string(nil)".to_string();
    };
    let members: Vec<String> = map
        .iter()
        .map(|(key, value)| {
            format!(
                "{}:{}",
                quote(key),
                quote(value.as_str().unwrap_or_default())
            )
        })
        .collect();
    format!("map[string]string{{{}}}", members.join(", "))
}

/// Go's `%#v` of the `metav1.ObjectMeta` a review carries, for the
/// "must be empty" errors: its string members, labels, annotations and
/// finalizers as sent; the members a review never sensibly carries
/// (timestamps, owner references) in their zero form.
fn object_meta_go_value(metadata: &Map<String, Value>) -> String {
    let text = |member: &str| quote(metadata.get(member).and_then(Value::as_str).unwrap_or(""));
    let finalizers = match metadata.get("finalizers").and_then(Value::as_array) {
        Some(items) => {
            crate::go::fmt::sharp_v_strings(&strings_of(Some(&Value::Array(items.clone()))))
        }
        None => "[]string(nil)".to_string(),
    };
    format!(
        "v1.ObjectMeta{{Name:{}, GenerateName:{}, Namespace:{}, SelfLink:{}, UID:{}, ResourceVersion:{}, Generation:{}, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:{}, Annotations:{}, OwnerReferences:[]v1.OwnerReference(nil), Finalizers:{}, ManagedFields:[]v1.ManagedFieldsEntry(nil)}}",
        text("name"),
        text("generateName"),
        text("namespace"),
        text("selfLink"),
        text("uid"),
        text("resourceVersion"),
        metadata.get("generation").and_then(Value::as_i64).unwrap_or(0),
        string_map_go_value(metadata.get("labels")),
        string_map_go_value(metadata.get("annotations")),
        finalizers,
    )
}

/// Whether the metadata is `metav1.ObjectMeta{}` once `managedFields` (and,
/// for a LocalSubjectAccessReview, `namespace`) are cleared: members that
/// decode to their zero value do not count.
fn metadata_is_empty(metadata: &Map<String, Value>, except_namespace: bool) -> bool {
    metadata.iter().all(|(member, value)| {
        if member == "managedFields" || (except_namespace && member == "namespace") {
            return true;
        }
        match value {
            Value::Null => true,
            Value::String(text) => text.is_empty(),
            Value::Number(number) => number.as_i64() == Some(0),
            Value::Array(items) => items.is_empty() && member != "finalizers",
            Value::Object(map) => map.is_empty() && member != "labels" && member != "annotations",
            Value::Bool(_) => false,
        }
    })
}

/// The validation of `kind` (`pkg/apis/authorization/validation`): the
/// field errors of the review, in kube's order.
pub fn validate(kind: ReviewKind, review: &Value, spec: &ReviewSpec) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if spec.resource_attributes.is_some() {
        if let Some(non_resource) = &spec.non_resource_attributes {
            errors.push(invalid_rendered(
                "spec.nonResourceAttributes",
                non_resource_go_value(non_resource),
                "cannot be specified in combination with resourceAttributes",
            ));
        }
    }
    if spec.resource_attributes.is_none() && spec.non_resource_attributes.is_none() {
        errors.push(FieldError::invalid(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    if kind != ReviewKind::SelfSubjectAccessReview && spec.user.is_empty() && spec.groups.is_empty()
    {
        errors.push(FieldError::invalid(
            "spec.user",
            &spec.user,
            "at least one of user or group must be specified",
        ));
    }
    // `validateResourceAttributes`.
    if let Some(attributes) = &spec.resource_attributes {
        if let Some(selector) = &attributes.field_selector {
            selector.validate("spec.resourceAttributes.fieldSelector", &mut errors);
        }
        if let Some(selector) = &attributes.label_selector {
            selector.validate("spec.resourceAttributes.labelSelector", &mut errors);
        }
    }
    let empty = Map::new();
    let metadata = review
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let local = kind == ReviewKind::LocalSubjectAccessReview;
    if !metadata_is_empty(metadata, local) {
        let detail = if local {
            "must be empty except for namespace"
        } else {
            "must be empty"
        };
        errors.push(invalid_rendered(
            "metadata",
            object_meta_go_value(metadata),
            detail,
        ));
    }
    if local {
        let namespace = metadata
            .get("namespace")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if let Some(attributes) = &spec.resource_attributes {
            if attributes.namespace != namespace {
                errors.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    &attributes.namespace,
                    "must match metadata.namespace",
                ));
            }
        }
        if let Some(non_resource) = &spec.non_resource_attributes {
            errors.push(invalid_rendered(
                "spec.nonResourceAttributes",
                non_resource_go_value(non_resource),
                "disallowed on this kind of request",
            ));
        }
    }
    errors
}

/// The 422 of an invalid review: `NewInvalid(authorizationapi.Kind(obj.Kind), "", errs)`,
/// where the decoded internal object's kind is empty, so kube's message
/// starts `.authorization.k8s.io "" is invalid`.
pub fn invalid(errors: &[FieldError]) -> Status {
    Status::invalid(GROUP, "", "", errors)
}

/// `SubjectAccessReviewStatus` of authorizing `user` as the spec asks
/// (`ResourceAttributesFrom` / `NonResourceAttributesFrom`; an empty
/// version matches every version).
pub fn review_status(authorizer: &Authorizer, user: &UserInfo, spec: &ReviewSpec) -> Value {
    let attributes = match (&spec.resource_attributes, &spec.non_resource_attributes) {
        (Some(resource), _) => Attributes {
            user,
            verb: &resource.verb,
            resource_request: true,
            path: "",
            api_group: &resource.group,
            api_version: if resource.version.is_empty() {
                "*"
            } else {
                &resource.version
            },
            resource: &resource.resource,
            subresource: &resource.subresource,
            namespace: &resource.namespace,
            name: Cow::Borrowed(&resource.name),
        },
        (None, Some(non_resource)) => {
            Attributes::non_resource(user, &non_resource.verb, &non_resource.path)
        }
        (None, None) => Attributes::non_resource(user, "", ""),
    };
    let decision = authorizer.authorize(&attributes);
    let mut status = Map::new();
    status.insert(
        "allowed".into(),
        Value::Bool(decision.verdict == Verdict::Allow),
    );
    if decision.verdict == Verdict::Deny {
        status.insert("denied".into(), Value::Bool(true));
    }
    if !decision.reason.is_empty() {
        status.insert("reason".into(), Value::String(decision.reason));
    }
    let evaluation_error = selector_parse_errors(spec).join("; ");
    if !evaluation_error.is_empty() {
        status.insert("evaluationError".into(), Value::String(evaluation_error));
    }
    Value::Object(status)
}

/// `BuildEvaluationError`'s notes on raw selectors that do not parse (the
/// authorizer then sees no selector; RBAC never reads them).
fn selector_parse_errors(spec: &ReviewSpec) -> Vec<&'static str> {
    let mut errors = Vec::new();
    let Some(attributes) = &spec.resource_attributes else {
        return errors;
    };
    let raw = |selector: &Option<SelectorAttributes>| {
        selector
            .as_ref()
            .filter(|selector| selector.requirements == 0 && !selector.raw_selector.is_empty())
            .map(|selector| selector.raw_selector.clone())
    };
    if let Some(selector) = raw(&attributes.field_selector) {
        if crate::selector::FieldSelector::parse(&selector).is_err() {
            errors.push("spec.resourceAttributes.fieldSelector ignored due to parse error");
        }
    }
    if let Some(selector) = raw(&attributes.label_selector) {
        if crate::selector::LabelSelector::parse(&selector).is_err() {
            errors.push("spec.resourceAttributes.labelSelector ignored due to parse error");
        }
    }
    errors
}

/// `SubjectRulesReviewStatus` of the rules `user` holds in `namespace`
/// (`RBACAuthorizer.RulesFor`: a rule with resources is a resource rule, one
/// with non-resource URLs a non-resource rule).
pub fn rules_review_status(authorizer: &Authorizer, user: &UserInfo, namespace: &str) -> Value {
    let resolved = authorizer.rules_for(user, namespace);
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    for rule in &resolved.rules {
        if !rule.resources.is_empty() {
            let mut out = Map::new();
            out.insert("verbs".into(), json!(rule.verbs));
            if !rule.api_groups.is_empty() {
                out.insert("apiGroups".into(), json!(rule.api_groups));
            }
            out.insert("resources".into(), json!(rule.resources));
            if !rule.resource_names.is_empty() {
                out.insert("resourceNames".into(), json!(rule.resource_names));
            }
            resource_rules.push(Value::Object(out));
        }
        if !rule.non_resource_urls.is_empty() {
            non_resource_rules.push(json!({
                "verbs": rule.verbs,
                "nonResourceURLs": rule.non_resource_urls,
            }));
        }
    }
    let mut status = Map::new();
    status.insert("resourceRules".into(), Value::Array(resource_rules));
    status.insert("nonResourceRules".into(), Value::Array(non_resource_rules));
    status.insert("incomplete".into(), Value::Bool(resolved.incomplete));
    if !resolved.errors.is_empty() {
        status.insert(
            "evaluationError".into(),
            Value::String(crate::go::errors::aggregate(&resolved.errors)),
        );
    }
    Value::Object(status)
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::authz::rbac::Rbac;
    use crate::authz::Mode;

    fn messages(kind: ReviewKind, review: Value) -> String {
        let spec = ReviewSpec::from_review(&review);
        invalid(&validate(kind, &review, &spec)).message
    }

    #[test]
    fn validation_errors_are_kubes() {
        assert_eq!(
            messages(ReviewKind::SubjectAccessReview, json!({"spec": {}})),
            r#".authorization.k8s.io "" is invalid: [spec.resourceAttributes: Invalid value: "null": exactly one of nonResourceAttributes or resourceAttributes must be specified, spec.user: Invalid value: "": at least one of user or group must be specified]"#
        );
        assert_eq!(
            messages(
                ReviewKind::SelfSubjectAccessReview,
                json!({"spec": {"resourceAttributes": {"verb": "get"}, "nonResourceAttributes": {"path": "/x", "verb": "get"}}})
            ),
            r#".authorization.k8s.io "" is invalid: spec.nonResourceAttributes: Invalid value: authorization.NonResourceAttributes{Path:"/x", Verb:"get"}: cannot be specified in combination with resourceAttributes"#
        );
        assert_eq!(
            messages(
                ReviewKind::LocalSubjectAccessReview,
                json!({"metadata": {"namespace": "dev"}, "spec": {"user": "jane", "resourceAttributes": {"namespace": "prod", "verb": "get"}}})
            ),
            r#".authorization.k8s.io "" is invalid: spec.resourceAttributes.namespace: Invalid value: "prod": must match metadata.namespace"#
        );
        assert_eq!(
            messages(
                ReviewKind::SelfSubjectAccessReview,
                json!({"metadata": {"name": "x", "creationTimestamp": null}, "spec": {"nonResourceAttributes": {"path": "/x", "verb": "get"}}})
            ),
            r#".authorization.k8s.io "" is invalid: metadata: Invalid value: v1.ObjectMeta{Name:"x", GenerateName:"", Namespace:"", SelfLink:"", UID:"", ResourceVersion:"", Generation:0, CreationTimestamp:time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC), DeletionTimestamp:<nil>, DeletionGracePeriodSeconds:(*int64)(nil), Labels:map[string]string(nil), Annotations:map[string]string(nil), OwnerReferences:[]v1.OwnerReference(nil), Finalizers:[]string(nil), ManagedFields:[]v1.ManagedFieldsEntry(nil)}: must be empty"#
        );
        assert_eq!(
            messages(
                ReviewKind::SelfSubjectAccessReview,
                json!({"spec": {"resourceAttributes": {"verb": "list", "resource": "pods",
                    "fieldSelector": {"rawSelector": "a=b", "requirements": [{"key": "a", "operator": "In", "values": ["b"]}]},
                    "labelSelector": {}}}})
            ),
            r#".authorization.k8s.io "" is invalid: [spec.resourceAttributes.fieldSelector.rawSelector: Invalid value: "a=b": may not specified at the same time as requirements, spec.resourceAttributes.labelSelector.requirements: Required value: when spec.resourceAttributes.labelSelector is specified, requirements or rawSelector is required]"#
        );
        // kubectl's bodies carry `creationTimestamp: null` only: valid.
        let review = json!({"metadata": {"creationTimestamp": null}, "spec": {"nonResourceAttributes": {"path": "/x", "verb": "get"}}});
        let spec = ReviewSpec::from_review(&review);
        assert!(validate(ReviewKind::SelfSubjectAccessReview, &review, &spec).is_empty());
    }

    #[test]
    fn statuses_answer_as_the_authorizer_decides() {
        let objects = [
            (
                "/registry/clusterroles/r",
                json!({"metadata": {"name": "r"}, "rules": [
                    {"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "pods/log"], "resourceNames": ["p"]},
                    {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}),
            ),
            (
                "/registry/clusterrolebindings/b",
                json!({"metadata": {"name": "b"},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "r"},
                       "subjects": [{"kind": "User", "name": "jane"}]}),
            ),
            (
                "/registry/rolebindings/dev/gone",
                json!({"metadata": {"name": "gone", "namespace": "dev"},
                       "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "gone"},
                       "subjects": [{"kind": "User", "name": "jane"}]}),
            ),
        ];
        let rbac = Rbac::from_objects(objects.iter().map(|(key, value)| (*key, value.clone())));
        let authorizer = Authorizer::with_rbac(&[Mode::Rbac], Arc::new(rbac));
        let jane = UserInfo {
            name: "jane".into(),
            ..UserInfo::default()
        };
        let spec = ReviewSpec::from_review(&json!({"spec": {"resourceAttributes":
            {"verb": "get", "resource": "pods", "subresource": "log", "name": "p", "namespace": "x"}}}));
        let status = review_status(&authorizer, &jane, &spec);
        assert_eq!(status["allowed"], json!(true));
        assert_eq!(
            status["reason"],
            json!(r#"RBAC: allowed by ClusterRoleBinding "b" of ClusterRole "r" to User "jane""#)
        );
        let spec = ReviewSpec::from_review(&json!({"spec": {"resourceAttributes": {
            "verb": "list", "resource": "pods", "namespace": "x",
            "fieldSelector": {"rawSelector": "key in value"}, "labelSelector": {"rawSelector": "&"}}}}));
        assert_eq!(
            review_status(&authorizer, &jane, &spec),
            json!({"allowed": false, "evaluationError": "spec.resourceAttributes.fieldSelector ignored due to parse error; spec.resourceAttributes.labelSelector ignored due to parse error"})
        );
        let spec = ReviewSpec::from_review(
            &json!({"spec": {"nonResourceAttributes": {"verb": "post", "path": "/healthz"}}}),
        );
        assert_eq!(
            review_status(&authorizer, &jane, &spec),
            json!({"allowed": false})
        );
        assert_eq!(
            rules_review_status(&authorizer, &jane, "dev"),
            json!({
                "resourceRules": [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "pods/log"], "resourceNames": ["p"]}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}],
                "incomplete": false,
                "evaluationError": r#"role.rbac.authorization.k8s.io "gone" not found"#,
            })
        );
        let allow_all =
            Authorizer::with_rbac(&[Mode::AlwaysAllow], Arc::new(Rbac::from_objects([])));
        assert_eq!(
            rules_review_status(&allow_all, &jane, "dev"),
            json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false,
            })
        );
    }
}
