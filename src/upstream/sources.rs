//! `sources.toml`: the sources a team takes skills from, written by `skills
//! add` and by hand, committed with the team layer.
//!
//! ```toml
//! [[source]]
//! name = "acme"                            # unique; what the lock and messages call it
//! url = "https://github.com/acme/skills"   # https://, ssh://, file:// or an absolute path
//! ref = "v1.2.0"                           # a branch, tag or commit [default: the remote's HEAD]
//! path = "skills"                          # the directory holding the skill directories [default: the top]
//! # plugin = "document-skills"             # instead of path: a plugin the repository's marketplace file declares
//! skills = ["pdf-tables"]                  # only these [default: every skill there]
//!
//! [prefer]
//! pdf-tables = "acme"                      # two sources have it: take this one's
//!
//! [allow]                                  # where sources may come from [default: anywhere]
//! hosts = ["github.com"]
//! owners = ["acme"]
//! local = false                            # local paths and file:// URLs
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::refused;
use crate::error::{ErrorKind, Result};

/// The largest sources file read.
pub const MAX_BYTES: u64 = 1 << 20;

/// One source as the sources file names it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourceSpec {
    /// Its name, unique in the file.
    pub name: String,
    /// The repository.
    pub url: String,
    /// The branch, tag or commit; `None`: the remote's `HEAD`.
    #[serde(rename = "ref", default, skip_serializing_if = "Option::is_none")]
    pub git_ref: Option<String>,
    /// The directory inside the repository that holds the skill
    /// directories; `None`: the top.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Instead of `path`: the plugin of the repository's Claude Code
    /// marketplace file (`.claude-plugin/marketplace.json`) whose skills
    /// are taken, as the file declares them at each commit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plugin: Option<String>,
    /// Only these skills; `None`: every skill found.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<Vec<String>>,
}

/// The whole file.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SourcesFile {
    /// The sources, in the file's order.
    #[serde(default, rename = "source")]
    pub sources: Vec<SourceSpec>,
    /// Skill name → the source whose skill wins when two have it.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub prefer: BTreeMap<String, String>,
    /// Where sources may come from; `None`: anywhere.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allow: Option<Allow>,
}

/// Where a project's sources may come from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Allow {
    /// The hosts a URL may name (`github.com`); `None`: any.
    #[serde(default)]
    pub hosts: Option<Vec<String>>,
    /// The owners (the first component of the path on the host: `acme`
    /// of `github.com/acme/skills`); `None`: any.
    #[serde(default)]
    pub owners: Option<Vec<String>>,
    /// Local paths and `file://` URLs [default: not allowed once `[allow]`
    /// is there].
    #[serde(default)]
    pub local: bool,
}

/// How the places of an [`Allow`] are named in a refusal.
struct Names {
    hosts: &'static str,
    owners: &'static str,
    local: &'static str,
}

/// `[allow]` of the sources file.
const IN_FILE: Names = Names {
    hosts: "[allow] hosts",
    owners: "[allow] owners",
    local: "[allow] does not say `local = true`",
};

/// The places pinned by the environment ([`Policy`]).
const PINNED: Names = Names {
    hosts: "$BERNSTEIN_SKILLS_ALLOW_HOSTS",
    owners: "$BERNSTEIN_SKILLS_ALLOW_OWNERS",
    local: "$BERNSTEIN_SKILLS_ALLOW_LOCAL is not 1",
};

impl Allow {
    /// Why `url` may not be a source, if it may not: its host and owner
    /// as git and curl read the URL ([`super::location`]); a URL that
    /// cannot be read is refused.
    pub fn refuses(&self, url: &str) -> Option<String> {
        self.judge(&IN_FILE).refuses(url)
    }

    /// The places of this `[allow]`, made ready to judge many URLs: each
    /// host normalised once, hosts and owners looked up in sets, so that
    /// judging every source of a file costs a lookup per source, not a
    /// walk of the lists.
    fn judge<'a>(&'a self, names: &'a Names) -> Judge<'a> {
        Judge {
            allow: self,
            names,
            hosts: self
                .hosts
                .as_ref()
                .map(|h| h.iter().map(|h| super::location::normal_host(h)).collect()),
            owners: self
                .owners
                .as_ref()
                .map(|o| o.iter().map(String::as_str).collect()),
        }
    }
}

/// An [`Allow`] ready to judge URLs ([`Allow::judge`]).
struct Judge<'a> {
    allow: &'a Allow,
    names: &'a Names,
    hosts: Option<std::collections::BTreeSet<String>>,
    owners: Option<std::collections::BTreeSet<&'a str>>,
}

impl Judge<'_> {
    fn refuses(&self, url: &str) -> Option<String> {
        let (allow, names) = (self.allow, self.names);
        let location = match super::location::parse(url) {
            Ok(l) => l,
            Err(e) => return Some(e.to_string()),
        };
        let (Some(host), Some(owner)) = (&location.host, location.owner()) else {
            return (!allow.local).then(|| format!("a local repository, and {}", names.local));
        };
        if let (Some(hosts), Some(set)) = (&allow.hosts, &self.hosts)
            && !set.contains(host)
        {
            return Some(format!(
                "host '{}' is not one of {} ({})",
                crate::text::escape(host),
                names.hosts,
                crate::text::list(hosts.iter().map(String::as_str), false)
            ));
        }
        if let (Some(owners), Some(set)) = (&allow.owners, &self.owners)
            && !set.contains(owner)
        {
            return Some(format!(
                "owner '{}' is not one of {} ({})",
                crate::text::escape(owner),
                names.owners,
                crate::text::list(owners.iter().map(String::as_str), false)
            ));
        }
        None
    }
}

/// Where sources may come from, as this environment pins it, over what a
/// sources file says: CI that runs `verify` on a pull request sets
/// `BERNSTEIN_SKILLS_ALLOW_HOSTS` (and `_OWNERS`, `_LOCAL`) in its own
/// configuration, which the pull request cannot change, so a pull request
/// that widens `[allow]` reaches no further. A source must be allowed by
/// both: the sources file may narrow the pin, never widen it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// The pinned places; `None`: nothing pinned, the sources file decides.
    pub pinned: Option<Allow>,
}

impl Policy {
    /// The policy of these variables (`var(NAME)`: its value, `None` when
    /// unset): pinned when any of `BERNSTEIN_SKILLS_ALLOW_HOSTS`,
    /// `BERNSTEIN_SKILLS_ALLOW_OWNERS` and `BERNSTEIN_SKILLS_ALLOW_LOCAL`
    /// is set. The lists are comma-separated (an empty one allows none);
    /// an unset list allows any; local repositories are allowed only when
    /// `_LOCAL` is `1` (or `true`, `yes`).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Policy {
        let list = |name: &str| {
            var(name).map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
        };
        let hosts = list("BERNSTEIN_SKILLS_ALLOW_HOSTS");
        let owners = list("BERNSTEIN_SKILLS_ALLOW_OWNERS");
        let local = var("BERNSTEIN_SKILLS_ALLOW_LOCAL");
        if hosts.is_none() && owners.is_none() && local.is_none() {
            return Policy::default();
        }
        let local = local.is_some_and(|v| {
            matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "true" | "yes")
        });
        Policy {
            pinned: Some(Allow {
                hosts,
                owners,
                local,
            }),
        }
    }

    /// [`Policy::from_vars`] of an environment.
    pub fn of(env: &crate::source::Env) -> Policy {
        Policy::from_vars(|k| env.allow_variable(k))
    }

    /// Why the pin refuses `url`, if it does.
    pub fn refuses(&self, url: &str) -> Option<String> {
        self.judge().refuses(url)
    }

    /// The pin made ready to judge many URLs.
    fn judge(&self) -> PinJudge<'_> {
        PinJudge(self.pinned.as_ref().map(|p| p.judge(&PINNED)))
    }
}

/// A [`Policy`] ready to judge URLs.
struct PinJudge<'a>(Option<Judge<'a>>);

impl PinJudge<'_> {
    fn refuses(&self, url: &str) -> Option<String> {
        self.0
            .as_ref()
            .and_then(|j| j.refuses(url))
            .map(|why| format!("{why} (pinned by the environment)"))
    }
}

impl SourcesFile {
    /// Reads and checks the file; `None` if it does not exist. A symlink is
    /// refused: the file is committed with the team layer and read like
    /// one.
    pub fn read(path: &Path, policy: &Policy) -> Result<Option<SourcesFile>> {
        let Some(text) = read_text(path, MAX_BYTES)? else {
            return Ok(None);
        };
        let file = SourcesFile::parse(&text, path, policy)?;
        Ok(Some(file))
    }

    /// Parses and checks the text of a sources file at `path`: every
    /// source's URL must be readable ([`super::location`]), allowed by the
    /// environment's `policy` and by the file's own `[allow]`.
    pub fn parse(text: &str, path: &Path, policy: &Policy) -> Result<SourcesFile> {
        let file: SourcesFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let pin = policy.judge();
        let mut seen = std::collections::BTreeSet::new();
        for s in &file.sources {
            let at = |m: String| {
                refused(
                    ErrorKind::Invalid,
                    path,
                    format!("source '{}': {m}", crate::text::escape(&s.name)),
                )
            };
            check_source_name(&s.name).map_err(|m| at(m.into()))?;
            if !seen.insert(&s.name) {
                return Err(at("named twice; give each source its own name".into()));
            }
            check_url(&s.url)
                .map_err(|m| at(format!("url {}: {m}", super::location::Shown(&s.url))))?;
            if let Some(why) = pin.refuses(&s.url) {
                return Err(refused(
                    ErrorKind::Unsafe,
                    path,
                    format!(
                        "source '{}' ({}): {why}; nothing of it is fetched or read",
                        crate::text::escape(&s.name),
                        super::location::Shown(&s.url)
                    ),
                ));
            }
            if let Some(r) = &s.git_ref {
                check_ref(r).map_err(|m| at(format!("ref: {m}")))?;
            }
            if let Some(p) = &s.path {
                check_subdir(p).map_err(|m| at(format!("path: {m}")))?;
            }
            if let Some(p) = &s.plugin {
                check_plugin(p).map_err(|m| at(format!("plugin: {m}")))?;
                if s.path.is_some() {
                    return Err(at(
                        "path and plugin: a plugin's entry in .claude-plugin/marketplace.json says where its skills are; give one of them".into(),
                    ));
                }
            }
            for k in s.skills.iter().flatten() {
                crate::layer::check_name(k)
                    .map_err(|m| at(format!("skills: '{}': {m}", crate::text::escape(k))))?;
            }
        }
        if let Some(allow) = &file.allow
            && let judge = allow.judge(&IN_FILE)
            && let Some((s, why)) = file
                .sources
                .iter()
                .find_map(|s| judge.refuses(&s.url).map(|w| (s, w)))
        {
            return Err(refused(
                ErrorKind::Unsafe,
                path,
                format!(
                    "source '{}' ({}): {why}",
                    crate::text::escape(&s.name),
                    super::location::Shown(&s.url)
                ),
            ));
        }
        for (skill, source) in &file.prefer {
            if !seen.contains(source) {
                return Err(refused(
                    ErrorKind::Invalid,
                    path,
                    format!(
                        "prefer: skill '{}' prefers source '{}', which is not listed",
                        crate::text::escape(skill),
                        crate::text::escape(source)
                    ),
                ));
            }
        }
        Ok(file)
    }

    /// The text to append to the file for one more source: a `[[source]]`
    /// table (appending keeps the file's comments and order).
    pub fn entry_text(spec: &SourceSpec) -> String {
        #[derive(Serialize)]
        struct One<'a> {
            source: [&'a SourceSpec; 1],
        }
        toml::to_string(&One { source: [spec] }).unwrap_or_default()
    }
}

/// A TOML error at its line:column.
pub(crate) fn toml_error(path: &Path, text: &str, e: &toml::de::Error) -> crate::error::Error {
    let at = e.span().map(|s| {
        let before = &text[..s.start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
        (line, col)
    });
    located(path, at, &with_suggestion(e.message()))
}

/// A TOML message with the key most likely meant, when it names an unknown
/// one (`unknown field `skils`, expected one of `name`, ..., `skills``):
/// `... (did you mean `skills`?)`.
fn with_suggestion(message: &str) -> String {
    let Some((word, expected)) = message
        .strip_prefix("unknown field `")
        .and_then(|rest| rest.split_once('`'))
    else {
        return message.to_owned();
    };
    // The names toml lists are between backquotes: every other piece.
    let names = expected.split('`').skip(1).step_by(2);
    match crate::error::did_you_mean(word, names) {
        Some(meant) => format!("{message} (did you mean `{meant}`?)"),
        None => message.to_owned(),
    }
}

/// An error about the project's file at `path`, at line and column `at`.
pub(crate) fn located(
    path: &Path,
    at: Option<(usize, usize)>,
    message: &str,
) -> crate::error::Error {
    crate::error::Diagnostic::error(
        Some(path),
        crate::error::DiagnosticKind::Refused {
            reason: crate::text::sanitized_excerpt(message, crate::text::MESSAGE_CHARS),
        },
    )
    .at(at)
    .into()
}

/// Opens a text file the project commits: `None` if it does not exist; a
/// symlink, a special file or one whose size is over `max` refused. The
/// caller reads at most `max` bytes of it ([`read_text`], or the lock's
/// reader a line at a time).
pub(crate) fn open_text(path: &Path, max: u64) -> Result<Option<(std::fs::File, u64)>> {
    match crate::beneath::kind_of(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(ErrorKind::Io, path, format!("cannot read: {e}"))),
        Ok(k) if k != crate::beneath::EntryKind::File => {
            return Err(refused(
                ErrorKind::Unsafe,
                path,
                "not a regular file (a symlink or a directory); refused",
            ));
        }
        Ok(_) => {}
    }
    crate::source::open_bounded(path, max)
        .map(Some)
        .map_err(|r| refused(r.error_kind(), path, r.describe(path, "project")))
}

/// Reads a small text file the project commits: `None` if it does not
/// exist; a symlink, a special file, one too large or not UTF-8 refused.
pub fn read_text(path: &Path, max: u64) -> Result<Option<String>> {
    let Some((file, size)) = open_text(path, max)? else {
        return Ok(None);
    };
    let bytes = crate::source::confine::read_capped(file, size, max)
        .map_err(|r| refused(r.error_kind(), path, r.describe(path, "project")))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| refused(ErrorKind::Invalid, path, "not valid UTF-8"))
}

/// A source's name: what a skill's name may be.
pub fn check_source_name(name: &str) -> std::result::Result<(), &'static str> {
    crate::layer::check_name(name)
}

/// `SOURCE` as a person typed it (`add SOURCE`, an imported lock's
/// `source`): the repository's URL and the name the source takes by
/// default (the repository's). A local path (absolute, or starting with
/// `./` or `../`) is made absolute against `cwd`; `OWNER/REPO` is a
/// GitHub repository.
pub fn parse_source(source: &str, cwd: Option<&Path>) -> Result<(String, String)> {
    let bad = |m: &str| crate::error::Error::Refused {
        kind: ErrorKind::InvalidInput,
        path: None,
        message: format!("source {}: {m}", super::location::Shown(source)),
    };
    let scp_like = source
        .split_once(':')
        .is_some_and(|(left, _)| left.contains('@') && !left.contains('/'));
    let url = if source.contains("://") || scp_like {
        source.to_owned()
    } else if source.starts_with('/') || source.starts_with("./") || source.starts_with("../") {
        let typed = match cwd {
            Some(cwd) => cwd.join(source),
            None => Path::new(source).to_path_buf(),
        };
        let abs = std::fs::canonicalize(typed)
            .map_err(|e| bad(&format!("cannot open the directory: {e}")))?;
        abs.to_str()
            .ok_or_else(|| bad("the path is not valid UTF-8"))?
            .to_owned()
    } else if let Some((owner, repo)) = source.split_once('/')
        && [owner, repo].iter().all(|p| {
            !p.is_empty()
                && !p.starts_with('.')
                && p.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
        })
    {
        format!("https://github.com/{owner}/{repo}")
    } else {
        return Err(bad(
            "not a repository: give an https://, ssh:// or file:// URL, user@host:path, a path starting with /, ./ or ../, or OWNER/REPO",
        ));
    };
    check_url(&url).map_err(|m| bad(&m))?;
    let name = url
        .trim_end_matches('/')
        .rsplit(['/', ':'])
        .next()
        .unwrap_or("")
        .trim_end_matches(".git")
        .to_owned();
    Ok((url, name))
}

/// A repository: `https://`, `ssh://`, `file://`, an `scp`-like
/// `user@host:path`, or an absolute path, read as git and curl read it
/// ([`super::location`]): nothing git would read as an option or hand to a
/// remote helper (`ext::`), no credential, nothing that cannot be judged.
pub fn check_url(url: &str) -> std::result::Result<(), String> {
    super::location::parse(url)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

/// A ref: a branch, a tag or a commit, as git would take it, never an
/// option.
pub fn check_ref(r: &str) -> std::result::Result<(), &'static str> {
    if r.is_empty() || r.starts_with('-') || r.contains("..") || r.contains(':') {
        return Err("empty, starts with '-', or holds '..' or ':'");
    }
    if r.chars()
        .any(|c| c.is_control() || c == ' ' || c == '\\' || c == '~' || c == '^')
    {
        return Err("holds a space, a control character, '\\', '~' or '^'");
    }
    Ok(())
}

/// A plugin's name: printable, one line, at most 128 characters, never
/// an option.
pub fn check_plugin(name: &str) -> std::result::Result<(), &'static str> {
    if name.is_empty() || name.starts_with('-') || name.chars().count() > 128 {
        return Err("empty, starts with '-', or longer than 128 characters");
    }
    if name
        .chars()
        .any(|c| c.is_control() || crate::text::is_bidi(c) || crate::text::is_invisible(c))
    {
        return Err("holds a control, bidirectional or invisible character");
    }
    Ok(())
}

/// A subdirectory: relative, `/`-separated, no `.`, `..` or hidden
/// component.
pub fn check_subdir(p: &str) -> std::result::Result<(), &'static str> {
    let p = p.trim_end_matches('/');
    if p.is_empty() || p.starts_with('/') {
        return Err("must be a relative path inside the repository");
    }
    if p.split('/')
        .any(|c| c.is_empty() || c.starts_with('.') || c.chars().any(char::is_control))
    {
        return Err(
            "a component is empty, hidden ('.', '..', '.git') or holds a control character",
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unknown_key_names_the_one_most_likely_meant() {
        assert_eq!(
            with_suggestion("unknown field `skils`, expected one of `name`, `url`, `skills`"),
            "unknown field `skils`, expected one of `name`, `url`, `skills` (did you mean `skills`?)"
        );
        assert_eq!(
            with_suggestion("unknown field `hosts`, expected `owners` or `local`"),
            "unknown field `hosts`, expected `owners` or `local`"
        );
        assert_eq!(with_suggestion("invalid type"), "invalid type");
    }

    fn policy(vars: &[(&str, &str)]) -> Policy {
        Policy::from_vars(|k| {
            vars.iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| (*v).to_owned())
        })
    }

    #[test]
    fn the_pin_is_set_by_any_of_its_variables_and_lists_are_exact() {
        assert_eq!(policy(&[]), Policy::default());
        let p = policy(&[(
            "BERNSTEIN_SKILLS_ALLOW_HOSTS",
            "GitHub.com, git.example.com",
        )]);
        assert_eq!(p.refuses("https://github.com/acme/x"), None);
        assert_eq!(p.refuses("git@git.example.com:acme/x"), None);
        assert!(p.refuses("https://gitlab.com/acme/x").is_some());
        assert!(p.refuses("/srv/skills").is_some(), "local needs _LOCAL=1");
        let p = policy(&[("BERNSTEIN_SKILLS_ALLOW_HOSTS", "")]);
        assert!(
            p.refuses("https://github.com/acme/x").is_some(),
            "empty: none"
        );
        let p = policy(&[
            ("BERNSTEIN_SKILLS_ALLOW_OWNERS", "acme"),
            ("BERNSTEIN_SKILLS_ALLOW_LOCAL", "1"),
        ]);
        assert_eq!(p.refuses("https://anywhere.example/acme/x"), None);
        assert!(p.refuses("https://anywhere.example/evil/x").is_some());
        assert_eq!(p.refuses("file:///srv/skills"), None);
        // What cannot be judged is refused by the pin too.
        assert!(p.refuses("https://10.0.0.1?@github.com/acme/x").is_some());
    }
}
