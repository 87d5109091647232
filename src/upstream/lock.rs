//! `sources.lock`: what each source resolved to. Written only by the tool
//! (`skills add`, `skills update --yes`), deterministic: the same sources
//! and commits give the same bytes (sorted tables and keys, no timestamps,
//! one file per line, so that two branches that lock different sources
//! merge line by line).
//!
//! ```toml
//! version = 1
//!
//! [source.acme]
//! url = "https://github.com/acme/skills"
//! ref = "v1.2.0"
//! commit = "0123456789abcdef0123456789abcdef01234567"
//! path = "skills"
//! executable = ["pdf-tables/scripts/extract.py"]
//! removed = ["xlsx"]
//!
//! [source.acme.files]
//! "pdf-tables/SKILL.md" = "sha256:9f86d08…"
//! "pdf-tables/scripts/extract.py" = "sha256:60303ae…"
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::refused;
use super::sources::{open_text, toml_error};
use crate::digest::Digest;
use crate::error::{ErrorKind, Result};

/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

/// The largest lock read: 200,000 files ([`MAX_ENTRIES`]) of about 160
/// bytes a line. It is read a line at a time and never held whole, so
/// what it costs is its entries, not its size.
pub(crate) const MAX_BYTES: u64 = 32 << 20;

/// The most entries a lock holds: each source, each file and each name of
/// an `executable`, `removed` or `skills` list is one. One source's tree lists at
/// most as many entries ([`super::git`]); a lock of more is refused at
/// the line that passes the cap, before it is held.
pub(crate) const MAX_ENTRIES: usize = 200_000;

/// The largest lock read in a TOML form other than the tool's own (one
/// edited by hand): the TOML reader holds a tree of the whole text, so
/// such a lock is capped as the sources file is.
const MAX_TOML_BYTES: u64 = super::sources::MAX_BYTES;

const HEADER: &str = "# Written by `bernstein skills add` and `bernstein skills update --yes`; do not edit.\n# What each source of sources.toml resolved to: the commit and the SHA-256 of every file taken.\n";

/// One source, resolved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LockedSource {
    /// The repository.
    pub url: String,
    /// The ref asked for (`None`: the remote's `HEAD`).
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// The commit it resolved to (40 or 64 hexadecimal digits).
    pub commit: String,
    /// The subdirectory the skills were taken from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The plugin whose declared skills were taken, instead of `path`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// The skills asked for (`None`: every skill found).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
    /// The files taken with an execute bit, `SKILL/PATH`, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub executable: Vec<String>,
    /// The skills this source provided at an earlier lock that upstream
    /// has since removed, sorted: a layer's override of one is not a
    /// skill of its own while no layer gives it a body (an orphan, which
    /// `validate` warns about and export leaves out). Kept until a source
    /// has the skill again.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<String>,
    /// Every file taken, `SKILL/PATH` → `sha256:HEX`.
    pub files: BTreeMap<String, String>,
}

impl LockedSource {
    /// The skills this source provides, sorted.
    pub fn skills_taken(&self) -> BTreeSet<&str> {
        self.files.keys().map(|f| super::skill_of(f)).collect()
    }

    /// The digest recorded for `file`.
    pub fn digest(&self, file: &str) -> Option<Digest> {
        self.files.get(file).and_then(|d| Digest::parse(d))
    }
}

/// The whole lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Lock {
    /// [`VERSION`].
    #[serde(default)]
    version: u32,
    /// Source name → what it resolved to.
    #[serde(default, rename = "source")]
    pub sources: BTreeMap<String, LockedSource>,
}

impl Lock {
    /// Reads the lock; `None` if it does not exist. Merge-conflict markers,
    /// an unknown version, an unknown key or a digest that is not
    /// `sha256:` and 64 hexadecimal digits are errors naming the fix.
    ///
    /// The lock is read a line at a time, as the tool writes it, and built
    /// as it is read: its text is never held, a lock over `MAX_BYTES` or
    /// `MAX_ENTRIES` is refused at the line that passes the cap, and
    /// comment lines cost only their reading. A lock in another TOML form
    /// (edited by hand) is read as TOML up to `MAX_TOML_BYTES`.
    pub fn read(path: &Path) -> Result<Option<Lock>> {
        use std::io::{Read as _, Seek as _};
        let Some((mut file, size)) = open_text(path, MAX_BYTES)? else {
            return Ok(None);
        };
        let lock = {
            let reader = std::io::BufReader::with_capacity(64 * 1024, (&file).take(MAX_BYTES + 1));
            read_lines(reader, size, path)?
        };
        let lock = match lock {
            Some(lock) => lock,
            None => {
                // Another TOML form, within the TOML cap: read it whole.
                let mut bytes = Vec::new();
                file.rewind()
                    .and_then(|()| (&file).take(MAX_TOML_BYTES + 1).read_to_end(&mut bytes))
                    .map_err(|e| refused(ErrorKind::Io, path, format!("cannot read: {e}")))?;
                if bytes.len() as u64 > MAX_TOML_BYTES {
                    return Err(refused(
                        ErrorKind::Busy,
                        path,
                        format!(
                            "grew past {} MiB while it was read; read it again",
                            MAX_TOML_BYTES >> 20
                        ),
                    ));
                }
                let text = String::from_utf8(bytes)
                    .map_err(|_| refused(ErrorKind::Invalid, path, "not valid UTF-8"))?;
                from_toml(&text, path)?
            }
        };
        lock.check(path)?;
        Ok(Some(lock))
    }

    /// Parses the text of a lock at `path`, as [`Lock::read`] reads the
    /// file.
    pub fn parse(text: &str, path: &Path) -> Result<Lock> {
        let lock = match read_lines(text.as_bytes(), text.len() as u64, path)? {
            Some(lock) => lock,
            None => from_toml(text, path)?,
        };
        lock.check(path)?;
        Ok(lock)
    }

    /// The checks of what a lock says, however it was read.
    fn check(&self, path: &Path) -> Result<()> {
        let lock = self;
        if lock.version != VERSION {
            return Err(refused(
                ErrorKind::Stale,
                path,
                format!(
                    "lock format version {} is not one this bernstein reads (it reads {VERSION}); upgrade bernstein, or run `bernstein skills update --yes` to write the lock again",
                    lock.version
                ),
            ));
        }
        for (name, s) in &lock.sources {
            let at = |m: String| {
                refused(
                    ErrorKind::Invalid,
                    path,
                    format!("source '{}': {m}", crate::text::escape(name)),
                )
            };
            super::sources::check_source_name(name).map_err(|m| at(m.into()))?;
            super::sources::check_url(&s.url)
                .map_err(|m| at(format!("url {}: {m}", super::location::Shown(&s.url))))?;
            if !(s.commit.len() == 40 || s.commit.len() == 64)
                || !s
                    .commit
                    .bytes()
                    .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
            {
                return Err(at(
                    "commit: not 40 or 64 lowercase hexadecimal digits".into()
                ));
            }
            if let Some(p) = &s.path {
                super::sources::check_subdir(p).map_err(|m| at(format!("path: {m}")))?;
            }
            if let Some(p) = &s.plugin {
                super::sources::check_plugin(p).map_err(|m| at(format!("plugin: {m}")))?;
                if s.path.is_some() {
                    return Err(at("path and plugin: a source has one of them".into()));
                }
            }
            // A skill's files are next to each other: its name is checked
            // once.
            let mut skill = None;
            for (file, digest) in &s.files {
                let this = super::skill_of(file);
                let checked = if skill == Some(this) {
                    check_file_path(file)
                } else {
                    skill = Some(this);
                    check_file_name(file)
                };
                checked.map_err(|m| at(format!("file '{}': {m}", crate::text::escape(file))))?;
                if Digest::parse(digest).is_none() {
                    return Err(at(format!(
                        "file '{}': the digest is not sha256: and 64 lowercase hexadecimal digits",
                        crate::text::escape(file)
                    )));
                }
            }
            // A name each, looked up among the files: a skill's files start
            // with `NAME/`.
            if let Some(r) = s.removed.iter().find(|r| {
                crate::layer::check_name(r).is_err()
                    || s.files
                        .range(format!("{r}/")..)
                        .next()
                        .is_some_and(|(f, _)| super::skill_of(f) == r.as_str())
            }) {
                return Err(at(format!(
                    "removed: '{}' is not a skill's name, or one the source still provides",
                    crate::text::escape(r)
                )));
            }
            if let Some(x) = s.executable.iter().find(|x| !s.files.contains_key(*x)) {
                return Err(at(format!(
                    "executable: '{}' is not one of the files",
                    crate::text::escape(x)
                )));
            }
        }
        Ok(())
    }

    /// The lock's bytes: a fixed header, then TOML with sorted sources and
    /// files.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut lock = self.clone();
        lock.version = VERSION;
        for s in lock.sources.values_mut() {
            s.executable.sort();
            s.executable.dedup();
            s.removed.sort();
            s.removed.dedup();
        }
        let mut out = String::with_capacity(
            HEADER.len()
                + lock
                    .sources
                    .values()
                    .map(|s| 100 * s.files.len() + 300)
                    .sum::<usize>(),
        );
        out.push_str(HEADER);
        fast::write(&lock, &mut out);
        out.into_bytes()
    }

    /// Writes the lock at `path` atomically: a reader sees the old lock or
    /// the new one, never a part of it.
    pub fn write(&self, path: &Path) -> Result<()> {
        let bytes = self.to_bytes();
        // Never a lock the tool cannot read back: a project with one is
        // stuck, every command refusing it.
        let text = String::from_utf8_lossy(&bytes);
        match Lock::parse(&text, path) {
            Ok(back) if back.sources == self.sources => {}
            Ok(_) => {
                return Err(refused(
                    ErrorKind::Invalid,
                    path,
                    "the lock this would write does not read back as written; nothing was written",
                ));
            }
            Err(e) => {
                return Err(refused(
                    ErrorKind::Invalid,
                    path,
                    format!(
                        "the lock this would write cannot be read back ({e}); nothing was written"
                    ),
                ));
            }
        }
        crate::export::write_atomic(path, &bytes)
    }
}

/// Is `line` a merge-conflict marker?
fn is_conflict(line: &[u8]) -> bool {
    line.starts_with(b"<<<<<<<") || line.starts_with(b">>>>>>>") || line.starts_with(b"=======")
}

/// The error for a lock with merge-conflict markers, the first at `line`.
fn conflicted(path: &Path, line: usize) -> crate::error::Error {
    super::sources::located(
        path,
        Some((line, 1)),
        "the lock holds merge-conflict markers; resolve the conflict in sources.toml, then run `bernstein skills update --yes` to write the lock again",
    )
}

/// Does the lock at `path` hold merge-conflict markers? Then `update
/// --yes` writes it again from the sources file alone.
pub fn is_conflicted(path: &Path) -> bool {
    use std::io::{BufRead as _, Read as _};
    let Ok(Some((file, _))) = open_text(path, MAX_BYTES) else {
        return false;
    };
    let mut reader = std::io::BufReader::with_capacity(64 * 1024, file.take(MAX_BYTES));
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return false,
            Ok(_) if is_conflict(&line) => return true,
            Ok(_) => {}
        }
    }
}

/// A lock in a TOML form other than the tool's own, whole in `text`.
fn from_toml(text: &str, path: &Path) -> Result<Lock> {
    if let Some(n) = text.lines().position(|l| is_conflict(l.as_bytes())) {
        return Err(conflicted(path, n + 1));
    }
    let lock: Lock = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    let entries = lock
        .sources
        .values()
        .map(|s| {
            1 + s.files.len()
                + s.executable.len()
                + s.removed.len()
                + s.skills.as_ref().map_or(0, Vec::len)
        })
        .sum::<usize>();
    if entries > MAX_ENTRIES {
        return Err(refused(ErrorKind::Invalid, path, too_many()));
    }
    Ok(lock)
}

/// What to do about a lock the tool cannot read.
const REWRITE: &str = "restore the lock from version control, or remove it and run `bernstein skills update --yes` to write it again";

/// Why a lock over [`MAX_ENTRIES`] is refused.
fn too_many() -> String {
    format!(
        "the lock holds more than {MAX_ENTRIES} entries (sources, files, and names in `executable`, `removed` and `skills` lists), more than a source's tree may list; {REWRITE}"
    )
}

/// Reads a lock a line at a time from `reader` (`size`: the size the file
/// reports); `None` when a line is not one the tool writes and the lock
/// is small enough to read as TOML instead.
fn read_lines(mut reader: impl std::io::BufRead, size: u64, path: &Path) -> Result<Option<Lock>> {
    let mut parser = fast::Parser::default();
    let mut line = Vec::new();
    let mut n = 0;
    let mut read: u64 = 0;
    // The first line not in the tool's form, if any; past it, lines are
    // only looked at for conflict markers.
    let mut foreign: Option<usize> = None;
    loop {
        line.clear();
        let got = reader
            .read_until(b'\n', &mut line)
            .map_err(|e| refused(ErrorKind::Io, path, format!("cannot read: {e}")))?;
        if got == 0 {
            break;
        }
        n += 1;
        read += got as u64;
        if read > MAX_BYTES {
            return Err(refused(
                ErrorKind::Invalid,
                path,
                format!("is over the {} MiB limit for a lock", MAX_BYTES >> 20),
            ));
        }
        if is_conflict(&line) {
            return Err(conflicted(path, n));
        }
        if foreign.is_some() {
            continue;
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        let text = text.strip_suffix(b"\r").unwrap_or(text);
        let Ok(text) = std::str::from_utf8(text) else {
            return Err(super::sources::located(
                path,
                Some((n, 1)),
                "not valid UTF-8",
            ));
        };
        match parser.line(text, n) {
            Ok(()) => {}
            Err(fast::Bad::TooMany) => {
                return Err(super::sources::located(path, Some((n, 1)), &too_many()));
            }
            Err(fast::Bad::Foreign(_)) if size <= MAX_TOML_BYTES => return Ok(None),
            Err(fast::Bad::Foreign(at)) => foreign = Some(at),
        }
    }
    let at = match foreign {
        Some(at) => at,
        None => match parser.finish() {
            Ok(lock) => return Ok(Some(lock)),
            Err(_) if size <= MAX_TOML_BYTES => return Ok(None),
            Err(at) => at,
        },
    };
    Err(super::sources::located(
        path,
        Some((at, 1)),
        &format!(
            "not a line of a lock as `bernstein skills` writes it; a lock over {} MiB is read only in that form; {REWRITE}",
            MAX_TOML_BYTES >> 20
        ),
    ))
}

/// A locked file's name: `SKILL/PATH`, `/`-separated, every component a
/// visible, printable name.
pub fn check_file_name(file: &str) -> std::result::Result<(), &'static str> {
    crate::layer::check_name(super::skill_of(file))?;
    check_file_path(file)
}

/// [`check_file_name`] but for the skill's name.
fn check_file_path(file: &str) -> std::result::Result<(), &'static str> {
    let mut parts = file.split('/');
    parts.next();
    let mut any = false;
    for c in parts {
        any = true;
        if c.is_empty() || c.starts_with('.') || c.chars().any(char::is_control) || c.contains('\\')
        {
            return Err("a component is empty, hidden, or holds a control character or '\\'");
        }
    }
    if any {
        Ok(())
    } else {
        Err("names a skill, not a file in it")
    }
}

/// The lock's own text form: written here rather than by a TOML
/// serialiser so that reading it back is one pass over its lines
/// ([`fast::parse`]); it is TOML, and any TOML reader reads the same lock.
mod fast {
    use super::{Lock, LockedSource, VERSION};
    use std::collections::BTreeMap;
    use std::fmt::Write as _;

    /// A key: bare when TOML allows it, else a quoted string.
    fn key(k: &str, out: &mut String) {
        if !k.is_empty()
            && k.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            out.push_str(k);
        } else {
            string(k, out);
        }
    }

    /// A TOML basic string.
    fn string(s: &str, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            match c {
                '"' => out.push_str("\\\""),
                '\\' => out.push_str("\\\\"),
                c if c.is_control() => {
                    let _ = write!(out, "\\u{:04X}", c as u32);
                }
                c => out.push(c),
            }
        }
        out.push('"');
    }

    fn array(items: &[String], out: &mut String) {
        out.push('[');
        for (i, s) in items.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            string(s, out);
        }
        out.push(']');
    }

    /// Writes `lock` (without the header).
    pub(super) fn write(lock: &Lock, out: &mut String) {
        let _ = writeln!(out, "version = {VERSION}");
        for (name, s) in &lock.sources {
            out.push_str("\n[source.");
            key(name, out);
            out.push_str("]\n");
            let field = |k: &str, v: &str, out: &mut String| {
                out.push_str(k);
                out.push_str(" = ");
                string(v, out);
                out.push('\n');
            };
            field("url", &s.url, out);
            if let Some(r) = &s.git_ref {
                field("ref", r, out);
            }
            field("commit", &s.commit, out);
            if let Some(p) = &s.path {
                field("path", p, out);
            }
            if let Some(p) = &s.plugin {
                field("plugin", p, out);
            }
            if let Some(k) = &s.skills {
                out.push_str("skills = ");
                array(k, out);
                out.push('\n');
            }
            if !s.executable.is_empty() {
                out.push_str("executable = ");
                array(&s.executable, out);
                out.push('\n');
            }
            if !s.removed.is_empty() {
                out.push_str("removed = ");
                array(&s.removed, out);
                out.push('\n');
            }
            out.push_str("\n[source.");
            key(name, out);
            out.push_str(".files]\n");
            for (f, d) in &s.files {
                string(f, out);
                out.push_str(" = ");
                string(d, out);
                out.push('\n');
            }
        }
    }

    /// Why a line was not taken.
    pub(super) enum Bad {
        /// Not a line the tool writes, at this line (a source left
        /// incomplete is named at its header).
        Foreign(usize),
        /// Past [`super::MAX_ENTRIES`].
        TooMany,
    }

    /// What [`Parser`] is in the middle of.
    #[derive(Default)]
    struct Current {
        name: String,
        /// The line of its `[source.NAME]`.
        line: usize,
        url: Option<String>,
        git_ref: Option<String>,
        commit: Option<String>,
        path: Option<String>,
        plugin: Option<String>,
        skills: Option<Vec<String>>,
        executable: Option<Vec<String>>,
        removed: Option<Vec<String>>,
        /// Its `[source.NAME.files]` table has begun.
        in_files: bool,
        /// Its files, in strictly increasing order, as written.
        files: Vec<(String, String)>,
    }

    /// The lock as [`write`] writes it, read a line at a time and built as
    /// it is read. Every line it takes means to a TOML reader what it
    /// means here, so no second reading is needed: comments and blank
    /// lines anywhere, `version` before the first table, each source's
    /// table then its `files` table, sources and files in strictly
    /// increasing order (which TOML's refusal of a key given twice needs),
    /// each key once, strings with the escapes `write` makes (`\"`, `\\`,
    /// `\uXXXX`). Anything else is [`Bad::Foreign`], for the TOML reader.
    #[derive(Default)]
    pub(super) struct Parser {
        lock: Lock,
        version: bool,
        current: Option<Current>,
        entries: usize,
    }

    /// A comment line (`comment` follows the `#`): TOML allows no control
    /// character but tab in one.
    fn comment_line(comment: &str, n: usize) -> Result<(), Bad> {
        if comment.chars().any(|c| c.is_control() && c != '\t') {
            Err(Bad::Foreign(n))
        } else {
            Ok(())
        }
    }

    impl Parser {
        /// Takes line `n` (without its line break).
        pub(super) fn line(&mut self, line: &str, n: usize) -> Result<(), Bad> {
            if line.is_empty() {
                return Ok(());
            }
            if let Some(comment) = line.strip_prefix('#') {
                return comment_line(comment, n);
            }
            if let Some(v) = line.strip_prefix("version = ") {
                return self.version_line(v, n);
            }
            if let Some(rest) = line.strip_prefix("[source.") {
                return self.table_header(rest, n);
            }
            match &self.current {
                None => Err(Bad::Foreign(n)),
                Some(c) if c.in_files => self.file_line(line, n),
                Some(_) => self.key_line(line, n),
            }
        }

        /// `version = N`, once, before the first table: decimal digits as
        /// TOML writes an integer (no sign, no leading zero).
        fn version_line(&mut self, v: &str, n: usize) -> Result<(), Bad> {
            if self.version || self.current.is_some() || !self.lock.sources.is_empty() {
                return Err(Bad::Foreign(n));
            }
            if v.is_empty()
                || !v.bytes().all(|b| b.is_ascii_digit())
                || (v.len() > 1 && v.starts_with('0'))
            {
                return Err(Bad::Foreign(n));
            }
            self.lock.version = v.parse().map_err(|_| Bad::Foreign(n))?;
            self.version = true;
            Ok(())
        }

        /// `[source.NAME]` (a new source, after the last one in order) or
        /// `[source.NAME.files]` (the files of the source just opened);
        /// `rest` follows `[source.`.
        fn table_header(&mut self, rest: &str, n: usize) -> Result<(), Bad> {
            let (name, rest) = take_key(rest).ok_or(Bad::Foreign(n))?;
            if rest == ".files]" {
                return match &mut self.current {
                    Some(c) if c.name == name && !c.in_files => {
                        c.in_files = true;
                        Ok(())
                    }
                    _ => Err(Bad::Foreign(n)),
                };
            }
            if rest != "]" {
                return Err(Bad::Foreign(n));
            }
            self.end_source()?;
            if self
                .lock
                .sources
                .last_key_value()
                .is_some_and(|(last, _)| *last >= name)
            {
                return Err(Bad::Foreign(n));
            }
            self.count(1)?;
            self.current = Some(Current {
                name,
                line: n,
                ..Current::default()
            });
            Ok(())
        }

        /// `"FILE" = "DIGEST"` in a source's files table, files in strictly
        /// increasing order.
        fn file_line(&mut self, line: &str, n: usize) -> Result<(), Bad> {
            let c = self.current.as_mut().ok_or(Bad::Foreign(n))?;
            let (f, rest) = take_string(line).ok_or(Bad::Foreign(n))?;
            let (d, rest) = take_string(rest.strip_prefix(" = ").ok_or(Bad::Foreign(n))?)
                .ok_or(Bad::Foreign(n))?;
            if !rest.is_empty() || c.files.last().is_some_and(|(last, _)| *last >= f) {
                return Err(Bad::Foreign(n));
            }
            c.files.push((f, d));
            self.count(1)
        }

        /// `KEY = VALUE` in a source's table: a list (`skills`,
        /// `executable`, `removed`, counted against the cap) or a string,
        /// each key once.
        fn key_line(&mut self, line: &str, n: usize) -> Result<(), Bad> {
            let foreign = Bad::Foreign(n);
            let budget = super::MAX_ENTRIES - self.entries;
            let c = self.current.as_mut().ok_or(Bad::Foreign(n))?;
            let (k, v) = line.split_once(" = ").ok_or(Bad::Foreign(n))?;
            match k {
                "skills" | "executable" | "removed" => {
                    let slot = match k {
                        "skills" => &mut c.skills,
                        "executable" => &mut c.executable,
                        _ => &mut c.removed,
                    };
                    if slot.is_some() {
                        return Err(foreign);
                    }
                    let items = take_array(v, budget)?.ok_or(Bad::Foreign(n))?;
                    self.entries += items.len();
                    *slot = Some(items);
                }
                "url" | "ref" | "commit" | "path" | "plugin" => {
                    let slot = match k {
                        "url" => &mut c.url,
                        "ref" => &mut c.git_ref,
                        "commit" => &mut c.commit,
                        "path" => &mut c.path,
                        _ => &mut c.plugin,
                    };
                    let (v, rest) = take_string(v).ok_or(Bad::Foreign(n))?;
                    if slot.is_some() || !rest.is_empty() {
                        return Err(foreign);
                    }
                    *slot = Some(v);
                }
                _ => return Err(foreign),
            }
            Ok(())
        }

        fn count(&mut self, n: usize) -> Result<(), Bad> {
            self.entries += n;
            if self.entries > super::MAX_ENTRIES {
                Err(Bad::TooMany)
            } else {
                Ok(())
            }
        }

        /// Ends the source being read, which must be whole.
        fn end_source(&mut self) -> Result<(), Bad> {
            let Some(c) = self.current.take() else {
                return Ok(());
            };
            let (Some(url), Some(commit), true) = (c.url, c.commit, c.in_files) else {
                return Err(Bad::Foreign(c.line));
            };
            self.lock.sources.insert(
                c.name,
                LockedSource {
                    url,
                    git_ref: c.git_ref,
                    commit,
                    path: c.path,
                    plugin: c.plugin,
                    skills: c.skills,
                    executable: c.executable.unwrap_or_default(),
                    removed: c.removed.unwrap_or_default(),
                    // Sorted already: built at once, each node full.
                    files: c.files.into_iter().collect::<BTreeMap<_, _>>(),
                },
            );
            Ok(())
        }

        /// The lock read, or the line of the source left incomplete.
        pub(super) fn finish(mut self) -> Result<Lock, usize> {
            match self.end_source() {
                Ok(()) => Ok(self.lock),
                Err(Bad::Foreign(at)) => Err(at),
                Err(Bad::TooMany) => unreachable!("ending a source adds no entry"),
            }
        }
    }

    /// A basic string at the start of `s`, as [`string`] writes one, and
    /// what follows it.
    fn take_string(s: &str) -> Option<(String, &str)> {
        let rest = s.strip_prefix('"')?;
        let mut out = String::new();
        let mut chars = rest.char_indices();
        while let Some((i, c)) = chars.next() {
            match c {
                '"' => return Some((out, &rest[i + 1..])),
                '\\' => match chars.next()?.1 {
                    '"' => out.push('"'),
                    '\\' => out.push('\\'),
                    'u' => {
                        let start = i + 2;
                        let hex = rest.get(start..start + 4)?;
                        if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                            return None;
                        }
                        out.push(char::from_u32(u32::from_str_radix(hex, 16).ok()?)?);
                        for _ in 0..4 {
                            chars.next();
                        }
                    }
                    _ => return None,
                },
                // What `string` escapes is never there raw.
                c if c.is_control() => return None,
                c => out.push(c),
            }
        }
        None
    }

    fn take_key(s: &str) -> Option<(String, &str)> {
        if s.starts_with('"') {
            return take_string(s);
        }
        let end = s
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
            .unwrap_or(s.len());
        (end > 0).then(|| (s[..end].to_owned(), &s[end..]))
    }

    /// An array of strings as [`array`] writes one, the whole of `s`; at
    /// most `budget` items, else [`Bad::TooMany`].
    fn take_array(s: &str, budget: usize) -> Result<Option<Vec<String>>, Bad> {
        let Some(mut rest) = s.strip_prefix('[') else {
            return Ok(None);
        };
        let mut out = Vec::new();
        if let Some(r) = rest.strip_prefix(']') {
            return Ok(r.is_empty().then_some(out));
        }
        loop {
            let Some((item, r)) = take_string(rest) else {
                return Ok(None);
            };
            if out.len() == budget {
                return Err(Bad::TooMany);
            }
            out.push(item);
            if let Some(r) = r.strip_prefix(", ") {
                rest = r;
            } else {
                return Ok((r == "]").then_some(out));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_lock_is_the_same_bytes_and_reads_back() {
        let mut lock = Lock::default();
        for name in ["zeta", "alpha"] {
            let mut files = BTreeMap::new();
            files.insert(
                "b/SKILL.md".to_owned(),
                format!("sha256:{}", "b".repeat(64)),
            );
            files.insert(
                "a/SKILL.md".to_owned(),
                format!("sha256:{}", "a".repeat(64)),
            );
            lock.sources.insert(
                name.to_owned(),
                LockedSource {
                    url: "https://example.com/x".into(),
                    git_ref: Some("main".into()),
                    commit: "0".repeat(40),
                    path: None,
                    plugin: Some("document-skills".into()),
                    skills: None,
                    executable: vec!["b/SKILL.md".into(), "a/SKILL.md".into()],
                    removed: vec!["d".into(), "c".into()],
                    files,
                },
            );
        }
        let bytes = lock.to_bytes();
        let text = String::from_utf8(bytes.clone()).unwrap();
        assert!(
            text.find("[source.alpha]") < text.find("[source.zeta]"),
            "{text}"
        );
        assert!(
            text.find("\"a/SKILL.md\" =") < text.find("\"b/SKILL.md\" ="),
            "{text}"
        );
        let back = Lock::parse(&text, Path::new("sources.lock")).unwrap();
        assert_eq!(back.to_bytes(), bytes);
    }

    /// Issue 44 #10: a lock naming `pdf//abs/path` was written, and every
    /// command then refused it.
    #[test]
    fn a_lock_that_cannot_be_read_back_is_never_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sources.lock");
        std::fs::write(&path, "kept\n").unwrap();
        let mut files = BTreeMap::new();
        files.insert(
            "pdf//abs/path".to_owned(),
            format!("sha256:{}", "a".repeat(64)),
        );
        let mut lock = Lock::default();
        lock.sources.insert(
            "x".to_owned(),
            LockedSource {
                url: "https://example.com/x".into(),
                git_ref: None,
                commit: "0".repeat(40),
                path: None,
                plugin: None,
                skills: None,
                executable: vec![],
                removed: vec![],
                files,
            },
        );
        let err = lock.write(&path).unwrap_err().to_string();
        assert!(err.contains("cannot be read back"), "{err}");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "kept\n");
    }

    #[test]
    fn the_lock_is_toml_that_reads_the_same_by_either_reader() {
        let mut lock = Lock::default();
        let mut files = BTreeMap::new();
        files.insert(
            "a/we\"ird é.md".to_owned(),
            format!("sha256:{}", "c".repeat(64)),
        );
        files.insert(
            "a/SKILL.md".to_owned(),
            format!("sha256:{}", "d".repeat(64)),
        );
        lock.sources.insert(
            "sö.urce".to_owned(),
            LockedSource {
                url: "ssh://git@example.com/x\"y".into(),
                git_ref: None,
                commit: "1".repeat(40),
                path: Some("skills".into()),
                plugin: None,
                skills: Some(vec!["a".into(), "b\"c".into()]),
                executable: vec![],
                removed: vec!["gone".into()],
                files,
            },
        );
        lock.version = VERSION;
        let text = String::from_utf8(lock.to_bytes()).unwrap();
        let by_toml: Lock = toml::from_str(&text).unwrap();
        assert_eq!(by_toml, lock, "{text}");
        // Read by the line reader, not the TOML fallback.
        let fast = read_lines(text.as_bytes(), u64::MAX, Path::new("sources.lock"))
            .unwrap()
            .unwrap();
        assert_eq!(fast, lock, "{text}");
        // A lock written by hand in another TOML style is read too.
        let hand = "version = 1\n[source.x]\nurl = 'https://example.com/x'\ncommit = \"2222222222222222222222222222222222222222\"\nfiles = { \"a/SKILL.md\" = \"sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\" }\n";
        let read = Lock::parse(hand, Path::new("sources.lock")).unwrap();
        assert_eq!(read.sources["x"].files.len(), 1);
    }

    /// A lock of two sources, as the tool writes it.
    fn written() -> String {
        let mut lock = Lock::default();
        for name in ["a", "b.c"] {
            let mut files = BTreeMap::new();
            for f in ["s/SKILL.md", "s/x.py", "t/SKILL.md"] {
                files.insert(f.to_owned(), format!("sha256:{}", "e".repeat(64)));
            }
            lock.sources.insert(
                name.to_owned(),
                LockedSource {
                    url: "https://example.com/acme/x".into(),
                    git_ref: Some("v1".into()),
                    commit: "1".repeat(40),
                    path: None,
                    plugin: Some("p".into()),
                    skills: Some(vec!["s".into(), "t".into()]),
                    executable: vec!["s/x.py".into()],
                    removed: vec!["gone".into()],
                    files,
                },
            );
        }
        String::from_utf8(lock.to_bytes()).unwrap()
    }

    /// The line reader takes a line only where a TOML reader reads the
    /// same: over many edits of a written lock, whatever it takes, TOML
    /// reads as the same lock (or TOML refuses and so does the reader).
    #[test]
    fn what_the_line_reader_takes_toml_reads_the_same() {
        let text = written();
        let lines: Vec<&str> = text.lines().collect();
        let odd = [
            "version = 1",
            "version = 01",
            "version = +1",
            "url = \"https://example.com/acme/y\"",
            "ref = \"v2\"",
            "skills = [\"s\"]",
            "skills = [\"s\", \"s\"]",
            "\"s/SKILL.md\" = \"sha256:0000\"",
            "\"a/SKILL.md\" = \"x\"",
            "\"z/SKILL.md\" = \"x\"",
            "\"z/\\u+041\" = \"x\"",
            "\"z/\\u0041\" = \"x\"",
            "\"z/\\u00\" = \"x\"",
            "\"z/\\n\" = \"x\"",
            "\"z/\tt\" = \"x\"",
            "\"z/SKILL.md\" = \"x\" # c",
            "# a comment",
            "#\u{7f}",
            "[source.a]",
            "[source.a.files]",
            "[source.\"a\"]",
            "[source.zz]",
            "[source.zz.files]",
            "[source]",
            " [source.q]",
            "files = {}",
            "",
        ];
        let path = Path::new("sources.lock");
        let mut taken = 0;
        for at in 0..=lines.len() {
            for line in odd {
                // Insert the line at `at`, then replace line `at` by it.
                for replace in [false, true] {
                    if replace && at == lines.len() {
                        continue;
                    }
                    let mut edited = lines.clone();
                    if replace {
                        edited[at] = line;
                    } else {
                        edited.insert(at, line);
                    }
                    let edited = edited.join("\n") + "\n";
                    let fast = read_lines(edited.as_bytes(), u64::MAX, path);
                    let by_toml = toml::from_str::<Lock>(&edited);
                    if let Ok(Some(lock)) = fast {
                        taken += 1;
                        assert_eq!(Ok(&lock), by_toml.as_ref().map_err(|_| ()), "{edited}");
                    }
                }
            }
        }
        assert!(
            taken > 100,
            "the reader took too few edits to tell: {taken}"
        );
    }

    /// Past the size read as TOML, a lock is read in the tool's form only,
    /// and what is not is one error at its line.
    #[test]
    fn a_large_lock_not_in_the_tools_form_is_located() {
        let text = written();
        let path = Path::new("sources.lock");
        let out_of_order = text.replacen("\"s/SKILL.md\"", "\"u/SKILL.md\"", 1);
        // Small: read as TOML, which takes any order.
        assert!(Lock::parse(&out_of_order, path).is_ok());
        let padding = "#\n".repeat(MAX_TOML_BYTES as usize);
        let big = format!("{out_of_order}{padding}");
        let err = Lock::parse(&big, path).unwrap_err().to_string();
        let line = out_of_order
            .lines()
            .position(|l| l.starts_with("\"s/x.py\""))
            .unwrap()
            + 1;
        assert!(err.contains(&format!("sources.lock:{line}:1:")), "{err}");
        assert!(err.contains("not a line of a lock"), "{err}");
        // In the tool's form, the padding costs nothing but its reading.
        assert!(Lock::parse(&format!("{text}{padding}"), path).is_ok());
    }
}
