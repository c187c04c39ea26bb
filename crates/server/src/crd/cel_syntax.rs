//! The syntax check of a CRD's `x-kubernetes-validations` expressions
//! (`rule` and `messageExpression`): apiextensions
//! `apiserver/schema/cel/compilation.go` `compileRule`, whose
//! `env.Compile` failures become `compilation failed: ` plus cel-go's
//! `Issues.String()` (`common/errors.go` `Error.ToDisplayString`, reproduced
//! here from the parser's positions and messages).
//!
//! [`check`] parses only; [`check_typed`] also type-checks against declared
//! variables (`cel_env::check`), as `env.Compile` does. Cost estimation is
//! not done. The parser is the `cel` crate's (cel-rust, generated from
//! CEL's ANTLR grammar, as cel-go's is).
//!
//! The parser runs on its own thread with a large stack: the nesting of an
//! expression is bounded by cel-go's own limits (`parser/options.go`:
//! 100 000 code points, recursion depth 250), and a panic in the parser
//! becomes an error instead of taking the request down.

use cel::common::ast::{IdedExpr, SourceInfo};
use cel::parser::Parser;

use crate::cel_env::check::{Declarations, Type};

/// cel-go's default `expressionSizeCodePointLimit` (kube keeps it).
pub const MAX_EXPRESSION_CODE_POINTS: usize = 100_000;
/// cel-go's default `maxRecursionDepth` (kube keeps it).
pub const MAX_RECURSION_DEPTH: u16 = 250;
/// cel-go's `maxSnippetLength`: longer lines are not shown under an error.
const MAX_SNIPPET_BYTES: usize = 16_384;
/// Enough for `MAX_RECURSION_DEPTH` nested expressions in a debug build
/// (the ANTLR parser descends about ten rules per nesting level).
const PARSER_STACK_BYTES: usize = 256 * 1024 * 1024;

/// Why an expression was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// cel-go's display of the parse errors (`ERROR: <input>:L:C: …`).
    #[error("{0}")]
    Syntax(String),
    /// The parser panicked or its thread could not start.
    #[error("internal error: the CEL parser failed on this expression")]
    Parser,
}

/// Parses `expression` as CEL; the errors as cel-go displays them.
pub fn check(expression: &str) -> Result<(), Error> {
    check_then(expression, |_| ())
}

/// [`check`], then `then` on the parsed expression (macros expanded), on
/// the parser's thread: for the cost estimate of CRD rules.
pub fn check_then<T: Send>(
    expression: &str,
    then: impl FnOnce(&IdedExpr) -> T + Send,
) -> Result<T, Error> {
    parse_then(expression, |expr, _| Ok(then(expr)))
}

/// What a checked expression must evaluate to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expected {
    /// A rule or a policy's validation: `cel expression must evaluate to a bool`.
    Bool,
    /// A `messageExpression`: `must evaluate to a string`.
    String,
    /// Anything (a variable, an audit annotation checked elsewhere).
    Any,
}

/// Why a checked expression's result type was refused (kube's own text,
/// not one of cel-go's issues).
pub const RESULT_NOT_BOOL: &str = "cel expression must evaluate to a bool";

/// Parses `expression` and type-checks it against `declarations`
/// (`cel_env::check`): cel-go's `env.Compile`. The result type must be
/// `expected`; a `dyn` result passes (the checker types what it cannot
/// judge as `dyn`, kube's checker would know it: a deliberate leniency).
pub fn check_typed(
    expression: &str,
    declarations: &Declarations,
    expected: Expected,
) -> Result<Type, TypedError> {
    check_typed_then(expression, declarations, expected, |_| ()).map(|(found, ())| found)
}

/// [`check_typed`], then `then` on the checked expression, on the
/// parser's thread (the cost estimate of CRD rules runs only on rules that
/// check, as kube's `compileRule` estimates after compiling).
pub fn check_typed_then<T: Send>(
    expression: &str,
    declarations: &Declarations,
    expected: Expected,
    then: impl FnOnce(&IdedExpr) -> T + Send,
) -> Result<(Type, T), TypedError> {
    let declarations = declarations.clone();
    let (found, value) = parse_then(expression, |expr, info| match crate::cel_env::check::check(
        expr,
        info,
        &declarations,
    ) {
        Ok(result) => Ok((result, then(expr))),
        Err(issues) => Err(issues
            .into_iter()
            .map(|issue| (issue.line, issue.column, issue.message))
            .collect()),
    })
    .map_err(TypedError::Compile)?;
    let fits = match expected {
        Expected::Bool => matches!(found, Type::Bool | Type::Dyn),
        Expected::String => matches!(found, Type::String | Type::Dyn),
        Expected::Any => true,
    };
    if !fits {
        return Err(TypedError::ResultType);
    }
    Ok((found, value))
}

/// Why [`check_typed`] refused an expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypedError {
    /// It does not parse or type-check (cel-go's issues).
    #[error("{0}")]
    Compile(Error),
    /// Its result is not of the expected type.
    #[error("result type")]
    ResultType,
}

/// Parses `expression`, then runs `after` on the result (on the parser's
/// thread); the errors, `after`'s as (line, column, message), as cel-go
/// displays them.
fn parse_then<T: Send>(
    expression: &str,
    after: impl FnOnce(&IdedExpr, &SourceInfo) -> Result<T, Vec<(isize, isize, String)>> + Send,
) -> Result<T, Error> {
    let size = expression.chars().count();
    if size > MAX_EXPRESSION_CODE_POINTS {
        // cel-go reports the limit at `common.NoLocation` (line -1, column -1).
        return Err(Error::Syntax(format!(
            "ERROR: <input>:-1:0: expression code point size exceeds limit: size: {size}, limit {MAX_EXPRESSION_CODE_POINTS}"
        )));
    }
    let parse = move || -> Result<T, Vec<(isize, isize, String)>> {
        let (expr, info) = Parser::new()
            .max_recursion_depth(MAX_RECURSION_DEPTH)
            .parse_with_source_info(expression)
            .map_err(|errors| {
                errors
                    .errors
                    .into_iter()
                    .map(|error| {
                        let message = match &error.source {
                            Some(source) if error.msg == "UNKNOWN" => source.to_string(),
                            _ => error.msg,
                        };
                        // cel-go's `recursionListener` reports the limit at
                        // `common.NoLocation` (displayed as `-1:0`).
                        if message.contains("Recursion limit of") {
                            return (-1, 0, recursion_message());
                        }
                        (error.pos.0, error.pos.1, message)
                    })
                    .collect::<Vec<_>>()
            })?;
        after(&expr, &info)
    };
    let outcome = std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("cel-parse".into())
            .stack_size(PARSER_STACK_BYTES)
            .spawn_scoped(scope, parse)
            .map_err(|_| Error::Parser)?
            .join()
            .map_err(|_| Error::Parser)
    })?;
    match outcome {
        Ok(value) => Ok(value),
        // cel-go stops at the recursion limit (a panic it recovers from)
        // and reports that error alone.
        Err(errors) if errors.iter().any(|(line, ..)| *line == -1) => Err(Error::Syntax(display(
            expression,
            &[(-1, 0, recursion_message())],
        ))),
        Err(errors) => Err(Error::Syntax(display(expression, &errors))),
    }
}

/// cel-go's `recursionListener` text.
fn recursion_message() -> String {
    format!("expression recursion limit exceeded: {MAX_RECURSION_DEPTH}")
}

/// cel-go's `Errors.ToDisplayString`: each error as `Error.ToDisplayString`
/// prints it, one per line. The parser reports 1-based columns.
fn display(expression: &str, errors: &[(isize, isize, String)]) -> String {
    let lines: Vec<&str> = expression.split('\n').collect();
    let mut out = Vec::with_capacity(errors.len());
    for (line, column, message) in errors {
        let mut text = format!("ERROR: <input>:{line}:{column}: {message}");
        let snippet = usize::try_from(*line - 1)
            .ok()
            .and_then(|index| lines.get(index));
        if let Some(snippet) = snippet.filter(|snippet| snippet.len() <= MAX_SNIPPET_BYTES) {
            let snippet = snippet.replace('\t', " ");
            let zero_based = usize::try_from(*column - 1).unwrap_or(0);
            let mut indicator = String::new();
            let mut chars = snippet.chars();
            for _ in 0..zero_based {
                match chars.next() {
                    Some(c) if c.len_utf8() > 1 => indicator.push('．'),
                    Some(_) => indicator.push('.'),
                    None => break,
                }
            }
            match chars.next() {
                Some(c) if c.len_utf8() > 1 => indicator.push('＾'),
                _ => indicator.push('^'),
            }
            text.push_str(&format!("\n | {snippet}\n | {indicator}"));
        }
        out.push(text);
    }
    out.join("\n")
}

#[cfg(test)]
#[path = "cel_syntax_tests.rs"]
mod tests;
