//! The served JSON of a stored object, produced from its stored bytes without
//! building a `serde_json::Value` tree.
//!
//! The store holds `serde_json::to_vec(Value)` of each object: compact, every
//! map in `BTreeMap` (byte) order, strings escaped the way serde_json escapes
//! them. For such *canonical* bytes, parsing and re-encoding gives the same
//! bytes back, so the served form (`apiVersion` and `kind` first,
//! `metadata.resourceVersion` set) is a reordering of the top-level members
//! plus one splice into `metadata`. [`Scanner`] validates that the input is
//! canonical (anything else — whitespace, floats, `\/` or `\u0041` escapes,
//! unsorted or duplicate keys, escaped keys, deep nesting — makes it decline,
//! and the caller takes the `Value` path), so the output is byte-for-byte what
//! `Encoded::from_value` writes for the parsed object.

use std::ops::Range;

#[cfg(test)]
use serde_json::Value;

use super::index::ObjectIndex;

/// Deeper than this the scanner declines (serde_json's own limit is 128).
const MAX_DEPTH: u32 = 100;

/// One member of a scanned object: its key (no escapes) and the byte range of
/// its raw value.
#[derive(Debug)]
struct Member<'a> {
    key: &'a str,
    value: Range<usize>,
}

/// The served JSON of `stored` with `metadata.resourceVersion` set to
/// `revision` (exactly sized), the offset of its first non-type member, and
/// the index; `None` when `stored` is not canonical.
pub fn stamp(stored: &[u8], revision: i64) -> Option<(Box<[u8]>, usize, ObjectIndex)> {
    let text = std::str::from_utf8(stored).ok()?;
    let members = Scanner::strict(text).top_level()?;
    let version = revision.to_string();
    let metadata = members.iter().find(|m| m.key == "metadata");
    let metadata_members = match metadata {
        Some(member) if text.as_bytes()[member.value.start] == b'{' => {
            let mut found = Vec::new();
            Scanner::strict(text).each_member(member.value.start, &mut |key, value| {
                found.push(Member { key, value })
            })?;
            found
        }
        // Missing or not a map: the Value path replaces it with a new map.
        _ => Vec::new(),
    };

    let mut out = Vec::with_capacity(stored.len() + version.len() + 24);
    out.push(b'{');
    let mut first = true;
    for key in ["apiVersion", "kind"] {
        if let Some(member) = members.iter().find(|m| m.key == key) {
            write_member(&mut out, &mut first, key, &text[member.value.clone()]);
        }
    }
    let mut body_start = None;
    let mut begin_body = |out: &mut Vec<u8>, first: &mut bool| {
        if body_start.is_none() {
            if !*first {
                out.push(b',');
                *first = true;
            }
            body_start = Some(out.len());
        }
    };
    let mut metadata_at = 0;
    let mut write_metadata = |out: &mut Vec<u8>, first: &mut bool| {
        write_key(out, first, "metadata");
        metadata_at = out.len();
        write_metadata(out, text, &metadata_members, &version);
    };
    let mut metadata_written = false;
    for member in members
        .iter()
        .filter(|m| m.key != "apiVersion" && m.key != "kind")
    {
        if !metadata_written && member.key >= "metadata" {
            begin_body(&mut out, &mut first);
            write_metadata(&mut out, &mut first);
            metadata_written = true;
            if member.key == "metadata" {
                continue;
            }
        }
        begin_body(&mut out, &mut first);
        write_member(
            &mut out,
            &mut first,
            member.key,
            &text[member.value.clone()],
        );
    }
    if !metadata_written {
        begin_body(&mut out, &mut first);
        write_metadata(&mut out, &mut first);
    }
    let body_start = body_start.unwrap_or(out.len());
    out.push(b'}');
    let index = ObjectIndex::scan_metadata(&out, Some(metadata_at));
    // Shrinking in place: the cache keeps exactly the bytes.
    Some((out.into_boxed_slice(), body_start, index))
}

/// `apiVersion` and `kind` of canonical served JSON (their values when they
/// are strings, `""` otherwise), read from its first members only.
pub fn type_fields(json: &[u8]) -> Option<(String, String)> {
    let text = std::str::from_utf8(json).ok()?;
    let mut scanner = Scanner::lenient(text);
    let (mut api_version, mut kind) = (String::new(), String::new());
    if !scanner.eat(b'{') {
        return None;
    }
    while let Some(key) = scanner.key() {
        if !scanner.eat(b':') {
            return None;
        }
        let start = scanner.pos;
        scanner.value(1)?;
        let raw = &text[start..scanner.pos];
        let target = match key {
            "apiVersion" => &mut api_version,
            "kind" => &mut kind,
            // The type fields come first; nothing after them matters.
            _ => break,
        };
        if raw.starts_with('"') {
            *target = serde_json::from_str(raw).ok()?;
        }
        if !scanner.eat(b',') {
            break;
        }
    }
    Some((api_version, kind))
}

fn write_key(out: &mut Vec<u8>, first: &mut bool, key: &str) {
    if !*first {
        out.push(b',');
    }
    *first = false;
    out.push(b'"');
    out.extend_from_slice(key.as_bytes());
    out.extend_from_slice(b"\":");
}

fn write_member(out: &mut Vec<u8>, first: &mut bool, key: &str, raw: &str) {
    write_key(out, first, key);
    out.extend_from_slice(raw.as_bytes());
}

/// `metadata` with `"resourceVersion":"<version>"` at its sorted place
/// (replacing one already there).
fn write_metadata(out: &mut Vec<u8>, text: &str, members: &[Member<'_>], version: &str) {
    out.push(b'{');
    let mut first = true;
    let mut written = false;
    let write_version = |out: &mut Vec<u8>, first: &mut bool| {
        write_key(out, first, "resourceVersion");
        out.push(b'"');
        out.extend_from_slice(version.as_bytes());
        out.push(b'"');
    };
    for member in members {
        if !written && member.key >= "resourceVersion" {
            write_version(out, &mut first);
            written = true;
            if member.key == "resourceVersion" {
                continue;
            }
        }
        write_member(out, &mut first, member.key, &text[member.value.clone()]);
    }
    if !written {
        write_version(out, &mut first);
    }
    out.push(b'}');
}

/// A scanner of JSON. Strict, it validates canonical serde_json output and
/// declines anything else; lenient, it only finds its way through valid JSON
/// (served JSON: type fields first, any number form, any escape).
pub(super) struct Scanner<'a> {
    text: &'a str,
    pos: usize,
    strict: bool,
}

impl<'a> Scanner<'a> {
    pub(super) fn strict(text: &'a str) -> Self {
        Scanner {
            text,
            pos: 0,
            strict: true,
        }
    }

    pub(super) fn lenient(text: &'a str) -> Self {
        Scanner {
            text,
            pos: 0,
            strict: false,
        }
    }

    /// Calls `each` with the key (raw, as written between the quotes) and the
    /// value's byte range of every member of the object starting at `start`.
    pub(super) fn each_member(
        mut self,
        start: usize,
        each: &mut dyn FnMut(&'a str, Range<usize>),
    ) -> Option<()> {
        self.pos = start;
        self.object(1, each)
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let matched = self.peek() == Some(byte);
        if matched {
            self.pos += 1;
        }
        matched
    }

    /// The whole input as one object: its top-level members.
    fn top_level(mut self) -> Option<Vec<Member<'a>>> {
        if self.peek() != Some(b'{') {
            return None;
        }
        let mut members = Vec::new();
        self.object_with(1, true, &mut |key, value| {
            members.push(Member { key, value })
        })?;
        (self.pos == self.text.len()).then_some(members)
    }

    fn value(&mut self, depth: u32) -> Option<()> {
        match self.peek()? {
            b'{' => self.object(depth + 1, &mut |_, _| {}),
            b'[' => self.array(depth + 1),
            b'"' => self.string(),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'n' => self.literal("null"),
            b'-' | b'0'..=b'9' => self.number(),
            _ => None,
        }
    }

    /// An object with strictly increasing, unescaped keys; `each` gets every
    /// member. Starts at `{`.
    fn object(&mut self, depth: u32, each: &mut dyn FnMut(&'a str, Range<usize>)) -> Option<()> {
        self.object_with(depth, false, each)
    }

    /// [`Self::object`]; with `types_first`, `apiVersion` and `kind` may come
    /// first, out of order (served JSON), but still only once.
    fn object_with(
        &mut self,
        depth: u32,
        types_first: bool,
        each: &mut dyn FnMut(&'a str, Range<usize>),
    ) -> Option<()> {
        if depth > MAX_DEPTH || !self.eat(b'{') {
            return None;
        }
        if self.eat(b'}') {
            return Some(());
        }
        let mut previous: Option<&str> = None;
        let mut types_seen = [false; 2];
        loop {
            let key = self.key()?;
            let type_field = match key {
                "apiVersion" if types_first => Some(0),
                "kind" if types_first => Some(1),
                _ => None,
            };
            if let Some(which) = type_field {
                if std::mem::replace(&mut types_seen[which], true) {
                    return None;
                }
            } else {
                if self.strict
                    && previous.is_some_and(|previous| previous.as_bytes() >= key.as_bytes())
                {
                    return None;
                }
                previous = Some(key);
            }
            if !self.eat(b':') {
                return None;
            }
            let start = self.pos;
            self.value(depth)?;
            each(key, start..self.pos);
            if self.eat(b'}') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    fn array(&mut self, depth: u32) -> Option<()> {
        if depth > MAX_DEPTH || !self.eat(b'[') {
            return None;
        }
        if self.eat(b']') {
            return Some(());
        }
        loop {
            self.value(depth)?;
            if self.eat(b']') {
                return Some(());
            }
            if !self.eat(b',') {
                return None;
            }
        }
    }

    /// A key's text between the quotes; strict, without escapes.
    fn key(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.pos;
        let bytes = self.text.as_bytes();
        loop {
            match *bytes.get(self.pos)? {
                b'"' => break,
                b'\\' if self.strict => return None,
                b'\\' => self.pos += 2,
                byte if byte < 0x20 => return None,
                _ => self.pos += 1,
            }
        }
        let key = &self.text[start..self.pos];
        self.pos += 1;
        Some(key)
    }

    /// A string escaped exactly as serde_json escapes: `\"`, `\\`, the short
    /// forms of `\b\t\n\f\r`, and `\u00xx` (lowercase) for other control bytes.
    fn string(&mut self) -> Option<()> {
        if !self.eat(b'"') {
            return None;
        }
        let bytes = self.text.as_bytes();
        loop {
            match *bytes.get(self.pos)? {
                b'"' => {
                    self.pos += 1;
                    return Some(());
                }
                b'\\' if !self.strict => self.pos += 2,
                b'\\' => match *bytes.get(self.pos + 1)? {
                    b'"' | b'\\' | b'b' | b't' | b'n' | b'f' | b'r' => self.pos += 2,
                    b'u' => {
                        let hex = bytes.get(self.pos + 2..self.pos + 6)?;
                        let lower_hex = |b: &u8| matches!(b, b'0'..=b'9' | b'a'..=b'f');
                        if &hex[..2] != b"00" || !hex[2..].iter().all(lower_hex) {
                            return None;
                        }
                        let code =
                            u8::from_str_radix(std::str::from_utf8(&hex[2..]).ok()?, 16).ok()?;
                        if code >= 0x20 || matches!(code, 0x08 | 0x09 | 0x0a | 0x0c | 0x0d) {
                            return None;
                        }
                        self.pos += 6;
                    }
                    _ => return None,
                },
                byte if byte < 0x20 => return None,
                _ => self.pos += 1,
            }
        }
    }

    /// An integer serde_json keeps as an integer (u64, or i64 when negative)
    /// and writes back the same; floats and `-0` decline.
    fn number(&mut self) -> Option<()> {
        if !self.strict {
            let rest = &self.text.as_bytes()[self.pos..];
            let len = rest
                .iter()
                .position(|b| !matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                .unwrap_or(rest.len());
            self.pos += len;
            return (len > 0).then_some(());
        }
        let start = self.pos;
        let negative = self.eat(b'-');
        let bytes = self.text.as_bytes();
        let digits = self.pos;
        while self.peek().is_some_and(|b| b.is_ascii_digit()) {
            self.pos += 1;
        }
        let number = &self.text[digits..self.pos];
        if number.is_empty()
            || (number.len() > 1 && number.starts_with('0'))
            || matches!(bytes.get(self.pos), Some(b'.' | b'e' | b'E'))
        {
            return None;
        }
        if negative {
            if number == "0" {
                return None;
            }
            self.text[start..self.pos].parse::<i64>().ok()?;
        } else {
            number.parse::<u64>().ok()?;
        }
        Some(())
    }

    fn literal(&mut self, word: &str) -> Option<()> {
        if self.text[self.pos..].starts_with(word) {
            self.pos += word.len();
            Some(())
        } else {
            None
        }
    }
}

/// The served bytes of a parsed object, for comparisons in tests.
#[cfg(test)]
pub fn value_path(stored: &[u8], revision: i64) -> Option<(Vec<u8>, usize, ObjectIndex)> {
    let mut value: Value = serde_json::from_slice(stored).ok()?;
    if !value.is_object() {
        return None;
    }
    super::set_resource_version(&mut value, revision);
    let encoded = super::Encoded::from_value(&value);
    let index = ObjectIndex::scan(&encoded.bytes);
    Some((encoded.bytes.to_vec(), encoded.body_start, index))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Map};

    fn same_as_value_path(stored: &[u8]) {
        let fast = stamp(stored, 42).unwrap_or_else(|| {
            panic!(
                "declined canonical input {}",
                String::from_utf8_lossy(stored)
            )
        });
        let slow = value_path(stored, 42).expect("valid object");
        assert_eq!(
            String::from_utf8_lossy(&fast.0),
            String::from_utf8_lossy(&slow.0),
            "input {}",
            String::from_utf8_lossy(stored)
        );
        assert_eq!(
            fast.1,
            slow.1,
            "body_start of {}",
            String::from_utf8_lossy(stored)
        );
        assert_eq!(
            fast.2,
            slow.2,
            "index of {}",
            String::from_utf8_lossy(stored)
        );
        index_reads_like_the_tree(&fast.0, &fast.2);
    }

    /// The index answers what the `Value` accessors answer on the parsed object.
    fn index_reads_like_the_tree(json: &[u8], index: &ObjectIndex) {
        use crate::object::{labels, meta_str, IndexView};
        let value: Value = serde_json::from_slice(json).expect("json");
        let view = IndexView { json, index };
        for field in ["name", "namespace", "uid"] {
            let indexed = match field {
                "name" => view.name(),
                "namespace" => view.namespace(),
                _ => view.uid(),
            };
            assert_eq!(indexed, meta_str(&value, field), "{field} of {value}");
        }
        let tree_labels = labels(&value).filter(|m| m.values().all(Value::is_string));
        for key in ["name", "a", "z", "", "é", "labels", "m"] {
            let expected = tree_labels.and_then(|m| m.get(key)).and_then(Value::as_str);
            assert_eq!(view.label(key), expected, "label {key} of {value}");
        }
        let deleting = value
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|stamp| !stamp.is_null());
        assert_eq!(view.is_deleting(), deleting, "{value}");
        let owners: Vec<_> = value
            .pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .map(|refs| refs.iter().map(super::super::index::owner_ref).collect())
            .unwrap_or_default();
        assert_eq!(view.owner_refs(), &owners[..], "{value}");
        let finalizers: Vec<&str> = value
            .pointer("/metadata/finalizers")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(view.finalizers(), &finalizers[..], "{value}");
        let regular = ["name", "namespace"].iter().all(|field| {
            super::super::metadata(&value)
                .and_then(|m| m.get(*field))
                .is_none_or(Value::is_string)
        });
        assert_eq!(view.regular(), regular, "{value}");
    }

    /// Canonical input (what the store writes): the fast path must accept it
    /// and produce exactly the Value path's bytes.
    #[test]
    fn matches_the_value_path_on_canonical_objects() {
        let objects = [
            json!({}),
            json!({"apiVersion": "v1"}),
            json!({"kind": "ConfigMap"}),
            json!({"apiVersion": "v1", "kind": "ConfigMap"}),
            json!({"a": 1}),
            json!({"zzz": true, "a": null}),
            json!({"metadata": {}}),
            json!({"metadata": {"name": "a"}}),
            json!({"metadata": "not a map", "kind": "X"}),
            json!({"metadata": [1, 2], "apiVersion": "v1"}),
            json!({"metadata": null}),
            json!({"metadata": {"resourceVersion": "5", "name": "a"}}),
            json!({"metadata": {"resourceVersion": 5}}),
            json!({"metadata": {"resourceVersio": "x", "resourceVersiona": "y", "resourceversion": 1, "a": 1, "z": 2}}),
            json!({"metadata": {"uid": "u", "selfLink": "s"}}),
            json!({"m": 1, "metadat": 2, "metadata_": 3, "n": {}}),
            json!({"m": 1, "n": 2}),
            json!({"Metadata": 1, "a": 2}),
            json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "data": {"k": "v", "esc": "quote\" back\\ nl\n tab\t cr\r bs\u{8} ff\u{c} nul\u{0} us\u{1f} del\u{7f} slash/"},
                "metadata": {
                    "name": "a", "namespace": "default", "uid": "1234",
                    "labels": {"app": "x", "tier": "y"},
                    "annotations": {"ünïcödé": "日本語 🎉", "e\u{301}": "combining"},
                    "creationTimestamp": "2026-01-01T00:00:00Z",
                    "managedFields": [{"manager": "m", "fieldsV1": {"f:data": {".": {}, "f:k": {}}}}],
                },
            }),
            json!({
                "kind": "Pod", "apiVersion": "v1",
                "metadata": {"name": "p", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["orphan", "foregroundDeletion"],
                    "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "o1", "blockOwnerDeletion": true}]},
                "spec": {"containers": [{"name": "c", "ports": [{"containerPort": 80}], "args": [], "env": [{}]}], "priority": -5, "big": u64::MAX, "small": i64::MIN, "zero": 0},
                "status": {"phase": "Running"},
            }),
            json!({"metadata": {"name": 5, "namespace": true, "labels": {"a": 1}}}),
            json!({"metadata": {"name": "x", "labels": "nope", "finalizers": "nope", "ownerReferences": {}}}),
            json!({"apiVersion": 1, "kind": ["x"], "b": {"c": {"d": {"e": [[[]]]}}}}),
        ];
        for object in objects {
            same_as_value_path(&serde_json::to_vec(&object).expect("json"));
        }
        // The stored form of a served object round-trips too.
        let served = stamp(br#"{"kind":"X","metadata":{"name":"a"}}"#, 9).expect("canonical");
        let restamped = stamp(&served.0, 10).map(|s| s.0);
        let expected = br#"{"kind":"X","metadata":{"name":"a","resourceVersion":"10"}}"#;
        assert_eq!(restamped.as_deref(), Some(&expected[..]));
        // Type fields anywhere (served JSON has them first) are accepted once each.
        for served in [
            &br#"{"kind":"X","apiVersion":"v1","a":1,"metadata":{"resourceVersion":"3"}}"#[..],
            br#"{"apiVersion":"v1","kind":"X","a":1}"#,
            br#"{"a":1,"kind":"X","b":2,"apiVersion":"v1"}"#,
        ] {
            same_as_value_path(served);
        }
        for twice in [
            &br#"{"kind":"X","kind":"Y"}"#[..],
            br#"{"apiVersion":"v1","a":1,"apiVersion":"v2"}"#,
        ] {
            assert!(stamp(twice, 1).is_none());
        }
    }

    /// Input serde_json would normalise: the fast path declines.
    #[test]
    fn declines_what_reencoding_would_change() {
        let inputs: [&[u8]; 24] = [
            br#" {"a":1}"#,
            br#"{"a":1} "#,
            br#"{"a": 1}"#,
            br#"{ "a":1}"#,
            br#"{"a":1.0}"#,
            br#"{"a":1e3}"#,
            br#"{"a":-0}"#,
            br#"{"a":01}"#,
            br#"{"a":18446744073709551616}"#,
            br#"{"a":-9223372036854775809}"#,
            br#"{"a":"\/"}"#,
            br#"{"a":"\u0041"}"#,
            br#"{"a":"\u000A"}"#,
            br#"{"a":"\u001F"}"#,
            br#"{"a":"\ud83c\udf89"}"#,
            br#"{"b":1,"a":2}"#,
            br#"{"a":1,"a":2}"#,
            br#"{"a\"b":1}"#,
            br#"{"metadata":{"b":1,"a":2}}"#,
            br#"{"a":[1,]}"#,
            br#"{"a":tru}"#,
            b"{\"a\":\"\x01\"}",
            br#"[1]"#,
            b"{\"a\":\"\xff\"}",
        ];
        for input in inputs {
            assert!(
                stamp(input, 1).is_none(),
                "accepted {}",
                String::from_utf8_lossy(input)
            );
        }
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(120), "]".repeat(120));
        assert!(stamp(deep.as_bytes(), 1).is_none());
        // Canonical escapes and extreme integers are accepted.
        for ok in [
            &br#"{"a":"\u001f\u0000\b\t\n\f\r\"\\"}"#[..],
            br#"{"a":18446744073709551615,"b":-9223372036854775808}"#,
        ] {
            same_as_value_path(ok);
        }
    }

    /// Random trees, serialised as the store does: the fast path accepts them
    /// all and agrees with the Value path.
    #[test]
    fn agrees_on_generated_objects() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let keys = [
            "apiVersion",
            "kind",
            "metadata",
            "resourceVersion",
            "name",
            "namespace",
            "labels",
            "uid",
            "a",
            "z",
            "m",
            "spec",
            "",
            "é",
            "finalizers",
            "ownerReferences",
        ];
        fn build(next: &mut dyn FnMut() -> u64, keys: &[&str], depth: u32) -> Value {
            match next() % if depth > 3 { 5 } else { 8 } {
                0 => Value::Null,
                1 => Value::Bool(next().is_multiple_of(2)),
                2 => json!(next() as i64 >> (next() % 64)),
                3 => json!(next() >> (next() % 64)),
                4 => {
                    let chars = [
                        "a", "\"", "\\", "\n", "\u{1}", "/", "é", "🎉", "\u{7f}", " ",
                    ];
                    let n = next() % 6;
                    Value::String((0..n).map(|_| chars[(next() % 10) as usize]).collect())
                }
                5 | 6 => {
                    let n = next() % 5;
                    let mut map = Map::new();
                    for _ in 0..n {
                        let key = keys[(next() as usize) % keys.len()];
                        map.insert(key.to_string(), build(next, keys, depth + 1));
                    }
                    Value::Object(map)
                }
                _ => Value::Array(
                    (0..next() % 4)
                        .map(|_| build(next, keys, depth + 1))
                        .collect(),
                ),
            }
        }
        for _ in 0..3000 {
            let mut map = Map::new();
            for _ in 0..next() % 7 {
                let key = keys[(next() as usize) % keys.len()];
                map.insert(key.to_string(), build(&mut next, &keys, 0));
            }
            same_as_value_path(&serde_json::to_vec(&Value::Object(map)).expect("json"));
        }
    }

    #[test]
    fn reads_type_fields() {
        let json = br#"{"apiVersion":"v1","kind":"Pod","metadata":{}}"#;
        assert_eq!(type_fields(json), Some(("v1".into(), "Pod".into())));
        assert_eq!(
            type_fields(br#"{"kind":"K","a":1}"#),
            Some((String::new(), "K".into()))
        );
        assert_eq!(
            type_fields(br#"{"apiVersion":1,"kind":"K"}"#),
            Some((String::new(), "K".into()))
        );
        assert_eq!(type_fields(b"{}"), Some((String::new(), String::new())));
    }
}
