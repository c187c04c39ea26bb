//! Cases from kube's `TestValidateServiceCreate`, `TestValidateServiceUpdate`
//! and `TestValidateServiceClusterIPsRelatedFields`
//! (`core/validation/validation_test.go`), on defaulted Services.

use serde_json::{json, Value};

use super::*;

fn defaulted(mut object: Value) -> Value {
    let registry = crate::registry::Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", "services").expect("served");
    crate::defaults::apply(resource, &mut object);
    object
}

fn texts(spec: Value) -> Vec<String> {
    let object = defaulted(json!({"metadata": {"name": "s"}, "spec": spec}));
    service(&object).iter().map(ToString::to_string).collect()
}

/// kube's `makeValidService` after allocation: a single-stack ClusterIP.
fn valid() -> Value {
    json!({"type": "ClusterIP", "clusterIP": "1.2.3.4", "clusterIPs": ["1.2.3.4"],
           "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "selector": {"key": "val"},
           "ports": [{"name": "p", "port": 8675, "targetPort": 8675}]})
}

fn with(changes: Value) -> Value {
    let mut spec = valid();
    for (name, value) in changes.as_object().into_iter().flatten() {
        if value.is_null() {
            spec.as_object_mut().map(|map| map.remove(name));
        } else {
            spec[name] = value.clone();
        }
    }
    spec
}

#[test]
fn services_as_kube_validates_them() {
    assert!(texts(json!({"ports": [{"port": 80}], "selector": {"app": "web"}})).is_empty());
    assert!(
        texts(json!({"clusterIP": "None", "clusterIPs": ["None"]})).is_empty(),
        "headless without ports"
    );
    assert!(texts(json!({"type": "ExternalName", "externalName": "example.com."})).is_empty());
    assert!(texts(json!({"type": "NodePort", "ports": [{"name": "a", "port": 80, "nodePort": 30080}, {"name": "b", "port": 81, "targetPort": "http"}]})).is_empty());
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (json!({}), vec!["spec.ports: Required value"]),
        (
            json!({"ports": [{"port": 80}, {"port": 0, "protocol": "HTTP", "targetPort": "Bad_Port"}]}),
            vec![
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Required value",
                "spec.ports[1].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[1].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[1].targetPort: Invalid value: \"Bad_Port\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
            ],
        ),
        (
            json!({"ports": [{"name": "a", "port": 80}, {"name": "a", "port": 80}]}),
            vec![
                "spec.ports[1].name: Duplicate value: \"a\"",
                "spec.ports[1]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:80, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
            ],
        ),
        (
            json!({"ports": [{"port": 80, "nodePort": 30001}]}),
            vec!["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"],
        ),
        (
            json!({"type": "ExternalName", "clusterIP": "10.0.0.1", "clusterIPs": ["10.0.0.1"]}),
            vec![
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.externalName: Required value",
            ],
        ),
        (
            json!({"type": "Bogus", "ports": [{"port": 80}], "sessionAffinity": "Sticky"}),
            vec![
                "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\"",
                "spec.type: Unsupported value: \"Bogus\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\"",
            ],
        ),
        (
            json!({"type": "LoadBalancer", "ports": [{"port": 10250}]}),
            vec!["spec.ports[0]: Invalid value: 10250: may not expose port 10250 externally since it is used by kubelet"],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(texts(spec.clone()), expected, "{spec}");
    }
}

/// `TestValidateServiceCreate`'s cases for the rules beyond ports and type.
#[test]
fn service_fields_as_kube_validates_them() {
    let valid_cases = [
        json!({}),
        json!({"externalIPs": ["1.2.3.4", "2001:db8::1"]}),
        json!({"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/8", " 192.168.0.0/16 "], "loadBalancerClass": "test.com/test-lb-class"}),
        json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30123}),
        json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86400}}}),
        json!({"sessionAffinity": "ClientIP"}),
        json!({"trafficDistribution": "PreferClose"}),
        json!({"trafficDistribution": "PreferSameNode"}),
        json!({"internalTrafficPolicy": "Local"}),
        json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false}),
        json!({"clusterIP": "None", "clusterIPs": ["None"], "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "RequireDualStack"}),
        json!({"clusterIPs": ["1.2.3.4", "2001::1"], "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "PreferDualStack"}),
    ];
    for changes in valid_cases {
        assert_eq!(
            texts(with(changes.clone())),
            Vec::<String>::new(),
            "{changes}"
        );
    }
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"externalIPs": ["myhost.mydomain", "127.0.0.1", "0.0.0.0"]}),
            vec![
                "spec.externalIPs[0]: Invalid value: \"myhost.mydomain\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.externalIPs[1]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "spec.externalIPs[2]: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
            ],
        ),
        (
            json!({"loadBalancerSourceRanges": ["10.0.0.0/8"]}),
            vec!["spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'"],
        ),
        (
            json!({"type": "LoadBalancer", "loadBalancerSourceRanges": ["10.0.0.0/33"]}),
            vec!["spec.LoadBalancerSourceRanges[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"],
        ),
        (
            json!({"loadBalancerClass": "test.com/test-lb-class"}),
            vec!["spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'"],
        ),
        (
            json!({"type": "LoadBalancer", "loadBalancerClass": "-x"}),
            vec!["spec.loadBalancerClass: Invalid value: \"-x\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"],
        ),
        (
            json!({"allocateLoadBalancerNodePorts": true}),
            vec!["spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'"],
        ),
        (
            json!({"externalTrafficPolicy": "Local"}),
            vec!["spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services"],
        ),
        (
            json!({"type": "NodePort", "externalTrafficPolicy": "Everywhere"}),
            vec!["spec.externalTrafficPolicy: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Local\""],
        ),
        (
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local"}),
            vec!["spec.healthCheckNodePort: Required value"],
        ),
        (
            json!({"type": "LoadBalancer", "healthCheckNodePort": 30123}),
            vec!["spec.healthCheckNodePort: Invalid value: 30123: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"],
        ),
        (
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 70000}),
            vec!["spec.healthCheckNodePort: Invalid value: 70000: must be between 1 and 65535, inclusive"],
        ),
        (
            json!({"internalTrafficPolicy": "Node"}),
            vec!["spec.internalTrafficPolicy: Unsupported value: \"Node\": supported values: \"Cluster\", \"Local\""],
        ),
        (
            json!({"trafficDistribution": "Random"}),
            vec!["spec.trafficDistribution: Unsupported value: \"Random\": supported values: \"PreferClose\", \"PreferSameZone\", \"PreferSameNode\""],
        ),
        (
            json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}}}),
            vec!["spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400"],
        ),
        (
            json!({"sessionAffinity": "ClientIP", "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 0}}}),
            vec!["spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 0: must be greater than 0 and less than 86400"],
        ),
    ];
    for (changes, expected) in cases {
        assert_eq!(texts(with(changes.clone())), expected, "{changes}");
    }
}

#[test]
fn source_ranges_annotation_and_topology_annotations() {
    let annotated = |annotations: Value, spec: Value| {
        let object =
            defaulted(json!({"metadata": {"name": "s", "annotations": annotations}, "spec": spec}));
        service(&object)
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    };
    let key = "service.beta.kubernetes.io/load-balancer-source-ranges";
    assert!(annotated(
        json!({key: " 10.0.0.0/8, 1.2.3.0/24 "}),
        with(json!({"type": "LoadBalancer"}))
    )
    .is_empty());
    assert_eq!(
        annotated(json!({key: "10.0.0.0/8,foo"}), valid()),
        [
            format!("metadata.annotations[{key}]: Forbidden: may only be used when `type` is 'LoadBalancer'"),
            format!("metadata.annotations[{key}]: Invalid value: \"foo\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"),
        ]
    );
    assert_eq!(
        annotated(
            json!({"service.kubernetes.io/topology-mode": "Auto", "service.kubernetes.io/topology-aware-hints": "Disabled"}),
            valid()
        ),
        ["metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: \"Auto\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified"]
    );
}

/// `TestValidateServiceClusterIPsRelatedFields`.
#[test]
fn cluster_ip_fields_as_kube_validates_them() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"clusterIPs": ["1.2.3.5"]}),
            vec!["spec.clusterIPs: Invalid value: []string{\"1.2.3.5\"}: first value must match `clusterIP`"],
        ),
        (
            json!({"clusterIP": null}),
            vec!["spec.clusterIPs: Invalid value: []string{\"1.2.3.4\"}: must be empty when `clusterIP` is not specified"],
        ),
        (json!({"clusterIPs": null}), vec!["spec.clusterIPs: Required value"]),
        (
            json!({"ipFamilies": ["IPv5", "IPv5"], "ipFamilyPolicy": "Double"}),
            vec![
                "spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"",
                "spec.ipFamilies[1]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"",
                "spec.ipFamilies[1]: Duplicate value: \"IPv5\"",
                "spec.ipFamilyPolicy: Unsupported value: \"Double\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"",
            ],
        ),
        (
            json!({"clusterIPs": ["1.2.3.4", "not-an-ip", "None"]}),
            vec![
                "spec.clusterIPs[1]: Invalid value: \"not-an-ip\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.clusterIPs[2]: Invalid value: \"None\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.clusterIPs: Invalid value: []string{\"1.2.3.4\", \"not-an-ip\", \"None\"}: may only hold up to 2 values",
            ],
        ),
        (
            json!({"clusterIP": "None", "clusterIPs": ["None", "1.2.3.4"]}),
            vec!["spec.clusterIPs: Invalid value: []string{\"None\", \"1.2.3.4\"}: 'None' must be the first and only value"],
        ),
        (
            json!({"clusterIPs": ["1.2.3.4", "1.2.3.5"], "ipFamilyPolicy": "RequireDualStack"}),
            vec!["spec.clusterIPs: Invalid value: []string{\"1.2.3.4\", \"1.2.3.5\"}: may specify no more than one IP for each IP family"],
        ),
        (
            json!({"clusterIP": "2001::1", "clusterIPs": ["2001::1"]}),
            vec!["spec.clusterIPs[0]: Invalid value: \"2001::1\": expected an IPv4 value as indicated by `ipFamilies[0]`"],
        ),
    ];
    for (changes, expected) in cases {
        assert_eq!(texts(with(changes.clone())), expected, "{changes}");
    }
}

fn update_texts(old: Value, new: Value) -> Vec<String> {
    let old = defaulted(json!({"metadata": {"name": "s"}, "spec": old}));
    let new = defaulted(json!({"metadata": {"name": "s"}, "spec": new}));
    service_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// `TestValidateServiceUpdate`.
#[test]
fn service_updates_as_kube_validates_them() {
    let dual = json!({"clusterIPs": ["1.2.3.4", "2001::1"], "ipFamilies": ["IPv4", "IPv6"], "ipFamilyPolicy": "PreferDualStack"});
    let valid_updates = [
        (valid(), with(json!({"ports": [{"name": "q", "port": 80}]}))),
        (valid(), with(dual.clone())),
        (
            with(dual.clone()),
            with(json!({"ipFamilyPolicy": "SingleStack"})),
        ),
        (
            valid(),
            with(
                json!({"type": "ExternalName", "externalName": "a.b", "clusterIP": null, "clusterIPs": null, "ipFamilies": null, "ipFamilyPolicy": null}),
            ),
        ),
        (
            with(json!({"clusterIP": "None", "clusterIPs": ["None"]})),
            with(json!({"clusterIP": "None", "clusterIPs": ["None"], "ipFamilies": ["IPv6"]})),
        ),
    ];
    for (old, new) in valid_updates {
        assert_eq!(
            update_texts(old, new.clone()),
            Vec::<String>::new(),
            "{new}"
        );
    }
    let cases: Vec<(Value, Value, Vec<&str>)> = vec![
        (
            valid(),
            with(json!({"clusterIP": "1.2.3.5", "clusterIPs": ["1.2.3.5"]})),
            vec!["spec.clusterIPs[0]: Invalid value: []string{\"1.2.3.5\"}: may not change once set"],
        ),
        (
            with(dual.clone()),
            with(json!({"ipFamilyPolicy": "PreferDualStack"})),
            vec![
                "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary clusterIP",
                "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary ipFamily",
            ],
        ),
        (
            valid(),
            with(json!({"ipFamilies": ["IPv6"], "clusterIP": "2001::1", "clusterIPs": ["2001::1"]})),
            vec![
                "spec.clusterIPs[0]: Invalid value: []string{\"2001::1\"}: may not change once set",
                "spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv6\"}: may not change once set",
            ],
        ),
        (
            with(json!({"type": "LoadBalancer", "loadBalancerClass": "a.io/one"})),
            with(json!({"type": "LoadBalancer", "loadBalancerClass": "a.io/two"})),
            vec!["spec.loadBalancerClass: Invalid value: \"a.io/two\": may not change once set"],
        ),
        (
            with(json!({"type": "LoadBalancer"})),
            with(json!({"type": "LoadBalancer", "loadBalancerClass": "a.io/two"})),
            vec!["spec.loadBalancerClass: Invalid value: \"a.io/two\": may not change once set"],
        ),
        (
            with(json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30100})),
            with(json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local", "healthCheckNodePort": 30101})),
            vec!["spec.healthCheckNodePort: Forbidden: field is immutable"],
        ),
    ];
    for (old, new, expected) in cases {
        assert_eq!(update_texts(old, new.clone()), expected, "{new}");
    }
}
