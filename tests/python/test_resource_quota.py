"""ResourceQuota admission and the resourcequota controller through the
Python client: the controller fills the quota's status, Services are
counted (`services`, `services.nodeports`), the one past the limit gets
kube's 403, and a deleted Service gives its usage back."""

import json
import time

import pytest
from kubernetes.client.exceptions import ApiException

WAIT_S = 60


def wait_for_used(core_v1, namespace, name, expected):
    deadline = time.monotonic() + WAIT_S
    while True:
        quota = core_v1.read_namespaced_resource_quota_status(name, namespace)
        used = (quota.status.used or {}) if quota.status else {}
        if used == expected:
            return quota
        assert time.monotonic() < deadline, f"quota {name} used {used}, want {expected}"
        time.sleep(0.1)


def service(name, kind="ClusterIP"):
    return {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": name},
        "spec": {"type": kind, "ports": [{"port": 80}]},
    }


def test_services_are_counted_refused_and_given_back(core_v1, namespace):
    quota = {
        "apiVersion": "v1",
        "kind": "ResourceQuota",
        "metadata": {"name": "svc"},
        "spec": {"hard": {"services": "2", "services.nodeports": "1"}},
    }
    core_v1.create_namespaced_resource_quota(namespace, quota)
    current = wait_for_used(core_v1, namespace, "svc", {"services": "0", "services.nodeports": "0"})
    assert current.status.hard == {"services": "2", "services.nodeports": "1"}

    core_v1.create_namespaced_service(namespace, service("a", "NodePort"))
    with pytest.raises(ApiException) as info:
        core_v1.create_namespaced_service(namespace, service("b", "NodePort"))
    assert info.value.status == 403
    body = json.loads(info.value.body)
    assert body["reason"] == "Forbidden"
    assert body["message"] == (
        'services "b" is forbidden: exceeded quota: svc, requested: services.nodeports=1, '
        "used: services.nodeports=1, limited: services.nodeports=1"
    )
    core_v1.create_namespaced_service(namespace, service("b"))
    assert core_v1.read_namespaced_resource_quota(namespace=namespace, name="svc").status.used == {
        "services": "2",
        "services.nodeports": "1",
    }
    core_v1.delete_namespaced_service("a", namespace)
    wait_for_used(core_v1, namespace, "svc", {"services": "1", "services.nodeports": "0"})
