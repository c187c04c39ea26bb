//! Built-in resources served in more than one version, converted as kube
//! converts them: core/v1 and events.k8s.io/v1 Events read each other's
//! writes (get, list, watch, field selectors, updates), and autoscaling/v2
//! HorizontalPodAutoscalers read as autoscaling/v1 with kube's round-trip
//! annotations and back (kube-rs typed clients, kubectl).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{api_status, TestEnv};
use futures::{StreamExt, TryStreamExt};
use k8s_openapi::api::autoscaling::{v1 as autoscaling_v1, v2 as autoscaling_v2};
use k8s_openapi::api::core::v1 as core_v1;
use k8s_openapi::api::events::v1 as events_v1;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::ResourceExt;
use serde_json::{json, Value};

/// A core/v1 Event as a kubelet-style recorder writes it (with `eventTime`,
/// which events.k8s.io/v1 readers such as the Python client require, and so
/// with the `action` kube's `legacyValidateEvent` then requires).
fn core_event(ns: &str, name: &str, pod: &str) -> core_v1::Event {
    serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "involvedObject": {"kind": "Pod", "namespace": ns, "name": pod, "apiVersion": "v1"},
        "reason": "Started", "message": "Started container app", "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "firstTimestamp": "2026-01-01T00:00:00Z", "lastTimestamp": "2026-01-01T00:00:05Z",
        "count": 2, "eventTime": "2026-01-01T00:00:00.000001Z",
        "reportingComponent": "kubelet", "reportingInstance": "node-1", "action": "Started",
    }))
    .unwrap()
}

/// An events.k8s.io/v1 Event as `k8s.io/client-go/tools/events` writes it.
fn events_event(ns: &str, name: &str, pod: &str) -> events_v1::Event {
    serde_json::from_value(json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": ns},
        "eventTime": "2026-01-01T00:00:00.000001Z",
        "reportingController": "example.com/controller", "reportingInstance": "controller-1",
        "action": "Scheduling", "reason": "Scheduled", "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": ns, "name": pod, "apiVersion": "v1"},
        "note": "Successfully assigned the pod",
    }))
    .unwrap()
}

#[tokio::test]
async fn events_read_each_others_writes_in_both_versions() {
    let env = TestEnv::new("ver-events").await;
    let core: Api<core_v1::Event> = env.api();
    let events: Api<events_v1::Event> = env.api();
    let pp = PostParams::default();

    // core/v1 write, events.k8s.io/v1 read.
    core.create(&pp, &core_event(&env.ns, "from-core", "web"))
        .await
        .unwrap();
    let read = events.get("from-core").await.unwrap();
    assert_eq!(read.note.as_deref(), Some("Started container app"));
    let regarding = read.regarding.clone().unwrap();
    assert_eq!(
        (regarding.kind.as_deref(), regarding.name.as_deref()),
        (Some("Pod"), Some("web"))
    );
    assert_eq!(read.reporting_controller.as_deref(), Some("kubelet"));
    assert_eq!(read.reporting_instance.as_deref(), Some("node-1"));
    assert_eq!(read.deprecated_count, Some(2));
    let source = read.deprecated_source.clone().unwrap();
    assert_eq!(source.component.as_deref(), Some("kubelet"));
    assert!(read.deprecated_first_timestamp.is_some() && read.deprecated_last_timestamp.is_some());
    // The raw answer carries the request's type fields and none of core's names.
    let raw = env
        .raw(
            "GET",
            &format!(
                "/apis/events.k8s.io/v1/namespaces/{}/events/from-core",
                env.ns
            ),
            None,
            vec![],
        )
        .await
        .json();
    assert_eq!(raw["apiVersion"], "events.k8s.io/v1");
    assert_eq!(raw["kind"], "Event");
    for core_only in [
        "involvedObject",
        "message",
        "source",
        "count",
        "reportingComponent",
    ] {
        assert!(raw.get(core_only).is_none(), "{core_only} in {raw}");
    }

    // events.k8s.io/v1 write, core/v1 read.
    events
        .create(&pp, &events_event(&env.ns, "from-events", "db"))
        .await
        .unwrap();
    let read = core.get("from-events").await.unwrap();
    assert_eq!(read.involved_object.name.as_deref(), Some("db"));
    assert_eq!(
        read.message.as_deref(),
        Some("Successfully assigned the pod")
    );
    assert_eq!(
        read.reporting_component.as_deref(),
        Some("example.com/controller")
    );
    assert_eq!(read.reporting_instance.as_deref(), Some("controller-1"));
    assert_eq!(read.action.as_deref(), Some("Scheduling"));

    // Lists in both versions hold both, each at the list's version.
    let mut core_names: Vec<String> = core
        .list(&ListParams::default())
        .await
        .unwrap()
        .items
        .iter()
        .map(|e| format!("{}:{}", e.name_any(), e.message.clone().unwrap_or_default()))
        .collect();
    core_names.sort();
    assert_eq!(
        core_names,
        [
            "from-core:Started container app",
            "from-events:Successfully assigned the pod"
        ]
    );
    let events_list = env
        .raw(
            "GET",
            &format!("/apis/events.k8s.io/v1/namespaces/{}/events", env.ns),
            None,
            vec![],
        )
        .await
        .json();
    assert_eq!(events_list["apiVersion"], "events.k8s.io/v1");
    assert_eq!(events_list["kind"], "EventList");
    let notes: Vec<&str> = events_list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|item| item["note"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        notes,
        ["Started container app", "Successfully assigned the pod"]
    );

    // Field selectors in each version's own names.
    let by_regarding = events
        .list(&ListParams::default().fields("regarding.name=web"))
        .await
        .unwrap();
    assert_eq!(
        by_regarding
            .items
            .iter()
            .map(|e| e.name_any())
            .collect::<Vec<_>>(),
        ["from-core"]
    );
    let by_controller = events
        .list(&ListParams::default().fields("reportingController=example.com/controller"))
        .await
        .unwrap();
    assert_eq!(
        by_controller
            .items
            .iter()
            .map(|e| e.name_any())
            .collect::<Vec<_>>(),
        ["from-events"]
    );
    let by_involved = core
        .list(&ListParams::default().fields("involvedObject.name=db"))
        .await
        .unwrap();
    assert_eq!(
        by_involved
            .items
            .iter()
            .map(|e| e.name_any())
            .collect::<Vec<_>>(),
        ["from-events"]
    );
    let refused = events
        .list(&ListParams::default().fields("involvedObject.name=db"))
        .await
        .unwrap_err();
    let status = api_status(refused);
    assert_eq!(
        (status.code, status.message.as_str()),
        (400, "field label not supported: involvedObject.name")
    );

    // An update through events.k8s.io/v1 of an event written through core:
    // that version keeps the event's fields (`ValidateEventUpdate`), so a
    // new note is kube's 422 and a new label is stored.
    let mut changed = events.get("from-core").await.unwrap();
    changed.note = Some("Restarted container app".into());
    let refused = events
        .replace("from-core", &pp, &changed)
        .await
        .unwrap_err();
    let status = api_status(refused);
    assert_eq!(
        (status.code, status.message.as_str()),
        (422, "Event.events.k8s.io \"from-core\" is invalid: message: Invalid value: \"Restarted container app\": field is immutable")
    );
    let mut changed = events.get("from-core").await.unwrap();
    changed
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("seen".into(), "yes".into());
    events.replace("from-core", &pp, &changed).await.unwrap();
    let read = core.get("from-core").await.unwrap();
    assert_eq!(read.labels().get("seen").map(String::as_str), Some("yes"));
    assert_eq!(read.message.as_deref(), Some("Started container app"));
    assert_eq!(
        read.count,
        Some(2),
        "untouched fields survive the round trip"
    );
    // managedFields: each entry keeps the version its write used.
    let entries: Vec<(String, String)> = read
        .managed_fields()
        .iter()
        .map(|entry| {
            (
                entry.operation.clone().unwrap_or_default(),
                entry.api_version.clone().unwrap_or_default(),
            )
        })
        .collect();
    assert!(
        entries.contains(&("Update".into(), "v1".into())),
        "{entries:?}"
    );
    assert!(
        entries.contains(&("Update".into(), "events.k8s.io/v1".into())),
        "{entries:?}"
    );

    // A merge patch through core of an event written through events.k8s.io.
    core.patch(
        "from-events",
        &PatchParams::default(),
        &Patch::Merge(json!({"message": "patched through core"})),
    )
    .await
    .unwrap();
    let read = events.get("from-events").await.unwrap();
    assert_eq!(read.note.as_deref(), Some("patched through core"));
    assert_eq!(
        read.reporting_controller.as_deref(),
        Some("example.com/controller")
    );

    // Server-side apply through core/v1 of an event whose `note` was written
    // through events.k8s.io/v1 (a conflict named in the writer's version,
    // as kube reports it), so the applier forces. (Through events.k8s.io/v1
    // an event's fields are immutable: `ValidateEventUpdate`.)
    let events_writer = PostParams {
        field_manager: Some("events-writer".into()),
        ..PostParams::default()
    };
    events
        .create(&events_writer, &events_event(&env.ns, "applied", "web"))
        .await
        .unwrap();
    let apply_message = Patch::Apply(json!({
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": "applied"},
        "message": "Applied through core",
    }));
    let conflict = core
        .patch(
            "applied",
            &PatchParams::apply("ver-applier"),
            &apply_message,
        )
        .await
        .unwrap_err();
    let status = api_status(conflict);
    assert_eq!(status.code, 409, "{status:?}");
    assert!(
        status.message.ends_with("using events.k8s.io/v1: .note"),
        "{status:?}"
    );
    let applied = core
        .patch(
            "applied",
            &PatchParams::apply("ver-applier").force(),
            &apply_message,
        )
        .await
        .unwrap();
    assert_eq!(applied.message.as_deref(), Some("Applied through core"));
    let read = events.get("applied").await.unwrap();
    assert_eq!(read.note.as_deref(), Some("Applied through core"));
    let applier = read
        .managed_fields()
        .iter()
        .find(|entry| entry.manager.as_deref() == Some("ver-applier"))
        .cloned()
        .unwrap();
    assert_eq!(
        (applier.operation.as_deref(), applier.api_version.as_deref()),
        (Some("Apply"), Some("v1"))
    );

    // Ownership across versions, as kube's field manager converts each
    // manager's fields to the version it recorded them at: a core/v1
    // writer owns `message`, which an events.k8s.io/v1 apply of `note`
    // conflicts with (named in the writer's version), and takes when forced.
    let writer = PostParams {
        field_manager: Some("core-writer".into()),
        ..PostParams::default()
    };
    core.create(&writer, &core_event(&env.ns, "owned", "web"))
        .await
        .unwrap();
    let apply_note = Patch::Apply(json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": "owned"},
        "note": "Taken over",
    }));
    let status = api_status(
        events
            .patch("owned", &PatchParams::apply("taker"), &apply_note)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (status.code, status.message.as_str()),
        (
            409,
            r#"Apply failed with 1 conflict: conflict with "core-writer" using v1: .message"#
        )
    );
    // Forced, the apply reaches validation: events.k8s.io/v1 keeps the note.
    let status = api_status(
        events
            .patch("owned", &PatchParams::apply("taker").force(), &apply_note)
            .await
            .unwrap_err(),
    );
    assert_eq!(
        (status.code, status.message.as_str()),
        (
            422,
            r#"Event.events.k8s.io "owned" is invalid: message: Invalid value: "Taken over": field is immutable"#
        )
    );
    // Through core/v1 the message may change: a forced apply takes it.
    core.patch(
        "owned",
        &PatchParams::apply("taker").force(),
        &Patch::Apply(json!({
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "owned"},
            "message": "Taken over",
        })),
    )
    .await
    .unwrap();
    let read = core.get("owned").await.unwrap();
    let owner = |name: &str| {
        read.managed_fields()
            .iter()
            .find(|entry| entry.manager.as_deref() == Some(name))
            .and_then(|entry| entry.fields_v1.clone())
            .map(|fields| fields.0)
            .unwrap_or_default()
    };
    assert!(
        owner("core-writer").get("f:message").is_none(),
        "{:?}",
        owner("core-writer")
    );
    assert!(
        owner("core-writer").get("f:reason").is_some(),
        "{:?}",
        owner("core-writer")
    );
    assert!(
        owner("taker").get("f:message").is_some(),
        "{:?}",
        owner("taker")
    );
}

#[tokio::test]
async fn event_watches_serve_the_watchs_version() {
    let env = TestEnv::new("ver-watch").await;
    let core: Api<core_v1::Event> = env.api();
    let events: Api<events_v1::Event> = env.api();
    let pp = PostParams::default();
    let start = core
        .list(&ListParams::default())
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();

    let core_stream = core.watch(&WatchParams::default(), &start).await.unwrap();
    let events_stream = events.watch(&WatchParams::default(), &start).await.unwrap();
    events
        .create(&pp, &events_event(&env.ns, "watched", "db"))
        .await
        .unwrap();
    core.create(&pp, &core_event(&env.ns, "watched-core", "web"))
        .await
        .unwrap();

    let core_seen: Vec<WatchEvent<core_v1::Event>> =
        core_stream.take(2).try_collect().await.unwrap();
    let messages: Vec<String> = core_seen
        .iter()
        .map(|event| match event {
            WatchEvent::Added(e) => format!(
                "{}:{}:{}",
                e.name_any(),
                e.involved_object.name.clone().unwrap_or_default(),
                e.message.clone().unwrap_or_default()
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        messages,
        [
            "watched:db:Successfully assigned the pod",
            "watched-core:web:Started container app"
        ]
    );
    let events_seen: Vec<WatchEvent<events_v1::Event>> =
        events_stream.take(2).try_collect().await.unwrap();
    let notes: Vec<String> = events_seen
        .iter()
        .map(|event| match event {
            WatchEvent::Added(e) => format!(
                "{}:{}:{}",
                e.name_any(),
                e.regarding.clone().and_then(|r| r.name).unwrap_or_default(),
                e.note.clone().unwrap_or_default()
            ),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(
        notes,
        [
            "watched:db:Successfully assigned the pod",
            "watched-core:web:Started container app"
        ]
    );

    // Raw core watch from the start, with the initial events: kind Event,
    // apiVersion v1, core's field names.
    let raw = env
        .raw(
            "GET",
            &format!(
                "/api/v1/namespaces/{}/events?watch=true&sendInitialEvents=true&allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&timeoutSeconds=1",
                env.ns
            ),
            None,
            vec![],
        )
        .await;
    let lines: Vec<Value> = raw
        .body
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let added: Vec<&Value> = lines
        .iter()
        .filter(|line| line["type"] == "ADDED")
        .map(|line| &line["object"])
        .collect();
    assert_eq!(added.len(), 2, "{lines:?}");
    let bookmark = lines
        .iter()
        .find(|line| line["type"] == "BOOKMARK")
        .map(|line| &line["object"]);
    assert_eq!(
        bookmark.map(|object| (object["kind"].clone(), object["apiVersion"].clone())),
        Some((json!("Event"), json!("v1"))),
        "{lines:?}"
    );
    for object in added {
        assert_eq!(
            (object["kind"].as_str(), object["apiVersion"].as_str()),
            (Some("Event"), Some("v1"))
        );
        assert!(object.get("involvedObject").is_some() && object.get("message").is_some());
        assert!(object.get("regarding").is_none() && object.get("note").is_none());
    }
}

fn hpa_v2(name: &str) -> autoscaling_v2::HorizontalPodAutoscaler {
    serde_json::from_value(json!({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [
                {"type": "Resource", "resource": {"name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60}}},
                {"type": "Pods", "pods": {"metric": {"name": "requests-per-second"},
                    "target": {"type": "AverageValue", "averageValue": "10"}}},
            ],
            "behavior": {"scaleDown": {"stabilizationWindowSeconds": 120, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}},
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn hpas_convert_between_v2_and_v1_with_kubes_annotations() {
    let env = TestEnv::new("ver-hpa").await;
    let v2: Api<autoscaling_v2::HorizontalPodAutoscaler> = env.api();
    let v1: Api<autoscaling_v1::HorizontalPodAutoscaler> = env.api();
    let pp = PostParams::default();

    let created = v2.create(&pp, &hpa_v2("web")).await.unwrap();
    let as_v1 = v1.get("web").await.unwrap();
    let spec = as_v1.spec.clone().unwrap();
    assert_eq!(spec.target_cpu_utilization_percentage, Some(60));
    assert_eq!((spec.min_replicas, spec.max_replicas), (Some(1), 5));
    assert_eq!(spec.scale_target_ref.name, "web");
    let annotations = as_v1.annotations();
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/metrics"],
        r#"[{"type":"Pods","pods":{"metricName":"requests-per-second","targetAverageValue":"10"}}]"#
    );
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/behavior"],
        r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":120,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}"#
    );
    assert_eq!(as_v1.resource_version(), created.resource_version());

    // The v2 status, as the HPA controller writes it, shows up in v1 as the
    // current CPU utilization and the annotations.
    v2.patch_status(
        "web",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {
            "currentReplicas": 2, "desiredReplicas": 3,
            "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                "current": {"averageUtilization": 75, "averageValue": "150m"}}}],
            "conditions": [{"type": "AbleToScale", "status": "True",
                "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "SucceededRescale"}],
        }})),
    )
    .await
    .unwrap();
    let as_v1 = v1.get("web").await.unwrap();
    let status = as_v1.status.clone().unwrap();
    assert_eq!(status.current_cpu_utilization_percentage, Some(75));
    assert_eq!((status.current_replicas, status.desired_replicas), (2, 3));
    let annotations = as_v1.annotations();
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/current-metrics"],
        r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":75,"currentAverageValue":"150m"}}]"#
    );
    assert_eq!(
        annotations["autoscaling.alpha.kubernetes.io/conditions"],
        r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-01-01T00:00:00Z","reason":"SucceededRescale"}]"#
    );

    // A v1 client that reads, changes and writes back loses nothing of v2.
    let mut changed = as_v1.clone();
    changed.spec.as_mut().unwrap().max_replicas = 8;
    v1.replace("web", &pp, &changed).await.unwrap();
    let back = v2.get("web").await.unwrap();
    assert!(
        back.metadata.annotations.is_none(),
        "{:?}",
        back.metadata.annotations
    );
    let spec = back.spec.clone().unwrap();
    assert_eq!(spec.max_replicas, 8);
    let metric_names: Vec<String> = spec
        .metrics
        .unwrap()
        .iter()
        .map(|metric| {
            metric
                .pods
                .as_ref()
                .map(|pods| pods.metric.name.clone())
                .or_else(|| metric.resource.as_ref().map(|r| r.name.clone()))
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(metric_names, ["requests-per-second", "cpu"]);
    let behavior = spec.behavior.unwrap().scale_down.unwrap();
    assert_eq!(behavior.stabilization_window_seconds, Some(120));
    let status = back.status.unwrap();
    assert_eq!(
        status.conditions.unwrap()[0].reason.as_deref(),
        Some("SucceededRescale")
    );

    // A v1 HPA without a target gets kube's explicit 80% CPU metric in v2.
    let plain: autoscaling_v1::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "plain"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3},
    }))
    .unwrap();
    // The answer is the object as read back, as kube answers from storage:
    // the implicit target is explicit there too.
    let answered = v1.create(&pp, &plain).await.unwrap();
    assert_eq!(
        answered.spec.unwrap().target_cpu_utilization_percentage,
        Some(80)
    );
    let metrics = v2
        .get("plain")
        .await
        .unwrap()
        .spec
        .unwrap()
        .metrics
        .unwrap();
    let resource = metrics[0].resource.clone().unwrap();
    assert_eq!(
        (resource.name.as_str(), resource.target.average_utilization),
        ("cpu", Some(80))
    );

    // An annotation that does not decode is refused, and nothing is stored.
    let mut broken = plain.clone();
    broken.metadata.name = Some("broken".into());
    broken.metadata.annotations = Some(
        [(
            "autoscaling.alpha.kubernetes.io/metrics".to_string(),
            "{}".to_string(),
        )]
        .into(),
    );
    let status = api_status(v1.create(&pp, &broken).await.unwrap_err());
    assert_eq!(
        (status.code, status.message.as_str()),
        (
            400,
            "json: cannot unmarshal object into Go value of type []v1.MetricSpec"
        )
    );
    assert_eq!(api_status(v2.get("broken").await.unwrap_err()).code, 404);
}

#[tokio::test]
async fn kubectl_reads_events_and_hpas_at_the_version_it_names() {
    let env = TestEnv::new("ver-kubectl").await;
    let core: Api<core_v1::Event> = env.api();
    core.create(&PostParams::default(), &core_event(&env.ns, "seen", "web"))
        .await
        .unwrap();
    let v2: Api<autoscaling_v2::HorizontalPodAutoscaler> = env.api();
    v2.create(&PostParams::default(), &hpa_v2("web"))
        .await
        .unwrap();
    for version in ["1.33", "1.27"] {
        let yaml = env.kubectl_ok(
            version,
            &[
                "get",
                "events.v1.events.k8s.io",
                "seen",
                "-n",
                &env.ns,
                "-o",
                "yaml",
            ],
        );
        assert!(yaml.contains("apiVersion: events.k8s.io/v1"), "{yaml}");
        assert!(yaml.contains("note: Started container app"), "{yaml}");
        assert!(yaml.contains("regarding:"), "{yaml}");
        assert!(!yaml.contains("involvedObject"), "{yaml}");
        let target = env.kubectl_ok(
            version,
            &[
                "get",
                "horizontalpodautoscalers.v1.autoscaling",
                "web",
                "-n",
                &env.ns,
                "-o",
                "jsonpath={.apiVersion} {.spec.targetCPUUtilizationPercentage}",
            ],
        );
        assert_eq!(target, "autoscaling/v1 60");
    }
}

/// A GET with its own `Accept`, the body as bytes.
async fn get_as(env: &TestEnv, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    use http_body_util::BodyExt as _;
    let request = http::Request::builder()
        .method("GET")
        .uri(path)
        .header("Accept", accept)
        .body(kube::client::Body::from(Vec::new()))
        .unwrap();
    let response = env.client.send(request).await.unwrap();
    let status = response.status().as_u16();
    let content_type = response
        .headers()
        .get("content-type")
        .and_then(|value| value.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    (status, content_type, body.to_vec())
}

#[tokio::test]
async fn protobuf_tables_and_metadata_carry_the_requests_version() {
    use prost::Message as _;
    let env = TestEnv::new("ver-repr").await;
    let core: Api<core_v1::Event> = env.api();
    core.create(&PostParams::default(), &core_event(&env.ns, "shown", "web"))
        .await
        .unwrap();
    let v2: Api<autoscaling_v2::HorizontalPodAutoscaler> = env.api();
    v2.create(&PostParams::default(), &hpa_v2("web"))
        .await
        .unwrap();
    let events_path = format!("/apis/events.k8s.io/v1/namespaces/{}/events", env.ns);

    // Protobuf, decoded with prost's events.k8s.io/v1 types.
    let (status, content_type, body) = get_as(
        &env,
        &format!("{events_path}/shown"),
        "application/vnd.kubernetes.protobuf",
    )
    .await;
    assert_eq!(
        (status, content_type.as_str()),
        (200, "application/vnd.kubernetes.protobuf")
    );
    let envelope = ferrokube::protobuf::parse_envelope(&body).unwrap();
    assert_eq!(
        (envelope.api_version.as_str(), envelope.kind.as_str()),
        ("events.k8s.io/v1", "Event")
    );
    let event = k8s_pb::api::events::v1::Event::decode(envelope.raw).unwrap();
    assert_eq!(event.note.as_deref(), Some("Started container app"));
    assert_eq!(
        event
            .regarding
            .and_then(|regarding| regarding.name)
            .as_deref(),
        Some("web")
    );

    // A Table with the objects: rows printed, objects at events.k8s.io/v1.
    let (status, _, body) = get_as(
        &env,
        &format!("{events_path}?includeObject=Object"),
        "application/json;as=Table;v=v1;g=meta.k8s.io",
    )
    .await;
    assert_eq!(status, 200);
    let table: Value = serde_json::from_slice(&body).unwrap();
    let row = &table["rows"][0];
    assert_eq!(row["cells"][6], "Started container app", "{table}");
    assert_eq!(row["object"]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(row["object"]["note"], "Started container app");

    // PartialObjectMetadata of the HPA through autoscaling/v1: the metadata
    // of the v1 object, round-trip annotations included.
    let (status, _, body) = get_as(
        &env,
        &format!(
            "/apis/autoscaling/v1/namespaces/{}/horizontalpodautoscalers/web",
            env.ns
        ),
        "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io",
    )
    .await;
    assert_eq!(status, 200);
    let partial: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(partial["kind"], "PartialObjectMetadata");
    assert!(
        partial["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/behavior"]
            .as_str()
            .is_some_and(|text| text.starts_with(r#"{"ScaleUp":{"StabilizationWindowSeconds":0"#)),
        "{partial}"
    );

    // deletecollection answers the deleted items at the request's version.
    let deleted = env.raw("DELETE", &events_path, None, vec![]).await;
    assert_eq!(deleted.status, 200, "{}", deleted.body);
    let deleted = deleted.json();
    assert_eq!(
        (deleted["apiVersion"].as_str(), deleted["kind"].as_str()),
        (Some("events.k8s.io/v1"), Some("EventList"))
    );
    assert_eq!(
        deleted["items"][0]["note"], "Started container app",
        "{deleted}"
    );
    assert!(deleted["items"][0].get("message").is_none(), "{deleted}");
}

#[tokio::test]
async fn writes_are_stored_at_kubes_storage_versions() {
    use common::{create_namespace, skip_if_external, TestServer};

    if skip_if_external("writes_are_stored_at_kubes_storage_versions") {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let mut server = TestServer::start_in(dir.path(), true);
    let client = server.client().await;
    create_namespace(&client, "stored").await;
    let events: Api<events_v1::Event> = Api::namespaced(client.clone(), "stored");
    events
        .create(&PostParams::default(), &events_event("stored", "e", "db"))
        .await
        .unwrap();
    let v1: Api<autoscaling_v1::HorizontalPodAutoscaler> =
        Api::namespaced(client.clone(), "stored");
    let hpa: autoscaling_v1::HorizontalPodAutoscaler = serde_json::from_value(json!({
        "metadata": {"name": "h"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 3,
            "targetCPUUtilizationPercentage": 50},
    }))
    .unwrap();
    v1.create(&PostParams::default(), &hpa).await.unwrap();
    assert!(server.stop_with("TERM").success());

    let db = rusqlite::Connection::open(dir.path().join("store.db")).unwrap();
    let stored = |key: &str| -> Value {
        let bytes: Vec<u8> = db
            .query_row("SELECT value FROM kv WHERE key = ?1", [key], |row| {
                row.get(0)
            })
            .unwrap();
        serde_json::from_slice(&bytes).unwrap()
    };
    let event = stored("/registry/events/stored/e");
    assert_eq!(event["apiVersion"], "v1");
    assert_eq!(event["message"], "Successfully assigned the pod");
    assert_eq!(event["involvedObject"]["name"], "db");
    assert_eq!(
        event["metadata"]["managedFields"][0]["apiVersion"],
        "events.k8s.io/v1"
    );
    let hpa = stored("/registry/horizontalpodautoscalers/stored/h");
    assert_eq!(hpa["apiVersion"], "autoscaling/v2");
    assert_eq!(
        hpa["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 50}}}])
    );
    assert_eq!(
        hpa["metadata"]["managedFields"][0]["apiVersion"],
        "autoscaling/v1"
    );
}
