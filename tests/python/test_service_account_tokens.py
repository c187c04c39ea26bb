"""Service-account tokens with the Python client: a TokenRequest token
authenticates its service account (SelfSubjectReview says who), and is
refused once the ServiceAccount is deleted."""

import uuid

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException


def _token_client(api_client, token):
    """A client for the same server and CA with only `token` as credential."""
    base = api_client.configuration
    config = client.Configuration()
    config.host = base.host
    config.ssl_ca_cert = base.ssl_ca_cert
    config.verify_ssl = base.verify_ssl
    config.api_key = {"authorization": token}
    config.api_key_prefix = {"authorization": "Bearer"}
    return client.ApiClient(config)


def _grant(api_client, namespace, name):
    """A ClusterRole and binding of this test's own, so the test holds under RBAC."""
    rbac = client.RbacAuthorizationV1Api(api_client)
    role = f"pytest-sa-{uuid.uuid4().hex[:8]}"
    rbac.create_cluster_role(
        client.V1ClusterRole(
            metadata=client.V1ObjectMeta(name=role),
            rules=[
                client.V1PolicyRule(
                    api_groups=[""], resources=["configmaps"], verbs=["get", "list"]
                ),
                client.V1PolicyRule(
                    api_groups=["authentication.k8s.io"],
                    resources=["selfsubjectreviews"],
                    verbs=["create"],
                ),
            ],
        )
    )
    rbac.create_cluster_role_binding(
        client.V1ClusterRoleBinding(
            metadata=client.V1ObjectMeta(name=role),
            role_ref=client.V1RoleRef(
                api_group="rbac.authorization.k8s.io", kind="ClusterRole", name=role
            ),
            subjects=[
                client.RbacV1Subject(kind="ServiceAccount", name=name, namespace=namespace)
            ],
        )
    )
    return role


def test_token_request_token_authenticates_the_service_account(api_client, core_v1, namespace):
    core_v1.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="py-bot"))
    )
    role = _grant(api_client, namespace, "py-bot")
    answer = core_v1.create_namespaced_service_account_token(
        "py-bot",
        namespace,
        client.AuthenticationV1TokenRequest(
            spec=client.V1TokenRequestSpec(audiences=[], expiration_seconds=900)
        ),
    )
    assert answer.spec.expiration_seconds == 900
    assert answer.status.expiration_timestamp is not None
    token = answer.status.token

    as_bot = _token_client(api_client, token)
    try:
        maps = client.CoreV1Api(as_bot).list_namespaced_config_map(namespace)
        assert maps.kind == "ConfigMapList"
        review = client.AuthenticationV1Api(as_bot).create_self_subject_review(
            client.V1SelfSubjectReview()
        )
        user = review.status.user_info
        assert user.username == f"system:serviceaccount:{namespace}:py-bot"
        assert f"system:serviceaccounts:{namespace}" in user.groups

        core_v1.delete_namespaced_service_account("py-bot", namespace)
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(as_bot).list_namespaced_config_map(namespace)
        assert refused.value.status == 401
    finally:
        as_bot.close()
        rbac = client.RbacAuthorizationV1Api(api_client)
        rbac.delete_cluster_role_binding(role)
        rbac.delete_cluster_role(role)
