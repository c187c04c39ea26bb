//! apps, batch, autoscaling and policy printers.

use serde_json::json;

use super::{check, obj, AGE};
use crate::table::columns::Printer;

#[test]
fn workload_kinds() {
    let template = json!({"spec": {"containers": [{"name": "app", "image": "nginx:1"}, {"name": "side", "image": "envoy"}]}});
    check(
        Printer::Deployment,
        vec![(
            obj(
                "web",
                json!({"spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}}, "template": template},
                "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}}),
            ),
            json!([
                "web",
                "2/3",
                3,
                2,
                AGE,
                "app,side",
                "nginx:1,envoy",
                "app=web"
            ]),
        )],
    );
    check(
        Printer::ReplicaSet,
        vec![(
            obj(
                "web-1",
                json!({"spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "template": template},
                "status": {"replicas": 1, "readyReplicas": 1}}),
            ),
            json!([
                "web-1",
                1,
                1,
                1,
                AGE,
                "app,side",
                "nginx:1,envoy",
                "app=web"
            ]),
        )],
    );
    check(
        Printer::StatefulSet,
        vec![(
            obj(
                "db",
                json!({"spec": {"template": template}, "status": {"readyReplicas": 1}}),
            ),
            json!(["db", "1/1", AGE, "app,side", "nginx:1,envoy"]),
        )],
    );
    check(
        Printer::DaemonSet,
        vec![(
            obj(
                "agent",
                json!({"spec": {"selector": {"matchLabels": {"app": "agent"}},
                "template": {"spec": {"nodeSelector": {"kubernetes.io/os": "linux"}, "containers": [{"name": "a", "image": "agent"}]}}},
                "status": {"desiredNumberScheduled": 3, "currentNumberScheduled": 3, "numberReady": 2, "updatedNumberScheduled": 3, "numberAvailable": 2}}),
            ),
            json!([
                "agent",
                3,
                3,
                2,
                3,
                2,
                "kubernetes.io/os=linux",
                AGE,
                "a",
                "agent",
                "app=agent"
            ]),
        )],
    );
    check(
        Printer::ControllerRevision,
        vec![
            (
                obj(
                    "agent-5d",
                    json!({"metadata": {"ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "agent", "controller": true}]}, "revision": 2}),
                ),
                json!(["agent-5d", "daemonset.apps/agent", 2, AGE]),
            ),
            (
                obj("orphan", json!({"revision": 1})),
                json!(["orphan", "<none>", 1, AGE]),
            ),
        ],
    );
    let job_template = json!({"spec": {"containers": [{"name": "pi", "image": "perl"}]}});
    check(
        Printer::Job,
        vec![
            (
                obj(
                    "pi",
                    json!({"spec": {"completions": 1, "template": job_template, "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u"}}},
                    "status": {"succeeded": 1, "startTime": "2024-01-09T23:00:00Z", "completionTime": "2024-01-09T23:01:05Z",
                        "conditions": [{"type": "Complete", "status": "True"}]}}),
                ),
                json!([
                    "pi",
                    "Complete",
                    "1/1",
                    "65s",
                    AGE,
                    "pi",
                    "perl",
                    "batch.kubernetes.io/controller-uid=u"
                ]),
            ),
            (
                obj(
                    "par",
                    json!({"spec": {"parallelism": 3, "template": job_template}, "status": {"startTime": "2024-01-09T23:50:00Z"}}),
                ),
                json!(["par", "Running", "0/1 of 3", "10m", AGE, "pi", "perl", "<none>"]),
            ),
            (
                obj(
                    "new",
                    json!({"spec": {"suspend": true, "template": job_template}, "status": {"conditions": [{"type": "Suspended", "status": "True"}]}}),
                ),
                json!(["new", "Suspended", "0/1", "", AGE, "pi", "perl", "<none>"]),
            ),
        ],
    );
    check(
        Printer::CronJob,
        vec![(
            obj(
                "hourly",
                json!({"spec": {"schedule": "0 * * * *", "suspend": false, "jobTemplate": {"spec": {"template": job_template}}},
                "status": {"active": [{"name": "hourly-1"}], "lastScheduleTime": "2024-01-09T23:00:00Z"}}),
            ),
            json!([
                "hourly",
                "0 * * * *",
                "<none>",
                "False",
                1,
                "60m",
                AGE,
                "pi",
                "perl",
                "<none>"
            ]),
        )],
    );
    check(
        Printer::HorizontalPodAutoscaler,
        vec![
            (
                obj(
                    "web",
                    json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "minReplicas": 1, "maxReplicas": 5, "metrics": [
                    {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
                    {"type": "Pods", "pods": {"target": {"averageValue": "1k"}}},
                    {"type": "External", "external": {"target": {"value": "10"}}}
                ]}, "status": {"currentReplicas": 2, "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 30}}}]}}),
                ),
                json!([
                    "web",
                    "Deployment/web",
                    "cpu: 30%/50%, <unknown>/1k + 1 more...",
                    "1",
                    5,
                    2,
                    AGE
                ]),
            ),
            (
                obj(
                    "v1",
                    json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70}}),
                ),
                json!(["v1", "Deployment/api", "cpu: <unknown>/70%", "1", 3, 0, AGE]),
            ),
            // autoscaling/v1 with kube's round-trip annotation: the metrics
            // v1 cannot hold are printed too, as from the internal object.
            (
                obj(
                    "v1-annotated",
                    json!({"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
                        "metadata": {"annotations": {"autoscaling.alpha.kubernetes.io/metrics":
                            r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"1k"}}]"#}},
                        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "api"}, "maxReplicas": 3, "targetCPUUtilizationPercentage": 70},
                        "status": {"currentReplicas": 1, "desiredReplicas": 1, "currentCPUUtilizationPercentage": 20}}),
                ),
                json!([
                    "v1-annotated",
                    "Deployment/api",
                    "<unknown>/1k, cpu: <unknown>/70%",
                    "1",
                    3,
                    1,
                    AGE
                ]),
            ),
        ],
    );
    check(
        Printer::PodDisruptionBudget,
        vec![(
            obj(
                "pdb",
                json!({"spec": {"minAvailable": "50%"}, "status": {"disruptionsAllowed": 1}}),
            ),
            json!(["pdb", "50%", "N/A", 1, AGE]),
        )],
    );
}
