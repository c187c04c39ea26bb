//! `/openapi/v2` as protobuf: the gnostic `openapi.v2.Document` message
//! (`github.com/google/gnostic-models/openapiv2/OpenAPIv2.proto`) that
//! kube-openapi `pkg/handler` serves for
//! `Accept: application/com.github.proto-openapi.spec.v2[@.]v1.0+protobuf`
//! and that client-go's `discovery.OpenAPISchema()` (kubectl <= 1.28
//! `explain`, client-side validation, the `fieldValidation` query-parameter
//! check) parses.
//!
//! kube converts the served JSON (`handler.ToProtoBinary`: gnostic
//! `openapi_v2.ParseDocument` then `proto.Marshal`); this module does the
//! same conversion directly from the JSON value:
//!
//! - every message is written field by field in field-number order, proto3
//!   style (empty strings, `false`, `0` omitted; present sub-messages always
//!   written, even when empty; oneof members always written);
//! - map-like objects become repeated `Named*` pairs in JSON key order;
//! - `x-*` keys become `NamedAny{name, Any{yaml}}`, the YAML text being what
//!   gnostic's `compiler.Marshal` (yaml.v3, block style, 4-space indent)
//!   would print for the value;
//! - oneofs are decided as gnostic's `New*` constructors decide them
//!   (`$ref` -> `JsonReference`, `in: body` -> `BodyParameter`, `in` picks the
//!   non-body sub-schema, `type: file` -> `FileSchema`, a boolean
//!   `additionalProperties` -> `boolean`).
//!
//! Keys gnostic does not allow (it would refuse the whole document) are
//! skipped and reported by [`encode`], so tests can keep the JSON document
//! within what gnostic accepts.
//!
//! Content negotiation ([`negotiate`]) follows kube-openapi
//! `RegisterOpenAPIVersionedService` with `munnerz/goautoneg`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use super::{Document, OpenApiError};

/// The Content-Type kube answers protobuf requests with (for both accepted
/// spellings: kube-openapi's `ReturnedContentType`).
pub const CONTENT_TYPE: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";
/// The deprecated spelling client-go (`openAPIV2mimePb`) still asks for.
pub const CONTENT_TYPE_DEPRECATED: &str =
    "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/// The JSON Content-Type.
pub const JSON_CONTENT_TYPE: &str = "application/json";

/// Which representation of `/openapi/v2` to serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Format {
    Json,
    Protobuf,
}

impl V2Format {
    pub fn content_type(self) -> &'static str {
        match self {
            V2Format::Json => JSON_CONTENT_TYPE,
            V2Format::Protobuf => CONTENT_TYPE,
        }
    }
}

// ---------------------------------------------------------------------------
// Content negotiation (kube-openapi pkg/handler + munnerz/goautoneg)
// ---------------------------------------------------------------------------

/// One `Accept` clause as goautoneg parses it (parameters other than `q`
/// play no part in kube-openapi's matching).
#[derive(Debug, Clone, PartialEq)]
struct Clause<'a> {
    kind: &'a str,
    subtype: &'a str,
    q: f32,
}

/// `goautoneg.ParseAccept`: split on `,` and `;`, trim spaces only, `*`
/// alone means `*/*`, anything else without exactly one `/` is dropped; an
/// unparsable `q` is 0 (and, as in goautoneg, a 0 clause is kept).
fn parse_accept(header: &str) -> Vec<Clause<'_>> {
    let mut clauses = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or("");
        let halves: Vec<&str> = media.split('/').collect();
        let kind = halves[0].trim_matches(' ');
        let subtype = match halves.len() {
            1 if kind == "*" => "*",
            2 => halves[1].trim_matches(' '),
            _ => continue,
        };
        let mut q = 1.0f32;
        for param in pieces {
            let Some((token, value)) = param.split_once('=') else {
                continue;
            };
            if token.trim_matches(' ') == "q" {
                q = value.parse::<f32>().unwrap_or(0.0);
            }
        }
        clauses.push(Clause { kind, subtype, q });
    }
    // `sort.Sort` is an insertion sort for the short lists Accept headers
    // are (<= 12 elements); reproduce it, with goautoneg's (non-strict) Less.
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// The representation kube-openapi would serve for this `Accept` header
/// (first header line; absent or empty means `*/*`), `None` for a 406.
/// Offers in kube's order: JSON, the deprecated protobuf spelling, protobuf.
pub fn negotiate(accept: Option<&str>) -> Option<V2Format> {
    const OFFERS: [(&str, V2Format); 3] = [
        ("json", V2Format::Json),
        (
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
            V2Format::Protobuf,
        ),
        (
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
            V2Format::Protobuf,
        ),
    ];
    let header = match accept {
        Some(header) if !header.is_empty() => header,
        _ => "*/*",
    };
    for clause in parse_accept(header) {
        for (subtype, format) in OFFERS {
            if clause.kind != "application" && clause.kind != "*" {
                continue;
            }
            if clause.subtype != subtype && clause.subtype != "*" {
                continue;
            }
            return Some(format);
        }
    }
    None
}

// ---------------------------------------------------------------------------
// The served document
// ---------------------------------------------------------------------------

/// The protobuf form of the served JSON document. kube-openapi reuses the
/// JSON document's ETag for the protobuf one ("We can re-use the same etag
/// as json because of the Vary header"), so `etag` and `hash` are the JSON
/// document's; `json` holds the protobuf bytes.
pub(crate) fn document(json: &Document) -> Result<Document, OpenApiError> {
    let value: Value = serde_json::from_slice(&json.json)
        .map_err(|err| OpenApiError::Serialize(err.to_string()))?;
    let encoded = encode(&value)?;
    if !encoded.rejected.is_empty() {
        // gnostic would refuse such a document outright; we serve what we can.
        tracing::warn!(rejected = ?encoded.rejected, "OpenAPI v2 keys with no protobuf form skipped");
    }
    Ok(Document {
        json: bytes::Bytes::from(encoded.bytes),
        etag: json.etag.clone(),
        hash: json.hash.clone(),
    })
}

/// An encoded document and the keys gnostic would have rejected.
#[derive(Debug)]
pub(crate) struct Encoded {
    pub bytes: Vec<u8>,
    /// `Message.key` for every key (or value) gnostic does not accept.
    pub rejected: Vec<String>,
}

/// Encodes a swagger 2.0 JSON document as `openapi.v2.Document`.
pub(crate) fn encode(document: &Value) -> Result<Encoded, OpenApiError> {
    let Value::Object(root) = document else {
        return Err(OpenApiError::Serialize(
            "OpenAPI v2 document is not a JSON object".into(),
        ));
    };
    let mut encoder = Encoder::default();
    let message = encoder.document(root);
    Ok(Encoded {
        bytes: message.0,
        rejected: encoder.rejected,
    })
}

// ---------------------------------------------------------------------------
// Protobuf wire writer
// ---------------------------------------------------------------------------

const VARINT: u8 = 0;
const FIXED64: u8 = 1;
const LEN: u8 = 2;

/// One message being written (sub-messages are written into their own
/// buffer, then embedded with their length).
#[derive(Debug, Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut value: u64) {
        while value >= 0x80 {
            self.0.push((value as u8 & 0x7f) | 0x80);
            value >>= 7;
        }
        self.0.push(value as u8);
    }

    fn key(&mut self, tag: u32, wire: u8) {
        self.varint((u64::from(tag) << 3) | u64::from(wire));
    }

    fn len_field(&mut self, tag: u32, bytes: &[u8]) {
        self.key(tag, LEN);
        self.varint(bytes.len() as u64);
        self.0.extend_from_slice(bytes);
    }

    /// A proto3 `string`: omitted when empty.
    fn string(&mut self, tag: u32, value: &str) {
        if !value.is_empty() {
            self.len_field(tag, value.as_bytes());
        }
    }

    /// One element of a `repeated string` (written even when empty).
    fn repeated_string(&mut self, tag: u32, value: &str) {
        self.len_field(tag, value.as_bytes());
    }

    /// A proto3 `bool`: omitted when false.
    fn boolean(&mut self, tag: u32, value: bool) {
        if value {
            self.oneof_bool(tag, true);
        }
    }

    /// A `bool` oneof member: always written.
    fn oneof_bool(&mut self, tag: u32, value: bool) {
        self.key(tag, VARINT);
        self.0.push(u8::from(value));
    }

    /// A proto3 `int64`: omitted when 0, negatives as 10-byte varints.
    fn int64(&mut self, tag: u32, value: i64) {
        if value != 0 {
            self.key(tag, VARINT);
            self.varint(value as u64);
        }
    }

    /// A proto3 `double`: omitted when +0.0.
    fn double(&mut self, tag: u32, value: f64) {
        if value.to_bits() != 0 {
            self.key(tag, FIXED64);
            self.0.extend_from_slice(&value.to_le_bytes());
        }
    }

    /// An embedded message: always written once present.
    fn message(&mut self, tag: u32, message: Msg) {
        self.len_field(tag, &message.0);
    }
}

// ---------------------------------------------------------------------------
// JSON -> gnostic messages
// ---------------------------------------------------------------------------

type Obj = Map<String, Value>;

/// The common run of fields shared by `PrimitivesItems`, `Header` and the
/// non-body parameter sub-schemas, from `type` to `multipleOf`.
const PRIMITIVE_KEYS: &[&str] = &[
    "type",
    "format",
    "items",
    "collectionFormat",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "enum",
    "multipleOf",
];

const SCHEMA_KEYS: &[&str] = &[
    "$ref",
    "additionalProperties",
    "allOf",
    "default",
    "description",
    "discriminator",
    "enum",
    "example",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "externalDocs",
    "format",
    "items",
    "maxItems",
    "maxLength",
    "maxProperties",
    "maximum",
    "minItems",
    "minLength",
    "minProperties",
    "minimum",
    "multipleOf",
    "pattern",
    "properties",
    "readOnly",
    "required",
    "title",
    "type",
    "uniqueItems",
    "xml",
];

fn is_extension(key: &str) -> bool {
    key.starts_with("x-")
}

/// `compiler.StringForScalarNode`: strings, integers (their text) and null ("").
fn scalar_string(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::String(text) => Some(Cow::Borrowed(text)),
        Value::Number(number) if number.is_i64() || number.is_u64() => {
            Some(Cow::Owned(number.to_string()))
        }
        Value::Null => Some(Cow::Borrowed("")),
        _ => None,
    }
}

#[derive(Debug, Default)]
struct Encoder {
    rejected: Vec<String>,
}

impl Encoder {
    fn reject(&mut self, message: &str, key: &str) {
        self.rejected.push(format!("{message}.{key}"));
    }

    /// gnostic's `InvalidKeysInMap` (allowed names plus `^x-`).
    fn check_keys(&mut self, message: &str, obj: &Obj, allowed: &[&str]) {
        for key in obj.keys() {
            if !is_extension(key) && !allowed.contains(&key.as_str()) {
                self.reject(message, key);
            }
        }
    }

    fn object<'v>(&mut self, message: &str, key: &str, value: &'v Value) -> Option<&'v Obj> {
        match value {
            Value::Object(obj) => Some(obj),
            _ => {
                self.reject(message, key);
                None
            }
        }
    }

    // -- typed field writers (value read from `obj[key]`) --------------------

    fn string_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        if let Some(value) = obj.get(key) {
            match scalar_string(value) {
                Some(text) => m.string(tag, &text),
                None => self.reject(message, key),
            }
        }
    }

    fn bool_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Bool(value)) => m.boolean(tag, *value),
            Some(_) => self.reject(message, key),
        }
    }

    fn int_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Number(number)) if number.is_i64() => {
                m.int64(tag, number.as_i64().unwrap_or_default());
            }
            Some(_) => self.reject(message, key),
        }
    }

    fn double_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Number(number)) => m.double(tag, number.as_f64().unwrap_or_default()),
            Some(_) => self.reject(message, key),
        }
    }

    /// `repeated string` from a JSON array (non-string items skipped, as
    /// `StringArrayForSequenceNode` does).
    fn strings_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    if let Some(text) = scalar_string(item) {
                        m.repeated_string(tag, &text);
                    }
                }
            }
            Some(_) => self.reject(message, key),
        }
    }

    fn any_field(&mut self, m: &mut Msg, tag: u32, obj: &Obj, key: &str) {
        if let Some(value) = obj.get(key) {
            m.message(tag, any(value));
        }
    }

    /// `repeated Any` from a JSON array (`enum`).
    fn anys_field(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj, key: &str) {
        match obj.get(key) {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    m.message(tag, any(item));
                }
            }
            Some(_) => self.reject(message, key),
        }
    }

    /// `repeated NamedAny vendor_extension`: every `x-` key, in order.
    fn extensions(&mut self, m: &mut Msg, tag: u32, obj: &Obj) {
        for (key, value) in obj {
            if is_extension(key) {
                m.message(tag, named_any(key, value));
            }
        }
    }

    fn sub_message(
        &mut self,
        m: &mut Msg,
        tag: u32,
        message: &str,
        obj: &Obj,
        key: &str,
        build: impl FnOnce(&mut Self, &Obj) -> Msg,
    ) {
        if let Some(value) = obj.get(key) {
            if let Some(inner) = self.object(message, key, value) {
                let built = build(self, inner);
                m.message(tag, built);
            }
        }
    }

    // -- messages --------------------------------------------------------------

    fn document(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Document";
        self.check_keys(
            M,
            obj,
            &[
                "basePath",
                "consumes",
                "definitions",
                "externalDocs",
                "host",
                "info",
                "parameters",
                "paths",
                "produces",
                "responses",
                "schemes",
                "security",
                "securityDefinitions",
                "swagger",
                "tags",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "swagger");
        self.sub_message(&mut m, 2, M, obj, "info", Self::info);
        self.string_field(&mut m, 3, M, obj, "host");
        self.string_field(&mut m, 4, M, obj, "basePath");
        self.strings_field(&mut m, 5, M, obj, "schemes");
        self.strings_field(&mut m, 6, M, obj, "consumes");
        self.strings_field(&mut m, 7, M, obj, "produces");
        self.sub_message(&mut m, 8, M, obj, "paths", Self::paths);
        self.sub_message(&mut m, 9, M, obj, "definitions", |enc, defs| {
            enc.named_schemas(defs)
        });
        self.sub_message(
            &mut m,
            10,
            M,
            obj,
            "parameters",
            Self::parameter_definitions,
        );
        self.sub_message(&mut m, 11, M, obj, "responses", Self::response_definitions);
        self.security_requirements(&mut m, 12, M, obj);
        self.sub_message(
            &mut m,
            13,
            M,
            obj,
            "securityDefinitions",
            Self::security_definitions,
        );
        self.tags(&mut m, 14, M, obj);
        self.sub_message(&mut m, 15, M, obj, "externalDocs", Self::external_docs);
        self.extensions(&mut m, 16, obj);
        m
    }

    fn info(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Info";
        self.check_keys(
            M,
            obj,
            &[
                "contact",
                "description",
                "license",
                "termsOfService",
                "title",
                "version",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "title");
        self.string_field(&mut m, 2, M, obj, "version");
        self.string_field(&mut m, 3, M, obj, "description");
        self.string_field(&mut m, 4, M, obj, "termsOfService");
        self.sub_message(&mut m, 5, M, obj, "contact", |enc, contact| {
            const C: &str = "Contact";
            enc.check_keys(C, contact, &["email", "name", "url"]);
            let mut c = Msg::default();
            enc.string_field(&mut c, 1, C, contact, "name");
            enc.string_field(&mut c, 2, C, contact, "url");
            enc.string_field(&mut c, 3, C, contact, "email");
            enc.extensions(&mut c, 4, contact);
            c
        });
        self.sub_message(&mut m, 6, M, obj, "license", |enc, license| {
            const L: &str = "License";
            enc.check_keys(L, license, &["name", "url"]);
            let mut l = Msg::default();
            enc.string_field(&mut l, 1, L, license, "name");
            enc.string_field(&mut l, 2, L, license, "url");
            enc.extensions(&mut l, 3, license);
            l
        });
        self.extensions(&mut m, 7, obj);
        m
    }

    fn external_docs(&mut self, obj: &Obj) -> Msg {
        const M: &str = "ExternalDocs";
        self.check_keys(M, obj, &["description", "url"]);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "description");
        self.string_field(&mut m, 2, M, obj, "url");
        self.extensions(&mut m, 3, obj);
        m
    }

    fn tags(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("tags") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(item) = self.object("Tag", "", item) else {
                        continue;
                    };
                    const T: &str = "Tag";
                    self.check_keys(T, item, &["description", "externalDocs", "name"]);
                    let mut t = Msg::default();
                    self.string_field(&mut t, 1, T, item, "name");
                    self.string_field(&mut t, 2, T, item, "description");
                    self.sub_message(&mut t, 3, T, item, "externalDocs", Self::external_docs);
                    self.extensions(&mut t, 4, item);
                    m.message(tag, t);
                }
            }
            Some(_) => self.reject(message, "tags"),
        }
    }

    fn security_requirements(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("security") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(requirement) = self.object("SecurityRequirement", "", item) else {
                        continue;
                    };
                    let mut r = Msg::default();
                    for (name, scopes) in requirement {
                        let mut pair = Msg::default();
                        pair.string(1, name);
                        let mut array = Msg::default();
                        if let Value::Array(scopes) = scopes {
                            for scope in scopes {
                                if let Some(text) = scalar_string(scope) {
                                    array.repeated_string(1, &text);
                                }
                            }
                        } else {
                            self.reject("SecurityRequirement", name);
                        }
                        pair.message(2, array);
                        r.message(1, pair);
                    }
                    m.message(tag, r);
                }
            }
            Some(_) => self.reject(message, "security"),
        }
    }

    fn security_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(item) = self.object("SecurityDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.security_definitions_item(item));
            m.message(1, pair);
        }
        m
    }

    fn security_definitions_item(&mut self, obj: &Obj) -> Msg {
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        let flow = obj.get("flow").and_then(Value::as_str).unwrap_or("");
        // (oneof member, message name, keys after `type`/`flow` in field order)
        let (member, name, fields): (u32, &str, &[&str]) = match (kind, flow) {
            ("basic", _) => (1, "BasicAuthenticationSecurity", &["description"]),
            ("apiKey", _) => (2, "ApiKeySecurity", &["name", "in", "description"]),
            ("oauth2", "implicit") => (
                3,
                "Oauth2ImplicitSecurity",
                &["scopes", "authorizationUrl", "description"],
            ),
            ("oauth2", "password") => (
                4,
                "Oauth2PasswordSecurity",
                &["scopes", "tokenUrl", "description"],
            ),
            ("oauth2", "application") => (
                5,
                "Oauth2ApplicationSecurity",
                &["scopes", "tokenUrl", "description"],
            ),
            ("oauth2", "accessCode") => (
                6,
                "Oauth2AccessCodeSecurity",
                &["scopes", "authorizationUrl", "tokenUrl", "description"],
            ),
            _ => {
                self.reject("SecurityDefinitionsItem", "type");
                return Msg::default();
            }
        };
        let oauth = kind == "oauth2";
        let mut allowed: Vec<&str> = vec!["type"];
        if oauth {
            allowed.push("flow");
        }
        allowed.extend_from_slice(fields);
        self.check_keys(name, obj, &allowed);
        let mut inner = Msg::default();
        let mut tag = 1;
        for key in allowed {
            if key == "scopes" {
                self.sub_message(&mut inner, tag, name, obj, key, |_, scopes| {
                    let mut s = Msg::default();
                    for (scope, text) in scopes {
                        let mut pair = Msg::default();
                        pair.string(1, scope);
                        pair.string(2, &scalar_string(text).unwrap_or_default());
                        s.message(1, pair);
                    }
                    s
                });
            } else {
                self.string_field(&mut inner, tag, name, obj, key);
            }
            tag += 1;
        }
        self.extensions(&mut inner, tag, obj);
        let mut m = Msg::default();
        m.message(member, inner);
        m
    }

    fn paths(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for key in obj.keys() {
            if !is_extension(key) && !key.starts_with('/') {
                self.reject("Paths", key);
            }
        }
        self.extensions(&mut m, 1, obj);
        for (path, value) in obj {
            if !path.starts_with('/') {
                continue;
            }
            let Some(item) = self.object("Paths", path, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, path);
            pair.message(2, self.path_item(item));
            m.message(2, pair);
        }
        m
    }

    fn path_item(&mut self, obj: &Obj) -> Msg {
        const M: &str = "PathItem";
        const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];
        let mut allowed = vec!["$ref", "parameters"];
        allowed.extend_from_slice(&METHODS);
        self.check_keys(M, obj, &allowed);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        for (tag, method) in (2..).zip(METHODS) {
            self.sub_message(&mut m, tag, M, obj, method, Self::operation);
        }
        self.parameters_items(&mut m, 9, M, obj);
        self.extensions(&mut m, 10, obj);
        m
    }

    fn operation(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Operation";
        self.check_keys(
            M,
            obj,
            &[
                "consumes",
                "deprecated",
                "description",
                "externalDocs",
                "operationId",
                "parameters",
                "produces",
                "responses",
                "schemes",
                "security",
                "summary",
                "tags",
            ],
        );
        let mut m = Msg::default();
        self.strings_field(&mut m, 1, M, obj, "tags");
        self.string_field(&mut m, 2, M, obj, "summary");
        self.string_field(&mut m, 3, M, obj, "description");
        self.sub_message(&mut m, 4, M, obj, "externalDocs", Self::external_docs);
        self.string_field(&mut m, 5, M, obj, "operationId");
        self.strings_field(&mut m, 6, M, obj, "produces");
        self.strings_field(&mut m, 7, M, obj, "consumes");
        self.parameters_items(&mut m, 8, M, obj);
        self.sub_message(&mut m, 9, M, obj, "responses", Self::responses);
        self.strings_field(&mut m, 10, M, obj, "schemes");
        self.bool_field(&mut m, 11, M, obj, "deprecated");
        self.security_requirements(&mut m, 12, M, obj);
        self.extensions(&mut m, 13, obj);
        m
    }

    /// `repeated ParametersItem parameters`.
    fn parameters_items(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("parameters") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(item) = self.object("ParametersItem", "", item) else {
                        continue;
                    };
                    let mut p = Msg::default();
                    if item.contains_key("$ref") {
                        p.message(2, self.json_reference(item));
                    } else {
                        p.message(1, self.parameter(item));
                    }
                    m.message(tag, p);
                }
            }
            Some(_) => self.reject(message, "parameters"),
        }
    }

    fn json_reference(&mut self, obj: &Obj) -> Msg {
        const M: &str = "JsonReference";
        for key in obj.keys() {
            if key != "$ref" && key != "description" {
                self.reject(M, key);
            }
        }
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        self.string_field(&mut m, 2, M, obj, "description");
        m
    }

    /// `Parameter`: oneof `body_parameter` (1) / `non_body_parameter` (2).
    fn parameter(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        let location = obj.get("in").and_then(Value::as_str).unwrap_or("");
        if location == "body" {
            const B: &str = "BodyParameter";
            self.check_keys(B, obj, &["description", "in", "name", "required", "schema"]);
            let mut b = Msg::default();
            self.string_field(&mut b, 1, B, obj, "description");
            self.string_field(&mut b, 2, B, obj, "name");
            self.string_field(&mut b, 3, B, obj, "in");
            self.bool_field(&mut b, 4, B, obj, "required");
            self.sub_message(&mut b, 5, B, obj, "schema", Self::schema);
            self.extensions(&mut b, 6, obj);
            m.message(1, b);
        } else {
            // NonBodyParameter: oneof by `in`; query and formData carry
            // `allowEmptyValue` (5), shifting the rest by one.
            let (member, name, allow_empty) = match location {
                "header" => (1, "HeaderParameterSubSchema", false),
                "formData" => (2, "FormDataParameterSubSchema", true),
                "query" => (3, "QueryParameterSubSchema", true),
                "path" => (4, "PathParameterSubSchema", false),
                _ => {
                    self.reject("NonBodyParameter", "in");
                    return m;
                }
            };
            let mut allowed = vec!["required", "in", "description", "name"];
            if allow_empty {
                allowed.push("allowEmptyValue");
            }
            allowed.extend_from_slice(PRIMITIVE_KEYS);
            self.check_keys(name, obj, &allowed);
            let mut s = Msg::default();
            self.bool_field(&mut s, 1, name, obj, "required");
            self.string_field(&mut s, 2, name, obj, "in");
            self.string_field(&mut s, 3, name, obj, "description");
            self.string_field(&mut s, 4, name, obj, "name");
            let base = if allow_empty {
                self.bool_field(&mut s, 5, name, obj, "allowEmptyValue");
                6
            } else {
                5
            };
            self.primitive_fields(&mut s, base, name, obj);
            self.extensions(&mut s, base + 17, obj);
            let mut non_body = Msg::default();
            non_body.message(member, s);
            m.message(2, non_body);
        }
        m
    }

    /// `type` .. `multipleOf` at tags `base` .. `base + 16`.
    fn primitive_fields(&mut self, m: &mut Msg, base: u32, message: &str, obj: &Obj) {
        self.string_field(m, base, message, obj, "type");
        self.string_field(m, base + 1, message, obj, "format");
        self.sub_message(m, base + 2, message, obj, "items", Self::primitives_items);
        self.string_field(m, base + 3, message, obj, "collectionFormat");
        self.any_field(m, base + 4, obj, "default");
        self.double_field(m, base + 5, message, obj, "maximum");
        self.bool_field(m, base + 6, message, obj, "exclusiveMaximum");
        self.double_field(m, base + 7, message, obj, "minimum");
        self.bool_field(m, base + 8, message, obj, "exclusiveMinimum");
        self.int_field(m, base + 9, message, obj, "maxLength");
        self.int_field(m, base + 10, message, obj, "minLength");
        self.string_field(m, base + 11, message, obj, "pattern");
        self.int_field(m, base + 12, message, obj, "maxItems");
        self.int_field(m, base + 13, message, obj, "minItems");
        self.bool_field(m, base + 14, message, obj, "uniqueItems");
        self.anys_field(m, base + 15, message, obj, "enum");
        self.double_field(m, base + 16, message, obj, "multipleOf");
    }

    fn primitives_items(&mut self, obj: &Obj) -> Msg {
        const M: &str = "PrimitivesItems";
        self.check_keys(M, obj, PRIMITIVE_KEYS);
        let mut m = Msg::default();
        self.primitive_fields(&mut m, 1, M, obj);
        self.extensions(&mut m, 18, obj);
        m
    }

    fn header(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Header";
        let mut allowed = PRIMITIVE_KEYS.to_vec();
        allowed.push("description");
        self.check_keys(M, obj, &allowed);
        let mut m = Msg::default();
        self.primitive_fields(&mut m, 1, M, obj);
        self.string_field(&mut m, 18, M, obj, "description");
        self.extensions(&mut m, 19, obj);
        m
    }

    fn parameter_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(param) = self.object("ParameterDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.parameter(param));
            m.message(1, pair);
        }
        m
    }

    fn response_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(response) = self.object("ResponseDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.response(response));
            m.message(1, pair);
        }
        m
    }

    fn responses(&mut self, obj: &Obj) -> Msg {
        let is_code = |key: &str| {
            key == "default" || (key.len() == 3 && key.bytes().all(|b| b.is_ascii_digit()))
        };
        for key in obj.keys() {
            if !is_extension(key) && !is_code(key) {
                self.reject("Responses", key);
            }
        }
        let mut m = Msg::default();
        for (code, value) in obj {
            if !is_code(code) {
                continue;
            }
            let Some(response) = self.object("Responses", code, value) else {
                continue;
            };
            // ResponseValue: oneof response (1) / json_reference (2).
            let mut value = Msg::default();
            if response.contains_key("$ref") {
                value.message(2, self.json_reference(response));
            } else {
                value.message(1, self.response(response));
            }
            let mut pair = Msg::default();
            pair.string(1, code);
            pair.message(2, value);
            m.message(1, pair);
        }
        self.extensions(&mut m, 2, obj);
        m
    }

    fn response(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Response";
        self.check_keys(M, obj, &["description", "examples", "headers", "schema"]);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "description");
        self.sub_message(&mut m, 2, M, obj, "schema", |enc, schema| {
            // SchemaItem: oneof schema (1) / file_schema (2, `type: file`).
            let mut item = Msg::default();
            if schema.get("type").and_then(Value::as_str) == Some("file") {
                item.message(2, enc.file_schema(schema));
            } else {
                item.message(1, enc.schema(schema));
            }
            item
        });
        self.sub_message(&mut m, 3, M, obj, "headers", |enc, headers| {
            let mut h = Msg::default();
            for (name, value) in headers {
                let Some(header) = enc.object("Headers", name, value) else {
                    continue;
                };
                let mut pair = Msg::default();
                pair.string(1, name);
                pair.message(2, enc.header(header));
                h.message(1, pair);
            }
            h
        });
        self.sub_message(&mut m, 4, M, obj, "examples", |_, examples| {
            let mut e = Msg::default();
            for (name, value) in examples {
                e.message(1, named_any(name, value));
            }
            e
        });
        self.extensions(&mut m, 5, obj);
        m
    }

    fn file_schema(&mut self, obj: &Obj) -> Msg {
        const M: &str = "FileSchema";
        self.check_keys(
            M,
            obj,
            &[
                "default",
                "description",
                "example",
                "externalDocs",
                "format",
                "readOnly",
                "required",
                "title",
                "type",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "format");
        self.string_field(&mut m, 2, M, obj, "title");
        self.string_field(&mut m, 3, M, obj, "description");
        self.any_field(&mut m, 4, obj, "default");
        self.strings_field(&mut m, 5, M, obj, "required");
        self.string_field(&mut m, 6, M, obj, "type");
        self.bool_field(&mut m, 7, M, obj, "readOnly");
        self.sub_message(&mut m, 8, M, obj, "externalDocs", Self::external_docs);
        self.any_field(&mut m, 9, obj, "example");
        self.extensions(&mut m, 10, obj);
        m
    }

    /// `Definitions` / `Properties`: `repeated NamedSchema additional_properties = 1`.
    fn named_schemas(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(schema) = self.object("NamedSchema", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.schema(schema));
            m.message(1, pair);
        }
        m
    }

    fn schema(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Schema";
        self.check_keys(M, obj, SCHEMA_KEYS);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        self.string_field(&mut m, 2, M, obj, "format");
        self.string_field(&mut m, 3, M, obj, "title");
        self.string_field(&mut m, 4, M, obj, "description");
        self.any_field(&mut m, 5, obj, "default");
        self.double_field(&mut m, 6, M, obj, "multipleOf");
        self.double_field(&mut m, 7, M, obj, "maximum");
        self.bool_field(&mut m, 8, M, obj, "exclusiveMaximum");
        self.double_field(&mut m, 9, M, obj, "minimum");
        self.bool_field(&mut m, 10, M, obj, "exclusiveMinimum");
        self.int_field(&mut m, 11, M, obj, "maxLength");
        self.int_field(&mut m, 12, M, obj, "minLength");
        self.string_field(&mut m, 13, M, obj, "pattern");
        self.int_field(&mut m, 14, M, obj, "maxItems");
        self.int_field(&mut m, 15, M, obj, "minItems");
        self.bool_field(&mut m, 16, M, obj, "uniqueItems");
        self.int_field(&mut m, 17, M, obj, "maxProperties");
        self.int_field(&mut m, 18, M, obj, "minProperties");
        self.strings_field(&mut m, 19, M, obj, "required");
        self.anys_field(&mut m, 20, M, obj, "enum");
        // AdditionalPropertiesItem: oneof schema (1) / boolean (2).
        match obj.get("additionalProperties") {
            None => {}
            Some(Value::Bool(allowed)) => {
                let mut item = Msg::default();
                item.oneof_bool(2, *allowed);
                m.message(21, item);
            }
            Some(Value::Object(schema)) => {
                let mut item = Msg::default();
                item.message(1, self.schema(schema));
                m.message(21, item);
            }
            Some(_) => self.reject(M, "additionalProperties"),
        }
        // TypeItem { repeated string value = 1 }: one name or a list.
        match obj.get("type") {
            None => {}
            Some(Value::String(name)) => {
                let mut item = Msg::default();
                item.repeated_string(1, name);
                m.message(22, item);
            }
            Some(Value::Array(names)) => {
                let mut item = Msg::default();
                for name in names.iter().filter_map(Value::as_str) {
                    item.repeated_string(1, name);
                }
                m.message(22, item);
            }
            Some(_) => self.reject(M, "type"),
        }
        // ItemsItem { repeated Schema schema = 1 }.
        match obj.get("items") {
            None => {}
            Some(Value::Object(schema)) => {
                let mut item = Msg::default();
                item.message(1, self.schema(schema));
                m.message(23, item);
            }
            Some(Value::Array(schemas)) => {
                let mut item = Msg::default();
                for schema in schemas {
                    if let Some(schema) = self.object(M, "items", schema) {
                        item.message(1, self.schema(schema));
                    }
                }
                m.message(23, item);
            }
            Some(_) => self.reject(M, "items"),
        }
        match obj.get("allOf") {
            None => {}
            Some(Value::Array(schemas)) => {
                for schema in schemas {
                    if let Some(schema) = self.object(M, "allOf", schema) {
                        let built = self.schema(schema);
                        m.message(24, built);
                    }
                }
            }
            Some(_) => self.reject(M, "allOf"),
        }
        self.sub_message(&mut m, 25, M, obj, "properties", Self::named_schemas);
        self.string_field(&mut m, 26, M, obj, "discriminator");
        self.bool_field(&mut m, 27, M, obj, "readOnly");
        self.sub_message(&mut m, 28, M, obj, "xml", |enc, xml| {
            const X: &str = "Xml";
            enc.check_keys(
                X,
                xml,
                &["attribute", "name", "namespace", "prefix", "wrapped"],
            );
            let mut x = Msg::default();
            enc.string_field(&mut x, 1, X, xml, "name");
            enc.string_field(&mut x, 2, X, xml, "namespace");
            enc.string_field(&mut x, 3, X, xml, "prefix");
            enc.bool_field(&mut x, 4, X, xml, "attribute");
            enc.bool_field(&mut x, 5, X, xml, "wrapped");
            enc.extensions(&mut x, 6, xml);
            x
        });
        self.sub_message(&mut m, 29, M, obj, "externalDocs", Self::external_docs);
        self.any_field(&mut m, 30, obj, "example");
        self.extensions(&mut m, 31, obj);
        m
    }
}

/// `Any { string yaml = 2 }` (gnostic `NewAny`: `compiler.Marshal` of the node).
fn any(value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(2, &yaml(value));
    m
}

/// `NamedAny { name = 1, Any value = 2 }`.
fn named_any(name: &str, value: &Value) -> Msg {
    let mut m = Msg::default();
    m.string(1, name);
    m.message(2, any(value));
    m
}

// ---------------------------------------------------------------------------
// YAML text of a JSON value, as yaml.v3 `Marshal` prints it in block style
// (gnostic `compiler.Marshal` clears the flow styles JSON parsing leaves)
// ---------------------------------------------------------------------------

/// The YAML document for `value`, newline-terminated.
fn yaml(value: &Value) -> String {
    let mut out = String::new();
    match value {
        Value::Object(map) if !map.is_empty() => yaml_mapping(map, 0, false, &mut out),
        Value::Array(items) if !items.is_empty() => yaml_sequence(items, 0, false, &mut out),
        scalar => {
            out.push_str(&yaml_scalar(scalar));
            out.push('\n');
        }
    }
    out
}

/// yaml.v3's indentation of a block collection nested as a mapping value:
/// the next multiple of the (default, 4) indent.
fn nested_indent(indent: usize) -> usize {
    4 * ((indent + 4) / 4)
}

/// A block mapping at `indent`; `inline` when its first key follows a `- `.
fn yaml_mapping(map: &Map<String, Value>, indent: usize, inline: bool, out: &mut String) {
    for (index, (key, value)) in map.iter().enumerate() {
        if index > 0 || !inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str(&yaml_string(key));
        out.push(':');
        match value {
            Value::Object(inner) if !inner.is_empty() => {
                out.push('\n');
                yaml_mapping(inner, nested_indent(indent), false, out);
            }
            Value::Array(items) if !items.is_empty() => {
                out.push('\n');
                yaml_sequence(items, nested_indent(indent), false, out);
            }
            scalar => {
                out.push(' ');
                out.push_str(&yaml_scalar(scalar));
                out.push('\n');
            }
        }
    }
}

/// A block sequence at `indent`; `inline` when its first item follows a `- `.
/// Collections inside an item sit 2 columns in, just past the `- `.
fn yaml_sequence(items: &[Value], indent: usize, inline: bool, out: &mut String) {
    for (index, item) in items.iter().enumerate() {
        if index > 0 || !inline {
            out.push_str(&" ".repeat(indent));
        }
        out.push_str("- ");
        match item {
            Value::Object(inner) if !inner.is_empty() => {
                yaml_mapping(inner, indent + 2, true, out);
            }
            Value::Array(inner) if !inner.is_empty() => {
                yaml_sequence(inner, indent + 2, true, out);
            }
            scalar => {
                out.push_str(&yaml_scalar(scalar));
                out.push('\n');
            }
        }
    }
}

fn yaml_scalar(value: &Value) -> String {
    match value {
        Value::Null => "null".into(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => yaml_string(text),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// A string scalar: plain when it cannot be read back as anything but this
/// string (by YAML 1.1 or 1.2 readers alike), double-quoted otherwise.
fn yaml_string(text: &str) -> String {
    const RESERVED: &[&str] = &[
        "y", "n", "yes", "no", "on", "off", "true", "false", "null", "~",
    ];
    let mut chars = text.chars();
    let plain = match chars.next() {
        Some(first) => {
            (first.is_ascii_alphabetic() || first == '_' || first == '/')
                && text
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/' | ','))
                && !RESERVED.contains(&text.to_ascii_lowercase().as_str())
        }
        None => false,
    };
    if plain {
        text.to_string()
    } else {
        // JSON string escapes are all valid YAML double-quoted escapes.
        serde_json::to_string(text).unwrap_or_else(|_| "\"\"".into())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // -- a minimal independent reader, to walk what the encoder wrote --------

    #[derive(Debug, Clone, PartialEq)]
    enum Field<'a> {
        Varint(u64),
        Fixed64(u64),
        Bytes(&'a [u8]),
    }

    fn read_varint(buf: &[u8], pos: &mut usize) -> u64 {
        let mut value = 0u64;
        let mut shift = 0;
        loop {
            let byte = buf[*pos];
            *pos += 1;
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return value;
            }
            shift += 7;
        }
    }

    /// Every (tag, field) of one message; panics on malformed input.
    fn fields(buf: &[u8]) -> Vec<(u32, Field<'_>)> {
        let mut pos = 0;
        let mut out = Vec::new();
        while pos < buf.len() {
            let key = read_varint(buf, &mut pos);
            let tag = u32::try_from(key >> 3).expect("tag");
            let field = match key & 7 {
                0 => Field::Varint(read_varint(buf, &mut pos)),
                1 => {
                    let bytes: [u8; 8] = buf[pos..pos + 8].try_into().expect("fixed64");
                    pos += 8;
                    Field::Fixed64(u64::from_le_bytes(bytes))
                }
                2 => {
                    let len = usize::try_from(read_varint(buf, &mut pos)).expect("len");
                    let bytes = &buf[pos..pos + len];
                    pos += len;
                    Field::Bytes(bytes)
                }
                other => panic!("unexpected wire type {other}"),
            };
            assert!(tag > 0, "tag 0");
            out.push((tag, field));
        }
        assert_eq!(pos, buf.len(), "trailing bytes");
        out
    }

    fn bytes_of(buf: &[u8], tag: u32) -> Vec<&[u8]> {
        fields(buf)
            .into_iter()
            .filter_map(|(t, f)| match f {
                Field::Bytes(b) if t == tag => Some(b),
                _ => None,
            })
            .collect()
    }

    fn one(buf: &[u8], tag: u32) -> &[u8] {
        let all = bytes_of(buf, tag);
        assert_eq!(all.len(), 1, "field {tag}");
        all[0]
    }

    fn text(buf: &[u8], tag: u32) -> String {
        String::from_utf8(one(buf, tag).to_vec()).expect("utf-8")
    }

    /// The value of the `Named*` pair called `name` among repeated field `tag`.
    fn named<'a>(buf: &'a [u8], tag: u32, name: &str) -> &'a [u8] {
        bytes_of(buf, tag)
            .into_iter()
            .find(|pair| one(pair, 1) == name.as_bytes())
            .map(|pair| one(pair, 2))
            .unwrap_or_else(|| panic!("no {name}"))
    }

    fn encode_schema(schema: Value) -> Vec<u8> {
        let Value::Object(obj) = schema else {
            panic!("object")
        };
        let mut encoder = Encoder::default();
        let bytes = encoder.schema(&obj).0;
        assert!(encoder.rejected.is_empty(), "{:?}", encoder.rejected);
        bytes
    }

    #[test]
    fn small_schema_hand_checked_bytes() {
        let bytes = encode_schema(json!({
            "description": "d",
            "type": "string",
            "x-kubernetes-list-type": "atomic"
        }));
        let mut expected = vec![
            0x22, 0x01, b'd', // description (4): "d"
            0xB2, 0x01, 0x08, // type (22): TypeItem, 8 bytes
            0x0A, 0x06, // TypeItem.value (1): "string"
        ];
        expected.extend_from_slice(b"string");
        expected.extend_from_slice(&[0xFA, 0x01, 0x23, 0x0A, 0x16]); // vendor_extension (31), NamedAny 35 bytes; name (1), 22 bytes
        expected.extend_from_slice(b"x-kubernetes-list-type");
        expected.extend_from_slice(&[0x12, 0x09, 0x12, 0x07]); // value (2): Any, 9 bytes; yaml (2), 7 bytes
        expected.extend_from_slice(b"atomic\n");
        assert_eq!(bytes, expected);
    }

    #[test]
    fn ref_items_additional_properties_required() {
        let bytes = encode_schema(json!({
            "$ref": "#/definitions/a.B",
            "additionalProperties": false,
            "items": { "type": "integer", "format": "int32" },
            "required": ["name", ""],
            "maxLength": 63,
            "minimum": 1.5
        }));
        let mut expected = vec![0x0A, 0x11];
        expected.extend_from_slice(b"#/definitions/a.B"); // _ref (1)
        expected.push(0x49); // minimum (9), fixed64
        expected.extend_from_slice(&1.5f64.to_le_bytes());
        expected.extend_from_slice(&[0x58, 0x3F]); // max_length (11): 63
        expected.extend_from_slice(&[0x9A, 0x01, 0x04]); // required (19): "name"
        expected.extend_from_slice(b"name");
        expected.extend_from_slice(&[0x9A, 0x01, 0x00]); // required (19): "" (kept)
        expected.extend_from_slice(&[0xAA, 0x01, 0x02, 0x10, 0x00]); // additional_properties (21): {boolean (2): false}
                                                                     // items (23): ItemsItem{schema (1): Schema{format (2) "int32", type (22) ["integer"]}}
        expected.extend_from_slice(&[0xBA, 0x01, 0x15, 0x0A, 0x13, 0x12, 0x05]);
        expected.extend_from_slice(b"int32");
        expected.extend_from_slice(&[0xB2, 0x01, 0x09, 0x0A, 0x07]);
        expected.extend_from_slice(b"integer");
        assert_eq!(bytes, expected);
    }

    #[test]
    fn yaml_of_extension_values() {
        assert_eq!(yaml(&json!("atomic")), "atomic\n");
        assert_eq!(yaml(&json!("merge,retainKeys")), "merge,retainKeys\n");
        assert_eq!(yaml(&json!(true)), "true\n");
        assert_eq!(yaml(&json!("")), "\"\"\n");
        assert_eq!(yaml(&json!("true")), "\"true\"\n");
        assert_eq!(yaml(&json!("1.0")), "\"1.0\"\n");
        assert_eq!(
            yaml(&json!(["containerPort", "protocol"])),
            "- containerPort\n- protocol\n"
        );
        assert_eq!(
            yaml(&json!({ "group": "", "kind": "ConfigMap", "version": "v1" })),
            "group: \"\"\nkind: ConfigMap\nversion: v1\n"
        );
        assert_eq!(
            yaml(&json!([{ "group": "apps", "kind": "Deployment", "version": "v1" }])),
            "- group: apps\n  kind: Deployment\n  version: v1\n"
        );
        assert_eq!(
            yaml(&json!([{ "discriminator": "type", "fields-to-discriminateBy": { "localhostProfile": "LocalhostProfile" } }])),
            "- discriminator: type\n  fields-to-discriminateBy:\n    localhostProfile: LocalhostProfile\n"
        );
        assert_eq!(
            yaml(&json!({ "a": { "b": ["c"] }, "d": [], "e": {} })),
            "a:\n    b:\n        - c\nd: []\ne: {}\n"
        );
    }

    #[test]
    fn parameters_and_responses_pick_gnostic_oneofs() {
        let doc = json!({
            "swagger": "2.0",
            "info": { "title": "Kubernetes", "version": "v1.34.0" },
            "paths": {
                "/api/v1/namespaces/{namespace}/configmaps": {
                    "get": {
                        "operationId": "listCoreV1NamespacedConfigMap",
                        "parameters": [
                            { "$ref": "#/parameters/limit-1NfNmdNH" },
                            { "in": "query", "name": "watch", "type": "boolean", "uniqueItems": true },
                            { "in": "body", "name": "body", "required": true, "schema": { "$ref": "#/definitions/x" } }
                        ],
                        "responses": { "200": { "description": "OK", "schema": { "type": "string" } } },
                        "x-kubernetes-action": "list"
                    },
                    "parameters": [
                        { "in": "path", "name": "namespace", "required": true, "type": "string", "uniqueItems": true }
                    ]
                }
            },
            "security": [ { "BearerToken": [] } ],
            "securityDefinitions": {
                "BearerToken": { "description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey" }
            }
        });
        let encoded = encode(&doc).expect("encode");
        assert!(encoded.rejected.is_empty(), "{:?}", encoded.rejected);
        let root = encoded.bytes.as_slice();
        assert_eq!(text(root, 1), "2.0");
        assert_eq!(text(one(root, 2), 1), "Kubernetes");
        let item = named(one(root, 8), 2, "/api/v1/namespaces/{namespace}/configmaps");
        let get = one(item, 2);
        assert_eq!(text(get, 5), "listCoreV1NamespacedConfigMap");
        let params = bytes_of(get, 8);
        assert_eq!(params.len(), 3);
        // $ref -> ParametersItem.json_reference (2) -> _ref (1)
        assert_eq!(text(one(params[0], 2), 1), "#/parameters/limit-1NfNmdNH");
        // query -> Parameter (1) -> NonBodyParameter (2) -> query sub-schema (3)
        let query = one(one(one(params[1], 1), 2), 3);
        assert_eq!(
            fields(query),
            vec![
                (2, Field::Bytes(b"query")),
                (4, Field::Bytes(b"watch")),
                (6, Field::Bytes(b"boolean")),
                (20, Field::Varint(1)),
            ]
        );
        // body -> Parameter (1) -> BodyParameter (1)
        let body = one(one(params[2], 1), 1);
        assert_eq!(text(body, 3), "body");
        assert_eq!(text(one(body, 5), 1), "#/definitions/x");
        // path-level path parameter -> PathParameterSubSchema (4), type at 5
        let path = one(one(one(bytes_of(item, 9)[0], 1), 2), 4);
        assert_eq!(
            fields(path),
            vec![
                (1, Field::Varint(1)),
                (2, Field::Bytes(b"path")),
                (4, Field::Bytes(b"namespace")),
                (5, Field::Bytes(b"string")),
                (19, Field::Varint(1)),
            ]
        );
        // responses -> NamedResponseValue "200" -> response (1) -> schema item (2) -> schema (1)
        let ok = one(named(one(get, 9), 1, "200"), 1);
        assert_eq!(text(ok, 1), "OK");
        assert_eq!(text(one(one(one(ok, 2), 1), 22), 1), "string");
        let action = named(get, 13, "x-kubernetes-action");
        assert_eq!(text(action, 2), "list\n");
        // security: SecurityRequirement{NamedStringArray{"BearerToken", StringArray{}}}
        let requirement = one(root, 12);
        assert_eq!(named(requirement, 1, "BearerToken"), b"");
        let api_key = one(named(one(root, 13), 1, "BearerToken"), 2);
        assert_eq!(text(api_key, 1), "apiKey");
        assert_eq!(text(api_key, 2), "authorization");
        assert_eq!(text(api_key, 3), "header");
        assert_eq!(text(api_key, 4), "Bearer Token authentication");
    }

    #[test]
    fn unknown_keys_are_reported() {
        let encoded = encode(&json!({
            "swagger": "2.0",
            "definitions": { "a": { "type": "object", "nullable": true, "x-ok": 1 } }
        }))
        .expect("encode");
        assert_eq!(encoded.rejected, vec!["Schema.nullable".to_string()]);
    }

    #[test]
    fn served_document_is_all_gnostic_and_walkable() {
        let api = super::super::OpenApi::new(crate::registry::RESOURCES);
        let json_doc = api.v2().expect("v2");
        let value: Value = serde_json::from_slice(&json_doc.json).expect("json");
        let encoded = encode(&value).expect("encode");
        assert!(encoded.rejected.is_empty(), "{:?}", encoded.rejected);
        let proto = api.v2_protobuf().expect("protobuf");
        assert_eq!(proto.json.as_ref(), encoded.bytes.as_slice());
        assert_eq!(proto.etag, json_doc.etag, "kube reuses the JSON ETag");

        let root = proto.json.as_ref();
        assert_eq!(text(root, 1), "2.0");
        let definitions = one(root, 9);
        let deployment = named(definitions, 1, "io.k8s.api.apps.v1.Deployment");
        let gvk = named(deployment, 31, "x-kubernetes-group-version-kind");
        assert_eq!(
            text(gvk, 2),
            "- group: apps\n  kind: Deployment\n  version: v1\n"
        );
        let spec = named(one(deployment, 25), 1, "spec");
        assert_eq!(
            text(spec, 1),
            "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
        );
        let pod_spec = named(definitions, 1, "io.k8s.api.core.v1.PodSpec");
        let containers = named(one(pod_spec, 25), 1, "containers");
        assert_eq!(text(one(containers, 22), 1), "array");
        assert_eq!(
            text(one(one(containers, 23), 1), 1),
            "#/definitions/io.k8s.api.core.v1.Container"
        );
        assert_eq!(
            text(named(containers, 31, "x-kubernetes-patch-merge-key"), 2),
            "name\n"
        );
        let config_map = named(definitions, 1, "io.k8s.api.core.v1.ConfigMap");
        let data = named(one(config_map, 25), 1, "data");
        assert_eq!(text(one(one(one(data, 21), 1), 22), 1), "string");

        // Every path's PATCH with a GVK lists fieldValidation (kubectl's
        // query-parameter check reads this from the protobuf document).
        let paths = one(root, 8);
        let item = named(
            paths,
            2,
            "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
        );
        let patch = one(item, 8);
        assert_eq!(
            text(named(patch, 13, "x-kubernetes-group-version-kind"), 2),
            "group: apps\nkind: Deployment\nversion: v1\n"
        );
        let refs: Vec<String> = bytes_of(patch, 8)
            .into_iter()
            .filter(|p| !bytes_of(p, 2).is_empty())
            .map(|p| text(one(p, 2), 1))
            .collect();
        let shared = one(root, 10);
        let field_validation = refs
            .iter()
            .filter_map(|r| r.strip_prefix("#/parameters/"))
            .map(|name| named(shared, 1, name))
            .filter_map(|param| bytes_of(param, 2).first().copied())
            .filter_map(|non_body| bytes_of(non_body, 3).first().copied())
            .any(|query| one(query, 4) == b"fieldValidation");
        let inline = bytes_of(patch, 8)
            .into_iter()
            .filter(|p| !bytes_of(p, 1).is_empty())
            .filter_map(|p| bytes_of(one(p, 1), 2).first().copied())
            .filter_map(|non_body| bytes_of(non_body, 3).first().copied())
            .any(|query| one(query, 4) == b"fieldValidation");
        assert!(field_validation || inline, "fieldValidation on PATCH");
    }

    #[test]
    fn accept_negotiation_follows_kube_openapi() {
        use V2Format::{Json, Protobuf};
        let cases: &[(Option<&str>, Option<V2Format>)] = &[
            (None, Some(Json)),
            (Some(""), Some(Json)),
            (Some("*/*"), Some(Json)),
            (Some("*"), Some(Json)),
            (Some("application/*"), Some(Json)),
            (Some("application/json"), Some(Json)),
            (Some(CONTENT_TYPE_DEPRECATED), Some(Protobuf)),
            (Some(CONTENT_TYPE), Some(Protobuf)),
            (
                Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json"),
                Some(Protobuf),
            ),
            (
                Some("application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
                Some(Json),
            ),
            (
                Some("application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
                Some(Protobuf),
            ),
            // More specific beats `*/*` whatever the q (goautoneg's Less).
            (
                Some("*/*, application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.1"),
                Some(Protobuf),
            ),
            (Some("text/plain, */*;q=0.1"), Some(Json)),
            (Some("application/yaml"), None),
            (Some("text/html"), None),
            (Some("application/JSON"), None),
            // q=0 is not excluded by goautoneg/kube-openapi.
            (Some("application/json;q=0"), Some(Json)),
            (Some("application/json/x"), None),
            (Some(" application/json ; charset=utf-8"), Some(Json)),
        ];
        for (accept, expected) in cases {
            assert_eq!(negotiate(*accept), *expected, "{accept:?}");
        }
        assert_eq!(V2Format::Protobuf.content_type(), CONTENT_TYPE);
        assert_eq!(V2Format::Json.content_type(), "application/json");
    }
}
