//! kube-rs typed clients against the server: CRUD, lists, selectors,
//! pagination, status and scale subresources, and the error Statuses.
#![allow(clippy::unwrap_used)]

use ferrokube_testkit as common;

use std::collections::BTreeMap;

use common::{api_status, create_namespace, expect_api_error, suffix, TestEnv};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::autoscaling::v1::Scale;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ListMeta;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use kube::core::response::StatusSummary;
use kube::ResourceExt;
use serde_json::json;

fn cm(name: &str, labels: &[(&str, &str)], data: &[(&str, &str)]) -> ConfigMap {
    serde_json::from_value(json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": name,
            "labels": labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
        },
        "data": data.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect::<BTreeMap<_, _>>(),
    }))
    .unwrap()
}

fn deployment(name: &str, replicas: Option<i32>) -> Deployment {
    let mut d = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": { "name": name, "labels": { "app": name } },
        "spec": {
            "selector": { "matchLabels": { "app": name } },
            "template": {
                "metadata": { "labels": { "app": name } },
                "spec": { "containers": [ { "name": "c", "image": "nginx:1.27" } ] }
            }
        }
    });
    if let Some(r) = replicas {
        d["spec"]["replicas"] = json!(r);
    }
    serde_json::from_value(d).unwrap()
}

/// The names of `items`, leaving out the `kube-root-ca.crt` configmap that a
/// real cluster's controller-manager puts in every namespace.
fn names<K: ResourceExt>(items: &[K]) -> Vec<String> {
    let names = items.iter().map(|o| o.name_any());
    names.filter(|n| n != "kube-root-ca.crt").collect()
}

/// Secrets, unlike configmaps, get no controller-made objects in a namespace.
fn secret(name: &str) -> Secret {
    let v = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name}});
    serde_json::from_value(v).unwrap()
}

/// Creates `obj` through `api`, panicking on failure.
async fn mk<K>(api: &Api<K>, obj: K) -> K
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + serde::Serialize + std::fmt::Debug,
{
    api.create(&PostParams::default(), &obj).await.unwrap()
}

async fn list_names<K>(api: &Api<K>, lp: ListParams) -> Vec<String>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    names(&api.list(&lp).await.unwrap().items)
}

/// (name, group, kind) of a Status' details.
fn details(st: kube::core::Status) -> (String, String, String) {
    let d = st.details.expect("Status details");
    (d.name, d.group, d.kind)
}

fn strs(a: &str, b: &str, c: &str) -> (String, String, String) {
    (a.into(), b.into(), c.into())
}

/// The continue token of a list page, if it has a non-empty one.
fn token(meta: &ListMeta) -> Option<String> {
    meta.continue_.clone().filter(|t| !t.is_empty())
}

fn rv_num<K: ResourceExt>(o: &K) -> u64 {
    o.resource_version()
        .expect("resourceVersion set")
        .parse()
        .expect("numeric resourceVersion")
}

#[tokio::test]
async fn configmap_create_get_replace_delete() {
    let env = TestEnv::new("kr-crud").await;
    let api: Api<ConfigMap> = env.api();
    let pp = PostParams::default();

    let created = mk(&api, cm("one", &[("app", "x")], &[("k", "v1")])).await;
    assert_eq!(created.namespace(), Some(env.ns.clone()));
    let uid = created.uid().expect("uid");
    assert_eq!(uid.len(), 36, "uid is a UUID: {uid}");
    assert!(created.metadata.creation_timestamp.is_some());
    assert!(created.metadata.resource_version.is_some());
    assert_eq!(created.metadata.generation, None, "no generation");

    let got = api.get("one").await.unwrap();
    assert_eq!(got, created, "GET returns what POST returned");

    let mut changed = got.clone();
    changed.data = Some([("k".to_string(), "v2".to_string())].into());
    let replaced = api.replace("one", &pp, &changed).await.unwrap();
    assert_eq!(replaced.data.as_ref().unwrap()["k"], "v2");
    assert_eq!(replaced.uid(), created.uid());
    let created_at = &created.metadata.creation_timestamp;
    assert_eq!(&replaced.metadata.creation_timestamp, created_at);
    assert!(
        rv_num(&replaced) > rv_num(&created),
        "resourceVersion grows"
    );
    assert_eq!(api.get("one").await.unwrap(), replaced);

    // DELETE of a configmap answers with a Success Status naming what went.
    let dp = DeleteParams::default();
    let status = api
        .delete("one", &dp)
        .await
        .unwrap()
        .right()
        .expect("Status");
    assert_eq!(status.status, Some(StatusSummary::Success));
    assert_eq!(status.details.as_ref().unwrap().uid, uid);
    assert_eq!(details(status), strs("one", "", "configmaps"));

    let msg = r#"configmaps "one" not found"#;
    expect_api_error(api.get("one").await, 404, "NotFound", msg);
    expect_api_error(api.delete("one", &dp).await, 404, "NotFound", msg);
}

#[tokio::test]
async fn generate_name() {
    let env = TestEnv::new("kr-gen").await;
    let api: Api<ConfigMap> = env.api();
    let mut obj = cm("", &[], &[]);
    obj.metadata.name = None;
    obj.metadata.generate_name = Some("gen-".into());
    let a = mk(&api, obj.clone()).await;
    let b = mk(&api, obj).await;
    for o in [&a, &b] {
        let name = o.name_any();
        assert!(name.starts_with("gen-") && name.len() == 9, "{name:?}");
        let alphabet = "bcdfghjklmnpqrstvwxz2456789";
        assert!(name[4..].chars().all(|c| alphabet.contains(c)), "{name:?}");
        assert_eq!(o.metadata.generate_name.as_deref(), Some("gen-"));
    }
    assert_ne!(a.name_any(), b.name_any());
    api.get(&a.name_any()).await.unwrap();
}

#[tokio::test]
async fn conflict_already_exists_not_found() {
    let env = TestEnv::new("kr-errs").await;
    let cms: Api<ConfigMap> = env.api();
    let pp = PostParams::default();
    let first = mk(&cms, cm("c", &[], &[("a", "1")])).await;

    let dup = cms.create(&pp, &cm("c", &[], &[])).await;
    let msg = r#"configmaps "c" already exists"#;
    let st = expect_api_error(dup, 409, "AlreadyExists", msg);
    assert_eq!(details(st), strs("c", "", "configmaps"));

    let mut newer = first.clone();
    newer.data = Some([("a".to_string(), "2".to_string())].into());
    cms.replace("c", &pp, &newer).await.unwrap();
    // `first` still carries the old resourceVersion.
    let mut stale = first.clone();
    stale.data = Some([("a".to_string(), "3".to_string())].into());
    let res = cms.replace("c", &pp, &stale).await;
    let msg = r#"Operation cannot be fulfilled on configmaps "c": the object has been modified; please apply your changes to the latest version and try again"#;
    let st = expect_api_error(res, 409, "Conflict", msg);
    assert_eq!(details(st), strs("c", "", "configmaps"));
    assert_eq!(cms.get("c").await.unwrap().data.unwrap()["a"], "2");

    let msg = r#"configmaps "nope" not found"#;
    let st = expect_api_error(cms.get("nope").await, 404, "NotFound", msg);
    assert_eq!(details(st), strs("nope", "", "configmaps"));

    let deps: Api<Deployment> = env.api();
    let msg = r#"deployments.apps "nope" not found"#;
    let st = expect_api_error(deps.get("nope").await, 404, "NotFound", msg);
    assert_eq!(details(st), strs("nope", "apps", "deployments"));
}

#[tokio::test]
async fn list_in_namespace_and_across_namespaces() {
    let env = TestEnv::new("kr-list").await;
    let other = format!("kr-list2-{}", suffix());
    create_namespace(&env.client, &other).await;
    let mark = format!("mark-{}", suffix());
    let here: Api<ConfigMap> = env.api();
    let there: Api<ConfigMap> = Api::namespaced(env.client.clone(), &other);
    for n in ["b", "a"] {
        mk(&here, cm(n, &[("mark", &mark)], &[])).await;
    }
    mk(&there, cm("c", &[("mark", &mark)], &[])).await;

    let list = here.list(&ListParams::default()).await.unwrap();
    assert_eq!(names(&list.items), ["a", "b"], "sorted by name");
    assert!(list
        .items
        .iter()
        .all(|c| c.namespace() == Some(env.ns.clone())));
    assert!(list.metadata.resource_version.is_some(), "list has an RV");

    let all: Api<ConfigMap> = Api::all(env.client.clone());
    let lp = ListParams::default().labels(&format!("mark={mark}"));
    let list = all.list(&lp).await.unwrap();
    let mut got: Vec<_> = list
        .items
        .iter()
        .map(|c| (c.namespace().unwrap(), c.name_any()))
        .collect();
    got.sort();
    let mut want = vec![
        (env.ns.clone(), "a".to_string()),
        (env.ns.clone(), "b".to_string()),
        (other.clone(), "c".to_string()),
    ];
    want.sort();
    assert_eq!(got, want);

    // A list's resourceVersion is at least that of every item in it.
    let list_rv: u64 = list.metadata.resource_version.unwrap().parse().unwrap();
    assert!(list.items.iter().all(|c| rv_num(c) <= list_rv));
}

#[tokio::test]
async fn label_selectors() {
    let env = TestEnv::new("kr-labels").await;
    let api: Api<ConfigMap> = env.api();
    mk(&api, cm("a", &[("env", "prod"), ("tier", "web")], &[])).await;
    mk(&api, cm("b", &[("env", "dev"), ("tier", "web")], &[])).await;
    mk(&api, cm("c", &[("env", "prod")], &[])).await;
    mk(&api, cm("d", &[], &[])).await;

    let cases: &[(&str, &[&str])] = &[
        ("env=prod", &["a", "c"]),
        ("env==prod", &["a", "c"]),
        ("env!=prod", &["b", "d"]),
        ("env in (prod,dev)", &["a", "b", "c"]),
        ("env notin (prod)", &["b", "d"]),
        ("tier", &["a", "b"]),
        ("!tier", &["c", "d"]),
        ("env=prod,tier=web", &["a"]),
        ("env=prod,!tier", &["c"]),
        ("env=staging", &[]),
    ];
    for (sel, want) in cases {
        let got = list_names(&api, ListParams::default().labels(sel)).await;
        assert_eq!(got, *want, "labelSelector {sel:?}");
    }

    let res = api
        .list(&ListParams::default().labels("env in (prod"))
        .await;
    let st = api_status(res.unwrap_err());
    assert_eq!((st.code, st.reason.as_str()), (400, "BadRequest"), "{st:?}");
}

#[tokio::test]
async fn field_selectors() {
    let env = TestEnv::new("kr-fields").await;
    let api: Api<ConfigMap> = env.api();
    for n in ["a", "b", "c"] {
        mk(&api, cm(n, &[("grp", "x")], &[])).await;
    }
    let cases: &[(&str, &[&str])] = &[
        ("metadata.name=b", &["b"]),
        ("metadata.name==b", &["b"]),
        ("metadata.name!=b", &["a", "c"]),
        ("metadata.name=zzz", &[]),
        ("metadata.name!=a,metadata.name!=c", &["b"]),
    ];
    for (sel, want) in cases {
        let got = list_names(&api, ListParams::default().fields(sel)).await;
        assert_eq!(got, *want, "fieldSelector {sel:?}");
    }

    // metadata.namespace across all namespaces, with a label selector too.
    let all: Api<ConfigMap> = Api::all(env.client.clone());
    let in_ns = format!("metadata.namespace={}", env.ns);
    let lp = ListParams::default().fields(&in_ns).labels("grp=x");
    assert_eq!(list_names(&all, lp).await, ["a", "b", "c"]);
    let lp = ListParams::default().fields(&format!("{in_ns},metadata.name=c"));
    assert_eq!(list_names(&all, lp).await, ["c"]);

    let res = api
        .list(&ListParams::default().fields("data.foo=bar"))
        .await;
    let msg =
        r#""data.foo" is not a known field selector: only "metadata.name", "metadata.namespace""#;
    expect_api_error(res, 400, "BadRequest", msg);
}

#[tokio::test]
async fn limit_and_continue() {
    let env = TestEnv::new("kr-pages").await;
    let api: Api<Secret> = env.api();
    for i in 0..7 {
        mk(&api, secret(&format!("s-{i}"))).await;
    }

    let p1 = api.list(&ListParams::default().limit(3)).await.unwrap();
    assert_eq!(names(&p1.items), ["s-0", "s-1", "s-2"]);
    assert_eq!(p1.metadata.remaining_item_count, Some(4));
    let rv = p1.metadata.resource_version.clone().expect("list RV");
    let next = token(&p1.metadata).expect("continue token");

    // Written after the first page: must not show up in later pages, which
    // are served from the first page's snapshot.
    mk(&api, secret("s-5a")).await;

    let lp = ListParams::default().limit(3).continue_token(&next);
    let p2 = api.list(&lp).await.unwrap();
    assert_eq!(names(&p2.items), ["s-3", "s-4", "s-5"]);
    assert_eq!(p2.metadata.resource_version.as_ref(), Some(&rv));
    assert_eq!(p2.metadata.remaining_item_count, Some(1));
    let next = token(&p2.metadata).expect("continue token");

    let lp = ListParams::default().limit(3).continue_token(&next);
    let p3 = api.list(&lp).await.unwrap();
    assert_eq!(names(&p3.items), ["s-6"]);
    assert_eq!(p3.metadata.resource_version.as_ref(), Some(&rv));
    assert_eq!(token(&p3.metadata), None, "last page: no continue");
    assert_eq!(p3.metadata.remaining_item_count, None);

    // A fresh list sees the new object; a limit above the count: no token.
    let all = api.list(&ListParams::default().limit(100)).await.unwrap();
    assert_eq!(all.items.len(), 8);
    assert_eq!(token(&all.metadata), None);
    assert_eq!(all.metadata.remaining_item_count, None);

    // A continue token the server never issued is a bad request.
    let lp = ListParams::default().limit(3).continue_token("not-a-token");
    let st = api_status(api.list(&lp).await.unwrap_err());
    assert_eq!((st.code, st.reason.as_str()), (400, "BadRequest"), "{st:?}");
}

#[tokio::test]
async fn deployment_status_subresource_and_generation() {
    let env = TestEnv::new("kr-status").await;
    let api: Api<Deployment> = env.api();
    let pp = PostParams::default();
    let replicas = |d: &Deployment| d.spec.as_ref().unwrap().replicas;
    let st_replicas = |d: &Deployment| d.status.as_ref().unwrap().replicas;

    let d = mk(&api, deployment("web", None)).await;
    assert_eq!(replicas(&d), Some(1), "replicas defaults to 1");
    assert_eq!(d.metadata.generation, Some(1));

    // PUT /status: the status is taken, the spec in the body is ignored.
    let mut body = d.clone();
    body.spec.as_mut().unwrap().replicas = Some(9);
    let status = json!({"replicas": 1, "observedGeneration": 1});
    body.status = Some(serde_json::from_value(status).unwrap());
    let s = api.replace_status("web", &pp, &body).await.unwrap();
    assert_eq!(replicas(&s), Some(1), "status update kept the spec");
    assert_eq!(st_replicas(&s), Some(1));
    assert_eq!(s.status.as_ref().unwrap().observed_generation, Some(1));
    assert_eq!(s.metadata.generation, Some(1), "status keeps generation");
    assert!(rv_num(&s) > rv_num(&d));
    assert_eq!(api.get_status("web").await.unwrap().status, s.status);

    // PUT of the main resource: the status in the body is ignored.
    let mut body = s.clone();
    body.status.as_mut().unwrap().replicas = Some(42);
    let labels = body.metadata.labels.as_mut().unwrap();
    labels.insert("extra".into(), "yes".into());
    let m = api.replace("web", &pp, &body).await.unwrap();
    assert_eq!(st_replicas(&m), Some(1), "main update kept the status");
    assert_eq!(m.labels()["extra"], "yes");
    assert_eq!(m.metadata.generation, Some(1), "labels keep generation");

    let mut body = m.clone();
    body.spec.as_mut().unwrap().replicas = Some(3);
    let g = api.replace("web", &pp, &body).await.unwrap();
    assert_eq!(replicas(&g), Some(3));
    assert_eq!(g.metadata.generation, Some(2), "spec change bumps it");
    assert_eq!(st_replicas(&g), Some(1));
}

/// kube compares decoded objects (defaulted, quantities parsed) to decide
/// whether the spec changed: a replace that omits defaulted fields or
/// spells a quantity another way keeps the generation.
#[tokio::test]
async fn generation_moves_only_with_what_kube_decodes() {
    let env = TestEnv::new("kr-generation").await;
    let api: Api<Deployment> = env.api();
    let pp = PostParams::default();
    let with_memory = |memory: &str| {
        let mut d = deployment("sized", None);
        let container = &mut d
            .spec
            .as_mut()
            .unwrap()
            .template
            .spec
            .as_mut()
            .unwrap()
            .containers[0];
        container.resources =
            Some(serde_json::from_value(json!({"limits": {"memory": memory}})).unwrap());
        d
    };
    let created = mk(&api, with_memory("1Gi")).await;
    assert_eq!(created.metadata.generation, Some(1));

    // The same spec as the client first wrote it: no defaults, 1024Mi for 1Gi.
    let mut body = with_memory("1024Mi");
    body.metadata.resource_version = created.metadata.resource_version.clone();
    let same = api.replace("sized", &pp, &body).await.unwrap();
    assert_eq!(
        same.metadata.generation,
        Some(1),
        "nothing kube sees changed"
    );
    let stored = &same
        .spec
        .as_ref()
        .unwrap()
        .template
        .spec
        .as_ref()
        .unwrap()
        .containers[0];
    assert_eq!(
        stored.resources.as_ref().unwrap().limits.as_ref().unwrap()["memory"].0,
        "1Gi"
    );

    let mut body = with_memory("2Gi");
    body.metadata.resource_version = same.metadata.resource_version.clone();
    let grown = api.replace("sized", &pp, &body).await.unwrap();
    assert_eq!(grown.metadata.generation, Some(2), "a real change bumps it");
}

#[tokio::test]
async fn deployment_scale_subresource() {
    let env = TestEnv::new("kr-scale").await;
    let api: Api<Deployment> = env.api();
    let pp = PostParams::default();
    let d = mk(&api, deployment("web", Some(2))).await;

    let scale = api.get_scale("web").await.unwrap();
    assert_eq!(scale.metadata.name.as_deref(), Some("web"));
    assert_eq!(scale.metadata.namespace, Some(env.ns.clone()));
    assert_eq!(scale.metadata.uid, d.metadata.uid);
    assert_eq!(scale.metadata.resource_version, d.metadata.resource_version);
    assert_eq!(scale.spec.as_ref().unwrap().replicas, Some(2));
    let status = scale.status.clone().unwrap();
    assert_eq!(status.replicas, 0);
    assert_eq!(status.selector.as_deref(), Some("app=web"));

    let mut want: Scale = scale.clone();
    want.spec.as_mut().unwrap().replicas = Some(5);
    let got = api.replace_scale("web", &pp, &want).await.unwrap();
    assert_eq!(got.spec.as_ref().unwrap().replicas, Some(5));
    let after = api.get("web").await.unwrap();
    assert_eq!(after.spec.as_ref().unwrap().replicas, Some(5));
    assert_eq!(
        after.metadata.generation,
        Some(2),
        "scaling is a spec change"
    );
    assert_eq!(got.resource_version(), after.resource_version());

    // The scale's resourceVersion is the deployment's: a stale one conflicts.
    let res = api.replace_scale("web", &pp, &want).await;
    let msg = r#"Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again"#;
    expect_api_error(res, 409, "Conflict", msg);

    let dp = DeleteParams::default();
    let st = api
        .delete("web", &dp)
        .await
        .unwrap()
        .right()
        .expect("Status");
    assert_eq!(st.status, Some(StatusSummary::Success));
    assert_eq!(st.details.as_ref().unwrap().uid, d.uid().unwrap());
    assert_eq!(details(st), strs("web", "apps", "deployments"));
}

#[tokio::test]
async fn namespaces_lifecycle() {
    let env = TestEnv::new("kr-ns").await;
    let api: Api<Namespace> = Api::all(env.client.clone());
    let pp = PostParams::default();
    let name = format!("kr-ns-x-{}", suffix());
    let created = create_namespace(&env.client, &name).await;
    assert_eq!(created.labels()["kubernetes.io/metadata.name"], name);
    let finalizers = created.spec.as_ref().unwrap().finalizers.clone();
    assert_eq!(finalizers, Some(vec!["kubernetes".to_string()]));
    let phase = |n: &Namespace| n.status.as_ref().unwrap().phase.clone();
    assert_eq!(phase(&created).as_deref(), Some("Active"));
    assert_eq!(created.metadata.namespace, None, "cluster-scoped");

    let all = list_names(&api, ListParams::default()).await;
    let system = ["default", "kube-system", "kube-public", "kube-node-lease"];
    for must in system.iter().chain([&name.as_str(), &env.ns.as_str()]) {
        assert!(all.iter().any(|n| n == must), "{must} missing from {all:?}");
    }
    let lp = ListParams::default().fields(&format!("metadata.name={name}"));
    assert_eq!(list_names(&api, lp).await, vec![name.clone()]);

    let mut changed = created.clone();
    let labels = changed.metadata.labels.as_mut().unwrap();
    labels.insert("team".into(), "a".into());
    let replaced = api.replace(&name, &pp, &changed).await.unwrap();
    assert_eq!(replaced.labels()["team"], "a");

    let msg = format!(r#"namespaces "{name}" already exists"#);
    expect_api_error(api.create(&pp, &created).await, 409, "AlreadyExists", &msg);

    // A namespace is deleted gracefully: the answer is the namespace itself,
    // now Terminating. kube-apiserver keeps it so until a namespace
    // controller (kube-controller-manager's) has emptied it.
    let cms: Api<ConfigMap> = Api::namespaced(env.client.clone(), &name);
    mk(&cms, cm("inside", &[], &[])).await;
    let dp = DeleteParams::default();
    let gone = api
        .delete(&name, &dp)
        .await
        .unwrap()
        .left()
        .expect("Namespace");
    let why = "DELETE answers with the namespace, deletionTimestamp set";
    assert!(
        gone.metadata.deletion_timestamp.is_some(),
        "{why}: {gone:?}"
    );
    assert_eq!(phase(&gone).as_deref(), Some("Terminating"));
    assert_eq!(gone.uid(), created.uid());
    if let Some(still) = api.get_opt(&name).await.unwrap() {
        assert!(still.metadata.deletion_timestamp.is_some(), "{still:?}");
        assert_eq!(phase(&still).as_deref(), Some("Terminating"));
    }

    // No new content while terminating (or, if a controller already
    // finished, no namespace).
    let err = cms
        .create(&pp, &cm("late", &[], &[]))
        .await
        .expect_err("created");
    let st = api_status(err);
    let got = (st.code, st.reason.as_str(), st.message.as_str());
    let terminating = format!(
        r#"configmaps "late" is forbidden: unable to create new content in namespace {name} because it is being terminated"#
    );
    let finished = format!(r#"namespaces "{name}" not found"#);
    assert!(
        got == (403, "Forbidden", &terminating) || got == (404, "NotFound", &finished),
        "{st:?}"
    );

    let msg = r#"namespaces "kr-no-such-ns" not found"#;
    expect_api_error(api.get("kr-no-such-ns").await, 404, "NotFound", msg);
}

#[tokio::test]
async fn delete_collection_by_label() {
    let env = TestEnv::new("kr-delcol").await;
    let api: Api<ConfigMap> = env.api();
    for (n, v) in [("a", "yes"), ("b", "yes"), ("c", "no")] {
        mk(&api, cm(n, &[("drop", v)], &[])).await;
    }
    let lp = ListParams::default().labels("drop=yes");
    let res = api.delete_collection(&DeleteParams::default(), &lp).await;
    let deleted = res.unwrap().left().expect("the deleted objects as a list");
    assert_eq!(names(&deleted.items), ["a", "b"]);
    assert_eq!(list_names(&api, ListParams::default()).await, ["c"]);
}
