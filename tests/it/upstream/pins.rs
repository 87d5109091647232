//! Upstream sources as a team uses them over weeks (issue 42): commits
//! named by a short id, pins with `update --to`, a lock that moves
//! backwards, a sources file edited by hand, a pin the default branch
//! moves past. Every case was reproduced on the build before its fix.

use crate::it::support::{
    Sandbox, Upstream, assert_snapshot, git, lock_file, run, snapshot_file, sources_file, stable,
};

/// An upstream with skill `a` at three commits (`A1.`, `A2.`, `A3.`) on
/// `main`, oldest first.
fn three_releases() -> (Sandbox, Upstream, Vec<String>) {
    let sb = Sandbox::new().with_layer_dirs();
    let up = Upstream::new(&sb, "up");
    let mut commits = Vec::new();
    for n in 1..=3 {
        up.skill("a", &format!("A{n}."), "A.\n")
            .skill("b", "B.", "B.\n");
        commits.push(up.commit());
    }
    (sb, up, commits)
}

fn locked_commit(sb: &Sandbox) -> String {
    let lock = std::fs::read_to_string(lock_file(sb)).unwrap();
    let line = lock
        .lines()
        .find(|l| l.starts_with("commit = "))
        .unwrap_or_else(|| panic!("{lock}"));
    line.trim_start_matches("commit = \"")
        .trim_end_matches('"')
        .to_owned()
}

/// Issue 42: `--ref 69c0b1a0` was refused ("couldn't find remote ref"),
/// though the docs say a branch, tag or commit.
#[test]
fn a_short_commit_id_is_resolved_and_the_full_one_locked() {
    let (sb, up, commits) = three_releases();
    let out = run(&sb, &["add", &up.url(), "--ref", &commits[0][..8]]);
    assert_snapshot(
        stable(out.success(), &up.commits()),
        snapshot_file("upstream-add-short-commit.txt"),
    );
    assert_eq!(locked_commit(&sb), commits[0]);
    let sources = std::fs::read_to_string(sources_file(&sb)).unwrap();
    assert!(
        sources.contains(&format!("ref = \"{}\"", commits[0])),
        "the full id is recorded: {sources}"
    );
    assert_eq!(run(&sb, &["show", "a"]).json()["description"], "A1.");
    // `update --to` takes one too.
    run(&sb, &["update", "a", "--to", &commits[1][..7], "--yes"]).success();
    assert_eq!(locked_commit(&sb), commits[1]);
    // An id that names no commit is one clear error.
    let err = run(&sb, &["update", "a", "--to", "0000000d", "--yes"]);
    assert_snapshot(
        stable(err.failed(), &up.commits()),
        snapshot_file("upstream-short-commit-unknown.stderr"),
    );
}

/// Issue 42: an abbreviated id that more than one commit starts with is
/// refused, naming them, never a guess.
#[test]
fn an_ambiguous_short_commit_id_is_refused_naming_the_candidates() {
    let sb = Sandbox::new().with_layer_dirs();
    let up = Upstream::new(&sb, "up");
    up.skill("a", "A.", "A.\n");
    up.commit();
    // Empty commits until two share their first four digits.
    let mut seen = std::collections::BTreeMap::new();
    let prefix = loop {
        git(&up.dir, &["commit", "-q", "--allow-empty", "-m", "x"]);
        let c = git(&up.dir, &["rev-parse", "HEAD"]);
        if let Some(_other) = seen.insert(c[..4].to_owned(), c.clone()) {
            break c[..4].to_owned();
        }
    };
    let err = run(&sb, &["add", &up.url(), "--ref", &prefix]);
    let stderr = err.failed();
    assert!(stderr.contains("ambiguous"), "{stderr}");
    assert!(!lock_file(&sb).exists());
}

/// Issue 42: after `update --to 4e6907a3 --yes`, `update --check`
/// reported the branch's newer commit and exited 1 for ever; editing
/// `skills` then made `update --yes` roll the lock back silently.
#[test]
fn a_pin_set_by_update_to_is_recorded_in_the_sources_file_and_held() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url()]).success();
    assert_eq!(locked_commit(&sb), commits[2]);
    let out = run(&sb, &["update", "a", "--to", &commits[0][..8], "--yes"]);
    // Backwards in history, and said so.
    assert_snapshot(
        stable(out.success(), &up.commits()),
        snapshot_file("upstream-update-to-back.txt"),
    );
    assert_eq!(locked_commit(&sb), commits[0]);
    let sources = std::fs::read_to_string(sources_file(&sb)).unwrap();
    assert!(
        sources.contains(&format!("ref = \"{}\"", commits[0])),
        "the pin is in sources.toml: {sources}"
    );
    // The next check respects the pin.
    let check = run(&sb, &["update", "--check"]);
    assert_eq!(check.code, Some(0), "{check:?}");
    // Editing `skills` re-locks the pinned commit, never another.
    std::fs::write(
        sources_file(&sb),
        sources.replace("[[source]]\n", "[[source]]\nskills = [\"a\"]\n"),
    )
    .unwrap();
    let err = run(&sb, &["list"]);
    assert!(err.failed().contains("update --yes"), "{err:?}");
    run(&sb, &["update", "--yes"]).success();
    assert_eq!(locked_commit(&sb), commits[0]);
    run(&sb, &["list"]).ok();
}

/// Issue 42: after changing only a source's `url` (another spelling of
/// the same repository) or its `skills`, every command asked for `update
/// --yes`, which said "up to date" and wrote nothing.
#[test]
fn update_yes_always_makes_the_lock_match_the_sources_file() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url(), "--ref", "main"]).success();
    let sources = std::fs::read_to_string(sources_file(&sb)).unwrap();
    for (what, edited) in [
        (
            "url",
            sources.replace(
                &format!("url = \"{}\"", up.url()),
                &format!("url = \"file://{}\"", up.url()),
            ),
        ),
        (
            "skills",
            sources.replace("[[source]]\n", "[[source]]\nskills = [\"b\"]\n"),
        ),
    ] {
        assert_ne!(edited, sources);
        std::fs::write(sources_file(&sb), &edited).unwrap();
        let err = run(&sb, &["list"]);
        assert!(err.failed().contains("update --yes"), "{err:?}");
        let out = run(&sb, &["update", "--yes"]);
        assert_snapshot(
            stable(out.success(), &up.commits()),
            snapshot_file(&format!("upstream-update-relock-{what}.txt")),
        );
        run(&sb, &["list"]).ok();
        assert_eq!(locked_commit(&sb), commits[2]);
        // Nothing more to do: up to date, nothing written.
        let again = run(&sb, &["update", "--yes"]);
        assert!(again.ok().contains("up to date"), "{again:?}");
        std::fs::write(sources_file(&sb), &sources).unwrap();
        run(&sb, &["update", "--yes"]).success();
    }
}

/// Issue 42: a lock that moves backwards in history is never silent: the
/// ref edited in sources.toml to an older commit shows in the report and
/// its JSON.
#[test]
fn a_lock_that_moves_backwards_says_so_in_text_and_json() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url()]).success();
    let sources = std::fs::read_to_string(sources_file(&sb)).unwrap();
    std::fs::write(
        sources_file(&sb),
        format!("{sources}ref = \"{}\"\n", commits[0]),
    )
    .unwrap();
    let json = run(&sb, &["update", "--json"]).json();
    crate::it::support::assert_output_schema("update", &json);
    assert_eq!(
        json["sources"][0]["history"],
        serde_json::json!({"relation": "backward", "commits": 2}),
        "{json:#}"
    );
    let text = run(&sb, &["update"]);
    assert!(text.ok().contains("back 2 commit(s)"), "{text:?}");
}

/// Issue 42: a source pinned to a commit said "up to date" while the
/// default branch moved past it: say it is pinned, and how far.
#[test]
fn a_pinned_source_says_how_far_the_default_branch_moved() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url(), "--ref", &commits[0]]).success();
    let out = run(&sb, &["update"]);
    assert_snapshot(
        stable(out.ok(), &up.commits()),
        snapshot_file("upstream-update-pinned.txt"),
    );
    let check = run(&sb, &["update", "--check"]);
    assert_eq!(
        check.code,
        Some(0),
        "a pin is not upstream moving: {check:?}"
    );
    let json = run(&sb, &["update", "--json"]).json();
    crate::it::support::assert_output_schema("update", &json);
    assert_eq!(
        json["sources"][0]["pin"],
        serde_json::json!({"default_branch": commits[2], "ahead": 2}),
        "{json:#}"
    );
}

/// Issue 42: `update --yes` makes the lock match `sources.toml`, or says
/// what stops it: a `skills` list naming a skill the source does not have
/// is one error naming it and what the source has, and the lock stays as
/// it was; mended, the same command writes it. A plugin named in place of
/// a path is locked again at the same commit, like any other key.
#[test]
fn update_yes_says_what_stops_it_and_writes_nothing_then() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url(), "--ref", &commits[1]]).success();
    let sources = std::fs::read_to_string(sources_file(&sb)).unwrap();
    let lock = std::fs::read_to_string(lock_file(&sb)).unwrap();
    std::fs::write(
        sources_file(&sb),
        sources.replace("[[source]]\n", "[[source]]\nskills = [\"a\", \"zz\"]\n"),
    )
    .unwrap();
    let err = run(&sb, &["update", "--yes"]);
    let stderr = err.failed();
    assert!(
        stderr.contains("no skill 'zz'") && stderr.contains("it has: a, b"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(lock_file(&sb)).unwrap(), lock);
    std::fs::write(
        sources_file(&sb),
        sources.replace("[[source]]\n", "[[source]]\nskills = [\"a\"]\n"),
    )
    .unwrap();
    run(&sb, &["update", "--yes"]).success();
    assert_eq!(locked_commit(&sb), commits[1], "a pin never moves");
    run(&sb, &["list"]).ok();
    // The collection declares a plugin; naming it is locked again at the
    // pinned commit too.
    up.write(
        ".claude-plugin/marketplace.json",
        r#"{"plugins": [{"name": "just-a", "source": "./", "skills": ["./a"]}]}"#,
    );
    let with_plugin = up.commit();
    std::fs::write(
        sources_file(&sb),
        sources
            .replace(&commits[1], &with_plugin)
            .replace("[[source]]\n", "[[source]]\nplugin = \"just-a\"\n"),
    )
    .unwrap();
    run(&sb, &["update", "--yes"]).success();
    assert_eq!(locked_commit(&sb), with_plugin);
    let listed = run(&sb, &["list", "--json"]).json();
    assert_eq!(listed["skills"].as_array().unwrap().len(), 1, "{listed:#}");
}

/// Issue 42: a lock that moves backwards is never silent, whatever moves
/// it: the branch it follows reset upstream to an older commit, too.
#[test]
fn a_branch_reset_upstream_moves_the_lock_back_and_says_so() {
    let (sb, up, commits) = three_releases();
    run(&sb, &["add", &up.url(), "--ref", "main"]).success();
    git(&up.dir, &["reset", "-q", "--hard", &commits[0]]);
    let out = run(&sb, &["update", "--yes"]);
    let text = out.success();
    assert!(
        text.contains("back 2 commit(s)") && text.contains("the lock moves backwards in history"),
        "{text}"
    );
    assert_eq!(locked_commit(&sb), commits[0]);
}

/// Issue 42, after the week: upstream removed a skill the team overrides
/// with only a description, and after `update --yes` the override was a
/// team-only skill with no body, exported into every agent with no word.
/// The lock records the removal, so the override is an orphan: validate
/// warns (and `--strict` fails), export leaves it out and says why, each
/// warning once however many targets. A copy of the skill with its body
/// in the team layer is the team's own skill; a skill upstream has again
/// is no longer recorded as removed.
#[test]
fn an_override_of_a_skill_upstream_removed_is_an_orphan_until_it_has_a_body() {
    let (sb, up, _) = three_releases();
    run(&sb, &["add", &up.url()]).success();
    sb.write("team", "b.yaml", "description: The team's B.\n");
    run(&sb, &["validate", "--strict"]).ok();
    up.remove("b");
    up.commit();
    run(&sb, &["update", "--yes"]).success();
    let lock = std::fs::read_to_string(lock_file(&sb)).unwrap();
    assert!(lock.contains("\nremoved = [\"b\"]\n"), "{lock}");
    let mut out = String::new();
    for args in [
        &["validate"][..],
        &["export", "--target", "claude-code", "--target", "codex"],
    ] {
        out.push_str(&run(&sb, args).transcript(args));
    }
    assert_snapshot(
        stable(&out, &up.commits()),
        snapshot_file("upstream-removed-override-orphan.txt"),
    );
    assert_eq!(run(&sb, &["validate", "--strict"]).code, Some(1));
    // Under --json too, once per run.
    for (command, args) in [
        (
            "export",
            &[
                "export",
                "--target",
                "claude-code",
                "--target",
                "codex",
                "--json",
            ][..],
        ),
        (
            "sync",
            &[
                "sync",
                "--target",
                "claude-code",
                "--target",
                "codex",
                "--json",
            ],
        ),
    ] {
        let doc = run(&sb, args).json();
        crate::it::support::assert_output_schema(command, &doc);
        let warnings = doc["warnings"].as_array().unwrap();
        assert_eq!(warnings.len(), 1, "{doc:#}");
        assert!(
            warnings[0]["message"]
                .as_str()
                .unwrap()
                .contains("upstream removed it from source 'up'"),
            "{doc:#}"
        );
    }
    let home = sb.path().join("home");
    for place in [".claude/skills", ".agents/skills"] {
        let dir = home.join(place);
        assert!(dir.join("a").is_dir() && !dir.join("b").exists(), "{place}");
    }
    // The listing says why, and so does its JSON.
    let listed = run(&sb, &["list"]);
    assert!(
        listed.ok().contains("not exported: upstream removed it"),
        "{listed:?}"
    );
    assert_eq!(
        run(&sb, &["list", "--json"]).json()["skills"][1]["orphan"],
        true
    );
    // Kept as the team's own: a skill with a body, exported, silent.
    std::fs::remove_file(sb.layer("team").join("b.yaml")).unwrap();
    sb.write(
        "team",
        "b/SKILL.md",
        "---\ndescription: The team's B.\n---\nB, as the team keeps it.\n",
    );
    run(&sb, &["validate", "--strict"]).ok();
    run(&sb, &["export", "--target", "claude-code"]).ok();
    assert!(home.join(".claude/skills/b/SKILL.md").is_file());
    // Upstream has it again: no longer recorded as removed.
    up.skill("b", "B.", "B.\n");
    up.commit();
    run(&sb, &["update", "--yes"]).success();
    let lock = std::fs::read_to_string(lock_file(&sb)).unwrap();
    assert!(!lock.contains("removed"), "{lock}");
}
