//! Admission of CONNECT requests (`handlers/rest.go` `ConnectResource`):
//! the connect subresources (`pods/exec`, `attach`, `portforward`,
//! `proxy`, `services/proxy`, `nodes/proxy`) are admitted with the
//! operation `CONNECT`, the options object (`PodExecOptions`, …) as the
//! object and no old object, options or dry-run, before the backend is
//! looked for.
//!
//! Only the plugins whose handler takes `admission.Connect` act: in kube
//! 1.34 these are the admission webhooks (`plugin/webhook/mutating`,
//! `validating`: `NewHandler(Connect, Create, Delete, Update)`),
//! ValidatingAdmissionPolicy (`plugin/policy/validating`: the same
//! operations) and AlwaysDeny (every operation). Every other built-in plugin
//! handles only CREATE, UPDATE or DELETE (NamespaceLifecycle, LimitRanger,
//! ServiceAccount, PodSecurity, ResourceQuota, NodeRestriction, …), and
//! MutatingAdmissionPolicy refuses `CONNECT` in its rules.

use serde_json::Value;

use super::attributes::{Attributes, Caller, Operation};
use super::{always_deny, policy, webhook, Admission};
use crate::status::Result;

impl Admission {
    /// The mutating then the validating stage of a CONNECT request (kube
    /// calls `Admit` then `Validate` on the chain); `options` is the
    /// connect options object, which a mutating webhook may patch.
    pub async fn admit_connect(
        &self,
        attributes: &Attributes<'_>,
        options: &mut Value,
        caller: &Caller,
    ) -> Result<()> {
        debug_assert_eq!(attributes.operation, Operation::Connect);
        let authorizer = self.authorizer.as_ref();
        if self.plugins.is_enabled("MutatingAdmissionWebhook") {
            let compiled = self.webhooks.current(&self.store);
            if !compiled.mutating.is_empty() {
                let mut object = Some(&mut *options);
                webhook::mutate(
                    &self.store,
                    &compiled.mutating,
                    attributes,
                    &mut object,
                    caller,
                    authorizer,
                )
                .await?;
            }
        }
        if self.plugins.is_enabled("AlwaysDeny") {
            return Err(always_deny(attributes, Some(options)));
        }
        let options = &*options;
        if self.plugins.is_enabled("ValidatingAdmissionPolicy") {
            let compiled = self.policies.current(&self.store);
            if !compiled.hooks.is_empty() {
                policy::validate(
                    &self.store,
                    self.registry.as_deref(),
                    &compiled,
                    attributes,
                    Some(options),
                    caller,
                    authorizer,
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
                    Some(options),
                    caller,
                    authorizer,
                )
                .await?;
            }
        }
        Ok(())
    }
}
