//! Cases of kube's pod-level resources defaulting (`defaults_test.go`
//! `TestPodLevelResourcesDefaults`-style tables: pod-level limits, requests
//! and hugepages against containers, init containers and sidecars), run
//! through `SetDefaults_Pod` as a whole (`defaults::pod`).

use serde_json::{json, Value};

use crate::registry::Registry;

/// `object` defaulted as a v1 `plural`, checked to be idempotent.
fn apply_defaults(plural: &str, object: &mut Value) {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", plural).expect("served");
    crate::defaults::apply(resource, object);
    let once = object.clone();
    crate::defaults::apply(resource, object);
    assert_eq!(&once, object, "defaulting is idempotent");
}

/// A pod with `resources` at pod level (when given), containers and init
/// containers with the given `resources`, defaulted as a create would.
fn defaulted(pod_resources: Option<Value>, containers: &[Value], init: &[Value]) -> Value {
    let container = |prefix: &str, index: usize, resources: &Value| json!({"name": format!("{prefix}{index}"), "image": "img", "resources": resources});
    let mut spec = json!({
        "containers": containers.iter().enumerate()
            .map(|(index, resources)| container("c", index, resources)).collect::<Vec<_>>(),
    });
    if !init.is_empty() {
        spec["initContainers"] = init
            .iter()
            .enumerate()
            .map(|(index, resources)| {
                let mut init = container("i", index, &resources["resources"]);
                if let Some(policy) = resources.get("restartPolicy") {
                    init["restartPolicy"] = policy.clone();
                }
                init
            })
            .collect();
    }
    if let Some(resources) = pod_resources {
        spec["resources"] = resources;
    }
    let mut pod =
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec});
    apply_defaults("pods", &mut pod);
    pod
}

#[test]
fn pod_level_requests_default_as_kube_does() {
    struct Case {
        name: &'static str,
        pod: Option<Value>,
        containers: Vec<Value>,
        init: Vec<Value>,
        expected: Value,
    }
    let cases = [
        Case {
            name: "no pod-level resources: nothing at pod level",
            pod: None,
            containers: vec![json!({"limits": {"cpu": "1", "memory": "100Mi"}})],
            init: vec![],
            expected: Value::Null,
        },
        Case {
            name: "pod limits, containers without requests: requests are the limits",
            pod: Some(json!({"limits": {"cpu": "2", "memory": "200Mi"}})),
            containers: vec![json!({}), json!({})],
            init: vec![],
            expected: json!({"limits": {"cpu": "2", "memory": "200Mi"},
                             "requests": {"cpu": "2", "memory": "200Mi"}}),
        },
        Case {
            name: "pod limits, container requests: requests are their sum",
            pod: Some(json!({"limits": {"cpu": "2", "memory": "200Mi"}})),
            containers: vec![
                json!({"requests": {"cpu": "500m", "memory": "50Mi"}}),
                json!({"requests": {"cpu": "250m"}}),
            ],
            init: vec![],
            expected: json!({"limits": {"cpu": "2", "memory": "200Mi"},
                             "requests": {"cpu": "750m", "memory": "50Mi"}}),
        },
        Case {
            name: "a container limit defaults its request first, then the pod's",
            pod: Some(json!({"limits": {"cpu": "4"}})),
            containers: vec![
                json!({"limits": {"cpu": "1"}}),
                json!({"limits": {"cpu": "1500m"}}),
            ],
            init: vec![],
            expected: json!({"limits": {"cpu": "4"}, "requests": {"cpu": "2500m"}}),
        },
        Case {
            name: "container requests of a resource the pod does not limit are aggregated too",
            pod: Some(json!({"limits": {"cpu": "2"}})),
            containers: vec![json!({"requests": {"memory": "1Gi"}})],
            init: vec![],
            expected: json!({"limits": {"cpu": "2"},
                             "requests": {"cpu": "2", "memory": "1Gi"}}),
        },
        Case {
            name: "a pod-level request that is set is kept",
            pod: Some(json!({"limits": {"cpu": "2", "memory": "1Gi"}, "requests": {"cpu": "1"}})),
            containers: vec![json!({"requests": {"cpu": "100m"}})],
            init: vec![],
            expected: json!({"limits": {"cpu": "2", "memory": "1Gi"},
                             "requests": {"cpu": "1", "memory": "1Gi"}}),
        },
        Case {
            name: "pod requests without limits: no defaults",
            pod: Some(json!({"requests": {"cpu": "1"}})),
            containers: vec![json!({"requests": {"cpu": "100m", "memory": "1Mi"}})],
            init: vec![],
            expected: json!({"requests": {"cpu": "1"}}),
        },
        Case {
            name: "unsupported resources are not defaulted at pod level",
            pod: Some(json!({"limits": {"cpu": "1", "ephemeral-storage": "1Gi"}})),
            containers: vec![json!({"requests": {"example.com/gpu": "1"}})],
            init: vec![],
            expected: json!({"limits": {"cpu": "1", "ephemeral-storage": "1Gi"},
                             "requests": {"cpu": "1"}}),
        },
        Case {
            name: "an init container's larger request wins over the containers' sum",
            pod: Some(json!({"limits": {"cpu": "4"}})),
            containers: vec![json!({"requests": {"cpu": "1"}})],
            init: vec![json!({"resources": {"requests": {"cpu": "3"}}})],
            expected: json!({"limits": {"cpu": "4"}, "requests": {"cpu": "3"}}),
        },
        Case {
            name: "a sidecar adds to the containers and to the init containers after it",
            pod: Some(json!({"limits": {"cpu": "8"}})),
            containers: vec![json!({"requests": {"cpu": "1"}})],
            init: vec![
                json!({"restartPolicy": "Always", "resources": {"requests": {"cpu": "500m"}}}),
                json!({"resources": {"requests": {"cpu": "2"}}}),
            ],
            // containers 1 + sidecar 0.5 = 1.5; the init container runs
            // beside the sidecar: 2 + 0.5 = 2.5, the larger.
            expected: json!({"limits": {"cpu": "8"}, "requests": {"cpu": "2500m"}}),
        },
        Case {
            name: "a sidecar counted into the sum when it exceeds the init containers",
            pod: Some(json!({"limits": {"cpu": "8"}})),
            containers: vec![json!({"requests": {"cpu": "2"}})],
            init: vec![
                json!({"resources": {"requests": {"cpu": "1"}}}),
                json!({"restartPolicy": "Always", "resources": {"requests": {"cpu": "1"}}}),
            ],
            expected: json!({"limits": {"cpu": "8"}, "requests": {"cpu": "3"}}),
        },
        Case {
            name: "hugepages: container limits aggregate into a pod-level limit and request",
            pod: Some(json!({"limits": {"cpu": "1", "memory": "100Mi"}})),
            containers: vec![
                json!({"limits": {"hugepages-2Mi": "2Mi"}}),
                json!({"limits": {"hugepages-2Mi": "4Mi"}}),
            ],
            init: vec![],
            expected: json!({
                "limits": {"cpu": "1", "memory": "100Mi", "hugepages-2Mi": "6Mi"},
                "requests": {"cpu": "1", "memory": "100Mi", "hugepages-2Mi": "6Mi"},
            }),
        },
        Case {
            name: "hugepages: a pod-level hugepage request blocks the limit default",
            pod: Some(json!({"limits": {"cpu": "1"}, "requests": {"hugepages-2Mi": "10Mi"}})),
            containers: vec![json!({"limits": {"hugepages-2Mi": "2Mi"}})],
            init: vec![],
            expected: json!({"limits": {"cpu": "1"},
                             "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}}),
        },
        Case {
            name: "hugepages: a pod-level limit is kept and becomes the request",
            pod: Some(json!({"limits": {"cpu": "1", "hugepages-2Mi": "10Mi"}})),
            containers: vec![json!({"limits": {"hugepages-2Mi": "2Mi"}})],
            init: vec![],
            expected: json!({"limits": {"cpu": "1", "hugepages-2Mi": "10Mi"},
                             "requests": {"cpu": "1", "hugepages-2Mi": "10Mi"}}),
        },
        Case {
            name: "hugepages with pod requests only: the limit defaults, no request does",
            pod: Some(json!({"requests": {"memory": "1Gi"}})),
            containers: vec![json!({"limits": {"hugepages-1Gi": "1Gi"}})],
            init: vec![],
            expected: json!({"limits": {"hugepages-1Gi": "1Gi"},
                             "requests": {"memory": "1Gi", "hugepages-1Gi": "1Gi"}}),
        },
        Case {
            name: "sums are rounded to milli precision after defaulting",
            pod: Some(json!({"limits": {"cpu": "1"}})),
            containers: vec![
                json!({"requests": {"cpu": "0.0001"}}),
                json!({"requests": {"cpu": "0.0001"}}),
            ],
            init: vec![],
            expected: json!({"limits": {"cpu": "1"}, "requests": {"cpu": "1m"}}),
        },
        Case {
            name: "empty pod-level resources: nothing defaulted",
            pod: Some(json!({})),
            containers: vec![json!({"limits": {"cpu": "1"}})],
            init: vec![],
            expected: json!({}),
        },
    ];
    for case in cases {
        let pod = defaulted(case.pod, &case.containers, &case.init);
        let got = pod
            .pointer("/spec/resources")
            .cloned()
            .unwrap_or(Value::Null);
        assert_eq!(got, case.expected, "{}", case.name);
    }
}

#[test]
fn hugepage_limits_with_pod_requests_only_need_a_pod_level_value() {
    // `defaultHugePagePodLimits` runs only when pod-level resources are
    // partly specified; without them the containers' hugepages stay theirs.
    let pod = defaulted(None, &[json!({"limits": {"hugepages-2Mi": "2Mi"}})], &[]);
    assert_eq!(pod.pointer("/spec/resources"), None);
}

#[test]
fn pod_templates_get_no_pod_level_defaults() {
    // `SetDefaults_PodSpec` (templates) has no pod-level resources defaults.
    let mut template = json!({
        "apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"},
        "template": {"spec": {
            "containers": [{"name": "c", "image": "img", "resources": {"requests": {"cpu": "1"}}}],
            "resources": {"limits": {"cpu": "2"}},
        }},
    });
    apply_defaults("podtemplates", &mut template);
    assert_eq!(
        template.pointer("/template/spec/resources"),
        Some(&json!({"limits": {"cpu": "2"}}))
    );
}
