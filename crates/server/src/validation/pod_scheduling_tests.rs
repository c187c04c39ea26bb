//! Cases from kube's `TestValidatePodSpec`, `TestValidateAffinity`,
//! `TestValidatePodCreateWithSchedulingGates`, `TestValidateTopologySpreadConstraints`,
//! `TestValidateReadinessGates`, `TestValidateHostAliases` and
//! `TestValidatePodSpecificAnnotations` (`core/validation/validation_test.go`),
//! through the whole pod validation on defaulted pods.

use serde_json::{json, Value};

use crate::registry::Registry;
use crate::validation::pod::pod;

fn defaulted_pod(metadata: Value, spec: Value) -> Value {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", "pods").expect("served");
    let mut object = json!({"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec});
    crate::defaults::apply(resource, &mut object);
    object
}

/// A valid spec with `extra` merged in.
fn spec(extra: Value) -> Value {
    let mut base = json!({"containers": [{"name": "c", "image": "nginx"}]});
    if let (Some(base), Some(extra)) = (base.as_object_mut(), extra.as_object()) {
        base.extend(extra.clone());
    }
    base
}

fn errors_of(extra: Value) -> Vec<String> {
    pod(&defaulted_pod(json!({"name": "p"}), spec(extra)))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn qualified_name_errors(path: &str, value: &str) -> Vec<String> {
    crate::selector::is_qualified_name(value)
        .into_iter()
        .map(|message| format!("{path}: Invalid value: \"{value}\": {message}"))
        .collect()
}

#[test]
fn valid_scheduling_fields_pass() {
    let valid = [
        json!({"affinity": {
            "nodeAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                    "matchExpressions": [{"key": "key2", "operator": "In", "values": ["value1", "value2"]}],
                    "matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["host1"]}],
                }]},
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "preference": {
                    "matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}}],
            },
            "podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchExpressions": [{"key": "key2", "operator": "In", "values": ["value1", "value2"]}]},
                    "topologyKey": "zone",
                    "namespaces": ["ns"],
                    "namespaceSelector": {"matchExpressions": [{"key": "key", "operator": "In", "values": ["value1", "value2"]}]},
                }],
                "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 10, "podAffinityTerm": {
                    "labelSelector": {"matchExpressions": [{"key": "key2", "operator": "NotIn", "values": ["value1", "value2"]}]},
                    "namespaces": ["ns"],
                    "topologyKey": "region",
                }}],
            },
            "podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [{
                    "labelSelector": {"matchExpressions": [{"key": "key2", "operator": "Exists"}]},
                    "topologyKey": "zone",
                    "matchLabelKeys": ["app"],
                    "mismatchLabelKeys": ["tier"],
                }],
            },
        }}),
        // Preferred node affinity terms may carry invalid label values.
        json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 1, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["-bad-"]}]}}]}}}),
        json!({"topologySpreadConstraints": [
            {"maxSkew": 1, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "DoNotSchedule", "minDomains": 3,
             "nodeAffinityPolicy": "Honor", "nodeTaintsPolicy": "Ignore",
             "labelSelector": {"matchLabels": {"app": "x"}}, "matchLabelKeys": ["pod-template-hash"]},
            {"maxSkew": 1, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "ScheduleAnyway"},
        ]}),
        json!({"readinessGates": [{"conditionType": "example.com/feature-1"}]}),
        json!({"hostAliases": [{"ip": "12.34.56.78", "hostnames": ["host1", "host2"]}]}),
        json!({"overhead": {"cpu": "10m", "memory": "10Mi"}}),
    ];
    for extra in valid {
        assert_eq!(errors_of(extra.clone()), Vec::<String>::new(), "{extra}");
    }
    let mirror = defaulted_pod(
        json!({"name": "p", "annotations": {
            "kubernetes.io/config.mirror": "x",
            "controller.kubernetes.io/pod-deletion-cost": "-10"}}),
        spec(json!({"nodeName": "node-1"})),
    );
    assert!(pod(&mirror).is_empty());
}

#[test]
fn node_affinity_errors() {
    let p = "spec.affinity.nodeAffinity";
    assert_eq!(
        errors_of(json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}})),
        [format!("{p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term")]
    );
    assert_eq!(
        errors_of(json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "key1", "operator": "In", "values": ["-bad-"]}]}]},
            "preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 199, "preference": {"matchExpressions": [{"key": "foo", "operator": "In", "values": ["bar"]}]}},
                {"weight": 1, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["a", "b"]}]}},
            ]}}})),
        [
            format!("{p}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].values[0]: Invalid value: \"-bad-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
            format!("{p}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 199: must be in the range 1-100"),
            format!("{p}.preferredDuringSchedulingIgnoredDuringExecution[1].preference.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
        ]
    );
}

#[test]
fn pod_affinity_errors() {
    let p = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
    // "invalid hard pod affinity, empty topologyKey".
    let mut expected = vec![format!("{p}.topologyKey: Required value: can not be empty")];
    expected.extend(qualified_name_errors(&format!("{p}.topologyKey"), ""));
    assert_eq!(
        errors_of(
            json!({"affinity": {"podAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
            {"labelSelector": {"matchLabels": {"app": "x"}}}]}}})
        ),
        expected
    );
    // Invalid selector operator and namespace, weight out of range.
    let a = "spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0]";
    assert_eq!(
        errors_of(json!({"affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 0, "podAffinityTerm": {
                "labelSelector": {"matchExpressions": [{"key": "key2", "operator": "WrongOp", "values": ["value1"]}]},
                "namespaceSelector": {"matchExpressions": [{"key": "key", "operator": "In"}]},
                "namespaces": ["INVALID_NAMESPACE"],
                "topologyKey": "region"}}]}}})),
        [
            format!("{a}.weight: Invalid value: 0: must be in the range 1-100"),
            format!("{a}.podAffinityTerm.labelSelector.matchExpressions[0].operator: Invalid value: \"WrongOp\": not a valid selector operator"),
            format!("{a}.podAffinityTerm.namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"),
            format!("{a}.podAffinityTerm.namespace: Invalid value: \"INVALID_NAMESPACE\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
        ]
    );
}

#[test]
fn pod_affinity_label_keys() {
    let p = "spec.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0]";
    let term = |extra: Value| {
        let mut term = json!({"topologyKey": "k8s.io/zone"});
        if let (Some(term), Some(extra)) = (term.as_object_mut(), extra.as_object()) {
            term.extend(extra.clone());
        }
        errors_of(json!({"affinity": {"podAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [term]}}}))
    };
    // "invalid matchLabelKeys in podAffinity (no labelSelector)".
    assert_eq!(
        term(json!({"matchLabelKeys": ["foo"], "mismatchLabelKeys": ["bar"]})),
        [
            format!("{p}.matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"),
            format!("{p}.mismatchLabelKeys: Forbidden: must not be specified when labelSelector is not set"),
        ]
    );
    // The same key in both lists; an invalid key.
    let mut expected = qualified_name_errors(&format!("{p}.matchLabelKeys[1]"), "/simple");
    expected.push(format!("{p}.matchLabelKeys[0]: Invalid value: \"samekey\": exists in both matchLabelKeys and mismatchLabelKeys"));
    assert_eq!(
        term(
            json!({"labelSelector": {}, "matchLabelKeys": ["samekey", "/simple"], "mismatchLabelKeys": ["samekey"]})
        ),
        expected
    );
    // A key that the selector already holds, beside the merged one.
    assert_eq!(
        term(json!({"labelSelector": {"matchExpressions": [
            {"key": "key", "operator": "In", "values": ["value1"]},
            {"key": "key", "operator": "In", "values": ["value1"]}]},
            "matchLabelKeys": ["key"]})),
        [format!(
            "{p}[0]: Invalid value: \"key\": exists in both matchLabelKeys and labelSelector"
        )]
    );
}

#[test]
fn topology_spread_constraint_errors() {
    let p = "spec.topologySpreadConstraints";
    assert_eq!(
        errors_of(json!({"topologySpreadConstraints": [
            {"maxSkew": 0, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "", "whenUnsatisfiable": "N/A"},
            {"maxSkew": 1, "topologyKey": "k8s.io/zone", "whenUnsatisfiable": "DoNotSchedule"},
            {"maxSkew": 1, "topologyKey": "k8s.io/node", "whenUnsatisfiable": "ScheduleAnyway", "minDomains": -1},
            {"maxSkew": 1, "topologyKey": "k8s.io/rack", "whenUnsatisfiable": "DoNotSchedule",
             "nodeAffinityPolicy": "Never", "nodeTaintsPolicy": "honor"},
            {"maxSkew": 1, "topologyKey": "k8s.io/host", "whenUnsatisfiable": "DoNotSchedule", "matchLabelKeys": ["foo"]},
            {"maxSkew": 1, "topologyKey": "k8s.io/pod", "whenUnsatisfiable": "DoNotSchedule",
             "labelSelector": {"matchLabels": {"foo": "-bar-"}}},
        ]})),
        [
            format!("{p}[0].maxSkew: Invalid value: 0: must be greater than zero"),
            format!("{p}[0].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{k8s.io/zone, DoNotSchedule}}\""),
            format!("{p}[1].topologyKey: Required value: can not be empty"),
            format!("{p}[1].whenUnsatisfiable: Unsupported value: \"N/A\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""),
            format!("{p}[3].minDomains: Invalid value: -1: must be greater than zero"),
            format!("{p}[3].minDomains: Invalid value: -1: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"),
            format!("{p}[4].nodeAffinityPolicy: Unsupported value: \"Never\": supported values: \"Honor\", \"Ignore\""),
            format!("{p}[4].nodeTaintsPolicy: Unsupported value: \"honor\": supported values: \"Honor\", \"Ignore\""),
            format!("{p}[5].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"),
            format!("{p}[6].labelSelector.matchLabels: Invalid value: \"-bar-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
        ]
    );
}

#[test]
fn readiness_gates_host_aliases_and_overhead() {
    let mut expected = qualified_name_errors(
        "spec.readinessGates[0].conditionType",
        "invalid/condition/type",
    );
    expected.push("spec.hostAliases[0].ip: Invalid value: \"999.1.1.1\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)".to_string());
    expected.push("spec.hostAliases[0].hostnames[1]: Invalid value: \"Host_2\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string());
    expected.push(
        "spec.overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"
            .to_string(),
    );
    assert_eq!(
        errors_of(json!({
            "readinessGates": [{"conditionType": "invalid/condition/type"}],
            "hostAliases": [{"ip": "999.1.1.1", "hostnames": ["host1", "Host_2"]}],
            "overhead": {"cpu": "-1"},
        })),
        expected
    );
}

#[test]
fn scheduling_gates_are_checked_in_pod_spec_order() {
    // Templates get them too; a pod's nodeName rule follows the spec's.
    let errors: Vec<String> = pod(&defaulted_pod(
        json!({"name": "p"}),
        spec(json!({"nodeName": "node", "schedulingGates": [{"name": "foo"}, {"name": "foo"}]})),
    ))
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        errors,
        [
            "spec.schedulingGates[1]: Duplicate value: \"foo\"",
            "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
        ]
    );
}

#[test]
fn pod_specific_annotations() {
    let errors: Vec<String> = pod(&defaulted_pod(
        json!({"name": "p", "annotations": {
            "kubernetes.io/config.mirror": "x",
            "controller.kubernetes.io/pod-deletion-cost": "+10"}}),
        spec(json!({})),
    ))
    .iter()
    .map(ToString::to_string)
    .collect();
    assert_eq!(
        errors,
        [
            "metadata.annotations[kubernetes.io/config.mirror]: Invalid value: \"x\": must set spec.nodeName if mirror pod annotation is set",
            "metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: \"+10\": must be a 32bit integer",
        ]
    );
    for invalid in ["", "010", "2147483648", "1.5", "abc"] {
        let object = defaulted_pod(
            json!({"name": "p", "annotations": {"controller.kubernetes.io/pod-deletion-cost": invalid}}),
            spec(json!({})),
        );
        assert!(
            !super::super::pod_annotations::deletion_cost_is_valid(&object),
            "{invalid}"
        );
    }
    for valid in ["0", "-0", "-2147483648", "2147483647", "7"] {
        let object = defaulted_pod(
            json!({"name": "p", "annotations": {"controller.kubernetes.io/pod-deletion-cost": valid}}),
            spec(json!({})),
        );
        assert!(
            super::super::pod_annotations::deletion_cost_is_valid(&object),
            "{valid}"
        );
    }
}

/// `ValidateTolerationsInPodAnnotations`: the annotation decoded as
/// `[]core.Toleration` (Go's `encoding/json` errors), then `ValidateTolerations`.
#[test]
fn the_tolerations_annotation_is_decoded_and_validated() {
    let errors_for = |value: &str| -> Vec<String> {
        pod(&defaulted_pod(
            json!({"name": "p", "annotations": {"scheduler.alpha.kubernetes.io/tolerations": value}}),
            spec(json!({})),
        ))
        .iter()
        .map(ToString::to_string)
        .collect()
    };
    let key = "metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/tolerations\"";
    let cases = [
        (
            r#"[{"key": "a", "operator": "Equal", "value": "b", "effect": "NoExecute", "tolerationSeconds": 30}, {"operator": "Exists"}]"#,
            vec![],
        ),
        (
            r#"[{"key": "foo", "operator": "Exists", "value": "bar", "effect": "NoSchedule"}]"#,
            vec!["metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Invalid value: core.Toleration{Key:\"foo\", Operator:\"Exists\", Value:\"bar\", Effect:\"NoSchedule\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'".to_string()],
        ),
        (
            r#"[{"key": "a", "effect": "NoSchedule", "tolerationSeconds": 5}]"#,
            vec!["metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set".to_string()],
        ),
        (
            r#"[{"operator": "Exists", "tolerationSeconds": 1.5}]"#,
            vec![format!("{key}: json: cannot unmarshal number 1.5 into Go struct field Toleration.tolerationSeconds of type int64")],
        ),
        (
            r#"[{"operator": 7}]"#,
            vec![format!("{key}: json: cannot unmarshal number into Go struct field Toleration.operator of type core.TolerationOperator")],
        ),
        (
            r#"{"key": "a"}"#,
            vec![format!("{key}: json: cannot unmarshal object into Go value of type []core.Toleration")],
        ),
        (
            r#"[{"#,
            vec![format!("{key}: unexpected end of JSON input")],
        ),
    ];
    for (value, expected) in cases {
        assert_eq!(errors_for(value), expected, "{value}");
    }
}

#[test]
fn gated_pods_may_add_node_selectors_and_tighten_node_affinity() {
    let term = |expressions: Value| json!({"matchExpressions": expressions});
    let required = |terms: Value| json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": terms}}});
    let foo = json!({"key": "foo", "operator": "In", "values": ["bar"]});
    let baz = json!({"key": "baz", "operator": "In", "values": ["qux"]});
    let old_of = |gated: bool| {
        let mut extra = json!({
            "nodeSelector": {"foo": "bar"},
            "affinity": required(json!([term(json!([foo.clone()]))])),
        });
        if gated {
            extra["schedulingGates"] = json!([{"name": "gate"}]);
        }
        defaulted_pod(json!({"name": "p"}), spec(extra))
    };
    let update = |gated: bool, change: &dyn Fn(&mut Value)| {
        let old = old_of(gated);
        let mut new = old.clone();
        change(&mut new);
        crate::validation::pod_update::pod_update(&new, &old)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    // "addition to nodeAffinity / nodeSelector is allowed for gated pods".
    assert_eq!(
        update(true, &|new| {
            new["spec"]["nodeSelector"]["baz"] = json!("qux");
            new["spec"]["affinity"] = required(json!([term(json!([foo.clone(), baz.clone()]))]));
        }),
        Vec::<String>::new()
    );
    // Dropping the required terms is refused, and only that is reported.
    let none = update(true, &|new| {
        new["spec"]["affinity"]["nodeAffinity"] = json!(null);
    });
    assert_eq!(
        none,
        ["spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Invalid value: []core.NodeSelectorTerm(nil): no additions/deletions to non-empty NodeSelectorTerms list are allowed"]
    );
    assert_eq!(
        update(true, &|new| {
            new["spec"]["nodeSelector"] = json!({"foo": "other"});
            new["spec"]["affinity"] = required(json!([term(json!([baz.clone()]))]));
        }),
        [
            "spec.nodeSelector: Invalid value: map[string]string{\"foo\":\"other\"}: only additions to spec.nodeSelector are allowed (no mutations or deletions)",
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]: Invalid value: core.NodeSelectorTerm{MatchExpressions:[]core.NodeSelectorRequirement{core.NodeSelectorRequirement{Key:\"baz\", Operator:\"In\", Values:[]string{\"qux\"}}}, MatchFields:[]core.NodeSelectorRequirement(nil)}: only additions are allowed (no mutations or deletions)",
        ]
    );
    // Ungated pods may change neither.
    let ungated = update(false, &|new| {
        new["spec"]["nodeSelector"]["baz"] = json!("qux");
    });
    assert_eq!(ungated.len(), 1, "{ungated:?}");
    assert!(
        ungated[0].starts_with("spec: Forbidden: pod updates may not change fields other than"),
        "{ungated:?}"
    );
}

#[test]
fn pod_resource_claims() {
    assert!(errors_of(json!({"resourceClaims": [
        {"name": "my-claim", "resourceClaimName": "my-claim"},
        {"name": "my-other-claim", "resourceClaimTemplateName": "my-template"}]}))
    .is_empty());
    let p = "spec.resourceClaims";
    assert_eq!(
        errors_of(json!({"resourceClaims": [
            {"name": "", "resourceClaimName": "my-claim"},
            {"name": "my-claim", "resourceClaimName": "Bad_Name"},
            {"name": "my-claim"},
            {"name": "Bad", "resourceClaimName": "a", "resourceClaimTemplateName": "b"},
        ]})),
        [
            format!("{p}[0].name: Required value"),
            format!("{p}[1].resourceClaimName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
            format!("{p}[2].name: Duplicate value: \"my-claim\""),
            format!("{p}[2]: Invalid value: core.PodResourceClaim{{Name:\"my-claim\", ResourceClaimName:(*string)(nil), ResourceClaimTemplateName:(*string)(nil)}}: must specify one of: `resourceClaimName`, `resourceClaimTemplateName`"),
            format!("{p}[3].name: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"),
            format!("{p}[3]: Invalid value: core.PodResourceClaim{{Name:\"Bad\", ResourceClaimName:(*string)(0xc000000000), ResourceClaimTemplateName:(*string)(0xc000000000)}}: at most one of `resourceClaimName` or `resourceClaimTemplateName` may be specified"),
        ]
    );
}
