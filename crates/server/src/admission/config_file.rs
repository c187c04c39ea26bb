//! `--admission-control-config-file` (`k8s.io/apiserver/pkg/admission`
//! `ReadAdmissionConfiguration`, `configProvider.ConfigFor`): an
//! `AdmissionConfiguration` (apiserver.config.k8s.io/v1 or v1alpha1, or the
//! older apiserver.k8s.io/v1alpha1) in YAML or JSON, whose `plugins` give
//! each plugin's configuration inline (`configuration`) or in a file
//! (`path`, relative to the configuration file's folder).
//!
//! Of the plugins ferrokube has, PodSecurity (`pod_security::configuration`),
//! ResourceQuota (`resource_quota::configuration`) and the two webhook
//! plugins (`webhook::credentials`) read a configuration. A configuration
//! for any other plugin ferrokube runs is refused at start, where kube
//! would read it (EventRateLimit): running without what the file asks for
//! would differ from kube silently.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// What a configuration file can be refused for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigFileError {
    #[error("unable to read admission control configuration from {path} [{cause}]")]
    Read { path: String, cause: String },
    #[error("{0}")]
    Decode(String),
    #[error("admission plugin {plugin}: {cause}")]
    Plugin { plugin: String, cause: String },
}

/// The AdmissionConfiguration group versions kube decodes.
const API_VERSIONS: &[&str] = &[
    "apiserver.config.k8s.io/v1",
    "apiserver.config.k8s.io/v1alpha1",
    "apiserver.k8s.io/v1alpha1",
];

/// Plugins whose configuration ferrokube reads.
const CONFIGURABLE: &[&str] = &[
    "PodSecurity",
    "ResourceQuota",
    "ValidatingAdmissionWebhook",
    "MutatingAdmissionWebhook",
];

/// Where one plugin's configuration is.
#[derive(Debug, Clone, PartialEq)]
enum Source {
    Inline(Value),
    File(PathBuf),
    None,
}

/// A decoded AdmissionConfiguration.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct AdmissionConfiguration {
    plugins: Vec<(String, Source)>,
}

impl AdmissionConfiguration {
    /// `ReadAdmissionConfiguration` of `path`.
    pub fn read(path: &Path) -> Result<AdmissionConfiguration, ConfigFileError> {
        let bytes = std::fs::read(path).map_err(|error| ConfigFileError::Read {
            path: crate::go::strconv::quote(&path.display().to_string()),
            cause: error.to_string(),
        })?;
        let base = path.parent().unwrap_or(Path::new("."));
        AdmissionConfiguration::parse(&bytes, base)
    }

    /// Decodes a configuration whose relative paths are under `base`.
    pub fn parse(bytes: &[u8], base: &Path) -> Result<AdmissionConfiguration, ConfigFileError> {
        let value = decode(bytes)?;
        let api_version = value
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let kind = value.get("kind").and_then(Value::as_str).unwrap_or("");
        if kind.is_empty() || api_version.is_empty() {
            // kube keeps reading the two legacy, unversioned plugin files;
            // ferrokube has neither ImagePolicyWebhook nor PodNodeSelector.
            let legacy = value.get("imagePolicy").is_some()
                || value.get("podNodeSelectorPluginConfig").is_some();
            if legacy {
                return Ok(AdmissionConfiguration::default());
            }
            let missing = if kind.is_empty() { "Kind" } else { "Version" };
            return Err(ConfigFileError::Decode(format!(
                "Object '{missing}' is missing in '{}'",
                String::from_utf8_lossy(bytes).trim()
            )));
        }
        if kind != "AdmissionConfiguration" || !API_VERSIONS.contains(&api_version) {
            return Err(ConfigFileError::Decode(format!(
                "no kind {} is registered for version {}",
                crate::go::strconv::quote(kind),
                crate::go::strconv::quote(api_version)
            )));
        }
        let mut plugins = Vec::new();
        for plugin in value
            .get("plugins")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let name = plugin
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let source = match (
                plugin.get("configuration").filter(|value| !value.is_null()),
                plugin.get("path").and_then(Value::as_str),
            ) {
                (Some(inline), _) => Source::Inline(inline.clone()),
                (None, Some(path)) if !path.is_empty() => Source::File(base.join(path)),
                _ => Source::None,
            };
            plugins.push((name, source));
        }
        Ok(AdmissionConfiguration { plugins })
    }

    /// `ConfigFor`: the first entry naming `plugin`, decoded (YAML or
    /// JSON); `None` when there is none or it gives nothing.
    pub fn config_for(&self, plugin: &str) -> Result<Option<Value>, ConfigFileError> {
        let Some((_, source)) = self.plugins.iter().find(|(name, _)| name == plugin) else {
            return Ok(None);
        };
        match source {
            Source::None => Ok(None),
            Source::Inline(value) => Ok(Some(value.clone())),
            Source::File(path) => {
                let bytes = std::fs::read(path).map_err(|error| ConfigFileError::Plugin {
                    plugin: plugin.to_string(),
                    cause: format!(
                        "couldn't open admission plugin configuration {}: {error}",
                        path.display()
                    ),
                })?;
                decode(&bytes).map(Some)
            }
        }
    }

    /// Refuses a configuration given for an enabled plugin ferrokube does
    /// not configure.
    pub fn check_supported(&self, enabled: &[&str]) -> Result<(), ConfigFileError> {
        for (name, source) in &self.plugins {
            if *source != Source::None
                && enabled.contains(&name.as_str())
                && !CONFIGURABLE.contains(&name.as_str())
            {
                return Err(ConfigFileError::Plugin {
                    plugin: crate::go::strconv::quote(name),
                    cause: "ferrokube does not read this plugin's configuration".into(),
                });
            }
        }
        Ok(())
    }
}

/// YAML or JSON into a tree.
fn decode(bytes: &[u8]) -> Result<Value, ConfigFileError> {
    crate::yaml::yaml_to_json(bytes)
        .map_err(|error| ConfigFileError::Decode(format!("couldn't decode: {}", error.message())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn plugins_are_configured_inline_or_from_a_relative_path() {
        let directory = tempfile::tempdir().expect("tempdir");
        std::fs::write(
            directory.path().join("psa.yaml"),
            "apiVersion: pod-security.admission.config.k8s.io/v1\nkind: PodSecurityConfiguration\n",
        )
        .expect("write");
        let file = directory.path().join("admission.yaml");
        std::fs::write(
            &file,
            "apiVersion: apiserver.config.k8s.io/v1\nkind: AdmissionConfiguration\nplugins:\n- name: PodSecurity\n  path: psa.yaml\n- name: Other\n  configuration: {a: 1}\n- name: Empty\n",
        )
        .expect("write");
        let configuration = AdmissionConfiguration::read(&file).expect("reads");
        assert_eq!(
            configuration.config_for("PodSecurity").expect("file"),
            Some(
                json!({"apiVersion": "pod-security.admission.config.k8s.io/v1", "kind": "PodSecurityConfiguration"})
            )
        );
        assert_eq!(
            configuration.config_for("Other").expect("inline"),
            Some(json!({"a": 1}))
        );
        assert_eq!(configuration.config_for("Empty").expect("none"), None);
        assert_eq!(configuration.config_for("Missing").expect("none"), None);
        assert!(configuration.check_supported(&["PodSecurity"]).is_ok());
        assert!(configuration
            .check_supported(&["PodSecurity", "Empty"])
            .is_ok());
        let error = configuration
            .check_supported(&["Other"])
            .expect_err("not configurable");
        assert_eq!(
            error.to_string(),
            r#"admission plugin "Other": ferrokube does not read this plugin's configuration"#
        );
    }

    #[test]
    fn files_that_are_no_admission_configuration_are_refused() {
        let base = Path::new("/");
        let error = AdmissionConfiguration::parse(b"plugins: []\n", base).expect_err("no kind");
        assert_eq!(
            error.to_string(),
            "Object 'Kind' is missing in 'plugins: []'"
        );
        let error = AdmissionConfiguration::parse(
            b"{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\"}",
            base,
        )
        .expect_err("another kind");
        assert_eq!(
            error.to_string(),
            r#"no kind "ConfigMap" is registered for version "v1""#
        );
        let legacy = AdmissionConfiguration::parse(b"imagePolicy: {}\n", base).expect("legacy");
        assert_eq!(legacy, AdmissionConfiguration::default());
        let missing = AdmissionConfiguration::read(Path::new("/nonexistent/admission.yaml"))
            .expect_err("missing");
        assert!(missing.to_string().starts_with(
            r#"unable to read admission control configuration from "/nonexistent/admission.yaml" ["#
        ));
        for version in API_VERSIONS {
            let body = format!("apiVersion: {version}\nkind: AdmissionConfiguration\n");
            assert!(AdmissionConfiguration::parse(body.as_bytes(), base).is_ok());
        }
    }
}
