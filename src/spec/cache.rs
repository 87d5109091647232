//! What checking a spec produced, kept between runs.
//!
//! Before a command touches a skill, the spec is read (a YAML parse of the
//! whole file, comments included), each rule is checked (a `default`, an
//! `enum` value and a `pattern` are judged by compiling a small JSON Schema,
//! which first builds `jsonschema`'s validator of the draft-7 meta-schema),
//! and the fragment schema is compiled to judge each fragment. For `show`
//! of one skill that is most of the work. The spec is data and stays data:
//! a spec someone edits is checked again. But the same bytes, checked by
//! the same build, give the same answer every time, so the answer is kept,
//! keyed by the spec's SHA-256 and the build:
//!
//! - **the spec as read** (its value and its fields' order): read back, it
//!   becomes rules through the same code and the same checks, except those
//!   that compile a schema, which these bytes passed;
//! - **the fragments the compiled schema found valid** (the SHA-256 of
//!   each one's form and text): one found again is valid without compiling
//!   the schema. Only a fragment's validity is kept; what is wrong with an
//!   invalid one is always worked out by the compiled schema.
//!
//! The entries live in the cache home (`$XDG_CACHE_HOME/bernstein/skills/
//! specs/`), which is the person's own as the sources' cache is
//! ([`crate::beneath::private`]): directories made with mode 0700, opened
//! without following another user's symlink, files written whole with
//! mode 0600. A directory another user owns or others may write is not
//! used at all: the command runs as without a cache. The cache is bounded:
//! 16 entries at most (the first hexadecimal digit of the spec's digest
//! picks the file, so a new spec replaces an old one), each at most
//! [`MAX_ENTRY_BYTES`] with at most [`MAX_VALID`] verdicts. An entry is
//! input like any other file: it is taken only when whole (its last line
//! is the SHA-256 of everything before it), written by this build, for
//! these spec bytes, and readable as this build writes it; anything else
//! is a miss, checked as without a cache and written over.

use std::ffi::OsStr;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde_json::Value;

use crate::beneath::private::PrivateDir;
use crate::digest::{Digest, Hasher};
use crate::layer::Form;

/// The directory of the entries, below the cache home.
const DIR: &str = "specs";

/// The first line of every entry: the format.
const MAGIC: &str = "bernstein-skills spec cache 1";

/// The most fragment verdicts one entry keeps (the newest).
pub(crate) const MAX_VALID: usize = 256;

/// The most times one process rewrites its spec's entry to keep new
/// verdicts: a command about a few skills keeps them all, a bulk command
/// (which compiles the schema once anyway) no more than this.
const MAX_WRITES: usize = 8;

/// The largest entry read: a spec's value as JSON (at most a few times
/// its [`super::MAX_SPEC_BYTES`]) and the verdicts.
pub(crate) const MAX_ENTRY_BYTES: u64 = 4 * super::MAX_SPEC_BYTES + 64 * 1024;

/// Where a context keeps what checking its specs produced, and which build
/// is asking.
#[derive(Debug, Clone)]
pub struct SpecCache {
    /// The cache home (`$XDG_CACHE_HOME/bernstein/skills`).
    home: PathBuf,
    /// This build: the crate's version, and the running executable's size
    /// and modification time when it is known (a rebuild with the same
    /// version is another build).
    build: String,
}

impl SpecCache {
    /// The cache in `home` (`Env::cache_dir`), for the build running as
    /// `exe` (`Env::exe`).
    pub fn new(home: PathBuf, exe: Option<&Path>) -> SpecCache {
        let mut build = format!("bernstein-skills {}", env!("CARGO_PKG_VERSION"));
        if let Some(meta) = exe.and_then(|e| std::fs::metadata(e).ok()) {
            use std::os::unix::fs::MetadataExt;
            build.push_str(&format!(
                " exe {} {}.{:09}",
                meta.len(),
                meta.mtime(),
                meta.mtime_nsec()
            ));
        }
        SpecCache { home, build }
    }

    /// The entries' directory, made when missing and `create`; `None` when
    /// there is none, or it is not the person's own.
    fn dir(&self, create: bool) -> Option<PrivateDir> {
        PrivateDir::open(&self.home, create)
            .ok()??
            .subdir(OsStr::new(DIR), create)
            .ok()?
    }

    /// The spec whose bytes have digest `spec` as its entry holds it, with
    /// its verdicts; `None` for a miss.
    pub(super) fn read(&self, spec: &Digest) -> Option<(Stored, Verdicts)> {
        let dir = self.dir(false)?;
        let slot = slot(spec);
        let bytes = dir.read(OsStr::new(&slot), MAX_ENTRY_BYTES).ok()??;
        let entry = Entry::parse(&bytes, &self.build, spec)?;
        let stored = Stored::parse(entry.payload)?;
        let verdicts = Verdicts::new(dir, slot, entry.head.to_owned(), entry.valid);
        Some((stored, verdicts))
    }

    /// Keeps `stored` as what the spec with digest `spec` gives, and
    /// returns its verdicts (none yet), to be kept as they are found.
    /// Nothing is kept when the cache cannot be written, or when the spec's
    /// value would not read back the same.
    pub(super) fn write(&self, spec: &Digest, stored: &Stored) -> Option<Verdicts> {
        let payload = serde_json::to_string(&serde_json::json!({
            "order": stored.order,
            "spec": stored.value,
        }))
        .ok()?;
        // A number that JSON text would not give back exactly (a float's
        // last digit) would make the cached spec another spec.
        if Stored::parse(&payload).as_ref() != Some(stored) {
            return None;
        }
        let dir = self.dir(true)?;
        let head = format!("{MAGIC}\n{}\n{:x}\n{payload}\n", self.build, spec);
        let verdicts = Verdicts::new(dir, slot(spec), head, Vec::new());
        verdicts.save(&[]).ok()?;
        Some(verdicts)
    }
}

/// The entry file of a spec: its digest's first hexadecimal digit (16
/// entries at most).
fn slot(spec: &Digest) -> String {
    format!("{}.entry", &spec.to_hex()[..1])
}

/// A spec as it was read: its value and its fields' order.
#[derive(Debug, PartialEq)]
pub(super) struct Stored {
    /// The spec file's value.
    pub(super) value: Value,
    /// The top-level fields in the order the file lists them.
    pub(super) order: Vec<String>,
}

impl Stored {
    fn parse(payload: &str) -> Option<Stored> {
        #[derive(serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Payload {
            order: Vec<String>,
            spec: Value,
        }
        let p: Payload = serde_json::from_str(payload).ok()?;
        Some(Stored {
            value: p.spec,
            order: p.order,
        })
    }
}

/// An entry's parts, checked.
struct Entry<'a> {
    /// The lines up to and including the payload.
    head: &'a str,
    payload: &'a str,
    valid: Vec<Digest>,
}

impl<'a> Entry<'a> {
    /// The entry in `bytes`, if it is whole, of this `build` and for the
    /// spec `spec`.
    fn parse(bytes: &'a [u8], build: &str, spec: &Digest) -> Option<Entry<'a>> {
        let text = std::str::from_utf8(bytes).ok()?;
        let body = text.strip_suffix('\n')?;
        let (before, seal) = body.rsplit_once('\n')?;
        let before = &text[..before.len() + 1];
        if Digest::parse(seal)? != Digest::of(before) {
            return None;
        }
        let lines: Vec<&str> = before.split_terminator('\n').collect();
        let [magic, written_by, for_spec, payload, hexes] = lines[..] else {
            return None;
        };
        if magic != MAGIC || written_by != build || Digest::from_hex(for_spec)? != *spec {
            return None;
        }
        if hexes.len() % 64 != 0 || hexes.len() / 64 > MAX_VALID {
            return None;
        }
        let head = &before[..before.len() - hexes.len() - 1];
        let valid = (0..hexes.len() / 64)
            .map(|i| hexes.get(i * 64..(i + 1) * 64).and_then(Digest::from_hex))
            .collect::<Option<Vec<_>>>()?;
        Some(Entry {
            head,
            payload,
            valid,
        })
    }
}

/// The verdicts kept for one spec: fragments the compiled schema found
/// valid, by [`fragment_key`].
pub(crate) struct Verdicts {
    dir: PrivateDir,
    slot: String,
    /// The entry's lines up to and including the payload.
    head: String,
    state: Mutex<State>,
}

struct State {
    /// The known valid fragments, oldest first.
    valid: Vec<Digest>,
    /// How often this process wrote the entry.
    writes: usize,
}

impl fmt::Debug for Verdicts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Verdicts")
    }
}

impl Verdicts {
    fn new(dir: PrivateDir, slot: String, head: String, valid: Vec<Digest>) -> Verdicts {
        Verdicts {
            dir,
            slot,
            head,
            state: Mutex::new(State { valid, writes: 0 }),
        }
    }

    /// Was the fragment with this key found valid?
    pub(crate) fn knows(&self, key: &Digest) -> bool {
        self.state
            .lock()
            .map(|s| s.valid.contains(key))
            .unwrap_or(false)
    }

    /// Does it still keep new verdicts in this process?
    pub(crate) fn learning(&self) -> bool {
        self.state.lock().is_ok_and(|s| s.writes < MAX_WRITES)
    }

    /// Keeps that the fragment with this key is valid (up to
    /// [`MAX_VALID`], the oldest forgotten first).
    pub(crate) fn learn(&self, key: Digest) {
        let Ok(mut state) = self.state.lock() else {
            return;
        };
        if state.valid.contains(&key) || state.writes >= MAX_WRITES {
            return;
        }
        if state.valid.len() >= MAX_VALID {
            state.valid.remove(0);
        }
        state.valid.push(key);
        state.writes += 1;
        // A cache that cannot be written is a cache that is not used.
        let _ = self.save(&state.valid);
    }

    /// Writes the entry whole, with `valid`.
    fn save(&self, valid: &[Digest]) -> std::io::Result<()> {
        let mut text = String::with_capacity(self.head.len() + 64 * valid.len() + 80);
        text.push_str(&self.head);
        for d in valid {
            d.push_hex(&mut text);
        }
        text.push('\n');
        let seal = Digest::of(&text);
        text.push_str(&seal.to_string());
        text.push('\n');
        self.dir.write(&self.slot, |w| w.write_all(text.as_bytes()))
    }
}

/// What a verdict is kept by: the fragment's form and its text (what the
/// value the schema judges is read from, by this build).
pub(crate) fn fragment_key(form: Form, source: &str) -> Digest {
    let mut h = Hasher::new();
    h.update(format!("{form:?}\n").as_bytes());
    h.update(source.as_bytes());
    h.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed(lines: &str) -> Vec<u8> {
        let mut text = lines.to_owned();
        let seal = Digest::of(&text);
        text.push_str(&format!("{seal}\n"));
        text.into_bytes()
    }

    #[test]
    fn only_a_whole_entry_of_this_build_and_spec_is_read() {
        let spec = Digest::of(b"version: 1\n");
        let valid = Digest::of(b"v");
        let good = format!("{MAGIC}\nb 1\n{spec:x}\n{{}}\n{valid:x}\n");
        let bytes = sealed(&good);
        let entry = Entry::parse(&bytes, "b 1", &spec).unwrap();
        assert_eq!(entry.payload, "{}");
        assert_eq!(entry.valid, vec![valid]);
        assert!(entry.head.ends_with("{}\n"));
        // Another build, another spec, a changed byte, a cut entry.
        assert!(Entry::parse(&bytes, "b 2", &spec).is_none());
        assert!(Entry::parse(&bytes, "b 1", &valid).is_none());
        let mut changed = bytes.clone();
        changed[MAGIC.len() + 3] ^= 1;
        assert!(Entry::parse(&changed, "b 1", &spec).is_none());
        assert!(Entry::parse(&bytes[..bytes.len() - 2], "b 1", &spec).is_none());
        // Sealed, but not what this build writes.
        for bad in [
            format!("{MAGIC}\nb 1\n{spec:x}\n{{}}\n{}\n", &valid.to_hex()[..63]),
            format!("{MAGIC}\nb 1\n{spec:x}\n{{}}\n{valid:x}\nmore\n"),
            format!("{MAGIC}\nb 1\n{spec:x}\n{{}}\n"),
        ] {
            assert!(Entry::parse(&sealed(&bad), "b 1", &spec).is_none(), "{bad}");
        }
        assert!(Stored::parse("{}").is_none());
    }
}
