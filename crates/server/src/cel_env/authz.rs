//! kube's authorizer library (`apiserver/pkg/cel/library/authz.go`), the
//! `authorizer` variable of ValidatingAdmissionPolicy expressions:
//! `authorizer.path(p).check(verb)`,
//! `authorizer.group(g).resource(r)[.subresource(s)][.namespace(ns)][.name(n)]
//! [.fieldSelector(s)][.labelSelector(s)].check(verb)`,
//! `authorizer.serviceAccount(ns, name)` (the same checks for that service
//! account), `authorizer.requestResource` (bound by the caller), and on a
//! decision `allowed()`, `reason()`, `errored()`, `error()`.
//!
//! The checks are answered by a [`Checker`] the caller provides (the
//! server's authorizer for the request's user): this module knows nothing
//! of users or RBAC.

use std::sync::Arc;

use cel::common::types::{Type, STRING_TYPE};
use cel::objects::Opaque;
use cel::{DeclarationError, Env, ExecutionError, Value};

use super::{arguments, no_such_overload, overload};

const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
const PATH_CHECK: &str = "kubernetes.authorization.PathCheck";
const GROUP_CHECK: &str = "kubernetes.authorization.GroupCheck";
const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
const DECISION: &str = "kubernetes.authorization.Decision";

/// What one `check(verb)` asks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CheckRequest {
    /// `Some((namespace, name))` when asked for `serviceAccount(ns, name)`,
    /// else the request's user.
    pub service_account: Option<(String, String)>,
    pub verb: String,
    /// A non-resource check's path; empty for a resource check.
    pub path: String,
    pub resource: Option<ResourceCheck>,
}

/// The resource half of a check (`authorizer.AttributesRecord`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceCheck {
    pub group: String,
    pub resource: String,
    pub subresource: String,
    pub namespace: String,
    pub name: String,
    pub field_selector: String,
    pub label_selector: String,
}

/// An authorizer's answer (`authorizer.Decision` and its reason, error).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Decision {
    pub allowed: bool,
    pub reason: String,
    pub error: Option<String>,
}

/// Answers the checks of one request.
pub trait Checker: Send + Sync + std::fmt::Debug {
    fn check(&self, request: &CheckRequest) -> Decision;
}

#[derive(Debug, Clone)]
struct CelAuthorizer {
    checker: Arc<dyn Checker>,
    service_account: Option<(String, String)>,
}

impl PartialEq for CelAuthorizer {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.checker, &other.checker) && self.service_account == other.service_account
    }
}

impl Eq for CelAuthorizer {}

/// A check being built: a path, a group, or a resource.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CelCheck {
    authorizer: CelAuthorizer,
    type_name: &'static str,
    path: String,
    resource: ResourceCheck,
}

impl Opaque for CelAuthorizer {
    fn runtime_type_name(&self) -> &str {
        AUTHORIZER
    }
}

impl Opaque for CelCheck {
    fn runtime_type_name(&self) -> &str {
        self.type_name
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct CelDecision(Decision);

impl Opaque for CelDecision {
    fn runtime_type_name(&self) -> &str {
        DECISION
    }
}

/// The `authorizer` variable for checks answered by `checker`.
pub fn authorizer(checker: Arc<dyn Checker>) -> Value {
    Value::Opaque(Arc::new(CelAuthorizer {
        checker,
        service_account: None,
    }))
}

/// The `authorizer.requestResource` variable: a resource check of what the
/// request is for.
pub fn request_resource(checker: Arc<dyn Checker>, resource: ResourceCheck) -> Value {
    Value::Opaque(Arc::new(CelCheck {
        authorizer: CelAuthorizer {
            checker,
            service_account: None,
        },
        type_name: RESOURCE_CHECK,
        path: String::new(),
        resource,
    }))
}

fn opaque(name: &'static str) -> Type {
    Type::new_opaque_type(name)
}

/// Registers the library's overloads on `env`.
pub fn library(env: &mut Env) -> Result<(), DeclarationError> {
    for name in [
        AUTHORIZER,
        PATH_CHECK,
        GROUP_CHECK,
        RESOURCE_CHECK,
        DECISION,
    ] {
        env.add_type(opaque(name))?;
    }
    env.add_member_overload(
        "path",
        "authorizer_path",
        opaque(AUTHORIZER),
        vec![STRING_TYPE],
        overload!(path),
    )?;
    env.add_member_overload(
        "group",
        "authorizer_group",
        opaque(AUTHORIZER),
        vec![STRING_TYPE],
        overload!(group),
    )?;
    env.add_member_overload(
        "serviceAccount",
        "authorizer_serviceaccount",
        opaque(AUTHORIZER),
        vec![STRING_TYPE, STRING_TYPE],
        overload!(service_account),
    )?;
    env.add_member_overload(
        "resource",
        "groupcheck_resource",
        opaque(GROUP_CHECK),
        vec![STRING_TYPE],
        overload!(resource),
    )?;
    for (name, id, function) in [
        (
            "subresource",
            "resourcecheck_subresource",
            overload!(subresource),
        ),
        ("namespace", "resourcecheck_namespace", overload!(namespace)),
        ("name", "resourcecheck_name", overload!(name)),
        (
            "fieldSelector",
            "resourcecheck_fieldselector",
            overload!(field_selector),
        ),
        (
            "labelSelector",
            "resourcecheck_labelselector",
            overload!(label_selector),
        ),
    ] {
        env.add_member_overload(
            name,
            id,
            opaque(RESOURCE_CHECK),
            vec![STRING_TYPE],
            function,
        )?;
    }
    env.add_member_overload(
        "check",
        "pathcheck_check",
        opaque(PATH_CHECK),
        vec![STRING_TYPE],
        overload!(check),
    )?;
    env.add_member_overload(
        "check",
        "resourcecheck_check",
        opaque(RESOURCE_CHECK),
        vec![STRING_TYPE],
        overload!(check),
    )?;
    for (name, id, function) in [
        ("allowed", "decision_allowed", overload!(allowed)),
        ("reason", "decision_reason", overload!(reason)),
        ("errored", "decision_errored", overload!(errored)),
        ("error", "decision_error", overload!(error)),
    ] {
        env.add_member_overload(name, id, opaque(DECISION), vec![], function)?;
    }
    Ok(())
}

fn text<'a>(function: &str, value: &'a Value) -> Result<&'a str, ExecutionError> {
    match value {
        Value::String(text) => Ok(text),
        _ => Err(no_such_overload(function)),
    }
}

fn authorizer_of<'a>(
    function: &str,
    value: &'a Value,
) -> Result<&'a CelAuthorizer, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelAuthorizer>()
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

fn check_of<'a>(
    function: &str,
    value: &'a Value,
    type_name: Option<&str>,
) -> Result<&'a CelCheck, ExecutionError> {
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelCheck>()
            .filter(|check| type_name.is_none_or(|name| check.type_name == name))
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

fn wrap(check: CelCheck) -> Value {
    Value::Opaque(Arc::new(check))
}

fn path(args: &[Value]) -> Result<Value, ExecutionError> {
    let [receiver, path] = arguments(args)?;
    Ok(wrap(CelCheck {
        authorizer: authorizer_of("path", receiver)?.clone(),
        type_name: PATH_CHECK,
        path: text("path", path)?.to_string(),
        resource: ResourceCheck::default(),
    }))
}

fn group(args: &[Value]) -> Result<Value, ExecutionError> {
    let [receiver, group] = arguments(args)?;
    Ok(wrap(CelCheck {
        authorizer: authorizer_of("group", receiver)?.clone(),
        type_name: GROUP_CHECK,
        path: String::new(),
        resource: ResourceCheck {
            group: text("group", group)?.to_string(),
            ..ResourceCheck::default()
        },
    }))
}

fn service_account(args: &[Value]) -> Result<Value, ExecutionError> {
    let [receiver, namespace, name] = arguments(args)?;
    let authorizer = authorizer_of("serviceAccount", receiver)?;
    Ok(Value::Opaque(Arc::new(CelAuthorizer {
        checker: authorizer.checker.clone(),
        service_account: Some((
            text("serviceAccount", namespace)?.to_string(),
            text("serviceAccount", name)?.to_string(),
        )),
    })))
}

fn resource(args: &[Value]) -> Result<Value, ExecutionError> {
    let [receiver, resource] = arguments(args)?;
    let mut check = check_of("resource", receiver, Some(GROUP_CHECK))?.clone();
    check.type_name = RESOURCE_CHECK;
    check.resource.resource = text("resource", resource)?.to_string();
    Ok(wrap(check))
}

/// A resource check with one more attribute set.
fn with(
    function: &str,
    args: &[Value],
    set: fn(&mut ResourceCheck, String),
) -> Result<Value, ExecutionError> {
    let [receiver, value] = arguments(args)?;
    let mut check = check_of(function, receiver, Some(RESOURCE_CHECK))?.clone();
    set(&mut check.resource, text(function, value)?.to_string());
    Ok(wrap(check))
}

fn subresource(args: &[Value]) -> Result<Value, ExecutionError> {
    with("subresource", args, |check, value| {
        check.subresource = value
    })
}

fn namespace(args: &[Value]) -> Result<Value, ExecutionError> {
    with("namespace", args, |check, value| check.namespace = value)
}

fn name(args: &[Value]) -> Result<Value, ExecutionError> {
    with("name", args, |check, value| check.name = value)
}

fn field_selector(args: &[Value]) -> Result<Value, ExecutionError> {
    with("fieldSelector", args, |check, value| {
        check.field_selector = value
    })
}

fn label_selector(args: &[Value]) -> Result<Value, ExecutionError> {
    with("labelSelector", args, |check, value| {
        check.label_selector = value
    })
}

fn check(args: &[Value]) -> Result<Value, ExecutionError> {
    let [receiver, verb] = arguments(args)?;
    let check = check_of("check", receiver, None)?;
    let request = CheckRequest {
        service_account: check.authorizer.service_account.clone(),
        verb: text("check", verb)?.to_string(),
        path: check.path.clone(),
        resource: (check.type_name == RESOURCE_CHECK).then(|| check.resource.clone()),
    };
    let decision = check.authorizer.checker.check(&request);
    Ok(Value::Opaque(Arc::new(CelDecision(decision))))
}

fn decision<'a>(function: &str, args: &'a [Value]) -> Result<&'a Decision, ExecutionError> {
    let [value] = arguments(args)?;
    match value {
        Value::Opaque(opaque) => opaque
            .downcast_ref::<CelDecision>()
            .map(|decision| &decision.0)
            .ok_or_else(|| no_such_overload(function)),
        _ => Err(no_such_overload(function)),
    }
}

fn allowed(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(decision("allowed", args)?.allowed))
}

fn reason(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::String(Arc::new(
        decision("reason", args)?.reason.clone(),
    )))
}

fn errored(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::Bool(decision("errored", args)?.error.is_some()))
}

fn error(args: &[Value]) -> Result<Value, ExecutionError> {
    Ok(Value::String(Arc::new(
        decision("error", args)?.error.clone().unwrap_or_default(),
    )))
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::super::eval;
    use super::*;

    /// Allows what its list names (`verb group/resource/subresource ns/name`
    /// or `verb path`), recording every check.
    #[derive(Debug, Default)]
    struct Recorder {
        allow: Vec<String>,
        seen: Mutex<Vec<CheckRequest>>,
    }

    impl Checker for Recorder {
        fn check(&self, request: &CheckRequest) -> Decision {
            if let Ok(mut seen) = self.seen.lock() {
                seen.push(request.clone());
            }
            let key = match &request.resource {
                Some(r) => format!(
                    "{} {}/{}/{} {}/{}",
                    request.verb, r.group, r.resource, r.subresource, r.namespace, r.name
                ),
                None => format!("{} {}", request.verb, request.path),
            };
            let allowed = self.allow.contains(&key);
            Decision {
                allowed,
                reason: if allowed {
                    "listed".into()
                } else {
                    String::new()
                },
                error: None,
            }
        }
    }

    #[test]
    fn checks_reach_the_checker_with_kubes_attributes() {
        let recorder = Arc::new(Recorder {
            allow: vec![
                "create apps/deployments/ ns/x".into(),
                "get /healthz".into(),
                "update apps/deployments/scale ns/".into(),
            ],
            ..Recorder::default()
        });
        let checker: Arc<dyn Checker> = recorder.clone();
        let bound = [
            ("authorizer", authorizer(checker.clone())),
            (
                "authorizer.requestResource",
                request_resource(
                    checker,
                    ResourceCheck {
                        group: "apps".into(),
                        resource: "deployments".into(),
                        namespace: "ns".into(),
                        name: "x".into(),
                        ..ResourceCheck::default()
                    },
                ),
            ),
        ];
        let truths = [
            "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('create').allowed()",
            "authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('create').reason() == 'listed'",
            "!authorizer.group('apps').resource('deployments').namespace('ns').name('x').check('delete').allowed()",
            "authorizer.path('/healthz').check('get').allowed()",
            "!authorizer.path('/healthz').check('get').errored()",
            "authorizer.path('/healthz').check('get').error() == ''",
            "authorizer.group('apps').resource('deployments').subresource('scale').namespace('ns').check('update').allowed()",
            "authorizer.requestResource.check('create').allowed()",
            "!authorizer.requestResource.check('escalate').allowed()",
            "!authorizer.serviceAccount('default', 'sa').path('/healthz').check('post').allowed()",
            "authorizer.group('').resource('pods').fieldSelector('spec.nodeName=n').labelSelector('a=b').check('list').reason() == ''",
        ];
        for expression in truths {
            assert_eq!(
                eval(expression, &bound),
                Ok(Value::Bool(true)),
                "{expression}"
            );
        }
        let seen = recorder.seen.lock().expect("lock");
        let by_account = seen
            .iter()
            .find(|request| request.service_account.is_some())
            .expect("a service account check");
        assert_eq!(
            by_account.service_account,
            Some(("default".to_string(), "sa".to_string()))
        );
        let selected = seen
            .last()
            .and_then(|request| request.resource.clone())
            .expect("resource");
        assert_eq!(
            (
                selected.field_selector.as_str(),
                selected.label_selector.as_str()
            ),
            ("spec.nodeName=n", "a=b")
        );
    }
}
