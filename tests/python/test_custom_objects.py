"""Custom resources through the official Python client: a CRD created with
`ApiextensionsV1Api` becomes Established, and `CustomObjectsApi` creates,
lists, patches (merge and the status subresource), scales and deletes its
objects; deleting the CRD removes them. Expectations are kube-apiserver
1.34's answers.
"""

import time
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException


def wait_for(what, check, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def condition(crd, kind):
    for c in (crd.status.conditions or []) if crd.status else []:
        if c.type == kind:
            return c
    return None


@pytest.fixture
def crd(api_client):
    ext = client.ApiextensionsV1Api(api_client)
    group = f"py{uuid.uuid4().hex[:8]}.example.com"
    body = {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"crontabs.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                    "subresources": {
                        "status": {},
                        "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
                    },
                }
            ],
        },
    }
    created = ext.create_custom_resource_definition(body)
    assert created.spec.names.singular == "crontab"
    assert created.status.stored_versions == ["v1"]
    established = wait_for(
        "Established",
        lambda: (lambda c: c if condition(c, "Established") and condition(c, "Established").status == "True" else None)(
            ext.read_custom_resource_definition(f"crontabs.{group}")
        ),
    )
    assert condition(established, "NamesAccepted").reason == "NoConflicts"
    yield ext, group
    try:
        ext.delete_custom_resource_definition(f"crontabs.{group}")
    except ApiException as e:
        if e.status != 404:
            raise


def test_custom_objects_api(api_client, crd, namespace):
    ext, group = crd
    objects = client.CustomObjectsApi(api_client)
    args = (group, "v1", namespace, "crontabs")
    created = objects.create_namespaced_custom_object(
        *args,
        {
            "apiVersion": f"{group}/v1",
            "kind": "CronTab",
            "metadata": {"name": "every-minute"},
            "spec": {"cronSpec": "* * * * *", "replicas": 1},
        },
    )
    assert created["spec"]["cronSpec"] == "* * * * *"
    assert created["metadata"]["generation"] == 1

    listed = objects.list_namespaced_custom_object(*args)
    assert listed["kind"] == "CronTabList"
    assert [item["metadata"]["name"] for item in listed["items"]] == ["every-minute"]

    patched = objects.patch_namespaced_custom_object(*args, "every-minute", {"spec": {"cronSpec": "*/5 * * * *"}})
    assert patched["spec"]["cronSpec"] == "*/5 * * * *"
    assert patched["metadata"]["generation"] == 2

    status = objects.patch_namespaced_custom_object_status(*args, "every-minute", {"status": {"replicas": 1}})
    assert status["status"] == {"replicas": 1}
    assert status["metadata"]["generation"] == 2

    scale = objects.patch_namespaced_custom_object_scale(*args, "every-minute", {"spec": {"replicas": 4}})
    assert scale["kind"] == "Scale"
    assert scale["spec"]["replicas"] == 4
    assert objects.get_namespaced_custom_object(*args, "every-minute")["spec"]["replicas"] == 4

    with pytest.raises(ApiException) as info:
        objects.get_namespaced_custom_object(*args, "missing")
    assert info.value.status == 404

    objects.delete_namespaced_custom_object(*args, "every-minute")
    assert objects.list_namespaced_custom_object(*args)["items"] == []


def test_deleting_the_crd_deletes_its_objects(api_client, crd, namespace):
    ext, group = crd
    objects = client.CustomObjectsApi(api_client)
    args = (group, "v1", namespace, "crontabs")
    for name in ["a", "b"]:
        objects.create_namespaced_custom_object(
            *args, {"apiVersion": f"{group}/v1", "kind": "CronTab", "metadata": {"name": name}}
        )
    ext.delete_custom_resource_definition(f"crontabs.{group}")

    def gone():
        try:
            ext.read_custom_resource_definition(f"crontabs.{group}")
            return False
        except ApiException as e:
            return e.status == 404

    wait_for("the CRD to go", gone)
    with pytest.raises(ApiException) as info:
        objects.list_namespaced_custom_object(*args)
    assert info.value.status == 404
