//! Which evaluator measures a resource (`pkg/quota/v1/evaluator/core`
//! `registry.go`, `services.go`, `persistent_volume_claims.go`,
//! `generic/evaluator.go` `objectCountEvaluator`, `install/update_filter.go`
//! ignored resources): the operations it handles, the quota resource names
//! it measures, its scopes and constraints, and an object's usage.

use std::time::SystemTime;

use serde_json::Value;

use super::pods;
use super::resource_list::ResourceList;
use super::scopes::{self, ScopeRequirement};
use crate::admission::Operation;
use crate::quantity::Quantity;

/// `install.ignoredResources`: never counted.
const IGNORED: &[(&str, &str)] = &[
    ("", "events"),
    ("authentication.k8s.io", "tokenreviews"),
    ("authentication.k8s.io", "selfsubjectreviews"),
    ("authorization.k8s.io", "subjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectaccessreviews"),
    ("authorization.k8s.io", "localsubjectaccessreviews"),
    ("authorization.k8s.io", "selfsubjectrulesreviews"),
];

/// `storageClassSuffix`.
const STORAGE_CLASS_SUFFIX: &str = ".storageclass.storage.k8s.io/";

/// `legacyObjectCountAliases`.
const LEGACY_ALIASES: &[(&str, &str)] = &[
    ("configmaps", "configmaps"),
    ("resourcequotas", "resourcequotas"),
    ("replicationcontrollers", "replicationcontrollers"),
    ("secrets", "secrets"),
];

/// One resource's evaluator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evaluator {
    Pods,
    Services,
    PersistentVolumeClaims,
    /// `count/<resource>[.<group>]`, plus a legacy alias for a few core kinds.
    ObjectCount {
        count_name: String,
        alias: Option<&'static str>,
    },
}

/// `generic.ObjectCountQuotaResourceNameFor`.
pub fn object_count_name(group: &str, resource: &str) -> String {
    if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }
}

impl Evaluator {
    /// The evaluator of `group`/`resource`; `None` for ignored resources.
    pub fn for_resource(group: &str, resource: &str) -> Option<Evaluator> {
        if IGNORED.contains(&(group, resource)) {
            return None;
        }
        Some(match (group, resource) {
            ("", "pods") => Evaluator::Pods,
            ("", "services") => Evaluator::Services,
            ("", "persistentvolumeclaims") => Evaluator::PersistentVolumeClaims,
            _ => Evaluator::ObjectCount {
                count_name: object_count_name(group, resource),
                alias: LEGACY_ALIASES
                    .iter()
                    .find(|(plural, _)| group.is_empty() && *plural == resource)
                    .map(|(_, alias)| *alias),
            },
        })
    }

    /// `Evaluator.Handles`: which writes may change usage. Only the pod
    /// evaluator takes a subresource: an in-place resize (`pods/resize`
    /// UPDATE) is charged the pod's new requests and limits.
    pub fn handles(&self, operation: Operation, subresource: &str) -> bool {
        match self {
            Evaluator::Pods => match subresource {
                "" => operation == Operation::Create,
                "resize" => operation == Operation::Update,
                _ => false,
            },
            _ if !subresource.is_empty() => false,
            Evaluator::ObjectCount { .. } => operation == Operation::Create,
            Evaluator::Services | Evaluator::PersistentVolumeClaims => {
                matches!(operation, Operation::Create | Operation::Update)
            }
        }
    }

    /// `Evaluator.MatchingResources`: the names in `input` it measures.
    pub fn matching_resources(&self, input: &[String]) -> Vec<String> {
        match self {
            Evaluator::Pods => pods::matching_resources(input),
            Evaluator::Services => input
                .iter()
                .filter(|name| {
                    matches!(
                        name.as_str(),
                        "count/services"
                            | "services"
                            | "services.nodeports"
                            | "services.loadbalancers"
                    )
                })
                .cloned()
                .collect(),
            Evaluator::PersistentVolumeClaims => input
                .iter()
                .filter(|name| {
                    let vanilla = ["persistentvolumeclaims", "requests.storage"];
                    name.as_str() == "count/persistentvolumeclaims"
                        || vanilla.contains(&name.as_str())
                        || vanilla.iter().any(|resource| {
                            name.ends_with(&format!("{STORAGE_CLASS_SUFFIX}{resource}"))
                        })
                })
                .cloned()
                .collect(),
            Evaluator::ObjectCount { count_name, alias } => input
                .iter()
                .filter(|name| *name == count_name || Some(name.as_str()) == *alias)
                .cloned()
                .collect(),
        }
    }

    /// `Evaluator.Matches`: the quota's hard limits name something this
    /// evaluator measures and every scope requirement holds.
    pub fn matches(&self, quota: &Value, object: &Value) -> bool {
        let hard = hard_names(quota);
        if self.matching_resources(&hard).is_empty() {
            return false;
        }
        let requirements = scopes::requirements(quota);
        scopes::matches_all(&requirements, |requirement| {
            self.matches_scope(requirement, object)
        })
    }

    /// The evaluator's `MatchesScopeFunc` (kinds without scopes match none).
    pub fn matches_scope(&self, requirement: &ScopeRequirement, object: &Value) -> bool {
        match self {
            Evaluator::Pods => pods::matches_scope(requirement, object),
            Evaluator::PersistentVolumeClaims => claim_matches_scope(requirement, object),
            _ => false,
        }
    }

    /// `Evaluator.MatchingScopes`: the requirements in `requirements` the
    /// object is in (only pods and claims have scopes).
    pub fn matching_scopes(
        &self,
        object: &Value,
        requirements: &[ScopeRequirement],
    ) -> Vec<ScopeRequirement> {
        if !matches!(self, Evaluator::Pods | Evaluator::PersistentVolumeClaims) {
            return Vec::new();
        }
        requirements
            .iter()
            .filter(|requirement| self.matches_scope(requirement, object))
            .cloned()
            .collect()
    }

    /// `Evaluator.UncoveredQuotaScopes`: the `limited` requirements whose
    /// scope no requirement of a quota the object is in names.
    pub fn uncovered_scopes(
        &self,
        limited: &[ScopeRequirement],
        matched: &[ScopeRequirement],
    ) -> Vec<ScopeRequirement> {
        if !matches!(self, Evaluator::Pods | Evaluator::PersistentVolumeClaims) {
            return Vec::new();
        }
        limited
            .iter()
            .filter(|limited| {
                !matched
                    .iter()
                    .any(|quota| quota.scope_name == limited.scope_name)
            })
            .cloned()
            .collect()
    }

    /// `Evaluator.Constraints`.
    pub fn constraints(&self, required: &[String], object: &Value) -> Result<(), String> {
        match self {
            Evaluator::Pods => pods::constraints(required, object),
            _ => Ok(()),
        }
    }

    /// `Evaluator.Usage`.
    pub fn usage(&self, object: &Value, now: SystemTime) -> ResourceList {
        let one = || Quantity::from_count(1);
        let mut result = ResourceList::new();
        match self {
            Evaluator::Pods => return pods::usage(object, now),
            Evaluator::Services => {
                result.insert("services".into(), one());
                result.insert("count/services".into(), one());
                service_usage(object, &mut result);
            }
            Evaluator::PersistentVolumeClaims => claim_usage(object, &mut result),
            Evaluator::ObjectCount { count_name, alias } => {
                result.insert(count_name.clone(), one());
                if let Some(alias) = alias {
                    result.insert(alias.to_string(), one());
                }
            }
        }
        result
    }
}

/// The names of a quota's `status.hard` (what it is enforced on).
pub fn hard_names(quota: &Value) -> Vec<String> {
    quota
        .pointer("/status/hard")
        .and_then(Value::as_object)
        .map(|hard| hard.keys().cloned().collect())
        .unwrap_or_default()
}

/// `serviceEvaluator.Usage`'s node ports and load balancers.
fn service_usage(service: &Value, result: &mut ResourceList) {
    let ports = service
        .pointer("/spec/ports")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let count = |n: usize| Quantity::from_count(i64::try_from(n).unwrap_or(i64::MAX));
    match service.pointer("/spec/type").and_then(Value::as_str) {
        Some("NodePort") => {
            result.insert("services.nodeports".into(), count(ports.len()));
        }
        Some("LoadBalancer") => {
            let allocate = service
                .pointer("/spec/allocateLoadBalancerNodePorts")
                .and_then(Value::as_bool);
            let node_ports = if allocate == Some(false) {
                // portsWithNodePorts: only explicitly set node ports.
                ports
                    .iter()
                    .filter(|port| port.get("nodePort").and_then(Value::as_i64).unwrap_or(0) != 0)
                    .count()
            } else {
                ports.len()
            };
            result.insert("services.nodeports".into(), count(node_ports));
            result.insert("services.loadbalancers".into(), count(1));
        }
        _ => {}
    }
}

/// `pvcEvaluator.Usage`: the claim, its storage (the larger of the request
/// and `status.allocatedResources`, rounded up to whole bytes), each also
/// charged to the claim's storage class.
fn claim_usage(claim: &Value, result: &mut ResourceList) {
    let one = Quantity::from_count(1);
    result.insert("persistentvolumeclaims".into(), one.clone());
    result.insert("count/persistentvolumeclaims".into(), one.clone());
    // storagehelpers.GetPersistentVolumeClaimClass: the beta annotation first.
    let class = claim
        .pointer("/metadata/annotations/volume.beta.kubernetes.io~1storage-class")
        .and_then(Value::as_str)
        .or_else(|| {
            claim
                .pointer("/spec/storageClassName")
                .and_then(Value::as_str)
        })
        .unwrap_or_default();
    if !class.is_empty() {
        result.insert(
            format!("{class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"),
            one,
        );
    }
    let parse = |pointer: &str| {
        claim
            .pointer(pointer)
            .and_then(Value::as_str)
            .and_then(|text| Quantity::parse(text.trim()).ok())
            .map(|quantity| quantity.round_up_whole())
    };
    let mut storage = parse("/spec/resources/requests/storage");
    if let Some(allocated) = parse("/status/allocatedResources/storage") {
        if storage
            .as_ref()
            .is_none_or(|requested| requested.cmp_value(&allocated).is_lt())
        {
            storage = Some(allocated);
        }
    }
    if let Some(storage) = storage {
        if !class.is_empty() {
            result.insert(
                format!("{class}{STORAGE_CLASS_SUFFIX}requests.storage"),
                storage.clone(),
            );
        }
        result.insert("requests.storage".into(), storage);
    }
}

/// `pvcEvaluator`'s `VolumeAttributesClass` scope: the claim's classes
/// (`spec.volumeAttributesClassName`, `status.currentVolumeAttributesClassName`,
/// `status.modifyVolumeStatus.targetVolumeAttributesClassName`); `Exists`
/// when it has any, else any of them meeting the requirement.
fn claim_matches_scope(requirement: &ScopeRequirement, claim: &Value) -> bool {
    if requirement.scope_name != "VolumeAttributesClass" {
        return false;
    }
    let classes: Vec<&str> = [
        "/spec/volumeAttributesClassName",
        "/status/currentVolumeAttributesClassName",
        "/status/modifyVolumeStatus/targetVolumeAttributesClassName",
    ]
    .iter()
    .filter_map(|pointer| claim.pointer(pointer).and_then(Value::as_str))
    .filter(|class| !class.is_empty())
    .collect();
    if requirement.operator == "Exists" {
        return !classes.is_empty();
    }
    classes
        .iter()
        .any(|class| requirement.matches_value(Some(class)))
}
