//! Cases from kube's `TestValidateIngressCreate`, `TestValidateIngressUpdate`,
//! `TestValidateIngressRuleValue`, `TestValidateIngressTLS`,
//! `TestValidateIngressClass`, `TestValidateNetworkPolicy`,
//! `TestValidateNetworkPolicyUpdate` (`networking/validation/validation_test.go`).

use serde_json::{json, Value};

use super::*;

fn texts(errors: &[FieldError]) -> Vec<String> {
    errors.iter().map(ToString::to_string).collect()
}

fn backend() -> Value {
    json!({"service": {"name": "default-backend", "port": {"number": 80}}})
}

fn ingress_with(spec: Value) -> Value {
    json!({"metadata": {"name": "foo", "namespace": "default"}, "spec": spec})
}

fn rule_with_path(path: &str, path_type: &str) -> Value {
    json!({"host": "foo.bar.com", "http": {"paths": [
        {"path": path, "pathType": path_type, "backend": backend()}
    ]}})
}

#[test]
fn valid_ingresses_pass() {
    for spec in [
        json!({"defaultBackend": backend()}),
        json!({"rules": [rule_with_path("/foo", "Exact")]}),
        json!({"rules": [rule_with_path("/", "Prefix")]}),
        json!({"rules": [rule_with_path("", "ImplementationSpecific")]}),
        json!({"rules": [{"host": "*.bar.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": backend()}]}}]}),
        json!({"rules": [{"host": "foo.bar.com"}]}),
        json!({"defaultBackend": {"resource": {"apiGroup": "example.com", "kind": "foo", "name": "bar"}}}),
        json!({"defaultBackend": {"service": {"name": "svc", "port": {"name": "http"}}}}),
        json!({"defaultBackend": backend(), "tls": [{"hosts": ["*.foo.com", "bar.com"], "secretName": "tls-secret"}]}),
    ] {
        assert_eq!(
            texts(&ingress(&ingress_with(spec.clone()))),
            Vec::<String>::new(),
            "{spec}"
        );
    }
}

#[test]
fn invalid_ingresses_report_kube_paths_and_messages() {
    let wildcard_message = WILDCARD_DNS1123_SUBDOMAIN;
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({}),
            vec!["spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified".into()],
        ),
        (
            json!({"rules": []}),
            vec!["spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified".into()],
        ),
        (
            json!({"rules": [rule_with_path("foo", "Exact")]}),
            vec!["spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path".into()],
        ),
        (
            json!({"rules": [rule_with_path("/foo//bar", "Prefix")]}),
            vec!["spec.rules[0].http.paths[0].path: Invalid value: \"/foo//bar\": must not contain '//'".into()],
        ),
        (
            json!({"rules": [rule_with_path("/foo/..", "Exact")]}),
            vec!["spec.rules[0].http.paths[0].path: Invalid value: \"/foo/..\": cannot end with '/..'".into()],
        ),
        (
            json!({"rules": [rule_with_path("foo", "ImplementationSpecific")]}),
            vec!["spec.rules[0].http.paths[0].path: Invalid value: \"foo\": must be an absolute path".into()],
        ),
        (
            json!({"rules": [rule_with_path("/", "Regex")]}),
            vec!["spec.rules[0].http.paths[0].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"".into()],
        ),
        (
            json!({"rules": [{"host": "foo", "http": {"paths": [{"path": "/", "backend": backend()}]}}]}),
            vec!["spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified".into()],
        ),
        (
            json!({"rules": [{"host": "foo", "http": {"paths": []}}]}),
            vec!["spec.rules[0].http.paths: Required value".into()],
        ),
        (
            json!({"rules": [{"host": "127.0.0.1"}]}),
            vec!["spec.rules[0].host: Invalid value: \"127.0.0.1\": must be a DNS name, not an IP address".into()],
        ),
        (
            json!({"rules": [{"host": "foo.*.bar.com"}]}),
            vec![format!("spec.rules[0].host: Invalid value: \"foo.*.bar.com\": {wildcard_message}")],
        ),
        (
            json!({"rules": [{"host": "Foo.com"}]}),
            vec!["spec.rules[0].host: Invalid value: \"Foo.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "svc", "port": {"name": "http", "number": 80}}}}),
            vec!["spec.defaultBackend: Invalid value: \"\": cannot set both port name & port number".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "svc", "port": {}}}}),
            vec!["spec.defaultBackend: Required value: port name or number is required".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "svc", "port": {"number": 70000}}}}),
            vec!["spec.defaultBackend.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "", "port": {"number": 80}}}}),
            vec!["spec.defaultBackend.service.name: Required value".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "1svc", "port": {"number": 80}}}}),
            vec!["spec.defaultBackend.service.name: Invalid value: \"1svc\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into()],
        ),
        (
            json!({"defaultBackend": {"service": {"name": "svc", "port": {"number": 80}}, "resource": {"kind": "k", "name": "n"}}}),
            vec!["spec.defaultBackend: Invalid value: \"\": cannot set both resource and service backends".into()],
        ),
        (
            json!({"defaultBackend": {}}),
            vec!["spec.defaultBackend: Invalid value: \"\": resource or service backend is required".into()],
        ),
        (
            json!({"defaultBackend": {"resource": {"kind": "a/b"}}}),
            vec![
                "spec.defaultBackend.resource.kind: Invalid value: \"a/b\": may not contain '/'".into(),
                "spec.defaultBackend.resource.name: Required value".into(),
            ],
        ),
        (
            json!({"defaultBackend": backend(), "tls": [{"hosts": ["*.*.foo.com"]}]}),
            vec![format!("spec.tls[0].hosts[0]: Invalid value: \"*.*.foo.com\": {wildcard_message}")],
        ),
        (
            json!({"defaultBackend": backend(), "tls": [{"secretName": "Bad_Name"}]}),
            vec!["spec.tls[0].secretName: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&ingress(&ingress_with(spec.clone()))),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn ingress_class_annotation_must_match_the_field_on_create() {
    let object = json!({
        "metadata": {"name": "foo", "annotations": {"kubernetes.io/ingress.class": "foo"}},
        "spec": {"defaultBackend": backend(), "ingressClassName": "bar"}
    });
    assert_eq!(
        texts(&ingress(&object)),
        vec!["annotations.kubernetes.io/ingress.class: Invalid value: \"foo\": must match `ingressClassName` when both are specified"]
    );
    // An update does not check the annotation.
    assert!(ingress_update(&object, &object).is_empty());
}

#[test]
fn ingress_updates_keep_the_old_objects_leniencies() {
    let bad_secret =
        ingress_with(json!({"defaultBackend": backend(), "tls": [{"secretName": "Bad_Name"}]}));
    let good = ingress_with(json!({"defaultBackend": backend()}));
    assert!(ingress_update(&bad_secret, &bad_secret).is_empty());
    assert_eq!(ingress_update(&bad_secret, &good).len(), 1);
    let bad_wildcard_rule =
        ingress_with(json!({"rules": [{"host": "*.foo.com", "http": {"paths": [
        {"path": "foo", "pathType": "Prefix", "backend": backend()}]}}]}));
    assert!(ingress_update(&bad_wildcard_rule, &bad_wildcard_rule).is_empty());
    assert_eq!(ingress_update(&bad_wildcard_rule, &good).len(), 1);
}

#[test]
fn ingress_status_addresses() {
    let old = json!({});
    let status = |ingress: Value| json!({"status": {"loadBalancer": {"ingress": [ingress]}}});
    assert!(ingress_status_update(
        &status(json!({"ip": "1.2.3.4", "hostname": "lb.example.com"})),
        &old
    )
    .is_empty());
    assert_eq!(
        texts(&ingress_status_update(&status(json!({"ip": "999.0.0.1"})), &old)),
        vec!["status.loadBalancer.ingress[0].ip: Invalid value: \"999.0.0.1\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    );
    assert_eq!(
        texts(&ingress_status_update(&status(json!({"hostname": "1.2.3.4"})), &old)),
        vec!["status.loadBalancer.ingress[0].hostname: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address"]
    );
}

fn class(spec: Value) -> Value {
    json!({"metadata": {"name": "test123"}, "spec": spec})
}

#[test]
fn ingress_classes() {
    assert!(ingress_class(&class(json!({"controller": "foo.co/bar"}))).is_empty());
    assert!(ingress_class(&class(json!({"controller": "foo.co/bar", "parameters": {
        "apiGroup": "example.com", "kind": "foo", "name": "bar", "scope": "Namespace", "namespace": "foo-ns"}}))).is_empty());
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({}), vec!["spec.controller: Required value".into()]),
        (
            json!({"controller": "foo.co"}),
            vec!["spec.controller: Invalid value: \"foo.co\": must be a domain-prefixed path (such as \"acme.io/foo\")".into()],
        ),
        (
            json!({"controller": "foo.co/bar^"}),
            vec!["spec.controller: Invalid value: \"bar^\": must be a valid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')".into()],
        ),
        (
            json!({"controller": format!("foo.co/{}", "a".repeat(250))}),
            vec!["spec.controller: Too long: may not be more than 250 bytes".into()],
        ),
        (
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar"}}),
            vec!["spec.parameters.scope: Required value".into()],
        ),
        (
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Namespace"}}),
            vec!["spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'".into()],
        ),
        (
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "Cluster", "namespace": "x"}}),
            vec!["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'".into()],
        ),
        (
            json!({"controller": "foo.co/bar", "parameters": {"kind": "foo", "name": "bar", "scope": "foo"}}),
            vec!["spec.parameters.scope: Unsupported value: \"foo\": supported values: \"Cluster\", \"Namespace\"".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&ingress_class(&class(spec.clone()))),
            expected,
            "{spec}"
        );
    }
    let old = class(json!({"controller": "foo.co/bar"}));
    let changed = class(json!({"controller": "foo.co/baz"}));
    assert_eq!(
        texts(&ingress_class_update(&changed, &old)),
        vec!["spec.controller: Invalid value: \"foo.co/baz\": field is immutable"]
    );
    assert!(ingress_class_update(&old, &old).is_empty());
}

fn policy(spec: Value) -> Value {
    json!({"metadata": {"name": "bar", "namespace": "foo"}, "spec": spec})
}

#[test]
fn valid_network_policies_pass() {
    for spec in [
        json!({"podSelector": {"matchLabels": {"a": "b"}}}),
        json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.0.0/16", "except": ["192.168.3.0/24", "192.168.4.0/24"]}}],
            "ports": [{"protocol": "TCP", "port": 80, "endPort": 90}, {"protocol": "UDP", "port": "dns"}]}]}),
        json!({"podSelector": {}, "egress": [{"to": [{"namespaceSelector": {"matchLabels": {"c": "d"}}, "podSelector": {"matchLabels": {"e": "f"}}}]}],
            "policyTypes": ["Ingress", "Egress"]}),
        json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "fd00:192:168::/48", "except": ["fd00:192:168:3::/64"]}}]}]}),
    ] {
        assert_eq!(
            texts(&network_policy(&policy(spec.clone()))),
            Vec::<String>::new(),
            "{spec}"
        );
    }
}

#[test]
fn invalid_network_policies_report_kube_paths_and_messages() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"protocol": "HTTP", "port": 80}]}]}),
            vec!["spec.ingress[0].ports[0].protocol: Unsupported value: \"HTTP\": supported values: \"TCP\", \"UDP\", \"SCTP\"".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": 0}]}]}),
            vec!["spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": 90, "endPort": 80}]}]}),
            vec!["spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"ports": [{"port": "http", "endPort": 80}]}]}),
            vec!["spec.ingress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is non-numeric".into()],
        ),
        (
            json!({"podSelector": {}, "egress": [{"ports": [{"endPort": 80}]}]}),
            vec!["spec.egress[0].ports[0].endPort: Invalid value: 80: may not be specified when `port` is not specified".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{}]}]}),
            vec!["spec.ingress[0].from[0]: Required value: must specify a peer".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}}]}]}),
            vec!["spec.ingress[0].from[0]: Forbidden: may not specify both ipBlock and another peer".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": ""}}]}]}),
            vec!["spec.ingress[0].from[0].ipBlock.cidr: Required value".into()],
        ),
        (
            json!({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "192.168.5.6"}}]}]}),
            vec!["spec.egress[0].to[0].ipBlock.cidr: Invalid value: \"192.168.5.6\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.8.0/24", "except": ["192.168.9.1/24"]}}]}]}),
            vec!["spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"192.168.9.1/24\": must be a strict subset of `cidr`".into()],
        ),
        (
            json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "192.168.8.0/24", "except": ["192.168.8.0/24"]}}]}]}),
            vec!["spec.ingress[0].from[0].ipBlock.except[0]: Invalid value: \"192.168.8.0/24\": must be a strict subset of `cidr`".into()],
        ),
        (
            json!({"podSelector": {}, "policyTypes": ["foo"]}),
            vec!["spec.policyTypes[0]: Unsupported value: \"foo\": supported values: \"Ingress\", \"Egress\"".into()],
        ),
        (
            json!({"podSelector": {}, "policyTypes": ["Ingress", "Egress", "Ingress"]}),
            vec!["spec.policyTypes: Invalid value: []networking.PolicyType{\"Ingress\", \"Egress\", \"Ingress\"}: may not specify more than two policyTypes".into()],
        ),
        (
            json!({"podSelector": {"matchLabels": {"a": "b c"}}}),
            vec!["spec.podSelector.matchLabels: Invalid value: \"b c\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')".into()],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            texts(&network_policy(&policy(spec.clone()))),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn network_policy_updates_keep_old_invalid_cidrs() {
    let old = policy(
        json!({"podSelector": {}, "ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.0/40"}}]}]}),
    );
    assert!(network_policy_update(&old, &old).is_empty());
    let new = policy(
        json!({"podSelector": {}, "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/40"}}]}]}),
    );
    assert!(network_policy_update(&new, &old).is_empty());
    assert_eq!(network_policy(&new).len(), 1);
}
