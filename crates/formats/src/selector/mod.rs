//! Label and field selectors, parsed and matched exactly as kube-apiserver 1.34 does.
//!
//! * [`LabelSelector`] mirrors `k8s.io/apimachinery/pkg/labels/selector.go` (`Parse`).
//! * [`FieldSelector`] mirrors `k8s.io/apimachinery/pkg/fields/selector.go` (`ParseSelector`)
//!   plus the per-kind field label conversions (`AddFieldLabelConversionFunc`) and the
//!   registry `ToSelectableFields` functions.
//!
//! Every [`SelectorError`] renders (via `Display`) the exact text kube-apiserver puts in the
//! `message` of its `400 BadRequest` Status: the list/watch handler
//! (`apiserver/pkg/endpoints/handlers/get.go`, `ListResource`) wraps both the parameter
//! decoding error and the field-label conversion error with `errors.NewBadRequest(err.Error())`.
//! Pure parsing and matching: no I/O.

mod field;
mod label;

pub use field::FieldSelector;
pub use label::LabelSelector;

use crate::go::strconv::quote;

/// Every selector failure. `Display` is upstream's message, verbatim; all of them map to
/// `400 BadRequest` (reason `BadRequest`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// labels `parse()`: an error raised while parsing one requirement
    /// (tokens, key/value validation, `NewRequirement`).
    #[error("unable to parse requirement: {0}")]
    LabelRequirement(String),
    /// labels `parse()`: a token out of place between requirements, e.g.
    /// `found 'b', expected: ',' or 'end of string'`.
    #[error("{0}")]
    LabelSyntax(String),
    /// fields `parseSelector`: a term without `=`, `==` or `!=`.
    #[error("invalid selector: '{selector}'; can't understand '{term}'")]
    FieldTerm { selector: String, term: String },
    /// fields `InvalidEscapeSequence`.
    #[error("invalid field selector: invalid escape sequence: {0}")]
    InvalidEscapeSequence(String),
    /// fields `UnescapedRune`; upstream formats the rune with `%v`, i.e. as its decimal code.
    #[error("invalid field selector: unescaped character in value: {}", u32::from(*.0))]
    UnescapedRune(char),
    /// Most `AddFieldLabelConversionFunc` funcs (pods, nodes, events, ...) and the custom
    /// resource converter (`apiextensions-apiserver` `crConverter.ConvertFieldLabel`).
    #[error("field label not supported: {0}")]
    FieldLabelNotSupported(String),
    /// `runtime.DefaultMetaV1FieldSelectorConversion`, for kinds without a conversion func.
    #[error("{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"", quote(.0))]
    UnknownFieldSelector(String),
    /// `pkg/apis/batch/v1/conversion.go` (Job).
    #[error("field label {} not supported for batchv1.Job", quote(.0))]
    JobFieldLabelNotSupported(String),
    /// `pkg/apis/resource/*/conversion.go` (ResourceSlice); `gvk` is
    /// `schema.GroupVersionKind.String()`, e.g. `resource.k8s.io/v1, Kind=ResourceSlice`.
    #[error("field label not supported for {gvk}: {label}")]
    FieldLabelNotSupportedFor { gvk: String, label: String },
    /// `ListResource` when a single-object watch's fieldSelector does not pin the same name.
    #[error("fieldSelector metadata.name doesn't match requested name")]
    NameMismatch,
}

// ---- k8s.io/apimachinery/pkg/util/validation/validation.go (`IsQualifiedName`,
// `IsValidLabelValue`, `IsDNS1123Subdomain`, `MaxLenError`, `RegexError`) ----
// Later apimachinery moved these to `api/validate/content` and reworded two messages
// ("no more than N bytes", "a valid label key ..."); these are the older texts.

const QUALIFIED_NAME_FMT: &str = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]";
const QUALIFIED_NAME_ERR: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const LABEL_VALUE_ERR: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character";
const DNS1123_SUBDOMAIN_FMT: &str =
    "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const DNS1123_SUBDOMAIN_ERR: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

/// `MaxLenError`.
fn max_len_error(n: usize) -> String {
    format!("must be no more than {n} characters")
}

/// `RegexError` (upstream really does put two spaces before each "or").
fn regex_error(msg: &str, fmt: &str, examples: &[&str]) -> String {
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{msg} (e.g. {}regex used for validation is '{fmt}')",
        examples.join(" or ")
    )
}

/// `^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`
fn is_qualified_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) => {
            f.is_ascii_alphanumeric()
                && l.is_ascii_alphanumeric()
                && b.iter()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        }
        _ => false,
    }
}

/// `IsQualifiedName`: the label key check.
pub fn is_qualified_name(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let msgs = is_dns1123_subdomain(prefix);
                errs.extend(msgs.into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            return vec![format!(
                "a qualified name {} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                regex_error(QUALIFIED_NAME_ERR, QUALIFIED_NAME_FMT, &["MyName", "my.name", "123-abc"])
            )]
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push(format!("name part {}", max_len_error(63)));
    }
    if !is_qualified_name_part(name) {
        errs.push(format!(
            "name part {}",
            regex_error(
                QUALIFIED_NAME_ERR,
                QUALIFIED_NAME_FMT,
                &["MyName", "my.name", "123-abc"]
            )
        ));
    }
    errs
}

/// `IsValidLabelValue`.
pub fn is_valid_label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push(max_len_error(63));
    }
    if !value.is_empty() && !is_qualified_name_part(value) {
        errs.push(regex_error(
            LABEL_VALUE_ERR,
            &format!("({QUALIFIED_NAME_FMT})?"),
            &["MyValue", "my_value", "12345"],
        ));
    }
    errs
}

/// `IsDNS1123Subdomain`.
fn is_dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > 253 {
        errs.push(max_len_error(253));
    }
    let label_ok = |l: &str| {
        let b = l.as_bytes();
        let alnum = |c: &u8| c.is_ascii_lowercase() || c.is_ascii_digit();
        b.first().is_some_and(alnum)
            && b.last().is_some_and(alnum)
            && b.iter().all(|c| alnum(c) || *c == b'-')
    };
    if !value.split('.').all(label_ok) {
        errs.push(regex_error(
            DNS1123_SUBDOMAIN_ERR,
            DNS1123_SUBDOMAIN_FMT,
            &["example.com"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_messages_are_verbatim() {
        let cases = [
            (
                SelectorError::UnescapedRune('='),
                "invalid field selector: unescaped character in value: 61",
            ),
            (
                SelectorError::UnknownFieldSelector("spec.foo".into()),
                r#""spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#,
            ),
            (
                SelectorError::JobFieldLabelNotSupported("status.succeeded".into()),
                r#"field label "status.succeeded" not supported for batchv1.Job"#,
            ),
            (
                SelectorError::NameMismatch,
                "fieldSelector metadata.name doesn't match requested name",
            ),
        ];
        for (err, want) in cases {
            assert_eq!(err.to_string(), want);
        }
    }
}
