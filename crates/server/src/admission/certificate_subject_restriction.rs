//! CertificateSubjectRestriction
//! (`plugin/pkg/admission/certificates/subjectrestriction`
//! `Plugin.Validate`): a CertificateSigningRequest for the
//! `kubernetes.io/kube-apiserver-client` signer may not ask for the
//! `system:masters` organization.

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::status::Result;

/// `certificatesv1beta1.KubeAPIServerClientSignerName`.
const KUBE_APISERVER_CLIENT_SIGNER: &str = "kubernetes.io/kube-apiserver-client";

/// `Plugin.Validate`.
pub fn validate(attributes: &Attributes<'_>, object: Option<&Value>) -> Result<()> {
    if attributes.operation != Operation::Create
        || attributes.resource.group != "certificates.k8s.io"
        || attributes.resource.name != "certificatesigningrequests"
        || !attributes.subresource.is_empty()
    {
        return Ok(());
    }
    let Some(csr) = object else {
        return Ok(());
    };
    let signer_name = csr
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if signer_name != KUBE_APISERVER_CLIENT_SIGNER {
        return Ok(());
    }
    let request = csr
        .pointer("/spec/request")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let organizations = crate::validation::certificates::request_organizations(request)
        .map_err(|error| forbidden(attributes, object, &format!("failed to parse CSR: {error}")))?;
    if organizations
        .iter()
        .any(|organization| organization == crate::authn::SYSTEM_MASTERS)
    {
        return Err(forbidden(
            attributes,
            object,
            &format!("use of {signer_name} signer with system:masters group is not allowed"),
        ));
    }
    Ok(())
}
