//! Workload validation (`pkg/apis/apps/validation/validation.go`:
//! `ValidateDeployment`, `ValidateReplicaSet`, `ValidateDaemonSet`,
//! `ValidateStatefulSet` and their updates; `pkg/apis/core/validation`
//! `ValidateReplicationController`): selectors required, valid and matching
//! the template's labels, non-negative counts, strategies, the template as a
//! pod template whose restartPolicy is Always, and (apps/v1) immutable selectors;
//! a DaemonSet's template generation on update, a StatefulSet's ordinals,
//! claim retention policy and rolling-update `maxUnavailable`.

use serde_json::Value;

use super::field::{self, child};
use super::int_or_percent::{
    go_int_or_string, int_or_percent_value, not_more_than_100_percent, positive_int_or_percent,
};
use super::pod::pod_template_spec_with;
use super::pod_options::PodValidationOptions;
use super::selector;
use crate::status::FieldError;

const SELECTOR_MISMATCH: &str = "`selector` does not match template `labels`";

fn spec_of(object: &Value) -> &Value {
    object.get("spec").unwrap_or(&Value::Null)
}

fn template_labels(template: &Value) -> Option<&Value> {
    template.pointer("/metadata/labels")
}

/// The selector checks Deployments, ReplicaSets and StatefulSets share:
/// required, valid, not empty. Returns the selector when it converts.
fn required_selector<'a>(
    spec: &'a Value,
    kind_word: &str,
    errors: &mut Vec<FieldError>,
) -> Result<Option<&'a Value>, ()> {
    let selector_path = "spec.selector";
    match spec.get("selector").filter(|selector| !selector.is_null()) {
        None => {
            errors.push(field::required(selector_path, ""));
            // LabelSelectorAsSelector(nil) is labels.Nothing(): it converts and matches nothing.
            Ok(None)
        }
        Some(selector_value) => {
            selector::validate(selector_value, selector_path, errors);
            if selector::is_empty(selector_value) {
                errors.push(field::invalid_rendered(
                    selector_path,
                    &selector::go_label_selector(selector_value),
                    format!("empty selector is invalid for {kind_word}"),
                ));
            }
            if selector::converts(selector_value) {
                Ok(Some(selector_value))
            } else {
                Err(())
            }
        }
    }
}

/// `ValidatePodTemplateSpecForReplicaSet` (and the RC variant's tail).
fn template_for_replicas(
    template: &Value,
    selector_value: Option<&Value>,
    kind: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let path = "spec.template";
    let mismatch = match selector_value {
        None => true,
        Some(selector_value) => {
            !selector::is_empty(selector_value)
                && !selector::matches(
                    selector_value,
                    template_labels(template).and_then(Value::as_object),
                )
        }
    };
    if mismatch {
        errors.push(field::invalid_rendered(
            "spec.template.metadata.labels",
            &selector::go_string_map(template_labels(template)),
            SELECTOR_MISMATCH,
        ));
    }
    errors.extend(pod_template_spec_with(Some(template), path, options));
    always_restarts(template, kind, errors);
}

/// The template's restartPolicy must be Always; no activeDeadlineSeconds.
fn always_restarts(template: &Value, kind: &str, errors: &mut Vec<FieldError>) {
    let spec = template.get("spec").unwrap_or(&Value::Null);
    let policy = field::str_at(spec, "restartPolicy");
    if policy != "Always" {
        errors.push(field::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    if field::is_set(spec, "activeDeadlineSeconds") {
        let path = "spec.template.spec.activeDeadlineSeconds";
        let message = format!("activeDeadlineSeconds in {kind} is not Supported");
        if kind == "DaemonSet" {
            let value = field::int_at(spec, "activeDeadlineSeconds").unwrap_or(0);
            errors.push(field::invalid_number(path, value, message));
        } else {
            errors.push(field::forbidden(path, message));
        }
    }
}

/// `ValidateRollingUpdateDeployment` / `ValidateRollingUpdateDaemonSet`.
fn rolling_update(rolling: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let unavailable = rolling.get("maxUnavailable").filter(|v| !v.is_null());
    let surge = rolling.get("maxSurge").filter(|v| !v.is_null());
    let unavailable_path = child(path, "maxUnavailable");
    positive_int_or_percent(unavailable, &unavailable_path, errors);
    positive_int_or_percent(surge, &child(path, "maxSurge"), errors);
    if int_or_percent_value(unavailable) == 0 && int_or_percent_value(surge) == 0 {
        errors.push(field::invalid_rendered(
            &unavailable_path,
            &unavailable.map_or("null".to_string(), go_int_or_string),
            "may not be 0 when `maxSurge` is 0",
        ));
    }
    not_more_than_100_percent(unavailable, &unavailable_path, errors);
}

/// `ValidateRollingUpdateDaemonSet`: exactly one of maxUnavailable and
/// maxSurge is non-zero.
fn rolling_update_daemon_set(rolling: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let unavailable = rolling.get("maxUnavailable").filter(|v| !v.is_null());
    let surge = rolling.get("maxSurge").filter(|v| !v.is_null());
    let (unavailable_path, surge_path) = (child(path, "maxUnavailable"), child(path, "maxSurge"));
    positive_int_or_percent(unavailable, &unavailable_path, errors);
    positive_int_or_percent(surge, &surge_path, errors);
    not_more_than_100_percent(unavailable, &unavailable_path, errors);
    not_more_than_100_percent(surge, &surge_path, errors);
    let has_unavailable = int_or_percent_value(unavailable) != 0;
    let has_surge = int_or_percent_value(surge) != 0;
    if has_unavailable && has_surge {
        errors.push(field::invalid_rendered(
            &surge_path,
            &surge.map_or("null".to_string(), go_int_or_string),
            "may not be set when maxUnavailable is non-zero",
        ));
    } else if !has_unavailable && !has_surge {
        errors.push(field::required(
            &unavailable_path,
            "cannot be 0 when maxSurge is 0",
        ));
    }
}

/// `validateRollingUpdateStatefulSet`.
fn rolling_update_stateful_set(rolling: &Value, path: &str, errors: &mut Vec<FieldError>) {
    field::nonnegative(rolling, "partition", path, errors);
    let Some(unavailable) = rolling.get("maxUnavailable").filter(|v| !v.is_null()) else {
        return;
    };
    let unavailable_path = child(path, "maxUnavailable");
    positive_int_or_percent(Some(unavailable), &unavailable_path, errors);
    if int_or_percent_value(Some(unavailable)) == 0 {
        errors.push(field::invalid_rendered(
            &unavailable_path,
            &go_int_or_string(unavailable),
            "cannot be 0",
        ));
    }
    not_more_than_100_percent(Some(unavailable), &unavailable_path, errors);
}

/// `ValidatePersistentVolumeClaimRetentionPolicy`.
fn claim_retention_policy(spec: &Value, errors: &mut Vec<FieldError>) {
    let Some(policy) = spec
        .get("persistentVolumeClaimRetentionPolicy")
        .filter(|policy| !policy.is_null())
    else {
        return;
    };
    for name in ["whenDeleted", "whenScaled"] {
        let value = field::str_at(policy, name);
        if !matches!(value, "Retain" | "Delete") {
            errors.push(field::not_supported(
                &child("spec.persistentVolumeClaimRetentionPolicy", name),
                value,
                &["Retain", "Delete"],
            ));
        }
    }
}

/// `ValidateDeploymentSpec`.
/// `options` come from the old template on update (`GetValidationOptionsFromPodTemplate`);
/// the selector itself is always checked strictly, as kube does.
pub fn deployment(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    field::nonnegative(spec, "replicas", "spec", &mut errors);
    let selector_value = required_selector(spec, "deployment", &mut errors);
    match selector_value {
        Ok(selector_value) => template_for_replicas(
            spec.get("template").unwrap_or(&Value::Null),
            selector_value,
            "ReplicaSet",
            options,
            &mut errors,
        ),
        Err(()) => errors.push(invalid_selector(spec, "invalid label selector")),
    }
    let strategy = spec.get("strategy").unwrap_or(&Value::Null);
    match field::str_at(strategy, "type") {
        "Recreate" => errors.extend(field::is_set(strategy, "rollingUpdate").then(|| {
            field::forbidden(
                "spec.strategy.rollingUpdate",
                "may not be specified when strategy `type` is 'Recreate'",
            )
        })),
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|v| !v.is_null()) {
            None => errors.push(field::required(
                "spec.strategy.rollingUpdate",
                "this should be defaulted and never be nil",
            )),
            Some(rolling) => rolling_update(rolling, "spec.strategy.rollingUpdate", &mut errors),
        },
        other => errors.push(field::not_supported(
            "spec.strategy",
            other,
            &["Recreate", "RollingUpdate"],
        )),
    }
    field::nonnegative(spec, "minReadySeconds", "spec", &mut errors);
    field::nonnegative(spec, "revisionHistoryLimit", "spec", &mut errors);
    if let Some(deadline) = field::int_at(spec, "progressDeadlineSeconds") {
        field::nonnegative(spec, "progressDeadlineSeconds", "spec", &mut errors);
        if deadline <= field::int_at(spec, "minReadySeconds").unwrap_or(0) {
            errors.push(field::invalid_number(
                "spec.progressDeadlineSeconds",
                deadline,
                "must be greater than minReadySeconds",
            ));
        }
    }
    errors
}

fn invalid_selector(spec: &Value, detail: &str) -> FieldError {
    field::invalid_rendered(
        "spec.selector",
        &selector::go_label_selector(spec.get("selector").unwrap_or(&Value::Null)),
        detail,
    )
}

/// `ValidateReplicaSetSpec`.
pub fn replica_set(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    field::nonnegative(spec, "replicas", "spec", &mut errors);
    field::nonnegative(spec, "minReadySeconds", "spec", &mut errors);
    // kube's message says "deployment" for ReplicaSets too.
    match required_selector(spec, "deployment", &mut errors) {
        Ok(selector_value) => template_for_replicas(
            spec.get("template").unwrap_or(&Value::Null),
            selector_value,
            "ReplicaSet",
            options,
            &mut errors,
        ),
        Err(()) => errors.push(invalid_selector(spec, "invalid label selector")),
    }
    errors
}

/// `ValidateStatefulSetSpec` (kube does not validate its pod spec).
pub fn stateful_set(object: &Value) -> Vec<FieldError> {
    stateful_set_with(object, PodValidationOptions::default())
}

/// `ValidateStatefulSetSpec` with the options an update took from the old
/// template.
fn stateful_set_with(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    match field::str_at(spec, "podManagementPolicy") {
        "" => errors.push(field::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => errors.push(field::invalid(
            "spec.podManagementPolicy",
            other,
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    match field::str_at(strategy, "type") {
        "" => errors.push(field::required("spec.updateStrategy", "")),
        "OnDelete" => errors.extend(field::is_set(strategy, "rollingUpdate").then(|| {
            field::invalid_rendered(
                "spec.updateStrategy.rollingUpdate",
                "&apps.RollingUpdateStatefulSetStrategy{}",
                "only allowed for updateStrategy 'RollingUpdate'",
            )
        })),
        "RollingUpdate" => {
            if let Some(rolling) = strategy.get("rollingUpdate").filter(|v| !v.is_null()) {
                rolling_update_stateful_set(
                    rolling,
                    "spec.updateStrategy.rollingUpdate",
                    &mut errors,
                );
            }
        }
        other => errors.push(field::invalid_rendered(
            "spec.updateStrategy",
            &format!(
                "apps.StatefulSetUpdateStrategy{{Type:{}}}",
                crate::go::strconv::quote(other)
            ),
            "must be 'RollingUpdate' or 'OnDelete'",
        )),
    }
    claim_retention_policy(spec, &mut errors);
    field::nonnegative(spec, "replicas", "spec", &mut errors);
    field::nonnegative(spec, "minReadySeconds", "spec", &mut errors);
    if let Some(ordinals) = spec.get("ordinals").filter(|v| !v.is_null()) {
        // kube names the path as one child, "ordinals.start".
        field::nonnegative(ordinals, "start", "spec.ordinals", &mut errors);
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    match required_selector(spec, "statefulset", &mut errors) {
        Ok(selector_value) => {
            let mismatch = selector_value.is_none_or(|selector_value| {
                !selector::is_empty(selector_value)
                    && !selector::matches(
                        selector_value,
                        template_labels(template).and_then(Value::as_object),
                    )
            });
            if mismatch {
                errors.push(field::invalid_rendered(
                    "spec.template.metadata.labels",
                    &selector::go_string_map(template_labels(template)),
                    SELECTOR_MISMATCH,
                ));
            }
            // kube checks the template's labels under `template.labels`.
            field::labels(
                "spec.template.labels",
                template_labels(template).and_then(Value::as_object),
                &mut errors,
            );
            // And its annotations (`ValidateAnnotations`, then
            // `ValidatePodSpecificAnnotations`) under `template.annotations`.
            template_annotations(template, "spec.template.annotations", options, &mut errors);
        }
        Err(()) => errors.push(invalid_selector(spec, "")),
    }
    always_restarts(template, "StatefulSet", &mut errors);
    errors
}

/// `ValidateAnnotations` and `ValidatePodSpecificAnnotations` of a
/// StatefulSet's template (`ValidatePodTemplateSpecForStatefulSet`, which
/// validates nothing else of the pod).
fn template_annotations(
    template: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    let annotations = template
        .get("metadata")
        .and_then(|metadata| field::map_at(metadata, "annotations"));
    let mut total = 0;
    for (name, value) in annotations.into_iter().flatten() {
        total += name.len() + value.as_str().map_or(0, str::len);
        for message in crate::selector::is_qualified_name(&name.to_lowercase()) {
            errors.push(field::invalid(path, name, message));
        }
    }
    if total > TOTAL_ANNOTATION_SIZE_LIMIT {
        errors.push(field::too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT));
    }
    let spec = template.get("spec").unwrap_or(&Value::Null);
    super::pod_annotations::pod_specific(template, spec, path, options, errors);
}

/// `TotalAnnotationSizeLimitB`.
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateDaemonSetSpec`.
pub fn daemon_set(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    let selector_value = spec.get("selector").filter(|selector| !selector.is_null());
    if let Some(selector_value) = selector_value {
        selector::validate(selector_value, "spec.selector", &mut errors);
    }
    let template = spec.get("template").unwrap_or(&Value::Null);
    let converts = selector_value.is_none_or(selector::converts);
    if converts {
        // nil selects nothing, `{}` everything.
        let matched = selector_value.is_some_and(|selector_value| {
            selector::is_empty(selector_value)
                || selector::matches(
                    selector_value,
                    template_labels(template).and_then(Value::as_object),
                )
        });
        if !matched {
            errors.push(field::invalid_rendered(
                "spec.template.metadata.labels",
                &selector::go_string_map(template_labels(template)),
                SELECTOR_MISMATCH,
            ));
        }
    }
    if let Some(selector_value) = selector_value.filter(|value| selector::is_empty(value)) {
        errors.push(field::invalid_rendered(
            "spec.selector",
            &selector::go_label_selector(selector_value),
            "empty selector is invalid for daemonset",
        ));
    }
    errors.extend(pod_template_spec_with(
        Some(template),
        "spec.template",
        options,
    ));
    always_restarts(template, "DaemonSet", &mut errors);
    field::nonnegative(spec, "minReadySeconds", "spec", &mut errors);
    let generation = template_generation(object);
    if generation < 0 {
        errors.push(field::invalid_number(
            "spec.templateGeneration",
            generation,
            field::IS_NEGATIVE,
        ));
    }
    let strategy = spec.get("updateStrategy").unwrap_or(&Value::Null);
    match field::str_at(strategy, "type") {
        "OnDelete" => {}
        "RollingUpdate" => match strategy.get("rollingUpdate").filter(|v| !v.is_null()) {
            None => errors.push(field::required("spec.updateStrategy.rollingUpdate", "")),
            Some(rolling) => {
                rolling_update_daemon_set(rolling, "spec.updateStrategy.rollingUpdate", &mut errors)
            }
        },
        other => errors.push(field::not_supported(
            "spec.updateStrategy",
            other,
            &["RollingUpdate", "OnDelete"],
        )),
    }
    field::nonnegative(spec, "revisionHistoryLimit", "spec", &mut errors);
    errors
}

/// apps/v1 carries a DaemonSet's internal `spec.templateGeneration` in this
/// annotation (`Convert_v1_DaemonSet_To_apps_DaemonSet`; absent is 0).
const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

fn template_generation(object: &Value) -> i64 {
    object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|text| text.parse().ok())
        .unwrap_or(0)
}

/// Whether an update changed a DaemonSet's template (both defaulted); the
/// strategy bumps the template generation on the same comparison.
pub fn daemon_set_template_changed(old: &Value, new: &Value) -> bool {
    spec_of(new).get("template") != spec_of(old).get("template")
}

/// `ValidateDaemonSetUpdate`: `ValidateDaemonSetSpecUpdate` (the template
/// generation never decreases and changes exactly when the template does),
/// then the spec's rules.
pub fn daemon_set_update(new: &Value, old: &Value) -> Vec<FieldError> {
    const PATH: &str = "spec.templateGeneration";
    let (new_generation, old_generation) = (template_generation(new), template_generation(old));
    let mut errors = Vec::new();
    if new_generation < old_generation {
        errors.push(field::invalid_number(
            PATH,
            new_generation,
            "must not be decremented",
        ));
    }
    let template_updated = daemon_set_template_changed(old, new);
    if new_generation == old_generation && template_updated {
        errors.push(field::invalid_number(
            PATH,
            new_generation,
            "must be incremented upon template update",
        ));
    } else if new_generation > old_generation && !template_updated {
        errors.push(field::invalid_number(
            PATH,
            new_generation,
            "must not be incremented without template update",
        ));
    }
    let options = PodValidationOptions::from_old_template(spec_of(old).get("template"));
    errors.extend(daemon_set(new, options));
    errors
}

/// `ValidateReplicationControllerSpec`.
pub fn replication_controller(object: &Value, options: PodValidationOptions) -> Vec<FieldError> {
    let spec = spec_of(object);
    let mut errors = Vec::new();
    field::nonnegative(spec, "minReadySeconds", "spec", &mut errors);
    let selector_map = field::map_at(spec, "selector");
    if selector_map.is_none_or(|map| map.is_empty()) {
        errors.push(field::required("spec.selector", ""));
    }
    field::nonnegative(spec, "replicas", "spec", &mut errors);
    match spec.get("template").filter(|template| !template.is_null()) {
        None => errors.push(field::required("spec.template", "")),
        Some(template) => {
            let labels = template_labels(template).and_then(Value::as_object);
            let mismatch = selector_map.is_some_and(|selector_map| {
                selector_map
                    .iter()
                    .any(|(name, value)| labels.and_then(|labels| labels.get(name)) != Some(value))
            });
            if mismatch {
                errors.push(field::invalid_rendered(
                    "spec.template.metadata.labels",
                    &selector::go_string_map(template_labels(template)),
                    SELECTOR_MISMATCH,
                ));
            }
            errors.extend(pod_template_spec_with(
                Some(template),
                "spec.template",
                options,
            ));
            always_restarts(template, "ReplicationController", &mut errors);
        }
    }
    errors
}

/// apps/v1's immutable `spec.selector` (the strategies' `ValidateUpdate`).
pub fn immutable_selector(new: &Value, old: &Value) -> Option<FieldError> {
    let new_selector = new.pointer("/spec/selector").unwrap_or(&Value::Null);
    let old_selector = old.pointer("/spec/selector").unwrap_or(&Value::Null);
    (selector_key(new_selector) != selector_key(old_selector)).then(|| {
        field::invalid_rendered(
            "spec.selector",
            &selector::go_label_selector(new_selector),
            field::FIELD_IMMUTABLE,
        )
    })
}

/// A selector as `Semantic.DeepEqual` compares it: empty and absent alike.
fn selector_key(selector: &Value) -> (Value, Value) {
    let labels = selector
        .get("matchLabels")
        .filter(|labels| labels.as_object().is_some_and(|map| !map.is_empty()))
        .cloned()
        .unwrap_or(Value::Null);
    let expressions = selector
        .get("matchExpressions")
        .filter(|list| list.as_array().is_some_and(|items| !items.is_empty()))
        .cloned()
        .unwrap_or(Value::Null);
    (labels, expressions)
}

const STATEFUL_SET_MUTABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// `ValidateStatefulSetUpdate`: only some spec fields may change.
pub fn stateful_set_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let old_template = spec_of(old).get("template");
    let mut errors = stateful_set_with(new, PodValidationOptions::from_old_template(old_template));
    let rest = |object: &Value| {
        let mut spec = spec_of(object).as_object().cloned().unwrap_or_default();
        for name in STATEFUL_SET_MUTABLE {
            spec.remove(name);
        }
        spec.retain(|_, value| !value.is_null());
        spec
    };
    if rest(new) != rest(old) {
        errors.push(field::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errors
}

#[cfg(test)]
#[path = "workloads_tests.rs"]
mod tests;
