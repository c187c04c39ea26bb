//! kube's format library (`apiserver/pkg/cel/library/format.go`):
//! `format.named(name)` (an optional format), the constant formats
//! `format.dns1123Label()`, `format.dns1123Subdomain()`,
//! `format.dns1035Label()`, `format.qualifiedName()`,
//! `format.dns1123LabelPrefix()`, `format.dns1123SubdomainPrefix()`,
//! `format.dns1035LabelPrefix()`, `format.labelValue()`, `format.uri()`,
//! `format.uuid()`, `format.byte()`, `format.date()`,
//! `format.datetime()`, and `<Format>.validate(string)`: `optional.none()`
//! when valid, else the optional list of kube's error texts. The checks
//! are the ones ferrokube already runs for names, labels and CRD string
//! formats.

use std::sync::Arc;

use cel::common::types::{Type, STRING_TYPE};
use cel::objects::{Opaque, OptionalValue};
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};
use crate::registry::NameRule;

const TYPE_NAME: &str = "kubernetes.NamedFormat";

fn format_type() -> Type {
    Type::new_opaque_type(TYPE_NAME)
}

/// The names `format.named` knows, in `ConstantFormats`.
const NAMES: [&str; 13] = [
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// One of kube's constant formats, by its `ConstantFormats` key.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelFormat(&'static str);

impl Opaque for CelFormat {
    fn runtime_type_name(&self) -> &str {
        TYPE_NAME
    }
}

/// The `ValidateFunc` of format `name`: kube's error texts, none when valid.
pub fn validate(name: &str, text: &str) -> Vec<String> {
    let with_texts = |valid: bool, message: &str| {
        if valid {
            Vec::new()
        } else {
            vec![message.to_string()]
        }
    };
    match name {
        "dns1123Label" => crate::names::validate(NameRule::Dns1123Label, text, false),
        "dns1123Subdomain" => crate::names::validate(NameRule::Dns1123Subdomain, text, false),
        "dns1035Label" => crate::names::validate(NameRule::Dns1035Label, text, false),
        "dns1123LabelPrefix" => crate::names::validate(NameRule::Dns1123Label, text, true),
        "dns1123SubdomainPrefix" => crate::names::validate(NameRule::Dns1123Subdomain, text, true),
        "dns1035LabelPrefix" => crate::names::validate(NameRule::Dns1035Label, text, true),
        "qualifiedName" => crate::selector::is_qualified_name(text),
        "labelValue" => crate::selector::is_valid_label_value(text),
        "uri" => match super::go_url::parse_request_uri(text) {
            Ok(_) => Vec::new(),
            Err(error) => vec![error],
        },
        "uuid" => with_texts(
            crate::schema::formats::validates("uuid", text),
            "does not match the UUID format",
        ),
        "byte" => with_texts(
            crate::schema::formats::validates("byte", text),
            "invalid base64",
        ),
        "date" => with_texts(
            crate::schema::formats::validates("date", text),
            "invalid date",
        ),
        "datetime" => with_texts(
            crate::schema::formats::validates("datetime", text),
            "invalid datetime",
        ),
        _ => Vec::new(),
    }
}

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    env.add_type(format_type())?;
    env.add_overload(
        "format.named",
        "format-named",
        vec![STRING_TYPE],
        overload!(named),
    )?;
    env.add_member_overload(
        "validate",
        "format-validate",
        format_type(),
        vec![STRING_TYPE],
        overload!(validate_value),
    )?;
    macro_rules! constant {
        ($name:literal) => {{
            fn constant(_: &[Value]) -> Result<Value, ExecutionError> {
                Ok(Value::Opaque(Arc::new(CelFormat($name))))
            }
            env.add_overload(
                concat!("format.", $name),
                concat!("format.", $name),
                vec![],
                overload!(constant),
            )?;
        }};
    }
    constant!("dns1123Label");
    constant!("dns1123Subdomain");
    constant!("dns1035Label");
    constant!("qualifiedName");
    constant!("dns1123LabelPrefix");
    constant!("dns1123SubdomainPrefix");
    constant!("dns1035LabelPrefix");
    constant!("labelValue");
    constant!("uri");
    constant!("uuid");
    constant!("byte");
    constant!("date");
    constant!("datetime");
    Ok(())
}

fn named(args: &[Value]) -> Result<Value, ExecutionError> {
    let [name] = arguments(args)?;
    let Value::String(name) = name else {
        return Err(no_such_overload("format.named"));
    };
    let optional = match NAMES.iter().find(|known| **known == name.as_str()) {
        Some(known) => OptionalValue::of(Value::Opaque(Arc::new(CelFormat(known)))),
        None => OptionalValue::none(),
    };
    Ok(Value::Opaque(Arc::new(optional)))
}

fn validate_value(args: &[Value]) -> Result<Value, ExecutionError> {
    let [format, text] = arguments(args)?;
    let (Value::Opaque(format), Value::String(text)) = (format, text) else {
        return Err(no_such_overload("validate"));
    };
    let format = format
        .downcast_ref::<CelFormat>()
        .ok_or_else(|| no_such_overload("validate"))?;
    let errors = validate(format.0, text);
    let optional = if errors.is_empty() {
        OptionalValue::none()
    } else {
        let list = errors
            .into_iter()
            .map(|error| Value::String(Arc::new(error)))
            .collect();
        OptionalValue::of(Value::List(Arc::new(list)))
    };
    Ok(Value::Opaque(Arc::new(optional)))
}

#[cfg(test)]
mod tests {
    use super::super::eval;
    use cel::Value;

    /// Cases of kube's `library/format_test.go`.
    #[test]
    fn kubes_format_functions() {
        let truths = [
            "format.dns1123Label().validate('my-label-name') == optional.none()",
            "format.named('dns1123Label').hasValue()",
            "!format.named('unknown').hasValue()",
            "format.named('dns1123Label').value().validate('my-label-name') == optional.none()",
            "format.dns1123Label().validate('contains a space').hasValue()",
            "format.dns1123Label().validate('contains a space').value() == ['a lowercase RFC 1123 label must consist of lower case alphanumeric characters or \\'-\\', and must start and end with an alphanumeric character (e.g. \\'my-name\\',  or \\'123-abc\\', regex used for validation is \\'[a-z0-9]([-a-z0-9]*[a-z0-9])?\\')']",
            "format.dns1123Subdomain().validate('my.sub.domain') == optional.none()",
            "format.dns1035Label().validate('1abc').hasValue()",
            "format.dns1123LabelPrefix().validate('my-prefix-') == optional.none()",
            "format.qualifiedName().validate('example.com/name') == optional.none()",
            "format.qualifiedName().validate('-bad').hasValue()",
            "format.labelValue().validate('value') == optional.none()",
            "format.labelValue().validate('bad value').hasValue()",
            "format.uri().validate('http://example.com') == optional.none()",
            "format.uri().validate('example') == optional.of(['parse \"example\": invalid URI for request'])",
            "format.uuid().validate('123e4567-e89b-12d3-a456-426614174000') == optional.none()",
            "format.uuid().validate('not-a-uuid') == optional.of(['does not match the UUID format'])",
            "format.byte().validate('aGVsbG8=') == optional.none()",
            "format.byte().validate('!') == optional.of(['invalid base64'])",
            "format.date().validate('2021-01-01') == optional.none()",
            "format.date().validate('2021-13-01') == optional.of(['invalid date'])",
            "format.datetime().validate('2021-01-01T00:00:00Z') == optional.none()",
            "format.datetime().validate('2021-01-01') == optional.of(['invalid datetime'])",
            // The strings extension's `format` is untouched.
            "'%s is %d'.format(['x', 1]) == 'x is 1'",
        ];
        for expression in truths {
            assert_eq!(eval(expression, &[]), Ok(Value::Bool(true)), "{expression}");
        }
    }
}
