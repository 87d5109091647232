//! The quick walk against the compiled schema: on every generated
//! fragment, under every spec of the repository and one that uses every
//! constraint, a sure verdict of the quick walk is the compiled schema's
//! verdict, and under the shipped spec the walk is (almost) never unsure.
//! The same for patterns, one string at a time.

use std::path::Path;

use proptest::prelude::*;
use serde_json::{Map, Value, json};

use super::pattern::CharPattern;
use super::quick::{Quick, Verdict};
use crate::MergeSpec;

/// A spec with every constraint and type list, every strategy and nested
/// rules.
const CONSTRAINED: &str = "version: 2\nfields:\n  \
    name: {strategy: OVERRIDE, type: string, pattern: '^[a-z]+(-[a-z0-9]+)*$', max_length: 12}\n  \
    text: {strategy: OVERRIDE, type: string, min_length: 1, max_length: 3}\n  \
    mode: {strategy: OVERRIDE, enum: [fast, slow, 1, 2.5]}\n  \
    level: {strategy: OVERRIDE, type: integer, minimum: 1, maximum: 9}\n  \
    ratio: {strategy: OVERRIDE, type: number, minimum: -1.5, maximum: 0.5}\n  \
    tools: {strategy: OVERRIDE, type: [string, array], items: {type: string, max_length: 4}}\n  \
    tags: {strategy: APPEND, unique: true, items: {type: string, pattern: '^#\\d'}}\n  \
    steps: {strategy: KEYED_REPLACE, entries: merge}\n  \
    refs: {strategy: KEYED_REPLACE}\n  \
    metadata:\n    strategy: DEEP_MERGE\n    fields:\n      \
        owner: {strategy: OVERRIDE, type: string, pattern: '^[a-zA-Z]'}\n      \
        labels: {strategy: APPEND, items: {type: string}}\n      \
        limits:\n        strategy: DEEP_MERGE\n        fields:\n          \
            cpu: {strategy: OVERRIDE, type: integer, maximum: 64}\n";

fn specs() -> Vec<(String, MergeSpec)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut specs: Vec<(String, MergeSpec)> = [
        "spec/mergespec.yaml",
        "tests/fixtures/mergespec-classic.yaml",
        "benches/fixtures/rules-v2/mergespec.yaml",
    ]
    .iter()
    .map(|p| (p.to_string(), MergeSpec::load(&root.join(p)).unwrap()))
    .collect();
    specs.push((
        "constrained".into(),
        MergeSpec::from_str(CONSTRAINED, Path::new("constrained.yaml")).unwrap(),
    ));
    specs.push(("test spec".into(), crate::merge::tests::spec()));
    specs
}

/// Strings that sit on both sides of the specs' constraints.
fn string() -> impl Strategy<Value = String> {
    prop_oneof![
        Just(String::new()),
        "[a-z]{1,6}",
        "[a-z]{1,4}(-[a-z0-9]{1,3}){0,2}",
        "#[0-9a]{0,3}",
        "[A-Za-z_ -]{1,8}",
        "[a-zé日ー١ß\u{301}\n-]{0,5}",
        Just("replace".to_owned()),
        Just("delete".to_owned()),
        Just("fast".to_owned()),
        "\\PC{0,70}",
    ]
}

fn key(spec_keys: Vec<String>) -> impl Strategy<Value = String> {
    let known = proptest::sample::select(spec_keys);
    prop_oneof![
        6 => known,
        1 => Just("$patch".to_owned()),
        1 => prop_oneof![Just("name"), Just("id"), Just("code"), Just("value"), Just("owner"), Just("cpu")]
            .prop_map(str::to_owned),
        1 => "[a-z]{1,3}",
    ]
}

fn leaf() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        (-3i64..12).prop_map(Value::from),
        prop_oneof![
            Just(2.5),
            Just(1.0),
            Just(-1.5),
            Just(0.5),
            Just(9.0),
            Just(64.5),
            Just(1e300)
        ]
        .prop_map(Value::from),
        Just(json!(u64::MAX)),
        string().prop_map(Value::String),
    ]
}

fn value(keys: Vec<String>) -> impl Strategy<Value = Value> {
    leaf().prop_recursive(4, 48, 5, move |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key(keys.clone()), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

fn fragment(keys: Vec<String>) -> impl Strategy<Value = Value> {
    proptest::collection::vec((key(keys.clone()), value(keys)), 0..5)
        .prop_map(|kv| Value::Object(kv.into_iter().collect()))
}

#[test]
fn a_sure_quick_verdict_is_the_compiled_schemas_verdict() {
    for (label, spec) in specs() {
        let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
            cases: 600,
            failure_persistence: None,
            ..ProptestConfig::default()
        });
        let validator = super::Validator::new(&spec);
        let compiled = validator.compiled().unwrap();
        let quick: &Quick = &validator.quick;
        let keys: Vec<String> = spec.field_names().map(str::to_owned).collect();
        let unsure = std::cell::Cell::new(0u32);
        let valid = std::cell::Cell::new(0u32);
        runner
            .run(&fragment(keys), |f| {
                let expected = compiled.is_valid(&f);
                match quick.check(&f) {
                    Verdict::Unsure => unsure.set(unsure.get() + 1),
                    v => {
                        prop_assert_eq!(v == Verdict::Valid, expected, "{}: {}", label, f);
                        valid.set(valid.get() + u32::from(expected));
                    }
                }
                Ok(())
            })
            .unwrap();
        // Unsure only for numbers beyond exact comparison (u64::MAX against
        // a float bound) in the specs that have such bounds.
        let (unsure, valid) = (unsure.get(), valid.get());
        eprintln!("{label}: {valid} valid, {unsure} unsure of 600");
        assert!(unsure <= 60, "{label}: unsure {unsure} times of 600");
        assert!(valid >= 30, "{label}: only {valid} valid fragments of 600");
    }
}

#[test]
fn the_shipped_spec_is_walked_without_doubt() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let spec = MergeSpec::load(&root.join("spec/mergespec.yaml")).unwrap();
    let validator = super::Validator::new(&spec);
    assert!(validator.quick.takes_every_pattern());
    for f in [
        json!({"name": "writer", "description": "Writes.", "metadata": {"a": {"b": [1, {"c": null}]}}}),
        json!({"name": "Writer"}),
        json!({"metadata": {"$patch": "delete", "x": 1}}),
        json!({"allowed-tools": ["Read", {"$patch": "replace"}]}),
    ] {
        let verdict = validator.quick.check(&f);
        assert_ne!(verdict, Verdict::Unsure, "{f}");
        assert_eq!(
            verdict == Verdict::Valid,
            validator.compiled().unwrap().is_valid(&f),
            "{f}"
        );
    }
}

const PATTERNS: &[&str] = &[
    r"^[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+)*$",
    "^[a-z]+$",
    r"^\d{2,3}$",
    r"\s",
    r"^\w+$",
    "a|b-c",
    "^(ab)*$",
    ".",
    "^.$",
    r"[^\n]{3}",
    "^[a-c]?[^a-c]+$",
    "é",
    r"\p{Lu}",
    r"\P{Ll}-",
    r"^[^\p{Ll}\d]+$",
    r"^[\w-]{2}\.?$",
    "^$",
];

#[test]
fn a_pattern_matches_where_the_compiled_schema_matches() {
    // Each pattern compiled both ways: from its syntax tree, each class
    // item alone (the way taken first), and from its high-level form.
    let mut compiled = Vec::new();
    for p in PATTERNS {
        let schema = jsonschema::draft7::new(&json!({"type": "string", "pattern": p}))
            .unwrap_or_else(|e| panic!("{p}: {e}"));
        assert!(CharPattern::new(p).is_some(), "{p} is taken");
        let translated = jsonschema_regex::to_rust_regex(p).unwrap();
        let ast = CharPattern::from_ast(&translated).unwrap_or_else(|| panic!("{p}: tree"));
        let hir = CharPattern::from_hir(&translated).unwrap_or_else(|| panic!("{p}: hir"));
        compiled.push((p, schema, ast, hir));
    }
    let mut runner = proptest::test_runner::TestRunner::new(ProptestConfig {
        cases: 2000,
        failure_persistence: None,
        ..ProptestConfig::default()
    });
    runner
        .run(
            &"[a-dA-D0-9 \n_é日ー١ß\u{301}\u{2028}\\[\\]:.-]{0,6}",
            |s| {
                for (p, schema, ast, hir) in &compiled {
                    let expected = Some(schema.is_valid(&Value::String(s.clone())));
                    prop_assert_eq!(ast.is_match(&s), expected, "{} on {:?} (tree)", p, s);
                    prop_assert_eq!(hir.is_match(&s), expected, "{} on {:?} (hir)", p, s);
                }
                Ok(())
            },
        )
        .unwrap();
}
