//! Tables of custom resources: the CRD's `additionalPrinterColumns`, or the
//! single Age column kube gives a CRD without them
//! (`apiextensions-apiserver/pkg/registry/customresource/tableconvertor`).

use serde_json::{json, Value};

use super::descriptions as doc;
use super::duration;
use crate::crd::PrinterColumn;
use crate::object;

/// The columns when the CRD names none (`crdHandler.getOrCreateServingInfoFor`).
fn default_printer_columns() -> Vec<PrinterColumn> {
    vec![PrinterColumn {
        name: "Age".into(),
        type_: "date".into(),
        format: String::new(),
        description: doc::OBJECT_META_CREATION_TIMESTAMP.into(),
        priority: 0,
        json_path: ".metadata.creationTimestamp".into(),
    }]
}

fn effective(columns: &[PrinterColumn]) -> std::borrow::Cow<'_, [PrinterColumn]> {
    if columns.is_empty() {
        std::borrow::Cow::Owned(default_printer_columns())
    } else {
        std::borrow::Cow::Borrowed(columns)
    }
}

/// The column definitions: Name, then each printer column.
pub fn columns(columns: &[PrinterColumn]) -> Value {
    let mut out = vec![json!({
        "name": "Name", "type": "string", "format": "name",
        "description": doc::OBJECT_META_NAME, "priority": 0,
    })];
    for column in effective(columns).iter() {
        let description = if column.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                column.json_path
            )
        } else {
            column.description.clone()
        };
        out.push(json!({
            "name": column.name, "type": column.type_, "format": column.format,
            "description": description, "priority": column.priority,
        }));
    }
    Value::Array(out)
}

/// One row's cells (`convertor.ConvertToTable`).
pub fn cells(columns: &[PrinterColumn], value: &Value, now: i64) -> Vec<Value> {
    let mut cells = vec![json!(object::name(value))];
    for column in effective(columns).iter() {
        let cell = match find(value, &column.json_path) {
            None => Value::Null,
            Some(found) if column.type_ == "string" => match found {
                Value::String(text) => json!(text),
                // jsonpath's text output is Go's `fmt.Fprint` of the value.
                other => json!(crate::go::fmt::value_v(Some(other))),
            },
            Some(found) => cell_for_json_value(&column.type_, found, now),
        };
        cells.push(cell);
    }
    cells
}

/// `cellForJSONValue`.
fn cell_for_json_value(kind: &str, value: &Value, now: i64) -> Value {
    match (kind, value) {
        ("integer", Value::Number(number)) => number
            .as_i64()
            .or_else(|| number.as_f64().map(|float| float as i64))
            .map_or(Value::Null, |int| json!(int)),
        ("number", Value::Number(number)) => {
            number.as_f64().map_or(Value::Null, |float| json!(float))
        }
        ("boolean", Value::Bool(flag)) => json!(flag),
        ("string", Value::String(text)) => json!(text),
        ("date", Value::String(text)) => match duration::parse_nanos(text) {
            Some(_) => json!(duration::since(Some(text), now)),
            None => json!("<invalid>"),
        },
        _ => Value::Null,
    }
}

/// The value a simple JSONPath (`.spec.replicas`, `.status.conditions[0].type`,
/// `.metadata.labels['app\.kubernetes\.io/name']`) names, as client-go's
/// jsonpath finds it with missing keys allowed: `None` when absent.
fn find<'a>(value: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = value;
    let mut rest = path.trim();
    rest = rest.strip_prefix('{').unwrap_or(rest);
    rest = rest.strip_suffix('}').unwrap_or(rest);
    rest = rest.strip_prefix('$').unwrap_or(rest);
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let field = &after[..end];
            if !field.is_empty() {
                current = current.get(field)?;
            }
            rest = &after[end..];
        } else if let Some(after) = rest.strip_prefix('[') {
            let end = after.find(']')?;
            let inside = after[..end].trim();
            current = match inside
                .strip_prefix('\'')
                .and_then(|quoted| quoted.strip_suffix('\''))
            {
                Some(key) => current.get(key.replace("\\.", ".").as_str())?,
                None => {
                    let index: i64 = inside.parse().ok()?;
                    let items = current.as_array()?;
                    let at = if index < 0 {
                        items.len().checked_sub(index.unsigned_abs() as usize)?
                    } else {
                        usize::try_from(index).ok()?
                    };
                    items.get(at)?
                }
            };
            rest = &after[end + 1..];
        } else {
            return None;
        }
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn column(name: &str, kind: &str, path: &str) -> PrinterColumn {
        PrinterColumn {
            name: name.into(),
            type_: kind.into(),
            format: String::new(),
            description: String::new(),
            priority: 0,
            json_path: path.into(),
        }
    }

    #[test]
    fn printer_columns_follow_the_jsonpath() {
        let widget = json!({
            "metadata": {"name": "w1", "labels": {"app.kubernetes.io/name": "demo"}},
            "spec": {"color": "red", "size": 3.0, "ports": [80, 443], "on": true, "map": {"a": 1}},
        });
        let columns = [
            column("Color", "string", ".spec.color"),
            column("Size", "integer", ".spec.size"),
            column("Second", "integer", ".spec.ports[1]"),
            column("On", "boolean", ".spec.on"),
            column("Map", "string", ".spec.map"),
            column(
                "App",
                "string",
                ".metadata.labels['app\\.kubernetes\\.io/name']",
            ),
            column("Missing", "string", ".status.phase"),
            column("Wrong type", "integer", ".spec.color"),
        ];
        assert_eq!(
            cells(&columns, &widget, 0),
            vec![
                json!("w1"),
                json!("red"),
                json!(3),
                json!(443),
                json!(true),
                json!("map[a:1]"),
                json!("demo"),
                Value::Null,
                Value::Null,
            ]
        );
        let definitions = super::columns(&columns[..1]);
        assert_eq!(
            definitions[1]["description"],
            "Custom resource definition column (in JSONPath format): .spec.color"
        );
    }

    #[test]
    fn without_printer_columns_there_is_age() {
        let definitions = super::columns(&[]);
        let names: Vec<&str> = definitions
            .as_array()
            .unwrap()
            .iter()
            .map(|column| column["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["Name", "Age"]);
        assert_eq!(definitions[1]["type"], "date");
    }
}
