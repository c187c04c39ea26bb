"""CertificateSigningRequest `/approval` and `/status` through the Python
client (`replace_certificate_signing_request_approval`, `patch_…_status`),
as kube-apiserver 1.34's strategies and the CertificateApproval,
CertificateSigning and CertificateSubjectRestriction admission plugins
answer them."""

import base64
import json
import uuid

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

# A P-256 request for CN=python-user, O=dev (made once with openssl; a CSR
# does not expire).
REQUEST = """-----BEGIN CERTIFICATE REQUEST-----
MIHfMIGGAgEAMCQxFDASBgNVBAMMC3B5dGhvbi11c2VyMQwwCgYDVQQKDANkZXYw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAARJRBO3yX88VIVitvmsIQ5wkfA6ig6d
cycnibFKjgHKLCnNkJNL0Zg/aX6PpLH3uFw3T922MpFoa5LybDU//N+qoAAwCgYI
KoZIzj0EAwIDSAAwRQIhAOIehB1L3FkQEhIKJNyouXBPK80ikS8MkyOTXKLd/g8V
AiABhFT/rxzcLkRN1BZJnjbvS++p4XhEz2suFG+tO2n9WA==
-----END CERTIFICATE REQUEST-----
"""


@pytest.fixture
def certificates_v1(api_client):
    return client.CertificatesV1Api(api_client)


def test_approval_and_status_follow_kubes_strategies(certificates_v1):
    name = f"py-csr-{uuid.uuid4().hex[:8]}"
    body = client.V1CertificateSigningRequest(
        metadata=client.V1ObjectMeta(name=name),
        spec=client.V1CertificateSigningRequestSpec(
            request=base64.b64encode(REQUEST.encode()).decode(),
            signer_name="example.com/python",
            usages=["client auth"],
            username="someone-else",
        ),
    )
    created = certificates_v1.create_certificate_signing_request(body)
    # The requester is whoever created it, not what the body said.
    assert created.spec.username != "someone-else"
    assert created.status.conditions is None
    try:
        created.status.conditions = [
            client.V1CertificateSigningRequestCondition(
                type="Approved", status="True", reason="PythonApprove", message="ok"
            )
        ]
        approved = certificates_v1.replace_certificate_signing_request_approval(name, created)
        [condition] = approved.status.conditions
        assert (condition.type, condition.reason) == ("Approved", "PythonApprove")
        assert condition.last_update_time is not None
        assert condition.last_transition_time is not None

        # The main resource cannot approve or deny.
        approved.status.conditions.append(
            client.V1CertificateSigningRequestCondition(type="Denied", status="True")
        )
        unchanged = certificates_v1.replace_certificate_signing_request(name, approved)
        assert [c.type for c in unchanged.status.conditions] == ["Approved"]

        # /status may not remove the approval.
        with pytest.raises(ApiException) as info:
            certificates_v1.patch_certificate_signing_request_status(
                name, [{"op": "replace", "path": "/status/conditions", "value": []}]
            )
        assert info.value.status == 422
        status = json.loads(info.value.body)
        assert status["details"]["causes"] == [
            {
                "reason": "FieldValueForbidden",
                "message": 'Forbidden: updates may not remove a condition of type "Approved"',
                "field": "status.conditions",
            }
        ]
    finally:
        certificates_v1.delete_certificate_signing_request(name)
