//! A pod's QoS class (`pkg/apis/core/helper/qos/qos.go` `GetPodQOS`,
//! `ComputePodQOS`), with the `PodLevelResources` gate as 1.34 ships it
//! (beta, on): pod-level cpu/memory decide when `spec.resources` is set.

use std::collections::BTreeMap;

use serde_json::Value;

use super::field;
use crate::quantity::Quantity;

pub const BEST_EFFORT: &str = "BestEffort";
pub const BURSTABLE: &str = "Burstable";
pub const GUARANTEED: &str = "Guaranteed";

/// The two resources QoS looks at (`isSupportedQoSComputeResource`).
const QOS_RESOURCES: [&str; 2] = ["cpu", "memory"];

/// `GetPodQOS`: the class recorded in `status.qosClass`, else computed.
pub fn get_pod_qos(pod: &Value) -> String {
    let recorded = pod
        .pointer("/status/qosClass")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if recorded.is_empty() {
        compute_pod_qos(pod).to_string()
    } else {
        recorded.to_string()
    }
}

/// `ComputePodQOS`: requests and limits of cpu and memory above zero,
/// summed over containers and init containers (or the pod-level ones).
pub fn compute_pod_qos(pod: &Value) -> &'static str {
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let mut requests: BTreeMap<&str, Quantity> = BTreeMap::new();
    let mut limits: BTreeMap<&str, Quantity> = BTreeMap::new();
    let mut guaranteed = true;
    let pod_level = spec
        .get("resources")
        .filter(|resources| resources.is_object());
    let sources: Vec<&Value> = match pod_level {
        Some(resources) => vec![resources],
        None => field::items_at(spec, "containers")
            .iter()
            .chain(field::items_at(spec, "initContainers"))
            .map(|container| container.get("resources").unwrap_or(&Value::Null))
            .collect(),
    };
    for resources in sources {
        add_positive(resources.get("requests"), &mut requests);
        let found = add_positive(resources.get("limits"), &mut limits);
        if !QOS_RESOURCES.iter().all(|name| found.contains(name)) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return BEST_EFFORT;
    }
    if guaranteed {
        guaranteed = requests.iter().all(|(name, request)| {
            limits
                .get(name)
                .is_some_and(|limit| limit.cmp_value(request).is_eq())
        });
    }
    if guaranteed && requests.len() == limits.len() {
        GUARANTEED
    } else {
        BURSTABLE
    }
}

/// Adds the positive cpu and memory quantities of `list` to `sums`; returns
/// the names found.
fn add_positive(list: Option<&Value>, sums: &mut BTreeMap<&str, Quantity>) -> Vec<&'static str> {
    let mut found = Vec::new();
    let Some(list) = list.and_then(Value::as_object) else {
        return found;
    };
    for name in QOS_RESOURCES {
        let Some(quantity) = list
            .get(name)
            .and_then(Value::as_str)
            .and_then(|text| Quantity::parse(text).ok())
        else {
            continue;
        };
        if quantity.sign() <= 0 {
            continue;
        }
        found.push(name);
        let sum = match sums.get(name) {
            Some(previous) => previous.add(&quantity),
            None => quantity,
        };
        sums.insert(name, sum);
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(containers: Value) -> Value {
        json!({"spec": {"containers": containers}})
    }

    /// Cases of `qos_test.go` `TestComputePodQOS`.
    #[test]
    fn classes_are_kubes() {
        let cases = [
            (json!([{"name": "a"}]), BEST_EFFORT),
            (
                json!([{"resources": {"requests": {"cpu": "0", "memory": "0"}}}]),
                BEST_EFFORT,
            ),
            (
                json!([{"resources": {"limits": {"cpu": "100m", "memory": "100Mi"}, "requests": {"cpu": "100m", "memory": "100Mi"}}}]),
                GUARANTEED,
            ),
            // Undefaulted (decoding would copy the limits to the requests).
            (
                json!([{"resources": {"limits": {"cpu": "100m", "memory": "100Mi"}}}]),
                BURSTABLE,
            ),
            (
                json!([{"resources": {"limits": {"cpu": "100m", "memory": "100Mi"}, "requests": {"cpu": "10m", "memory": "100Mi"}}}]),
                BURSTABLE,
            ),
            (
                json!([{"resources": {"limits": {"cpu": "100m"}, "requests": {"cpu": "100m"}}}]),
                BURSTABLE,
            ),
            (
                json!([
                    {"resources": {"limits": {"cpu": "100m", "memory": "100Mi"}}},
                    {"resources": {"requests": {"cpu": "100m"}}}
                ]),
                BURSTABLE,
            ),
            (
                json!([{"resources": {"requests": {"nvidia.com/gpu": "1"}}}]),
                BEST_EFFORT,
            ),
        ];
        for (containers, expected) in cases {
            assert_eq!(
                compute_pod_qos(&pod(containers.clone())),
                expected,
                "{containers}"
            );
        }
        let mut recorded = pod(json!([]));
        recorded["status"] = json!({"qosClass": "Guaranteed"});
        assert_eq!(get_pod_qos(&recorded), GUARANTEED);
    }
}
