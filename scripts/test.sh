#!/usr/bin/env bash
# Runs every ferrokube test suite. Installs what a fresh machine lacks.
#
# Needs: a Rust toolchain (cargo), python3 with pip, and the kubectl
# binaries kubectl.1.33 and kubectl.1.27 in the folder of the installed
# kubectl (`readlink -f $(which kubectl)`), or in $FERROKUBE_KUBECTL_DIR.
# Installs: the Python `kubernetes` client and pytest (tests/python/requirements.txt),
# and Debian's etcd-server when no `etcd` is found (as root; otherwise it says so and stops).
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

step "checking etcd (etcd backend conformance, replica and fault tests)"
# The tests start etcd themselves on loopback; they need Debian's etcd-server.
if [ -z "${FERROKUBE_ETCD:-}" ] && ! command -v etcd >/dev/null 2>&1 && [ ! -x /usr/bin/etcd ]; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "etcd not found: installing Debian's etcd-server"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq etcd-server >/dev/null
  else
    echo "missing etcd: install Debian's etcd-server (sudo apt-get install etcd-server)," >&2
    echo "or set FERROKUBE_ETCD=/path/to/etcd. This script installs it itself only as root." >&2
    exit 1
  fi
fi
echo "etcd: $(command -v etcd || echo "${FERROKUBE_ETCD:-/usr/bin/etcd}")"

step "building"
cargo build --workspace --all-targets --locked

step "Rust suites: unit, storage conformance, handlers, kube-rs, kubectl, restart, bad input, bench smoke"
cargo test --workspace --locked -- --test-threads=4

step "Python client suite"
FERROKUBE_BIN="$PWD/target/debug/ferrokube" python3 -m pytest -q tests/python
