//! The scheme: which group/version/kinds kube can create.

use std::sync::OnceLock;

use serde_json::Value;

use super::{AGGREGATOR_SCHEME_NAME, APIEXTENSIONS_SCHEME_NAME, LEGACY_SCHEME_NAME};
use crate::openapi::OpenApi;

pub(super) const INTERNAL_VERSION: &str = "__internal";

/// Kinds `metav1.AddToGroupVersion` registers in every installed group version.
const META_OPTION_KINDS: &[&str] = &[
    "WatchEvent",
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
];

/// `metav1` kinds added with `AddUnversionedTypes`: `Scheme.New` finds them by
/// kind alone, in any group version.
const UNVERSIONED_KINDS: &[&str] = &[
    "Status",
    "APIVersions",
    "APIGroupList",
    "APIGroup",
    "APIResourceList",
];

/// Kinds the 1.34 legacy scheme registers (`k8s.io/api/<group>/<version>/register.go`,
/// installed by `pkg/controlplane/import_known_versions.go`) that the vendored
/// OpenAPI definitions do not carry: versions no longer served, and
/// option/subresource kinds. Kinds the definitions carry are found there.
const UNSERVED_KINDS: &[(&str, &str, &[&str])] = &[
    (
        "",
        "v1",
        &[
            "PodStatusResult",
            "ServiceProxyOptions",
            "NodeProxyOptions",
            "List",
            "PodAttachOptions",
            "PodLogOptions",
            "PodExecOptions",
            "PodPortForwardOptions",
            "PodProxyOptions",
            "SerializedReference",
            "RangeAllocation",
        ],
    ),
    ("admission.k8s.io", "v1", &["AdmissionReview"]),
    ("admission.k8s.io", "v1beta1", &["AdmissionReview"]),
    (
        "admissionregistration.k8s.io",
        "v1beta1",
        &[
            "ValidatingWebhookConfiguration",
            "ValidatingWebhookConfigurationList",
            "MutatingWebhookConfiguration",
            "MutatingWebhookConfigurationList",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
        ],
    ),
    (
        "admissionregistration.k8s.io",
        "v1alpha1",
        &[
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
        ],
    ),
    (
        "apps",
        "v1beta1",
        &[
            "Deployment",
            "DeploymentList",
            "DeploymentRollback",
            "Scale",
            "StatefulSet",
            "StatefulSetList",
            "ControllerRevision",
            "ControllerRevisionList",
        ],
    ),
    (
        "apps",
        "v1beta2",
        &[
            "Deployment",
            "DeploymentList",
            "Scale",
            "StatefulSet",
            "StatefulSetList",
            "DaemonSet",
            "DaemonSetList",
            "ReplicaSet",
            "ReplicaSetList",
            "ControllerRevision",
            "ControllerRevisionList",
        ],
    ),
    ("authentication.k8s.io", "v1alpha1", &["SelfSubjectReview"]),
    (
        "authentication.k8s.io",
        "v1beta1",
        &["TokenReview", "SelfSubjectReview"],
    ),
    (
        "authorization.k8s.io",
        "v1beta1",
        &[
            "SelfSubjectRulesReview",
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
        ],
    ),
    (
        "autoscaling",
        "v2beta1",
        &["HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"],
    ),
    (
        "autoscaling",
        "v2beta2",
        &["HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"],
    ),
    ("batch", "v1beta1", &["CronJob", "CronJobList"]),
    (
        "certificates.k8s.io",
        "v1beta1",
        &["CertificateSigningRequest", "CertificateSigningRequestList"],
    ),
    ("coordination.k8s.io", "v1beta1", &["Lease", "LeaseList"]),
    (
        "discovery.k8s.io",
        "v1beta1",
        &["EndpointSlice", "EndpointSliceList"],
    ),
    ("events.k8s.io", "v1beta1", &["Event", "EventList"]),
    (
        "extensions",
        "v1beta1",
        &[
            "Deployment",
            "DeploymentList",
            "DeploymentRollback",
            "Scale",
            "DaemonSetList",
            "DaemonSet",
            "Ingress",
            "IngressList",
            "ReplicaSet",
            "ReplicaSetList",
            "NetworkPolicy",
            "NetworkPolicyList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    ("imagepolicy.k8s.io", "v1alpha1", &["ImageReview"]),
    (
        "networking.k8s.io",
        "v1beta1",
        &["Ingress", "IngressList", "IngressClass", "IngressClassList"],
    ),
    (
        "node.k8s.io",
        "v1alpha1",
        &["RuntimeClass", "RuntimeClassList"],
    ),
    (
        "node.k8s.io",
        "v1beta1",
        &["RuntimeClass", "RuntimeClassList"],
    ),
    (
        "policy",
        "v1beta1",
        &["PodDisruptionBudget", "PodDisruptionBudgetList", "Eviction"],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1alpha1",
        &[
            "Role",
            "RoleBinding",
            "RoleList",
            "RoleBindingList",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleList",
            "ClusterRoleBindingList",
        ],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1beta1",
        &[
            "Role",
            "RoleBinding",
            "RoleList",
            "RoleBindingList",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleList",
            "ClusterRoleBindingList",
        ],
    ),
    (
        "scheduling.k8s.io",
        "v1alpha1",
        &["PriorityClass", "PriorityClassList"],
    ),
    (
        "scheduling.k8s.io",
        "v1beta1",
        &["PriorityClass", "PriorityClassList"],
    ),
    (
        "storage.k8s.io",
        "v1alpha1",
        &[
            "VolumeAttachment",
            "VolumeAttachmentList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
        ],
    ),
    (
        "storage.k8s.io",
        "v1beta1",
        &[
            "StorageClass",
            "StorageClassList",
            "VolumeAttachment",
            "VolumeAttachmentList",
            "CSIDriver",
            "CSIDriverList",
            "CSINode",
            "CSINodeList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
        ],
    ),
    ("apiextensions.k8s.io", "v1", &["ConversionReview"]),
    (
        "apiextensions.k8s.io",
        "v1beta1",
        &[
            "CustomResourceDefinition",
            "CustomResourceDefinitionList",
            "ConversionReview",
        ],
    ),
    (
        "apiregistration.k8s.io",
        "v1beta1",
        &["APIService", "APIServiceList"],
    ),
];

/// Which of kube-apiserver's three schemes decodes for an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Scheme {
    /// `legacyscheme.Scheme`: every built-in group.
    Legacy,
    /// apiextensions-apiserver's scheme (`customresourcedefinitions`).
    Apiextensions,
    /// kube-aggregator's scheme (`apiservices`).
    Aggregator,
}

impl Scheme {
    pub(super) fn for_group(group: &str) -> Self {
        match group {
            "apiextensions.k8s.io" => Scheme::Apiextensions,
            "apiregistration.k8s.io" => Scheme::Aggregator,
            _ => Scheme::Legacy,
        }
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Scheme::Legacy => LEGACY_SCHEME_NAME,
            Scheme::Apiextensions => APIEXTENSIONS_SCHEME_NAME,
            Scheme::Aggregator => AGGREGATOR_SCHEME_NAME,
        }
    }

    /// Whether a group belongs to this scheme.
    fn holds_group(self, group: &str) -> bool {
        Scheme::for_group(group) == self
    }
}

pub(super) fn openapi() -> &'static OpenApi {
    static OPENAPI: OnceLock<OpenApi> = OnceLock::new();
    OPENAPI.get_or_init(|| OpenApi::new(&[]))
}

/// Group versions with `metav1.AddToGroupVersion` called on them: those the
/// vendored `DeleteOptions` definition lists.
fn installed(group: &str, version: &str) -> bool {
    static INSTALLED: OnceLock<Vec<(String, String)>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let Ok(Some(schema)) =
                openapi().definition("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
            else {
                return Vec::new();
            };
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|gvk| {
                    Some((
                        gvk.get("group")?.as_str()?.to_string(),
                        gvk.get("version")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .iter()
        .any(|(g, v)| g == group && v == version)
}

/// What `Scheme.New(gvk)` creates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Created {
    /// A typed object of a built-in API package (`v1.Secret`, `v2.HorizontalPodAutoscaler`).
    Api,
    /// A `metav1` type (`v1.DeleteOptions`, `v1.Status`): never converts to an API object.
    Meta,
    /// An internal type (`apiVersion: __internal`).
    Internal,
}

/// `Scheme.New` for a body's group/version/kind in `scheme`; `None` when kube
/// answers `no kind ... is registered`.
pub(super) fn scheme_new(
    scheme: Scheme,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<Created> {
    if UNVERSIONED_KINDS.contains(&kind) {
        return Some(Created::Meta);
    }
    if scheme == Scheme::Apiextensions
        && group.is_empty()
        && version == "v1"
        && META_OPTION_KINDS.contains(&kind)
    {
        // apiextensions-apiserver calls AddToGroupVersion on the empty v1 too.
        return Some(Created::Meta);
    }
    if !scheme.holds_group(group) {
        return None;
    }
    if version == INTERNAL_VERSION {
        let known = UNSERVED_KINDS
            .iter()
            .any(|(g, _, kinds)| *g == group && kinds.contains(&kind))
            || served_versions_of(group, kind);
        return known.then_some(Created::Internal);
    }
    if !installed(group, version) {
        return None;
    }
    if META_OPTION_KINDS.contains(&kind) {
        return Some(Created::Meta);
    }
    let unserved = UNSERVED_KINDS
        .iter()
        .any(|(g, v, kinds)| *g == group && *v == version && kinds.contains(&kind));
    if unserved || matches!(openapi().schema_for_kind(group, version, kind), Ok(Some(_))) {
        Some(Created::Api)
    } else {
        None
    }
}

/// Whether some installed version of `group` serves `kind` (vendored definitions).
fn served_versions_of(group: &str, kind: &str) -> bool {
    [
        "v1", "v1beta1", "v1beta2", "v1beta3", "v1alpha1", "v1alpha2", "v1alpha3", "v2",
    ]
    .iter()
    .any(|version| matches!(openapi().schema_for_kind(group, version, kind), Ok(Some(_))))
}

/// Go package name of the internal type of a group's kind (`core.ConfigMap`,
/// `apps.Deployment`), which decides whether a conversion exists.
pub(super) fn internal_package(group: &str, kind: &str) -> String {
    match group {
        "" | "events.k8s.io" => "core".to_string(),
        "extensions" => match kind {
            "Deployment" | "DeploymentList" | "DeploymentRollback" | "DaemonSet"
            | "DaemonSetList" | "ReplicaSet" | "ReplicaSetList" => "apps".to_string(),
            "Ingress" | "IngressList" | "NetworkPolicy" | "NetworkPolicyList" => {
                "networking".to_string()
            }
            "Scale" => "autoscaling".to_string(),
            _ => "extensions".to_string(),
        },
        "apps" if kind == "Scale" => "autoscaling".to_string(),
        "internal.apiserver.k8s.io" => "apiserverinternal".to_string(),
        other => other.split('.').next().unwrap_or(other).to_string(),
    }
}
