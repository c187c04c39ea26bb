"""Watches through the official Python `kubernetes` client (`watch.Watch().stream`).

Every expectation is what kube-apiserver 1.34 does for the same requests:

- a watch from a list's resourceVersion replays every later change as
  ADDED / MODIFIED / DELETED, each deserialized into a typed `V1ConfigMap`
  equal to what the write returned (a DELETED carries the last state at the
  deletion's resourceVersion);
- a label-selector watch turns an object leaving the selection into DELETED
  and one entering it into ADDED (`cacheWatcher.convertToWatchEvent`);
- resuming from the resourceVersion the client tracked misses nothing and
  repeats nothing;
- `allow_watch_bookmarks=True`: kube's watch cache sends a BOOKMARK 2 s before
  the watch's deadline (`cacheWatcher.nextBookmarkTime`), so a 5 s watch ends
  with exactly one; for `timeout_seconds=2` that moment (the deadline, set by
  the handler before the watcher exists, minus 2 s) is already past when the
  watcher is added, so `nextBookmarkTime` returns false and kube sends none;
- a resourceVersion older than the server's watch history gives an ERROR
  event with a 410 Expired Status, which the client raises as ApiException 410.

About "too old": ferrokube keeps 5 minutes of history starting at the revision
it had when it started, so on the fresh session server even resourceVersion
"1" is still replayable (kube's watch cache starts at the revision of its
initial list, after bootstrap, so "1" is already expired there). The 410 test
therefore restarts a server of its own on the same data dir, which makes the
revisions before the restart older than the history, exactly as they are for
a restarted kube-apiserver's watch cache. Against an external cluster
($FERROKUBE_TEST_KUBECONFIG) it uses "1".
"""

import os
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest
from kubernetes import client, config, watch
from kubernetes.client.exceptions import ApiException

REPO_ROOT = Path(__file__).resolve().parents[2]
ROOT_CA = "kube-root-ca.crt"  # added to every namespace by a real cluster's controller
READY_LINE = re.compile(r"ferrokube serving on (https://\S+) .*KUBECONFIG=(\S+)")


def cm_body(name, labels=None, data=None):
    return client.V1ConfigMap(
        metadata=client.V1ObjectMeta(name=name, labels=labels),
        data=data if data is not None else {"k": "v"},
    )


def rv(obj):
    return int(obj.metadata.resource_version)


def ours(events):
    return [e for e in events if e["type"] == "BOOKMARK" or e["raw_object"]["metadata"]["name"] != ROOT_CA]


def stream_until(w, count, func, *args, **kwargs):
    """Events from `w.stream(func, ...)` until `count` non-bookmark events of ours arrived."""
    events = []
    for e in w.stream(func, *args, **kwargs):
        if e["type"] != "BOOKMARK" and e["raw_object"]["metadata"]["name"] == ROOT_CA:
            continue
        events.append(e)
        if len([x for x in events if x["type"] != "BOOKMARK"]) >= count:
            w.stop()
    return events


def summary(events):
    return [(e["type"], e["raw_object"]["metadata"].get("name"), e["raw_object"]["metadata"]["resourceVersion"]) for e in events]


def same_configmap(got, want, resource_version=None):
    """`got` (typed, from an event) equals `want` (typed, from a write), optionally at another resourceVersion."""
    want = want.to_dict()
    if resource_version is not None:
        want["metadata"]["resource_version"] = str(resource_version)
    assert got.to_dict() == want


# ---------------------------------------------------------------- events


def test_watch_sees_added_modified_deleted_as_typed_objects(core_v1, namespace):
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    written = {}

    def writes():
        written["created"] = core_v1.create_namespaced_config_map(namespace, cm_body("a", {"app": "w"}, {"k": "1"}))
        written["patched"] = core_v1.patch_namespaced_config_map("a", namespace, {"data": {"k": "2"}})
        written["deleted"] = core_v1.delete_namespaced_config_map("a", namespace)

    # The writes run while the watch streams; the watch starts at the list's
    # resourceVersion, so it sees them however the two interleave.
    writer = threading.Thread(target=writes)
    writer.start()
    w = watch.Watch()
    try:
        events = stream_until(
            w, 3, core_v1.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=30
        )
    finally:
        writer.join()
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "DELETED"], summary(events)
    for e in events:
        assert isinstance(e["object"], client.V1ConfigMap), type(e["object"])
        assert e["object"].kind == "ConfigMap" and e["object"].api_version == "v1"
        assert e["raw_object"]["metadata"]["name"] == "a"
    created, patched = written["created"], written["patched"]
    same_configmap(events[0]["object"], created)
    same_configmap(events[1]["object"], patched)
    deleted = events[2]["object"]
    assert rv(deleted) > rv(patched), "DELETED carries the deletion's resourceVersion"
    same_configmap(deleted, patched, resource_version=rv(deleted))
    # DELETE of a configmap answers a Status, not the object.
    assert written["deleted"]["kind"] == "Status", written["deleted"]
    # The client tracks the last resourceVersion it saw.
    assert w.resource_version == deleted.metadata.resource_version


def test_label_selector_watch_turns_selection_changes_into_added_and_deleted(core_v1, namespace):
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    a1 = core_v1.create_namespaced_config_map(namespace, cm_body("a", {"tier": "x"}, {"k": "1"}))
    core_v1.create_namespaced_config_map(namespace, cm_body("other", {"tier": "y"}))
    a2 = core_v1.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"tier": "y"}}})
    core_v1.patch_namespaced_config_map("a", namespace, {"data": {"k": "unseen"}})
    a4 = core_v1.patch_namespaced_config_map("a", namespace, {"metadata": {"labels": {"tier": "x"}}})
    a5 = core_v1.patch_namespaced_config_map("a", namespace, {"data": {"k": "5"}})
    core_v1.delete_namespaced_config_map("a", namespace)
    events = stream_until(
        watch.Watch(),
        5,
        core_v1.list_namespaced_config_map,
        namespace,
        label_selector="tier=x",
        resource_version=start,
        timeout_seconds=30,
    )
    assert [(e["type"], e["object"].metadata.name) for e in events] == [
        ("ADDED", "a"),
        ("DELETED", "a"),
        ("ADDED", "a"),
        ("MODIFIED", "a"),
        ("DELETED", "a"),
    ], summary(events)
    same_configmap(events[0]["object"], a1)
    # Leaving the selection: the last state that matched, at the revision of the change.
    same_configmap(events[1]["object"], a1, resource_version=rv(a2))
    same_configmap(events[2]["object"], a4)
    same_configmap(events[3]["object"], a5)
    assert rv(events[4]["object"]) > rv(a5)
    same_configmap(events[4]["object"], a5, resource_version=rv(events[4]["object"]))


def test_field_selector_watch_sees_only_its_object(core_v1, namespace):
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    core_v1.create_namespaced_config_map(namespace, cm_body("one"))
    two = core_v1.create_namespaced_config_map(namespace, cm_body("two"))
    core_v1.patch_namespaced_config_map("one", namespace, {"data": {"k": "1"}})
    core_v1.delete_namespaced_config_map("two", namespace)
    events = stream_until(
        watch.Watch(),
        2,
        core_v1.list_namespaced_config_map,
        namespace,
        field_selector="metadata.name=two",
        resource_version=start,
        timeout_seconds=30,
    )
    assert [(e["type"], e["object"].metadata.name) for e in events] == [("ADDED", "two"), ("DELETED", "two")]
    same_configmap(events[0]["object"], two)


# ---------------------------------------------------------------- resumption


def test_resuming_from_the_last_resource_version_misses_nothing(core_v1, namespace):
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    written = []
    for i in range(6):
        written.append(core_v1.create_namespaced_config_map(namespace, cm_body(f"c{i}", data={"i": str(i)})))
    for i in range(0, 6, 2):
        written.append(core_v1.patch_namespaced_config_map(f"c{i}", namespace, {"data": {"i": f"{i}-2"}}))
    want = [(o.metadata.name, o.metadata.resource_version) for o in written]

    first = watch.Watch()
    got = stream_until(first, 4, core_v1.list_namespaced_config_map, namespace, resource_version=start, timeout_seconds=30)
    resume_at = first.resource_version
    assert resume_at == got[-1]["object"].metadata.resource_version
    second = watch.Watch()
    rest = stream_until(
        second, len(want) - 4, core_v1.list_namespaced_config_map, namespace, resource_version=resume_at, timeout_seconds=30
    )
    seen = [(e["object"].metadata.name, e["object"].metadata.resource_version) for e in got + rest]
    assert seen == want
    assert [e["type"] for e in got + rest] == ["ADDED"] * 6 + ["MODIFIED"] * 3
    for e, o in zip(got + rest, written):
        same_configmap(e["object"], o)


def test_resource_version_zero_starts_with_the_current_state(core_v1, namespace):
    a = core_v1.create_namespaced_config_map(namespace, cm_body("a"))
    b = core_v1.create_namespaced_config_map(namespace, cm_body("b"))
    events = stream_until(
        watch.Watch(), 2, core_v1.list_namespaced_config_map, namespace, resource_version="0", timeout_seconds=30
    )
    assert sorted((e["type"], e["object"].metadata.name) for e in events) == [("ADDED", "a"), ("ADDED", "b")]
    by_name = {e["object"].metadata.name: e["object"] for e in events}
    same_configmap(by_name["a"], a)
    same_configmap(by_name["b"], b)


# ---------------------------------------------------------------- bookmarks


def bookmark_watch(core_v1, namespace, timeout):
    start = core_v1.list_namespaced_config_map(namespace).metadata.resource_version
    created = core_v1.create_namespaced_config_map(namespace, cm_body("bm"))
    w = watch.Watch()
    began = time.monotonic()
    # With timeout_seconds the client does not retry: the generator ends with the server's stream.
    events = ours(
        list(
            w.stream(
                core_v1.list_namespaced_config_map,
                namespace,
                resource_version=start,
                allow_watch_bookmarks=True,
                timeout_seconds=timeout,
                _request_timeout=timeout + 30,
            )
        )
    )
    elapsed = time.monotonic() - began
    print(f"timeout_seconds={timeout}: {summary(events)} in {elapsed:.1f}s")
    assert events and events[0]["type"] == "ADDED", summary(events)
    same_configmap(events[0]["object"], created)
    assert [e["type"] for e in events[1:]] in ([], ["BOOKMARK"]), summary(events)
    bookmarks = events[1:]
    for b in bookmarks:
        obj = b["raw_object"]
        # The client hands BOOKMARKs over undeserialized (their objects are partial).
        assert b["object"] is obj
        assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1", obj
        assert int(obj["metadata"]["resourceVersion"]) >= rv(created), obj
        assert "name" not in obj["metadata"], obj
        # ... and keeps its resourceVersion for the next request.
        assert w.resource_version == obj["metadata"]["resourceVersion"]
    return bookmarks


def test_no_bookmark_before_a_two_second_timeout(core_v1, namespace):
    # kube: none. cache_watcher.go nextBookmarkTime takes the earlier of the
    # minute heartbeat and deadline − 2 s; the latter is before the watcher is
    # added, so it returns false and the watcher is never given a bookmark.
    bookmarks = bookmark_watch(core_v1, namespace, 2)
    assert bookmarks == [], summary(bookmarks)


def test_bookmark_two_seconds_before_the_deadline(core_v1, namespace):
    # kube sends a bookmark 2 s before the deadline and, that moment passed,
    # none after it: a 5 s watch ends with exactly one.
    bookmarks = bookmark_watch(core_v1, namespace, 5)
    assert len(bookmarks) == 1, summary(bookmarks)


# ---------------------------------------------------------------- 410 Expired


def _start(binary, data_dir, log_path):
    offset = log_path.stat().st_size if log_path.exists() else 0
    log = open(log_path, "ab")
    proc = subprocess.Popen(
        [str(binary), "serve", "--data-dir", str(data_dir), "--secure-port", "0", "--fsync=false"],
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=str(REPO_ROOT),
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        m = READY_LINE.search(log_path.read_bytes()[offset:].decode(errors="replace"))
        if m:
            api = config.new_client_from_config(config_file=m.group(2))
            v1 = client.CoreV1Api(api)
            while time.monotonic() < deadline:
                try:
                    v1.list_namespace(limit=1)
                    return proc, log, api
                except Exception:  # not serving yet
                    time.sleep(0.05)
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    log.close()
    raise RuntimeError(f"ferrokube did not start:\n{log_path.read_text(errors='replace')}")


def _stop(proc, log):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    log.close()


@pytest.fixture
def expired(core_v1, namespace):
    """(CoreV1Api, namespace, too-old resourceVersion, regex of the 410 reason,
    least oldest-revision the reason may name)."""
    external = os.environ.get("FERROKUBE_TEST_KUBECONFIG")
    if external:
        yield core_v1, namespace, "1", re.compile(r"^Expired: too old resource version: 1 \((\d+)\)$"), 2
        return
    env_bin = os.environ.get("FERROKUBE_BIN")
    binary = Path(env_bin).resolve() if env_bin else REPO_ROOT / "target" / "debug" / "ferrokube"
    tmp = Path(tempfile.mkdtemp(prefix="ferrokube-pytest-restart-"))
    data, log_path = tmp / "data", tmp / "server.log"
    proc, log, api = _start(binary, data, log_path)
    try:
        v1 = client.CoreV1Api(api)
        v1.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="old")))
        old = v1.create_namespaced_config_map("old", cm_body("before"))
        last = v1.create_namespaced_config_map("old", cm_body("after"))
        api.close()
        _stop(proc, log)
        # Restarted: the watch history begins at the revision the server starts with.
        proc, log, api = _start(binary, data, log_path)
        v1 = client.CoreV1Api(api)
        reason = re.compile(rf"^Expired: too old resource version: {rv(old)} \((\d+)\)$")
        # The oldest revision the reason names is at least the last one written before the restart.
        yield v1, "old", old.metadata.resource_version, reason, rv(last)
    finally:
        api.close()
        _stop(proc, log)
        shutil.rmtree(tmp, ignore_errors=True)


def test_too_old_resource_version_raises_410(expired):
    v1, ns, too_old, reason, least_oldest = expired
    w = watch.Watch()
    with pytest.raises(ApiException) as info:
        # timeout_seconds: the client raises at the first 410 instead of retrying once.
        for e in w.stream(v1.list_namespaced_config_map, ns, resource_version=too_old, timeout_seconds=10, _request_timeout=30):
            pytest.fail(f"expected a 410 ERROR event first, got {e['type']} {e['raw_object']}")
    assert info.value.status == 410, info.value
    m = reason.match(info.value.reason)
    assert m, info.value.reason
    assert int(m.group(1)) >= least_oldest, info.value.reason


def test_too_old_resource_version_raises_410_after_the_clients_retry(expired):
    v1, ns, too_old, reason, least_oldest = expired
    w = watch.Watch()
    with pytest.raises(ApiException) as info:
        # Without timeout_seconds the client retries once from the same
        # resourceVersion, then raises the second 410.
        for e in w.stream(v1.list_namespaced_config_map, ns, resource_version=too_old, _request_timeout=30):
            pytest.fail(f"expected a 410 ERROR event first, got {e['type']} {e['raw_object']}")
    assert info.value.status == 410, info.value
    m = reason.match(info.value.reason)
    assert m, info.value.reason
    assert int(m.group(1)) >= least_oldest, info.value.reason
