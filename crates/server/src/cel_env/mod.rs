//! kube's CEL environment, shared by every place kube evaluates CEL: CRD
//! `x-kubernetes-validations` (`crd/cel_rules.rs`), webhook
//! `matchConditions` (`admission/webhook/match_conditions.rs`) and
//! admission policies. It is cel-rust's standard library with its strings
//! extension and `matches`, plus kube's own libraries
//! (`staging/src/k8s.io/apiserver/pkg/cel/library`) as far as they are
//! ported here: [`lists`] (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`), [`regex`] (`find`, `findAll`) and [`quantity`]
//! (`quantity`, `isQuantity`, comparisons, `sign` and the arithmetic),
//! [`ip`] (kube's `ip` and `cidr` libraries), [`url`] (`url`, `isURL` and
//! the getters, over Go's `net/url` in [`go_url`]), [`semver`], [`format`]
//! (`format.named`, the constant formats, `validate`), [`authz`] (the
//! `authorizer` variable's functions; the variable is bound by admission
//! policies). [`cost_estimate`] is cel-go's static cost estimate,
//! [`runtime_cost`] its actual cost and kube's runtime limits. [`check`]
//! is the type checker kube runs before evaluation (cel-go's, which
//! cel-rust lacks), with every library's signatures declared.

pub mod authz;
pub mod check;
pub mod cost_estimate;
pub mod format;
pub mod go_url;
pub mod ip;
pub mod lists;
pub mod quantity;
pub mod regex;
pub mod runtime_cost;
pub mod semver;
pub mod url;

use std::sync::{Arc, OnceLock};

use cel::common::value::{CowVal, Val};
use cel::{Env, ExecutionError, Value};

/// The environment with kube's libraries, built once.
pub fn env() -> &'static Arc<Env> {
    static ENV: OnceLock<Arc<Env>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Env::stdlib();
        let libraries: [(&str, Library); 9] = [
            ("strings", cel::extensions::strings),
            ("lists", lists::library),
            ("regex", regex::library),
            ("quantity", quantity::library),
            ("ip", ip::library),
            ("url", url::library),
            ("semver", semver::library),
            ("authz", authz::library),
            ("format", format::library),
        ];
        for (name, library) in libraries {
            if let Err(error) = env.add_extension(library) {
                tracing::warn!(library = name, %error, "a CEL library did not load");
            }
        }
        Arc::new(env)
    })
}

/// A library: registers its overloads on an environment.
type Library = fn(&mut Env) -> Result<(), cel::DeclarationError>;

/// A library function written over [`Value`]s.
pub type ValueFunction = fn(&[Value]) -> Result<Value, ExecutionError>;

/// Calls `function` with the arguments of an overload converted to
/// [`Value`]s, its result converted back.
pub fn call<'b, 'v>(
    args: Vec<CowVal<'b, 'v>>,
    function: ValueFunction,
) -> Result<CowVal<'b, 'v>, ExecutionError> {
    let values = args
        .iter()
        .map(|arg| Value::try_from(arg.as_ref()))
        .collect::<Result<Vec<_>, _>>()?;
    let result: Box<dyn Val> = function(&values)?.try_into()?;
    Ok(CowVal::Owned(result))
}

/// A [`ValueFunction`] as the overload `cel` registers.
macro_rules! overload {
    ($function:path) => {{
        fn adapted<'b, 'v>(
            args: Vec<cel::common::value::CowVal<'b, 'v>>,
        ) -> Result<cel::common::value::CowVal<'b, 'v>, cel::ExecutionError> {
            $crate::cel_env::call(args, $function)
        }
        adapted as cel::common::functions::Function
    }};
}
pub(crate) use overload;

/// The arguments of an overload, as many as it declares.
pub(crate) fn arguments<const N: usize>(args: &[Value]) -> Result<&[Value; N], ExecutionError> {
    args.try_into()
        .map_err(|_| ExecutionError::invalid_argument_count(N, args.len()))
}

/// cel-go's error for a value no overload takes
/// (`types.MaybeNoSuchOverloadErr`).
pub(crate) fn no_such_overload(function: &str) -> ExecutionError {
    ExecutionError::function_error(function, "no such overload")
}

/// A JSON value as CEL sees an unstructured object
/// (`common.UnstructuredToVal` without a schema): integers as ints,
/// other numbers as doubles, objects as maps.
pub fn from_json(value: &serde_json::Value) -> Value {
    match value {
        serde_json::Value::Null => Value::Null,
        serde_json::Value::Bool(flag) => Value::Bool(*flag),
        serde_json::Value::Number(number) => match (number.as_i64(), number.as_u64()) {
            (Some(int), _) => Value::Int(int),
            (None, Some(uint)) => Value::UInt(uint),
            _ => Value::Float(number.as_f64().unwrap_or(f64::NAN)),
        },
        serde_json::Value::String(text) => Value::String(Arc::new(text.clone())),
        serde_json::Value::Array(items) => {
            Value::List(Arc::new(items.iter().map(from_json).collect()))
        }
        serde_json::Value::Object(map) => map
            .iter()
            .map(|(key, field)| (key.clone(), from_json(field)))
            .collect::<std::collections::HashMap<String, Value>>()
            .into(),
    }
}

/// Compiles and runs `expression` in [`env`] with `variables` bound: for
/// the libraries' tests.
#[cfg(test)]
pub(crate) fn eval(expression: &str, variables: &[(&str, Value)]) -> Result<Value, String> {
    let program = env()
        .compile(expression)
        .map_err(|error| error.to_string())?;
    let mut context = cel::Context::with_env(env().clone());
    for (name, value) in variables {
        context.add_variable_from_value(*name, value.clone());
    }
    program.execute(&context).map_err(|error| error.to_string())
}

/// Expressions up to this depth are evaluated on the request's thread;
/// deeper ones on a thread with the parser's stack (evaluation recurses as
/// deep as the expression nests).
pub const SHALLOW_DEPTH: usize = 48;

/// The nesting depth of a syntax tree.
pub fn depth(expression: &cel::parser::Expression) -> usize {
    use cel::common::ast::{EntryExpr, Expr};
    let children: Vec<&cel::parser::Expression> = match &expression.expr {
        Expr::Call(call) => call.target.iter().map(|t| &**t).chain(&call.args).collect(),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        Expr::List(list) => list.elements.iter().collect(),
        Expr::Map(map) => entries(&map.entries),
        Expr::Struct(object) => entries(&object.entries),
        Expr::Select(select) => vec![&*select.operand],
        Expr::Ident(_) | Expr::Literal(_) | Expr::Unspecified => Vec::new(),
    };
    fn entries(entries: &[cel::common::ast::IdedEntryExpr]) -> Vec<&cel::parser::Expression> {
        entries
            .iter()
            .flat_map(|entry| match &entry.expr {
                EntryExpr::StructField(field) => vec![&field.value],
                EntryExpr::MapEntry(pair) => vec![&pair.key, &pair.value],
            })
            .collect()
    }
    1 + children.into_iter().map(depth).max().unwrap_or(0)
}

/// `celReservedSymbols`: words a CEL identifier may not be.
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];
