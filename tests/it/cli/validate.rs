//! `bernstein skills validate`: every problem of every file, the summary
//! line, `--json`, exit codes, `--strict`, the warnings and `--spec-only`.

use serde_json::json;

use crate::it::support::{Sandbox, assert_snapshot, snapshot_file};

/// Two broken skills in two layers, one clean one.
fn broken() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("base", "clean.yaml", "description: fine\n");
    sb.write("base", "a.yaml", "descripton: x\nauthor: 5\n");
    sb.write("user", "a.yaml", "trigger_keywords: kw\n");
    sb.write(
        "team",
        "b.toml",
        "references = [{ url = \"x\" }, \"r\", \"r\"]\n",
    );
    sb
}

#[test]
fn reports_every_problem_of_every_file_one_per_line_then_a_summary() {
    let run = broken().run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(
        run.report(),
        "[ROOT]/layers/base/a.yaml:1:1: error: unknown field 'descripton' (did you mean 'description'?)\n\
         [ROOT]/layers/base/a.yaml:2:9: error: 'author' (OVERRIDE) expects a string, got an integer\n\
         [ROOT]/layers/user/a.yaml:1:19: error: 'trigger_keywords' (APPEND) expects a list of strings, got a string\n\
         [ROOT]/layers/team/b.toml:1:15: error: entry 0 of 'references' has no key: give it one of name, id, code\n\
         [ROOT]/layers/team/b.toml:1:35: error: entry 2 of 'references' repeats the identity name=r of entry 1\n\
         5 error(s), 0 warning(s) in 4 file(s)\n"
    );
    assert!(!run.stderr.contains("panicked"));
}

#[test]
fn clean_tree_exits_zero_with_a_zero_summary() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\n");
    sb.write("user", "s/SKILL.md", "---\nauthor: me\n---\nbody\n");
    assert_eq!(
        sb.run(&["validate"]).ok_report(),
        "0 error(s), 0 warning(s) in 2 file(s)\n"
    );
    assert_eq!(
        sb.run(&["validate", "--strict"]).ok_report(),
        "0 error(s), 0 warning(s) in 2 file(s)\n"
    );
}

#[test]
fn named_skills_only() {
    let sb = broken();
    assert_eq!(
        sb.run(&["validate", "clean"]).ok_report(),
        "0 error(s), 0 warning(s) in 1 file(s)\n"
    );
    let run = sb.run(&["validate", "clean", "b"]);
    assert_eq!(run.code, Some(1));
    let mut runs = run.transcript(&["validate", "clean", "b"]);
    let run = sb.run(&["validate", "missing"]);
    assert_eq!(run.code, Some(1));
    runs.push_str(&run.transcript(&["validate", "missing"]));
    assert_snapshot(runs, snapshot_file("validate-named-skills.txt"));
}

#[test]
fn json_output() {
    let run = broken().run(&["validate", "--json"]);
    assert_eq!(run.code, Some(1));
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["errors"], 5);
    assert_eq!(v["warnings"], 0);
    assert_eq!(v["files"], 4);
    assert_eq!(v["skills"], 3);
    let diags = v["diagnostics"].as_array().unwrap();
    assert_eq!(diags.len(), 5);
    assert_eq!(
        diags[0],
        json!({
            "severity": "error",
            "file": "[ROOT]/layers/base/a.yaml",
            "layer": "base",
            "line": 1,
            "column": 1,
            "field": "descripton",
            "message": "unknown field 'descripton' (did you mean 'description'?)",
        })
    );
    assert_eq!(diags[2]["layer"], "user");
    assert_eq!(diags[2]["field"], "trigger_keywords");
    // Deterministic rendering: same bytes every run.
    assert_eq!(
        broken().run(&["validate", "--json"]).stdout.len(),
        run.stdout.len()
    );
}

#[test]
fn shadowed_form_is_a_warning_and_strict_fails_on_it() {
    let sb = Sandbox::new();
    sb.write("base", "x.yaml", "description: wins\n");
    sb.write("base", "x/SKILL.md", "---\ndescription: ignored\n---\n");
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "[ROOT]/layers/base/x/SKILL.md: warning: ignored: [ROOT]/layers/base/x.yaml takes precedence in this layer\n\
         0 error(s), 1 warning(s) in 2 file(s)\n"
    );
    let strict = sb.run(&["validate", "--strict"]);
    assert_eq!(strict.code, Some(1));
    assert_eq!(strict.stdout, run.stdout);
}

#[test]
fn name_field_differing_from_the_file_name_is_a_warning() {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "name: editor\ndescription: d\n");
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0));
    assert_eq!(
        run.report(),
        "[ROOT]/layers/base/writer.yaml:1:7: warning: 'name' is 'editor' but the file is named 'writer'\n\
         0 error(s), 1 warning(s) in 1 file(s)\n"
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
}

#[test]
fn layer_path_not_a_directory_is_a_warning() {
    let sb = Sandbox::new();
    sb.write("base", "s.yaml", "description: d\n");
    sb.write_file("layers/user", "");
    let run = sb.run(&["validate", "--json"]);
    assert_eq!(run.code, Some(0));
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(v["warnings"], 1);
    assert_eq!(v["diagnostics"][0]["file"], "[ROOT]/layers/user");
    assert_eq!(v["diagnostics"][0]["layer"], "user");
    assert_eq!(v["diagnostics"][0]["severity"], "warning");
}

#[test]
fn override_and_deep_merge_leaf_set_to_the_value_below_are_warnings() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: same\nauthor: a\nmetadata: {limits: {max: 1, t: 2}}\n",
    );
    sb.write(
        "team",
        "s.yaml",
        "description: same\nmetadata:\n  limits: {max: 1, t: 3}\n",
    );
    sb.write("user", "s.yaml", "author: b\ntrigger_keywords: [k]\n");
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "[ROOT]/layers/team/s.yaml:1:14: warning: 'description' is set to the same value as in the base layer; the override has no effect\n\
         [ROOT]/layers/team/s.yaml:3:17: warning: 'metadata.limits.max' is set to the same value as in the base layer; the override has no effect\n\
         0 error(s), 2 warning(s) in 3 file(s)\n"
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
}

#[test]
fn appended_duplicates_are_no_warning() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\ntrigger_keywords: [k]\nreferences: [{name: a}]\n",
    );
    sb.write(
        "user",
        "s.yaml",
        "trigger_keywords: [k]\nreferences: [{name: a}]\n",
    );
    assert_eq!(
        sb.run(&["validate", "--strict"]).ok_report(),
        "0 error(s), 0 warning(s) in 2 file(s)\n"
    );
}

#[test]
fn spec_only_checks_just_the_spec() {
    let sb = broken();
    let run = sb.run(&["validate", "--spec-only"]);
    assert_snapshot(run.ok(), snapshot_file("validate-spec-only.txt"));
}

/// A copy of the shipped spec with `from` replaced by `to` (once).
fn bad_spec(sb: &Sandbox, from: &str, to: &str) -> String {
    let text = std::fs::read_to_string(crate::it::support::shipped_spec_path()).unwrap();
    assert!(text.contains(from), "the shipped spec has {from:?}");
    sb.write_file("bad-spec.yaml", text.replacen(from, to, 1));
    sb.path().join("bad-spec.yaml").display().to_string()
}

#[test]
fn bad_spec_is_one_error_naming_the_spec_file_and_the_entry() {
    let cases = [
        (
            "strategy: APPEND",
            "strategy: APPPEND",
            "field 'trigger_keywords': unknown strategy 'APPPEND' (expected one of OVERRIDE, APPEND, KEYED_REPLACE, DEEP_MERGE)",
        ),
        (
            "    items: string\n    description: Words",
            "    items: string\n    colour: red\n    description: Words",
            "field 'trigger_keywords': ",
        ),
        (
            "version: 2\n",
            "version: 9\n",
            "unsupported spec version 9 (this build reads versions 1 and 2)",
        ),
    ];
    let mut runs = String::new();
    for (from, to, expected) in cases {
        runs.push_str(&format!("# {from:?} made {to:?}: {expected}\n"));
        let sb = broken();
        let spec = bad_spec(&sb, from, to);
        for args in [
            &["validate"][..],
            &["validate", "--spec-only"],
            &["show", "a"],
            &["list"],
        ] {
            let mut cmd = sb.skills_cmd(args);
            cmd.arg("--spec").arg(&spec);
            let run = sb.run_cmd(cmd);
            let stderr = run.failed();
            assert_eq!(stderr.lines().count(), 1, "{args:?}: {stderr}");
            runs.push_str(&run.transcript(&[args, &["--spec", "[ROOT]/bad-spec.yaml"]].concat()));
        }
    }
    // Each command: one error, located in the spec file, naming the entry.
    assert_snapshot(runs, snapshot_file("validate-bad-spec.txt"));
}

#[test]
fn bad_spec_unknown_attribute_names_the_attribute() {
    let sb = broken();
    let spec = bad_spec(
        &sb,
        "    items: string\n",
        "    items: string\n    colour: red\n",
    );
    let mut cmd = sb.skills_cmd(&["validate", "--spec-only"]);
    cmd.arg("--spec").arg(&spec);
    let stderr = sb.run_cmd(cmd).failed().to_owned();
    assert_snapshot(
        stderr,
        snapshot_file("validate-spec-unknown-attribute.stderr"),
    );
}

#[test]
fn bad_spec_position_is_the_offending_line() {
    let sb = Sandbox::new();
    sb.write_file(
        "spec.yaml",
        "version: 1\nfields:\n  name: {strategy: OVERRIDE}\n  tags:\n    strategy: LIST\n",
    );
    let mut cmd = sb.skills_cmd(&["validate", "--spec-only"]);
    cmd.arg("--spec").arg(sb.path().join("spec.yaml"));
    let stderr = sb.run_cmd(cmd).failed().to_owned();
    assert_snapshot(
        stderr,
        snapshot_file("validate-spec-unknown-strategy.stderr"),
    );
}

#[test]
fn missing_spec_file_is_an_error_naming_it() {
    let sb = broken();
    let mut cmd = sb.skills_cmd(&["validate"]);
    cmd.arg("--spec").arg(sb.path().join("nope.yaml"));
    let stderr = sb.run_cmd(cmd).failed().to_owned();
    assert_snapshot(stderr, snapshot_file("validate-spec-missing.stderr"));
}

#[test]
fn library_check_reports_files_skills_and_counts() {
    let sb = broken();
    let report = sb.skills().validate(None, 2);
    assert_eq!(
        (
            report.errors(),
            report.warnings(),
            report.files,
            report.skills
        ),
        (5, 0, 4, 3)
    );
    // The thread count does not change the report.
    let one = sb.skills().validate(None, 1);
    let texts = |r: &bernstein_skills::engine::Report| {
        r.diagnostics
            .iter()
            .map(|d| d.to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(texts(&one), texts(&report));
}
