//! DefaultTolerationSeconds (`plugin/pkg/admission/defaulttolerationseconds`
//! `Plugin.Admit`): a pod created or updated without a toleration of the
//! `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable`
//! NoExecute taints gets one for each, for
//! `--default-not-ready-toleration-seconds` and
//! `--default-unreachable-toleration-seconds` (300 by default).

use serde_json::{json, Value};

use super::attributes::{Attributes, Operation};

/// `v1.TaintNodeNotReady`.
const NOT_READY: &str = "node.kubernetes.io/not-ready";
/// `v1.TaintNodeUnreachable`.
const UNREACHABLE: &str = "node.kubernetes.io/unreachable";
/// `Plugin.Admit` on pods (no subresource), create and update; `seconds`
/// are the (not-ready, unreachable) tolerations' seconds.
pub fn admit(attributes: &Attributes<'_>, object: Option<&mut Value>, seconds: (i64, i64)) {
    if !matches!(attributes.operation, Operation::Create | Operation::Update)
        || !attributes.resource.group.is_empty()
        || attributes.resource.name != "pods"
        || !attributes.subresource.is_empty()
    {
        return;
    }
    let Some(spec) = object
        .and_then(|pod| pod.get_mut("spec"))
        .and_then(Value::as_object_mut)
    else {
        return;
    };
    let tolerations: &[Value] = spec
        .get("tolerations")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let tolerates = |key: &str| {
        tolerations.iter().any(|toleration| {
            let field = |name: &str| toleration.get(name).and_then(Value::as_str).unwrap_or("");
            (field("key") == key || field("key").is_empty())
                && (field("effect") == "NoExecute" || field("effect").is_empty())
        })
    };
    let missing: Vec<(&str, i64)> = [(NOT_READY, seconds.0), (UNREACHABLE, seconds.1)]
        .into_iter()
        .filter(|(key, _)| !tolerates(key))
        .collect();
    if missing.is_empty() {
        return;
    }
    if !spec.get("tolerations").is_some_and(Value::is_array) {
        spec.insert("tolerations".into(), json!([]));
    }
    if let Some(tolerations) = spec.get_mut("tolerations").and_then(Value::as_array_mut) {
        for (key, seconds) in missing {
            tolerations.push(json!({
                "key": key,
                "operator": "Exists",
                "effect": "NoExecute",
                "tolerationSeconds": seconds,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::attributes::GroupVersionName;

    fn attributes(operation: Operation, subresource: &'static str) -> Attributes<'static> {
        Attributes {
            operation,
            kind: GroupVersionName::new("", "v1", "Pod"),
            resource: GroupVersionName::new("", "v1", "pods"),
            subresource,
            name: "p",
            namespace: "ns",
            old_object: None,
            options: Value::Null,
            dry_run: false,
            user: None,
        }
    }

    fn admitted(mut pod: Value) -> Value {
        admit(
            &attributes(Operation::Create, ""),
            Some(&mut pod),
            (300, 300),
        );
        pod
    }

    fn toleration(key: &str) -> Value {
        json!({"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300})
    }

    // Cases of `admission_test.go` `TestForgivenessAdmission`.
    #[test]
    fn adds_both_tolerations_to_a_pod_without_them() {
        let pod = admitted(json!({"spec": {"containers": []}}));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([toleration(NOT_READY), toleration(UNREACHABLE)])
        );
    }

    #[test]
    fn keeps_existing_tolerations_and_adds_the_missing_one() {
        let own = json!({"key": NOT_READY, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 700});
        let pod = admitted(json!({"spec": {"tolerations": [own.clone()]}}));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([own, toleration(UNREACHABLE)])
        );
        // An empty effect tolerates every effect.
        let any_effect = json!({"key": UNREACHABLE, "operator": "Exists"});
        let pod = admitted(json!({"spec": {"tolerations": [any_effect.clone()]}}));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([any_effect, toleration(NOT_READY)])
        );
    }

    #[test]
    fn an_empty_key_tolerates_both_and_other_effects_tolerate_neither() {
        let everything = json!({"operator": "Exists"});
        let pod = admitted(json!({"spec": {"tolerations": [everything.clone()]}}));
        assert_eq!(pod["spec"]["tolerations"], json!([everything]));
        let no_schedule = json!({"key": NOT_READY, "operator": "Exists", "effect": "NoSchedule"});
        let pod = admitted(json!({"spec": {"tolerations": [no_schedule.clone()]}}));
        assert_eq!(
            pod["spec"]["tolerations"],
            json!([no_schedule, toleration(NOT_READY), toleration(UNREACHABLE)])
        );
    }

    #[test]
    fn subresources_and_deletes_are_left_alone() {
        let mut pod = json!({"spec": {}});
        admit(
            &attributes(Operation::Update, "status"),
            Some(&mut pod),
            (300, 300),
        );
        admit(
            &attributes(Operation::Delete, ""),
            Some(&mut pod),
            (300, 300),
        );
        assert_eq!(pod, json!({"spec": {}}));
        admit(
            &attributes(Operation::Update, ""),
            Some(&mut pod),
            (300, 300),
        );
        assert_eq!(pod["spec"]["tolerations"].as_array().map(Vec::len), Some(2));
    }

    #[test]
    fn the_flags_set_the_seconds() {
        let mut pod = json!({"spec": {}});
        admit(&attributes(Operation::Create, ""), Some(&mut pod), (30, 60));
        assert_eq!(
            pod["spec"]["tolerations"][0]["tolerationSeconds"],
            json!(30)
        );
        assert_eq!(
            pod["spec"]["tolerations"][1]["tolerationSeconds"],
            json!(60)
        );
    }
}
