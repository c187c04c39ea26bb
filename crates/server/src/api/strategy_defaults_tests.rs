//! The strategies' fields that defaulting meets: a Job's labels
//! (`SetDefaults_Job` at decoding, before `job/strategy.go` generates the
//! selector) and a DaemonSet's template generation (`daemonset/strategy.go`
//! with `Convert_apps_DaemonSet_To_v1_DaemonSet`'s annotation).

use serde_json::{json, Value};

use super::{prepare_for_create, prepare_for_update};
use crate::registry::ResourceDef;

fn resource(group: &str, kind: &str) -> &'static ResourceDef {
    crate::registry::builtin_resources()
        .iter()
        .find(|resource| resource.group == group && resource.kind == kind)
        .unwrap_or_else(|| panic!("no resource {group} {kind}"))
}

fn job_with_template(template: Value) -> Value {
    json!({"metadata": {"name": "j"},
        "spec": {"template": template}})
}

#[test]
fn job_labels_are_the_sent_templates_or_else_the_generated_ones() {
    let jobs = resource("batch", "Job");
    let created = |mut object: Value| {
        object["metadata"]["uid"] = json!("u-1");
        prepare_for_create(jobs, &mut object);
        crate::defaults::apply(jobs, &mut object);
        object["metadata"]["labels"].clone()
    };
    // Decoding defaulted the labels from the template as sent, before the
    // strategy added the generated ones to the template.
    assert_eq!(
        created(job_with_template(
            json!({"metadata": {"labels": {"t": "1"}}})
        )),
        json!({"t": "1"})
    );
    // Without template labels kube's read of the stored job defaults them
    // from the template the strategy completed.
    assert_eq!(
        created(job_with_template(json!({"metadata": {}}))),
        json!({"batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "j",
            "controller-uid": "u-1", "job-name": "j"})
    );
}

#[test]
fn daemon_sets_carry_their_template_generation() {
    let daemon_sets = resource("apps", "DaemonSet");
    let annotation = |object: &Value| {
        object["metadata"]["annotations"]["deprecated.daemonset.template.generation"].clone()
    };
    let mut created = json!({"metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i:1"}]}}}});
    prepare_for_create(daemon_sets, &mut created);
    crate::defaults::apply(daemon_sets, &mut created);
    assert_eq!(annotation(&created), "1");
    // An update cannot set it; a changed template increments it.
    let mut same = created.clone();
    same["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = json!("7");
    same["spec"]["minReadySeconds"] = json!(5);
    prepare_for_update(daemon_sets, None, &created, &mut same);
    assert_eq!(annotation(&same), "1");
    // The template compared after defaulting: sending it undefaulted is no change.
    let mut undefaulted = created.clone();
    undefaulted["spec"]["template"] =
        json!({"spec": {"containers": [{"name": "c", "image": "i:1"}]}});
    prepare_for_update(daemon_sets, None, &created, &mut undefaulted);
    assert_eq!(annotation(&undefaulted), "1");
    let mut changed = created.clone();
    changed["spec"]["template"]["spec"]["containers"][0]["image"] = json!("i:2");
    prepare_for_update(daemon_sets, None, &created, &mut changed);
    assert_eq!(annotation(&changed), "2");
}

#[test]
fn an_unparsable_template_generation_is_strconv_s_error() {
    let daemon_sets = resource("apps", "DaemonSet");
    let with = |value: &str| json!({"metadata": {"annotations": {"deprecated.daemonset.template.generation": value}}});
    let error = |value: &str| super::template_generation_decode_error(daemon_sets, &with(value));
    assert_eq!(
        error("abc").as_deref(),
        Some(r#"strconv.ParseInt: parsing "abc": invalid syntax"#)
    );
    assert_eq!(
        error("").as_deref(),
        Some(r#"strconv.ParseInt: parsing "": invalid syntax"#)
    );
    assert_eq!(
        error("99999999999999999999").as_deref(),
        Some(r#"strconv.ParseInt: parsing "99999999999999999999": value out of range"#)
    );
    assert_eq!(error("-3"), None);
    assert_eq!(error("+4"), None);
    let deployments = resource("apps", "Deployment");
    assert_eq!(
        super::template_generation_decode_error(deployments, &with("abc")),
        None
    );
}
