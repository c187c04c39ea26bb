//! A PersistentVolume's `nodeAffinity` on update (`pkg/apis/core/validation/validation.go`
//! `validatePvNodeAffinity` with `getMaskNodeSelectorLabelChangeEqualities`):
//! once set it is fixed, except that a requirement's key may move from a
//! beta topology label to its GA name (`betaToGALabel`).

use serde_json::Value;

use super::field;

/// `betaToGALabel`.
const BETA_TO_GA: [(&str, &str); 5] = [
    (
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "topology.kubernetes.io/region",
    ),
    ("beta.kubernetes.io/os", "kubernetes.io/os"),
    ("beta.kubernetes.io/arch", "kubernetes.io/arch"),
    (
        "beta.kubernetes.io/instance-type",
        "node.kubernetes.io/instance-type",
    ),
];

fn ga_label(beta: &str) -> Option<&'static str> {
    BETA_TO_GA
        .iter()
        .find(|(from, _)| *from == beta)
        .map(|(_, to)| *to)
}

/// The old affinity with each requirement's beta key replaced by the GA key
/// the new affinity has at the same place (kube's equality function on
/// `NodeSelectorRequirement` pairs).
fn masked(old: &Value, new: Option<&Value>) -> Value {
    let mut masked = old.clone();
    let Some(new) = new else {
        return masked;
    };
    let Some(terms) = masked
        .pointer_mut("/required/nodeSelectorTerms")
        .and_then(Value::as_array_mut)
    else {
        return masked;
    };
    for (term_index, term) in terms.iter_mut().enumerate() {
        for list in ["matchExpressions", "matchFields"] {
            let Some(requirements) = term.get_mut(list).and_then(Value::as_array_mut) else {
                continue;
            };
            for (position, requirement) in requirements.iter_mut().enumerate() {
                let new_key = new
                    .pointer(&format!(
                        "/required/nodeSelectorTerms/{term_index}/{list}/{position}/key"
                    ))
                    .and_then(Value::as_str);
                let old_key = field::str_at(requirement, "key");
                if let (Some(new_key), Some(ga)) = (new_key, ga_label(old_key)) {
                    if new_key != old_key && new_key == ga {
                        requirement["key"] = Value::String(new_key.to_string());
                    }
                }
            }
        }
    }
    masked
}

/// `apiequality.Semantic.DeepEqual`'s view of the decoded struct: absent,
/// null, empty lists and empty strings alike (a set but empty object is a
/// non-nil pointer or a struct, kept).
fn semantic(value: &Value) -> Option<Value> {
    match value {
        Value::Null => None,
        Value::String(text) if text.is_empty() => None,
        Value::Object(map) => Some(Value::Object(
            map.iter()
                .filter_map(|(key, value)| semantic(value).map(|value| (key.clone(), value)))
                .collect(),
        )),
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|item| semantic(item).unwrap_or(Value::Null))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

/// Whether an update keeps the stored (non-nil) `nodeAffinity`, beta-to-GA
/// key moves aside.
pub fn equal_but_ga_labels(new: Option<&Value>, old: &Value) -> bool {
    // A nil and a set affinity differ even when the set one is empty.
    let Some(new_value) = new else {
        return false;
    };
    semantic(new_value) == semantic(&masked(old, new))
}

/// How `field.Invalid` prints a `*core.VolumeNodeAffinity` (Go's `%#v` of the
/// struct it points to; the pointer it holds is shown as an address, here
/// always the same one).
pub fn go_value(affinity: Option<&Value>) -> String {
    match affinity {
        None => "null".to_string(),
        Some(affinity) => match affinity.get("required").filter(|value| !value.is_null()) {
            None => "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(nil)}".to_string(),
            Some(_) => {
                "core.VolumeNodeAffinity{Required:(*core.NodeSelector)(0xc000000000)}".to_string()
            }
        },
    }
}
