"""PATCH through the official Python client: strategic merge (dict bodies),
JSON patch (list bodies), merge patch and server-side apply (by content type),
with managedFields, conflicts, dry-run and field validation as kube-apiserver
1.34 answers them."""

import json
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException


def name():
    return f"p-{uuid.uuid4().hex[:8]}"


def owners(obj):
    return {(e.manager, e.operation) for e in (obj.metadata.managed_fields or [])}


def create_cm(core_v1, namespace, data):
    return core_v1.create_namespaced_config_map(
        namespace,
        client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name()), data=data),
        field_manager="creator",
    )


def test_strategic_json_and_merge_patches_record_owners(core_v1, namespace):
    cm = create_cm(core_v1, namespace, {"a": "1"})
    n = cm.metadata.name
    smp = core_v1.patch_namespaced_config_map(n, namespace, {"data": {"b": "2"}}, field_manager="smp")
    assert smp.data == {"a": "1", "b": "2"}
    js = core_v1.patch_namespaced_config_map(
        n, namespace, [{"op": "replace", "path": "/data/a", "value": "10"}], field_manager="jsonpatch"
    )
    assert js.data["a"] == "10"
    merged = core_v1.patch_namespaced_config_map(
        n,
        namespace,
        {"data": {"c": "3"}},
        field_manager="merger",
        _content_type="application/merge-patch+json",
    )
    assert merged.data == {"a": "10", "b": "2", "c": "3"}
    # The creator keeps the `data` map itself (`".": {}`), the keys went to the patchers.
    assert owners(merged) == {("creator", "Update"), ("smp", "Update"), ("jsonpatch", "Update"), ("merger", "Update")}
    by_manager = {e.manager: e for e in merged.metadata.managed_fields}
    assert by_manager["creator"].fields_v1 == {"f:data": {}}
    assert by_manager["jsonpatch"].fields_v1 == {"f:data": {"f:a": {}}}
    assert by_manager["smp"].fields_v1 == {"f:data": {"f:b": {}}}
    assert by_manager["merger"].api_version == "v1"
    assert by_manager["merger"].fields_type == "FieldsV1"


def test_server_side_apply_conflict_and_force(core_v1, namespace):
    n = name()
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": {"k": "v"}}
    created = core_v1.patch_namespaced_config_map(
        n, namespace, body, field_manager="applier", _content_type="application/apply-patch+yaml"
    )
    assert created.data == {"k": "v"}
    assert owners(created) == {("applier", "Apply")}
    core_v1.patch_namespaced_config_map(n, namespace, {"data": {"k": "changed"}}, field_manager="editor")
    with pytest.raises(ApiException) as info:
        core_v1.patch_namespaced_config_map(
            n, namespace, body, field_manager="applier", _content_type="application/apply-patch+yaml"
        )
    assert info.value.status == 409
    status = json.loads(info.value.body)
    assert status["reason"] == "Conflict"
    assert status["message"] == 'Apply failed with 1 conflict: conflict with "editor" using v1: .data.k'
    assert status["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "editor" using v1', "field": ".data.k"}
    ]
    forced = core_v1.patch_namespaced_config_map(
        n, namespace, body, field_manager="applier", force=True, _content_type="application/apply-patch+yaml"
    )
    assert forced.data == {"k": "v"}
    assert owners(forced) == {("applier", "Apply")}


def test_patch_dry_run_and_field_validation(core_v1, namespace):
    cm = create_cm(core_v1, namespace, {"a": "1"})
    n = cm.metadata.name
    dry = core_v1.patch_namespaced_config_map(n, namespace, {"data": {"a": "2"}}, dry_run="All")
    assert dry.data["a"] == "2"
    assert core_v1.read_namespaced_config_map(n, namespace).data["a"] == "1"
    with pytest.raises(ApiException) as info:
        core_v1.patch_namespaced_config_map(n, namespace, {"data": {"a": "2"}}, dry_run="Bogus")
    assert info.value.status == 422
    assert json.loads(info.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Bogus"}: '
        'supported values: "All"'
    )
    with pytest.raises(ApiException) as info:
        core_v1.patch_namespaced_config_map(
            n, namespace, {"data": {"a": "3"}, "bogus": 1}, field_validation="Strict"
        )
    assert info.value.status == 422
    message = json.loads(info.value.body)["message"]
    assert message.startswith(' "" is invalid: patch: Invalid value: "map[bogus:1 data:map[a:3]]"'), message
    assert message.endswith('strict decoding error: unknown field "bogus"'), message
    # Ignore drops the field silently.
    ok = core_v1.patch_namespaced_config_map(
        n, namespace, {"data": {"a": "4"}, "bogus": 1}, field_validation="Ignore"
    )
    assert ok.data["a"] == "4"
