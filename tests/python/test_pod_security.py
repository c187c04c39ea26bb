"""PodSecurity admission through the official Python client: a namespace
labelled `pod-security.kubernetes.io/enforce=restricted` refuses a privileged
pod with kube's 403 and message, a `warn=baseline` namespace admits it with
kube's `Warning` header, and a bad label value is refused with 422.
"""

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException


def privileged_pod(name):
    return client.V1Pod(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1PodSpec(
            containers=[
                client.V1Container(
                    name="c",
                    image="nginx",
                    security_context=client.V1SecurityContext(privileged=True),
                )
            ]
        ),
    )


def label(core_v1, namespace, labels):
    core_v1.patch_namespace(namespace, {"metadata": {"labels": labels}})


def test_enforce_refuses_a_privileged_pod(core_v1, namespace):
    label(core_v1, namespace, {"pod-security.kubernetes.io/enforce": "baseline"})
    with pytest.raises(ApiException) as refused:
        core_v1.create_namespaced_pod(namespace, privileged_pod("priv"))
    assert refused.value.status == 403
    status = json.loads(refused.value.body)
    assert status["reason"] == "Forbidden"
    assert status["message"] == (
        'pods "priv" is forbidden: violates PodSecurity "baseline:latest": '
        'privileged (container "c" must not set securityContext.privileged=true)'
    )
    assert status["details"] == {"name": "priv", "kind": "pods"}


def test_warn_admits_with_kubes_warning_header(core_v1, namespace):
    label(core_v1, namespace, {"pod-security.kubernetes.io/warn": "baseline"})
    _, code, headers = core_v1.create_namespaced_pod_with_http_info(namespace, privileged_pod("priv"))
    assert code == 201
    assert headers["Warning"] == (
        '299 - "would violate PodSecurity \\"baseline:latest\\": privileged '
        '(container \\"c\\" must not set securityContext.privileged=true)"'
    )


def test_bad_label_values_are_invalid(core_v1, namespace):
    with pytest.raises(ApiException) as refused:
        label(core_v1, namespace, {"pod-security.kubernetes.io/enforce-version": "v1.x"})
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["message"] == (
        f'Namespace "{namespace}" is invalid: metadata.labels[pod-security.kubernetes.io/enforce-version]: '
        'Invalid value: "v1.x": must be "latest" or "v1.x"'
    )
