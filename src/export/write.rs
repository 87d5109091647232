//! Writing one file atomically by its path, for the commands that write a
//! single file where a person asked (`new` into a layer, `spec --install`,
//! `schema --out`). Export itself writes through [`super::outdir`], relative
//! to the output directory's descriptor.

use std::path::Path;

use crate::error::{Error, Result};

/// Writes `bytes` to `path` atomically: a temporary file in the same
/// directory, then a rename, so readers never see half a file and a failed
/// write leaves the old file in place. There is no fsync: the files are
/// derived data that can always be written again, and an fsync per file
/// would make exporting 10,000 of them take seconds.
///
/// The directory may hold anything: the temporary file gets a short random
/// name (`.bs-XXXXXX`) and is created with `O_CREAT | O_EXCL | O_NOFOLLOW`,
/// so nothing planted there is ever written through, and the rename replaces
/// whatever is at `path`, a symlink included, instead of following it.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomic_mode(path, bytes, false)
}

/// [`write_atomic`] with the execute bits set when `executable` (the umask
/// applies, as to any new file).
pub(crate) fn write_atomic_mode(path: &Path, bytes: &[u8], executable: bool) -> Result<()> {
    use std::io::Write;
    let fail = |source| Error::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".bs-")
        .make_in(dir, |p| {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
                options.mode(if executable { 0o777 } else { 0o666 });
            }
            options.open(p)
        })
        .map_err(fail)?;
    // Dropped on failure, the temporary file is removed.
    tmp.as_file_mut().write_all(bytes).map_err(fail)?;
    tmp.persist(path).map_err(|e| fail(e.error))?;
    Ok(())
}
