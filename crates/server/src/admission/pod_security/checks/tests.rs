//! Table tests ported from kube's `policy/check_*_test.go` cases (pod
//! spec in, forbidden reason and detail out) and the registry's ordering.

use serde_json::{json, Value};

use super::*;
use crate::admission::pod_security::level::{Level, LevelVersion, Version};

fn pod(metadata: Value, spec: Value) -> (Value, Value) {
    (metadata, spec)
}

/// Runs `check` on (metadata, spec) and renders `reason (detail)` or "".
fn run(check: CheckFn, case: &(Value, Value)) -> String {
    let view = Pod {
        metadata: &case.0,
        spec: &case.1,
    };
    check(&view)
        .map(|forbidden| forbidden_detail(&[forbidden]))
        .unwrap_or_default()
}

#[test]
fn each_check_forbids_with_kubes_reason_and_detail() {
    let empty = json!({});
    let cases: Vec<(&str, CheckFn, (Value, Value), &str)> = vec![
        (
            "privileged",
            linux::privileged,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a", "securityContext": {"privileged": true}},
                {"name": "b", "securityContext": {"privileged": false}},
                {"name": "c"}],
                "initContainers": [{"name": "i", "securityContext": {"privileged": true}}]}),
            ),
            r#"privileged (containers "i", "a" must not set securityContext.privileged=true)"#,
        ),
        (
            "capabilities baseline",
            linux::capabilities_baseline,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a", "securityContext": {"capabilities": {"add": ["NET_RAW", "CHOWN", "SYS_ADMIN"]}}},
                {"name": "b", "securityContext": {"capabilities": {"add": ["KILL"]}}}]}),
            ),
            r#"non-default capabilities (container "a" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)"#,
        ),
        (
            "host namespaces",
            host::host_namespaces,
            pod(
                empty.clone(),
                json!({"hostNetwork": true, "hostPID": true, "hostIPC": true}),
            ),
            "host namespaces (hostIPC, hostNetwork, hostPID)",
        ),
        (
            "hostPath volumes",
            host::host_path_volumes,
            pod(
                empty.clone(),
                json!({"volumes": [
                {"name": "a", "hostPath": {"path": "/"}},
                {"name": "b", "emptyDir": {}},
                {"name": "c", "hostPath": {"path": "/x"}}]}),
            ),
            r#"hostPath volumes (volumes "a", "c")"#,
        ),
        (
            "host ports",
            host::host_ports,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a", "ports": [{"containerPort": 80, "hostPort": 8080}, {"containerPort": 81}]},
                {"name": "b", "ports": [{"containerPort": 90, "hostPort": 90}]}]}),
            ),
            r#"hostPort (containers "a", "b" use hostPorts 8080, 90)"#,
        ),
        (
            "probe hosts",
            host::host_probes_and_lifecycle,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a", "livenessProbe": {"httpGet": {"host": "evil", "port": 80}},
                 "lifecycle": {"preStop": {"tcpSocket": {"host": "other", "port": 1}}}}]}),
            ),
            r#"probe or lifecycle host (container "a" uses probe or lifecycle hosts "evil", "other")"#,
        ),
        (
            "windows host process",
            host::windows_host_process,
            pod(
                empty.clone(),
                json!({"securityContext": {"windowsOptions": {"hostProcess": true}},
                "containers": [{"name": "a", "securityContext": {"windowsOptions": {"hostProcess": true}}}]}),
            ),
            r#"hostProcess (pod and container "a" must not set securityContext.windowsOptions.hostProcess=true)"#,
        ),
        (
            "procMount",
            linux::proc_mount,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a", "securityContext": {"procMount": "Unmasked"}},
                {"name": "b", "securityContext": {"procMount": "Default"}}]}),
            ),
            r#"procMount (container "a" must not set securityContext.procMount to "Unmasked")"#,
        ),
        (
            "seLinux",
            linux::se_linux_options_1_0,
            pod(
                empty.clone(),
                json!({"securityContext": {"seLinuxOptions": {"type": "spc_t"}},
                "containers": [{"name": "a", "securityContext": {"seLinuxOptions": {"user": "root", "role": "sysadm_r"}}}]}),
            ),
            r#"seLinuxOptions (pod and container "a" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set; role may not be set)"#,
        ),
        (
            "seccomp annotations",
            linux::seccomp_baseline_annotations,
            pod(
                json!({"annotations": {
                "seccomp.security.alpha.kubernetes.io/pod": "unconfined",
                "container.seccomp.security.alpha.kubernetes.io/a": "runtime/default"}}),
                json!({"containers": [{"name": "a"}]}),
            ),
            r#"seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")"#,
        ),
        (
            "seccomp baseline fields",
            linux::seccomp_baseline_fields,
            pod(
                empty.clone(),
                json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}},
                "containers": [{"name": "a", "securityContext": {"seccompProfile": {"type": "Unconfined"}}},
                               {"name": "b", "securityContext": {"seccompProfile": {"type": "RuntimeDefault"}}}]}),
            ),
            r#"seccompProfile (pod and container "a" must not set securityContext.seccompProfile.type to "Unconfined")"#,
        ),
        (
            "apparmor",
            linux::app_armor_profile,
            pod(
                json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/a": "unconfined"}}),
                json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}},
                       "containers": [{"name": "a"}]}),
            ),
            r#"forbidden AppArmor profiles (pod and annotation must not set AppArmor profile type to "Unconfined", "container.apparmor.security.beta.kubernetes.io/a="unconfined"")"#,
        ),
        (
            "sysctls",
            linux::sysctls_1_0,
            pod(
                empty.clone(),
                json!({"securityContext": {"sysctls": [
                {"name": "kernel.shm_rmid_forced", "value": "0"},
                {"name": "net.ipv4.tcp_rmem", "value": "1"},
                {"name": "kernel.msgmax", "value": "1"}]}}),
            ),
            "forbidden sysctls (net.ipv4.tcp_rmem, kernel.msgmax)",
        ),
        (
            "sysctls 1.32",
            linux::sysctls_1_32,
            pod(
                empty.clone(),
                json!({"securityContext": {"sysctls": [
                {"name": "net.ipv4.tcp_rmem", "value": "1"},
                {"name": "kernel.msgmax", "value": "1"}]}}),
            ),
            "forbidden sysctls (kernel.msgmax)",
        ),
        (
            "allowPrivilegeEscalation",
            restricted::allow_privilege_escalation,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a"},
                {"name": "b", "securityContext": {"allowPrivilegeEscalation": true}},
                {"name": "c", "securityContext": {"allowPrivilegeEscalation": false}}]}),
            ),
            r#"allowPrivilegeEscalation != false (containers "a", "b" must set securityContext.allowPrivilegeEscalation=false)"#,
        ),
        (
            "capabilities restricted",
            restricted::capabilities_restricted,
            pod(
                empty.clone(),
                json!({"containers": [
                {"name": "a"},
                {"name": "b", "securityContext": {"capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE", "CHOWN"]}}}]}),
            ),
            r#"unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; container "b" must not include "CHOWN" in securityContext.capabilities.add)"#,
        ),
        (
            "restricted volumes",
            restricted::restricted_volumes,
            pod(
                empty.clone(),
                json!({"volumes": [
                {"name": "a", "hostPath": {"path": "/"}},
                {"name": "b", "configMap": {"name": "x"}},
                {"name": "c", "nfs": {"server": "s", "path": "/"}},
                {"name": "d"}]}),
            ),
            r#"restricted volume types (volumes "a", "c", "d" use restricted volume types "hostPath", "nfs", "unknown")"#,
        ),
        (
            "runAsNonRoot explicit",
            restricted::run_as_non_root,
            pod(
                empty.clone(),
                json!({"securityContext": {"runAsNonRoot": false},
                "containers": [{"name": "a", "securityContext": {"runAsNonRoot": false}}, {"name": "b"}]}),
            ),
            r#"runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)"#,
        ),
        (
            "runAsNonRoot implicit",
            restricted::run_as_non_root,
            pod(
                empty.clone(),
                json!({"containers": [{"name": "a"}, {"name": "b", "securityContext": {"runAsNonRoot": true}}]}),
            ),
            r#"runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)"#,
        ),
        (
            "runAsUser",
            restricted::run_as_user,
            pod(
                empty.clone(),
                json!({"securityContext": {"runAsUser": 0},
                "containers": [{"name": "a", "securityContext": {"runAsUser": 0}}, {"name": "b", "securityContext": {"runAsUser": 1000}}]}),
            ),
            r#"runAsUser=0 (pod and container "a" must not set runAsUser=0)"#,
        ),
        (
            "seccomp restricted implicit",
            restricted::seccomp_restricted,
            pod(
                empty.clone(),
                json!({"containers": [{"name": "a"}, {"name": "b"}]}),
            ),
            r#"seccompProfile (pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#,
        ),
    ];
    let mut failures = Vec::new();
    for (label, check, case, want) in &cases {
        let got = run(*check, case);
        if got != *want {
            failures.push(format!("{label}:\n  got  {got}\n  want {want}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn allowed_pods_pass_every_check() {
    let metadata = json!({});
    let spec = json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"},
                            "sysctls": [{"name": "net.ipv4.ping_group_range", "value": "0 1"}]},
        "containers": [{"name": "a", "image": "x", "ports": [{"containerPort": 80}],
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]},
                                "seLinuxOptions": {"type": "container_t"}, "procMount": "Default"}}],
        "volumes": [{"name": "v", "projected": {"sources": []}}]
    });
    let view = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let restricted = LevelVersion {
        level: Level::Restricted,
        version: Version::Latest,
    };
    assert_eq!(evaluate(restricted, &view), Vec::<Forbidden>::new());
}

fn privileged_pod() -> Value {
    json!({"containers": [{"name": "c", "image": "x", "securityContext": {"privileged": true}}]})
}

#[test]
fn restricted_prints_baseline_checks_then_restricted_sorted_by_id() {
    let metadata = json!({});
    let spec = privileged_pod();
    let view = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let latest = |level| LevelVersion {
        level,
        version: Version::Latest,
    };
    assert_eq!(
        forbidden_detail(&evaluate(latest(Level::Restricted), &view)),
        r#"privileged (container "c" must not set securityContext.privileged=true), allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")"#
    );
    assert_eq!(
        forbidden_reason(&evaluate(latest(Level::Baseline), &view)),
        "privileged"
    );
    assert!(evaluate(latest(Level::Privileged), &view).is_empty());
}

#[test]
fn versions_select_the_checks_in_force() {
    let metadata = json!({});
    let at = |minor, spec: &Value| {
        let view = Pod {
            metadata: &metadata,
            spec,
        };
        forbidden_reason(&evaluate(
            LevelVersion {
                level: Level::Restricted,
                version: Version::Minor(minor),
            },
            &view,
        ))
    };
    // Before 1.8 no allowPrivilegeEscalation, before 1.19 no seccomp field
    // check, before 1.22 capabilities are the baseline check's.
    let spec = json!({"securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "c", "securityContext": {"capabilities": {"add": ["SYS_ADMIN"]}}}]});
    assert_eq!(at(7, &spec), "non-default capabilities");
    assert_eq!(
        at(21, &spec),
        "non-default capabilities, allowPrivilegeEscalation != false, seccompProfile"
    );
    assert_eq!(
        at(22, &spec),
        "allowPrivilegeEscalation != false, unrestricted capabilities, seccompProfile"
    );
    // runAsUser from 1.23; probe hosts from 1.34; newer minors act as 1.34.
    let spec = json!({"securityContext": {"runAsNonRoot": true, "runAsUser": 0, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "readinessProbe": {"tcpSocket": {"host": "h", "port": 1}},
            "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]});
    assert_eq!(at(22, &spec), "");
    assert_eq!(at(33, &spec), "runAsUser=0");
    assert_eq!(at(34, &spec), "probe or lifecycle host, runAsUser=0");
    assert_eq!(at(99, &spec), "probe or lifecycle host, runAsUser=0");
}

#[test]
fn windows_pods_skip_the_linux_only_restricted_checks_from_1_25() {
    let metadata = json!({});
    let spec = json!({"os": {"name": "windows"}, "securityContext": {"runAsNonRoot": true},
        "containers": [{"name": "c"}]});
    let view = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let at = |minor| {
        forbidden_reason(&evaluate(
            LevelVersion {
                level: Level::Restricted,
                version: Version::Minor(minor),
            },
            &view,
        ))
    };
    assert_eq!(
        at(24),
        "allowPrivilegeEscalation != false, unrestricted capabilities, seccompProfile"
    );
    assert_eq!(at(25), "");
}

#[test]
fn the_registry_lists_each_level_sorted_by_id() {
    for level in [Level::Baseline, Level::Restricted] {
        let ids: Vec<&str> = CHECKS
            .iter()
            .filter(|check| check.level == level)
            .map(|check| check.id)
            .collect();
        let mut sorted = ids.clone();
        sorted.sort();
        assert_eq!(ids, sorted);
    }
    for check in CHECKS {
        assert!(check
            .versions
            .windows(2)
            .all(|pair| pair[0].minimum < pair[1].minimum));
    }
}

/// The reasons at `baseline:v1.<minor>`.
fn baseline_at(minor: u32, metadata: &Value, spec: &Value) -> String {
    let view = Pod { metadata, spec };
    forbidden_reason(&evaluate(
        LevelVersion {
            level: Level::Baseline,
            version: Version::Minor(minor),
        },
        &view,
    ))
}

#[test]
fn baseline_versions_widen_and_narrow_as_kubes() {
    let none = json!({});
    // SELinux `container_engine_t` from 1.31.
    let engine = json!({"securityContext": {"seLinuxOptions": {"type": "container_engine_t"}},
        "containers": [{"name": "c"}]});
    assert_eq!(baseline_at(30, &none, &engine), "seLinuxOptions");
    assert_eq!(baseline_at(31, &none, &engine), "");
    // Sysctls allowed from 1.27, 1.29 and 1.32.
    let sysctl = |name: &str| {
        json!({"securityContext": {"sysctls": [{"name": name, "value": "1"}]},
            "containers": [{"name": "c"}]})
    };
    for (name, first) in [
        ("net.ipv4.ip_local_reserved_ports", 27),
        ("net.ipv4.tcp_keepalive_time", 29),
        ("net.ipv4.tcp_wmem", 32),
    ] {
        assert_eq!(
            baseline_at(first - 1, &none, &sysctl(name)),
            "forbidden sysctls"
        );
        assert_eq!(baseline_at(first, &none, &sysctl(name)), "", "{name}");
    }
    // Seccomp: annotations before 1.19, fields from 1.19.
    let annotated =
        json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}});
    let plain = json!({"containers": [{"name": "c"}]});
    assert_eq!(baseline_at(18, &annotated, &plain), "seccompProfile");
    assert_eq!(baseline_at(19, &annotated, &plain), "");
    let unconfined = json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}},
        "containers": [{"name": "c"}]});
    assert_eq!(baseline_at(18, &none, &unconfined), "");
    assert_eq!(baseline_at(19, &none, &unconfined), "seccompProfile");
    // Probe hosts from 1.34; `latest` is 1.34.
    let probe = json!({"containers": [{"name": "c",
        "lifecycle": {"postStart": {"httpGet": {"host": "1.2.3.4", "port": 80}}}}]});
    assert_eq!(baseline_at(33, &none, &probe), "");
    assert_eq!(baseline_at(34, &none, &probe), "probe or lifecycle host");
}

#[test]
fn restricted_keeps_baseline_checks_it_does_not_override() {
    // hostPath: the restricted volumes check replaces the baseline one, so
    // one reason, not two; host namespaces stay.
    let metadata = json!({});
    let spec = json!({"hostNetwork": true,
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [{"name": "c", "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}],
        "volumes": [{"name": "h", "hostPath": {"path": "/"}}]});
    let view = Pod {
        metadata: &metadata,
        spec: &spec,
    };
    let restricted = evaluate(
        LevelVersion {
            level: Level::Restricted,
            version: Version::Latest,
        },
        &view,
    );
    assert_eq!(
        forbidden_detail(&restricted),
        r#"host namespaces (hostNetwork), restricted volume types (volume "h" uses restricted volume type "hostPath")"#
    );
    assert_eq!(
        baseline_at(34, &metadata, &spec),
        "host namespaces, hostPath volumes"
    );
}
