//! Value validation of custom resources against their version's schema:
//! kube-openapi's `validate.SchemaValidator` (the checks, their order and
//! their messages, `in body` included) as apiextensions reports it
//! (`kubeOpenAPIResultToFieldErrors`: each failure a field error on its
//! path, with kube's cause type), plus the uniqueness of
//! `x-kubernetes-list-type` sets and maps (`structural/listtype`).
//!
//! Where Go iterates a map (properties, their errors' order) this walks the
//! schema's sorted properties: the errors are kube's, their order is stable.

use serde_json::{Map, Value};

use super::schema::additional;
use crate::go::float::format_g;
use crate::go::strconv::quote;
use crate::schema::formats;
use crate::schema::value_rules::{types_of, ListType, ValueRules, NO_RULES};
use crate::schema::{Model, NodeId};
use crate::status::{FieldError, FieldErrorKind};

/// `ValidateCustomResource` plus `ValidateListSetsAndMaps`: every failure of
/// `object` against `schema`.
pub fn validate(object: &Value, model: &Model) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if let Some(root) = model.schema_root() {
        node(object, model, root, "", &mut errors);
    }
    errors
}

/// On update (`CRDValidationRatcheting`, on by default since 1.30): a
/// failure on a value the update left as it was is not reported.
pub fn validate_update(object: &Value, old: &Value, model: &Model) -> Vec<FieldError> {
    validate(object, model)
        .into_iter()
        .filter(|error| {
            let path = error.field.as_str();
            let unchanged = match error.kind {
                // A missing required field: ratcheted when its parent is unchanged.
                FieldErrorKind::Required => {
                    let parent = path.rsplit_once('.').map_or("", |(parent, _)| parent);
                    at(object, parent).is_some() && at(object, parent) == at(old, parent)
                }
                _ => at(object, path).is_some() && at(object, path) == at(old, path),
            };
            !unchanged
        })
        .collect()
}

/// The value at a field path as kube prints it (`spec.ports[0].name`).
fn at<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    if path.is_empty() {
        return Some(value);
    }
    let mut current = value;
    for segment in path.split('.') {
        let (name, indexes) = match segment.find('[') {
            Some(open) => (&segment[..open], &segment[open..]),
            None => (segment, ""),
        };
        if !name.is_empty() {
            current = current.get(name)?;
        }
        for index in indexes.split('[').skip(1) {
            let index: usize = index.strip_suffix(']')?.parse().ok()?;
            current = current.get(index)?;
        }
    }
    Some(current)
}

/// `SchemaValidator.Validate`: the type, the combinators, string, format,
/// number, array, enum and object checks, in that order.
fn node(value: &Value, model: &Model, id: NodeId, path: &str, errors: &mut Vec<FieldError>) {
    let values = model.values(id);
    let rules = values.rules.as_deref().unwrap_or(&NO_RULES);
    let types = types_of(model.node(id));
    if value.is_null() {
        if !types.is_empty() && !values.nullable {
            errors.push(invalid_type(path, types, "null"));
        }
        if !rules.enums().is_empty() {
            errors.push(enum_failure(path, value, rules.enums()));
        }
        return;
    }
    if !types.is_empty() || !rules.format_name().is_empty() {
        if let Some(error) = type_check(value, types, rules, path) {
            errors.push(error);
        }
    }
    combinators(value, model, rules, path, errors);
    match value {
        Value::String(text) => {
            if let Some(error) = string_checks(text, rules, path) {
                errors.push(error);
            } else if formats::is_string_format(rules.format_name())
                && !formats::validates(rules.format_name(), text)
            {
                errors.push(invalid_type(path, rules.format_name(), text));
            }
        }
        Value::Number(_) => number_checks(value, rules, path, errors),
        Value::Array(items) => array_checks(items, model, id, rules, path, errors),
        _ => {}
    }
    if !rules.enums().is_empty() && !rules.enums().iter().any(|e| enum_equal(value, e)) {
        errors.push(enum_failure(path, value, rules.enums()));
    }
    if let Value::Object(map) = value {
        object_checks(map, model, id, rules, path, errors);
    }
}

/// The JSON type of a decoded value and the format Go gives it.
fn json_type(value: &Value) -> (&'static str, &'static str) {
    match value {
        Value::Null => ("null", ""),
        Value::Bool(_) => ("boolean", ""),
        Value::Number(number) if number.is_i64() => ("integer", "int64"),
        Value::Number(_) => ("number", "float64"),
        Value::String(_) => ("string", ""),
        Value::Array(_) => ("array", ""),
        Value::Object(_) => ("object", ""),
    }
}

fn has_type(types: &str, name: &str) -> bool {
    types.split(',').any(|t| t == name)
}

/// `swag.IsFloat64AJSONInteger`.
fn is_json_integer(f: f64) -> bool {
    f.is_finite() && f.fract() == 0.0 && f.abs() <= 9_007_199_254_740_992.0
}

/// `typeValidator.Validate`.
fn type_check(value: &Value, types: &str, rules: &ValueRules, path: &str) -> Option<FieldError> {
    let (found, found_format) = json_type(value);
    let float_int = found == "number"
        && value.as_f64().is_some_and(is_json_integer)
        && has_type(types, "integer");
    let int_float = found == "integer" && has_type(types, "number");
    let textual = matches!(value, Value::String(_) | Value::Array(_));
    let format_matches = rules.format_name().is_empty()
        || has_type(types, found)
        || found_format == rules.format_name()
        || float_int
        || int_float;
    if !textual && !format_matches {
        return Some(invalid_type(path, rules.format_name(), found_format));
    }
    let numeric = has_type(types, "number") || has_type(types, "integer");
    if !numeric && !rules.format_name().is_empty() && textual {
        return None;
    }
    if !(has_type(types, found) || float_int || int_float) {
        return Some(invalid_type(path, types, found));
    }
    None
}

/// `errors.InvalidType` with a string value, reported as `TypeInvalid`.
fn invalid_type(path: &str, type_name: &str, value: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::TypeInvalid(quote(value)),
        field: field_of(path),
        detail: format!(
            "{path} in body must be of type {type_name}: {}",
            quote(value)
        ),
    }
}

/// `field.Invalid(errPath, value, message)` for every other failure.
fn invalid(path: &str, value: String, message: String) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(value),
        field: field_of(path),
        detail: message,
    }
}

/// The field path of a kube-openapi error name (`.spec.x` or `spec.x`);
/// the root is a nil path.
fn field_of(path: &str) -> String {
    match path.trim_start_matches('.') {
        "" => "<nil>".to_string(),
        trimmed => trimmed.to_string(),
    }
}

/// `stringValidator.Validate`: the first of maxLength, minLength, pattern.
fn string_checks(text: &str, rules: &ValueRules, path: &str) -> Option<FieldError> {
    let length = text.chars().count() as i64;
    if let Some(max) = rules.text().max_length.filter(|max| length > *max) {
        return Some(FieldError {
            kind: FieldErrorKind::TooLong(usize::try_from(max).unwrap_or(0)),
            field: field_of(path),
            detail: String::new(),
        });
    }
    if let Some(min) = rules.text().min_length.filter(|min| length < *min) {
        return Some(invalid(
            path,
            quote(text),
            format!("{path} in body should be at least {min} chars long"),
        ));
    }
    let pattern = rules.text().pattern.as_ref()?;
    let shown = match &pattern.compiled {
        Ok(regex) if regex.is_match(text) => return None,
        Ok(_) => pattern.source.clone(),
        Err(error) => format!("{}, but pattern is invalid: {error}", pattern.source),
    };
    Some(invalid(
        path,
        quote(text),
        format!("{path} in body should match '{shown}'"),
    ))
}

/// A number as Go's `%v` prints the decoded value (int64 or float64).
fn number_text(value: &Value) -> String {
    match value.as_i64() {
        Some(int) => int.to_string(),
        None => format_g(value.as_f64().unwrap_or(f64::NAN), false),
    }
}

/// `numberValidator.Validate`: multipleOf, minimum, maximum; integers are
/// compared with the bound truncated to an integer, as kube does.
fn number_checks(value: &Value, rules: &ValueRules, path: &str, errors: &mut Vec<FieldError>) {
    let shown = number_text(value);
    let int = value.as_i64();
    let float = value.as_f64().unwrap_or(f64::NAN);
    if let Some(factor) = rules.num().multiple_of {
        let failure = if factor < 0.0 {
            Some(format!(
                "factor MultipleOf declared for {path} must be positive: {}",
                format_g(factor, false)
            ))
        } else {
            match int {
                Some(int) if factor as i64 != 0 => {
                    let factor = factor as i64;
                    (int % factor != 0)
                        .then(|| format!("{path} in body should be a multiple of {factor}"))
                }
                _ => {
                    let multiple = if factor < 1.0 {
                        1.0 / factor * float
                    } else {
                        float / factor
                    };
                    (!is_json_integer(multiple)).then(|| {
                        format!(
                            "{path} in body should be a multiple of {}",
                            format_g(factor, false)
                        )
                    })
                }
            }
        };
        if let Some(message) = failure {
            errors.push(invalid(path, shown.clone(), message));
        }
    }
    let bound_text = |bound: f64| match int {
        Some(_) => (bound as i64).to_string(),
        None => format_g(bound, false),
    };
    if let Some(min) = rules.num().minimum {
        let below = match int {
            Some(int) => int < min as i64 || (rules.num().exclusive_minimum && int == min as i64),
            None => float < min || (rules.num().exclusive_minimum && float == min),
        };
        if below {
            let relation = if rules.num().exclusive_minimum {
                "greater than"
            } else {
                "greater than or equal to"
            };
            errors.push(invalid(
                path,
                shown.clone(),
                format!("{path} in body should be {relation} {}", bound_text(min)),
            ));
        }
    }
    if let Some(max) = rules.num().maximum {
        let above = match int {
            Some(int) => int > max as i64 || (rules.num().exclusive_maximum && int == max as i64),
            None => float > max || (rules.num().exclusive_maximum && float == max),
        };
        if above {
            let relation = if rules.num().exclusive_maximum {
                "less than"
            } else {
                "less than or equal to"
            };
            errors.push(invalid(
                path,
                shown,
                format!("{path} in body should be {relation} {}", bound_text(max)),
            ));
        }
    }
}

/// `schemaSliceValidator.Validate`, then the list type's uniqueness.
fn array_checks(
    items: &[Value],
    model: &Model,
    id: NodeId,
    rules: &ValueRules,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    if let Some(item_schema) = model.node(id).items {
        for (index, item) in items.iter().enumerate() {
            node(
                item,
                model,
                item_schema,
                &format!("{path}[{index}]"),
                errors,
            );
        }
    }
    let size = items.len() as i64;
    if let Some(min) = rules.coll().min_items.filter(|min| size < *min) {
        errors.push(invalid(
            path,
            size.to_string(),
            format!("{path} in body should have at least {min} items"),
        ));
    }
    if let Some(max) = rules.coll().max_items.filter(|max| size > *max) {
        errors.push(FieldError {
            kind: FieldErrorKind::TooMany(size, max),
            field: field_of(path),
            detail: String::new(),
        });
    }
    if rules.coll().unique_items
        && items
            .iter()
            .enumerate()
            .any(|(index, item)| items[..index].contains(item))
    {
        errors.push(invalid(
            path,
            quote(""),
            format!("{path} in body shouldn't contain duplicates"),
        ));
    }
    list_uniqueness(items, rules.list(), path, errors);
}

/// `validateListSetsAndMaps`: a set's items, a map's key tuples, each once.
fn list_uniqueness(items: &[Value], list: &ListType, path: &str, errors: &mut Vec<FieldError>) {
    if matches!(list, ListType::Map(_)) {
        if let Some(index) = items.iter().position(|x| !x.is_object() && !x.is_null()) {
            errors.push(invalid(
                &format!("{path}[{index}]"),
                bad_value(&items[index]),
                "must be an object for an array of list-type map".to_string(),
            ));
            return;
        }
    }
    let keys: Vec<Value> = match list {
        ListType::Atomic => return,
        ListType::Set => items.to_vec(),
        ListType::Map(names) => items
            .iter()
            .map(|item| {
                let mut key = Map::new();
                for name in names {
                    if let Some(field) = item.get(name) {
                        key.insert(name.clone(), field.clone());
                    }
                }
                Value::Object(key)
            })
            .collect(),
    };
    // Only the first repeat of each value is reported.
    for (index, key) in keys.iter().enumerate() {
        if keys[..index].iter().filter(|seen| *seen == key).count() == 1 {
            errors.push(FieldError {
                kind: FieldErrorKind::Duplicate(bad_value(key)),
                field: format!("{}[{index}]", field_of(path)),
                detail: String::new(),
            });
        }
    }
}

/// `objectValidator.Validate`: min/maxProperties (either ends the checks),
/// additional properties, properties, required.
fn object_checks(
    map: &Map<String, Value>,
    model: &Model,
    id: NodeId,
    rules: &ValueRules,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let count = map.len() as i64;
    if let Some(min) = rules.coll().min_properties.filter(|min| count < *min) {
        errors.push(invalid(
            path,
            count.to_string(),
            format!("{path} in body should have at least {min} properties"),
        ));
        return;
    }
    if let Some(max) = rules.coll().max_properties.filter(|max| count > *max) {
        errors.push(FieldError {
            kind: FieldErrorKind::TooMany(count, max),
            field: field_of(path),
            detail: String::new(),
        });
        return;
    }
    let schema = model.node(id);
    if let Some(additional) = additional(model, id) {
        for (key, field) in map {
            if schema.property(key).is_none() {
                node(field, model, additional, &format!("{path}.{key}"), errors);
            }
        }
    }
    for property in schema.properties.iter().flatten() {
        if let Some(field) = map.get(&*property.name) {
            let nested = if path.is_empty() {
                property.name.to_string()
            } else {
                format!("{path}.{}", property.name)
            };
            node(field, model, property.node, &nested, errors);
        }
    }
    for name in &rules.coll().required {
        if !map.contains_key(name) {
            errors.push(FieldError::required(
                &field_of(&format!("{path}.{name}")),
                "",
            ));
        }
    }
}

/// `schemaPropsValidator.Validate`: allOf, anyOf, oneOf and not. Where kube
/// keeps the failures of the alternative with the most passing checks, this
/// keeps those of the alternative with the fewest failures.
fn combinators(
    value: &Value,
    model: &Model,
    rules: &ValueRules,
    path: &str,
    errors: &mut Vec<FieldError>,
) {
    let run = |schema: &NodeId| {
        let mut found = Vec::new();
        node(value, model, *schema, path, &mut found);
        found
    };
    let fewest = |results: Vec<Vec<FieldError>>| {
        results.into_iter().min_by_key(Vec::len).unwrap_or_default()
    };
    let composite = |message: String| invalid("", quote(""), message);
    if !rules.junct().any_of.is_empty() {
        let results: Vec<Vec<FieldError>> = rules.junct().any_of.iter().map(run).collect();
        if !results.iter().any(Vec::is_empty) {
            errors.push(composite(format!(
                "{} must validate at least one schema (anyOf)",
                quote(path)
            )));
            errors.extend(fewest(results));
        }
    }
    if !rules.junct().one_of.is_empty() {
        let results: Vec<Vec<FieldError>> = rules.junct().one_of.iter().map(run).collect();
        let valid = results.iter().filter(|found| found.is_empty()).count();
        if valid != 1 {
            let why = if valid == 0 {
                "Found none valid".to_string()
            } else {
                format!("Found {valid} valid alternatives")
            };
            errors.push(composite(format!(
                "{} must validate one and only one schema (oneOf). {why}",
                quote(path)
            )));
            if valid == 0 {
                errors.extend(fewest(results));
            }
        }
    }
    if !rules.junct().all_of.is_empty() {
        let mut valid = 0;
        for schema in &rules.junct().all_of {
            let found = run(schema);
            valid += usize::from(found.is_empty());
            errors.extend(found);
        }
        if valid != rules.junct().all_of.len() {
            let none = if valid == 0 { ". None validated" } else { "" };
            errors.push(composite(format!(
                "{} must validate all the schemas (allOf){none}",
                quote(path)
            )));
        }
    }
    if let Some(not) = rules.junct().not.as_ref() {
        if run(not).is_empty() {
            errors.push(composite(format!(
                "{} must not validate the schema (not)",
                quote(path)
            )));
        }
    }
}

/// `reflect.DeepEqual` after converting the value to the enum entry's type:
/// numbers compare as numbers.
fn enum_equal(value: &Value, entry: &Value) -> bool {
    match (value, entry) {
        (Value::Number(a), Value::Number(b)) => a.as_f64() == b.as_f64(),
        _ => value == entry,
    }
}

/// `field.NotSupported(path, value, enum)`: strings as they are, anything
/// else as its JSON.
fn enum_failure(path: &str, value: &Value, enumeration: &[Value]) -> FieldError {
    let supported: Vec<String> = enumeration
        .iter()
        .map(|entry| match entry {
            Value::String(text) => quote(text),
            other => quote(&other.to_string()),
        })
        .collect();
    FieldError {
        kind: FieldErrorKind::NotSupported(bad_value(value), supported),
        field: field_of(path),
        detail: String::new(),
    }
}

/// A bad value as `field.Error.ErrorBody` prints it: numbers and booleans
/// with `%v`, strings quoted, null as "null", the rest with `%#v`.
pub(crate) fn bad_value(value: &Value) -> String {
    match value {
        Value::Null => quote("null"),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(_) => number_text(value),
        Value::String(text) => quote(text),
        Value::Array(_) | Value::Object(_) => sharp_v(value),
    }
}

/// Go's `%#v` of a decoded JSON value.
fn sharp_v(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".to_string(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(_) => number_text(value),
        Value::String(text) => quote(text),
        Value::Array(items) => {
            let inner: Vec<String> = items.iter().map(sharp_v).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        Value::Object(map) => {
            let inner: Vec<String> = map
                .iter()
                .map(|(key, field)| format!("{}:{}", quote(key), sharp_v(field)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

#[cfg(test)]
#[path = "value_check_tests.rs"]
mod tests;
