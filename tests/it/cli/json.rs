//! One command line: every command that prints speaks `--json` in one
//! vocabulary (docs/json.md), each document matches its schema in
//! `schemas/output/`, an error under `--json` is JSON on stdout with the
//! same exit code, and a mistyped name is answered with the nearest one.

use std::path::Path;

use serde_json::{Value, json};

use crate::it::support::{
    Run, Sandbox, assert_output_schema, assert_snapshot, output_schema, snapshot_file,
};

/// `bernstein skills --layers-root examples/layers ARGS` from the
/// repository root, as the README runs it.
fn demo(args: &[&str]) -> Run {
    let sb = Sandbox::new();
    let mut cmd = sb.bare();
    cmd.current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["skills", "--layers-root", "examples/layers"])
        .args(args);
    sb.run_cmd(cmd)
}

fn stdout_json(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("stdout is JSON ({e}): {run:#?}"))
}

/// A sandbox with a skill in every layer, a skill of files, and a problem.
fn sandbox() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "pdf/SKILL.md",
        "---\ndescription: Reads PDFs.\n---\n\n# PDF\n",
    );
    sb.write("base", "pdf/scripts/run.py", "print(1)\n");
    sb.write("team", "pdf.yaml", "trigger_keywords: [pdf]\n");
    sb.write("user", "pdf.toml", "description = \"Mine.\"\n");
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("user", "broken.yaml", "descripton: typo\n");
    sb
}

#[test]
fn every_commands_json_matches_its_schema_on_the_examples_and_a_sandbox() {
    for (schema_name, args) in [
        ("list", &["list", "--json"][..]),
        ("list", &["list", "--layered", "--json"]),
        ("validate", &["validate", "--json"]),
        ("validate", &["validate", "--spec-only", "--json"]),
        ("explain", &["explain", "writer", "--json"]),
        ("show", &["show", "writer", "--per-layer", "--json"]),
        ("show", &["show", "pdf-tables", "--files", "--json"]),
        ("spec", &["spec", "--json"]),
        ("targets", &["targets", "--json"]),
        ("targets", &["targets", "agent-skills", "--json"]),
    ] {
        let run = demo(args);
        assert_eq!(run.code, Some(0), "{args:?}: {run:#?}");
        assert_output_schema(schema_name, &stdout_json(&run));
    }

    let sb = sandbox();
    let list = sb.run(&["list", "--json"]).json_ignoring_stderr();
    assert_output_schema("list", &list);
    let broken = &list["skills"][0];
    assert_eq!(broken["skill"], "broken");
    assert!(broken["error"]["message"].is_string(), "{broken:#}");
    let validate = sb.run(&["validate", "--json"]);
    assert_eq!(validate.code, Some(1));
    assert_output_schema("validate", &stdout_json(&validate));

    let out = sb.path().join("out");
    let out = out.to_str().unwrap();
    let check = sb.run(&["export", "--check", out, "--json"]);
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert_output_schema(
        "show",
        &sb.run(&["show", "pdf", "--files", "--json"]).json(),
    );
    sb.write("user", "broken.yaml", "description: fixed\n");
    let export = sb.run(&["export", "--out", out, "--json"]);
    let doc = export.json();
    assert_output_schema("export", &doc);
    assert_eq!(
        doc["exports"][0]["written"],
        serde_json::json!(["broken", "pdf", "writer"])
    );
    assert_eq!(doc["exports"][0]["ok"], true);
    let check = sb.run(&["export", "--check", out, "--json"]).json();
    assert_output_schema("export", &check);
    assert_eq!(check["checks"][0]["up_to_date"], true);
    let new = sb
        .run(&["new", "writer", "--layer", "team", "--json"])
        .json();
    assert_output_schema("new", &new);
    let old_spec = sb.write_file(
        "old.yaml",
        std::fs::read_to_string(crate::it::support::shipped_spec_path()).unwrap(),
    );
    let impact = sb.run(&[
        "spec",
        "impact",
        "--against",
        old_spec.to_str().unwrap(),
        "--json",
    ]);
    assert_output_schema("spec-impact", &impact.json());
}

#[test]
fn the_same_thing_has_the_same_name_in_every_commands_json() {
    let sb = sandbox();
    // A file on disk is `file`, a layer directory `dir`, a skill's name
    // `skill`, a field path `field`; never `path`, `source` or `name`.
    let explain = sb.run(&["explain", "pdf", "--json"]).json();
    assert_eq!(explain["skill"], "pdf");
    assert_eq!(
        explain["layers"][0]["file"],
        "[ROOT]/layers/base/pdf/SKILL.md"
    );
    assert_eq!(explain["places"][0]["dir"], "[ROOT]/layers/base");
    assert!(
        explain["values"]
            .as_array()
            .unwrap()
            .iter()
            .any(|v| v["field"] == "description")
    );
    let per_layer = sb.run(&["show", "pdf", "--per-layer", "--json"]).json();
    assert_eq!(per_layer["skill"], "pdf");
    assert_eq!(per_layer["effective"]["description"], "Mine.");
    assert_eq!(per_layer["layers"][2]["file"], explain["layers"][2]["file"]);
    let files = sb.run(&["show", "pdf", "--files", "--json"]).json();
    assert_eq!(files["files"][0]["path"], "scripts/run.py");
    assert_eq!(
        files["files"][0]["file"],
        "[ROOT]/layers/base/pdf/scripts/run.py"
    );
    // One shape for list, with or without --layered.
    let plain = sb.run(&["list", "--json"]).json_ignoring_stderr();
    let layered = sb
        .run(&["list", "--layered", "--json"])
        .json_ignoring_stderr();
    assert_eq!(plain, layered);
    let pdf = &plain["skills"][1];
    assert_eq!(pdf["skill"], "pdf");
    assert_eq!(pdf["layers"], json!(["base", "team", "user"]));
    assert_eq!(pdf["description"], "Mine.");
    let targets = demo(&["targets", "codex", "--json"]);
    let codex = &stdout_json(&targets)["targets"][0];
    assert_eq!(codex["target"], "codex");
    assert!(codex["fields"][0]["field"].is_string());
    let spec = stdout_json(&demo(&["spec", "--json"]));
    assert!(spec["file"].as_str().unwrap().ends_with("mergespec.yaml"));
    assert_eq!(spec["found_by"], "source-tree");
    let desc = spec["fields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["field"] == "description")
        .unwrap();
    assert_eq!(desc["strategy"], "OVERRIDE");
}

#[test]
fn an_error_under_json_is_json_on_stdout_with_the_same_exit_code() {
    let sb = sandbox();
    // A located error: the file, line and column of the first problem,
    // every problem in `diagnostics`, as validate gives them.
    let run = sb.run(&["show", "broken", "--per-layer", "--json"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(run.stderr, "");
    let v = stdout_json(&run);
    assert_output_schema("show", &v);
    assert_eq!(v["error"]["file"], "[ROOT]/layers/user/broken.yaml");
    assert_eq!(v["error"]["layer"], "user");
    assert_eq!(v["error"]["line"], 1);
    assert_eq!(v["error"]["column"], 1);
    assert_eq!(v["error"]["diagnostics"][0]["severity"], "error");
    // Its kind: what a script does about it, without reading words.
    assert_eq!(v["error"]["kind"], "invalid");
    // An error with no location.
    let run = sb.run(&["explain", "nope", "--json"]);
    assert_eq!(run.code, Some(1));
    let v = stdout_json(&run);
    assert_output_schema("explain", &v);
    assert_eq!(v["error"]["file"], Value::Null);
    assert_eq!(v["error"]["kind"], "not_found");
    // Several skills, one document.
    let run = sb.run(&["show", "nope", "broken", "--json"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(
        stdout_json(&run)["error"]["diagnostics"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    // A usage error keeps exit 2.
    let run = sb.run(&["list", "--json", "--bogus"]);
    assert_eq!(run.code, Some(2), "{run:#?}");
    let v = stdout_json(&run);
    assert_output_schema("list", &v);
    assert!(v["error"]["message"].as_str().unwrap().contains("--bogus"));
    assert_eq!(v["error"]["kind"], "invalid_input");
    // An export refused: JSON on stdout, exit 1, nothing written.
    let out = sb.path().join("out");
    std::fs::create_dir_all(out.join("writer")).unwrap();
    std::fs::write(out.join("writer.json"), "mine\n").unwrap();
    sb.write("user", "broken.yaml", "description: fixed\n");
    let run = sb.run(&["export", "--out", out.to_str().unwrap(), "--json"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    let v = stdout_json(&run);
    assert_output_schema("export", &v);
    assert_eq!(v["exports"][0]["refused"][0]["skill"], "writer");
    assert_eq!(v["exports"][0]["refused"][0]["reason"], "unmanaged");
    assert_eq!(
        std::fs::read_to_string(out.join("writer.json")).unwrap(),
        "mine\n"
    );
    // Without --json, errors stay on stderr.
    let run = sb.run(&["explain", "nope"]);
    assert_eq!(run.code, Some(1));
    assert_eq!(run.stdout, "");
}

#[test]
fn an_unknown_skill_name_suggests_the_nearest() {
    let run = demo(&["show", "pdf-tabels"]);
    assert_eq!(run.code, Some(1));
    let mut runs = run.transcript(&["show", "pdf-tabels"]);
    let run = demo(&["validate", "wirter"]);
    runs.push_str(&run.transcript(&["validate", "wirter"]));
    assert_snapshot(runs, snapshot_file("json-did-you-mean.txt"));
    // Nothing close: no suggestion.
    let run = demo(&["show", "zzzzzzzz"]);
    assert!(!run.stderr.contains("did you mean"), "{run:#?}");
}

/// `bernstein ARGS` (no `skills`).
fn bernstein(args: &[&str]) -> Run {
    let sb = Sandbox::new();
    let mut cmd = sb.bare();
    cmd.args(args);
    sb.run_cmd(cmd)
}

#[test]
fn a_skills_subcommand_typed_without_skills_is_told_the_command() {
    let mut runs = String::new();
    for sub in ["list", "show", "validate", "export", "spec"] {
        let run = bernstein(&[sub]);
        runs.push_str(&format!("$ bernstein {sub}\n{}", run.usage_error()));
    }
    // Each is told `bernstein skills SUB`.
    assert_snapshot(runs, snapshot_file("json-subcommand-without-skills.txt"));
    // Not every unknown word is one.
    let run = bernstein(&["frobnicate"]);
    assert!(!run.usage_error().contains("bernstein skills"));
}

fn help(args: &[&str]) -> String {
    let run = bernstein(args);
    assert_eq!(run.code, Some(0), "{run:#?}");
    run.stdout
}

#[test]
fn help_lists_a_commands_own_options_first_and_the_global_ones_once() {
    let text = help(&["skills", "export", "--help"]);
    let own = text.find("--prune").unwrap();
    let heading = text
        .find("Global options:")
        .expect("a Global options heading");
    assert!(own < heading, "{text}");
    assert_eq!(text.matches("--layers-root <DIR>").count(), 1, "{text}");
    assert!(text[heading..].contains("--max-fragment-bytes"), "{text}");
    assert!(text[heading..].contains("--color"), "{text}");
    assert!(!text[..heading].contains("--layers-root"), "{text}");
}

#[test]
fn help_says_what_each_format_writes_and_that_validate_json_is_an_object() {
    let export = help(&["skills", "export", "--help"]);
    let out = &export[export.find("--out <DIR>").unwrap()..];
    let out = &out[..out.find("--prune").unwrap()];
    assert!(out.contains("DIR/<name>.json"), "{out}");
    assert!(out.contains("DIR/<name>/"), "{out}");
    assert!(out.contains("--format"), "{out}");
    let validate = help(&["skills", "validate", "--help"]);
    assert!(!validate.contains("JSON list"), "{validate}");
    assert!(validate.contains("JSON object"), "{validate}");
}

#[test]
fn man_writes_one_page_per_command_and_every_page_named_exists() {
    let sb = Sandbox::new();
    let dir = sb.path().join("share/man/man1");
    let mut cmd = sb.bare();
    cmd.args(["man", "--out"]).arg(&dir);
    sb.run_cmd(cmd).ok();
    let pages: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    for page in [
        "bernstein.1",
        "bernstein-skills.1",
        "bernstein-skills-list.1",
        "bernstein-skills-export.1",
        "bernstein-skills-spec-impact.1",
        "bernstein-completions.1",
    ] {
        assert!(pages.contains(&page.to_owned()), "{page} in {pages:?}");
    }
    // Every `name(1)` a page refers to is a page written.
    for page in &pages {
        let text = std::fs::read_to_string(dir.join(page))
            .unwrap()
            .replace("\\-", "-");
        for (i, _) in text.match_indices("(1)") {
            let start = text[..i]
                .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
                .map_or(0, |s| s + 1);
            let name = &text[start..i];
            if name.starts_with("bernstein") {
                assert!(
                    pages.contains(&format!("{name}.1")),
                    "{page} names {name}(1)"
                );
            }
        }
    }
    // One page on stdout.
    let export = help(&["man", "skills", "export"]);
    assert_snapshot(export, snapshot_file("json-man-skills-export.txt"));
    // A page of someone else's with one of these names is kept.
    std::fs::write(dir.join("bernstein.1"), "not ours\n").unwrap();
    let mut cmd = sb.bare();
    cmd.args(["man", "--out"]).arg(&dir);
    sb.run_cmd(cmd).failed();
    assert_eq!(
        std::fs::read_to_string(dir.join("bernstein.1")).unwrap(),
        "not ours\n"
    );
}

/// Every kind an error may have is one the schemas list, and only those:
/// a script that matches on `"kind"` sees no value its schema does not
/// name.
#[test]
fn every_error_kind_is_in_every_output_schema() {
    let kinds: Vec<Value> = bernstein_skills::ErrorKind::ALL
        .iter()
        .map(|k| Value::from(k.label()))
        .collect();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/output");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap();
        let Some(name) = name.strip_suffix(".schema.json") else {
            continue;
        };
        let enumerated = &output_schema(name)["$defs"]["error"]["properties"]["kind"]["enum"];
        assert_eq!(
            enumerated,
            &Value::from(kinds.clone()),
            "{name}.schema.json"
        );
        seen += 1;
    }
    assert!(seen >= 15, "{seen} schemas");
    // And each kind's label is what serde writes.
    for k in bernstein_skills::ErrorKind::ALL {
        assert_eq!(serde_json::to_value(k).unwrap(), k.label());
    }
}

/// Refusals of different kinds carry different `"kind"`s: a file in the
/// way, a request that cannot be read, a place that is not known.
#[test]
fn a_refusal_says_its_kind() {
    let sb = sandbox();
    let kind = |args: &[&str]| {
        let run = sb.run(args);
        assert_eq!(run.code, Some(1), "{run:#?}");
        stdout_json(&run)["error"]["kind"].clone()
    };
    assert_eq!(kind(&["new", "pdf", "--layer", "user", "--json"]), "exists");
    assert_eq!(
        kind(&["show", "writer", "pdf", "--per-layer", "--json"]),
        "invalid_input"
    );
    assert_eq!(
        kind(&["show", "writer", "--target", "nope", "--json"]),
        "not_found"
    );
}
