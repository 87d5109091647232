//! Property tests. For arbitrary valid fragments the spec-driven merge
//! agrees with an independent model of the four strategies, never fails,
//! and renders deterministically (on the classic spec, whose fields the
//! model knows); for arbitrary bytes, loading (and whatever follows it, on
//! the shipped spec with its constraints) returns a fragment or an error
//! and never panics.

use std::path::Path;

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::{Fragment, Layer, MergeSpec, Validator, merge, output::render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

use crate::it::support::{classic_spec, shipped_spec};

const SKILL: &str = "s";
const KEYS: [&str; 3] = ["name", "id", "code"];

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z]{0,6}",
        Just("é ü 漢字 🙂".to_owned()),
        Just("with \"quotes\" and \\ and\nnewline".to_owned()),
    ]
}

/// A metadata mapping up to depth 3 with small key sets so layers collide.
fn metadata(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        (0i64..4).prop_map(Value::from),
        "[xy]".prop_map(Value::from),
        Just(Value::Null),
        Just(json!([1, 2])),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let map = prop::collection::btree_map("[abc]", metadata(depth - 1), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    prop_oneof![leaf, map].boxed()
}

/// Keyed entries with identities unique within the layer.
fn keyed() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::btree_map((0usize..3, "[pqr]"), (any::<bool>(), "[0-9]{1,2}"), 0..4).prop_map(
        |m| {
            m.into_iter()
                .map(|((key, id), (as_string, payload))| {
                    if key == 0 && as_string {
                        Value::String(id)
                    } else {
                        json!({ KEYS[key]: id, "v": payload })
                    }
                })
                .collect()
        },
    )
}

/// One fragment of the shipped spec: each field absent, `null` or set.
pub(crate) fn fragment() -> impl Strategy<Value = Map<String, Value>> {
    fn maybe(s: impl Strategy<Value = Value> + 'static) -> BoxedStrategy<Option<Value>> {
        prop_oneof![3 => Just(None), 1 => Just(Some(Value::Null)), 4 => s.prop_map(Some)].boxed()
    }
    (
        maybe(text().prop_map(Value::from)),
        maybe(text().prop_map(Value::from)),
        maybe("[a-z]{1,4}".prop_map(Value::from)),
        maybe(prop::collection::vec("[a-c]", 0..4).prop_map(|v| json!(v))),
        maybe(keyed().prop_map(Value::Array)),
        maybe(keyed().prop_map(Value::Array)),
        maybe(
            prop::collection::btree_map("[abc]", metadata(2), 0..3)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ),
    )
        .prop_map(|(description, author, name, kws, refs, scripts, meta)| {
            let mut m = Map::new();
            for (k, v) in [
                ("description", description),
                ("author", author),
                ("name", name),
                ("trigger_keywords", kws),
                ("references", refs),
                ("scripts", scripts),
                ("metadata", meta),
            ] {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            }
            m
        })
}

/// The three layers, each absent or a fragment.
fn layers() -> impl Strategy<Value = [Option<Map<String, Value>>; 3]> {
    [
        prop::option::weighted(0.8, fragment()),
        prop::option::weighted(0.6, fragment()),
        prop::option::weighted(0.6, fragment()),
    ]
}

/// Loads the fragment through the YAML loader (JSON is YAML), as a file would be.
fn load(layer: Layer, fields: &Map<String, Value>) -> Fragment {
    let text = serde_json::to_string(fields).unwrap();
    let path = format!("{}/s.yaml", layer.label());
    Fragment::from_str(
        text,
        Form::Yaml,
        layer,
        Path::new(&path),
        &LoadOptions::default(),
    )
    .unwrap_or_else(|e| panic!("a generated fragment must load: {e:?}"))
}

// ---- the model: the four strategies written out directly ----

fn identity(entry: &Value) -> (String, String) {
    match entry {
        Value::String(s) => ("name".into(), s.clone()),
        Value::Object(m) => KEYS
            .iter()
            .find_map(|k| match m.get(*k) {
                Some(Value::String(s)) if !s.is_empty() => Some((k.to_string(), s.clone())),
                _ => None,
            })
            .expect("generated entries carry a key"),
        _ => unreachable!(),
    }
}

fn deep(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        match v {
            Value::Null => {
                into.remove(k);
            }
            Value::Object(sub) => {
                let mut base = match into.remove(k) {
                    Some(Value::Object(m)) => m,
                    _ => Map::new(),
                };
                deep(&mut base, sub);
                into.insert(k.clone(), Value::Object(base));
            }
            other => {
                into.insert(k.clone(), other.clone());
            }
        }
    }
}

fn model(layers: &[(Layer, Map<String, Value>)]) -> Value {
    let mut out = Map::new();
    for f in ["author", "body", "description", "version"] {
        out.insert(f.into(), json!(""));
    }
    out.insert("name".into(), json!(SKILL));
    for f in ["assets", "references", "scripts", "trigger_keywords"] {
        out.insert(f.into(), json!([]));
    }
    out.insert("metadata".into(), json!({}));
    let default_of = |f: &str| match f {
        "name" => json!(SKILL),
        "metadata" => json!({}),
        "trigger_keywords" | "references" | "scripts" | "assets" => json!([]),
        _ => json!(""),
    };
    for (_, frag) in layers {
        for (field, v) in frag {
            if v.is_null() {
                out.insert(field.clone(), default_of(field));
                continue;
            }
            let cur = out.get_mut(field).unwrap();
            match field.as_str() {
                "trigger_keywords" => cur
                    .as_array_mut()
                    .unwrap()
                    .extend(v.as_array().unwrap().iter().cloned()),
                "references" | "scripts" => {
                    let list = cur.as_array_mut().unwrap();
                    for e in v.as_array().unwrap() {
                        match list.iter().position(|x| identity(x) == identity(e)) {
                            Some(i) => list[i] = e.clone(),
                            None => list.push(e.clone()),
                        }
                    }
                }
                "metadata" => deep(cur.as_object_mut().unwrap(), v.as_object().unwrap()),
                _ => *cur = v.clone(),
            }
        }
    }
    out.insert(
        "layers_present".into(),
        Value::Array(layers.iter().map(|(l, _)| json!(l.label())).collect()),
    );
    Value::Object(out)
}

fn present(layers: &[Option<Map<String, Value>>; 3]) -> Vec<(Layer, Map<String, Value>)> {
    Layer::ALL
        .into_iter()
        .zip(layers.iter())
        .filter_map(|(l, f)| f.clone().map(|f| (l, f)))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn merge_agrees_with_the_model_of_the_four_strategies(layers in layers()) {
        let spec = classic_spec();
        let validator = Validator::new(&spec);
        let present = present(&layers);
        let fragments: Vec<Fragment> = present.iter().map(|(l, f)| load(*l, f)).collect();
        for f in &fragments {
            let problems = validator.validate(&spec, f);
            prop_assert!(problems.is_empty(), "{problems:?}");
        }
        let skill = merge(&spec, SKILL, &fragments);
        prop_assert_eq!(skill.to_value(), model(&present));
    }

    #[test]
    fn rendering_is_deterministic_and_canonical(layers in layers()) {
        let spec = classic_spec();
        let present = present(&layers);
        let a: Vec<Fragment> = present.iter().map(|(l, f)| load(*l, f)).collect();
        // The same fragments, parsed again with their keys in reverse order.
        let b: Vec<Fragment> = present
            .iter()
            .map(|(l, f)| load(*l, &f.iter().rev().map(|(k, v)| (k.clone(), v.clone())).collect()))
            .collect();
        let ja = render::to_json(&merge(&spec, SKILL, &a).to_value());
        let jb = render::to_json(&merge(&spec, SKILL, &b).to_value());
        prop_assert_eq!(&ja, &jb);
        let trailing_newline = ja.ends_with("}\n") && !ja.ends_with("\n\n");
        prop_assert!(trailing_newline);
        let reparsed: Value = serde_json::from_str(&ja).unwrap();
        prop_assert_eq!(render::to_json(&reparsed), ja);
    }

    #[test]
    fn an_empty_layer_is_neutral(layers in layers(), at in 0usize..3) {
        let spec = classic_spec();
        let mut with_empty = layers.clone();
        if with_empty[at].is_some() {
            return Ok(());
        }
        with_empty[at] = Some(Map::new());
        let load_all = |ls: &[Option<Map<String, Value>>; 3]| -> Vec<Fragment> {
            present(ls).iter().map(|(l, f)| load(*l, f)).collect()
        };
        let mut plain = merge(&spec, SKILL, &load_all(&layers)).to_value();
        let mut padded = merge(&spec, SKILL, &load_all(&with_empty)).to_value();
        // Only the list of contributing layers may differ.
        let present_with = padded["layers_present"].take();
        plain["layers_present"].take();
        prop_assert_eq!(plain, padded);
        prop_assert!(present_with.as_array().unwrap().contains(&json!(Layer::ALL[at].label())));
    }

    #[test]
    fn arbitrary_bytes_never_panic_in_any_form(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        pipeline(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn arbitrary_yaml_like_text_never_panics(tokens in prop::collection::vec(prop_oneof![
        Just("["), Just("]"), Just("{"), Just("}"), Just("- "), Just(": "), Just("\n"),
        Just("  "), Just("&a "), Just("*a"), Just("---\n"), Just("\""), Just("'"), Just("# c"),
        Just("description"), Just("metadata"), Just("references"), Just("name"), Just("1"),
        Just("null"), Just("="), Just("[[references]]\n"), Just("!tag "), Just("? "), Just(","),
    ], 0..120)) {
        pipeline(&tokens.concat());
    }
}

/// Loads `text` in every form; whatever loads is validated, and whatever
/// validates is merged and rendered. Nothing may panic.
fn pipeline(text: &str) {
    thread_local! {
        static SPEC: (MergeSpec, Validator) = {
            let spec = shipped_spec();
            let v = Validator::new(&spec);
            (spec, v)
        };
    }
    SPEC.with(|(spec, validator)| {
        let opts = LoadOptions {
            body_field: Some("body".into()),
            ..LoadOptions::default()
        };
        for form in [Form::Yaml, Form::SkillMd, Form::Toml] {
            let Ok(f) = Fragment::from_str(
                text.to_owned(),
                form,
                Layer::Team,
                Path::new("team/s"),
                &opts,
            ) else {
                continue;
            };
            if validator.validate(spec, &f).is_empty() {
                let fs = [f];
                let skill = merge(spec, SKILL, &fs);
                let _ = render::to_json(&skill.to_value());
            }
        }
    });
}
