"""The official Python `kubernetes` client against ferrokube.

Every expectation here is what kube-apiserver 1.34 answers to the same request.
The client deserializes into typed (pydantic) models, so a response missing a
field kube always sends, or carrying a wrongly typed one, fails in the client.
"""

import base64
import json
import re
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

RV_RE = re.compile(r"^[0-9]+$")
UID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
    "'-' or '.', and must start and end with an alphanumeric character "
    "(e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
MODIFIED_MSG = "the object has been modified; please apply your changes to the latest version and try again"


# ---------------------------------------------------------------- helpers


def cm_body(name, labels=None, data=None, annotations=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels, annotations=annotations),
        data=data if data is not None else {"key": "value"},
    )


def raise_for(call, *args, **kwargs):
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    return info.value


def status_body(exc):
    """The Status a failed call carried, checked to deserialize as V1Status."""
    assert exc.headers is not None
    assert exc.headers.get("Content-Type", "").startswith("application/json"), exc.headers
    body = exc.body.decode() if isinstance(exc.body, bytes) else exc.body
    raw = json.loads(body)
    client.V1Status.from_dict(raw)  # raises if the Status is not a valid V1Status
    return raw


def assert_failure(exc, code, http_reason, reason, message, details):
    assert exc.status == code, exc
    assert exc.reason == http_reason, exc
    raw = status_body(exc)
    expected = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        expected["details"] = details
    assert raw == expected


def set_fields(model):
    """The fields a typed model actually carries (the wire JSON, None-valued fields dropped)."""
    return model.model_dump(by_alias=True, exclude_none=True)


def names(items):
    return [i.metadata.name for i in items]


def raw_get(call, *args, **kwargs):
    """Call a client method without deserializing; returns (status, headers, json)."""
    resp = call(*args, _preload_content=False, **kwargs)
    return resp.status, resp.headers, json.loads(resp.data)


def deployment_body(name, replicas=2):
    selector = {"app": name, "tier": "frontend"}
    container = client.V1Container(
        name="web",
        image="nginx:1.27",
        args=["-g", "daemon off;"],
        ports=[client.V1ContainerPort(name="http", container_port=80)],
        env=[
            client.V1EnvVar(name="MODE", value="test"),
            client.V1EnvVar(
                name="POD_NAME",
                value_from=client.V1EnvVarSource(
                    field_ref=client.V1ObjectFieldSelector(field_path="metadata.name")
                ),
            ),
        ],
        resources=client.V1ResourceRequirements(
            requests={"cpu": "100m", "memory": "64Mi"},
            limits={"cpu": "0.5", "memory": "128Mi"},
        ),
        readiness_probe=client.V1Probe(http_get=client.V1HTTPGetAction(path="/healthz", port="http")),
        volume_mounts=[client.V1VolumeMount(name="cfg", mount_path="/etc/cfg")],
    )
    return client.V1Deployment(
        api_version="apps/v1",
        kind="Deployment",
        metadata=client.V1ObjectMeta(name=name, labels={"app": name}),
        spec=client.V1DeploymentSpec(
            replicas=replicas,
            selector=client.V1LabelSelector(match_labels=selector),
            template=client.V1PodTemplateSpec(
                metadata=client.V1ObjectMeta(labels=dict(selector), annotations={"note": "template"}),
                spec=client.V1PodSpec(
                    containers=[container],
                    volumes=[
                        client.V1Volume(name="cfg", config_map=client.V1ConfigMapVolumeSource(name="cfg"))
                    ],
                ),
            ),
        ),
    )


# ---------------------------------------------------------------- ConfigMap CRUD


def test_configmap_create_and_read(core_v1, namespace):
    blob = base64.b64encode(b"\x00\x01binary").decode()
    body = client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name="settings", labels={"app": "demo"}, annotations={"a": "b"}),
        data={"mode": "fast", "empty": ""},
        binary_data={"blob": blob},
    )
    created, code, headers = core_v1.create_namespaced_config_map_with_http_info(namespace, body)
    assert code == 201
    assert headers["Content-Type"].startswith("application/json")
    assert isinstance(created, client.V1ConfigMap)
    assert created.kind == "ConfigMap"
    assert created.api_version == "v1"
    md = created.metadata
    assert md.name == "settings"
    assert md.namespace == namespace
    assert md.labels == {"app": "demo"}
    assert md.annotations == {"a": "b"}
    assert UID_RE.match(md.uid), md.uid
    assert RV_RE.match(md.resource_version), md.resource_version
    assert md.creation_timestamp is not None and md.creation_timestamp.tzinfo is not None
    assert md.generation is None  # configmaps have no generation
    assert md.deletion_timestamp is None
    assert created.data == {"mode": "fast", "empty": ""}
    assert created.binary_data == {"blob": blob}

    read, code, _ = core_v1.read_namespaced_config_map_with_http_info("settings", namespace)
    assert code == 200
    assert read.kind == "ConfigMap" and read.api_version == "v1"
    assert read.metadata.uid == md.uid
    assert read.metadata.resource_version == md.resource_version
    assert read.metadata.creation_timestamp == md.creation_timestamp
    assert read.data == created.data
    assert read.binary_data == created.binary_data


def test_configmap_create_records_managed_fields(core_v1, namespace):
    # kube-apiserver tracks field ownership on every create/update (server-side apply
    # is GA): the response carries one managedFields entry for the field manager.
    created = core_v1.create_namespaced_config_map(
        namespace, cm_body("owned", labels={"x": "y"}, data={"k": "v"}), field_manager="pytest-suite"
    )
    entries = created.metadata.managed_fields
    assert entries is not None and len(entries) == 1, entries
    entry = entries[0]
    assert entry.manager == "pytest-suite"
    assert entry.operation == "Update"
    assert entry.api_version == "v1"
    assert entry.fields_type == "FieldsV1"
    assert entry.time is not None
    assert entry.fields_v1["f:data"]["f:k"] == {}
    assert entry.fields_v1["f:metadata"]["f:labels"]["f:x"] == {}


def test_configmap_list_with_label_and_field_selectors(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm_body("alpha", {"tier": "front", "env": "prod"}))
    core_v1.create_namespaced_config_map(namespace, cm_body("bravo", {"tier": "back", "env": "prod"}))
    core_v1.create_namespaced_config_map(namespace, cm_body("charlie", {"tier": "front", "env": "dev"}))

    listed = core_v1.list_namespaced_config_map(namespace, label_selector="tier=front")
    assert isinstance(listed, client.V1ConfigMapList)
    assert listed.kind == "ConfigMapList"
    assert listed.api_version == "v1"
    assert RV_RE.match(listed.metadata.resource_version)
    assert listed.metadata._continue is None
    assert listed.metadata.remaining_item_count is None
    assert names(listed.items) == ["alpha", "charlie"]
    assert all(i.metadata.namespace == namespace for i in listed.items)

    assert names(core_v1.list_namespaced_config_map(namespace, label_selector="env in (prod),tier!=front").items) == [
        "bravo"
    ]
    assert names(core_v1.list_namespaced_config_map(namespace, label_selector="tier,env notin (dev)").items) == [
        "alpha",
        "bravo",
    ]
    assert names(core_v1.list_namespaced_config_map(namespace, label_selector="tier=nothing").items) == []

    assert names(core_v1.list_namespaced_config_map(namespace, field_selector="metadata.name=bravo").items) == [
        "bravo"
    ]
    both = core_v1.list_namespaced_config_map(
        namespace, label_selector="tier", field_selector="metadata.name!=bravo"
    )
    assert names(both.items) == ["alpha", "charlie"]
    by_ns = core_v1.list_namespaced_config_map(
        namespace, label_selector="tier", field_selector=f"metadata.namespace={namespace}"
    )
    assert names(by_ns.items) == ["alpha", "bravo", "charlie"]


def test_list_items_carry_no_type_meta(core_v1, apps_v1, namespace):
    # On the wire, items of a built-in list carry no kind/apiVersion (only the list does).
    core_v1.create_namespaced_config_map(namespace, cm_body("alpha", {"tier": "front"}))
    core_v1.create_namespaced_config_map(namespace, cm_body("bravo", {"tier": "back"}))
    code, headers, raw = raw_get(core_v1.list_namespaced_config_map, namespace, label_selector="tier")
    assert code == 200
    assert headers["Content-Type"].startswith("application/json")
    assert raw["kind"] == "ConfigMapList" and raw["apiVersion"] == "v1"
    assert [i["metadata"]["name"] for i in raw["items"]] == ["alpha", "bravo"]
    for item in raw["items"]:
        assert "kind" not in item and "apiVersion" not in item, item

    apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    code, _, raw = raw_get(apps_v1.list_namespaced_deployment, namespace)
    assert code == 200
    assert raw["kind"] == "DeploymentList" and raw["apiVersion"] == "apps/v1"
    for item in raw["items"]:
        assert "kind" not in item and "apiVersion" not in item, item


def test_configmap_list_unknown_field_selector_is_bad_request(core_v1, namespace):
    exc = raise_for(core_v1.list_namespaced_config_map, namespace, field_selector="data.key=value")
    assert_failure(
        exc,
        400,
        "Bad Request",
        "BadRequest",
        '"data.key" is not a known field selector: only "metadata.name", "metadata.namespace"',
        None,
    )


def test_list_config_map_for_all_namespaces(core_v1, namespace):
    marker = uuid.uuid4().hex[:12]
    core_v1.create_namespaced_config_map(namespace, cm_body("everywhere", {"marker": marker}))
    listed = core_v1.list_config_map_for_all_namespaces(label_selector=f"marker={marker}")
    assert isinstance(listed, client.V1ConfigMapList)
    assert listed.kind == "ConfigMapList"
    assert listed.api_version == "v1"
    assert RV_RE.match(listed.metadata.resource_version)
    assert [(i.metadata.namespace, i.metadata.name) for i in listed.items] == [(namespace, "everywhere")]

    scoped = core_v1.list_config_map_for_all_namespaces(field_selector=f"metadata.namespace={namespace}")
    assert (namespace, "everywhere") in [(i.metadata.namespace, i.metadata.name) for i in scoped.items]
    assert all(i.metadata.namespace == namespace for i in scoped.items)

    unrelated = core_v1.list_config_map_for_all_namespaces(
        label_selector=f"marker={marker}", field_selector="metadata.namespace=some-other-namespace"
    )
    assert unrelated.items == []


def test_configmap_replace(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm_body("cfg", {"v": "1"}, {"a": "1"}))
    current = core_v1.read_namespaced_config_map("cfg", namespace)
    current.data = {"a": "2", "b": "3"}
    current.metadata.labels = {"v": "2"}
    replaced, code, _ = core_v1.replace_namespaced_config_map_with_http_info("cfg", namespace, current)
    assert code == 200
    assert replaced.kind == "ConfigMap" and replaced.api_version == "v1"
    assert replaced.data == {"a": "2", "b": "3"}
    assert replaced.metadata.labels == {"v": "2"}
    assert replaced.metadata.uid == created.metadata.uid
    assert replaced.metadata.creation_timestamp == created.metadata.creation_timestamp
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    assert core_v1.read_namespaced_config_map("cfg", namespace).data == {"a": "2", "b": "3"}

    # ConfigMaps allow unconditional updates: no resourceVersion in the body.
    unconditional = cm_body("cfg", {"v": "3"}, {"a": "4"})
    again = core_v1.replace_namespaced_config_map("cfg", namespace, unconditional)
    assert again.data == {"a": "4"}
    assert again.metadata.uid == created.metadata.uid
    assert int(again.metadata.resource_version) > int(replaced.metadata.resource_version)


def test_configmap_delete_returns_status(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm_body("doomed"))
    result, code, _ = core_v1.delete_namespaced_config_map_with_http_info("doomed", namespace)
    assert code == 200
    # kube answers a ConfigMap delete with a Success Status naming the resource (not the Kind).
    assert result == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "doomed", "kind": "configmaps", "uid": created.metadata.uid},
    }
    client.V1Status.from_dict(result)
    exc = raise_for(core_v1.read_namespaced_config_map, "doomed", namespace)
    assert exc.status == 404
    exc = raise_for(core_v1.delete_namespaced_config_map, "doomed", namespace)
    assert_failure(
        exc, 404, "Not Found", "NotFound", 'configmaps "doomed" not found', {"name": "doomed", "kind": "configmaps"}
    )


# ---------------------------------------------------------------- Deployment CRUD


def test_deployment_create_applies_kube_defaults(apps_v1, namespace):
    created, code, _ = apps_v1.create_namespaced_deployment_with_http_info(namespace, deployment_body("web"))
    assert code == 201
    assert isinstance(created, client.V1Deployment)
    assert created.kind == "Deployment"
    assert created.api_version == "apps/v1"
    assert created.metadata.generation == 1
    assert created.metadata.namespace == namespace
    assert UID_RE.match(created.metadata.uid)
    spec = created.spec
    assert spec.replicas == 2
    assert spec.selector.match_labels == {"app": "web", "tier": "frontend"}
    assert spec.strategy.type == "RollingUpdate"
    assert spec.strategy.rolling_update.max_unavailable == "25%"
    assert spec.strategy.rolling_update.max_surge == "25%"
    assert spec.revision_history_limit == 10
    assert spec.progress_deadline_seconds == 600
    assert spec.paused is None
    tmpl = spec.template
    assert tmpl.metadata.labels == {"app": "web", "tier": "frontend"}
    assert tmpl.metadata.annotations == {"note": "template"}
    pod = tmpl.spec
    assert pod.restart_policy == "Always"
    assert pod.termination_grace_period_seconds == 30
    assert pod.dns_policy == "ClusterFirst"
    assert pod.scheduler_name == "default-scheduler"
    assert pod.security_context is not None and set_fields(pod.security_context) == {}
    assert pod.volumes[0].config_map.default_mode == 420
    (c,) = pod.containers
    assert c.image == "nginx:1.27"
    assert c.args == ["-g", "daemon off;"]
    assert c.image_pull_policy == "IfNotPresent"
    assert c.termination_message_path == "/dev/termination-log"
    assert c.termination_message_policy == "File"
    assert c.ports[0].container_port == 80
    assert c.ports[0].name == "http"
    assert c.ports[0].protocol == "TCP"
    assert c.env[0].name == "MODE" and c.env[0].value == "test"
    assert c.env[1].value_from.field_ref.field_path == "metadata.name"
    assert c.resources.requests == {"cpu": "100m", "memory": "64Mi"}
    probe = c.readiness_probe
    assert probe.http_get.path == "/healthz"
    assert probe.http_get.port == "http"
    assert probe.http_get.scheme == "HTTP"
    assert probe.timeout_seconds == 1
    assert probe.period_seconds == 10
    assert probe.success_threshold == 1
    assert probe.failure_threshold == 3
    assert c.volume_mounts[0].mount_path == "/etc/cfg"
    # a new Deployment has an empty status
    assert created.status is not None
    assert set_fields(created.status) == {}

    read = apps_v1.read_namespaced_deployment("web", namespace)
    assert read.metadata.uid == created.metadata.uid
    assert read.metadata.resource_version == created.metadata.resource_version
    assert read.spec.to_dict() == created.spec.to_dict()

    listed = apps_v1.list_namespaced_deployment(namespace)
    assert listed.kind == "DeploymentList" and listed.api_version == "apps/v1"
    assert names(listed.items) == ["web"]


def test_deployment_template_field_ref_defaults_api_version(apps_v1, namespace):
    # SetDefaults_ObjectFieldSelector: an env fieldRef without apiVersion gets "v1".
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    field_ref = created.spec.template.spec.containers[0].env[1].value_from.field_ref
    assert field_ref.field_path == "metadata.name"
    assert field_ref.api_version == "v1"
    read = apps_v1.read_namespaced_deployment("web", namespace)
    assert read.spec.template.spec.containers[0].env[1].value_from.field_ref.api_version == "v1"


def test_deployment_template_quantities_are_canonical(apps_v1, namespace):
    # resource.Quantity is serialized in canonical form: "0.5" CPU comes back as "500m".
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    resources = created.spec.template.spec.containers[0].resources
    assert resources.requests == {"cpu": "100m", "memory": "64Mi"}
    assert resources.limits == {"cpu": "500m", "memory": "128Mi"}


def test_deployment_replace_bumps_generation(apps_v1, namespace):
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    assert created.metadata.generation == 1

    current = apps_v1.read_namespaced_deployment("web", namespace)
    current.spec.replicas = 3
    current.status = client.V1DeploymentStatus(replicas=9)  # ignored on the main resource
    replaced, code, _ = apps_v1.replace_namespaced_deployment_with_http_info("web", namespace, current)
    assert code == 200
    assert replaced.spec.replicas == 3
    assert replaced.metadata.generation == 2
    assert replaced.metadata.uid == created.metadata.uid
    assert int(replaced.metadata.resource_version) > int(created.metadata.resource_version)
    assert set_fields(replaced.status) == {}

    # A label-only change is not a spec change: the generation stays.
    replaced.metadata.labels = {"app": "web", "extra": "yes"}
    relabeled = apps_v1.replace_namespaced_deployment("web", namespace, replaced)
    assert relabeled.metadata.labels == {"app": "web", "extra": "yes"}
    assert relabeled.metadata.generation == 2
    assert apps_v1.read_namespaced_deployment("web", namespace).spec.replicas == 3


def test_deployment_annotation_change_bumps_generation(apps_v1, namespace):
    # deploymentStrategy.PrepareForUpdate bumps metadata.generation when the spec
    # or the annotations change (annotations are copied to the ReplicaSets).
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    assert created.metadata.generation == 1
    created.metadata.annotations = {"rollout": "1"}
    annotated = apps_v1.replace_namespaced_deployment("web", namespace, created)
    assert annotated.metadata.annotations == {"rollout": "1"}
    assert annotated.metadata.generation == 2
    assert annotated.spec.replicas == 2


def test_deployment_status_replace_keeps_spec(apps_v1, namespace):
    apps_v1.create_namespaced_deployment(namespace, deployment_body("web", replicas=3))
    current = apps_v1.read_namespaced_deployment("web", namespace)
    generation = current.metadata.generation
    current.spec.replicas = 99  # ignored by the status subresource
    current.metadata.labels = {"app": "web", "sneaky": "yes"}  # ignored too
    current.status = client.V1DeploymentStatus(
        observed_generation=generation,
        replicas=3,
        updated_replicas=3,
        ready_replicas=2,
        available_replicas=2,
        unavailable_replicas=1,
    )
    updated, code, _ = apps_v1.replace_namespaced_deployment_status_with_http_info("web", namespace, current)
    assert code == 200
    assert updated.kind == "Deployment" and updated.api_version == "apps/v1"
    assert updated.spec.replicas == 3
    assert updated.metadata.labels == {"app": "web"}
    assert updated.metadata.generation == generation
    assert updated.status.observed_generation == generation
    assert updated.status.replicas == 3
    assert updated.status.updated_replicas == 3
    assert updated.status.ready_replicas == 2
    assert updated.status.available_replicas == 2
    assert updated.status.unavailable_replicas == 1
    assert int(updated.metadata.resource_version) > int(current.metadata.resource_version)

    read = apps_v1.read_namespaced_deployment("web", namespace)
    assert read.spec.replicas == 3
    assert read.status.ready_replicas == 2
    status_read = apps_v1.read_namespaced_deployment_status("web", namespace)
    assert status_read.status.available_replicas == 2
    assert status_read.metadata.resource_version == read.metadata.resource_version


def test_workloads_read_back_typed_with_gos_zero_status(core_v1, apps_v1, namespace):
    # kube's zero statuses carry the fields Go writes without omitempty; the
    # typed models require some (V1ReplicaSetStatus.replicas, the DaemonSet
    # counts), so without them the reads below raise.
    template = lambda app: client.V1PodTemplateSpec(
        metadata=client.V1ObjectMeta(labels={"app": app}),
        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="busybox")]),
    )
    selector = lambda app: client.V1LabelSelector(match_labels={"app": app})
    apps_v1.create_namespaced_replica_set(namespace, client.V1ReplicaSet(
        metadata=client.V1ObjectMeta(name="rs"),
        spec=client.V1ReplicaSetSpec(replicas=0, selector=selector("rs"), template=template("rs"))))
    apps_v1.create_namespaced_daemon_set(namespace, client.V1DaemonSet(
        metadata=client.V1ObjectMeta(name="ds"),
        spec=client.V1DaemonSetSpec(selector=selector("ds"), template=template("ds"))))
    apps_v1.create_namespaced_stateful_set(namespace, client.V1StatefulSet(
        metadata=client.V1ObjectMeta(name="ss"),
        spec=client.V1StatefulSetSpec(replicas=0, selector=selector("ss"), template=template("ss"))))
    core_v1.create_namespaced_replication_controller(namespace, client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name="rc"),
        spec=client.V1ReplicationControllerSpec(replicas=0, selector={"app": "rc"}, template=template("rc"))))

    assert apps_v1.read_namespaced_replica_set("rs", namespace).status.replicas == 0
    ds = apps_v1.read_namespaced_daemon_set("ds", namespace).status
    assert (ds.current_number_scheduled, ds.desired_number_scheduled, ds.number_misscheduled, ds.number_ready) == (0, 0, 0, 0)
    assert apps_v1.read_namespaced_stateful_set("ss", namespace).status.available_replicas == 0
    assert core_v1.read_namespaced_replication_controller("rc", namespace).status.replicas == 0
    assert raw_get(apps_v1.read_namespaced_stateful_set, "ss", namespace)[2]["status"] == {
        "replicas": 0, "availableReplicas": 0}

    # The labels sent through a ReplicaSet's /status are kept (its status
    # strategy only restores the spec), unlike a Deployment's.
    rs = apps_v1.read_namespaced_replica_set("rs", namespace)
    rs.metadata.labels = {"tier": "cache"}
    rs.status = client.V1ReplicaSetStatus(replicas=0, observed_generation=1)
    updated = apps_v1.replace_namespaced_replica_set_status("rs", namespace, rs)
    assert updated.status.observed_generation == 1
    assert updated.metadata.labels == {"tier": "cache"}


def test_deployment_scale_subresource(apps_v1, namespace):
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web", replicas=2))
    current = apps_v1.read_namespaced_deployment("web", namespace)
    current.status = client.V1DeploymentStatus(replicas=2, updated_replicas=2, observed_generation=1)
    with_status = apps_v1.replace_namespaced_deployment_status("web", namespace, current)

    scale, code, _ = apps_v1.read_namespaced_deployment_scale_with_http_info("web", namespace)
    assert code == 200
    assert isinstance(scale, client.V1Scale)
    assert scale.kind == "Scale"
    assert scale.api_version == "autoscaling/v1"
    assert scale.metadata.name == "web"
    assert scale.metadata.namespace == namespace
    assert scale.metadata.uid == created.metadata.uid
    assert scale.metadata.resource_version == with_status.metadata.resource_version
    assert scale.metadata.creation_timestamp == created.metadata.creation_timestamp
    assert scale.spec.replicas == 2
    assert scale.status.replicas == 2
    assert scale.status.selector == "app=web,tier=frontend"

    scale.spec.replicas = 5
    new_scale, code, _ = apps_v1.replace_namespaced_deployment_scale_with_http_info("web", namespace, scale)
    assert code == 200
    assert new_scale.kind == "Scale" and new_scale.api_version == "autoscaling/v1"
    assert new_scale.spec.replicas == 5
    assert new_scale.status.replicas == 2
    assert new_scale.status.selector == "app=web,tier=frontend"
    assert int(new_scale.metadata.resource_version) > int(scale.metadata.resource_version)

    dep = apps_v1.read_namespaced_deployment("web", namespace)
    assert dep.spec.replicas == 5
    assert dep.metadata.generation == 2
    assert dep.metadata.resource_version == new_scale.metadata.resource_version
    assert dep.status.replicas == 2  # scaling leaves status alone
    assert dep.spec.template.spec.containers[0].image == "nginx:1.27"

    # A scale carrying a stale resourceVersion conflicts like the deployment itself.
    scale.spec.replicas = 7
    exc = raise_for(apps_v1.replace_namespaced_deployment_scale, "web", namespace, scale)
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on deployments.apps "web": {MODIFIED_MSG}',
        {"name": "web", "group": "apps", "kind": "deployments"},
    )
    assert apps_v1.read_namespaced_deployment("web", namespace).spec.replicas == 5


def test_deployment_delete_returns_status(apps_v1, namespace):
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    result = apps_v1.delete_namespaced_deployment("web", namespace)
    assert result == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "web", "group": "apps", "kind": "deployments", "uid": created.metadata.uid},
    }
    client.V1Status.from_dict(result)
    exc = raise_for(apps_v1.read_namespaced_deployment, "web", namespace)
    assert_failure(
        exc,
        404,
        "Not Found",
        "NotFound",
        'deployments.apps "web" not found',
        {"name": "web", "group": "apps", "kind": "deployments"},
    )


# ---------------------------------------------------------------- errors


def test_not_found(core_v1, apps_v1, namespace):
    exc = raise_for(core_v1.read_namespaced_config_map, "missing", namespace)
    assert_failure(
        exc, 404, "Not Found", "NotFound", 'configmaps "missing" not found', {"name": "missing", "kind": "configmaps"}
    )
    exc = raise_for(apps_v1.read_namespaced_deployment_scale, "missing", namespace)
    assert_failure(
        exc,
        404,
        "Not Found",
        "NotFound",
        'deployments.apps "missing" not found',
        {"name": "missing", "group": "apps", "kind": "deployments"},
    )
    exc = raise_for(core_v1.replace_namespaced_config_map, "missing", namespace, cm_body("missing"))
    # PUT without a resourceVersion on a missing ConfigMap: configmaps do not allow create-on-update.
    assert_failure(
        exc, 404, "Not Found", "NotFound", 'configmaps "missing" not found', {"name": "missing", "kind": "configmaps"}
    )


def test_create_in_missing_namespace_is_not_found(core_v1):
    ghost = f"ghost-{uuid.uuid4().hex[:10]}"
    exc = raise_for(core_v1.create_namespaced_config_map, ghost, cm_body("cfg"))
    assert_failure(exc, 404, "Not Found", "NotFound", f'namespaces "{ghost}" not found', {"name": ghost, "kind": "namespaces"})


def test_already_exists(core_v1, apps_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm_body("dup"))
    exc = raise_for(core_v1.create_namespaced_config_map, namespace, cm_body("dup"))
    assert_failure(
        exc, 409, "Conflict", "AlreadyExists", 'configmaps "dup" already exists', {"name": "dup", "kind": "configmaps"}
    )
    apps_v1.create_namespaced_deployment(namespace, deployment_body("dup"))
    exc = raise_for(apps_v1.create_namespaced_deployment, namespace, deployment_body("dup"))
    assert_failure(
        exc,
        409,
        "Conflict",
        "AlreadyExists",
        'deployments.apps "dup" already exists',
        {"name": "dup", "group": "apps", "kind": "deployments"},
    )


def test_conflict_on_stale_resource_version(core_v1, apps_v1, namespace):
    first = core_v1.create_namespaced_config_map(namespace, cm_body("racy", data={"n": "0"}))
    newer = core_v1.read_namespaced_config_map("racy", namespace)
    newer.data = {"n": "1"}
    core_v1.replace_namespaced_config_map("racy", namespace, newer)

    first.data = {"n": "stale"}  # still carries the first resourceVersion
    exc = raise_for(core_v1.replace_namespaced_config_map, "racy", namespace, first)
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on configmaps "racy": {MODIFIED_MSG}',
        {"name": "racy", "kind": "configmaps"},
    )
    assert core_v1.read_namespaced_config_map("racy", namespace).data == {"n": "1"}

    dep = apps_v1.create_namespaced_deployment(namespace, deployment_body("racy"))
    fresh = apps_v1.read_namespaced_deployment("racy", namespace)
    fresh.spec.replicas = 4
    apps_v1.replace_namespaced_deployment("racy", namespace, fresh)
    dep.spec.replicas = 1
    exc = raise_for(apps_v1.replace_namespaced_deployment, "racy", namespace, dep)
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on deployments.apps "racy": {MODIFIED_MSG}',
        {"name": "racy", "group": "apps", "kind": "deployments"},
    )
    exc = raise_for(apps_v1.replace_namespaced_deployment_status, "racy", namespace, dep)
    assert exc.status == 409
    assert status_body(exc)["reason"] == "Conflict"


def test_invalid_name_is_unprocessable(core_v1, namespace):
    exc = raise_for(core_v1.create_namespaced_config_map, namespace, cm_body("bad_name"))
    assert_failure(
        exc,
        422,
        "Unprocessable Entity",
        "Invalid",
        f'ConfigMap "bad_name" is invalid: metadata.name: Invalid value: "bad_name": {DNS_SUBDOMAIN_MSG}',
        {
            "name": "bad_name",
            "kind": "ConfigMap",
            "causes": [
                {
                    "reason": "FieldValueInvalid",
                    "message": f'Invalid value: "bad_name": {DNS_SUBDOMAIN_MSG}',
                    "field": "metadata.name",
                }
            ],
        },
    )


def test_kind_validation_is_unprocessable_with_every_cause(core_v1, apps_v1, namespace):
    body = deployment_body("web")
    body.spec.replicas = -1
    body.spec.selector.match_labels = {"app": "other"}
    exc = raise_for(apps_v1.create_namespaced_deployment, namespace, body)
    labels = 'map[string]string{"app":"web", "tier":"frontend"}'
    replicas = "Invalid value: -1: must be greater than or equal to 0"
    mismatch = f"Invalid value: {labels}: `selector` does not match template `labels`"
    assert_failure(
        exc,
        422,
        "Unprocessable Entity",
        "Invalid",
        f'Deployment.apps "web" is invalid: [spec.replicas: {replicas}, spec.template.metadata.labels: {mismatch}]',
        {
            "name": "web",
            "group": "apps",
            "kind": "Deployment",
            "causes": [
                {"reason": "FieldValueInvalid", "message": replicas, "field": "spec.replicas"},
                {"reason": "FieldValueInvalid", "message": mismatch, "field": "spec.template.metadata.labels"},
            ],
        },
    )
    # An immutable ConfigMap keeps its data.
    frozen = cm_body("frozen", data={"a": "1"})
    frozen.immutable = True
    core_v1.create_namespaced_config_map(namespace, frozen)
    current = core_v1.read_namespaced_config_map("frozen", namespace)
    current.data = {"a": "2"}
    exc = raise_for(core_v1.replace_namespaced_config_map, "frozen", namespace, current)
    assert exc.status == 422
    raw = status_body(exc)
    assert raw["message"] == 'ConfigMap "frozen" is invalid: data: Forbidden: field is immutable when `immutable` is set'
    assert raw["details"]["causes"] == [
        {"reason": "FieldValueForbidden", "message": "Forbidden: field is immutable when `immutable` is set", "field": "data"}
    ]
    assert core_v1.read_namespaced_config_map("frozen", namespace).data == {"a": "1"}
    # /status writes are validated by the status strategy's rules.
    apps_v1.create_namespaced_deployment(namespace, deployment_body("counted"))
    current = apps_v1.read_namespaced_deployment("counted", namespace)
    current.status = client.V1DeploymentStatus(replicas=1, ready_replicas=2)
    exc = raise_for(apps_v1.replace_namespaced_deployment_status, "counted", namespace, current)
    assert exc.status == 422
    raw = status_body(exc)
    assert raw["message"] == (
        'Deployment.apps "counted" is invalid: status.readyReplicas: Invalid value: 2: cannot be greater than status.replicas'
    )
    assert raw["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": "Invalid value: 2: cannot be greater than status.replicas", "field": "status.readyReplicas"}
    ]


def test_name_mismatch_between_url_and_body_is_bad_request(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm_body("right"))
    exc = raise_for(core_v1.replace_namespaced_config_map, "right", namespace, cm_body("wrong"))
    assert_failure(
        exc,
        400,
        "Bad Request",
        "BadRequest",
        "the name of the object (wrong) does not match the name on the URL (right)",
        None,
    )


# ---------------------------------------------------------------- limit / continue


def test_list_pagination_with_limit_and_continue(core_v1, namespace):
    for i in range(5):
        core_v1.create_namespaced_config_map(namespace, cm_body(f"page-{i}", {"paged": "yes"}))
    # Everything in the namespace (a real cluster may also publish kube-root-ca.crt).
    everything = names(core_v1.list_namespaced_config_map(namespace).items)
    assert [n for n in everything if n.startswith("page-")] == [f"page-{i}" for i in range(5)]
    total = len(everything)

    pages, seen, rv, token = [], [], None, None
    while True:
        page = core_v1.list_namespaced_config_map(namespace, limit=2, _continue=token)
        assert isinstance(page, client.V1ConfigMapList)
        assert page.kind == "ConfigMapList" and page.api_version == "v1"
        if rv is None:
            rv = page.metadata.resource_version
            assert RV_RE.match(rv)
        else:
            assert page.metadata.resource_version == rv, "every page is served from the first page's snapshot"
        seen += names(page.items)
        pages.append(len(page.items))
        token = page.metadata._continue
        if token:
            assert len(page.items) == 2
            assert page.metadata.remaining_item_count == total - len(seen)
        else:
            assert page.metadata.remaining_item_count is None
            break
        assert len(pages) <= total, "pagination does not terminate"
    assert seen == everything
    assert pages == [2] * (total // 2) + ([total % 2] if total % 2 else [])


def test_list_pagination_with_label_selector_has_no_remaining_count(core_v1, namespace):
    for i in range(5):
        core_v1.create_namespaced_config_map(namespace, cm_body(f"sel-{i}", {"group": "a" if i % 2 == 0 else "b"}))
    page1 = core_v1.list_namespaced_config_map(namespace, label_selector="group=a", limit=2)
    assert names(page1.items) == ["sel-0", "sel-2"]
    assert page1.metadata._continue
    # kube leaves remainingItemCount unset when a selector filters the list.
    assert page1.metadata.remaining_item_count is None
    page2 = core_v1.list_namespaced_config_map(
        namespace, label_selector="group=a", limit=2, _continue=page1.metadata._continue
    )
    assert names(page2.items) == ["sel-4"]
    assert page2.metadata._continue is None
    assert page2.metadata.remaining_item_count is None
    assert page2.metadata.resource_version == page1.metadata.resource_version


def test_list_continue_serves_a_consistent_snapshot(core_v1, namespace):
    for i in range(5):
        core_v1.create_namespaced_config_map(namespace, cm_body(f"snap-{i}", {"snap": "yes"}, {"v": "old"}))
    page1 = core_v1.list_namespaced_config_map(namespace, label_selector="snap=yes", limit=2)
    assert names(page1.items) == ["snap-0", "snap-1"]

    # Changes after the first page must not show up in later pages.
    core_v1.create_namespaced_config_map(namespace, cm_body("snap-9", {"snap": "yes"}))
    changed = core_v1.read_namespaced_config_map("snap-3", namespace)
    old_rv = changed.metadata.resource_version
    changed.data = {"v": "new"}
    core_v1.replace_namespaced_config_map("snap-3", namespace, changed)
    core_v1.delete_namespaced_config_map("snap-4", namespace)

    rest, token = [], page1.metadata._continue
    while token:
        page = core_v1.list_namespaced_config_map(namespace, label_selector="snap=yes", limit=2, _continue=token)
        assert page.metadata.resource_version == page1.metadata.resource_version
        rest += page.items
        token = page.metadata._continue
    assert names(rest) == ["snap-2", "snap-3", "snap-4"]
    snap3 = rest[1]
    assert snap3.data == {"v": "old"}
    assert snap3.metadata.resource_version == old_rv

    fresh = names(core_v1.list_namespaced_config_map(namespace, label_selector="snap=yes").items)
    assert fresh == ["snap-0", "snap-1", "snap-2", "snap-3", "snap-9"]


# ---------------------------------------------------------------- delete preconditions


def test_delete_with_uid_precondition(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm_body("guarded"))
    wrong_uid = str(uuid.uuid4())
    exc = raise_for(
        core_v1.delete_namespaced_config_map,
        "guarded",
        namespace,
        body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=wrong_uid)),
    )
    # rest.BeforeDelete checks preconditions first and names the Kind, not the resource.
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on ConfigMap "guarded": the UID in the precondition ({wrong_uid}) '
        f"does not match the UID in record ({created.metadata.uid}). "
        "The object might have been deleted and then recreated",
        {"name": "guarded", "kind": "ConfigMap"},
    )
    still = core_v1.read_namespaced_config_map("guarded", namespace)
    assert still.metadata.uid == created.metadata.uid


def test_delete_with_resource_version_precondition(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm_body("guarded"))
    stale_rv = "1"
    exc = raise_for(
        core_v1.delete_namespaced_config_map,
        "guarded",
        namespace,
        body=client.V1DeleteOptions(preconditions=client.V1Preconditions(resource_version=stale_rv)),
    )
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on ConfigMap "guarded": the ResourceVersion in the precondition '
        f"({stale_rv}) does not match the ResourceVersion in record ({created.metadata.resource_version}). "
        "The object might have been modified",
        {"name": "guarded", "kind": "ConfigMap"},
    )
    assert core_v1.read_namespaced_config_map("guarded", namespace).metadata.uid == created.metadata.uid


def test_delete_with_matching_preconditions(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm_body("guarded"))
    result = core_v1.delete_namespaced_config_map(
        "guarded",
        namespace,
        body=client.V1DeleteOptions(
            preconditions=client.V1Preconditions(
                uid=created.metadata.uid, resource_version=created.metadata.resource_version
            )
        ),
    )
    assert result == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "guarded", "kind": "configmaps", "uid": created.metadata.uid},
    }
    assert raise_for(core_v1.read_namespaced_config_map, "guarded", namespace).status == 404


def test_deployment_delete_with_uid_precondition(apps_v1, namespace):
    created = apps_v1.create_namespaced_deployment(namespace, deployment_body("web"))
    wrong_uid = str(uuid.uuid4())
    exc = raise_for(
        apps_v1.delete_namespaced_deployment,
        "web",
        namespace,
        body=client.V1DeleteOptions(preconditions=client.V1Preconditions(uid=wrong_uid)),
    )
    assert_failure(
        exc,
        409,
        "Conflict",
        "Conflict",
        f'Operation cannot be fulfilled on Deployment.apps "web": the UID in the precondition ({wrong_uid}) '
        f"does not match the UID in record ({created.metadata.uid}). "
        "The object might have been deleted and then recreated",
        {"name": "web", "group": "apps", "kind": "Deployment"},
    )
    assert apps_v1.read_namespaced_deployment("web", namespace).metadata.uid == created.metadata.uid


def test_component_statuses_are_probed(core_v1):
    # Deprecated but served by kube 1.34: the storage answers, and nothing
    # listens on the controller-manager's and scheduler's default ports here.
    statuses = {item.metadata.name: item.conditions[0] for item in core_v1.list_component_status().items}
    assert sorted(statuses) == ["controller-manager", "etcd-0", "scheduler"]
    assert (statuses["etcd-0"].type, statuses["etcd-0"].status, statuses["etcd-0"].message) == ("Healthy", "True", "ok")
    scheduler = core_v1.read_component_status("scheduler").conditions[0]
    assert scheduler.status == "False"
    assert "dial tcp 127.0.0.1:10259: connect: connection refused" in scheduler.message
