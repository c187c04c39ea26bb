//! Sample objects built from the message table: every field of a kind set to
//! a non-zero value in its kube JSON form (nesting bounded). Used by the
//! cross-checks against independent decoders and as fuzzing seeds.

use serde_json::{json, Map, Value};

use super::schema::{schema, Field, FieldType, Scalar, Schema, Shape, WellKnown};

/// How deep sample messages nest (recursive messages such as JSONSchemaProps stop here).
const SAMPLE_DEPTH: usize = 5;

/// A sample object of `kind` in `api_version` (with both type fields), or
/// `None` when the kind has no protobuf message.
pub fn sample_object(api_version: &str, kind: &str) -> Option<Value> {
    let schema = schema().ok()?;
    let message = schema.message_for(api_version, kind)?;
    let index = schema.index_of(&message.name)?;
    let mut object = Map::new();
    object.insert("kind".into(), json!(kind));
    object.insert("apiVersion".into(), json!(api_version));
    if let Value::Object(fields) = sample_message(schema, index, 0) {
        object.extend(fields);
    }
    Some(Value::Object(object))
}

/// Every (apiVersion, kind) with a protobuf message, sorted.
pub fn kinds() -> Vec<(String, String)> {
    let Ok(schema) = schema() else {
        return Vec::new();
    };
    let mut kinds = schema.kinds();
    kinds.sort();
    kinds
}

fn sample_message(schema: &Schema, index: usize, depth: usize) -> Value {
    let Some(message) = schema.message(index) else {
        return Value::Null;
    };
    if let Some(well_known) = message.well_known {
        return sample_well_known(schema, well_known, depth);
    }
    let mut object = Map::new();
    for field in &message.fields {
        if field.json.is_empty() {
            // `json:",inline"`: the embedded message's fields sit in this object.
            if let FieldType::Message(inner) = field.ty {
                if let Value::Object(fields) = sample_message(schema, inner, depth + 1) {
                    object.extend(fields);
                }
            }
            continue;
        }
        if let Some(value) = sample_field(schema, field, depth) {
            object.insert(field.json.clone(), value);
        }
    }
    Value::Object(object)
}

fn sample_field(schema: &Schema, field: &Field, depth: usize) -> Option<Value> {
    let one = match field.ty {
        FieldType::Scalar(scalar) => sample_scalar(scalar),
        FieldType::Message(_) if depth >= SAMPLE_DEPTH => return None,
        FieldType::Message(index) => sample_message(schema, index, depth + 1),
    };
    Some(match field.shape {
        Shape::Single => one,
        Shape::Repeated => Value::Array(vec![one]),
        Shape::Map => json!({ "key": one }),
    })
}

fn sample_scalar(scalar: Scalar) -> Value {
    match scalar {
        Scalar::String => json!("text"),
        Scalar::Bytes => json!("AQI="),
        Scalar::Bool => json!(true),
        Scalar::Int32 | Scalar::Int64 | Scalar::Uint32 | Scalar::Uint64 => json!(3),
        Scalar::Double | Scalar::Float => json!(1.5),
    }
}

fn sample_well_known(schema: &Schema, well_known: WellKnown, depth: usize) -> Value {
    const PROPS: &str = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps";
    let props = || match schema.index_of(PROPS) {
        Some(index) if depth < SAMPLE_DEPTH => sample_message(schema, index, depth + 1),
        _ => json!({}),
    };
    match well_known {
        WellKnown::IntOrString => json!("25%"),
        WellKnown::Quantity => json!("500m"),
        WellKnown::Time => json!("2024-01-02T03:04:05Z"),
        WellKnown::MicroTime => json!("2024-01-02T03:04:05.123456Z"),
        WellKnown::Duration => json!("1m30s"),
        WellKnown::RawExtension | WellKnown::Json => json!({"embedded": [1, "two"]}),
        WellKnown::FieldsV1 => json!({"f:metadata": {"f:name": {}}}),
        WellKnown::JsonOrArray => props(),
        WellKnown::JsonOrBool => json!(true),
        WellKnown::JsonOrStringArray => json!(["a"]),
        WellKnown::StringList => json!(["a"]),
    }
}
