#!/usr/bin/env python3
"""Regenerate crates/server/data/discovery-v1.34.json.

The file holds what kube-apiserver 1.34 says about its built-in resources in
discovery, for the group-versions it serves by default: group, version, kind,
plural, singular, scope, verbs, short names, categories and subresources
(with the group/version/kind each answers with). ferrokube builds its
resource table from it at start (crates/server/src/registry/builtin.rs);
what discovery does not say (etcd key, name rule, create-on-update,
generation, DELETE answer) is written by hand there, in
crates/server/src/registry/rest_facts.rs.

Source: the discovery snapshots kubernetes/kubernetes keeps under
`api/discovery/`, written by `hack/update-openapi-spec.sh` from a running
kube-apiserver (`--runtime-config=api/all=true`, all feature gates on):

  * `aggregated_v2.json`: `/apis` as `APIGroupDiscoveryList` (every named
    group, in kube's group priority order, versions preferred first);
  * `api__v1.json`: `/api/v1` as `APIResourceList` (the core group, with
    subresources as `<plural>/<sub>` entries).

Filters and rewrites, all mechanical:

  * only GA versions (`v<N>`) are kept: kube-apiserver 1.34 serves exactly
    those by default (every beta API it still serves is off by default, as
    are all alpha APIs; `--runtime-config` is out of scope);
  * groups that keep no version (`internal.apiserver.k8s.io`,
    `storagemigration.k8s.io`) are dropped;
  * a subresource's `responseKind` group/version, empty in aggregated
    discovery when it is the parent's, is written out in full;
  * resources are sorted by plural and subresources by name (kube's
    discovery order; the snapshots already are).

Which snapshot: the copies that could be read when this file was made
predate the v1.34 tag: `aggregated_v2.json` at kubernetes/kubernetes commit
0b1dcaba0a3f1fdcfe5fbb6516d68ffc8e625d81 (1.33 development cycle:
resource.k8s.io tops out at v1beta2, VolumeAttributesClass at v1beta1) and
`api__v1.json` at commit 7c554ea1d91eddac32fcd89f37d7ed0347e1f311. The 1.34
changes to the default-served surface since then are applied below
(`RELEASE_1_34`), each copied from data the snapshot already holds, and each
skipped (with a note) when the input already has it, so running this on a
v1.34 checkout gives the same file. Later snapshots were not used: they add
post-1.34 GA surface (MutatingAdmissionPolicy in admissionregistration/v1,
DeviceTaintRule in resource.k8s.io/v1).

Usage (python3, stdlib only; no network):

    python3 scripts/vendor-discovery.py --from K8S        # a kubernetes checkout
    python3 scripts/vendor-discovery.py --from DIR        # a folder holding the
                                                          # two raw files
    python3 scripts/vendor-discovery.py --from K8S --check  # fail if the file
                                                            # would change

Option: --out (output path).
"""

import argparse
import copy
import json
import os
import re
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO_ROOT, "crates", "server", "data", "discovery-v1.34.json")

GA_VERSION = re.compile(r"^v[0-9]+$")

SOURCE = {
    "kubernetes": "v1.34",
    "upstream": "kubernetes/kubernetes api/discovery/aggregated_v2.json, api/discovery/api__v1.json",
    "generator": "scripts/vendor-discovery.py",
}

# 1.34 changes to what is served by default that the snapshot above predates.
# Each entry copies data the snapshot holds; none is typed by hand except the
# one core subresource, whose shape is the same as pods/ephemeralcontainers'.
RELEASE_1_34 = [
    {
        # KEP-4381 (DRA structured parameters) GA in 1.34: resource.k8s.io/v1
        # serves the four resources of v1beta2 and becomes the preferred version.
        "promote_group_version": ("resource.k8s.io", "v1beta2", "v1"),
    },
    {
        # KEP-3751 (VolumeAttributesClass) GA in 1.34.
        "promote_resource": ("storage.k8s.io", "v1beta1", "v1", "volumeattributesclasses"),
    },
    {
        # KEP-1287 (InPlacePodVerticalScaling): beta and on by default in
        # 1.33 and 1.34, so `pods/resize` is served
        # (pkg/registry/core/rest/storage_core.go); the snapshot lists no
        # pods/resize.
        "core_subresource": {"name": "pods/resize", "kind": "Pod", "verbs": ["get", "patch", "update"]},
    },
]


def find_input(root, name):
    for candidate in (os.path.join(root, "api", "discovery", name), os.path.join(root, name)):
        if os.path.exists(candidate):
            return candidate
    sys.exit(f"vendor-discovery: no {name} under {root} (nor under {root}/api/discovery)")


def load(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def resource_entry(plural, singular, kind, namespaced, verbs, short_names, categories):
    entry = {
        "plural": plural,
        "singular": singular,
        "kind": kind,
        "namespaced": namespaced,
        "verbs": list(verbs),
    }
    if short_names:
        entry["shortNames"] = list(short_names)
    if categories:
        entry["categories"] = list(categories)
    entry["subresources"] = []
    return entry


def subresource_entry(name, group, version, kind, verbs):
    return {"name": name, "group": group, "version": version, "kind": kind, "verbs": list(verbs)}


def from_aggregated(document):
    """Named groups from an `APIGroupDiscoveryList`, GA versions only."""
    groups = []
    for item in document["items"]:
        group = item["metadata"]["name"]
        versions = []
        for version_entry in item["versions"]:
            version = version_entry["version"]
            resources = [aggregated_resource(group, version, raw) for raw in version_entry.get("resources", [])]
            versions.append({"version": version, "resources": resources})
        groups.append({"group": group, "versions": versions})
    return groups


def aggregated_resource(group, version, raw):
    kind = raw["responseKind"]["kind"]
    entry = resource_entry(
        raw["resource"],
        raw["singularResource"],
        kind,
        raw["scope"] == "Namespaced",
        raw["verbs"],
        raw.get("shortNames"),
        raw.get("categories"),
    )
    for sub in raw.get("subresources", []):
        response = sub["responseKind"]
        entry["subresources"].append(
            subresource_entry(
                sub["subresource"],
                response["group"] or group,
                response["version"] or version,
                response["kind"],
                sub["verbs"],
            )
        )
    return entry


def from_resource_list(document, group=""):
    """One group-version from an `APIResourceList` (`/api/v1`)."""
    group_version = document["groupVersion"]
    version = group_version.split("/")[-1]
    resources = {}
    subresources = []
    for raw in document["resources"]:
        if "/" in raw["name"]:
            subresources.append(raw)
            continue
        resources[raw["name"]] = resource_entry(
            raw["name"],
            raw["singularName"],
            raw["kind"],
            raw["namespaced"],
            raw["verbs"],
            raw.get("shortNames"),
            raw.get("categories"),
        )
    for raw in subresources:
        add_core_subresource(resources, group, version, raw)
    return {"version": version, "resources": list(resources.values())}


def add_core_subresource(resources, group, version, raw):
    parent, name = raw["name"].split("/", 1)
    resources[parent]["subresources"].append(
        subresource_entry(name, raw.get("group", group), raw.get("version", version), raw["kind"], raw["verbs"])
    )


def find_group(groups, name):
    return next((group for group in groups if group["group"] == name), None)


def find_version(group, name):
    return next((version for version in group["versions"] if version["version"] == name), None)


def apply_release_delta(groups, notes):
    for change in RELEASE_1_34:
        if "promote_group_version" in change:
            group_name, source, target = change["promote_group_version"]
            group = find_group(groups, group_name)
            if find_version(group, target) is not None:
                notes.append(f"{group_name}/{target} already in the input")
                continue
            promoted = copy.deepcopy(find_version(group, source))
            promoted["version"] = target
            for resource in promoted["resources"]:
                for sub in resource["subresources"]:
                    if sub["group"] == group_name and sub["version"] == source:
                        sub["version"] = target
            group["versions"].insert(0, promoted)
        elif "promote_resource" in change:
            group_name, source, target, plural = change["promote_resource"]
            group = find_group(groups, group_name)
            target_version = find_version(group, target)
            if any(resource["plural"] == plural for resource in target_version["resources"]):
                notes.append(f"{group_name}/{target} {plural} already in the input")
                continue
            resource = copy.deepcopy(
                next(r for r in find_version(group, source)["resources"] if r["plural"] == plural)
            )
            for sub in resource["subresources"]:
                if sub["group"] == group_name and sub["version"] == source:
                    sub["version"] = target
            target_version["resources"].append(resource)
        elif "core_subresource" in change:
            raw = change["core_subresource"]
            core = find_version(find_group(groups, ""), "v1")
            resources = {resource["plural"]: resource for resource in core["resources"]}
            parent, name = raw["name"].split("/", 1)
            if any(sub["name"] == name for sub in resources[parent]["subresources"]):
                notes.append(f"{raw['name']} already in the input")
                continue
            add_core_subresource(resources, "", "v1", raw)


def served_by_default(groups):
    kept = []
    for group in groups:
        versions = [version for version in group["versions"] if GA_VERSION.match(version["version"])]
        if versions:
            kept.append({"group": group["group"], "versions": versions})
    for group in kept:
        for version in group["versions"]:
            version["resources"].sort(key=lambda resource: resource["plural"])
            for resource in version["resources"]:
                resource["subresources"].sort(key=lambda sub: sub["name"])
                if not resource["subresources"]:
                    del resource["subresources"]
    return kept


def render(groups):
    """One resource per line, so a kube upgrade reads as a short diff."""
    compact = {"separators": (",", ":"), "ensure_ascii": True}
    lines = ["{", f'"source":{json.dumps(SOURCE, **compact)},', '"groups":[']
    for group_index, group in enumerate(groups):
        lines.append(f'{{"group":{json.dumps(group["group"])},"versions":[')
        for version_index, version in enumerate(group["versions"]):
            lines.append(f'{{"version":{json.dumps(version["version"])},"resources":[')
            resources = version["resources"]
            for index, resource in enumerate(resources):
                comma = "," if index + 1 < len(resources) else ""
                lines.append(json.dumps(resource, **compact) + comma)
            lines.append("]}" + ("," if version_index + 1 < len(group["versions"]) else ""))
        lines.append("]}" + ("," if group_index + 1 < len(groups) else ""))
    lines.append("]")
    lines.append("}")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", required=True, help="kubernetes checkout, or a folder with the raw files")
    parser.add_argument("--out", default=DEFAULT_OUT)
    parser.add_argument("--check", action="store_true", help="fail if the output file would change")
    args = parser.parse_args()

    core = from_resource_list(load(find_input(args.source, "api__v1.json")))
    groups = [{"group": "", "versions": [core]}] + from_aggregated(load(find_input(args.source, "aggregated_v2.json")))
    notes = []
    apply_release_delta(groups, notes)
    for note in notes:
        print(f"vendor-discovery: 1.34 change skipped, {note}", file=sys.stderr)
    text = render(served_by_default(groups))

    if args.check:
        with open(args.out, encoding="utf-8") as handle:
            if handle.read() != text:
                sys.exit(f"vendor-discovery: {args.out} is out of date; rerun without --check")
        return
    with open(args.out, "w", encoding="utf-8") as handle:
        handle.write(text)
    print(f"vendor-discovery: wrote {args.out}", file=sys.stderr)


if __name__ == "__main__":
    main()
