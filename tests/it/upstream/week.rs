//! A week of upstream releases (issue 42, "Done means"): a scripted
//! upstream collection releases once a day, and a project that takes it
//! (its team layer customising three skills, one person's note in the
//! user layer, Claude Code and Codex as its targets) runs, after each
//! release, `update --check` as text, as JSON and as Markdown, then
//! `update --yes`, and exports with `sync`. Every line of every report
//! is pinned by the day's snapshot file.

use std::path::Path;

use crate::it::support::{
    Machine, Sandbox, Upstream, assert_snapshot, commit_all, create_file, snapshot_file, stable,
    synced_project,
};

/// The collection as it is released on Sunday.
fn sunday(sb: &Sandbox) -> Upstream {
    let up = Upstream::new(sb, "up");
    up.skill(
        "pdf",
        "Reads PDF files.",
        "# PDF\n\nRead PDF files.\n\n## Quick start\n\nRun `scripts/read.py FILE`.\n\n## Forms\n\nFill them with `scripts/fill.py`.\n",
    )
    .write("pdf/scripts/read.py", "print('read')\n")
    .write("pdf/scripts/fill.py", "print('fill')\n")
    .write(
        "pdf/scripts/schemas/form.xsd",
        "<?xml version=\"1.0\"?>\n<!-- a form -->\n<xs:schema/>\n",
    )
    .skill(
        "docx",
        "Writes Word files.",
        "# DOCX\n\nWrite Word files.\n\n## Dependencies\n\npip install python-docx\n\n## Code Style Guidelines\n\nShort functions.\n",
    )
    .write("docx/scripts/pack.py", "print('pack')\n")
    .skill(
        "xlsx",
        "Reads spreadsheets.",
        "# XLSX\n\nRead spreadsheets.\n",
    )
    .skill(
        "skill-creator",
        "Creates skills.",
        "# Skill creator\n\nCreate a skill.\n",
    );
    up.commit();
    up
}

/// `bernstein skills ARGS` on `who`'s machine in `dir`, as one part of a
/// day's snapshot.
fn transcript(who: &Machine<'_>, dir: &Path, args: &[&str], up: &Upstream) -> String {
    let run = who.run(dir, args);
    if args.contains(&"--json") && !run.stdout.is_empty() {
        let json: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        crate::it::support::assert_output_schema("update", &json);
    }
    stable(&run.transcript(args), &up.commits())
}

/// After a release: the reports, the update, and the export, each in the
/// day's snapshot file; the update's exit codes are the ones a
/// scheduled job reads.
fn take(day: &str, alice: &Machine<'_>, project: &Path, up: &Upstream) {
    let mut out = String::new();
    for args in [
        &["update", "--check"][..],
        &["update", "--check", "--json"],
        &["update", "--check", "--format", "markdown"],
        &["update", "--yes"],
        &["sync"],
    ] {
        out.push_str(&transcript(alice, project, args, up));
        out.push('\n');
    }
    assert_snapshot(out, snapshot_file(&format!("upstream-week-{day}.txt")));
    let check = alice.run(project, &["update", "--check"]);
    assert_eq!(check.code, Some(0), "taken: {check:#?}");
}

#[test]
fn a_week_of_upstream_releases_is_reported_line_by_line() {
    let sb = Sandbox::new();
    let up = sunday(&sb);
    let alice = Machine::new(&sb, "alice");
    let (project, _) = synced_project(&alice, &up, &["claude-code", "codex"]);
    // The team's layer: its own pdf description and a paragraph after
    // upstream's quick start, its own docx dependencies and code style,
    // its own xlsx description.
    let team = project.join(".bernstein/skills");
    create_file(
        &team.join("pdf/SKILL.md"),
        "---\ndescription: Reads PDF files the team's way.\n---\n<!-- $patch: sections -->\n<!-- $patch: after \"Quick start\" -->\nUse the team's sample files first.\n",
    );
    create_file(
        &team.join("docx/SKILL.md"),
        "<!-- $patch: sections -->\n## Dependencies\n\nThe team's mirror has them.\n\n## Code Style Guidelines\n\nThe team's style guide.\n",
    );
    create_file(
        &team.join("xlsx.yaml"),
        "description: Reads the team's spreadsheets.\n",
    );
    // One person's note, in their own layer.
    create_file(
        &alice
            .home
            .join(".config/bernstein/skills/user/pdf/SKILL.md"),
        "<!-- $patch: sections -->\n## My notes\n<!-- $patch: add -->\n\nAsk Bob about scanned files.\n",
    );
    alice.run(&project, &["sync"]).success();
    alice.run(&project, &["validate", "--strict"]).success();
    commit_all(&project);

    // Monday: a description changes, one the team overrides.
    up.skill(
        "pdf",
        "Reads PDF files and extracts their text and tables.",
        "# PDF\n\nRead PDF files.\n\n## Quick start\n\nRun `scripts/read.py FILE`.\n\n## Forms\n\nFill them with `scripts/fill.py`.\n",
    );
    up.commit();
    take("1-description", &alice, &project, &up);
    commit_all(&project);

    // Tuesday: a section is renamed, one the team's paragraph follows.
    up.skill(
        "pdf",
        "Reads PDF files and extracts their text and tables.",
        "# PDF\n\nRead PDF files.\n\n## Getting started\n\nRun `scripts/read.py FILE`.\n\n## Forms\n\nFill them with `scripts/fill.py`.\n",
    );
    up.commit();
    take("2-rename", &alice, &project, &up);
    // The team follows the rename, as the report says.
    let pdf = team.join("pdf/SKILL.md");
    let text = std::fs::read_to_string(&pdf).unwrap();
    std::fs::write(&pdf, text.replace("Quick start", "Getting started")).unwrap();
    alice.run(&project, &["sync"]).success();
    commit_all(&project);

    // Wednesday: upstream rewrites a section the team replaced.
    up.skill(
        "docx",
        "Writes Word files.",
        "# DOCX\n\nWrite Word files.\n\n## Dependencies\n\npip install python-docx lxml\n\n## Code Style Guidelines\n\nShort functions.\n",
    );
    up.commit();
    take("3-replaced-section", &alice, &project, &up);
    commit_all(&project);

    // Thursday: scripts made executable.
    up.executable("pdf/scripts/fill.py")
        .executable("docx/scripts/pack.py");
    up.commit();
    take("4-executable", &alice, &project, &up);
    commit_all(&project);

    // Friday: a new skill whose description Codex refuses (at most 1,024
    // characters); the report says so before the lock moves, and the
    // export to Codex fails until the team shortens it.
    up.skill(
        "claude-api",
        "Builds apps with the Claude API. ".repeat(33).trim_end(),
        "# Claude API\n\nCall it.\n",
    );
    up.commit();
    take("5-too-long-for-codex", &alice, &project, &up);
    create_file(
        &team.join("claude-api.yaml"),
        "description: Builds apps with the Claude API.\n",
    );
    alice.run(&project, &["sync"]).success();
    commit_all(&project);

    // Saturday: a skill the team overrides is removed, and upstream
    // drops the section the team's style guide replaced.
    up.remove("xlsx").skill(
        "docx",
        "Writes Word files.",
        "# DOCX\n\nWrite Word files.\n\n## Dependencies\n\npip install python-docx lxml\n",
    );
    up.commit();
    take("6-removed", &alice, &project, &up);
    // The lock records what upstream removed, so that the team's xlsx
    // override, which gives it no body, stays an orphan after the update:
    // validate, list and a teammate's sync (in a fresh clone, from the
    // lock alone) say so, it is not exported, and --strict fails.
    let lock = std::fs::read_to_string(project.join(".bernstein/sources.lock")).unwrap();
    assert!(lock.contains("\nremoved = [\"xlsx\"]\n"), "{lock}");
    commit_all(&project);
    let bob = Machine::new(&sb, "bob");
    let clone = crate::it::support::clone(&sb, &project, "bob-project");
    let mut out = String::new();
    for (who, dir, args) in [
        (&alice, &project, &["validate"][..]),
        (&alice, &project, &["list"]),
        (&bob, &clone, &["sync"]),
    ] {
        out.push_str(&transcript(who, dir, args, &up));
        out.push('\n');
    }
    assert_snapshot(out, snapshot_file("upstream-week-6-removed-after.txt"));
    for (who, dir) in [(&alice, &project), (&bob, &clone)] {
        let run = who.run(dir, &["validate", "--strict"]);
        assert_eq!(run.code, Some(1), "{run:#?}");
        for place in [".claude/skills", ".agents/skills"] {
            assert!(!dir.join(place).join("xlsx").exists(), "{place}");
        }
    }
    // The team acts on the report: its style guide becomes an addition,
    // its xlsx override goes, and the export of xlsx with it.
    create_file(
        &team.join("docx/SKILL.md"),
        "<!-- $patch: sections -->\n## Dependencies\n\nThe team's mirror has them.\n\n## Code Style Guidelines\n<!-- $patch: add -->\n\nThe team's style guide.\n",
    );
    std::fs::remove_file(team.join("xlsx.yaml")).unwrap();
    alice.run(&project, &["validate", "--strict"]).success();
    alice.run(&project, &["sync", "--prune"]).success();
    commit_all(&project);
    let run = alice.run(&project, &["audit"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    for place in [".claude/skills", ".agents/skills"] {
        assert!(!project.join(place).join("xlsx").exists(), "{place}");
    }

    // The person's note is in their own view of pdf, never in the
    // directories the project commits.
    let shown = alice.run(&project, &["show", "pdf", "--json"]);
    assert!(
        shown.ok().contains("Ask Bob about scanned files."),
        "{shown:#?}"
    );
    for place in [".claude/skills", ".agents/skills"] {
        let pdf = std::fs::read_to_string(project.join(place).join("pdf/SKILL.md")).unwrap();
        assert!(!pdf.contains("Ask Bob"), "{place}: {pdf}");
        assert!(
            pdf.contains("Use the team's sample files first."),
            "{place}: {pdf}"
        );
    }
}
