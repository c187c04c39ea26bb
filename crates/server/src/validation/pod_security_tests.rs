//! Cases from kube's `TestValidatePodSpec`, `TestValidateSecurityContext`,
//! `TestValidateSysctls`, `TestValidateWindowsSecurityContextOptions`,
//! `TestValidateOSFields`, `TestValidateSeccompAnnotationsAndFields`,
//! `TestValidateAppArmorProfileFormat`, `TestValidatePodCreateWithSchedulingGates`
//! neighbours, `TestValidateLifecycle`/`TestValidateResizePolicy`
//! (`core/validation/validation_test.go`), on defaulted pods and templates,
//! with `--allow-privileged` at kube's default (false).

use serde_json::{json, Value};

use super::*;
use crate::registry::Registry;

fn defaulted_pod(annotations: Value, spec: Value) -> Value {
    let registry = Registry::new(crate::registry::builtin_resources());
    let resource = registry.lookup("", "v1", "pods").expect("served");
    let mut object = json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "p", "annotations": annotations},
        "spec": spec
    });
    crate::defaults::apply(resource, &mut object);
    object
}

fn errors_of(annotations: Value, spec: Value) -> Vec<String> {
    crate::validation::pod::pod(&defaulted_pod(annotations, spec))
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn template_errors_of(spec: Value) -> Vec<String> {
    crate::validation::pod::pod_template_spec(Some(&json!({"spec": spec})), "template")
        .iter()
        .map(ToString::to_string)
        .collect()
}

fn with_container(extra: Value, spec: Value) -> Value {
    let mut container = json!({"name": "c", "image": "nginx"});
    if let (Some(container), Some(extra)) = (container.as_object_mut(), extra.as_object()) {
        container.extend(extra.clone());
    }
    let mut spec = spec;
    if let Some(spec) = spec.as_object_mut() {
        spec.insert("containers".into(), json!([container]));
    }
    spec
}

#[test]
fn valid_security_settings_pass() {
    let valid = [
        with_container(
            json!({"securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"add": ["NET_ADMIN"], "drop": ["ALL"]},
                   "procMount": "Default", "seccompProfile": {"type": "Localhost", "localhostProfile": "profiles/audit.json"},
                   "appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-apparmor-example"},
                   "runAsUser": 1000, "runAsGroup": 1000, "readOnlyRootFilesystem": true}}),
            json!({"securityContext": {
                "fsGroup": 2000, "fsGroupChangePolicy": "OnRootMismatch", "supplementalGroupsPolicy": "Strict",
                "seLinuxChangePolicy": "MountOption", "seccompProfile": {"type": "RuntimeDefault"},
                "appArmorProfile": {"type": "RuntimeDefault"},
                "sysctls": [{"name": "kernel.shm_rmid_forced", "value": "0"}, {"name": "net.ipv4.route/min_pmtu", "value": "1000"},
                            {"name": "kernel/shm_rmid_forced", "value": "0"}]
            }}),
        ),
        with_container(
            json!({"securityContext": {"procMount": "Unmasked"}}),
            json!({"hostUsers": false}),
        ),
        with_container(
            json!({"ports": [{"containerPort": 8080, "hostPort": 8080}],
                   "lifecycle": {"postStart": {"exec": {"command": ["true"]}}, "preStop": {"sleep": {"seconds": 0}}},
                   "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "NotRequired"}, {"resourceName": "memory", "restartPolicy": "RestartContainer"}]}),
            json!({"hostNetwork": true}),
        ),
        with_container(
            json!({"securityContext": {"windowsOptions": {"gmsaCredentialSpecName": "gmsa", "runAsUserName": "NT AUTHORITY\\NETWORK SERVICE"}}}),
            json!({"os": {"name": "windows"}, "securityContext": {"windowsOptions": {"runAsUserName": "Container.User"}}}),
        ),
        with_container(
            json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}),
            json!({"os": {"name": "linux"}, "hostPID": true, "hostIPC": true, "securityContext": {"sysctls": [{"name": "kernel.domainname", "value": "x"}]}}),
        ),
    ];
    for spec in valid {
        assert_eq!(
            errors_of(json!({}), spec.clone()),
            Vec::<String>::new(),
            "{spec}"
        );
    }
    // Annotations that agree with the fields.
    let spec = with_container(
        json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"},
               "appArmorProfile": {"type": "Localhost", "localhostProfile": "prof"}}}),
        json!({"securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}),
    );
    let annotations = json!({
        "seccomp.security.alpha.kubernetes.io/pod": "docker/default",
        "container.seccomp.security.alpha.kubernetes.io/c": "localhost/p.json",
        "container.apparmor.security.beta.kubernetes.io/c": "localhost/prof",
        "controller.kubernetes.io/pod-deletion-cost": "-10"
    });
    assert_eq!(errors_of(annotations, spec), Vec::<String>::new());
}

#[test]
fn container_security_context_fails_as_kube() {
    let rendered = "core.SecurityContext{Capabilities:(*core.Capabilities)(nil), Privileged:(*bool)(0xc000000000), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(0xc000000000), ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}";
    let cases: Vec<(Value, Vec<String>)> = vec![
        (
            json!({"privileged": true}),
            vec!["spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy".into()],
        ),
        (
            json!({"privileged": true, "allowPrivilegeEscalation": false}),
            vec![
                "spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy".into(),
                format!("spec.containers[0].securityContext: Invalid value: {rendered}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true"),
            ],
        ),
        (
            json!({"allowPrivilegeEscalation": false, "capabilities": {"add": ["CAP_SYS_ADMIN"]}}),
            vec![format!(
                "spec.containers[0].securityContext: Invalid value: {}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                rendered
                    .replace("Capabilities:(*core.Capabilities)(nil)", "Capabilities:(*core.Capabilities)(0xc000000000)")
                    .replace("Privileged:(*bool)(0xc000000000)", "Privileged:(*bool)(nil)")
            )],
        ),
        (
            json!({"procMount": "Unmasked"}),
            vec!["spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`".into()],
        ),
        (
            json!({"procMount": "Bogus", "runAsUser": -1}),
            vec![
                "spec.containers[0].securityContext.runAsUser: Invalid value: -1: must be between 0 and 2147483647, inclusive".into(),
                "spec.containers[0].securityContext.procMount: Unsupported value: \"Bogus\": supported values: \"Default\", \"Unmasked\"".into(),
            ],
        ),
        (
            json!({"seccompProfile": {"type": "Localhost"}}),
            vec!["spec.containers[0].securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost".into()],
        ),
        (
            json!({"seccompProfile": {"type": "Localhost", "localhostProfile": "../x"}}),
            vec!["spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: \"../x\": must not contain '..'".into()],
        ),
        (
            json!({"seccompProfile": {}}),
            vec!["spec.containers[0].securityContext.seccompProfile.type: Required value: type is required when seccompProfile is set".into()],
        ),
        (
            json!({"seccompProfile": {"type": "RuntimeDefault", "localhostProfile": "x"}}),
            vec!["spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: core.SeccompProfile{Type:\"RuntimeDefault\", LocalhostProfile:(*string)(0xc000000000)}: can only be set when seccomp type is Localhost".into()],
        ),
        (
            json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": " p "}}),
            vec!["spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: \" p \": must not be padded with whitespace".into()],
        ),
        (
            json!({"appArmorProfile": {"type": "Unconfined", "localhostProfile": "p"}}),
            vec!["spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: \"p\": can only be set when AppArmor type is Localhost".into()],
        ),
        (
            json!({"appArmorProfile": {"type": "bogus"}}),
            vec!["spec.containers[0].securityContext.appArmorProfile.type: Unsupported value: \"bogus\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"".into()],
        ),
        (
            json!({"windowsOptions": {"gmsaCredentialSpec": "", "runAsUserName": "a\\b\\c"}}),
            vec![
                "spec.containers[0].securityContext.windowsOptions.gmsaCredentialSpec: Invalid value: \"\": gmsaCredentialSpec cannot be an empty string".into(),
                "spec.containers[0].securityContext.windowsOptions.runAsUserName: Invalid value: \"a\\\\b\\\\c\": runAsUserName cannot contain more than one backslash".into(),
            ],
        ),
        (
            json!({"windowsOptions": {"runAsUserName": ".\\..."}}),
            vec![
                "spec.containers[0].securityContext.windowsOptions.runAsUserName: Invalid value: \".\\\\...\": runAsUserName's Domain doesn't match the NetBios nor the DNS format".into(),
                "spec.containers[0].securityContext.windowsOptions.runAsUserName: Invalid value: \".\\\\...\": runAsUserName's User cannot contain only periods or spaces".into(),
            ],
        ),
        (
            json!({"windowsOptions": {"runAsUserName": "user@domain"}}),
            vec!["spec.containers[0].securityContext.windowsOptions.runAsUserName: Invalid value: \"user@domain\": runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]".into()],
        ),
    ];
    for (context, expected) in cases {
        let spec = with_container(json!({"securityContext": context}), json!({}));
        assert_eq!(errors_of(json!({}), spec), expected, "{context}");
    }
}

#[test]
fn pod_security_context_fails_as_kube() {
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"hostPID": true, "shareProcessNamespace": true}),
            vec!["spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled"],
        ),
        (
            json!({"securityContext": {"sysctls": [{"name": ""}, {"name": "Bad.Name"}, {"name": "kernel.msgmax"}, {"name": "kernel.msgmax"}]}}),
            vec![
                "spec.securityContext.sysctls[0].name: Required value",
                r#"spec.securityContext.sysctls[1].name: Invalid value: "Bad.Name": must have at most 253 characters and match regex ^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$"#,
                r#"spec.securityContext.sysctls[3].name: Duplicate value: "kernel.msgmax""#,
            ],
        ),
        (
            json!({"hostNetwork": true, "hostIPC": true, "securityContext": {"sysctls": [{"name": "net.core.somaxconn"}, {"name": "kernel.shmmax"}, {"name": "fs/mqueue/msg_max"}]}}),
            vec![
                r#"spec.securityContext.sysctls[0].name: Invalid value: "net.core.somaxconn": may not be specified when 'hostNetwork' is true"#,
                r#"spec.securityContext.sysctls[1].name: Invalid value: "kernel.shmmax": may not be specified when 'hostIPC' is true"#,
                r#"spec.securityContext.sysctls[2].name: Invalid value: "fs/mqueue/msg_max": may not be specified when 'hostIPC' is true"#,
            ],
        ),
        (
            json!({"securityContext": {"fsGroupChangePolicy": "Sometimes", "supplementalGroupsPolicy": "Both", "seLinuxChangePolicy": "Never", "seccompProfile": {"type": "Bogus"}}}),
            vec![
                r#"spec.securityContext.fsGroupChangePolicy: Unsupported value: "Sometimes": supported values: "Always", "OnRootMismatch""#,
                r#"spec.securityContext.seccompProfile.type: Unsupported value: "Bogus": supported values: "Localhost", "RuntimeDefault", "Unconfined""#,
                r#"spec.securityContext.supplementalGroupsPolicy: Unsupported value: "Both": supported values: "Merge", "Strict""#,
                r#"spec.securityContext.seLinuxChangePolicy: Unsupported value: "Never": supported values: "MountOption", "Recursive""#,
            ],
        ),
        (
            json!({"hostUsers": false, "hostNetwork": true, "hostPID": true, "hostIPC": true}),
            vec![
                "spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false",
                "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
                "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false",
            ],
        ),
        (
            json!({"securityContext": {"windowsOptions": {"hostProcess": true}}}),
            vec![
                "spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers",
                "spec: Forbidden: hostProcess containers are disallowed by cluster policy",
            ],
        ),
    ];
    for (spec, expected) in cases {
        assert_eq!(
            errors_of(json!({}), with_container(json!({}), spec.clone())),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn os_rules_fail_as_kube() {
    let cases: Vec<(Value, Value, Vec<&str>)> = vec![
        (json!({}), json!({"os": {"name": ""}}), vec!["spec.os.name: Required value: cannot be empty"]),
        (
            json!({}),
            json!({"os": {"name": "macos"}}),
            vec![r#"spec.os: Unsupported value: "macos": supported values: "linux", "windows""#],
        ),
        (
            json!({"securityContext": {"windowsOptions": {"runAsUserName": "u"}}}),
            json!({"os": {"name": "linux"}}),
            vec!["spec.containers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod"],
        ),
        (
            json!({"securityContext": {"privileged": false, "runAsUser": 1, "capabilities": {}}}),
            json!({"os": {"name": "windows"}, "hostPID": true, "securityContext": {"runAsUser": 1, "seLinuxOptions": {"level": "s0"}}}),
            vec![
                "spec.securityContext.seLinuxOptions: Forbidden: cannot be set for a windows pod",
                "spec.hostPID: Forbidden: cannot be set for a windows pod",
                "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
                "spec.containers[0].securityContext.capabilities: Forbidden: cannot be set for a windows pod",
                "spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod",
                "spec.containers[0].securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
            ],
        ),
    ];
    for (context, spec, expected) in cases {
        assert_eq!(
            errors_of(json!({}), with_container(context, spec.clone())),
            expected,
            "{spec}"
        );
    }
}

#[test]
fn annotations_fail_as_kube() {
    let spec = with_container(
        json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}, "appArmorProfile": {"type": "RuntimeDefault"}}}),
        json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "a.json"}}}),
    );
    let annotations = json!({
        "seccomp.security.alpha.kubernetes.io/pod": "localhost/b.json",
        "container.seccomp.security.alpha.kubernetes.io/c": "runtime/default",
        "container.seccomp.security.alpha.kubernetes.io/d": "bogus",
        "container.apparmor.security.beta.kubernetes.io/c": "unconfined",
        "container.apparmor.security.beta.kubernetes.io/x": "bogus",
        "controller.kubernetes.io/pod-deletion-cost": "+1",
        "kubernetes.io/config.mirror": "m"
    });
    assert_eq!(
        errors_of(annotations, spec),
        vec![
            r#"metadata.annotations[kubernetes.io/config.mirror]: Invalid value: "m": must set spec.nodeName if mirror pod annotation is set"#,
            r#"metadata.annotations[controller.kubernetes.io/pod-deletion-cost]: Invalid value: "+1": must be a 32bit integer"#,
            r#"metadata.annotations.container.seccomp.security.alpha.kubernetes.io/d: Invalid value: "bogus": must be a valid seccomp profile"#,
            r#"metadata.annotations[container.apparmor.security.beta.kubernetes.io/x]: Invalid value: "x": container not found"#,
            r#"metadata.annotations[container.apparmor.security.beta.kubernetes.io/x]: Invalid value: "bogus": invalid AppArmor profile name: "bogus""#,
            "spec.securityContext.seccompProfile.localhostProfile: Forbidden: seccomp profile in annotation and field must match",
            "spec.containers[0].securityContext.seccompProfile.type: Forbidden: seccomp type in annotation and field must match",
            "spec.containers[0].securityContext.appArmorProfile.type: Forbidden: apparmor type in annotation and field must match",
        ]
    );
}

#[test]
fn host_network_lifecycle_and_resize_policy_fail_as_kube() {
    let spec = with_container(
        json!({
            "ports": [{"containerPort": 80, "hostPort": 81}, {"containerPort": 90}],
            "lifecycle": {"postStart": {}, "preStop": {"exec": {"command": ["x"]}, "sleep": {"seconds": 5}}},
            "resizePolicy": [{"resourceName": "cpu", "restartPolicy": "RestartContainer"}, {"resourceName": "cpu", "restartPolicy": "NotRequired"}, {"resourceName": "gpu", "restartPolicy": "Sometimes"}]
        }),
        json!({"hostNetwork": true, "restartPolicy": "Never", "terminationGracePeriodSeconds": 3}),
    );
    // The pod's spec is defaulted: hostNetwork gives port 90 hostPort 90,
    // so only the mismatching port is refused.
    assert_eq!(
        errors_of(json!({}), spec.clone()),
        vec![
            r#"spec.containers[0].resizePolicy: Invalid value: "RestartContainer": must be 'NotRequired' when `restartPolicy` is 'Never'"#,
            r#"spec.containers[0].resizePolicy[1]: Duplicate value: "cpu""#,
            r#"spec.containers[0].resizePolicy: Unsupported value: "gpu": supported values: "cpu", "memory""#,
            r#"spec.containers[0].resizePolicy: Unsupported value: "Sometimes": supported values: "NotRequired", "RestartContainer""#,
            r#"spec.containers[0].resizePolicy: Invalid value: "Sometimes": must be 'NotRequired' when `restartPolicy` is 'Never'"#,
            "spec.containers[0].lifecycle.postStart: Required value: must specify a handler type",
            "spec.containers[0].lifecycle.preStop.sleep: Forbidden: may not specify more than 1 handler type",
            "spec.containers[0].ports[0].hostPort: Invalid value: 81: must match `containerPort` when `hostNetwork` is true",
        ]
    );
    let sleep = with_container(
        json!({"lifecycle": {"preStop": {"sleep": {"seconds": 31}}}}),
        json!({}),
    );
    assert_eq!(
        errors_of(json!({}), sleep),
        vec!["spec.containers[0].lifecycle.preStop.sleep: Invalid value: 31: must be non-negative and less than terminationGracePeriodSeconds (30)"]
    );
}

#[test]
fn templates_allow_an_unset_host_port_and_refuse_privileged() {
    let spec = json!({
        "hostNetwork": true, "terminationGracePeriodSeconds": 30, "restartPolicy": "Always", "dnsPolicy": "ClusterFirst",
        "containers": [{"name": "c", "image": "nginx", "terminationMessagePolicy": "File", "imagePullPolicy": "Always",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81, "hostPort": 82, "protocol": "TCP"}],
                        "securityContext": {"privileged": true}}]
    });
    assert_eq!(
        template_errors_of(spec),
        vec![
            "template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy",
            "template.spec.containers[0].ports[1].hostPort: Invalid value: 82: must match `containerPort` when `hostNetwork` is true",
        ]
    );
}

#[test]
fn sysctl_names_follow_kube() {
    for valid in [
        "a.b.c.d", "a", "a_b", "a-b", "abc", "abc.def", "a/b/c/d", "a/b.c",
    ] {
        assert!(is_valid_sysctl_name(valid), "{valid}");
    }
    let too_long = "a".repeat(254);
    for invalid in [
        "",
        "*",
        "ä",
        "a_",
        "_",
        "__",
        "_a",
        "_a._b",
        "-",
        ".",
        "a.",
        ".a",
        "a.b.",
        "a*.b",
        "a*b",
        "*a",
        "a.*",
        "*",
        "abc*",
        "a.abc*",
        "a.b.*",
        "Abc",
        "/",
        "/a",
        "a/abc*",
        "a/b/*",
        too_long.as_str(),
    ] {
        assert!(!is_valid_sysctl_name(invalid), "{invalid}");
    }
}

#[test]
fn annotation_updates_fail_as_kube() {
    let spec = with_container(json!({}), json!({}));
    let old = defaulted_pod(
        json!({"kubernetes.io/config.mirror": "m", "keep": "x"}),
        spec.clone(),
    );
    let new = defaulted_pod(
        json!({"container.apparmor.security.beta.kubernetes.io/c": "runtime/default", "keep": "y"}),
        spec,
    );
    let errors: Vec<String> = crate::validation::pod_update::pod_update(&new, &old)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        errors,
        vec![
            "metadata.annotations[kubernetes.io/config.mirror]: Forbidden: may not remove or update mirror pod annotation",
            "metadata.annotations[container.apparmor.security.beta.kubernetes.io/c]: Forbidden: may not add AppArmor annotations",
        ]
    );
    // Annotations and fields that disagree are refused on create only.
    let spec = with_container(
        json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}}),
        json!({}),
    );
    let annotations =
        json!({"container.seccomp.security.alpha.kubernetes.io/c": "runtime/default"});
    let pod = defaulted_pod(annotations, spec);
    assert_eq!(
        crate::validation::pod_update::pod_update(&pod, &pod),
        Vec::new()
    );
    assert_eq!(crate::validation::pod::pod(&pod).len(), 1);
}
