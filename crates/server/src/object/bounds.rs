//! What an object must stay within to be stored: deep enough to read back
//! and small enough for etcd.
//!
//! - Depth: the store keeps objects as JSON and reads them back with
//!   serde_json, which refuses more than [`MAX_DEPTH`] nested arrays and
//!   objects. A request body cannot exceed it (it is parsed the same way),
//!   but a JSON patch can nest a document as deep as it likes and a protobuf
//!   body can embed raw JSON inside nested messages: such an object must be
//!   refused when written, never stored and then unreadable.
//! - Size: a kube-apiserver on etcd cannot store an object whose write
//!   exceeds etcd's default `--max-request-bytes` of 1.5 MiB; its clients
//!   see a 500 with etcd's own message (`etcdserver: request is too large`,
//!   `storage/etcd3/store.go` passes the error through and
//!   `responsewriters.ErrorToAPIStatus` makes it an unknown 500). ferrokube
//!   answers the same on every backend ([`too_large`]).

use serde_json::Value;

use crate::status::Status;

/// The deepest nesting of arrays and objects the store reads back
/// (serde_json's recursion limit of 128 leaves room for 127 levels).
pub const MAX_DEPTH: usize = 127;

/// etcd's default `--max-request-bytes` (1.5 MiB): the largest write request
/// an etcd with default settings accepts (`embed.DefaultMaxRequestBytes`).
pub const MAX_REQUEST_BYTES: usize = 1536 * 1024;

/// What a write transaction adds to its key and value in etcd's
/// `InternalRaftRequest` (`Txn` with a compare on the key's mod revision, the
/// put, and the read of the key when the compare fails): field tags and
/// lengths, the revision and the request header. Generous by a few bytes.
const TXN_OVERHEAD_BYTES: usize = 64;

/// Nesting depth of `value`: 0 for a scalar, 1 for `{}` or `[]`, one more per
/// level. Iterative, so a document deeper than the stack is measured safely.
pub fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack: Vec<(&Value, usize)> = vec![(value, 0)];
    while let Some((node, level)) = stack.pop() {
        match node {
            Value::Array(items) => {
                deepest = deepest.max(level + 1);
                stack.extend(items.iter().map(|item| (item, level + 1)));
            }
            Value::Object(members) => {
                deepest = deepest.max(level + 1);
                stack.extend(members.values().map(|member| (member, level + 1)));
            }
            _ => {}
        }
    }
    deepest
}

/// Whether a write of `value_len` bytes under `key` fits one etcd request.
pub fn fits_one_request(key: &str, value_len: usize) -> bool {
    // The key appears three times: compare, put, and the failure branch's get.
    value_len + 3 * key.len() + TXN_OVERHEAD_BYTES <= MAX_REQUEST_BYTES
}

/// The answer kube-apiserver on etcd gives for an object too large to store:
/// 500, reason unknown, etcd's message.
pub fn too_large() -> Status {
    Status {
        code: 500,
        reason: "",
        message: "etcdserver: request is too large".to_string(),
        details: None,
    }
}

/// Why an object nested deeper than [`MAX_DEPTH`] is refused.
pub fn too_deep_message() -> String {
    format!("the object is nested deeper than {MAX_DEPTH} levels, which the store cannot read back")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn nested(levels: usize) -> String {
        "[".repeat(levels) + &"]".repeat(levels)
    }

    #[test]
    fn depth_counts_containers() {
        assert_eq!(depth(&json!(1)), 0);
        assert_eq!(depth(&json!({})), 1);
        assert_eq!(depth(&json!({"a": [1, {"b": []}], "c": 2})), 4);
        let deep: Value = serde_json::from_str(&nested(MAX_DEPTH)).expect("parses");
        assert_eq!(depth(&deep), MAX_DEPTH);
    }

    /// The bound is serde_json's: one level more no longer parses.
    #[test]
    fn max_depth_is_what_serde_json_reads_back() {
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH)).is_ok());
        assert!(serde_json::from_str::<Value>(&nested(MAX_DEPTH + 1)).is_err());
    }

    #[test]
    fn request_size_counts_key_and_value() {
        let key = "/registry/configmaps/default/big";
        assert!(fits_one_request(key, 1024 * 1024));
        assert!(fits_one_request(
            key,
            MAX_REQUEST_BYTES - 3 * key.len() - TXN_OVERHEAD_BYTES
        ));
        assert!(!fits_one_request(
            key,
            MAX_REQUEST_BYTES - 3 * key.len() - TXN_OVERHEAD_BYTES + 1
        ));
        let status = too_large();
        assert_eq!((status.code, status.reason), (500, ""));
        assert_eq!(status.message, "etcdserver: request is too large");
    }
}
