//! The options of a write (kube's `CreateOptions`, `UpdateOptions`,
//! `PatchOptions`), parsed from the query once at the start of a write and
//! validated as `ValidateCreateOptions` / `ValidateUpdateOptions` /
//! `ValidatePatchOptions` (`apimachinery/pkg/apis/meta/v1/validation`) do:
//! handlers and the write pipeline read these typed values, never the
//! query parameters by name.

use super::exchange::ApiRequest;
use crate::field_validation::FieldValidation;
use crate::status::{FieldError, Result, Status};

/// A write's options, valid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`, as given (empty when absent).
    pub field_manager: String,
    /// `fieldValidation` (`Warn` when absent).
    pub field_validation: FieldValidation,
    /// `force`, as given; [`WriteOptions::force`] reads it.
    force: Option<String>,
}

impl WriteOptions {
    /// The options of `request`, or kube's 422 Invalid on
    /// `<Kind>Options.meta.k8s.io ""` listing every error. `apply` says, for
    /// a PATCH, whether it is a server-side apply (`None` for POST and PUT).
    pub fn parse(request: &ApiRequest, apply: Option<bool>) -> Result<Self> {
        let manager = request.query.get("fieldManager").unwrap_or("");
        let force = request.query.get("force");
        let mut errors = Vec::new();
        match apply {
            Some(false) if force.is_some() => errors.push(FieldError::forbidden(
                "force",
                "may not be specified for non-apply patch",
            )),
            Some(true) if manager.is_empty() => errors.push(FieldError::required(
                "fieldManager",
                "is required for apply patch",
            )),
            _ => {}
        }
        errors.extend(field_manager_errors(manager));
        errors.extend(dry_run_errors(request));
        let validation = request.query.get("fieldValidation").unwrap_or("");
        let field_validation = FieldValidation::parse(Some(validation));
        if field_validation.is_err() {
            errors.push(FieldError::not_supported(
                "fieldValidation",
                validation,
                &["", "Ignore", "Strict", "Warn"],
            ));
        }
        if !errors.is_empty() {
            return Err(options_invalid(request, &errors));
        }
        Ok(WriteOptions {
            dry_run: !request.query.all("dryRun").is_empty(),
            field_manager: manager.to_string(),
            field_validation: field_validation.unwrap_or_default(),
            force: force.map(str::to_string),
        })
    }

    /// Server-side apply's `force`: false when absent; a value that is not
    /// a Go boolean is the 400 of its query decoding.
    pub fn force(&self) -> Result<bool> {
        let Some(text) = self.force.as_deref() else {
            return Ok(false);
        };
        crate::go::strconv::parse_bool(text).map_err(Status::bad_request)
    }

    /// The admission caller of this write: the request's user, dry-run and
    /// the options object kube hands admission (`CreateOptions`,
    /// `UpdateOptions` or `PatchOptions`, as the query gave them).
    pub fn caller(&self, request: &ApiRequest) -> crate::admission::Caller {
        let force = match request.method {
            crate::route::Method::Patch => self.force().ok().filter(|force| *force),
            _ => None,
        };
        let options = crate::admission::attributes::write_options_object(
            options_kind(request),
            self.dry_run,
            &self.field_manager,
            request.query.get("fieldValidation").unwrap_or(""),
            force,
        );
        crate::admission::Caller::new(request.user.clone(), self.dry_run, options)
    }

    /// The manager recorded in managedFields: `fieldManager`, else derived
    /// from the User-Agent as kube does.
    pub fn manager(&self, request: &ApiRequest) -> String {
        crate::fieldmanager::manager_name(Some(&self.field_manager), request.header("user-agent"))
    }
}

fn dry_run_errors(request: &ApiRequest) -> Vec<FieldError> {
    let values = request.query.all("dryRun");
    if values.iter().all(|value| *value == "All") {
        return Vec::new();
    }
    let rendered = crate::go::fmt::sharp_v_strings(&values);
    vec![FieldError {
        kind: crate::status::FieldErrorKind::NotSupported(rendered, vec!["\"All\"".into()]),
        field: "dryRun".into(),
        detail: String::new(),
    }]
}

/// The options kind a verb validates (`CreateOptions`, `UpdateOptions`, …).
fn options_kind(request: &ApiRequest) -> &'static str {
    match request.method {
        crate::route::Method::Post => "CreateOptions",
        crate::route::Method::Put => "UpdateOptions",
        crate::route::Method::Patch => "PatchOptions",
        _ => "DeleteOptions",
    }
}

fn options_invalid(request: &ApiRequest, errors: &[FieldError]) -> Status {
    Status::invalid("meta.k8s.io", options_kind(request), "", errors)
}

/// `ValidateFieldManager`: at most 128 bytes, printable characters only.
fn field_manager_errors(manager: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if manager.len() > crate::fieldmanager::FIELD_MANAGER_MAX_LENGTH {
        errors.push(FieldError {
            kind: crate::status::FieldErrorKind::TooLong(
                crate::fieldmanager::FIELD_MANAGER_MAX_LENGTH,
            ),
            field: "fieldManager".into(),
            detail: String::new(),
        });
    }
    for c in manager.chars() {
        if !crate::go::strconv::is_print(c) {
            errors.push(FieldError::invalid(
                "fieldManager",
                manager,
                format!("invalid character U+{:04X}", c as u32),
            ));
        }
    }
    errors
}
