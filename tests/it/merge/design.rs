//! The original design's examples, and skills shaped as Bernstein writes
//! them, under the shipped configuration (the shipped spec, no target):
//! they merge, `show` and `validate` as Bernstein 3.23 merges them. A
//! consumer's stricter rules are its target's, never the merge's
//! (`validate --target`), so nothing here may fail for one.

use proptest::prelude::*;
use serde_json::{Value, json};

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

fn shipped(files: &[(&str, &str, &str)]) -> Sandbox {
    let sb = Sandbox::new();
    for (layer, rel, text) in files {
        sb.write(layer, rel, text);
    }
    sb
}

/// `show` succeeds, and `validate` finds no error (a name that differs
/// from its file's, or a skill only a user layer defines, is a warning,
/// which `show` prints on stderr as validate does).
fn merges(sb: &Sandbox, name: &str) -> Value {
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    let show = sb.run(&["show", name]);
    for line in show.stderr.lines() {
        assert!(
            run.stdout.contains(line),
            "show warned what validate did not: {line}"
        );
    }
    show.json_ignoring_stderr()
}

#[test]
fn per_field_override() {
    let sb = shipped(&[
        (
            "base",
            "writer.yaml",
            "description: base description\nauthor: core\ntrigger_keywords: [base-kw]\n",
        ),
        ("user", "writer.yaml", "author: me\n"),
    ]);
    let v = merges(&sb, "writer");
    assert_eq!(v["description"], "base description");
    assert_eq!(v["author"], "me");
    assert_eq!(v["trigger_keywords"], json!(["base-kw"]));
}

#[test]
fn keyed_replace() {
    let sb = shipped(&[
        (
            "base",
            "writer.yaml",
            "references:\n  - name: style\n    url: base-style\n",
        ),
        (
            "user",
            "writer.yaml",
            "references:\n  - name: style\n    url: user-style\n  - name: extras\n    url: user-extras\n",
        ),
    ]);
    let v = merges(&sb, "writer");
    assert_eq!(
        v["references"],
        json!([{"name": "style", "url": "user-style"}, {"name": "extras", "url": "user-extras"}])
    );
}

#[test]
fn deep_merge() {
    let sb = shipped(&[
        (
            "base",
            "writer.yaml",
            "metadata:\n  limits:\n    max_tokens: 1000\n    temperature: 0.2\n",
        ),
        (
            "user",
            "writer.yaml",
            "metadata:\n  limits:\n    max_tokens: 2000\n",
        ),
    ]);
    let v = merges(&sb, "writer");
    assert_eq!(
        v["metadata"]["limits"],
        json!({"max_tokens": 2000, "temperature": 0.2})
    );
}

#[test]
fn missing_layers_fall_through() {
    for layers in [&["base"][..], &["user"], &["team", "user"], &["team"]] {
        let sb = Sandbox::new();
        for (i, l) in layers.iter().enumerate() {
            sb.write(l, "writer.yaml", format!("version: \"{i}\"\nauthor: {l}\n"));
        }
        let v = merges(&sb, "writer");
        assert_eq!(v["author"], *layers.last().unwrap(), "{layers:?}");
        assert_eq!(v["layers_present"], json!(layers), "{layers:?}");
    }
}

#[test]
fn unknown_fields_are_rejected() {
    let sb = shipped(&[("user", "writer.yaml", "descripton: typo\n")]);
    let run = sb.run(&["show", "writer"]);
    let (line, col, _) = run.located_error("user/writer.yaml");
    assert_eq!((line, col), (1, 1));
    assert_snapshot(run.failed(), snapshot_file("design-unknown-field.stderr"));
}

#[test]
fn yaml_and_skill_md_forms_load() {
    let sb = shipped(&[
        (
            "base",
            "writer/SKILL.md",
            "---\nauthor: core\ntrigger_keywords: [prose]\n---\n# Writer\n\nDraft.\n",
        ),
        ("team", "writer.yml", "version: \"2\"\n"),
    ]);
    let v = merges(&sb, "writer");
    assert_eq!(v["body"], "# Writer\n\nDraft.");
    assert_eq!(v["version"], "2");
    assert_eq!(v["name"], "writer");
}

/// A name a layer sets that the standard would refuse (`renamed-1.090`)
/// is the skill's own business: Bernstein 3.23 merges it.
#[test]
fn a_name_a_layer_sets_is_taken_as_written() {
    let sb = shipped(&[("base", "writer.yaml", "name: renamed-1.090\n")]);
    assert_eq!(merges(&sb, "writer")["name"], "renamed-1.090");
}

/// One Bernstein-shaped fragment: any subset of Bernstein's fields, with
/// values as Bernstein skills hold them.
fn fragment() -> impl Strategy<Value = String> {
    let text = "[a-zA-Z0-9 .,:_-]{0,40}";
    (
        proptest::option::of(text),
        proptest::option::of("[a-z][a-z0-9.-]{0,15}"),
        proptest::option::of("[0-9]\\.[0-9]{1,3}"),
        proptest::option::of("[a-z]{1,10}"),
        proptest::option::of(proptest::collection::vec("[a-z]{1,8}", 0..4)),
        proptest::option::of(proptest::collection::vec(
            ("[a-z]{1,6}", "[a-z/.]{1,12}"),
            0..3,
        )),
        proptest::option::of((0u32..5000, 0u32..100)),
        proptest::option::of("[A-Za-z #\n]{0,60}"),
    )
        .prop_map(|(desc, name, version, author, kws, refs, limits, body)| {
            let mut out = String::new();
            let q = |s: &str| serde_json::to_string(s).unwrap();
            if let Some(d) = desc {
                out.push_str(&format!("description: {}\n", q(&d)));
            }
            if let Some(n) = name {
                out.push_str(&format!("name: {}\n", q(&n)));
            }
            if let Some(v) = version {
                out.push_str(&format!("version: {}\n", q(&v)));
            }
            if let Some(a) = author {
                out.push_str(&format!("author: {a}\n"));
            }
            if let Some(kws) = kws {
                out.push_str(&format!("trigger_keywords: {}\n", json!(kws)));
            }
            if let Some(refs) = refs {
                let entries: Vec<Value> = refs
                    .into_iter()
                    .map(|(n, u)| json!({"name": n, "url": u}))
                    .collect();
                let mut seen = std::collections::BTreeSet::new();
                let entries: Vec<Value> = entries
                    .into_iter()
                    .filter(|e| seen.insert(e["name"].to_string()))
                    .collect();
                out.push_str(&format!("references: {}\n", Value::Array(entries)));
            }
            if let Some((max, t)) = limits {
                out.push_str(&format!(
                    "metadata: {{limits: {{max_tokens: {max}, temperature: 0.{t}}}}}\n"
                ));
            }
            if let Some(b) = body {
                out.push_str(&format!("body: {}\n", q(&b)));
            }
            out
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    /// 200 random Bernstein skills over three layers: every one merges,
    /// shows and validates under the shipped configuration.
    #[test]
    fn random_bernstein_skills_merge_show_and_validate(
        base in proptest::option::of(fragment()),
        team in proptest::option::of(fragment()),
        user in proptest::option::of(fragment()),
    ) {
        let sb = Sandbox::new();
        let mut any = false;
        for (layer, text) in [("base", base), ("team", team), ("user", user)] {
            if let Some(text) = text {
                sb.write(layer, "skill.yaml", text);
                any = true;
            }
        }
        prop_assume!(any);
        let skills = sb.skills();
        let report = skills.validate(None, 1);
        prop_assert_eq!(report.errors(), 0, "{:?}", report.diagnostics);
        let resolved = skills.resolve("skill");
        prop_assert!(resolved.is_ok(), "{:?}", resolved.err());
    }
}
