//! Pod annotations kube's pod validation reads
//! (`pkg/apis/core/validation/validation.go`): `ValidatePodSpecificAnnotations`
//! (mirror pod, the tolerations annotation (`ValidateTolerationsInPodAnnotations`:
//! decoded as `[]core.Toleration` with Go's `encoding/json` errors, then
//! `ValidateTolerations`), deletion cost, `ValidateSeccompPodAnnotations`,
//! `ValidateAppArmorPodAnnotations`) and, on create only,
//! `validateSeccompAnnotationsAndFields` and
//! `validateAppArmorAnnotationsAndFieldsMatchOnCreate`.
//!
//! kube walks the annotations as a Go map (random order); here they are
//! walked in key order.

use serde_json::Value;

use super::field::{self, child, key};
use super::go_json::{unmarshal, Shape};
use super::pod_options::PodValidationOptions;
use super::pod_security_context::visit_containers;
use super::pod_volumes::local_descending_path;
use crate::status::FieldError;

const MIRROR_POD: &str = "kubernetes.io/config.mirror";
const TOLERATIONS: &str = "scheduler.alpha.kubernetes.io/tolerations";
const DELETION_COST: &str = "controller.kubernetes.io/pod-deletion-cost";
const SECCOMP_POD: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";
const APP_ARMOR_CONTAINER_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

static TOLERATION: Shape = Shape::Struct(
    "Toleration",
    "core.Toleration",
    &[
        ("key", Shape::Str("string")),
        ("operator", Shape::Str("core.TolerationOperator")),
        ("value", Shape::Str("string")),
        ("effect", Shape::Str("core.TaintEffect")),
        ("tolerationSeconds", Shape::Int("int64")),
    ],
);
static TOLERATION_LIST: Shape = Shape::Slice("[]core.Toleration", &TOLERATION);

/// `ValidatePodSpecificAnnotations`. `path` is `metadata.annotations`.
pub fn pod_specific(
    object: &Value,
    spec: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let Some(annotations) = object
        .get("metadata")
        .and_then(|metadata| field::map_at(metadata, "annotations"))
    else {
        return;
    };
    let text = |name: &str| annotations.get(name).and_then(Value::as_str);
    if let Some(value) = text(MIRROR_POD) {
        if field::str_at(spec, "nodeName").is_empty() {
            errors.push(field::invalid(
                &key(path, MIRROR_POD),
                value,
                "must set spec.nodeName if mirror pod annotation is set",
            ));
        }
    }
    if let Some(value) = text(TOLERATIONS).filter(|value| !value.is_empty()) {
        match unmarshal(value, &TOLERATION_LIST) {
            Err(error) => errors.push(field::invalid(path, TOLERATIONS, error)),
            Ok(list) => super::pod::tolerations(
                list.as_array().map(Vec::as_slice).unwrap_or_default(),
                &child(path, TOLERATIONS),
                errors,
            ),
        }
    }
    if let Some(value) = text(DELETION_COST) {
        if !options.allow_invalid_pod_deletion_cost && !is_deletion_cost(value) {
            errors.push(field::invalid(
                &key(path, DELETION_COST),
                value,
                "must be a 32bit integer",
            ));
        }
    }
    if let Some(value) = text(SECCOMP_POD) {
        seccomp_profile(value, &child(path, SECCOMP_POD), errors);
    }
    for (name, value) in annotations {
        if name.starts_with(SECCOMP_CONTAINER_PREFIX) {
            seccomp_profile(
                value.as_str().unwrap_or_default(),
                &child(path, name),
                errors,
            );
        }
    }
    for (name, value) in annotations {
        let Some(container) = name.strip_prefix(APP_ARMOR_CONTAINER_PREFIX) else {
            continue;
        };
        let annotation_path = key(path, name);
        if !visit_containers(spec, "spec")
            .iter()
            .any(|(item, _)| field::str_at(item, "name") == container)
        {
            errors.push(field::invalid(
                &annotation_path,
                container,
                "container not found",
            ));
        }
        let profile = value.as_str().unwrap_or_default();
        if !(profile.is_empty()
            || profile == "runtime/default"
            || profile == "unconfined"
            || profile.starts_with("localhost/"))
        {
            errors.push(field::invalid(
                &annotation_path,
                profile,
                format!(
                    "invalid AppArmor profile name: {}",
                    crate::go::strconv::quote(profile)
                ),
            ));
        }
    }
}

/// `ValidatePodSpecificAnnotationUpdates`: AppArmor and mirror pod
/// annotations may not be added, changed or removed, then
/// `ValidatePodSpecificAnnotations` again (kube reports its errors twice on
/// update: once from `validatePodMetadataAndSpec`, once from here).
pub fn updates(
    new: &Value,
    old: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let annotations_of = |object: &Value| {
        object
            .get("metadata")
            .and_then(|metadata| field::map_at(metadata, "annotations"))
            .cloned()
            .unwrap_or_default()
    };
    let (new_annotations, old_annotations) = (annotations_of(new), annotations_of(old));
    let guarded = |name: &str| name.starts_with(APP_ARMOR_CONTAINER_PREFIX) || name == MIRROR_POD;
    for (name, old_value) in &old_annotations {
        if new_annotations.get(name) == Some(old_value) {
            continue;
        }
        if name.starts_with(APP_ARMOR_CONTAINER_PREFIX) {
            errors.push(field::forbidden(
                &key(path, name),
                "may not remove or update AppArmor annotations",
            ));
        }
        if name == MIRROR_POD {
            errors.push(field::forbidden(
                &key(path, name),
                "may not remove or update mirror pod annotation",
            ));
        }
    }
    for name in new_annotations.keys() {
        if old_annotations.contains_key(name) || !guarded(name) {
            continue;
        }
        let what = if name == MIRROR_POD {
            "may not add mirror pod annotation"
        } else {
            "may not add AppArmor annotations"
        };
        errors.push(field::forbidden(&key(path, name), what));
    }
    let spec = new.get("spec").unwrap_or(&Value::Null);
    pod_specific(new, spec, path, options, errors);
}

/// The pod's deletion cost annotation is absent or valid (an update whose
/// old pod's value is invalid gets `AllowInvalidPodDeletionCost`).
pub fn deletion_cost_is_valid(pod: &Value) -> bool {
    pod.get("metadata")
        .and_then(|metadata| field::map_at(metadata, "annotations"))
        .and_then(|annotations| annotations.get(DELETION_COST))
        .is_none_or(|value| is_deletion_cost(value.as_str().unwrap_or_default()))
}

/// `helper.GetDeletionCostFromPodAnnotations` succeeds: no `+`, no leading
/// zero, and `strconv.ParseInt(value, 10, 32)`.
fn is_deletion_cost(value: &str) -> bool {
    let first_ok = match value.as_bytes().first() {
        None => false,
        Some(b'-') => true,
        Some(b'0') => value == "0",
        Some(digit) => digit.is_ascii_digit(),
    };
    first_ok && value.parse::<i32>().is_ok()
}

/// `ValidateSeccompProfile` of an annotation's value.
fn seccomp_profile(profile: &str, path: &str, errors: &mut Vec<FieldError>) {
    if matches!(profile, "runtime/default" | "docker/default" | "unconfined") {
        return;
    }
    if let Some(local) = profile.strip_prefix("localhost/") {
        local_descending_path(local, path, errors);
        return;
    }
    errors.push(field::invalid(
        path,
        profile,
        "must be a valid seccomp profile",
    ));
}

/// `validateSeccompAnnotationsAndFields` then
/// `validateAppArmorAnnotationsAndFieldsMatchOnCreate`: where an annotation
/// and the field both say something, they agree.
pub fn match_fields_on_create(object: &Value, spec: &Value, errors: &mut Vec<FieldError>) {
    let annotations = object
        .get("metadata")
        .and_then(|metadata| field::map_at(metadata, "annotations"));
    let annotation = |name: &str| {
        annotations
            .and_then(|annotations| annotations.get(name))
            .and_then(Value::as_str)
    };
    let profile_at = |context: Option<&Value>, name: &str| {
        context
            .and_then(|context| context.get(name))
            .filter(|profile| !profile.is_null())
            .cloned()
    };
    let pod_context = spec.get("securityContext");
    if let (Some(profile), Some(value)) = (
        profile_at(pod_context, "seccompProfile"),
        annotation(SECCOMP_POD),
    ) {
        seccomp_match(
            value,
            &profile,
            "spec.securityContext.seccompProfile",
            errors,
        );
    }
    for (container, path) in visit_containers(spec, "spec") {
        let Some(profile) = profile_at(container.get("securityContext"), "seccompProfile") else {
            continue;
        };
        let name = format!(
            "{SECCOMP_CONTAINER_PREFIX}{}",
            field::str_at(container, "name")
        );
        if let Some(value) = annotation(&name) {
            seccomp_match(
                value,
                &profile,
                &child(&child(&path, "securityContext"), "seccompProfile"),
                errors,
            );
        }
    }
    let windows = spec
        .get("os")
        .is_some_and(|os| field::str_at(os, "name") == "windows");
    if windows {
        return;
    }
    let pod_profile = profile_at(pod_context, "appArmorProfile");
    for (container, path) in visit_containers(spec, "spec") {
        let Some(profile) =
            profile_at(container.get("securityContext"), "appArmorProfile").or(pod_profile.clone())
        else {
            continue;
        };
        let name = format!(
            "{APP_ARMOR_CONTAINER_PREFIX}{}",
            field::str_at(container, "name")
        );
        let Some(value) = annotation(&name) else {
            continue;
        };
        let profile_path = child(&child(&path, "securityContext"), "appArmorProfile");
        let type_mismatch = field::forbidden(
            &child(&profile_path, "type"),
            "apparmor type in annotation and field must match",
        );
        match field::str_at(&profile, "type") {
            "Unconfined" if value != "unconfined" => errors.push(type_mismatch),
            "RuntimeDefault" if value != "runtime/default" => errors.push(type_mismatch),
            "Localhost" => match value.strip_prefix("localhost/") {
                None => errors.push(type_mismatch),
                Some(local) => {
                    if profile.get("localhostProfile").and_then(Value::as_str) != Some(local) {
                        errors.push(field::forbidden(
                            &child(&profile_path, "localhostProfile"),
                            "apparmor profile in annotation and field must match",
                        ));
                    }
                }
            },
            _ => {}
        }
    }
}

/// `validateSeccompAnnotationsAndFieldsMatch`.
fn seccomp_match(value: &str, profile: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let type_mismatch = || {
        field::forbidden(
            &child(path, "type"),
            "seccomp type in annotation and field must match",
        )
    };
    match field::str_at(profile, "type") {
        "Unconfined" if value != "unconfined" => errors.push(type_mismatch()),
        "RuntimeDefault" if value != "runtime/default" && value != "docker/default" => {
            errors.push(type_mismatch())
        }
        "Localhost" => match value.strip_prefix("localhost/") {
            None => errors.push(type_mismatch()),
            Some(local) => {
                if profile.get("localhostProfile").and_then(Value::as_str) != Some(local) {
                    errors.push(field::forbidden(
                        &child(path, "localhostProfile"),
                        "seccomp profile in annotation and field must match",
                    ));
                }
            }
        },
        _ => {}
    }
}
