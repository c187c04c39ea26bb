//! ResourceQuota validation and the resource-name and quantity rules quota,
//! limit ranges, nodes and volumes share (`pkg/apis/core/validation/validation.go`
//! `ValidateResourceQuota`, `ValidateResourceQuotaUpdate`,
//! `ValidateResourceQuotaStatusUpdate`, `validateResourceName`,
//! `ValidateResourceQuantityValue`; the name sets of `pkg/apis/core/helper/helpers.go`).
//!
//! Quantities are canonical here (decoding normalised them). Where kube puts a
//! `resource.Quantity` value in a message it prints Go's `%#v` of the struct;
//! ferrokube prints the quantity's string instead.

use serde_json::Value;

use super::field::{self, child, key};
use crate::quantity::Quantity;
use crate::status::FieldError;

const INVALID_QUOTA_RESOURCE: &str = "must be a standard resource for quota";
const NOT_INTEGER: &str = "must be an integer";

/// `helper.IsQuotaHugePageResourceName`.
fn is_quota_huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// `helper.IsStandardResourceName`.
fn is_standard_resource(name: &str) -> bool {
    matches!(
        name,
        "cpu"
            | "memory"
            | "ephemeral-storage"
            | "requests.cpu"
            | "requests.memory"
            | "requests.ephemeral-storage"
            | "limits.cpu"
            | "limits.memory"
            | "limits.ephemeral-storage"
            | "pods"
            | "resourcequotas"
            | "services"
            | "replicationcontrollers"
            | "secrets"
            | "configmaps"
            | "persistentvolumeclaims"
            | "storage"
            | "requests.storage"
            | "services.nodeports"
            | "services.loadbalancers"
    ) || is_quota_huge_pages(name)
}

/// `helper.IsStandardQuotaResourceName`.
fn is_standard_quota_resource(name: &str) -> bool {
    name != "storage" && is_standard_resource(name)
}

/// `helper.IsNativeResource`.
pub fn is_native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `helper.IsExtendedResourceName`.
pub fn is_extended(name: &str) -> bool {
    !is_native(name)
        && !name.starts_with("requests.")
        && crate::selector::is_qualified_name(&format!("requests.{name}")).is_empty()
}

/// `helper.IsIntegerResourceName`.
fn is_integer_resource(name: &str) -> bool {
    matches!(
        name,
        "pods"
            | "resourcequotas"
            | "services"
            | "replicationcontrollers"
            | "secrets"
            | "configmaps"
            | "persistentvolumeclaims"
            | "services.nodeports"
            | "services.loadbalancers"
    ) || is_extended(name)
}

/// `validateResourceName`: a qualified name, standard unless it has a domain.
/// A `core.ResourceName` is a `fmt.Stringer`, so kube prints it unquoted.
pub fn resource_name(name: &str, path: &str, errors: &mut Vec<FieldError>) -> bool {
    let messages = crate::selector::is_qualified_name(name);
    let valid = messages.is_empty();
    for message in messages {
        errors.push(field::invalid_rendered(path, name, message));
    }
    if valid && !name.contains('/') && !is_standard_resource(name) {
        errors.push(field::invalid_rendered(
            path,
            name,
            "must be a standard resource type or fully qualified",
        ));
        return false;
    }
    valid
}

/// `ValidateResourceQuotaResourceName`.
fn quota_resource_name(name: &str, path: &str, errors: &mut Vec<FieldError>) {
    resource_name(name, path, errors);
    if !name.contains('/') && !is_standard_quota_resource(name) {
        errors.push(field::invalid_rendered(path, name, INVALID_QUOTA_RESOURCE));
    }
}

/// The quantity at `value` (canonical by now); zero when unreadable.
pub fn quantity(value: &Value) -> Quantity {
    Quantity::parse(value.as_str().unwrap_or("0"))
        .unwrap_or_else(|_| Quantity::from_scaled(0, 0, crate::quantity::Format::DecimalSI))
}

/// `ValidateNonnegativeQuantity`.
pub fn nonnegative_quantity(value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if quantity(value).sign() < 0 {
        errors.push(field::invalid(
            path,
            value.as_str().unwrap_or_default(),
            field::IS_NEGATIVE,
        ));
    }
}

/// `ValidatePositiveQuantityValue`.
pub fn positive_quantity(value: &Value, path: &str, errors: &mut Vec<FieldError>) -> bool {
    if quantity(value).sign() <= 0 {
        errors.push(field::invalid(
            path,
            value.as_str().unwrap_or_default(),
            "must be greater than zero",
        ));
        return false;
    }
    true
}

/// `validateBasicResource`: `Value()` may not be negative (printed bare).
pub fn basic_resource(value: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let whole = quantity(value).scaled_value(0);
    if whole < 0 {
        errors.push(field::invalid_number(
            path,
            whole,
            "must be a valid resource quantity",
        ));
    }
}

/// `ValidateResourceQuantityValue`: non-negative, whole for countable resources.
pub fn resource_quantity_value(
    name: &str,
    value: &Value,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    nonnegative_quantity(value, path, errors);
    if is_integer_resource(name) && quantity(value).scaled_value(3) % 1000 != 0 {
        errors.push(field::invalid(
            path,
            value.as_str().unwrap_or_default(),
            NOT_INTEGER,
        ));
    }
}

/// A resource list's entries in Go's map order for messages: sorted by name.
fn resource_list(object: &Value, name: &str) -> Vec<(String, Value)> {
    let mut entries: Vec<(String, Value)> = field::map_at(object, name)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .collect();
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries
}

fn hard_and_used(object: &Value, parent: &str, lists: &[&str], errors: &mut Vec<FieldError>) {
    let Some(section) = object.get(parent) else {
        return;
    };
    for list in lists {
        let list_path = child(parent, list);
        for (name, value) in resource_list(section, list) {
            let path = key(&list_path, &name);
            quota_resource_name(&name, &path, errors);
            resource_quantity_value(&name, &value, &path, errors);
        }
    }
}

/// Standard scopes (`helper.IsStandardResourceQuotaScope`).
const STANDARD_SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
    "VolumeAttributesClass",
];

/// `helper.IsResourceQuotaScopeValidForResource`.
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    let pod_count = resource == "pods";
    let pod_compute = matches!(
        resource,
        "cpu" | "memory" | "limits.cpu" | "limits.memory" | "requests.cpu" | "requests.memory"
    );
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => pod_count || pod_compute,
        "BestEffort" => pod_count,
        "VolumeAttributesClass" => {
            matches!(resource, "persistentvolumeclaims" | "requests.storage")
        }
        _ => true,
    }
}

/// Go's `%#v` of a `[]core.ResourceQuotaScope`.
fn scope_list(scopes: &[&str]) -> String {
    let inner = crate::go::fmt::sharp_v_strings(scopes);
    let quoted = inner.trim_start_matches("[]string");
    if scopes.is_empty() {
        "[]core.ResourceQuotaScope(nil)".to_string()
    } else {
        format!("[]core.ResourceQuotaScope{quoted}")
    }
}

/// Go's `%#v` of a `core.ScopeSelector` (kube prints the whole selector).
fn scope_selector(selector: &Value) -> String {
    let requirements: Vec<String> = field::items_at(selector, "matchExpressions")
        .iter()
        .map(|requirement| {
            let values = strings(field::items_at(requirement, "values"));
            let values = if values.is_empty() {
                "[]string(nil)".to_string()
            } else {
                crate::go::fmt::sharp_v_strings(&values)
            };
            format!(
                "core.ScopedResourceSelectorRequirement{{ScopeName:{}, Operator:{}, Values:{values}}}",
                crate::go::strconv::quote(field::str_at(requirement, "scopeName")),
                crate::go::strconv::quote(field::str_at(requirement, "operator")),
            )
        })
        .collect();
    format!(
        "core.ScopeSelector{{MatchExpressions:[]core.ScopedResourceSelectorRequirement{{{}}}}}",
        requirements.join(", ")
    )
}

fn strings(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|item| item.as_str().unwrap_or_default())
        .collect()
}

/// `validateResourceQuotaScopes` and `validateScopeSelector`.
fn scopes(spec: &Value, errors: &mut Vec<FieldError>) {
    let hard: Vec<String> = resource_list(spec, "hard")
        .into_iter()
        .map(|e| e.0)
        .collect();
    let listed = strings(field::items_at(spec, "scopes"));
    let scopes_rendered = scope_list(&listed);
    let conflicting = |set: &[&str]| {
        [
            ("BestEffort", "NotBestEffort"),
            ("Terminating", "NotTerminating"),
        ]
        .iter()
        .filter(|(a, b)| set.contains(a) && set.contains(b))
        .count()
    };
    if !listed.is_empty() {
        let path = "spec.scopes";
        for scope in &listed {
            if !STANDARD_SCOPES.contains(scope) {
                errors.push(field::invalid_rendered(
                    path,
                    &scopes_rendered,
                    "unsupported scope",
                ));
            }
            for resource in &hard {
                if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                    errors.push(field::invalid_rendered(
                        path,
                        &scopes_rendered,
                        "unsupported scope applied to resource",
                    ));
                }
            }
        }
        for _ in 0..conflicting(&listed) {
            errors.push(field::invalid_rendered(
                path,
                &scopes_rendered,
                "conflicting scopes",
            ));
        }
    }
    let Some(selector) = spec.get("scopeSelector").filter(|s| !s.is_null()) else {
        return;
    };
    let path = "spec.scopeSelector.matchExpressions";
    let mut selected = Vec::new();
    for requirement in field::items_at(selector, "matchExpressions") {
        let scope = field::str_at(requirement, "scopeName");
        let operator = field::str_at(requirement, "operator");
        let values = field::items_at(requirement, "values");
        if !STANDARD_SCOPES.contains(&scope) {
            errors.push(field::invalid(
                &child(path, "scopeName"),
                scope,
                "unsupported scope",
            ));
        }
        for resource in &hard {
            if is_standard_quota_resource(resource) && !scope_valid_for(scope, resource) {
                errors.push(field::invalid_rendered(
                    path,
                    &scope_selector(selector),
                    "unsupported scope applied to resource",
                ));
            }
        }
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && operator != "Exists"
        {
            errors.push(field::invalid(
                &child(path, "operator"),
                operator,
                "must be 'Exists' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity",
            ));
        }
        match operator {
            "In" | "NotIn" if values.is_empty() => errors.push(field::required(
                &child(path, "values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "In" | "NotIn" => {}
            "Exists" | "DoesNotExist" if !values.is_empty() => errors
                .push(field::invalid_rendered(
                &child(path, "values"),
                &crate::go::fmt::sharp_v_strings(&strings(values)),
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "Exists" | "DoesNotExist" => {}
            other => errors.push(field::invalid(
                &child(path, "operator"),
                other,
                "not a valid selector operator",
            )),
        }
        selected.push(scope);
    }
    for _ in 0..conflicting(&selected) {
        errors.push(field::invalid_rendered(
            path,
            &scopes_rendered,
            "conflicting scopes",
        ));
    }
}

/// `ValidateResourceQuota`: spec and status lists, scopes and the scope selector.
pub fn resource_quota(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    hard_and_used(object, "spec", &["hard"], &mut errors);
    if let Some(spec) = object.get("spec") {
        scopes(spec, &mut errors);
    }
    hard_and_used(object, "status", &["hard", "used"], &mut errors);
    errors
}

/// `ValidateResourceQuotaUpdate`: the spec rules, and the scopes may not change.
pub fn resource_quota_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    hard_and_used(new, "spec", &["hard"], &mut errors);
    if let Some(spec) = new.get("spec") {
        scopes(spec, &mut errors);
    }
    let scope_set = |object: &Value| {
        let mut set: Vec<String> = object
            .get("spec")
            .map(|spec| strings(field::items_at(spec, "scopes")))
            .unwrap_or_default()
            .into_iter()
            .map(str::to_string)
            .collect();
        set.sort();
        set.dedup();
        set
    };
    if scope_set(new) != scope_set(old) {
        let listed = new
            .get("spec")
            .map(|spec| strings(field::items_at(spec, "scopes")))
            .unwrap_or_default();
        errors.push(field::invalid_rendered(
            "spec.scopes",
            &scope_list(&listed),
            field::FIELD_IMMUTABLE,
        ));
    }
    errors
}

/// `ValidateResourceQuotaStatusUpdate`.
pub fn resource_quota_status(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    hard_and_used(object, "status", &["hard", "used"], &mut errors);
    errors
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
