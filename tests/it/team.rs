//! A team's project across clones and machines: what a project is (its
//! `.bernstein/`, whatever of it exists) is found the same way in every
//! work tree, a fresh clone with an empty cache gets the same skills and
//! export bytes, the user layer never reaches a directory the project
//! commits, and a CI job that never exported before can export into the
//! project's own directories.

use std::path::{Path, PathBuf};

use super::support::{Run, Sandbox, snapshot};
use super::upstream::{Upstream, git};

/// One machine: a home directory of its own (its cache, state and
/// configuration), with git on PATH.
struct Machine<'a> {
    sb: &'a Sandbox,
    home: PathBuf,
}

impl<'a> Machine<'a> {
    fn new(sb: &'a Sandbox, name: &str) -> Machine<'a> {
        let home = sb.path().join(name);
        std::fs::create_dir_all(&home).unwrap();
        Machine { sb, home }
    }

    /// `bernstein skills ARGS` run in `dir` on this machine.
    fn run(&self, dir: &Path, args: &[&str]) -> Run {
        let mut cmd = self.sb.bare();
        cmd.env("HOME", &self.home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(dir)
            .arg("skills")
            .args(args);
        self.sb.run_cmd(cmd)
    }
}

/// An upstream collection with two skills.
fn upstream(sb: &Sandbox) -> Upstream {
    let up = Upstream::new(sb, "up");
    up.skill("pdf", "Reads PDF files.", "# PDF\n\nRead it.\n");
    up.skill("docx", "Writes Word files.", "# DOCX\n\nWrite it.\n");
    up.commit();
    up
}

/// A new git repository at `sb/<name>`.
fn repository(sb: &Sandbox, name: &str) -> PathBuf {
    let dir = sb.path().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    git(&dir, &["init", "-q"]);
    dir
}

fn commit_all(dir: &Path) {
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-qm", "skills"]);
}

/// Every file below `dir` and its bytes, by its path relative to `dir`.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    snapshot(dir)
        .into_iter()
        .map(|(p, b)| (p.strip_prefix(dir).unwrap().to_path_buf(), b))
        .collect()
}

/// `git clone` of `from` into `sb/<name>`.
fn clone(sb: &Sandbox, from: &Path, name: &str) -> PathBuf {
    let to = sb.path().join(name);
    git(
        sb.path(),
        &["clone", "-q", &from.display().to_string(), name],
    );
    to
}

/// `add` in a git work tree without `.bernstein/` writes the project's
/// `.bernstein/sources.toml` and lock (never the person's configuration);
/// the project, committed without any `skills/` (git keeps no empty
/// directory), is a project in every clone: with an empty cache its skills
/// are an error that says how to fetch them, never an empty list, and
/// after `verify` the clone lists, shows and exports exactly what the
/// first work tree does.
#[test]
fn a_fresh_clone_with_only_the_lock_gets_the_same_skills() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let project = repository(&sb, "project");
    let run = alice.run(&project, &["add", &up.url()]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stdout
            .contains("wrote .bernstein/sources.toml and .bernstein/sources.lock"),
        "{run:#?}"
    );
    assert!(!alice.home.join(".config/bernstein").exists());
    assert!(!project.join(".bernstein/skills").exists());
    commit_all(&project);
    let list = alice.run(&project, &["list", "--json"]).ok().to_owned();
    let show = alice
        .run(&project, &["show", "pdf", "--json"])
        .ok()
        .to_owned();
    alice
        .run(&project, &["export", "--format", "skill", "--out", "out"])
        .ok();

    // Another machine: another home, an empty cache.
    let bob = Machine::new(&sb, "bob");
    let copy = clone(&sb, &project, "copy");
    let run = bob.run(&copy, &["list"]);
    assert_eq!(run.code, Some(1), "never an empty list: {run:#?}");
    assert!(
        run.stderr.contains("run `bernstein skills verify`"),
        "{run:#?}"
    );
    // Following the advice works.
    bob.run(&copy, &["verify"]).ok();
    // The same, but for where each machine keeps its own directories.
    let same = |run: &Run| run.ok().replace("[ROOT]/bob/", "[ROOT]/alice/");
    assert_eq!(same(&bob.run(&copy, &["list", "--json"])), list);
    assert_eq!(same(&bob.run(&copy, &["show", "pdf", "--json"])), show);
    bob.run(&copy, &["export", "--format", "skill", "--out", "out"])
        .ok();
    assert_eq!(tree(&copy.join("out")), tree(&project.join("out")));
}

/// `add` outside any git work tree writes nothing of the person's unless
/// asked (`--global`), and says so before fetching anything.
#[test]
fn add_outside_a_project_writes_the_persons_configuration_only_when_asked() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let me = Machine::new(&sb, "me");
    let nowhere = sb.path().join("nowhere");
    std::fs::create_dir_all(&nowhere).unwrap();
    let run = me.run(&nowhere, &["add", &up.url()]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("--global"), "{run:#?}");
    assert!(!me.home.join(".config").exists());
    assert!(
        !me.home.join(".cache/bernstein").exists(),
        "nothing fetched"
    );
    // Following the advice works, and says where it wrote.
    let run = me.run(&nowhere, &["add", &up.url(), "--global"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        me.home
            .join(".config/bernstein/skills/sources.toml")
            .is_file()
    );
    assert!(run.stdout.contains(".config/bernstein/skills/sources.toml"));
}

/// A user layer with a personal note, a project exporting for Claude Code
/// into its own `.claude/skills`, which the team commits: the committed
/// files come from the base and team layers only, whoever exports, so two
/// teammates never refuse each other's export; the person's own directory
/// (user scope) has their note.
#[test]
fn the_user_layer_never_reaches_a_directory_the_project_commits() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let project = repository(&sb, "project");
    alice.run(&project, &["add", &up.url()]).ok();
    let note = "---\n---\n<!-- $patch: sections -->\n## My notes\n\nAlice's.\n";
    let user = alice.home.join(".config/bernstein/skills/user/pdf");
    std::fs::create_dir_all(&user).unwrap();
    std::fs::write(user.join("SKILL.md"), note).unwrap();
    let run = alice.run(
        &project,
        &["export", "--target", "claude-code", "--scope", "project"],
    );
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stdout
            .contains("left out: personal, never in a directory the project commits"),
        "the places say which layers took part: {run:#?}"
    );
    let committed = project.join(".claude/skills/pdf/SKILL.md");
    assert!(
        !std::fs::read_to_string(&committed)
            .unwrap()
            .contains("My notes"),
        "the personal layer is not in the project's export"
    );
    // --json says which layers each export takes.
    let v = alice
        .run(
            &project,
            &[
                "export",
                "--target",
                "claude-code",
                "--scope",
                "project",
                "--json",
            ],
        )
        .json();
    assert_eq!(
        v["exports"][0]["layers"],
        serde_json::json!(["base", "team"])
    );
    // Another directory inside the work tree: the same rule.
    alice
        .run(
            &project,
            &["export", "--format", "skill", "--out", "docs/skills"],
        )
        .ok();
    let inside = std::fs::read_to_string(project.join("docs/skills/pdf/SKILL.md")).unwrap();
    assert!(!inside.contains("My notes"), "{inside}");
    // The person's own place takes every layer, theirs included.
    alice.run(&project, &["trust"]).ok();
    let run = alice.run(&project, &["export", "--target", "claude-code"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    let own = std::fs::read_to_string(alice.home.join(".claude/skills/pdf/SKILL.md")).unwrap();
    assert!(own.contains("Alice's."), "{own}");
    commit_all(&project);
    // A teammate with no notes exports the same bytes: nothing to refuse.
    let bob = Machine::new(&sb, "bob");
    let copy = clone(&sb, &project, "copy");
    bob.run(&copy, &["verify"]).ok();
    let run = bob.run(
        &copy,
        &["export", "--target", "claude-code", "--scope", "project"],
    );
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        tree(&copy.join(".claude/skills")),
        tree(&project.join(".claude/skills"))
    );
}

/// CI after an update: a fresh clone on a machine that never exported
/// (no ledger) takes the upstream release and exports into the project's
/// committed `.claude/skills`. The record there is the repository's own,
/// so its claims need no ledger; a hand edit is still refused.
#[test]
fn a_ci_job_that_never_exported_updates_the_committed_export() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let project = repository(&sb, "project");
    alice.run(&project, &["add", &up.url()]).ok();
    alice
        .run(
            &project,
            &["export", "--target", "claude-code", "--scope", "project"],
        )
        .ok();
    commit_all(&project);
    // Upstream releases.
    up.skill(
        "pdf",
        "Reads PDF files, faster.",
        "# PDF\n\nRead it fast.\n",
    );
    up.commit();
    let ci = Machine::new(&sb, "ci");
    let copy = clone(&sb, &project, "ci-copy");
    ci.run(&copy, &["update", "--yes"]).ok();
    let run = ci.run(
        &copy,
        &["export", "--target", "claude-code", "--scope", "project"],
    );
    assert_eq!(run.code, Some(0), "{run:#?}");
    let pdf = std::fs::read_to_string(copy.join(".claude/skills/pdf/SKILL.md")).unwrap();
    assert!(pdf.contains("Read it fast."), "{pdf}");
    let check = ci.run(
        &copy,
        &[
            "export",
            "--target",
            "claude-code",
            "--scope",
            "project",
            "--check",
            ".claude/skills",
        ],
    );
    assert_eq!(check.code, Some(0), "{check:#?}");
    // A hand edit in the committed directory is still refused.
    std::fs::write(copy.join(".claude/skills/docx/SKILL.md"), "hand edit\n").unwrap();
    let run = ci.run(
        &copy,
        &["export", "--target", "claude-code", "--scope", "project"],
    );
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("changed by hand"), "{run:#?}");
}
