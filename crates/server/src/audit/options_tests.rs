//! The `--audit-*` flags' checks (`server/options/audit.go`
//! `AuditLogOptions.Validate`) and what they start.

use super::*;

fn with_log(path: &str) -> AuditOptions {
    AuditOptions {
        log_path: Some(path.to_string()),
        ..AuditOptions::default()
    }
}

#[test]
fn flags_are_checked_as_kube_checks_them() {
    assert!(AuditOptions::default().validate().is_ok());
    // Nothing is checked without a log path.
    let unused = AuditOptions {
        mode: "fast".into(),
        ..AuditOptions::default()
    };
    assert!(unused.validate().is_ok());
    let bad_mode = AuditOptions {
        mode: "fast".into(),
        ..with_log("-")
    };
    assert_eq!(
        bad_mode.validate().unwrap_err().to_string(),
        r#"invalid audit log mode fast, allowed modes are "batch,blocking,blocking-strict""#
    );
    let bad_format = AuditOptions {
        format: "xml".into(),
        ..with_log("-")
    };
    assert_eq!(
        bad_format.validate().unwrap_err().to_string(),
        r#"invalid audit log format xml, allowed formats are "legacy,json""#
    );
    let negative = AuditOptions {
        max_age: -1,
        max_size: -2,
        ..with_log("-")
    };
    assert_eq!(
        negative.validate().unwrap_err().to_string(),
        "[--audit-log-maxage -1 can't be a negative number, --audit-log-maxsize -2 can't be a negative number]"
    );
    let buffer = AuditOptions {
        mode: "batch".into(),
        batch_buffer_size: 0,
        ..with_log("-")
    };
    assert_eq!(
        buffer.validate().unwrap_err().to_string(),
        "invalid audit batch log buffer size 0, must be a positive number"
    );
}

#[test]
fn auditing_needs_both_a_policy_and_a_log() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let log = directory.path().join("logs").join("audit.log");
    assert!(with_log(log.to_str().unwrap()).start().unwrap().is_none());
    let policy_only = AuditOptions {
        policy_file: Some(policy.clone()),
        ..AuditOptions::default()
    };
    assert!(policy_only.start().unwrap().is_none());
    let both = AuditOptions {
        policy_file: Some(policy),
        ..with_log(log.to_str().unwrap())
    };
    let auditor = both.start().unwrap().expect("auditing");
    // kube's ensureLogFile made the file, 0600.
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&log).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    auditor.shutdown();
}

#[test]
fn webhook_flags_are_checked_as_kube_checks_them() {
    let with_webhook = |webhook: AuditWebhookOptions| AuditOptions {
        webhook: AuditWebhookOptions {
            config_file: Some("hook.kubeconfig".into()),
            ..webhook
        },
        ..AuditOptions::default()
    };
    assert!(with_webhook(AuditWebhookOptions::default())
        .validate()
        .is_ok());
    // Nothing is checked without a config file.
    let unused = AuditOptions {
        webhook: AuditWebhookOptions {
            mode: "fast".into(),
            ..AuditWebhookOptions::default()
        },
        ..AuditOptions::default()
    };
    assert!(unused.validate().is_ok());
    let cases = [
        (
            AuditWebhookOptions {
                mode: "fast".into(),
                ..AuditWebhookOptions::default()
            },
            r#"invalid audit webhook mode fast, allowed modes are "batch,blocking,blocking-strict""#,
        ),
        (
            AuditWebhookOptions {
                batch_max_size: 0,
                ..AuditWebhookOptions::default()
            },
            "invalid audit batch webhook max batch size 0, must be a positive number",
        ),
        (
            AuditWebhookOptions {
                batch_throttle_qps: -1.0,
                ..AuditWebhookOptions::default()
            },
            "invalid audit batch webhook throttle QPS -1, must be a positive number",
        ),
        (
            AuditWebhookOptions {
                version: "audit.k8s.io/v2".into(),
                ..AuditWebhookOptions::default()
            },
            r#"invalid group version, allowed versions are ["audit.k8s.io/v1"]"#,
        ),
    ];
    for (webhook, message) in cases {
        assert_eq!(
            with_webhook(webhook).validate().unwrap_err().to_string(),
            message
        );
    }
    // Batch tuning is not checked outside batch mode.
    let blocking = AuditWebhookOptions {
        mode: "blocking".into(),
        batch_max_size: 0,
        ..AuditWebhookOptions::default()
    };
    assert!(with_webhook(blocking).validate().is_ok());
}

#[test]
fn a_missing_webhook_kubeconfig_stops_the_start() {
    let directory = tempfile::tempdir().unwrap();
    let policy = directory.path().join("policy.yaml");
    std::fs::write(
        &policy,
        "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n",
    )
    .unwrap();
    let options = AuditOptions {
        policy_file: Some(policy),
        webhook: AuditWebhookOptions {
            config_file: Some(directory.path().join("missing.kubeconfig")),
            ..AuditWebhookOptions::default()
        },
        ..AuditOptions::default()
    };
    let error = options.start().err().expect("refused");
    assert!(
        error.to_string().starts_with("invalid kubeconfig "),
        "{error}"
    );
}
