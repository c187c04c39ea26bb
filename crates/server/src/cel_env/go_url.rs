//! Go's `net/url` as kube's CEL `url` library uses it: `url.Parse`,
//! `url.ParseRequestURI`, and on the parsed URL `Hostname()`, `Port()`,
//! `EscapedPath()` and `Query()`, with Go's error texts
//! (`parse "<url>": <reason>`). Follows `src/net/url/url.go` (`parse`,
//! `getScheme`, `parseAuthority`, `parseHost`, `unescape`, `shouldEscape`,
//! `validEncoded`, `ParseQuery`).

use std::collections::BTreeMap;

/// A parsed URL: the fields `net/url.URL` has that kube reads.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GoUrl {
    pub scheme: String,
    pub opaque: String,
    pub host: String,
    /// The decoded path.
    pub path: String,
    /// The path as written, when it differs from Go's escaping of `path`.
    pub raw_path: String,
    pub raw_query: String,
    pub fragment: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    QueryComponent,
    Fragment,
}

/// `url.Parse`: the fragment is cut at the first `#`.
pub fn parse(raw: &str) -> Result<GoUrl, String> {
    let (rest, fragment) = match raw.split_once('#') {
        Some((rest, fragment)) => (rest, Some(fragment)),
        None => (raw, None),
    };
    let mut url = parse_with(rest, false).map_err(|reason| wrap(raw, &reason))?;
    if let Some(fragment) = fragment {
        url.fragment = unescape(fragment, Mode::Fragment).map_err(|reason| wrap(raw, &reason))?;
    }
    Ok(url)
}

/// `url.ParseRequestURI`: an absolute URI or an absolute path, no fragment.
pub fn parse_request_uri(raw: &str) -> Result<GoUrl, String> {
    parse_with(raw, true).map_err(|reason| wrap(raw, &reason))
}

/// `url.Error.Error()`: `parse "<url>": <reason>` with Go's `%q`.
fn wrap(raw: &str, reason: &str) -> String {
    format!("parse {}: {reason}", crate::go::strconv::quote(raw))
}

fn parse_with(raw: &str, via_request: bool) -> Result<GoUrl, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = GoUrl::default();
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = &rest[..rest.len() - 1];
    } else if let Some((before, query)) = rest.split_once('?') {
        url.raw_query = query.to_string();
        rest = before;
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = rest.to_string();
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        let segment = rest.split('/').next().unwrap_or_default();
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    let mut path = rest;
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///"))
        && rest.starts_with("//")
    {
        let authority_and_path = &rest[2..];
        let (authority, after) = match authority_and_path.find('/') {
            Some(index) => authority_and_path.split_at(index),
            None => (authority_and_path, ""),
        };
        url.host = authority_host(authority)?;
        path = after;
    }
    url.path = unescape(path, Mode::Path)?;
    if escape_path(&url.path) != path {
        url.raw_path = path.to_string();
    }
    Ok(url)
}

/// `getScheme`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (index, byte) in raw.bytes().enumerate() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if index > 0 => {}
            b':' if index == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..index], &raw[index + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// `parseAuthority`: the host (user info checked, not kept).
fn authority_host(authority: &str) -> Result<String, String> {
    let Some(at) = authority.rfind('@') else {
        return host(authority);
    };
    let host = host(&authority[at + 1..])?;
    let user_info = &authority[..at];
    let valid = user_info
        .bytes()
        .all(|byte| byte.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&byte));
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    let (user, password) = user_info.split_once(':').unwrap_or((user_info, ""));
    unescape(user, Mode::UserPassword)?;
    unescape(password, Mode::UserPassword)?;
    Ok(host)
}

/// `validOptionalPort`.
fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        None => port.is_empty(),
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
    }
}

/// `parseHost`.
fn host(host: &str) -> Result<String, String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".into());
        };
        let colon_port = &host[close + 1..];
        if !valid_optional_port(colon_port) {
            return Err(format!(
                "invalid port {} after host",
                crate::go::strconv::quote(colon_port)
            ));
        }
        if let Some(zone) = host[..close].find("%25") {
            let literal = unescape(&host[..zone], Mode::Host)?;
            let zone_part = unescape(&host[zone..close], Mode::Zone)?;
            let tail = unescape(&host[close..], Mode::Host)?;
            return Ok(format!("{literal}{zone_part}{tail}"));
        }
    } else if let Some(colon) = host.rfind(':') {
        let colon_port = &host[colon..];
        if !valid_optional_port(colon_port) {
            return Err(format!(
                "invalid port {} after host",
                crate::go::strconv::quote(colon_port)
            ));
        }
    }
    unescape(host, Mode::Host)
}

fn unhex(byte: u8) -> Option<u8> {
    (byte as char).to_digit(16).map(|digit| digit as u8)
}

/// `shouldEscape`.
fn should_escape(byte: u8, mode: Mode) -> bool {
    if byte.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) {
        return !b"!$&'()*+,;=:[]<>\"".contains(&byte) && !b"-_.~".contains(&byte);
    }
    match byte {
        b'-' | b'_' | b'.' | b'~' => false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => byte == b'?',
            Mode::UserPassword => matches!(byte, b'@' | b'/' | b'?' | b':'),
            Mode::QueryComponent => true,
            // Host and zone were answered above.
            Mode::Fragment | Mode::Host | Mode::Zone => false,
        },
        _ if mode == Mode::Fragment => !b"!()*".contains(&byte),
        _ => true,
    }
}

/// `unescape`: `%XX` decoded, `+` a space in a query component, Go's
/// errors for a bad escape or a character a host cannot hold.
fn unescape(text: &str, mode: Mode) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        match bytes[index] {
            b'%' => {
                let escape_error = || {
                    let end = (index + 3).min(bytes.len());
                    format!(
                        "invalid URL escape {}",
                        crate::go::strconv::quote(&String::from_utf8_lossy(&bytes[index..end]))
                    )
                };
                let (Some(high), Some(low)) = (
                    bytes.get(index + 1).copied().and_then(unhex),
                    bytes.get(index + 2).copied().and_then(unhex),
                ) else {
                    return Err(escape_error());
                };
                if mode == Mode::Host && high < 8 && &bytes[index..index + 3] != b"%25" {
                    return Err(escape_error());
                }
                if mode == Mode::Zone {
                    let decoded = high << 4 | low;
                    if &bytes[index..index + 3] != b"%25"
                        && decoded != b' '
                        && should_escape(decoded, Mode::Host)
                    {
                        return Err(escape_error());
                    }
                }
                out.push(high << 4 | low);
                index += 3;
            }
            b'+' if mode == Mode::QueryComponent => {
                out.push(b' ');
                index += 1;
            }
            byte => {
                if matches!(mode, Mode::Host | Mode::Zone)
                    && byte < 0x80
                    && should_escape(byte, mode)
                {
                    return Err(format!(
                        "invalid character {} in host name",
                        crate::go::strconv::quote(&(byte as char).to_string())
                    ));
                }
                out.push(byte);
                index += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// `escape(path, encodePath)`.
fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for byte in path.bytes() {
        if should_escape(byte, Mode::Path) {
            out.push_str(&format!("%{byte:02X}"));
        } else {
            out.push(byte as char);
        }
    }
    out
}

/// `validEncoded(s, encodePath)`.
fn valid_encoded_path(text: &str) -> bool {
    text.bytes()
        .all(|byte| b"!$&'()*+,;=:@[]%".contains(&byte) || !should_escape(byte, Mode::Path))
}

impl GoUrl {
    /// `URL.Hostname()`: the host without port and IPv6 brackets.
    pub fn hostname(&self) -> &str {
        let (host, _) = split_host_port(&self.host);
        host.strip_prefix('[')
            .and_then(|inner| inner.strip_suffix(']'))
            .unwrap_or(host)
    }

    /// `URL.Port()`: the port digits, "" without one.
    pub fn port(&self) -> &str {
        split_host_port(&self.host).1
    }

    /// `URL.EscapedPath()`.
    pub fn escaped_path(&self) -> String {
        if !self.raw_path.is_empty()
            && valid_encoded_path(&self.raw_path)
            && unescape(&self.raw_path, Mode::Path).as_deref() == Ok(self.path.as_str())
        {
            return self.raw_path.clone();
        }
        if self.path == "*" {
            return "*".into();
        }
        escape_path(&self.path)
    }

    /// `URL.Query()` (`ParseQuery`, its errors dropped as `Query` does):
    /// each key's values in order.
    pub fn query(&self) -> BTreeMap<String, Vec<String>> {
        let mut values: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for pair in self.raw_query.split('&') {
            if pair.is_empty() || pair.contains(';') {
                continue;
            }
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let (Ok(key), Ok(value)) = (
                unescape(key, Mode::QueryComponent),
                unescape(value, Mode::QueryComponent),
            ) else {
                continue;
            };
            values.entry(key).or_default().push(value);
        }
        values
    }
}

/// `splitHostPort`: the port only when it is `:digits`.
fn split_host_port(host_port: &str) -> (&str, &str) {
    match host_port.rfind(':') {
        Some(colon) if valid_optional_port(&host_port[colon..]) => {
            (&host_port[..colon], &host_port[colon + 1..])
        }
        _ => (host_port, ""),
    }
}
