//! The `audit.k8s.io/v1` `Event` (`apis/audit/v1/types.go`) and the two
//! forms the log backend writes it in (`plugin/pkg/audit/log/backend.go`):
//! one JSON object per line, fields in the Go struct's order and Go's
//! HTML-safe escapes, or the legacy text line (`audit/format.go`
//! `EventString`).

use std::collections::BTreeMap;
use std::time::SystemTime;

use serde::Serialize;
use serde_json::Value;

use crate::authn::UserInfo;

/// `authenticationv1.UserInfo`, every field `omitempty`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventUser {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub username: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<String>,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub extra: BTreeMap<String, Vec<String>>,
}

impl EventUser {
    pub fn of(user: &UserInfo) -> EventUser {
        EventUser {
            username: user.name.clone(),
            uid: user.uid.clone(),
            groups: user.groups.clone(),
            extra: user.extra.clone(),
        }
    }
}

/// `audit.ObjectReference`, every field `omitempty`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ObjectRef {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub api_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub resource_version: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub subresource: String,
}

/// `metav1.StatusCause`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct StatusCause {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// `metav1.StatusDetails`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    #[serde(skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub group: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub kind: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub uid: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    #[serde(skip_serializing_if = "is_zero")]
    pub retry_after_seconds: i64,
}

fn is_zero(value: &i64) -> bool {
    *value == 0
}

/// The `metav1.Status` of `responseStatus` (`metadata` is a struct: Go
/// always writes it).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ResponseStatus {
    pub metadata: BTreeMap<String, String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub status: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub message: String,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub reason: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub details: Option<StatusDetails>,
    #[serde(skip_serializing_if = "is_zero_code")]
    pub code: u16,
}

fn is_zero_code(code: &u16) -> bool {
    *code == 0
}

impl ResponseStatus {
    pub fn code(code: u16) -> ResponseStatus {
        ResponseStatus {
            code,
            ..ResponseStatus::default()
        }
    }

    /// The bounded fields `LogResponseObject` copies from a `Status`
    /// response: status, message, reason, details, code.
    pub fn of_status(status: &Value) -> ResponseStatus {
        let text = |key: &str| {
            status
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let details = status.get("details").and_then(Value::as_object).map(|d| {
            let text = |key: &str| {
                d.get(key)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            StatusDetails {
                name: text("name"),
                group: text("group"),
                kind: text("kind"),
                uid: text("uid"),
                causes: d
                    .get("causes")
                    .and_then(Value::as_array)
                    .map(|causes| {
                        causes
                            .iter()
                            .map(|cause| {
                                let text = |key: &str| {
                                    cause
                                        .get(key)
                                        .and_then(Value::as_str)
                                        .unwrap_or_default()
                                        .to_string()
                                };
                                StatusCause {
                                    reason: text("reason"),
                                    message: text("message"),
                                    field: text("field"),
                                }
                            })
                            .collect()
                    })
                    .unwrap_or_default(),
                retry_after_seconds: d
                    .get("retryAfterSeconds")
                    .and_then(Value::as_i64)
                    .unwrap_or_default(),
            }
        });
        ResponseStatus {
            metadata: BTreeMap::new(),
            status: text("status"),
            message: text("message"),
            reason: text("reason"),
            details,
            code: status
                .get("code")
                .and_then(Value::as_u64)
                .and_then(|code| u16::try_from(code).ok())
                .unwrap_or_default(),
        }
    }
}

/// One audit event.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Event {
    /// Empty for an `EventList` item ([`Event::item_json`]).
    #[serde(skip_serializing_if = "str::is_empty")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "str::is_empty")]
    pub api_version: &'static str,
    pub level: &'static str,
    #[serde(rename = "auditID")]
    pub audit_id: String,
    pub stage: &'static str,
    #[serde(rename = "requestURI")]
    pub request_uri: String,
    pub verb: String,
    pub user: EventUser,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub impersonated_user: Option<EventUser>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    pub source_ips: Vec<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub user_agent: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub object_ref: Option<ObjectRef>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_status: Option<ResponseStatus>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub request_object: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_object: Option<Value>,
    pub request_received_timestamp: String,
    pub stage_timestamp: String,
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    /// `requestReceivedTimestamp` as a time (the legacy line prints it).
    #[serde(skip)]
    pub received: SystemTime,
}

/// `metav1.MicroTime` in JSON: RFC 3339, UTC, six fractional digits.
pub fn micro_time(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    crate::go::time::format_time(seconds, i64::from(since.subsec_nanos()), true)
        .unwrap_or_else(|| "9999-12-31T23:59:59.999999Z".to_string())
}

/// Go's `time.RFC3339Nano` of a UTC time: trailing zeros of the fraction dropped.
fn rfc3339_nano(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let seconds = i64::try_from(since.as_secs()).unwrap_or(i64::MAX);
    let whole = crate::go::time::format_time(seconds, 0, false)
        .unwrap_or_else(|| "9999-12-31T23:59:59Z".to_string());
    let fraction = format!("{:09}", since.subsec_nanos());
    let fraction = fraction.trim_end_matches('0');
    if fraction.is_empty() {
        return whole;
    }
    format!("{}.{fraction}Z", whole.trim_end_matches('Z'))
}

impl Event {
    /// One line of `--audit-log-format=json`: the JSON serializer's
    /// `json.Encoder` output (HTML-safe escapes, a trailing newline).
    pub fn json_line(&self) -> Vec<u8> {
        let text = serde_json::to_string(self).unwrap_or_default();
        let mut line = crate::versions::html_escape(&text).into_bytes();
        line.push(b'\n');
        line
    }

    /// The event as an item of an `EventList` (the webhook backend): no
    /// `kind` or `apiVersion` of its own, as Go's list conversion leaves
    /// them; not yet HTML-escaped.
    pub fn item_json(&self) -> String {
        let item = Event {
            kind: "",
            api_version: "",
            ..self.clone()
        };
        serde_json::to_string(&item).unwrap_or_default()
    }

    /// One line of `--audit-log-format=legacy` (`EventString`).
    pub fn legacy_line(&self) -> Vec<u8> {
        let quote = crate::go::strconv::quote;
        let quoted_list = |items: &[String]| {
            items
                .iter()
                .map(|item| quote(item))
                .collect::<Vec<_>>()
                .join(",")
        };
        let (username, groups) = if self.user.username.is_empty() {
            ("<none>".to_string(), "<none>".to_string())
        } else if self.user.groups.is_empty() {
            (self.user.username.clone(), "<none>".to_string())
        } else {
            (self.user.username.clone(), quoted_list(&self.user.groups))
        };
        let (as_user, as_groups) = match &self.impersonated_user {
            Some(user) => (user.username.clone(), quoted_list(&user.groups)),
            None => ("<self>".to_string(), "<lookup>".to_string()),
        };
        let namespace = self
            .object_ref
            .as_ref()
            .map(|object| object.namespace.as_str())
            .filter(|namespace| !namespace.is_empty())
            .unwrap_or("<none>");
        let response = self
            .response_status
            .as_ref()
            .map_or("<deferred>".to_string(), |status| status.code.to_string());
        let ip = self.source_ips.first().map_or("<unknown>", String::as_str);
        format!(
            "{} AUDIT: id={} stage={} ip={} method={} user={} groups={} as={} asgroups={} user-agent={} namespace={} uri={} response=\"{}\"\n",
            rfc3339_nano(self.received),
            quote(&self.audit_id),
            quote(self.stage),
            quote(ip),
            quote(&self.verb),
            quote(&username),
            quote(&groups),
            quote(&as_user),
            quote(&as_groups),
            quote(&self.user_agent),
            quote(namespace),
            quote(&self.request_uri),
            response,
        )
        .into_bytes()
    }
}

/// `metadata.managedFields` removed from an object and from a list's
/// items (`omitManagedFields`).
pub fn without_managed_fields(mut value: Value) -> Value {
    let strip = |object: &mut Value| {
        if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.remove("managedFields");
        }
    };
    strip(&mut value);
    if let Some(items) = value.get_mut("items").and_then(Value::as_array_mut) {
        items.iter_mut().for_each(strip);
    }
    value
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn times_are_micro_and_nano_as_go_prints_them() {
        let at = SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_450_000);
        assert_eq!(micro_time(at), "2023-11-14T22:13:20.123450Z");
        assert_eq!(rfc3339_nano(at), "2023-11-14T22:13:20.12345Z");
        let whole = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        assert_eq!(rfc3339_nano(whole), "2023-11-14T22:13:20Z");
    }

    #[test]
    fn a_failure_status_keeps_its_bounded_fields_in_go_order() {
        let status = serde_json::json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {},
            "status": "Failure", "message": "pods \"x\" not found",
            "reason": "NotFound", "details": {"name": "x", "kind": "pods"}, "code": 404
        });
        let text = serde_json::to_string(&ResponseStatus::of_status(&status)).unwrap();
        assert_eq!(
            text,
            r#"{"metadata":{},"status":"Failure","message":"pods \"x\" not found","reason":"NotFound","details":{"name":"x","kind":"pods"},"code":404}"#
        );
        let ok = serde_json::to_string(&ResponseStatus::code(200)).unwrap();
        assert_eq!(ok, r#"{"metadata":{},"code":200}"#);
    }

    pub(crate) fn sample() -> Event {
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: "Metadata",
            audit_id: "id-1".to_string(),
            stage: "ResponseComplete",
            request_uri: "/api/v1/namespaces/a/pods?x=<y>".to_string(),
            verb: "list".to_string(),
            user: EventUser {
                username: "alice".to_string(),
                groups: vec!["dev".to_string(), "system:authenticated".to_string()],
                ..EventUser::default()
            },
            impersonated_user: None,
            source_ips: vec!["10.0.0.1".to_string()],
            user_agent: "kubectl".to_string(),
            object_ref: Some(ObjectRef {
                resource: "pods".to_string(),
                namespace: "a".to_string(),
                api_version: "v1".to_string(),
                ..ObjectRef::default()
            }),
            response_status: Some(ResponseStatus::code(200)),
            request_object: None,
            response_object: None,
            request_received_timestamp: "2023-11-14T22:13:20.123450Z".to_string(),
            stage_timestamp: "2023-11-14T22:13:20.200000Z".to_string(),
            annotations: BTreeMap::new(),
            received: SystemTime::UNIX_EPOCH + Duration::new(1_700_000_000, 123_450_000),
        }
    }

    #[test]
    fn lines_are_kubes_json_and_legacy_forms() {
        let event = sample();
        let json = String::from_utf8(event.json_line()).unwrap();
        assert_eq!(
            json,
            concat!(
                r#"{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"id-1","#,
                r#""stage":"ResponseComplete","requestURI":"/api/v1/namespaces/a/pods?x=\u003cy\u003e","#,
                r#""verb":"list","user":{"username":"alice","groups":["dev","system:authenticated"]},"#,
                r#""sourceIPs":["10.0.0.1"],"userAgent":"kubectl","#,
                r#""objectRef":{"resource":"pods","namespace":"a","apiVersion":"v1"},"#,
                r#""responseStatus":{"metadata":{},"code":200},"#,
                r#""requestReceivedTimestamp":"2023-11-14T22:13:20.123450Z","#,
                r#""stageTimestamp":"2023-11-14T22:13:20.200000Z"}"#,
                "\n"
            )
        );
        let legacy = String::from_utf8(event.legacy_line()).unwrap();
        assert_eq!(
            legacy,
            concat!(
                r#"2023-11-14T22:13:20.12345Z AUDIT: id="id-1" stage="ResponseComplete" ip="10.0.0.1" "#,
                r#"method="list" user="alice" groups="\"dev\",\"system:authenticated\"" as="<self>" "#,
                r#"asgroups="<lookup>" user-agent="kubectl" namespace="a" "#,
                r#"uri="/api/v1/namespaces/a/pods?x=<y>" response="200""#,
                "\n"
            )
        );
    }

    #[test]
    fn managed_fields_are_omitted_from_objects_and_items() {
        let list = serde_json::json!({
            "metadata": {"managedFields": [1]},
            "items": [{"metadata": {"name": "a", "managedFields": [2]}}]
        });
        let stripped = without_managed_fields(list);
        assert_eq!(
            stripped,
            serde_json::json!({"metadata": {}, "items": [{"metadata": {"name": "a"}}]})
        );
    }
}
