//! What a custom resource's values are checked, defaulted and pruned with,
//! per node of its compiled model ([`NodeValues`], a side table of the
//! model's nodes filled when a CRD version's schema is compiled): nullable,
//! embedded resource, default, and kube-openapi's validations (types,
//! formats, enum, bounds, lengths, pattern (compiled once), sizes, required,
//! the logic junctors, whose schemas are nodes of the same model) and the
//! list type. `crd/value_check.rs`, `crd/schema.rs` and `crd/embedded.rs`
//! read them.

use regex::Regex;
use serde_json::Value;

use super::formats;
use super::model::{Node, NodeId, SchemaType};

/// The value facts of one node of a custom resource's model (the built-in
/// model has none: every node reads as [`NodeValues::NONE`]). 32 bytes:
/// one is kept per schema field of every CRD version, so what most nodes
/// lack is boxed.
#[derive(Debug, Clone, Default)]
pub struct NodeValues {
    /// `nullable: true`.
    pub nullable: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded_resource: bool,
    /// `additionalProperties: true`: the node that keeps any value (it
    /// preserves unknown fields and checks nothing); 0 ([`super::EMPTY`],
    /// never a layered model's own node) when absent.
    additional_any: NodeId,
    /// `default`. Boxed: most nodes have none, and a `Value` is four words.
    pub default: Option<Box<Value>>,
    /// The value checks of this node, if it has any (its type is the
    /// node's own: [`types_of`]).
    pub rules: Option<Box<ValueRules>>,
    /// `x-kubernetes-validations`, as written (their CEL programs are
    /// compiled by `crd/cel_rules.rs`, keyed by this node's id).
    /// Boxed as a `Vec` on purpose: a thin pointer keeps every node's facts
    /// at 32 bytes, and few nodes have rules.
    #[allow(clippy::box_collection)]
    validations: Option<Box<Vec<ValidationRule>>>,
}

/// One `x-kubernetes-validations` entry (`apiextensions.ValidationRule`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationRule {
    pub rule: Box<str>,
    /// `message` ("" when absent).
    pub message: Box<str>,
    /// `messageExpression` ("" when absent).
    pub message_expression: Box<str>,
    /// `reason` (`FieldValueInvalid` … ; `None`: absent).
    pub reason: Option<Box<str>>,
    /// `fieldPath` ("" when absent).
    pub field_path: Box<str>,
    /// `optionalOldSelf: true`.
    pub optional_old_self: bool,
}

impl ValidationRule {
    fn read(entry: &Value) -> Option<ValidationRule> {
        let text = |name: &str| -> Box<str> {
            entry.get(name).and_then(Value::as_str).unwrap_or("").into()
        };
        entry.as_object()?;
        Some(ValidationRule {
            rule: text("rule"),
            message: text("message"),
            message_expression: text("messageExpression"),
            reason: entry.get("reason").and_then(Value::as_str).map(Into::into),
            field_path: text("fieldPath"),
            optional_old_self: entry.get("optionalOldSelf").and_then(Value::as_bool) == Some(true),
        })
    }
}

impl NodeValues {
    /// The facts of a node that has none.
    pub const NONE: NodeValues = NodeValues {
        nullable: false,
        embedded_resource: false,
        additional_any: super::model::EMPTY,
        default: None,
        rules: None,
        validations: None,
    };

    /// `additionalProperties: true`'s node.
    pub fn additional_any(&self) -> Option<NodeId> {
        (self.additional_any != super::model::EMPTY).then_some(self.additional_any)
    }

    /// `x-kubernetes-validations` (`None`: the node has none).
    pub fn validations(&self) -> Option<&[ValidationRule]> {
        self.validations.as_deref().map(Vec::as_slice)
    }

    /// The facts of one schema object; `compile` compiles a schema it
    /// refers to (`allOf` … `not`, `additionalProperties: true`) into a
    /// node of the same model.
    pub(super) fn read(schema: &Value, compile: &mut dyn FnMut(&Value) -> NodeId) -> NodeValues {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        let additional_any = match schema.get("additionalProperties") {
            Some(Value::Bool(true)) => {
                compile(&serde_json::json!({"x-kubernetes-preserve-unknown-fields": true}))
            }
            _ => super::model::EMPTY,
        };
        NodeValues {
            nullable: flag("nullable"),
            embedded_resource: flag("x-kubernetes-embedded-resource"),
            additional_any,
            default: schema.get("default").cloned().map(Box::new),
            rules: ValueRules::compile(schema, compile),
            validations: schema
                .get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .map(|entries| {
                    entries
                        .iter()
                        .filter_map(ValidationRule::read)
                        .collect::<Vec<_>>()
                })
                .filter(|rules| !rules.is_empty())
                .map(Box::new),
        }
    }
}

/// A schema node's checks besides its type and the structure pruning and
/// defaulting read; absent on nodes that have none. Kept small (one is
/// compiled per field of every CRD version): the checks are boxed in
/// groups, allocated only when a node has one of them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValueRules {
    pub numbers: Option<Box<NumberRules>>,
    pub strings: Option<Box<StringRules>>,
    pub collections: Option<Box<CollectionRules>>,
    pub junctors: Option<Box<Junctors>>,
    /// Format, enum and list type.
    pub other: Option<Box<OtherRules>>,
}

/// The format kube keeps, the enum, the list type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct OtherRules {
    /// The format kube keeps (`formats::kept`), as written.
    pub format: Option<Box<str>>,
    pub enumeration: Option<Box<[Value]>>,
    pub list: ListType,
}

/// `type` as kube-openapi prints it for a node: "" (any), one name, or
/// `integer,string` for `x-kubernetes-int-or-string`.
pub fn types_of(node: &Node) -> &'static str {
    if node.int_or_string {
        return "integer,string";
    }
    match node.schema_type {
        Some(SchemaType::String) => "string",
        Some(SchemaType::Integer) => "integer",
        Some(SchemaType::Number) => "number",
        Some(SchemaType::Boolean) => "boolean",
        Some(SchemaType::Array) => "array",
        Some(SchemaType::Object) => "object",
        Some(SchemaType::Other) | None => "",
    }
}

/// Bounds of numbers.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NumberRules {
    pub maximum: Option<f64>,
    pub exclusive_maximum: bool,
    pub minimum: Option<f64>,
    pub exclusive_minimum: bool,
    pub multiple_of: Option<f64>,
}

/// Lengths and pattern of strings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringRules {
    pub max_length: Option<i64>,
    pub min_length: Option<i64>,
    pub pattern: Option<Pattern>,
}

/// Sizes of arrays and objects, and required properties.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CollectionRules {
    pub max_items: Option<i64>,
    pub min_items: Option<i64>,
    pub unique_items: bool,
    pub max_properties: Option<i64>,
    pub min_properties: Option<i64>,
    pub required: Vec<String>,
}

/// allOf, anyOf, oneOf, not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Junctors {
    pub all_of: Vec<NodeId>,
    pub any_of: Vec<NodeId>,
    pub one_of: Vec<NodeId>,
    pub not: Option<NodeId>,
}

static NO_NUMBERS: NumberRules = NumberRules {
    maximum: None,
    exclusive_maximum: false,
    minimum: None,
    exclusive_minimum: false,
    multiple_of: None,
};
static NO_STRINGS: StringRules = StringRules {
    max_length: None,
    min_length: None,
    pattern: None,
};
static NO_COLLECTIONS: CollectionRules = CollectionRules {
    max_items: None,
    min_items: None,
    unique_items: false,
    max_properties: None,
    min_properties: None,
    required: Vec::new(),
};
static NO_JUNCTORS: Junctors = Junctors {
    all_of: Vec::new(),
    any_of: Vec::new(),
    one_of: Vec::new(),
    not: None,
};

impl ValueRules {
    pub(crate) fn format_name(&self) -> &str {
        self.other
            .as_deref()
            .and_then(|other| other.format.as_deref())
            .unwrap_or("")
    }

    pub(crate) fn enums(&self) -> &[Value] {
        self.other
            .as_deref()
            .and_then(|other| other.enumeration.as_deref())
            .unwrap_or(&[])
    }

    /// `x-kubernetes-list-type`.
    pub fn list(&self) -> &ListType {
        static ATOMIC: ListType = ListType::Atomic;
        self.other.as_deref().map_or(&ATOMIC, |other| &other.list)
    }

    pub(crate) fn num(&self) -> &NumberRules {
        self.numbers.as_deref().unwrap_or(&NO_NUMBERS)
    }

    pub(crate) fn text(&self) -> &StringRules {
        self.strings.as_deref().unwrap_or(&NO_STRINGS)
    }

    pub(crate) fn coll(&self) -> &CollectionRules {
        self.collections.as_deref().unwrap_or(&NO_COLLECTIONS)
    }

    pub(crate) fn junct(&self) -> &Junctors {
        self.junctors.as_deref().unwrap_or(&NO_JUNCTORS)
    }
}

/// A group boxed only when it holds something.
fn boxed<T: Default + PartialEq>(group: T) -> Option<Box<T>> {
    (group != T::default()).then(|| Box::new(group))
}

/// `x-kubernetes-list-type`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum ListType {
    #[default]
    Atomic,
    Set,
    Map(Vec<String>),
}

/// A `pattern`, compiled once (Go's RE2 and Rust's `regex` share a syntax).
#[derive(Debug, Clone)]
pub struct Pattern {
    pub source: String,
    pub compiled: Result<Regex, String>,
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.source == other.source
    }
}

impl ValueRules {
    /// The checks of one schema node, or `None` when it has none.
    pub fn compile(
        schema: &Value,
        compile: &mut dyn FnMut(&Value) -> NodeId,
    ) -> Option<Box<ValueRules>> {
        let text = |name: &str| schema.get(name).and_then(Value::as_str).unwrap_or("");
        let number = |name: &str| schema.get(name).and_then(Value::as_f64);
        let int = |name: &str| schema.get(name).and_then(Value::as_i64);
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        let mut schemas = |name: &str| -> Vec<NodeId> {
            schema
                .get(name)
                .and_then(Value::as_array)
                .map(|list| list.iter().map(&mut *compile).collect())
                .unwrap_or_default()
        };
        let all_of = schemas("allOf");
        let any_of = schemas("anyOf");
        let one_of = schemas("oneOf");
        let not = schema.get("not").filter(|not| not.is_object()).map(compile);
        let types = if flag("x-kubernetes-int-or-string") {
            "integer,string"
        } else {
            match text("type") {
                "string" => "string",
                "integer" => "integer",
                "number" => "number",
                "boolean" => "boolean",
                "array" => "array",
                "object" => "object",
                _ => "",
            }
        };
        let single_type = if types.contains(',') { "" } else { types };
        let list = match text("x-kubernetes-list-type") {
            "set" => ListType::Set,
            "map" => ListType::Map(
                schema
                    .get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|keys| {
                        keys.iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListType::Atomic,
        };
        let rules = ValueRules {
            other: boxed(OtherRules {
                format: Some(formats::kept(text("format"), single_type))
                    .filter(|format| !format.is_empty())
                    .map(Into::into),
                enumeration: schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|values| !values.is_empty())
                    .map(|values| values.clone().into()),
                list,
            }),
            numbers: boxed(NumberRules {
                maximum: number("maximum"),
                exclusive_maximum: flag("exclusiveMaximum"),
                minimum: number("minimum"),
                exclusive_minimum: flag("exclusiveMinimum"),
                multiple_of: number("multipleOf"),
            }),
            strings: boxed(StringRules {
                max_length: int("maxLength"),
                min_length: int("minLength"),
                pattern: schema
                    .get("pattern")
                    .and_then(Value::as_str)
                    .map(|source| Pattern {
                        source: source.to_string(),
                        compiled: Regex::new(source).map_err(|error| error.to_string()),
                    }),
            }),
            collections: boxed(CollectionRules {
                max_items: int("maxItems"),
                min_items: int("minItems"),
                unique_items: flag("uniqueItems"),
                max_properties: int("maxProperties"),
                min_properties: int("minProperties"),
                required: schema
                    .get("required")
                    .and_then(Value::as_array)
                    .map(|names| {
                        names
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_string)
                            .collect()
                    })
                    .unwrap_or_default(),
            }),
            junctors: boxed(Junctors {
                all_of,
                any_of,
                one_of,
                not,
            }),
        };
        (rules != ValueRules::default()).then(|| Box::new(rules))
    }
}

/// The checks of a node that has none.
pub(crate) static NO_RULES: ValueRules = ValueRules {
    numbers: None,
    strings: None,
    collections: None,
    junctors: None,
    other: None,
};
