//! The command line: output shapes users and scripts depend on, exit codes,
//! and the commands built on provenance (`explain`, `show --origins`,
//! `export`, `new`), completions and the man page.

use serde_json::{Value, json};

use super::support::{Sandbox, entries};

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
    let out = demo().run(&["list", "--layered"]).ok().to_owned();
    assert_eq!(
        out,
        "NAME      BASE  TEAM  USER  ORIGIN\n\
         reviewer  yes   -     -     base\n\
         writer    yes   yes   yes   base+team+user\n\
         2 skill(s)\n\
         base: [ROOT]/layers/base (from --layers-root)\n\
         team: [ROOT]/layers/team (from --layers-root)\n\
         user: [ROOT]/layers/user (from --layers-root)\n"
    );
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
    assert_eq!(
        demo().run(&["list"]).ok(),
        "NAME      DESCRIPTION\nreviewer  Reviews code.\nwriter    team description\n2 skill(s)\n"
    );
}

#[test]
fn empty_layers_say_so_and_name_the_directories_searched() {
    let sb = Sandbox::new();
    let run = sb.run(&["list", "--layered"]);
    let out = run.success();
    assert!(out.contains("no skills"), "{out}");
    for l in ["base", "team", "user"] {
        assert!(out.contains(&format!("[ROOT]/layers/{l}")), "{out}");
    }
    // None of them exists: a warning says so, and stdout stays the answer.
    assert!(
        run.stderr
            .starts_with("warning: no layer directory exists; looked at [ROOT]/layers/base"),
        "{run:#?}"
    );
    let run = sb.run(&["list", "--layered", "--json"]);
    let v: Value = serde_json::from_str(run.success()).unwrap();
    assert_eq!(v["skills"], json!([]));
}

#[test]
fn show_prints_canonical_json_sorted_two_space_trailing_newline() {
    let out = demo().run(&["show", "writer"]).ok().to_owned();
    assert!(out.ends_with("}\n") && !out.ends_with("\n\n"));
    assert!(
        out.starts_with("{\n  \"agent\": \"\",\n  \"allowed-tools\": \"\",\n"),
        "{out}"
    );
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
    let out = demo()
        .run(&["show", "writer", "--per-layer"])
        .ok()
        .to_owned();
    let base = out
        .find("# base layer ([ROOT]/layers/base/writer/SKILL.md)")
        .expect(&out);
    let team = out
        .find("# team layer ([ROOT]/layers/team/writer.yaml)")
        .expect(&out);
    let user = out
        .find("# user layer ([ROOT]/layers/user/writer.toml)")
        .expect(&out);
    assert!(base < team && team < user);
    assert!(out[user..].contains("\"url\": \"user-style\""));
    assert!(
        !out[user..].contains("temperature"),
        "a layer shows only its own fragment"
    );
}

#[test]
fn show_json_per_layer_is_one_document() {
    let v = demo()
        .run(&["show", "writer", "--per-layer", "--json"])
        .json();
    let text = v.to_string();
    assert!(
        text.contains("team description") && text.contains("user-style"),
        "{text}"
    );
}

#[test]
fn show_origins_annotates_every_leaf_with_layer_file_and_line() {
    let out = demo().run(&["show", "writer", "--origins"]).ok().to_owned();
    let line_of = |needle: &str| {
        out.lines()
            .find(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {out}"))
            .to_owned()
    };
    assert!(line_of("\"author\": \"me\"").ends_with("# user:[ROOT]/layers/user/writer.toml:1"));
    assert!(
        line_of("\"description\": \"team description\"")
            .ends_with("# team:[ROOT]/layers/team/writer.yaml:1")
    );
    assert!(line_of("\"temperature\": 0.4").ends_with("# team:[ROOT]/layers/team/writer.yaml:5"));
    assert!(
        line_of("\"max_tokens\": 1000").ends_with("# base:[ROOT]/layers/base/writer/SKILL.md:9")
    );
}

#[test]
fn explain_shows_origin_strategy_and_what_was_overridden() {
    let out = demo().run(&["explain", "writer"]).ok().to_owned();
    assert!(out.starts_with("ORIGIN"), "{out}");
    let lines: Vec<&str> = out.lines().collect();
    let at = |needle: &str| {
        lines
            .iter()
            .position(|l| l.contains(needle))
            .unwrap_or_else(|| panic!("no line with {needle}: {out}"))
    };
    let d = at("team description");
    assert!(lines[d].starts_with("team:[ROOT]/layers/team/writer.yaml:1"));
    assert!(lines[d].contains("OVERRIDE") && lines[d].contains("description"));
    assert!(
        lines[d + 1]
            .contains("shadowed: base `[ROOT]/layers/base/writer/SKILL.md:3` \"base description\""),
        "{out}"
    );
    let r = at("references[style]");
    assert!(
        lines[r].starts_with("user:[ROOT]/layers/user/writer.toml:3"),
        "{out}"
    );
    assert!(lines[r].contains("KEYED_REPLACE"));
    assert!(
        lines[r + 1].contains("replaced: base `[ROOT]/layers/base/writer/SKILL.md:7`"),
        "{out}"
    );
    let k = at("trigger_keywords[1]");
    assert!(lines[k].starts_with("team:") && lines[k].contains("APPEND"));
    let t = at("metadata.limits.temperature");
    assert!(
        lines[t].contains("DEEP_MERGE") && lines[t + 1].contains("0.2"),
        "{out}"
    );
    assert!(lines[at("assets")].starts_with("default"));
}

#[test]
fn explain_narrows_to_one_value_by_field_path() {
    let sb = demo();
    let out = sb
        .run(&["explain", "writer", "metadata.limits.temperature"])
        .ok()
        .to_owned();
    // The header, the row and what it shadowed.
    assert_eq!(out.lines().count(), 3, "{out}");
    assert!(out.contains("0.4") && out.contains("shadowed: base"));
    let out = sb
        .run(&["explain", "writer", "references[style]"])
        .ok()
        .to_owned();
    assert!(
        out.contains("user-style") && out.contains("replaced: base"),
        "{out}"
    );
    // A mapping prefix narrows to its leaves.
    let out = sb
        .run(&["explain", "writer", "metadata.limits"])
        .ok()
        .to_owned();
    assert!(
        out.contains("max_tokens") && out.contains("temperature"),
        "{out}"
    );
    // An unknown path is an error that says what exists.
    let err = sb
        .run(&["explain", "writer", "metadata.nope"])
        .failed()
        .to_owned();
    assert!(err.starts_with("error: "), "{err}");
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
    assert!(
        sb.run(&["export", "--check", out_s])
            .ok()
            .contains("up to date")
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
    let report = format!("{}{}", run.stdout, run.stderr);
    assert!(report.contains("changed: writer"), "{report}");
    assert!(report.contains("added: added"), "{report}");
    assert!(report.contains("removed: gone"), "{report}");
    assert!(
        report.contains("+") && report.contains("someone"),
        "a short diff: {report}"
    );
    assert_eq!(std::fs::read(out.join("writer.json")).unwrap(), before);
    assert!(!out.join("added.json").exists());

    // Stale files go only with --prune.
    sb.run(&["export", "--out", out_s]).ok();
    assert!(out.join("gone.json").exists());
    sb.run(&["export", "--out", out_s, "--prune"]).ok();
    assert!(!out.join("gone.json").exists());
    assert!(out.join("mine.json").exists());
    assert!(
        sb.run(&["export", "--check", out_s])
            .ok()
            .contains("up to date")
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
    assert!(
        run.stderr
            .contains("[ROOT]/layers/team/writer.yaml:1:1: error: unknown field 'descripton'"),
        "{run:#?}"
    );
    assert_eq!(std::fs::read(out.join("writer.json")).unwrap(), before);
}

#[test]
fn export_into_a_new_directory_appears_whole_and_leaves_nothing_beside_it() {
    let sb = demo();
    let parent = sb.path().join("out").join("nested");
    let out = parent.join("m");
    let run = sb.run(&["export", "--out", out.to_str().unwrap()]);
    assert!(run.ok().contains("2 written, 0 unchanged"), "{run:#?}");
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
        let run = sb.run(&["new", name, "--layer", layer, "--form", form]);
        assert!(
            run.ok().contains(&format!("created [ROOT]/layers/{rel}")),
            "{run:#?}"
        );
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
        let again = sb.run(&["new", name, "--layer", layer, "--form", form]);
        assert!(again.failed().contains("nothing was written"), "{again:#?}");
    }
    // An existing skill in another form is not shadowed by a scaffold either.
    let run = sb.run(&["new", "writer", "--layer", "team", "--form", "toml"]);
    assert!(
        run.failed().contains("already has skill 'writer'"),
        "{run:#?}"
    );
    assert!(!sb.layer("team").join("writer.toml").exists());
}

#[test]
fn spec_command_names_the_file_and_lists_fields() {
    let out = demo().run(&["spec"]).ok().to_owned();
    assert!(
        out.contains("spec/mergespec.yaml") && out.contains("version: 2"),
        "{out}"
    );
    for row in [
        "trigger_keywords          APPEND         list of string",
        "metadata                  DEEP_MERGE     mapping",
        "allowed-tools             OVERRIDE       string or list of string",
        // A consumer's rules are its target's, not the merge's.
        "description               OVERRIDE       string                      \"\"\n",
        "name                      OVERRIDE       string                      \"\"\n",
        "enabled                   OVERRIDE       boolean                     true\n",
        "\nname field: name\nenabled field: enabled\ntargets field: targets\n",
    ] {
        assert!(out.contains(row), "{out}");
    }
}

#[test]
fn unknown_skill_and_bad_names_exit_one_with_one_error_line() {
    let sb = demo();
    let err = sb.run(&["show", "nope"]).failed().to_owned();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("error: skill 'nope' not found"), "{err}");
    for bad in ["../x", "/etc/passwd", "a/b", "..", ".hidden"] {
        let err = sb.run(&["show", bad]).failed().to_owned();
        assert!(err.starts_with("error: invalid skill name"), "{bad}: {err}");
    }
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
    for sub in [
        "list", "show", "validate", "explain", "export", "new", "spec", "schema",
    ] {
        let out = sb.run(&[sub, "--help"]).ok().to_owned();
        assert!(
            out.contains("bernstein skills"),
            "{sub}: no example in --help:\n{out}"
        );
    }
}

#[test]
fn completions_and_man_page() {
    let sb = Sandbox::new();
    for shell in ["bash", "zsh", "fish"] {
        let mut cmd = sb.bare();
        cmd.args(["completions", shell]);
        let out = sb.run_cmd(cmd);
        assert!(out.ok().contains("BERNSTEIN_COMPLETE"), "{shell}");
    }
    // The script asks the binary, which knows the subcommands.
    let mut cmd = sb.bare();
    cmd.env("BERNSTEIN_COMPLETE", "fish")
        .args(["--", "bernstein", "skills", "ex"]);
    let out = sb.run_cmd(cmd);
    assert!(out.ok().contains("explain"), "{out:#?}");
    let mut cmd = sb.bare();
    cmd.arg("man");
    let out = sb.run_cmd(cmd);
    assert!(
        out.ok().starts_with(".ie") || out.stdout.contains(".TH"),
        "{out:#?}"
    );
}

#[test]
fn color_only_when_asked_or_on_a_terminal_and_never_with_no_color() {
    let sb = demo();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    let plain = sb.run(&["validate"]);
    assert!(!plain.stdout.contains('\x1b'), "not a terminal: no colour");
    let forced = sb.run(&["--color", "always", "validate"]);
    assert!(forced.stdout.contains('\x1b'), "{forced:#?}");
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
    let spec = super::support::shipped_spec_path();
    let mut cmd = sb.bare();
    cmd.args(["skills", "list", "--spec"])
        .arg(&spec)
        .arg("--layers-root")
        .arg(sb.root());
    assert!(sb.run_cmd(cmd).ok().contains("writer"));
}

/// What the shell gets when it asks for completions of `words` (fish's
/// protocol: one candidate a line).
fn completions(sb: &Sandbox, words: &[&str]) -> Vec<String> {
    let mut cmd = sb.bare();
    cmd.env("BERNSTEIN_COMPLETE", "fish")
        .args(["--", "bernstein", "skills", "--layers-root"])
        .arg(sb.root())
        .args(words);
    let run = sb.run_cmd(cmd);
    run.ok()
        .lines()
        .map(|l| l.split('\t').next().unwrap().to_owned())
        .collect()
}

#[test]
fn completion_knows_the_skill_names_and_field_paths_in_the_layers() {
    let sb = demo();
    for words in [
        &["show", ""][..],
        &["explain", "w"],
        &["validate", ""],
        &["new", ""],
    ] {
        let got = completions(&sb, words);
        assert!(got.contains(&"writer".to_owned()), "{words:?}: {got:?}");
    }
    assert!(completions(&sb, &["show", ""]).contains(&"reviewer".to_owned()));
    let fields = completions(&sb, &["explain", "writer", "metadata."]);
    assert!(
        fields.contains(&"metadata.limits.max_tokens".to_owned()),
        "{fields:?}"
    );
    // The script the recipes install asks the binary, under its own variable.
    let mut cmd = sb.bare();
    cmd.args(["completions", "bash"]);
    let script = sb.run_cmd(cmd).ok().to_owned();
    assert!(script.contains("BERNSTEIN_COMPLETE=\"bash\""), "{script}");
}
