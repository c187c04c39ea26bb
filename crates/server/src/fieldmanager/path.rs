//! Path elements and paths as structured-merge-diff has them
//! (`fieldpath/element.go`, `fieldpath/path.go`): a field of a struct or map,
//! the key of an associative list item, the value of a set item, or a list
//! index; with SMD's total order and its `String()` form (conflict messages).

use std::cmp::Ordering;
use std::fmt;

use serde_json::Value;

/// One step into a value.
#[derive(Debug, Clone)]
pub enum PathElement {
    /// `f:name`: a struct field or map key.
    Field(String),
    /// `k:{...}`: an associative list item, by its key fields sorted by name.
    Key(Vec<(String, Value)>),
    /// `v:...`: a set item, by its value.
    Value(Value),
    /// `i:3`: a list index (SMD no longer produces these, but decodes them).
    Index(i64),
}

/// A path from the root of an object.
pub type Path = Vec<PathElement>;

impl PathElement {
    pub fn field(name: &str) -> Self {
        PathElement::Field(name.to_string())
    }

    /// A key element; the fields are sorted by name as SMD's `KeyByFields` does.
    pub fn key(mut fields: Vec<(String, Value)>) -> Self {
        fields.sort_by(|a, b| a.0.cmp(&b.0));
        PathElement::Key(fields)
    }

    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }
}

impl Ord for PathElement {
    /// `PathElement.Compare`: fields < keys < values < indices, then within.
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => compare_field_lists(a, b),
            (PathElement::Value(a), PathElement::Value(b)) => compare_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

/// `value.FieldList.Compare`: lexical over (name, value) pairs, shorter first.
fn compare_field_lists(a: &[(String, Value)], b: &[(String, Value)]) -> Ordering {
    for (left, right) in a.iter().zip(b) {
        let order = left
            .0
            .cmp(&right.0)
            .then_with(|| compare_values(&left.1, &right.1));
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

fn value_rank(value: &Value) -> u8 {
    match value {
        Value::Number(n) if n.is_f64() => 0,
        Value::Number(_) => 1,
        Value::String(_) => 2,
        Value::Bool(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
        Value::Null => 6,
    }
}

/// `value.Compare`: a total order over values (floats < ints < strings <
/// bools < lists < maps < null; floats and ints compare numerically).
pub fn compare_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            match (x.as_i64(), y.as_i64(), x.is_f64() || y.is_f64()) {
                (Some(i), Some(j), false) => i.cmp(&j),
                _ => {
                    let (f, g) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(0.0));
                    f.partial_cmp(&g).unwrap_or(Ordering::Equal)
                }
            }
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (left, right) in x.iter().zip(y) {
                let order = compare_values(left, right);
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => {
            // `MapCompare`: by sorted keys, then values, shorter first.
            for ((ka, va), (kb, vb)) in x.iter().zip(y) {
                let order = ka.cmp(kb).then_with(|| compare_values(va, vb));
                if order != Ordering::Equal {
                    return order;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => value_rank(a).cmp(&value_rank(b)),
    }
}

/// `value.ToString`: strings quoted as Go's `%q`, the rest as `%v`.
fn value_to_string(value: &Value) -> String {
    match value {
        Value::Null => "null".to_string(),
        Value::String(text) => crate::go::strconv::quote(text),
        Value::Array(items) => format!(
            "[{}]",
            items
                .iter()
                .map(value_to_string)
                .collect::<Vec<_>>()
                .join(",")
        ),
        Value::Object(map) => format!(
            "{{{}}}",
            map.iter()
                .map(|(key, value)| format!("{key}={}", value_to_string(value)))
                .collect::<Vec<_>>()
                .join(",")
        ),
        other => other.to_string(),
    }
}

impl fmt::Display for PathElement {
    /// `PathElement.String()`: `.name`, `[name="nginx"]`, `[="value"]`, `[3]`.
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(formatter, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(name, value)| format!("{name}={}", value_to_string(value)))
                    .collect();
                write!(formatter, "[{}]", parts.join(","))
            }
            PathElement::Value(value) => write!(formatter, "[={}]", value_to_string(value)),
            PathElement::Index(index) => write!(formatter, "[{index}]"),
        }
    }
}

/// `Path.String()`: the elements' strings concatenated (`.spec.replicas`).
pub fn path_string(path: &[PathElement]) -> String {
    path.iter().map(ToString::to_string).collect()
}
