//! `--etcd-cafile`, `--etcd-certfile`, `--etcd-keyfile`: ferrokube on an
//! etcd that serves clients over TLS and demands client certificates
//! (`--client-cert-auth`), as kubeadm sets etcd up.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;
use ferrokube_testkit::etcd;

use std::net::{IpAddr, Ipv4Addr};
use std::path::Path;

use common::TestServer;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use kube::ResourceExt;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose, SanType,
};
use serde_json::json;

/// A CA, a serving certificate for 127.0.0.1 (etcd's) and a client certificate (ferrokube's).
fn write_pki(dir: &Path) -> (etcd::EtcdTlsFiles, etcd::EtcdTlsFiles) {
    let ca_key = KeyPair::generate().unwrap();
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.distinguished_name.push(DnType::CommonName, "etcd-ca");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::CrlSign,
    ];
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::from_params(&ca, &ca_key);

    let leaf = |name: &str, usage: ExtendedKeyUsagePurpose| {
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::new(vec!["localhost".to_string()]).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params
            .subject_alt_names
            .push(SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)));
        params.extended_key_usages = vec![usage];
        let cert = params.signed_by(&key, &issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    };
    let write = |name: &str, pem: &str| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path
    };
    let ca_path = write("ca.crt", &ca_cert.pem());
    let (server_cert, server_key) = leaf("etcd", ExtendedKeyUsagePurpose::ServerAuth);
    let (client_cert, client_key) = leaf("ferrokube", ExtendedKeyUsagePurpose::ClientAuth);
    let server = etcd::EtcdTlsFiles {
        ca: ca_path.clone(),
        cert: write("server.crt", &server_cert),
        key: write("server.key", &server_key),
    };
    let client = etcd::EtcdTlsFiles {
        ca: ca_path,
        cert: write("client.crt", &client_cert),
        key: write("client.key", &client_key),
    };
    (server, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ferrokube_talks_to_etcd_over_tls_with_a_client_certificate() {
    let pki = tempfile::tempdir().unwrap();
    let (server_files, client_files) = write_pki(pki.path());
    let etcd = etcd::Etcd::start_tls(server_files);
    let server = TestServer::start_with(&[
        "--storage-backend=etcd3",
        &etcd.servers_flag(),
        &format!("--etcd-cafile={}", client_files.ca.display()),
        &format!("--etcd-certfile={}", client_files.cert.display()),
        &format!("--etcd-keyfile={}", client_files.key.display()),
    ]);
    let api: Api<ConfigMap> = Api::namespaced(server.client().await, "default");
    let created = api
        .create(
            &PostParams::default(),
            &serde_json::from_value(json!({"metadata": {"name": "over-tls"}, "data": {"a": "b"}}))
                .unwrap(),
        )
        .await
        .unwrap();
    let read = api.get("over-tls").await.unwrap();
    assert_eq!(read.resource_version(), created.resource_version());
}
