//! PodSecurity's plugin configuration (`pod-security-admission/admission/api`:
//! `PodSecurityConfiguration` of pod-security.admission.config.k8s.io v1,
//! v1beta1 or v1alpha1, its defaults (`SetDefaults_PodSecurityDefaults`),
//! `ValidatePodSecurityConfiguration`), read from the
//! `--admission-control-config-file`: the policy of namespaces without
//! labels, and the users, namespaces and runtime classes exempt from it.

use serde_json::Value;

use super::level::{Level, LevelVersion, Policy, Version};
use crate::status::FieldError;

/// The group versions kube decodes the configuration in.
const API_VERSIONS: &[&str] = &[
    "pod-security.admission.config.k8s.io/v1",
    "pod-security.admission.config.k8s.io/v1beta1",
    "pod-security.admission.config.k8s.io/v1alpha1",
];

/// A validated configuration; the default is kube's without one (every
/// mode `privileged:latest`, nothing exempt).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PodSecurityConfiguration {
    pub defaults: Policy,
    pub exempt_usernames: Vec<String>,
    pub exempt_namespaces: Vec<String>,
    pub exempt_runtime_classes: Vec<String>,
}

impl PodSecurityConfiguration {
    /// Decodes, defaults and validates a configuration (`LoadFromData`,
    /// then the plugin's `ValidateConfiguration`); errors as kube's
    /// aggregate prints them.
    pub fn parse(value: &Value) -> Result<PodSecurityConfiguration, String> {
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind.is_empty() {
            return Err(format!("Object 'Kind' is missing in '{value}'"));
        }
        if kind != "PodSecurityConfiguration" || !API_VERSIONS.contains(&api_version) {
            return Err(format!(
                "no kind {} is registered for version {}",
                crate::go::strconv::quote(kind),
                crate::go::strconv::quote(api_version)
            ));
        }
        let defaults = value.get("defaults");
        let default_of = |key: &str, fallback: &str| -> String {
            defaults
                .and_then(|defaults| defaults.get(key))
                .and_then(Value::as_str)
                .filter(|value| !value.is_empty())
                .unwrap_or(fallback)
                .to_string()
        };
        let strings = |key: &str| -> Vec<String> {
            value
                .pointer(&format!("/exemptions/{key}"))
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .map(|item| item.as_str().unwrap_or_default().to_string())
                .collect()
        };
        let mut errors = Vec::new();
        let mut mode = |level_key: &str, version_key: &str| -> LevelVersion {
            let level = default_of(level_key, "privileged");
            let version = default_of(version_key, "latest");
            let level = Level::parse(&level).unwrap_or_else(|(fallback, why)| {
                errors.push(FieldError::invalid(
                    &format!("defaults.{level_key}"),
                    &level,
                    why,
                ));
                fallback
            });
            let version = Version::parse(&version).unwrap_or_else(|(fallback, why)| {
                errors.push(FieldError::invalid(
                    &format!("defaults.{version_key}"),
                    &version,
                    why,
                ));
                fallback
            });
            LevelVersion { level, version }
        };
        // kube's order: enforce, warn, audit.
        let enforce = mode("enforce", "enforce-version");
        let warn = mode("warn", "warn-version");
        let audit = mode("audit", "audit-version");
        let configuration = PodSecurityConfiguration {
            defaults: Policy {
                enforce,
                audit,
                warn,
            },
            exempt_usernames: strings("usernames"),
            exempt_namespaces: strings("namespaces"),
            exempt_runtime_classes: strings("runtimeClasses"),
        };
        errors.extend(validate_names(
            "namespaces",
            &configuration.exempt_namespaces,
            crate::names::dns1123_label,
        ));
        errors.extend(validate_names(
            "runtimeClasses",
            &configuration.exempt_runtime_classes,
            crate::names::dns1123_subdomain,
        ));
        errors.extend(validate_names(
            "usernames",
            &configuration.exempt_usernames,
            |_| Vec::new(),
        ));
        if errors.is_empty() {
            return Ok(configuration);
        }
        Err(FieldError::aggregate(&errors))
    }

    /// `exemptNamespace`.
    pub fn exempt_namespace(&self, namespace: &str) -> bool {
        !namespace.is_empty() && self.exempt_namespaces.iter().any(|n| n == namespace)
    }

    /// `exemptUser`.
    pub fn exempt_user(&self, username: &str) -> bool {
        !username.is_empty() && self.exempt_usernames.iter().any(|n| n == username)
    }

    /// `exemptRuntimeClass` of a pod spec's `runtimeClassName`.
    pub fn exempt_runtime_class(&self, spec: &Value) -> bool {
        spec.get("runtimeClassName")
            .and_then(Value::as_str)
            .filter(|name| !name.is_empty())
            .is_some_and(|name| self.exempt_runtime_classes.iter().any(|n| n == name))
    }
}

/// `validateNamespaces`, `validateRuntimeClasses`, `validateUsernames`:
/// each entry valid (`check` gives its problems; a username only must not
/// be empty) and not repeated.
fn validate_names(
    key: &str,
    names: &[String],
    check: impl Fn(&str) -> Vec<String>,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for (index, name) in names.iter().enumerate() {
        let path = format!("exemptions.{key}[{index}]");
        if key == "usernames" && name.is_empty() {
            errors.push(FieldError::required(&path, ""));
            continue;
        }
        let problems = check(name);
        if !problems.is_empty() {
            errors.push(FieldError::invalid(&path, name, problems.join(", ")));
            continue;
        }
        if seen.contains(&name.as_str()) {
            errors.push(crate::validation::field::duplicate(&path, name));
            continue;
        }
        seen.push(name);
    }
    errors
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_fill_what_is_unset() {
        let configuration = PodSecurityConfiguration::parse(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "baseline", "audit-version": "v1.30"},
            "exemptions": {"usernames": ["ci"], "namespaces": ["kube-system"], "runtimeClasses": ["gvisor"]},
        }))
        .expect("valid");
        assert_eq!(
            configuration.defaults.enforce.to_string(),
            "baseline:latest"
        );
        assert_eq!(configuration.defaults.audit.to_string(), "privileged:v1.30");
        assert_eq!(configuration.defaults.warn.to_string(), "privileged:latest");
        assert!(configuration.exempt_user("ci"));
        assert!(!configuration.exempt_user(""));
        assert!(configuration.exempt_namespace("kube-system"));
        assert!(!configuration.exempt_namespace("default"));
        assert!(configuration.exempt_runtime_class(&json!({"runtimeClassName": "gvisor"})));
        assert!(!configuration.exempt_runtime_class(&json!({})));
        for version in API_VERSIONS {
            let empty = PodSecurityConfiguration::parse(
                &json!({"apiVersion": version, "kind": "PodSecurityConfiguration"}),
            )
            .expect("valid");
            assert_eq!(empty, PodSecurityConfiguration::default());
        }
    }

    /// Cases of kube's `TestValidatePodSecurityConfiguration`.
    #[test]
    fn invalid_configurations_are_refused_with_kubes_errors() {
        let error = PodSecurityConfiguration::parse(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v1",
            "kind": "PodSecurityConfiguration",
            "defaults": {"enforce": "bogus", "enforce-version": "v1.x", "warn": "restricted", "warn-version": "2", "audit": "nope"},
            "exemptions": {
                "namespaces": ["ns", "ns", "Not_Valid"],
                "runtimeClasses": ["rc", "rc", "UPPER"],
                "usernames": ["u", "", "u"],
            },
        }))
        .expect_err("invalid");
        assert_eq!(
            error,
            r#"[defaults.enforce: Invalid value: "bogus": must be one of privileged, baseline, restricted, defaults.enforce-version: Invalid value: "v1.x": must be "latest" or "v1.x", defaults.warn-version: Invalid value: "2": must be "latest" or "v1.x", defaults.audit: Invalid value: "nope": must be one of privileged, baseline, restricted, exemptions.namespaces[1]: Duplicate value: "ns", exemptions.namespaces[2]: Invalid value: "Not_Valid": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?'), exemptions.runtimeClasses[1]: Duplicate value: "rc", exemptions.runtimeClasses[2]: Invalid value: "UPPER": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*'), exemptions.usernames[1]: Required value, exemptions.usernames[2]: Duplicate value: "u"]"#
        );
        let error = PodSecurityConfiguration::parse(&json!({
            "apiVersion": "pod-security.admission.config.k8s.io/v2",
            "kind": "PodSecurityConfiguration",
        }))
        .expect_err("unknown version");
        assert_eq!(
            error,
            r#"no kind "PodSecurityConfiguration" is registered for version "pod-security.admission.config.k8s.io/v2""#
        );
    }
}
