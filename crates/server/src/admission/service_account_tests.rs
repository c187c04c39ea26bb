//! Cases of `plugin/pkg/admission/serviceaccount/admission_test.go`.

use serde_json::{json, Value};

use super::*;
use crate::admission::test_support::{attributes, store_with};

fn account(name: &str, extra: Value) -> (String, Value) {
    let mut account = json!({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": name, "namespace": "ns"},
    });
    if let (Some(account), Some(extra)) = (account.as_object_mut(), extra.as_object()) {
        account.extend(extra.clone());
    }
    (format!("/registry/serviceaccounts/ns/{name}"), account)
}

async fn store(accounts: &[(String, Value)]) -> ObjectStore {
    let objects: Vec<(&str, Value)> = accounts
        .iter()
        .map(|(key, value)| (key.as_str(), value.clone()))
        .collect();
    store_with(&objects).await
}

fn pod(spec: Value) -> Value {
    json!({"metadata": {"name": "p", "namespace": "ns"}, "spec": spec})
}

async fn admitted(store: &ObjectStore, mut pod: Value) -> Result<Value> {
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    admit(store, &create, Some(&mut pod)).await?;
    Ok(pod)
}

#[tokio::test]
async fn defaults_the_account_and_mounts_the_token_everywhere() {
    let store = store(&[account("default", json!({}))]).await;
    let pod = admitted(
        &store,
        pod(json!({
            "initContainers": [{"name": "init", "image": "busybox"}],
            "containers": [
                {"name": "app", "image": "nginx"},
                {"name": "own", "image": "nginx", "volumeMounts": [{"name": "mine", "mountPath": TOKEN_MOUNT_PATH}]},
            ],
        })),
    )
    .await
    .expect("admitted");
    assert_eq!(pod["spec"]["serviceAccountName"], json!("default"));
    let volumes = pod["spec"]["volumes"].as_array().expect("volumes");
    assert_eq!(volumes.len(), 1);
    let name = volumes[0]["name"].as_str().expect("name");
    assert!(name.starts_with("kube-api-access-") && name.len() == "kube-api-access-".len() + 5);
    assert_eq!(volumes[0], token_volume(name));
    assert_eq!(
        volumes[0]["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        json!(3607)
    );
    let mount = json!({"name": name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    assert_eq!(
        pod["spec"]["initContainers"][0]["volumeMounts"],
        json!([mount])
    );
    assert_eq!(pod["spec"]["containers"][0]["volumeMounts"], json!([mount]));
    // A container with its own mount at the path keeps it alone.
    assert_eq!(
        pod["spec"]["containers"][1]["volumeMounts"],
        json!([{"name": "mine", "mountPath": TOKEN_MOUNT_PATH}])
    );
}

#[tokio::test]
async fn automount_preference_pod_then_account() {
    let store = store(&[
        account("default", json!({})),
        account("quiet", json!({"automountServiceAccountToken": false})),
    ])
    .await;
    let containers = json!([{"name": "app", "image": "nginx"}]);
    let opted_out = admitted(
        &store,
        pod(json!({"automountServiceAccountToken": false, "containers": containers})),
    )
    .await
    .expect("admitted");
    assert!(opted_out["spec"].get("volumes").is_none());
    let quiet = admitted(
        &store,
        pod(json!({"serviceAccountName": "quiet", "containers": containers})),
    )
    .await
    .expect("admitted");
    assert!(quiet["spec"].get("volumes").is_none());
    let pod_wins = admitted(
        &store,
        pod(json!({"serviceAccountName": "quiet", "automountServiceAccountToken": true, "containers": containers})),
    )
    .await
    .expect("admitted");
    assert_eq!(
        pod_wins["spec"]["volumes"].as_array().map(Vec::len),
        Some(1)
    );
    // An existing kube-api-access volume is reused.
    let reused = admitted(
        &store,
        pod(json!({"containers": containers, "volumes": [token_volume("kube-api-access-abcde")]})),
    )
    .await
    .expect("admitted");
    assert_eq!(
        reused["spec"]["volumes"],
        json!([token_volume("kube-api-access-abcde")])
    );
    assert_eq!(
        reused["spec"]["containers"][0]["volumeMounts"][0]["name"],
        json!("kube-api-access-abcde")
    );
}

#[tokio::test]
async fn image_pull_secrets_are_copied_to_a_pod_without_any() {
    let store = store(&[account(
        "builder",
        json!({"imagePullSecrets": [{"name": "registry"}], "automountServiceAccountToken": false}),
    )])
    .await;
    let copied = admitted(&store, pod(json!({"serviceAccountName": "builder"})))
        .await
        .expect("admitted");
    assert_eq!(
        copied["spec"]["imagePullSecrets"],
        json!([{"name": "registry"}])
    );
    let own = admitted(
        &store,
        pod(json!({"serviceAccountName": "builder", "imagePullSecrets": [{"name": "mine"}]})),
    )
    .await
    .expect("admitted");
    assert_eq!(own["spec"]["imagePullSecrets"], json!([{"name": "mine"}]));
}

#[tokio::test]
async fn a_missing_account_is_forbidden() {
    let store = store(&[]).await;
    let error = admitted(&store, pod(json!({"serviceAccountName": "robot"})))
        .await
        .expect_err("refused");
    assert_eq!(error.code, 403);
    assert_eq!(
        error.message,
        r#"pods "p" is forbidden: error looking up service account ns/robot: serviceaccount "robot" not found"#
    );
}

#[tokio::test]
async fn mirror_pods_are_not_changed_and_reference_nothing() {
    let store = store(&[account("default", json!({}))]).await;
    let mirror = |spec: Value| {
        json!({"metadata": {"name": "p", "namespace": "ns",
            "annotations": {"kubernetes.io/config.mirror": "x"}}, "spec": spec})
    };
    let plain = mirror(json!({"containers": [{"name": "c", "image": "i"}]}));
    assert_eq!(
        admitted(&store, plain.clone()).await.expect("admitted"),
        plain
    );
    let with_account = admitted(&store, mirror(json!({"serviceAccountName": "default"})))
        .await
        .expect_err("refused");
    assert_eq!(
        with_account.message,
        r#"pods "p" is forbidden: a mirror pod may not reference service accounts"#
    );
    let with_secret = admitted(
        &store,
        mirror(json!({"volumes": [{"name": "s", "secret": {"secretName": "s"}}]})),
    )
    .await
    .expect_err("refused");
    assert_eq!(
        with_secret.message,
        r#"pods "p" is forbidden: a mirror pod may not reference secrets"#
    );
}

#[tokio::test]
async fn enforce_mountable_secrets_limits_references() {
    let store = store(&[account(
        "strict",
        json!({
            "metadata": {"name": "strict", "namespace": "ns",
                "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
            "secrets": [{"name": "allowed"}],
            "automountServiceAccountToken": false,
        }),
    )])
    .await;
    let allowed = pod(json!({"serviceAccountName": "strict",
        "volumes": [{"name": "v", "secret": {"secretName": "allowed"}}]}));
    admitted(&store, allowed).await.expect("admitted");
    let volume = pod(json!({"serviceAccountName": "strict",
        "volumes": [{"name": "v", "secret": {"secretName": "other"}}]}));
    assert_eq!(
        admitted(&store, volume).await.expect_err("refused").message,
        "pods \"p\" is forbidden: volume with secret.secretName=\"other\" is not allowed because service account strict does not reference that secret"
    );
    let env = pod(
        json!({"serviceAccountName": "strict", "containers": [{"name": "c", "image": "i",
        "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}]}]}),
    );
    assert_eq!(
        admitted(&store, env).await.expect_err("refused").message,
        "pods \"p\" is forbidden: container c with envVar E referencing secret.secretName=\"other\" is not allowed because service account strict does not reference that secret"
    );
}

#[tokio::test]
async fn a_body_that_is_not_an_object_is_left_to_validation() {
    let store = store(&[account("default", json!({}))]).await;
    let create = attributes(Operation::Create, "", "v1", "pods", None);
    for mut body in [json!("pod"), json!([1]), Value::Null] {
        let before = body.clone();
        admit(&store, &create, Some(&mut body))
            .await
            .expect("no error");
        crate::admission::priority::admit(&store, &create, Some(&mut body)).expect("no error");
        crate::admission::limit_ranger::admit(&store, &create, Some(&mut body)).expect("no error");
        crate::admission::runtime_class::admit(&store, &create, Some(&mut body)).expect("no error");
        crate::admission::default_toleration_seconds::admit(&create, Some(&mut body), (300, 300));
        assert_eq!(body, before);
    }
}
