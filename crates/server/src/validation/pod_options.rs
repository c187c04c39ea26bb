//! The ratcheting part of kube's `PodValidationOptions`
//! (`pkg/apis/core/validation`), as `GetValidationOptionsFromPodSpecAndMeta`
//! and `GetValidationOptionsFromPodTemplate` (`pkg/api/pod/util.go`) compute
//! it from the old pod or template on update: a label value that the old
//! object already carried in a pod affinity selector, in required node
//! affinity or in a topology spread constraint's selector keeps the object
//! writable, so the new object's values there are not checked either; a
//! hugepage quantity that is not a multiple of its page size likewise lets
//! every hugepage quantity go unchecked, and an invalid
//! `controller.kubernetes.io/pod-deletion-cost` annotation on the old pod or
//! template lets the new one keep any value. On create every option is false.

use serde_json::Value;

use super::field;
use super::node_selector;
use super::selector;

/// `AllowInvalidLabelValueInSelector`, `AllowInvalidLabelValueInRequiredNodeAffinity`
/// and `AllowInvalidTopologySpreadConstraintLabelSelector`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PodValidationOptions {
    /// Pod affinity and anti-affinity terms' `labelSelector` and `namespaceSelector`
    /// (and, in apps/v1 workloads, their `spec.selector`).
    pub allow_invalid_label_value_in_selector: bool,
    /// `affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution`.
    pub allow_invalid_label_value_in_required_node_affinity: bool,
    /// `topologySpreadConstraints[*].labelSelector`.
    pub allow_invalid_topology_spread_constraint_label_selector: bool,
    /// `AllowIndivisibleHugePagesValues`: hugepage quantities need not be a
    /// multiple of their page size (the old spec had one that is not).
    pub allow_indivisible_huge_pages_values: bool,
    /// `AllowInvalidPodDeletionCost`: the old pod's or template's
    /// deletion cost annotation is not a 32-bit integer.
    pub allow_invalid_pod_deletion_cost: bool,
}

impl PodValidationOptions {
    /// The options of an update whose old pod spec is `old_spec`
    /// (`GetValidationOptionsFromPodSpecAndMeta` with a non-nil old spec).
    pub fn from_old_spec(old_spec: &Value) -> Self {
        PodValidationOptions {
            allow_invalid_label_value_in_selector: has_invalid_label_value_in_affinity_selector(
                old_spec,
            ),
            allow_invalid_label_value_in_required_node_affinity:
                has_invalid_label_value_in_required_node_affinity(old_spec),
            allow_invalid_topology_spread_constraint_label_selector:
                has_invalid_topology_spread_constraint_label_selector(old_spec),
            allow_indivisible_huge_pages_values:
                super::resource_requirements::uses_indivisible_huge_pages(old_spec),
            allow_invalid_pod_deletion_cost: false,
        }
    }

    /// The options of an update of a pod (`old` the stored pod), or of a
    /// template (`old` the old template): its spec's, and its metadata's
    /// deletion cost.
    pub fn from_old_pod(old: &Value) -> Self {
        PodValidationOptions {
            allow_invalid_pod_deletion_cost: !super::pod_annotations::deletion_cost_is_valid(old),
            ..Self::from_old_spec(old.get("spec").unwrap_or(&Value::Null))
        }
    }

    /// `GetValidationOptionsFromPodTemplate`: the options of an update whose old
    /// template is `old_template` (none: a ReplicationController without one).
    pub fn from_old_template(old_template: Option<&Value>) -> Self {
        match old_template.filter(|template| !template.is_null()) {
            None => Self::default(),
            Some(template) => Self::from_old_pod(template),
        }
    }
}

fn set<'a>(value: &'a Value, name: &str) -> Option<&'a Value> {
    value.get(name).filter(|value| !value.is_null())
}

/// `hasInvalidLabelValueInAffinitySelector`: some pod (anti-)affinity term
/// fails `ValidatePodAffinityTermSelector` with strict values.
fn has_invalid_label_value_in_affinity_selector(spec: &Value) -> bool {
    let Some(affinity) = set(spec, "affinity") else {
        return false;
    };
    let term_fails = |term: &Value| {
        ["labelSelector", "namespaceSelector"]
            .iter()
            .filter_map(|name| set(term, name))
            .any(selector::has_errors)
    };
    ["podAffinity", "podAntiAffinity"]
        .iter()
        .filter_map(|kind| set(affinity, kind))
        .any(|pod_affinity| {
            let required = field::items_at(
                pod_affinity,
                "requiredDuringSchedulingIgnoredDuringExecution",
            );
            let preferred = field::items_at(
                pod_affinity,
                "preferredDuringSchedulingIgnoredDuringExecution",
            );
            required.iter().any(term_fails)
                || preferred
                    .iter()
                    .filter_map(|weighted| set(weighted, "podAffinityTerm"))
                    .any(term_fails)
        })
}

/// `hasInvalidLabelValueInRequiredNodeAffinity`.
fn has_invalid_label_value_in_required_node_affinity(spec: &Value) -> bool {
    spec.pointer("/affinity/nodeAffinity/requiredDuringSchedulingIgnoredDuringExecution")
        .filter(|selector| !selector.is_null())
        .is_some_and(node_selector::has_invalid_label_value)
}

/// `hasInvalidTopologySpreadConstraintLabelSelector`.
fn has_invalid_topology_spread_constraint_label_selector(spec: &Value) -> bool {
    field::items_at(spec, "topologySpreadConstraints")
        .iter()
        .filter_map(|constraint| set(constraint, "labelSelector"))
        .any(selector::has_errors)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn expression(value: &str) -> Value {
        json!({"matchExpressions": [{"key": "k", "operator": "In", "values": [value]}]})
    }

    #[test]
    fn options_follow_the_old_spec_as_kube_computes_them() {
        let cases = [
            ("nothing", json!({}), PodValidationOptions::default()),
            (
                "valid values",
                json!({
                    "affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                        {"labelSelector": expression("ok"), "topologyKey": "zone"}
                    ]}},
                    "topologySpreadConstraints": [{"labelSelector": expression("ok")}]
                }),
                PodValidationOptions::default(),
            ),
            (
                "required pod affinity",
                json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": expression("-1"), "topologyKey": "zone"}
                ]}}}),
                PodValidationOptions {
                    allow_invalid_label_value_in_selector: true,
                    ..Default::default()
                },
            ),
            (
                "preferred anti-affinity namespace selector",
                json!({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": {"namespaceSelector": expression("a b"), "topologyKey": "zone"}}
                ]}}}),
                PodValidationOptions {
                    allow_invalid_label_value_in_selector: true,
                    ..Default::default()
                },
            ),
            (
                "required node affinity",
                json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                    "nodeSelectorTerms": [{"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-1"]}]}]
                }}}}),
                PodValidationOptions {
                    allow_invalid_label_value_in_required_node_affinity: true,
                    ..Default::default()
                },
            ),
            (
                "preferred node affinity does not count",
                json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-1"]}]}}
                ]}}}),
                PodValidationOptions::default(),
            ),
            (
                "topology spread",
                json!({"topologySpreadConstraints": [{"labelSelector": expression("-1")}]}),
                PodValidationOptions {
                    allow_invalid_topology_spread_constraint_label_selector: true,
                    ..Default::default()
                },
            ),
        ];
        for (name, spec, want) in cases {
            assert_eq!(PodValidationOptions::from_old_spec(&spec), want, "{name}");
        }
        assert_eq!(
            PodValidationOptions::from_old_template(None),
            PodValidationOptions::default()
        );
    }
}
