//! Priority (`plugin/pkg/admission/priority` `Plugin.Admit` / `Validate`):
//! a pod's `priorityClassName` resolved to `priority` and
//! `preemptionPolicy` at create (the globalDefault PriorityClass, else
//! priority 0 and `PreemptLowerPriority`, when it names none), an update
//! keeping what the create set, and at most one `globalDefault`
//! PriorityClass.

use serde_json::{json, Value};

use super::attributes::{Attributes, Operation};
use super::namespace_lifecycle::forbidden;
use crate::object::ObjectStore;
use crate::status::Result;

const PRIORITY_CLASSES: &str = "/registry/priorityclasses/";

/// `scheduling.DefaultPriorityWhenNoDefaultClassExists`.
const DEFAULT_PRIORITY: i64 = 0;

/// One stored PriorityClass, as far as the plugin reads it.
#[derive(Debug, Clone, PartialEq)]
struct PriorityClass {
    name: String,
    value: i64,
    preemption_policy: Option<String>,
    global_default: bool,
}

impl PriorityClass {
    fn read(object: &Value) -> PriorityClass {
        PriorityClass {
            name: crate::object::name(object).to_string(),
            value: object.get("value").and_then(Value::as_i64).unwrap_or(0),
            preemption_policy: object
                .get("preemptionPolicy")
                .and_then(Value::as_str)
                .map(str::to_string),
            global_default: object
                .get("globalDefault")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        }
    }
}

fn lookup(store: &ObjectStore, name: &str) -> Option<PriorityClass> {
    let snapshot = store.snapshot();
    let entry = snapshot.get(&format!("{PRIORITY_CLASSES}{name}"))?;
    entry.object.value().as_ref().map(PriorityClass::read)
}

/// `getDefaultPriorityClass`: of several globalDefault classes (a race),
/// the one with the lowest value.
fn default_class(store: &ObjectStore) -> Option<PriorityClass> {
    let snapshot = store.snapshot();
    snapshot
        .range(PRIORITY_CLASSES, None)
        .filter_map(|(_, entry)| entry.object.value())
        .map(|object| PriorityClass::read(&object))
        .filter(|class| class.global_default)
        .fold(None, |lowest: Option<PriorityClass>, class| match lowest {
            Some(lowest) if lowest.value <= class.value => Some(lowest),
            _ => Some(class),
        })
}

fn is_resource(attributes: &Attributes<'_>, group: &str, resource: &str) -> bool {
    attributes.resource.group == group
        && attributes.resource.name == resource
        && attributes.subresource.is_empty()
        && matches!(attributes.operation, Operation::Create | Operation::Update)
}

/// `Plugin.Admit` (`admitPod`).
pub fn admit(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&mut Value>,
) -> Result<()> {
    if !is_resource(attributes, "", "pods") {
        return Ok(());
    }
    let Some(pod) = object.filter(|pod| pod.is_object()) else {
        return Ok(());
    };
    if attributes.operation == Operation::Update {
        // The create set them; an update that leaves them out keeps them.
        let old_spec = attributes.old_object.and_then(|old| old.get("spec"));
        let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
            return Ok(());
        };
        for field in ["priority", "preemptionPolicy"] {
            let old = old_spec
                .and_then(|old| old.get(field))
                .filter(|v| !v.is_null());
            if spec.get(field).is_none_or(Value::is_null) {
                if let Some(old) = old {
                    spec.insert(field.into(), old.clone());
                }
            }
        }
        return Ok(());
    }
    let spec_str = |pod: &Value, field: &str| -> String {
        pod.pointer(&format!("/spec/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let class_name = spec_str(pod, "priorityClassName");
    let (resolved_name, priority, preemption_policy) = if class_name.is_empty() {
        match default_class(store) {
            Some(class) => (class.name, class.value, class.preemption_policy),
            None => (
                String::new(),
                DEFAULT_PRIORITY,
                Some("PreemptLowerPriority".to_string()),
            ),
        }
    } else {
        match lookup(store, &class_name) {
            Some(class) => (class_name.clone(), class.value, class.preemption_policy),
            None => {
                return Err(forbidden(
                    attributes,
                    Some(pod),
                    &format!("no PriorityClass with name {class_name} was found"),
                ))
            }
        }
    };
    if let Some(given) = pod.pointer("/spec/priority").and_then(Value::as_i64) {
        if given != priority {
            return Err(forbidden(
                attributes,
                Some(pod),
                &format!(
                    "the integer value of priority ({given}) must not be provided in pod spec; \
                     priority admission controller computed {priority} from the given PriorityClass name"
                ),
            ));
        }
    }
    if let Some(policy) = &preemption_policy {
        let given = spec_str(pod, "preemptionPolicy");
        if !given.is_empty() && &given != policy {
            return Err(forbidden(
                attributes,
                Some(pod),
                &format!(
                    "the string value of PreemptionPolicy ({given}) must not be provided in pod spec; \
                     priority admission controller computed {policy} from the given PriorityClass name"
                ),
            ));
        }
    }
    if !pod.get("spec").is_some_and(Value::is_object) {
        pod["spec"] = json!({});
    }
    if let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) {
        if !resolved_name.is_empty() {
            spec.insert("priorityClassName".into(), json!(resolved_name));
        }
        spec.insert("priority".into(), json!(priority));
        if let Some(policy) = preemption_policy {
            spec.insert("preemptionPolicy".into(), json!(policy));
        }
    }
    Ok(())
}

/// `Plugin.Validate` (`validatePriorityClass`): a second globalDefault
/// PriorityClass is refused.
pub fn validate(
    store: &ObjectStore,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<()> {
    if !is_resource(attributes, "scheduling.k8s.io", "priorityclasses") {
        return Ok(());
    }
    let Some(class) = object else {
        return Ok(());
    };
    if !class
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false)
    {
        return Ok(());
    }
    let Some(existing) = default_class(store) else {
        return Ok(());
    };
    if attributes.operation == Operation::Create || existing.name != crate::object::name(class) {
        return Err(forbidden(
            attributes,
            Some(class),
            &format!(
                "PriorityClass {} is already marked as default. Only one default can exist",
                existing.name
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::admission::test_support::{attributes, store_with};

    fn class(name: &str, value: i64, global_default: bool, policy: &str) -> Value {
        json!({
            "apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
            "metadata": {"name": name}, "value": value,
            "globalDefault": global_default, "preemptionPolicy": policy,
        })
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
    }

    #[tokio::test]
    async fn resolves_a_named_class_and_the_default() {
        let store = store_with(&[(
            "/registry/priorityclasses/high",
            class("high", 1000, false, "Never"),
        )])
        .await;
        let create = attributes(Operation::Create, "", "v1", "pods", None);
        let mut named = pod(json!({"priorityClassName": "high"}));
        admit(&store, &create, Some(&mut named)).expect("admitted");
        assert_eq!(named["spec"]["priority"], json!(1000));
        assert_eq!(named["spec"]["preemptionPolicy"], json!("Never"));
        let mut unnamed = pod(json!({}));
        admit(&store, &create, Some(&mut unnamed)).expect("admitted");
        assert_eq!(unnamed["spec"]["priority"], json!(0));
        assert_eq!(
            unnamed["spec"]["preemptionPolicy"],
            json!("PreemptLowerPriority")
        );
        assert!(unnamed["spec"].get("priorityClassName").is_none());

        let store = store_with(&[
            (
                "/registry/priorityclasses/a",
                class("a", 50, true, "PreemptLowerPriority"),
            ),
            ("/registry/priorityclasses/b", class("b", 10, true, "Never")),
        ])
        .await;
        let mut defaulted = pod(json!({}));
        admit(&store, &create, Some(&mut defaulted)).expect("admitted");
        // Of two defaults (a race), the lowest value.
        assert_eq!(defaulted["spec"]["priorityClassName"], json!("b"));
        assert_eq!(defaulted["spec"]["priority"], json!(10));
    }

    #[tokio::test]
    async fn refuses_unknown_classes_and_conflicting_values() {
        let store = store_with(&[(
            "/registry/priorityclasses/high",
            class("high", 1000, false, "PreemptLowerPriority"),
        )])
        .await;
        let create = attributes(Operation::Create, "", "v1", "pods", None);
        let refused = |spec: Value| {
            let mut pod = pod(spec);
            admit(&store, &create, Some(&mut pod)).expect_err("refused")
        };
        let missing = refused(json!({"priorityClassName": "nope"}));
        assert_eq!(missing.code, 403);
        assert_eq!(
            missing.message,
            r#"pods "p" is forbidden: no PriorityClass with name nope was found"#
        );
        assert_eq!(
            refused(json!({"priorityClassName": "high", "priority": 5})).message,
            "pods \"p\" is forbidden: the integer value of priority (5) must not be provided in pod spec; \
             priority admission controller computed 1000 from the given PriorityClass name"
        );
        assert_eq!(
            refused(json!({"preemptionPolicy": "Never"})).message,
            "pods \"p\" is forbidden: the string value of PreemptionPolicy (Never) must not be provided in pod spec; \
             priority admission controller computed PreemptLowerPriority from the given PriorityClass name"
        );
    }

    #[tokio::test]
    async fn an_update_keeps_the_priority_the_create_set() {
        let store = store_with(&[]).await;
        let old = pod(json!({"priority": 7, "preemptionPolicy": "Never"}));
        let update = attributes(Operation::Update, "", "v1", "pods", Some(&old));
        let mut new = pod(json!({}));
        admit(&store, &update, Some(&mut new)).expect("admitted");
        assert_eq!(new["spec"]["priority"], json!(7));
        assert_eq!(new["spec"]["preemptionPolicy"], json!("Never"));
    }

    #[tokio::test]
    async fn only_one_global_default() {
        let store = store_with(&[(
            "/registry/priorityclasses/a",
            class("a", 1, true, "PreemptLowerPriority"),
        )])
        .await;
        let candidate = class("b", 2, true, "PreemptLowerPriority");
        let create = attributes(
            Operation::Create,
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            None,
        );
        let error = validate(&store, &create, Some(&candidate)).expect_err("second default");
        assert_eq!(
            error.message,
            r#"priorityclasses.scheduling.k8s.io "b" is forbidden: PriorityClass a is already marked as default. Only one default can exist"#
        );
        let old = class("a", 1, true, "PreemptLowerPriority");
        let update = attributes(
            Operation::Update,
            "scheduling.k8s.io",
            "v1",
            "priorityclasses",
            Some(&old),
        );
        let same = class("a", 3, true, "PreemptLowerPriority");
        validate(&store, &update, Some(&same)).expect("the default itself may be updated");
        validate(&store, &create, Some(&class("c", 1, false, "Never"))).expect("not a default");
    }
}
