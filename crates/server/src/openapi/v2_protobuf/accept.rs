//! Content negotiation (kube-openapi pkg/handler + munnerz/goautoneg).

use super::V2Format;

/// One `Accept` clause as goautoneg parses it (parameters other than `q`
/// play no part in kube-openapi's matching).
#[derive(Debug, Clone, PartialEq)]
struct Clause<'a> {
    kind: &'a str,
    subtype: &'a str,
    q: f32,
}

/// `goautoneg.ParseAccept`: split on `,` and `;`, trim spaces only, `*`
/// alone means `*/*`, anything else without exactly one `/` is dropped; an
/// unparsable `q` is 0 (and, as in goautoneg, a 0 clause is kept).
fn parse_accept(header: &str) -> Vec<Clause<'_>> {
    let mut clauses = Vec::new();
    for part in header.split(',') {
        let part = part.trim_matches(' ');
        let mut pieces = part.split(';');
        let media = pieces.next().unwrap_or("");
        let halves: Vec<&str> = media.split('/').collect();
        let kind = halves[0].trim_matches(' ');
        let subtype = match halves.len() {
            1 if kind == "*" => "*",
            2 => halves[1].trim_matches(' '),
            _ => continue,
        };
        let mut q = 1.0f32;
        for param in pieces {
            let Some((token, value)) = param.split_once('=') else {
                continue;
            };
            if token.trim_matches(' ') == "q" {
                q = value.parse::<f32>().unwrap_or(0.0);
            }
        }
        clauses.push(Clause { kind, subtype, q });
    }
    // `sort.Sort` is an insertion sort for the short lists Accept headers
    // are (<= 12 elements); reproduce it, with goautoneg's (non-strict) Less.
    let less = |a: &Clause<'_>, b: &Clause<'_>| {
        a.q > b.q || (a.kind != "*" && b.kind == "*") || (a.subtype != "*" && b.subtype == "*")
    };
    for i in 1..clauses.len() {
        let mut j = i;
        while j > 0 && less(&clauses[j], &clauses[j - 1]) {
            clauses.swap(j, j - 1);
            j -= 1;
        }
    }
    clauses
}

/// The representation kube-openapi would serve for this `Accept` header
/// (first header line; absent or empty means `*/*`), `None` for a 406.
/// Offers in kube's order: JSON, the deprecated protobuf spelling, protobuf.
pub fn negotiate(accept: Option<&str>) -> Option<V2Format> {
    const OFFERS: [(&str, V2Format); 3] = [
        ("json", V2Format::Json),
        (
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
            V2Format::Protobuf,
        ),
        (
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
            V2Format::Protobuf,
        ),
    ];
    let header = match accept {
        Some(header) if !header.is_empty() => header,
        _ => "*/*",
    };
    for clause in parse_accept(header) {
        for (subtype, format) in OFFERS {
            if clause.kind != "application" && clause.kind != "*" {
                continue;
            }
            if clause.subtype != subtype && clause.subtype != "*" {
                continue;
            }
            return Some(format);
        }
    }
    None
}
