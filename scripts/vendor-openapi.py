#!/usr/bin/env python3
"""Regenerate crates/server/data/openapi-v1.34-definitions.json.

The file holds the `definitions` section of kube-apiserver 1.34's OpenAPI v2
document (`/openapi/v2`, upstream `api/openapi-spec/swagger.json`): one schema
per Go type, keyed by its OpenAPI name (`io.k8s.api.apps.v1.Deployment`).
ferrokube builds /openapi/v2 and /openapi/v3 from it at run time
(crates/server/src/openapi/).

Source: the `kubernetes-validate` wheel on PyPI ships kube's definitions in
JSON-Schema form (`kubernetes-json-schema/v1.34.0-local/_definitions.json`).
That form differs from kube's swagger in a few mechanical ways, which this
script undoes:

  * `$defs` / `#/$defs/X`           -> `definitions` / `#/definitions/X`
  * `"type": ["string", "null"]`     -> `"type": "string"` (optional fields)
  * `enum: [...]` added on the top-level `apiVersion` / `kind` properties of
    every kind                       -> removed (kube has none there)
  * IntOrString / Quantity as `oneOf` without description
                                     -> kube's v2 shapes, with kube's texts:
       IntOrString {"format": "int-or-string", "type": "string"}
       Quantity    {"type": "string"}

Everything else (description, format, required, properties, items,
additionalProperties and every `x-kubernetes-*` extension) is kept as is.

Usage (python3, stdlib + pip):

    python3 scripts/vendor-openapi.py            # pip download the wheel
    python3 scripts/vendor-openapi.py --from DIR # DIR holds an unpacked wheel
                                                 # (DIR/kubernetes_validate/...)
    python3 scripts/vendor-openapi.py --check    # fail if the file would change

Options: --version (wheel version, default below), --kube (schema folder,
default v1.34.0-local), --out (output path).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile

WHEEL_VERSION = "1.37.0"
KUBE_FOLDER = "v1.34.0-local"
REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_OUT = os.path.join(REPO_ROOT, "crates", "server", "data", "openapi-v1.34-definitions.json")

INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"

# Texts exactly as kube-apiserver serves them (k8s.io/apimachinery
# pkg/util/intstr and pkg/api/resource OpenAPIDefinition comments).
INT_OR_STRING_SCHEMA = {
    "description": "IntOrString is a type that can hold an int32 or a string.  When used in JSON or YAML "
    "marshalling and unmarshalling, it produces or consumes the inner type.  This allows you to have, "
    "for example, a JSON field that can accept a name or number.",
    "format": "int-or-string",
    "type": "string",
}
QUANTITY_SCHEMA = {
    "description": "Quantity is a fixed-point representation of a number. It provides convenient "
    "marshaling/unmarshaling in JSON and YAML, in addition to String() and AsInt64() accessors.\n\n"
    "The serialization format is:\n\n"
    "``` <quantity>        ::= <signedNumber><suffix>\n\n"
    "\t(Note that <suffix> may be empty, from the \"\" case in <decimalSI>.)\n\n"
    "<digit>           ::= 0 | 1 | ... | 9 <digits>          ::= <digit> | <digit><digits> "
    "<number>          ::= <digits> | <digits>.<digits> | <digits>. | .<digits> "
    "<sign>            ::= \"+\" | \"-\" <signedNumber>    ::= <number> | <sign><number> "
    "<suffix>          ::= <binarySI> | <decimalExponent> | <decimalSI> "
    "<binarySI>        ::= Ki | Mi | Gi | Ti | Pi | Ei\n\n"
    "\t(International System of units; See: http://physics.nist.gov/cuu/Units/binary.html)\n\n"
    "<decimalSI>       ::= m | \"\" | k | M | G | T | P | E\n\n"
    "\t(Note that 1024 = 1Ki but 1000 = 1k; I didn't choose the capitalization.)\n\n"
    "<decimalExponent> ::= \"e\" <signedNumber> | \"E\" <signedNumber> ```\n\n"
    "No matter which of the three exponent forms is used, no quantity may represent a number greater "
    "than 2^63-1 in magnitude, nor may it have more than 3 decimal places. Numbers larger or more "
    "precise will be capped or rounded up. (E.g.: 0.1m will rounded up to 1m.) This may be extended "
    "in the future if we require larger or smaller quantities.\n\n"
    "When a Quantity is parsed from a string, it will remember the type of suffix it had, and will "
    "use the same type again when it is serialized.\n\n"
    "Before serializing, Quantity will be put in \"canonical form\". This means that Exponent/suffix "
    "will be adjusted up or down (with a corresponding increase or decrease in Mantissa) such that:\n\n"
    "- No precision is lost - No fractional digits will be emitted - The exponent (or suffix) is as "
    "large as possible.\n\n"
    "The sign will be omitted unless the number is negative.\n\n"
    "Examples:\n\n"
    "- 1.5 will be serialized as \"1500m\" - 1.5Gi will be serialized as \"1536Mi\"\n\n"
    "Note that the quantity will NEVER be internally represented by a floating point number. That is "
    "the whole point of this exercise.\n\n"
    "Non-canonical values will still parse as long as they are well formed, but will be re-emitted "
    "in their canonical form. (So always use canonical form, or don't diff.)\n\n"
    "This format is intended to make it difficult to use these numbers without writing some sort of "
    "special handling code in the hopes that that will cause implementors to also use a fixed point "
    "implementation.",
    "type": "string",
}

SCHEMA_CHILDREN = ("items", "additionalProperties", "not")
SCHEMA_LISTS = ("allOf", "oneOf", "anyOf")


def fetch_wheel(version, workdir):
    """pip download the wheel and unpack it; returns the unpack folder."""
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
         "-d", workdir, f"kubernetes-validate=={version}"],
        check=True,
    )
    wheels = [f for f in os.listdir(workdir) if f.endswith(".whl")]
    if len(wheels) != 1:
        sys.exit(f"expected one wheel in {workdir}, found {wheels}")
    unpacked = os.path.join(workdir, "unpacked")
    with zipfile.ZipFile(os.path.join(workdir, wheels[0])) as zf:
        zf.extractall(unpacked)
    return unpacked


def convert_type(value):
    if isinstance(value, list):
        kept = [t for t in value if t != "null"]
        if len(kept) == 1:
            return kept[0]
        raise ValueError(f"unexpected multi-type {value}")
    return value


def convert_ref(ref):
    prefix = "#/$defs/"
    if not ref.startswith(prefix):
        raise ValueError(f"unexpected $ref {ref}")
    return "#/definitions/" + ref[len(prefix):]


def convert_schema(node):
    """Return a copy of one JSON-Schema node in kube's OpenAPI v2 form."""
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key == "type":
            out[key] = convert_type(value)
        elif key == "$ref":
            out[key] = convert_ref(value)
        elif key == "properties":
            out[key] = {name: convert_schema(sub) for name, sub in value.items()}
        elif key in SCHEMA_CHILDREN:
            out[key] = convert_schema(value) if isinstance(value, dict) else value
        elif key in SCHEMA_LISTS:
            out[key] = [convert_schema(sub) for sub in value]
        else:
            out[key] = value
    return out


def convert_definition(name, schema):
    if name == INT_OR_STRING:
        return dict(INT_OR_STRING_SCHEMA)
    if name == QUANTITY:
        return dict(QUANTITY_SCHEMA)
    out = convert_schema(schema)
    # kubernetes-json-schema pins apiVersion/kind of every kind with an enum; kube has none.
    for prop in ("apiVersion", "kind"):
        sub = out.get("properties", {}).get(prop)
        if isinstance(sub, dict):
            sub.pop("enum", None)
    return out


def check_clean(definitions):
    text = json.dumps(definitions)
    if "#/$defs" in text:
        sys.exit("conversion left a #/$defs reference")
    missing = set()

    def walk(node):
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str):
                target = ref.rsplit("/", 1)[-1]
                if target not in definitions:
                    missing.add(target)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(definitions)
    if missing:
        sys.exit(f"dangling refs: {sorted(missing)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--from", dest="source", help="folder holding an unpacked kubernetes-validate wheel")
    parser.add_argument("--version", default=WHEEL_VERSION, help="kubernetes-validate version to download")
    parser.add_argument("--kube", default=KUBE_FOLDER, help="schema folder inside the wheel")
    parser.add_argument("--out", default=DEFAULT_OUT, help="output file")
    parser.add_argument("--check", action="store_true", help="exit 1 if the output would change")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as workdir:
        root = args.source or fetch_wheel(args.version, workdir)
        src = os.path.join(root, "kubernetes_validate", "kubernetes-json-schema", args.kube, "_definitions.json")
        with open(src, encoding="utf-8") as f:
            source = json.load(f)

    defs = source["$defs"]
    definitions = {name: convert_definition(name, defs[name]) for name in sorted(defs)}
    check_clean(definitions)
    text = json.dumps(definitions, separators=(",", ":"), sort_keys=True, ensure_ascii=False) + "\n"

    if args.check:
        with open(args.out, encoding="utf-8") as f:
            if f.read() != text:
                sys.exit(f"{args.out} is out of date; run scripts/vendor-openapi.py")
        return
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {args.out}: {len(definitions)} definitions, {len(text.encode())} bytes")


if __name__ == "__main__":
    main()
