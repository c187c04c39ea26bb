//! Cases from kube's `TestValidateConfigMap`, `TestValidateConfigMapUpdate`,
//! `TestValidateSecret`, `TestValidateSecretUpdate` (`core/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

#[test]
fn config_map_keys_and_size() {
    let valid = [
        json!({"data": {"key1": "value1", "key_2": "", ".dotted": "x", "A-B.c": "y"}}),
        json!({"binaryData": {"bin": "AAEC"}}),
        json!({}),
    ];
    for object in valid {
        assert_eq!(
            texts(&config_map(&object)),
            Vec::<String>::new(),
            "{object}"
        );
    }
    let key_message = "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')";
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"data": {"a key": "v"}}),
            vec![format!(
                "data[a key]: Invalid value: \"a key\": {key_message}"
            )],
        ),
        (
            json!({"data": {"..dots": "v"}}),
            vec!["data[..dots]: Invalid value: \"..dots\": must not start with '..'".into()],
        ),
        (
            json!({"data": {"k": "v"}, "binaryData": {"k": "AA=="}}),
            vec!["data[k]: Invalid value: \"k\": duplicate of key present in binaryData".into()],
        ),
        (
            json!({"binaryData": {"b/c": "AA=="}}),
            vec![format!(
                "binaryData[b/c]: Invalid value: \"b/c\": {key_message}"
            )],
        ),
        (
            json!({"data": {"big": "x".repeat(MAX_SECRET_SIZE + 1)}}),
            vec![": Too long: may not be more than 1048576 bytes".into()],
        ),
    ];
    for (object, expected) in cases {
        assert_eq!(texts(&config_map(&object)), expected);
    }
}

#[test]
fn immutable_config_maps_and_secrets_keep_their_data() {
    let old = json!({"immutable": true, "data": {"a": "b"}});
    assert!(config_map_update(&old, &old).is_empty());
    let changed = json!({"immutable": true, "data": {"a": "c"}});
    assert_eq!(
        texts(&config_map_update(&changed, &old)),
        vec!["data: Forbidden: field is immutable when `immutable` is set"]
    );
    let unset = json!({"data": {"a": "b"}});
    assert_eq!(
        texts(&config_map_update(&unset, &old)),
        vec!["immutable: Forbidden: field is immutable when `immutable` is set"]
    );
    // A mutable object may become immutable and change at once.
    assert!(config_map_update(&changed, &unset).is_empty());

    let old_secret = json!({"type": "Opaque", "immutable": true, "data": {"a": "Yg=="}});
    let new_secret = json!({"type": "Opaque", "immutable": true, "data": {"a": "Yw=="}});
    assert_eq!(
        texts(&secret_update(&new_secret, &old_secret)),
        vec!["data: Forbidden: field is immutable when `immutable` is set"]
    );
    let retyped = json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "", "tls.key": ""}});
    assert_eq!(
        texts(&secret_update(&retyped, &json!({"type": "Opaque"}))),
        vec!["type: Invalid value: \"kubernetes.io/tls\": field is immutable"]
    );
}

#[test]
fn secret_types_require_their_keys() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({"type": "Opaque", "data": {"a": "YQ=="}}), vec![]),
        (json!({"type": "example.com/custom"}), vec![]),
        (
            json!({"type": "Opaque", "data": {"a b": ""}}),
            vec!["data[a b]: Invalid value: \"a b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"],
        ),
        (
            json!({"type": "kubernetes.io/service-account-token", "metadata": {}}),
            vec!["metadata.annotations[kubernetes.io/service-account.name]: Required value"],
        ),
        (
            json!({"type": "kubernetes.io/service-account-token", "metadata": {"annotations": {"kubernetes.io/service-account.name": "default"}}}),
            vec![],
        ),
        (
            json!({"type": "kubernetes.io/dockerconfigjson", "data": {}}),
            vec!["data[.dockerconfigjson]: Required value"],
        ),
        (
            // base64 of `{"auths":{}}`
            json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "eyJhdXRocyI6e319"}}),
            vec![],
        ),
        (
            // base64 of `{`
            json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "ew=="}}),
            vec!["data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": unexpected end of JSON input"],
        ),
        (
            // base64 of `[]`
            json!({"type": "kubernetes.io/dockercfg", "data": {".dockercfg": "W10="}}),
            vec!["data[.dockercfg]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"],
        ),
        (
            json!({"type": "kubernetes.io/basic-auth", "data": {}}),
            vec!["data[username]: Required value", "data[password]: Required value"],
        ),
        (json!({"type": "kubernetes.io/basic-auth", "data": {"password": ""}}), vec![]),
        (
            json!({"type": "kubernetes.io/ssh-auth", "data": {"ssh-privatekey": ""}}),
            vec!["data[ssh-privatekey]: Required value"],
        ),
        (
            json!({"type": "kubernetes.io/tls", "data": {"tls.crt": "YQ=="}}),
            vec!["data[tls.key]: Required value"],
        ),
    ];
    for (object, expected) in cases {
        assert_eq!(texts(&secret(&object)), expected, "{object}");
    }
}

#[test]
fn decoded_lengths_follow_base64() {
    for (text, length) in [
        ("", 0),
        ("YQ==", 1),
        ("YWI=", 2),
        ("YWJj", 3),
        ("YWJjZA==", 4),
    ] {
        assert_eq!(decoded_len(&json!(text)), length, "{text}");
    }
}
