//! The shape of one entry in the resource table (built in `builtin.rs`).
//!
//! Built-in kinds are data: everything kube-apiserver reports about a resource
//! in discovery (vendored, `data/discovery-v1.34.json`), plus the few facts the
//! request path needs (etcd key segment, name rule, create-on-update,
//! generation, DELETE answer; hand-written in `rest_facts.rs`). Mirrors what each
//! `pkg/registry/<group>/<resource>/storage/storage.go` declares upstream
//! (`ShortNames()`, `Categories()`, `NamespaceScoped()`, the REST verbs).

/// How `metadata.name` is validated for a kind
/// (upstream `apimachinery/pkg/api/validation/generic.go` and per-kind `Validate*Name`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NameRule {
    /// `NameIsDNSSubdomain`: lowercase RFC 1123 subdomain, at most 253 characters.
    Dns1123Subdomain,
    /// `NameIsDNSLabel`: lowercase RFC 1123 label, at most 63 characters (namespaces).
    Dns1123Label,
    /// `NameIsDNS1035Label`: RFC 1035 label, starts with a letter (services).
    Dns1035Label,
    /// `ValidatePathSegmentName`: anything but `.`, `..`, or containing `/` or `%` (RBAC).
    PathSegment,
}

/// A subresource such as `status` or `scale`, as aggregated discovery lists it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SubresourceDef {
    /// `status`, `scale`, `binding`, `eviction`, `log`, ...
    pub name: &'static str,
    /// Group of the kind this subresource answers with (`autoscaling` for scale, `""` for core).
    pub group: &'static str,
    pub version: &'static str,
    /// Kind it answers with (`Scale` for scale, the parent kind for status).
    pub kind: &'static str,
    /// Verbs in kube's discovery order (alphabetical).
    pub verbs: &'static [&'static str],
}

/// One served resource in one group version.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ResourceDef {
    /// API group; `""` is the legacy core group served under `/api`.
    pub group: &'static str,
    pub version: &'static str,
    pub kind: &'static str,
    /// Plural resource name used in URLs (`deployments`).
    pub plural: &'static str,
    /// Singular name as discovery reports it (`deployment`).
    pub singular: &'static str,
    pub namespaced: bool,
    /// Verbs in kube's discovery order (alphabetical), e.g.
    /// `["create","delete","deletecollection","get","list","patch","update","watch"]`.
    pub verbs: &'static [&'static str],
    pub short_names: &'static [&'static str],
    pub categories: &'static [&'static str],
    pub subresources: &'static [SubresourceDef],
    /// Key segment after `/registry/` as kube-apiserver lays out etcd keys
    /// (`services/specs`, `minions`, `deployments`,
    /// `apiextensions.k8s.io/customresourcedefinitions`). Versions of one
    /// resource that share storage (autoscaling v1/v2) share this segment.
    pub storage: &'static str,
    pub name_rule: NameRule,
    /// Upstream `AllowCreateOnUpdate()`: PUT of a missing object creates it.
    pub create_on_update: bool,
    /// Upstream strategies that bump `metadata.generation` when the spec changes
    /// (every kind with a spec/status split, plus a few like CRDs).
    pub has_generation: bool,
    /// Upstream generic registry `Store.ReturnDeletedObject` (or a custom
    /// `REST.Delete` that answers the object, as namespaces and CRDs do):
    /// when true, DELETE answers with the deleted object instead of a
    /// `Status{status: Success, details}`.
    pub returns_deleted_object: bool,
    /// Defined by a CustomResourceDefinition (`crd/`), not built in: kube's
    /// custom-resource strategy applies (`customresource/strategy.go`).
    pub custom: bool,
}

impl ResourceDef {
    /// `apps/v1`, or `v1` for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.to_string()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    pub fn subresource(&self, name: &str) -> Option<&'static SubresourceDef> {
        self.subresources.iter().find(|sub| sub.name == name)
    }

    pub fn has_verb(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }
}
