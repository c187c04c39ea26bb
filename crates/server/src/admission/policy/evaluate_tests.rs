use super::*;
use crate::admission::attributes::{GroupVersionName, Operation};
use crate::admission::policy::compile;
use serde_json::json;

async fn store() -> ObjectStore {
    use ferrokube_store::{Backend, LocalBackend, MemoryDisk, Store};
    let backend: Arc<dyn Backend> =
        Arc::new(LocalBackend::open(MemoryDisk::new()).expect("memory backend"));
    Store::open(backend, crate::object::ObjectCodec)
        .await
        .expect("store")
}

fn attributes(old: Option<&Value>) -> Attributes<'_> {
    Attributes {
        operation: if old.is_some() {
            Operation::Update
        } else {
            Operation::Create
        },
        kind: GroupVersionName::new("", "v1", "ConfigMap"),
        resource: GroupVersionName::new("", "v1", "configmaps"),
        subresource: "",
        name: "cm",
        namespace: "ns",
        old_object: old,
        options: json!({"kind": "CreateOptions", "apiVersion": "meta.k8s.io/v1"}),
        dry_run: true,
        user: None,
    }
}

fn policy(spec: Value) -> Policy {
    compile::policy(&json!({"metadata": {"name": "p"}, "spec": spec})).expect("compiles")
}

fn denials(
    policy: &Policy,
    object: &Value,
    params: Option<&Value>,
    store: &ObjectStore,
) -> Vec<Denial> {
    let attributes = attributes(None);
    let inputs = Inputs::new(store, &attributes, Some(object));
    let evaluation = Evaluation::new(policy, &inputs, params);
    evaluation.validations()
}

#[tokio::test]
async fn messages_come_from_message_expression_then_message_then_the_expression() {
    let store = store().await;
    let policy = policy(json!({"validations": [
        {"expression": "object.data.a == 'x'", "messageExpression": "'a is ' + object.data.a", "reason": "Forbidden"},
        {"expression": "object.data.a == 'x'", "messageExpression": "1", "message": " fixed message "},
        {"expression": "object.data.a == 'x'", "messageExpression": "'two\\nlines'"},
        {"expression": "object.data.a == 'y'"},
    ]}));
    let object = json!({"data": {"a": "y"}});
    assert_eq!(
        denials(&policy, &object, None, &store),
        vec![
            Denial {
                message: "a is y".into(),
                reason: Reason::Forbidden
            },
            Denial {
                message: "fixed message".into(),
                reason: Reason::Invalid
            },
            Denial {
                message: "failed expression: object.data.a == 'x'".into(),
                reason: Reason::Invalid
            },
        ]
    );
}

#[tokio::test]
async fn errors_follow_the_failure_policy_with_kubes_words() {
    let store = store().await;
    let failing = json!({"validations": [{"expression": "object.data.missing == 'x'"}]});
    let object = json!({"data": {}});
    assert_eq!(
        denials(&policy(failing.clone()), &object, None, &store),
        vec![Denial {
            message:
                "expression 'object.data.missing == 'x'' resulted in error: no such key: missing"
                    .into(),
            reason: Reason::Invalid,
        }]
    );
    let mut ignored = failing;
    ignored["failurePolicy"] = json!("Ignore");
    assert!(denials(&policy(ignored), &object, None, &store).is_empty());
}

#[tokio::test]
async fn variables_params_request_and_old_object_are_bound() {
    let store = store().await;
    let policy = policy(json!({
        "variables": [
            {"name": "limit", "expression": "int(params.data.limit)"},
            {"name": "size", "expression": "size(object.data)"},
            {"name": "broken", "expression": "object.nope"},
        ],
        "validations": [
            {"expression": "variables.size <= variables.limit", "message": "too many keys"},
            {"expression": "request.operation == 'CREATE' && request.dryRun && request.options.kind == 'CreateOptions'"},
            {"expression": "oldObject == null && params.kind == 'ConfigMap'"},
            {"expression": "request.userInfo.size() == 0 && request.namespace == 'ns' && request.resource.resource == 'configmaps'"},
        ],
    }));
    let params = json!({"kind": "ConfigMap", "data": {"limit": "1"}});
    let small = json!({"data": {"a": "1"}});
    // The broken variable is never evaluated: no validation names it.
    assert!(denials(&policy, &small, Some(&params), &store).is_empty());
    let big = json!({"data": {"a": "1", "b": "2"}});
    assert_eq!(
        denials(&policy, &big, Some(&params), &store),
        vec![Denial {
            message: "too many keys".into(),
            reason: Reason::Invalid
        }]
    );
}

#[tokio::test]
async fn match_conditions_skip_or_fail() {
    let store = store().await;
    let object = json!({"data": {"a": "1"}});
    let attributes = attributes(None);
    let inputs = Inputs::new(&store, &attributes, Some(&object));
    let skipping = policy(json!({"matchConditions": [
        {"name": "has-a", "expression": "'a' in object.data"},
        {"name": "has-b", "expression": "'b' in object.data"},
    ]}));
    assert_eq!(
        Evaluation::new(&skipping, &inputs, None).match_conditions(),
        Ok(false)
    );
    let failing = policy(json!({"matchConditions": [
        {"name": "bad", "expression": "object.data.zzz == '1'"},
    ]}));
    assert_eq!(
        Evaluation::new(&failing, &inputs, None).match_conditions(),
        Err("expression 'object.data.zzz == '1'' resulted in error: no such key: zzz".into())
    );
    let ignoring = policy(json!({"failurePolicy": "Ignore", "matchConditions": [
        {"name": "bad", "expression": "object.data.zzz == '1'"},
    ]}));
    assert_eq!(
        Evaluation::new(&ignoring, &inputs, None).match_conditions(),
        Ok(false)
    );
}

#[test]
fn variable_names_are_read_from_the_source() {
    assert_eq!(
        variable_names("variables.a + variables.b_2"),
        Some(vec!["a", "b_2"])
    );
    assert_eq!(variable_names("myvariables.a == 1"), Some(vec![]));
    assert_eq!(variable_names("variables['a']"), None);
}

#[tokio::test]
async fn an_expression_over_the_per_call_limit_fails_per_the_failure_policy() {
    let store = store().await;
    let expression = "object.data.a.contains(object.data.a)";
    let failing = json!({"validations": [{"expression": expression}]});
    // 2000 × 2000 for a 20000-character string: over PerCallLimit (1M).
    let long = json!({"data": {"a": "ab".repeat(10_000)}});
    assert_eq!(
        denials(&policy(failing.clone()), &long, None, &store),
        vec![Denial {
            message: format!(
                "expression '{expression}' resulted in error: operation cancelled: actual cost limit exceeded"
            ),
            reason: Reason::Invalid,
        }]
    );
    let short = json!({"data": {"a": "ab".repeat(100)}});
    assert!(denials(&policy(failing.clone()), &short, None, &store).is_empty());
    let mut ignored = failing;
    ignored["failurePolicy"] = json!("Ignore");
    assert!(denials(&policy(ignored), &long, None, &store).is_empty());
}

#[tokio::test]
async fn the_policys_expressions_share_the_runtime_budget() {
    let store = store().await;
    // Each costs 640006 (800 × 800 and two selections of 3): 15 fit in
    // RuntimeCELCostBudget (10M), the 16th does not.
    let object = json!({"data": {"a": "ab".repeat(4_000)}});
    let validations = |count: usize| json!({"validations": vec![json!({"expression": "object.data.a.contains(object.data.a)"}); count]});
    assert!(denials(&policy(validations(15)), &object, None, &store).is_empty());
    assert_eq!(
        denials(&policy(validations(16)), &object, None, &store),
        vec![Denial {
            message: OUT_OF_BUDGET.into(),
            reason: Reason::Invalid,
        }]
    );
    let mut ignored = validations(16);
    ignored["failurePolicy"] = json!("Ignore");
    assert!(denials(&policy(ignored), &object, None, &store).is_empty());
}

#[tokio::test]
async fn match_conditions_have_their_own_smaller_budget() {
    let store = store().await;
    let object = json!({"data": {"a": "ab".repeat(4_000)}});
    let attributes = attributes(None);
    let inputs = Inputs::new(&store, &attributes, Some(&object));
    let condition = json!({"name": "c", "expression": "object.data.a.contains(object.data.a)"});
    let spec = |count: usize, failure: &str| {
        json!({"failurePolicy": failure,
               "matchConditions": (0..count).map(|index| {
                   let mut condition = condition.clone();
                   condition["name"] = json!(format!("c{index}"));
                   condition
               }).collect::<Vec<_>>(),
               "validations": [{"expression": "true"}]})
    };
    // 640006 each: three fit in RuntimeCELCostBudgetMatchConditions (2.5M).
    let fits = policy(spec(3, "Fail"));
    assert_eq!(
        Evaluation::new(&fits, &inputs, None).match_conditions(),
        Ok(true)
    );
    let over = policy(spec(4, "Fail"));
    let evaluation = Evaluation::new(&over, &inputs, None);
    assert_eq!(
        evaluation.match_conditions(),
        Err(OUT_OF_BUDGET.to_string())
    );
    // The validations then start with the whole budget.
    assert!(evaluation.validations().is_empty());
    let ignored = policy(spec(4, "Ignore"));
    assert_eq!(
        Evaluation::new(&ignored, &inputs, None).match_conditions(),
        Ok(false)
    );
}
