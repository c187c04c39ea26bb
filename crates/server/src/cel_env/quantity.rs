//! kube's quantity library (`apiserver/pkg/cel/library/quantity.go`), the
//! part that needs no arithmetic: `quantity(string)`, `isQuantity(string)`,
//! and on a quantity `isLessThan`, `isGreaterThan`, `compareTo`, `sign()`,
//! with `==` comparing values (`1` equals `1000m`), as
//! `resource.Quantity.Cmp`. Not ported: `add`, `sub`, `isInteger`,
//! `asInteger`, `asApproximateFloat`.

use std::sync::Arc;

use cel::common::types::{Type, STRING_TYPE};
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
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
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
