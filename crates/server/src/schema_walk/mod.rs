//! Canonicalizes every `resource.Quantity` in an unstructured object, the way
//! kube-apiserver's typed decode + encode round trip rewrites them
//! (`cpu: "0.5"` reads back as `500m`).
//!
//! Which values are quantities comes from the object's OpenAPI v2 schema, as
//! compiled into the schema model (`crate::schema`): any schema that is a
//! `$ref` to `io.k8s.apimachinery.pkg.api.resource.Quantity`,
//! reached through `properties`, `additionalProperties` (`resources.limits`,
//! `ResourceQuota.spec.hard`), `items` and nested `$ref`s.
//!
//! Each kind's schema is compiled once into a [`Plan`] that keeps only the
//! paths that can lead to a quantity (whether a definition can reach one is
//! computed once per definition, cycles included), so walking a ConfigMap
//! costs one cache lookup and walking a Deployment touches only
//! `spec.template.spec.{containers,initContainers,ephemeralContainers,overhead,
//! resources,volumes}` and the like.
//!
//! Decode errors: kube rejects an unparsable quantity while decoding the
//! request body, before any validation, with **400 BadRequest** (not 422):
//! `Deployment in version "v1" cannot be handled as a Deployment: quantities
//! must match the regular expression '...'` (see [`decode_error_message`]).

mod compile;
#[cfg(test)]
mod tests;
mod walk;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde_json::Value;

use crate::openapi::OpenApi;
use crate::status::FieldError;

use compile::{compute_reaches, Builder};
use walk::walk;

/// OpenAPI name of `resource.Quantity`.
pub const QUANTITY_DEFINITION: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Index of a node in [`Plan::nodes`].
type NodeId = usize;

/// The one quantity leaf every plan starts with.
const QUANTITY_NODE: NodeId = 0;

/// One schema, reduced to the parts that can hold a quantity.
#[derive(Debug, Default)]
struct Node {
    /// This value itself is a quantity.
    quantity: bool,
    /// Properties that may hold a quantity, in schema order.
    properties: Vec<(String, NodeId)>,
    /// Schema of map values, when map values may hold a quantity.
    additional: Option<NodeId>,
    /// Schema of array items, when items may hold a quantity.
    items: Option<NodeId>,
}

impl Node {
    fn is_empty(&self) -> bool {
        !self.quantity
            && self.properties.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
    }
}

/// A kind's schema compiled down to the paths that lead to quantities.
/// Recursive definitions share nodes, so the graph may have cycles.
#[derive(Debug)]
pub struct Plan {
    nodes: Vec<Node>,
    root: NodeId,
}

/// Group, version and the plan of one kind.
type PlanEntry = (String, String, Option<Arc<Plan>>);

#[derive(Default)]
struct Cache {
    /// Per definition (its node in the built-in schema model): whether any
    /// Quantity is reachable from it.
    reaches: HashMap<crate::schema::NodeId, bool>,
    /// Per kind, then group and version: its plan, `None` when it holds no
    /// quantity (or has no vendored schema, e.g. custom resources). Keyed by
    /// kind first so lookups need no allocation.
    plans: HashMap<String, Vec<PlanEntry>>,
}

fn cache() -> &'static RwLock<Cache> {
    static CACHE: OnceLock<RwLock<Cache>> = OnceLock::new();
    CACHE.get_or_init(|| RwLock::new(Cache::default()))
}

/// Canonicalizes, in place, every quantity in `object` (an object of this
/// group/version/kind, as decoded from a request body), and returns one
/// `FieldError::invalid(path, value, message)` per value kube would fail to
/// decode, the message being `ParseQuantity`'s (`quantities must match the
/// regular expression '...'`, `unable to parse quantity's suffix`, `unable to
/// parse numeric part of quantity`), paths such as
/// `spec.containers[0].resources.limits[cpu]`.
///
/// Strings are trimmed and parsed, JSON numbers are parsed from their text,
/// `null` map values / array items become `"0"` (Go decodes them into a zero
/// Quantity); a `null` property is left alone. Kinds without a vendored
/// schema (custom resources) are untouched.
///
/// kube reports only the first failure (in request-body order) and answers 400:
/// build the response with [`decode_error_message`].
pub fn canonicalize_quantities(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
    object: &mut Value,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(plan) = plan_for(openapi, group, version, kind) {
        let mut path = String::new();
        walk(&plan, plan.root, object, &mut path, false, &mut errors);
    }
    errors
}

/// Whether objects of this kind can hold any quantity at all.
pub fn may_contain_quantities(openapi: &OpenApi, group: &str, version: &str, kind: &str) -> bool {
    plan_for(openapi, group, version, kind).is_some()
}

/// The message of kube's 400 BadRequest for a body that fails to decode
/// (`transformDecodeError` in apiserver's handlers): `body_kind` and
/// `body_version` are the kind and version the body claims (defaulted from the
/// URL when absent), `kind` the kind the endpoint decodes into. `None` when
/// there is no error. For create (POST) and update (PUT); JSON/merge/strategic
/// patches that produce a bad quantity fail differently (422, field `patch`).
pub fn decode_error_message(
    body_kind: &str,
    body_version: &str,
    kind: &str,
    errors: &[FieldError],
) -> Option<String> {
    let first = errors.first()?;
    Some(format!(
        "{body_kind} in version \"{body_version}\" cannot be handled as a {kind}: {}",
        first.detail
    ))
}

/// The cached plan of a kind, compiling it on first use.
pub fn plan_for(openapi: &OpenApi, group: &str, version: &str, kind: &str) -> Option<Arc<Plan>> {
    fn cached(cache: &Cache, group: &str, version: &str, kind: &str) -> Option<Option<Arc<Plan>>> {
        cache
            .plans
            .get(kind)?
            .iter()
            .find(|(g, v, _)| g == group && v == version)
            .map(|(_, _, plan)| plan.clone())
    }
    if let Some(plan) = cached(
        &cache().read().unwrap_or_else(PoisonError::into_inner),
        group,
        version,
        kind,
    ) {
        return plan;
    }
    // A definitions error (a build problem) is not cached; the kind is skipped.
    let _ = openapi; // The built-in schemas are the process's compiled model.
    let model = crate::schema::builtin().ok()?;
    let root = model.kind(group, version, kind);
    let mut cache = cache().write().unwrap_or_else(PoisonError::into_inner);
    if let Some(plan) = cached(&cache, group, version, kind) {
        return plan;
    }
    let plan = root.and_then(|root| {
        compute_reaches(model, root, &mut cache.reaches);
        Builder::new(model, &cache.reaches).build(root)
    });
    cache.plans.entry(kind.to_string()).or_default().push((
        group.to_string(),
        version.to_string(),
        plan.clone(),
    ));
    plan
}
