//! What the hot paths read of every cached object without parsing it: the
//! name, namespace and uid (field selectors, controllers), the labels (label
//! selectors), and the lifecycle fields the garbage collector and the
//! namespace controller scan on every object (deletionTimestamp, finalizers,
//! ownerReferences).
//!
//! Built once per object version by scanning its served JSON, and mostly
//! made of byte ranges into that JSON, so a typical object's index allocates
//! nothing. The semantics are those of the `Value` accessors it replaces
//! (`meta_str`, `LabelSelector::matches`, `gc_graph::owner_refs`).

use serde_json::Value;

use super::canonical::Scanner;

/// One entry of `metadata.ownerReferences` (`gc_graph::owner_refs`: missing
/// or non-string fields read as `""`, `blockOwnerDeletion` as false).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnerRef {
    pub api_version: String,
    pub kind: String,
    pub name: String,
    pub uid: String,
    pub block_owner_deletion: bool,
}

/// A byte range of the object's JSON (`len == 0`: none).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Span {
    start: u32,
    len: u32,
}

impl Span {
    fn new(start: usize, end: usize) -> Option<Self> {
        Some(Span {
            start: u32::try_from(start).ok()?,
            len: u32::try_from(end.checked_sub(start)?).ok()?,
        })
    }

    fn get(self, json: &[u8]) -> &str {
        let range = self.start as usize..(self.start + self.len) as usize;
        json.get(range)
            .and_then(|bytes| std::str::from_utf8(bytes).ok())
            .unwrap_or("")
    }
}

/// The indexed metadata of one object version.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ObjectIndex {
    /// The contents of the name, namespace and uid strings (without quotes)
    /// when they need no unescaping; otherwise in `rare`.
    name: Span,
    namespace: Span,
    uid: Span,
    /// `metadata.labels` as raw JSON, when it is a map of strings without escapes.
    labels: Span,
    /// Where the JSON's body starts: after the type fields (list items are
    /// `{` + the bytes from here). Kept here to share the struct's padding.
    body_start: u32,
    flags: u8,
    /// Whatever an ordinary object does not have: escaped strings, lifecycle fields.
    rare: Option<Box<Rare>>,
}

const IRREGULAR: u8 = 1;
const DELETING: u8 = 2;

#[derive(Debug, Clone, PartialEq, Eq, Default)]
struct Rare {
    name: Option<String>,
    namespace: Option<String>,
    uid: Option<String>,
    /// Labels needing unescaping, sorted by key.
    labels: Option<Vec<(String, String)>>,
    finalizers: Vec<String>,
    owner_refs: Vec<OwnerRef>,
}

impl ObjectIndex {
    /// The index of an object from its served JSON (canonical serde_json
    /// output, type fields first). Malformed JSON gives an empty index.
    pub fn scan(json: &[u8]) -> Self {
        Self::try_scan(json).unwrap_or_default()
    }

    fn try_scan(json: &[u8]) -> Option<Self> {
        let text = std::str::from_utf8(json).ok()?;
        let mut metadata = None;
        Scanner::lenient(text).each_member(0, &mut |key, value| {
            if key == "metadata" {
                metadata = Some(value.start);
            }
        })?;
        Self::try_scan_metadata(text, metadata)
    }

    /// The index of served JSON whose `metadata` value starts at byte
    /// `metadata` (as the writer of the JSON knows), without scanning the rest.
    pub fn scan_metadata(json: &[u8], metadata: Option<usize>) -> Self {
        std::str::from_utf8(json)
            .ok()
            .and_then(|text| Self::try_scan_metadata(text, metadata))
            .unwrap_or_default()
    }

    fn try_scan_metadata(text: &str, metadata: Option<usize>) -> Option<Self> {
        let mut index = ObjectIndex::default();
        let Some(metadata) = metadata.filter(|at| text.as_bytes().get(*at) == Some(&b'{')) else {
            return Some(index);
        };
        let mut rare = Rare::default();
        let mut fields = Vec::new();
        Scanner::lenient(text).each_member(metadata, &mut |key, value| {
            fields.push((key, value));
        })?;
        for (key, range) in fields {
            let raw = &text[range.clone()];
            match key {
                "name" | "namespace" | "uid" => {
                    let (span, owned) = match key {
                        "name" => (&mut index.name, &mut rare.name),
                        "namespace" => (&mut index.namespace, &mut rare.namespace),
                        _ => (&mut index.uid, &mut rare.uid),
                    };
                    if !raw.starts_with('"') {
                        if key != "uid" {
                            index.flags |= IRREGULAR;
                        }
                    } else if raw.contains('\\') {
                        *owned = Some(serde_json::from_str(raw).ok()?);
                    } else {
                        *span = Span::new(range.start + 1, range.end - 1)?;
                    }
                }
                "labels" if raw.starts_with('{') => {
                    let mut all_strings = true;
                    Scanner::lenient(text).each_member(range.start, &mut |_, value| {
                        all_strings &= text.as_bytes().get(value.start) == Some(&b'"');
                    })?;
                    if !all_strings {
                        continue;
                    }
                    if raw.contains('\\') {
                        let labels: serde_json::Map<String, Value> =
                            serde_json::from_str(raw).ok()?;
                        rare.labels = Some(
                            labels
                                .into_iter()
                                .map(|(k, v)| (k, v.as_str().unwrap_or("").to_string()))
                                .collect(),
                        );
                    } else {
                        index.labels = Span::new(range.start, range.end)?;
                    }
                }
                "deletionTimestamp" if raw != "null" => index.flags |= DELETING,
                "finalizers" if raw.starts_with('[') => {
                    let list: Vec<Value> = serde_json::from_str(raw).ok()?;
                    rare.finalizers = list
                        .iter()
                        .filter_map(Value::as_str)
                        .map(str::to_string)
                        .collect();
                }
                "ownerReferences" if raw.starts_with('[') => {
                    let list: Vec<Value> = serde_json::from_str(raw).ok()?;
                    rare.owner_refs = list.iter().map(owner_ref).collect();
                }
                _ => {}
            }
        }
        if rare != Rare::default() {
            index.rare = Some(Box::new(rare));
        }
        Some(index)
    }
}

impl ObjectIndex {
    pub(super) fn set_body_start(&mut self, at: usize) {
        self.body_start = u32::try_from(at).unwrap_or(0);
    }

    pub(super) fn body_start(&self) -> usize {
        self.body_start as usize
    }
}

/// An object's index read against its JSON.
#[derive(Clone, Copy)]
pub struct IndexView<'a> {
    pub(super) json: &'a [u8],
    pub(super) index: &'a ObjectIndex,
}

impl<'a> IndexView<'a> {
    fn rare(&self) -> Option<&'a Rare> {
        self.index.rare.as_deref()
    }

    /// `metadata.name`, `""` when missing or not a string.
    pub fn name(&self) -> &'a str {
        match self.rare().and_then(|rare| rare.name.as_deref()) {
            Some(name) => name,
            None => self.index.name.get(self.json),
        }
    }

    /// `metadata.namespace`, `""` when missing or not a string.
    pub fn namespace(&self) -> &'a str {
        match self.rare().and_then(|rare| rare.namespace.as_deref()) {
            Some(namespace) => namespace,
            None => self.index.namespace.get(self.json),
        }
    }

    /// `metadata.uid`, `""` when missing or not a string.
    pub fn uid(&self) -> &'a str {
        match self.rare().and_then(|rare| rare.uid.as_deref()) {
            Some(uid) => uid,
            None => self.index.uid.get(self.json),
        }
    }

    /// Whether name and namespace are strings (or absent), so that field
    /// selectors on them can be answered from [`Self::name`] and [`Self::namespace`].
    pub fn regular(&self) -> bool {
        self.index.flags & IRREGULAR == 0
    }

    /// The value of label `key`, when the labels are a map of strings.
    pub fn label(&self, key: &str) -> Option<&'a str> {
        if let Some(labels) = self.rare().and_then(|rare| rare.labels.as_ref()) {
            return labels
                .binary_search_by(|(candidate, _)| candidate.as_str().cmp(key))
                .ok()
                .map(|found| labels[found].1.as_str());
        }
        if self.index.labels.len == 0 {
            return None;
        }
        let text = std::str::from_utf8(self.json).ok()?;
        let mut found = None;
        Scanner::lenient(text).each_member(self.index.labels.start as usize, &mut |k, value| {
            if found.is_none() && k == key {
                // Unescaped strings: the value is what is between the quotes.
                found = text.get(value.start + 1..value.end - 1);
            }
        })?;
        found
    }

    /// `metadata.labels` as a map when the index holds them (a map of
    /// strings), read without parsing the rest of the object; `None`: the
    /// object has none, or labels of another shape (read the object).
    pub fn labels_map(&self) -> Option<serde_json::Map<String, Value>> {
        if let Some(labels) = self.rare().and_then(|rare| rare.labels.as_ref()) {
            return Some(
                labels
                    .iter()
                    .map(|(key, value)| (key.clone(), Value::String(value.clone())))
                    .collect(),
            );
        }
        if self.index.labels.len == 0 {
            return None;
        }
        serde_json::from_str(self.index.labels.get(self.json)).ok()
    }

    /// `metadata.deletionTimestamp` is set (and not null).
    pub fn is_deleting(&self) -> bool {
        self.index.flags & DELETING != 0
    }

    /// The string entries of `metadata.finalizers`.
    pub fn finalizers(&self) -> &'a [String] {
        self.rare().map_or(&[], |rare| &rare.finalizers)
    }

    pub fn has_finalizer(&self, finalizer: &str) -> bool {
        self.finalizers().iter().any(|f| f == finalizer)
    }

    /// `metadata.ownerReferences`.
    pub fn owner_refs(&self) -> &'a [OwnerRef] {
        self.rare().map_or(&[], |rare| &rare.owner_refs)
    }
}

/// `gc_graph::owner_refs` for one entry.
pub fn owner_ref(owner: &Value) -> OwnerRef {
    let text = |field: &str| {
        owner
            .get(field)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    OwnerRef {
        api_version: text("apiVersion"),
        kind: text("kind"),
        name: text("name"),
        uid: text("uid"),
        block_owner_deletion: owner
            .get("blockOwnerDeletion")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn view_of<R>(object: &Value, read: impl FnOnce(IndexView<'_>) -> R) -> R {
        let json = serde_json::to_vec(object).expect("json");
        let index = ObjectIndex::scan(&json);
        read(IndexView {
            json: &json,
            index: &index,
        })
    }

    #[test]
    fn labels_map_is_the_objects_labels_or_none() {
        for labels in [
            json!({"b": "2", "a": "1", "c.d/e": ""}),
            json!({"quote": "a\"b", "x\\y": "z"}),
        ] {
            let object = json!({"metadata": {"name": "n", "labels": labels}, "spec": {"x": 1}});
            let expected = labels.as_object().cloned();
            view_of(&object, |index| assert_eq!(index.labels_map(), expected));
        }
        for metadata in [
            json!({"name": "n"}),
            json!({"name": "n", "labels": {"a": 1}}),
            json!({"name": "n", "labels": null}),
        ] {
            let object = json!({"metadata": metadata});
            view_of(&object, |index| assert_eq!(index.labels_map(), None));
        }
    }

    #[test]
    fn reads_metadata_like_the_value_accessors() {
        let object = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {
            "name": "a", "namespace": "ns", "uid": "u-1",
            "labels": {"b": "2", "a": "1", "c.d/e": ""},
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "finalizers": ["x", 3, "orphan"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "o", "uid": "ou", "blockOwnerDeletion": true}, 7],
        }});
        view_of(&object, |index| {
            assert_eq!(
                (index.name(), index.namespace(), index.uid()),
                ("a", "ns", "u-1")
            );
            assert_eq!(index.label("a"), Some("1"));
            assert_eq!(index.label("b"), Some("2"));
            assert_eq!(index.label("c.d/e"), Some(""));
            assert_eq!(index.label("c"), None);
            assert!(index.is_deleting() && index.regular());
            assert_eq!(index.finalizers(), ["x", "orphan"]);
            assert!(index.has_finalizer("orphan") && !index.has_finalizer("y"));
            assert_eq!(index.owner_refs().len(), 2);
            assert_eq!(index.owner_refs()[0].uid, "ou");
            assert!(index.owner_refs()[0].block_owner_deletion);
            assert_eq!(index.owner_refs()[1].uid, "");
        });
        let odd = json!({"metadata": {"name": 5, "labels": {"a": "1", "b": 2}, "deletionTimestamp": null, "uid": "é\"\n"}});
        view_of(&odd, |index| {
            assert_eq!(index.name(), "");
            assert_eq!(index.uid(), "é\"\n");
            assert!(!index.regular());
            assert_eq!(index.label("a"), None);
            assert!(!index.is_deleting());
        });
        let escaped = json!({"metadata": {"name": "a\\b", "labels": {"k\"": "v\\", "a": "b"}}});
        view_of(&escaped, |index| {
            assert_eq!(index.name(), "a\\b");
            assert_eq!(index.label("k\""), Some("v\\"));
            assert_eq!(index.label("a"), Some("b"));
            assert_eq!(index.label("k"), None);
        });
        for empty in [json!({}), json!({"metadata": "x"}), json!({"metadata": {}})] {
            view_of(&empty, |index| {
                assert_eq!((index.name(), index.namespace(), index.uid()), ("", "", ""));
                assert!(index.regular() && index.owner_refs().is_empty());
                assert_eq!(index.label("a"), None);
            });
        }
        assert_eq!(ObjectIndex::scan(b"{not json"), ObjectIndex::default());
    }
}
