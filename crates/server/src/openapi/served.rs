//! The documents served for one registry snapshot: the built-in documents
//! (built once per process by [`OpenApi`]) plus what the custom resources of
//! established CRDs add, as apiextensions-apiserver's OpenAPI controllers
//! publish them (`pkg/controller/openapi/controller.go` merges each CRD's v2
//! spec into the static one; `pkg/controller/openapiv3/controller.go` serves
//! one document per custom group version).
//!
//! The custom part is cached per snapshot: [`CustomDocs`] remembers the
//! registry it was made for (a `Weak`, so the allocation cannot be reused by
//! a later snapshot) and the first request after a swap starts afresh. A
//! snapshot without custom resources serves the built-in documents as they
//! are; a built-in document is never rebuilt. ETags and `?hash=` are content
//! hashes, so they change exactly when a published schema does (kube uses a
//! random ETag per merge for v2; a hash is stable across replicas).

use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError, Weak};

use serde_json::{Map, Value};

use super::custom_paths::{custom_paths, definition_names};
use super::custom_schema::{list_schema, object_schema, Flavor};
use super::document::{cached, Cached};
use super::paths::{gv_path, PathItem};
use super::{definitions, v2, v2_protobuf, v3, Document, OpenApi, OpenApiError};
use crate::crd::CustomVersion;
use crate::registry::{Registry, ResourceDef};

/// What one registry snapshot adds to the built-in documents.
pub(crate) struct CustomDocs {
    registry: Weak<Registry>,
    /// Every served version of every established CRD, in registry order.
    kinds: Vec<(&'static ResourceDef, Arc<CustomVersion>)>,
    /// `/openapi/v3/<key>` documents holding custom resources.
    v3: BTreeMap<String, Cached>,
    v2: Cached,
    v2_protobuf: Cached,
    v3_index: Cached,
}

impl CustomDocs {
    fn new(registry: &Arc<Registry>) -> Self {
        let kinds: Vec<_> = registry
            .resources()
            .iter()
            .filter(|def| def.custom)
            .filter_map(|def| Some((*def, registry.custom(def)?.clone())))
            .collect();
        let v3 = kinds
            .iter()
            .map(|(def, _)| (gv_path(def.group, def.version), Cached::new()))
            .collect();
        CustomDocs {
            registry: Arc::downgrade(registry),
            kinds,
            v3,
            v2: Cached::new(),
            v2_protobuf: Cached::new(),
            v3_index: Cached::new(),
        }
    }

    fn is_for(&self, registry: &Arc<Registry>) -> bool {
        std::ptr::eq(self.registry.as_ptr(), Arc::as_ptr(registry))
    }

    /// The custom kinds' paths and definitions, for one flavor of document.
    fn parts<'a>(
        &'a self,
        flavor: Flavor,
        mut keep: impl FnMut(&ResourceDef) -> bool + 'a,
    ) -> (Vec<PathItem>, Map<String, Value>) {
        let mut items = Vec::new();
        let mut definitions = Map::new();
        for (def, custom) in self.kinds.iter().filter(|(def, _)| keep(def)) {
            items.extend(custom_paths(def));
            let schema: Option<Value> = custom
                .schema
                .as_deref()
                .and_then(|text| serde_json::from_str(text).ok());
            let (object, list) = definition_names(def);
            definitions.insert(
                object,
                object_schema(def.group, def.version, def.kind, schema.as_ref(), flavor),
            );
            definitions.insert(
                list,
                list_schema(
                    def.group,
                    def.version,
                    def.kind,
                    &def.list_kind(),
                    def.plural,
                    flavor,
                ),
            );
        }
        (items, definitions)
    }
}

impl OpenApi {
    /// The custom part for `registry`, made on the first request after a swap.
    fn custom_docs(&self, registry: &Arc<Registry>) -> Arc<CustomDocs> {
        let mut slot = self.custom.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(docs) = slot.as_ref().filter(|docs| docs.is_for(registry)) {
            return docs.clone();
        }
        let docs = Arc::new(CustomDocs::new(registry));
        *slot = Some(docs.clone());
        docs
    }

    /// `/openapi/v2` as served with `registry`.
    pub fn v2_served(&self, registry: &Arc<Registry>) -> Result<Document, OpenApiError> {
        let docs = self.custom_docs(registry);
        self.v2_with(&docs).cloned()
    }

    fn v2_with<'a>(&'a self, docs: &'a CustomDocs) -> Result<&'a Document, OpenApiError> {
        if docs.kinds.is_empty() {
            return self.v2();
        }
        cached(&docs.v2, || {
            // The built-in document is parsed back rather than kept as a
            // tree for the life of the process: this runs once per snapshot.
            let base: Value = serde_json::from_slice(&self.v2()?.json)
                .map_err(|err| OpenApiError::Serialize(err.to_string()))?;
            let (items, definitions_v2) = docs.parts(Flavor::V2, |_| true);
            Document::from_value(&v2::merge(base, &items, definitions_v2, definitions()?))
        })
    }

    /// `/openapi/v2` as protobuf, served with `registry` (same content as
    /// [`v2_served`](Self::v2_served), same ETag).
    pub fn v2_protobuf_served(&self, registry: &Arc<Registry>) -> Result<Document, OpenApiError> {
        let docs = self.custom_docs(registry);
        if docs.kinds.is_empty() {
            return self.v2_protobuf().cloned();
        }
        cached(&docs.v2_protobuf, || {
            v2_protobuf::document(self.v2_with(&docs)?)
        })
        .cloned()
    }

    /// `/openapi/v3`, served with `registry`: the built-in documents and
    /// every custom group version, each with the hash of its content.
    pub fn v3_index_served(&self, registry: &Arc<Registry>) -> Result<Document, OpenApiError> {
        let docs = self.custom_docs(registry);
        if docs.kinds.is_empty() {
            return self.v3_index().cloned();
        }
        cached(&docs.v3_index, || {
            let mut keys: Vec<&str> = self.routes()?.keys().map(String::as_str).collect();
            keys.extend(docs.v3.keys().map(String::as_str));
            keys.sort_unstable();
            keys.dedup();
            let mut entries = Vec::with_capacity(keys.len());
            for key in keys {
                if let Some(doc) = self.v3_with(&docs, key)? {
                    entries.push((key, doc.hash.as_str()));
                }
            }
            Document::from_value(&v3::index(entries))
        })
        .cloned()
    }

    /// `/openapi/v3/<gv_path>` served with `registry`; `None` when not served.
    pub fn v3_group_version_served(
        &self,
        registry: &Arc<Registry>,
        gv_path: &str,
    ) -> Result<Option<Document>, OpenApiError> {
        let docs = self.custom_docs(registry);
        Ok(self.v3_with(&docs, gv_path)?.cloned())
    }

    fn v3_with<'a>(
        &'a self,
        docs: &'a CustomDocs,
        key: &str,
    ) -> Result<Option<&'a Document>, OpenApiError> {
        let Some(slot) = docs.v3.get(key) else {
            return self.v3_group_version(key);
        };
        cached(slot, || {
            // A CRD may add kinds to a built-in group version: both are documented.
            let mut items = self.routes()?.get(key).cloned().unwrap_or_default();
            let (custom_items, schemas) =
                docs.parts(Flavor::V3, |def| gv_path(def.group, def.version) == key);
            items.extend(custom_items);
            Document::from_value(&v3::document_with(key, &items, definitions()?, schemas))
        })
        .map(Some)
    }
}

#[cfg(test)]
#[path = "served_tests.rs"]
mod tests;
