//! The controllers' client: requests go through [`Api::handle`], the same
//! path an HTTP client takes (validation, strategies, finalizers, watch
//! events), as a system user with a kube-controller-manager User-Agent.

use std::sync::Arc;

use serde_json::Value;

use crate::api::{Api, ApiRequest, ResponseBody};
use crate::authn::UserInfo;
use crate::registry::ResourceDef;
use crate::route::Method;

/// The version in User-Agents, as `/version` reports it.
const VERSION: &str = concat!("v1.34.0-ferrokube.", env!("CARGO_PKG_VERSION"));

/// A failed request: the `Status` the server answered.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ClientError {
    pub code: u16,
    pub reason: String,
    pub message: String,
    /// `details.causes[].type`, to recognise e.g. `NamespaceTerminating`.
    pub causes: Vec<String>,
}

impl ClientError {
    pub fn is_not_found(&self) -> bool {
        self.code == 404
    }
    pub fn is_conflict(&self) -> bool {
        self.code == 409 && self.reason == "Conflict"
    }
    pub fn is_already_exists(&self) -> bool {
        self.code == 409 && self.reason == "AlreadyExists"
    }
    pub fn has_cause(&self, cause: &str) -> bool {
        self.causes.iter().any(|c| c == cause)
    }
}

pub type ClientResult<T = Value> = std::result::Result<T, ClientError>;

/// One identity talking to the in-process API.
#[derive(Clone)]
pub struct Client {
    api: Arc<Api>,
    user: UserInfo,
    user_agent: String,
}

/// The path of a collection (`name` None) or of one object.
pub fn resource_path(
    resource: &ResourceDef,
    namespace: Option<&str>,
    name: Option<&str>,
) -> String {
    let mut path = if resource.group.is_empty() {
        format!("/api/{}", resource.version)
    } else {
        format!("/apis/{}/{}", resource.group, resource.version)
    };
    if let Some(namespace) = namespace.filter(|_| resource.namespaced) {
        path.push_str("/namespaces/");
        path.push_str(namespace);
    }
    path.push('/');
    path.push_str(resource.plural);
    if let Some(name) = name {
        path.push('/');
        path.push_str(name);
    }
    path
}

impl Client {
    /// A kube-controller-manager controller using its own service account
    /// (`--use-service-account-credentials`), e.g. `generic-garbage-collector`.
    pub fn controller(api: Arc<Api>, service_account: &str) -> Client {
        let version = VERSION;
        Client {
            api,
            user: UserInfo {
                name: format!("system:serviceaccount:kube-system:{service_account}"),
                uid: String::new(),
                // Authorized by the bootstrap policy's
                // `system:controller:<name>` role, as in kube.
                groups: vec![
                    "system:serviceaccounts".into(),
                    "system:serviceaccounts:kube-system".into(),
                    "system:authenticated".into(),
                ],
                extra: Default::default(),
            },
            // client-go's DefaultKubernetesUserAgent plus the controller name
            // (kube-controller-manager's `AddUserAgent`).
            user_agent: format!(
                "kube-controller-manager/{version} (linux/amd64) kubernetes/ferrokube/{service_account}"
            ),
        }
    }

    /// kube-controller-manager's own identity (its root client), for the
    /// controllers kube runs without a service account of their own, e.g.
    /// the legacy service-account token controller; authorized by the
    /// bootstrap `system:kube-controller-manager` ClusterRole.
    pub fn controller_manager(api: Arc<Api>, controller: &str) -> Client {
        let version = VERSION;
        Client {
            api,
            user: UserInfo {
                name: "system:kube-controller-manager".into(),
                uid: String::new(),
                groups: vec!["system:authenticated".into()],
                extra: Default::default(),
            },
            user_agent: format!(
                "kube-controller-manager/{version} (linux/amd64) kubernetes/ferrokube/{controller}"
            ),
        }
    }

    /// kube-apiserver itself (its loopback client), for the objects it keeps.
    pub fn apiserver(api: Arc<Api>) -> Client {
        let version = VERSION;
        Client {
            api,
            user: UserInfo {
                name: "system:apiserver".into(),
                uid: String::new(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                extra: Default::default(),
            },
            user_agent: format!("kube-apiserver/{version} (linux/amd64) kubernetes/ferrokube"),
        }
    }

    pub fn api(&self) -> &Arc<Api> {
        &self.api
    }

    pub async fn request(
        &self,
        method: Method,
        path_and_query: &str,
        content_type: &str,
        body: Option<&Value>,
    ) -> ClientResult {
        let mut request = ApiRequest::new(method, path_and_query);
        request.user = Some(self.user.clone());
        if let Ok(agent) = http::HeaderValue::from_str(&self.user_agent) {
            request.headers.insert(http::header::USER_AGENT, agent);
        }
        request.headers.insert(
            http::header::ACCEPT,
            http::HeaderValue::from_static("application/json"),
        );
        if let Some(body) = body {
            if let Ok(value) = http::HeaderValue::from_str(content_type) {
                request.headers.insert(http::header::CONTENT_TYPE, value);
            }
            request.body = bytes::Bytes::from(serde_json::to_vec(body).unwrap_or_default());
        }
        let response = self.api.handle(request).await;
        let bytes = match &response.body {
            ResponseBody::Full(bytes) => bytes.clone(),
            ResponseBody::Segments(segments) => segments.concat(),
            ResponseBody::Stream(_) => bytes::Bytes::new(),
        };
        let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        if (200..300).contains(&response.status) {
            return Ok(value);
        }
        Err(ClientError {
            code: response.status,
            reason: value
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            message: value
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            causes: value
                .pointer("/details/causes")
                .and_then(Value::as_array)
                .map(|causes| {
                    causes
                        .iter()
                        .filter_map(|cause| cause.get("reason").and_then(Value::as_str))
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default(),
        })
    }

    pub async fn get(&self, path: &str) -> ClientResult {
        self.request(Method::Get, path, "", None).await
    }

    pub async fn create(&self, path: &str, body: &Value) -> ClientResult {
        self.request(Method::Post, path, "application/json", Some(body))
            .await
    }

    pub async fn update(&self, path: &str, body: &Value) -> ClientResult {
        self.request(Method::Put, path, "application/json", Some(body))
            .await
    }

    /// A JSON merge patch.
    pub async fn merge_patch(&self, path: &str, patch: &Value) -> ClientResult {
        self.request(
            Method::Patch,
            path,
            "application/merge-patch+json",
            Some(patch),
        )
        .await
    }

    /// Server-side apply of `body` (JSON is YAML) as `field_manager`.
    pub async fn apply(
        &self,
        path: &str,
        field_manager: &str,
        force: bool,
        body: &Value,
    ) -> ClientResult {
        let path = format!("{path}?fieldManager={field_manager}&force={force}");
        self.request(
            Method::Patch,
            &path,
            "application/apply-patch+yaml",
            Some(body),
        )
        .await
    }

    /// DELETE with a `DeleteOptions` body.
    pub async fn delete(&self, path: &str, options: &Value) -> ClientResult {
        self.request(Method::Delete, path, "application/json", Some(options))
            .await
    }
}
