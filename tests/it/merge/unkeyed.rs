//! Entries without a key (issue 43): whether a KEYED_REPLACE list keeps
//! them is the rule's `unkeyed` attribute, data in the spec. `append`
//! keeps them after the keyed entries in encounter order, as Bernstein's
//! layered module does; `refuse` (the default, and the shipped spec) is a
//! located error. From every form a layer can take, through `show`,
//! `explain`, `--origins`, `validate`, the schema and `spec`.

use serde_json::json;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// `references` keeps unkeyed entries, `scripts` refuses them (the
/// default), and a keyed list below a DEEP_MERGE key keeps them too.
const SPEC: &str = "version: 2
body_field: body
fields:
  body: {strategy: OVERRIDE, type: string}
  description: {strategy: OVERRIDE, type: string}
  references: {strategy: KEYED_REPLACE, keys: [name, id], unkeyed: append}
  scripts: {strategy: KEYED_REPLACE, keys: [name]}
  metadata:
    strategy: DEEP_MERGE
    fields:
      tools: {strategy: KEYED_REPLACE, keys: [name], unkeyed: append, entries: merge}
";

/// Unkeyed entries in YAML (base), TOML (team) and a SKILL.md frontmatter
/// (user), between keyed ones.
fn sandbox() -> Sandbox {
    let sb = Sandbox::with_spec(SPEC);
    sb.write(
        "base",
        "w.yaml",
        "description: base
references:
  - {url: base-note}
  - {name: style, url: b}
  - {url: base-two}
metadata:
  tools: [{cmd: anon}, {name: lint, cmd: a}]
",
    );
    sb.write(
        "team",
        "w.toml",
        "[[references]]
url = \"team-note\"

[[references]]
name = \"style\"
url = \"t\"

[[metadata.tools]]
name = \"lint\"
args = [\"x\"]
",
    );
    sb.write(
        "user",
        "w/SKILL.md",
        "---
references:
  - {name: '', url: user-note}
  - {id: glossary}
---
Body.
",
    );
    sb
}

#[test]
fn kept_after_the_keyed_entries_in_the_order_the_layers_hold_them() {
    let sb = sandbox();
    let v = sb.run(&["show", "w"]).json();
    assert_eq!(
        v["references"],
        json!([
            {"name": "style", "url": "t"},
            {"id": "glossary"},
            {"url": "base-note"},
            {"url": "base-two"},
            {"url": "team-note"},
            {"name": "", "url": "user-note"},
        ])
    );
    assert_eq!(
        v["metadata"]["tools"],
        json!([{"name": "lint", "cmd": "a", "args": ["x"]}, {"cmd": "anon"}])
    );
    // The library gives the same.
    assert_eq!(sb.resolve_value("w")["references"], v["references"]);
    assert_eq!(
        sb.run(&["validate"]).ok_report(),
        "0 error(s), 0 warning(s) in 3 file(s)\n"
    );
}

/// Each unkeyed entry's row names its layer, file and line, at its place
/// in the merged list; `--origins` too.
#[test]
fn explain_and_origins_locate_each_unkeyed_entry() {
    let sb = sandbox();
    let explain = sb.run_relative(&["explain", "w", "references"]);
    let origins = sb.run_relative(&["show", "w", "--origins"]);
    let one = sb.run_relative(&["explain", "w", "references[4]"]);
    assert_snapshot(
        format!(
            "{}{}{}",
            explain.transcript(&["explain", "w", "references"]),
            origins.transcript(&["show", "w", "--origins"]),
            one.transcript(&["explain", "w", "references[4]"]),
        ),
        snapshot_file("unkeyed-explain-and-origins.txt"),
    );
}

/// Where the rule refuses them, each is an error at its file, line and
/// column, in every form; nothing is merged.
#[test]
fn refused_where_the_rule_does_not_keep_them_located_in_every_form() {
    let sb = Sandbox::with_spec(SPEC);
    sb.write("base", "w.yaml", "scripts:\n  - {name: ok}\n  - {run: x}\n");
    sb.write("team", "w.toml", "[[scripts]]\nrun = \"y\"\n");
    sb.write(
        "user",
        "w/SKILL.md",
        "---\nscripts:\n  - nmae: z\n---\nBody.\n",
    );
    let validate = sb.run_relative(&["validate"]);
    let show = sb.run_relative(&["show", "w"]);
    assert_eq!(show.code, Some(1));
    assert_snapshot(
        format!(
            "{}{}",
            validate.transcript(&["validate"]),
            show.transcript(&["show", "w"])
        ),
        snapshot_file("unkeyed-refused.txt"),
    );
}

/// The fragment schema editors see follows the rule: an entry without a
/// key is valid in `references`, invalid in `scripts`.
#[test]
fn the_editor_schema_follows_the_rule() {
    let sb = sandbox();
    let schema = sb.run(&["schema"]).json();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(validator.is_valid(&json!({"references": [{"url": "x"}, {"name": ""}]})));
    assert!(!validator.is_valid(&json!({"scripts": [{"run": "x"}]})));
    assert!(validator.is_valid(&json!({"metadata": {"tools": [{"cmd": "x"}]}})));
    // A directive still names its entry by key.
    assert!(!validator.is_valid(&json!({"references": [{"$patch": "delete"}]})));
}

/// A default may hold unkeyed entries only where the rule keeps them; the
/// attribute needs version 2 and belongs to KEYED_REPLACE.
#[test]
fn the_spec_checks_the_attribute() {
    let ok = Sandbox::with_spec(
        "version: 2\nfields:\n  r: {strategy: KEYED_REPLACE, unkeyed: append, default: [{url: d}]}\n",
    );
    ok.write("base", "w.yaml", "r: [{name: a}]\n");
    assert_eq!(
        ok.run(&["show", "w"]).json()["r"],
        json!([{"name": "a"}, {"url": "d"}])
    );
    let mut errors = String::new();
    for rule in [
        "{strategy: KEYED_REPLACE, default: [{url: d}]}",
        "{strategy: KEYED_REPLACE, unkeyed: keep}",
        "{strategy: APPEND, unkeyed: append}",
    ] {
        let sb = Sandbox::with_spec(&format!("version: 2\nfields:\n  r: {rule}\n"));
        sb.write("base", "w.yaml", "{}\n");
        errors.push_str(&format!("# {rule}\n{}", sb.run(&["show", "w"]).failed()));
    }
    assert_snapshot(errors, snapshot_file("unkeyed-spec-errors.stderr"));
}

/// `bernstein skills spec` shows the attribute in the rule's checks, as
/// text and as JSON.
#[test]
fn the_spec_command_shows_the_attribute() {
    let sb = sandbox();
    let text = sb.run(&["spec"]);
    assert!(
        text.ok()
            .lines()
            .any(|l| l.starts_with("references ") && l.ends_with("unkeyed append")),
        "{text:#?}"
    );
    let v = sb.run(&["spec", "--json"]).json();
    let checks = |field: &str| {
        v["fields"]
            .as_array()
            .unwrap()
            .iter()
            .find(|f| f["field"] == field)
            .unwrap()["checks"]
            .clone()
    };
    assert_eq!(checks("references"), json!(["unkeyed append"]));
    assert_eq!(checks("scripts"), json!([]));
    assert_eq!(
        checks("metadata.tools"),
        json!(["entries merge", "unkeyed append"])
    );
}

/// `plain: refuse` (Bernstein's lists, which hold mappings only): a plain
/// string entry is an error at its file, line and column, in the editor's
/// schema too; `plain: keep`, the default, keys it by itself; `files`,
/// which names files by plain entries, cannot go with `refuse`.
#[test]
fn plain_entries_are_refused_where_the_rule_says_so() {
    let spec = "version: 2\nfields:\n  r: {strategy: KEYED_REPLACE, unkeyed: append, plain: refuse}\n  k: {strategy: KEYED_REPLACE}\n";
    let sb = Sandbox::with_spec(spec);
    sb.write(
        "base",
        "w.yaml",
        "r:\n  - {name: a}\n  - style.md\nk: [style.md]\n",
    );
    let run = sb.run_relative(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stdout.contains(
            "layers/base/w.yaml:3:5: error: 'r[1]' (KEYED_REPLACE) expects a mapping, got a string"
        ),
        "{run:#?}"
    );
    assert!(run.stdout.contains("1 error(s)"), "{run:#?}");
    let schema = sb.run(&["schema"]).json();
    let validator = jsonschema::validator_for(&schema).unwrap();
    assert!(!validator.is_valid(&json!({"r": ["style.md"]})));
    assert!(validator.is_valid(&json!({"r": [{"url": "x"}], "k": ["style.md"]})));
    assert!(
        sb.run(&["spec"])
            .ok()
            .lines()
            .any(|l| l.starts_with("r ") && l.ends_with("unkeyed append, plain refuse")),
    );
    for (rule, problem) in [
        (
            "{strategy: KEYED_REPLACE, plain: refuse, files: references}",
            "'files' names files by the plain string entries",
        ),
        ("{strategy: APPEND, plain: refuse}", "plain"),
    ] {
        let bad = Sandbox::with_spec(&format!("version: 2\nfields:\n  r: {rule}\n"));
        bad.write("base", "w.yaml", "{}\n");
        let run = bad.run(&["show", "w"]);
        let failed = run.failed();
        assert!(failed.contains(problem), "{rule}: {failed}");
    }
    let v1 =
        Sandbox::with_spec("version: 1\nfields:\n  r: {strategy: KEYED_REPLACE, plain: refuse}\n");
    v1.write("base", "w.yaml", "{}\n");
    assert!(
        v1.run(&["show", "w"])
            .failed()
            .contains("'plain' needs 'version: 2'")
    );
}
