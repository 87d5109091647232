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
//!
//! [source.acme.files]
//! "pdf-tables/SKILL.md" = "sha256:9f86d08…"
//! "pdf-tables/scripts/extract.py" = "sha256:60303ae…"
//! ```

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::refused;
use super::sources::{read_text, toml_error};
use crate::digest::Digest;
use crate::error::{ErrorKind, Result};

/// The format version this build reads and writes.
pub const VERSION: u32 = 1;

/// The largest lock read: a digest line is about 100 bytes, and a source
/// holds at most the layers' caps.
const MAX_BYTES: u64 = 64 << 20;

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
    pub fn read(path: &Path) -> Result<Option<Lock>> {
        let Some(text) = read_text(path, MAX_BYTES)? else {
            return Ok(None);
        };
        Lock::parse(&text, path).map(Some)
    }

    /// Parses the text of a lock at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<Lock> {
        if let Some(n) = conflict_line(text) {
            return Err(super::sources::located(
                path,
                Some((n + 1, 1)),
                "the lock holds merge-conflict markers; resolve the conflict in sources.toml, then run `bernstein skills update --yes` to write the lock again",
            ));
        }
        // The lock as this tool writes it is read line by line, and taken
        // only if writing it again gives the very same text; anything else
        // (a lock edited by hand) is read as TOML.
        let lock: Lock = match fast::parse(text) {
            Some(lock) if lock.to_bytes() == text.as_bytes() => lock,
            _ => toml::from_str(text).map_err(|e| toml_error(path, text, &e))?,
        };
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
            for (file, digest) in &s.files {
                check_file_name(file)
                    .map_err(|m| at(format!("file '{}': {m}", crate::text::escape(file))))?;
                if Digest::parse(digest).is_none() {
                    return Err(at(format!(
                        "file '{}': the digest is not sha256: and 64 lowercase hexadecimal digits",
                        crate::text::escape(file)
                    )));
                }
            }
            if let Some(x) = s.executable.iter().find(|x| !s.files.contains_key(*x)) {
                return Err(at(format!(
                    "executable: '{}' is not one of the files",
                    crate::text::escape(x)
                )));
            }
        }
        Ok(lock)
    }

    /// The lock's bytes: a fixed header, then TOML with sorted sources and
    /// files.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut lock = self.clone();
        lock.version = VERSION;
        for s in lock.sources.values_mut() {
            s.executable.sort();
            s.executable.dedup();
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

/// The 0-based line of the first merge-conflict marker in `text`.
fn conflict_line(text: &str) -> Option<usize> {
    text.lines().position(|l| {
        l.starts_with("<<<<<<<") || l.starts_with(">>>>>>>") || l.starts_with("=======")
    })
}

/// Does the lock at `path` hold merge-conflict markers? Then `update
/// --yes` writes it again from the sources file alone.
pub fn is_conflicted(path: &Path) -> bool {
    matches!(read_text(path, MAX_BYTES), Ok(Some(t)) if conflict_line(&t).is_some())
}

/// A locked file's name: `SKILL/PATH`, `/`-separated, every component a
/// visible, printable name.
pub fn check_file_name(file: &str) -> std::result::Result<(), &'static str> {
    let mut parts = file.split('/');
    let skill = parts.next().unwrap_or("");
    crate::layer::check_name(skill)?;
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

    /// A basic string at the start of `s`, and what follows it.
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
                        let hex: String =
                            (0..4).filter_map(|_| chars.next().map(|x| x.1)).collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    _ => return None,
                },
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

    fn take_array(s: &str) -> Option<Vec<String>> {
        let mut rest = s.strip_prefix('[')?;
        let mut out = Vec::new();
        if let Some(r) = rest.strip_prefix(']') {
            return r.is_empty().then_some(out);
        }
        loop {
            let (item, r) = take_string(rest)?;
            out.push(item);
            if let Some(r) = r.strip_prefix(", ") {
                rest = r;
            } else {
                return (r == "]").then_some(out);
            }
        }
    }

    /// The lock as [`write`] writes it, read line by line; `None` at the
    /// first line it would not have written (the caller then checks the
    /// whole text by writing the result again).
    pub(super) fn parse(text: &str) -> Option<Lock> {
        let mut lock = Lock::default();
        let mut current: Option<(String, LockedSource)> = None;
        let mut in_files = false;
        for line in text.lines() {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            if let Some(v) = line.strip_prefix("version = ") {
                lock.version = v.parse().ok()?;
                continue;
            }
            if let Some(rest) = line.strip_prefix("[source.") {
                let (name, rest) = take_key(rest)?;
                if rest == ".files]" {
                    in_files = current.as_ref().is_some_and(|(n, _)| *n == name);
                    if !in_files {
                        return None;
                    }
                    continue;
                }
                if rest != "]" {
                    return None;
                }
                if let Some((n, s)) = current.take() {
                    lock.sources.insert(n, s);
                }
                current = Some((
                    name,
                    LockedSource {
                        url: String::new(),
                        git_ref: None,
                        commit: String::new(),
                        path: None,
                        plugin: None,
                        skills: None,
                        executable: Vec::new(),
                        files: BTreeMap::new(),
                    },
                ));
                in_files = false;
                continue;
            }
            let (_, s) = current.as_mut()?;
            if in_files {
                let (f, rest) = take_string(line)?;
                let (d, rest) = take_string(rest.strip_prefix(" = ")?)?;
                if !rest.is_empty() {
                    return None;
                }
                s.files.insert(f, d);
                continue;
            }
            let (k, v) = line.split_once(" = ")?;
            match k {
                "skills" => s.skills = Some(take_array(v)?),
                "executable" => s.executable = take_array(v)?,
                _ => {
                    let (v, rest) = take_string(v)?;
                    if !rest.is_empty() {
                        return None;
                    }
                    match k {
                        "url" => s.url = v,
                        "ref" => s.git_ref = Some(v),
                        "commit" => s.commit = v,
                        "path" => s.path = Some(v),
                        "plugin" => s.plugin = Some(v),
                        _ => return None,
                    }
                }
            }
        }
        if let Some((n, s)) = current.take() {
            lock.sources.insert(n, s);
        }
        Some(lock)
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
                files,
            },
        );
        lock.version = VERSION;
        let text = String::from_utf8(lock.to_bytes()).unwrap();
        let by_toml: Lock = toml::from_str(&text).unwrap();
        assert_eq!(by_toml, lock, "{text}");
        let fast = fast::parse(&text).unwrap();
        assert_eq!(fast, lock, "{text}");
        // A lock written by hand in another TOML style is read too.
        let hand = "version = 1\n[source.x]\nurl = 'https://example.com/x'\ncommit = \"2222222222222222222222222222222222222222\"\nfiles = { \"a/SKILL.md\" = \"sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\" }\n";
        let read = Lock::parse(hand, Path::new("sources.lock")).unwrap();
        assert_eq!(read.sources["x"].files.len(), 1);
    }
}
