//! `Schema`, `FileSchema` and `Definitions`.

use serde_json::Value;

use super::encoder::{Encoder, Obj, SCHEMA_KEYS};
use super::wire::Msg;

impl Encoder {
    pub(super) fn file_schema(&mut self, obj: &Obj) -> Msg {
        const M: &str = "FileSchema";
        self.check_keys(
            M,
            obj,
            &[
                "default",
                "description",
                "example",
                "externalDocs",
                "format",
                "readOnly",
                "required",
                "title",
                "type",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "format");
        self.string_field(&mut m, 2, M, obj, "title");
        self.string_field(&mut m, 3, M, obj, "description");
        self.any_field(&mut m, 4, obj, "default");
        self.strings_field(&mut m, 5, M, obj, "required");
        self.string_field(&mut m, 6, M, obj, "type");
        self.bool_field(&mut m, 7, M, obj, "readOnly");
        self.sub_message(&mut m, 8, M, obj, "externalDocs", Self::external_docs);
        self.any_field(&mut m, 9, obj, "example");
        self.extensions(&mut m, 10, obj);
        m
    }

    /// `Definitions` / `Properties`: `repeated NamedSchema additional_properties = 1`.
    pub(super) fn named_schemas(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(schema) = self.object("NamedSchema", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.schema(schema));
            m.message(1, pair);
        }
        m
    }

    pub(super) fn schema(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Schema";
        self.check_keys(M, obj, SCHEMA_KEYS);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        self.string_field(&mut m, 2, M, obj, "format");
        self.string_field(&mut m, 3, M, obj, "title");
        self.string_field(&mut m, 4, M, obj, "description");
        self.any_field(&mut m, 5, obj, "default");
        self.double_field(&mut m, 6, M, obj, "multipleOf");
        self.double_field(&mut m, 7, M, obj, "maximum");
        self.bool_field(&mut m, 8, M, obj, "exclusiveMaximum");
        self.double_field(&mut m, 9, M, obj, "minimum");
        self.bool_field(&mut m, 10, M, obj, "exclusiveMinimum");
        self.int_field(&mut m, 11, M, obj, "maxLength");
        self.int_field(&mut m, 12, M, obj, "minLength");
        self.string_field(&mut m, 13, M, obj, "pattern");
        self.int_field(&mut m, 14, M, obj, "maxItems");
        self.int_field(&mut m, 15, M, obj, "minItems");
        self.bool_field(&mut m, 16, M, obj, "uniqueItems");
        self.int_field(&mut m, 17, M, obj, "maxProperties");
        self.int_field(&mut m, 18, M, obj, "minProperties");
        self.strings_field(&mut m, 19, M, obj, "required");
        self.anys_field(&mut m, 20, M, obj, "enum");
        // AdditionalPropertiesItem: oneof schema (1) / boolean (2).
        match obj.get("additionalProperties") {
            None => {}
            Some(Value::Bool(allowed)) => {
                let mut item = Msg::default();
                item.oneof_bool(2, *allowed);
                m.message(21, item);
            }
            Some(Value::Object(schema)) => {
                let mut item = Msg::default();
                item.message(1, self.schema(schema));
                m.message(21, item);
            }
            Some(_) => self.reject(M, "additionalProperties"),
        }
        // TypeItem { repeated string value = 1 }: one name or a list.
        match obj.get("type") {
            None => {}
            Some(Value::String(name)) => {
                let mut item = Msg::default();
                item.repeated_string(1, name);
                m.message(22, item);
            }
            Some(Value::Array(names)) => {
                let mut item = Msg::default();
                for name in names.iter().filter_map(Value::as_str) {
                    item.repeated_string(1, name);
                }
                m.message(22, item);
            }
            Some(_) => self.reject(M, "type"),
        }
        // ItemsItem { repeated Schema schema = 1 }.
        match obj.get("items") {
            None => {}
            Some(Value::Object(schema)) => {
                let mut item = Msg::default();
                item.message(1, self.schema(schema));
                m.message(23, item);
            }
            Some(Value::Array(schemas)) => {
                let mut item = Msg::default();
                for schema in schemas {
                    if let Some(schema) = self.object(M, "items", schema) {
                        item.message(1, self.schema(schema));
                    }
                }
                m.message(23, item);
            }
            Some(_) => self.reject(M, "items"),
        }
        match obj.get("allOf") {
            None => {}
            Some(Value::Array(schemas)) => {
                for schema in schemas {
                    if let Some(schema) = self.object(M, "allOf", schema) {
                        let built = self.schema(schema);
                        m.message(24, built);
                    }
                }
            }
            Some(_) => self.reject(M, "allOf"),
        }
        self.sub_message(&mut m, 25, M, obj, "properties", Self::named_schemas);
        self.string_field(&mut m, 26, M, obj, "discriminator");
        self.bool_field(&mut m, 27, M, obj, "readOnly");
        self.sub_message(&mut m, 28, M, obj, "xml", |enc, xml| {
            const X: &str = "Xml";
            enc.check_keys(
                X,
                xml,
                &["attribute", "name", "namespace", "prefix", "wrapped"],
            );
            let mut x = Msg::default();
            enc.string_field(&mut x, 1, X, xml, "name");
            enc.string_field(&mut x, 2, X, xml, "namespace");
            enc.string_field(&mut x, 3, X, xml, "prefix");
            enc.bool_field(&mut x, 4, X, xml, "attribute");
            enc.bool_field(&mut x, 5, X, xml, "wrapped");
            enc.extensions(&mut x, 6, xml);
            x
        });
        self.sub_message(&mut m, 29, M, obj, "externalDocs", Self::external_docs);
        self.any_field(&mut m, 30, obj, "example");
        self.extensions(&mut m, 31, obj);
        m
    }
}
