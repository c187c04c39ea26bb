//! YAML documents (kubeconfigs) as `serde_json::Value`, parsed by the
//! workspace's YAML library (yaml-rust2's event parser).
//!
//! Every scalar stays the string it was written as, except the plain nulls
//! (empty, `~`, `null`), as sigs.k8s.io/yaml hands kubectl's string-typed
//! kubeconfig fields their text: `token: 0123` is the token `"0123"`, not the
//! number 123. Only the first document of a stream is read; tags are ignored
//! and aliases are expanded.

use std::collections::HashMap;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

#[derive(Debug, thiserror::Error)]
pub enum YamlError {
    #[error(transparent)]
    Syntax(#[from] ScanError),
    #[error("line {line}: {message}")]
    Unsupported { line: usize, message: String },
}

fn unsupported(mark: Marker, message: &str) -> YamlError {
    YamlError::Unsupported {
        line: mark.line(),
        message: message.into(),
    }
}

/// A collection being read, with its anchor (0: none).
enum Open {
    Sequence(Vec<Value>, usize),
    /// The key read so far waits for its value.
    Mapping(Map<String, Value>, Option<String>, usize),
}

/// The first document of `text`; `Value::Null` for an empty stream.
pub fn parse(text: &str) -> Result<Value, YamlError> {
    let mut parser = Parser::new_from_str(text);
    let mut anchors: HashMap<usize, Value> = HashMap::new();
    let mut open: Vec<Open> = Vec::new();
    loop {
        let (event, mark) = parser.next_token()?;
        let (value, anchor) = match event {
            Event::StreamEnd | Event::DocumentEnd => return Ok(Value::Null),
            Event::Scalar(text, style, anchor, _tag) => {
                if let Some(Open::Mapping(_, key @ None, _)) = open.last_mut() {
                    *key = Some(text);
                    continue;
                }
                let is_null = style == TScalarStyle::Plain
                    && matches!(text.as_str(), "" | "~" | "null" | "Null" | "NULL");
                let value = if is_null {
                    Value::Null
                } else {
                    Value::String(text)
                };
                (value, anchor)
            }
            Event::Alias(id) => {
                let value = anchors
                    .get(&id)
                    .cloned()
                    .ok_or_else(|| unsupported(mark, "unknown alias"))?;
                if let Some(Open::Mapping(_, key @ None, _)) = open.last_mut() {
                    let Value::String(text) = value else {
                        return Err(unsupported(mark, "mapping keys must be scalars"));
                    };
                    *key = Some(text);
                    continue;
                }
                (value, 0)
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if let Some(Open::Mapping(_, None, _)) = open.last() {
                    return Err(unsupported(mark, "mapping keys must be scalars"));
                }
                open.push(match event {
                    Event::SequenceStart(..) => Open::Sequence(Vec::new(), anchor),
                    _ => Open::Mapping(Map::new(), None, anchor),
                });
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => match open.pop() {
                Some(Open::Sequence(items, anchor)) => (Value::Array(items), anchor),
                Some(Open::Mapping(entries, _, anchor)) => (Value::Object(entries), anchor),
                None => return Err(unsupported(mark, "unbalanced collection end")),
            },
            Event::Nothing | Event::StreamStart | Event::DocumentStart => continue,
        };
        if anchor != 0 {
            anchors.insert(anchor, value.clone());
        }
        match open.last_mut() {
            None => return Ok(value),
            Some(Open::Sequence(items, _)) => items.push(value),
            Some(Open::Mapping(entries, key, _)) => {
                let key = key.take().unwrap_or_default();
                entries.insert(key, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kubectl_style_documents() {
        let doc = parse(
            "# a comment\n---\napiVersion: v1\nclusters:\n- cluster:\n    server: https://x:6443\n  name: a\n\
             users:\n  - name: 'it''s'   # trailing\n    user:\n      token: \"a\\tb\\u0041\"\n\
             preferences: {}\nlist: []\nempty:\ntilde: ~\nquoted: \"null\"\nurl: http://h:1/#frag\n\
             flag: true\nnumber: 0123\n",
        )
        .expect("parse");
        assert_eq!(
            doc,
            json!({
                "apiVersion": "v1",
                "clusters": [{"cluster": {"server": "https://x:6443"}, "name": "a"}],
                "users": [{"name": "it's", "user": {"token": "a\tbA"}}],
                "preferences": {},
                "list": [],
                "empty": null,
                "tilde": null,
                "quoted": "null",
                "url": "http://h:1/#frag",
                "flag": "true",
                "number": "0123",
            })
        );
    }

    #[test]
    fn block_scalars_nested_lists_and_aliases() {
        let doc = parse(
            "args:\n- one\n- \"two: 2\"\n- - inner\nblock: |\n  line one\n    indented\n\n  after blank\n\
             folded: >-\n  a\n  b\nbase: &b {k: v}\ncopy: *b\n",
        )
        .expect("parse");
        assert_eq!(
            doc,
            json!({
                "args": ["one", "two: 2", ["inner"]],
                "block": "line one\n  indented\n\nafter blank\n",
                "folded": "a b",
                "base": {"k": "v"},
                "copy": {"k": "v"},
            })
        );
    }

    #[test]
    fn errors_and_empty_input() {
        assert!(matches!(
            parse("a: 1\n   b: 2\n"),
            Err(YamlError::Syntax(_))
        ));
        assert!(parse("a: \"open\n").is_err());
        assert!(parse("a:\n\tb: 1\n").is_err());
        assert!(matches!(
            parse("? [a]\n: b\n"),
            Err(YamlError::Unsupported { .. })
        ));
        assert_eq!(parse("").expect("empty"), Value::Null);
    }
}
