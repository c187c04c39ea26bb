#!/usr/bin/env bash
# Runs every ferrokube test suite. Installs what a fresh machine lacks.
#
# Needs: a Rust toolchain (cargo), python3 with pip, and the kubectl
# binaries kubectl.1.33 and kubectl.1.27 in the folder of the installed
# kubectl (`readlink -f $(which kubectl)`), or in $FERROKUBE_KUBECTL_DIR.
# Installs: the Python `kubernetes` client and pytest (tests/python/requirements.txt).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

step "checking real clients"
kubectl_dir="${FERROKUBE_KUBECTL_DIR:-}"
if [ -z "$kubectl_dir" ] && command -v kubectl >/dev/null 2>&1; then
  kubectl_dir="$(dirname "$(readlink -f "$(command -v kubectl)")")"
fi
for version in 1.33 1.27; do
  if [ ! -x "$kubectl_dir/kubectl.$version" ]; then
    echo "missing kubectl.$version: the black-box tests run kubectl 1.33 and 1.27." >&2
    echo "Put kubectl.1.33 and kubectl.1.27 beside the installed kubectl, or set FERROKUBE_KUBECTL_DIR." >&2
    exit 1
  fi
done
export FERROKUBE_KUBECTL_DIR="$kubectl_dir"
echo "kubectl binaries in $kubectl_dir"

step "installing the Python client (tests/python/requirements.txt)"
python3 -m pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt

step "building"
cargo build --workspace --all-targets --locked

step "Rust suites: unit, storage conformance, handlers, kube-rs, kubectl, restart, bad input, bench smoke"
cargo test --workspace --locked -- --test-threads=4

step "Python client suite"
FERROKUBE_BIN="$PWD/target/debug/ferrokube" python3 -m pytest -q tests/python
