//! Where target files are looked for, and how one is read: a target that
//! `extends` another is the other's, changed where its own file says, so
//! reading it reads its base first (once per search, however many targets
//! build on it).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::Target;
use crate::error::{Diagnostic, DiagnosticKind, Error, Result};
use crate::text::{self, EXCERPT_CHARS};

/// How many targets a chain of `extends` may pass through: a target, its
/// base, the base's base... A chain longer than any a person writes is a
/// mistake (or a file made to cost), refused with the chain named.
pub const MAX_EXTENDS_DEPTH: usize = 8;

/// The most entries a directory of targets is listed for.
const MAX_DIR_ENTRIES: usize = 10_000;

/// Where targets are looked for, by name: the directories in order (the
/// person's own `$XDG_CONFIG_HOME/bernstein/skills/targets`, then the
/// `targets/` directory beside the spec in use). A name with a `/` or
/// ending in `.yaml` is a file.
#[derive(Debug, Clone, Default)]
pub struct TargetSearch {
    /// The directories, first match wins.
    pub dirs: Vec<PathBuf>,
}

/// Why the target a file extends could not be had.
pub(crate) enum BaseProblem {
    /// Its own file's problem, as its own error.
    Failed(Error),
    /// A problem of the `extends` key itself (no such target, a circle, too
    /// deep), said at that key.
    Located(String),
}

impl TargetSearch {
    /// The search a lone file's `extends` uses: the file's own directory.
    pub(crate) fn beside(path: &Path) -> TargetSearch {
        TargetSearch {
            dirs: path
                .parent()
                .map(|d| {
                    if d.as_os_str().is_empty() {
                        PathBuf::from(".")
                    } else {
                        d.to_path_buf()
                    }
                })
                .into_iter()
                .collect(),
        }
    }

    /// A reader of this search's targets that reads each file once.
    pub(crate) fn loader(&self) -> Loader<'_> {
        Loader {
            search: self,
            read: RefCell::new(HashMap::new()),
            chain: RefCell::new(Vec::new()),
        }
    }

    /// The target named `name` (or the file `name`).
    pub fn find(&self, name: &str) -> Result<Target> {
        self.loader().find(name)
    }

    /// The targets named, in order; a base several of them extend is read
    /// once.
    pub fn find_all(&self, names: &[String]) -> Result<Vec<Target>> {
        let loader = self.loader();
        names.iter().map(|n| loader.find(n)).collect()
    }

    /// Every target found ([`TargetSearch::names`]), each read (a base
    /// once), with what reading it gave.
    pub fn all(&self) -> Vec<(String, Result<Target>)> {
        let loader = self.loader();
        self.files()
            .into_iter()
            .map(|(n, path)| {
                let t = loader.load_file(&path);
                (n, t)
            })
            .collect()
    }

    /// Reads the target file `path`.
    pub(crate) fn load_file(&self, path: &Path) -> Result<Target> {
        self.loader().load_file(path)
    }

    /// The file of the target named `name`: the first directory's that has
    /// one, other than `skip` (a file extending its own name builds on the
    /// next file of that name).
    fn file_of(&self, name: &str, skip: Option<&Path>) -> Option<PathBuf> {
        if crate::layer::check_name(name).is_err() {
            return None;
        }
        let skip = skip.and_then(|p| std::fs::canonicalize(p).ok());
        self.dirs
            .iter()
            .map(|dir| dir.join(format!("{name}.yaml")))
            .filter(|path| path.is_file())
            .find(|path| {
                skip.is_none() || std::fs::canonicalize(path).ok().as_deref() != skip.as_deref()
            })
    }

    /// The error for a name no target has.
    fn unknown(&self, name: &str) -> Error {
        let known = self.names();
        // A misspelling, or the start of a name (`claude` for
        // `claude-code`).
        let suggestion =
            crate::error::did_you_mean_or_prefix(name, known.iter().map(String::as_str));
        Error::Refused {
            kind: crate::error::ErrorKind::NotFound,
            path: None,
            message: format!(
                "no target '{}'{}; {} (found in {})",
                text::excerpt(name, EXCERPT_CHARS),
                suggestion
                    .map(|s| format!(" (did you mean '{s}'?)"))
                    .unwrap_or_default(),
                known_list(&known),
                self.dirs
                    .iter()
                    .map(|d| text::path(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        }
    }

    /// Every target name found, sorted.
    pub fn names(&self) -> Vec<String> {
        self.files().into_iter().map(|(n, _)| n).collect()
    }

    /// Every target found, by name, sorted, with the file that a search by
    /// that name finds (the first directory's).
    fn files(&self) -> Vec<(String, PathBuf)> {
        let mut out: Vec<(String, PathBuf)> = Vec::new();
        for dir in &self.dirs {
            // A directory of more entries than any set of targets holds is
            // skipped, as one that cannot be read is.
            let mut budget = MAX_DIR_ENTRIES;
            let Ok(entries) = crate::beneath::walk::entries_at(dir, &mut budget) else {
                continue;
            };
            let mut here: Vec<(String, PathBuf)> = entries
                .into_iter()
                .filter_map(|(name, _)| {
                    let name = name.into_string().ok()?;
                    let stem = name.strip_suffix(".yaml")?;
                    (!stem.starts_with('.')).then(|| (stem.to_owned(), dir.join(&name)))
                })
                .filter(|(n, _)| !out.iter().any(|(k, _)| k == n))
                .collect();
            out.append(&mut here);
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

/// The targets known, for a message: every name when they are a few, else
/// how many, and the command that lists them.
pub(crate) fn known_list(known: &[String]) -> String {
    const SHOWN: usize = 12;
    match known.len() {
        0 => "no target is found".into(),
        n if n <= SHOWN => format!(
            "the targets are: {}",
            known
                .iter()
                .map(|k| text::excerpt(k, EXCERPT_CHARS))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        n => format!("`bernstein skills targets` lists the {n} targets"),
    }
}

/// Reads the targets of one search: each file once (a base that many
/// targets extend), following `extends` through at most
/// [`MAX_EXTENDS_DEPTH`] files and never around a circle.
pub(crate) struct Loader<'a> {
    search: &'a TargetSearch,
    /// The files read, by path, and the targets they gave.
    read: RefCell<HashMap<PathBuf, Target>>,
    /// The files being read, outermost first, with their targets' names.
    chain: RefCell<Vec<(PathBuf, String)>>,
}

impl Loader<'_> {
    /// The target named `name` (or the file `name`).
    pub(crate) fn find(&self, name: &str) -> Result<Target> {
        if name.contains('/') || name.ends_with(".yaml") {
            return self.load_file(Path::new(name));
        }
        match self.search.file_of(name, None) {
            Some(path) => self.load_file(&path),
            None => Err(self.search.unknown(name)),
        }
    }

    /// Reads and checks the target file `path`.
    pub(crate) fn load_file(&self, path: &Path) -> Result<Target> {
        if let Some(t) = self.read.borrow().get(path) {
            return Ok(t.clone());
        }
        use crate::source::confine::{Refusal, read_bounded};
        let bytes = read_bounded(path, super::MAX_TARGET_BYTES).map_err(|r| {
            let kind = match r {
                Refusal::Io(e) => DiagnosticKind::Io {
                    message: e.to_string(),
                },
                r => DiagnosticKind::Refused {
                    reason: r.describe(path, "target"),
                },
            };
            Error::Invalid(vec![Diagnostic::error(Some(path), kind)])
        })?;
        let text = String::from_utf8(bytes).map_err(|_| {
            Error::Invalid(vec![Diagnostic::error(
                Some(path),
                DiagnosticKind::InvalidUtf8,
            )])
        })?;
        let target = self.build(&text, path)?;
        self.read
            .borrow_mut()
            .insert(path.to_path_buf(), target.clone());
        Ok(target)
    }

    /// Checks the target written as `text` in `path`, reading the target
    /// it extends.
    pub(crate) fn build(&self, text: &str, path: &Path) -> Result<Target> {
        let stem = path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
            .to_owned();
        self.chain.borrow_mut().push((path.to_path_buf(), stem));
        let built = Target::from_text(text, path, &mut |name| self.base(name, path));
        self.chain.borrow_mut().pop();
        built
    }

    /// The target `name` that the file `from` extends.
    fn base(&self, name: &str, from: &Path) -> std::result::Result<Target, BaseProblem> {
        let own = from.file_stem().and_then(|s| s.to_str()) == Some(name);
        let Some(path) = self.search.file_of(name, own.then_some(from)) else {
            let found = self.search.names();
            let suggestion = crate::error::did_you_mean_or_prefix(
                name,
                found.iter().map(String::as_str).filter(|n| *n != name),
            );
            return Err(BaseProblem::Located(format!(
                "'extends' names '{}', but {}{} (targets are looked for in {})",
                text::excerpt(name, EXCERPT_CHARS),
                if own {
                    "no other target of that name is found"
                } else {
                    "no target of that name is found"
                },
                suggestion
                    .map(|s| format!("; did you mean '{s}'?"))
                    .unwrap_or_default(),
                self.search
                    .dirs
                    .iter()
                    .map(|d| text::path(d))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        // A base read already (the one many targets extend) is no part of
        // the chain being read: it is had as it is.
        if let Some(t) = self.read.borrow().get(&path) {
            return Ok(t.clone());
        }
        let chain = self.chain.borrow().clone();
        let names = |upto: &[(PathBuf, String)], last: &str| {
            upto.iter()
                .map(|(_, n)| text::excerpt(n, EXCERPT_CHARS))
                .chain(std::iter::once(text::excerpt(last, EXCERPT_CHARS)))
                .collect::<Vec<_>>()
                .join(" > ")
        };
        // The same file, or one of the same name reached another way (a
        // circle through files of other names is bounded by the depth).
        let same = |(a, stem): &(PathBuf, String)| {
            *a == path
                || (stem == name
                    && std::fs::canonicalize(a)
                        .ok()
                        .is_some_and(|a| std::fs::canonicalize(&path).ok().is_some_and(|b| a == b)))
        };
        if let Some(at) = chain.iter().position(same) {
            return Err(BaseProblem::Located(format!(
                "'extends' goes round in a circle: {} ({} extends itself through the others)",
                names(&chain[at..], name),
                text::path(&chain[at].0)
            )));
        }
        if chain.len() >= MAX_EXTENDS_DEPTH {
            return Err(BaseProblem::Located(format!(
                "'extends' goes through more than {MAX_EXTENDS_DEPTH} targets: {}",
                names(&chain, name)
            )));
        }
        self.load_file(&path).map_err(BaseProblem::Failed)
    }
}
