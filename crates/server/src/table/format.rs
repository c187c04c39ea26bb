//! Shared cell formatting: JSON accessors and ports of the apimachinery
//! helpers the printers call (`labels.FormatLabels`,
//! `metav1.FormatLabelSelector`, `Quantity.String`, `layoutContainerCells`,
//! `helper.GetAccessModesAsString`, ...).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use crate::quantity;

/// The value at a `/`-free path of object keys (`at(v, &["spec", "replicas"])`).
pub fn at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Value> {
    path.iter().try_fold(value, |current, key| current.get(key))
}

/// String at `path`, `""` when absent (Go's zero value).
pub fn str_at<'a>(value: &'a Value, path: &[&str]) -> &'a str {
    at(value, path).and_then(Value::as_str).unwrap_or("")
}

/// Optional string at `path` (a Go `*string`).
pub fn opt_str<'a>(value: &'a Value, path: &[&str]) -> Option<&'a str> {
    at(value, path).and_then(Value::as_str)
}

/// Integer at `path`, 0 when absent.
pub fn int_at(value: &Value, path: &[&str]) -> i64 {
    opt_int(value, path).unwrap_or(0)
}

/// Optional integer at `path` (a Go `*int32`).
pub fn opt_int(value: &Value, path: &[&str]) -> Option<i64> {
    at(value, path).and_then(|v| v.as_i64().or_else(|| v.as_f64().map(|f| f as i64)))
}

/// Optional bool at `path` (a Go `*bool`).
pub fn opt_bool(value: &Value, path: &[&str]) -> Option<bool> {
    at(value, path).and_then(Value::as_bool)
}

/// Array at `path`, empty when absent.
pub fn arr_at<'a>(value: &'a Value, path: &[&str]) -> &'a [Value] {
    at(value, path)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
}

/// Object at `path`.
pub fn obj_at<'a>(value: &'a Value, path: &[&str]) -> Option<&'a Map<String, Value>> {
    at(value, path).and_then(Value::as_object)
}

/// Number of entries of the map (or list) at `path`.
pub fn len_at(value: &Value, path: &[&str]) -> i64 {
    match at(value, path) {
        Some(Value::Object(map)) => map.len() as i64,
        Some(Value::Array(list)) => list.len() as i64,
        _ => 0,
    }
}

pub fn name(value: &Value) -> &str {
    str_at(value, &["metadata", "name"])
}

pub fn creation_timestamp(value: &Value) -> Option<&str> {
    opt_str(value, &["metadata", "creationTimestamp"])
}

pub fn deletion_timestamp(value: &Value) -> Option<&str> {
    opt_str(value, &["metadata", "deletionTimestamp"])
}

pub fn annotation<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    opt_str(value, &["metadata", "annotations", key])
}

/// `text`, or the value kube's defaulting would have stored when it is empty.
pub fn or<'a>(text: &'a str, default: &'a str) -> &'a str {
    if text.is_empty() {
        default
    } else {
        text
    }
}

/// `labels.FormatLabels`: `k=v` sorted by key, comma-joined; `<none>` when empty.
pub fn format_labels(map: Option<&Map<String, Value>>) -> String {
    let text = label_set_string(map);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

/// `labels.Set.String()`: sorted `k=v` pairs.
fn label_set_string(map: Option<&Map<String, Value>>) -> String {
    let Some(map) = map else { return String::new() };
    let mut pairs: Vec<(&str, &str)> = map
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `metav1.LabelSelectorAsSelector(..).String()`; `Err` where upstream errors
/// (an unknown operator, or values that do not fit it).
pub fn label_selector_string(selector: Option<&Value>) -> Result<String, ()> {
    let Some(selector) = selector.filter(|s| !s.is_null()) else {
        return Ok(String::new());
    };
    let mut requirements: Vec<(String, String)> = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        for (key, value) in labels {
            requirements.push((
                key.clone(),
                format!("{key}={}", value.as_str().unwrap_or("")),
            ));
        }
    }
    for expression in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or(&[])
    {
        let key = str_at(expression, &["key"]);
        let mut values: Vec<&str> = arr_at(expression, &["values"])
            .iter()
            .filter_map(Value::as_str)
            .collect();
        values.sort_unstable();
        let text = match str_at(expression, &["operator"]) {
            "In" | "NotIn" if values.is_empty() => return Err(()),
            "In" => format!("{key} in ({})", values.join(",")),
            "NotIn" => format!("{key} notin ({})", values.join(",")),
            "Exists" if values.is_empty() => key.to_string(),
            "DoesNotExist" if values.is_empty() => format!("!{key}"),
            _ => return Err(()),
        };
        requirements.push((key.to_string(), text));
    }
    // internalSelector.Add sorts by key; equal keys keep insertion order.
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(requirements
        .into_iter()
        .map(|(_, text)| text)
        .collect::<Vec<_>>()
        .join(","))
}

/// `metav1.FormatLabelSelector`: `<none>` when it selects everything or
/// nothing, `<error>` when it does not parse.
pub fn format_label_selector(selector: Option<&Value>) -> String {
    match label_selector_string(selector) {
        Ok(text) if text.is_empty() => "<none>".into(),
        Ok(text) => text,
        Err(()) => "<error>".into(),
    }
}

/// `Quantity.String()` of a decoded quantity (kube's canonical form); Go's
/// zero Quantity prints "0".
pub fn quantity_string(value: Option<&Value>) -> String {
    match value {
        Some(Value::String(text)) => quantity::canonicalize(text).unwrap_or_else(|_| text.clone()),
        Some(Value::Number(number)) => {
            let text = number.to_string();
            quantity::canonicalize(&text).unwrap_or(text)
        }
        _ => "0".into(),
    }
}

/// `(*Quantity).String()` of an optional quantity: "<nil>" when unset.
pub fn opt_quantity_string(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => "<nil>".into(),
        some => quantity_string(some),
    }
}

/// `helper.GetAccessModesAsString`.
pub fn access_modes(modes: &[Value]) -> String {
    let has = |mode: &str| modes.iter().any(|m| m.as_str() == Some(mode));
    let mut out = Vec::new();
    for (mode, short) in [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ] {
        if has(mode) {
            out.push(short);
        }
    }
    out.join(",")
}

/// `layoutContainerCells`: comma-joined container names and images.
pub fn container_cells(containers: &[Value]) -> (String, String) {
    let names: Vec<&str> = containers.iter().map(|c| str_at(c, &["name"])).collect();
    let images: Vec<&str> = containers.iter().map(|c| str_at(c, &["image"])).collect();
    (names.join(","), images.join(","))
}

/// `printBoolPtr`: "True", "False" or "<unset>".
pub fn bool_ptr(value: Option<bool>) -> &'static str {
    match value {
        Some(true) => "True",
        Some(false) => "False",
        None => "<unset>",
    }
}

/// `IntOrString.String()`.
pub fn int_or_string(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Number(number) => number.to_string(),
        other => other.to_string(),
    }
}

/// `sets.NewString(..).List()` joined: sorted, de-duplicated load-balancer
/// ingress IPs (or hostnames). Servers print with `wide`, so nothing is clipped.
pub fn load_balancer_ingress(ingress: &[Value]) -> String {
    let mut set = BTreeSet::new();
    for point in ingress {
        let ip = str_at(point, &["ip"]);
        let hostname = str_at(point, &["hostname"]);
        if !ip.is_empty() {
            set.insert(ip);
        } else if !hostname.is_empty() {
            set.insert(hostname);
        }
    }
    set.into_iter().collect::<Vec<_>>().join(",")
}

/// `listWithMoreString`.
pub fn list_with_more(list: &[String], more: bool, count: usize, max: usize) -> String {
    let ret = list.join(",");
    if more {
        return format!("{ret} + {} more...", count - max);
    }
    if ret.is_empty() {
        "<unset>".into()
    } else {
        ret
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn label_selectors() {
        let cases: &[(Value, &str)] = &[
            (Value::Null, "<none>"),
            (json!({}), "<none>"),
            (json!({"matchLabels": {"b": "2", "a": "1"}}), "a=1,b=2"),
            (
                json!({"matchLabels": {"app": "x"}, "matchExpressions": [
                    {"key": "tier", "operator": "In", "values": ["web", "api"]},
                    {"key": "env", "operator": "NotIn", "values": ["prod"]},
                    {"key": "gpu", "operator": "Exists"},
                    {"key": "canary", "operator": "DoesNotExist"}
                ]}),
                "app=x,!canary,env notin (prod),gpu,tier in (api,web)",
            ),
            (
                json!({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}),
                "<error>",
            ),
        ];
        for (selector, want) in cases {
            assert_eq!(format_label_selector(Some(selector)), *want, "{selector}");
        }
    }

    #[test]
    fn labels_and_quantities() {
        assert_eq!(format_labels(None), "<none>");
        assert_eq!(
            format_labels(json!({"z": "1", "a": "b"}).as_object()),
            "a=b,z=1"
        );
        assert_eq!(quantity_string(Some(&json!("1.5Gi"))), "1536Mi");
        assert_eq!(quantity_string(Some(&json!("10Gi"))), "10Gi");
        assert_eq!(quantity_string(None), "0");
        assert_eq!(opt_quantity_string(None), "<nil>");
        assert_eq!(
            access_modes(&[json!("ReadWriteMany"), json!("ReadWriteOnce")]),
            "RWO,RWX"
        );
        assert_eq!(
            load_balancer_ingress(&[
                json!({"ip": "5.6.7.8"}),
                json!({"hostname": "lb.example"}),
                json!({"ip": "1.2.3.4"})
            ]),
            "1.2.3.4,5.6.7.8,lb.example"
        );
    }
}
