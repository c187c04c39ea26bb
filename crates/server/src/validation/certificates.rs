//! certificates.k8s.io/v1 CertificateSigningRequest as
//! `pkg/apis/certificates/validation/validation.go` checks it
//! (`ValidateCertificateSigningRequestCreate` and `…Update` of the main
//! resource): the request a PEM `CERTIFICATE REQUEST` holding a PKCS#10
//! request, usages required, known and unique, the signer name, the
//! expiration, status conditions; an update keeps the leniencies of the old
//! object and may not add, remove or change Approved/Denied conditions nor
//! set the certificate.

use std::collections::BTreeSet;

use base64::Engine as _;
use serde_json::Value;
use x509_parser::prelude::FromDer;

use super::field::{self, child, index};
use crate::status::FieldError;

/// `certificates.LegacyUnknownSignerName`.
const LEGACY_UNKNOWN_SIGNER_NAME: &str = "kubernetes.io/legacy-unknown";

/// `allValidUsages`, sorted as `sets.String.List()` returns them.
const VALID_USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

/// `certificateValidationOptions` that depend on the old object.
#[derive(Debug, Default, Clone, Copy)]
struct Options {
    allow_legacy_signer_name: bool,
    allow_unknown_usages: bool,
    allow_duplicate_usages: bool,
    allow_both_approved_and_denied: bool,
    allow_duplicate_condition_types: bool,
    allow_empty_condition_type: bool,
}

fn usages(object: &Value) -> Vec<&str> {
    object
        .pointer("/spec/usages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|usage| usage.as_str().unwrap_or_default())
        .collect()
}

fn condition_types(object: &Value) -> Vec<&str> {
    object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|condition| field::str_at(condition, "type"))
        .collect()
}

fn has_duplicates(values: &[&str]) -> bool {
    let mut seen = BTreeSet::new();
    values.iter().any(|value| !seen.insert(*value))
}

/// `getValidationOptions(new, old)`.
fn options(old: Option<&Value>) -> Options {
    let Some(old) = old else {
        return Options::default();
    };
    let old_usages = usages(old);
    let old_types = condition_types(old);
    Options {
        allow_legacy_signer_name: old.pointer("/spec/signerName").and_then(Value::as_str)
            == Some(LEGACY_UNKNOWN_SIGNER_NAME),
        allow_unknown_usages: old_usages.iter().any(|usage| !VALID_USAGES.contains(usage)),
        allow_duplicate_usages: has_duplicates(&old_usages),
        allow_both_approved_and_denied: old_types.contains(&"Approved")
            && old_types.contains(&"Denied"),
        allow_duplicate_condition_types: has_duplicates(&old_types),
        allow_empty_condition_type: old_types.contains(&""),
    }
}

/// The first PEM block of `text` (Go's `pem.Decode`): its type and bytes.
fn first_pem_block(text: &str) -> Option<(&str, Vec<u8>)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let type_end = rest.find("-----")?;
    let block_type = &rest[..type_end];
    let body = &rest[type_end + 5..];
    let end = body.find(&format!("-----END {block_type}-----"))?;
    let encoded: String = body[..end]
        .chars()
        .filter(|character| !character.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Some((block_type, bytes))
}

/// `validateCSR`'s error: the PEM block, the PKCS#10 structure, then the
/// signature (`CheckSignature`, see `csr_signature`).
fn request_error(request: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(request);
    match first_pem_block(&text) {
        Some(("CERTIFICATE REQUEST", bytes)) => {
            match x509_parser::certification_request::X509CertificationRequest::from_der(&bytes) {
                Ok((_, parsed)) => super::csr_signature::check(&parsed),
                Err(_) => Some("x509: malformed certificate request".to_string()),
            }
        }
        _ => Some("PEM block type must be CERTIFICATE REQUEST".to_string()),
    }
}

/// The subject organizations of a CSR's `spec.request` (base64 of the PEM
/// text), as `certificates.ParseCSR` reads them; the error text when it does
/// not parse (`failed to parse CSR` callers prefix it).
pub fn request_organizations(request_base64: &str) -> Result<Vec<String>, String> {
    let request = base64::engine::general_purpose::STANDARD
        .decode(request_base64)
        .unwrap_or_default();
    let text = String::from_utf8_lossy(&request);
    let Some(("CERTIFICATE REQUEST", bytes)) = first_pem_block(&text) else {
        return Err("PEM block type must be CERTIFICATE REQUEST".to_string());
    };
    let (_, parsed) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&bytes)
            .map_err(|_| "x509: malformed certificate request".to_string())?;
    Ok(parsed
        .certification_request_info
        .subject
        .iter_organization()
        .filter_map(|organization| organization.as_str().ok())
        .map(str::to_string)
        .collect())
}

/// Go's `%#v` of a `[]byte`.
fn go_bytes(bytes: &[u8]) -> String {
    let items: Vec<String> = bytes.iter().map(|byte| format!("{byte:#x}")).collect();
    format!("[]byte{{{}}}", items.join(", "))
}

/// Core's `ValidateSignerName`.
pub(super) fn signer_name(path: &str, name: &str, errors: &mut Vec<FieldError>) {
    if name.is_empty() {
        errors.push(field::required(path, ""));
        return;
    }
    let segments: Vec<&str> = name.split('/').collect();
    let [domain, signer_path] = segments.as_slice() else {
        errors.push(field::invalid(
            path,
            name,
            "must be a fully qualified domain and path of the form 'example.com/signer-name'",
        ));
        return;
    };
    if domain.len() > 253 {
        errors.push(field::too_long(path, 253));
    }
    let domain_labels: Vec<&str> = domain.split('.').collect();
    for (segment, labels) in [
        (domain, domain_labels.clone()),
        (signer_path, signer_path.split('.').collect()),
    ] {
        if let Some((label, label_errors)) = labels
            .iter()
            .map(|label| (label, crate::names::dns1123_label(label)))
            .find(|(_, label_errors)| !label_errors.is_empty())
        {
            for message in label_errors {
                errors.push(field::invalid(
                    path,
                    segment,
                    format!(
                        "validating label {}: {message}",
                        crate::go::strconv::quote(label)
                    ),
                ));
            }
        }
        if segment == domain && domain_labels.len() < 2 {
            errors.push(field::invalid(
                path,
                domain,
                "should be a domain with at least two segments separated by dots",
            ));
        }
    }
    let max = 253 + (253 + 63 + 1) + 1;
    if name.len() > max {
        errors.push(field::too_long(path, max));
    }
}

/// `validateCertificateSigningRequest`.
fn validate(object: &Value, options: Options) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let request = base64::engine::general_purpose::STANDARD
        .decode(field::str_at(spec, "request"))
        .unwrap_or_default();
    if let Some(error) = request_error(&request) {
        errors.push(field::invalid_rendered(
            "spec.request",
            &go_bytes(&request),
            error,
        ));
    }
    let list = usages(object);
    if list.is_empty() {
        errors.push(field::required("spec.usages", ""));
    }
    if !options.allow_unknown_usages {
        for (position, usage) in list.iter().enumerate() {
            if !VALID_USAGES.contains(usage) {
                errors.push(field::not_supported(
                    &index("spec.usages", position),
                    usage,
                    &VALID_USAGES,
                ));
            }
        }
    }
    if !options.allow_duplicate_usages {
        let mut seen = BTreeSet::new();
        for (position, usage) in list.iter().enumerate() {
            if !seen.insert(*usage) {
                errors.push(field::duplicate(&index("spec.usages", position), usage));
            }
        }
    }
    let signer = field::str_at(spec, "signerName");
    if !options.allow_legacy_signer_name && signer == LEGACY_UNKNOWN_SIGNER_NAME {
        errors.push(field::invalid(
            "spec.signerName",
            signer,
            "the legacy signerName is not allowed via this API version",
        ));
    } else {
        signer_name("spec.signerName", signer, &mut errors);
    }
    if let Some(seconds) = field::int_at(spec, "expirationSeconds").filter(|seconds| *seconds < 600)
    {
        errors.push(field::invalid_number(
            "spec.expirationSeconds",
            seconds,
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    conditions(object, options, &mut errors);
    errors
}

/// `validateConditions`.
fn conditions(object: &Value, options: Options, errors: &mut Vec<FieldError>) {
    let list = object
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut seen = BTreeSet::new();
    let (mut approved, mut denied) = (false, false);
    for (position, condition) in list.iter().enumerate() {
        let path = index("status.conditions", position);
        let kind = field::str_at(condition, "type");
        if !options.allow_empty_condition_type && kind.is_empty() {
            errors.push(field::required(&child(&path, "type"), ""));
        }
        let status = field::str_at(condition, "status");
        let true_only = matches!(kind, "Approved" | "Denied" | "Failed");
        let allowed: &[&str] = if true_only {
            &["True"]
        } else {
            &["False", "True", "Unknown"]
        };
        if status.is_empty() {
            errors.push(field::required(&child(&path, "status"), ""));
        } else if !allowed.contains(&status) {
            errors.push(field::not_supported(
                &child(&path, "status"),
                status,
                allowed,
            ));
        }
        if !options.allow_both_approved_and_denied {
            let conflict = match kind {
                "Approved" => {
                    approved = true;
                    denied
                }
                "Denied" => {
                    denied = true;
                    approved
                }
                _ => false,
            };
            if conflict {
                errors.push(field::invalid(
                    &child(&path, "type"),
                    kind,
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !options.allow_duplicate_condition_types && !seen.insert(kind) {
            errors.push(field::duplicate(&child(&path, "type"), kind));
        }
    }
}

/// `ValidateCertificateSigningRequestCreate`.
pub fn certificate_signing_request(object: &Value) -> Vec<FieldError> {
    validate(object, options(None))
}

/// Which update path a CSR is written through: what each may change
/// (`certificateValidationOptions.allowSettingApprovalConditions`,
/// `allowSettingCertificate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdatePath {
    /// The main resource (`ValidateCertificateSigningRequestUpdate`).
    Main,
    /// `/status` (`ValidateCertificateSigningRequestStatusUpdate`).
    Status,
    /// `/approval` (`ValidateCertificateSigningRequestApprovalUpdate`).
    Approval,
}

/// `ValidateCertificateSigningRequestUpdate` (the main resource: approval
/// conditions and the certificate are for the subresources).
pub fn certificate_signing_request_update(object: &Value, old: &Value) -> Vec<FieldError> {
    certificate_signing_request_update_through(object, old, UpdatePath::Main)
}

/// `validateCertificateSigningRequestUpdate` through `path`.
pub fn certificate_signing_request_update_through(
    object: &Value,
    old: &Value,
    path: UpdatePath,
) -> Vec<FieldError> {
    let mut errors = validate(object, options(Some(old)));
    let certificate = |value: &Value| {
        value
            .pointer("/status/certificate")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let (new_certificate, old_certificate) = (certificate(object), certificate(old));
    // `allowArbitraryCertificate`: an unchanged certificate, or an old one
    // that was already invalid.
    let arbitrary =
        new_certificate == old_certificate || certificate_error(&old_certificate).is_some();
    if !arbitrary {
        if let Some(error) = certificate_error(&new_certificate) {
            errors.push(field::invalid(
                "status.certificate",
                "<certificate data>",
                error,
            ));
        }
    }
    let of_type = |value: &Value, kind: &str| -> Vec<Value> {
        value
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter(|condition| field::str_at(condition, "type") == kind)
            .cloned()
            .collect()
    };
    for kind in ["Approved", "Denied", "Failed"] {
        if of_type(object, kind).len() < of_type(old, kind).len() {
            errors.push(field::forbidden(
                "status.conditions",
                format!(
                    "updates may not remove a condition of type {}",
                    crate::go::strconv::quote(kind)
                ),
            ));
        }
    }
    if path != UpdatePath::Approval {
        for kind in ["Approved", "Denied"] {
            let (new, before) = (of_type(object, kind), of_type(old, kind));
            if new.len() > before.len() {
                errors.push(field::forbidden(
                    "status.conditions",
                    format!(
                        "updates may not add a condition of type {}",
                        crate::go::strconv::quote(kind)
                    ),
                ));
            }
        }
    }
    if new_certificate != old_certificate {
        if path != UpdatePath::Status {
            errors.push(field::forbidden(
                "status.certificate",
                "updates may not set certificate content",
            ));
        } else if !old_certificate.is_empty() {
            errors.push(field::forbidden(
                "status.certificate",
                "updates may not modify existing certificate content",
            ));
        }
    }
    errors
}

/// `validateCertificate` of `status.certificate` (base64 of PEM text): one
/// or more `CERTIFICATE` blocks without headers, each holding certificates.
fn certificate_error(certificate_base64: &str) -> Option<String> {
    let pem = base64::engine::general_purpose::STANDARD
        .decode(certificate_base64)
        .unwrap_or_default();
    if pem.is_empty() {
        return None;
    }
    let text = String::from_utf8_lossy(&pem);
    let mut rest: &str = &text;
    let mut blocks = 0;
    while let Some((block_type, headers, bytes, after)) = next_pem_block(rest) {
        if block_type != "CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {}",
                crate::go::strconv::quote(block_type)
            ));
        }
        if headers {
            return Some("no PEM block headers are permitted".to_string());
        }
        blocks += 1;
        if x509_parser::parse_x509_certificate(&bytes).is_err() {
            return Some("x509: malformed certificate".to_string());
        }
        rest = after;
    }
    (blocks == 0).then(|| "must contain at least one CERTIFICATE PEM block".to_string())
}

/// The next PEM block of `text` (`pem.Decode`): its type, whether it has
/// headers, its bytes and the text after it.
fn next_pem_block(text: &str) -> Option<(&str, bool, Vec<u8>, &str)> {
    let start = text.find("-----BEGIN ")?;
    let rest = &text[start + "-----BEGIN ".len()..];
    let type_end = rest.find("-----")?;
    let block_type = &rest[..type_end];
    let body = &rest[type_end + 5..];
    let end_marker = format!("-----END {block_type}-----");
    let end = body.find(&end_marker)?;
    let headers = body[..end].lines().any(|line| line.contains(':'));
    let encoded: String = body[..end]
        .lines()
        .filter(|line| !line.contains(':'))
        .flat_map(str::chars)
        .filter(|character| !character.is_ascii_whitespace())
        .collect();
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    Some((block_type, headers, bytes, &body[end + end_marker.len()..]))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn pem_request() -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let params = rcgen::CertificateParams::new(vec!["node.example.com".to_string()]).unwrap();
        params.serialize_request(&key).unwrap().pem().unwrap()
    }

    fn csr(spec: Value) -> Value {
        json!({"metadata": {"name": "csr"}, "spec": spec})
    }

    /// Cases from kube's `TestValidateCertificateSigningRequestCreate` and `…Update`.
    #[test]
    fn certificate_signing_requests() {
        let request = base64::engine::general_purpose::STANDARD.encode(pem_request());
        let good = json!({"request": request, "usages": ["client auth", "digital signature"], "signerName": "example.com/signer"});
        assert_eq!(
            texts(&certificate_signing_request(&csr(good.clone()))),
            Vec::<String>::new()
        );
        let with = |patch: Value| {
            let mut spec = good.clone();
            for (name, value) in patch.as_object().unwrap() {
                spec[name] = value.clone();
            }
            csr(spec)
        };
        let cases = [
            (json!({"usages": []}), "spec.usages: Required value".to_string()),
            (
                json!({"usages": ["client auth", "client auth"]}),
                "spec.usages[1]: Duplicate value: \"client auth\"".to_string(),
            ),
            (
                json!({"signerName": "kubernetes.io/legacy-unknown"}),
                "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version".to_string(),
            ),
            (
                json!({"signerName": "signer"}),
                "spec.signerName: Invalid value: \"signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'".to_string(),
            ),
            (json!({"signerName": ""}), "spec.signerName: Required value".to_string()),
            (
                json!({"signerName": "example/signer"}),
                "spec.signerName: Invalid value: \"example\": should be a domain with at least two segments separated by dots".to_string(),
            ),
            (
                json!({"expirationSeconds": 599}),
                "spec.expirationSeconds: Invalid value: 599: may not specify a duration less than 600 seconds (10 minutes)".to_string(),
            ),
            (
                json!({"request": base64::engine::general_purpose::STANDARD.encode("hi")}),
                "spec.request: Invalid value: []byte{0x68, 0x69}: PEM block type must be CERTIFICATE REQUEST".to_string(),
            ),
        ];
        for (patch, expected) in cases {
            assert_eq!(
                texts(&certificate_signing_request(&with(patch.clone()))),
                vec![expected],
                "{patch}"
            );
        }
        let unknown = with(json!({"usages": ["telepathy"]}));
        assert_eq!(certificate_signing_request(&unknown).len(), 1);
        assert!(texts(&certificate_signing_request(&unknown))[0].starts_with("spec.usages[0]: Unsupported value: \"telepathy\": supported values: \"any\", \"cert sign\""));
        // An update keeps the old object's unknown usage.
        assert!(certificate_signing_request_update(&unknown, &unknown).is_empty());
        let mut approved = csr(good.clone());
        approved["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
        assert_eq!(
            texts(&certificate_signing_request_update(&approved, &csr(good.clone()))),
            vec!["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
        );
        assert_eq!(
            texts(&certificate_signing_request_update(&csr(good), &approved)),
            vec!["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
        );
    }

    fn certificate_pem(organization: &str) -> String {
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::OrganizationName, organization);
        params.self_signed(&key).unwrap().pem()
    }

    /// Cases from kube's `TestValidateCertificateSigningRequestUpdate`
    /// for the `/status` and `/approval` paths.
    #[test]
    fn status_and_approval_paths() {
        let request = base64::engine::general_purpose::STANDARD.encode(pem_request());
        let good = csr(
            json!({"request": request, "usages": ["client auth"], "signerName": "example.com/signer"}),
        );
        let mut approved = good.clone();
        approved["status"] = json!({"conditions": [{"type": "Approved", "status": "True"}]});
        // Approval may add Approved, never remove it.
        assert!(
            certificate_signing_request_update_through(&approved, &good, UpdatePath::Approval)
                .is_empty()
        );
        assert_eq!(
            texts(&certificate_signing_request_update_through(
                &good,
                &approved,
                UpdatePath::Approval
            )),
            vec!["status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""]
        );
        // Status may set a valid certificate once, not change it, not set garbage.
        let encode = |text: &str| base64::engine::general_purpose::STANDARD.encode(text);
        let mut signed = approved.clone();
        signed["status"]["certificate"] = json!(encode(&certificate_pem("a")));
        assert!(
            certificate_signing_request_update_through(&signed, &approved, UpdatePath::Status)
                .is_empty()
        );
        assert_eq!(
            texts(&certificate_signing_request_update_through(
                &signed,
                &approved,
                UpdatePath::Approval
            )),
            vec!["status.certificate: Forbidden: updates may not set certificate content"]
        );
        let mut resigned = signed.clone();
        resigned["status"]["certificate"] = json!(encode(&certificate_pem("b")));
        assert_eq!(
            texts(&certificate_signing_request_update_through(
                &resigned,
                &signed,
                UpdatePath::Status
            )),
            vec!["status.certificate: Forbidden: updates may not modify existing certificate content"]
        );
        let mut garbage = approved.clone();
        garbage["status"]["certificate"] = json!(encode("not a certificate"));
        assert_eq!(
            texts(&certificate_signing_request_update_through(
                &garbage,
                &approved,
                UpdatePath::Status
            )),
            vec!["status.certificate: Invalid value: \"<certificate data>\": must contain at least one CERTIFICATE PEM block"]
        );
        let mut key_block = approved.clone();
        key_block["status"]["certificate"] = json!(encode(
            "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
        ));
        assert_eq!(
            texts(&certificate_signing_request_update_through(
                &key_block,
                &approved,
                UpdatePath::Status
            )),
            vec!["status.certificate: Invalid value: \"<certificate data>\": only CERTIFICATE PEM blocks are allowed, found \"PRIVATE KEY\""]
        );
    }
}
