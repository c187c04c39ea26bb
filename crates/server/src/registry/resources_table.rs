//! Every resource kube-apiserver 1.34 serves by default, as data.
//!
//! Scope: the GA group-versions enabled with no feature gates and no
//! `--runtime-config` changes. Alpha/beta versions (all off by default in
//! 1.34, e.g. `resource.k8s.io/v1beta2`, `storage.k8s.io/v1beta1`,
//! `admissionregistration.k8s.io/v1beta1` MutatingAdmissionPolicy,
//! `coordination.k8s.io/v1beta1` LeaseCandidate, `certificates.k8s.io/v1beta1`
//! ClusterTrustBundle) are deliberately absent.
//!
//! Layout: the legacy core group first, then the named groups in the order
//! kube-apiserver's aggregated discovery lists them (group priority order,
//! preferred version first), so `/apis` can be rendered by walking the table.
//! Within one group-version, resources are sorted by plural and each
//! resource's subresources by name, as discovery sorts them.
//!
//! Sources, all upstream kubernetes/kubernetes:
//! * plural/singular/kind/scope/verbs/shortNames/categories/subresources:
//!   `api/discovery/aggregated_v2.json` and `api/discovery/api__v1.json`
//!   (the discovery snapshots generated from a running kube-apiserver), and
//!   `pkg/registry/<group>/<resource>/storage/storage.go`;
//! * `storage`: `test/integration/etcd/data.go` (`ExpectedEtcdPath`) and the
//!   `SpecialDefaultResourcePrefixes` of the kube-apiserver storage factory;
//! * `create_on_update` / `has_generation`: each `strategy.go`
//!   (`AllowCreateOnUpdate()`, `PrepareForCreate` / `PrepareForUpdate`);
//! * `name_rule`: `pkg/apis/<group>/validation/validation.go`.
//! * `returns_deleted_object`: `ReturnDeletedObject: true` in each
//!   `storage.go` (core: namespaces, persistentvolumeclaims,
//!   persistentvolumes, pods, podtemplates, resourcequotas, serviceaccounts,
//!   services; storage.k8s.io: csidrivers, csinodes, storageclasses,
//!   volumeattachments, volumeattributesclasses; resource.k8s.io: all four),
//!   plus CRDs, whose custom `REST.Delete` answers the object. Every `false`
//!   was checked against its `storage.go` too (a custom `Delete` that only
//!   guards and then delegates to `Store.Delete`, as priorityclasses' does,
//!   answers a Status). Virtual kinds (bindings, reviews, componentstatuses)
//!   serve no DELETE; they are `false`.
//!
//! Facts the `ResourceDef` fields cannot express exactly are noted next to
//! the entry (look for "Note:").

use super::resource::{NameRule, ResourceDef, SubresourceDef};

/// Full CRUD + watch: every stored, non-virtual resource.
const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
/// Namespaces: no `deletecollection`.
const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];
/// `status`, `scale`, `approval`, `ephemeralcontainers`, `resize`.
const STATUS_VERBS: &[&str] = &["get", "patch", "update"];
/// Virtual, create-only resources and subresources (reviews, bindings, eviction, token).
const CREATE_ONLY: &[&str] = &["create"];
/// `componentstatuses`.
const GET_LIST: &[&str] = &["get", "list"];
/// Streaming connect subresources: `pods/attach`, `pods/exec`, `pods/portforward`.
const CONNECT_VERBS: &[&str] = &["create", "get"];
/// Proxy subresources: `pods/proxy`, `services/proxy`, `nodes/proxy`.
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

/// A subresource entry.
const fn sub(
    name: &'static str,
    group: &'static str,
    version: &'static str,
    kind: &'static str,
    verbs: &'static [&'static str],
) -> SubresourceDef {
    SubresourceDef {
        name,
        group,
        version,
        kind,
        verbs,
    }
}

/// `<resource>/status`, answering the parent kind in the parent's group-version.
const fn status(group: &'static str, version: &'static str, kind: &'static str) -> SubresourceDef {
    sub("status", group, version, kind, STATUS_VERBS)
}

/// `<resource>/scale`, always answering `autoscaling/v1` `Scale`.
const fn scale() -> SubresourceDef {
    sub("scale", "autoscaling", "v1", "Scale", STATUS_VERBS)
}

pub static RESOURCES: &[ResourceDef] = &[
    // ------------------------------------------------------------------
    // core v1 (/api/v1)
    // ------------------------------------------------------------------
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Binding",
        plural: "bindings",
        singular: "binding",
        namespaced: true,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        // Virtual: binds the pod of the same name; nothing is stored under this key.
        storage: "",
        // The name is the target pod's name.
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "ComponentStatus",
        plural: "componentstatuses",
        singular: "componentstatus",
        namespaced: false,
        verbs: GET_LIST,
        short_names: &["cs"],
        categories: &[],
        subresources: &[],
        // Computed on read by probing components; not stored.
        storage: "",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "ConfigMap",
        plural: "configmaps",
        singular: "configmap",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["cm"],
        categories: &[],
        subresources: &[],
        storage: "configmaps",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Endpoints",
        plural: "endpoints",
        singular: "endpoints",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["ep"],
        categories: &[],
        subresources: &[],
        storage: "services/endpoints",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["ev"],
        categories: &[],
        subresources: &[],
        // Shared with events.k8s.io/v1 events.
        storage: "events",
        // Note: upstream skips metadata.name validation entirely for core/v1
        // events (legacyValidateEvent only); the key function still requires
        // a valid path segment. events.k8s.io/v1 enforces DNS subdomain.
        name_rule: NameRule::PathSegment,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "LimitRange",
        plural: "limitranges",
        singular: "limitrange",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["limits"],
        categories: &[],
        subresources: &[],
        storage: "limitranges",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Namespace",
        plural: "namespaces",
        singular: "namespace",
        namespaced: false,
        verbs: NAMESPACE_VERBS,
        short_names: &["ns"],
        categories: &[],
        subresources: &[
            sub("finalize", "", "v1", "Namespace", &["update"]),
            status("", "v1", "Namespace"),
        ],
        storage: "namespaces",
        name_rule: NameRule::Dns1123Label,
        create_on_update: false,
        has_generation: false,
        // `ReturnDeletedObject: true`, and the custom `REST.Delete` answers the
        // namespace itself (phase Terminating) on the first DELETE.
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Node",
        plural: "nodes",
        singular: "node",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["no"],
        categories: &[],
        subresources: &[
            sub("proxy", "", "v1", "NodeProxyOptions", PROXY_VERBS),
            status("", "v1", "Node"),
        ],
        storage: "minions",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "PersistentVolumeClaim",
        plural: "persistentvolumeclaims",
        singular: "persistentvolumeclaim",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["pvc"],
        categories: &[],
        subresources: &[status("", "v1", "PersistentVolumeClaim")],
        storage: "persistentvolumeclaims",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "PersistentVolume",
        plural: "persistentvolumes",
        singular: "persistentvolume",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["pv"],
        categories: &[],
        subresources: &[status("", "v1", "PersistentVolume")],
        storage: "persistentvolumes",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Pod",
        plural: "pods",
        singular: "pod",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["po"],
        categories: &["all"],
        subresources: &[
            sub("attach", "", "v1", "PodAttachOptions", CONNECT_VERBS),
            sub("binding", "", "v1", "Binding", CREATE_ONLY),
            sub("ephemeralcontainers", "", "v1", "Pod", STATUS_VERBS),
            sub("eviction", "policy", "v1", "Eviction", CREATE_ONLY),
            sub("exec", "", "v1", "PodExecOptions", CONNECT_VERBS),
            sub("log", "", "v1", "Pod", &["get"]),
            sub(
                "portforward",
                "",
                "v1",
                "PodPortForwardOptions",
                CONNECT_VERBS,
            ),
            sub("proxy", "", "v1", "PodProxyOptions", PROXY_VERBS),
            // InPlacePodVerticalScaling: beta, on by default in 1.33 and 1.34.
            sub("resize", "", "v1", "Pod", STATUS_VERBS),
            status("", "v1", "Pod"),
        ],
        storage: "pods",
        // Upstream also warns (not rejects) when the name is not a DNS label.
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Since 1.33 (kubernetes#130181) pods always get generation 1 on
        // create and a bump on spec changes (also via ephemeralcontainers/resize).
        has_generation: true,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "PodTemplate",
        plural: "podtemplates",
        singular: "podtemplate",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "podtemplates",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Generation = 1 on create, bumped when `template` changes.
        has_generation: true,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "ReplicationController",
        plural: "replicationcontrollers",
        singular: "replicationcontroller",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["rc"],
        categories: &["all"],
        subresources: &[scale(), status("", "v1", "ReplicationController")],
        storage: "controllers",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "ResourceQuota",
        plural: "resourcequotas",
        singular: "resourcequota",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["quota"],
        categories: &[],
        subresources: &[status("", "v1", "ResourceQuota")],
        storage: "resourcequotas",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Secret",
        plural: "secrets",
        singular: "secret",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "secrets",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "ServiceAccount",
        plural: "serviceaccounts",
        singular: "serviceaccount",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["sa"],
        categories: &[],
        subresources: &[sub(
            "token",
            "authentication.k8s.io",
            "v1",
            "TokenRequest",
            CREATE_ONLY,
        )],
        storage: "serviceaccounts",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "",
        version: "v1",
        kind: "Service",
        plural: "services",
        singular: "service",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["svc"],
        categories: &["all"],
        subresources: &[
            sub("proxy", "", "v1", "ServiceProxyOptions", PROXY_VERBS),
            status("", "v1", "Service"),
        ],
        storage: "services/specs",
        name_rule: NameRule::Dns1035Label,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: true,
    },
    // ------------------------------------------------------------------
    // apiregistration.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "apiregistration.k8s.io",
        version: "v1",
        kind: "APIService",
        plural: "apiservices",
        singular: "apiservice",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        subresources: &[status("apiregistration.k8s.io", "v1", "APIService")],
        storage: "apiregistration.k8s.io/apiservices",
        // Note: upstream requires a valid path segment AND exactly
        // `<spec.version>.<spec.group>`.
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // apps/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "apps",
        version: "v1",
        kind: "ControllerRevision",
        plural: "controllerrevisions",
        singular: "controllerrevision",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "controllerrevisions",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "apps",
        version: "v1",
        kind: "DaemonSet",
        plural: "daemonsets",
        singular: "daemonset",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["ds"],
        categories: &["all"],
        subresources: &[status("apps", "v1", "DaemonSet")],
        storage: "daemonsets",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "apps",
        version: "v1",
        kind: "Deployment",
        plural: "deployments",
        singular: "deployment",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["deploy"],
        categories: &["all"],
        subresources: &[scale(), status("apps", "v1", "Deployment")],
        storage: "deployments",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "apps",
        version: "v1",
        kind: "ReplicaSet",
        plural: "replicasets",
        singular: "replicaset",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["rs"],
        categories: &["all"],
        subresources: &[scale(), status("apps", "v1", "ReplicaSet")],
        storage: "replicasets",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "apps",
        version: "v1",
        kind: "StatefulSet",
        plural: "statefulsets",
        singular: "statefulset",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["sts"],
        categories: &["all"],
        subresources: &[scale(), status("apps", "v1", "StatefulSet")],
        storage: "statefulsets",
        // ValidateStatefulSetName = NameIsDNSLabel on create (older releases
        // accepted DNS subdomains, so names are not re-validated on update).
        name_rule: NameRule::Dns1123Label,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // events.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "events.k8s.io",
        version: "v1",
        kind: "Event",
        plural: "events",
        singular: "event",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["ev"],
        categories: &[],
        subresources: &[],
        // Same storage (and strategy) as core/v1 events.
        storage: "events",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // authentication.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "authentication.k8s.io",
        version: "v1",
        kind: "SelfSubjectReview",
        plural: "selfsubjectreviews",
        singular: "selfsubjectreview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        // Virtual: the request name is ignored.
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "authentication.k8s.io",
        version: "v1",
        kind: "TokenReview",
        plural: "tokenreviews",
        singular: "tokenreview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // authorization.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "LocalSubjectAccessReview",
        plural: "localsubjectaccessreviews",
        singular: "localsubjectaccessreview",
        namespaced: true,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SelfSubjectAccessReview",
        plural: "selfsubjectaccessreviews",
        singular: "selfsubjectaccessreview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SelfSubjectRulesReview",
        plural: "selfsubjectrulesreviews",
        singular: "selfsubjectrulesreview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "authorization.k8s.io",
        version: "v1",
        kind: "SubjectAccessReview",
        plural: "subjectaccessreviews",
        singular: "subjectaccessreview",
        namespaced: false,
        verbs: CREATE_ONLY,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "",
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // autoscaling/v2 (preferred) and autoscaling/v1: one storage, two versions
    // ------------------------------------------------------------------
    ResourceDef {
        group: "autoscaling",
        version: "v2",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        singular: "horizontalpodautoscaler",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["hpa"],
        categories: &["all"],
        subresources: &[status("autoscaling", "v2", "HorizontalPodAutoscaler")],
        storage: "horizontalpodautoscalers",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // The HPA strategy never sets or bumps metadata.generation.
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "autoscaling",
        version: "v1",
        kind: "HorizontalPodAutoscaler",
        plural: "horizontalpodautoscalers",
        singular: "horizontalpodautoscaler",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["hpa"],
        categories: &["all"],
        subresources: &[status("autoscaling", "v1", "HorizontalPodAutoscaler")],
        storage: "horizontalpodautoscalers",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // batch/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "batch",
        version: "v1",
        kind: "CronJob",
        plural: "cronjobs",
        singular: "cronjob",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["cj"],
        categories: &["all"],
        subresources: &[status("batch", "v1", "CronJob")],
        storage: "cronjobs",
        // Note: upstream additionally caps CronJob names at 52 characters
        // (63 minus the 11-character job-name suffix).
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "batch",
        version: "v1",
        kind: "Job",
        plural: "jobs",
        singular: "job",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["all"],
        subresources: &[status("batch", "v1", "Job")],
        storage: "jobs",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // certificates.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "certificates.k8s.io",
        version: "v1",
        kind: "CertificateSigningRequest",
        plural: "certificatesigningrequests",
        singular: "certificatesigningrequest",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["csr"],
        categories: &[],
        subresources: &[
            sub(
                "approval",
                "certificates.k8s.io",
                "v1",
                "CertificateSigningRequest",
                STATUS_VERBS,
            ),
            status("certificates.k8s.io", "v1", "CertificateSigningRequest"),
        ],
        storage: "certificatesigningrequests",
        // ValidateCertificateRequestName accepts anything ("We don't care what
        // you call your certificate requests"); only the key function's
        // path-segment check applies.
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // networking.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "networking.k8s.io",
        version: "v1",
        kind: "IngressClass",
        plural: "ingressclasses",
        singular: "ingressclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "ingressclasses",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "networking.k8s.io",
        version: "v1",
        kind: "Ingress",
        plural: "ingresses",
        singular: "ingress",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["ing"],
        categories: &[],
        subresources: &[status("networking.k8s.io", "v1", "Ingress")],
        storage: "ingress",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "networking.k8s.io",
        version: "v1",
        kind: "IPAddress",
        plural: "ipaddresses",
        singular: "ipaddress",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["ip"],
        categories: &[],
        subresources: &[],
        storage: "ipaddresses",
        // Note: upstream ValidateIPAddressName requires the name to be an IP
        // address in canonical form (IPv6 names contain ':'). `NameRule` has
        // no such variant; PathSegment is the closest rule that accepts every
        // valid name (it is looser than upstream).
        name_rule: NameRule::PathSegment,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "networking.k8s.io",
        version: "v1",
        kind: "NetworkPolicy",
        plural: "networkpolicies",
        singular: "networkpolicy",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["netpol"],
        categories: &[],
        subresources: &[],
        storage: "networkpolicies",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "networking.k8s.io",
        version: "v1",
        kind: "ServiceCIDR",
        plural: "servicecidrs",
        singular: "servicecidr",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[status("networking.k8s.io", "v1", "ServiceCIDR")],
        storage: "servicecidrs",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // policy/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "policy",
        version: "v1",
        kind: "PodDisruptionBudget",
        plural: "poddisruptionbudgets",
        singular: "poddisruptionbudget",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &["pdb"],
        categories: &[],
        subresources: &[status("policy", "v1", "PodDisruptionBudget")],
        storage: "poddisruptionbudgets",
        name_rule: NameRule::Dns1123Subdomain,
        // The upstream doc comment says "true", the function returns false.
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // rbac.authorization.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRoleBinding",
        plural: "clusterrolebindings",
        singular: "clusterrolebinding",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "clusterrolebindings",
        name_rule: NameRule::PathSegment,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "ClusterRole",
        plural: "clusterroles",
        singular: "clusterrole",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "clusterroles",
        name_rule: NameRule::PathSegment,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "RoleBinding",
        plural: "rolebindings",
        singular: "rolebinding",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "rolebindings",
        name_rule: NameRule::PathSegment,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "rbac.authorization.k8s.io",
        version: "v1",
        kind: "Role",
        plural: "roles",
        singular: "role",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "roles",
        name_rule: NameRule::PathSegment,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // storage.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSIDriver",
        plural: "csidrivers",
        singular: "csidriver",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "csidrivers",
        // Note: upstream also caps CSIDriver names at 63 characters.
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Note: upstream does NOT set generation on create (it stays 0) but
        // does bump it when the spec changes. A bool cannot say that; false
        // matches the (much more common) create path.
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSINode",
        plural: "csinodes",
        singular: "csinode",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "csinodes",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "CSIStorageCapacity",
        plural: "csistoragecapacities",
        singular: "csistoragecapacity",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "csistoragecapacities",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "StorageClass",
        plural: "storageclasses",
        singular: "storageclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["sc"],
        categories: &[],
        subresources: &[],
        storage: "storageclasses",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "VolumeAttachment",
        plural: "volumeattachments",
        singular: "volumeattachment",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[status("storage.k8s.io", "v1", "VolumeAttachment")],
        storage: "volumeattachments",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "storage.k8s.io",
        version: "v1",
        kind: "VolumeAttributesClass",
        plural: "volumeattributesclasses",
        singular: "volumeattributesclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["vac"],
        categories: &[],
        subresources: &[],
        storage: "volumeattributesclasses",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    // ------------------------------------------------------------------
    // admissionregistration.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "MutatingWebhookConfiguration",
        plural: "mutatingwebhookconfigurations",
        singular: "mutatingwebhookconfiguration",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        subresources: &[],
        storage: "mutatingwebhookconfigurations",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Generation = 1 on create, bumped when `webhooks` changes.
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "ValidatingAdmissionPolicy",
        plural: "validatingadmissionpolicies",
        singular: "validatingadmissionpolicy",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        subresources: &[status(
            "admissionregistration.k8s.io",
            "v1",
            "ValidatingAdmissionPolicy",
        )],
        storage: "validatingadmissionpolicies",
        name_rule: NameRule::Dns1123Subdomain,
        // The upstream doc comment says "true", the function returns false.
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "ValidatingAdmissionPolicyBinding",
        plural: "validatingadmissionpolicybindings",
        singular: "validatingadmissionpolicybinding",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        subresources: &[],
        storage: "validatingadmissionpolicybindings",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "admissionregistration.k8s.io",
        version: "v1",
        kind: "ValidatingWebhookConfiguration",
        plural: "validatingwebhookconfigurations",
        singular: "validatingwebhookconfiguration",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &["api-extensions"],
        subresources: &[],
        storage: "validatingwebhookconfigurations",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // apiextensions.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "apiextensions.k8s.io",
        version: "v1",
        kind: "CustomResourceDefinition",
        plural: "customresourcedefinitions",
        singular: "customresourcedefinition",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["crd", "crds"],
        categories: &["api-extensions"],
        subresources: &[status(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
        )],
        storage: "apiextensions.k8s.io/customresourcedefinitions",
        // Note: upstream additionally requires the name to be exactly
        // `<spec.names.plural>.<spec.group>`.
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        // Note: the CRD store leaves `ReturnDeletedObject` false, but the custom
        // `REST.Delete` (customresourcedefinition/etcd.go) answers the CRD itself
        // (finalizer added, deletionTimestamp set) on the first DELETE, so clients
        // see the object, not a Status.
        returns_deleted_object: true,
    },
    // ------------------------------------------------------------------
    // scheduling.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "scheduling.k8s.io",
        version: "v1",
        kind: "PriorityClass",
        plural: "priorityclasses",
        singular: "priorityclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &["pc"],
        categories: &[],
        subresources: &[],
        storage: "priorityclasses",
        // Note: upstream also reserves the `system-` prefix for built-ins.
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Note: upstream sets Generation = 1 on create but never bumps it
        // (PriorityClass has no spec, and `value` is immutable).
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // coordination.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "coordination.k8s.io",
        version: "v1",
        kind: "Lease",
        plural: "leases",
        singular: "lease",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "leases",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // node.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "node.k8s.io",
        version: "v1",
        kind: "RuntimeClass",
        plural: "runtimeclasses",
        singular: "runtimeclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "runtimeclasses",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: true,
        has_generation: false,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // discovery.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "discovery.k8s.io",
        version: "v1",
        kind: "EndpointSlice",
        plural: "endpointslices",
        singular: "endpointslice",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "endpointslices",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        // Generation = 1 on create, bumped on any change outside metadata.
        has_generation: true,
        returns_deleted_object: false,
    },
    // ------------------------------------------------------------------
    // resource.k8s.io/v1 (DRA, GA and on by default in 1.34)
    // ------------------------------------------------------------------
    ResourceDef {
        group: "resource.k8s.io",
        version: "v1",
        kind: "DeviceClass",
        plural: "deviceclasses",
        singular: "deviceclass",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "deviceclasses",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "resource.k8s.io",
        version: "v1",
        kind: "ResourceClaim",
        plural: "resourceclaims",
        singular: "resourceclaim",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[status("resource.k8s.io", "v1", "ResourceClaim")],
        storage: "resourceclaims",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "resource.k8s.io",
        version: "v1",
        kind: "ResourceClaimTemplate",
        plural: "resourceclaimtemplates",
        singular: "resourceclaimtemplate",
        namespaced: true,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "resourceclaimtemplates",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: false,
        returns_deleted_object: true,
    },
    ResourceDef {
        group: "resource.k8s.io",
        version: "v1",
        kind: "ResourceSlice",
        plural: "resourceslices",
        singular: "resourceslice",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[],
        storage: "resourceslices",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: true,
    },
    // ------------------------------------------------------------------
    // flowcontrol.apiserver.k8s.io/v1
    // ------------------------------------------------------------------
    ResourceDef {
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1",
        kind: "FlowSchema",
        plural: "flowschemas",
        singular: "flowschema",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[status("flowcontrol.apiserver.k8s.io", "v1", "FlowSchema")],
        storage: "flowschemas",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
    ResourceDef {
        group: "flowcontrol.apiserver.k8s.io",
        version: "v1",
        kind: "PriorityLevelConfiguration",
        plural: "prioritylevelconfigurations",
        singular: "prioritylevelconfiguration",
        namespaced: false,
        verbs: ALL_VERBS,
        short_names: &[],
        categories: &[],
        subresources: &[status(
            "flowcontrol.apiserver.k8s.io",
            "v1",
            "PriorityLevelConfiguration",
        )],
        storage: "prioritylevelconfigurations",
        name_rule: NameRule::Dns1123Subdomain,
        create_on_update: false,
        has_generation: true,
        returns_deleted_object: false,
    },
];

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet, HashSet};

    /// Every verb kube uses in discovery, in discovery order.
    const KNOWN_VERBS: &[&str] = &[
        "create",
        "delete",
        "deletecollection",
        "get",
        "list",
        "patch",
        "update",
        "watch",
    ];

    fn find(group: &str, version: &str, plural: &str) -> &'static ResourceDef {
        RESOURCES
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
            .unwrap_or_else(|| panic!("missing {group}/{version} {plural}"))
    }

    fn gvr(r: &ResourceDef) -> String {
        format!("{}/{} {}", r.api_version(), r.kind, r.plural)
    }

    fn assert_verbs_well_formed(what: &str, verbs: &[&str]) {
        assert!(!verbs.is_empty(), "{what}: empty verb list");
        for verb in verbs {
            assert!(KNOWN_VERBS.contains(verb), "{what}: unknown verb {verb:?}");
        }
        let mut sorted = verbs.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, verbs, "{what}: verbs must be sorted and unique");
    }

    fn is_lower_dns_label(s: &str) -> bool {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    }

    #[test]
    fn total_count() {
        // 17 core + 49 in named groups; see `count_per_group_version`.
        assert_eq!(RESOURCES.len(), 66);
    }

    #[test]
    fn count_per_group_version() {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for r in RESOURCES {
            *counts.entry(r.api_version()).or_default() += 1;
        }
        let expected: BTreeMap<String, usize> = [
            ("v1", 17),
            ("admissionregistration.k8s.io/v1", 4),
            ("apiextensions.k8s.io/v1", 1),
            ("apiregistration.k8s.io/v1", 1),
            ("apps/v1", 5),
            ("authentication.k8s.io/v1", 2),
            ("authorization.k8s.io/v1", 4),
            ("autoscaling/v1", 1),
            ("autoscaling/v2", 1),
            ("batch/v1", 2),
            ("certificates.k8s.io/v1", 1),
            ("coordination.k8s.io/v1", 1),
            ("discovery.k8s.io/v1", 1),
            ("events.k8s.io/v1", 1),
            ("flowcontrol.apiserver.k8s.io/v1", 2),
            ("networking.k8s.io/v1", 5),
            ("node.k8s.io/v1", 1),
            ("policy/v1", 1),
            ("rbac.authorization.k8s.io/v1", 4),
            ("resource.k8s.io/v1", 4),
            ("scheduling.k8s.io/v1", 1),
            ("storage.k8s.io/v1", 6),
        ]
        .into_iter()
        .map(|(gv, n)| (gv.to_string(), n))
        .collect();
        assert_eq!(counts, expected);
    }

    #[test]
    fn only_ga_versions() {
        for r in RESOURCES {
            assert!(
                r.version == "v1" || r.version == "v2",
                "{}: alpha/beta versions are off by default",
                gvr(r)
            );
        }
    }

    #[test]
    fn no_duplicate_group_version_plural() {
        let mut seen = HashSet::new();
        for r in RESOURCES {
            assert!(
                seen.insert((r.group, r.version, r.plural)),
                "duplicate {}",
                gvr(r)
            );
        }
    }

    #[test]
    fn no_duplicate_kind_or_short_name_within_group_version() {
        let mut kinds = HashSet::new();
        let mut shorts = HashSet::new();
        for r in RESOURCES {
            assert!(
                kinds.insert((r.group, r.version, r.kind)),
                "duplicate kind {}",
                gvr(r)
            );
            for s in r.short_names {
                assert!(
                    shorts.insert((r.group, r.version, *s)),
                    "duplicate short name {s} in {}",
                    r.api_version()
                );
            }
        }
    }

    #[test]
    fn group_versions_are_contiguous_and_plurals_sorted_within() {
        let mut finished: HashSet<(&str, &str)> = HashSet::new();
        let mut current: Option<(&str, &str)> = None;
        let mut last_plural = "";
        for r in RESOURCES {
            let gv = (r.group, r.version);
            if current != Some(gv) {
                if let Some(prev) = current {
                    finished.insert(prev);
                }
                assert!(
                    !finished.contains(&gv),
                    "{} is split in two blocks",
                    r.api_version()
                );
                current = Some(gv);
                last_plural = "";
            }
            assert!(
                r.plural > last_plural,
                "{}: plurals must be sorted within a group-version",
                gvr(r)
            );
            last_plural = r.plural;
        }
        // The legacy core group comes first.
        assert_eq!(RESOURCES[0].group, "");
    }

    #[test]
    fn names_are_lowercase() {
        for r in RESOURCES {
            assert!(is_lower_dns_label(r.plural), "{}: plural", gvr(r));
            assert!(is_lower_dns_label(r.singular), "{}: singular", gvr(r));
            for s in r.short_names {
                assert!(is_lower_dns_label(s), "{}: short name {s:?}", gvr(r));
            }
            for c in r.categories {
                assert!(is_lower_dns_label(c), "{}: category {c:?}", gvr(r));
            }
            for sub in r.subresources {
                assert!(
                    is_lower_dns_label(sub.name),
                    "{}: subresource {:?}",
                    gvr(r),
                    sub.name
                );
            }
        }
    }

    #[test]
    fn singular_is_lowercased_kind() {
        for r in RESOURCES {
            assert_eq!(r.singular, r.kind.to_ascii_lowercase(), "{}", gvr(r));
        }
    }

    #[test]
    fn kinds_are_upper_camel_case() {
        for r in RESOURCES {
            let first = r.kind.chars().next().unwrap();
            assert!(first.is_ascii_uppercase(), "{}", gvr(r));
            assert!(
                r.kind.chars().all(|c| c.is_ascii_alphanumeric()),
                "{}",
                gvr(r)
            );
            for sub in r.subresources {
                assert!(
                    sub.kind.starts_with(|c: char| c.is_ascii_uppercase()),
                    "{}",
                    gvr(r)
                );
            }
        }
    }

    #[test]
    fn every_verb_list_is_sorted_and_known() {
        for r in RESOURCES {
            assert_verbs_well_formed(&gvr(r), r.verbs);
            for sub in r.subresources {
                assert_verbs_well_formed(&format!("{}/{}", gvr(r), sub.name), sub.verbs);
            }
        }
    }

    #[test]
    fn subresources_sorted_and_unique() {
        for r in RESOURCES {
            let names: Vec<&str> = r.subresources.iter().map(|s| s.name).collect();
            let mut sorted = names.clone();
            sorted.sort_unstable();
            sorted.dedup();
            assert_eq!(
                names,
                sorted,
                "{}: subresources must be sorted and unique",
                gvr(r)
            );
        }
    }

    #[test]
    fn status_subresources_answer_the_parent_kind() {
        let mut with_status = 0;
        for r in RESOURCES {
            if let Some(st) = r.subresource("status") {
                with_status += 1;
                assert_eq!(st.kind, r.kind, "{}", gvr(r));
                assert_eq!(st.group, r.group, "{}", gvr(r));
                assert_eq!(st.version, r.version, "{}", gvr(r));
                assert_eq!(st.verbs, STATUS_VERBS, "{}", gvr(r));
                // A status subresource only exists on stored, watchable kinds.
                assert!(!r.storage.is_empty(), "{}", gvr(r));
                assert!(r.has_verb("watch"), "{}", gvr(r));
            }
        }
        assert_eq!(with_status, 27);
    }

    #[test]
    fn scale_subresources_answer_autoscaling_v1_scale() {
        let mut scalable = Vec::new();
        for r in RESOURCES {
            if let Some(sc) = r.subresource("scale") {
                assert_eq!(
                    (sc.group, sc.version, sc.kind),
                    ("autoscaling", "v1", "Scale")
                );
                assert_eq!(sc.verbs, STATUS_VERBS);
                scalable.push(r.plural);
            }
        }
        scalable.sort_unstable();
        assert_eq!(
            scalable,
            [
                "deployments",
                "replicasets",
                "replicationcontrollers",
                "statefulsets"
            ]
        );
    }

    #[test]
    fn storage_matches_persistence() {
        for r in RESOURCES {
            if r.storage.is_empty() {
                // Virtual resources: reviews, bindings, componentstatuses.
                assert!(!r.has_verb("watch"), "{}", gvr(r));
                assert!(!r.has_verb("update"), "{}", gvr(r));
                assert!(!r.create_on_update && !r.has_generation, "{}", gvr(r));
                assert!(r.subresources.is_empty(), "{}", gvr(r));
            } else {
                assert!(r.has_verb("watch") && r.has_verb("list"), "{}", gvr(r));
                assert!(
                    !r.storage.starts_with('/') && !r.storage.ends_with('/'),
                    "{}",
                    gvr(r)
                );
            }
        }
        let virtual_count = RESOURCES.iter().filter(|r| r.storage.is_empty()).count();
        assert_eq!(virtual_count, 8);
    }

    #[test]
    fn shared_storage_means_same_kind() {
        let mut by_key: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
        for r in RESOURCES.iter().filter(|r| !r.storage.is_empty()) {
            by_key
                .entry(r.storage)
                .or_default()
                .insert((r.kind, r.plural));
        }
        for (key, kinds) in &by_key {
            assert_eq!(
                kinds.len(),
                1,
                "storage key {key} shared by different kinds: {kinds:?}"
            );
        }
        // Exactly two keys are served by more than one group-version.
        let shared: Vec<&str> = by_key
            .keys()
            .copied()
            .filter(|k| RESOURCES.iter().filter(|r| r.storage == *k).count() > 1)
            .collect();
        assert_eq!(shared, ["events", "horizontalpodautoscalers"]);
    }

    #[test]
    fn create_only_virtual_resources() {
        for (group, plural) in [
            ("", "bindings"),
            ("authentication.k8s.io", "selfsubjectreviews"),
            ("authentication.k8s.io", "tokenreviews"),
            ("authorization.k8s.io", "localsubjectaccessreviews"),
            ("authorization.k8s.io", "selfsubjectaccessreviews"),
            ("authorization.k8s.io", "selfsubjectrulesreviews"),
            ("authorization.k8s.io", "subjectaccessreviews"),
        ] {
            let r = find(group, "v1", plural);
            assert_eq!(r.verbs, CREATE_ONLY, "{}", gvr(r));
            assert_eq!(r.storage, "", "{}", gvr(r));
        }
        let cs = find("", "v1", "componentstatuses");
        assert_eq!(cs.verbs, ["get", "list"]);
        assert_eq!(cs.short_names, ["cs"]);
        assert!(!cs.namespaced);
        assert!(find("authorization.k8s.io", "v1", "localsubjectaccessreviews").namespaced);
    }

    #[test]
    fn create_on_update_set() {
        let mut got: Vec<String> = RESOURCES
            .iter()
            .filter(|r| r.create_on_update)
            .map(|r| format!("{}:{}", r.api_version(), r.plural))
            .collect();
        got.sort_unstable();
        assert_eq!(
            got,
            [
                "coordination.k8s.io/v1:leases",
                "events.k8s.io/v1:events",
                "node.k8s.io/v1:runtimeclasses",
                "rbac.authorization.k8s.io/v1:clusterrolebindings",
                "rbac.authorization.k8s.io/v1:clusterroles",
                "rbac.authorization.k8s.io/v1:rolebindings",
                "rbac.authorization.k8s.io/v1:roles",
                "v1:endpoints",
                "v1:events",
                "v1:limitranges",
                "v1:services",
            ]
        );
    }

    #[test]
    fn spot_check_core() {
        let pods = find("", "v1", "pods");
        assert_eq!(pods.kind, "Pod");
        assert_eq!(pods.short_names, ["po"]);
        assert_eq!(pods.categories, ["all"]);
        assert!(pods.namespaced);
        assert_eq!(pods.storage, "pods");
        let sub_names: Vec<&str> = pods.subresources.iter().map(|s| s.name).collect();
        assert_eq!(
            sub_names,
            [
                "attach",
                "binding",
                "ephemeralcontainers",
                "eviction",
                "exec",
                "log",
                "portforward",
                "proxy",
                "resize",
                "status"
            ]
        );
        assert_eq!(pods.subresource("log").unwrap().verbs, ["get"]);
        let eviction = pods.subresource("eviction").unwrap();
        assert_eq!(
            (eviction.group, eviction.version, eviction.kind),
            ("policy", "v1", "Eviction")
        );
        assert_eq!(eviction.verbs, ["create"]);
        let binding = pods.subresource("binding").unwrap();
        assert_eq!(
            (binding.group, binding.version, binding.kind),
            ("", "v1", "Binding")
        );
        assert_eq!(pods.subresource("exec").unwrap().kind, "PodExecOptions");
        assert_eq!(pods.subresource("exec").unwrap().verbs, ["create", "get"]);
        assert_eq!(pods.subresource("proxy").unwrap().verbs, PROXY_VERBS);

        let services = find("", "v1", "services");
        assert_eq!(services.storage, "services/specs");
        assert_eq!(services.short_names, ["svc"]);
        assert_eq!(services.categories, ["all"]);
        assert_eq!(services.name_rule, NameRule::Dns1035Label);
        assert!(services.create_on_update);

        assert_eq!(find("", "v1", "endpoints").storage, "services/endpoints");
        assert_eq!(find("", "v1", "endpoints").singular, "endpoints");

        let nodes = find("", "v1", "nodes");
        assert_eq!(nodes.storage, "minions");
        assert!(!nodes.namespaced);
        assert_eq!(nodes.subresource("proxy").unwrap().kind, "NodeProxyOptions");

        let ns = find("", "v1", "namespaces");
        assert!(!ns.namespaced);
        assert_eq!(ns.name_rule, NameRule::Dns1123Label);
        assert!(!ns.has_verb("deletecollection"));
        assert_eq!(ns.subresource("finalize").unwrap().verbs, ["update"]);

        let rc = find("", "v1", "replicationcontrollers");
        assert_eq!(rc.storage, "controllers");
        assert!(rc.has_generation);

        let token = find("", "v1", "serviceaccounts")
            .subresource("token")
            .unwrap();
        assert_eq!(
            (token.group, token.version, token.kind, token.verbs),
            ("authentication.k8s.io", "v1", "TokenRequest", CREATE_ONLY)
        );

        assert_eq!(find("", "v1", "configmaps").short_names, ["cm"]);
        assert_eq!(find("", "v1", "limitranges").short_names, ["limits"]);
        assert_eq!(find("", "v1", "resourcequotas").short_names, ["quota"]);
    }

    #[test]
    fn spot_check_named_groups() {
        let deploy = find("apps", "v1", "deployments");
        assert_eq!(deploy.short_names, ["deploy"]);
        assert_eq!(deploy.categories, ["all"]);
        assert!(deploy.has_generation);
        assert_eq!(deploy.list_kind(), "DeploymentList");

        assert_eq!(
            find("apps", "v1", "statefulsets").name_rule,
            NameRule::Dns1123Label
        );

        let cj = find("batch", "v1", "cronjobs");
        assert_eq!(cj.short_names, ["cj"]);
        assert_eq!(cj.categories, ["all"]);

        let crd = find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
        assert_eq!(crd.short_names, ["crd", "crds"]);
        assert_eq!(crd.categories, ["api-extensions"]);
        assert_eq!(
            crd.storage,
            "apiextensions.k8s.io/customresourcedefinitions"
        );
        assert!(!crd.namespaced);
        assert!(crd.has_generation);

        let apisvc = find("apiregistration.k8s.io", "v1", "apiservices");
        assert_eq!(apisvc.storage, "apiregistration.k8s.io/apiservices");
        assert_eq!(apisvc.categories, ["api-extensions"]);

        let ing = find("networking.k8s.io", "v1", "ingresses");
        assert_eq!(ing.storage, "ingress");
        assert_eq!(ing.short_names, ["ing"]);

        let hpa1 = find("autoscaling", "v1", "horizontalpodautoscalers");
        let hpa2 = find("autoscaling", "v2", "horizontalpodautoscalers");
        assert_eq!(hpa1.storage, hpa2.storage);
        assert_eq!(hpa2.subresource("status").unwrap().version, "v2");

        let ev = find("events.k8s.io", "v1", "events");
        assert_eq!(ev.storage, find("", "v1", "events").storage);
        assert_eq!(ev.short_names, ["ev"]);

        for plural in [
            "roles",
            "rolebindings",
            "clusterroles",
            "clusterrolebindings",
        ] {
            let r = find("rbac.authorization.k8s.io", "v1", plural);
            assert_eq!(r.name_rule, NameRule::PathSegment, "{plural}");
            assert!(r.create_on_update, "{plural}");
        }
        assert!(find("rbac.authorization.k8s.io", "v1", "roles").namespaced);
        assert!(!find("rbac.authorization.k8s.io", "v1", "clusterroles").namespaced);

        let vac = find("storage.k8s.io", "v1", "volumeattributesclasses");
        assert_eq!(vac.short_names, ["vac"]);
        assert!(!vac.namespaced);

        let csr = find("certificates.k8s.io", "v1", "certificatesigningrequests");
        assert_eq!(csr.short_names, ["csr"]);
        assert!(csr.subresource("approval").is_some());

        let claims = find("resource.k8s.io", "v1", "resourceclaims");
        assert!(claims.namespaced);
        assert!(claims.subresource("status").is_some());
        assert!(!find("resource.k8s.io", "v1", "resourceslices").namespaced);

        assert_eq!(
            find("networking.k8s.io", "v1", "ipaddresses").short_names,
            ["ip"]
        );
        assert_eq!(
            find("networking.k8s.io", "v1", "networkpolicies").short_names,
            ["netpol"]
        );
        assert_eq!(
            find("policy", "v1", "poddisruptionbudgets").short_names,
            ["pdb"]
        );
        assert_eq!(
            find("scheduling.k8s.io", "v1", "priorityclasses").short_names,
            ["pc"]
        );
        assert_eq!(
            find("storage.k8s.io", "v1", "storageclasses").short_names,
            ["sc"]
        );
    }

    /// `ReturnDeletedObject: true` upstream (plus CRDs' custom `REST.Delete`):
    /// DELETE answers the object. Everything else answers a `Status`.
    #[test]
    fn returns_deleted_object_matches_upstream_registries() {
        let mut returning: Vec<String> = RESOURCES
            .iter()
            .filter(|r| r.returns_deleted_object)
            .map(|r| format!("{}/{}", r.group, r.plural))
            .collect();
        returning.sort_unstable();
        assert_eq!(
            returning,
            [
                "/namespaces",
                "/persistentvolumeclaims",
                "/persistentvolumes",
                "/pods",
                "/podtemplates",
                "/resourcequotas",
                "/serviceaccounts",
                "/services",
                "apiextensions.k8s.io/customresourcedefinitions",
                "resource.k8s.io/deviceclasses",
                "resource.k8s.io/resourceclaims",
                "resource.k8s.io/resourceclaimtemplates",
                "resource.k8s.io/resourceslices",
                "storage.k8s.io/csidrivers",
                "storage.k8s.io/csinodes",
                "storage.k8s.io/storageclasses",
                "storage.k8s.io/volumeattachments",
                "storage.k8s.io/volumeattributesclasses",
            ]
        );

        for (group, plural) in [
            ("", "pods"),
            ("", "serviceaccounts"),
            ("storage.k8s.io", "storageclasses"),
            ("", "services"),
            ("", "namespaces"),
        ] {
            assert!(
                find(group, "v1", plural).returns_deleted_object,
                "{group}/{plural}"
            );
        }
        for (group, plural) in [
            ("", "configmaps"),
            ("", "secrets"),
            ("", "nodes"),
            ("", "events"),
            ("events.k8s.io", "events"),
            ("apps", "deployments"),
            ("batch", "jobs"),
            ("rbac.authorization.k8s.io", "roles"),
            ("scheduling.k8s.io", "priorityclasses"),
            ("storage.k8s.io", "csistoragecapacities"),
            ("networking.k8s.io", "ipaddresses"),
            ("apiregistration.k8s.io", "apiservices"),
        ] {
            assert!(
                !find(group, "v1", plural).returns_deleted_object,
                "{group}/{plural}"
            );
        }
        // Both autoscaling versions share one store.
        assert!(!find("autoscaling", "v1", "horizontalpodautoscalers").returns_deleted_object);
        assert!(!find("autoscaling", "v2", "horizontalpodautoscalers").returns_deleted_object);
        // Kinds without DELETE never claim to answer with an object.
        for r in RESOURCES.iter().filter(|r| !r.has_verb("delete")) {
            assert!(!r.returns_deleted_object, "{}", gvr(r));
        }
    }

    #[test]
    fn categories_are_all_or_api_extensions() {
        let mut all = Vec::new();
        for r in RESOURCES {
            for c in r.categories {
                match *c {
                    "all" => all.push(r.plural),
                    "api-extensions" => {
                        assert!(!r.namespaced, "{}", gvr(r));
                    }
                    other => panic!("{}: unexpected category {other}", gvr(r)),
                }
            }
        }
        all.sort_unstable();
        assert_eq!(
            all,
            [
                "cronjobs",
                "daemonsets",
                "deployments",
                "horizontalpodautoscalers",
                "horizontalpodautoscalers",
                "jobs",
                "pods",
                "replicasets",
                "replicationcontrollers",
                "services",
                "statefulsets",
            ]
        );
    }
}
