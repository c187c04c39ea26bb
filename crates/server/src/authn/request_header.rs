//! Front-proxy authentication: `request/headerrequest/requestheader.go`.
//!
//! A client certificate verified against `--requestheader-client-ca-file`
//! (and, when `--requestheader-allowed-names` is set, with one of those
//! common names: `x509.Verifier`) may name the user in request headers:
//! the first non-empty username header, the first non-empty UID header, every
//! value of the group headers, and every header under an extra prefix as
//! `user.extra` (the rest of the header name lower-cased and %-unescaped).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::SystemTime;

use http::{HeaderMap, HeaderName};
use rustls::pki_types::CertificateDer;

use super::ca_bundle::CaBundle;
use super::{AuthnError, UserInfo};

/// The headers kube's `WithAuthentication` removes from every authenticated
/// request whatever the flags say (`standardRequestHeaderConfig`).
const STANDARD_USERNAME_HEADER: &str = "X-Remote-User";
const STANDARD_UID_HEADER: &str = "X-Remote-Uid";
const STANDARD_GROUP_HEADER: &str = "X-Remote-Group";
const STANDARD_EXTRA_PREFIX: &str = "X-Remote-Extra-";

/// `--requestheader-*`: who may act as a front proxy and which headers name
/// the user (`authenticatorfactory.RequestHeaderConfig`).
#[derive(Debug, Clone)]
pub struct RequestHeaderConfig {
    pub client_ca: Arc<CaBundle>,
    /// Empty: any certificate the CA signed.
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_header_prefixes: Vec<String>,
}

/// The header flags as given on the command line, checked by
/// [`RequestHeaderFlags::validate`].
#[derive(Debug, Clone, Default)]
pub struct RequestHeaderFlags {
    pub client_ca_file: Option<std::path::PathBuf>,
    pub allowed_names: Vec<String>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_headers_prefix: Vec<String>,
}

impl RequestHeaderFlags {
    /// `RequestHeaderAuthenticationOptions.Validate` (`checkForWhiteSpaceOnly`)
    /// and `ToAuthenticationRequestHeaderConfig`: `None` without a CA file
    /// (front-proxy authentication off); the headers trimmed (`trimHeaders`).
    pub fn into_config(self) -> Result<Option<RequestHeaderConfig>, AuthnError> {
        for (flag, values) in [
            ("requestheader-username-headers", &self.username_headers),
            ("requestheader-uid-headers", &self.uid_headers),
            ("requestheader-group-headers", &self.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_headers_prefix,
            ),
            ("requestheader-allowed-names", &self.allowed_names),
        ] {
            if values.iter().any(|value| value.trim().is_empty()) {
                return Err(AuthnError::Flag(format!("empty value in {flag:?}")));
            }
        }
        // kube's warnings for a front proxy that aggregated API servers,
        // which read the standard headers, could not follow.
        for (flag, values, standard, what) in [
            (
                "username-headers",
                &self.username_headers,
                STANDARD_USERNAME_HEADER,
                "header",
            ),
            (
                "group-headers",
                &self.group_headers,
                STANDARD_GROUP_HEADER,
                "header",
            ),
            (
                "extra-headers-prefix",
                &self.extra_headers_prefix,
                STANDARD_EXTRA_PREFIX,
                "header prefix",
            ),
        ] {
            if !values.is_empty()
                && !values
                    .iter()
                    .any(|value| value.eq_ignore_ascii_case(standard))
            {
                tracing::warn!(
                    "--requestheader-{flag} is set without specifying the standard {standard} {what} - API aggregation will not work"
                );
            }
        }
        let Some(file) = self.client_ca_file else {
            return Ok(None);
        };
        let client_ca = CaBundle::load("--requestheader-client-ca-file", &[file], None)?;
        let trim = |values: Vec<String>| -> Vec<String> {
            values
                .iter()
                .map(|value| value.trim().to_string())
                .collect()
        };
        Ok(Some(RequestHeaderConfig {
            client_ca: Arc::new(client_ca),
            allowed_names: self.allowed_names,
            username_headers: trim(self.username_headers),
            uid_headers: trim(self.uid_headers),
            group_headers: trim(self.group_headers),
            extra_header_prefixes: trim(self.extra_headers_prefix),
        }))
    }
}

impl RequestHeaderConfig {
    /// `x509.Verifier`: the chain verified against the request-header CA
    /// (Go's error text, unwrapped), then the leaf's common name checked
    /// against the allowed names.
    pub fn verify_proxy(
        &self,
        chain: &[CertificateDer<'_>],
        now: SystemTime,
    ) -> Result<(), AuthnError> {
        self.client_ca
            .verify(chain, now)
            .map_err(AuthnError::ProxyVerification)?;
        if self.allowed_names.is_empty() {
            return Ok(());
        }
        let common_name = chain
            .first()
            .map(|leaf| super::x509::common_name(leaf.as_ref()))
            .unwrap_or_default();
        if self.allowed_names.contains(&common_name) {
            return Ok(());
        }
        Err(AuthnError::ProxyNotAllowed(common_name))
    }

    /// `requestHeaderAuthRequestHandler.AuthenticateRequest`, for a request
    /// whose certificate [`verify_proxy`](Self::verify_proxy) accepted:
    /// `None` without a username header (the next authenticator is asked).
    pub fn user_from_headers(&self, headers: &HeaderMap) -> Option<UserInfo> {
        let name = first_value(headers, &self.username_headers)?;
        Some(UserInfo {
            name,
            uid: first_value(headers, &self.uid_headers).unwrap_or_default(),
            groups: all_values(headers, &self.group_headers),
            extra: extra(headers, &self.extra_header_prefixes),
        })
    }

    /// `ClearAuthenticationHeaders` with this configuration.
    pub fn clear(&self, headers: &mut HeaderMap) {
        clear_headers(
            headers,
            &self.username_headers,
            &self.uid_headers,
            &self.group_headers,
            &self.extra_header_prefixes,
        );
    }
}

/// `WithAuthentication` on success: the standard front-proxy headers go,
/// whether or not front-proxy authentication is configured.
pub fn clear_standard_headers(headers: &mut HeaderMap) {
    clear_headers(
        headers,
        &[STANDARD_USERNAME_HEADER],
        &[STANDARD_UID_HEADER],
        &[STANDARD_GROUP_HEADER],
        &[STANDARD_EXTRA_PREFIX],
    );
}

fn clear_headers<S: AsRef<str>>(
    headers: &mut HeaderMap,
    names: &[S],
    uids: &[S],
    groups: &[S],
    prefixes: &[S],
) {
    // `&str` names are matched case-insensitively without allocating; an
    // invalid name matches nothing.
    for name in names.iter().chain(uids).chain(groups) {
        headers.remove(name.as_ref());
    }
    for prefix in prefixes {
        let matching: Vec<HeaderName> = headers
            .keys()
            .filter(|key| has_prefix_ignore_case(key.as_str(), prefix.as_ref()))
            .cloned()
            .collect();
        for key in matching {
            headers.remove(key);
        }
    }
}

fn has_prefix_ignore_case(text: &str, prefix: &str) -> bool {
    text.len() >= prefix.len()
        && text.is_char_boundary(prefix.len())
        && text[..prefix.len()].eq_ignore_ascii_case(prefix)
}

fn value_text(value: &http::HeaderValue) -> String {
    String::from_utf8_lossy(value.as_bytes()).into_owned()
}

/// `headerValue`: the first value (Go's `Header.Get`) of the first header
/// that has a non-empty one.
fn first_value(headers: &HeaderMap, names: &[String]) -> Option<String> {
    names.iter().find_map(|name| {
        let value = headers.get(name.as_str())?;
        Some(value_text(value)).filter(|text| !text.is_empty())
    })
}

/// `allHeaderValues`: every non-empty value of every header, in flag order.
fn all_values(headers: &HeaderMap, names: &[String]) -> Vec<String> {
    let mut values = Vec::new();
    for name in names {
        for value in headers.get_all(name.as_str()) {
            let text = value_text(value);
            if !text.is_empty() {
                values.push(text);
            }
        }
    }
    values
}

/// `newExtra`: per prefix, each header under it as an extra key (the rest of
/// its name lower-cased and %-unescaped, `unescapeExtraKey`) with all values.
fn extra(headers: &HeaderMap, prefixes: &[String]) -> BTreeMap<String, Vec<String>> {
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for prefix in prefixes {
        for key in headers.keys() {
            let name = key.as_str();
            if !has_prefix_ignore_case(name, prefix) {
                continue;
            }
            let extra_key = unescape_extra_key(&name[prefix.len()..].to_ascii_lowercase());
            let values = extra.entry(extra_key).or_default();
            values.extend(headers.get_all(key).iter().map(value_text));
        }
    }
    extra
}

/// `url.PathUnescape`, keeping the key as it came when it is malformed.
fn unescape_extra_key(encoded: &str) -> String {
    let bytes = encoded.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let high = bytes.get(index + 1).and_then(|byte| hex_digit(*byte));
            let low = bytes.get(index + 2).and_then(|byte| hex_digit(*byte));
            let (Some(high), Some(low)) = (high, low) else {
                return encoded.to_string();
            };
            out.push(high << 4 | low);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn hex_digit(byte: u8) -> Option<u8> {
    match byte {
        b'0'..=b'9' => Some(byte - b'0'),
        b'a'..=b'f' => Some(byte - b'a' + 10),
        b'A'..=b'F' => Some(byte - b'A' + 10),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        map
    }

    fn config() -> RequestHeaderConfig {
        let dir = tempfile::tempdir().expect("tempdir");
        let pki = crate::pki::ensure(dir.path(), &[]).expect("pki");
        RequestHeaderConfig {
            client_ca: Arc::new(
                CaBundle::load("test", &[], Some(&pki.ca_cert_pem)).expect("bundle"),
            ),
            allowed_names: vec![],
            username_headers: vec!["X-Remote-User".into(), "X-Other-User".into()],
            uid_headers: vec!["X-Remote-Uid".into()],
            group_headers: vec!["X-Remote-Group".into(), "X-Other-Group".into()],
            extra_header_prefixes: vec!["X-Remote-Extra-".into(), "X-Other-Extra-".into()],
        }
    }

    #[test]
    fn user_from_headers_as_requestheader_go() {
        let config = config();
        let map = headers(&[
            ("x-remote-user", ""),
            ("x-other-user", "jane"),
            ("x-remote-uid", "u-1"),
            ("x-remote-group", "one"),
            ("x-remote-group", ""),
            ("x-other-group", "two"),
            ("x-remote-group", "three"),
            ("x-remote-extra-Scopes", "a"),
            ("x-remote-extra-scopes", "b"),
            ("x-other-extra-scopes", "c"),
            ("x-remote-extra-example.com%2fteam", "x"),
            ("x-remote-extra-bad%zz", ""),
        ]);
        let user = config.user_from_headers(&map).expect("user");
        assert_eq!(user.name, "jane");
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.groups, vec!["one", "three", "two"]);
        let want: BTreeMap<String, Vec<String>> = [
            ("scopes", vec!["a", "b", "c"]),
            ("example.com/team", vec!["x"]),
            ("bad%zz", vec![""]),
        ]
        .into_iter()
        .map(|(key, values)| {
            (
                key.to_string(),
                values.into_iter().map(String::from).collect(),
            )
        })
        .collect();
        assert_eq!(user.extra, want);
        // No username: not this authenticator's request.
        assert_eq!(
            config.user_from_headers(&headers(&[("x-remote-group", "g")])),
            None
        );
    }

    #[test]
    fn clearing_removes_the_configured_and_standard_headers() {
        let config = config();
        let mut map = headers(&[
            ("x-other-user", "jane"),
            ("x-remote-uid", "u"),
            ("x-other-group", "g"),
            ("x-other-extra-a", "1"),
            ("x-remote-extra-b", "2"),
            ("accept", "application/json"),
        ]);
        config.clear(&mut map);
        assert_eq!(map.len(), 1, "{map:?}");
        let mut map = headers(&[
            ("x-remote-user", "jane"),
            ("x-remote-extra-b", "2"),
            ("x-other-user", "kept"),
        ]);
        clear_standard_headers(&mut map);
        assert_eq!(
            map.keys().map(HeaderName::as_str).collect::<Vec<_>>(),
            vec!["x-other-user"]
        );
    }

    #[test]
    fn flags_are_validated_as_kube_does() {
        let flags = RequestHeaderFlags {
            username_headers: vec![" ".into()],
            ..Default::default()
        };
        assert_eq!(
            flags.into_config().expect_err("empty").to_string(),
            "empty value in \"requestheader-username-headers\""
        );
        // Without a CA file front-proxy authentication is off.
        let flags = RequestHeaderFlags {
            username_headers: vec!["X-Remote-User".into()],
            ..Default::default()
        };
        assert!(flags.into_config().expect("valid").is_none());
    }

    #[test]
    fn extra_keys_unescape_as_path_unescape() {
        assert_eq!(unescape_extra_key("a%2Fb"), "a/b");
        assert_eq!(unescape_extra_key("a%2"), "a%2");
        assert_eq!(unescape_extra_key("plain+key"), "plain+key");
    }
}
