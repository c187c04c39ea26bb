//! The claims of service-account tokens (`pkg/serviceaccount/claims.go`
//! `Claims`, `legacy.go` `LegacyClaims`) and the user a verified token names
//! (`apiserver/pkg/authentication/serviceaccount/util.go` `ServiceAccountInfo.UserInfo`).

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::authn::UserInfo;

/// `serviceaccount.LegacyIssuer`: the issuer of Secret-based tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// `WarnOnlyBoundTokenExpirationSeconds`: what kubelet asks for projected tokens.
pub const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;
/// `ExpirationExtensionSeconds`: one year.
pub const EXPIRATION_EXTENSION_SECONDS: i64 = 24 * 365 * 60 * 60;

pub const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";
pub const ALL_SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";

/// `MakeUsername`.
pub fn username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}")
}

/// `SplitUsername`: namespace and name of a service-account user name.
pub fn split_username(username: &str) -> Option<(&str, &str)> {
    let rest = username.strip_prefix(SERVICE_ACCOUNT_USERNAME_PREFIX)?;
    let (namespace, name) = rest.split_once(':')?;
    if namespace.is_empty() || name.is_empty() || name.contains(':') {
        return None;
    }
    Some((namespace, name))
}

/// A name and uid (`ref` in claims.go).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectRef {
    pub name: String,
    pub uid: String,
}

impl ObjectRef {
    fn to_json(&self) -> Value {
        let mut out = Map::new();
        if !self.name.is_empty() {
            out.insert("name".into(), json!(self.name));
        }
        if !self.uid.is_empty() {
            out.insert("uid".into(), json!(self.uid));
        }
        Value::Object(out)
    }

    fn from_json(value: Option<&Value>) -> Option<ObjectRef> {
        let value = value?.as_object()?;
        let text = |key: &str| {
            value
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        Some(ObjectRef {
            name: text("name"),
            uid: text("uid"),
        })
    }
}

/// What a bound token is bound to: a Pod (with the Node it runs on, when
/// known), a Secret, or a Node.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Binding {
    pub pod: Option<ObjectRef>,
    pub secret: Option<ObjectRef>,
    pub node: Option<ObjectRef>,
}

/// Everything a bound token says (`jwt.Claims` + `privateClaims`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoundClaims {
    pub issuer: String,
    pub audiences: Vec<String>,
    pub namespace: String,
    pub service_account: ObjectRef,
    pub binding: Binding,
    pub issued_at: i64,
    pub expires_at: i64,
    pub warn_after: Option<i64>,
    pub id: String,
}

impl BoundClaims {
    /// The claims as go-jose serialises them (members sorted, `aud` a list).
    pub fn to_json(&self) -> Value {
        let mut kubernetes = Map::new();
        kubernetes.insert("namespace".into(), json!(self.namespace));
        kubernetes.insert("serviceaccount".into(), self.service_account.to_json());
        for (key, reference) in [
            ("pod", &self.binding.pod),
            ("secret", &self.binding.secret),
            ("node", &self.binding.node),
        ] {
            if let Some(reference) = reference {
                kubernetes.insert(key.into(), reference.to_json());
            }
        }
        if let Some(warn_after) = self.warn_after {
            kubernetes.insert("warnafter".into(), json!(warn_after));
        }
        json!({
            "aud": self.audiences,
            "exp": self.expires_at,
            "iat": self.issued_at,
            "iss": self.issuer,
            "jti": self.id,
            "kubernetes.io": kubernetes,
            "nbf": self.issued_at,
            "sub": username(&self.namespace, &self.service_account.name),
        })
    }
}

/// The registered claims every token may carry (`jwt.Claims`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PublicClaims {
    pub issuer: String,
    pub subject: String,
    /// A string or a list of strings in the token.
    pub audiences: Vec<String>,
    pub expiry: Option<i64>,
    pub not_before: Option<i64>,
    pub issued_at: Option<i64>,
    pub id: String,
}

impl PublicClaims {
    /// Reads the registered claims; `Err` with go-jose's wording when one has
    /// the wrong type.
    pub fn read(claims: &Value) -> Result<PublicClaims, String> {
        let text = |key: &str| -> Result<String, String> {
            match claims.get(key) {
                None | Some(Value::Null) => Ok(String::new()),
                Some(Value::String(text)) => Ok(text.clone()),
                Some(_) => Err(format!("go-jose/go-jose/jwt: invalid claim {key}")),
            }
        };
        let date = |key: &str| -> Result<Option<i64>, String> {
            match claims.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(number)) => Ok(number
                    .as_i64()
                    .or_else(|| number.as_f64().map(|float| float as i64))),
                Some(_) => Err(format!("go-jose/go-jose/jwt: invalid claim {key}")),
            }
        };
        let audiences = match claims.get("aud") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(one)) => vec![one.clone()],
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| item.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| {
                    "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"
                        .to_string()
                })?,
            Some(_) => {
                return Err(
                    "go-jose/go-jose/jwt: expected string or array value to unmarshal to Audience"
                        .to_string(),
                )
            }
        };
        Ok(PublicClaims {
            issuer: text("iss")?,
            subject: text("sub")?,
            audiences,
            expiry: date("exp")?,
            not_before: date("nbf")?,
            issued_at: date("iat")?,
            id: text("jti")?,
        })
    }
}

/// The `kubernetes.io` claims of a bound token (`privateClaims`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PrivateClaims {
    pub namespace: String,
    pub service_account: ObjectRef,
    pub binding: Binding,
    pub warn_after: Option<i64>,
}

impl PrivateClaims {
    pub fn read(claims: &Value) -> PrivateClaims {
        let kubernetes = claims.get("kubernetes.io");
        let field = |key: &str| kubernetes.and_then(|k| k.get(key));
        PrivateClaims {
            namespace: field("namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            service_account: ObjectRef::from_json(field("serviceaccount")).unwrap_or_default(),
            binding: Binding {
                pod: ObjectRef::from_json(field("pod")),
                secret: ObjectRef::from_json(field("secret")),
                node: ObjectRef::from_json(field("node")),
            },
            warn_after: field("warnafter").and_then(Value::as_i64),
        }
    }
}

/// The claims of a legacy Secret-based token (`LegacyClaims`): no audience,
/// no expiry.
pub fn legacy_claims(namespace: &str, service_account: &ObjectRef, secret_name: &str) -> Value {
    json!({
        "iss": LEGACY_ISSUER,
        "kubernetes.io/serviceaccount/namespace": namespace,
        "kubernetes.io/serviceaccount/secret.name": secret_name,
        "kubernetes.io/serviceaccount/service-account.name": service_account.name,
        "kubernetes.io/serviceaccount/service-account.uid": service_account.uid,
        "sub": username(namespace, &service_account.name),
    })
}

/// `legacyPrivateClaims`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LegacyPrivateClaims {
    pub namespace: String,
    pub service_account_name: String,
    pub service_account_uid: String,
    pub secret_name: String,
}

impl LegacyPrivateClaims {
    pub fn read(claims: &Value) -> LegacyPrivateClaims {
        let text = |key: &str| {
            claims
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        LegacyPrivateClaims {
            namespace: text("kubernetes.io/serviceaccount/namespace"),
            service_account_name: text("kubernetes.io/serviceaccount/service-account.name"),
            service_account_uid: text("kubernetes.io/serviceaccount/service-account.uid"),
            secret_name: text("kubernetes.io/serviceaccount/secret.name"),
        }
    }
}

/// `ServiceAccountInfo`: who a verified token authenticates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceAccountInfo {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub pod_name: String,
    pub pod_uid: String,
    pub node_name: String,
    pub node_uid: String,
    pub credential_id: String,
}

impl ServiceAccountInfo {
    /// `UserInfo()`: `system:serviceaccount:<ns>:<name>` in
    /// `system:serviceaccounts` and `system:serviceaccounts:<ns>`, with the
    /// pod, node and credential id as extra.
    pub fn user_info(&self) -> UserInfo {
        let mut extra = BTreeMap::new();
        if !self.pod_name.is_empty() && !self.pod_uid.is_empty() {
            extra.insert(POD_NAME_KEY.to_string(), vec![self.pod_name.clone()]);
            extra.insert(POD_UID_KEY.to_string(), vec![self.pod_uid.clone()]);
        }
        if !self.credential_id.is_empty() {
            extra.insert(
                CREDENTIAL_ID_KEY.to_string(),
                vec![self.credential_id.clone()],
            );
        }
        if !self.node_name.is_empty() {
            extra.insert(NODE_NAME_KEY.to_string(), vec![self.node_name.clone()]);
            if !self.node_uid.is_empty() {
                extra.insert(NODE_UID_KEY.to_string(), vec![self.node_uid.clone()]);
            }
        }
        UserInfo {
            name: username(&self.namespace, &self.name),
            uid: self.uid.clone(),
            groups: vec![
                ALL_SERVICE_ACCOUNTS_GROUP.to_string(),
                format!("{ALL_SERVICE_ACCOUNTS_GROUP}:{}", self.namespace),
            ],
            extra,
        }
    }
}

/// `CredentialIDForJTI`.
pub fn credential_id_for_jti(jti: &str) -> String {
    if jti.is_empty() {
        String::new()
    } else {
        format!("JTI={jti}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_claims_are_kubes_shape() {
        let claims = BoundClaims {
            issuer: "https://kubernetes.default.svc.cluster.local".into(),
            audiences: vec!["https://kubernetes.default.svc.cluster.local".into()],
            namespace: "ns".into(),
            service_account: ObjectRef {
                name: "sa".into(),
                uid: "u1".into(),
            },
            binding: Binding {
                pod: Some(ObjectRef {
                    name: "p".into(),
                    uid: "u2".into(),
                }),
                secret: None,
                node: None,
            },
            issued_at: 100,
            expires_at: 3700,
            warn_after: None,
            id: "j".into(),
        };
        let json = claims.to_json();
        assert_eq!(
            serde_json::to_string(&json).unwrap(),
            r#"{"aud":["https://kubernetes.default.svc.cluster.local"],"exp":3700,"iat":100,"iss":"https://kubernetes.default.svc.cluster.local","jti":"j","kubernetes.io":{"namespace":"ns","pod":{"name":"p","uid":"u2"},"serviceaccount":{"name":"sa","uid":"u1"}},"nbf":100,"sub":"system:serviceaccount:ns:sa"}"#
        );
        let private = PrivateClaims::read(&json);
        assert_eq!(private.binding, claims.binding);
        assert_eq!(private.service_account, claims.service_account);
        let public = PublicClaims::read(&json).unwrap();
        assert_eq!(public.expiry, Some(3700));
        assert_eq!(public.audiences, claims.audiences);
        // A single audience as a string is read too.
        let single = PublicClaims::read(&json!({"aud": "x"})).unwrap();
        assert_eq!(single.audiences, vec!["x".to_string()]);
        assert!(PublicClaims::read(&json!({"exp": "soon"})).is_err());
    }

    #[test]
    fn users_of_service_accounts() {
        let info = ServiceAccountInfo {
            namespace: "ns".into(),
            name: "sa".into(),
            uid: "u".into(),
            pod_name: "p".into(),
            pod_uid: "pu".into(),
            node_name: "n".into(),
            node_uid: String::new(),
            credential_id: credential_id_for_jti("abc"),
        };
        let user = info.user_info();
        assert_eq!(user.name, "system:serviceaccount:ns:sa");
        assert_eq!(
            user.groups,
            ["system:serviceaccounts", "system:serviceaccounts:ns"]
        );
        assert_eq!(user.extra[CREDENTIAL_ID_KEY], ["JTI=abc"]);
        assert_eq!(user.extra[POD_NAME_KEY], ["p"]);
        assert_eq!(user.extra[NODE_NAME_KEY], ["n"]);
        assert!(!user.extra.contains_key(NODE_UID_KEY));
        assert_eq!(split_username(&user.name), Some(("ns", "sa")));
        assert_eq!(split_username("system:serviceaccount:ns"), None);
        assert_eq!(split_username("jane"), None);
    }
}
