"""Authorization through the Python client: a user of a --token-auth-file is
refused with kube-apiserver's 403 until an admin's Role and RoleBinding let
the very next request through (the Roles are the test's own); access
reviews and impersonation (Impersonate-User) through the same client."""

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

from conftest import REPO_ROOT, _start_server, _stop_server

TOKEN = "py-jane-token-0123456789"


@pytest.fixture(scope="module")
def clients():
    if os.environ.get("FERROKUBE_TEST_KUBECONFIG"):
        pytest.skip("needs a server started with its own --token-auth-file")
    env_bin = os.environ.get("FERROKUBE_BIN")
    binary = Path(env_bin).resolve() if env_bin else REPO_ROOT / "target" / "debug" / "ferrokube"
    tmp = Path(tempfile.mkdtemp(prefix="ferrokube-pytest-authz-"))
    tokens = tmp / "tokens.csv"
    tokens.write_text(f'{TOKEN},jane,uid-jane,"team"\n')
    proc, log, _, kubeconfig = _start_server(binary, tmp, ["--token-auth-file", str(tokens)])
    try:
        admin = config.new_client_from_config(config_file=str(kubeconfig))
        jane_config = client.Configuration()
        jane_config.host = admin.configuration.host
        jane_config.ssl_ca_cert = str(tmp / "data" / "pki" / "ca.crt")
        jane_config.api_key = {"authorization": f"Bearer {TOKEN}"}
        jane = client.ApiClient(jane_config)
        yield admin, jane
        jane.close()
        admin.close()
    finally:
        _stop_server(proc)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def test_forbidden_until_bound(clients):
    admin, jane = clients
    admin_core = client.CoreV1Api(admin)
    rbac = client.RbacAuthorizationV1Api(admin)
    jane_core = client.CoreV1Api(jane)
    admin_core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="dev")))

    with pytest.raises(ApiException) as refused:
        jane_core.list_namespaced_config_map("dev")
    assert refused.value.status == 403
    status = json.loads(refused.value.body)
    assert status["reason"] == "Forbidden"
    assert status["details"] == {"kind": "configmaps"}
    assert status["message"] == (
        'configmaps is forbidden: User "jane" cannot list resource "configmaps" '
        'in API group "" in the namespace "dev"'
    )

    rbac.create_namespaced_role(
        "dev",
        client.V1Role(
            metadata=client.V1ObjectMeta(name="cm-reader"),
            rules=[client.V1PolicyRule(api_groups=[""], resources=["configmaps"], verbs=["get", "list"])],
        ),
    )
    rbac.create_namespaced_role_binding(
        "dev",
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="team-reads"),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="cm-reader"),
            subjects=[client.RbacV1Subject(api_group="rbac.authorization.k8s.io", kind="Group", name="team")],
        ),
    )
    listed = jane_core.list_namespaced_config_map("dev")
    assert listed.kind == "ConfigMapList"

    with pytest.raises(ApiException) as refused:
        jane_core.create_namespaced_config_map(
            "dev", client.V1ConfigMap(metadata=client.V1ObjectMeta(name="x"))
        )
    assert refused.value.status == 403
    assert json.loads(refused.value.body)["message"] == (
        'configmaps is forbidden: User "jane" cannot create resource "configmaps" '
        'in API group "" in the namespace "dev"'
    )


def test_subject_access_reviews_and_impersonation(clients):
    admin, _ = clients
    admin_core = client.CoreV1Api(admin)
    rbac = client.RbacAuthorizationV1Api(admin)
    authz = client.AuthorizationV1Api(admin)
    admin_core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="py-reviews")))
    rbac.create_namespaced_role(
        "py-reviews",
        client.V1Role(
            metadata=client.V1ObjectMeta(name="pod-reader"),
            rules=[client.V1PolicyRule(api_groups=[""], resources=["pods"], verbs=["get", "list"])],
        ),
    )
    rbac.create_namespaced_role_binding(
        "py-reviews",
        client.V1RoleBinding(
            metadata=client.V1ObjectMeta(name="jane-pods"),
            role_ref=client.V1RoleRef(api_group="rbac.authorization.k8s.io", kind="Role", name="pod-reader"),
            subjects=[client.RbacV1Subject(api_group="rbac.authorization.k8s.io", kind="User", name="jane")],
        ),
    )

    def review(verb):
        return authz.create_subject_access_review(
            client.V1SubjectAccessReview(
                spec=client.V1SubjectAccessReviewSpec(
                    user="jane",
                    resource_attributes=client.V1ResourceAttributes(
                        namespace="py-reviews", verb=verb, resource="pods"
                    ),
                )
            )
        )

    allowed = review("list")
    assert allowed.status.allowed is True
    assert allowed.status.reason == (
        'RBAC: allowed by RoleBinding "jane-pods/py-reviews" of Role "pod-reader" to User "jane"'
    )
    assert review("delete").status.allowed is False

    local = authz.create_namespaced_local_subject_access_review(
        "py-reviews",
        client.V1LocalSubjectAccessReview(
            spec=client.V1SubjectAccessReviewSpec(
                user="jane",
                resource_attributes=client.V1ResourceAttributes(
                    namespace="py-reviews", verb="get", resource="pods"
                ),
            )
        ),
    )
    assert local.status.allowed is True

    # The admin acting as jane (Impersonate-User) may list pods there, not elsewhere.
    as_jane = admin
    as_jane.set_default_header("Impersonate-User", "jane")
    try:
        pods = client.CoreV1Api(as_jane).list_namespaced_pod("py-reviews")
        assert pods.kind == "PodList"
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(as_jane).list_namespaced_pod("default")
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == (
            'pods is forbidden: User "jane" cannot list resource "pods" '
            'in API group "" in the namespace "default"'
        )
    finally:
        del as_jane.default_headers["Impersonate-User"]
