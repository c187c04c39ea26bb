//! DRA's CEL selectors compiled as kube compiles them
//! (`staging/src/k8s.io/dynamic-resource-allocation/cel/compile.go`
//! `CompileCELExpression`, called by `pkg/apis/resource/validation`
//! `validateCELSelector` with the new-expressions environment): parsed and
//! type-checked with the `device` variable (`kubernetes.DRADevice`:
//! `driver`, `attributes` (domain → id → a value of unknown type) and
//! `capacity` (domain → id → quantity)), the result a bool (or unknown),
//! and the worst-case cost (`sizeEstimator`: strings and maps bounded by
//! the device's limits) at most `CELSelectorExpressionMaxCost`.

use std::sync::{Arc, LazyLock};

use serde_json::{json, Value};

use super::field;
use crate::cel_env::check::{Declarations, FieldTable, Object, Type};
use crate::crd::cel_syntax::{self, Expected, TypedError};
use crate::status::FieldError;

/// `resource.CELSelectorExpressionMaxCost`.
const MAX_COST: u64 = 1_000_000;
/// `resource.ResourceSliceMaxAttributesAndCapacitiesPerDevice`.
const MAP_MAX: u64 = 32;

/// The `device` variable's type.
fn device_type() -> Type {
    let mut fields = FieldTable::default();
    fields.0.insert("driver".into(), Type::String);
    fields.0.insert(
        "attributes".into(),
        Type::map(Type::String, Type::map(Type::String, Type::Dyn)),
    );
    fields.0.insert(
        "capacity".into(),
        Type::map(
            Type::String,
            Type::map(
                Type::String,
                Type::Opaque("kubernetes.Quantity", Vec::new()),
            ),
        ),
    );
    Type::Object(Object {
        name: Arc::from("kubernetes.DRADevice"),
        fields: Arc::new(fields),
    })
}

/// The sizes the cost estimate knows (`attributeType`, `driverType`, the
/// maps' `MaxElements`), as a schema of the device.
static DEVICE_SCHEMA: LazyLock<Value> = LazyLock::new(|| {
    let map = |value: Value| json!({"type": "object", "maxProperties": MAP_MAX, "additionalProperties": value});
    json!({
        "type": "object",
        "properties": {
            "driver": {"type": "string", "maxLength": 63},
            "attributes": map(map(json!({"type": "string", "maxLength": 64}))),
            "capacity": map(map(json!({}))),
        },
    })
});

/// The error kube reports for the selector `expression` at `path`, if any.
pub fn selector_error(expression: &str, path: &str) -> Option<FieldError> {
    let declarations = Declarations::new().variable("device", device_type());
    let checked = cel_syntax::check_typed_then(expression, &declarations, Expected::Any, |expr| {
        crate::cel_env::cost_estimate::estimate_with_variables(expr, &[("device", &DEVICE_SCHEMA)])
    });
    match checked {
        Err(TypedError::Compile(error)) => Some(field::invalid(
            path,
            expression,
            format!("compilation failed: {error}"),
        )),
        Err(TypedError::ResultType) => None,
        Ok((Type::Bool | Type::Dyn, cost)) => {
            (cost.max > MAX_COST).then(|| field::forbidden(path, "too complex, exceeds cost limit"))
        }
        Ok((other, _)) => Some(field::invalid(
            path,
            expression,
            format!("must evaluate to bool or the unknown type, not {other}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(expression: &str) -> Option<String> {
        selector_error(expression, "spec.selectors[0].cel.expression")
            .map(|error| error.to_string())
    }

    #[test]
    fn selectors_compile_with_the_device_variable() {
        for good in [
            r#"device.driver == "gpu.example.com""#,
            r#"device.attributes["gpu.example.com"].model == "a100""#,
            r#"device.capacity["gpu.example.com"].memory.compareTo(quantity("10Gi")) >= 0"#,
            r#"device.attributes["gpu.example.com"].cores > 4"#,
            r#"device.attributes["dra.example.com"].exists(k, k.startsWith("x"))"#,
            r#"cel.bind(dra, device.attributes["dra.example.com"], dra.a && dra.b)"#,
            r#"device.attributes["dra.example.com"].driverVersion.isGreaterThan(semver("1.0.0"))"#,
        ] {
            assert_eq!(text(good), None, "{good}");
        }
    }

    #[test]
    fn bad_selectors_are_reported_as_kube_reports_them() {
        assert_eq!(
            text("device.driver"),
            Some("spec.selectors[0].cel.expression: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string".into())
        );
        assert_eq!(
            text("noSuchVar"),
            Some("spec.selectors[0].cel.expression: Invalid value: \"noSuchVar\": compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^".into())
        );
        assert_eq!(
            text("device.noSuchField"),
            Some("spec.selectors[0].cel.expression: Invalid value: \"device.noSuchField\": compilation failed: ERROR: <input>:1:7: undefined field 'noSuchField'\n | device.noSuchField\n | ......^".into())
        );
        let list = (1..=20)
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ");
        // 20^4 iterations of a few operations: about 1.9 million.
        let costly = format!(
            r#"[{list}].all(a, [{list}].all(b, [{list}].all(c, [{list}].all(d, a + b + c + d > 0))))"#
        );
        let cheap = format!(r#"[{list}].all(a, [{list}].all(b, a + b > 0))"#);
        assert_eq!(text(&cheap), None);
        assert_eq!(
            text(&costly),
            Some(
                "spec.selectors[0].cel.expression: Forbidden: too complex, exceeds cost limit"
                    .into()
            )
        );
    }
}
