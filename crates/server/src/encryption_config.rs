//! `--encryption-provider-config`: kube's `EncryptionConfiguration`
//! (`apiserver.config.k8s.io/v1`) loaded and validated as
//! `server/options/encryptionconfig/config.go` `loadConfig` and
//! `apis/apiserver/validation/validation_encryption.go` do, turned into the
//! store's per-key transformers (`ferrokube_store::encryption`). Providers:
//! identity, aescbc, aesgcm, secretbox; KMS is not supported.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;

use base64::Engine;
use ferrokube_store::encryption::{Cipher, KeyTransformers, Transformer};
use serde_json::Value;

use crate::status::{FieldError, FieldErrorKind};

/// Why the configuration cannot be used (the server does not start).
#[derive(Debug, thiserror::Error)]
pub enum EncryptionConfigError {
    /// kube's `LoadEncryptionConfig` wraps every `loadConfig` error so.
    #[error("error while parsing file: {0}")]
    Parse(String),
    #[error("{0}")]
    Unsupported(String),
}

/// A group and resource as the configuration names them (`secrets`,
/// `*.apps`, `*.*`): `schema.ParseGroupResource`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct GroupResource {
    group: String,
    resource: String,
}

impl GroupResource {
    fn parse(text: &str) -> GroupResource {
        match text.split_once('.') {
            Some((resource, group)) => GroupResource {
                group: group.to_string(),
                resource: resource.to_string(),
            },
            None => GroupResource {
                group: String::new(),
                resource: text.to_string(),
            },
        }
    }

    fn of(group: &str, resource: &str) -> GroupResource {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }
}

/// Reads, validates and builds the transformers of the file at `path`.
pub fn load(path: &Path) -> Result<KeyTransformers, EncryptionConfigError> {
    let parse = EncryptionConfigError::Parse;
    let shown = path.display().to_string();
    let data = std::fs::read(path).map_err(|error| {
        parse(format!(
            "error opening encryption provider configuration file {}: {error}",
            crate::go::strconv::quote(&shown)
        ))
    })?;
    if data.is_empty() {
        return Err(parse(format!(
            "encryption provider config file {} is empty",
            crate::go::strconv::quote(&shown)
        )));
    }
    let config = crate::yaml::yaml_to_json(&data).map_err(|error| {
        parse(format!(
            "error decoding encryption provider configuration file {}: {error}",
            crate::go::strconv::quote(&shown)
        ))
    })?;
    let api_version = config["apiVersion"].as_str().unwrap_or_default();
    let kind = config["kind"].as_str().unwrap_or_default();
    if api_version != "apiserver.config.k8s.io/v1" || kind != "EncryptionConfiguration" {
        return Err(parse(format!(
            "got unexpected config type: {api_version}, Kind={kind}"
        )));
    }
    let errors = validate(&config);
    if !errors.is_empty() {
        return Err(parse(crate::status::FieldError::aggregate(&errors)));
    }
    build(&config)
}

fn strings(value: &Value) -> Vec<String> {
    value
        .as_array()
        .map(|items| {
            items
                .iter()
                .map(|item| item.as_str().unwrap_or_default().to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn invalid_rendered(field: String, rendered: String, detail: &str) -> FieldError {
    FieldError {
        kind: FieldErrorKind::Invalid(rendered),
        field,
        detail: detail.to_string(),
    }
}

const PROVIDERS: [&str; 5] = ["aesgcm", "aescbc", "secretbox", "identity", "kms"];

/// `ValidateEncryptionConfiguration` (KMS fields aside).
fn validate(config: &Value) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Vec::new();
    let entries = config["resources"].as_array().unwrap_or(&empty);
    if entries.is_empty() {
        errors.push(FieldError::required(
            "resources",
            "at least one resources is required",
        ));
        return errors;
    }
    for (i, entry) in entries.iter().enumerate() {
        let r = format!("resources[{i}].resources");
        let p = format!("resources[{i}].providers");
        let resources = strings(&entry["resources"]);
        if resources.is_empty() {
            errors.push(FieldError::required(
                &r,
                format!("at least one {r} is required"),
            ));
        }
        errors.extend(validate_overlap(&resources, &r));
        errors.extend(validate_names(&resources, &r));
        let providers = entry["providers"].as_array().unwrap_or(&empty);
        if providers.is_empty() {
            errors.push(FieldError::required(
                &p,
                format!("at least one {p} is required"),
            ));
        }
        for (j, provider) in providers.iter().enumerate() {
            let path = format!("{p}[{j}]");
            let found: Vec<&str> = PROVIDERS
                .into_iter()
                .filter(|name| provider.get(name).is_some_and(|value| !value.is_null()))
                .collect();
            if found.is_empty() {
                errors.push(invalid_rendered(
                    path,
                    "apiserver.ProviderConfiguration{AESGCM:(*apiserver.AESConfiguration)(nil), AESCBC:(*apiserver.AESConfiguration)(nil), Secretbox:(*apiserver.SecretboxConfiguration)(nil), Identity:(*apiserver.IdentityConfiguration)(nil), KMS:(*apiserver.KMSConfiguration)(nil)}".into(),
                    "provider does not contain any of the expected providers: KMS, AESGCM, AESCBC, Secretbox, Identity",
                ));
                continue;
            }
            if found.len() > 1 {
                errors.push(invalid_rendered(
                    path,
                    "apiserver.ProviderConfiguration{...}".into(),
                    "more than one provider specified in a single element, should split into different list elements",
                ));
                continue;
            }
            let sizes: &[usize] = match found[0] {
                "aesgcm" | "aescbc" => &[16, 24, 32],
                "secretbox" => &[32],
                _ => continue,
            };
            let keys_path = format!("{path}.{}.keys", found[0]);
            errors.extend(validate_keys(
                &provider[found[0]]["keys"],
                &keys_path,
                sizes,
            ));
        }
    }
    errors
}

fn validate_overlap(resources: &[String], path: &str) -> Vec<FieldError> {
    if resources.len() < 2 {
        return Vec::new();
    }
    let parsed: Vec<GroupResource> = resources.iter().map(|r| GroupResource::parse(r)).collect();
    let any = GroupResource::of("*", "*");
    let (mut overlap, mut duplicate) = (false, false);
    for (i, first) in parsed.iter().enumerate() {
        for (j, second) in parsed.iter().enumerate() {
            if i == j {
                continue;
            }
            if first == second && !duplicate {
                duplicate = true;
                continue;
            }
            if overlap {
                continue;
            }
            if *first == any {
                overlap = true;
                continue;
            }
            if first.group != second.group {
                continue;
            }
            if first.resource == "*" || second.resource == "*" {
                overlap = true;
            }
        }
    }
    let rendered = crate::go::fmt::sharp_v_strings(resources);
    let mut errors = Vec::new();
    if duplicate {
        errors.push(invalid_rendered(
            path.to_string(),
            rendered.clone(),
            "the same resource cannot be specified multiple times",
        ));
    }
    if overlap {
        errors.push(invalid_rendered(
            path.to_string(),
            rendered,
            "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked",
        ));
    }
    errors
}

fn validate_names(resources: &[String], path: &str) -> Vec<FieldError> {
    let mut errors = Vec::new();
    for (j, resource) in resources.iter().enumerate() {
        let field = format!("{path}[{j}]");
        let group_resource = GroupResource::parse(resource);
        let detail = if resource.to_lowercase() != *resource {
            "resource name should not contain capital letters"
        } else if resource == "*" {
            "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"
        } else if matches!(
            resource.as_str(),
            "apiserveripinfo" | "serviceipallocations" | "servicenodeportallocations"
        ) {
            "resources which do not have REST API/s cannot be encrypted"
        } else if group_resource.group == "events.k8s.io" {
            "'*.events.k8s.io' objects are stored using the 'events' API group in etcd. Use 'events' instead in the config file"
        } else if group_resource.group == "extensions" {
            "'extensions' group has been removed and cannot be used for encryption"
        } else if group_resource.group == "*" && group_resource.resource != "*" {
            "encrypting the same resource across groups is not supported"
        } else {
            continue;
        };
        errors.push(FieldError::invalid(&field, resource, detail));
    }
    errors
}

fn validate_keys(keys: &Value, path: &str, sizes: &[usize]) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let empty = Vec::new();
    let keys = keys.as_array().unwrap_or(&empty);
    if keys.is_empty() {
        errors.push(FieldError::required(path, "at least one keys is required"));
        return errors;
    }
    for (i, key) in keys.iter().enumerate() {
        let field = format!("{path}[{i}]");
        if key["name"].as_str().unwrap_or_default().is_empty() {
            errors.push(FieldError::required(
                &format!("{field}.name"),
                "name is a mandatory field for a key",
            ));
        }
        let secret = key["secret"].as_str().unwrap_or_default();
        if secret.is_empty() {
            errors.push(FieldError::required(
                &format!("{field}.secret"),
                "secret is a mandatory field for a key",
            ));
            continue;
        }
        let secret_field = format!("{field}.secret");
        match base64::engine::general_purpose::STANDARD.decode(secret) {
            Err(_) => errors.push(FieldError::invalid(
                &secret_field,
                "REDACTED",
                "secrets must be base64 encoded",
            )),
            Ok(bytes) if !sizes.contains(&bytes.len()) => {
                let expected: Vec<String> = sizes.iter().map(ToString::to_string).collect();
                errors.push(FieldError::invalid(
                    &secret_field,
                    "REDACTED",
                    format!(
                        "secret is not of the expected length, got {}, expected one of [{}]",
                        bytes.len(),
                        expected.join(" ")
                    ),
                ));
            }
            Ok(_) => {}
        }
    }
    errors
}

/// One transformer per configuration entry; each resource takes the first
/// entry that names it (`loadConfig`: "the transformer for a resource is
/// the one found first in the config").
fn build(config: &Value) -> Result<KeyTransformers, EncryptionConfigError> {
    let mut overrides: HashMap<GroupResource, Arc<Transformer>> = HashMap::new();
    let empty = Vec::new();
    for entry in config["resources"].as_array().unwrap_or(&empty) {
        let mut transformer = Transformer::new();
        for provider in entry["providers"].as_array().unwrap_or(&empty) {
            if provider.get("kms").is_some_and(|kms| !kms.is_null()) {
                return Err(EncryptionConfigError::Unsupported(
                    "KMS providers are not supported by ferrokube".into(),
                ));
            }
            if provider
                .get("identity")
                .is_some_and(|identity| !identity.is_null())
            {
                transformer.push("identity", "", Cipher::Identity);
                continue;
            }
            for name in ["aesgcm", "aescbc", "secretbox"] {
                for key in provider[name]["keys"].as_array().unwrap_or(&empty) {
                    let key_name = key["name"].as_str().unwrap_or_default();
                    let secret = base64::engine::general_purpose::STANDARD
                        .decode(key["secret"].as_str().unwrap_or_default())
                        .unwrap_or_default();
                    let cipher = match name {
                        "aesgcm" => Cipher::aes_gcm(&secret),
                        "aescbc" => Cipher::aes_cbc(&secret),
                        _ => Cipher::secretbox(&secret),
                    }
                    .map_err(|error| EncryptionConfigError::Unsupported(error.to_string()))?;
                    transformer.push(name, key_name, cipher);
                }
            }
        }
        let transformer = Arc::new(transformer);
        for resource in strings(&entry["resources"]) {
            overrides
                .entry(GroupResource::parse(&resource))
                .or_insert_with(|| transformer.clone());
        }
    }
    Ok(Arc::new(KeySelector::new(overrides).into_function()))
}

/// Which transformer each stored key gets: the built-in resources' key
/// segments resolved once, custom resources' (`/registry/<group>/<plural>`)
/// on each call.
struct KeySelector {
    overrides: HashMap<GroupResource, Arc<Transformer>>,
    builtin: HashMap<&'static str, Arc<Transformer>>,
    identity: Arc<Transformer>,
}

impl KeySelector {
    fn new(overrides: HashMap<GroupResource, Arc<Transformer>>) -> KeySelector {
        let mut resources: HashMap<&'static str, (&'static str, &'static str)> = HashMap::new();
        for def in crate::registry::builtin_resources() {
            // One key segment served by two groups (events): the core
            // group stores it ('*.events.k8s.io' is refused above).
            let resource = resources
                .entry(def.storage)
                .or_insert((def.group, def.plural));
            if def.group.is_empty() {
                *resource = (def.group, def.plural);
            }
        }
        let mut selector = KeySelector {
            overrides,
            builtin: HashMap::new(),
            identity: Arc::new(Transformer::identity()),
        };
        for (storage, (group, plural)) in resources {
            let transformer = selector.resolve(&GroupResource::of(group, plural));
            selector.builtin.insert(storage, transformer);
        }
        selector
    }

    /// `transformerFromOverrides`: the resource, then `*.<group>`, then `*.*`.
    fn resolve(&self, resource: &GroupResource) -> Arc<Transformer> {
        self.overrides
            .get(resource)
            .or_else(|| self.overrides.get(&GroupResource::of(&resource.group, "*")))
            .or_else(|| self.overrides.get(&GroupResource::of("*", "*")))
            .cloned()
            .unwrap_or_else(|| self.identity.clone())
    }

    fn transformer_of(&self, key: &str) -> Arc<Transformer> {
        let rest = key.strip_prefix("/registry/").unwrap_or(key);
        let mut segments = rest.splitn(3, '/');
        let first = segments.next().unwrap_or_default();
        if let Some(second) = segments.next() {
            let two = &rest[..first.len() + 1 + second.len()];
            if let Some(transformer) = self.builtin.get(two) {
                return transformer.clone();
            }
            if let Some(transformer) = self.builtin.get(first) {
                return transformer.clone();
            }
            if first.contains('.') {
                return self.resolve(&GroupResource::of(first, second));
            }
        }
        self.resolve(&GroupResource::of("", first))
    }

    fn into_function(self) -> impl Fn(&str) -> Arc<Transformer> + Send + Sync {
        move |key: &str| self.transformer_of(key)
    }
}

#[cfg(test)]
#[path = "encryption_config_tests.rs"]
mod tests;
