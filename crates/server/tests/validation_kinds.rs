//! Kind validation of the built-in kinds that used to be accepted as sent,
//! through real clients: kubectl 1.33 prints kube's 422 text for a bad
//! HorizontalPodAutoscaler (autoscaling/v2, and v1 reported at its v2
//! paths), a bad FlowSchema and a ServiceAccount with a bare finalizer, a
//! PersistentVolume with a bad iSCSI source and node affinity, a FlowSchema
//! `/status` with a repeated condition type, a Node's taints annotation;
//! kube-rs gets kube's Status for an events.k8s.io Event without
//! `reportingController`; kubectl 1.33 prints kube's text for a bad Service
//! (create and update) and changes a Service's type as kube lets it, and a
//! DaemonSet's template generation counts template changes as kube's does.
//! Needs `kubectl.1.33` (see `common::kubectl_dir`).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{expect_api_error, suffix, TestEnv};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, PostParams};
use serde_json::json;

const KUBECTL: &str = "1.33";

#[track_caller]
fn kubectl_ok_stdin(env: &TestEnv, args: &[&str], stdin: &str) -> String {
    let (status, out, err) = env.kubectl_stdin(KUBECTL, args, Some(stdin));
    assert!(status.success(), "kubectl {args:?} failed: {out}{err}");
    out
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_autoscaler() {
    let env = TestEnv::new("valkinds-hpa").await;
    let ns = env.ns.as_str();
    let manifest = r#"apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: web
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 5
  maxReplicas: 2
  metrics:
  - type: Resource
    resource: {name: cpu, target: {type: Utilization, averageUtilization: 0}}
  behavior:
    scaleDown: {policies: []}
"#;
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["apply", "-f", "-", "-n", ns], Some(manifest));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        "The HorizontalPodAutoscaler \"web\" is invalid: \n\
         * spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`\n\
         * spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0\n\
         * spec.behavior.scaleDown.policies: Required value: must specify at least one Policy\n"
    );
    // autoscaling/v1 is validated as its v2 form, with v2's paths.
    let v1 = "apiVersion: autoscaling/v1\nkind: HorizontalPodAutoscaler\nmetadata:\n  name: web\nspec:\n  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}\n  maxReplicas: 3\n  targetCPUUtilizationPercentage: 0\n";
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["apply", "-f", "-", "-n", ns], Some(v1));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        "The HorizontalPodAutoscaler \"web\" is invalid: spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0\n"
    );
    // Made valid, it is stored; a missing scaleDown policy list is defaulted, not refused.
    let fixed = manifest
        .replace("minReplicas: 5", "minReplicas: 1")
        .replace("averageUtilization: 0", "averageUtilization: 60")
        .replace("{policies: []}", "{stabilizationWindowSeconds: 60}");
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-", "-n", ns], &fixed);
    assert_eq!(out, "horizontalpodautoscaler.autoscaling/web created\n");
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_flow_schema() {
    let env = TestEnv::new("valkinds-fs").await;
    let name = format!("fs-{}", suffix());
    let manifest = format!(
        r#"apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: FlowSchema
metadata:
  name: {name}
spec:
  matchingPrecedence: 1
  priorityLevelConfiguration: {{name: ""}}
  rules:
  - subjects: [{{kind: User}}]
    resourceRules: [{{verbs: ["*", get], apiGroups: ["*"], resources: ["*"], clusterScope: true}}]
"#
    );
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["apply", "-f", "-"], Some(&manifest));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The FlowSchema \"{name}\" is invalid: \n\
             * spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1\n\
             * spec.priorityLevelConfiguration.name: Required value: must reference a priority level\n\
             * spec.rules[0].subjects[0].user: Required value: user is required when subject kind is 'User'\n\
             * spec.rules[0].resourceRules[0].verbs: Invalid value: []string{{\"*\", \"get\"}}: if '*' is present, must not specify other verbs\n"
        )
    );
    // The mandatory catch-all schema keeps its spec.
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "patch",
            "flowschema",
            "catch-all",
            "--type=merge",
            "-p",
            r#"{"spec":{"matchingPrecedence":9000}}"#,
        ],
    );
    assert!(!status.success(), "patch must fail: {out}{err}");
    assert!(
        err.starts_with("The FlowSchema \"catch-all\" is invalid: spec: Invalid value: "),
        "{err}"
    );
    assert!(
        err.ends_with(": spec of 'catch-all' must equal the fixed value\n"),
        "{err}"
    );
    // Made valid, it is stored.
    let fixed = manifest
        .replace("matchingPrecedence: 1", "matchingPrecedence: 500")
        .replace("{name: \"\"}", "{name: global-default}")
        .replace("{kind: User}", "{kind: User, user: {name: alice}}")
        .replace("[\"*\", get]", "[get]");
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-"], &fixed);
    assert_eq!(
        out,
        format!("flowschema.flowcontrol.apiserver.k8s.io/{name} created\n")
    );
    env.kubectl_ok(KUBECTL, &["delete", "flowschema", &name]);
    // A priority level gets v1's defaults, which its validation relies on.
    let level = format!(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: PriorityLevelConfiguration\nmetadata:\n  name: {name}\nspec:\n  type: Limited\n  limited:\n    limitResponse: {{type: Queue, queuing: {{queues: 16}}}}\n"
    );
    kubectl_ok_stdin(&env, &["apply", "-f", "-"], &level);
    let limited = env.kubectl_ok(
        KUBECTL,
        &[
            "get",
            "prioritylevelconfiguration",
            &name,
            "-o",
            "jsonpath={.spec.limited.nominalConcurrencyShares} {.spec.limited.lendablePercent} {.spec.limited.limitResponse.queuing}",
        ],
    );
    assert_eq!(
        limited,
        r#"30 0 {"handSize":8,"queueLengthLimit":50,"queues":16}"#
    );
    env.kubectl_ok(KUBECTL, &["delete", "prioritylevelconfiguration", &name]);
}

/// A PersistentVolume's in-tree source fields and node affinity
/// (`ValidatePersistentVolumeSpec`), and a FlowSchema `/status` write with a
/// repeated condition type (`ValidateFlowSchemaStatusUpdate`).
#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_persistent_volume_and_flow_schema_status() {
    let env = TestEnv::new("valkinds-pv").await;
    let name = format!("pv-{}", suffix());
    let manifest = format!(
        r#"apiVersion: v1
kind: PersistentVolume
metadata:
  name: {name}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  nodeAffinity: {{}}
  iscsi: {{targetPortal: "", iqn: foo, lun: 300}}
"#
    );
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&manifest));
    assert!(!status.success(), "create must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The PersistentVolume \"{name}\" is invalid: \n\
             * spec.nodeAffinity.required: Required value: must specify required node constraints\n\
             * spec.iscsi.targetPortal: Required value\n\
             * spec.iscsi.iqn: Invalid value: \"foo\": must be valid format\n\
             * spec.iscsi.lun: Invalid value: 300: must be between 0 and 255, inclusive\n"
        )
    );
    // Made valid (a local volume with its node affinity), it is stored; its
    // affinity may then move from a beta label to GA, but not elsewhere.
    let local = format!(
        r#"apiVersion: v1
kind: PersistentVolume
metadata:
  name: {name}
spec:
  capacity: {{storage: 1Gi}}
  accessModes: [ReadWriteOnce]
  local: {{path: /mnt/disks/a}}
  nodeAffinity:
    required:
      nodeSelectorTerms:
      - matchExpressions: [{{key: failure-domain.beta.kubernetes.io/zone, operator: In, values: [a]}}]
"#
    );
    let out = kubectl_ok_stdin(&env, &["create", "-f", "-"], &local);
    assert_eq!(out, format!("persistentvolume/{name} created\n"));
    let ga = local.replace(
        "failure-domain.beta.kubernetes.io/zone",
        "topology.kubernetes.io/zone",
    );
    kubectl_ok_stdin(&env, &["replace", "-f", "-"], &ga);
    let moved = ga.replace("values: [a]", "values: [b]");
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["replace", "-f", "-"], Some(&moved));
    assert!(!status.success(), "replace must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The PersistentVolume \"{name}\" is invalid: nodeAffinity: Invalid value: core.VolumeNodeAffinity{{Required:(*core.NodeSelector)(0xc000000000)}}: field is immutable, except for updating from beta label to GA\n"
        )
    );
    env.kubectl_ok(KUBECTL, &["delete", "pv", &name, "--wait=false"]);

    let schema = format!(
        "apiVersion: flowcontrol.apiserver.k8s.io/v1\nkind: FlowSchema\nmetadata:\n  name: {name}\nspec:\n  priorityLevelConfiguration: {{name: global-default}}\n"
    );
    kubectl_ok_stdin(&env, &["create", "-f", "-"], &schema);
    let (status, out, err) = env.kubectl(
        KUBECTL,
        &[
            "patch",
            "flowschema",
            &name,
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"conditions":[{"type":"Dangling","status":"False"},{"type":"Dangling","status":"True"},{"status":"True"}]}}"#,
        ],
    );
    assert!(!status.success(), "status patch must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The FlowSchema \"{name}\" is invalid: \n\
             * status.conditions[1].type: Duplicate value: \"Dangling\"\n\
             * status.conditions[2].type: Required value: must not be empty\n"
        )
    );
    env.kubectl_ok(KUBECTL, &["delete", "flowschema", &name]);
}

/// A Node's taints annotation is decoded and validated
/// (`ValidateNodeSpecificAnnotations`); the removed dynamic kubelet config
/// is dropped on create (`nodeStrategy`'s `dropDisabledFields`).
#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_node_taints_annotation() {
    let env = TestEnv::new("valkinds-node").await;
    let name = format!("node-{}", suffix());
    let manifest = format!(
        r#"apiVersion: v1
kind: Node
metadata:
  name: {name}
  annotations:
    scheduler.alpha.kubernetes.io/taints: '[{{"key":"a","effect":"Sometimes"}},{{"key": 5}}]'
spec:
  configSource: {{configMap: {{namespace: kube-system, name: kubelet, kubeletConfigKey: kubelet}}}}
"#
    );
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&manifest));
    assert!(!status.success(), "create must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The Node \"{name}\" is invalid: metadata.annotations: Invalid value: \"scheduler.alpha.kubernetes.io/taints\": json: cannot unmarshal number into Go struct field Taint.key of type string\n"
        )
    );
    let decodable = manifest.replace(r#",{"key": 5}"#, "");
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["create", "-f", "-"], Some(&decodable));
    assert!(!status.success(), "create must fail: {out}{err}");
    assert_eq!(
        err,
        format!(
            "The Node \"{name}\" is invalid: metadata.annotations.scheduler.alpha.kubernetes.io/taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"\n"
        )
    );
    let valid = decodable.replace("Sometimes", "NoSchedule");
    kubectl_ok_stdin(&env, &["create", "-f", "-"], &valid);
    let config = env.kubectl_ok(
        KUBECTL,
        &["get", "node", &name, "-o", "jsonpath={.spec.configSource}"],
    );
    assert_eq!(config, "");
    env.kubectl_ok(KUBECTL, &["delete", "node", &name]);
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bare_finalizer_on_a_service_account() {
    let env = TestEnv::new("valkinds-sa").await;
    let ns = env.ns.as_str();
    let manifest =
        "apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: robot\n  finalizers: [kubernetes, example.com/hold, custom]\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["apply", "-f", "-", "-n", ns], Some(manifest));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        "The ServiceAccount \"robot\" is invalid: metadata.finalizers[2]: Invalid value: \"custom\": name is neither a standard finalizer name nor is it fully qualified\n"
    );
    let fixed = manifest.replace(", custom]", "]");
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-", "-n", ns], &fixed);
    assert_eq!(out, "serviceaccount/robot created\n");
    // A Lease validates its ObjectMeta with apimachinery's rules only: a bare finalizer is fine there.
    let lease = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: held\n  finalizers: [custom]\n";
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-", "-n", ns], lease);
    assert_eq!(out, "lease.coordination.k8s.io/held created\n");
    env.kubectl_ok(
        KUBECTL,
        &[
            "patch",
            "lease",
            "held",
            "-n",
            ns,
            "--type=merge",
            "-p",
            r#"{"metadata":{"finalizers":null}}"#,
        ],
    );
}

#[tokio::test]
async fn kube_rs_gets_kubes_status_for_an_event_without_its_controller() {
    let env = TestEnv::new("valkinds-ev").await;
    let ns = env.ns.as_str();
    let events: Api<Event> = env.api();
    let event = |controller: Option<&str>| -> Event {
        let mut body = json!({
            "metadata": {"name": "scheduled"},
            "eventTime": "2026-01-01T00:00:00.000000Z",
            "regarding": {"kind": "Pod", "name": "web", "namespace": ns},
            "reportingInstance": "node-1",
            "action": "Binding",
            "reason": "Scheduled",
            "type": "Normal",
            "note": "assigned",
        });
        if let Some(controller) = controller {
            body["reportingController"] = json!(controller);
        }
        serde_json::from_value(body).unwrap()
    };
    let status = expect_api_error(
        events.create(&PostParams::default(), &event(None)).await,
        422,
        "Invalid",
        "Event.events.k8s.io \"scheduled\" is invalid: [reportingController: Required value, reportingController: Invalid value: \"\": name part must be non-empty, reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')]",
    );
    let details = status.details.unwrap();
    assert_eq!(details.kind, "Event");
    assert_eq!(details.group, "events.k8s.io");
    let causes: Vec<(String, String)> = details
        .causes
        .iter()
        .map(|cause| (cause.reason.clone(), cause.field.clone()))
        .collect();
    assert_eq!(
        causes,
        vec![
            ("FieldValueRequired".into(), "reportingController".into()),
            ("FieldValueInvalid".into(), "reportingController".into()),
            ("FieldValueInvalid".into(), "reportingController".into()),
        ]
    );
    let created = events
        .create(
            &PostParams::default(),
            &event(Some("example.com/scheduler")),
        )
        .await
        .unwrap();
    assert_eq!(
        created.reporting_controller.as_deref(),
        Some("example.com/scheduler")
    );
    // events.k8s.io keeps an event's fields: the note cannot change.
    let mut changed = created.clone();
    changed.note = Some("reassigned".into());
    expect_api_error(
        events.replace("scheduled", &PostParams::default(), &changed).await,
        422,
        "Invalid",
        "Event.events.k8s.io \"scheduled\" is invalid: message: Invalid value: \"reassigned\": field is immutable",
    );
}

#[tokio::test]
async fn kubectl_prints_kubes_text_for_a_bad_service_and_changes_its_type() {
    let env = TestEnv::new("valkinds-svc").await;
    let ns = env.ns.as_str();
    let bad = r#"apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  type: ClusterIP
  selector: {app: web}
  ports: [{port: 80}]
  externalIPs: [127.0.0.1]
  externalTrafficPolicy: Local
  loadBalancerSourceRanges: [10.0.0.0/33]
  sessionAffinity: ClientIP
  sessionAffinityConfig: {clientIP: {timeoutSeconds: 90000}}
"#;
    let (status, out, err) = env.kubectl_stdin(KUBECTL, &["apply", "-f", "-", "-n", ns], Some(bad));
    assert!(!status.success(), "apply must fail: {out}{err}");
    assert_eq!(
        err,
        "The Service \"web\" is invalid: \n\
         * spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 90000: must be greater than 0 and less than 86400\n\
         * spec.externalIPs[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)\n\
         * spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'\n\
         * spec.LoadBalancerSourceRanges[0]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)\n"
    );
    // The allocator checks the cluster IP fields before it allocates, as kube's does.
    let mismatched = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  clusterIPs: [10.0.0.99]\n  ports: [{port: 80}]\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(mismatched));
    assert!(!status.success(), "create must fail: {out}{err}");
    assert_eq!(
        err,
        "The Service \"web\" is invalid: spec.clusterIPs: Invalid value: []string{\"10.0.0.99\"}: must be empty when `clusterIP` is not specified\n"
    );
    // A LoadBalancer with a local traffic policy becomes a ClusterIP: what
    // the new type does not use (node ports, health check port, policy,
    // allocateLoadBalancerNodePorts) is dropped as kube drops it.
    let lb = "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\nspec:\n  type: LoadBalancer\n  externalTrafficPolicy: Local\n  selector: {app: web}\n  ports: [{port: 80}]\n";
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-", "-n", ns], lb);
    assert_eq!(out, "service/web created\n");
    let cluster_ip = lb
        .replace("type: LoadBalancer", "type: ClusterIP")
        .replace("  externalTrafficPolicy: Local\n", "");
    let out = kubectl_ok_stdin(&env, &["apply", "-f", "-", "-n", ns], &cluster_ip);
    assert_eq!(out, "service/web configured\n");
    let (status, out, err) = env.kubectl_stdin(
        KUBECTL,
        &[
            "patch",
            "service",
            "web",
            "-n",
            ns,
            "-p",
            r#"{"spec":{"clusterIP":"10.0.0.250"}}"#,
        ],
        None,
    );
    assert!(!status.success(), "patch must fail: {out}{err}");
    assert_eq!(
        err,
        "The Service \"web\" is invalid: spec.clusterIPs[0]: Invalid value: []string{\"10.0.0.250\"}: may not change once set\n"
    );
    // GetWarningsForService: kubectl prints the server's Warning headers.
    let warned = "apiVersion: v1\nkind: Service\nmetadata:\n  name: warned\nspec:\n  type: LoadBalancer\n  selector: {app: web}\n  ports: [{port: 80}]\n  externalIPs: [192.168.010.1]\n  loadBalancerSourceRanges: [10.1.2.3/8]\n";
    let (status, out, err) =
        env.kubectl_stdin(KUBECTL, &["create", "-f", "-", "-n", ns], Some(warned));
    assert!(status.success(), "create must succeed: {out}{err}");
    assert_eq!(
        err,
        "Warning: spec.externalIPs[0]: non-standard IP address \"192.168.010.1\" will be considered invalid in a future Kubernetes release: use \"192.168.10.1\"\n\
         Warning: spec.externalIPs is deprecated and may no longer be implemented in some clusters\n\
         Warning: spec.loadBalancerSourceRanges[0]: CIDR value \"10.1.2.3/8\" is ambiguous in this context (should be \"10.0.0.0/8\" or \"10.1.2.3/32\"?)\n"
    );
}

#[tokio::test]
async fn kubectl_updates_a_daemon_set_template_as_kube_counts_it() {
    let env = TestEnv::new("valkinds-ds").await;
    let ns = env.ns.as_str();
    let manifest = |image: &str, memory: &str| {
        format!("apiVersion: apps/v1\nkind: DaemonSet\nmetadata:\n  name: agent\nspec:\n  selector:\n    matchLabels: {{app: agent}}\n  template:\n    metadata:\n      labels: {{app: agent}}\n    spec:\n      containers:\n      - name: c\n        image: {image}\n        resources:\n          limits: {{memory: {memory}}}\n")
    };
    let generation = || {
        let out = kubectl_ok_stdin(
            &env,
            &[
                "get",
                "daemonset",
                "agent",
                "-n",
                ns,
                "-o",
                "jsonpath={.metadata.annotations.deprecated\\.daemonset\\.template\\.generation}",
            ],
            "",
        );
        out.trim().to_string()
    };
    kubectl_ok_stdin(
        &env,
        &["apply", "-f", "-", "-n", ns],
        &manifest("nginx:1", "1Gi"),
    );
    assert_eq!(generation(), "1");
    // A changed template is counted, not refused (`ValidateDaemonSetSpecUpdate`).
    let out = kubectl_ok_stdin(
        &env,
        &["apply", "-f", "-", "-n", ns],
        &manifest("nginx:2", "1Gi"),
    );
    assert_eq!(out, "daemonset.apps/agent configured\n");
    assert_eq!(generation(), "2");
    // The same quantity written another way is no template change.
    let out = kubectl_ok_stdin(
        &env,
        &["replace", "-f", "-", "-n", ns],
        &manifest("nginx:2", "1024Mi"),
    );
    assert_eq!(out, "daemonset.apps/agent replaced\n");
    assert_eq!(generation(), "2");
}
