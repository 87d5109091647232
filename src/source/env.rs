//! The environment every decision is made from, captured once.
//!
//! Which layers, which spec, which targets, where the project is, where
//! the cache and the person's state live: each follows from the variables,
//! the working directory and the executable's place. They are read from
//! the process in one place ([`Env::from_process`], or [`Env::from_vars`]
//! for a front end that holds them as a map, as Python does) and passed
//! down as this value, so that tests and embedders never mutate the
//! process environment and no stage below the front end reads it.

use std::ffi::OsString;
use std::path::PathBuf;

use crate::layer::Layer;

/// The variable that names one layer's directory.
pub fn variable(layer: Layer) -> &'static str {
    match layer {
        Layer::Base => "BERNSTEIN_SKILLS_BASE",
        Layer::Team => "BERNSTEIN_SKILLS_TEAM",
        Layer::User => "BERNSTEIN_SKILLS_USER",
    }
}

/// The variable that names the merge spec to use.
pub const SPEC_VARIABLE: &str = "BERNSTEIN_SKILLS_SPEC";

/// The environment the library decides from, captured explicitly.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$XDG_DATA_HOME`.
    pub xdg_data_home: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`.
    pub xdg_config_home: Option<PathBuf>,
    /// `$XDG_STATE_HOME`: where what the tool keeps for the person lives,
    /// outside every repository: their trust in projects
    /// ([`crate::source::trust`]) and export's ledgers ([`Env::state_dir`]).
    pub xdg_state_home: Option<PathBuf>,
    /// `$XDG_CACHE_HOME`: where fetched sources are kept
    /// ([`Env::cache_dir`]).
    pub xdg_cache_home: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_BASE`: the base layer's directory.
    pub base: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_TEAM`: the team layer's directory.
    pub team: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_USER`: the user layer's directory.
    pub user: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_SPEC`: the merge spec to use.
    pub spec: Option<PathBuf>,
    /// The working directory (absolute, with no symlink in it, as the
    /// operating system reports it): where the project is looked for, and
    /// the `Boundary` layer directories are checked against, and relative
    /// paths (a layer root, an output directory) are taken from: the
    /// library never asks the process for it. `None`: no project and no
    /// boundary.
    pub cwd: Option<PathBuf>,
    /// The running executable's real path (symbolic links resolved): the
    /// spec and targets installed beside it (`PREFIX/bin/bernstein` reads
    /// `PREFIX/share/bernstein/skills/`). `None` for an embedder with no
    /// such place (Python, which passes the wheel's data directory as
    /// [`Env::share_dir`]).
    pub exe: Option<PathBuf>,
    /// The installed data directory to use instead of the one beside
    /// [`Env::exe`] (`PREFIX/share/bernstein/skills`).
    pub share_dir: Option<PathBuf>,
    /// The source tree a development build runs from, whose `spec/` it
    /// uses when nothing else names one. Set by the binary only (an
    /// installed binary never reads its build machine's files).
    pub source_tree: Option<PathBuf>,
    /// `$BERNSTEIN_SKILLS_ALLOW_HOSTS`, `_OWNERS` and `_LOCAL`, as set:
    /// where sources may come from, pinned outside the repository
    /// (`crate::upstream::Policy`).
    pub allow: [Option<String>; 3],
}

/// The variables that pin where sources may come from, in the order of
/// [`Env::allow`].
pub const ALLOW_VARIABLES: [&str; 3] = [
    "BERNSTEIN_SKILLS_ALLOW_HOSTS",
    "BERNSTEIN_SKILLS_ALLOW_OWNERS",
    "BERNSTEIN_SKILLS_ALLOW_LOCAL",
];

impl Env {
    /// Reads `HOME`, the XDG directories, the `BERNSTEIN_SKILLS_*`
    /// variables, the working directory and the executable's path from
    /// the process. Empty values count as unset, as the XDG base directory
    /// spec says.
    pub fn from_process() -> Env {
        let mut env = Env::from_vars(|k| std::env::var_os(k), std::env::current_dir().ok());
        env.exe = std::env::current_exe().and_then(|e| e.canonicalize()).ok();
        env
    }

    /// The environment `var` gives (a lookup by name: the process's, or a
    /// map a front end holds), with `cwd` as the working directory. Empty
    /// values count as unset.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>, cwd: Option<PathBuf>) -> Env {
        let get = |k: &str| var(k).filter(|v| !v.is_empty()).map(PathBuf::from);
        Env {
            home: get("HOME"),
            xdg_data_home: get("XDG_DATA_HOME"),
            xdg_config_home: get("XDG_CONFIG_HOME"),
            xdg_state_home: get("XDG_STATE_HOME"),
            xdg_cache_home: get("XDG_CACHE_HOME"),
            base: get(variable(Layer::Base)),
            team: get(variable(Layer::Team)),
            user: get(variable(Layer::User)),
            spec: get(SPEC_VARIABLE),
            cwd,
            exe: None,
            share_dir: None,
            source_tree: None,
            // Set but empty is not unset here: an empty list allows none.
            allow: ALLOW_VARIABLES.map(|k| var(k).map(|v| v.to_string_lossy().into_owned())),
        }
    }

    /// `explicit`, or `fallback` below the home directory; `None` when
    /// neither is an absolute path. The XDG spec says relative values are
    /// invalid and must be ignored, and a relative or missing `HOME` would
    /// put the person's directories below the working directory, where a
    /// checked-out repository could supply them.
    fn base_dir(
        explicit: &Option<PathBuf>,
        home: &Option<PathBuf>,
        fallback: &str,
    ) -> Option<PathBuf> {
        match (explicit, home) {
            (Some(p), _) if p.is_absolute() => Some(p.clone()),
            (_, Some(h)) if h.is_absolute() => Some(h.join(fallback)),
            _ => None,
        }
    }

    /// `$XDG_DATA_HOME/bernstein/skills`, defaulting to `~/.local/share/...`;
    /// `None` when neither variable is an absolute path.
    pub fn data_dir(&self) -> Option<PathBuf> {
        Self::base_dir(&self.xdg_data_home, &self.home, ".local/share")
            .map(|d| d.join("bernstein/skills"))
    }

    /// `$XDG_CONFIG_HOME/bernstein/skills`, defaulting to `~/.config/...`;
    /// `None` when neither variable is an absolute path.
    pub fn config_dir(&self) -> Option<PathBuf> {
        Self::base_dir(&self.xdg_config_home, &self.home, ".config")
            .map(|d| d.join("bernstein/skills"))
    }

    /// `$XDG_STATE_HOME/bernstein/skills`, defaulting to
    /// `~/.local/state/...`: machine-local state that belongs to no
    /// repository (export's ledgers, `crate::export`). `None` when neither
    /// variable gives an absolute path: there is then no such place, and
    /// never one relative to the working directory.
    pub fn state_dir(&self) -> Option<PathBuf> {
        Self::base_dir(&self.xdg_state_home, &self.home, ".local/state")
            .map(|d| d.join("bernstein/skills"))
    }

    /// `$XDG_CACHE_HOME/bernstein/skills`, defaulting to `~/.cache/...`:
    /// what can be fetched or computed again (the sources' files). `None`
    /// when neither variable gives an absolute path.
    pub fn cache_dir(&self) -> Option<PathBuf> {
        Self::base_dir(&self.xdg_cache_home, &self.home, ".cache")
            .map(|d| d.join("bernstein/skills"))
    }

    /// The layer's own variable, if set.
    pub(crate) fn layer_variable(&self, layer: Layer) -> Option<&PathBuf> {
        match layer {
            Layer::Base => self.base.as_ref(),
            Layer::Team => self.team.as_ref(),
            Layer::User => self.user.as_ref(),
        }
    }

    /// The value of one of [`ALLOW_VARIABLES`], as set.
    pub fn allow_variable(&self, name: &str) -> Option<String> {
        let i = ALLOW_VARIABLES.iter().position(|v| *v == name)?;
        self.allow[i].clone()
    }

    /// The root of the git work tree holding the working directory, if
    /// any: the project's root when it has no `.bernstein/` yet, where
    /// `add` and `new --layer team` make one.
    /// A work tree that holds the home directory (a dotfiles repository
    /// at `~`) is the person's, and none, unless its top holds
    /// `.bernstein/` ([`super::project::work_tree`]).
    pub fn work_tree(&self) -> Option<PathBuf> {
        super::project::work_tree(self.cwd.as_deref()?, self.home.as_deref())
    }

    /// The project found from the working directory
    /// ([`super::project::Project::find`]).
    pub fn project(&self) -> Option<super::project::Project> {
        super::project::Project::find(self.cwd.as_deref()?, self.home.as_deref())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn xdg_defaults_and_overrides() {
        let env = Env {
            home: Some("/h".into()),
            ..Env::default()
        };
        assert_eq!(
            env.data_dir().unwrap(),
            Path::new("/h/.local/share/bernstein/skills")
        );
        assert_eq!(
            env.config_dir().unwrap(),
            Path::new("/h/.config/bernstein/skills")
        );
        assert_eq!(
            env.cache_dir().unwrap(),
            Path::new("/h/.cache/bernstein/skills")
        );
        let env = Env {
            home: Some("/h".into()),
            xdg_data_home: Some("/d".into()),
            xdg_config_home: Some("relative".into()),
            ..Env::default()
        };
        assert_eq!(env.data_dir().unwrap(), Path::new("/d/bernstein/skills"));
        assert_eq!(
            env.config_dir().unwrap(),
            Path::new("/h/.config/bernstein/skills")
        );
        // A relative or missing HOME gives no place at all.
        for home in [None, Some("relative".into())] {
            let env = Env {
                home,
                ..Env::default()
            };
            assert_eq!((env.data_dir(), env.config_dir()), (None, None));
        }
    }

    #[test]
    fn the_state_dir_is_never_relative() {
        let state = |home: Option<&str>, xdg: Option<&str>| {
            Env {
                home: home.map(PathBuf::from),
                xdg_state_home: xdg.map(PathBuf::from),
                ..Env::default()
            }
            .state_dir()
        };
        assert_eq!(
            state(Some("/h"), None).unwrap(),
            Path::new("/h/.local/state/bernstein/skills")
        );
        assert_eq!(
            state(Some("/h"), Some("/s")).unwrap(),
            Path::new("/s/bernstein/skills")
        );
        assert_eq!(
            state(Some("/h"), Some("rel")).unwrap(),
            Path::new("/h/.local/state/bernstein/skills")
        );
        assert_eq!(state(None, Some("rel")), None);
        assert_eq!(state(Some("rel"), None), None);
        assert_eq!(state(None, None), None);
    }

    #[test]
    fn variables_are_read_from_the_lookup_given() {
        let vars = [
            ("HOME", "/h"),
            ("XDG_CACHE_HOME", ""),
            ("BERNSTEIN_SKILLS_TEAM", "/t"),
            ("BERNSTEIN_SKILLS_SPEC", "/s.yaml"),
        ];
        let env = Env::from_vars(
            |k| {
                vars.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| OsString::from(v))
            },
            Some("/w".into()),
        );
        assert_eq!(env.home.as_deref(), Some(Path::new("/h")));
        // Empty is unset.
        assert_eq!(env.xdg_cache_home, None);
        assert_eq!(env.team.as_deref(), Some(Path::new("/t")));
        assert_eq!(env.spec.as_deref(), Some(Path::new("/s.yaml")));
        assert_eq!(env.cwd.as_deref(), Some(Path::new("/w")));
        assert_eq!(env.exe, None);
    }
}
