//! Request-body decode failures worded exactly as kube-apiserver 1.34 words
//! them (the 400 BadRequest of POST and PUT on a built-in resource).
//!
//! kube decodes a JSON body in three steps, each with its own wording:
//!
//! 1. `json.SimpleMetaFactory.Interpret` (`runtime/serializer/json/meta.go`)
//!    reads `apiVersion` and `kind` with Go's `encoding/json` into an anonymous
//!    struct. A syntax error ([`go_json_syntax_error`], a port of
//!    `encoding/json/scanner.go`), a body that is not an object, or a
//!    non-string `apiVersion`/`kind` fails here as
//!    `couldn't get version/kind; json parse error: <encoding/json error>`; an
//!    apiVersion with two slashes as `unexpected GroupVersion string: a/b/c`.
//!    No kind is known, so `transformDecodeError`
//!    (`apiserver/pkg/endpoints/handlers/rest.go`) answers
//!    `the object provided is unrecognized (must be of type ConfigMap): <err> (<summary>)`,
//!    the summary being `summarizeData(body, 30)` ([`summarize_data`]).
//! 2. `json.Serializer.Decode` (`runtime/serializer/json/json.go`) defaults the
//!    group/version/kind from the endpoint (`gvkWithDefaults`), creates the
//!    typed object of that kind (`Scheme.New`: `no kind "X" is registered for
//!    version "g/v" in scheme "pkg/api/legacyscheme/scheme.go:30"`) and unmarshals
//!    the body into it with `sigs.k8s.io/json` (`json: cannot unmarshal number
//!    into Go struct field ConfigMap.data of type map[string]string`, see
//!    `TypeWalk`); the versioning codec then converts it to the endpoint's
//!    internal type (`converting (v1.Secret) to (core.ConfigMap): unknown
//!    conversion`). These answer `<Kind> in version "<v>" cannot be handled as a
//!    <EndpointKind>: <err>`.
//! 3. `handlers/create.go` / `update.go` refuse a body that decoded in another
//!    group version: `the API version in the data (autoscaling/v2) does not
//!    match the expected API version (autoscaling/v1)`.
//!
//! [`decode_failure_message`] runs the three steps and returns the message (or
//! `None` when kube would decode the body). The body decoder
//! (`api/write/decode.rs`) runs it on JSON and CBOR bodies, and the typed
//! check of objects the server builds (`api/typed.rs`) on patched and applied
//! objects; YAML and protobuf bodies have their own decoders upstream.

mod go_types;
mod interpret;
mod named_types;
mod scanner;
mod scheme;
mod summarize;
#[cfg(test)]
mod tests;
mod tree;
mod type_walk;

use crate::schema::Model;

pub use scanner::go_json_syntax_error;
pub use summarize::summarize_data;

use crate::go::strconv::quote as go_quote;
use crate::go::utf8::lossy as go_lossy;
use go_types::{go_type_of_definition, GoType};
use interpret::{gv_string, interpret, parse_group_version};
use scheme::{internal_package, scheme_new, Created, Scheme, INTERNAL_VERSION};
use tree::Tree;
use type_walk::TypeWalk;
pub use type_walk::Wording;

/// `Scheme.schemeName` of kube-apiserver's `legacyscheme.Scheme` in 1.34:
/// `naming.GetNameFromCallsite` of the `runtime.NewScheme()` call on line 30 of
/// `pkg/api/legacyscheme/scheme.go` (seen verbatim in real 1.2x–1.3x errors).
pub const LEGACY_SCHEME_NAME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// The apiextensions-apiserver scheme (`pkg/apiserver/apiserver.go`, `Scheme =
/// runtime.NewScheme()`). The line number is read from the upstream file as the
/// index stores it, not confirmed against a 1.34 server.
pub const APIEXTENSIONS_SCHEME_NAME: &str = "pkg/apiserver/apiserver.go:56";

/// The kube-aggregator scheme (`pkg/apiserver/scheme/scheme.go` line 32).
pub const AGGREGATOR_SCHEME_NAME: &str = "pkg/apiserver/scheme/scheme.go:32";

// ---------------------------------------------------------------------------
// The whole decode
// ---------------------------------------------------------------------------

/// `the object provided is unrecognized (must be of type <Kind>): <err> (<summary>)`.
fn unrecognized(expected_kind: &str, error: &str, body: &[u8]) -> String {
    format!(
        "the object provided is unrecognized (must be of type {expected_kind}): {error} ({})",
        summarize_data(body)
    )
}

/// The message of kube-apiserver 1.34's 400 BadRequest when a POST or PUT body
/// (JSON) cannot be decoded for an endpoint of `expected_kind` in
/// `expected_group_version` (`v1`, `apps/v1`), or `None` when kube decodes it.
///
/// `body_api_version` / `body_kind`: pass `None` for a JSON body; they are read
/// from it as kube reads them (keys matched case-insensitively, the last one
/// wins, a non-string value is itself an error, which a serde lookup does not
/// reproduce). `Some` replaces what the body says, for a caller that learnt
/// the type another way.
///
/// Cases, in kube's order (see the module docs for where each comes from):
/// syntax errors and non-objects (`the object provided is unrecognized ...`),
/// unregistered kinds (`no kind "X" is registered for version "g/v" in scheme
/// "pkg/api/legacyscheme/scheme.go:30"`), type mismatches against the body's
/// kind (`json: cannot unmarshal ...`, `illegal base64 data at input byte N`,
/// quantity and time parse errors), another kind of a known version
/// (`converting (v1.Secret) to (core.ConfigMap): unknown conversion`), and
/// the same kind in another version of its group (`the API version in the
/// data (autoscaling/v2) does not match the expected API version
/// (autoscaling/v1)`).
pub fn decode_failure_message(
    expected_kind: &str,
    expected_group_version: &str,
    body: &[u8],
    body_api_version: Option<&str>,
    body_kind: Option<&str>,
) -> Option<String> {
    if let Some(syntax) = go_json_syntax_error(body) {
        return Some(unrecognized(
            expected_kind,
            &format!("couldn't get version/kind; json parse error: {syntax}"),
            body,
        ));
    }
    decode_failure_message_of_valid_json(
        expected_kind,
        expected_group_version,
        body,
        body_api_version,
        body_kind,
    )
}

/// [`decode_failure_message`] for a body already known to be valid JSON
/// (`serde_json` parsed it), skipping the syntax scan: serde_json's grammar
/// is Go's (RFC 8259) and it is the stricter of the two (it also refuses
/// invalid UTF-8, lone surrogate escapes and nesting deeper than 128), so a
/// body it accepts has no Go syntax error. The scan was a quarter of this
/// check's cost on every create and update.
pub fn decode_failure_message_of_valid_json(
    expected_kind: &str,
    expected_group_version: &str,
    body: &[u8],
    body_api_version: Option<&str>,
    body_kind: Option<&str>,
) -> Option<String> {
    // 1. Interpret.
    let tree = Tree::parse(body)?;
    let mut meta = match interpret(&tree) {
        Ok(meta) => meta,
        Err(error) => {
            return Some(unrecognized(
                expected_kind,
                &format!("couldn't get version/kind; json parse error: {error}"),
                body,
            ))
        }
    };
    if let Some(api_version) = body_api_version {
        meta.api_version = api_version.to_string();
    }
    if let Some(kind) = body_kind {
        meta.kind = kind.to_string();
    }
    let (mut group, mut version) = match parse_group_version(&meta.api_version) {
        Ok(gv) => gv,
        Err(error) => return Some(unrecognized(expected_kind, &error, body)),
    };
    let mut kind = meta.kind;

    // 2. gvkWithDefaults(actual, scope.Kind); the into type's (internal) kind adds nothing.
    let (expected_group, expected_version) = parse_group_version(expected_group_version)
        .unwrap_or_else(|_| (String::new(), expected_group_version.to_string()));
    if kind.is_empty() {
        kind = expected_kind.to_string();
    }
    if version.is_empty() && group.is_empty() {
        group.clone_from(&expected_group);
        version.clone_from(&expected_version);
    }
    if version.is_empty() && group == expected_group {
        version.clone_from(&expected_version);
    }
    let cannot_handle = |error: &str| {
        format!(
            "{kind} in version {} cannot be handled as a {expected_kind}: {error}",
            go_quote(&version)
        )
    };
    if version.is_empty() {
        return Some(cannot_handle(&format!(
            "Object 'apiVersion' is missing in '{}'",
            go_lossy(body)
        )));
    }

    // 3. Scheme.New.
    let scheme = Scheme::for_group(&expected_group);
    let Some(created) = scheme_new(scheme, &group, &version, &kind) else {
        let error = if version == INTERNAL_VERSION {
            format!(
                "no kind {} is registered for the internal version of group {} in scheme {}",
                go_quote(&kind),
                go_quote(&group),
                go_quote(scheme.name())
            )
        } else {
            format!(
                "no kind {} is registered for version {} in scheme {}",
                go_quote(&kind),
                go_quote(&gv_string(&group, &version)),
                go_quote(scheme.name())
            )
        };
        return Some(cannot_handle(&error));
    };

    // 4. Unmarshal into the typed object of the body's kind.
    if created == Created::Api {
        if let Some(model) = kind_model(&group, &version, &kind) {
            let mut walk = TypeWalk::new(model, &tree, Wording::Json);
            let root = root_type(model, &group, &version, &kind);
            if let Err(fatal) = walk.value(0, &root) {
                return Some(cannot_handle(&fatal));
            }
            if let Some(saved) = walk.saved {
                return Some(cannot_handle(&saved));
            }
        }
    }

    // 5. Convert to the endpoint's internal type.
    let expected_internal = internal_package(&expected_group, expected_kind);
    let same_type = match created {
        Created::Meta => false,
        Created::Api | Created::Internal => {
            internal_package(&group, &kind) == expected_internal && kind == expected_kind
        }
    };
    if !same_type {
        let package = match created {
            Created::Meta => "v1".to_string(),
            Created::Api => version.clone(),
            Created::Internal => internal_package(&group, &kind),
        };
        return Some(cannot_handle(&format!(
            "converting ({package}.{kind}) to ({expected_internal}.{expected_kind}): unknown conversion"
        )));
    }

    // 6. handlers/create.go, update.go: AcceptsGroupVersion.
    if group != expected_group || version != expected_version {
        return Some(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            gv_string(&group, &version),
            gv_string(&expected_group, &expected_version)
        ));
    }
    None
}

/// The error kube's decoder reports when it turns `json`, an object of
/// `group`/`version`/`kind` that the server built (a patch's result), into
/// the typed object of that kind, or `None` when that decodes.
///
/// `json` must be syntactically valid (serde_json's output). With
/// [`Wording::Json`] the text is `sigs.k8s.io/json`'s, as for JSON and merge
/// patches (`jsonPatcher.applyPatchToCurrentObject` decodes the patched
/// bytes); with [`Wording::Unstructured`] the unstructured converter's, as
/// for strategic merge patches (`applyPatchToObject`). Kinds without a
/// vendored schema decode anything.
pub fn typed_decode_error(
    group: &str,
    version: &str,
    kind: &str,
    json: &[u8],
    wording: Wording,
) -> Option<String> {
    let model = kind_model(group, version, kind)?;
    let tree = Tree::parse(json)?;
    let root = root_type(model, group, version, kind);
    let mut walk = TypeWalk::new(model, &tree, wording);
    if let Err(fatal) = walk.value(0, &root) {
        return Some(fatal);
    }
    walk.saved
}

/// [`typed_decode_error`] of a JSON value, limited to what `footprint`
/// covers (see `Tree::from_value`), without serializing it.
pub fn typed_decode_error_of_value(
    group: &str,
    version: &str,
    kind: &str,
    value: &serde_json::Value,
    footprint: Option<&serde_json::Value>,
    wording: Wording,
) -> Option<String> {
    let model = kind_model(group, version, kind)?;
    let tree = Tree::from_value(value, footprint);
    let root = root_type(model, group, version, kind);
    let mut walk = TypeWalk::new(model, &tree, wording);
    if let Err(fatal) = walk.value(0, &root) {
        return Some(fatal);
    }
    walk.saved
}

/// The built-in schema model, when it has this group/version/kind.
fn kind_model(group: &str, version: &str, kind: &str) -> Option<&'static Model> {
    let model = crate::schema::builtin().ok()?;
    model.kind(group, version, kind).map(|_| model)
}

/// The struct a body of this kind decodes into (the root of the walk).
fn root_type(model: &Model, group: &str, version: &str, kind: &str) -> GoType {
    // Only `Struct.type_name` / `definition` matter for the walk.
    let definition = definition_name_for(model, group, version, kind);
    match definition {
        Some(definition) => {
            let (name, type_name) = go_type_of_definition(&definition);
            GoType::Struct {
                name,
                type_name,
                definition,
            }
        }
        None => GoType::Any,
    }
}

/// The vendored definition name carrying this group/version/kind, found by
/// trying the package paths kube's types live in.
fn definition_name_for(model: &Model, group: &str, version: &str, kind: &str) -> Option<String> {
    let target = model.definition_name(model.kind(group, version, kind)?)?;
    let short_group = match group {
        "" => "core".to_string(),
        "internal.apiserver.k8s.io" => "apiserverinternal".to_string(),
        other => other.split('.').next().unwrap_or(other).to_string(),
    };
    let candidates = [
        format!("io.k8s.api.{short_group}.{version}.{kind}"),
        format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"),
        format!("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"),
        format!("io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{kind}"),
    ];
    candidates.into_iter().find(|name| name == target)
}
