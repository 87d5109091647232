//! A team's project across clones and machines: what a project is (its
//! `.bernstein/`, whatever of it exists) is found the same way in every
//! work tree, a fresh clone with an empty cache gets the same skills and
//! export bytes, the user layer never reaches a directory the project
//! commits, and a CI job that never exported before can export into the
//! project's own directories.

use crate::it::support::{
    Machine, Run, Sandbox, Upstream, clone, commit_all, git, repository, synced_project, tree,
};

/// An upstream collection with two skills.
fn upstream(sb: &Sandbox) -> Upstream {
    let up = Upstream::new(sb, "up");
    up.skill("pdf", "Reads PDF files.", "# PDF\n\nRead it.\n");
    up.skill("docx", "Writes Word files.", "# DOCX\n\nWrite it.\n");
    up.commit();
    up
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
    bob.run(
        &copy,
        &["export", "--target", "claude-code", "--scope", "project"],
    )
    .success();
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

/// From an empty repository to skills in two agents, one command; a
/// teammate's first command after cloning is one command too; `audit`
/// holds what is deployed to what the lock and the layers give, on a fresh
/// clone with another home, and exits 1 on every kind of difference.
#[test]
fn one_command_installs_a_source_into_two_agents_and_audit_checks_it_anywhere() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let (project, run) = synced_project(&alice, &up, &["claude-code", "codex"]);
    for line in [
        "wrote .bernstein/sources.toml and .bernstein/sources.lock",
        "wrote .bernstein/targets.toml (targets: claude-code, codex)",
    ] {
        assert!(run.stdout.contains(line), "{line}: {run:#?}");
    }
    for file in [
        ".claude/skills/pdf/SKILL.md",
        ".claude/skills/docx/SKILL.md",
        ".agents/skills/pdf/SKILL.md",
        ".agents/skills/docx/SKILL.md",
    ] {
        assert!(project.join(file).is_file(), "{file}: {run:#?}");
    }
    assert_eq!(
        std::fs::read_to_string(project.join(".bernstein/targets.toml")).unwrap(),
        "# The targets this project exports to (`bernstein skills sync` and\n\
         # `bernstein skills audit` use them).\ntargets = [\"claude-code\", \"codex\"]\n"
    );
    // Again: nothing new, the source is not added twice.
    let run = alice.run(&project, &["sync", &up.url()]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stdout.contains("already a source"), "{run:#?}");
    assert_eq!(alice.run(&project, &["audit"]).code, Some(0));
    commit_all(&project);

    // A teammate: clone, one command.
    let bob = Machine::new(&sb, "bob");
    let copy = clone(&sb, &project, "copy");
    let run = bob.run(&copy, &["sync"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(run.stdout.contains("fetched and verified"), "{run:#?}");
    assert_eq!(tree(&copy.join(".claude")), tree(&project.join(".claude")));
    assert_eq!(
        git(&copy, &["status", "--porcelain"]),
        "",
        "nothing changed"
    );

    // CI: a fresh clone, another home, an empty cache.
    let ci = Machine::new(&sb, "ci");
    let fresh = clone(&sb, &project, "fresh");
    let run = ci.run(&fresh, &["audit"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stdout
            .contains("audit: 2 directories match what the lock and the layers give"),
        "{run:#?}"
    );
    let v = ci.run(&fresh, &["audit", "--json"]).json();
    crate::it::support::assert_output_schema("audit", &v);
    assert_eq!(v["up_to_date"], true);

    // Every kind of difference is exit 1, named.
    std::fs::write(fresh.join(".claude/skills/pdf/SKILL.md"), "hand edit\n").unwrap();
    std::fs::write(fresh.join(".claude/skills/docx/notes.md"), "hand added\n").unwrap();
    std::fs::remove_dir_all(fresh.join(".agents/skills/docx")).unwrap();
    std::fs::create_dir_all(fresh.join(".agents/skills/extra")).unwrap();
    std::fs::write(fresh.join(".agents/skills/extra/SKILL.md"), "---\n---\n").unwrap();
    let run = ci.run(&fresh, &["audit"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    for word in [
        "hand-edited: pdf",
        "hand-added: docx",
        "changed: docx",
        "extra: extra",
        "audit: 2 of 2",
    ] {
        assert!(run.stdout.contains(word), "{word}: {run:#?}");
    }
    let run = ci.run(&fresh, &["audit", "--json"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    crate::it::support::assert_output_schema("audit", &v);
    assert_eq!(v["up_to_date"], false);
    // A directory never exported is missing.
    std::fs::remove_dir_all(fresh.join(".agents")).unwrap();
    let run = ci.run(&fresh, &["audit"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(
        run.stdout
            .contains("missing: .agents/skills (codex) was never exported"),
        "{run:#?}"
    );
    // The advice works: sync exports again, but for what only a person
    // decides (a hand edit, files and skills export did not write).
    let run = ci.run(&fresh, &["sync"]);
    assert_eq!(run.code, Some(1), "a hand edit is refused: {run:#?}");
    std::fs::remove_file(fresh.join(".claude/skills/docx/notes.md")).unwrap();
    std::fs::remove_dir_all(fresh.join(".agents/skills/extra")).unwrap_or(());
    git(&fresh, &["checkout", "--", ".claude"]);
    let run = ci.run(&fresh, &["sync"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(ci.run(&fresh, &["audit"]).code, Some(0));
}

/// `sync --json` is one document: what was added, the sources checked,
/// the targets file written and each export; a sync with no target to go
/// to says how to name one.
#[test]
fn sync_speaks_json_and_asks_for_targets() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let me = Machine::new(&sb, "me");
    let project = repository(&sb, "project");
    let run = me.run(&project, &["sync", &up.url()]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stderr.contains("name them with --target"), "{run:#?}");
    let run = me.run(&project, &["sync", "--target", "claude-code", "--json"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    crate::it::support::assert_output_schema("sync", &v);
    assert_eq!(
        v["added"],
        serde_json::Value::Null,
        "added by the first run"
    );
    assert_eq!(v["targets_file"], ".bernstein/targets.toml");
    assert_eq!(v["exports"][0]["target"], "claude-code");
    assert_eq!(
        v["exports"][0]["written"],
        serde_json::json!(["docx", "pdf"])
    );
}

/// Issue 42: one typo in `sources.toml` gave the right error plus another
/// (`validate` in a project without a layer directory said "no layer
/// directory exists", listing the lock as a place it looked) and no hint
/// of the key meant. Every command says one thing: the typo, at its line
/// and column, with the key it most likely meant.
#[test]
fn one_typo_in_the_sources_file_is_one_error_with_a_did_you_mean() {
    let sb = Sandbox::new();
    let up = upstream(&sb);
    let me = Machine::new(&sb, "me");
    let project = repository(&sb, "project");
    me.run(&project, &["add", &up.url()]).ok();
    let sources = project.join(".bernstein/sources.toml");
    let good = std::fs::read_to_string(&sources).unwrap();
    for (typo, at, meant) in [
        (
            good.replace("url = ", "skils = [\"pdf\"]\nurl = "),
            ".bernstein/sources.toml:3:1: error:",
            "unknown field `skils`",
        ),
        (
            good.replace("[[source]]", "[[sources]]"),
            ".bernstein/sources.toml:1:3: error:",
            "unknown field `sources`",
        ),
        (
            format!("{good}\n[allow]\nhost = [\"github.com\"]\n"),
            ".bernstein/sources.toml:6:1: error:",
            "unknown field `host`",
        ),
    ] {
        std::fs::write(&sources, &typo).unwrap();
        let suggestion = match meant {
            "unknown field `skils`" => "(did you mean `skills`?)",
            "unknown field `sources`" => "(did you mean `source`?)",
            _ => "(did you mean `hosts`?)",
        };
        for args in [
            &["list"][..],
            &["validate"],
            &["validate", "--strict"],
            &["show", "pdf"],
            &["explain", "pdf"],
            &["export", "--target", "claude-code", "--scope", "project"],
            &["verify"],
            &["update"],
        ] {
            let run = me.run(&project, args);
            assert_eq!(run.code, Some(1), "{args:?}: {run:#?}");
            let all = format!("{}{}", run.stdout, run.stderr);
            let problems: Vec<&str> = all
                .lines()
                .filter(|l| l.contains("error") || l.contains("warning"))
                .filter(|l| !l.contains(" error(s), "))
                .collect();
            assert_eq!(problems.len(), 1, "{args:?}: {all}");
            let line = problems[0];
            assert!(
                line.starts_with(at) && line.contains(meant) && line.contains(suggestion),
                "{args:?}: {all}"
            );
        }
    }
}

/// A project on a tmpfs below `/dev` (`/dev/shm`, where a CI job may keep
/// its work trees) is a project as any other: `sync` writes its sources
/// file and lock and reads them back, and `list` and `audit` read them.
/// Only the kernel's views (`/proc`, `/sys`) and what is not a regular file
/// are refused there.
#[test]
fn a_project_on_dev_shm_is_read_as_anywhere_else() {
    let Some(sb) = Sandbox::new_in(std::path::Path::new("/dev/shm")) else {
        eprintln!("skipped: no writable /dev/shm on this machine");
        return;
    };
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let project = repository(&sb, "project");
    let run = alice.run(&project, &["sync", &up.url(), "--target", "claude-code"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(project.join(".claude/skills/pdf/SKILL.md").is_file());
    let list = alice.run(&project, &["list"]);
    assert_eq!(list.code, Some(0), "{list:#?}");
    assert!(list.stdout.contains("pdf"), "{list:#?}");
    let audit = alice.run(&project, &["audit"]);
    assert_eq!(audit.code, Some(0), "{audit:#?}");
}

/// The library's audit is the command's (issue 43): what
/// `Context::audit` returns, built from the same environment, serialises
/// to exactly the document `audit --json` prints, up to date and after
/// every kind of difference, a directory never exported included.
#[test]
fn the_librarys_audit_is_what_audit_json_prints() {
    use bernstein_skills::context::{AuditCheck, AuditOptions, Options};
    use bernstein_skills::{Context, Env, output::render};

    let sb = Sandbox::new();
    let up = upstream(&sb);
    let alice = Machine::new(&sb, "alice");
    let (project, _) = synced_project(&alice, &up, &["claude-code", "codex"]);
    // The environment the command runs in (support::Machine::run), and
    // the source tree's spec a development build uses.
    let home = alice.home.clone().into_os_string();
    let mut env = Env::from_vars(
        |k| (k == "HOME").then(|| home.clone()),
        Some(project.clone()),
    );
    env.source_tree = Some(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .canonicalize()
            .unwrap(),
    );
    let ctx = Context::new(env, Options::default());
    let same = |code: i32| {
        let run = alice.run(&project, &["audit", "--json"]);
        assert_eq!(run.code, Some(code), "{run:#?}");
        let audit = ctx.audit(&AuditOptions::default()).unwrap();
        // The same bytes, the sandbox's path named as the run names it.
        let value = serde_json::to_value(&audit).unwrap();
        let ours = render::to_json(&value).replace(&sb.path().display().to_string(), "[ROOT]");
        assert_eq!(ours, run.stdout);
        crate::it::support::assert_output_schema("audit", &value);
        audit
    };
    let audit = same(0);
    assert!(audit.up_to_date);
    assert_eq!(audit.verified.sources.len(), 1);
    assert_eq!(audit.checks.len(), 2);

    std::fs::write(project.join(".claude/skills/pdf/SKILL.md"), "hand edit\n").unwrap();
    std::fs::write(project.join(".claude/skills/docx/notes.md"), "hand added\n").unwrap();
    std::fs::remove_dir_all(project.join(".agents")).unwrap();
    let audit = same(1);
    assert!(!audit.up_to_date);
    assert_eq!(audit.differ(), 2);
    assert!(
        matches!(&audit.checks[1], AuditCheck::Missing(m) if m.target == "codex"),
        "{audit:#?}"
    );
}
