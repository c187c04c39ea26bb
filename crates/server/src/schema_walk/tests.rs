use super::*;

use crate::quantity::QuantityError;
use crate::status::FieldErrorKind;
use serde_json::json;

fn openapi() -> OpenApi {
    OpenApi::new(&[])
}

#[test]
fn deployment_container_resources() {
    let mut deployment = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"cpu": "0.5"}, "annotations": {"memory": "1024Mi"}},
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {
                    "containers": [
                        {
                            "name": "a",
                            "image": "nginx",
                            "resources": {
                                "limits": {"cpu": "0.5", "memory": "1024Mi"},
                                "requests": {"cpu": 1, "memory": "1.5Gi", "ephemeral-storage": 0.25}
                            },
                            "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}}]
                        },
                        {"name": "b", "image": "busybox", "resources": {"limits": {"cpu": "100m", "memory": "1000"}}}
                    ],
                    "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "0.1"}}}],
                    "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1e3"}}],
                    "overhead": {"cpu": "250m"}
                }
            }
        }
    });
    let errors = canonicalize_quantities(&openapi(), "apps", "v1", "Deployment", &mut deployment);
    assert_eq!(errors, vec![]);
    let pod = &deployment["spec"]["template"]["spec"];
    assert_eq!(
        pod["containers"][0]["resources"]["limits"],
        json!({"cpu": "500m", "memory": "1Gi"})
    );
    assert_eq!(
        pod["containers"][0]["resources"]["requests"],
        json!({"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "250m"})
    );
    assert_eq!(
        pod["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"],
        json!("1")
    );
    assert_eq!(
        pod["containers"][1]["resources"]["limits"],
        json!({"cpu": "100m", "memory": "1k"})
    );
    assert_eq!(
        pod["initContainers"][0]["resources"]["requests"],
        json!({"cpu": "100m"})
    );
    assert_eq!(pod["volumes"][0]["emptyDir"]["sizeLimit"], json!("1e3"));
    assert_eq!(pod["overhead"], json!({"cpu": "250m"}));
    // Non-quantity values that look like quantities stay as they are.
    assert_eq!(deployment["metadata"]["labels"]["cpu"], json!("0.5"));
    assert_eq!(
        deployment["metadata"]["annotations"]["memory"],
        json!("1024Mi")
    );
    assert_eq!(deployment["spec"]["replicas"], json!(3));
}

#[test]
fn pvc_storage() {
    let mut pvc = json!({
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "data"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}, "limits": {"storage": "2048Mi"}}},
        "status": {"capacity": {"storage": "1610612736"}}
    });
    assert_eq!(
        canonicalize_quantities(&openapi(), "", "v1", "PersistentVolumeClaim", &mut pvc),
        vec![]
    );
    assert_eq!(
        pvc["spec"]["resources"]["requests"]["storage"],
        json!("1536Mi")
    );
    assert_eq!(pvc["spec"]["resources"]["limits"]["storage"], json!("2Gi"));
    // DecimalSI stays DecimalSI even when it is a power of two.
    assert_eq!(pvc["status"]["capacity"]["storage"], json!("1610612736"));
}

#[test]
fn limit_range_items() {
    let mut limit_range = json!({
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {"limits": [{
            "type": "Container",
            "max": {"cpu": "2000m", "memory": "1Gi"},
            "min": {"cpu": "0.01", "memory": "6291456"},
            "default": {"cpu": "0.5", "memory": "512Mi"},
            "defaultRequest": {"cpu": ".25", "memory": "256Mi"},
            "maxLimitRequestRatio": {"cpu": 10}
        }]}
    });
    assert_eq!(
        canonicalize_quantities(&openapi(), "", "v1", "LimitRange", &mut limit_range),
        vec![]
    );
    let item = &limit_range["spec"]["limits"][0];
    assert_eq!(item["max"], json!({"cpu": "2", "memory": "1Gi"}));
    assert_eq!(item["min"], json!({"cpu": "10m", "memory": "6291456"}));
    assert_eq!(item["default"], json!({"cpu": "500m", "memory": "512Mi"}));
    assert_eq!(
        item["defaultRequest"],
        json!({"cpu": "250m", "memory": "256Mi"})
    );
    assert_eq!(item["maxLimitRequestRatio"], json!({"cpu": "10"}));
    assert_eq!(item["type"], json!("Container"));
}

#[test]
fn resource_quota_hard_map() {
    let mut quota = json!({
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "quota"},
        "spec": {"hard": {"requests.cpu": "1000", "limits.memory": "2048Mi", "pods": 10, "count/deployments.apps": "5", "requests.storage": null}},
        "status": {"hard": {"pods": "10"}, "used": {"pods": "0", "requests.cpu": "0.5"}}
    });
    assert_eq!(
        canonicalize_quantities(&openapi(), "", "v1", "ResourceQuota", &mut quota),
        vec![]
    );
    assert_eq!(
        quota["spec"]["hard"],
        json!({"requests.cpu": "1k", "limits.memory": "2Gi", "pods": "10", "count/deployments.apps": "5", "requests.storage": "0"})
    );
    assert_eq!(
        quota["status"]["used"],
        json!({"pods": "0", "requests.cpu": "500m"})
    );
}

#[test]
fn invalid_quantities_are_field_errors() {
    let mut pod = json!({
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "abc", "memory": "1ki"}, "requests": {"cpu": true}}}]}
    });
    let errors = canonicalize_quantities(&openapi(), "", "v1", "Pod", &mut pod);
    let format_wrong = QuantityError::FormatWrong.to_string();
    assert_eq!(
        errors,
        vec![
            FieldError::invalid(
                "spec.containers[0].resources.limits[cpu]",
                "abc",
                format_wrong.clone()
            ),
            FieldError::invalid(
                "spec.containers[0].resources.limits[memory]",
                "1ki",
                QuantityError::Suffix.to_string()
            ),
            FieldError::invalid(
                "spec.containers[0].resources.requests[cpu]",
                "true",
                format_wrong
            ),
        ]
    );
    assert!(matches!(errors[0].kind, FieldErrorKind::Invalid(_)));
    assert_eq!(
        decode_error_message("Pod", "v1", "Pod", &errors).as_deref(),
        Some("Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    );
    assert_eq!(decode_error_message("Pod", "v1", "Pod", &[]), None);
    // Invalid values are left as sent.
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["limits"]["cpu"],
        json!("abc")
    );
}

#[test]
fn kinds_without_quantities_are_skipped() {
    let api = openapi();
    assert!(!may_contain_quantities(&api, "", "v1", "ConfigMap"));
    assert!(!may_contain_quantities(&api, "", "v1", "Secret"));
    assert!(!may_contain_quantities(&api, "example.com", "v1", "Widget"));
    assert!(may_contain_quantities(&api, "", "v1", "Pod"));
    assert!(may_contain_quantities(&api, "", "v1", "Node"));
    assert!(may_contain_quantities(
        &api,
        "autoscaling",
        "v2",
        "HorizontalPodAutoscaler"
    ));
    let mut config_map = json!({"kind": "ConfigMap", "data": {"cpu": "0.5"}});
    assert_eq!(
        canonicalize_quantities(&api, "", "v1", "ConfigMap", &mut config_map),
        vec![]
    );
    assert_eq!(config_map["data"]["cpu"], json!("0.5"));
}

#[test]
fn plans_keep_only_quantity_paths() {
    let plan = plan_for(&openapi(), "apps", "v1", "Deployment").expect("plan");
    let root = &plan.nodes[plan.root];
    let names: Vec<&str> = root
        .properties
        .iter()
        .map(|(name, _)| name.as_str())
        .collect();
    // DeploymentStatus and ObjectMeta hold no quantity.
    assert_eq!(names, vec!["spec"]);
    // Same Arc on the second lookup.
    let again = plan_for(&openapi(), "apps", "v1", "Deployment").expect("plan");
    assert!(Arc::ptr_eq(&plan, &again));
}

#[test]
fn node_hpa_and_nested_refs() {
    let mut node = json!({
        "kind": "Node",
        "status": {"capacity": {"cpu": "4", "memory": "8048576Ki", "pods": "110"}, "allocatable": {"memory": "7.5Gi"}}
    });
    assert_eq!(
        canonicalize_quantities(&openapi(), "", "v1", "Node", &mut node),
        vec![]
    );
    assert_eq!(
        node["status"]["capacity"],
        json!({"cpu": "4", "memory": "8048576Ki", "pods": "110"})
    );
    assert_eq!(node["status"]["allocatable"]["memory"], json!("7680Mi"));

    let mut hpa = json!({
        "kind": "HorizontalPodAutoscaler",
        "spec": {
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "0.5"}}}],
            "behavior": {"scaleUp": {"tolerance": "0.05"}}
        },
        "status": {"currentMetrics": [{"type": "Pods", "pods": {"current": {"averageValue": "1000m"}}}]}
    });
    assert_eq!(
        canonicalize_quantities(
            &openapi(),
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler",
            &mut hpa
        ),
        vec![]
    );
    assert_eq!(
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageValue"],
        json!("500m")
    );
    assert_eq!(
        hpa["spec"]["behavior"]["scaleUp"]["tolerance"],
        json!("50m")
    );
    assert_eq!(
        hpa["status"]["currentMetrics"][0]["pods"]["current"]["averageValue"],
        json!("1")
    );
}

#[test]
fn null_property_left_alone_and_wrong_shapes_ignored() {
    let mut pod = json!({
        "kind": "Pod",
        "spec": {
            "containers": [{"name": "c", "resources": {"limits": "oops"}}],
            "volumes": [{"name": "v", "emptyDir": {"sizeLimit": null}}],
            "overhead": [1, 2]
        }
    });
    assert_eq!(
        canonicalize_quantities(&openapi(), "", "v1", "Pod", &mut pod),
        vec![]
    );
    assert_eq!(
        pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
        Value::Null
    );
    assert_eq!(
        pod["spec"]["containers"][0]["resources"]["limits"],
        json!("oops")
    );
}
