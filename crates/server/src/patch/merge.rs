//! JSON merge patch, RFC 7396 (`application/merge-patch+json`), as
//! `evanphx/json-patch` `MergePatch` applies it for kube-apiserver.

use serde_json::{Map, Value};

/// Deepest patch the engine follows; deeper input is rejected, never a stack overflow.
pub const MAX_DEPTH: usize = 256;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MergePatchError {
    #[error("the merge patch is nested deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// Apply `patch` to `target`.
pub fn apply(target: &Value, patch: &Value) -> Result<Value, MergePatchError> {
    let mut result = target.clone();
    merge(&mut result, patch, 0)?;
    Ok(result)
}

fn merge(target: &mut Value, patch: &Value, depth: usize) -> Result<(), MergePatchError> {
    if depth > MAX_DEPTH {
        return Err(MergePatchError::TooDeep);
    }
    let Some(patch) = patch.as_object() else {
        *target = patch.clone();
        return Ok(());
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Some(map) = target.as_object_mut() {
        for (key, value) in patch {
            if value.is_null() {
                map.remove(key);
            } else {
                merge(
                    map.entry(key.clone()).or_insert(Value::Null),
                    value,
                    depth + 1,
                )?;
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn rfc7396_appendix_a() {
        // The examples of RFC 7396 Appendix A.
        let cases = [
            (json!({"a":"b"}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"b"}), json!({"b":"c"}), json!({"a":"b","b":"c"})),
            (json!({"a":"b"}), json!({"a":null}), json!({})),
            (
                json!({"a":"b","b":"c"}),
                json!({"a":null}),
                json!({"b":"c"}),
            ),
            (json!({"a":["b"]}), json!({"a":"c"}), json!({"a":"c"})),
            (json!({"a":"c"}), json!({"a":["b"]}), json!({"a":["b"]})),
            (
                json!({"a":{"b":"c"}}),
                json!({"a":{"b":"d","c":null}}),
                json!({"a":{"b":"d"}}),
            ),
            (json!({"a":[{"b":"c"}]}), json!({"a":[1]}), json!({"a":[1]})),
            (json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"])),
            (json!({"a":"b"}), json!(["c"]), json!(["c"])),
            (json!({"a":"foo"}), json!(null), json!(null)),
            (json!({"a":"foo"}), json!("bar"), json!("bar")),
            (json!({"e":null}), json!({"a":1}), json!({"e":null,"a":1})),
            (json!([1, 2]), json!({"a":"b","c":null}), json!({"a":"b"})),
            (
                json!({}),
                json!({"a":{"bb":{"ccc":null}}}),
                json!({"a":{"bb":{}}}),
            ),
        ];
        for (target, patch, expected) in cases {
            assert_eq!(apply(&target, &patch), Ok(expected), "{target} + {patch}");
        }
    }

    #[test]
    fn deep_patches_are_refused() {
        let mut patch = json!(1);
        for _ in 0..=MAX_DEPTH + 1 {
            patch = json!({ "a": patch });
        }
        assert_eq!(apply(&json!({}), &patch), Err(MergePatchError::TooDeep));
    }
}
