//! `warningsForOverlappingVirtualPaths` (`pkg/api/pod/warnings.go`, 1.34):
//! items of a configMap, secret, downward API or projected volume written
//! to the same path, or to a path inside another item's path. Go looks the
//! colliding path up in a set (random order); here in sorted order.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::validation::field;

fn is_set(value: Option<&Value>) -> bool {
    value.is_some_and(|value| !value.is_null())
}

/// The items' paths when the source has `items` (Go's non-nil slice).
fn item_paths(source: &Value) -> Option<Vec<String>> {
    source.get("items").filter(|items| !items.is_null())?;
    Some(
        field::items_at(source, "items")
            .iter()
            .map(|item| field::str_at(item, "path").to_string())
            .collect(),
    )
}

/// `checkForOverlap`.
fn overlap<'a>(paths: &'a BTreeSet<String>, path: &str) -> Option<&'a str> {
    for item in paths {
        if item.is_empty() || path.is_empty() {
            return None;
        }
        if item == path
            || format!("{item}/").starts_with(path)
            || format!("{path}/").starts_with(item.as_str())
        {
            return Some(item);
        }
    }
    None
}

/// `checkVolumeMappingForOverlap`.
fn check(paths: &[String], message: &str, warnings: &mut Vec<String>) {
    let mut unique = BTreeSet::new();
    for path in paths {
        let normalized = path.trim_end_matches('/');
        if let Some(collision) = overlap(&unique, normalized) {
            warnings.push(format!("{message}: {normalized:?} with {collision:?}"));
        }
        unique.insert(normalized.to_string());
    }
}

/// `warningsForOverlappingVirtualPaths`.
pub(super) fn warnings(volumes: &[Value], warnings: &mut Vec<String>) {
    for volume in volumes {
        let name = field::str_at(volume, "name");
        let sources = [
            ("configMap", "ConfigMap", Some("name")),
            ("secret", "Secret", Some("secretName")),
            ("downwardAPI", "DownwardAPI", None),
        ];
        for (json, label, name_field) in sources {
            let Some(source) = volume.get(json).filter(|s| !s.is_null()) else {
                continue;
            };
            let Some(paths) = item_paths(source) else {
                continue;
            };
            let message = match name_field {
                Some(name_field) => format!(
                    "volume {name:?} ({label} {:?}): overlapping paths",
                    field::str_at(source, name_field)
                ),
                None => format!("volume {name:?} ({label}): overlapping paths"),
            };
            check(&paths, &message, warnings);
        }
        if let Some(projected) = volume.get("projected").filter(|s| !s.is_null()) {
            projected_sources(name, projected, warnings);
        }
    }
}

/// The projected volume's part. As in kube, a source that matches no case
/// (a configMap without items, say) is checked with the previous source's
/// paths and message again.
fn projected_sources(name: &str, projected: &Value, warnings: &mut Vec<String>) {
    let mut source_paths: Vec<String> = Vec::new();
    let mut message = String::new();
    let mut all_paths: BTreeSet<String> = BTreeSet::new();
    for source in field::items_at(projected, "sources") {
        let kinds = [
            "configMap",
            "secret",
            "downwardAPI",
            "serviceAccountToken",
            "clusterTrustBundle",
            "podCertificate",
        ];
        if !kinds.iter().any(|kind| is_set(source.get(kind))) {
            warnings.push(format!(
                "volume {name:?} (Projected) has no sources provided"
            ));
            continue;
        }
        let with_items = |kind: &str| {
            source
                .get(kind)
                .filter(|s| !s.is_null())
                .and_then(|s| item_paths(s).map(|paths| (s, paths)))
        };
        if let Some((config_map, paths)) = with_items("configMap") {
            source_paths = paths;
            message = format!(
                "volume {name:?} (Projected ConfigMap {:?}): overlapping paths",
                field::str_at(config_map, "name")
            );
        } else if let Some((secret, paths)) = with_items("secret") {
            source_paths = paths;
            message = format!(
                "volume {name:?} (Projected Secret {:?}): overlapping paths",
                field::str_at(secret, "name")
            );
        } else if let Some((_, paths)) = with_items("downwardAPI") {
            source_paths = paths;
            message = format!("volume {name:?} (Projected DownwardAPI): overlapping paths");
        } else if let Some(token) = source.get("serviceAccountToken").filter(|s| !s.is_null()) {
            source_paths = vec![field::str_at(token, "path").to_string()];
            message = format!("volume {name:?} (Projected ServiceAccountToken): overlapping paths");
        } else if let Some(bundle) = source.get("clusterTrustBundle").filter(|s| !s.is_null()) {
            source_paths = vec![field::str_at(bundle, "path").to_string()];
            let named = match bundle.get("name").and_then(Value::as_str) {
                Some(bundle_name) => bundle_name,
                None => field::str_at(bundle, "signerName"),
            };
            message = format!(
                "volume {name:?} (Projected ClusterTrustBundle {named:?}): overlapping paths"
            );
        }
        if source_paths.is_empty() {
            continue;
        }
        check(&source_paths, &message, warnings);
        let unique: BTreeSet<String> = source_paths.iter().cloned().collect();
        let mut ordered: Vec<String> = unique.iter().cloned().collect();
        ordered.extend(all_paths.iter().cloned());
        ordered.sort();
        check(&ordered, &message, warnings);
        all_paths.extend(unique);
    }
}
