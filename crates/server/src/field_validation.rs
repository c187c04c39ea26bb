//! Server-side field validation (`?fieldValidation=Ignore|Warn|Strict`,
//! default `Warn`): the detection half, as kube-apiserver 1.34 does it.
//!
//! kube decodes a create/update body with the strict serializer when the
//! directive is `Warn` or `Strict` (`handlers/create.go`, `update.go`):
//! `sigs.k8s.io/json` `UnmarshalStrict` into the typed object collects
//! non-fatal *strict errors* while decoding, in body order:
//!
//! * `unknown field "spec.foo"`: a key the Go struct has no field for (JSON
//!   keys are case-sensitive); nothing inside an unknown field is looked at;
//! * `duplicate field "spec.paused"`: a struct field or map key given twice in
//!   one JSON object (a key that is both unknown and repeated is reported once,
//!   as unknown).
//!
//! Paths join struct fields and map keys with `.` and list indices as `[i]`
//! (`spec.template.spec.containers[0].bogus`, `metadata.labels.app`); each
//! distinct message is reported once, at most 100 of them. Values decoded by a
//! custom unmarshaller (`RawExtension`, `FieldsV1`, `Patch`, apiextensions'
//! `JSON` / `JSONSchemaPropsOr*`) are not looked into; empty structs
//! (`CustomResourceSubresourceStatus`, `StorageVersionSpec`) accept no field.
//!
//! Then (`runtime.NewStrictDecodingError`, `handlers/rest.go`):
//!
//! * `Strict` → 400 BadRequest, message [`strict_decoding_bad_request`]:
//!   `Deployment in version "v1" cannot be handled as a Deployment: strict
//!   decoding error: unknown field "spec.foo", duplicate field "spec.paused"`
//!   (errors joined with `", "`, in the order found). For PATCH the same text
//!   is the detail of a 422 Invalid on field `patch` (see [`strict_patch_detail`]).
//! * `Warn` → one `Warning: 299 - "<text>"` header per strict error
//!   ([`warnings`], [`warning_header_value`]), the object is stored without the
//!   unknown fields (duplicates: the last value wins);
//! * `Ignore` → the same object, silently.
//!
//! YAML bodies: kube first runs `YAMLToJSONStrict` on the raw body (its one
//! error, `error converting YAML to JSON: yaml: unmarshal errors:\n  line 10:
//! key "x" already set in map\n  ...`, comes first), then decodes the converted
//! JSON (whose keys are sorted, with no duplicates left), so unknown fields of
//! a YAML body come in sorted-key order ([`yaml_strict_errors`]). As warnings,
//! the YAML error is split into one warning per line
//! (`line 10: key "x" already set in map`).
//!
//! Custom resources decode into `map[string]interface{}`: every repeated key
//! at any depth is a duplicate ([`duplicate_fields`]); their unknown fields
//! come from pruning against the CRD schema ([`unknown_fields_in_schema`]).

use std::collections::HashSet;

use serde_json::{Map, Value};

use crate::openapi::OpenApi;
use crate::yaml::yaml_duplicate_error;

/// `metav1.FieldValidation*`, the `fieldValidation` query parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    Ignore,
    #[default]
    Warn,
    Strict,
}

impl FieldValidation {
    /// Parses the query parameter; absent or empty is `Warn`. An unknown value
    /// is returned as `Err(value)`: kube answers 422 Invalid on the options
    /// kind (`CreateOptions.meta.k8s.io "" is invalid: fieldValidation:
    /// Unsupported value: "bogus": supported values: "", "Ignore", "Strict",
    /// "Warn"`; `UpdateOptions`/`PatchOptions` likewise).
    pub fn parse(value: Option<&str>) -> Result<Self, String> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(FieldValidation::Warn),
            "Ignore" => Ok(FieldValidation::Ignore),
            "Strict" => Ok(FieldValidation::Strict),
            other => Err(other.to_string()),
        }
    }

    /// Whether kube decodes strictly (collects strict errors) at all.
    pub fn is_checked(self) -> bool {
        self != FieldValidation::Ignore
    }
}

/// Most strict errors `sigs.k8s.io/json` keeps.
const MAX_ERRORS: usize = 100;

/// Definitions kube decodes with a custom `UnmarshalJSON` (nothing inside is
/// checked), whatever their schema says.
const OPAQUE_DEFINITIONS: &[&str] = &[
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Patch",
];

const REF_PREFIX: &str = "#/definitions/";

/// What a schema says about the keys a value may hold.
#[derive(Clone, Copy)]
enum Shape<'a> {
    /// A Go struct: only these properties; with `preserve`, unknown keys are
    /// kept (a CRD schema's `x-kubernetes-preserve-unknown-fields`).
    Struct {
        properties: Option<&'a Map<String, Value>>,
        preserve: bool,
    },
    /// A Go map: any key, values of this schema.
    Map(&'a Value),
    /// A slice of this schema.
    List(&'a Value),
    /// Not looked into (scalars, custom unmarshallers, free-form JSON).
    Opaque,
    /// `map[string]interface{}` all the way down: only duplicates count.
    Any,
}

fn shape<'a>(openapi: &'a OpenApi, schema: &'a Value) -> Shape<'a> {
    let mut schema = schema;
    // Follow `$ref` chains (bounded: definitions may refer to each other).
    for _ in 0..8 {
        let Some(name) = schema
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX))
        else {
            break;
        };
        if OPAQUE_DEFINITIONS.contains(&name) {
            return Shape::Opaque;
        }
        match openapi.definition(name) {
            Ok(Some(definition)) => {
                if definition.get("properties").is_none()
                    && definition.get("additionalProperties").is_none()
                    && definition.get("type").and_then(Value::as_str) == Some("object")
                {
                    // An empty Go struct: no field is known.
                    return Shape::Struct {
                        properties: None,
                        preserve: false,
                    };
                }
                schema = definition;
            }
            _ => return Shape::Opaque,
        }
    }
    inline_shape(schema)
}

fn inline_shape(schema: &Value) -> Shape<'_> {
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        return Shape::Struct {
            properties: Some(properties),
            preserve,
        };
    }
    if let Some(additional) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return Shape::Map(additional);
    }
    if let Some(items) = schema.get("items").filter(|v| v.is_object()) {
        return Shape::List(items);
    }
    Shape::Opaque
}

/// Collected strict errors: kube's messages, each once, at most 100.
#[derive(Default)]
struct Errors {
    messages: Vec<String>,
    seen: HashSet<String>,
}

impl Errors {
    fn push(&mut self, kind: &str, path: &str, key: &str) {
        if self.messages.len() >= MAX_ERRORS {
            return;
        }
        let full = if path.is_empty() {
            key.to_string()
        } else {
            format!("{path}.{key}")
        };
        let message = format!("{kind} {}", go_quote(&full));
        if self.seen.insert(message.clone()) {
            self.messages.push(message);
        }
    }
}

/// Go's `strconv.Quote` (the `%q` of sigs.k8s.io/json's messages).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c == ' ' || !(c.is_control() || c.is_whitespace()) => out.push(c),
            c if (c as u32) <= 0xFFFF => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push_str(&format!("\\U{:08x}", c as u32)),
        }
    }
    out.push('"');
    out
}

fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

// ---------------------------------------------------------------------------
// Over a decoded object (sorted keys).

/// The `unknown field "..."` messages for `object`, an object of this
/// group/version/kind, in the order kube finds them in a body whose keys are
/// sorted (serde_json's order; exactly kube's order for YAML bodies, whose
/// converted JSON has sorted keys; a JSON body's own order is only visible in
/// the raw bytes: use [`strict_errors`]). Empty when the kind has no vendored
/// schema (custom resources: see [`unknown_fields_in_schema`]).
pub fn unknown_fields(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    object: &Value,
) -> Vec<String> {
    let Ok(Some(root)) = openapi.schema_for_kind(group, version, kind) else {
        return Vec::new();
    };
    let mut errors = Errors::default();
    let mut path = String::new();
    walk_value(
        openapi,
        shape(openapi, root),
        object,
        &mut path,
        &mut errors,
        None,
        0,
    );
    errors.messages
}

/// Removes from `object` every field [`unknown_fields`] reports (what kube's
/// typed decode leaves out under `Warn` and `Ignore`) and returns their
/// messages.
pub fn drop_unknown_fields(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    object: &mut Value,
) -> Vec<String> {
    let Ok(Some(root)) = openapi.schema_for_kind(group, version, kind) else {
        return Vec::new();
    };
    let mut errors = Errors::default();
    let mut path = String::new();
    let mut dropped = Vec::new();
    walk_value(
        openapi,
        shape(openapi, root),
        object,
        &mut path,
        &mut errors,
        Some(&mut dropped),
        0,
    );
    for pointer in dropped.iter().rev() {
        remove_at(object, pointer);
    }
    errors.messages
}

/// As [`unknown_fields`] against an inline OpenAPI v3 schema (a CRD
/// version's `openAPIV3Schema`: `properties`, `additionalProperties`,
/// `items`, `x-kubernetes-preserve-unknown-fields`); `metadata` is checked
/// against ObjectMeta, `apiVersion`/`kind` are always known, as kube's
/// pruning does. `$ref`s resolve against the built-in definitions.
pub fn unknown_fields_in_schema(openapi: &OpenApi, schema: &Value, object: &Value) -> Vec<String> {
    let mut errors = Errors::default();
    let Some(fields) = object.as_object() else {
        return Vec::new();
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    let preserve = schema
        .get("x-kubernetes-preserve-unknown-fields")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    for (key, value) in fields {
        let mut path = key.clone();
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                if let Ok(Some(meta)) =
                    openapi.definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
                {
                    walk_value(
                        openapi,
                        shape(openapi, meta),
                        value,
                        &mut path,
                        &mut errors,
                        None,
                        1,
                    );
                }
            }
            _ => match properties.and_then(|p| p.get(key)) {
                Some(child) => walk_value(
                    openapi,
                    shape(openapi, child),
                    value,
                    &mut path,
                    &mut errors,
                    None,
                    1,
                ),
                None if preserve => {}
                None => errors.push("unknown field", "", key),
            },
        }
    }
    errors.messages
}

/// A JSON pointer-ish location: keys and indices.
#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

fn remove_at(object: &mut Value, pointer: &[Step]) {
    let Some((last, parents)) = pointer.split_last() else {
        return;
    };
    let mut current = object;
    for step in parents {
        let next = match (step, current) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        };
        match next {
            Some(next) => current = next,
            None => return,
        }
    }
    if let (Step::Key(k), Value::Object(map)) = (last, current) {
        map.remove(k);
    }
}

/// Deepest nesting walked; deeper values are skipped unchecked (kube's own
/// JSON limit is 10000, but serde_json's parser refuses bodies deeper than
/// 128 and YAML bodies stop at `crate::yaml::MAX_DEPTH`).
const MAX_WALK_DEPTH: usize = 256;

fn walk_value(
    openapi: &OpenApi,
    shape_: Shape<'_>,
    value: &Value,
    path: &mut String,
    errors: &mut Errors,
    mut dropped: Option<&mut Vec<Vec<Step>>>,
    depth: usize,
) {
    #[allow(clippy::too_many_arguments)]
    fn inner(
        openapi: &OpenApi,
        shape_: Shape<'_>,
        value: &Value,
        path: &mut String,
        errors: &mut Errors,
        dropped: &mut Option<&mut Vec<Vec<Step>>>,
        steps: &mut Vec<Step>,
        depth: usize,
    ) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        match (shape_, value) {
            (
                Shape::Struct {
                    properties,
                    preserve,
                },
                Value::Object(map),
            ) => {
                for (key, child) in map {
                    let len = path.len();
                    match properties.and_then(|p| p.get(key)) {
                        Some(schema) => {
                            push_key(path, key);
                            steps.push(Step::Key(key.clone()));
                            inner(
                                openapi,
                                shape(openapi, schema),
                                child,
                                path,
                                errors,
                                dropped,
                                steps,
                                depth + 1,
                            );
                            steps.pop();
                        }
                        None if preserve => {}
                        None => {
                            errors.push("unknown field", path, key);
                            if let Some(dropped) = dropped.as_deref_mut() {
                                let mut at = steps.clone();
                                at.push(Step::Key(key.clone()));
                                dropped.push(at);
                            }
                        }
                    }
                    path.truncate(len);
                }
            }
            (Shape::Map(schema), Value::Object(map)) => {
                let child_shape = shape(openapi, schema);
                for (key, child) in map {
                    let len = path.len();
                    push_key(path, key);
                    steps.push(Step::Key(key.clone()));
                    inner(
                        openapi,
                        child_shape,
                        child,
                        path,
                        errors,
                        dropped,
                        steps,
                        depth + 1,
                    );
                    steps.pop();
                    path.truncate(len);
                }
            }
            (Shape::List(schema), Value::Array(items)) => {
                let child_shape = shape(openapi, schema);
                for (index, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    steps.push(Step::Index(index));
                    inner(
                        openapi,
                        child_shape,
                        item,
                        path,
                        errors,
                        dropped,
                        steps,
                        depth + 1,
                    );
                    steps.pop();
                    path.truncate(len);
                }
            }
            _ => {}
        }
    }
    let mut steps = Vec::new();
    inner(
        openapi,
        shape_,
        value,
        path,
        errors,
        &mut dropped,
        &mut steps,
        depth,
    );
}

// ---------------------------------------------------------------------------
// Over the raw JSON body (kube's order, duplicates visible).

/// kube's strict errors for a JSON `body` decoded as this group/version/kind:
/// unknown and duplicate fields interleaved in body order, each message once,
/// at most 100 (`sigs.k8s.io/json` `UnmarshalStrict` into the typed object).
/// Kinds without a vendored schema (custom resources) get
/// [`duplicate_fields`]. The body should already be known to be valid JSON
/// (kube reports syntax errors first, fatally); on malformed JSON the errors
/// found before the fault are returned.
pub fn strict_errors(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    body: &[u8],
) -> Vec<String> {
    match openapi.schema_for_kind(group, version, kind) {
        Ok(Some(root)) => scan(openapi, shape(openapi, root), body),
        _ => duplicate_fields(body),
    }
}

/// `duplicate field "..."` for every key repeated within one JSON object of
/// `body`, at any depth, in body order (what kube reports for a body decoded
/// into `map[string]interface{}`, i.e. custom resources).
pub fn duplicate_fields(body: &[u8]) -> Vec<String> {
    // The schema is never consulted in `Any` mode.
    scan_any(body)
}

/// The strict errors kube reports for a YAML body of this kind: first the
/// `YAMLToJSONStrict` error for duplicate keys (one message, several lines),
/// then [`unknown_fields`] of the converted object (`converted`, from
/// `crate::yaml::yaml_to_json`), in sorted-key order.
pub fn yaml_strict_errors(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    body: &[u8],
    converted: &Value,
) -> Vec<String> {
    let mut errors = Vec::new();
    if let Some(duplicates) = yaml_duplicate_error(body) {
        errors.push(duplicates);
    }
    errors.extend(unknown_fields(openapi, group, version, kind, converted));
    errors
}

struct Scanner<'b> {
    body: &'b [u8],
    at: usize,
    errors: Errors,
}

fn scan(openapi: &OpenApi, root: Shape<'_>, body: &[u8]) -> Vec<String> {
    let mut scanner = Scanner {
        body,
        at: 0,
        errors: Errors::default(),
    };
    let mut path = String::new();
    scanner.skip_ws();
    let _ = scanner.value(Some(openapi), root, &mut path, 0);
    scanner.errors.messages
}

fn scan_any(body: &[u8]) -> Vec<String> {
    let mut scanner = Scanner {
        body,
        at: 0,
        errors: Errors::default(),
    };
    let mut path = String::new();
    scanner.skip_ws();
    let _ = scanner.value(None, Shape::Any, &mut path, 0);
    scanner.errors.messages
}

/// Malformed JSON (stop scanning).
struct Malformed;

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.body.get(self.at).copied()
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn expect(&mut self, byte: u8) -> Result<(), Malformed> {
        self.skip_ws();
        if self.peek() == Some(byte) {
            self.at += 1;
            Ok(())
        } else {
            Err(Malformed)
        }
    }

    /// A JSON string (the opening quote at `self.at`), unescaped as Go does
    /// (invalid escapes or surrogates become U+FFFD).
    fn string(&mut self) -> Result<String, Malformed> {
        if self.peek() != Some(b'"') {
            return Err(Malformed);
        }
        self.at += 1;
        let mut out: Vec<u8> = Vec::new();
        loop {
            let byte = self.peek().ok_or(Malformed)?;
            self.at += 1;
            match byte {
                b'"' => break,
                b'\\' => {
                    let escaped = self.peek().ok_or(Malformed)?;
                    self.at += 1;
                    let c = match escaped {
                        b'"' => '"',
                        b'\\' => '\\',
                        b'/' => '/',
                        b'b' => '\u{8}',
                        b'f' => '\u{c}',
                        b'n' => '\n',
                        b'r' => '\r',
                        b't' => '\t',
                        b'u' => {
                            let first = self.hex4()?;
                            if (0xD800..0xDC00).contains(&first)
                                && self.body.get(self.at..self.at + 2) == Some(b"\\u")
                            {
                                let save = self.at;
                                self.at += 2;
                                let second = self.hex4()?;
                                if (0xDC00..0xE000).contains(&second) {
                                    let v = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00);
                                    char::from_u32(v).unwrap_or('\u{FFFD}')
                                } else {
                                    self.at = save;
                                    '\u{FFFD}'
                                }
                            } else {
                                char::from_u32(first).unwrap_or('\u{FFFD}')
                            }
                        }
                        _ => return Err(Malformed),
                    };
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
                other => out.push(other),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn hex4(&mut self) -> Result<u32, Malformed> {
        let digits = self.body.get(self.at..self.at + 4).ok_or(Malformed)?;
        let text = std::str::from_utf8(digits).map_err(|_| Malformed)?;
        let v = u32::from_str_radix(text, 16).map_err(|_| Malformed)?;
        self.at += 4;
        Ok(v)
    }

    /// Skips one value without looking inside (iteratively).
    fn skip_value(&mut self) -> Result<(), Malformed> {
        self.skip_ws();
        let mut depth = 0usize;
        loop {
            match self.peek().ok_or(Malformed)? {
                b'"' => {
                    self.at += 1;
                    loop {
                        match self.peek().ok_or(Malformed)? {
                            b'\\' => self.at += 2,
                            b'"' => {
                                self.at += 1;
                                break;
                            }
                            _ => self.at += 1,
                        }
                    }
                }
                b'{' | b'[' => {
                    depth += 1;
                    self.at += 1;
                }
                b'}' | b']' => {
                    depth = depth.checked_sub(1).ok_or(Malformed)?;
                    self.at += 1;
                }
                b',' | b':' | b' ' | b'\t' | b'\n' | b'\r' => self.at += 1,
                _ => {
                    // A literal: number, true, false, null.
                    while let Some(b) = self.peek() {
                        if matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r' | b':') {
                            break;
                        }
                        self.at += 1;
                    }
                }
            }
            if depth == 0 {
                return Ok(());
            }
        }
    }

    fn value<'s>(
        &mut self,
        openapi: Option<&'s OpenApi>,
        shape_: Shape<'s>,
        path: &mut String,
        depth: usize,
    ) -> Result<(), Malformed> {
        self.skip_ws();
        if depth > MAX_WALK_DEPTH {
            return self.skip_value();
        }
        let child_shape = |schema: &'s Value| -> Shape<'s> {
            match openapi {
                Some(openapi) => shape(openapi, schema),
                None => Shape::Any,
            }
        };
        match (self.peek(), shape_) {
            (Some(b'{'), Shape::Struct { .. } | Shape::Map(_) | Shape::Any) => {
                self.at += 1;
                let mut seen: HashSet<String> = HashSet::new();
                self.skip_ws();
                if self.peek() == Some(b'}') {
                    self.at += 1;
                    return Ok(());
                }
                loop {
                    self.skip_ws();
                    let key = self.string()?;
                    self.expect(b':')?;
                    let len = path.len();
                    match shape_ {
                        Shape::Struct {
                            properties,
                            preserve,
                        } => match properties.and_then(|p| p.get(&key)) {
                            Some(schema) => {
                                if !seen.insert(key.clone()) {
                                    self.errors.push("duplicate field", path, &key);
                                }
                                push_key(path, &key);
                                self.value(openapi, child_shape(schema), path, depth + 1)?;
                            }
                            None => {
                                if !preserve {
                                    self.errors.push("unknown field", path, &key);
                                }
                                self.skip_value()?;
                            }
                        },
                        Shape::Map(schema) => {
                            if !seen.insert(key.clone()) {
                                self.errors.push("duplicate field", path, &key);
                            }
                            push_key(path, &key);
                            self.value(openapi, child_shape(schema), path, depth + 1)?;
                        }
                        _ => {
                            if !seen.insert(key.clone()) {
                                self.errors.push("duplicate field", path, &key);
                            }
                            push_key(path, &key);
                            self.value(openapi, Shape::Any, path, depth + 1)?;
                        }
                    }
                    path.truncate(len);
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b'}') => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Malformed),
                    }
                }
            }
            (Some(b'['), Shape::List(_) | Shape::Any) => {
                let item_shape = match shape_ {
                    Shape::List(schema) => child_shape(schema),
                    _ => Shape::Any,
                };
                self.at += 1;
                self.skip_ws();
                if self.peek() == Some(b']') {
                    self.at += 1;
                    return Ok(());
                }
                let mut index = 0usize;
                loop {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    self.value(openapi, item_shape, path, depth + 1)?;
                    path.truncate(len);
                    index += 1;
                    self.skip_ws();
                    match self.peek() {
                        Some(b',') => self.at += 1,
                        Some(b']') => {
                            self.at += 1;
                            return Ok(());
                        }
                        _ => return Err(Malformed),
                    }
                }
            }
            _ => self.skip_value(),
        }
    }
}

// ---------------------------------------------------------------------------
// Messages and headers.

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RESOURCES;
    use serde_json::json;

    fn openapi() -> OpenApi {
        OpenApi::new(RESOURCES)
    }

    fn s(list: &[&str]) -> Vec<String> {
        list.iter().map(|x| x.to_string()).collect()
    }

    /// kube's test/integration/apiserver/field_validation_test.go invalidBodyJSON.
    const INVALID_DEPLOYMENT: &str = r#"
	{
		"apiVersion": "apps/v1",
		"kind": "Deployment",
		"metadata": {
			"name": "test",
			"labels": {"app": "nginx"}
		},
		"spec": {
			"unknown1": "val1",
			"unknownDupe": "valDupe",
			"unknownDupe": "valDupe2",
			"paused": true,
			"paused": false,
			"selector": {
				"matchLabels": {
					"app": "nginx"
				}
			},
			"template": {
				"metadata": {
					"labels": {
						"app": "nginx"
					}
				},
				"spec": {
					"containers": [{
						"name":  "nginx",
						"image": "nginx:latest",
						"unknownNested": "val1",
						"imagePullPolicy": "Always",
						"imagePullPolicy": "Never"
					}]
				}
			}
		}
	}"#;

    #[test]
    fn deployment_fixture_in_body_order() {
        let api = openapi();
        let errors = strict_errors(
            &api,
            "apps",
            "v1",
            "Deployment",
            INVALID_DEPLOYMENT.as_bytes(),
        );
        assert_eq!(
            errors,
            s(&[
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
                r#"duplicate field "spec.paused""#,
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"duplicate field "spec.template.spec.containers[0].imagePullPolicy""#,
            ])
        );
        assert_eq!(
            strict_decoding_bad_request("Deployment", "v1", "Deployment", &errors),
            "Deployment in version \"v1\" cannot be handled as a Deployment: strict decoding error: \
             unknown field \"spec.unknown1\", unknown field \"spec.unknownDupe\", duplicate field \"spec.paused\", \
             unknown field \"spec.template.spec.containers[0].unknownNested\", \
             duplicate field \"spec.template.spec.containers[0].imagePullPolicy\""
        );
        assert_eq!(
            warning_header_value(&errors[0]).as_deref(),
            Some(r#"299 - "unknown field \"spec.unknown1\"""#)
        );
    }

    #[test]
    fn sorted_walk_and_drop() {
        let api = openapi();
        let mut object: Value = serde_json::from_str(INVALID_DEPLOYMENT).expect("json");
        let found = unknown_fields(&api, "apps", "v1", "Deployment", &object);
        // serde_json keeps keys sorted: template < unknown1 < unknownDupe.
        assert_eq!(
            found,
            s(&[
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
            ])
        );
        let dropped = drop_unknown_fields(&api, "apps", "v1", "Deployment", &mut object);
        assert_eq!(dropped, found);
        assert!(object["spec"].get("unknown1").is_none());
        assert!(object["spec"]["template"]["spec"]["containers"][0]
            .get("unknownNested")
            .is_none());
        assert_eq!(object["spec"]["paused"], json!(false));
        assert!(unknown_fields(&api, "apps", "v1", "Deployment", &object).is_empty());
    }

    #[test]
    fn configmap_metadata_and_maps() {
        let api = openapi();
        let body = br#"{"apiVersion":"v1","kind":"ConfigMap","Metadata":{},"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"},"bogus":1,"managedFields":[{"fieldsV1":{"f:a":{},"f:a":{}}}]},"data":{"k":"v","k":"w"},"spec":{"foo":1}}"#;
        assert_eq!(
            strict_errors(&api, "", "v1", "ConfigMap", body),
            s(&[
                r#"unknown field "Metadata""#,
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "metadata.labels.x""#,
                r#"unknown field "metadata.bogus""#,
                r#"duplicate field "data.k""#,
                r#"unknown field "spec""#,
            ])
        );
        // Custom resources: duplicates everywhere, no unknown fields.
        assert_eq!(
            strict_errors(&api, "example.com", "v1", "Widget", body),
            s(&[
                r#"duplicate field "metadata.name""#,
                r#"duplicate field "metadata.labels.x""#,
                r#"duplicate field "metadata.managedFields[0].fieldsV1.f:a""#,
                r#"duplicate field "data.k""#,
            ])
        );
    }

    #[test]
    fn top_level_duplicates_dedupe_and_opaque_values() {
        let api = openapi();
        let body = br#"{"kind":"ControllerRevision","kind":"ControllerRevision","data":{"anything":{"goes":1,"goes":2}},"x":1,"x":2,"revision":1}"#;
        assert_eq!(
            strict_errors(&api, "apps", "v1", "ControllerRevision", body),
            s(&[r#"duplicate field "kind""#, r#"unknown field "x""#])
        );
        assert_eq!(
            duplicate_fields(br#"{"a":[{"b":1,"b":2},{"c":{"d":1,"d":1}}],"a":null}"#),
            s(&[
                r#"duplicate field "a[0].b""#,
                r#"duplicate field "a[1].c.d""#,
                r#"duplicate field "a""#,
            ])
        );
    }

    #[test]
    fn empty_structs_and_crd_schemas() {
        let api = openapi();
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "widgets.example.com"},
            "spec": {
                "group": "example.com",
                "names": {"plural": "widgets", "kind": "Widget"},
                "scope": "Namespaced",
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "subresources": {"status": {"bogus": true}},
                    "schema": {"openAPIV3Schema": {
                        "type": "object",
                        "properties": {"spec": {"type": "object", "x-bogus": 1,
                            "additionalProperties": {"type": "string"}}},
                        "default": {"free": "form"},
                    }},
                }],
            },
        });
        assert_eq!(
            unknown_fields(
                &api,
                "apiextensions.k8s.io",
                "v1",
                "CustomResourceDefinition",
                &crd
            ),
            s(&[
                r#"unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.x-bogus""#,
                r#"unknown field "spec.versions[0].subresources.status.bogus""#,
            ])
        );
        let schema = json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"known": {"type": "string"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
        }});
        let object = json!({"apiVersion": "example.com/v1", "kind": "Widget",
            "metadata": {"name": "w", "nope": 1},
            "spec": {"known": "x", "unknown": 1, "free": {"anything": {"at": "all"}}},
            "status": {}});
        assert_eq!(
            unknown_fields_in_schema(&api, &schema, &object),
            s(&[
                r#"unknown field "metadata.nope""#,
                r#"unknown field "spec.unknown""#,
                r#"unknown field "status""#,
            ])
        );
    }

    #[test]
    fn yaml_bodies_as_kube_reports_them() {
        let api = openapi();
        let body = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: test\n  labels:\n    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:latest\n        unknownNested: val1\n        imagePullPolicy: Always\n        imagePullPolicy: Never";
        let converted = crate::yaml::yaml_to_json(body.as_bytes()).expect("yaml");
        let errors = yaml_strict_errors(
            &api,
            "apps",
            "v1",
            "Deployment",
            body.as_bytes(),
            &converted,
        );
        assert_eq!(
            errors,
            s(&[
                "error converting YAML to JSON: yaml: unmarshal errors:\n  line 10: key \"unknownDupe\" already set in map\n  line 12: key \"paused\" already set in map\n  line 26: key \"imagePullPolicy\" already set in map",
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
            ])
        );
        // The order kube's integration test expects for Warn.
        assert_eq!(
            warnings(&errors),
            s(&[
                r#"line 10: key "unknownDupe" already set in map"#,
                r#"line 12: key "paused" already set in map"#,
                r#"line 26: key "imagePullPolicy" already set in map"#,
                r#"unknown field "spec.template.spec.containers[0].unknownNested""#,
                r#"unknown field "spec.unknown1""#,
                r#"unknown field "spec.unknownDupe""#,
            ])
        );
    }

    #[test]
    fn directives_and_headers() {
        assert_eq!(FieldValidation::parse(None), Ok(FieldValidation::Warn));
        assert_eq!(FieldValidation::parse(Some("")), Ok(FieldValidation::Warn));
        assert_eq!(
            FieldValidation::parse(Some("Strict")),
            Ok(FieldValidation::Strict)
        );
        assert_eq!(
            FieldValidation::parse(Some("Ignore")),
            Ok(FieldValidation::Ignore)
        );
        assert_eq!(
            FieldValidation::parse(Some("strict")),
            Err("strict".to_string())
        );
        assert_eq!(warning_header_value(""), None);
        assert_eq!(
            warning_header_value("a\\b\nc").as_deref(),
            Some(r#"299 - "a\\b c""#)
        );
        assert_eq!(
            strict_decoding_error(&s(&[
                r#"duplicate field "metadata.name""#,
                r#"unknown field "dta""#
            ])),
            r#"strict decoding error: duplicate field "metadata.name", unknown field "dta""#
        );
    }

    #[test]
    fn malformed_and_hostile_bodies_do_not_panic() {
        let api = openapi();
        for body in [
            &b""[..],
            b"{",
            b"{\"a\"",
            b"{\"a\":",
            b"[",
            b"\"\\u12",
            b"{\"a\":1,}",
            b"}}}}",
            b"{\"spec\":{\"x\":[1,{]}}",
        ] {
            let _ = strict_errors(&api, "apps", "v1", "Deployment", body);
            let _ = duplicate_fields(body);
        }
        let deep = format!("{}{}", "[".repeat(50_000), "]".repeat(50_000));
        assert!(duplicate_fields(deep.as_bytes()).is_empty());
        let many: String = (0..300)
            .map(|i| format!("\"k{i}\":1,\"k{i}\":2,"))
            .collect();
        let body = format!("{{{many}\"z\":0}}");
        assert_eq!(duplicate_fields(body.as_bytes()).len(), MAX_ERRORS);
    }
}
