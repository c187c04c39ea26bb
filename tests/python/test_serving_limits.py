"""The idle timeout with the Python client: urllib3 keeps its HTTP/1.1
connection in a pool; after the server closed it as idle (kube's
IdleTimeout, shortened by ferrokube's hidden --idle-connection-timeout) the
next request goes out on a new connection and succeeds."""

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest
from kubernetes import client, config

from conftest import REPO_ROOT, _start_server, _stop_server


@pytest.fixture(scope="module")
def short_idle_client():
    if os.environ.get("FERROKUBE_TEST_KUBECONFIG"):
        pytest.skip("needs a server started with its own --idle-connection-timeout")
    env_bin = os.environ.get("FERROKUBE_BIN")
    binary = Path(env_bin).resolve() if env_bin else REPO_ROOT / "target" / "debug" / "ferrokube"
    tmp = Path(tempfile.mkdtemp(prefix="ferrokube-pytest-limits-"))
    proc, log, _, kubeconfig = _start_server(binary, tmp, ["--idle-connection-timeout=1s"])
    try:
        api = config.new_client_from_config(config_file=str(kubeconfig))
        yield api
        api.close()
    finally:
        _stop_server(proc)
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)


def pooled_sockets(api):
    """The sockets of the open connections waiting in urllib3's pools.

    Sockets are compared by identity, never by local port: once the server
    has closed a connection, the kernel may hand its port to the next one."""
    pools = api.rest_client.pool_manager.pools
    sockets = []
    for key in pools.keys():
        for conn in list(pools[key].pool.queue):
            if conn is not None and conn.sock is not None:
                sockets.append(conn.sock)
    return sockets


def is_one_of(sock, seen):
    return any(sock is other for other in seen)


def test_pooled_connection_closed_as_idle_is_replaced(short_idle_client):
    core = client.CoreV1Api(short_idle_client)
    first = core.list_namespace()
    assert "default" in [ns.metadata.name for ns in first.items]
    before = pooled_sockets(short_idle_client)
    assert len(before) == 1
    core.read_namespace("default")
    # Back to back, the pooled connection is reused.
    reused = pooled_sockets(short_idle_client)
    assert len(reused) == 1 and reused[0] is before[0]
    # Longer than the idle timeout: the server has closed it by now, and
    # urllib3 opens a new one for the next request.
    time.sleep(3)
    second = core.read_namespace("default")
    assert second.metadata.name == "default"
    after = pooled_sockets(short_idle_client)
    assert len(after) == 1 and not is_one_of(after[0], before)
    time.sleep(3)
    third = core.list_namespace()
    assert "kube-system" in [ns.metadata.name for ns in third.items]
    last = pooled_sockets(short_idle_client)
    assert len(last) == 1 and not is_one_of(last[0], before + after)
