//! The rules on a CRD's `spec.conversion` (apiextensions `validation.go`
//! `validateCustomResourceConversion`, `validateConversionReviewVersions`)
//! and on its webhook's client config (apiserver
//! `pkg/util/webhook/validation.go` `ValidateWebhookURL`,
//! `ValidateWebhookService`), with kube's paths, which name the internal
//! type's fields (`spec.conversion.webhookClientConfig.url`, not
//! `spec.conversion.webhook.clientConfig.url`).
//!
//! kube 1.34 calls `ValidateWebhookService(path, name, namespace, …)`
//! against its `(namespace, name)` signature, so a missing service name is
//! reported as `service.namespace: Required value: service namespace is
//! required` and the other way round; ferrokube reports the same.
//!
//! Not checked: `caBundle` (kube only checks it on an update of an
//! Established CRD whose old bundle was valid), and the errors of Go's
//! `url.Parse` (ferrokube reads any URL).

use serde_json::Value;

use crate::go::strconv::quote;
use crate::names::{dns1035_label, dns1123_subdomain};
use crate::status::{FieldError, FieldErrorKind};

const PATH: &str = "spec.conversion";
/// `acceptedConversionReviewVersions`, sorted.
const REVIEW_VERSIONS: &[&str] = &["v1", "v1beta1"];
const URL_FORM: &str = "; desired format: https://host[/path]";

/// Every rule `crd`'s conversion settings break. `require_recognized`:
/// `conversionReviewVersions` must name a version kube speaks (always on
/// create; on update only if the old CRD's did).
pub fn validate(crd: &Value, require_recognized: bool) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let Some(conversion) = crd.pointer("/spec/conversion").filter(|c| c.is_object()) else {
        return errors;
    };
    let strategy = conversion
        .get("strategy")
        .and_then(Value::as_str)
        .unwrap_or("");
    match strategy {
        "" => errors.push(FieldError::required(&format!("{PATH}.strategy"), "")),
        "None" | "Webhook" => {}
        other => errors.push(FieldError::not_supported(
            &format!("{PATH}.strategy"),
            other,
            &["None", "Webhook"],
        )),
    }
    let client_config = conversion
        .pointer("/webhook/clientConfig")
        .filter(|config| config.is_object());
    let review_versions = conversion
        .pointer("/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if strategy != "Webhook" {
        let detail = "should not be set when strategy is not set to Webhook";
        if client_config.is_some() {
            errors.push(FieldError::forbidden(
                &format!("{PATH}.webhookClientConfig"),
                detail,
            ));
        }
        if !review_versions.is_empty() {
            errors.push(FieldError::forbidden(
                &format!("{PATH}.conversionReviewVersions"),
                detail,
            ));
        }
        return errors;
    }
    match client_config {
        None => errors.push(FieldError::required(
            &format!("{PATH}.webhookClientConfig"),
            "required when strategy is set to Webhook",
        )),
        Some(config) => client_config_rules(config, &mut errors),
    }
    conversion_review_versions(review_versions, require_recognized, &mut errors);
    errors
}

/// Whether `crd`'s conversionReviewVersions are empty or name a version
/// kube speaks (`hasValidConversionReviewVersionOrEmpty` of the old CRD).
pub fn has_recognized_review_version_or_none(crd: &Value) -> bool {
    let versions = crd
        .pointer("/spec/conversion/webhook/conversionReviewVersions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    versions.is_empty()
        || versions
            .iter()
            .any(|v| REVIEW_VERSIONS.contains(&v.as_str().unwrap_or("")))
}

fn client_config_rules(config: &Value, errors: &mut Vec<FieldError>) {
    let path = format!("{PATH}.webhookClientConfig");
    let url = config.get("url").filter(|url| !url.is_null());
    let service = config.get("service").filter(|service| !service.is_null());
    match (url, service) {
        (Some(url), None) => {
            webhook_url(&format!("{path}.url"), url.as_str().unwrap_or(""), errors)
        }
        (None, Some(service)) => webhook_service(&format!("{path}.service"), service, errors),
        _ => errors.push(FieldError::required(
            &path,
            "exactly one of url or service is required",
        )),
    }
}

/// `validateConversionReviewVersions`.
fn conversion_review_versions(
    versions: &[Value],
    require_recognized: bool,
    errors: &mut Vec<FieldError>,
) {
    let path = format!("{PATH}.conversionReviewVersions");
    if versions.is_empty() {
        errors.push(FieldError::required(&path, ""));
        return;
    }
    let mut seen = std::collections::HashSet::new();
    let mut recognized = false;
    for (index, version) in versions.iter().enumerate() {
        let version = version.as_str().unwrap_or("");
        let at = format!("{path}[{index}]");
        if !seen.insert(version) {
            errors.push(FieldError::invalid(&at, version, "duplicate version"));
            continue;
        }
        for problem in dns1035_label(version) {
            errors.push(FieldError::invalid(&at, version, problem));
        }
        recognized |= REVIEW_VERSIONS.contains(&version);
    }
    if require_recognized && !recognized {
        let rendered: Vec<String> = versions
            .iter()
            .map(|v| quote(v.as_str().unwrap_or("")))
            .collect();
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(format!("[]string{{{}}}", rendered.join(", "))),
            field: path,
            detail: format!(
                "must include at least one of {}",
                REVIEW_VERSIONS.join(", ")
            ),
        });
    }
}

/// The parts of a URL `ValidateWebhookURL` looks at, split as Go's
/// `url.Parse` splits them.
#[derive(Debug, Default, PartialEq)]
struct UrlParts<'a> {
    scheme: String,
    user: Option<&'a str>,
    host: &'a str,
    query: &'a str,
    fragment: &'a str,
}

fn split_url(raw: &str) -> UrlParts<'_> {
    let (rest, fragment) = raw.split_once('#').unwrap_or((raw, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let mut parts = UrlParts {
        fragment,
        query,
        ..UrlParts::default()
    };
    let mut rest = rest;
    // `getScheme`: a letter, then letters, digits, `+`, `-`, `.`, up to `:`.
    if let Some(colon) = rest.find(':') {
        let candidate = &rest[..colon];
        let valid = candidate
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && candidate
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if valid {
            parts.scheme = candidate.to_ascii_lowercase();
            rest = &rest[colon + 1..];
        }
    }
    if let Some(authority) = rest.strip_prefix("//") {
        let end = authority.find('/').unwrap_or(authority.len());
        let authority = &authority[..end];
        match authority.rsplit_once('@') {
            Some((user, host)) => {
                parts.user = Some(user);
                parts.host = host;
            }
            None => parts.host = authority,
        }
    }
    parts
}

/// `ValidateWebhookURL(path, url, forceHttps: true)`.
pub fn webhook_url(path: &str, raw: &str, errors: &mut Vec<FieldError>) {
    let url = split_url(raw);
    if url.scheme != "https" {
        errors.push(FieldError::invalid(
            path,
            &url.scheme,
            format!("'https' is the only allowed URL scheme{URL_FORM}"),
        ));
    }
    if url.host.is_empty() {
        errors.push(FieldError::invalid(
            path,
            url.host,
            format!("host must be provided{URL_FORM}"),
        ));
    }
    if let Some(user) = url.user {
        errors.push(FieldError::invalid(
            path,
            user,
            "user information is not permitted in the URL",
        ));
    }
    if !url.fragment.is_empty() {
        errors.push(FieldError::invalid(
            path,
            url.fragment,
            "fragments are not permitted in the URL",
        ));
    }
    if !url.query.is_empty() {
        errors.push(FieldError::invalid(
            path,
            url.query,
            "query parameters are not permitted in the URL",
        ));
    }
}

/// `ValidateWebhookService`, called as kube calls it (name and namespace
/// swapped).
pub fn webhook_service(path: &str, service: &Value, errors: &mut Vec<FieldError>) {
    let field = |name: &str| service.get(name).and_then(Value::as_str).unwrap_or("");
    // kube passes the service's name as `namespace` and its namespace as `name`.
    let (as_namespace, as_name) = (field("name"), field("namespace"));
    if as_name.is_empty() {
        errors.push(FieldError::required(
            &format!("{path}.name"),
            "service name is required",
        ));
    }
    if as_namespace.is_empty() {
        errors.push(FieldError::required(
            &format!("{path}.namespace"),
            "service namespace is required",
        ));
    }
    // v1 defaults the port to 443.
    let port = service.get("port").and_then(Value::as_i64).unwrap_or(443);
    if !(1..=65535).contains(&port) {
        errors.push(FieldError {
            kind: FieldErrorKind::Invalid(port.to_string()),
            field: format!("{path}.port"),
            detail: "port is not valid: must be between 1 and 65535, inclusive".into(),
        });
    }
    let Some(url_path) = service.get("path").and_then(Value::as_str) else {
        return;
    };
    let at = format!("{path}.path");
    if url_path == "/" || url_path.is_empty() {
        return;
    }
    if url_path == "//" {
        errors.push(FieldError::invalid(
            &at,
            url_path,
            "segment[0] may not be empty",
        ));
        return;
    }
    if !url_path.starts_with('/') {
        errors.push(FieldError::invalid(&at, url_path, "must start with a '/'"));
    }
    // Go slices off the first byte whatever it is.
    let to_check = url_path.get(1..).unwrap_or("");
    let to_check = to_check.strip_suffix('/').unwrap_or(to_check);
    for (index, step) in to_check.split('/').enumerate() {
        if step.is_empty() {
            errors.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{index}] may not be empty"),
            ));
            continue;
        }
        for failure in dns1123_subdomain(step) {
            errors.push(FieldError::invalid(
                &at,
                url_path,
                format!("segment[{index}]: {failure}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(conversion: Value) -> Vec<String> {
        validate(&json!({"spec": {"conversion": conversion}}), true)
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn well_formed_settings_pass() {
        assert!(messages(json!({"strategy": "None"})).is_empty());
        assert!(messages(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://conv.example.com:8443/convert"},
            "conversionReviewVersions": ["v1", "v1beta1"],
        }}))
        .is_empty());
        assert!(messages(json!({"strategy": "Webhook", "webhook": {
            "clientConfig": {"service": {"name": "conv", "namespace": "system", "path": "/convert/v1", "port": 9443}},
            "conversionReviewVersions": ["v1"],
        }}))
        .is_empty());
    }

    #[test]
    fn kube_rules_and_messages() {
        let at = "spec.conversion";
        let form = "; desired format: https://host[/path]";
        let cases: Vec<(Value, Vec<String>)> = vec![
            (json!({"strategy": "Magic"}), vec![format!(r#"{at}.strategy: Unsupported value: "Magic": supported values: "None", "Webhook""#)]),
            (json!({"strategy": ""}), vec![format!("{at}.strategy: Required value")]),
            (json!({"strategy": "None", "webhook": {"clientConfig": {"url": "https://a"}, "conversionReviewVersions": ["v1"]}}), vec![
                format!("{at}.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook"),
                format!("{at}.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"),
            ]),
            (json!({"strategy": "Webhook"}), vec![
                format!("{at}.webhookClientConfig: Required value: required when strategy is set to Webhook"),
                format!("{at}.conversionReviewVersions: Required value"),
            ]),
            (json!({"strategy": "Webhook", "webhook": {"clientConfig": {}, "conversionReviewVersions": ["v2", "v2"]}}), vec![
                format!("{at}.webhookClientConfig: Required value: exactly one of url or service is required"),
                format!(r#"{at}.conversionReviewVersions[1]: Invalid value: "v2": duplicate version"#),
                format!(r#"{at}.conversionReviewVersions: Invalid value: []string{{"v2", "v2"}}: must include at least one of v1, v1beta1"#),
            ]),
            (json!({"strategy": "Webhook", "webhook": {"clientConfig": {"url": "http://u:p@/x?a=1#f"}, "conversionReviewVersions": ["v1"]}}), vec![
                format!(r#"{at}.webhookClientConfig.url: Invalid value: "http": 'https' is the only allowed URL scheme{form}"#),
                format!(r#"{at}.webhookClientConfig.url: Invalid value: "": host must be provided{form}"#),
                format!(r#"{at}.webhookClientConfig.url: Invalid value: "u:p": user information is not permitted in the URL"#),
                format!(r#"{at}.webhookClientConfig.url: Invalid value: "f": fragments are not permitted in the URL"#),
                format!(r#"{at}.webhookClientConfig.url: Invalid value: "a=1": query parameters are not permitted in the URL"#),
            ]),
            (json!({"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "", "namespace": "ns", "port": 0, "path": "x//Y/"}}, "conversionReviewVersions": ["v1"]}}), vec![
                format!("{at}.webhookClientConfig.service.namespace: Required value: service namespace is required"),
                format!("{at}.webhookClientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive"),
                format!(r#"{at}.webhookClientConfig.service.path: Invalid value: "x//Y/": must start with a '/'"#),
                format!(r#"{at}.webhookClientConfig.service.path: Invalid value: "x//Y/": segment[0] may not be empty"#),
                format!(r#"{at}.webhookClientConfig.service.path: Invalid value: "x//Y/": segment[1] may not be empty"#),
                format!(r#"{at}.webhookClientConfig.service.path: Invalid value: "x//Y/": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"#),
            ]),
        ];
        for (conversion, expected) in cases {
            assert_eq!(messages(conversion.clone()), expected, "{conversion}");
        }
    }

    #[test]
    fn an_unrecognized_old_review_version_is_not_required_on_update() {
        let crd = json!({"spec": {"conversion": {"strategy": "Webhook", "webhook": {
            "clientConfig": {"url": "https://a"}, "conversionReviewVersions": ["v9"]}}}});
        assert!(!has_recognized_review_version_or_none(&crd));
        assert!(validate(&crd, false).is_empty());
    }
}
