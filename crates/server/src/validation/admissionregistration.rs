//! admissionregistration.k8s.io/v1 ValidatingAdmissionPolicy and
//! ValidatingAdmissionPolicyBinding (`pkg/apis/admissionregistration/validation/validation.go`
//! `ValidateValidatingAdmissionPolicy[Update]`,
//! `ValidateValidatingAdmissionPolicyBinding[Update]`), and the rules the
//! policies share with the webhook configurations (`validateRuleWithOperations`,
//! `validateResources`, `validateMatchResources`, in [`super::admission_rules`]),
//! whose own checks live in `admission/webhook/config_rules.rs`.
//!
//! CEL expressions are compiled as kube's validation compiles them, with
//! the stateless compiler (`plugin/cel/compile.go` `CompileCELExpression`):
//! parsed and type-checked (`cel_env::check`, with the admission variables
//! of `admission/policy/typecheck.rs` `admission_declarations`: `object`,
//! `oldObject`, `params` and `variables` dyn), `compilation failed: …` on
//! a syntax or type error, `must evaluate to …` for a result of the wrong
//! type ([`compile_error`]).

use std::collections::HashSet;

use serde_json::Value;

use super::admission_rules::{go_slice, label_selector, match_resources, one_of, set, strings};
use super::field::{self, child, index};
use crate::crd::cel_syntax;
use crate::go::strconv::quote;
use crate::names::{dns1035_label, dns1123_subdomain, path_segment};
use crate::status::FieldError;

const FAILURE_POLICIES: &[&str] = &["Fail", "Ignore"];
const VALIDATION_REASONS: &[&str] = &["Forbidden", "Invalid", "RequestEntityTooLarge"];
const VALIDATION_ACTIONS: &[&str] = &["Audit", "Deny", "Warn"];
/// `maxAuditAnnotations`.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// `maxAuditAnnotationValueExpressionLength`.
const MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES: usize = 5 * 1024;

/// What a CEL expression is compiled for: the type check needs to know the
/// result type and the variables declared (`plugincel.OptionalVariableDeclarations`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpressionKind {
    /// A match condition or validation: a bool.
    Condition,
    /// A `messageExpression`: a string.
    Message,
    /// An audit annotation's `valueExpression`: a string or null.
    AuditValue,
    /// A variable: any type.
    Variable,
}

/// The detail of kube's `compilation failed` error for `expression`, if
/// any, or of its result type (`must evaluate to bool`). A `dyn` result
/// passes (the checker's leniency, see `crd/cel_syntax.rs` `check_typed`).
pub fn compile_error(expression: &str, kind: ExpressionKind, has_params: bool) -> Option<String> {
    use crate::cel_env::check::Type;
    use cel_syntax::{Expected, TypedError};
    let expected = match kind {
        ExpressionKind::Condition => Expected::Bool,
        ExpressionKind::Message => Expected::String,
        ExpressionKind::AuditValue | ExpressionKind::Variable => Expected::Any,
    };
    let declarations = crate::admission::policy::typecheck::admission_declarations(has_params)
        .variable("variables", Type::Dyn);
    let wrong_type = || match kind {
        ExpressionKind::Condition => "must evaluate to bool".to_string(),
        ExpressionKind::Message => "must evaluate to string".to_string(),
        ExpressionKind::AuditValue | ExpressionKind::Variable => {
            "must evaluate to one of [string null_type]".to_string()
        }
    };
    match cel_syntax::check_typed(expression, &declarations, expected) {
        Ok(Type::String | Type::Null | Type::Dyn) => None,
        Ok(_) if kind == ExpressionKind::AuditValue => Some(wrong_type()),
        Ok(_) => None,
        Err(TypedError::Compile(error)) => Some(format!("compilation failed: {error}")),
        Err(TypedError::ResultType) => Some(wrong_type()),
    }
}

/// `validateMatchConditions` (kube's, shared with the webhooks).
fn match_conditions(spec: &Value, path: &str, has_params: bool, errors: &mut Vec<FieldError>) {
    crate::admission::webhook::match_conditions::validate(
        spec.get("matchConditions"),
        path,
        has_params,
        errors,
    );
}

/// `validateParamKind`.
fn param_kind(kind: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let api_version = field::str_at(kind, "apiVersion");
    let version_path = child(path, "apiVersion");
    if api_version.is_empty() {
        errors.push(field::required(&version_path, ""));
    } else if api_version.matches('/').count() > 1 {
        errors.push(field::invalid(
            &version_path,
            api_version,
            format!("unexpected GroupVersion string: {api_version}"),
        ));
    } else {
        let (group, version) = match api_version {
            "/" => ("", ""),
            _ => api_version.split_once('/').unwrap_or(("", api_version)),
        };
        if !group.is_empty() {
            let problems = dns1123_subdomain(group);
            if !problems.is_empty() {
                errors.push(field::invalid(&version_path, group, problems.join(",")));
            }
        }
        if version.is_empty() {
            errors.push(field::invalid(
                &version_path,
                api_version,
                "version must be specified",
            ));
        } else {
            let problems = dns1035_label(version);
            if !problems.is_empty() {
                errors.push(field::invalid(&version_path, version, problems.join(",")));
            }
        }
    }
    let kind_name = field::str_at(kind, "kind");
    let kind_path = child(path, "kind");
    if kind_name.is_empty() {
        errors.push(field::required(&kind_path, ""));
    } else {
        let problems = dns1035_label(&kind_name.to_lowercase());
        if !problems.is_empty() {
            errors.push(field::invalid(
                &kind_path,
                kind_name,
                format!(
                    "may have mixed case, but should otherwise match: {}",
                    problems.join(",")
                ),
            ));
        }
    }
}

/// `isCELIdentifier`.
fn is_cel_identifier(name: &str) -> bool {
    use crate::cel_env::RESERVED;
    let mut bytes = name.bytes();
    let starts = bytes
        .next()
        .is_some_and(|first| first == b'_' || first.is_ascii_alphabetic());
    starts
        && bytes.all(|byte| byte == b'_' || byte.is_ascii_alphanumeric())
        && !RESERVED.contains(&name)
}

/// `validateVariable`.
fn variable(variable: &Value, path: &str, has_params: bool, errors: &mut Vec<FieldError>) {
    let name = field::str_at(variable, "name");
    if name.trim().is_empty() {
        errors.push(field::required(
            &child(path, "name"),
            "name is not specified",
        ));
    } else if !is_cel_identifier(name) {
        errors.push(field::invalid(
            &child(path, "name"),
            name,
            "name is not a valid CEL identifier",
        ));
    }
    let expression = field::str_at(variable, "expression");
    let expression_path = child(path, "expression");
    if expression.trim().is_empty() {
        errors.push(field::required(
            &expression_path,
            "expression is not specified",
        ));
    } else if let Some(detail) = compile_error(expression, ExpressionKind::Variable, has_params) {
        errors.push(field::invalid(&expression_path, expression, detail));
    }
}

/// `hasNewlines`.
fn has_newlines(text: &str) -> bool {
    text.contains(['\n', '\r'])
}

/// `validateValidation`.
fn validation(validation: &Value, path: &str, has_params: bool, errors: &mut Vec<FieldError>) {
    let expression = field::str_at(validation, "expression");
    let expression_path = child(path, "expression");
    if expression.trim().is_empty() {
        errors.push(field::required(
            &expression_path,
            "expression is not specified",
        ));
    } else if let Some(detail) = compile_error(expression, ExpressionKind::Condition, has_params) {
        errors.push(field::invalid(&expression_path, expression, detail));
    }
    let message_expression = field::str_at(validation, "messageExpression");
    let message_expression_path = child(path, "messageExpression");
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        errors.push(field::invalid(
            &message_expression_path,
            message_expression,
            "must be non-empty if specified",
        ));
    } else if !message_expression.trim().is_empty() {
        if let Some(detail) = compile_error(message_expression, ExpressionKind::Message, has_params)
        {
            errors.push(field::invalid(
                &message_expression_path,
                message_expression,
                detail,
            ));
        }
    }
    let message = field::str_at(validation, "message");
    let message_path = child(path, "message");
    if !message.is_empty() && message.trim().is_empty() {
        errors.push(field::invalid(
            &message_path,
            message,
            "message must be non-empty if specified",
        ));
    } else if has_newlines(message.trim()) {
        errors.push(field::invalid(
            &message_path,
            message,
            "message must not contain line breaks",
        ));
    }
    one_of(
        validation.get("reason"),
        &child(path, "reason"),
        VALIDATION_REASONS,
        false,
        errors,
    );
}

/// `validateAuditAnnotation`.
fn audit_annotation(
    annotation: &Value,
    policy_name: &str,
    path: &str,
    has_params: bool,
    errors: &mut Vec<FieldError>,
) {
    let key = field::str_at(annotation, "key");
    let key_path = child(path, "key");
    if policy_name.is_empty() {
        errors.push(field::invalid(
            &key_path,
            key,
            "requires metadata.name be non-empty",
        ));
    } else {
        let qualified = format!("{policy_name}/{key}");
        for message in crate::selector::is_qualified_name(&qualified) {
            errors.push(field::invalid(&key_path, &qualified, message));
        }
    }
    let value_expression = field::str_at(annotation, "valueExpression");
    let trimmed = value_expression.trim();
    let value_path = child(path, "valueExpression");
    if trimmed.is_empty() {
        errors.push(field::required(
            &value_path,
            "valueExpression is not specified",
        ));
    } else if trimmed.len() > MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES {
        errors.push(field::required(
            &value_path,
            format!(
                "must not exceed {MAX_AUDIT_ANNOTATION_VALUE_EXPRESSION_BYTES} bytes in length"
            ),
        ));
    } else if let Some(detail) = compile_error(trimmed, ExpressionKind::AuditValue, has_params) {
        errors.push(field::invalid(&value_path, value_expression, detail));
    }
}

/// Go's `%#v` of `[]admissionregistration.AuditAnnotation`.
fn go_audit_annotations(annotations: &[Value]) -> String {
    let rendered: Vec<String> = annotations
        .iter()
        .map(|annotation| {
            format!(
                "admissionregistration.AuditAnnotation{{Key:{}, ValueExpression:{}}}",
                quote(field::str_at(annotation, "key")),
                quote(field::str_at(annotation, "valueExpression"))
            )
        })
        .collect();
    format!(
        "[]admissionregistration.AuditAnnotation{{{}}}",
        rendered.join(", ")
    )
}

/// `ValidateValidatingAdmissionPolicy` (`old` for
/// `ValidateValidatingAdmissionPolicyUpdate`: match conditions are not
/// checked again when neither they nor `paramKind` changed).
pub fn validating_admission_policy(object: &Value, old: Option<&Value>) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = object.get("spec").unwrap_or(&Value::Null);
    one_of(
        spec.get("failurePolicy"),
        "spec.failurePolicy",
        FAILURE_POLICIES,
        true,
        &mut errors,
    );
    let kind = set(spec.get("paramKind"));
    if let Some(kind) = kind {
        param_kind(kind, "spec.paramKind", &mut errors);
    }
    let has_params = kind.is_some();
    match set(spec.get("matchConstraints")) {
        None => errors.push(field::required("spec.matchConstraints", "")),
        Some(constraints) => {
            match_resources(constraints, "spec.matchConstraints", &mut errors);
            if field::items_at(constraints, "resourceRules").is_empty() {
                errors.push(field::required("spec.matchConstraints.resourceRules", ""));
            }
        }
    }
    let ignore_match_conditions = old.is_some_and(|old| {
        let old_spec = old.get("spec").unwrap_or(&Value::Null);
        set(spec.get("paramKind")) == set(old_spec.get("paramKind"))
            && set(spec.get("matchConditions")) == set(old_spec.get("matchConditions"))
    });
    if !ignore_match_conditions {
        match_conditions(spec, "spec.matchConditions", has_params, &mut errors);
    }
    for (position, item) in field::items_at(spec, "variables").iter().enumerate() {
        variable(
            item,
            &index("spec.variables", position),
            has_params,
            &mut errors,
        );
    }
    let validations = field::items_at(spec, "validations");
    let annotations = field::items_at(spec, "auditAnnotations");
    if validations.is_empty() && annotations.is_empty() {
        let detail = "validations or auditAnnotations must contain at least one item";
        errors.push(field::required("spec.validations", detail));
        errors.push(field::required("spec.auditAnnotations", detail));
        return errors;
    }
    for (position, item) in validations.iter().enumerate() {
        validation(
            item,
            &index("spec.validations", position),
            has_params,
            &mut errors,
        );
    }
    if annotations.len() > MAX_AUDIT_ANNOTATIONS {
        errors.push(field::invalid_rendered(
            "spec.auditAnnotations",
            &go_audit_annotations(annotations),
            format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations"),
        ));
    }
    let policy_name = crate::object::name(object);
    let mut keys = HashSet::new();
    for (position, annotation) in annotations.iter().enumerate() {
        let path = index("spec.auditAnnotations", position);
        audit_annotation(annotation, policy_name, &path, has_params, &mut errors);
        let key = field::str_at(annotation, "key");
        if !keys.insert(key) {
            errors.push(field::duplicate(&child(&path, "key"), key));
        }
    }
    errors
}

/// `validateParamRef`.
fn param_ref(reference: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let name = field::str_at(reference, "name");
    let selector = set(reference.get("selector"));
    const EXCLUSIVE: &str = "name and selector are mutually exclusive";
    if !name.is_empty() {
        for message in path_segment(name) {
            errors.push(field::invalid(&child(path, "name"), name, message));
        }
        if selector.is_some() {
            errors.push(field::forbidden(&child(path, "name"), EXCLUSIVE));
        }
    }
    if let Some(selector) = selector {
        label_selector(selector, &child(path, "selector"), false, errors);
        if !name.is_empty() {
            errors.push(field::forbidden(&child(path, "selector"), EXCLUSIVE));
        }
    }
    if name.is_empty() && selector.is_none() {
        errors.push(field::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    let action = field::str_at(reference, "parameterNotFoundAction");
    let action_path = child(path, "parameterNotFoundAction");
    if action.is_empty() {
        errors.push(field::required(&action_path, ""));
    } else if action != "Deny" && action != "Allow" {
        errors.push(field::not_supported(
            &action_path,
            action,
            &["Deny", "Allow"],
        ));
    }
}

/// `validateValidationActions`.
fn validation_actions(actions: &[&str], path: &str, errors: &mut Vec<FieldError>) {
    let mut seen = HashSet::new();
    for (position, action) in actions.iter().enumerate() {
        let at = index(path, position);
        if !VALIDATION_ACTIONS.contains(action) {
            errors.push(field::not_supported(&at, action, VALIDATION_ACTIONS));
        }
        if !seen.insert(*action) {
            errors.push(field::duplicate(&at, action));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errors.push(field::invalid_rendered(
            path,
            &go_slice("admissionregistration.ValidationAction", actions),
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errors.push(field::required(
            path,
            "at least one validation action is required",
        ));
    }
}

/// `ValidateValidatingAdmissionPolicyBinding` (and its `Update`, which
/// checks the same).
pub fn validating_admission_policy_binding(object: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let policy_name = field::str_at(spec, "policyName");
    if policy_name.is_empty() {
        errors.push(field::required("spec.policyName", ""));
    } else {
        field::dns1123_subdomain("spec.policyName", policy_name, &mut errors);
    }
    if let Some(reference) = set(spec.get("paramRef")) {
        param_ref(reference, "spec.paramRef", &mut errors);
    }
    if let Some(resources) = set(spec.get("matchResources")) {
        // kube's path is spelled `matchResouces`.
        match_resources(resources, "spec.matchResouces", &mut errors);
    }
    validation_actions(
        &strings(spec.get("validationActions")),
        "spec.validationActions",
        &mut errors,
    );
    errors
}

#[cfg(test)]
#[path = "admissionregistration_tests.rs"]
mod tests;
