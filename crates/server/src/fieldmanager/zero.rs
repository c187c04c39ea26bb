//! The typed zero value of a kind as kube's `runtime.DefaultUnstructuredConverter`
//! renders a freshly made Go object (`scope.Creater.New(kind)`): the "live
//! object" a create is compared against. Non-pointer structs are always
//! present, `metav1.Time` is null, values without `omitempty` show their
//! zero (a slice or map: null, as a Pod's `spec.containers`). It matters for
//! which containers count as added (`".": {}`): a create records no
//! `f:containers` `"."` because the zero Pod already has the field.

use serde_json::{Map, Value};

use crate::protobuf::schema::{self, FieldType, Message, Presence, Scalar, Shape, WellKnown};

/// Nesting bound (recursive definitions go through pointers, but be safe).
const MAX_DEPTH: usize = 24;

/// `{}` for kinds without a protobuf message (custom resources).
pub fn zero_object(api_version: &str, kind: &str) -> Value {
    let Ok(schema) = schema::schema() else {
        return Value::Object(Map::new());
    };
    match schema.message_for(api_version, kind) {
        Some(message) => Value::Object(zero_message(schema, message, 0)),
        None => Value::Object(Map::new()),
    }
}

fn zero_message(schema: &schema::Schema, message: &Message, depth: usize) -> Map<String, Value> {
    let mut out = Map::new();
    if depth > MAX_DEPTH {
        return out;
    }
    for field in &message.fields {
        if field.json.is_empty() {
            // An inline embedded struct: its fields are the parent's.
            if let FieldType::Message(index) = field.ty {
                if let Some(embedded) = schema.message(index) {
                    out.extend(zero_message(schema, embedded, depth + 1));
                }
            }
            continue;
        }
        let value = match (field.shape, field.presence, field.ty) {
            (Shape::Repeated | Shape::Map, Presence::Required, _) => Some(Value::Null),
            (Shape::Repeated | Shape::Map, _, _) => None,
            (Shape::Single, Presence::Pointer, _) => None,
            (Shape::Single, presence, FieldType::Message(index)) => schema
                .message(index)
                .and_then(|inner| zero_struct(schema, inner, presence, depth)),
            (Shape::Single, Presence::Required, FieldType::Scalar(scalar)) => Some(match scalar {
                Scalar::String => Value::String(String::new()),
                Scalar::Bytes => Value::Null,
                Scalar::Bool => Value::Bool(false),
                _ => Value::from(0),
            }),
            (Shape::Single, _, FieldType::Scalar(_)) => None,
        };
        if let Some(value) = value {
            out.insert(field.json.clone(), value);
        }
    }
    out
}

/// A non-pointer struct field: present whatever its tag says (`omitempty`
/// does not apply to structs), in its custom JSON form for well-known types.
fn zero_struct(
    schema: &schema::Schema,
    message: &Message,
    presence: Presence,
    depth: usize,
) -> Option<Value> {
    match message.well_known {
        Some(WellKnown::Time | WellKnown::MicroTime) => Some(Value::Null),
        Some(WellKnown::Quantity) => Some(Value::String("0".into())),
        Some(WellKnown::IntOrString) => Some(Value::from(0)),
        Some(WellKnown::Duration) => Some(Value::String("0s".into())),
        Some(WellKnown::StringList) => (presence == Presence::Required).then_some(Value::Null),
        Some(_) => (presence == Presence::Required).then_some(Value::Null),
        None => Some(Value::Object(zero_message(schema, message, depth + 1))),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    #[test]
    fn slices_and_maps_without_omitempty_are_null() {
        let pod = super::zero_object("v1", "Pod");
        assert_eq!(pod["spec"]["containers"], json!(null));
        assert!(pod["spec"].get("initContainers").is_none());
        let role = super::zero_object("rbac.authorization.k8s.io/v1", "ClusterRole");
        assert_eq!(role["rules"], json!(null));
        let deployment = super::zero_object("apps/v1", "Deployment");
        assert_eq!(
            deployment["spec"]["template"]["spec"]["containers"],
            json!(null)
        );
    }
}
