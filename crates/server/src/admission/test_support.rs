//! What the built-in plugins' unit tests share: a memory store holding
//! given objects, and the attributes of a write.

use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};
use serde_json::Value;

use super::attributes::{Attributes, GroupVersionName, Operation};
use crate::object::{ObjectCodec, ObjectStore};

/// A memory store holding `objects` (key, object).
pub async fn store_with(objects: &[(&str, Value)]) -> ObjectStore {
    let backend: std::sync::Arc<dyn Backend> =
        std::sync::Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    let store = Store::open(backend, ObjectCodec).await.expect("store");
    for (key, object) in objects {
        store
            .commit(Txn::single(Op::Put {
                key: (*key).into(),
                value: serde_json::to_vec(object).expect("json").into(),
                expect: Expect::Any,
            }))
            .await
            .expect("commit");
    }
    store
}

/// The attributes of a write of `resource` in namespace `ns` (the name is
/// left to the object, as for a create).
pub fn attributes<'a>(
    operation: Operation,
    group: &str,
    version: &str,
    resource: &str,
    old_object: Option<&'a Value>,
) -> Attributes<'a> {
    let kind = match resource {
        "pods" => "Pod",
        "persistentvolumeclaims" => "PersistentVolumeClaim",
        "priorityclasses" => "PriorityClass",
        _ => "Other",
    };
    Attributes {
        operation,
        kind: GroupVersionName::new(group, version, kind),
        resource: GroupVersionName::new(group, version, resource),
        subresource: "",
        name: "",
        namespace: if group.is_empty() { "ns" } else { "" },
        old_object,
        options: Value::Null,
        dry_run: false,
        user: None,
    }
}
