//! The validation step: ObjectMeta rules (`ValidateObjectMeta`, labels,
//! annotations, finalizers), the namespace of the URL settled into the
//! object, decode-time normalisation, and the 422 that lists every cause.

use serde_json::Value;

use crate::api::context::Api;
use crate::api::deletion;
use crate::api::target::Target;
use crate::names;
use crate::object;
use crate::status::{FieldError, Result, Status};

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
    errors.extend(deletion::finalizer_errors(object));
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
    // core's ValidateObjectMeta adds validateKubeFinalizerName after the rest.
    errors.extend(crate::validation::kube_finalizer::finalizer_names(
        target.resource,
        object,
    ));
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

/// The rules of a kind's own validation (`Validate<Kind>` /
/// `Validate<Kind>Update`), after defaulting; `old` on update.
/// The rules kube's strategies check against other stored objects before
/// the kind's own validation: admin access to devices needs the claim's
/// namespace to carry `resource.kubernetes.io/admin-access: true`
/// (`pkg/registry/resource/utils.go` `AuthorizedForAdmin`, `AuthorizedForAdminStatus`).
/// A namespace that is not stored (only possible with NamespaceLifecycle off)
/// counts as unlabelled.
pub fn stored_rules(
    api: &Api,
    target: &Target<'_>,
    object: &Value,
    old: Option<&Value>,
) -> Vec<FieldError> {
    use crate::validation::resource_admin;
    let resource = target.resource;
    if resource.group != "resource.k8s.io" {
        return Vec::new();
    }
    let path = match (resource.kind, target.subresource, old) {
        ("ResourceClaim", None, None) => resource_admin::requested_in_spec(object, false),
        ("ResourceClaimTemplate", None, None) => resource_admin::requested_in_spec(object, true),
        ("ResourceClaim", Some("status"), Some(old)) => {
            resource_admin::requested_in_status(object, old)
        }
        _ => None,
    };
    let Some(path) = path else {
        return Vec::new();
    };
    let key = format!("/registry/namespaces/{}", object::namespace(object));
    let snapshot = api.store.snapshot();
    let namespace = snapshot.get(&key).and_then(|entry| entry.object.value());
    let labels = namespace
        .as_ref()
        .and_then(|namespace| namespace.pointer("/metadata/labels"))
        .and_then(Value::as_object);
    resource_admin::check_namespace(&path, labels)
        .into_iter()
        .collect()
}

pub fn kind_rules(target: &Target<'_>, object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let resource = target.resource;
    if resource.custom {
        return crate::crd::validate_values(target.custom.as_deref(), object, old);
    }
    match (resource.group, resource.kind, target.subresource) {
        ("apiextensions.k8s.io", "CustomResourceDefinition", None) => {
            crate::crd::validation::validate(object, old)
        }
        _ => crate::validation::validate(resource, target.subresource, object, old),
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
