//! Issue 45: every agent a team uses is a target, as data. The 79 agents of
//! the `skills` installer's table (a copy in
//! `tests/fixtures/agent-directories.csv`) each have one, built on a
//! shipped target (`extends`); an export lands where the table says, a
//! directory several agents read is written once and never fought over,
//! and a person is told which agents this machine has rather than guessed
//! for.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::it::support::{Run, Sandbox, assert_snapshot, snapshot_file};

/// One row of the installer's table.
struct Agent {
    name: String,
    display_name: String,
    project: String,
    /// `None`: project-only.
    user: Option<String>,
}

/// The installer's table, as published.
fn table() -> Vec<Agent> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agent-directories.csv");
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    assert_eq!(
        lines.next(),
        Some("agent,display_name,project_dir,user_dir")
    );
    lines
        .map(|line| {
            let cells: Vec<String> = line
                .split("\",\"")
                .map(|c| c.trim_matches('"').to_owned())
                .collect();
            assert_eq!(cells.len(), 4, "{line}");
            let strip = |p: &str| p.trim_end_matches('/').to_owned();
            Agent {
                name: cells[0].clone(),
                display_name: cells[1].clone(),
                project: strip(&cells[2]),
                user: (!cells[3].starts_with("N/A")).then(|| strip(&cells[3])),
            }
        })
        .collect()
}

/// A sandbox with one skill in the base layer, a git work tree `repo/` to
/// run in, and the home directory `home/`.
fn one_skill() -> (Sandbox, PathBuf) {
    let sb = Sandbox::new().with_layer_dirs();
    sb.write(
        "base",
        "hello/SKILL.md",
        "---\nname: hello\ndescription: Says hello.\n---\n\nHi.\n",
    );
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    (sb, repo)
}

/// `bernstein skills ARGS` run in `dir`.
fn run_in(sb: &Sandbox, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = sb.skills_cmd(args);
    cmd.current_dir(dir);
    sb.run_cmd(cmd)
}

/// `bernstein skills export --target T...` (each of `targets`) followed by
/// `more`, run in `dir`.
fn export_in(sb: &Sandbox, dir: &Path, targets: &[&str], more: &[&str]) -> Run {
    let mut args = vec!["export"];
    for t in targets {
        args.extend(["--target", t]);
    }
    args.extend(more);
    run_in(sb, dir, &args)
}

/// `bernstein skills --base BASE ARGS` run in `dir`: no team or user layer
/// named, so the project's own files decide.
fn run_in_project(sb: &Sandbox, dir: &Path, args: &[&str]) -> Run {
    let mut cmd = sb.bare();
    cmd.args(["skills", "--base"])
        .arg(sb.layer("base"))
        .args(args)
        .current_dir(dir);
    sb.run_cmd(cmd)
}

#[test]
fn targets_lists_every_agent_of_the_installers_table_with_both_places() {
    let sb = Sandbox::new();
    let table = table();
    assert_eq!(table.len(), 79);
    let run = sb.run(&["targets"]);
    assert_snapshot(run.ok(), snapshot_file("targets-list.txt"));
    let doc = sb.run(&["targets", "--json"]).json();
    crate::it::support::assert_output_schema("targets", &doc);
    let listed = doc["targets"].as_array().unwrap();
    assert!(listed.len() >= 79 + 3, "{}", listed.len());
    for agent in &table {
        let t = listed
            .iter()
            .find(|t| t["target"] == agent.name.as_str())
            .unwrap_or_else(|| panic!("no target {}", agent.name));
        assert_eq!(
            t["display_name"],
            agent.display_name.as_str(),
            "{}",
            agent.name
        );
        assert_eq!(t["project_place"], agent.project.as_str(), "{}", agent.name);
        assert_eq!(
            t["user_place"].as_str(),
            agent.user.as_deref(),
            "{}",
            agent.name
        );
        // Every one is data built on a shipped target, cited.
        assert!(!t["docs"].as_array().unwrap().is_empty(), "{}", agent.name);
    }
}

#[test]
fn one_skill_lands_where_the_table_says_for_every_agent_in_both_scopes() {
    let (sb, repo) = one_skill();
    let home = sb.path().join("home");
    let table = table();
    let names: Vec<&str> = table.iter().map(|a| a.name.as_str()).collect();
    // The person's places: each agent that has one (a directory several
    // read written once, for all of them).
    let run = export_in(&sb, &repo, &names, &["--scope", "user"]);
    assert_snapshot(
        run.all(),
        snapshot_file("agents-export-every-agent-user.txt"),
    );
    run.success();
    // The project's places, from a subdirectory of the work tree.
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    let run = export_in(&sb, &repo.join("sub"), &names, &["--scope", "project"]);
    assert_snapshot(
        run.ok(),
        snapshot_file("agents-export-every-agent-project.txt"),
    );
    for a in &table {
        let md = repo.join(&a.project).join("hello/SKILL.md");
        assert_eq!(
            std::fs::read_to_string(&md).unwrap_or_else(|e| panic!("{}: {e}", md.display())),
            "---\nname: hello\ndescription: Says hello.\n---\n\nHi.\n",
            "{}",
            a.name
        );
        if let Some(u) = &a.user {
            let md = home
                .join(u.strip_prefix("~/").unwrap())
                .join("hello/SKILL.md");
            assert!(md.is_file(), "{}: {}", a.name, md.display());
        }
    }
    // Nowhere else: every skill written is at a place of the table.
    let mut expected: Vec<PathBuf> = table
        .iter()
        .map(|a| repo.join(&a.project).join("hello"))
        .chain(table.iter().filter_map(|a| {
            a.user
                .as_ref()
                .map(|u| home.join(u.strip_prefix("~/").unwrap()).join("hello"))
        }))
        .collect();
    expected.sort();
    expected.dedup();
    let mut found = Vec::new();
    for root in [&repo, &home] {
        walk(root, &mut found);
    }
    found.sort();
    assert_eq!(found, expected);
    // A second run changes nothing, and an export for one reader of a
    // shared directory finds it its own.
    let run = export_in(&sb, &repo, &["cursor"], &["--scope", "project"]);
    assert_eq!(
        run.ok_report(),
        ".agents/skills (cursor): 0 written, 1 unchanged, 0 removed, 0 failed\n"
    );
}

/// Every directory named `hello` below `dir`.
fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let path = e.path();
        if e.file_type().unwrap().is_dir() {
            if e.file_name() == "hello" {
                out.push(path);
            } else {
                walk(&path, out);
            }
        }
    }
}

#[test]
fn a_directory_several_agents_read_is_written_once_and_audited_once() {
    let (sb, repo) = one_skill();
    std::fs::create_dir_all(repo.join(".bernstein")).unwrap();
    let run = export_in(
        &sb,
        &repo,
        &["cursor", "codex", "github-copilot", "claude-code", "cursor"],
        &["--scope", "project", "--json"],
    );
    let doc = run.json();
    crate::it::support::assert_output_schema("export", &doc);
    let exports = doc["exports"].as_array().unwrap();
    assert_eq!(exports.len(), 2, "{doc:#}");
    assert_eq!(exports[0]["target"], "cursor");
    assert_eq!(
        exports[0]["shared_with"],
        serde_json::json!(["codex", "github-copilot"])
    );
    assert_eq!(exports[0]["written"], serde_json::json!(["hello"]));
    assert_eq!(exports[1]["target"], "claude-code");
    // The record names what they all write as.
    let record: Value = serde_json::from_str(
        &std::fs::read_to_string(repo.join(".agents/skills/.bernstein-skills.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(record["target"], "agents");
    // The project's targets, audited: the shared directory once.
    std::fs::write(
        repo.join(".bernstein/targets.toml"),
        "targets = [\"cursor\", \"codex\", \"github-copilot\", \"claude-code\"]\n",
    )
    .unwrap();
    let run = run_in_project(&sb, &repo, &["audit"]);
    assert_snapshot(run.ok(), snapshot_file("agents-audit-shared.txt"));
}

#[test]
fn agents_that_write_a_directory_differently_never_share_it() {
    let (sb, repo) = one_skill();
    // The standard's rules and the folder's, both at .agents/skills.
    let run = export_in(
        &sb,
        &repo,
        &["claude-code", "cursor", "agent-skills"],
        &["--scope", "project"],
    );
    assert_snapshot(
        run.failed(),
        snapshot_file("agents-shared-directory-differs.stderr"),
    );
    // Refused before anything was written, the other targets included.
    assert!(!repo.join(".agents").exists());
    assert!(!repo.join(".claude").exists());
    // One directory given for both: the same refusal.
    let run = export_in(&sb, &repo, &["cursor", "agent-skills"], &["--out", "x"]);
    assert!(
        run.failed().contains("write a skill differently"),
        "{run:?}"
    );
    // Alike, one directory given takes them all.
    let run = export_in(&sb, &repo, &["cursor", "zed"], &["--out", "x"]);
    assert_eq!(
        run.ok_report(),
        "x (cursor, zed; one directory for all): 1 written, 0 unchanged, 0 removed, 0 failed\n"
    );
}

#[test]
fn audit_names_the_targets_file_when_its_targets_cannot_be_audited() {
    let (sb, repo) = one_skill();
    std::fs::create_dir_all(repo.join(".bernstein")).unwrap();
    let targets = |list: &str| {
        std::fs::write(
            repo.join(".bernstein/targets.toml"),
            format!("targets = [{list}]\n"),
        )
        .unwrap()
    };
    // A name no target has: the error is where the name is written.
    targets("\"agent\"");
    let run = run_in_project(&sb, &repo, &["audit"]);
    // (The sources come first: stdout says there are none.)
    assert_eq!(run.code, Some(1), "{run:?}");
    let err = &run.stderr;
    assert!(
        err.starts_with("error: .bernstein/targets.toml: no target 'agent'"),
        "{err}"
    );
    // Two targets that write one directory differently: the same file.
    targets("\"claude-code\", \"cursor\", \"agent-skills\"");
    let run = run_in_project(&sb, &repo, &["audit"]);
    // (The sources come first: stdout says there are none.)
    assert_eq!(run.code, Some(1), "{run:?}");
    let err = &run.stderr;
    assert!(
        err.starts_with("error: .bernstein/targets.toml: ")
            && err.contains("cursor and agent-skills"),
        "{err}"
    );
}

#[test]
fn a_skill_switched_off_for_one_reader_of_a_shared_directory_is_an_error_at_the_switch() {
    let (sb, repo) = one_skill();
    sb.write("team", "hello.yaml", "targets:\n  cursor: false\n");
    let run = export_in(
        &sb,
        &repo,
        &["cursor", "github-copilot"],
        &["--scope", "project"],
    );
    assert_snapshot(
        run.failed(),
        snapshot_file("agents-shared-directory-switch.stderr"),
    );
    assert!(!repo.join(".agents/skills/hello").exists());
    // Off for every reader: not written, no error.
    sb.write(
        "team",
        "hello.yaml",
        "targets:\n  cursor: false\n  github-copilot: false\n",
    );
    let run = export_in(
        &sb,
        &repo,
        &["cursor", "github-copilot"],
        &["--scope", "project"],
    );
    run.ok();
    assert!(!repo.join(".agents/skills/hello").exists());
}

/// A person's own targets directory in the sandbox's home.
fn own_targets(sb: &Sandbox) -> PathBuf {
    let dir = sb.path().join("home/.config/bernstein/skills/targets");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn extends_errors_are_located_at_the_key_with_the_chain() {
    let sb = Sandbox::new();
    let dir = own_targets(&sb);
    let file = |name: &str, extends: &str| {
        std::fs::write(
            dir.join(format!("{name}.yaml")),
            format!("version: 1\nname: {name}\nextends: {extends}\n"),
        )
        .unwrap();
    };
    file("typo", "agent");
    file("a", "b");
    file("b", "a");
    for i in 0..10 {
        file(&format!("d{i}"), &format!("d{}", i + 1));
    }
    file("d10", "agents");
    std::fs::write(
        dir.join("bad-base.yaml"),
        "version: 1\nname: bad-base\nfields:\n  description: {max_length: many}\n",
    )
    .unwrap();
    file("on-bad", "bad-base");
    std::fs::write(
        dir.join("nulls.yaml"),
        "version: 1\nname: nulls\nfields:\n  description: null\n",
    )
    .unwrap();
    let mut out = String::new();
    for name in ["typo", "a", "d0", "on-bad", "nulls"] {
        let args = ["targets", name];
        let run = sb.run(&args);
        assert_eq!(run.code, Some(1), "{run:?}");
        out.push_str(&run.transcript(&args));
    }
    assert_snapshot(out, snapshot_file("agents-extends-errors.txt"));
    // A listing of every target names the ones that fail, the others are
    // read once each.
    assert_eq!(sb.run(&["targets"]).code, Some(1));
}

#[test]
fn a_target_built_on_another_inherits_and_changes_what_it_says() {
    let sb = Sandbox::new().with_layer_dirs();
    let dir = own_targets(&sb);
    // A person's own `agents` builds on the shipped one of that name, and
    // every target built on `agents` has the change.
    std::fs::write(
        dir.join("agents.yaml"),
        "version: 1\nname: agents\nextends: agents\nfields:\n  description: {required: true, type: string, max_length: 20}\n  compatibility: null\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("mine.yaml"),
        "version: 1\nname: mine\nextends: cursor\ndisplay_name: Mine\nplaces: {project: .mine/skills}\n",
    )
    .unwrap();
    sb.write(
        "base",
        "hello/SKILL.md",
        "---\ndescription: Says hello, at some length.\ncompatibility: anywhere\n---\nHi.\n",
    );
    let run = sb.run(&["validate", "--target", "mine"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_snapshot(run.all(), snapshot_file("agents-extends-inherits.txt"));
    let t = &sb.run(&["targets", "mine", "--json"]).json()["targets"][0];
    assert_eq!(t["extends"], "cursor");
    assert_eq!(t["display_name"], "Mine");
    assert_eq!(t["user_place"], Value::Null);
    assert_eq!(t["project_place"], ".mine/skills");
    // It changed no rule of its base's: it writes as its base does.
    assert_eq!(t["renders_as"], "agents");
    assert_eq!(t["docs"][0], "https://www.cursor.com/docs/context/skills");
    let fields: Vec<&str> = t["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["field"].as_str().unwrap())
        .collect();
    assert!(!fields.contains(&"compatibility"), "{fields:?}");
}

#[test]
fn targets_installed_names_the_agents_this_machine_has() {
    let (sb, repo) = one_skill();
    let home = sb.path().join("home");
    for d in [".cursor", ".cline", ".config/opencode", ".agents"] {
        std::fs::create_dir_all(home.join(d)).unwrap();
    }
    let run = sb.run(&["targets", "--installed"]);
    assert_snapshot(run.ok(), snapshot_file("agents-targets-installed.txt"));
    let doc = sb.run(&["targets", "--installed", "--json"]).json();
    crate::it::support::assert_output_schema("targets", &doc);
    let names: Vec<&str> = doc["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["target"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["cline", "cursor", "opencode"]);
    assert_eq!(doc["targets"][1]["installed"], "[ROOT]/home/.cursor");
    // No target and no targets.toml: which it would choose and why, and
    // nothing written.
    let run = run_in(&sb, &repo, &["export"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("agents-export-no-target.stderr"),
    );
    // A format says what a directory holds: without one, it is no target.
    let run = run_in(&sb, &repo, &["export", "--format", "skill"]);
    assert!(
        run.failed().contains("--format says what --out DIR"),
        "{run:?}"
    );
    let run = run_in(&sb, &repo, &["sync"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        run.stderr
            .contains("`bernstein skills sync --target cline --target cursor --target opencode`"),
        "{run:?}"
    );
    assert!(!repo.join(".agents").exists() && !home.join(".cursor/skills").exists());
    // The team's targets.toml decides, installed or not.
    std::fs::create_dir_all(repo.join(".bernstein")).unwrap();
    std::fs::write(
        repo.join(".bernstein/targets.toml"),
        "targets = [\"claude-code\"]\n",
    )
    .unwrap();
    let run = run_in_project(&sb, &repo, &["export", "--scope", "project"]);
    assert!(
        run.ok().contains(".claude/skills (claude-code): 1 written"),
        "{run:?}"
    );
    assert!(!repo.join(".agents").exists());
}
