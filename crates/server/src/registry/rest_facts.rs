//! What discovery does not say about a built-in resource, written by hand:
//! the etcd key segment, the name rule, create-on-update, generation and
//! what DELETE answers. Only resources that differ from the defaults are
//! listed; `builtin.rs` joins this table with the vendored discovery data.
//!
//! Sources, all upstream kubernetes/kubernetes:
//! * `storage`: `test/integration/etcd/data.go` (`ExpectedEtcdPath`) and the
//!   `SpecialDefaultResourcePrefixes` of the kube-apiserver storage factory;
//! * `create_on_update` / `has_generation`: each `strategy.go`
//!   (`AllowCreateOnUpdate()`, `PrepareForCreate` / `PrepareForUpdate`);
//! * `name_rule`: `pkg/apis/<group>/validation/validation.go`;
//! * `returns_deleted_object`: `ReturnDeletedObject: true` in each
//!   `storage.go`, plus CRDs, whose custom `REST.Delete` answers the object.
//!   A custom `Delete` that only guards and then delegates to `Store.Delete`
//!   (priorityclasses') answers a Status.
//!
//! Facts the fields cannot express exactly are noted next to the entry
//! (look for "Note:").

use super::resource::NameRule;

/// The hand-written facts of one resource, keyed by group and plural (every
/// served version of a resource shares them: autoscaling v1 and v2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RestFacts {
    pub group: &'static str,
    pub plural: &'static str,
    /// Key segment after `/registry/` when it is not the default
    /// (see [`RestFacts::storage_key`]).
    pub storage: Option<&'static str>,
    pub name_rule: NameRule,
    pub create_on_update: bool,
    pub has_generation: bool,
    pub returns_deleted_object: bool,
}

impl RestFacts {
    /// The defaults: stored under `/registry/<plural>` (nothing stored for
    /// resources that serve no `watch`: bindings, reviews,
    /// componentstatuses), names are DNS subdomains, PUT of a missing object
    /// is a 404, no `metadata.generation`, DELETE answers a `Status`.
    pub const fn of(group: &'static str, plural: &'static str) -> Self {
        RestFacts {
            group,
            plural,
            storage: None,
            name_rule: NameRule::Dns1123Subdomain,
            create_on_update: false,
            has_generation: false,
            returns_deleted_object: false,
        }
    }

    const fn storage(mut self, key: &'static str) -> Self {
        self.storage = Some(key);
        self
    }

    const fn name_rule(mut self, rule: NameRule) -> Self {
        self.name_rule = rule;
        self
    }

    const fn create_on_update(mut self) -> Self {
        self.create_on_update = true;
        self
    }

    const fn generation(mut self) -> Self {
        self.has_generation = true;
        self
    }

    const fn returns_deleted_object(mut self) -> Self {
        self.returns_deleted_object = true;
        self
    }

    /// The etcd key segment for a resource serving `verbs`.
    pub fn storage_key(&self, verbs: &[&str]) -> &'static str {
        match self.storage {
            Some(key) => key,
            None if verbs.contains(&"watch") => self.plural,
            None => "",
        }
    }
}

/// The facts of `group`/`plural`: its entry in [`EXCEPTIONS`], or the defaults.
pub fn facts(group: &'static str, plural: &'static str) -> RestFacts {
    EXCEPTIONS
        .iter()
        .find(|facts| facts.group == group && facts.plural == plural)
        .copied()
        .unwrap_or(RestFacts::of(group, plural))
}

use NameRule::{Dns1035Label, Dns1123Label, PathSegment};

const fn core(plural: &'static str) -> RestFacts {
    RestFacts::of("", plural)
}

/// Every built-in resource that differs from [`RestFacts::of`]'s defaults.
pub const EXCEPTIONS: &[RestFacts] = &[
    // core v1. bindings and componentstatuses keep the defaults: virtual,
    // nothing stored (a binding's name is the target pod's name).
    core("endpoints")
        .storage("services/endpoints")
        .create_on_update(),
    // Shared with events.k8s.io/v1 events.
    // Note: upstream skips metadata.name validation entirely for core/v1
    // events (legacyValidateEvent only); the key function still requires a
    // valid path segment. events.k8s.io/v1 enforces DNS subdomain.
    core("events").name_rule(PathSegment).create_on_update(),
    core("limitranges").create_on_update(),
    // The custom `REST.Delete` answers the namespace itself (phase
    // Terminating) on the first DELETE.
    core("namespaces")
        .name_rule(Dns1123Label)
        .returns_deleted_object(),
    core("nodes").storage("minions"),
    core("persistentvolumeclaims").returns_deleted_object(),
    core("persistentvolumes").returns_deleted_object(),
    // Upstream also warns (not rejects) when the name is not a DNS label.
    // Since 1.33 (kubernetes#130181) pods always get generation 1 on create
    // and a bump on spec changes (also via ephemeralcontainers/resize).
    core("pods").generation().returns_deleted_object(),
    // Generation = 1 on create, bumped when `template` changes.
    core("podtemplates").generation().returns_deleted_object(),
    core("replicationcontrollers")
        .storage("controllers")
        .generation(),
    core("resourcequotas").returns_deleted_object(),
    core("serviceaccounts").returns_deleted_object(),
    core("services")
        .storage("services/specs")
        .name_rule(Dns1035Label)
        .create_on_update()
        .returns_deleted_object(),
    // Note: upstream requires a valid path segment AND exactly
    // `<spec.version>.<spec.group>`.
    RestFacts::of("apiregistration.k8s.io", "apiservices")
        .storage("apiregistration.k8s.io/apiservices")
        .name_rule(PathSegment),
    RestFacts::of("apps", "daemonsets").generation(),
    RestFacts::of("apps", "deployments").generation(),
    RestFacts::of("apps", "replicasets").generation(),
    // ValidateStatefulSetName = NameIsDNSLabel on create (older releases
    // accepted DNS subdomains, so names are not re-validated on update).
    RestFacts::of("apps", "statefulsets")
        .name_rule(Dns1123Label)
        .generation(),
    // Same storage (and strategy) as core/v1 events.
    RestFacts::of("events.k8s.io", "events").create_on_update(),
    // Virtual: the request name is ignored.
    RestFacts::of("authentication.k8s.io", "selfsubjectreviews").name_rule(PathSegment),
    RestFacts::of("authentication.k8s.io", "tokenreviews").name_rule(PathSegment),
    RestFacts::of("authorization.k8s.io", "localsubjectaccessreviews").name_rule(PathSegment),
    RestFacts::of("authorization.k8s.io", "selfsubjectaccessreviews").name_rule(PathSegment),
    RestFacts::of("authorization.k8s.io", "selfsubjectrulesreviews").name_rule(PathSegment),
    RestFacts::of("authorization.k8s.io", "subjectaccessreviews").name_rule(PathSegment),
    // Note: upstream additionally caps CronJob names at 52 characters (63
    // minus the 11-character job-name suffix).
    RestFacts::of("batch", "cronjobs").generation(),
    RestFacts::of("batch", "jobs").generation(),
    // ValidateCertificateRequestName accepts anything ("We don't care what
    // you call your certificate requests"); only the key function's
    // path-segment check applies.
    RestFacts::of("certificates.k8s.io", "certificatesigningrequests").name_rule(PathSegment),
    RestFacts::of("networking.k8s.io", "ingressclasses").generation(),
    RestFacts::of("networking.k8s.io", "ingresses")
        .storage("ingress")
        .generation(),
    // Note: upstream ValidateIPAddressName requires the name to be an IP
    // address in canonical form (IPv6 names contain ':'). `NameRule` has no
    // such variant; PathSegment is the closest rule that accepts every valid
    // name (it is looser than upstream).
    RestFacts::of("networking.k8s.io", "ipaddresses").name_rule(PathSegment),
    RestFacts::of("networking.k8s.io", "networkpolicies").generation(),
    // Not create-on-update: the upstream doc comment says "true", the
    // function returns false.
    RestFacts::of("policy", "poddisruptionbudgets").generation(),
    RestFacts::of("rbac.authorization.k8s.io", "clusterrolebindings")
        .name_rule(PathSegment)
        .create_on_update(),
    RestFacts::of("rbac.authorization.k8s.io", "clusterroles")
        .name_rule(PathSegment)
        .create_on_update(),
    RestFacts::of("rbac.authorization.k8s.io", "rolebindings")
        .name_rule(PathSegment)
        .create_on_update(),
    RestFacts::of("rbac.authorization.k8s.io", "roles")
        .name_rule(PathSegment)
        .create_on_update(),
    // Note: upstream also caps CSIDriver names at 63 characters.
    // Note: upstream does NOT set generation on create (it stays 0) but does
    // bump it when the spec changes. A bool cannot say that; false matches
    // the (much more common) create path.
    RestFacts::of("storage.k8s.io", "csidrivers").returns_deleted_object(),
    RestFacts::of("storage.k8s.io", "csinodes").returns_deleted_object(),
    RestFacts::of("storage.k8s.io", "storageclasses").returns_deleted_object(),
    RestFacts::of("storage.k8s.io", "volumeattachments").returns_deleted_object(),
    RestFacts::of("storage.k8s.io", "volumeattributesclasses").returns_deleted_object(),
    // Generation = 1 on create, bumped when `webhooks` changes.
    RestFacts::of(
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
    )
    .generation(),
    // Not create-on-update: the upstream doc comment says "true", the
    // function returns false.
    RestFacts::of(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    )
    .generation(),
    RestFacts::of(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
    )
    .generation(),
    RestFacts::of(
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
    )
    .generation(),
    // Note: upstream additionally requires the name to be exactly
    // `<spec.names.plural>.<spec.group>`.
    // Note: the CRD store leaves `ReturnDeletedObject` false, but the custom
    // `REST.Delete` (customresourcedefinition/etcd.go) answers the CRD itself
    // (finalizer added, deletionTimestamp set) on the first DELETE, so
    // clients see the object, not a Status.
    RestFacts::of("apiextensions.k8s.io", "customresourcedefinitions")
        .storage("apiextensions.k8s.io/customresourcedefinitions")
        .generation()
        .returns_deleted_object(),
    // Note: upstream also reserves the `system-` prefix for built-ins.
    // Note: upstream sets Generation = 1 on create but never bumps it
    // (PriorityClass has no spec, and `value` is immutable).
    RestFacts::of("scheduling.k8s.io", "priorityclasses").generation(),
    RestFacts::of("coordination.k8s.io", "leases").create_on_update(),
    RestFacts::of("node.k8s.io", "runtimeclasses").create_on_update(),
    // Generation = 1 on create, bumped on any change outside metadata.
    RestFacts::of("discovery.k8s.io", "endpointslices").generation(),
    RestFacts::of("resource.k8s.io", "deviceclasses")
        .generation()
        .returns_deleted_object(),
    RestFacts::of("resource.k8s.io", "resourceclaims").returns_deleted_object(),
    RestFacts::of("resource.k8s.io", "resourceclaimtemplates").returns_deleted_object(),
    RestFacts::of("resource.k8s.io", "resourceslices")
        .generation()
        .returns_deleted_object(),
    RestFacts::of("flowcontrol.apiserver.k8s.io", "flowschemas").generation(),
    RestFacts::of(
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
    )
    .generation(),
];
