//! Patch metadata from the OpenAPI definitions: the Go type a key has
//! (struct, map, slice), its patch strategy and merge key, as
//! `PatchMetaFromStruct` reads them from struct tags upstream.

use super::*;

/// The Go type of the object being patched, as OpenAPI describes it: the
/// root definition plus `$ref` resolution through [`OpenApi::definition`].
#[derive(Debug, Clone, Copy)]
pub struct SchemaContext<'a> {
    openapi: Option<&'a OpenApi>,
    pub(super) root: GoType<'a>,
}

impl<'a> SchemaContext<'a> {
    /// The context of a built-in kind; `None` when no definition carries that GVK.
    pub fn for_kind(
        openapi: &'a OpenApi,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let Some(schema) = openapi.schema_for_kind(group, version, kind)? else {
            return Ok(None);
        };
        // The Go type of a kind is named after the kind; borrow the name from the schema.
        let name = schema
            .get("x-kubernetes-group-version-kind")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|gvk| gvk.get("kind").and_then(Value::as_str))
            .find(|name| *name == kind)
            .unwrap_or("");
        let context = SchemaContext {
            openapi: Some(openapi),
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(name, schema),
            ..context
        }))
    }

    /// The context of a definition by OpenAPI name (`io.k8s.api.core.v1.PodSpec`).
    pub fn for_definition(
        openapi: &'a OpenApi,
        name: &'a str,
    ) -> Result<Option<SchemaContext<'a>>, OpenApiError> {
        let Some(schema) = openapi.definition(name)? else {
            return Ok(None);
        };
        let context = SchemaContext {
            openapi: Some(openapi),
            root: GoType::Unknown,
        };
        Ok(Some(SchemaContext {
            root: context.named(short_name(name), schema),
            ..context
        }))
    }

    /// No schema at all: every field is looked up successfully with no patch
    /// strategy, so objects merge key by key and lists are replaced (JSON merge
    /// patch semantics), directives still apply.
    pub fn schemaless() -> SchemaContext<'static> {
        SchemaContext {
            openapi: None,
            root: GoType::Unknown,
        }
    }

    /// The Go type a definition stands for: a struct (named after the definition's
    /// last segment) unless it is a list or a map.
    pub(super) fn named(&self, name: &'a str, schema: &'a Value) -> GoType<'a> {
        if let Some(fields) = schema.get("properties").and_then(Value::as_object) {
            return GoType::Struct {
                name,
                fields: Some(fields),
            };
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => GoType::Slice {
                items: schema.get("items"),
            },
            Some("object") if schema.get("additionalProperties").is_some() => GoType::Map,
            // Quantity, Time, IntOrString, RawExtension, JSON, FieldsV1...: Go structs
            // with no JSON fields of their own.
            _ => GoType::Struct { name, fields: None },
        }
    }

    /// The Go type of a property or item schema.
    pub(super) fn resolve(&self, schema: &'a Value) -> GoType<'a> {
        if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
            let name = reference.strip_prefix(REF_PREFIX).unwrap_or(reference);
            return match self.openapi.map(|openapi| openapi.definition(name)) {
                Some(Ok(Some(definition))) => self.named(short_name(name), definition),
                _ => GoType::Unknown,
            };
        }
        let format = schema.get("format").and_then(Value::as_str);
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => GoType::Slice {
                items: schema.get("items"),
            },
            Some("object") => match schema.get("properties").and_then(Value::as_object) {
                Some(fields) => GoType::Struct {
                    name: "",
                    fields: Some(fields),
                },
                None if schema.get("additionalProperties").is_some() => GoType::Map,
                None => GoType::Unknown,
            },
            Some("string") if format == Some("byte") => GoType::Bytes,
            Some("string") => GoType::Scalar("string"),
            Some("integer") => GoType::Scalar(match format {
                Some("int32") => "int32",
                Some("int64") => "int64",
                _ => "int",
            }),
            Some("number") => GoType::Scalar(if format == Some("float") {
                "float32"
            } else {
                "float64"
            }),
            Some("boolean") => GoType::Scalar("bool"),
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
                    fields.get(key).or_else(|| {
                        fields
                            .iter()
                            .find(|(json_name, _)| go_equal_fold(json_name, key))
                            .map(|(_, schema)| schema)
                    })
                });
                match field {
                    Some(schema) => Ok((self.resolve(schema), PatchMeta::of(schema))),
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
        fields: Option<&'a Map<String, Value>>,
    },
    Map,
    Slice {
        items: Option<&'a Value>,
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
    pub(super) fn of(schema: &'a Value) -> Self {
        PatchMeta {
            strategy: schema.get(PATCH_STRATEGY_EXTENSION).and_then(Value::as_str),
            merge_key: schema
                .get(PATCH_MERGE_KEY_EXTENSION)
                .and_then(Value::as_str)
                .unwrap_or(""),
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
