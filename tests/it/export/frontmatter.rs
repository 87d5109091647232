//! The exported frontmatter means the same to every YAML reader (the
//! hostile-layer issue): generated values that YAML 1.1 and 1.2 readers
//! are known to read differently, written by `yaml_out`, read back equal
//! by this crate's reader here, and by PyYAML and js-yaml in CI
//! (`.ci/yaml-readers/`), which runs this test with
//! `BERNSTEIN_YAML_CORPUS=FILE` to get the corpus as JSON:
//! `[{"json": {...}, "yaml": "..."}, ...]`.

use serde_json::{Map, Value, json};

use bernstein_skills::output::yaml_out;

/// Strings some reader takes for something else, or that need escaping.
fn strings() -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    // Booleans and nulls of YAML 1.1 and 1.2, in every case.
    for w in [
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~",
    ] {
        out.push(w.to_owned());
        out.push(w.to_uppercase());
        let mut c = w.chars();
        let title: String = c
            .next()
            .into_iter()
            .flat_map(char::to_uppercase)
            .chain(c)
            .collect();
        out.push(title);
        let mixed: String = w
            .chars()
            .enumerate()
            .map(|(i, c)| {
                if i % 2 == 1 {
                    c.to_ascii_uppercase()
                } else {
                    c
                }
            })
            .collect();
        out.push(mixed);
    }
    // Numbers in every YAML 1.1 and 1.2 form.
    for s in [
        "0",
        "-0",
        "1",
        "+1",
        "-1",
        "017",
        "0o17",
        "0x1F",
        "0X1f",
        "0b101",
        "1_000",
        "+685_230",
        "02472256",
        "0x_0A_74_AE",
        "0b1010_0111",
        "1:30",
        "190:20:30",
        "-1:30",
        ".5",
        "1.",
        "0.",
        "1e3",
        "1E3",
        "1.0e+3",
        "12e03",
        "6.8523015e+5",
        "685.230_15e+03",
        "685_230.15",
        "190:20:30.15",
        ".inf",
        "-.inf",
        "+.INF",
        ".Inf",
        ".NaN",
        ".nan",
        ".NAN",
        "1,000",
        "0.1",
        "1.5",
        "-2.5e-7",
        "Infinity",
        "NaN",
        "inf",
        "nan",
    ] {
        out.push(s.to_owned());
    }
    // Dates and timestamps.
    for s in [
        "2001-12-14",
        "2002-12-14",
        "2001-12-14t21:59:43.10-05:00",
        "2001-12-14 21:59:43.10 -5",
        "2001-12-15T02:59:43.1Z",
        "2001-12-15 2:59:43.10",
        "2024-1-1",
        "20:03:20",
    ] {
        out.push(s.to_owned());
    }
    // Indicators, comments, quotes, keys in values.
    for s in [
        "<<",
        "=",
        "!",
        "!!str",
        "!!int 1",
        "&a",
        "*a",
        "%TAG",
        "@",
        "`",
        "|",
        ">",
        "-",
        "- a",
        "?",
        "? a",
        ":",
        ": a",
        "a: b",
        "a:b",
        "a :b",
        "a:",
        "a #b",
        "a#b",
        "#",
        "#a",
        "'",
        "\"",
        "''",
        "\"\"",
        "'a'",
        "\"a\"",
        "a'b",
        "a\"b",
        "\\",
        "a\\nb",
        "a\\",
        "---",
        "--- a",
        "...",
        "[",
        "]",
        "{",
        "}",
        ",",
        "[a, b]",
        "{a: b}",
        "a, b",
        "a[b]",
        "a{b}",
        "a|b",
        "a>b",
        "a`b",
        "a=b",
        "a,b",
        "http://x.example/y?z=1#f",
        "Bash(git:*) Read",
        "C# and F#",
    ] {
        out.push(s.to_owned());
    }
    // Blank space and line breaks.
    for s in [
        "", " ", "  ", " a", "a ", "a  b", "\t", "a\tb", "\n", "a\nb", "a\n", "\na", "a\r\nb",
        "\r", "a\rb", "a\n\nb", " a \n b ",
    ] {
        out.push(s.to_owned());
    }
    // Controls, separators and invisible characters.
    for c in (0u32..0x20).chain(0x7f..0xa0) {
        out.push(format!("a{}b", char::from_u32(c).unwrap()));
    }
    for s in [
        "a\u{2028}b",
        "a\u{2029}b",
        "\u{2028}",
        "a\u{85}b",
        "a\u{a0}b",
        "\u{feff}a",
        "a\u{200b}b",
        "a\u{202e}b",
        "Writes docs.\u{e0001}\u{e0041}\u{e007f}",
        "\u{e0100}",
        "a\u{fffe}\u{ffff}b",
        "\u{fffd}",
        "\u{e000}",
        "\u{3164}",
        "\u{1d173}",
    ] {
        out.push(s.to_owned());
    }
    // Ordinary text in many scripts, emoji with joiners and selectors.
    for s in [
        "Extracts text and tables from PDF files.",
        "Writes docs in the team's voice.",
        "pdf-tables",
        "Apache-2.0",
        "Écrit des textes — vite ✓",
        "日本語のテキスト",
        "한국어",
        "עברית",
        "العربية",
        "e\u{301}",
        "🙂",
        "👨\u{200d}👩\u{200d}👧",
        "❤\u{fe0f}",
        "a 🙂 b",
    ] {
        out.push(s.to_owned());
    }
    out.push("x".repeat(5000));
    out.push("word ".repeat(400).trim_end().to_owned());
    out
}

/// Numbers, booleans and null.
fn scalars() -> Vec<Value> {
    let mut out = vec![json!(true), json!(false), Value::Null];
    for i in [0i64, 1, -1, 42, i64::MIN, i64::MAX] {
        out.push(json!(i));
    }
    out.push(json!(u64::MAX));
    for f in [
        0.0,
        -0.0,
        0.1,
        0.5,
        1.5,
        -2.5,
        100.0,
        1e16,
        1e300,
        -1e300,
        1e-300,
        5e-324,
        2.5e-7,
        123_456_789.123,
        f64::MAX,
        f64::MIN_POSITIVE,
    ] {
        out.push(json!(f));
    }
    out
}

/// Nested lists and mappings.
fn nested() -> Vec<Value> {
    let mut deep = json!("leaf");
    for i in 0..40 {
        deep = if i % 2 == 0 {
            json!([deep, 1])
        } else {
            json!({ "k": deep, "on": "no" })
        };
    }
    vec![
        json!([]),
        json!({}),
        json!([[]]),
        json!([{}]),
        json!([[[]]]),
        json!([1, "yes", null, 1.5, [2, ["on"]], {"a": [], "b": {}}]),
        json!({"a": {"b": [1, [2, []], {}]}, "c": [{"d": null, "e": [{"f": "1:30"}]}]}),
        json!([{"<<": {"a": 1}}, {"=": 2}]),
        json!({"__proto__": {"x": 1}, "constructor": "c"}),
        deep,
    ]
}

/// Every case: a frontmatter mapping.
fn cases() -> Vec<Map<String, Value>> {
    let mut out = Vec::new();
    let one = |k: &str, v: Value| {
        let mut m = Map::new();
        m.insert(k.to_owned(), v);
        m
    };
    for s in strings() {
        out.push(one("v", Value::String(s.clone())));
        out.push(one(&s, json!(1)));
        out.push(one("list", json!([s.clone(), s.clone()])));
        out.push(one("map", json!({ s.clone(): [s.clone()] })));
    }
    for v in scalars().into_iter().chain(nested()) {
        out.push(one("v", v.clone()));
        out.push(one("list", json!([v.clone(), [v.clone()], {"k": v}])));
    }
    // Keys too long to be implicit, in every position.
    let long = "k".repeat(1500);
    out.push(one(&long, json!("v")));
    out.push(one(&long, json!([1, 2])));
    out.push(one(&long, json!({ long.clone(): {"a": 1} })));
    out.push(one(
        "list",
        json!([{ long.clone(): 1, "b": [] }, [{ long.clone(): [] }]]),
    ));
    out.push(one(&format!("{long}: #"), json!(null)));
    // A frontmatter of many fields at once.
    let mut all = Map::new();
    for (i, s) in strings().into_iter().enumerate() {
        all.insert(format!("{s}{i}"), Value::String(s));
    }
    out.push(all);
    out
}

/// `a` and `b` are the same JSON value, number kinds and the sign of zero
/// included (`serde_json`'s `==` takes `1` for `1.0`'s unequal, but `0.0`
/// for `-0.0`'s equal).
fn same(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_f64(), y.as_f64()) {
            _ if x.is_f64() != y.is_f64() => false,
            (Some(p), Some(q)) if x.is_f64() => p.to_bits() == q.to_bits(),
            _ => x == y,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, p)| y.get(k).is_some_and(|q| same(p, q)))
        }
        _ => a == b,
    }
}

#[test]
fn every_generated_value_reads_back_the_same_with_our_reader() {
    let cases = cases();
    assert!(cases.len() > 1000, "{}", cases.len());
    let mut corpus = Vec::with_capacity(cases.len());
    for case in cases {
        let yaml = yaml_out::mapping(case.iter().map(|(k, v)| (k.as_str(), v)));
        // Nothing in it can close a SKILL.md frontmatter or a document.
        for line in yaml.lines() {
            assert!(
                line.trim_end() != "---" && line.trim_end() != "...",
                "{yaml}"
            );
        }
        // Nor anything invisible: each is escaped.
        assert!(
            !yaml
                .chars()
                .any(|c| c != '\n' && bernstein_skills::text::is_unsafe(c)),
            "{yaml:?}"
        );
        let back = bernstein_skills::fragment::parse_yaml(&yaml)
            .unwrap_or_else(|e| panic!("{e:?} reading {yaml}"))
            .unwrap_or_default();
        let want = Value::Object(case);
        assert!(same(&back, &want), "{yaml}\nread as {back}\nnot {want}");
        corpus.push(json!({"json": want, "yaml": yaml}));
    }
    // Asked for by CI, which reads the corpus with other readers.
    if let Some(path) = std::env::var_os("BERNSTEIN_YAML_CORPUS") {
        std::fs::write(path, serde_json::to_string(&corpus).unwrap()).unwrap();
    }
}

#[test]
fn plain_strings_stay_plain() {
    // What a real skill's frontmatter holds comes out as it is written.
    for s in [
        "Extracts text and tables from PDF files.",
        "Writes docs in the team's voice.",
        "pdf-tables",
        "Apache-2.0",
        "Bash(git:*) Read",
    ] {
        assert_eq!(yaml_out::string(s), s);
    }
    assert_eq!(yaml_out::string("no"), "\"no\"");
    assert_eq!(yaml_out::string("1:30"), "\"1:30\"");
}
