//! Table tests of the checker: cases after cel-go's
//! `checker/checker_test.go` and apiextensions' `compilation_test.go`,
//! messages and positions as cel-go reports them.

use serde_json::json;

use super::{check, schema_types, Declarations, Type};

/// The result type, or the errors as `line:column: message` lines.
fn run(expression: &str, declarations: &Declarations) -> Result<String, String> {
    let (expr, info) = cel::parser::Parser::new()
        .parse_with_source_info(expression)
        .map_err(|error| format!("parse: {error}"))?;
    check(&expr, &info, declarations)
        .map(|t| t.to_string())
        .map_err(|issues| {
            issues
                .iter()
                .map(|i| format!("{}:{}: {}", i.line, i.column, i.message))
                .collect::<Vec<_>>()
                .join("\n")
        })
}

/// `self` typed from a CRD schema (a resource root when `root`).
fn with_self(schema: serde_json::Value, root: bool) -> Declarations {
    let self_type = schema_types::from_json(&schema, "selfType0", root).unwrap_or(Type::Dyn);
    Declarations::new()
        .variable("self", self_type.clone())
        .variable("oldSelf", self_type)
}

fn spec_schema() -> serde_json::Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "replicas": {"type": "integer"},
            "minReplicas": {"type": "integer"},
            "ratio": {"type": "number"},
            "enabled": {"type": "boolean"},
            "port": {"x-kubernetes-int-or-string": true},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "items": {"type": "array", "items": {
                "type": "object",
                "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}
            }},
            "created": {"type": "string", "format": "date-time"},
            "timeout": {"type": "string", "format": "duration"},
            "data": {"type": "string", "format": "byte"},
            "foo-bar": {"type": "string"},
            "namespace": {"type": "string"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
            "untyped": {"x-kubernetes-preserve-unknown-fields": true},
            "nested": {"type": "object", "properties": {"inner": {"type": "string"}}},
            "cpu": {"type": "string"}
        }
    })
}

#[test]
fn well_typed_expressions_pass_with_their_result_type() {
    let decls = with_self(spec_schema(), false);
    let cases = [
        ("self.replicas >= self.minReplicas", "bool"),
        ("self.name.startsWith('a') && size(self.name) < 10", "bool"),
        ("self.replicas + 1", "int"),
        ("self.ratio * 2.0", "double"),
        ("self.replicas < 1.5", "bool"),
        ("self.labels['a'] == 'b'", "bool"),
        ("self.labels.a", "string"),
        ("'a' in self.labels", "bool"),
        ("self.tags.all(t, t.size() > 0)", "bool"),
        ("self.tags.exists_one(t, t == 'x')", "bool"),
        ("self.items.map(i, i.name)", "list(string)"),
        (
            "self.items.filter(i, i.size > 2)",
            "list(selfType0.items.@idx)",
        ),
        ("self.items[0].size", "int"),
        ("has(self.nested.inner)", "bool"),
        ("self.port > 1 || self.port.matches('%$')", "bool"),
        ("type(self.port) == string", "bool"),
        ("self.created < timestamp('2024-01-01T00:00:00Z')", "bool"),
        ("self.timeout > duration('1s')", "bool"),
        ("size(self.data)", "int"),
        ("self.foo__dash__bar", "string"),
        ("self.__namespace__", "string"),
        ("quantity(self.cpu).isLessThan(quantity('2'))", "bool"),
        ("isQuantity(self.cpu) ? 1 : 2", "int"),
        ("self.name.split(',').size()", "int"),
        ("self.tags.isSorted() && self.tags.indexOf('a') > 0", "bool"),
        ("self.name.find('[0-9]+') != ''", "bool"),
        (
            "ip(self.name).family() == 4 && cidr('10.0.0.0/8').containsIP(self.name)",
            "bool",
        ),
        ("[1, 2, 3].sum()", "int"),
        ("[]", "list(dyn)"),
        ("{'a': 1}", "map(string, int)"),
        ("self.nested == oldSelf.nested", "bool"),
        ("self.nested != null", "bool"),
        ("dyn(self.replicas) == 1.0", "bool"),
        ("self.tags + ['x']", "list(string)"),
        ("string(self.replicas) + 'x'", "string"),
        ("self.name.lowerAscii().trim() == 'a'", "bool"),
        ("self.created.getFullYear() > 2000", "bool"),
        ("url(self.name).getHost() == 'x'", "bool"),
        ("semver(self.name).major() == 1", "bool"),
        (
            "format.dns1123Label().validate(self.name).hasValue()",
            "bool",
        ),
        ("sets.contains(self.tags, ['a'])", "bool"),
    ];
    for (expression, expected) in cases {
        assert_eq!(
            run(expression, &decls),
            Ok(expected.to_string()),
            "{expression}"
        );
    }
}

#[test]
fn mistyped_expressions_report_cel_gos_errors() {
    let decls = with_self(spec_schema(), false);
    let cases = [
        ("self.foo == 1", "1:5: undefined field 'foo'"),
        ("has(self.foo)", "1:4: undefined field 'foo'"),
        ("self.nested.missing", "1:12: undefined field 'missing'"),
        (
            "self.items.all(i, i.nope > 1)",
            "1:20: undefined field 'nope'",
        ),
        ("foo == 1", "1:1: undeclared reference to 'foo' (in container '')"),
        (
            "self.name.bogus()",
            "1:16: undeclared reference to 'bogus' (in container '')",
        ),
        (
            "self.name + 1",
            "1:11: found no matching overload for '_+_' applied to '(string, int)'",
        ),
        (
            "self.replicas == 'a'",
            "1:15: found no matching overload for '_==_' applied to '(int, string)'",
        ),
        (
            "self.name == null",
            "1:11: found no matching overload for '_==_' applied to '(string, null_type)'",
        ),
        (
            "self.name.contains(1)",
            "1:19: found no matching overload for 'contains' applied to 'string.(int)'",
        ),
        (
            "!self.name",
            "1:1: found no matching overload for '!_' applied to '(string)'",
        ),
        ("self.enabled && 1", "1:17: expected type 'bool' but found 'int'"),
        (
            "self.replicas.foo",
            "1:14: type 'int' does not support field selection",
        ),
        (
            "self.replicas.all(x, x > 0)",
            "1:5: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
        ),
        ("[1, 'a']", "1:5: expected type 'int' but found 'string'"),
        (
            "self.free.anything == 1",
            "1:10: undefined field 'anything'",
        ),
        ("self.untyped == 1", "1:5: undefined field 'untyped'"),
        (
            "self.foo == 1 && self.bar == 2",
            "1:5: undefined field 'foo'\n1:22: undefined field 'bar'",
        ),
    ];
    for (expression, expected) in cases {
        assert_eq!(
            run(expression, &decls),
            Err(expected.to_string()),
            "{expression}"
        );
    }
}

#[test]
fn a_resource_root_reads_kind_api_version_and_metadata_name_only() {
    let decls = with_self(
        json!({"type": "object", "properties": {"spec": {"type": "object"}}}),
        true,
    );
    assert_eq!(
        run("self.metadata.name == self.kind + self.apiVersion", &decls),
        Ok("bool".into())
    );
    assert_eq!(
        run("self.metadata.generateName", &decls),
        Ok("string".into())
    );
    assert_eq!(
        run("self.metadata.namespace == 'x'", &decls),
        Err("1:14: undefined field 'namespace'".into())
    );
}

#[test]
fn dyn_and_unknown_declarations_never_fail() {
    let decls = Declarations::new().variable("self", Type::Dyn);
    for expression in [
        "self.a.b.c == 1",
        "self.x + 1 == self.y",
        "self.items.all(i, i.name.startsWith('a'))",
        "self.l.map(x, x * 2).exists(y, y > 3)",
        "self.m.all(k, self.m[k] > 0)",
        "int(self.n) < 3",
        "cel.bind(x, self.a, x + 1) == 2",
        "self.l.all(i, v, v > i)",
        "self.l.transformList(i, v, v * 2).size() > 0",
        "math.greatest([1, 2]) == 2",
        "self.l.sortBy(e, e.name) == []",
    ] {
        assert!(run(expression, &decls).is_ok(), "{expression}");
    }
}

#[test]
fn escape_follows_kube() {
    use schema_types::escape;
    assert_eq!(escape("foo-bar").as_deref(), Some("foo__dash__bar"));
    assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
    assert_eq!(escape("a__b").as_deref(), Some("a__underscores__b"));
    assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
    assert_eq!(escape("1a"), None);
    assert_eq!(escape("a b"), None);
}

/// Cases of kube's `compilation_test.go` `TestCelCompilation`: (schema,
/// rule, optionalOldSelf, `None` for no error or a text the error holds).
#[test]
fn kubes_compilation_cases() {
    let int = json!({"type": "integer"});
    let object_o = json!({"type": "object", "properties": {
        "i": {"type": "integer"}, "b": {"type": "boolean"}, "s": {"type": "string"},
        "a": {"type": "array", "items": {"type": "integer"}},
        "o": {"type": "object", "properties": {
            "i": {"type": "integer"}, "b": {"type": "boolean"}, "s": {"type": "string"},
            "a": {"type": "array", "items": {"type": "integer"}},
            "o": {"type": "object"}}}}});
    let escaping = json!({"type": "object", "properties": {
        "namespace": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}},
        "if": {"type": "integer"},
        "self": {"type": "integer"}}});
    let cases: Vec<(serde_json::Value, &str, bool, Option<&str>)> = vec![
        (int.clone(), "self >= oldSelf.value()", true, None),
        (int.clone(), "self >= oldSelf.orValue(1)", true, None),
        (
            int.clone(),
            "oldSelf.hasValue() ? self >= oldSelf.value() : true",
            true,
            None,
        ),
        (int.clone(), "self >= oldSelf", true, Some("optional")),
        (
            int.clone(),
            "self >= oldSelf.orValue('')",
            true,
            Some("orValue"),
        ),
        (object_o.clone(), "self.i >= oldSelf.i.value()", true, None),
        (object_o.clone(), "self.s == oldSelf.s.value()", true, None),
        (object_o.clone(), "self.o == oldSelf.o.value()", true, None),
        (
            object_o.clone(),
            "self.o.o == oldSelf.o.o.value()",
            true,
            None,
        ),
        (
            object_o.clone(),
            "self.o.i >= oldSelf.o.i.orValue(1)",
            true,
            None,
        ),
        (
            object_o.clone(),
            "oldSelf.hasValue() ? self.o.i >= oldSelf.o.i.value() : true",
            true,
            None,
        ),
        (
            object_o.clone(),
            "self.o.i >= oldSelf.o.i",
            true,
            Some("optional"),
        ),
        (
            object_o.clone(),
            "self.o.i >= oldSelf.o.s.orValue(0)",
            true,
            Some("orValue"),
        ),
        (int.clone(), "self > 0", false, None),
        (int.clone(), "self >= oldSelf", false, None),
        (
            int.clone(),
            "size(self) == 10",
            false,
            Some("found no matching overload for 'size' applied to '(int)'"),
        ),
        (json!({"type": "number"}), "self > 1.0", false, None),
        (
            json!({"type": "number"}),
            "size(self) == 10",
            false,
            Some("found no matching overload"),
        ),
        (
            json!({"type": "string", "format": "byte"}),
            "string(self).endsWith('s')",
            false,
            None,
        ),
        (json!({"type": "boolean"}), "self == true", false, None),
        (
            json!({"type": "object", "additionalProperties": {"type": "boolean"}}),
            "size(self) > 0",
            false,
            None,
        ),
        (
            json!({"type": "array", "items": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}}}),
            "size(self[0][0]) == 10",
            false,
            None,
        ),
        (
            json!({"type": "array", "items": {"type": "object", "properties": {"nestedObj": {"type": "object", "properties": {"val": {"type": "integer", "format": "int64"}}}}}}),
            "self[0].nestedObj.val == 10",
            false,
            None,
        ),
        (
            escaping.clone(),
            "size(self.__namespace__[0]) == 10",
            false,
            None,
        ),
        (escaping.clone(), "self.__if__ == 10", false, None),
        (escaping.clone(), "self.self == 10", false, None),
        (
            escaping.clone(),
            "self == 10",
            false,
            Some("found no matching overload"),
        ),
        (
            json!({"type": "object"}),
            "fakeFunction('abc') == 'ABC'",
            false,
            Some("undeclared reference to 'fakeFunction'"),
        ),
    ];
    for (schema, rule, optional_old_self, expected) in cases {
        let self_type = schema_types::from_json(&schema, "selfType0", false).unwrap_or(Type::Dyn);
        let old_self = if optional_old_self {
            Type::optional(self_type.clone())
        } else {
            self_type.clone()
        };
        let decls = Declarations::new()
            .variable("self", self_type)
            .variable("oldSelf", old_self);
        let got = run(rule, &decls);
        match expected {
            None => assert!(got.is_ok(), "{rule}: {got:?}"),
            Some(text) => assert!(
                got.as_ref().is_err_and(|errors| errors.contains(text)),
                "{rule}: {got:?}"
            ),
        }
    }
}

/// Columns count code points, as cel-go's `Source` does, and lines restart
/// them.
#[test]
fn positions_count_code_points_and_lines() {
    let decls = Declarations::new();
    assert_eq!(
        run("'é€' + 1", &decls),
        Err("1:6: found no matching overload for '_+_' applied to '(string, int)'".into())
    );
    assert_eq!(
        run("true &&\n  nope", &decls),
        Err("2:3: undeclared reference to 'nope' (in container '')".into())
    );
}

/// The rules of the bench's `crd-cel-create` scenario check against its
/// Widget schema (`field<i>`: string, integer, boolean in turn).
#[test]
fn the_bench_widget_rules_are_well_typed() {
    let mut properties = serde_json::Map::new();
    for index in 0..20 {
        let schema = match index % 3 {
            0 => json!({"type": "string", "maxLength": 64}),
            1 => json!({"type": "integer", "minimum": 0}),
            _ => json!({"type": "boolean"}),
        };
        properties.insert(format!("field{index}"), schema);
    }
    properties.insert(
        "tags".into(),
        json!({"type": "array", "maxItems": 16, "items": {"type": "string", "maxLength": 64}}),
    );
    let decls = with_self(json!({"type": "object", "properties": properties}), false);
    for rule in [
        "self.field1 <= 1000000",
        "self.field0.matches('^value-[0-9]+$')",
        "self.field0 == oldSelf.field0",
        "self.tags.all(tag, tag.size() <= 32)",
        "!has(self.field3) || self.field3.size() > 0",
    ] {
        assert_eq!(run(rule, &decls), Ok("bool".into()), "{rule}");
    }
}

/// The two-variable comprehensions (`ext.TwoVarComprehensions`, in kube's
/// environment since 1.32) are checked as the comprehensions cel-go
/// expands them to: the variables typed from the range (index and element
/// of a list, key and value of a map), the result typed.
#[test]
fn two_variable_comprehensions_are_checked() {
    let decls = with_self(spec_schema(), false);
    let cases = [
        ("self.labels.all(k, v, k.size() > 0 && v != '')", "bool"),
        ("self.tags.exists(i, t, i > 0 && t == 'x')", "bool"),
        ("self.items.existsOne(i, item, item.size > 2)", "bool"),
        ("self.tags.transformList(i, t, t + 'x')", "list(string)"),
        (
            "self.tags.transformList(i, t, i > 0, t.size())",
            "list(int)",
        ),
        (
            "self.labels.transformMap(k, v, v.size())",
            "map(string, int)",
        ),
        ("self.tags.transformMap(i, t, t)", "map(int, string)"),
        (
            "self.labels.transformMapEntry(k, v, {v: k})",
            "map(string, string)",
        ),
    ];
    for (expression, expected) in cases {
        assert_eq!(
            run(expression, &decls),
            Ok(expected.to_string()),
            "{expression}"
        );
    }
    let refused = [
        (
            "self.items.all(i, item, item.nope > 1)",
            "1:29: undefined field 'nope'",
        ),
        (
            "self.replicas.all(i, v, v > 0)",
            "1:5: expression of type 'int' cannot be range of a comprehension (must be list, map, or dynamic)",
        ),
        (
            "self.labels.transformMap(k, v, k + 1)",
            "found no matching overload for '_+_' applied to '(string, int)'",
        ),
        ("self.tags.all(i, t, t.size())", "expected type 'bool' but found 'int'"),
        ("self.tags.exists(i, t, nope)", "undeclared reference to 'nope'"),
        ("self.tags.transformList(i, t, t, t)", "'_?_:_' applied to '(string"),
    ];
    for (expression, expected) in refused {
        let got = run(expression, &decls);
        assert!(
            got.as_ref().is_err_and(|errors| errors.contains(expected)),
            "{expression}: {got:?}"
        );
    }
}
