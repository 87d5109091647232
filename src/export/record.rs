//! The record of what export wrote: `DIR/.bernstein-skills.json`.
//!
//! An output directory is shared: `~/.claude/skills` also holds the
//! person's own skills and what other installers put there. Export creates,
//! updates and removes only what this record lists, so it must say exactly
//! which files export wrote and with which bytes: per skill, each file's
//! path relative to the directory, its SHA-256, its size and its execute
//! bit. A file on disk whose digest is not the recorded one was changed by
//! hand; a file the record does not list was not written by export.
//!
//! The record is deterministic (keys sorted, no times, inodes or absolute
//! paths: the same export gives the same bytes on every machine), so it can
//! be committed beside the manifests and checked in CI. Committed, it is
//! attacker input like every other file there: it is read capped
//! (`MAX_RECORD_BYTES`), every skill name is checked as a layer's would be
//! and every path must be a plain relative path inside its skill, and a bad
//! record is refused whole with one located error. Its claims are honoured
//! only as far as the machine's ledger or the files' content confirm them
//! (`super::ledger`), which has the same shape and is read by the same
//! reader.
//!
//! While an export writes, the record lists each file it is about to
//! replace with both digests (`sha256` the new one, `was` the old), so that
//! an export interrupted between two files leaves a record that still
//! accounts for every byte it wrote.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::Format;
use crate::digest::Hashing;
use crate::error::{Error, Result};
use crate::text::{EXCERPT_CHARS, excerpt};

/// The record's file name in the output directory (hidden: it is never a
/// skill, and listings skip it).
pub const RECORD_NAME: &str = ".bernstein-skills.json";

/// The record format this version reads and writes.
pub(crate) const RECORD_VERSION: u64 = 1;

/// The largest record read: 64 MiB, about ten times the record of 10,000
/// skills of five files each.
pub(crate) const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The most files a record may list for one skill: a skill has at most
/// 1,000 files (`FileLimits`), and export adds its `SKILL.md` and the files
/// a target translates; twice that leaves room, and bounds what is compared
/// per skill.
pub(crate) const MAX_SKILL_FILES: usize = 2_000;

/// The deepest path a record may list below a skill's directory.
pub(crate) const MAX_DEPTH: usize = 16;

/// The longest path a record may list, in bytes (`PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// The tool that writes records, as the record names it.
pub(crate) const TOOL: &str = concat!("bernstein-skills ", env!("CARGO_PKG_VERSION"));

pub use crate::digest::Digest;

/// One file export wrote.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(from = "RawFile")]
pub(crate) struct FileRecord {
    /// Its SHA-256.
    pub sha256: Digest,
    /// Its size in bytes.
    pub size: u64,
    /// Written with the execute bits.
    pub executable: bool,
    /// While an export replaces the file: the digest and size of the bytes
    /// it replaces, which export also wrote. Boxed: rarely there, and the
    /// record of 60,000 files is held in memory.
    pub was: Option<Box<(Digest, u64)>>,
}

impl FileRecord {
    /// The contents export may have left in this file: the recorded one,
    /// then the replaced one.
    pub fn known(&self) -> Vec<(Digest, u64)> {
        let mut out = vec![(self.sha256, self.size)];
        out.extend(self.was.as_deref().copied());
        out
    }
}

/// One skill's files, by path relative to the output directory.
///
/// A sorted slice rather than a map, allocated to its size: a skill has a
/// handful of files, and a map (or a vector's spare room) per skill would
/// cost more than the files themselves for each of 500,000 skills.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct SkillRecord {
    files: Box<[(Box<str>, FileRecord)]>,
}

impl SkillRecord {
    /// A record of `files`, in any order; the last of a repeated path wins.
    pub fn new(mut files: Vec<(String, FileRecord)>) -> SkillRecord {
        files.sort_by(|a, b| a.0.cmp(&b.0));
        files.dedup_by(|later, earlier| {
            let same = later.0 == earlier.0;
            if same {
                std::mem::swap(later, earlier);
            }
            same
        });
        SkillRecord {
            files: files
                .into_iter()
                .map(|(rel, f)| (rel.into_boxed_str(), f))
                .collect(),
        }
    }

    /// The file at `rel`.
    pub fn get(&self, rel: &str) -> Option<&FileRecord> {
        self.files
            .binary_search_by(|(r, _)| (**r).cmp(rel))
            .ok()
            .map(|i| &self.files[i].1)
    }

    /// Every file, by path.
    pub fn files(&self) -> impl Iterator<Item = (&str, &FileRecord)> {
        self.files.iter().map(|(r, f)| (&**r, f))
    }

    /// How many files.
    pub fn len(&self) -> usize {
        self.files.len()
    }
}

/// What export wrote into one output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Record {
    /// What the directory holds: manifests or skill directories.
    pub format: Format,
    /// The target the directory was exported for (`--target`), if any: an
    /// export for another target, or for none, would shape the same skills
    /// otherwise, so it is refused with the flag to use.
    pub target: Option<String>,
    /// Every skill export manages there, by name.
    pub skills: BTreeMap<String, SkillRecord>,
}

impl Record {
    /// An empty record for `format`.
    pub fn new(format: Format) -> Record {
        Record {
            format,
            target: None,
            skills: BTreeMap::new(),
        }
    }

    #[cfg(test)]
    /// The record's bytes: pretty JSON, keys sorted at every depth, a
    /// trailing newline; `spec_sha256` names the spec the skills were
    /// merged under.
    pub(crate) fn to_bytes(&self, spec_sha256: &Digest) -> Vec<u8> {
        self.to_bytes_patched(spec_sha256, &BTreeMap::new())
    }

    #[cfg(test)]
    /// [`Record::to_bytes`] of this record with the skills of `patch` in
    /// place of its own (and added), without copying it.
    pub(crate) fn to_bytes_patched(
        &self,
        spec_sha256: &Digest,
        patch: &BTreeMap<String, SkillRecord>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_to(&mut out, spec_sha256, patch)
            .expect("writing to memory does not fail");
        out
    }

    /// The SHA-256 of [`Record::to_bytes`], without building them.
    pub fn digest(&self, spec_sha256: &Digest) -> Digest {
        let mut h = crate::digest::Hasher::new();
        self.write_to(&mut h, spec_sha256, &BTreeMap::new())
            .expect("hashing does not fail");
        h.finish()
    }

    /// [`Record::write_to`] for a file export reads back: an error, before
    /// the limit is passed, for a record over [`MAX_RECORD_BYTES`] (one
    /// export could write, and no export could read).
    pub(crate) fn write_capped(
        &self,
        w: &mut dyn std::io::Write,
        spec_sha256: &Digest,
        patch: &BTreeMap<String, SkillRecord>,
    ) -> std::io::Result<()> {
        self.write_capped_at(MAX_RECORD_BYTES, w, spec_sha256, patch)
    }

    fn write_capped_at(
        &self,
        cap: u64,
        w: &mut dyn std::io::Write,
        spec_sha256: &Digest,
        patch: &BTreeMap<String, SkillRecord>,
    ) -> std::io::Result<()> {
        struct Capped<'w> {
            inner: &'w mut dyn std::io::Write,
            len: u64,
            cap: u64,
        }
        impl std::io::Write for Capped<'_> {
            fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
                if self.len + b.len() as u64 > self.cap {
                    return Err(std::io::Error::other(format!(
                        "the record would be over the {} MiB limit, and no export could read \
                         it back; nothing more was written (export fewer skills into one \
                         directory, or --prune those no layer provides)",
                        MAX_RECORD_BYTES >> 20
                    )));
                }
                let n = self.inner.write(b)?;
                self.len += n as u64;
                Ok(n)
            }
            fn flush(&mut self) -> std::io::Result<()> {
                self.inner.flush()
            }
        }
        let mut capped = Capped {
            inner: w,
            len: 0,
            cap,
        };
        self.write_to(&mut capped, spec_sha256, patch)
    }

    /// Writes [`Record::to_bytes_patched`] to `w`, a skill at a time: the
    /// record of 10,000 skills is never built whole in memory.
    pub(crate) fn write_to(
        &self,
        w: &mut dyn std::io::Write,
        spec_sha256: &Digest,
        patch: &BTreeMap<String, SkillRecord>,
    ) -> std::io::Result<()> {
        let mut out = String::with_capacity(4096);
        out.push_str("{\n  \"format\": ");
        out.push_str(match self.format {
            Format::Json => "\"json\"",
            Format::Skill => "\"skill\"",
        });
        out.push_str(",\n  \"skills\": ");
        // The two sorted lists merged, `patch` winning.
        let mut mine = self.skills.iter().peekable();
        let mut theirs = patch.iter().peekable();
        let merged = std::iter::from_fn(|| match (mine.peek(), theirs.peek()) {
            (Some(a), Some(b)) if a.0 == b.0 => {
                mine.next();
                theirs.next()
            }
            (Some(a), Some(b)) if a.0 < b.0 => mine.next(),
            (Some(_), Some(_)) | (None, Some(_)) => theirs.next(),
            (Some(_), None) => mine.next(),
            (None, None) => None,
        });
        let mut any = false;
        for (i, (name, skill)) in merged.enumerate() {
            any = true;
            out.push_str(if i == 0 { "{\n    " } else { ",\n    " });
            {
                string(&mut out, name);
                out.push_str(": {\n      \"files\": {");
                for (j, (rel, f)) in skill.files.iter().enumerate() {
                    out.push_str(if j == 0 { "\n        " } else { ",\n        " });
                    string(&mut out, rel);
                    out.push_str(": {\n");
                    if f.executable {
                        out.push_str("          \"executable\": true,\n");
                    }
                    out.push_str("          \"sha256\": \"");
                    f.sha256.push_hex(&mut out);
                    out.push_str("\",\n          \"size\": ");
                    out.push_str(&f.size.to_string());
                    if let Some((sha, size)) = f.was.as_deref() {
                        out.push_str(",\n          \"was\": {\n            \"sha256\": \"");
                        sha.push_hex(&mut out);
                        out.push_str("\",\n            \"size\": ");
                        out.push_str(&size.to_string());
                        out.push_str("\n          }");
                    }
                    out.push_str("\n        }");
                }
                out.push_str("\n      }\n    }");
            }
            if out.len() >= 4096 {
                w.write_all(out.as_bytes())?;
                out.clear();
            }
        }
        out.push_str(if any { "\n  }" } else { "{}" });
        out.push_str(",\n  \"spec_sha256\": \"");
        spec_sha256.push_hex(&mut out);
        out.push('"');
        if let Some(target) = &self.target {
            out.push_str(",\n  \"target\": ");
            string(&mut out, target);
        }
        out.push_str(",\n  \"tool\": ");
        string(&mut out, TOOL);
        out.push_str(",\n  \"version\": ");
        out.push_str(&RECORD_VERSION.to_string());
        out.push_str("\n}\n");
        w.write_all(out.as_bytes())
    }

    #[cfg(test)]
    /// Reads a record's bytes, `path` naming it in errors; see
    /// [`Record::read`].
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Record> {
        Record::read(bytes, path, || Some(bytes.to_vec())).map(|(r, _)| r)
    }

    /// Reads a record from `reader` (at most [`MAX_RECORD_BYTES`]), `path`
    /// naming it in errors; returns it with the SHA-256 of its bytes. The
    /// record is built as it is read, never held as text. Everything is
    /// checked before anything is used: the version, the format, every
    /// skill name ([`crate::layer::check_name`]), every path (relative,
    /// inside its skill, no `.`, `..` or hidden component) and digest.
    /// `reread` gives the bytes again, only to name the version of a
    /// record that does not parse.
    pub fn read(
        reader: impl std::io::Read,
        path: &Path,
        reread: impl FnOnce() -> Option<Vec<u8>>,
    ) -> Result<(Record, Digest)> {
        let bad = |at: Option<(usize, usize)>, message: String| Error::BadRecord {
            path: path.to_path_buf(),
            at,
            message,
        };
        let mut hashed = Hashing::new(std::io::Read::take(reader, MAX_RECORD_BYTES + 1));
        let parsed = serde_json::from_reader::<_, RawRecord>(std::io::BufReader::with_capacity(
            64 * 1024,
            &mut hashed,
        ));
        if hashed.len() > MAX_RECORD_BYTES {
            return Err(bad(
                None,
                format!(
                    "is over the {} MiB limit for a record",
                    MAX_RECORD_BYTES >> 20
                ),
            ));
        }
        let raw = match parsed {
            Ok(raw) => raw,
            Err(e) => {
                // A newer version may have changed the shape: say so first.
                if let Some(bytes) = reread()
                    && let Ok(v) = serde_json::from_slice::<JustVersion>(&bytes)
                    && v.version != RECORD_VERSION
                {
                    return Err(bad(None, version_message(v.version)));
                }
                let at = (e.line() > 0).then(|| (e.line(), e.column()));
                return Err(bad(at, excerpt(&strip_position(&e), EXCERPT_CHARS)));
            }
        };
        let digest = hashed.finish();
        if raw.version != RECORD_VERSION {
            return Err(bad(None, version_message(raw.version)));
        }
        let format = match raw.format.as_str() {
            "json" => Format::Json,
            "skill" => Format::Skill,
            other => {
                return Err(bad(
                    None,
                    format!(
                        "format '{}' is neither 'json' nor 'skill'",
                        excerpt(other, EXCERPT_CHARS)
                    ),
                ));
            }
        };
        // Names, repeats and file counts were checked as the record was
        // read; paths need the format, which may come after them.
        for (name, skill) in &raw.skills.0 {
            for (rel, _) in skill.files() {
                if let Err(reason) = check_rel(name, rel, format) {
                    return Err(bad(
                        None,
                        format!(
                            "skill '{}': file '{}' is not a path export writes: {reason}",
                            excerpt(name, EXCERPT_CHARS),
                            excerpt(rel, EXCERPT_CHARS)
                        ),
                    ));
                }
            }
        }
        if let Some(target) = &raw.target
            && (crate::layer::check_name(target).is_err() || target.chars().count() > 64)
        {
            return Err(bad(
                None,
                format!(
                    "'{}' is not a target's name",
                    excerpt(target, EXCERPT_CHARS)
                ),
            ));
        }
        let record = Record {
            format,
            target: raw.target,
            skills: raw.skills.0,
        };
        Ok((record, digest))
    }
}

fn version_message(v: u64) -> String {
    format!(
        "record version {v} is not supported (this {TOOL} reads version {RECORD_VERSION}); \
         was it written by another version?"
    )
}

/// serde_json's message without its trailing " at line L column C", which
/// the error's location already gives.
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// Why `rel` cannot be a file of skill `name` in `format`, if it cannot:
/// `NAME.json` for a manifest; for a skill directory, `NAME/` then one or
/// more components, none empty, `.`, `..`, hidden, over 255 bytes or
/// holding a NUL, at most [`MAX_DEPTH`] deep.
pub(crate) fn check_rel(
    name: &str,
    rel: &str,
    format: Format,
) -> std::result::Result<(), &'static str> {
    match format {
        Format::Json => {
            if rel.strip_suffix(".json") == Some(name) {
                Ok(())
            } else {
                Err("a manifest is the skill's name and .json")
            }
        }
        Format::Skill => {
            let rest = rel
                .strip_prefix(name)
                .and_then(|r| r.strip_prefix('/'))
                .ok_or("not inside the skill's directory")?;
            if rel.len() > MAX_PATH_BYTES {
                return Err("longer than 4096 bytes");
            }
            let mut depth = 0;
            for part in rest.split('/') {
                depth += 1;
                match part {
                    "" => return Err("an empty component"),
                    "." | ".." => return Err("a '.' or '..' component"),
                    p if p.starts_with('.') => return Err("a hidden component"),
                    p if p.len() > super::FILE_NAME_MAX => {
                        return Err("a component longer than 255 bytes");
                    }
                    p if p.contains('\0') => return Err("a NUL character"),
                    _ => {}
                }
            }
            if depth > MAX_DEPTH {
                return Err("more than 16 directories deep");
            }
            Ok(())
        }
    }
}

/// `s` as a JSON string, as the rest of the tool writes JSON.
fn string(out: &mut String, s: &str) {
    crate::output::render::write_json_str(out, s);
}

/// The `skills` object, built into the record's map as it is read: each
/// skill's name checked ([`crate::layer::check_name`]), a name given twice
/// refused, each skill's files sorted, none given twice, at least one. No
/// list of what was read is kept beside the map (a record of 500,000 skills
/// is held once).
struct Skills(BTreeMap<String, SkillRecord>);

impl<'de> Deserialize<'de> for Skills {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Skills;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of skills")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Skills, A::Error> {
                use serde::de::Error as _;
                let mut out = BTreeMap::new();
                while let Some(name) = map.next_key::<String>()? {
                    if let Err(reason) = crate::layer::check_name(&name) {
                        return Err(A::Error::custom(format!(
                            "skill name '{name}' is not a valid name: {reason}"
                        )));
                    }
                    let mut files = map.next_value::<RawSkill>()?.files.0;
                    if files.is_empty() {
                        return Err(A::Error::custom(format!("skill '{name}' lists no file")));
                    }
                    files.sort_by(|a, b| a.0.cmp(&b.0));
                    if let Some(w) = files.windows(2).find(|w| w[0].0 == w[1].0) {
                        return Err(A::Error::custom(format!(
                            "skill '{name}' lists file '{}' twice",
                            w[0].0
                        )));
                    }
                    let skill = SkillRecord {
                        files: files.into_boxed_slice(),
                    };
                    match out.entry(name) {
                        std::collections::btree_map::Entry::Vacant(v) => {
                            v.insert(skill);
                        }
                        std::collections::btree_map::Entry::Occupied(o) => {
                            return Err(A::Error::custom(format!(
                                "skill '{}' is listed twice",
                                o.key()
                            )));
                        }
                    }
                }
                Ok(Skills(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

/// A skill's `files` object, as a list (at most [`MAX_SKILL_FILES`]).
struct Files(Vec<(Box<str>, FileRecord)>);

impl<'de> Deserialize<'de> for Files {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Files;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of files")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> std::result::Result<Files, A::Error> {
                let mut out = Vec::new();
                while let Some((rel, file)) = map.next_entry::<String, FileRecord>()? {
                    if out.len() == MAX_SKILL_FILES {
                        return Err(serde::de::Error::custom(format!(
                            "a skill lists more than {MAX_SKILL_FILES} files, more than \
                             export writes for one"
                        )));
                    }
                    out.push((rel.into_boxed_str(), file));
                }
                Ok(Files(out))
            }
        }
        d.deserialize_map(Visit)
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecord {
    format: String,
    skills: Skills,
    #[allow(dead_code)]
    spec_sha256: Digest,
    #[serde(default)]
    target: Option<String>,
    #[allow(dead_code)]
    tool: String,
    version: u64,
}

#[derive(Deserialize)]
struct JustVersion {
    version: u64,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawSkill {
    files: Files,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    executable: bool,
    sha256: Digest,
    size: u64,
    #[serde(default)]
    was: Option<RawWas>,
}

impl From<RawFile> for FileRecord {
    fn from(f: RawFile) -> FileRecord {
        FileRecord {
            sha256: f.sha256,
            size: f.size,
            executable: f.executable,
            was: f.was.map(|w| Box::new((w.sha256, w.size))),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWas {
    sha256: Digest,
    size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        let mut r = Record::new(Format::Skill);
        let files = vec![
            (
                "writer/scripts/run.sh".to_owned(),
                FileRecord {
                    sha256: Digest::of(b"#!"),
                    size: 2,
                    executable: true,
                    was: None,
                },
            ),
            (
                "writer/SKILL.md".to_owned(),
                FileRecord {
                    sha256: Digest::of(b"a"),
                    size: 1,
                    executable: false,
                    was: Some(Box::new((Digest::of(b"b"), 1))),
                },
            ),
        ];
        r.skills
            .insert("writer".to_owned(), SkillRecord::new(files));
        r
    }

    #[test]
    fn bytes_round_trip_and_are_canonical_json() {
        let r = sample();
        let bytes = r.to_bytes(&Digest::of(b"spec"));
        assert_eq!(Record::parse(&bytes, Path::new("r")).unwrap(), r);
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
        let empty = Record::new(Format::Json).to_bytes(&Digest::of(b""));
        let v: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(
            String::from_utf8(empty).unwrap(),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
    }

    #[test]
    fn a_skill_lists_at_most_what_export_writes_for_one() {
        let most = crate::source::files::FileLimits::default().max_files;
        assert!(
            MAX_SKILL_FILES >= 2 * most,
            "{MAX_SKILL_FILES} < 2 × {most}"
        );
        let entry = |i: usize| {
            format!(
                "\"w/f{i}\": {{\"sha256\": \"{}\", \"size\": 0}}",
                "0".repeat(64)
            )
        };
        let record = |n: usize| {
            let files: Vec<String> = (0..n).map(entry).collect();
            format!(
                "{{\"format\": \"skill\", \"skills\": {{\"w\": {{\"files\": {{{}}}}}}}, \
                 \"spec_sha256\": \"{}\", \"tool\": \"t\", \"version\": 1}}",
                files.join(", "),
                "0".repeat(64)
            )
        };
        let ok = Record::parse(record(MAX_SKILL_FILES).as_bytes(), Path::new("r")).unwrap();
        assert_eq!(ok.skills["w"].len(), MAX_SKILL_FILES);
        let e = Record::parse(record(MAX_SKILL_FILES + 1).as_bytes(), Path::new("r")).unwrap_err();
        assert!(e.to_string().contains("more than 2000 files"), "{e}");
        assert!(matches!(e, Error::BadRecord { at: Some(_), .. }), "{e}");
    }

    #[test]
    fn a_record_over_the_cap_is_never_written() {
        let r = sample();
        let bytes = r.to_bytes(&Digest::of(b""));
        let n = bytes.len() as u64;
        let mut out = Vec::new();
        r.write_capped_at(n, &mut out, &Digest::of(b""), &BTreeMap::new())
            .unwrap();
        assert_eq!(out, bytes);
        let mut out = Vec::new();
        let e = r
            .write_capped_at(n - 1, &mut out, &Digest::of(b""), &BTreeMap::new())
            .unwrap_err();
        assert!(
            e.to_string().contains("no export could read it back"),
            "{e}"
        );
        assert!((out.len() as u64) < n);
    }

    #[test]
    fn paths_must_stay_inside_their_skill() {
        for (rel, ok) in [
            ("w/SKILL.md", true),
            ("w/a/b/c.md", true),
            ("w", false),
            ("w/", false),
            ("w//x", false),
            ("w/../x", false),
            ("w/./x", false),
            ("w/.git/config", false),
            ("/etc/passwd", false),
            ("x/SKILL.md", false),
            ("wx/SKILL.md", false),
            ("w/a\0b", false),
        ] {
            assert_eq!(check_rel("w", rel, Format::Skill).is_ok(), ok, "{rel:?}");
        }
        assert!(check_rel("w", "w.json", Format::Json).is_ok());
        assert!(check_rel("w", "../w.json", Format::Json).is_err());
        let deep = format!("w/{}x", "d/".repeat(16));
        assert!(check_rel("w", &deep, Format::Skill).is_err());
    }

    #[test]
    fn bad_records_are_refused_with_where_and_what() {
        let err = |text: &str| Record::parse(text.as_bytes(), Path::new("r")).unwrap_err();
        let e = err("{\"version\": 1,\n oops}");
        assert!(
            matches!(
                &e,
                Error::BadRecord {
                    at: Some((2, 2)),
                    ..
                }
            ),
            "{e}"
        );
        assert!(
            err("{\"version\": 2, \"other\": 1}")
                .to_string()
                .contains("version 2")
        );
        let good = String::from_utf8(sample().to_bytes(&Digest::of(b""))).unwrap();
        let e = err(&good.replace("\"sha256\": \"ca", "\"sha256\": \"CA"));
        assert!(e.to_string().contains("64 lowercase"), "{e}");
        let e = err(&good.replace("\"writer\": {", "\"Wr\\u202eiter\": {"));
        assert!(e.to_string().contains("Wr\\u{202e}iter"), "{e}");
        let e = err(&good.replace("writer/scripts/run.sh", "writer/SKILL.md"));
        assert!(e.to_string().contains("twice"), "{e}");
    }

    #[test]
    fn a_patched_record_is_the_record_with_the_patch_applied() {
        let mut r = sample();
        let other = SkillRecord::new(vec![(
            "alpha/SKILL.md".to_owned(),
            FileRecord {
                sha256: Digest::of(b"x"),
                size: 1,
                executable: false,
                was: None,
            },
        )]);
        let mut patch = BTreeMap::new();
        patch.insert("alpha".to_owned(), other.clone());
        patch.insert("zulu".to_owned(), other.clone());
        let patched = r.to_bytes_patched(&Digest::of(b""), &patch);
        r.skills.insert("alpha".to_owned(), other.clone());
        r.skills.insert("zulu".to_owned(), other);
        assert_eq!(patched, r.to_bytes(&Digest::of(b"")));
        let mut patch = BTreeMap::new();
        patch.insert("writer".to_owned(), SkillRecord::default());
        let replaced = sample().to_bytes_patched(&Digest::of(b""), &patch);
        assert!(!String::from_utf8(replaced).unwrap().contains("run.sh"));
    }
}
