"""Resources served in two versions through the official Python client.

As kube-apiserver 1.34 does: core/v1 Events and events.k8s.io/v1 Events are
one resource stored once, each version reading the other's writes with its
own field names (`involvedObject`/`regarding`, `message`/`note`,
`reportingComponent`/`reportingController`, `count`/`deprecatedCount`);
autoscaling/v2 HorizontalPodAutoscalers read as autoscaling/v1 carry the
metrics v1 cannot hold in `autoscaling.alpha.kubernetes.io/*` annotations.

The Python client's `EventsV1Event` requires `eventTime`, so the core events
written here set it (kube serves `eventTime: null` for events without one,
which the client refuses: that is the client's rule, not the server's).
"""

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException


def core_event(name, namespace):
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": "web", "apiVersion": "v1"},
        "reason": "Pulled",
        "message": "Container image pulled",
        "type": "Normal",
        "source": {"component": "kubelet", "host": "node-1"},
        "count": 4,
        "eventTime": "2026-01-01T00:00:00.000001Z",
        "reportingComponent": "kubelet",
        "reportingInstance": "node-1",
        # kube's legacyValidateEvent requires an action once eventTime is set.
        "action": "Pulling",
    }


def test_events_v1_api_reads_and_writes_core_events(api_client, core_v1, namespace):
    events_v1 = client.EventsV1Api(api_client)
    core_v1.create_namespaced_event(namespace, core_event("pulled", namespace))

    read = events_v1.read_namespaced_event("pulled", namespace)
    assert read.api_version == "events.k8s.io/v1"
    assert read.note == "Container image pulled"
    assert (read.regarding.kind, read.regarding.name) == ("Pod", "web")
    assert read.reporting_controller == "kubelet"
    assert read.deprecated_count == 4
    assert read.deprecated_source.component == "kubelet"

    created = events_v1.create_namespaced_event(
        namespace,
        {
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "scheduled"},
            "eventTime": "2026-01-01T00:00:01.000001Z",
            "reportingController": "example.com/scheduler",
            "reportingInstance": "scheduler-1",
            "action": "Binding",
            "reason": "Scheduled",
            "type": "Normal",
            "regarding": {"kind": "Pod", "namespace": namespace, "name": "web", "apiVersion": "v1"},
            "note": "Successfully assigned",
        },
    )
    assert created.note == "Successfully assigned"
    as_core = core_v1.read_namespaced_event("scheduled", namespace)
    assert as_core.api_version == "v1"
    assert as_core.message == "Successfully assigned"
    assert as_core.involved_object.name == "web"
    assert as_core.reporting_component == "example.com/scheduler"

    listed = events_v1.list_namespaced_event(namespace)
    assert sorted((e.metadata.name, e.note) for e in listed.items) == [
        ("pulled", "Container image pulled"),
        ("scheduled", "Successfully assigned"),
    ]
    by_regarding = events_v1.list_namespaced_event(namespace, field_selector="reportingController=kubelet")
    assert [e.metadata.name for e in by_regarding.items] == ["pulled"]

    # events.k8s.io/v1 keeps an event's fields (kube's ValidateEventUpdate for
    # that version): a new note is refused, a new label is stored.
    with pytest.raises(ApiException) as refused:
        events_v1.patch_namespaced_event("pulled", namespace, {"note": "Pulled again"})
    assert refused.value.status == 422
    assert json.loads(refused.value.body)["message"] == (
        'Event.events.k8s.io "pulled" is invalid: message: Invalid value: "Pulled again": field is immutable'
    )
    patched = events_v1.patch_namespaced_event("pulled", namespace, {"metadata": {"labels": {"seen": "yes"}}})
    assert patched.metadata.labels == {"seen": "yes"}
    assert patched.note == "Container image pulled"
    # Through core/v1 only the legacy rules apply: the message may change.
    core_v1.patch_namespaced_event("pulled", namespace, {"message": "Pulled again"})
    assert events_v1.read_namespaced_event("pulled", namespace).note == "Pulled again"


def test_autoscaling_v1_reads_v2_hpas_with_round_trip_annotations(api_client, namespace):
    v2 = client.AutoscalingV2Api(api_client)
    v1 = client.AutoscalingV1Api(api_client)
    v2.create_namespaced_horizontal_pod_autoscaler(
        namespace,
        {
            "apiVersion": "autoscaling/v2",
            "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "api"},
            "spec": {
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "api"},
                "maxReplicas": 4,
                "metrics": [
                    {"type": "Resource", "resource": {"name": "memory", "target": {"type": "Utilization", "averageUtilization": 70}}},
                ],
            },
        },
    )
    read = v1.read_namespaced_horizontal_pod_autoscaler("api", namespace)
    assert read.api_version == "autoscaling/v1"
    assert read.spec.target_cpu_utilization_percentage is None
    assert read.metadata.annotations == {
        "autoscaling.alpha.kubernetes.io/metrics": '[{"type":"Resource","resource":{"name":"memory","targetAverageUtilization":70}}]'
    }
    # Written back through v1, read through v2: nothing lost, no annotations.
    read.spec.max_replicas = 6
    v1.replace_namespaced_horizontal_pod_autoscaler("api", namespace, read)
    back = v2.read_namespaced_horizontal_pod_autoscaler("api", namespace)
    assert back.metadata.annotations is None
    assert back.spec.max_replicas == 6
    assert [(m.type, m.resource.name, m.resource.target.average_utilization) for m in back.spec.metrics] == [
        ("Resource", "memory", 70)
    ]


def test_events_v1_writes_are_validated_strictly(api_client, namespace):
    """events.k8s.io/v1 runs kube's strict ValidateEventCreate: a missing
    reportingController and a deprecated field set are refused with kube's causes."""
    events_v1 = client.EventsV1Api(api_client)
    body = {
        "apiVersion": "events.k8s.io/v1",
        "kind": "Event",
        "metadata": {"name": "strict"},
        "eventTime": "2026-01-01T00:00:01.000001Z",
        "reportingInstance": "scheduler-1",
        "action": "Binding",
        "reason": "Scheduled",
        "type": "Normal",
        "regarding": {"kind": "Pod", "namespace": namespace, "name": "web", "apiVersion": "v1"},
        "deprecatedCount": 3,
    }
    with pytest.raises(ApiException) as refused:
        events_v1.create_namespaced_event(namespace, body)
    assert refused.value.status == 422
    status = json.loads(refused.value.body)
    assert status["reason"] == "Invalid"
    assert [(c["reason"], c["field"]) for c in status["details"]["causes"]] == [
        ("FieldValueRequired", "reportingController"),
        ("FieldValueInvalid", "reportingController"),
        ("FieldValueInvalid", "reportingController"),
        ("FieldValueInvalid", "count"),
    ]
    assert status["details"]["causes"][3]["message"] == 'Invalid value: "": needs to be unset'
    del body["deprecatedCount"]
    body["reportingController"] = "example.com/scheduler"
    created = events_v1.create_namespaced_event(namespace, body)
    assert created.reporting_controller == "example.com/scheduler"
