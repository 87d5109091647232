//! Writing stays atomic and in its directory, whatever the layers and the
//! output directory hold (a team layer takes pull requests from strangers,
//! and the committed manifests directory comes with it): a failed export
//! puts nothing half-done in place, temporary names cannot be planted, a
//! symlink is never written, renamed or deleted through, interrupted exports
//! are cleaned up, and names too long to export are reported.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use bernstein_skills::engine::write_atomic;
use bernstein_skills::export::OutDir;

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

/// Every file below `dir` with its bytes (symlinks as their target), sorted.
fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let meta = std::fs::symlink_metadata(&p).unwrap();
            if meta.file_type().is_symlink() {
                let target = std::fs::read_link(&p).unwrap();
                out.push((p, target.into_os_string().into_encoded_bytes()));
            } else if meta.is_dir() {
                todo.push(p);
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}

fn is_regular_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file())
}

/// The base-layer skills `reviewer` and `writer`.
fn two_skills() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    sb
}

// ---------------------------------------------------------------------------
// Temporary files: unpredictable names, created exclusively.

#[test]
fn write_atomic_never_writes_through_a_symlink_at_the_old_temporary_name() {
    let sb = Sandbox::new();
    let victim = sb.write_file("outside/victim", "precious\n");
    let dir = sb.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    symlink(
        &victim,
        dir.join(format!(".x.json.tmp-{}", std::process::id())),
    )
    .unwrap();
    write_atomic(&dir.join("x.json"), b"new\n").unwrap();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    assert!(is_regular_file(&dir.join("x.json")));
    assert_eq!(
        std::fs::read_to_string(dir.join("x.json")).unwrap(),
        "new\n"
    );
    // The new temporary files leave nothing behind.
    assert_eq!(entries(&dir).len(), 2, "{:?}", entries(&dir));
}

#[test]
fn export_never_writes_through_symlinks_at_the_old_temporary_names() {
    let sb = two_skills();
    let outside = sb.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let pid = std::process::id();
    // An existing output directory, every manifest about to change.
    let m = sb.path().join("m");
    sb.skills().export(&m, false, 2).unwrap();
    sb.write("team", "writer.yaml", "author: team\n");
    sb.write("team", "reviewer.yaml", "author: team\n");
    for name in ["writer", "reviewer"] {
        let victim = sb.write_file(&format!("outside/{name}"), "precious\n");
        symlink(&victim, m.join(format!(".{name}.json.tmp-{pid}"))).unwrap();
    }
    // A new output directory, its old staging name planted.
    let n = sb.path().join("n");
    symlink(&outside, sb.path().join(format!(".n.tmp-{pid}"))).unwrap();
    let before = snapshot(&outside);
    let report = sb.skills().export(&m, false, 2).unwrap();
    assert_eq!((report.written, report.failed.len()), (2, 0));
    sb.skills().export(&n, false, 2).unwrap();
    assert_eq!(snapshot(&outside), before);
    for dir in [&m, &n] {
        for name in ["writer", "reviewer"] {
            let file = dir.join(format!("{name}.json"));
            assert!(is_regular_file(&file), "{file:?}");
            assert!(std::fs::read_to_string(&file).unwrap().contains("team"));
        }
    }
}

// ---------------------------------------------------------------------------
// Staging directories: short names with the pid, stale ones cleaned up.

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

#[test]
fn the_staging_directory_has_a_short_name_with_the_pid() {
    let sb = Sandbox::new();
    let m = sb.path().join("m".repeat(200));
    let out = OutDir::open(&m).unwrap();
    let names = entries(sb.path());
    assert_eq!(names.len(), 1, "{names:?}");
    let prefix = format!(".bernstein-export-{}-", std::process::id());
    assert!(names[0].starts_with(&prefix), "{names:?}");
    assert!(names[0].len() <= prefix.len() + 12, "{names:?}");
    drop(out);
    assert_eq!(entries(sb.path()), Vec::<String>::new());
}

#[test]
fn stale_staging_directories_of_dead_exports_are_removed_and_live_ones_kept() {
    let sb = two_skills();
    let parent = sb.path().join("out");
    let dead = dead_pid();
    let live = std::process::id();
    // A dead export's staging directory, holding a symlink out.
    let stale = parent.join(format!(".bernstein-export-{dead}-abc123"));
    let outside = sb.write_file("outside/keep.json", "keep\n");
    let outside = outside.parent().unwrap();
    for i in 0..50 {
        sb.write_file(
            &format!("out/.bernstein-export-{dead}-abc123/s{i}.json"),
            "{}\n",
        );
    }
    symlink(outside, stale.join("link")).unwrap();
    // A symlink with a dead export's name: the link goes, not its target.
    symlink(
        outside,
        parent.join(format!(".bernstein-export-{dead}-lnk999")),
    )
    .unwrap();
    // A live export's and names of other schemes stay.
    for keep in [
        format!(".bernstein-export-{live}-keep01"),
        ".bernstein-export-notapid-x".to_owned(),
        ".bernstein-export-0-zero00".to_owned(),
        format!(".m.tmp-{dead}"),
    ] {
        std::fs::create_dir_all(parent.join(keep)).unwrap();
    }
    let before = snapshot(outside);
    let m = parent.join("m");
    let run = sb.run(&["export", "--out", m.to_str().unwrap()]);
    assert!(run.success().contains("2 written"), "{run:#?}");
    let mut lines: Vec<&str> = run.stderr.lines().collect();
    lines.sort();
    assert_eq!(
        lines,
        [
            format!(
                "removed stale export staging directory [ROOT]/out/.bernstein-export-{dead}-abc123"
            ),
            format!(
                "removed stale export staging directory [ROOT]/out/.bernstein-export-{dead}-lnk999"
            ),
        ],
        "{run:#?}"
    );
    assert_eq!(snapshot(outside), before);
    let mut expected = vec![
        format!(".bernstein-export-{live}-keep01"),
        ".bernstein-export-0-zero00".to_owned(),
        ".bernstein-export-notapid-x".to_owned(),
        format!(".m.tmp-{dead}"),
        "m".to_owned(),
    ];
    expected.sort();
    assert_eq!(entries(&parent), expected);

    // The library reports them, into an existing directory too.
    std::fs::create_dir(&stale).unwrap();
    let report = sb.skills().export(&m, false, 1).unwrap();
    assert_eq!(report.stale_removed, [stale.as_path()]);
    assert!(!stale.exists());
}
