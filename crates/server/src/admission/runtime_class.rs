//! RuntimeClass (`plugin/pkg/admission/runtimeclass` `RuntimeClass.Admit` /
//! `Validate`), on pod creates: the named RuntimeClass must exist, its
//! `overhead.podFixed` becomes the pod's `overhead` (a different one set by
//! the pod is refused), its `scheduling.nodeSelector` is merged into the
//! pod's (a conflicting value is refused) and its tolerations merged with
//! the pod's (`pkg/util/tolerations` `MergeTolerations`).

use std::cmp::Ordering;

use serde_json::{Map, Value};

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::object::ObjectStore;
use crate::quantity::Quantity;
use crate::status::Result;

fn applies(attributes: &Attributes<'_>) -> bool {
    attributes.operation == Operation::Create
        && attributes.resource.group.is_empty()
        && attributes.resource.name == "pods"
        && attributes.subresource.is_empty()
}

/// `prepareObjects`: the pod's RuntimeClass, `None` when it names none.
fn runtime_class(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    pod: &Value,
) -> Result<Option<Value>> {
    let Some(name) = pod
        .pointer("/spec/runtimeClassName")
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let snapshot = store.snapshot();
    match snapshot
        .get(&format!("/registry/runtimeclasses/{name}"))
        .and_then(|entry| entry.object.value())
    {
        Some(class) => Ok(Some(class)),
        None => Err(forbidden(
            attributes,
            Some(pod),
            &format!(
                "pod rejected: RuntimeClass {} not found",
                crate::go::strconv::quote(name)
            ),
        )),
    }
}

/// `apiequality.Semantic.DeepEqual` of two resource lists: the same names
/// with equal quantities (nil and empty alike).
fn same_resources(a: Option<&Value>, b: Option<&Value>) -> bool {
    let empty = Map::new();
    let a = a.and_then(Value::as_object).unwrap_or(&empty);
    let b = b.and_then(Value::as_object).unwrap_or(&empty);
    a.len() == b.len()
        && a.iter().all(|(name, quantity)| {
            let parse = |value: &Value| value.as_str().and_then(|text| Quantity::parse(text).ok());
            match (parse(quantity), b.get(name).and_then(parse)) {
                (Some(x), Some(y)) => x.cmp_value(&y) == Ordering::Equal,
                _ => b.get(name) == Some(quantity),
            }
        })
}

const OVERHEAD_MISMATCH: &str =
    "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead";

/// `RuntimeClass.Admit`: `setOverhead` then `setScheduling`.
pub fn admit(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&mut Value>,
) -> Result<()> {
    let Some(pod) = object else {
        return Ok(());
    };
    if !applies(attributes) {
        return Ok(());
    }
    let Some(class) = runtime_class(store, attributes, pod)? else {
        return Ok(());
    };
    if let Some(pod_fixed) = class.pointer("/overhead/podFixed").filter(|v| !v.is_null()) {
        let own = pod.pointer("/spec/overhead");
        let own_set = own
            .and_then(Value::as_object)
            .is_some_and(|own| !own.is_empty());
        if own_set && !same_resources(Some(pod_fixed), own) {
            return Err(forbidden(attributes, Some(pod), OVERHEAD_MISMATCH));
        }
        if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
            spec.insert("overhead".into(), pod_fixed.clone());
        }
    }
    let Some(scheduling) = class.get("scheduling").filter(|v| v.is_object()) else {
        return Ok(());
    };
    let class_selector = scheduling
        .get("nodeSelector")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let pod_selector = pod
        .pointer("/spec/nodeSelector")
        .and_then(Value::as_object)
        .cloned();
    let selector = match pod_selector {
        None => class_selector,
        Some(mut merged) => {
            for (key, class_value) in class_selector {
                if let Some(pod_value) = merged.get(&key) {
                    if pod_value != &class_value {
                        let text = |value: &Value| value.as_str().unwrap_or_default().to_string();
                        return Err(forbidden(
                            attributes,
                            Some(pod),
                            &format!(
                                "conflict: runtimeClass.scheduling.nodeSelector[{key}] = {}; pod.spec.nodeSelector[{key}] = {}",
                                text(&class_value),
                                text(pod_value)
                            ),
                        ));
                    }
                }
                merged.insert(key, class_value);
            }
            merged
        }
    };
    let pod_tolerations = pod
        .pointer("/spec/tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let class_tolerations = scheduling
        .get("tolerations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let tolerations = merge_tolerations(pod_tolerations, class_tolerations);
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        if selector.is_empty() {
            spec.remove("nodeSelector");
        } else {
            spec.insert("nodeSelector".into(), Value::Object(selector));
        }
        if tolerations.is_empty() {
            spec.remove("tolerations");
        } else {
            spec.insert("tolerations".into(), Value::Array(tolerations));
        }
    }
    Ok(())
}

/// `RuntimeClass.Validate` (`validateOverhead`).
pub fn validate(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    let Some(pod) = object else {
        return Ok(());
    };
    if !applies(attributes) {
        return Ok(());
    }
    let class = runtime_class(store, attributes, pod)?;
    let own = pod.pointer("/spec/overhead").filter(|v| !v.is_null());
    let class_overhead = class
        .as_ref()
        .and_then(|class| class.pointer("/overhead/podFixed"))
        .filter(|v| !v.is_null());
    let why = match class_overhead {
        Some(pod_fixed) if !same_resources(Some(pod_fixed), own) => OVERHEAD_MISMATCH,
        None if own.is_some() => {
            "pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"
        }
        _ => return Ok(()),
    };
    Err(forbidden(attributes, Some(pod), why))
}

/// A toleration's fields as `isSuperset` reads them.
#[derive(Debug, PartialEq)]
struct Toleration<'a> {
    key: &'a str,
    operator: &'a str,
    value: &'a str,
    effect: &'a str,
    seconds: Option<i64>,
}

impl<'a> Toleration<'a> {
    fn read(toleration: &'a Value) -> Self {
        let text = |field: &str| toleration.get(field).and_then(Value::as_str).unwrap_or("");
        Toleration {
            key: text("key"),
            operator: text("operator"),
            value: text("value"),
            effect: text("effect"),
            seconds: toleration.get("tolerationSeconds").and_then(Value::as_i64),
        }
    }

    /// `isSuperset`: whether `self` tolerates everything `t` does.
    fn is_superset(&self, t: &Toleration<'_>) -> bool {
        if self == t {
            return true;
        }
        if t.key != self.key && (!self.key.is_empty() || self.operator != "Exists") {
            return false;
        }
        if t.effect != self.effect && !self.effect.is_empty() {
            return false;
        }
        if self.effect == "NoExecute" {
            if let Some(own) = self.seconds {
                if t.seconds.is_none_or(|seconds| seconds > own) {
                    return false;
                }
            }
        }
        match self.operator {
            "Equal" | "" => t.operator == "Equal" && t.value == self.value,
            "Exists" => true,
            _ => false,
        }
    }
}

/// `MergeTolerations`: both lists, leaving out any toleration another one
/// covers (of equal ones, the first is kept).
pub fn merge_tolerations(first: Vec<Value>, second: Vec<Value>) -> Vec<Value> {
    let all: Vec<Value> = first.into_iter().chain(second).collect();
    let mut merged: Vec<Value> = Vec::new();
    for (index, candidate) in all.iter().enumerate() {
        let toleration = Toleration::read(candidate);
        let covered_by_kept = merged
            .iter()
            .any(|kept| Toleration::read(kept).is_superset(&toleration));
        let covered_by_later = all[index + 1..].iter().any(|later| {
            let later = Toleration::read(later);
            later != toleration && later.is_superset(&toleration)
        });
        if !covered_by_kept && !covered_by_later {
            merged.push(candidate.clone());
        }
    }
    merged
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::test_support::{attributes, store_with};

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    }

    async fn store() -> ObjectStore {
        store_with(&[(
            "/registry/runtimeclasses/gvisor",
            json!({
                "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": "gvisor"}, "handler": "runsc",
                "overhead": {"podFixed": {"cpu": "100m", "memory": "64Mi"}},
                "scheduling": {
                    "nodeSelector": {"runtime": "gvisor"},
                    "tolerations": [{"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}],
                },
            }),
        )])
        .await
    }

    #[tokio::test]
    async fn sets_overhead_selector_and_tolerations() {
        let store = store().await;
        let create = attributes(Operation::Create, "", "v1", "pods", None);
        let mut admitted = pod(json!({
            "runtimeClassName": "gvisor",
            "nodeSelector": {"zone": "a"},
            "tolerations": [{"key": "other", "operator": "Exists"}],
        }));
        admit(&store, &create, Some(&mut admitted)).expect("admitted");
        assert_eq!(
            admitted["spec"]["overhead"],
            json!({"cpu": "100m", "memory": "64Mi"})
        );
        assert_eq!(
            admitted["spec"]["nodeSelector"],
            json!({"zone": "a", "runtime": "gvisor"})
        );
        assert_eq!(
            admitted["spec"]["tolerations"],
            json!([{"key": "other", "operator": "Exists"},
                   {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"}])
        );
        validate(&store, &create, Some(&admitted)).expect("valid");
        // An equal overhead written differently is the same overhead.
        let mut same = pod(
            json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "0.1", "memory": "64Mi"}}),
        );
        admit(&store, &create, Some(&mut same)).expect("admitted");
    }

    #[tokio::test]
    async fn refuses_what_kube_refuses() {
        let store = store().await;
        let create = attributes(Operation::Create, "", "v1", "pods", None);
        let refused = |spec: Value| {
            let mut pod = pod(spec);
            admit(&store, &create, Some(&mut pod))
                .expect_err("refused")
                .message
        };
        assert_eq!(
            refused(json!({"runtimeClassName": "kata"})),
            r#"pods "p" is forbidden: pod rejected: RuntimeClass "kata" not found"#
        );
        assert_eq!(
            refused(json!({"runtimeClassName": "gvisor", "overhead": {"cpu": "1"}})),
            r#"pods "p" is forbidden: pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead"#
        );
        assert_eq!(
            refused(json!({"runtimeClassName": "gvisor", "nodeSelector": {"runtime": "runc"}})),
            r#"pods "p" is forbidden: conflict: runtimeClass.scheduling.nodeSelector[runtime] = gvisor; pod.spec.nodeSelector[runtime] = runc"#
        );
        let without_class = pod(json!({"overhead": {"cpu": "1"}}));
        assert_eq!(
            validate(&store, &create, Some(&without_class))
                .expect_err("refused")
                .message,
            r#"pods "p" is forbidden: pod rejected: Pod Overhead set without corresponding RuntimeClass defined Overhead"#
        );
    }

    // Cases of `pkg/util/tolerations/tolerations_test.go`.
    #[test]
    fn merge_keeps_only_the_broadest_tolerations() {
        let exists_all = json!({"operator": "Exists"});
        let foo_equal =
            json!({"key": "foo", "operator": "Equal", "value": "bar", "effect": "NoSchedule"});
        let foo_exists = json!({"key": "foo", "operator": "Exists"});
        let short = json!({"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10});
        let long = json!({"key": "foo", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 100});
        assert_eq!(
            merge_tolerations(vec![foo_equal.clone()], vec![foo_exists.clone()]),
            vec![foo_exists.clone()]
        );
        assert_eq!(
            merge_tolerations(vec![foo_equal.clone(), exists_all.clone()], vec![]),
            vec![exists_all.clone()]
        );
        assert_eq!(
            merge_tolerations(vec![short.clone()], vec![long.clone()]),
            vec![long.clone()]
        );
        assert_eq!(
            merge_tolerations(vec![foo_equal.clone()], vec![foo_equal.clone()]),
            vec![foo_equal]
        );
    }
}
