//! The default class a class-less object gets, shared by DefaultStorageClass
//! and DefaultIngressClass (`pkg/volume/util` `GetDefaultClass`,
//! `plugin/pkg/admission/network/defaultingressclass` `getDefaultClass`):
//! among the classes annotated as the default, the newest by
//! creationTimestamp, ties broken by the smaller name.

use serde_json::Value;

use crate::object::ObjectStore;

/// The name of the default class stored under `prefix`
/// (`/registry/storageclasses/`), where `is_default` says which ones are.
pub fn newest_default(
    store: &ObjectStore,
    prefix: &str,
    is_default: impl Fn(&Value) -> bool,
) -> Option<String> {
    let snapshot = store.snapshot();
    let mut best: Option<(String, String)> = None;
    for (_, entry) in snapshot.range(prefix, None) {
        let Some(class) = entry.object.value() else {
            continue;
        };
        if !is_default(&class) {
            continue;
        }
        let created = crate::object::meta_str(&class, "creationTimestamp").to_string();
        let name = crate::object::name(&class).to_string();
        let better = match &best {
            None => true,
            // RFC 3339 UTC timestamps of one format order as text.
            Some((best_created, best_name)) => {
                created > *best_created || (created == *best_created && name < *best_name)
            }
        };
        if better {
            best = Some((created, name));
        }
    }
    best.map(|(_, name)| name)
}

/// `metadata.annotations[key] == "true"`.
pub fn annotation_is_true(object: &Value, key: &str) -> bool {
    object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(key))
        .and_then(Value::as_str)
        == Some("true")
}
