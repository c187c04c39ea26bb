//! Over a decoded object (sorted keys).

use serde_json::Value;

use super::shape::{push_key, shape, zero_value, Errors, Shape};
use crate::openapi::OpenApi;
use crate::schema::{self, Model, NodeId};

/// The `unknown field "..."` messages for `object`, an object of this
/// group/version/kind, in the order kube finds them in a body whose keys are
/// sorted (serde_json's order; exactly kube's order for YAML bodies, whose
/// converted JSON has sorted keys; a JSON body's own order is only visible in
/// the raw bytes: use [`strict_errors`](super::strict_errors)). Empty when the kind has no vendored
/// schema (custom resources: see [`unknown_fields_in_schema`]).
pub fn unknown_fields(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    object: &Value,
) -> Vec<String> {
    let _ = openapi; // The built-in schemas are the process's compiled model.
    let Some((model, root)) = builtin_kind(group, version, kind) else {
        return Vec::new();
    };
    let mut errors = Errors::default();
    let mut path = String::new();
    walk_value(
        model,
        shape(model, root),
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
/// messages. `null` list items and map values become the zero value of
/// their Go type, as the typed decode makes them (typed clients cannot read
/// a `null` string or struct there).
pub fn drop_unknown_fields(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    object: &mut Value,
) -> Vec<String> {
    let _ = openapi; // The built-in schemas are the process's compiled model.
    let Some((model, root)) = builtin_kind(group, version, kind) else {
        return Vec::new();
    };
    let mut errors = Errors::default();
    let mut path = String::new();
    let mut fixes = Fixes::default();
    walk_value(
        model,
        shape(model, root),
        object,
        &mut path,
        &mut errors,
        Some(&mut fixes),
        0,
    );
    for pointer in fixes.dropped.iter().rev() {
        remove_at(object, pointer);
    }
    for (pointer, zero) in fixes.zeroed {
        if let Some(slot) = slot_at(object, &pointer) {
            *slot = zero;
        }
    }
    errors.messages
}

/// The compiled model and node of a built-in kind.
pub(super) fn builtin_kind(
    group: &str,
    version: &str,
    kind: &str,
) -> Option<(&'static Model, NodeId)> {
    let model = schema::builtin().ok()?;
    Some((model, model.kind(group, version, kind)?))
}

/// As [`unknown_fields`] against an inline OpenAPI v3 schema (a CRD
/// version's `openAPIV3Schema`: `properties`, `additionalProperties`,
/// `items`, `x-kubernetes-preserve-unknown-fields`), compiled into the
/// schema model; `metadata` is checked against ObjectMeta,
/// `apiVersion`/`kind` are always known, as kube's pruning does. `$ref`s
/// resolve against the built-in definitions.
pub fn unknown_fields_in_schema(openapi: &OpenApi, schema: &Value, object: &Value) -> Vec<String> {
    let _ = openapi; // The built-in schemas are the process's compiled model.
    let Ok(base) = schema::builtin() else {
        return Vec::new();
    };
    let Some(fields) = object.as_object() else {
        return Vec::new();
    };
    let model = schema::compile_layered(base, schema);
    let Some(root) = model.root() else {
        return Vec::new();
    };
    let root = model.node(root);
    let mut errors = Errors::default();
    for (key, value) in fields {
        let mut path = key.clone();
        match key.as_str() {
            "apiVersion" | "kind" => {}
            "metadata" => {
                if let Some(meta) =
                    model.definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
                {
                    walk_value(
                        &model,
                        shape(&model, meta),
                        value,
                        &mut path,
                        &mut errors,
                        None,
                        1,
                    );
                }
            }
            _ => match root.property(key) {
                Some(child) => walk_value(
                    &model,
                    shape(&model, child),
                    value,
                    &mut path,
                    &mut errors,
                    None,
                    1,
                ),
                None if root.preserve_unknown_fields => {}
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

/// What the typed decode changes in a decoded object: unknown fields it
/// drops, `null` elements it turns into zero values.
#[derive(Default)]
struct Fixes {
    dropped: Vec<Vec<Step>>,
    /// Values replaced: `null` elements by zero values, byte arrays by base64.
    zeroed: Vec<(Vec<Step>, Value)>,
}

fn slot_at<'v>(object: &'v mut Value, pointer: &[Step]) -> Option<&'v mut Value> {
    pointer
        .iter()
        .try_fold(object, |current, step| match (step, current) {
            (Step::Key(k), Value::Object(map)) => map.get_mut(k),
            (Step::Index(i), Value::Array(items)) => items.get_mut(*i),
            _ => None,
        })
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

/// Records the zero value of an element of `schema` for a `null` element at
/// `steps`, and [`bytes_as_base64`] for a `[]byte` given as numbers.
fn zero_if_null(
    model: &Model,
    schema: NodeId,
    element: &Value,
    steps: &[Step],
    fixes: &mut Option<&mut Fixes>,
) {
    let Some(fixes) = fixes.as_deref_mut() else {
        return;
    };
    match element {
        Value::Null => {
            let zero = zero_value(model, schema);
            if !zero.is_null() {
                fixes.zeroed.push((steps.to_vec(), zero));
            }
        }
        Value::Array(_) => bytes_as_base64(model, schema, element, steps, fixes),
        _ => {}
    }
}

/// A `[]byte` field (`format: byte`) given as a JSON array of numbers:
/// Go's decoder takes it element by element and kube stores the bytes as
/// base64, which is the only form typed clients read.
fn bytes_as_base64(
    model: &Model,
    schema: NodeId,
    element: &Value,
    steps: &[Step],
    fixes: &mut Fixes,
) {
    if model.node(schema).format.as_deref() != Some("byte") {
        return;
    }
    let Value::Array(items) = element else {
        return;
    };
    let bytes: Option<Vec<u8>> = items
        .iter()
        .map(|item| match item {
            Value::Null => Some(0),
            other => other.as_u64().and_then(|byte| u8::try_from(byte).ok()),
        })
        .collect();
    if let Some(bytes) = bytes {
        use base64::Engine as _;
        let text = base64::engine::general_purpose::STANDARD.encode(bytes);
        fixes.zeroed.push((steps.to_vec(), Value::String(text)));
    }
}

/// Deepest nesting walked; deeper values are skipped unchecked (kube's own
/// JSON limit is 10000, but serde_json's parser refuses bodies deeper than
/// 128 and YAML bodies stop at `crate::yaml::MAX_DEPTH`).
pub(super) const MAX_WALK_DEPTH: usize = 256;

fn walk_value(
    model: &Model,
    shape_: Shape<'_>,
    value: &Value,
    path: &mut String,
    errors: &mut Errors,
    mut dropped: Option<&mut Fixes>,
    depth: usize,
) {
    #[allow(clippy::too_many_arguments)]
    fn inner(
        model: &Model,
        shape_: Shape<'_>,
        value: &Value,
        path: &mut String,
        errors: &mut Errors,
        dropped: &mut Option<&mut Fixes>,
        steps: &mut Vec<Step>,
        depth: usize,
    ) {
        if depth > MAX_WALK_DEPTH {
            return;
        }
        match (shape_, value) {
            (Shape::Struct { fields, preserve }, Value::Object(map)) => {
                for (key, child) in map {
                    let len = path.len();
                    match fields.and_then(|node| node.property(key)) {
                        Some(schema) => {
                            push_key(path, key);
                            steps.push(Step::Key(key.clone()));
                            if let (Value::Array(_), Some(fixes)) = (child, dropped.as_deref_mut())
                            {
                                bytes_as_base64(model, schema, child, steps, fixes);
                            }
                            inner(
                                model,
                                shape(model, schema),
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
                            if let Some(fixes) = dropped.as_deref_mut() {
                                let mut at = steps.clone();
                                at.push(Step::Key(key.clone()));
                                fixes.dropped.push(at);
                            }
                        }
                    }
                    path.truncate(len);
                }
            }
            (Shape::Map(schema), Value::Object(map)) => {
                let child_shape = shape(model, schema);
                for (key, child) in map {
                    let len = path.len();
                    push_key(path, key);
                    steps.push(Step::Key(key.clone()));
                    zero_if_null(model, schema, child, steps, dropped);
                    inner(
                        model,
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
                let child_shape = shape(model, schema);
                for (index, item) in items.iter().enumerate() {
                    let len = path.len();
                    path.push_str(&format!("[{index}]"));
                    steps.push(Step::Index(index));
                    zero_if_null(model, schema, item, steps, dropped);
                    inner(
                        model,
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
        model,
        shape_,
        value,
        path,
        errors,
        &mut dropped,
        &mut steps,
        depth,
    );
}
