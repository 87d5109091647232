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
//! ([`MAX_RECORD_BYTES`]), every skill name is checked as a layer's would be
//! and every path must be a plain relative path inside its skill, and a bad
//! record is refused whole with one located error.
//!
//! While an export writes, the record lists each file it is about to
//! replace with both digests (`sha256` the new one, `was` the old), so that
//! an export interrupted between two files leaves a record that still
//! accounts for every byte it wrote.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::Format;
use crate::error::{Error, Result};
use crate::text::{EXCERPT_CHARS, excerpt};

/// The record's file name in the output directory (hidden: it is never a
/// skill, and listings skip it).
pub const RECORD_NAME: &str = ".bernstein-skills.json";

/// The record format this version reads and writes.
pub const RECORD_VERSION: u64 = 1;

/// The largest record read: 64 MiB, about ten times the record of 10,000
/// skills of five files each.
pub const MAX_RECORD_BYTES: u64 = 64 << 20;

/// The deepest path a record may list below a skill's directory.
pub const MAX_DEPTH: usize = 16;

/// The longest path a record may list, in bytes (`PATH_MAX`).
const MAX_PATH_BYTES: usize = 4096;

/// The tool that writes records, as the record names it.
pub const TOOL: &str = concat!("bernstein-skills ", env!("CARGO_PKG_VERSION"));

/// A SHA-256 digest.
pub type Digest = [u8; 32];

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> Digest {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes).into()
}

/// One file export wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileRecord {
    /// Its SHA-256.
    pub sha256: Digest,
    /// Its size in bytes.
    pub size: u64,
    /// Written with the execute bits.
    pub executable: bool,
    /// While an export replaces the file: the digest and size of the bytes
    /// it replaces, which export also wrote.
    pub was: Option<(Digest, u64)>,
}

impl FileRecord {
    /// The contents export may have left in this file: the recorded one,
    /// then the replaced one.
    pub fn known(&self) -> Vec<(Digest, u64)> {
        let mut out = vec![(self.sha256, self.size)];
        out.extend(self.was);
        out
    }
}

/// One skill's files, by path relative to the output directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkillRecord {
    /// The files.
    pub files: BTreeMap<String, FileRecord>,
}

/// What export wrote into one output directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// What the directory holds: manifests or skill directories.
    pub format: Format,
    /// Every skill export manages there, by name.
    pub skills: BTreeMap<String, SkillRecord>,
}

impl Record {
    /// An empty record for `format`.
    pub fn new(format: Format) -> Record {
        Record {
            format,
            skills: BTreeMap::new(),
        }
    }

    /// The record's bytes: pretty JSON, keys sorted at every depth, a
    /// trailing newline; `spec_sha256` names the spec the skills were
    /// merged under.
    pub fn to_bytes(&self, spec_sha256: &Digest) -> Vec<u8> {
        let mut out = String::with_capacity(256 + self.skills.len() * 160);
        out.push_str("{\n  \"format\": ");
        out.push_str(match self.format {
            Format::Json => "\"json\"",
            Format::Skill => "\"skill\"",
        });
        out.push_str(",\n  \"skills\": ");
        if self.skills.is_empty() {
            out.push_str("{}");
        } else {
            out.push('{');
            for (i, (name, skill)) in self.skills.iter().enumerate() {
                out.push_str(if i == 0 { "\n    " } else { ",\n    " });
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
                    hex(&mut out, &f.sha256);
                    out.push_str("\",\n          \"size\": ");
                    out.push_str(&f.size.to_string());
                    if let Some((sha, size)) = &f.was {
                        out.push_str(",\n          \"was\": {\n            \"sha256\": \"");
                        hex(&mut out, sha);
                        out.push_str("\",\n            \"size\": ");
                        out.push_str(&size.to_string());
                        out.push_str("\n          }");
                    }
                    out.push_str("\n        }");
                }
                out.push_str("\n      }\n    }");
            }
            out.push_str("\n  }");
        }
        out.push_str(",\n  \"spec_sha256\": \"");
        hex(&mut out, spec_sha256);
        out.push_str("\",\n  \"tool\": ");
        string(&mut out, TOOL);
        out.push_str(",\n  \"version\": ");
        out.push_str(&RECORD_VERSION.to_string());
        out.push_str("\n}\n");
        out.into_bytes()
    }

    /// Reads a record's bytes, `path` naming it in errors. Everything is
    /// checked before anything is used: the version, the format, every
    /// skill name ([`crate::layer::check_name`]), every path (relative,
    /// inside its skill, no `.`, `..` or hidden component) and digest.
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Record> {
        let bad = |at: Option<(usize, usize)>, message: String| Error::BadRecord {
            path: path.to_path_buf(),
            at,
            message,
        };
        let raw: RawRecord = match serde_json::from_slice(bytes) {
            Ok(raw) => raw,
            Err(e) => {
                // A newer version may have changed the shape: say so first.
                if let Ok(v) = serde_json::from_slice::<JustVersion>(bytes)
                    && v.version != RECORD_VERSION
                {
                    return Err(bad(None, version_message(v.version)));
                }
                let at = (e.line() > 0).then(|| (e.line(), e.column()));
                return Err(bad(at, excerpt(&strip_position(&e), EXCERPT_CHARS)));
            }
        };
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
        let digest = |name: &str, rel: &str, hex: &str| {
            parse_hex(hex).ok_or_else(|| {
                bad(
                    None,
                    format!(
                        "skill '{}': file '{}': sha256 is not 64 lowercase hexadecimal digits",
                        excerpt(name, EXCERPT_CHARS),
                        excerpt(rel, EXCERPT_CHARS)
                    ),
                )
            })
        };
        let mut skills = BTreeMap::new();
        for (name, raw_skill) in raw.skills {
            if let Err(reason) = crate::layer::check_name(&name) {
                return Err(bad(
                    None,
                    format!(
                        "skill name '{}' is not a valid name: {reason}",
                        excerpt(&name, EXCERPT_CHARS)
                    ),
                ));
            }
            if raw_skill.files.is_empty() {
                return Err(bad(
                    None,
                    format!("skill '{}' lists no file", excerpt(&name, EXCERPT_CHARS)),
                ));
            }
            let mut files = BTreeMap::new();
            for (rel, f) in raw_skill.files {
                if let Err(reason) = check_rel(&name, &rel, format) {
                    return Err(bad(
                        None,
                        format!(
                            "skill '{}': file '{}' is not a path export writes: {reason}",
                            excerpt(&name, EXCERPT_CHARS),
                            excerpt(&rel, EXCERPT_CHARS)
                        ),
                    ));
                }
                let sha256 = digest(&name, &rel, &f.sha256)?;
                let was = match &f.was {
                    Some(w) => Some((digest(&name, &rel, &w.sha256)?, w.size)),
                    None => None,
                };
                files.insert(
                    rel,
                    FileRecord {
                        sha256,
                        size: f.size,
                        executable: f.executable,
                        was,
                    },
                );
            }
            skills.insert(name, SkillRecord { files });
        }
        Ok(Record { format, skills })
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
pub fn check_rel(name: &str, rel: &str, format: Format) -> std::result::Result<(), &'static str> {
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

fn hex(out: &mut String, digest: &Digest) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    for b in digest {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
}

/// `digest` as 64 lowercase hexadecimal digits.
pub fn to_hex(digest: &Digest) -> String {
    let mut out = String::with_capacity(64);
    hex(&mut out, digest);
    out
}

fn parse_hex(s: &str) -> Option<Digest> {
    let b = s.as_bytes();
    if b.len() != 64 {
        return None;
    }
    let nibble = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; 32];
    for (i, pair) in b.chunks_exact(2).enumerate() {
        out[i] = nibble(pair[0])? << 4 | nibble(pair[1])?;
    }
    Some(out)
}

/// `s` as a JSON string, as the rest of the tool writes JSON.
fn string(out: &mut String, s: &str) {
    crate::render::write_json_str(out, s);
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRecord {
    format: String,
    skills: BTreeMap<String, RawSkill>,
    #[allow(dead_code)]
    spec_sha256: String,
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
    files: BTreeMap<String, RawFile>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    #[serde(default)]
    executable: bool,
    sha256: String,
    size: u64,
    #[serde(default)]
    was: Option<RawWas>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawWas {
    sha256: String,
    size: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Record {
        let mut r = Record::new(Format::Skill);
        let mut files = BTreeMap::new();
        files.insert(
            "writer/SKILL.md".to_owned(),
            FileRecord {
                sha256: sha256(b"a"),
                size: 1,
                executable: false,
                was: Some((sha256(b"b"), 1)),
            },
        );
        files.insert(
            "writer/scripts/run.sh".to_owned(),
            FileRecord {
                sha256: sha256(b"#!"),
                size: 2,
                executable: true,
                was: None,
            },
        );
        r.skills.insert("writer".to_owned(), SkillRecord { files });
        r
    }

    #[test]
    fn bytes_round_trip_and_are_canonical_json() {
        let r = sample();
        let bytes = r.to_bytes(&sha256(b"spec"));
        assert_eq!(Record::parse(&bytes, Path::new("r")).unwrap(), r);
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
        let empty = Record::new(Format::Json).to_bytes(&sha256(b""));
        let v: serde_json::Value = serde_json::from_slice(&empty).unwrap();
        assert_eq!(
            String::from_utf8(empty).unwrap(),
            serde_json::to_string_pretty(&v).unwrap() + "\n"
        );
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
        let good = String::from_utf8(sample().to_bytes(&sha256(b""))).unwrap();
        let e = err(&good.replace("\"sha256\": \"ca", "\"sha256\": \"CA"));
        assert!(e.to_string().contains("64 lowercase"), "{e}");
        let e = err(&good.replace("\"writer\": {", "\"Wr\\u202eiter\": {"));
        assert!(e.to_string().contains("Wr\\u{202e}iter"), "{e}");
    }
}
