//! `metav1.Status` errors, shaped exactly as kube-apiserver builds them
//! (`k8s.io/apimachinery/pkg/api/errors/errors.go`) and field errors as
//! `k8s.io/apimachinery/pkg/util/validation/field/errors.go` prints them.

use crate::go::strconv::quote as go_quote;
use serde_json::{json, Map, Value};

/// A group plus plural resource, printed `deployments.apps` (`schema.GroupResource.String()`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupResource {
    pub group: String,
    pub resource: String,
}

impl GroupResource {
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }
}

impl std::fmt::Display for GroupResource {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.group.is_empty() {
            write!(formatter, "{}", self.resource)
        } else {
            write!(formatter, "{}.{}", self.resource, self.group)
        }
    }
}

/// One `StatusCause`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub reason: String,
    pub message: String,
    pub field: String,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Details {
    pub name: String,
    pub group: String,
    pub kind: String,
    pub causes: Vec<Cause>,
    pub retry_after_seconds: Option<u32>,
}

/// What kube-apiserver answers, as `text/plain` with a 500, when a request
/// panics (`genericfilters.WithPanicRecovery`).
pub const PANIC_BODY: &str =
    "This request caused apiserver to panic. Look in the logs for details.\n";

/// A failure answered as a `Status` body with its HTTP code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub details: Option<Box<Details>>,
}

impl std::fmt::Display for Status {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            formatter,
            "{} ({}): {}",
            self.code, self.reason, self.message
        )
    }
}

impl std::error::Error for Status {}

pub type Result<T, E = Status> = std::result::Result<T, E>;

fn details(resource: &GroupResource, name: &str) -> Details {
    Details {
        name: name.to_string(),
        group: resource.group.clone(),
        kind: resource.resource.clone(),
        ..Details::default()
    }
}

impl Status {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Status {
            code,
            reason,
            message: message.into(),
            details: None,
        }
    }

    /// `NewNotFound`.
    pub fn not_found(resource: &GroupResource, name: &str) -> Self {
        Status {
            details: Some(Box::new(details(resource, name))),
            ..Status::new(404, "NotFound", format!("{resource} \"{name}\" not found"))
        }
    }

    /// The 404 for a path or resource the server does not serve (`NewGenericServerResponse` 404).
    pub fn no_such_resource() -> Self {
        Status {
            details: Some(Box::default()),
            ..Status::new(
                404,
                "NotFound",
                "the server could not find the requested resource",
            )
        }
    }

    /// `NewAlreadyExists`.
    pub fn already_exists(resource: &GroupResource, name: &str) -> Self {
        Status {
            details: Some(Box::new(details(resource, name))),
            ..Status::new(
                409,
                "AlreadyExists",
                format!("{resource} \"{name}\" already exists"),
            )
        }
    }

    /// `NewConflict` with the optimistic-concurrency message (`registry.OptimisticLockErrorMsg`).
    pub fn conflict(resource: &GroupResource, name: &str) -> Self {
        Self::conflict_because(
            resource,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// `NewConflict(qualifiedResource, name, err)`.
    pub fn conflict_because(resource: &GroupResource, name: &str, why: &str) -> Self {
        Status {
            details: Some(Box::new(details(resource, name))),
            ..Status::new(
                409,
                "Conflict",
                format!("Operation cannot be fulfilled on {resource} \"{name}\": {why}"),
            )
        }
    }

    /// `NewInvalid(qualifiedKind, name, errs)`: 422 with one cause per field error.
    pub fn invalid(group: &str, kind: &str, name: &str, errors: &[FieldError]) -> Self {
        let qualified_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let aggregate = if errors.len() == 1 {
            errors[0].to_string()
        } else {
            format!(
                "[{}]",
                errors
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        let causes = errors
            .iter()
            .map(|error| Cause {
                reason: error.kind.cause_type().to_string(),
                message: error.body(),
                field: error.field.clone(),
            })
            .collect();
        Status {
            details: Some(Box::new(Details {
                name: name.to_string(),
                group: group.to_string(),
                kind: kind.to_string(),
                causes,
                retry_after_seconds: None,
            })),
            ..Status::new(
                422,
                "Invalid",
                format!("{qualified_kind} \"{name}\" is invalid: {aggregate}"),
            )
        }
    }

    pub fn bad_request(message: impl Into<String>) -> Self {
        Status::new(400, "BadRequest", message)
    }

    /// `NewMethodNotSupported`.
    pub fn method_not_supported(resource: &GroupResource, action: &str) -> Self {
        Status {
            details: Some(Box::new(Details {
                group: resource.group.clone(),
                kind: resource.resource.clone(),
                ..Details::default()
            })),
            ..Status::new(
                405,
                "MethodNotAllowed",
                format!("{action} is not supported on resources of kind \"{resource}\""),
            )
        }
    }

    pub fn method_not_allowed() -> Self {
        Status {
            details: Some(Box::default()),
            ..Status::new(
                405,
                "MethodNotAllowed",
                "the server does not allow this method on the requested resource",
            )
        }
    }

    /// `NewNotAcceptableError` as the negotiation layer words it.
    pub fn not_acceptable(accepted: &[&str]) -> Self {
        Status::new(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: {}",
                accepted.join(", ")
            ),
        )
    }

    /// `NewUnsupportedMediaTypeError`.
    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        let _ = content_type;
        Status::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
    }

    /// `NewRequestEntityTooLargeError(fmt.Sprintf("limit is %d", limit))`.
    pub fn request_entity_too_large(limit: usize) -> Self {
        Status::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    pub fn unauthorized() -> Self {
        Status::new(401, "Unauthorized", "Unauthorized")
    }

    /// `NewForbidden`.
    pub fn forbidden(resource: &GroupResource, name: &str, why: &str) -> Self {
        let message = if resource.group.is_empty() && resource.resource.is_empty() {
            format!("forbidden: {why}")
        } else if name.is_empty() {
            format!("{resource} is forbidden: {why}")
        } else {
            format!("{resource} {} is forbidden: {why}", go_quote(name))
        };
        Status {
            details: Some(Box::new(details(resource, name))),
            ..Status::new(403, "Forbidden", message)
        }
    }

    /// `NewInternalError`.
    pub fn internal(error: impl std::fmt::Display) -> Self {
        Status {
            details: Some(Box::new(Details {
                causes: vec![Cause {
                    reason: String::new(),
                    message: error.to_string(),
                    field: String::new(),
                }],
                ..Details::default()
            })),
            ..Status::new(
                500,
                "InternalError",
                format!("Internal error occurred: {error}"),
            )
        }
    }

    /// `ErrorToAPIStatus` of an error that is no API status (a plain Go
    /// `error`): 500 without a reason, the error's text as the message.
    pub fn unknown(message: impl Into<String>) -> Self {
        Status::new(500, "", message)
    }

    /// `NewResourceExpired`: 410 Expired.
    pub fn gone(message: impl Into<String>) -> Self {
        Status::new(410, "Expired", message)
    }

    /// `NewServerTimeout`-style 504 (used when a resource version never arrives).
    pub fn timeout(message: impl Into<String>, retry_after_seconds: u32) -> Self {
        Status {
            details: Some(Box::new(Details {
                retry_after_seconds: Some(retry_after_seconds),
                ..Details::default()
            })),
            ..Status::new(504, "Timeout", message)
        }
    }

    /// The `metav1.Status` object.
    pub fn to_json(&self) -> Value {
        let mut status = Map::new();
        status.insert("kind".into(), json!("Status"));
        status.insert("apiVersion".into(), json!("v1"));
        status.insert("metadata".into(), json!({}));
        status.insert("status".into(), json!("Failure"));
        status.insert("message".into(), json!(self.message));
        // `reason` is omitempty: an error that is no API status has none.
        if !self.reason.is_empty() {
            status.insert("reason".into(), json!(self.reason));
        }
        if let Some(details) = &self.details {
            let mut body = Map::new();
            if !details.name.is_empty() {
                body.insert("name".into(), json!(details.name));
            }
            if !details.group.is_empty() {
                body.insert("group".into(), json!(details.group));
            }
            if !details.kind.is_empty() {
                body.insert("kind".into(), json!(details.kind));
            }
            if !details.causes.is_empty() {
                let causes = details
                    .causes
                    .iter()
                    .map(|cause| {
                        let mut entry = Map::new();
                        if !cause.reason.is_empty() {
                            entry.insert("reason".into(), json!(cause.reason));
                        }
                        entry.insert("message".into(), json!(cause.message));
                        if !cause.field.is_empty() {
                            entry.insert("field".into(), json!(cause.field));
                        }
                        Value::Object(entry)
                    })
                    .collect();
                body.insert("causes".into(), Value::Array(causes));
            }
            if let Some(seconds) = details.retry_after_seconds {
                body.insert("retryAfterSeconds".into(), json!(seconds));
            }
            status.insert("details".into(), Value::Object(body));
        }
        status.insert("code".into(), json!(self.code));
        Value::Object(status)
    }
}

/// The kinds of `field.Error`, with their `CauseType`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// `field.Invalid(path, value, detail)`; the value is already rendered as Go's `%#v` would.
    Invalid(String),
    Required,
    Forbidden,
    /// `field.NotSupported(path, value, validValues)`.
    NotSupported(String, Vec<String>),
    Duplicate(String),
    /// `field.TooLong(path, value, maxLength)`.
    TooLong(usize),
    /// `field.TypeInvalid(path, value, detail)`: printed as "Invalid value",
    /// the value already rendered.
    TypeInvalid(String),
    /// `field.TooMany(path, actual, max)`.
    TooMany(i64, i64),
    /// `field.NotFound(path, value)`, the value already rendered.
    NotFound(String),
    /// `field.Invalid(path, field.OmitValueType{}, detail)`: no value printed.
    InvalidOmitted,
    /// `field.InternalError(path, err)`: the error's text is the detail.
    Internal,
}

impl FieldErrorKind {
    fn cause_type(&self) -> &'static str {
        match self {
            FieldErrorKind::Invalid(_) => "FieldValueInvalid",
            FieldErrorKind::Required => "FieldValueRequired",
            FieldErrorKind::Forbidden => "FieldValueForbidden",
            FieldErrorKind::NotSupported(..) => "FieldValueNotSupported",
            FieldErrorKind::Duplicate(_) => "FieldValueDuplicate",
            FieldErrorKind::TooLong(..) => "FieldValueTooLong",
            FieldErrorKind::TypeInvalid(_) => "FieldValueTypeInvalid",
            FieldErrorKind::TooMany(..) => "FieldValueTooMany",
            FieldErrorKind::NotFound(_) => "FieldValueNotFound",
            FieldErrorKind::InvalidOmitted => "FieldValueInvalid",
            FieldErrorKind::Internal => "InternalError",
        }
    }
}

/// One validation failure on one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub kind: FieldErrorKind,
    pub field: String,
    pub detail: String,
}

impl FieldError {
    /// `field.ErrorList.ToAggregate().Error()`: one error as it is, several
    /// in brackets, a repeated message once.
    pub fn aggregate(errors: &[FieldError]) -> String {
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        crate::go::errors::aggregate(&messages)
    }

    pub fn invalid(field: &str, value: &str, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorKind::Invalid(go_quote(value)),
            field: field.to_string(),
            detail: detail.into(),
        }
    }

    pub fn required(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorKind::Required,
            field: field.to_string(),
            detail: detail.into(),
        }
    }

    pub fn forbidden(field: &str, detail: impl Into<String>) -> Self {
        FieldError {
            kind: FieldErrorKind::Forbidden,
            field: field.to_string(),
            detail: detail.into(),
        }
    }

    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Self {
        FieldError {
            kind: FieldErrorKind::NotSupported(
                go_quote(value),
                supported.iter().map(|v| go_quote(v)).collect(),
            ),
            field: field.to_string(),
            detail: String::new(),
        }
    }

    /// The message without the field path (`ErrorBody`), used for `StatusCause.message`.
    pub fn body(&self) -> String {
        let detail_suffix = |base: String| {
            if self.detail.is_empty() {
                base
            } else {
                format!("{base}: {}", self.detail)
            }
        };
        match &self.kind {
            FieldErrorKind::Invalid(value) => detail_suffix(format!("Invalid value: {value}")),
            FieldErrorKind::Required => detail_suffix("Required value".to_string()),
            FieldErrorKind::Forbidden => detail_suffix("Forbidden".to_string()),
            FieldErrorKind::NotSupported(value, supported) => {
                let mut text = format!("Unsupported value: {value}");
                if !supported.is_empty() {
                    text.push_str(&format!(": supported values: {}", supported.join(", ")));
                }
                text
            }
            FieldErrorKind::Duplicate(value) => detail_suffix(format!("Duplicate value: {value}")),
            FieldErrorKind::NotFound(value) => detail_suffix(format!("Not found: {value}")),
            FieldErrorKind::TooLong(max) => format!("Too long: may not be more than {max} bytes"),
            FieldErrorKind::TypeInvalid(value) => detail_suffix(format!("Invalid value: {value}")),
            FieldErrorKind::InvalidOmitted => detail_suffix("Invalid value".to_string()),
            FieldErrorKind::Internal => detail_suffix("Internal error".to_string()),
            FieldErrorKind::TooMany(actual, max) => {
                let items = if *max == 1 { "item" } else { "items" };
                format!("Too many: {actual}: must have at most {max} {items}")
            }
        }
    }
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{}: {}", self.field, self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_kube() {
        let status = Status::not_found(&GroupResource::new("apps", "deployments"), "web");
        assert_eq!(
            status.to_json(),
            json!({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure",
                   "message":"deployments.apps \"web\" not found","reason":"NotFound",
                   "details":{"name":"web","group":"apps","kind":"deployments"},"code":404})
        );
    }

    #[test]
    fn each_constructor_has_kube_code_and_reason() {
        let configmaps = GroupResource::new("", "configmaps");
        let cases: Vec<(Status, u16, &str, &str)> = vec![
            (Status::already_exists(&configmaps, "a"), 409, "AlreadyExists", "configmaps \"a\" already exists"),
            (
                Status::conflict(&configmaps, "a"),
                409,
                "Conflict",
                "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; please apply your changes to the latest version and try again",
            ),
            (Status::bad_request("bad"), 400, "BadRequest", "bad"),
            (Status::request_entity_too_large(3145728), 413, "RequestEntityTooLarge", "Request entity too large: limit is 3145728"),
            (Status::unauthorized(), 401, "Unauthorized", "Unauthorized"),
            (Status::no_such_resource(), 404, "NotFound", "the server could not find the requested resource"),
            (
                Status::method_not_supported(&configmaps, "deletecollection"),
                405,
                "MethodNotAllowed",
                "deletecollection is not supported on resources of kind \"configmaps\"",
            ),
        ];
        for (status, code, reason, message) in cases {
            assert_eq!(
                (status.code, status.reason, status.message.as_str()),
                (code, reason, message)
            );
            assert_eq!(status.to_json()["code"], json!(code));
        }
    }

    #[test]
    fn invalid_aggregates_field_errors_like_kube() {
        let errors = vec![
            FieldError::invalid("metadata.name", "Bad", "must be lowercase"),
            FieldError::required("spec.selector", ""),
        ];
        let status = Status::invalid("apps", "Deployment", "Bad", &errors);
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            "Deployment.apps \"Bad\" is invalid: [metadata.name: Invalid value: \"Bad\": must be lowercase, spec.selector: Required value]"
        );
        let body = status.to_json();
        assert_eq!(body["details"]["kind"], json!("Deployment"));
        assert_eq!(
            body["details"]["causes"][0]["reason"],
            json!("FieldValueInvalid")
        );
        assert_eq!(
            body["details"]["causes"][0]["message"],
            json!("Invalid value: \"Bad\": must be lowercase")
        );
        assert_eq!(
            body["details"]["causes"][1]["field"],
            json!("spec.selector")
        );
        let single = Status::invalid("", "ConfigMap", "x", &errors[1..]);
        assert_eq!(
            single.message,
            "ConfigMap \"x\" is invalid: spec.selector: Required value"
        );
    }
}
