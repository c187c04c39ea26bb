//! Parsing: yaml-rust2 events into a node tree (the first document only).

use std::collections::HashMap;

use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

use super::MAX_DEPTH;

#[derive(Debug)]
pub(super) enum NodeKind {
    Scalar {
        value: String,
        /// Plain and untagged (or tagged `!`): libyaml's `plain_implicit`.
        implicit: bool,
        /// The full tag (`tag:yaml.org,2002:str`, `!foo`), empty when none.
        tag: String,
    },
    Sequence(Vec<usize>),
    /// Keys and values alternate, as go-yaml's node children do.
    Mapping(Vec<usize>),
    Alias {
        target: usize,
        name: String,
    },
}

#[derive(Debug)]
pub(super) struct Node {
    pub(super) kind: NodeKind,
    /// 1-based line of the node's first token (go-yaml's `node.line + 1`).
    pub(super) line: usize,
}

pub(super) struct Tree {
    pub(super) nodes: Vec<Node>,
    /// The document's root node; `None` for an empty stream.
    pub(super) root: Option<usize>,
}

fn full_tag(tag: Option<Tag>) -> String {
    match tag {
        Some(tag) => format!("{}{}", tag.handle, tag.suffix),
        None => String::new(),
    }
}

/// Parses the first document of `text`; errors are go-yaml's `yaml: ...`
/// texts (without sigs.k8s.io/yaml's prefix).
pub(super) fn parse(text: &str) -> Result<Tree, String> {
    let mut parser = Parser::new_from_str(text);
    let mut nodes: Vec<Node> = Vec::new();
    let mut anchors: HashMap<usize, usize> = HashMap::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut root = None;
    let mut in_document = false;
    loop {
        let (event, mark) = parser
            .next_token()
            .map_err(|err| scan_error_message(&err, text))?;
        let line = mark.line().max(1);
        let kind = match event {
            Event::StreamStart | Event::Nothing => continue,
            Event::StreamEnd => break,
            Event::DocumentStart => {
                in_document = true;
                continue;
            }
            Event::DocumentEnd => {
                if in_document {
                    break;
                }
                continue;
            }
            Event::SequenceEnd | Event::MappingEnd => {
                stack.pop();
                continue;
            }
            Event::Scalar(value, style, anchor, tag) => {
                let tag = full_tag(tag);
                let implicit = (tag.is_empty() && style == TScalarStyle::Plain) || tag == "!";
                (
                    NodeKind::Scalar {
                        value,
                        implicit,
                        tag,
                    },
                    anchor,
                )
            }
            Event::SequenceStart(anchor, _) => (NodeKind::Sequence(Vec::new()), anchor),
            Event::MappingStart(anchor, _) => (NodeKind::Mapping(Vec::new()), anchor),
            Event::Alias(id) => {
                let name = alias_name(text, &mark);
                let Some(&target) = anchors.get(&id) else {
                    return Err(format!("yaml: unknown anchor '{name}' referenced"));
                };
                (NodeKind::Alias { target, name }, 0)
            }
        };
        let (kind, anchor) = kind;
        let opens = matches!(kind, NodeKind::Sequence(_) | NodeKind::Mapping(_));
        let id = nodes.len();
        nodes.push(Node { kind, line });
        if anchor != 0 {
            anchors.insert(anchor, id);
        }
        match stack.last() {
            Some(&parent) => match &mut nodes[parent].kind {
                NodeKind::Sequence(children) | NodeKind::Mapping(children) => children.push(id),
                _ => {}
            },
            None => root = Some(id),
        }
        if opens {
            if stack.len() >= MAX_DEPTH {
                return Err(with_line(
                    line,
                    true,
                    &format!("exceeded max depth of {MAX_DEPTH}"),
                ));
            }
            stack.push(id);
        }
    }
    Ok(Tree { nodes, root })
}

/// The anchor name an alias event at `mark` spells (`*name`).
fn alias_name(text: &str, mark: &Marker) -> String {
    let rest = text.get(mark.index()..).unwrap_or("");
    let rest = rest.strip_prefix('*').unwrap_or(rest);
    rest.chars()
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect()
}

/// go-yaml's `yaml: line N: problem` for a scanner (`scanner == true`, line
/// already 1-based) or parser (reports the 0-based line) error at 1-based
/// `line`; problems on the first line get no line, as in go-yaml.
fn with_line(line: usize, scanner: bool, problem: &str) -> String {
    let shown = if scanner { line } else { line - 1 };
    if line > 1 {
        format!("yaml: line {shown}: {problem}")
    } else {
        format!("yaml: {problem}")
    }
}

/// Problems libyaml raises from its parser (the others come from its scanner).
const PARSER_PROBLEMS: &[&str] = &[
    "did not find expected <stream-start>",
    "did not find expected <document start>",
    "found duplicate %YAML directive",
    "found incompatible YAML document",
    "found duplicate %TAG directive",
    "found undefined tag handle",
    "did not find expected node content",
    "did not find expected '-' indicator",
    "did not find expected key",
    "did not find expected ',' or ']'",
    "did not find expected ',' or '}'",
];

/// Rewrites a yaml-rust2 error into go-yaml's text.
fn scan_error_message(err: &ScanError, text: &str) -> String {
    let info = err.info();
    if info.ends_with("found unknown anchor") {
        return format!(
            "yaml: unknown anchor '{}' referenced",
            alias_name(text, err.marker())
        );
    }
    // libyaml reports the problem alone, not the "while ..." context.
    let problem = match info.split_once(", ") {
        Some((context, problem)) if context.starts_with("while ") => problem,
        _ => info,
    };
    let problem = match problem {
        "expected ',' or ']'" => "did not find expected ',' or ']'",
        "did not find expected <document-start>" => "did not find expected <document start>",
        "the handle wasn't declared" => "found undefined tag handle",
        "simple key expect ':'" => "could not find expected ':'",
        "did not find expected hexadecimal number" => "did not find expected hexdecimal number",
        "unexpected eof" => "did not find expected node content",
        // yaml-rust2 counts flow nesting in a u8 (255 levels, about MAX_DEPTH).
        "recursion limit exceeded" => {
            return with_line(
                err.marker().line().max(1),
                true,
                &format!("exceeded max depth of {MAX_DEPTH}"),
            )
        }
        p if p.starts_with("unexpected character")
            || p.starts_with("tabs disallowed")
            || p.starts_with("tab cannot be used") =>
        {
            "found character that cannot start any token"
        }
        p => p,
    };
    if problem == "found unexpected end of stream" {
        // libyaml's problem mark is the end of the input.
        let line = text.matches('\n').count() + 1;
        return with_line(line, true, problem);
    }
    let line = err.marker().line().max(1);
    with_line(line, !PARSER_PROBLEMS.contains(&problem), problem)
}
