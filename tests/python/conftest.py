"""Fixtures for running the official Python `kubernetes` client against ferrokube.

A session fixture starts `ferrokube serve` (binary from $FERROKUBE_BIN, default
target/debug/ferrokube under the repo root) on a fresh data dir and yields an
ApiClient built from the admin kubeconfig it writes. If $FERROKUBE_TEST_KUBECONFIG
is set, that kubeconfig is used and no server is started (e.g. to run the same
suite against a real kube-apiserver).
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

import pytest
from kubernetes import client, config
from kubernetes.client.exceptions import ApiException

REPO_ROOT = Path(__file__).resolve().parents[2]
START_TIMEOUT_S = 60
STOP_TIMEOUT_S = 15
READY_LINE = re.compile(r"ferrokube serving on (https://\S+) .*KUBECONFIG=(\S+)")


def _start_server(binary: Path, data_dir: Path, extra_args=()):
    log_path = data_dir / "server.log"
    log = open(log_path, "wb")
    proc = subprocess.Popen(
        [str(binary), "serve", "--data-dir", str(data_dir / "data"), "--secure-port", "0", "--fsync=false",
         # As kind, kubeadm and envtest start kube-apiserver.
         "--allow-privileged=true", *extra_args],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=str(REPO_ROOT),
    )
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        text = log_path.read_text(errors="replace")
        m = READY_LINE.search(text)
        if m:
            return proc, log, log_path, Path(m.group(2))
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    _stop_server(proc)
    log.close()
    raise RuntimeError(
        f"ferrokube did not report readiness within {START_TIMEOUT_S}s "
        f"(exit code {proc.returncode}); output:\n{log_path.read_text(errors='replace')}"
    )


def _stop_server(proc: subprocess.Popen):
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=STOP_TIMEOUT_S)


@pytest.fixture(scope="session")
def api_client():
    external = os.environ.get("FERROKUBE_TEST_KUBECONFIG")
    if external:
        api = config.new_client_from_config(config_file=external)
        yield api
        api.close()
        return

    env_bin = os.environ.get("FERROKUBE_BIN")
    binary = Path(env_bin).resolve() if env_bin else REPO_ROOT / "target" / "debug" / "ferrokube"
    if not binary.exists():
        raise RuntimeError(
            f"ferrokube binary not found at {binary}: run `cargo build -p ferrokube` "
            "or set FERROKUBE_BIN"
        )
    tmp = Path(tempfile.mkdtemp(prefix="ferrokube-pytest-"))
    proc, log, log_path, kubeconfig = _start_server(binary, tmp)
    try:
        api = config.new_client_from_config(config_file=str(kubeconfig))
        yield api
        api.close()
    finally:
        _stop_server(proc)
        log.close()
        code = proc.returncode
        if code not in (0, -signal.SIGTERM):
            print(f"ferrokube exited with {code}; log:\n{log_path.read_text(errors='replace')}")
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def core_v1(api_client):
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps_v1(api_client):
    return client.AppsV1Api(api_client)


@pytest.fixture
def namespace(core_v1):
    """A fresh namespace per test, created through the API."""
    name = f"pytest-{uuid.uuid4().hex[:10]}"
    ns = core_v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
    assert ns.metadata.name == name
    yield name
    # Best effort: a real cluster keeps it Terminating until its controller finishes.
    try:
        core_v1.delete_namespace(name)
    except ApiException:
        pass
