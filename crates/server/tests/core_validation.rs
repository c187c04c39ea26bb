//! kube's validation of the core kinds beyond pods and workloads (Namespace,
//! PersistentVolumeClaim, PersistentVolume, Node, Endpoints, ResourceQuota,
//! LimitRange, Event), seen through real clients: kubectl 1.33 prints the
//! 422's causes exactly as it would against kube-apiserver, and kube-rs gets
//! the `Status` with kube's reason, message and causes. Needs `kubectl.1.33`.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{expect_api_error, suffix, TestEnv};
use k8s_openapi::api::core::v1::{Endpoints, Node, PersistentVolumeClaim};
use kube::api::{Api, PostParams};

const KUBECTL: &str = "1.33";

/// `kubectl create -f -` of `manifest` fails; returns its stderr.
fn refused(env: &TestEnv, manifest: &str) -> String {
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-", "-n", &env.ns],
        Some(manifest),
    );
    assert!(!status.success(), "create must fail: {out}{err}");
    err
}

#[tokio::test]
async fn kubectl_prints_kube_causes_for_core_kinds() {
    let env = TestEnv::new("val-core").await;
    let pvc = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: claim\nspec:\n  accessModes: [ReadWriteSome]\n  resources:\n    requests: {cpu: \"1\"}\n";
    assert_eq!(
        refused(&env, pvc),
        "The PersistentVolumeClaim \"claim\" is invalid: \n* spec.accessModes: Unsupported value: \"ReadWriteSome\": supported values: \"ReadOnlyMany\", \"ReadWriteMany\", \"ReadWriteOnce\", \"ReadWriteOncePod\"\n* spec.resources[storage]: Required value\n"
    );
    let namespace = format!(
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: val-ns-{}\nspec:\n  finalizers: [foo]\n",
        suffix()
    );
    let err = refused(&env, &namespace);
    assert!(
        err.ends_with("is invalid: spec.finalizers: Invalid value: \"foo\": name is neither a standard finalizer name nor is it fully qualified\n"),
        "{err}"
    );
    let endpoints = "apiVersion: v1\nkind: Endpoints\nmetadata:\n  name: ep\nsubsets:\n- addresses: [{ip: 169.254.169.254}]\n  ports: [{port: 80, protocol: TCP}]\n";
    // kube 1.33 deprecated v1 Endpoints: its warning comes with every answer.
    assert_eq!(
        refused(&env, endpoints),
        "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\nThe Endpoints \"ep\" is invalid: subsets[0].addresses[0].ip: Invalid value: \"169.254.169.254\": may not be in the link-local range (169.254.0.0/16, fe80::/10)\n"
    );
    let quota =
        "apiVersion: v1\nkind: ResourceQuota\nmetadata:\n  name: q\nspec:\n  hard: {pods: 1500m}\n";
    assert_eq!(
        refused(&env, quota),
        "The ResourceQuota \"q\" is invalid: spec.hard[pods]: Invalid value: \"1500m\": must be an integer\n"
    );
    let limits = "apiVersion: v1\nkind: LimitRange\nmetadata:\n  name: l\nspec:\n  limits:\n  - type: Pod\n    min: {cpu: \"2\"}\n    max: {cpu: \"1\"}\n";
    assert_eq!(
        refused(&env, limits),
        "The LimitRange \"l\" is invalid: spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1\n"
    );
    let event = "apiVersion: v1\nkind: Event\nmetadata:\n  name: e\ninvolvedObject: {kind: Pod, name: p, namespace: elsewhere}\n";
    assert_eq!(
        refused(&env, event),
        "The Event \"e\" is invalid: involvedObject.namespace: Invalid value: \"elsewhere\": does not match event.namespace\n"
    );
    // Nothing refused was stored; valid objects of the same kinds are.
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pvc,endpoints,resourcequota,limitrange",
            "-n",
            &env.ns,
            "-o",
            "name",
        ],
    );
    assert!(status.success(), "{err}");
    assert_eq!(out, "");
    let valid = "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: claim\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests: {storage: 1Gi}\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", &env.ns], Some(valid));
    assert!(status.success(), "{out}{err}");
    // A claim's spec is immutable (a bound one's storage request may grow).
    let (status, _, err) = env.kubectl(
        KUBECTL,
        &[
            "patch",
            "pvc",
            "claim",
            "-n",
            &env.ns,
            "--type=merge",
            "-p",
            r#"{"spec":{"accessModes":["ReadWriteMany"]}}"#,
        ],
    );
    assert!(!status.success());
    assert!(
        err.starts_with("The PersistentVolumeClaim \"claim\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims\n"),
        "{err}"
    );
}

#[tokio::test]
async fn kube_rs_gets_kube_statuses_for_core_kinds() {
    let env = TestEnv::new("val-core-rs").await;
    let claims: Api<PersistentVolumeClaim> = env.api();
    let claim: PersistentVolumeClaim = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "claim"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "0"}}}
    }))
    .unwrap();
    let status = expect_api_error(
        claims.create(&PostParams::default(), &claim).await,
        422,
        "Invalid",
        "PersistentVolumeClaim \"claim\" is invalid: spec.resources[storage]: Invalid value: \"0\": must be greater than zero",
    );
    let causes = status.details.unwrap().causes;
    assert_eq!(causes.len(), 1);
    assert_eq!(causes[0].reason, "FieldValueInvalid");
    assert_eq!(causes[0].field, "spec.resources[storage]");

    let endpoints: Api<Endpoints> = env.api();
    let bad: Endpoints = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "ep"},
        "subsets": [{"addresses": [{"ip": "10.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}, {"name": "b", "port": 81, "protocol": "TCP"}]}]
    }))
    .unwrap();
    let status = expect_api_error(
        endpoints.create(&PostParams::default(), &bad).await,
        422,
        "Invalid",
        "Endpoints \"ep\" is invalid: subsets[0].ports[0].name: Required value",
    );
    assert_eq!(
        status.details.unwrap().causes[0].reason,
        "FieldValueRequired"
    );

    // Nodes: a duplicate taint is refused, and a set providerID cannot change.
    let nodes: Api<Node> = Api::all(env.client.clone());
    let name = format!("val-node-{}", suffix());
    let node = |provider: &str, taints: serde_json::Value| -> Node {
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": name},
            "spec": {"providerID": provider, "taints": taints}
        }))
        .unwrap()
    };
    let taint = serde_json::json!({"key": "dedicated", "value": "a", "effect": "NoSchedule"});
    expect_api_error(
        nodes.create(&PostParams::default(), &node("p1", serde_json::json!([taint, taint]))).await,
        422,
        "Invalid",
        &format!("Node \"{name}\" is invalid: metadata.taints[1]: Duplicate value: core.Taint{{Key:\"dedicated\", Value:\"a\", Effect:\"NoSchedule\", TimeAdded:(*v1.Time)(nil)}}: taints must be unique by key and effect pair"),
    );
    let created = nodes
        .create(
            &PostParams::default(),
            &node("p1", serde_json::json!([taint])),
        )
        .await
        .unwrap();
    let mut moved = created.clone();
    moved.spec.as_mut().unwrap().provider_id = Some("p2".into());
    expect_api_error(
        nodes.replace(&name, &PostParams::default(), &moved).await,
        422,
        "Invalid",
        &format!("Node \"{name}\" is invalid: spec.providerID: Forbidden: node updates may not change providerID except from \"\" to valid"),
    );
    // A replace is validated as a Node first (`ValidateNode`, here its
    // podCIDRs), then as an update; its status is the stored one
    // (`nodeStrategy.PrepareForUpdate`), which only `/status` changes.
    let mut cidr = created.clone();
    cidr.spec.as_mut().unwrap().pod_cidrs = Some(vec!["10.0.0.0/33".into()]);
    let refused = nodes.replace(&name, &PostParams::default(), &cidr).await;
    match refused {
        Err(kube::Error::Api(status)) => {
            assert_eq!(status.code, 422);
            assert!(
                status
                    .message
                    .contains("spec.podCIDRs[0]: Invalid value: \"10.0.0.0/33\""),
                "{}",
                status.message
            );
        }
        other => panic!("a bad podCIDR on replace: {other:?}"),
    }
    let mut with_status = created.clone();
    with_status.status =
        Some(serde_json::from_value(serde_json::json!({"capacity": {"pods": "7"}})).unwrap());
    let replaced = nodes
        .replace(&name, &PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(
        replaced.status, created.status,
        "a replace keeps the stored status"
    );
    let through_status = nodes
        .replace_status(&name, &PostParams::default(), &{
            let mut node = replaced.clone();
            node.status = with_status.status.clone();
            node
        })
        .await
        .unwrap();
    assert_eq!(
        through_status
            .status
            .and_then(|s| s.capacity)
            .and_then(|c| c.get("pods").cloned()),
        Some(k8s_openapi::apimachinery::pkg::api::resource::Quantity(
            "7".into()
        ))
    );
    nodes.delete(&name, &Default::default()).await.unwrap();
}

/// Pod security contexts as kube validates them, through kubectl 1.33: the
/// shared server runs with `--allow-privileged=true` (as kind and kubeadm
/// start kube-apiserver), so a privileged container is refused only for
/// `allowPrivilegeEscalation: false`; a server with kube's default
/// (`--allow-privileged=false`) refuses `privileged: true` itself, in pods
/// and in workload templates.
#[tokio::test]
async fn kubectl_prints_kube_causes_for_pod_security_contexts() {
    let env = TestEnv::new("val-podsec").await;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n  securityContext:\n    sysctls: [{name: net.core.somaxconn, value: \"1\"}]\n  hostNetwork: true\n  containers:\n  - name: c\n    image: nginx\n    securityContext: {privileged: true, allowPrivilegeEscalation: false, procMount: Unmasked}\n";
    assert_eq!(
        refused(&env, pod),
        "The Pod \"p\" is invalid: \n* spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`\n* spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:(*core.Capabilities)(nil), Privileged:(*bool)(0xc000000000), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:(*bool)(0xc000000000), ProcMount:(*core.ProcMountType)(0xc000000000), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true\n* spec.securityContext.sysctls[0].name: Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true\n"
    );
    let windows = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: w\nspec:\n  os: {name: windows}\n  hostPID: true\n  containers:\n  - name: c\n    image: nginx\n    securityContext: {runAsUser: 1}\n";
    assert_eq!(
        refused(&env, windows),
        "The Pod \"w\" is invalid: \n* spec.hostPID: Forbidden: cannot be set for a windows pod\n* spec.containers[0].securityContext.runAsUser: Forbidden: cannot be set for a windows pod\n"
    );

    if common::skip_if_external("kubectl_prints_kube_causes_for_pod_security_contexts") {
        return;
    }
    let server = common::TestServer::start_with(&["--allow-privileged=false"]);
    let kubectl = |manifest: &str| {
        let mut child = std::process::Command::new(common::kubectl_path(KUBECTL))
            .arg("--kubeconfig")
            .arg(&server.kubeconfig)
            .args(["create", "-f", "-", "-n", "default"])
            .env_remove("KUBECONFIG")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(manifest.as_bytes())
            .unwrap();
        let out = child.wait_with_output().unwrap();
        (out.status.success(), String::from_utf8(out.stderr).unwrap())
    };
    let privileged = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: priv\nspec:\n  containers:\n  - name: c\n    image: nginx\n    securityContext: {privileged: true}\n";
    assert_eq!(
        kubectl(privileged),
        (
            false,
            "The Pod \"priv\" is invalid: spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy\n".to_string()
        )
    );
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\nspec:\n  selector: {matchLabels: {app: d}}\n  template:\n    metadata: {labels: {app: d}}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        securityContext: {privileged: true}\n";
    assert_eq!(
        kubectl(deployment),
        (
            false,
            "The Deployment \"d\" is invalid: spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by cluster policy\n".to_string()
        )
    );
    let unprivileged = privileged.replace("privileged: true", "privileged: false");
    let (created, err) = kubectl(&unprivileged);
    assert!(created, "{err}");
}

/// `GetWarningsForPod` and `GetWarningsForPodTemplate`: kubectl prints the
/// server's `Warning` headers for a pod (its memory request defaulted from
/// the limit warns too) and a Deployment's template.
#[tokio::test]
async fn kubectl_prints_kubes_warnings_for_pods_and_templates() {
    let env = TestEnv::new("val-warn").await;
    let ns = env.ns.as_str();
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: warned.pod\nspec:\n  nodeSelector: {beta.kubernetes.io/arch: amd64}\n  containers:\n  - name: c\n    image: nginx\n    env: [{name: A, value: x}, {name: A, value: z}]\n    resources:\n      limits: {memory: 1500m}\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(pod));
    assert!(status.success(), "create must succeed: {out}{err}");
    assert_eq!(
        err,
        "Warning: metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]\n\
         Warning: spec.nodeSelector[beta.kubernetes.io/arch]: deprecated since v1.14; use \"kubernetes.io/arch\" instead\n\
         Warning: spec.containers[0].resources.limits[memory]: fractional byte value \"1500m\" is invalid, must be an integer\n\
         Warning: spec.containers[0].resources.requests[memory]: fractional byte value \"1500m\" is invalid, must be an integer\n\
         Warning: spec.containers[0].env[1]: hides previous definition of \"A\", which may be dropped when using apply\n"
    );
    let deployment = |image: &str| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: warned\nspec:\n  selector:\n    matchLabels: {{app: w}}\n  template:\n    metadata:\n      labels: {{app: w}}\n    spec:\n      volumes: [{{name: repo, gitRepo: {{repository: https://example.com/x.git}}}}]\n      containers:\n      - {{name: c, image: {image}}}\n")
    };
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["apply", "-f", "-", "-n", ns],
        Some(&deployment("nginx")),
    );
    assert!(status.success(), "apply must succeed: {out}{err}");
    assert_eq!(
        err,
        "Warning: spec.template.spec.volumes[0].gitRepo: deprecated in v1.11\n"
    );
    // An update that leaves the generation alone is not warned about again.
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["label", "deployment", "warned", "team=a", "-n", ns],
        None,
    );
    assert!(status.success(), "label must succeed: {out}{err}");
    assert_eq!(err, "");
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["apply", "-f", "-", "-n", ns],
        Some(&deployment("nginx:1.27")),
    );
    assert!(status.success(), "apply must succeed: {out}{err}");
    assert_eq!(
        err,
        "Warning: spec.template.spec.volumes[0].gitRepo: deprecated in v1.11\n"
    );
}

const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

/// `validateVolumeSource`'s rules for an ephemeral volume's claim template,
/// the claim it creates and an inline CSI driver; `dropImageVolumes` with
/// the ImageVolume gate off (1.34); and a VolumeAttachment's inline spec
/// checked as `ValidatePersistentVolumeSpec` checks inline volumes.
#[tokio::test]
async fn kubectl_prints_kube_causes_for_pod_volume_sources() {
    let env = TestEnv::new("val-podvol").await;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: vols\nspec:\n  containers:\n  - name: c\n    image: nginx\n  volumes:\n  - name: scratch\n    ephemeral:\n      volumeClaimTemplate:\n        metadata: {name: claim}\n        spec:\n          accessModes: [ReadWriteOnce]\n          resources: {requests: {storage: 1Gi}}\n  - name: claim\n    persistentVolumeClaim: {claimName: vols-scratch}\n  - name: inline\n    csi: {driver: Bad_Driver}\n";
    assert_eq!(
        refused(&env, pod),
        format!(
            "The Pod \"vols\" is invalid: \n* spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set\n* spec.volumes[1].persistentVolumeClaim.claimName: Invalid value: \"vols-scratch\": must not reference a PVC that gets created for an ephemeral volume\n* spec.volumes[2].csi.driver: Invalid value: \"Bad_Driver\": {SUBDOMAIN}\n"
        )
    );
    // The same sources written as kube accepts them; the image volume and
    // its mount are dropped (the ImageVolume gate is off in 1.34), even
    // without the pull policy the gate's defaulting would have set.
    let valid = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: vols\nspec:\n  containers:\n  - name: c\n    image: nginx\n    volumeMounts:\n    - {name: img, mountPath: /img}\n    - {name: scratch, mountPath: /scratch}\n  volumes:\n  - name: scratch\n    ephemeral:\n      volumeClaimTemplate:\n        metadata: {labels: {app: vols}}\n        spec:\n          accessModes: [ReadWriteOnce]\n          resources: {requests: {storage: 1Gi}}\n  - name: inline\n    csi: {driver: csi.example.com, nodePublishSecretRef: {name: creds}}\n  - name: img\n    image: {reference: busybox}\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", &env.ns], Some(valid));
    assert!(status.success(), "{out}{err}");
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pod",
            "vols",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.volumes[*].name} {.spec.containers[0].volumeMounts[*].name}",
        ],
    );
    assert!(status.success(), "{err}");
    // (The service account admission adds its token volume and mount.)
    let names: Vec<&str> = out.split(' ').collect();
    assert!(
        names.starts_with(&["scratch", "inline"]) && !names.contains(&"img"),
        "{out}"
    );

    let attachment = "apiVersion: storage.k8s.io/v1\nkind: VolumeAttachment\nmetadata:\n  name: inline-va\nspec:\n  attacher: csi.example.com\n  nodeName: node-1\n  source:\n    inlineVolumeSpec:\n      accessModes: [ReadWriteOnce]\n      storageClassName: fast\n      persistentVolumeReclaimPolicy: Delete\n      csi: {driver: csi.example.com, volumeHandle: h}\n";
    assert_eq!(
        refused(&env, attachment),
        "The VolumeAttachment \"inline-va\" is invalid: \n* spec.source.inlineVolumeSpec.persistentVolumeReclaimPolicy: Forbidden: may only be Retain in the context of inline volumes\n* spec.source.inlineVolumeSpec.storageClassName: Forbidden: may not be specified in the context of inline volumes\n"
    );
}

/// kubectl 1.33: resource field selectors' divisors as
/// `validateContainerResourceDivisor` checks them, in env and in downward
/// API volumes; a canonical equivalent (`1000m` is `1`) is accepted.
#[tokio::test]
async fn kubectl_prints_kube_causes_for_resource_field_divisors() {
    let env = TestEnv::new("val-divisor").await;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: div\nspec:\n  containers:\n  - name: c\n    image: nginx\n    env:\n    - name: CPU\n      valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 2m}}\n    - name: MEM\n      valueFrom: {resourceFieldRef: {resource: requests.memory, divisor: 1m}}\n  volumes:\n  - name: info\n    downwardAPI:\n      items:\n      - path: disk\n        resourceFieldRef: {containerName: c, resource: limits.ephemeral-storage, divisor: \"10\"}\n";
    assert_eq!(
        refused(&env, pod),
        "The Pod \"div\" is invalid: \n* spec.volumes[0].downwardAPI.resourceFieldRef.divisor: Invalid value: \"limits.ephemeral-storage\": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the local ephemeral storage resource\n* spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor: Invalid value: \"limits.cpu\": only divisor's values 1m and 1 are supported with the cpu resource\n* spec.containers[0].env[1].valueFrom.resourceFieldRef.divisor: Invalid value: \"requests.memory\": only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the memory resource\n"
    );
    let valid = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: div\nspec:\n  containers:\n  - name: c\n    image: nginx\n    env:\n    - name: CPU\n      valueFrom: {resourceFieldRef: {resource: limits.cpu, divisor: 1000m}}\n    - name: MEM\n      valueFrom: {resourceFieldRef: {resource: requests.memory, divisor: 1Mi}}\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", &env.ns], Some(valid));
    assert!(status.success(), "{out}{err}");
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pod",
            "div",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.containers[0].env[0].valueFrom.resourceFieldRef.divisor}",
        ],
    );
    assert!(status.success(), "{err}");
    assert_eq!(out, "1");
}

/// kubectl 1.33: mount propagation and recursive read-only mounts as
/// `validateMountPropagation` and `validateMountRecursiveReadOnly` check
/// them (kube reports both at the list's path).
#[tokio::test]
async fn kubectl_prints_kube_causes_for_mount_propagation() {
    let env = TestEnv::new("val-mounts").await;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: mounts\nspec:\n  containers:\n  - name: c\n    image: nginx\n    volumeMounts:\n    - {name: v, mountPath: /a, mountPropagation: Bidirectional}\n    - {name: v, mountPath: /b, recursiveReadOnly: Enabled}\n  volumes:\n  - name: v\n    emptyDir: {}\n";
    assert_eq!(
        refused(&env, pod),
        "The Pod \"mounts\" is invalid: \n* spec.containers[0].volumeMounts.mountPropagation: Forbidden: Bidirectional mount propagation is available only to privileged containers\n* spec.containers[0].volumeMounts.recursiveReadOnly: Forbidden: may only be specified when readOnly is true\n"
    );
    let valid = pod.replace("Bidirectional", "HostToContainer").replace(
        "recursiveReadOnly: Enabled",
        "readOnly: true, recursiveReadOnly: IfPossible",
    );
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", &env.ns], Some(&valid));
    assert!(status.success(), "{out}{err}");

    // Block devices: from claims only, not also mounted.
    let devices = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: devices\nspec:\n  containers:\n  - name: c\n    image: nginx\n    volumeDevices:\n    - {name: v, devicePath: /dev/xvda}\n    - {name: claim, devicePath: /dev/xvdb}\n    volumeMounts:\n    - {name: claim, mountPath: /data}\n  volumes:\n  - name: v\n    emptyDir: {}\n  - name: claim\n    persistentVolumeClaim: {claimName: data}\n";
    assert_eq!(
        refused(&env, devices),
        "The Pod \"devices\" is invalid: \n* spec.containers[0].volumeMounts[0].name: Invalid value: \"claim\": must not already exist in volumeDevices\n* spec.containers[0].volumeDevices[0].name: Invalid value: \"v\": can only use volume source type of PersistentVolumeClaim or Ephemeral for block mode\n* spec.containers[0].volumeDevices[1].name: Invalid value: \"claim\": must not already exist in volumeMounts\n"
    );
    let devices = devices
        .replace(
            "    volumeMounts:\n    - {name: claim, mountPath: /data}\n",
            "",
        )
        .replace("    - {name: v, devicePath: /dev/xvda}\n", "");
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-", "-n", &env.ns],
        Some(&devices),
    );
    assert!(status.success(), "{out}{err}");
}

/// kubectl 1.33: pod-level resources (`validatePodResources`: names,
/// requests covering the containers' aggregate), containers' `claims`
/// naming the pod's `resourceClaims` (`validateResourceClaimNames`) and
/// hugepage values that are not a multiple of their page size; the
/// tolerations annotation (`ValidateTolerationsInPodAnnotations`).
#[tokio::test]
async fn kubectl_prints_kube_causes_for_pod_level_resources_and_claims() {
    let env = TestEnv::new("val-podres").await;
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: res\nspec:\n  resources:\n    requests: {cpu: 100m}\n  containers:\n  - name: c\n    image: nginx\n    resources:\n      requests: {cpu: 200m}\n      claims:\n      - name: gpu\n";
    assert_eq!(
        refused(&env, pod),
        "The Pod \"res\" is invalid: \n* spec.containers[0].resources.claims[0]: Not found: \"gpu\": must be one of the names in pod.spec.resourceClaims which is empty\n* spec.resources.requests[cpu]: Invalid value: \"100m\": must be greater than or equal to aggregate container requests of 200m\n"
    );
    let huge = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: huge\nspec:\n  containers:\n  - name: c\n    image: nginx\n    resources:\n      limits: {memory: 1Gi, hugepages-2Mi: 3Mi}\n";
    assert_eq!(
        refused(&env, huge),
        "The Pod \"huge\" is invalid: \n* spec.containers[0].resources.limits[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi\n* spec.containers[0].resources.requests[hugepages-2Mi]: Invalid value: \"3Mi\": 3Mi is not positive integer multiple of hugepages-2Mi\n"
    );
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &["create", "-f", "-", "-n", &env.ns],
        Some(&huge.replace("3Mi", "4Mi")),
    );
    assert!(status.success(), "{out}{err}");
    // The tolerations annotation is decoded and validated as kube does.
    let tolerated = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: tol\n  annotations:\n    scheduler.alpha.kubernetes.io/tolerations: '[{\"key\": \"a\", \"effect\": \"NoSchedule\", \"tolerationSeconds\": 5}]'\nspec:\n  containers:\n  - name: c\n    image: nginx\n";
    assert_eq!(
        refused(&env, tolerated),
        "The Pod \"tol\" is invalid: metadata.annotations.scheduler.alpha.kubernetes.io/tolerations[0].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set\n"
    );
    assert_eq!(
        refused(&env, &tolerated.replace("5}", "\"5\"}")),
        "The Pod \"tol\" is invalid: metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/tolerations\": json: cannot unmarshal string into Go struct field Toleration.tolerationSeconds of type int64\n"
    );
    // A pod template's annotations get the same checks, at `spec.template.annotations`.
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: tol\nspec:\n  selector: {matchLabels: {app: tol}}\n  template:\n    metadata:\n      labels: {app: tol}\n      annotations:\n        scheduler.alpha.kubernetes.io/tolerations: '[{\"key\": \"a\", \"operator\": \"Bogus\"}]'\n    spec:\n      containers:\n      - name: c\n        image: nginx\n";
    assert_eq!(
        refused(&env, deployment),
        "The Deployment \"tol\" is invalid: spec.template.annotations.scheduler.alpha.kubernetes.io/tolerations[0].operator: Unsupported value: \"Bogus\": supported values: \"Equal\", \"Exists\"\n"
    );
    // The same pod with room at the pod level and its claim declared.
    let valid = pod.replace("cpu: 100m", "cpu: 300m").replace(
        "  containers:\n",
        "  resourceClaims:\n  - {name: gpu, resourceClaimName: gpu-claim}\n  containers:\n",
    );
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", &env.ns], Some(&valid));
    assert!(status.success(), "{out}{err}");
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "get",
            "pod",
            "res",
            "-n",
            &env.ns,
            "-o",
            "jsonpath={.spec.resources.requests.cpu} {.spec.containers[0].resources.claims[0].name}",
        ],
    );
    assert!(status.success(), "{err}");
    assert_eq!(out, "300m gpu");
}
