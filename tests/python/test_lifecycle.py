"""Deletion through the official Python client with `V1DeleteOptions`:
preconditions, propagation policies and the finalizers they add, finalizers
holding an object, pods' graceful deletion, deletecollection, and kube's
validation of the options. Expectations are kube-apiserver 1.34's answers.
"""

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

FINALIZER = "lifecycle.ferrokube.dev/hold"


def cm(name, labels=None, finalizers=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels, finalizers=finalizers),
        data={"k": "v"},
    )


def error_of(call, *args, **kwargs):
    with pytest.raises(ApiException) as info:
        call(*args, **kwargs)
    return info.value.status, json.loads(info.value.body)


def raw_delete(core_v1, name, namespace, body):
    """DELETE answering the object itself (not a Status): read it untyped."""
    response = core_v1.delete_namespaced_config_map(name, namespace, body=body, _preload_content=False)
    return response.status, json.loads(response.data)


def test_preconditions_conflict(core_v1, namespace):
    created = core_v1.create_namespaced_config_map(namespace, cm("pre"))
    wrong = client.V1DeleteOptions(preconditions=client.V1Preconditions(uid="not-it"))
    code, status = error_of(core_v1.delete_namespaced_config_map, "pre", namespace, body=wrong)
    assert code == 409
    assert status["reason"] == "Conflict"
    assert status["message"] == (
        f'Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (not-it) '
        f"does not match the UID in record ({created.metadata.uid}). "
        "The object might have been deleted and then recreated"
    )
    right = client.V1DeleteOptions(
        preconditions=client.V1Preconditions(
            uid=created.metadata.uid, resource_version=created.metadata.resource_version
        )
    )
    status = core_v1.delete_namespaced_config_map("pre", namespace, body=right)
    # The client types a DELETE answer as a plain object: kube's success Status.
    assert status["status"] == "Success"
    assert status["details"] == {"name": "pre", "kind": "configmaps", "uid": created.metadata.uid}
    code, _ = error_of(core_v1.read_namespaced_config_map, "pre", namespace)
    assert code == 404


def test_foreground_propagation_keeps_the_object_for_the_garbage_collector(core_v1, namespace):
    # Its own finalizer keeps it after the garbage collector (if one runs) is done.
    core_v1.create_namespaced_config_map(namespace, cm("fg", finalizers=[FINALIZER]))
    code, kept = raw_delete(core_v1, "fg", namespace, client.V1DeleteOptions(propagation_policy="Foreground"))
    assert code == 200
    assert kept["kind"] == "ConfigMap"
    assert kept["metadata"]["finalizers"] == [FINALIZER, "foregroundDeletion"]
    assert kept["metadata"]["deletionGracePeriodSeconds"] == 0
    read = core_v1.read_namespaced_config_map("fg", namespace)
    assert read.metadata.deletion_timestamp is not None
    assert FINALIZER in read.metadata.finalizers
    # Removing the last finalizer removes the object.
    core_v1.patch_namespaced_config_map("fg", namespace, {"metadata": {"finalizers": None}})
    code, _ = error_of(core_v1.read_namespaced_config_map, "fg", namespace)
    assert code == 404


def test_finalizers_hold_and_may_not_grow_while_deleting(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("held", finalizers=[FINALIZER]))
    code, kept = raw_delete(core_v1, "held", namespace, client.V1DeleteOptions(orphan_dependents=False))
    assert code == 202, "kept, and the client asked for dependents to be deleted"
    assert kept["metadata"]["finalizers"] == [FINALIZER]
    read = core_v1.read_namespaced_config_map("held", namespace)
    read.metadata.finalizers = [FINALIZER, "lifecycle.ferrokube.dev/late"]
    code, status = error_of(core_v1.replace_namespaced_config_map, "held", namespace, read)
    assert code == 422
    assert status["message"] == (
        'ConfigMap "held" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added '
        'if the object is being deleted, found new finalizers []string{"lifecycle.ferrokube.dev/late"}'
    )
    read = core_v1.read_namespaced_config_map("held", namespace)
    read.metadata.finalizers = []
    core_v1.replace_namespaced_config_map("held", namespace, read)
    code, _ = error_of(core_v1.read_namespaced_config_map, "held", namespace)
    assert code == 404


def test_invalid_delete_options(core_v1, namespace):
    core_v1.create_namespaced_config_map(namespace, cm("bad"))
    both = client.V1DeleteOptions(orphan_dependents=True, propagation_policy="Orphan")
    code, status = error_of(core_v1.delete_namespaced_config_map, "bad", namespace, body=both)
    assert code == 422
    assert status["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": '
        "orphanDependents and deletionPropagation cannot be both set"
    )
    assert status["details"] == {
        "group": "meta.k8s.io",
        "kind": "DeleteOptions",
        "causes": [
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set',
                "field": "propagationPolicy",
            }
        ],
    }
    assert core_v1.read_namespaced_config_map("bad", namespace).metadata.deletion_timestamp is None


def test_pod_graceful_deletion(core_v1, namespace):
    spec = client.V1PodSpec(node_name="node-a", containers=[client.V1Container(name="c", image="busybox")])
    core_v1.create_namespaced_pod(namespace, client.V1Pod(metadata=client.V1ObjectMeta(name="p"), spec=spec))
    pod = core_v1.delete_namespaced_pod("p", namespace, body=client.V1DeleteOptions(grace_period_seconds=10))
    assert pod.metadata.deletion_grace_period_seconds == 10
    assert pod.metadata.deletion_timestamp is not None
    assert core_v1.read_namespaced_pod("p", namespace).metadata.deletion_grace_period_seconds == 10
    core_v1.delete_namespaced_pod("p", namespace, body=client.V1DeleteOptions(grace_period_seconds=0))
    code, _ = error_of(core_v1.read_namespaced_pod, "p", namespace)
    assert code == 404


def test_delete_collection_with_label_selector(core_v1, namespace):
    for name, tier in [("a", "web"), ("b", "web"), ("c", "db")]:
        core_v1.create_namespaced_config_map(namespace, cm(name, labels={"tier": tier}))
    response = core_v1.delete_collection_namespaced_config_map(
        namespace, label_selector="tier=web", _preload_content=False
    )
    assert response.status == 200
    deleted = json.loads(response.data)
    assert deleted["kind"] == "ConfigMapList"
    assert sorted(item["metadata"]["name"] for item in deleted["items"]) == ["a", "b"]
    left = core_v1.list_namespaced_config_map(namespace, label_selector="tier")
    assert [item.metadata.name for item in left.items] == ["c"]
