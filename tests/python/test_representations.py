"""Alternate representations with the official Python `kubernetes` client:
gzip of large responses (kube's 128 KiB threshold), YAML and CBOR bodies,
PartialObjectMetadataList. Expectations are kube-apiserver 1.34's answers.
"""

import gzip
import json
import uuid

from kubernetes import client

GZIP_THRESHOLD = 128 * 1024


def raw_get(api_client, path, headers):
    """GET `path` with the admin credentials; the client's RESTResponse, body
    not read yet (its `.response` is the urllib3 response)."""
    method, url, header_params, body, post_params = api_client.param_serialize(
        "GET", path, header_params=dict(headers), auth_settings=["BearerToken"]
    )
    return api_client.call_api(method, url, header_params=header_params)


def fill_namespace(core_v1, namespace, count, size):
    for i in range(count):
        core_v1.create_namespaced_config_map(
            namespace,
            client.V1ConfigMap(
                metadata=client.V1ObjectMeta(name=f"big-{i}"),
                data={"blob": "x" * size},
            ),
        )


def test_large_list_is_gzipped_small_one_is_not(api_client, core_v1, namespace):
    fill_namespace(core_v1, namespace, 40, 4096)
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    resp = raw_get(api_client, path, {"Accept": "application/json", "Accept-Encoding": "gzip"})
    assert resp.status == 200
    assert resp.headers.get("Content-Encoding") == "gzip"
    raw = resp.response.read(decode_content=False)
    assert len(raw) < GZIP_THRESHOLD
    body = json.loads(gzip.decompress(raw))
    assert body["kind"] == "ConfigMapList"
    # (every namespace also holds the kube-root-ca.crt config map)
    assert len([i for i in body["items"] if i["metadata"]["name"].startswith("big-")]) == 40
    assert len(json.dumps(body)) >= GZIP_THRESHOLD

    # Without Accept-Encoding the same list comes uncompressed.
    plain = raw_get(api_client, path, {"Accept": "application/json"})
    assert plain.headers.get("Content-Encoding") is None
    assert json.loads(plain.read())["kind"] == "ConfigMapList"

    # Below the threshold nothing is compressed even when gzip is accepted.
    small = raw_get(
        api_client, f"{path}/big-0", {"Accept": "application/json", "Accept-Encoding": "gzip"}
    )
    assert small.headers.get("Content-Encoding") is None
    assert json.loads(small.read())["metadata"]["name"] == "big-0"


def test_typed_client_reads_a_gzipped_list(api_client, core_v1, namespace):
    fill_namespace(core_v1, namespace, 40, 4096)
    resp = raw_get(
        api_client,
        f"/api/v1/namespaces/{namespace}/configmaps",
        {"Accept": "application/json", "Accept-Encoding": "gzip"},
    )
    assert resp.headers.get("Content-Encoding") == "gzip"
    resp.read()  # urllib3 inflates it, as the generated API methods read bodies
    typed = api_client.response_deserialize(resp, {"200": "V1ConfigMapList"}).data
    names = {item.metadata.name for item in typed.items}
    assert {f"big-{i}" for i in range(40)} <= names


def test_yaml_and_metadata_only(api_client, core_v1, namespace):
    name = f"cm-{uuid.uuid4().hex[:6]}"
    core_v1.create_namespaced_config_map(
        namespace, client.V1ConfigMap(metadata=client.V1ObjectMeta(name=name), data={"k": "v"})
    )
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    text = raw_get(api_client, f"{path}/{name}", {"Accept": "application/yaml"})
    assert text.headers.get("Content-Type") == "application/yaml"
    body = text.read().decode()
    assert body.startswith("apiVersion: v1\n")
    assert "\nkind: ConfigMap\n" in body
    assert "data:\n  k: v\n" in body

    meta = raw_get(
        api_client,
        path,
        {"Accept": "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"},
    )
    listed = json.loads(meta.read())
    assert listed["kind"] == "PartialObjectMetadataList"
    assert listed["apiVersion"] == "meta.k8s.io/v1"
    items = [item for item in listed["items"] if item["metadata"]["name"] == name]
    assert len(items) == 1
    assert items[0]["kind"] == "PartialObjectMetadata"
    assert "data" not in items[0]


def test_not_acceptable(api_client, namespace):
    resp = raw_get(api_client, f"/api/v1/namespaces/{namespace}/configmaps", {"Accept": "text/html"})
    assert resp.status == 406
    status = json.loads(resp.read())
    assert status["reason"] == "NotAcceptable"
    assert status["message"] == (
        "only the following media types are accepted: application/json, application/yaml, "
        "application/vnd.kubernetes.protobuf, application/cbor"
    )
