//! `resourceVersion`, `resourceVersionMatch`, `limit` and `continue` of GET
//! and LIST, as kube-apiserver 1.34 reads them:
//!
//! - `ValidateListOptions` (`apimachinery/pkg/apis/meta/internalversion/validation`):
//!   the 422 `ListOptions.meta.k8s.io "" is invalid: ...` of a LIST.
//! - `storage.ValidateListOptions` (run first by the cache delegator's `GetList`):
//!   the 400s for a bad continue token, a resourceVersion next to a continue
//!   token, and a resourceVersion that is not a number.
//! - `cacher/delegator` + `cacher.GetList` + `etcd3/store.go GetList`: which
//!   state a LIST reads ([`ListRead`]), the 3 s wait for a revision the cache
//!   has not reached (`waitUntilFreshAndBlock`, then the 504
//!   `storage.NewTooLargeResourceVersionError`), and the 410s of
//!   `interpretListError` for revisions outside the history window.

use std::sync::Arc;
use std::time::Duration;

use ferrokube_store::{Snapshot, StoreError};
use serde_json::json;

use super::context::Api;
use super::continue_token::{self, Continuation};
use super::exchange::ApiResponse;
use crate::object::StoredObject;
use crate::query::Query;
use crate::status::{Cause, FieldError, Result, Status};

/// How long a read waits for the cache to reach a requested revision
/// (`cacher.blockTimeout`).
pub const FRESHNESS_WAIT: Duration = Duration::from_secs(3);
/// `cacher.resourceVersionTooHighRetrySeconds`.
const TOO_LARGE_RETRY_SECONDS: u32 = 1;
/// A consistent read waits this long for the cache to show the backend's
/// revision (kube falls back to etcd instead of failing; we have no other copy).
const CONSISTENT_READ_WAIT: Duration = Duration::from_secs(60);

/// `etcd3/store.go`: `expired` / `inconsistentContinue`.
pub const EXPIRED_LIST: &str = "The resourceVersion for the provided list is too old.";
pub const INCONSISTENT_CONTINUE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.";

/// The list options of one request, raw (an empty parameter is an absent one).
pub struct ListOptions<'a> {
    pub resource_version: &'a str,
    pub resource_version_match: &'a str,
    pub continue_token: &'a str,
    pub send_initial_events: bool,
}

impl<'a> ListOptions<'a> {
    pub fn from_query(query: &'a Query) -> Self {
        ListOptions {
            resource_version: query.get("resourceVersion").unwrap_or(""),
            resource_version_match: query.get("resourceVersionMatch").unwrap_or(""),
            continue_token: query.get("continue").unwrap_or(""),
            // `SendInitialEvents` is a *bool: any value, even "false", sets it.
            send_initial_events: query.get("sendInitialEvents").is_some(),
        }
    }

    /// `ValidateListOptions` for a list (not a watch): 422 Invalid.
    pub fn validate(&self) -> Result<()> {
        let mut errors = Vec::new();
        let matching = self.resource_version_match;
        if !matching.is_empty() {
            if self.resource_version.is_empty() {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                ));
            }
            if !self.continue_token.is_empty() {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
            if matching != "Exact" && matching != "NotOlderThan" {
                errors.push(FieldError::not_supported(
                    "resourceVersionMatch",
                    matching,
                    &["Exact", "NotOlderThan", ""],
                ));
            }
            if matching == "Exact" && self.resource_version == "0" {
                errors.push(FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                ));
            }
        }
        if self.send_initial_events {
            errors.push(FieldError::forbidden(
                "sendInitialEvents",
                "sendInitialEvents is forbidden for list",
            ));
        }
        if errors.is_empty() {
            Ok(())
        } else {
            Err(Status::invalid("meta.k8s.io", "ListOptions", "", &errors))
        }
    }

    /// `storage.ValidateListOptions` plus the delegator's choice: which state
    /// to read and whether `limit` pages it. Call after [`ListOptions::validate`].
    pub fn plan(&self, api: &Api, prefix: &str) -> Result<ListRead> {
        if !self.continue_token.is_empty() {
            let continuation =
                continue_token::decode(&api.continue_key, self.continue_token, prefix)?;
            if !self.resource_version.is_empty() && self.resource_version != "0" {
                return Err(Status::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            return Ok(ListRead::Continue(continuation));
        }
        if self.resource_version.is_empty() {
            return Ok(ListRead::Consistent);
        }
        let revision = parse_resource_version(self.resource_version)
            .map_err(|detail| Status::bad_request(format!("invalid resource version: {detail}")))?;
        Ok(match self.resource_version_match {
            "Exact" if revision > 0 => ListRead::Exact(revision),
            // Exact at a spelling of 0 other than "0" ("00"): etcd reads the latest.
            "Exact" => ListRead::Consistent,
            // `cacher.computeListLimit`: the cache ignores limit for resourceVersion "0".
            _ if self.resource_version == "0" => ListRead::Any,
            // The legacy exact match of a paginated list (`resourceVersionMatch` unset).
            "" if revision > 0 => ListRead::LegacyExact(revision),
            _ => ListRead::NotOlderThan(revision),
        })
    }
}

/// The state a LIST reads (the rows of the API Concepts table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListRead {
    /// Most Recent: the backend's current revision (a quorum read in kube).
    Consistent,
    /// Any: whatever the cache holds; `limit` is ignored (kube's watch cache
    /// serves `resourceVersion=0` unpaginated).
    Any,
    /// Not older than: wait (3 s) for the revision, then the latest.
    NotOlderThan(u64),
    /// Exact (`resourceVersionMatch=Exact`).
    Exact(u64),
    /// `resourceVersionMatch` unset with a revision: Exact when `limit` is
    /// set, Not older than otherwise.
    LegacyExact(u64),
    /// The page after a continue token.
    Continue(Continuation),
}

/// The state a read was answered from, and where its first item starts (inclusive).
pub struct ReadState {
    pub snapshot: Arc<Snapshot<StoredObject>>,
    pub start: Option<String>,
    /// Whether `limit` pages the result.
    pub paged: bool,
}

/// Why a LIST could not be read: a plain Status, or a response kube builds by
/// hand (the 410 carrying an "inconsistent continue" token in `metadata.continue`).
pub enum ReadError {
    Status(Status),
    Response(ApiResponse),
}

impl From<Status> for ReadError {
    fn from(status: Status) -> Self {
        ReadError::Status(status)
    }
}

impl ListRead {
    pub async fn read(
        &self,
        api: &Api,
        prefix: &str,
        limited: bool,
    ) -> Result<ReadState, ReadError> {
        let state = |snapshot, paged| ReadState {
            snapshot,
            start: None,
            paged,
        };
        Ok(match self {
            ListRead::Consistent => state(consistent_snapshot(api).await?, true),
            ListRead::Any => state(api.store.snapshot(), false),
            ListRead::NotOlderThan(revision) => {
                wait_not_older_than(api, *revision).await?;
                state(api.store.snapshot(), true)
            }
            ListRead::LegacyExact(revision) if !limited => {
                wait_not_older_than(api, *revision).await?;
                state(api.store.snapshot(), true)
            }
            ListRead::Exact(revision) | ListRead::LegacyExact(revision) => {
                let snapshot = exact_snapshot(api, *revision)
                    .await?
                    .ok_or_else(|| Status::gone(EXPIRED_LIST))?;
                state(snapshot, true)
            }
            ListRead::Continue(continuation) => {
                let snapshot = if continuation.revision > 0 {
                    match exact_snapshot(api, continuation.revision as u64).await? {
                        Some(snapshot) => snapshot,
                        None => {
                            return Err(ReadError::Response(inconsistent_continue(
                                api,
                                prefix,
                                &continuation.start,
                            )))
                        }
                    }
                } else {
                    consistent_snapshot(api).await?
                };
                ReadState {
                    snapshot,
                    start: Some(continuation.start.clone()),
                    paged: true,
                }
            }
        })
    }
}

/// The state at exactly `revision`, after waiting for it; `None` when it is
/// older than the history window.
async fn exact_snapshot(api: &Api, revision: u64) -> Result<Option<Arc<Snapshot<StoredObject>>>> {
    wait_not_older_than(api, revision).await?;
    let revision = i64::try_from(revision).unwrap_or(i64::MAX);
    Ok(api.store.snapshot_at(revision).ok())
}

/// `handleCompactedErrorForPaging`: 410 Expired with a token that continues
/// from the same key at the latest revision (`rv: -1`).
fn inconsistent_continue(api: &Api, prefix: &str, start: &str) -> ApiResponse {
    let relative = start.strip_prefix(prefix).unwrap_or(start);
    let token = continue_token::encode_start(&api.continue_key, -1, relative);
    let mut body = Status::gone(INCONSISTENT_CONTINUE).to_json();
    body["metadata"] = json!({ "continue": token });
    ApiResponse::json(410, &body)
}

/// `APIObjectVersioner.ParseResourceVersion`: "" and "0" are 0, anything else
/// must be a decimal uint64; the error is the `field.Invalid` kube wraps.
pub fn parse_resource_version(value: &str) -> std::result::Result<u64, String> {
    if value.is_empty() {
        return Ok(0);
    }
    let syntax_ok = value.bytes().all(|byte| byte.is_ascii_digit());
    let why = if !syntax_ok {
        "invalid syntax"
    } else {
        match value.parse::<u64>() {
            Ok(revision) => return Ok(revision),
            Err(_) => "value out of range",
        }
    };
    Err(FieldError::invalid(
        "resourceVersion",
        value,
        format!(
            "strconv.ParseUint: parsing {}: {why}",
            crate::go::strconv::quote(value)
        ),
    )
    .to_string())
}

/// `storage.NewTooLargeResourceVersionError(wanted, current, 1)`: 504 Timeout
/// with a `ResourceVersionTooLarge` cause and `Retry-After: 1`.
pub fn too_large_resource_version(wanted: u64, current: i64) -> Status {
    let mut status = Status::timeout(
        format!("Timeout: Too large resource version: {wanted}, current: {current}"),
        TOO_LARGE_RETRY_SECONDS,
    );
    if let Some(details) = status.details.as_mut() {
        details.causes.push(Cause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        });
    }
    status
}

/// Wait (3 s) until the cache has reached `revision`; 504 otherwise.
pub async fn wait_not_older_than(api: &Api, revision: u64) -> Result<()> {
    let wanted = i64::try_from(revision).unwrap_or(i64::MAX);
    if api.store.snapshot().revision >= wanted {
        return Ok(());
    }
    match api.store.wait_for(wanted, FRESHNESS_WAIT).await {
        Ok(()) => Ok(()),
        Err(StoreError::RevisionTimeout { current, .. }) => {
            Err(too_large_resource_version(revision, current))
        }
        Err(error) => Err(Status::internal(error)),
    }
}

/// A snapshot at least as new as the backend's current revision
/// (`Store::consistent_snapshot`, without a timer when the cache is there already).
pub async fn consistent_snapshot(api: &Api) -> Result<Arc<Snapshot<StoredObject>>> {
    let wanted = api
        .store
        .backend()
        .current_revision()
        .await
        .map_err(Status::internal)?;
    let snapshot = api.store.snapshot();
    if snapshot.revision >= wanted {
        return Ok(snapshot);
    }
    api.store
        .wait_for(wanted, CONSISTENT_READ_WAIT)
        .await
        .map_err(Status::internal)?;
    Ok(api.store.snapshot())
}

/// What kube answers a GET whose resourceVersion is not a number: the
/// versioner's `storage.InvalidError` is no API status, so the handler turns it
/// into a bare 500 (`ErrorToAPIStatus`: no reason, no details).
pub fn invalid_resource_version_on_get(detail: &str) -> ApiResponse {
    ApiResponse::json(
        500,
        &json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": detail,
            "code": 500,
        }),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_versions_parse_like_go() {
        assert_eq!(parse_resource_version(""), Ok(0));
        assert_eq!(parse_resource_version("0"), Ok(0));
        assert_eq!(parse_resource_version("00"), Ok(0));
        assert_eq!(parse_resource_version("42"), Ok(42));
        for (value, why) in [
            ("abc", "invalid syntax"),
            ("-1", "invalid syntax"),
            ("+5", "invalid syntax"),
            (" 5", "invalid syntax"),
            ("99999999999999999999", "value out of range"),
        ] {
            assert_eq!(
                parse_resource_version(value),
                Err(format!(
                    "resourceVersion: Invalid value: \"{value}\": strconv.ParseUint: parsing \"{value}\": {why}"
                ))
            );
        }
    }

    #[test]
    fn validation_collects_every_error_in_kube_order() {
        let query = Query::parse("resourceVersionMatch=Foo&continue=x&sendInitialEvents=false");
        let status = ListOptions::from_query(&query)
            .validate()
            .expect_err("invalid");
        assert_eq!(status.code, 422);
        assert_eq!(
            status.message,
            "ListOptions.meta.k8s.io \"\" is invalid: [resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided, resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided, resourceVersionMatch: Unsupported value: \"Foo\": supported values: \"Exact\", \"NotOlderThan\", \"\", sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list]"
        );
    }
}
