//! Reading files that an attacker may have laid out: confined to a root,
//! regular files only, bounded.
//!
//! A team layer is a git directory that takes pull requests from strangers,
//! and CI reads it. A symlink committed there can point anywhere
//! (`env/SKILL.md -> /proc/self/environ`, `writer.yaml -> ~/.ssh/id_ed25519`),
//! a file can be a FIFO that blocks a reader forever, and `/proc` files
//! report as regular files of size 0 while producing any amount of data. So
//! every file read from a layer, and every committed manifest, goes through
//! [`read_in_root`]:
//!
//! 1. the path is resolved (`realpath`), and refused unless it stays inside
//!    the root's own real path; a symlink that stays inside may be followed;
//! 2. anything resolving into `/proc`, `/sys` or `/dev` is refused by where it
//!    resolves, whatever type it reports;
//! 3. the resolved path is opened without following a final symlink and
//!    without blocking (`O_NOFOLLOW | O_NONBLOCK`), and the *opened* file is
//!    checked: a regular file, and (on Linux) really inside the root, read
//!    back from `/proc/self/fd`. A swap of any path component between the
//!    check and the open gains nothing;
//! 4. at most the cap is read, whatever size the file claims.
//!
//! A refusal carries the reason and the resolved target, never any content.

use std::io::Read;
use std::path::{Path, PathBuf};

/// Why a file was not read.
#[derive(Debug)]
pub enum Refusal {
    /// Its real path leaves the root (through a symlink).
    Escapes {
        /// Where it resolves.
        target: PathBuf,
    },
    /// It resolves into `/proc`, `/sys` or `/dev`.
    Special {
        /// Where it resolves.
        target: PathBuf,
    },
    /// It is not a regular file.
    NotRegular {
        /// What it is, in words ("a FIFO").
        what: &'static str,
    },
    /// It is larger than the cap.
    TooLarge {
        /// Its size (at least; reading stops past the cap).
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The operating system refused (not found, permission, ...).
    Io(std::io::Error),
}

impl Refusal {
    /// The reason in words, for a message about `path` in `root_label`
    /// (`team layer`, `manifests directory`). Paths are escaped.
    pub fn describe(&self, path: &Path, root_label: &str) -> String {
        match self {
            Refusal::Escapes { target } => format!(
                "refusing to follow a symlink out of the {root_label}: {} -> {}",
                crate::text::path(path),
                crate::text::path(target)
            ),
            Refusal::Special { target } => format!(
                "refusing to read a special file: {} -> {}",
                crate::text::path(path),
                crate::text::path(target)
            ),
            Refusal::NotRegular { what } => {
                format!("refusing to read {what}; only regular files are read")
            }
            Refusal::TooLarge { size, limit } => {
                format!("file is {size} bytes, over the {limit}-byte limit")
            }
            Refusal::Io(e) => format!("cannot read file: {e}"),
        }
    }

    /// Is this "the file does not exist"?
    pub fn is_not_found(&self) -> bool {
        matches!(self, Refusal::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// The real path of a root directory, once: [`read_in_root`] compares
/// against it. `None` when the root does not exist or cannot be resolved.
pub fn real_root(root: &Path) -> Option<PathBuf> {
    let real = std::fs::canonicalize(root).ok()?;
    real.is_dir().then_some(real)
}

/// Directories whose files are never read, wherever a root is.
const SPECIAL: [&str; 3] = ["/proc", "/sys", "/dev"];

fn is_special(real: &Path) -> bool {
    SPECIAL.iter().any(|s| real.starts_with(s))
}

/// Reads `path`, which must resolve to a regular file inside `real_root`
/// (a path from [`real_root`]), of at most `max` bytes.
pub fn read_in_root(real_root: &Path, path: &Path, max: u64) -> Result<Vec<u8>, Refusal> {
    let real = std::fs::canonicalize(path).map_err(Refusal::Io)?;
    if !real.starts_with(real_root) {
        return Err(Refusal::Escapes { target: real });
    }
    read_resolved(&real, Some(real_root), max)
}

/// [`read_in_root`] for a `path` whose last `below` components lie below
/// the root (`writer.yaml`: 1, `writer/SKILL.md`: 2), the common case made
/// cheap: when none of them is a symlink the file is inside the root by
/// construction, so one `lstat` per component replaces resolving the whole
/// path (which reads every component of it, the root's ancestors included).
/// A symlink among them takes the full road. A final component that is not
/// a regular file is refused without being opened.
pub fn read_below_root(
    real_root: &Path,
    path: &Path,
    below: usize,
    max: u64,
) -> Result<Vec<u8>, Refusal> {
    let parts: Vec<_> = path.components().collect();
    let Some(first) = parts.len().checked_sub(below) else {
        return read_in_root(real_root, path, max);
    };
    let mut real = real_root.to_path_buf();
    for (i, part) in parts[first..].iter().enumerate() {
        real.push(part);
        let meta = std::fs::symlink_metadata(&real).map_err(Refusal::Io)?;
        let ty = meta.file_type();
        if ty.is_symlink() {
            return read_in_root(real_root, path, max);
        }
        if i + 1 == below && !ty.is_file() {
            return Err(Refusal::NotRegular { what: kind_of(&ty) });
        }
    }
    read_resolved(&real, Some(real_root), max)
}

/// Reads a file the user named (no root), refusing special and non-regular
/// files, at most `max` bytes: for the merge spec.
pub fn read_bounded(path: &Path, max: u64) -> Result<Vec<u8>, Refusal> {
    let real = std::fs::canonicalize(path).map_err(Refusal::Io)?;
    read_resolved(&real, None, max)
}

fn read_resolved(real: &Path, root: Option<&Path>, max: u64) -> Result<Vec<u8>, Refusal> {
    if is_special(real) && !root.is_some_and(is_special) {
        return Err(Refusal::Special {
            target: real.to_path_buf(),
        });
    }
    let file = open_no_follow(real).map_err(|e| refusal_of_open(e, real))?;
    let meta = file.metadata().map_err(Refusal::Io)?;
    if !meta.file_type().is_file() {
        return Err(Refusal::NotRegular {
            what: kind_of(&meta.file_type()),
        });
    }
    check_opened(&file, real, root)?;
    if meta.len() > max {
        return Err(Refusal::TooLarge {
            size: meta.len(),
            limit: max,
        });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max + 1)
        .read_to_end(&mut bytes)
        .map_err(Refusal::Io)?;
    if bytes.len() as u64 > max {
        return Err(Refusal::TooLarge {
            size: bytes.len() as u64,
            limit: max,
        });
    }
    Ok(bytes)
}

#[cfg(unix)]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
}

#[cfg(not(unix))]
fn open_no_follow(path: &Path) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

/// An open that failed because the final component became a symlink after
/// it was resolved is a swap in progress: refuse it as an escape.
fn refusal_of_open(e: std::io::Error, real: &Path) -> Refusal {
    #[cfg(unix)]
    if e.raw_os_error() == Some(libc::ELOOP) {
        return Refusal::Escapes {
            target: real.to_path_buf(),
        };
    }
    let _ = real;
    Refusal::Io(e)
}

/// Checks where the opened file really is: on Linux, by the kernel's own
/// name for the descriptor. Elsewhere the type check above has to do.
fn check_opened(file: &std::fs::File, real: &Path, root: Option<&Path>) -> Result<(), Refusal> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let link = PathBuf::from(format!("/proc/self/fd/{}", file.as_raw_fd()));
        if let Ok(opened) = std::fs::read_link(&link) {
            if let Some(root) = root
                && !opened.starts_with(root)
            {
                return Err(Refusal::Escapes { target: opened });
            }
            if is_special(&opened) && !root.is_some_and(is_special) {
                return Err(Refusal::Special { target: opened });
            }
        }
    }
    let _ = (file, real, root);
    Ok(())
}

fn kind_of(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO";
        }
        if t.is_socket() {
            return "a socket";
        }
        if t.is_block_device() || t.is_char_device() {
            return "a device";
        }
    }
    if t.is_dir() {
        "a directory"
    } else if t.is_symlink() {
        "a symlink"
    } else {
        "a file that is not a regular file"
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn inside_is_read_outside_is_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(root.join("d")).unwrap();
        std::fs::write(root.join("d/a.yaml"), "a: 1\n").unwrap();
        std::fs::write(tmp.path().join("secret"), "TOKEN=x\n").unwrap();
        symlink("d/a.yaml", root.join("inside.yaml")).unwrap();
        symlink(tmp.path().join("secret"), root.join("out.yaml")).unwrap();
        symlink(tmp.path(), root.join("outdir")).unwrap();
        let real = real_root(&root).unwrap();
        assert_eq!(
            read_in_root(&real, &root.join("inside.yaml"), 100).unwrap(),
            b"a: 1\n"
        );
        for p in ["out.yaml", "outdir/secret", "../secret", "d/../../secret"] {
            let e = read_in_root(&real, &root.join(p), 100).unwrap_err();
            assert!(matches!(e, Refusal::Escapes { .. }), "{p}: {e:?}");
            let msg = e.describe(&root.join(p), "team layer");
            assert!(!msg.contains("TOKEN"), "{msg}");
        }
    }

    #[test]
    fn proc_sys_dev_fifos_and_directories_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let real = real_root(tmp.path()).unwrap();
        symlink("/proc/self/environ", tmp.path().join("env")).unwrap();
        symlink("/dev/zero", tmp.path().join("zero")).unwrap();
        assert!(matches!(
            read_bounded(&tmp.path().join("env"), 100),
            Err(Refusal::Special { .. })
        ));
        assert!(matches!(
            read_bounded(&tmp.path().join("zero"), 100),
            Err(Refusal::Special { .. })
        ));
        let fifo = tmp.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_in_root(&real, &fifo, 100),
            Err(Refusal::NotRegular { what: "a FIFO" })
        ));
        assert!(matches!(
            read_in_root(&real, tmp.path(), 100),
            Err(Refusal::NotRegular {
                what: "a directory"
            })
        ));
    }

    #[test]
    fn the_cap_holds_whatever_the_size() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("big"), vec![b'x'; 101]).unwrap();
        let real = real_root(tmp.path()).unwrap();
        assert!(matches!(
            read_in_root(&real, &tmp.path().join("big"), 100),
            Err(Refusal::TooLarge {
                size: 101,
                limit: 100
            })
        ));
    }
}
