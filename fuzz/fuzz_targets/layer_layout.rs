//! File names and symlink layouts: the input is a list of entries to lay
//! out in a fresh team layer (and a manifests directory), each with an
//! arbitrary name, a kind (file, directory with a SKILL.md, symlink to a
//! place inside or outside the layer, to a hidden entry of the layer, a
//! skill directory whose symlinks fan out, FIFO, a user layer that is a
//! symlink) and contents. Then the whole pipeline runs on it — catalog,
//! validate, resolve, explain, export --check — and the security promises
//! are checked:
//!
//! - nothing outside the layer (a secret file beside it, `/proc/self/environ`)
//!   nor hidden inside it (`.git/config`) is ever read: its marker never
//!   appears in a value or a message;
//! - every human-readable message is free of control, bidi and invisible
//!   characters and of bounded length;
//! - nothing hangs (a FIFO is refused, not opened for a blocking read).
//!
//! Deterministic: the layout depends only on the input, in a directory of a
//! fixed name per process, emptied before each run.
#![no_main]

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

use bernstein_skills::fragment::DEFAULT_MAX_BYTES;
use bernstein_skills::text::{MESSAGE_CHARS, is_unsafe};
use bernstein_skills::{Layers, MergeSpec, Skills};
use libfuzzer_sys::fuzz_target;

const MARKER: &str = "OUTSIDE-SECRET-7f3a";

fn spec() -> MergeSpec {
    static SPEC: std::sync::OnceLock<MergeSpec> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| {
        MergeSpec::from_str(
            include_str!("../../spec/mergespec.yaml"),
            Path::new("spec/mergespec.yaml"),
        )
        .expect("the shipped spec loads")
    })
    .clone()
}

fn work_dir() -> PathBuf {
    std::env::temp_dir().join(format!("bernstein-fuzz-layout-{}", std::process::id()))
}

/// A printed message must be safe whatever the input.
fn check_message(s: &str) {
    assert!(!s.contains(MARKER), "leaked: {s}");
    assert!(!s.chars().any(is_unsafe), "unescaped: {s:?}");
}

fuzz_target!(|data: &[u8]| {
    // The marker only ever comes from outside the layer.
    if data.windows(6).any(|w| w == b"SECRET") {
        return;
    }
    let work = work_dir();
    let _ = std::fs::remove_dir_all(&work);
    let root = work.join("layers");
    let team = root.join("team");
    let manifests = work.join("manifests");
    std::fs::create_dir_all(&team).unwrap();
    std::fs::create_dir_all(root.join("base")).unwrap();
    std::fs::create_dir_all(&manifests).unwrap();
    std::fs::write(work.join("secret.yaml"), format!("description: {MARKER}\n")).unwrap();
    // A hidden entry inside the layer: never part of a skill.
    std::fs::create_dir_all(team.join(".git")).unwrap();
    std::fs::write(team.join(".git/config"), format!("description: {MARKER}\n")).unwrap();
    std::fs::write(root.join("base/writer.yaml"), "description: base\n").unwrap();

    // Entries: [kind, name length, name bytes..., content length, content...].
    let mut rest = data;
    let mut n = 0;
    while let [kind, len, tail @ ..] = rest {
        n += 1;
        if n > 12 {
            break;
        }
        let len = usize::from(*len % 24).min(tail.len());
        let (name, tail) = tail.split_at(len);
        let (clen, tail) = match tail.split_first() {
            Some((c, t)) => (usize::from(*c % 64).min(t.len()), t),
            None => (0, tail),
        };
        let (content, tail) = tail.split_at(clen);
        rest = tail;
        // A file name: no '/', no NUL, not empty, not '.' or '..'.
        let name: Vec<u8> = name
            .iter()
            .copied()
            .filter(|&b| b != b'/' && b != 0)
            .collect();
        if name.is_empty() || name == b"." || name == b".." {
            continue;
        }
        let ext = [".yaml", ".yml", ".toml", ""][usize::from(kind >> 6)];
        let mut file = name.clone();
        file.extend_from_slice(ext.as_bytes());
        let (dir, file) = if kind & 0x20 != 0 {
            (&manifests, {
                let mut f = name.clone();
                f.extend_from_slice(b".json");
                f
            })
        } else {
            (&team, file)
        };
        let path = dir.join(OsStr::from_bytes(&file));
        // One entry per name: writing to a FIFO laid out earlier would block
        // this harness, not the code under test.
        if std::fs::symlink_metadata(&path).is_ok() {
            continue;
        }
        if kind & 0x18 == 0x18 {
            let _ = special(kind & 0x7, &work, &team, &path, &name, content);
            continue;
        }
        let _ = match kind & 0x7 {
            0 | 1 => std::fs::write(&path, content),
            2 => std::fs::create_dir_all(&path)
                .and_then(|()| std::fs::write(path.join("SKILL.md"), content)),
            3 => symlink(work.join("secret.yaml"), &path),
            4 => symlink("/proc/self/environ", &path),
            5 => symlink(&work, &path),
            6 => symlink(OsStr::from_bytes(&name), &path),
            _ => {
                let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
                // SAFETY: a valid NUL-terminated path.
                unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
                Ok(())
            }
        };
    }

    let skills = Skills::new(spec(), Layers::from_root(&root), DEFAULT_MAX_BYTES);
    // A layer directory that is a symlink is refused, never read through.
    if std::fs::symlink_metadata(root.join("user")).is_ok_and(|m| m.file_type().is_symlink()) {
        assert!(!skills.layers().refusals().is_empty());
    }
    let report = skills.validate(None, 1);
    for d in &report.diagnostics {
        let line = d.to_string();
        check_message(&line);
        assert!(d.message().chars().count() <= MESSAGE_CHARS + 1);
    }
    for (name, located) in skills.layers().catalog().unwrap_or_default() {
        match skills.resolve_located(&name, &located) {
            Ok(resolved) => {
                let json =
                    bernstein_skills::output::render::effective_to_json(resolved.effective());
                assert!(!json.contains(MARKER), "leaked into {name}");
                for row in bernstein_skills::output::explain::explain(skills.spec(), &resolved) {
                    if let Some(p) = &row.place {
                        check_message(&p.label());
                    }
                }
            }
            Err(e) => {
                for d in e.diagnostics() {
                    check_message(&d.to_string());
                }
            }
        }
    }
    if let Ok(drift) = skills.export_drift(&manifests, 1) {
        for (_, d) in drift {
            use bernstein_skills::export::Drift;
            if let Drift::Changed(lines) | Drift::HandEdited(lines) | Drift::HandAdded(lines) = d {
                lines.iter().for_each(|l| check_message(l));
            }
        }
    }
    let _ = std::fs::remove_dir_all(&work);
});

/// The layouts of the hostile-layer issue's second round, one per `which`.
fn special(
    which: u8,
    work: &Path,
    team: &Path,
    path: &Path,
    name: &[u8],
    content: &[u8],
) -> std::io::Result<()> {
    match which {
        // A symlink to the hidden entry, from the top and from a skill.
        0 => symlink(".git/config", path),
        1 => {
            std::fs::create_dir_all(path)?;
            symlink("../.git/config", path.join("SKILL.md"))
        }
        // A skill's files reached by a fan of symlinks.
        2 => {
            std::fs::create_dir_all(path)?;
            std::fs::write(path.join("SKILL.md"), content)?;
            for i in 0..4 {
                std::fs::create_dir_all(path.join(format!("d{i}")))?;
            }
            std::fs::write(path.join("d3/leaf.md"), "leaf")?;
            for i in 0..3 {
                for l in 0..4 {
                    symlink(format!("../d{}", i + 1), path.join(format!("d{i}/l{l}")))?;
                }
            }
            symlink("../.git", path.join("d0/hidden"))
        }
        // The user layer is a symlink to the team layer or above it.
        3 => {
            let user = team.with_file_name("user");
            let target: &Path = if name.len().is_multiple_of(2) {
                team
            } else {
                work
            };
            if std::fs::symlink_metadata(&user).is_err() {
                symlink(target, &user)?;
            }
            Ok(())
        }
        // A hidden skill directory.
        4 => {
            let hidden = team.join(".hidden");
            std::fs::create_dir_all(&hidden)?;
            std::fs::write(hidden.join("SKILL.md"), content)
        }
        _ => Ok(()),
    }
}
