"""kube's validation of Namespaces, PersistentVolumeClaims and ResourceQuotas
seen through the Python client: 422 with kube's message and causes, and the
`/status` rule of a Namespace's phase."""

import json
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException


def status_of(call, *args):
    with pytest.raises(ApiException) as info:
        call(*args)
    assert info.value.status == 422
    return json.loads(info.value.body)


def test_claims_and_quotas_are_refused_as_kube_refuses_them(core_v1, namespace):
    claim = {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": "claim"},
        "spec": {"accessModes": ["ReadWriteOnce", "ReadWriteOncePod"], "resources": {"requests": {"storage": "-1Gi"}}},
    }
    body = status_of(core_v1.create_namespaced_persistent_volume_claim, namespace, claim)
    assert body["reason"] == "Invalid"
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueForbidden",
            "message": "Forbidden: may not use ReadWriteOncePod with other access modes",
            "field": "spec.accessModes",
        },
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "-1Gi": must be greater than zero',
            "field": "spec.resources[storage]",
        },
    ]
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "q"},
        "spec": {"hard": {"cpu": "1"}, "scopes": ["BestEffort"]},
    }
    body = status_of(core_v1.create_namespaced_resource_quota, namespace, quota)
    assert body["message"] == (
        'ResourceQuota "q" is invalid: spec.scopes: Invalid value: '
        '[]core.ResourceQuotaScope{"BestEffort"}: unsupported scope applied to resource'
    )


def test_namespace_finalizers_and_status_phase(core_v1):
    name = f"val-py-{uuid.uuid4().hex[:8]}"
    body = status_of(
        core_v1.create_namespace,
        {"metadata": {"name": name}, "spec": {"finalizers": ["custom"]}},
    )
    assert body["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "custom": name is neither a standard finalizer name nor is it fully qualified',
            "field": "spec.finalizers",
        }
    ]
    created = core_v1.create_namespace({"metadata": {"name": name}, "spec": {"finalizers": ["example.com/keep"]}})
    assert created.spec.finalizers == ["example.com/keep", "kubernetes"]
    created.status = client.V1NamespaceStatus(phase="Terminating")
    body = status_of(core_v1.replace_namespace_status, name, created)
    assert body["message"] == (
        f'Namespace "{name}" is invalid: status.Phase: Invalid value: "Terminating": '
        "may only be 'Active' if `deletionTimestamp` is empty"
    )
    core_v1.delete_namespace(name)
    # The namespace waits for its own finalizer; /finalize releases it. The
    # namespace controller writes the terminating namespace meanwhile, so
    # the read-modify-write retries on a conflict as client-go's
    # RetryOnConflict does.
    for attempt in range(10):
        final = core_v1.read_namespace(name)
        final.spec.finalizers = [f for f in final.spec.finalizers if f != "example.com/keep"]
        try:
            core_v1.replace_namespace_finalize(name, final)
            break
        except ApiException as error:
            if error.status != 409 or attempt == 9:
                raise
