//! kube's regex library (`apiserver/pkg/cel/library/regex.go`):
//! `string.find(regex)` (the first match, or `""`) and
//! `string.findAll(regex)` / `string.findAll(regex, limit)` (every match,
//! at most `limit` when it is not negative). RE2 syntax, as Go's `regexp`.
//! Also the standard `matches` (`string.matches(regex)` and
//! `matches(string, regex)`), here rather than cel-rust's, which compiles
//! its pattern on every call: cel-go compiles a constant pattern once with
//! the program, and each pattern here is compiled once per thread
//! ([`cached`]), which keeps a rule such as `self.name.matches('^a-[0-9]+$')`
//! from costing a regex compilation per object.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{INT_TYPE, STRING_TYPE};
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_overload(
        "matches",
        "matches",
        vec![STRING_TYPE, STRING_TYPE],
        overload!(matches),
    )?;
    env.add_member_overload(
        "matches",
        "string_matches_string",
        STRING_TYPE,
        vec![STRING_TYPE],
        overload!(matches),
    )?;
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

/// Patterns compiled per thread before the cache is emptied: rules hold a
/// few constant patterns; patterns made from object values must not grow
/// it without bound.
const CACHE_LIMIT: usize = 256;

thread_local! {
    static CACHE: RefCell<HashMap<String, regex::Regex>> = RefCell::new(HashMap::new());
}

/// `pattern` compiled, from this thread's cache when it was before.
fn cached(pattern: &str) -> Result<regex::Regex, regex::Error> {
    if let Some(regex) = CACHE.with(|cache| cache.borrow().get(pattern).cloned()) {
        return Ok(regex);
    }
    let regex = regex::Regex::new(pattern)?;
    CACHE.with(|cache| {
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHE_LIMIT {
            cache.clear();
        }
        cache.insert(pattern.to_string(), regex.clone());
    });
    Ok(regex)
}

fn compiled(function: &str, pattern: &Value) -> Result<regex::Regex, ExecutionError> {
    let Value::String(pattern) = pattern else {
        return Err(no_such_overload(function));
    };
    cached(pattern).map_err(|error| {
        ExecutionError::function_error(function, format!("Illegal regex: {error}"))
    })
}

/// `matches`, with cel-rust's error for a pattern that does not compile.
fn matches(args: &[Value]) -> Result<Value, ExecutionError> {
    let [subject, pattern] = arguments(args)?;
    let subject = text("matches", subject)?;
    let pattern = text("matches", pattern)?;
    let regex = cached(pattern).map_err(|error| ExecutionError::FunctionError {
        function: "matches".to_string(),
        message: format!("'{pattern}' not a valid regex:\n{error}"),
    })?;
    Ok(Value::Bool(regex.is_match(subject)))
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
    fn matches_is_the_standard_function_with_compiled_patterns_kept() {
        let truths = [
            "'foobar'.matches('^[a-zA-Z]*$')",
            "matches('foobar', '^[a-zA-Z]*$')",
            "!matches('foo1', '^[a-zA-Z]*$')",
            "!{'1': 'abc', '2': 'def'}.all(key, key.matches('^[a-zA-Z]*$'))",
            "['a-1', 'a-2', 'a-3'].all(s, s.matches('^a-[0-9]$'))",
            "'value-7'.matches('^value-[0-9]+$') && !'value-x'.matches('^value-[0-9]+$')",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
        let error = eval("'foobar'.matches('(foo')", &[]).expect_err("illegal");
        assert!(error.contains("'(foo' not a valid regex:"), "{error}");
    }

    #[test]
    fn an_illegal_regex_is_an_error() {
        let error = eval("'abc'.find('[')", &[]).expect_err("illegal");
        assert!(error.contains("Illegal regex"), "{error}");
    }
}
