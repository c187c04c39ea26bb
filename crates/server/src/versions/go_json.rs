//! JSON text as Go's `encoding/json.Marshal` writes a struct: fields in the
//! struct's declaration order (not sorted, as `serde_json::Value` is), and
//! `<`, `>`, `&`, U+2028 and U+2029 escaped (`HTMLEscape` is on by default).
//! What the HPA round-trip annotations hold (`autoscaling/v1`
//! `conversion.go` marshals typed structs into them).

use serde_json::Value;

/// One JSON object, its fields in the order they are added.
pub struct GoObject {
    text: String,
}

impl GoObject {
    pub fn new() -> Self {
        GoObject {
            text: String::from("{"),
        }
    }

    /// A field whose value is JSON text already in Go's form.
    pub fn raw(mut self, key: &str, json: &str) -> Self {
        if self.text.len() > 1 {
            self.text.push(',');
        }
        self.text.push_str(&encode(&Value::from(key)));
        self.text.push(':');
        self.text.push_str(json);
        self
    }

    /// A field holding a value whose own objects, if any, are maps or
    /// structs whose fields are in sorted order (as `Value` keeps them).
    pub fn value(self, key: &str, value: &Value) -> Self {
        let text = encode(value);
        self.raw(key, &text)
    }

    /// A field that is present only when `value` is (`omitempty` on a
    /// pointer, or a value known to be non-empty).
    pub fn optional(self, key: &str, value: Option<&Value>) -> Self {
        match value {
            Some(value) => self.value(key, value),
            None => self,
        }
    }

    pub fn finish(mut self) -> String {
        self.text.push('}');
        self.text
    }
}

/// `[a,b,...]` of items already encoded.
pub fn array(items: impl IntoIterator<Item = String>) -> String {
    let items: Vec<String> = items.into_iter().collect();
    format!("[{}]", items.join(","))
}

/// `value` as Go encodes it (sorted keys: what Go does for maps).
pub fn encode(value: &Value) -> String {
    let text = serde_json::to_string(value).unwrap_or_default();
    html_escape(&text)
}

/// `encoding/json`'s HTML-safe escapes. These characters only ever occur
/// inside JSON strings, so escaping the whole text is exact.
pub(crate) fn html_escape(text: &str) -> String {
    if !needs_html_escape(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len() + 16);
    for character in text.chars() {
        match character {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            other => out.push(other),
        }
    }
    out
}

/// Whether `text` holds `<`, `>`, `&`, U+2028 or U+2029, scanned as bytes
/// (both separators start with 0xE2): a `char` pattern decoded and compared
/// every character, the largest cost of writing an audit event.
fn needs_html_escape(text: &str) -> bool {
    let bytes = text.as_bytes();
    if memchr::memchr3(b'<', b'>', b'&', bytes).is_some() {
        return true;
    }
    // U+2028 and U+2029 are E2 80 A8 and E2 80 A9.
    memchr::memchr_iter(0xE2, bytes)
        .any(|at| matches!(bytes.get(at + 1..at + 3), Some([0x80, 0xA8 | 0xA9])))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn only_go_html_characters_need_escaping() {
        for (text, needs) in [
            ("plain ascii", false),
            ("an ellipsis … and ‡ (E2 80 A6, E2 80 A1)", false),
            ("a<b", true),
            ("a>b", true),
            ("a&b", true),
            ("line\u{2028}separator", true),
            ("paragraph\u{2029}separator", true),
            ("ends with E2 \u{2000}", false),
        ] {
            assert_eq!(needs_html_escape(text), needs, "{text:?}");
        }
        assert_eq!(html_escape("a…b"), "a…b");
        assert_eq!(html_escape("x\u{2029}<"), "x\\u2029\\u003c");
    }

    #[test]
    fn fields_keep_their_order_and_strings_are_html_escaped() {
        let text = GoObject::new()
            .value("type", &json!("Pods"))
            .optional("absent", None)
            .value("name", &json!("a<b>&c\u{2028}"))
            .raw("nested", &array(["1".to_string(), "null".to_string()]))
            .finish();
        assert_eq!(
            text,
            r#"{"type":"Pods","name":"a\u003cb\u003e\u0026c\u2028","nested":[1,null]}"#
        );
        assert_eq!(GoObject::new().finish(), "{}");
    }
}
