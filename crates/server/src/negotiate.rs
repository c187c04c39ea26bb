//! Content negotiation: which representation an `Accept` header asks for.
//! Follows `apiserver/pkg/endpoints/handlers/negotiation/negotiate.go`
//! (clauses in order of q, first clause any offer satisfies wins; `as`, `g`,
//! `v` select Table and aggregated discovery; nothing fits → 406).

use crate::status::Status;

/// One representation the server can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    Json,
    /// `meta.k8s.io` Table in `v1` or `v1beta1`.
    Table(&'static str),
    /// `apidiscovery.k8s.io` APIGroupDiscoveryList in `v2` or `v2beta1`.
    AggregatedDiscovery(&'static str),
}

impl Representation {
    pub fn content_type(self) -> String {
        match self {
            Representation::Json => "application/json".to_string(),
            Representation::Table(version) => {
                format!("application/json;as=Table;v={version};g=meta.k8s.io")
            }
            Representation::AggregatedDiscovery(version) => {
                format!(
                    "application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
                )
            }
        }
    }
}

/// The media types named in a 406 (`runtime.SerializerInfo` list of the JSON serializer set).
pub const ACCEPTED_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

#[derive(Debug, Clone, PartialEq)]
struct Clause {
    kind: String,
    subtype: String,
    params: Vec<(String, String)>,
    quality: f32,
}

impl Clause {
    fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(key, _)| key == name)
            .map(|(_, value)| value.as_str())
    }
}

fn parse_accept(header: &str) -> Vec<Clause> {
    let mut clauses: Vec<Clause> = header
        .split(',')
        .filter_map(|raw| {
            let mut pieces = raw.split(';').map(str::trim);
            let media = pieces.next()?.to_ascii_lowercase();
            if media.is_empty() {
                return None;
            }
            let (kind, subtype) = media.split_once('/').unwrap_or((media.as_str(), "*"));
            let mut params = Vec::new();
            let mut quality = 1.0;
            for piece in pieces {
                let Some((key, value)) = piece.split_once('=') else {
                    continue;
                };
                let key = key.trim().to_ascii_lowercase();
                let value = value.trim().trim_matches('"').to_string();
                if key == "q" {
                    quality = value.parse().unwrap_or(0.0);
                } else {
                    params.push((key, value));
                }
            }
            Some(Clause {
                kind: kind.to_string(),
                subtype: subtype.to_string(),
                params,
                quality,
            })
        })
        .filter(|clause| clause.quality > 0.0)
        .collect();
    // Stable: equal q keeps header order.
    clauses.sort_by(|a, b| {
        b.quality
            .partial_cmp(&a.quality)
            .unwrap_or(std::cmp::Ordering::Equal)
    });
    clauses
}

fn json_type(clause: &Clause) -> bool {
    matches!(clause.kind.as_str(), "application" | "*")
        && matches!(clause.subtype.as_str(), "json" | "*")
}

fn satisfies(clause: &Clause, offer: Representation) -> bool {
    let target = (clause.param("as"), clause.param("g"), clause.param("v"));
    match offer {
        Representation::Json => json_type(clause) && target == (None, None, None),
        Representation::Table(version) => {
            json_type(clause)
                && clause.subtype == "json"
                && target == (Some("Table"), Some("meta.k8s.io"), Some(version))
        }
        Representation::AggregatedDiscovery(version) => {
            json_type(clause)
                && clause.subtype == "json"
                && clause.param("g") == Some("apidiscovery.k8s.io")
                && clause.param("v") == Some(version)
                && matches!(clause.param("as"), None | Some("APIGroupDiscoveryList"))
        }
    }
}

/// Choose among `offers` (in server preference order) for an `Accept` header.
pub fn negotiate(
    accept: Option<&str>,
    offers: &[Representation],
) -> Result<Representation, Status> {
    let header = accept.map(str::trim).unwrap_or("");
    if header.is_empty() {
        return Ok(offers.first().copied().unwrap_or(Representation::Json));
    }
    for clause in parse_accept(header) {
        if let Some(offer) = offers.iter().find(|offer| satisfies(&clause, **offer)) {
            return Ok(*offer);
        }
    }
    Err(Status::not_acceptable(ACCEPTED_MEDIA_TYPES))
}

#[cfg(test)]
mod tests {
    use super::*;
    use Representation::*;

    const OBJECT: &[Representation] = &[Json, Table("v1"), Table("v1beta1")];
    const DISCOVERY: &[Representation] = &[
        Json,
        AggregatedDiscovery("v2"),
        AggregatedDiscovery("v2beta1"),
    ];

    #[test]
    fn negotiates_like_kube() {
        let cases: Vec<(&str, &[Representation], Option<Representation>)> = vec![
            ("", OBJECT, Some(Json)),
            ("application/json", OBJECT, Some(Json)),
            ("*/*", OBJECT, Some(Json)),
            ("application/*", OBJECT, Some(Json)),
            ("application/json, */*", OBJECT, Some(Json)),
            ("application/vnd.kubernetes.protobuf, */*", OBJECT, Some(Json)),
            ("application/vnd.kubernetes.protobuf,application/json", OBJECT, Some(Json)),
            ("application/vnd.kubernetes.protobuf", OBJECT, None),
            ("text/html", OBJECT, None),
            (
                "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json",
                OBJECT,
                Some(Table("v1")),
            ),
            ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", OBJECT, Some(Table("v1beta1"))),
            ("application/json;as=Table;v=v1;g=meta.k8s.io;q=0.5, application/json", OBJECT, Some(Json)),
            ("application/json;as=Unknown;v=v1;g=meta.k8s.io", OBJECT, None),
            (
                "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
                DISCOVERY,
                Some(AggregatedDiscovery("v2")),
            ),
            (
                "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json",
                DISCOVERY,
                Some(AggregatedDiscovery("v2beta1")),
            ),
            ("application/json;q=0, */*;q=0.1", OBJECT, Some(Json)),
        ];
        for (accept, offers, expected) in cases {
            assert_eq!(negotiate(Some(accept), offers).ok(), expected, "{accept}");
        }
        let refused = negotiate(Some("application/xml"), OBJECT).expect_err("406");
        assert_eq!((refused.code, refused.reason), (406, "NotAcceptable"));
    }
}
