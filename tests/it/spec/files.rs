//! The spec is data: which file is used (`--spec`, then
//! `BERNSTEIN_SKILLS_SPEC`, then the installed one, then the source tree's),
//! and editing it changes behaviour on the next run, with no rebuild.

use serde_json::json;

use crate::it::support::{Sandbox, shipped_spec_path};

/// The shipped spec with `from` replaced by `to`, written into the sandbox.
fn edited_spec(sb: &Sandbox, file: &str, edit: impl Fn(String) -> String) -> std::path::PathBuf {
    let text = std::fs::read_to_string(shipped_spec_path()).unwrap();
    let edited = edit(text.clone());
    assert_ne!(edited, text, "the edit must change the spec");
    sb.write_file(file, edited)
}

/// Replaces the `strategy:` of field `field` in a spec text.
fn set_strategy(text: String, field: &str, strategy: &str) -> String {
    let start = text
        .find(&format!("\n  {field}:"))
        .expect("field in the spec");
    let at = start + text[start..].find("strategy: ").unwrap() + "strategy: ".len();
    let end = at
        + text[at..]
            .find(|c: char| c.is_whitespace() || c == ',' || c == '}')
            .unwrap();
    format!("{}{}{}", &text[..at], strategy, &text[end..])
}

/// Replaces the first `from` inside field `field`'s entry of a spec text.
fn in_field(text: String, field: &str, from: &str, to: &str) -> String {
    let start = text
        .find(&format!("\n  {field}:"))
        .expect("field in the spec");
    let at = start + text[start..].find(from).expect("attribute in the field");
    format!("{}{to}{}", &text[..at], &text[at + from.len()..])
}

fn two_layers() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\ntrigger_keywords: [a, b]\n",
    );
    sb.write("user", "s.yaml", "trigger_keywords: [c]\n");
    sb
}

#[test]
fn changing_a_strategy_in_the_spec_changes_the_merge() {
    let sb = two_layers();
    assert_eq!(
        sb.run(&["show", "s"]).json()["trigger_keywords"],
        json!(["a", "b", "c"])
    );
    let spec = edited_spec(&sb, "spec.yaml", |t| {
        // APPEND -> OVERRIDE needs a type for the whole list.
        let t = set_strategy(t, "trigger_keywords", "OVERRIDE");
        in_field(t, "trigger_keywords", "items: string", "type: array")
    });
    let mut cmd = sb.skills_cmd(&["show", "s"]);
    cmd.arg("--spec").arg(&spec);
    let v = sb.run_cmd(cmd).json();
    assert_eq!(
        v["trigger_keywords"],
        json!(["c"]),
        "the user list replaces the base list"
    );
}

#[test]
fn flipping_append_to_override_keeps_the_list_type_its_items_imply() {
    // Only the strategy changes: the leftover `items: string` says the
    // value is a list of strings, so the field stays a list (empty by
    // default) and a string in a layer is still an error.
    let sb = two_layers();
    sb.write("base", "none.yaml", "description: d\n");
    let spec = edited_spec(&sb, "spec.yaml", |t| {
        set_strategy(t, "trigger_keywords", "OVERRIDE")
    });
    let with_spec = |args: &[&str]| {
        let mut cmd = sb.skills_cmd(args);
        cmd.arg("--spec").arg(&spec);
        sb.run_cmd(cmd)
    };
    assert_eq!(
        with_spec(&["show", "s"]).json()["trigger_keywords"],
        json!(["c"])
    );
    assert_eq!(
        with_spec(&["show", "none"]).json()["trigger_keywords"],
        json!([])
    );
    sb.write("team", "s.yaml", "trigger_keywords: one\n");
    let run = with_spec(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stdout
            .contains("[ROOT]/layers/team/s.yaml:1:19: error:"),
        "{run:#?}"
    );
}

#[test]
fn adding_a_field_to_the_spec_makes_it_valid_and_merged() {
    let sb = two_layers();
    sb.write("team", "s.yaml", "owners: [team-a]\n");
    sb.write("user", "s.yaml", "owners: [me]\n");
    // Unknown with the shipped spec.
    let err = sb.run(&["show", "s"]).failed().to_owned();
    assert!(err.contains("unknown field 'owners'"), "{err}");
    let spec = edited_spec(&sb, "spec.yaml", |t| {
        t.replacen(
            "fields:\n",
            "fields:\n  owners:\n    strategy: APPEND\n    items: string\n",
            1,
        )
    });
    let mut cmd = sb.skills_cmd(&["show", "s"]);
    cmd.arg("--spec").arg(&spec);
    let v = sb.run_cmd(cmd).json();
    assert_eq!(v["owners"], json!(["team-a", "me"]));
    assert_eq!(v["trigger_keywords"], json!(["a", "b"]));
}

#[test]
fn spec_flag_beats_the_environment_variable_which_beats_the_default() {
    let sb = two_layers();
    let via_env = edited_spec(&sb, "env-spec.yaml", |t| {
        let t = set_strategy(t, "trigger_keywords", "OVERRIDE");
        in_field(t, "trigger_keywords", "items: string", "type: array")
    });
    let via_flag = sb.write_file(
        "flag-spec.yaml",
        "version: 1\nfields:\n  trigger_keywords: {strategy: APPEND}\n  \
         description: {strategy: OVERRIDE}\n",
    );
    let mut env_only = sb.skills_cmd(&["show", "s"]);
    env_only.env("BERNSTEIN_SKILLS_SPEC", &via_env);
    assert_eq!(
        sb.run_cmd(env_only).json()["trigger_keywords"],
        json!(["c"])
    );

    let mut both = sb.skills_cmd(&["show", "s"]);
    both.env("BERNSTEIN_SKILLS_SPEC", &via_env)
        .arg("--spec")
        .arg(&via_flag);
    let v = sb.run_cmd(both).json();
    assert_eq!(
        v,
        json!({"description": "d", "trigger_keywords": ["a", "b", "c"], "layers_present": ["base", "user"]})
    );

    let mut spec_cmd = sb.skills_cmd(&["spec"]);
    spec_cmd.env("BERNSTEIN_SKILLS_SPEC", &via_env);
    assert!(
        sb.run_cmd(spec_cmd)
            .ok()
            .starts_with("spec: [ROOT]/env-spec.yaml\n")
    );
}

#[test]
fn a_bad_spec_fails_before_any_skill_is_read() {
    let sb = Sandbox::new();
    // The skill is broken too; only the spec error may be reported.
    sb.write("base", "s.yaml", "descripton: typo\n");
    for (text, needle) in [
        ("version: 3\nfields: {}\n", "versions 1 and 2"),
        (
            "version: 1\nfields:\n  a: {strategy: MERGE}\n",
            "unknown strategy 'MERGE'",
        ),
        (
            "version: 1\nfields:\n  a: {strategy: APPEND, colour: red}\n",
            "'colour'",
        ),
        (
            "version: 1\nfields:\n  a: {strategy: KEYED_REPLACE, keys: []}\n",
            "keys",
        ),
        ("fields: [", "spec.yaml"),
    ] {
        let spec = sb.write_file("spec.yaml", text);
        let mut cmd = sb.skills_cmd(&["show", "s"]);
        cmd.arg("--spec").arg(&spec);
        let err = sb.run_cmd(cmd).failed().to_owned();
        assert!(err.starts_with("[ROOT]/spec.yaml"), "{text:?}: {err}");
        assert!(err.contains(needle), "{text:?}: {err}");
        assert!(!err.contains("descripton"), "the skill was read: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

#[test]
fn a_spec_field_default_fills_the_effective_skill() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "{}\n");
    let spec = sb.write_file(
        "spec.yaml",
        "version: 1\nfields:\n  model: {strategy: OVERRIDE, type: string, default: small}\n  \
         tags: {strategy: APPEND}\n",
    );
    let mut cmd = sb.skills_cmd(&["show", "s"]);
    cmd.arg("--spec").arg(&spec);
    assert_eq!(
        sb.run_cmd(cmd).json(),
        json!({"model": "small", "tags": [], "layers_present": ["base"]})
    );
}

#[test]
fn a_spec_from_before_constraints_loads_and_merges_byte_identically() {
    // The outputs below were recorded with the build and spec of the commit
    // before constraints and required fields existed; `explain` was recorded
    // again when the demo's writer gained a reference file, which it lists
    // as a FILE row (every other row is as before), and when it gained the
    // lines saying where each layer came from, below the table;
    // `--per-layer --json` when its keys took the names every command's
    // JSON uses (docs/json.md): the values are as before; `--origins` when
    // empty lists and maps gained the note of where they come from.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let golden = |file: &str| {
        std::fs::read_to_string(root.join("tests/fixtures/classic").join(file)).unwrap()
    };
    let run = |args: &[&str]| {
        let out = assert_cmd::Command::cargo_bin("bernstein")
            .unwrap()
            .env_clear()
            .current_dir(root)
            .args(["skills", "--spec", "tests/fixtures/mergespec-classic.yaml"])
            .args(["--layers-root", "examples/layers"])
            .args(args)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    for (args, file) in [
        (&["show", "writer"][..], "writer.json"),
        (&["show", "reviewer"], "reviewer.json"),
        (&["show", "writer", "--origins"], "writer.origins.txt"),
        (
            &["show", "writer", "--per-layer", "--json"],
            "writer.per-layer.json",
        ),
        (&["explain", "writer"], "writer.explain.txt"),
        (&["schema"], "skill-fragment.schema.json"),
    ] {
        assert!(run(args) == golden(file), "{args:?} differs from {file}");
    }
}
