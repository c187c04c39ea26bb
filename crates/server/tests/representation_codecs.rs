//! Every built-in kind through the representations, checked against
//! independent codecs: a sample object with every field set (built from the
//! protobuf message table, `ferrokube::protobuf::sample`) is
//! - encoded by us to protobuf, decoded by prost's generated types (`k8s-pb`),
//!   re-encoded by prost and decoded by us: the same JSON must come back (prost
//!   drops fields it does not know, so a wrong field number or wire type shows);
//! - JSON -> protobuf -> JSON and JSON -> CBOR -> JSON without loss.
#![allow(clippy::unwrap_used)]

use ferrokube::protobuf::{
    decode_object, encode_envelope, message_for, parse_envelope, write_envelope,
};
use serde_json::Value;

/// Decodes `raw` as the prost type `T` and encodes it again.
fn through_prost<T: prost::Message + Default>(raw: &[u8]) -> Result<Vec<u8>, prost::DecodeError> {
    T::decode(raw).map(|message| message.encode_to_vec())
}

macro_rules! prost_kinds {
    ($($api_version:literal, $kind:literal => $ty:ty;)*) => {
        /// (apiVersion, kind, prost round trip of a raw message)
        const PROST_KINDS: &[(&str, &str, fn(&[u8]) -> Result<Vec<u8>, prost::DecodeError>)] = &[
            $(($api_version, $kind, through_prost::<$ty>),)*
        ];
    };
}

prost_kinds! {
    "admissionregistration.k8s.io/v1", "MutatingWebhookConfiguration" => k8s_pb::api::admissionregistration::v1::MutatingWebhookConfiguration;
    "admissionregistration.k8s.io/v1", "MutatingWebhookConfigurationList" => k8s_pb::api::admissionregistration::v1::MutatingWebhookConfigurationList;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicy" => k8s_pb::api::admissionregistration::v1::ValidatingAdmissionPolicy;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBinding" => k8s_pb::api::admissionregistration::v1::ValidatingAdmissionPolicyBinding;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyBindingList" => k8s_pb::api::admissionregistration::v1::ValidatingAdmissionPolicyBindingList;
    "admissionregistration.k8s.io/v1", "ValidatingAdmissionPolicyList" => k8s_pb::api::admissionregistration::v1::ValidatingAdmissionPolicyList;
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfiguration" => k8s_pb::api::admissionregistration::v1::ValidatingWebhookConfiguration;
    "admissionregistration.k8s.io/v1", "ValidatingWebhookConfigurationList" => k8s_pb::api::admissionregistration::v1::ValidatingWebhookConfigurationList;
    "admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicy" => k8s_pb::api::admissionregistration::v1alpha1::MutatingAdmissionPolicy;
    "admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicyBinding" => k8s_pb::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBinding;
    "admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicyBindingList" => k8s_pb::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyBindingList;
    "admissionregistration.k8s.io/v1alpha1", "MutatingAdmissionPolicyList" => k8s_pb::api::admissionregistration::v1alpha1::MutatingAdmissionPolicyList;
    "admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicy" => k8s_pb::api::admissionregistration::v1beta1::MutatingAdmissionPolicy;
    "admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBinding" => k8s_pb::api::admissionregistration::v1beta1::MutatingAdmissionPolicyBinding;
    "admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyBindingList" => k8s_pb::api::admissionregistration::v1beta1::MutatingAdmissionPolicyBindingList;
    "admissionregistration.k8s.io/v1beta1", "MutatingAdmissionPolicyList" => k8s_pb::api::admissionregistration::v1beta1::MutatingAdmissionPolicyList;
    "apiextensions.k8s.io/v1", "CustomResourceDefinition" => k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    "apiextensions.k8s.io/v1", "CustomResourceDefinitionList" => k8s_pb::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinitionList;
    "apiregistration.k8s.io/v1", "APIService" => k8s_pb::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
    "apiregistration.k8s.io/v1", "APIServiceList" => k8s_pb::kube_aggregator::pkg::apis::apiregistration::v1::APIServiceList;
    "apps/v1", "ControllerRevision" => k8s_pb::api::apps::v1::ControllerRevision;
    "apps/v1", "ControllerRevisionList" => k8s_pb::api::apps::v1::ControllerRevisionList;
    "apps/v1", "DaemonSet" => k8s_pb::api::apps::v1::DaemonSet;
    "apps/v1", "DaemonSetList" => k8s_pb::api::apps::v1::DaemonSetList;
    "apps/v1", "Deployment" => k8s_pb::api::apps::v1::Deployment;
    "apps/v1", "DeploymentList" => k8s_pb::api::apps::v1::DeploymentList;
    "apps/v1", "ReplicaSet" => k8s_pb::api::apps::v1::ReplicaSet;
    "apps/v1", "ReplicaSetList" => k8s_pb::api::apps::v1::ReplicaSetList;
    "apps/v1", "StatefulSet" => k8s_pb::api::apps::v1::StatefulSet;
    "apps/v1", "StatefulSetList" => k8s_pb::api::apps::v1::StatefulSetList;
    "authentication.k8s.io/v1", "SelfSubjectReview" => k8s_pb::api::authentication::v1::SelfSubjectReview;
    "authentication.k8s.io/v1", "TokenRequest" => k8s_pb::api::authentication::v1::TokenRequest;
    "authentication.k8s.io/v1", "TokenReview" => k8s_pb::api::authentication::v1::TokenReview;
    "authorization.k8s.io/v1", "LocalSubjectAccessReview" => k8s_pb::api::authorization::v1::LocalSubjectAccessReview;
    "authorization.k8s.io/v1", "SelfSubjectAccessReview" => k8s_pb::api::authorization::v1::SelfSubjectAccessReview;
    "authorization.k8s.io/v1", "SelfSubjectRulesReview" => k8s_pb::api::authorization::v1::SelfSubjectRulesReview;
    "authorization.k8s.io/v1", "SubjectAccessReview" => k8s_pb::api::authorization::v1::SubjectAccessReview;
    "autoscaling/v1", "HorizontalPodAutoscaler" => k8s_pb::api::autoscaling::v1::HorizontalPodAutoscaler;
    "autoscaling/v1", "HorizontalPodAutoscalerList" => k8s_pb::api::autoscaling::v1::HorizontalPodAutoscalerList;
    "autoscaling/v1", "Scale" => k8s_pb::api::autoscaling::v1::Scale;
    "autoscaling/v2", "HorizontalPodAutoscaler" => k8s_pb::api::autoscaling::v2::HorizontalPodAutoscaler;
    "autoscaling/v2", "HorizontalPodAutoscalerList" => k8s_pb::api::autoscaling::v2::HorizontalPodAutoscalerList;
    "batch/v1", "CronJob" => k8s_pb::api::batch::v1::CronJob;
    "batch/v1", "CronJobList" => k8s_pb::api::batch::v1::CronJobList;
    "batch/v1", "Job" => k8s_pb::api::batch::v1::Job;
    "batch/v1", "JobList" => k8s_pb::api::batch::v1::JobList;
    "certificates.k8s.io/v1", "CertificateSigningRequest" => k8s_pb::api::certificates::v1::CertificateSigningRequest;
    "certificates.k8s.io/v1", "CertificateSigningRequestList" => k8s_pb::api::certificates::v1::CertificateSigningRequestList;
    "certificates.k8s.io/v1alpha1", "ClusterTrustBundle" => k8s_pb::api::certificates::v1alpha1::ClusterTrustBundle;
    "certificates.k8s.io/v1alpha1", "ClusterTrustBundleList" => k8s_pb::api::certificates::v1alpha1::ClusterTrustBundleList;
    "certificates.k8s.io/v1beta1", "ClusterTrustBundle" => k8s_pb::api::certificates::v1beta1::ClusterTrustBundle;
    "certificates.k8s.io/v1beta1", "ClusterTrustBundleList" => k8s_pb::api::certificates::v1beta1::ClusterTrustBundleList;
    "certificates.k8s.io/v1beta1", "PodCertificateRequest" => k8s_pb::api::certificates::v1beta1::PodCertificateRequest;
    "certificates.k8s.io/v1beta1", "PodCertificateRequestList" => k8s_pb::api::certificates::v1beta1::PodCertificateRequestList;
    "coordination.k8s.io/v1", "Lease" => k8s_pb::api::coordination::v1::Lease;
    "coordination.k8s.io/v1", "LeaseList" => k8s_pb::api::coordination::v1::LeaseList;
    "coordination.k8s.io/v1alpha2", "LeaseCandidate" => k8s_pb::api::coordination::v1alpha2::LeaseCandidate;
    "coordination.k8s.io/v1alpha2", "LeaseCandidateList" => k8s_pb::api::coordination::v1alpha2::LeaseCandidateList;
    "coordination.k8s.io/v1beta1", "LeaseCandidate" => k8s_pb::api::coordination::v1beta1::LeaseCandidate;
    "coordination.k8s.io/v1beta1", "LeaseCandidateList" => k8s_pb::api::coordination::v1beta1::LeaseCandidateList;
    "discovery.k8s.io/v1", "EndpointSlice" => k8s_pb::api::discovery::v1::EndpointSlice;
    "discovery.k8s.io/v1", "EndpointSliceList" => k8s_pb::api::discovery::v1::EndpointSliceList;
    "events.k8s.io/v1", "Event" => k8s_pb::api::events::v1::Event;
    "events.k8s.io/v1", "EventList" => k8s_pb::api::events::v1::EventList;
    "flowcontrol.apiserver.k8s.io/v1", "FlowSchema" => k8s_pb::api::flowcontrol::v1::FlowSchema;
    "flowcontrol.apiserver.k8s.io/v1", "FlowSchemaList" => k8s_pb::api::flowcontrol::v1::FlowSchemaList;
    "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfiguration" => k8s_pb::api::flowcontrol::v1::PriorityLevelConfiguration;
    "flowcontrol.apiserver.k8s.io/v1", "PriorityLevelConfigurationList" => k8s_pb::api::flowcontrol::v1::PriorityLevelConfigurationList;
    "internal.apiserver.k8s.io/v1alpha1", "StorageVersion" => k8s_pb::api::apiserverinternal::v1alpha1::StorageVersion;
    "internal.apiserver.k8s.io/v1alpha1", "StorageVersionList" => k8s_pb::api::apiserverinternal::v1alpha1::StorageVersionList;
    "networking.k8s.io/v1", "IPAddress" => k8s_pb::api::networking::v1::IPAddress;
    "networking.k8s.io/v1", "IPAddressList" => k8s_pb::api::networking::v1::IPAddressList;
    "networking.k8s.io/v1", "Ingress" => k8s_pb::api::networking::v1::Ingress;
    "networking.k8s.io/v1", "IngressClass" => k8s_pb::api::networking::v1::IngressClass;
    "networking.k8s.io/v1", "IngressClassList" => k8s_pb::api::networking::v1::IngressClassList;
    "networking.k8s.io/v1", "IngressList" => k8s_pb::api::networking::v1::IngressList;
    "networking.k8s.io/v1", "NetworkPolicy" => k8s_pb::api::networking::v1::NetworkPolicy;
    "networking.k8s.io/v1", "NetworkPolicyList" => k8s_pb::api::networking::v1::NetworkPolicyList;
    "networking.k8s.io/v1", "ServiceCIDR" => k8s_pb::api::networking::v1::ServiceCIDR;
    "networking.k8s.io/v1", "ServiceCIDRList" => k8s_pb::api::networking::v1::ServiceCIDRList;
    "networking.k8s.io/v1beta1", "IPAddress" => k8s_pb::api::networking::v1beta1::IPAddress;
    "networking.k8s.io/v1beta1", "IPAddressList" => k8s_pb::api::networking::v1beta1::IPAddressList;
    "networking.k8s.io/v1beta1", "ServiceCIDR" => k8s_pb::api::networking::v1beta1::ServiceCIDR;
    "networking.k8s.io/v1beta1", "ServiceCIDRList" => k8s_pb::api::networking::v1beta1::ServiceCIDRList;
    "node.k8s.io/v1", "RuntimeClass" => k8s_pb::api::node::v1::RuntimeClass;
    "node.k8s.io/v1", "RuntimeClassList" => k8s_pb::api::node::v1::RuntimeClassList;
    "policy/v1", "Eviction" => k8s_pb::api::policy::v1::Eviction;
    "policy/v1", "PodDisruptionBudget" => k8s_pb::api::policy::v1::PodDisruptionBudget;
    "policy/v1", "PodDisruptionBudgetList" => k8s_pb::api::policy::v1::PodDisruptionBudgetList;
    "rbac.authorization.k8s.io/v1", "ClusterRole" => k8s_pb::api::rbac::v1::ClusterRole;
    "rbac.authorization.k8s.io/v1", "ClusterRoleBinding" => k8s_pb::api::rbac::v1::ClusterRoleBinding;
    "rbac.authorization.k8s.io/v1", "ClusterRoleBindingList" => k8s_pb::api::rbac::v1::ClusterRoleBindingList;
    "rbac.authorization.k8s.io/v1", "ClusterRoleList" => k8s_pb::api::rbac::v1::ClusterRoleList;
    "rbac.authorization.k8s.io/v1", "Role" => k8s_pb::api::rbac::v1::Role;
    "rbac.authorization.k8s.io/v1", "RoleBinding" => k8s_pb::api::rbac::v1::RoleBinding;
    "rbac.authorization.k8s.io/v1", "RoleBindingList" => k8s_pb::api::rbac::v1::RoleBindingList;
    "rbac.authorization.k8s.io/v1", "RoleList" => k8s_pb::api::rbac::v1::RoleList;
    "resource.k8s.io/v1", "DeviceClass" => k8s_pb::api::resource::v1::DeviceClass;
    "resource.k8s.io/v1", "DeviceClassList" => k8s_pb::api::resource::v1::DeviceClassList;
    "resource.k8s.io/v1", "ResourceClaim" => k8s_pb::api::resource::v1::ResourceClaim;
    "resource.k8s.io/v1", "ResourceClaimList" => k8s_pb::api::resource::v1::ResourceClaimList;
    "resource.k8s.io/v1", "ResourceClaimTemplate" => k8s_pb::api::resource::v1::ResourceClaimTemplate;
    "resource.k8s.io/v1", "ResourceClaimTemplateList" => k8s_pb::api::resource::v1::ResourceClaimTemplateList;
    "resource.k8s.io/v1", "ResourceSlice" => k8s_pb::api::resource::v1::ResourceSlice;
    "resource.k8s.io/v1", "ResourceSliceList" => k8s_pb::api::resource::v1::ResourceSliceList;
    "resource.k8s.io/v1alpha3", "DeviceTaintRule" => k8s_pb::api::resource::v1alpha3::DeviceTaintRule;
    "resource.k8s.io/v1alpha3", "DeviceTaintRuleList" => k8s_pb::api::resource::v1alpha3::DeviceTaintRuleList;
    "resource.k8s.io/v1beta1", "DeviceClass" => k8s_pb::api::resource::v1beta1::DeviceClass;
    "resource.k8s.io/v1beta1", "DeviceClassList" => k8s_pb::api::resource::v1beta1::DeviceClassList;
    "resource.k8s.io/v1beta1", "ResourceClaim" => k8s_pb::api::resource::v1beta1::ResourceClaim;
    "resource.k8s.io/v1beta1", "ResourceClaimList" => k8s_pb::api::resource::v1beta1::ResourceClaimList;
    "resource.k8s.io/v1beta1", "ResourceClaimTemplate" => k8s_pb::api::resource::v1beta1::ResourceClaimTemplate;
    "resource.k8s.io/v1beta1", "ResourceClaimTemplateList" => k8s_pb::api::resource::v1beta1::ResourceClaimTemplateList;
    "resource.k8s.io/v1beta1", "ResourceSlice" => k8s_pb::api::resource::v1beta1::ResourceSlice;
    "resource.k8s.io/v1beta1", "ResourceSliceList" => k8s_pb::api::resource::v1beta1::ResourceSliceList;
    "resource.k8s.io/v1beta2", "DeviceClass" => k8s_pb::api::resource::v1beta2::DeviceClass;
    "resource.k8s.io/v1beta2", "DeviceClassList" => k8s_pb::api::resource::v1beta2::DeviceClassList;
    "resource.k8s.io/v1beta2", "ResourceClaim" => k8s_pb::api::resource::v1beta2::ResourceClaim;
    "resource.k8s.io/v1beta2", "ResourceClaimList" => k8s_pb::api::resource::v1beta2::ResourceClaimList;
    "resource.k8s.io/v1beta2", "ResourceClaimTemplate" => k8s_pb::api::resource::v1beta2::ResourceClaimTemplate;
    "resource.k8s.io/v1beta2", "ResourceClaimTemplateList" => k8s_pb::api::resource::v1beta2::ResourceClaimTemplateList;
    "resource.k8s.io/v1beta2", "ResourceSlice" => k8s_pb::api::resource::v1beta2::ResourceSlice;
    "resource.k8s.io/v1beta2", "ResourceSliceList" => k8s_pb::api::resource::v1beta2::ResourceSliceList;
    "scheduling.k8s.io/v1", "PriorityClass" => k8s_pb::api::scheduling::v1::PriorityClass;
    "scheduling.k8s.io/v1", "PriorityClassList" => k8s_pb::api::scheduling::v1::PriorityClassList;
    "scheduling.k8s.io/v1alpha1", "Workload" => k8s_pb::api::scheduling::v1alpha1::Workload;
    "scheduling.k8s.io/v1alpha1", "WorkloadList" => k8s_pb::api::scheduling::v1alpha1::WorkloadList;
    "storage.k8s.io/v1", "CSIDriver" => k8s_pb::api::storage::v1::CSIDriver;
    "storage.k8s.io/v1", "CSIDriverList" => k8s_pb::api::storage::v1::CSIDriverList;
    "storage.k8s.io/v1", "CSINode" => k8s_pb::api::storage::v1::CSINode;
    "storage.k8s.io/v1", "CSINodeList" => k8s_pb::api::storage::v1::CSINodeList;
    "storage.k8s.io/v1", "CSIStorageCapacity" => k8s_pb::api::storage::v1::CSIStorageCapacity;
    "storage.k8s.io/v1", "CSIStorageCapacityList" => k8s_pb::api::storage::v1::CSIStorageCapacityList;
    "storage.k8s.io/v1", "StorageClass" => k8s_pb::api::storage::v1::StorageClass;
    "storage.k8s.io/v1", "StorageClassList" => k8s_pb::api::storage::v1::StorageClassList;
    "storage.k8s.io/v1", "VolumeAttachment" => k8s_pb::api::storage::v1::VolumeAttachment;
    "storage.k8s.io/v1", "VolumeAttachmentList" => k8s_pb::api::storage::v1::VolumeAttachmentList;
    "storage.k8s.io/v1", "VolumeAttributesClass" => k8s_pb::api::storage::v1::VolumeAttributesClass;
    "storage.k8s.io/v1", "VolumeAttributesClassList" => k8s_pb::api::storage::v1::VolumeAttributesClassList;
    "storage.k8s.io/v1alpha1", "VolumeAttributesClass" => k8s_pb::api::storage::v1alpha1::VolumeAttributesClass;
    "storage.k8s.io/v1alpha1", "VolumeAttributesClassList" => k8s_pb::api::storage::v1alpha1::VolumeAttributesClassList;
    "storage.k8s.io/v1beta1", "VolumeAttributesClass" => k8s_pb::api::storage::v1beta1::VolumeAttributesClass;
    "storage.k8s.io/v1beta1", "VolumeAttributesClassList" => k8s_pb::api::storage::v1beta1::VolumeAttributesClassList;
    "storagemigration.k8s.io/v1beta1", "StorageVersionMigration" => k8s_pb::api::storagemigration::v1beta1::StorageVersionMigration;
    "storagemigration.k8s.io/v1beta1", "StorageVersionMigrationList" => k8s_pb::api::storagemigration::v1beta1::StorageVersionMigrationList;
    "v1", "APIGroup" => k8s_pb::apimachinery::pkg::apis::meta::v1::APIGroup;
    "v1", "APIGroupList" => k8s_pb::apimachinery::pkg::apis::meta::v1::APIGroupList;
    "v1", "APIResourceList" => k8s_pb::apimachinery::pkg::apis::meta::v1::APIResourceList;
    "v1", "APIVersions" => k8s_pb::apimachinery::pkg::apis::meta::v1::APIVersions;
    "v1", "Binding" => k8s_pb::api::core::v1::Binding;
    "v1", "ComponentStatus" => k8s_pb::api::core::v1::ComponentStatus;
    "v1", "ComponentStatusList" => k8s_pb::api::core::v1::ComponentStatusList;
    "v1", "ConfigMap" => k8s_pb::api::core::v1::ConfigMap;
    "v1", "ConfigMapList" => k8s_pb::api::core::v1::ConfigMapList;
    "v1", "Endpoints" => k8s_pb::api::core::v1::Endpoints;
    "v1", "EndpointsList" => k8s_pb::api::core::v1::EndpointsList;
    "v1", "Event" => k8s_pb::api::core::v1::Event;
    "v1", "EventList" => k8s_pb::api::core::v1::EventList;
    "v1", "LimitRange" => k8s_pb::api::core::v1::LimitRange;
    "v1", "LimitRangeList" => k8s_pb::api::core::v1::LimitRangeList;
    "v1", "Namespace" => k8s_pb::api::core::v1::Namespace;
    "v1", "NamespaceList" => k8s_pb::api::core::v1::NamespaceList;
    "v1", "Node" => k8s_pb::api::core::v1::Node;
    "v1", "NodeList" => k8s_pb::api::core::v1::NodeList;
    "v1", "PersistentVolume" => k8s_pb::api::core::v1::PersistentVolume;
    "v1", "PersistentVolumeClaim" => k8s_pb::api::core::v1::PersistentVolumeClaim;
    "v1", "PersistentVolumeClaimList" => k8s_pb::api::core::v1::PersistentVolumeClaimList;
    "v1", "PersistentVolumeList" => k8s_pb::api::core::v1::PersistentVolumeList;
    "v1", "Pod" => k8s_pb::api::core::v1::Pod;
    "v1", "PodList" => k8s_pb::api::core::v1::PodList;
    "v1", "PodTemplate" => k8s_pb::api::core::v1::PodTemplate;
    "v1", "PodTemplateList" => k8s_pb::api::core::v1::PodTemplateList;
    "v1", "ReplicationController" => k8s_pb::api::core::v1::ReplicationController;
    "v1", "ReplicationControllerList" => k8s_pb::api::core::v1::ReplicationControllerList;
    "v1", "ResourceQuota" => k8s_pb::api::core::v1::ResourceQuota;
    "v1", "ResourceQuotaList" => k8s_pb::api::core::v1::ResourceQuotaList;
    "v1", "Secret" => k8s_pb::api::core::v1::Secret;
    "v1", "SecretList" => k8s_pb::api::core::v1::SecretList;
    "v1", "Service" => k8s_pb::api::core::v1::Service;
    "v1", "ServiceAccount" => k8s_pb::api::core::v1::ServiceAccount;
    "v1", "ServiceAccountList" => k8s_pb::api::core::v1::ServiceAccountList;
    "v1", "ServiceList" => k8s_pb::api::core::v1::ServiceList;
    "v1", "Status" => k8s_pb::apimachinery::pkg::apis::meta::v1::Status;
    "meta.k8s.io/v1", "PartialObjectMetadata" => k8s_pb::apimachinery::pkg::apis::meta::v1::PartialObjectMetadata;
    "meta.k8s.io/v1", "PartialObjectMetadataList" => k8s_pb::apimachinery::pkg::apis::meta::v1::PartialObjectMetadataList;
}

fn sample(api_version: &str, kind: &str) -> Value {
    ferrokube::protobuf::sample::sample_object(api_version, kind)
        .unwrap_or_else(|| panic!("no sample for {api_version} {kind}"))
}

/// The first path where two JSON trees differ, for a readable failure.
fn first_difference(path: &str, a: &Value, b: &Value) -> Option<String> {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for key in x.keys().chain(y.keys()) {
                let (l, r) = (
                    x.get(key).unwrap_or(&Value::Null),
                    y.get(key).unwrap_or(&Value::Null),
                );
                if let Some(found) = first_difference(&format!("{path}.{key}"), l, r) {
                    return Some(found);
                }
            }
            None
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (l, r))| first_difference(&format!("{path}[{i}]"), l, r)),
        _ if a == b => None,
        _ => Some(format!("{path}: {a} != {b}")),
    }
}

#[test]
fn every_kind_round_trips_through_prost() {
    let mut failures = Vec::new();
    for (api_version, kind, prost_round_trip) in PROST_KINDS {
        let object = sample(api_version, kind);
        let ours = encode_envelope(&object).unwrap();
        let envelope = parse_envelope(&ours).unwrap();
        assert_eq!(
            (envelope.api_version.as_str(), envelope.kind.as_str()),
            (*api_version, *kind)
        );
        let theirs = match prost_round_trip(envelope.raw) {
            Ok(bytes) => bytes,
            Err(error) => {
                failures.push(format!(
                    "{api_version} {kind}: prost cannot decode ours: {error}"
                ));
                continue;
            }
        };
        let back = decode_object(&write_envelope(api_version, kind, &theirs), message_for).unwrap();
        if let Some(difference) = first_difference("", &object, &back) {
            failures.push(format!("{api_version} {kind}: {difference}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} kinds differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn samples_set_every_field() {
    let pod = sample("v1", "Pod");
    let text = pod.to_string();
    for needle in [
        "\"ephemeralContainers\"",
        "\"resourceClaims\"",
        "\"managedFields\"",
        "\"podIPs\"",
    ] {
        assert!(text.contains(needle), "pod sample lacks {needle}");
    }
    assert!(
        text.len() > 15_000,
        "pod sample is only {} bytes",
        text.len()
    );
}

#[test]
fn every_kind_round_trips_through_our_protobuf_and_cbor() {
    let kinds = ferrokube::protobuf::sample::kinds();
    assert!(kinds.len() > 150, "{} kinds", kinds.len());
    for (api_version, kind) in kinds {
        let object = sample(&api_version, &kind);
        let protobuf = encode_envelope(&object).unwrap();
        let back = decode_object(&protobuf, message_for).unwrap();
        assert_eq!(
            first_difference("", &object, &back),
            None,
            "protobuf {api_version} {kind}"
        );
        let cbor = ferrokube::cbor::encode(&object);
        assert!(cbor.starts_with(&ferrokube::cbor::SELF_DESCRIBED));
        assert_eq!(
            ferrokube::cbor::decode(&cbor).unwrap(),
            object,
            "cbor {api_version} {kind}"
        );
        let yaml = ferrokube::yaml::json_to_yaml(&object);
        assert_eq!(
            ferrokube::yaml::yaml_to_json(yaml.as_bytes()).unwrap(),
            object,
            "yaml {api_version} {kind}"
        );
    }
}
