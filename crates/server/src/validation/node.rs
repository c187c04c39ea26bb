//! Node validation (`pkg/apis/core/validation/validation.go` `ValidateNode`,
//! `ValidateNodeUpdate`, `validateNodeTaints`, `ValidateNodeResources`; the
//! node's own annotations are `node_annotations.rs`).
//! `/status` writes run `ValidateNodeUpdate` too (`nodeStatusStrategy`).
//! Note kube's quirks kept here: taints are reported under `metadata.taints`
//! and capacity entries as `status.capacity.<name>` (child paths, not keys).

use serde_json::Value;

use super::field::{self, child, index};
use super::{ip_field, quota};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

const TAINT_EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

fn spec(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

fn strings(items: &[Value]) -> Vec<&str> {
    items
        .iter()
        .map(|item| item.as_str().unwrap_or_default())
        .collect()
}

/// Go's `%#v` of a `core.Taint`.
fn taint_go(taint: &Value) -> String {
    let added = if field::is_set(taint, "timeAdded") {
        "(*v1.Time)(0xc000000000)"
    } else {
        "(*v1.Time)(nil)"
    };
    format!(
        "core.Taint{{Key:{}, Value:{}, Effect:{}, TimeAdded:{added}}}",
        quote(field::str_at(taint, "key")),
        quote(field::str_at(taint, "value")),
        quote(field::str_at(taint, "effect")),
    )
}

/// `validateNodeTaints`: keys are label names, values label values, effects
/// known, and each (key, effect) pair appears once.
fn taints(object: &Value, errors: &mut Vec<FieldError>) {
    taint_list(
        field::items_at(spec(object), "taints"),
        "metadata.taints",
        errors,
    );
}

/// `validateNodeTaints` of a list reported under `list_path` (the spec's
/// taints, or the taints annotation's).
pub(super) fn taint_list(list: &[Value], list_path: &str, errors: &mut Vec<FieldError>) {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for (position, taint) in list.iter().enumerate() {
        let path = index(list_path, position);
        let taint_key = field::str_at(taint, "key");
        let value = field::str_at(taint, "value");
        let effect = field::str_at(taint, "effect");
        field::label_name(&child(&path, "key"), taint_key, errors);
        let messages = crate::selector::is_valid_label_value(value);
        if !messages.is_empty() {
            errors.push(field::invalid(
                &child(&path, "value"),
                value,
                messages.join(";"),
            ));
        }
        if effect.is_empty() {
            errors.push(field::required(&child(&path, "effect"), ""));
        } else if !TAINT_EFFECTS.contains(&effect) {
            errors.push(field::not_supported(
                &child(&path, "effect"),
                effect,
                &TAINT_EFFECTS,
            ));
        }
        if seen.contains(&(taint_key, effect)) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(taint_go(taint)),
                field: path,
                detail: "taints must be unique by key and effect pair".into(),
            });
            continue;
        }
        seen.push((taint_key, effect));
    }
}

/// `ValidateNodeResources`.
fn resources(object: &Value, errors: &mut Vec<FieldError>) {
    let Some(status) = object.get("status") else {
        return;
    };
    for list in ["capacity", "allocatable"] {
        let mut entries: Vec<_> = field::map_at(status, list).into_iter().flatten().collect();
        entries.sort_by(|a, b| a.0.cmp(b.0));
        for (name, value) in entries {
            let path = child(&child("status", list), name);
            quota::resource_quantity_value(name, value, &path, errors);
        }
    }
}

/// `ValidateNode`.
pub fn node(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    super::node_annotations::node_specific_annotations(object, &mut errors);
    taints(object, &mut errors);
    resources(object, &mut errors);
    let cidrs = strings(field::items_at(spec(object), "podCIDRs"));
    let path = "spec.podCIDRs";
    for (position, cidr) in cidrs.iter().enumerate() {
        ip_field::valid_cidr(&index(path, position), cidr, &mut errors);
    }
    if cidrs.len() > 1 {
        let parsed: Vec<_> = cidrs
            .iter()
            .filter_map(|cidr| ip_field::parse_cidr_sloppy(cidr))
            .collect();
        // `netutils.IsDualStackCIDRStrings` fails on the first CIDR
        // `ParseCIDRs` cannot parse; kube reports that as an internal error
        // and then, the answer being "not dual-stack", the family rule too.
        if let Some(position) = cidrs
            .iter()
            .position(|cidr| ip_field::parse_cidr_sloppy(cidr).is_none())
        {
            errors.push(FieldError {
                kind: FieldErrorKind::Internal,
                field: path.to_string(),
                detail: format!(
                    "invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[{position}]: <nil> (invalid CIDR address: {})",
                    cidrs[position]
                ),
            });
        }
        let dual_stack = parsed.len() == cidrs.len()
            && parsed.iter().any(|cidr| cidr.network.is_ipv4())
            && parsed.iter().any(|cidr| cidr.network.is_ipv6());
        if !dual_stack || cidrs.len() > 2 {
            errors.push(field::invalid_rendered(
                path,
                &crate::go::fmt::sharp_v_strings(&cidrs),
                "may specify no more than one CIDR for each IP family",
            ));
        }
        for (position, cidr) in cidrs.iter().enumerate() {
            if cidrs[..position].contains(cidr) {
                errors.push(field::duplicate(&index(path, position), cidr));
            }
        }
    }
    errors
}

/// `ValidateNodeUpdate`: podCIDRs and providerID are set once, externalID never
/// changes, and the resources, addresses and taints stay valid.
pub fn node_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    super::node_annotations::node_specific_annotations(new, &mut errors);
    resources(new, &mut errors);
    let addresses = new
        .get("status")
        .map(|status| field::items_at(status, "addresses"))
        .unwrap_or_default();
    for (position, address) in addresses.iter().enumerate() {
        let same = |other: &Value| {
            field::str_at(other, "type") == field::str_at(address, "type")
                && field::str_at(other, "address") == field::str_at(address, "address")
        };
        if addresses[..position].iter().any(same) {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(format!(
                    "core.NodeAddress{{Type:{}, Address:{}}}",
                    quote(field::str_at(address, "type")),
                    quote(field::str_at(address, "address"))
                )),
                field: index("status.addresses", position),
                detail: String::new(),
            });
        }
    }
    let old_cidrs = strings(field::items_at(spec(old), "podCIDRs"));
    let new_cidrs = strings(field::items_at(spec(new), "podCIDRs"));
    if !old_cidrs.is_empty() {
        let message = "node updates may not change podCIDR except from \"\" to valid";
        if old_cidrs.len() != new_cidrs.len() {
            errors.push(field::forbidden("spec.podCIDRs", message));
        } else {
            for (before, after) in old_cidrs.iter().zip(&new_cidrs) {
                if before != after {
                    errors.push(field::forbidden("spec.podCIDRs", message));
                }
            }
        }
    }
    let old_provider = field::str_at(spec(old), "providerID");
    if !old_provider.is_empty() && old_provider != field::str_at(spec(new), "providerID") {
        errors.push(field::forbidden(
            "spec.providerID",
            "node updates may not change providerID except from \"\" to valid",
        ));
    }
    taints(new, &mut errors);
    if field::str_at(spec(new), "externalID") != field::str_at(spec(old), "externalID") {
        errors.push(field::forbidden("spec.externalID", "may not be updated"));
    }
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    /// Cases from kube's `TestValidateNode` and `TestValidateNodeUpdate`.
    #[test]
    fn nodes_as_kube_validates_them() {
        let valid = json!({"spec": {
            "podCIDRs": ["192.168.0.0/16", "2000::/10"],
            "taints": [{"key": "dedicated", "value": "special-user", "effect": "NoSchedule"}, {"key": "dedicated", "effect": "NoExecute"}]
        }, "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"}}});
        assert_eq!(texts(&node(&valid)), Vec::<String>::new());
        let cases: Vec<(Value, Vec<&str>)> = vec![
            (
                json!({"spec": {"taints": [{"key": "dedicated"}]}}),
                vec!["metadata.taints[0].effect: Required value"],
            ),
            (
                json!({"spec": {"taints": [{"key": "dedicated", "effect": "NoScheduleNoAdmit"}]}}),
                vec!["metadata.taints[0].effect: Unsupported value: \"NoScheduleNoAdmit\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""],
            ),
            (
                json!({"spec": {"taints": [{"key": "NoUppercaseOrSpecialCharsLike=Equals", "effect": "NoSchedule"}]}}),
                vec!["metadata.taints[0].key: Invalid value: \"NoUppercaseOrSpecialCharsLike=Equals\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
            ),
            (
                json!({"spec": {"taints": [{"key": "dedicated", "value": "special-user", "effect": "NoSchedule"}, {"key": "dedicated", "value": "special-user", "effect": "NoSchedule"}]}}),
                vec!["metadata.taints[1]: Duplicate value: core.Taint{Key:\"dedicated\", Value:\"special-user\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}: taints must be unique by key and effect pair"],
            ),
            (
                json!({"spec": {"podCIDRs": ["192.168.0.0"]}}),
                vec!["spec.podCIDRs[0]: Invalid value: \"192.168.0.0\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"],
            ),
            (
                json!({"spec": {"podCIDRs": ["192.168.0.0/16", "10.0.0.0/16"]}}),
                vec!["spec.podCIDRs: Invalid value: []string{\"192.168.0.0/16\", \"10.0.0.0/16\"}: may specify no more than one CIDR for each IP family"],
            ),
            (
                json!({"spec": {"podCIDRs": ["2000::/10", "2000::/10"]}}),
                vec![
                    "spec.podCIDRs: Invalid value: []string{\"2000::/10\", \"2000::/10\"}: may specify no more than one CIDR for each IP family",
                    "spec.podCIDRs[1]: Duplicate value: \"2000::/10\"",
                ],
            ),
            (
                json!({"spec": {"podCIDRs": ["192.168.0.0/16", "bad", "2000::/10"]}}),
                vec![
                    "spec.podCIDRs[1]: Invalid value: \"bad\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                    "spec.podCIDRs: Internal error: invalid PodCIDRs. failed to check with dual stack with error:invalid CIDR[1]: <nil> (invalid CIDR address: bad)",
                    "spec.podCIDRs: Invalid value: []string{\"192.168.0.0/16\", \"bad\", \"2000::/10\"}: may specify no more than one CIDR for each IP family",
                ],
            ),
            (
                json!({"status": {"capacity": {"pods": "-1"}, "allocatable": {"pods": "1500m"}}}),
                vec![
                    "status.capacity.pods: Invalid value: \"-1\": must be greater than or equal to 0",
                    "status.allocatable.pods: Invalid value: \"1500m\": must be an integer",
                ],
            ),
        ];
        for (object, expected) in cases {
            assert_eq!(texts(&node(&object)), expected, "{object}");
        }
    }

    #[test]
    fn node_updates_keep_what_is_set_once() {
        let old = json!({"spec": {"podCIDRs": ["192.168.0.0/16"], "providerID": "aws://a"}});
        assert!(node_update(&old, &old).is_empty());
        let unset = json!({"spec": {}});
        assert!(node_update(&old, &unset).is_empty(), "set once from empty");
        let changed = json!({"spec": {"podCIDRs": ["10.0.0.0/16"], "providerID": "aws://b"}});
        assert_eq!(
            texts(&node_update(&changed, &old)),
            [
                "spec.podCIDRs: Forbidden: node updates may not change podCIDR except from \"\" to valid",
                "spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid",
            ]
        );
        let addresses = json!({"status": {"addresses": [{"type": "InternalIP", "address": "10.0.0.1"}, {"type": "InternalIP", "address": "10.0.0.1"}]}});
        assert_eq!(
            texts(&node_update(&addresses, &unset)),
            ["status.addresses[1]: Duplicate value: core.NodeAddress{Type:\"InternalIP\", Address:\"10.0.0.1\"}"]
        );
        let external = json!({"spec": {"externalID": "x"}});
        assert_eq!(
            texts(&node_update(&external, &unset)),
            ["spec.externalID: Forbidden: may not be updated"]
        );
    }
}
