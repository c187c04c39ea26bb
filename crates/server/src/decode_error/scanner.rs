//! Go's `encoding/json/scanner.go`: the syntax check `json.Unmarshal` runs
//! before decoding anything, and the `SyntaxError` texts it produces.

use crate::go::strconv::quote_rune;

/// `maxNestingDepth` of `encoding/json` (and of `sigs.k8s.io/json`).
pub(super) const MAX_NESTING_DEPTH: usize = 10000;

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

pub(super) fn is_space(c: u8) -> bool {
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
