//! The command line: output shapes users and scripts depend on, exit codes,
//! and the commands built on provenance (`explain`, `show --origins`,
//! `export`, `new`), completions and the man page.

use serde_json::{Value, json};

use crate::it::support::{Sandbox, assert_snapshot, entries, snapshot_file, visible_escapes};

/// The three-layer skill `writer` and the base-only skill `reviewer`.
fn demo() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\ndescription: base description\nauthor: core\n\
         trigger_keywords: [base-kw]\nreferences:\n  - {name: style, url: base-style}\n\
         metadata:\n  limits: {max_tokens: 1000, temperature: 0.2}\n---\n\n# Writer\n",
    );
    sb.write("base", "reviewer.yaml", "description: Reviews code.\n");
    sb.write(
        "team",
        "writer.yaml",
        "description: team description\ntrigger_keywords: [docs]\nmetadata:\n  limits:\n    temperature: 0.4\n",
    );
    sb.write(
        "user",
        "writer.toml",
        "author = \"me\"\n\n[[references]]\nname = \"style\"\nurl = \"user-style\"\n",
    );
    sb
}

#[test]
fn list_layered_table_then_count() {
    let run = demo().run(&["list", "--layered"]);
    assert_snapshot(run.ok(), snapshot_file("cli-list-layered.txt"));
}

#[test]
fn list_layered_json_is_sorted_with_layers_and_a_digest_of_the_show_json() {
    let sb = demo();
    let v = sb.run(&["list", "--layered", "--json"]).json();
    let list = v["skills"].as_array().unwrap();
    assert_eq!(list.len(), 2);
    assert_eq!(list[0]["skill"], "reviewer");
    assert_eq!(list[0]["layers"], json!(["base"]));
    assert_eq!(list[1]["skill"], "writer");
    assert_eq!(list[1]["layers"], json!(["base", "team", "user"]));
    // The digest is the sha256 of exactly what `show` prints.
    let show = sb.run(&["show", "writer"]).ok().to_owned();
    let digest = list[1]["digest"].as_str().unwrap();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 7 + 64,
        "{digest}"
    );
    let sb2 = demo();
    sb2.write("user", "writer.toml", "author = \"someone else\"\n");
    let v2 = sb2.run(&["list", "--layered", "--json"]).json();
    assert_ne!(
        v2["skills"][1]["digest"], list[1]["digest"],
        "a changed skill changes its digest"
    );
    assert_eq!(
        v2["skills"][0]["digest"], list[0]["digest"],
        "an unchanged skill keeps its digest"
    );
    assert!(!show.is_empty());
}

#[test]
fn plain_list_shows_names_with_effective_descriptions() {
    let run = demo().run(&["list"]);
    assert_snapshot(run.ok(), snapshot_file("cli-list.txt"));
}

#[test]
fn empty_layers_say_so_and_name_the_directories_searched() {
    let sb = Sandbox::new();
    let run = sb.run(&["list", "--layered"]);
    assert_snapshot(run.success(), snapshot_file("cli-list-no-layers.txt"));
    // None of them exists: a warning says so, and stdout stays the answer.
    assert_snapshot(&run.stderr, snapshot_file("cli-list-no-layers.stderr"));
    let run = sb.run(&["list", "--layered", "--json"]);
    let v: Value = serde_json::from_str(run.success()).unwrap();
    assert_eq!(v["skills"], json!([]));
}

#[test]
fn show_prints_canonical_json_sorted_two_space_trailing_newline() {
    let out = demo().run(&["show", "writer"]).ok().to_owned();
    assert!(!out.ends_with("\n\n"));
    assert_snapshot(&out, snapshot_file("cli-show-writer.json"));
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["description"], "team description");
    assert_eq!(
        v["metadata"],
        json!({"limits": {"max_tokens": 1000, "temperature": 0.4}})
    );
    assert_eq!(
        v["references"],
        json!([{"name": "style", "url": "user-style"}])
    );
    assert_eq!(v["trigger_keywords"], json!(["base-kw", "docs"]));
    assert_eq!(v["layers_present"], json!(["base", "team", "user"]));
    // Keys sorted at every depth: re-rendering sorted gives the same bytes.
    let mut resorted = serde_json::to_string_pretty(&v).unwrap();
    resorted.push('\n');
    assert_eq!(resorted, out);
}

#[test]
fn show_per_layer_prints_each_layers_fragment_after_the_result() {
    // The result, then base, team and user, each only its own fragment
    // (the user layer's has no temperature).
    let run = demo().run(&["show", "writer", "--per-layer"]);
    assert_snapshot(run.ok(), snapshot_file("cli-show-writer-per-layer.txt"));
}

#[test]
fn show_json_per_layer_is_one_document() {
    let run = demo().run(&["show", "writer", "--per-layer", "--json"]);
    run.json();
    assert_snapshot(&run.stdout, snapshot_file("cli-show-writer-per-layer.json"));
}

#[test]
fn show_origins_annotates_every_leaf_with_layer_file_and_line() {
    // Relative paths: the comments are aligned on the longest line.
    let run = demo().run_relative(&["show", "writer", "--origins"]);
    assert_snapshot(run.ok(), snapshot_file("cli-show-writer-origins.txt"));
}

/// An empty list or mapping is annotated too: with the highest layer that
/// sets it (`[]`, `{}`, or a mapping left empty), else `default`.
#[test]
fn show_origins_says_where_an_empty_list_or_mapping_comes_from() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s.yaml",
        "description: d\ntrigger_keywords: []\nmetadata: {}\n",
    );
    sb.write("user", "s.toml", "author = \"me\"\n[metadata.limits]\n");
    let run = sb.run_relative(&["show", "s", "--origins"]);
    assert_snapshot(run.ok(), snapshot_file("cli-show-origins-empty.txt"));
}

#[test]
fn explain_shows_origin_strategy_and_what_was_overridden() {
    // Each value's origin (layer, file, line; `default` for none), its
    // strategy and path, and below it what it shadowed or replaced.
    let run = demo().run_relative(&["explain", "writer"]);
    assert_snapshot(run.ok(), snapshot_file("cli-explain-writer.txt"));
}

#[test]
fn explain_narrows_to_one_value_by_field_path() {
    let sb = demo();
    // The header, the row and what it shadowed.
    let run = sb.run_relative(&["explain", "writer", "metadata.limits.temperature"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("cli-explain-writer-temperature.txt"),
    );
    let run = sb.run_relative(&["explain", "writer", "references[style]"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("cli-explain-writer-references-style.txt"),
    );
    // A mapping prefix narrows to its leaves.
    let run = sb.run_relative(&["explain", "writer", "metadata.limits"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("cli-explain-writer-metadata-limits.txt"),
    );
    // An unknown path is an error.
    let run = sb.run(&["explain", "writer", "metadata.nope"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("error-unknown-field-path.stderr"),
    );
}

#[test]
fn explain_json_is_one_deterministic_document() {
    let sb = demo();
    let a = sb.run(&["explain", "writer", "--json"]).ok().to_owned();
    let b = sb.run(&["explain", "writer", "--json"]).ok().to_owned();
    assert_eq!(a, b);
    let v: Value = serde_json::from_str(&a).unwrap();
    assert_eq!(v["skill"], "writer");
    let values = v["values"].as_array().unwrap();
    let style = values
        .iter()
        .find(|x| x["field"] == "references[style]")
        .unwrap();
    assert_eq!(style["origin"]["layer"], "user");
    assert_eq!(style["origin"]["line"], 3);
    assert_eq!(style["replaced"][0]["origin"]["layer"], "base");
    let desc = values.iter().find(|x| x["field"] == "description").unwrap();
    assert_eq!(desc["strategy"], "OVERRIDE");
    assert_eq!(desc["replaced"][0]["value"], "base description");
    assert_eq!(desc["replaced"][0]["origin"]["line"], 3);
}

#[test]
fn export_writes_show_json_per_skill_and_check_detects_every_kind_of_drift() {
    let sb = demo();
    let out = sb.path().join("manifests");
    let out_s = out.to_str().unwrap();
    sb.run(&["export", "--out", out_s]).ok();
    let show = sb.run(&["show", "writer"]).ok().to_owned();
    assert_eq!(
        std::fs::read_to_string(out.join("writer.json")).unwrap(),
        show
    );
    assert!(out.join("reviewer.json").is_file());
    let leftovers: Vec<_> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        leftovers.len(),
        3,
        "the manifests and the record, no temporary files: {leftovers:?}"
    );
    assert_snapshot(
        sb.run(&["export", "--check", out_s]).ok(),
        snapshot_file("cli-export-check-clean.txt"),
    );

    // Changed, added and removed skills all fail the check, which writes nothing.
    let gone = sb.write("base", "gone.yaml", "description: going\n");
    sb.run(&["export", "--out", out_s]).ok();
    std::fs::remove_file(gone).unwrap();
    sb.write("user", "writer.toml", "author = \"someone\"\n");
    sb.write("base", "added.yaml", "description: new\n");
    // A manifest export did not write is none of its business.
    std::fs::write(out.join("mine.json"), "{}\n").unwrap();
    let before = std::fs::read(out.join("writer.json")).unwrap();
    let run = sb.run(&["export", "--check", out_s]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    // Each of them named, the changed one with a short diff.
    assert_snapshot(run.all(), snapshot_file("cli-export-check-drift.txt"));
    assert_eq!(std::fs::read(out.join("writer.json")).unwrap(), before);
    assert!(!out.join("added.json").exists());

    // Stale files go only with --prune.
    sb.run(&["export", "--out", out_s]).ok();
    assert!(out.join("gone.json").exists());
    sb.run(&["export", "--out", out_s, "--prune"]).ok();
    assert!(!out.join("gone.json").exists());
    assert!(out.join("mine.json").exists());
    assert_snapshot(
        sb.run(&["export", "--check", out_s]).ok(),
        snapshot_file("cli-export-check-clean.txt"),
    );
}

#[test]
fn export_is_byte_identical_across_layer_roots_and_runs() {
    let a = demo();
    let b = demo();
    let (oa, ob) = (a.path().join("m"), b.path().join("m"));
    a.run(&["export", "--out", oa.to_str().unwrap(), "-j", "1"])
        .ok();
    b.run(&["export", "--out", ob.to_str().unwrap(), "-j", "2"])
        .ok();
    for f in ["writer.json", "reviewer.json"] {
        assert_eq!(
            std::fs::read(oa.join(f)).unwrap(),
            std::fs::read(ob.join(f)).unwrap(),
            "{f}"
        );
    }
}

#[test]
fn export_with_a_broken_fragment_fails_and_keeps_the_committed_manifest() {
    let sb = demo();
    let out = sb.path().join("m");
    sb.run(&["export", "--out", out.to_str().unwrap()]).ok();
    let before = std::fs::read(out.join("writer.json")).unwrap();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    let run = sb.run(&["export", "--out", out.to_str().unwrap()]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_snapshot(
        run.error_report(),
        snapshot_file("cli-export-unknown-field.stderr"),
    );
    assert_eq!(std::fs::read(out.join("writer.json")).unwrap(), before);
}

#[test]
fn export_into_a_new_directory_appears_whole_and_leaves_nothing_beside_it() {
    let sb = demo();
    let parent = sb.path().join("out").join("nested");
    let out = parent.join("m");
    let run = sb.run(&["export", "--out", out.to_str().unwrap()]);
    assert_snapshot(run.ok(), snapshot_file("cli-export-new-directory.txt"));
    assert_eq!(entries(&parent), ["m"]);
    assert_eq!(
        entries(&out),
        [".bernstein-skills.json", "reviewer.json", "writer.json"]
    );
    assert_eq!(
        std::fs::read_to_string(out.join("writer.json")).unwrap(),
        sb.run(&["show", "writer"]).ok()
    );
}

#[test]
fn export_onto_a_file_fails_at_once_and_leaves_it_alone() {
    let sb = demo();
    let out = sb.write_file("m", "not a directory\n");
    let run = sb.run(&["export", "--out", out.to_str().unwrap()]);
    assert_eq!(
        run.failed(),
        "error: [ROOT]/m: cannot write: exists and is not a directory\n"
    );
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "not a directory\n");
    assert!(
        entries(sb.path()).iter().all(|n| !n.starts_with('.')),
        "{:?}",
        entries(sb.path())
    );
}

#[test]
fn new_scaffolds_each_form_with_a_modeline_and_refuses_to_overwrite() {
    let sb = demo();
    // Overrides of skills the base layer describes.
    sb.write("base", "fresh.yaml", "description: d\n");
    sb.write("base", "other.yaml", "description: d\n");
    let mut runs = String::new();
    for (form, rel, first) in [
        (
            "yaml",
            "team/fresh.yaml",
            "# yaml-language-server: $schema=",
        ),
        (
            "md",
            "user/fresh/SKILL.md",
            "---\n# yaml-language-server: $schema=",
        ),
        ("toml", "team/other.toml", "#:schema "),
    ] {
        let name = rel.rsplit('/').next().unwrap().split('.').next().unwrap();
        let name = if name == "SKILL" { "fresh" } else { name };
        let layer = &rel[..4];
        let args = ["new", name, "--layer", layer, "--form", form];
        let run = sb.run(&args);
        run.ok();
        runs.push_str(&run.transcript(&args));
        let text = std::fs::read_to_string(sb.layer(layer).join(&rel[5..])).unwrap();
        assert!(text.starts_with(first), "{form}: {text}");
        // The scaffold is a valid (empty) override, and the schema it names exists.
        sb.run(&["validate", name]).success();
        let schema = text.lines().find(|l| l.contains("schema")).unwrap();
        let rel_schema = schema.rsplit(['=', ' ']).next().unwrap();
        let dir = sb.layer(layer).join(&rel[5..]);
        assert!(
            dir.parent().unwrap().join(rel_schema).is_file(),
            "{rel_schema}"
        );
        // Never overwrite.
        let again = sb.run(&args);
        again.failed();
        runs.push_str(&again.transcript(&args));
    }
    // An existing skill in another form is not shadowed by a scaffold either.
    let args = ["new", "writer", "--layer", "team", "--form", "toml"];
    let run = sb.run(&args);
    run.failed();
    runs.push_str(&run.transcript(&args));
    assert_snapshot(runs, snapshot_file("cli-new-each-form.txt"));
    assert!(!sb.layer("team").join("writer.toml").exists());
}

#[test]
fn spec_command_names_the_file_and_lists_fields() {
    // Where the spec was found, then its fields: strategy, type, default,
    // no checks (a consumer's rules are its target's, not the merge's).
    // The same whatever the layers: the example layers' snapshot.
    let run = demo().run(&["spec"]);
    assert_snapshot(run.ok(), snapshot_file("spec.txt"));
}

#[test]
fn unknown_skill_and_bad_names_exit_one_with_one_error_line() {
    let sb = demo();
    let run = sb.run(&["show", "nope"]);
    assert_snapshot(run.failed(), snapshot_file("cli-unknown-skill.stderr"));
    let mut runs = String::new();
    for bad in ["../x", "/etc/passwd", "a/b", "..", ".hidden"] {
        let run = sb.run(&["show", bad]);
        assert_eq!(run.failed().lines().count(), 1, "{run:#?}");
        runs.push_str(&run.transcript(&["show", bad]));
    }
    assert_snapshot(runs, snapshot_file("cli-bad-skill-names.txt"));
}

#[test]
fn usage_errors_exit_two() {
    let sb = demo();
    sb.run(&["show"]).usage_error();
    sb.run(&["list", "--bogus"]).usage_error();
    sb.run(&["new", "x", "--layer", "base"]).usage_error();
}

#[test]
fn every_subcommand_has_help_with_an_example() {
    let sb = demo();
    // Each ends with an example: `bernstein skills ...`.
    let mut runs = String::new();
    for sub in [
        "list", "show", "validate", "explain", "export", "new", "spec", "schema",
    ] {
        let run = sb.run(&[sub, "--help"]);
        run.ok();
        runs.push_str(&run.transcript(&[sub, "--help"]));
    }
    assert_snapshot(runs, snapshot_file("cli-help.txt"));
}

#[test]
fn completions_and_man_page() {
    let sb = Sandbox::new();
    // Each script asks the binary, under BERNSTEIN_COMPLETE.
    for shell in ["bash", "zsh", "fish"] {
        let mut cmd = sb.bare();
        cmd.args(["completions", shell]);
        let out = sb.run_cmd(cmd);
        assert_snapshot(
            out.ok(),
            snapshot_file(&format!("cli-completions-{shell}.txt")),
        );
    }
    // The script asks the binary, which knows the subcommands.
    let mut cmd = sb.bare();
    cmd.env("BERNSTEIN_COMPLETE", "fish")
        .args(["--", "bernstein", "skills", "ex"]);
    let out = sb.run_cmd(cmd);
    assert_snapshot(out.ok(), snapshot_file("cli-complete-ex.txt"));
    let mut cmd = sb.bare();
    cmd.arg("man");
    let out = sb.run_cmd(cmd);
    assert_snapshot(out.ok(), snapshot_file("cli-man.txt"));
}

#[test]
fn color_only_when_asked_or_on_a_terminal_and_never_with_no_color() {
    let sb = demo();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    let plain = sb.run(&["validate"]);
    assert!(!plain.stdout.contains('\x1b'), "not a terminal: no colour");
    let forced = sb.run(&["--color", "always", "validate"]);
    assert_snapshot(
        visible_escapes(&forced.stdout),
        snapshot_file("cli-validate-color-always.txt"),
    );
    let mut cmd = sb.skills_cmd(&["--color", "auto", "validate"]);
    cmd.env("NO_COLOR", "1");
    assert!(!sb.run_cmd(cmd).stdout.contains('\x1b'));
    let never = sb.run(&["--color", "never", "validate"]);
    assert!(!never.stdout.contains('\x1b'));
}

#[test]
fn global_options_work_before_or_after_the_subcommand() {
    let sb = demo();
    let before = sb.run(&["show", "writer"]).ok().to_owned();
    let mut cmd = sb.bare();
    cmd.args(["skills", "show", "writer", "--layers-root"])
        .arg(sb.root());
    assert_eq!(sb.run_cmd(cmd).ok(), before);
    let spec = crate::it::support::shipped_spec_path();
    let mut cmd = sb.bare();
    cmd.args(["skills", "list", "--spec"])
        .arg(&spec)
        .arg("--layers-root")
        .arg(sb.root());
    assert_snapshot(sb.run_cmd(cmd).ok(), snapshot_file("cli-list.txt"));
}

/// What the shell gets when it asks for completions of `bernstein WORDS`
/// (fish's protocol: one candidate a line).
fn candidates<S: AsRef<std::ffi::OsStr>>(sb: &Sandbox, words: &[S]) -> Vec<String> {
    let mut cmd = sb.bare();
    cmd.env("BERNSTEIN_COMPLETE", "fish")
        .args(["--", "bernstein"])
        .args(words);
    let run = sb.run_cmd(cmd);
    run.ok()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

/// [`candidates`] of `skills --layers-root ROOT WORDS`.
fn completions(sb: &Sandbox, words: &[&str]) -> Vec<String> {
    let root = sb.root().display().to_string();
    let mut all = vec!["skills", "--layers-root", &root];
    all.extend_from_slice(words);
    candidates(sb, &all)
}

#[test]
fn completion_knows_the_skill_names_and_field_paths_in_the_layers() {
    let sb = demo();
    // The skills' names where a skill goes, its field paths after it.
    let mut got = String::new();
    for words in [
        &["show", ""][..],
        &["explain", "w"],
        &["validate", ""],
        &["new", ""],
        &["explain", "writer", "metadata."],
    ] {
        got.push_str(&format!("# {words:?}\n"));
        for c in completions(&sb, words) {
            got.push_str(&c);
            got.push('\n');
        }
    }
    assert_snapshot(got, snapshot_file("cli-completion-names-and-fields.txt"));
    // The script the recipes install asks the binary, under its own variable.
    let mut cmd = sb.bare();
    cmd.args(["completions", "bash"]);
    let script = sb.run_cmd(cmd).ok().to_owned();
    assert_snapshot(script, snapshot_file("cli-completions-bash.txt"));
}

#[test]
fn completion_reads_the_words_as_the_command_line_does() {
    let sb = demo();
    let root = sb.root().display().to_string();
    let spec = crate::it::support::shipped_spec_path()
        .display()
        .to_string();
    // `--option=value`, and a global option after the subcommand.
    let eq = candidates(
        &sb,
        &["skills", &format!("--layers-root={root}"), "show", ""],
    );
    let after = candidates(&sb, &["skills", "show", "--layers-root", &root, ""]);
    // An option's value between `explain` and the skill is not the skill.
    let fields = candidates(
        &sb,
        &[
            "skills",
            "--layers-root",
            &root,
            "explain",
            "--spec",
            &spec,
            "writer",
            "metadata.",
        ],
    );
    let mut got = String::new();
    for (what, words) in [
        ("--layers-root=ROOT show ''", eq),
        ("show --layers-root ROOT ''", after),
        (
            "--layers-root ROOT explain --spec SPEC writer metadata.",
            fields,
        ),
    ] {
        got.push_str(&format!("# {what}\n"));
        for c in words {
            got.push_str(&c);
            got.push('\n');
        }
    }
    assert_snapshot(got, snapshot_file("cli-completion-command-line.txt"));
}
