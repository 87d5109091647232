//! What `export` owns (issue 19): an output directory such as
//! `~/.claude/skills` also holds the person's own skills and what other
//! installers put there. Export records what it wrote in
//! `DIR/.bernstein-skills.json` and creates, updates and removes only what
//! that record lists; everything else is refused by name or left alone,
//! unless a flag says otherwise. Failures are per skill, and never silent.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::it::support::{
    Run, Sandbox, assert_snapshot, copy_dir, public_collection, sha256_hex, snapshot,
    snapshot_file, two_skills,
};

const RECORD: &str = ".bernstein-skills.json";

fn read(p: impl AsRef<Path>) -> String {
    std::fs::read_to_string(p).unwrap()
}

/// Inode, modification time and size of every entry below `dir`.
fn stamps(dir: &Path) -> Vec<(PathBuf, u64, i64, i64, u64)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                todo.push(p.clone());
            }
            out.push((p, m.ino(), m.mtime(), m.mtime_nsec(), m.size()));
        }
    }
    out.sort();
    out
}

fn hand_written_skill(dir: &Path, name: &str) {
    std::fs::create_dir_all(dir.join(name)).unwrap();
    std::fs::write(
        dir.join(name).join("SKILL.md"),
        format!("---\nname: {name}\ndescription: Mine.\n---\n\nMy own.\n"),
    )
    .unwrap();
}

// ---------------------------------------------------------------------------
// The issue's numbered cases.

#[test]
fn issue_19_1_prune_never_deletes_a_hand_written_skill_no_layer_provides() {
    let sb = two_skills();
    let out = sb.path().join("skills");
    hand_written_skill(&out, "my-own-skill");
    let mine = snapshot(&out.join("my-own-skill"));
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--prune"]);
    assert_eq!(
        run.ok_report(),
        "skills: 2 written, 0 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(snapshot(&out.join("my-own-skill")), mine);
    // --check neither calls it removed nor suggests --prune for it.
    let check = sb.check_skills("skills");
    assert_snapshot(
        check.ok(),
        snapshot_file("owned-check-beside-hand-written-skill.txt"),
    );
    // And a later prune, after a layer dropped a skill, still leaves it.
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--prune"]);
    assert_eq!(
        run.ok_report(),
        "skills: 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!out.join("reviewer").exists());
    assert_eq!(snapshot(&out.join("my-own-skill")), mine);
}

#[test]
fn issue_19_2_a_hand_written_skill_of_a_layered_name_is_refused_by_name() {
    let sb = two_skills();
    let out = sb.path().join("skills");
    hand_written_skill(&out, "writer");
    std::fs::write(out.join("writer/my-notes.md"), "mine\n").unwrap();
    let before = snapshot(&out);
    let run = sb.export_skills("skills");
    assert_snapshot(run.failed(), snapshot_file("export-unmanaged-skill.stderr"));
    assert_eq!(snapshot(&out), before, "nothing was written");
    // --check says the same, as its own kind of drift.
    let check = sb.check_skills("skills");
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert_snapshot(
        check.all(),
        snapshot_file("export-check-unmanaged-skill.txt"),
    );
    // Adopted, the skill is overwritten and the person's extra file kept.
    let run = sb.run(&[
        "export", "--format", "skill", "--out", "skills", "--adopt", "writer",
    ]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "skills: 2 written, 0 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(
        run.stderr,
        "warning: skills/writer/my-notes.md: not written by export; kept\n"
    );
    assert!(read(out.join("writer/SKILL.md")).contains("Draft prose."));
    assert_eq!(read(out.join("writer/my-notes.md")), "mine\n");
}

#[test]
fn issue_19_4_keep_going_writes_the_good_skills_and_names_the_bad_one() {
    let sb = public_collection();
    // Whole or nothing by default: a new directory does not appear. (The
    // 1,068-character description is the standard's refusal: its target's.)
    let run = sb.run(&["export", "--target", "agent-skills", "--out", "skills"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("export-one-bad-skill-new-dir.stderr"),
    );
    assert!(!sb.path().join("skills").exists());
    // --keep-going writes the sixteen, names the one, and still exits 1.
    let run = sb.run(&[
        "export",
        "--target",
        "agent-skills",
        "--out",
        "skills",
        "--keep-going",
    ]);
    assert_snapshot(
        run.failed(),
        snapshot_file("export-one-bad-skill-keep-going.stderr"),
    );
    let out = sb.path().join("skills");
    assert!(out.join("s01/SKILL.md").is_file());
    assert!(out.join("s17/SKILL.md").is_file());
    assert!(!out.join("s09").exists());
    // Into the existing directory, the default is whole or nothing too.
    sb.write(
        "team",
        "s01/SKILL.md",
        "---\ndescription: Changed by the team.\n---\n",
    );
    let before = snapshot(&out);
    let run = sb.run(&["export", "--target", "agent-skills", "--out", "skills"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("export-one-bad-skill-existing-dir.stderr"),
    );
    assert_eq!(snapshot(&out), before);
    let run = sb.run(&[
        "export",
        "--target",
        "agent-skills",
        "--out",
        "skills",
        "--keep-going",
    ]);
    assert_snapshot(
        run.failed(),
        snapshot_file("export-one-bad-skill-existing-dir-keep-going.stderr"),
    );
    assert!(read(out.join("s01/SKILL.md")).contains("Changed by the team."));
}

#[test]
fn issue_19_5_no_layer_directory_is_an_error_naming_the_three() {
    let sb = Sandbox::new();
    let mistyped = |args: &[&str]| {
        let mut cmd = sb.bare();
        cmd.arg("skills")
            .arg("--layers-root")
            .arg(sb.path().join("layres"))
            .args(args);
        sb.run_cmd(cmd)
    };
    // Each is an error naming the three directories it looked at.
    let mut runs = String::new();
    for args in [
        &["validate"][..],
        &["export", "--out", "m"],
        &["export", "--check", "m"],
        &["export", "--format", "skill", "--check", "m"],
    ] {
        let run = mistyped(args);
        run.failed();
        runs.push_str(&run.transcript(args));
    }
    assert!(!sb.path().join("m").exists());
    // Commands that can still answer warn.
    let run = mistyped(&["list"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    runs.push_str(&run.transcript(&["list"]));
    assert_snapshot(runs, snapshot_file("owned-no-layer-directory.txt"));
    // With layers, --check on a directory that does not exist says so.
    let sb = two_skills();
    let mut runs = String::new();
    for format in ["json", "skill"] {
        let args = ["export", "--format", format, "--check", "nowhere"];
        let run = sb.run(&args);
        run.failed();
        runs.push_str(&run.transcript(&args));
    }
    assert_snapshot(runs, snapshot_file("owned-check-nowhere.txt"));
}

// ---------------------------------------------------------------------------
// The record.

#[test]
fn the_record_lists_every_file_with_its_digest_and_is_the_same_on_every_machine() {
    let a = two_skills();
    let b = two_skills();
    a.run(&["export", "--format", "skill", "--out", "skills", "-j", "1"])
        .ok();
    b.run(&["export", "--format", "skill", "--out", "skills", "-j", "2"])
        .ok();
    let ra = read(a.path().join("skills").join(RECORD));
    assert_eq!(ra, read(b.path().join("skills").join(RECORD)));
    let v: serde_json::Value = serde_json::from_str(&ra).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["format"], "skill");
    assert_eq!(
        v["tool"],
        format!("bernstein-skills {}", env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(v["spec_sha256"].as_str().unwrap().len(), 64);
    let files = &v["skills"]["writer"]["files"];
    let style = &files["writer/references/style.md"];
    assert_eq!(style["sha256"], sha256_hex(b"# Style\n"));
    assert_eq!(style["size"], 8);
    assert!(files["writer/SKILL.md"].is_object());
    assert!(v["skills"]["reviewer"]["files"]["reviewer/SKILL.md"].is_object());
    // Keys are sorted at every depth: the file is its own canonical form.
    let reparsed = serde_json::to_string_pretty(&v).unwrap() + "\n";
    assert_eq!(ra, reparsed);
}

#[test]
fn a_no_change_re_export_rewrites_no_file() {
    let sb = two_skills();
    for format in ["json", "skill"] {
        let dir = format!("out-{format}");
        sb.run(&["export", "--format", format, "--out", &dir]).ok();
        let out = sb.path().join(&dir);
        let before = stamps(&out);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(
            sb.run(&["export", "--format", format, "--out", &dir, "--prune"])
                .ok_report(),
            &format!("{dir}: 0 written, 2 unchanged, 0 removed, 0 failed\n")
        );
        assert_eq!(stamps(&out), before, "{format}");
    }
}

#[test]
fn a_bad_record_is_refused_with_one_located_error() {
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    let record = sb.path().join("m").join(RECORD);
    let good = read(&record);
    let mut runs = String::new();
    for (bad, message) in [
        (
            "{\n  \"version\": 1,\n  \"format\": \"json\",\n  oops\n}\n",
            ":4:3: ",
        ),
        (
            &good.replace("\"reviewer.json\"", "\"../../etc/passwd\""),
            "'../../etc/passwd'",
        ),
        (
            &good.replace("\"reviewer.json\"", "\"/etc/passwd\""),
            "'/etc/passwd'",
        ),
        (
            &good.replace("\"reviewer.json\"", "\".hidden.json\""),
            "'.hidden.json'",
        ),
        (
            &good.replace("\"reviewer\": {", "\"re\\u001bviewer\": {"),
            "re\\x1bviewer",
        ),
        (
            &good.replace("\"version\": 1", "\"version\": 7"),
            "version 7",
        ),
    ] {
        std::fs::write(&record, bad).unwrap();
        runs.push_str(&format!("# a bad record; the error says {message:?}\n"));
        for args in [&["export", "--out", "m"][..], &["export", "--check", "m"]] {
            let run = sb.run(args);
            let stderr = run.failed();
            assert_eq!(stderr.lines().count(), 1, "{bad}: {run:#?}");
            runs.push_str(&run.transcript(args));
        }
    }
    // Each is one error line naming the record and what is wrong in it.
    assert_snapshot(runs, snapshot_file("owned-bad-record.txt"));
    assert!(sb.path().join("m/reviewer.json").is_file());
}

#[test]
fn a_directory_holds_one_format_and_the_other_is_refused() {
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    let before = snapshot(&sb.path().join("m"));
    let mut runs = String::new();
    for args in [
        &["export", "--format", "skill", "--out", "m"][..],
        &["export", "--format", "skill", "--check", "m"],
    ] {
        let run = sb.run(args);
        run.failed();
        runs.push_str(&run.transcript(args));
    }
    assert_snapshot(runs, snapshot_file("owned-other-format.txt"));
    assert_eq!(snapshot(&sb.path().join("m")), before);
}

// ---------------------------------------------------------------------------
// Hand edits and hand-added files.

#[test]
fn a_hand_edit_is_refused_with_a_short_diff_until_forced() {
    let sb = two_skills();
    sb.export_skills("skills").ok();
    let out = sb.path().join("skills");
    let skill_md = out.join("writer/SKILL.md");
    let edited = read(&skill_md).replace("Draft prose.", "My \u{1b}[2J edit.");
    std::fs::write(&skill_md, &edited).unwrap();
    // The layer changes too: the export would overwrite the edit.
    sb.write("team", "writer.yaml", "description: Team docs.\n");
    let run = sb.export_skills("skills");
    let stderr = run.failed();
    assert!(!stderr.contains('\u{1b}'), "{run:#?}");
    // The diff shows the escape byte escaped.
    assert_snapshot(stderr, snapshot_file("owned-hand-edited-skill.stderr"));
    assert_eq!(read(&skill_md), edited);
    let check = sb.check_skills("skills");
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert!(!check.stdout.contains("changed: writer"), "{check:#?}");
    assert_snapshot(
        check.transcript(&["export", "--format", "skill", "--check", "skills"]),
        snapshot_file("owned-check-hand-edited-skill.txt"),
    );
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--force"]);
    assert_eq!(
        run.ok_report(),
        "skills: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
    assert!(read(&skill_md).contains("Team docs."));
    sb.check_skills("skills").ok();
}

#[test]
fn a_file_deleted_by_hand_is_written_again_without_force() {
    let sb = two_skills();
    sb.export_skills("skills").ok();
    let style = sb.path().join("skills/writer/references/style.md");
    std::fs::remove_file(&style).unwrap();
    sb.pin(
        &["export", "--format", "skill", "--check", "skills"],
        "owned-check-deleted-file.txt",
    );
    sb.export_skills("skills").ok();
    assert_eq!(read(&style), "# Style\n");
}

#[test]
fn hand_added_files_are_kept_and_reported_also_when_the_skill_is_pruned() {
    let sb = two_skills();
    sb.export_skills("skills").ok();
    let out = sb.path().join("skills");
    std::fs::write(out.join("writer/references/notes.md"), "mine\n").unwrap();
    let check = sb.pin(
        &["export", "--format", "skill", "--check", "skills"],
        "owned-check-hand-added-file.txt",
    );
    assert_eq!(check.code, Some(1), "{check:#?}");
    // The skill's own file goes away in a layer: the hand-added one stays.
    std::fs::remove_file(sb.layer("base").join("writer/references/style.md")).unwrap();
    let run = sb.export_skills("skills");
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "skills: 1 written, 1 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(
        run.stderr,
        "warning: skills/writer/references/notes.md: not written by export; kept\n"
    );
    assert!(!out.join("writer/references/style.md").exists());
    assert_eq!(read(out.join("writer/references/notes.md")), "mine\n");
    // Pruned, the skill's own files go and the directory stays with the
    // person's file in it.
    std::fs::remove_dir_all(sb.layer("base").join("writer")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--prune"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert_eq!(
        run.report(),
        "skills: 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!out.join("writer/SKILL.md").exists());
    assert_eq!(read(out.join("writer/references/notes.md")), "mine\n");
    // No longer managed, nothing more is said about it.
    sb.check_skills("skills").ok();
}

#[test]
fn a_hand_edited_skill_is_not_pruned_without_force() {
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    std::fs::write(sb.path().join("m/reviewer.json"), "{\"mine\": 1}\n").unwrap();
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let run = sb.run(&["export", "--out", "m", "--prune"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("owned-prune-hand-edited.stderr"),
    );
    assert!(sb.path().join("m/reviewer.json").exists());
    let run = sb.run(&["export", "--out", "m", "--prune", "--force"]);
    assert_eq!(
        run.ok_report(),
        "m: 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    assert!(!sb.path().join("m/reviewer.json").exists());
}

// ---------------------------------------------------------------------------
// Adoption, JSON manifests, older versions.

#[test]
fn json_manifests_follow_the_same_rules() {
    let sb = two_skills();
    let m = sb.path().join("m");
    std::fs::create_dir(&m).unwrap();
    std::fs::write(m.join("writer.json"), "{\"hand\": \"written\"}\n").unwrap();
    std::fs::write(m.join("mine.json"), "{}\n").unwrap();
    let run = sb.run(&["export", "--out", "m", "--prune"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("owned-prune-unrecorded-file.stderr"),
    );
    assert_eq!(read(m.join("writer.json")), "{\"hand\": \"written\"}\n");
    assert!(!m.join("reviewer.json").exists());
    sb.run(&["export", "--out", "m", "--prune", "--adopt", "writer"])
        .ok();
    assert_eq!(
        read(m.join("writer.json")),
        sb.run(&["show", "writer"]).ok()
    );
    assert_eq!(read(m.join("mine.json")), "{}\n", "unmanaged, never pruned");
    sb.run(&["export", "--check", "m"]).ok();
}

#[test]
fn a_directory_from_an_older_version_is_adopted_with_adopt_all() {
    let sb = two_skills();
    sb.export_skills("skills").ok();
    let out = sb.path().join("skills");
    // What an older version left: the same files, no record.
    std::fs::remove_file(out.join(RECORD)).unwrap();
    hand_written_skill(&out, "my-own-skill");
    let check = sb.check_skills("skills");
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert!(!check.stdout.contains("my-own-skill"), "{check:#?}");
    assert_snapshot(
        check.transcript(&["export", "--format", "skill", "--check", "skills"]),
        snapshot_file("owned-check-record-lost.txt"),
    );
    let before = stamps(&out);
    let run = sb.run(&[
        "export",
        "--format",
        "skill",
        "--out",
        "skills",
        "--adopt-all",
    ]);
    assert_eq!(
        run.ok_report(),
        "skills: 0 written, 2 unchanged, 0 removed, 0 failed\n"
    );
    assert!(out.join(RECORD).is_file());
    // The files were already right: only the record was written.
    let after: Vec<_> = stamps(&out)
        .into_iter()
        .filter(|s| !s.0.ends_with(RECORD))
        .collect();
    assert_eq!(after, before);
    sb.check_skills("skills").ok();
    assert!(out.join("my-own-skill/SKILL.md").is_file());
}

#[test]
fn adopt_names_a_skill_some_layer_provides() {
    let sb = two_skills();
    let run = sb.run(&["export", "--out", "m", "--adopt", "writr"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("owned-adopt-unknown-skill.stderr"),
    );
    assert!(!sb.path().join("m").exists());
}

#[test]
fn pruning_next_to_unmanaged_skills_removes_only_managed_ones() {
    let sb = two_skills();
    sb.write("base", "extra.yaml", "description: Extra.\n");
    let out = sb.path().join("skills");
    hand_written_skill(&out, "mine");
    std::fs::create_dir_all(out.join("other-installer")).unwrap();
    std::fs::write(out.join("other-installer/SKILL.md"), "x\n").unwrap();
    std::os::unix::fs::symlink(sb.path().join("nowhere"), out.join("dangling")).unwrap();
    sb.export_skills("skills").ok();
    std::fs::remove_file(sb.layer("base").join("extra.yaml")).unwrap();
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--prune"]);
    assert_eq!(
        run.ok_report(),
        "skills: 0 written, 1 unchanged, 2 removed, 0 failed\n"
    );
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [RECORD, "dangling", "mine", "other-installer", "writer"]
    );
}

// ---------------------------------------------------------------------------
// Two exports at once.

/// `bernstein skills ... ARGS` as a plain std command, for spawning.
fn spawn(sb: &Sandbox, args: &[&str]) -> std::process::Child {
    let home = sb.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    std::process::Command::new(crate::it::support::bin())
        .env_clear()
        .env("HOME", &home)
        .env("CARGO_MANIFEST_DIR", env!("CARGO_MANIFEST_DIR"))
        .current_dir(sb.path())
        .arg("skills")
        .arg("--layers-root")
        .arg(sb.root())
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap()
}

#[test]
fn a_second_export_waits_for_the_first_and_says_so() {
    use std::io::Read;
    let sb = two_skills();
    sb.run(&["export", "--out", "m"]).ok();
    sb.write("team", "writer.yaml", "description: Team.\n");
    // Another export holds the directory.
    let held = std::fs::File::open(sb.path().join("m")).unwrap();
    held.lock().unwrap();
    let mut child = spawn(&sb, &["export", "--out", "m"]);
    let mut stderr = child.stderr.take().unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 256];
    while !String::from_utf8_lossy(&seen).contains('\n') {
        let n = stderr.read(&mut buf).unwrap();
        assert!(n > 0, "{}", String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buf[..n]);
    }
    assert_eq!(
        String::from_utf8_lossy(&seen),
        "waiting for another export into m to finish\n"
    );
    assert!(!read(sb.path().join("m/writer.json")).contains("Team."));
    held.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_snapshot(
        String::from_utf8_lossy(&out.stdout).replace(&sb.path().display().to_string(), "[ROOT]"),
        snapshot_file("owned-waited-export.txt"),
    );
    assert!(read(sb.path().join("m/writer.json")).contains("Team."));
    // --check waits too (a shared lock), and then reads a finished export.
    held.lock().unwrap();
    let child = spawn(&sb, &["export", "--check", "m"]);
    std::thread::sleep(std::time::Duration::from_millis(200));
    held.unlock().unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn exports_at_the_same_time_never_interleave() {
    let sb = Sandbox::new();
    for i in 0..40 {
        sb.write(
            "base",
            &format!("s{i:02}/SKILL.md"),
            format!("---\nname: s{i:02}\ndescription: Skill {i}.\n---\n\nBody.\n"),
        );
        sb.write("base", &format!("s{i:02}/references/r.md"), "r\n");
    }
    for round in 0..3 {
        let children: Vec<_> = (0..4)
            .map(|_| {
                spawn(
                    &sb,
                    &["export", "--format", "skill", "--out", "skills", "--prune"],
                )
            })
            .collect();
        for child in children {
            let out = child.wait_with_output().unwrap();
            assert!(out.status.success(), "round {round}: {out:?}");
        }
        sb.check_skills("skills").ok();
        sb.write(
            "team",
            &format!("s{round:02}.yaml"),
            "description: Changed.\n",
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(sb.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

// ---------------------------------------------------------------------------
// The README walkthrough's claim.

#[test]
fn exporting_into_a_directory_with_a_hand_written_skill_leaves_it_alone() {
    let sb = Sandbox::new();
    let base = sb.layer("base");
    copy_dir(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/layers/base/pdf-tables"),
        &base.join("pdf-tables"),
    );
    let out = sb.path().join("claude-skills");
    hand_written_skill(&out, "my-notes");
    let mine = snapshot(&out.join("my-notes"));
    let run: Run = sb.export_skills("claude-skills");
    assert_eq!(
        run.ok_report(),
        "claude-skills: 1 written, 0 unchanged, 0 removed, 0 failed\n"
    );
    assert_eq!(snapshot(&out.join("my-notes")), mine);
    assert!(out.join("pdf-tables/SKILL.md").is_file());
}

#[test]
fn forced_or_adopted_export_never_deletes_what_a_directory_in_its_way_holds() {
    let sb = two_skills();
    let m = sb.path().join("m");
    std::fs::create_dir_all(m.join("writer.json")).unwrap();
    std::fs::write(m.join("writer.json/mine.txt"), "mine\n").unwrap();
    let run = sb.run(&["export", "--out", "m", "--adopt", "writer"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("owned-adopt-over-full-directory.stderr"),
    );
    assert_eq!(read(m.join("writer.json/mine.txt")), "mine\n");
    // A managed file replaced by a directory, forced: the same.
    sb.export_skills("skills").ok();
    let skill_md = sb.path().join("skills/writer/SKILL.md");
    std::fs::remove_file(&skill_md).unwrap();
    std::fs::create_dir(&skill_md).unwrap();
    std::fs::write(skill_md.join("notes.md"), "mine\n").unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "skills", "--force"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("owned-force-over-full-directory.stderr"),
    );
    assert_eq!(read(skill_md.join("notes.md")), "mine\n");
    // An empty one is simply replaced.
    std::fs::remove_file(skill_md.join("notes.md")).unwrap();
    sb.run(&["export", "--format", "skill", "--out", "skills", "--force"])
        .ok();
    assert!(skill_md.is_file());
}
