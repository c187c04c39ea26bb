//! Request-body decode failures worded exactly as kube-apiserver 1.34 words
//! them (the 400 BadRequest of POST and PUT on a built-in resource).
//!
//! kube decodes a JSON body in three steps, each with its own wording:
//!
//! 1. `json.SimpleMetaFactory.Interpret` (`runtime/serializer/json/meta.go`)
//!    reads `apiVersion` and `kind` with Go's `encoding/json` into an anonymous
//!    struct. A syntax error ([`go_json_syntax_error`], a port of
//!    `encoding/json/scanner.go`), a body that is not an object, or a
//!    non-string `apiVersion`/`kind` fails here as
//!    `couldn't get version/kind; json parse error: <encoding/json error>`; an
//!    apiVersion with two slashes as `unexpected GroupVersion string: a/b/c`.
//!    No kind is known, so `transformDecodeError`
//!    (`apiserver/pkg/endpoints/handlers/rest.go`) answers
//!    `the object provided is unrecognized (must be of type ConfigMap): <err> (<summary>)`,
//!    the summary being `summarizeData(body, 30)` ([`summarize_data`]).
//! 2. `json.Serializer.Decode` (`runtime/serializer/json/json.go`) defaults the
//!    group/version/kind from the endpoint (`gvkWithDefaults`), creates the
//!    typed object of that kind (`Scheme.New`: `no kind "X" is registered for
//!    version "g/v" in scheme "pkg/api/legacyscheme/scheme.go:30"`) and unmarshals
//!    the body into it with `sigs.k8s.io/json` (`json: cannot unmarshal number
//!    into Go struct field ConfigMap.data of type map[string]string`, see
//!    `TypeWalk`); the versioning codec then converts it to the endpoint's
//!    internal type (`converting (v1.Secret) to (core.ConfigMap): unknown
//!    conversion`). These answer `<Kind> in version "<v>" cannot be handled as a
//!    <EndpointKind>: <err>`.
//! 3. `handlers/create.go` / `update.go` refuse a body that decoded in another
//!    group version: `the API version in the data (autoscaling/v2) does not
//!    match the expected API version (autoscaling/v1)`.
//!
//! [`decode_failure_message`] runs the three steps and returns the message (or
//! `None` when kube would decode the body). It is not wired into the handlers
//! here; YAML and protobuf bodies have their own decoders upstream.

use std::fmt::Write as _;
use std::sync::OnceLock;

use serde_json::Value;

use crate::openapi::OpenApi;

/// `Scheme.schemeName` of kube-apiserver's `legacyscheme.Scheme` in 1.34:
/// `naming.GetNameFromCallsite` of the `runtime.NewScheme()` call on line 30 of
/// `pkg/api/legacyscheme/scheme.go` (seen verbatim in real 1.2x–1.3x errors).
pub const LEGACY_SCHEME_NAME: &str = "pkg/api/legacyscheme/scheme.go:30";

/// The apiextensions-apiserver scheme (`pkg/apiserver/apiserver.go`, `Scheme =
/// runtime.NewScheme()`). The line number is read from the upstream file as the
/// index stores it, not confirmed against a 1.34 server.
pub const APIEXTENSIONS_SCHEME_NAME: &str = "pkg/apiserver/apiserver.go:56";

/// The kube-aggregator scheme (`pkg/apiserver/scheme/scheme.go` line 32).
pub const AGGREGATOR_SCHEME_NAME: &str = "pkg/apiserver/scheme/scheme.go:32";

/// `reflect.Type.String()` of the struct `Interpret` decodes into.
const FIND_KIND_TYPE: &str = r#"struct { APIVersion string "json:\"apiVersion,omitempty\""; Kind string "json:\"kind,omitempty\"" }"#;

// ---------------------------------------------------------------------------
// encoding/json/scanner.go
// ---------------------------------------------------------------------------

/// `maxNestingDepth` of `encoding/json` (and of `sigs.k8s.io/json`).
const MAX_NESTING_DEPTH: usize = 10000;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValueOrEmpty,
    BeginValue,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU,
    InStringEscU1,
    InStringEscU12,
    InStringEscU123,
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    T,
    Tr,
    Tru,
    F,
    Fa,
    Fal,
    Fals,
    N,
    Nu,
    Nul,
    Error,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ParseState {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// Go's JSON scanner state machine, reduced to what `checkValid` needs:
/// whether each byte is acceptable, and the `SyntaxError` text when not.
struct Scanner {
    state: State,
    end_top: bool,
    parse_state: Vec<ParseState>,
    err: Option<String>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_hex(c: u8) -> bool {
    c.is_ascii_hexdigit()
}

impl Scanner {
    fn new() -> Self {
        Scanner {
            state: State::BeginValue,
            end_top: false,
            parse_state: Vec::new(),
            err: None,
        }
    }

    /// `scanner.error`: records `invalid character <c> <context>`; returns false (scanError).
    fn error(&mut self, c: u8, context: &str) -> bool {
        self.state = State::Error;
        self.err = Some(format!("invalid character {} {}", quote_char(c), context));
        false
    }

    fn push(&mut self, c: u8, state: ParseState) -> bool {
        self.parse_state.push(state);
        if self.parse_state.len() <= MAX_NESTING_DEPTH {
            true
        } else {
            self.error(c, "exceeded max depth")
        }
    }

    fn pop(&mut self) {
        self.parse_state.pop();
        if self.parse_state.is_empty() {
            self.state = State::EndTop;
            self.end_top = true;
        } else {
            self.state = State::EndValue;
        }
    }

    /// One `scan.step(scan, c)`; false when it returns scanError.
    fn step(&mut self, c: u8) -> bool {
        match self.state {
            State::BeginValueOrEmpty => {
                if is_space(c) {
                    true
                } else if c == b']' {
                    self.end_value(c)
                } else {
                    self.begin_value(c)
                }
            }
            State::BeginValue => self.begin_value(c),
            State::BeginStringOrEmpty => {
                if is_space(c) {
                    true
                } else if c == b'}' {
                    if let Some(last) = self.parse_state.last_mut() {
                        *last = ParseState::ObjectValue;
                    }
                    self.end_value(c)
                } else {
                    self.begin_string(c)
                }
            }
            State::BeginString => self.begin_string(c),
            State::EndValue => self.end_value(c),
            State::EndTop => self.end_top_state(c),
            State::InString => {
                if c == b'"' {
                    self.state = State::EndValue;
                    true
                } else if c == b'\\' {
                    self.state = State::InStringEsc;
                    true
                } else if c < 0x20 {
                    self.error(c, "in string literal")
                } else {
                    true
                }
            }
            State::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => {
                    self.state = State::InString;
                    true
                }
                b'u' => {
                    self.state = State::InStringEscU;
                    true
                }
                _ => self.error(c, "in string escape code"),
            },
            State::InStringEscU
            | State::InStringEscU1
            | State::InStringEscU12
            | State::InStringEscU123 => {
                if is_hex(c) {
                    self.state = match self.state {
                        State::InStringEscU => State::InStringEscU1,
                        State::InStringEscU1 => State::InStringEscU12,
                        State::InStringEscU12 => State::InStringEscU123,
                        _ => State::InString,
                    };
                    true
                } else {
                    self.error(c, "in \\u hexadecimal character escape")
                }
            }
            State::Neg => {
                if c == b'0' {
                    self.state = State::Zero;
                    true
                } else if (b'1'..=b'9').contains(&c) {
                    self.state = State::One;
                    true
                } else {
                    self.error(c, "in numeric literal")
                }
            }
            State::One => {
                if c.is_ascii_digit() {
                    true
                } else {
                    self.zero(c)
                }
            }
            State::Zero => self.zero(c),
            State::Dot => {
                if c.is_ascii_digit() {
                    self.state = State::Dot0;
                    true
                } else {
                    self.error(c, "after decimal point in numeric literal")
                }
            }
            State::Dot0 => {
                if c.is_ascii_digit() {
                    true
                } else if c == b'e' || c == b'E' {
                    self.state = State::E;
                    true
                } else {
                    self.end_value(c)
                }
            }
            State::E => {
                if c == b'+' || c == b'-' {
                    self.state = State::ESign;
                    true
                } else {
                    self.e_sign(c)
                }
            }
            State::ESign => self.e_sign(c),
            State::E0 => {
                if c.is_ascii_digit() {
                    true
                } else {
                    self.end_value(c)
                }
            }
            State::T => self.literal(c, b'r', State::Tr, "in literal true (expecting 'r')"),
            State::Tr => self.literal(c, b'u', State::Tru, "in literal true (expecting 'u')"),
            State::Tru => self.literal(c, b'e', State::EndValue, "in literal true (expecting 'e')"),
            State::F => self.literal(c, b'a', State::Fa, "in literal false (expecting 'a')"),
            State::Fa => self.literal(c, b'l', State::Fal, "in literal false (expecting 'l')"),
            State::Fal => self.literal(c, b's', State::Fals, "in literal false (expecting 's')"),
            State::Fals => {
                self.literal(c, b'e', State::EndValue, "in literal false (expecting 'e')")
            }
            State::N => self.literal(c, b'u', State::Nu, "in literal null (expecting 'u')"),
            State::Nu => self.literal(c, b'l', State::Nul, "in literal null (expecting 'l')"),
            State::Nul => self.literal(c, b'l', State::EndValue, "in literal null (expecting 'l')"),
            State::Error => false,
        }
    }

    fn literal(&mut self, c: u8, want: u8, next: State, context: &str) -> bool {
        if c == want {
            self.state = next;
            true
        } else {
            self.error(c, context)
        }
    }

    fn begin_value(&mut self, c: u8) -> bool {
        if is_space(c) {
            return true;
        }
        match c {
            b'{' => {
                self.state = State::BeginStringOrEmpty;
                self.push(c, ParseState::ObjectKey)
            }
            b'[' => {
                self.state = State::BeginValueOrEmpty;
                self.push(c, ParseState::ArrayValue)
            }
            b'"' => {
                self.state = State::InString;
                true
            }
            b'-' => {
                self.state = State::Neg;
                true
            }
            b'0' => {
                self.state = State::Zero;
                true
            }
            b't' => {
                self.state = State::T;
                true
            }
            b'f' => {
                self.state = State::F;
                true
            }
            b'n' => {
                self.state = State::N;
                true
            }
            b'1'..=b'9' => {
                self.state = State::One;
                true
            }
            _ => self.error(c, "looking for beginning of value"),
        }
    }

    fn begin_string(&mut self, c: u8) -> bool {
        if is_space(c) {
            true
        } else if c == b'"' {
            self.state = State::InString;
            true
        } else {
            self.error(c, "looking for beginning of object key string")
        }
    }

    fn end_value(&mut self, c: u8) -> bool {
        let Some(&top) = self.parse_state.last() else {
            self.state = State::EndTop;
            self.end_top = true;
            return self.end_top_state(c);
        };
        if is_space(c) {
            self.state = State::EndValue;
            return true;
        }
        match top {
            ParseState::ObjectKey => {
                if c == b':' {
                    if let Some(last) = self.parse_state.last_mut() {
                        *last = ParseState::ObjectValue;
                    }
                    self.state = State::BeginValue;
                    true
                } else {
                    self.error(c, "after object key")
                }
            }
            ParseState::ObjectValue => {
                if c == b',' {
                    if let Some(last) = self.parse_state.last_mut() {
                        *last = ParseState::ObjectKey;
                    }
                    self.state = State::BeginString;
                    true
                } else if c == b'}' {
                    self.pop();
                    true
                } else {
                    self.error(c, "after object key:value pair")
                }
            }
            ParseState::ArrayValue => {
                if c == b',' {
                    self.state = State::BeginValue;
                    true
                } else if c == b']' {
                    self.pop();
                    true
                } else {
                    self.error(c, "after array element")
                }
            }
        }
    }

    /// `stateEndTop`: a non-space byte records an error but the byte itself
    /// reports scanEnd; the error surfaces on the next byte or at EOF.
    fn end_top_state(&mut self, c: u8) -> bool {
        if !is_space(c) {
            self.error(c, "after top-level value");
        }
        true
    }

    fn zero(&mut self, c: u8) -> bool {
        if c == b'.' {
            self.state = State::Dot;
            true
        } else if c == b'e' || c == b'E' {
            self.state = State::E;
            true
        } else {
            self.end_value(c)
        }
    }

    fn e_sign(&mut self, c: u8) -> bool {
        if c.is_ascii_digit() {
            self.state = State::E0;
            true
        } else {
            self.error(c, "in exponent of numeric literal")
        }
    }

    /// `scanner.eof`.
    fn eof(&mut self) -> Result<(), String> {
        if let Some(err) = &self.err {
            return Err(err.clone());
        }
        if self.end_top {
            return Ok(());
        }
        self.step(b' ');
        if self.end_top {
            return Ok(());
        }
        Err(self
            .err
            .get_or_insert_with(|| "unexpected end of JSON input".to_string())
            .clone())
    }
}

/// The `encoding/json` `SyntaxError` message for `body` (`checkValid`, which
/// `json.Unmarshal` runs before decoding anything), or `None` when `body` is
/// one syntactically valid JSON value (surrounded by optional whitespace).
///
/// Messages are `invalid character <c> <context>` (`'n'`, `'\''`, `'"'`,
/// `'\x00'`, `'\u00a0'`, `'é'`: Go's `quoteChar`) and `unexpected end of JSON
/// input`.
pub fn go_json_syntax_error(body: &[u8]) -> Option<String> {
    let mut scanner = Scanner::new();
    for &c in body {
        if !scanner.step(c) {
            return scanner.err;
        }
    }
    scanner.eof().err()
}

/// `quoteChar` of `encoding/json`: `'\''`, `'"'`, otherwise `strconv.Quote` of
/// the byte taken as a rune (`string(c)` in Go: byte 0xE9 is `'é'`) between
/// single quotes.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => r"'\''".to_string(),
        b'"' => "'\"'".to_string(),
        _ => {
            let mut out = String::from("'");
            quote_rune(char::from(c), &mut out);
            out.push('\'');
            out
        }
    }
}

// ---------------------------------------------------------------------------
// Go string formatting helpers
// ---------------------------------------------------------------------------

/// `strconv.IsPrint`, approximated: letters, marks, numbers, punctuation,
/// symbols and the ASCII space. Control, format (the common ones), separator,
/// private-use and noncharacter code points are not printable; unassigned code
/// points (which Go also escapes) are not recognized.
fn go_is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    let u = c as u32;
    let format = matches!(
        u,
        0xAD | 0x600..=0x605
            | 0x61C
            | 0x6DD
            | 0x70F
            | 0x890..=0x891
            | 0x8E2
            | 0x180E
            | 0x200B..=0x200F
            | 0x202A..=0x202E
            | 0x2060..=0x2064
            | 0x2066..=0x206F
            | 0xFEFF
            | 0xFFF9..=0xFFFB
            | 0x110BD
            | 0x110CD
            | 0x13430..=0x1343F
            | 0x1BCA0..=0x1BCA3
            | 0x1D173..=0x1D17A
            | 0xE0001
            | 0xE0020..=0xE007F
    );
    let private = matches!(u, 0xE000..=0xF8FF | 0xF0000..=0xFFFFD | 0x100000..=0x10FFFD);
    let nonchar = (u & 0xFFFE) == 0xFFFE || (0xFDD0..=0xFDEF).contains(&u);
    !(format || private || nonchar)
}

/// One rune as `strconv.Quote` writes it (without the surrounding quotes).
fn quote_rune(c: char, out: &mut String) {
    if c == '"' || c == '\\' {
        out.push('\\');
        out.push(c);
        return;
    }
    if go_is_print(c) {
        out.push(c);
        return;
    }
    match c {
        '\u{7}' => out.push_str(r"\a"),
        '\u{8}' => out.push_str(r"\b"),
        '\u{c}' => out.push_str(r"\f"),
        '\n' => out.push_str(r"\n"),
        '\r' => out.push_str(r"\r"),
        '\t' => out.push_str(r"\t"),
        '\u{b}' => out.push_str(r"\v"),
        _ => {
            let u = c as u32;
            if u < 0x20 || u == 0x7f {
                let _ = write!(out, r"\x{u:02x}");
            } else if u < 0x10000 {
                let _ = write!(out, r"\u{u:04x}");
            } else {
                let _ = write!(out, r"\U{u:08x}");
            }
        }
    }
}

/// `fmt.Sprintf("%q", s)` (`strconv.Quote`).
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        quote_rune(c, &mut out);
    }
    out.push('"');
    out
}

/// Go's `utf8.DecodeRune`: the rune at the start of `bytes` and its width;
/// `(U+FFFD, 1)` for an invalid or truncated sequence.
fn decode_rune(bytes: &[u8]) -> (char, usize) {
    let Some(&first) = bytes.first() else {
        return ('\u{FFFD}', 0);
    };
    if first < 0x80 {
        return (char::from(first), 1);
    }
    let width = match first {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return ('\u{FFFD}', 1),
    };
    match bytes.get(..width).map(std::str::from_utf8) {
        Some(Ok(text)) => (text.chars().next().unwrap_or('\u{FFFD}'), width),
        _ => ('\u{FFFD}', 1),
    }
}

/// Bytes as a Go string ends up in a JSON response: each byte of an invalid
/// UTF-8 sequence becomes one U+FFFD (Go's encoder works byte by byte; Rust's
/// `from_utf8_lossy` would fold a truncated sequence into a single one).
fn go_lossy(bytes: &[u8]) -> String {
    if let Ok(text) = std::str::from_utf8(bytes) {
        return text.to_string();
    }
    let mut out = String::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let (c, width) = decode_rune(&bytes[i..]);
        out.push(c);
        i += width.max(1);
    }
    out
}

/// `summarizeData(data, 30)` of `handlers/rest.go`: `<empty>`; a body starting
/// with `{` as text (its first 30 bytes plus ` ...` when longer); anything else
/// (leading whitespace included) as lower-case hex of its first 30 bytes.
pub fn summarize_data(body: &[u8]) -> String {
    const MAX: usize = 30;
    let (head, more) = if body.len() > MAX {
        (&body[..MAX], " ...")
    } else {
        (body, "")
    };
    match body.first() {
        None => "<empty>".to_string(),
        Some(b'{') => format!("{}{more}", go_lossy(head)),
        Some(_) => {
            let mut out = String::with_capacity(head.len() * 2 + more.len());
            for byte in head {
                let _ = write!(out, "{byte:02x}");
            }
            out.push_str(more);
            out
        }
    }
}

// ---------------------------------------------------------------------------
// A parse tree of a syntactically valid body (arena, so no recursion to drop)
// ---------------------------------------------------------------------------

#[derive(Debug)]
enum Node {
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
    node: Node,
    start: usize,
    end: usize,
}

struct Tree<'a> {
    body: &'a [u8],
    items: Vec<Item>,
}

impl<'a> Tree<'a> {
    fn node(&self, index: usize) -> &Node {
        &self.items[index].node
    }

    /// The value's bytes as they appear in the body.
    fn raw(&self, index: usize) -> &'a [u8] {
        let item = &self.items[index];
        &self.body[item.start..item.end]
    }

    /// Builds the tree of `body`, which must have passed [`go_json_syntax_error`].
    fn parse(body: &'a [u8]) -> Option<Tree<'a>> {
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
                    return Some(Tree { body, items });
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
fn go_unquote(quoted: &[u8]) -> String {
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

// ---------------------------------------------------------------------------
// Interpret (encoding/json into the apiVersion/kind struct)
// ---------------------------------------------------------------------------

/// What `Interpret` reads: the body's apiVersion and kind ("" when absent).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
struct TypeMeta {
    api_version: String,
    kind: String,
}

/// Go 1.21+ `foldName` equality against an ASCII field name: ASCII letters
/// compare case-insensitively, and `ſ` (U+017F) and `ı` (U+0131) upper-case
/// to `S` and `I`.
fn fold_equals(key: &str, name: &str) -> bool {
    let mut key_chars = key.chars();
    for want in name.chars() {
        let Some(got) = key_chars.next() else {
            return false;
        };
        let got = match got {
            '\u{17F}' => 'S',
            '\u{131}' => 'I',
            other => other.to_ascii_uppercase(),
        };
        if got != want.to_ascii_uppercase() {
            return false;
        }
    }
    key_chars.next().is_none()
}

/// The `encoding/json` description of a JSON value (`UnmarshalTypeError.Value`)
/// when it lands in a string/struct/other non-matching Go value.
fn value_word(node: &Node) -> &'static str {
    match node {
        Node::Null => "null",
        Node::Bool => "bool",
        Node::Number => "number",
        Node::String(_) => "string",
        Node::Array(_) => "array",
        Node::Object(_) => "object",
    }
}

/// `json.Unmarshal(data, &findKind)`: the `encoding/json` error text, or the
/// fields. Like Go, it keeps decoding after a type error and reports the first.
fn interpret(tree: &Tree<'_>) -> Result<TypeMeta, String> {
    let mut meta = TypeMeta::default();
    let members = match tree.node(0) {
        Node::Object(members) => members,
        Node::Null => return Ok(meta),
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type {FIND_KIND_TYPE}",
                value_word(other)
            ))
        }
    };
    let mut first_error = None;
    for (key, index) in members {
        let (name, slot) =
            if key == "apiVersion" || (key != "kind" && fold_equals(key, "apiVersion")) {
                ("apiVersion", &mut meta.api_version)
            } else if key == "kind" || fold_equals(key, "kind") {
                ("kind", &mut meta.kind)
            } else {
                continue;
            };
        match tree.node(*index) {
            Node::String(value) => *slot = value.clone(),
            Node::Null => {}
            other => {
                first_error.get_or_insert_with(|| {
                    format!(
                        "json: cannot unmarshal {} into Go struct field .{name} of type string",
                        value_word(other)
                    )
                });
            }
        }
    }
    match first_error {
        Some(error) => Err(error),
        None => Ok(meta),
    }
}

/// `schema.ParseGroupVersion`.
fn parse_group_version(gv: &str) -> Result<(String, String), String> {
    if gv.is_empty() || gv == "/" {
        return Ok((String::new(), String::new()));
    }
    match gv.matches('/').count() {
        0 => Ok((String::new(), gv.to_string())),
        1 => {
            let (group, version) = gv.split_once('/').unwrap_or((gv, ""));
            Ok((group.to_string(), version.to_string()))
        }
        _ => Err(format!("unexpected GroupVersion string: {gv}")),
    }
}

/// `schema.GroupVersion.String()`.
fn gv_string(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

// ---------------------------------------------------------------------------
// The scheme: which group/version/kinds kube can create
// ---------------------------------------------------------------------------

const INTERNAL_VERSION: &str = "__internal";

/// Kinds `metav1.AddToGroupVersion` registers in every installed group version.
const META_OPTION_KINDS: &[&str] = &[
    "WatchEvent",
    "ListOptions",
    "GetOptions",
    "DeleteOptions",
    "CreateOptions",
    "UpdateOptions",
    "PatchOptions",
];

/// `metav1` kinds added with `AddUnversionedTypes`: `Scheme.New` finds them by
/// kind alone, in any group version.
const UNVERSIONED_KINDS: &[&str] = &[
    "Status",
    "APIVersions",
    "APIGroupList",
    "APIGroup",
    "APIResourceList",
];

/// Kinds the 1.34 legacy scheme registers (`k8s.io/api/<group>/<version>/register.go`,
/// installed by `pkg/controlplane/import_known_versions.go`) that the vendored
/// OpenAPI definitions do not carry: versions no longer served, and
/// option/subresource kinds. Kinds the definitions carry are found there.
const UNSERVED_KINDS: &[(&str, &str, &[&str])] = &[
    (
        "",
        "v1",
        &[
            "PodStatusResult",
            "ServiceProxyOptions",
            "NodeProxyOptions",
            "List",
            "PodAttachOptions",
            "PodLogOptions",
            "PodExecOptions",
            "PodPortForwardOptions",
            "PodProxyOptions",
            "SerializedReference",
            "RangeAllocation",
        ],
    ),
    ("admission.k8s.io", "v1", &["AdmissionReview"]),
    ("admission.k8s.io", "v1beta1", &["AdmissionReview"]),
    (
        "admissionregistration.k8s.io",
        "v1beta1",
        &[
            "ValidatingWebhookConfiguration",
            "ValidatingWebhookConfigurationList",
            "MutatingWebhookConfiguration",
            "MutatingWebhookConfigurationList",
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
        ],
    ),
    (
        "admissionregistration.k8s.io",
        "v1alpha1",
        &[
            "ValidatingAdmissionPolicy",
            "ValidatingAdmissionPolicyList",
            "ValidatingAdmissionPolicyBinding",
            "ValidatingAdmissionPolicyBindingList",
        ],
    ),
    (
        "apps",
        "v1beta1",
        &[
            "Deployment",
            "DeploymentList",
            "DeploymentRollback",
            "Scale",
            "StatefulSet",
            "StatefulSetList",
            "ControllerRevision",
            "ControllerRevisionList",
        ],
    ),
    (
        "apps",
        "v1beta2",
        &[
            "Deployment",
            "DeploymentList",
            "Scale",
            "StatefulSet",
            "StatefulSetList",
            "DaemonSet",
            "DaemonSetList",
            "ReplicaSet",
            "ReplicaSetList",
            "ControllerRevision",
            "ControllerRevisionList",
        ],
    ),
    ("authentication.k8s.io", "v1alpha1", &["SelfSubjectReview"]),
    (
        "authentication.k8s.io",
        "v1beta1",
        &["TokenReview", "SelfSubjectReview"],
    ),
    (
        "authorization.k8s.io",
        "v1beta1",
        &[
            "SelfSubjectRulesReview",
            "SelfSubjectAccessReview",
            "SubjectAccessReview",
            "LocalSubjectAccessReview",
        ],
    ),
    (
        "autoscaling",
        "v2beta1",
        &["HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"],
    ),
    (
        "autoscaling",
        "v2beta2",
        &["HorizontalPodAutoscaler", "HorizontalPodAutoscalerList"],
    ),
    ("batch", "v1beta1", &["CronJob", "CronJobList"]),
    (
        "certificates.k8s.io",
        "v1beta1",
        &["CertificateSigningRequest", "CertificateSigningRequestList"],
    ),
    ("coordination.k8s.io", "v1beta1", &["Lease", "LeaseList"]),
    (
        "discovery.k8s.io",
        "v1beta1",
        &["EndpointSlice", "EndpointSliceList"],
    ),
    ("events.k8s.io", "v1beta1", &["Event", "EventList"]),
    (
        "extensions",
        "v1beta1",
        &[
            "Deployment",
            "DeploymentList",
            "DeploymentRollback",
            "Scale",
            "DaemonSetList",
            "DaemonSet",
            "Ingress",
            "IngressList",
            "ReplicaSet",
            "ReplicaSetList",
            "NetworkPolicy",
            "NetworkPolicyList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta1",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta2",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "v1beta3",
        &[
            "FlowSchema",
            "FlowSchemaList",
            "PriorityLevelConfiguration",
            "PriorityLevelConfigurationList",
        ],
    ),
    ("imagepolicy.k8s.io", "v1alpha1", &["ImageReview"]),
    (
        "networking.k8s.io",
        "v1beta1",
        &["Ingress", "IngressList", "IngressClass", "IngressClassList"],
    ),
    (
        "node.k8s.io",
        "v1alpha1",
        &["RuntimeClass", "RuntimeClassList"],
    ),
    (
        "node.k8s.io",
        "v1beta1",
        &["RuntimeClass", "RuntimeClassList"],
    ),
    (
        "policy",
        "v1beta1",
        &["PodDisruptionBudget", "PodDisruptionBudgetList", "Eviction"],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1alpha1",
        &[
            "Role",
            "RoleBinding",
            "RoleList",
            "RoleBindingList",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleList",
            "ClusterRoleBindingList",
        ],
    ),
    (
        "rbac.authorization.k8s.io",
        "v1beta1",
        &[
            "Role",
            "RoleBinding",
            "RoleList",
            "RoleBindingList",
            "ClusterRole",
            "ClusterRoleBinding",
            "ClusterRoleList",
            "ClusterRoleBindingList",
        ],
    ),
    (
        "scheduling.k8s.io",
        "v1alpha1",
        &["PriorityClass", "PriorityClassList"],
    ),
    (
        "scheduling.k8s.io",
        "v1beta1",
        &["PriorityClass", "PriorityClassList"],
    ),
    (
        "storage.k8s.io",
        "v1alpha1",
        &[
            "VolumeAttachment",
            "VolumeAttachmentList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
        ],
    ),
    (
        "storage.k8s.io",
        "v1beta1",
        &[
            "StorageClass",
            "StorageClassList",
            "VolumeAttachment",
            "VolumeAttachmentList",
            "CSIDriver",
            "CSIDriverList",
            "CSINode",
            "CSINodeList",
            "CSIStorageCapacity",
            "CSIStorageCapacityList",
        ],
    ),
    ("apiextensions.k8s.io", "v1", &["ConversionReview"]),
    (
        "apiextensions.k8s.io",
        "v1beta1",
        &[
            "CustomResourceDefinition",
            "CustomResourceDefinitionList",
            "ConversionReview",
        ],
    ),
    (
        "apiregistration.k8s.io",
        "v1beta1",
        &["APIService", "APIServiceList"],
    ),
];

/// Which of kube-apiserver's three schemes decodes for an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scheme {
    /// `legacyscheme.Scheme`: every built-in group.
    Legacy,
    /// apiextensions-apiserver's scheme (`customresourcedefinitions`).
    Apiextensions,
    /// kube-aggregator's scheme (`apiservices`).
    Aggregator,
}

impl Scheme {
    fn for_group(group: &str) -> Self {
        match group {
            "apiextensions.k8s.io" => Scheme::Apiextensions,
            "apiregistration.k8s.io" => Scheme::Aggregator,
            _ => Scheme::Legacy,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Scheme::Legacy => LEGACY_SCHEME_NAME,
            Scheme::Apiextensions => APIEXTENSIONS_SCHEME_NAME,
            Scheme::Aggregator => AGGREGATOR_SCHEME_NAME,
        }
    }

    /// Whether a group belongs to this scheme.
    fn holds_group(self, group: &str) -> bool {
        Scheme::for_group(group) == self
    }
}

fn openapi() -> &'static OpenApi {
    static OPENAPI: OnceLock<OpenApi> = OnceLock::new();
    OPENAPI.get_or_init(|| OpenApi::new(&[]))
}

/// Group versions with `metav1.AddToGroupVersion` called on them: those the
/// vendored `DeleteOptions` definition lists.
fn installed(group: &str, version: &str) -> bool {
    static INSTALLED: OnceLock<Vec<(String, String)>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let Ok(Some(schema)) =
                openapi().definition("io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions")
            else {
                return Vec::new();
            };
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|gvk| {
                    Some((
                        gvk.get("group")?.as_str()?.to_string(),
                        gvk.get("version")?.as_str()?.to_string(),
                    ))
                })
                .collect()
        })
        .iter()
        .any(|(g, v)| g == group && v == version)
}

/// What `Scheme.New(gvk)` creates.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Created {
    /// A typed object of a built-in API package (`v1.Secret`, `v2.HorizontalPodAutoscaler`).
    Api,
    /// A `metav1` type (`v1.DeleteOptions`, `v1.Status`): never converts to an API object.
    Meta,
    /// An internal type (`apiVersion: __internal`).
    Internal,
}

/// `Scheme.New` for a body's group/version/kind in `scheme`; `None` when kube
/// answers `no kind ... is registered`.
fn scheme_new(scheme: Scheme, group: &str, version: &str, kind: &str) -> Option<Created> {
    if UNVERSIONED_KINDS.contains(&kind) {
        return Some(Created::Meta);
    }
    if scheme == Scheme::Apiextensions
        && group.is_empty()
        && version == "v1"
        && META_OPTION_KINDS.contains(&kind)
    {
        // apiextensions-apiserver calls AddToGroupVersion on the empty v1 too.
        return Some(Created::Meta);
    }
    if !scheme.holds_group(group) {
        return None;
    }
    if version == INTERNAL_VERSION {
        let known = UNSERVED_KINDS
            .iter()
            .any(|(g, _, kinds)| *g == group && kinds.contains(&kind))
            || served_versions_of(group, kind);
        return known.then_some(Created::Internal);
    }
    if !installed(group, version) {
        return None;
    }
    if META_OPTION_KINDS.contains(&kind) {
        return Some(Created::Meta);
    }
    let unserved = UNSERVED_KINDS
        .iter()
        .any(|(g, v, kinds)| *g == group && *v == version && kinds.contains(&kind));
    if unserved || matches!(openapi().schema_for_kind(group, version, kind), Ok(Some(_))) {
        Some(Created::Api)
    } else {
        None
    }
}

/// Whether some installed version of `group` serves `kind` (vendored definitions).
fn served_versions_of(group: &str, kind: &str) -> bool {
    [
        "v1", "v1beta1", "v1beta2", "v1beta3", "v1alpha1", "v1alpha2", "v1alpha3", "v2",
    ]
    .iter()
    .any(|version| matches!(openapi().schema_for_kind(group, version, kind), Ok(Some(_))))
}

/// Go package name of the internal type of a group's kind (`core.ConfigMap`,
/// `apps.Deployment`), which decides whether a conversion exists.
fn internal_package(group: &str, kind: &str) -> String {
    match group {
        "" | "events.k8s.io" => "core".to_string(),
        "extensions" => match kind {
            "Deployment" | "DeploymentList" | "DeploymentRollback" | "DaemonSet"
            | "DaemonSetList" | "ReplicaSet" | "ReplicaSetList" => "apps".to_string(),
            "Ingress" | "IngressList" | "NetworkPolicy" | "NetworkPolicyList" => {
                "networking".to_string()
            }
            "Scale" => "autoscaling".to_string(),
            _ => "extensions".to_string(),
        },
        "apps" if kind == "Scale" => "autoscaling".to_string(),
        "internal.apiserver.k8s.io" => "apiserverinternal".to_string(),
        other => other.split('.').next().unwrap_or(other).to_string(),
    }
}

// ---------------------------------------------------------------------------
// sigs.k8s.io/json into the typed object, driven by the OpenAPI schema
// ---------------------------------------------------------------------------

/// Definition-name prefixes stripped for [`NAMED_TYPES`] keys.
const API_PREFIX: &str = "io.k8s.api.";
const APIS_META_PREFIX: &str = "io.k8s.apimachinery.pkg.apis.";

/// Fields whose Go type is a named type the OpenAPI schema cannot show
/// (`Protocol string` prints as `v1.Protocol`, `ResourceList` as
/// `v1.ResourceList`, `types.UID`), keyed `<group>.<version>.<Type>.<field>`
/// with the `io.k8s.api.` / `io.k8s.apimachinery.pkg.apis.` prefix removed.
/// From `k8s.io/api` and `k8s.io/apimachinery` types.go; fields not listed
/// print the structural Go type (`string`, `int32`, `map[string]string`,
/// `[]v1.Container`).
const NAMED_TYPES: &[(&str, &str)] = &[
    // meta/v1
    ("meta.v1.ObjectMeta.uid", "types.UID"),
    ("meta.v1.OwnerReference.uid", "types.UID"),
    ("meta.v1.Preconditions.uid", "types.UID"),
    ("meta.v1.StatusDetails.uid", "types.UID"),
    ("meta.v1.StatusCause.reason", "v1.CauseType"),
    ("meta.v1.Status.reason", "v1.StatusReason"),
    (
        "meta.v1.ManagedFieldsEntry.operation",
        "v1.ManagedFieldsOperationType",
    ),
    (
        "meta.v1.LabelSelectorRequirement.operator",
        "v1.LabelSelectorOperator",
    ),
    ("meta.v1.Condition.status", "v1.ConditionStatus"),
    (
        "meta.v1.DeleteOptions.propagationPolicy",
        "v1.DeletionPropagation",
    ),
    // core/v1
    ("core.v1.ContainerPort.protocol", "v1.Protocol"),
    ("core.v1.ServicePort.protocol", "v1.Protocol"),
    ("core.v1.EndpointPort.protocol", "v1.Protocol"),
    ("core.v1.PortStatus.protocol", "v1.Protocol"),
    ("core.v1.Container.imagePullPolicy", "v1.PullPolicy"),
    (
        "core.v1.Container.terminationMessagePolicy",
        "v1.TerminationMessagePolicy",
    ),
    (
        "core.v1.Container.restartPolicy",
        "v1.ContainerRestartPolicy",
    ),
    (
        "core.v1.EphemeralContainer.imagePullPolicy",
        "v1.PullPolicy",
    ),
    (
        "core.v1.EphemeralContainer.terminationMessagePolicy",
        "v1.TerminationMessagePolicy",
    ),
    (
        "core.v1.EphemeralContainer.restartPolicy",
        "v1.ContainerRestartPolicy",
    ),
    ("core.v1.ImageVolumeSource.pullPolicy", "v1.PullPolicy"),
    (
        "core.v1.ContainerResizePolicy.resourceName",
        "v1.ResourceName",
    ),
    (
        "core.v1.ContainerResizePolicy.restartPolicy",
        "v1.ResourceResizeRestartPolicy",
    ),
    ("core.v1.ResourceRequirements.limits", "v1.ResourceList"),
    ("core.v1.ResourceRequirements.requests", "v1.ResourceList"),
    (
        "core.v1.VolumeResourceRequirements.limits",
        "v1.ResourceList",
    ),
    (
        "core.v1.VolumeResourceRequirements.requests",
        "v1.ResourceList",
    ),
    (
        "core.v1.ContainerStatus.allocatedResources",
        "v1.ResourceList",
    ),
    ("core.v1.PodSpec.restartPolicy", "v1.RestartPolicy"),
    ("core.v1.PodSpec.dnsPolicy", "v1.DNSPolicy"),
    ("core.v1.PodSpec.preemptionPolicy", "v1.PreemptionPolicy"),
    ("core.v1.PodSpec.overhead", "v1.ResourceList"),
    ("core.v1.PodOS.name", "v1.OSName"),
    (
        "core.v1.PodReadinessGate.conditionType",
        "v1.PodConditionType",
    ),
    ("core.v1.Toleration.operator", "v1.TolerationOperator"),
    ("core.v1.Toleration.effect", "v1.TaintEffect"),
    ("core.v1.Taint.effect", "v1.TaintEffect"),
    (
        "core.v1.NodeSelectorRequirement.operator",
        "v1.NodeSelectorOperator",
    ),
    (
        "core.v1.TopologySpreadConstraint.whenUnsatisfiable",
        "v1.UnsatisfiableConstraintAction",
    ),
    (
        "core.v1.TopologySpreadConstraint.nodeAffinityPolicy",
        "v1.NodeInclusionPolicy",
    ),
    (
        "core.v1.TopologySpreadConstraint.nodeTaintsPolicy",
        "v1.NodeInclusionPolicy",
    ),
    (
        "core.v1.PodSecurityContext.fsGroupChangePolicy",
        "v1.PodFSGroupChangePolicy",
    ),
    (
        "core.v1.PodSecurityContext.supplementalGroupsPolicy",
        "v1.SupplementalGroupsPolicy",
    ),
    (
        "core.v1.PodSecurityContext.seLinuxChangePolicy",
        "v1.PodSELinuxChangePolicy",
    ),
    ("core.v1.SeccompProfile.type", "v1.SeccompProfileType"),
    ("core.v1.AppArmorProfile.type", "v1.AppArmorProfileType"),
    ("core.v1.Capabilities.add", "[]v1.Capability"),
    ("core.v1.Capabilities.drop", "[]v1.Capability"),
    ("core.v1.SecurityContext.procMount", "v1.ProcMountType"),
    ("core.v1.HTTPGetAction.scheme", "v1.URIScheme"),
    ("core.v1.Lifecycle.stopSignal", "v1.Signal"),
    (
        "core.v1.VolumeMount.mountPropagation",
        "v1.MountPropagationMode",
    ),
    (
        "core.v1.VolumeMount.recursiveReadOnly",
        "v1.RecursiveReadOnlyMode",
    ),
    ("core.v1.HostPathVolumeSource.type", "v1.HostPathType"),
    ("core.v1.EmptyDirVolumeSource.medium", "v1.StorageMedium"),
    (
        "core.v1.AzureDiskVolumeSource.cachingMode",
        "v1.AzureDataDiskCachingMode",
    ),
    ("core.v1.AzureDiskVolumeSource.kind", "v1.AzureDataDiskKind"),
    ("core.v1.ObjectReference.uid", "types.UID"),
    ("core.v1.PodCondition.type", "v1.PodConditionType"),
    ("core.v1.PodCondition.status", "v1.ConditionStatus"),
    ("core.v1.PodStatus.phase", "v1.PodPhase"),
    ("core.v1.PodStatus.qosClass", "v1.PodQOSClass"),
    ("core.v1.PodStatus.resize", "v1.PodResizeStatus"),
    ("core.v1.ResourceHealth.health", "v1.ResourceHealthStatus"),
    ("core.v1.ServiceSpec.type", "v1.ServiceType"),
    ("core.v1.ServiceSpec.sessionAffinity", "v1.ServiceAffinity"),
    (
        "core.v1.ServiceSpec.externalTrafficPolicy",
        "v1.ServiceExternalTrafficPolicy",
    ),
    (
        "core.v1.ServiceSpec.internalTrafficPolicy",
        "v1.ServiceInternalTrafficPolicy",
    ),
    ("core.v1.ServiceSpec.ipFamilies", "[]v1.IPFamily"),
    ("core.v1.ServiceSpec.ipFamilyPolicy", "v1.IPFamilyPolicy"),
    (
        "core.v1.LoadBalancerIngress.ipMode",
        "v1.LoadBalancerIPMode",
    ),
    (
        "core.v1.PersistentVolumeClaimSpec.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    (
        "core.v1.PersistentVolumeClaimSpec.volumeMode",
        "v1.PersistentVolumeMode",
    ),
    (
        "core.v1.PersistentVolumeSpec.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    ("core.v1.PersistentVolumeSpec.capacity", "v1.ResourceList"),
    (
        "core.v1.PersistentVolumeSpec.persistentVolumeReclaimPolicy",
        "v1.PersistentVolumeReclaimPolicy",
    ),
    (
        "core.v1.PersistentVolumeSpec.volumeMode",
        "v1.PersistentVolumeMode",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.phase",
        "v1.PersistentVolumeClaimPhase",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.accessModes",
        "[]v1.PersistentVolumeAccessMode",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.capacity",
        "v1.ResourceList",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.allocatedResources",
        "v1.ResourceList",
    ),
    (
        "core.v1.PersistentVolumeClaimStatus.allocatedResourceStatuses",
        "map[v1.ResourceName]v1.ClaimResourceStatus",
    ),
    (
        "core.v1.PersistentVolumeClaimCondition.type",
        "v1.PersistentVolumeClaimConditionType",
    ),
    (
        "core.v1.PersistentVolumeClaimCondition.status",
        "v1.ConditionStatus",
    ),
    (
        "core.v1.PersistentVolumeStatus.phase",
        "v1.PersistentVolumePhase",
    ),
    (
        "core.v1.ModifyVolumeStatus.status",
        "v1.PersistentVolumeClaimModifyVolumeStatus",
    ),
    ("core.v1.Secret.type", "v1.SecretType"),
    ("core.v1.NamespaceSpec.finalizers", "[]v1.FinalizerName"),
    ("core.v1.NamespaceStatus.phase", "v1.NamespacePhase"),
    (
        "core.v1.NamespaceCondition.type",
        "v1.NamespaceConditionType",
    ),
    ("core.v1.NamespaceCondition.status", "v1.ConditionStatus"),
    ("core.v1.NodeStatus.phase", "v1.NodePhase"),
    ("core.v1.NodeStatus.capacity", "v1.ResourceList"),
    ("core.v1.NodeStatus.allocatable", "v1.ResourceList"),
    ("core.v1.NodeAddress.type", "v1.NodeAddressType"),
    ("core.v1.NodeCondition.type", "v1.NodeConditionType"),
    ("core.v1.NodeCondition.status", "v1.ConditionStatus"),
    (
        "core.v1.ComponentCondition.type",
        "v1.ComponentConditionType",
    ),
    ("core.v1.ComponentCondition.status", "v1.ConditionStatus"),
    ("core.v1.LimitRangeItem.type", "v1.LimitType"),
    ("core.v1.LimitRangeItem.max", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.min", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.default", "v1.ResourceList"),
    ("core.v1.LimitRangeItem.defaultRequest", "v1.ResourceList"),
    (
        "core.v1.LimitRangeItem.maxLimitRequestRatio",
        "v1.ResourceList",
    ),
    ("core.v1.ResourceQuotaSpec.hard", "v1.ResourceList"),
    (
        "core.v1.ResourceQuotaSpec.scopes",
        "[]v1.ResourceQuotaScope",
    ),
    ("core.v1.ResourceQuotaStatus.hard", "v1.ResourceList"),
    ("core.v1.ResourceQuotaStatus.used", "v1.ResourceList"),
    (
        "core.v1.ScopedResourceSelectorRequirement.scopeName",
        "v1.ResourceQuotaScope",
    ),
    (
        "core.v1.ScopedResourceSelectorRequirement.operator",
        "v1.ScopeSelectorOperator",
    ),
    (
        "core.v1.ReplicationControllerCondition.type",
        "v1.ReplicationControllerConditionType",
    ),
    (
        "core.v1.ReplicationControllerCondition.status",
        "v1.ConditionStatus",
    ),
    // apps/v1
    (
        "apps.v1.DeploymentStrategy.type",
        "v1.DeploymentStrategyType",
    ),
    (
        "apps.v1.DeploymentCondition.type",
        "v1.DeploymentConditionType",
    ),
    ("apps.v1.DeploymentCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.StatefulSetSpec.podManagementPolicy",
        "v1.PodManagementPolicyType",
    ),
    (
        "apps.v1.StatefulSetUpdateStrategy.type",
        "v1.StatefulSetUpdateStrategyType",
    ),
    (
        "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy.whenDeleted",
        "v1.PersistentVolumeClaimRetentionPolicyType",
    ),
    (
        "apps.v1.StatefulSetPersistentVolumeClaimRetentionPolicy.whenScaled",
        "v1.PersistentVolumeClaimRetentionPolicyType",
    ),
    (
        "apps.v1.StatefulSetCondition.type",
        "v1.StatefulSetConditionType",
    ),
    ("apps.v1.StatefulSetCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.DaemonSetUpdateStrategy.type",
        "v1.DaemonSetUpdateStrategyType",
    ),
    (
        "apps.v1.DaemonSetCondition.type",
        "v1.DaemonSetConditionType",
    ),
    ("apps.v1.DaemonSetCondition.status", "v1.ConditionStatus"),
    (
        "apps.v1.ReplicaSetCondition.type",
        "v1.ReplicaSetConditionType",
    ),
    ("apps.v1.ReplicaSetCondition.status", "v1.ConditionStatus"),
    // batch/v1
    ("batch.v1.JobSpec.completionMode", "v1.CompletionMode"),
    (
        "batch.v1.JobSpec.podReplacementPolicy",
        "v1.PodReplacementPolicy",
    ),
    ("batch.v1.JobCondition.type", "v1.JobConditionType"),
    ("batch.v1.JobCondition.status", "v1.ConditionStatus"),
    (
        "batch.v1.PodFailurePolicyRule.action",
        "v1.PodFailurePolicyAction",
    ),
    (
        "batch.v1.PodFailurePolicyOnExitCodesRequirement.operator",
        "v1.PodFailurePolicyOnExitCodesOperator",
    ),
    (
        "batch.v1.PodFailurePolicyOnPodConditionsPattern.type",
        "v1.PodConditionType",
    ),
    (
        "batch.v1.PodFailurePolicyOnPodConditionsPattern.status",
        "v1.ConditionStatus",
    ),
    (
        "batch.v1.CronJobSpec.concurrencyPolicy",
        "v1.ConcurrencyPolicy",
    ),
    ("batch.v1.UncountedTerminatedPods.succeeded", "[]types.UID"),
    ("batch.v1.UncountedTerminatedPods.failed", "[]types.UID"),
    // networking, discovery, policy, storage, scheduling, coordination, node
    ("networking.v1.HTTPIngressPath.pathType", "v1.PathType"),
    (
        "networking.v1.NetworkPolicySpec.policyTypes",
        "[]v1.PolicyType",
    ),
    ("networking.v1.NetworkPolicyPort.protocol", "v1.Protocol"),
    ("networking.v1.IngressPortStatus.protocol", "v1.Protocol"),
    ("discovery.v1.EndpointSlice.addressType", "v1.AddressType"),
    ("discovery.v1.EndpointPort.protocol", "v1.Protocol"),
    (
        "policy.v1.PodDisruptionBudgetSpec.unhealthyPodEvictionPolicy",
        "v1.UnhealthyPodEvictionPolicyType",
    ),
    (
        "storage.v1.StorageClass.reclaimPolicy",
        "v1.PersistentVolumeReclaimPolicy",
    ),
    (
        "storage.v1.StorageClass.volumeBindingMode",
        "v1.VolumeBindingMode",
    ),
    (
        "storage.v1.CSIDriverSpec.volumeLifecycleModes",
        "[]v1.VolumeLifecycleMode",
    ),
    ("storage.v1.CSIDriverSpec.fsGroupPolicy", "v1.FSGroupPolicy"),
    (
        "scheduling.v1.PriorityClass.preemptionPolicy",
        "v1.PreemptionPolicy",
    ),
    (
        "coordination.v1.LeaseSpec.strategy",
        "v1.CoordinatedLeaseStrategy",
    ),
    ("node.v1.Overhead.podFixed", "v1.ResourceList"),
    // autoscaling/v2
    ("autoscaling.v2.MetricSpec.type", "v2.MetricSourceType"),
    ("autoscaling.v2.MetricStatus.type", "v2.MetricSourceType"),
    ("autoscaling.v2.MetricTarget.type", "v2.MetricTargetType"),
    (
        "autoscaling.v2.HPAScalingRules.selectPolicy",
        "v2.ScalingPolicySelect",
    ),
    (
        "autoscaling.v2.HPAScalingPolicy.type",
        "v2.HPAScalingPolicyType",
    ),
    (
        "autoscaling.v2.ResourceMetricSource.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ResourceMetricStatus.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ContainerResourceMetricSource.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.ContainerResourceMetricStatus.name",
        "v1.ResourceName",
    ),
    (
        "autoscaling.v2.HorizontalPodAutoscalerCondition.type",
        "v2.HorizontalPodAutoscalerConditionType",
    ),
    (
        "autoscaling.v2.HorizontalPodAutoscalerCondition.status",
        "v1.ConditionStatus",
    ),
    // admissionregistration/v1, certificates/v1, authentication/v1, authorization/v1
    (
        "admissionregistration.v1.ValidatingWebhook.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingWebhook.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingWebhook.sideEffects",
        "v1.SideEffectClass",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.sideEffects",
        "v1.SideEffectClass",
    ),
    (
        "admissionregistration.v1.MutatingWebhook.reinvocationPolicy",
        "v1.ReinvocationPolicyType",
    ),
    (
        "admissionregistration.v1.RuleWithOperations.operations",
        "[]v1.OperationType",
    ),
    (
        "admissionregistration.v1.RuleWithOperations.scope",
        "v1.ScopeType",
    ),
    (
        "admissionregistration.v1.NamedRuleWithOperations.operations",
        "[]v1.OperationType",
    ),
    (
        "admissionregistration.v1.NamedRuleWithOperations.scope",
        "v1.ScopeType",
    ),
    (
        "admissionregistration.v1.ValidatingAdmissionPolicySpec.failurePolicy",
        "v1.FailurePolicyType",
    ),
    (
        "admissionregistration.v1.MatchResources.matchPolicy",
        "v1.MatchPolicyType",
    ),
    (
        "admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec.validationActions",
        "[]v1.ValidationAction",
    ),
    (
        "admissionregistration.v1.ParamRef.parameterNotFoundAction",
        "v1.ParameterNotFoundActionType",
    ),
    (
        "admissionregistration.v1.Validation.reason",
        "v1.StatusReason",
    ),
    (
        "certificates.v1.CertificateSigningRequestSpec.usages",
        "[]v1.KeyUsage",
    ),
    (
        "certificates.v1.CertificateSigningRequestSpec.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "certificates.v1.CertificateSigningRequestCondition.type",
        "v1.RequestConditionType",
    ),
    (
        "certificates.v1.CertificateSigningRequestCondition.status",
        "v1.ConditionStatus",
    ),
    (
        "authentication.v1.UserInfo.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "authorization.v1.SubjectAccessReviewSpec.extra",
        "map[string]v1.ExtraValue",
    ),
    (
        "authorization.v1.FieldSelectorRequirement.operator",
        "v1.FieldSelectorOperator",
    ),
];

/// The Go type a JSON value is decoded into, as far as the error texts need it.
#[derive(Debug, Clone)]
enum GoType {
    /// A string kind (`string`, `v1.Protocol`).
    Str(String),
    Int {
        name: String,
        bits: u32,
    },
    Float {
        name: String,
        bits: u32,
    },
    Bool(String),
    /// `[]byte`: base64 from a string, or an array of bytes.
    Bytes(String),
    Slice {
        name: String,
        elem: Box<GoType>,
    },
    /// A map with string keys.
    Map {
        name: String,
        value: Box<GoType>,
    },
    /// A struct: its `reflect.Type.String()` (`v1.ObjectMeta`), its name
    /// (`ObjectMeta`, the `Go struct field` prefix) and its definition.
    Struct {
        name: String,
        type_name: String,
        definition: String,
    },
    /// `metav1.Time` (`micro: false`) / `metav1.MicroTime` (`UnmarshalJSON`).
    Time {
        micro: bool,
    },
    /// `resource.Quantity` (`UnmarshalJSON` + `ParseQuantity`).
    Quantity,
    /// `intstr.IntOrString` (`UnmarshalJSON` into int32 or string).
    IntOrString,
    /// Anything goes (`runtime.RawExtension`, `FieldsV1`, apiextensions `JSON`,
    /// or a schema this walk does not model).
    Any,
}

impl GoType {
    /// `reflect.Type.String()`.
    fn name(&self) -> String {
        match self {
            GoType::Str(name)
            | GoType::Int { name, .. }
            | GoType::Float { name, .. }
            | GoType::Bool(name)
            | GoType::Bytes(name)
            | GoType::Slice { name, .. }
            | GoType::Map { name, .. }
            | GoType::Struct { name, .. } => name.clone(),
            GoType::Time { micro: false } => "v1.Time".into(),
            GoType::Time { micro: true } => "v1.MicroTime".into(),
            GoType::Quantity => "resource.Quantity".into(),
            GoType::IntOrString => "intstr.IntOrString".into(),
            GoType::Any => "interface {}".into(),
        }
    }

    /// Renames the type (a named Go type), and the element / value types that a
    /// `[]X` / `map[K]X` name spells out.
    fn renamed(self, new: &str) -> GoType {
        let elem_name = new.strip_prefix("[]");
        let value_name = new.strip_prefix("map[").and_then(|rest| {
            let mut depth = 1usize;
            for (i, c) in rest.char_indices() {
                match c {
                    '[' => depth += 1,
                    ']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(&rest[i + 1..]);
                        }
                    }
                    _ => {}
                }
            }
            None
        });
        match self {
            GoType::Str(_) => GoType::Str(new.into()),
            GoType::Int { bits, .. } => GoType::Int {
                name: new.into(),
                bits,
            },
            GoType::Float { bits, .. } => GoType::Float {
                name: new.into(),
                bits,
            },
            GoType::Bool(_) => GoType::Bool(new.into()),
            GoType::Bytes(_) => GoType::Bytes(new.into()),
            GoType::Slice { elem, .. } => GoType::Slice {
                name: new.into(),
                elem: Box::new(match elem_name {
                    Some(elem_name) => elem.renamed(elem_name),
                    None => *elem,
                }),
            },
            GoType::Map { value, .. } => GoType::Map {
                name: new.into(),
                value: Box::new(match value_name {
                    Some(value_name) => value.renamed(value_name),
                    None => *value,
                }),
            },
            other => other,
        }
    }
}

fn ref_name(schema: &Value) -> Option<&str> {
    schema.get("$ref")?.as_str()?.rsplit('/').next()
}

/// `pkg.Type` of a definition name (`io.k8s.api.core.v1.PodSpec` -> `v1.PodSpec`).
fn go_type_of_definition(definition: &str) -> (String, String) {
    let mut parts = definition.rsplit('.');
    let type_name = parts.next().unwrap_or(definition).to_string();
    let package = parts.next().unwrap_or("");
    (format!("{package}.{type_name}"), type_name)
}

/// The Go type of a schema (a property, an item, a map value).
fn resolve(openapi: &OpenApi, schema: &Value) -> GoType {
    if let Some(definition) = ref_name(schema) {
        return resolve_definition(openapi, definition);
    }
    let format = schema.get("format").and_then(Value::as_str);
    match schema.get("type").and_then(Value::as_str) {
        Some("string") if format == Some("byte") => GoType::Bytes("[]uint8".into()),
        Some("string") if format == Some("int-or-string") => GoType::IntOrString,
        Some("string") => GoType::Str("string".into()),
        Some("integer") => match format {
            Some("int32") => GoType::Int {
                name: "int32".into(),
                bits: 32,
            },
            Some("int64") => GoType::Int {
                name: "int64".into(),
                bits: 64,
            },
            _ => GoType::Int {
                name: "int".into(),
                bits: 64,
            },
        },
        Some("number") => match format {
            Some("float") => GoType::Float {
                name: "float32".into(),
                bits: 32,
            },
            _ => GoType::Float {
                name: "float64".into(),
                bits: 64,
            },
        },
        Some("boolean") => GoType::Bool("bool".into()),
        Some("array") => {
            let elem = schema
                .get("items")
                .map_or(GoType::Any, |items| resolve(openapi, items));
            match elem {
                GoType::Any => GoType::Any,
                elem => GoType::Slice {
                    name: format!("[]{}", elem.name()),
                    elem: Box::new(elem),
                },
            }
        }
        Some("object") => match schema.get("additionalProperties").filter(|v| v.is_object()) {
            Some(values) => match resolve(openapi, values) {
                GoType::Any => GoType::Any,
                value => GoType::Map {
                    name: format!("map[string]{}", value.name()),
                    value: Box::new(value),
                },
            },
            None => GoType::Any,
        },
        _ => GoType::Any,
    }
}

fn resolve_definition(openapi: &OpenApi, definition: &str) -> GoType {
    match definition {
        "io.k8s.apimachinery.pkg.api.resource.Quantity" => return GoType::Quantity,
        "io.k8s.apimachinery.pkg.util.intstr.IntOrString" => return GoType::IntOrString,
        "io.k8s.apimachinery.pkg.apis.meta.v1.Time" => return GoType::Time { micro: false },
        "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime" => return GoType::Time { micro: true },
        "io.k8s.apimachinery.pkg.runtime.RawExtension"
        | "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1" => return GoType::Any,
        _ => {}
    }
    let Ok(Some(schema)) = openapi.definition(definition) else {
        return GoType::Any;
    };
    let (name, type_name) = go_type_of_definition(definition);
    let is_struct = schema.get("properties").is_some()
        || schema.get("type").and_then(Value::as_str) == Some("object");
    if is_struct {
        GoType::Struct {
            name,
            type_name,
            definition: definition.to_string(),
        }
    } else {
        // apiextensions JSON / JSONSchemaPropsOr*: custom UnmarshalJSON.
        GoType::Any
    }
}

/// The Go type of property `field` of `definition`.
fn field_type(openapi: &OpenApi, definition: &str, field: &str, schema: &Value) -> GoType {
    let resolved = resolve(openapi, schema);
    let short = definition
        .strip_prefix(API_PREFIX)
        .or_else(|| definition.strip_prefix(APIS_META_PREFIX))
        .unwrap_or(definition);
    let named = NAMED_TYPES.iter().find(|(key, _)| {
        key.strip_prefix(short)
            .and_then(|rest| rest.strip_prefix('.'))
            == Some(field)
    });
    match named {
        Some((_, go_type)) => resolved.renamed(go_type),
        None => resolved,
    }
}

/// How deep [`TypeWalk`] follows a body; deeper values are not checked (kube
/// itself stops at 10000 levels, which would not fit a worker thread's stack).
const MAX_WALK_DEPTH: usize = 512;

/// `sigs.k8s.io/json` (`UnmarshalCaseSensitivePreserveInts` / `UnmarshalStrict`)
/// decoding a body into the typed object of its kind, reduced to its errors:
/// keys match fields case-sensitively (others are ignored), a type mismatch
/// is saved (`json: cannot unmarshal <value> into Go struct field
/// <Struct>.<json.path> of type <type>`, the first one is reported) and
/// decoding goes on, while an `UnmarshalJSON` failure (`metav1.Time`,
/// `resource.Quantity`, `intstr.IntOrString`) aborts at once and wins over a
/// saved error. `<Struct>` is the innermost struct being decoded and the path
/// joins the JSON names of struct fields from the root (no map keys, no
/// indices), as kube's `errorContext` does.
struct TypeWalk<'a> {
    openapi: &'a OpenApi,
    tree: &'a Tree<'a>,
    saved: Option<String>,
    struct_name: String,
    fields: Vec<String>,
    depth: usize,
}

impl TypeWalk<'_> {
    /// `UnmarshalTypeError.Error()` with the current error context.
    fn type_error(&self, value: &str, type_name: &str) -> String {
        if self.struct_name.is_empty() && self.fields.is_empty() {
            format!("json: cannot unmarshal {value} into Go value of type {type_name}")
        } else {
            format!(
                "json: cannot unmarshal {value} into Go struct field {}.{} of type {type_name}",
                self.struct_name,
                self.fields.join(".")
            )
        }
    }

    fn save(&mut self, error: String) {
        self.saved.get_or_insert(error);
    }

    fn save_type_error(&mut self, value: &str, type_name: &str) {
        if self.saved.is_none() {
            self.saved = Some(self.type_error(value, type_name));
        }
    }

    /// Decodes value `index` into `ty`; `Err` is a fatal (returned) error.
    fn value(&mut self, index: usize, ty: &GoType) -> Result<(), String> {
        if self.depth >= MAX_WALK_DEPTH {
            return Ok(());
        }
        self.depth += 1;
        let result = self.value_inner(index, ty);
        self.depth -= 1;
        result
    }

    fn value_inner(&mut self, index: usize, ty: &GoType) -> Result<(), String> {
        let tree = self.tree;
        let node = tree.node(index);
        if matches!(node, Node::Null) {
            // null leaves any Go value alone (custom unmarshalers accept it too).
            return Ok(());
        }
        match ty {
            GoType::Any => Ok(()),
            GoType::Quantity => {
                let raw = tree.raw(index);
                let raw = match raw {
                    [b'"', inner @ .., b'"'] => inner,
                    other => other,
                };
                match crate::quantity::canonicalize(go_lossy(raw).trim()) {
                    Ok(_) => Ok(()),
                    Err(error) => Err(error.to_string()),
                }
            }
            GoType::IntOrString => match node {
                Node::String(_) => Ok(()),
                Node::Number => {
                    let raw = go_lossy(tree.raw(index));
                    if parse_go_int(&raw, 32).is_some() {
                        Ok(())
                    } else {
                        Err(self.type_error(&format!("number {raw}"), "int32"))
                    }
                }
                other => Err(self.type_error(value_word(other), "int32")),
            },
            GoType::Time { micro } => match node {
                Node::String(text) => parse_go_time(text, *micro),
                other => Err(self.type_error(value_word(other), "string")),
            },
            GoType::Str(name) => {
                if !matches!(node, Node::String(_)) {
                    self.save_type_error(value_word(node), name);
                }
                Ok(())
            }
            GoType::Int { name, bits } => {
                match node {
                    Node::Number => {
                        let raw = go_lossy(tree.raw(index));
                        if parse_go_int(&raw, *bits).is_none() {
                            self.save_type_error(&format!("number {raw}"), name);
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Float { name, bits } => {
                match node {
                    Node::Number => {
                        let raw = go_lossy(tree.raw(index));
                        let finite = if *bits == 32 {
                            raw.parse::<f32>().is_ok_and(f32::is_finite)
                        } else {
                            raw.parse::<f64>().is_ok_and(f64::is_finite)
                        };
                        if !finite {
                            self.save_type_error(&format!("number {raw}"), name);
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Bool(name) => {
                if !matches!(node, Node::Bool) {
                    self.save_type_error(value_word(node), name);
                }
                Ok(())
            }
            GoType::Bytes(name) => {
                match node {
                    Node::String(text) => {
                        if let Some(offset) = base64_std_error(text.as_bytes()) {
                            self.save(format!("illegal base64 data at input byte {offset}"));
                        }
                    }
                    Node::Array(children) => {
                        for &child in children {
                            match tree.node(child) {
                                Node::Null => {}
                                Node::Number => {
                                    let raw = go_lossy(tree.raw(child));
                                    if !raw.parse::<u64>().is_ok_and(|n| n <= 255) {
                                        self.save_type_error(&format!("number {raw}"), "uint8");
                                    }
                                }
                                other => self.save_type_error(value_word(other), "uint8"),
                            }
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Slice { name, elem } => {
                match node {
                    Node::Array(children) => {
                        for &child in children {
                            self.value(child, elem)?;
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Map { name, value } => {
                match node {
                    Node::Object(members) => {
                        for (_, child) in members {
                            self.value(*child, value)?;
                        }
                    }
                    other => self.save_type_error(value_word(other), name),
                }
                Ok(())
            }
            GoType::Struct {
                name,
                type_name,
                definition,
            } => {
                let Node::Object(members) = node else {
                    self.save_type_error(value_word(node), name);
                    return Ok(());
                };
                let Ok(Some(schema)) = self.openapi.definition(definition) else {
                    return Ok(());
                };
                let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
                    return Ok(());
                };
                for (key, child) in members {
                    let Some(property) = properties.get(key) else {
                        continue;
                    };
                    let field = field_type(self.openapi, definition, key, property);
                    self.fields.push(key.clone());
                    let outer = std::mem::replace(&mut self.struct_name, type_name.clone());
                    let result = self.value(*child, &field);
                    self.fields.pop();
                    self.struct_name = outer;
                    result?;
                }
                Ok(())
            }
        }
    }
}

/// `strconv.ParseInt(s, 10, 64)` plus `reflect.Value.OverflowInt` for `bits`.
fn parse_go_int(raw: &str, bits: u32) -> Option<i64> {
    let value: i64 = raw.parse().ok()?;
    let (min, max) = if bits >= 64 {
        (i64::MIN, i64::MAX)
    } else {
        (-(1i64 << (bits - 1)), (1i64 << (bits - 1)) - 1)
    };
    (min..=max).contains(&value).then_some(value)
}

/// `base64.StdEncoding.Decode`'s `CorruptInputError` offset for `src`, or
/// `None` when it decodes (`\r` and `\n` are skipped, padding is required).
fn base64_std_error(src: &[u8]) -> Option<usize> {
    fn value(c: u8) -> bool {
        c.is_ascii_alphanumeric() || c == b'+' || c == b'/'
    }
    let mut si = 0usize;
    while si < src.len() {
        // decodeQuantum
        let mut j = 0usize;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return None;
                }
                // StdEncoding pads: a short final quantum is corrupt.
                return Some(si - j);
            }
            let c = src[si];
            si += 1;
            if value(c) {
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Some(si - 1);
            }
            match j {
                0 | 1 => return Some(si - 1),
                2 => {
                    while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                        si += 1;
                    }
                    if si == src.len() {
                        return Some(src.len());
                    }
                    if src[si] != b'=' {
                        return Some(si - 1);
                    }
                    si += 1;
                }
                _ => {}
            }
            while si < src.len() && (src[si] == b'\n' || src[si] == b'\r') {
                si += 1;
            }
            if si < src.len() {
                return Some(si);
            }
            return None;
        }
    }
    None
}

// ---------------------------------------------------------------------------
// time.Parse(time.RFC3339 / metav1.RFC3339Micro, s) errors
// ---------------------------------------------------------------------------

/// `quote` of Go's `time` package: non-ASCII and control bytes as `\xNN`.
fn time_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        if (c as u32) >= 0x80 || c < ' ' {
            let mut buf = [0u8; 4];
            for byte in c.encode_utf8(&mut buf).bytes() {
                let _ = write!(out, r"\x{byte:02x}");
            }
        } else {
            if c == '"' || c == '\\' {
                out.push('\\');
            }
            out.push(c);
        }
    }
    out.push('"');
    out
}

/// One element of a Go time layout.
#[derive(Clone, Copy)]
enum Std {
    LongYear,
    ZeroMonth,
    ZeroDay,
    Hour,
    ZeroMinute,
    ZeroSecond,
    FracSecond0(usize),
    Iso8601ColonTz,
}

/// `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(value: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let digit = |i: usize| value.get(i).is_some_and(u8::is_ascii_digit);
    if !digit(0) {
        return None;
    }
    if !digit(1) {
        if fixed {
            return None;
        }
        return Some((i64::from(value[0] - b'0'), &value[1..]));
    }
    Some((
        i64::from(value[0] - b'0') * 10 + i64::from(value[1] - b'0'),
        &value[2..],
    ))
}

/// `atoi` of the time package (optional sign, then digits only).
fn time_atoi(s: &[u8]) -> Option<i64> {
    let (negative, digits) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let mut x: i64 = 0;
    for &c in digits {
        if !c.is_ascii_digit() {
            return None;
        }
        x = x.checked_mul(10)?.checked_add(i64::from(c - b'0'))?;
    }
    Some(if negative { -x } else { x })
}

/// `parseNanoseconds(value, nbytes)`: `Err(None)` is errBad, `Err(Some(_))` a range error.
fn parse_nanoseconds(value: &[u8], nbytes: usize) -> Result<(), Option<&'static str>> {
    if !matches!(value.first(), Some(b'.' | b',')) {
        return Err(None);
    }
    let nbytes = nbytes.min(10);
    match time_atoi(&value[1..nbytes.min(value.len())]) {
        None => Err(None),
        Some(ns) if ns < 0 => Err(Some("fractional second")),
        Some(_) => Ok(()),
    }
}

fn days_in(month: i64, year: i64) -> i64 {
    match month {
        2 if (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// `time.Parse(layout, value)` for `time.RFC3339` (`micro: false`) and
/// `metav1.RFC3339Micro`: the `*time.ParseError` text, as `metav1.Time` /
/// `MicroTime` `UnmarshalJSON` returns it.
fn parse_go_time(value: &str, micro: bool) -> Result<(), String> {
    let layout = if micro {
        "2006-01-02T15:04:05.000000Z07:00"
    } else {
        "2006-01-02T15:04:05Z07:00"
    };
    let mut chunks: Vec<(&str, Std, &str)> = vec![
        ("", Std::LongYear, "2006"),
        ("-", Std::ZeroMonth, "01"),
        ("-", Std::ZeroDay, "02"),
        ("T", Std::Hour, "15"),
        (":", Std::ZeroMinute, "04"),
        (":", Std::ZeroSecond, "05"),
    ];
    if micro {
        chunks.push(("", Std::FracSecond0(6), ".000000"));
    }
    chunks.push(("", Std::Iso8601ColonTz, "Z07:00"));

    let bad = |elem: &str, rest: &[u8]| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            time_quote(value),
            time_quote(layout),
            time_quote(&go_lossy(rest)),
            time_quote(elem)
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", time_quote(value));

    let mut rest = value.as_bytes();
    let (mut year, mut month, mut day) = (0i64, -1i64, -1i64);
    for (index, (prefix, std, elem)) in chunks.iter().enumerate() {
        for &p in prefix.as_bytes() {
            if rest.first() != Some(&p) {
                return Err(bad(prefix, rest));
            }
            rest = &rest[1..];
        }
        let hold = rest;
        let mut range_error: Option<&str> = None;
        let ok: Option<&[u8]> = match std {
            Std::LongYear => {
                if rest.len() < 4 || !rest[0].is_ascii_digit() {
                    None
                } else {
                    time_atoi(&rest[..4]).map(|y| {
                        year = y;
                        &rest[4..]
                    })
                }
            }
            Std::ZeroMonth => getnum(rest, true).map(|(m, after)| {
                month = m;
                if !(1..=12).contains(&m) {
                    range_error = Some("month");
                }
                after
            }),
            Std::ZeroDay => getnum(rest, true).map(|(d, after)| {
                day = d;
                after
            }),
            Std::Hour => getnum(rest, false).map(|(h, after)| {
                if h >= 24 {
                    range_error = Some("hour");
                }
                after
            }),
            Std::ZeroMinute => getnum(rest, true).map(|(m, after)| {
                if m >= 60 {
                    range_error = Some("minute");
                }
                after
            }),
            Std::ZeroSecond => match getnum(rest, true) {
                None => None,
                Some((s, after)) if s >= 60 => {
                    range_error = Some("second");
                    Some(after)
                }
                Some((_, after)) => {
                    let next_is_frac =
                        matches!(chunks.get(index + 1), Some((_, Std::FracSecond0(_), _)));
                    let has_frac = after.len() >= 2
                        && matches!(after[0], b'.' | b',')
                        && after[1].is_ascii_digit();
                    if has_frac && !next_is_frac {
                        let mut n = 2;
                        while n < after.len() && after[n].is_ascii_digit() {
                            n += 1;
                        }
                        match parse_nanoseconds(after, n) {
                            Ok(()) => Some(&after[n..]),
                            Err(Some(what)) => {
                                range_error = Some(what);
                                Some(&after[n..])
                            }
                            Err(None) => None,
                        }
                    } else {
                        Some(after)
                    }
                }
            },
            Std::FracSecond0(digits) => {
                let ndigit = 1 + digits;
                if rest.len() < ndigit {
                    None
                } else {
                    match parse_nanoseconds(rest, ndigit) {
                        Ok(()) => Some(&rest[ndigit..]),
                        Err(Some(what)) => {
                            range_error = Some(what);
                            Some(&rest[ndigit..])
                        }
                        Err(None) => None,
                    }
                }
            }
            Std::Iso8601ColonTz => {
                if rest.first() == Some(&b'Z') {
                    Some(&rest[1..])
                } else if rest.len() < 6 || rest[3] != b':' {
                    None
                } else {
                    let hour = getnum(&rest[1..3], true);
                    let minute = getnum(&rest[4..6], true);
                    match (hour, minute) {
                        (Some((h, _)), Some((m, _))) => {
                            if h > 24 {
                                range_error = Some("time zone offset hour");
                            }
                            if m > 60 {
                                range_error = Some("time zone offset minute");
                            }
                            if matches!(rest[0], b'+' | b'-') || range_error.is_some() {
                                Some(&rest[6..])
                            } else {
                                None
                            }
                        }
                        _ => None,
                    }
                }
            }
        };
        if let Some(what) = range_error {
            return Err(range(what));
        }
        match ok {
            Some(after) => rest = after,
            None => return Err(bad(elem, hold)),
        }
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            time_quote(value),
            time_quote(&go_lossy(rest))
        ));
    }
    if day < 1 || day > days_in(month, year) {
        return Err(range("day"));
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// The whole decode
// ---------------------------------------------------------------------------

/// `the object provided is unrecognized (must be of type <Kind>): <err> (<summary>)`.
fn unrecognized(expected_kind: &str, error: &str, body: &[u8]) -> String {
    format!(
        "the object provided is unrecognized (must be of type {expected_kind}): {error} ({})",
        summarize_data(body)
    )
}

/// The message of kube-apiserver 1.34's 400 BadRequest when a POST or PUT body
/// (JSON) cannot be decoded for an endpoint of `expected_kind` in
/// `expected_group_version` (`v1`, `apps/v1`), or `None` when kube decodes it.
///
/// `body_api_version` / `body_kind`: pass `None` for a JSON body; they are read
/// from it as kube reads them (keys matched case-insensitively, the last one
/// wins, a non-string value is itself an error, which a serde lookup does not
/// reproduce). `Some` replaces what the body says, for a caller that learnt
/// the type another way.
///
/// Cases, in kube's order (see the module docs for where each comes from):
/// syntax errors and non-objects (`the object provided is unrecognized ...`),
/// unregistered kinds (`no kind "X" is registered for version "g/v" in scheme
/// "pkg/api/legacyscheme/scheme.go:30"`), type mismatches against the body's
/// kind (`json: cannot unmarshal ...`, `illegal base64 data at input byte N`,
/// quantity and time parse errors), another kind of a known version
/// (`converting (v1.Secret) to (core.ConfigMap): unknown conversion`), and
/// the same kind in another version of its group (`the API version in the
/// data (autoscaling/v2) does not match the expected API version
/// (autoscaling/v1)`).
pub fn decode_failure_message(
    expected_kind: &str,
    expected_group_version: &str,
    body: &[u8],
    body_api_version: Option<&str>,
    body_kind: Option<&str>,
) -> Option<String> {
    // 1. Interpret.
    if let Some(syntax) = go_json_syntax_error(body) {
        return Some(unrecognized(
            expected_kind,
            &format!("couldn't get version/kind; json parse error: {syntax}"),
            body,
        ));
    }
    let tree = Tree::parse(body)?;
    let mut meta = match interpret(&tree) {
        Ok(meta) => meta,
        Err(error) => {
            return Some(unrecognized(
                expected_kind,
                &format!("couldn't get version/kind; json parse error: {error}"),
                body,
            ))
        }
    };
    if let Some(api_version) = body_api_version {
        meta.api_version = api_version.to_string();
    }
    if let Some(kind) = body_kind {
        meta.kind = kind.to_string();
    }
    let (mut group, mut version) = match parse_group_version(&meta.api_version) {
        Ok(gv) => gv,
        Err(error) => return Some(unrecognized(expected_kind, &error, body)),
    };
    let mut kind = meta.kind;

    // 2. gvkWithDefaults(actual, scope.Kind); the into type's (internal) kind adds nothing.
    let (expected_group, expected_version) = parse_group_version(expected_group_version)
        .unwrap_or_else(|_| (String::new(), expected_group_version.to_string()));
    if kind.is_empty() {
        kind = expected_kind.to_string();
    }
    if version.is_empty() && group.is_empty() {
        group.clone_from(&expected_group);
        version.clone_from(&expected_version);
    }
    if version.is_empty() && group == expected_group {
        version.clone_from(&expected_version);
    }
    let cannot_handle = |error: &str| {
        format!(
            "{kind} in version {} cannot be handled as a {expected_kind}: {error}",
            go_quote(&version)
        )
    };
    if version.is_empty() {
        return Some(cannot_handle(&format!(
            "Object 'apiVersion' is missing in '{}'",
            go_lossy(body)
        )));
    }

    // 3. Scheme.New.
    let scheme = Scheme::for_group(&expected_group);
    let Some(created) = scheme_new(scheme, &group, &version, &kind) else {
        let error = if version == INTERNAL_VERSION {
            format!(
                "no kind {} is registered for the internal version of group {} in scheme {}",
                go_quote(&kind),
                go_quote(&group),
                go_quote(scheme.name())
            )
        } else {
            format!(
                "no kind {} is registered for version {} in scheme {}",
                go_quote(&kind),
                go_quote(&gv_string(&group, &version)),
                go_quote(scheme.name())
            )
        };
        return Some(cannot_handle(&error));
    };

    // 4. Unmarshal into the typed object of the body's kind.
    if created == Created::Api {
        let openapi = openapi();
        if let Ok(Some(_)) = openapi.schema_for_kind(&group, &version, &kind) {
            let mut walk = TypeWalk {
                openapi,
                tree: &tree,
                saved: None,
                struct_name: String::new(),
                fields: Vec::new(),
                depth: 0,
            };
            let root = root_type(openapi, &group, &version, &kind);
            if let Err(fatal) = walk.value(0, &root) {
                return Some(cannot_handle(&fatal));
            }
            if let Some(saved) = walk.saved {
                return Some(cannot_handle(&saved));
            }
        }
    }

    // 5. Convert to the endpoint's internal type.
    let expected_internal = internal_package(&expected_group, expected_kind);
    let same_type = match created {
        Created::Meta => false,
        Created::Api | Created::Internal => {
            internal_package(&group, &kind) == expected_internal && kind == expected_kind
        }
    };
    if !same_type {
        let package = match created {
            Created::Meta => "v1".to_string(),
            Created::Api => version.clone(),
            Created::Internal => internal_package(&group, &kind),
        };
        return Some(cannot_handle(&format!(
            "converting ({package}.{kind}) to ({expected_internal}.{expected_kind}): unknown conversion"
        )));
    }

    // 6. handlers/create.go, update.go: AcceptsGroupVersion.
    if group != expected_group || version != expected_version {
        return Some(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            gv_string(&group, &version),
            gv_string(&expected_group, &expected_version)
        ));
    }
    None
}

/// The struct a body of this kind decodes into (the root of the walk).
fn root_type(openapi: &OpenApi, group: &str, version: &str, kind: &str) -> GoType {
    // The definition name is not exposed by kind; the Go type name is the kind
    // and only `Struct.type_name` / `definition` matter for the walk.
    let definition = definition_name_for(openapi, group, version, kind);
    match definition {
        Some(definition) => {
            let (name, type_name) = go_type_of_definition(&definition);
            GoType::Struct {
                name,
                type_name,
                definition,
            }
        }
        None => GoType::Any,
    }
}

/// The vendored definition name carrying this group/version/kind, found by
/// trying the package paths kube's types live in.
fn definition_name_for(
    openapi: &OpenApi,
    group: &str,
    version: &str,
    kind: &str,
) -> Option<String> {
    let target = openapi.schema_for_kind(group, version, kind).ok()??;
    let short_group = match group {
        "" => "core".to_string(),
        "internal.apiserver.k8s.io" => "apiserverinternal".to_string(),
        other => other.split('.').next().unwrap_or(other).to_string(),
    };
    let candidates = [
        format!("io.k8s.api.{short_group}.{version}.{kind}"),
        format!("io.k8s.apimachinery.pkg.apis.meta.v1.{kind}"),
        format!("io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{version}.{kind}"),
        format!("io.k8s.kube-aggregator.pkg.apis.apiregistration.{version}.{kind}"),
    ];
    candidates.into_iter().find(
        |name| matches!(openapi.definition(name), Ok(Some(schema)) if std::ptr::eq(schema, target)),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const CM: &str = "ConfigMap";

    fn decode(kind: &str, gv: &str, body: &str) -> Option<String> {
        decode_failure_message(kind, gv, body.as_bytes(), None, None)
    }

    /// `encoding/json` scanner messages. Texts from Go's `scanner.go` /
    /// `scanner_test.go` (`syntaxErrorTests`, `TestIndentErrors`) and the
    /// brief's real-server examples.
    #[test]
    fn syntax_errors() {
        let cases: &[(&[u8], Option<&str>)] = &[
            (b"{\"kind\":", Some("unexpected end of JSON input")),
            (
                b"{not json}",
                Some("invalid character 'n' looking for beginning of object key string"),
            ),
            (b"", Some("unexpected end of JSON input")),
            (b"   ", Some("unexpected end of JSON input")),
            (b"{", Some("unexpected end of JSON input")),
            (b"{}", None),
            (b" {} \n", None),
            (b"[1]", None),
            (b"\"x\"", None),
            (b"3", None),
            (b"null", None),
            (b"-0.5e+10", None),
            (
                b"{\"a\":1}x",
                Some("invalid character 'x' after top-level value"),
            ),
            (b"{}{}", Some("invalid character '{' after top-level value")),
            (b"{\"a\" 1}", Some("invalid character '1' after object key")),
            (
                b"{\"a\":1 \"b\":2}",
                Some("invalid character '\"' after object key:value pair"),
            ),
            (b"[1 2]", Some("invalid character '2' after array element")),
            (
                b"{\"a\":}",
                Some("invalid character '}' looking for beginning of value"),
            ),
            (
                b"[1,]",
                Some("invalid character ']' looking for beginning of value"),
            ),
            (
                b"{'a':1}",
                Some(r"invalid character '\'' looking for beginning of object key string"),
            ),
            (
                b"{\"a\":\"x\x00\"}",
                Some(r"invalid character '\x00' in string literal"),
            ),
            (b"\"\n\"", Some(r"invalid character '\n' in string literal")),
            (b"\"\t\"", Some(r"invalid character '\t' in string literal")),
            (
                b"\"\\x\"",
                Some("invalid character 'x' in string escape code"),
            ),
            (
                b"\"\\u12g4\"",
                Some(r"invalid character 'g' in \u hexadecimal character escape"),
            ),
            (b"-", Some("invalid character ' ' in numeric literal")),
            (b"-a", Some("invalid character 'a' in numeric literal")),
            (
                b"1.",
                Some("invalid character ' ' after decimal point in numeric literal"),
            ),
            (
                b"1.e5",
                Some("invalid character 'e' after decimal point in numeric literal"),
            ),
            (
                b"1e",
                Some("invalid character ' ' in exponent of numeric literal"),
            ),
            (
                b"1e+x",
                Some("invalid character 'x' in exponent of numeric literal"),
            ),
            (b"01", Some("invalid character '1' after top-level value")),
            (
                b"tru",
                Some("invalid character ' ' in literal true (expecting 'e')"),
            ),
            (
                b"trx",
                Some("invalid character 'x' in literal true (expecting 'u')"),
            ),
            (
                b"tx",
                Some("invalid character 'x' in literal true (expecting 'r')"),
            ),
            (
                b"fx",
                Some("invalid character 'x' in literal false (expecting 'a')"),
            ),
            (
                b"falsy",
                Some("invalid character 'y' in literal false (expecting 'e')"),
            ),
            (
                b"nul",
                Some("invalid character ' ' in literal null (expecting 'l')"),
            ),
            (
                b"nx",
                Some("invalid character 'x' in literal null (expecting 'u')"),
            ),
            (
                b"x",
                Some("invalid character 'x' looking for beginning of value"),
            ),
            (b"\"", Some("unexpected end of JSON input")),
            (b"[", Some("unexpected end of JSON input")),
            (
                b"\x7f",
                Some(r"invalid character '\x7f' looking for beginning of value"),
            ),
            (
                b"\x07",
                Some(r"invalid character '\a' looking for beginning of value"),
            ),
            (
                b"\\",
                Some(r"invalid character '\\' looking for beginning of value"),
            ),
            (b"\"", Some("unexpected end of JSON input")),
            (
                b"{\"a\":1,}",
                Some("invalid character '}' looking for beginning of object key string"),
            ),
            (
                b"}",
                Some("invalid character '}' looking for beginning of value"),
            ),
            (
                b"\xef\xbb\xbf{}",
                Some("invalid character '\u{ef}' looking for beginning of value"),
            ),
            (
                b"\x80",
                Some(r"invalid character '\u0080' looking for beginning of value"),
            ),
            (
                b"\xa0",
                Some(r"invalid character '\u00a0' looking for beginning of value"),
            ),
            (
                b"\xad",
                Some(r"invalid character '\u00ad' looking for beginning of value"),
            ),
            (
                b"\xe9",
                Some("invalid character 'é' looking for beginning of value"),
            ),
        ];
        for (body, want) in cases {
            assert_eq!(
                go_json_syntax_error(body).as_deref(),
                *want,
                "body {:?}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn nesting_limit() {
        let deep = "[".repeat(MAX_NESTING_DEPTH) + &"]".repeat(MAX_NESTING_DEPTH);
        assert_eq!(go_json_syntax_error(deep.as_bytes()), None);
        let deeper = "[".repeat(MAX_NESTING_DEPTH + 1);
        assert_eq!(
            go_json_syntax_error(deeper.as_bytes()).as_deref(),
            Some("invalid character '[' exceeded max depth")
        );
    }

    /// `summarizeData` of handlers/rest.go.
    #[test]
    fn summaries() {
        assert_eq!(summarize_data(b""), "<empty>");
        assert_eq!(summarize_data(b"{\"kind\":"), "{\"kind\":");
        assert_eq!(summarize_data(b"[1]"), "5b315d");
        assert_eq!(summarize_data(b" {}"), "207b7d");
        let long = br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{}}"#;
        assert_eq!(
            summarize_data(long),
            r#"{"apiVersion":"v1","kind":"Con ..."#
        );
        let long_array = b"[111111111111111111111111111111111]";
        assert_eq!(
            summarize_data(long_array),
            "5b3131313131313131313131313131313131313131313131313131313131 ..."
        );
    }

    /// Every case of the brief, with the exact kube text and where it comes from.
    #[test]
    fn decode_failures() {
        let find_kind = FIND_KIND_TYPE;
        let cases: Vec<(&str, &str, &str, Option<String>)> = vec![
            // (a) syntax: the brief's two real-server examples.
            (
                CM,
                "v1",
                "{\"kind\":",
                Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"kind\":)".into()),
            ),
            (
                CM,
                "v1",
                "{not json}",
                Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({not json})".into()),
            ),
            (
                CM,
                "v1",
                "",
                Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)".into()),
            ),
            // (b) valid JSON, not an object: meta.go Interpret's encoding/json error
            // (text seen in client-go logs: "cannot unmarshal array into Go value of type struct { APIVersion ...").
            (
                CM,
                "v1",
                "[1]",
                Some(format!("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type {find_kind} (5b315d)")),
            ),
            (
                CM,
                "v1",
                "\"x\"",
                Some(format!("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type {find_kind} (227822)")),
            ),
            (
                CM,
                "v1",
                "3",
                Some(format!("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go value of type {find_kind} (33)")),
            ),
            (
                CM,
                "v1",
                "true",
                Some(format!("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal bool into Go value of type {find_kind} (74727565)")),
            ),
            // Non-string kind / apiVersion ("json: cannot unmarshal number into Go struct field .kind of type string" in upstream-derived tests).
            (
                CM,
                "v1",
                "{\"kind\":1,\"apiVersion\":\"v1\"}",
                Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal number into Go struct field .kind of type string ({\"kind\":1,\"apiVersion\":\"v1\"})".into()),
            ),
            (
                CM,
                "v1",
                "{\"apiVersion\":[]}",
                Some("the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go struct field .apiVersion of type string ({\"apiVersion\":[]})".into()),
            ),
            (
                CM,
                "v1",
                "{\"apiVersion\":\"a/b/c\"}",
                Some("the object provided is unrecognized (must be of type ConfigMap): unexpected GroupVersion string: a/b/c ({\"apiVersion\":\"a/b/c\"})".into()),
            ),
            // (c) the endpoint's kind in a group version that lacks it.
            (
                CM,
                "v1",
                r#"{"apiVersion":"apps/v1","kind":"ConfigMap"}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#.into()),
            ),
            // (d) an unknown kind; real outputs: `pod in version "v1" cannot be handled as a Pod: no kind "pod" ...`.
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"Widget"}"#,
                Some(r#"Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#.into()),
            ),
            (
                "Pod",
                "v1",
                r#"{"apiVersion":"v1","kind":"pod"}"#,
                Some(r#"pod in version "v1" cannot be handled as a Pod: no kind "pod" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#.into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"apiVersion":"apps/v1","kind":"deployment"}"#,
                Some(r#"deployment in version "v1" cannot be handled as a Deployment: no kind "deployment" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#.into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"apiVersion":"apps/v9","kind":"Deployment"}"#,
                Some(r#"Deployment in version "v9" cannot be handled as a Deployment: no kind "Deployment" is registered for version "apps/v9" in scheme "pkg/api/legacyscheme/scheme.go:30""#.into()),
            ),
            // (e) the kind in another (registered) version of the group: create.go's AcceptsGroupVersion.
            (
                "HorizontalPodAutoscaler",
                "autoscaling/v1",
                r#"{"apiVersion":"autoscaling/v2","kind":"HorizontalPodAutoscaler"}"#,
                Some("the API version in the data (autoscaling/v2) does not match the expected API version (autoscaling/v1)".into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"apiVersion":"apps/v1beta1","kind":"Deployment"}"#,
                Some("the API version in the data (apps/v1beta1) does not match the expected API version (apps/v1)".into()),
            ),
            (
                "Event",
                "v1",
                r#"{"apiVersion":"events.k8s.io/v1","kind":"Event"}"#,
                Some("the API version in the data (events.k8s.io/v1) does not match the expected API version (v1)".into()),
            ),
            // (f) another registered kind: the versioning codec's conversion error
            // (real: `converting (v1.TokenRequest) to (core.ServiceAccount): unknown conversion`).
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"Secret"}"#,
                Some(r#"Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"kind":"Secret"}"#,
                Some(r#"Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"apiVersion":"apps/v1","kind":"Deployment"}"#,
                Some(r#"Deployment in version "v1" cannot be handled as a ConfigMap: converting (v1.Deployment) to (core.ConfigMap): unknown conversion"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"Status"}"#,
                Some(r#"Status in version "v1" cannot be handled as a ConfigMap: converting (v1.Status) to (core.ConfigMap): unknown conversion"#.into()),
            ),
            (
                "ServiceAccount",
                "v1",
                r#"{"apiVersion":"authentication.k8s.io/v1","kind":"TokenRequest"}"#,
                Some(r#"TokenRequest in version "v1" cannot be handled as a ServiceAccount: converting (v1.TokenRequest) to (core.ServiceAccount): unknown conversion"#.into()),
            ),
            // (g) type mismatches: sigs.k8s.io/json errors with kube's errorContext
            // (real: `ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string`).
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"ConfigMap","data":5}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"ConfigMap","data":"key:value"}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal string into Go struct field ConfigMap.data of type map[string]string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"port":5432}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"apiVersion":"v1","kind":"ConfigMap","data":{"config":{"a":1}}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal object into Go struct field ConfigMap.data of type string"#.into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"replicas":"x"}}"#,
                Some(r#"Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"#.into()),
            ),
            (
                "Service",
                "v1",
                r#"{"apiVersion":"v1","kind":"Service","spec":{"ports":[{"port":"80"}]}}"#,
                Some(r#"Service in version "v1" cannot be handled as a Service: json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"metadata":{"name":5}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.name of type string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"metadata":{"labels":{"a":true}}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal bool into Go struct field ObjectMeta.metadata.labels of type string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"metadata":[]}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal array into Go struct field ConfigMap.metadata of type v1.ObjectMeta"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"data":{"a":"b"},"binaryData":{"x":"!!"}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: illegal base64 data at input byte 0"#.into()),
            ),
            (
                "Secret",
                "v1",
                r#"{"kind":"Secret","data":{"x":"YWJj"},"type":5}"#,
                Some(r#"Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal number into Go struct field Secret.type of type v1.SecretType"#.into()),
            ),
            (
                "Pod",
                "v1",
                r#"{"spec":{"containers":[{"name":"a","ports":[{"containerPort":80,"protocol":6}]}]}}"#,
                Some(r#"Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal number into Go struct field ContainerPort.spec.containers.ports.protocol of type v1.Protocol"#.into()),
            ),
            (
                "Pod",
                "v1",
                r#"{"spec":{"containers":[{"name":"a","resources":{"limits":{"cpu":"0.5.5"}}}]}}"#,
                Some(r#"Pod in version "v1" cannot be handled as a Pod: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"#.into()),
            ),
            (
                "Pod",
                "v1",
                r#"{"spec":{"containers":[{"name":"a","resources":{"limits":"1"}}]}}"#,
                Some(r#"Pod in version "v1" cannot be handled as a Pod: json: cannot unmarshal string into Go struct field ResourceRequirements.spec.containers.resources.limits of type v1.ResourceList"#.into()),
            ),
            (
                "Service",
                "v1",
                r#"{"spec":{"ports":[{"port":80,"targetPort":true}]}}"#,
                Some(r#"Service in version "v1" cannot be handled as a Service: json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32"#.into()),
            ),
            (
                "Service",
                "v1",
                r#"{"spec":{"ports":[{"port":80,"targetPort":8080.5}]}}"#,
                Some(r#"Service in version "v1" cannot be handled as a Service: json: cannot unmarshal number 8080.5 into Go struct field ServicePort.spec.ports.targetPort of type int32"#.into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"spec":{"replicas":3000000000}}"#,
                Some(r#"Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"metadata":{"creationTimestamp":5}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string"#.into()),
            ),
            (
                CM,
                "v1",
                r#"{"metadata":{"creationTimestamp":"yesterday"}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006""#.into()),
            ),
            // Texts seen verbatim in real kube output (helm / kubectl / Flux reports).
            (
                "Secret",
                "v1",
                r#"{"apiVersion":"v1","kind":"Secret","data":"a"}"#,
                Some(r#"Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal string into Go struct field Secret.data of type map[string][]uint8"#.into()),
            ),
            (
                "Secret",
                "v1",
                r#"{"apiVersion":"v1","kind":"Secret","data":[]}"#,
                Some(r#"Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal array into Go struct field Secret.data of type map[string][]uint8"#.into()),
            ),
            (
                "Secret",
                "v1",
                r#"{"apiVersion":"v1","kind":"Secret","data":{"enabled":true}}"#,
                Some(r#"Secret in version "v1" cannot be handled as a Secret: json: cannot unmarshal bool into Go struct field Secret.data of type []uint8"#.into()),
            ),
            (
                "Secret",
                "v1",
                r#"{"apiVersion":"v1","kind":"Secret","data":{"password":"admin"}}"#,
                Some(r#"Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 4"#.into()),
            ),
            (
                "Deployment",
                "apps/v1",
                r#"{"apiVersion":"apps/v1","kind":"Deployment","spec":{"template":{"spec":{"containers":[{"name":"a","ports":[{"containerPort":"8080"}]}]}}}}"#,
                Some(r#"Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"#.into()),
            ),
            // A saved type error loses to a later UnmarshalJSON failure (returned errors win).
            (
                CM,
                "v1",
                r#"{"data":5,"metadata":{"creationTimestamp":"x"}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006""#.into()),
            ),
            // The first saved error is reported.
            (
                CM,
                "v1",
                r#"{"data":5,"metadata":{"name":6}}"#,
                Some(r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string"#.into()),
            ),
            // Missing version with a foreign group (gvkWithDefaults leaves it empty).
            (
                CM,
                "v1",
                r#"{"apiVersion":"batch/","kind":"ConfigMap"}"#,
                Some(r#"ConfigMap in version "" cannot be handled as a ConfigMap: Object 'apiVersion' is missing in '{"apiVersion":"batch/","kind":"ConfigMap"}'"#.into()),
            ),
            // Bodies kube decodes.
            (CM, "v1", r#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"a":"b"}}"#, None),
            (CM, "v1", "{}", None),
            (CM, "v1", "null", None),
            (CM, "v1", r#"{"data":null,"metadata":{"creationTimestamp":null}}"#, None),
            (CM, "v1", r#"{"DATA":5,"unknown":[1]}"#, None),
            (CM, "v1", r#"{"apiVersion":"/","kind":"ConfigMap"}"#, None),
            ("Deployment", "apps/v1", r#"{"apiVersion":"apps/","kind":"Deployment","spec":{"replicas":3}}"#, None),
            ("Service", "v1", r#"{"spec":{"ports":[{"port":80,"targetPort":"http"}]}}"#, None),
            ("Secret", "v1", r#"{"data":{"a":"YWJj","b":"YQ==","c":"YW\nJj"}}"#, None),
            (CM, "v1", r#"{"metadata":{"creationTimestamp":"2024-02-29T10:00:00.123+02:00"}}"#, None),
        ];
        for (kind, gv, body, want) in cases {
            assert_eq!(decode(kind, gv, body), want, "{kind} {gv} {body}");
        }
    }

    /// Case-insensitive keys in Interpret (encoding/json) but not in the typed decode (sigs.k8s.io/json).
    #[test]
    fn interpret_key_folding() {
        assert_eq!(
            decode(CM, "v1", r#"{"KIND":"Secret"}"#).as_deref(),
            Some(
                r#"Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): unknown conversion"#
            )
        );
        assert_eq!(
            decode(CM, "v1", r#"{"apiVerſion":"apps/v1"}"#).as_deref(),
            Some(
                r#"ConfigMap in version "v1" cannot be handled as a ConfigMap: no kind "ConfigMap" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#
            )
        );
        // The last value wins; the first type error is still reported.
        assert_eq!(
            decode(CM, "v1", r#"{"kind":"Secret","kind":"ConfigMap"}"#),
            None
        );
        assert!(
            decode(CM, "v1", r#"{"kind":5,"kind":"ConfigMap"}"#)
                .is_some_and(|m| m
                    .contains("cannot unmarshal number into Go struct field .kind of type string"))
        );
    }

    #[test]
    fn overrides_and_quoting() {
        assert_eq!(
            decode_failure_message(CM, "v1", b"{}", Some("apps/v1"), Some("Widget")).as_deref(),
            Some(
                r#"Widget in version "v1" cannot be handled as a ConfigMap: no kind "Widget" is registered for version "apps/v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#
            )
        );
        assert_eq!(
            decode(CM, "v1", r#"{"kind":"a\"b\n"}"#).as_deref(),
            Some(
                r#"a"b
 in version "v1" cannot be handled as a ConfigMap: no kind "a\"b\n" is registered for version "v1" in scheme "pkg/api/legacyscheme/scheme.go:30""#
            )
        );
        assert_eq!(
            decode(CM, "v1", r#"{"apiVersion":"__internal","kind":"Widget"}"#).as_deref(),
            Some(
                r#"Widget in version "__internal" cannot be handled as a ConfigMap: no kind "Widget" is registered for the internal version of group "" in scheme "pkg/api/legacyscheme/scheme.go:30""#
            )
        );
        assert_eq!(
            decode(CM, "v1", r#"{"apiVersion":"__internal"}"#).as_deref(),
            Some("the API version in the data (__internal) does not match the expected API version (v1)")
        );
        assert_eq!(
            decode(
                "APIService",
                "apiregistration.k8s.io/v1",
                r#"{"apiVersion":"v1","kind":"ConfigMap"}"#
            )
            .as_deref(),
            Some(
                r#"ConfigMap in version "v1" cannot be handled as a APIService: no kind "ConfigMap" is registered for version "v1" in scheme "pkg/apiserver/scheme/scheme.go:32""#
            )
        );
    }

    /// time.Parse errors (texts from Go's time/format_test.go parseErrorTests patterns).
    #[test]
    fn time_errors() {
        let cases: &[(&str, bool, Option<&str>)] = &[
            ("2006-01-02T15:04:05Z", false, None),
            ("2006-01-02T15:04:05.999999999-07:00", false, None),
            ("2006-01-02T15:04:05.000000Z", true, None),
            (
                "2006-01-02T15:04:05Z",
                true,
                Some(
                    r#"parsing time "2006-01-02T15:04:05Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000""#,
                ),
            ),
            (
                "2006-13-02T15:04:05Z",
                false,
                Some(r#"parsing time "2006-13-02T15:04:05Z": month out of range"#),
            ),
            (
                "2006-02-30T15:04:05Z",
                false,
                Some(r#"parsing time "2006-02-30T15:04:05Z": day out of range"#),
            ),
            (
                "2006-01-02T25:04:05Z",
                false,
                Some(r#"parsing time "2006-01-02T25:04:05Z": hour out of range"#),
            ),
            (
                "2006-01-02 15:04:05Z",
                false,
                Some(
                    r#"parsing time "2006-01-02 15:04:05Z" as "2006-01-02T15:04:05Z07:00": cannot parse " 15:04:05Z" as "T""#,
                ),
            ),
            (
                "2006-01-02T15:04:05",
                false,
                Some(
                    r#"parsing time "2006-01-02T15:04:05" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "Z07:00""#,
                ),
            ),
            (
                "2006-01-02T15:04:05Zjunk",
                false,
                Some(r#"parsing time "2006-01-02T15:04:05Zjunk": extra text: "junk""#),
            ),
            (
                "",
                false,
                Some(
                    r#"parsing time "" as "2006-01-02T15:04:05Z07:00": cannot parse "" as "2006""#,
                ),
            ),
        ];
        for (value, micro, want) in cases {
            assert_eq!(
                parse_go_time(value, *micro).err().as_deref(),
                *want,
                "{value}"
            );
        }
    }

    /// base64.StdEncoding.Decode CorruptInputError offsets (Go's base64_test.go style).
    #[test]
    fn base64_errors() {
        let cases: &[(&str, Option<usize>)] = &[
            ("", None),
            ("YWJj", None),
            ("YQ==", None),
            ("YWI=", None),
            ("YW\r\nJj", None),
            ("!!", Some(0)),
            ("YQ", Some(0)),
            ("YWJ", Some(0)),
            ("YWJjY", Some(4)),
            ("YQ=", Some(3)),
            ("Y===", Some(1)),
            ("YQ==YQ==", Some(4)),
            ("YWJj!", Some(4)),
            ("YQ=x", Some(2)),
        ];
        for (input, want) in cases {
            assert_eq!(base64_std_error(input.as_bytes()), *want, "{input}");
        }
    }

    #[test]
    fn go_unquoting() {
        assert_eq!(
            go_unquote(br#""a\u00e9\ud83d\ude00\ud800x\/""#),
            "a\u{e9}\u{1F600}\u{FFFD}x/"
        );
        assert_eq!(go_unquote(b"\"\xff\""), "\u{FFFD}");
        assert_eq!(go_lossy(b"a\xe2\x82"), "a\u{FFFD}\u{FFFD}");
    }
}
