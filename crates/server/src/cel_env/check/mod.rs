//! A CEL type checker over cel-rust's parsed AST: cel-go's
//! `checker/checker.go` (`Check`) for the expressions kube compiles, with
//! the declarations kube gives them (variables typed from schemas,
//! `schema_types.rs`; the functions of kube's environment, `overloads.rs`).
//!
//! It reports cel-go's messages at cel-go's positions (`undefined field`,
//! `undeclared reference`, `found no matching overload`, `expected type`,
//! `does not support field selection`, `cannot be range of a
//! comprehension`) and infers the result type. The two-variable
//! comprehensions cel-rust leaves as calls are checked as cel-go expands
//! them (`two_var.rs`). Anything it cannot judge is `dyn`, which cel-go
//! lets through everywhere: the checker must never refuse what kube
//! accepts.

pub mod overloads;
pub mod schema_types;
mod two_var;
pub mod types;

#[cfg(test)]
mod tests;

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::{
    operators, CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, LiteralValue, SelectExpr,
    SourceInfo,
};

use types::Mapping;
pub use types::{FieldTable, Fields, Object, Type};

/// The variables an expression may read, with their types.
#[derive(Debug, Default, Clone)]
pub struct Declarations {
    variables: HashMap<String, Type>,
}

impl Declarations {
    pub fn new() -> Declarations {
        Declarations::default()
    }

    /// Declares variable `name` (a dotted name such as
    /// `authorizer.requestResource` is one variable, as in cel-go).
    pub fn variable(mut self, name: &str, declared: Type) -> Declarations {
        self.variables.insert(name.to_string(), declared);
        self
    }
}

/// One error of the check: a 1-based line and column (cel-go's display
/// adds one to its 0-based column) and cel-go's message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issue {
    pub line: isize,
    pub column: isize,
    pub message: String,
}

/// Checks `expr` (parsed from `info.source`) against `declarations`: its
/// result type, or the errors cel-go reports, in its order (by position).
pub fn check(
    expr: &IdedExpr,
    info: &SourceInfo,
    declarations: &Declarations,
) -> Result<Type, Vec<Issue>> {
    let mut checker = Checker {
        declarations,
        scopes: Vec::new(),
        mapping: Mapping::default(),
        fresh: 0,
        errors: Vec::new(),
    };
    let result = checker.check(expr);
    if checker.errors.is_empty() {
        return Ok(checker.mapping.substitute(&result, true));
    }
    let mut issues: Vec<Issue> = checker
        .errors
        .into_iter()
        .map(|(id, message)| {
            let (line, column) = position(info, id);
            Issue {
                line,
                column,
                message,
            }
        })
        .collect();
    // `Errors.ToDisplayString` sorts by location.
    issues.sort_by_key(|issue| (issue.line, issue.column));
    issues.truncate(MAX_ERRORS);
    Err(issues)
}

/// cel-go's `maxErrorsToReport`.
const MAX_ERRORS: usize = 100;

/// The 1-based line and column of node `id`: the parser records each node's
/// start as a byte offset; cel-go counts columns in code points.
fn position(info: &SourceInfo, id: u64) -> (isize, isize) {
    let Some((start, _)) = info.offset_for(id) else {
        return (-1, 0);
    };
    let mut line = 1isize;
    let mut column = 1isize;
    for (index, c) in info.source.char_indices() {
        if index as u64 >= u64::from(start) {
            break;
        }
        if c == '\n' {
            line += 1;
            column = 1;
        } else {
            column += 1;
        }
    }
    (line, column)
}

struct Checker<'d> {
    declarations: &'d Declarations,
    /// Comprehension scopes, innermost last.
    scopes: Vec<(String, Type)>,
    mapping: Mapping,
    fresh: usize,
    errors: Vec<(u64, String)>,
}

impl Checker<'_> {
    fn error(&mut self, id: u64, message: String) -> Type {
        self.errors.push((id, message));
        Type::Error
    }

    fn lookup(&self, name: &str) -> Option<Type> {
        if let Some((_, found)) = self.scopes.iter().rev().find(|(n, _)| n == name) {
            return Some(found.clone());
        }
        if let Some(found) = self.declarations.variables.get(name) {
            return Some(found.clone());
        }
        type_identifier(name)
    }

    fn check(&mut self, e: &IdedExpr) -> Type {
        match &e.expr {
            Expr::Literal(literal) => match literal {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::Null => Type::Null,
                LiteralValue::String(_) => Type::String,
                LiteralValue::UInt(_) => Type::Uint,
            },
            Expr::Ident(name) => match self.lookup(name) {
                Some(found) => found,
                None => self.error(e.id, undeclared(name)),
            },
            Expr::Select(select) => self.check_select(e, select),
            Expr::Call(call) => self.check_call(e, call),
            Expr::List(list) => {
                let mut joined: Option<Type> = None;
                for (index, element) in list.elements.iter().enumerate() {
                    let mut element_type = self.check(element);
                    if list.optional_indices.contains(&index) {
                        element_type = unwrap_optional(&element_type).unwrap_or(element_type);
                    }
                    joined = Some(self.join(element.id, joined, element_type));
                }
                Type::list(joined.unwrap_or_else(|| self.fresh_var()))
            }
            Expr::Map(map) => {
                let mut keys: Option<Type> = None;
                let mut values: Option<Type> = None;
                for entry in &map.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(entry) => {
                            let key = self.check(&entry.key);
                            keys = Some(self.join(entry.key.id, keys, key));
                            let mut value = self.check(&entry.value);
                            if entry.optional {
                                value = unwrap_optional(&value).unwrap_or(value);
                            }
                            values = Some(self.join(entry.value.id, values, value));
                        }
                        EntryExpr::StructField(field) => {
                            self.check(&field.value);
                        }
                    }
                }
                match (keys, values) {
                    (Some(keys), Some(values)) => Type::map(keys, values),
                    _ => Type::map(self.fresh_var(), self.fresh_var()),
                }
            }
            Expr::Struct(create) => {
                for entry in &create.entries {
                    if let EntryExpr::StructField(field) = &entry.expr {
                        self.check(&field.value);
                    }
                }
                // No message types are declared in kube's environments.
                self.error(e.id, undeclared(&create.type_name))
            }
            Expr::Comprehension(comprehension) => self.check_comprehension(comprehension),
            Expr::Unspecified => Type::Dyn,
        }
    }

    /// `joinTypes` with homogeneous aggregate literals (kube's base
    /// environment enables them).
    fn join(&mut self, id: u64, previous: Option<Type>, current: Type) -> Type {
        let Some(previous) = previous else {
            return current;
        };
        if self.mapping.is_assignable(&previous, &current) {
            if types_less_specific(&previous) {
                return previous;
            }
            return current;
        }
        self.error(
            id,
            format!(
                "expected type '{}' but found '{}'",
                self.show(&previous),
                self.show(&current)
            ),
        )
    }

    fn show(&self, t: &Type) -> String {
        self.mapping.substitute(t, true).to_string()
    }

    fn fresh_var(&mut self) -> Type {
        let name = format!("_var{}", self.fresh);
        self.fresh += 1;
        Type::Param(Arc::from(name))
    }

    fn check_select(&mut self, e: &IdedExpr, select: &SelectExpr) -> Type {
        if !select.test {
            if let Some(name) = qualified_name(e) {
                if let Some(found) = self.declarations.variables.get(&name) {
                    return found.clone();
                }
            }
        }
        let result = self.select_field(e.id, &select.operand, &select.field, false);
        if select.test {
            return Type::Bool;
        }
        result
    }

    /// `checkSelectField`.
    fn select_field(&mut self, id: u64, operand: &IdedExpr, field: &str, optional: bool) -> Type {
        let operand_type = self.check(operand);
        let operand_type = self.mapping.substitute(&operand_type, false);
        let (target, was_optional) = match unwrap_optional(&operand_type) {
            Some(inner) => (inner, true),
            None => (operand_type, false),
        };
        let result = match &target {
            Type::Map(_, value) => (**value).clone(),
            Type::Object(object) => match object.fields.field(field) {
                Some(found) => found,
                None => self.error(id, format!("undefined field '{field}'")),
            },
            Type::Param(_) => {
                self.mapping.is_assignable(&Type::Dyn, &target);
                Type::Dyn
            }
            other if other.is_dyn_or_error() => Type::Dyn,
            other => {
                let shown = self.show(other);
                self.error(
                    id,
                    format!("type '{shown}' does not support field selection"),
                );
                Type::Dyn
            }
        };
        if was_optional || optional {
            return Type::optional(result);
        }
        result
    }

    fn check_call(&mut self, e: &IdedExpr, call: &CallExpr) -> Type {
        let name = call.func_name.as_str();
        if name == operators::OPT_SELECT && call.target.is_none() && call.args.len() == 2 {
            if let Expr::Literal(LiteralValue::String(field)) = &call.args[1].expr {
                let field = field.to_string();
                return self.select_field(e.id, &call.args[0], &field, true);
            }
        }
        // Macros cel-rust leaves as calls bind names in their arguments:
        // their arguments are not checked (a bound name would read as
        // undeclared).
        let Some(target) = &call.target else {
            if overloads::is_unchecked(name) {
                return Type::Dyn;
            }
            let arg_types: Vec<Type> = call.args.iter().map(|arg| self.check(arg)).collect();
            return match overloads::table().get(name) {
                Some(_) => self.resolve(e.id, name, None, &call.args, arg_types),
                None => self.error(e.id, undeclared(name)),
            };
        };
        if let Some(prefix) = qualified_name(target) {
            let qualified = format!("{prefix}.{name}");
            if self.lookup(&prefix).is_none() {
                if overloads::is_unchecked(&qualified) {
                    return Type::Dyn;
                }
                if overloads::table().contains_key(&qualified) {
                    let arg_types: Vec<Type> =
                        call.args.iter().map(|arg| self.check(arg)).collect();
                    return self.resolve(e.id, &qualified, None, &call.args, arg_types);
                }
            }
        }
        if let Some(checked) = self.check_two_var(e.id, target, name, &call.args) {
            return checked;
        }
        let target_type = self.check(target);
        if overloads::is_unchecked(name) {
            return Type::Dyn;
        }
        let arg_types: Vec<Type> = call.args.iter().map(|arg| self.check(arg)).collect();
        match overloads::table().get(name) {
            Some(_) => self.resolve(e.id, name, Some(target_type), &call.args, arg_types),
            None => self.error(e.id, undeclared(name)),
        }
    }

    /// `resolveOverload`.
    fn resolve(
        &mut self,
        id: u64,
        name: &str,
        target: Option<Type>,
        args: &[IdedExpr],
        arg_types: Vec<Type>,
    ) -> Type {
        if name == operators::LOGICAL_AND || name == operators::LOGICAL_OR {
            let mut failed = false;
            for (arg, arg_type) in args.iter().zip(&arg_types) {
                if !self.mapping.is_assignable(arg_type, &Type::Bool) {
                    let shown = self.show(arg_type);
                    self.error(arg.id, format!("expected type 'bool' but found '{shown}'"));
                    failed = true;
                }
            }
            return if failed { Type::Error } else { Type::Bool };
        }
        let mut all_types: Vec<Type> = target.iter().cloned().collect();
        all_types.extend(arg_types);
        let mut result: Option<Type> = None;
        let candidates = overloads::table()
            .get(name)
            .map(Vec::as_slice)
            .unwrap_or(&[]);
        for overload in candidates {
            if overload.receiver.is_some() != target.is_some() {
                continue;
            }
            let mut params: Vec<Type> = overload.receiver.iter().cloned().collect();
            params.extend(overload.args.iter().cloned());
            if params.len() != all_types.len() {
                continue;
            }
            let suffix = self.fresh;
            self.fresh += 1;
            let params: Vec<Type> = params.iter().map(|p| instantiate(p, suffix)).collect();
            let mut trial = self.mapping.clone();
            let fits = all_types
                .iter()
                .zip(&params)
                .all(|(arg, param)| trial.is_assignable(arg, param));
            if !fits {
                continue;
            }
            self.mapping = trial;
            let overload_result = self
                .mapping
                .substitute(&instantiate(&overload.result, suffix), false);
            result = Some(match result {
                None => overload_result,
                Some(previous) if previous.is_exact(&overload_result) => previous,
                Some(Type::Dyn) => Type::Dyn,
                Some(_) => Type::Dyn,
            });
        }
        match result {
            Some(found) => found,
            None => {
                let shown: Vec<String> = all_types.iter().map(|t| self.show(t)).collect();
                let signature = match target {
                    Some(_) => format!("{}.({})", shown[0], shown[1..].join(", ")),
                    None => format!("({})", shown.join(", ")),
                };
                self.error(
                    id,
                    format!("found no matching overload for '{name}' applied to '{signature}'"),
                )
            }
        }
    }

    /// `checkComprehension`.
    fn check_comprehension(&mut self, c: &ComprehensionExpr) -> Type {
        let range = self.check(&c.iter_range);
        let range = self.mapping.substitute(&range, false);
        let accu = self.check(&c.accu_init);
        let (var, var2) = match &range {
            Type::List(element) => match c.iter_var2 {
                Some(_) => (Type::Int, (**element).clone()),
                None => ((**element).clone(), Type::Dyn),
            },
            Type::Map(key, value) => ((**key).clone(), (**value).clone()),
            Type::Dyn | Type::Error | Type::Param(_) => {
                self.mapping.is_assignable(&Type::Dyn, &range);
                (Type::Dyn, Type::Dyn)
            }
            other => {
                let shown = self.show(other);
                self.error(
                    c.iter_range.id,
                    format!(
                        "expression of type '{shown}' cannot be range of a comprehension (must be list, map, or dynamic)"
                    ),
                );
                (Type::Error, Type::Error)
            }
        };
        self.scopes.push((c.accu_var.clone(), accu.clone()));
        self.scopes.push((c.iter_var.clone(), var));
        if let Some(name) = &c.iter_var2 {
            self.scopes.push((name.clone(), var2));
        }
        let condition = self.check(&c.loop_cond);
        self.assert_type(c.loop_cond.id, &Type::Bool, &condition);
        let step = self.check(&c.loop_step);
        self.assert_type(c.loop_step.id, &accu, &step);
        if c.iter_var2.is_some() {
            self.scopes.pop();
        }
        self.scopes.pop();
        let result = self.check(&c.result);
        self.scopes.pop();
        self.mapping.substitute(&result, false)
    }

    /// `assertType`.
    fn assert_type(&mut self, id: u64, expected: &Type, actual: &Type) {
        if !self.mapping.is_assignable(expected, actual) {
            let (expected, actual) = (self.show(expected), self.show(actual));
            self.error(
                id,
                format!("expected type '{expected}' but found '{actual}'"),
            );
        }
    }
}

/// Whether a type is `dyn` or a parameter, which `mostGeneral` keeps.
fn types_less_specific(t: &Type) -> bool {
    matches!(t, Type::Dyn | Type::Param(_))
}

/// cel-go's message for a name nothing declares (kube's container is "").
fn undeclared(name: &str) -> String {
    format!("undeclared reference to '{name}' (in container '')")
}

/// The inner type of an `optional_type`.
fn unwrap_optional(t: &Type) -> Option<Type> {
    match t {
        Type::Opaque("optional_type", parameters) => parameters.first().cloned(),
        _ => None,
    }
}

/// `containers.ToQualifiedName`: `a.b.c` spelled by identifiers and
/// selections.
fn qualified_name(e: &IdedExpr) -> Option<String> {
    match &e.expr {
        Expr::Ident(name) => Some(name.clone()),
        Expr::Select(select) if !select.test => Some(format!(
            "{}.{}",
            qualified_name(&select.operand)?,
            select.field
        )),
        _ => None,
    }
}

/// The type identifiers of cel-go's standard environment.
fn type_identifier(name: &str) -> Option<Type> {
    let named = match name {
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "bool" => Type::Bool,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "null_type" => Type::Null,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "type" => Type::TypeOf(Box::new(Type::Dyn)),
        "google.protobuf.Duration" => Type::Duration,
        "google.protobuf.Timestamp" => Type::Timestamp,
        _ => return None,
    };
    Some(Type::TypeOf(Box::new(named)))
}

/// An overload's type with its parameters renamed apart (`A` → `_A3`), so
/// each call binds its own.
fn instantiate(t: &Type, suffix: usize) -> Type {
    match t {
        Type::Param(name) => Type::Param(Arc::from(format!("_{name}{suffix}"))),
        Type::List(element) => Type::list(instantiate(element, suffix)),
        Type::Map(key, value) => Type::map(instantiate(key, suffix), instantiate(value, suffix)),
        Type::Opaque(name, parameters) => Type::Opaque(
            name,
            parameters.iter().map(|p| instantiate(p, suffix)).collect(),
        ),
        Type::TypeOf(inner) => Type::TypeOf(Box::new(instantiate(inner, suffix))),
        other => other.clone(),
    }
}
