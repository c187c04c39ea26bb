use super::yaml_text::yaml;
use super::*;

use serde_json::json;

// -- a minimal independent reader, to walk what the encoder wrote --------

#[derive(Debug, Clone, PartialEq)]
enum Field<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
}

fn read_varint(buf: &[u8], pos: &mut usize) -> u64 {
    let mut value = 0u64;
    let mut shift = 0;
    loop {
        let byte = buf[*pos];
        *pos += 1;
        value |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return value;
        }
        shift += 7;
    }
}

/// Every (tag, field) of one message; panics on malformed input.
fn fields(buf: &[u8]) -> Vec<(u32, Field<'_>)> {
    let mut pos = 0;
    let mut out = Vec::new();
    while pos < buf.len() {
        let key = read_varint(buf, &mut pos);
        let tag = u32::try_from(key >> 3).expect("tag");
        let field = match key & 7 {
            0 => Field::Varint(read_varint(buf, &mut pos)),
            1 => {
                let bytes: [u8; 8] = buf[pos..pos + 8].try_into().expect("fixed64");
                pos += 8;
                Field::Fixed64(u64::from_le_bytes(bytes))
            }
            2 => {
                let len = usize::try_from(read_varint(buf, &mut pos)).expect("len");
                let bytes = &buf[pos..pos + len];
                pos += len;
                Field::Bytes(bytes)
            }
            other => panic!("unexpected wire type {other}"),
        };
        assert!(tag > 0, "tag 0");
        out.push((tag, field));
    }
    assert_eq!(pos, buf.len(), "trailing bytes");
    out
}

fn bytes_of(buf: &[u8], tag: u32) -> Vec<&[u8]> {
    fields(buf)
        .into_iter()
        .filter_map(|(t, f)| match f {
            Field::Bytes(b) if t == tag => Some(b),
            _ => None,
        })
        .collect()
}

fn one(buf: &[u8], tag: u32) -> &[u8] {
    let all = bytes_of(buf, tag);
    assert_eq!(all.len(), 1, "field {tag}");
    all[0]
}

fn text(buf: &[u8], tag: u32) -> String {
    String::from_utf8(one(buf, tag).to_vec()).expect("utf-8")
}

/// The value of the `Named*` pair called `name` among repeated field `tag`.
fn named<'a>(buf: &'a [u8], tag: u32, name: &str) -> &'a [u8] {
    bytes_of(buf, tag)
        .into_iter()
        .find(|pair| one(pair, 1) == name.as_bytes())
        .map(|pair| one(pair, 2))
        .unwrap_or_else(|| panic!("no {name}"))
}

fn encode_schema(schema: Value) -> Vec<u8> {
    let Value::Object(obj) = schema else {
        panic!("object")
    };
    let mut encoder = Encoder::default();
    let bytes = encoder.schema(&obj).0;
    assert!(encoder.rejected.is_empty(), "{:?}", encoder.rejected);
    bytes
}

#[test]
fn small_schema_hand_checked_bytes() {
    let bytes = encode_schema(json!({
        "description": "d",
        "type": "string",
        "x-kubernetes-list-type": "atomic"
    }));
    let mut expected = vec![
        0x22, 0x01, b'd', // description (4): "d"
        0xB2, 0x01, 0x08, // type (22): TypeItem, 8 bytes
        0x0A, 0x06, // TypeItem.value (1): "string"
    ];
    expected.extend_from_slice(b"string");
    expected.extend_from_slice(&[0xFA, 0x01, 0x23, 0x0A, 0x16]); // vendor_extension (31), NamedAny 35 bytes; name (1), 22 bytes
    expected.extend_from_slice(b"x-kubernetes-list-type");
    expected.extend_from_slice(&[0x12, 0x09, 0x12, 0x07]); // value (2): Any, 9 bytes; yaml (2), 7 bytes
    expected.extend_from_slice(b"atomic\n");
    assert_eq!(bytes, expected);
}

#[test]
fn ref_items_additional_properties_required() {
    let bytes = encode_schema(json!({
        "$ref": "#/definitions/a.B",
        "additionalProperties": false,
        "items": { "type": "integer", "format": "int32" },
        "required": ["name", ""],
        "maxLength": 63,
        "minimum": 1.5
    }));
    let mut expected = vec![0x0A, 0x11];
    expected.extend_from_slice(b"#/definitions/a.B"); // _ref (1)
    expected.push(0x49); // minimum (9), fixed64
    expected.extend_from_slice(&1.5f64.to_le_bytes());
    expected.extend_from_slice(&[0x58, 0x3F]); // max_length (11): 63
    expected.extend_from_slice(&[0x9A, 0x01, 0x04]); // required (19): "name"
    expected.extend_from_slice(b"name");
    expected.extend_from_slice(&[0x9A, 0x01, 0x00]); // required (19): "" (kept)
    expected.extend_from_slice(&[0xAA, 0x01, 0x02, 0x10, 0x00]); // additional_properties (21): {boolean (2): false}
                                                                 // items (23): ItemsItem{schema (1): Schema{format (2) "int32", type (22) ["integer"]}}
    expected.extend_from_slice(&[0xBA, 0x01, 0x15, 0x0A, 0x13, 0x12, 0x05]);
    expected.extend_from_slice(b"int32");
    expected.extend_from_slice(&[0xB2, 0x01, 0x09, 0x0A, 0x07]);
    expected.extend_from_slice(b"integer");
    assert_eq!(bytes, expected);
}

#[test]
fn yaml_of_extension_values() {
    assert_eq!(yaml(&json!("atomic")), "atomic\n");
    assert_eq!(yaml(&json!("merge,retainKeys")), "merge,retainKeys\n");
    assert_eq!(yaml(&json!(true)), "true\n");
    assert_eq!(yaml(&json!("")), "\"\"\n");
    assert_eq!(yaml(&json!("true")), "\"true\"\n");
    assert_eq!(yaml(&json!("1.0")), "\"1.0\"\n");
    assert_eq!(
        yaml(&json!(["containerPort", "protocol"])),
        "- containerPort\n- protocol\n"
    );
    assert_eq!(
        yaml(&json!({ "group": "", "kind": "ConfigMap", "version": "v1" })),
        "group: \"\"\nkind: ConfigMap\nversion: v1\n"
    );
    assert_eq!(
        yaml(&json!([{ "group": "apps", "kind": "Deployment", "version": "v1" }])),
        "- group: apps\n  kind: Deployment\n  version: v1\n"
    );
    assert_eq!(
        yaml(&json!([{ "discriminator": "type", "fields-to-discriminateBy": { "localhostProfile": "LocalhostProfile" } }])),
        "- discriminator: type\n  fields-to-discriminateBy:\n    localhostProfile: LocalhostProfile\n"
    );
    assert_eq!(
        yaml(&json!({ "a": { "b": ["c"] }, "d": [], "e": {} })),
        "a:\n    b:\n        - c\nd: []\ne: {}\n"
    );
}

#[test]
fn parameters_and_responses_pick_gnostic_oneofs() {
    let doc = json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes", "version": "v1.34.0" },
        "paths": {
            "/api/v1/namespaces/{namespace}/configmaps": {
                "get": {
                    "operationId": "listCoreV1NamespacedConfigMap",
                    "parameters": [
                        { "$ref": "#/parameters/limit-1NfNmdNH" },
                        { "in": "query", "name": "watch", "type": "boolean", "uniqueItems": true },
                        { "in": "body", "name": "body", "required": true, "schema": { "$ref": "#/definitions/x" } }
                    ],
                    "responses": { "200": { "description": "OK", "schema": { "type": "string" } } },
                    "x-kubernetes-action": "list"
                },
                "parameters": [
                    { "in": "path", "name": "namespace", "required": true, "type": "string", "uniqueItems": true }
                ]
            }
        },
        "security": [ { "BearerToken": [] } ],
        "securityDefinitions": {
            "BearerToken": { "description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey" }
        }
    });
    let encoded = encode(&doc).expect("encode");
    assert!(encoded.rejected.is_empty(), "{:?}", encoded.rejected);
    let root = encoded.bytes.as_slice();
    assert_eq!(text(root, 1), "2.0");
    assert_eq!(text(one(root, 2), 1), "Kubernetes");
    let item = named(one(root, 8), 2, "/api/v1/namespaces/{namespace}/configmaps");
    let get = one(item, 2);
    assert_eq!(text(get, 5), "listCoreV1NamespacedConfigMap");
    let params = bytes_of(get, 8);
    assert_eq!(params.len(), 3);
    // $ref -> ParametersItem.json_reference (2) -> _ref (1)
    assert_eq!(text(one(params[0], 2), 1), "#/parameters/limit-1NfNmdNH");
    // query -> Parameter (1) -> NonBodyParameter (2) -> query sub-schema (3)
    let query = one(one(one(params[1], 1), 2), 3);
    assert_eq!(
        fields(query),
        vec![
            (2, Field::Bytes(b"query")),
            (4, Field::Bytes(b"watch")),
            (6, Field::Bytes(b"boolean")),
            (20, Field::Varint(1)),
        ]
    );
    // body -> Parameter (1) -> BodyParameter (1)
    let body = one(one(params[2], 1), 1);
    assert_eq!(text(body, 3), "body");
    assert_eq!(text(one(body, 5), 1), "#/definitions/x");
    // path-level path parameter -> PathParameterSubSchema (4), type at 5
    let path = one(one(one(bytes_of(item, 9)[0], 1), 2), 4);
    assert_eq!(
        fields(path),
        vec![
            (1, Field::Varint(1)),
            (2, Field::Bytes(b"path")),
            (4, Field::Bytes(b"namespace")),
            (5, Field::Bytes(b"string")),
            (19, Field::Varint(1)),
        ]
    );
    // responses -> NamedResponseValue "200" -> response (1) -> schema item (2) -> schema (1)
    let ok = one(named(one(get, 9), 1, "200"), 1);
    assert_eq!(text(ok, 1), "OK");
    assert_eq!(text(one(one(one(ok, 2), 1), 22), 1), "string");
    let action = named(get, 13, "x-kubernetes-action");
    assert_eq!(text(action, 2), "list\n");
    // security: SecurityRequirement{NamedStringArray{"BearerToken", StringArray{}}}
    let requirement = one(root, 12);
    assert_eq!(named(requirement, 1, "BearerToken"), b"");
    let api_key = one(named(one(root, 13), 1, "BearerToken"), 2);
    assert_eq!(text(api_key, 1), "apiKey");
    assert_eq!(text(api_key, 2), "authorization");
    assert_eq!(text(api_key, 3), "header");
    assert_eq!(text(api_key, 4), "Bearer Token authentication");
}

#[test]
fn unknown_keys_are_reported() {
    let encoded = encode(&json!({
        "swagger": "2.0",
        "definitions": { "a": { "type": "object", "nullable": true, "x-ok": 1 } }
    }))
    .expect("encode");
    assert_eq!(encoded.rejected, vec!["Schema.nullable".to_string()]);
}

#[test]
fn served_document_is_all_gnostic_and_walkable() {
    let api = super::super::OpenApi::new(crate::registry::builtin_resources());
    let json_doc = api.v2().expect("v2");
    let value: Value = serde_json::from_slice(&json_doc.json).expect("json");
    let encoded = encode(&value).expect("encode");
    assert!(encoded.rejected.is_empty(), "{:?}", encoded.rejected);
    let proto = api.v2_protobuf().expect("protobuf");
    assert_eq!(proto.json.as_ref(), encoded.bytes.as_slice());
    assert_eq!(proto.etag, json_doc.etag, "kube reuses the JSON ETag");

    let root = proto.json.as_ref();
    assert_eq!(text(root, 1), "2.0");
    let definitions = one(root, 9);
    let deployment = named(definitions, 1, "io.k8s.api.apps.v1.Deployment");
    let gvk = named(deployment, 31, "x-kubernetes-group-version-kind");
    assert_eq!(
        text(gvk, 2),
        "- group: apps\n  kind: Deployment\n  version: v1\n"
    );
    let spec = named(one(deployment, 25), 1, "spec");
    assert_eq!(
        text(spec, 1),
        "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"
    );
    let pod_spec = named(definitions, 1, "io.k8s.api.core.v1.PodSpec");
    let containers = named(one(pod_spec, 25), 1, "containers");
    assert_eq!(text(one(containers, 22), 1), "array");
    assert_eq!(
        text(one(one(containers, 23), 1), 1),
        "#/definitions/io.k8s.api.core.v1.Container"
    );
    assert_eq!(
        text(named(containers, 31, "x-kubernetes-patch-merge-key"), 2),
        "name\n"
    );
    let config_map = named(definitions, 1, "io.k8s.api.core.v1.ConfigMap");
    let data = named(one(config_map, 25), 1, "data");
    assert_eq!(text(one(one(one(data, 21), 1), 22), 1), "string");

    // Every path's PATCH with a GVK lists fieldValidation (kubectl's
    // query-parameter check reads this from the protobuf document).
    let paths = one(root, 8);
    let item = named(
        paths,
        2,
        "/apis/apps/v1/namespaces/{namespace}/deployments/{name}",
    );
    let patch = one(item, 8);
    assert_eq!(
        text(named(patch, 13, "x-kubernetes-group-version-kind"), 2),
        "group: apps\nkind: Deployment\nversion: v1\n"
    );
    let refs: Vec<String> = bytes_of(patch, 8)
        .into_iter()
        .filter(|p| !bytes_of(p, 2).is_empty())
        .map(|p| text(one(p, 2), 1))
        .collect();
    let shared = one(root, 10);
    let field_validation = refs
        .iter()
        .filter_map(|r| r.strip_prefix("#/parameters/"))
        .map(|name| named(shared, 1, name))
        .filter_map(|param| bytes_of(param, 2).first().copied())
        .filter_map(|non_body| bytes_of(non_body, 3).first().copied())
        .any(|query| one(query, 4) == b"fieldValidation");
    let inline = bytes_of(patch, 8)
        .into_iter()
        .filter(|p| !bytes_of(p, 1).is_empty())
        .filter_map(|p| bytes_of(one(p, 1), 2).first().copied())
        .filter_map(|non_body| bytes_of(non_body, 3).first().copied())
        .any(|query| one(query, 4) == b"fieldValidation");
    assert!(field_validation || inline, "fieldValidation on PATCH");
}

#[test]
fn accept_negotiation_follows_kube_openapi() {
    use V2Format::{Json, Protobuf};
    let cases: &[(Option<&str>, Option<V2Format>)] = &[
        (None, Some(Json)),
        (Some(""), Some(Json)),
        (Some("*/*"), Some(Json)),
        (Some("*"), Some(Json)),
        (Some("application/*"), Some(Json)),
        (Some("application/json"), Some(Json)),
        (Some(CONTENT_TYPE_DEPRECATED), Some(Protobuf)),
        (Some(CONTENT_TYPE), Some(Protobuf)),
        (
            Some("application/com.github.proto-openapi.spec.v2@v1.0+protobuf, application/json"),
            Some(Protobuf),
        ),
        (
            Some("application/json, application/com.github.proto-openapi.spec.v2@v1.0+protobuf"),
            Some(Json),
        ),
        (
            Some("application/json;q=0.5, application/com.github.proto-openapi.spec.v2.v1.0+protobuf"),
            Some(Protobuf),
        ),
        // More specific beats `*/*` whatever the q (goautoneg's Less).
        (
            Some("*/*, application/com.github.proto-openapi.spec.v2@v1.0+protobuf;q=0.1"),
            Some(Protobuf),
        ),
        (Some("text/plain, */*;q=0.1"), Some(Json)),
        (Some("application/yaml"), None),
        (Some("text/html"), None),
        (Some("application/JSON"), None),
        // q=0 is not excluded by goautoneg/kube-openapi.
        (Some("application/json;q=0"), Some(Json)),
        (Some("application/json/x"), None),
        (Some(" application/json ; charset=utf-8"), Some(Json)),
    ];
    for (accept, expected) in cases {
        assert_eq!(negotiate(*accept), *expected, "{accept:?}");
    }
    assert_eq!(V2Format::Protobuf.content_type(), CONTENT_TYPE);
    assert_eq!(V2Format::Json.content_type(), "application/json");
}
