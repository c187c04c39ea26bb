//! Admission webhooks (`plugin/webhook`): the Validating and Mutating
//! WebhookConfigurations read from the store and compiled once per stored
//! version ([`Webhooks::current`]), which webhooks a request calls
//! ([`matching`]), the AdmissionReview v1 and its answer ([`review`]), and
//! the two dispatchers: validating webhooks called in parallel
//! (`validating/dispatcher.go`), mutating ones in order with their JSON
//! patches applied and one reinvocation round for `IfNeeded`
//! (`mutating/dispatcher.go`). The HTTPS calls go through
//! `crd/webhook_client.rs`'s connection pool.

pub mod config;
pub mod config_rules;
pub mod credentials;
pub mod equivalent;
pub mod match_conditions;
pub mod matching;
pub mod review;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use self::config::{FailurePolicy, Webhook};
use self::credentials::WebhookCredentials;
use self::equivalent::Equivalent;
use super::attributes::{Attributes, Caller};
use crate::crd::webhook_client;
use crate::object::ObjectStore;
use crate::status::{Result, Status};

/// Where the configurations are stored.
const VALIDATING_PREFIX: &str = "/registry/validatingwebhookconfigurations/";
const MUTATING_PREFIX: &str = "/registry/mutatingwebhookconfigurations/";

/// The compiled webhooks of one set of stored configurations, each list in
/// kube's order (configurations by name, webhooks as listed).
#[derive(Debug, Default)]
pub struct Compiled {
    /// Each configuration's key and mod revision: what this was compiled from.
    stamp: super::stamp::Stamp,
    pub validating: Vec<Webhook>,
    pub mutating: Vec<Webhook>,
}

/// The webhook configurations, followed from the store: a request compares
/// the stored configurations' revisions with the compiled ones' and
/// recompiles only when one changed, so a configuration is in force from
/// the response to its write on (kube's informer takes a moment).
#[derive(Default)]
pub struct Webhooks {
    compiled: Mutex<Arc<Compiled>>,
    /// What the validating and the mutating plugin present to webhooks.
    validating_credentials: Arc<WebhookCredentials>,
    mutating_credentials: Arc<WebhookCredentials>,
}

impl Webhooks {
    /// Webhooks called with these plugins' credentials.
    pub fn new(
        validating_credentials: Arc<WebhookCredentials>,
        mutating_credentials: Arc<WebhookCredentials>,
    ) -> Webhooks {
        Webhooks {
            compiled: Mutex::default(),
            validating_credentials,
            mutating_credentials,
        }
    }

    /// The webhooks the store holds now.
    pub fn current(&self, store: &ObjectStore) -> Arc<Compiled> {
        let snapshot = store.snapshot();
        let stored = || {
            snapshot
                .range(MUTATING_PREFIX, None)
                .chain(snapshot.range(VALIDATING_PREFIX, None))
                .map(|(key, entry)| (key, entry.mod_revision))
        };
        let previous = match self.compiled.lock() {
            Ok(compiled) => compiled.clone(),
            Err(_) => Arc::new(Compiled::default()),
        };
        if super::stamp::unchanged(&previous.stamp, stored()) {
            return previous;
        }
        let stamp = super::stamp::of(stored());
        let compile = |prefix: &str, mutating: bool| -> Vec<Webhook> {
            snapshot
                .range(prefix, None)
                .filter_map(|(_, entry)| entry.object.value())
                .flat_map(|configuration| {
                    let credentials = if mutating {
                        &self.mutating_credentials
                    } else {
                        &self.validating_credentials
                    };
                    config::compile(&configuration, mutating, credentials)
                })
                .collect()
        };
        let fresh = Arc::new(Compiled {
            stamp,
            validating: compile(VALIDATING_PREFIX, false),
            mutating: compile(MUTATING_PREFIX, true),
        });
        if let Ok(mut compiled) = self.compiled.lock() {
            *compiled = fresh.clone();
        }
        fresh
    }
}

/// Why a call did not give a verdict.
#[derive(Debug)]
enum CallError {
    /// `ErrCallingWebhook`'s reason: subject to `failurePolicy`.
    Calling(String),
    /// An API error returned as it is (a denial, dry-run unsupported).
    Status(Status),
}

/// One call of `webhook` (`callHook` / `callAttrMutatingHook` up to the
/// verified answer): dry-run against `sideEffects`, the review POSTed with
/// the webhook's timeout, the answer verified, warnings recorded, a denial
/// turned into kube's `Status`. `object_json` is `object`'s JSON when it
/// is already encoded.
#[allow(clippy::too_many_arguments)]
async fn call(
    store: &ObjectStore,
    webhook: &Webhook,
    equivalent: Option<&Equivalent>,
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    object_json: Option<&[u8]>,
    caller: &Caller,
    mutating: bool,
) -> std::result::Result<review::Verdict, CallError> {
    dry_run_allowed(webhook, attributes.dry_run)?;
    let uid = crate::uid::new_v4().to_string();
    let encoding =
        |error: serde_json::Error| CallError::Calling(format!("failed to call webhook: {error}"));
    let request = match equivalent {
        None => match (object_json, object) {
            (Some(json), _) => review::encode_as(&uid, attributes, attributes, Some(json)),
            (None, Some(object)) => {
                let json = serde_json::to_vec(object).map_err(encoding)?;
                review::encode_as(&uid, attributes, attributes, Some(&json))
            }
            (None, None) => review::encode_as(&uid, attributes, attributes, None),
        },
        // `NewVersionedAttributes`: the objects at the equivalent's version.
        Some(equivalent) => {
            let object = object
                .map(|object| equivalent.to_this(object))
                .transpose()
                .map_err(CallError::Status)?;
            let old = attributes
                .old_object
                .map(|old| equivalent.to_this(old))
                .transpose()
                .map_err(CallError::Status)?;
            let versioned = equivalent.attributes(attributes, old.as_ref());
            let json = object
                .as_ref()
                .map(serde_json::to_vec)
                .transpose()
                .map_err(encoding)?;
            review::encode_as(&uid, &versioned, attributes, json.as_deref())
        }
    }
    .map_err(encoding)?;
    let calling = |error: &str| CallError::Calling(format!("failed to call webhook: {error}"));
    let through_service;
    let resolved = match &webhook.resolved_url {
        Some(Ok(resolved)) => resolved,
        Some(Err(error)) => return Err(calling(error)),
        None => {
            let snapshot = store.snapshot();
            through_service = webhook_client::resolve_with_timeout(
                webhook.endpoint.as_ref(),
                |key| snapshot.get(key).and_then(|entry| entry.object.value()),
                webhook.timeout,
            )
            .map_err(|error| calling(&error))?;
            &through_service
        }
    };
    let user = &webhook.credentials;
    let headers = user
        .headers()
        .map_err(|why| CallError::Calling(format!("could not get REST client: {why}")))?;
    let answer = user
        .pool()
        .post_with_headers(
            resolved,
            &webhook.ca_bundle,
            bytes::Bytes::from(request),
            webhook.timeout,
            "context deadline exceeded",
            &headers,
        )
        .await
        .map_err(|error| CallError::Calling(format!("failed to call webhook: {error}")))?;
    let verdict = review::verify(&uid, mutating, &answer).map_err(|error| {
        CallError::Calling(format!("received invalid webhook response: {error}"))
    })?;
    for warning in &verdict.warnings {
        if let Some(header) = crate::field_validation::warning_header_value(warning) {
            caller.warn(header);
        }
    }
    if !verdict.allowed {
        return Err(CallError::Status(review::denied(
            &webhook.name,
            verdict.result.as_ref(),
        )));
    }
    Ok(verdict)
}

/// A dry run calls only webhooks without side effects (`sideEffects`
/// `None` or `NoneOnDryRun`); others make it fail with kube's 400.
fn dry_run_allowed(webhook: &Webhook, dry_run: bool) -> std::result::Result<(), CallError> {
    if !dry_run {
        return Ok(());
    }
    if webhook.side_effects.is_empty() {
        return Err(CallError::Calling("Webhook SideEffects is nil".into()));
    }
    if !matches!(webhook.side_effects.as_str(), "None" | "NoneOnDryRun") {
        return Err(CallError::Status(review::dry_run_unsupported(
            &webhook.name,
        )));
    }
    Ok(())
}

/// A call error under the webhook's `failurePolicy`: `None` when ignored.
fn under_failure_policy(webhook: &Webhook, error: CallError) -> Option<Status> {
    match error {
        CallError::Status(status) => Some(status),
        CallError::Calling(reason) if webhook.failure_policy == FailurePolicy::Ignore => {
            tracing::warn!(webhook = %webhook.name, %reason, "failed calling webhook, failing open");
            None
        }
        CallError::Calling(reason) => {
            tracing::warn!(webhook = %webhook.name, %reason, "failed calling webhook, failing closed");
            Some(Status::internal(review::calling_error(
                &webhook.name,
                &reason,
            )))
        }
    }
}

/// The webhooks of `hooks` this request calls, in order, each with the
/// equivalent resource it is called at (`matchPolicy: Equivalent`).
fn matching<'h>(
    store: &ObjectStore,
    hooks: &'h [Webhook],
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    authorizer: Option<&crate::authz::Authorizer>,
) -> Result<Vec<(&'h Webhook, Option<Equivalent>)>> {
    let mut called = Vec::new();
    for webhook in hooks {
        if let Some(invocation) =
            matching::should_call(store, webhook, attributes, object, authorizer)?
        {
            called.push((webhook, invocation.equivalent));
        }
    }
    Ok(called)
}

/// `validating.Dispatcher.Dispatch`: every matching webhook at once; the
/// first error (in webhook order) is the answer. The object is encoded
/// once for all of them, unless `object_json` (its stored encoding) is
/// given.
pub async fn validate(
    store: &ObjectStore,
    hooks: &[Webhook],
    attributes: &Attributes<'_>,
    object: Option<&Value>,
    object_json: Option<&[u8]>,
    caller: &Caller,
    authorizer: Option<&crate::authz::Authorizer>,
) -> Result<()> {
    if matching::is_exempt(attributes) {
        return Ok(());
    }
    let called = matching(store, hooks, attributes, object, authorizer)?;
    if called.is_empty() {
        return Ok(());
    }
    let encoded;
    let object_json = match (object_json, object) {
        (Some(json), _) => Some(json),
        (None, Some(object)) => {
            encoded = serde_json::to_vec(object).map_err(|error| Status::internal(&error))?;
            Some(encoded.as_slice())
        }
        (None, None) => None,
    };
    let calls = called.iter().map(|(webhook, equivalent)| async move {
        match call(
            store,
            webhook,
            equivalent.as_ref(),
            attributes,
            object,
            object_json,
            caller,
            false,
        )
        .await
        {
            Ok(_) => None,
            Err(error) => under_failure_policy(webhook, error),
        }
    });
    match futures::future::join_all(calls)
        .await
        .into_iter()
        .flatten()
        .next()
    {
        Some(status) => Err(status),
        None => Ok(()),
    }
}

/// `mutating.Dispatcher.Dispatch` with the chain's one reinvocation round:
/// each matching webhook in order, its JSON patch applied to `object`; a
/// webhook with `reinvocationPolicy: IfNeeded` is called once more when a
/// later webhook changed the object.
pub async fn mutate(
    store: &ObjectStore,
    hooks: &[Webhook],
    attributes: &Attributes<'_>,
    object: &mut Option<&mut Value>,
    caller: &Caller,
    authorizer: Option<&crate::authz::Authorizer>,
) -> Result<()> {
    if matching::is_exempt(attributes) {
        return Ok(());
    }
    let mut previously_invoked: HashSet<&str> = HashSet::new();
    let mut reinvoke: HashSet<&str> = HashSet::new();
    let mut should_reinvoke = false;
    for round in 0..2 {
        if round == 1 && (!should_reinvoke || reinvoke.is_empty()) {
            break;
        }
        let called = matching(store, hooks, attributes, object.as_deref(), authorizer)?;
        for (webhook, equivalent) in called {
            if round == 1 && !reinvoke.contains(webhook.uid.as_str()) {
                continue;
            }
            let answer = call(
                store,
                webhook,
                equivalent.as_ref(),
                attributes,
                object.as_deref(),
                None,
                caller,
                true,
            )
            .await;
            let changed = match answer {
                Ok(verdict) => match &equivalent {
                    None => apply_patch(webhook, verdict.patch.as_deref(), object)?,
                    Some(equivalent) => apply_patch_as(
                        webhook,
                        equivalent,
                        attributes,
                        verdict.patch.as_deref(),
                        object,
                    )?,
                },
                Err(error) => match under_failure_policy(webhook, error) {
                    Some(status) => return Err(status),
                    None => false,
                },
            };
            if changed {
                reinvoke.extend(previously_invoked.iter().copied());
                should_reinvoke = true;
            }
            if webhook.reinvoke_if_needed {
                previously_invoked.insert(webhook.uid.as_str());
            }
        }
    }
    Ok(())
}

/// Applies the JSON patch of a webhook called at an equivalent resource:
/// to the object at that version, converted back to the request's
/// (`mutating/dispatcher.go`, `ConvertToGVK` of the patched object);
/// whether the object changed.
fn apply_patch_as(
    webhook: &Webhook,
    equivalent: &Equivalent,
    attributes: &Attributes<'_>,
    patch: Option<&[u8]>,
    object: &mut Option<&mut Value>,
) -> Result<bool> {
    let Some(current) = object.as_deref_mut() else {
        return apply_patch(webhook, patch, object);
    };
    let mut converted = equivalent.to_this(current)?;
    if !apply_patch(webhook, patch, &mut Some(&mut converted))? {
        return Ok(false);
    }
    equivalent.back(&mut converted, attributes)?;
    let changed = converted != *current;
    *current = converted;
    Ok(changed)
}

/// Applies a webhook's JSON patch; whether the object changed.
fn apply_patch(
    webhook: &Webhook,
    patch: Option<&[u8]>,
    object: &mut Option<&mut Value>,
) -> Result<bool> {
    let Some(patch) = patch else {
        return Ok(false);
    };
    let operations: Value = serde_json::from_slice(patch).map_err(Status::internal)?;
    if operations.as_array().is_some_and(Vec::is_empty) {
        return Ok(false);
    }
    let Some(object) = object.as_deref_mut() else {
        return Err(Status::internal(format!(
            "admission webhook {} attempted to modify the object, which is not supported for this operation",
            crate::go::strconv::quote(&webhook.name)
        )));
    };
    let patched = crate::patch::json_patch::apply(object, &operations).map_err(Status::internal)?;
    if !patched.is_object() {
        return Err(Status::internal("the patched object is not a JSON object"));
    }
    let changed = patched != *object;
    *object = patched;
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn webhook(side_effects: &str, failure_policy: &str) -> Webhook {
        let configuration = json!({"metadata": {"name": "c"}, "webhooks": [{
            "name": "x.example.com", "sideEffects": side_effects, "failurePolicy": failure_policy,
        }]});
        config::compile(&configuration, false, &WebhookCredentials::default()).remove(0)
    }

    #[test]
    fn dry_runs_need_webhooks_without_side_effects() {
        for allowed in ["None", "NoneOnDryRun"] {
            assert!(dry_run_allowed(&webhook(allowed, "Fail"), true).is_ok());
        }
        for unsupported in ["Some", "Unknown"] {
            let hook = webhook(unsupported, "Ignore");
            assert!(dry_run_allowed(&hook, false).is_ok());
            let error = dry_run_allowed(&hook, true).expect_err("refused");
            // Not a call failure: failurePolicy Ignore does not skip it.
            let status = under_failure_policy(&hook, error).expect("an error");
            assert_eq!((status.code, status.reason), (400, "BadRequest"));
            assert_eq!(
                status.message,
                r#"admission webhook "x.example.com" does not support dry run"#
            );
        }
    }

    #[test]
    fn call_failures_follow_the_failure_policy() {
        let reason = "failed to call webhook: Post \"https://h/x?timeout=10s\": dial tcp h:1: connect: connection refused";
        assert!(under_failure_policy(
            &webhook("None", "Ignore"),
            CallError::Calling(reason.into())
        )
        .is_none());
        let status =
            under_failure_policy(&webhook("None", "Fail"), CallError::Calling(reason.into()))
                .expect("fails closed");
        assert_eq!((status.code, status.reason), (500, "InternalError"));
        assert_eq!(
            status.message,
            format!("Internal error occurred: failed calling webhook \"x.example.com\": {reason}")
        );
    }
}
