//! Writing files by their path, for the commands that write where a
//! person asked (`new` into a layer, `spec --install`, `schema --out`, the
//! man pages, the project's files): each write goes through
//! [`crate::beneath::write`]. Export itself writes through
//! [`super::outdir`], relative to the output directory's descriptor.

use std::path::{Path, PathBuf};

use crate::beneath::{EntryKind, kind_of};
use crate::error::{Error, ErrorKind, Result};
use crate::layer::Layer;
use crate::source::read_bounded;
use crate::text;

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, then a rename, so readers never see half a file and a failed
/// write leaves the old file in place (`crate::beneath::write`).
///
/// The directory may hold anything: the temporary file gets a random name
/// (`.bs-` and twelve hexadecimal digits) and is created with `O_CREAT |
/// O_EXCL | O_NOFOLLOW`, so nothing planted there is ever written through,
/// and the rename replaces whatever is at `path`, a symlink included,
/// instead of following it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::beneath::write::write_atomic(path, bytes, false, false).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// [`write_atomic`], making the file's directory first when it is missing
/// ([`make_dirs`]).
pub fn write_atomic_making_dirs(path: &Path, bytes: &[u8]) -> Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        make_dirs(dir)?;
    }
    write_atomic(path, bytes)
}

/// Writes `bytes` to `path` ([`write_atomic_making_dirs`]) only when
/// nothing is at its name, not even a symbolic link; whether it wrote.
pub fn write_if_absent(path: &Path, bytes: &[u8]) -> Result<bool> {
    if kind_of(path).is_ok() {
        return Ok(false);
    }
    write_atomic_making_dirs(path, bytes)?;
    Ok(true)
}

/// Makes the directory holding `file` when nothing is at its name (a
/// project's `.bernstein/`), returning it when this call made it, so that
/// a caller whose writes then fail can leave things as they were
/// ([`remove_made_dir`]).
pub fn make_parent(file: &Path) -> Result<Option<PathBuf>> {
    let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(None);
    };
    if kind_of(dir).is_ok() {
        return Ok(None);
    }
    make_dirs(dir)?;
    Ok(Some(dir.to_path_buf()))
}

/// Removes the directory [`make_parent`] made, if nothing was written
/// into it since.
pub fn remove_made_dir(dir: &Path) {
    let _ = crate::beneath::write::remove_empty_dir(dir);
}

/// Makes the directory `dir` and those missing above it (`mkdir -p`).
pub fn make_dirs(dir: &Path) -> Result<()> {
    crate::beneath::write::make_dirs(dir).map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })
}

/// The most of an existing file read to tell whether this tool wrote it.
const MAX_OWN_BYTES: u64 = 16 * 1024 * 1024;

/// What [`write_schema`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wrote {
    /// The file was written (new, or replaced).
    Written,
    /// It already held these bytes.
    Unchanged,
}

/// Writes the JSON Schema `bytes` to `path`, atomically: the one write
/// policy of the commands that write files of their own beside the
/// person's (`new`'s schema, `schema --out`). An existing file is replaced
/// only when it is one of this tool's schemas (its `$id` is one of ours),
/// or with `force`; anything else there (another schema, a symbolic link,
/// a directory) is refused, naming the flag, and nothing is written.
pub fn write_schema(path: &Path, bytes: &[u8], force: bool) -> Result<Wrote> {
    let wrote = may_write_schema(path, bytes, force)?;
    if wrote == Wrote::Written {
        write_atomic(path, bytes)?;
    }
    Ok(wrote)
}

/// What [`write_schema`] would do, without writing: so that a command
/// writing several files refuses before it writes any.
pub fn may_write_schema(path: &Path, bytes: &[u8], force: bool) -> Result<Wrote> {
    match kind_of(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(Error::Write {
                path: path.to_path_buf(),
                source,
            });
        }
        Ok(EntryKind::File) => {
            let old = read_bounded(path, MAX_OWN_BYTES).ok();
            if old.as_deref() == Some(bytes) {
                return Ok(Wrote::Unchanged);
            }
            if !force && !old.as_deref().is_some_and(is_our_schema) {
                return Err(refusal(path, "holds a file this tool did not write", true));
            }
        }
        Ok(EntryKind::Dir) => return Err(refusal(path, "is a directory", false)),
        Ok(_) if !force => {
            return Err(refusal(path, "is a symbolic link or special file", true));
        }
        Ok(_) => {}
    }
    Ok(Wrote::Written)
}

fn refusal(path: &Path, what: &str, force_helps: bool) -> Error {
    let or_force = if force_helps {
        ", or replace it with --force"
    } else {
        ""
    };
    Error::Refused {
        kind: ErrorKind::Exists,
        path: Some(path.to_path_buf()),
        message: format!("{what}; move it away{or_force} (nothing was written)"),
    }
}

/// Is `bytes` a JSON Schema this tool wrote (an `$id` in our namespace)?
/// Only `$id` is kept: every other value is skipped as it is read, so a
/// file of millions of small values (the file may be committed) costs
/// no tree of them.
fn is_our_schema(bytes: &[u8]) -> bool {
    #[derive(serde::Deserialize)]
    struct Head {
        #[serde(rename = "$id")]
        id: Option<String>,
    }
    serde_json::from_slice::<Head>(bytes).is_ok_and(|h| {
        h.id.is_some_and(|id| id.starts_with("urn:bernstein-skills:schema:"))
    })
}

/// Makes the directories a new file `path` in the layer directory `dir`
/// (of `layer`) needs, and refuses when the file could not be created
/// there as the layer's own: a component below `dir` that leads out of it
/// (a symbolic link a stranger committed, `team/NAME -> /elsewhere`), or
/// anything already at the file's name (a dangling symbolic link, a FIFO).
/// Nothing is written but the directories; [`create_new`] writes the file.
pub fn prepare_new_in_layer(dir: &Path, path: &Path, layer: Layer) -> Result<()> {
    let parent = path.parent().unwrap_or(dir).to_path_buf();
    make_dirs(dir)?;
    confine(dir, &parent, layer)?;
    make_dirs(&parent)?;
    confine(dir, &parent, layer)?;
    if let Ok(kind) = kind_of(path) {
        let what = if kind == EntryKind::Symlink {
            "is a symbolic link"
        } else {
            "is already there"
        };
        return Err(Error::Refused {
            kind: ErrorKind::Exists,
            path: Some(path.to_path_buf()),
            message: format!("{what}; move it away (nothing was written)"),
        });
    }
    Ok(())
}

/// Creates the file `path` with `bytes`, never over anything (even a file
/// that appeared meanwhile) and never through a symbolic link planted at
/// its name.
pub fn create_new(path: &Path, bytes: &[u8]) -> Result<()> {
    crate::beneath::write::create_new_at(path, bytes).map_err(|source| Error::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Refuses when a symlink among the components of `parent` below the layer
/// directory `dir` leads out of it (compared as canonical paths).
fn confine(dir: &Path, parent: &Path, layer: Layer) -> Result<()> {
    let root = dir.canonicalize().map_err(|source| Error::Write {
        path: dir.to_path_buf(),
        source,
    })?;
    let mut p: PathBuf = dir.to_path_buf();
    for c in parent
        .strip_prefix(dir)
        .unwrap_or(Path::new(""))
        .components()
    {
        p.push(c);
        let Ok(kind) = kind_of(&p) else {
            // Not there yet: make_dirs makes a real directory.
            break;
        };
        let inside = p.canonicalize().is_ok_and(|real| real.starts_with(&root));
        if !inside {
            let what = if kind == EntryKind::Symlink {
                let target = std::fs::read_link(&p).unwrap_or_default();
                format!("a symbolic link to {}", text::path(&target))
            } else {
                "not inside it".to_owned()
            };
            return Err(Error::Refused {
                kind: ErrorKind::Unsafe,
                path: None,
                message: format!(
                    "{}: {what}, outside the {layer} ({}); refusing to write through it \
                     (nothing was written)",
                    text::path(&p),
                    text::path(dir)
                ),
            });
        }
    }
    Ok(())
}
