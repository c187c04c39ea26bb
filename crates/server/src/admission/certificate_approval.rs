//! CertificateApproval (`plugin/pkg/admission/certificates/approval`
//! `Plugin.Validate`): an update of `certificatesigningrequests/approval`
//! needs the `approve` verb on the request's signer
//! (`signers.certificates.k8s.io`, see [`super::signer_authorization`]).

use serde_json::Value;

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use super::signer_authorization::is_authorized_for_signer_name;
use crate::authz::Authorizer;
use crate::status::Result;

/// `Plugin.Validate`.
pub fn validate(
    authorizer: Option<&Authorizer>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    if attributes.operation != Operation::Update
        || attributes.subresource != "approval"
        || attributes.resource.group != "certificates.k8s.io"
        || attributes.resource.name != "certificatesigningrequests"
    {
        return Ok(());
    }
    // Writes the server makes itself carry no user and are not checked.
    let (Some(authorizer), Some(user)) = (authorizer, attributes.user) else {
        return Ok(());
    };
    let signer_name = object
        .and_then(|csr| csr.pointer("/spec/signerName"))
        .and_then(Value::as_str)
        .unwrap_or_default();
    if is_authorized_for_signer_name(authorizer, user, "approve", signer_name) {
        return Ok(());
    }
    Err(forbidden(
        attributes,
        object,
        &format!(
            "user not permitted to approve requests with signerName {}",
            crate::go::strconv::quote(signer_name)
        ),
    ))
}
