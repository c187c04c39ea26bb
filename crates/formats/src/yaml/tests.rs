use super::*;

use serde_json::json;

fn y2j(s: &str) -> Value {
    match yaml_to_json(s.as_bytes()) {
        Ok(v) => v,
        Err(e) => panic!("{s:?}: {e}"),
    }
}

fn err(s: &str) -> String {
    match yaml_to_json(s.as_bytes()) {
        Ok(v) => panic!("{s:?} parsed as {v}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn scalars_resolve_as_go_yaml_v2() {
    let v = y2j(concat!(
        "a: yes\nb: No\nc: on\nd: OFF\ne: y\nf: n\ng: true\nh: 'yes'\n",
        "i: ~\nj: null\nk:\nl: \"null\"\nm: 0755\nnn: 0x1F\no: 1_000\np: -0b101\n",
        "q: 1.0\nr: 1.5\ns: 1e3\nt: .5\nu: 2026-11-22T12:00:00Z\nv: 08\nw: 0o17\n",
        "x: 18446744073709551615\nyy: 9223372036854775807\nz: -9223372036854775808\n",
        "y: n\n",
        "aa: 1e400\nbb: +12\ncc: .inf_x\ndd: 1:20\nee: 12:30:45\n",
    ));
    assert_eq!(
        v,
        json!({
            "a": true, "b": false, "c": true, "d": false, "e": true, "f": false,
            "g": true, "h": "yes", "i": null, "j": null, "k": null, "l": "null",
            "m": 493, "nn": 31, "o": 1000, "p": -5, "q": 1, "r": 1.5, "s": 1000,
            "t": 0.5, "u": "2026-11-22T12:00:00Z", "v": 8, "w": 15,
            "x": 18446744073709551615u64, "yy": 9223372036854775807i64,
            // `y` and `n` are YAML 1.1 booleans, keys included.
            "true": false,
            "z": -9223372036854775807i64 - 1,
            "aa": "1e400", "bb": 12, "cc": ".inf_x", "dd": "1:20", "ee": "12:30:45",
        })
    );
}

#[test]
fn floats_become_go_json_numbers() {
    let v = y2j("a: 1e21\nb: 100.0\nc: 1.25e-7\nd: -0.0\ne: 123456789.5\n");
    assert_eq!(v["a"], json!(1e21));
    assert!(v["b"].is_u64(), "{}", v["b"]);
    assert_eq!(v["c"], json!(1.25e-7));
    assert_eq!(v["e"], json!(123456789.5));
    assert_eq!(
        err("a: .nan"),
        "error converting YAML to JSON: json: unsupported value: NaN"
    );
    assert_eq!(
        err("a: -.inf"),
        "error converting YAML to JSON: json: unsupported value: -Inf"
    );
}

#[test]
fn tags() {
    let v = y2j(
        "a: !!str 123\nb: !!int \"12\"\nc: !!float 3\nd: !!binary aGVsbG8=\ne: !foo 5\nf: ! 7\n",
    );
    assert_eq!(
        v,
        json!({"a": "123", "b": 12, "c": 3, "d": "hello", "e": "5", "f": "7"})
    );
    assert_eq!(
        err("a: !!int abc"),
        "error converting YAML to JSON: yaml: cannot decode !!str `abc` as a !!int"
    );
}

#[test]
fn non_string_keys_are_stringified() {
    let v = y2j("1: a\ntrue: b\n1.5: c\n0x10: d\n");
    assert_eq!(v, json!({"1": "a", "true": "b", "1.5": "c", "16": "d"}));
    assert!(err("~: a").starts_with(
        "error converting YAML to JSON: unsupported map key of type: %!s(<nil>), key: <nil>"
    ));
}

#[test]
fn anchors_aliases_and_merges() {
    let v = y2j(concat!(
        "base: &base {a: 1, b: 2}\n",
        "list: &l [x, z]\n",
        "copy: *l\n",
        "merged:\n  <<: *base\n  b: 3\n",
        "multi:\n  <<: [{a: first}, {a: second, c: 4}]\n",
    ));
    assert_eq!(v["copy"], json!(["x", "z"]));
    assert_eq!(v["merged"], json!({"a": 1, "b": 3}));
    assert_eq!(v["multi"], json!({"a": "first", "c": 4}));
    assert_eq!(
        err("a: &x [*x]"),
        "error converting YAML to JSON: yaml: anchor 'x' value contains itself"
    );
    assert_eq!(
        err("a: *nope"),
        "error converting YAML to JSON: yaml: unknown anchor 'nope' referenced"
    );
    assert_eq!(
        err("a: 1\n<<: 5\n"),
        "error converting YAML to JSON: yaml: map merge requires map or sequence of maps as the value"
    );
}

#[test]
fn duplicates_last_wins_and_strict_reports_lines() {
    let body = "a: 1\nb:\n  c: 1\n  c: 2\na: 3\n";
    assert_eq!(y2j(body), json!({"a": 3, "b": {"c": 2}}));
    let err = yaml_to_json_strict(body.as_bytes()).expect_err("duplicates");
    assert_eq!(
        err.to_string(),
        "error converting YAML to JSON: yaml: unmarshal errors:\n  line 4: key \"c\" already set in map\n  line 5: key \"a\" already set in map"
    );
    assert_eq!(
        yaml_duplicate_fields(body.as_bytes()),
        vec![
            "line 4: key \"c\" already set in map".to_string(),
            "line 5: key \"a\" already set in map".to_string()
        ]
    );
    assert!(yaml_duplicate_fields(b"a: 1\nb: 2\n").is_empty());
}

#[test]
fn kube_field_validation_yaml_fixture_duplicates() {
    // test/integration/apiserver/field_validation_test.go invalidBodyYAML.
    let body = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: test\n  labels:\n    app: nginx\nspec:\n  unknown1: val1\n  unknownDupe: valDupe\n  unknownDupe: valDupe2\n  paused: true\n  paused: false\n  selector:\n    matchLabels:\n      app: nginx\n  template:\n    metadata:\n      labels:\n        app: nginx\n    spec:\n      containers:\n      - name: nginx\n        image: nginx:latest\n        unknownNested: val1\n        imagePullPolicy: Always\n        imagePullPolicy: Never";
    assert_eq!(
        yaml_duplicate_fields(body.as_bytes()),
        vec![
            "line 10: key \"unknownDupe\" already set in map",
            "line 12: key \"paused\" already set in map",
            "line 26: key \"imagePullPolicy\" already set in map",
        ]
    );
}

#[test]
fn documents_and_empty_bodies() {
    assert_eq!(y2j(""), Value::Null);
    assert_eq!(y2j("# only a comment\n"), Value::Null);
    assert_eq!(y2j("---\na: 1\n---\nb: [\n"), json!({"a": 1}));
    assert_eq!(y2j("\u{feff}a: 1"), json!({"a": 1}));
    assert_eq!(
        y2j("{\"a\": [1, \"2\", true, null]}"),
        json!({"a": [1, "2", true, null]})
    );
}

#[test]
fn malformed_yaml_errors_as_go_yaml() {
    assert_eq!(
        err("a: b: c"),
        "error converting YAML to JSON: yaml: mapping values are not allowed in this context"
    );
    assert_eq!(
        err("a:\n  b: 1\n c: 2"),
        "error converting YAML to JSON: yaml: line 2: did not find expected key"
    );
    assert_eq!(
        err("a: b\n  c: d"),
        "error converting YAML to JSON: yaml: line 2: mapping values are not allowed in this context"
    );
    assert_eq!(
        err("a: [1, 2"),
        "error converting YAML to JSON: yaml: line 1: did not find expected ',' or ']'"
    );
    assert_eq!(
        err("a: \"unterminated\n"),
        "error converting YAML to JSON: yaml: line 2: found unexpected end of stream"
    );
    assert_eq!(
        err("key: @foo"),
        "error converting YAML to JSON: yaml: found character that cannot start any token"
    );
    assert_eq!(
        err("a:\n\tb: 1"),
        "error converting YAML to JSON: yaml: line 2: found character that cannot start any token"
    );
    assert_eq!(
        err("- a\nb: c"),
        "error converting YAML to JSON: yaml: line 1: did not find expected '-' indicator"
    );
    assert_eq!(
        err("a: \"\\q\""),
        "error converting YAML to JSON: yaml: found unknown escape character"
    );
    assert_eq!(
        err("a: \u{1}"),
        "error converting YAML to JSON: yaml: control characters are not allowed"
    );
    assert_eq!(
        yaml_to_json(b"a: \xff").expect_err("bad utf-8").to_string(),
        "error converting YAML to JSON: yaml: invalid leading UTF-8 octet"
    );
}

#[test]
fn alias_bomb_and_deep_nesting_fail_fast() {
    let mut bomb = String::from(
        "a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    let names = ["b", "c", "d", "e", "f", "g", "h", "i", "j"];
    let mut prev = "a";
    for name in names {
        let _ = writeln!(bomb, "{name}: &{name} [*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev},*{prev}]");
        prev = name;
    }
    assert_eq!(
        err(&bomb),
        "error converting YAML to JSON: yaml: document contains excessive aliasing"
    );
    let deep = "[".repeat(100_000);
    let message = err(&deep);
    assert!(
        message.contains(&format!("exceeded max depth of {MAX_DEPTH}")),
        "{message}"
    );
    let deep_maps = "- ".repeat(5000);
    let message = err(&deep_maps);
    assert!(
        message.contains(&format!("exceeded max depth of {MAX_DEPTH}")),
        "{message}"
    );
    let deep_block: String = (0..5000)
        .map(|i| format!("{}k:\n", " ".repeat(i)))
        .collect();
    assert!(err(&deep_block).contains("exceeded max depth"));
}

#[test]
fn deepest_accepted_nesting_fits_a_small_stack() {
    // Nearly MAX_DEPTH nested block sequences, expanded twice through an
    // alias, converted and written back on a 2 MiB (tokio-sized) stack.
    let depth = MAX_DEPTH - 10;
    let body = format!("a: &a\n{}x\nb: *a\n", "- ".repeat(depth));
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            let value = yaml_to_json(body.as_bytes()).map_err(|e| e.to_string())?;
            let text = json_to_yaml(&value);
            Ok::<usize, String>(text.len())
        })
        .expect("spawn");
    let result = handle.join().expect("no stack overflow");
    assert!(result.is_ok(), "{result:?}");
}

#[test]
fn never_panics_on_garbage() {
    let samples: &[&[u8]] = &[
        b"\xfe\xff\x00",
        b"\xff\xfe\x00\xd8",
        b"&",
        b"*",
        b"!",
        b"!<",
        b"%YAML 1.1\n%YAML 1.1\n---",
        b"? ? ? ?",
        b"- - - -",
        b"{{{{}}}}",
        b"[[[]]]",
        b"a: |\n\tb",
        b"a: >-2\n  x",
        b"'",
        b"\"\\u12\"",
        b"<<: *a",
        b"? [a]\n: b",
        b"[a]: b",
        b"{a: b}: c",
        b"\t",
        b"\r\n\r\n",
        b"---\n...\n---",
    ];
    for sample in samples {
        let _ = yaml_to_json(sample);
        let _ = yaml_to_json_strict(sample);
    }
    // A cheap deterministic fuzz over YAML punctuation.
    let alphabet = b"ab:- \n\t[]{},&*!|>'\"#%@`?<~0.";
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..20_000 {
        let len = (seed % 24) as usize;
        let mut input = Vec::with_capacity(len);
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            input.push(alphabet[(seed % alphabet.len() as u64) as usize]);
        }
        let _ = yaml_to_json(&input);
        seed = seed.wrapping_add(1);
    }
}

#[test]
fn json_to_yaml_scalars_quoting() {
    let v = json!({
        "time": "2026-11-22T12:00:00Z", "num": "123", "bool": "true", "yes": "yes",
        "empty": "", "colon": "foo: bar", "hash": "a #b", "dash": "- x", "plain": "hello world",
        "null": "null", "tilde": "~", "float": "1.5", "octal": "0755", "base60": "1:20",
        "lead": " x", "quote": "it's", "tab": "a\tb", "emoji": "😀", "unicode": "héllo",
        "star": "*x", "url": "http://x/y", "dot": ".5", "dots": "...", "n": 1, "f": 1.5,
        "t": true, "z": null, "big": 1e21, "neg": -3,
    });
    let expected = concat!(
        "base60: \"1:20\"\n",
        "big: 1e+21\n",
        "bool: \"true\"\n",
        "colon: 'foo: bar'\n",
        "dash: '- x'\n",
        "dot: \".5\"\n",
        "dots: '...'\n",
        "emoji: \"\\U0001F600\"\n",
        "empty: \"\"\n",
        "f: 1.5\n",
        "float: \"1.5\"\n",
        "hash: 'a #b'\n",
        "lead: ' x'\n",
        "\"n\": 1\n",
        "neg: -3\n",
        "\"null\": \"null\"\n",
        "num: \"123\"\n",
        "octal: \"0755\"\n",
        "plain: hello world\n",
        "quote: it's\n",
        "star: '*x'\n",
        "t: true\n",
        "tab: \"a\\tb\"\n",
        "tilde: \"~\"\n",
        "time: \"2026-11-22T12:00:00Z\"\n",
        "unicode: héllo\n",
        "url: http://x/y\n",
        "\"yes\": \"yes\"\n",
        "z: null\n",
    );
    assert_eq!(json_to_yaml(&v), expected);
}

#[test]
fn json_to_yaml_structure() {
    let v = json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}, "annotations": {}},
        "spec": {
            "replicas": 3,
            "template": {"spec": {
                "containers": [{
                    "name": "web", "image": "nginx:1.27", "args": ["-c", "echo hi"],
                    "ports": [{"containerPort": 80}], "env": [],
                }],
                "nested": [[1, 2], []],
            }},
        },
        "data": {"script": "#!/bin/sh\necho hi\n", "nochomp": "a\nb", "keep": "a\n\n", "lead": "  x\ny"},
    });
    let expected = concat!(
        "apiVersion: apps/v1\n",
        "data:\n",
        "  keep: |+\n",
        "    a\n",
        "\n",
        "  lead: |2-\n",
        "      x\n",
        "    y\n",
        "  nochomp: |-\n",
        "    a\n",
        "    b\n",
        "  script: |\n",
        "    #!/bin/sh\n",
        "    echo hi\n",
        "kind: Deployment\n",
        "metadata:\n",
        "  annotations: {}\n",
        "  labels:\n",
        "    app: web\n",
        "  name: web\n",
        "spec:\n",
        "  replicas: 3\n",
        "  template:\n",
        "    spec:\n",
        "      containers:\n",
        "      - args:\n",
        "        - -c\n",
        "        - echo hi\n",
        "        env: []\n",
        "        image: nginx:1.27\n",
        "        name: web\n",
        "        ports:\n",
        "        - containerPort: 80\n",
        "      nested:\n",
        "      - - 1\n",
        "        - 2\n",
        "      - []\n",
    );
    assert_eq!(json_to_yaml(&v), expected);
    assert_eq!(y2j(&json_to_yaml(&v)), v);
    assert_eq!(json_to_yaml(&json!({})), "{}\n");
    assert_eq!(json_to_yaml(&json!([])), "[]\n");
    assert_eq!(json_to_yaml(&json!("x")), "x\n");
    assert_eq!(json_to_yaml(&json!([{"a": 1}, "b"])), "- a: 1\n- b\n");
}

#[test]
fn json_to_yaml_key_order_and_long_strings() {
    let v = json!({"a10": 1, "a2": 2, "a-b": 3, "ab": 4, "B": 5, "a": 6});
    assert_eq!(
        json_to_yaml(&v),
        "B: 5\na: 6\na-b: 3\na2: 2\na10: 1\nab: 4\n"
    );
    let long = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value.";
    let out = json_to_yaml(&json!({"description": long}));
    assert_eq!(
        out,
        "description: APIVersion defines the versioned schema of this representation of an\n  object. Servers should convert recognized schemas to the latest internal value.\n"
    );
    assert_eq!(y2j(&out), json!({"description": long}));
    let quoted = format!("{long}: colon");
    let out = json_to_yaml(&json!({ "d": quoted }));
    assert!(out.starts_with("d: 'APIVersion"), "{out}");
    assert_eq!(y2j(&out), json!({ "d": quoted }));
}

#[test]
fn round_trips() {
    let samples = [
        json!({"a": ["x", {"b": [1, 2.5, -7, true, null]}], "c": {"d": {"e": "f"}}}),
        json!({"weird": ["", " ", "\n", "a\r\nb", "x\u{85}y", "tab\tend ", "trailing ", "\"q\"", "'", "\\"]}),
        json!({"s": "line one\nline two\n  indented\n", "k": {"multi\nline key": 1}}),
        json!({"long key": "x".repeat(200), "y".repeat(130): "long key"}),
        json!({"nums": [0, 1e-7, 123456789.5, 1e300, -0.5, 18446744073709551615u64]}),
    ];
    for v in samples {
        let text = json_to_yaml(&v);
        assert_eq!(y2j(&text), v, "{text}");
    }
}

#[test]
fn summaries() {
    assert_eq!(summarize_data(b""), "<empty>");
    assert_eq!(summarize_data(b"{\"a\":1}"), "{\"a\":1}");
    assert_eq!(summarize_data(b"a: 1"), "613a2031");
    assert_eq!(
        summarize_data(&[b'x'; 40]),
        format!("{} ...", "78".repeat(30))
    );
}
