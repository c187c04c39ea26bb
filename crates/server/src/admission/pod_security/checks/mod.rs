//! The Pod Security Standards checks (`pod-security-admission/policy`):
//! every baseline and restricted check with its versions, run on a pod's
//! metadata and spec as JSON, and the registry that picks the checks of a
//! level and version (`registry.go` `populate`, `EvaluatePod`): baseline
//! checks sorted by ID, then for `restricted` the restricted checks sorted
//! by ID, a restricted check replacing the baseline checks it overrides.
//!
//! One file per group: [`host`] (host namespaces, ports, paths, probes and
//! Windows host processes), [`linux`] (the baseline security-context
//! checks), [`restricted`].

pub mod host;
pub mod linux;
pub mod restricted;

use std::collections::BTreeSet;

use serde_json::Value;

use super::level::{Level, LevelVersion, Version};

/// The newest policy version kube-apiserver 1.34 knows: `latest` and
/// newer versions evaluate as this one.
pub const MAX_MINOR: u32 = 34;

/// A pod (or pod template) under evaluation.
#[derive(Clone, Copy)]
pub struct Pod<'a> {
    /// `metadata` (`Null` when absent).
    pub metadata: &'a Value,
    /// `spec` (`Null` when absent).
    pub spec: &'a Value,
}

impl<'a> Pod<'a> {
    /// Every container: init containers, containers, ephemeral containers
    /// (`visitContainers`).
    pub fn containers(&self) -> impl Iterator<Item = &'a Value> + 'a {
        let spec = self.spec;
        ["initContainers", "containers", "ephemeralContainers"]
            .into_iter()
            .flat_map(move |key| {
                spec.get(key)
                    .and_then(Value::as_array)
                    .map(|items| items.iter())
                    .into_iter()
                    .flatten()
            })
    }

    /// `spec.securityContext`, when set.
    pub fn security_context(&self) -> Option<&'a Value> {
        present(self.spec.get("securityContext"))
    }

    /// An annotation of the pod.
    pub fn annotation(&self, key: &str) -> Option<&'a str> {
        self.metadata
            .get("annotations")
            .and_then(|annotations| annotations.get(key))
            .and_then(Value::as_str)
    }

    /// Every annotation of the pod.
    pub fn annotations(&self) -> impl Iterator<Item = (&'a String, &'a str)> + 'a {
        self.metadata
            .get("annotations")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(key, value)| value.as_str().map(|value| (key, value)))
    }

    /// `spec.os.name == "windows"`: the checks kube skips for Windows pods
    /// from policy version 1.25.
    pub fn is_windows(&self) -> bool {
        self.spec.pointer("/os/name").and_then(Value::as_str) == Some("windows")
    }
}

/// A container's name.
pub fn name(container: &Value) -> String {
    container
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// A container's `securityContext`, when set.
pub fn security_context(container: &Value) -> Option<&Value> {
    present(container.get("securityContext"))
}

/// A field set to something other than `null` (Go's non-nil pointer).
pub fn present(value: Option<&Value>) -> Option<&Value> {
    value.filter(|value| !value.is_null())
}

/// A `*bool` field: `None` when unset.
pub fn flag(object: Option<&Value>, key: &str) -> Option<bool> {
    object
        .and_then(|object| object.get(key))
        .and_then(Value::as_bool)
}

/// A string field; `""` when unset (Go's zero value).
pub fn text<'v>(object: Option<&'v Value>, key: &str) -> &'v str {
    object
        .and_then(|object| object.get(key))
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `joinQuote`: `"a", "b"`.
pub fn join_quote<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> String {
    let quoted: Vec<String> = items
        .into_iter()
        .map(|item| format!("\"{}\"", item.as_ref()))
        .collect();
    quoted.join(", ")
}

/// `pluralize`.
pub fn pluralize<'s>(singular: &'s str, plural: &'s str, count: usize) -> &'s str {
    if count == 1 {
        singular
    } else {
        plural
    }
}

/// `container "a"` / `containers "a", "b"`.
pub fn containers_phrase(names: &[String]) -> String {
    format!(
        "{} {}",
        pluralize("container", "containers", names.len()),
        join_quote(names)
    )
}

/// Go's `sets.String.List()`: sorted, deduplicated.
pub type SortedSet = BTreeSet<String>;

/// A check that forbade the pod (`CheckResult` with `Allowed: false`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forbidden {
    pub reason: String,
    pub detail: String,
}

impl Forbidden {
    pub fn new(reason: impl Into<String>, detail: impl Into<String>) -> Self {
        Forbidden {
            reason: reason.into(),
            detail: detail.into(),
        }
    }
}

/// `CheckPodFn`: `None` allows the pod.
pub type CheckFn = fn(&Pod<'_>) -> Option<Forbidden>;

/// One version of a check (`VersionedCheck`).
pub struct Versioned {
    /// The first policy minor version (`1.<minimum>`) it applies to.
    pub minimum: u32,
    pub check: CheckFn,
    /// The baseline checks this restricted check replaces (`OverrideCheckIDs`).
    pub overrides: &'static [&'static str],
}

/// `policy.Check`.
pub struct Check {
    pub id: &'static str,
    pub level: Level,
    /// Strictly increasing minimums.
    pub versions: &'static [Versioned],
}

impl Check {
    /// The version in force at minor `minor`, if the check exists then.
    fn at(&self, minor: u32) -> Option<&Versioned> {
        self.versions
            .iter()
            .rev()
            .find(|versioned| versioned.minimum <= minor)
    }
}

const fn v(minimum: u32, check: CheckFn) -> Versioned {
    Versioned {
        minimum,
        check,
        overrides: &[],
    }
}

const fn overriding(minimum: u32, check: CheckFn, overrides: &'static [&'static str]) -> Versioned {
    Versioned {
        minimum,
        check,
        overrides,
    }
}

/// `DefaultChecks()` of kube 1.34, each level's checks sorted by ID (the
/// order their reasons are printed in).
pub static CHECKS: &[Check] = &[
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        versions: &[v(0, linux::app_armor_profile)],
    },
    Check {
        id: "capabilities_baseline",
        level: Level::Baseline,
        versions: &[v(0, linux::capabilities_baseline)],
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        versions: &[v(0, host::host_namespaces)],
    },
    Check {
        id: "hostPathVolumes",
        level: Level::Baseline,
        versions: &[v(0, host::host_path_volumes)],
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        versions: &[v(0, host::host_ports)],
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        level: Level::Baseline,
        versions: &[v(34, host::host_probes_and_lifecycle)],
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        versions: &[v(0, linux::privileged)],
    },
    Check {
        id: "procMount",
        level: Level::Baseline,
        versions: &[v(0, linux::proc_mount)],
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        versions: &[
            v(0, linux::se_linux_options_1_0),
            v(31, linux::se_linux_options_1_31),
        ],
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        versions: &[
            v(0, linux::seccomp_baseline_annotations),
            v(19, linux::seccomp_baseline_fields),
        ],
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        versions: &[
            v(0, linux::sysctls_1_0),
            v(27, linux::sysctls_1_27),
            v(29, linux::sysctls_1_29),
            v(32, linux::sysctls_1_32),
        ],
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        versions: &[v(0, host::windows_host_process)],
    },
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        versions: &[
            v(8, restricted::allow_privilege_escalation),
            v(25, restricted::allow_privilege_escalation_1_25),
        ],
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        versions: &[
            overriding(
                22,
                restricted::capabilities_restricted,
                &["capabilities_baseline"],
            ),
            overriding(
                25,
                restricted::capabilities_restricted_1_25,
                &["capabilities_baseline"],
            ),
        ],
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        versions: &[overriding(
            0,
            restricted::restricted_volumes,
            &["hostPathVolumes"],
        )],
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        versions: &[v(0, restricted::run_as_non_root)],
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        versions: &[v(23, restricted::run_as_user)],
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        versions: &[
            overriding(
                19,
                restricted::seccomp_restricted,
                &["seccompProfile_baseline"],
            ),
            overriding(
                25,
                restricted::seccomp_restricted_1_25,
                &["seccompProfile_baseline"],
            ),
        ],
    },
];

/// `checkRegistry.EvaluatePod`: the forbidden results of the checks of
/// `level_version`, in kube's order. `privileged` runs no check.
pub fn evaluate(level_version: LevelVersion, pod: &Pod<'_>) -> Vec<Forbidden> {
    let minor = match level_version.version {
        Version::Minor(minor) => minor.min(MAX_MINOR),
        Version::Latest => MAX_MINOR,
    };
    let in_force = |level: Level| {
        CHECKS
            .iter()
            .filter(move |check| check.level == level)
            .filter_map(move |check| check.at(minor).map(|versioned| (check.id, versioned)))
    };
    let checks: Vec<&Versioned> = match level_version.level {
        Level::Privileged => return Vec::new(),
        Level::Baseline => in_force(Level::Baseline)
            .map(|(_, versioned)| versioned)
            .collect(),
        Level::Restricted => {
            let overridden: BTreeSet<&str> = in_force(Level::Restricted)
                .flat_map(|(_, versioned)| versioned.overrides.iter().copied())
                .collect();
            in_force(Level::Baseline)
                .filter(|(id, _)| !overridden.contains(id))
                .chain(in_force(Level::Restricted))
                .map(|(_, versioned)| versioned)
                .collect()
        }
    };
    checks
        .into_iter()
        .filter_map(|versioned| (versioned.check)(pod))
        .collect()
}

/// `AggregateCheckResult.ForbiddenReason`: `host ports, privileged`.
pub fn forbidden_reason(results: &[Forbidden]) -> String {
    let reasons: Vec<&str> = results
        .iter()
        .map(|result| result.reason.as_str())
        .collect();
    reasons.join(", ")
}

/// `AggregateCheckResult.ForbiddenDetail`: each reason with its detail in
/// parentheses.
pub fn forbidden_detail(results: &[Forbidden]) -> String {
    let parts: Vec<String> = results
        .iter()
        .map(|result| {
            if result.detail.is_empty() {
                result.reason.clone()
            } else {
                format!("{} ({})", result.reason, result.detail)
            }
        })
        .collect();
    parts.join(", ")
}

#[cfg(test)]
mod tests;
