//! The audit event of one request through its stages, as
//! `endpoints/filters/audit.go` `WithAudit` drives it: `RequestReceived`
//! when the request arrives (after authentication), `ResponseStarted` when
//! a long-running response sends its headers, `ResponseComplete` when the
//! response is done, `Panic` instead when the handler panicked. The event
//! itself is built as `audit/request.go` `NewEventFromRequest`.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::SystemTime;

use serde_json::Value;

use crate::authn::UserInfo;
use crate::authz::Attributes;

use super::event::{
    micro_time, without_managed_fields, Event, EventUser, ObjectRef, ResponseStatus,
};
use super::policy::{Level, RequestAuditConfig, Stage};
use super::Auditor;

/// `maxUserAgentLength`: longer user agents are cut and marked.
const MAX_USER_AGENT_LENGTH: usize = 1024;
const USER_AGENT_TRUNCATE_SUFFIX: &str = "...TRUNCATED";

/// What the request looked like when it arrived.
pub struct Arrival<'a> {
    pub audit_id: &'a str,
    pub received: SystemTime,
    /// The request URI as sent (path and query).
    pub request_uri: &'a str,
    pub headers: &'a http::HeaderMap,
    pub peer: IpAddr,
    pub long_running: bool,
}

/// An event in flight.
pub struct RequestAudit {
    auditor: Arc<Auditor>,
    event: Event,
    config: RequestAuditConfig,
    long_running: bool,
}

impl RequestAudit {
    /// Evaluates the policy on the request's attributes (of the
    /// authenticated user, before impersonation) and writes the
    /// `RequestReceived` event; `None` at level `None`.
    pub fn begin(
        auditor: &Arc<Auditor>,
        arrival: &Arrival<'_>,
        user: Option<&UserInfo>,
        attributes: &Attributes<'_>,
    ) -> Option<(RequestAudit, Option<super::Stored>)> {
        let audit = Self::begin_quietly(auditor, arrival, user, attributes)?;
        // `processAuditEvent`: the first stage is stamped with the time
        // the request arrived; a blocking-strict backend's outcome is
        // the caller's to wait for.
        let stored = (!audit.config.omit_stages.contains(Stage::RequestReceived))
            .then(|| audit.auditor.process_received(audit.event.clone()));
        Some((audit, stored))
    }

    fn begin_quietly(
        auditor: &Arc<Auditor>,
        arrival: &Arrival<'_>,
        user: Option<&UserInfo>,
        attributes: &Attributes<'_>,
    ) -> Option<RequestAudit> {
        let config = auditor.policy.evaluate(user, attributes);
        if config.level == Level::None {
            return None;
        }
        let object_ref = attributes.resource_request.then(|| ObjectRef {
            namespace: attributes.namespace.to_string(),
            name: attributes.name.to_string(),
            resource: attributes.resource.to_string(),
            subresource: attributes.subresource.to_string(),
            api_group: attributes.api_group.to_string(),
            api_version: attributes.api_version.to_string(),
            ..ObjectRef::default()
        });
        let received = micro_time(arrival.received);
        let event = Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: config.level.as_str(),
            audit_id: arrival.audit_id.to_string(),
            stage: Stage::RequestReceived.as_str(),
            request_uri: arrival.request_uri.to_string(),
            verb: attributes.verb.to_string(),
            user: user.map(EventUser::of).unwrap_or_default(),
            impersonated_user: None,
            source_ips: source_ips(arrival.headers, arrival.peer),
            user_agent: user_agent(arrival.headers),
            object_ref,
            response_status: None,
            request_object: None,
            response_object: None,
            request_received_timestamp: received.clone(),
            stage_timestamp: received,
            annotations: Default::default(),
            received: arrival.received,
        };
        Some(RequestAudit {
            auditor: auditor.clone(),
            event,
            config,
            long_running: arrival.long_running,
        })
    }

    /// A request whose authentication failed
    /// (`WithFailedAuthenticationAudit`): the policy is evaluated without a
    /// user and nothing is written until the 401 ([`Self::unauthorized`]).
    pub fn begin_unauthenticated(
        auditor: &Arc<Auditor>,
        arrival: &Arrival<'_>,
        attributes: &Attributes<'_>,
    ) -> Option<RequestAudit> {
        Self::begin_quietly(auditor, arrival, None, attributes)
    }

    /// The 401 of a failed authentication: one `ResponseStarted` event
    /// with the `Status` answered.
    pub fn unauthorized(mut self, code: u16, status: Option<&Value>) {
        let mut response_status = status.map(ResponseStatus::of_status).unwrap_or_default();
        response_status.code = code;
        self.event.response_status = Some(response_status);
        self.event.stage = Stage::ResponseStarted.as_str();
        self.emit();
    }

    pub fn level(&self) -> Level {
        self.config.level
    }

    pub fn is_long_running(&self) -> bool {
        self.long_running
    }

    /// `LogImpersonatedUser`.
    pub fn impersonated(&mut self, user: &UserInfo) {
        self.event.impersonated_user = Some(EventUser::of(user));
    }

    /// `AddAuditAnnotation`.
    pub fn annotate(&mut self, key: &str, value: &str) {
        self.event
            .annotations
            .insert(key.to_string(), value.to_string());
    }

    /// The request body: for create and update `LogRequestObject` completes
    /// `objectRef` from the object's metadata; at `Request` and above the
    /// object (a patch: the patch itself) is `requestObject`. Bodies that
    /// are not JSON, YAML or protobuf (CBOR) are not recorded.
    pub fn request_body(&mut self, content_type: Option<&str>, body: &[u8]) {
        if body.is_empty() {
            return;
        }
        let verb = self.event.verb.as_str();
        let completes_ref = matches!(verb, "create" | "update");
        if !completes_ref && self.config.level < Level::Request {
            return;
        }
        if self.config.level < Level::Request && is_json(content_type) {
            // Metadata level needs only the reference's four fields: read
            // them without building the body's tree. A body this cannot
            // read (a duplicate `metadata`, a non-object) takes the full
            // path, so the result is the same as before.
            let Some(reference) = self.event.object_ref.as_mut() else {
                return;
            };
            if complete_from_json(reference, body) {
                return;
            }
        }
        let Some(object) = body_value(content_type, body) else {
            return;
        };
        if completes_ref {
            if let Some(reference) = self.event.object_ref.as_mut() {
                complete_from_value(reference, &object);
            }
        }
        if self.config.level >= Level::Request {
            self.event.request_object = Some(self.managed_fields(object));
        }
    }

    fn managed_fields(&self, object: Value) -> Value {
        if self.config.omit_managed_fields {
            without_managed_fields(object)
        } else {
            object
        }
    }

    /// The status code is known: a long-running response writes
    /// `ResponseStarted` now (`auditResponseWriter.processCode`).
    pub fn response_started(&mut self, code: u16) {
        self.event.response_status = Some(ResponseStatus::code(code));
        if self.long_running {
            self.event.stage = Stage::ResponseStarted.as_str();
            self.emit();
        }
    }

    /// `ResponseComplete`: `status` is the `Status` a failure (or a
    /// `Status` success) answered with, `object` the response object
    /// (recorded at `RequestResponse`).
    pub fn complete(mut self, code: u16, status: Option<&Value>, object: Option<Value>) {
        let mut response_status = status.map(ResponseStatus::of_status).unwrap_or_default();
        response_status.code = code;
        self.event.response_status = Some(response_status);
        if self.config.level >= Level::RequestResponse {
            self.event.response_object = object.map(|object| self.managed_fields(object));
        }
        self.event.stage = Stage::ResponseComplete.as_str();
        self.emit();
    }

    /// A long-running response that ended (its body was dropped).
    pub fn finish_stream(mut self) {
        if self.event.response_status.is_none() {
            self.event.response_status = Some(ResponseStatus::code(200));
        }
        self.event.stage = Stage::ResponseComplete.as_str();
        self.emit();
    }

    /// `Panic`: kube's recovered panic, instead of `ResponseComplete`.
    pub fn panicked(mut self, message: &str) {
        self.event.response_status = Some(ResponseStatus {
            status: "Failure".to_string(),
            message: format!("APIServer panic'd: {message}"),
            reason: "InternalError".to_string(),
            code: 500,
            ..ResponseStatus::default()
        });
        self.event.stage = Stage::Panic.as_str();
        self.emit();
    }

    fn emit(&mut self) {
        if self.stage_omitted() {
            return;
        }
        self.event.stage_timestamp = micro_time(SystemTime::now());
        self.auditor.process(self.event.clone());
    }

    fn stage_omitted(&self) -> bool {
        Stage::ALL
            .into_iter()
            .find(|stage| stage.as_str() == self.event.stage)
            .is_some_and(|stage| self.config.omit_stages.contains(stage))
    }
}

/// The body as JSON, when it is JSON or YAML (apply patches).
/// Fills the reference's fields the URL left empty from the body's
/// metadata (`LogRequestObject`).
fn complete_from_value(reference: &mut ObjectRef, object: &Value) {
    let Some(metadata) = object.get("metadata").and_then(Value::as_object) else {
        return;
    };
    let field = |key: &str| {
        metadata
            .get(key)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    if reference.namespace.is_empty() {
        reference.namespace = field("namespace");
    }
    if reference.name.is_empty() {
        reference.name = field("name");
    }
    if reference.uid.is_empty() {
        reference.uid = field("uid");
    }
    if reference.resource_version.is_empty() {
        reference.resource_version = field("resourceVersion");
    }
}

/// [`complete_from_value`] for a JSON body without building its tree;
/// false (nothing changed) when the body is not what it can read.
fn complete_from_json(reference: &mut ObjectRef, body: &[u8]) -> bool {
    let Ok(head) = serde_json::from_slice::<BodyHead<'_>>(body) else {
        return false;
    };
    if let Some(metadata) = head.metadata {
        metadata.complete(reference);
    }
    true
}

/// The part of a JSON body a `Metadata`-level event reads: the object
/// reference's fields, borrowed where they hold no escapes.
#[derive(serde::Deserialize)]
struct BodyHead<'a> {
    #[serde(borrow)]
    metadata: Option<BodyMetadata<'a>>,
}

#[derive(serde::Deserialize)]
#[serde(rename_all = "camelCase")]
struct BodyMetadata<'a> {
    #[serde(borrow)]
    name: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    namespace: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    uid: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow)]
    resource_version: Option<std::borrow::Cow<'a, str>>,
}

impl BodyMetadata<'_> {
    /// Fills what the URL left empty, as the full path does.
    fn complete(self, reference: &mut ObjectRef) {
        let fill = |slot: &mut String, value: Option<std::borrow::Cow<'_, str>>| {
            if slot.is_empty() {
                *slot = value.map(std::borrow::Cow::into_owned).unwrap_or_default();
            }
        };
        fill(&mut reference.namespace, self.namespace);
        fill(&mut reference.name, self.name);
        fill(&mut reference.uid, self.uid);
        fill(&mut reference.resource_version, self.resource_version);
    }
}

fn media(content_type: Option<&str>) -> &str {
    content_type
        .unwrap_or("application/json")
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
}

fn is_json(content_type: Option<&str>) -> bool {
    media(content_type).ends_with("json")
}

fn body_value(content_type: Option<&str>, body: &[u8]) -> Option<Value> {
    let media = media(content_type);
    if media.ends_with("json") {
        return serde_json::from_slice(body).ok();
    }
    if media.ends_with("yaml") {
        return crate::yaml::yaml_to_json(body).ok();
    }
    if media == "application/vnd.kubernetes.protobuf" {
        return crate::protobuf::decode_object(body, crate::protobuf::message_for).ok();
    }
    None
}

/// `maybeTruncateUserAgent`.
fn user_agent(headers: &http::HeaderMap) -> String {
    let agent = headers
        .get(http::header::USER_AGENT)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default();
    if agent.len() <= MAX_USER_AGENT_LENGTH {
        return agent;
    }
    let mut cut = MAX_USER_AGENT_LENGTH;
    while !agent.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}{USER_AGENT_TRUNCATE_SUFFIX}", &agent[..cut])
}

/// `utilnet.SourceIPs`: the `X-Forwarded-For` chain, `X-Real-Ip` when not
/// in it, then the connection's address unless it ends the chain already.
pub fn source_ips(headers: &http::HeaderMap, peer: IpAddr) -> Vec<String> {
    let mut ips: Vec<IpAddr> = Vec::new();
    if let Some(forwarded) = headers
        .get("x-forwarded-for")
        .and_then(|value| value.to_str().ok())
    {
        ips.extend(
            forwarded
                .split(',')
                .filter_map(|part| part.trim().parse::<IpAddr>().ok()),
        );
    }
    if let Some(real) = headers
        .get("x-real-ip")
        .and_then(|value| value.to_str().ok())
        .and_then(|value| value.trim().parse::<IpAddr>().ok())
    {
        if !ips.contains(&real) {
            ips.push(real);
        }
    }
    let peer = canonical(peer);
    if ips.last().map(|last| canonical(*last)) != Some(peer) {
        ips.push(peer);
    }
    ips.into_iter()
        .map(|ip| canonical(ip).to_string())
        .collect()
}

/// Go prints an IPv4-mapped IPv6 address as the IPv4 one.
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn source_ips_follow_the_proxy_chain_then_the_peer() {
        let peer: IpAddr = "10.0.0.9".parse().unwrap();
        let mut headers = http::HeaderMap::new();
        assert_eq!(source_ips(&headers, peer), vec!["10.0.0.9"]);
        headers.insert(
            "x-forwarded-for",
            "1.2.3.4, bogus, 5.6.7.8".parse().unwrap(),
        );
        headers.insert("x-real-ip", "1.2.3.4".parse().unwrap());
        assert_eq!(
            source_ips(&headers, peer),
            vec!["1.2.3.4", "5.6.7.8", "10.0.0.9"]
        );
        headers.insert("x-forwarded-for", "10.0.0.9".parse().unwrap());
        headers.remove("x-real-ip");
        assert_eq!(source_ips(&headers, peer), vec!["10.0.0.9"]);
    }

    #[test]
    fn the_reference_read_without_a_tree_is_the_one_read_with_it() {
        let bodies: [&[u8]; 9] = [
            br#"{"metadata":{"name":"a","namespace":"n","uid":"u","resourceVersion":"7"},"data":{"k":"v"}}"#,
            br#"{"kind":"ConfigMap","metadata":{"name":"a\u0062"},"data":[1,{"x":null}]}"#,
            br#"{"metadata":null}"#,
            br#"{"data":{}}"#,
            br#"{"metadata":{"generateName":"g-","labels":{"a":"b"}}}"#,
            br#"{"metadata":{"name":5}}"#,
            br#"{"metadata":{"name":"a"},"metadata":{"name":"b"}}"#,
            br#"{"metadata":7}"#,
            br#"[1]"#,
        ];
        for body in bodies {
            let mut from_tree = ObjectRef {
                name: String::new(),
                namespace: "url".into(),
                ..ObjectRef::default()
            };
            let mut fast = from_tree.clone();
            if let Ok(object) = serde_json::from_slice::<Value>(body) {
                complete_from_value(&mut from_tree, &object);
            }
            if !complete_from_json(&mut fast, body) {
                if let Ok(object) = serde_json::from_slice::<Value>(body) {
                    complete_from_value(&mut fast, &object);
                }
            }
            assert_eq!(
                serde_json::to_value(&fast).unwrap(),
                serde_json::to_value(&from_tree).unwrap(),
                "{}",
                String::from_utf8_lossy(body)
            );
        }
    }

    #[test]
    fn long_user_agents_are_truncated() {
        let mut headers = http::HeaderMap::new();
        headers.insert(http::header::USER_AGENT, "a".repeat(2000).parse().unwrap());
        let agent = user_agent(&headers);
        assert_eq!(agent.len(), 1024 + USER_AGENT_TRUNCATE_SUFFIX.len());
        assert!(agent.ends_with("...TRUNCATED"));
    }

    #[test]
    fn bodies_are_read_as_json_or_yaml_only() {
        assert_eq!(
            body_value(Some("application/json"), br#"{"a":1}"#),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            body_value(Some("application/apply-patch+yaml"), b"a: 1\n"),
            Some(serde_json::json!({"a": 1}))
        );
        assert_eq!(
            body_value(Some("application/merge-patch+json"), br#"{"b":2}"#),
            Some(serde_json::json!({"b": 2}))
        );
        assert_eq!(body_value(Some("application/cbor"), b"\xa0"), None);
    }
}
