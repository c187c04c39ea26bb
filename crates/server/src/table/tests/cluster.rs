//! networking, storage, RBAC, admission, flow-control, ... printers.

use serde_json::json;

use super::{check, obj, AGE};
use crate::table::columns::Printer;

#[test]
fn cluster_kinds() {
    check(
        Printer::Ingress,
        vec![(
            obj(
                "ing",
                json!({"spec": {"ingressClassName": "nginx", "tls": [{}], "rules": [{"host": "a.example"}, {"host": "b.example"}, {}, {"host": "c"}, {"host": "d"}]},
                "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example"}]}}}),
            ),
            json!([
                "ing",
                "nginx",
                "a.example,b.example,c + 2 more...",
                "lb.example",
                "80, 443",
                AGE
            ]),
        )],
    );
    check(
        Printer::IngressClass,
        vec![(
            obj(
                "nginx",
                json!({"spec": {"controller": "k8s.io/ingress-nginx", "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"}}}),
            ),
            json!([
                "nginx",
                "k8s.io/ingress-nginx",
                "IngressParameters.k8s.example.com/p",
                AGE
            ]),
        )],
    );
    check(
        Printer::NetworkPolicy,
        vec![(
            obj("deny", json!({"spec": {"podSelector": {}}})),
            json!(["deny", "<none>", AGE]),
        )],
    );
    check(
        Printer::EndpointSlice,
        vec![
            (
                obj(
                    "web-abc",
                    json!({"addressType": "IPv4", "ports": [{"port": 80}, {"name": "dns"}, {}, {"port": 9}],
                    "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2", "10.0.0.3"]}]}),
                ),
                json!([
                    "web-abc",
                    "IPv4",
                    "80,dns,* + 1 more...",
                    "10.0.0.1,10.0.0.2,10.0.0.3",
                    AGE
                ]),
            ),
            (
                obj("empty", json!({"addressType": "IPv6"})),
                json!(["empty", "IPv6", "<unset>", "<unset>", AGE]),
            ),
        ],
    );
    check(
        Printer::StorageClass,
        vec![(
            obj(
                "standard",
                json!({"metadata": {"annotations": {"storageclass.kubernetes.io/is-default-class": "true"}}, "provisioner": "rancher.io/local-path"}),
            ),
            json!([
                "standard (default)",
                "rancher.io/local-path",
                "Delete",
                "Immediate",
                false,
                AGE
            ]),
        )],
    );
    check(
        Printer::CsiDriver,
        vec![(
            obj(
                "csi.example",
                json!({"spec": {"podInfoOnMount": true, "tokenRequests": [{"audience": "a"}, {"audience": "b"}], "volumeLifecycleModes": ["Persistent", "Ephemeral"]}}),
            ),
            json!([
                "csi.example",
                true,
                true,
                false,
                "a,b",
                false,
                "Persistent,Ephemeral",
                AGE
            ]),
        )],
    );
    check(
        Printer::CsiNode,
        vec![(
            obj("n1", json!({"spec": {"drivers": [{"name": "d"}]}})),
            json!(["n1", 1, AGE]),
        )],
    );
    check(
        Printer::VolumeAttachment,
        vec![(
            obj(
                "va",
                json!({"spec": {"attacher": "csi.example", "nodeName": "n1", "source": {"persistentVolumeName": "pv1"}}, "status": {"attached": true}}),
            ),
            json!(["va", "csi.example", "pv1", "n1", true, AGE]),
        )],
    );
    let binding = json!({"roleRef": {"kind": "ClusterRole", "name": "admin"}, "subjects": [
        {"kind": "User", "name": "alice"}, {"kind": "Group", "name": "devs"}, {"kind": "ServiceAccount", "namespace": "ci", "name": "bot"}, {"kind": "User", "name": "bob"}]});
    check(
        Printer::RoleBinding,
        vec![(
            obj("rb", binding.clone()),
            json!([
                "rb",
                "ClusterRole/admin",
                AGE,
                "alice, bob",
                "devs",
                "ci/bot"
            ]),
        )],
    );
    check(
        Printer::ClusterRoleBinding,
        vec![(
            obj("crb", binding),
            json!([
                "crb",
                "ClusterRole/admin",
                AGE,
                "alice, bob",
                "devs",
                "ci/bot"
            ]),
        )],
    );
    check(
        Printer::Lease,
        vec![(
            obj(
                "kube-scheduler",
                json!({"spec": {"holderIdentity": "node-1_abc"}}),
            ),
            json!(["kube-scheduler", "node-1_abc", AGE]),
        )],
    );
    check(
        Printer::PriorityClass,
        vec![(
            obj(
                "system-node-critical",
                json!({"value": 2000001000, "preemptionPolicy": "PreemptLowerPriority"}),
            ),
            json!([
                "system-node-critical",
                2000001000,
                false,
                AGE,
                "PreemptLowerPriority"
            ]),
        )],
    );
    check(
        Printer::RuntimeClass,
        vec![(
            obj("gvisor", json!({"handler": "runsc"})),
            json!(["gvisor", "runsc", AGE]),
        )],
    );
    check(
        Printer::MutatingWebhook,
        vec![(
            obj("hooks", json!({"webhooks": [{}, {}]})),
            json!(["hooks", 2, AGE]),
        )],
    );
    check(
        Printer::ValidatingWebhook,
        vec![(obj("hooks", json!({})), json!(["hooks", 0, AGE]))],
    );
    check(
        Printer::CertificateSigningRequest,
        vec![(
            obj(
                "csr-1",
                json!({"spec": {"signerName": "kubernetes.io/kube-apiserver-client", "username": "alice", "expirationSeconds": 86400},
                "status": {"conditions": [{"type": "Approved"}], "certificate": "LS0t"}}),
            ),
            json!([
                "csr-1",
                AGE,
                "kubernetes.io/kube-apiserver-client",
                "alice",
                "24h",
                "Approved,Issued"
            ]),
        )],
    );
    check(
        Printer::FlowSchema,
        vec![
            (
                obj(
                    "exempt",
                    json!({"spec": {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1},
                "status": {"conditions": [{"type": "Dangling", "status": "False"}]}}),
                ),
                json!(["exempt", "exempt", 1, "<none>", AGE, "False"]),
            ),
            (
                obj(
                    "catch-all",
                    json!({"spec": {"priorityLevelConfiguration": {"name": "catch-all"}, "distinguisherMethod": {"type": "ByUser"}}}),
                ),
                json!(["catch-all", "catch-all", 1000, "ByUser", AGE, "?"]),
            ),
        ],
    );
    check(
        Printer::PriorityLevelConfiguration,
        vec![
            (
                obj(
                    "workload-low",
                    json!({"spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": 100,
                    "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 6, "queueLengthLimit": 50}}}}}),
                ),
                json!(["workload-low", "Limited", 100, 128, 6, 50, AGE]),
            ),
            (
                obj("exempt", json!({"spec": {"type": "Exempt", "exempt": {}}})),
                json!(["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", AGE]),
            ),
        ],
    );
    check(
        Printer::ApiService,
        vec![(
            obj(
                "v1.apps",
                json!({"status": {"conditions": [{"type": "Available", "status": "True", "reason": "Local"}]}}),
            ),
            json!(["v1.apps", "Local", "True", AGE]),
        )],
    );
}
