//! The CEL programs of a CRD version's `x-kubernetes-validations`,
//! compiled once per CRD generation (when the registry reads the CRD) and
//! kept beside its schema model, keyed by node id: apiextensions
//! `apiserver/schema/cel/compilation.go` (`Compile`: the rule, its
//! `messageExpression`, whether it reads `oldSelf`, its normalized
//! `fieldPath`). `cel_validation.rs` evaluates them.
//!
//! The environment is `cel_env`'s: cel-rust's standard library with its
//! strings extension and `matches` (RE2 syntax through the `regex` crate),
//! plus kube's libraries ported there. The type check against the schema
//! ran at CRD validation (`cel_syntax::check_typed`), and so did the static
//! cost limits (`cel_cost.rs`); each rule keeps its estimate, by which
//! `cel_validation.rs` decides whether to count its runtime cost.

use std::sync::Arc;

use cel::{Env, Program};

use crate::schema::{Model, NodeId, ValidationRule};

/// Enough for cel-go's recursion depth (250) in a debug build: the parser
/// descends about ten rules per nesting level (as `cel_syntax.rs`).
pub(crate) const CEL_STACK_BYTES: usize = 256 * 1024 * 1024;

/// One rule, compiled.
#[derive(Debug)]
pub struct CompiledRule {
    pub spec: ValidationRule,
    /// The rule's program, or why it did not compile (cel-rust's parse
    /// errors, which CRD validation already refused: kube reports these as
    /// `rule compile error: …`).
    pub program: Result<Program, String>,
    /// `messageExpression`'s program, when it has one that compiles.
    pub message: Option<Program>,
    /// The rule reads `oldSelf`: a transition rule.
    pub uses_old_self: bool,
    /// `fieldPath` as kube's `ValidFieldPath` normalizes it (`foo.bar`,
    /// `map[key]`), "" when absent or not a path of the schema.
    pub field_path: String,
    /// The static estimate's most one evaluation of the rule costs
    /// (`cel_env::cost_estimate`, an upper bound of its actual cost);
    /// `u64::MAX` when not estimated. Over `PerCallLimit` the rule is
    /// evaluated counting its actual cost (`cel_validation.rs`).
    pub estimated_cost: u64,
}

/// The compiled rules of one version's model, by node.
#[derive(Debug, Default)]
pub struct CelRules {
    /// Sorted by node id.
    by_node: Vec<(NodeId, Box<[CompiledRule]>)>,
    /// The deepest rule or message expression's nesting depth.
    depth: usize,
}

impl CelRules {
    /// The rules of every node of `model` that has any. Parsing runs on a
    /// thread of its own with a large stack (see `cel_syntax.rs`); a panic
    /// there leaves the version without rules rather than the server
    /// without a registry.
    pub fn compile(model: &Model) -> CelRules {
        CelRules::compile_estimated(model, None)
    }

    /// [`CelRules::compile`], each rule's cost estimated from `schema`
    /// (the `openAPIV3Schema` the model was compiled from); without it, no
    /// rule is estimated and every one is evaluated counting its cost.
    pub fn compile_estimated(model: &Model, schema: Option<&serde_json::Value>) -> CelRules {
        let nodes: Vec<(NodeId, &[ValidationRule])> = model
            .own_ids()
            .filter_map(|id| Some((id, model.values(id).validations()?)))
            .collect();
        if nodes.is_empty() {
            return CelRules::default();
        }
        let compiled = std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("cel-compile".into())
                .stack_size(CEL_STACK_BYTES)
                .spawn_scoped(scope, || {
                    let mut by_node = nodes
                        .iter()
                        .map(|(id, rules)| {
                            let compiled: Box<[CompiledRule]> = rules
                                .iter()
                                .map(|rule| compile_rule(model, *id, rule))
                                .collect();
                            (*id, compiled)
                        })
                        .collect::<Vec<_>>();
                    if let Some(schema) = schema {
                        estimate_costs(model, schema, &mut by_node);
                    }
                    by_node
                })
                .ok()
                .and_then(|handle| handle.join().ok())
        });
        match compiled {
            Some(by_node) => {
                let depth = by_node
                    .iter()
                    .flat_map(|(_, rules)| rules.iter())
                    .flat_map(|rule| rule.program.as_ref().ok().into_iter().chain(&rule.message))
                    .map(|program| crate::cel_env::depth(program.expression()))
                    .max()
                    .unwrap_or(0);
                CelRules { by_node, depth }
            }
            None => {
                tracing::warn!("the CEL rules of a CRD version could not be compiled");
                CelRules::default()
            }
        }
    }

    /// The rules of node `id`.
    pub fn of(&self, id: NodeId) -> &[CompiledRule] {
        match self.by_node.binary_search_by_key(&id, |(node, _)| *node) {
            Ok(index) => &self.by_node[index].1,
            Err(_) => &[],
        }
    }

    /// The deepest expression's nesting depth: deeper than
    /// [`crate::cel_env::SHALLOW_DEPTH`] is evaluated on a thread with the
    /// parser's stack.
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Whether no node has rules.
    pub fn is_empty(&self) -> bool {
        self.by_node.is_empty()
    }
}

/// kube's CEL environment (`cel_env`), shared with webhook
/// `matchConditions` and admission policies.
pub(crate) fn env() -> &'static Arc<Env> {
    crate::cel_env::env()
}

fn compile_rule(model: &Model, id: NodeId, rule: &ValidationRule) -> CompiledRule {
    let program = env()
        .compile(&rule.rule)
        .map_err(|errors| errors.to_string());
    let uses_old_self = program
        .as_ref()
        .is_ok_and(|program| program.references().has_variable("oldSelf"));
    let message = (!rule.message_expression.is_empty())
        .then(|| env().compile(&rule.message_expression).ok())
        .flatten();
    CompiledRule {
        spec: rule.clone(),
        program,
        message,
        uses_old_self,
        field_path: normalized_field_path(model, id, &rule.field_path).unwrap_or_default(),
        estimated_cost: u64::MAX,
    }
}

/// Sets each rule's [`CompiledRule::estimated_cost`] from the schema
/// object of its node, walking the schema beside the model (properties,
/// items, additionalProperties, allOf); a node not reached keeps
/// `u64::MAX`.
fn estimate_costs(
    model: &Model,
    schema: &serde_json::Value,
    by_node: &mut [(NodeId, Box<[CompiledRule]>)],
) {
    use serde_json::Value;
    let Some(root) = model.schema_root() else {
        return;
    };
    let mut pending = vec![(root, schema)];
    let mut seen = std::collections::HashSet::new();
    while let Some((id, json)) = pending.pop() {
        if !seen.insert(id) {
            continue;
        }
        if let Ok(index) = by_node.binary_search_by_key(&id, |(node, _)| *node) {
            for rule in by_node[index].1.iter_mut() {
                if let Ok(program) = &rule.program {
                    rule.estimated_cost =
                        crate::cel_env::cost_estimate::estimate(program.expression(), json).max;
                }
            }
        }
        let node = model.node(id);
        if let Some(properties) = json.get("properties").and_then(Value::as_object) {
            for (name, property) in properties {
                if let Some(child) = node.property(name) {
                    pending.push((child, property));
                }
            }
        }
        if let (Some(items), Some(json_items)) = (node.items, json.get("items")) {
            pending.push((items, json_items));
        }
        if let Some(additional) = json.get("additionalProperties").filter(|a| a.is_object()) {
            if let Some(child) = super::schema::additional(model, id) {
                pending.push((child, additional));
            }
        }
        if let Some(all_of) = json.get("allOf").and_then(Value::as_array) {
            let ids = model
                .values(id)
                .rules
                .as_deref()
                .map(|rules| rules.junct().all_of.clone())
                .unwrap_or_default();
            pending.extend(ids.into_iter().zip(all_of));
        }
    }
}

/// `ValidFieldPath(jsonPath, schema).String()`: `.name` steps into a
/// property (or a key of `additionalProperties`), `['name']` the same with
/// any characters; `None` when the path does not name a field of the
/// schema (kube then reports at the rule's node).
pub fn normalized_field_path(model: &Model, id: NodeId, json_path: &str) -> Option<String> {
    if json_path.is_empty() {
        return None;
    }
    let mut node = id;
    let mut out = String::new();
    let mut rest = json_path;
    while !rest.is_empty() {
        let (name, next) = if let Some(after) = rest.strip_prefix("['") {
            let end = after.find("']")?;
            (unescape(&after[..end])?, &after[end + 2..])
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            if end == 0 {
                return None;
            }
            (after[..end].to_string(), &after[end..])
        } else {
            return None;
        };
        let schema = model.node(node);
        if schema.properties.is_some() {
            node = schema.property(&name)?;
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
        } else if let Some(additional) = super::schema::additional(model, node) {
            node = additional;
            out.push_str(&format!("[{name}]"));
        } else {
            return None;
        }
        rest = next;
    }
    Some(out)
}

/// `unescapeSingleQuote`.
fn unescape(text: &str) -> Option<String> {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        out.push(match chars.next()? {
            'a' => '\u{7}',
            'b' => '\u{8}',
            'f' => '\u{c}',
            'n' => '\n',
            'r' => '\r',
            't' => '\t',
            'v' => '\u{b}',
            '\'' => '\'',
            '\\' => '\\',
            _ => return None,
        });
    }
    Some(out)
}
