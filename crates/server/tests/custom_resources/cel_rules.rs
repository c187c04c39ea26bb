//! `x-kubernetes-validations` rules are parsed at CRD create and update as
//! kube compiles them (apiextensions `validation.go`
//! `ValidateCustomResourceDefinitionOpenAPISchema`): a rule that does not
//! parse is refused with kube's path and `compilation failed:` text; rules
//! that parse are stored and published in OpenAPI v3.

use super::*;
use kube::runtime::wait::{await_condition, conditions};

fn crd_with_rules(group: &str, rules: Value) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("rules.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "rules", "kind": "Rule"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object",
                    "x-kubernetes-validations": rules,
                    "properties": {
                        "x": {"type": "integer"},
                        "y": {"type": "string"},
                        "tags": {"type": "object", "additionalProperties": {"type": "string"}},
                    }}},
            }}}],
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn crds_with_cel_rules_are_parsed_as_kube_parses_them() {
    let env = TestEnv::new("crd-cel").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());

    let bad = crd_with_rules(
        &group,
        json!([{"rule": "self.x > 0"}, {"rule": "self.x >"}]),
    );
    let status = match crds.create(&PostParams::default(), &bad).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("a CRD with a rule that does not parse answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        format!(
            r#"CustomResourceDefinition.apiextensions.k8s.io "rules.{group}" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.x >", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:9: Syntax error: mismatched input '<EOF>' expecting {{'[', '{{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}}
 | self.x >
 | ........^"#
        )
    );
    let details = status.details.expect("details");
    let cause = &details.causes[0];
    assert_eq!(cause.reason, "FieldValueInvalid");
    assert_eq!(
        cause.field,
        "spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[1].rule"
    );
    assert!(crds
        .get_opt(&bad.metadata.name.clone().unwrap())
        .await
        .unwrap()
        .is_none());

    let rules = json!([
        {"rule": "self.x > 0"},
        {"rule": "has(self.y)", "message": "y is required"},
        {"rule": "self.tags.all(k, k != \"\")", "messageExpression": "'empty key in ' + string(self.x)"},
        {"rule": "[1, 2].exists(n, n == self.x) || self.y in ['a', \"b\"]"},
    ]);
    let good = crd_with_rules(&group, rules.clone());
    let name = good.metadata.name.clone().unwrap();
    crds.create(&PostParams::default(), &good).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();

    // An update that breaks a rule is refused as well.
    let mut broken = crds.get(&name).await.unwrap();
    let mut schema = serde_json::to_value(&broken.spec.versions[0].schema).unwrap();
    schema["openAPIV3Schema"]["properties"]["spec"]["x-kubernetes-validations"][0]
        ["messageExpression"] = json!("'x is ' + ");
    broken.spec.versions[0].schema = Some(serde_json::from_value(schema).unwrap());
    let status = match crds.replace(&name, &PostParams::default(), &broken).await {
        Err(kube::Error::Api(status)) => status,
        other => panic!("an update with a bad messageExpression answered {other:?}"),
    };
    assert_eq!(status.code, 422);
    assert!(
        status.message.contains(
            "properties[spec].x-kubernetes-validations[0].messageExpression: Invalid value: apiextensions.ValidationRule{Rule:\"self.x > 0\""
        ) && status.message.contains(": messageExpression compilation failed: ERROR: <input>:1:11: Syntax error: "),
        "{}",
        status.message
    );

    // Rules that parse are published as written.
    let gv_key = format!("apis/{group}/v1");
    let index = env.raw("GET", "/openapi/v3", None, vec![]).await.json();
    let url = index["paths"][&gv_key]["serverRelativeURL"]
        .as_str()
        .unwrap_or_else(|| panic!("{gv_key} not in the v3 index: {index}"))
        .to_string();
    let doc = env.raw("GET", &url, None, vec![]).await.json();
    // `util.ToRESTFriendlyName`: the group reversed.
    let reversed: Vec<&str> = group.split('.').rev().collect();
    let definition = format!("{}.v1.Rule", reversed.join("."));
    let spec = &doc["components"]["schemas"][&definition]["properties"]["spec"];
    assert_eq!(spec["x-kubernetes-validations"], rules, "{doc}");
}

/// A CRD whose rules custom resources must pass (apiextensions
/// `schema/cel/validation.go`): a plain rule, one with a message, a
/// `messageExpression`, a transition rule and a rule with a reason and a
/// field path.
fn enforced_crd(group: &str) -> CustomResourceDefinition {
    serde_json::from_value(json!({
        "metadata": {"name": format!("gauges.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "gauges", "kind": "Gauge"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {"type": "object",
                        "x-kubernetes-validations": [
                            {"rule": "self.x >= oldSelf.x", "message": "x may not decrease"},
                            {"rule": "self.x <= self.max", "messageExpression": "'x must be at most ' + string(self.max)"},
                            {"rule": "self.mode in ['fast', 'slow']"},
                            {"rule": "!has(self.owner) || self.owner.startsWith('team-')",
                             "reason": "FieldValueForbidden", "fieldPath": ".owner", "message": "owner must be a team"},
                        ],
                        "properties": {
                            "x": {"type": "integer"},
                            "max": {"type": "integer"},
                            "mode": {"type": "string"},
                            "owner": {"type": "string"},
                        }},
                    "status": {"type": "object",
                        "x-kubernetes-validations": [{"rule": "self.phase.matches('^[A-Z][a-z]+$')", "message": "phase is capitalized"}],
                        "properties": {"phase": {"type": "string"}}},
                },
            }}}],
        },
    }))
    .unwrap()
}

#[tokio::test]
async fn cel_rules_are_enforced_on_custom_resources() {
    let env = TestEnv::new("crd-cel-enforce").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());
    let crd = enforced_crd(&group);
    let name = crd.metadata.name.clone().unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();
    let resource =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(&group, "v1", "Gauge"), "gauges");
    let gauges: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let gauge = |spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "Gauge",
            "metadata": {"name": "g1"}, "spec": spec,
        }))
        .unwrap()
    };
    let refused = |result: Result<DynamicObject, kube::Error>| match result {
        Err(kube::Error::Api(status)) => status,
        other => panic!("a custom resource breaking a rule answered {other:?}"),
    };

    // Create: every failing rule, kube's 422, message and causes.
    let status = refused(
        gauges
            .create(
                &PostParams::default(),
                &gauge(json!({"x": 20, "max": 10, "mode": "warp", "owner": "bob"})),
            )
            .await,
    );
    assert_eq!(status.code, 422);
    assert_eq!(status.reason, "Invalid");
    assert_eq!(
        status.message,
        format!(
            r#"Gauge.{group} "g1" is invalid: [spec: Invalid value: "object": x must be at most 10, spec: Invalid value: "object": failed rule: self.mode in ['fast', 'slow'], spec.owner: Forbidden: owner must be a team]"#
        )
    );
    let causes = status.details.expect("details").causes;
    let causes: Vec<(&str, &str)> = causes
        .iter()
        .map(|cause| (cause.reason.as_str(), cause.field.as_str()))
        .collect();
    assert_eq!(
        causes,
        [
            ("FieldValueInvalid", "spec"),
            ("FieldValueInvalid", "spec"),
            ("FieldValueForbidden", "spec.owner"),
        ]
    );

    // A valid object is accepted: the transition rule does not run on create.
    let created = gauges
        .create(
            &PostParams::default(),
            &gauge(json!({"x": 5, "max": 10, "mode": "fast"})),
        )
        .await
        .unwrap();

    // Update: the transition rule compares with the stored object.
    let mut lower = created.clone();
    lower.data["spec"]["x"] = json!(4);
    let status = refused(gauges.replace("g1", &PostParams::default(), &lower).await);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        format!(
            r#"Gauge.{group} "g1" is invalid: spec: Invalid value: "object": x may not decrease"#
        )
    );
    let higher = gauges
        .patch(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"x": 6, "owner": "team-a"}})),
        )
        .await
        .unwrap();
    assert_eq!(higher.data["spec"]["x"], 6);

    // /status: the status schema's rules.
    let status = refused(
        gauges
            .patch_status(
                "g1",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"phase": "ready"}})),
            )
            .await,
    );
    assert_eq!(
        status.message,
        format!(
            r#"Gauge.{group} "g1" is invalid: status: Invalid value: "object": phase is capitalized"#
        )
    );
    gauges
        .patch_status(
            "g1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Ready"}})),
        )
        .await
        .unwrap();

    // kubectl shows kube's message.
    let manifest = format!(
        "apiVersion: {group}/v1\nkind: Gauge\nmetadata:\n  name: g2\n  namespace: {}\nspec:\n  x: 3\n  max: 1\n  mode: fast\n",
        env.ns
    );
    let (status, _, err) = env.kubectl_stdin("1.33", &["create", "-f", "-"], Some(&manifest));
    assert!(!status.success(), "kubectl created a gauge breaking a rule");
    assert!(
        err.contains(
            r#"The Gauge "g2" is invalid: spec: Invalid value: "object": x must be at most 1"#
        ),
        "{err}"
    );
    crds.delete(&name, &DeleteParams::default()).await.unwrap();
}

/// kube's CEL libraries in CRD rules (`apiserver/pkg/cel/library`): the
/// list functions and the regex `find`, enforced on what kube-rs and
/// kubectl create.
#[tokio::test]
async fn kubes_cel_libraries_work_in_crd_rules() {
    let env = TestEnv::new("crd-cel-library").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());
    let crd: CustomResourceDefinition = serde_json::from_value(json!({
        "metadata": {"name": format!("releases.{group}")},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": "releases", "kind": "Release"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {"spec": {"type": "object",
                    "x-kubernetes-validations": [
                        {"rule": "self.waves.isSorted()", "message": "waves must be sorted"},
                        {"rule": "self.waves.sum() <= 10", "messageExpression": "'too many waves: ' + string(self.waves.sum())"},
                        {"rule": "self.image.find(':[a-z0-9.]+$') != ''", "message": "image needs a tag"},
                        {"rule": "self.waves.indexOf(0) == -1 && self.waves.max() >= self.waves.min()"},
                    ],
                    "properties": {
                        "waves": {"type": "array", "items": {"type": "integer"}},
                        "image": {"type": "string"},
                    }}},
            }}}],
        },
    }))
    .unwrap();
    let name = crd.metadata.name.clone().unwrap();
    crds.create(&PostParams::default(), &crd).await.unwrap();
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk(&group, "v1", "Release"),
        "releases",
    );
    let releases: Api<DynamicObject> = Api::namespaced_with(env.client.clone(), &env.ns, &resource);
    let release = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": format!("{group}/v1"), "kind": "Release",
            "metadata": {"name": name}, "spec": spec,
        }))
        .unwrap()
    };
    let accepted = releases
        .create(
            &PostParams::default(),
            &release("good", json!({"waves": [1, 2, 3], "image": "app:1.2"})),
        )
        .await
        .unwrap();
    assert_eq!(accepted.data["spec"]["waves"], json!([1, 2, 3]));

    let status = match releases
        .create(
            &PostParams::default(),
            &release("bad", json!({"waves": [0, 9, 4], "image": "app"})),
        )
        .await
    {
        Err(kube::Error::Api(status)) => status,
        other => panic!("a release breaking the rules answered {other:?}"),
    };
    assert_eq!((status.code, status.reason.as_str()), (422, "Invalid"));
    assert_eq!(
        status.message,
        format!(
            r#"Release.{group} "bad" is invalid: [spec: Invalid value: "object": waves must be sorted, spec: Invalid value: "object": too many waves: 13, spec: Invalid value: "object": image needs a tag, spec: Invalid value: "object": failed rule: self.waves.indexOf(0) == -1 && self.waves.max() >= self.waves.min()]"#
        )
    );

    // kubectl: an empty list has no maximum, an evaluation error as kube words it.
    let manifest = format!(
        "apiVersion: {group}/v1\nkind: Release\nmetadata:\n  name: empty\n  namespace: {}\nspec:\n  waves: []\n  image: app:1\n",
        env.ns
    );
    let (status, _, err) = env.kubectl_stdin("1.33", &["create", "-f", "-"], Some(&manifest));
    assert!(
        !status.success(),
        "kubectl created a release whose rule failed"
    );
    assert!(
        err.contains("max called on empty list evaluating rule: self.waves.indexOf(0) == -1 && self.waves.max() >= self.waves.min()"),
        "{err}"
    );
    crds.delete(&name, &DeleteParams::default()).await.unwrap();
}

/// kube's `url` and `semver` CEL libraries in CRD rules, enforced on what
/// kubectl creates.
#[tokio::test]
async fn url_and_semver_rules_are_enforced_through_kubectl() {
    let env = TestEnv::new("crd-cel-url-semver").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());
    let name = format!("mirrors.{group}");
    let crd = format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {name}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: mirrors, kind: Mirror}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "isURL(self.endpoint) && url(self.endpoint).getScheme() == 'https'"
              message: endpoint must be an https URL
            - rule: "url(self.endpoint).getPort() == '' || int(url(self.endpoint).getPort()) < 10000"
              messageExpression: "'port too high: ' + url(self.endpoint).getPort()"
            - rule: "isSemver(self.version, true) && semver(self.version, true).isGreaterThan(semver('1.0.0'))"
              message: version must be a semantic version above 1.0.0
            properties:
              endpoint: {{type: string, maxLength: 256}}
              version: {{type: string, maxLength: 64}}
"#
    );
    kubectl_stdin_ok(&env, "1.33", &["create", "-f", "-"], &crd);
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();
    let mirror = |name: &str, endpoint: &str, version: &str| {
        format!(
            "apiVersion: {group}/v1\nkind: Mirror\nmetadata:\n  name: {name}\n  namespace: {}\nspec:\n  endpoint: {endpoint:?}\n  version: {version:?}\n",
            env.ns
        )
    };
    kubectl_stdin_ok(
        &env,
        "1.33",
        &["create", "-f", "-"],
        &mirror("good", "https://mirror.example.com:8443/charts?x=1", "v1.2"),
    );
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["create", "-f", "-"],
        Some(&mirror("bad", "http://mirror.example.com:80000/", "0.9.0")),
    );
    assert!(
        !status.success(),
        "kubectl created a mirror breaking the rules"
    );
    // kubectl lists the causes of kube's Status one per line.
    assert!(
        err.contains(
            r#"The Mirror "bad" is invalid: 
* spec: Invalid value: "object": endpoint must be an https URL
* spec: Invalid value: "object": port too high: 80000
* spec: Invalid value: "object": version must be a semantic version above 1.0.0"#
        ),
        "{err}"
    );
    crds.delete(&name, &DeleteParams::default()).await.unwrap();
}

/// kube's static cost limit (`StaticEstimatedCostLimit`): a rule over a
/// list and strings declared without `maxItems`/`maxLength` is refused at
/// CRD create with kube's message, and accepted once they are bounded.
#[tokio::test]
async fn unbounded_rules_are_refused_at_crd_create_by_their_estimated_cost() {
    let env = TestEnv::new("crd-cel-cost").await;
    let group = format!("g{}.example.com", suffix());
    let crd = |bounds: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: hosts.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: hosts, kind: Host}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              names:
                type: array
                {bounds}
                items: {{type: string{item_bounds}}}
                x-kubernetes-validations:
                - rule: "self.all(n, n.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$'))"
"#,
            item_bounds = if bounds.is_empty() {
                ""
            } else {
                ", maxLength: 63"
            },
        )
    };
    let (status, _, err) = env.kubectl_stdin("1.33", &["create", "-f", "-"], Some(&crd("")));
    assert!(
        !status.success(),
        "kubectl created a CRD with an unbounded rule"
    );
    assert!(
        err.contains(&format!(
            r#"The CustomResourceDefinition "hosts.{group}" is invalid: "#
        )) && err.contains(
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].properties[names].x-kubernetes-validations[0].rule: Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)"
        ),
        "{err}"
    );
    kubectl_stdin_ok(&env, "1.33", &["create", "-f", "-"], &crd("maxItems: 64"));
}

/// Rules are type-checked against the schema at CRD create
/// (`compilation.go` `compileRule`, cel-go's checker): kubectl's `apply` of
/// a CRD whose rule reads a field the schema does not declare is refused
/// with kube's message, source line and caret; the same CRD with the field
/// spelled right is created.
#[tokio::test]
async fn kubectl_is_refused_a_crd_whose_rule_reads_an_undefined_field() {
    let env = TestEnv::new("crd-cel-types").await;
    let group = format!("g{}.example.com", suffix());
    let manifest = |rule: &str| {
        format!(
            r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: rules.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: rules, kind: Rule}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "{rule}"
            properties:
              replicas: {{type: integer}}
              name: {{type: string}}
"#
        )
    };
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["apply", "-f", "-"],
        Some(&manifest("self.replicas > 0 && self.foo == 1")),
    );
    assert!(
        !status.success(),
        "kubectl applied a CRD with a mistyped rule"
    );
    assert!(
err.contains(&format!(
            r#"The CustomResourceDefinition "rules.{group}" is invalid: spec.versions[0].schema.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule: Invalid value: apiextensions.ValidationRule{{Rule:"self.replicas > 0 && self.foo == 1", Message:"", MessageExpression:"", Reason:(*apiextensions.FieldValueErrorReason)(nil), FieldPath:"", OptionalOldSelf:(*bool)(nil)}}: compilation failed: ERROR: <input>:1:26: undefined field 'foo'
 | self.replicas > 0 && self.foo == 1
 | .........................^"#
        )),
        "{err}"
    );
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["apply", "-f", "-"],
        Some(&manifest("self.replicas + 1 == self.name")),
    );
    assert!(
        !status.success(),
        "kubectl applied a CRD with a mistyped rule"
    );
    assert!(
        err.contains("compilation failed: ERROR: <input>:1:19: found no matching overload for '_==_' applied to '(int, string)'"),
        "{err}"
    );
    // Inside a two-variable comprehension (kube's environment has them
    // since 1.32) the rule is checked all the same.
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["apply", "-f", "-"],
        Some(&manifest(
            "[self.name].all(i, n, n.size() > i && self.foo == 1)",
        )),
    );
    assert!(
        !status.success(),
        "kubectl applied a CRD with a mistyped rule"
    );
    assert!(
        err.contains("compilation failed: ERROR: <input>:1:43: undefined field 'foo'"),
        "{err}"
    );
    let out = kubectl_stdin_ok(
        &env,
        "1.33",
        &["apply", "-f", "-"],
        &manifest("self.replicas > 0 && self.name != ''"),
    );
    assert!(out.contains(&format!("rules.{group} created")), "{out}");
    let (status, _, err) = env.kubectl("1.33", &["delete", "crd", &format!("rules.{group}")]);
    assert!(status.success(), "{err}");
}

/// kube's runtime cost limits on what kubectl creates
/// (`schema/cel/validation.go`): rules that each fit `PerCallLimit` but
/// together, over many items, spend `RuntimeCELCostBudget` (10M) are
/// refused where the budget runs out; one evaluation over `PerCallLimit`
/// (1M) is cancelled. Both CRD rules pass the static estimate at create.
#[tokio::test]
async fn the_runtime_cost_budget_refuses_what_kubectl_creates() {
    let env = TestEnv::new("crd-cel-runtime-cost").await;
    let crds: Api<CustomResourceDefinition> = Api::all(env.client.clone());
    let group = format!("g{}.example.com", suffix());
    let name = format!("tallies.{group}");
    let crd = format!(
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: {name}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: tallies, kind: Tally}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              many:
                type: array
                maxItems: 39
                items:
                  type: string
                  maxLength: 5000
                  x-kubernetes-validations:
                  - rule: self.contains(self)
                  - rule: self.contains(self)
                  - rule: self.contains(self)
              huge:
                type: array
                maxItems: 2
                items:
                  type: string
                  maxLength: 20000
                  x-kubernetes-validations:
                  - rule: self.contains(self)
"#
    );
    kubectl_stdin_ok(&env, "1.33", &["create", "-f", "-"], &crd);
    tokio::time::timeout(
        Duration::from_secs(30),
        await_condition(crds.clone(), &name, conditions::is_crd_established()),
    )
    .await
    .expect("established in time")
    .unwrap();
    let tally = |name: &str, field: &str, items: Vec<String>| {
        let items: Vec<String> = items.iter().map(|item| format!("  - {item}\n")).collect();
        format!(
            "apiVersion: {group}/v1\nkind: Tally\nmetadata:\n  name: {name}\n  namespace: {}\nspec:\n  {field}:\n{}",
            env.ns,
            items.concat()
        )
    };
    // 250002 per evaluation (contains: 500 × 500), three per item: 13
    // items fit in the budget, the 14th does not.
    let item = "ab".repeat(2500);
    kubectl_stdin_ok(
        &env,
        "1.33",
        &["create", "-f", "-"],
        &tally("fits", "many", vec![item.clone(); 13]),
    );
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["create", "-f", "-"],
        Some(&tally("spends", "many", vec![item; 39])),
    );
    assert!(!status.success(), "kubectl created a tally over the budget");
    assert!(
        err.contains(
            r#"The Tally "spends" is invalid: spec.many[13]: Invalid value: "string": validation failed due to running out of cost budget, no further validation rules will be run"#
        ),
        "{err}"
    );
    // 2000 × 2000 for 20000 characters: over PerCallLimit; the second item
    // is not evaluated.
    let long = "ab".repeat(10_000);
    let (status, _, err) = env.kubectl_stdin(
        "1.33",
        &["create", "-f", "-"],
        Some(&tally("cancelled", "huge", vec![long.clone(), long])),
    );
    assert!(
        !status.success(),
        "kubectl created a tally over the per-call limit"
    );
    assert!(
        err.contains(
            r#"The Tally "cancelled" is invalid: spec.huge[0]: Invalid value: "string": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.contains(self)"#
        ),
        "{err}"
    );
    kubectl_stdin_ok(
        &env,
        "1.33",
        &["create", "-f", "-"],
        &tally("short", "huge", vec!["ab".repeat(50)]),
    );
    crds.delete(&name, &DeleteParams::default()).await.unwrap();
}
