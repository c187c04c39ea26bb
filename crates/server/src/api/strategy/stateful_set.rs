//! `statefulSetStrategy`'s `dropStatefulSetDisabledFields`
//! (`pkg/registry/apps/statefulset/strategy.go`): `MaxUnavailableStatefulSet`
//! is alpha and off in 1.34, so `spec.updateStrategy.rollingUpdate.maxUnavailable`
//! is dropped unless the stored object already uses it (`maxUnavailableInUse`).

use serde_json::Value;

const POINTER: &str = "/spec/updateStrategy/rollingUpdate/maxUnavailable";

fn max_unavailable_in_use(object: Option<&Value>) -> bool {
    object
        .and_then(|object| object.pointer(POINTER))
        .is_some_and(|value| !value.is_null())
}

/// On create `old` is `None`.
pub(super) fn drop_disabled_fields(old: Option<&Value>, new: &mut Value) {
    if max_unavailable_in_use(old) {
        return;
    }
    if let Some(rolling) = new
        .pointer_mut("/spec/updateStrategy/rollingUpdate")
        .and_then(Value::as_object_mut)
    {
        rolling.remove("maxUnavailable");
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn max_unavailable_is_dropped_unless_in_use() {
        let with = json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1, "maxUnavailable": 2}}}});
        let mut created = with.clone();
        drop_disabled_fields(None, &mut created);
        assert_eq!(
            created.pointer("/spec/updateStrategy/rollingUpdate"),
            Some(&json!({"partition": 1}))
        );
        let mut updated = with.clone();
        drop_disabled_fields(Some(&with), &mut updated);
        assert_eq!(updated, with, "kept when the stored object uses it");
    }
}
