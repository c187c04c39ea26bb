//! Admission (`k8s.io/apiserver/pkg/admission`): the stage of every write
//! after decoding where kube's admission plugins run, in kube's order —
//! the mutating stage (NamespaceLifecycle, LimitRanger, ServiceAccount,
//! TaintNodesByCondition, Priority, DefaultTolerationSeconds,
//! DefaultStorageClass, StorageObjectInUseProtection, RuntimeClass,
//! DefaultIngressClass, mutating webhooks) on the object defaulted as kube's
//! decoder defaults it, before the strategy, defaults again and validation; the validating
//! stage (LimitRanger, ServiceAccount, PodSecurity, Priority,
//! PersistentVolumeClaimResize, RuntimeClass, CertificateApproval,
//! CertificateSigning, CertificateSubjectRestriction,
//! ValidatingAdmissionPolicies, validating webhooks, then ResourceQuota)
//! after, just before the commit. The write pipeline
//! (`api/write/admission.rs`) builds the [`Attributes`] and calls
//! [`Admission::mutate`] and [`Admission::validate`] on create, update,
//! every patch type and apply, `/status`, `/scale`, delete and each item of
//! a deletecollection; the connect subresources call
//! [`Admission::admit_connect`] (`connect.rs`).
//!
//! Which plugins run is `--enable-admission-plugins` /
//! `--disable-admission-plugins` ([`plugins`]); their configurations come
//! from `--admission-control-config-file` ([`config_file`]).

pub mod attributes;
#[cfg(test)]
mod builtin_plugin_tests;
pub mod certificate_approval;
pub mod certificate_signing;
pub mod certificate_subject_restriction;
pub mod config_file;
mod connect;
mod default_class;
pub mod default_ingress_class;
pub mod default_storage_class;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod persistent_volume_claim_resize;
pub mod plugins;
pub mod pod_security;
pub mod policy;
pub mod priority;
pub mod resource_quota;
pub mod runtime_class;
pub mod service_account;
pub mod signer_authorization;
pub mod stamp;
pub mod storage_object_in_use_protection;
pub mod taint_nodes_by_condition;
#[cfg(test)]
mod test_support;
pub mod webhook;

use std::sync::Arc;

use serde_json::Value;

pub use attributes::{Attributes, Caller, GroupVersionName, Operation};
pub use plugins::Plugins;

use crate::object::ObjectStore;
use crate::registry::LiveRegistry;
use crate::status::Result;

/// The enabled plugins and what they read.
pub struct Admission {
    store: ObjectStore,
    plugins: Plugins,
    webhooks: webhook::Webhooks,
    policies: policy::Policies,
    quota: resource_quota::QuotaAdmission,
    /// The served resources, for a policy's `paramKind`.
    registry: Option<Arc<LiveRegistry>>,
    /// The server's authorizer, for the plugins that authorize (the
    /// Certificate* plugins ask about signers).
    authorizer: Option<crate::authz::Authorizer>,
}

impl Admission {
    pub fn new(store: ObjectStore, plugins: Plugins) -> Self {
        let quota = resource_quota::QuotaAdmission::new(plugins.resource_quota().clone());
        let webhooks = webhook::Webhooks::new(
            plugins.webhook_credentials(false).clone(),
            plugins.webhook_credentials(true).clone(),
        );
        Admission {
            store,
            plugins,
            webhooks,
            policies: policy::Policies::default(),
            quota,
            registry: None,
            authorizer: None,
        }
    }

    /// The authorizer plugins ask (kube's `WantsAuthorizer`).
    pub fn with_authorizer(mut self, authorizer: crate::authz::Authorizer) -> Self {
        self.authorizer = Some(authorizer);
        self
    }

    /// The registry policies look their `paramKind` up in.
    pub fn with_registry(mut self, registry: Arc<LiveRegistry>) -> Self {
        self.registry = Some(registry);
        self
    }

    pub fn plugins(&self) -> &Plugins {
        &self.plugins
    }

    /// The mutating stage (`admission.MutationInterface.Admit` of each
    /// plugin in order): `object` is what is written (`None` for a delete)
    /// and may be changed.
    pub async fn mutate(
        &self,
        attributes: &Attributes<'_>,
        mut object: Option<&mut Value>,
        caller: &Caller,
    ) -> Result<()> {
        if self.plugins.is_enabled("NamespaceLifecycle") {
            namespace_lifecycle::admit(&self.store, attributes, object.as_deref())?;
        }
        if self.plugins.is_enabled("LimitRanger") {
            limit_ranger::admit(&self.store, attributes, object.as_deref_mut())?;
        }
        if self.plugins.is_enabled("ServiceAccount") {
            service_account::admit(&self.store, attributes, object.as_deref_mut()).await?;
        }
        if self.plugins.is_enabled("TaintNodesByCondition") {
            taint_nodes_by_condition::admit(attributes, object.as_deref_mut());
        }
        if self.plugins.is_enabled("Priority") {
            priority::admit(&self.store, attributes, object.as_deref_mut())?;
        }
        if self.plugins.is_enabled("DefaultTolerationSeconds") {
            default_toleration_seconds::admit(
                attributes,
                object.as_deref_mut(),
                self.plugins.toleration_seconds(),
            );
        }
        if self.plugins.is_enabled("DefaultStorageClass") {
            default_storage_class::admit(&self.store, attributes, object.as_deref_mut());
        }
        if self.plugins.is_enabled("StorageObjectInUseProtection") {
            storage_object_in_use_protection::admit(attributes, object.as_deref_mut());
        }
        if self.plugins.is_enabled("RuntimeClass") {
            runtime_class::admit(&self.store, attributes, object.as_deref_mut())?;
        }
        if self.plugins.is_enabled("DefaultIngressClass") {
            default_ingress_class::admit(&self.store, attributes, object.as_deref_mut());
        }
        if self.plugins.is_enabled("MutatingAdmissionWebhook") {
            let compiled = self.webhooks.current(&self.store);
            if !compiled.mutating.is_empty() {
                webhook::mutate(
                    &self.store,
                    &compiled.mutating,
                    attributes,
                    &mut object,
                    caller,
                    self.authorizer.as_ref(),
                )
                .await?;
            }
        }
        if self.plugins.is_enabled("AlwaysDeny") {
            return Err(always_deny(attributes, object.as_deref()));
        }
        Ok(())
    }

    /// The validating stage (`admission.ValidationInterface.Validate`), on
    /// the object as it will be stored; `object_json` is its JSON when the
    /// write encoded it already (webhooks are sent it).
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        object_json: Option<&[u8]>,
        caller: &Caller,
    ) -> Result<()> {
        let authorizer = self.authorizer.as_ref();
        if self.plugins.is_enabled("LimitRanger") {
            limit_ranger::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("ServiceAccount") {
            service_account::validate(&self.store, attributes, object).await?;
        }
        if self.plugins.is_enabled("PodSecurity") {
            pod_security::validate(
                &self.store,
                self.plugins.pod_security(),
                attributes,
                object,
                caller,
            )?;
        }
        if self.plugins.is_enabled("Priority") {
            priority::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("PersistentVolumeClaimResize") {
            persistent_volume_claim_resize::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("RuntimeClass") {
            runtime_class::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("CertificateApproval") {
            certificate_approval::validate(authorizer, attributes, object)?;
        }
        if self.plugins.is_enabled("CertificateSigning") {
            certificate_signing::validate(authorizer, attributes, object)?;
        }
        if self.plugins.is_enabled("CertificateSubjectRestriction") {
            certificate_subject_restriction::validate(attributes, object)?;
        }
        if self.plugins.is_enabled("ValidatingAdmissionPolicy") {
            let compiled = self.policies.current(&self.store);
            if !compiled.hooks.is_empty() {
                policy::validate(
                    &self.store,
                    self.registry.as_deref(),
                    &compiled,
                    attributes,
                    object,
                    caller,
                    self.authorizer.as_ref(),
                )?;
            }
        }
        if self.plugins.is_enabled("ValidatingAdmissionWebhook") {
            let compiled = self.webhooks.current(&self.store);
            if !compiled.validating.is_empty() {
                webhook::validate(
                    &self.store,
                    &compiled.validating,
                    attributes,
                    object,
                    object_json,
                    caller,
                    self.authorizer.as_ref(),
                )
                .await?;
            }
        }
        if self.plugins.is_enabled("ResourceQuota") {
            self.quota.validate(&self.store, attributes, object).await?;
        }
        if self.plugins.is_enabled("AlwaysDeny") {
            return Err(always_deny(attributes, object));
        }
        Ok(())
    }
}

/// AlwaysDeny (`plugin/pkg/admission/deny`).
fn always_deny(attributes: &Attributes<'_>, object: Option<&Value>) -> crate::status::Status {
    namespace_lifecycle::forbidden(
        attributes,
        object,
        "admission control is denying all modifications",
    )
}
