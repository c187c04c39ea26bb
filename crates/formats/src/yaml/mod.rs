//! `application/yaml` request and response bodies, as kube-apiserver 1.34
//! reads and writes them.
//!
//! kube's YAML serializer (`k8s.io/apimachinery/pkg/runtime/serializer/json`
//! with `Yaml: true`) converts a request body with `sigs.k8s.io/yaml`
//! `YAMLToJSON` (go-yaml v2, `go.yaml.in/yaml/v2`, YAML 1.1 scalars) and then
//! decodes the JSON; responses are JSON re-encoded by `JSONToYAML` (go-yaml v2
//! `Marshal` of the JSON parsed as YAML). This module reproduces both:
//!
//! * [`yaml_to_json`] / [`yaml_to_json_strict`]: the first document only;
//!   YAML 1.1 booleans (`yes`/`no`/`on`/`off`/`y`/`n`, any of go-yaml's
//!   spellings), `null`/`~`/empty, ints in any base Go's `ParseInt(s, 0, 64)`
//!   takes (`0755` is octal 493, `0x1F`, `1_000`), floats (`1.0` becomes the
//!   JSON integer `1`, as Go's `json.Marshal` writes it), timestamps kept as
//!   strings, quoted scalars always strings, `!!str`/`!!int`/`!!binary`...
//!   tags, anchors/aliases and `<<` merge keys resolved (with go-yaml's alias
//!   ratio limit), non-string keys stringified as sigs.k8s.io/yaml does,
//!   duplicate keys: last wins (strict: an error per duplicate, with go-yaml's
//!   `line N: key "x" already set in map` text);
//! * [`json_to_yaml`]: a port of go-yaml v2's emitter for the trees JSON can
//!   express: keys in go-yaml's "natural" order (`a2` before `a10`), 2-space
//!   indentation, sequences under a key not indented, scalars plain when they
//!   read back as the same string and quoted otherwise (`"123"`, `"true"`,
//!   `"2026-11-22T12:00:00Z"`, `""`, `'foo: bar'`), multi-line strings as
//!   `|`/`|-`/`|+` blocks, long strings folded at column 80, `{}` and `[]`.
//!
//! Parsing uses the `yaml-rust2` event parser; its error texts are rewritten
//! into libyaml's (go-yaml is a libyaml port), with go-yaml's line numbering
//! quirks (scanner errors: 1-based line, parser errors: the 0-based line;
//! errors on the first line carry no line at all). Errors only yaml-rust2
//! raises (it is YAML 1.2 and stricter in a few corners) keep its problem
//! text. Nothing here panics, whatever the input; nesting deeper than
//! [`MAX_DEPTH`] and alias bombs are refused early.

mod decode;
mod emitter;
mod go_fmt;
mod input;
mod parse;
mod resolve;
mod scalar_style;
#[cfg(test)]
mod tests;
mod to_json;

use std::collections::HashSet;
use std::fmt::Write as _;

use serde_json::Value;

pub use emitter::json_to_yaml;

use decode::Decoder;
use input::decode_input;
use parse::parse;
use to_json::to_json;

/// Deepest nesting accepted in a YAML body, and in the document an alias
/// expansion produces (`yaml: exceeded max depth of 256`). go-yaml's own
/// limit is 10000; this one keeps conversion, emission and the recursive
/// walks and drops of the resulting `serde_json::Value` well inside a 2 MiB
/// (tokio worker) stack even in debug builds. JSON bodies are already capped
/// at 128 levels by serde_json's parser. (Flow collections, `[[[...]]]`, are
/// limited to 255 levels by the yaml-rust2 scanner, with the same message.)
pub const MAX_DEPTH: usize = 256;

/// Prefix sigs.k8s.io/yaml puts on every conversion error.
const CONVERT_PREFIX: &str = "error converting YAML to JSON: ";

/// A YAML body kube would refuse; `Display` is kube's full message, such as
/// `error converting YAML to JSON: yaml: line 3: did not find expected key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    message: String,
}

impl YamlError {
    fn convert(detail: impl Into<String>) -> Self {
        YamlError {
            message: format!("{CONVERT_PREFIX}{}", detail.into()),
        }
    }

    /// kube's message (what `Display` prints).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message without sigs.k8s.io/yaml's `error converting YAML to
    /// JSON: ` prefix (`yaml: line 3: ...`).
    pub fn detail(&self) -> &str {
        self.message
            .strip_prefix(CONVERT_PREFIX)
            .unwrap_or(&self.message)
    }
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for YamlError {}

/// sigs.k8s.io/yaml `YAMLToJSON`: the first YAML document of `body` as JSON.
/// An empty body (or one holding only comments) is `null`.
pub fn yaml_to_json(body: &[u8]) -> Result<Value, YamlError> {
    convert(body, false)
}

/// sigs.k8s.io/yaml `YAMLToJSONStrict`: as [`yaml_to_json`], but a key set
/// twice in one mapping fails the whole conversion with go-yaml's
/// `UnmarshalStrict` error, every duplicate on its own line:
///
/// ```text
/// error converting YAML to JSON: yaml: unmarshal errors:
///   line 10: key "unknownDupe" already set in map
///   line 12: key "paused" already set in map
/// ```
///
/// kube's strict decoding runs this after the normal conversion succeeded and
/// reports its error as one strict-decoding error (see
/// `crate::field_validation::warnings` for the warnings form).
pub fn yaml_to_json_strict(body: &[u8]) -> Result<Value, YamlError> {
    convert(body, true)
}

/// The error `YAMLToJSONStrict` adds to kube's strict-decoding errors for a
/// body that [`yaml_to_json`] accepts: `error converting YAML to JSON: yaml:
/// unmarshal errors:\n  line 10: key "x" already set in map...`; `None` when
/// no key repeats (or the body does not convert at all).
pub fn yaml_duplicate_error(body: &[u8]) -> Option<String> {
    match convert(body, true) {
        Err(err) if err.detail().starts_with("yaml: unmarshal errors:\n") => Some(err.message),
        _ => None,
    }
}

/// The duplicate-key lines of [`yaml_to_json_strict`]
/// (`line 10: key "unknownDupe" already set in map`, in document order);
/// empty when the body has none or does not parse at all.
pub fn yaml_duplicate_fields(body: &[u8]) -> Vec<String> {
    match convert(body, true) {
        Err(err) => err
            .detail()
            .strip_prefix("yaml: unmarshal errors:\n")
            .map(|rest| rest.lines().map(|l| l.trim().to_string()).collect())
            .unwrap_or_default(),
        Ok(_) => Vec::new(),
    }
}

/// kube's `summarizeData(body, 30)`, used in the 400 message for a body that
/// does not decode at all (`the object provided is unrecognized (must be of
/// type ConfigMap): <error> (<summary>)`): a body starting with `{` is quoted
/// as text, anything else (YAML) as lower-case hex; more than 30 bytes are cut
/// and followed by ` ...`; an empty body is `<empty>`.
pub fn summarize_data(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".to_string();
    }
    let cut = &body[..body.len().min(MAX)];
    let mut out = if body[0] == b'{' {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        let mut hex = String::with_capacity(cut.len() * 2);
        for byte in cut {
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    };
    if body.len() > MAX {
        out.push_str(" ...");
    }
    out
}

/// The 400 BadRequest message kube-apiserver answers for a YAML body that
/// fails to convert (`transformDecodeError` with no kind decoded):
/// `the object provided is unrecognized (must be of type Deployment): error
/// converting YAML to JSON: yaml: line 2: ... (61706956...)`.
pub fn decode_error_message(kind: &str, err: &YamlError, body: &[u8]) -> String {
    format!(
        "the object provided is unrecognized (must be of type {kind}): {err} ({})",
        summarize_data(body)
    )
}

fn convert(body: &[u8], strict: bool) -> Result<Value, YamlError> {
    let text = decode_input(body).map_err(|p| YamlError::convert(format!("yaml: {p}")))?;
    // yaml-rust2 should never panic, but a body is untrusted input.
    let parsed = std::panic::catch_unwind(|| parse(&text));
    let tree = match parsed {
        Ok(Ok(tree)) => tree,
        Ok(Err(msg)) => return Err(YamlError::convert(msg)),
        Err(_) => {
            return Err(YamlError::convert(
                "yaml: unknown problem parsing YAML content",
            ))
        }
    };
    let Some(root) = tree.root else {
        return Ok(Value::Null);
    };
    let mut decoder = Decoder {
        tree: &tree,
        strict,
        terrors: Vec::new(),
        // The document node counts as one decode in go-yaml.
        decode_count: 1,
        alias_count: 0,
        alias_depth: 0,
        active_aliases: HashSet::new(),
        depth: 0,
        budget: 64 * 1024 * 1024 + body.len().saturating_mul(16),
    };
    let value = decoder.unmarshal(root, None).map_err(YamlError::convert)?;
    if !decoder.terrors.is_empty() {
        return Err(YamlError::convert(format!(
            "yaml: unmarshal errors:\n  {}",
            decoder.terrors.join("\n  ")
        )));
    }
    to_json(value).map_err(YamlError::convert)
}
