//! `kubectl get --chunk-size` pages through a collection with `limit` and
//! `continue`, once per kubectl version (1.33 and 1.27).
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use common::TestEnv;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::PostParams;

use ferrokube_testkit::per_version;

per_version!(get_in_chunks);

const OBJECTS: usize = 7;

/// The request lines kubectl logs at `-v=6` for LISTs of configmaps.
fn list_requests(log: &str) -> Vec<&str> {
    log.lines()
        .filter(|line| line.contains("GET") && line.contains("/configmaps?"))
        .collect()
}

async fn get_in_chunks(v: &str) {
    let env = TestEnv::new("kc-chunks").await;
    let ns = env.ns.as_str();
    let configmaps = env.api::<ConfigMap>();
    for index in 0..OBJECTS {
        let mut configmap = ConfigMap::default();
        configmap.metadata.name = Some(format!("chunk-{index}"));
        configmap.data = Some([("k".to_string(), index.to_string())].into());
        configmaps
            .create(&PostParams::default(), &configmap)
            .await
            .unwrap();
    }
    let ours = |out: &str| -> Vec<String> {
        let mut names: Vec<String> = out
            .lines()
            .filter_map(|line| line.split_whitespace().next())
            .map(|name| name.trim_start_matches("configmap/").to_string())
            .filter(|name| name.starts_with("chunk-"))
            .collect();
        names.sort();
        names
    };
    let expected: Vec<String> = (0..OBJECTS).map(|index| format!("chunk-{index}")).collect();

    // Names, and the default table (one header, a row per object).
    let out = env.kubectl_ok(
        v,
        &[
            "get",
            "configmaps",
            "--chunk-size=2",
            "-n",
            ns,
            "-o",
            "name",
        ],
    );
    assert_eq!(ours(&out), expected, "{out}");
    let out = env.kubectl_ok(v, &["get", "configmaps", "--chunk-size=2", "-n", ns]);
    assert_eq!(ours(&out), expected, "{out}");
    assert_eq!(
        out.lines().filter(|line| line.starts_with("NAME")).count(),
        1,
        "{out}"
    );

    // -v=6 shows the pages: limit=2 on each request, continue on all but the first.
    let (status, out, log) = env.kubectl(
        v,
        &[
            "get",
            "configmaps",
            "--chunk-size=2",
            "-n",
            ns,
            "-o",
            "name",
            "-v=6",
        ],
    );
    assert!(status.success(), "{out}\n{log}");
    assert_eq!(ours(&out), expected, "{out}");
    let requests = list_requests(&log);
    let pages = requests.len();
    assert!(
        pages >= OBJECTS.div_ceil(2),
        "expected at least {} pages:\n{log}",
        OBJECTS.div_ceil(2)
    );
    assert!(
        requests.iter().all(|line| line.contains("limit=2")),
        "{log}"
    );
    assert!(!requests[0].contains("continue="), "{log}");
    assert!(
        requests[1..].iter().all(|line| line.contains("continue=")),
        "{log}"
    );
    assert!(requests.iter().all(|line| line.contains("200 OK")), "{log}");
}
