//! Per-kind semantics on create and update, where Kubernetes has them
//! (upstream `pkg/registry/<group>/<resource>/strategy.go`: `PrepareForCreate`,
//! `PrepareForUpdate`, the status strategies' spec/status split, and
//! `metadata.generation`).

use serde_json::{json, Map, Value};

use crate::registry::ResourceDef;

mod app_armor;
mod core_v1;
mod image_volumes;
mod pod_warnings;
mod service;
mod service_warnings;
mod stateful_set;
mod volume_path_overlaps;
mod workload_warnings;

fn has_status_subresource(resource: &ResourceDef) -> bool {
    resource.subresource("status").is_some()
}

/// `PrepareForCreate`: status is not settable on create for kinds with a
/// status subresource (kube resets it to its zero or initial value), and the
/// generation starts at 1. Returns the warnings the strategy adds (a pod's
/// deprecated AppArmor annotations, `applyAppArmorVersionSkew`).
pub fn prepare_for_create(resource: &ResourceDef, object: &mut Value) -> Vec<String> {
    if (resource.group, resource.kind) == ("apps", "StatefulSet") {
        stateful_set::drop_disabled_fields(None, object);
    }
    image_volumes::drop_image_volumes(resource, None, object);
    let Some(map) = object.as_object_mut() else {
        return Vec::new();
    };
    if resource.custom {
        // `customResourceStrategy.PrepareForCreate`: create cannot set status.
        if has_status_subresource(resource) {
            map.remove("status");
        }
    } else if has_status_subresource(resource) {
        match (resource.group, resource.kind) {
            // Nodes may carry status on create (kubelet registers that way),
            // but not the removed dynamic kubelet config (`nodeStrategy`'s
            // `dropDisabledFields` on create).
            ("", "Node") => {
                core_v1::drop_node_config(map, true, true);
            }
            ("", "Pod") => {
                let status = core_v1::pod_create_status(map.get("spec"));
                map.insert("status".into(), status);
            }
            ("", "Namespace") => {
                map.insert("status".into(), json!({"phase": "Active"}));
            }
            ("", "PersistentVolume") => {
                map.insert("status".into(), core_v1::persistent_volume_create_status());
            }
            ("", "PersistentVolumeClaim") => {
                map.insert("status".into(), json!({"phase": "Pending"}));
            }
            ("apiextensions.k8s.io", "CustomResourceDefinition") => {
                // `strategy.PrepareForCreate`: a fresh status that records the
                // storage version (the typed status always has acceptedNames'
                // plural and kind).
                let stored: Vec<Value> = storage_version(map).into_iter().collect();
                map.insert(
                    "status".into(),
                    json!({"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": stored}),
                );
            }
            _ => {
                let zero = go_zero_status(resource).unwrap_or_else(|| json!({}));
                map.insert("status".into(), zero);
            }
        }
    }
    if (resource.group, resource.kind) == ("", "Namespace") {
        // namespace strategy: the `kubernetes` finalizer is appended to the ones
        // sent when missing (`namespaceStrategy.PrepareForCreate`), and the name
        // label (NamespaceDefaultLabelName).
        let spec = map.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            let finalizers = spec.entry("finalizers").or_insert_with(|| json!([]));
            if !finalizers.is_array() {
                *finalizers = json!([]);
            }
            if let Some(list) = finalizers.as_array_mut() {
                if !list.iter().any(|finalizer| finalizer == "kubernetes") {
                    list.push(json!("kubernetes"));
                }
            }
        }
    }
    if resource.has_generation {
        if let Some(metadata) = map.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("generation".into(), json!(1));
        }
    }
    if (resource.group, resource.kind) == ("batch", "Job") {
        generate_job_selector(object);
    }
    if (resource.group, resource.kind) == ("apps", "DaemonSet") {
        // `daemonSetStrategy.PrepareForCreate`: templateGeneration at least 1.
        let sent = template_generation(object).unwrap_or(0);
        set_template_generation(object, sent.max(1));
    }
    if (resource.group, resource.kind) == ("", "Pod") {
        core_v1::merge_label_keys(object);
        return app_armor::apply_version_skew(object);
    }
    Vec::new()
}

/// `WarningsOnCreate`: a Service's `GetWarningsForService`, a Pod's name
/// and `GetWarningsForPod`, a workload's name, template and own warnings.
pub fn warnings_on_create(resource: &ResourceDef, object: &Value) -> Vec<String> {
    match (resource.group, resource.kind) {
        ("", "Service") => service_warnings::warnings(object),
        ("", "Pod") => pod_warnings::pod_create_warnings(object),
        (group, kind) => workload_warnings::on_create(group, kind, object),
    }
}

/// `WarningsOnUpdate`: a Service's `GetWarningsForService` on every update;
/// a workload's template only when the update moved the generation; none
/// for pods (kube skips them on the pod update path).
pub fn warnings_on_update(resource: &ResourceDef, old: &Value, new: &Value) -> Vec<String> {
    match (resource.group, resource.kind) {
        ("", "Service") => service_warnings::warnings(new),
        ("", "Pod") => Vec::new(),
        (group, kind) => workload_warnings::on_update(group, kind, old, new),
    }
}

/// apps/v1 carries the internal `spec.templateGeneration` of a DaemonSet in
/// this annotation (`Convert_apps_DaemonSet_To_v1_DaemonSet` always writes it).
const TEMPLATE_GENERATION_ANNOTATION: &str = "deprecated.daemonset.template.generation";

/// `Convert_v1_DaemonSet_To_apps_DaemonSet`'s `strconv.ParseInt` of the
/// template generation annotation: its error text for a value that is not
/// a base-10 int64 (kube answers it as the body's decode error, 400).
pub fn template_generation_decode_error(resource: &ResourceDef, object: &Value) -> Option<String> {
    if (resource.group, resource.kind) != ("apps", "DaemonSet") {
        return None;
    }
    let text = object
        .pointer("/metadata/annotations")?
        .get(TEMPLATE_GENERATION_ANNOTATION)?
        .as_str()?;
    let error = text.parse::<i64>().err()?;
    let reason = match error.kind() {
        std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
            "value out of range"
        }
        _ => "invalid syntax",
    };
    Some(format!(
        "strconv.ParseInt: parsing {}: {reason}",
        crate::go::strconv::quote(text)
    ))
}

fn template_generation(object: &Value) -> Option<i64> {
    object
        .pointer("/metadata/annotations")
        .and_then(|annotations| annotations.get(TEMPLATE_GENERATION_ANNOTATION))
        .and_then(Value::as_str)
        .and_then(|text| text.parse().ok())
}

/// `daemonSetStrategy.PrepareForUpdate`: an update cannot set a DaemonSet's
/// template generation; a changed template increments it. The write path
/// calls this again once quantities are canonical, so that the comparison
/// is the one `ValidateDaemonSetSpecUpdate` makes
/// ([`crate::validation::workloads::daemon_set_template_changed`]).
pub fn settle_template_generation(resource: &ResourceDef, old: &Value, new: &mut Value) {
    if (resource.group, resource.kind) != ("apps", "DaemonSet") {
        return;
    }
    let old_generation = template_generation(old).unwrap_or(0);
    // Compared as kube compares them, after decoding defaulted the new one.
    let mut defaulted = new.clone();
    crate::defaults::apply(resource, &mut defaulted);
    let template_changed =
        crate::validation::workloads::daemon_set_template_changed(old, &defaulted);
    // Go's int64 wraps; so does this (a client may store the largest).
    let generation = old_generation.wrapping_add(i64::from(template_changed));
    set_template_generation(new, generation);
}

fn set_template_generation(object: &mut Value, generation: i64) {
    let Some(metadata) = crate::object::metadata_mut(object) else {
        return;
    };
    let annotations = metadata.entry("annotations").or_insert_with(|| json!({}));
    if !annotations.is_object() {
        *annotations = json!({});
    }
    if let Some(annotations) = annotations.as_object_mut() {
        annotations.insert(
            TEMPLATE_GENERATION_ANNOTATION.into(),
            Value::String(generation.to_string()),
        );
    }
}

/// `generateSelectorIfNeeded` (`pkg/registry/batch/job/strategy.go`): unless
/// `manualSelector` is true, the template gets the job-name and
/// controller-uid labels (old and `batch.kubernetes.io/` forms, where not
/// set already) and the selector matches the controller uid. Runs after the
/// uid is set.
fn generate_job_selector(object: &mut Value) {
    if object.pointer("/spec/manualSelector") == Some(&json!(true)) {
        return;
    }
    // kube defaults at decoding, before this: a job without labels took its
    // template's as sent (`SetDefaults_Job`); the generated ones only reach
    // it when the template had none (then from the defaulting of reads).
    let sent_template_labels = object
        .pointer("/spec/template/metadata/labels")
        .filter(|labels| labels.is_object())
        .cloned();
    if let (Some(labels), Some(metadata)) =
        (sent_template_labels, crate::object::metadata_mut(object))
    {
        if metadata
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty)
        {
            metadata.insert("labels".into(), labels);
        }
    }
    let name = crate::object::name(object).to_string();
    let uid = crate::object::meta_str(object, "uid").to_string();
    let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = spec.entry("template").or_insert_with(|| json!({}));
    if let Some(template) = template.as_object_mut() {
        let metadata = template.entry("metadata").or_insert_with(|| json!({}));
        if let Some(metadata) = metadata.as_object_mut() {
            let labels = metadata.entry("labels").or_insert_with(|| json!({}));
            if let Some(labels) = labels.as_object_mut() {
                for (label, value) in [
                    ("job-name", &name),
                    ("batch.kubernetes.io/job-name", &name),
                    ("controller-uid", &uid),
                    ("batch.kubernetes.io/controller-uid", &uid),
                ] {
                    labels
                        .entry(label)
                        .or_insert_with(|| Value::String(value.clone()));
                }
            }
        }
    }
    let selector = spec.entry("selector").or_insert_with(|| json!({}));
    if selector.is_null() {
        *selector = json!({});
    }
    if let Some(selector) = selector.as_object_mut() {
        let match_labels = selector.entry("matchLabels").or_insert_with(|| json!({}));
        if let Some(match_labels) = match_labels.as_object_mut() {
            match_labels
                .entry("batch.kubernetes.io/controller-uid")
                .or_insert_with(|| Value::String(uid.clone()));
        }
    }
}

/// Secrets: `stringData` is write-only; its entries are folded into `data`
/// base64-encoded and the field is dropped (`pkg/registry/core/secret/strategy.go`
/// via the v1 conversion `Convert_v1_Secret_To_core_Secret`).
pub fn fold_secret_string_data(resource: &ResourceDef, object: &mut Value) {
    use base64::Engine;
    if (resource.group, resource.kind) != ("", "Secret") {
        return;
    }
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let Some(string_data) = map.remove("stringData") else {
        return;
    };
    let Some(entries) = string_data.as_object() else {
        return;
    };
    let data = map.entry("data").or_insert_with(|| json!({}));
    if !data.is_object() {
        *data = json!({});
    }
    if let Some(data) = data.as_object_mut() {
        for (key, value) in entries {
            let text = value.as_str().unwrap_or_default();
            data.insert(
                key.clone(),
                json!(base64::engine::general_purpose::STANDARD.encode(text)),
            );
        }
    }
}

/// The status a kind's Go type writes when it is zero: its fields without
/// `omitempty` (`json:"replicas"`), and structs, which `omitempty` never
/// leaves out. kube's JSON always carries them (every object it serves went
/// through the Go type), and typed clients require some of them (the Python
/// client refuses a ReplicaSet without `status.replicas`). `None` for the
/// kinds whose zero status is `{}`.
fn go_zero_status(resource: &ResourceDef) -> Option<Value> {
    Some(match (resource.group, resource.kind) {
        ("apps", "ReplicaSet") | ("", "ReplicationController") => json!({"replicas": 0}),
        ("apps", "StatefulSet") => json!({"replicas": 0, "availableReplicas": 0}),
        ("apps", "DaemonSet") => json!({
            "currentNumberScheduled": 0, "numberMisscheduled": 0,
            "desiredNumberScheduled": 0, "numberReady": 0,
        }),
        ("policy", "PodDisruptionBudget") => json!({
            "disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0,
        }),
        ("", "Service") | ("networking.k8s.io", "Ingress") => json!({"loadBalancer": {}}),
        ("storage.k8s.io", "VolumeAttachment") => json!({"attached": false}),
        ("autoscaling", "HorizontalPodAutoscaler") => match resource.version {
            "v1" => json!({"currentReplicas": 0, "desiredReplicas": 0}),
            _ => json!({"desiredReplicas": 0}),
        },
        _ => return None,
    })
}

/// The status as Go decodes and encodes it: each field of
/// [`go_zero_status`] that `object`'s status lacks or holds `null` is the
/// zero (a `/status` write sending `{}` stores `{"replicas": 0}`, as kube).
fn fill_go_zero_status(resource: &ResourceDef, object: &mut Value) {
    let Some(Value::Object(zero)) = go_zero_status(resource) else {
        return;
    };
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let status = map.entry("status").or_insert(Value::Null);
    if status.is_null() {
        *status = json!({});
    }
    let Some(status) = status.as_object_mut() else {
        return;
    };
    for (field, value) in zero {
        let slot = status.entry(field).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

/// Labels every namespace carries (`kubernetes.io/metadata.name`), set on create and update.
pub fn namespace_name_label(resource: &ResourceDef, object: &mut Value) {
    if (resource.group, resource.kind) != ("", "Namespace") {
        return;
    }
    let name = crate::object::name(object).to_string();
    if let Some(metadata) = crate::object::metadata_mut(object) {
        let labels = metadata.entry("labels").or_insert_with(|| json!({}));
        if let Some(labels) = labels.as_object_mut() {
            labels.insert("kubernetes.io/metadata.name".into(), Value::String(name));
        }
    }
}

/// `PrepareForUpdate` for the main resource and for `/status`:
/// through the main resource the old status is kept; through `/status` the
/// status changes, and the metadata its kind's status strategy takes from
/// the request ([`status_metadata_from_request`]).
/// Returns whether the spec changed (for the generation bump).
pub fn prepare_for_update(
    resource: &ResourceDef,
    subresource: Option<&str>,
    old: &Value,
    new: &mut Value,
) -> bool {
    if subresource == Some("status") {
        let status = new.get("status").cloned();
        let mut merged = old.clone();
        if let Some(map) = merged.as_object_mut() {
            match status {
                Some(status) => map.insert("status".into(), status),
                None => map.remove("status"),
            };
        }
        keep_requested_metadata(new, &mut merged, status_metadata_from_request(resource));
        fill_go_zero_status(resource, &mut merged);
        if (resource.group, resource.kind) == ("", "Pod") {
            backfill_pod_status(old, &mut merged);
        }
        if (resource.group, resource.kind) == ("", "Service") {
            crate::validation::service_status::default_ip_mode(&mut merged);
        }
        if (resource.group, resource.kind) == ("", "PersistentVolume") {
            core_v1::persistent_volume_phase_transition(old, &mut merged);
        }
        if (resource.group, resource.kind) == ("", "Node")
            && old.pointer("/status/config").is_none()
        {
            // `nodeStatusStrategy.PrepareForUpdate`: `status.config` only
            // while the stored node has one.
            if let Some(map) = merged.as_object_mut() {
                core_v1::drop_node_config(map, false, true);
            }
        }
        // Keep the resourceVersion precondition the client sent.
        let resource_version = crate::object::resource_version(new).to_string();
        *new = merged;
        if let Some(metadata) = crate::object::metadata_mut(new) {
            metadata.insert("resourceVersion".into(), Value::String(resource_version));
        }
        return false;
    }
    if subresource == Some("ephemeralcontainers") {
        return keep_only_ephemeral_containers(old, new);
    }
    if subresource == Some("resize") {
        return keep_only_resize_fields(old, new);
    }
    if (resource.group, resource.kind) == ("", "Node")
        && old.pointer("/spec/configSource").is_none()
    {
        // `dropDisabledFields` on update: `spec.configSource` only while the
        // stored node has one.
        if let Some(map) = new.as_object_mut() {
            core_v1::drop_node_config(map, true, false);
        }
    }
    // Nodes too: only their create may carry a status (`nodeStrategy`'s
    // PrepareForUpdate keeps the stored one, as every status strategy's twin).
    if has_status_subresource(resource) {
        if let Some(map) = new.as_object_mut() {
            match old.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
        }
    }
    if resource.custom {
        // `customResourceStrategy.PrepareForUpdate`: any change outside
        // metadata bumps the generation.
        return changed_outside_metadata(old, new);
    }
    if (resource.group, resource.kind) == ("apiextensions.k8s.io", "CustomResourceDefinition") {
        record_storage_version(new);
    }
    if (resource.group, resource.kind) == ("", "Namespace") && subresource != Some("finalize") {
        // spec.finalizers only change through /finalize (`namespaceFinalizeStrategy`
        // keeps only the old status).
        if let (Some(map), Some(spec)) = (new.as_object_mut(), old.get("spec")) {
            map.insert("spec".into(), spec.clone());
        }
    }
    settle_template_generation(resource, old, new);
    if (resource.group, resource.kind) == ("", "Service") {
        service::drop_type_dependent_fields(old, new);
    }
    if (resource.group, resource.kind) == ("apps", "StatefulSet") {
        stateful_set::drop_disabled_fields(Some(old), new);
    }
    image_volumes::drop_image_volumes(resource, Some(old), new);
    generation_changes(resource, old, new)
}

/// Whether an update moves `metadata.generation`: the spec changed, or
/// (Deployments) the annotations, which are copied to replica sets
/// (`deployment/strategy.go` PrepareForUpdate). The write path asks again
/// once the new object is defaulted and its quantities canonical, as kube
/// compares decoded objects (`apiequality.Semantic.DeepEqual`).
pub fn generation_changes(resource: &ResourceDef, old: &Value, new: &Value) -> bool {
    let annotations_changed = (resource.group, resource.kind) == ("apps", "Deployment")
        && old.pointer("/metadata/annotations") != new.pointer("/metadata/annotations");
    spec_changed(old, new) || annotations_changed
}

/// `podStatusStrategy.PrepareForUpdate`: an empty `qosClass` is the old one
/// (old kubelets dropped it), and `preserveOldObservedGeneration`: a zero
/// `observedGeneration` of the status, or of a condition, is the old value
/// (conditions of one type matched in order).
fn backfill_pod_status(old: &Value, new: &mut Value) {
    let Some(status) = new.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    let old_status = old.get("status");
    let old_field = |name: &str| old_status.and_then(|status| status.get(name)).cloned();
    let unset = |value: Option<&Value>| {
        value.is_none_or(|value| value.is_null() || value == "" || value.as_i64() == Some(0))
    };
    for name in ["qosClass", "observedGeneration"] {
        if unset(status.get(name)) {
            if let Some(previous) = old_field(name) {
                status.insert(name.into(), previous);
            }
        }
    }
    let mut old_generations: Vec<(String, Value)> = old_status
        .and_then(|status| status.get("conditions"))
        .and_then(Value::as_array)
        .map(|conditions| {
            conditions
                .iter()
                .map(|condition| {
                    let kind = condition
                        .get("type")
                        .and_then(Value::as_str)
                        .unwrap_or_default();
                    let generation = condition
                        .get("observedGeneration")
                        .cloned()
                        .unwrap_or(Value::Null);
                    (kind.to_string(), generation)
                })
                .collect()
        })
        .unwrap_or_default();
    let Some(conditions) = status.get_mut("conditions").and_then(Value::as_array_mut) else {
        return;
    };
    for condition in conditions.iter_mut() {
        let Some(condition) = condition.as_object_mut() else {
            continue;
        };
        let kind = condition
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let previous = old_generations
            .iter()
            .position(|(old_kind, _)| *old_kind == kind)
            .map(|position| old_generations.remove(position).1);
        if unset(condition.get("observedGeneration")) {
            if let Some(previous) = previous.filter(|previous| !unset(Some(previous))) {
                condition.insert("observedGeneration".into(), previous);
            }
        }
    }
}

/// `podEphemeralContainersStrategy.PrepareForUpdate`
/// (`dropNonEphemeralContainerUpdates`): the old pod with the new
/// `spec.ephemeralContainers` and the request's resourceVersion
/// precondition. Returns whether the spec changed.
fn keep_only_ephemeral_containers(old: &Value, new: &mut Value) -> bool {
    let ephemeral = new.pointer("/spec/ephemeralContainers").cloned();
    let resource_version = crate::object::resource_version(new).to_string();
    let mut merged = old.clone();
    if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
        match ephemeral {
            Some(list) => spec.insert("ephemeralContainers".into(), list),
            None => spec.remove("ephemeralContainers"),
        };
    }
    *new = merged;
    if let Some(metadata) = crate::object::metadata_mut(new) {
        metadata.insert("resourceVersion".into(), Value::String(resource_version));
    }
    spec_changed(old, new)
}

/// `podResizeStrategy.PrepareForUpdate` (`dropNonResizeUpdates`): the old
/// pod whose containers' and init containers' `resources` and `resizePolicy`
/// are the new ones, with the request's resourceVersion precondition. When a
/// container list changed length or a container its name, the new pod is
/// kept as sent (or that list, for a renamed container), for validation to
/// refuse. Returns whether the spec changed.
fn keep_only_resize_fields(old: &Value, new: &mut Value) -> bool {
    let lists_kept = ["containers", "initContainers"].iter().all(|list| {
        let pointer = format!("/spec/{list}");
        let length = |pod: &Value| {
            pod.pointer(&pointer)
                .and_then(Value::as_array)
                .map_or(0, Vec::len)
        };
        length(old) == length(new)
    });
    if lists_kept {
        let resource_version = crate::object::resource_version(new).to_string();
        let mut merged = old.clone();
        for list in ["containers", "initContainers"] {
            let pointer = format!("/spec/{list}");
            let (Some(sent), Some(kept)) = (
                new.pointer(&pointer).and_then(Value::as_array),
                merged.pointer(&pointer).and_then(Value::as_array),
            ) else {
                continue;
            };
            let renamed = sent
                .iter()
                .zip(kept)
                .any(|(sent, kept)| sent.get("name") != kept.get("name"));
            let containers: Vec<Value> = if renamed {
                sent.clone()
            } else {
                sent.iter()
                    .zip(kept)
                    .map(|(sent, kept)| {
                        let mut container = kept.clone();
                        if let Some(map) = container.as_object_mut() {
                            for field in ["resources", "resizePolicy"] {
                                match sent.get(field) {
                                    Some(value) => map.insert(field.into(), value.clone()),
                                    None => map.remove(field),
                                };
                            }
                        }
                        container
                    })
                    .collect()
            };
            if let Some(spec) = merged.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert((*list).into(), Value::Array(containers));
            }
        }
        *new = merged;
        if let Some(metadata) = crate::object::metadata_mut(new) {
            metadata.insert("resourceVersion".into(), Value::String(resource_version));
        }
    }
    spec_changed(old, new)
}

/// The metadata a `/status` write takes from the request, by kind, as each
/// status strategy's `PrepareForUpdate` in kube 1.34 decides (`rest.BeforeUpdate`
/// settles generation, uid, creationTimestamp and the deletion fields for all).
/// - The older strategies only put back the old spec (`newX.Spec = oldX.Spec`):
///   labels, annotations, finalizers and owner references sent are kept.
///   Pods put back the old owner references (`podStatusStrategy`: old kubelets
///   corrupt them), Deployments the old labels.
/// - CRDs call `metav1.ResetObjectMetaForStatus(&newObj.ObjectMeta,
///   &newObj.ObjectMeta)`, resetting the new metadata to itself: all is kept
///   (kube's finalizer controller removes its finalizer that way).
/// - The newer strategies (`ResetObjectMetaForStatus` with the old metadata:
///   ValidatingAdmissionPolicies, VolumeAttachments, ServiceCIDRs,
///   ResourceClaims, …; FlowSchemas and PriorityLevelConfigurations copy the
///   old ObjectMeta) and custom resources (the old object with the new status)
///   keep none of it.
///
/// CertificateSigningRequests' `/status` and `/approval` keep all of it too
/// (their strategies, `csr_strategy`, only restore the spec).
fn status_metadata_from_request(resource: &ResourceDef) -> &'static [&'static str] {
    const ALL: &[&str] = &["labels", "annotations", "finalizers", "ownerReferences"];
    if resource.custom {
        return &[];
    }
    match (resource.group, resource.kind) {
        ("", "Pod") => &["labels", "annotations", "finalizers"],
        ("apps", "Deployment") => &["annotations", "finalizers", "ownerReferences"],
        (
            "",
            "Namespace"
            | "Node"
            | "PersistentVolume"
            | "PersistentVolumeClaim"
            | "ReplicationController"
            | "ResourceQuota"
            | "Service",
        )
        | ("apps", "DaemonSet" | "ReplicaSet" | "StatefulSet")
        | ("autoscaling", "HorizontalPodAutoscaler")
        | ("batch", "CronJob" | "Job")
        | ("networking.k8s.io", "Ingress")
        | ("policy", "PodDisruptionBudget")
        | ("apiextensions.k8s.io", "CustomResourceDefinition")
        | ("certificates.k8s.io", "CertificateSigningRequest") => ALL,
        _ => &[],
    }
}

/// The metadata fields a `/status` write of `resource` cannot change: its
/// status strategy's reset fields under `metadata` (server-side apply
/// through `/status` does not own them).
pub fn status_metadata_reset(resource: &ResourceDef) -> impl Iterator<Item = &'static str> {
    let kept = status_metadata_from_request(resource);
    ["labels", "annotations", "finalizers", "ownerReferences"]
        .into_iter()
        .filter(move |field| !kept.contains(field))
}

/// `fields` of the requested metadata (present or absent) in `merged`.
fn keep_requested_metadata(requested: &Value, merged: &mut Value, fields: &[&str]) {
    if fields.is_empty() {
        return;
    }
    let empty = Map::new();
    let sent = requested
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let Some(metadata) = crate::object::metadata_mut(merged) else {
        return;
    };
    for field in fields {
        match sent.get(*field) {
            Some(value) => metadata.insert((*field).into(), value.clone()),
            None => metadata.remove(*field),
        };
    }
}

/// Whether anything but `metadata` differs (`copyNonMetadata` compared),
/// whatever order the fields come in.
fn changed_outside_metadata(old: &Value, new: &Value) -> bool {
    let (Some(old), Some(new)) = (old.as_object(), new.as_object()) else {
        return old != new;
    };
    let outside = |map: &Map<String, Value>| map.keys().filter(|key| *key != "metadata").count();
    outside(old) != outside(new)
        || old
            .iter()
            .filter(|(key, _)| *key != "metadata")
            .any(|(key, value)| new.get(key) != Some(value))
}

/// The name of a CRD's storage version (`spec.versions[].storage`).
fn storage_version(crd: &Map<String, Value>) -> Option<Value> {
    crd.get("spec")?
        .get("versions")?
        .as_array()?
        .iter()
        .find(|version| version.get("storage").and_then(Value::as_bool) == Some(true))?
        .get("name")
        .cloned()
}

/// `PrepareForUpdate` of CRDs: the storage version joins `status.storedVersions`.
fn record_storage_version(crd: &mut Value) {
    let Some(map) = crd.as_object_mut() else {
        return;
    };
    let Some(version) = storage_version(map) else {
        return;
    };
    let status = map.entry("status").or_insert_with(|| json!({}));
    if !status.is_object() {
        *status = json!({});
    }
    let stored = &mut status["storedVersions"];
    if !stored.is_array() {
        *stored = json!([]);
    }
    if let Some(list) = stored.as_array_mut() {
        if !list.contains(&version) {
            list.push(version);
        }
    }
}

/// Everything but metadata and status, compared (kube compares `Spec`; kinds
/// without a spec, like ConfigMaps, have no generation).
fn spec_changed(old: &Value, new: &Value) -> bool {
    let strip = |value: &Value| -> Map<String, Value> {
        value
            .as_object()
            .map(|map| {
                map.iter()
                    .filter(|(key, _)| {
                        !matches!(key.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                    })
                    .map(|(key, value)| (key.clone(), value.clone()))
                    .collect()
            })
            .unwrap_or_default()
    };
    strip(old) != strip(new)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn def(group: &str, plural: &str) -> &'static ResourceDef {
        let registry = Registry::new(crate::registry::builtin_resources());
        registry.lookup(group, "v1", plural).expect("served")
    }

    #[test]
    fn create_resets_status_and_starts_generation() {
        let deployments = def("apps", "deployments");
        let mut object =
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 2}, "status": {"replicas": 9}});
        prepare_for_create(deployments, &mut object);
        assert_eq!(object["status"], json!({}));
        assert_eq!(object["metadata"]["generation"], json!(1));
        let configmaps = def("", "configmaps");
        let mut config = json!({"metadata": {"name": "c"}, "data": {"a": "b"}});
        prepare_for_create(configmaps, &mut config);
        assert!(config["metadata"].get("generation").is_none());
    }

    #[test]
    fn update_splits_spec_and_status() {
        let deployments = def("apps", "deployments");
        let old = json!({"metadata": {"name": "d", "labels": {"a": "1"}}, "spec": {"replicas": 1}, "status": {"replicas": 1}});
        let mut main =
            json!({"metadata": {"name": "d"}, "spec": {"replicas": 3}, "status": {"replicas": 7}});
        assert!(prepare_for_update(deployments, None, &old, &mut main));
        assert_eq!(
            main["status"],
            json!({"replicas": 1}),
            "main resource keeps old status"
        );
        let mut status = json!({"metadata": {"name": "d", "resourceVersion": "5"}, "spec": {"replicas": 9}, "status": {"replicas": 2}});
        assert!(!prepare_for_update(
            deployments,
            Some("status"),
            &old,
            &mut status
        ));
        assert_eq!(
            status["spec"],
            json!({"replicas": 1}),
            "status update keeps old spec"
        );
        assert_eq!(status["status"], json!({"replicas": 2}));
        assert_eq!(status["metadata"]["labels"], json!({"a": "1"}));
        assert_eq!(status["metadata"]["resourceVersion"], json!("5"));
    }

    /// kube's zero statuses carry the fields Go writes without `omitempty`,
    /// on create and on a `/status` write that leaves them out or nulls them.
    #[test]
    fn statuses_carry_the_fields_go_always_writes() {
        let created = |group: &str, plural: &str| {
            let mut object =
                json!({"metadata": {"name": "o"}, "spec": {}, "status": {"replicas": 9}});
            prepare_for_create(def(group, plural), &mut object);
            object["status"].clone()
        };
        assert_eq!(created("apps", "replicasets"), json!({"replicas": 0}));
        assert_eq!(
            created("", "replicationcontrollers"),
            json!({"replicas": 0})
        );
        assert_eq!(
            created("apps", "statefulsets"),
            json!({"replicas": 0, "availableReplicas": 0})
        );
        assert_eq!(
            created("apps", "daemonsets"),
            json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
                   "desiredNumberScheduled": 0, "numberReady": 0})
        );
        assert_eq!(
            created("policy", "poddisruptionbudgets"),
            json!({"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0})
        );
        assert_eq!(
            created("networking.k8s.io", "ingresses"),
            json!({"loadBalancer": {}})
        );
        assert_eq!(
            created("storage.k8s.io", "volumeattachments"),
            json!({"attached": false})
        );
        assert_eq!(
            created("autoscaling", "horizontalpodautoscalers"),
            json!({"currentReplicas": 0, "desiredReplicas": 0})
        );
        assert_eq!(created("apps", "deployments"), json!({}));

        let replica_sets = def("apps", "replicasets");
        let old = json!({"metadata": {"name": "r"}, "spec": {}, "status": {"replicas": 2}});
        for sent in [
            json!({}),
            json!({"replicas": null, "readyReplicas": 1}),
            Value::Null,
        ] {
            let mut new = json!({"metadata": {"name": "r"}, "status": sent});
            prepare_for_update(replica_sets, Some("status"), &old, &mut new);
            assert_eq!(new["status"]["replicas"], json!(0), "{new}");
        }
    }

    #[test]
    fn namespaces_get_the_kubernetes_finalizer_appended() {
        let namespaces = def("", "namespaces");
        let mut bare = json!({"metadata": {"name": "a"}});
        prepare_for_create(namespaces, &mut bare);
        assert_eq!(bare["spec"]["finalizers"], json!(["kubernetes"]));
        let mut own = json!({"metadata": {"name": "b"}, "spec": {"finalizers": ["example.com/x"]}});
        prepare_for_create(namespaces, &mut own);
        assert_eq!(
            own["spec"]["finalizers"],
            json!(["example.com/x", "kubernetes"])
        );
        let mut already =
            json!({"metadata": {"name": "c"}, "spec": {"finalizers": ["kubernetes"]}});
        prepare_for_create(namespaces, &mut already);
        assert_eq!(already["spec"]["finalizers"], json!(["kubernetes"]));
    }

    #[test]
    fn crd_status_updates_keep_the_metadata_sent() {
        let crds = def("apiextensions.k8s.io", "customresourcedefinitions");
        let old = json!({"metadata": {"name": "w.x.io", "labels": {"a": "1"}, "generation": 2,
            "finalizers": ["customresourcecleanup.apiextensions.k8s.io"]},
            "spec": {"group": "x.io"}, "status": {"acceptedNames": {}}});
        let mut status = json!({"metadata": {"name": "w.x.io", "labels": {"b": "2"}, "generation": 9,
            "annotations": {"n": "v"}}, "spec": {"group": "y.io"}, "status": {"storedVersions": ["v1"]}});
        assert!(!prepare_for_update(crds, Some("status"), &old, &mut status));
        assert_eq!(status["spec"], json!({"group": "x.io"}));
        assert_eq!(status["status"], json!({"storedVersions": ["v1"]}));
        assert_eq!(
            status["metadata"],
            json!({"name": "w.x.io", "labels": {"b": "2"}, "generation": 2,
                   "annotations": {"n": "v"}, "resourceVersion": ""}),
            "labels, annotations and finalizers as sent; generation kept"
        );
    }

    /// A `/status` write that changes every metadata field a strategy may
    /// take from the request, through one kind of each class.
    #[test]
    fn status_writes_keep_the_metadata_their_strategy_takes() {
        let old = json!({"metadata": {"name": "o", "labels": {"a": "1"}, "annotations": {"a": "1"},
            "finalizers": ["x.io/a"], "ownerReferences": [{"uid": "1"}]}, "spec": {}, "status": {}});
        let sent = json!({"metadata": {"name": "o", "labels": {"b": "2"}, "annotations": {"b": "2"},
            "finalizers": ["x.io/b"]}, "spec": {"changed": true}, "status": {"s": 1}});
        let kept = |group: &str, plural: &str| {
            let mut new = sent.clone();
            prepare_for_update(def(group, plural), Some("status"), &old, &mut new);
            assert_eq!(new["spec"], json!({}), "{plural}: the spec is the old one");
            assert_eq!(new["status"]["s"], json!(1), "{plural}");
            ["labels", "annotations", "finalizers", "ownerReferences"]
                .into_iter()
                .filter(|field| new["metadata"].get(*field) == sent["metadata"].get(*field))
                .collect::<Vec<_>>()
        };
        let all = vec!["labels", "annotations", "finalizers", "ownerReferences"];
        assert_eq!(kept("apps", "replicasets"), all);
        assert_eq!(kept("", "services"), all);
        assert_eq!(
            kept("", "pods"),
            vec!["labels", "annotations", "finalizers"]
        );
        assert_eq!(
            kept("apps", "deployments"),
            vec!["annotations", "finalizers", "ownerReferences"]
        );
        assert_eq!(
            kept(
                "admissionregistration.k8s.io",
                "validatingadmissionpolicies"
            ),
            Vec::<&str>::new()
        );
        assert_eq!(
            kept("flowcontrol.apiserver.k8s.io", "flowschemas"),
            Vec::<&str>::new()
        );
    }

    /// Every built-in kind with `/status` is classified on purpose: these
    /// are the ones whose status strategy keeps none of the metadata sent.
    #[test]
    fn kinds_whose_status_writes_keep_no_metadata() {
        let registry = Registry::new(crate::registry::builtin_resources());
        let mut none: Vec<String> = registry
            .resources()
            .iter()
            .filter(|r| r.subresource("status").is_some() && !r.custom)
            .filter(|r| status_metadata_from_request(r).is_empty())
            .map(|r| format!("{}/{}", r.group, r.kind))
            .collect();
        none.sort();
        none.dedup();
        assert_eq!(
            none,
            [
                "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
                "apiregistration.k8s.io/APIService",
                "flowcontrol.apiserver.k8s.io/FlowSchema",
                "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
                "networking.k8s.io/ServiceCIDR",
                "resource.k8s.io/ResourceClaim",
                "storage.k8s.io/VolumeAttachment",
            ]
        );
    }

    #[test]
    fn custom_resources_bump_generation_on_any_change_outside_metadata() {
        let old = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"}, "spec": {"a": 1}, "extra": true});
        let relabelled = json!({"kind": "W", "extra": true, "spec": {"a": 1}, "apiVersion": "x/v1", "metadata": {"name": "a", "labels": {"l": "v"}}});
        assert!(!changed_outside_metadata(&old, &relabelled));
        let top_level =
            json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"}, "spec": {"a": 1}});
        assert!(changed_outside_metadata(&old, &top_level));
        let spec = json!({"apiVersion": "x/v1", "kind": "W", "metadata": {"name": "a"}, "spec": {"a": 2}, "extra": true});
        assert!(changed_outside_metadata(&old, &spec));
    }

    #[test]
    fn crds_record_their_storage_version() {
        let mut crd = json!({"spec": {"versions": [
            {"name": "v1beta1", "storage": false},
            {"name": "v1", "storage": true},
        ]}, "status": {"storedVersions": ["v1beta1"]}});
        record_storage_version(&mut crd);
        assert_eq!(crd["status"]["storedVersions"], json!(["v1beta1", "v1"]));
        record_storage_version(&mut crd);
        assert_eq!(crd["status"]["storedVersions"], json!(["v1beta1", "v1"]));
    }
}

#[cfg(test)]
#[path = "strategy_defaults_tests.rs"]
mod defaults_tests;
