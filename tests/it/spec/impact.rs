//! `bernstein skills spec impact --against OLD_SPEC`: what a spec edit
//! changes in the layers, before it is committed.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::it::support::{Run, Sandbox, assert_snapshot, shipped_spec_path, snapshot_file};

fn shipped() -> String {
    std::fs::read_to_string(shipped_spec_path()).unwrap()
}

/// The shipped spec, edited, written into the sandbox as `file`.
fn edited(sb: &Sandbox, file: &str, edit: impl Fn(String) -> String) -> PathBuf {
    let text = shipped();
    let out = edit(text.clone());
    assert_ne!(out, text, "the edit must change the spec");
    sb.write_file(file, out)
}

/// `trigger_keywords` flipped from APPEND to OVERRIDE, as one would write it.
fn flip_keywords(text: String) -> String {
    let at = text.find("  trigger_keywords:\n").unwrap();
    let (head, tail) = text.split_at(at);
    let tail = tail
        .replacen("strategy: APPEND", "strategy: OVERRIDE", 1)
        .replacen("items: string", "type: array", 1);
    format!("{head}{tail}")
}

/// The shipped spec without the field `field` (its whole block).
fn without_field(text: String, field: &str) -> String {
    let start = text.find(&format!("\n  {field}:\n")).unwrap() + 1;
    let len = text[start + 1..]
        .find("\n  ")
        .map(|i| {
            // Skip the block's own more-indented lines.
            let mut end = start + 1 + i + 1;
            while text[end..].starts_with("    ") {
                end += text[end..].find('\n').unwrap() + 1;
            }
            end - start
        })
        .unwrap();
    format!("{}{}", &text[..start], &text[start + len..])
}

/// `spec impact --against OLD` with `--spec NEW`.
fn impact(sb: &Sandbox, new: &Path, old: &Path, extra: &[&str]) -> Run {
    let mut cmd = sb.skills_cmd(&["spec", "impact"]);
    cmd.arg("--spec")
        .arg(new)
        .arg("--against")
        .arg(old)
        .args(extra);
    sb.run_cmd(cmd)
}

/// A run that reported changes: exit 1, a report on stdout, nothing on stderr.
fn changes(run: &Run) -> &str {
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(run.stderr, "", "{run:#?}");
    &run.stdout
}

fn layers() -> Sandbox {
    let sb = Sandbox::new();
    // Keywords in two layers: the flip changes it.
    sb.write(
        "base",
        "two.yaml",
        "description: Two.\ntrigger_keywords: [a, b]\n",
    );
    sb.write("user", "two.yaml", "trigger_keywords: [c]\n");
    // Keywords in one layer: the flip changes nothing.
    sb.write(
        "base",
        "one/SKILL.md",
        "---\ntrigger_keywords: [x]\nauthor: me\n---\n# One\n",
    );
    sb.write("team", "one.yaml", "# team override\nauthor: team\n");
    sb
}

#[test]
fn the_same_spec_changes_nothing_and_exits_0() {
    let sb = layers();
    let spec = shipped_spec_path();
    let out = impact(&sb, &spec, &spec, &[]).ok().to_owned();
    assert_snapshot(&out, snapshot_file("spec_impact-same-spec.txt"));
    assert!(!out.contains("changed:"), "{out}");
    // A copy of it, too: the files are compared by their effect, not their bytes.
    let copy = sb.write_file("old.yaml", format!("# an old comment\n{}", shipped()));
    impact(&sb, &spec, &copy, &[]).ok();
}

#[test]
fn a_strategy_flip_lists_the_changed_skills_with_diffs() {
    let sb = layers();
    let new = edited(&sb, "new.yaml", flip_keywords);
    let run = impact(&sb, &new, &shipped_spec_path(), &[]);
    let out = changes(&run);
    assert_snapshot(out, snapshot_file("spec_impact-flip.txt"));
    assert!(!out.contains("changed: one"), "{out}");
    // And back: the list grows again.
    let back = impact(&sb, &shipped_spec_path(), &new, &[]);
    assert_snapshot(changes(&back), snapshot_file("spec_impact-flip-back.txt"));
}

#[test]
fn a_removed_field_makes_the_fragments_that_set_it_invalid_located() {
    let sb = layers();
    let new = edited(&sb, "new.yaml", |t| without_field(t, "author"));
    let run = impact(&sb, &new, &shipped_spec_path(), &[]);
    // Both fragments that set an author become invalid, located; `two`
    // sets no author: its effective skill loses the (empty) field.
    assert_snapshot(
        changes(&run),
        snapshot_file("spec_impact-removed-field.txt"),
    );
}

#[test]
fn an_added_field_makes_fragments_valid() {
    let sb = layers();
    sb.write("user", "one.yaml", "owners: [me]\n");
    let new = edited(&sb, "new.yaml", |t| {
        t.replacen(
            "fields:\n",
            "fields:\n  owners:\n    strategy: APPEND\n    items: string\n",
            1,
        )
    });
    let run = impact(&sb, &new, &shipped_spec_path(), &[]);
    // `one` failed under the old spec, so only `two` can be compared: it
    // gains the empty list.
    assert_snapshot(changes(&run), snapshot_file("spec_impact-added-field.txt"));
}

#[test]
fn json_is_one_document_with_the_counts() {
    let sb = layers();
    let new = edited(&sb, "new.yaml", |t| {
        flip_keywords(without_field(t, "author"))
    });
    let run = impact(&sb, &new, &shipped_spec_path(), &["--json", "-j", "2"]);
    let v: Value = serde_json::from_str(changes(&run)).expect("stdout is JSON");
    assert_eq!(v["skills"], 2);
    assert_eq!(
        v["summary"],
        serde_json::json!({"skills": 2, "changed": 1, "became_invalid": 2, "became_valid": 0, "failing_both": 0})
    );
    assert_eq!(v["changed"][0]["skill"], "two");
    assert_eq!(
        v["changed"][0]["fields"],
        serde_json::json!(["author", "trigger_keywords"])
    );
    assert!(v["changed"][0]["diff"].as_array().unwrap().len() >= 3);
    let invalid = &v["became_invalid"][1];
    assert_eq!(invalid["skill"], "one");
    assert_eq!(invalid["layer"], "team");
    assert_eq!(invalid["line"], 2);
    assert_eq!(invalid["message"], "unknown field 'author'");
    assert_eq!(invalid["file"], "[ROOT]/layers/team/one.yaml");
    // Deterministic, whatever the number of threads.
    let again = impact(&sb, &new, &shipped_spec_path(), &["--json", "-j", "1"]);
    assert_eq!(again.stdout, run.stdout);

    let same = impact(&sb, &new, &new, &["--json"]).json();
    assert_eq!(same["summary"]["changed"], 0);
    assert_eq!(same["changed"], serde_json::json!([]));
}

#[test]
fn skills_failing_under_both_are_counted_not_changes() {
    let sb = layers();
    sb.write("base", "broken.yaml", "descripton: typo\n");
    let spec = shipped_spec_path();
    let run = impact(&sb, &spec, &spec, &[]);
    assert_snapshot(run.ok(), snapshot_file("spec_impact-failing-both.txt"));
}

#[test]
fn a_bad_spec_is_one_error_naming_which() {
    let sb = layers();
    let bad = sb.write_file("old.yaml", "version: 1\nfields:\n  a: {strategy: MERGE}\n");
    let err = impact(&sb, &shipped_spec_path(), &bad, &[])
        .failed()
        .to_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_snapshot(err, snapshot_file("spec_impact-bad-against.stderr"));

    let missing = sb.path().join("nope.yaml");
    let err = impact(&sb, &shipped_spec_path(), &missing, &[])
        .failed()
        .to_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_snapshot(err, snapshot_file("spec_impact-missing-against.stderr"));

    // The spec in use, and both at once.
    let err = impact(&sb, &bad, &shipped_spec_path(), &[])
        .failed()
        .to_owned();
    assert_snapshot(err, snapshot_file("spec_impact-bad-in-use.stderr"));
    let err = impact(&sb, &bad, &missing, &[]).failed().to_owned();
    assert_eq!(err.lines().count(), 2, "{err}");
    assert_snapshot(err, snapshot_file("spec_impact-bad-both.stderr"));
}

#[test]
fn a_strategy_flip_that_keeps_an_old_attribute_says_what_to_write() {
    let sb = layers();
    // APPEND to OVERRIDE with `items: string` left as it was: `items` fits
    // OVERRIDE too (the items of a list value), so the flip is one edit.
    let half = edited(&sb, "half.yaml", |t| {
        flip_keywords(t).replacen("type: array", "items: string", 1)
    });
    let run = impact(&sb, &half, &shipped_spec_path(), &[]);
    assert_snapshot(changes(&run), snapshot_file("spec_impact-half-flip.txt"));
    // KEYED_REPLACE to OVERRIDE with `keys` left: the error says whose it is.
    let keyed = edited(&sb, "keyed.yaml", |t| {
        t.replacen(
            "  references:\n    strategy: KEYED_REPLACE",
            "  references:\n    strategy: OVERRIDE",
            1,
        )
    });
    let err = impact(&sb, &keyed, &shipped_spec_path(), &[])
        .failed()
        .to_owned();
    let line = shipped()
        .lines()
        .position(|l| l == "  references:")
        .unwrap()
        + 3;
    assert_eq!(
        err,
        format!(
            "[ROOT]/keyed.yaml:{line}:5: error: the spec in use: field 'references': 'keys' is a KEYED_REPLACE attribute; for OVERRIDE write 'type: array' or remove it; 'files' is a KEYED_REPLACE attribute; for OVERRIDE remove it\n"
        )
    );
    // Every command says the same. The snapshots leave out the line and
    // column (`[..]`): they are where the shipped spec has the field.
    let mut show = sb.skills_cmd(&["show", "two"]);
    show.arg("--spec").arg(&keyed);
    assert_snapshot(
        sb.run_cmd(show).failed(),
        snapshot_file("spec_impact-show-keys-for-override.stderr"),
    );
    for (what, edit) in [
        (
            "keys-for-append",
            (
                "  references:\n    strategy: KEYED_REPLACE",
                "  references:\n    strategy: APPEND",
            ),
        ),
        (
            "type-for-deep-merge",
            (
                "  author:\n    strategy: OVERRIDE",
                "  author:\n    strategy: DEEP_MERGE",
            ),
        ),
    ] {
        let spec = edited(&sb, "other.yaml", |t| t.replacen(edit.0, edit.1, 1));
        let mut cmd = sb.skills_cmd(&["spec"]);
        cmd.arg("--spec").arg(&spec);
        assert_snapshot(
            sb.run_cmd(cmd).failed(),
            snapshot_file(&format!("spec_impact-spec-{what}.stderr")),
        );
    }
}

#[test]
fn changed_values_are_escaped_in_the_diff() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "trigger_keywords: [\"evil\\u202e\\u009b\"]\n",
    );
    sb.write("team", "s.yaml", "trigger_keywords: [ok]\n");
    let new = edited(&sb, "new.yaml", flip_keywords);
    let run = impact(&sb, &new, &shipped_spec_path(), &[]);
    let out = changes(&run);
    // The diff quotes lines of JSON text, its backslashes doubled like any
    // other: a `\u202e` written out prints unlike the character.
    assert_snapshot(out, snapshot_file("spec_impact-escaped-diff.txt"));
    assert!(
        !out.contains('\u{202e}') && !out.contains('\u{9b}'),
        "{out}"
    );
}

#[test]
fn spec_and_spec_install_still_work_and_do_not_mix_with_impact() {
    let sb = layers();
    let mut cmd = sb.skills_cmd(&["spec"]);
    cmd.arg("--spec").arg(shipped_spec_path());
    // Where the spec is and one of its fields: `spec.txt` pins the whole
    // table.
    assert_snapshot(
        sb.run_cmd(cmd).ok(),
        snapshot_file("spec_impact-spec-still-works.txt"),
    );
    let err = sb
        .run(&["spec", "--install", "impact", "--against", "x.yaml"])
        .usage_error()
        .to_owned();
    assert_snapshot(err, snapshot_file("spec_impact-install-and-impact.stderr"));
    sb.run(&["spec", "impact"]).usage_error();
}
