//! `validatePodTemplateUpdate` of a Job (`pkg/apis/batch/validation`) with
//! the `AllowMutableSchedulingDirectives` option `validationOptionsForJob`
//! (`pkg/registry/batch/job/strategy.go`) sets for a job that is suspended
//! and has never started: its template's node affinity, node selector,
//! tolerations, scheduling gates, annotations and labels may change.

use serde_json::{Map, Value};

/// `validationOptionsForJob`: the old job is suspended and has no
/// `status.startTime`.
pub fn allows_mutable_scheduling_directives(old: &Value) -> bool {
    let suspended = old.pointer("/spec/suspend") == Some(&Value::Bool(true));
    let not_started = old.pointer("/status/startTime").is_none_or(Value::is_null);
    suspended && not_started
}

/// The old template as kube compares it with the new one: a copy with the
/// mutable scheduling directives taken from the new template.
pub fn comparable_old_template(template: &Value, old_template: &Value) -> Value {
    let mut old = old_template.clone();
    let new_affinity = present(template.pointer("/spec/affinity"));
    let old_affinity = present(old.pointer("/spec/affinity")).cloned();
    let new_node_affinity = new_affinity.and_then(|affinity| present(affinity.get("nodeAffinity")));
    match (new_affinity, old_affinity) {
        // The affinity may be cleared when it held nothing but node affinity.
        (None, Some(mut affinity)) => {
            if let Some(fields) = affinity.as_object_mut() {
                fields.remove("nodeAffinity");
            }
            let emptied = affinity
                .as_object()
                .is_some_and(|fields| fields.values().all(Value::is_null));
            set_or_remove(
                &mut old,
                "spec",
                "affinity",
                (!emptied).then_some(&affinity),
            );
        }
        (Some(_), None) => {
            let mut affinity = Map::new();
            if let Some(node_affinity) = new_node_affinity {
                affinity.insert("nodeAffinity".to_string(), node_affinity.clone());
            }
            set_or_remove(&mut old, "spec", "affinity", Some(&Value::Object(affinity)));
        }
        (Some(_), Some(mut affinity)) => {
            if let Some(fields) = affinity.as_object_mut() {
                match new_node_affinity {
                    Some(node_affinity) => {
                        fields.insert("nodeAffinity".to_string(), node_affinity.clone());
                    }
                    None => {
                        fields.remove("nodeAffinity");
                    }
                }
            }
            set_or_remove(&mut old, "spec", "affinity", Some(&affinity));
        }
        (None, None) => {}
    }
    for name in ["nodeSelector", "tolerations", "schedulingGates"] {
        let value = template
            .get("spec")
            .and_then(|spec| present(spec.get(name)));
        set_or_remove(&mut old, "spec", name, value);
    }
    for name in ["annotations", "labels"] {
        let value = template
            .get("metadata")
            .and_then(|metadata| present(metadata.get(name)));
        set_or_remove(&mut old, "metadata", name, value);
    }
    old
}

fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// Sets `template.<section>.<name>` to `value`, or removes it.
fn set_or_remove(template: &mut Value, section: &str, name: &str, value: Option<&Value>) {
    let Some(fields) = template.as_object_mut() else {
        return;
    };
    match value {
        Some(value) => {
            let section = fields
                .entry(section.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(section) = section.as_object_mut() {
                section.insert(name.to_string(), value.clone());
            }
        }
        None => {
            if let Some(section) = fields.get_mut(section).and_then(Value::as_object_mut) {
                section.remove(name);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::validation::batch::job_update;

    type TemplateChange<'a> = Box<dyn Fn(&mut Value) + 'a>;

    const IMMUTABLE: &str =
        "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable";

    fn job(suspend: bool, start_time: Option<&str>) -> Value {
        let mut job = json!({
            "metadata": {"name": "j", "uid": "u-1"},
            "spec": {"manualSelector": true, "suspend": suspend,
                "selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                    "spec": {"restartPolicy": "Never", "dnsPolicy": "ClusterFirst",
                        "terminationGracePeriodSeconds": 30,
                        "containers": [{"name": "c", "image": "busybox",
                            "imagePullPolicy": "IfNotPresent",
                            "terminationMessagePolicy": "File"}]}}},
        });
        if let Some(time) = start_time {
            job["status"] = json!({"startTime": time});
        }
        job
    }

    fn updated(old: &Value, change: impl Fn(&mut Value)) -> Vec<String> {
        let mut new = old.clone();
        change(&mut new["spec"]["template"]);
        job_update(&new, old)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    /// kube's `TestValidateJobUpdate` cases "immutable node affinity",
    /// "mutable node affinity", "immutable tolerations", "mutable
    /// tolerations", "immutable node selector", "mutable node selector",
    /// "immutable annotations", "mutable annotations", "immutable labels",
    /// "mutable labels", "immutable schedulingGates", "mutable
    /// schedulingGates", "immutable pod affinity".
    #[test]
    fn scheduling_directives_of_suspended_jobs_that_never_started() {
        let node_affinity = json!({"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [
                {"key": "foo", "operator": "In", "values": ["bar", "value2"]}]}]}});
        let changes: Vec<TemplateChange> = vec![
            Box::new(|template| template["spec"]["nodeSelector"] = json!({"foo": "bar"})),
            Box::new(|template| {
                template["spec"]["tolerations"] =
                    json!([{"key": "foo", "operator": "Exists", "effect": "NoSchedule"}]);
            }),
            Box::new(|template| {
                template["spec"]["schedulingGates"] = json!([{"name": "example.com/gate"}])
            }),
            Box::new(|template| template["metadata"]["annotations"] = json!({"foo": "baz"})),
            Box::new(|template| template["metadata"]["labels"]["foo"] = json!("baz")),
            Box::new(|template| {
                template["spec"]["affinity"] = json!({"nodeAffinity": node_affinity.clone()})
            }),
        ];
        let suspended = job(true, None);
        let running = job(false, None);
        let started = job(true, Some("2024-01-01T00:00:00Z"));
        for change in &changes {
            assert_eq!(updated(&suspended, change), Vec::<String>::new());
            assert_eq!(updated(&running, change), vec![IMMUTABLE]);
            assert_eq!(updated(&started, change), vec![IMMUTABLE]);
        }
        // Other template fields stay immutable.
        let image =
            |template: &mut Value| template["spec"]["containers"][0]["image"] = json!("b:2");
        assert_eq!(updated(&suspended, image), vec![IMMUTABLE]);
        // Pod affinity is not a scheduling directive kube lets change.
        let pod_affinity = |template: &mut Value| {
            template["spec"]["affinity"] = json!({"podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"x": "y"}}, "topologyKey": "zone"}]}});
        };
        assert_eq!(updated(&suspended, pod_affinity), vec![IMMUTABLE]);
        // An affinity of node affinity only may be cleared or replaced.
        let mut with_affinity = suspended.clone();
        with_affinity["spec"]["template"]["spec"]["affinity"] =
            json!({"nodeAffinity": node_affinity});
        let cleared = |template: &mut Value| {
            template["spec"]
                .as_object_mut()
                .map(|spec| spec.remove("affinity"));
        };
        assert_eq!(updated(&with_affinity, cleared), Vec::<String>::new());
        let emptied = |template: &mut Value| template["spec"]["affinity"] = json!({});
        assert_eq!(updated(&with_affinity, emptied), Vec::<String>::new());
    }

    #[test]
    fn only_suspended_jobs_without_a_start_time_relax_the_template() {
        assert!(allows_mutable_scheduling_directives(&job(true, None)));
        assert!(!allows_mutable_scheduling_directives(&job(false, None)));
        assert!(!allows_mutable_scheduling_directives(&job(
            true,
            Some("2024-01-01T00:00:00Z")
        )));
        assert!(!allows_mutable_scheduling_directives(&json!({})));
    }
}
