//! core/v1 defaulting seen by kubectl 1.33: `create -f` then `get -o json`
//! returns the objects as kube-apiserver 1.34 defaults them (expected JSON
//! written from `pkg/apis/core/v1/defaults.go`, `zz_generated.defaults.go`
//! and the registry strategies, field by field).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{suffix, TestEnv};
use serde_json::{json, Value};

const VERSION: &str = "1.33";

fn manifest(pv: &str) -> String {
    format!(
        r#"apiVersion: v1
kind: Pod
metadata:
  name: shapes
spec:
  automountServiceAccountToken: false
  containers:
  - name: app
    image: busybox:1.36
    ports:
    - containerPort: 8080
    env:
    - name: POD
      valueFrom:
        fieldRef: {{fieldPath: metadata.name}}
    livenessProbe:
      grpc: {{port: 9000}}
    readinessProbe:
      httpGet: {{port: 8080}}
  volumes:
  - name: sec
    secret: {{secretName: s}}
  - name: cm
    configMap: {{name: c}}
  - name: proj
    projected:
      sources:
      - serviceAccountToken: {{path: token}}
      - downwardAPI:
          items:
          - path: labels
            fieldRef: {{fieldPath: metadata.labels}}
  - name: host
    hostPath: {{path: /tmp}}
  - name: scratch
---
apiVersion: v1
kind: PersistentVolume
metadata:
  name: {pv}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  hostPath: {{path: /data}}
---
apiVersion: v1
kind: Service
metadata:
  name: sticky
spec:
  type: NodePort
  sessionAffinity: ClientIP
  selector: {{app: shapes}}
  ports:
  - port: 80
"#
    )
}

fn get(env: &TestEnv, args: &[&str]) -> Value {
    let out = env.kubectl_ok(VERSION, args);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

#[tokio::test]
async fn kubectl_reads_back_kubes_core_v1_defaults() {
    let env = TestEnv::new("defcore").await;
    let ns = env.ns.as_str();
    let pv = format!("defcore-{}", suffix());
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("objects.yaml");
    std::fs::write(&file, manifest(&pv)).unwrap();
    env.kubectl_ok(VERSION, &["create", "-f", file.to_str().unwrap(), "-n", ns]);

    let pod = get(&env, &["get", "pod", "shapes", "-n", ns, "-o", "json"]);
    let spec = &pod["spec"];
    assert_eq!(
        spec["containers"][0],
        json!({
            "name": "app",
            "image": "busybox:1.36",
            "imagePullPolicy": "IfNotPresent",
            "ports": [{"containerPort": 8080, "protocol": "TCP"}],
            "env": [{"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}],
            "livenessProbe": {"grpc": {"port": 9000, "service": ""}, "timeoutSeconds": 1,
                              "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "readinessProbe": {"httpGet": {"port": 8080, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
                               "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
            "resources": {},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
        })
    );
    assert_eq!(
        spec["volumes"],
        json!([
            {"name": "sec", "secret": {"secretName": "s", "defaultMode": 420}},
            {"name": "cm", "configMap": {"name": "c", "defaultMode": 420}},
            {"name": "proj", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"path": "token", "expirationSeconds": 3600}},
                {"downwardAPI": {"items": [{"path": "labels",
                    "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels"}}]}}]}},
            {"name": "host", "hostPath": {"path": "/tmp", "type": ""}},
            {"name": "scratch", "emptyDir": {}},
        ])
    );
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
        ("enableServiceLinks", json!(true)),
        ("serviceAccountName", json!("default")),
        ("serviceAccount", json!("default")),
    ] {
        assert_eq!(spec[field], value, "spec.{field}");
    }
    assert_eq!(
        pod["status"],
        json!({"phase": "Pending", "qosClass": "BestEffort"})
    );
    assert_eq!(pod["metadata"]["generation"], 1);

    let volume = get(&env, &["get", "pv", &pv, "-o", "json"]);
    assert_eq!(
        volume["spec"],
        json!({"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
               "hostPath": {"path": "/data", "type": ""},
               "persistentVolumeReclaimPolicy": "Retain", "volumeMode": "Filesystem"})
    );
    assert_eq!(volume["status"]["phase"], "Pending");
    assert!(
        volume["status"]["lastPhaseTransitionTime"]
            .as_str()
            .is_some_and(|time| time.ends_with('Z')),
        "{}",
        volume["status"]
    );
    env.kubectl_ok(VERSION, &["delete", "pv", &pv]);

    let service = get(&env, &["get", "service", "sticky", "-n", ns, "-o", "json"]);
    let spec = &service["spec"];
    for (field, value) in [
        ("type", json!("NodePort")),
        ("sessionAffinity", json!("ClientIP")),
        (
            "sessionAffinityConfig",
            json!({"clientIP": {"timeoutSeconds": 10800}}),
        ),
        ("externalTrafficPolicy", json!("Cluster")),
        ("internalTrafficPolicy", json!("Cluster")),
        ("ipFamilyPolicy", json!("SingleStack")),
    ] {
        assert_eq!(spec[field], value, "spec.{field}");
    }
    let port = &spec["ports"][0];
    assert_eq!(port["protocol"], "TCP");
    assert_eq!(port["targetPort"], 80);
    assert!(port["nodePort"].as_i64().is_some(), "{port}");
    assert_eq!(service["status"], json!({"loadBalancer": {}}));
}

/// A pod with scheduling gates starts with kube's PodScheduled=False
/// condition; a pod whose containers set limits only is Guaranteed (the
/// requests default to the limits before the QoS class is computed); the
/// pod's values of `matchLabelKeys` join the spread constraint's selector.
#[tokio::test]
async fn kubectl_sees_the_pod_strategys_status() {
    let env = TestEnv::new("defcore-st").await;
    let ns = env.ns.as_str();
    let gated = r#"apiVersion: v1
kind: Pod
metadata:
  name: gated
  labels: {app: gated}
spec:
  schedulingGates: [{name: example.com/wait}]
  topologySpreadConstraints:
  - maxSkew: 1
    topologyKey: zone
    whenUnsatisfiable: ScheduleAnyway
    labelSelector: {matchLabels: {role: x}}
    matchLabelKeys: [app]
  containers:
  - name: app
    image: busybox
    resources:
      limits: {cpu: "1", memory: 64Mi}
"#;
    let (status, out, err) =
        env.kubectl_stdin(VERSION, &["create", "-f", "-", "-n", ns], Some(gated));
    assert!(status.success(), "{out}{err}");
    let pod = get(&env, &["get", "pod", "gated", "-n", ns, "-o", "json"]);
    let container = &pod["spec"]["containers"][0];
    assert_eq!(container["imagePullPolicy"], "Always");
    assert_eq!(
        container["resources"],
        json!({"limits": {"cpu": "1", "memory": "64Mi"}, "requests": {"cpu": "1", "memory": "64Mi"}})
    );
    assert_eq!(pod["status"]["phase"], "Pending");
    assert_eq!(pod["status"]["qosClass"], "Guaranteed");
    let condition = &pod["status"]["conditions"][0];
    assert_eq!(condition["type"], "PodScheduled");
    assert_eq!(condition["status"], "False");
    assert_eq!(condition["reason"], "SchedulingGated");
    assert_eq!(
        condition["message"],
        "Scheduling is blocked due to non-empty scheduling gates"
    );
    assert!(condition["lastTransitionTime"].is_string(), "{condition}");
    assert!(condition["lastProbeTime"].is_null(), "{condition}");
    assert_eq!(
        pod["spec"]["topologySpreadConstraints"][0]["labelSelector"],
        json!({"matchLabels": {"role": "x"},
               "matchExpressions": [{"key": "app", "operator": "In", "values": ["gated"]}]})
    );
}

/// PodLevelResources (beta, on in 1.34): a pod with pod-level limits only
/// is read back with pod-level requests equal to them, and one whose
/// containers request is read back with their sum (a sidecar counted);
/// the QoS class follows the defaulted pod-level values.
#[tokio::test]
async fn kubectl_reads_back_pod_level_resource_defaults() {
    let env = TestEnv::new("podres").await;
    let ns = env.ns.as_str();
    let pods = r#"apiVersion: v1
kind: Pod
metadata:
  name: limits-only
spec:
  resources:
    limits: {cpu: "2", memory: 256Mi}
  containers:
  - name: app
    image: busybox:1.36
---
apiVersion: v1
kind: Pod
metadata:
  name: aggregated
spec:
  resources:
    limits: {cpu: "2", memory: 256Mi}
  initContainers:
  - name: sidecar
    image: busybox:1.36
    restartPolicy: Always
    resources:
      requests: {cpu: 250m}
  containers:
  - name: app
    image: busybox:1.36
    resources:
      requests: {cpu: 500m, memory: 64Mi}
"#;
    let (status, out, err) =
        env.kubectl_stdin(VERSION, &["create", "-f", "-", "-n", ns], Some(pods));
    assert!(status.success(), "{out}{err}");

    let pod = get(&env, &["get", "pod", "limits-only", "-n", ns, "-o", "json"]);
    assert_eq!(
        pod["spec"]["resources"],
        json!({"limits": {"cpu": "2", "memory": "256Mi"},
               "requests": {"cpu": "2", "memory": "256Mi"}})
    );
    assert_eq!(pod["spec"]["containers"][0]["resources"], json!({}));
    assert_eq!(pod["status"]["qosClass"], "Guaranteed");

    let pod = get(&env, &["get", "pod", "aggregated", "-n", ns, "-o", "json"]);
    assert_eq!(
        pod["spec"]["resources"],
        json!({"limits": {"cpu": "2", "memory": "256Mi"},
               "requests": {"cpu": "750m", "memory": "64Mi"}})
    );
    assert_eq!(pod["status"]["qosClass"], "Burstable");
}

/// The deprecated AppArmor annotation of a container becomes its
/// `securityContext.appArmorProfile` on create (`applyAppArmorVersionSkew`),
/// the annotation stays, and kubectl prints kube's deprecation warning.
#[tokio::test]
async fn kubectl_sees_apparmor_annotations_become_fields() {
    let env = TestEnv::new("podres-aa").await;
    let ns = env.ns.as_str();
    let pod = r#"apiVersion: v1
kind: Pod
metadata:
  name: confined
  annotations:
    container.apparmor.security.beta.kubernetes.io/app: localhost/k8s-apparmor-example
    container.apparmor.security.beta.kubernetes.io/same: runtime/default
spec:
  securityContext:
    appArmorProfile: {type: RuntimeDefault}
  containers:
  - name: app
    image: busybox:1.36
  - name: same
    image: busybox:1.36
"#;
    let (status, out, err) =
        env.kubectl_stdin(VERSION, &["create", "-f", "-", "-n", ns], Some(pod));
    assert!(status.success(), "{out}{err}");
    assert!(
        err.contains(
            "Warning: metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: \
             deprecated since v1.30; use the \"appArmorProfile\" field instead"
        ),
        "{err}"
    );
    // The annotation equal to the pod's profile is neither copied nor warned about.
    assert!(!err.contains("kubernetes.io/same"), "{err}");

    let pod = get(&env, &["get", "pod", "confined", "-n", ns, "-o", "json"]);
    let containers = &pod["spec"]["containers"];
    assert_eq!(
        containers[0]["securityContext"],
        json!({"appArmorProfile": {"type": "Localhost", "localhostProfile": "k8s-apparmor-example"}})
    );
    assert!(
        containers[1].get("securityContext").is_none(),
        "{}",
        containers[1]
    );
    assert_eq!(
        pod["metadata"]["annotations"]["container.apparmor.security.beta.kubernetes.io/app"],
        "localhost/k8s-apparmor-example"
    );

    // A dry-run create does the same (and warns the same).
    let (status, out, err) = env.kubectl_stdin(
        VERSION,
        &[
            "create",
            "-f",
            "-",
            "-n",
            ns,
            "--dry-run=server",
            "-o",
            "json",
        ],
        Some(&pod_manifest_renamed()),
    );
    assert!(status.success(), "{out}{err}");
    assert!(err.contains("deprecated since v1.30"), "{err}");
    let dry: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        dry["spec"]["containers"][0]["securityContext"]["appArmorProfile"],
        json!({"type": "Unconfined"})
    );
}

fn pod_manifest_renamed() -> String {
    r#"apiVersion: v1
kind: Pod
metadata:
  name: dry
  annotations:
    container.apparmor.security.beta.kubernetes.io/app: unconfined
spec:
  containers:
  - name: app
    image: busybox:1.36
"#
    .to_string()
}

/// A Deployment's pod template with the deprecated annotation and no field
/// gets kube's warning at `spec.template` (`GetWarningsForPodTemplate`), on
/// create and on an update that changes the generation; the template is
/// stored as sent (no field sync for templates).
#[tokio::test]
async fn kubectl_warns_for_apparmor_annotations_in_pod_templates() {
    let env = TestEnv::new("podres-tpl").await;
    let ns = env.ns.as_str();
    let deployment = |image: &str| {
        format!(
            r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector: {{matchLabels: {{app: web}}}}
  template:
    metadata:
      labels: {{app: web}}
      annotations:
        container.apparmor.security.beta.kubernetes.io/app: runtime/default
    spec:
      containers:
      - name: app
        image: {image}
"#
        )
    };
    let warning = "Warning: spec.template.metadata.annotations[container.apparmor.security.beta.kubernetes.io/app]: \
                   deprecated since v1.30; use the \"appArmorProfile\" field instead";
    let (status, out, err) = env.kubectl_stdin(
        VERSION,
        &["create", "-f", "-", "-n", ns],
        Some(&deployment("busybox:1.36")),
    );
    assert!(status.success(), "{out}{err}");
    assert!(err.contains(warning), "{err}");
    let stored = get(&env, &["get", "deployment", "web", "-n", ns, "-o", "json"]);
    assert!(
        stored["spec"]["template"]["spec"]["containers"][0]
            .get("securityContext")
            .is_none(),
        "{}",
        stored["spec"]["template"]
    );
    let (status, out, err) = env.kubectl_stdin(
        VERSION,
        &["replace", "-f", "-", "-n", ns],
        Some(&deployment("busybox:1.37")),
    );
    assert!(status.success(), "{out}{err}");
    assert!(err.contains(warning), "{err}");
}
