//! What create and update share: ObjectMeta rules, validation, dry-run and
//! the commit with its error mapping.

use ferrokube_store::{BackendError, Committed, StoreError, Txn};
use serde_json::Value;

use super::resource::Target;
use super::Api;
use crate::names;
use crate::object;
use crate::status::{FieldError, Result, Status};

/// `dryRun=All`; any other value is 422 Invalid on the request's options
/// (`ValidateDryRun`: `CreateOptions.meta.k8s.io "" is invalid: dryRun:
/// Unsupported value: []string{"foo"}: supported values: "All"`).
pub fn dry_run(request: &super::ApiRequest) -> Result<bool> {
    let errors = dry_run_errors(request);
    if !errors.is_empty() {
        return Err(options_invalid(request, &errors));
    }
    Ok(!request.query.all("dryRun").is_empty())
}

fn dry_run_errors(request: &super::ApiRequest) -> Vec<FieldError> {
    let values = request.query.all("dryRun");
    if values.iter().all(|value| *value == "All") {
        return Vec::new();
    }
    // Go's `%#v` of a []string.
    let rendered = format!(
        "[]string{{{}}}",
        values
            .iter()
            .map(|v| crate::status::go_quote(v))
            .collect::<Vec<_>>()
            .join(", ")
    );
    vec![FieldError {
        kind: crate::status::FieldErrorKind::NotSupported(rendered, vec!["\"All\"".into()]),
        field: "dryRun".into(),
        detail: String::new(),
    }]
}

/// The options kind a verb validates (`CreateOptions`, `UpdateOptions`, …).
fn options_kind(request: &super::ApiRequest) -> &'static str {
    match request.method {
        crate::route::Method::Post => "CreateOptions",
        crate::route::Method::Put => "UpdateOptions",
        crate::route::Method::Patch => "PatchOptions",
        _ => "DeleteOptions",
    }
}

fn options_invalid(request: &super::ApiRequest, errors: &[FieldError]) -> Status {
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
        if !crate::fieldmanager::is_go_printable(c) {
            errors.push(FieldError::invalid(
                "fieldManager",
                manager,
                format!("invalid character U+{:04X}", c as u32),
            ));
        }
    }
    errors
}

/// `ValidateCreateOptions` / `ValidateUpdateOptions` / `ValidatePatchOptions`
/// (`apimachinery/pkg/apis/meta/v1/validation`), checked before the body is
/// read: 422 Invalid on `<Kind>Options.meta.k8s.io ""` with every error.
/// `apply` says whether the PATCH is a server-side apply.
pub fn validate_options(request: &super::ApiRequest, apply: Option<bool>) -> Result<()> {
    let manager = request.query.get("fieldManager").unwrap_or("");
    let mut errors = Vec::new();
    match apply {
        Some(false) if request.query.get("force").is_some() => errors.push(FieldError::forbidden(
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
    if crate::field_validation::FieldValidation::parse(Some(validation)).is_err() {
        errors.push(FieldError::not_supported(
            "fieldValidation",
            validation,
            &["", "Ignore", "Strict", "Warn"],
        ));
    }
    if errors.is_empty() {
        Ok(())
    } else {
        Err(options_invalid(request, &errors))
    }
}

/// `ValidateObjectMeta` for name, generateName and namespace.
pub fn validate_meta(target: &Target<'_>, object: &Value, is_create: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = object::name(object);
    let generate_name = object::meta_str(object, "generateName");
    if name.is_empty() {
        if is_create && generate_name.is_empty() {
            errors.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        for message in names::validate(target.resource.name_rule, name, false) {
            errors.push(FieldError::invalid("metadata.name", name, message));
        }
    }
    if !generate_name.is_empty() {
        for message in names::validate(target.resource.name_rule, generate_name, true) {
            errors.push(FieldError::invalid(
                "metadata.generateName",
                generate_name,
                message,
            ));
        }
    }
    validate_labels_and_annotations(object, &mut errors);
    errors.extend(super::deletion::finalizer_errors(object));
    if target.resource.namespaced {
        let namespace = object::namespace(object);
        if namespace.is_empty() {
            errors.push(FieldError::required("metadata.namespace", ""));
        } else {
            for message in names::dns1123_label(namespace) {
                errors.push(FieldError::invalid(
                    "metadata.namespace",
                    namespace,
                    message,
                ));
            }
        }
    }
    errors
}

/// Total size limit of all annotations (`TotalAnnotationSizeLimitB`).
const TOTAL_ANNOTATION_SIZE_LIMIT: usize = 256 * 1024;

/// `ValidateLabels` and `ValidateAnnotations` (`apimachinery/pkg/api/validation/objectmeta.go`).
fn validate_labels_and_annotations(object: &Value, errors: &mut Vec<FieldError>) {
    let Some(metadata) = object::metadata(object) else {
        return;
    };
    if let Some(labels) = metadata.get("labels").and_then(Value::as_object) {
        for (key, value) in labels {
            for message in crate::selector::is_qualified_name(key) {
                errors.push(FieldError::invalid("metadata.labels", key, message));
            }
            let text = value.as_str().unwrap_or_default();
            for message in crate::selector::is_valid_label_value(text) {
                errors.push(FieldError::invalid("metadata.labels", text, message));
            }
        }
    }
    if let Some(annotations) = metadata.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (key, value) in annotations {
            total += key.len() + value.as_str().map_or(0, str::len);
            for message in crate::selector::is_qualified_name(&key.to_lowercase()) {
                errors.push(FieldError::invalid("metadata.annotations", key, message));
            }
        }
        if total > TOTAL_ANNOTATION_SIZE_LIMIT {
            errors.push(FieldError {
                kind: crate::status::FieldErrorKind::TooLong(TOTAL_ANNOTATION_SIZE_LIMIT),
                field: "metadata.annotations".into(),
                detail: String::new(),
            });
        }
    }
}

/// Decode-time normalisation kube does when it turns JSON into its typed
/// object: quantities take their canonical form; an unparsable one is the
/// decoder's 400 (`... cannot be handled as a Deployment: quantities must match ...`).
pub fn normalize(api: &Api, target: &Target<'_>, object: &mut Value) -> Result<()> {
    let resource = target.resource;
    let errors = crate::schema_walk::canonicalize_quantities(
        &api.openapi,
        resource.group,
        resource.version,
        resource.kind,
        object,
    );
    match crate::schema_walk::decode_error_message(
        resource.kind,
        resource.version,
        resource.kind,
        &errors,
    ) {
        Some(message) => Err(Status::bad_request(message)),
        None => Ok(()),
    }
}

pub fn invalid(target: &Target<'_>, object: &Value, errors: &[FieldError]) -> Status {
    Status::invalid(
        target.resource.group,
        target.resource.kind,
        object::name(object),
        errors,
    )
}

/// Put the URL's namespace into the object, or 400 when the body names another
/// (`rest.BeforeCreate` / `BeforeUpdate`); cluster-scoped objects lose any namespace.
pub fn settle_namespace(target: &Target<'_>, object: &mut Value) -> Result<()> {
    let body_namespace = object::namespace(object).to_string();
    let Some(metadata) = object::metadata_mut(object) else {
        return Err(Status::bad_request("object has no metadata"));
    };
    if target.resource.namespaced {
        let namespace = target.namespace.unwrap_or_default();
        if !body_namespace.is_empty() && body_namespace != namespace {
            return Err(Status::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        metadata.insert("namespace".into(), Value::String(namespace.to_string()));
    } else {
        metadata.remove("namespace");
    }
    Ok(())
}

/// Store errors as kube reports them.
pub fn map_store_error(target: &Target<'_>, name: &str, error: StoreError) -> Status {
    match error {
        StoreError::Backend(BackendError::PreconditionFailed {
            actual: Some(_), ..
        }) => Status::conflict(&target.group_resource(), name),
        StoreError::Backend(BackendError::PreconditionFailed { actual: None, .. }) => {
            Status::not_found(&target.group_resource(), name)
        }
        StoreError::RevisionTimeout { .. } => Status::timeout(error.to_string(), 1),
        other => Status::internal(other),
    }
}

/// The bytes `object` is stored as under `key`, or the Status kube-apiserver
/// on etcd answers when they exceed what one etcd request may carry
/// (`object::bounds`), on every backend alike.
pub fn stored_bytes(key: &str, object: &Value) -> Result<bytes::Bytes> {
    let bytes = object::storage_bytes(object);
    if !object::bounds::fits_one_request(key, bytes.len()) {
        return Err(object::bounds::too_large());
    }
    Ok(bytes)
}

pub async fn commit(api: &Api, txn: Txn) -> std::result::Result<Committed, StoreError> {
    api.store.commit(txn).await
}
