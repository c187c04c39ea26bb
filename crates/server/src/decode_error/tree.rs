//! A parse tree of a syntactically valid body (arena, so no recursion to drop).

use super::scanner::is_space;
use crate::go::utf8::decode_rune;

#[derive(Debug)]
pub(super) enum Node {
    Null,
    Bool,
    Number,
    /// The string's value as Go unquotes it.
    String(String),
    Array(Vec<usize>),
    /// Members in body order, duplicates kept (Go decodes each in turn).
    Object(Vec<(String, usize)>),
}

#[derive(Debug)]
struct Item {
    pub(super) node: Node,
    start: usize,
    end: usize,
}

/// A value [`Tree::from_value`] has yet to add: the value, its footprint,
/// and its parent's item with its key there.
type Pending<'v> = (
    &'v serde_json::Value,
    Option<&'v serde_json::Value>,
    Option<(usize, Option<String>)>,
);

pub(super) struct Tree<'a> {
    /// The parsed body, or for a tree built from a value, the text of its
    /// numbers and strings (what [`Tree::raw`] answers).
    body: std::borrow::Cow<'a, [u8]>,
    items: Vec<Item>,
}

impl<'a> Tree<'a> {
    pub(super) fn node(&self, index: usize) -> &Node {
        &self.items[index].node
    }

    /// The value's bytes as they appear in the body.
    pub(super) fn raw(&self, index: usize) -> &[u8] {
        let item = &self.items[index];
        &self.body[item.start..item.end]
    }

    /// The tree of a JSON value, without serializing and parsing it: of the
    /// parts `footprint` covers when one is given (where the footprint holds
    /// an object, only its keys; elsewhere the whole value; a key
    /// `$setElementOrder/<field>` names `<field>`, other `$` keys nothing).
    /// Numbers keep serde_json's text, strings their text in quotes.
    pub(super) fn from_value(
        value: &serde_json::Value,
        footprint: Option<&serde_json::Value>,
    ) -> Tree<'static> {
        let mut tree = Tree {
            body: std::borrow::Cow::Owned(Vec::new()),
            items: Vec::new(),
        };
        let mut stack: Vec<Pending<'_>> = vec![(value, footprint, None)];
        while let Some((value, footprint, parent)) = stack.pop() {
            let index = tree.items.len();
            let std::borrow::Cow::Owned(text) = &mut tree.body else {
                return tree;
            };
            let start = text.len();
            let node = match value {
                serde_json::Value::Null => Node::Null,
                serde_json::Value::Bool(_) => Node::Bool,
                serde_json::Value::Number(number) => {
                    text.extend_from_slice(number.to_string().as_bytes());
                    Node::Number
                }
                serde_json::Value::String(string) => {
                    text.push(b'"');
                    text.extend_from_slice(string.as_bytes());
                    text.push(b'"');
                    Node::String(string.clone())
                }
                serde_json::Value::Array(items) => {
                    // Children are pushed in reverse so they are numbered in order.
                    for item in items.iter().rev() {
                        stack.push((item, None, Some((index, None))));
                    }
                    Node::Array(Vec::with_capacity(items.len()))
                }
                serde_json::Value::Object(members) => {
                    let mut chosen: Vec<(&String, &serde_json::Value, Option<&serde_json::Value>)> =
                        Vec::new();
                    match footprint {
                        Some(serde_json::Value::Object(keys)) => {
                            for (raw_key, below) in keys {
                                let (key, below) = match raw_key.strip_prefix("$setElementOrder/") {
                                    Some(field) => (field, None),
                                    None if raw_key.starts_with('$') => continue,
                                    None => (raw_key.as_str(), Some(below)),
                                };
                                if let Some((key, member)) = members.get_key_value(key) {
                                    if !chosen.iter().any(|(seen, ..)| *seen == key) {
                                        chosen.push((key, member, below));
                                    }
                                }
                            }
                        }
                        _ => chosen.extend(members.iter().map(|(key, member)| (key, member, None))),
                    }
                    for (key, member, below) in chosen.into_iter().rev() {
                        stack.push((member, below, Some((index, Some(key.clone())))));
                    }
                    Node::Object(Vec::new())
                }
            };
            let end = text.len();
            tree.items.push(Item { node, start, end });
            if let Some((parent, key)) = parent {
                match (&mut tree.items[parent].node, key) {
                    (Node::Array(children), None) => children.push(index),
                    (Node::Object(members), Some(key)) => members.push((key, index)),
                    _ => {}
                }
            }
        }
        tree
    }

    /// Builds the tree of `body`, which must have passed
    /// [`go_json_syntax_error`](super::go_json_syntax_error).
    pub(super) fn parse(body: &'a [u8]) -> Option<Tree<'a>> {
        let mut items: Vec<Item> = Vec::new();
        let mut open: Vec<usize> = Vec::new();
        let mut key: Option<String> = None;
        let mut i = skip_ws(body, 0);
        loop {
            // A value starts at `i`.
            let index = items.len();
            let start = i;
            let first = *body.get(i)?;
            let (node, end, container) = match first {
                b'{' => (Node::Object(Vec::new()), 0, true),
                b'[' => (Node::Array(Vec::new()), 0, true),
                b'"' => {
                    let end = string_end(body, i)?;
                    (Node::String(go_unquote(&body[i..end])), end, false)
                }
                b't' => (Node::Bool, i + 4, false),
                b'f' => (Node::Bool, i + 5, false),
                b'n' => (Node::Null, i + 4, false),
                _ => {
                    let mut j = i;
                    while j < body.len()
                        && matches!(body[j], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E')
                    {
                        j += 1;
                    }
                    (Node::Number, j, false)
                }
            };
            items.push(Item { node, start, end });
            if let Some(&parent) = open.last() {
                match &mut items[parent].node {
                    Node::Array(children) => children.push(index),
                    Node::Object(members) => members.push((key.take()?, index)),
                    _ => return None,
                }
            }
            if container {
                open.push(index);
                i = skip_ws(body, i + 1);
                match body.get(i)? {
                    b'}' | b']' => {
                        items[index].end = i + 1;
                        open.pop();
                        i += 1;
                    }
                    _ => {
                        if first == b'{' {
                            i = read_key(body, i, &mut key)?;
                        }
                        continue;
                    }
                }
            } else {
                i = end;
            }
            // After a value: `,`, a closing bracket, or the end.
            loop {
                i = skip_ws(body, i);
                let Some(&top) = open.last() else {
                    return Some(Tree {
                        body: std::borrow::Cow::Borrowed(body),
                        items,
                    });
                };
                match body.get(i)? {
                    b',' => {
                        i = skip_ws(body, i + 1);
                        if matches!(items[top].node, Node::Object(_)) {
                            i = read_key(body, i, &mut key)?;
                        }
                        break;
                    }
                    b'}' | b']' => {
                        items[top].end = i + 1;
                        open.pop();
                        i += 1;
                    }
                    _ => return None,
                }
            }
        }
    }
}

fn skip_ws(body: &[u8], mut i: usize) -> usize {
    while i < body.len() && is_space(body[i]) {
        i += 1;
    }
    i
}

/// Index just past the closing quote of the string opening at `start`.
fn string_end(body: &[u8], start: usize) -> Option<usize> {
    let mut j = start + 1;
    loop {
        match body.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// Reads `"key"` and the `:` after it at `i`; returns the index of the value.
fn read_key(body: &[u8], i: usize, key: &mut Option<String>) -> Option<usize> {
    let end = string_end(body, i)?;
    *key = Some(go_unquote(&body[i..end]));
    let colon = skip_ws(body, end);
    (body.get(colon) == Some(&b':')).then(|| skip_ws(body, colon + 1))
}

fn hex4(bytes: &[u8]) -> Option<u32> {
    if bytes.len() < 4 {
        return None;
    }
    let text = std::str::from_utf8(&bytes[..4]).ok()?;
    u32::from_str_radix(text, 16).ok()
}

/// `unquoteBytes` of `encoding/json`: escapes resolved, a `\u` surrogate pair
/// combined, a lone surrogate and each invalid UTF-8 byte read as U+FFFD.
/// `quoted` includes the quotes.
pub(super) fn go_unquote(quoted: &[u8]) -> String {
    let s = &quoted[1..quoted.len().saturating_sub(1).max(1)];
    let mut out = String::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == b'\\' {
            let Some(&escape) = s.get(i + 1) else { break };
            i += 2;
            match escape {
                b'b' => out.push('\u{8}'),
                b'f' => out.push('\u{c}'),
                b'n' => out.push('\n'),
                b'r' => out.push('\r'),
                b't' => out.push('\t'),
                b'u' => {
                    let Some(unit) = hex4(&s[i..]) else { break };
                    i += 4;
                    if (0xD800..0xE000).contains(&unit) {
                        let low = if s[i..].starts_with(b"\\u") {
                            hex4(&s[i + 2..])
                        } else {
                            None
                        };
                        match low {
                            Some(low)
                                if (0xD800..0xDC00).contains(&unit)
                                    && (0xDC00..0xE000).contains(&low) =>
                            {
                                let combined = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                                out.push(char::from_u32(combined).unwrap_or('\u{FFFD}'));
                                i += 6;
                            }
                            _ => out.push('\u{FFFD}'),
                        }
                    } else {
                        out.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
                    }
                }
                other => out.push(char::from(other)),
            }
        } else if c < 0x80 {
            out.push(char::from(c));
            i += 1;
        } else {
            let (rune, width) = decode_rune(&s[i..]);
            out.push(rune);
            i += width.max(1);
        }
    }
    out
}
