//! Patch metadata from the compiled schema model of the OpenAPI
//! definitions: the Go type a key has (struct, map, slice), its patch
//! strategy and merge key, as `PatchMetaFromStruct` reads them from struct
//! tags upstream.

use super::*;
use crate::schema::{Model, Node, NodeId, Reference, SchemaType};

/// The Go type of the object being patched, as the compiled schema model
/// (`crate::schema`) describes it: the root definition's node, `$ref`s
/// already resolved to node ids.
#[derive(Debug, Clone, Copy)]
pub struct SchemaContext<'a> {
    model: &'a Model,
    pub(super) root: GoType<'a>,
}

impl<'a> SchemaContext<'a> {
    /// The context of a built-in kind; `None` when no definition carries that GVK.
    pub fn for_kind(
        _openapi: &'a OpenApi,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let model = crate::schema::builtin()?;
        let Some((name, id)) = model.kind_entry(group, version, kind) else {
            return Ok(None);
        };
        // The Go type of a kind is named after the kind.
        let context = SchemaContext {
            model,
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(name, model.node(id)),
            ..context
        }))
    }

    /// The context of a definition by OpenAPI name (`io.k8s.api.core.v1.PodSpec`).
    pub fn for_definition(
        _openapi: &'a OpenApi,
        name: &'a str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let model = crate::schema::builtin()?;
        let Some(id) = model.definition(name) else {
            return Ok(None);
        };
        let context = SchemaContext {
            model,
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(short_name(name), model.node(id)),
            ..context
        }))
    }

    /// No schema at all: every field is looked up successfully with no patch
    /// strategy, so objects merge key by key and lists are replaced (JSON merge
    /// patch semantics), directives still apply.
    pub fn schemaless() -> SchemaContext<'static> {
        SchemaContext {
            model: Model::empty(),
            root: GoType::Unknown,
        }
    }

    /// The Go type a definition stands for: a struct (named after the definition's
    /// last segment) unless it is a list or a map.
    pub(super) fn named(&self, name: &'a str, node: &'a Node) -> GoType<'a> {
        if node.properties.is_some() {
            return GoType::Struct {
                name,
                fields: Some(node),
            };
        }
        match node.schema_type {
            Some(SchemaType::Array) => GoType::Slice { items: node.items },
            Some(SchemaType::Object) if node.has_additional_properties => GoType::Map,
            // Quantity, Time, IntOrString, RawExtension, JSON, FieldsV1...: Go structs
            // with no JSON fields of their own.
            _ => GoType::Struct { name, fields: None },
        }
    }

    /// The Go type of a property or item schema.
    pub(super) fn resolve(&self, id: NodeId) -> GoType<'a> {
        let model = self.model;
        let node = model.node(id);
        match node.reference {
            Some(Reference::Node(target)) => {
                let name = model.definition_name(target).unwrap_or("");
                return self.named(short_name(name), model.node(target));
            }
            Some(Reference::Missing) => return GoType::Unknown,
            None => {}
        }
        let format = node.format.as_deref();
        match node.schema_type {
            Some(SchemaType::Array) => GoType::Slice { items: node.items },
            Some(SchemaType::Object) => match node.properties {
                Some(_) => GoType::Struct {
                    name: "",
                    fields: Some(node),
                },
                None if node.has_additional_properties => GoType::Map,
                None => GoType::Unknown,
            },
            Some(SchemaType::String) if format == Some("byte") => GoType::Bytes,
            Some(SchemaType::String) => GoType::Scalar("string"),
            Some(SchemaType::Integer) => GoType::Scalar(match format {
                Some("int32") => "int32",
                Some("int64") => "int64",
                _ => "int",
            }),
            Some(SchemaType::Number) => GoType::Scalar(if format == Some("float") {
                "float32"
            } else {
                "float64"
            }),
            Some(SchemaType::Boolean) => GoType::Scalar("bool"),
            _ => GoType::Unknown,
        }
    }

    /// `PatchMetaFromStruct.LookupPatchMetadataForStruct`.
    pub(super) fn lookup_struct(
        &self,
        t: GoType<'a>,
        key: &str,
    ) -> Result<(GoType<'a>, PatchMeta<'a>)> {
        match t {
            GoType::Struct { name, fields } => {
                // Exact JSON name first, then Go's case-insensitive match.
                let field = fields.and_then(|fields| {
                    fields.property(key).or_else(|| {
                        fields
                            .properties
                            .as_deref()
                            .unwrap_or(&[])
                            .iter()
                            .find(|property| go_equal_fold(&property.name, key))
                            .map(|property| property.node)
                    })
                });
                match field {
                    Some(id) => Ok((self.resolve(id), PatchMeta::of(self.model.node(id)))),
                    None => Err(StrategicPatchError::UnknownField {
                        type_name: name.to_string(),
                        field: key.to_string(),
                    }),
                }
            }
            GoType::Unknown => Ok((GoType::Unknown, PatchMeta::default())),
            other => Err(StrategicPatchError::NotStruct(other.kind())),
        }
    }

    /// `PatchMetaFromStruct.LookupPatchMetadataForSlice`: the element type.
    pub(super) fn lookup_slice(
        &self,
        t: GoType<'a>,
        key: &str,
    ) -> Result<(GoType<'a>, PatchMeta<'a>)> {
        let (field, meta) = self.lookup_struct(t, key)?;
        match field {
            GoType::Slice { items } => {
                let element = items.map_or(GoType::Unknown, |items| self.resolve(items));
                if matches!(element, GoType::Slice { .. } | GoType::Bytes) {
                    return Err(StrategicPatchError::SliceOfSlice);
                }
                Ok((element, meta))
            }
            GoType::Bytes => Ok((GoType::Scalar("uint8"), meta)),
            GoType::Unknown => Ok((GoType::Unknown, meta)),
            _ => Err(StrategicPatchError::NotSlice(t.kind())),
        }
    }
}

/// A Go type as far as strategic merge patch cares.
#[derive(Debug, Clone, Copy)]
pub(super) enum GoType<'a> {
    /// A struct: its Go name and JSON fields (`None`: no JSON fields).
    Struct {
        name: &'a str,
        fields: Option<&'a Node>,
    },
    Map,
    Slice {
        items: Option<NodeId>,
    },
    /// `[]byte` (`format: byte`), a JSON string.
    Bytes,
    Scalar(&'static str),
    /// No schema: lookups succeed with no patch metadata.
    Unknown,
}

impl GoType<'_> {
    /// `reflect.Kind.String()`.
    pub(super) fn kind(&self) -> &'static str {
        match self {
            GoType::Struct { .. } => "struct",
            GoType::Map => "map",
            GoType::Slice { .. } | GoType::Bytes => "slice",
            GoType::Scalar(kind) => kind,
            GoType::Unknown => "interface",
        }
    }
}

/// The patch strategy and merge key of one field (its struct tags).
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PatchMeta<'a> {
    pub(super) strategy: Option<&'a str>,
    pub(super) merge_key: &'a str,
}

impl<'a> PatchMeta<'a> {
    pub(super) fn of(node: &'a Node) -> Self {
        PatchMeta {
            strategy: node.patch_strategy.as_deref(),
            merge_key: node.patch_merge_key.as_deref().unwrap_or(""),
        }
    }

    /// `strings.Split(tag, ",")`, then `extractRetainKeysPatchStrategy`: the
    /// strategy other than `retainKeys`.
    pub(super) fn strategy(&self) -> Result<&'a str> {
        let strategies: Vec<&str> = self.strategy.unwrap_or("").split(',').collect();
        match strategies.as_slice() {
            [] => Ok(""),
            [single] => Ok(if *single == RETAIN_KEYS_STRATEGY {
                ""
            } else {
                single
            }),
            [first, second] if *first == RETAIN_KEYS_STRATEGY => Ok(second),
            [first, second] if *second == RETAIN_KEYS_STRATEGY => Ok(first),
            _ => Err(StrategicPatchError::UnexpectedStrategy(format!(
                "[{}]",
                strategies.join(" ")
            ))),
        }
    }
}

/// A definition's Go type name: its last dotted segment.
pub(super) fn short_name(definition: &str) -> &str {
    definition.rsplit('.').next().unwrap_or(definition)
}
