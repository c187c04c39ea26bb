//! The scheduling parts of a pod spec as `ValidatePodSpec` checks them
//! (`pkg/apis/core/validation/validation.go`): `validateAffinity` (node
//! affinity through [`super::node_selector`], pod affinity and
//! anti-affinity terms), `validateTopologySpreadConstraints`,
//! `validateReadinessGates` and `ValidateHostAliases`.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::field::{self, child, index};
use super::node_selector::{node_selector_term, node_selector_with};
use super::pod_options::PodValidationOptions;
use crate::status::FieldError;

const WEIGHT_RANGE: &str = "must be in the range 1-100";
const NOT_POSITIVE: &str = "must be greater than zero";

/// A present, non-null object field (`nil` in kube's typed structs otherwise).
fn object_at<'a>(object: &'a Value, name: &str) -> Option<&'a Value> {
    object.get(name).filter(|value| !value.is_null())
}

fn strings_at<'a>(object: &'a Value, name: &str) -> Vec<&'a str> {
    field::items_at(object, name)
        .iter()
        .map(|value| value.as_str().unwrap_or_default())
        .collect()
}

/// A weighted term's `weight` (`int32`, zero when absent) in 1..=100.
fn weight(term: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let weight = field::int_at(term, "weight").unwrap_or(0);
    if !(1..=100).contains(&weight) {
        errors.push(field::invalid_number(
            &child(path, "weight"),
            weight,
            WEIGHT_RANGE,
        ));
    }
}

/// `validateAffinity`: node affinity, then pod affinity, then anti-affinity.
pub fn affinity(
    spec: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let Some(affinity) = object_at(spec, "affinity") else {
        return;
    };
    let path = child(path, "affinity");
    if let Some(node) = object_at(affinity, "nodeAffinity") {
        node_affinity(
            node,
            &child(&path, "nodeAffinity"),
            options.allow_invalid_label_value_in_required_node_affinity,
            errors,
        );
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        if let Some(pod) = object_at(affinity, kind) {
            pod_affinity(
                pod,
                &child(&path, kind),
                options.allow_invalid_label_value_in_selector,
                errors,
            );
        }
    }
}

/// `validateNodeAffinity`: the required selector (label values checked
/// unless `AllowInvalidLabelValueInRequiredNodeAffinity`), then the preferred
/// terms (`ValidatePreferredSchedulingTerms`: weight, then the term with
/// label values unchecked).
fn node_affinity(
    node: &Value,
    path: &str,
    allow_invalid_required_values: bool,
    errors: &mut Vec<FieldError>,
) {
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    if let Some(selector) = object_at(node, required) {
        node_selector_with(
            selector,
            &child(path, required),
            allow_invalid_required_values,
            errors,
        );
    }
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    let preferred_path = child(path, preferred);
    for (position, term) in field::items_at(node, preferred).iter().enumerate() {
        let term_path = index(&preferred_path, position);
        weight(term, &term_path, errors);
        let preference = term.get("preference").unwrap_or(&Value::Null);
        node_selector_term(preference, true, &child(&term_path, "preference"), errors);
    }
}

/// `validatePodAffinity` / `validatePodAntiAffinity`: required terms, then
/// weighted terms (`validateWeightedPodAffinityTerms`); selector values
/// unchecked with `AllowInvalidLabelValueInSelector`.
fn pod_affinity(pod: &Value, path: &str, allow_invalid_values: bool, errors: &mut Vec<FieldError>) {
    let required = "requiredDuringSchedulingIgnoredDuringExecution";
    let required_path = child(path, required);
    for (position, term) in field::items_at(pod, required).iter().enumerate() {
        pod_affinity_term(
            term,
            &index(&required_path, position),
            allow_invalid_values,
            errors,
        );
    }
    let preferred = "preferredDuringSchedulingIgnoredDuringExecution";
    let preferred_path = child(path, preferred);
    for (position, weighted) in field::items_at(pod, preferred).iter().enumerate() {
        let weighted_path = index(&preferred_path, position);
        weight(weighted, &weighted_path, errors);
        let term = weighted.get("podAffinityTerm").unwrap_or(&Value::Null);
        pod_affinity_term(
            term,
            &child(&weighted_path, "podAffinityTerm"),
            allow_invalid_values,
            errors,
        );
    }
}

/// `validatePodAffinityTerm`: both selectors, namespaces (kube names the
/// path `namespace`), label keys, topology key.
fn pod_affinity_term(
    term: &Value,
    path: &str,
    allow_invalid_values: bool,
    errors: &mut Vec<FieldError>,
) {
    // `ValidatePodAffinityTermSelector`.
    for selector in ["labelSelector", "namespaceSelector"] {
        if let Some(value) = object_at(term, selector) {
            super::selector::validate_with(
                value,
                &child(path, selector),
                allow_invalid_values,
                errors,
            );
        }
    }
    for name in strings_at(term, "namespaces") {
        for message in crate::names::dns1123_label(name) {
            errors.push(field::invalid(&child(path, "namespace"), name, message));
        }
    }
    label_keys(
        path,
        &strings_at(term, "matchLabelKeys"),
        &strings_at(term, "mismatchLabelKeys"),
        object_at(term, "labelSelector"),
        errors,
    );
    let topology_key = field::str_at(term, "topologyKey");
    let topology_path = child(path, "topologyKey");
    if topology_key.is_empty() {
        errors.push(field::required(&topology_path, "can not be empty"));
    }
    field::label_name(&topology_path, topology_key, errors);
}

/// `validateMatchLabelKeysAndMismatchLabelKeys`, run after the pod strategy
/// merged the keys into the selector: keys are label names and need a
/// selector; a `matchLabelKeys` key that shows up in the selector twice
/// (kube's path is the term's, indexed by the key's position); a key in both
/// lists.
fn label_keys(
    path: &str,
    matching: &[&str],
    mismatching: &[&str],
    selector: Option<&Value>,
    errors: &mut Vec<FieldError>,
) {
    for (name, keys) in [
        ("matchLabelKeys", matching),
        ("mismatchLabelKeys", mismatching),
    ] {
        if keys.is_empty() {
            continue;
        }
        let keys_path = child(path, name);
        if selector.is_none() {
            errors.push(field::forbidden(
                &keys_path,
                "must not be specified when labelSelector is not set",
            ));
            continue;
        }
        for (position, key) in keys.iter().enumerate() {
            field::label_name(&index(&keys_path, position), key, errors);
        }
    }
    if let Some(selector) = selector {
        // Go's map keeps the last position of a repeated key.
        let positions: BTreeMap<&str, usize> = matching
            .iter()
            .enumerate()
            .map(|(position, key)| (*key, position))
            .collect();
        let mut seen: BTreeSet<&str> = field::map_at(selector, "matchLabels")
            .map(|labels| labels.keys().map(String::as_str).collect())
            .unwrap_or_default();
        for expression in field::items_at(selector, "matchExpressions") {
            let key = field::str_at(expression, "key");
            if let Some(position) = positions.get(key) {
                if seen.contains(key) {
                    errors.push(field::invalid(
                        &index(path, *position),
                        key,
                        "exists in both matchLabelKeys and labelSelector",
                    ));
                }
            }
            seen.insert(key);
        }
    }
    let mismatching: BTreeSet<&str> = mismatching.iter().copied().collect();
    for (position, key) in matching.iter().enumerate() {
        if mismatching.contains(key) {
            errors.push(field::invalid(
                &index(&child(path, "matchLabelKeys"), position),
                key,
                "exists in both matchLabelKeys and mismatchLabelKeys",
            ));
        }
    }
}

const WHEN_UNSATISFIABLE: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];
const NODE_INCLUSION_POLICIES: [&str; 2] = ["Honor", "Ignore"];

/// `validateTopologySpreadConstraints`, with MatchLabelKeysInPodTopologySpread
/// and its SelectorMerge gate on (1.34's defaults): `matchLabelKeys` are
/// checked as pod affinity's are, after the pod strategy merged them.
/// The selector's values are unchecked with
/// `AllowInvalidTopologySpreadConstraintLabelSelector`.
pub fn topology_spread_constraints(
    spec: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let list_path = child(path, "topologySpreadConstraints");
    let constraints = field::items_at(spec, "topologySpreadConstraints");
    for (position, constraint) in constraints.iter().enumerate() {
        let item_path = index(&list_path, position);
        let max_skew = field::int_at(constraint, "maxSkew").unwrap_or(0);
        if max_skew <= 0 {
            errors.push(field::invalid_number(
                &child(&item_path, "maxSkew"),
                max_skew,
                NOT_POSITIVE,
            ));
        }
        let topology_key = field::str_at(constraint, "topologyKey");
        if topology_key.is_empty() {
            errors.push(field::required(
                &child(&item_path, "topologyKey"),
                "can not be empty",
            ));
        }
        let action = field::str_at(constraint, "whenUnsatisfiable");
        if !WHEN_UNSATISFIABLE.contains(&action) {
            errors.push(field::not_supported(
                &child(&item_path, "whenUnsatisfiable"),
                action,
                &WHEN_UNSATISFIABLE,
            ));
        }
        // `ValidateSpreadConstraintNotRepeat`: against the later constraints.
        let repeated = constraints[position + 1..].iter().any(|later| {
            field::str_at(later, "topologyKey") == topology_key
                && field::str_at(later, "whenUnsatisfiable") == action
        });
        if repeated {
            errors.push(field::duplicate(
                &child(&item_path, "{topologyKey, whenUnsatisfiable}"),
                &format!("{{{topology_key}, {action}}}"),
            ));
        }
        if let Some(min_domains) = field::int_at(constraint, "minDomains") {
            let min_domains_path = child(&item_path, "minDomains");
            if min_domains <= 0 {
                errors.push(field::invalid_number(
                    &min_domains_path,
                    min_domains,
                    NOT_POSITIVE,
                ));
            }
            if action != "DoNotSchedule" {
                errors.push(field::invalid_number(
                    &min_domains_path,
                    min_domains,
                    format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(value) = constraint.get(policy).and_then(Value::as_str) {
                if !NODE_INCLUSION_POLICIES.contains(&value) {
                    errors.push(field::not_supported(
                        &child(&item_path, policy),
                        value,
                        &NODE_INCLUSION_POLICIES,
                    ));
                }
            }
        }
        let selector = object_at(constraint, "labelSelector");
        label_keys(
            &item_path,
            &strings_at(constraint, "matchLabelKeys"),
            &[],
            selector,
            errors,
        );
        if let Some(selector) = selector {
            super::selector::validate_with(
                selector,
                &child(&item_path, "labelSelector"),
                options.allow_invalid_topology_spread_constraint_label_selector,
                errors,
            );
        }
    }
}

/// `validateReadinessGates`: condition types are qualified names.
pub fn readiness_gates(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let list_path = child(path, "readinessGates");
    for (position, gate) in field::items_at(spec, "readinessGates").iter().enumerate() {
        field::label_name(
            &child(&index(&list_path, position), "conditionType"),
            field::str_at(gate, "conditionType"),
            errors,
        );
    }
}

/// `ValidateHostAliases`: each alias's IP, then its hostnames (DNS-1123
/// subdomains).
pub fn host_aliases(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let list_path = child(path, "hostAliases");
    for (position, alias) in field::items_at(spec, "hostAliases").iter().enumerate() {
        let alias_path = index(&list_path, position);
        super::ip_field::valid_ip(
            &child(&alias_path, "ip"),
            field::str_at(alias, "ip"),
            errors,
        );
        let hostnames_path = child(&alias_path, "hostnames");
        for (position, hostname) in strings_at(alias, "hostnames").iter().enumerate() {
            field::dns1123_subdomain(&index(&hostnames_path, position), hostname, errors);
        }
    }
}

#[cfg(test)]
#[path = "pod_scheduling_tests.rs"]
mod tests;
