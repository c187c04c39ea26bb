//! Audit logging as kube-apiserver's: `--audit-policy-file` decides per
//! request what is recorded (`policy.rs`), `request.rs` carries one
//! request's event through its stages, `event.rs` is the
//! `audit.k8s.io/v1` `Event` and its line forms, `hook.rs` where it meets
//! the request path (`server.rs`), `queue.rs` the bounded queue in front
//! of each backend, `writer.rs` the log backend's writer thread,
//! `rotation.rs` lumberjack's rotation,
//! `webhook.rs` the webhook backend (`webhook_config.rs` its kubeconfig);
//! with both a log and a webhook every event goes to both (kube's
//! `audit.Union`).
//! Flags and their checks follow `apiserver/pkg/server/options/audit.go`.
//! Without a policy file or a log path nothing is audited and no request
//! does any audit work (only the `Audit-Id` header, which kube's
//! `WithAuditInit` always sets).

mod event;
mod hook;
mod policy;
mod queue;
mod request;
mod rotation;
mod webhook;
pub(crate) mod webhook_config;
mod writer;

#[cfg(test)]
mod options_tests;

use std::path::PathBuf;
use std::sync::Arc;

pub use event::Event;
pub use hook::{audit_id, store_failed, Audit, AuditedBody, Start, StreamEnd, AUDIT_ID_HEADER};
pub use policy::{Level, Policy, RequestAuditConfig, Stage};
pub use queue::{Mode, Queue};
pub use request::{Arrival, RequestAudit};
pub use rotation::{RotatingFile, Rotation};
pub use webhook::BatchConfig;
pub use writer::{Format, Output};

/// kube's `--audit-log-batch-buffer-size` default (`defaultBatchBufferSize`).
pub const DEFAULT_BATCH_BUFFER_SIZE: usize = 10_000;

/// Why auditing cannot start (the server does not).
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// kube's `newPolicyRuleEvaluator` wording.
    #[error("loading audit policy file: {0}")]
    Policy(String),
    /// A bad `--audit-log-*` flag (`AuditLogOptions.Validate`).
    #[error("{0}")]
    Flag(String),
    /// The log cannot be opened (`ensureLogFile`).
    #[error("{0}")]
    Log(String),
    /// The webhook's kubeconfig cannot be read (`loadWebhook`).
    #[error("{0}")]
    Webhook(String),
}

/// `--audit-webhook-*` (`AuditWebhookOptions`), with kube's defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditWebhookOptions {
    /// `--audit-webhook-config-file`: a kubeconfig naming the webhook.
    pub config_file: Option<PathBuf>,
    /// `--audit-webhook-initial-backoff` (10s).
    pub initial_backoff: std::time::Duration,
    /// `--audit-webhook-mode`: `batch` (the default), `blocking`,
    /// `blocking-strict`.
    pub mode: String,
    /// `--audit-webhook-batch-buffer-size` (10000).
    pub batch_buffer_size: i64,
    /// `--audit-webhook-batch-max-size` (400).
    pub batch_max_size: i64,
    /// `--audit-webhook-batch-max-wait` (30s).
    pub batch_max_wait: std::time::Duration,
    /// `--audit-webhook-batch-throttle-enable` (true).
    pub batch_throttle_enable: bool,
    /// `--audit-webhook-batch-throttle-qps` (10).
    pub batch_throttle_qps: f32,
    /// `--audit-webhook-batch-throttle-burst` (15).
    pub batch_throttle_burst: i64,
    /// `--audit-webhook-version`.
    pub version: String,
}

impl Default for AuditWebhookOptions {
    fn default() -> Self {
        AuditWebhookOptions {
            config_file: None,
            initial_backoff: std::time::Duration::from_secs(10),
            mode: "batch".to_string(),
            batch_buffer_size: DEFAULT_BATCH_BUFFER_SIZE as i64,
            batch_max_size: 400,
            batch_max_wait: std::time::Duration::from_secs(30),
            batch_throttle_enable: true,
            batch_throttle_qps: 10.0,
            batch_throttle_burst: 15,
            version: "audit.k8s.io/v1".to_string(),
        }
    }
}

impl AuditWebhookOptions {
    fn enabled(&self) -> bool {
        self.config_file
            .as_ref()
            .is_some_and(|file| !file.as_os_str().is_empty())
    }

    /// `AuditWebhookOptions.Validate` (`validateBackendBatchOptions`,
    /// `validateGroupVersionString`), only with a config file, as kube.
    pub fn validate(&self) -> Vec<String> {
        let mut errors = Vec::new();
        if !self.enabled() {
            return errors;
        }
        let batch = if parse_mode(&self.mode).is_none() {
            Err(format!(
                "invalid audit webhook mode {}, allowed modes are \"batch,blocking,blocking-strict\"",
                self.mode
            ))
        } else if self.mode != "batch" {
            Ok(())
        } else if self.batch_buffer_size <= 0 {
            Err(format!(
                "invalid audit batch webhook buffer size {}, must be a positive number",
                self.batch_buffer_size
            ))
        } else if self.batch_max_size <= 0 {
            Err(format!(
                "invalid audit batch webhook max batch size {}, must be a positive number",
                self.batch_max_size
            ))
        } else if self.batch_throttle_enable && self.batch_throttle_qps <= 0.0 {
            Err(format!(
                "invalid audit batch webhook throttle QPS {}, must be a positive number",
                self.batch_throttle_qps
            ))
        } else if self.batch_throttle_enable && self.batch_throttle_burst <= 0 {
            Err(format!(
                "invalid audit batch webhook throttle burst {}, must be a positive number",
                self.batch_throttle_burst
            ))
        } else {
            Ok(())
        };
        if let Err(error) = batch {
            errors.push(error);
        }
        if self.version != "audit.k8s.io/v1" {
            errors
                .push(r#"invalid group version, allowed versions are ["audit.k8s.io/v1"]"#.into());
        }
        errors
    }

    fn start(&self) -> Result<Queue, AuditError> {
        let target = webhook_config::load(
            self.config_file
                .as_deref()
                .unwrap_or_else(|| std::path::Path::new("")),
        )?;
        let positive = |value: i64, default: usize| {
            usize::try_from(value)
                .ok()
                .filter(|value| *value > 0)
                .unwrap_or(default)
        };
        let batch = BatchConfig {
            buffer_size: positive(self.batch_buffer_size, DEFAULT_BATCH_BUFFER_SIZE),
            max_batch_size: positive(self.batch_max_size, 400),
            max_batch_wait: self.batch_max_wait,
            throttle: self.batch_throttle_enable.then(|| {
                (
                    self.batch_throttle_qps,
                    positive(self.batch_throttle_burst, 15),
                )
            }),
        };
        let mode = parse_mode(&self.mode).unwrap_or(Mode::Batch);
        webhook::start(target, mode, batch, self.initial_backoff)
    }
}

/// The `--audit-*` flags.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditOptions {
    /// `--audit-policy-file`.
    pub policy_file: Option<PathBuf>,
    /// `--audit-log-path`; `-` is stdout.
    pub log_path: Option<String>,
    /// `--audit-log-maxage` (days).
    pub max_age: i64,
    /// `--audit-log-maxbackup`.
    pub max_backup: i64,
    /// `--audit-log-maxsize` (MiB).
    pub max_size: i64,
    /// `--audit-log-format`: `json` (the default) or `legacy`.
    pub format: String,
    /// `--audit-log-mode`: `blocking` (kube's default for the log
    /// backend), `batch` or `blocking-strict`.
    pub mode: String,
    /// `--audit-log-batch-buffer-size`.
    pub batch_buffer_size: i64,
    /// `--audit-log-version`.
    pub version: String,
    /// `--audit-webhook-*`.
    pub webhook: AuditWebhookOptions,
}

impl Default for AuditOptions {
    fn default() -> Self {
        AuditOptions {
            policy_file: None,
            log_path: None,
            max_age: 0,
            max_backup: 0,
            max_size: 0,
            format: "json".to_string(),
            mode: "blocking".to_string(),
            batch_buffer_size: DEFAULT_BATCH_BUFFER_SIZE as i64,
            version: "audit.k8s.io/v1".to_string(),
            webhook: AuditWebhookOptions::default(),
        }
    }
}

/// Policy and backends of a server that audits: the log, the webhook, or
/// both (`audit.Union`: every event to each).
pub struct Auditor {
    policy: Policy,
    log: Option<Queue>,
    webhook: Option<Queue>,
}

/// Whether a blocking-strict backend stored a `RequestReceived` event.
pub struct Stored(Vec<tokio::sync::oneshot::Receiver<bool>>);

impl Stored {
    /// True when every strict backend stored it (`union.ProcessEvents`).
    pub async fn wait(self) -> bool {
        for outcome in self.0 {
            if !outcome.await.unwrap_or(false) {
                return false;
            }
        }
        true
    }
}

impl Auditor {
    pub fn new(policy: Policy, log: Option<Queue>, webhook: Option<Queue>) -> Auditor {
        Auditor {
            policy,
            log,
            webhook,
        }
    }

    /// `sink.ProcessEvents` for one event, to every backend.
    pub fn process(&self, event: Event) {
        match (&self.log, &self.webhook) {
            (Some(log), Some(webhook)) => {
                log.process(event.clone());
                webhook.process(event);
            }
            (Some(log), None) => log.process(event),
            (None, Some(webhook)) => webhook.process(event),
            (None, None) => {}
        }
    }

    /// `processAuditEvent` of a `RequestReceived` event: a blocking-strict
    /// backend's outcome is waited for ([`Stored::wait`]), the others
    /// take it as [`Self::process`] does.
    pub fn process_received(&self, event: Event) -> Stored {
        let mut outcomes = Vec::new();
        if let Some(log) = &self.log {
            if log.mode() == Mode::BlockingStrict {
                outcomes.push(log.process_acknowledged(event.clone()));
            } else {
                log.process(event.clone());
            }
        }
        if let Some(webhook) = &self.webhook {
            if webhook.mode() == Mode::BlockingStrict {
                outcomes.push(webhook.process_acknowledged(event));
            } else {
                webhook.process(event);
            }
        }
        Stored(outcomes)
    }

    /// Waits until every event so far is written (shutdown, tests).
    pub fn flush(&self) {
        if let Some(log) = &self.log {
            log.flush();
        }
        if let Some(webhook) = &self.webhook {
            webhook.flush();
        }
    }

    /// Events the batch queues dropped.
    pub fn dropped(&self) -> u64 {
        self.log.as_ref().map_or(0, Queue::dropped)
            + self.webhook.as_ref().map_or(0, Queue::dropped)
    }

    /// Writes what is queued and stops the backends.
    pub fn shutdown(&self) {
        if let Some(log) = &self.log {
            log.shutdown();
        }
        if let Some(webhook) = &self.webhook {
            webhook.shutdown();
        }
    }
}

impl AuditOptions {
    /// `AuditLogOptions.Validate` (checked only with a log path, as kube).
    pub fn validate(&self) -> Result<(), AuditError> {
        let mut errors = Vec::new();
        if self.log_path.as_deref().unwrap_or_default().is_empty() {
            errors = self.webhook.validate();
            return match errors.is_empty() {
                true => Ok(()),
                false => Err(AuditError::Flag(crate::go::errors::aggregate(&errors))),
            };
        }
        if parse_mode(&self.mode).is_none() {
            errors.push(format!(
                "invalid audit log mode {}, allowed modes are \"batch,blocking,blocking-strict\"",
                self.mode
            ));
        }
        if self.mode == "batch" && self.batch_buffer_size <= 0 {
            errors.push(format!(
                "invalid audit batch log buffer size {}, must be a positive number",
                self.batch_buffer_size
            ));
        }
        if self.version != "audit.k8s.io/v1" {
            errors.push(format!(
                "invalid audit log version {}, allowed versions are \"audit.k8s.io/v1\"",
                self.version
            ));
        }
        if parse_format(&self.format).is_none() {
            errors.push(format!(
                "invalid audit log format {}, allowed formats are \"legacy,json\"",
                self.format
            ));
        }
        for (flag, value) in [
            ("--audit-log-maxage", self.max_age),
            ("--audit-log-maxbackup", self.max_backup),
            ("--audit-log-maxsize", self.max_size),
        ] {
            if value < 0 {
                errors.push(format!("{flag} {value} can't be a negative number"));
            }
        }
        errors.extend(self.webhook.validate());
        if errors.is_empty() {
            return Ok(());
        }
        Err(AuditError::Flag(crate::go::errors::aggregate(&errors)))
    }

    /// The auditor these flags ask for: `None` without a policy file, or
    /// without a log path and a webhook (kube then records nothing either).
    pub fn start(&self) -> Result<Option<Arc<Auditor>>, AuditError> {
        self.validate()?;
        let log_path = self.log_path.as_deref().unwrap_or_default();
        let Some(policy_file) = &self.policy_file else {
            if !log_path.is_empty() {
                tracing::warn!(
                    "no audit policy file provided, no events will be recorded for log backend"
                );
            }
            if self.webhook.enabled() {
                tracing::warn!(
                    "no audit policy file provided, no events will be recorded for webhook backend"
                );
            }
            return Ok(None);
        };
        let policy = Policy::load(policy_file)?;
        let log = if log_path.is_empty() {
            None
        } else {
            Some(self.start_log(log_path)?)
        };
        let webhook = if self.webhook.enabled() {
            Some(self.webhook.start()?)
        } else {
            None
        };
        if log.is_none() && webhook.is_none() {
            return Ok(None);
        }
        Ok(Some(Arc::new(Auditor::new(policy, log, webhook))))
    }

    fn start_log(&self, log_path: &str) -> Result<Queue, AuditError> {
        let output = if log_path == "-" {
            Output::Stdout
        } else {
            let rotation = Rotation {
                max_size_mb: u64::try_from(self.max_size).unwrap_or_default(),
                max_backups: usize::try_from(self.max_backup).unwrap_or_default(),
                max_age_days: u64::try_from(self.max_age).unwrap_or_default(),
            };
            let file = RotatingFile::create(std::path::Path::new(log_path), rotation)
                .map_err(|error| AuditError::Log(format!("ensureLogFile: {error}")))?;
            Output::File(file)
        };
        let format = parse_format(&self.format).unwrap_or(Format::Json);
        let mode = parse_mode(&self.mode).unwrap_or(Mode::Blocking);
        let buffer = usize::try_from(self.batch_buffer_size)
            .ok()
            .filter(|size| *size > 0)
            .unwrap_or(DEFAULT_BATCH_BUFFER_SIZE);
        writer::start(output, format, mode, buffer)
    }
}

fn parse_mode(mode: &str) -> Option<Mode> {
    Some(match mode {
        "batch" => Mode::Batch,
        "blocking" => Mode::Blocking,
        "blocking-strict" => Mode::BlockingStrict,
        _ => return None,
    })
}

fn parse_format(format: &str) -> Option<Format> {
    Some(match format {
        "json" => Format::Json,
        "legacy" => Format::Legacy,
        _ => return None,
    })
}
