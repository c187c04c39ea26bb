//! `application/yaml` request and response bodies, as kube-apiserver 1.34
//! reads and writes them.
//!
//! kube's YAML serializer (`k8s.io/apimachinery/pkg/runtime/serializer/json`
//! with `Yaml: true`) converts a request body with `sigs.k8s.io/yaml`
//! `YAMLToJSON` (go-yaml v2, `go.yaml.in/yaml/v2`, YAML 1.1 scalars) and then
//! decodes the JSON; responses are JSON re-encoded by `JSONToYAML` (go-yaml v2
//! `Marshal` of the JSON parsed as YAML). This module reproduces both:
//!
//! * [`yaml_to_json`] / [`yaml_to_json_strict`]: the first document only;
//!   YAML 1.1 booleans (`yes`/`no`/`on`/`off`/`y`/`n`, any of go-yaml's
//!   spellings), `null`/`~`/empty, ints in any base Go's `ParseInt(s, 0, 64)`
//!   takes (`0755` is octal 493, `0x1F`, `1_000`), floats (`1.0` becomes the
//!   JSON integer `1`, as Go's `json.Marshal` writes it), timestamps kept as
//!   strings, quoted scalars always strings, `!!str`/`!!int`/`!!binary`...
//!   tags, anchors/aliases and `<<` merge keys resolved (with go-yaml's alias
//!   ratio limit), non-string keys stringified as sigs.k8s.io/yaml does,
//!   duplicate keys: last wins (strict: an error per duplicate, with go-yaml's
//!   `line N: key "x" already set in map` text);
//! * [`json_to_yaml`]: a port of go-yaml v2's emitter for the trees JSON can
//!   express: keys in go-yaml's "natural" order (`a2` before `a10`), 2-space
//!   indentation, sequences under a key not indented, scalars plain when they
//!   read back as the same string and quoted otherwise (`"123"`, `"true"`,
//!   `"2026-11-22T12:00:00Z"`, `""`, `'foo: bar'`), multi-line strings as
//!   `|`/`|-`/`|+` blocks, long strings folded at column 80, `{}` and `[]`.
//!
//! Parsing uses the `yaml-rust2` event parser; its error texts are rewritten
//! into libyaml's (go-yaml is a libyaml port), with go-yaml's line numbering
//! quirks (scanner errors: 1-based line, parser errors: the 0-based line;
//! errors on the first line carry no line at all). Errors only yaml-rust2
//! raises (it is YAML 1.2 and stricter in a few corners) keep its problem
//! text. Nothing here panics, whatever the input; nesting deeper than
//! [`MAX_DEPTH`] and alias bombs are refused early.

use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser, Tag};
use yaml_rust2::scanner::{Marker, ScanError, TScalarStyle};

/// Deepest nesting accepted in a YAML body, and in the document an alias
/// expansion produces (`yaml: exceeded max depth of 256`). go-yaml's own
/// limit is 10000; this one keeps conversion, emission and the recursive
/// walks and drops of the resulting `serde_json::Value` well inside a 2 MiB
/// (tokio worker) stack even in debug builds. JSON bodies are already capped
/// at 128 levels by serde_json's parser. (Flow collections, `[[[...]]]`, are
/// limited to 255 levels by the yaml-rust2 scanner, with the same message.)
pub const MAX_DEPTH: usize = 256;

/// Prefix sigs.k8s.io/yaml puts on every conversion error.
const CONVERT_PREFIX: &str = "error converting YAML to JSON: ";

/// A YAML body kube would refuse; `Display` is kube's full message, such as
/// `error converting YAML to JSON: yaml: line 3: did not find expected key`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct YamlError {
    message: String,
}

impl YamlError {
    fn convert(detail: impl Into<String>) -> Self {
        YamlError {
            message: format!("{CONVERT_PREFIX}{}", detail.into()),
        }
    }

    /// kube's message (what `Display` prints).
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message without sigs.k8s.io/yaml's `error converting YAML to
    /// JSON: ` prefix (`yaml: line 3: ...`).
    pub fn detail(&self) -> &str {
        self.message
            .strip_prefix(CONVERT_PREFIX)
            .unwrap_or(&self.message)
    }
}

impl std::fmt::Display for YamlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for YamlError {}

/// sigs.k8s.io/yaml `YAMLToJSON`: the first YAML document of `body` as JSON.
/// An empty body (or one holding only comments) is `null`.
pub fn yaml_to_json(body: &[u8]) -> Result<Value, YamlError> {
    convert(body, false)
}

/// sigs.k8s.io/yaml `YAMLToJSONStrict`: as [`yaml_to_json`], but a key set
/// twice in one mapping fails the whole conversion with go-yaml's
/// `UnmarshalStrict` error, every duplicate on its own line:
///
/// ```text
/// error converting YAML to JSON: yaml: unmarshal errors:
///   line 10: key "unknownDupe" already set in map
///   line 12: key "paused" already set in map
/// ```
///
/// kube's strict decoding runs this after the normal conversion succeeded and
/// reports its error as one strict-decoding error (see
/// `crate::field_validation::warnings` for the warnings form).
pub fn yaml_to_json_strict(body: &[u8]) -> Result<Value, YamlError> {
    convert(body, true)
}

/// The error `YAMLToJSONStrict` adds to kube's strict-decoding errors for a
/// body that [`yaml_to_json`] accepts: `error converting YAML to JSON: yaml:
/// unmarshal errors:\n  line 10: key "x" already set in map...`; `None` when
/// no key repeats (or the body does not convert at all).
pub fn yaml_duplicate_error(body: &[u8]) -> Option<String> {
    match convert(body, true) {
        Err(err) if err.detail().starts_with("yaml: unmarshal errors:\n") => Some(err.message),
        _ => None,
    }
}

/// The duplicate-key lines of [`yaml_to_json_strict`]
/// (`line 10: key "unknownDupe" already set in map`, in document order);
/// empty when the body has none or does not parse at all.
pub fn yaml_duplicate_fields(body: &[u8]) -> Vec<String> {
    match convert(body, true) {
        Err(err) => err
            .detail()
            .strip_prefix("yaml: unmarshal errors:\n")
            .map(|rest| rest.lines().map(|l| l.trim().to_string()).collect())
            .unwrap_or_default(),
        Ok(_) => Vec::new(),
    }
}

/// kube's `summarizeData(body, 30)`, used in the 400 message for a body that
/// does not decode at all (`the object provided is unrecognized (must be of
/// type ConfigMap): <error> (<summary>)`): a body starting with `{` is quoted
/// as text, anything else (YAML) as lower-case hex; more than 30 bytes are cut
/// and followed by ` ...`; an empty body is `<empty>`.
pub fn summarize_data(body: &[u8]) -> String {
    const MAX: usize = 30;
    if body.is_empty() {
        return "<empty>".to_string();
    }
    let cut = &body[..body.len().min(MAX)];
    let mut out = if body[0] == b'{' {
        String::from_utf8_lossy(cut).into_owned()
    } else {
        let mut hex = String::with_capacity(cut.len() * 2);
        for byte in cut {
            let _ = write!(hex, "{byte:02x}");
        }
        hex
    };
    if body.len() > MAX {
        out.push_str(" ...");
    }
    out
}

/// The 400 BadRequest message kube-apiserver answers for a YAML body that
/// fails to convert (`transformDecodeError` with no kind decoded):
/// `the object provided is unrecognized (must be of type Deployment): error
/// converting YAML to JSON: yaml: line 2: ... (61706956...)`.
pub fn decode_error_message(kind: &str, err: &YamlError, body: &[u8]) -> String {
    format!(
        "the object provided is unrecognized (must be of type {kind}): {err} ({})",
        summarize_data(body)
    )
}

// ---------------------------------------------------------------------------
// Input: encodings and characters, as libyaml's reader checks them.

/// Decodes the body as libyaml's reader does: a UTF-16 BOM selects UTF-16, a
/// UTF-8 BOM is dropped, anything else must be UTF-8; control characters are
/// refused. Errors are the reader's problems (go-yaml gives them no line).
fn decode_input(body: &[u8]) -> Result<String, String> {
    let text = if let Some(rest) = body.strip_prefix(&[0xFF, 0xFE][..]) {
        decode_utf16(rest, u16::from_le_bytes)?
    } else if let Some(rest) = body.strip_prefix(&[0xFE, 0xFF][..]) {
        decode_utf16(rest, u16::from_be_bytes)?
    } else {
        let rest = body.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(body);
        match std::str::from_utf8(rest) {
            Ok(text) => text.to_string(),
            Err(err) => return Err(utf8_problem(&rest[err.valid_up_to()..]).to_string()),
        }
    };
    for c in text.chars() {
        let v = c as u32;
        let allowed = matches!(v, 0x09 | 0x0A | 0x0D | 0x20..=0x7E | 0x85)
            || (0xA0..=0xD7FF).contains(&v)
            || (0xE000..=0xFFFD).contains(&v)
            || (0x10000..=0x10FFFF).contains(&v);
        if !allowed {
            return Err("control characters are not allowed".to_string());
        }
    }
    Ok(text)
}

fn decode_utf16(raw: &[u8], word: fn([u8; 2]) -> u16) -> Result<String, String> {
    if raw.len() % 2 == 1 {
        return Err("incomplete UTF-16 character".to_string());
    }
    let units = raw.chunks_exact(2).map(|pair| word([pair[0], pair[1]]));
    let mut out = String::with_capacity(raw.len() / 2);
    for unit in char::decode_utf16(units) {
        match unit {
            Ok(c) => out.push(c),
            Err(err) if (0xDC00..=0xDFFF).contains(&err.unpaired_surrogate()) => {
                return Err("unexpected low surrogate area".to_string())
            }
            Err(_) => return Err("expected low surrogate area".to_string()),
        }
    }
    Ok(out)
}

/// libyaml's reader problem for the first invalid UTF-8 sequence.
fn utf8_problem(bad: &[u8]) -> &'static str {
    let lead = bad[0];
    let width = if lead & 0x80 == 0 {
        1
    } else if lead & 0xE0 == 0xC0 {
        2
    } else if lead & 0xF0 == 0xE0 {
        3
    } else if lead & 0xF8 == 0xF0 {
        4
    } else {
        return "invalid leading UTF-8 octet";
    };
    if bad.len() < width {
        return "incomplete UTF-8 octet sequence";
    }
    if bad[1..width].iter().any(|b| b & 0xC0 != 0x80) {
        return "invalid trailing UTF-8 octet";
    }
    let mut value = u32::from(lead & (0xFF >> (width + 1)));
    for b in &bad[1..width] {
        value = (value << 6) | u32::from(b & 0x3F);
    }
    let min = [0, 0, 0x80, 0x800, 0x10000][width];
    if value < min {
        return "invalid length of a UTF-8 sequence";
    }
    "invalid Unicode character"
}

// ---------------------------------------------------------------------------
// Parsing: yaml-rust2 events into a node tree (the first document only).

#[derive(Debug)]
enum NodeKind {
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
struct Node {
    kind: NodeKind,
    /// 1-based line of the node's first token (go-yaml's `node.line + 1`).
    line: usize,
}

struct Tree {
    nodes: Vec<Node>,
    /// The document's root node; `None` for an empty stream.
    root: Option<usize>,
}

fn full_tag(tag: Option<Tag>) -> String {
    match tag {
        Some(tag) => format!("{}{}", tag.handle, tag.suffix),
        None => String::new(),
    }
}

/// Parses the first document of `text`; errors are go-yaml's `yaml: ...`
/// texts (without sigs.k8s.io/yaml's prefix).
fn parse(text: &str) -> Result<Tree, String> {
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

// ---------------------------------------------------------------------------
// Decoding: go-yaml v2's decoder into interface{} (map[interface{}]interface{}).

/// A value as go-yaml v2 decodes it into `interface{}`.
#[derive(Debug, Clone)]
enum GoVal {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    /// A `*big.Int` (integers past 64 bits that are not floats), decimal.
    Big(String),
    Str(String),
    Seq(Vec<GoVal>),
    Map(GoMap),
}

/// Hashable identity of a Go map key (`interface{}` equality).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum KeyId {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(u64),
    /// NaN never equals itself: every NaN key is its own entry.
    Nan(usize),
    Big(String),
    Str(String),
}

#[derive(Debug, Clone, Default)]
struct GoMap {
    entries: Vec<(GoVal, GoVal)>,
    index: HashMap<KeyId, usize>,
}

impl GoMap {
    fn key_id(&self, key: &GoVal) -> KeyId {
        match key {
            GoVal::Null => KeyId::Null,
            GoVal::Bool(b) => KeyId::Bool(*b),
            GoVal::Int(i) => KeyId::Int(*i),
            GoVal::Uint(u) => KeyId::Uint(*u),
            GoVal::Float(f) if f.is_nan() => KeyId::Nan(self.entries.len()),
            GoVal::Float(f) => KeyId::Float(if *f == 0.0 { 0 } else { f.to_bits() }),
            GoVal::Big(s) => KeyId::Big(s.clone()),
            GoVal::Str(s) => KeyId::Str(s.clone()),
            // Rejected before insertion ("invalid map key").
            GoVal::Seq(_) | GoVal::Map(_) => KeyId::Nan(self.entries.len()),
        }
    }

    fn contains(&self, key: &GoVal) -> bool {
        self.index.contains_key(&self.key_id(key))
    }

    fn set(&mut self, key: GoVal, value: GoVal) {
        let id = self.key_id(&key);
        match self.index.get(&id) {
            Some(&at) => self.entries[at].1 = value,
            None => {
                self.index.insert(id, self.entries.len());
                self.entries.push((key, value));
            }
        }
    }
}

const STR_TAG: &str = "tag:yaml.org,2002:str";
const BOOL_TAG: &str = "tag:yaml.org,2002:bool";
const INT_TAG: &str = "tag:yaml.org,2002:int";
const FLOAT_TAG: &str = "tag:yaml.org,2002:float";
const NULL_TAG: &str = "tag:yaml.org,2002:null";
const TIMESTAMP_TAG: &str = "tag:yaml.org,2002:timestamp";
const BINARY_TAG: &str = "tag:yaml.org,2002:binary";
const MERGE_TAG: &str = "tag:yaml.org,2002:merge";

/// go-yaml's `shortTag`.
fn short_tag(tag: &str) -> String {
    match tag.strip_prefix("tag:yaml.org,2002:") {
        Some(rest) => format!("!!{rest}"),
        None => tag.to_string(),
    }
}

struct Decoder<'a> {
    tree: &'a Tree,
    strict: bool,
    terrors: Vec<String>,
    decode_count: usize,
    alias_count: usize,
    alias_depth: usize,
    active_aliases: HashSet<usize>,
    depth: usize,
    /// Bytes of output still allowed (alias expansion of big scalars).
    budget: usize,
}

/// go-yaml's `allowedAliasRatio`.
fn allowed_alias_ratio(decode_count: usize) -> f64 {
    const LOW: f64 = 400_000.0;
    const HIGH: f64 = 4_000_000.0;
    let count = decode_count as f64;
    if count <= LOW {
        0.99
    } else if count >= HIGH {
        0.10
    } else {
        0.99 - 0.89 * ((count - LOW) / (HIGH - LOW))
    }
}

const EXCESSIVE_ALIASING: &str = "yaml: document contains excessive aliasing";

impl Decoder<'_> {
    fn charge(&mut self, bytes: usize) -> Result<(), String> {
        self.budget = self
            .budget
            .checked_sub(bytes + 16)
            .ok_or_else(|| EXCESSIVE_ALIASING.to_string())?;
        Ok(())
    }

    /// go-yaml's `unmarshal(n, out)` for an `interface{}` target (`into` is
    /// `None`) or for an existing map (merge keys).
    fn unmarshal(&mut self, id: usize, into: Option<&mut GoMap>) -> Result<GoVal, String> {
        self.decode_count += 1;
        if self.alias_depth > 0 {
            self.alias_count += 1;
        }
        if self.alias_count > 100
            && self.decode_count > 1000
            && self.alias_count as f64 / self.decode_count as f64
                > allowed_alias_ratio(self.decode_count)
        {
            return Err(EXCESSIVE_ALIASING.to_string());
        }
        if self.depth >= MAX_DEPTH {
            return Err(format!("yaml: exceeded max depth of {MAX_DEPTH}"));
        }
        self.depth += 1;
        let result = self.unmarshal_node(id, into);
        self.depth -= 1;
        result
    }

    fn unmarshal_node(&mut self, id: usize, into: Option<&mut GoMap>) -> Result<GoVal, String> {
        let node = &self.tree.nodes[id];
        match &node.kind {
            NodeKind::Alias { target, name } => {
                if !self.active_aliases.insert(id) {
                    return Err(format!("yaml: anchor '{name}' value contains itself"));
                }
                self.alias_depth += 1;
                let result = self.unmarshal(*target, into);
                self.alias_depth -= 1;
                self.active_aliases.remove(&id);
                result
            }
            NodeKind::Scalar {
                value,
                implicit,
                tag,
            } => {
                self.charge(value.len())?;
                scalar(value, *implicit, tag)
            }
            NodeKind::Sequence(children) => {
                self.charge(0)?;
                let mut items = Vec::with_capacity(children.len());
                for &child in children {
                    items.push(self.unmarshal(child, None)?);
                }
                Ok(GoVal::Seq(items))
            }
            NodeKind::Mapping(children) => {
                self.charge(0)?;
                match into {
                    Some(map) => {
                        self.mapping(children, map)?;
                        Ok(GoVal::Null)
                    }
                    None => {
                        let mut map = GoMap::default();
                        self.mapping(children, &mut map)?;
                        Ok(GoVal::Map(map))
                    }
                }
            }
        }
    }

    fn mapping(&mut self, children: &[usize], map: &mut GoMap) -> Result<(), String> {
        for pair in children.chunks(2) {
            let (key, value) = (pair[0], pair.get(1).copied());
            let Some(value) = value else { break };
            if self.is_merge(key) {
                self.merge(value, map)?;
                continue;
            }
            let k = self.unmarshal(key, None)?;
            if matches!(k, GoVal::Map(_) | GoVal::Seq(_)) {
                return Err(format!("yaml: invalid map key: {}", go_syntax(&k)));
            }
            let v = self.unmarshal(value, None)?;
            if self.strict && map.contains(&k) {
                self.terrors.push(format!(
                    "line {}: key {} already set in map",
                    self.tree.nodes[value].line,
                    go_syntax(&k)
                ));
                continue;
            }
            map.set(k, v);
        }
        Ok(())
    }

    fn is_merge(&self, id: usize) -> bool {
        matches!(&self.tree.nodes[id].kind,
            NodeKind::Scalar { value, implicit, tag }
                if value == "<<" && (*implicit || tag == MERGE_TAG))
    }

    fn merge(&mut self, id: usize, map: &mut GoMap) -> Result<(), String> {
        const WANT_MAP: &str = "yaml: map merge requires map or sequence of maps as the value";
        let is_mapping = |tree: &Tree, id: usize| match &tree.nodes[id].kind {
            NodeKind::Mapping(_) => true,
            NodeKind::Alias { target, .. } => {
                matches!(tree.nodes[*target].kind, NodeKind::Mapping(_))
            }
            _ => false,
        };
        match &self.tree.nodes[id].kind {
            NodeKind::Mapping(_) | NodeKind::Alias { .. } => {
                if !is_mapping(self.tree, id) {
                    return Err(WANT_MAP.to_string());
                }
                self.unmarshal(id, Some(map))?;
            }
            NodeKind::Sequence(children) => {
                // Earlier maps take precedence: walk backwards.
                for &child in children.iter().rev() {
                    if !is_mapping(self.tree, child) {
                        return Err(WANT_MAP.to_string());
                    }
                    self.unmarshal(child, Some(map))?;
                }
            }
            NodeKind::Scalar { .. } => return Err(WANT_MAP.to_string()),
        }
        Ok(())
    }
}

/// go-yaml's `decoder.scalar` into `interface{}`.
fn scalar(value: &str, implicit: bool, tag: &str) -> Result<GoVal, String> {
    if tag.is_empty() && !implicit {
        return Ok(GoVal::Str(value.to_string()));
    }
    let (rtag, resolved) = resolve(tag, value)?;
    if rtag == BINARY_TAG {
        let cleaned: String = value.chars().filter(|c| !c.is_whitespace()).collect();
        use base64::Engine as _;
        return match base64::engine::general_purpose::STANDARD.decode(cleaned.as_bytes()) {
            Ok(bytes) => Ok(GoVal::Str(String::from_utf8_lossy(&bytes).into_owned())),
            Err(_) => Err("yaml: !!binary value contains invalid base64 data".to_string()),
        };
    }
    Ok(match resolved {
        Resolved::Null => GoVal::Null,
        Resolved::Bool(b) => GoVal::Bool(b),
        Resolved::Int(i) => GoVal::Int(i),
        Resolved::Uint(u) => GoVal::Uint(u),
        Resolved::Float(f) => GoVal::Float(f),
        Resolved::Big(s) => GoVal::Big(s),
        // Timestamps stay strings in interface{} (go-yaml v2 compatibility).
        Resolved::Str | Resolved::Timestamp | Resolved::Merge => GoVal::Str(value.to_string()),
    })
}

// ---------------------------------------------------------------------------
// go-yaml v2 `resolve`.

#[derive(Debug, Clone, PartialEq)]
enum Resolved {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Float(f64),
    Big(String),
    Str,
    Timestamp,
    Merge,
}

/// go-yaml's `resolveMap`.
fn resolve_map(s: &str) -> Option<(&'static str, Resolved)> {
    Some(match s {
        "y" | "Y" | "yes" | "Yes" | "YES" | "true" | "True" | "TRUE" | "on" | "On" | "ON" => {
            (BOOL_TAG, Resolved::Bool(true))
        }
        "n" | "N" | "no" | "No" | "NO" | "false" | "False" | "FALSE" | "off" | "Off" | "OFF" => {
            (BOOL_TAG, Resolved::Bool(false))
        }
        "" | "~" | "null" | "Null" | "NULL" => (NULL_TAG, Resolved::Null),
        ".nan" | ".NaN" | ".NAN" => (FLOAT_TAG, Resolved::Float(f64::NAN)),
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            (FLOAT_TAG, Resolved::Float(f64::INFINITY))
        }
        "-.inf" | "-.Inf" | "-.INF" => (FLOAT_TAG, Resolved::Float(f64::NEG_INFINITY)),
        "<<" => (MERGE_TAG, Resolved::Merge),
        _ => return None,
    })
}

/// go-yaml v2 `resolve(tag, in)`: the tag the scalar resolves to and its
/// value; `Err` is go-yaml's `cannot decode ...` failure.
fn resolve(tag: &str, input: &str) -> Result<(&'static str, Resolved), String> {
    let resolvable = matches!(
        tag,
        "" | STR_TAG | BOOL_TAG | INT_TAG | FLOAT_TAG | NULL_TAG | TIMESTAMP_TAG
    );
    if !resolvable {
        // An unresolvable tag keeps the text; `!!binary` is decoded by the caller.
        let rtag = if tag == BINARY_TAG { BINARY_TAG } else { "" };
        return Ok((rtag, Resolved::Str));
    }
    let (rtag, out) = resolve_plain(tag, input);
    if tag.is_empty() || tag == rtag || tag == STR_TAG || tag == BINARY_TAG {
        return Ok((rtag, out));
    }
    if tag == FLOAT_TAG && rtag == INT_TAG {
        match out {
            Resolved::Int(i) => return Ok((FLOAT_TAG, Resolved::Float(i as f64))),
            Resolved::Uint(u) => return Ok((rtag, Resolved::Uint(u))),
            _ => {}
        }
    }
    Err(format!(
        "yaml: cannot decode {} `{input}` as a {}",
        short_tag(rtag),
        short_tag(tag)
    ))
}

fn resolve_plain(tag: &str, input: &str) -> (&'static str, Resolved) {
    let hint = match input.as_bytes().first() {
        None => b'N',
        Some(b'+' | b'-') => b'S',
        Some(b'0'..=b'9') => b'D',
        Some(b'y' | b'Y' | b'n' | b'N' | b't' | b'T' | b'f' | b'F' | b'o' | b'O' | b'~') => b'M',
        Some(b'.') => b'.',
        Some(_) => 0,
    };
    if hint != 0 && tag != STR_TAG && tag != BINARY_TAG {
        if let Some(item) = resolve_map(input) {
            return item;
        }
        match hint {
            b'.' => {
                if let Some(f) = go_parse_float(input) {
                    return (FLOAT_TAG, Resolved::Float(f));
                }
            }
            b'D' | b'S' => {
                if (tag.is_empty() || tag == TIMESTAMP_TAG) && is_timestamp(input) {
                    return (TIMESTAMP_TAG, Resolved::Timestamp);
                }
                let plain: String = input.chars().filter(|&c| c != '_').collect();
                if let Ok(i) = go_parse_int(&plain) {
                    return (INT_TAG, Resolved::Int(i));
                }
                let uint_err = match go_parse_uint(&plain) {
                    Ok(u) => return (INT_TAG, Resolved::Uint(u)),
                    Err(err) => err,
                };
                if is_yaml_style_float(&plain) {
                    if let Some(f) = go_parse_float(&plain) {
                        return (FLOAT_TAG, Resolved::Float(f));
                    }
                }
                if uint_err == IntError::Range {
                    if let Some(big) = big_int_decimal(&plain) {
                        return (INT_TAG, Resolved::Big(big));
                    }
                }
            }
            _ => {}
        }
    }
    (STR_TAG, Resolved::Str)
}

#[derive(Debug, PartialEq, Eq)]
enum IntError {
    Syntax,
    Range,
}

/// Base and digits of Go's `ParseUint(s, 0, 64)` syntax (no sign).
fn split_base(s: &str) -> (u32, &str) {
    let bytes = s.as_bytes();
    if bytes.len() >= 2 && bytes[0] == b'0' {
        match bytes[1] {
            b'x' | b'X' => return (16, &s[2..]),
            b'o' | b'O' => return (8, &s[2..]),
            b'b' | b'B' => return (2, &s[2..]),
            _ => return (8, &s[1..]),
        }
    }
    (10, s)
}

/// Go's `strconv.ParseUint(s, 0, 64)` (underscores already removed).
fn go_parse_uint(s: &str) -> Result<u64, IntError> {
    let (base, digits) = split_base(s);
    if digits.is_empty() {
        return Err(IntError::Syntax);
    }
    let mut value: u64 = 0;
    let mut overflow = false;
    for c in digits.chars() {
        let d = c.to_digit(base).ok_or(IntError::Syntax)?;
        match value
            .checked_mul(u64::from(base))
            .and_then(|v| v.checked_add(u64::from(d)))
        {
            Some(v) => value = v,
            None => overflow = true,
        }
    }
    if overflow {
        Err(IntError::Range)
    } else {
        Ok(value)
    }
}

/// Go's `strconv.ParseInt(s, 0, 64)`.
fn go_parse_int(s: &str) -> Result<i64, IntError> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let magnitude = go_parse_uint(rest)?;
    if negative {
        if magnitude > 1u64 << 63 {
            return Err(IntError::Range);
        }
        Ok((magnitude as i64).wrapping_neg())
    } else {
        i64::try_from(magnitude).map_err(|_| IntError::Range)
    }
}

/// The decimal digits of `big.Int.SetString(s, 0)` for integers past 64 bits.
fn big_int_decimal(s: &str) -> Option<String> {
    let (negative, rest) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => (false, s),
    };
    let (base, digits) = split_base(rest);
    if digits.is_empty() {
        return None;
    }
    // Little-endian base-1e9 limbs.
    let mut limbs: Vec<u64> = vec![0];
    for c in digits.chars() {
        let d = u64::from(c.to_digit(base)?);
        let mut carry = d;
        for limb in &mut limbs {
            let v = *limb * u64::from(base) + carry;
            *limb = v % 1_000_000_000;
            carry = v / 1_000_000_000;
        }
        while carry > 0 {
            limbs.push(carry % 1_000_000_000);
            carry /= 1_000_000_000;
        }
    }
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let mut iter = limbs.iter().rev();
    if let Some(top) = iter.next() {
        let _ = write!(out, "{top}");
    }
    for limb in iter {
        let _ = write!(out, "{limb:09}");
    }
    Some(out)
}

/// go-yaml's `yamlStyleFloat`: `^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$`.
fn is_yaml_style_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let start = *i;
        while *i < b.len() && b[*i].is_ascii_digit() {
            *i += 1;
        }
        *i - start
    };
    if b.get(i) == Some(&b'.') {
        i += 1;
        if digits(&mut i) == 0 {
            return false;
        }
    } else {
        if digits(&mut i) == 0 {
            return false;
        }
        if b.get(i) == Some(&b'.') {
            i += 1;
            digits(&mut i);
        }
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        i += 1;
        if matches!(b.get(i), Some(b'+' | b'-')) {
            i += 1;
        }
        if digits(&mut i) == 0 {
            return false;
        }
    }
    i == b.len()
}

/// Go's `strconv.ParseFloat(s, 64)` for the decimal forms go-yaml feeds it;
/// an overflow (`1e400`) is an error in Go.
fn go_parse_float(s: &str) -> Option<f64> {
    let b = s.as_bytes();
    let body = s.trim_start_matches(['+', '-']);
    if body.is_empty()
        || !body
            .bytes()
            .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E' | b'+' | b'-'))
        || b.iter().filter(|&&c| c == b'+' || c == b'-').count() > 2
    {
        return None;
    }
    s.parse::<f64>().ok().filter(|f| f.is_finite())
}

/// go-yaml v2 `parseTimestamp`: `2006-1-2T15:4:5.999999999Z07:00` (`T` or
/// `t`), `2006-1-2 15:4:5.999999999` or `2006-1-2`, as Go's `time.Parse`
/// accepts them (1-2 digit month/day/hour/minute/second, valid calendar
/// dates, any number of fraction digits).
fn is_timestamp(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() < 5 || !b[..4].iter().all(u8::is_ascii_digit) || b[4] != b'-' {
        return false;
    }
    let mut i = 5;
    let num = |i: &mut usize, max_digits: usize| -> Option<u32> {
        let start = *i;
        while *i < b.len() && *i - start < max_digits && b[*i].is_ascii_digit() {
            *i += 1;
        }
        if *i == start {
            return None;
        }
        s[start..*i].parse().ok()
    };
    let year: u32 = match s[..4].parse() {
        Ok(y) => y,
        Err(_) => return false,
    };
    let Some(month) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b'-') {
        return false;
    }
    i += 1;
    let Some(day) = num(&mut i, 2) else {
        return false;
    };
    if !(1..=12).contains(&month) {
        return false;
    }
    let leap = (year.is_multiple_of(4) && !year.is_multiple_of(100)) || year.is_multiple_of(400);
    let days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    if day < 1 || day > days[(month - 1) as usize] {
        return false;
    }
    if i == b.len() {
        return true;
    }
    let zoned = match b[i] {
        b'T' | b't' => true,
        b' ' => false,
        _ => return false,
    };
    i += 1;
    let Some(hour) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(minute) = num(&mut i, 2) else {
        return false;
    };
    if b.get(i) != Some(&b':') {
        return false;
    }
    i += 1;
    let Some(second) = num(&mut i, 2) else {
        return false;
    };
    if hour >= 24 || minute >= 60 || second >= 60 {
        return false;
    }
    if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
        i += 1;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
    }
    if !zoned {
        return i == b.len();
    }
    match &b[i..] {
        [b'Z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => [h1, h2, m1, m2].iter().all(|c| c.is_ascii_digit()),
        _ => false,
    }
}

// ---------------------------------------------------------------------------
// Go formatting helpers.

/// Go's `%#v` of a decoded YAML value (used in go-yaml's error texts).
fn go_syntax(v: &GoVal) -> String {
    match v {
        GoVal::Null => "<nil>".to_string(),
        GoVal::Bool(b) => b.to_string(),
        GoVal::Int(i) => i.to_string(),
        GoVal::Uint(u) => format!("0x{u:x}"),
        GoVal::Float(f) => go_format_g(*f, false),
        GoVal::Big(s) => s.clone(),
        GoVal::Str(s) => go_quote(s),
        GoVal::Seq(items) => {
            let inner: Vec<String> = items.iter().map(go_syntax).collect();
            format!("[]interface {{}}{{{}}}", inner.join(", "))
        }
        GoVal::Map(map) => {
            let inner: Vec<String> = map
                .entries
                .iter()
                .map(|(k, v)| format!("{}:{}", go_syntax(k), go_syntax(v)))
                .collect();
            format!("map[interface {{}}]interface {{}}{{{}}}", inner.join(", "))
        }
    }
}

/// Go's `strconv.Quote`.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0C' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0B' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if c == ' ' || !(c.is_control() || c.is_whitespace()) => out.push(c),
            c if (c as u32) <= 0xFFFF => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Shortest decimal digits and decimal exponent of a finite, non-zero float
/// (`f32` precision when `single`): `1.25e3` is (`"125"`, 3).
fn shortest_digits(f: f64, single: bool) -> (String, i32) {
    let text = if single {
        format!("{:e}", (f as f32).abs())
    } else {
        format!("{:e}", f.abs())
    };
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    (digits, exp.parse().unwrap_or(0))
}

/// Go's `%e`-style body: `d.ddde±XX`.
fn fmt_e(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.unsigned_abs());
    out
}

/// Go's `%f` with the shortest digits.
fn fmt_f(negative: bool, digits: &str, exp: i32) -> String {
    let mut out = String::new();
    if negative {
        out.push('-');
    }
    let point = exp + 1; // digits before the decimal point
    if point <= 0 {
        out.push_str("0.");
        for _ in 0..(-point) {
            out.push('0');
        }
        out.push_str(digits);
    } else if point as usize >= digits.len() {
        out.push_str(digits);
        for _ in 0..(point as usize - digits.len()) {
            out.push('0');
        }
    } else {
        out.push_str(&digits[..point as usize]);
        out.push('.');
        out.push_str(&digits[point as usize..]);
    }
    out
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64|32)`, with go-yaml's names for
/// the infinities and NaN.
fn go_format_g(f: f64, single: bool) -> String {
    if f.is_nan() {
        return ".nan".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { ".inf" } else { "-.inf" }.to_string();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = shortest_digits(f, single);
    if !(-4..6).contains(&exp) {
        fmt_e(f < 0.0, &digits, exp)
    } else {
        fmt_f(f < 0.0, &digits, exp)
    }
}

/// Go's `json.Marshal` of a finite float64: `'f'` notation between 1e-6 and
/// 1e21, `'e'` notation (`1e+21`, `1e-7`) outside.
fn go_json_float(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (digits, exp) = shortest_digits(f, false);
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let text = fmt_e(f < 0.0, &digits, exp);
        // Go cleans e-09 up to e-9.
        match text.find("e-0") {
            Some(at) if text.len() == at + 4 => format!("{}e-{}", &text[..at], &text[at + 3..]),
            _ => text,
        }
    } else {
        fmt_f(f < 0.0, &digits, exp)
    }
}

// ---------------------------------------------------------------------------
// interface{} to JSON, as sigs.k8s.io/yaml converts and encoding/json writes.

fn to_json(v: GoVal) -> Result<Value, String> {
    Ok(match v {
        GoVal::Null => Value::Null,
        GoVal::Bool(b) => Value::Bool(b),
        GoVal::Int(i) => Value::Number(i.into()),
        GoVal::Uint(u) => Value::Number(u.into()),
        GoVal::Float(f) => {
            if !f.is_finite() {
                let shown = if f.is_nan() {
                    "NaN"
                } else if f > 0.0 {
                    "+Inf"
                } else {
                    "-Inf"
                };
                return Err(format!("json: unsupported value: {shown}"));
            }
            number_from_text(&go_json_float(f))
        }
        GoVal::Big(digits) => number_from_text(&digits),
        GoVal::Str(s) => Value::String(s),
        GoVal::Seq(items) => Value::Array(
            items
                .into_iter()
                .map(to_json)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        GoVal::Map(map) => {
            let mut out = Map::new();
            for (k, v) in map.entries {
                let key = match &k {
                    GoVal::Str(s) => s.clone(),
                    GoVal::Int(i) => i.to_string(),
                    GoVal::Float(f) => go_format_g(*f, true),
                    GoVal::Bool(b) => b.to_string(),
                    other => {
                        let type_name = match other {
                            GoVal::Null => "%!s(<nil>)",
                            GoVal::Uint(_) => "uint64",
                            GoVal::Big(_) => "*big.Int",
                            _ => "interface {}",
                        };
                        return Err(format!(
                            "unsupported map key of type: {type_name}, key: {}, value: {}",
                            go_syntax(other),
                            go_syntax(&v)
                        ));
                    }
                };
                out.insert(key, to_json(v)?);
            }
            Value::Object(out)
        }
    })
}

/// A JSON number as serde_json reads Go's text of it (integers stay
/// integers, `1e+21` is a float).
fn number_from_text(text: &str) -> Value {
    match serde_json::from_str::<Number>(text) {
        Ok(n) => Value::Number(n),
        Err(_) => text
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .unwrap_or(Value::Null),
    }
}

fn convert(body: &[u8], strict: bool) -> Result<Value, YamlError> {
    let text = decode_input(body).map_err(|p| YamlError::convert(format!("yaml: {p}")))?;
    // yaml-rust2 should never panic, but a body is untrusted input.
    let parsed = std::panic::catch_unwind(|| parse(&text));
    let tree = match parsed {
        Ok(Ok(tree)) => tree,
        Ok(Err(msg)) => return Err(YamlError::convert(msg)),
        Err(_) => {
            return Err(YamlError::convert(
                "yaml: unknown problem parsing YAML content",
            ))
        }
    };
    let Some(root) = tree.root else {
        return Ok(Value::Null);
    };
    let mut decoder = Decoder {
        tree: &tree,
        strict,
        terrors: Vec::new(),
        // The document node counts as one decode in go-yaml.
        decode_count: 1,
        alias_count: 0,
        alias_depth: 0,
        active_aliases: HashSet::new(),
        depth: 0,
        budget: 64 * 1024 * 1024 + body.len().saturating_mul(16),
    };
    let value = decoder.unmarshal(root, None).map_err(YamlError::convert)?;
    if !decoder.terrors.is_empty() {
        return Err(YamlError::convert(format!(
            "yaml: unmarshal errors:\n  {}",
            decoder.terrors.join("\n  ")
        )));
    }
    to_json(value).map_err(YamlError::convert)
}

// ---------------------------------------------------------------------------
// JSON to YAML: go-yaml v2's encoder and emitter (libyaml's), for JSON trees.

/// sigs.k8s.io/yaml `JSONToYAML` of `value`'s JSON, byte for byte as
/// kube-apiserver answers `Accept: application/yaml`.
pub fn json_to_yaml(value: &Value) -> String {
    let mut emitter = Emitter::default();
    emitter.node(value, true, false, false, false);
    // Document end: an implicit document just ends the last line.
    emitter.write_indent();
    emitter.out
}

/// go-yaml v2's `keyList.Less` for string keys: runs of digits compare as
/// numbers, letters sort after other characters.
fn key_less(a: &str, b: &str) -> bool {
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i] < br[i];
        }
        if al || bl {
            return bl;
        }
        let (mut an, mut bn) = (0i64, 0i64);
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an
                .wrapping_mul(10)
                .wrapping_add(i64::from(ar[ai] as u8 - b'0'));
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn
                .wrapping_mul(10)
                .wrapping_add(i64::from(br[bi] as u8 - b'0'));
            bi += 1;
        }
        if an != bn {
            return an < bn;
        }
        if ai != bi {
            return ai < bi;
        }
        return ar[i] < br[i];
    }
    ar.len() < br.len()
}

fn sorted_entries(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = map.iter().collect();
    entries.sort_by(|a, b| {
        if key_less(a.0, b.0) {
            std::cmp::Ordering::Less
        } else if key_less(b.0, a.0) {
            std::cmp::Ordering::Greater
        } else {
            std::cmp::Ordering::Equal
        }
    });
    entries
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Style {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
}

/// `yaml_emitter_analyze_scalar`'s verdict.
#[derive(Debug, Default)]
struct Analysis {
    multiline: bool,
    flow_plain_allowed: bool,
    block_plain_allowed: bool,
    single_quoted_allowed: bool,
    block_allowed: bool,
}

fn is_break(c: char) -> bool {
    matches!(c, '\r' | '\n' | '\u{85}' | '\u{2028}' | '\u{2029}')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// libyaml's `is_printable`.
fn is_printable(c: char) -> bool {
    let v = c as u32;
    v == 0x0A
        || (0x20..=0x7E).contains(&v)
        || (0xA0..=0xD7FF).contains(&v)
        || ((0xE000..=0xFFFD).contains(&v) && v != 0xFEFF)
}

fn analyze(value: &str) -> Analysis {
    if value.is_empty() {
        return Analysis {
            multiline: false,
            flow_plain_allowed: false,
            block_plain_allowed: true,
            single_quoted_allowed: true,
            block_allowed: false,
        };
    }
    let (mut block_indicators, mut flow_indicators) = (false, false);
    let (mut line_breaks, mut special_characters) = (false, false);
    let (mut leading_space, mut leading_break) = (false, false);
    let (mut trailing_space, mut trailing_break) = (false, false);
    let (mut break_space, mut space_break) = (false, false);
    let (mut previous_space, mut previous_break) = (false, false);
    if value.starts_with("---") || value.starts_with("...") {
        block_indicators = true;
        flow_indicators = true;
    }
    let mut preceded_by_whitespace = true;
    let chars: Vec<char> = value.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        let followed_by_whitespace = next.is_none_or(is_blank);
        if i == 0 {
            match c {
                '#' | ',' | '[' | ']' | '{' | '}' | '&' | '*' | '!' | '|' | '>' | '\'' | '"'
                | '%' | '@' | '`' => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                '?' | ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '-' if followed_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        } else {
            match c {
                ',' | '?' | '[' | ']' | '{' | '}' => flow_indicators = true,
                ':' => {
                    flow_indicators = true;
                    if followed_by_whitespace {
                        block_indicators = true;
                    }
                }
                '#' if preceded_by_whitespace => {
                    flow_indicators = true;
                    block_indicators = true;
                }
                _ => {}
            }
        }
        if !is_printable(c) {
            special_characters = true;
        }
        let last = i + 1 == chars.len();
        if c == ' ' {
            if i == 0 {
                leading_space = true;
            }
            if last {
                trailing_space = true;
            }
            if previous_break {
                break_space = true;
            }
            previous_space = true;
            previous_break = false;
        } else if is_break(c) {
            line_breaks = true;
            if i == 0 {
                leading_break = true;
            }
            if last {
                trailing_break = true;
            }
            if previous_space {
                space_break = true;
            }
            previous_space = false;
            previous_break = true;
        } else {
            previous_space = false;
            previous_break = false;
        }
        preceded_by_whitespace = is_blank(c) || is_break(c);
    }
    let mut a = Analysis {
        multiline: line_breaks,
        flow_plain_allowed: true,
        block_plain_allowed: true,
        single_quoted_allowed: true,
        block_allowed: true,
    };
    if leading_space || leading_break || trailing_space || trailing_break {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if trailing_space {
        a.block_allowed = false;
    }
    if break_space {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
    }
    if space_break || special_characters {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
        a.single_quoted_allowed = false;
        a.block_allowed = false;
    }
    if line_breaks {
        a.flow_plain_allowed = false;
        a.block_plain_allowed = false;
    }
    if flow_indicators {
        a.flow_plain_allowed = false;
    }
    if block_indicators {
        a.block_plain_allowed = false;
    }
    a
}

/// go-yaml's `isBase60Float`: `^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$`.
fn is_base60_float(s: &str) -> bool {
    let b = s.as_bytes();
    let mut i = 0;
    if matches!(b.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    if !b.get(i).is_some_and(u8::is_ascii_digit) {
        return false;
    }
    i += 1;
    while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
        i += 1;
    }
    let mut groups = 0;
    while b.get(i) == Some(&b':') {
        i += 1;
        match (b.get(i), b.get(i + 1)) {
            (Some(b'0'..=b'5'), Some(b'0'..=b'9')) => i += 2,
            (Some(b'0'..=b'9'), _) => i += 1,
            _ => return false,
        }
        groups += 1;
    }
    if groups == 0 {
        return false;
    }
    if b.get(i) == Some(&b'.') {
        i += 1;
        while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
            i += 1;
        }
    }
    i == b.len()
}

/// The style go-yaml's `stringv` asks for.
fn string_style(s: &str) -> Style {
    let plain = resolve_plain("", s).0 == STR_TAG && !is_base60_float(s);
    if s.contains('\n') {
        Style::Literal
    } else if plain {
        Style::Plain
    } else {
        Style::DoubleQuoted
    }
}

/// The text and style go-yaml writes for a JSON number (parsed back from
/// Go's JSON, as `JSONToYAML` does).
fn number_text(n: &Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(0.0);
    let text = go_json_float(f);
    match resolve_plain("", &text).1 {
        Resolved::Int(i) => i.to_string(),
        Resolved::Uint(u) => u.to_string(),
        Resolved::Big(s) => s,
        Resolved::Float(f) => go_format_g(f, false),
        _ => text,
    }
}

const BEST_INDENT: i64 = 2;
const BEST_WIDTH: i64 = 80;

/// The parts of libyaml's emitter state that block output uses.
struct Emitter {
    out: String,
    column: i64,
    indent: i64,
    indents: Vec<i64>,
    whitespace: bool,
    indention: bool,
    flow_level: usize,
    mapping_context: bool,
    simple_key_context: bool,
}

impl Default for Emitter {
    fn default() -> Self {
        Emitter {
            out: String::new(),
            column: 0,
            indent: -1,
            indents: Vec::new(),
            whitespace: true,
            indention: true,
            flow_level: 0,
            mapping_context: false,
            simple_key_context: false,
        }
    }
}

impl Emitter {
    fn put(&mut self, c: char) {
        self.out.push(c);
        self.column += 1;
    }

    fn put_break(&mut self) {
        self.out.push('\n');
        self.column = 0;
    }

    fn write_break(&mut self, c: char) {
        if c == '\n' {
            self.put_break();
        } else {
            self.out.push(c);
            self.column = 0;
        }
    }

    fn increase_indent(&mut self, flow: bool, indentless: bool) {
        self.indents.push(self.indent);
        if self.indent < 0 {
            self.indent = if flow { BEST_INDENT } else { 0 };
        } else if !indentless {
            self.indent += BEST_INDENT;
        }
    }

    fn pop_indent(&mut self) {
        self.indent = self.indents.pop().unwrap_or(-1);
    }

    fn write_indent(&mut self) {
        let indent = self.indent.max(0);
        if !self.indention || self.column > indent || (self.column == indent && !self.whitespace) {
            self.put_break();
        }
        while self.column < indent {
            self.put(' ');
        }
        self.whitespace = true;
        self.indention = true;
    }

    fn write_indicator(
        &mut self,
        indicator: &str,
        need_whitespace: bool,
        is_whitespace: bool,
        is_indention: bool,
    ) {
        if need_whitespace && !self.whitespace {
            self.put(' ');
        }
        for c in indicator.chars() {
            self.put(c);
        }
        self.whitespace = is_whitespace;
        self.indention = self.indention && is_indention;
    }

    fn node(&mut self, value: &Value, _root: bool, _sequence: bool, mapping: bool, simple: bool) {
        self.mapping_context = mapping;
        self.simple_key_context = simple;
        match value {
            Value::Null => self.scalar("null", Style::Plain),
            Value::Bool(b) => self.scalar(if *b { "true" } else { "false" }, Style::Plain),
            Value::Number(n) => self.scalar(&number_text(n), Style::Plain),
            Value::String(s) => self.scalar(s, string_style(s)),
            Value::Array(items) if items.is_empty() || self.flow_level > 0 => {
                self.empty_flow("[", "]")
            }
            Value::Object(map) if map.is_empty() || self.flow_level > 0 => {
                self.empty_flow("{", "}")
            }
            Value::Array(items) => {
                let indentless = self.mapping_context && !self.indention;
                self.increase_indent(false, indentless);
                for item in items {
                    self.write_indent();
                    self.write_indicator("-", true, false, true);
                    self.node(item, false, true, false, false);
                }
                self.pop_indent();
            }
            Value::Object(map) => {
                self.increase_indent(false, false);
                for (key, item) in sorted_entries(map) {
                    self.write_indent();
                    let analysis = analyze(key);
                    if !analysis.multiline && key.len() <= 128 {
                        self.mapping_context = true;
                        self.simple_key_context = true;
                        self.scalar(key, string_style(key));
                        self.write_indicator(":", false, false, false);
                    } else {
                        self.write_indicator("?", true, false, true);
                        self.mapping_context = true;
                        self.simple_key_context = false;
                        self.scalar(key, string_style(key));
                        self.write_indent();
                        self.write_indicator(":", true, false, true);
                    }
                    self.node(item, false, false, true, false);
                }
                self.pop_indent();
            }
        }
    }

    /// An empty (flow) collection: `[]` / `{}`.
    fn empty_flow(&mut self, open: &str, close: &str) {
        self.write_indicator(open, true, true, false);
        self.increase_indent(true, false);
        self.flow_level += 1;
        self.flow_level -= 1;
        self.pop_indent();
        self.write_indicator(close, false, false, false);
    }

    fn scalar(&mut self, value: &str, requested: Style) {
        let a = analyze(value);
        let mut style = requested;
        if self.simple_key_context && a.multiline {
            style = Style::DoubleQuoted;
        }
        if style == Style::Plain {
            if (self.flow_level > 0 && !a.flow_plain_allowed)
                || (self.flow_level == 0 && !a.block_plain_allowed)
            {
                style = Style::SingleQuoted;
            }
            if value.is_empty() && (self.flow_level > 0 || self.simple_key_context) {
                style = Style::SingleQuoted;
            }
        }
        if style == Style::SingleQuoted && !a.single_quoted_allowed {
            style = Style::DoubleQuoted;
        }
        if style == Style::Literal
            && (!a.block_allowed || self.flow_level > 0 || self.simple_key_context)
        {
            style = Style::DoubleQuoted;
        }
        self.increase_indent(true, false);
        let allow_breaks = !self.simple_key_context;
        match style {
            Style::Plain => self.write_plain(value, allow_breaks),
            Style::SingleQuoted => self.write_single_quoted(value, allow_breaks),
            Style::DoubleQuoted => self.write_double_quoted(value, allow_breaks),
            Style::Literal => self.write_literal(value),
        }
        self.pop_indent();
    }

    fn write_plain(&mut self, value: &str, allow_breaks: bool) {
        if !self.whitespace {
            self.put(' ');
        }
        let chars: Vec<char> = value.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.whitespace = false;
        self.indention = false;
    }

    fn write_single_quoted(&mut self, value: &str, allow_breaks: bool) {
        self.write_indicator("'", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        let (mut spaces, mut breaks) = (false, false);
        for (i, &c) in chars.iter().enumerate() {
            if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && i > 0
                    && i + 1 < chars.len()
                    && chars.get(i + 1) != Some(&' ')
                {
                    self.write_indent();
                } else {
                    self.put(c);
                }
                spaces = true;
            } else if is_break(c) {
                if !breaks && c == '\n' {
                    self.put_break();
                }
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                if c == '\'' {
                    self.put('\'');
                }
                self.put(c);
                self.indention = false;
                spaces = false;
                breaks = false;
            }
        }
        self.write_indicator("'", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_double_quoted(&mut self, value: &str, allow_breaks: bool) {
        let mut spaces = false;
        self.write_indicator("\"", true, false, false);
        let chars: Vec<char> = value.chars().collect();
        // Byte offsets decide "not the last byte", as libyaml's loop does.
        let mut offset = 0usize;
        for (i, &c) in chars.iter().enumerate() {
            let width = c.len_utf8();
            if !is_printable(c) || c == '\u{FEFF}' || is_break(c) || c == '"' || c == '\\' {
                self.put('\\');
                match c {
                    '\0' => self.put('0'),
                    '\x07' => self.put('a'),
                    '\x08' => self.put('b'),
                    '\t' => self.put('t'),
                    '\n' => self.put('n'),
                    '\x0B' => self.put('v'),
                    '\x0C' => self.put('f'),
                    '\r' => self.put('r'),
                    '\x1B' => self.put('e'),
                    '"' => self.put('"'),
                    '\\' => self.put('\\'),
                    '\u{85}' => self.put('N'),
                    '\u{A0}' => self.put('_'),
                    '\u{2028}' => self.put('L'),
                    '\u{2029}' => self.put('P'),
                    c => {
                        let v = c as u32;
                        let (letter, digits) = if v <= 0xFF {
                            ('x', 2)
                        } else if v <= 0xFFFF {
                            ('u', 4)
                        } else {
                            ('U', 8)
                        };
                        self.put(letter);
                        for k in (0..digits).rev() {
                            let digit = (v >> (k * 4)) & 0xF;
                            self.put(
                                char::from_digit(digit, 16)
                                    .unwrap_or('0')
                                    .to_ascii_uppercase(),
                            );
                        }
                    }
                }
                spaces = false;
            } else if c == ' ' {
                if allow_breaks
                    && !spaces
                    && self.column > BEST_WIDTH
                    && offset > 0
                    && offset + width < value.len()
                {
                    self.write_indent();
                    if chars.get(i + 1) == Some(&' ') {
                        self.put('\\');
                    }
                } else {
                    self.put(c);
                }
                spaces = true;
            } else {
                self.put(c);
                spaces = false;
            }
            offset += width;
        }
        self.write_indicator("\"", false, false, false);
        self.whitespace = false;
        self.indention = false;
    }

    fn write_literal(&mut self, value: &str) {
        self.write_indicator("|", true, false, false);
        // Block scalar hints: an indentation indicator when the text starts
        // with a space or a break, then the chomping indicator.
        let chars: Vec<char> = value.chars().collect();
        if chars.first().is_some_and(|&c| c == ' ' || is_break(c)) {
            self.write_indicator(&BEST_INDENT.to_string(), false, false, false);
        }
        let chomp = match chars.len() {
            0 => Some('-'),
            n if !is_break(chars[n - 1]) => Some('-'),
            1 => Some('+'),
            n if is_break(chars[n - 2]) => Some('+'),
            _ => None,
        };
        if let Some(chomp) = chomp {
            self.write_indicator(&chomp.to_string(), false, false, false);
        }
        self.put_break();
        self.indention = true;
        self.whitespace = true;
        let mut breaks = true;
        for &c in &chars {
            if is_break(c) {
                self.write_break(c);
                self.indention = true;
                breaks = true;
            } else {
                if breaks {
                    self.write_indent();
                }
                self.put(c);
                self.indention = false;
                breaks = false;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn y2j(s: &str) -> Value {
        match yaml_to_json(s.as_bytes()) {
            Ok(v) => v,
            Err(e) => panic!("{s:?}: {e}"),
        }
    }

    fn err(s: &str) -> String {
        match yaml_to_json(s.as_bytes()) {
            Ok(v) => panic!("{s:?} parsed as {v}"),
            Err(e) => e.to_string(),
        }
    }

    #[test]
    fn scalars_resolve_as_go_yaml_v2() {
        let v = y2j(concat!(
            "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: true\nh: 'yes'\n",
            "i: ~\nj: null\nk:\nl: \"null\"\nm: 0755\nnn: 0x1F\no: 1_000\np: -0b101\n",
            "q: 1.0\nr: 1.5\ns: 1e3\nt: .5\nu: 2026-11-22T12:00:00Z\nv: 08\nw: 0o17\n",
            "x: 18446744073709551615\nyy: 9223372036854775807\nz: -9223372036854775808\n",
            "y: n\n",
            "aa: 1e400\nbb: +12\ncc: .inf_x\ndd: 1:20\nee: 12:30:45\n",
        ));
        assert_eq!(
            v,
            json!({
                "a": true, "b": false, "c": true, "d": false, "e": true, "f": false,
                "g": true, "h": "yes", "i": null, "j": null, "k": null, "l": "null",
                "m": 493, "nn": 31, "o": 1000, "p": -5, "q": 1, "r": 1.5, "s": 1000,
                "t": 0.5, "u": "2026-11-22T12:00:00Z", "v": 8, "w": 15,
                "x": 18446744073709551615u64, "yy": 9223372036854775807i64,
                // `y` and `n` are YAML 1.1 booleans, keys included.
                "true": false,
                "z": -9223372036854775807i64 - 1,
                "aa": "1e400", "bb": 12, "cc": ".inf_x", "dd": "1:20", "ee": "12:30:45",
            })
        );
    }

    #[test]
    fn floats_become_go_json_numbers() {
        let v = y2j("a: 1e21\nb: 100.0\nc: 1.25e-7\nd: -0.0\ne: 123456789.5\n");
        assert_eq!(v["a"], json!(1e21));
        assert!(v["b"].is_u64(), "{}", v["b"]);
        assert_eq!(v["c"], json!(1.25e-7));
        assert_eq!(v["e"], json!(123456789.5));
        assert_eq!(
            err("a: .nan"),
            "error converting YAML to JSON: json: unsupported value: NaN"
        );
        assert_eq!(
            err("a: -.inf"),
            "error converting YAML to JSON: json: unsupported value: -Inf"
        );
    }

    #[test]
    fn tags() {
        let v = y2j("a: !!str 123\nb: !!int \"12\"\nc: !!float 3\nd: !!binary aGVsbG8=\ne: !foo 5\nf: ! 7\n");
        assert_eq!(
            v,
            json!({"a": "123", "b": 12, "c": 3, "d": "hello", "e": "5", "f": "7"})
        );
        assert_eq!(
            err("a: !!int abc"),
            "error converting YAML to JSON: yaml: cannot decode !!str `abc` as a !!int"
        );
    }

    #[test]
    fn non_string_keys_are_stringified() {
        let v = y2j("1: a\ntrue: b\n1.5: c\n0x10: d\n");
        assert_eq!(v, json!({"1": "a", "true": "b", "1.5": "c", "16": "d"}));
        assert!(err("~: a").starts_with(
            "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>"
        ));
    }

    #[test]
    fn anchors_aliases_and_merges() {
        let v = y2j(concat!(
            "base: &base {a: 1, b: 2}\n",
            "list: &l [x, z]\n",
            "copy: *l\n",
            "merged:\n  <<: *base\n  b: 3\n",
            "multi:\n  <<: [{a: first}, {a: second, c: 4}]\n",
        ));
        assert_eq!(v["copy"], json!(["x", "z"]));
        assert_eq!(v["merged"], json!({"a": 1, "b": 3}));
        assert_eq!(v["multi"], json!({"a": "first", "c": 4}));
        assert_eq!(
            err("a: &x [*x]"),
            "error converting YAML to JSON: yaml: anchor 'x' value contains itself"
        );
        assert_eq!(
            err("a: *nope"),
            "error converting YAML to JSON: yaml: unknown anchor 'nope' referenced"
        );
        assert_eq!(
            err("a: 1\n<<: 5\n"),
            "error converting YAML to JSON: yaml: map merge requires map or sequence of maps as the value"
        );
    }

    #[test]
    fn duplicates_last_wins_and_strict_reports_lines() {
        let body = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n";
        assert_eq!(y2j(body), json!({"a": 3, "b": {"c": 2}}));
        let err = yaml_to_json_strict(body.as_bytes()).expect_err("duplicates");
        assert_eq!(
            err.to_string(),
            "error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"c\" already set in map\n  line 5: key \"a\" already set in map"
        );
        assert_eq!(
            yaml_duplicate_fields(body.as_bytes()),
            vec![
                "line 4: key \"c\" already set in map".to_string(),
                "line 5: key \"a\" already set in map".to_string()
            ]
        );
        assert!(yaml_duplicate_fields(b"a: 1\nb: 2\n").is_empty());
    }

    #[test]
    fn kube_field_validation_yaml_fixture_duplicates() {
        // test/integration/apiserver/field_validation_test.go invalidBodyYAML.
        let body = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: test\n  labels:\n    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:latest\n        unknownNested: val1\n        imagePullPolicy: Always\n        imagePullPolicy: Never";
        assert_eq!(
            yaml_duplicate_fields(body.as_bytes()),
            vec![
                "line 10: key \"unknownDupe\" already set in map",
                "line 12: key \"paused\" already set in map",
                "line 26: key \"imagePullPolicy\" already set in map",
            ]
        );
    }

    #[test]
    fn documents_and_empty_bodies() {
        assert_eq!(y2j(""), Value::Null);
        assert_eq!(y2j("# only a comment\n"), Value::Null);
        assert_eq!(y2j("---\na: 1\n---\nb: [\n"), json!({"a": 1}));
        assert_eq!(y2j("\u{feff}a: 1"), json!({"a": 1}));
        assert_eq!(
            y2j("{\"a\": [1, \"2\", true, null]}"),
            json!({"a": [1, "2", true, null]})
        );
    }

    #[test]
    fn malformed_yaml_errors_as_go_yaml() {
        assert_eq!(
            err("a: b: c"),
            "error converting YAML to JSON: yaml: mapping values are not allowed in this context"
        );
        assert_eq!(
            err("a:\n  b: 1\n c: 2"),
            "error converting YAML to JSON: yaml: line 2: did not find expected key"
        );
        assert_eq!(
            err("a: b\n  c: d"),
            "error converting YAML to JSON: yaml: line 2: mapping values are not allowed in this context"
        );
        assert_eq!(
            err("a: [1, 2"),
            "error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'"
        );
        assert_eq!(
            err("a: \"unterminated\n"),
            "error converting YAML to JSON: yaml: line 2: found unexpected end of stream"
        );
        assert_eq!(
            err("key: @foo"),
            "error converting YAML to JSON: yaml: found character that cannot start any token"
        );
        assert_eq!(
            err("a:\n\tb: 1"),
            "error converting YAML to JSON: yaml: line 2: found character that cannot start any token"
        );
        assert_eq!(
            err("- a\nb: c"),
            "error converting YAML to JSON: yaml: line 1: did not find expected '-' indicator"
        );
        assert_eq!(
            err("a: \"\\q\""),
            "error converting YAML to JSON: yaml: found unknown escape character"
        );
        assert_eq!(
            err("a: \u{1}"),
            "error converting YAML to JSON: yaml: control characters are not allowed"
        );
        assert_eq!(
            yaml_to_json(b"a: \xff").expect_err("bad utf-8").to_string(),
            "error converting YAML to JSON: yaml: invalid leading UTF-8 octet"
        );
    }

    #[test]
    fn alias_bomb_and_deep_nesting_fail_fast() {
        let mut bomb = String::from(
            "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
        );
        let names = ["b", "c", "d", "e", "f", "g", "h", "i", "j"];
        let mut prev = "a";
        for name in names {
            let _ = writeln!(bomb, "{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]");
            prev = name;
        }
        let start = std::time::Instant::now();
        assert_eq!(
            err(&bomb),
            "error converting YAML to JSON: yaml: document contains excessive aliasing"
        );
        let deep = "[".repeat(100_000);
        let message = err(&deep);
        assert!(
            message.contains(&format!("exceeded max depth of {MAX_DEPTH}")),
            "{message}"
        );
        let deep_maps = "- ".repeat(5000);
        let message = err(&deep_maps);
        assert!(
            message.contains(&format!("exceeded max depth of {MAX_DEPTH}")),
            "{message}"
        );
        let deep_block: String = (0..5000)
            .map(|i| format!("{}k:\n", " ".repeat(i)))
            .collect();
        assert!(err(&deep_block).contains("exceeded max depth"));
        assert!(start.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn deepest_accepted_nesting_fits_a_small_stack() {
        // Nearly MAX_DEPTH nested block sequences, expanded twice through an
        // alias, converted and written back on a 2 MiB (tokio-sized) stack.
        let depth = MAX_DEPTH - 10;
        let body = format!("a: &a\n{}x\nb: *a\n", "- ".repeat(depth));
        let handle = std::thread::Builder::new()
            .stack_size(2 * 1024 * 1024)
            .spawn(move || {
                let value = yaml_to_json(body.as_bytes()).map_err(|e| e.to_string())?;
                let text = json_to_yaml(&value);
                Ok::<usize, String>(text.len())
            })
            .expect("spawn");
        let result = handle.join().expect("no stack overflow");
        assert!(result.is_ok(), "{result:?}");
    }

    #[test]
    fn never_panics_on_garbage() {
        let samples: &[&[u8]] = &[
            b"\xfe\xff\x00",
            b"\xff\xfe\x00\xd8",
            b"&",
            b"*",
            b"!",
            b"!<",
            b"%YAML 1.1\n%YAML 1.1\n---",
            b"? ? ? ?",
            b"- - - -",
            b"{{{{}}}}",
            b"[[[]]]",
            b"a: |\n\tb",
            b"a: >-2\n  x",
            b"'",
            b"\"\\u12\"",
            b"<<: *a",
            b"? [a]\n: b",
            b"[a]: b",
            b"{a: b}: c",
            b"\t",
            b"\r\n\r\n",
            b"---\n...\n---",
        ];
        for sample in samples {
            let _ = yaml_to_json(sample);
            let _ = yaml_to_json_strict(sample);
        }
        // A cheap deterministic fuzz over YAML punctuation.
        let alphabet = b"ab:- \n\t[]{},&*!|>'\"#%@`?<~0.";
        let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..20_000 {
            let len = (seed % 24) as usize;
            let mut input = Vec::with_capacity(len);
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                input.push(alphabet[(seed % alphabet.len() as u64) as usize]);
            }
            let _ = yaml_to_json(&input);
            seed = seed.wrapping_add(1);
        }
    }

    #[test]
    fn json_to_yaml_scalars_quoting() {
        let v = json!({
            "time": "2026-11-22T12:00:00Z", "num": "123", "bool": "true", "yes": "yes",
            "empty": "", "colon": "foo: bar", "hash": "a #b", "dash": "- x", "plain": "hello world",
            "null": "null", "tilde": "~", "float": "1.5", "octal": "0755", "base60": "1:20",
            "lead": " x", "quote": "it's", "tab": "a\tb", "emoji": "😀", "unicode": "héllo",
            "star": "*x", "url": "http://x/y", "dot": ".5", "dots": "...", "n": 1, "f": 1.5,
            "t": true, "z": null, "big": 1e21, "neg": -3,
        });
        let expected = concat!(
            "base60: \"1:20\"\n",
            "big: 1e+21\n",
            "bool: \"true\"\n",
            "colon: 'foo: bar'\n",
            "dash: '- x'\n",
            "dot: \".5\"\n",
            "dots: '...'\n",
            "emoji: \"\\U0001F600\"\n",
            "empty: \"\"\n",
            "f: 1.5\n",
            "float: \"1.5\"\n",
            "hash: 'a #b'\n",
            "lead: ' x'\n",
            "\"n\": 1\n",
            "neg: -3\n",
            "\"null\": \"null\"\n",
            "num: \"123\"\n",
            "octal: \"0755\"\n",
            "plain: hello world\n",
            "quote: it's\n",
            "star: '*x'\n",
            "t: true\n",
            "tab: \"a\\tb\"\n",
            "tilde: \"~\"\n",
            "time: \"2026-11-22T12:00:00Z\"\n",
            "unicode: héllo\n",
            "url: http://x/y\n",
            "\"yes\": \"yes\"\n",
            "z: null\n",
        );
        assert_eq!(json_to_yaml(&v), expected);
    }

    #[test]
    fn json_to_yaml_structure() {
        let v = json!({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {}},
            "spec": {
                "replicas": 3,
                "template": {"spec": {
                    "containers": [{
                        "name": "web", "image": "nginx:1.27", "args": ["-c", "echo hi"],
                        "ports": [{"containerPort": 80}], "env": [],
                    }],
                    "nested": [[1, 2], []],
                }},
            },
            "data": {"script": "#!/bin/sh\necho hi\n", "nochomp": "a\nb", "keep": "a\n\n", "lead": "  x\ny"},
        });
        let expected = concat!(
            "apiVersion: apps/v1\n",
            "data:\n",
            "  keep: |+\n",
            "    a\n",
            "\n",
            "  lead: |2-\n",
            "      x\n",
            "    y\n",
            "  nochomp: |-\n",
            "    a\n",
            "    b\n",
            "  script: |\n",
            "    #!/bin/sh\n",
            "    echo hi\n",
            "kind: Deployment\n",
            "metadata:\n",
            "  annotations: {}\n",
            "  labels:\n",
            "    app: web\n",
            "  name: web\n",
            "spec:\n",
            "  replicas: 3\n",
            "  template:\n",
            "    spec:\n",
            "      containers:\n",
            "      - args:\n",
            "        - -c\n",
            "        - echo hi\n",
            "        env: []\n",
            "        image: nginx:1.27\n",
            "        name: web\n",
            "        ports:\n",
            "        - containerPort: 80\n",
            "      nested:\n",
            "      - - 1\n",
            "        - 2\n",
            "      - []\n",
        );
        assert_eq!(json_to_yaml(&v), expected);
        assert_eq!(y2j(&json_to_yaml(&v)), v);
        assert_eq!(json_to_yaml(&json!({})), "{}\n");
        assert_eq!(json_to_yaml(&json!([])), "[]\n");
        assert_eq!(json_to_yaml(&json!("x")), "x\n");
        assert_eq!(json_to_yaml(&json!([{"a": 1}, "b"])), "- a: 1\n- b\n");
    }

    #[test]
    fn json_to_yaml_key_order_and_long_strings() {
        let v = json!({"a10": 1, "a2": 2, "a-b": 3, "ab": 4, "B": 5, "a": 6});
        assert_eq!(
            json_to_yaml(&v),
            "B: 5\na: 6\na-b: 3\na2: 2\na10: 1\nab: 4\n"
        );
        let long = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value.";
        let out = json_to_yaml(&json!({"description": long}));
        assert_eq!(
            out,
            "description: APIVersion defines the versioned schema of this representation of an\n  object. Servers should convert recognized schemas to the latest internal value.\n"
        );
        assert_eq!(y2j(&out), json!({"description": long}));
        let quoted = format!("{long}: colon");
        let out = json_to_yaml(&json!({ "d": quoted }));
        assert!(out.starts_with("d: 'APIVersion"), "{out}");
        assert_eq!(y2j(&out), json!({ "d": quoted }));
    }

    #[test]
    fn round_trips() {
        let samples = [
            json!({"a": ["x", {"b": [1, 2.5, -7, true, null]}], "c": {"d": {"e": "f"}}}),
            json!({"weird": ["", " ", "\n", "a\r\nb", "x\u{85}y", "tab\tend ", "trailing ", "\"q\"", "'", "\\"]}),
            json!({"s": "line one\nline two\n  indented\n", "k": {"multi\nline key": 1}}),
            json!({"long key": "x".repeat(200), "y".repeat(130): "long key"}),
            json!({"nums": [0, 1e-7, 123456789.5, 1e300, -0.5, 18446744073709551615u64]}),
        ];
        for v in samples {
            let text = json_to_yaml(&v);
            assert_eq!(y2j(&text), v, "{text}");
        }
    }

    #[test]
    fn summaries() {
        assert_eq!(summarize_data(b""), "<empty>");
        assert_eq!(summarize_data(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(summarize_data(b"a: 1"), "613a2031");
        assert_eq!(
            summarize_data(&[b'x'; 40]),
            format!("{} ...", "78".repeat(30))
        );
    }
}
