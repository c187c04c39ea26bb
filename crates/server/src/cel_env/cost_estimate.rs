//! The static cost estimate of a CEL expression, as cel-go's
//! `checker/cost.go` (`coster`) computes it with kube's size estimator
//! (`apiserver/pkg/cel/library/cost.go`, `apiserver/pkg/cel/types.go`
//! `SchemaDeclType`: the sizes of strings, lists and maps from the
//! OpenAPI schema's `maxLength`, `maxItems` and `maxProperties`, or the
//! largest a 3 MiB request could hold).
//!
//! cel-go estimates over the type-checked AST; ferrokube has no checker
//! here, so types come from the schema `self` is bound to (and `oldSelf`,
//! the same), following selections, indexes and comprehension variables.
//! Where a type is not known (a value the schema does not describe, a
//! function result) the size is unknown (`0..u64::MAX`) as in cel-go.
//! The costs per call are cel-go's: 1 for identifiers, selections and
//! O(1) calls, `StringTraversalCostFactor` (0.1) per code point for
//! string comparisons, `startsWith`/`endsWith`/`contains`, concatenation
//! and kube's string-reading functions, `RegexStringLengthCostFactor`
//! (0.25) per regex character for `matches`/`find`/`findAll`, list size
//! for `in` and kube's list functions, the comprehension's range size
//! times its loop cost, 10/30/40 to create a list/map/message.

use cel::common::ast::{operators, EntryExpr, Expr, IdedExpr, LiteralValue};
use serde_json::Value;

/// `celconfig.MaxRequestSizeBytes`: 3 MiB.
pub const MAX_REQUEST_SIZE_BYTES: u64 = 3 * 1024 * 1024;
const STRING_TRAVERSAL_COST_FACTOR: f64 = 0.1;
const REGEX_STRING_LENGTH_COST_FACTOR: f64 = 0.25;
const LIST_CREATE_BASE_COST: u64 = 10;
const MAP_CREATE_BASE_COST: u64 = 30;
const STRUCT_CREATE_BASE_COST: u64 = 40;

/// A `[min, max]` range, saturating (`checker.CostEstimate` and
/// `SizeEstimate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub min: u64,
    pub max: u64,
}

impl Range {
    pub const ZERO: Range = Range { min: 0, max: 0 };
    const UNKNOWN: Range = Range {
        min: 0,
        max: u64::MAX,
    };

    pub fn fixed(value: u64) -> Range {
        Range {
            min: value,
            max: value,
        }
    }

    fn add(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_add(other.min),
            max: self.max.saturating_add(other.max),
        }
    }

    fn multiply(self, other: Range) -> Range {
        Range {
            min: self.min.saturating_mul(other.min),
            max: self.max.saturating_mul(other.max),
        }
    }

    /// `MultiplyByCostFactor`: each bound times `factor`, rounded up.
    fn factor(self, factor: f64) -> Range {
        let scale = |value: u64| {
            let scaled = (value as f64 * factor).ceil();
            if scaled >= u64::MAX as f64 {
                u64::MAX
            } else {
                scaled as u64
            }
        };
        Range {
            min: scale(self.min),
            max: scale(self.max),
        }
    }

    fn union(self, other: Range) -> Range {
        Range {
            min: self.min.min(other.min),
            max: self.max.max(other.max),
        }
    }
}

/// The smallest JSON a value of `schema` serializes to
/// (`DeclType.MinSerializedSize`).
pub fn min_serialized_size(schema: &Value) -> u64 {
    if flag(schema, "x-kubernetes-int-or-string") {
        return 1;
    }
    match text(schema, "type") {
        "string" | "array" | "object" => 2,
        "boolean" => 4,
        "integer" | "number" => 1,
        _ => 1,
    }
}

/// `maxCardinality` of `schema/cel/compilation.go`: how often data of
/// `min_size` bytes fits in a request.
pub fn max_cardinality(min_size: u64) -> u64 {
    MAX_REQUEST_SIZE_BYTES / (min_size + 1)
}

fn text<'a>(schema: &'a Value, name: &str) -> &'a str {
    schema.get(name).and_then(Value::as_str).unwrap_or("")
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

fn bound(schema: &Value, name: &str) -> Option<u64> {
    schema
        .get(name)
        .and_then(Value::as_i64)
        .map(|bound| bound.max(0) as u64)
}

/// The schema of a list's items or a map's values.
fn element(schema: &Value) -> Option<&Value> {
    match text(schema, "type") {
        "array" => schema.get("items").filter(|items| items.is_object()),
        "object" => schema
            .get("additionalProperties")
            .filter(|additional| additional.is_object()),
        _ => None,
    }
}

/// The largest size (code points, items or entries) a value of `schema`
/// has, as kube's `SchemaDeclType` sets `MaxElements`.
pub fn max_size(schema: &Value) -> Option<u64> {
    let unbounded = MAX_REQUEST_SIZE_BYTES - 2;
    if flag(schema, "x-kubernetes-int-or-string") {
        return Some(unbounded);
    }
    match text(schema, "type") {
        "string" => Some(bound(schema, "maxLength").unwrap_or_else(|| {
            match text(schema, "format") {
                // MaxDurationSizeJSON, JSONDateSize, MaxDatetimeSizeJSON
                "duration" => 32,
                "date" => 10,
                "date-time" => 32,
                _ => match schema.get("enum").and_then(Value::as_array) {
                    Some(values) if !values.is_empty() => values
                        .iter()
                        .filter_map(Value::as_str)
                        .map(|value| value.chars().count() as u64)
                        .max()
                        .unwrap_or(0),
                    _ => unbounded,
                },
            }
        })),
        "array" => Some(bound(schema, "maxItems").unwrap_or_else(|| {
            let items = element(schema).map_or(1, min_serialized_size);
            unbounded / (items + 1)
        })),
        "object" => {
            let values = element(schema)?;
            Some(
                bound(schema, "maxProperties")
                    .unwrap_or_else(|| unbounded / (min_serialized_size(values) + 6)),
            )
        }
        _ => None,
    }
}

/// What the estimator knows of an expression's value.
#[derive(Clone, Copy)]
struct Known<'s> {
    size: Option<Range>,
    schema: Option<&'s Value>,
    /// Part of an input whose every string, list and map is at most the
    /// coster's `input_bound` long ([`estimate_with_bounded_inputs`]).
    input: bool,
}

impl<'s> Known<'s> {
    const NOTHING: Known<'static> = Known {
        size: None,
        schema: None,
        input: false,
    };

    fn of_schema(schema: Option<&'s Value>) -> Known<'s> {
        Known {
            size: schema.and_then(max_size).map(|max| Range { min: 0, max }),
            schema,
            input: false,
        }
    }

    /// A string (or bytes): of a string schema, or a sized value no
    /// schema describes (a literal, a string function's result).
    fn is_text(&self) -> bool {
        match self.schema {
            Some(schema) => text_type(schema) == "string",
            None => self.size.is_some(),
        }
    }

    fn size_or_unknown(&self) -> Range {
        self.size.unwrap_or(Range::UNKNOWN)
    }
}

/// The estimator: variables in scope, innermost last.
struct Coster<'s> {
    scopes: Vec<(String, Known<'s>)>,
    /// The variables that are inputs, and the most any string, list or map
    /// in them holds (`None`: inputs of unknown size).
    inputs: &'s [&'s str],
    input_bound: Option<u64>,
}

impl Known<'_> {
    /// A part of an input of at most `bound` elements or code points.
    fn input(bound: u64) -> Known<'static> {
        Known {
            size: Some(Range { min: 0, max: bound }),
            schema: None,
            input: true,
        }
    }
}

/// The estimated cost of `expression` with `self` (and `oldSelf`) bound to
/// values of `schema`.
pub fn estimate(expression: &IdedExpr, schema: &Value) -> Range {
    let mut coster = Coster {
        scopes: vec![
            ("self".into(), Known::of_schema(Some(schema))),
            ("oldSelf".into(), Known::of_schema(Some(schema))),
        ],
        inputs: &[],
        input_bound: None,
    };
    coster.cost(expression).0
}

/// The estimated cost of `expression` with each named variable bound to
/// values of its schema (kube's environments that declare their own
/// variables, such as DRA's `device`).
pub fn estimate_with_variables(expression: &IdedExpr, variables: &[(&str, &Value)]) -> Range {
    let mut coster = Coster {
        scopes: variables
            .iter()
            .map(|(name, schema)| (name.to_string(), Known::of_schema(Some(*schema))))
            .collect(),
        inputs: &[],
        input_bound: None,
    };
    coster.cost(expression).0
}

/// The estimated cost of `expression` whose `inputs` (variables no schema
/// describes, such as an admission policy's `object`) hold no string, list
/// or map longer than `bound`: an upper bound of one evaluation's actual
/// cost on those inputs, where [`estimate`] without a schema knows no size.
pub fn estimate_with_bounded_inputs(expression: &IdedExpr, inputs: &[&str], bound: u64) -> Range {
    let mut coster = Coster {
        scopes: Vec::new(),
        inputs,
        input_bound: Some(bound),
    };
    coster.cost(expression).0
}

/// An expression whose value is surely a number: a numeric literal, a
/// conversion to one, `size`, or arithmetic other than `+`.
fn is_number(expression: &IdedExpr) -> bool {
    match &expression.expr {
        Expr::Literal(literal) => matches!(
            literal,
            LiteralValue::Int(_) | LiteralValue::UInt(_) | LiteralValue::Double(_)
        ),
        Expr::Call(call) => matches!(
            call.func_name.as_str(),
            "size"
                | "int"
                | "uint"
                | "double"
                | operators::SUBSTRACT
                | operators::MULTIPLY
                | operators::DIVIDE
                | operators::MODULO
                | operators::NEGATE
        ),
        _ => false,
    }
}

impl<'s> Coster<'s> {
    fn lookup(&self, name: &str) -> Option<Known<'s>> {
        self.scopes
            .iter()
            .rev()
            .find(|(bound, _)| bound == name)
            .map(|(_, known)| *known)
            .or_else(|| {
                let bound = self.input_bound?;
                self.inputs.contains(&name).then(|| Known::input(bound))
            })
    }

    /// What a part of `container` (a field, an item, a comprehension's
    /// variable) is known as when no schema describes it.
    fn part_of(&self, container: &Known<'s>, described: Known<'s>) -> Known<'s> {
        match (container.input, described.schema, self.input_bound) {
            (true, None, Some(bound)) => Known::input(bound),
            _ => described,
        }
    }

    fn cost(&mut self, expression: &IdedExpr) -> (Range, Known<'s>) {
        match &expression.expr {
            Expr::Unspecified => (Range::ZERO, Known::NOTHING),
            Expr::Literal(literal) => {
                let size = match literal {
                    LiteralValue::String(text) => Some(text.chars().count() as u64),
                    LiteralValue::Bytes(bytes) => Some(bytes.len() as u64),
                    _ => None,
                };
                let known = Known {
                    size: size.map(Range::fixed),
                    schema: None,
                    input: false,
                };
                (Range::ZERO, known)
            }
            Expr::Ident(name) => (Range::fixed(1), self.lookup(name).unwrap_or(Known::NOTHING)),
            Expr::Select(select) => {
                let (operand_cost, operand) = self.cost(&select.operand);
                let field = operand
                    .schema
                    .and_then(|schema| property(schema, &select.field));
                let known = if select.test {
                    Known::NOTHING
                } else {
                    self.part_of(&operand, Known::of_schema(field))
                };
                (operand_cost.add(Range::fixed(1)), known)
            }
            Expr::List(list) => {
                let mut sum = Range::fixed(LIST_CREATE_BASE_COST);
                for element in &list.elements {
                    sum = sum.add(self.cost(element).0);
                }
                let known = Known {
                    size: Some(Range::fixed(list.elements.len() as u64)),
                    schema: None,
                    input: false,
                };
                (sum, known)
            }
            Expr::Map(map) => {
                let mut sum = Range::fixed(MAP_CREATE_BASE_COST);
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(entry) = &entry.expr {
                        sum = sum.add(self.cost(&entry.key).0);
                        sum = sum.add(self.cost(&entry.value).0);
                    }
                }
                let known = Known {
                    size: Some(Range::fixed(map.entries.len() as u64)),
                    schema: None,
                    input: false,
                };
                (sum, known)
            }
            Expr::Struct(structure) => {
                let mut sum = Range::fixed(STRUCT_CREATE_BASE_COST);
                for entry in &structure.entries {
                    if let EntryExpr::StructField(field) = &entry.expr {
                        sum = sum.add(self.cost(&field.value).0);
                    }
                }
                (sum, Known::NOTHING)
            }
            Expr::Comprehension(comprehension) => {
                let (range_cost, range) = self.cost(&comprehension.iter_range);
                let (init_cost, init) = self.cost(&comprehension.accu_init);
                let item = range.schema.and_then(|schema| match text(schema, "type") {
                    "array" => element(schema),
                    _ => None,
                });
                let value = range.schema.and_then(element);
                let depth = self.scopes.len();
                self.scopes.push((comprehension.accu_var.clone(), init));
                match &comprehension.iter_var2 {
                    Some(second) => {
                        let first = self.part_of(&range, Known::NOTHING);
                        let other = self.part_of(&range, Known::of_schema(item.or(value)));
                        self.scopes.push((comprehension.iter_var.clone(), first));
                        self.scopes.push((second.clone(), other));
                    }
                    None => {
                        let only = self.part_of(&range, Known::of_schema(item));
                        self.scopes.push((comprehension.iter_var.clone(), only));
                    }
                }
                let loop_cost = self.cost(&comprehension.loop_cond).0;
                let step_cost = self.cost(&comprehension.loop_step).0;
                let result_cost = self.cost(&comprehension.result).0;
                self.scopes.truncate(depth);
                // A range the schema says is a scalar cannot be iterated
                // (cel-go's checker refuses it).
                let count = match range.schema.map(text_type) {
                    Some("array" | "object") | None => range.size_or_unknown(),
                    Some(_) => Range::ZERO,
                };
                let total = range_cost
                    .add(init_cost)
                    .add(result_cost)
                    .add(count.multiply(loop_cost.add(step_cost)));
                let known = match &comprehension.accu_init.expr {
                    Expr::List(_) | Expr::Map(_) => Known {
                        size: Some(count),
                        schema: None,
                        input: false,
                    },
                    _ => init,
                };
                (total, known)
            }
            Expr::Call(call) => self.call(call),
        }
    }

    fn call(&mut self, call: &cel::common::ast::CallExpr) -> (Range, Known<'s>) {
        let mut sum = Range::ZERO;
        let target = call.target.as_ref().map(|target| {
            let (cost, known) = self.cost(target);
            sum = sum.add(cost);
            known
        });
        let mut arg_costs = Vec::with_capacity(call.args.len());
        let mut args = Vec::with_capacity(call.args.len());
        for arg in &call.args {
            let (cost, known) = self.cost(arg);
            arg_costs.push(cost);
            args.push(known);
        }
        let arg_sum = arg_costs
            .iter()
            .fold(Range::ZERO, |sum, cost| sum.add(*cost));
        let size = |known: Option<&Known<'s>>| known.map_or(Range::UNKNOWN, Known::size_or_unknown);
        let name = call.func_name.as_str();
        let (cost, known) = match (name, target.as_ref(), args.as_slice()) {
            (operators::LOGICAL_AND | operators::LOGICAL_OR, None, [_, _]) => {
                let (left, right) = (arg_costs[0], arg_costs[1]);
                let cost = Range {
                    min: left.min,
                    max: left.add(right).max,
                };
                (cost, Known::NOTHING)
            }
            (operators::CONDITIONAL, None, [_, when, otherwise]) => {
                let cost = arg_costs[0].add(arg_costs[1].union(arg_costs[2]));
                let known = Known {
                    size: Some(size(Some(when)).union(size(Some(otherwise)))),
                    schema: when.schema.or(otherwise.schema),
                    input: false,
                };
                (cost, known)
            }
            (operators::INDEX | operators::OPT_INDEX, None, [container, _]) => {
                let known = self.part_of(
                    container,
                    Known::of_schema(container.schema.and_then(element)),
                );
                (Range::fixed(1).add(arg_sum), known)
            }
            (operators::IN, None, [_, container]) => {
                let traversal = match container.schema.map(|schema| text(schema, "type")) {
                    Some("object") => Range::fixed(1),
                    _ => size(Some(container)),
                };
                (traversal.add(arg_sum), Known::NOTHING)
            }
            // Bounding an evaluation (`estimate_with_bounded_inputs`): a
            // sum with an operand of unknown size (a policy's `variables`,
            // a function's result) may be as long as anything (a chain of
            // `v + v` doubles it), unless one side is surely a number.
            (operators::ADD, None, [left, right])
                if self.input_bound.is_some()
                    && (left.size.is_none() || right.size.is_none())
                    && !call.args.iter().any(is_number) =>
            {
                (Range::UNKNOWN, Known::NOTHING)
            }
            (operators::ADD, None, [left, right]) => {
                // Without a checker, a value of no known size (a function
                // result: `string(self.count)`) counts as empty here, where
                // cel-go knows its type; numbers add at cost 1.
                let result = left
                    .size
                    .unwrap_or(Range::ZERO)
                    .add(right.size.unwrap_or(Range::ZERO));
                let is_text = left.is_text() || right.is_text();
                let cost = if is_text {
                    result.factor(STRING_TRAVERSAL_COST_FACTOR)
                } else {
                    Range::fixed(1)
                };
                let known = Known {
                    size: is_text.then_some(result),
                    schema: None,
                    input: false,
                };
                (cost.add(arg_sum), known)
            }
            (
                operators::EQUALS
                | operators::NOT_EQUALS
                | operators::LESS
                | operators::LESS_EQUALS
                | operators::GREATER
                | operators::GREATER_EQUALS,
                None,
                [left, right],
            ) if left.is_text() || right.is_text() => {
                let smallest = size(Some(left)).max.min(size(Some(right)).max);
                let cost = Range {
                    min: u64::from(smallest > 0),
                    max: smallest,
                }
                .factor(STRING_TRAVERSAL_COST_FACTOR);
                (cost.add(arg_sum), Known::NOTHING)
            }
            ("startsWith" | "endsWith", Some(_), [prefix]) => (
                size(Some(prefix))
                    .factor(STRING_TRAVERSAL_COST_FACTOR)
                    .add(arg_sum),
                Known::NOTHING,
            ),
            ("contains", Some(text), [needle]) => (
                size(Some(text))
                    .factor(STRING_TRAVERSAL_COST_FACTOR)
                    .multiply(size(Some(needle)).factor(STRING_TRAVERSAL_COST_FACTOR))
                    .add(arg_sum),
                Known::NOTHING,
            ),
            ("matches" | "find" | "findAll", Some(text), [regex, ..]) => (
                regex_cost(size(Some(text)), size(Some(regex))).add(arg_sum),
                Known::NOTHING,
            ),
            ("matches", None, [text, regex]) => (
                regex_cost(size(Some(text)), size(Some(regex))).add(arg_sum),
                Known::NOTHING,
            ),
            // kube's `library/cost.go`: functions reading a whole string.
            (
                "lowerAscii" | "upperAscii" | "trim" | "url" | "isURL" | "quantity" | "isQuantity"
                | "semver" | "isSemver" | "ip" | "isIP" | "cidr" | "isCIDR" | "quote"
                | "strings.quote" | "reverse" | "string",
                _,
                _,
            ) => {
                let read = target.as_ref().or(args.first());
                // A scalar converted (`string(self.count)`) has no length.
                let length = read.and_then(|known| known.size).unwrap_or(Range::ZERO);
                let known = Known {
                    size: Some(length),
                    schema: None,
                    input: false,
                };
                (
                    length
                        .factor(STRING_TRAVERSAL_COST_FACTOR)
                        .add(Range::fixed(1))
                        .add(arg_sum),
                    known,
                )
            }
            (
                "replace" | "split" | "substring" | "indexOf" | "lastIndexOf" | "charAt",
                Some(text),
                _,
            ) if text
                .schema
                .is_none_or(|schema| text_type(schema) == "string") =>
            {
                let length = size(Some(text));
                (
                    length
                        .factor(STRING_TRAVERSAL_COST_FACTOR)
                        .add(Range::fixed(1))
                        .add(arg_sum),
                    Known::NOTHING,
                )
            }
            // kube's list functions traverse the list.
            (
                "isSorted" | "sum" | "min" | "max" | "indexOf" | "lastIndexOf" | "join",
                Some(list),
                _,
            ) => (
                size(Some(list)).add(Range::fixed(1)).add(arg_sum),
                Known::NOTHING,
            ),
            _ => (Range::fixed(1).add(arg_sum), Known::NOTHING),
        };
        (sum.add(cost), known)
    }
}

fn text_type(schema: &Value) -> &str {
    if flag(schema, "x-kubernetes-int-or-string") {
        return "string";
    }
    text(schema, "type")
}

/// cel-go's `MatchesString` estimate: (string length + 1) × 0.1 times
/// regex length × 0.25.
fn regex_cost(text: Range, regex: Range) -> Range {
    text.add(Range::fixed(1))
        .factor(STRING_TRAVERSAL_COST_FACTOR)
        .multiply(regex.factor(REGEX_STRING_LENGTH_COST_FACTOR))
}

/// The schema of `field` in an object schema: a property, or a value of
/// its `additionalProperties`.
fn property<'s>(schema: &'s Value, field: &str) -> Option<&'s Value> {
    schema
        .get("properties")
        .and_then(|properties| properties.get(field))
        .or_else(|| element(schema).filter(|_| text(schema, "type") == "object"))
}

#[cfg(test)]
#[path = "cost_estimate_tests.rs"]
mod tests;
