//! The rule attribute `layers`: a value set in a layer its rule does not
//! list is an error at that value, from `validate`, and a refusal from
//! `show` and `export`, whatever the form, at any depth and for directives.

use serde_json::json;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// `allowed-tools`, `references`, `body` and `metadata.allowed` belong to
/// the base and team layers, `model` to the base layer alone.
const SPEC: &str = "version: 2
body_field: body
name_field: name
fields:
  name: {strategy: OVERRIDE, type: string}
  description: {strategy: OVERRIDE, type: string}
  body: {strategy: OVERRIDE, type: string, layers: [base, team]}
  allowed-tools:
    strategy: OVERRIDE
    type: [string, array]
    items: string
    layers: [team, base]
  model: {strategy: OVERRIDE, type: string, layers: [base]}
  trigger_keywords: {strategy: APPEND, items: string}
  references:
    strategy: KEYED_REPLACE
    layers: [base, team]
  metadata:
    strategy: DEEP_MERGE
    fields:
      allowed: {strategy: OVERRIDE, layers: [base, team]}
";

/// `writer`: the base and team layers set what they own; the user layer
/// only its description.
fn owned() -> Sandbox {
    let sb = Sandbox::with_spec(SPEC);
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\nallowed-tools: Read\nmodel: small\n\
         metadata: {allowed: base}\n---\n# Writer\n",
    );
    sb.write(
        "team",
        "writer.yaml",
        "allowed-tools: [Read, Grep]\nreferences: [style.md]\nmetadata:\n  allowed: team\n",
    );
    sb.write("user", "writer.yaml", "description: Mine.\n");
    sb
}

#[test]
fn the_layers_a_rule_lists_may_set_it() {
    let sb = owned();
    assert_eq!(
        sb.run(&["validate", "--strict"]).ok_report(),
        "0 error(s), 0 warning(s) in 3 file(s)\n"
    );
    let v = sb.run(&["show", "writer"]).json();
    assert_eq!(v["allowed-tools"], json!(["Read", "Grep"]));
    assert_eq!(v["model"], "small");
    assert_eq!(v["metadata"], json!({"allowed": "team"}));
    assert_eq!(v["description"], "Mine.");
}

#[test]
fn a_value_in_another_layer_is_an_error_at_its_key_in_every_form() {
    let sb = owned();
    sb.write(
        "user",
        "writer.yaml",
        "description: Mine.\nallowed-tools: Read Bash\n",
    );
    sb.write("base", "notes.yaml", "description: Notes.\n");
    sb.write(
        "user",
        "notes.toml",
        "description = \"mine\"\nallowed-tools = [\"Read\", \"Bash\"]\n\n\
         [metadata]\nfree = 1\nallowed = \"x\"\n",
    );
    sb.write("base", "pdf/SKILL.md", "---\ndescription: PDFs.\n---\n");
    sb.write("team", "pdf.yaml", "model: big\n");
    sb.write(
        "user",
        "pdf/SKILL.md",
        "---\ndescription: mine\nallowed-tools: Read\n---\nMy own body.\n",
    );
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(
        run.report(),
        "[ROOT]/layers/user/notes.toml:2:1: error: 'allowed-tools' may be set only in the base and team layers\n\
         [ROOT]/layers/user/notes.toml:6:1: error: 'metadata.allowed' may be set only in the base and team layers\n\
         [ROOT]/layers/team/pdf.yaml:1:1: error: 'model' may be set only in the base layer\n\
         [ROOT]/layers/user/pdf/SKILL.md:3:1: error: 'allowed-tools' may be set only in the base and team layers\n\
         [ROOT]/layers/user/pdf/SKILL.md:5:1: error: 'body' may be set only in the base and team layers\n\
         [ROOT]/layers/user/writer.yaml:2:1: error: 'allowed-tools' may be set only in the base and team layers\n\
         6 error(s), 0 warning(s) in 8 file(s)\n"
    );
    let v: serde_json::Value =
        serde_json::from_str(&sb.run(&["validate", "--json", "notes"]).stdout).unwrap();
    assert_eq!(
        v["diagnostics"][1],
        json!({
            "severity": "error",
            "file": "[ROOT]/layers/user/notes.toml",
            "layer": "user",
            "line": 6,
            "column": 1,
            "field": "metadata.allowed",
            "message": "'metadata.allowed' may be set only in the base and team layers",
        })
    );
}

#[test]
fn a_nested_owned_key_is_its_own_value_and_other_keys_stay_free() {
    let sb = owned();
    sb.write(
        "user",
        "writer.yaml",
        "metadata:\n  free: {allowed: 1}\n  allowed:\n    - x\n",
    );
    let run = sb.run(&["validate"]);
    assert_eq!(
        run.report(),
        "[ROOT]/layers/user/writer.yaml:3:3: error: 'metadata.allowed' may be set only in the base and team layers\n\
         1 error(s), 0 warning(s) in 3 file(s)\n"
    );
    sb.write("user", "writer.yaml", "metadata:\n  free: {allowed: 1}\n");
    assert_eq!(
        sb.run(&["show", "writer"]).json()["metadata"],
        json!({"allowed": "team", "free": {"allowed": 1}})
    );
}

#[test]
fn null_in_a_layer_the_rule_does_not_list_is_refused_too() {
    let sb = owned();
    sb.write(
        "user",
        "writer.yaml",
        "allowed-tools: null\nmetadata:\n  allowed:\n",
    );
    sb.write("team", "writer.yaml", "model:\n");
    let run = sb.run(&["validate"]);
    assert_eq!(
        run.report(),
        "[ROOT]/layers/team/writer.yaml:1:1: error: 'model' may be set only in the base layer\n\
         [ROOT]/layers/user/writer.yaml:1:1: error: 'allowed-tools' may be set only in the base and team layers\n\
         [ROOT]/layers/user/writer.yaml:3:3: error: 'metadata.allowed' may be set only in the base and team layers\n\
         3 error(s), 0 warning(s) in 3 file(s)\n"
    );
}

#[test]
fn a_directive_on_an_owned_list_is_refused_in_a_layer_it_does_not_list() {
    let sb = owned();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\nreferences: [style.md, glossary.md]\n---\n",
    );
    // The team may delete a base entry and add its own.
    sb.write(
        "team",
        "writer.yaml",
        "references:\n  - {name: glossary.md, $patch: delete}\n  - house.md\n",
    );
    sb.write("user", "writer.yaml", "description: Mine.\n");
    assert_eq!(
        sb.run(&["show", "writer"]).json()["references"],
        json!(["style.md", "house.md"])
    );
    // The user may not delete the team's.
    sb.write(
        "user",
        "writer.yaml",
        "description: Mine.\nreferences:\n  - {name: house.md, $patch: delete}\n",
    );
    assert_eq!(
        sb.run(&["validate"]).report(),
        "[ROOT]/layers/user/writer.yaml:2:1: error: 'references' may be set only in the base and team layers\n\
         1 error(s), 0 warning(s) in 3 file(s)\n"
    );
    // Nor replace the list, nor a mapping's owned key. (Whether the
    // fragment schema takes `{$patch: replace}` in a keyed list is another
    // matter: only the ownership errors are counted here.)
    sb.write(
        "user",
        "writer.yaml",
        "references: [{$patch: replace}, mine.md]\nmetadata: {allowed: {$patch: delete}}\n",
    );
    sb.pin(&["validate"], "ownership-directives-on-owned-fields.txt");
}

#[test]
fn show_and_export_refuse_the_skill_like_any_invalid_fragment() {
    let sb = owned();
    sb.write(
        "user",
        "writer.yaml",
        "description: Mine.\nallowed-tools: Bash\n",
    );
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    let line = "[ROOT]/layers/user/writer.yaml:2:1: error: 'allowed-tools' may be set only in the base and team layers\n";
    assert_eq!(sb.run(&["show", "writer"]).failed(), line);
    assert_eq!(sb.run(&["explain", "writer"]).failed(), line);
    let mut runs = String::new();
    for format in ["json", "skill"] {
        let out = sb.path().join(format!("out-{format}"));
        let args = ["export", "--format", format, "--out", out.to_str().unwrap()];
        let run = sb.run(&args);
        let stderr = run.failed();
        assert_eq!(
            stderr.lines().filter(|l| l.contains(": error: ")).count(),
            1,
            "{stderr}"
        );
        let shown = format!("[ROOT]/out-{format}");
        runs.push_str(&run.transcript(&["export", "--format", format, "--out", &shown]));
        assert!(!out.exists(), "{format}: nothing is written");
    }
    // The same error, and the summary.
    assert_snapshot(runs, snapshot_file("ownership-export-refused.txt"));
    // The other skill is unaffected.
    assert_eq!(
        sb.run(&["show", "reviewer"]).json()["description"],
        "Reviews."
    );
}

#[test]
fn the_spec_command_and_the_schema_name_the_owning_layers() {
    let sb = owned();
    // The owned fields' rows end with the layers that may set them.
    let out = sb.run(&["spec"]).ok().to_owned();
    assert_snapshot(out, snapshot_file("ownership-spec.txt"));
    let schema = sb.run(&["schema"]).json();
    let hover = schema["properties"]["allowed-tools"]["description"]
        .as_str()
        .unwrap();
    assert!(
        hover.starts_with("May be set only in the base and team layers.\n\nOVERRIDE:"),
        "{hover}"
    );
    let nested = schema["properties"]["metadata"]["properties"]["allowed"]["description"]
        .as_str()
        .unwrap();
    assert!(
        nested.starts_with("May be set only in the base and team layers.\n\nOVERRIDE:"),
        "{nested}"
    );
}

#[test]
fn a_reset_or_replace_of_a_mapping_holding_an_owned_key_is_refused() {
    for (text, line) in [
        ("metadata: null\n", 1),
        ("description: d\nmetadata: {$patch: delete}\n", 2),
        ("metadata:\n  $patch: replace\n  free: 1\n", 1),
    ] {
        let sb = owned();
        sb.write("user", "writer.yaml", text);
        let run = sb.run(&["validate"]);
        assert_eq!(run.code, Some(1), "{text}: {run:#?}");
        assert_eq!(
            run.report(),
            format!(
                "[ROOT]/layers/user/writer.yaml:{line}:1: error: 'metadata' holds 'metadata.allowed', which may be set only in the base and team layers: a reset or replace of 'metadata' here would remove it\n\
                 1 error(s), 0 warning(s) in 3 file(s)\n"
            ),
            "{text}"
        );
        sb.run(&["show", "writer"]).failed();
    }
    // The team layer owns the key, so it may reset the mapping.
    let sb = owned();
    sb.write(
        "team",
        "writer.yaml",
        "metadata: {$patch: replace, allowed: t}\n",
    );
    assert_eq!(
        sb.run(&["show", "writer"]).json()["metadata"],
        json!({"allowed": "t"})
    );
}
