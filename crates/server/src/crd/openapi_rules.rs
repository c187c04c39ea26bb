//! The OpenAPI rules of a CRD's `openAPIV3Schema` beyond structurality:
//! apiextensions `pkg/apis/apiextensions/validation/validation.go`
//! `ValidateCustomResourceDefinitionOpenAPISchema` with
//! `specStandardValidatorV3.validate` (the fields v1 forbids: `$ref`, `id`,
//! `definitions`, `dependencies`, `patternProperties`, `additionalItems`,
//! `type: null`, item arrays, defaults in top-level metadata and inside
//! metadata's `additionalProperties`, embedded resources inside resource
//! meta), `uniqueItems`, `additionalProperties` beside `properties`,
//! `x-kubernetes-preserve-unknown-fields: false`, the
//! `x-kubernetes-map-type` / `x-kubernetes-list-type` /
//! `x-kubernetes-list-map-keys` rules (`validateMapListKeysMapSet`
//! included), and the non-CEL checks of `x-kubernetes-validations`.
//!
//! Errors come in kube's order per node; where kube ranges over a Go map
//! (properties, definitions) the keys are taken in sorted order.

use serde_json::{Map, Value};

use super::cel_syntax::{check_typed_then, Expected, TypedError, RESULT_NOT_BOOL};
use crate::cel_env::check::{schema_types, Declarations, Type};
use crate::go::strconv::quote;
use crate::status::{FieldError, FieldErrorKind};

/// `openapiV3Types`, as `sets.List` prints them.
const OPENAPI_TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];
const META_FIELDS: &[&str] = &["metadata", "kind", "apiVersion"];
/// `supportedValidationReason`, sorted.
const VALIDATION_REASONS: &[&str] = &[
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// `specStandardValidatorV3`'s state as it is handed down the tree.
#[derive(Clone, Default)]
struct Context {
    /// `Some(reason)` where defaults are forbidden (`withForbiddenDefaults`).
    forbidden_defaults: Option<String>,
    inside_resource_meta: bool,
    /// How many times a rule here can run per object (`CELSchemaContext`
    /// `MaxCardinality`): `None` when unbounded.
    cardinality: Option<u64>,
}

impl Context {
    /// The context of a child whose count is bounded by `bound` (`maxItems`,
    /// `maxProperties`): unbounded without one.
    fn repeated(&self, bound: Option<u64>) -> Context {
        Context {
            cardinality: self
                .cardinality
                .zip(bound)
                .map(|(outer, bound)| outer.saturating_mul(bound)),
            ..self.clone()
        }
    }
}

fn bound(schema: &Value, name: &str) -> Option<u64> {
    schema
        .get(name)
        .and_then(Value::as_i64)
        .map(|bound| bound.max(0) as u64)
}

/// Every OpenAPI rule the schema at `path` (`spec.versions[0].schema.openAPIV3Schema`) breaks.
/// `compile_rules`: the schema is structural, so kube compiles its
/// `x-kubernetes-validations` (here: parses them, `cel_syntax.rs`); their
/// errors (kube's `CELErrors`) follow every schema error.
pub fn validate(schema: &Value, path: &str, compile_rules: bool) -> Vec<FieldError> {
    validate_with(schema, path, compile_rules, false)
}

/// [`validate`]; `suppress_per_expression_cost` is kube's
/// `suppressPerExpressionCost` (an update that left the schema unchanged):
/// no rule is refused for its own estimated cost, the total still counts.
pub fn validate_with(
    schema: &Value,
    path: &str,
    compile_rules: bool,
    suppress_per_expression_cost: bool,
) -> Vec<FieldError> {
    let mut found = Found {
        compile_rules,
        suppress_per_expression_cost,
        ..Found::default()
    };
    let root = Context {
        cardinality: Some(1),
        ..Context::default()
    };
    node(schema, path, &root, true, &mut found);
    if found.compile_rules {
        found.cel.extend(found.total_cost.errors(path));
    }
    found.schema.extend(found.cel);
    found.schema
}

/// kube's `OpenAPISchemaErrorList`: schema errors and CEL errors apart.
#[derive(Default)]
struct Found {
    compile_rules: bool,
    suppress_per_expression_cost: bool,
    schema: Vec<FieldError>,
    cel: Vec<FieldError>,
    total_cost: super::cel_cost::TotalCost,
}

fn text<'a>(schema: &'a Value, name: &str) -> &'a str {
    schema.get(name).and_then(Value::as_str).unwrap_or("")
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

/// Whether a field is set as Go's decoder would leave it non-nil.
fn present(schema: &Value, name: &str) -> bool {
    schema.get(name).is_some_and(|value| !value.is_null())
}

fn object<'a>(schema: &'a Value, name: &str) -> Option<&'a Map<String, Value>> {
    schema.get(name).and_then(Value::as_object)
}

fn non_empty_object(schema: &Value, name: &str) -> bool {
    object(schema, name).is_some_and(|map| !map.is_empty())
}

fn list<'a>(schema: &'a Value, name: &str) -> &'a [Value] {
    schema
        .get(name)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    entries
}

fn invalid_raw(field: String, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field,
        detail: detail.to_string(),
    }
}

/// A `*string` as `field.Error` prints it: `"null"` when unset.
fn optional_text(schema: &Value, name: &str) -> String {
    quote(schema.get(name).and_then(Value::as_str).unwrap_or("null"))
}

/// A `[]string` as `%#v` prints it.
fn string_slice(values: &[Value]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|value| quote(value.as_str().unwrap_or("")))
        .collect();
    format!("[]string{{{}}}", items.join(", "))
}

/// `ValidateCustomResourceDefinitionOpenAPISchema` for one node.
fn node(s: &Value, path: &str, context: &Context, is_root: bool, found: &mut Found) {
    if !s.is_object() {
        return;
    }
    let schema_errors_before = found.schema.len();
    standard(s, path, context, &mut found.schema);
    if flag(s, "uniqueItems") {
        found.schema.push(FieldError::forbidden(
            &format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(additional) = s.get("additionalProperties").filter(|a| !a.is_null()) {
        let allows_all = additional == &Value::Bool(true);
        if non_empty_object(s, "properties") && !allows_all {
            found.schema.push(FieldError::forbidden(
                &format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        let mut sub = context.repeated(bound(s, "maxProperties"));
        if context.inside_resource_meta {
            sub.forbidden_defaults =
                Some("inside additionalProperties applying to object metadata".into());
        }
        node(
            additional,
            &format!("{path}.additionalProperties"),
            &sub,
            false,
            found,
        );
    }
    let embedded = flag(s, "x-kubernetes-embedded-resource");
    for (name, property) in object(s, "properties").map(sorted).unwrap_or_default() {
        let mut sub = context.clone();
        if (is_root || embedded) && META_FIELDS.contains(&name.as_str()) {
            sub.inside_resource_meta = true;
            if is_root {
                sub.forbidden_defaults = Some(format!("in top-level {name}"));
            }
        }
        node(
            property,
            &format!("{path}.properties[{name}]"),
            &sub,
            false,
            found,
        );
    }
    if let Some(not) = s.get("not") {
        node(not, &format!("{path}.not"), context, false, found);
    }
    for junctor in ["allOf", "oneOf", "anyOf"] {
        for (index, nested) in list(s, junctor).iter().enumerate() {
            node(
                nested,
                &format!("{path}.{junctor}[{index}]"),
                context,
                false,
                found,
            );
        }
    }
    for (name, definition) in object(s, "definitions").map(sorted).unwrap_or_default() {
        node(
            definition,
            &format!("{path}.definitions[{name}]"),
            context,
            false,
            found,
        );
    }
    match s.get("items") {
        Some(items @ Value::Object(_)) => node(
            items,
            &format!("{path}.items"),
            &context.repeated(bound(s, "maxItems")),
            false,
            found,
        ),
        Some(Value::Array(items)) => {
            for (index, item) in items.iter().enumerate() {
                node(
                    item,
                    &format!("{path}.items[{index}]"),
                    context,
                    false,
                    found,
                );
            }
        }
        _ => {}
    }
    for (name, dependency) in object(s, "dependencies").map(sorted).unwrap_or_default() {
        node(
            dependency,
            &format!("{path}.dependencies[{name}]"),
            context,
            false,
            found,
        );
    }
    if s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        found.schema.push(invalid_raw(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "false".into(),
            "must be true or undefined",
        ));
    }
    map_type(s, path, &mut found.schema);
    list_type(s, path, &mut found.schema);
    map_list_keys_map_set(s, path, &mut found.schema);
    validation_rules(s, path, &mut found.schema);
    // kube skips the CEL compilation of a node with schema errors at its
    // level or deeper, and of a schema that is not structural.
    if found.compile_rules && found.schema.len() == schema_errors_before {
        let resource_root = is_root || flag(s, "x-kubernetes-embedded-resource");
        rule_syntax(s, path, resource_root, context.cardinality, found);
    }
}

/// `specStandardValidatorV3.validate`: the fields v1 does not support.
fn standard(s: &Value, path: &str, context: &Context, errors: &mut Vec<FieldError>) {
    let type_ = text(s, "type");
    if !type_.is_empty() && !OPENAPI_TYPES.contains(&type_) {
        errors.push(FieldError::not_supported(
            &format!("{path}.type"),
            type_,
            OPENAPI_TYPES,
        ));
    }
    if let (true, Some(reason)) = (present(s, "default"), &context.forbidden_defaults) {
        errors.push(FieldError::forbidden(
            &format!("{path}.default"),
            format!("must not be set {reason}"),
        ));
    }
    let forbidden =
        |name: &str, detail: &str| FieldError::forbidden(&format!("{path}.{name}"), detail);
    if !text(s, "id").is_empty() {
        errors.push(forbidden("id", "id is not supported"));
    }
    if present(s, "additionalItems") {
        errors.push(forbidden(
            "additionalItems",
            "additionalItems is not supported",
        ));
    }
    if non_empty_object(s, "patternProperties") {
        errors.push(forbidden(
            "patternProperties",
            "patternProperties is not supported",
        ));
    }
    if non_empty_object(s, "definitions") {
        errors.push(forbidden("definitions", "definitions is not supported"));
    }
    if present(s, "dependencies") {
        errors.push(forbidden("dependencies", "dependencies is not supported"));
    }
    if present(s, "$ref") {
        errors.push(forbidden("$ref", "$ref is not supported"));
    }
    if type_ == "null" {
        errors.push(forbidden(
            "type",
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if s.get("items")
        .and_then(Value::as_array)
        .is_some_and(|items| !items.is_empty())
    {
        errors.push(forbidden(
            "items",
            "items must be a schema object and not an array",
        ));
    }
    if context.inside_resource_meta && flag(s, "x-kubernetes-embedded-resource") {
        errors.push(forbidden(
            "x-kubernetes-embedded-resource",
            "must not be used inside of resource meta",
        ));
    }
}

/// The `x-kubernetes-map-type` rules.
fn map_type(s: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(map_type) = s.get("x-kubernetes-map-type").filter(|v| !v.is_null()) else {
        return;
    };
    let type_ = text(s, "type");
    let detail = "must be object if x-kubernetes-map-type is specified";
    if type_.is_empty() {
        errors.push(FieldError::required(&format!("{path}.type"), detail));
    } else if type_ != "object" {
        errors.push(FieldError::invalid(&format!("{path}.type"), type_, detail));
    }
    let map_type = map_type.as_str().unwrap_or("");
    if map_type != "atomic" && map_type != "granular" {
        errors.push(FieldError::not_supported(
            &format!("{path}.x-kubernetes-map-type"),
            map_type,
            &["atomic", "granular"],
        ));
    }
}

/// The `x-kubernetes-list-type` and `x-kubernetes-list-map-keys` rules.
fn list_type(s: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let type_ = text(s, "type");
    let list_type = s
        .get("x-kubernetes-list-type")
        .filter(|v| !v.is_null())
        .map(|v| v.as_str().unwrap_or(""));
    let items = s.get("items").filter(|items| items.is_object());
    if let Some(list_type) = list_type {
        let detail = "must be array if x-kubernetes-list-type is specified";
        if type_.is_empty() {
            errors.push(FieldError::required(&format!("{path}.type"), detail));
        } else if type_ != "array" {
            errors.push(FieldError::invalid(&format!("{path}.type"), type_, detail));
        } else if let (true, Some(items)) = (list_type == "set", items) {
            let detail = "must be atomic as item of a list with x-kubernetes-list-type=set";
            match text(items, "type") {
                "array" => {
                    let inner = text(items, "x-kubernetes-list-type");
                    if present(items, "x-kubernetes-list-type") && inner != "atomic" {
                        errors.push(invalid_raw(
                            format!("{path}.items.x-kubernetes-list-type"),
                            optional_text(items, "x-kubernetes-list-type"),
                            detail,
                        ));
                    }
                }
                "object" if text(items, "x-kubernetes-map-type") != "atomic" => {
                    // kube prints the items' list type here, not their map type.
                    errors.push(invalid_raw(
                        format!("{path}.items.x-kubernetes-map-type"),
                        optional_text(items, "x-kubernetes-list-type"),
                        detail,
                    ));
                }
                _ => {}
            }
        }
        if !matches!(list_type, "atomic" | "set" | "map") {
            errors.push(FieldError::not_supported(
                &format!("{path}.x-kubernetes-list-type"),
                list_type,
                &["atomic", "set", "map"],
            ));
        }
    }
    let keys = list(s, "x-kubernetes-list-map-keys");
    if !keys.is_empty() {
        let detail = "must be map if x-kubernetes-list-map-keys is non-empty";
        match list_type {
            None => errors.push(FieldError::required(
                &format!("{path}.x-kubernetes-list-type"),
                detail,
            )),
            Some(other) if other != "map" => errors.push(FieldError::invalid(
                &format!("{path}.x-kubernetes-list-type"),
                other,
                detail,
            )),
            Some(_) => {}
        }
    }
    if list_type != Some("map") {
        return;
    }
    if keys.is_empty() {
        errors.push(FieldError::required(
            &format!("{path}.x-kubernetes-list-map-keys"),
            "must not be empty if x-kubernetes-list-type is map",
        ));
    }
    let Some(items) = items else {
        errors.push(FieldError::required(
            &format!("{path}.items"),
            "must have a schema if x-kubernetes-list-type is map",
        ));
        return;
    };
    let items_type = text(items, "type");
    if items_type != "object" {
        errors.push(FieldError::invalid(
            &format!("{path}.items.type"),
            items_type,
            "must be object if parent array's x-kubernetes-list-type is map",
        ));
        return;
    }
    let mut seen = std::collections::HashSet::new();
    for key in keys {
        let key = key.as_str().unwrap_or("");
        match object(items, "properties").and_then(|properties| properties.get(key)) {
            Some(property) => {
                if matches!(text(property, "type"), "array" | "object") {
                    // kube prints the items' type, not the key's.
                    errors.push(FieldError::invalid(
                        &format!("{path}.items.properties[{key}].type"),
                        items_type,
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    ));
                }
            }
            None => errors.push(invalid_raw(
                format!("{path}.x-kubernetes-list-map-keys"),
                string_slice(keys),
                "entries must all be names of item properties",
            )),
        }
        if !seen.insert(key) {
            errors.push(invalid_raw(
                format!("{path}.x-kubernetes-list-map-keys"),
                string_slice(keys),
                "must not contain duplicate entries",
            ));
        }
    }
}

/// `validateMapListKeysMapSet`: items of sets and maps are not nullable;
/// map keys are required or defaulted, and not nullable.
fn map_list_keys_map_set(s: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let Some(items) = s.get("items").filter(|items| items.is_object()) else {
        return;
    };
    let list_type = text(s, "x-kubernetes-list-type");
    if list_type != "set" && list_type != "map" {
        return;
    }
    if flag(items, "nullable") {
        errors.push(FieldError::forbidden(
            &format!("{path}.items.nullable"),
            format!("cannot be nullable when x-kubernetes-list-type is {list_type}"),
        ));
    }
    if list_type != "map" {
        return;
    }
    let required: Vec<&str> = list(items, "required")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for key in list(s, "x-kubernetes-list-map-keys") {
        let key = key.as_str().unwrap_or("");
        let Some(property) = object(items, "properties").and_then(|p| p.get(key)) else {
            continue;
        };
        if !required.contains(&key) && !present(property, "default") {
            errors.push(FieldError::required(
                &format!("{path}.items.properties[{key}].default"),
                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
            ));
        }
        if flag(property, "nullable") {
            errors.push(FieldError::forbidden(
                &format!("{path}.items.properties[{key}].nullable"),
                "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
            ));
        }
    }
}

/// The checks of `x-kubernetes-validations` that need no CEL: a rule, a
/// one-line message, a known reason, a usable field path.
fn validation_rules(s: &Value, path: &str, errors: &mut Vec<FieldError>) {
    for (index, rule) in list(s, "x-kubernetes-validations").iter().enumerate() {
        let at = |name: &str| format!("{path}.x-kubernetes-validations[{index}].{name}");
        let raw = |name: &str| rule.get(name).and_then(Value::as_str).unwrap_or("");
        let newline = |text: &str| text.contains(['\n', '\r']);
        let (expression, message) = (raw("rule").trim(), raw("message"));
        if expression.is_empty() {
            errors.push(FieldError::required(&at("rule"), "rule is not specified"));
        } else if !message.is_empty() && message.trim().is_empty() {
            errors.push(FieldError::invalid(
                &at("message"),
                message,
                "message must be non-empty if specified",
            ));
        } else if newline(message.trim()) {
            errors.push(FieldError::invalid(
                &at("message"),
                message,
                "message must not contain line breaks",
            ));
        } else if newline(expression) && message.trim().is_empty() {
            errors.push(FieldError::required(
                &at("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let message_expression = raw("messageExpression");
        if !message_expression.is_empty() && message_expression.trim().is_empty() {
            errors.push(FieldError::required(
                &at("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.get("reason").filter(|r| !r.is_null()) {
            let reason = reason.as_str().unwrap_or("");
            if !VALIDATION_REASONS.contains(&reason) {
                errors.push(FieldError::not_supported(
                    &at("reason"),
                    reason,
                    VALIDATION_REASONS,
                ));
            }
        }
        let field_path = raw("fieldPath");
        if !field_path.is_empty() && field_path.trim().is_empty() {
            errors.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "fieldPath must be non-empty if specified",
            ));
        }
        if newline(field_path) {
            errors.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "fieldPath must not contain line breaks",
            ));
        }
        if !field_path.is_empty()
            && super::selectable_fields::field_path(field_path, s, true).is_err()
        {
            errors.push(FieldError::invalid(
                &at("fieldPath"),
                field_path,
                "fieldPath must be a valid path",
            ));
        }
    }
}

/// `compileRule` for each `rule` and `messageExpression`
/// (`schema/cel/compilation.go`): parsed and type-checked with `self` and
/// `oldSelf` typed from this node's schema (`SchemaDeclType`, the root of
/// a resource with its `apiVersion`, `kind` and `metadata.name`), reported
/// by `ValidateCustomResourceDefinitionOpenAPISchema` as `field.Invalid` of
/// the whole `ValidationRule` (printed with `%#v`).
///
/// A rule that checks is then estimated (`cel_cost.rs`): over
/// `StaticEstimatedCostLimit` it is forbidden, and its cost counts
/// toward the schema's total.
fn rule_syntax(
    s: &Value,
    path: &str,
    resource_root: bool,
    cardinality: Option<u64>,
    found: &mut Found,
) {
    let rules = list(s, "x-kubernetes-validations");
    if rules.is_empty() {
        return;
    }
    // kube names the type `selfType<nanoseconds>`, new at every compile.
    let self_type = schema_types::from_json(s, "selfType0", resource_root).unwrap_or(Type::Dyn);
    let errors = &mut found.cel;
    for (index, rule) in rules.iter().enumerate() {
        let at = |name: &str| format!("{path}.x-kubernetes-validations[{index}].{name}");
        let raw = |name: &str| rule.get(name).and_then(Value::as_str).unwrap_or("");
        let expression = raw("rule");
        if expression.trim().is_empty() {
            continue;
        }
        let old_self = match rule.get("optionalOldSelf") {
            Some(Value::Bool(true)) => Type::optional(self_type.clone()),
            _ => self_type.clone(),
        };
        let declarations = Declarations::new()
            .variable("self", self_type.clone())
            .variable("oldSelf", old_self);
        let estimate = |ast: &cel::IdedExpr| crate::cel_env::cost_estimate::estimate(ast, s).max;
        match check_typed_then(expression, &declarations, Expected::Bool, estimate) {
            Err(error) => {
                let detail = match error {
                    TypedError::Compile(error) => format!("compilation failed: {error}"),
                    TypedError::ResultType => RESULT_NOT_BOOL.to_string(),
                };
                errors.push(invalid_raw(at("rule"), go_validation_rule(rule), &detail));
                // kube returns before compiling the message expression.
                continue;
            }
            Ok((_, cost)) => {
                let cost = super::cel_cost::expression_cost(cost, cardinality, s);
                if cost > super::cel_cost::STATIC_ESTIMATED_COST_LIMIT
                    && !found.suppress_per_expression_cost
                {
                    errors.push(FieldError::forbidden(
                        &at("rule"),
                        super::cel_cost::cost_error_message(
                            "estimated rule cost",
                            cost,
                            super::cel_cost::STATIC_ESTIMATED_COST_LIMIT,
                        ),
                    ));
                }
                found.total_cost.observe(at("rule"), cost);
            }
        }
        let message_expression = raw("messageExpression");
        if message_expression.is_empty() {
            continue;
        }
        match check_typed_then(
            message_expression,
            &declarations,
            Expected::String,
            estimate,
        ) {
            Err(error) => {
                let detail = match error {
                    TypedError::Compile(error) => {
                        format!("messageExpression compilation failed: {error}")
                    }
                    TypedError::ResultType => {
                        "messageExpression must evaluate to a string".to_string()
                    }
                };
                errors.push(invalid_raw(
                    at("messageExpression"),
                    go_validation_rule(rule),
                    &detail,
                ));
            }
            Ok((_, cost)) => {
                if cost > super::cel_cost::STATIC_ESTIMATED_COST_LIMIT
                    && !found.suppress_per_expression_cost
                {
                    errors.push(FieldError::forbidden(
                        &at("messageExpression"),
                        super::cel_cost::cost_error_message(
                            "estimated messageExpression cost",
                            cost,
                            super::cel_cost::STATIC_ESTIMATED_COST_LIMIT,
                        ),
                    ));
                }
                found.total_cost.observe(at("messageExpression"), cost);
            }
        }
    }
}

/// An internal `apiextensions.ValidationRule` as `%#v` prints it. Set
/// pointers print as Go prints an address, which differs per process:
/// ferrokube prints a fixed one.
fn go_validation_rule(rule: &Value) -> String {
    let text = |name: &str| quote(rule.get(name).and_then(Value::as_str).unwrap_or(""));
    let pointer = |name: &str, go_type: &str| match rule.get(name) {
        Some(value) if !value.is_null() => format!("({go_type})(0xc000000000)"),
        _ => format!("({go_type})(nil)"),
    };
    format!(
        "apiextensions.ValidationRule{{Rule:{}, Message:{}, MessageExpression:{}, Reason:{}, FieldPath:{}, OptionalOldSelf:{}}}",
        text("rule"),
        text("message"),
        text("messageExpression"),
        pointer("reason", "*apiextensions.FieldValueErrorReason"),
        text("fieldPath"),
        pointer("optionalOldSelf", "*bool"),
    )
}

#[cfg(test)]
#[path = "openapi_rules_tests.rs"]
mod tests;
