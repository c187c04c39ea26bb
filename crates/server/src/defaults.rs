//! Defaults kube-apiserver applies on every write, for the fields clients
//! rely on (upstream `pkg/apis/core/v1/defaults.go`, `pkg/apis/apps/v1/defaults.go`,
//! `pkg/apis/batch/v1/defaults.go`, and the default admission plugins
//! `ServiceAccount`, `Priority`, `DefaultTolerationSeconds` for pods).
//! Defaulting is idempotent: applying it twice changes nothing.

use serde_json::{json, Map, Value};

use crate::registry::ResourceDef;

mod core_v1;
pub(crate) mod pod_level_resources;

fn set_default(map: &mut Map<String, Value>, field: &str, value: Value) {
    if map.get(field).is_none_or(Value::is_null) {
        map.insert(field.to_string(), value);
    }
}

fn object_at<'a>(value: &'a mut Value, path: &[&str]) -> Option<&'a mut Map<String, Value>> {
    let mut current = value;
    for field in path {
        current = current.as_object_mut()?.get_mut(*field)?;
    }
    current.as_object_mut()
}

fn each_object(value: Option<&mut Value>, mut apply: impl FnMut(&mut Map<String, Value>)) {
    if let Some(items) = value.and_then(Value::as_array_mut) {
        for item in items.iter_mut().filter_map(Value::as_object_mut) {
            apply(item);
        }
    }
}

pub fn apply(resource: &ResourceDef, object: &mut Value) {
    match (resource.group, resource.kind) {
        ("", "Pod") => pod(object),
        ("", "PodTemplate") => template_at(object, &["template"]),
        ("", "ReplicationController") => replication_controller(object),
        ("", "Service") => core_v1::service(object),
        ("", "Secret") => {
            if let Some(map) = object.as_object_mut() {
                core_v1::set_if_empty(map, "type", "Opaque");
            }
        }
        ("", "PersistentVolumeClaim") => core_v1::persistent_volume_claim(object),
        ("", "PersistentVolume") => core_v1::persistent_volume(object),
        ("", "Namespace") => core_v1::namespace(object),
        ("", "Node") => core_v1::node(object),
        ("", "Endpoints") => endpoints(object),
        ("", "LimitRange") => {
            limit_range(object);
            if let Some(spec) = object_at(object, &["spec"]) {
                each_object(spec.get_mut("limits"), |limit| {
                    for list in [
                        "max",
                        "min",
                        "default",
                        "defaultRequest",
                        "maxLimitRequestRatio",
                    ] {
                        core_v1::resource_list(limit.get_mut(list));
                    }
                });
            }
        }
        ("", "ResourceQuota") => core_v1::resource_lists(
            object,
            &[&["spec", "hard"], &["status", "hard"], &["status", "used"]],
        ),
        // `SetDefaults_PriorityClass` (scheduling/v1, v1beta1, v1alpha1).
        ("scheduling.k8s.io", "PriorityClass") => {
            if let Some(map) = object.as_object_mut() {
                set_default(map, "preemptionPolicy", json!("PreemptLowerPriority"));
            }
        }
        ("apps", "Deployment") => deployment(object),
        ("apps", "ReplicaSet") => {
            if let Some(spec) = object_at(object, &["spec"]) {
                set_default(spec, "replicas", json!(1));
            }
            template_at(object, &["spec", "template"]);
        }
        ("apps", "StatefulSet") => stateful_set(object),
        ("apps", "DaemonSet") => daemon_set(object),
        ("batch", "Job") => {
            job(object);
            template_at(object, &["spec", "template"]);
        }
        ("batch", "CronJob") => cron_job(object),
        ("apiextensions.k8s.io", "CustomResourceDefinition") => custom_resource_definition(object),
        ("rbac.authorization.k8s.io", "RoleBinding" | "ClusterRoleBinding") => role_binding(object),
        _ => crate::defaults_non_core::apply(resource, object),
    }
}

/// `SetDefaults_CustomResourceDefinitionSpec` (apiextensions v1): singular
/// and listKind from the kind, conversion `None`, webhook service port 443.
/// `SetDefaults_Endpoints`: a port's protocol is TCP.
fn endpoints(object: &mut Value) {
    let Some(subsets) = object.get_mut("subsets") else {
        return;
    };
    each_object(Some(subsets), |subset| {
        each_object(subset.get_mut("ports"), |port| {
            if port
                .get("protocol")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                port.insert("protocol".into(), json!("TCP"));
            }
        });
    });
}

/// `SetDefaults_LimitRangeItem`: a Container limit's default comes from its
/// max, its default request from the default, else from the min.
fn limit_range(object: &mut Value) {
    let Some(spec) = object_at(object, &["spec"]) else {
        return;
    };
    each_object(spec.get_mut("limits"), |limit| {
        if limit.get("type").and_then(Value::as_str) != Some("Container") {
            return;
        }
        let list = |limit: &Map<String, Value>, name: &str| {
            limit
                .get(name)
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default()
        };
        let mut default = list(limit, "default");
        for (name, value) in list(limit, "max") {
            default.entry(name).or_insert(value);
        }
        let mut request = list(limit, "defaultRequest");
        for (name, value) in default.iter().chain(list(limit, "min").iter()) {
            request.entry(name.clone()).or_insert_with(|| value.clone());
        }
        limit.insert("default".into(), Value::Object(default));
        limit.insert("defaultRequest".into(), Value::Object(request));
    });
}

fn custom_resource_definition(object: &mut Value) {
    if let Some(names) = object_at(object, &["spec", "names"]) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let empty = |names: &Map<String, Value>, field: &str| {
            names
                .get(field)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
        };
        if empty(names, "singular") {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if empty(names, "listKind") && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "conversion", json!({"strategy": "None"}));
    }
    if let Some(service) = object_at(
        object,
        &["spec", "conversion", "webhook", "clientConfig", "service"],
    ) {
        set_default(service, "port", json!(443));
    }
}

/// `SetDefaults_RoleBinding`/`SetDefaults_ClusterRoleBinding` and
/// `SetDefaults_Subject` (rbac v1): the role reference's and user and
/// group subjects' apiGroup.
fn role_binding(object: &mut Value) {
    let group = json!("rbac.authorization.k8s.io");
    if let Some(role_ref) = object_at(object, &["roleRef"]) {
        let empty = role_ref
            .get("apiGroup")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if empty {
            role_ref.insert("apiGroup".into(), group.clone());
        }
    }
    if let Some(map) = object.as_object_mut() {
        each_object(map.get_mut("subjects"), |subject| {
            let empty = subject
                .get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            let kind = subject.get("kind").and_then(Value::as_str).unwrap_or("");
            if empty && matches!(kind, "User" | "Group") {
                subject.insert("apiGroup".into(), group.clone());
            }
        });
    }
}

fn deployment(object: &mut Value) {
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "replicas", json!(1));
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "progressDeadlineSeconds", json!(600));
        set_default(spec, "strategy", json!({}));
        if let Some(strategy) = spec.get_mut("strategy").and_then(Value::as_object_mut) {
            if empty_string(strategy, "type") {
                strategy.insert("type".into(), json!("RollingUpdate"));
            }
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                set_default(strategy, "rollingUpdate", json!({}));
                if let Some(rolling) = strategy
                    .get_mut("rollingUpdate")
                    .and_then(Value::as_object_mut)
                {
                    set_default(rolling, "maxUnavailable", json!("25%"));
                    set_default(rolling, "maxSurge", json!("25%"));
                }
            }
        }
    }
    template_at(object, &["spec", "template"]);
}

fn stateful_set(object: &mut Value) {
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "replicas", json!(1));
        set_default(spec, "podManagementPolicy", json!("OrderedReady"));
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "updateStrategy", json!({}));
        if let Some(strategy) = spec
            .get_mut("updateStrategy")
            .and_then(Value::as_object_mut)
        {
            // `SetDefaults_StatefulSet`: the rolling update is made only
            // for a strategy sent without a type.
            if empty_string(strategy, "type") {
                strategy.insert("type".into(), json!("RollingUpdate"));
                set_default(strategy, "rollingUpdate", json!({}));
            }
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                if let Some(rolling) = strategy
                    .get_mut("rollingUpdate")
                    .and_then(Value::as_object_mut)
                {
                    set_default(rolling, "partition", json!(0));
                }
            }
        }
        set_default(spec, "persistentVolumeClaimRetentionPolicy", json!({}));
        if let Some(policy) = spec
            .get_mut("persistentVolumeClaimRetentionPolicy")
            .and_then(Value::as_object_mut)
        {
            for field in ["whenDeleted", "whenScaled"] {
                if empty_string(policy, field) {
                    policy.insert(field.into(), json!("Retain"));
                }
            }
        }
        // `SetDefaults_PersistentVolumeClaim` and `…ClaimSpec` of each claim template.
        each_object(spec.get_mut("volumeClaimTemplates"), |claim| {
            set_default(claim, "spec", json!({}));
            if let Some(claim_spec) = claim.get_mut("spec").and_then(Value::as_object_mut) {
                set_default(claim_spec, "volumeMode", json!("Filesystem"));
            }
            set_default(claim, "status", json!({}));
            if let Some(status) = claim.get_mut("status").and_then(Value::as_object_mut) {
                if empty_string(status, "phase") {
                    status.insert("phase".into(), json!("Pending"));
                }
            }
        });
    }
    template_at(object, &["spec", "template"]);
}

/// A string field Go reads as `""`: missing, null or empty.
fn empty_string(map: &Map<String, Value>, field: &str) -> bool {
    map.get(field)
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
}

fn daemon_set(object: &mut Value) {
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "revisionHistoryLimit", json!(10));
        set_default(spec, "updateStrategy", json!({}));
        if let Some(strategy) = spec
            .get_mut("updateStrategy")
            .and_then(Value::as_object_mut)
        {
            if empty_string(strategy, "type") {
                strategy.insert("type".into(), json!("RollingUpdate"));
            }
            if strategy.get("type") == Some(&json!("RollingUpdate")) {
                set_default(strategy, "rollingUpdate", json!({}));
                if let Some(rolling) = strategy
                    .get_mut("rollingUpdate")
                    .and_then(Value::as_object_mut)
                {
                    set_default(rolling, "maxUnavailable", json!(1));
                    set_default(rolling, "maxSurge", json!(0));
                }
            }
        }
    }
    template_at(object, &["spec", "template"]);
}

/// `SetDefaults_Job` (`pkg/apis/batch/v1/defaults.go`, 1.34): a job whose
/// labels are empty takes its template's (`JobPodReplacementPolicy` is GA).
fn job(object: &mut Value) {
    let template_labels = object
        .pointer("/spec/template/metadata/labels")
        .filter(|labels| labels.is_object())
        .cloned();
    if let (Some(labels), Some(metadata)) = (template_labels, object_at(object, &["metadata"])) {
        let empty = metadata
            .get("labels")
            .and_then(Value::as_object)
            .is_none_or(Map::is_empty);
        if empty {
            metadata.insert("labels".into(), labels);
        }
    }
    let Some(spec) = object_at(object, &["spec"]) else {
        return;
    };
    let unset = |spec: &Map<String, Value>, field: &str| spec.get(field).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec.insert("completions".into(), json!(1));
    }
    set_default(spec, "parallelism", json!(1));
    let backoff_limit = if unset(spec, "backoffLimitPerIndex") {
        6
    } else {
        i64::from(i32::MAX)
    };
    set_default(spec, "backoffLimit", json!(backoff_limit));
    set_default(spec, "completionMode", json!("NonIndexed"));
    set_default(spec, "suspend", json!(false));
    let replacement = if unset(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    set_default(spec, "podReplacementPolicy", json!(replacement));
    set_default(spec, "manualSelector", json!(false));
    pod_failure_policy(spec);
}

/// `SetDefaults_PodFailurePolicyOnPodConditionsPattern`: a pattern's status is `True`.
fn pod_failure_policy(spec: &mut Map<String, Value>) {
    let Some(policy) = spec.get_mut("podFailurePolicy") else {
        return;
    };
    each_object(policy.get_mut("rules"), |rule| {
        each_object(rule.get_mut("onPodConditions"), |pattern| {
            let empty = pattern
                .get("status")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty);
            if empty {
                pattern.insert("status".into(), json!("True"));
            }
        });
    });
}

fn cron_job(object: &mut Value) {
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "concurrencyPolicy", json!("Allow"));
        set_default(spec, "suspend", json!(false));
        set_default(spec, "successfulJobsHistoryLimit", json!(3));
        set_default(spec, "failedJobsHistoryLimit", json!(1));
    }
    // `SetDefaults_Job` is for Jobs: a job template gets only the defaults
    // of the types inside it (the pod template, pod failure patterns).
    if let Some(job_spec) = object_at(object, &["spec", "jobTemplate", "spec"]) {
        pod_failure_policy(job_spec);
    }
    template_at(object, &["spec", "jobTemplate", "spec", "template"]);
}

fn replication_controller(object: &mut Value) {
    let template_labels = object.pointer("/spec/template/metadata/labels").cloned();
    if let (Some(labels), Some(spec)) = (template_labels.clone(), object_at(object, &["spec"])) {
        set_default(spec, "selector", labels);
    }
    if let Some(spec) = object_at(object, &["spec"]) {
        set_default(spec, "replicas", json!(1));
    }
    if let (Some(labels), Some(metadata)) = (template_labels, object_at(object, &["metadata"])) {
        set_default(metadata, "labels", labels);
    }
    // The controller's template is a pointer: only a present one is defaulted.
    if object_at(object, &["spec", "template"]).is_some() {
        template_at(object, &["spec", "template"]);
    }
}

/// A PodTemplateSpec at `path`: its pod spec gets `SetDefaults_PodSpec`.
/// The template is a Go struct, never nil: a missing one (or its spec) is
/// the zero value, defaulted all the same (its parent object must exist).
fn template_at(object: &mut Value, path: &[&str]) {
    let Some((last, parent_path)) = path.split_last() else {
        return;
    };
    let Some(parent) = object_at(object, parent_path) else {
        return;
    };
    set_default(parent, last, json!({}));
    let Some(template) = parent.get_mut(*last).and_then(Value::as_object_mut) else {
        return;
    };
    set_default(template, "spec", json!({}));
    if let Some(spec) = template.get_mut("spec").and_then(Value::as_object_mut) {
        pod_spec(spec);
    }
}

fn pod(object: &mut Value) {
    let Some(spec) = object_at(object, &["spec"]) else {
        return;
    };
    // SetDefaults_Pod runs before SetDefaults_PodSpec and the resource
    // lists' rounding (`SetObjectDefaults_Pod`): sums of pod-level defaults
    // are rounded once, as kube does. A limit without its request requests
    // the limit.
    for field in ["containers", "initContainers"] {
        each_object(spec.get_mut(field), |container| {
            let Some(resources) = container
                .get_mut("resources")
                .and_then(Value::as_object_mut)
            else {
                return;
            };
            let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
                return;
            };
            set_default(resources, "requests", json!({}));
            if let Some(requests) = resources.get_mut("requests").and_then(Value::as_object_mut) {
                for (name, quantity) in limits {
                    requests.entry(name).or_insert(quantity);
                }
            }
        });
    }
    // Pod-level requests default after the containers' (feature PodLevelResources).
    pod_level_resources::apply(spec);
    set_default(spec, "enableServiceLinks", json!(true));
    core_v1::host_network_ports(spec);
    // The v1 conversion writes the deprecated `serviceAccount` from
    // `serviceAccountName` (which the ServiceAccount admission plugin sets,
    // with Priority's `priority` and DefaultTolerationSeconds' tolerations:
    // `admission/`).
    if let Some(name) = spec.get("serviceAccountName").cloned() {
        set_default(spec, "serviceAccount", name);
    }
    pod_spec(spec);
}

/// `SetDefaults_PodSpec` and the container defaults inside it.
fn pod_spec(spec: &mut Map<String, Value>) {
    core_v1::set_if_empty(spec, "restartPolicy", "Always");
    set_default(spec, "terminationGracePeriodSeconds", json!(30));
    core_v1::set_if_empty(spec, "dnsPolicy", "ClusterFirst");
    set_default(spec, "securityContext", json!({}));
    core_v1::set_if_empty(spec, "schedulerName", "default-scheduler");
    // `SetDefaults_EphemeralContainer` defaults them as containers.
    for field in ["containers", "initContainers", "ephemeralContainers"] {
        each_object(spec.get_mut(field), container);
    }
    each_object(spec.get_mut("volumes"), core_v1::volume);
    core_v1::resource_list(spec.get_mut("overhead"));
    core_v1::resource_requirements(spec.get_mut("resources"));
}

/// `SetDefaults_Container`, ports and probes.
fn container(container: &mut Map<String, Value>) {
    core_v1::set_if_empty(container, "terminationMessagePath", "/dev/termination-log");
    core_v1::set_if_empty(container, "terminationMessagePolicy", "File");
    set_default(container, "resources", json!({}));
    core_v1::resource_requirements(container.get_mut("resources"));
    let image = container
        .get("image")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    core_v1::set_if_empty(container, "imagePullPolicy", image_pull_policy(&image));
    each_object(container.get_mut("ports"), |port| {
        core_v1::set_if_empty(port, "protocol", "TCP")
    });
    each_object(container.get_mut("env"), |env| {
        // SetDefaults_ObjectFieldSelector.
        if let Some(field_ref) = env
            .get_mut("valueFrom")
            .and_then(|from| from.get_mut("fieldRef"))
            .and_then(Value::as_object_mut)
        {
            core_v1::set_if_empty(field_ref, "apiVersion", "v1");
        }
    });
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(probe) = container.get_mut(probe).and_then(Value::as_object_mut) {
            core_v1::set_if_zero(probe, "timeoutSeconds", 1);
            core_v1::set_if_zero(probe, "periodSeconds", 10);
            core_v1::set_if_zero(probe, "successThreshold", 1);
            core_v1::set_if_zero(probe, "failureThreshold", 3);
            http_get_action(probe);
            core_v1::grpc_action(probe);
        }
    }
    if let Some(lifecycle) = container
        .get_mut("lifecycle")
        .and_then(Value::as_object_mut)
    {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get_mut(hook).and_then(Value::as_object_mut) {
                http_get_action(handler);
            }
        }
    }
}

/// `SetDefaults_HTTPGetAction`: path `/`, scheme HTTP.
fn http_get_action(handler: &mut Map<String, Value>) {
    if let Some(http) = handler.get_mut("httpGet").and_then(Value::as_object_mut) {
        let empty_path = http
            .get("path")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if empty_path {
            http.insert("path".into(), json!("/"));
        }
        set_default(http, "scheme", json!("HTTP"));
    }
}

/// `Always` for `:latest` or an untagged image (no digest), otherwise `IfNotPresent`.
fn image_pull_policy(image: &str) -> &'static str {
    if image.contains('@') {
        return "IfNotPresent";
    }
    let last_segment = image.rsplit('/').next().unwrap_or(image);
    match last_segment.rsplit_once(':') {
        Some((_, "latest")) | None => "Always",
        Some(_) => "IfNotPresent",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::Registry;

    fn defaulted(group: &str, plural: &str, mut object: Value) -> Value {
        let registry = Registry::new(crate::registry::builtin_resources());
        let resource = registry.lookup(group, "v1", plural).expect("served");
        apply(resource, &mut object);
        let once = object.clone();
        apply(resource, &mut object);
        assert_eq!(once, object, "defaulting is idempotent");
        object
    }

    #[test]
    fn endpoints_and_limit_ranges_default_as_kube() {
        let endpoints = defaulted(
            "",
            "endpoints",
            json!({"subsets": [{"ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}]}),
        );
        assert_eq!(
            endpoints["subsets"][0]["ports"],
            json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
        );
        let limits = defaulted(
            "",
            "limitranges",
            json!({"spec": {"limits": [
                {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"ephemeral-storage": "1Gi"}, "default": {"memory": "512Mi"}},
                {"type": "Pod", "max": {"cpu": "4"}}
            ]}}),
        );
        assert_eq!(
            limits["spec"]["limits"],
            json!([
                {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"}, "min": {"ephemeral-storage": "1Gi"},
                 "default": {"cpu": "2", "memory": "512Mi"},
                 "defaultRequest": {"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"}},
                {"type": "Pod", "max": {"cpu": "4"}}
            ])
        );
    }

    #[test]
    fn deployment_defaults_match_kube() {
        let object = defaulted(
            "apps",
            "deployments",
            json!({"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}}),
        );
        assert_eq!(object["spec"]["replicas"], json!(1));
        assert_eq!(
            object["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        let pod_spec = &object["spec"]["template"]["spec"];
        assert_eq!(pod_spec["restartPolicy"], json!("Always"));
        assert_eq!(
            pod_spec["containers"][0]["imagePullPolicy"],
            json!("Always")
        );
        assert_eq!(
            pod_spec["containers"][0]["ports"][0]["protocol"],
            json!("TCP")
        );
        assert!(
            pod_spec.get("serviceAccountName").is_none(),
            "admission defaults are for pods only"
        );
    }

    #[test]
    fn image_pull_policies() {
        for (image, policy) in [
            ("nginx", "Always"),
            ("nginx:latest", "Always"),
            ("nginx:1.25", "IfNotPresent"),
            ("localhost:5000/app", "Always"),
            ("localhost:5000/app:v1", "IfNotPresent"),
            ("nginx@sha256:abc", "IfNotPresent"),
        ] {
            assert_eq!(image_pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn pod_and_job_defaults() {
        let pod = defaulted(
            "",
            "pods",
            json!({"spec": {"containers": [{"name": "c", "image": "busybox:1"}]}}),
        );
        // What admission plugins set is not defaulting's (kube defaults at
        // decoding, before admission): ServiceAccount, Priority,
        // DefaultTolerationSeconds.
        for admitted in [
            "serviceAccountName",
            "priority",
            "preemptionPolicy",
            "tolerations",
        ] {
            assert!(pod["spec"].get(admitted).is_none(), "{admitted} defaulted");
        }
        assert_eq!(pod["spec"]["enableServiceLinks"], json!(true));
        let named = defaulted(
            "",
            "pods",
            json!({"spec": {"serviceAccountName": "robot", "containers": []}}),
        );
        assert_eq!(named["spec"]["serviceAccount"], json!("robot"));
        let job = defaulted(
            "batch",
            "jobs",
            json!({"spec": {"template": {"spec": {"containers": []}}}}),
        );
        assert_eq!(
            (
                job["spec"]["completions"].clone(),
                job["spec"]["parallelism"].clone()
            ),
            (json!(1), json!(1))
        );
        assert_eq!(job["spec"]["backoffLimit"], json!(6));
        let service = defaulted("", "services", json!({"spec": {"ports": [{"port": 80}]}}));
        assert_eq!(service["spec"]["ports"][0]["targetPort"], json!(80));
    }
}
