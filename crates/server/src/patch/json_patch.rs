//! JSON patch, RFC 6902 (`application/json-patch+json`): add, remove,
//! replace, move, copy, test, with RFC 6901 pointers. Error texts follow
//! `evanphx/json-patch`, which kube-apiserver uses (`handlers/patch.go`).

use serde_json::Value;

use crate::object::bounds::{depth, too_deep_message, MAX_DEPTH};

/// kube-apiserver's cap on operations in one JSON patch (`maxJSONPatchOperations`).
pub const MAX_OPERATIONS: usize = 10_000;

/// kube-apiserver's `JSONPatchMaxCopyBytes` (3 MiB, `server/config.go`), set
/// as evanphx/json-patch's `AccumulatedCopySizeLimit`: the bytes `copy`
/// operations may add to a document, counted as the JSON size of each copied
/// value.
pub const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JsonPatchError {
    /// The body is not a JSON patch document (kube: 400).
    #[error("{0}")]
    Malformed(String),
    /// Too many operations (kube: 413).
    #[error("The allowed maximum operations in a JSON patch is {MAX_OPERATIONS}, got {0}")]
    TooManyOperations(usize),
    /// The patch does not apply to the object (kube: 422).
    #[error("{0}")]
    Failed(String),
}

impl JsonPatchError {
    pub fn http_code(&self) -> u16 {
        match self {
            JsonPatchError::Malformed(_) => 400,
            JsonPatchError::TooManyOperations(_) => 413,
            JsonPatchError::Failed(_) => 422,
        }
    }
}

#[derive(Debug)]
enum Operation {
    Add {
        path: Vec<String>,
        value: Value,
    },
    Remove {
        path: Vec<String>,
    },
    Replace {
        path: Vec<String>,
        value: Value,
    },
    Move {
        from: Vec<String>,
        path: Vec<String>,
    },
    Copy {
        from: Vec<String>,
        path: Vec<String>,
    },
    Test {
        path: Vec<String>,
        value: Value,
        raw_path: String,
    },
}

/// RFC 6901: `/a/b~1c/~0d` → ["a", "b/c", "~d"].
fn parse_pointer(pointer: &str) -> Result<Vec<String>, JsonPatchError> {
    if pointer.is_empty() {
        return Ok(Vec::new());
    }
    let Some(rest) = pointer.strip_prefix('/') else {
        return Err(JsonPatchError::Malformed(format!(
            "invalid JSON pointer: {pointer:?}"
        )));
    };
    Ok(rest
        .split('/')
        .map(|token| token.replace("~1", "/").replace("~0", "~"))
        .collect())
}

fn decode(patch: &Value) -> Result<Vec<Operation>, JsonPatchError> {
    let Some(operations) = patch.as_array() else {
        return Err(JsonPatchError::Malformed(
            "json: cannot unmarshal object into Go value of type jsonpatch.Patch".into(),
        ));
    };
    if operations.len() > MAX_OPERATIONS {
        return Err(JsonPatchError::TooManyOperations(operations.len()));
    }
    operations
        .iter()
        .map(|operation| {
            let text = |field: &str| operation.get(field).and_then(Value::as_str);
            let path_text =
                text("path").ok_or_else(|| JsonPatchError::Failed("missing path".into()));
            let value = || {
                operation
                    .get("value")
                    .cloned()
                    .ok_or_else(|| JsonPatchError::Failed("missing value".into()))
            };
            match text("op").unwrap_or("") {
                "add" => Ok(Operation::Add {
                    path: parse_pointer(path_text?)?,
                    value: value()?,
                }),
                "remove" => Ok(Operation::Remove {
                    path: parse_pointer(path_text?)?,
                }),
                "replace" => Ok(Operation::Replace {
                    path: parse_pointer(path_text?)?,
                    value: value()?,
                }),
                "move" => Ok(Operation::Move {
                    from: parse_pointer(
                        text("from")
                            .ok_or_else(|| JsonPatchError::Failed("missing from".into()))?,
                    )?,
                    path: parse_pointer(path_text?)?,
                }),
                "copy" => Ok(Operation::Copy {
                    from: parse_pointer(
                        text("from")
                            .ok_or_else(|| JsonPatchError::Failed("missing from".into()))?,
                    )?,
                    path: parse_pointer(path_text?)?,
                }),
                "test" => {
                    let raw_path = path_text?.to_string();
                    Ok(Operation::Test {
                        path: parse_pointer(&raw_path)?,
                        value: value()?,
                        raw_path,
                    })
                }
                other => Err(JsonPatchError::Failed(format!("Unexpected kind: {other}"))),
            }
        })
        .collect()
}

fn missing(path: &[String]) -> JsonPatchError {
    JsonPatchError::Failed(format!(
        "doc is missing path: \"/{}\": missing value",
        path.join("/")
    ))
}

fn array_index(token: &str, len: usize, allow_end: bool) -> Option<usize> {
    if allow_end && token == "-" {
        return Some(len);
    }
    if token.len() > 1 && token.starts_with('0') {
        return None;
    }
    let index = token.parse::<usize>().ok()?;
    let bound = if allow_end {
        len
    } else {
        len.saturating_sub(1)
    };
    (index <= bound && (allow_end || len > 0)).then_some(index)
}

/// The container of the last token, and that token.
fn parent<'a>(
    document: &'a mut Value,
    path: &'a [String],
) -> Result<(&'a mut Value, &'a str), JsonPatchError> {
    let Some((last, parents)) = path.split_last() else {
        return Err(missing(path));
    };
    let mut current = document;
    for token in parents {
        current = match current {
            Value::Object(map) => map.get_mut(token).ok_or_else(|| missing(path))?,
            Value::Array(items) => {
                let len = items.len();
                let index = array_index(token, len, false).ok_or_else(|| missing(path))?;
                items.get_mut(index).ok_or_else(|| missing(path))?
            }
            _ => return Err(missing(path)),
        };
    }
    Ok((current, last.as_str()))
}

fn get<'a>(document: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(document, |current, token| match current {
            Value::Object(map) => map.get(token),
            Value::Array(items) => {
                array_index(token, items.len(), false).and_then(|index| items.get(index))
            }
            _ => None,
        })
}

fn add(document: &mut Value, path: &[String], value: Value) -> Result<(), JsonPatchError> {
    if path.is_empty() {
        *document = value;
        return Ok(());
    }
    let (container, token) = parent(document, path)?;
    match container {
        Value::Object(map) => {
            map.insert(token.to_string(), value);
            Ok(())
        }
        Value::Array(items) => {
            let index = array_index(token, items.len(), true).ok_or_else(|| {
                JsonPatchError::Failed(format!("Unable to access invalid index: {token}"))
            })?;
            items.insert(index, value);
            Ok(())
        }
        _ => Err(missing(path)),
    }
}

fn remove(document: &mut Value, path: &[String]) -> Result<Value, JsonPatchError> {
    let (container, token) = parent(document, path)?;
    match container {
        Value::Object(map) => map.remove(token).ok_or_else(|| missing(path)),
        Value::Array(items) => {
            let index = array_index(token, items.len(), false).ok_or_else(|| missing(path))?;
            Ok(items.remove(index))
        }
        _ => Err(missing(path)),
    }
}

/// The JSON size of `value` (what evanphx/json-patch's `deepCopy` counts).
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Writing to a counter cannot fail, and a tree has no unserializable values.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
}

/// An upper bound of the document's nesting as operations apply, so that a
/// patch cannot nest it deeper than the store reads back (and deeper than
/// the stack can walk): pointers are strings, so `add` and `move` could
/// otherwise deepen it without limit.
struct DepthBound(usize);

impl DepthBound {
    /// A value of nesting `depth` placed at `path`.
    fn place(&mut self, path: &[String], depth: usize) -> Result<(), JsonPatchError> {
        let placed = path.len() + depth;
        if placed > MAX_DEPTH {
            return Err(JsonPatchError::Failed(too_deep_message()));
        }
        self.0 = self.0.max(placed);
        Ok(())
    }

    /// The bound on the nesting of the value at `path` (without measuring it).
    fn below(&self, path: &[String]) -> usize {
        self.0.saturating_sub(path.len())
    }
}

/// Apply `patch` (a JSON array of operations) to `document`.
pub fn apply(document: &Value, patch: &Value) -> Result<Value, JsonPatchError> {
    let operations = decode(patch)?;
    let mut result = document.clone();
    let mut bound = DepthBound(depth(&result));
    let mut copied = 0usize;
    for operation in operations {
        match operation {
            Operation::Add { path, value } => {
                bound.place(&path, depth(&value))?;
                add(&mut result, &path, value)?
            }
            Operation::Remove { path } => {
                remove(&mut result, &path)?;
            }
            Operation::Replace { path, value } => {
                bound.place(&path, depth(&value))?;
                if path.is_empty() {
                    result = value;
                } else {
                    remove(&mut result, &path)?;
                    add(&mut result, &path, value)?;
                }
            }
            Operation::Move { from, path } => {
                if path.len() > from.len() && path[..from.len()] == from[..] {
                    return Err(JsonPatchError::Failed(
                        "invalid move: cannot move a value into itself".into(),
                    ));
                }
                bound.place(&path, bound.below(&from))?;
                let value = remove(&mut result, &from)?;
                add(&mut result, &path, value)?;
            }
            Operation::Copy { from, path } => {
                let value = get(&result, &from).cloned().ok_or_else(|| missing(&from))?;
                // evanphx/json-patch `copy`: the accumulated size is checked
                // before the value is placed.
                copied = copied.saturating_add(json_size(&value));
                if copied > MAX_COPY_BYTES {
                    return Err(JsonPatchError::Failed(format!(
                        "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_COPY_BYTES}"
                    )));
                }
                bound.place(&path, depth(&value))?;
                add(&mut result, &path, value)?;
            }
            Operation::Test {
                path,
                value,
                raw_path,
            } => {
                // evanphx/json-patch `test`: a missing path equals a null value
                // (kube-rs's finalizer helper tests `/metadata/finalizers` for null).
                let found = get(&result, &path);
                let matches = found == Some(&value) || (found.is_none() && value.is_null());
                if !matches {
                    return Err(JsonPatchError::Failed(format!(
                        "testing value {raw_path} failed: test failed"
                    )));
                }
            }
        }
    }
    Ok(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc6902_appendix_a() {
        let cases = [
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz","value":"qux"}]),
                json!({"baz":"qux","foo":"bar"}),
            ),
            (
                json!({"foo":["bar","baz"]}),
                json!([{"op":"add","path":"/foo/1","value":"qux"}]),
                json!({"foo":["bar","qux","baz"]}),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"remove","path":"/baz"}]),
                json!({"foo":"bar"}),
            ),
            (
                json!({"foo":["bar","qux","baz"]}),
                json!([{"op":"remove","path":"/foo/1"}]),
                json!({"foo":["bar","baz"]}),
            ),
            (
                json!({"baz":"qux","foo":"bar"}),
                json!([{"op":"replace","path":"/baz","value":"boo"}]),
                json!({"baz":"boo","foo":"bar"}),
            ),
            (
                json!({"foo":{"bar":"baz","waldo":"fred"},"qux":{"corge":"grault"}}),
                json!([{"op":"move","from":"/foo/waldo","path":"/qux/thud"}]),
                json!({"foo":{"bar":"baz"},"qux":{"corge":"grault","thud":"fred"}}),
            ),
            (
                json!({"foo":["all","grass","cows","eat"]}),
                json!([{"op":"move","from":"/foo/1","path":"/foo/3"}]),
                json!({"foo":["all","cows","eat","grass"]}),
            ),
            (
                json!({"baz":"qux","foo":["a",2,"c"]}),
                json!([{"op":"test","path":"/baz","value":"qux"},{"op":"test","path":"/foo/1","value":2}]),
                json!({"baz":"qux","foo":["a",2,"c"]}),
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/child","value":{"grandchild":{}}}]),
                json!({"foo":"bar","child":{"grandchild":{}}}),
            ),
            (
                json!({"foo":["bar"]}),
                json!([{"op":"add","path":"/foo/-","value":["abc","def"]}]),
                json!({"foo":["bar",["abc","def"]]}),
            ),
            (
                json!({"/":9,"~1":10}),
                json!([{"op":"test","path":"/~01","value":10}]),
                json!({"/":9,"~1":10}),
            ),
            (
                json!({"a":{"b":1}}),
                json!([{"op":"copy","from":"/a","path":"/c"}]),
                json!({"a":{"b":1},"c":{"b":1}}),
            ),
        ];
        for (document, patch, expected) in cases {
            assert_eq!(apply(&document, &patch), Ok(expected), "{patch}");
        }
    }

    #[test]
    fn failures_have_kube_codes() {
        let cases: [(Value, Value, u16); 7] = [
            (
                json!({"baz":"qux"}),
                json!([{"op":"test","path":"/baz","value":"bar"}]),
                422,
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"add","path":"/baz/bat","value":"qux"}]),
                422,
            ),
            (
                json!({"foo":"bar"}),
                json!([{"op":"remove","path":"/nope"}]),
                422,
            ),
            (
                json!({"foo":[1]}),
                json!([{"op":"add","path":"/foo/5","value":1}]),
                422,
            ),
            (json!({}), json!([{"op":"frobnicate","path":"/a"}]), 422),
            (json!({}), json!({"op":"add"}), 400),
            (
                json!({}),
                json!([{"op":"add","path":"nope","value":1}]),
                400,
            ),
        ];
        for (document, patch, code) in cases {
            assert_eq!(
                apply(&document, &patch).map_err(|error| error.http_code()),
                Err(code),
                "{patch}"
            );
        }
        let too_many = Value::Array(vec![
            json!({"op":"test","path":"","value":{}});
            MAX_OPERATIONS + 1
        ]);
        assert_eq!(
            apply(&json!({}), &too_many).map_err(|error| error.http_code()),
            Err(413)
        );
    }
    /// The repro of a 1 KiB ConfigMap grown to 70 MB by 16 copies of `/data`.
    #[test]
    fn copies_are_bounded_as_kube_bounds_them() {
        let document = json!({"data": {"a": "x".repeat(1000)}});
        let copies: Vec<Value> = (0..16)
            .map(|n| json!({"op": "copy", "from": "/data", "path": format!("/data/d{n}")}))
            .collect();
        let error = apply(&document, &Value::Array(copies)).expect_err("refused");
        assert_eq!(error.http_code(), 422);
        let message = error.to_string();
        assert!(
            message.starts_with(
                "Unable to complete the copy, the accumulated size increase of copy is "
            ) && message.ends_with(", exceeding the limit 3145728"),
            "{message}"
        );
        // A few copies within the limit still apply.
        let two = json!([
            {"op": "copy", "from": "/data", "path": "/data/d0"},
            {"op": "copy", "from": "/data", "path": "/data/d1"}
        ]);
        let patched = apply(&document, &two).expect("applies");
        assert_eq!(
            patched["data"]["d1"]["d0"]["a"].as_str().map(str::len),
            Some(1000)
        );
    }

    /// Pointers are strings: adds and moves could nest a document deeper
    /// than any parser reads back (and than the stack walks).
    #[test]
    fn nesting_is_bounded_by_what_the_store_reads_back() {
        let deep_value = (0..60).fold(json!(1), |inner, _| json!({"a": inner}));
        let inside = |levels: usize| format!("/x0{}", "/a".repeat(levels));
        let adds = json!([
            {"op": "add", "path": "/x0", "value": deep_value},
            {"op": "add", "path": format!("{}/x1", inside(59)), "value": deep_value},
            {"op": "add", "path": format!("{}/x1{}/x2", inside(59), "/a".repeat(10)), "value": deep_value}
        ]);
        let error = apply(&json!({}), &adds).expect_err("refused");
        assert_eq!(error.http_code(), 422);
        assert!(
            error.to_string().contains("nested deeper than 127"),
            "{error}"
        );
        let two = Value::Array(adds.as_array().expect("array")[..2].to_vec());
        assert!(apply(&json!({}), &two).is_ok());
        // Repeated moves into a deeper path are bounded as well.
        let mut operations = vec![json!({"op": "add", "path": "/v", "value": {"w": {}}})];
        for _ in 0..200 {
            operations.push(json!({"op": "move", "from": "/v", "path": "/v2"}));
            operations.push(json!({"op": "add", "path": "/v", "value": {}}));
            operations.push(json!({"op": "move", "from": "/v2", "path": "/v/w"}));
        }
        assert!(apply(&json!({}), &Value::Array(operations)).is_err());
        // Exactly the limit applies.
        let at_limit = (0..MAX_DEPTH - 1).fold(json!(1), |inner, _| json!([inner]));
        let patch = json!([{"op": "add", "path": "/a", "value": at_limit}]);
        assert!(apply(&json!({}), &patch).is_ok());
    }

    #[test]
    fn test_of_null_matches_a_missing_path() {
        let patch =
            json!([{"op":"test","path":"/a","value":null},{"op":"add","path":"/a","value":[1]}]);
        assert_eq!(apply(&json!({}), &patch).ok(), Some(json!({"a": [1]})));
        let present = json!([{"op":"test","path":"/a","value":null}]);
        assert!(apply(&json!({"a": 1}), &present).is_err());
    }
}
