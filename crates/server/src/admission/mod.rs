//! Admission (`k8s.io/apiserver/pkg/admission`): the stage of every write
//! after decoding where kube's admission plugins run, in kube's order —
//! the mutating stage (NamespaceLifecycle, LimitRanger, ServiceAccount,
//! Priority, DefaultTolerationSeconds, RuntimeClass, mutating webhooks) before the
//! object is defaulted and validated, the validating stage (LimitRanger,
//! ServiceAccount, Priority, RuntimeClass, ValidatingAdmissionPolicies, then
//! validating webhooks) after, just before the commit. The write pipeline
//! (`api/write/admission.rs`) builds the [`Attributes`] and calls
//! [`Admission::mutate`] and [`Admission::validate`] on create, update,
//! every patch type and apply, `/status`, `/scale`, delete and each item of
//! a deletecollection.
//!
//! Which plugins run is `--enable-admission-plugins` /
//! `--disable-admission-plugins` ([`plugins`]).

pub mod attributes;
pub mod default_toleration_seconds;
pub mod limit_ranger;
pub mod namespace_lifecycle;
pub mod plugins;
pub mod policy;
pub mod priority;
pub mod runtime_class;
pub mod service_account;
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
    /// The served resources, for a policy's `paramKind`.
    registry: Option<Arc<LiveRegistry>>,
}

impl Admission {
    pub fn new(store: ObjectStore, plugins: Plugins) -> Self {
        Admission {
            store,
            plugins,
            webhooks: webhook::Webhooks::default(),
            policies: policy::Policies::default(),
            registry: None,
        }
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
        if self.plugins.is_enabled("RuntimeClass") {
            runtime_class::admit(&self.store, attributes, object.as_deref_mut())?;
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
    /// the object as it will be stored.
    pub async fn validate(
        &self,
        attributes: &Attributes<'_>,
        object: Option<&Value>,
        caller: &Caller,
    ) -> Result<()> {
        if self.plugins.is_enabled("LimitRanger") {
            limit_ranger::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("ServiceAccount") {
            service_account::validate(&self.store, attributes, object).await?;
        }
        if self.plugins.is_enabled("Priority") {
            priority::validate(&self.store, attributes, object)?;
        }
        if self.plugins.is_enabled("RuntimeClass") {
            runtime_class::validate(&self.store, attributes, object)?;
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
                    caller,
                )
                .await?;
            }
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
