//! Messages and headers.

use crate::go::strconv::quote as go_quote;

/// `runtime.NewStrictDecodingError(errs).Error()`:
/// `strict decoding error: <err>, <err>, ...`.
pub fn strict_decoding_error(errors: &[String]) -> String {
    format!("strict decoding error: {}", errors.join(", "))
}

/// The 400 BadRequest message of a create/update refused under `Strict`
/// (`transformDecodeError`): `body_kind`/`body_version` are what the body
/// says (defaulted from the URL), `kind` the endpoint's kind:
/// `ConfigMap in version "v1" cannot be handled as a ConfigMap: strict
/// decoding error: unknown field "spec.foo", duplicate field "data.x"`.
pub fn strict_decoding_bad_request(
    body_kind: &str,
    body_version: &str,
    kind: &str,
    errors: &[String],
) -> String {
    format!(
        "{body_kind} in version {} cannot be handled as a {kind}: {}",
        go_quote(body_version),
        strict_decoding_error(errors)
    )
}

/// PATCH under `Strict` (`handlers/patch.go`): kube answers 422 Invalid with
/// one cause on field `patch` whose detail is this text (the value shown is
/// Go's `%+v` of the patch map); same text as [`strict_decoding_error`].
pub fn strict_patch_detail(errors: &[String]) -> String {
    strict_decoding_error(errors)
}

/// The warnings kube adds under `Warn` (`addStrictDecodingWarnings` /
/// `parseYAMLWarnings`): one per strict error, except that a go-yaml strict
/// error (`yaml: unmarshal errors:\n  line 3: ...`, with or without
/// `error converting YAML to JSON: `) becomes one warning per line, trimmed.
pub fn warnings(errors: &[String]) -> Vec<String> {
    const SHORT: &str = "yaml: unmarshal errors:\n";
    const LONG: &str = "error converting YAML to JSON: yaml: unmarshal errors:\n";
    let mut out = Vec::new();
    for error in errors {
        let rest = error
            .strip_prefix(SHORT)
            .or_else(|| error.strip_prefix(LONG));
        match rest {
            Some(rest) => out.extend(rest.split('\n').map(|line| line.trim().to_string())),
            None => out.push(error.clone()),
        }
    }
    out
}

/// A `Warning` header value as kube writes it (`net.NewWarningHeader(299,
/// "-", text)`): `299 - "unknown field \"spec.foo\""`; `"` and `\` are
/// backslash-escaped, control characters become spaces. `None` for empty text
/// (kube adds no header).
pub fn warning_header_value(text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(text.len() + 8);
    out.push_str("299 - \"");
    for c in text.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\t' | ' ' | '\u{21}'..='\u{7e}' => out.push(c),
            c if (c as u32) >= 0x80 => out.push(c),
            _ => out.push(' '),
        }
    }
    out.push('"');
    Some(out)
}
