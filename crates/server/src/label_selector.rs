//! `metav1.LabelSelector` objects (`matchLabels`, `matchExpressions`) as
//! `metav1.LabelSelectorAsSelector` compiles them, shared by the controllers
//! (clusterrole aggregation, disruption) and the eviction subresource.

use serde_json::Value;

/// A selector kube's `LabelSelectorAsSelector` refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid selector {selector}: {message}")]
pub struct SelectorError {
    pub selector: String,
    pub message: String,
}

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
/// every object).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selector(Vec<Requirement>);

impl Selector {
    /// `metav1.LabelSelectorAsSelector` of a `metav1.LabelSelector` (`{}`: everything).
    pub fn parse(selector: &Value) -> Result<Selector, SelectorError> {
        let invalid = |message: String| SelectorError {
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

    /// Whether a JSON `labels` map satisfies every requirement.
    pub fn matches_labels(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.matches(|key| {
            labels
                .and_then(|labels| labels.get(key))
                .and_then(Value::as_str)
        })
    }
}
