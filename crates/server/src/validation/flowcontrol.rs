//! flowcontrol.apiserver.k8s.io/v1 FlowSchema and PriorityLevelConfiguration
//! as `pkg/apis/flowcontrol/validation` checks them (`ValidateFlowSchema`,
//! `ValidatePriorityLevelConfiguration`; updates run the same rules), after
//! v1's defaults (`pkg/apis/flowcontrol/v1/defaults.go`, applied by
//! `defaults_non_core.rs`; read in place here too, so that the rules hold
//! for any caller: a missing `matchingPrecedence` is 1000, missing queuing
//! numbers 64 queues, hand size 8, queue length 50, a missing
//! `nominalConcurrencyShares` 30 (0 for `exempt`)).
//!
//! The mandatory objects (`exempt`, `catch-all`) must keep the spec the
//! server creates ([`crate::flowcontrol::bootstrap`]); the `exempt` level
//! may change only its `spec.exempt`. The main resource's writes do not
//! reach the status (kube's strategies reset it), so its rules are not here.

use serde_json::{Map, Value};

use super::field::{self, child, index};
use super::selector::go_string_slice;
use crate::flowcontrol::bootstrap;
use crate::status::{FieldError, FieldErrorKind};

/// `flowcontrol.FlowSchemaMaxMatchingPrecedence`.
const MAX_MATCHING_PRECEDENCE: i64 = 10000;
/// `priorityLevelConfigurationQueuingMaxQueues`.
const MAX_QUEUES: i64 = 10_000_000;
/// `shufflesharding.MaxHashBits`.
const MAX_HASH_BITS: i64 = 60;
/// `supportedVerbs`, sorted.
const VERBS: [&str; 9] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];
const NS_ERR_INTRO: &str = "each member of this list must be '*' or a DNS-1123 label; ";

/// `ValidateFlowSchema` (and `ValidateFlowSchemaUpdate`, the same).
pub fn flow_schema(object: &Value) -> Vec<FieldError> {
    let name = crate::object::name(object);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let precedence = match field::int_at(spec, "matchingPrecedence").unwrap_or(0) {
        0 => 1000,
        other => other,
    };
    let precedence_path = "spec.matchingPrecedence";
    if precedence <= 0 {
        errors.push(field::invalid_number(
            precedence_path,
            precedence,
            "must be a positive value",
        ));
    }
    if precedence > MAX_MATCHING_PRECEDENCE {
        errors.push(field::invalid_number(
            precedence_path,
            precedence,
            format!("must not be greater than {MAX_MATCHING_PRECEDENCE}"),
        ));
    }
    if precedence == 1 && name != bootstrap::EXEMPT {
        errors.push(field::invalid_number(
            precedence_path,
            precedence,
            "only the schema named 'exempt' may have matchingPrecedence 1",
        ));
    }
    if let Some(method) = spec
        .get("distinguisherMethod")
        .filter(|value| !value.is_null())
    {
        let method_type = field::str_at(method, "type");
        if !matches!(method_type, "ByNamespace" | "ByUser") {
            errors.push(FieldError {
                kind: FieldErrorKind::NotSupported(
                    format!(
                        "flowcontrol.FlowDistinguisherMethod{{Type:{}}}",
                        crate::go::strconv::quote(method_type)
                    ),
                    vec!["\"ByNamespace\"".into(), "\"ByUser\"".into()],
                ),
                field: "spec.distinguisherMethod.type".into(),
                detail: String::new(),
            });
        }
    }
    let level = spec
        .get("priorityLevelConfiguration")
        .map(|reference| field::str_at(reference, "name"))
        .unwrap_or_default();
    let level_path = "spec.priorityLevelConfiguration.name";
    if level.is_empty() {
        errors.push(field::required(
            level_path,
            "must reference a priority level",
        ));
    } else {
        field::dns1123_subdomain(level_path, level, &mut errors);
    }
    for (position, rule) in field::items_at(spec, "rules").iter().enumerate() {
        policy_rules_with_subjects(rule, &index("spec.rules", position), &mut errors);
    }
    if let Some(mandatory) = mandatory_spec(bootstrap::mandatory_flow_schemas(), name) {
        if normalized(flow_schema_defaults(spec.clone())) != normalized(mandatory) {
            errors.push(field::invalid_rendered(
                "spec",
                &spec.to_string(),
                format!("spec of '{name}' must equal the fixed value"),
            ));
        }
    }
    errors
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn policy_rules_with_subjects(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let subjects = field::items_at(rule, "subjects");
    if subjects.is_empty() {
        errors.push(field::required(
            &child(path, "subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (position, subject) in subjects.iter().enumerate() {
        flow_schema_subject(subject, &index(&child(path, "subjects"), position), errors);
    }
    let resource_rules = field::items_at(rule, "resourceRules");
    let non_resource_rules = field::items_at(rule, "nonResourceRules");
    if resource_rules.is_empty() && non_resource_rules.is_empty() {
        errors.push(field::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (position, resource_rule) in resource_rules.iter().enumerate() {
        resource_policy_rule(
            resource_rule,
            &index(&child(path, "resourceRules"), position),
            errors,
        );
    }
    for (position, non_resource_rule) in non_resource_rules.iter().enumerate() {
        non_resource_policy_rule(
            non_resource_rule,
            &index(&child(path, "nonResourceRules"), position),
            errors,
        );
    }
}

/// `ValidateFlowSchemaSubject`.
fn flow_schema_subject(subject: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let kind = field::str_at(subject, "kind");
    let others: [(&str, &str); 2] = match kind {
        "ServiceAccount" => {
            service_account_subject(
                subject.get("serviceAccount"),
                &child(path, "serviceAccount"),
                errors,
            );
            [("user", "User"), ("group", "Group")]
        }
        "User" => {
            named_subject(
                subject.get("user"),
                &child(path, "user"),
                "user",
                "User",
                errors,
            );
            [("serviceAccount", "ServiceAccount"), ("group", "Group")]
        }
        "Group" => {
            named_subject(
                subject.get("group"),
                &child(path, "group"),
                "group",
                "Group",
                errors,
            );
            [("serviceAccount", "ServiceAccount"), ("user", "User")]
        }
        other => {
            errors.push(field::not_supported(
                &child(path, "kind"),
                other,
                &["Group", "ServiceAccount", "User"],
            ));
            return;
        }
    };
    for (field_name, field_kind) in others {
        if field::is_set(subject, field_name) {
            errors.push(field::forbidden(
                &child(path, field_name),
                format!("{field_name} is forbidden when subject kind is not '{field_kind}'"),
            ));
        }
    }
}

/// `ValidateServiceAccountSubject`.
fn service_account_subject(subject: Option<&Value>, path: &str, errors: &mut Vec<FieldError>) {
    let Some(subject) = subject.filter(|value| !value.is_null()) else {
        errors.push(field::required(
            path,
            "serviceAccount is required when subject kind is 'ServiceAccount'",
        ));
        return;
    };
    let name = field::str_at(subject, "name");
    if name.is_empty() {
        errors.push(field::required(&child(path, "name"), ""));
    } else if name != "*" {
        field::dns1123_subdomain(&child(path, "name"), name, errors);
    }
    let namespace = field::str_at(subject, "namespace");
    if namespace.is_empty() {
        errors.push(field::required(
            &child(path, "namespace"),
            "must specify namespace for service account",
        ));
    } else {
        field::dns1123_label(&child(path, "namespace"), namespace, errors);
    }
}

/// `ValidateUserSubject` and `ValidateGroupSubject`.
fn named_subject(
    subject: Option<&Value>,
    path: &str,
    field_name: &str,
    kind: &str,
    errors: &mut Vec<FieldError>,
) {
    let Some(subject) = subject.filter(|value| !value.is_null()) else {
        errors.push(field::required(
            path,
            format!("{field_name} is required when subject kind is '{kind}'"),
        ));
        return;
    };
    if field::str_at(subject, "name").is_empty() {
        errors.push(field::required(&child(path, "name"), ""));
    }
}

fn strings(rule: &Value, name: &str) -> Vec<String> {
    field::items_at(rule, name)
        .iter()
        .map(|item| item.as_str().unwrap_or_default().to_string())
        .collect()
}

fn has_wildcard(list: &[String]) -> bool {
    list.iter().any(|item| item == "*")
}

/// The verbs rule both policy rule kinds share.
fn verbs(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let verbs = strings(rule, "verbs");
    let verbs_path = child(path, "verbs");
    if verbs.is_empty() {
        errors.push(field::required(
            &verbs_path,
            "verbs must contain at least one value",
        ));
    } else if has_wildcard(&verbs) {
        if verbs.len() > 1 {
            errors.push(field::invalid_rendered(
                &verbs_path,
                &go_string_slice(rule.get("verbs")),
                "if '*' is present, must not specify other verbs",
            ));
        }
    } else if !verbs.iter().all(|verb| VERBS.contains(&verb.as_str())) {
        errors.push(FieldError {
            kind: FieldErrorKind::NotSupported(
                go_string_slice(rule.get("verbs")),
                VERBS
                    .iter()
                    .map(|verb| crate::go::strconv::quote(verb))
                    .collect(),
            ),
            field: verbs_path,
            detail: String::new(),
        });
    }
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn non_resource_policy_rule(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    verbs(rule, path, errors);
    let urls = strings(rule, "nonResourceURLs");
    let urls_path = child(path, "nonResourceURLs");
    if urls.is_empty() {
        errors.push(field::required(
            &urls_path,
            "nonResourceURLs must contain at least one value",
        ));
    } else if has_wildcard(&urls) {
        if urls.len() > 1 {
            errors.push(field::invalid_rendered(
                &urls_path,
                &go_string_slice(rule.get("nonResourceURLs")),
                "if '*' is present, must not specify other non-resource URLs",
            ));
        }
    } else {
        for (position, url) in urls.iter().enumerate() {
            if let Some(message) = non_resource_url_error(url) {
                errors.push(field::invalid(&index(&urls_path, position), url, message));
            }
        }
    }
}

/// `ValidateNonResourceURLPath`.
fn non_resource_url_error(path: &str) -> Option<&'static str> {
    if path.is_empty() {
        return Some("must not be empty");
    }
    if path == "/" {
        return None;
    }
    if !path.starts_with('/') {
        return Some("must start with slash");
    }
    if path.contains(' ') {
        return Some("must not contain white-space");
    }
    if path.contains("//") {
        return Some("must not contain double slash");
    }
    let wildcards = path.matches('*').count();
    if wildcards > 1 || (wildcards == 1 && !path.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn resource_policy_rule(rule: &Value, path: &str, errors: &mut Vec<FieldError>) {
    verbs(rule, path, errors);
    for (name, required, wildcard) in [
        (
            "apiGroups",
            "resource rules must supply at least one api group",
            "if '*' is present, must not specify other api groups",
        ),
        (
            "resources",
            "resource rules must supply at least one resource",
            "if '*' is present, must not specify other resources",
        ),
    ] {
        let list = strings(rule, name);
        if list.is_empty() {
            errors.push(field::required(&child(path, name), required));
        } else if list.len() > 1 && has_wildcard(&list) {
            errors.push(field::invalid_rendered(
                &child(path, name),
                &go_string_slice(rule.get(name)),
                wildcard,
            ));
        }
    }
    let namespaces = strings(rule, "namespaces");
    let namespaces_path = child(path, "namespaces");
    let cluster_scope = rule
        .get("clusterScope")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if namespaces.is_empty() && !cluster_scope {
        errors.push(field::required(
            &namespaces_path,
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if has_wildcard(&namespaces) {
        if namespaces.len() > 1 {
            errors.push(field::invalid_rendered(
                &namespaces_path,
                &go_string_slice(rule.get("namespaces")),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (position, namespace) in namespaces.iter().enumerate() {
            for message in crate::names::dns1123_label(namespace) {
                errors.push(field::invalid(
                    &index(&namespaces_path, position),
                    namespace,
                    format!("{NS_ERR_INTRO}{message}"),
                ));
            }
        }
    }
}

/// `ValidatePriorityLevelConfiguration` (and its update, the same).
pub fn priority_level_configuration(object: &Value) -> Vec<FieldError> {
    let name = crate::object::name(object);
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let mut errors = Vec::new();
    let level_type = field::str_at(spec, "type");
    if (name == bootstrap::EXEMPT) != (level_type == "Exempt") {
        errors.push(field::invalid(
            "spec.type",
            level_type,
            "type must be 'Exempt' if and only if name is 'exempt'",
        ));
    }
    match level_type {
        "Exempt" => {
            if field::is_set(spec, "limited") {
                errors.push(field::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            if let Some(exempt) = spec.get("exempt").filter(|value| !value.is_null()) {
                shares(exempt, "spec.exempt", 0, &mut errors);
                lendable_percent(exempt, "spec.exempt", &mut errors);
            }
        }
        "Limited" => {
            if field::is_set(spec, "exempt") {
                errors.push(field::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            match spec.get("limited").filter(|value| !value.is_null()) {
                None => errors.push(field::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                )),
                Some(limited) => limited_configuration(limited, "spec.limited", &mut errors),
            }
        }
        other => errors.push(field::not_supported(
            "spec.type",
            other,
            &["Exempt", "Limited"],
        )),
    }
    if let Some(mut mandatory) = mandatory_spec(bootstrap::mandatory_priority_levels(), name) {
        let mut have = level_defaults(spec.clone());
        let detail = if name == bootstrap::EXEMPT {
            // Only `spec.exempt` of the exempt level may differ.
            for spec in [&mut have, &mut mandatory] {
                if let Some(spec) = spec.as_object_mut() {
                    spec.remove("exempt");
                }
            }
            format!("spec of '{name}' except the 'spec.exempt' field must equal the fixed value")
        } else {
            format!("spec of '{name}' must equal the fixed value")
        };
        if normalized(have) != normalized(level_defaults(mandatory)) {
            errors.push(field::invalid_rendered("spec", &spec.to_string(), detail));
        }
    }
    errors
}

/// `nominalConcurrencyShares` (defaulted to `default` when missing) may not be negative.
fn shares(config: &Value, path: &str, default: i64, errors: &mut Vec<FieldError>) {
    let shares = field::int_at(config, "nominalConcurrencyShares").unwrap_or(default);
    if shares < 0 {
        errors.push(field::invalid_number(
            &child(path, "nominalConcurrencyShares"),
            shares,
            "must be a non-negative integer",
        ));
    }
}

fn lendable_percent(config: &Value, path: &str, errors: &mut Vec<FieldError>) {
    if let Some(percent) = field::int_at(config, "lendablePercent") {
        if !(0..=100).contains(&percent) {
            errors.push(field::invalid_number(
                &child(path, "lendablePercent"),
                percent,
                "must be between 0 and 100, inclusive",
            ));
        }
    }
}

/// `ValidateLimitedPriorityLevelConfiguration` (zero shares allowed: v1).
fn limited_configuration(limited: &Value, path: &str, errors: &mut Vec<FieldError>) {
    shares(limited, path, 30, errors);
    limit_response(
        limited.get("limitResponse").unwrap_or(&Value::Null),
        &child(path, "limitResponse"),
        errors,
    );
    lendable_percent(limited, path, errors);
    if let Some(percent) = field::int_at(limited, "borrowingLimitPercent") {
        if percent < 0 {
            errors.push(field::invalid_number(
                &child(path, "borrowingLimitPercent"),
                percent,
                "if specified, must be a non-negative integer",
            ));
        }
    }
}

/// `ValidateLimitResponse`.
fn limit_response(response: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let queuing = response.get("queuing").filter(|value| !value.is_null());
    match field::str_at(response, "type") {
        "Reject" => {
            if queuing.is_some() {
                errors.push(field::forbidden(
                    &child(path, "queuing"),
                    "must be nil if limited.limitResponse.type is not Limited",
                ));
            }
        }
        "Queue" => match queuing {
            None => errors.push(field::required(
                &child(path, "queuing"),
                "must not be empty if limited.limitResponse.type is Limited",
            )),
            Some(queuing) => queuing_configuration(queuing, &child(path, "queuing"), errors),
        },
        other => errors.push(field::not_supported(
            &child(path, "type"),
            other,
            &["Queue", "Reject"],
        )),
    }
}

/// A queuing number after `SetDefaults_QueuingConfiguration` (0 reads as the default).
fn queuing_number(queuing: &Value, name: &str, default: i64) -> i64 {
    match field::int_at(queuing, name).unwrap_or(0) {
        0 => default,
        other => other,
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn queuing_configuration(queuing: &Value, path: &str, errors: &mut Vec<FieldError>) {
    let queue_length_limit = queuing_number(queuing, "queueLengthLimit", 50);
    if queue_length_limit <= 0 {
        errors.push(field::invalid_number(
            &child(path, "queueLengthLimit"),
            queue_length_limit,
            "must be positive",
        ));
    }
    let queues = queuing_number(queuing, "queues", 64);
    if queues <= 0 {
        errors.push(field::invalid_number(
            &child(path, "queues"),
            queues,
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errors.push(field::invalid_number(
            &child(path, "queues"),
            queues,
            format!("must not be greater than {MAX_QUEUES}"),
        ));
    }
    let hand_size = queuing_number(queuing, "handSize", 8);
    let hand_path = child(path, "handSize");
    if hand_size <= 0 {
        errors.push(field::invalid_number(
            &hand_path,
            hand_size,
            "must be positive",
        ));
    } else if hand_size > queues {
        errors.push(field::invalid_number(
            &hand_path,
            hand_size,
            format!("should not be greater than queues ({queues})"),
        ));
    } else if required_entropy_bits(queues, hand_size) > MAX_HASH_BITS {
        errors.push(field::invalid_number(
            &hand_path,
            hand_size,
            format!("required entropy bits of deckSize {queues} and handSize {hand_size} should not be greater than {MAX_HASH_BITS}"),
        ));
    }
}

/// `shufflesharding.RequiredEntropyBits`.
fn required_entropy_bits(deck_size: i64, hand_size: i64) -> i64 {
    ((deck_size as f64).log2() * hand_size as f64).ceil() as i64
}

/// The spec of the mandatory object named `name`, if it is one.
fn mandatory_spec(objects: Vec<Value>, name: &str) -> Option<Value> {
    objects
        .into_iter()
        .find(|object| crate::object::name(object) == name)
        .and_then(|mut object| object.get_mut("spec").map(Value::take))
}

/// v1's FlowSchema defaults that the mandatory check sees.
fn flow_schema_defaults(mut spec: Value) -> Value {
    if let Some(spec) = spec.as_object_mut() {
        if spec
            .get("matchingPrecedence")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            == 0
        {
            spec.insert("matchingPrecedence".into(), Value::from(1000));
        }
    }
    spec
}

/// v1's PriorityLevelConfiguration defaults that the mandatory check sees.
fn level_defaults(mut spec: Value) -> Value {
    fn set_missing(map: &mut Map<String, Value>, name: &str, value: i64) {
        if map.get(name).is_none_or(Value::is_null) {
            map.insert(name.into(), Value::from(value));
        }
    }
    if let Some(limited) = spec.get_mut("limited").and_then(Value::as_object_mut) {
        set_missing(limited, "nominalConcurrencyShares", 30);
        set_missing(limited, "lendablePercent", 0);
    }
    if let Some(exempt) = spec.get_mut("exempt").and_then(Value::as_object_mut) {
        set_missing(exempt, "nominalConcurrencyShares", 0);
        set_missing(exempt, "lendablePercent", 0);
    }
    spec
}

/// A spec with Go's zero values (null, false, 0, "", empty lists and
/// objects) left out, so that `apiequality.Semantic.DeepEqual`'s view of
/// two decoded specs is JSON equality of these.
fn normalized(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter()
                .map(|(key, value)| (key, normalized(value)))
                .filter(|(_, value)| !is_zero(value))
                .collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(normalized).collect()),
        other => other,
    }
}

fn is_zero(value: &Value) -> bool {
    match value {
        Value::Null => true,
        Value::Bool(flag) => !flag,
        Value::Number(number) => number.as_f64() == Some(0.0),
        Value::String(text) => text.is_empty(),
        Value::Array(items) => items.is_empty(),
        Value::Object(map) => map.is_empty(),
    }
}

#[cfg(test)]
#[path = "flowcontrol_tests.rs"]
mod tests;
