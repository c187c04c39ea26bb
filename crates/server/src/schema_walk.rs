//! Canonicalizes every `resource.Quantity` in an unstructured object, the way
//! kube-apiserver's typed decode + encode round trip rewrites them
//! (`cpu: "0.5"` reads back as `500m`).
//!
//! Which values are quantities comes from the object's OpenAPI v2 schema: any
//! schema that is a `$ref` to `io.k8s.apimachinery.pkg.api.resource.Quantity`,
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

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock, PoisonError, RwLock};

use serde_json::Value;

use crate::openapi::OpenApi;
use crate::quantity::{canonicalize, canonicalize_value};
use crate::status::FieldError;

/// OpenAPI name of `resource.Quantity`.
pub const QUANTITY_DEFINITION: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";

/// Prefix of a v2 `$ref`.
const REF_PREFIX: &str = "#/definitions/";

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
    /// Per definition name: whether any Quantity is reachable from it.
    reaches: HashMap<String, bool>,
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
    let root = openapi.schema_for_kind(group, version, kind).ok()?;
    let mut cache = cache().write().unwrap_or_else(PoisonError::into_inner);
    if let Some(plan) = cached(&cache, group, version, kind) {
        return plan;
    }
    let plan = root.and_then(|root| {
        compute_reaches(openapi, root, &mut cache.reaches);
        Builder::new(openapi, &cache.reaches).build(root)
    });
    cache.plans.entry(kind.to_string()).or_default().push((
        group.to_string(),
        version.to_string(),
        plan.clone(),
    ));
    plan
}

/// Resolves a `$ref` to a definition name.
fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.strip_prefix(REF_PREFIX)
}

/// Sub-schemas of an inline schema that may hold values: property schemas,
/// `additionalProperties` and `items` (object forms).
fn children(schema: &Value) -> impl Iterator<Item = &Value> {
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|props| props.values());
    let additional = schema.get("additionalProperties").filter(|v| v.is_object());
    let items = schema.get("items").filter(|v| v.is_object());
    properties.chain(additional).chain(items)
}

/// Definitions an inline schema refers to (not following them), and whether
/// it refers to Quantity directly.
fn collect_refs<'a>(schema: &'a Value, refs: &mut Vec<&'a str>) -> bool {
    if let Some(name) = ref_name(schema) {
        if name == QUANTITY_DEFINITION {
            return true;
        }
        refs.push(name);
        return false;
    }
    let mut direct = false;
    for child in children(schema) {
        direct |= collect_refs(child, refs);
    }
    direct
}

/// Records in `reaches` whether a Quantity is reachable from every definition
/// `root` leads to (a least fixpoint over the discovered graph, so cycles are
/// fine); definitions already recorded are not revisited.
fn compute_reaches(openapi: &OpenApi, root: &Value, reaches: &mut HashMap<String, bool>) {
    let mut pending = Vec::new();
    collect_refs(root, &mut pending);
    let mut graph: HashMap<String, (bool, Vec<String>)> = HashMap::new();
    while let Some(name) = pending.pop() {
        if reaches.contains_key(name) || graph.contains_key(name) {
            continue;
        }
        let mut refs = Vec::new();
        let direct = match openapi.definition(name) {
            Ok(Some(definition)) => collect_refs(definition, &mut refs),
            _ => false,
        };
        graph.insert(
            name.to_string(),
            (direct, refs.iter().map(|r| r.to_string()).collect()),
        );
        pending.extend(refs);
    }
    let mut local: HashMap<&str, bool> = graph
        .iter()
        .map(|(name, (direct, _))| (name.as_str(), *direct))
        .collect();
    loop {
        let mut changed = false;
        for (name, (_, refs)) in &graph {
            if local[name.as_str()] {
                continue;
            }
            let reached = refs.iter().any(|r| {
                local
                    .get(r.as_str())
                    .copied()
                    .or_else(|| reaches.get(r).copied())
                    .unwrap_or(false)
            });
            if reached {
                local.insert(name.as_str(), true);
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    for (name, reached) in local {
        reaches.insert(name.to_string(), reached);
    }
}

/// Compiles schemas into plan nodes, one node per definition reaching a quantity.
struct Builder<'a> {
    openapi: &'a OpenApi,
    reaches: &'a HashMap<String, bool>,
    nodes: Vec<Node>,
    definitions: HashMap<String, NodeId>,
}

impl<'a> Builder<'a> {
    fn new(openapi: &'a OpenApi, reaches: &'a HashMap<String, bool>) -> Self {
        let quantity = Node {
            quantity: true,
            ..Node::default()
        };
        Builder {
            openapi,
            reaches,
            nodes: vec![quantity],
            definitions: HashMap::new(),
        }
    }

    fn build(mut self, root: &Value) -> Option<Arc<Plan>> {
        let root = self.compile(root)?;
        Some(Arc::new(Plan {
            nodes: self.nodes,
            root,
        }))
    }

    /// The node for a schema, `None` when no quantity can be under it.
    fn compile(&mut self, schema: &Value) -> Option<NodeId> {
        if let Some(name) = ref_name(schema) {
            if name == QUANTITY_DEFINITION {
                return Some(QUANTITY_NODE);
            }
            if !self.reaches.get(name).copied().unwrap_or(false) {
                return None;
            }
            if let Some(&id) = self.definitions.get(name) {
                return Some(id);
            }
            let definition = self.openapi.definition(name).ok().flatten()?;
            // Reserve the slot first: recursive definitions point back at it.
            let id = self.nodes.len();
            self.nodes.push(Node::default());
            self.definitions.insert(name.to_string(), id);
            let node = self.compile_inline(definition);
            self.nodes[id] = node;
            return Some(id);
        }
        let node = self.compile_inline(schema);
        if node.is_empty() {
            return None;
        }
        self.nodes.push(node);
        Some(self.nodes.len() - 1)
    }

    fn compile_inline(&mut self, schema: &Value) -> Node {
        let mut node = Node::default();
        if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if let Some(id) = self.compile(property) {
                    node.properties.push((name.clone(), id));
                }
            }
        }
        if let Some(additional) = schema.get("additionalProperties").filter(|v| v.is_object()) {
            node.additional = self.compile(additional);
        }
        if let Some(items) = schema.get("items").filter(|v| v.is_object()) {
            node.items = self.compile(items);
        }
        node
    }
}

fn walk(
    plan: &Plan,
    id: NodeId,
    value: &mut Value,
    path: &mut String,
    in_collection: bool,
    errors: &mut Vec<FieldError>,
) {
    let node = &plan.nodes[id];
    if node.quantity {
        canonicalize_leaf(value, path, in_collection, errors);
        return;
    }
    match value {
        Value::Object(map) => {
            for (name, child) in &node.properties {
                if let Some(field) = map.get_mut(name) {
                    let len = path.len();
                    if !path.is_empty() {
                        path.push('.');
                    }
                    path.push_str(name);
                    walk(plan, *child, field, path, false, errors);
                    path.truncate(len);
                }
            }
            if let Some(child) = node.additional {
                for (key, entry) in map.iter_mut() {
                    if node.properties.iter().any(|(name, _)| name == key) {
                        continue;
                    }
                    let len = path.len();
                    path.push('[');
                    path.push_str(key);
                    path.push(']');
                    walk(plan, child, entry, path, true, errors);
                    path.truncate(len);
                }
            }
        }
        Value::Array(items) => {
            if let Some(child) = node.items {
                for (index, item) in items.iter_mut().enumerate() {
                    let len = path.len();
                    // Writing to a String cannot fail.
                    let _ = write!(path, "[{index}]");
                    walk(plan, child, item, path, true, errors);
                    path.truncate(len);
                }
            }
        }
        _ => {}
    }
}

fn canonicalize_leaf(
    value: &mut Value,
    path: &str,
    in_collection: bool,
    errors: &mut Vec<FieldError>,
) {
    match value {
        Value::String(text) => match canonicalize(text.trim()) {
            Ok(canonical) => {
                if canonical != *text {
                    *text = canonical;
                }
            }
            Err(err) => errors.push(FieldError::invalid(path, text, err.to_string())),
        },
        // A null pointer field: decoding leaves it nil and encoding omits it;
        // dropping nulls is not this walk's business.
        Value::Null if !in_collection => {}
        other => match canonicalize_value(other) {
            Ok(canonical) => *other = canonical,
            Err(err) => errors.push(FieldError::invalid(
                path,
                &other.to_string(),
                err.to_string(),
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quantity::QuantityError;
    use crate::status::FieldErrorKind;
    use serde_json::json;

    fn openapi() -> OpenApi {
        OpenApi::new(&[])
    }

    #[test]
    fn deployment_container_resources() {
        let mut deployment = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"cpu": "0.5"}, "annotations": {"memory": "1024Mi"}},
            "spec": {
                "replicas": 3,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {
                        "containers": [
                            {
                                "name": "a",
                                "image": "nginx",
                                "resources": {
                                    "limits": {"cpu": "0.5", "memory": "1024Mi"},
                                    "requests": {"cpu": 1, "memory": "1.5Gi", "ephemeral-storage": 0.25}
                                },
                                "env": [{"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1000m"}}}]
                            },
                            {"name": "b", "image": "busybox", "resources": {"limits": {"cpu": "100m", "memory": "1000"}}}
                        ],
                        "initContainers": [{"name": "init", "resources": {"requests": {"cpu": "0.1"}}}],
                        "volumes": [{"name": "scratch", "emptyDir": {"sizeLimit": "1e3"}}],
                        "overhead": {"cpu": "250m"}
                    }
                }
            }
        });
        let errors =
            canonicalize_quantities(&openapi(), "apps", "v1", "Deployment", &mut deployment);
        assert_eq!(errors, vec![]);
        let pod = &deployment["spec"]["template"]["spec"];
        assert_eq!(
            pod["containers"][0]["resources"]["limits"],
            json!({"cpu": "500m", "memory": "1Gi"})
        );
        assert_eq!(
            pod["containers"][0]["resources"]["requests"],
            json!({"cpu": "1", "memory": "1536Mi", "ephemeral-storage": "250m"})
        );
        assert_eq!(
            pod["containers"][0]["env"][0]["valueFrom"]["resourceFieldRef"]["divisor"],
            json!("1")
        );
        assert_eq!(
            pod["containers"][1]["resources"]["limits"],
            json!({"cpu": "100m", "memory": "1k"})
        );
        assert_eq!(
            pod["initContainers"][0]["resources"]["requests"],
            json!({"cpu": "100m"})
        );
        assert_eq!(pod["volumes"][0]["emptyDir"]["sizeLimit"], json!("1e3"));
        assert_eq!(pod["overhead"], json!({"cpu": "250m"}));
        // Non-quantity values that look like quantities stay as they are.
        assert_eq!(deployment["metadata"]["labels"]["cpu"], json!("0.5"));
        assert_eq!(
            deployment["metadata"]["annotations"]["memory"],
            json!("1024Mi")
        );
        assert_eq!(deployment["spec"]["replicas"], json!(3));
    }

    #[test]
    fn pvc_storage() {
        let mut pvc = json!({
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {"name": "data"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}, "limits": {"storage": "2048Mi"}}},
            "status": {"capacity": {"storage": "1610612736"}}
        });
        assert_eq!(
            canonicalize_quantities(&openapi(), "", "v1", "PersistentVolumeClaim", &mut pvc),
            vec![]
        );
        assert_eq!(
            pvc["spec"]["resources"]["requests"]["storage"],
            json!("1536Mi")
        );
        assert_eq!(pvc["spec"]["resources"]["limits"]["storage"], json!("2Gi"));
        // DecimalSI stays DecimalSI even when it is a power of two.
        assert_eq!(pvc["status"]["capacity"]["storage"], json!("1610612736"));
    }

    #[test]
    fn limit_range_items() {
        let mut limit_range = json!({
            "apiVersion": "v1",
            "kind": "LimitRange",
            "metadata": {"name": "limits"},
            "spec": {"limits": [{
                "type": "Container",
                "max": {"cpu": "2000m", "memory": "1Gi"},
                "min": {"cpu": "0.01", "memory": "6291456"},
                "default": {"cpu": "0.5", "memory": "512Mi"},
                "defaultRequest": {"cpu": ".25", "memory": "256Mi"},
                "maxLimitRequestRatio": {"cpu": 10}
            }]}
        });
        assert_eq!(
            canonicalize_quantities(&openapi(), "", "v1", "LimitRange", &mut limit_range),
            vec![]
        );
        let item = &limit_range["spec"]["limits"][0];
        assert_eq!(item["max"], json!({"cpu": "2", "memory": "1Gi"}));
        assert_eq!(item["min"], json!({"cpu": "10m", "memory": "6291456"}));
        assert_eq!(item["default"], json!({"cpu": "500m", "memory": "512Mi"}));
        assert_eq!(
            item["defaultRequest"],
            json!({"cpu": "250m", "memory": "256Mi"})
        );
        assert_eq!(item["maxLimitRequestRatio"], json!({"cpu": "10"}));
        assert_eq!(item["type"], json!("Container"));
    }

    #[test]
    fn resource_quota_hard_map() {
        let mut quota = json!({
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": "quota"},
            "spec": {"hard": {"requests.cpu": "1000", "limits.memory": "2048Mi", "pods": 10, "count/deployments.apps": "5", "requests.storage": null}},
            "status": {"hard": {"pods": "10"}, "used": {"pods": "0", "requests.cpu": "0.5"}}
        });
        assert_eq!(
            canonicalize_quantities(&openapi(), "", "v1", "ResourceQuota", &mut quota),
            vec![]
        );
        assert_eq!(
            quota["spec"]["hard"],
            json!({"requests.cpu": "1k", "limits.memory": "2Gi", "pods": "10", "count/deployments.apps": "5", "requests.storage": "0"})
        );
        assert_eq!(
            quota["status"]["used"],
            json!({"pods": "0", "requests.cpu": "500m"})
        );
    }

    #[test]
    fn invalid_quantities_are_field_errors() {
        let mut pod = json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": "p"},
            "spec": {"containers": [{"name": "c", "resources": {"limits": {"cpu": "abc", "memory": "1ki"}, "requests": {"cpu": true}}}]}
        });
        let errors = canonicalize_quantities(&openapi(), "", "v1", "Pod", &mut pod);
        let format_wrong = QuantityError::FormatWrong.to_string();
        assert_eq!(
            errors,
            vec![
                FieldError::invalid(
                    "spec.containers[0].resources.limits[cpu]",
                    "abc",
                    format_wrong.clone()
                ),
                FieldError::invalid(
                    "spec.containers[0].resources.limits[memory]",
                    "1ki",
                    QuantityError::Suffix.to_string()
                ),
                FieldError::invalid(
                    "spec.containers[0].resources.requests[cpu]",
                    "true",
                    format_wrong
                ),
            ]
        );
        assert!(matches!(errors[0].kind, FieldErrorKind::Invalid(_)));
        assert_eq!(
            decode_error_message("Pod", "v1", "Pod", &errors).as_deref(),
            Some("Pod in version \"v1\" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        );
        assert_eq!(decode_error_message("Pod", "v1", "Pod", &[]), None);
        // Invalid values are left as sent.
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"]["cpu"],
            json!("abc")
        );
    }

    #[test]
    fn kinds_without_quantities_are_skipped() {
        let api = openapi();
        assert!(!may_contain_quantities(&api, "", "v1", "ConfigMap"));
        assert!(!may_contain_quantities(&api, "", "v1", "Secret"));
        assert!(!may_contain_quantities(&api, "example.com", "v1", "Widget"));
        assert!(may_contain_quantities(&api, "", "v1", "Pod"));
        assert!(may_contain_quantities(&api, "", "v1", "Node"));
        assert!(may_contain_quantities(
            &api,
            "autoscaling",
            "v2",
            "HorizontalPodAutoscaler"
        ));
        let mut config_map = json!({"kind": "ConfigMap", "data": {"cpu": "0.5"}});
        assert_eq!(
            canonicalize_quantities(&api, "", "v1", "ConfigMap", &mut config_map),
            vec![]
        );
        assert_eq!(config_map["data"]["cpu"], json!("0.5"));
    }

    #[test]
    fn plans_keep_only_quantity_paths() {
        let plan = plan_for(&openapi(), "apps", "v1", "Deployment").expect("plan");
        let root = &plan.nodes[plan.root];
        let names: Vec<&str> = root
            .properties
            .iter()
            .map(|(name, _)| name.as_str())
            .collect();
        // DeploymentStatus and ObjectMeta hold no quantity.
        assert_eq!(names, vec!["spec"]);
        // Same Arc on the second lookup.
        let again = plan_for(&openapi(), "apps", "v1", "Deployment").expect("plan");
        assert!(Arc::ptr_eq(&plan, &again));
    }

    #[test]
    fn node_hpa_and_nested_refs() {
        let mut node = json!({
            "kind": "Node",
            "status": {"capacity": {"cpu": "4", "memory": "8048576Ki", "pods": "110"}, "allocatable": {"memory": "7.5Gi"}}
        });
        assert_eq!(
            canonicalize_quantities(&openapi(), "", "v1", "Node", &mut node),
            vec![]
        );
        assert_eq!(
            node["status"]["capacity"],
            json!({"cpu": "4", "memory": "8048576Ki", "pods": "110"})
        );
        assert_eq!(node["status"]["allocatable"]["memory"], json!("7680Mi"));

        let mut hpa = json!({
            "kind": "HorizontalPodAutoscaler",
            "spec": {
                "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "AverageValue", "averageValue": "0.5"}}}],
                "behavior": {"scaleUp": {"tolerance": "0.05"}}
            },
            "status": {"currentMetrics": [{"type": "Pods", "pods": {"current": {"averageValue": "1000m"}}}]}
        });
        assert_eq!(
            canonicalize_quantities(
                &openapi(),
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                &mut hpa
            ),
            vec![]
        );
        assert_eq!(
            hpa["spec"]["metrics"][0]["resource"]["target"]["averageValue"],
            json!("500m")
        );
        assert_eq!(
            hpa["spec"]["behavior"]["scaleUp"]["tolerance"],
            json!("50m")
        );
        assert_eq!(
            hpa["status"]["currentMetrics"][0]["pods"]["current"]["averageValue"],
            json!("1")
        );
    }

    #[test]
    fn null_property_left_alone_and_wrong_shapes_ignored() {
        let mut pod = json!({
            "kind": "Pod",
            "spec": {
                "containers": [{"name": "c", "resources": {"limits": "oops"}}],
                "volumes": [{"name": "v", "emptyDir": {"sizeLimit": null}}],
                "overhead": [1, 2]
            }
        });
        assert_eq!(
            canonicalize_quantities(&openapi(), "", "v1", "Pod", &mut pod),
            vec![]
        );
        assert_eq!(
            pod["spec"]["volumes"][0]["emptyDir"]["sizeLimit"],
            Value::Null
        );
        assert_eq!(
            pod["spec"]["containers"][0]["resources"]["limits"],
            json!("oops")
        );
    }
}
