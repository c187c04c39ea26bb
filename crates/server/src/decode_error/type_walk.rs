//! `sigs.k8s.io/json` decoding a body into its typed object, reduced to the
//! errors it reports.

use super::go_types::{field_type, json_schema_props, GoType, SchemaOr};
use super::interpret::value_word;
use super::tree::{Node, Tree};
use crate::go::time_parse::parse_go_time;
use crate::go::utf8::lossy as go_lossy;
use crate::schema::Model;

/// How deep [`TypeWalk`] follows a body; deeper values are not checked (kube
/// itself stops at 10000 levels, which would not fit a worker thread's stack).
const MAX_WALK_DEPTH: usize = 512;

/// `sigs.k8s.io/json` (`UnmarshalCaseSensitivePreserveInts` / `UnmarshalStrict`)
/// decoding a body into the typed object of its kind, reduced to its errors:
/// keys match fields case-sensitively (others are ignored), a type mismatch
/// is saved (`json: cannot unmarshal <value> into Go struct field
/// <Struct>.<json.path> of type <type>`, the first one is reported) and
/// decoding goes on, while an `UnmarshalJSON` failure (`metav1.Time`,
/// `resource.Quantity`, `intstr.IntOrString`) aborts at once and wins over a
/// saved error. `<Struct>` is the innermost struct being decoded and the path
/// joins the JSON names of struct fields from the root (no map keys, no
/// indices), as kube's `errorContext` does.
///
/// With [`Wording::Unstructured`] it reports instead what
/// `runtime.DefaultUnstructuredConverter.FromUnstructured` reports when a
/// strategic merge patch's result is converted into the typed object
/// (`apimachinery/pkg/runtime/converter.go`, `fromUnstructured`): the first
/// mismatch ends the walk and its text names no field.
pub(super) struct TypeWalk<'a> {
    pub(super) model: &'a Model,
    pub(super) tree: &'a Tree<'a>,
    pub(super) saved: Option<String>,
    pub(super) struct_name: String,
    pub(super) fields: Vec<String>,
    pub(super) depth: usize,
    pub(super) wording: Wording,
}

/// Whose error texts a [`TypeWalk`] reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wording {
    /// `sigs.k8s.io/json` decoding JSON bytes (bodies, JSON and merge patches).
    Json,
    /// The unstructured converter (strategic merge patches).
    Unstructured,
}

impl<'a> TypeWalk<'a> {
    pub(super) fn new(model: &'a Model, tree: &'a Tree<'a>, wording: Wording) -> Self {
        TypeWalk {
            model,
            tree,
            saved: None,
            struct_name: String::new(),
            fields: Vec::new(),
            depth: 0,
            wording,
        }
    }
}

/// `reflect.Kind` of the value the unstructured converter holds for a node
/// (`UnmarshalCaseSensitivePreserveInts`: integers that fit are int64).
fn unstructured_kind(node: &Node, raw: &str) -> &'static str {
    match node {
        Node::Null => "invalid",
        Node::Bool => "bool",
        Node::Number if raw.parse::<i64>().is_ok() => "int64",
        Node::Number => "float64",
        Node::String(_) => "string",
        Node::Array(_) => "slice",
        Node::Object(_) => "map",
    }
}

/// Go's `reflect.Kind` name of an integer or float type of `bits`.
fn kind_of_bits(prefix: &str, bits: u32) -> String {
    format!("{prefix}{bits}")
}

impl TypeWalk<'_> {
    /// `UnmarshalTypeError.Error()` with the current error context.
    fn type_error(&self, value: &str, type_name: &str) -> String {
        if self.struct_name.is_empty() && self.fields.is_empty() {
            format!("json: cannot unmarshal {value} into Go value of type {type_name}")
        } else {
            format!(
                "json: cannot unmarshal {value} into Go struct field {}.{} of type {type_name}",
                self.struct_name,
                self.fields.join(".")
            )
        }
    }

    fn save(&mut self, error: String) {
        self.saved.get_or_insert(error);
    }

    fn save_type_error(&mut self, value: &str, type_name: &str) {
        if self.saved.is_none() {
            self.saved = Some(self.type_error(value, type_name));
        }
    }

    /// Decodes value `index` into `ty`; `Err` is a fatal (returned) error.
    pub(super) fn value(&mut self, index: usize, ty: &GoType) -> Result<(), String> {
        if self.depth >= MAX_WALK_DEPTH {
            return Ok(());
        }
        if self.wording == Wording::Unstructured {
            if let Some(error) = self.unstructured_mismatch(index, ty) {
                return Err(error);
            }
        }
        self.depth += 1;
        let result = self.value_inner(index, ty);
        self.depth -= 1;
        result
    }

    /// `fromUnstructured`'s error for the node at `index` into `ty`, for
    /// the checks it makes before descending (`converter.go`).
    fn unstructured_mismatch(&self, index: usize, ty: &GoType) -> Option<String> {
        let node = self.tree.node(index);
        if matches!(node, Node::Null) {
            return None;
        }
        let raw = match node {
            Node::Number => go_lossy(self.tree.raw(index)),
            _ => String::new(),
        };
        let source = unstructured_kind(node, &raw);
        let unrecognized = |kind: &str| Some(format!("unrecognized type: {kind}"));
        match ty {
            GoType::Str(_) => match source {
                "string" => None,
                // An int64 is convertible to a string in Go, but not as JSON is.
                "int64" => Some("cannot convert int64 to string".to_string()),
                _ => unrecognized("string"),
            },
            GoType::Int { bits, .. } => {
                let kind = kind_of_bits("int", *bits);
                match source {
                    // reflect's Convert would truncate an integer that does
                    // not fit; refused here, so no typed client reads a
                    // different number than the one stored.
                    "int64" if parse_go_int(&raw, *bits).is_some() => None,
                    "int64" => Some(format!("cannot convert int64 to {kind}")),
                    "float64" => {
                        let float = raw.parse::<f64>().unwrap_or(f64::NAN);
                        let whole = float == float.trunc()
                            && parse_go_int(&format!("{float:.0}"), *bits).is_some();
                        (!whole).then(|| format!("cannot convert float64 to {kind}"))
                    }
                    _ => unrecognized(&kind),
                }
            }
            GoType::Float { bits, .. } => match source {
                "int64" | "float64" => None,
                _ => unrecognized(&kind_of_bits("float", *bits)),
            },
            GoType::Bool(_) => (source != "bool").then(|| "unrecognized type: bool".to_string()),
            GoType::Bytes(_) => match source {
                "string" | "slice" => None,
                other => Some(format!("cannot restore slice from {other}")),
            },
            GoType::Slice { .. } => {
                (source != "slice").then(|| format!("cannot restore slice from {source}"))
            }
            GoType::Map { .. } => {
                (source != "map").then(|| format!("cannot restore map from {source}"))
            }
            GoType::Struct { .. } => {
                (source != "map").then(|| format!("cannot restore struct from: {source}"))
            }
            GoType::Time { .. }
            | GoType::Quantity
            | GoType::IntOrString
            | GoType::SchemaOr(_)
            | GoType::Any => None,
        }
    }

    fn value_inner(&mut self, index: usize, ty: &GoType) -> Result<(), String> {
        let tree = self.tree;
        let node = tree.node(index);
        if matches!(node, Node::Null) {
            // null leaves any Go value alone (custom unmarshalers accept it too).
            return Ok(());
        }
        match ty {
            GoType::Any => Ok(()),
            GoType::Quantity => {
                let raw = tree.raw(index);
                let raw = match raw {
                    [b'"', inner @ .., b'"'] => inner,
                    other => other,
                };
                match crate::quantity::canonicalize(go_lossy(raw).trim()) {
                    Ok(_) => Ok(()),
                    Err(error) => Err(error.to_string()),
                }
            }
            GoType::IntOrString => match node {
                Node::String(_) => Ok(()),
                Node::Number => {
                    let raw = go_lossy(tree.raw(index));
                    if parse_go_int(&raw, 32).is_some() {
                        Ok(())
                    } else {
                        Err(self.type_error(&format!("number {raw}"), "int32"))
                    }
                }
                other => Err(self.type_error(value_word(other), "int32")),
            },
            GoType::SchemaOr(alternative) => self.schema_or(index, *alternative),
            GoType::Time { micro } => match node {
                Node::String(text) => parse_go_time(text, *micro),
                other => Err(self.type_error(value_word(other), "string")),
            },
            GoType::Str(name) => {
                if !matches!(node, Node::String(_)) {
                    self.save_type_error(value_word(node), name);
                }
                Ok(())
            }
            GoType::Int { name, bits } => {
                match node {
                    Node::Number => {
                        let raw = go_lossy(tree.raw(index));
                        if parse_go_int(&raw, *bits).is_none() {
                            self.save_type_error(&format!("number {raw}"), name);
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Float { name, bits } => {
                match node {
                    Node::Number => {
                        let raw = go_lossy(tree.raw(index));
                        let finite = if *bits == 32 {
                            raw.parse::<f32>().is_ok_and(f32::is_finite)
                        } else {
                            raw.parse::<f64>().is_ok_and(f64::is_finite)
                        };
                        if !finite {
                            self.save_type_error(&format!("number {raw}"), name);
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Bool(name) => {
                if !matches!(node, Node::Bool) {
                    self.save_type_error(value_word(node), name);
                }
                Ok(())
            }
            GoType::Bytes(name) => {
                match node {
                    Node::String(text) => {
                        if let Some(offset) = base64_std_error(text.as_bytes()) {
                            self.save(format!("illegal base64 data at input byte {offset}"));
                        }
                    }
                    Node::Array(children) => {
                        for &child in children {
                            match tree.node(child) {
                                Node::Null => {}
                                Node::Number => {
                                    let raw = go_lossy(tree.raw(child));
                                    if !raw.parse::<u64>().is_ok_and(|n| n <= 255) {
                                        self.save_type_error(&format!("number {raw}"), "uint8");
                                    }
                                }
                                other => self.save_type_error(value_word(other), "uint8"),
                            }
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Slice { name, elem } => {
                match node {
                    Node::Array(children) => {
                        for &child in children {
                            self.value(child, elem)?;
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Map { name, value } => {
                match node {
                    Node::Object(members) => {
                        for (_, child) in members {
                            self.value(*child, value)?;
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Struct {
                name,
                type_name,
                definition,
            } => {
                let Node::Object(members) = node else {
                    self.save_type_error(value_word(node), name);
                    return Ok(());
                };
                let Some(schema) = self.model.definition(definition) else {
                    return Ok(());
                };
                let schema = self.model.node(schema);
                if schema.properties.is_none() {
                    return Ok(());
                }
                for (key, child) in members {
                    let Some(property) = schema.property(key) else {
                        continue;
                    };
                    let field = field_type(self.model, definition, key, property);
                    if self.wording == Wording::Unstructured {
                        // The converter's texts carry no field context; its
                        // custom unmarshalers see a value on its own.
                        self.value(*child, &field)?;
                        continue;
                    }
                    self.fields.push(key.clone());
                    let outer = std::mem::replace(&mut self.struct_name, type_name.clone());
                    let result = self.value(*child, &field);
                    self.fields.pop();
                    self.struct_name = outer;
                    result?;
                }
                Ok(())
            }
        }
    }
}

impl TypeWalk<'_> {
    /// `JSONSchemaPropsOr*.UnmarshalJSON` (`apiextensions/v1/marshal.go`):
    /// a `{` decodes a nested schema and a `[` the array, each with its own
    /// `json.Unmarshal`, so their errors carry no outer context and end the
    /// decode. Go leaves other values null (`OrArray`, `OrStringArray`) or
    /// refuses them (`OrBool`: `boolean or JSON schema expected`); a null is
    /// stored where a schema was written, which no typed client reads as
    /// written: refused here too.
    fn schema_or(&mut self, index: usize, alternative: SchemaOr) -> Result<(), String> {
        let tree = self.tree;
        let node = tree.node(index);
        let nested = match (node, alternative) {
            (Node::Object(_), _) => json_schema_props(),
            (Node::Array(_), SchemaOr::Array) => GoType::Slice {
                name: "[]v1.JSONSchemaProps".into(),
                elem: Box::new(json_schema_props()),
            },
            (Node::Array(_), SchemaOr::StringArray) => GoType::Slice {
                name: "[]string".into(),
                elem: Box::new(GoType::Str("string".into())),
            },
            (Node::Bool, SchemaOr::Bool) => return Ok(()),
            (_, SchemaOr::Bool) => return Err("boolean or JSON schema expected".into()),
            (other, _) => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type {}",
                    value_word(other),
                    alternative.type_name()
                ))
            }
        };
        // A fresh decode: no outer struct context, its first error returned.
        let outer_saved = self.saved.take();
        let outer_struct = std::mem::take(&mut self.struct_name);
        let outer_fields = std::mem::take(&mut self.fields);
        let result = self.value(index, &nested);
        let inner_saved = std::mem::replace(&mut self.saved, outer_saved);
        self.struct_name = outer_struct;
        self.fields = outer_fields;
        result?;
        match inner_saved {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)` plus `reflect.Value.OverflowInt` for `bits`.
fn parse_go_int(raw: &str, bits: u32) -> Option<i64> {
    let value: i64 = raw.parse().ok()?;
    let (min, max) = if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    (min..=max).contains(&value).then_some(value)
}

/// `base64.StdEncoding.Decode`'s `CorruptInputError` offset for `src`, or
/// `None` when it decodes (`\r` and `\n` are skipped, padding is required).
pub(super) fn base64_std_error(src: &[u8]) -> Option<usize> {
    pub(super) fn value(c: u8) -> bool {
        c.is_ascii_alphanumeric() || c == b'+' || c == b'/'
    }
    let mut si = 0usize;
    while si < src.len() {
        // decodeQuantum
        let mut j = 0usize;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return None;
                }
                // StdEncoding pads: a short final quantum is corrupt.
                return Some(si - j);
            }
            let c = src[si];
            si += 1;
            if value(c) {
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Some(si - 1);
            }
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                return Some(si);
            }
            return None;
        }
    }
    None
}
