//! kube's service-account token metrics (`pkg/serviceaccount/metrics.go`),
//! counted by the authenticator and rendered on `/metrics` after the
//! request metrics: legacy tokens used (auto-generated, manual, invalidated)
//! and projected tokens with a `warnafter` used before (valid) or after
//! (stale) it.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};

/// One counter per metric, in the order they are rendered (by name, as
/// Prometheus' gatherer sorts them).
#[derive(Debug, Default)]
pub struct TokenUseMetrics {
    invalid_legacy_auto: AtomicU64,
    legacy_auto: AtomicU64,
    legacy_manual: AtomicU64,
    legacy: AtomicU64,
    stale: AtomicU64,
    valid: AtomicU64,
}

/// What a use of a token counts as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenUse {
    /// A token without an audience (`jwt.go`: legacy tokens).
    Legacy,
    /// A Secret token whose ServiceAccount lists the Secret.
    LegacyAuto,
    /// A Secret token its ServiceAccount does not list.
    LegacyManual,
    /// A Secret token marked `kubernetes.io/legacy-token-invalid-since`.
    InvalidLegacyAuto,
    /// A projected token used after its `warnafter`.
    Stale,
    /// A projected token with a `warnafter` still ahead.
    Valid,
}

impl TokenUseMetrics {
    pub fn count(&self, token_use: TokenUse) {
        let counter = match token_use {
            TokenUse::Legacy => &self.legacy,
            TokenUse::LegacyAuto => &self.legacy_auto,
            TokenUse::LegacyManual => &self.legacy_manual,
            TokenUse::InvalidLegacyAuto => &self.invalid_legacy_auto,
            TokenUse::Stale => &self.stale,
            TokenUse::Valid => &self.valid,
        };
        counter.fetch_add(1, Ordering::Relaxed);
    }

    /// The Prometheus text exposition, as kube's registry writes these
    /// ALPHA counters (every one, zero or not).
    pub fn render(&self) -> String {
        let mut out = String::new();
        for (name, help, counter) in [
            (
                "serviceaccount_invalid_legacy_auto_token_uses_total",
                "Cumulative invalid auto-generated legacy tokens used",
                &self.invalid_legacy_auto,
            ),
            (
                "serviceaccount_legacy_auto_token_uses_total",
                "Cumulative auto-generated legacy tokens used",
                &self.legacy_auto,
            ),
            (
                "serviceaccount_legacy_manual_token_uses_total",
                "Cumulative manually created legacy tokens used",
                &self.legacy_manual,
            ),
            (
                "serviceaccount_legacy_tokens_total",
                "Cumulative legacy service account tokens used",
                &self.legacy,
            ),
            (
                "serviceaccount_stale_tokens_total",
                "Cumulative stale projected service account tokens used",
                &self.stale,
            ),
            (
                "serviceaccount_valid_tokens_total",
                "Cumulative valid projected service account tokens used",
                &self.valid,
            ),
        ] {
            let _ = writeln!(out, "# HELP {name} [ALPHA] {help}");
            let _ = writeln!(out, "# TYPE {name} counter");
            let _ = writeln!(out, "{name} {}", counter.load(Ordering::Relaxed));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_counter_is_rendered_with_kubes_names() {
        let metrics = TokenUseMetrics::default();
        metrics.count(TokenUse::Legacy);
        metrics.count(TokenUse::Legacy);
        metrics.count(TokenUse::LegacyManual);
        let text = metrics.render();
        assert!(text.contains(
            "# HELP serviceaccount_legacy_tokens_total [ALPHA] Cumulative legacy service account tokens used\n# TYPE serviceaccount_legacy_tokens_total counter\nserviceaccount_legacy_tokens_total 2\n"
        ));
        assert!(text.contains("\nserviceaccount_legacy_manual_token_uses_total 1\n"));
        assert!(text.contains("\nserviceaccount_legacy_auto_token_uses_total 0\n"));
        assert!(text.contains("\nserviceaccount_invalid_legacy_auto_token_uses_total 0\n"));
        assert!(text.contains("\nserviceaccount_stale_tokens_total 0\n"));
        assert!(text.contains("\nserviceaccount_valid_tokens_total 0\n"));
        let names: Vec<&str> = text
            .lines()
            .filter(|line| !line.starts_with('#'))
            .filter_map(|line| line.split(' ').next())
            .collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        assert_eq!(names, sorted);
    }
}
