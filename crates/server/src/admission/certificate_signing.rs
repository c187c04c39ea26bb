//! CertificateSigning (`plugin/pkg/admission/certificates/signing`
//! `Plugin.Validate`): an update of `certificatesigningrequests/status` that
//! changes `status.certificate` or `status.conditions` needs the `sign` verb
//! on the request's signer (`signers.certificates.k8s.io`, see
//! [`super::signer_authorization`]).

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
        || attributes.subresource != "status"
        || attributes.resource.group != "certificates.k8s.io"
        || attributes.resource.name != "certificatesigningrequests"
    {
        return Ok(());
    }
    let (Some(authorizer), Some(user)) = (authorizer, attributes.user) else {
        return Ok(());
    };
    let Some(old) = attributes.old_object else {
        return Ok(());
    };
    // `Semantic.DeepEqual` and `bytes.Equal`: empty and absent are equal.
    let status = |csr: Option<&Value>, field: &str| {
        csr.and_then(|csr| csr.pointer(&format!("/status/{field}")))
            .filter(|value| !is_empty(value))
            .cloned()
    };
    // Only a change of the certificate or the conditions is checked.
    if status(object, "certificate") == status(Some(old), "certificate")
        && status(object, "conditions") == status(Some(old), "conditions")
    {
        return Ok(());
    }
    let signer_name = old
        .pointer("/spec/signerName")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if is_authorized_for_signer_name(authorizer, user, "sign", signer_name) {
        return Ok(());
    }
    Err(forbidden(
        attributes,
        object,
        &format!(
            "user not permitted to sign requests with signerName {}",
            crate::go::strconv::quote(signer_name)
        ),
    ))
}

fn is_empty(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        _ => false,
    }
}
