//! `intstr.IntOrString` fields as apps and policy validation read them
//! (`pkg/apis/apps/validation/validation.go`: `ValidatePositiveIntOrPercent`,
//! `getPercentValue`, `getIntOrPercentValue`, `IsNotMoreThan100Percent`) and
//! Go's `%#v` of one.

use serde_json::Value;

use super::field;
use crate::status::FieldError;

/// Go's `%#v` of an `intstr.IntOrString`.
pub fn go_int_or_string(value: &Value) -> String {
    match value {
        Value::String(text) => format!(
            "intstr.IntOrString{{Type:1, IntVal:0, StrVal:{}}}",
            crate::go::strconv::quote(text)
        ),
        other => format!(
            "intstr.IntOrString{{Type:0, IntVal:{}, StrVal:\"\"}}",
            other.as_i64().unwrap_or(0)
        ),
    }
}

/// `getPercentValue`: the number of a valid percentage (`[0-9]+%`; one
/// too large for an int is 0, as Go's ignored `Atoi` error leaves it).
fn percent_value(value: Option<&Value>) -> Option<i64> {
    let number = value?.as_str()?.strip_suffix('%')?;
    (!number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()))
        .then(|| number.parse().unwrap_or(0))
}

/// `getIntOrPercentValue`: the percentage's number, else `IntValue()` (a
/// string that is not a valid percentage is `Atoi`'d, 0 when it fails).
pub fn int_or_percent_value(value: Option<&Value>) -> i64 {
    if let Some(percent) = percent_value(value) {
        return percent;
    }
    match value {
        Some(Value::String(text)) => text.parse().unwrap_or(0),
        Some(other) => other.as_i64().unwrap_or(0),
        None => 0,
    }
}

/// `IsNotMoreThan100Percent`.
pub fn not_more_than_100_percent(value: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    if let (Some(value), Some(percent)) = (value, percent_value(value)) {
        if percent > 100 {
            errors.push(field::invalid_rendered(
                path,
                &go_int_or_string(value),
                "must not be greater than 100%",
            ));
        }
    }
}

/// `ValidatePositiveIntOrPercent`.
pub fn positive_int_or_percent(value: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    match value {
        Some(Value::String(text)) => {
            let valid = text.strip_suffix('%').is_some_and(|number| {
                !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit())
            });
            if !valid {
                errors.push(field::invalid_rendered(
                    path,
                    &go_int_or_string(&Value::String(text.clone())),
                    "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
                ));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            if number < 0 {
                errors.push(field::invalid_number(path, number, field::IS_NEGATIVE));
            }
        }
        None => {}
    }
}
