//! Writes through `pods/ephemeralcontainers`
//! (`pkg/apis/core/validation/validation.go`
//! `ValidatePodEphemeralContainersUpdate`, `validateEphemeralContainers`,
//! `allowedEphemeralContainerFields`): the pod's own rules, ephemeral
//! containers named uniquely across all containers, targeting a regular or
//! init container, without the fields kube disallows, and none removed or
//! changed once added.

use std::collections::BTreeSet;

use serde_json::Value;

use super::container;
use super::field::{self, child, index};
use super::pod::pod_spec;
use super::pod_options::PodValidationOptions;
use super::pod_volumes;
use super::resource_requirements;
use crate::status::FieldError;

/// The container fields an ephemeral container may not set, in the order of
/// `EphemeralContainerCommon`'s fields.
const DISALLOWED_FIELDS: [&str; 8] = [
    "ports",
    "resources",
    "resizePolicy",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
    "restartPolicy",
];

const DISALLOWED: &str = "cannot be set for an Ephemeral Container";

/// `ValidatePodEphemeralContainersUpdate` (metadata is the write path's).
pub fn ephemeral_containers_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let spec = new.get("spec").unwrap_or(&Value::Null);
    let mut errors = pod_spec(spec, "spec", true, PodValidationOptions::from_old_pod(old));
    ephemeral_containers(spec, &mut errors);
    let mirror = old
        .pointer("/metadata/annotations/kubernetes.io~1config.mirror")
        .is_some();
    if mirror {
        return vec![field::forbidden(
            "",
            "static pods do not support ephemeral containers",
        )];
    }
    let path = "spec.ephemeralContainers";
    let old_list = field::items_at(
        old.get("spec").unwrap_or(&Value::Null),
        "ephemeralContainers",
    );
    let new_list = field::items_at(spec, "ephemeralContainers");
    for previous in old_list {
        let name = field::str_at(previous, "name");
        match new_list.iter().find(|item| field::str_at(item, "name") == name) {
            None => errors.push(field::forbidden(
                path,
                format!("existing ephemeral containers {name:?} may not be removed\n"),
            )),
            Some(current) if current != previous => errors.push(field::forbidden(
                &field::key(path, name),
                format!(
                    "existing ephemeral containers {name:?} may not be changed\n- {previous}\n+ {current}"
                ),
            )),
            Some(_) => {}
        }
    }
    errors
}

/// `validateEphemeralContainers`.
fn ephemeral_containers(spec: &Value, errors: &mut Vec<FieldError>) {
    let list = field::items_at(spec, "ephemeralContainers");
    if list.is_empty() {
        return;
    }
    let volumes = pod_volumes::volumes(
        field::items_at(spec, "volumes"),
        pod_volumes::PodContext {
            pod_name: "",
            resource_is_pod: true,
        },
        "spec.volumes",
        &mut Vec::new(),
    );
    let claim_names = resource_requirements::pod_claim_names(spec);
    let requirements = resource_requirements::RequirementsContext {
        claim_names: &claim_names,
        allow_indivisible_huge_pages: false,
    };
    let others: BTreeSet<&str> = field::items_at(spec, "containers")
        .iter()
        .chain(field::items_at(spec, "initContainers"))
        .map(|item| field::str_at(item, "name"))
        .collect();
    let mut all_names = others.clone();
    let list_path = "spec.ephemeralContainers";
    for (position, item) in list.iter().enumerate() {
        let item_path = index(list_path, position);
        container::common(
            item,
            &volumes,
            &container::PodContext::of(spec, requirements),
            &item_path,
            errors,
        );
        let name = field::str_at(item, "name");
        if !all_names.insert(name) {
            errors.push(field::duplicate(&child(&item_path, "name"), name));
        }
        let target = field::str_at(item, "targetContainerName");
        if !target.is_empty() && !others.contains(target) {
            errors.push(field::not_found(
                &child(&item_path, "targetContainerName"),
                target,
            ));
        }
        for disallowed in DISALLOWED_FIELDS {
            if item.get(disallowed).is_some_and(is_set) {
                errors.push(field::forbidden(&child(&item_path, disallowed), DISALLOWED));
            }
        }
        for (mount_position, mount) in field::items_at(item, "volumeMounts").iter().enumerate() {
            let mount_path = index(&child(&item_path, "volumeMounts"), mount_position);
            for sub_path in ["subPath", "subPathExpr"] {
                if !field::str_at(mount, sub_path).is_empty() {
                    errors.push(field::forbidden(&child(&mount_path, sub_path), DISALLOWED));
                }
            }
        }
    }
}

/// Whether a field holds more than Go's zero value (`validateFieldAllowList`
/// compares with `reflect.Value.IsZero`: an empty struct, list or string is zero).
fn is_set(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::String(text) => !text.is_empty(),
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => map.values().any(is_set),
        Value::Bool(flag) => *flag,
        Value::Number(number) => number.as_f64() != Some(0.0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod(ephemeral: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": {
            "containers": [{"name": "c", "image": "x", "imagePullPolicy": "Always",
                "terminationMessagePolicy": "File"}],
            "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
            "terminationGracePeriodSeconds": 30,
            "ephemeralContainers": ephemeral}})
    }

    fn debugger(extra: Value) -> Value {
        let mut container = json!({"name": "d", "image": "busybox", "imagePullPolicy": "Always",
            "terminationMessagePolicy": "File", "resources": {}});
        if let (Some(map), Some(extra)) = (container.as_object_mut(), extra.as_object()) {
            map.extend(extra.clone());
        }
        container
    }

    fn messages(errors: &[FieldError]) -> Vec<String> {
        errors
            .iter()
            .map(|error| format!("{}: {}", error.field, error.body()))
            .collect()
    }

    #[test]
    fn adding_a_debugger_is_allowed() {
        let old = pod(json!([]));
        let new = pod(json!([debugger(json!({"targetContainerName": "c"}))]));
        assert_eq!(
            messages(&ephemeral_containers_update(&new, &old)),
            Vec::<String>::new()
        );
    }

    #[test]
    fn names_targets_and_disallowed_fields_are_kubes() {
        let old = pod(json!([]));
        let new = pod(json!([debugger(json!({
            "name": "c",
            "targetContainerName": "nope",
            "ports": [{"containerPort": 80}],
            "resources": {"limits": {"cpu": "1"}},
            "readinessProbe": {"exec": {"command": ["true"]}},
            "volumeMounts": [{"name": "v", "mountPath": "/v", "subPath": "x"}],
        }))]));
        let errors = messages(&ephemeral_containers_update(&new, &old));
        for expected in [
            "spec.ephemeralContainers[0].name: Duplicate value: \"c\"",
            "spec.ephemeralContainers[0].targetContainerName: Not found: \"nope\"",
            "spec.ephemeralContainers[0].ports: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].resources: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].readinessProbe: Forbidden: cannot be set for an Ephemeral Container",
            "spec.ephemeralContainers[0].volumeMounts[0].subPath: Forbidden: cannot be set for an Ephemeral Container",
        ] {
            assert!(errors.iter().any(|error| error == expected), "{expected} not in {errors:?}");
        }
    }

    #[test]
    fn existing_ephemeral_containers_stay_as_they_are() {
        let old = pod(json!([debugger(json!({}))]));
        let removed = pod(json!([]));
        assert_eq!(
            messages(&ephemeral_containers_update(&removed, &old)),
            ["spec.ephemeralContainers: Forbidden: existing ephemeral containers \"d\" may not be removed\n"]
        );
        let changed = pod(json!([debugger(json!({"image": "alpine"}))]));
        let errors = ephemeral_containers_update(&changed, &old);
        assert_eq!(errors.len(), 1);
        assert_eq!(errors[0].field, "spec.ephemeralContainers[d]");
        assert!(errors[0]
            .body()
            .contains("existing ephemeral containers \"d\" may not be changed"));
        let mut mirror = old.clone();
        mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
        assert_eq!(
            messages(&ephemeral_containers_update(&old, &mirror)),
            [": Forbidden: static pods do not support ephemeral containers"]
        );
    }
}
