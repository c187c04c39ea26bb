//! The two-variable comprehensions kube's environment has since 1.32
//! (`environment/base.go` `ext.TwoVarComprehensions()`): `all`, `exists`,
//! `existsOne`, `transformList`, `transformMap` and `transformMapEntry` with
//! an index (or key) and a value variable. cel-rust's parser leaves them as
//! calls; they are checked here as the comprehensions cel-go's macros
//! (`ext/comprehensions.go`) expand them to, so a mistake inside them (an
//! undefined field, a predicate that is not a bool) is refused as kube
//! refuses it instead of passing as `dyn`.

use cel::common::ast::{
    operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedEntryExpr, IdedExpr, ListExpr,
    LiteralValue, MapEntryExpr, MapExpr,
};

use super::{Checker, Type};

/// cel-go's `parser.AccumulatorName`.
const ACCUMULATOR: &str = "@result";

/// The macros and how many arguments each takes (the variables included).
fn arity(name: &str) -> &'static [usize] {
    match name {
        operators::ALL | operators::EXISTS | "existsOne" => &[3],
        "transformList" | "transformMap" | "transformMapEntry" => &[3, 4],
        _ => &[],
    }
}

/// The two iteration variables, when `args` starts with two identifiers.
fn iteration_variables(args: &[IdedExpr]) -> Option<(String, String)> {
    match (&args.first()?.expr, &args.get(1)?.expr) {
        (Expr::Ident(first), Expr::Ident(second)) => Some((first.clone(), second.clone())),
        _ => None,
    }
}

impl Checker<'_> {
    /// The type of `target.name(args)` when it is a two-variable
    /// comprehension, `None` when it is not one.
    pub(super) fn check_two_var(
        &mut self,
        id: u64,
        target: &IdedExpr,
        name: &str,
        args: &[IdedExpr],
    ) -> Option<Type> {
        if !arity(name).contains(&args.len()) {
            return None;
        }
        let (first, second) = iteration_variables(args)?;
        let node = |expr: Expr| IdedExpr { id, expr };
        let call = |function: &str, call_args: Vec<IdedExpr>| {
            node(Expr::Call(CallExpr {
                func_name: function.to_string(),
                target: None,
                args: call_args,
            }))
        };
        let accumulator = || node(Expr::Ident(ACCUMULATOR.to_string()));
        let literal = |value: LiteralValue| node(Expr::Literal(value));
        let (filter, body) = match args {
            [_, _, filter, body] => (Some(filter.clone()), body.clone()),
            [_, _, body] => (None, body.clone()),
            _ => return None,
        };
        let keep_if = |step: IdedExpr| match &filter {
            Some(filter) => call(
                operators::CONDITIONAL,
                vec![filter.clone(), step, accumulator()],
            ),
            None => step,
        };
        // `ext/comprehensions.go`: the accumulator's start, the loop
        // condition, the step and the result of each macro.
        let (init, condition, step, result) = match name {
            operators::ALL => (
                literal(LiteralValue::Boolean(true.into())),
                call(operators::NOT_STRICTLY_FALSE, vec![accumulator()]),
                call(operators::LOGICAL_AND, vec![accumulator(), body]),
                accumulator(),
            ),
            operators::EXISTS => (
                literal(LiteralValue::Boolean(false.into())),
                call(
                    operators::NOT_STRICTLY_FALSE,
                    vec![call(operators::LOGICAL_NOT, vec![accumulator()])],
                ),
                call(operators::LOGICAL_OR, vec![accumulator(), body]),
                accumulator(),
            ),
            "existsOne" => (
                literal(LiteralValue::Int(0i64.into())),
                literal(LiteralValue::Boolean(true.into())),
                call(
                    operators::CONDITIONAL,
                    vec![
                        body,
                        call(
                            operators::ADD,
                            vec![accumulator(), literal(LiteralValue::Int(1i64.into()))],
                        ),
                        accumulator(),
                    ],
                ),
                call(
                    operators::EQUALS,
                    vec![accumulator(), literal(LiteralValue::Int(1i64.into()))],
                ),
            ),
            "transformList" => (
                node(Expr::List(ListExpr::new(Vec::new()))),
                literal(LiteralValue::Boolean(true.into())),
                keep_if(call(
                    operators::ADD,
                    vec![accumulator(), node(Expr::List(ListExpr::new(vec![body])))],
                )),
                accumulator(),
            ),
            // `cel.@mapInsert(accu, k, v)` is typed as the one-entry map
            // `{k: v}` it adds; `cel.@mapInsert(accu, entry)` as `entry`.
            "transformMap" => (
                node(Expr::Map(MapExpr {
                    entries: Vec::new(),
                })),
                literal(LiteralValue::Boolean(true.into())),
                keep_if(node(Expr::Map(MapExpr {
                    entries: vec![IdedEntryExpr {
                        id,
                        expr: EntryExpr::MapEntry(MapEntryExpr {
                            key: node(Expr::Ident(first.clone())),
                            value: body,
                            optional: false,
                        }),
                    }],
                }))),
                accumulator(),
            ),
            _ => (
                node(Expr::Map(MapExpr {
                    entries: Vec::new(),
                })),
                literal(LiteralValue::Boolean(true.into())),
                keep_if(body),
                accumulator(),
            ),
        };
        let comprehension = ComprehensionExpr {
            iter_range: target.clone(),
            iter_var: first,
            iter_var2: Some(second),
            accu_var: ACCUMULATOR.to_string(),
            accu_init: init,
            loop_cond: condition,
            loop_step: step,
            result,
        };
        Some(self.check_comprehension(&comprehension))
    }
}
