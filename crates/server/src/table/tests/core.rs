//! Pods and the other core-group printers.

use serde_json::json;

use super::{check, obj, AGE};
use crate::table::columns::Printer;

#[test]
fn pods() {
    let running = obj(
        "web",
        json!({
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "node-1"},
            "status": {
                "phase": "Running",
                "podIPs": [{"ip": "10.0.0.5"}],
                "conditions": [{"type": "Ready", "status": "True"}],
                "containerStatuses": [
                    {"name": "a", "ready": true, "restartCount": 3, "state": {"running": {}},
                     "lastState": {"terminated": {"exitCode": 1, "finishedAt": "2024-01-09T23:55:00Z"}}},
                    {"name": "b", "ready": false, "restartCount": 2, "state": {"running": {}}}
                ]
            }
        }),
    );
    let crash = obj(
        "crash",
        json!({
            "spec": {"containers": [{"name": "a"}]},
            "status": {"phase": "Running", "containerStatuses": [
                {"name": "a", "restartCount": 0, "state": {"waiting": {"reason": "CrashLoopBackOff"}}}
            ]}
        }),
    );
    let init = obj(
        "init",
        json!({
            "spec": {"initContainers": [{"name": "i1"}, {"name": "i2"}], "containers": [{"name": "a"}],
                     "readinessGates": [{"conditionType": "x/ready"}]},
            "status": {"phase": "Pending", "initContainerStatuses": [
                {"name": "i1", "state": {"terminated": {"exitCode": 0}}},
                {"name": "i2", "state": {"running": {}}}
            ]}
        }),
    );
    let sidecar = obj(
        "sidecar",
        json!({
            "spec": {"initContainers": [{"name": "s", "restartPolicy": "Always"}], "containers": [{"name": "a"}]},
            "status": {"phase": "Running",
                "conditions": [{"type": "Initialized", "status": "True"}],
                "initContainerStatuses": [{"name": "s", "started": true, "ready": true, "restartCount": 1, "state": {"running": {}}}],
                "containerStatuses": [{"name": "a", "ready": true, "state": {"running": {}}}]}
        }),
    );
    let terminating = obj(
        "gone",
        json!({"metadata": {"deletionTimestamp": "2024-01-09T00:00:00Z"}, "spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Running"}}),
    );
    let done = obj(
        "done",
        json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Succeeded", "containerStatuses": [
        {"name": "a", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}]}}),
    );
    let gated = obj(
        "gated",
        json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Pending", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}]}}),
    );
    let signal = obj(
        "sig",
        json!({"spec": {"containers": [{"name": "a"}]}, "status": {"phase": "Failed", "containerStatuses": [
        {"name": "a", "state": {"terminated": {"exitCode": 137, "signal": 9}}}]}}),
    );
    check(
        Printer::Pod,
        vec![
            (
                running,
                json!([
                    "web",
                    "1/2",
                    "Running",
                    "5 (5m ago)",
                    AGE,
                    "10.0.0.5",
                    "node-1",
                    "<none>",
                    "<none>"
                ]),
            ),
            (
                crash,
                json!([
                    "crash",
                    "0/1",
                    "CrashLoopBackOff",
                    "0",
                    AGE,
                    "<none>",
                    "<none>",
                    "<none>",
                    "<none>"
                ]),
            ),
            (
                init,
                json!(["init", "0/1", "Init:1/2", "0", AGE, "<none>", "<none>", "<none>", "0/1"]),
            ),
            (
                sidecar,
                json!([
                    "sidecar", "2/2", "Running", "1", AGE, "<none>", "<none>", "<none>", "<none>"
                ]),
            ),
            (
                terminating,
                json!([
                    "gone",
                    "0/1",
                    "Terminating",
                    "0",
                    AGE,
                    "<none>",
                    "<none>",
                    "<none>",
                    "<none>"
                ]),
            ),
            (
                done.clone(),
                json!([
                    "done",
                    "0/1",
                    "Completed",
                    "0",
                    AGE,
                    "<none>",
                    "<none>",
                    "<none>",
                    "<none>"
                ]),
            ),
            (
                gated,
                json!([
                    "gated",
                    "0/1",
                    "SchedulingGated",
                    "0",
                    AGE,
                    "<none>",
                    "<none>",
                    "<none>",
                    "<none>"
                ]),
            ),
            (
                signal,
                json!(["sig", "0/1", "Signal:9", "0", AGE, "<none>", "<none>", "<none>", "<none>"]),
            ),
        ],
    );
    assert_eq!(
        crate::table::printers_pod::pod_conditions(&done),
        Some(
            json!([{"type": "Completed", "status": "True", "reason": "Succeeded", "message": "The pod has completed successfully."}])
        )
    );
}

#[test]
fn core_kinds() {
    check(
        Printer::Node,
        vec![(
            obj(
                "n1",
                json!({
                    "metadata": {"labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
                    "spec": {"unschedulable": true},
                    "status": {"conditions": [{"type": "Ready", "status": "True"}],
                        "addresses": [{"type": "InternalIP", "address": "192.168.0.2"}],
                        "nodeInfo": {"kubeletVersion": "v1.34.0", "osImage": "Debian"}}
                }),
            ),
            json!([
                "n1",
                "Ready,SchedulingDisabled",
                "control-plane,worker",
                AGE,
                "v1.34.0",
                "192.168.0.2",
                "<none>",
                "Debian",
                "<unknown>",
                "<unknown>"
            ]),
        )],
    );
    check(
        Printer::Namespace,
        vec![(
            obj("default", json!({"status": {"phase": "Active"}})),
            json!(["default", "Active", AGE]),
        )],
    );
    check(
        Printer::Service,
        vec![
            (
                obj(
                    "web",
                    json!({"spec": {"type": "ClusterIP", "clusterIPs": ["10.96.0.10"], "selector": {"app": "web"},
                    "ports": [{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}]}}),
                ),
                json!([
                    "web",
                    "ClusterIP",
                    "10.96.0.10",
                    "<none>",
                    "80/TCP,53/UDP",
                    AGE,
                    "app=web"
                ]),
            ),
            (
                obj(
                    "lb",
                    json!({"spec": {"type": "LoadBalancer", "clusterIPs": ["10.96.0.11"], "externalIPs": ["9.9.9.9"],
                    "ports": [{"port": 443, "nodePort": 30443, "protocol": "TCP"}]},
                    "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}}),
                ),
                json!([
                    "lb",
                    "LoadBalancer",
                    "10.96.0.11",
                    "1.2.3.4,9.9.9.9",
                    "443:30443/TCP",
                    AGE,
                    "<none>"
                ]),
            ),
            (
                obj(
                    "headless",
                    json!({"spec": {"type": "ClusterIP", "clusterIP": "None"}}),
                ),
                json!([
                    "headless",
                    "ClusterIP",
                    "None",
                    "<none>",
                    "<none>",
                    AGE,
                    "<none>"
                ]),
            ),
            (
                obj("pending", json!({"spec": {"type": "LoadBalancer"}})),
                json!([
                    "pending",
                    "LoadBalancer",
                    "<none>",
                    "<pending>",
                    "<none>",
                    AGE,
                    "<none>"
                ]),
            ),
            (
                obj(
                    "ext",
                    json!({"spec": {"type": "ExternalName", "externalName": "db.example.com"}}),
                ),
                json!([
                    "ext",
                    "ExternalName",
                    "<none>",
                    "db.example.com",
                    "<none>",
                    AGE,
                    "<none>"
                ]),
            ),
        ],
    );
    check(
        Printer::Endpoints,
        vec![
            (obj("none", json!({})), json!(["none", "<none>", AGE])),
            (
                obj(
                    "web",
                    json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}, {"ip": "fd00::3"}, {"ip": "10.0.0.4"}],
                    "ports": [{"port": 8080}]}]}),
                ),
                json!([
                    "web",
                    "10.0.0.1:8080,10.0.0.2:8080,[fd00::3]:8080 + 1 more...",
                    AGE
                ]),
            ),
        ],
    );
    check(
        Printer::ConfigMap,
        vec![(
            obj(
                "cm",
                json!({"data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}),
            ),
            json!(["cm", 3, AGE]),
        )],
    );
    check(
        Printer::Secret,
        vec![(
            obj("s", json!({"type": "Opaque", "data": {"k": "dg=="}})),
            json!(["s", "Opaque", 1, AGE]),
        )],
    );
    check(
        Printer::ServiceAccount,
        vec![(obj("default", json!({})), json!(["default", 0, AGE]))],
    );
    check(
        Printer::Event,
        vec![
            (
                obj(
                    "web.1",
                    json!({"type": "Warning", "reason": "BackOff", "message": " Back-off restarting \n",
                "involvedObject": {"kind": "Pod", "name": "web", "fieldPath": "spec.containers{a}"},
                "source": {"component": "kubelet", "host": "node-1"},
                "firstTimestamp": "2024-01-09T00:00:00Z", "lastTimestamp": "2024-01-09T23:59:30Z", "count": 7}),
                ),
                json!([
                    "30s",
                    "Warning",
                    "BackOff",
                    "pod/web",
                    "spec.containers{a}",
                    "kubelet, node-1",
                    "Back-off restarting",
                    "24h",
                    7,
                    "web.1"
                ]),
            ),
            (
                // events.k8s.io/v1 field names; a series overrides Last Seen and Count.
                obj(
                    "web.2",
                    json!({"type": "Normal", "reason": "Pulled", "note": "pulled",
                "regarding": {"kind": "Pod", "name": "web"}, "reportingController": "kubelet",
                "eventTime": "2024-01-09T22:00:00.000000Z", "series": {"count": 4, "lastObservedTime": "2024-01-09T23:59:00.000000Z"}}),
                ),
                json!([
                    "60s", "Normal", "Pulled", "pod/web", "", "kubelet", "pulled", "120m", 4,
                    "web.2"
                ]),
            ),
        ],
    );
    check(
        Printer::PersistentVolume,
        vec![(
            obj(
                "pv1",
                json!({"spec": {"capacity": {"storage": "1.5Gi"}, "accessModes": ["ReadWriteOnce"], "persistentVolumeReclaimPolicy": "Retain",
                "claimRef": {"namespace": "ns", "name": "data"}, "storageClassName": "fast"}, "status": {"phase": "Bound"}}),
            ),
            json!([
                "pv1",
                "1536Mi",
                "RWO",
                "Retain",
                "Bound",
                "ns/data",
                "fast",
                "<unset>",
                "",
                AGE,
                "Filesystem"
            ]),
        )],
    );
    check(
        Printer::PersistentVolumeClaim,
        vec![
            (
                obj(
                    "data",
                    json!({"spec": {"volumeName": "pv1", "storageClassName": "fast", "volumeMode": "Filesystem"},
                    "status": {"phase": "Bound", "capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]}}),
                ),
                json!([
                    "data",
                    "Bound",
                    "pv1",
                    "10Gi",
                    "RWO",
                    "fast",
                    "<unset>",
                    AGE,
                    "Filesystem"
                ]),
            ),
            (
                obj("new", json!({})),
                json!([
                    "new",
                    "Pending",
                    "",
                    "",
                    "",
                    "",
                    "<unset>",
                    AGE,
                    "Filesystem"
                ]),
            ),
        ],
    );
    check(
        Printer::ReplicationController,
        vec![(
            obj(
                "rc",
                json!({"spec": {"replicas": 2, "selector": {"app": "x"}, "template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}},
                "status": {"replicas": 2, "readyReplicas": 1}}),
            ),
            json!(["rc", 2, 2, 1, AGE, "c", "nginx", "app=x"]),
        )],
    );
    check(
        Printer::ResourceQuota,
        vec![(
            obj(
                "q",
                json!({"status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
                "used": {"pods": "3", "limits.cpu": "500m"}}}),
            ),
            json!([
                "q",
                "pods: 3/10, requests.memory: 0/1Gi",
                "limits.cpu: 500m/2",
                AGE
            ]),
        )],
    );
    check(
        Printer::PodTemplate,
        vec![(
            obj(
                "t",
                json!({"template": {"metadata": {"labels": {"a": "b"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}),
            ),
            json!(["t", "c", "i", "a=b"]),
        )],
    );
}
