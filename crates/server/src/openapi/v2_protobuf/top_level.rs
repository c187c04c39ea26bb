//! The `Document` message and those under it down to `Operation`: info,
//! tags, security, paths.

use serde_json::Value;

use super::encoder::{is_extension, scalar_string, Encoder, Obj};
use super::wire::Msg;

impl Encoder {
    // -- messages --------------------------------------------------------------

    pub(super) fn document(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Document";
        self.check_keys(
            M,
            obj,
            &[
                "basePath",
                "consumes",
                "definitions",
                "externalDocs",
                "host",
                "info",
                "parameters",
                "paths",
                "produces",
                "responses",
                "schemes",
                "security",
                "securityDefinitions",
                "swagger",
                "tags",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "swagger");
        self.sub_message(&mut m, 2, M, obj, "info", Self::info);
        self.string_field(&mut m, 3, M, obj, "host");
        self.string_field(&mut m, 4, M, obj, "basePath");
        self.strings_field(&mut m, 5, M, obj, "schemes");
        self.strings_field(&mut m, 6, M, obj, "consumes");
        self.strings_field(&mut m, 7, M, obj, "produces");
        self.sub_message(&mut m, 8, M, obj, "paths", Self::paths);
        self.sub_message(&mut m, 9, M, obj, "definitions", |enc, defs| {
            enc.named_schemas(defs)
        });
        self.sub_message(
            &mut m,
            10,
            M,
            obj,
            "parameters",
            Self::parameter_definitions,
        );
        self.sub_message(&mut m, 11, M, obj, "responses", Self::response_definitions);
        self.security_requirements(&mut m, 12, M, obj);
        self.sub_message(
            &mut m,
            13,
            M,
            obj,
            "securityDefinitions",
            Self::security_definitions,
        );
        self.tags(&mut m, 14, M, obj);
        self.sub_message(&mut m, 15, M, obj, "externalDocs", Self::external_docs);
        self.extensions(&mut m, 16, obj);
        m
    }

    fn info(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Info";
        self.check_keys(
            M,
            obj,
            &[
                "contact",
                "description",
                "license",
                "termsOfService",
                "title",
                "version",
            ],
        );
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "title");
        self.string_field(&mut m, 2, M, obj, "version");
        self.string_field(&mut m, 3, M, obj, "description");
        self.string_field(&mut m, 4, M, obj, "termsOfService");
        self.sub_message(&mut m, 5, M, obj, "contact", |enc, contact| {
            const C: &str = "Contact";
            enc.check_keys(C, contact, &["email", "name", "url"]);
            let mut c = Msg::default();
            enc.string_field(&mut c, 1, C, contact, "name");
            enc.string_field(&mut c, 2, C, contact, "url");
            enc.string_field(&mut c, 3, C, contact, "email");
            enc.extensions(&mut c, 4, contact);
            c
        });
        self.sub_message(&mut m, 6, M, obj, "license", |enc, license| {
            const L: &str = "License";
            enc.check_keys(L, license, &["name", "url"]);
            let mut l = Msg::default();
            enc.string_field(&mut l, 1, L, license, "name");
            enc.string_field(&mut l, 2, L, license, "url");
            enc.extensions(&mut l, 3, license);
            l
        });
        self.extensions(&mut m, 7, obj);
        m
    }

    pub(super) fn external_docs(&mut self, obj: &Obj) -> Msg {
        const M: &str = "ExternalDocs";
        self.check_keys(M, obj, &["description", "url"]);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "description");
        self.string_field(&mut m, 2, M, obj, "url");
        self.extensions(&mut m, 3, obj);
        m
    }

    fn tags(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("tags") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(item) = self.object("Tag", "", item) else {
                        continue;
                    };
                    const T: &str = "Tag";
                    self.check_keys(T, item, &["description", "externalDocs", "name"]);
                    let mut t = Msg::default();
                    self.string_field(&mut t, 1, T, item, "name");
                    self.string_field(&mut t, 2, T, item, "description");
                    self.sub_message(&mut t, 3, T, item, "externalDocs", Self::external_docs);
                    self.extensions(&mut t, 4, item);
                    m.message(tag, t);
                }
            }
            Some(_) => self.reject(message, "tags"),
        }
    }

    fn security_requirements(&mut self, m: &mut Msg, tag: u32, message: &str, obj: &Obj) {
        match obj.get("security") {
            None => {}
            Some(Value::Array(items)) => {
                for item in items {
                    let Some(requirement) = self.object("SecurityRequirement", "", item) else {
                        continue;
                    };
                    let mut r = Msg::default();
                    for (name, scopes) in requirement {
                        let mut pair = Msg::default();
                        pair.string(1, name);
                        let mut array = Msg::default();
                        if let Value::Array(scopes) = scopes {
                            for scope in scopes {
                                if let Some(text) = scalar_string(scope) {
                                    array.repeated_string(1, &text);
                                }
                            }
                        } else {
                            self.reject("SecurityRequirement", name);
                        }
                        pair.message(2, array);
                        r.message(1, pair);
                    }
                    m.message(tag, r);
                }
            }
            Some(_) => self.reject(message, "security"),
        }
    }

    fn security_definitions(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for (name, value) in obj {
            let Some(item) = self.object("SecurityDefinitions", name, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, name);
            pair.message(2, self.security_definitions_item(item));
            m.message(1, pair);
        }
        m
    }

    fn security_definitions_item(&mut self, obj: &Obj) -> Msg {
        let kind = obj.get("type").and_then(Value::as_str).unwrap_or("");
        let flow = obj.get("flow").and_then(Value::as_str).unwrap_or("");
        // (oneof member, message name, keys after `type`/`flow` in field order)
        let (member, name, fields): (u32, &str, &[&str]) = match (kind, flow) {
            ("basic", _) => (1, "BasicAuthenticationSecurity", &["description"]),
            ("apiKey", _) => (2, "ApiKeySecurity", &["name", "in", "description"]),
            ("oauth2", "implicit") => (
                3,
                "Oauth2ImplicitSecurity",
                &["scopes", "authorizationUrl", "description"],
            ),
            ("oauth2", "password") => (
                4,
                "Oauth2PasswordSecurity",
                &["scopes", "tokenUrl", "description"],
            ),
            ("oauth2", "application") => (
                5,
                "Oauth2ApplicationSecurity",
                &["scopes", "tokenUrl", "description"],
            ),
            ("oauth2", "accessCode") => (
                6,
                "Oauth2AccessCodeSecurity",
                &["scopes", "authorizationUrl", "tokenUrl", "description"],
            ),
            _ => {
                self.reject("SecurityDefinitionsItem", "type");
                return Msg::default();
            }
        };
        let oauth = kind == "oauth2";
        let mut allowed: Vec<&str> = vec!["type"];
        if oauth {
            allowed.push("flow");
        }
        allowed.extend_from_slice(fields);
        self.check_keys(name, obj, &allowed);
        let mut inner = Msg::default();
        let mut tag = 1;
        for key in allowed {
            if key == "scopes" {
                self.sub_message(&mut inner, tag, name, obj, key, |_, scopes| {
                    let mut s = Msg::default();
                    for (scope, text) in scopes {
                        let mut pair = Msg::default();
                        pair.string(1, scope);
                        pair.string(2, &scalar_string(text).unwrap_or_default());
                        s.message(1, pair);
                    }
                    s
                });
            } else {
                self.string_field(&mut inner, tag, name, obj, key);
            }
            tag += 1;
        }
        self.extensions(&mut inner, tag, obj);
        let mut m = Msg::default();
        m.message(member, inner);
        m
    }

    fn paths(&mut self, obj: &Obj) -> Msg {
        let mut m = Msg::default();
        for key in obj.keys() {
            if !is_extension(key) && !key.starts_with('/') {
                self.reject("Paths", key);
            }
        }
        self.extensions(&mut m, 1, obj);
        for (path, value) in obj {
            if !path.starts_with('/') {
                continue;
            }
            let Some(item) = self.object("Paths", path, value) else {
                continue;
            };
            let mut pair = Msg::default();
            pair.string(1, path);
            pair.message(2, self.path_item(item));
            m.message(2, pair);
        }
        m
    }

    fn path_item(&mut self, obj: &Obj) -> Msg {
        const M: &str = "PathItem";
        const METHODS: [&str; 7] = ["get", "put", "post", "delete", "options", "head", "patch"];
        let mut allowed = vec!["$ref", "parameters"];
        allowed.extend_from_slice(&METHODS);
        self.check_keys(M, obj, &allowed);
        let mut m = Msg::default();
        self.string_field(&mut m, 1, M, obj, "$ref");
        for (tag, method) in (2..).zip(METHODS) {
            self.sub_message(&mut m, tag, M, obj, method, Self::operation);
        }
        self.parameters_items(&mut m, 9, M, obj);
        self.extensions(&mut m, 10, obj);
        m
    }

    fn operation(&mut self, obj: &Obj) -> Msg {
        const M: &str = "Operation";
        self.check_keys(
            M,
            obj,
            &[
                "consumes",
                "deprecated",
                "description",
                "externalDocs",
                "operationId",
                "parameters",
                "produces",
                "responses",
                "schemes",
                "security",
                "summary",
                "tags",
            ],
        );
        let mut m = Msg::default();
        self.strings_field(&mut m, 1, M, obj, "tags");
        self.string_field(&mut m, 2, M, obj, "summary");
        self.string_field(&mut m, 3, M, obj, "description");
        self.sub_message(&mut m, 4, M, obj, "externalDocs", Self::external_docs);
        self.string_field(&mut m, 5, M, obj, "operationId");
        self.strings_field(&mut m, 6, M, obj, "produces");
        self.strings_field(&mut m, 7, M, obj, "consumes");
        self.parameters_items(&mut m, 8, M, obj);
        self.sub_message(&mut m, 9, M, obj, "responses", Self::responses);
        self.strings_field(&mut m, 10, M, obj, "schemes");
        self.bool_field(&mut m, 11, M, obj, "deprecated");
        self.security_requirements(&mut m, 12, M, obj);
        self.extensions(&mut m, 13, obj);
        m
    }
}
