//! Parameters, headers and responses (gnostic's oneofs: `JsonReference`,
//! `BodyParameter`, the non-body parameter kinds).

use serde_json::Value;

use super::encoder::{is_extension, named_any, Encoder, Obj, PRIMITIVE_KEYS};
use super::wire::Msg;

impl Encoder {
    /// `repeated ParametersItem parameters`.
    pub(super) fn parameters_items(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("parameters") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(item) = self.object("ParametersItem", "", item) else {
                        continue;
                    };
                    let mut p = Msg::default();
                    if item.contains_key("$ref") {
                        p.message(2, self.json_reference(item));
                    } else {
                        p.message(1, self.parameter(item));
                    }
                    m.message(tag, p);
                }
            }
            Some(_) => self.reject(message, "parameters"),
        }
    }

    fn json_reference(&mut self, obj: &Obj) -> Msg {
        const M: &str = "JsonReference";
        for key in obj.keys() {
            if key != "$ref" && key != "description" {
                self.reject(M, key);
            }
        }
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        self.string_field(&mut m, 2, M, obj, "description");
        m
    }

    /// `Parameter`: oneof `body_parameter` (1) / `non_body_parameter` (2).
    fn parameter(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        let location = obj.get("in").and_then(Value::as_str).unwrap_or("");
        if location == "body" {
            const B: &str = "BodyParameter";
            self.check_keys(B, obj, &["description", "in", "name", "required", "schema"]);
            let mut b = Msg::default();
            self.string_field(&mut b, 1, B, obj, "description");
            self.string_field(&mut b, 2, B, obj, "name");
            self.string_field(&mut b, 3, B, obj, "in");
            self.bool_field(&mut b, 4, B, obj, "required");
            self.sub_message(&mut b, 5, B, obj, "schema", Self::schema);
            self.extensions(&mut b, 6, obj);
            m.message(1, b);
        } else {
            // NonBodyParameter: oneof by `in`; query and formData carry
            // `allowEmptyValue` (5), shifting the rest by one.
            let (member, name, allow_empty) = match location {
                "header" => (1, "HeaderParameterSubSchema", false),
                "formData" => (2, "FormDataParameterSubSchema", true),
                "query" => (3, "QueryParameterSubSchema", true),
                "path" => (4, "PathParameterSubSchema", false),
                _ => {
                    self.reject("NonBodyParameter", "in");
                    return m;
                }
            };
            let mut allowed = vec!["required", "in", "description", "name"];
            if allow_empty {
                allowed.push("allowEmptyValue");
            }
            allowed.extend_from_slice(PRIMITIVE_KEYS);
            self.check_keys(name, obj, &allowed);
            let mut s = Msg::default();
            self.bool_field(&mut s, 1, name, obj, "required");
            self.string_field(&mut s, 2, name, obj, "in");
            self.string_field(&mut s, 3, name, obj, "description");
            self.string_field(&mut s, 4, name, obj, "name");
            let base = if allow_empty {
                self.bool_field(&mut s, 5, name, obj, "allowEmptyValue");
                6
            } else {
                5
            };
            self.primitive_fields(&mut s, base, name, obj);
            self.extensions(&mut s, base + 17, obj);
            let mut non_body = Msg::default();
            non_body.message(member, s);
            m.message(2, non_body);
        }
        m
    }

    /// `type` .. `multipleOf` at tags `base` .. `base + 16`.
    fn primitive_fields(&mut self, m: &mut Msg, base: u32, message: &str, obj: &Obj) {
        self.string_field(m, base, message, obj, "type");
        self.string_field(m, base + 1, message, obj, "format");
        self.sub_message(m, base + 2, message, obj, "items", Self::primitives_items);
        self.string_field(m, base + 3, message, obj, "collectionFormat");
        self.any_field(m, base + 4, obj, "default");
        self.double_field(m, base + 5, message, obj, "maximum");
        self.bool_field(m, base + 6, message, obj, "exclusiveMaximum");
        self.double_field(m, base + 7, message, obj, "minimum");
        self.bool_field(m, base + 8, message, obj, "exclusiveMinimum");
        self.int_field(m, base + 9, message, obj, "maxLength");
        self.int_field(m, base + 10, message, obj, "minLength");
        self.string_field(m, base + 11, message, obj, "pattern");
        self.int_field(m, base + 12, message, obj, "maxItems");
        self.int_field(m, base + 13, message, obj, "minItems");
        self.bool_field(m, base + 14, message, obj, "uniqueItems");
        self.anys_field(m, base + 15, message, obj, "enum");
        self.double_field(m, base + 16, message, obj, "multipleOf");
    }

    fn primitives_items(&mut self, obj: &Obj) -> Msg {
        const M: &str = "PrimitivesItems";
        self.check_keys(M, obj, PRIMITIVE_KEYS);
        let mut m = Msg::default();
        self.primitive_fields(&mut m, 1, M, obj);
        self.extensions(&mut m, 18, obj);
        m
    }

    fn header(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Header";
        let mut allowed = PRIMITIVE_KEYS.to_vec();
        allowed.push("description");
        self.check_keys(M, obj, &allowed);
        let mut m = Msg::default();
        self.primitive_fields(&mut m, 1, M, obj);
        self.string_field(&mut m, 18, M, obj, "description");
        self.extensions(&mut m, 19, obj);
        m
    }

    pub(super) fn parameter_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(param) = self.object("ParameterDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.parameter(param));
            m.message(1, pair);
        }
        m
    }

    pub(super) fn response_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(response) = self.object("ResponseDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.response(response));
            m.message(1, pair);
        }
        m
    }

    pub(super) fn responses(&mut self, obj: &Obj) -> Msg {
        let is_code = |key: &str| {
            key == "default" || (key.len() == 3 && key.bytes().all(|b| b.is_ascii_digit()))
        };
        for key in obj.keys() {
            if !is_extension(key) && !is_code(key) {
                self.reject("Responses", key);
            }
        }
        let mut m = Msg::default();
        for (code, value) in obj {
            if !is_code(code) {
                continue;
            }
            let Some(response) = self.object("Responses", code, value) else {
                continue;
            };
            // ResponseValue: oneof response (1) / json_reference (2).
            let mut value = Msg::default();
            if response.contains_key("$ref") {
                value.message(2, self.json_reference(response));
            } else {
                value.message(1, self.response(response));
            }
            let mut pair = Msg::default();
            pair.string(1, code);
            pair.message(2, value);
            m.message(1, pair);
        }
        self.extensions(&mut m, 2, obj);
        m
    }

    fn response(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Response";
        self.check_keys(M, obj, &["description", "examples", "headers", "schema"]);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "description");
        self.sub_message(&mut m, 2, M, obj, "schema", |enc, schema| {
            // SchemaItem: oneof schema (1) / file_schema (2, `type: file`).
            let mut item = Msg::default();
            if schema.get("type").and_then(Value::as_str) == Some("file") {
                item.message(2, enc.file_schema(schema));
            } else {
                item.message(1, enc.schema(schema));
            }
            item
        });
        self.sub_message(&mut m, 3, M, obj, "headers", |enc, headers| {
            let mut h = Msg::default();
            for (name, value) in headers {
                let Some(header) = enc.object("Headers", name, value) else {
                    continue;
                };
                let mut pair = Msg::default();
                pair.string(1, name);
                pair.message(2, enc.header(header));
                h.message(1, pair);
            }
            h
        });
        self.sub_message(&mut m, 4, M, obj, "examples", |_, examples| {
            let mut e = Msg::default();
            for (name, value) in examples {
                e.message(1, named_any(name, value));
            }
            e
        });
        self.extensions(&mut m, 5, obj);
        m
    }
}
