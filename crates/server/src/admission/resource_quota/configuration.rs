//! ResourceQuota's plugin configuration (`plugin/resourcequota/apis/
//! resourcequota`: `ResourceQuotaConfiguration` of apiserver.config.k8s.io/v1,
//! `Configuration` of resourcequota.admission.k8s.io/v1beta1 and v1alpha1;
//! `LoadConfiguration`, decoded strictly since kube 1.32, then
//! `ValidateConfiguration`), read from the `--admission-control-config-file`:
//! the resources whose consumption is limited by default, so that a write
//! consuming them needs a quota covering it.

use serde_json::{Map, Value};

use super::scopes::ScopeRequirement;
use crate::status::FieldError;

/// The group versions and kinds kube decodes the configuration as.
const KINDS: &[(&str, &str)] = &[
    ("apiserver.config.k8s.io/v1", "ResourceQuotaConfiguration"),
    ("resourcequota.admission.k8s.io/v1beta1", "Configuration"),
    ("resourcequota.admission.k8s.io/v1alpha1", "Configuration"),
];

/// One `LimitedResource`: writes of `api_group`/`resource` that consume a
/// resource name containing one of `match_contains`, or whose object is in
/// one of `match_scopes`, need a covering quota.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LimitedResource {
    pub api_group: String,
    pub resource: String,
    pub match_contains: Vec<String>,
    pub match_scopes: Vec<ScopeRequirement>,
}

/// A validated configuration; the default (no file, or no configuration
/// for the plugin) limits nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct QuotaConfiguration {
    pub limited_resources: Vec<LimitedResource>,
}

impl QuotaConfiguration {
    /// Decodes strictly and validates a configuration; errors as kube's
    /// decoder and aggregate print them.
    pub fn parse(value: &Value) -> Result<QuotaConfiguration, String> {
        let text = |value: &Value, key: &str| -> String {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let api_version = text(value, "apiVersion");
        let kind = text(value, "kind");
        if kind.is_empty() {
            return Err(format!("Object 'Kind' is missing in '{value}'"));
        }
        if !KINDS.contains(&(api_version.as_str(), kind.as_str())) {
            return Err(format!(
                "no kind {} is registered for version {}",
                crate::go::strconv::quote(&kind),
                crate::go::strconv::quote(&api_version)
            ));
        }
        let object = value
            .as_object()
            .ok_or_else(|| "the configuration is no object".to_string())?;
        let mut unknown = Vec::new();
        unknown_fields(
            object,
            &["apiVersion", "kind", "limitedResources"],
            "",
            &mut unknown,
        );
        let mut limited_resources = Vec::new();
        match object.get("limitedResources") {
            None | Some(Value::Null) => {}
            Some(Value::Array(items)) => {
                for (index, item) in items.iter().enumerate() {
                    let path = format!("limitedResources[{index}]");
                    limited_resources.push(limited_resource(item, &path, &mut unknown)?);
                }
            }
            Some(_) => {
                return Err(type_error(
                    "limitedResources",
                    "[]v1.LimitedResource",
                    object.get("limitedResources"),
                ))
            }
        }
        if !unknown.is_empty() {
            let fields: Vec<String> = unknown
                .iter()
                .map(|field| format!("unknown field {}", crate::go::strconv::quote(field)))
                .collect();
            return Err(format!("strict decoding error: {}", fields.join(", ")));
        }
        let errors: Vec<FieldError> = limited_resources
            .iter()
            .enumerate()
            .filter(|(_, limited)| limited.resource.is_empty())
            .map(|(index, _)| {
                FieldError::required(&format!("limitedResources[{index}].resource"), "")
            })
            .collect();
        if !errors.is_empty() {
            return Err(FieldError::aggregate(&errors));
        }
        Ok(QuotaConfiguration { limited_resources })
    }
}

/// One `LimitedResource` at `path`.
fn limited_resource(
    item: &Value,
    path: &str,
    unknown: &mut Vec<String>,
) -> Result<LimitedResource, String> {
    let Some(object) = item.as_object() else {
        return Err(type_error(path, "v1.LimitedResource", Some(item)));
    };
    unknown_fields(
        object,
        &["apiGroup", "resource", "matchContains", "matchScopes"],
        path,
        unknown,
    );
    let string = |key: &str| -> Result<String, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(String::new()),
            Some(Value::String(text)) => Ok(text.clone()),
            other => Err(type_error(&format!("{path}.{key}"), "string", other)),
        }
    };
    let strings = |value: Option<&Value>, at: &str| -> Result<Vec<String>, String> {
        match value {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item {
                    Value::String(text) => Ok(text.clone()),
                    other => Err(type_error(at, "string", Some(other))),
                })
                .collect(),
            other => Err(type_error(at, "[]string", other)),
        }
    };
    let mut match_scopes = Vec::new();
    match object.get("matchScopes") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (index, scope) in items.iter().enumerate() {
                let at = format!("{path}.matchScopes[{index}]");
                let Some(fields) = scope.as_object() else {
                    return Err(type_error(
                        &at,
                        "v1.ScopedResourceSelectorRequirement",
                        Some(scope),
                    ));
                };
                unknown_fields(fields, &["scopeName", "operator", "values"], &at, unknown);
                let field = |key: &str| -> Result<String, String> {
                    match fields.get(key) {
                        None | Some(Value::Null) => Ok(String::new()),
                        Some(Value::String(text)) => Ok(text.clone()),
                        other => Err(type_error(&format!("{at}.{key}"), "string", other)),
                    }
                };
                match_scopes.push(ScopeRequirement {
                    scope_name: field("scopeName")?,
                    operator: field("operator")?,
                    values: strings(fields.get("values"), &format!("{at}.values"))?,
                });
            }
        }
        other => {
            return Err(type_error(
                &format!("{path}.matchScopes"),
                "[]v1.ScopedResourceSelectorRequirement",
                other,
            ))
        }
    }
    Ok(LimitedResource {
        api_group: string("apiGroup")?,
        resource: string("resource")?,
        match_contains: strings(
            object.get("matchContains"),
            &format!("{path}.matchContains"),
        )?,
        match_scopes,
    })
}

/// Adds the members of `object` not in `known` to `unknown`, by their path.
fn unknown_fields(
    object: &Map<String, Value>,
    known: &[&str],
    path: &str,
    unknown: &mut Vec<String>,
) {
    for key in object.keys() {
        if !known.contains(&key.as_str()) {
            unknown.push(if path.is_empty() {
                key.clone()
            } else {
                format!("{path}.{key}")
            });
        }
    }
}

/// `encoding/json`'s error for a value of the wrong type at `path`.
fn type_error(path: &str, go_type: &str, value: Option<&Value>) -> String {
    let found = match value {
        Some(Value::Bool(_)) => "bool",
        Some(Value::Number(_)) => "number",
        Some(Value::String(_)) => "string",
        Some(Value::Array(_)) => "array",
        Some(Value::Object(_)) => "object",
        _ => "null",
    };
    format!("json: cannot unmarshal {found} into Go struct field Configuration.{path} of type {go_type}")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_served_version_decodes_to_the_same_limits() {
        let body = |api_version: &str, kind: &str| {
            json!({
                "apiVersion": api_version, "kind": kind,
                "limitedResources": [
                    {"apiGroup": "", "resource": "persistentvolumeclaims",
                     "matchContains": [".storageclass.storage.k8s.io/requests.storage"]},
                    {"resource": "pods", "matchScopes": [
                        {"scopeName": "PriorityClass", "operator": "In", "values": ["cluster-services"]}]},
                ],
            })
        };
        let expected = QuotaConfiguration {
            limited_resources: vec![
                LimitedResource {
                    api_group: String::new(),
                    resource: "persistentvolumeclaims".into(),
                    match_contains: vec![".storageclass.storage.k8s.io/requests.storage".into()],
                    match_scopes: Vec::new(),
                },
                LimitedResource {
                    api_group: String::new(),
                    resource: "pods".into(),
                    match_contains: Vec::new(),
                    match_scopes: vec![ScopeRequirement {
                        scope_name: "PriorityClass".into(),
                        operator: "In".into(),
                        values: vec!["cluster-services".into()],
                    }],
                },
            ],
        };
        for (api_version, kind) in KINDS {
            assert_eq!(
                QuotaConfiguration::parse(&body(api_version, kind)),
                Ok(expected.clone()),
                "{api_version}"
            );
        }
        assert_eq!(
            QuotaConfiguration::parse(
                &json!({"apiVersion": "apiserver.config.k8s.io/v1", "kind": "ResourceQuotaConfiguration"})
            ),
            Ok(QuotaConfiguration::default())
        );
    }

    #[test]
    fn bad_configurations_are_refused_as_kube_refuses_them() {
        let refused = |value: Value| QuotaConfiguration::parse(&value).expect_err("refused");
        assert_eq!(
            refused(json!({"apiVersion": "resourcequota.admission.k8s.io/v1", "kind": "Configuration"})),
            "no kind \"Configuration\" is registered for version \"resourcequota.admission.k8s.io/v1\""
        );
        assert_eq!(
            refused(json!({
                "apiVersion": "apiserver.config.k8s.io/v1", "kind": "ResourceQuotaConfiguration",
                "limitedResources": [{"resource": "pods", "matchScope": []}], "extra": 1,
            })),
            "strict decoding error: unknown field \"extra\", unknown field \"limitedResources[0].matchScope\""
        );
        assert_eq!(
            refused(json!({
                "apiVersion": "apiserver.config.k8s.io/v1", "kind": "ResourceQuotaConfiguration",
                "limitedResources": [{"matchContains": ["requests.cpu"]}, {"resource": "pods"}, {"apiGroup": "x"}],
            })),
            "[limitedResources[0].resource: Required value, limitedResources[2].resource: Required value]"
        );
        assert_eq!(
            refused(json!({
                "apiVersion": "apiserver.config.k8s.io/v1", "kind": "ResourceQuotaConfiguration",
                "limitedResources": [{"resource": "pods", "matchContains": "cpu"}],
            })),
            "json: cannot unmarshal string into Go struct field Configuration.limitedResources[0].matchContains of type []string"
        );
    }
}
