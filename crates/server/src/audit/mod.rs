//! Audit logging as kube-apiserver's: `--audit-policy-file` decides per
//! request what is recorded (`policy.rs`), `request.rs` carries one
//! request's event through its stages, `event.rs` is the
//! `audit.k8s.io/v1` `Event` and its line forms, `hook.rs` where it meets
//! the request path (`server.rs`), `writer.rs` the log
//! backend's queue and writer thread, `rotation.rs` lumberjack's rotation.
//! Flags and their checks follow `apiserver/pkg/server/options/audit.go`.
//! Without a policy file or a log path nothing is audited and no request
//! does any audit work (only the `Audit-Id` header, which kube's
//! `WithAuditInit` always sets).

mod event;
mod hook;
mod policy;
mod request;
mod rotation;
mod writer;

#[cfg(test)]
mod options_tests;

use std::path::PathBuf;
use std::sync::Arc;

pub use event::Event;
pub use hook::{audit_id, Audit, AuditedBody, Start, StreamEnd, AUDIT_ID_HEADER};
pub use policy::{Level, Policy, RequestAuditConfig, Stage};
pub use request::{Arrival, RequestAudit};
pub use rotation::{RotatingFile, Rotation};
pub use writer::{Format, Mode, Output, Sink};

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
}

/// The `--audit-*` flags.
#[derive(Debug, Clone, PartialEq, Eq)]
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
        }
    }
}

/// Policy and sink of a server that audits.
pub struct Auditor {
    policy: Policy,
    sink: Sink,
}

impl Auditor {
    pub fn new(policy: Policy, sink: Sink) -> Auditor {
        Auditor { policy, sink }
    }

    /// Waits until every event so far is written (shutdown, tests).
    pub fn flush(&self) {
        self.sink.flush();
    }

    /// Events the batch queue dropped.
    pub fn dropped(&self) -> u64 {
        self.sink.dropped()
    }

    /// Writes what is queued and stops the writer.
    pub fn shutdown(&self) {
        self.sink.shutdown();
    }
}

impl AuditOptions {
    /// `AuditLogOptions.Validate` (checked only with a log path, as kube).
    pub fn validate(&self) -> Result<(), AuditError> {
        if self.log_path.as_deref().unwrap_or_default().is_empty() {
            return Ok(());
        }
        let mut errors = Vec::new();
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
        if errors.is_empty() {
            return Ok(());
        }
        Err(AuditError::Flag(crate::authz::rbac::aggregate(&errors)))
    }

    /// The auditor these flags ask for: `None` without both a policy file
    /// and a log path (kube then records nothing either).
    pub fn start(&self) -> Result<Option<Arc<Auditor>>, AuditError> {
        self.validate()?;
        let log_path = self.log_path.as_deref().unwrap_or_default();
        let Some(policy_file) = &self.policy_file else {
            if !log_path.is_empty() {
                tracing::warn!(
                    "no audit policy file provided, no events will be recorded for log backend"
                );
            }
            return Ok(None);
        };
        let policy = Policy::load(policy_file)?;
        if log_path.is_empty() {
            return Ok(None);
        }
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
        let sink = Sink::start(output, format, mode, buffer)?;
        Ok(Some(Arc::new(Auditor::new(policy, sink))))
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
