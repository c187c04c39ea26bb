//! kube's regex library (`apiserver/pkg/cel/library/regex.go`):
//! `string.find(regex)` (the first match, or `""`) and
//! `string.findAll(regex)` / `string.findAll(regex, limit)` (every match,
//! at most `limit` when it is not negative). RE2 syntax, as Go's `regexp`.

use std::sync::Arc;

use cel::common::types::{INT_TYPE, STRING_TYPE};
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_member_overload(
        "find",
        "string_find_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        overload!(find),
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        overload!(find_all),
    )?;
    env.add_member_overload(
        "findAll",
        "string_find_all_string_int",
        STRING_TYPE,
        vec![STRING_TYPE, INT_TYPE],
        overload!(find_all_with_limit),
    )?;
    Ok(())
}

fn compiled(function: &str, pattern: &Value) -> Result<regex::Regex, ExecutionError> {
    let Value::String(pattern) = pattern else {
        return Err(no_such_overload(function));
    };
    regex::Regex::new(pattern).map_err(|error| {
        ExecutionError::function_error(function, format!("Illegal regex: {error}"))
    })
}

fn text<'a>(function: &str, value: &'a Value) -> Result<&'a str, ExecutionError> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(no_such_overload(function)),
    }
}

fn find(args: &[Value]) -> Result<Value, ExecutionError> {
    let [subject, pattern] = arguments(args)?;
    let subject = text("find", subject)?;
    let found = compiled("find", pattern)?
        .find(subject)
        .map_or("", |found| found.as_str());
    Ok(Value::String(Arc::new(found.to_string())))
}

fn all_matches(subject: &str, regex: &regex::Regex, limit: i64) -> Value {
    let found = regex
        .find_iter(subject)
        .map(|found| Value::String(Arc::new(found.as_str().to_string())));
    let found: Vec<Value> = match usize::try_from(limit) {
        Ok(limit) => found.take(limit).collect(),
        Err(_) => found.collect(),
    };
    Value::List(Arc::new(found))
}

fn find_all(args: &[Value]) -> Result<Value, ExecutionError> {
    let [subject, pattern] = arguments(args)?;
    Ok(all_matches(
        text("findAll", subject)?,
        &compiled("findAll", pattern)?,
        -1,
    ))
}

fn find_all_with_limit(args: &[Value]) -> Result<Value, ExecutionError> {
    let [subject, pattern, limit] = arguments(args)?;
    let Value::Int(limit) = limit else {
        return Err(no_such_overload("findAll"));
    };
    Ok(all_matches(
        text("findAll", subject)?,
        &compiled("findAll", pattern)?,
        *limit,
    ))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/regex_test.go` and `library_compatibility_test.go`.
    #[test]
    fn kubes_regex_functions() {
        let truths = [
            "'abc 123'.find('[0-9]+') == '123'",
            "'abc 123'.find('xyz') == ''",
            "'123 abc 456'.findAll('[0-9]+') == ['123', '456']",
            "'123 abc 456'.findAll('xyz') == []",
            "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
            "'123 abc 456'.findAll('[0-9]+', 0) == []",
            "'123 abc 456'.findAll('[0-9]+', -1) == ['123', '456']",
            "'a1b2c3'.findAll('[a-z][0-9]', 2) == ['a1', 'b2']",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn an_illegal_regex_is_an_error() {
        let error = eval("'abc'.find('[')", &[]).expect_err("illegal");
        assert!(error.contains("Illegal regex"), "{error}");
    }
}
