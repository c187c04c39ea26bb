//! `IsAuthorizedForSignerName` (`plugin/pkg/admission/certificates/util.go`),
//! shared by CertificateApproval and CertificateSigning: the user may
//! `verb` the `signers` resource of `certificates.k8s.io` named after the
//! signer, or, failing that, named `<domain>/*` for the signer's domain.

use std::borrow::Cow;

use crate::authn::UserInfo;
use crate::authz::{Attributes, Authorizer};

/// Whether `user` may `verb` (`approve`, `sign`) requests for `signer_name`.
pub fn is_authorized_for_signer_name(
    authorizer: &Authorizer,
    user: &UserInfo,
    verb: &str,
    signer_name: &str,
) -> bool {
    if authorizer
        .authorize_request(&signer_attributes(user, verb, signer_name.to_string()))
        .allowed()
    {
        return true;
    }
    // `buildWildcardAttributes`: the part before the first `/`.
    let domain = signer_name.split('/').next().unwrap_or_default();
    authorizer
        .authorize_request(&signer_attributes(user, verb, format!("{domain}/*")))
        .allowed()
}

/// `buildAttributes`.
fn signer_attributes<'a>(user: &'a UserInfo, verb: &'a str, name: String) -> Attributes<'a> {
    Attributes {
        verb,
        resource_request: true,
        api_group: "certificates.k8s.io",
        api_version: "*",
        resource: "signers",
        name: Cow::Owned(name),
        ..Attributes::non_resource(user, verb, "")
    }
}
