//! kube's quantity library (`apiserver/pkg/cel/library/quantity.go`):
//! `quantity(string)`, `isQuantity(string)`, and on a quantity
//! `isLessThan`, `isGreaterThan`, `compareTo`, `sign()`, with `==`
//! comparing values (`1` equals `1000m`), as `resource.Quantity.Cmp`; the
//! arithmetic `add` and `sub` (of a quantity or an int), `isInteger()`,
//! `asInteger()` and `asApproximateFloat()`.

use std::sync::Arc;

use cel::common::types::{Type, INT_TYPE, STRING_TYPE};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};
use crate::quantity::Quantity;

/// The CEL type name kube gives quantities.
const TYPE_NAME: &str = "kubernetes.Quantity";

fn quantity_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

/// A `resource.Quantity` as a CEL value.
#[derive(Debug, Clone)]
struct CelQuantity(Quantity);

impl PartialEq for CelQuantity {
    fn eq(&self, other: &Self) -> bool {
        self.0.cmp_value(&other.0).is_eq()
    }
}

impl Eq for CelQuantity {}

impl Opaque for CelQuantity {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(quantity_type())?;
    env.add_overload(
        "quantity",
        "string_to_quantity",
        vec![STRING_TYPE],
        overload!(parse),
    )?;
    env.add_overload(
        "isQuantity",
        "is_quantity_string",
        vec![STRING_TYPE],
        overload!(is_quantity),
    )?;
    let quantity = quantity_type;
    env.add_member_overload(
        "isLessThan",
        "quantity_is_less_than",
        quantity(),
        vec![quantity()],
        overload!(is_less_than),
    )?;
    env.add_member_overload(
        "isGreaterThan",
        "quantity_is_greater_than",
        quantity(),
        vec![quantity()],
        overload!(is_greater_than),
    )?;
    env.add_member_overload(
        "compareTo",
        "quantity_compare_to",
        quantity(),
        vec![quantity()],
        overload!(compare_to),
    )?;
    env.add_member_overload("sign", "quantity_sign", quantity(), vec![], overload!(sign))?;
    for (name, id, argument, function) in [
        ("add", "quantity_add", quantity(), overload!(add)),
        ("add", "quantity_add_int", INT_TYPE, overload!(add)),
        ("sub", "quantity_sub", quantity(), overload!(sub)),
        ("sub", "quantity_sub_int", INT_TYPE, overload!(sub)),
    ] {
        env.add_member_overload(name, id, quantity(), vec![argument], function)?;
    }
    for (name, id, function) in [
        ("isInteger", "quantity_is_integer", overload!(is_integer)),
        ("asInteger", "quantity_get_integer", overload!(as_integer)),
        (
            "asApproximateFloat",
            "quantity_get_float",
            overload!(as_approximate_float),
        ),
    ] {
        env.add_member_overload(name, id, quantity(), vec![], function)?;
    }
    Ok(())
}

fn text<'a>(function: &str, value: &'a Value) -> Result<&'a str, ExecutionError> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(no_such_overload(function)),
    }
}

fn quantity<'a>(function: &str, value: &'a Value) -> Result<&'a Quantity, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelQuantity>()
            .map(|quantity| &quantity.0)
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

fn parse(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    let parsed = Quantity::parse(text("quantity", input)?)
        .map_err(|error| ExecutionError::function_error("quantity", error))?;
    Ok(Value::Opaque(Arc::new(CelQuantity(parsed))))
}

fn is_quantity(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    Ok(Value::Bool(
        Quantity::parse(text("isQuantity", input)?).is_ok(),
    ))
}

fn ordering(function: &str, args: &[Value]) -> Result<std::cmp::Ordering, ExecutionError> {
    let [left, right] = arguments(args)?;
    Ok(quantity(function, left)?.cmp_value(quantity(function, right)?))
}

fn is_less_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ordering("isLessThan", args)?.is_lt()))
}

fn is_greater_than(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(ordering("isGreaterThan", args)?.is_gt()))
}

fn compare_to(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Int(ordering("compareTo", args)? as i64))
}

fn sign(args: &[Value]) -> Result<Value, ExecutionError> {
    let [value] = arguments(args)?;
    Ok(Value::Int(i64::from(quantity("sign", value)?.sign())))
}

/// The operand of `add`/`sub`: a quantity, or an int as
/// `resource.NewQuantity(n, DecimalExponent)`.
fn operand(function: &str, value: &Value) -> Result<Quantity, ExecutionError> {
    match value {
        Value::Int(count) => Ok(Quantity::from_count(*count)),
        other => quantity(function, other).cloned(),
    }
}

fn wrap(value: Quantity) -> Value {
    Value::Opaque(Arc::new(CelQuantity(value)))
}

fn add(args: &[Value]) -> Result<Value, ExecutionError> {
    let [left, right] = arguments(args)?;
    Ok(wrap(quantity("add", left)?.add(&operand("add", right)?)))
}

fn sub(args: &[Value]) -> Result<Value, ExecutionError> {
    let [left, right] = arguments(args)?;
    Ok(wrap(quantity("sub", left)?.sub(&operand("sub", right)?)))
}

fn is_integer(args: &[Value]) -> Result<Value, ExecutionError> {
    let [value] = arguments(args)?;
    Ok(Value::Bool(
        quantity("isInteger", value)?.as_i64().is_some(),
    ))
}

/// `quantityGetInt`: kube's error when the value is not a whole `int64`.
fn as_integer(args: &[Value]) -> Result<Value, ExecutionError> {
    let [value] = arguments(args)?;
    quantity("asInteger", value)?
        .as_i64()
        .map(Value::Int)
        .ok_or_else(|| {
            ExecutionError::function_error("asInteger", "cannot convert value to integer")
        })
}

fn as_approximate_float(args: &[Value]) -> Result<Value, ExecutionError> {
    let [value] = arguments(args)?;
    Ok(Value::Float(
        quantity("asApproximateFloat", value)?.as_approximate_f64(),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/quantity_test.go` (`TestQuantity`) this
    /// port covers.
    #[test]
    fn kubes_quantity_functions() {
        let truths = [
            "isQuantity('20')",
            "isQuantity('20M')",
            "isQuantity('20Mi')",
            "!isQuantity('20Mo')",
            "!isQuantity('')",
            "quantity('50k') == quantity('50000')",
            "quantity('1') == quantity('1000m')",
            "quantity('200M') != quantity('200Mi')",
            "quantity('50M').isLessThan(quantity('100M'))",
            "!quantity('100M').isLessThan(quantity('50M'))",
            "quantity('50Mi').isGreaterThan(quantity('50M'))",
            "quantity('200M').compareTo(quantity('0.2G')) == 0",
            "quantity('50M').compareTo(quantity('50Mi')) == -1",
            "quantity('50Mi').compareTo(quantity('50M')) == 1",
            "quantity('50M').sign() == 1",
            "quantity('-50M').sign() == -1",
            "quantity('0').sign() == 0",
            "quantity('50k').add(quantity('20')) == quantity('50.02k')",
            "quantity('50k').add(20) == quantity('50020')",
            "quantity('50k').sub(quantity('20')) == quantity('49.98k')",
            "quantity('50k').sub(20) == quantity('49980')",
            "quantity('50k').add(quantity('-50k')) == quantity('0')",
            "quantity('50k').sub(quantity('50k')).sign() == 0",
            "quantity('50k').isInteger()",
            "!quantity('50m').isInteger()",
            "!quantity('9999999999999999999999999999999').isInteger()",
            "quantity('50k').asInteger() == 50000",
            "quantity('1Mi').asInteger() == 1048576",
            "quantity('50k').asApproximateFloat() == 50000.0",
            "quantity('50m').asApproximateFloat() == 0.05",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn a_fraction_has_no_integer_value() {
        let error = eval("quantity('50m').asInteger()", &[]).expect_err("fraction");
        assert!(error.contains("cannot convert value to integer"), "{error}");
    }

    #[test]
    fn a_malformed_quantity_is_an_error() {
        let error = eval("quantity('20Mo')", &[]).expect_err("malformed");
        assert!(
            error.contains("quantities must match the regular expression"),
            "{error}"
        );
    }
}
