//! `--enable-admission-plugins` / `--disable-admission-plugins`
//! (`pkg/kubeapiserver/options/plugins.go`, `admission.go`
//! `AdmissionOptions.Validate` and `enabledPluginNames`): kube 1.34's plugin
//! names in their execution order, the default-on set, and unknown or
//! overlapping names refused with kube's messages.
//!
//! ferrokube implements NamespaceLifecycle, LimitRanger, ServiceAccount,
//! TaintNodesByCondition, PodSecurity, Priority, DefaultTolerationSeconds,
//! DefaultStorageClass, StorageObjectInUseProtection,
//! PersistentVolumeClaimResize, RuntimeClass, CertificateApproval,
//! CertificateSigning, CertificateSubjectRestriction, DefaultIngressClass,
//! MutatingAdmissionWebhook, ValidatingAdmissionPolicy,
//! ValidatingAdmissionWebhook, ResourceQuota, AlwaysAdmit and AlwaysDeny.
//! The default-on ClusterTrustBundleAttest, PodTopologyLabels and
//! MutatingAdmissionPolicy do nothing, as in kube 1.34 with its default
//! feature gates (`ClusterTrustBundle`, `PodTopologyLabelsAdmission`,
//! `MutatingAdmissionPolicy` are off: each plugin returns at once). The
//! other names are accepted (kube knows them) and do nothing. The plugins' own flags travel with them
//! (`--default-not-ready-toleration-seconds`,
//! `--default-unreachable-toleration-seconds`), and so do their
//! configurations from `--admission-control-config-file` (`config_file.rs`).

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use super::config_file::{AdmissionConfiguration, ConfigFileError};
use super::pod_security::PodSecurityConfiguration;
use super::resource_quota::configuration::QuotaConfiguration;
use super::webhook::credentials::{self, WebhookCredentials};

/// Every plugin kube-apiserver 1.34 registers, in execution order
/// (`AllOrderedPlugins`).
pub const ALL_ORDERED: &[&str] = &[
    "AlwaysAdmit",
    "NamespaceAutoProvision",
    "NamespaceLifecycle",
    "NamespaceExists",
    "LimitPodHardAntiAffinityTopology",
    "LimitRanger",
    "ServiceAccount",
    "NodeRestriction",
    "TaintNodesByCondition",
    "AlwaysPullImages",
    "ImagePolicyWebhook",
    "PodSecurity",
    "PodNodeSelector",
    "Priority",
    "DefaultTolerationSeconds",
    "PodTolerationRestriction",
    "EventRateLimit",
    "ExtendedResourceToleration",
    "DefaultStorageClass",
    "StorageObjectInUseProtection",
    "OwnerReferencesPermissionEnforcement",
    "PersistentVolumeClaimResize",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "DenyServiceExternalIPs",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "AlwaysDeny",
];

/// The plugins on without flags (`DefaultOffAdmissionPlugins`' complement).
pub const DEFAULT_ON: &[&str] = &[
    "NamespaceLifecycle",
    "LimitRanger",
    "ServiceAccount",
    "DefaultStorageClass",
    "PersistentVolumeClaimResize",
    "DefaultTolerationSeconds",
    "MutatingAdmissionWebhook",
    "ValidatingAdmissionWebhook",
    "ResourceQuota",
    "StorageObjectInUseProtection",
    "Priority",
    "TaintNodesByCondition",
    "RuntimeClass",
    "CertificateApproval",
    "CertificateSigning",
    "ClusterTrustBundleAttest",
    "CertificateSubjectRestriction",
    "DefaultIngressClass",
    "PodSecurity",
    "PodTopologyLabels",
    "MutatingAdmissionPolicy",
    "ValidatingAdmissionPolicy",
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PluginsError {
    /// Every problem, one per line, as kube's aggregate prints them.
    #[error("{}", .0.join(", "))]
    Invalid(Vec<String>),
}

/// The enabled plugins, in execution order, and their settings.
#[derive(Debug, Clone)]
pub struct Plugins {
    enabled: Vec<&'static str>,
    /// DefaultTolerationSeconds' (not-ready, unreachable) seconds.
    toleration_seconds: (i64, i64),
    /// PodSecurity's configuration (`--admission-control-config-file`).
    pod_security: PodSecurityConfiguration,
    resource_quota: QuotaConfiguration,
    /// What ValidatingAdmissionWebhook and MutatingAdmissionWebhook present
    /// to webhooks (their `kubeConfigFile`s).
    validating_credentials: Arc<WebhookCredentials>,
    mutating_credentials: Arc<WebhookCredentials>,
}

impl Default for Plugins {
    fn default() -> Self {
        Plugins::parse(&[], &[]).unwrap_or(Plugins {
            enabled: Vec::new(),
            toleration_seconds: DEFAULT_TOLERATION_SECONDS,
            pod_security: PodSecurityConfiguration::default(),
            resource_quota: QuotaConfiguration::default(),
            validating_credentials: Arc::default(),
            mutating_credentials: Arc::default(),
        })
    }
}

/// `--default-not-ready-toleration-seconds` and
/// `--default-unreachable-toleration-seconds` defaults.
pub const DEFAULT_TOLERATION_SECONDS: (i64, i64) = (300, 300);

impl Plugins {
    /// `AdmissionOptions.Validate` then `enabledPluginNames`: default-on
    /// plus `enable`, minus `disable`, in [`ALL_ORDERED`]'s order.
    pub fn parse(enable: &[String], disable: &[String]) -> Result<Plugins, PluginsError> {
        let without_empty = |values: &[String]| -> Vec<String> {
            values.iter().filter(|v| !v.is_empty()).cloned().collect()
        };
        let (enable, disable) = (without_empty(enable), without_empty(disable));
        let mut errors = Vec::new();
        for name in &enable {
            if !ALL_ORDERED.contains(&name.as_str()) {
                errors.push(format!(
                    "enable-admission-plugins plugin {} is unknown",
                    crate::go::strconv::quote(name)
                ));
            }
        }
        for name in &disable {
            if !ALL_ORDERED.contains(&name.as_str()) {
                errors.push(format!(
                    "disable-admission-plugins plugin {} is unknown",
                    crate::go::strconv::quote(name)
                ));
            }
        }
        let enabled_set: BTreeSet<&str> = enable.iter().map(String::as_str).collect();
        let disabled_set: BTreeSet<&str> = disable.iter().map(String::as_str).collect();
        let overlap: Vec<&str> = enabled_set.intersection(&disabled_set).copied().collect();
        if !overlap.is_empty() {
            errors.push(format!(
                "[{}] in enable-admission-plugins and disable-admission-plugins overlapped",
                overlap.join(" ")
            ));
        }
        if !errors.is_empty() {
            return Err(PluginsError::Invalid(errors));
        }
        let enabled = ALL_ORDERED
            .iter()
            .copied()
            .filter(|name| {
                (DEFAULT_ON.contains(name) || enabled_set.contains(name))
                    && !disabled_set.contains(name)
            })
            .collect();
        Ok(Plugins {
            enabled,
            toleration_seconds: DEFAULT_TOLERATION_SECONDS,
            pod_security: PodSecurityConfiguration::default(),
            resource_quota: QuotaConfiguration::default(),
            validating_credentials: Arc::default(),
            mutating_credentials: Arc::default(),
        })
    }

    /// The plugins' configurations from `--admission-control-config-file`
    /// (`ReadAdmissionConfiguration`, then each enabled plugin's
    /// `ConfigFor`): PodSecurity's, ResourceQuota's and the two webhook
    /// plugins' are decoded and validated (a webhook plugin's kubeconfig
    /// read); one for another enabled plugin is refused (ferrokube does not
    /// read it).
    pub fn with_config_file(mut self, path: &Path) -> Result<Self, ConfigFileError> {
        let file = AdmissionConfiguration::read(path)?;
        file.check_supported(&self.enabled)?;
        for (plugin, mutating) in [
            ("ValidatingAdmissionWebhook", false),
            ("MutatingAdmissionWebhook", true),
        ] {
            if !self.is_enabled(plugin) {
                continue;
            }
            if let Some(value) = file.config_for(plugin)? {
                let failed = |cause: String| ConfigFileError::Plugin {
                    plugin: format!("{plugin:?}"),
                    cause,
                };
                let path = credentials::kubeconfig_path(&value).map_err(failed)?;
                let loaded = Arc::new(WebhookCredentials::load(&path).map_err(failed)?);
                if mutating {
                    self.mutating_credentials = loaded;
                } else {
                    self.validating_credentials = loaded;
                }
            }
        }
        if self.is_enabled("ResourceQuota") {
            if let Some(value) = file.config_for("ResourceQuota")? {
                self.resource_quota =
                    QuotaConfiguration::parse(&value).map_err(|cause| ConfigFileError::Plugin {
                        plugin: "\"ResourceQuota\"".into(),
                        cause,
                    })?;
            }
        }
        if self.is_enabled("PodSecurity") {
            if let Some(value) = file.config_for("PodSecurity")? {
                self.pod_security = PodSecurityConfiguration::parse(&value).map_err(|cause| {
                    ConfigFileError::Plugin {
                        plugin: "\"PodSecurity\"".into(),
                        cause,
                    }
                })?;
            }
        }
        Ok(self)
    }

    /// What the mutating or the validating webhook plugin presents to
    /// webhooks.
    pub fn webhook_credentials(&self, mutating: bool) -> &Arc<WebhookCredentials> {
        if mutating {
            &self.mutating_credentials
        } else {
            &self.validating_credentials
        }
    }

    /// ResourceQuota's limited resources.
    pub fn resource_quota(&self) -> &QuotaConfiguration {
        &self.resource_quota
    }

    /// PodSecurity's defaults and exemptions.
    pub fn pod_security(&self) -> &PodSecurityConfiguration {
        &self.pod_security
    }

    /// `--default-not-ready-toleration-seconds`,
    /// `--default-unreachable-toleration-seconds`.
    pub fn with_toleration_seconds(mut self, not_ready: i64, unreachable: i64) -> Self {
        self.toleration_seconds = (not_ready, unreachable);
        self
    }

    /// DefaultTolerationSeconds' (not-ready, unreachable) seconds.
    pub fn toleration_seconds(&self) -> (i64, i64) {
        self.toleration_seconds
    }

    pub fn is_enabled(&self, name: &str) -> bool {
        self.enabled.contains(&name)
    }

    pub fn enabled(&self) -> &[&'static str] {
        &self.enabled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(values: &[&str]) -> Vec<String> {
        values.iter().map(|value| value.to_string()).collect()
    }

    #[test]
    fn defaults_are_kubes_and_flags_add_and_remove() {
        let defaults = Plugins::default();
        assert!(defaults.is_enabled("NamespaceLifecycle"));
        assert!(defaults.is_enabled("ValidatingAdmissionWebhook"));
        assert!(!defaults.is_enabled("AlwaysDeny"));
        let plugins = Plugins::parse(
            &names(&["AlwaysDeny"]),
            &names(&["NamespaceLifecycle", "MutatingAdmissionWebhook"]),
        )
        .expect("valid");
        assert!(plugins.is_enabled("AlwaysDeny"));
        assert!(!plugins.is_enabled("NamespaceLifecycle"));
        assert!(!plugins.is_enabled("MutatingAdmissionWebhook"));
        // Execution order is kube's, whatever the flag order.
        let order = plugins.enabled();
        let position = |name| order.iter().position(|n| *n == name);
        assert!(position("ValidatingAdmissionWebhook") < position("AlwaysDeny"));
    }

    #[test]
    fn unknown_and_overlapping_names_are_refused_as_kube_refuses_them() {
        let error = Plugins::parse(
            &names(&["Nope", "AlwaysDeny"]),
            &names(&["AlwaysDeny", "X"]),
        )
        .expect_err("invalid");
        assert_eq!(
            error,
            PluginsError::Invalid(vec![
                r#"enable-admission-plugins plugin "Nope" is unknown"#.into(),
                r#"disable-admission-plugins plugin "X" is unknown"#.into(),
                "[AlwaysDeny] in enable-admission-plugins and disable-admission-plugins overlapped"
                    .into(),
            ])
        );
    }
}
