//! Fuzz target bodies, shared by the cargo-fuzz targets in `fuzz/` (run with
//! `cargo +nightly fuzz run <target>`) and by the stable smoke test
//! `tests/fuzz_smoke.rs`, which runs every target over a seed corpus plus
//! deterministic mutations in CI.
//!
//! Each target feeds arbitrary bytes to a decoder or patch engine of the
//! server. Every failure must come back as an error value; a panic (or a
//! broken round-trip property checked here) is a bug.

use std::sync::OnceLock;

use serde_json::Value;

use crate::negotiate::{negotiate_output, Capabilities};
use crate::openapi::OpenApi;
use crate::patch::{json_patch, merge, strategic};
use crate::registry::builtin_resources;

/// A fuzz target body.
pub type Target = fn(&[u8]);

/// Every target, by the name of its cargo-fuzz binary.
pub const TARGETS: &[(&str, Target)] = &[
    ("protobuf", protobuf),
    ("cbor", cbor),
    ("yaml", yaml),
    ("json_patch", json_patch_target),
    ("merge_patch", merge_patch),
    ("strategic_merge_patch", strategic_merge_patch),
    ("accept", accept),
    ("stored_object", stored_object),
    ("service_account_token", service_account_token),
    ("json", json),
    ("apply", apply),
    ("delete_options", delete_options),
    ("selectors", selectors),
    ("continue_token", continue_token),
];

/// A protobuf request body (`k8s\0` envelope) of any kind; what decodes
/// must encode again.
pub fn protobuf(data: &[u8]) {
    if let Ok(object) = crate::protobuf::decode_object(data, crate::protobuf::message_for) {
        let _ = crate::protobuf::encode_envelope(&object);
    }
    let _ = crate::protobuf::decode_raw(data, "io.k8s.apimachinery.pkg.apis.meta.v1.WatchEvent");
}

/// A CBOR body; what decodes must re-encode to a data item that decodes to
/// the same value.
///
/// The item, not the body: `encode` prefixes the self-described tag 55799
/// as kube's serializer does, and that tag is a nesting level to every
/// decoder that bounds nesting (fxamacker/cbor's `MaxNestedLevels`, as
/// kube-apiserver and client-go decode, and ours), so a value nested
/// exactly [`crate::cbor::MAX_NESTING`] deep decodes from a body without the
/// prefix and not from its own re-encoding, in kube as here (AFL++ found it:
/// `fuzz-afl/corpus/cbor/crash-depth-64-then-self-described`).
pub fn cbor(data: &[u8]) {
    if let Ok(value) = crate::cbor::decode(data) {
        let encoded = crate::cbor::encode(&value);
        let item = encoded
            .strip_prefix(&crate::cbor::SELF_DESCRIBED[..])
            .unwrap_or(&encoded);
        let again = crate::cbor::decode(item);
        assert_eq!(
            again.as_ref(),
            Ok(&value),
            "cbor re-encoding changed the value"
        );
    }
}

/// A YAML body, through every entry point request decoding uses.
pub fn yaml(data: &[u8]) {
    if let Ok(value) = crate::yaml::yaml_to_json(data) {
        let _ = crate::yaml::json_to_yaml(&value);
    }
    let _ = crate::yaml::yaml_to_json_strict(data);
    let _ = crate::yaml::yaml_duplicate_fields(data);
    let _ = crate::yaml::summarize_data(data);
}

/// Splits `data` as `object \0 patch`, both JSON.
fn object_and_patch(data: &[u8]) -> Option<(Value, Value)> {
    let split = data.iter().position(|byte| *byte == 0)?;
    let object = serde_json::from_slice(&data[..split]).ok()?;
    let patch = serde_json::from_slice(&data[split + 1..]).ok()?;
    Some((object, patch))
}

pub fn json_patch_target(data: &[u8]) {
    if let Some((object, patch)) = object_and_patch(data) {
        let _ = json_patch::apply(&object, &patch);
    }
}

pub fn merge_patch(data: &[u8]) {
    if let Some((object, patch)) = object_and_patch(data) {
        let _ = merge::apply(&object, &patch);
    }
}

fn openapi() -> &'static OpenApi {
    static OPENAPI: OnceLock<OpenApi> = OnceLock::new();
    OPENAPI.get_or_init(|| OpenApi::new(builtin_resources()))
}

/// Kinds whose schemas exercise the strategic merge directives (merge keys,
/// retainKeys, set-element orders, maps, quantities).
const STRATEGIC_KINDS: &[(&str, &str, &str)] = &[
    ("", "v1", "Pod"),
    ("apps", "v1", "Deployment"),
    ("", "v1", "Service"),
    ("", "v1", "ConfigMap"),
    ("", "v1", "Node"),
    ("networking.k8s.io", "v1", "NetworkPolicy"),
    ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
];

/// `kind selector byte, object \0 patch`: a strategic merge patch on an
/// arbitrary object of a built-in kind.
pub fn strategic_merge_patch(data: &[u8]) {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Some((object, patch)) = object_and_patch(rest) else {
        return;
    };
    let (group, version, kind) = STRATEGIC_KINDS[usize::from(selector) % STRATEGIC_KINDS.len()];
    let Ok(Some(context)) = strategic::SchemaContext::for_kind(openapi(), group, version, kind)
    else {
        return;
    };
    let _ = strategic::apply(&object, &patch, &context);
}

/// `kind selector byte, body`: a JSON create/update body as
/// `api/write/decode.rs` reads it (Go's syntax scan and decode errors, strict
/// field validation, duplicate fields). Property: a body serde_json accepts
/// has no Go syntax error, so skipping the scan for it (as `decode_json`
/// does) changes no message.
pub fn json(data: &[u8]) {
    let Some((&selector, body)) = data.split_first() else {
        return;
    };
    let (group, version, kind) = STRATEGIC_KINDS[usize::from(selector) % STRATEGIC_KINDS.len()];
    let group_version = if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    };
    let message =
        crate::decode_error::decode_failure_message(kind, &group_version, body, None, None);
    if serde_json::from_slice::<Value>(body).is_ok() {
        let of_valid = crate::decode_error::decode_failure_message_of_valid_json(
            kind,
            &group_version,
            body,
            None,
            None,
        );
        assert_eq!(
            message, of_valid,
            "a body serde_json accepts has a Go syntax error"
        );
        let _ = crate::field_validation::strict_errors(openapi(), group, version, kind, body);
    }
    let _ = crate::field_validation::duplicate_fields(body);
}

/// `kind selector byte (bit 7: force), live \0 config`: server-side apply of
/// an arbitrary configuration onto an arbitrary live object (managedFields
/// included), then an update by another manager on the result.
pub fn apply(data: &[u8]) {
    use crate::fieldmanager::{schema::Schema, set::Set, FieldManager};
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    let Some((live, config)) = object_and_patch(rest) else {
        return;
    };
    let kinds = STRATEGIC_KINDS.len() + 1;
    let (schema, api_version) = match STRATEGIC_KINDS.get(usize::from(selector & 0x7f) % kinds) {
        Some((group, version, kind)) => (
            Schema::for_kind(openapi(), group, version, kind),
            if group.is_empty() {
                version.to_string()
            } else {
                format!("{group}/{version}")
            },
        ),
        None => (Schema::deduced_throughout(), "example.com/v1".to_string()),
    };
    let manager = FieldManager {
        schema,
        api_version,
        subresource: String::new(),
        reset: Set::new(),
        other_versions: None,
    };
    let now = "2026-01-02T03:04:05Z";
    if let Ok(mut applied) = manager.apply(&live, &config, "fuzz", selector & 0x80 != 0, now) {
        let before = applied.clone();
        manager.update(&before, &mut applied, "other", now);
    }
}

/// A DELETE request's options: the body in each media type a client may
/// send, then `ValidateDeleteOptions`; and the same bytes as a query string.
pub fn delete_options(data: &[u8]) {
    use crate::api::DeleteOptions;
    let query = crate::query::Query::parse("gracePeriodSeconds=3&dryRun=All");
    for content_type in [
        "application/json",
        "application/yaml",
        crate::protobuf::CONTENT_TYPE,
        crate::cbor::CONTENT_TYPE,
    ] {
        if let Ok(options) = DeleteOptions::from_parts(&query, content_type, data) {
            let _ = options.validate();
        }
    }
    let query = crate::query::Query::parse(&String::from_utf8_lossy(data));
    if let Ok(options) = DeleteOptions::from_query(&query) {
        let _ = options.validate();
    }
}

/// Label and field selectors, as query parameters (`labels.Parse`,
/// `fields.ParseSelector`) and as `metav1.LabelSelector` objects.
pub fn selectors(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let _ = crate::selector::LabelSelector::parse(&text);
    let _ = crate::selector::FieldSelector::parse(&text);
    if let Ok(value) = serde_json::from_slice::<Value>(data) {
        if let Ok(selector) = crate::label_selector::Selector::parse(&value) {
            let labels = value.get("matchLabels").and_then(Value::as_object);
            let _ = selector.matches_labels(labels);
        }
    }
}

/// The fixed key continue tokens are signed with.
fn continue_key() -> crate::api::ContinueKey {
    crate::api::ContinueKey::from_bytes([7; 32])
}

/// A `continue` token as sent (the signature stops most of them), and one
/// signed by this server over an arbitrary start key: what decodes names a
/// key under the list's prefix at the token's revision.
pub fn continue_token(data: &[u8]) {
    let key = continue_key();
    let prefix = "/registry/pods/default/";
    let text = String::from_utf8_lossy(data);
    let _ = crate::api::decode_continue_token(&key, &text, prefix);
    let revision = data.first().map_or(1, |byte| i64::from(*byte) - 1);
    let token = crate::api::encode_continue_token(&key, revision, &text);
    if let Ok(continuation) = crate::api::decode_continue_token(&key, &token, prefix) {
        let relative = text.strip_prefix('/').unwrap_or(&text);
        assert_eq!(continuation.revision, revision, "continue token revision");
        assert_eq!(
            continuation.start,
            format!("{prefix}{relative}"),
            "continue token start"
        );
    }
}

/// An `Accept` header, for each combination of endpoint capabilities.
pub fn accept(data: &[u8]) {
    let header = String::from_utf8_lossy(data);
    for (protobuf, table) in [(true, true), (false, false)] {
        let _ = negotiate_output(Some(&header), Capabilities { protobuf, table });
    }
    let _ = crate::negotiate::negotiate_error(Some(&header));
}

/// The fixed key service-account token seeds are signed with.
fn token_signer() -> &'static crate::serviceaccount::Signer {
    static SIGNER: std::sync::OnceLock<crate::serviceaccount::Signer> = std::sync::OnceLock::new();
    SIGNER.get_or_init(|| {
        match crate::serviceaccount::Signer::from_pem(
            include_str!("serviceaccount/testdata/ec-sec1.pem").as_bytes(),
        ) {
            Ok(signer) => signer,
            Err(error) => panic!("the fuzzing key does not load: {error}"),
        }
    })
}

/// A bearer token as the service-account authenticator reads it before any
/// store lookup: issuer peek, JWS split, signature, claims.
pub fn service_account_token(data: &[u8]) {
    use crate::serviceaccount::{claims, jwt};
    let token = String::from_utf8_lossy(data);
    let _ = jwt::unverified_issuer(&token);
    if let Some(parsed) = jwt::parse(&token) {
        let _ = parsed.verify_with(std::slice::from_ref(token_signer().public_key()));
        let _ = claims::PublicClaims::read(&parsed.claims);
        let _ = claims::PrivateClaims::read(&parsed.claims);
        let _ = claims::LegacyPrivateClaims::read(&parsed.claims);
    }
}

/// Stored bytes as the cache decodes them (written by ferrokube, or by any
/// other etcd client): the canonical fast path must agree with the tree path
/// on what it accepts, and the served JSON and the index must describe the
/// same object.
pub fn stored_object(data: &[u8]) {
    use ferrokube_store::{Codec, KeyValue};
    let kv = KeyValue {
        key: "/registry/configmaps/default/fuzz".into(),
        value: bytes::Bytes::copy_from_slice(data),
        create_revision: 3,
        mod_revision: 7,
    };
    let codec = crate::object::ObjectCodec;
    let object = codec.decode(&kv);
    let Some(json) = object.json() else {
        assert!(
            object.corrupt_error().is_some(),
            "neither decoded nor corrupt"
        );
        return;
    };
    let value: Value = match serde_json::from_slice(json) {
        Ok(value) => value,
        Err(error) => panic!("served JSON does not parse: {error}"),
    };
    assert_eq!(
        object.value().as_ref(),
        Some(&value),
        "value() differs from the JSON"
    );
    assert_eq!(crate::object::resource_version(&value), "7");
    if let Some(index) = object.index() {
        assert_eq!(index.name(), crate::object::name(&value), "index name");
        assert_eq!(
            index.namespace(),
            crate::object::namespace(&value),
            "index namespace"
        );
    }
    let deleted = codec.deleted(&object, 9);
    if let Some(value) = deleted.value() {
        assert_eq!(crate::object::resource_version(&value), "9");
    }
}

/// Seed inputs for `target`: valid bodies of many kinds, for the mutator to start from.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    let samples: Vec<Value> = crate::protobuf::sample::kinds()
        .iter()
        .step_by(7)
        .filter_map(|(api_version, kind)| crate::protobuf::sample::sample_object(api_version, kind))
        .collect();
    let small = serde_json::json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "labels": {"a": "b"}},
        "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 80}]}]}
    });
    match target {
        "protobuf" => samples
            .iter()
            .filter_map(|object| crate::protobuf::encode_envelope(object).ok())
            .collect(),
        "cbor" => samples.iter().map(crate::cbor::encode).collect(),
        "yaml" => {
            let mut seeds: Vec<Vec<u8>> = samples
                .iter()
                .take(6)
                .map(|object| crate::yaml::json_to_yaml(object).into_bytes())
                .collect();
            for text in [
                "a: &x [1, 2]\nb: *x\nc: !!str 3\nd: ~\ne: 0x1f\nf: 1e3\ng: yes\n",
                "- {a: 1, a: 2}\n- [[[[[]]]]]\n- ? complex\n  : key\n",
                "---\nkind: ConfigMap\n...\n---\nkind: Secret\n",
                "key: |\n  literal\n  text\nother: >-\n  folded\n  text\n",
            ] {
                seeds.push(text.as_bytes().to_vec());
            }
            seeds
        }
        "json_patch" | "merge_patch" | "strategic_merge_patch" => {
            let patches = [
                r#"[{"op":"add","path":"/metadata/labels/x","value":"y"},{"op":"remove","path":"/spec/containers/0"},{"op":"move","from":"/metadata/name","path":"/metadata/generateName"},{"op":"test","path":"/kind","value":"Pod"}]"#,
                r#"{"metadata":{"labels":{"a":null,"c":"d"}},"spec":{"containers":[{"name":"c","image":"j"}]}}"#,
                r#"{"spec":{"containers":[{"name":"c","$patch":"delete"}],"$setElementOrder/containers":[{"name":"c"}],"$retainKeys":["containers"]}}"#,
                r#"{"$patch":"replace","metadata":{"name":"q"}}"#,
            ];
            let mut seeds = Vec::new();
            for (index, patch) in patches.iter().enumerate() {
                for object in [&small, &samples[index % samples.len().max(1)]] {
                    let mut seed = vec![index as u8];
                    if target != "strategic_merge_patch" {
                        seed.clear();
                    }
                    seed.extend(serde_json::to_vec(object).unwrap_or_default());
                    seed.push(0);
                    seed.extend_from_slice(patch.as_bytes());
                    seeds.push(seed);
                }
            }
            seeds
        }
        "service_account_token" => {
            use crate::serviceaccount::claims;
            let bound = claims::BoundClaims {
                issuer: crate::serviceaccount::DEFAULT_ISSUER.into(),
                audiences: vec!["a".into(), "b".into()],
                namespace: "ns".into(),
                service_account: claims::ObjectRef {
                    name: "sa".into(),
                    uid: "u".into(),
                },
                binding: claims::Binding {
                    pod: Some(claims::ObjectRef {
                        name: "p".into(),
                        uid: "pu".into(),
                    }),
                    ..Default::default()
                },
                issued_at: 1,
                expires_at: 2,
                warn_after: Some(2),
                id: "j".into(),
            };
            let legacy = claims::legacy_claims("ns", &bound.service_account, "s");
            let mut seeds: Vec<Vec<u8>> = [bound.to_json(), legacy]
                .iter()
                .filter_map(|claims| crate::serviceaccount::jwt::sign(token_signer(), claims).ok())
                .map(String::into_bytes)
                .collect();
            seeds.push(b"eyJhbGciOiJub25lIn0.eyJpc3MiOjF9.".to_vec());
            seeds
        }
        "accept" => [
            "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
            "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;q=0.9",
            "*/*;q=0.5, application/*;pretty=1, text/html;q=1.0",
            "application/cbor;stream=watch",
        ]
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect(),
        "stored_object" => {
            let mut seeds: Vec<Vec<u8>> = samples
                .iter()
                .map(|object| crate::object::storage_bytes(object).to_vec())
                .collect();
            seeds.push(
                r#"{"a":"\u001f\"\\","apiVersion":"v1","kind":"X","metadata":{"labels":{"k":"v"},"name":"n\u00e9é","resourceVersion":"2"},"z":[1,-2,1.5,null,true]}"#
                    .as_bytes()
                    .to_vec(),
            );
            seeds
        }
        "json" => {
            let mut seeds: Vec<Vec<u8>> = samples
                .iter()
                .take(8)
                .enumerate()
                .map(|(index, object)| {
                    let mut seed = vec![index as u8];
                    seed.extend(serde_json::to_vec(object).unwrap_or_default());
                    seed
                })
                .collect();
            for text in [
                r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","name":"q"},"spec":{"containers":[{"name":"c","image":1,"bogus":true}]}}"#,
                r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"3","template":{"spec":{"containers":null}}}}"#,
                r#"{"kind":"ConfigMap","apiVersion":"v1","data":{"a":"\ud800"},"binaryData":{"b":"!!"}}"#,
                r#"[1, 2e400, -0, "\u00e9", {"a": [true, false, null]}"#,
            ] {
                let mut seed = vec![seeds.len() as u8];
                seed.extend_from_slice(text.as_bytes());
                seeds.push(seed);
            }
            seeds
        }
        "apply" => {
            let configs = [
                serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"x": "y"}},
                    "spec": {"containers": [{"name": "c", "image": "j", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}),
                serde_json::json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                    "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "c", "env": [{"name": "A", "value": "1"}]}]}}}}),
                serde_json::json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}}),
            ];
            let manager = crate::fieldmanager::FieldManager {
                schema: crate::fieldmanager::schema::Schema::for_kind(openapi(), "", "v1", "Pod"),
                api_version: "v1".into(),
                subresource: String::new(),
                reset: crate::fieldmanager::set::Set::new(),
                other_versions: None,
            };
            let owned = manager
                .apply(&serde_json::json!({}), &small, "first", false, "2026-01-01T00:00:00Z")
                .unwrap_or_else(|_| small.clone());
            let empty = serde_json::json!({});
            let mut seeds = Vec::new();
            for (selector, live, config) in [
                (0u8, &owned, &configs[0]),
                (0x80, &owned, &configs[0]),
                (0, &small, &small),
                (1, &samples[0], &configs[1]),
                (3, &empty, &configs[2]),
                (7, &owned, &configs[2]),
            ] {
                let mut seed = vec![selector];
                seed.extend(serde_json::to_vec(live).unwrap_or_default());
                seed.push(0);
                seed.extend(serde_json::to_vec(config).unwrap_or_default());
                seeds.push(seed);
            }
            seeds
        }
        "delete_options" => [
            r#"{"kind":"DeleteOptions","apiVersion":"v1","gracePeriodSeconds":0,"preconditions":{"uid":"u","resourceVersion":"1"},"propagationPolicy":"Foreground","dryRun":["All"],"orphanDependents":false}"#,
            "kind: DeleteOptions\napiVersion: meta.k8s.io/v1\npropagationPolicy: Orphan\ngracePeriodSeconds: -1\n",
            "propagationPolicy=Background&orphanDependents=true&gracePeriodSeconds=10&dryRun=All&ignoreStoreReadErrorWithClusterBreakingPotential=true",
            r#"{"kind":"Status","gracePeriodSeconds":"x","dryRun":"All"}"#,
        ]
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect(),
        "selectors" => [
            "a=b,c!=d,e in (x,y),!f,g,h notin (z),i==j",
            "x>3,y<10,a.b/c-d_e=f.g",
            r"metadata.name=x,spec.nodeName!=,status.phase==Running,a\,b=c\=d",
            r#"{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"In","values":["v","w"]},{"key":"e","operator":"DoesNotExist"}]}"#,
        ]
        .iter()
        .map(|text| text.as_bytes().to_vec())
        .collect(),
        "continue_token" => {
            let key = continue_key();
            vec![
                crate::api::encode_continue_token(&key, 42, "pod-a\u{0}").into_bytes(),
                crate::api::encode_continue_token(&key, -1, "/ns/name").into_bytes(),
                b"\x05pod-b\x00".to_vec(),
                b"../x".to_vec(),
                b"eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6NDIsInN0YXJ0IjoiYlx1MDAwMCJ9.AAAA".to_vec(),
            ]
        }
        _ => Vec::new(),
    }
}
