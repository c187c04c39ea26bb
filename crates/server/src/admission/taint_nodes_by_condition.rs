//! TaintNodesByCondition (`plugin/pkg/admission/nodetaint/admission.go`
//! `Plugin.Admit`, on by default): a Node is created with the
//! `node.kubernetes.io/not-ready:NoSchedule` taint unless it already has a
//! taint of that key and effect (`Taint.MatchTaint`), so that nothing is
//! scheduled onto it before the node lifecycle controller has seen it
//! ready. Only the create of a Node itself, never an update or a
//! subresource.

use serde_json::{json, Value};

use super::attributes::{Attributes, Operation};

/// `TaintNodeNotReady`.
pub const TAINT_NODE_NOT_READY: &str = "node.kubernetes.io/not-ready";

/// `Plugin.Admit` (`addNotReadyTaint`).
pub fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>) {
    if attributes.operation != Operation::Create
        || !attributes.resource.group.is_empty()
        || attributes.resource.name != "nodes"
        || !attributes.subresource.is_empty()
    {
        return;
    }
    let Some(node) = object.and_then(Value::as_object_mut) else {
        return;
    };
    let spec = node.entry("spec").or_insert_with(|| json!({}));
    if spec.is_null() {
        *spec = json!({});
    }
    // Anything but an object or a list is the decoder's and validation's
    // to refuse; the plugin leaves it alone.
    let Some(spec) = spec.as_object_mut() else {
        return;
    };
    let taints = spec.entry("taints").or_insert_with(|| json!([]));
    if taints.is_null() {
        *taints = json!([]);
    }
    let Some(taints) = taints.as_array_mut() else {
        return;
    };
    let present = taints.iter().any(|taint| {
        taint.get("key").and_then(Value::as_str) == Some(TAINT_NODE_NOT_READY)
            && taint.get("effect").and_then(Value::as_str) == Some("NoSchedule")
    });
    if !present {
        taints.push(json!({"key": TAINT_NODE_NOT_READY, "effect": "NoSchedule"}));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::GroupVersionName;

    fn attributes(
        operation: Operation,
        resource: &str,
        subresource: &'static str,
    ) -> Attributes<'static> {
        Attributes {
            operation,
            kind: GroupVersionName::new("", "v1", "Node"),
            resource: GroupVersionName::new("", "v1", resource),
            subresource,
            name: "n",
            namespace: "",
            old_object: None,
            options: Value::Null,
            dry_run: false,
            user: None,
        }
    }

    fn admitted(attributes: &Attributes<'_>, mut node: Value) -> Value {
        admit(attributes, Some(&mut node));
        node
    }

    #[test]
    fn a_created_node_gets_the_not_ready_taint_once() {
        let create = attributes(Operation::Create, "nodes", "");
        let not_ready = json!({"key": TAINT_NODE_NOT_READY, "effect": "NoSchedule"});
        assert_eq!(
            admitted(&create, json!({"metadata": {"name": "n"}}))["spec"]["taints"],
            json!([not_ready])
        );
        assert_eq!(
            admitted(&create, json!({"spec": null}))["spec"]["taints"],
            json!([not_ready])
        );
        // Another taint is kept; the not-ready one is appended after it.
        let other = json!({"key": "dedicated", "value": "gpu", "effect": "NoSchedule"});
        assert_eq!(
            admitted(&create, json!({"spec": {"taints": [other]}}))["spec"]["taints"],
            json!([other, not_ready])
        );
        // Same key and effect (whatever the value): not added again.
        let present = json!({"key": TAINT_NODE_NOT_READY, "value": "x", "effect": "NoSchedule"});
        assert_eq!(
            admitted(&create, json!({"spec": {"taints": [present]}}))["spec"]["taints"],
            json!([present])
        );
        // Same key, another effect: MatchTaint differs, so it is added.
        let execute = json!({"key": TAINT_NODE_NOT_READY, "effect": "NoExecute"});
        assert_eq!(
            admitted(&create, json!({"spec": {"taints": [execute]}}))["spec"]["taints"],
            json!([execute, not_ready])
        );
    }

    #[test]
    fn updates_subresources_other_resources_and_malformed_specs_are_left_alone() {
        let node = json!({"spec": {}});
        for attributes in [
            attributes(Operation::Update, "nodes", ""),
            attributes(Operation::Create, "nodes", "status"),
            attributes(Operation::Create, "pods", ""),
        ] {
            assert_eq!(admitted(&attributes, node.clone()), node);
        }
        let create = attributes(Operation::Create, "nodes", "");
        for malformed in [
            json!({"spec": "x"}),
            json!({"spec": {"taints": 3}}),
            json!("node"),
        ] {
            assert_eq!(admitted(&create, malformed.clone()), malformed);
        }
    }
}
