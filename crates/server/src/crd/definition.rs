//! A stored CustomResourceDefinition read into what serving needs: per
//! served version, the resource definition the request path uses for every
//! kind and the custom-resource facts ([`CustomVersion`]) it needs besides.
//!
//! Names come from `status.acceptedNames`, as kube's `crdHandler` serves
//! them (the naming controller accepts `spec.names` there), and only an
//! Established CRD is served (`crdHandler.ServeHTTP`, the discovery controller).

use serde_json::Value;

use std::sync::Arc;

use super::conditions::condition_true;
use super::conversion::{ConversionStrategy, ReadDefaults};
use super::webhook::WebhookConversion;
use crate::registry::index::version_priority;
use crate::registry::{intern, NameRule, ResourceDef, SubresourceDef};

/// The verbs of a custom resource, in the order kube's discovery controller
/// lists them (`pkg/apiserver/customresource_discovery_controller.go`).
const VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];
/// The verbs while the CRD is terminating: nothing new may be created.
const TERMINATING_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "watch"];
const SUBRESOURCE_VERBS: &[&str] = &["get", "patch", "update"];

/// The `scale` subresource's paths (`CustomResourceSubresourceScale`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    pub label_selector: Option<String>,
}

/// One `additionalPrinterColumns` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
    pub json_path: String,
}

/// What serving one version of a custom resource needs besides its
/// [`ResourceDef`].
#[derive(Debug, Clone, PartialEq)]
pub struct CustomVersion {
    /// `<plural>.<group>`.
    pub crd_name: String,
    /// `<group>/<version>` of this version: what its objects are served as.
    pub api_version: String,
    /// The version objects are stored in (`storage: true`).
    pub storage_version: String,
    /// `<group>/<storage version>`: what objects are stored as (empty when
    /// no version is marked for storage).
    pub storage_api_version: String,
    /// `spec.conversion.strategy` (`conversion.rs`).
    pub conversion: ConversionStrategy,
    /// `spec.conversion.webhook` when the strategy is `Webhook`
    /// (`webhook.rs`; called by `api/conversion.rs`).
    pub webhook: Option<Arc<WebhookConversion>>,
    /// The schemas with defaults of every version (served or not), which a
    /// stored object gets on read at the version it is stored as; shared by
    /// all versions of the CRD.
    pub read_defaults: Arc<ReadDefaults>,
    /// Every served version, for conversion between them.
    pub served_versions: Vec<String>,
    /// The `status` subresource is enabled: the main resource ignores
    /// `status`, `/status` changes only it.
    pub status: bool,
    pub scale: Option<ScalePaths>,
    /// `selectableFields` as field labels (`spec.color` for `.spec.color`),
    /// usable in field selectors besides `metadata.name` and `metadata.namespace`.
    pub selectable_fields: Vec<String>,
    /// `additionalPrinterColumns`; empty means kube's default columns.
    pub printer_columns: Vec<PrinterColumn>,
    /// `schema.openAPIV3Schema` as JSON text: only OpenAPI publishing reads
    /// it, rarely, and a parsed tree of a 200-field schema costs ~20× its text.
    pub schema: Option<std::sync::Arc<str>>,
    /// The same schema compiled once into the schema model with its value
    /// facts: what value validation, pruning, defaulting (`schema.rs`,
    /// `value_check.rs`, `embedded.rs`) and server-side apply
    /// (`ssa_model`) read.
    pub model: Option<CompiledSchema>,
    /// The `Warning` a request to a deprecated version gets.
    pub deprecation_warning: Option<String>,
    /// The CRD is being deleted: custom resources are being removed.
    pub terminating: bool,
}

impl CustomVersion {
    /// The schema field ownership reads (structured-merge-diff's view of the
    /// CRD, as apiextensions builds it for its type converter), compiled
    /// into the schema model: the version's schema with `apiVersion` and
    /// `kind` strings and `metadata` the built-in ObjectMeta at the root, so
    /// list types and map keys (`x-kubernetes-list-type: map`,
    /// `x-kubernetes-list-map-keys`) decide who owns which list item. `None`
    /// without a schema: deduced.
    pub fn ssa_model(&self) -> Option<&crate::schema::Model> {
        self.schema_model()
    }

    /// The version's compiled schema (`None`: the version has none): its
    /// [`Model::schema_root`](crate::schema::Model::schema_root) is the
    /// schema as written, [`Model::root`](crate::schema::Model::root) the
    /// type server-side apply reads.
    pub fn schema_model(&self) -> Option<&crate::schema::Model> {
        self.model.as_ref().map(CompiledSchema::model)
    }
}

/// A version's schema compiled into the schema model
/// (`schema::compile_custom_resource`) with the CEL programs of its
/// `x-kubernetes-validations` (`cel_rules.rs`), once per CRD generation,
/// shared by the versions and the read defaults of one CRD. Derived from
/// the schema text, which equality compares: it takes no part in it itself.
#[derive(Debug, Clone)]
pub struct CompiledSchema {
    model: Arc<crate::schema::Model>,
    cel: Arc<super::cel_rules::CelRules>,
}

impl CompiledSchema {
    /// Compiles one version's `openAPIV3Schema`; `None` when it is not an
    /// object.
    pub fn compile(schema: &Value) -> Option<CompiledSchema> {
        let model = crate::schema::compile_custom_resource(schema)?;
        let cel = super::cel_rules::CelRules::compile_estimated(&model, Some(schema));
        Some(CompiledSchema {
            model: Arc::new(model),
            cel: Arc::new(cel),
        })
    }

    /// The compiled model.
    pub fn model(&self) -> &crate::schema::Model {
        &self.model
    }

    /// The compiled `x-kubernetes-validations` rules, by node.
    pub fn cel(&self) -> &super::cel_rules::CelRules {
        &self.cel
    }
}

impl PartialEq for CompiledSchema {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

/// A CRD's served versions as (definition, facts), or nothing if the CRD is
/// not Established.
pub fn served_versions(crd: &Value) -> Vec<(&'static ResourceDef, CustomVersion)> {
    if !condition_true(crd, "Established") {
        return Vec::new();
    }
    let text = |pointer: &str| crd.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    let group = text("/spec/group");
    let plural = text("/status/acceptedNames/plural");
    let kind = text("/status/acceptedNames/kind");
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return Vec::new();
    }
    let singular = match text("/status/acceptedNames/singular") {
        "" => kind.to_ascii_lowercase(),
        singular => singular.to_string(),
    };
    let strings = |pointer: &str| -> Vec<String> {
        crd.pointer(pointer)
            .and_then(Value::as_array)
            .map(|items| {
                items
                    .iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let short_names = strings("/status/acceptedNames/shortNames");
    let categories = strings("/status/acceptedNames/categories");
    let namespaced = text("/spec/scope") != "Cluster";
    let terminating = condition_true(crd, "Terminating");
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let storage_version = versions
        .iter()
        .find(|version| version.get("storage").and_then(Value::as_bool) == Some(true))
        .and_then(|version| version.get("name"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let served: Vec<&Value> = versions
        .iter()
        .filter(|version| version.get("served").and_then(Value::as_bool) == Some(true))
        .collect();
    let storage_api_version = if storage_version.is_empty() {
        String::new()
    } else {
        format!("{group}/{storage_version}")
    };
    let conversion = ConversionStrategy::of_crd(crd);
    let webhook = WebhookConversion::of_crd(crd).map(Arc::new);
    // Each version's schema compiled once, shared by serving and by
    // defaulting on read.
    let compiled: Vec<(&str, Option<CompiledSchema>)> = versions
        .iter()
        .map(|version| {
            (
                version.get("name").and_then(Value::as_str).unwrap_or(""),
                version
                    .pointer("/schema/openAPIV3Schema")
                    .and_then(CompiledSchema::compile),
            )
        })
        .collect();
    let read_defaults = Arc::new(ReadDefaults::of_compiled(group, &compiled));
    let served_names: Vec<String> = served
        .iter()
        .filter_map(|version| version.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let mut out = Vec::new();
    for version in served {
        let Some(name) = version.get("name").and_then(Value::as_str) else {
            continue;
        };
        let status = version.pointer("/subresources/status").is_some();
        let scale = version.pointer("/subresources/scale").map(|scale| {
            let path = |field: &str| scale.get(field).and_then(Value::as_str).map(str::to_string);
            ScalePaths {
                spec_replicas: path("specReplicasPath").unwrap_or_default(),
                status_replicas: path("statusReplicasPath").unwrap_or_default(),
                label_selector: path("labelSelectorPath"),
            }
        });
        let mut subresources = Vec::new();
        if scale.is_some() {
            subresources.push(SubresourceDef {
                name: "scale",
                group: "autoscaling",
                version: "v1",
                kind: "Scale",
                verbs: SUBRESOURCE_VERBS,
            });
        }
        if status {
            subresources.push(SubresourceDef {
                name: "status",
                group: intern::string(group),
                version: intern::string(name),
                kind: intern::string(kind),
                verbs: SUBRESOURCE_VERBS,
            });
        }
        let definition = intern::definition(ResourceDef {
            group: intern::string(group),
            version: intern::string(name),
            kind: intern::string(kind),
            plural: intern::string(plural),
            singular: intern::string(&singular),
            namespaced,
            verbs: if terminating {
                TERMINATING_VERBS
            } else {
                VERBS
            },
            short_names: intern::strings(&short_names),
            categories: intern::strings(&categories),
            subresources: intern::subresources(subresources),
            storage: intern::string(&format!("{group}/{plural}")),
            name_rule: NameRule::Dns1123Subdomain,
            create_on_update: false,
            has_generation: true,
            returns_deleted_object: false,
            custom: true,
        });
        let deprecation_warning =
            (version.get("deprecated").and_then(Value::as_bool) == Some(true)).then(
                || match version.get("deprecationWarning").and_then(Value::as_str) {
                    Some(warning) => warning.to_string(),
                    None => default_deprecation_warning(crd, name),
                },
            );
        out.push((
            definition,
            CustomVersion {
                crd_name: format!("{plural}.{group}"),
                api_version: format!("{group}/{name}"),
                storage_version: storage_version.clone(),
                storage_api_version: storage_api_version.clone(),
                conversion,
                webhook: webhook.clone(),
                read_defaults: read_defaults.clone(),
                served_versions: served_names.clone(),
                status,
                scale,
                selectable_fields: selectable_fields(version),
                printer_columns: printer_columns(version),
                schema: version
                    .pointer("/schema/openAPIV3Schema")
                    .map(|schema| schema.to_string().into()),
                model: compiled
                    .iter()
                    .find(|(known, _)| *known == name)
                    .and_then(|(_, model)| model.clone()),
                deprecation_warning,
                terminating,
            },
        ));
    }
    out
}

/// `defaultDeprecationWarning` (`customresource_handler.go`): the version is
/// deprecated, and the newest served, non-deprecated version above it is
/// named as the one to use.
fn default_deprecation_warning(crd: &Value, deprecated: &str) -> String {
    let text = |pointer: &str| crd.pointer(pointer).and_then(Value::as_str).unwrap_or("");
    let (group, kind) = (text("/spec/group"), text("/spec/names/kind"));
    let message = format!("{group}/{deprecated} {kind} is deprecated");
    let replacement = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|version| {
            version.get("served").and_then(Value::as_bool) == Some(true)
                && version.get("deprecated").and_then(Value::as_bool) != Some(true)
        })
        .filter_map(|version| version.get("name").and_then(Value::as_str))
        .filter(|name| version_priority(name) > version_priority(deprecated))
        .max_by_key(|name| version_priority(name));
    match replacement {
        Some(newer) => format!("{message}; use {group}/{newer} {kind}"),
        None => message,
    }
}

fn selectable_fields(version: &Value) -> Vec<String> {
    version
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(|fields| {
            fields
                .iter()
                .filter_map(|field| field.get("jsonPath").and_then(Value::as_str))
                .map(|path| path.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default()
}

fn printer_columns(version: &Value) -> Vec<PrinterColumn> {
    let Some(columns) = version
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    columns
        .iter()
        .map(|column| {
            let text = |field: &str| {
                column
                    .get(field)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            PrinterColumn {
                name: text("name"),
                type_: text("type"),
                format: text("format"),
                description: text("description"),
                priority: column.get("priority").and_then(Value::as_i64).unwrap_or(0),
                json_path: text("jsonPath"),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn deprecated_versions_name_the_newest_served_one() {
        let crd = json!({"spec": {"group": "example.com", "names": {"kind": "Widget"}, "versions": [
            {"name": "v1alpha1", "served": true, "deprecated": true},
            {"name": "v1beta1", "served": true},
            {"name": "v1", "served": true},
            {"name": "v2", "served": false},
        ]}});
        assert_eq!(
            default_deprecation_warning(&crd, "v1alpha1"),
            "example.com/v1alpha1 Widget is deprecated; use example.com/v1 Widget"
        );
        assert_eq!(
            default_deprecation_warning(&crd, "v1"),
            "example.com/v1 Widget is deprecated"
        );
    }
}
