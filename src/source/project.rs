//! The project: a git repository whose `.bernstein/` holds what the team
//! shares — its layer (`skills/`), its upstream sources and their lock,
//! and the targets it exports to. Found here, named here, once: every
//! front end, every command and the trust store take the project and its
//! files from this module.
//!
//! A project is found from the working directory the way git finds its
//! repository: the nearest directory, from the working directory up to
//! the root of the git work tree holding it (never above; outside a work
//! tree, only the working directory itself), whose `.bernstein` holds any
//! of the project's files ([`ProjectFile`]). Any one is enough: a fresh
//! clone of a project that takes its skills from upstream and customises
//! none yet has only `sources.toml` and `sources.lock` (git keeps no empty
//! `skills/`), and it is a project all the same. A `.bernstein` that is a
//! symbolic link or not a directory counts too, so that using it refuses
//! it by name rather than skipping it in silence.
//!
//! The person's home directory is theirs, not a project's: a git work tree
//! that holds it (rooted at `HOME` or above it, as a dotfiles repository
//! at `~` is) is a project's only when its top holds `.bernstein/`.
//! Otherwise a project found in it (an unpacked archive in
//! `~/Downloads`) is bounded by the directory that holds its
//! `.bernstein/`, as outside any work tree, and the person's own places
//! (`~/.claude/skills`, the state and cache directories) are outside it
//! ([`work_tree`]).

use std::path::{Component, Path, PathBuf};

/// The directory, at a project's root, that holds its files.
pub const DIR: &str = ".bernstein";

/// One of a project's files, in its `.bernstein/` directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProjectFile {
    /// `skills/`: the team layer.
    Layer,
    /// `sources.toml`: the upstream sources the team asked for.
    Sources,
    /// `sources.lock`: what they resolved to.
    Lock,
    /// `targets.toml`: the targets the project exports to.
    Targets,
}

impl ProjectFile {
    /// Every project file, the layer first.
    pub const ALL: [ProjectFile; 4] = [
        ProjectFile::Layer,
        ProjectFile::Sources,
        ProjectFile::Lock,
        ProjectFile::Targets,
    ];

    /// The files beside the layer that change what an export takes from
    /// the project: trusted with the layer.
    pub const BESIDE_LAYER: [ProjectFile; 3] = [
        ProjectFile::Sources,
        ProjectFile::Lock,
        ProjectFile::Targets,
    ];

    /// Its name in `.bernstein/`.
    pub fn name(self) -> &'static str {
        match self {
            ProjectFile::Layer => "skills",
            ProjectFile::Sources => "sources.toml",
            ProjectFile::Lock => "sources.lock",
            ProjectFile::Targets => "targets.toml",
        }
    }
}

/// A project found from the working directory (or the one a git work tree
/// would be, before its first file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Project {
    /// The root of the project: the git work tree holding `.bernstein/`,
    /// else the directory holding it. Absolute, with no symlink.
    pub root: PathBuf,
    /// Its `.bernstein/` directory, absolute.
    pub dir: PathBuf,
    /// The project's own layer, `.bernstein/skills`, absolute (the key of
    /// its trust).
    pub layer: PathBuf,
}

impl Project {
    /// The project found from `cwd` (an absolute, real path), in the home
    /// directory `home`, as the module documentation says.
    pub fn find(cwd: &Path, home: Option<&Path>) -> Option<Project> {
        let top = work_tree(cwd, home);
        let top = top.as_deref();
        for dir in cwd.ancestors() {
            if holds_project(dir) {
                let root = top.unwrap_or(dir).to_path_buf();
                return Some(Project::in_dir(dir, root));
            }
            if top.is_none_or(|t| t == dir) {
                break;
            }
        }
        None
    }

    /// The project a git work tree at `root` has, or would have once a
    /// file is written into its `.bernstein/`.
    pub fn at(root: &Path) -> Project {
        Project::in_dir(root, root.to_path_buf())
    }

    fn in_dir(holder: &Path, root: PathBuf) -> Project {
        let dir = holder.join(DIR);
        Project {
            root,
            layer: dir.join(ProjectFile::Layer.name()),
            dir,
        }
    }

    /// The path of one of its files.
    pub fn file(&self, f: ProjectFile) -> PathBuf {
        self.dir.join(f.name())
    }

    /// Does `.bernstein/` exist (in any form)?
    pub fn exists(&self) -> bool {
        crate::beneath::kind_of(&self.dir).is_ok()
    }

    /// Is `dir` (absolute, or relative to `cwd`) inside the project? Its
    /// deepest existing ancestor is resolved by the operating system, so a
    /// symlink out of (or into) the project counts where it leads.
    pub fn holds(&self, dir: &Path, cwd: &Path) -> bool {
        inside(&self.root, dir, cwd)
    }
}

/// The root of the git work tree holding `cwd` (an absolute, real path)
/// that a project may take for its own: not one that holds the home
/// directory `home` (rooted at it or above it) unless its top holds
/// `.bernstein/`.
pub fn work_tree(cwd: &Path, home: Option<&Path>) -> Option<PathBuf> {
    let top = crate::beneath::work_tree_of(cwd)?;
    let holds_home = home.filter(|h| h.is_absolute()).is_some_and(|h| {
        let real = std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf());
        real.starts_with(top) || h.starts_with(top)
    });
    (!holds_home || holds_project(top)).then(|| top.to_path_buf())
}

/// Does `dir/.bernstein` make `dir` a project's holder?
fn holds_project(dir: &Path) -> bool {
    let holder = dir.join(DIR);
    let Ok(kind) = crate::beneath::kind_of(&holder) else {
        return false;
    };
    if kind != crate::beneath::EntryKind::Dir {
        // A symlink or a file: refused where it is used, never skipped.
        return true;
    }
    ProjectFile::ALL
        .iter()
        .any(|f| crate::beneath::kind_of(&holder.join(f.name())).is_ok())
}

/// Is `dir` (absolute, or relative to `cwd`) inside `root`? Its deepest
/// existing ancestor is resolved by the operating system, so a symlink
/// out of (or into) `root` counts where it leads.
pub fn inside(root: &Path, dir: &Path, cwd: &Path) -> bool {
    let abs = lexical(&cwd.join(dir));
    let mut existing = abs.as_path();
    let mut rest = Vec::new();
    let real = loop {
        match std::fs::canonicalize(existing) {
            Ok(real) => break real,
            Err(_) => match (existing.parent(), existing.file_name()) {
                (Some(parent), Some(name)) => {
                    rest.push(name.to_owned());
                    existing = parent;
                }
                _ => return false,
            },
        }
    };
    let full = rest.iter().rev().fold(real, |p, n| p.join(n));
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    full.starts_with(root)
}

/// `.` and `..` resolved lexically.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// `path` (absolute) as a person standing in `cwd` would type it: relative
/// when it lies below `cwd` or a few directories above it
/// (`.bernstein/sources.lock`, `../.bernstein/sources.lock`), else as
/// given.
pub fn relative_to(path: &Path, cwd: Option<&Path>) -> PathBuf {
    let Some(cwd) = cwd else {
        return path.to_path_buf();
    };
    for (up, dir) in cwd.ancestors().enumerate().take(8) {
        if dir.parent().is_none() {
            break;
        }
        if let Ok(rest) = path.strip_prefix(dir) {
            let mut rel: PathBuf = std::iter::repeat_n("..", up).collect();
            rel.push(rest);
            if rel.as_os_str().is_empty() {
                rel.push(".");
            }
            return rel;
        }
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_holds_what_is_below_its_root() {
        let p = Project::at(Path::new("/nonexistent-project-root/p"));
        let cwd = Path::new("/nonexistent-project-root/p/sub");
        assert!(p.holds(Path::new(".claude/skills"), cwd));
        assert!(p.holds(Path::new("../out"), cwd));
        assert!(!p.holds(Path::new("../../elsewhere"), cwd));
        assert!(!p.holds(Path::new("/home/someone/.claude/skills"), cwd));
        assert_eq!(
            p.file(ProjectFile::Lock),
            Path::new("/nonexistent-project-root/p/.bernstein/sources.lock")
        );
    }

    #[test]
    fn paths_are_shown_from_where_the_person_stands() {
        let lock = Path::new("/w/p/.bernstein/sources.lock");
        assert_eq!(
            relative_to(lock, Some(Path::new("/w/p"))),
            Path::new(".bernstein/sources.lock")
        );
        assert_eq!(
            relative_to(lock, Some(Path::new("/w/p/src/deep"))),
            Path::new("../../.bernstein/sources.lock")
        );
        assert_eq!(
            relative_to(Path::new("/w/p"), Some(Path::new("/w/p"))),
            Path::new(".")
        );
        // Nothing shared but the root: absolute.
        assert_eq!(
            relative_to(lock, Some(Path::new("/elsewhere"))),
            Path::new("/w/p/.bernstein/sources.lock")
        );
        assert_eq!(relative_to(lock, None), lock);
    }

    #[test]
    fn any_project_file_makes_a_project() {
        let tmp = std::env::temp_dir().join(format!("bs-project-{}", std::process::id()));
        let work = tmp.join("repo");
        std::fs::create_dir_all(work.join(".git")).unwrap();
        std::fs::create_dir_all(work.join("a/b")).unwrap();
        let cwd = work.join("a/b");
        assert_eq!(Project::find(&cwd, None), None);
        // An empty `.bernstein/` is no project (another tool's, perhaps).
        std::fs::create_dir_all(work.join(DIR)).unwrap();
        assert_eq!(Project::find(&cwd, None), None);
        std::fs::write(work.join(".bernstein/sources.lock"), "").unwrap();
        let p = Project::find(&cwd, None).unwrap();
        assert_eq!(p.root, work);
        assert_eq!(p.layer, work.join(".bernstein/skills"));
        // A `.bernstein` that is a file counts, to be refused by name.
        std::fs::remove_dir_all(work.join(DIR)).unwrap();
        std::fs::write(work.join(DIR), "").unwrap();
        assert_eq!(Project::find(&cwd, None).unwrap().dir, work.join(DIR));
        // Never above the work tree.
        std::fs::remove_file(work.join(DIR)).unwrap();
        std::fs::write(tmp.join(DIR), "").unwrap();
        assert_eq!(Project::find(&cwd, None), None);
        // A work tree that holds the home directory is the person's: a
        // project in it is bounded by its own `.bernstein/`.
        std::fs::remove_file(tmp.join(DIR)).unwrap();
        std::fs::create_dir_all(work.join("a/.bernstein/skills")).unwrap();
        assert_eq!(Project::find(&cwd, None).unwrap().root, work);
        let home = Some(work.as_path());
        assert_eq!(Project::find(&cwd, home), None);
        assert_eq!(
            Project::find(&work.join("a"), home).unwrap().root,
            work.join("a")
        );
        assert_eq!(work_tree(&cwd, home), None);
        // Unless its top is a project.
        std::fs::create_dir_all(work.join(".bernstein/skills")).unwrap();
        assert_eq!(Project::find(&work.join("a"), home).unwrap().root, work);
        assert_eq!(work_tree(&cwd, home), Some(work.clone()));
        std::fs::remove_dir_all(&tmp).unwrap();
    }
}
