"""`ferrokube serve --ephemeral` as a pytest fixture starts it: a memory
store on a free port, the admin kubeconfig's path as the only line on stdout
once ready, and the server gone (with its temporary directory) when the
process that started it dies. This fixture is the one docs show
(crates/testing/README.md, "Python and shell").
"""

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from kubernetes import client, config

REPO_ROOT = Path(__file__).resolve().parents[2]
EXIT_TIMEOUT_S = 30


def ferrokube_binary() -> Path:
    env_bin = os.environ.get("FERROKUBE_BIN")
    return Path(env_bin).resolve() if env_bin else REPO_ROOT / "target" / "debug" / "ferrokube"


@pytest.fixture(scope="module")
def ephemeral():
    """(api client, kubeconfig path) of an ephemeral ferrokube; stopped after the module."""
    if os.environ.get("FERROKUBE_TEST_KUBECONFIG"):
        pytest.skip("FERROKUBE_TEST_KUBECONFIG names an external cluster; this tests the ferrokube binary")
    proc = subprocess.Popen(
        [str(ferrokube_binary()), "serve", "--ephemeral"],
        stdout=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
    )
    kubeconfig = proc.stdout.readline().strip()
    assert kubeconfig, f"ferrokube exited with {proc.wait()} before printing its kubeconfig"
    api = config.new_client_from_config(config_file=kubeconfig)
    yield api, Path(kubeconfig)
    api.close()
    proc.terminate()
    proc.wait(timeout=EXIT_TIMEOUT_S)


def test_the_printed_kubeconfig_reaches_a_ready_server(ephemeral):
    api, kubeconfig = ephemeral
    assert kubeconfig.is_absolute() and kubeconfig.is_file()
    core = client.CoreV1Api(api)
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="from-python"), data={"k": "v"})
    created = core.create_namespaced_config_map("default", body)
    assert core.read_namespaced_config_map("from-python", "default").data == {"k": "v"}
    assert int(created.metadata.resource_version) > 0
    # Ready means the bootstrap policy is in place (kube's /readyz passes).
    method, url, headers, _, _ = api.param_serialize("GET", "/readyz", auth_settings=["BearerToken"])
    ready = api.call_api(method, url, header_params=headers)
    ready.read()
    assert (ready.status, ready.data) == (200, b"ok")


def _gone(pid: int) -> bool:
    """True once `pid` has exited (a zombie not yet reaped counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def test_the_server_exits_with_its_parent_and_removes_its_directory():
    if os.environ.get("FERROKUBE_TEST_KUBECONFIG"):
        pytest.skip("FERROKUBE_TEST_KUBECONFIG names an external cluster; this tests the ferrokube binary")
    # A parent that starts ferrokube, reports its pid and kubeconfig, then waits.
    parent_code = (
        "import subprocess, sys, time\n"
        f"proc = subprocess.Popen([{str(ferrokube_binary())!r}, 'serve', '--ephemeral'],"
        " stdout=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True)\n"
        "line = proc.stdout.readline().strip()\n"
        "print(proc.pid, line, flush=True)\n"
        "time.sleep(3600)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", parent_code], stdout=subprocess.PIPE, text=True)
    pid_text, kubeconfig = parent.stdout.readline().split()
    pid = int(pid_text)
    data_dir = Path(kubeconfig).parent
    assert data_dir.is_dir() and not _gone(pid)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + EXIT_TIMEOUT_S
    while not _gone(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _gone(pid), "ferrokube outlived its parent"
    assert not data_dir.exists(), f"{data_dir} is removed at exit"
