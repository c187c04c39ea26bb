//! `metav1.LabelSelector` (`matchLabels`, `matchExpressions`) compiled as
//! `metav1.LabelSelectorAsSelector` does, and matched against labels read
//! through a lookup (an object's index or a parsed object). The
//! clusterrole-aggregation controller and admission webhooks'
//! `namespaceSelector` / `objectSelector` read it.

use serde_json::Value;

/// One requirement of a `metav1.LabelSelector` (`LabelSelectorAsSelector`).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Requirement {
    Equals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A compiled `metav1.LabelSelector`: the AND of its requirements (none:
/// every role).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LabelSelectorError {
    #[error("invalid selector {selector}: {message}")]
    Invalid { selector: String, message: String },
}

impl Selector {
    /// `metav1.LabelSelectorAsSelector`.
    pub fn parse(selector: &Value) -> Result<Selector, LabelSelectorError> {
        let invalid = |message: String| LabelSelectorError::Invalid {
            selector: selector.to_string(),
            message,
        };
        let mut requirements = Vec::new();
        if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
            for (key, value) in labels {
                let value = value
                    .as_str()
                    .ok_or_else(|| invalid(format!("label {key} is not a string")))?;
                requirements.push(Requirement::Equals(key.clone(), value.to_string()));
            }
        }
        for expression in selector
            .get("matchExpressions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let key = expression
                .get("key")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let values: Vec<String> = expression
                .get("values")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let operator = expression
                .get("operator")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let requirement = match operator {
                "In" | "NotIn" if values.is_empty() => {
                    return Err(invalid(format!(
                        "for 'in', 'notin' operators, values set can't be empty ({key})"
                    )))
                }
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err(invalid(format!(
                        "values set must be empty for exists and does not exist ({key})"
                    )))
                }
                "In" => Requirement::In(key, values),
                "NotIn" => Requirement::NotIn(key, values),
                "Exists" => Requirement::Exists(key),
                "DoesNotExist" => Requirement::DoesNotExist(key),
                other => {
                    return Err(invalid(format!(
                        "{other:?} is not a valid label selector operator"
                    )))
                }
            };
            requirements.push(requirement);
        }
        Ok(Selector(requirements))
    }

    /// Whether labels (read through `label`) satisfy every requirement.
    pub fn matches<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.0.iter().all(|requirement| match requirement {
            Requirement::Equals(key, value) => label(key) == Some(value.as_str()),
            Requirement::In(key, values) => {
                label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::NotIn(key, values) => {
                !label(key).is_some_and(|v| values.iter().any(|x| x == v))
            }
            Requirement::Exists(key) => label(key).is_some(),
            Requirement::DoesNotExist(key) => label(key).is_none(),
        })
    }
}

impl Selector {
    /// Whether it selects everything (`Selector.Empty()`).
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Whether a labels map (a JSON object, or none) is selected.
    pub fn matches_labels(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.matches(|key| {
            labels
                .and_then(|labels| labels.get(key))
                .and_then(Value::as_str)
        })
    }
}
