//! Every source path docs/architecture.md names exists.
//!
//! The document is how a reader finds the code, so a path that moved without
//! its line moving too sends them nowhere. Paths are written the way each
//! section reads them: from the repository root (`crates/store`,
//! `scripts/vendor-openapi.py`), from a crate (`tests/fuzz_smoke.rs`,
//! `data/`), from a crate's `src/` (`local.rs`, `api/typed.rs`), or from the
//! module the sentence is about (`exchange.rs` in the `api/` row, `walk.rs` under
//! Field ownership). A path exists when it exists under one of those roots.

use std::path::{Path, PathBuf};

/// The places the document's paths are relative to, from the repository root.
const ROOTS: &[&str] = &[
    "",
    "crates/server",
    "crates/server/src",
    "crates/server/src/admission",
    "crates/server/src/admission/webhook",
    "crates/server/src/admission/policy",
    "crates/server/src/admission/pod_security",
    "crates/server/src/admission/pod_security/checks",
    "crates/server/src/admission/resource_quota",
    "crates/server/src/api",
    "crates/server/src/cel_env",
    "crates/server/src/audit",
    "crates/server/src/authn",
    "crates/server/src/controllers",
    "crates/server/src/crd",
    "crates/server/src/flowcontrol",
    "crates/server/src/fieldmanager",
    "crates/server/src/registry",
    "crates/formats",
    "crates/formats/src",
    "crates/store",
    "crates/store/src",
    "crates/store/src/encryption",
    "crates/store/src/etcd",
    "crates/testing",
    "crates/testing/src",
    "crates/bench/src",
    "crates/testkit",
    "crates/testkit/src",
];

/// A token with a slash that starts with one of these is a path even when it
/// names neither a `.rs` file nor a directory.
const PATH_STARTS: &[&str] = &[
    "src/", "crates/", "api/", "tests/", "scripts/", "docs/", "fuzz/", "data/", ".cargo/",
];

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The text of every inline code span outside fenced code blocks.
fn backticked(markdown: &str) -> Vec<&str> {
    let mut spans = Vec::new();
    let mut in_fence = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if !in_fence {
            spans.extend(line.split('`').skip(1).step_by(2));
        }
    }
    spans
}

/// A `.rs` file, a directory, or a slashed path from a known root. URL paths
/// (`/metrics`) and placeholders (`<db>.journal/`) are not source paths.
fn looks_like_path(token: &str) -> bool {
    let plain = !token.is_empty()
        && !token.starts_with('/')
        && !token.contains(|c: char| c.is_whitespace() || "<>{}*:=?".contains(c));
    plain
        && (token.ends_with(".rs")
            || token.ends_with('/')
            || (token.contains('/') && PATH_STARTS.iter().any(|root| token.starts_with(root))))
}

fn exists(repo: &Path, path: &str) -> bool {
    ROOTS.iter().any(|root| repo.join(root).join(path).exists())
}

#[test]
fn looks_like_path_picks_source_paths_only() {
    for path in [
        "local.rs",
        "api/typed.rs",
        "controllers/",
        "crates/store",
        "data/x.json",
    ] {
        assert!(looks_like_path(path), "{path}");
    }
    for other in [
        "/openapi/v2",
        "<db>.journal/",
        "sigs.k8s.io/json",
        "Api<K>",
        "kube-rs",
        "",
    ] {
        assert!(!looks_like_path(other), "{other}");
    }
}

#[test]
fn backticked_skips_fenced_blocks() {
    let text = "a `x.rs` b `y/`\n```\n`fenced.rs`\n```\n`z.rs`";
    assert_eq!(backticked(text), ["x.rs", "y/", "z.rs"]);
}

#[test]
fn every_path_in_the_architecture_document_exists() {
    let repo = repo_root();
    let document = repo.join("docs/architecture.md");
    let text = std::fs::read_to_string(&document)
        .unwrap_or_else(|error| panic!("reading {}: {error}", document.display()));
    let paths: Vec<&str> = backticked(&text)
        .into_iter()
        .filter(|t| looks_like_path(t))
        .collect();
    // A broken extractor would pass with nothing to check.
    assert!(
        paths.len() > 50,
        "only {} paths found: {paths:?}",
        paths.len()
    );
    let mut missing: Vec<&str> = paths.into_iter().filter(|p| !exists(&repo, p)).collect();
    missing.sort_unstable();
    missing.dedup();
    assert!(
        missing.is_empty(),
        "docs/architecture.md names paths that exist under none of {ROOTS:?}:\n  {}",
        missing.join("\n  ")
    );
}
