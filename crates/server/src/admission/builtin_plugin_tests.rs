//! Unit tests of the built-in plugins that read the store or the
//! authorizer: DefaultStorageClass, StorageObjectInUseProtection,
//! PersistentVolumeClaimResize, DefaultIngressClass and the Certificate*
//! plugins, each on the cases kube's own plugin tests cover.

use std::sync::Arc;

use ferrokube_store::{Backend, Expect, LocalBackend, MemoryDisk, Op, Store, Txn};
use serde_json::{json, Value};

use super::attributes::{Attributes, GroupVersionName, Operation};
use super::{
    certificate_approval, certificate_signing, certificate_subject_restriction,
    default_ingress_class, default_storage_class, persistent_volume_claim_resize,
    storage_object_in_use_protection,
};
use crate::authn::UserInfo;
use crate::authz::rbac::Rbac;
use crate::authz::{Authorizer, Mode};
use crate::object::{ObjectCodec, ObjectStore};

async fn store() -> ObjectStore {
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    Store::open(backend, ObjectCodec).await.expect("store")
}

async fn put(store: &ObjectStore, key: &str, value: Value) {
    store
        .commit(Txn::single(Op::Put {
            key: key.into(),
            value: serde_json::to_vec(&value).expect("json").into(),
            expect: Expect::Any,
        }))
        .await
        .expect("commit");
}

async fn class(store: &ObjectStore, plural: &str, name: &str, created: &str, annotations: Value) {
    put(
        store,
        &format!("/registry/{plural}/{name}"),
        json!({"metadata": {"name": name, "creationTimestamp": created, "annotations": annotations},
               "allowVolumeExpansion": name.starts_with("grow")}),
    )
    .await;
}

fn attributes<'a>(
    operation: Operation,
    group: &str,
    resource: &str,
    subresource: &'a str,
    old_object: Option<&'a Value>,
    user: Option<&'a UserInfo>,
) -> Attributes<'a> {
    Attributes {
        operation,
        kind: GroupVersionName::new(group, "v1", "Kind"),
        resource: GroupVersionName::new(group, "v1", resource),
        subresource,
        name: "x",
        namespace: "",
        old_object,
        options: Value::Null,
        dry_run: false,
        user,
    }
}

fn claim(spec: Value) -> Value {
    json!({"metadata": {"name": "x", "namespace": "dev"}, "spec": spec})
}

#[tokio::test]
async fn default_storage_class_picks_the_newest_default_and_respects_a_chosen_class() {
    let store = store().await;
    let create = attributes(
        Operation::Create,
        "",
        "persistentvolumeclaims",
        "",
        None,
        None,
    );
    // No default class: the claim is left alone.
    let mut object = claim(json!({}));
    default_storage_class::admit(&store, &create, Some(&mut object));
    assert_eq!(object, claim(json!({})));

    let default = json!({"storageclass.kubernetes.io/is-default-class": "true"});
    let beta = json!({"storageclass.beta.kubernetes.io/is-default-class": "true"});
    class(
        &store,
        "storageclasses",
        "old",
        "2024-01-01T00:00:00Z",
        default.clone(),
    )
    .await;
    class(
        &store,
        "storageclasses",
        "b-new",
        "2025-01-01T00:00:00Z",
        beta,
    )
    .await;
    class(
        &store,
        "storageclasses",
        "a-new",
        "2025-01-01T00:00:00Z",
        default,
    )
    .await;
    class(
        &store,
        "storageclasses",
        "newest-not-default",
        "2026-01-01T00:00:00Z",
        json!({"storageclass.kubernetes.io/is-default-class": "false"}),
    )
    .await;
    // Newest first, the smaller name on a tie (beta annotation counts too).
    default_storage_class::admit(&store, &create, Some(&mut object));
    assert_eq!(object["spec"]["storageClassName"], "a-new");

    // A class asked for, even "", or the beta annotation, is kept.
    let mut empty = claim(json!({"storageClassName": ""}));
    default_storage_class::admit(&store, &create, Some(&mut empty));
    assert_eq!(empty["spec"]["storageClassName"], "");
    let mut annotated = claim(json!({}));
    annotated["metadata"]["annotations"] = json!({"volume.beta.kubernetes.io/storage-class": "z"});
    default_storage_class::admit(&store, &create, Some(&mut annotated));
    assert!(annotated["spec"].get("storageClassName").is_none());
    // Only creates of the main resource.
    let update = attributes(
        Operation::Update,
        "",
        "persistentvolumeclaims",
        "",
        None,
        None,
    );
    let mut updated = claim(json!({}));
    default_storage_class::admit(&store, &update, Some(&mut updated));
    assert!(updated["spec"].get("storageClassName").is_none());
}

#[tokio::test]
async fn default_ingress_class_follows_the_annotation_and_the_class_fields() {
    let store = store().await;
    let create = attributes(
        Operation::Create,
        "networking.k8s.io",
        "ingresses",
        "",
        None,
        None,
    );
    let default = json!({"ingressclass.kubernetes.io/is-default-class": "true"});
    class(
        &store,
        "ingressclasses",
        "nginx",
        "2024-01-01T00:00:00Z",
        default.clone(),
    )
    .await;
    class(
        &store,
        "ingressclasses",
        "traefik",
        "2025-01-01T00:00:00Z",
        default,
    )
    .await;
    let mut ingress = json!({"metadata": {"name": "x"}, "spec": {}});
    default_ingress_class::admit(&store, &create, Some(&mut ingress));
    assert_eq!(ingress["spec"]["ingressClassName"], "traefik");
    let mut chosen = json!({"metadata": {"name": "x"}, "spec": {"ingressClassName": "nginx"}});
    default_ingress_class::admit(&store, &create, Some(&mut chosen));
    assert_eq!(chosen["spec"]["ingressClassName"], "nginx");
    let mut annotated = json!({"metadata": {"name": "x", "annotations": {"kubernetes.io/ingress.class": "nginx"}}, "spec": {}});
    default_ingress_class::admit(&store, &create, Some(&mut annotated));
    assert!(annotated["spec"].get("ingressClassName").is_none());
}

#[test]
fn protection_finalizers_are_added_once_on_create() {
    let create_claim = attributes(
        Operation::Create,
        "",
        "persistentvolumeclaims",
        "",
        None,
        None,
    );
    let mut object = claim(json!({}));
    storage_object_in_use_protection::admit(&create_claim, Some(&mut object));
    storage_object_in_use_protection::admit(&create_claim, Some(&mut object));
    assert_eq!(
        object["metadata"]["finalizers"],
        json!(["kubernetes.io/pvc-protection"])
    );
    let create_volume = attributes(Operation::Create, "", "persistentvolumes", "", None, None);
    let mut volume = json!({"metadata": {"name": "pv", "finalizers": ["a/b"]}});
    storage_object_in_use_protection::admit(&create_volume, Some(&mut volume));
    assert_eq!(
        volume["metadata"]["finalizers"],
        json!(["a/b", "kubernetes.io/pv-protection"])
    );
    let update = attributes(Operation::Update, "", "persistentvolumes", "", None, None);
    let mut untouched = json!({"metadata": {"name": "pv"}});
    storage_object_in_use_protection::admit(&update, Some(&mut untouched));
    assert!(untouched["metadata"].get("finalizers").is_none());
}

#[tokio::test]
async fn growing_a_claim_needs_a_bound_claim_and_an_expandable_class() {
    let store = store().await;
    class(
        &store,
        "storageclasses",
        "grow",
        "2024-01-01T00:00:00Z",
        json!({}),
    )
    .await;
    class(
        &store,
        "storageclasses",
        "fixed",
        "2024-01-01T00:00:00Z",
        json!({}),
    )
    .await;
    let sized = |class: &str, size: &str, phase: &str| {
        json!({"metadata": {"name": "x", "namespace": "dev"},
               "spec": {"storageClassName": class, "resources": {"requests": {"storage": size}}},
               "status": {"phase": phase}})
    };
    let check = |old: Value, new: Value| {
        let store = store.clone();
        async move {
            let attributes = attributes(
                Operation::Update,
                "",
                "persistentvolumeclaims",
                "",
                Some(&old),
                None,
            );
            persistent_volume_claim_resize::validate(&store, &attributes, Some(&new))
                .err()
                .map(|status| status.message)
        }
    };
    assert_eq!(
        check(sized("grow", "1Gi", "Bound"), sized("grow", "2Gi", "Bound")).await,
        None
    );
    // Shrinking or keeping the size is for validation to judge, not this plugin.
    assert_eq!(
        check(
            sized("fixed", "2Gi", "Bound"),
            sized("fixed", "1Gi", "Bound")
        )
        .await,
        None
    );
    assert_eq!(
        check(
            sized("fixed", "1Gi", "Bound"),
            sized("fixed", "1024Mi", "Bound")
        )
        .await,
        None
    );
    assert_eq!(
        check(
            sized("fixed", "1Gi", "Bound"),
            sized("fixed", "2Gi", "Bound")
        )
        .await
        .as_deref(),
        Some(
            r#"persistentvolumeclaims "x" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize"#
        )
    );
    assert_eq!(
        check(
            sized("grow", "1Gi", "Pending"),
            sized("grow", "2Gi", "Pending")
        )
        .await
        .as_deref(),
        Some(
            r#"persistentvolumeclaims "x" is forbidden: Only bound persistent volume claims can be expanded"#
        )
    );
    assert!(check(
        sized("missing", "1Gi", "Bound"),
        sized("missing", "2Gi", "Bound")
    )
    .await
    .is_some());
}

fn user(name: &str) -> UserInfo {
    UserInfo {
        name: name.into(),
        uid: String::new(),
        groups: vec!["system:authenticated".into()],
        extra: Default::default(),
    }
}

/// alice may approve and sign for every `example.com/*` signer, bob for
/// `example.com/one` only.
async fn signer_authorizer(store: &ObjectStore) -> Authorizer {
    for (who, signer) in [("alice", "example.com/*"), ("bob", "example.com/one")] {
        put(
            store,
            &format!("/registry/clusterroles/{who}"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                   "metadata": {"name": who},
                   "rules": [{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
                              "verbs": ["approve", "sign"], "resourceNames": [signer]}]}),
        )
        .await;
        put(
            store,
            &format!("/registry/clusterrolebindings/{who}"),
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": who},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": who},
                   "subjects": [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": who}]}),
        )
        .await;
    }
    Authorizer::with_rbac(&[Mode::Rbac], Arc::new(Rbac::following(store)))
}

fn csr(signer: &str, conditions: Value, certificate: &str) -> Value {
    json!({"metadata": {"name": "x"}, "spec": {"signerName": signer},
           "status": {"conditions": conditions, "certificate": certificate}})
}

#[tokio::test]
async fn approval_needs_approve_on_the_signer_or_its_domain() {
    let store = store().await;
    let authorizer = signer_authorizer(&store).await;
    let (alice, bob, carol) = (user("alice"), user("bob"), user("carol"));
    let approved = json!([{"type": "Approved", "status": "True"}]);
    let decide = |who: &UserInfo, signer: &str| {
        let old = csr(signer, json!([]), "");
        let attributes = attributes(
            Operation::Update,
            "certificates.k8s.io",
            "certificatesigningrequests",
            "approval",
            Some(&old),
            Some(who),
        );
        certificate_approval::validate(
            Some(&authorizer),
            &attributes,
            Some(&csr(signer, approved.clone(), "")),
        )
        .err()
        .map(|status| (status.code, status.message))
    };
    assert_eq!(decide(&alice, "example.com/two"), None);
    assert_eq!(decide(&bob, "example.com/one"), None);
    assert_eq!(
        decide(&bob, "example.com/two"),
        Some((
            403,
            r#"certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not permitted to approve requests with signerName "example.com/two""#
                .to_string()
        ))
    );
    assert!(decide(&carol, "example.com/one").is_some());
}

#[tokio::test]
async fn signing_needs_sign_when_the_certificate_or_conditions_change() {
    let store = store().await;
    let authorizer = signer_authorizer(&store).await;
    let carol = user("carol");
    let old = csr("example.com/one", json!([]), "");
    let attributes = attributes(
        Operation::Update,
        "certificates.k8s.io",
        "certificatesigningrequests",
        "status",
        Some(&old),
        Some(&carol),
    );
    // No change of certificate or conditions: not checked.
    let same = csr("example.com/one", Value::Null, "");
    assert!(certificate_signing::validate(Some(&authorizer), &attributes, Some(&same)).is_ok());
    let signed = csr("example.com/one", json!([]), "Zm9v");
    let refused = certificate_signing::validate(Some(&authorizer), &attributes, Some(&signed))
        .expect_err("carol may not sign");
    assert_eq!(
        refused.message,
        r#"certificatesigningrequests.certificates.k8s.io "x" is forbidden: user not permitted to sign requests with signerName "example.com/one""#
    );
    let bob = user("bob");
    let as_bob = Attributes {
        user: Some(&bob),
        ..attributes.clone()
    };
    assert!(certificate_signing::validate(Some(&authorizer), &as_bob, Some(&signed)).is_ok());
}

fn pem_request(organization: &str) -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "someone");
    params
        .distinguished_name
        .push(rcgen::DnType::OrganizationName, organization);
    let pem = params
        .serialize_request(&key)
        .expect("request")
        .pem()
        .expect("pem");
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(pem)
}

#[test]
fn system_masters_requests_for_the_apiserver_client_signer_are_refused() {
    let create = attributes(
        Operation::Create,
        "certificates.k8s.io",
        "certificatesigningrequests",
        "",
        None,
        None,
    );
    let request = |signer: &str, organization: &str| {
        json!({"metadata": {"name": "x"},
               "spec": {"signerName": signer, "request": pem_request(organization)}})
    };
    let client = "kubernetes.io/kube-apiserver-client";
    let refused = certificate_subject_restriction::validate(
        &create,
        Some(&request(client, "system:masters")),
    )
    .expect_err("system:masters");
    assert_eq!(
        refused.message,
        r#"certificatesigningrequests.certificates.k8s.io "x" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"#
    );
    assert!(
        certificate_subject_restriction::validate(&create, Some(&request(client, "dev"))).is_ok()
    );
    assert!(certificate_subject_restriction::validate(
        &create,
        Some(&request("example.com/any", "system:masters"))
    )
    .is_ok());
    let unparsable =
        json!({"metadata": {"name": "x"}, "spec": {"signerName": client, "request": "aGk="}});
    assert_eq!(
        certificate_subject_restriction::validate(&create, Some(&unparsable))
            .expect_err("not a CSR")
            .message,
        r#"certificatesigningrequests.certificates.k8s.io "x" is forbidden: failed to parse CSR: PEM block type must be CERTIFICATE REQUEST"#
    );
}
