//! `metav1.DeleteOptions` as a DELETE request carries them: from the body
//! (JSON, YAML, protobuf or CBOR) when there is one, otherwise from the
//! query (`handlers/delete.go` `DeleteResource`: a body wins entirely, the
//! query is then ignored), then
//! checked as `ValidateDeleteOptions`
//! (`apimachinery/pkg/apis/meta/v1/validation/validation.go`).

use serde_json::Value;

use crate::go::strconv::quote as go_quote;
use crate::status::{FieldError, FieldErrorKind, Result, Status};

/// `metav1.DeletionPropagation` values.
pub const FOREGROUND: &str = "Foreground";
pub const BACKGROUND: &str = "Background";
pub const ORPHAN: &str = "Orphan";

/// The unsafe-deletion option (`AllowUnsafeMalformedObjectDeletion`).
pub const IGNORE_STORE_READ_ERROR: &str = "ignoreStoreReadErrorWithClusterBreakingPotential";

/// `metav1.Preconditions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

/// `metav1.DeleteOptions`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeleteOptions {
    pub grace_period_seconds: Option<i64>,
    pub preconditions: Option<Preconditions>,
    pub orphan_dependents: Option<bool>,
    pub propagation_policy: Option<String>,
    pub dry_run: Vec<String>,
    pub ignore_store_read_error: Option<bool>,
}

impl DeleteOptions {
    /// Parse the options of a DELETE request, then validate them.
    pub fn from_request(request: &crate::api::exchange::ApiRequest) -> Result<Self> {
        Self::from_parts(
            &request.query,
            request.header("content-type").unwrap_or(""),
            &request.body,
        )
    }

    /// [`DeleteOptions::from_request`] from its parts: a body in JSON, YAML
    /// or Kubernetes protobuf (as client-go's protobuf clients send it).
    pub fn from_parts(
        query: &crate::query::Query,
        content_type: &str,
        body: &[u8],
    ) -> Result<Self> {
        let media = crate::negotiate::media_type(content_type);
        let options = if body.iter().all(u8::is_ascii_whitespace) {
            Self::from_query(query)?
        } else if media == crate::protobuf::CONTENT_TYPE {
            let value = crate::protobuf::decode_object(body, crate::protobuf::message_for)
                .map_err(|error| {
                    Status::bad_request(format!(
                        "couldn't get version/kind; protobuf decode error: {error}"
                    ))
                })?;
            Self::from_body(&serde_json::to_vec(&value).unwrap_or_default())?
        } else if media == crate::cbor::CONTENT_TYPE {
            let value = crate::cbor::decode(body).map_err(|error| {
                Status::bad_request(format!(
                    "couldn't get version/kind; cbor decode error: {error}"
                ))
            })?;
            Self::from_body(&serde_json::to_vec(&value).unwrap_or_default())?
        } else if media == "application/yaml" {
            let value = crate::yaml::yaml_to_json(body).map_err(|error| {
                Status::bad_request(format!(
                    "couldn't get version/kind; json parse error: {error}"
                ))
            })?;
            Self::from_body(&serde_json::to_vec(&value).unwrap_or_default())?
        } else {
            Self::from_body(body)?
        };
        options.validate()?;
        Ok(options)
    }

    pub fn is_dry_run(&self) -> bool {
        !self.dry_run.is_empty()
    }

    pub fn unsafe_delete(&self) -> bool {
        self.ignore_store_read_error == Some(true)
    }

    /// `ParameterCodec.DecodeParameters` of the query (preconditions have no query form).
    pub fn from_query(query: &crate::query::Query) -> Result<Self> {
        let grace_period_seconds = match query.get("gracePeriodSeconds") {
            None | Some("") => None,
            Some(text) => Some(text.parse::<i64>().map_err(|_| {
                Status::bad_request(format!(
                    "strconv.ParseInt: parsing {}: invalid syntax",
                    go_quote(text)
                ))
            })?),
        };
        Ok(DeleteOptions {
            grace_period_seconds,
            preconditions: None,
            orphan_dependents: query_bool(query, "orphanDependents"),
            propagation_policy: query.get("propagationPolicy").map(str::to_string),
            dry_run: query
                .all("dryRun")
                .into_iter()
                .map(str::to_string)
                .collect(),
            ignore_store_read_error: query_bool(query, IGNORE_STORE_READ_ERROR),
        })
    }

    /// A JSON `DeleteOptions` body (any group's `DeleteOptions` kind decodes the same).
    pub fn from_body(body: &[u8]) -> Result<Self> {
        let value: Value = serde_json::from_slice(body).map_err(|error| {
            Status::bad_request(format!(
                "couldn't get version/kind; json parse error: {error}"
            ))
        })?;
        let Some(map) = value.as_object() else {
            return Err(Status::bad_request(
                "couldn't get version/kind; json parse error: not a JSON object",
            ));
        };
        check_types(map)?;
        if let Some(kind) = map.get("kind").and_then(Value::as_str) {
            if !kind.is_empty() && kind != "DeleteOptions" {
                return Err(Status::internal(
                    "decoded object cannot be converted to DeleteOptions",
                ));
            }
        }
        let preconditions = map
            .get("preconditions")
            .filter(|value| !value.is_null())
            .map(|pre| Preconditions {
                uid: pre.get("uid").and_then(Value::as_str).map(str::to_string),
                resource_version: pre
                    .get("resourceVersion")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            });
        Ok(DeleteOptions {
            grace_period_seconds: map.get("gracePeriodSeconds").and_then(Value::as_i64),
            preconditions,
            orphan_dependents: map.get("orphanDependents").and_then(Value::as_bool),
            propagation_policy: map
                .get("propagationPolicy")
                .and_then(Value::as_str)
                .map(str::to_string),
            dry_run: map
                .get("dryRun")
                .and_then(Value::as_array)
                .map(|values| {
                    values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
            ignore_store_read_error: map.get(IGNORE_STORE_READ_ERROR).and_then(Value::as_bool),
        })
    }

    /// `ValidateDeleteOptions`: a 422 naming `DeleteOptions.meta.k8s.io`.
    pub fn validate(&self) -> Result<()> {
        let errors = self.field_errors();
        if errors.is_empty() {
            return Ok(());
        }
        Err(Status::invalid("meta.k8s.io", "DeleteOptions", "", &errors))
    }

    fn field_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if let (Some(_), Some(policy)) = (self.orphan_dependents, &self.propagation_policy) {
            errors.push(FieldError::invalid(
                "propagationPolicy",
                policy,
                "orphanDependents and deletionPropagation cannot be both set",
            ));
        }
        if let Some(policy) = self
            .propagation_policy
            .as_deref()
            .filter(|policy| ![FOREGROUND, BACKGROUND, ORPHAN].contains(policy))
        {
            errors.push(FieldError::not_supported(
                "propagationPolicy",
                policy,
                &[FOREGROUND, BACKGROUND, ORPHAN, "nil"],
            ));
        }
        if self.dry_run.iter().any(|value| value != "All") {
            errors.push(FieldError {
                kind: FieldErrorKind::NotSupported(
                    crate::go::fmt::sharp_v_strings(&self.dry_run),
                    vec![go_quote("All")],
                ),
                field: "dryRun".into(),
                detail: String::new(),
            });
        }
        if self.unsafe_delete() {
            // Unsafe deletion is exactly "remove the key": nothing else may shape it.
            let together =
                "cannot be set together with .ignoreStoreReadErrorWithClusterBreakingPotential";
            let mut invalid = |field: &str, value: String| {
                errors.push(FieldError {
                    kind: FieldErrorKind::Invalid(value),
                    field: field.into(),
                    detail: together.into(),
                })
            };
            if !self.dry_run.is_empty() {
                invalid("dryRun", crate::go::fmt::sharp_v_strings(&self.dry_run));
            }
            if let Some(seconds) = self.grace_period_seconds {
                invalid("gracePeriodSeconds", seconds.to_string());
            }
            if let Some(orphan) = self.orphan_dependents {
                invalid("orphanDependents", orphan.to_string());
            }
            if let Some(preconditions) = &self.preconditions {
                invalid("preconditions", go_preconditions(preconditions));
            }
            if let Some(policy) = &self.propagation_policy {
                invalid("propagationPolicy", go_quote(policy));
            }
        }
        errors
    }
}

/// A DeleteOptions field, its Go type, and whether a JSON value fits it.
type FieldType = (&'static str, &'static str, fn(&Value) -> bool);

/// The Go decoder's type errors for the fields a handler reads.
fn check_types(map: &serde_json::Map<String, Value>) -> Result<()> {
    let fields: [FieldType; 6] = [
        ("gracePeriodSeconds", "int64", |v| v.is_i64()),
        ("orphanDependents", "bool", Value::is_boolean),
        (
            "propagationPolicy",
            "v1.DeletionPropagation",
            Value::is_string,
        ),
        ("dryRun", "[]string", |v| {
            v.as_array()
                .is_some_and(|items| items.iter().all(Value::is_string))
        }),
        ("preconditions", "v1.Preconditions", Value::is_object),
        (IGNORE_STORE_READ_ERROR, "bool", Value::is_boolean),
    ];
    for (field, go_type, fits) in fields {
        let Some(value) = map.get(field).filter(|value| !value.is_null()) else {
            continue;
        };
        if !fits(value) {
            let json_type = match value {
                Value::Bool(_) => "bool",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
                Value::Null => "null",
            };
            return Err(Status::bad_request(format!(
                "json: cannot unmarshal {json_type} into Go struct field DeleteOptions.{field} of type {go_type}"
            )));
        }
    }
    Ok(())
}

/// A readable stand-in for Go's `%#v` of `v1.Preconditions` (Go prints pointer addresses).
fn go_preconditions(preconditions: &Preconditions) -> String {
    let field = |value: &Option<String>| match value {
        Some(value) => go_quote(value),
        None => "nil".to_string(),
    };
    format!(
        "v1.Preconditions{{UID:{}, ResourceVersion:{}}}",
        field(&preconditions.uid),
        field(&preconditions.resource_version)
    )
}

/// `Convert_Slice_string_To_Pointer_bool`: absent is unset, `0`/`false` false, anything else true.
fn query_bool(query: &crate::query::Query, name: &str) -> Option<bool> {
    query
        .get(name)
        .map(|value| !(value == "0" || value.eq_ignore_ascii_case("false")))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::Query;

    fn parse(query: &str, body: &str) -> Result<DeleteOptions> {
        DeleteOptions::from_parts(&Query::parse(query), "application/json", body.as_bytes())
    }

    #[test]
    fn yaml_and_protobuf_bodies() {
        let yaml = "kind: DeleteOptions\napiVersion: v1\ngracePeriodSeconds: 3\npropagationPolicy: Orphan\n";
        let options =
            DeleteOptions::from_parts(&Query::parse(""), "application/yaml", yaml.as_bytes())
                .unwrap();
        assert_eq!(options.grace_period_seconds, Some(3));
        assert_eq!(options.propagation_policy.as_deref(), Some(ORPHAN));
        let value = serde_json::json!({"apiVersion": "v1", "kind": "DeleteOptions",
            "gracePeriodSeconds": 0, "preconditions": {"uid": "u"}, "propagationPolicy": "Background"});
        let body = crate::protobuf::encode_envelope(&value).unwrap();
        let options = DeleteOptions::from_parts(
            &Query::parse(""),
            "application/vnd.kubernetes.protobuf",
            &body,
        )
        .unwrap();
        assert_eq!(options.grace_period_seconds, Some(0));
        assert_eq!(options.propagation_policy.as_deref(), Some(BACKGROUND));
        assert_eq!(options.preconditions.unwrap().uid.as_deref(), Some("u"));
        let body = crate::cbor::encode(&value);
        let options =
            DeleteOptions::from_parts(&Query::parse(""), "application/cbor", &body).unwrap();
        assert_eq!(options.propagation_policy.as_deref(), Some(BACKGROUND));
    }

    fn message(query: &str, body: &str) -> (u16, String) {
        let status = parse(query, body).expect_err("invalid");
        (status.code, status.message)
    }

    #[test]
    fn query_and_body_forms() {
        let options = parse(
            "gracePeriodSeconds=5&propagationPolicy=Foreground&dryRun=All",
            "",
        )
        .unwrap();
        assert_eq!(options.grace_period_seconds, Some(5));
        assert_eq!(options.propagation_policy.as_deref(), Some(FOREGROUND));
        assert!(options.is_dry_run());
        let body = r#"{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,
            "preconditions":{"uid":"u","resourceVersion":"7"},"orphanDependents":true}"#;
        // The body wins: the query's propagationPolicy is not read.
        let options = parse("propagationPolicy=Foreground", body).unwrap();
        assert_eq!(options.grace_period_seconds, Some(0));
        assert_eq!(options.orphan_dependents, Some(true));
        assert_eq!(options.propagation_policy, None);
        let pre = options.preconditions.unwrap();
        assert_eq!(
            (pre.uid.as_deref(), pre.resource_version.as_deref()),
            (Some("u"), Some("7"))
        );
        assert_eq!(
            parse("orphanDependents=false", "")
                .unwrap()
                .orphan_dependents,
            Some(false)
        );
    }

    #[test]
    fn validation_errors_as_kube() {
        assert_eq!(
            message("orphanDependents=true&propagationPolicy=Orphan", ""),
            (
                422,
                r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Invalid value: "Orphan": orphanDependents and deletionPropagation cannot be both set"#
                    .into()
            )
        );
        assert_eq!(
            message("propagationPolicy=Sideways", ""),
            (
                422,
                r#"DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": supported values: "Foreground", "Background", "Orphan", "nil""#
                    .into()
            )
        );
        assert_eq!(
            message("dryRun=Some", ""),
            (
                422,
                r#"DeleteOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{"Some"}: supported values: "All""#
                    .into()
            )
        );
        assert_eq!(
            message("gracePeriodSeconds=soon", ""),
            (
                400,
                r#"strconv.ParseInt: parsing "soon": invalid syntax"#.into()
            )
        );
    }

    #[test]
    fn unsafe_deletion_stands_alone() {
        assert!(
            parse("ignoreStoreReadErrorWithClusterBreakingPotential=true", "")
                .unwrap()
                .unsafe_delete()
        );
        let (code, text) = message(
            "ignoreStoreReadErrorWithClusterBreakingPotential=true&dryRun=All&gracePeriodSeconds=0",
            "",
        );
        assert_eq!(code, 422);
        assert_eq!(
            text,
            r#"DeleteOptions.meta.k8s.io "" is invalid: [dryRun: Invalid value: []string{"All"}: cannot be set together with .ignoreStoreReadErrorWithClusterBreakingPotential, gracePeriodSeconds: Invalid value: 0: cannot be set together with .ignoreStoreReadErrorWithClusterBreakingPotential]"#
        );
        let body = r#"{"ignoreStoreReadErrorWithClusterBreakingPotential":true,"propagationPolicy":"Orphan","preconditions":{"uid":"u"}}"#;
        let (code, text) = message("", body);
        assert_eq!(code, 422);
        assert!(
            text.contains(
                r#"preconditions: Invalid value: v1.Preconditions{UID:"u", ResourceVersion:nil}"#
            ),
            "{text}"
        );
        assert!(
            text.contains(r#"propagationPolicy: Invalid value: "Orphan": cannot be set"#),
            "{text}"
        );
    }
}
