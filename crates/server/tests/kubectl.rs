//! kubectl 1.33 and 1.27 against the server, as a user would run them.
//! Each scenario runs once per kubectl version (`<scenario>::v1_33`, `::v1_27`).
//! Needs `kubectl.1.33` and `kubectl.1.27` (see `common::kubectl_dir`).
//! Protobuf matters here: kubectl 1.27 reads `/openapi/v2` as protobuf for
//! `create -f`/`replace -f` validation and `explain`, and kubectl 1.33's typed
//! generators (`create namespace`, `create configmap`) send protobuf bodies.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::{suffix, TestEnv};
use serde_json::Value;

use ferrokube_testkit::per_version;

per_version!(
    api_resources,
    api_versions,
    create_and_get_formats,
    secret_string_data,
    selectors,
    tables,
    replace_and_delete,
    explain,
    raw_version,
    raw_readyz,
    raw_metrics,
    create_namespace,
    create_configmap_from_literal,
    invalid_objects,
    component_statuses,
    deprecated_endpoints_warn,
);

const MANIFEST: &str = r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels: {app: demo}
spec:
  replicas: 2
  selector:
    matchLabels: {app: demo}
  template:
    metadata:
      labels: {app: demo}
    spec:
      containers:
      - name: nginx
        image: nginx:1.27
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: cfg
  labels: {app: demo}
data:
  a: "1"
  b: two
---
apiVersion: v1
kind: Secret
metadata:
  name: sec
  labels: {app: demo}
type: Opaque
stringData:
  password: hunter2
"#;

fn json(out: &str) -> Value {
    serde_json::from_str(out).unwrap_or_else(|e| panic!("not JSON ({e}):\n{out}"))
}

fn lines(out: &str) -> Vec<&str> {
    out.lines().collect()
}

/// A kubectl table: the header's words and each row's words.
fn table(out: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut it = out.lines().filter(|l| !l.trim().is_empty());
    let words = |l: &str| l.split_whitespace().map(str::to_string).collect::<Vec<_>>();
    let header = words(it.next().unwrap_or_else(|| panic!("no table in {out:?}")));
    (header, it.map(words).collect())
}

/// The row of an `api-resources` table whose NAME is `name`, cut at the
/// header's column offsets (so empty cells stay empty).
fn resource_row(out: &str, name: &str) -> Vec<String> {
    let header = out.lines().next().unwrap();
    let cols = ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"];
    let starts: Vec<usize> = cols
        .iter()
        .map(|c| {
            header
                .find(c)
                .unwrap_or_else(|| panic!("{c} not in {header:?}"))
        })
        .collect();
    let row = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("no {name} row in:\n{out}"));
    (0..cols.len())
        .map(|i| {
            let end = starts
                .get(i + 1)
                .copied()
                .unwrap_or(row.len())
                .min(row.len());
            let cell = &row[starts[i].min(row.len())..end];
            if i + 1 < cols.len() {
                assert!(
                    cell.ends_with(' '),
                    "cell {cell:?} overruns its column in {row:?}"
                );
            }
            cell.split_whitespace().next().unwrap_or("").to_string()
        })
        .collect()
}

async fn api_resources(v: &str) {
    let env = TestEnv::new(&format!("kc-ar-{}", v.replace('.', ""))).await;
    let out = env.kubectl_ok(v, &["api-resources"]);
    let (header, _) = table(&out);
    assert_eq!(
        header,
        ["NAME", "SHORTNAMES", "APIVERSION", "NAMESPACED", "KIND"]
    );
    let want: &[[&str; 5]] = &[
        ["deployments", "deploy", "apps/v1", "true", "Deployment"],
        ["configmaps", "cm", "v1", "true", "ConfigMap"],
        ["secrets", "", "v1", "true", "Secret"],
        ["namespaces", "ns", "v1", "false", "Namespace"],
        ["statefulsets", "sts", "apps/v1", "true", "StatefulSet"],
        ["cronjobs", "cj", "batch/v1", "true", "CronJob"],
        [
            "customresourcedefinitions",
            "crd,crds",
            "apiextensions.k8s.io/v1",
            "false",
            "CustomResourceDefinition",
        ],
    ];
    for row in want {
        assert_eq!(
            resource_row(&out, row[0]),
            row,
            "api-resources row for {}",
            row[0]
        );
    }

    let wide = env.kubectl_ok(v, &["api-resources", "-o", "wide"]);
    let (header, rows) = table(&wide);
    assert_eq!(header[5..], ["VERBS", "CATEGORIES"]);
    let deploy = rows.iter().find(|r| r[0] == "deployments").unwrap();
    assert_eq!(
        deploy[5],
        "create,delete,deletecollection,get,list,patch,update,watch"
    );
    assert_eq!(deploy[6], "all");

    let names = env.kubectl_ok(v, &["api-resources", "--api-group=apps", "-o", "name"]);
    assert_eq!(
        lines(&names),
        [
            "controllerrevisions.apps",
            "daemonsets.apps",
            "deployments.apps",
            "replicasets.apps",
            "statefulsets.apps"
        ]
    );
    let cluster = env.kubectl_ok(v, &["api-resources", "--namespaced=false", "-o", "name"]);
    assert!(lines(&cluster).contains(&"namespaces"), "{cluster}");
    assert!(!lines(&cluster).contains(&"configmaps"), "{cluster}");
}

async fn api_versions(v: &str) {
    let env = TestEnv::new(&format!("kc-av-{}", v.replace('.', ""))).await;
    let out = env.kubectl_ok(v, &["api-versions"]);
    let got = lines(&out);
    for must in [
        "v1",
        "apps/v1",
        "batch/v1",
        "autoscaling/v2",
        "coordination.k8s.io/v1",
    ] {
        assert!(
            got.contains(&must),
            "{must} missing from api-versions:\n{out}"
        );
    }
    let mut sorted = got.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(got, sorted, "api-versions is sorted and without duplicates");
}

/// A namespace holding MANIFEST (created with `kubectl create -f`) plus a
/// configmap `other` without labels; returns the env and the manifest file.
async fn with_manifest(v: &str, prefix: &str) -> (TestEnv, tempfile::TempDir, String) {
    let env = TestEnv::new(&format!("{prefix}-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("app.yaml");
    std::fs::write(&file, MANIFEST).unwrap();
    let f = file.to_str().unwrap().to_string();
    let out = env.kubectl_ok(v, &["create", "-f", &f, "-n", ns]);
    assert_eq!(
        lines(&out),
        [
            "deployment.apps/web created",
            "configmap/cfg created",
            "secret/sec created"
        ]
    );
    let other = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: other\n";
    let (st, out, err) = env.kubectl_stdin(v, &["create", "-f", "-", "-n", ns], Some(other));
    assert!(st.success(), "create -f -: {out}{err}");
    assert_eq!(out, "configmap/other created\n");
    (env, dir, f)
}

async fn create_and_get_formats(v: &str) {
    let (env, _dir, _) = with_manifest(v, "kc-get").await;
    let ns = env.ns.as_str();
    let d = json(&env.kubectl_ok(v, &["get", "deployment", "web", "-n", ns, "-o", "json"]));
    assert_eq!(d["kind"], "Deployment");
    assert_eq!(d["metadata"]["namespace"], ns);
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate", "defaulted");
    assert!(d["metadata"]["uid"].as_str().is_some_and(|u| u.len() == 36));

    let yaml = env.kubectl_ok(v, &["get", "cm", "cfg", "-n", ns, "-o", "yaml"]);
    for l in [
        "apiVersion: v1",
        "kind: ConfigMap",
        "  name: cfg",
        &format!("  namespace: {ns}"),
    ] {
        assert!(yaml.lines().any(|y| y == l), "{l:?} not in:\n{yaml}");
    }
    assert!(yaml.contains("data:\n  a: \"1\"\n  b: two\n"), "{yaml}");

    let list = json(&env.kubectl_ok(v, &["get", "cm", "-l", "app=demo", "-n", ns, "-o", "json"]));
    assert_eq!(list["kind"], "List");
    assert_eq!(list["items"].as_array().unwrap().len(), 1);
    assert_eq!(list["items"][0]["metadata"]["name"], "cfg");

    let args = [
        "get",
        "cm,secret,deploy",
        "-l",
        "app=demo",
        "-n",
        ns,
        "-o",
        "name",
    ];
    let out = env.kubectl_ok(v, &args);
    assert_eq!(
        lines(&out),
        ["configmap/cfg", "secret/sec", "deployment.apps/web"]
    );

    let (st, _, err) = env.kubectl(v, &["get", "cm", "nope", "-n", ns]);
    assert_eq!(st.code(), Some(1));
    assert_eq!(
        err.trim(),
        r#"Error from server (NotFound): configmaps "nope" not found"#
    );
}

/// Secrets: `stringData` is merged into `data` (base64) and never stored.
async fn secret_string_data(v: &str) {
    let (env, _dir, _) = with_manifest(v, "kc-sec").await;
    let ns = env.ns.as_str();
    let s = json(&env.kubectl_ok(v, &["get", "secret", "sec", "-n", ns, "-o", "json"]));
    assert_eq!(
        s["data"]["password"], "aHVudGVyMg==",
        "stringData lands in data: {s}"
    );
    assert!(
        s.get("stringData").is_none(),
        "stringData is write-only: {s}"
    );
}

async fn selectors(v: &str) {
    let (env, _dir, _) = with_manifest(v, "kc-sel").await;
    let ns = env.ns.as_str();
    let out = env.kubectl_ok(v, &["get", "cm", "-l", "app!=demo", "-n", ns, "-o", "name"]);
    assert!(lines(&out).contains(&"configmap/other"), "{out}");
    assert!(!lines(&out).contains(&"configmap/cfg"), "{out}");
    let out = env.kubectl_ok(
        v,
        &[
            "get",
            "cm,deploy",
            "-l",
            "app in (demo)",
            "-n",
            ns,
            "-o",
            "name",
        ],
    );
    assert_eq!(lines(&out), ["configmap/cfg", "deployment.apps/web"]);
    let fs = [
        "get",
        "cm",
        "--field-selector",
        "metadata.name=cfg",
        "-n",
        ns,
        "-o",
        "name",
    ];
    assert_eq!(lines(&env.kubectl_ok(v, &fs)), ["configmap/cfg"]);
    let fs = [
        "get",
        "cm",
        "--field-selector",
        "metadata.name!=cfg",
        "-n",
        ns,
        "-o",
        "name",
    ];
    assert!(!lines(&env.kubectl_ok(v, &fs)).contains(&"configmap/cfg"));

    let out = env.kubectl_ok(
        v,
        &["get", "cm", "-A", "--field-selector", "metadata.name=cfg"],
    );
    let (header, rows) = table(&out);
    assert_eq!(header[..2], ["NAMESPACE", "NAME"], "{out}");
    assert!(rows.iter().any(|r| r[..2] == [ns, "cfg"]), "{out}");
    assert!(rows.iter().all(|r| r[1] == "cfg"), "{out}");
    let out = env.kubectl_ok(v, &["get", "deploy", "-A", "-l", "app=demo", "-o", "name"]);
    assert!(lines(&out).contains(&"deployment.apps/web"), "{out}");
}

/// Server-side tables carry each kind's own printer columns.
async fn tables(v: &str) {
    let (env, _dir, _) = with_manifest(v, "kc-tab").await;
    let ns = env.ns.as_str();
    let (header, rows) = table(&env.kubectl_ok(v, &["get", "cm", "cfg", "-n", ns]));
    assert_eq!(header, ["NAME", "DATA", "AGE"]);
    assert_eq!(rows[0][..2], ["cfg", "2"]);
    let (header, rows) = table(&env.kubectl_ok(v, &["get", "secret", "sec", "-n", ns]));
    assert_eq!(header, ["NAME", "TYPE", "DATA", "AGE"]);
    assert_eq!(rows[0][..3], ["sec", "Opaque", "1"]);
    let (header, rows) = table(&env.kubectl_ok(v, &["get", "deploy", "web", "-n", ns]));
    assert_eq!(header, ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]);
    assert_eq!(rows[0][0], "web");
    assert!(
        rows[0][1].ends_with("/2"),
        "READY is ready/desired: {rows:?}"
    );
    let args = ["get", "cm", "-A", "--field-selector", "metadata.name=cfg"];
    let (header, rows) = table(&env.kubectl_ok(v, &args));
    assert_eq!(header, ["NAMESPACE", "NAME", "DATA", "AGE"]);
    assert!(rows.iter().any(|r| r[..3] == [ns, "cfg", "2"]), "{rows:?}");
    let (header, _) = table(&env.kubectl_ok(v, &["get", "ns", ns]));
    assert_eq!(header, ["NAME", "STATUS", "AGE"]);
}

async fn replace_and_delete(v: &str) {
    let (env, dir, f) = with_manifest(v, "kc-rep").await;
    let ns = env.ns.as_str();
    let before = json(&env.kubectl_ok(v, &["get", "deploy", "web", "-n", ns, "-o", "json"]));

    let changed = MANIFEST
        .replace("b: two", "b: three")
        .replace("replicas: 2", "replicas: 3");
    std::fs::write(dir.path().join("app.yaml"), changed).unwrap();
    let out = env.kubectl_ok(v, &["replace", "-f", &f, "-n", ns]);
    assert_eq!(
        lines(&out),
        [
            "deployment.apps/web replaced",
            "configmap/cfg replaced",
            "secret/sec replaced"
        ]
    );
    let c = json(&env.kubectl_ok(v, &["get", "cm", "cfg", "-n", ns, "-o", "json"]));
    assert_eq!(c["data"]["b"], "three");
    let d = json(&env.kubectl_ok(v, &["get", "deploy", "web", "-n", ns, "-o", "json"]));
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["metadata"]["uid"], before["metadata"]["uid"]);
    assert_eq!(d["metadata"]["generation"], 2);

    let out = env.kubectl_ok(v, &["delete", "-f", &f, "-n", ns]);
    let want = [
        r#"deployment.apps "web" deleted"#,
        r#"configmap "cfg" deleted"#,
        r#"secret "sec" deleted"#,
    ];
    assert_eq!(lines(&out), want);
    let (st, _, err) = env.kubectl(v, &["get", "cm", "cfg", "-n", ns]);
    assert_eq!(st.code(), Some(1));
    assert_eq!(
        err.trim(),
        r#"Error from server (NotFound): configmaps "cfg" not found"#
    );

    let out = env.kubectl_ok(v, &["delete", "cm", "other", "-n", ns]);
    assert_eq!(out, "configmap \"other\" deleted\n");
    let (st, _, err) = env.kubectl(v, &["delete", "cm", "other", "-n", ns]);
    assert_eq!(st.code(), Some(1));
    assert_eq!(
        err.trim(),
        r#"Error from server (NotFound): configmaps "other" not found"#
    );
}

async fn explain(v: &str) {
    let env = TestEnv::new(&format!("kc-ex-{}", v.replace('.', ""))).await;
    let out = env.kubectl_ok(v, &["explain", "deployment.spec.template.spec.containers"]);
    let got = lines(&out);
    for l in [
        "GROUP:      apps",
        "KIND:       Deployment",
        "VERSION:    v1",
        "FIELD: containers <[]Container>",
        "DESCRIPTION:",
        "FIELDS:",
        "  image\t<string>",
        "  name\t<string> -required-",
        "  ports\t<[]ContainerPort>",
    ] {
        assert!(got.contains(&l), "{l:?} not in explain output:\n{out}");
    }
    assert!(
        out.contains("List of containers belonging to the pod."),
        "{out}"
    );

    let out = env.kubectl_ok(v, &["explain", "configmap"]);
    for l in [
        "KIND:       ConfigMap",
        "VERSION:    v1",
        "  data\t<map[string]string>",
    ] {
        assert!(
            lines(&out).contains(&l),
            "{l:?} not in explain output:\n{out}"
        );
    }
}

async fn raw_version(v: &str) {
    let env = TestEnv::new(&format!("kc-ver-{}", v.replace('.', ""))).await;
    let info = json(&env.kubectl_ok(v, &["get", "--raw", "/version"]));
    let git = info["gitVersion"].as_str().unwrap();
    assert!(git.starts_with("v1.34."), "gitVersion {git}");
    assert_eq!(info["major"], "1");
    assert_eq!(info["minor"], "34");
    assert!(
        info["platform"].as_str().is_some_and(|p| p.contains('/')),
        "{info}"
    );
}

async fn raw_readyz(v: &str) {
    let env = TestEnv::new(&format!("kc-rz-{}", v.replace('.', ""))).await;
    let out = env.kubectl_ok(v, &["get", "--raw", "/readyz?verbose"]);
    let got = lines(&out);
    // kube-apiserver 1.34's readyz checks in its order, for the checks and
    // post-start hooks ferrokube has equivalents of.
    let wanted = [
        "[+]ping ok",
        "[+]log ok",
        "[+]etcd ok",
        "[+]etcd-readiness ok",
        "[+]informer-sync ok",
        "[+]poststarthook/rbac/bootstrap-roles ok",
        "[+]poststarthook/scheduling/bootstrap-system-priority-classes ok",
        "[+]poststarthook/priority-and-fairness-config-producer ok",
        "[+]poststarthook/start-cluster-authentication-info-controller ok",
        "[+]poststarthook/start-legacy-token-tracking-controller ok",
        "[+]shutdown ok",
        "readyz check passed",
    ];
    if common::external_kubeconfig().is_none() {
        assert_eq!(got, wanted, "{out}");
    } else {
        for line in wanted {
            assert!(got.contains(&line), "{line:?} in {out}");
        }
    }
    let out = env.kubectl_ok(v, &["get", "--raw", "/livez"]);
    assert_eq!(out, "ok");
}

/// `kubectl get --raw /metrics`: kube's request counter and duration
/// histogram, labelled as kube labels them, for the requests just made.
async fn raw_metrics(v: &str) {
    let env = TestEnv::new(&format!("kc-met-{}", v.replace('.', ""))).await;
    let name = format!("met-{}", suffix());
    env.kubectl_ok(v, &["create", "configmap", &name, "--from-literal=a=1"]);
    env.kubectl_ok(v, &["get", "configmaps"]);
    env.kubectl_ok(v, &["get", "configmap", &name, "-o", "json"]);
    let out = env.kubectl_ok(v, &["get", "--raw", "/metrics"]);
    let value = |series: &str| -> f64 {
        out.lines()
            .find_map(|line| line.strip_prefix(series))
            .and_then(|rest| rest.trim().parse().ok())
            .unwrap_or_else(|| panic!("no series {series} in:\n{out}"))
    };
    let labels = |verb: &str, scope: &str| {
        format!(
            "component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"configmaps\",scope=\"{scope}\",subresource=\"\",verb=\"{verb}\",version=\"v1\"}}"
        )
    };
    assert!(
        out.contains("# TYPE apiserver_request_duration_seconds histogram"),
        "{out}"
    );
    assert!(
        value(&format!(
            "apiserver_request_total{{code=\"201\",{}",
            labels("POST", "namespace")
        )) >= 1.0
    );
    assert!(
        value(&format!(
            "apiserver_request_total{{code=\"200\",{}",
            labels("LIST", "namespace")
        )) >= 1.0
    );
    assert!(
        value(&format!(
            "apiserver_request_total{{code=\"200\",{}",
            labels("GET", "resource")
        )) >= 1.0
    );
    let list = labels("LIST", "namespace");
    let count = value(&format!("apiserver_request_duration_seconds_count{{{list}"));
    assert!(count >= 1.0);
    assert!(value(&format!("apiserver_request_duration_seconds_sum{{{list}")) > 0.0);
    let inf = list.replacen(",resource=", ",le=\"+Inf\",resource=", 1);
    assert_eq!(
        value(&format!("apiserver_request_duration_seconds_bucket{{{inf}")),
        count
    );
}

/// `kubectl create namespace` sends a protobuf body from kubectl 1.33 on.
async fn create_namespace(v: &str) {
    let env = TestEnv::new(&format!("kc-ns-{}", v.replace('.', ""))).await;
    let name = format!("kc-made-{}-{}", v.replace('.', ""), suffix());
    let out = env.kubectl_ok(v, &["create", "namespace", &name]);
    assert_eq!(out, format!("namespace/{name} created\n"));
    let ns = json(&env.kubectl_ok(v, &["get", "ns", &name, "-o", "json"]));
    assert_eq!(ns["status"]["phase"], "Active");
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        name.as_str()
    );
    let (st, _, err) = env.kubectl(v, &["create", "namespace", &name]);
    assert_eq!(st.code(), Some(1));
    let want = format!(r#"Error from server (AlreadyExists): namespaces "{name}" already exists"#);
    assert_eq!(err.trim(), want);
}

/// `kubectl create configmap` sends a protobuf body from kubectl 1.33 on.
async fn create_configmap_from_literal(v: &str) {
    let env = TestEnv::new(&format!("kc-lit-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let args = [
        "create",
        "configmap",
        "lit",
        "--from-literal=a=1",
        "--from-literal=b=two",
        "-n",
        ns,
    ];
    assert_eq!(env.kubectl_ok(v, &args), "configmap/lit created\n");
    let cm = json(&env.kubectl_ok(v, &["get", "cm", "lit", "-n", ns, "-o", "json"]));
    assert_eq!(cm["data"], serde_json::json!({"a": "1", "b": "two"}));
    let (st, _, err) = env.kubectl(v, &args);
    assert_eq!(st.code(), Some(1));
    let want = r#"error: failed to create configmap: configmaps "lit" already exists"#;
    assert_eq!(err.trim(), want);
}

/// Objects kube's per-kind validation refuses: `kubectl apply` prints the
/// 422's causes as kube-apiserver's would make it print them, nothing is
/// stored, and an immutable Pod field cannot be changed by a later apply.
async fn invalid_objects(v: &str) {
    let env = TestEnv::new(&format!("kc-inv-{}", v.replace('.', ""))).await;
    let ns = env.ns.as_str();
    let refused = |manifest: &str| {
        let (st, out, err) = env.kubectl_stdin(v, &["apply", "-f", "-", "-n", ns], Some(manifest));
        assert!(!st.success(), "apply must fail: {out}{err}");
        err
    };
    let deployment = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: noselector\nspec:\n  template:\n    metadata:\n      labels: {app: x}\n    spec:\n      containers:\n      - {name: c, image: nginx}\n";
    assert_eq!(
        refused(deployment),
        "The Deployment \"noselector\" is invalid: \n* spec.selector: Required value\n* spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"x\"}: `selector` does not match template `labels`\n"
    );
    let pod = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: empty\nspec:\n  containers: []\n";
    assert_eq!(
        refused(pod),
        "The Pod \"empty\" is invalid: spec.containers: Required value\n"
    );
    let config_map =
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: spaced\ndata:\n  a key: v\n";
    assert_eq!(
        refused(config_map),
        "The ConfigMap \"spaced\" is invalid: data[a key]: Invalid value: \"a key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')\n"
    );
    let job = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: norestart\nspec:\n  template:\n    spec:\n      containers:\n      - {name: c, image: busybox}\n";
    assert_eq!(
        refused(job),
        "The Job \"norestart\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\"\n"
    );
    let service =
        "apiVersion: v1\nkind: Service\nmetadata:\n  name: noports\nspec:\n  selector: {app: x}\n";
    assert_eq!(
        refused(service),
        "The Service \"noports\" is invalid: spec.ports: Required value\n"
    );
    let stateful_set = "apiVersion: apps/v1\nkind: StatefulSet\nmetadata:\n  name: ordinals\nspec:\n  selector:\n    matchLabels: {app: x}\n  ordinals: {start: -1}\n  persistentVolumeClaimRetentionPolicy: {whenDeleted: Keep}\n  template:\n    metadata:\n      labels: {app: x}\n    spec:\n      containers:\n      - {name: c, image: nginx}\n";
    assert_eq!(
        refused(stateful_set),
        "The StatefulSet \"ordinals\" is invalid: \n* spec.persistentVolumeClaimRetentionPolicy.whenDeleted: Unsupported value: \"Keep\": supported values: \"Retain\", \"Delete\"\n* spec.ordinals.start: Invalid value: -1: must be greater than or equal to 0\n"
    );
    // validateHTTPGetAction's header names, reported at the list's path.
    let headers = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: headers\nspec:\n  containers:\n  - name: c\n    image: nginx\n    readinessProbe:\n      httpGet:\n        port: 80\n        httpHeaders:\n        - {name: X-Ok, value: v}\n        - {name: bad name, value: v}\n";
    assert_eq!(
        refused(headers),
        "The Pod \"headers\" is invalid: spec.containers[0].readinessProbe.httpGet.httpHeaders: Invalid value: \"bad name\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')\n"
    );
    // Scheduling rules of ValidatePodSpec, in a pod and in a template.
    let spread = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: spread\nspec:\n  containers:\n  - {name: c, image: nginx}\n  topologySpreadConstraints:\n  - {maxSkew: 1, topologyKey: zone, whenUnsatisfiable: Sometimes}\n";
    assert_eq!(
        refused(spread),
        "The Pod \"spread\" is invalid: spec.topologySpreadConstraints[0].whenUnsatisfiable: Unsupported value: \"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\"\n"
    );
    let weighted = |weight: u32| {
        format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: spreadout\nspec:\n  selector:\n    matchLabels: {{app: s}}\n  template:\n    metadata:\n      labels: {{app: s}}\n    spec:\n      containers:\n      - {{name: c, image: nginx}}\n      affinity:\n        podAntiAffinity:\n          preferredDuringSchedulingIgnoredDuringExecution:\n          - weight: {weight}\n            podAffinityTerm:\n              labelSelector:\n                matchLabels: {{app: s}}\n              matchLabelKeys: [pod-template-hash]\n              topologyKey: kubernetes.io/hostname\n      topologySpreadConstraints:\n      - maxSkew: 1\n        topologyKey: zone\n        whenUnsatisfiable: ScheduleAnyway\n        labelSelector:\n          matchLabels: {{app: s}}\n        matchLabelKeys: [pod-template-hash]\n")
    };
    assert_eq!(
        refused(&weighted(0)),
        "The Deployment \"spreadout\" is invalid: spec.template.spec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100\n"
    );
    let (st, out, err) =
        env.kubectl_stdin(v, &["apply", "-f", "-", "-n", ns], Some(&weighted(100)));
    assert!(st.success(), "a valid weight is accepted: {out}{err}");
    // A pod whose matchLabelKeys the server merges into its selectors.
    let merged = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: merged\n  labels: {app: s, pod-template-hash: h1}\nspec:\n  containers:\n  - {name: c, image: nginx}\n  affinity:\n    podAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n      - labelSelector:\n          matchLabels: {app: s}\n        matchLabelKeys: [pod-template-hash]\n        topologyKey: zone\n  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: zone\n    whenUnsatisfiable: DoNotSchedule\n    labelSelector:\n      matchLabels: {app: s}\n    matchLabelKeys: [pod-template-hash]\n";
    let (st, out, err) = env.kubectl_stdin(v, &["apply", "-f", "-", "-n", ns], Some(merged));
    assert!(
        st.success(),
        "merged matchLabelKeys are accepted: {out}{err}"
    );
    // A Job without a selector gets the generated one.
    env.kubectl_ok(v, &["create", "job", "once", "--image=busybox", "-n", ns]);
    let created = json(&env.kubectl_ok(v, &["get", "job", "once", "-n", ns, "-o", "json"]));
    let uid = created["metadata"]["uid"].as_str().unwrap();
    assert_eq!(
        created["spec"]["selector"]["matchLabels"]["batch.kubernetes.io/controller-uid"],
        uid
    );
    assert_eq!(
        created["spec"]["template"]["metadata"]["labels"]["job-name"],
        "once"
    );
    let (st, out, err) = env.kubectl(
        v,
        &["get", "deployment,pod,configmap", "-n", ns, "-o", "name"],
    );
    assert!(st.success(), "{err}");
    assert!(
        !out.contains("noselector") && !out.contains("pod/empty") && !out.contains("spaced"),
        "nothing refused is stored: {out}"
    );

    let valid_pod = |env_value: &str| {
        format!("apiVersion: v1\nkind: Pod\nmetadata:\n  name: web\nspec:\n  containers:\n  - name: c\n    image: nginx:1.27\n    env:\n    - {{name: A, value: \"{env_value}\"}}\n")
    };
    let (st, out, err) =
        env.kubectl_stdin(v, &["apply", "-f", "-", "-n", ns], Some(&valid_pod("1")));
    assert!(st.success(), "a valid pod is created: {out}{err}");
    let err = refused(&valid_pod("2"));
    assert!(
        err.starts_with("The Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n"),
        "{err}"
    );
}

/// `kubectl get cs` as against kube 1.34 with no controller-manager or
/// scheduler on their default ports: both Unhealthy with Go's dial error,
/// the storage `etcd-0` Healthy, the deprecation warning; one by name, an
/// unknown name (kube's plain 500), a field selector.
async fn component_statuses(v: &str) {
    let env = TestEnv::new("kc-cs").await;
    let (status, out, err) = env.kubectl(v, &["get", "componentstatuses"]);
    assert!(status.success(), "{out}{err}");
    assert!(
        err.contains("Warning: v1 ComponentStatus is deprecated in v1.19+"),
        "{err}"
    );
    let (header, rows) = table(&out);
    assert_eq!(header, ["NAME", "STATUS", "MESSAGE", "ERROR"]);
    let names: Vec<&str> = rows.iter().map(|row| row[0].as_str()).collect();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    assert_eq!(rows[1][1..], ["Healthy", "ok"]);
    for (row, port) in [(&rows[0], 10257), (&rows[2], 10259)] {
        assert_eq!(
            row[1..].join(" "),
            format!(
                "Unhealthy Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            )
        );
    }
    let scheduler = json(&env.kubectl_ok(v, &["get", "cs", "scheduler", "-o", "json"]));
    assert_eq!(scheduler["kind"], "ComponentStatus");
    assert_eq!(
        scheduler["metadata"],
        serde_json::json!({"name": "scheduler"})
    );
    assert_eq!(scheduler["conditions"][0]["type"], "Healthy");
    assert_eq!(scheduler["conditions"][0]["status"], "False");
    let (status, _, err) = env.kubectl(v, &["get", "cs", "nope"]);
    assert!(!status.success());
    assert!(
        err.contains(
            "Error from server (InternalError): Internal error occurred: Component not found: nope"
        ),
        "{err}"
    );
    let args = [
        "get",
        "cs",
        "--field-selector",
        "metadata.name=etcd-0",
        "-o",
        "name",
    ];
    assert_eq!(env.kubectl_ok(v, &args).trim(), "componentstatus/etcd-0");
}

/// kube 1.33 deprecated core v1 Endpoints: every request carries the
/// installer's warning, which kubectl prints; EndpointSlices do not.
async fn deprecated_endpoints_warn(v: &str) {
    let env = TestEnv::new("kc-ep").await;
    let (status, out, err) = env.kubectl(v, &["get", "endpoints", "-A"]);
    assert!(status.success(), "{out}{err}");
    assert!(out.contains("kubernetes"), "{out}");
    assert_eq!(
        err.trim(),
        "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"
    );
    let (status, out, err) = env.kubectl(v, &["get", "endpointslices", "-A"]);
    assert!(status.success(), "{out}{err}");
    assert_eq!(err.trim(), "");
}
