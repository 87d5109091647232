//! A skill's files, layered: every file under a `NAME/` skill directory
//! other than `SKILL.md` (`references/style.md`, `scripts/lint.sh`,
//! `assets/logo.png`) is part of the skill, addressed by its path relative to
//! that directory. A higher layer's file at the same path replaces the lower
//! one's whole; other files coexist. Only the `NAME/SKILL.md` and files-only
//! forms have a directory: a `NAME.yaml` override changes fields and keeps
//! the lower layers' files, and a `NAME/` directory with no `SKILL.md` above
//! base adds files and changes no field.
//!
//! Listing reads no file: it walks the directories, and every entry must
//! resolve to a regular file inside its layer ([`crate::source::read_in_root`]), with a
//! printable UTF-8 name. The number of files, their total size and the depth
//! are capped ([`FileLimits`]). Contents are read only by whoever copies the
//! files (`export --format skill`), as bytes, never parsed. In the team and
//! user layers a file with more than one hard link is refused
//! (`source::confine`).
//!
//! What the files may not be, once layered ([`skill_md_files`],
//! [`collisions`]): a `SKILL.md` under any case, which an agent would load
//! as a skill of its own; two paths equal when case is ignored, which a
//! file system that ignores case (macOS, Windows) makes one file; and a
//! file where another path needs a directory. Each is an error at the layer
//! file, line 1, so that `validate` finds what export would fail on.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Diagnostic, DiagnosticKind};
use crate::layer::{Form, Layer, SKILL_MD_NAMES, check_name};
use crate::source::Located;
use crate::source::confine::{Entry, EntryKind, Meta, Refusal, Root};

/// Caps on one skill's files (per layer and merged).
#[derive(Debug, Clone, Copy)]
pub struct FileLimits {
    /// The most files in one skill.
    pub(crate) max_files: usize,
    /// The most bytes of all of them together.
    pub(crate) max_total_bytes: u64,
    /// The deepest directory below the skill directory.
    pub(crate) max_depth: usize,
    /// The most directory entries one layer's walk of a skill visits
    /// (files, directories, symlinks, hidden entries alike).
    pub(crate) max_entries: usize,
}

impl Default for FileLimits {
    fn default() -> Self {
        FileLimits {
            max_files: 1000,
            max_total_bytes: 64 * 1024 * 1024,
            max_depth: 8,
            max_entries: 10_000,
        }
    }
}

/// A file the skill ships, from a layer that supplied it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Source {
    /// The layer.
    pub layer: Layer,
    /// The file in that layer (as found, before symlinks are resolved).
    pub path: PathBuf,
    /// Its size in bytes.
    pub size: u64,
    /// It has an execute bit (a script).
    pub executable: bool,
}

/// One file of the effective skill.
#[derive(Debug, Clone)]
pub struct SkillFile {
    /// Its path relative to the skill directory, `/`-separated.
    pub rel: String,
    /// Where it comes from: the highest layer that has it.
    pub source: Source,
    /// The lower layers' files at the same path it replaced, nearest first.
    pub replaced: Vec<Source>,
    /// Its layer's directory, which reading it stays beneath.
    pub root: Arc<Root>,
}

impl PartialEq for SkillFile {
    fn eq(&self, other: &Self) -> bool {
        self.rel == other.rel && self.source == other.source && self.replaced == other.replaced
    }
}

impl SkillFile {
    /// Reads the file, as bytes, beneath its layer ([`crate::source::read_in_root`]).
    pub fn read(&self) -> Result<Vec<u8>, Diagnostic> {
        crate::source::confine::read_in_root(&self.root, &self.source.path, self.source.size)
            .map_err(|r| {
                Diagnostic::error(
                    Some(&self.source.path),
                    DiagnosticKind::Refused {
                        reason: r.describe(&self.source.path, &self.source.layer.to_string()),
                    },
                )
                .in_layer(self.source.layer)
            })
    }
}

/// The files of a skill located in `located` (base first), sorted by path.
/// Any entry that cannot be part of a skill (a symlink out of its layer or
/// to a hidden entry, not a regular file, an unprintable name) or a cap
/// exceeded is an error naming the file.
pub fn collect(located: &[Located], limits: &FileLimits) -> Result<Vec<SkillFile>, Diagnostic> {
    let mut merged: BTreeMap<String, SkillFile> = BTreeMap::new();
    for l in located {
        let Some(dir) = l.skill_dir() else {
            continue;
        };
        let mut walk = Walk {
            l,
            limits,
            visited: HashSet::new(),
            dev: 0,
            entries: 0,
            out: Vec::new(),
        };
        walk.dir(dir, "", 0, None)?;
        for (rel, source) in walk.out {
            match merged.get_mut(&rel) {
                Some(f) => {
                    let lower = std::mem::replace(&mut f.source, source);
                    f.replaced.insert(0, lower);
                    f.root = l.root.clone();
                }
                None => {
                    merged.insert(
                        rel.clone(),
                        SkillFile {
                            rel,
                            source,
                            replaced: Vec::new(),
                            root: l.root.clone(),
                        },
                    );
                }
            }
        }
        if merged.len() > limits.max_files {
            return Err(too_many(
                l,
                &format!("more than {} files", limits.max_files),
            ));
        }
    }
    let total: u64 = merged.values().map(|f| f.source.size).sum();
    if total > limits.max_total_bytes {
        let top = located.last().expect("a skill has a file");
        return Err(too_many(
            top,
            &format!(
                "its files take {total} bytes, over the {}-byte limit",
                limits.max_total_bytes
            ),
        ));
    }
    Ok(merged.into_values().collect())
}

/// A file export writes for a skill besides the skill's own files: its
/// `SKILL.md`, and a target's translated files (codex's
/// `agents/openai.yaml`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    /// Its path relative to the skill directory, `/`-separated.
    pub rel: String,
    /// The targets whose exports write it (escaped); none: every export
    /// in the skill format does.
    pub targets: Vec<String>,
}

impl Generated {
    /// The skill's `SKILL.md`, which export writes in the skill format.
    pub fn skill_md() -> Generated {
        Generated {
            rel: SKILL_MD_NAMES[0].to_owned(),
            targets: Vec::new(),
        }
    }

    /// Who writes it, for messages: `export`, `export --target codex`,
    /// `export --target agents or --target codex`.
    pub fn by(&self) -> String {
        if self.targets.is_empty() {
            return "export".to_owned();
        }
        let flags: Vec<String> = self
            .targets
            .iter()
            .map(|t| format!("--target {t}"))
            .collect();
        format!("export {}", flags.join(" or "))
    }

    /// `more` added to `list`, each path once (the targets that write one
    /// path put together).
    pub fn merge_into(list: &mut Vec<Generated>, more: impl IntoIterator<Item = Generated>) {
        for g in more {
            match list.iter_mut().find(|o| o.rel == g.rel) {
                Some(o) if !o.targets.is_empty() => {
                    for t in g.targets {
                        if !o.targets.contains(&t) {
                            o.targets.push(t);
                        }
                    }
                }
                Some(_) => {}
                None => list.push(g),
            }
        }
    }
}

/// `s` as a file system that ignores case compares it: case folded both
/// ways (upper, then lower: `ſ` is `s` as NTFS upper-cases it, the Kelvin
/// sign `k` as APFS folds it) and in NFC (APFS ignores the normalisation
/// too). Stricter than any one file system, never looser.
fn fold(s: &str) -> String {
    use unicode_normalization::UnicodeNormalization;
    if s.is_ascii() {
        return s.to_ascii_lowercase();
    }
    let folded: String = s
        .nfc()
        .flat_map(char::to_uppercase)
        .flat_map(char::to_lowercase)
        .collect();
    folded.nfc().collect()
}

/// An error at a layer file, line 1 (where an editor opens it).
fn at_file(source: &Source, kind: DiagnosticKind) -> Diagnostic {
    let mut d = Diagnostic::error(Some(&source.path), kind).in_layer(source.layer);
    d.line = Some(1);
    d
}

/// Every file among the skill's files, in every layer that has it, whose
/// name is `SKILL.md` ignoring case (`skill.md`, `Skill.MD`): an agent
/// that loads skills from a directory tree (Codex looks six levels deep)
/// would load it as a skill of its own, outside the rules that judge this
/// one. One beside the skill's own `SKILL.md` is a case-only copy of it.
pub fn skill_md_files(files: &[SkillFile]) -> Vec<Diagnostic> {
    let skill_md = fold(SKILL_MD_NAMES[0]);
    let mut out = Vec::new();
    for f in files {
        let name = f.rel.rsplit('/').next().unwrap_or(&f.rel);
        if fold(name) != skill_md {
            continue;
        }
        let file = crate::text::excerpt(&f.rel, crate::text::EXCERPT_CHARS);
        let kind = if f.rel.contains('/') {
            DiagnosticKind::NestedSkillMd { file }
        } else {
            let g = Generated::skill_md();
            DiagnosticKind::CaseCollision {
                file,
                other: format!("the {} {} writes for this skill", g.rel, g.by()),
                fix: "rename or remove it".to_owned(),
            }
        };
        for source in std::iter::once(&f.source).chain(&f.replaced) {
            out.push(at_file(source, kind.clone()));
        }
    }
    out
}

/// One path of a skill's output: a file of the skill, or one export
/// writes.
enum Item<'a> {
    File(&'a SkillFile),
    Generated(&'a Generated),
}

impl Item<'_> {
    fn rel(&self) -> &str {
        match self {
            Item::File(f) => &f.rel,
            Item::Generated(g) => &g.rel,
        }
    }

    /// The layer of a file (generated ones are above every layer).
    fn layer(&self) -> Option<Layer> {
        match self {
            Item::File(f) => Some(f.source.layer),
            Item::Generated(_) => None,
        }
    }

    /// The path, and where it comes from, for a message about another:
    /// `references/style.md (base layer: PATH)`, `agents/openai.yaml
    /// (written by export --target codex)`.
    fn described(&self) -> String {
        let rel = crate::text::excerpt(self.rel(), crate::text::EXCERPT_CHARS);
        match self {
            Item::File(f) => format!(
                "{rel} ({}: {})",
                f.source.layer,
                crate::text::path(&f.source.path)
            ),
            Item::Generated(g) => format!("{rel} (written by {})", g.by()),
        }
    }
}

/// The paths of the skill's output that cannot all be written, on every
/// file system: two files whose paths are equal ignoring case (`Style.md`
/// and `style.md`, `Agents/openai.yaml` beside the `agents/openai.yaml` a
/// target writes), and a file where another path needs a directory (a
/// team's file `references` where the base has `references/style.md`),
/// exactly or ignoring case. A file at exactly the path of a generated one
/// is not one of them: a target adds its settings to it. Each is an error
/// at the file of the higher layer of the two (the file, when the other is
/// generated; the later path, in one layer), naming the other. A
/// case-only copy of `SKILL.md` is left to [`skill_md_files`].
pub fn collisions(files: &[SkillFile], generated: &[Generated]) -> Vec<Diagnostic> {
    use crate::text::{EXCERPT_CHARS, excerpt};
    let exact: HashSet<&str> = files.iter().map(|f| f.rel.as_str()).collect();
    let mut items: Vec<Item> = files.iter().map(Item::File).collect();
    items.extend(
        generated
            .iter()
            .filter(|g| !exact.contains(g.rel.as_str()))
            .map(Item::Generated),
    );
    let folds: Vec<String> = items.iter().map(|i| fold(i.rel())).collect();
    let skill_md = fold(SKILL_MD_NAMES[0]);
    let top_skill_md = |i: usize| !items[i].rel().contains('/') && folds[i] == skill_md;
    let mut out = Vec::new();
    let mut first: HashMap<&str, usize> = HashMap::with_capacity(items.len());
    for (i, key) in folds.iter().enumerate() {
        let Some(&j) = first.get(key.as_str()) else {
            first.insert(key, i);
            continue;
        };
        if top_skill_md(i) {
            continue;
        }
        let (mut here, mut other) = pick(&items[i], &items[j]);
        // Of one layer's two, the one at a generated path is the layer's
        // settings for it; the other is the stray.
        if here.layer() == other.layer() && generated.iter().any(|g| g.rel == here.rel()) {
            (here, other) = (other, here);
        }
        let Item::File(f) = here else { continue };
        let fix = match other {
            Item::Generated(g) => format!(
                "name it {} to add to what export writes there, or rename or remove it",
                excerpt(&g.rel, EXCERPT_CHARS)
            ),
            Item::File(o) if o.source.layer < f.source.layer => format!(
                "name it {} to replace the {}'s file, or rename or remove it",
                excerpt(&o.rel, EXCERPT_CHARS),
                o.source.layer
            ),
            Item::File(_) => "rename or remove one of them".to_owned(),
        };
        let kind = DiagnosticKind::CaseCollision {
            file: excerpt(&f.rel, EXCERPT_CHARS),
            other: other.described(),
            fix,
        };
        out.push(at_file(&f.source, kind));
    }
    // Every directory the paths need, folded, with the first path below it.
    let mut dirs: HashMap<&str, usize> = HashMap::new();
    for (i, key) in folds.iter().enumerate() {
        for (at, _) in key.match_indices('/') {
            dirs.entry(&key[..at]).or_insert(i);
        }
    }
    for (i, key) in folds.iter().enumerate() {
        let Some(&j) = dirs.get(key.as_str()) else {
            continue;
        };
        let (file, below) = (&items[i], &items[j]);
        let case_only = !below
            .rel()
            .strip_prefix(file.rel())
            .is_some_and(|rest| rest.starts_with('/'));
        let (here, other) = pick(file, below);
        let Item::File(f) = here else { continue };
        let kind = DiagnosticKind::PathConflict {
            file: excerpt(&f.rel, EXCERPT_CHARS),
            file_here: std::ptr::eq(here, file),
            dir: excerpt(file.rel(), EXCERPT_CHARS),
            other: other.described(),
            case_only,
        };
        out.push(at_file(&f.source, kind));
    }
    out
}

/// Of two paths, the one to report at and the other: the higher layer's
/// file, the file when the other is generated, else the first given.
fn pick<'i, 'a>(a: &'i Item<'a>, b: &'i Item<'a>) -> (&'i Item<'a>, &'i Item<'a>) {
    match (a.layer(), b.layer()) {
        (None, _) => (b, a),
        (Some(la), Some(lb)) if lb > la => (b, a),
        _ => (a, b),
    }
}

fn too_many(l: &Located, what: &str) -> Diagnostic {
    let at = match l.form {
        Form::Files => &l.path,
        _ => l.path.parent().unwrap_or(&l.path),
    };
    Diagnostic::error(
        Some(at),
        DiagnosticKind::Refused {
            reason: format!("the skill has {what}"),
        },
    )
    .in_layer(l.layer)
}

fn refuse(l: &Located, path: &Path, reason: String) -> Diagnostic {
    Diagnostic::error(Some(path), DiagnosticKind::Refused { reason }).in_layer(l.layer)
}

/// One layer's walk of a skill directory: bounded by the entries it visits,
/// and entering each directory once, however many symlinks lead to it.
struct Walk<'l> {
    l: &'l Located,
    limits: &'l FileLimits,
    visited: HashSet<(u64, u64)>,
    /// The device of the walk's root directory.
    dev: u64,
    entries: usize,
    out: Vec<(String, Source)>,
}

impl Walk<'_> {
    /// Every file below `dir` (relative to the layer; relative path `prefix`
    /// in the skill), depth first. Each directory is walked once, by its
    /// identity (device and inode), which ends every symlink loop: `id` is
    /// the inode its parent's listing gave, on the root's device, or where
    /// a symlink to it led; `None` (the walk's root) asks the directory
    /// itself. A directory that is a mount point is known by two
    /// identities and may be walked twice; the walk's caps bound it all the
    /// same.
    fn dir(
        &mut self,
        dir: &Path,
        prefix: &str,
        depth: usize,
        id: Option<(u64, u64)>,
    ) -> Result<(), Diagnostic> {
        if let Some(id) = id
            && !self.visited.insert(id)
        {
            return Ok(());
        }
        if depth > self.limits.max_depth {
            return Err(refuse(
                self.l,
                &self.shown(dir),
                format!(
                    "the skill's directories nest deeper than {} levels",
                    self.limits.max_depth
                ),
            ));
        }
        let Some(entries) = self.list(dir, depth, id)? else {
            return Ok(());
        };
        for entry in entries {
            self.entry(dir, prefix, depth, &entry)?;
        }
        Ok(())
    }

    /// The entries of `dir`, listed at most one past the cap: a directory
    /// of millions costs no more than one of the cap's size. The walk's
    /// root (no `id`) is known by its own identity, which sets the walk's
    /// device; `None` when that identity was walked already.
    fn list(
        &mut self,
        dir: &Path,
        depth: usize,
        id: Option<(u64, u64)>,
    ) -> Result<Option<Vec<Entry>>, Diagnostic> {
        let mut budget = (self.limits.max_entries.saturating_sub(self.entries)).saturating_add(1);
        let listed = self
            .l
            .root
            .entries_with_files(dir, id.is_none(), &mut budget);
        let (meta, entries) = match listed {
            Ok(listed) => listed,
            Err(r) if r.is_over_budget() => return Err(self.too_many_entries()),
            Err(r) => return Err(self.refused(dir, r, "cannot list the skill's directory")),
        };
        if let Some(meta) = meta {
            if depth == 0 {
                self.dev = meta.id.0;
            }
            if !self.visited.insert(meta.id) {
                return Ok(None);
            }
        }
        Ok(Some(entries))
    }

    /// Takes `entry` of `dir` into the walk: counts it against the cap,
    /// passes over what is no part of the skill, refuses a name a skill's
    /// file cannot have, then walks a directory or adds a file.
    fn entry(
        &mut self,
        dir: &Path,
        prefix: &str,
        depth: usize,
        entry: &Entry,
    ) -> Result<(), Diagnostic> {
        self.entries += 1;
        if self.entries > self.limits.max_entries {
            return Err(self.too_many_entries());
        }
        let lossy = entry.name.to_string_lossy();
        // Hidden entries (`.git`, `.DS_Store`) are not part of a skill.
        if lossy.starts_with('.') {
            return Ok(());
        }
        // The skill's file, and a `skill.md` it shadows, are no files.
        if depth == 0 && SKILL_MD_NAMES.contains(&&*lossy) {
            return Ok(());
        }
        let at = dir.join(&entry.name);
        let name = match entry.name.to_str() {
            None => Err("the file name is not valid UTF-8"),
            Some(n) => check_name(n),
        };
        if let Err(reason) = name {
            return Err(refuse(
                self.l,
                &self.shown(&at),
                format!("not part of the skill: {reason}"),
            ));
        }
        let rel = if prefix.is_empty() {
            lossy.into_owned()
        } else {
            format!("{prefix}/{lossy}")
        };
        let Some(meta) = self.entry_meta(&at, entry)? else {
            return self.dir(&at, &rel, depth + 1, Some((self.dev, entry.ino)));
        };
        match meta.kind {
            EntryKind::Dir => self.dir(&at, &rel, depth + 1, Some(meta.id)),
            EntryKind::File => self.file(&at, rel, &meta),
            EntryKind::Symlink | EntryKind::Other => Err(refuse(
                self.l,
                &self.shown(&at),
                "refusing to read a file that is not a regular file".into(),
            )),
        }
    }

    /// Where the entry at `at` really is: beneath its layer and not hidden,
    /// or refused (crate::confine). A regular file or a directory that is
    /// no symlink is beneath the directory listed, so only the rest
    /// (symlinks, types the listing did not give) are looked up. `None`
    /// for a directory that is no symlink.
    fn entry_meta(&self, at: &Path, entry: &Entry) -> Result<Option<Meta>, Diagnostic> {
        if entry.is_dir {
            return Ok(None);
        }
        if let Some(meta) = entry.meta {
            return Ok(Some(meta));
        }
        match self.l.root.metadata(at) {
            Ok(meta) => Ok(Some(meta)),
            Err(r) => Err(self.refused(at, r, "cannot read file")),
        }
    }

    /// Adds the regular file at `at` as the skill's file `rel`. Its links
    /// and the layer's check of a listed file are refused here, where the
    /// listing has the count, so that validate reports them; reading checks
    /// them again on the open file (crate::source::confine).
    fn file(&mut self, at: &Path, rel: String, meta: &Meta) -> Result<(), Diagnostic> {
        let root = &self.l.root;
        if let Err(r) = root
            .check_links(meta)
            .and_then(|()| root.check_listed(at, meta.executable))
        {
            let reason = r.describe(&self.shown(at), &self.l.layer.to_string());
            return Err(refuse(self.l, &self.shown(at), reason));
        }
        self.out.push((
            rel,
            Source {
                layer: self.l.layer,
                path: self.shown(at),
                size: meta.size,
                executable: meta.executable,
            },
        ));
        if self.out.len() > self.limits.max_files {
            return Err(too_many(
                self.l,
                &format!("more than {} files", self.limits.max_files),
            ));
        }
        Ok(())
    }

    /// `rel` (relative to the layer) as a person finds it: beneath the
    /// layer's directory.
    fn shown(&self, rel: &Path) -> PathBuf {
        self.l.root.path().join(rel)
    }

    /// The refusal of `rel` for `r`: the operating system's error after
    /// `io`, any other refusal in its own words.
    fn refused(&self, rel: &Path, r: Refusal, io: &str) -> Diagnostic {
        let shown = self.shown(rel);
        let reason = match r {
            Refusal::Io(e) => format!("{io}: {e}"),
            r => r.describe(&shown, &self.l.layer.to_string()),
        };
        refuse(self.l, &shown, reason)
    }

    /// The refusal of a skill with more entries in its directories than
    /// the cap.
    fn too_many_entries(&self) -> Diagnostic {
        too_many(
            self.l,
            &format!(
                "more than {} entries in its directories",
                self.limits.max_entries
            ),
        )
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use crate::source::Layers;

    fn write(root: &Path, rel: &str, text: &str) {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn higher_layers_replace_files_by_path_and_others_coexist() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "base/w/references/style.md", "base style");
        write(r, "base/w/scripts/lint.sh", "echo base");
        write(r, "team/w/SKILL.md", "---\n---\n");
        write(r, "team/w/references/style.md", "team style");
        write(r, "team/w/references/extra.md", "extra");
        write(r, "user/w.yaml", "description: x\n");
        let layers = Layers::from_root(r);
        let files = collect(&layers.locate("w"), &FileLimits::default()).unwrap();
        let summary: Vec<(&str, Layer, usize)> = files
            .iter()
            .map(|f| (f.rel.as_str(), f.source.layer, f.replaced.len()))
            .collect();
        assert_eq!(
            summary,
            [
                ("references/extra.md", Layer::Team, 0),
                ("references/style.md", Layer::Team, 1),
                ("scripts/lint.sh", Layer::Base, 0),
            ]
        );
        assert_eq!(files[1].replaced[0].layer, Layer::Base);
    }

    #[test]
    fn symlinks_out_fifos_and_caps_are_refused() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "secret", "TOKEN");
        std::os::unix::fs::symlink(r.join("secret"), r.join("base/w/leak.md")).unwrap();
        let layers = Layers::from_root(r);
        let e = collect(&layers.locate("w"), &FileLimits::default()).unwrap_err();
        assert!(
            e.to_string()
                .contains("refusing to follow a symlink out of the base layer"),
            "{e}"
        );
        std::fs::remove_file(r.join("base/w/leak.md")).unwrap();

        for i in 0..5 {
            write(r, &format!("base/w/f{i}"), "x");
        }
        let limits = FileLimits {
            max_files: 3,
            ..FileLimits::default()
        };
        let e = collect(&layers.locate("w"), &limits).unwrap_err();
        assert!(e.to_string().contains("more than 3 files"), "{e}");
        let limits = FileLimits {
            max_total_bytes: 2,
            ..FileLimits::default()
        };
        let e = collect(&layers.locate("w"), &limits).unwrap_err();
        assert!(e.to_string().contains("over the 2-byte limit"), "{e}");
    }

    #[test]
    fn folding_is_stricter_than_apfs_and_ntfs() {
        assert_eq!(fold("Agents/OpenAI.yaml"), "agents/openai.yaml");
        // The long s upper-cases to S (NTFS); the Kelvin sign folds to k (APFS).
        assert_eq!(fold("\u{17f}KILL.md"), "skill.md");
        assert_eq!(fold("S\u{212a}ILL.md"), "skill.md");
        // Composed and decomposed are one name (APFS).
        assert_eq!(fold("Cafe\u{301}"), fold("caf\u{e9}"));
    }

    fn layered(r: &Path) -> Vec<SkillFile> {
        let layers = Layers::from_root(r);
        collect(&layers.locate("w"), &FileLimits::default()).unwrap()
    }

    /// Each diagnostic as `FILE:LINE: MESSAGE`, its file relative to `r`.
    fn messages(r: &Path, ds: &[Diagnostic]) -> Vec<String> {
        ds.iter()
            .map(|d| {
                let rel = d.file.as_ref().unwrap().strip_prefix(r).unwrap();
                format!("{}:{}: {}", rel.display(), d.line.unwrap(), d.kind)
            })
            .collect()
    }

    #[test]
    fn a_skill_md_under_any_case_is_found_in_every_layer_that_has_it() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "base/w/x/Skill.MD", "a");
        write(r, "team/w/x/Skill.MD", "b");
        write(r, "team/w/S\u{212a}ILL.md", "c");
        write(r, "team/w/notes.md", "d");
        let m = messages(r, &skill_md_files(&layered(r)));
        assert_eq!(m.len(), 3, "{m:#?}");
        assert!(m[0].starts_with("team/w/S\u{212a}ILL.md:1: 'S\u{212a}ILL.md' differs only in case from the SKILL.md export writes"), "{m:#?}");
        assert!(
            m[1].starts_with("team/w/x/Skill.MD:1: 'x/Skill.MD' is a SKILL.md among"),
            "{m:#?}"
        );
        assert!(m[2].starts_with("base/w/x/Skill.MD:1: "), "{m:#?}");
    }

    #[test]
    fn collisions_are_reported_at_the_higher_layer_once_each() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "base/w/r/style.md", "a");
        write(r, "base/w/q/x.md", "a");
        write(r, "team/w/R/Style.md", "b");
        write(r, "team/w/Q", "b");
        // Names whose folded form has another length than the name.
        write(r, "user/w/\u{17f}t/x.md", "c");
        write(r, "user/w/ST", "c");
        write(r, "user/w/a/x.md", "c");
        write(r, "user/w/a/X.MD", "c");
        let generated = [
            Generated::skill_md(),
            Generated {
                rel: "agents/openai.yaml".into(),
                targets: vec!["codex".into()],
            },
        ];
        let m = messages(r, &collisions(&layered(r), &generated));
        let want = [
            "team/w/R/Style.md:1: 'R/Style.md' differs only in case from r/style.md (base layer: ",
            "user/w/a/x.md:1: 'a/x.md' differs only in case from a/X.MD (user layer: ",
            "team/w/Q:1: 'Q' is a file here, but q/x.md (base layer: ",
            "user/w/ST:1: 'ST' is a file here, but \u{17f}t/x.md (user layer: ",
        ];
        assert_eq!(m.len(), want.len(), "{m:#?}");
        for w in want {
            assert!(m.iter().any(|m| m.starts_with(w)), "{w} not in {m:#?}");
        }
        assert!(
            m[2].contains("(ignoring case, as macOS and Windows do)"),
            "{m:#?}"
        );
        // A generated path met exactly is a layer's own settings; in
        // another case, or as a directory, it is not.
        write(r, "team/w/agents/openai.yaml", "a: 1");
        assert_eq!(collisions(&layered(r), &generated).len(), 4);
        write(r, "team/w/Agents/openai.yaml", "a: 1");
        let m = messages(r, &collisions(&layered(r), &generated));
        assert!(
            m.iter().any(|m| m.starts_with("team/w/Agents/openai.yaml:1: 'Agents/openai.yaml' differs only in case from agents/openai.yaml (team layer: ")),
            "{m:#?}"
        );
    }

    #[test]
    fn hard_links_are_refused_above_base_when_listed() {
        let tmp = tempfile::tempdir().unwrap();
        let r = tmp.path();
        write(r, "base/w/SKILL.md", "---\n---\n");
        write(r, "outside", "TOKEN");
        std::fs::create_dir_all(r.join("team/w")).unwrap();
        std::fs::hard_link(r.join("outside"), r.join("team/w/leak.md")).unwrap();
        let e = collect(&Layers::from_root(r).locate("w"), &FileLimits::default()).unwrap_err();
        assert!(
            e.to_string().contains("2 hard links in the team layer"),
            "{e}"
        );
        let allowed = Layers::from_root(r).allowing_hard_links();
        assert_eq!(
            collect(&allowed.locate("w"), &FileLimits::default())
                .unwrap()
                .len(),
            1
        );
        // In the base layer, allowed as it is.
        std::fs::remove_file(r.join("team/w/leak.md")).unwrap();
        std::fs::hard_link(r.join("outside"), r.join("base/w/shared.md")).unwrap();
        assert_eq!(layered(r).len(), 1);
    }
}
