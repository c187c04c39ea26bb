//! kube's list library (`apiserver/pkg/cel/library/lists.go`):
//! `isSorted()`, `sum()`, `min()`, `max()`, `indexOf(x)` and
//! `lastIndexOf(x)` on lists.

use std::cmp::Ordering;

use cel::common::types::LIST_TYPE;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    use cel::common::types::DYN_TYPE;
    env.add_member_overload(
        "isSorted",
        "list_is_sorted",
        LIST_TYPE,
        vec![],
        overload!(is_sorted),
    )?;
    env.add_member_overload("sum", "list_sum", LIST_TYPE, vec![], overload!(sum))?;
    env.add_member_overload("min", "list_min", LIST_TYPE, vec![], overload!(min))?;
    env.add_member_overload("max", "list_max", LIST_TYPE, vec![], overload!(max))?;
    env.add_member_overload(
        "indexOf",
        "list_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        overload!(index_of),
    )?;
    env.add_member_overload(
        "lastIndexOf",
        "list_last_index_of",
        LIST_TYPE,
        vec![DYN_TYPE],
        overload!(last_index_of),
    )?;
    Ok(())
}

fn items<'a>(function: &str, list: &'a Value) -> Result<&'a [Value], ExecutionError> {
    match list {
        Value::List(items) => Ok(items),
        _ => Err(no_such_overload(function)),
    }
}

/// cel-go's `Compare`: only values of one comparable type (numbers across
/// their types) compare.
fn compare(function: &str, left: &Value, right: &Value) -> Result<Ordering, ExecutionError> {
    let comparable = matches!(
        (left, right),
        (
            Value::Int(_) | Value::UInt(_) | Value::Float(_),
            Value::Int(_) | Value::UInt(_) | Value::Float(_)
        ) | (Value::String(_), Value::String(_))
            | (Value::Bool(_), Value::Bool(_))
            | (Value::Bytes(_), Value::Bytes(_))
    );
    let ordering = match (left, right) {
        (Value::Bytes(a), Value::Bytes(b)) => Some(a.cmp(b)),
        _ => left.partial_cmp(right),
    };
    match ordering {
        Some(ordering) if comparable => Ok(ordering),
        _ => Err(no_such_overload(function)),
    }
}

fn is_sorted(args: &[Value]) -> Result<Value, ExecutionError> {
    let [list] = arguments(args)?;
    let items = items("isSorted", list)?;
    for pair in items.windows(2) {
        if compare("isSorted", &pair[0], &pair[1])? == Ordering::Greater {
            return Ok(Value::Bool(false));
        }
    }
    if let [only] = items {
        // A single element must still be of a comparable type.
        compare("isSorted", only, only)?;
    }
    Ok(Value::Bool(true))
}

/// The sum of ints, uints or doubles (durations: ferrokube's CEL has no
/// duration type); an empty list sums to the
/// int 0 (kube: the zero of the list's declared element type).
fn sum(args: &[Value]) -> Result<Value, ExecutionError> {
    let [list] = arguments(args)?;
    let items = items("sum", list)?;
    let Some((first, rest)) = items.split_first() else {
        return Ok(Value::Int(0));
    };
    let overflow = || ExecutionError::function_error("sum", "integer overflow");
    let mut total = first.clone();
    if !matches!(total, Value::Int(_) | Value::UInt(_) | Value::Float(_)) {
        return Err(no_such_overload("sum"));
    }
    for item in rest {
        total = match (&total, item) {
            (Value::Int(a), Value::Int(b)) => Value::Int(a.checked_add(*b).ok_or_else(overflow)?),
            (Value::UInt(a), Value::UInt(b)) => {
                Value::UInt(a.checked_add(*b).ok_or_else(overflow)?)
            }
            (Value::Float(a), Value::Float(b)) => Value::Float(a + b),
            _ => return Err(no_such_overload("sum")),
        };
    }
    Ok(total)
}

/// `min` and `max`: the first element no other is preferred to.
fn extreme(function: &str, args: &[Value], prefer: Ordering) -> Result<Value, ExecutionError> {
    let [list] = arguments(args)?;
    let items = items(function, list)?;
    let Some((first, rest)) = items.split_first() else {
        return Err(ExecutionError::function_error(
            function,
            format!("{function} called on empty list"),
        ));
    };
    compare(function, first, first)?;
    let mut result = first;
    for item in rest {
        if compare(function, result, item)? == prefer {
            result = item;
        }
    }
    Ok(result.clone())
}

fn min(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme("min", args, Ordering::Greater)
}

fn max(args: &[Value]) -> Result<Value, ExecutionError> {
    extreme("max", args, Ordering::Less)
}

fn index_of(args: &[Value]) -> Result<Value, ExecutionError> {
    let [list, item] = arguments(args)?;
    let items = items("indexOf", list)?;
    Ok(Value::Int(
        items
            .iter()
            .position(|candidate| candidate == item)
            .map_or(-1, |index| index as i64),
    ))
}

fn last_index_of(args: &[Value]) -> Result<Value, ExecutionError> {
    let [list, item] = arguments(args)?;
    let items = items("lastIndexOf", list)?;
    Ok(Value::Int(
        items
            .iter()
            .rposition(|candidate| candidate == item)
            .map_or(-1, |index| index as i64),
    ))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/lists_test.go` (`TestLists`).
    #[test]
    fn kubes_list_functions() {
        let truths = [
            // isSorted
            "[].isSorted()",
            "[1.0].isSorted()",
            "[1, 2, 3].isSorted()",
            "[1, 1, 3].isSorted()",
            "![3, 2, 1].isSorted()",
            "['a', 'b', 'c'].isSorted()",
            "!['c', 'b', 'a'].isSorted()",
            "[false, true].isSorted()",
            "[b'a', b'b'].isSorted()",
            "[1u, 2u].isSorted()",
            // sum
            "[].sum() == 0",
            "[1].sum() == 1",
            "[1, 2, 3].sum() == 6",
            "[1.0, 2.5].sum() == 3.5",
            "[1u, 2u].sum() == 3u",
            // min / max
            "[1].min() == 1",
            "[3, 1, 2].min() == 1",
            "[3, 1, 2].max() == 3",
            "['b', 'a', 'c'].min() == 'a'",
            "['b', 'a', 'c'].max() == 'c'",
            "[1.5, 0.5].min() == 0.5",
            // indexOf / lastIndexOf
            "[1, 2, 3, 2].indexOf(2) == 1",
            "[1, 2, 3, 2].lastIndexOf(2) == 3",
            "[1, 2, 3].indexOf(4) == -1",
            "[].lastIndexOf(4) == -1",
            "['a', 'b'].indexOf('b') == 1",
            "[[1], [2]].indexOf([2]) == 1",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn empty_lists_have_no_extremes() {
        for (expression, message) in [
            ("[].min()", "min called on empty list"),
            ("[].max()", "max called on empty list"),
        ] {
            let error = eval(expression, &[]).expect_err(expression);
            assert!(error.contains(message), "{expression}: {error}");
        }
    }

    #[test]
    fn values_of_different_types_do_not_compare() {
        for expression in ["[1, 'a'].isSorted()", "[{}, {}].min()", "['a', 'b'].sum()"] {
            assert!(eval(expression, &[]).is_err(), "{expression}");
        }
    }

    #[test]
    fn list_functions_read_variables() {
        let list = Value::List(std::sync::Arc::new(vec![Value::Int(2), Value::Int(5)]));
        assert_eq!(
            eval(
                "self.isSorted() && self.sum() == 7 && self.max() == 5",
                &[("self", list)]
            ),
            Ok(Value::Bool(true))
        );
    }
}
