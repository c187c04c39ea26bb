//! Content negotiation: which representation an `Accept` header asks for.
//! Follows `apiserver/pkg/endpoints/handlers/negotiation/negotiate.go`
//! (clauses in order of q, then specificity; the first clause any offer
//! satisfies wins; `as`, `g`, `v` select Table, PartialObjectMetadata(List)
//! and aggregated discovery; nothing fits → 406).
//!
//! Two dimensions are negotiated together, as kube does: the media type
//! (JSON, YAML, Kubernetes protobuf, CBOR: [`Media`]) and the form of the
//! object ([`Representation`]: the object itself or a meta.k8s.io transform).

use crate::status::Status;

/// A serializer kube offers, in kube's order (`CodecFactory` serializers:
/// JSON, YAML, protobuf, then CBOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Media {
    Json,
    Yaml,
    Protobuf,
    Cbor,
}

impl Media {
    pub const ALL: [Media; 4] = [Media::Json, Media::Yaml, Media::Protobuf, Media::Cbor];

    pub fn content_type(self) -> &'static str {
        match self {
            Media::Json => "application/json",
            Media::Yaml => "application/yaml",
            Media::Protobuf => crate::protobuf::CONTENT_TYPE,
            Media::Cbor => crate::cbor::CONTENT_TYPE,
        }
    }

    fn subtype(self) -> &'static str {
        match self {
            Media::Json => "json",
            Media::Yaml => "yaml",
            Media::Protobuf => "vnd.kubernetes.protobuf",
            Media::Cbor => "cbor",
        }
    }

    /// The media type of a request body (`Content-Type`), parameters ignored.
    pub fn from_content_type(content_type: &str) -> Option<Media> {
        let media = media_type(content_type);
        Media::ALL
            .into_iter()
            .find(|media_type| media == media_type.content_type())
    }
}

/// The media type of a `Content-Type` value: parameters dropped, trimmed,
/// lower-cased (`application/CBOR; charset=x` → `application/cbor`). Every
/// reader of a request's Content-Type goes through this.
pub fn media_type(content_type: &str) -> String {
    content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// What an endpoint can produce besides the object itself in JSON and YAML.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capabilities {
    /// The kind has a protobuf message (built-in kinds; not custom resources).
    pub protobuf: bool,
    /// A table convertor exists (`RequestScope.TableConvertor != nil`).
    pub table: bool,
}

/// The outcome of negotiating a response: a media type and a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    pub media: Media,
    pub representation: Representation,
    /// `pretty=1` in the chosen clause.
    pub pretty: bool,
}

impl Negotiated {
    pub const JSON: Negotiated = Negotiated {
        media: Media::Json,
        representation: Representation::Json,
        pretty: false,
    };

    /// The `Content-Type` of the response.
    pub fn content_type(&self) -> String {
        let media = self.media.content_type();
        match self.representation {
            Representation::Json => media.to_string(),
            Representation::Table(version) => format!("{media};as=Table;v={version};g=meta.k8s.io"),
            Representation::PartialObjectMetadata(version) => {
                format!("{media};as=PartialObjectMetadata;v={version};g=meta.k8s.io")
            }
            Representation::PartialObjectMetadataList(version) => {
                format!("{media};as=PartialObjectMetadataList;v={version};g=meta.k8s.io")
            }
            Representation::AggregatedDiscovery(version) => {
                format!("{media};g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList")
            }
        }
    }
}

/// One representation the server can produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Representation {
    Json,
    /// `meta.k8s.io` Table in `v1` or `v1beta1`.
    Table(&'static str),
    /// `apidiscovery.k8s.io` APIGroupDiscoveryList in `v2` or `v2beta1`.
    AggregatedDiscovery(&'static str),
    /// `meta.k8s.io` PartialObjectMetadata in `v1` or `v1beta1` (metadata only).
    PartialObjectMetadata(&'static str),
    /// `meta.k8s.io` PartialObjectMetadataList in `v1` or `v1beta1`.
    PartialObjectMetadataList(&'static str),
}

impl Representation {
    pub fn content_type(self) -> String {
        Negotiated {
            media: Media::Json,
            representation: self,
            pretty: false,
        }
        .content_type()
    }
}

/// The media types named in a 406 (`runtime.SerializerInfo` list of the JSON serializer set).
pub const ACCEPTED_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
];

/// The media types named in a 406 for resource endpoints, which also serve CBOR.
pub const RESOURCE_MEDIA_TYPES: &[&str] = &[
    "application/json",
    "application/yaml",
    "application/vnd.kubernetes.protobuf",
    "application/cbor",
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
    // goautoneg's order: q first, then concrete types before wildcards;
    // stable, so equal clauses keep header order.
    clauses.sort_by(|a, b| {
        b.quality
            .partial_cmp(&a.quality)
            .unwrap_or(std::cmp::Ordering::Equal)
            .then_with(|| (a.kind == "*").cmp(&(b.kind == "*")))
            .then_with(|| (a.subtype == "*").cmp(&(b.subtype == "*")))
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
        Representation::PartialObjectMetadata(_) | Representation::PartialObjectMetadataList(_) => {
            json_type(clause) && clause_target(clause) == Ok(Some(offer))
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

/// What one clause of an `Accept` header asks for: the transform of
/// `as`/`g`/`v` (kube's `MediaTypeOptions.Convert`) when present.
fn clause_target(clause: &Clause) -> Result<Option<Representation>, ()> {
    let (target, group, version) = (clause.param("as"), clause.param("g"), clause.param("v"));
    if (target, group, version) == (None, None, None) {
        return Ok(None);
    }
    let version = match version {
        Some("v1") => "v1",
        Some("v1beta1") => "v1beta1",
        _ => return Err(()),
    };
    if group != Some("meta.k8s.io") {
        return Err(());
    }
    match target {
        Some("Table") => Ok(Some(Representation::Table(version))),
        Some("PartialObjectMetadata") => Ok(Some(Representation::PartialObjectMetadata(version))),
        Some("PartialObjectMetadataList") => {
            Ok(Some(Representation::PartialObjectMetadataList(version)))
        }
        _ => Err(()),
    }
}

fn type_matches(clause: &Clause, media: Media) -> bool {
    // A watch client may name CBOR's stream type (RFC 8742 CBOR sequence).
    let cbor_seq = media == Media::Cbor && clause.subtype == "cbor-seq";
    (clause.kind == "application"
        && (clause.subtype == media.subtype() || clause.subtype == "*" || cbor_seq))
        || (clause.kind == "*" && clause.subtype == "*")
}

/// `acceptMediaTypeOptions` of negotiate.go, with the endpoint restrictions
/// of `handlers/rest.go` `AllowsMediaTypeTransform`: Table only in JSON and
/// YAML and only where a table convertor exists; PartialObjectMetadata(List)
/// in every media type; the plain object in protobuf only for kinds that
/// have a protobuf message (CRDs' `StandardSerializers`).
fn accept_options(clause: &Clause, media: Media, capabilities: Capabilities) -> Option<Negotiated> {
    let pretty = clause.param("pretty") == Some("1");
    if clause
        .param("stream")
        .is_some_and(|stream| stream != "watch")
    {
        return None;
    }
    let representation = match clause_target(clause).ok()? {
        None if media == Media::Protobuf && !capabilities.protobuf => return None,
        None => Representation::Json,
        Some(Representation::Table(version)) => {
            if !capabilities.table || !matches!(media, Media::Json | Media::Yaml) {
                return None;
            }
            Representation::Table(version)
        }
        Some(other) => other,
    };
    Some(Negotiated {
        media,
        representation,
        pretty,
    })
}

/// The representation of a resource response (`NegotiateOutputMediaType`):
/// an empty header is JSON; otherwise the first clause (by q, then
/// specificity) that some serializer accepts; nothing → 406.
pub fn negotiate_output(
    accept: Option<&str>,
    capabilities: Capabilities,
) -> Result<Negotiated, Status> {
    negotiate_among(accept, capabilities, &Media::ALL)
}

/// [`negotiate_output`] for a watch (`NegotiateOutputMediaTypeStream`): only
/// serializers with a stream form, which YAML lacks.
pub fn negotiate_watch(
    accept: Option<&str>,
    capabilities: Capabilities,
) -> Result<Negotiated, Status> {
    negotiate_among(
        accept,
        capabilities,
        &[Media::Json, Media::Protobuf, Media::Cbor],
    )
}

fn negotiate_among(
    accept: Option<&str>,
    capabilities: Capabilities,
    offers: &[Media],
) -> Result<Negotiated, Status> {
    let header = accept.map(str::trim).unwrap_or("");
    if header.is_empty() {
        return Ok(Negotiated::JSON);
    }
    for clause in parse_accept(header) {
        for &media in offers {
            if !type_matches(&clause, media) {
                continue;
            }
            if let Some(negotiated) = accept_options(&clause, media, capabilities) {
                return Ok(negotiated);
            }
        }
    }
    Err(Status::not_acceptable(RESOURCE_MEDIA_TYPES))
}

/// The media type of an error `Status` (`responsewriters.ErrorNegotiated`:
/// no transform is allowed, every serializer may encode a Status; when
/// nothing fits, JSON).
pub fn negotiate_error(accept: Option<&str>) -> Negotiated {
    let capabilities = Capabilities {
        protobuf: true,
        table: false,
    };
    let header = accept.map(str::trim).unwrap_or("");
    for clause in parse_accept(header) {
        if clause_target(&clause) != Ok(None) {
            continue;
        }
        for media in Media::ALL {
            if type_matches(&clause, media) {
                if let Some(negotiated) = accept_options(&clause, media, capabilities) {
                    return negotiated;
                }
            }
        }
    }
    Negotiated::JSON
}

/// kube's `isPrettyPrint`: `?pretty=` as strconv.ParseBool reads it, else
/// curl, Wget and browser user agents.
pub fn pretty_requested(pretty_query: Option<&str>, user_agent: Option<&str>) -> bool {
    if let Some(value) = pretty_query.filter(|value| !value.is_empty()) {
        return matches!(value, "1" | "t" | "T" | "true" | "TRUE" | "True");
    }
    let agent = user_agent.unwrap_or("");
    agent.starts_with("curl") || agent.starts_with("Wget") || agent.starts_with("Mozilla/5.0")
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

    const BUILT_IN: Capabilities = Capabilities {
        protobuf: true,
        table: true,
    };
    const CUSTOM: Capabilities = Capabilities {
        protobuf: false,
        table: true,
    };
    const REVIEW: Capabilities = Capabilities {
        protobuf: true,
        table: false,
    };

    type Outcome = Option<(Media, Representation)>;

    fn output(media: Media, representation: Representation) -> Outcome {
        Some((media, representation))
    }

    #[test]
    fn negotiates_output_like_kube() {
        use Media::{Cbor, Protobuf, Yaml};
        let json = Media::Json;
        let pom = PartialObjectMetadata("v1");
        let poml = PartialObjectMetadataList("v1");
        let cases: Vec<(&str, Capabilities, Outcome)> = vec![
            ("", BUILT_IN, output(json, Json)),
            ("*/*", BUILT_IN, output(json, Json)),
            ("application/*", BUILT_IN, output(json, Json)),
            ("application/yaml", BUILT_IN, output(Yaml, Json)),
            ("application/cbor", CUSTOM, output(Cbor, Json)),
            ("application/vnd.kubernetes.protobuf", BUILT_IN, output(Protobuf, Json)),
            ("application/vnd.kubernetes.protobuf", CUSTOM, None),
            ("application/vnd.kubernetes.protobuf, application/json", CUSTOM, output(json, Json)),
            ("application/vnd.kubernetes.protobuf, */*", CUSTOM, output(json, Json)),
            ("application/vnd.kubernetes.protobuf, */*", BUILT_IN, output(Protobuf, Json)),
            // q-values order the clauses; specific types before wildcards.
            ("application/json;q=0.5, application/yaml", BUILT_IN, output(Yaml, Json)),
            ("*/*, application/yaml", BUILT_IN, output(Yaml, Json)),
            ("application/json;q=0, application/cbor;q=0.1", BUILT_IN, output(Cbor, Json)),
            ("text/html, application/xml", BUILT_IN, None),
            ("application/vnd.kubernetes.protobuf;stream=watch", BUILT_IN, output(Protobuf, Json)),
            ("application/json;stream=other", BUILT_IN, None),
            // Transforms.
            ("application/json;as=Table;v=v1;g=meta.k8s.io", BUILT_IN, output(json, Table("v1"))),
            ("application/yaml;as=Table;v=v1beta1;g=meta.k8s.io", BUILT_IN, output(Yaml, Table("v1beta1"))),
            ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io", BUILT_IN, None),
            ("application/cbor;as=Table;v=v1;g=meta.k8s.io", BUILT_IN, None),
            ("application/json;as=Table;v=v1;g=meta.k8s.io", REVIEW, None),
            ("application/json;as=Table;v=v1;g=meta.k8s.io, application/json", REVIEW, output(json, Json)),
            ("application/json;as=Table;v=v2;g=meta.k8s.io", BUILT_IN, None),
            ("application/json;as=Table;g=meta.k8s.io", BUILT_IN, None),
            ("application/json;as=Table;v=v1;g=apps", BUILT_IN, None),
            ("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", CUSTOM, output(json, pom)),
            ("application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1", CUSTOM, output(Protobuf, poml)),
            ("application/cbor;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1", BUILT_IN, output(Cbor, PartialObjectMetadataList("v1beta1"))),
            ("*/*;as=PartialObjectMetadata;g=meta.k8s.io;v=v1", BUILT_IN, output(json, pom)),
        ];
        for (accept, capabilities, expected) in cases {
            let got = negotiate_output(Some(accept), capabilities)
                .ok()
                .map(|negotiated| (negotiated.media, negotiated.representation));
            assert_eq!(got, expected, "{accept}");
        }
        let refused = negotiate_output(Some("text/html"), BUILT_IN).expect_err("406");
        assert_eq!(
            refused.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf, application/cbor"
        );
        let pretty = negotiate_output(Some("application/json;pretty=1"), BUILT_IN).expect("json");
        assert!(pretty.pretty);
    }

    #[test]
    fn watches_have_no_yaml() {
        let negotiated = negotiate_watch(Some("application/yaml, application/cbor-seq"), BUILT_IN)
            .expect("cbor");
        assert_eq!(negotiated.media, Media::Cbor);
        assert!(negotiate_watch(Some("application/yaml"), BUILT_IN).is_err());
        let protobuf = negotiate_watch(
            Some("application/vnd.kubernetes.protobuf;stream=watch"),
            BUILT_IN,
        )
        .expect("protobuf");
        assert_eq!(protobuf.media, Media::Protobuf);
    }

    #[test]
    fn errors_use_any_plain_media_type() {
        let cases = [
            ("", Media::Json),
            ("text/html", Media::Json),
            ("application/vnd.kubernetes.protobuf", Media::Protobuf),
            (
                "application/json;as=Table;v=v1;g=meta.k8s.io, application/yaml",
                Media::Yaml,
            ),
            ("application/cbor", Media::Cbor),
        ];
        for (accept, media) in cases {
            assert_eq!(negotiate_error(Some(accept)).media, media, "{accept}");
        }
    }

    #[test]
    fn content_types_name_the_transform() {
        let negotiated = Negotiated {
            media: Media::Yaml,
            representation: Representation::Table("v1"),
            pretty: false,
        };
        assert_eq!(
            negotiated.content_type(),
            "application/yaml;as=Table;v=v1;g=meta.k8s.io"
        );
        assert_eq!(
            Media::from_content_type("application/CBOR; charset=x"),
            Some(Media::Cbor)
        );
        assert!(pretty_requested(Some("true"), None));
        assert!(!pretty_requested(Some("false"), Some("curl/8")));
        assert!(pretty_requested(None, Some("curl/8.5")));
        assert!(!pretty_requested(None, Some("kubectl/v1.33")));
    }
}
