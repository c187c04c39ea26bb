//! Defaults kube-apiserver applies to the kinds of the non-core API groups
//! that `defaults.rs` does not match (`pkg/apis/storage/v1/defaults.go` and
//! its `zz_generated.defaults.go`, `pkg/apis/networking/v1/defaults.go`,
//! `pkg/apis/discovery/v1/defaults.go`,
//! `pkg/apis/admissionregistration/v1/defaults.go`,
//! `pkg/apis/flowcontrol/v1/defaults.go`, `pkg/apis/resource/v1/defaults.go`,
//! `pkg/apis/autoscaling/v1/defaults.go` and `v2/defaults.go`,
//! `kube-aggregator/pkg/apis/apiregistration/v1/defaults.go`).
//! The kinds of the served non-core groups not named here have no
//! defaulter in kube 1.34. Idempotent, like every defaulter.

use serde_json::{json, Map, Value};

use crate::registry::ResourceDef;

fn set_default(map: &mut Map<String, Value>, field: &str, value: Value) {
    if map.get(field).is_none_or(Value::is_null) {
        map.insert(field.to_string(), value);
    }
}

/// The object's `spec`, made `{}` when it is missing or null: in Go the spec
/// is a struct, so its defaulter runs on an object sent without one.
fn spec_of(map: &mut Map<String, Value>) -> Option<&mut Map<String, Value>> {
    if map.get("spec").is_none_or(Value::is_null) {
        map.insert("spec".into(), json!({}));
    }
    map.get_mut("spec").and_then(Value::as_object_mut)
}

fn each_object_in(
    map: &mut Map<String, Value>,
    field: &str,
    mut apply: impl FnMut(&mut Map<String, Value>),
) {
    if let Some(items) = map.get_mut(field).and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            apply(item);
        }
    }
}

pub fn apply(resource: &ResourceDef, object: &mut Value) {
    let Some(map) = object.as_object_mut() else {
        return;
    };
    match (resource.group, resource.kind) {
        // `SetDefaults_StorageClass`.
        ("storage.k8s.io", "StorageClass") => {
            set_default(map, "reclaimPolicy", json!("Delete"));
            set_default(map, "volumeBindingMode", json!("Immediate"));
        }
        // `SetDefaults_CSIDriver` (`SELinuxMountReadWriteOncePod` is on in 1.34).
        ("storage.k8s.io", "CSIDriver") => {
            if let Some(spec) = spec_of(map) {
                set_default(spec, "attachRequired", json!(true));
                set_default(spec, "podInfoOnMount", json!(false));
                set_default(spec, "storageCapacity", json!(false));
                set_default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
                if spec
                    .get("volumeLifecycleModes")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty)
                {
                    spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
                }
                set_default(spec, "requiresRepublish", json!(false));
                set_default(spec, "seLinuxMount", json!(false));
            }
        }
        // `SetDefaults_NetworkPolicyPort`, `SetDefaults_NetworkPolicy`.
        ("networking.k8s.io", "NetworkPolicy") => {
            if let Some(spec) = spec_of(map) {
                for rules in ["ingress", "egress"] {
                    each_object_in(spec, rules, |rule| {
                        each_object_in(rule, "ports", |port| {
                            set_default(port, "protocol", json!("TCP"));
                        });
                    });
                }
                let no_types = spec
                    .get("policyTypes")
                    .and_then(Value::as_array)
                    .is_none_or(Vec::is_empty);
                if no_types {
                    let has_egress = spec
                        .get("egress")
                        .and_then(Value::as_array)
                        .is_some_and(|egress| !egress.is_empty());
                    let types = if has_egress {
                        json!(["Ingress", "Egress"])
                    } else {
                        json!(["Ingress"])
                    };
                    spec.insert("policyTypes".into(), types);
                }
            }
        }
        // `SetDefaults_IngressClass`: parameters are cluster-scoped unless said otherwise.
        ("networking.k8s.io", "IngressClass") => {
            if let Some(parameters) = map
                .get_mut("spec")
                .and_then(Value::as_object_mut)
                .and_then(|spec| spec.get_mut("parameters"))
                .and_then(Value::as_object_mut)
            {
                set_default(parameters, "scope", json!("Cluster"));
            }
        }
        // `SetDefaults_EndpointPort`.
        ("discovery.k8s.io", "EndpointSlice") => {
            each_object_in(map, "ports", |port| {
                set_default(port, "name", json!(""));
                set_default(port, "protocol", json!("TCP"));
            });
        }
        // `SetDefaults_FlowSchemaSpec` (`pkg/apis/flowcontrol/v1/defaults.go`).
        ("flowcontrol.apiserver.k8s.io", "FlowSchema") => {
            if let Some(spec) = spec_of(map) {
                if spec
                    .get("matchingPrecedence")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    == 0
                {
                    spec.insert("matchingPrecedence".into(), json!(1000));
                }
            }
        }
        // `SetDefaults_PriorityLevelConfiguration`, `SetDefaults_QueuingConfiguration`.
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration") => {
            let Some(spec) = spec_of(map) else { return };
            if let Some(limited) = spec.get_mut("limited").and_then(Value::as_object_mut) {
                set_default(limited, "nominalConcurrencyShares", json!(30));
                set_default(limited, "lendablePercent", json!(0));
                if let Some(queuing) = limited
                    .get_mut("limitResponse")
                    .and_then(|response| response.get_mut("queuing"))
                    .and_then(Value::as_object_mut)
                {
                    for (name, default) in
                        [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)]
                    {
                        if queuing.get(name).and_then(Value::as_i64).unwrap_or(0) == 0 {
                            queuing.insert(name.into(), json!(default));
                        }
                    }
                }
            }
            if let Some(exempt) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
                set_default(exempt, "nominalConcurrencyShares", json!(0));
                set_default(exempt, "lendablePercent", json!(0));
            }
        }
        // `SetDefaults_ExactDeviceRequest`, `SetDefaults_DeviceSubRequest`
        // (`pkg/apis/resource/v1/defaults.go`): ExactCount of one device.
        ("resource.k8s.io", "ResourceClaim" | "ResourceClaimTemplate") => {
            let claim_spec = if resource.kind == "ResourceClaim" {
                map.get_mut("spec")
            } else {
                map.get_mut("spec").and_then(|spec| spec.get_mut("spec"))
            };
            let Some(devices) = claim_spec
                .and_then(|spec| spec.get_mut("devices"))
                .and_then(Value::as_object_mut)
            else {
                return;
            };
            each_object_in(devices, "requests", |request| {
                if let Some(exactly) = request.get_mut("exactly").and_then(Value::as_object_mut) {
                    device_request_defaults(exactly);
                }
                each_object_in(request, "firstAvailable", device_request_defaults);
            });
        }
        // `SetDefaults_HorizontalPodAutoscaler` of the request's version:
        // autoscaling/v1 defaults only `minReplicas`; v2 also the metrics and
        // the behavior's rules.
        ("autoscaling", "HorizontalPodAutoscaler") => {
            if resource.version == "v1" {
                if let Some(spec) = spec_of(map) {
                    set_default(spec, "minReplicas", json!(1));
                }
            } else {
                horizontal_pod_autoscaler_v2(map);
            }
        }
        // `SetObjectDefaults_VolumeAttachment`: the inline PersistentVolumeSpec's sources.
        ("storage.k8s.io", "VolumeAttachment") => {
            if let Some(inline) = map
                .get_mut("spec")
                .and_then(|spec| spec.get_mut("source"))
                .and_then(|source| source.get_mut("inlineVolumeSpec"))
                .and_then(Value::as_object_mut)
            {
                persistent_volume_sources(inline);
            }
        }
        // `SetDefaults_ServiceReference` (`apiregistration/v1/defaults.go`).
        ("apiregistration.k8s.io", "APIService") => {
            if let Some(service) = map
                .get_mut("spec")
                .and_then(Value::as_object_mut)
                .and_then(|spec| spec.get_mut("service"))
                .and_then(Value::as_object_mut)
            {
                set_default(service, "port", json!(443));
            }
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration") => {
            each_object_in(map, "webhooks", |hook| webhook_defaults(hook, false));
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration") => {
            each_object_in(map, "webhooks", |hook| webhook_defaults(hook, true));
        }
        // `SetDefaults_ValidatingAdmissionPolicySpec`, `SetDefaults_MatchResources`.
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy") => {
            if let Some(spec) = spec_of(map) {
                set_default(spec, "failurePolicy", json!("Fail"));
                if let Some(constraints) = spec
                    .get_mut("matchConstraints")
                    .and_then(Value::as_object_mut)
                {
                    match_resources_defaults(constraints);
                }
            }
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding") => {
            if let Some(resources) = spec_of(map)
                .and_then(|spec| spec.get_mut("matchResources"))
                .and_then(Value::as_object_mut)
            {
                match_resources_defaults(resources);
            }
        }
        _ => {}
    }
}

/// `SetDefaults_HorizontalPodAutoscaler` and
/// `SetDefaults_HorizontalPodAutoscalerBehavior` of `autoscaling/v2`
/// (`pkg/apis/autoscaling/v2/defaults.go`): `minReplicas` 1, no metrics
/// means a CPU utilization target of 80%, and a behavior that is set gets
/// both rules filled in by `GenerateHPAScaleUpRules` /
/// `GenerateHPAScaleDownRules`. kube also runs it when it reads an object
/// from storage, so it applies to what an autoscaling/v1 write stores
/// (`versions::storage_form`).
pub fn horizontal_pod_autoscaler_v2(map: &mut Map<String, Value>) {
    let Some(spec) = spec_of(map) else { return };
    set_default(spec, "minReplicas", json!(1));
    let no_metrics = spec
        .get("metrics")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty);
    if no_metrics {
        spec.insert(
            "metrics".into(),
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}]),
        );
    }
    let Some(behavior) = spec.get_mut("behavior").and_then(Value::as_object_mut) else {
        return;
    };
    let scale_up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]});
    // No stabilization window: the controller's `--horizontal-pod-autoscaler-downscale-stabilization` decides.
    let scale_down = json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15},
    ]});
    for (rules, defaults) in [("scaleUp", scale_up), ("scaleDown", scale_down)] {
        let generated = scaling_rules(behavior.get(rules), defaults);
        behavior.insert(rules.into(), generated);
    }
}

/// The defaulters of the PersistentVolumeSource kinds that have one
/// (`pkg/apis/core/v1/defaults.go`: `SetDefaults_HostPathVolumeSource`,
/// the RBD `+default` markers, `SetDefaults_ISCSIPersistentVolumeSource`,
/// `SetDefaults_AzureDiskVolumeSource`, `SetDefaults_ScaleIOPersistentVolumeSource`).
fn persistent_volume_sources(spec: &mut Map<String, Value>) {
    let mut source = |name: &str, defaults: &[(&str, Value, bool)]| {
        let Some(source) = spec.get_mut(name).and_then(Value::as_object_mut) else {
            return;
        };
        for (field, value, empty_string_too) in defaults {
            let empty = *empty_string_too && source.get(*field).and_then(Value::as_str) == Some("");
            if empty || source.get(*field).is_none_or(Value::is_null) {
                source.insert((*field).into(), value.clone());
            }
        }
    };
    source("hostPath", &[("type", json!(""), false)]);
    source(
        "rbd",
        &[
            ("pool", json!("rbd"), true),
            ("user", json!("admin"), true),
            ("keyring", json!("/etc/ceph/keyring"), true),
        ],
    );
    source("iscsi", &[("iscsiInterface", json!("default"), true)]);
    source(
        "azureDisk",
        &[
            ("cachingMode", json!("ReadWrite"), false),
            ("kind", json!("Shared"), false),
            ("fsType", json!("ext4"), false),
            ("readOnly", json!(false), false),
        ],
    );
    source(
        "scaleIO",
        &[
            ("storageMode", json!("ThinProvisioned"), true),
            ("fsType", json!("xfs"), true),
        ],
    );
}

/// `copyHPAScalingRules`: the fields set in `from` over the defaults.
fn scaling_rules(from: Option<&Value>, mut defaults: Value) -> Value {
    let (Some(from), Some(to)) = (from.and_then(Value::as_object), defaults.as_object_mut()) else {
        return defaults;
    };
    for field in [
        "selectPolicy",
        "stabilizationWindowSeconds",
        "policies",
        "tolerance",
    ] {
        if let Some(value) = from.get(field).filter(|value| !value.is_null()) {
            to.insert(field.into(), value.clone());
        }
    }
    defaults
}

fn device_request_defaults(request: &mut Map<String, Value>) {
    set_default(request, "allocationMode", json!("ExactCount"));
    if request.get("allocationMode").and_then(Value::as_str) == Some("ExactCount")
        && request.get("count").and_then(Value::as_i64).unwrap_or(0) == 0
    {
        request.insert("count".into(), json!(1));
    }
}

/// `SetDefaults_MatchResources` with `SetDefaults_Rule` of its rules
/// (`pkg/apis/admissionregistration/v1/defaults.go`).
fn match_resources_defaults(resources: &mut Map<String, Value>) {
    set_default(resources, "matchPolicy", json!("Equivalent"));
    set_default(resources, "namespaceSelector", json!({}));
    set_default(resources, "objectSelector", json!({}));
    for rules in ["resourceRules", "excludeResourceRules"] {
        each_object_in(resources, rules, |rule| {
            set_default(rule, "scope", json!("*"));
        });
    }
}

/// `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook`, with
/// `SetDefaults_Rule` and `SetDefaults_ServiceReference`.
fn webhook_defaults(hook: &mut Map<String, Value>, mutating: bool) {
    set_default(hook, "failurePolicy", json!("Fail"));
    set_default(hook, "matchPolicy", json!("Equivalent"));
    set_default(hook, "namespaceSelector", json!({}));
    set_default(hook, "objectSelector", json!({}));
    set_default(hook, "timeoutSeconds", json!(10));
    if mutating {
        set_default(hook, "reinvocationPolicy", json!("Never"));
    }
    each_object_in(hook, "rules", |rule| {
        set_default(rule, "scope", json!("*"));
    });
    if let Some(service) = hook
        .get_mut("clientConfig")
        .and_then(Value::as_object_mut)
        .and_then(|config| config.get_mut("service"))
        .and_then(Value::as_object_mut)
    {
        set_default(service, "port", json!(443));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(group: &str, kind: &str) -> &'static ResourceDef {
        crate::registry::builtin_resources()
            .iter()
            .find(|resource| resource.group == group && resource.kind == kind)
            .unwrap_or_else(|| panic!("no resource {group} {kind}"))
    }

    fn defaulted(group: &str, kind: &str, mut object: Value) -> Value {
        let resource = resource(group, kind);
        apply(resource, &mut object);
        let again = {
            let mut copy = object.clone();
            apply(resource, &mut copy);
            copy
        };
        assert_eq!(again, object, "defaulting is idempotent");
        object
    }

    #[test]
    fn flowcontrol_and_resource_defaults_as_kube_sets_them() {
        let schema = defaulted(
            "flowcontrol.apiserver.k8s.io",
            "FlowSchema",
            json!({"spec": {"priorityLevelConfiguration": {"name": "p"}}}),
        );
        assert_eq!(schema["spec"]["matchingPrecedence"], 1000);
        let level = defaulted(
            "flowcontrol.apiserver.k8s.io",
            "PriorityLevelConfiguration",
            json!({"spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 16}}}}}),
        );
        assert_eq!(
            level["spec"]["limited"],
            json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
                   "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 8, "queueLengthLimit": 50}}})
        );
        let exempt = defaulted(
            "flowcontrol.apiserver.k8s.io",
            "PriorityLevelConfiguration",
            json!({"spec": {"type": "Exempt", "exempt": {}}}),
        );
        assert_eq!(
            exempt["spec"]["exempt"],
            json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
        );
        let claim = defaulted(
            "resource.k8s.io",
            "ResourceClaim",
            json!({"spec": {"devices": {"requests": [
                {"name": "a", "exactly": {"deviceClassName": "c"}},
                {"name": "b", "exactly": {"deviceClassName": "c", "allocationMode": "All"}},
                {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "c", "count": 2}]},
            ]}}}),
        );
        let requests = &claim["spec"]["devices"]["requests"];
        assert_eq!(
            requests[0]["exactly"],
            json!({"deviceClassName": "c", "allocationMode": "ExactCount", "count": 1})
        );
        assert_eq!(
            requests[1]["exactly"],
            json!({"deviceClassName": "c", "allocationMode": "All"})
        );
        assert_eq!(requests[2]["firstAvailable"][0]["count"], 2);
        let template = defaulted(
            "resource.k8s.io",
            "ResourceClaimTemplate",
            json!({"spec": {"spec": {"devices": {"requests": [{"name": "a", "exactly": {"deviceClassName": "c"}}]}}}}),
        );
        assert_eq!(
            template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"],
            1
        );
    }

    #[test]
    fn v1_defaults_as_kube_sets_them() {
        let class = defaulted(
            "storage.k8s.io",
            "StorageClass",
            json!({"provisioner": "a/b"}),
        );
        assert_eq!(class["reclaimPolicy"], "Delete");
        assert_eq!(class["volumeBindingMode"], "Immediate");
        let kept = defaulted(
            "storage.k8s.io",
            "StorageClass",
            json!({"reclaimPolicy": "Retain"}),
        );
        assert_eq!(kept["reclaimPolicy"], "Retain");

        // Sent without a spec, as kube's Go struct defaults it.
        let bare = defaulted("storage.k8s.io", "CSIDriver", json!({}));
        assert_eq!(bare["spec"]["attachRequired"], true);
        let bare = defaulted("networking.k8s.io", "NetworkPolicy", json!({"spec": null}));
        assert_eq!(bare["spec"]["policyTypes"], json!(["Ingress"]));
        let driver = defaulted("storage.k8s.io", "CSIDriver", json!({"spec": {}}));
        assert_eq!(
            driver["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                   "fsGroupPolicy": "ReadWriteOnceWithFSType", "volumeLifecycleModes": ["Persistent"],
                   "requiresRepublish": false, "seLinuxMount": false})
        );

        let policy = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"ingress": [{"ports": [{"port": 80}, {"protocol": "UDP"}]}]}}),
        );
        assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress"]));
        assert_eq!(policy["spec"]["ingress"][0]["ports"][0]["protocol"], "TCP");
        assert_eq!(policy["spec"]["ingress"][0]["ports"][1]["protocol"], "UDP");
        let egress = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"egress": [{}]}}),
        );
        assert_eq!(egress["spec"]["policyTypes"], json!(["Ingress", "Egress"]));

        let class = defaulted(
            "networking.k8s.io",
            "IngressClass",
            json!({"spec": {"controller": "a/b", "parameters": {"kind": "k", "name": "n"}}}),
        );
        assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");

        let slice = defaulted(
            "discovery.k8s.io",
            "EndpointSlice",
            json!({"ports": [{"port": 80}]}),
        );
        assert_eq!(
            slice["ports"],
            json!([{"port": 80, "name": "", "protocol": "TCP"}])
        );
    }
}

#[cfg(test)]
#[path = "defaults_non_core_tests.rs"]
mod group_tests;
