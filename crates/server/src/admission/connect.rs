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
                    None,
                    caller,
                    authorizer,
                )
                .await?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::admission::test_support::store_with;
    use crate::admission::{GroupVersionName, Plugins};

    fn exec_attributes(name: &str) -> Attributes<'_> {
        Attributes {
            operation: Operation::Connect,
            kind: GroupVersionName::new("", "v1", "PodExecOptions"),
            resource: GroupVersionName::new("", "v1", "pods"),
            subresource: "exec",
            name,
            namespace: "ns",
            old_object: None,
            options: Value::Null,
            dry_run: false,
            user: None,
        }
    }

    /// AlwaysDeny handles CONNECT (kube's `AlwaysDeny` handles every
    /// operation): the request's name in `admission.NewForbidden`'s text.
    #[tokio::test]
    async fn always_deny_refuses_a_connect() {
        let store = store_with(&[]).await;
        let enable = ["AlwaysDeny".to_string()];
        let plugins = Plugins::parse(&enable, &[]).expect("plugins");
        let admission = Admission::new(store, plugins);
        let mut options = json!({"kind": "PodExecOptions", "apiVersion": "v1", "command": ["ls"]});
        let refused = admission
            .admit_connect(&exec_attributes("p"), &mut options, &Caller::internal())
            .await
            .expect_err("AlwaysDeny");
        assert_eq!(refused.code, 403);
        assert_eq!(
            refused.message,
            r#"pods "p" is forbidden: admission control is denying all modifications"#
        );
    }

    /// The default plugins that handle only CREATE, UPDATE or DELETE leave
    /// a CONNECT alone, even in a namespace that does not exist
    /// (NamespaceLifecycle does not handle CONNECT).
    #[tokio::test]
    async fn the_default_plugins_admit_a_connect_without_webhooks_or_policies() {
        let store = store_with(&[]).await;
        let admission = Admission::new(store, Plugins::default());
        let mut options = json!({"kind": "PodExecOptions", "apiVersion": "v1", "command": ["ls"]});
        admission
            .admit_connect(&exec_attributes("p"), &mut options, &Caller::internal())
            .await
            .expect("admitted");
        assert_eq!(options["command"], json!(["ls"]));
    }
}
