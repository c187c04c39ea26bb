"""core/v1 defaulting through the official Python client.

The expected JSON is what kube-apiserver 1.34 returns for the same body
(`pkg/apis/core/v1/defaults.go` and `zz_generated.defaults.go`, field by
field). Responses are read raw (`_preload_content=False`) so that a field
the typed models would hide still counts.
"""

import json
import uuid

from kubernetes import client


def raw(call, *args):
    return json.loads(call(*args, _preload_content=False).data)


def test_pod_volumes_probes_and_env_are_defaulted(core_v1, namespace):
    pod = client.V1Pod(
        metadata=client.V1ObjectMeta(name="shapes"),
        spec=client.V1PodSpec(
            automount_service_account_token=False,
            host_network=True,
            containers=[
                client.V1Container(
                    name="app",
                    image="registry.example/app",
                    ports=[client.V1ContainerPort(container_port=8080)],
                    env=[
                        client.V1EnvVar(
                            name="NODE",
                            value_from=client.V1EnvVarSource(
                                field_ref=client.V1ObjectFieldSelector(field_path="spec.nodeName")
                            ),
                        )
                    ],
                    startup_probe=client.V1Probe(
                        tcp_socket=client.V1TCPSocketAction(port=8080), failure_threshold=30
                    ),
                )
            ],
            volumes=[
                client.V1Volume(name="dapi", downward_api=client.V1DownwardAPIVolumeSource(
                    items=[client.V1DownwardAPIVolumeFile(
                        path="name", field_ref=client.V1ObjectFieldSelector(field_path="metadata.name"))]
                )),
                client.V1Volume(name="cm", config_map=client.V1ConfigMapVolumeSource(name="c", default_mode=0o400)),
                client.V1Volume(name="scratch"),
            ],
        ),
    )
    core_v1.create_namespaced_pod(namespace, pod)
    got = raw(core_v1.read_namespaced_pod, "shapes", namespace)
    assert got["spec"]["containers"][0] == {
        "name": "app",
        "image": "registry.example/app",
        "imagePullPolicy": "Always",
        # hostNetwork: the hostPort is the containerPort (SetDefaults_Pod).
        "ports": [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}],
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
        "startupProbe": {"tcpSocket": {"port": 8080}, "timeoutSeconds": 1, "periodSeconds": 10,
                         "successThreshold": 1, "failureThreshold": 30},
        "resources": {},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    assert got["spec"]["volumes"] == [
        {"name": "dapi", "downwardAPI": {"defaultMode": 420, "items": [
            {"path": "name", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}]}},
        {"name": "cm", "configMap": {"name": "c", "defaultMode": 256}},
        {"name": "scratch", "emptyDir": {}},
    ]
    assert got["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_service_and_claims_are_defaulted(core_v1, namespace):
    service = client.V1Service(
        metadata=client.V1ObjectMeta(name="lb"),
        spec=client.V1ServiceSpec(
            type="LoadBalancer",
            selector={"app": "x"},
            ports=[client.V1ServicePort(port=443, target_port="https")],
        ),
    )
    core_v1.create_namespaced_service(namespace, service)
    spec = raw(core_v1.read_namespaced_service, "lb", namespace)["spec"]
    assert spec["sessionAffinity"] == "None"
    assert "sessionAffinityConfig" not in spec
    assert spec["externalTrafficPolicy"] == "Cluster"
    assert spec["internalTrafficPolicy"] == "Cluster"
    assert spec["allocateLoadBalancerNodePorts"] is True
    assert spec["ports"][0]["targetPort"] == "https"
    assert spec["ports"][0]["protocol"] == "TCP"

    claim = client.V1PersistentVolumeClaim(
        metadata=client.V1ObjectMeta(name="data"),
        spec=client.V1PersistentVolumeClaimSpec(
            access_modes=["ReadWriteOnce"],
            resources=client.V1VolumeResourceRequirements(requests={"storage": "1Gi"}),
        ),
    )
    core_v1.create_namespaced_persistent_volume_claim(namespace, claim)
    got = raw(core_v1.read_namespaced_persistent_volume_claim, "data", namespace)
    assert got["spec"]["volumeMode"] == "Filesystem"
    assert got["status"] == {"phase": "Pending"}


def test_persistent_volume_sources_are_defaulted(core_v1):
    name = f"pv-{uuid.uuid4().hex[:8]}"
    volume = client.V1PersistentVolume(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PersistentVolumeSpec(
            capacity={"storage": "5Gi"},
            access_modes=["ReadWriteOnce"],
            iscsi=client.V1ISCSIPersistentVolumeSource(target_portal="10.0.0.1:3260", iqn="iqn.2001-04.com.example:disk", lun=0),
        ),
    )
    core_v1.create_persistent_volume(volume)
    try:
        got = raw(core_v1.read_persistent_volume, name)
        assert got["spec"] == {
            "capacity": {"storage": "5Gi"},
            "accessModes": ["ReadWriteOnce"],
            "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.2001-04.com.example:disk",
                      "lun": 0, "iscsiInterface": "default"},
            "persistentVolumeReclaimPolicy": "Retain",
            "volumeMode": "Filesystem",
        }
        assert got["status"]["phase"] == "Pending"
        assert got["status"]["lastPhaseTransitionTime"].endswith("Z")
    finally:
        core_v1.delete_persistent_volume(name)
