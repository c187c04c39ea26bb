//! The subject alternative names of the serving certificate: the wanted ones
//! and those an existing certificate carries.

use std::collections::BTreeSet;
use std::net::IpAddr;

use rcgen::SanType;
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;

use super::{PkiError, DEFAULT_SANS};

/// One name of a serving certificate.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum SanName {
    Ip(IpAddr),
    /// Lower case: DNS names compare case-insensitively.
    Dns(String),
}

impl SanName {
    pub(super) fn parse(raw: &str) -> Result<Option<SanName>, PkiError> {
        let s = raw.trim();
        if s.is_empty() {
            return Ok(None);
        }
        let unbracketed = s
            .strip_prefix('[')
            .and_then(|rest| rest.strip_suffix(']'))
            .unwrap_or(s);
        if let Ok(ip) = unbracketed.parse::<IpAddr>() {
            return Ok(Some(SanName::Ip(ip)));
        }
        let invalid = |reason: &str| PkiError::InvalidSan {
            san: raw.to_string(),
            reason: reason.to_string(),
        };
        if !s.is_ascii() {
            return Err(invalid("dns names must be ascii"));
        }
        if s.contains(|c: char| c.is_ascii_whitespace() || c == '/' || c == ':' || c == '@') {
            return Err(invalid("not an ip address or a dns name"));
        }
        Ok(Some(SanName::Dns(s.to_ascii_lowercase())))
    }

    pub(super) fn to_rcgen(&self) -> Result<SanType, PkiError> {
        Ok(match self {
            SanName::Ip(ip) => SanType::IpAddress(*ip),
            SanName::Dns(name) => {
                SanType::DnsName(name.as_str().try_into().map_err(|e: rcgen::Error| {
                    PkiError::InvalidSan {
                        san: name.clone(),
                        reason: e.to_string(),
                    }
                })?)
            }
        })
    }
}

/// The defaults followed by the requested names, without duplicates.
pub(super) fn wanted_sans(extra: &[String]) -> Result<Vec<SanName>, PkiError> {
    let mut out: Vec<SanName> = Vec::new();
    let defaults = DEFAULT_SANS.iter().map(|s| s.to_string());
    for raw in defaults.chain(extra.iter().cloned()) {
        if let Some(name) = SanName::parse(&raw)? {
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    Ok(out)
}

/// The DNS and IP names of a certificate's subjectAltName extension.
pub(super) fn cert_sans(x509: &X509Certificate<'_>) -> BTreeSet<SanName> {
    let mut out = BTreeSet::new();
    let Ok(Some(ext)) = x509.subject_alternative_name() else {
        return out;
    };
    for name in &ext.value.general_names {
        match name {
            GeneralName::DNSName(dns) => {
                out.insert(SanName::Dns(dns.to_ascii_lowercase()));
            }
            GeneralName::IPAddress(bytes) => {
                let ip = match bytes.len() {
                    4 => <[u8; 4]>::try_from(*bytes).ok().map(IpAddr::from),
                    16 => <[u8; 16]>::try_from(*bytes).ok().map(IpAddr::from),
                    _ => None,
                };
                if let Some(ip) = ip {
                    out.insert(SanName::Ip(ip));
                }
            }
            _ => {}
        }
    }
    out
}
