//! The type check of a ValidatingAdmissionPolicy's expressions against the
//! kinds it matches: apiserver `admission/plugin/policy/validating/typechecking.go`
//! (`TypeChecker.Check`), whose warnings the status controller
//! (`controllers/policy_status.rs`) writes to `status.typeChecking`.
//!
//! The kinds are those the `matchConstraints.resourceRules` name without
//! wildcards (`typesToCheck`: at most ten, sorted by group, version, kind),
//! each resolved through the registry; `object` and `oldObject` are typed
//! from the kind's OpenAPI schema, `params` from `paramKind`'s (undeclared
//! when it has none, as in kube), `request` as kube's `BuildRequestType`,
//! `namespaceObject` from the Namespace schema, `authorizer` and
//! `variables` as kube's composition declares them. Each
//! `validations[i].expression` and `messageExpression` is checked once per
//! kind; the errors become one warning per expression,
//! `<group>/<version>, Kind=<kind>: <cel-go's issues>` per kind.
//!
//! Custom resource kinds are typed from their version's schema with the
//! full ObjectMeta as `metadata`, as the OpenAPI kube resolves them from.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::cel_env::check::{schema_types, Declarations, FieldTable, Fields, Object, Type};
use crate::crd::cel_syntax::{check_typed, Expected, TypedError};
use crate::registry::Registry;
use crate::schema::Model;

/// `maxTypesToCheck`.
const MAX_TYPES_TO_CHECK: usize = 10;

/// One `status.typeChecking.expressionWarnings` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpressionWarning {
    pub field_ref: String,
    pub warning: String,
}

/// A kind the policy's expressions are checked against.
struct Checked {
    group: String,
    version: String,
    kind: String,
    object: Type,
}

/// `TypeChecker.Check`: the warnings of `policy` (a stored
/// ValidatingAdmissionPolicy), empty when every expression checks.
pub fn check(policy: &Value, registry: &Registry) -> Vec<ExpressionWarning> {
    let Ok(model) = crate::schema::builtin() else {
        return Vec::new();
    };
    let kinds: Vec<Checked> = types_to_check(policy, registry)
        .into_iter()
        .filter_map(|(group, version, kind)| {
            let object = kind_type(registry, model, &group, &version, &kind)?;
            Some(Checked {
                group,
                version,
                kind,
                object,
            })
        })
        .collect();
    if kinds.is_empty() {
        return Vec::new();
    }
    let params = params_type(policy, registry, model);
    let validations = policy
        .pointer("/spec/validations")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let declarations: Vec<Declarations> = kinds
        .iter()
        .map(|checked| declarations(policy, model, &checked.object, params.clone()))
        .collect();
    let mut warnings = Vec::new();
    for (index, validation) in validations.iter().enumerate() {
        for field in ["expression", "messageExpression"] {
            let expression = validation.get(field).and_then(Value::as_str).unwrap_or("");
            if expression.is_empty() {
                continue;
            }
            let mut messages = Vec::new();
            for (checked, declarations) in kinds.iter().zip(&declarations) {
                if let Err(TypedError::Compile(error)) =
                    check_typed(expression, declarations, Expected::Any)
                {
                    // `TypeCheckingResult.String`: `%v: %s\n` of the GVK.
                    messages.push(format!(
                        "{}/{}, Kind={}: {error}\n",
                        checked.group, checked.version, checked.kind
                    ));
                }
            }
            if !messages.is_empty() {
                warnings.push(ExpressionWarning {
                    field_ref: format!("spec.validations[{index}].{field}"),
                    warning: messages.join("\n"),
                });
            }
        }
    }
    warnings
}

/// `typesToCheck`: the group/version/kinds the resource rules name.
fn types_to_check(policy: &Value, registry: &Registry) -> Vec<(String, String, String)> {
    let rules = policy
        .pointer("/spec/matchConstraints/resourceRules")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    let strings = |rule: &Value, name: &str| -> Vec<String> {
        rule.get(name)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut found: Vec<(String, String, String)> = Vec::new();
    let mut count = 0;
    for rule in rules {
        let mut groups = strings(rule, "apiGroups");
        let mut versions = strings(rule, "apiVersions");
        // Give up on a rule with a wildcard group or version; skip wildcard
        // resources and subresources.
        if groups.is_empty() || groups.iter().any(|g| g.contains('*')) {
            continue;
        }
        if versions.is_empty() || versions.iter().any(|v| v.contains('*')) {
            continue;
        }
        let mut resources: Vec<String> = strings(rule, "resources")
            .into_iter()
            .filter(|r| !r.contains(['*', '/']))
            .collect();
        if resources.is_empty() {
            continue;
        }
        groups.sort();
        versions.sort();
        resources.sort();
        for group in &groups {
            for version in &versions {
                for resource in &resources {
                    let Some(def) = registry.lookup(group, version, resource) else {
                        continue;
                    };
                    let gvk = (group.clone(), version.clone(), def.kind.to_string());
                    if !found.contains(&gvk) {
                        found.push(gvk);
                    }
                    count += 1;
                    if count == MAX_TYPES_TO_CHECK {
                        found.sort();
                        return found;
                    }
                }
            }
        }
    }
    found.sort();
    found
}

/// The type of `params`: `paramKind`'s schema, `None` without one.
fn params_type(policy: &Value, registry: &Registry, model: &'static Model) -> Option<Type> {
    let param_kind = policy.pointer("/spec/paramKind")?;
    let api_version = param_kind.get("apiVersion")?.as_str()?;
    let kind = param_kind.get("kind")?.as_str()?;
    let (group, version) = match api_version.split_once('/') {
        Some((group, version)) => (group, version),
        None => ("", api_version),
    };
    kind_type(registry, model, group, version, kind)
}

/// The type of a kind's objects (`SchemaResolver.ResolveSchema` then
/// `SchemaDeclType`): a built-in kind's OpenAPI definition, or a custom
/// resource version's schema with `kind`, `apiVersion` and `metadata` as
/// the OpenAPI kube publishes for it (ObjectMeta in full). `None`: no
/// schema (kube's `ErrSchemaNotFound`: the kind is skipped).
fn kind_type(
    registry: &Registry,
    model: &'static Model,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<Type> {
    if let Some(id) = model.kind(group, version, kind) {
        return schema_types::from_model(model, id, kind);
    }
    let resource = registry
        .resources()
        .iter()
        .find(|r| r.custom && r.group == group && r.version == version && r.kind == kind)?;
    let text = registry.custom(resource)?.schema.clone()?;
    let schema: Value = serde_json::from_str(&text).ok()?;
    let Type::Object(inner) = schema_types::from_json(&schema, kind, false)? else {
        return None;
    };
    let object_meta = model
        .definition("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .and_then(|id| schema_types::from_model(model, id, &format!("{kind}.metadata")))
        .unwrap_or(Type::Dyn);
    Some(Type::Object(Object {
        name: inner.name.clone(),
        fields: Arc::new(ResourceFields { inner, object_meta }),
    }))
}

/// A custom resource's root: its schema's properties, with `kind`,
/// `apiVersion` and the full ObjectMeta as `metadata`.
#[derive(Debug)]
struct ResourceFields {
    inner: Object,
    object_meta: Type,
}

impl Fields for ResourceFields {
    fn field(&self, name: &str) -> Option<Type> {
        match name {
            "kind" | "apiVersion" => Some(Type::String),
            "metadata" => Some(self.object_meta.clone()),
            _ => self.inner.fields.field(name),
        }
    }
}

/// The variables of one kind's check, `variables` typed by compiling each
/// in order (a variable that does not compile is `dyn`).
fn declarations(
    policy: &Value,
    model: &'static Model,
    object: &Type,
    params: Option<Type>,
) -> Declarations {
    let namespace = model
        .kind("", "v1", "Namespace")
        .and_then(|id| schema_types::from_model(model, id, "Namespace"))
        .unwrap_or(Type::Dyn);
    let authorizer = Type::Opaque("kubernetes.authorization.Authorizer", Vec::new());
    let resource_check = Type::Opaque("kubernetes.authorization.ResourceCheck", Vec::new());
    let mut base = Declarations::new()
        .variable("object", object.clone())
        .variable("oldObject", object.clone())
        .variable("request", request_type())
        .variable("namespaceObject", namespace)
        .variable("authorizer", authorizer)
        .variable("authorizer.requestResource", resource_check);
    if let Some(params) = params {
        base = base.variable("params", params);
    }
    let mut variables = BTreeMap::new();
    let defined = policy
        .pointer("/spec/variables")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[]);
    for variable in defined {
        let name = variable.get("name").and_then(Value::as_str).unwrap_or("");
        let expression = variable
            .get("expression")
            .and_then(Value::as_str)
            .unwrap_or("");
        let so_far = base
            .clone()
            .variable("variables", variables_type(variables.clone()));
        let typed = check_typed(expression, &so_far, Expected::Any).unwrap_or(Type::Dyn);
        variables.insert(name.to_string(), typed);
    }
    base.variable("variables", variables_type(variables))
}

/// The variables kube's admission CEL compiler declares
/// (`plugin/cel/compile.go` `createEnvForOpts`) when no kind is known:
/// `object` and `oldObject` dyn, `params` dyn when `has_params`, `request`
/// and `namespaceObject` typed, `authorizer` and
/// `authorizer.requestResource`. For webhook `matchConditions` and the
/// expressions of admission configurations validated on write.
pub fn admission_declarations(has_params: bool) -> Declarations {
    let model = crate::schema::builtin().ok();
    let namespace = model
        .and_then(|model| {
            let id = model.kind("", "v1", "Namespace")?;
            schema_types::from_model(model, id, "Namespace")
        })
        .unwrap_or(Type::Dyn);
    let mut declarations = Declarations::new()
        .variable("object", Type::Dyn)
        .variable("oldObject", Type::Dyn)
        .variable("request", request_type())
        .variable("namespaceObject", namespace)
        .variable(
            "authorizer",
            Type::Opaque("kubernetes.authorization.Authorizer", Vec::new()),
        )
        .variable(
            "authorizer.requestResource",
            Type::Opaque("kubernetes.authorization.ResourceCheck", Vec::new()),
        );
    if has_params {
        declarations = declarations.variable("params", Type::Dyn);
    }
    declarations
}

/// `kubernetes.variables`: one field per variable.
fn variables_type(fields: BTreeMap<String, Type>) -> Type {
    object("kubernetes.variables", fields)
}

fn object(name: &str, fields: BTreeMap<String, Type>) -> Type {
    Type::Object(Object {
        name: Arc::from(name),
        fields: Arc::new(FieldTable(fields)),
    })
}

/// `BuildRequestType` (`admission/plugin/cel/compile.go`).
fn request_type() -> Type {
    let fields = |entries: &[(&str, Type)]| -> BTreeMap<String, Type> {
        entries
            .iter()
            .map(|(name, t)| (name.to_string(), t.clone()))
            .collect()
    };
    let gvk = object(
        "kubernetes.GroupVersionKind",
        fields(&[
            ("group", Type::String),
            ("version", Type::String),
            ("kind", Type::String),
        ]),
    );
    let gvr = object(
        "kubernetes.GroupVersionResource",
        fields(&[
            ("group", Type::String),
            ("version", Type::String),
            ("resource", Type::String),
        ]),
    );
    let user_info = object(
        "kubernetes.UserInfo",
        fields(&[
            ("username", Type::String),
            ("uid", Type::String),
            ("groups", Type::list(Type::String)),
            ("extra", Type::map(Type::String, Type::list(Type::String))),
        ]),
    );
    object(
        "kubernetes.AdmissionRequest",
        fields(&[
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", Type::String),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", Type::String),
            ("name", Type::String),
            ("namespace", Type::String),
            ("operation", Type::String),
            ("userInfo", user_info),
            ("dryRun", Type::Bool),
            ("options", Type::Dyn),
        ]),
    )
}

#[cfg(test)]
#[path = "typecheck_tests.rs"]
mod tests;
