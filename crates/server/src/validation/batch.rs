//! Job and CronJob validation (`pkg/apis/batch/validation/validation.go`
//! `ValidateJob`, `ValidateJobSpec`, `validateJobSpec`, `ValidateJobUpdate`,
//! `ValidateCronJobCreate`, `validateCronJobSpec`, `ValidateJobTemplateSpec`).

use serde_json::Value;

use super::cron_schedule;
use super::field::{self, child};
use super::job_policies;
use super::job_template_update;
use super::networking;
use super::pod::pod_template_spec_with;
use super::pod_options::PodValidationOptions;
use super::selector;
use super::semantic_equal;
use crate::status::FieldError;

/// `validateJobSpec`: counts, completion mode, the template as a pod
/// template whose restartPolicy is OnFailure or Never (`options` from the
/// old template on update).
fn job_spec_rules(
    spec: &Value,
    path: &str,
    options: PodValidationOptions,
    errors: &mut Vec<FieldError>,
) {
    for name in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
    ] {
        field::nonnegative(spec, name, path, errors);
    }
    job_policies::index_counts(spec, path, errors);
    managed_by(spec, path, errors);
    if let Some(mode) = spec.get("completionMode").and_then(Value::as_str) {
        if mode != "NonIndexed" && mode != "Indexed" {
            errors.push(field::not_supported(
                &child(path, "completionMode"),
                mode,
                &["NonIndexed", "Indexed"],
            ));
        }
        if mode == "Indexed" {
            if !field::is_set(spec, "completions") {
                errors.push(field::required(
                    &child(path, "completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(parallelism) = field::int_at(spec, "parallelism") {
                if parallelism > 100_000 {
                    errors.push(field::invalid_number(
                        &child(path, "parallelism"),
                        parallelism,
                        "must be less than or equal to 100000 when completion mode is Indexed",
                    ));
                }
            }
            job_policies::indexed_limits(spec, path, errors);
        }
    }
    job_policies::policies(spec, path, errors);
    let template_path = child(path, "template");
    errors.extend(pod_template_spec_with(
        spec.get("template"),
        &template_path,
        options,
    ));
    let policy = spec
        .pointer("/template/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let policy_path = child(&template_path, "spec.restartPolicy");
    match policy {
        "Always" | "" => errors.push(field::required(
            &policy_path,
            "valid values: \"OnFailure\", \"Never\"",
        )),
        "OnFailure" | "Never" => {
            if field::is_set(spec, "podFailurePolicy") && policy != "Never" {
                errors.push(field::invalid(
                    &policy_path,
                    policy,
                    "only \"Never\" is supported when podFailurePolicy is specified",
                ));
            }
        }
        other => errors.push(field::not_supported(
            &policy_path,
            other,
            &["OnFailure", "Never"],
        )),
    }
}

/// kube's `maxManagedByLength`.
const MAX_MANAGED_BY_LENGTH: usize = 63;

/// `validateJobSpec`'s `managedBy` rule: a domain-prefixed path of at most
/// 63 bytes (both checks run, as kube appends both).
fn managed_by(spec: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(manager) = spec.get("managedBy").and_then(Value::as_str) else {
        return;
    };
    let manager_path = child(path, "managedBy");
    errors.extend(networking::domain_prefixed_path(&manager_path, manager));
    if manager.len() > MAX_MANAGED_BY_LENGTH {
        errors.push(field::too_long(&manager_path, MAX_MANAGED_BY_LENGTH));
    }
}

/// `ValidateJobSpec`: the rules above, a selector that matches the template
/// (its values unchecked with `AllowInvalidLabelValueInSelector`).
fn job_spec(spec: &Value, options: PodValidationOptions, errors: &mut Vec<FieldError>) {
    job_spec_rules(spec, "spec", options, errors);
    match spec.get("selector").filter(|selector| !selector.is_null()) {
        None => errors.push(field::required("spec.selector", "")),
        Some(selector_value) => {
            selector::validate_with(
                selector_value,
                "spec.selector",
                options.allow_invalid_label_value_in_selector,
                errors,
            );
            let labels = spec.pointer("/template/metadata/labels");
            if selector::converts(selector_value)
                && !selector::matches(selector_value, labels.and_then(Value::as_object))
            {
                errors.push(field::invalid_rendered(
                    "spec.template.metadata.labels",
                    &selector::go_string_map(labels),
                    "`selector` does not match template `labels`",
                ));
            }
        }
    }
}

/// `validateGeneratedSelector`: unless `manualSelector`, the template
/// carries the generated labels (the `batch.kubernetes.io/` ones when
/// `prefixed`) and the selector matches them.
fn generated_selector(object: &Value, prefixed: bool, errors: &mut Vec<FieldError>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    if spec.get("manualSelector") == Some(&Value::Bool(true)) {
        return;
    }
    let Some(selector_value) = spec.get("selector").filter(|value| !value.is_null()) else {
        return;
    };
    let uid = crate::object::meta_str(object, "uid");
    let name = crate::object::name(object);
    if uid.is_empty() {
        errors.push(field::required("metadata.uid", ""));
    }
    let labels = spec.pointer("/template/metadata/labels");
    let mut expected = vec![("controller-uid", uid), ("job-name", name)];
    if prefixed {
        expected.extend([
            ("batch.kubernetes.io/controller-uid", uid),
            ("batch.kubernetes.io/job-name", name),
        ]);
    }
    for (label, value) in &expected {
        let path = field::key("spec.template.metadata.labels", label);
        match labels
            .and_then(|labels| labels.get(*label))
            .and_then(Value::as_str)
        {
            None => errors.push(field::required(&path, *value)),
            Some(actual) if actual != *value => errors.push(field::invalid_rendered(
                &path,
                &selector::go_string_map(labels),
                format!("must be '{value}'"),
            )),
            Some(_) => {}
        }
    }
    let expected_labels: serde_json::Map<String, Value> = expected
        .iter()
        .map(|(label, value)| ((*label).to_string(), Value::String((*value).to_string())))
        .collect();
    if selector::converts(selector_value)
        && !selector::matches(selector_value, Some(&expected_labels))
    {
        errors.push(field::invalid_rendered(
            "spec.selector",
            &selector::go_label_selector(selector_value),
            "`selector` not auto-generated",
        ));
    }
}

/// Whether the template carries both `batch.kubernetes.io/` labels
/// (`validationOptionsForJob`'s `RequirePrefixedLabels` on update).
fn has_prefixed_labels(job: &Value) -> bool {
    let labels = job.pointer("/spec/template/metadata/labels");
    [
        "batch.kubernetes.io/job-name",
        "batch.kubernetes.io/controller-uid",
    ]
    .iter()
    .all(|label| labels.and_then(|labels| labels.get(*label)).is_some())
}

/// `ValidateJob` (selector generation ran in the strategy).
pub fn job(object: &Value) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    generated_selector(object, true, &mut errors);
    job_spec(spec, PodValidationOptions::default(), &mut errors);
    let indexed = field::str_at(spec, "completionMode") == "Indexed";
    let completions = field::int_at(spec, "completions").filter(|&count| indexed && count > 0);
    if let Some(completions) = completions {
        let name = crate::object::name(object);
        let hostname = format!("{name}-{}", completions - 1);
        if !crate::names::dns1123_label(&hostname).is_empty() {
            errors.push(field::invalid(
                "metadata.name",
                name,
                format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errors
}

/// `ValidateJobSpecUpdate`'s `ValidateImmutableField`s after the template's,
/// in kube's order.
const IMMUTABLE_JOB_FIELDS: [&str; 5] = [
    "completionMode",
    "podFailurePolicy",
    "backoffLimitPerIndex",
    "managedBy",
    "successPolicy",
];

/// `ValidateJobUpdate`: the new job's rules, an immutable selector and
/// template, completions only with parallelism for Indexed jobs.
pub fn job_update(new: &Value, old: &Value) -> Vec<FieldError> {
    let null = Value::Null;
    let spec = new.get("spec").unwrap_or(&null);
    let old_spec = old.get("spec").unwrap_or(&null);
    let mut errors = Vec::new();
    generated_selector(new, has_prefixed_labels(old), &mut errors);
    // `validationOptionsForJob`: `GetValidationOptionsFromPodTemplate` of the old template.
    let options = PodValidationOptions::from_old_template(old_spec.get("template"));
    job_spec(spec, options, &mut errors);
    let completions = spec.get("completions");
    if completions != old_spec.get("completions") {
        let indexed = field::str_at(spec, "completionMode") == "Indexed";
        let follows = completions.is_some() && completions == spec.get("parallelism");
        if !indexed || !follows {
            let detail = if indexed {
                "can only be modified in tandem with spec.parallelism"
            } else {
                "field is immutable"
            };
            errors.push(field::invalid_rendered(
                "spec.completions",
                &completions
                    .and_then(Value::as_i64)
                    .map_or("null".to_string(), |n| n.to_string()),
                detail,
            ));
        }
    }
    if !semantic_equal::fields_equal(spec.get("selector"), old_spec.get("selector"), "selector") {
        errors.push(field::invalid_rendered(
            "spec.selector",
            &selector::go_label_selector(spec.get("selector").unwrap_or(&null)),
            field::FIELD_IMMUTABLE,
        ));
    }
    let old_template = old_spec.get("template").unwrap_or(&null);
    let template = spec.get("template").unwrap_or(&null);
    let comparable_old_template = if job_template_update::allows_mutable_scheduling_directives(old)
    {
        job_template_update::comparable_old_template(template, old_template)
    } else {
        old_template.clone()
    };
    // `ValidateImmutableField` compares with `Semantic.DeepEqual`.
    if !semantic_equal::pod_templates_equal(template, &comparable_old_template) {
        // kube prints the whole core.PodTemplateSpec with %#v.
        errors.push(field::invalid_rendered(
            "spec.template",
            "core.PodTemplateSpec{...}",
            field::FIELD_IMMUTABLE,
        ));
    }
    for name in IMMUTABLE_JOB_FIELDS {
        if !semantic_equal::fields_equal(spec.get(name), old_spec.get(name), name) {
            // kube prints the dereferenced pointer: a string quoted, a
            // number, a struct with `%#v` (abbreviated here).
            let rendered = match spec.get(name) {
                Some(Value::String(text)) => crate::go::strconv::quote(text),
                Some(Value::Number(number)) => number.to_string(),
                Some(Value::Object(_)) if name == "podFailurePolicy" => {
                    "batch.PodFailurePolicy{...}".to_string()
                }
                Some(Value::Object(_)) if name == "successPolicy" => {
                    "batch.SuccessPolicy{...}".to_string()
                }
                _ => "null".to_string(),
            };
            errors.push(field::invalid_rendered(
                &child("spec", name),
                &rendered,
                field::FIELD_IMMUTABLE,
            ));
        }
    }
    errors
}

/// `validateCronJobSpec` (`old` on update) and the name bound of
/// `ValidateCronJobCreate` (skipped on update, so that old long names stay
/// writable).
pub fn cron_job(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let old_spec = old.map(|old| old.get("spec").unwrap_or(&Value::Null));
    let mut errors = Vec::new();
    let name = crate::object::name(object);
    if old.is_none() && name.len() > 52 {
        errors.push(field::invalid(
            "metadata.name",
            name,
            "must be no more than 52 characters",
        ));
    }
    let schedule = field::str_at(spec, "schedule");
    let time_zone = spec.get("timeZone").filter(|zone| !zone.is_null());
    if schedule.is_empty() {
        errors.push(field::required("spec.schedule", ""));
    } else {
        let allow_tz = old_spec.is_some_and(|old| field::str_at(old, "schedule").contains("TZ"));
        cron_schedule::schedule(
            schedule,
            allow_tz,
            time_zone.and_then(Value::as_str),
            "spec.schedule",
            &mut errors,
        );
    }
    field::nonnegative(spec, "startingDeadlineSeconds", "spec", &mut errors);
    let old_zone = old_spec.and_then(|old| old.get("timeZone").filter(|zone| !zone.is_null()));
    if old_spec.is_none() || old_zone != time_zone {
        cron_schedule::time_zone(time_zone, "spec.timeZone", &mut errors);
    }
    super::pod::choice(
        field::str_at(spec, "concurrencyPolicy"),
        &["Allow", "Forbid", "Replace"],
        "spec.concurrencyPolicy",
        &mut errors,
    );
    let job_spec = spec.pointer("/jobTemplate/spec").unwrap_or(&Value::Null);
    // The cronjob strategy's `GetValidationOptionsFromPodTemplate` of the old job template's pod template.
    let options = PodValidationOptions::from_old_template(
        old_spec.and_then(|old| old.pointer("/jobTemplate/spec/template")),
    );
    job_spec_rules(job_spec, "spec.jobTemplate.spec", options, &mut errors);
    if let Some(selector_value) = job_spec.get("selector").filter(|v| !v.is_null()) {
        errors.push(field::invalid_rendered(
            "spec.jobTemplate.spec.selector",
            &selector::go_label_selector(selector_value),
            "`selector` will be auto-generated",
        ));
    }
    if job_spec.get("manualSelector") == Some(&Value::Bool(true)) {
        errors.push(field::not_supported(
            "spec.jobTemplate.spec.manualSelector",
            "true",
            &["nil", "false"],
        ));
    }
    field::nonnegative(spec, "successfulJobsHistoryLimit", "spec", &mut errors);
    field::nonnegative(spec, "failedJobsHistoryLimit", "spec", &mut errors);
    errors
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::registry::Registry;

    /// Defaulted, with the selector and labels the Job strategy generates
    /// (`api/strategy.rs`) for a Job without `manualSelector`.
    fn prepared(plural: &str, mut object: Value) -> Value {
        let registry = Registry::new(crate::registry::builtin_resources());
        let resource = registry.lookup("batch", "v1", plural).expect("served");
        let manual = object.pointer("/spec/manualSelector") == Some(&json!(true));
        if plural == "jobs" && !manual {
            object["spec"]["selector"] =
                json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}});
            object["spec"]["template"]["metadata"] = json!({"labels": {
                "batch.kubernetes.io/controller-uid": "u-1", "controller-uid": "u-1",
                "batch.kubernetes.io/job-name": "j", "job-name": "j"}});
        }
        crate::defaults::apply(resource, &mut object);
        object
    }

    fn texts(errors: Vec<FieldError>) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    fn template(restart_policy: Option<&str>) -> Value {
        let mut template = json!({"spec": {"containers": [{"name": "c", "image": "busybox"}]}});
        if let Some(policy) = restart_policy {
            template["spec"]["restartPolicy"] = json!(policy);
        }
        template
    }

    /// Cases from kube's `TestValidateJob` and `TestValidateCronJob`.
    #[test]
    fn jobs_and_cron_jobs() {
        let job_object = |spec: Value| {
            prepared(
                "jobs",
                json!({"metadata": {"name": "j", "uid": "u-1"}, "spec": spec}),
            )
        };
        let valid = job_object(json!({"template": template(Some("Never"))}));
        assert!(texts(job(&valid)).is_empty(), "{valid}");
        assert_eq!(
            texts(job(&job_object(json!({"template": template(None)})))),
            vec!["spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""]
        );
        assert_eq!(
            texts(job(&job_object(
                json!({"template": template(Some("Never")), "parallelism": -1, "completionMode": "Indexed", "completions": 2})
            ))),
            vec!["spec.parallelism: Invalid value: -1: must be greater than or equal to 0"]
        );
        let manual = job_object(
            json!({"manualSelector": true, "selector": {"matchLabels": {"a": "b"}}, "template": template(Some("OnFailure"))}),
        );
        assert_eq!(
            texts(job(&manual)),
            vec!["spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`"]
        );
        let mut changed = valid.clone();
        changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("busybox:2");
        changed["spec"]["completions"] = json!(3);
        assert_eq!(
            texts(job_update(&changed, &valid)),
            vec![
                "spec.completions: Invalid value: 3: field is immutable",
                "spec.template: Invalid value: core.PodTemplateSpec{...}: field is immutable",
            ]
        );
        // validateGeneratedSelector: a user label hiding a generated one.
        let mut conflicting = valid.clone();
        conflicting["spec"]["template"]["metadata"]["labels"]["controller-uid"] = json!("mine");
        conflicting["spec"]["selector"] = json!({"matchLabels": {"controller-uid": "mine"}});
        assert_eq!(
            texts(job(&conflicting))[..2],
            [
                "spec.template.metadata.labels[controller-uid]: Invalid value: map[string]string{\"batch.kubernetes.io/controller-uid\":\"u-1\", \"batch.kubernetes.io/job-name\":\"j\", \"controller-uid\":\"mine\", \"job-name\":\"j\"}: must be 'u-1'",
                "spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"controller-uid\":\"mine\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` not auto-generated",
            ]
        );
        changed = valid.clone();
        changed["spec"]["parallelism"] = json!(5);
        assert!(
            texts(job_update(&changed, &valid)).is_empty(),
            "parallelism may change"
        );

        let cron =
            |spec: Value| prepared("cronjobs", json!({"metadata": {"name": "c"}, "spec": spec}));
        let valid = cron(
            json!({"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": template(Some("OnFailure"))}}}),
        );
        assert!(texts(cron_job(&valid, None)).is_empty(), "{valid}");
        assert_eq!(
            texts(cron_job(&cron(json!({"concurrencyPolicy": "Sometimes", "jobTemplate": {"spec": {"template": template(None), "selector": {"matchLabels": {"a": "b"}}}}})), None)),
            vec![
                "spec.schedule: Required value",
                "spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\"",
                "spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"",
                "spec.jobTemplate.spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{\"a\":\"b\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: `selector` will be auto-generated",
            ]
        );
        // The schedule is parsed as robfig/cron does; the time zone is checked.
        let mut bad = valid.clone();
        bad["spec"]["schedule"] = json!("61 * * * *");
        bad["spec"]["timeZone"] = json!("Nowhere");
        assert_eq!(
            texts(cron_job(&bad, None)),
            vec![
                "spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61",
                "spec.timeZone: Invalid value: \"Nowhere\": unknown time zone Nowhere",
            ]
        );
        // An update keeps an unchanged time zone and a long old name.
        let mut long = valid.clone();
        long["metadata"]["name"] = json!("c".repeat(60));
        long["spec"]["timeZone"] = json!("Nowhere");
        assert!(texts(cron_job(&long, Some(&long))).is_empty());
        assert_eq!(texts(cron_job(&long, None)).len(), 2);
    }

    /// kube's `TestValidateJob` managedBy cases and `TestValidateJobUpdate`'s
    /// "immutable managedBy".
    #[test]
    fn managed_by() {
        let with_manager = |manager: &str| {
            prepared(
                "jobs",
                json!({"metadata": {"name": "j", "uid": "u-1"},
                    "spec": {"template": template(Some("Never")), "managedBy": manager}}),
            )
        };
        for manager in ["kubernetes.io/job-controller", "example.com/foo"] {
            assert!(texts(job(&with_manager(manager))).is_empty(), "{manager}");
        }
        assert_eq!(
            texts(job(&with_manager("invalid custom controller name"))),
            vec!["spec.managedBy: Invalid value: \"invalid custom controller name\": must be a domain-prefixed path (such as \"acme.io/foo\")"]
        );
        let long = format!("example.com/{}", "x".repeat(60));
        assert_eq!(
            texts(job(&with_manager(&long))),
            vec!["spec.managedBy: Too long: may not be more than 63 bytes"]
        );
        let old = with_manager("example.com/foo");
        assert_eq!(
            texts(job_update(&with_manager("example.com/bar"), &old)),
            vec!["spec.managedBy: Invalid value: \"example.com/bar\": field is immutable"]
        );
        let mut unset = old.clone();
        unset["spec"]
            .as_object_mut()
            .map(|spec| spec.remove("managedBy"));
        assert_eq!(
            texts(job_update(&unset, &old)),
            vec!["spec.managedBy: Invalid value: null: field is immutable"]
        );
        // A cron job's job template is validated by the same validateJobSpec.
        let cron = prepared(
            "cronjobs",
            json!({"metadata": {"name": "c"}, "spec": {"schedule": "* * * * *",
                "jobTemplate": {"spec": {"template": template(Some("Never")), "managedBy": "bad"}}}}),
        );
        assert_eq!(
            texts(cron_job(&cron, None)),
            vec!["spec.jobTemplate.spec.managedBy: Invalid value: \"bad\": must be a domain-prefixed path (such as \"acme.io/foo\")"]
        );
    }
}
