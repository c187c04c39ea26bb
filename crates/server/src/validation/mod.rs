//! Per-kind validation of built-in objects, as kube's `Validate<Kind>` and
//! `Validate<Kind>Update` functions (`pkg/apis/*/validation`) check them after
//! defaulting: the same field paths, cause types, messages and order.
//! ObjectMeta is checked by `api/write/validate.rs`; this module holds what
//! each kind adds. One file per kind family:
//!
//! - [`admissionregistration`] — ValidatingAdmissionPolicy(Binding); [`admission_rules`] — the rules,
//!   selectors and resources they share with webhook configurations;
//! - [`field`] — field paths, `field.Error` constructors, shared `util/validation` checks;
//!   [`int_or_percent`] — `IntOrString` counts and percentages;
//! - [`flowcontrol`] — FlowSchema, PriorityLevelConfiguration; [`flowcontrol_status`] — their `/status`;
//! - [`apiregistration`] — APIService (and its `/status`);
//! - [`autoscaling`] — HorizontalPodAutoscaler (autoscaling/v1 checked as its v2 form);
//! - [`batch`] — Job, CronJob; [`job_policies`] — a Job's failure and success policies;
//!   [`job_status`] — a Job's `/status`; [`cron_schedule`] —
//!   a CronJob's schedule (robfig/cron) and time zone;
//! - [`certificates`] — CertificateSigningRequest;
//! - [`config`] — ConfigMap, Secret;
//! - [`coordination`] — Lease;
//! - [`discovery`] — EndpointSlice;
//! - [`ip_address`] — IP addresses and CIDRs as kube's legacy fields parse them;
//! - [`networking`] — Ingress, IngressClass, NetworkPolicy;
//! - [`endpoints`] — Endpoints; [`ip_field`] — IP and CIDR fields;
//! - [`event`] — core/v1 Event; [`events_k8s_io`] — events.k8s.io/v1 Event;
//! - [`controller_revision`] — ControllerRevision;
//! - [`kube_finalizer`] — core's finalizer-name rule on the kinds validated with core's ObjectMeta;
//! - [`limit_range`] — LimitRange; [`quota`] — ResourceQuota and resource names/quantities;
//! - [`namespace`] — Namespace (and its `/status`, `/finalize`);
//! - [`node`] — Node (and its `/status`); [`node_annotations`] — its taints and
//!   preferAvoidPods annotations; [`node_selector`] — core's `ValidateNodeSelector`;
//! - [`pod`], [`container`], [`pod_volumes`], [`pod_update`] — Pod, PodTemplate and
//!   every pod template inside a workload; [`pod_options`] — the label-value
//!   relaxations an update takes from the old pod or template;
//! - [`pod_ephemeral`], [`pod_resize`], [`pod_status`] — `pods/ephemeralcontainers`,
//!   `pods/resize`, `pods/status`;
//!   [`pod_qos`] — a pod's QoS class;
//! - [`policy`] — PodDisruptionBudget;
//! - [`rbac`] — Role, ClusterRole, RoleBinding, ClusterRoleBinding;
//! - [`resource`] — DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice (main rules);
//!   [`resource_device`] — a slice's device attributes and capacities;
//!   [`resource_claim_status`] — a ResourceClaim's `/status`; [`resource_cel`] — CEL selectors;
//!   [`resource_admin`] — admin access and the namespace label it needs;
//! - [`scheduling`] — PriorityClass, RuntimeClass;
//! - [`selector`] — label selectors in specs; [`semantic_equal`] — `Semantic.DeepEqual`
//!   of pod templates and other immutable fields;
//! - [`service`] — Service; [`service_ips`] — its cluster IP fields; [`service_status`] — its `/status` (load balancer ingress);
//!   [`service_cidr`] — IPAddress, ServiceCIDR;
//! - [`claim_status`] — PersistentVolumeClaim `/status`;
//! - [`storage`] — StorageClass, CSIDriver, CSINode, VolumeAttachment;
//!   [`storage_capacity`] — CSIStorageCapacity, VolumeAttributesClass;
//! - [`storage_core`] — PersistentVolume, PersistentVolumeClaim; [`pv_sources`] — a PV's
//!   in-tree volume sources; [`pv_node_affinity`] — a PV's node affinity on update;
//! - [`workloads`] — Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController;
//! - [`workload_status`] — `/status` writes of Deployments, ReplicaSets, ReplicationControllers,
//!   StatefulSets, DaemonSets, HorizontalPodAutoscalers;
//!
//! Objects arrive as JSON trees that already decoded as their typed object
//! (`api/typed.rs`), so a field of the wrong type cannot reach here; absent
//! fields read as Go's zero values.

pub mod admission_rules;
pub mod admissionregistration;
pub mod apiregistration;
pub mod autoscaling;
pub mod batch;
pub mod capabilities;
pub mod certificates;
pub mod claim_status;
pub mod config;
pub mod container;
pub mod container_handler;
pub mod controller_revision;
pub mod coordination;
pub mod cron_schedule;
pub mod csr_signature;
pub mod discovery;
pub mod endpoints;
pub mod ephemeral_volume;
pub mod event;
pub mod events_k8s_io;
pub mod field;
pub mod flowcontrol;
pub mod flowcontrol_status;
pub mod go_json;
pub mod int_or_percent;
pub mod ip_address;
pub mod ip_field;
pub mod ip_warnings;
pub mod job_policies;
pub mod job_status;
pub mod job_template_update;
pub mod kube_finalizer;
pub mod limit_range;
pub mod namespace;
pub mod networking;
pub mod node;
pub mod node_annotations;
pub mod node_selector;
pub mod pod;
pub mod pod_annotations;
pub mod pod_ephemeral;
pub mod pod_options;
pub mod pod_os;
pub mod pod_qos;
pub mod pod_resize;
pub mod pod_resource_claims;
pub mod pod_scheduling;
pub mod pod_security_context;
pub mod pod_status;
pub mod pod_update;
pub mod pod_update_gated;
pub mod pod_volume_sources;
pub mod pod_volumes;
pub mod policy;
pub mod pv_node_affinity;
pub mod pv_sources;
pub mod quota;
pub mod rbac;
pub mod resource;
pub mod resource_admin;
pub mod resource_cel;
pub mod resource_claim_status;
pub mod resource_device;
pub mod resource_requirements;
pub mod scheduling;
pub mod selector;
pub mod semantic_equal;
pub mod service;
pub mod service_cidr;
pub mod service_ips;
pub mod service_status;
pub mod storage;
pub mod storage_capacity;
pub mod storage_core;
pub mod workload_status;
pub mod workloads;

use serde_json::Value;

use crate::registry::ResourceDef;
use crate::status::FieldError;

/// The kind rules of `resource` for a write of `object` (`old` on update) to
/// the main resource or a subresource that writes the whole object (`scale`).
pub fn validate(
    resource: &ResourceDef,
    subresource: Option<&str>,
    object: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    if subresource == Some("status") {
        return match (resource.group, resource.kind, old) {
            ("apps", "Deployment", Some(old)) => workload_status::deployment(object, old),
            ("apps", "ReplicaSet", Some(_)) | ("", "ReplicationController", Some(_)) => {
                workload_status::replica_set(object)
            }
            ("networking.k8s.io", "Ingress", Some(old)) => {
                networking::ingress_status_update(object, old)
            }
            ("policy", "PodDisruptionBudget", Some(_)) => {
                policy::pod_disruption_budget_status(object)
            }
            ("", "Namespace", Some(_)) => namespace::namespace_status(object),
            ("", "Pod", Some(old)) => pod_status::pod_status_update(object, old),
            ("", "Service", Some(_)) => service_status::service_status_update(object),
            ("", "PersistentVolumeClaim", Some(_)) => claim_status::claim_status_update(object),
            ("apps", "StatefulSet", Some(old)) => workload_status::stateful_set(object, old),
            ("apps", "DaemonSet", Some(old)) => workload_status::daemon_set(object, old),
            ("autoscaling", "HorizontalPodAutoscaler", Some(_)) => {
                workload_status::horizontal_pod_autoscaler(object)
            }
            ("batch", "Job", Some(old)) => job_status::job_status_update(object, old),
            // `volumeAttachmentStatusStrategy` validates as the main resource does.
            ("storage.k8s.io", "VolumeAttachment", Some(old)) => {
                storage::volume_attachment_update(object, old)
            }
            ("", "Node", Some(old)) => node::node_update(object, old),
            ("", "ResourceQuota", Some(_)) => quota::resource_quota_status(object),
            (
                "flowcontrol.apiserver.k8s.io",
                "FlowSchema" | "PriorityLevelConfiguration",
                Some(_),
            ) => flowcontrol_status::conditions_status(object),
            ("apiregistration.k8s.io", "APIService", Some(_)) => {
                apiregistration::api_service_status(object)
            }
            ("resource.k8s.io", "ResourceClaim", Some(old)) => {
                resource_claim_status::resource_claim_status_update(object, old)
            }
            ("certificates.k8s.io", "CertificateSigningRequest", Some(old)) => {
                certificates::certificate_signing_request_update_through(
                    object,
                    old,
                    certificates::UpdatePath::Status,
                )
            }
            _ => Vec::new(),
        };
    }
    if let (Some("approval"), ("certificates.k8s.io", "CertificateSigningRequest", Some(old))) =
        (subresource, (resource.group, resource.kind, old))
    {
        return certificates::certificate_signing_request_update_through(
            object,
            old,
            certificates::UpdatePath::Approval,
        );
    }
    if subresource == Some("finalize") {
        return match (resource.group, resource.kind) {
            ("", "Namespace") => namespace::namespace_finalize(object),
            _ => Vec::new(),
        };
    }
    if let (Some("ephemeralcontainers"), ("", "Pod", Some(old))) =
        (subresource, (resource.group, resource.kind, old))
    {
        return pod_ephemeral::ephemeral_containers_update(object, old);
    }
    if let (Some("resize"), ("", "Pod", Some(old))) =
        (subresource, (resource.group, resource.kind, old))
    {
        return pod_resize::pod_resize(object, old);
    }
    if !matches!(subresource, None | Some("scale")) {
        return Vec::new();
    }
    match (resource.group, resource.kind, old) {
        ("", "ConfigMap", None) => config::config_map(object),
        ("", "ConfigMap", Some(old)) => config::config_map_update(object, old),
        ("", "Secret", None) => config::secret(object),
        ("", "Secret", Some(old)) => config::secret_update(object, old),
        ("", "Service", None) => service::service(object),
        ("", "Service", Some(old)) => service::service_update(object, old),
        ("", "Namespace", _) => namespace::namespace(object),
        ("", "Endpoints", _) => endpoints::endpoints(object),
        ("", "Event", _) => event::event(object),
        ("", "LimitRange", _) => limit_range::limit_range(object),
        ("", "ResourceQuota", None) => quota::resource_quota(object),
        ("", "ResourceQuota", Some(old)) => quota::resource_quota_update(object, old),
        ("", "Node", None) => node::node(object),
        // `nodeStrategy.ValidateUpdate`: `ValidateNode`, then `ValidateNodeUpdate`
        // (the `/status` strategy runs only the latter).
        ("", "Node", Some(old)) => {
            let mut errors = node::node(object);
            errors.extend(node::node_update(object, old));
            errors
        }
        ("", "PersistentVolume", None) => storage_core::persistent_volume(object),
        ("", "PersistentVolume", Some(old)) => storage_core::persistent_volume_update(object, old),
        ("", "PersistentVolumeClaim", None) => storage_core::persistent_volume_claim(object),
        ("", "PersistentVolumeClaim", Some(old)) => {
            storage_core::persistent_volume_claim_update(object, old)
        }
        ("batch", "Job", None) => batch::job(object),
        ("batch", "Job", Some(old)) => batch::job_update(object, old),
        ("batch", "CronJob", old) => batch::cron_job(object, old),
        ("rbac.authorization.k8s.io", "Role", _) => rbac::role(object),
        ("rbac.authorization.k8s.io", "ClusterRole", _) => rbac::cluster_role(object),
        ("rbac.authorization.k8s.io", "RoleBinding", None) => rbac::binding(object, true),
        ("rbac.authorization.k8s.io", "RoleBinding", Some(old)) => {
            rbac::binding_update(object, old, true)
        }
        ("rbac.authorization.k8s.io", "ClusterRoleBinding", None) => rbac::binding(object, false),
        ("rbac.authorization.k8s.io", "ClusterRoleBinding", Some(old)) => {
            rbac::binding_update(object, old, false)
        }
        ("", "Pod", None) => pod::pod(object),
        ("", "Pod", Some(old)) => pod_update::pod_update(object, old),
        ("", "PodTemplate", old) => pod::pod_template(object, old),
        ("", "ReplicationController", old) => {
            workloads::replication_controller(object, old_template_options(old))
        }
        ("apps", "Deployment", old) => with_immutable_selector(
            workloads::deployment(object, old_template_options(old)),
            object,
            old,
        ),
        ("apps", "ReplicaSet", old) => with_immutable_selector(
            workloads::replica_set(object, old_template_options(old)),
            object,
            old,
        ),
        ("apps", "DaemonSet", None) => {
            workloads::daemon_set(object, pod_options::PodValidationOptions::default())
        }
        ("apps", "DaemonSet", Some(old)) => {
            with_immutable_selector(workloads::daemon_set_update(object, old), object, Some(old))
        }
        ("apps", "StatefulSet", None) => workloads::stateful_set(object),
        ("apps", "StatefulSet", Some(old)) => workloads::stateful_set_update(object, old),
        ("apps", "ControllerRevision", None) => controller_revision::controller_revision(object),
        ("apps", "ControllerRevision", Some(old)) => {
            controller_revision::controller_revision_update(object, old)
        }
        ("autoscaling", "HorizontalPodAutoscaler", old) => {
            autoscaling::horizontal_pod_autoscaler(object, old)
        }
        ("events.k8s.io", "Event", None) => events_k8s_io::event_create(object),
        ("events.k8s.io", "Event", Some(old)) => events_k8s_io::event_update(object, old),
        _ => non_core(resource, object, old),
    }
}

/// The kinds of the non-core API groups (networking, storage, policy,
/// scheduling, node, coordination, discovery).
fn non_core(resource: &ResourceDef, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    match (resource.group, resource.kind, old) {
        ("networking.k8s.io", "Ingress", None) => networking::ingress(object),
        ("networking.k8s.io", "Ingress", Some(old)) => networking::ingress_update(object, old),
        ("networking.k8s.io", "IngressClass", None) => networking::ingress_class(object),
        ("networking.k8s.io", "IngressClass", Some(old)) => {
            networking::ingress_class_update(object, old)
        }
        ("networking.k8s.io", "NetworkPolicy", None) => networking::network_policy(object),
        ("networking.k8s.io", "NetworkPolicy", Some(old)) => {
            networking::network_policy_update(object, old)
        }
        ("networking.k8s.io", "IPAddress", None) => service_cidr::ip_address(object),
        ("networking.k8s.io", "IPAddress", Some(old)) => {
            service_cidr::ip_address_update(object, old)
        }
        ("networking.k8s.io", "ServiceCIDR", None) => service_cidr::service_cidr(object),
        ("networking.k8s.io", "ServiceCIDR", Some(old)) => {
            service_cidr::service_cidr_update(object, old)
        }
        ("storage.k8s.io", "StorageClass", None) => storage::storage_class(object),
        ("storage.k8s.io", "StorageClass", Some(old)) => storage::storage_class_update(object, old),
        ("storage.k8s.io", "CSIDriver", None) => storage::csi_driver(object),
        ("storage.k8s.io", "CSIDriver", Some(old)) => storage::csi_driver_update(object, old),
        ("storage.k8s.io", "CSINode", None) => storage::csi_node(object),
        ("storage.k8s.io", "CSINode", Some(old)) => storage::csi_node_update(object, old),
        ("storage.k8s.io", "VolumeAttachment", None) => storage::volume_attachment(object),
        ("storage.k8s.io", "VolumeAttachment", Some(old)) => {
            storage::volume_attachment_update(object, old)
        }
        ("storage.k8s.io", "CSIStorageCapacity", None) => {
            storage_capacity::csi_storage_capacity(object)
        }
        ("storage.k8s.io", "CSIStorageCapacity", Some(old)) => {
            storage_capacity::csi_storage_capacity_update(object, old)
        }
        ("storage.k8s.io", "VolumeAttributesClass", None) => {
            storage_capacity::volume_attributes_class(object)
        }
        ("storage.k8s.io", "VolumeAttributesClass", Some(old)) => {
            storage_capacity::volume_attributes_class_update(object, old)
        }
        ("policy", "PodDisruptionBudget", old) => policy::pod_disruption_budget(object, old),
        ("scheduling.k8s.io", "PriorityClass", None) => scheduling::priority_class(object),
        ("scheduling.k8s.io", "PriorityClass", Some(old)) => {
            scheduling::priority_class_update(object, old)
        }
        ("node.k8s.io", "RuntimeClass", None) => scheduling::runtime_class(object),
        ("node.k8s.io", "RuntimeClass", Some(old)) => scheduling::runtime_class_update(object, old),
        ("coordination.k8s.io", "Lease", _) => coordination::lease(object),
        ("certificates.k8s.io", "CertificateSigningRequest", None) => {
            certificates::certificate_signing_request(object)
        }
        ("certificates.k8s.io", "CertificateSigningRequest", Some(old)) => {
            certificates::certificate_signing_request_update(object, old)
        }
        ("flowcontrol.apiserver.k8s.io", "FlowSchema", _) => flowcontrol::flow_schema(object),
        ("apiregistration.k8s.io", "APIService", _) => apiregistration::api_service(object),
        ("resource.k8s.io", "DeviceClass", old) => resource::device_class(object, old),
        ("resource.k8s.io", "ResourceClaim", None) => resource::resource_claim(object),
        ("resource.k8s.io", "ResourceClaimTemplate", None) => {
            resource::resource_claim_template(object)
        }
        ("resource.k8s.io", "ResourceClaim" | "ResourceClaimTemplate", Some(old)) => {
            resource::spec_immutable(object, old)
        }
        ("resource.k8s.io", "ResourceSlice", old) => resource::resource_slice(object, old),
        ("flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration", _) => {
            flowcontrol::priority_level_configuration(object)
        }
        ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration", old) => {
            crate::admission::webhook::config_rules::validate(object, old, false)
        }
        ("admissionregistration.k8s.io", "MutatingWebhookConfiguration", old) => {
            crate::admission::webhook::config_rules::validate(object, old, true)
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicy", old) => {
            admissionregistration::validating_admission_policy(object, old)
        }
        ("admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding", _) => {
            admissionregistration::validating_admission_policy_binding(object)
        }
        ("discovery.k8s.io", "EndpointSlice", None) => discovery::endpoint_slice(object),
        ("discovery.k8s.io", "EndpointSlice", Some(old)) => {
            discovery::endpoint_slice_update(object, old)
        }
        _ => Vec::new(),
    }
}

/// `GetValidationOptionsFromPodTemplate` of a workload's `spec.template`
/// on update (the default options on create).
fn old_template_options(old: Option<&Value>) -> pod_options::PodValidationOptions {
    match old {
        None => pod_options::PodValidationOptions::default(),
        Some(old) => {
            pod_options::PodValidationOptions::from_old_template(old.pointer("/spec/template"))
        }
    }
}

/// apps/v1 strategies add the immutable selector after the kind's own update rules.
fn with_immutable_selector(
    mut errors: Vec<FieldError>,
    object: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    if let Some(old) = old {
        errors.extend(workloads::immutable_selector(object, old));
    }
    errors
}

#[cfg(test)]
#[path = "relaxation_tests.rs"]
mod relaxation_tests;
