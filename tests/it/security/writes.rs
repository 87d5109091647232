//! Writing stays atomic and in its directory, whatever the layers and the
//! output directory hold (a team layer takes pull requests from strangers,
//! and the committed manifests directory comes with it): a failed export
//! puts nothing half-done in place, temporary names cannot be planted, a
//! symlink is never written, renamed or deleted through, interrupted exports
//! are cleaned up, and names too long to export are reported.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use bernstein_skills::export::OutDir;
use bernstein_skills::export::write_atomic;

use crate::it::support::{Sandbox, assert_snapshot, dead_pid, entries, snapshot, snapshot_file};

fn is_regular_file(p: &Path) -> bool {
    std::fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_file())
}

/// The base-layer skills `reviewer` and `writer`.
fn two_skills() -> Sandbox {
    two_skills_in(Sandbox::new())
}

/// [`two_skills`] in a given sandbox (the classic spec for names longer
/// than the Agent Skills standard allows).
fn two_skills_in(sb: Sandbox) -> Sandbox {
    sb.write("base", "writer.yaml", "description: Writes.\n");
    sb.write("base", "reviewer.yaml", "description: Reviews.\n");
    sb
}

// ---------------------------------------------------------------------------
// Where writes fail partway: a real full file system, or a file-size limit.

/// Forty skills `s00`..`s39` whose manifests grow from a few hundred bytes
/// to about 10 KB, `author` set to `author`.
fn growing_skills(sb: &Sandbox, count: usize, author: &str) {
    for i in 0..count {
        sb.write(
            "base",
            &format!("s{i:02}.yaml"),
            format!("author: {author}\ndescription: {}\n", "x".repeat(i * 250)),
        );
    }
}

/// A tmpfs mounted for one test, unmounted (lazily) when dropped.
struct Mount(std::ffi::CString);

impl Mount {
    /// Mounts a `size`-byte tmpfs on the existing directory `at`, if this
    /// process may (root with `CAP_SYS_ADMIN`, as in the CI container).
    fn tmpfs(at: &Path, size: usize) -> Option<Mount> {
        use std::os::unix::ffi::OsStrExt;
        let target = std::ffi::CString::new(at.as_os_str().as_bytes()).unwrap();
        let options = std::ffi::CString::new(format!("size={size},mode=0755")).unwrap();
        // SAFETY: every pointer is a valid NUL-terminated string that
        // outlives the call.
        let rc = unsafe {
            libc::mount(
                c"tmpfs".as_ptr(),
                target.as_ptr(),
                c"tmpfs".as_ptr(),
                0,
                options.as_ptr().cast(),
            )
        };
        (rc == 0).then_some(Mount(target))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        // SAFETY: a valid NUL-terminated path.
        unsafe { libc::umount2(self.0.as_ptr(), libc::MNT_DETACH) };
    }
}

/// A directory `disk` in the sandbox where writing fails partway through an
/// export of [`growing_skills`]: a 64 KiB tmpfs (ENOSPC) when it can be
/// mounted, otherwise a 4 KiB file-size limit on the child process (EFBIG,
/// with `SIGXFSZ` ignored). Either way the failure is real and happens:
/// every test checks its message, so none can pass without it.
enum Fault {
    Full { _mount: Mount, dir: PathBuf },
    FileSize { dir: PathBuf },
}

const FILE_SIZE_LIMIT: u64 = 4096;

impl Fault {
    /// The best fault this machine offers: a full disk if possible.
    fn disk_full(sb: &Sandbox) -> Fault {
        let dir = sb.path().join("disk");
        std::fs::create_dir(&dir).unwrap();
        match Mount::tmpfs(&dir, 64 * 1024) {
            Some(m) => Fault::Full { _mount: m, dir },
            None => {
                eprintln!("cannot mount a tmpfs here: using a file-size limit instead");
                Fault::FileSize { dir }
            }
        }
    }

    /// The file-size limit, which works for any user on any Linux.
    fn file_size(sb: &Sandbox) -> Fault {
        let dir = sb.path().join("disk");
        std::fs::create_dir(&dir).unwrap();
        Fault::FileSize { dir }
    }

    fn dir(&self) -> &Path {
        match self {
            Fault::Full { dir, .. } | Fault::FileSize { dir } => dir,
        }
    }

    /// The snapshot file `writes-<what>-<fault>.stderr`: the
    /// report holds the operating system's message for the failure (`No
    /// space left on device`, `File too large`), so each fault has its own.
    fn snapshot_file(&self, what: &str) -> snapbox::Data {
        let fault = match self {
            Fault::Full { .. } => "disk-full",
            Fault::FileSize { .. } => "file-too-large",
        };
        snapshot_file(&format!("writes-{what}-{fault}.stderr"))
    }

    /// `bernstein skills --layers-root <root> ARGS...` under this fault.
    fn run(&self, sb: &Sandbox, args: &[&str]) -> crate::it::support::Run {
        match self {
            Fault::Full { .. } => sb.run(args),
            Fault::FileSize { .. } => {
                use std::os::unix::process::CommandExt;
                let home = sb.path().join("home");
                std::fs::create_dir_all(&home).unwrap();
                let mut cmd = std::process::Command::new(crate::it::support::bin());
                cmd.env_clear()
                    .env("HOME", &home)
                    .current_dir(sb.path())
                    .arg("skills")
                    .arg("--layers-root")
                    .arg(sb.root())
                    // Manifests grow past the standard's description limit.
                    .arg("--spec")
                    .arg(crate::it::support::classic_spec_path())
                    .args(args);
                // SAFETY: setrlimit and signal are async-signal-safe.
                unsafe {
                    cmd.pre_exec(|| {
                        let limit = libc::rlimit {
                            rlim_cur: FILE_SIZE_LIMIT,
                            rlim_max: FILE_SIZE_LIMIT,
                        };
                        if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
                        Ok(())
                    });
                }
                sb.run_cmd(assert_cmd::Command::from_std(cmd))
            }
        }
    }
}

/// An export of [`growing_skills`] into a new directory where writing
/// fails partway: the directory does not appear, the staging directory is
/// gone, exit 1 with the operating system's error.
fn check_new_directory_fault(sb: &Sandbox, fault: &Fault) {
    growing_skills(sb, 40, "a");
    let out = fault.dir().join("m");
    let run = fault.run(sb, &["export", "--out", out.to_str().unwrap()]);
    assert_eq!(entries(fault.dir()), Vec::<String>::new(), "{run:#?}");
    assert_snapshot(run.failed(), fault.snapshot_file("new-directory"));
    // The same export without the fault works: the failure was the fault's.
    let elsewhere = sb.path().join("elsewhere");
    sb.run(&["export", "--out", elsewhere.to_str().unwrap()])
        .ok();
    assert_eq!(entries(&elsewhere).len(), 41, "40 manifests and the record");
}

#[test]
fn a_write_failing_partway_into_a_new_directory_puts_nothing_in_place() {
    let sb = Sandbox::classic();
    let fault = Fault::file_size(&sb);
    check_new_directory_fault(&sb, &fault);
}

#[test]
fn disk_full_into_a_new_directory_puts_nothing_in_place() {
    let sb = Sandbox::classic();
    let fault = Fault::disk_full(&sb);
    check_new_directory_fault(&sb, &fault);
}

#[test]
fn disk_full_in_an_existing_directory_leaves_every_file_old_or_new() {
    let sb = Sandbox::classic();
    let fault = Fault::disk_full(&sb);
    let out = fault.dir().join("m");
    let out_s = out.to_str().unwrap();
    growing_skills(&sb, 5, "old");
    sb.run(&["export", "--out", out_s]).ok();
    let old = snapshot(&out);
    // Every manifest changes, and 35 larger skills are added.
    growing_skills(&sb, 40, "new");
    let run = fault.run(&sb, &["export", "--out", out_s]);
    assert_snapshot(run.failed(), fault.snapshot_file("existing-directory"));
    let expected = sb.path().join("expected");
    sb.run(&["export", "--out", expected.to_str().unwrap()])
        .ok();
    for name in entries(&out) {
        if name == ".bernstein-skills.json" {
            continue;
        }
        let now = std::fs::read(out.join(&name)).unwrap();
        let was = old.iter().find(|(p, _)| p.ends_with(&name)).map(|x| &x.1);
        let new = std::fs::read(expected.join(&name)).unwrap_or_else(|_| panic!("{name}"));
        assert!(
            Some(&now) == was || now == new,
            "{name} is neither old nor new"
        );
    }
    assert!(entries(&out).len() < 41, "the fault stopped the export");
    assert_eq!(
        entries(&out)
            .iter()
            .filter(|n| n.starts_with('.'))
            .collect::<Vec<_>>(),
        [".bernstein-skills.json"],
        "no temporary file left"
    );
    // The record accounts for every file the interrupted export wrote:
    // nothing reads as a hand edit.
    let check = sb.run(&["export", "--check", out_s]);
    assert_eq!(check.code, Some(1), "{check:#?}");
    assert!(!check.stdout.contains("hand-edited"), "{check:#?}");
    assert!(!check.stdout.contains("unmanaged"), "{check:#?}");
}

#[test]
fn a_broken_skill_into_a_new_directory_puts_nothing_in_place() {
    let sb = two_skills();
    sb.write("team", "writer.yaml", "descripton: typo\n");
    let out = sb.path().join("fresh");
    let run = sb.run(&["export", "--out", out.to_str().unwrap()]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-broken-skill-new-directory.stderr"),
    );
    assert_eq!(entries(sb.path()), ["home", "layers"]);
    // The library says the same.
    let report = sb.skills().export(&out, false, 2).unwrap();
    assert_eq!((report.written.len(), report.failed.len()), (0, 1));
    assert_eq!(report.not_written, 1);
    assert!(report.new_dir);
    assert_eq!(entries(sb.path()), ["home", "layers"]);
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
    // An existing output directory, every manifest about to change; the
    // exports keep a ledger of what they wrote (without one, the record's
    // claims to files that change are not honoured).
    let state = sb.path().join("state");
    let options = bernstein_skills::export::ExportOptions {
        jobs: 2,
        state_dir: Some(&state),
        ..Default::default()
    };
    let m = sb.path().join("m");
    sb.skills().export_with(&m, &options).unwrap();
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
    let report = sb.skills().export_with(&m, &options).unwrap();
    assert_eq!((report.written.len(), report.failed.len()), (2, 0));
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
// Symlinks in the output directory and in the layer.

#[test]
fn export_refuses_an_out_directory_that_is_a_symlink() {
    let sb = two_skills();
    let elsewhere = sb.write_file("elsewhere/writer.json", "precious\n");
    let elsewhere = elsewhere.parent().unwrap();
    sb.write_file("elsewhere/stale.json", "{}\n");
    let before = snapshot(elsewhere);
    let m = sb.path().join("m");
    symlink(elsewhere, &m).unwrap();
    for out in [m.to_str().unwrap().to_owned(), format!("{}/", m.display())] {
        for args in [&["--prune"][..], &[]] {
            let mut all = vec!["export", "--out", &out];
            all.extend(args);
            let run = sb.run(&all);
            assert_eq!(
                run.failed(),
                "error: [ROOT]/m: is a symbolic link to [ROOT]/elsewhere; \
                 export writes only into a real directory (nothing was written)\n",
                "{run:#?}"
            );
            assert_eq!(snapshot(elsewhere), before);
            assert_eq!(entries(sb.path()), ["elsewhere", "home", "layers", "m"]);
        }
    }
    // Control characters in the link and its target are escaped.
    let odd = sb.path().join("else\nwhere");
    std::fs::create_dir(&odd).unwrap();
    let link = sb.path().join("m\u{1b}[2J");
    symlink(&odd, &link).unwrap();
    let run = sb.run(&["export", "--out", link.to_str().unwrap()]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-symlinked-out-escaped.stderr"),
    );
    assert_eq!(entries(&odd), Vec::<String>::new());
    // The library refuses too, below the boundary it is given (by
    // default the working directory's, which a test process does not
    // share with its sandbox).
    let options = bernstein_skills::export::ExportOptions {
        prune: true,
        jobs: 1,
        boundary: Some(sb.path()),
        ..Default::default()
    };
    let err = sb.skills().export_with(&m, &options).unwrap_err();
    assert!(err.to_string().contains("is a symbolic link"), "{err}");
    assert_eq!(snapshot(elsewhere), before);
}

#[test]
fn manifest_symlinks_are_replaced_and_pruned_never_followed() {
    let sb = two_skills();
    let expected = sb.path().join("expected");
    sb.run(&["export", "--out", expected.to_str().unwrap()])
        .ok();
    let writer = std::fs::read(expected.join("writer.json")).unwrap();
    // Outside: a file equal to the manifest, one that differs, a stale
    // target and a directory.
    let victim = sb.write_file("outside/victim.json", &writer);
    let victim2 = sb.write_file("outside/victim2.json", "precious\n");
    let gone = sb.write_file("outside/gone-target.json", "keep me\n");
    let dir = sb.write_file("outside/dir/inner.json", "{}\n");
    let dir = dir.parent().unwrap();
    let outside = sb.path().join("outside");
    let before = snapshot(&outside);
    let m = sb.path().join("m");
    std::fs::create_dir(&m).unwrap();
    symlink(&victim, m.join("writer.json")).unwrap();
    symlink(&victim2, m.join("reviewer.json")).unwrap();
    symlink(&gone, m.join("gone.json")).unwrap();
    symlink(dir, m.join("dirlink.json")).unwrap();
    symlink(dir, m.join("sub")).unwrap();
    let m_s = m.to_str().unwrap();
    // Links export did not write: refused, never followed.
    let run = sb.run(&["export", "--out", m_s, "--prune"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-manifest-symlinks-refused.stderr"),
    );
    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    // Adopted, they are replaced as links; the others are not export's.
    let run = sb.run(&["export", "--out", m_s, "--prune", "--adopt-all"]);
    assert_eq!(
        run.ok_report(),
        "[ROOT]/m: 2 written, 0 unchanged, 0 removed, 0 failed\n",
        "{run:#?}"
    );
    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    for name in ["writer.json", "reviewer.json"] {
        assert!(is_regular_file(&m.join(name)), "{name}");
        assert_eq!(
            std::fs::read(m.join(name)).unwrap(),
            std::fs::read(expected.join(name)).unwrap()
        );
    }
    assert_eq!(
        entries(&m),
        [
            ".bernstein-skills.json",
            "dirlink.json",
            "gone.json",
            "reviewer.json",
            "sub",
            "writer.json"
        ]
    );
    // A managed manifest replaced by a link, then pruned: refused, then
    // with --force the link itself goes.
    std::fs::remove_file(sb.layer("base").join("reviewer.yaml")).unwrap();
    std::fs::remove_file(m.join("reviewer.json")).unwrap();
    symlink(&victim2, m.join("reviewer.json")).unwrap();
    let run = sb.run(&["export", "--out", m_s, "--prune"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-managed-manifest-symlink-refused.stderr"),
    );
    let run = sb.run(&["export", "--out", m_s, "--prune", "--force"]);
    assert_eq!(
        run.ok_report(),
        "[ROOT]/m: 0 written, 1 unchanged, 1 removed, 0 failed\n"
    );
    assert!(std::fs::symlink_metadata(m.join("reviewer.json")).is_err());
    assert_eq!(snapshot(&outside), before, "nothing outside changed");
    for link in ["sub", "gone.json", "dirlink.json"] {
        assert!(
            std::fs::symlink_metadata(m.join(link))
                .unwrap()
                .file_type()
                .is_symlink(),
            "{link}"
        );
    }
}

#[test]
fn a_new_directory_replaced_by_a_symlink_meanwhile_is_not_written_through() {
    let sb = Sandbox::new();
    let outside = sb.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    let m = sb.path().join("m");
    let out = OutDir::open(&m, None).unwrap();
    out.write("a.json", b"1", false, false).unwrap();
    symlink(&outside, &m).unwrap();
    assert!(out.finish().is_err());
    assert_eq!(entries(&outside), Vec::<String>::new());
    assert_eq!(entries(sb.path()), ["m", "outside"]);
}

#[test]
fn new_refuses_a_skill_directory_that_is_a_symlink_out_of_the_layer() {
    let sb = Sandbox::new().with_layer_dirs();
    let outside = sb.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    symlink(&outside, sb.layer("team").join("fresh")).unwrap();
    let run = sb.run(&["new", "fresh", "--layer", "team", "--form", "md"]);
    let stderr = run.failed();
    assert_eq!(
        stderr,
        "error: [ROOT]/layers/team/fresh: a symbolic link to [ROOT]/outside, outside the team \
         layer ([ROOT]/layers/team); refusing to write through it (nothing was written)\n",
        "{run:#?}"
    );
    assert_eq!(entries(&outside), Vec::<String>::new());
    assert_eq!(entries(&sb.root()), ["base", "team", "user"]);
    // A symlink that stays inside the layer is fine.
    std::fs::create_dir(sb.layer("team").join("real")).unwrap();
    symlink("real", sb.layer("team").join("alias")).unwrap();
    sb.run(&["new", "alias", "--layer", "team", "--form", "md"])
        .ok();
    assert!(sb.layer("team").join("real/SKILL.md").is_file());
}

#[test]
fn new_never_follows_a_symlink_at_the_new_file_or_the_schema() {
    let sb = Sandbox::new().with_layer_dirs();
    let outside = sb.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // A dangling symlink where the new file goes.
    symlink(
        outside.join("planted.yaml"),
        sb.layer("team").join("fresh.yaml"),
    )
    .unwrap();
    let run = sb.run(&["new", "fresh", "--layer", "team"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-new-file-symlink.stderr"),
    );
    assert_eq!(entries(&outside), Vec::<String>::new());
    // Refused before anything is written: the schema too.
    assert!(
        std::fs::symlink_metadata(sb.root().join("skill-fragment.schema.json")).is_err(),
        "the schema was written"
    );
    // A symlink where the schema goes is refused, and with --force
    // replaced, never written through.
    let victim = sb.write_file("outside/victim.json", "precious\n");
    symlink(&victim, sb.root().join("skill-fragment.schema.json")).unwrap();
    let run = sb.run(&["new", "other", "--layer", "team"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-new-schema-symlink.stderr"),
    );
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    sb.run(&["new", "other", "--layer", "team", "--force"]).ok();
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious\n");
    let schema = sb.root().join("skill-fragment.schema.json");
    assert!(is_regular_file(&schema));
    assert!(
        std::fs::read_to_string(&schema)
            .unwrap()
            .contains("\"$schema\"")
    );
}

// ---------------------------------------------------------------------------
// Staging directories: short names with the pid, stale ones (whose lock is
// free) cleaned up.

#[test]
fn the_staging_directory_has_a_short_name_with_the_pid() {
    let sb = Sandbox::new();
    let m = sb.path().join("m".repeat(200));
    let out = OutDir::open(&m, None).unwrap();
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
    // A live export's (it holds its staging directory's lock, whatever its
    // pid) and names of other schemes stay.
    for keep in [
        format!(".bernstein-export-{live}-keep01"),
        ".bernstein-export-notapid-x".to_owned(),
        ".bernstein-export-0-zero00".to_owned(),
        format!(".m.tmp-{dead}"),
    ] {
        std::fs::create_dir_all(parent.join(keep)).unwrap();
    }
    let held =
        std::fs::File::open(parent.join(format!(".bernstein-export-{live}-keep01"))).unwrap();
    held.try_lock().unwrap();
    let before = snapshot(outside);
    let m = parent.join("m");
    let run = sb.run(&["export", "--out", m.to_str().unwrap()]);
    assert_snapshot(
        run.success(),
        snapshot_file("writes-stale-staging-removed.txt"),
    );
    // The stale directories' names hold the dead pid, and their order is
    // the directory's: sorted and compared whole.
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

// ---------------------------------------------------------------------------
// File-name length.

#[test]
fn a_250_byte_skill_name_exports_again_and_again() {
    let sb = Sandbox::classic();
    let name = "a".repeat(250);
    sb.write("base", &format!("{name}.yaml"), "description: one\n");
    let m = sb.path().join("m");
    let m_s = m.to_str().unwrap();
    sb.run(&["export", "--out", m_s]).ok();
    for text in ["description: two\n", "description: three\n"] {
        sb.write("base", &format!("{name}.yaml"), text);
        let run = sb.run(&["export", "--out", m_s]);
        assert_snapshot(
            run.ok(),
            snapshot_file("writes-long-name-exported-again.txt"),
        );
    }
    assert!(
        std::fs::read_to_string(m.join(format!("{name}.json")))
            .unwrap()
            .contains("three")
    );
    sb.run(&["validate"]).ok();
}

#[test]
fn a_name_too_long_to_export_is_a_validate_error_and_export_fails_cleanly() {
    let sb = two_skills_in(Sandbox::classic());
    let long = "b".repeat(251);
    let file = sb.write("base", &format!("{long}.yml"), "description: long\n");
    let run = sb.run(&["validate"]);
    assert_snapshot(
        run.failed_report(),
        snapshot_file("writes-name-too-long-validate.txt"),
    );
    // A SKILL.md directory allows 255 bytes; its manifest would be 260.
    let longer = "c".repeat(255);
    sb.write(
        "user",
        &format!("{longer}/SKILL.md"),
        "---\ndescription: x\n---\n",
    );
    let v = sb.run(&["validate", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&v.stdout).unwrap();
    assert_eq!(v["errors"], 2, "{v}");
    assert!(v.to_string().contains("would be 260 bytes"), "{v}");
    std::fs::remove_dir_all(sb.layer("user")).unwrap();

    // Into a new directory: nothing appears.
    let m = sb.path().join("m");
    let run = sb.run(&["export", "--out", m.to_str().unwrap()]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-name-too-long-new-directory.stderr"),
    );
    assert!(!m.exists());
    // Into an existing one: nothing is written, or with --keep-going the
    // others are, exit 1 either way.
    std::fs::create_dir(&m).unwrap();
    let run = sb.run(&["export", "--out", m.to_str().unwrap()]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-name-too-long-existing-directory.stderr"),
    );
    assert_eq!(entries(&m), Vec::<String>::new());
    let run = sb.run(&["export", "--out", m.to_str().unwrap(), "--keep-going"]);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-name-too-long-keep-going.stderr"),
    );
    assert_eq!(
        entries(&m),
        [".bernstein-skills.json", "reviewer.json", "writer.json"]
    );
    assert!(file.is_file());
}

// ---------------------------------------------------------------------------
// Output paths: no symlink below the working directory or repository root.

#[test]
fn a_committed_symlink_in_the_output_path_is_refused_by_name() {
    let sb = two_skills();
    use std::os::unix::fs::PermissionsExt;
    let script = sb.write("base", "writer/scripts/run.sh", "#!/bin/sh\necho hi\n");
    sb.write(
        "base",
        "writer/SKILL.md",
        "---\ndescription: Writes.\n---\n",
    );
    std::fs::remove_file(sb.layer("base").join("writer.yaml")).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    // `build -> elsewhere`, as a pull request would commit it; a manifest
    // there, which --check must not diff.
    let elsewhere = sb.write_file("elsewhere/m/writer.json", "{\"secret\": 1}\n");
    let elsewhere = elsewhere.parent().unwrap().parent().unwrap();
    symlink(elsewhere, sb.path().join("build")).unwrap();
    let before = snapshot(elsewhere);
    // One refusal per run, naming the path as given and the link in it.
    let mut refusals = String::new();
    for args in [
        &["export", "--format", "skill", "--out", "build/skills"][..],
        &["export", "--out", "build/m"],
        &["export", "--check", "build/m"],
        &["export", "--format", "skill", "--check", "build/skills"],
        &["export", "--out", "build/../build/m"],
    ] {
        let run = sb.run(args);
        let stderr = run.failed();
        assert!(!stderr.contains("secret"), "{run:#?}");
        refusals.push_str(stderr);
        assert_eq!(snapshot(elsewhere), before, "{args:?}");
    }
    assert_snapshot(
        refusals,
        snapshot_file("writes-committed-symlink-refused.stderr"),
    );
}

#[test]
fn check_never_walks_through_a_symlink_in_the_output_directory() {
    let sb = two_skills();
    sb.write("base", "x/SKILL.md", "---\ndescription: X.\n---\n");
    std::fs::create_dir(sb.path().join("out")).unwrap();
    symlink("/", sb.path().join("out/x")).unwrap();
    symlink("/", sb.path().join("out/root")).unwrap();
    let run = sb.check_skills("out");
    assert!(run.stdout.len() < 1000, "{run:#?}");
    assert_snapshot(
        run.failed_report(),
        snapshot_file("writes-check-symlink-unmanaged.txt"),
    );
    // Listed in the record as a directory export wrote, it is still a leaf.
    std::fs::remove_file(sb.path().join("out/x")).unwrap();
    sb.export_skills("out").ok();
    std::fs::remove_dir_all(sb.path().join("out/x")).unwrap();
    symlink("/", sb.path().join("out/x")).unwrap();
    let run = sb.check_skills("out");
    assert!(run.stdout.len() < 1000, "{run:#?}");
    assert_snapshot(
        run.failed_report(),
        snapshot_file("writes-check-symlink-managed.txt"),
    );
    let run = sb.export_skills("out");
    assert!(run.failed().len() < 1000, "{run:#?}");
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-export-symlink-managed.stderr"),
    );
    // Forced, the link is replaced by the skill's directory.
    sb.run(&["export", "--format", "skill", "--out", "out", "--force"])
        .ok();
    assert!(sb.path().join("out/x/SKILL.md").is_file());
    assert!(
        std::fs::symlink_metadata(sb.path().join("out/x"))
            .unwrap()
            .is_dir()
    );
}

#[test]
fn components_above_the_repository_root_are_taken_as_given() {
    let sb = two_skills();
    let repo = sb.path().join("repo");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(repo.join("sub")).unwrap();
    // A home directory arranged with links, outside the repository.
    std::fs::create_dir(sb.path().join("real-home")).unwrap();
    symlink(sb.path().join("real-home"), sb.path().join("home-link")).unwrap();
    let out = sb.path().join("home-link/skills");
    let mut cmd = sb.skills_cmd(&["export", "--out", out.to_str().unwrap()]);
    cmd.current_dir(repo.join("sub"));
    let run = sb.run_cmd(cmd);
    assert_snapshot(run.ok(), snapshot_file("writes-symlinked-home-export.txt"));
    assert!(sb.path().join("real-home/skills/writer.json").is_file());
    // Inside the repository, from a subdirectory, `..` included: refused.
    std::fs::create_dir(sb.path().join("elsewhere")).unwrap();
    symlink(sb.path().join("elsewhere"), repo.join("build")).unwrap();
    let mut cmd = sb.skills_cmd(&["export", "--out", "../build/m"]);
    cmd.current_dir(repo.join("sub"));
    let run = sb.run_cmd(cmd);
    assert_snapshot(
        run.failed(),
        snapshot_file("writes-symlink-in-repository.stderr"),
    );
    assert_eq!(entries(&sb.path().join("elsewhere")), Vec::<String>::new());
}

#[test]
fn a_walk_of_a_skill_directory_is_bounded_by_entries_visited() {
    let sb = two_skills();
    sb.write("base", "w/SKILL.md", "---\ndescription: W.\n---\n");
    sb.export_skills("out").ok();
    // Many entries export did not write, none of them a file: the walk
    // stops at its bound and says so, whatever it kept.
    let dir = sb.path().join("out/w/junk");
    for i in 0..10_001 {
        std::fs::create_dir_all(dir.join(format!("d{i}"))).unwrap();
    }
    let run = sb.check_skills("out");
    assert_snapshot(
        run.failed_report(),
        snapshot_file("writes-check-walk-many-entries.txt"),
    );
    std::fs::remove_dir_all(&dir).unwrap();
    sb.check_skills("out").ok();
    // Deeper than the walk goes.
    let mut deep = sb.path().join("out/w/deep");
    for _ in 0..40 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let run = sb.check_skills("out");
    assert_snapshot(
        run.failed_report(),
        snapshot_file("writes-check-walk-deep.txt"),
    );
}
