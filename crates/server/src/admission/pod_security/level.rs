//! Pod Security levels, policy versions and the namespace labels that
//! choose them (`pod-security-admission/api/constants.go`, `helpers.go`
//! `ParseLevel`, `ParseVersion`, `PolicyToEvaluate`, `CompareLevels`).

use std::fmt;

use serde_json::Value;

use crate::status::FieldError;

const LABEL_PREFIX: &str = "pod-security.kubernetes.io/";
pub const ENFORCE_LEVEL_LABEL: &str = "pod-security.kubernetes.io/enforce";
pub const ENFORCE_VERSION_LABEL: &str = "pod-security.kubernetes.io/enforce-version";
pub const AUDIT_LEVEL_LABEL: &str = "pod-security.kubernetes.io/audit";
pub const AUDIT_VERSION_LABEL: &str = "pod-security.kubernetes.io/audit-version";
pub const WARN_LEVEL_LABEL: &str = "pod-security.kubernetes.io/warn";
pub const WARN_VERSION_LABEL: &str = "pod-security.kubernetes.io/warn-version";

/// `AuditAnnotationPrefix`: the audit annotations' keys start with it.
pub const AUDIT_ANNOTATION_PREFIX: &str = LABEL_PREFIX;

/// `api.Level`, ordered by strictness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    Privileged,
    Baseline,
    Restricted,
}

impl Level {
    pub fn as_str(self) -> &'static str {
        match self {
            Level::Privileged => "privileged",
            Level::Baseline => "baseline",
            Level::Restricted => "restricted",
        }
    }

    /// `ParseLevel`: an unknown level is `restricted` with kube's error.
    pub fn parse(value: &str) -> Result<Level, (Level, &'static str)> {
        match value {
            "privileged" => Ok(Level::Privileged),
            "baseline" => Ok(Level::Baseline),
            "restricted" => Ok(Level::Restricted),
            _ => Err((
                Level::Restricted,
                "must be one of privileged, baseline, restricted",
            )),
        }
    }
}

impl fmt::Display for Level {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// `api.Version`: `v1.<minor>` or `latest` (newer than every minor).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Version {
    Minor(u32),
    Latest,
}

impl Version {
    /// `ParseVersion`: `latest` or `v1.<n>` (no leading zeros); anything
    /// else is `latest` with kube's error.
    pub fn parse(value: &str) -> Result<Version, (Version, &'static str)> {
        const INVALID: &str = r#"must be "latest" or "v1.x""#;
        if value == "latest" {
            return Ok(Version::Latest);
        }
        let Some(minor) = value.strip_prefix("v1.") else {
            return Err((Version::Latest, INVALID));
        };
        let digits_only = !minor.is_empty() && minor.bytes().all(|b| b.is_ascii_digit());
        let leading_zero = minor.len() > 1 && minor.starts_with('0');
        if !digits_only || leading_zero {
            return Err((Version::Latest, INVALID));
        }
        // Go's strconv.Atoi fails on overflow, which kube reports the same way.
        minor
            .parse::<u32>()
            .map(Version::Minor)
            .map_err(|_| (Version::Latest, INVALID))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Version::Minor(minor) => write!(f, "v1.{minor}"),
            Version::Latest => f.write_str("latest"),
        }
    }
}

/// `api.LevelVersion`, printed `restricted:latest`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LevelVersion {
    pub level: Level,
    pub version: Version,
}

impl fmt::Display for LevelVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.level, self.version)
    }
}

/// `api.Policy`: the enforce, audit and warn level-versions of a namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Policy {
    pub enforce: LevelVersion,
    pub audit: LevelVersion,
    pub warn: LevelVersion,
}

impl Default for Policy {
    /// With no `AdmissionConfiguration`, every mode defaults to
    /// `privileged:latest` (`admission/api/v1/defaults.go`).
    fn default() -> Self {
        let privileged = LevelVersion {
            level: Level::Privileged,
            version: Version::Latest,
        };
        Policy {
            enforce: privileged,
            audit: privileged,
            warn: privileged,
        }
    }
}

impl LevelVersion {
    /// `LevelVersion.Equivalent`: the same level, and for any level but
    /// privileged the same version.
    pub fn equivalent(&self, other: &LevelVersion) -> bool {
        self.level == other.level
            && (self.level == Level::Privileged || self.version == other.version)
    }
}

impl Policy {
    /// `Policy.Equivalent`: every mode equivalent.
    pub fn equivalent(&self, other: &Policy) -> bool {
        self.enforce.equivalent(&other.enforce)
            && self.audit.equivalent(&other.audit)
            && self.warn.equivalent(&other.warn)
    }

    /// `FullyPrivileged`.
    pub fn fully_privileged(&self) -> bool {
        self.enforce.level == Level::Privileged
            && self.audit.level == Level::Privileged
            && self.warn.level == Level::Privileged
    }
}

/// `PolicyToEvaluate`: the policy of a namespace with `labels` (its
/// `metadata.labels` object), unset modes from `defaults`. A policy is
/// always returned; bad label values give one field error each (in kube's
/// order), an invalid audit or warn level fails open to `privileged`.
pub fn policy_to_evaluate(labels: Option<&Value>, defaults: Policy) -> (Policy, Vec<FieldError>) {
    let mut policy = defaults;
    let mut errors = Vec::new();
    let Some(labels) = labels.and_then(Value::as_object) else {
        return (policy, errors);
    };
    let label = |key: &str| labels.get(key).and_then(Value::as_str);
    let modes = [
        (
            ENFORCE_LEVEL_LABEL,
            ENFORCE_VERSION_LABEL,
            &mut policy.enforce,
            false,
        ),
        (
            AUDIT_LEVEL_LABEL,
            AUDIT_VERSION_LABEL,
            &mut policy.audit,
            true,
        ),
        (WARN_LEVEL_LABEL, WARN_VERSION_LABEL, &mut policy.warn, true),
    ];
    for (level_label, version_label, target, fail_open) in modes {
        if let Some(value) = label(level_label) {
            match Level::parse(value) {
                Ok(level) => target.level = level,
                Err((fallback, why)) => {
                    target.level = if fail_open {
                        Level::Privileged
                    } else {
                        fallback
                    };
                    errors.push(label_error(level_label, value, why));
                }
            }
        }
        if let Some(value) = label(version_label) {
            match Version::parse(value) {
                Ok(version) => target.version = version,
                Err((fallback, why)) => {
                    target.version = fallback;
                    errors.push(label_error(version_label, value, why));
                }
            }
        }
    }
    (policy, errors)
}

/// `appendErr`: `field.Invalid(metadata.labels[<label>], value, why)`.
fn label_error(label: &str, value: &str, why: &str) -> FieldError {
    FieldError::invalid(&format!("metadata.labels[{label}]"), value, why)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn versions_parse_as_kube_parses_them() {
        assert_eq!(Version::parse("latest"), Ok(Version::Latest));
        assert_eq!(Version::parse("v1.0"), Ok(Version::Minor(0)));
        assert_eq!(Version::parse("v1.34"), Ok(Version::Minor(34)));
        assert_eq!(Version::parse("v1.99"), Ok(Version::Minor(99)));
        for bad in [
            "", "v1", "v1.", "v1.01", "v2.0", "1.20", "v1.x", "v1.-1", "Latest",
        ] {
            assert!(Version::parse(bad).is_err(), "{bad}");
        }
        assert!(Version::Minor(34) < Version::Latest);
        assert_eq!(Version::Minor(7).to_string(), "v1.7");
    }

    #[test]
    fn labels_choose_the_policy_and_bad_values_fail_closed_for_enforce_only() {
        let labels = json!({
            "pod-security.kubernetes.io/enforce": "baseline",
            "pod-security.kubernetes.io/enforce-version": "v1.22",
            "pod-security.kubernetes.io/audit": "nope",
            "pod-security.kubernetes.io/warn": "restricted",
            "pod-security.kubernetes.io/warn-version": "v1.x",
        });
        let (policy, errors) = policy_to_evaluate(Some(&labels), Policy::default());
        assert_eq!(policy.enforce.to_string(), "baseline:v1.22");
        assert_eq!(policy.audit.to_string(), "privileged:latest");
        assert_eq!(policy.warn.to_string(), "restricted:latest");
        let messages: Vec<String> = errors.iter().map(ToString::to_string).collect();
        assert_eq!(
            messages,
            vec![
                r#"metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "nope": must be one of privileged, baseline, restricted"#,
                r#"metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "v1.x": must be "latest" or "v1.x""#,
            ]
        );
        let (policy, _) = policy_to_evaluate(
            Some(&json!({"pod-security.kubernetes.io/enforce": "bogus"})),
            Policy::default(),
        );
        assert_eq!(policy.enforce.to_string(), "restricted:latest");
    }
}
