//! Rules engine v2: `$patch` directives, rules at any depth, `unique` and
//! `entries: merge`, from every form a layer can take (YAML, TOML and a
//! SKILL.md frontmatter), through `show`, `explain`, `--origins` and
//! `validate`.

use serde_json::{Value, json};

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// Top-level rules of every strategy, and `metadata` with rules for some
/// of its keys.
const SPEC: &str = "version: 2
body_field: body
fields:
  body: {strategy: OVERRIDE, type: string}
  description: {strategy: OVERRIDE, type: string}
  tags: {strategy: APPEND, items: string}
  keywords: {strategy: APPEND, items: string, unique: true}
  references: {strategy: KEYED_REPLACE, keys: [name, id]}
  steps: {strategy: KEYED_REPLACE, keys: [name], entries: merge}
  metadata:
    strategy: DEEP_MERGE
    fields:
      tags: {strategy: APPEND, items: string}
      tools: {strategy: KEYED_REPLACE, keys: [name]}
      limits:
        strategy: DEEP_MERGE
        fields:
          levels: {strategy: APPEND, items: integer, unique: true}
";

/// The base layer of `w`: something for every directive to act on.
const BASE: &str = "description: base
tags: [a, b, c, b]
keywords: [x, y]
references: [{name: style, url: s}, {name: other}]
steps: [{name: lint, cmd: eslint, args: [x]}, {name: test, cmd: jest}]
metadata:
  owner: docs
  tags: [one]
  tools: [{name: lint, cmd: a}, {name: fmt}]
  limits: {max: 1, temp: 2, levels: [1, 2]}
  legacy: {format: v0}
";

fn sandbox(team: &str) -> Sandbox {
    let sb = Sandbox::with_spec(SPEC);
    sb.write("base", "w.yaml", BASE);
    sb.write("team", "w.yaml", team);
    sb
}

/// The team layer's override, written in each of the three forms, gives
/// `expected` for each of `fields`.
fn check_forms(yaml: &str, toml: &str, fields: &[(&str, Value)]) {
    for (file, text) in [
        ("w.yaml", yaml.to_owned()),
        ("w.toml", toml.to_owned()),
        ("w/SKILL.md", format!("---\n{yaml}---\n")),
    ] {
        let sb = Sandbox::with_spec(SPEC);
        sb.write("base", "w.yaml", BASE);
        sb.write("team", file, &text);
        let v = sb.run(&["show", "w"]).json();
        for (field, expected) in fields {
            assert_eq!(&v[field], expected, "{file}: {field} in {v:#}");
        }
        assert!(
            !v.to_string().contains("$patch"),
            "{file}: a directive reached the effective skill: {v}"
        );
    }
}

#[test]
fn a_keyed_delete_removes_the_lower_entry() {
    check_forms(
        "references: [{name: style, $patch: delete}, {name: new}]\n",
        "references = [{name = \"style\", \"$patch\" = \"delete\"}, {name = \"new\"}]\n",
        &[("references", json!([{"name": "other"}, {"name": "new"}]))],
    );
}

#[test]
fn an_append_delete_removes_every_equal_lower_item() {
    check_forms(
        "tags: [{$patch: delete, value: b}, d]\n",
        "tags = [{\"$patch\" = \"delete\", value = \"b\"}, \"d\"]\n",
        &[("tags", json!(["a", "c", "d"]))],
    );
}

#[test]
fn a_list_replace_keeps_only_this_layers_items() {
    check_forms(
        "tags: [{$patch: replace}, z]\nreferences: [{$patch: replace}, {name: only}]\n",
        "tags = [{\"$patch\" = \"replace\"}, \"z\"]\nreferences = [{\"$patch\" = \"replace\"}, {name = \"only\"}]\n",
        &[
            ("tags", json!(["z"])),
            ("references", json!([{"name": "only"}])),
        ],
    );
}

#[test]
fn a_mapping_replace_or_delete_acts_at_any_depth() {
    check_forms(
        "metadata:\n  limits: {$patch: replace, max: 5}\n  legacy: {$patch: delete}\n",
        "[metadata]\nlimits = {\"$patch\" = \"replace\", max = 5}\nlegacy = {\"$patch\" = \"delete\"}\n",
        &[(
            "metadata",
            json!({
                "owner": "docs",
                "tags": ["one"],
                "tools": [{"name": "lint", "cmd": "a"}, {"name": "fmt"}],
                "limits": {"max": 5},
            }),
        )],
    );
}

#[test]
fn nested_rules_merge_by_their_own_strategy() {
    check_forms(
        "metadata:\n  tags: [two]\n  tools: [{name: lint, cmd: b}, {name: fmt, $patch: delete}]\n  limits: {levels: [2, 3]}\n",
        "[metadata]\ntags = [\"two\"]\ntools = [{name = \"lint\", cmd = \"b\"}, {name = \"fmt\", \"$patch\" = \"delete\"}]\nlimits = {levels = [2, 3]}\n",
        &[(
            "metadata",
            json!({
                "owner": "docs",
                "tags": ["one", "two"],
                "tools": [{"name": "lint", "cmd": "b"}],
                "limits": {"max": 1, "temp": 2, "levels": [1, 2, 3]},
                "legacy": {"format": "v0"},
            }),
        )],
    );
}

#[test]
fn unique_drops_later_duplicates_and_entries_merge_key_by_key() {
    check_forms(
        "keywords: [y, z, z, x]\nsteps: [{name: lint, cmd: biome}, {name: test, $patch: replace, cmd: vitest}]\n",
        "keywords = [\"y\", \"z\", \"z\", \"x\"]\nsteps = [{name = \"lint\", cmd = \"biome\"}, {name = \"test\", \"$patch\" = \"replace\", cmd = \"vitest\"}]\n",
        &[
            ("keywords", json!(["x", "y", "z"])),
            (
                "steps",
                json!([
                    {"name": "lint", "cmd": "biome", "args": ["x"]},
                    {"name": "test", "cmd": "vitest"},
                ]),
            ),
        ],
    );
}

#[test]
fn explain_names_the_directive_behind_each_deletion_and_replacement() {
    let sb = sandbox(
        "references: [{name: style, $patch: delete}]\nmetadata:\n  limits: {$patch: replace, max: 5}\n",
    );
    // Under the deleted entry's row: what deleted it and what it was; under
    // the replaced mapping's: what replaced it. Relative layer paths: the
    // columns are as wide on any machine.
    let out = sb.run_relative(&["explain", "w"]).ok().to_owned();
    assert_snapshot(
        out,
        snapshot_file("directives-explain-deleted-replaced.txt"),
    );
    let doc = sb.run(&["explain", "w", "references", "--json"]).json();
    let rows = doc["values"].as_array().unwrap();
    let gone = rows
        .iter()
        .find(|r| r["field"] == "references[style]")
        .unwrap();
    assert_eq!(gone["removed"], true);
    assert_eq!(gone["changes"][0]["kind"], "deleted");
    assert_eq!(gone["changes"][0]["by"]["layer"], "team");
    assert_eq!(
        gone["changes"][0]["dropped"][0]["value"],
        json!({"name": "style", "url": "s"})
    );
}

#[test]
fn explain_follows_nested_rules_and_merged_entries() {
    let sb =
        sandbox("metadata:\n  tools: [{name: lint, cmd: b}]\nsteps: [{name: lint, cmd: biome}]\n");
    // Relative layer paths: the columns are as wide on any machine.
    let out = sb
        .run_relative(&["explain", "w", "metadata.tools"])
        .ok()
        .to_owned();
    assert_snapshot(out, snapshot_file("directives-explain-nested-rule.txt"));
    // A merged entry: each value with the layer that set it.
    let out = sb
        .run_relative(&["explain", "w", "steps[lint]"])
        .ok()
        .to_owned();
    assert_snapshot(&out, snapshot_file("directives-explain-merged-entry.txt"));
    let origin_of = |path: &str| {
        out.lines()
            .find(|l| l.split_whitespace().nth(2) == Some(path))
            .and_then(|l| l.split(':').next())
            .unwrap_or_else(|| panic!("no row {path}:\n{out}"))
            .to_owned()
    };
    assert_eq!(origin_of("steps[lint].cmd"), "team");
    assert_eq!(origin_of("steps[lint].args"), "base");
    let origins = sb.run(&["show", "w", "--origins"]).ok().to_owned();
    assert_snapshot(origins, snapshot_file("directives-show-origins.txt"));
}

#[test]
fn a_stale_delete_is_a_warning_and_strict_fails_on_it() {
    let sb = sandbox("references: [{name: gone, $patch: delete}]\n");
    let run = sb.run(&["validate"]);
    run.success();
    assert_eq!(
        run.report(),
        "[ROOT]/layers/team/w.yaml:1:14: warning: 'references[gone]': $patch: delete finds nothing to delete in the lower layers (stale, or a typo in its key)\n\
         0 error(s), 1 warning(s) in 2 file(s)\n"
    );
    let strict = sb.run(&["validate", "--strict"]);
    assert_eq!(strict.code, Some(1), "{strict:#?}");
    // `show` still works, and says it: the lower layers move on their own.
    let show = sb.run(&["show", "w"]);
    show.success();
    assert_snapshot(
        &show.stderr,
        snapshot_file("directives-stale-delete-show.stderr"),
    );
}

/// `validate`'s report of a failing run (on stdout, exit 1).
fn report(sb: &Sandbox) -> String {
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    run.stdout.clone()
}

#[test]
fn misused_directives_are_located_errors_in_words() {
    let yaml = "tags: [{$patch: delte, value: a}]
references: [{$patch: delete}]
description: {$patch: delete}
metadata:
  limits: {$patch: delete, max: 3}
  owner: [{$patch: replace}]
";
    let toml = "tags = [{\"$patch\" = \"delte\", value = \"a\"}]
references = [{\"$patch\" = \"delete\"}]
description = {\"$patch\" = \"delete\"}
\"$patch\" = \"replace\"
";
    let sb = sandbox(yaml);
    let err = report(&sb);
    let expected = [
        "[ROOT]/layers/team/w.yaml:1:8: error: 'tags[0]': unknown directive $patch: \"delte\"; in an APPEND list write {$patch: delete, value: <item>} to remove items or {$patch: replace} to replace the list",
        "[ROOT]/layers/team/w.yaml:2:14: error: 'references[0]': a delete names the entry by its name or id: {name: <entry>, $patch: delete}",
        "[ROOT]/layers/team/w.yaml:3:14: error: 'description': an OVERRIDE value is replaced whole, so it takes no directive: write null to reset it",
        "[ROOT]/layers/team/w.yaml:5:11: error: 'metadata.limits': $patch: delete removes the whole mapping, so nothing may be set beside it (remove max)",
        "[ROOT]/layers/team/w.yaml:6:20: error: 'metadata.owner[0]': a directive means nothing in a list below a DEEP_MERGE key: such a list is replaced whole already (give the key a rule under 'fields:' in the spec to merge it)",
    ];
    for line in expected {
        assert!(err.lines().any(|l| l == line), "missing {line}\nin:\n{err}");
    }
    sb.run(&["show", "w"]).failed();
    let sb = Sandbox::with_spec(SPEC);
    sb.write("base", "w.yaml", BASE);
    sb.write("team", "w.toml", toml);
    assert_snapshot(report(&sb), snapshot_file("directives-misused-in-toml.txt"));
}

#[test]
fn under_version_1_a_patch_key_is_plain_data() {
    let v1 = SPEC
        .replace("version: 2", "version: 1")
        .replace(", unique: true", "")
        .replace(", entries: merge", "");
    let v1 = v1.split("    fields:").next().unwrap().to_owned();
    let sb = Sandbox::with_spec(&v1);
    sb.write(
        "base",
        "w.yaml",
        "references: [{name: style}]\nmetadata: {a: 1}\n",
    );
    sb.write(
        "team",
        "w.yaml",
        "references: [{name: style, $patch: delete}]\nmetadata: {$patch: replace, b: 2}\n",
    );
    let v = sb.run(&["show", "w"]).json();
    assert_eq!(
        v["references"],
        json!([{"name": "style", "$patch": "delete"}])
    );
    assert_eq!(v["metadata"], json!({"a": 1, "b": 2, "$patch": "replace"}));
}

#[test]
fn version_2_attributes_in_a_version_1_spec_are_one_error() {
    let mut errors = String::new();
    for (rule, attr) in [
        ("{strategy: APPEND, unique: true}", "unique"),
        ("{strategy: KEYED_REPLACE, entries: merge}", "entries"),
        ("{strategy: KEYED_REPLACE, unkeyed: append}", "unkeyed"),
        (
            "{strategy: DEEP_MERGE, fields: {a: {strategy: APPEND}}}",
            "fields",
        ),
        ("{strategy: OVERRIDE, layers: [base]}", "layers"),
    ] {
        let sb = Sandbox::with_spec(&format!("version: 1\nfields:\n  f: {rule}\n"));
        sb.write("base", "w.yaml", "{}\n");
        let err = sb.run(&["show", "w"]).failed().to_owned();
        assert_eq!(err.lines().count(), 1, "{err}");
        errors.push_str(&format!("# {attr}: {rule}\n{err}"));
    }
    // Each names the attribute that needs version 2.
    assert_snapshot(
        errors,
        snapshot_file("directives-version-2-attributes.stderr"),
    );
}

#[test]
fn a_directive_inside_a_value_replaced_whole_is_refused() {
    // Inside a keyed entry (entries replace), in a list of lists below a
    // DEEP_MERGE key, inside a mapping in such a list, and a delete that
    // carries more than the entry's key.
    let sb = sandbox(
        "references: [{name: style, meta: {$patch: delete}}, {name: other, $patch: delete, url: x}]
metadata:
  owner: [[{$patch: replace}], {a: {$patch: delete}}]
",
    );
    assert_snapshot(report(&sb), snapshot_file("directives-misplaced.txt"));
}

/// A mapping key that reads as a number is a key: its path is
/// `metadata.2024`, not an index, and a directive below it is judged as one
/// in a mapping (issue 22: the directive checks took it for a list index).
#[test]
fn a_numeric_mapping_key_is_a_key_not_an_index() {
    let sb = Sandbox::new();
    sb.write(
        "team",
        "writer.yaml",
        "metadata:\n  \"2024\":\n    $patch: delte\n",
    );
    let run = sb.pin(&["validate"], "directives-numeric-mapping-key.txt");
    assert_eq!(run.code, Some(1), "{run:#?}");
    let json = sb.run(&["validate", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(v["diagnostics"][0]["field"], "metadata.2024.$patch");
}
