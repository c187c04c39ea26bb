"""Service-account tokens with the Python client: a TokenRequest token
authenticates its service account (SelfSubjectReview says who), and is
refused once the ServiceAccount is deleted; a watch with such a token is
refused until a RoleBinding names the ServiceAccount."""

import base64
import datetime
import json
import time
import uuid

import pytest
from kubernetes import client, watch
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


def test_service_account_watch_opens_only_once_a_role_binding_names_it(api_client, core_v1, namespace):
    """A TokenRequest token's watch is refused with kube's 403 until a
    RoleBinding names the ServiceAccount, then streams what is there."""
    core_v1.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="py-watcher"))
    )
    token = core_v1.create_namespaced_service_account_token(
        "py-watcher",
        namespace,
        client.AuthenticationV1TokenRequest(spec=client.V1TokenRequestSpec(audiences=[])),
    ).status.token
    core_v1.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name="py-watched"))
    )
    as_watcher = _token_client(api_client, token)
    try:
        watcher_core = client.CoreV1Api(as_watcher)
        with pytest.raises(ApiException) as refused:
            next(watch.Watch().stream(watcher_core.list_namespaced_config_map, namespace))
        assert refused.value.status == 403
        assert json.loads(refused.value.body)["message"] == (
            f'configmaps is forbidden: User "system:serviceaccount:{namespace}:py-watcher" '
            f'cannot watch resource "configmaps" in API group "" in the namespace "{namespace}"'
        )

        rbac = client.RbacAuthorizationV1Api(api_client)
        rbac.create_namespaced_role(
            namespace,
            client.V1Role(
                metadata=client.V1ObjectMeta(name="py-watcher"),
                rules=[
                    client.V1PolicyRule(
                        api_groups=[""], resources=["configmaps"], verbs=["list", "watch"]
                    )
                ],
            ),
        )
        rbac.create_namespaced_role_binding(
            namespace,
            client.V1RoleBinding(
                metadata=client.V1ObjectMeta(name="py-watcher"),
                role_ref=client.V1RoleRef(
                    api_group="rbac.authorization.k8s.io", kind="Role", name="py-watcher"
                ),
                subjects=[
                    client.RbacV1Subject(kind="ServiceAccount", name="py-watcher", namespace=namespace)
                ],
            ),
        )
        # resourceVersion "0": the watch starts with the objects there are.
        stream = watch.Watch()
        seen = False
        for event in stream.stream(
            watcher_core.list_namespaced_config_map,
            namespace,
            resource_version="0",
            timeout_seconds=30,
        ):
            if event["type"] == "ADDED" and event["object"].metadata.name == "py-watched":
                seen = True
                stream.stop()
        assert seen
    finally:
        as_watcher.close()


LAST_USED = "kubernetes.io/legacy-token-last-used"
INVALID_SINCE = "kubernetes.io/legacy-token-invalid-since"


def _utc_today():
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d")


def test_legacy_secret_token_use_is_tracked_on_its_secret(api_client, core_v1, namespace):
    """kube 1.34's legacy token validator: a Secret token that authenticates
    labels its Secret with today's UTC date; one marked invalid by the legacy
    token cleaner is refused (401) until the mark is removed."""
    core_v1.create_namespaced_service_account(
        namespace, client.V1ServiceAccount(metadata=client.V1ObjectMeta(name="py-legacy"))
    )
    role = _grant(api_client, namespace, "py-legacy")
    core_v1.create_namespaced_secret(
        namespace,
        client.V1Secret(
            metadata=client.V1ObjectMeta(
                name="py-legacy-token",
                annotations={"kubernetes.io/service-account.name": "py-legacy"},
            ),
            type="kubernetes.io/service-account-token",
        ),
    )
    token = None
    for _ in range(200):
        data = core_v1.read_namespaced_secret("py-legacy-token", namespace).data or {}
        if "token" in data:
            token = base64.b64decode(data["token"]).decode()
            break
        time.sleep(0.05)
    assert token, "the serviceaccount-token controller never filled the Secret"
    labels = core_v1.read_namespaced_secret("py-legacy-token", namespace).metadata.labels or {}
    assert LAST_USED not in labels

    as_legacy = _token_client(api_client, token)
    try:
        before = _utc_today()
        client.CoreV1Api(as_legacy).list_namespaced_config_map(namespace)
        after = _utc_today()
        labels = core_v1.read_namespaced_secret("py-legacy-token", namespace).metadata.labels
        assert labels[LAST_USED] in (before, after)

        core_v1.patch_namespaced_secret(
            "py-legacy-token", namespace, {"metadata": {"labels": {INVALID_SINCE: "2025-01-01"}}}
        )
        with pytest.raises(ApiException) as refused:
            client.CoreV1Api(as_legacy).list_namespaced_config_map(namespace)
        assert refused.value.status == 401
        core_v1.patch_namespaced_secret(
            "py-legacy-token", namespace, {"metadata": {"labels": {INVALID_SINCE: None}}}
        )
        maps = client.CoreV1Api(as_legacy).list_namespaced_config_map(namespace)
        assert maps.kind == "ConfigMapList"
    finally:
        as_legacy.close()
        rbac = client.RbacAuthorizationV1Api(api_client)
        rbac.delete_cluster_role_binding(role)
        rbac.delete_cluster_role(role)
