//! The `kube-system/extension-apiserver-authentication` ConfigMap, as
//! kube-apiserver's cluster-authentication-trust controller keeps it
//! (`pkg/controlplane/controller/clusterauthenticationtrust/cluster_authentication_trust_controller.go`):
//! the client CA bundle and the front-proxy settings, for aggregated API
//! servers and webhooks to trust the same clients. What is stored is merged
//! with what this server requires (`combinedClusterAuthenticationInfo`):
//! each list keeps the values already there and appends the missing ones,
//! CA bundles are joined without duplicates or certificates expired for more
//! than five minutes, so replicas with different flags sharing one etcd all
//! fit. Every replica runs it at start (the
//! `start-cluster-authentication-info-controller` post-start hook), again
//! every minute, when a CA file is reloaded, and when the ConfigMap is
//! changed or deleted.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::CertificateDer;
use serde_json::{json, Value};
use x509_parser::certificate::X509Certificate;
use x509_parser::prelude::FromDer;

use crate::api::Api;
use crate::authn::encode_pem;
use crate::controllers::{Client, ClientError};
use crate::object::feed::Update;

/// kube's post-start hook name.
pub const POST_START_HOOK: &str = "start-cluster-authentication-info-controller";
const NAMESPACE: &str = "kube-system";
const NAME: &str = "extension-apiserver-authentication";
const PATH: &str = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication";
/// `wait.PollImmediateUntil(1*time.Minute, …)`: the periodic resync.
const RESYNC: Duration = Duration::from_secs(60);

/// Errors of this module.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    #[error("{key}: {source}")]
    Decode {
        key: &'static str,
        source: serde_json::Error,
    },
    #[error("{key}: data does not contain any valid RSA or ECDSA certificates")]
    Certificates { key: &'static str },
    #[error(transparent)]
    Write(#[from] ClientError),
}

/// `ClusterAuthenticationInfo`: what the ConfigMap says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthenticationInfo {
    pub client_ca: Vec<CertificateDer<'static>>,
    /// Empty: no front-proxy CA, and none of the `requestheader-*` keys.
    pub request_header_ca: Vec<CertificateDer<'static>>,
    pub username_headers: Vec<String>,
    pub uid_headers: Vec<String>,
    pub group_headers: Vec<String>,
    pub extra_header_prefixes: Vec<String>,
    pub allowed_names: Vec<String>,
}

impl AuthenticationInfo {
    /// What this server requires: its client CA bundle and front-proxy flags.
    pub fn of(api: &Api) -> AuthenticationInfo {
        let authenticator = &api.authenticator;
        let mut info = AuthenticationInfo {
            client_ca: authenticator
                .client_ca()
                .map(|ca| ca.certificates())
                .unwrap_or_default(),
            ..AuthenticationInfo::default()
        };
        if let Some(config) = authenticator.request_header() {
            info.request_header_ca = config.client_ca.certificates();
            info.username_headers = config.username_headers.clone();
            info.uid_headers = config.uid_headers.clone();
            info.group_headers = config.group_headers.clone();
            info.extra_header_prefixes = config.extra_header_prefixes.clone();
            info.allowed_names = config.allowed_names.clone();
        }
        info
    }

    /// `getClusterAuthenticationInfoFor`.
    fn from_data(data: &BTreeMap<String, String>) -> Result<AuthenticationInfo, TrustError> {
        let list = |key: &'static str| -> Result<Vec<String>, TrustError> {
            match data.get(key).filter(|text| !text.is_empty()) {
                None => Ok(Vec::new()),
                Some(text) => serde_json::from_str::<Option<Vec<String>>>(text)
                    .map(Option::unwrap_or_default)
                    .map_err(|source| TrustError::Decode { key, source }),
            }
        };
        let bundle = |key: &'static str| -> Result<Vec<CertificateDer<'static>>, TrustError> {
            match data.get(key).filter(|text| !text.is_empty()) {
                None => Ok(Vec::new()),
                Some(text) => parse_pem(text).ok_or(TrustError::Certificates { key }),
            }
        };
        Ok(AuthenticationInfo {
            group_headers: list("requestheader-group-headers")?,
            extra_header_prefixes: list("requestheader-extra-headers-prefix")?,
            allowed_names: list("requestheader-allowed-names")?,
            username_headers: list("requestheader-username-headers")?,
            uid_headers: list("requestheader-uid-headers")?,
            request_header_ca: bundle("requestheader-client-ca-file")?,
            client_ca: bundle("client-ca-file")?,
        })
    }

    /// `combinedClusterAuthenticationInfo`: `self` (what is stored) first.
    fn combined(&self, required: &AuthenticationInfo, now: SystemTime) -> AuthenticationInfo {
        AuthenticationInfo {
            allowed_names: unique(&self.allowed_names, &required.allowed_names),
            extra_header_prefixes: unique(
                &self.extra_header_prefixes,
                &required.extra_header_prefixes,
            ),
            group_headers: unique(&self.group_headers, &required.group_headers),
            username_headers: unique(&self.username_headers, &required.username_headers),
            uid_headers: unique(&self.uid_headers, &required.uid_headers),
            client_ca: certificates(&self.client_ca, &required.client_ca, now),
            request_header_ca: certificates(
                &self.request_header_ca,
                &required.request_header_ca,
                now,
            ),
        }
    }

    /// `getConfigMapDataFor`: lists as JSON arrays (Go's `json.Marshal`).
    fn data(&self) -> BTreeMap<String, String> {
        let mut data = BTreeMap::new();
        if !self.client_ca.is_empty() {
            data.insert("client-ca-file".to_string(), encode_pem(&self.client_ca));
        }
        if self.request_header_ca.is_empty() {
            return data;
        }
        let lists = [
            ("requestheader-username-headers", &self.username_headers),
            ("requestheader-uid-headers", &self.uid_headers),
            ("requestheader-group-headers", &self.group_headers),
            (
                "requestheader-extra-headers-prefix",
                &self.extra_header_prefixes,
            ),
            ("requestheader-allowed-names", &self.allowed_names),
        ];
        for (key, values) in lists {
            data.insert(key.to_string(), go_json_strings(values));
        }
        data.insert(
            "requestheader-client-ca-file".to_string(),
            encode_pem(&self.request_header_ca),
        );
        data
    }
}

/// `json.Marshal` of a `[]string`: Go escapes `<`, `>` and `&` in strings.
fn go_json_strings(values: &[String]) -> String {
    serde_json::to_string(values)
        .unwrap_or_else(|_| "[]".to_string())
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// `combineUniqueStringSlices`.
fn unique(stored: &[String], required: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for value in stored.iter().chain(required) {
        if !out.contains(value) {
            out.push(value.clone());
        }
    }
    out
}

/// `combineCertLists`: both bundles, certificates expired more than five
/// minutes ago dropped (`filterExpiredCerts`), duplicates removed.
fn certificates(
    stored: &[CertificateDer<'static>],
    required: &[CertificateDer<'static>],
    now: SystemTime,
) -> Vec<CertificateDer<'static>> {
    let cutoff = now
        .checked_sub(Duration::from_secs(5 * 60))
        .unwrap_or(SystemTime::UNIX_EPOCH)
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_secs()).unwrap_or(i64::MAX)
        });
    let mut out: Vec<CertificateDer<'static>> = Vec::new();
    for certificate in stored.iter().chain(required) {
        let valid = X509Certificate::from_der(certificate.as_ref())
            .is_ok_and(|(_, cert)| cert.validity().not_after.timestamp() > cutoff);
        if valid && !out.contains(certificate) {
            out.push(certificate.clone());
        }
    }
    out
}

fn parse_pem(text: &str) -> Option<Vec<CertificateDer<'static>>> {
    let certificates: Result<Vec<_>, _> = CertificateDer::pem_slice_iter(text.as_bytes()).collect();
    certificates
        .ok()
        .filter(|certificates| !certificates.is_empty())
}

fn data_of(object: &Value) -> BTreeMap<String, String> {
    object
        .get("data")
        .and_then(Value::as_object)
        .map(|data| {
            data.iter()
                .filter_map(|(key, value)| Some((key.clone(), value.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// `syncConfigMap`: the stored ConfigMap merged with what this server
/// requires, written when that changes it (created when missing).
pub async fn sync(api: &Arc<Api>) -> Result<(), TrustError> {
    let client = Client::apiserver(api.clone());
    let existing = match client.get(PATH).await {
        Ok(object) => Some(object),
        Err(error) if error.is_not_found() => None,
        Err(error) => return Err(error.into()),
    };
    let stored_data = existing.as_ref().map(data_of).unwrap_or_default();
    let stored = AuthenticationInfo::from_data(&stored_data)?;
    let data = stored
        .combined(&AuthenticationInfo::of(api), SystemTime::now())
        .data();
    if existing.is_some() && data == stored_data {
        return Ok(());
    }
    tracing::debug!("writing updated authentication info to kube-system configmaps/{NAME}");
    match existing {
        Some(mut object) => {
            object["data"] = json!(data);
            match client.update(PATH, &object).await {
                Ok(_) => Ok(()),
                Err(error) if error.is_not_found() => create(&client, &data).await,
                Err(error) => Err(error.into()),
            }
        }
        None => create(&client, &data).await,
    }
}

async fn create(client: &Client, data: &BTreeMap<String, String>) -> Result<(), TrustError> {
    let object = json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": NAME, "namespace": NAMESPACE},
        "data": data,
    });
    client
        .create("/api/v1/namespaces/kube-system/configmaps", &object)
        .await?;
    Ok(())
}

/// The ConfigMap's store key (the informer's filter).
const KEY: &str = "/registry/configmaps/kube-system/extension-apiserver-authentication";

/// Starts the controller: a first sync (the post-start hook completes after
/// it), then one a minute, one whenever `reloaded` fires, and one whenever
/// the ConfigMap changes or is deleted (kube's informer on it).
pub fn spawn(api: Arc<Api>, reloaded: tokio::sync::watch::Receiver<u64>) {
    let mut reloaded = Some(reloaded);
    api.post_start_hooks.register(POST_START_HOOK);
    tokio::spawn(async move {
        let mut shutdown = api.shutdown_signal();
        let (mut feed, _) = crate::object::feed::Feed::start(&api.store);
        let mut first = true;
        loop {
            // A write fails while the rbac/bootstrap-roles hook has not
            // created kube-system yet on a fresh store: retry soon.
            let delay = match sync(&api).await {
                Ok(()) => RESYNC,
                Err(error) => {
                    tracing::warn!(%error, "syncing kube-system/{NAME}");
                    Duration::from_secs(1)
                }
            };
            if first {
                first = false;
                api.post_start_hooks.complete(POST_START_HOOK);
            }
            let timer = tokio::time::sleep(delay);
            tokio::pin!(timer);
            loop {
                tokio::select! {
                    () = &mut timer => break,
                    () = next_reload(&mut reloaded) => break,
                    update = feed.next() => {
                        let ours = match update {
                            Update::Resync(_) => true,
                            Update::Changes(changes) => {
                                changes.iter().any(|change| change.key == KEY)
                            }
                        };
                        if ours {
                            break;
                        }
                    }
                    _ = shutdown.changed() => return,
                }
            }
        }
    });
}

/// Returns when the CA reloader reports a changed bundle. Once the reloader
/// is gone (it never runs without CA files) it is forgotten and this never
/// returns: a closed channel answers `changed()` at once, and waiting on it
/// again in a loop spun this task on every poll (a fifth of the server's
/// instructions under a create load).
async fn next_reload(reloaded: &mut Option<tokio::sync::watch::Receiver<u64>>) {
    if let Some(receiver) = reloaded {
        if receiver.changed().await.is_ok() {
            return;
        }
        *reloaded = None;
    }
    std::future::pending::<()>().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ca(name: &str) -> CertificateDer<'static> {
        let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).expect("key");
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).expect("params");
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, name);
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params.self_signed(&key).expect("cert").der().clone()
    }

    #[test]
    fn merged_with_what_is_stored_as_kube_combines() {
        let (one, two) = (ca("one"), ca("two"));
        let stored = AuthenticationInfo {
            client_ca: vec![one.clone()],
            request_header_ca: vec![one.clone()],
            username_headers: vec!["X-Remote-User".into()],
            allowed_names: vec!["old-proxy".into()],
            ..Default::default()
        };
        let required = AuthenticationInfo {
            client_ca: vec![two.clone(), one.clone()],
            request_header_ca: vec![two.clone()],
            username_headers: vec!["X-Remote-User".into(), "X-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_header_prefixes: vec!["X-Remote-Extra-".into()],
            allowed_names: vec!["front-proxy-client".into()],
            ..Default::default()
        };
        let data = stored.combined(&required, SystemTime::now()).data();
        assert_eq!(
            data["client-ca-file"],
            encode_pem(&[one.clone(), two.clone()])
        );
        assert_eq!(
            data["requestheader-client-ca-file"],
            encode_pem(&[one, two])
        );
        assert_eq!(
            data["requestheader-username-headers"],
            r#"["X-Remote-User","X-User"]"#
        );
        assert_eq!(data["requestheader-uid-headers"], "[]");
        assert_eq!(data["requestheader-group-headers"], r#"["X-Remote-Group"]"#);
        assert_eq!(
            data["requestheader-extra-headers-prefix"],
            r#"["X-Remote-Extra-"]"#
        );
        assert_eq!(
            data["requestheader-allowed-names"],
            r#"["old-proxy","front-proxy-client"]"#
        );
        // Read back, it is the same information.
        let read = AuthenticationInfo::from_data(&data).expect("decode");
        assert_eq!(read.combined(&read, SystemTime::now()).data(), data);
    }

    #[test]
    fn without_a_front_proxy_ca_only_the_client_ca_is_written() {
        let info = AuthenticationInfo {
            client_ca: vec![ca("one")],
            username_headers: vec!["X-Remote-User".into()],
            ..Default::default()
        };
        let data = info.data();
        assert_eq!(data.keys().collect::<Vec<_>>(), vec!["client-ca-file"]);
    }

    #[test]
    fn a_stored_list_that_is_not_json_is_an_error() {
        let data = BTreeMap::from([(
            "requestheader-group-headers".to_string(),
            "X-Remote-Group".to_string(),
        )]);
        assert!(AuthenticationInfo::from_data(&data).is_err());
    }

    #[tokio::test]
    async fn a_gone_reloader_is_waited_on_forever_not_polled_in_a_loop() {
        use futures::FutureExt;
        // A reloader without CA files drops its sender at once.
        let (sender, receiver) = tokio::sync::watch::channel(0u64);
        let mut reloaded = Some(receiver);
        let _ = sender.send(1);
        // A reload is reported ...
        assert_eq!(next_reload(&mut reloaded).now_or_never(), Some(()));
        drop(sender);
        // ... and once the sender is gone, nothing is: not now, not on the
        // next wait (the loop that spun answered both at once).
        assert_eq!(next_reload(&mut reloaded).now_or_never(), None);
        assert!(reloaded.is_none());
        assert_eq!(next_reload(&mut reloaded).now_or_never(), None);
    }
}
