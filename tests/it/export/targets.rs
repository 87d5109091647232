//! Issue 21: targets — the merge is the design's for every skill, and each
//! consumer's rules apply where its output is made: `validate --target`,
//! `export --target` (its format, fields, renderings, translations and
//! places), switches that keep a skill out of every export or one.

use serde_json::{Value, json};

use crate::it::support::{Sandbox, assert_snapshot, public_collection, snapshot_file};

#[test]
fn the_whole_collection_exports_for_claude_code() {
    let sb = public_collection();
    let run = sb.run(&["export", "--target", "claude-code", "--out", "claude"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("targets-claude-code-collection.txt"),
    );
    assert!(sb.path().join("claude/s09/SKILL.md").is_file());
    // Nothing is refused for the standard's rules when none is asked for.
    sb.run(&["validate", "--strict"]).ok();
}

#[test]
fn the_standard_refuses_the_long_description_until_a_team_override_shortens_it() {
    let sb = public_collection();
    let run = sb.run(&["validate", "--target", "agent-skills"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_snapshot(
        run.all(),
        snapshot_file("targets-agent-skills-long-description.txt"),
    );
    let run = sb.run(&["export", "--target", "agent-skills", "--out", "std"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("targets-agent-skills-long-description-export.stderr"),
    );
    assert!(!sb.path().join("std").exists());
    sb.write(
        "team",
        "s09.yaml",
        "description: Skill number 9, shortly.\n",
    );
    sb.run(&["validate", "--target", "agent-skills", "--strict"])
        .ok();
    let run = sb.run(&["export", "--target", "agent-skills", "--out", "std"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("targets-agent-skills-collection.txt"),
    );
    let md = std::fs::read_to_string(sb.path().join("std/s09/SKILL.md")).unwrap();
    assert_eq!(
        md,
        "---\nname: s09\ndescription: Skill number 9, shortly.\n---\n\nBody 9.\n"
    );
}

#[test]
fn the_standard_gets_its_fields_only_and_metadata_as_strings() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\nmetadata:\n  limits:\n    max_tokens: 2000\n    temperature: 0.2\n  \
         owner: docs\nallowed-tools: [Read, Grep]\n---\n\nDraft.\n",
    );
    sb.run(&["export", "--target", "agent-skills", "--out", "std"])
        .ok();
    let md = std::fs::read_to_string(sb.path().join("std/writer/SKILL.md")).unwrap();
    assert_eq!(
        md,
        "---\nname: writer\ndescription: Writes.\nmetadata:\n  limits.max_tokens: \"2000\"\n  \
         limits.temperature: \"0.2\"\n  owner: docs\nallowed-tools: Read Grep\n---\n\nDraft.\n"
    );
    // Bernstein's fields go into metadata, as strings, as the standard
    // says of "additional properties not defined by the spec" (issue 30).
    sb.write(
        "team",
        "writer.yaml",
        "trigger_keywords: [prose]\nauthor: docs team\nversion: \"1.2\"\n",
    );
    sb.run(&["export", "--target", "agent-skills", "--out", "std"])
        .ok();
    let md = std::fs::read_to_string(sb.path().join("std/writer/SKILL.md")).unwrap();
    assert_eq!(
        md,
        "---\nname: writer\ndescription: Writes.\nmetadata:\n  author: docs team\n  limits.max_tokens: \
         \"2000\"\n  limits.temperature: \"0.2\"\n  owner: docs\n  trigger_keywords: \
         \"[\\\"prose\\\"]\"\n  version: \"1.2\"\nallowed-tools: Read Grep\n---\n\nDraft.\n"
    );
    // A key metadata has already keeps its value; the field is left out,
    // with a note located where it is set.
    sb.write(
        "team",
        "writer.yaml",
        "author: docs team\nmetadata: {author: someone}\n",
    );
    let run = sb.run(&["validate", "--target", "agent-skills"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("targets-agent-skills-metadata-has-the-key.txt"),
    );
}

#[test]
fn codex_reads_implicit_invocation_from_agents_openai_yaml() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "deploy/SKILL.md",
        "---\ndescription: Deploys.\ndisable-model-invocation: true\n---\n\nShip it.\n",
    );
    sb.run(&["export", "--target", "codex", "--out", "codex"])
        .ok();
    let dir = sb.path().join("codex/deploy");
    let md = std::fs::read_to_string(dir.join("SKILL.md")).unwrap();
    // Codex writes as the shared folder's target does: the frontmatter
    // keeps the flag for the folder's other readers, which Codex ignores.
    assert!(md.contains("disable-model-invocation: true"), "{md}");
    assert_eq!(
        std::fs::read_to_string(dir.join("agents/openai.yaml")).unwrap(),
        "policy:\n  allow_implicit_invocation: false\n"
    );
    // A layer's own agents/openai.yaml keeps its other settings.
    sb.write(
        "team",
        "deploy/agents/openai.yaml",
        "interface:\n  display_name: Deploy\n",
    );
    sb.write("team", "deploy/SKILL.md", "---\n---\n");
    sb.run(&["export", "--target", "codex", "--out", "codex2"])
        .ok();
    let yaml = std::fs::read_to_string(sb.path().join("codex2/deploy/agents/openai.yaml")).unwrap();
    assert_eq!(
        yaml,
        "interface:\n  display_name: Deploy\npolicy:\n  allow_implicit_invocation: false\n"
    );
}

#[test]
fn a_skill_switched_off_is_not_exported_and_its_managed_copy_goes() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "a/SKILL.md", "---\ndescription: A.\n---\n\nA.\n");
    sb.write("base", "b/SKILL.md", "---\ndescription: B.\n---\n\nB.\n");
    sb.run(&["export", "--target", "claude-code", "--out", "out"])
        .ok();
    assert!(sb.path().join("out/b/SKILL.md").is_file());
    // The team switches b off for its project.
    sb.write("team", "b.yaml", "enabled: false\n");
    let run = sb.run(&["export", "--target", "claude-code", "--out", "out"]);
    assert_eq!(
        run.ok_report(),
        "out (claude-code): 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!sb.path().join("out/b").exists());
    let listed = sb.run(&["list"]);
    assert_snapshot(listed.ok(), snapshot_file("targets-list-switched-off.txt"));
    // A user switches it back on.
    sb.write("user", "b.yaml", "enabled: true\n");
    sb.run(&["export", "--target", "claude-code", "--out", "out"])
        .ok();
    assert!(sb.path().join("out/b/SKILL.md").is_file());
    // Per target: off for codex only.
    sb.write("user", "b.yaml", "enabled: true\ntargets: {codex: false}\n");
    sb.run(&["export", "--target", "codex", "--out", "codex"])
        .ok();
    assert!(!sb.path().join("codex/b").exists());
    assert!(sb.path().join("codex/a/SKILL.md").is_file());
    let v = sb.run(&["list", "--json"]).json();
    let b = v["skills"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["skill"] == "b")
        .unwrap();
    assert_eq!(b["enabled"], true);
    assert_eq!(b["off_for"], json!([{"target": "codex", "layer": "user"}]));
}

#[test]
fn a_team_that_owns_the_switch_keeps_a_skill_off() {
    let spec = std::fs::read_to_string(crate::it::support::shipped_spec_path())
        .unwrap()
        .replace(
            "  enabled:\n    strategy: OVERRIDE\n    type: boolean\n",
            "  enabled:\n    strategy: OVERRIDE\n    type: boolean\n    layers: [base, team]\n",
        );
    let sb = Sandbox::with_spec(&spec).with_layer_dirs();
    sb.write("base", "b/SKILL.md", "---\ndescription: B.\n---\n\nB.\n");
    sb.write("team", "b.yaml", "enabled: false\n");
    sb.write("user", "b.yaml", "enabled: true\n");
    let run = sb.run(&["validate"]);
    assert_snapshot(run.all(), snapshot_file("targets-switch-owned-by-team.txt"));
}

#[test]
fn a_targets_switch_must_be_a_boolean() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "b.yaml",
        "description: B.\ntargets: {codex: no-thanks}\n",
    );
    let run = sb.run(&["validate"]);
    assert_snapshot(run.all(), snapshot_file("targets-switch-not-boolean.txt"));
}

#[test]
fn export_goes_to_the_targets_place_for_the_scope() {
    let sb = public_collection();
    // Within every shipped target's limits.
    sb.write("team", "s09.yaml", "description: Skill number 9.\n");
    let home = sb.path().join("home");
    // --scope user: the target's place below the home directory.
    let run = sb.run(&["export", "--target", "claude-code"]);
    assert_snapshot(run.ok(), snapshot_file("targets-export-user-scope.txt"));
    assert!(home.join(".claude/skills/s01/SKILL.md").is_file());
    // --scope project: below the git work tree's root.
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let mut cmd = sb.skills_cmd(&["export", "--target", "gemini-cli", "--scope", "project"]);
    cmd.current_dir(repo.join("sub"));
    let run = sb.run_cmd(cmd);
    assert_snapshot(run.ok(), snapshot_file("targets-export-project-scope.txt"));
    // Gemini CLI's project place is the shared .agents/skills (its alias of
    // .gemini/skills, as the skills installer's table has it).
    assert!(repo.join(".agents/skills/s01/SKILL.md").is_file());
    // Several targets in one run, each to its place.
    let run = sb.run(&["export", "--target", "claude-code", "--target", "agents"]);
    assert_snapshot(run.ok(), snapshot_file("targets-export-two-targets.txt"));
    // --out takes one target.
    let run = sb.run(&[
        "export",
        "--target",
        "claude-code",
        "--target",
        "agents",
        "--out",
        "x",
    ]);
    assert_snapshot(
        run.failed(),
        snapshot_file("targets-out-with-two-targets.stderr"),
    );
}

#[test]
fn targets_lists_the_shipped_targets_and_describes_one() {
    let sb = Sandbox::new();
    let run = sb.run(&["targets"]);
    assert_snapshot(run.ok(), snapshot_file("targets-list.txt"));
    let run = sb.run(&["targets", "agent-skills"]);
    assert_snapshot(run.ok(), snapshot_file("targets-agent-skills.txt"));
    let v = sb.run(&["targets", "--json"]).json();
    // The standard, the shared folder, Bernstein's manifests and the 79
    // agents of the skills installer's table (tests/it/export/agents.rs).
    assert_eq!(v["targets"].as_array().unwrap().len(), 82);
    // The message names every directory searched, whole however long
    // this machine's paths are.
    let run = sb.run(&["validate", "--target", "claud-code"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("targets-misspelt-target.stderr"),
    );
}

#[test]
fn a_bad_target_file_is_one_located_error() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "a.yaml", "description: A.\n");
    let file = sb.write_file(
        "mine.yaml",
        "version: 1\nname: mine\nfields:\n  name: {max_length: -1}\n",
    );
    let run = sb.run(&["validate", "--target", file.to_str().unwrap()]);
    let err = run.failed();
    assert_eq!(err.lines().count(), 1, "{run:#?}");
    assert_snapshot(err, snapshot_file("targets-bad-target-file.stderr"));
}

/// The bernstein target is today's JSON manifests.
#[test]
fn the_bernstein_target_writes_the_show_json() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write("base", "a.yaml", "description: A.\n");
    sb.run(&["export", "--target", "bernstein", "--out", "m"])
        .ok();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(sb.path().join("m/a.json")).unwrap())
            .unwrap();
    assert_eq!(written, sb.resolve_value("a"));
}

/// Claude Code 2.1.186's keys are written for it, and kept in metadata for
/// the standard (issue 30).
#[test]
fn claude_codes_newer_keys_are_written() {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "pdf/SKILL.md",
        "---\ndescription: PDF.\n---\n\nBody.\n",
    );
    sb.write(
        "team",
        "pdf.yaml",
        "display-name: PDF tables\ndefault-enabled: false\n",
    );
    sb.run(&["export", "--target", "claude-code", "--out", "cc"])
        .ok();
    let md = std::fs::read_to_string(sb.path().join("cc/pdf/SKILL.md")).unwrap();
    assert!(
        md.contains("\ndisplay-name: PDF tables\n") && md.contains("\ndefault-enabled: false\n"),
        "{md}"
    );
    sb.run(&["export", "--target", "agent-skills", "--out", "std"])
        .ok();
    let md = std::fs::read_to_string(sb.path().join("std/pdf/SKILL.md")).unwrap();
    assert!(
        md.contains("metadata:\n  default-enabled: \"false\"\n  display-name: PDF tables\n"),
        "{md}"
    );
    // The snake_case spelling Claude Code also reads gets a did-you-mean.
    sb.write("team", "pdf.yaml", "display_name: PDF tables\n");
    let run = sb.run(&["validate"]);
    assert_snapshot(
        run.all(),
        snapshot_file("targets-display-name-snake-case.txt"),
    );
}

/// A directory exported for a target remembers it: a check or an export
/// without it (or for another target) is refused naming the flag it was
/// exported with, and following that advice works; it never suggests a
/// `--format` that would reshape the target's export.
#[test]
fn a_check_of_a_targets_directory_names_the_target() {
    let sb = Sandbox::new().with_example("layers");
    let out = sb.path().join("out");
    let out_s = out.to_str().unwrap();
    sb.run(&["export", "--target", "claude-code", "--out", out_s])
        .ok_report();
    let run = sb.run(&["export", "--check", out_s]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stderr
            .contains("holds skills exported with --target claude-code"),
        "{run:#?}"
    );
    assert!(!run.stderr.contains("--format"), "{run:#?}");
    let run = sb.run(&["export", "--target", "codex", "--out", out_s]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("--target claude-code"), "{run:#?}");
    // The advice works.
    let run = sb.run(&["export", "--target", "claude-code", "--check", out_s]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stdout.contains("up to date"), "{run:#?}");
}
