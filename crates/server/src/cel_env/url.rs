//! kube's URL library (`apiserver/pkg/cel/library/urls.go`): `url(string)`,
//! `isURL(string)`, and on a URL `getScheme()`, `getHost()`,
//! `getHostname()`, `getPort()`, `getEscapedPath()`, `getQuery()`. URLs are
//! parsed as Go's `net/url` parses them ([`super::go_url`]): `url()` checks
//! with `ParseRequestURI` (absolute URIs and absolute paths) and keeps what
//! `Parse` makes of the string.

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::types::{Type, STRING_TYPE};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::go_url::{self, GoUrl};
use super::{arguments, no_such_overload, overload};

const TYPE_NAME: &str = "kubernetes.URL";

fn url_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CelUrl(GoUrl);

impl Opaque for CelUrl {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(url_type())?;
    env.add_overload("url", "string_to_url", vec![STRING_TYPE], overload!(to_url))?;
    env.add_overload(
        "isURL",
        "is_url_string",
        vec![STRING_TYPE],
        overload!(is_url),
    )?;
    for (name, id, function) in [
        ("getScheme", "url_get_scheme", overload!(scheme)),
        ("getHost", "url_get_host", overload!(host)),
        ("getHostname", "url_get_hostname", overload!(hostname)),
        ("getPort", "url_get_port", overload!(port)),
        (
            "getEscapedPath",
            "url_get_escaped_path",
            overload!(escaped_path),
        ),
        ("getQuery", "url_get_query", overload!(query)),
    ] {
        env.add_member_overload(name, id, url_type(), vec![], function)?;
    }
    Ok(())
}

fn text<'a>(function: &str, value: &'a Value) -> Result<&'a str, ExecutionError> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(no_such_overload(function)),
    }
}

fn url_of<'a>(function: &str, args: &'a [Value]) -> Result<&'a GoUrl, ExecutionError> {
    let [value] = arguments(args)?;
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelUrl>()
            .map(|url| &url.0)
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

/// `stringToUrl`.
fn to_url(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    let input = text("url", input)?;
    let parsed = go_url::parse_request_uri(input)
        .and_then(|_| go_url::parse(input))
        .map_err(|error| {
            ExecutionError::function_error(
                "url",
                format!("URL parse error during conversion from string: {error}"),
            )
        })?;
    Ok(Value::Opaque(Arc::new(CelUrl(parsed))))
}

fn is_url(args: &[Value]) -> Result<Value, ExecutionError> {
    let [input] = arguments(args)?;
    Ok(Value::Bool(
        go_url::parse_request_uri(text("isURL", input)?).is_ok(),
    ))
}

fn string(text: &str) -> Value {
    Value::String(Arc::new(text.to_string()))
}

fn scheme(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_of("getScheme", args)?.scheme))
}

fn host(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_of("getHost", args)?.host))
}

fn hostname(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(url_of("getHostname", args)?.hostname()))
}

fn port(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(url_of("getPort", args)?.port()))
}

fn escaped_path(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(string(&url_of("getEscapedPath", args)?.escaped_path()))
}

fn query(args: &[Value]) -> Result<Value, ExecutionError> {
    let query = url_of("getQuery", args)?.query();
    Ok(query
        .into_iter()
        .map(|(key, values)| {
            let values: Vec<Value> = values.iter().map(|value| string(value)).collect();
            (key, Value::List(Arc::new(values)))
        })
        .collect::<HashMap<String, Value>>()
        .into())
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/urls_test.go` and `cel/library` docs.
    #[test]
    fn kubes_url_functions() {
        let truths = [
            "isURL('https://user:pass@example.com:80/path?query=val#fragment')",
            "isURL('/absolute-path')",
            "!isURL('../relative-path')",
            "!isURL('https://a:b:c/')",
            "!isURL('')",
            "!isURL('example.com')",
            "url('https://example.com:80/').getScheme() == 'https'",
            "url('https://example.com:80/').getHost() == 'example.com:80'",
            "url('https://example.com/').getHost() == 'example.com'",
            "url('https://[::1]:80/').getHost() == '[::1]:80'",
            "url('https://[::1]/').getHost() == '[::1]'",
            "url('/path').getHost() == ''",
            "url('https://example.com:80/').getHostname() == 'example.com'",
            "url('https://127.0.0.1:80/').getHostname() == '127.0.0.1'",
            "url('https://[::1]:80/').getHostname() == '::1'",
            "url('/path').getHostname() == ''",
            "url('https://example.com:80/').getPort() == '80'",
            "url('https://example.com/').getPort() == ''",
            "url('/path').getPort() == ''",
            "url('https://example.com/path').getEscapedPath() == '/path'",
            "url('https://example.com/path with spaces/').getEscapedPath() == '/path%20with%20spaces/'",
            "url('https://example.com').getEscapedPath() == ''",
            "url('https://example.com/%2F').getEscapedPath() == '/%2F'",
            "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery() == {'k1': ['a'], 'k2': ['b', 'c']}",
            "url('https://example.com/path?key with spaces=value with spaces').getQuery() == {'key with spaces': ['value with spaces']}",
            "url('https://example.com/path?').getQuery() == {}",
            "url('https://example.com/path').getQuery() == {}",
            "url('https://example.com/path#fragment').getEscapedPath() == '/path'",
            "url('https://example.com/path?a=b#fragment').getQuery() == {'a': ['b']}",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }

    #[test]
    fn a_relative_url_is_an_error_with_gos_text() {
        let error = eval("url('../relative-path')", &[]).expect_err("relative");
        assert!(
            error.contains(
                "URL parse error during conversion from string: parse \"../relative-path\": invalid URI for request"
            ),
            "{error}"
        );
        let error = eval("url('https://a:b:c/')", &[]).expect_err("bad port");
        assert!(
            error.contains("parse \"https://a:b:c/\": invalid port \":c\" after host"),
            "{error}"
        );
        let error = eval("url('https://ex ample.com/')", &[]).expect_err("space");
        assert!(
            error.contains("invalid character \" \" in host name"),
            "{error}"
        );
    }
}
