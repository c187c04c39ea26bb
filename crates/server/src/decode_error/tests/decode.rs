use super::*;

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
        decode(CM, "v1", r#"{"kind":5,"kind":"ConfigMap"}"#).is_some_and(
            |m| m.contains("cannot unmarshal number into Go struct field .kind of type string")
        )
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
        Some(
            "the API version in the data (__internal) does not match the expected API version (v1)"
        )
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
