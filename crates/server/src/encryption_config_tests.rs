//! The configuration's validation errors as kube words them, and which
//! transformer a stored key gets.

use super::*;

fn write(text: &str) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    std::io::Write::write_all(&mut file, text.as_bytes()).unwrap();
    file
}

fn error_of(text: &str) -> String {
    let file = write(text);
    match load(file.path()) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(error) => error.to_string(),
    }
}

const HEAD: &str = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n";
const KEY32: &str = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=";

#[test]
fn invalid_configurations_fail_with_kubes_errors() {
    let cases = [
        (
            format!("{HEAD}resources: []\n"),
            "error while parsing file: resources: Required value: at least one resources is required",
        ),
        (
            format!("{HEAD}resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - name: key1\n        secret: c2hvcnQ=\n"),
            "error while parsing file: resources[0].providers[0].aesgcm.keys[0].secret: Invalid value: \"REDACTED\": secret is not of the expected length, got 5, expected one of [16 24 32]",
        ),
        (
            format!("{HEAD}resources:\n- resources: [secrets]\n  providers:\n  - secretbox:\n      keys:\n      - name: k\n        secret: '%%%'\n"),
            "error while parsing file: resources[0].providers[0].secretbox.keys[0].secret: Invalid value: \"REDACTED\": secrets must be base64 encoded",
        ),
        (
            format!("{HEAD}resources:\n- resources: [secrets, '*.']\n  providers:\n  - identity: {{}}\n"),
            "error while parsing file: resources[0].resources: Invalid value: []string{\"secrets\", \"*.\"}: using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
        ),
        (
            format!("{HEAD}resources:\n- resources: ['*', Secrets.apps]\n  providers: []\n"),
            "error while parsing file: [resources[0].resources[0]: Invalid value: \"*\": use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources, resources[0].resources[1]: Invalid value: \"Secrets.apps\": resource name should not contain capital letters, resources[0].providers: Required value: at least one resources[0].providers is required]",
        ),
        (
            format!("{HEAD}resources:\n- resources: [secrets]\n  providers:\n  - aescbc:\n      keys:\n      - secret: {KEY32}\n"),
            "error while parsing file: resources[0].providers[0].aescbc.keys[0].name: Required value: name is a mandatory field for a key",
        ),
        (
            "apiVersion: v1\nkind: ConfigMap\n".to_string(),
            "error while parsing file: got unexpected config type: v1, Kind=ConfigMap",
        ),
    ];
    for (text, expected) in cases {
        assert_eq!(error_of(&text), expected, "{text}");
    }
    let empty = write("");
    assert!(load(empty.path())
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default()
        .ends_with("is empty"));
}

#[test]
fn each_key_gets_the_first_entry_that_names_its_resource() {
    let text = format!(
        "{HEAD}resources:\n\
         - resources: [secrets, configmaps]\n  providers:\n  - aesgcm:\n      keys:\n      - name: key1\n        secret: {KEY32}\n  - identity: {{}}\n\
         - resources: ['*.apps']\n  providers:\n  - secretbox:\n      keys:\n      - name: box\n        secret: {KEY32}\n\
         - resources: ['*.*']\n  providers:\n  - aescbc:\n      keys:\n      - name: all\n        secret: {KEY32}\n"
    );
    let file = write(&text);
    let transformers = load(file.path()).unwrap();
    let prefix = |key: &str| String::from_utf8_lossy(transformers(key).write_prefix()).into_owned();
    assert_eq!(
        prefix("/registry/secrets/default/s"),
        "k8s:enc:aesgcm:v1:key1:"
    );
    assert_eq!(
        prefix("/registry/configmaps/default/c"),
        "k8s:enc:aesgcm:v1:key1:"
    );
    assert_eq!(
        prefix("/registry/deployments/default/d"),
        "k8s:enc:secretbox:v1:box:"
    );
    assert_eq!(prefix("/registry/minions/n1"), "k8s:enc:aescbc:v1:all:");
    assert_eq!(
        prefix("/registry/example.com/widgets/default/w"),
        "k8s:enc:aescbc:v1:all:"
    );
    assert_eq!(
        prefix("/registry/apiextensions.k8s.io/customresourcedefinitions/w"),
        "k8s:enc:aescbc:v1:all:"
    );

    let only_secrets = format!(
        "{HEAD}resources:\n- resources: [secrets]\n  providers:\n  - aesgcm:\n      keys:\n      - name: key1\n        secret: {KEY32}\n"
    );
    let file = write(&only_secrets);
    let transformers = load(file.path()).unwrap();
    assert_eq!(
        transformers("/registry/configmaps/default/c").write_prefix(),
        b""
    );
    assert_eq!(
        transformers("/registry/secrets/default/s").write_prefix(),
        b"k8s:enc:aesgcm:v1:key1:"
    );
}
