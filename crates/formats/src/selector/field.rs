//! Field selectors: `k8s.io/apimachinery/pkg/fields/selector.go` (`ParseSelector`), the
//! per-kind field label conversions registered with `AddFieldLabelConversionFunc`
//! (`pkg/apis/*/*/conversion.go`, `runtime.DefaultMetaV1FieldSelectorConversion`,
//! apiextensions `crConverter.ConvertFieldLabel`) and the registry `ToSelectableFields` /
//! `GetAttrs` functions that decide what value each field has on an object.

use serde_json::Value;

use super::SelectorError;

/// One term: `field=value`, `field==value` (`hasTerm`) or `field!=value` (`notHasTerm`).
#[derive(Debug, Clone, PartialEq, Eq)]
struct Term {
    field: String,
    value: String,
    not_equal: bool,
}

/// A parsed field selector: the AND of its terms, in upstream's (sorted) order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    terms: Vec<Term>,
}

/// How a kind's conversion func words its rejection.
#[derive(Clone, Copy)]
enum Reject {
    /// `field label not supported: %s`
    NotSupported,
    /// `field label %q not supported for batchv1.Job`
    Job,
    /// `field label not supported for <gvk>: %s`, for the given preferred version.
    ForGvk(&'static str),
}

/// One registered conversion func: the accepted labels, whitespace separated; `from>to`
/// marks a label the func rewrites.
struct KindRule {
    group: &'static str,
    kind: &'static str,
    labels: &'static str,
    reject: Reject,
}

/// Every `AddFieldLabelConversionFunc` a 1.34 kube-apiserver registers for a served kind;
/// any other kind falls back to `DefaultMetaV1FieldSelectorConversion`. (apps/v1 registers
/// none, so ReplicaSet `status.replicas`, although in its `GetAttrs`, is rejected.)
static RULES: &[KindRule] = &[
    // pkg/apis/core/v1/conversion.go (spec.host: "backwards compatibility with old v1 clients")
    KindRule {
        group: "",
        kind: "Pod",
        labels: "metadata.name metadata.namespace spec.nodeName spec.restartPolicy \
            spec.schedulerName spec.serviceAccountName spec.hostNetwork status.phase \
            status.podIP status.podIPs status.nominatedNodeName spec.host>spec.nodeName",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "",
        kind: "Node",
        labels: "metadata.name spec.unschedulable",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "",
        kind: "ReplicationController",
        labels: "metadata.name metadata.namespace status.replicas",
        reject: Reject::NotSupported,
    },
    // AddFieldLabelConversionsForEvent
    KindRule {
        group: "",
        kind: "Event",
        labels: "involvedObject.kind involvedObject.namespace involvedObject.name \
            involvedObject.uid involvedObject.apiVersion involvedObject.resourceVersion \
            involvedObject.fieldPath reason reportingComponent source type \
            metadata.namespace metadata.name",
        reject: Reject::NotSupported,
    },
    // AddFieldLabelConversionsForNamespace, ...ForSecret, ...ForService
    KindRule {
        group: "",
        kind: "Namespace",
        labels: "status.phase metadata.name",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "",
        kind: "Secret",
        labels: "type metadata.namespace metadata.name",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "",
        kind: "Service",
        labels: "metadata.namespace metadata.name spec.clusterIP spec.type",
        reject: Reject::NotSupported,
    },
    // pkg/apis/batch/v1/conversion.go
    KindRule {
        group: "batch",
        kind: "Job",
        labels: "metadata.name metadata.namespace status.successful",
        reject: Reject::Job,
    },
    // pkg/apis/certificates/v1/conversion.go; ClusterTrustBundle (v1beta1) and
    // PodCertificateRequest (v1alpha1) are feature-gated in 1.34.
    KindRule {
        group: "certificates.k8s.io",
        kind: "CertificateSigningRequest",
        labels: "metadata.name spec.signerName",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "certificates.k8s.io",
        kind: "ClusterTrustBundle",
        labels: "metadata.name spec.signerName",
        reject: Reject::NotSupported,
    },
    KindRule {
        group: "certificates.k8s.io",
        kind: "PodCertificateRequest",
        labels: "metadata.name spec.signerName spec.podName spec.serviceAccountName \
            spec.nodeName",
        reject: Reject::NotSupported,
    },
    // pkg/apis/events/v1/conversion.go: mapped onto the core Event's selectable fields
    KindRule {
        group: "events.k8s.io",
        kind: "Event",
        labels: "reason regarding.kind>involvedObject.kind \
            regarding.namespace>involvedObject.namespace regarding.name>involvedObject.name \
            regarding.uid>involvedObject.uid regarding.apiVersion>involvedObject.apiVersion \
            regarding.resourceVersion>involvedObject.resourceVersion \
            regarding.fieldPath>involvedObject.fieldPath \
            reportingController>reportingComponent source type metadata.namespace \
            metadata.name",
        reject: Reject::NotSupported,
    },
    // pkg/apis/resource/v1/conversion.go
    KindRule {
        group: "resource.k8s.io",
        kind: "ResourceSlice",
        labels: "metadata.name spec.nodeName spec.driver",
        reject: Reject::ForGvk("v1"),
    },
];

fn rule(group: &str, kind: &str) -> Option<&'static KindRule> {
    let group = if group == "core" { "" } else { group };
    RULES.iter().find(|r| r.group == group && r.kind == kind)
}

/// The label a term's field becomes for this kind, or the conversion func's error.
fn convert_label(
    group: &str,
    version: Option<&str>,
    kind: &str,
    label: &str,
) -> Result<&'static str, SelectorError> {
    let Some(rule) = rule(group, kind) else {
        // runtime.DefaultMetaV1FieldSelectorConversion
        return match label {
            "metadata.name" => Ok("metadata.name"),
            "metadata.namespace" => Ok("metadata.namespace"),
            _ => Err(SelectorError::UnknownFieldSelector(label.to_string())),
        };
    };
    for entry in rule.labels.split_whitespace() {
        let (from, to) = entry.split_once('>').unwrap_or((entry, entry));
        if from == label {
            return Ok(to);
        }
    }
    Err(match rule.reject {
        Reject::NotSupported => SelectorError::FieldLabelNotSupported(label.to_string()),
        Reject::Job => SelectorError::JobFieldLabelNotSupported(label.to_string()),
        Reject::ForGvk(preferred) => SelectorError::FieldLabelNotSupportedFor {
            gvk: format!(
                "{}/{}, Kind={}",
                rule.group,
                version.unwrap_or(preferred),
                rule.kind
            ),
            label: label.to_string(),
        },
    })
}

impl FieldSelector {
    /// `fields.ParseSelector`: comma-separated terms (`\,` escapes a comma), each split at
    /// the first `!=`, `==` or `=`; values are unescaped (`\\`, `\,`, `\=`).
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let mut parts = split_terms(s);
        parts.sort();
        let mut terms = Vec::new();
        for part in parts.into_iter().filter(|p| !p.is_empty()) {
            let Some((lhs, op, rhs)) = split_term(part) else {
                return Err(SelectorError::FieldTerm {
                    selector: s.to_string(),
                    term: part.to_string(),
                });
            };
            terms.push(Term {
                field: lhs.to_string(),
                value: unescape_value(rhs)?,
                not_equal: op == "!=",
            });
        }
        Ok(Self { terms })
    }

    /// The field label conversion the list/watch handler runs (`Selector.Transform` with
    /// `ConvertFieldLabel`): the first term, in selector order, whose field the kind does
    /// not support is the error. `group` is `""` for the core group. A kind-specific error
    /// naming a version (ResourceSlice) uses the 1.34 preferred version; see
    /// [`Self::validate_for_version`].
    pub fn validate_for(&self, group: &str, kind: &str) -> Result<(), SelectorError> {
        self.validate(group, None, kind)
    }

    /// [`Self::validate_for`] for a request to a specific API version.
    pub fn validate_for_version(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<(), SelectorError> {
        self.validate(group, Some(version), kind)
    }

    fn validate(
        &self,
        group: &str,
        version: Option<&str>,
        kind: &str,
    ) -> Result<(), SelectorError> {
        self.terms
            .iter()
            .try_for_each(|t| convert_label(group, version, kind, &t.field).map(drop))
    }

    /// `crConverter.ConvertFieldLabel` for a custom resource: `metadata.name`,
    /// `metadata.namespace` when namespaced, and the version's CRD `selectableFields`
    /// (given as field labels, e.g. `spec.color` for jsonPath `.spec.color`).
    pub fn validate_for_custom_resource(
        &self,
        namespaced: bool,
        selectable_fields: &[&str],
    ) -> Result<(), SelectorError> {
        for t in &self.terms {
            let f = t.field.as_str();
            let ok = f == "metadata.name"
                || (namespaced && f == "metadata.namespace")
                || selectable_fields.contains(&f);
            if !ok {
                return Err(SelectorError::FieldLabelNotSupported(t.field.clone()));
            }
        }
        Ok(())
    }

    /// Whether `object` (in the wire form of `group`/`kind`) satisfies every term, comparing
    /// upstream's string forms: a field the object lacks is `""`, booleans are
    /// `"true"`/`"false"` and counts are decimal (both defaulting like the typed object).
    /// Custom resources and kinds without special fields are read by dotted JSON path.
    pub fn matches(&self, group: &str, kind: &str, object: &Value) -> bool {
        self.terms.iter().all(|t| {
            let label = convert_label(group, None, kind, &t.field).unwrap_or(&t.field);
            (selectable_field(group, kind, label, object) == t.value) != t.not_equal
        })
    }

    /// [`Self::matches`] from an object's name and namespace alone (string
    /// fields, as a cached object's index holds them); `None` when a term
    /// reads any other field, so the caller parses the object.
    pub fn matches_meta(
        &self,
        group: &str,
        kind: &str,
        name: &str,
        namespace: &str,
    ) -> Option<bool> {
        let group = if group == "core" { "" } else { group };
        self.terms.iter().try_fold(true, |all, t| {
            let label = convert_label(group, None, kind, &t.field).unwrap_or(&t.field);
            // The `selectable_field` arms that read name or namespace.
            let have = match (group, kind, label) {
                ("", "Node", "metadata.namespace") => "",
                ("", "Namespace", "name") | (_, _, "metadata.name") => name,
                (_, _, "metadata.namespace") => namespace,
                _ => return None,
            };
            Some(all && ((have == t.value) != t.not_equal))
        })
    }

    /// `andTerm.Empty`.
    pub fn is_empty(&self) -> bool {
        self.terms.is_empty()
    }

    /// The name if the selector pins `metadata.name=X` (`RequiresExactMatch("metadata.name")`);
    /// used for single-object watches.
    pub fn exact_name(&self) -> Option<&str> {
        self.requires_exact_match("metadata.name")
    }

    /// `Selector.RequiresExactMatch`: the value of the first `field=value` term on `field`.
    pub fn requires_exact_match(&self, field: &str) -> Option<&str> {
        self.terms
            .iter()
            .find(|t| !t.not_equal && t.field == field)
            .map(|t| t.value.as_str())
    }

    /// `ListResource`'s check for a single-object watch (a name in the path): a non-empty
    /// selector must pin that same `metadata.name`.
    pub fn check_requested_name(&self, name: &str) -> Result<(), SelectorError> {
        if self.is_empty() || self.exact_name() == Some(name) {
            Ok(())
        } else {
            Err(SelectorError::NameMismatch)
        }
    }
}

/// `splitTerms`: split at commas not escaped by a backslash (escapes are kept).
fn split_terms(s: &str) -> Vec<&str> {
    if s.is_empty() {
        return Vec::new();
    }
    let mut terms = Vec::new();
    let (mut start, mut in_slash) = (0, false);
    for (i, c) in s.char_indices() {
        if in_slash {
            in_slash = false;
        } else if c == '\\' {
            in_slash = true;
        } else if c == ',' {
            terms.push(&s[start..i]);
            start = i + 1;
        }
    }
    terms.push(&s[start..]);
    terms
}

/// `splitTerm`: at the first position where `!=`, `==` or `=` starts (in that preference).
fn split_term(term: &str) -> Option<(&str, &'static str, &str)> {
    for (i, _) in term.char_indices() {
        let rest = &term[i..];
        for op in ["!=", "==", "="] {
            if let Some(rhs) = rest.strip_prefix(op) {
                return Some((&term[..i], op, rhs));
            }
        }
    }
    None
}

/// `UnescapeValue`.
fn unescape_value(s: &str) -> Result<String, SelectorError> {
    if !s.contains(['\\', ',', '=']) {
        return Ok(s.to_string());
    }
    let mut out = String::with_capacity(s.len());
    let mut in_slash = false;
    for c in s.chars() {
        if in_slash {
            match c {
                '\\' | ',' | '=' => out.push(c),
                _ => return Err(SelectorError::InvalidEscapeSequence(format!("\\{c}"))),
            }
            in_slash = false;
            continue;
        }
        match c {
            '\\' => in_slash = true,
            ',' | '=' => return Err(SelectorError::UnescapedRune(c)),
            _ => out.push(c),
        }
    }
    if in_slash {
        return Err(SelectorError::InvalidEscapeSequence("\\".to_string()));
    }
    Ok(out)
}

/// A dotted path into the object, or `None` when any step is missing.
fn lookup<'a>(object: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(object, |v, key| match v {
        Value::Array(items) => items.get(key.parse::<usize>().ok()?),
        _ => v.get(key),
    })
}

/// Upstream's string form of a scalar: strings as-is, `true`/`false`, decimal numbers;
/// missing (or a non-scalar) is `""`.
fn string_at(object: &Value, path: &str) -> String {
    match lookup(object, path) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => n.to_string(),
        _ => String::new(),
    }
}

/// `strconv.FormatBool` of a bool field that defaults to false.
fn bool_at(object: &Value, path: &str) -> String {
    lookup(object, path)
        .and_then(Value::as_bool)
        .unwrap_or(false)
        .to_string()
}

/// `strconv.Itoa` of a count that defaults to 0.
fn int_at(object: &Value, path: &str) -> String {
    lookup(object, path)
        .and_then(Value::as_i64)
        .unwrap_or(0)
        .to_string()
}

/// First non-empty of two string fields.
fn string_or(object: &Value, path: &str, fallback: &str) -> String {
    let s = string_at(object, path);
    if s.is_empty() {
        string_at(object, fallback)
    } else {
        s
    }
}

/// The value `label` (already converted) has in the kind's `ToSelectableFields` set.
fn selectable_field(group: &str, kind: &str, label: &str, object: &Value) -> String {
    let group = if group == "core" { "" } else { group };
    match (group, kind, label) {
        // pkg/registry/core/pod/strategy.go ToSelectableFields
        ("", "Pod", "spec.hostNetwork") => bool_at(object, "spec.hostNetwork"),
        ("", "Pod", "status.podIP") => match lookup(object, "status.podIPs.0.ip") {
            Some(Value::String(ip)) => ip.clone(),
            _ => string_at(object, "status.podIP"),
        },
        ("", "Pod", "status.podIPs") => String::new(),
        // pkg/registry/core/node/strategy.go NodeToSelectableFields
        ("", "Node", "spec.unschedulable") => bool_at(object, "spec.unschedulable"),
        ("", "Node", "metadata.namespace") => String::new(),
        // pkg/registry/core/replicationcontroller/strategy.go
        ("", "ReplicationController", "status.replicas") => int_at(object, "status.replicas"),
        // pkg/registry/batch/job/strategy.go JobToSelectableFields
        ("batch", "Job", "status.successful") => int_at(object, "status.succeeded"),
        // pkg/registry/core/namespace/strategy.go ("name" kept for compatibility)
        ("", "Namespace", "name") => string_at(object, "metadata.name"),
        // pkg/registry/core/event/strategy.go ToSelectableFields on the core/v1 wire form
        ("", "Event", "source") => string_or(object, "source.component", "reportingComponent"),
        // ... and on the events.k8s.io/v1 wire form (regarding, reportingController,
        // deprecatedSource hold what core calls involvedObject, reportingComponent, source)
        ("events.k8s.io", "Event", "reportingComponent") => {
            string_at(object, "reportingController")
        }
        ("events.k8s.io", "Event", "source") => {
            string_or(object, "deprecatedSource.component", "reportingController")
        }
        ("events.k8s.io", "Event", l) if l.starts_with("involvedObject.") => {
            string_at(object, &l.replacen("involvedObject.", "regarding.", 1))
        }
        _ => string_at(object, label),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(s: &str) -> FieldSelector {
        FieldSelector::parse(s).unwrap_or_else(|e| panic!("{s:?}: {e}"))
    }

    /// Each line: `cell | cell | ...`, after the leading newline and indentation.
    fn rows(table: &str) -> impl Iterator<Item = Vec<&str>> {
        table
            .lines()
            .skip(1)
            .map(|l| l.trim_start().split(" | ").collect())
    }

    #[test]
    fn parsing_operators_and_escaping() {
        type Terms = &'static [(&'static str, &'static str, bool)];
        let cases: [(&str, Terms); 9] = [
            ("", &[]),
            (",,", &[]),
            ("a=b", &[("a", "b", false)]),
            ("a==b", &[("a", "b", false)]),
            ("a!=b", &[("a", "b", true)]),
            ("a=", &[("a", "", false)]),
            ("b=2,a!=1", &[("a", "1", true), ("b", "2", false)]),
            (r"a=x\,y\=z\\", &[("a", r"x,y=z\", false)]),
            (" a = b ", &[(" a ", " b ", false)]),
        ];
        for (s, want) in cases {
            let sel = parse(s);
            let got = sel
                .terms
                .iter()
                .map(|t| (&*t.field, &*t.value, t.not_equal));
            let got: Vec<_> = got.collect();
            assert_eq!(got, want.to_vec(), "{s:?}");
        }
        assert!(parse("").is_empty() && parse(",").is_empty() && !parse("a=b").is_empty());
    }

    const PARSE_ERRORS: &str = r"
        a | invalid selector: 'a'; can't understand 'a'
        x=1,ab | invalid selector: 'x=1,ab'; can't understand 'ab'
        a=b=c | invalid field selector: unescaped character in value: 61
        a=b\c | invalid field selector: invalid escape sequence: \c
        a=b\ | invalid field selector: invalid escape sequence: \";

    #[test]
    fn parse_errors() {
        for row in rows(PARSE_ERRORS) {
            let got = FieldSelector::parse(row[0])
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(got, Err(row[1].to_string()), "{row:?}");
        }
    }

    /// `group | kind | selector | the 400 message` (`core` is the core group).
    const UNSUPPORTED: &str = r#"
        core | Pod | spec.foo=bar | field label not supported: spec.foo
        core | Node | metadata.namespace=x | field label not supported: metadata.namespace
        core | ConfigMap | spec.foo=bar | "spec.foo" is not a known field selector: only "metadata.name", "metadata.namespace"
        apps | ReplicaSet | status.replicas=1 | "status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"
        batch | Job | status.succeeded=1 | field label "status.succeeded" not supported for batchv1.Job
        resource.k8s.io | ResourceSlice | spec.pool=x | field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: spec.pool
        events.k8s.io | Event | involvedObject.name=x | field label not supported: involvedObject.name
        core | Pod | z.b=1,a.b=1 | field label not supported: a.b"#;

    #[test]
    fn unsupported_field_errors() {
        for row in rows(UNSUPPORTED) {
            let got = parse(row[2]).validate_for(row[0], row[1]);
            assert_eq!(
                got.map_err(|e| e.to_string()),
                Err(row[3].to_string()),
                "{row:?}"
            );
        }
        let got = parse("spec.pool=x").validate_for_version(
            "resource.k8s.io",
            "v1beta2",
            "ResourceSlice",
        );
        let want =
            "field label not supported for resource.k8s.io/v1beta2, Kind=ResourceSlice: spec.pool";
        assert_eq!(got.map_err(|e| e.to_string()), Err(want.to_string()));
        let cr = parse("spec.color=red,metadata.namespace=a");
        assert!(cr
            .validate_for_custom_resource(true, &["spec.color"])
            .is_ok());
        let got = cr.validate_for_custom_resource(false, &["spec.color"]);
        let want = "field label not supported: metadata.namespace";
        assert_eq!(got.map_err(|e| e.to_string()), Err(want.to_string()));
    }

    /// `group | kind | object | selector`: every term validates and matches, and each term
    /// negated (`=` to `!=`) does not match.
    const KINDS: &str = r#"
        core | Pod | {"metadata":{"name":"p","namespace":"ns"},"spec":{"nodeName":"n1","restartPolicy":"Always","schedulerName":"s","serviceAccountName":"sa","hostNetwork":true},"status":{"phase":"Running","podIP":"10.0.0.1","podIPs":[{"ip":"10.0.0.1"}],"nominatedNodeName":"n2"}} | metadata.name=p,metadata.namespace=ns,spec.nodeName=n1,spec.host=n1,spec.restartPolicy=Always,spec.schedulerName=s,spec.serviceAccountName=sa,spec.hostNetwork=true,status.phase=Running,status.podIP=10.0.0.1,status.podIPs=,status.nominatedNodeName=n2
        core | Pod | {"metadata":{"name":"q"}} | spec.hostNetwork=false,spec.nodeName=,status.podIP=
        core | Pod | {"status":{"podIP":"1.1.1.1","podIPs":[{"ip":"2.2.2.2"}]}} | status.podIP=2.2.2.2
        core | Node | {"metadata":{"name":"n"},"spec":{"unschedulable":true}} | metadata.name=n,spec.unschedulable=true
        core | Node | {"metadata":{"name":"n"}} | spec.unschedulable=false
        core | ReplicationController | {"metadata":{"name":"r","namespace":"ns"},"status":{"replicas":3}} | metadata.name=r,metadata.namespace=ns,status.replicas=3
        core | ReplicationController | {"status":{}} | status.replicas=0
        core | Event | {"metadata":{"name":"e","namespace":"ns"},"involvedObject":{"kind":"Pod","namespace":"ns","name":"p","uid":"u","apiVersion":"v1","resourceVersion":"5","fieldPath":"spec"},"reason":"Started","reportingComponent":"kubelet","type":"Normal"} | involvedObject.kind=Pod,involvedObject.namespace=ns,involvedObject.name=p,involvedObject.uid=u,involvedObject.apiVersion=v1,involvedObject.resourceVersion=5,involvedObject.fieldPath=spec,reason=Started,reportingComponent=kubelet,source=kubelet,type=Normal,metadata.name=e,metadata.namespace=ns
        core | Event | {"source":{"component":"c"},"reportingComponent":"x"} | source=c,reportingComponent=x
        events.k8s.io | Event | {"metadata":{"name":"e","namespace":"ns"},"regarding":{"kind":"Pod","namespace":"ns","name":"p","uid":"u","apiVersion":"v1","resourceVersion":"5","fieldPath":"spec"},"reason":"Started","reportingController":"kubelet","type":"Normal"} | regarding.kind=Pod,regarding.namespace=ns,regarding.name=p,regarding.uid=u,regarding.apiVersion=v1,regarding.resourceVersion=5,regarding.fieldPath=spec,reason=Started,reportingController=kubelet,source=kubelet,type=Normal,metadata.name=e,metadata.namespace=ns
        events.k8s.io | Event | {"deprecatedSource":{"component":"c"}} | source=c,reportingController=
        core | Namespace | {"metadata":{"name":"ns"},"status":{"phase":"Active"}} | metadata.name=ns,status.phase=Active
        core | Secret | {"metadata":{"name":"s","namespace":"ns"},"type":"Opaque"} | metadata.name=s,metadata.namespace=ns,type=Opaque
        core | Service | {"metadata":{"name":"s","namespace":"ns"},"spec":{"clusterIP":"10.0.0.10","type":"ClusterIP"}} | metadata.name=s,metadata.namespace=ns,spec.clusterIP=10.0.0.10,spec.type=ClusterIP
        batch | Job | {"metadata":{"name":"j","namespace":"ns"},"status":{"succeeded":2}} | metadata.name=j,metadata.namespace=ns,status.successful=2
        batch | Job | {"metadata":{"name":"j"}} | status.successful=0
        certificates.k8s.io | CertificateSigningRequest | {"metadata":{"name":"c"},"spec":{"signerName":"x/y"}} | metadata.name=c,spec.signerName=x/y
        certificates.k8s.io | ClusterTrustBundle | {"metadata":{"name":"c"},"spec":{"signerName":"x/y"}} | metadata.name=c,spec.signerName=x/y
        certificates.k8s.io | PodCertificateRequest | {"metadata":{"name":"c"},"spec":{"signerName":"x/y","podName":"p","serviceAccountName":"sa","nodeName":"n"}} | metadata.name=c,spec.signerName=x/y,spec.podName=p,spec.serviceAccountName=sa,spec.nodeName=n
        resource.k8s.io | ResourceSlice | {"metadata":{"name":"r"},"spec":{"nodeName":"n","driver":"d"}} | metadata.name=r,spec.nodeName=n,spec.driver=d
        core | ConfigMap | {"metadata":{"name":"c","namespace":"ns"}} | metadata.name=c,metadata.namespace=ns
        rbac.authorization.k8s.io | ClusterRole | {"metadata":{"name":"c"}} | metadata.name=c,metadata.namespace="#;

    #[test]
    fn every_kind_field_validates_and_matches() {
        for row in rows(KINDS) {
            let obj: Value = serde_json::from_str(row[2]).unwrap_or_else(|e| panic!("{e}"));
            let sel = parse(row[3]);
            assert!(
                sel.validate_for(row[0], row[1]).is_ok(),
                "{row:?} validates"
            );
            assert!(sel.matches(row[0], row[1], &obj), "{row:?} matches");
            for term in row[3].split(',') {
                let neg = parse(&term.replacen('=', "!=", 1));
                assert!(
                    !neg.matches(row[0], row[1], &obj),
                    "{row:?}: {term} negated"
                );
            }
        }
        // a field missing on the object reads as ""
        assert!(parse("spec.nodeName!=x").matches("", "Pod", &json!({})));
        // custom resources: selectable fields read by path; numbers and bools stringified
        let cr =
            json!({"metadata": {"name": "w"}, "spec": {"color": "red", "size": 3, "on": false}});
        assert!(parse("spec.color=red,spec.size=3,spec.on=false").matches("x.io", "W", &cr));
        assert!(!parse("spec.color=blue").matches("x.io", "W", &cr));
    }

    #[test]
    fn exact_name_and_requested_name() {
        assert_eq!(parse("metadata.name=a").exact_name(), Some("a"));
        assert_eq!(parse("metadata.name==a,spec.x=1").exact_name(), Some("a"));
        assert_eq!(
            parse("metadata.name=b,metadata.name=a").exact_name(),
            Some("a")
        );
        assert_eq!(parse("metadata.name!=a").exact_name(), None);
        assert_eq!(parse("").exact_name(), None);
        assert!(parse("").check_requested_name("a").is_ok());
        assert!(parse("metadata.name=a").check_requested_name("a").is_ok());
        let got = parse("spec.x=1").check_requested_name("a");
        assert_eq!(got, Err(SelectorError::NameMismatch));
    }

    /// `matches_meta` (a cached object's index) agrees with `matches` whenever
    /// it answers, and declines selectors on other fields.
    #[test]
    fn name_and_namespace_from_the_index_agree_with_the_tree() {
        let object =
            json!({"metadata": {"name": "a", "namespace": "ns"}, "spec": {"nodeName": "n"}});
        let kinds = [
            ("", "Pod"),
            ("", "Node"),
            ("", "Namespace"),
            ("", "ConfigMap"),
            ("apps", "Deployment"),
            ("events.k8s.io", "Event"),
            ("example.com", "Widget"),
        ];
        let selectors = [
            "metadata.name=a",
            "metadata.name!=a",
            "metadata.name=b",
            "metadata.namespace=ns",
            "metadata.namespace!=ns",
            "metadata.namespace=",
            "name=a",
            "metadata.name=a,metadata.namespace=ns",
            "metadata.name=a,metadata.namespace=x",
            "spec.nodeName=n",
            "metadata.name=a,spec.nodeName=n",
        ];
        let mut answered = 0;
        for (group, kind) in kinds {
            for selector in selectors {
                let sel = parse(selector);
                let tree = sel.matches(group, kind, &object);
                if let Some(indexed) = sel.matches_meta(group, kind, "a", "ns") {
                    answered += 1;
                    assert_eq!(indexed, tree, "{selector} on {group}/{kind}");
                }
            }
            let other = parse("spec.nodeName=n").matches_meta(group, kind, "a", "ns");
            assert_eq!(other, None, "{group}/{kind}");
        }
        assert!(answered > 40);
    }
}
