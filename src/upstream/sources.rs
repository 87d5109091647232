//! `sources.toml`: the sources a team takes skills from, written by `skills
//! add` and by hand, committed with the team layer.
//!
//! ```toml
//! [[source]]
//! name = "acme"                            # unique; what the lock and messages call it
//! url = "https://github.com/acme/skills"   # https://, ssh://, file:// or an absolute path
//! ref = "v1.2.0"                           # a branch, tag or commit [default: the remote's HEAD]
//! path = "skills"                          # the directory holding the skill directories [default: the top]
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
use crate::error::Result;

/// The largest sources file read.
const MAX_BYTES: u64 = 1 << 20;

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

impl Allow {
    /// Why `url` may not be a source, if it may not.
    pub fn refuses(&self, url: &str) -> Option<String> {
        let Some((host, path)) = host_and_path(url) else {
            return (!self.local)
                .then(|| "a local repository, and [allow] does not say `local = true`".to_owned());
        };
        if let Some(hosts) = &self.hosts
            && !hosts.iter().any(|h| h.eq_ignore_ascii_case(&host))
        {
            return Some(format!(
                "host '{}' is not one of [allow] hosts ({})",
                crate::text::escape(&host),
                crate::text::list(hosts.iter().map(String::as_str), false)
            ));
        }
        let owner = path.trim_start_matches('/').split('/').next().unwrap_or("");
        if let Some(owners) = &self.owners
            && !owners.iter().any(|o| o == owner)
        {
            return Some(format!(
                "owner '{}' is not one of [allow] owners ({})",
                crate::text::escape(owner),
                crate::text::list(owners.iter().map(String::as_str), false)
            ));
        }
        None
    }
}

/// The host (lowercase, without user and port) and the path of a remote
/// URL; `None` for a local path or a `file://` URL.
pub fn host_and_path(url: &str) -> Option<(String, String)> {
    let (authority, path) = if let Some(rest) = url
        .strip_prefix("https://")
        .or_else(|| url.strip_prefix("ssh://"))
    {
        rest.split_once('/').unwrap_or((rest, ""))
    } else if url.starts_with("file://") || url.starts_with('/') {
        return None;
    } else {
        // user@host:path
        url.split_once(':')?
    };
    let host = authority.rsplit('@').next().unwrap_or(authority);
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    Some((host, path.to_owned()))
}

impl SourcesFile {
    /// Reads and checks the file; `None` if it does not exist. A symlink is
    /// refused: the file is committed with the team layer and read like
    /// one.
    pub fn read(path: &Path) -> Result<Option<SourcesFile>> {
        let Some(text) = read_text(path, MAX_BYTES)? else {
            return Ok(None);
        };
        let file = SourcesFile::parse(&text, path)?;
        Ok(Some(file))
    }

    /// Parses and checks the text of a sources file at `path`.
    pub fn parse(text: &str, path: &Path) -> Result<SourcesFile> {
        let file: SourcesFile = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
        let mut seen = std::collections::BTreeSet::new();
        for s in &file.sources {
            let at = |m: String| {
                refused(
                    path,
                    format!("source '{}': {m}", crate::text::escape(&s.name)),
                )
            };
            check_source_name(&s.name).map_err(|m| at(m.into()))?;
            if !seen.insert(&s.name) {
                return Err(at("named twice; give each source its own name".into()));
            }
            check_url(&s.url).map_err(|m| at(format!("url: {m}")))?;
            if let Some(r) = &s.git_ref {
                check_ref(r).map_err(|m| at(format!("ref: {m}")))?;
            }
            if let Some(p) = &s.path {
                check_subdir(p).map_err(|m| at(format!("path: {m}")))?;
            }
            for k in s.skills.iter().flatten() {
                crate::layer::check_name(k)
                    .map_err(|m| at(format!("skills: '{}': {m}", crate::text::escape(k))))?;
            }
        }
        if let Some(allow) = &file.allow
            && let Some((s, why)) = file
                .sources
                .iter()
                .find_map(|s| allow.refuses(&s.url).map(|w| (s, w)))
        {
            return Err(refused(
                path,
                format!(
                    "source '{}' ({}): {why}",
                    crate::text::escape(&s.name),
                    crate::text::escape(&s.url)
                ),
            ));
        }
        for (skill, source) in &file.prefer {
            if !file.sources.iter().any(|s| &s.name == source) {
                return Err(refused(
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
    located(path, at, e.message())
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

/// Reads a small text file the project commits: `None` if it does not
/// exist; a symlink, a special file, one too large or not UTF-8 refused.
pub fn read_text(path: &Path, max: u64) -> Result<Option<String>> {
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(refused(path, format!("cannot read: {e}"))),
        Ok(m) if !m.file_type().is_file() => {
            return Err(refused(
                path,
                "not a regular file (a symlink or a directory); refused",
            ));
        }
        Ok(_) => {}
    }
    let bytes = crate::source::read_bounded(path, max)
        .map_err(|r| refused(path, r.describe(path, "project")))?;
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| refused(path, "not valid UTF-8"))
}

/// A source's name: what a skill's name may be.
pub fn check_source_name(name: &str) -> std::result::Result<(), &'static str> {
    crate::layer::check_name(name)
}

/// A repository: `https://`, `ssh://`, `file://`, an `scp`-like
/// `user@host:path`, or an absolute path. Nothing that git would read as an
/// option or hand to a remote helper (`ext::`).
pub fn check_url(url: &str) -> std::result::Result<(), &'static str> {
    if url.is_empty() || url.starts_with('-') {
        return Err("empty, or starts with '-'");
    }
    if url.chars().any(char::is_control) || url.contains(' ') {
        return Err("holds a space or a control character");
    }
    let allowed = ["https://", "ssh://", "file://", "/"];
    let scp_like = !url.contains("://")
        && url
            .split_once(':')
            .is_some_and(|(host, _)| host.contains('@') && !host.contains('/') && !host.is_empty());
    if allowed.iter().any(|p| url.starts_with(p)) || scp_like {
        Ok(())
    } else {
        Err(
            "must start with https://, ssh://, file:// or / (an absolute path), or be user@host:path",
        )
    }
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
