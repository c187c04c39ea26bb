//! `dropImageVolumes` (`pkg/api/pod/util.go`, called by `dropDisabledFields`
//! for pods and every pod template): with the ImageVolume feature gate off,
//! as in 1.34, a pod spec loses its image volumes and the mounts naming
//! them, unless the stored object already uses image volumes.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::registry::ResourceDef;

/// Where a kind keeps the pod spec the strategy drops fields from.
fn pod_spec_pointer(resource: &ResourceDef) -> Option<String> {
    if (resource.group, resource.kind) == ("", "Pod") {
        return Some("/spec".to_string());
    }
    super::app_armor::pod_template_location(resource.group, resource.kind)
        .map(|(template, _)| format!("{template}/spec"))
}

fn is_image_volume(volume: &Value) -> bool {
    volume.get("image").is_some_and(|image| !image.is_null())
}

/// `imageVolumesInUse`.
fn in_use(spec: Option<&Value>) -> bool {
    spec.and_then(|spec| spec.get("volumes"))
        .and_then(Value::as_array)
        .is_some_and(|volumes| volumes.iter().any(is_image_volume))
}

/// Drops the image volumes of `new` (and their mounts) unless `old` has some.
pub(super) fn drop_image_volumes(resource: &ResourceDef, old: Option<&Value>, new: &mut Value) {
    let Some(pointer) = pod_spec_pointer(resource) else {
        return;
    };
    if in_use(old.and_then(|old| old.pointer(&pointer))) {
        return;
    }
    let Some(spec) = new.pointer_mut(&pointer).and_then(Value::as_object_mut) else {
        return;
    };
    let Some(volumes) = spec.get_mut("volumes").and_then(Value::as_array_mut) else {
        return;
    };
    let dropped: BTreeSet<String> = volumes
        .iter()
        .filter(|volume| is_image_volume(volume))
        .map(|volume| {
            volume
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        })
        .collect();
    if dropped.is_empty() {
        return;
    }
    volumes.retain(|volume| !is_image_volume(volume));
    if volumes.is_empty() {
        spec.remove("volumes");
    }
    for list in ["containers", "initContainers", "ephemeralContainers"] {
        let Some(containers) = spec.get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            let Some(mounts) = container
                .get_mut("volumeMounts")
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            mounts.retain(|mount| {
                let name = mount
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                !dropped.contains(name)
            });
            if mounts.is_empty() {
                container.remove("volumeMounts");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn def(group: &str, plural: &str) -> &'static ResourceDef {
        crate::registry::builtin_resources()
            .iter()
            .find(|resource| resource.group == group && resource.plural == plural)
            .expect("a built-in resource")
    }

    #[test]
    fn image_volumes_and_their_mounts_are_dropped_unless_already_in_use() {
        let pod = json!({"spec": {
            "volumes": [{"name": "img", "image": {"reference": "x"}}, {"name": "e", "emptyDir": {}}],
            "containers": [{"name": "c", "volumeMounts": [
                {"name": "img", "mountPath": "/i"}, {"name": "e", "mountPath": "/e"}]}],
            "initContainers": [{"name": "i", "volumeMounts": [{"name": "img", "mountPath": "/i"}]}]
        }});
        let mut created = pod.clone();
        drop_image_volumes(def("", "pods"), None, &mut created);
        assert_eq!(
            created,
            json!({"spec": {
                "volumes": [{"name": "e", "emptyDir": {}}],
                "containers": [{"name": "c", "volumeMounts": [{"name": "e", "mountPath": "/e"}]}],
                "initContainers": [{"name": "i"}]
            }})
        );
        let mut updated = pod.clone();
        drop_image_volumes(def("", "pods"), Some(&pod), &mut updated);
        assert_eq!(updated, pod, "an old object using image volumes keeps them");

        let deployment = json!({"spec": {"template": {"spec": {
            "volumes": [{"name": "img", "image": {}}], "containers": [{"name": "c"}]}}}});
        let mut created = deployment.clone();
        drop_image_volumes(def("apps", "deployments"), None, &mut created);
        assert_eq!(
            created,
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}})
        );
    }
}
