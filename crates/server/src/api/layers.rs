//! The module graph of `api/`, checked: every module is in one of
//! [`LAYERS`] and imports only modules of lower layers (so no two modules
//! import each other), and no module of the crate outside the layers above
//! `api` imports it.
//!
//! A test reading the sources, not a tool to install: `cargo test -p
//! ferrokube --lib api::layers` shows the graph (`--nocapture`) and fails
//! naming each upward import.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// `api`'s modules, bottom layer first (the groups of `api/mod.rs`).
const LAYERS: &[&[&str]] = &[
    &[
        "continue_token",
        "csr_strategy",
        "exchange",
        "max_in_flight",
        "strategy",
        "target",
    ],
    &[
        "context",
        "deadline",
        "options",
        "patch_type",
        "selection",
        "typed",
    ],
    &["conversion", "list_options", "representation"],
    &["deletion"],
    &["write"],
    &[
        "apply",
        "binding",
        "component_status",
        "create",
        "delete",
        "get",
        "kubelet_proxy",
        "list",
        "meta_endpoints",
        "patch",
        "proxy",
        "reviews",
        "scale",
        "token_request",
        "update",
        "watch",
    ],
    &["eviction", "connect"],
    &["dispatch", "panic_recovery"],
];

/// Modules of the crate that sit above `api` and may import it.
const ABOVE_API: &[&str] = &[
    // `audit/hook.rs` reads requests and responses; `api` only keeps what
    // it asks for in its own types (`exchange.rs` `AuditCapture`).
    "audit",
    "bootstrap.rs",
    "cluster_authentication_trust.rs",
    "controllers",
    // The APF configuration's producer and consumer write through the loopback client.
    "flowcontrol_consumer.rs",
    "flowcontrol_producer.rs",
    // The fuzz targets drive `api`'s decoders (DeleteOptions, continue tokens).
    "fuzzing.rs",
    "leader_election.rs",
    "legacy_token_tracking.rs",
    "lib.rs",
    "main.rs",
    "priority_classes.rs",
    "rbac_policy",
    "server.rs",
];

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// `api`'s modules in declaration order (test-only modules left out).
fn declared_modules(mod_rs: &str) -> Vec<String> {
    let mut modules = Vec::new();
    let mut test_only = false;
    for line in mod_rs.lines().map(str::trim) {
        if line == "#[cfg(test)]" {
            test_only = true;
            continue;
        }
        let declared = line
            .strip_prefix("pub mod ")
            .or_else(|| line.strip_prefix("mod "))
            .and_then(|rest| rest.strip_suffix(';'));
        if let Some(name) = declared {
            if !test_only {
                modules.push(name.to_string());
            }
        }
        test_only = false;
    }
    modules
}

/// The source files of one module (`x.rs`, or every file under `x/`),
/// test files left out.
fn module_files(api: &Path, module: &str) -> Vec<PathBuf> {
    let file = api.join(format!("{module}.rs"));
    if file.exists() {
        return vec![file];
    }
    let mut files = Vec::new();
    let mut pending = vec![api.join(module)];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("module directory").flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                if name != "tests" {
                    pending.push(path);
                }
            } else if name.ends_with(".rs") && name != "tests.rs" && !name.ends_with("_tests.rs") {
                files.push(path);
            }
        }
    }
    files.sort();
    files
}

/// The code of a file before its first `#[cfg(test)]`, comments dropped.
fn production_code(path: &Path) -> String {
    let text = std::fs::read_to_string(path).expect("source file");
    let code = text.split("#[cfg(test)]").next().unwrap_or("");
    code.lines()
        .filter(|line| !line.trim_start().starts_with("//"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `api` modules a file names: `crate::api::x`, and `super::x` from a
/// file directly in `api/` (`super::super::x` from one level below).
fn imported(code: &str, in_subdirectory: bool, modules: &[String]) -> Vec<String> {
    let sibling = if in_subdirectory {
        "super::super::"
    } else {
        "super::"
    };
    let mut found: Vec<String> = Vec::new();
    for prefix in ["crate::api::", sibling] {
        for (at, _) in code.match_indices(prefix) {
            let before = code[..at].chars().next_back();
            if prefix == "super::" && code[..at].ends_with("super::") {
                continue;
            }
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue;
            }
            let rest = &code[at + prefix.len()..];
            let names: Vec<&str> = match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(|item| item.trim().split("::").next().unwrap_or(""))
                    .collect(),
                None => vec![rest
                    .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .next()
                    .unwrap_or("")],
            };
            for name in names {
                if modules.iter().any(|module| module == name) && !found.iter().any(|f| f == name) {
                    found.push(name.to_string());
                }
            }
        }
    }
    found
}

#[test]
fn api_modules_import_only_lower_layers() {
    let api = source_root().join("api");
    let mod_rs = std::fs::read_to_string(api.join("mod.rs")).expect("api/mod.rs");
    let mut modules = declared_modules(&mod_rs);
    let mut layered: Vec<String> = LAYERS
        .iter()
        .flat_map(|layer| layer.iter())
        .map(|m| m.to_string())
        .collect();
    modules.sort();
    layered.sort();
    assert_eq!(
        modules, layered,
        "api/mod.rs declares exactly the modules of LAYERS"
    );
    let layer_of = |name: &str| {
        LAYERS
            .iter()
            .position(|layer| layer.contains(&name))
            .unwrap_or(0)
    };
    let mut graph = BTreeMap::new();
    let mut upward = Vec::new();
    for module in &modules {
        let rank = layer_of(module);
        for file in module_files(&api, module) {
            let in_subdirectory = file.parent() != Some(api.as_path());
            for name in imported(&production_code(&file), in_subdirectory, &modules) {
                if name == *module {
                    continue;
                }
                if layer_of(&name) >= rank {
                    upward.push(format!("{} imports {name}", file.display()));
                }
                let imports: &mut Vec<String> = graph.entry(module.clone()).or_default();
                if !imports.contains(&name) {
                    imports.push(name);
                }
            }
        }
    }
    for (module, imports) in &graph {
        println!("{module} -> {}", imports.join(", "));
    }
    assert!(
        upward.is_empty(),
        "imports of modules in the same or a higher layer:\n{}",
        upward.join("\n")
    );
}

#[test]
fn only_the_layers_above_api_import_it() {
    let root = source_root();
    let mut offenders = Vec::new();
    let mut pending = vec![root.clone()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir).expect("source directory").flatten() {
            let path = entry.path();
            let relative = path.strip_prefix(&root).unwrap_or(&path);
            let top = relative
                .components()
                .next()
                .and_then(|c| c.as_os_str().to_str())
                .unwrap_or("");
            if top == "api" || ABOVE_API.contains(&top) {
                continue;
            }
            if path.is_dir() {
                pending.push(path);
            } else if production_code(&path).contains("crate::api") {
                offenders.push(relative.display().to_string());
            }
        }
    }
    offenders.sort();
    assert!(
        offenders.is_empty(),
        "modules below api that import it: {offenders:?}"
    );
}

#[test]
fn the_import_scanner_reads_use_forms() {
    let modules: Vec<String> = ["context", "target", "write"]
        .iter()
        .map(|m| m.to_string())
        .collect();
    let code = "use super::{context::Api, target::Target};\nuse crate::api::write::commit;\nlet x = super::super::nothing;";
    assert_eq!(
        imported(code, false, &modules),
        vec!["write", "context", "target"]
    );
    assert_eq!(
        imported("use super::super::target::Target;", true, &modules),
        vec!["target"]
    );
    assert!(imported("use super::options::X;", true, &modules).is_empty());
}
