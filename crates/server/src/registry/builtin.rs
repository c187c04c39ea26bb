//! Every resource kube-apiserver 1.34 serves by default, as data.
//!
//! Two sources, joined once:
//! * what discovery says (group, version, kind, plural, singular, scope,
//!   verbs, short names, categories, subresources): upstream's discovery
//!   snapshots, vendored as `crates/server/data/discovery-v1.34.json` by
//!   `scripts/vendor-discovery.py` (which documents the snapshot and the
//!   GA-only filter: the versions served with no `--runtime-config`);
//! * what it does not say (etcd key, name rule, create-on-update,
//!   generation, DELETE answer): the hand-written exceptions of
//!   `rest_facts.rs`.
//!
//! Order is the vendored file's, which is kube's discovery order: the core
//! group first, then the named groups in group priority order, versions
//! preferred first, resources by plural and subresources by name, so `/apis`
//! is rendered by walking the table (`discovery.rs`).
//!
//! Why parse at start rather than generate Rust: the JSON (about 20 KB, 66
//! resources) is embedded with `include_str!` and parsed on first use into
//! leaked `'static` values, which takes well under a millisecond (the
//! `parses_every_time_to_the_same_table` test prints the time); strings are
//! borrowed from the embedded text, not copied. A build script would compile
//! a second serde_json for the host and hide the table from readers; a
//! checked-in generated `.rs` file would need the generator twice (Python to
//! write it, Rust to prove it current) and would move the hand-written facts
//! out of typed Rust. Parsing keeps one data file, one generator, and the
//! exceptions next to their types.

use std::sync::OnceLock;

use serde::Deserialize;

use super::resource::{ResourceDef, SubresourceDef};
use super::rest_facts;

/// `crates/server/data/discovery-v1.34.json`.
static DISCOVERY_JSON: &str = include_str!("../../data/discovery-v1.34.json");

#[derive(Deserialize)]
struct Document<'a> {
    #[serde(borrow)]
    groups: Vec<Group<'a>>,
}

#[derive(Deserialize)]
struct Group<'a> {
    group: &'a str,
    #[serde(borrow)]
    versions: Vec<Version<'a>>,
}

#[derive(Deserialize)]
struct Version<'a> {
    version: &'a str,
    #[serde(borrow)]
    resources: Vec<Resource<'a>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Resource<'a> {
    plural: &'a str,
    singular: &'a str,
    kind: &'a str,
    namespaced: bool,
    #[serde(borrow)]
    verbs: Vec<&'a str>,
    #[serde(default, borrow)]
    short_names: Vec<&'a str>,
    #[serde(default, borrow)]
    categories: Vec<&'a str>,
    #[serde(default, borrow)]
    subresources: Vec<Subresource<'a>>,
}

#[derive(Deserialize)]
struct Subresource<'a> {
    name: &'a str,
    group: &'a str,
    version: &'a str,
    kind: &'a str,
    #[serde(borrow)]
    verbs: Vec<&'a str>,
}

/// The built-in resource table, built on first use.
pub fn builtin_resources() -> &'static [ResourceDef] {
    static TABLE: OnceLock<&'static [ResourceDef]> = OnceLock::new();
    TABLE.get_or_init(|| parse(DISCOVERY_JSON).leak())
}

/// The table described by `json` (the vendored file's shape), joined with
/// the hand-written facts.
fn parse(json: &'static str) -> Vec<ResourceDef> {
    let document: Document<'static> = serde_json::from_str(json)
        .unwrap_or_else(|error| panic!("discovery-v1.34.json does not parse: {error}"));
    let mut table = Vec::new();
    for group in document.groups {
        for version in group.versions {
            for resource in version.resources {
                table.push(resource_def(group.group, version.version, resource));
            }
        }
    }
    table
}

fn resource_def(
    group: &'static str,
    version: &'static str,
    resource: Resource<'static>,
) -> ResourceDef {
    let facts = rest_facts::facts(group, resource.plural);
    let subresources: Vec<SubresourceDef> = resource
        .subresources
        .into_iter()
        .map(|sub| SubresourceDef {
            name: sub.name,
            group: sub.group,
            version: sub.version,
            kind: sub.kind,
            verbs: sub.verbs.leak(),
        })
        .collect();
    ResourceDef {
        group,
        version,
        kind: resource.kind,
        plural: resource.plural,
        singular: resource.singular,
        namespaced: resource.namespaced,
        storage: facts.storage_key(&resource.verbs),
        verbs: resource.verbs.leak(),
        short_names: resource.short_names.leak(),
        categories: resource.categories.leak(),
        subresources: subresources.leak(),
        name_rule: facts.name_rule,
        create_on_update: facts.create_on_update,
        has_generation: facts.has_generation,
        returns_deleted_object: facts.returns_deleted_object,
        custom: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_time_to_the_same_table() {
        // Once to warm the allocator, then the median of a few runs.
        let _ = parse(DISCOVERY_JSON);
        let mut runs: Vec<std::time::Duration> = (0..5)
            .map(|_| {
                let start = std::time::Instant::now();
                let table = parse(DISCOVERY_JSON);
                let elapsed = start.elapsed();
                assert_eq!(table.len(), builtin_resources().len());
                elapsed
            })
            .collect();
        runs.sort();
        let median = runs[runs.len() / 2];
        // Printed, not asserted: tests hold no timing bounds (the figure is
        // for a reader comparing against the 20 KB it parses).
        eprintln!("discovery-v1.34.json parsed in {median:?}");
    }

    #[test]
    fn every_exception_names_a_served_resource() {
        for facts in rest_facts::EXCEPTIONS {
            assert!(
                builtin_resources().iter().any(
                    |resource| resource.group == facts.group && resource.plural == facts.plural
                ),
                "rest_facts.rs names {}/{}, which discovery does not list",
                facts.group,
                facts.plural
            );
        }
    }

    #[test]
    fn every_exception_differs_from_the_defaults() {
        for facts in rest_facts::EXCEPTIONS {
            assert_ne!(
                *facts,
                rest_facts::RestFacts::of(facts.group, facts.plural),
                "{}/{} lists only defaults",
                facts.group,
                facts.plural
            );
        }
    }

    #[test]
    fn one_exception_per_resource() {
        let mut seen = std::collections::HashSet::new();
        for facts in rest_facts::EXCEPTIONS {
            assert!(
                seen.insert((facts.group, facts.plural)),
                "{}/{} is listed twice",
                facts.group,
                facts.plural
            );
        }
    }
}
