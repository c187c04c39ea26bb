//! Label selectors: `k8s.io/apimachinery/pkg/labels/selector.go` (`Parse`, `Lexer`,
//! `Parser`, `NewRequirement`, `Requirement.Matches`). The key/value checks it calls
//! (`validation.go`) live in the parent module.

use serde_json::{Map, Value};

use super::{is_qualified_name, is_valid_label_value, SelectorError};
use crate::go::strconv::quote as go_quote;

/// `selection.Operator` values a requirement can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Exists,
    DoesNotExist,
    Equals,
    DoubleEquals,
    NotEquals,
    In,
    NotIn,
    GreaterThan,
    LessThan,
}

/// One `Requirement`: key, operator and the (sorted, de-duplicated) values.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Requirement {
    key: String,
    op: Op,
    values: Vec<String>,
}

/// A parsed label selector: the AND of its requirements, sorted by key as upstream does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// `labels.Parse`.
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut parser = Parser {
            items: scan(s.as_bytes()),
            position: 0,
        };
        let mut requirements = parser.parse()?;
        requirements.sort_by(|a, b| a.key.cmp(&b.key));
        Ok(Self { requirements })
    }

    /// `internalSelector.Matches`. Labels whose values are not all strings are treated as
    /// absent, like `unstructured.GetLabels` (a failed `NestedStringMap` yields no labels).
    pub fn matches(&self, labels: Option<&Map<String, Value>>) -> bool {
        let labels = labels.filter(|m| m.values().all(Value::is_string));
        let lookup = |key: &str| labels.and_then(|m| m.get(key)).and_then(Value::as_str);
        self.requirements.iter().all(|r| r.matches(lookup(&r.key)))
    }

    /// [`Self::matches`] over a label lookup (a cached object's index): `lookup`
    /// answers `None` for a missing label and for every label when the labels
    /// are not all strings.
    pub fn matches_lookup<'a>(&self, lookup: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| r.matches(lookup(&r.key)))
    }

    /// `internalSelector.Empty`.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

impl Requirement {
    /// `Requirement.Matches`: `!=` and `notin` match objects without the label.
    fn matches(&self, value: Option<&str>) -> bool {
        let has = |v: &str| self.values.iter().any(|x| x == v);
        match self.op {
            Op::In | Op::Equals | Op::DoubleEquals => value.is_some_and(has),
            Op::NotIn | Op::NotEquals => !value.is_some_and(has),
            Op::Exists => value.is_some(),
            Op::DoesNotExist => value.is_none(),
            Op::GreaterThan | Op::LessThan => {
                let int = |v: &str| v.parse::<i64>().ok();
                match (value.and_then(int), self.values.as_slice()) {
                    (Some(have), [want]) => int(want).is_some_and(|want| {
                        (self.op == Op::GreaterThan && have > want)
                            || (self.op == Op::LessThan && have < want)
                    }),
                    _ => false,
                }
            }
        }
    }
}

/// Lexer tokens (`Token`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tok {
    Error,
    EndOfString,
    ClosedPar,
    Comma,
    DoesNotExist,
    DoubleEquals,
    Equals,
    GreaterThan,
    Identifier,
    In,
    LessThan,
    NotEquals,
    NotIn,
    OpenPar,
}

/// `string2token`.
fn string_to_token(s: &[u8]) -> Option<Tok> {
    Some(match s {
        b")" => Tok::ClosedPar,
        b"," => Tok::Comma,
        b"!" => Tok::DoesNotExist,
        b"==" => Tok::DoubleEquals,
        b"=" => Tok::Equals,
        b">" => Tok::GreaterThan,
        b"in" => Tok::In,
        b"<" => Tok::LessThan,
        b"!=" => Tok::NotEquals,
        b"notin" => Tok::NotIn,
        b"(" => Tok::OpenPar,
        _ => return None,
    })
}

fn is_whitespace(ch: u8) -> bool {
    matches!(ch, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_special_symbol(ch: u8) -> bool {
    matches!(ch, b'=' | b'!' | b'(' | b')' | b',' | b'>' | b'<')
}

/// `Lexer`. Works on bytes like Go; splits only at ASCII bytes, so slices stay UTF-8.
/// As upstream, a NUL byte reads as end of input.
struct Lexer<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Lexer<'_> {
    fn read(&mut self) -> u8 {
        match self.s.get(self.pos) {
            Some(&b) => {
                self.pos += 1;
                b
            }
            None => 0,
        }
    }

    fn unread(&mut self) {
        self.pos = self.pos.saturating_sub(1);
    }

    fn text(buf: &[u8]) -> String {
        String::from_utf8_lossy(buf).into_owned()
    }

    /// `scanIDOrKeyword`.
    fn scan_id_or_keyword(&mut self) -> (Tok, String) {
        let start = self.pos;
        let mut end = start;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if is_special_symbol(ch) || is_whitespace(ch) {
                self.unread();
                break;
            }
            end = self.pos;
        }
        let buf = &self.s[start..end];
        let tok = string_to_token(buf).unwrap_or(Tok::Identifier);
        (tok, Self::text(buf))
    }

    /// `scanSpecialSymbol`: the longest operator made of special symbols.
    fn scan_special_symbol(&mut self) -> (Tok, String) {
        let start = self.pos;
        let mut last: Option<(Tok, usize)> = None;
        loop {
            let ch = self.read();
            if ch == 0 {
                break;
            }
            if !is_special_symbol(ch) {
                self.unread();
                break;
            }
            if let Some(tok) = string_to_token(&self.s[start..self.pos]) {
                last = Some((tok, self.pos));
            } else if last.is_some() {
                self.unread();
                break;
            }
        }
        match last {
            Some((tok, end)) => (tok, Self::text(&self.s[start..end])),
            None => (
                Tok::Error,
                format!(
                    "error expected: keyword found '{}'",
                    Self::text(&self.s[start..self.pos])
                ),
            ),
        }
    }

    /// `Lex`.
    fn lex(&mut self) -> (Tok, String) {
        let mut ch = self.read();
        while is_whitespace(ch) {
            ch = self.read();
        }
        if ch == 0 {
            return (Tok::EndOfString, String::new());
        }
        self.unread();
        if is_special_symbol(ch) {
            self.scan_special_symbol()
        } else {
            self.scan_id_or_keyword()
        }
    }
}

/// `Parser.scan`: every token up to and including the end-of-string token.
fn scan(s: &[u8]) -> Vec<(Tok, String)> {
    let mut lexer = Lexer { s, pos: 0 };
    let mut items = Vec::new();
    loop {
        let item = lexer.lex();
        let done = item.0 == Tok::EndOfString;
        items.push(item);
        if done {
            return items;
        }
    }
}

/// `ParserContext`: in `Values`, `in`/`notin` are plain identifiers.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    KeyAndOperator,
    Values,
}

/// `Parser`.
struct Parser {
    items: Vec<(Tok, String)>,
    position: usize,
}

type Inner<T> = Result<T, String>;

impl Parser {
    fn lookahead(&self, ctx: Ctx) -> (Tok, String) {
        let last = self.items.len().saturating_sub(1);
        let (tok, lit) = self
            .items
            .get(self.position.min(last))
            .cloned()
            .unwrap_or((Tok::EndOfString, String::new()));
        match tok {
            Tok::In | Tok::NotIn if ctx == Ctx::Values => (Tok::Identifier, lit),
            _ => (tok, lit),
        }
    }

    fn consume(&mut self, ctx: Ctx) -> (Tok, String) {
        let item = self.lookahead(ctx);
        self.position += 1;
        item
    }

    /// `parse`.
    fn parse(&mut self) -> Result<Vec<Requirement>, SelectorError> {
        let mut requirements = Vec::new();
        loop {
            let (tok, lit) = self.lookahead(Ctx::Values);
            match tok {
                Tok::Identifier | Tok::DoesNotExist => {
                    let r = self
                        .parse_requirement()
                        .map_err(SelectorError::LabelRequirement)?;
                    requirements.push(r);
                    let (t, l) = self.consume(Ctx::Values);
                    match t {
                        Tok::EndOfString => return Ok(requirements),
                        Tok::Comma => {
                            let (t2, l2) = self.lookahead(Ctx::Values);
                            if t2 != Tok::Identifier && t2 != Tok::DoesNotExist {
                                return Err(SelectorError::LabelSyntax(format!(
                                    "found '{l2}', expected: identifier after ','"
                                )));
                            }
                        }
                        _ => {
                            return Err(SelectorError::LabelSyntax(format!(
                                "found '{l}', expected: ',' or 'end of string'"
                            )))
                        }
                    }
                }
                Tok::EndOfString => return Ok(requirements),
                _ => {
                    return Err(SelectorError::LabelSyntax(format!(
                        "found '{lit}', expected: !, identifier, or 'end of string'"
                    )))
                }
            }
        }
    }

    /// `parseRequirement`.
    fn parse_requirement(&mut self) -> Inner<Requirement> {
        let (key, op) = self.parse_key_and_infer_operator()?;
        if let Some(op @ (Op::Exists | Op::DoesNotExist)) = op {
            return new_requirement(key, op, Vec::new());
        }
        let op = self.parse_operator()?;
        let values = match op {
            Op::In | Op::NotIn => self.parse_values()?,
            _ => self.parse_exact_value()?,
        };
        new_requirement(key, op, values)
    }

    /// `parseKeyAndInferOperator`: `None` means "an operator follows".
    fn parse_key_and_infer_operator(&mut self) -> Inner<(String, Option<Op>)> {
        let mut op = None;
        let (mut tok, mut lit) = self.consume(Ctx::Values);
        if tok == Tok::DoesNotExist {
            op = Some(Op::DoesNotExist);
            (tok, lit) = self.consume(Ctx::Values);
        }
        if tok != Tok::Identifier {
            return Err(format!("found '{lit}', expected: identifier"));
        }
        let errs = is_qualified_name(&lit);
        if !errs.is_empty() {
            // `field.Invalid(p.path, k, ...)` with the nil path upstream's handler passes.
            return Err(invalid("<nil>", &lit, &errs));
        }
        let (next, _) = self.lookahead(Ctx::Values);
        if matches!(next, Tok::EndOfString | Tok::Comma) && op.is_none() {
            op = Some(Op::Exists);
        }
        Ok((lit, op))
    }

    /// `parseOperator`.
    fn parse_operator(&mut self) -> Inner<Op> {
        let (tok, lit) = self.consume(Ctx::KeyAndOperator);
        Ok(match tok {
            Tok::In => Op::In,
            Tok::Equals => Op::Equals,
            Tok::DoubleEquals => Op::DoubleEquals,
            Tok::GreaterThan => Op::GreaterThan,
            Tok::LessThan => Op::LessThan,
            Tok::NotIn => Op::NotIn,
            Tok::NotEquals => Op::NotEquals,
            _ => {
                return Err(format!(
                    "found '{lit}', expected: in, notin, =, ==, !=, gt, lt"
                ))
            }
        })
    }

    /// `parseValues`: `(a,b)`; `()` is the single empty value.
    fn parse_values(&mut self) -> Inner<Vec<String>> {
        let (tok, lit) = self.consume(Ctx::Values);
        if tok != Tok::OpenPar {
            return Err(format!("found '{lit}' expected: '('"));
        }
        let (tok, lit) = self.lookahead(Ctx::Values);
        match tok {
            Tok::Identifier | Tok::Comma => {
                let values = self.parse_identifiers_list()?;
                if self.consume(Ctx::Values).0 != Tok::ClosedPar {
                    return Err(format!("found '{lit}', expected: ')'"));
                }
                Ok(values)
            }
            Tok::ClosedPar => {
                self.consume(Ctx::Values);
                Ok(vec![String::new()])
            }
            _ => Err(format!("found '{lit}', expected: ',', ')' or identifier")),
        }
    }

    /// `parseIdentifiersList`: possibly empty, comma separated identifiers.
    fn parse_identifiers_list(&mut self) -> Inner<Vec<String>> {
        let mut set = Vec::new();
        loop {
            let (tok, lit) = self.consume(Ctx::Values);
            match tok {
                Tok::Identifier => {
                    set.push(lit);
                    let (tok2, lit2) = self.lookahead(Ctx::Values);
                    match tok2 {
                        Tok::Comma => continue,
                        Tok::ClosedPar => return Ok(sorted_set(set)),
                        _ => return Err(format!("found '{lit2}', expected: ',' or ')'")),
                    }
                }
                Tok::Comma => {
                    if set.is_empty() {
                        set.push(String::new());
                    }
                    let (tok2, _) = self.lookahead(Ctx::Values);
                    if tok2 == Tok::ClosedPar {
                        set.push(String::new());
                        return Ok(sorted_set(set));
                    }
                    if tok2 == Tok::Comma {
                        set.push(String::new());
                    }
                }
                _ => return Err(format!("found '{lit}', expected: ',', or identifier")),
            }
        }
    }

    /// `parseExactValue`: a missing value is the empty string.
    fn parse_exact_value(&mut self) -> Inner<Vec<String>> {
        let (tok, _) = self.lookahead(Ctx::Values);
        if matches!(tok, Tok::EndOfString | Tok::Comma) {
            return Ok(vec![String::new()]);
        }
        let (tok, lit) = self.consume(Ctx::Values);
        if tok == Tok::Identifier {
            return Ok(vec![lit]);
        }
        Err(format!("found '{lit}', expected: identifier"))
    }
}

/// `sets.String.List()`: sorted and de-duplicated.
fn sorted_set(mut values: Vec<String>) -> Vec<String> {
    values.sort();
    values.dedup();
    values
}

/// `field.Invalid(path, value, strings.Join(errs, "; ")).Error()`.
fn invalid(path: &str, value: &str, errs: &[String]) -> String {
    format!(
        "{path}: Invalid value: {}: {}",
        go_quote(value),
        errs.join("; ")
    )
}

/// `NewRequirement` as reached from the parser: the key is already valid and the value
/// counts already fit the operator, leaving the integer and label-value checks. Errors
/// are aggregated like `ErrorList.ToAggregate().Error()`.
fn new_requirement(key: String, op: Op, values: Vec<String>) -> Inner<Requirement> {
    let mut errs: Vec<String> = Vec::new();
    if matches!(op, Op::GreaterThan | Op::LessThan) {
        for (i, v) in values.iter().enumerate() {
            if v.parse::<i64>().is_err() {
                errs.push(invalid(
                    &format!("values[{i}]"),
                    v,
                    &["for 'Gt', 'Lt' operators, the value must be an integer".to_string()],
                ));
            }
        }
    }
    for (i, v) in values.iter().enumerate() {
        let msgs = is_valid_label_value(v);
        if !msgs.is_empty() {
            errs.push(invalid(&format!("values[{i}][{key}]"), v, &msgs));
        }
    }
    errs.dedup();
    match errs.len() {
        0 => Ok(Requirement { key, op, values }),
        1 => Err(errs.remove(0)),
        _ => Err(format!("[{}]", errs.join(", "))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> LabelSelector {
        LabelSelector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    fn err(s: &str) -> String {
        LabelSelector::parse(s).map_or_else(|e| e.to_string(), |sel| panic!("{s:?}: {sel:?}"))
    }

    /// `selector | matches {a:1,b:x,c:"",n:7} | matches an object without labels`
    const MATCHING: &str = "
        |true|true
        a=1|true|false
        a==1|true|false
        a!=1|false|true
        a!=2|true|true
        z!=1|true|true
        a in (1,2)|true|false
        a in (2)|false|false
        a notin (1)|false|true
        z notin (1)|true|true
        a|true|false
        !a|false|true
        !z|true|true
        c=|true|false
        c in ()|true|false
        c in (,x)|true|false
        b in (in, notin, x)|true|false
        a=in|false|false
        n>6|true|false
        n>7|false|false
        n<8|true|false
        b>1|false|false
        a=1,b=x|true|false
        a=1,b=y|false|false
        a=1,!z,b in (x),c|true|false";

    #[test]
    fn operators_and_matching() {
        let l = json!({"a": "1", "b": "x", "c": "", "n": "7"});
        for line in MATCHING.lines().skip(1) {
            let f: Vec<&str> = line.trim_start().split('|').collect();
            let sel = parse(f[0]);
            assert_eq!(sel.matches(l.as_object()).to_string(), f[1], "{line}");
            assert_eq!(sel.matches(None).to_string(), f[2], "{line}");
        }
        assert!(parse("").is_empty() && parse(" \t\r\n").is_empty() && !parse("a").is_empty());
        // Non-string label values: the whole set reads as absent (unstructured.GetLabels).
        assert!(!parse("a").matches(json!({"a": "1", "b": 2}).as_object()));
        // A NUL byte ends the input, as `Lexer.read` returns 0 for it.
        assert!(parse("\0a b").is_empty());
    }

    #[test]
    fn whitespace_and_value_sets() {
        let same = [
            ("a=b", "  a  =  b  "),
            ("a in (x,y)", "a\tin\n( y , x , y )"),
            ("a notin (x)", "a notin(x)"),
            ("a,!b", "a , ! b"),
            ("a in (,)", "a in ()"),
            ("a in (x,,y)", "a in (,x,y)"),
            ("b,a", "a,b"),
        ];
        for (x, y) in same {
            assert_eq!(parse(x), parse(y), "{x:?} vs {y:?}");
        }
        assert_eq!(parse("a in (,x)").requirements[0].values, ["", "x"]);
    }

    /// `selector | upstream message` (`{OPS}` stands for the binary operator list).
    const SYNTAX: &str = "
        ,|found ',', expected: !, identifier, or 'end of string'
        =a|found '=', expected: !, identifier, or 'end of string'
        !=a|found '!=', expected: !, identifier, or 'end of string'
        a,|found '', expected: identifier after ','
        a,=|found '=', expected: identifier after ','
        a=b c|found 'c', expected: ',' or 'end of string'
        a=b=c|found '=', expected: ',' or 'end of string'
        !a b|found 'b', expected: ',' or 'end of string'
        a b|unable to parse requirement: found 'b', expected: {OPS}
        a (|unable to parse requirement: found '(', expected: {OPS}
        !|unable to parse requirement: found '', expected: identifier
        !!a|unable to parse requirement: found '!', expected: identifier
        a in|unable to parse requirement: found '' expected: '('
        a in b|unable to parse requirement: found 'b' expected: '('
        a in (=)|unable to parse requirement: found '=', expected: ',', ')' or identifier
        a in (b c)|unable to parse requirement: found 'c', expected: ',' or ')'
        a in (b|unable to parse requirement: found '', expected: ',' or ')'
        a in (b,=)|unable to parse requirement: found '=', expected: ',', or identifier
        a=(|unable to parse requirement: found '(', expected: identifier
        a>=1|unable to parse requirement: found '=', expected: identifier";

    #[test]
    fn syntax_errors() {
        for line in SYNTAX.lines().skip(1) {
            let (s, want) = line.trim_start().split_once('|').unwrap_or_default();
            let want = want.replace("{OPS}", "in, notin, =, ==, !=, gt, lt");
            assert_eq!(err(s), want, "{s:?}");
        }
    }

    /// `selector | message after "unable to parse requirement: "`; `{KEY}`, `{VAL}`, `{DNS}`
    /// stand for the regex messages below, `{LONG}` for 64 `k`s.
    const VALIDATION: &str = r#"
        -a=b|<nil>: Invalid value: "-a": name part {KEY}
        a/=b|<nil>: Invalid value: "a/": name part must be non-empty; name part {KEY}
        /a|<nil>: Invalid value: "/a": prefix part must be non-empty
        Ex.com/a|<nil>: Invalid value: "Ex.com/a": prefix part {DNS}
        {LONG}|<nil>: Invalid value: "{LONG}": name part must be no more than 63 characters
        a/b/c|<nil>: Invalid value: "a/b/c": a qualified name {KEY} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')
        !a"b|<nil>: Invalid value: "a\"b": name part {KEY}
        a=-b|values[0][a]: Invalid value: "-b": {VAL}
        a={LONG}|values[0][a]: Invalid value: "{LONG}": must be no more than 63 characters
        a in (z,-b)|values[0][a]: Invalid value: "-b": {VAL}
        a in (-y,-x)|[values[0][a]: Invalid value: "-x": {VAL}, values[1][a]: Invalid value: "-y": {VAL}]
        a>x|values[0]: Invalid value: "x": for 'Gt', 'Lt' operators, the value must be an integer
        a<|values[0]: Invalid value: "": for 'Gt', 'Lt' operators, the value must be an integer
        a>-1|values[0][a]: Invalid value: "-1": {VAL}
        a>_|[values[0]: Invalid value: "_": for 'Gt', 'Lt' operators, the value must be an integer, values[0][a]: Invalid value: "_": {VAL}]"#;

    #[test]
    fn key_and_value_validation_errors() {
        let key = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
        let val = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
        let dns = r"a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        let long = "k".repeat(64);
        for line in VALIDATION.lines().skip(1) {
            let (s, want) = line.trim_start().split_once('|').unwrap_or_default();
            let s = s.replace("{LONG}", &long);
            let want = want.replace("{KEY}", key).replace("{VAL}", val);
            let want = want.replace("{DNS}", dns).replace("{LONG}", &long);
            assert_eq!(
                err(&s),
                format!("unable to parse requirement: {want}"),
                "{s:?}"
            );
        }
        assert!(LabelSelector::parse("example.com/My_Name-1.x in (a.b, A_9)").is_ok());
    }
}
