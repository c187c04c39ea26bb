//! The AppArmor version skew of a pod create (`pkg/registry/core/pod/strategy.go`
//! `applyAppArmorVersionSkew`, kube 1.34): a container's deprecated
//! `container.apparmor.security.beta.kubernetes.io/<name>` annotation becomes
//! its `securityContext.appArmorProfile` when the container has none and the
//! value differs from the pod's profile, with kube's deprecation warning.
//! Since 1.34 (kubernetes#131989) fields are no longer copied into
//! annotations, and the annotations are left as sent.

use serde_json::{json, Map, Value};

/// `api.DeprecatedAppArmorAnnotationKeyPrefix`.
const ANNOTATION_KEY_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";
/// `api.DeprecatedAppArmorAnnotationValueLocalhostPrefix`.
const LOCALHOST_PREFIX: &str = "localhost/";
/// `ValidateAppArmorProfileField`'s `maxLocalhostProfileLength` (PATH_MAX - 1).
const MAX_LOCALHOST_PROFILE_LENGTH: usize = 4095;

/// `podutil.ApparmorFieldForAnnotation`: the profile an annotation value
/// names, `None` for an unknown value or an empty localhost profile name.
fn field_for_annotation(annotation: &str) -> Option<Value> {
    match annotation {
        "unconfined" => Some(json!({"type": "Unconfined"})),
        "runtime/default" => Some(json!({"type": "RuntimeDefault"})),
        _ => {
            let profile = annotation.strip_prefix(LOCALHOST_PREFIX)?;
            (!profile.is_empty()).then(|| json!({"type": "Localhost", "localhostProfile": profile}))
        }
    }
}

/// `corevalidation.ValidateAppArmorProfileField` on a profile derived from an
/// annotation: only a localhost profile name can be wrong (padded with
/// whitespace, or longer than a path).
fn is_valid(profile: &Value) -> bool {
    let Some(name) = profile.get("localhostProfile").and_then(Value::as_str) else {
        return true;
    };
    name.trim() == name && !name.is_empty() && name.len() <= MAX_LOCALHOST_PROFILE_LENGTH
}

/// The deprecation warning kube adds for an annotation it did not (or could
/// not) express as a field.
pub fn deprecation_warning(field_path_prefix: &str, key: &str) -> String {
    format!(
        "{field_path_prefix}metadata.annotations[{key}]: deprecated since v1.30; use the \"appArmorProfile\" field instead"
    )
}

/// `applyAppArmorVersionSkew`: syncs annotations into container fields and
/// returns the warnings, in `podutil.VisitContainers` order (init,
/// regular, ephemeral containers).
pub(super) fn apply_version_skew(pod: &mut Value) -> Vec<String> {
    let windows = pod.pointer("/spec/os/name").and_then(Value::as_str) == Some("windows");
    if windows {
        return Vec::new();
    }
    let annotations = pod
        .pointer("/metadata/annotations")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let pod_profile = pod
        .pointer("/spec/securityContext/appArmorProfile")
        .filter(|profile| !profile.is_null())
        .cloned();
    let mut warnings = Vec::new();
    let Some(spec) = pod.get_mut("spec").and_then(Value::as_object_mut) else {
        return warnings;
    };
    for field in ["initContainers", "containers", "ephemeralContainers"] {
        let Some(containers) = spec.get_mut(field).and_then(Value::as_array_mut) else {
            continue;
        };
        for container in containers.iter_mut().filter_map(Value::as_object_mut) {
            if let Some(warning) = sync_container(container, &annotations, pod_profile.as_ref()) {
                warnings.push(warning);
            }
        }
    }
    warnings
}

/// One container of `applyAppArmorVersionSkew`'s visit: its warning, if any.
fn sync_container(
    container: &mut Map<String, Value>,
    annotations: &Map<String, Value>,
    pod_profile: Option<&Value>,
) -> Option<String> {
    let name = container.get("name").and_then(Value::as_str).unwrap_or("");
    let key = format!("{ANNOTATION_KEY_PREFIX}{name}");
    let annotation = annotations.get(&key)?.as_str()?;
    let has_field = container
        .get("securityContext")
        .and_then(|context| context.get("appArmorProfile"))
        .is_some_and(|profile| !profile.is_null());
    if has_field {
        return None;
    }
    let new_field = field_for_annotation(annotation).filter(is_valid);
    // Warn for an annotation no valid field comes from, and for one copied.
    let mut warn = new_field.is_none();
    if let Some(profile) = new_field {
        if Some(&profile) != pod_profile.map(normalized).as_ref() {
            let context = container
                .entry("securityContext")
                .or_insert_with(|| json!({}));
            if !context.is_object() {
                *context = json!({});
            }
            if let Some(context) = context.as_object_mut() {
                context.insert("appArmorProfile".into(), profile);
            }
            warn = true;
        }
    }
    warn.then(|| deprecation_warning("", &key))
}

/// Where a workload kind keeps its pod template: the JSON pointer and the
/// field path kube's `WarningsOnCreate`/`WarningsOnUpdate` hand to
/// `GetWarningsForPodTemplate`.
pub(super) fn pod_template_location(
    group: &str,
    kind: &str,
) -> Option<(&'static str, &'static str)> {
    match (group, kind) {
        ("", "PodTemplate") => Some(("/template", "template")),
        ("", "ReplicationController")
        | ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet")
        | ("batch", "Job") => Some(("/spec/template", "spec.template")),
        ("batch", "CronJob") => Some((
            "/spec/jobTemplate/spec/template",
            "spec.jobTemplate.spec.template",
        )),
        _ => None,
    }
}

/// The AppArmor part of `GetWarningsForPodTemplate` (`pkg/api/pod/warnings.go`,
/// `warningsForPodSpecAndMeta`, 1.34): a template's container annotation
/// without a container or pod-level profile field is deprecated. Empty for
/// kinds without a pod template.
pub(super) fn pod_template_warnings(group: &str, kind: &str, object: &Value) -> Vec<String> {
    let Some((pointer, field_path)) = pod_template_location(group, kind) else {
        return Vec::new();
    };
    let Some(template) = object.pointer(pointer) else {
        return Vec::new();
    };
    let annotations = template
        .pointer("/metadata/annotations")
        .and_then(Value::as_object);
    let Some(annotations) = annotations.filter(|annotations| !annotations.is_empty()) else {
        return Vec::new();
    };
    let has_pod_profile = template
        .pointer("/spec/securityContext/appArmorProfile")
        .is_some_and(|profile| !profile.is_null());
    let mut warnings = Vec::new();
    for field in ["initContainers", "containers", "ephemeralContainers"] {
        let containers = template
            .get("spec")
            .and_then(|spec| spec.get(field))
            .and_then(Value::as_array);
        for container in containers.into_iter().flatten() {
            let has_field = container
                .get("securityContext")
                .and_then(|context| context.get("appArmorProfile"))
                .is_some_and(|profile| !profile.is_null());
            if has_pod_profile || has_field {
                continue;
            }
            let name = container.get("name").and_then(Value::as_str).unwrap_or("");
            let key = format!("{ANNOTATION_KEY_PREFIX}{name}");
            if annotations.contains_key(&key) {
                warnings.push(deprecation_warning(&format!("{field_path}."), &key));
            }
        }
    }
    warnings
}

/// A profile as `apiequality.Semantic.DeepEqual` compares it: its type and
/// localhost profile name, a null name being unset.
fn normalized(profile: &Value) -> Value {
    let mut out = Map::new();
    for field in ["type", "localhostProfile"] {
        if let Some(value) = profile.get(field).filter(|value| !value.is_null()) {
            out.insert(field.into(), value.clone());
        }
    }
    Value::Object(out)
}

#[cfg(test)]
#[path = "app_armor_tests.rs"]
mod tests;
