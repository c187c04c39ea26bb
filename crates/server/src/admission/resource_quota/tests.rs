//! The evaluators and `checkRequest` against kube's messages.

use std::time::SystemTime;

use serde_json::{json, Value};

use super::check::{check_request, Refusal, Request};
use super::configuration::LimitedResource;
use super::evaluator::Evaluator;
use super::resource_list::{pretty_print, ResourceList};
use crate::admission::Operation;

fn quota(name: &str, spec: Value, hard: Value, used: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": "5"},
        "spec": spec,
        "status": {"hard": hard, "used": used},
    })
}

fn pod(name: &str, containers: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ns"},
           "spec": {"containers": containers}})
}

fn create<'a>(object: &'a Value) -> Request<'a> {
    Request {
        group: "",
        resource: "pods",
        subresource: "",
        operation: Operation::Create,
        object,
        old_object: None,
        now: SystemTime::now(),
    }
}

fn check(
    evaluator: &Evaluator,
    quotas: &[Value],
    request: &Request<'_>,
) -> Result<Vec<String>, String> {
    check_limited(evaluator, quotas, &[], request).map_err(|refusal| match refusal {
        Refusal::Forbidden(why) => why,
        Refusal::Error(why) => format!("(not forbidden) {why}"),
    })
}

fn check_limited(
    evaluator: &Evaluator,
    quotas: &[Value],
    limited: &[LimitedResource],
    request: &Request<'_>,
) -> Result<Vec<String>, Refusal> {
    check_request(evaluator, quotas, limited, request).map(|changes| {
        changes
            .iter()
            .map(|used| {
                used.as_ref()
                    .map(pretty_print)
                    .unwrap_or_else(|| "-".into())
            })
            .collect()
    })
}

fn usage(evaluator: &Evaluator, object: &Value) -> String {
    let usage: ResourceList = evaluator.usage(object, SystemTime::now());
    pretty_print(&usage)
}

#[test]
fn pod_usage_sums_containers_and_takes_the_init_maximum() {
    let mut object = pod(
        "p",
        json!([
            {"name": "a", "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "200m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "300m", "nvidia.com/gpu": "1"}}},
        ]),
    );
    object["spec"]["initContainers"] = json!([
        {"name": "init", "resources": {"requests": {"cpu": "1", "memory": "10Mi"}}},
        {"name": "sidecar", "restartPolicy": "Always", "resources": {"requests": {"memory": "1Mi"}}},
    ]);
    assert_eq!(
        usage(&Evaluator::Pods, &object),
        "count/pods=1,cpu=1,limits.cpu=200m,memory=65Mi,pods=1,requests.cpu=1,requests.memory=65Mi,requests.nvidia.com/gpu=1"
    );
    object["status"] = json!({"phase": "Succeeded"});
    assert_eq!(usage(&Evaluator::Pods, &object), "count/pods=1");
}

#[test]
fn services_claims_and_object_counts() {
    let service = json!({"metadata": {"name": "s"}, "spec": {"type": "LoadBalancer", "ports": [{"port": 80}, {"port": 81}]}});
    assert_eq!(
        usage(&Evaluator::Services, &service),
        "count/services=1,services=1,services.loadbalancers=1,services.nodeports=2"
    );
    let claim = json!({"metadata": {"name": "c"}, "spec": {"storageClassName": "gold", "resources": {"requests": {"storage": "1500m"}}}});
    assert_eq!(
        usage(&Evaluator::PersistentVolumeClaims, &claim),
        "count/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/persistentvolumeclaims=1,gold.storageclass.storage.k8s.io/requests.storage=2,persistentvolumeclaims=1,requests.storage=2"
    );
    let config_maps = Evaluator::for_resource("", "configmaps").expect("counted");
    assert_eq!(
        usage(&config_maps, &json!({})),
        "configmaps=1,count/configmaps=1"
    );
    let deployments = Evaluator::for_resource("apps", "deployments").expect("counted");
    assert_eq!(usage(&deployments, &json!({})), "count/deployments.apps=1");
    assert!(Evaluator::for_resource("", "events").is_none());
    assert!(!deployments.handles(Operation::Update, ""));
    assert!(Evaluator::Services.handles(Operation::Update, ""));
}

#[test]
fn exceeding_a_quota_is_refused_with_kubes_message() {
    let quotas = [quota(
        "q",
        json!({"hard": {"pods": "2"}}),
        json!({"pods": "2"}),
        json!({"pods": "2"}),
    )];
    let object = pod("x", json!([{"name": "c"}]));
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &create(&object)),
        Err("exceeded quota: q, requested: pods=1, used: pods=2, limited: pods=2".into())
    );
    let quotas = [quota(
        "q",
        json!({"hard": {"pods": "2"}}),
        json!({"pods": "2"}),
        json!({"pods": "1"}),
    )];
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &create(&object)),
        Ok(vec!["pods=2".into()])
    );
}

#[test]
fn constrained_compute_must_be_specified_by_every_container() {
    let hard = json!({"requests.cpu": "1", "limits.cpu": "2"});
    let quotas = [quota(
        "q",
        json!({"hard": hard}),
        hard.clone(),
        json!({"requests.cpu": "0", "limits.cpu": "0"}),
    )];
    let object = pod(
        "x",
        json!([{"name": "c"}, {"name": "d", "resources": {"requests": {"cpu": "100m"}}}]),
    );
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &create(&object)),
        Err("failed quota: q: must specify limits.cpu for: c,d; requests.cpu for: c".into())
    );
}

#[test]
fn a_quota_without_usage_blocks_and_scopes_select() {
    let unknown = [quota(
        "q",
        json!({"hard": {"pods": "2"}}),
        json!({"pods": "2"}),
        json!({}),
    )];
    let object = pod("x", json!([{"name": "c"}]));
    assert_eq!(
        check(&Evaluator::Pods, &unknown, &create(&object)),
        Err("status unknown for quota: q, resources: pods".into())
    );
    // Not yet calculated at all: status.hard is empty, nothing matches.
    let fresh = [json!({"metadata": {"name": "q"}, "spec": {"hard": {"pods": "2"}}})];
    assert_eq!(
        check(&Evaluator::Pods, &fresh, &create(&object)),
        Ok(vec!["-".into()])
    );
    let scoped = |scopes: Value| {
        [quota(
            "q",
            json!({"hard": {"pods": "1"}, "scopes": scopes}),
            json!({"pods": "1"}),
            json!({"pods": "0"}),
        )]
    };
    let best_effort = scoped(json!(["BestEffort"]));
    assert_eq!(
        check(&Evaluator::Pods, &best_effort, &create(&object)),
        Ok(vec!["pods=1".into()])
    );
    let not_best_effort = scoped(json!(["NotBestEffort"]));
    assert_eq!(
        check(&Evaluator::Pods, &not_best_effort, &create(&object)),
        Ok(vec!["-".into()])
    );
    let mut high = object.clone();
    high["spec"]["priorityClassName"] = json!("high");
    let by_class = [quota(
        "q",
        json!({"hard": {"pods": "1"}, "scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}),
        json!({"pods": "1"}),
        json!({"pods": "0"}),
    )];
    assert_eq!(
        check(&Evaluator::Pods, &by_class, &create(&high)),
        Ok(vec!["pods=1".into()])
    );
    assert_eq!(
        check(&Evaluator::Pods, &by_class, &create(&object)),
        Ok(vec!["-".into()])
    );
    // Scoped quotas never count other kinds.
    let service = json!({"metadata": {"name": "s"}, "spec": {}});
    let services = [quota(
        "q",
        json!({"hard": {"services": "1"}, "scopes": ["BestEffort"]}),
        json!({"services": "1"}),
        json!({"services": "1"}),
    )];
    assert_eq!(
        check(&Evaluator::Services, &services, &create(&service)),
        Ok(vec!["-".into()])
    );
}

#[test]
fn updates_are_charged_the_difference() {
    let hard = json!({"services.nodeports": "2"});
    let quotas = [quota(
        "q",
        json!({"hard": hard}),
        hard.clone(),
        json!({"services.nodeports": "1"}),
    )];
    let old = json!({"metadata": {"name": "s", "resourceVersion": "3"}, "spec": {"type": "NodePort", "ports": [{"port": 1}]}});
    let new = json!({"metadata": {"name": "s", "resourceVersion": "3"}, "spec": {"type": "NodePort", "ports": [{"port": 1}, {"port": 2}, {"port": 3}]}});
    let update = Request {
        group: "",
        resource: "services",
        subresource: "",
        operation: Operation::Update,
        object: &new,
        old_object: Some(&old),
        now: SystemTime::now(),
    };
    assert_eq!(
        check(&Evaluator::Services, &quotas, &update),
        Err("exceeded quota: q, requested: services.nodeports=2, used: services.nodeports=1, limited: services.nodeports=2".into())
    );
    let same = Request {
        object: &old,
        ..update
    };
    assert_eq!(
        check(&Evaluator::Services, &quotas, &same),
        Ok(vec!["-".into()])
    );
}

#[test]
fn claims_are_scoped_by_volume_attributes_class() {
    let hard = json!({"persistentvolumeclaims": "1"});
    let scoped = |operator: &str, values: Value| {
        [quota(
            "q",
            json!({"hard": hard, "scopeSelector": {"matchExpressions": [
                {"scopeName": "VolumeAttributesClass", "operator": operator, "values": values}]}}),
            hard.clone(),
            json!({"persistentvolumeclaims": "0"}),
        )]
    };
    let claim = json!({"metadata": {"name": "c"}, "spec": {"volumeAttributesClassName": "fast"}});
    let plain = json!({"metadata": {"name": "c"}, "spec": {}});
    let evaluator = Evaluator::PersistentVolumeClaims;
    let charged = Ok(vec!["persistentvolumeclaims=1".to_string()]);
    let untouched = Ok(vec!["-".to_string()]);
    assert_eq!(
        check(&evaluator, &scoped("In", json!(["fast"])), &create(&claim)),
        charged
    );
    assert_eq!(
        check(&evaluator, &scoped("In", json!(["slow"])), &create(&claim)),
        untouched
    );
    assert_eq!(
        check(&evaluator, &scoped("Exists", json!([])), &create(&claim)),
        charged
    );
    assert_eq!(
        check(&evaluator, &scoped("Exists", json!([])), &create(&plain)),
        untouched
    );
}

#[test]
fn a_namespace_lock_is_forgotten_when_nobody_holds_it() {
    let admission = super::QuotaAdmission::default();
    let first = admission.namespace_lock("ns");
    let second = admission.namespace_lock("ns");
    assert!(std::sync::Arc::ptr_eq(&first, &second));
    admission.release("ns", first);
    assert_eq!(admission.locks.lock().unwrap().len(), 1);
    admission.release("ns", second);
    assert!(admission.locks.lock().unwrap().is_empty());
}

/// `podEvaluator.Handles`: only the pod evaluator takes a subresource, and
/// only `resize` updates.
#[test]
fn pod_resizes_are_handled() {
    assert!(Evaluator::Pods.handles(Operation::Create, ""));
    assert!(!Evaluator::Pods.handles(Operation::Update, ""));
    assert!(Evaluator::Pods.handles(Operation::Update, "resize"));
    assert!(!Evaluator::Pods.handles(Operation::Create, "resize"));
    assert!(!Evaluator::Pods.handles(Operation::Update, "status"));
    assert!(!Evaluator::Services.handles(Operation::Update, "status"));
    let config_maps = Evaluator::for_resource("", "configmaps").expect("counted");
    assert!(!config_maps.handles(Operation::Create, "resize"));
}

/// With in-place resize on, a container's reported resources count too
/// (`determineContainerReqs`/`determineContainerLimits`), only the
/// reported ones when the resize is infeasible.
#[test]
fn pod_usage_reads_reported_resources() {
    let mut object = pod(
        "p",
        json!([{"name": "c", "resources": {"requests": {"cpu": "300m"}, "limits": {"cpu": "1"}}}]),
    );
    object["status"] = json!({"containerStatuses": [{"name": "c",
        "allocatedResources": {"cpu": "500m"},
        "resources": {"requests": {"cpu": "400m"}, "limits": {"cpu": "2"}}}]});
    assert_eq!(
        usage(&Evaluator::Pods, &object),
        "count/pods=1,cpu=500m,limits.cpu=2,pods=1,requests.cpu=500m"
    );
    object["status"]["conditions"] =
        json!([{"type": "PodResizePending", "status": "True", "reason": "Infeasible"}]);
    object["spec"]["containers"][0]["resources"] =
        json!({"requests": {"cpu": "900m"}, "limits": {"cpu": "3"}});
    assert_eq!(
        usage(&Evaluator::Pods, &object),
        "count/pods=1,cpu=500m,limits.cpu=2,pods=1,requests.cpu=500m"
    );
    // Without reported resources the spec alone counts.
    object["status"]["containerStatuses"][0]
        .as_object_mut()
        .expect("a status")
        .remove("resources");
    assert_eq!(
        usage(&Evaluator::Pods, &object),
        "count/pods=1,cpu=900m,limits.cpu=3,pods=1,requests.cpu=900m"
    );
}

fn update<'a>(object: &'a Value, old: &'a Value) -> Request<'a> {
    Request {
        group: "",
        resource: "pods",
        subresource: "resize",
        operation: Operation::Update,
        object,
        old_object: Some(old),
        now: SystemTime::now(),
    }
}

/// A resize is charged what it adds (`SubtractWithNonNegativeResult`).
#[test]
fn a_resize_is_charged_the_difference() {
    let quotas = [quota(
        "q",
        json!({"hard": {"requests.cpu": "1"}}),
        json!({"requests.cpu": "1"}),
        json!({"requests.cpu": "400m"}),
    )];
    let resized = |cpu: &str| {
        let mut object = pod(
            "p",
            json!([{"name": "c", "resources": {"requests": {"cpu": cpu}}}]),
        );
        object["metadata"]["resourceVersion"] = json!("7");
        object
    };
    let (old, new, larger) = (resized("400m"), resized("900m"), resized("1100m"));
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &update(&new, &old)),
        Ok(vec!["requests.cpu=900m".into()])
    );
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &update(&larger, &old)),
        Err("exceeded quota: q, requested: requests.cpu=700m, used: requests.cpu=400m, limited: requests.cpu=1".into())
    );
    assert_eq!(
        check(&Evaluator::Pods, &quotas, &update(&old, &new)),
        Ok(vec!["-".into()])
    );
}

/// `limitedResources` (kube's `TestAdmitLimitedResourceNoQuota`,
/// `...WithQuotaThatDoesNotCover`, `...WithCoveringQuota` and the
/// PriorityClass scope cases): a consumed name containing a `matchContains`
/// needs a quota whose hard limits name it; an object in a `matchScopes`
/// scope needs a quota of that scope; other resources are not limited.
#[test]
fn limited_resources_need_a_covering_quota() {
    let limited = [
        LimitedResource {
            resource: "pods".into(),
            match_contains: vec!["requests.cpu".into()],
            ..LimitedResource::default()
        },
        LimitedResource {
            resource: "pods".into(),
            match_scopes: vec![super::scopes::ScopeRequirement {
                scope_name: "PriorityClass".into(),
                operator: "In".into(),
                values: vec!["cluster-services".into()],
            }],
            ..LimitedResource::default()
        },
    ];
    let cpu_pod = pod(
        "p",
        json!([{"name": "c", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}}]),
    );
    let plain = pod("p", json!([{"name": "c"}]));
    let mut critical = plain.clone();
    critical["spec"]["priorityClassName"] = json!("cluster-services");
    assert_eq!(
        check_limited(&Evaluator::Pods, &[], &limited, &create(&cpu_pod)),
        Err(Refusal::Forbidden(
            "insufficient quota to consume: requests.cpu".into()
        ))
    );
    assert_eq!(
        check_limited(&Evaluator::Pods, &[], &limited, &create(&plain)),
        Ok(vec![])
    );
    assert_eq!(
        check_limited(&Evaluator::Pods, &[], &limited, &create(&critical)),
        Err(Refusal::Error(
            "insufficient quota to match these scopes: [{PriorityClass In [cluster-services]}]"
                .into()
        ))
    );
    // A quota on memory covers nothing limited; one on cpu does.
    let memory = quota(
        "memory",
        json!({"hard": {"requests.memory": "1Gi"}}),
        json!({"requests.memory": "1Gi"}),
        json!({"requests.memory": "0"}),
    );
    assert_eq!(
        check_limited(
            &Evaluator::Pods,
            std::slice::from_ref(&memory),
            &limited,
            &create(&cpu_pod)
        ),
        Err(Refusal::Forbidden(
            "insufficient quota to consume: requests.cpu".into()
        ))
    );
    let cpu = quota(
        "cpu",
        json!({"hard": {"requests.cpu": "2"}}),
        json!({"requests.cpu": "2"}),
        json!({"requests.cpu": "0"}),
    );
    assert_eq!(
        check_limited(
            &Evaluator::Pods,
            &[memory, cpu],
            &limited,
            &create(&cpu_pod)
        ),
        Ok(vec!["requests.memory=1Gi".into(), "requests.cpu=1".into()])
    );
    // A quota of the PriorityClass scope covers the critical pod, even
    // when the quota's own selector names another operator.
    let scoped = quota(
        "critical",
        json!({"hard": {"pods": "2"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "Exists"}]}}),
        json!({"pods": "2"}),
        json!({"pods": "0"}),
    );
    assert_eq!(
        check_limited(&Evaluator::Pods, &[scoped], &limited, &create(&critical)),
        Ok(vec!["pods=1".into()])
    );
    // Another resource's limits do not apply to services.
    let service = json!({"metadata": {"name": "s"}, "spec": {"type": "ClusterIP"}});
    let request = Request {
        resource: "services",
        ..create(&service)
    };
    assert_eq!(
        check_limited(&Evaluator::Services, &[], &limited, &request),
        Ok(vec![])
    );
}

/// kube 1.33's scope change on update (kubernetes/kubernetes#130060): a
/// quota that did not hold the old object is charged the new one in full,
/// one that held it only the difference.
#[test]
fn an_update_into_a_scope_is_charged_in_full() {
    let scoped = quota(
        "classy",
        json!({"hard": {"persistentvolumeclaims": "2"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "VolumeAttributesClass", "operator": "Exists"}]}}),
        json!({"persistentvolumeclaims": "2"}),
        json!({"persistentvolumeclaims": "0"}),
    );
    let all = quota(
        "all",
        json!({"hard": {"persistentvolumeclaims": "2"}}),
        json!({"persistentvolumeclaims": "2"}),
        json!({"persistentvolumeclaims": "1"}),
    );
    let old = json!({"metadata": {"name": "c", "resourceVersion": "3"},
                     "spec": {"resources": {"requests": {"storage": "1Gi"}}}});
    let mut new = old.clone();
    new["spec"]["volumeAttributesClassName"] = json!("fast");
    let request = Request {
        resource: "persistentvolumeclaims",
        subresource: "",
        ..update(&new, &old)
    };
    assert_eq!(
        check(&Evaluator::PersistentVolumeClaims, &[scoped, all], &request),
        Ok(vec!["persistentvolumeclaims=1".into(), "-".into()])
    );
}
