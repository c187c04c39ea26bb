//! Bearer tokens: `request/bearertoken/bearertoken.go`.

/// The token of an `Authorization` header value: surrounding white space
/// trimmed, split on single spaces, the first part `bearer` in any case, the
/// second part the token. `"Bearer  x"` (two spaces) has an empty token and
/// yields `None`, as upstream.
pub fn bearer_token(header_value: &str) -> Option<&str> {
    let auth = header_value.trim();
    if auth.is_empty() {
        return None;
    }
    let mut parts = auth.split(' ');
    let scheme = parts.next()?;
    let token = parts.next()?;
    if !scheme.eq_ignore_ascii_case("bearer") || token.is_empty() {
        return None;
    }
    Some(token)
}
