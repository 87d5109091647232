//! Layer precedence (user > team > base) for every strategy, per-field
//! granularity, missing layers, `null` resets, keyed identities,
//! `layers_present`, the name default and determinism of the merge.
//!
//! These run on the classic spec ([`Sandbox::classic`]), unchanged since
//! before the spec declared constraints and required fields: a spec
//! without them still merges exactly as it did.

use serde_json::{Value, json};

use bernstein_skills::{Error, Layer};

use crate::it::support::{LAYERS, Sandbox};

/// A sandbox where each `(layer, file, text)` is written.
fn sandbox(files: &[(&str, &str, &str)]) -> Sandbox {
    let sb = Sandbox::classic();
    for (layer, rel, text) in files {
        sb.write(layer, rel, text);
    }
    sb
}

#[test]
fn override_highest_layer_that_sets_the_field_wins() {
    let all = sandbox(&[
        ("base", "s.yaml", "description: from base\n"),
        ("team", "s.yaml", "description: from team\n"),
        ("user", "s.yaml", "description: from user\n"),
    ]);
    assert_eq!(all.resolve_value("s")["description"], "from user");

    let base_team = sandbox(&[
        ("base", "s.yaml", "description: from base\n"),
        ("team", "s.yaml", "description: from team\n"),
    ]);
    assert_eq!(base_team.resolve_value("s")["description"], "from team");

    // A layer that holds the skill but not the field does not hide the one below.
    let user_silent = sandbox(&[
        ("base", "s.yaml", "description: from base\n"),
        ("team", "s.yaml", "description: from team\n"),
        ("user", "s.yaml", "author: me\n"),
    ]);
    assert_eq!(user_silent.resolve_value("s")["description"], "from team");
}

#[test]
fn append_concatenates_base_team_user_keeping_duplicates() {
    let sb = sandbox(&[
        ("base", "s.yaml", "trigger_keywords: [a, shared]\n"),
        ("team", "s.yaml", "trigger_keywords: [t]\n"),
        ("user", "s.yaml", "trigger_keywords: [shared, u]\n"),
    ]);
    assert_eq!(
        sb.resolve_value("s")["trigger_keywords"],
        json!(["a", "shared", "t", "shared", "u"])
    );
}

#[test]
fn keyed_replace_same_identity_replaced_new_appended() {
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "references:\n  - {name: style, url: base-style}\n  - {name: other, url: o}\n",
        ),
        (
            "team",
            "s.yaml",
            "references:\n  - {name: style, url: team-style}\n",
        ),
        (
            "user",
            "s.yaml",
            "references:\n  - {name: extras, url: user-extras}\n  - {name: style, url: user-style}\n",
        ),
    ]);
    assert_eq!(
        sb.resolve_value("s")["references"],
        json!([
            {"name": "style", "url": "user-style"},
            {"name": "other", "url": "o"},
            {"name": "extras", "url": "user-extras"},
        ])
    );
}

#[test]
fn deep_merge_same_path_overrides_distinct_paths_coexist() {
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "metadata:\n  limits: {max_tokens: 1000, temperature: 0.2}\n  audience: engineers\n",
        ),
        (
            "team",
            "s.yaml",
            "metadata:\n  limits: {temperature: 0.4}\n  team_only: true\n",
        ),
        (
            "user",
            "s.yaml",
            "metadata:\n  limits: {max_tokens: 2000}\n",
        ),
    ]);
    assert_eq!(
        sb.resolve_value("s")["metadata"],
        json!({
            "audience": "engineers",
            "limits": {"max_tokens": 2000, "temperature": 0.4},
            "team_only": true,
        })
    );
}

#[test]
fn deep_merge_mapping_meeting_non_mapping_higher_layer_wins() {
    let sb = sandbox(&[
        ("base", "s.yaml", "metadata: {a: {b: 1}, l: [1, 2]}\n"),
        ("user", "s.yaml", "metadata: {a: 5, l: [3]}\n"),
    ]);
    // Lists inside DEEP_MERGE are leaves: replaced, not appended.
    assert_eq!(sb.resolve_value("s")["metadata"], json!({"a": 5, "l": [3]}));
    let sb = sandbox(&[
        ("base", "s.yaml", "metadata: {a: 5}\n"),
        ("user", "s.yaml", "metadata: {a: {b: 1}}\n"),
    ]);
    assert_eq!(sb.resolve_value("s")["metadata"], json!({"a": {"b": 1}}));
}

#[test]
fn per_field_override_granularity() {
    // The design note's example: the user changes the author and nothing else.
    let sb = sandbox(&[
        (
            "base",
            "writer.yaml",
            "description: base description\nauthor: core\ntrigger_keywords: [base-kw]\n\
             references: [{name: style, url: base-style}]\nmetadata: {limits: {max_tokens: 1000}}\n",
        ),
        ("user", "writer.yaml", "author: me\n"),
    ]);
    let v = sb.resolve_value("writer");
    assert_eq!(v["author"], "me");
    assert_eq!(v["description"], "base description");
    assert_eq!(v["trigger_keywords"], json!(["base-kw"]));
    assert_eq!(
        v["references"],
        json!([{"name": "style", "url": "base-style"}])
    );
    assert_eq!(v["metadata"], json!({"limits": {"max_tokens": 1000}}));
}

/// The full effective skill for a fragment holding one value of every field.
const FULL: &str = "description: d\nauthor: a\nversion: '1'\nbody: b\n\
                    trigger_keywords: [k]\nreferences: [r.md]\nscripts: [{name: lint}]\n\
                    assets: [{id: logo}]\nmetadata: {x: 1}\n";

fn full_expected(layers: &[&str]) -> Value {
    json!({
        "assets": [{"id": "logo"}],
        "author": "a",
        "body": "b",
        "description": "d",
        "layers_present": layers,
        "metadata": {"x": 1},
        "name": "s",
        "references": ["r.md"],
        "scripts": [{"name": "lint"}],
        "trigger_keywords": ["k"],
        "version": "1",
    })
}

#[test]
fn missing_layers_fall_through_single_layer_values_returned_as_is() {
    for layer in LAYERS {
        let sb = sandbox(&[(layer, "s.yaml", FULL)]);
        assert_eq!(
            sb.resolve_value("s"),
            full_expected(&[layer]),
            "only {layer}"
        );
    }
}

#[test]
fn missing_base_layer_team_and_user_still_merge() {
    let sb = sandbox(&[
        ("team", "s.yaml", FULL),
        (
            "user",
            "s.yaml",
            "description: mine\ntrigger_keywords: [u]\n",
        ),
    ]);
    let mut expected = full_expected(&["team", "user"]);
    expected["description"] = json!("mine");
    expected["trigger_keywords"] = json!(["k", "u"]);
    assert_eq!(sb.resolve_value("s"), expected);
}

#[test]
fn skill_in_no_layer_is_not_found_naming_the_searched_directories() {
    let sb = sandbox(&[("base", "other.yaml", "")]);
    match sb.skills().resolve("s") {
        Err(Error::NotFound { name, searched, .. }) => {
            assert_eq!(name, "s");
            let expected: Vec<_> = LAYERS.iter().map(|l| sb.layer(l)).collect();
            assert_eq!(searched, expected);
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[test]
fn every_field_is_present_with_its_default_when_no_layer_sets_it() {
    let sb = sandbox(&[("base", "s.yaml", "")]);
    assert_eq!(
        sb.resolve_value("s"),
        json!({
            "assets": [],
            "author": "",
            "body": "",
            "description": "",
            "layers_present": ["base"],
            "metadata": {},
            "name": "s",
            "references": [],
            "scripts": [],
            "trigger_keywords": [],
            "version": "",
        })
    );
}

#[test]
fn name_defaults_to_the_requested_skill_name_and_a_layer_can_set_it() {
    let sb = sandbox(&[("base", "my-skill.yaml", "description: x\n")]);
    assert_eq!(sb.resolve_value("my-skill")["name"], "my-skill");
    let sb = sandbox(&[
        ("base", "my-skill.yaml", "name: Declared\n"),
        ("user", "my-skill.yaml", "description: x\n"),
    ]);
    assert_eq!(sb.resolve_value("my-skill")["name"], "Declared");
}

#[test]
fn layers_present_lists_contributing_layers_base_first() {
    let sb = sandbox(&[("user", "s.yaml", ""), ("base", "s.yaml", "")]);
    assert_eq!(
        sb.resolve_value("s")["layers_present"],
        json!(["base", "user"])
    );
    let skills = sb.skills();
    let resolved = skills.resolve("s").unwrap();
    assert_eq!(
        resolved.effective().layers_present,
        [Layer::Base, Layer::User]
    );
    // A layer holding only other skills does not count.
    sb.write("team", "unrelated.yaml", "description: u\n");
    assert_eq!(
        sb.resolve_value("s")["layers_present"],
        json!(["base", "user"])
    );
}

#[test]
fn null_resets_a_top_level_field_at_its_layer_for_every_strategy() {
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "description: base\nauthor: core\ntrigger_keywords: [b]\n\
             references: [{name: style}]\nmetadata: {a: 1}\n",
        ),
        (
            "team",
            "s.yaml",
            "description: null\nauthor: ~\ntrigger_keywords: null\nreferences: null\nmetadata: null\n",
        ),
        (
            "user",
            "s.yaml",
            "trigger_keywords: [u]\nreferences: [{name: mine}]\nmetadata: {b: 2}\n",
        ),
    ]);
    let v = sb.resolve_value("s");
    assert_eq!(v["description"], "");
    assert_eq!(v["author"], "");
    // Higher layers continue from the reset.
    assert_eq!(v["trigger_keywords"], json!(["u"]));
    assert_eq!(v["references"], json!([{"name": "mine"}]));
    assert_eq!(v["metadata"], json!({"b": 2}));
}

#[test]
fn null_reset_then_a_higher_layer_sets_the_value_again() {
    let sb = sandbox(&[
        ("base", "s.yaml", "description: base\n"),
        ("team", "s.yaml", "description: null\n"),
        ("user", "s.yaml", "description: user\n"),
    ]);
    assert_eq!(sb.resolve_value("s")["description"], "user");
}

#[test]
fn null_reset_of_the_name_field_falls_back_to_the_skill_name() {
    let sb = sandbox(&[
        ("base", "s.yaml", "name: Other\n"),
        ("user", "s.yaml", "name: null\n"),
    ]);
    assert_eq!(sb.resolve_value("s")["name"], "s");
}

#[test]
fn null_inside_metadata_deletes_the_key() {
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "metadata:\n  limits: {max_tokens: 1000, temperature: 0.2}\n  gone: 1\n",
        ),
        (
            "user",
            "s.yaml",
            "metadata:\n  limits: {temperature: null}\n  gone: null\n",
        ),
    ]);
    assert_eq!(
        sb.resolve_value("s")["metadata"],
        json!({"limits": {"max_tokens": 1000}})
    );
}

#[test]
fn keyed_name_and_id_with_the_same_value_are_different_entries() {
    let sb = sandbox(&[
        ("base", "s.yaml", "references: [{name: x, from: base}]\n"),
        ("user", "s.yaml", "references: [{id: x, from: user}]\n"),
    ]);
    assert_eq!(
        sb.resolve_value("s")["references"],
        json!([{"name": "x", "from": "base"}, {"id": "x", "from": "user"}])
    );
}

#[test]
fn keyed_string_entry_is_keyed_by_itself_under_the_first_key() {
    // A plain string in base, replaced by a mapping with that name above ...
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "references: [python-conventions.md, other.md]\n",
        ),
        (
            "user",
            "s.yaml",
            "references: [{name: python-conventions.md, url: u}]\n",
        ),
    ]);
    assert_eq!(
        sb.resolve_value("s")["references"],
        json!([{"name": "python-conventions.md", "url": "u"}, "other.md"])
    );
    // ... and a mapping replaced by the plain string.
    let sb = sandbox(&[
        ("base", "s.yaml", "references: [{name: a.md, url: b}]\n"),
        ("user", "s.yaml", "references: [a.md]\n"),
    ]);
    assert_eq!(sb.resolve_value("s")["references"], json!(["a.md"]));
    // Under a key other than the first it is a different entry.
    let sb = sandbox(&[
        ("base", "s.yaml", "references: [a.md]\n"),
        ("user", "s.yaml", "references: [{id: a.md}]\n"),
    ]);
    assert_eq!(
        sb.resolve_value("s")["references"],
        json!(["a.md", {"id": "a.md"}])
    );
}

#[test]
fn keyed_replacement_keeps_the_lower_entrys_position() {
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "scripts: [{name: a}, {name: b, v: 1}, {name: c}]\n",
        ),
        (
            "team",
            "s.yaml",
            "scripts: [{name: new}, {name: b, v: 2}]\n",
        ),
        (
            "user",
            "s.yaml",
            "scripts: [{name: c, v: 3}, {name: a, v: 4}]\n",
        ),
    ]);
    assert_eq!(
        sb.resolve_value("s")["scripts"],
        json!([{"name": "a", "v": 4}, {"name": "b", "v": 2}, {"name": "c", "v": 3}, {"name": "new"}])
    );
}

#[test]
fn keyed_identity_uses_the_first_present_key_in_rule_order() {
    // Identified by id=y: an empty name is no key, and id comes before code.
    let sb = sandbox(&[
        (
            "base",
            "s.yaml",
            "assets: [{name: '', code: z, id: y, v: 1}]\n",
        ),
        ("user", "s.yaml", "assets: [{id: y, v: 2}]\n"),
    ]);
    assert_eq!(
        sb.resolve_value("s")["assets"],
        json!([{"id": "y", "v": 2}])
    );
}

#[test]
fn merge_is_deterministic_across_runs() {
    let sb = sandbox(&[
        ("base", "s.yaml", FULL),
        (
            "team",
            "s.yaml",
            "metadata: {z: 1, a: {c: 1, b: 2}}\nreferences: [q.md]\n",
        ),
        ("user", "s.toml", "author = \"me\"\n[metadata.a]\nd = 4\n"),
    ]);
    let first = sb.resolve_json("s");
    for _ in 0..5 {
        assert_eq!(sb.resolve_json("s"), first);
    }
    let (one, two) = (sb.skills(), sb.skills());
    let (a, b) = (one.resolve("s").unwrap(), two.resolve("s").unwrap());
    assert_eq!(a.effective(), b.effective());
}

/// One layer tree written in a given order of files.
fn write_in_order(files: &[(&str, &str, &str)], order: &[usize]) -> Sandbox {
    let sb = Sandbox::classic();
    for &i in order {
        let (layer, rel, text) = files[i];
        sb.write(layer, rel, text);
    }
    sb
}

#[test]
fn merge_is_deterministic_across_on_disk_creation_order() {
    let files: [(&str, &str, &str); 8] = [
        (
            "base",
            "writer/SKILL.md",
            "---\ndescription: b\nmetadata: {m: 1, a: 2}\n---\nBody\n",
        ),
        ("base", "reviewer.yaml", "description: r\n"),
        ("base", "zeta.toml", "description = \"z\"\n"),
        (
            "team",
            "writer.yaml",
            "trigger_keywords: [t]\nmetadata: {k: {y: 1, x: 2}}\n",
        ),
        ("team", "alpha.yml", "author: t\n"),
        (
            "user",
            "writer.toml",
            "[[references]]\nname = \"r\"\n[metadata.k]\nz = 3\n",
        ),
        ("user", "reviewer.yaml", "author: u\n"),
        ("user", "alpha.yaml", "version: '2'\n"),
    ];
    let forward: Vec<usize> = (0..files.len()).collect();
    let backward: Vec<usize> = forward.iter().rev().copied().collect();
    let shuffled = [3, 7, 0, 5, 2, 6, 1, 4];
    let outputs: Vec<Vec<(String, String, String)>> = [&forward[..], &backward, &shuffled]
        .iter()
        .map(|order| {
            let sb = write_in_order(&files, order);
            let list = sb.run(&["list", "--layered", "--json"]).ok().to_owned();
            ["writer", "reviewer", "alpha", "zeta"]
                .iter()
                .map(|n| {
                    let show = sb.run(&["show", n]).ok().to_owned();
                    let per_layer = sb
                        .run(&["show", n, "--per-layer", "--json"])
                        .ok()
                        .to_owned();
                    assert_eq!(show, sb.resolve_json(n));
                    (show, per_layer, list.clone())
                })
                .collect()
        })
        .collect();
    assert_eq!(outputs[0], outputs[1], "forward vs backward creation order");
    assert_eq!(outputs[0], outputs[2], "forward vs shuffled creation order");
}
