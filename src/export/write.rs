//! Writing one file atomically by its path, for the commands that write a
//! single file where a person asked (`new` into a layer, `spec --install`,
//! `schema --out`). Export itself writes through [`super::outdir`], relative
//! to the output directory's descriptor.

use std::path::Path;

use crate::error::{Error, Result};

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
