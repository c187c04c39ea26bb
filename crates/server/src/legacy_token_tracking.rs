//! The `kube-system/kube-apiserver-legacy-service-account-token-tracking`
//! ConfigMap, as kube-apiserver's legacy-token-tracking controller keeps it
//! (`pkg/controlplane/controller/legacytokentracking/controller.go`): its
//! `since` date says from when legacy (Secret-based) token use is tracked,
//! and kube-controller-manager's legacy-service-account-token-cleaner reads
//! it (the bootstrap role `system:controller:legacy-service-account-token-cleaner`
//! may get exactly this ConfigMap) before it invalidates unused tokens.
//! Created with today's UTC date when missing — at most once per 30 minutes,
//! kube's `creationRatelimiter`, so replicas do not fight over it — and its
//! `since` rewritten with today's date when it does not parse as
//! `2006-01-02`. Every replica runs it from the
//! `start-legacy-token-tracking-controller` post-start hook, again whenever
//! the ConfigMap changes or is deleted (kube's informer on it).

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde_json::{json, Value};

use crate::api::Api;
use crate::controllers::{Client, ClientError};
use crate::object::feed::Update;

/// kube's post-start hook name.
pub const POST_START_HOOK: &str = "start-legacy-token-tracking-controller";
/// `ConfigMapName`.
pub const NAME: &str = "kube-apiserver-legacy-service-account-token-tracking";
/// `ConfigMapDataKey`.
pub const SINCE_KEY: &str = "since";
const PATH: &str =
    "/api/v1/namespaces/kube-system/configmaps/kube-apiserver-legacy-service-account-token-tracking";
/// The ConfigMap's store key (the informer's field selector).
const KEY: &str =
    "/registry/configmaps/kube-system/kube-apiserver-legacy-service-account-token-tracking";
/// `rate.NewLimiter(rate.Every(30*time.Minute), 1)`.
const CREATION_INTERVAL: Duration = Duration::from_secs(30 * 60);
/// The retry after a failed write (kube's rate-limited requeue).
const RETRY: Duration = Duration::from_secs(1);

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum TrackingError {
    #[error(transparent)]
    Write(#[from] ClientError),
}

/// What `syncConfigMap` does with what it finds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Missing: create it with `since` = today.
    Create,
    /// Present with a `since` that does not parse: write today's date.
    Repair,
    /// Present and well-formed.
    Keep,
}

/// `syncConfigMap`'s decision for the stored ConfigMap, if any.
pub fn action(existing: Option<&Value>) -> Action {
    match existing {
        None => Action::Create,
        Some(object) => {
            let since = object
                .pointer(&format!("/data/{SINCE_KEY}"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if parses_as_date(since) {
                Action::Keep
            } else {
                Action::Repair
            }
        }
    }
}

/// `time.Parse("2006-01-02", text)` succeeds: four-digit year, two-digit
/// month 01–12, two-digit day within the month (leap years as Go counts
/// them), nothing else.
pub fn parses_as_date(text: &str) -> bool {
    let bytes = text.as_bytes();
    if bytes.len() != 10 || bytes[4] != b'-' || bytes[7] != b'-' {
        return false;
    }
    let number = |range: std::ops::Range<usize>| -> Option<u32> {
        let digits = &bytes[range];
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        digits
            .iter()
            .try_fold(0u32, |n, d| Some(n * 10 + u32::from(d - b'0')))
    };
    let (Some(year), Some(month), Some(day)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&day)
}

/// `now.UTC().Format("2006-01-02")`.
pub fn date_of(time: SystemTime) -> String {
    let text = crate::go::time::rfc3339(time);
    text.get(..10).unwrap_or(&text).to_string()
}

/// One pass of `syncConfigMap`. `may_create` is the creation rate limiter's
/// answer; returns whether a ConfigMap was created.
async fn sync(api: &Arc<Api>, may_create: bool) -> Result<bool, TrackingError> {
    let client = Client::apiserver(api.clone());
    let existing = match client.get(PATH).await {
        Ok(object) => Some(object),
        Err(error) if error.is_not_found() => None,
        Err(error) => return Err(error.into()),
    };
    let today = date_of(SystemTime::now());
    match (action(existing.as_ref()), existing) {
        (Action::Keep, _) => Ok(false),
        (Action::Create, _) if !may_create => Ok(false),
        (Action::Create, _) => {
            let object = json!({
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": NAME, "namespace": "kube-system"},
                "data": {SINCE_KEY: today},
            });
            match client
                .create("/api/v1/namespaces/kube-system/configmaps", &object)
                .await
            {
                Ok(_) => Ok(true),
                Err(error) if error.is_already_exists() => Ok(false),
                Err(error) => Err(error.into()),
            }
        }
        (Action::Repair, Some(mut object)) => {
            if !object["data"].is_object() {
                object["data"] = json!({});
            }
            object["data"][SINCE_KEY] = json!(today);
            match client.update(PATH, &object).await {
                Ok(_) => Ok(false),
                Err(error) if error.is_not_found() || error.is_conflict() => Ok(false),
                Err(error) => Err(error.into()),
            }
        }
        (Action::Repair, None) => Ok(false),
    }
}

/// `legacyValidator.patchSecretWithLastUsedDate`'s write: each Secret a
/// legacy token authenticated from gets its label by a JSON merge patch
/// naming the Secret's uid, through kube-apiserver's loopback client, while
/// the request that used the token waits (kube patches inside the
/// authenticator); a failure is only logged.
pub async fn label_secrets(api: &Arc<Api>, labels: &[crate::authn::SecretLabel]) {
    if labels.is_empty() {
        return;
    }
    let client = Client::apiserver(api.clone());
    for label in labels {
        if let Err(error) = client
            .merge_patch(&label.path(), &label.merge_patch())
            .await
        {
            tracing::error!(
                secret = %format!("{}/{}", label.name, label.namespace),
                %error,
                "failed to label legacy service account token with last-used date"
            );
        }
    }
}

/// Starts the controller: a first sync (the post-start hook completes after
/// it), then one whenever the ConfigMap changes or is deleted, a failed one
/// retried after a second, a creation the rate limiter holds back retried
/// when it allows one.
pub fn spawn(api: Arc<Api>) {
    api.post_start_hooks.register(POST_START_HOOK);
    tokio::spawn(async move {
        let mut shutdown = api.shutdown_signal();
        let (mut feed, _) = crate::object::feed::Feed::start(&api.store);
        let mut last_created: Option<Instant> = None;
        let mut first = true;
        loop {
            let held_back = last_created
                .map(|at| CREATION_INTERVAL.saturating_sub(at.elapsed()))
                .filter(|wait| !wait.is_zero());
            let delay = match sync(&api, held_back.is_none()).await {
                Ok(true) => {
                    last_created = Some(Instant::now());
                    None
                }
                Ok(false) => held_back,
                Err(error) => {
                    // Writes fail until the rbac/bootstrap-roles hook has
                    // created kube-system on a fresh store.
                    tracing::warn!(%error, "syncing kube-system/{NAME}");
                    Some(RETRY)
                }
            };
            if first {
                first = false;
                api.post_start_hooks.complete(POST_START_HOOK);
            }
            let timer = tokio::time::sleep(delay.unwrap_or(Duration::MAX / 4));
            tokio::pin!(timer);
            loop {
                tokio::select! {
                    () = &mut timer => break,
                    update = feed.next() => {
                        let ours = match update {
                            Update::Resync(_) => true,
                            Update::Changes(changes) => {
                                changes.iter().any(|change| change.key == KEY)
                            }
                        };
                        if ours {
                            break;
                        }
                    }
                    _ = shutdown.changed() => return,
                }
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_parse_as_gos_2006_01_02_layout() {
        for good in [
            "2025-01-31",
            "2024-02-29",
            "2000-02-29",
            "0000-01-01",
            "2026-12-31",
        ] {
            assert!(parses_as_date(good), "{good}");
        }
        for bad in [
            "",
            "2025-1-31",
            "2025-01-32",
            "2025-13-01",
            "2025-00-10",
            "2025-04-31",
            "2023-02-29",
            "1900-02-29",
            "2025-01-31T00:00:00Z",
            "25-01-31",
            "2025/01/31",
            "+025-01-31",
            "２025-01-31",
        ] {
            assert!(!parses_as_date(bad), "{bad}");
        }
    }

    #[test]
    fn the_decision_follows_sync_config_map() {
        assert_eq!(action(None), Action::Create);
        let with = |since: Value| json!({"data": {SINCE_KEY: since}});
        assert_eq!(action(Some(&with(json!("2025-06-01")))), Action::Keep);
        assert_eq!(action(Some(&with(json!("yesterday")))), Action::Repair);
        assert_eq!(action(Some(&with(json!(20250601)))), Action::Repair);
        assert_eq!(action(Some(&json!({"metadata": {}}))), Action::Repair);
    }

    #[test]
    fn today_is_the_utc_date() {
        let time = SystemTime::UNIX_EPOCH + Duration::from_secs(1_767_225_599);
        assert_eq!(date_of(time), "2025-12-31");
        assert_eq!(date_of(time + Duration::from_secs(1)), "2026-01-01");
        assert!(parses_as_date(&date_of(SystemTime::now())));
    }
}
