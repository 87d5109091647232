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
