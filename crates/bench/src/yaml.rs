//! Just enough YAML for kubeconfig files: block mappings and sequences
//! (including kubectl's `key:\n- item` style, where the dash sits at the
//! key's indentation), plain, single- and double-quoted scalars, literal
//! and folded block scalars, comments, and empty flow collections (`{}`,
//! `[]`). Anchors, tags, multi-document streams and non-empty flow
//! collections are not needed by kubeconfigs that kubectl, kind, kubeadm,
//! minikube or ferrokube write; a non-empty flow collection is kept as its
//! raw text.

use std::fmt;

/// A parsed node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Yaml {
    Map(Vec<(String, Yaml)>),
    List(Vec<Yaml>),
    Str(String),
    Null,
}

impl Yaml {
    /// The value of `key` in a mapping.
    pub fn get(&self, key: &str) -> Option<&Yaml> {
        match self {
            Yaml::Map(entries) => entries.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// The value of `key` as a string; `None` for a missing key, null or a
    /// collection.
    pub fn str(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Yaml::Str(s)) => Some(s),
            _ => None,
        }
    }

    /// The items of a sequence (an empty slice for anything else).
    pub fn items(&self) -> &[Yaml] {
        match self {
            Yaml::List(items) => items,
            _ => &[],
        }
    }
}

/// A syntax error with its 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    pub line: usize,
    pub message: String,
}

impl fmt::Display for YamlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for YamlError {}

#[derive(Debug, Clone)]
struct Line<'a> {
    number: usize,
    indent: usize,
    text: &'a str,
}

/// Parses one YAML document.
pub fn parse(input: &str) -> Result<Yaml, YamlError> {
    let raw: Vec<&str> = input.lines().collect();
    let mut lines = Vec::new();
    for (i, line) in raw.iter().enumerate() {
        let line = line.trim_end_matches('\r');
        let text = line.trim_start_matches(' ');
        if text.starts_with('\t') {
            return Err(YamlError {
                line: i + 1,
                message: "tabs are not allowed for indentation".into(),
            });
        }
        let trimmed = text.trim_end();
        if trimmed.is_empty() || trimmed.starts_with('#') || trimmed == "---" {
            continue;
        }
        if trimmed == "..." {
            break;
        }
        lines.push(Line {
            number: i + 1,
            indent: line.len() - text.len(),
            text: trimmed,
        });
    }
    let mut parser = Parser { raw, lines, pos: 0 };
    if parser.lines.is_empty() {
        return Ok(Yaml::Null);
    }
    let indent = parser.lines[0].indent;
    let node = parser.node(indent)?;
    if let Some(line) = parser.lines.get(parser.pos) {
        return Err(YamlError {
            line: line.number,
            message: "unexpected indentation".into(),
        });
    }
    Ok(node)
}

struct Parser<'a> {
    raw: Vec<&'a str>,
    lines: Vec<Line<'a>>,
    pos: usize,
}

fn is_item(text: &str) -> bool {
    text == "-" || text.starts_with("- ")
}

impl<'a> Parser<'a> {
    /// A block node starting at the current line, which has `indent`.
    fn node(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let line = self.lines[self.pos].clone();
        if is_item(line.text) {
            self.list(indent)
        } else if split_key(line.text).is_some() {
            self.map(indent)
        } else {
            // A bare scalar as a whole block (a document or item value).
            self.pos += 1;
            scalar(line.text).map_err(|message| YamlError {
                line: line.number,
                message,
            })
        }
    }

    fn map(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let mut entries = Vec::new();
        while let Some(line) = self.lines.get(self.pos).cloned() {
            if line.indent < indent || (line.indent == indent && is_item(line.text)) {
                break;
            }
            if line.indent > indent {
                return Err(YamlError {
                    line: line.number,
                    message: "unexpected indentation".into(),
                });
            }
            let Some((key, rest)) = split_key(line.text) else {
                return Err(YamlError {
                    line: line.number,
                    message: format!("expected `key: value`, found {:?}", line.text),
                });
            };
            let key = scalar_key(key).map_err(|message| YamlError {
                line: line.number,
                message,
            })?;
            self.pos += 1;
            let value = self.value_after(&line, indent, rest, true)?;
            entries.push((key, value));
        }
        Ok(Yaml::Map(entries))
    }

    fn list(&mut self, indent: usize) -> Result<Yaml, YamlError> {
        let mut items = Vec::new();
        while let Some(line) = self.lines.get(self.pos).cloned() {
            if line.indent != indent || !is_item(line.text) {
                if line.indent > indent {
                    return Err(YamlError {
                        line: line.number,
                        message: "unexpected indentation".into(),
                    });
                }
                break;
            }
            let after_dash = &line.text[1..];
            let rest = after_dash.trim_start_matches(' ');
            if rest.is_empty() {
                self.pos += 1;
                let value = self.value_after(&line, indent, "", false)?;
                items.push(value);
                continue;
            }
            // `- key: value` opens a mapping whose further keys sit where
            // `key` does; `- - x` a nested sequence. Re-read the rest of
            // the line as a line of its own at that column.
            let column = indent + 1 + (after_dash.len() - rest.len());
            self.lines[self.pos] = Line {
                number: line.number,
                indent: column,
                text: rest,
            };
            if is_item(rest) || split_key(rest).is_some() {
                items.push(self.node(column)?);
            } else {
                self.pos += 1;
                let value = self.value_after(&line, indent, rest, false)?;
                items.push(value);
            }
        }
        Ok(Yaml::List(items))
    }

    /// The value that follows a `key:` or `-` on `line` (with `rest` the
    /// text after it): inline, a block scalar, or a nested block.
    fn value_after(
        &mut self,
        line: &Line<'a>,
        indent: usize,
        rest: &str,
        in_map: bool,
    ) -> Result<Yaml, YamlError> {
        let rest = strip_comment(rest);
        if rest.starts_with('|') || rest.starts_with('>') {
            return Ok(Yaml::Str(self.block_scalar(line, indent, rest)));
        }
        if !rest.is_empty() {
            return scalar(rest).map_err(|message| YamlError {
                line: line.number,
                message,
            });
        }
        match self.lines.get(self.pos) {
            Some(next) if next.indent > indent => {
                let child = next.indent;
                self.node(child)
            }
            // kubectl writes `clusters:\n- cluster:` with the dash at the
            // key's own indentation.
            Some(next) if in_map && next.indent == indent && is_item(next.text) => {
                self.list(indent)
            }
            _ => Ok(Yaml::Null),
        }
    }

    /// `|`, `|-`, `>`, `>-` (with an optional indentation indicator, which
    /// is ignored: the first line sets the indentation).
    fn block_scalar(&mut self, line: &Line<'a>, indent: usize, header: &str) -> String {
        let folded = header.starts_with('>');
        let keep = header.contains('+');
        let strip = header.contains('-');
        let mut body: Vec<&str> = Vec::new();
        let mut block_indent = None;
        let mut end = line.number; // index into raw of the next raw line
        while end < self.raw.len() {
            let raw = self.raw[end].trim_end_matches('\r');
            let content = raw.trim_start_matches(' ');
            let this_indent = raw.len() - content.len();
            if content.is_empty() {
                body.push("");
                end += 1;
                continue;
            }
            if this_indent <= indent {
                break;
            }
            let block = *block_indent.get_or_insert(this_indent);
            if this_indent < block {
                break;
            }
            body.push(&raw[block..]);
            end += 1;
        }
        // Skip the parsed lines that the block consumed.
        while self.lines.get(self.pos).is_some_and(|l| l.number <= end) {
            self.pos += 1;
        }
        let mut trailing = 0;
        while body.last() == Some(&"") {
            body.pop();
            trailing += 1;
        }
        let mut text = if folded {
            let mut out = String::new();
            for (i, part) in body.iter().enumerate() {
                if i > 0 {
                    out.push(if part.is_empty() || body[i - 1].is_empty() {
                        '\n'
                    } else {
                        ' '
                    });
                }
                out.push_str(part);
            }
            out
        } else {
            body.join("\n")
        };
        if !strip && !text.is_empty() {
            text.push('\n');
            if keep {
                for _ in 0..trailing {
                    text.push('\n');
                }
            }
        }
        text
    }
}

/// Splits `key: value` / `key:` into key text and the rest (possibly
/// empty). Quoted keys may contain `: `.
fn split_key(text: &str) -> Option<(&str, &str)> {
    let key_end = if let Some(quote @ ('"' | '\'')) = text.chars().next() {
        let close = closing_quote(text, quote)?;
        if !text[close + 1..].starts_with(':') {
            return None;
        }
        close + 1
    } else {
        if text.starts_with(['{', '[']) {
            return None;
        }
        let mut found = None;
        for (i, c) in text.char_indices() {
            if c == ':' && (i + 1 == text.len() || text[i + 1..].starts_with(' ')) {
                found = Some(i);
                break;
            }
            if c == '#' && i > 0 && text[..i].ends_with(' ') {
                return None;
            }
        }
        found?
    };
    Some((&text[..key_end], text[key_end + 1..].trim_start()))
}

/// The byte index of the quote closing the scalar that opens `text`.
fn closing_quote(text: &str, quote: char) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = 1;
    while i < bytes.len() {
        let b = bytes[i];
        if quote == '"' && b == b'\\' {
            i += 2;
            continue;
        }
        if b == quote as u8 {
            if quote == '\'' && bytes.get(i + 1) == Some(&b'\'') {
                i += 2;
                continue;
            }
            return Some(i);
        }
        i += 1;
    }
    None
}

/// Drops a trailing ` # comment` outside quotes.
fn strip_comment(text: &str) -> &str {
    let text = text.trim();
    if let Some(quote @ ('"' | '\'')) = text.chars().next() {
        return match closing_quote(text, quote) {
            Some(close) => {
                let after = text[close + 1..].trim_start();
                if after.is_empty() || after.starts_with('#') {
                    &text[..=close]
                } else {
                    text
                }
            }
            None => text,
        };
    }
    if text.starts_with('#') {
        return "";
    }
    match text.find(" #") {
        Some(i) => text[..i].trim_end(),
        None => text,
    }
}

fn scalar_key(text: &str) -> Result<String, String> {
    match scalar(text)? {
        Yaml::Str(s) => Ok(s),
        Yaml::Null => Ok(String::new()),
        other => Err(format!("unsupported key {other:?}")),
    }
}

/// An inline scalar (or empty flow collection).
fn scalar(text: &str) -> Result<Yaml, String> {
    let text = strip_comment(text);
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Ok(Yaml::Null),
        "{}" => return Ok(Yaml::Map(Vec::new())),
        "[]" => return Ok(Yaml::List(Vec::new())),
        _ => {}
    }
    if let Some(inner) = text.strip_prefix('"') {
        let inner = inner
            .strip_suffix('"')
            .ok_or_else(|| format!("unterminated double-quoted scalar {text:?}"))?;
        return unescape_double(inner).map(Yaml::Str);
    }
    if let Some(inner) = text.strip_prefix('\'') {
        let inner = inner
            .strip_suffix('\'')
            .ok_or_else(|| format!("unterminated single-quoted scalar {text:?}"))?;
        return Ok(Yaml::Str(inner.replace("''", "'")));
    }
    Ok(Yaml::Str(text.to_string()))
}

fn unescape_double(inner: &str) -> Result<String, String> {
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let escaped = chars.next().ok_or("dangling backslash")?;
        let hex = |chars: &mut std::str::Chars<'_>, n: usize| -> Result<char, String> {
            let digits: String = chars.take(n).collect();
            u32::from_str_radix(&digits, 16)
                .ok()
                .and_then(char::from_u32)
                .ok_or_else(|| format!("bad escape \\{escaped}{digits}"))
        };
        out.push(match escaped {
            'n' => '\n',
            't' => '\t',
            'r' => '\r',
            '0' => '\0',
            '"' => '"',
            '\\' => '\\',
            '/' => '/',
            ' ' => ' ',
            'x' => hex(&mut chars, 2)?,
            'u' => hex(&mut chars, 4)?,
            'U' => hex(&mut chars, 8)?,
            other => return Err(format!("unknown escape \\{other}")),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: &str) -> Yaml {
        Yaml::Str(v.into())
    }

    #[test]
    fn kubectl_style_sequences_at_key_indentation() {
        let doc = parse(
            "apiVersion: v1\nclusters:\n- cluster:\n    server: https://x:6443\n  name: a\n- cluster:\n    server: \"https://y\"\n  name: b\nkind: Config\n",
        )
        .expect("parse");
        let clusters = doc.get("clusters").expect("clusters").items();
        assert_eq!(clusters.len(), 2);
        assert_eq!(clusters[0].str("name"), Some("a"));
        assert_eq!(
            clusters[0].get("cluster").and_then(|c| c.str("server")),
            Some("https://x:6443")
        );
        assert_eq!(
            clusters[1].get("cluster").and_then(|c| c.str("server")),
            Some("https://y")
        );
        assert_eq!(doc.str("kind"), Some("Config"));
    }

    #[test]
    fn indented_sequences_comments_and_quotes() {
        let doc = parse(
            "# a comment\n---\nusers:\n  - name: 'it''s'   # trailing\n    user:\n      token: \"a\\tb\\u0041\"\n  - name: plain value\npreferences: {}\nlist: []\nempty:\nurl: http://h:1/#frag\n",
        )
        .expect("parse");
        let users = doc.get("users").expect("users").items();
        assert_eq!(users[0].str("name"), Some("it's"));
        assert_eq!(
            users[0].get("user").and_then(|u| u.str("token")),
            Some("a\tbA")
        );
        assert_eq!(users[1].str("name"), Some("plain value"));
        assert_eq!(doc.get("preferences"), Some(&Yaml::Map(vec![])));
        assert_eq!(doc.get("list"), Some(&Yaml::List(vec![])));
        assert_eq!(doc.get("empty"), Some(&Yaml::Null));
        assert_eq!(doc.str("url"), Some("http://h:1/#frag"));
    }

    #[test]
    fn scalar_items_nested_lists_and_block_scalars() {
        let doc = parse(
            "args:\n- one\n- \"two: 2\"\n- - inner\nblock: |\n  line one\n    indented\n\n  after blank\nfolded: >-\n  a\n  b\nnext: x\n",
        )
        .expect("parse");
        assert_eq!(
            doc.get("args"),
            Some(&Yaml::List(vec![
                s("one"),
                s("two: 2"),
                Yaml::List(vec![s("inner")])
            ]))
        );
        assert_eq!(
            doc.str("block"),
            Some("line one\n  indented\n\nafter blank\n")
        );
        assert_eq!(doc.str("folded"), Some("a b"));
        assert_eq!(doc.str("next"), Some("x"));
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("a: 1\n   b: 2\n").expect_err("bad indentation");
        assert_eq!(err.line, 2);
        assert!(parse("a: \"open\n").is_err());
        assert!(parse("a:\n\tb: 1\n").is_err());
        assert_eq!(parse("").expect("empty"), Yaml::Null);
    }
}
