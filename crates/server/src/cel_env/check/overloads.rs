//! The declared signatures of every function kube's CEL environment has
//! (`apiserver/pkg/cel/environment/base.go`): cel-go's standard library
//! (`checker/standard.go`, `common/stdlib`), its strings extension
//! (`ext/strings.go`), optional types and sets (`ext/sets.go`), and kube's
//! libraries (`apiserver/pkg/cel/library`: lists, regex, quantity, ip,
//! cidr, url, format, semver, authz). The `url`, `format` and `semver`
//! libraries are declared here while their implementations land apart
//! (evaluation fails with cel-rust's "no such overload" until they do).
//!
//! Written as one table of text signatures, parsed once:
//! `name(arg, …) -> result` for a global function, `recv.name(…) -> result`
//! written `[recv] name(…) -> result` for a member. Single capital letters
//! are type parameters.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::types::Type;

/// One overload.
#[derive(Debug, Clone)]
pub struct Overload {
    pub receiver: Option<Type>,
    pub args: Vec<Type>,
    pub result: Type,
}

const SIGNATURES: &str = r#"
!_(bool) -> bool
_&&_(bool, bool) -> bool
_||_(bool, bool) -> bool
-_(int) -> int
-_(double) -> double
@not_strictly_false(bool) -> bool
_?_:_(bool, A, A) -> A
_==_(A, A) -> bool
_!=_(A, A) -> bool
_+_(int, int) -> int
_+_(uint, uint) -> uint
_+_(double, double) -> double
_+_(string, string) -> string
_+_(bytes, bytes) -> bytes
_+_(list(A), list(A)) -> list(A)
_+_(timestamp, duration) -> timestamp
_+_(duration, timestamp) -> timestamp
_+_(duration, duration) -> duration
_-_(int, int) -> int
_-_(uint, uint) -> uint
_-_(double, double) -> double
_-_(timestamp, timestamp) -> duration
_-_(timestamp, duration) -> timestamp
_-_(duration, duration) -> duration
_*_(int, int) -> int
_*_(uint, uint) -> uint
_*_(double, double) -> double
_/_(int, int) -> int
_/_(uint, uint) -> uint
_/_(double, double) -> double
_%_(int, int) -> int
_%_(uint, uint) -> uint
_[_](list(A), int) -> A
_[_](map(K, V), K) -> V
_[?_](list(A), int) -> optional_type(A)
_[?_](map(K, V), K) -> optional_type(V)
_[?_](optional_type(list(A)), int) -> optional_type(A)
_[?_](optional_type(map(K, V)), K) -> optional_type(V)
@in(A, list(A)) -> bool
@in(K, map(K, V)) -> bool
size(string) -> int
size(bytes) -> int
size(list(A)) -> int
size(map(K, V)) -> int
[string] size() -> int
[bytes] size() -> int
[list(A)] size() -> int
[map(K, V)] size() -> int
[string] contains(string) -> bool
[string] startsWith(string) -> bool
[string] endsWith(string) -> bool
matches(string, string) -> bool
[string] matches(string) -> bool
int(int) -> int
int(uint) -> int
int(double) -> int
int(string) -> int
int(timestamp) -> int
int(duration) -> int
uint(int) -> uint
uint(uint) -> uint
uint(double) -> uint
uint(string) -> uint
double(int) -> double
double(uint) -> double
double(double) -> double
double(string) -> double
string(int) -> string
string(uint) -> string
string(double) -> string
string(bool) -> string
string(string) -> string
string(bytes) -> string
string(timestamp) -> string
string(duration) -> string
string(net.IP) -> string
string(net.CIDR) -> string
bytes(string) -> bytes
bytes(bytes) -> bytes
bool(bool) -> bool
bool(string) -> bool
duration(string) -> duration
duration(duration) -> duration
timestamp(string) -> timestamp
timestamp(timestamp) -> timestamp
timestamp(int) -> timestamp
dyn(A) -> dyn
type(A) -> type(A)
[timestamp] getFullYear() -> int
[timestamp] getFullYear(string) -> int
[timestamp] getMonth() -> int
[timestamp] getMonth(string) -> int
[timestamp] getDayOfYear() -> int
[timestamp] getDayOfYear(string) -> int
[timestamp] getDayOfMonth() -> int
[timestamp] getDayOfMonth(string) -> int
[timestamp] getDate() -> int
[timestamp] getDate(string) -> int
[timestamp] getDayOfWeek() -> int
[timestamp] getDayOfWeek(string) -> int
[timestamp] getHours() -> int
[timestamp] getHours(string) -> int
[timestamp] getMinutes() -> int
[timestamp] getMinutes(string) -> int
[timestamp] getSeconds() -> int
[timestamp] getSeconds(string) -> int
[timestamp] getMilliseconds() -> int
[timestamp] getMilliseconds(string) -> int
[duration] getHours() -> int
[duration] getMinutes() -> int
[duration] getSeconds() -> int
[duration] getMilliseconds() -> int
[string] charAt(int) -> string
[string] indexOf(string) -> int
[string] indexOf(string, int) -> int
[string] lastIndexOf(string) -> int
[string] lastIndexOf(string, int) -> int
[string] lowerAscii() -> string
[string] upperAscii() -> string
[string] replace(string, string) -> string
[string] replace(string, string, int) -> string
[string] split(string) -> list(string)
[string] split(string, int) -> list(string)
[string] substring(int) -> string
[string] substring(int, int) -> string
[string] trim() -> string
[string] reverse() -> string
[string] format(list(dyn)) -> string
[list(string)] join() -> string
[list(string)] join(string) -> string
strings.quote(string) -> string
[list(A)] isSorted() -> bool
[list(A)] sum() -> A
[list(A)] min() -> A
[list(A)] max() -> A
[list(A)] indexOf(A) -> int
[list(A)] lastIndexOf(A) -> int
[string] find(string) -> string
[string] findAll(string) -> list(string)
[string] findAll(string, int) -> list(string)
sets.contains(list(A), list(A)) -> bool
sets.equivalent(list(A), list(A)) -> bool
sets.intersects(list(A), list(A)) -> bool
optional.of(A) -> optional_type(A)
optional.ofNonZeroValue(A) -> optional_type(A)
optional.none() -> optional_type(A)
[optional_type(A)] hasValue() -> bool
[optional_type(A)] value() -> A
[optional_type(A)] or(optional_type(A)) -> optional_type(A)
[optional_type(A)] orValue(A) -> A
quantity(string) -> kubernetes.Quantity
isQuantity(string) -> bool
[kubernetes.Quantity] isInteger() -> bool
[kubernetes.Quantity] asInteger() -> int
[kubernetes.Quantity] asApproximateFloat() -> double
[kubernetes.Quantity] sign() -> int
[kubernetes.Quantity] add(kubernetes.Quantity) -> kubernetes.Quantity
[kubernetes.Quantity] add(int) -> kubernetes.Quantity
[kubernetes.Quantity] sub(kubernetes.Quantity) -> kubernetes.Quantity
[kubernetes.Quantity] sub(int) -> kubernetes.Quantity
[kubernetes.Quantity] isLessThan(kubernetes.Quantity) -> bool
[kubernetes.Quantity] isGreaterThan(kubernetes.Quantity) -> bool
[kubernetes.Quantity] compareTo(kubernetes.Quantity) -> int
ip(string) -> net.IP
isIP(string) -> bool
ip.isCanonical(string) -> bool
[net.IP] family() -> int
[net.IP] isUnspecified() -> bool
[net.IP] isLoopback() -> bool
[net.IP] isLinkLocalMulticast() -> bool
[net.IP] isLinkLocalUnicast() -> bool
[net.IP] isGlobalUnicast() -> bool
cidr(string) -> net.CIDR
isCIDR(string) -> bool
[net.CIDR] containsIP(string) -> bool
[net.CIDR] containsIP(net.IP) -> bool
[net.CIDR] containsCIDR(string) -> bool
[net.CIDR] containsCIDR(net.CIDR) -> bool
[net.CIDR] ip() -> net.IP
[net.CIDR] masked() -> net.CIDR
[net.CIDR] prefixLength() -> int
url(string) -> kubernetes.URL
isURL(string) -> bool
[kubernetes.URL] getScheme() -> string
[kubernetes.URL] getHost() -> string
[kubernetes.URL] getHostname() -> string
[kubernetes.URL] getPort() -> string
[kubernetes.URL] getEscapedPath() -> string
[kubernetes.URL] getQuery() -> map(string, list(string))
format.named(string) -> optional_type(kubernetes.NamedFormat)
format.dns1123Label() -> kubernetes.NamedFormat
format.dns1123Subdomain() -> kubernetes.NamedFormat
format.dns1035Label() -> kubernetes.NamedFormat
format.qualifiedName() -> kubernetes.NamedFormat
format.dns1123LabelPrefix() -> kubernetes.NamedFormat
format.dns1123SubdomainPrefix() -> kubernetes.NamedFormat
format.dns1035LabelPrefix() -> kubernetes.NamedFormat
format.labelValue() -> kubernetes.NamedFormat
format.uri() -> kubernetes.NamedFormat
format.uuid() -> kubernetes.NamedFormat
format.byte() -> kubernetes.NamedFormat
format.date() -> kubernetes.NamedFormat
format.datetime() -> kubernetes.NamedFormat
[kubernetes.NamedFormat] validate(string) -> optional_type(list(string))
semver(string) -> kubernetes.Semver
semver(string, bool) -> kubernetes.Semver
isSemver(string) -> bool
isSemver(string, bool) -> bool
[kubernetes.Semver] major() -> int
[kubernetes.Semver] minor() -> int
[kubernetes.Semver] patch() -> int
[kubernetes.Semver] isLessThan(kubernetes.Semver) -> bool
[kubernetes.Semver] isGreaterThan(kubernetes.Semver) -> bool
[kubernetes.Semver] compareTo(kubernetes.Semver) -> int
[kubernetes.authorization.Authorizer] group(string) -> kubernetes.authorization.GroupCheck
[kubernetes.authorization.Authorizer] serviceAccount(string, string) -> kubernetes.authorization.Authorizer
[kubernetes.authorization.Authorizer] path(string) -> kubernetes.authorization.PathCheck
[kubernetes.authorization.GroupCheck] resource(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] subresource(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] namespace(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] name(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] fieldSelector(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] labelSelector(string) -> kubernetes.authorization.ResourceCheck
[kubernetes.authorization.ResourceCheck] check(string) -> kubernetes.authorization.Decision
[kubernetes.authorization.PathCheck] check(string) -> kubernetes.authorization.Decision
[kubernetes.authorization.Decision] allowed() -> bool
[kubernetes.authorization.Decision] reason() -> string
[kubernetes.authorization.Decision] errored() -> bool
[kubernetes.authorization.Decision] error() -> string
"#;

/// Functions the checker cannot judge and passes as `dyn`: macros cel-rust
/// does not expand and `two_var.rs` does not check (a two-variable
/// comprehension whose variables are not plain identifiers, `exists_one`
/// with two variables) and cel-go list extensions some clusters enable.
pub const UNCHECKED: &[&str] = &[
    "all",
    "exists",
    "exists_one",
    "existsOne",
    "map",
    "filter",
    "transformList",
    "transformMap",
    "transformMapEntry",
    "sortBy",
    "slice",
    "flatten",
    "distinct",
    "sort",
    "first",
    "last",
    "lists.range",
    "cel.bind",
    "cel.block",
    "cel.index",
];

/// Namespaces of cel-go extensions whose functions pass unchecked
/// (`math.greatest`, `base64.encode`, …).
const UNCHECKED_NAMESPACES: &[&str] = &["math.", "base64.", "lists.", "cel."];

/// Whether function `name` is passed as `dyn`, its arguments unchecked.
pub fn is_unchecked(name: &str) -> bool {
    UNCHECKED.contains(&name) || UNCHECKED_NAMESPACES.iter().any(|ns| name.starts_with(ns))
}

/// `_<_`, `_<=_`, `_>_`, `_>=_`: each ordered type with itself, and the
/// numeric types with each other (kube enables cross-type numeric
/// comparisons).
fn comparisons() -> Vec<String> {
    let same = [
        "bool",
        "int",
        "uint",
        "double",
        "string",
        "bytes",
        "timestamp",
        "duration",
    ];
    let numeric = ["int", "uint", "double"];
    let mut lines = Vec::new();
    for operator in ["_<_", "_<=_", "_>_", "_>=_"] {
        for t in same {
            lines.push(format!("{operator}({t}, {t}) -> bool"));
        }
        for a in numeric {
            for b in numeric.iter().filter(|b| **b != a) {
                lines.push(format!("{operator}({a}, {b}) -> bool"));
            }
        }
    }
    lines
}

/// The overloads of every declared function, by name.
pub fn table() -> &'static HashMap<String, Vec<Overload>> {
    static TABLE: OnceLock<HashMap<String, Vec<Overload>>> = OnceLock::new();
    TABLE.get_or_init(|| {
        let mut table: HashMap<String, Vec<Overload>> = HashMap::new();
        for line in SIGNATURES
            .lines()
            .map(str::to_string)
            .chain(comparisons())
            .filter(|l| !l.trim().is_empty())
        {
            let line = line.trim();
            match parse_signature(line) {
                Some((name, overload)) => table.entry(name).or_default().push(overload),
                None => debug_assert!(false, "bad signature {line}"),
            }
        }
        table
    })
}

fn parse_signature(line: &str) -> Option<(String, Overload)> {
    let (receiver, rest) = match line.strip_prefix('[') {
        Some(after) => {
            let end = after.find("] ")?;
            (Some(parse_type(&after[..end])?), &after[end + 2..])
        }
        None => (None, line),
    };
    let (head, result) = rest.split_once(" -> ")?;
    // The name ends at the first '(' that opens the argument list: names
    // such as `_[_]` hold brackets but no parenthesis.
    let open = head.find('(')?;
    let name = &head[..open];
    let args_text = head[open + 1..].strip_suffix(')')?;
    let args = split_top(args_text)
        .into_iter()
        .filter(|a| !a.is_empty())
        .map(parse_type)
        .collect::<Option<Vec<_>>>()?;
    Some((
        name.to_string(),
        Overload {
            receiver,
            args,
            result: parse_type(result)?,
        },
    ))
}

/// Splits at the commas outside parentheses.
fn split_top(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, c) in text.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(text[start..index].trim());
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(text[start..].trim());
    parts
}

/// The opaque type names the table uses.
const OPAQUE: &[&str] = &[
    "kubernetes.Quantity",
    "net.IP",
    "net.CIDR",
    "kubernetes.URL",
    "kubernetes.NamedFormat",
    "kubernetes.Semver",
    "kubernetes.authorization.Authorizer",
    "kubernetes.authorization.GroupCheck",
    "kubernetes.authorization.ResourceCheck",
    "kubernetes.authorization.PathCheck",
    "kubernetes.authorization.Decision",
];

/// A type written in the table.
pub fn parse_type(text: &str) -> Option<Type> {
    let text = text.trim();
    if let Some(open) = text.find('(') {
        let inner = split_top(text[open + 1..].strip_suffix(')')?);
        let mut parameters = inner.into_iter().map(parse_type);
        return match &text[..open] {
            "list" => Some(Type::list(parameters.next()??)),
            "map" => Some(Type::map(parameters.next()??, parameters.next()??)),
            "optional_type" => Some(Type::optional(parameters.next()??)),
            "type" => Some(Type::TypeOf(Box::new(parameters.next()??))),
            _ => None,
        };
    }
    Some(match text {
        "dyn" => Type::Dyn,
        "null" => Type::Null,
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "duration" => Type::Duration,
        "timestamp" => Type::Timestamp,
        param if param.len() == 1 && param.chars().all(|c| c.is_ascii_uppercase()) => {
            Type::Param(Arc::from(param))
        }
        opaque => Type::Opaque(OPAQUE.iter().find(|name| **name == opaque)?, Vec::new()),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_signature_parses() {
        let lines = super::SIGNATURES
            .lines()
            .filter(|l| !l.trim().is_empty())
            .count()
            + super::comparisons().len();
        let parsed: usize = super::table().values().map(Vec::len).sum();
        assert_eq!(parsed, lines);
    }
}
