//! The one write policy of the commands that write files of their own
//! beside the person's (`new`'s schema, `schema --out`): a file is written
//! where nothing is, replaced where this tool wrote it, and left alone
//! otherwise unless `--force` says so.

use std::path::Path;

use bernstein_skills::source::read_bounded;
use bernstein_skills::{Error, ErrorKind, Result};

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

/// Writes the JSON Schema `bytes` to `path`, atomically. An existing file
/// is replaced only when it is one of this tool's schemas (its `$id` is
/// one of ours), or with `force`; anything else there (another schema, a
/// symbolic link, a directory) is refused, naming the flag, and nothing is
/// written.
pub fn write_schema(path: &Path, bytes: &[u8], force: bool) -> Result<Wrote> {
    let wrote = may_write_schema(path, bytes, force)?;
    if wrote == Wrote::Written {
        bernstein_skills::export::write_atomic(path, bytes)?;
    }
    Ok(wrote)
}

/// What [`write_schema`] would do, without writing: so that a command
/// writing several files refuses before it writes any.
pub fn may_write_schema(path: &Path, bytes: &[u8], force: bool) -> Result<Wrote> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(source) => {
            return Err(Error::Write {
                path: path.to_path_buf(),
                source,
            });
        }
        Ok(m) if m.is_file() => {
            let old = read_bounded(path, MAX_OWN_BYTES).ok();
            if old.as_deref() == Some(bytes) {
                return Ok(Wrote::Unchanged);
            }
            if !force && !old.as_deref().is_some_and(is_our_schema) {
                return Err(refusal(path, "holds a file this tool did not write", true));
            }
        }
        Ok(m) if m.is_dir() => return Err(refusal(path, "is a directory", false)),
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
