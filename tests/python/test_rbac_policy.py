"""The bootstrap RBAC policy through the official Python client: the typed
RbacAuthorizationV1Api decodes the default objects, admin/edit/view carry
kube's aggregation rules and get their rules from the aggregation
controller, and a role labelled aggregate-to-edit joins edit and admin.
Expectations are kube-apiserver 1.34's.
"""

import time
import uuid

from kubernetes import client

DEADLINE_S = 30


def eventually(what, probe):
    """Polls `probe` until it returns a true value; no timing is asserted."""
    deadline = time.monotonic() + DEADLINE_S
    while True:
        found = probe()
        if found:
            return found
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_S}s"
        time.sleep(0.05)


def resources_of(role):
    return {r for rule in (role.rules or []) for r in (rule.resources or [])}


def test_default_objects_decode_and_aggregate(api_client):
    rbac = client.RbacAuthorizationV1Api(api_client)
    # The server may still be running its post-start hook, and the aggregation
    # controller fills admin's rules in steps: wait until they are complete.
    wanted = {"localsubjectaccessreviews", "rolebindings", "pods/log"}
    admin = eventually(
        "admin aggregated",
        lambda: (lambda role: role if wanted <= resources_of(role) else None)(
            rbac.read_cluster_role("admin")
        ),
    )
    assert admin.metadata.labels == {"kubernetes.io/bootstrapping": "rbac-defaults"}
    assert admin.metadata.annotations == {"rbac.authorization.kubernetes.io/autoupdate": "true"}
    assert [s.match_labels for s in admin.aggregation_rule.cluster_role_selectors] == [
        {"rbac.authorization.k8s.io/aggregate-to-admin": "true"}
    ]
    assert wanted <= resources_of(admin)

    binding = rbac.read_cluster_role_binding("cluster-admin")
    assert binding.role_ref.name == "cluster-admin"
    assert [(s.kind, s.name) for s in binding.subjects] == [("Group", "system:masters")]
    readers = rbac.read_namespaced_role_binding(
        "system::extension-apiserver-authentication-reader", "kube-system"
    )
    assert readers.role_ref.kind == "Role"
    assert [s.name for s in readers.subjects] == ["system:kube-controller-manager", "system:kube-scheduler"]

    name = f"py-gadget-editor-{uuid.uuid4().hex[:6]}"
    resource = f"gadgets-{uuid.uuid4().hex[:6]}"
    rbac.create_cluster_role(
        client.V1ClusterRole(
            metadata=client.V1ObjectMeta(
                name=name, labels={"rbac.authorization.k8s.io/aggregate-to-edit": "true"}
            ),
            rules=[client.V1PolicyRule(api_groups=["example.com"], resources=[resource], verbs=["*"])],
        )
    )
    try:
        for aggregated in ("edit", "admin"):
            eventually(
                f"{resource} in {aggregated}",
                lambda: resource in resources_of(rbac.read_cluster_role(aggregated)),
            )
        assert resource not in resources_of(rbac.read_cluster_role("view"))
    finally:
        rbac.delete_cluster_role(name)
