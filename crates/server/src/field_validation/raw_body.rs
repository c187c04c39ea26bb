//! Over the raw JSON body (kube's order, duplicates visible).

use std::collections::HashSet;

use serde_json::Value;

use super::decoded::{builtin_kind, unknown_fields, MAX_WALK_DEPTH};
use super::shape::{push_key, shape, Errors, Shape};
use crate::openapi::OpenApi;
use crate::schema::{Model, NodeId};
use crate::yaml::yaml_duplicate_error;

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
    let _ = openapi; // The built-in schemas are the process's compiled model.
    match builtin_kind(group, version, kind) {
        Some((model, root)) => scan(model, shape(model, root), body),
        None => duplicate_fields(body),
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

fn scan(model: &Model, root: Shape<'_>, body: &[u8]) -> Vec<String> {
    let mut scanner = Scanner {
        body,
        at: 0,
        errors: Errors::default(),
    };
    let mut path = String::new();
    scanner.skip_ws();
    let _ = scanner.value(Some(model), root, &mut path, 0);
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
        model: Option<&'s Model>,
        shape_: Shape<'s>,
        path: &mut String,
        depth: usize,
    ) -> Result<(), Malformed> {
        self.skip_ws();
        if depth > MAX_WALK_DEPTH {
            return self.skip_value();
        }
        let child_shape = |schema: NodeId| -> Shape<'s> {
            match model {
                Some(model) => shape(model, schema),
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
                        Shape::Struct { fields, preserve } => {
                            match fields.and_then(|node| node.property(&key)) {
                                Some(schema) => {
                                    if !seen.insert(key.clone()) {
                                        self.errors.push("duplicate field", path, &key);
                                    }
                                    push_key(path, &key);
                                    self.value(model, child_shape(schema), path, depth + 1)?;
                                }
                                None => {
                                    if !preserve {
                                        self.errors.push("unknown field", path, &key);
                                    }
                                    self.skip_value()?;
                                }
                            }
                        }
                        Shape::Map(schema) => {
                            if !seen.insert(key.clone()) {
                                self.errors.push("duplicate field", path, &key);
                            }
                            push_key(path, &key);
                            self.value(model, child_shape(schema), path, depth + 1)?;
                        }
                        _ => {
                            if !seen.insert(key.clone()) {
                                self.errors.push("duplicate field", path, &key);
                            }
                            push_key(path, &key);
                            self.value(model, Shape::Any, path, depth + 1)?;
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
                    self.value(model, item_shape, path, depth + 1)?;
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
