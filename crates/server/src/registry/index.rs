//! Lookups over the resource table: by URL (group, version, plural), by
//! kind, and the served groups with their versions in preference order.

use std::collections::HashMap;
use std::sync::Arc;

use super::resource::ResourceDef;
use crate::crd::CustomVersion;

/// One served API group and its versions, preferred first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupInfo {
    pub name: &'static str,
    pub versions: Vec<&'static str>,
}

impl GroupInfo {
    pub fn preferred(&self) -> &'static str {
        self.versions.first().copied().unwrap_or("v1")
    }
}

/// One consistent set of served resources: the built-in table plus the
/// custom resources of established CRDs. Immutable; `live.rs` swaps whole
/// snapshots when CRDs change, so a request sees one set from start to end.
pub struct Registry {
    resources: Vec<&'static ResourceDef>,
    by_path: HashMap<(&'static str, &'static str, &'static str), &'static ResourceDef>,
    groups: Vec<GroupInfo>,
    /// What the request path needs of a custom resource beyond its
    /// definition, by (group, version, plural).
    custom: HashMap<(&'static str, &'static str, &'static str), Arc<CustomVersion>>,
}

/// Kube orders versions by priority: GA before beta before alpha, higher numbers first
/// (`version.CompareKubeAwareVersionStrings`).
pub fn version_priority(version: &str) -> (u8, i64, i64) {
    let Some(rest) = version.strip_prefix('v') else {
        return (0, 0, 0);
    };
    let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
    let major = digits.parse::<i64>().unwrap_or(0);
    let tail = &rest[digits.len()..];
    let (stability, minor) = if tail.is_empty() {
        (3, 0)
    } else if let Some(beta) = tail.strip_prefix("beta") {
        (2, beta.parse().unwrap_or(0))
    } else if let Some(alpha) = tail.strip_prefix("alpha") {
        (1, alpha.parse().unwrap_or(0))
    } else {
        (0, 0)
    };
    (stability, major, minor)
}

impl Registry {
    /// The built-in resources only.
    pub fn new(resources: &'static [ResourceDef]) -> Self {
        Self::with_custom(resources, Vec::new())
    }

    /// The built-in resources and, after them, custom resources (in the
    /// order given: `crd/` sorts them by group, then version priority).
    pub fn with_custom(
        builtin: &'static [ResourceDef],
        custom: Vec<(&'static ResourceDef, Arc<CustomVersion>)>,
    ) -> Self {
        let mut resources: Vec<&'static ResourceDef> = builtin.iter().collect();
        let mut custom_info = HashMap::new();
        for (resource, info) in custom {
            let path = (resource.group, resource.version, resource.plural);
            // A built-in resource is never shadowed by a CRD.
            if resources
                .iter()
                .any(|known| (known.group, known.version, known.plural) == path)
            {
                continue;
            }
            resources.push(resource);
            custom_info.insert(path, info);
        }
        let mut by_path = HashMap::new();
        let mut groups: Vec<GroupInfo> = Vec::new();
        for &resource in &resources {
            by_path.insert(
                (resource.group, resource.version, resource.plural),
                resource,
            );
            match groups.iter_mut().find(|group| group.name == resource.group) {
                Some(group) => {
                    if !group.versions.contains(&resource.version) {
                        group.versions.push(resource.version);
                    }
                }
                None => groups.push(GroupInfo {
                    name: resource.group,
                    versions: vec![resource.version],
                }),
            }
        }
        for group in &mut groups {
            group
                .versions
                .sort_by_key(|version| std::cmp::Reverse(version_priority(version)));
        }
        Registry {
            resources,
            by_path,
            groups,
            custom: custom_info,
        }
    }

    /// Every served resource: built-in ones in discovery order, then custom ones.
    pub fn resources(&self) -> &[&'static ResourceDef] {
        &self.resources
    }

    pub fn lookup(&self, group: &str, version: &str, plural: &str) -> Option<&'static ResourceDef> {
        self.by_path.get(&(group, version, plural)).copied()
    }

    /// The custom-resource facts of `resource`, or `None` for a built-in kind.
    pub fn custom(&self, resource: &ResourceDef) -> Option<&Arc<CustomVersion>> {
        self.custom
            .get(&(resource.group, resource.version, resource.plural))
    }

    /// Served groups in table order; the core group `""` included.
    pub fn groups(&self) -> &[GroupInfo] {
        &self.groups
    }

    pub fn group(&self, name: &str) -> Option<&GroupInfo> {
        self.groups.iter().find(|group| group.name == name)
    }

    pub fn serves_version(&self, group: &str, version: &str) -> bool {
        self.group(group)
            .is_some_and(|info| info.versions.contains(&version))
    }

    /// Resources of one group version, in table order.
    pub fn in_group_version<'a>(
        &'a self,
        group: &'a str,
        version: &'a str,
    ) -> impl Iterator<Item = &'static ResourceDef> + 'a {
        self.resources
            .iter()
            .copied()
            .filter(move |resource| resource.group == group && resource.version == version)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_by_kube_priority() {
        let mut versions = vec!["v1beta1", "v1", "v2", "v1alpha1", "v2beta2"];
        versions.sort_by_key(|version| std::cmp::Reverse(version_priority(version)));
        assert_eq!(versions, ["v2", "v1", "v2beta2", "v1beta1", "v1alpha1"]);
    }

    #[test]
    fn looks_up_the_table() {
        let registry = Registry::new(crate::registry::builtin_resources());
        let configmaps = registry
            .lookup("", "v1", "configmaps")
            .expect("configmaps are served");
        assert_eq!(configmaps.kind, "ConfigMap");
        assert!(registry.lookup("", "v1", "nope").is_none());
        assert!(registry.serves_version("apps", "v1"));
        assert_eq!(registry.group("").map(GroupInfo::preferred), Some("v1"));
    }
}
