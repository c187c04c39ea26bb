//! Checks over the built-in resource table (`builtin.rs`): its shape
//! (order, naming, verbs, subresources) and spot checks of the facts
//! against upstream.

use super::builtin_resources;
use super::resource::{NameRule, ResourceDef};
use std::collections::{BTreeMap, BTreeSet, HashSet};

/// `create`, `get`/`patch`/`update` and proxy verb lists, as discovery has them.
const CREATE_ONLY: &[&str] = &["create"];
const STATUS_VERBS: &[&str] = &["get", "patch", "update"];
const PROXY_VERBS: &[&str] = &["create", "delete", "get", "patch", "update"];

fn resources() -> &'static [ResourceDef] {
    builtin_resources()
}

/// Every verb kube uses in discovery, in discovery order.
const KNOWN_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

fn find(group: &str, version: &str, plural: &str) -> &'static ResourceDef {
    resources()
        .iter()
        .find(|r| r.group == group && r.version == version && r.plural == plural)
        .unwrap_or_else(|| panic!("missing {group}/{version} {plural}"))
}

fn gvr(r: &ResourceDef) -> String {
    format!("{}/{} {}", r.api_version(), r.kind, r.plural)
}

fn assert_verbs_well_formed(what: &str, verbs: &[&str]) {
    assert!(!verbs.is_empty(), "{what}: empty verb list");
    for verb in verbs {
        assert!(KNOWN_VERBS.contains(verb), "{what}: unknown verb {verb:?}");
    }
    let mut sorted = verbs.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted, verbs, "{what}: verbs must be sorted and unique");
}

fn is_lower_dns_label(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
}

#[test]
fn total_count() {
    // 17 core + 49 in named groups; see `count_per_group_version`.
    assert_eq!(resources().len(), 66);
}

#[test]
fn count_per_group_version() {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    for r in resources() {
        *counts.entry(r.api_version()).or_default() += 1;
    }
    let expected: BTreeMap<String, usize> = [
        ("v1", 17),
        ("admissionregistration.k8s.io/v1", 4),
        ("apiextensions.k8s.io/v1", 1),
        ("apiregistration.k8s.io/v1", 1),
        ("apps/v1", 5),
        ("authentication.k8s.io/v1", 2),
        ("authorization.k8s.io/v1", 4),
        ("autoscaling/v1", 1),
        ("autoscaling/v2", 1),
        ("batch/v1", 2),
        ("certificates.k8s.io/v1", 1),
        ("coordination.k8s.io/v1", 1),
        ("discovery.k8s.io/v1", 1),
        ("events.k8s.io/v1", 1),
        ("flowcontrol.apiserver.k8s.io/v1", 2),
        ("networking.k8s.io/v1", 5),
        ("node.k8s.io/v1", 1),
        ("policy/v1", 1),
        ("rbac.authorization.k8s.io/v1", 4),
        ("resource.k8s.io/v1", 4),
        ("scheduling.k8s.io/v1", 1),
        ("storage.k8s.io/v1", 6),
    ]
    .into_iter()
    .map(|(gv, n)| (gv.to_string(), n))
    .collect();
    assert_eq!(counts, expected);
}

#[test]
fn only_ga_versions() {
    for r in resources() {
        assert!(
            r.version == "v1" || r.version == "v2",
            "{}: alpha/beta versions are off by default",
            gvr(r)
        );
    }
}

#[test]
fn no_duplicate_group_version_plural() {
    let mut seen = HashSet::new();
    for r in resources() {
        assert!(
            seen.insert((r.group, r.version, r.plural)),
            "duplicate {}",
            gvr(r)
        );
    }
}

#[test]
fn no_duplicate_kind_or_short_name_within_group_version() {
    let mut kinds = HashSet::new();
    let mut shorts = HashSet::new();
    for r in resources() {
        assert!(
            kinds.insert((r.group, r.version, r.kind)),
            "duplicate kind {}",
            gvr(r)
        );
        for s in r.short_names {
            assert!(
                shorts.insert((r.group, r.version, *s)),
                "duplicate short name {s} in {}",
                r.api_version()
            );
        }
    }
}

#[test]
fn group_versions_are_contiguous_and_plurals_sorted_within() {
    let mut finished: HashSet<(&str, &str)> = HashSet::new();
    let mut current: Option<(&str, &str)> = None;
    let mut last_plural = "";
    for r in resources() {
        let gv = (r.group, r.version);
        if current != Some(gv) {
            if let Some(prev) = current {
                finished.insert(prev);
            }
            assert!(
                !finished.contains(&gv),
                "{} is split in two blocks",
                r.api_version()
            );
            current = Some(gv);
            last_plural = "";
        }
        assert!(
            r.plural > last_plural,
            "{}: plurals must be sorted within a group-version",
            gvr(r)
        );
        last_plural = r.plural;
    }
    // The legacy core group comes first.
    assert_eq!(resources()[0].group, "");
}

#[test]
fn names_are_lowercase() {
    for r in resources() {
        assert!(is_lower_dns_label(r.plural), "{}: plural", gvr(r));
        assert!(is_lower_dns_label(r.singular), "{}: singular", gvr(r));
        for s in r.short_names {
            assert!(is_lower_dns_label(s), "{}: short name {s:?}", gvr(r));
        }
        for c in r.categories {
            assert!(is_lower_dns_label(c), "{}: category {c:?}", gvr(r));
        }
        for sub in r.subresources {
            assert!(
                is_lower_dns_label(sub.name),
                "{}: subresource {:?}",
                gvr(r),
                sub.name
            );
        }
    }
}

#[test]
fn singular_is_lowercased_kind() {
    for r in resources() {
        assert_eq!(r.singular, r.kind.to_ascii_lowercase(), "{}", gvr(r));
    }
}

#[test]
fn kinds_are_upper_camel_case() {
    for r in resources() {
        let first = r.kind.chars().next().unwrap();
        assert!(first.is_ascii_uppercase(), "{}", gvr(r));
        assert!(
            r.kind.chars().all(|c| c.is_ascii_alphanumeric()),
            "{}",
            gvr(r)
        );
        for sub in r.subresources {
            assert!(
                sub.kind.starts_with(|c: char| c.is_ascii_uppercase()),
                "{}",
                gvr(r)
            );
        }
    }
}

#[test]
fn every_verb_list_is_sorted_and_known() {
    for r in resources() {
        assert_verbs_well_formed(&gvr(r), r.verbs);
        for sub in r.subresources {
            assert_verbs_well_formed(&format!("{}/{}", gvr(r), sub.name), sub.verbs);
        }
    }
}

#[test]
fn subresources_sorted_and_unique() {
    for r in resources() {
        let names: Vec<&str> = r.subresources.iter().map(|s| s.name).collect();
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(
            names,
            sorted,
            "{}: subresources must be sorted and unique",
            gvr(r)
        );
    }
}

#[test]
fn status_subresources_answer_the_parent_kind() {
    let mut with_status = 0;
    for r in resources() {
        if let Some(st) = r.subresource("status") {
            with_status += 1;
            assert_eq!(st.kind, r.kind, "{}", gvr(r));
            assert_eq!(st.group, r.group, "{}", gvr(r));
            assert_eq!(st.version, r.version, "{}", gvr(r));
            assert_eq!(st.verbs, STATUS_VERBS, "{}", gvr(r));
            // A status subresource only exists on stored, watchable kinds.
            assert!(!r.storage.is_empty(), "{}", gvr(r));
            assert!(r.has_verb("watch"), "{}", gvr(r));
        }
    }
    assert_eq!(with_status, 27);
}

#[test]
fn scale_subresources_answer_autoscaling_v1_scale() {
    let mut scalable = Vec::new();
    for r in resources() {
        if let Some(sc) = r.subresource("scale") {
            assert_eq!(
                (sc.group, sc.version, sc.kind),
                ("autoscaling", "v1", "Scale")
            );
            assert_eq!(sc.verbs, STATUS_VERBS);
            scalable.push(r.plural);
        }
    }
    scalable.sort_unstable();
    assert_eq!(
        scalable,
        [
            "deployments",
            "replicasets",
            "replicationcontrollers",
            "statefulsets"
        ]
    );
}

#[test]
fn storage_matches_persistence() {
    for r in resources() {
        if r.storage.is_empty() {
            // Virtual resources: reviews, bindings, componentstatuses.
            assert!(!r.has_verb("watch"), "{}", gvr(r));
            assert!(!r.has_verb("update"), "{}", gvr(r));
            assert!(!r.create_on_update && !r.has_generation, "{}", gvr(r));
            assert!(r.subresources.is_empty(), "{}", gvr(r));
        } else {
            assert!(r.has_verb("watch") && r.has_verb("list"), "{}", gvr(r));
            assert!(
                !r.storage.starts_with('/') && !r.storage.ends_with('/'),
                "{}",
                gvr(r)
            );
        }
    }
    let virtual_count = resources().iter().filter(|r| r.storage.is_empty()).count();
    assert_eq!(virtual_count, 8);
}

#[test]
fn shared_storage_means_same_kind() {
    let mut by_key: BTreeMap<&str, BTreeSet<(&str, &str)>> = BTreeMap::new();
    for r in resources().iter().filter(|r| !r.storage.is_empty()) {
        by_key
            .entry(r.storage)
            .or_default()
            .insert((r.kind, r.plural));
    }
    for (key, kinds) in &by_key {
        assert_eq!(
            kinds.len(),
            1,
            "storage key {key} shared by different kinds: {kinds:?}"
        );
    }
    // Exactly two keys are served by more than one group-version.
    let shared: Vec<&str> = by_key
        .keys()
        .copied()
        .filter(|k| resources().iter().filter(|r| r.storage == *k).count() > 1)
        .collect();
    assert_eq!(shared, ["events", "horizontalpodautoscalers"]);
}

#[test]
fn create_only_virtual_resources() {
    for (group, plural) in [
        ("", "bindings"),
        ("authentication.k8s.io", "selfsubjectreviews"),
        ("authentication.k8s.io", "tokenreviews"),
        ("authorization.k8s.io", "localsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectaccessreviews"),
        ("authorization.k8s.io", "selfsubjectrulesreviews"),
        ("authorization.k8s.io", "subjectaccessreviews"),
    ] {
        let r = find(group, "v1", plural);
        assert_eq!(r.verbs, CREATE_ONLY, "{}", gvr(r));
        assert_eq!(r.storage, "", "{}", gvr(r));
    }
    let cs = find("", "v1", "componentstatuses");
    assert_eq!(cs.verbs, ["get", "list"]);
    assert_eq!(cs.short_names, ["cs"]);
    assert!(!cs.namespaced);
    assert!(find("authorization.k8s.io", "v1", "localsubjectaccessreviews").namespaced);
}

#[test]
fn create_on_update_set() {
    let mut got: Vec<String> = resources()
        .iter()
        .filter(|r| r.create_on_update)
        .map(|r| format!("{}:{}", r.api_version(), r.plural))
        .collect();
    got.sort_unstable();
    assert_eq!(
        got,
        [
            "coordination.k8s.io/v1:leases",
            "events.k8s.io/v1:events",
            "node.k8s.io/v1:runtimeclasses",
            "rbac.authorization.k8s.io/v1:clusterrolebindings",
            "rbac.authorization.k8s.io/v1:clusterroles",
            "rbac.authorization.k8s.io/v1:rolebindings",
            "rbac.authorization.k8s.io/v1:roles",
            "v1:endpoints",
            "v1:events",
            "v1:limitranges",
            "v1:services",
        ]
    );
}

#[test]
fn spot_check_core() {
    let pods = find("", "v1", "pods");
    assert_eq!(pods.kind, "Pod");
    assert_eq!(pods.short_names, ["po"]);
    assert_eq!(pods.categories, ["all"]);
    assert!(pods.namespaced);
    assert_eq!(pods.storage, "pods");
    let sub_names: Vec<&str> = pods.subresources.iter().map(|s| s.name).collect();
    assert_eq!(
        sub_names,
        [
            "attach",
            "binding",
            "ephemeralcontainers",
            "eviction",
            "exec",
            "log",
            "portforward",
            "proxy",
            "resize",
            "status"
        ]
    );
    assert_eq!(pods.subresource("log").unwrap().verbs, ["get"]);
    let eviction = pods.subresource("eviction").unwrap();
    assert_eq!(
        (eviction.group, eviction.version, eviction.kind),
        ("policy", "v1", "Eviction")
    );
    assert_eq!(eviction.verbs, ["create"]);
    let binding = pods.subresource("binding").unwrap();
    assert_eq!(
        (binding.group, binding.version, binding.kind),
        ("", "v1", "Binding")
    );
    assert_eq!(pods.subresource("exec").unwrap().kind, "PodExecOptions");
    assert_eq!(pods.subresource("exec").unwrap().verbs, ["create", "get"]);
    assert_eq!(pods.subresource("proxy").unwrap().verbs, PROXY_VERBS);

    let services = find("", "v1", "services");
    assert_eq!(services.storage, "services/specs");
    assert_eq!(services.short_names, ["svc"]);
    assert_eq!(services.categories, ["all"]);
    assert_eq!(services.name_rule, NameRule::Dns1035Label);
    assert!(services.create_on_update);

    assert_eq!(find("", "v1", "endpoints").storage, "services/endpoints");
    assert_eq!(find("", "v1", "endpoints").singular, "endpoints");

    let nodes = find("", "v1", "nodes");
    assert_eq!(nodes.storage, "minions");
    assert!(!nodes.namespaced);
    assert_eq!(nodes.subresource("proxy").unwrap().kind, "NodeProxyOptions");

    let ns = find("", "v1", "namespaces");
    assert!(!ns.namespaced);
    assert_eq!(ns.name_rule, NameRule::Dns1123Label);
    assert!(!ns.has_verb("deletecollection"));
    assert_eq!(ns.subresource("finalize").unwrap().verbs, ["update"]);

    let rc = find("", "v1", "replicationcontrollers");
    assert_eq!(rc.storage, "controllers");
    assert!(rc.has_generation);

    let token = find("", "v1", "serviceaccounts")
        .subresource("token")
        .unwrap();
    assert_eq!(
        (token.group, token.version, token.kind, token.verbs),
        ("authentication.k8s.io", "v1", "TokenRequest", CREATE_ONLY)
    );

    assert_eq!(find("", "v1", "configmaps").short_names, ["cm"]);
    assert_eq!(find("", "v1", "limitranges").short_names, ["limits"]);
    assert_eq!(find("", "v1", "resourcequotas").short_names, ["quota"]);
}

#[test]
fn spot_check_named_groups() {
    let deploy = find("apps", "v1", "deployments");
    assert_eq!(deploy.short_names, ["deploy"]);
    assert_eq!(deploy.categories, ["all"]);
    assert!(deploy.has_generation);
    assert_eq!(deploy.list_kind(), "DeploymentList");

    assert_eq!(
        find("apps", "v1", "statefulsets").name_rule,
        NameRule::Dns1123Label
    );

    let cj = find("batch", "v1", "cronjobs");
    assert_eq!(cj.short_names, ["cj"]);
    assert_eq!(cj.categories, ["all"]);

    let crd = find("apiextensions.k8s.io", "v1", "customresourcedefinitions");
    assert_eq!(crd.short_names, ["crd", "crds"]);
    assert_eq!(crd.categories, ["api-extensions"]);
    assert_eq!(
        crd.storage,
        "apiextensions.k8s.io/customresourcedefinitions"
    );
    assert!(!crd.namespaced);
    assert!(crd.has_generation);

    let apisvc = find("apiregistration.k8s.io", "v1", "apiservices");
    assert_eq!(apisvc.storage, "apiregistration.k8s.io/apiservices");
    assert_eq!(apisvc.categories, ["api-extensions"]);

    let ing = find("networking.k8s.io", "v1", "ingresses");
    assert_eq!(ing.storage, "ingress");
    assert_eq!(ing.short_names, ["ing"]);

    let hpa1 = find("autoscaling", "v1", "horizontalpodautoscalers");
    let hpa2 = find("autoscaling", "v2", "horizontalpodautoscalers");
    assert_eq!(hpa1.storage, hpa2.storage);
    assert_eq!(hpa2.subresource("status").unwrap().version, "v2");

    let ev = find("events.k8s.io", "v1", "events");
    assert_eq!(ev.storage, find("", "v1", "events").storage);
    assert_eq!(ev.short_names, ["ev"]);

    for plural in [
        "roles",
        "rolebindings",
        "clusterroles",
        "clusterrolebindings",
    ] {
        let r = find("rbac.authorization.k8s.io", "v1", plural);
        assert_eq!(r.name_rule, NameRule::PathSegment, "{plural}");
        assert!(r.create_on_update, "{plural}");
    }
    assert!(find("rbac.authorization.k8s.io", "v1", "roles").namespaced);
    assert!(!find("rbac.authorization.k8s.io", "v1", "clusterroles").namespaced);

    let vac = find("storage.k8s.io", "v1", "volumeattributesclasses");
    assert_eq!(vac.short_names, ["vac"]);
    assert!(!vac.namespaced);

    let csr = find("certificates.k8s.io", "v1", "certificatesigningrequests");
    assert_eq!(csr.short_names, ["csr"]);
    assert!(csr.subresource("approval").is_some());

    let claims = find("resource.k8s.io", "v1", "resourceclaims");
    assert!(claims.namespaced);
    assert!(claims.subresource("status").is_some());
    assert!(!find("resource.k8s.io", "v1", "resourceslices").namespaced);

    assert_eq!(
        find("networking.k8s.io", "v1", "ipaddresses").short_names,
        ["ip"]
    );
    assert_eq!(
        find("networking.k8s.io", "v1", "networkpolicies").short_names,
        ["netpol"]
    );
    assert_eq!(
        find("policy", "v1", "poddisruptionbudgets").short_names,
        ["pdb"]
    );
    assert_eq!(
        find("scheduling.k8s.io", "v1", "priorityclasses").short_names,
        ["pc"]
    );
    assert_eq!(
        find("storage.k8s.io", "v1", "storageclasses").short_names,
        ["sc"]
    );
}

/// `ReturnDeletedObject: true` upstream (plus CRDs' custom `REST.Delete`):
/// DELETE answers the object. Everything else answers a `Status`.
#[test]
fn returns_deleted_object_matches_upstream_registries() {
    let mut returning: Vec<String> = resources()
        .iter()
        .filter(|r| r.returns_deleted_object)
        .map(|r| format!("{}/{}", r.group, r.plural))
        .collect();
    returning.sort_unstable();
    assert_eq!(
        returning,
        [
            "/namespaces",
            "/persistentvolumeclaims",
            "/persistentvolumes",
            "/pods",
            "/podtemplates",
            "/resourcequotas",
            "/serviceaccounts",
            "/services",
            "apiextensions.k8s.io/customresourcedefinitions",
            "resource.k8s.io/deviceclasses",
            "resource.k8s.io/resourceclaims",
            "resource.k8s.io/resourceclaimtemplates",
            "resource.k8s.io/resourceslices",
            "storage.k8s.io/csidrivers",
            "storage.k8s.io/csinodes",
            "storage.k8s.io/storageclasses",
            "storage.k8s.io/volumeattachments",
            "storage.k8s.io/volumeattributesclasses",
        ]
    );

    for (group, plural) in [
        ("", "pods"),
        ("", "serviceaccounts"),
        ("storage.k8s.io", "storageclasses"),
        ("", "services"),
        ("", "namespaces"),
    ] {
        assert!(
            find(group, "v1", plural).returns_deleted_object,
            "{group}/{plural}"
        );
    }
    for (group, plural) in [
        ("", "configmaps"),
        ("", "secrets"),
        ("", "nodes"),
        ("", "events"),
        ("events.k8s.io", "events"),
        ("apps", "deployments"),
        ("batch", "jobs"),
        ("rbac.authorization.k8s.io", "roles"),
        ("scheduling.k8s.io", "priorityclasses"),
        ("storage.k8s.io", "csistoragecapacities"),
        ("networking.k8s.io", "ipaddresses"),
        ("apiregistration.k8s.io", "apiservices"),
    ] {
        assert!(
            !find(group, "v1", plural).returns_deleted_object,
            "{group}/{plural}"
        );
    }
    // Both autoscaling versions share one store.
    assert!(!find("autoscaling", "v1", "horizontalpodautoscalers").returns_deleted_object);
    assert!(!find("autoscaling", "v2", "horizontalpodautoscalers").returns_deleted_object);
    // Kinds without DELETE never claim to answer with an object.
    for r in resources().iter().filter(|r| !r.has_verb("delete")) {
        assert!(!r.returns_deleted_object, "{}", gvr(r));
    }
}

#[test]
fn categories_are_all_or_api_extensions() {
    let mut all = Vec::new();
    for r in resources() {
        for c in r.categories {
            match *c {
                "all" => all.push(r.plural),
                "api-extensions" => {
                    assert!(!r.namespaced, "{}", gvr(r));
                }
                other => panic!("{}: unexpected category {other}", gvr(r)),
            }
        }
    }
    all.sort_unstable();
    assert_eq!(
        all,
        [
            "cronjobs",
            "daemonsets",
            "deployments",
            "horizontalpodautoscalers",
            "horizontalpodautoscalers",
            "jobs",
            "pods",
            "replicasets",
            "replicationcontrollers",
            "services",
            "statefulsets",
        ]
    );
}
