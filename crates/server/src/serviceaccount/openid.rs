//! The service-account issuer's OIDC discovery documents
//! (`pkg/serviceaccount/openidmetadata.go`, `NewOpenIDMetadata`,
//! `routes/openidmetadata.go`): `/.well-known/openid-configuration` and
//! `/openid/v1/jwks`.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::ServiceAccountTokens;

pub const OPENID_CONFIG_PATH: &str = "/.well-known/openid-configuration";
pub const JWKS_PATH: &str = "/openid/v1/jwks";
/// `cacheControl`: both documents may be cached for an hour.
pub const CACHE_CONTROL: &str = "public, max-age=3600";
/// `mimeJWKS`.
pub const JWKS_CONTENT_TYPE: &str = "application/jwk-set+json";

/// The discovery document, or why it is not served (kube then installs no
/// route: the paths answer 404). `external_address` is `host:port` of this
/// server, the default `jwks_uri`'s host.
pub fn openid_configuration(
    tokens: &ServiceAccountTokens,
    external_address: &str,
) -> Result<Value, String> {
    let issuer = tokens.issuer();
    let https_url = |text: &str| {
        text.strip_prefix("https://")
            .is_some_and(|rest| !rest.is_empty() && !rest.contains(['?', '#']))
    };
    if !https_url(issuer) {
        return Err(format!("issuer URL must use https scheme, got: {issuer}"));
    }
    let jwks_uri = match tokens.jwks_uri() {
        Some(uri) if !https_url(uri) => {
            return Err(format!("jwks_uri must use https scheme, got: {uri}"));
        }
        Some(uri) => uri.to_string(),
        None => format!("https://{external_address}{JWKS_PATH}"),
    };
    let algorithms: BTreeSet<&str> = tokens
        .keys()
        .iter()
        .map(|key| key.algorithm().name())
        .collect();
    Ok(json!({
        "issuer": issuer,
        "jwks_uri": jwks_uri,
        "response_types_supported": ["id_token"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": algorithms,
    }))
}

/// The JSON Web Key Set of every verification key (`publicJWKSFromKeys`).
pub fn jwks(tokens: &ServiceAccountTokens) -> Value {
    let keys: Vec<Value> = tokens.keys().iter().map(|key| key.jwk()).collect();
    json!({ "keys": keys })
}

/// Serialises `value` with members in the order Go's struct declares them
/// (serde_json would sort them).
pub fn openid_configuration_bytes(value: &Value) -> Vec<u8> {
    let field = |key: &str| serde_json::to_string(&value[key]).unwrap_or_default();
    format!(
        r#"{{"issuer":{},"jwks_uri":{},"response_types_supported":{},"subject_types_supported":{},"id_token_signing_alg_values_supported":{}}}"#,
        field("issuer"),
        field("jwks_uri"),
        field("response_types_supported"),
        field("subject_types_supported"),
        field("id_token_signing_alg_values_supported"),
    )
    .into_bytes()
}

/// The JWKS with each key's members in go-jose's order.
pub fn jwks_bytes(tokens: &ServiceAccountTokens) -> Vec<u8> {
    let keys: Vec<String> = tokens
        .keys()
        .iter()
        .map(|key| {
            let jwk = key.jwk();
            let members: Vec<String> = jwk
                .as_object()
                .map(|object| {
                    ["use", "kty", "kid", "crv", "alg", "n", "e", "x", "y"]
                        .iter()
                        .filter_map(|name| {
                            object.get(*name).map(|member| {
                                format!(
                                    "{}:{}",
                                    serde_json::to_string(name).unwrap_or_default(),
                                    serde_json::to_string(member).unwrap_or_default()
                                )
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            format!("{{{}}}", members.join(","))
        })
        .collect();
    format!(r#"{{"keys":[{}]}}"#, keys.join(",")).into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serviceaccount::{ServiceAccountOptions, ServiceAccountTokens};

    #[test]
    fn documents_have_kubes_shape() {
        let tokens = ServiceAccountTokens::ephemeral().unwrap();
        let config = openid_configuration(&tokens, "127.0.0.1:6443").unwrap();
        let text = String::from_utf8(openid_configuration_bytes(&config)).unwrap();
        assert_eq!(
            text,
            r#"{"issuer":"https://kubernetes.default.svc.cluster.local","jwks_uri":"https://127.0.0.1:6443/openid/v1/jwks","response_types_supported":["id_token"],"subject_types_supported":["public"],"id_token_signing_alg_values_supported":["ES256"]}"#
        );
        let jwks: Value = serde_json::from_slice(&jwks_bytes(&tokens)).unwrap();
        assert_eq!(jwks, super::jwks(&tokens));
        assert_eq!(jwks["keys"][0]["kid"], tokens.keys()[0].key_id());
        let text = String::from_utf8(jwks_bytes(&tokens)).unwrap();
        assert!(
            text.starts_with(r#"{"keys":[{"use":"sig","kty":"EC","kid":"#),
            "{text}"
        );
    }

    #[test]
    fn issuers_that_are_not_https_urls_publish_nothing() {
        let options = ServiceAccountOptions {
            issuers: vec!["ferrokube".into()],
            ..Default::default()
        };
        let tokens = ServiceAccountTokens::load(&options, None).unwrap();
        assert_eq!(
            openid_configuration(&tokens, "h:1").unwrap_err(),
            "issuer URL must use https scheme, got: ferrokube"
        );
        let options = ServiceAccountOptions {
            jwks_uri: Some("https://example.com/keys".into()),
            ..Default::default()
        };
        let tokens = ServiceAccountTokens::load(&options, None).unwrap();
        assert_eq!(
            openid_configuration(&tokens, "h:1").unwrap()["jwks_uri"],
            "https://example.com/keys"
        );
    }
}
