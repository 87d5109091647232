//! Fetching one commit of a source with the system `git`.
//!
//! Why the system `git` rather than a library: it is what the team already
//! uses to reach the same repositories, with the same credentials, proxies
//! and SSH keys (a library would need all of that configured again), and
//! it is maintained by the people who define the protocol. The cost is a
//! program that must be installed; `skills add`, `update` and `verify`
//! say so in one line when it is not. Every other command reads the cache
//! and never runs it.
//!
//! What it may do is narrowed: each fetch goes into a new bare repository
//! of our own (so no configuration or hook of the fetched repository is
//! ever read, and nothing is checked out), with the system configuration
//! ignored (`GIT_CONFIG_NOSYSTEM`), hooks pointed at `/dev/null`, no
//! submodules, no terminal prompt, and only the https, ssh and file
//! transports (`GIT_ALLOW_PROTOCOL`: no `ext::` helper can run a command).
//! One commit is fetched (`--depth 1`), and its tree is read as data
//! (`ls-tree`, `cat-file`): a symlink or a submodule in a skill is an
//! error, never a file on this machine.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::io::{BufRead, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

use crate::digest::Digest;
use crate::error::{Error, ErrorKind, Result};
use crate::source::files::FileLimits;

/// The most tree entries listed for one source.
const MAX_TREE_ENTRIES: usize = 200_000;

/// What is asked of a source.
#[derive(Debug, Clone)]
pub struct Want<'a> {
    /// The repository.
    pub url: &'a str,
    /// A branch, tag or commit; `None`: the remote's `HEAD`.
    pub rev: Option<&'a str>,
    /// The directory holding the skill directories.
    pub path: Option<&'a str>,
    /// Instead of `path`: the skills a plugin of the repository's
    /// marketplace file declares ([`super::marketplace`]).
    pub plugin: Option<&'a str>,
    /// Only these skills.
    pub skills: Option<&'a [String]>,
    /// Without `path` or `plugin`: look for the skills where the
    /// collection keeps them (`skills/`, else the top) instead of taking
    /// the top, and say what else is there ([`Fetched::found`]).
    pub discover: bool,
}

/// What a look at a collection found ([`Want::discover`]): where its
/// skills were taken from, and where else there are skills.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Found {
    /// The directory the skills were taken from (`None`: the top).
    pub path: Option<String>,
    /// Other directories holding skills, not taken: the directory (`.`
    /// for the top) and its skills.
    pub not_taken: Vec<(String, Vec<String>)>,
    /// The plugins the marketplace file declares, each with its skills or
    /// why they cannot be taken.
    pub plugins: Vec<(String, std::result::Result<Vec<String>, String>)>,
    /// Why the marketplace file cannot be read, if it cannot.
    pub marketplace: Option<String>,
}

/// One commit's skills, read.
#[derive(Debug, Clone, Default)]
pub struct Fetched {
    /// The commit.
    pub commit: String,
    /// `SKILL/PATH` → contents, for every file of every skill taken.
    pub files: BTreeMap<String, Vec<u8>>,
    /// The files with an execute bit.
    pub executable: BTreeSet<String>,
    /// Directories with a `SKILL.md` that were not taken because their
    /// names are not skill names (escaped).
    pub skipped: Vec<String>,
    /// What the ref asked for named, as the fetch found it (`None`: read
    /// from the cache, not fetched).
    pub kind: Option<RefKind>,
    /// What a look at the collection found ([`Want::discover`]).
    pub found: Option<Found>,
}

/// What a ref names upstream, as a fetch finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefKind {
    /// No ref: the repository's `HEAD`, its default branch.
    DefaultBranch,
    /// A branch.
    Branch,
    /// A tag.
    Tag,
    /// A commit, by its id.
    Commit,
}

impl Fetched {
    /// The skills taken.
    pub fn skills(&self) -> BTreeSet<&str> {
        self.files.keys().map(|f| super::skill_of(f)).collect()
    }

    /// Keeps only the skills `keep` says yes to.
    pub fn retain_skills(&mut self, keep: impl Fn(&str) -> bool) {
        self.files.retain(|f, _| keep(super::skill_of(f)));
        self.executable.retain(|f| keep(super::skill_of(f)));
    }

    /// `SKILL/PATH` → `sha256:HEX`.
    pub fn digests(&self) -> BTreeMap<String, String> {
        self.files
            .iter()
            .map(|(f, b)| (f.clone(), Digest::of(b).to_string()))
            .collect()
    }
}

/// An error about fetching `url`: the URL with its credentials hidden, and
/// `message` (which may quote git) with every URL's credentials hidden
/// ([`super::location`]).
fn fail(what: &str, url: &str, message: impl std::fmt::Display) -> Error {
    let message = message.to_string();
    Error::Refused {
        kind: ErrorKind::Fetch,
        path: None,
        message: format!(
            "source {}: {what}: {}",
            super::location::Shown(url),
            crate::text::sanitized_excerpt(
                &super::location::redact_text(&message),
                crate::text::MESSAGE_CHARS
            )
        ),
    }
}

/// A `git` command narrowed as the module docs say, in `dir`.
fn git(dir: &Path) -> Command {
    let mut c = Command::new("git");
    for v in [
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_INDEX_FILE",
        "GIT_OBJECT_DIRECTORY",
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_COMMON_DIR",
        "GIT_NAMESPACE",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_EXEC_PATH",
    ] {
        c.env_remove(v);
    }
    c.env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_ALLOW_PROTOCOL", "https:ssh:file")
        // A repository of commits only (`History`) never fetches what it
        // lacks behind our back.
        .env("GIT_NO_LAZY_FETCH", "1")
        .env("LC_ALL", "C")
        .arg("-C")
        .arg(dir)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "fetch.recurseSubmodules=false",
            "-c",
            "submodule.recurse=false",
            "-c",
            "protocol.allow=never",
            "-c",
            "protocol.https.allow=always",
            "-c",
            "protocol.ssh.allow=always",
            "-c",
            "protocol.file.allow=always",
            // Every object fetched is checked as git checks what it is
            // pushed: a tree entry named `/abs/path` or `..`, a `.git`
            // entry, a malformed object is refused before anything of it
            // is read. Zero-padded modes are kept by old repositories and
            // harm nothing.
            "-c",
            "fetch.fsckObjects=true",
            "-c",
            "fetch.fsck.zeroPaddedFilemode=ignore",
        ])
        .stdin(Stdio::null());
    c
}

/// Runs `cmd`, its output whole; the last lines of its errors in the
/// message when it fails.
fn run(cmd: Command, what: &str, url: &str) -> Result<Vec<u8>> {
    run_or_stderr(cmd, url)?.map_err(|stderr| says(what, url, &stderr))
}

/// Runs `cmd`: its output, or what it wrote on stderr when it failed.
fn run_or_stderr(mut cmd: Command, url: &str) -> Result<std::result::Result<Vec<u8>, String>> {
    let out = cmd.output().map_err(|e| spawn_error(e, url))?;
    if out.status.success() {
        Ok(Ok(out.stdout))
    } else {
        Ok(Err(String::from_utf8_lossy(&out.stderr).into_owned()))
    }
}

/// An error quoting the last lines git wrote; an object its checks
/// refused (`fetch.fsckObjects`) is named first, with why.
fn says(what: &str, url: &str, stderr: &str) -> Error {
    let last: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).collect();
    if let Some(fsck) = last
        .iter()
        .find(|l| l.starts_with("error: object ") && l.contains(": "))
    {
        return fail(
            what,
            url,
            format!(
                "the repository holds an object git's own checks refuse ({}); nothing of it is taken",
                fsck.trim_start_matches("error: ")
            ),
        );
    }
    let tail = last[last.len().saturating_sub(2)..].join("; ");
    fail(what, url, format!("git says: {tail}"))
}

fn spawn_error(e: std::io::Error, url: &str) -> Error {
    if e.kind() == std::io::ErrorKind::NotFound {
        fail(
            "fetching",
            url,
            "the `git` program was not found on PATH; install git (sources are fetched with it)",
        )
    } else {
        fail("running git", url, e)
    }
}

/// Fetches one commit of `want.url` and reads its skills: the directories
/// directly under `want.path` that hold a `SKILL.md`, or those that
/// `want.plugin` declares, or where the collection keeps them
/// (`want.discover`); only those named in `want.skills`, if given; every
/// file under each. An unknown ref, an unreachable repository, a source
/// without skills, a skill asked for and missing, a symlink or a submodule
/// inside a skill, a name that is not printable UTF-8, and a skill past the
/// layers' caps are errors; nothing is written anywhere but a temporary
/// repository, removed after.
pub fn fetch(want: &Want<'_>) -> Result<Fetched> {
    let url = want.url;
    let tmp = new_repository(url)?;
    let repo = tmp.path();
    let (commit, kind) = fetch_rev(repo, url, want.rev)?;
    let mut found = None;
    let (entries, places) = match (want.plugin, want.path) {
        (Some(plugin), _) => {
            let entries = list_tree(repo, &commit, "", url)?;
            let bad = |m: String| fail("reading the plugins", url, format!("{m} (at {commit})"));
            let m = read_marketplace(repo, &entries, url)?
                .ok_or_else(|| {
                    bad(format!(
                        "no {}: the repository declares no plugins; name the directory of its skills with --path instead",
                        super::marketplace::FILE
                    ))
                })?
                .map_err(&bad)?;
            let p = m.plugin(plugin).map_err(&bad)?;
            let places = plugin_places(&SkillDirs::of(&entries), &p, &mut { MAX_TREE_ENTRIES })
                .map_err(&bad)?;
            (entries, places)
        }
        (None, None) if want.discover => {
            let entries = list_tree(repo, &commit, "", url)?;
            let (places, f) = discover(repo, &entries, want, &commit)?;
            found = Some(f);
            (entries, places)
        }
        (None, path) => {
            let prefix = path
                .map(|p| format!("{}/", p.trim_end_matches('/')))
                .unwrap_or_default();
            let entries = list_tree(repo, &commit, &prefix, url)?;
            let places = skills_below(&entries, &prefix);
            (entries, places)
        }
    };
    let mut fetched = select(repo, &entries, places, want, &commit)?;
    fetched.commit = commit;
    fetched.kind = Some(kind);
    fetched.found = found;
    Ok(fetched)
}

/// A new bare repository of our own, in a temporary directory removed
/// when it is dropped.
fn new_repository(url: &str) -> Result<tempfile::TempDir> {
    let tmp = tempfile::Builder::new()
        .prefix("bernstein-fetch-")
        .tempdir()
        .map_err(|e| fail("a temporary directory", url, e))?;
    let mut init = git(tmp.path());
    init.args(["init", "--bare", "-q", "."]);
    run(init, "creating a repository to fetch into", url)?;
    Ok(tmp)
}

/// Fetches the one commit `rev` names (`None`: `HEAD`) into `repo`, at
/// depth 1: the commit and what kind of ref named it. An abbreviated
/// commit id that is no ref's name is resolved in the history of every
/// branch and tag ([`History::resolve_abbreviated`]) and fetched whole; a
/// commit id must come back as itself.
fn fetch_rev(repo: &Path, url: &str, rev: Option<&str>) -> Result<(String, RefKind)> {
    let name = rev.unwrap_or("HEAD");
    let what = format!("fetching {}", crate::text::escape(name));
    match run_or_stderr(shallow_fetch(repo, url, name), url)? {
        Ok(_) => {}
        Err(stderr)
            if rev.is_some_and(is_abbreviated) && stderr.contains("couldn't find remote ref") =>
        {
            let full = History::open(url)?.resolve_abbreviated(name)?;
            run(shallow_fetch(repo, url, &full), &what, url)?;
        }
        Err(stderr) => return Err(says(&what, url, &stderr)),
    }
    let mut parse = git(repo);
    parse.args(["rev-parse", "--verify", "-q", "FETCH_HEAD^{commit}"]);
    let commit = String::from_utf8_lossy(&run(parse, "resolving the commit", url)?)
        .trim()
        .to_owned();
    let kind = fetch_head_kind(repo);
    if let Some(rev) = rev
        && kind == RefKind::Commit
        && !commit.starts_with(rev)
    {
        return Err(fail(
            "resolving the commit",
            url,
            format!("asked for {rev}, got {commit}"),
        ));
    }
    Ok((commit, kind))
}

/// `git fetch --depth 1 URL REV` into `repo`.
fn shallow_fetch(repo: &Path, url: &str, rev: &str) -> Command {
    let mut fetch = git(repo);
    fetch.args([
        "fetch",
        "-q",
        "--depth",
        "1",
        "--no-tags",
        "--no-recurse-submodules",
        "--no-write-commit-graph",
        "--",
        url,
        rev,
    ]);
    fetch
}

/// The description of the last fetch in `FETCH_HEAD`: `branch 'main' of
/// URL`, `tag 'v1' of URL`, `'COMMIT' of URL`, or the URL alone (`HEAD`).
fn fetch_head(repo: &Path) -> String {
    std::fs::read_to_string(repo.join("FETCH_HEAD"))
        .ok()
        .and_then(|t| {
            let line = t.lines().next()?.to_owned();
            Some(line.splitn(3, '\t').nth(2)?.to_owned())
        })
        .unwrap_or_default()
}

fn fetch_head_kind(repo: &Path) -> RefKind {
    let d = fetch_head(repo);
    if d.starts_with("branch '") {
        RefKind::Branch
    } else if d.starts_with("tag '") {
        RefKind::Tag
    } else if d.starts_with('\'') {
        RefKind::Commit
    } else {
        RefKind::DefaultBranch
    }
}

/// The most commits of one ref's history a [`History`] fetches.
pub const HISTORY_DEPTH: u32 = 10_000;

/// The shortest abbreviated commit id taken (git's own minimum).
const MIN_ABBREV: usize = 4;

/// 4 to 39 lowercase hexadecimal digits: an abbreviated SHA-1 commit id
/// (or a ref of that name: a ref wins, as in git).
pub fn is_abbreviated(rev: &str) -> bool {
    (MIN_ABBREV..40).contains(&rev.len())
        && rev
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Some of a repository's history: commits only, no tree or file
/// (`--filter=tree:0` where the server filters; all of each commit's
/// objects where it does not), at most [`HISTORY_DEPTH`] commits of each
/// ref fetched, in a repository of our own removed when it is dropped. It
/// answers what the lock needs of history: is a commit in a ref's, how far
/// apart two commits are, which commit an abbreviated id names.
pub struct History {
    tmp: tempfile::TempDir,
    url: String,
    /// The refs fetched so far, by the name each was asked by.
    tips: BTreeMap<String, String>,
    /// Every branch and tag fetched ([`History::fetch_all`]).
    all: bool,
}

impl History {
    /// An empty history of `url`.
    pub fn open(url: &str) -> Result<History> {
        let tmp = new_repository(url)?;
        for (k, v) in [
            ("remote.origin.url", url),
            ("remote.origin.promisor", "true"),
            ("remote.origin.partialclonefilter", "tree:0"),
        ] {
            let mut c = git(tmp.path());
            c.args(["config", k, v]);
            run(c, "configuring a repository to fetch into", url)?;
        }
        Ok(History {
            tmp,
            url: url.to_owned(),
            tips: BTreeMap::new(),
            all: false,
        })
    }

    fn fetch(&self, refspecs: &[String]) -> Result<std::result::Result<(), String>> {
        let mut c = git(self.tmp.path());
        c.args([
            "fetch",
            "-q",
            "--filter=tree:0",
            "--depth",
            &HISTORY_DEPTH.to_string(),
            "--no-tags",
            "--no-recurse-submodules",
            "--no-write-commit-graph",
            "origin",
        ]);
        c.args(refspecs);
        Ok(run_or_stderr(c, &self.url)?.map(|_| ()))
    }

    /// Fetches the history of `rev` (a branch, a tag, `HEAD`, or a full
    /// commit id): its tip commit, `None` when upstream has no such ref.
    pub fn fetch_rev(&mut self, rev: &str) -> Result<Option<String>> {
        if let Some(tip) = self.tips.get(rev) {
            return Ok(Some(tip.clone()));
        }
        let dest = format!("refs/bs/rev/{}", self.tips.len());
        match self.fetch(&[format!("+{rev}:{dest}")])? {
            Ok(()) => {}
            Err(e) if e.contains("couldn't find remote ref") => return Ok(None),
            Err(e) => {
                return Err(says(
                    &format!("fetching the history of {}", crate::text::escape(rev)),
                    &self.url,
                    &e,
                ));
            }
        }
        let mut c = git(self.tmp.path());
        c.args(["rev-parse", "--verify", "-q", &format!("{dest}^{{commit}}")]);
        let tip = String::from_utf8_lossy(&run(c, "reading the history", &self.url)?)
            .trim()
            .to_owned();
        self.tips.insert(rev.to_owned(), tip.clone());
        Ok(Some(tip))
    }

    /// Fetches the history of every branch and tag.
    pub fn fetch_all(&mut self) -> Result<()> {
        if self.all {
            return Ok(());
        }
        self.fetch(&[
            "+refs/heads/*:refs/bs/heads/*".to_owned(),
            "+refs/tags/*:refs/bs/tags/*".to_owned(),
        ])?
        .map_err(|e| {
            says(
                "fetching the history of every branch and tag",
                &self.url,
                &e,
            )
        })?;
        self.all = true;
        Ok(())
    }

    /// The commits reachable from `tips` (every ref fetched when `None`)
    /// in what was fetched, newest first.
    fn commits(&self, tips: Option<&[&str]>) -> Result<Vec<String>> {
        let mut c = git(self.tmp.path());
        c.arg("rev-list");
        match tips {
            Some(t) => {
                c.args(t);
            }
            None => {
                c.arg("--glob=refs/bs/*");
            }
        }
        let out = run(c, "reading the history", &self.url)?;
        Ok(String::from_utf8_lossy(&out)
            .lines()
            .map(str::to_owned)
            .collect())
    }

    /// Is `commit` in the history fetched from `tip` (every ref fetched
    /// when `None`)?
    pub fn holds(&self, tip: Option<&str>, commit: &str) -> Result<bool> {
        let tips = tip.map(|t| [t]);
        Ok(self
            .commits(tips.as_ref().map(|t| &t[..]))?
            .iter()
            .any(|c| c == commit))
    }

    /// How many commits `to` is ahead of `from`, when `from` is in its
    /// history as fetched.
    pub fn ahead(&self, from: &str, to: &str) -> Result<Option<u64>> {
        if !self.holds(Some(to), from)? {
            return Ok(None);
        }
        let mut c = git(self.tmp.path());
        c.args(["rev-list", "--count", &format!("{from}..{to}")]);
        let out = run(c, "reading the history", &self.url)?;
        Ok(String::from_utf8_lossy(&out).trim().parse().ok())
    }

    /// Was the history of `tip` cut at [`HISTORY_DEPTH`] commits?
    pub fn cut(&self, tip: &str) -> Result<bool> {
        let Ok(shallow) = std::fs::read_to_string(self.tmp.path().join("shallow")) else {
            return Ok(false);
        };
        let reached = self.commits(Some(&[tip]))?;
        Ok(shallow
            .lines()
            .any(|s| reached.iter().any(|c| c == s.trim())))
    }

    /// The one commit of a branch's or tag's history whose id starts with
    /// `prefix`: an error naming the candidates when there are more, and
    /// saying where it looked when there is none.
    pub fn resolve_abbreviated(&mut self, prefix: &str) -> Result<String> {
        self.fetch_all()?;
        let found: Vec<String> = self
            .commits(None)?
            .into_iter()
            .filter(|c| c.starts_with(prefix))
            .collect();
        match found.as_slice() {
            [one] => Ok(one.clone()),
            [] => Err(fail(
                "resolving a commit",
                &self.url,
                format!(
                    "no branch or tag holds a commit {prefix} (the last {HISTORY_DEPTH} commits of each were searched); name a branch, a tag or a commit of one"
                ),
            )),
            many => Err(fail(
                "resolving a commit",
                &self.url,
                format!(
                    "{prefix} is ambiguous: {} commits start with it ({}); give more digits",
                    many.len(),
                    crate::text::list(many.iter().map(String::as_str), false)
                ),
            )),
        }
    }
}

/// 40 (SHA-1) or 64 (SHA-256) lowercase hexadecimal digits.
pub fn is_commit_id(rev: &str) -> bool {
    (rev.len() == 40 || rev.len() == 64)
        && rev
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// One entry of `ls-tree -r -l`.
struct TreeEntry {
    mode: String,
    oid: String,
    size: Option<u64>,
    /// The path from the top of the repository, raw.
    path: Vec<u8>,
}

/// Every entry of the commit's tree below `prefix` (`""`: every entry).
fn list_tree(repo: &Path, commit: &str, prefix: &str, url: &str) -> Result<Vec<TreeEntry>> {
    let mut ls = git(repo);
    ls.args(["ls-tree", "-r", "-z", "-l", "--full-tree", commit]);
    if !prefix.is_empty() {
        ls.args(["--", prefix]);
    }
    let out = run(ls, "listing the tree", url)?;
    let mut entries = Vec::new();
    for rec in out.split(|b| *b == 0).filter(|r| !r.is_empty()) {
        if entries.len() >= MAX_TREE_ENTRIES {
            return Err(fail(
                "listing the tree",
                url,
                format!("more than {MAX_TREE_ENTRIES} entries; name a smaller `path`"),
            ));
        }
        let Some(tab) = rec.iter().position(|b| *b == b'\t') else {
            continue;
        };
        let head = String::from_utf8_lossy(&rec[..tab]);
        let mut f = head.split_whitespace();
        let (Some(mode), Some(_kind), Some(oid), Some(size)) =
            (f.next(), f.next(), f.next(), f.next())
        else {
            continue;
        };
        let path = &rec[tab + 1..];
        if !path.starts_with(prefix.as_bytes()) {
            continue;
        }
        entries.push(TreeEntry {
            mode: mode.to_owned(),
            oid: oid.to_owned(),
            size: size.parse().ok(),
            path: path.to_vec(),
        });
    }
    Ok(entries)
}

/// Where the skills taken are in the tree.
#[derive(Debug, Default)]
struct Places {
    /// Skill name → its directory, from the top, ending in `/`.
    dirs: BTreeMap<String, String>,
    /// Directories with a `SKILL.md` not taken because their names are
    /// not skill names (escaped).
    skipped: Vec<String>,
    /// Where they were looked for, in words: `the top`, `path skills`,
    /// `plugin document-skills`.
    what: String,
}

/// The skills directly below `prefix` (`""`, or a directory ending in
/// `/`): each directory there that holds a `SKILL.md`.
fn skills_below(entries: &[TreeEntry], prefix: &str) -> Places {
    let mut places = Places {
        what: if prefix.is_empty() {
            "the top".to_owned()
        } else {
            format!("path {}", crate::text::escape(prefix.trim_end_matches('/')))
        },
        ..Places::default()
    };
    for e in entries {
        let Some(dir) = e
            .path
            .strip_prefix(prefix.as_bytes())
            .and_then(|p| p.strip_suffix(b"/SKILL.md"))
            .filter(|d| !d.contains(&b'/'))
        else {
            continue;
        };
        let name = String::from_utf8_lossy(dir).into_owned();
        if std::str::from_utf8(dir).is_ok() && crate::layer::check_name(&name).is_ok() {
            places.dirs.insert(name.clone(), format!("{prefix}{name}/"));
        } else {
            places.skipped.push(crate::text::escape(&name).into_owned());
        }
    }
    places
}

/// The skill directories of the tree: every `DIR/NAME/SKILL.md`, as
/// `DIR` → the names found in it (`DIR` is `""` for the top), leaving out
/// hidden directories (as a layer does) and names that are not skill
/// names.
fn survey(entries: &[TreeEntry]) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for e in entries {
        let Some(dir) = e
            .path
            .strip_suffix(b"/SKILL.md")
            .and_then(|d| std::str::from_utf8(d).ok())
        else {
            continue;
        };
        if dir.split('/').any(|c| c.starts_with('.')) {
            continue;
        }
        let (parent, name) = dir.rsplit_once('/').unwrap_or(("", dir));
        if crate::layer::check_name(name).is_ok() {
            out.entry(parent.to_owned())
                .or_default()
                .push(name.to_owned());
        }
    }
    out
}

/// A directory as messages name it: `.` for the top.
fn shown_dir(dir: &str) -> String {
    if dir.is_empty() {
        ".".to_owned()
    } else {
        crate::text::escape(dir).into_owned()
    }
}

/// Where a collection keeps its skills ([`Want::discover`]): `skills/`
/// when it holds any (the convention of Anthropic's collection and of the
/// installers), else the top, else the one directory that holds skills;
/// with skills named, the first of those that holds them all. Several
/// directories and none of the first two is an error naming them. What
/// else holds skills, and the plugins the marketplace file declares, are
/// said ([`Found`]).
fn discover(
    repo: &Path,
    entries: &[TreeEntry],
    want: &Want<'_>,
    commit: &str,
) -> Result<(Places, Found)> {
    let dirs = survey(entries);
    let order = dirs_in_order(&dirs);
    let mut found = Found::default();
    declared_plugins(repo, entries, want.url, &mut found)?;
    // With skills named, the first directory that holds them all; where
    // none does, the default says which are missing.
    let chosen = want
        .skills
        .and_then(|asked| {
            order
                .iter()
                .find(|d| asked.iter().all(|a| dirs[**d].contains(a)))
                .copied()
        })
        .map(Ok)
        .unwrap_or_else(|| default_dir(&order, &dirs, commit, &found))
        .map_err(|m| fail("selecting skills", want.url, m))?;
    found.path = (!chosen.is_empty()).then(|| chosen.clone());
    found.not_taken = order
        .iter()
        .filter(|d| **d != chosen)
        .map(|d| (shown_dir(d), dirs[*d].clone()))
        .collect();
    let prefix = if chosen.is_empty() {
        String::new()
    } else {
        format!("{chosen}/")
    };
    Ok((skills_below(entries, &prefix), found))
}

/// The directories that hold skills ([`survey`]) in the order they are
/// preferred: `skills/`, the top, then the others by name.
fn dirs_in_order(dirs: &BTreeMap<String, Vec<String>>) -> Vec<&String> {
    let mut order: Vec<&String> = Vec::new();
    for first in ["skills", ""] {
        if let Some((d, _)) = dirs.get_key_value(first) {
            order.push(d);
        }
    }
    order.extend(dirs.keys().filter(|d| !matches!(d.as_str(), "skills" | "")));
    order
}

/// Fills `found` with the plugins the tree's marketplace file declares,
/// each with its skills or why they cannot be taken, or with why the file
/// cannot be read. What is resolved is bounded as a tree is: past that
/// many skill places, a plugin is named, not resolved (a file of 50,000
/// plugins each taking the same 1,000 skills would otherwise list 50
/// million).
fn declared_plugins(
    repo: &Path,
    entries: &[TreeEntry],
    url: &str,
    found: &mut Found,
) -> Result<()> {
    let m = match read_marketplace(repo, entries, url)? {
        None => return Ok(()),
        Some(Err(why)) => {
            found.marketplace = Some(why);
            return Ok(());
        }
        Some(Ok(m)) => m,
    };
    let tree = SkillDirs::of(entries);
    let mut budget = MAX_TREE_ENTRIES;
    for name in m.names() {
        if budget == 0 {
            found.plugins.push((
                name.to_owned(),
                Err(format!(
                    "not resolved: the plugins before it name {MAX_TREE_ENTRIES} skill places; take it with --plugin NAME"
                )),
            ));
            continue;
        }
        let skills = m
            .plugin(name)
            .and_then(|p| plugin_places(&tree, &p, &mut budget))
            .map(|p| p.dirs.into_keys().collect());
        found.plugins.push((name.to_owned(), skills));
    }
    Ok(())
}

/// The directory taken without skills named: `skills/`, else the top,
/// else the one directory of skills (`order` as [`dirs_in_order`] gives
/// it). None, or several and neither of the first two, is an error that
/// names them and the plugins `found` holds.
fn default_dir<'d>(
    order: &[&'d String],
    dirs: &BTreeMap<String, Vec<String>>,
    commit: &str,
    found: &Found,
) -> std::result::Result<&'d String, String> {
    let plugins_hint = || {
        if found.plugins.is_empty() {
            String::new()
        } else {
            format!(
                "; or take a plugin {} declares with --plugin NAME ({})",
                super::marketplace::FILE,
                crate::text::list(found.plugins.iter().map(|(n, _)| n.as_str()), false)
            )
        }
    };
    match order {
        [] => Err(format!(
            "no skill (a directory with a SKILL.md) anywhere in {commit}{}",
            plugins_hint()
        )),
        [first, ..] if matches!(first.as_str(), "skills" | "") => Ok(*first),
        [one] => Ok(*one),
        several => {
            let listed: Vec<String> = several
                .iter()
                .map(|d| {
                    format!(
                        "{} ({})",
                        shown_dir(d),
                        crate::text::list(dirs[*d].iter().map(String::as_str), false)
                    )
                })
                .collect();
            Err(format!(
                "no skill at the top or in skills/ of {commit}; skills are in: {}; name the directory with --path DIR{}",
                crate::text::list(listed.iter().map(String::as_str), false),
                plugins_hint()
            ))
        }
    }
}

/// The marketplace file of the tree, read and parsed: `None` when there is
/// none, `Some(Err(why))` when it cannot be read (a symlink, a file that
/// is not regular or too large, not a marketplace file).
fn read_marketplace(
    repo: &Path,
    entries: &[TreeEntry],
    url: &str,
) -> Result<Option<std::result::Result<super::marketplace::Marketplace, String>>> {
    use super::marketplace::{FILE, MAX_BYTES};
    let dir = FILE.split('/').next().unwrap_or(FILE);
    if entries
        .iter()
        .any(|e| e.path == dir.as_bytes() && e.mode == "120000")
    {
        return Ok(Some(Err(format!("{dir} is a symbolic link; not followed"))));
    }
    let Some(e) = entries.iter().find(|e| e.path == FILE.as_bytes()) else {
        return Ok(None);
    };
    match e.mode.as_str() {
        "100644" | "100755" => {}
        "120000" => {
            return Ok(Some(Err(format!(
                "{FILE} is a symbolic link; not followed"
            ))));
        }
        _ => return Ok(Some(Err(format!("{FILE} is not a regular file")))),
    }
    let size = e.size.unwrap_or(u64::MAX);
    if size > MAX_BYTES {
        return Ok(Some(Err(super::marketplace::too_large())));
    }
    let mut files = cat_files_in(repo, vec![(FILE.to_owned(), e.oid.clone(), size)], url)?;
    let bytes = files.remove(FILE).unwrap_or_default();
    Ok(Some(super::marketplace::Marketplace::parse(&bytes)))
}

/// The skill directories `plugin` declares, found in the tree: a path
/// names a skill directory (one holding a `SKILL.md`) or a directory of
/// them; without paths, the plugin directory's `skills/`. An error,
/// located in the marketplace file, for a path that holds neither, is a
/// symbolic link, or ends in a name that is not a skill name; for two
/// skills of one name, and for a skill inside another.
fn plugin_places(
    tree: &SkillDirs<'_>,
    plugin: &super::marketplace::Plugin,
    budget: &mut usize,
) -> std::result::Result<Places, String> {
    let shown = crate::text::escape(&plugin.name).into_owned();
    let mut gathered = PluginPlaces {
        places: Places {
            what: format!("plugin {shown}"),
            ..Places::default()
        },
        shown,
        budget,
    };
    match &plugin.skills {
        Some(paths) => {
            for p in paths {
                gathered.listed(tree, p)?;
            }
        }
        None => gathered.conventional(tree, &plugin.root)?,
    }
    no_skill_inside_another(&gathered.places, &gathered.shown)?;
    Ok(gathered.places)
}

/// The skill places of one plugin as they are gathered, each charged to
/// `budget`, which the places of all plugins read from one file share.
struct PluginPlaces<'b> {
    places: Places,
    /// The plugin's name, escaped.
    shown: String,
    budget: &'b mut usize,
}

impl PluginPlaces<'_> {
    /// Takes the skills of a path the plugin lists under `skills`: the
    /// skill directory it names, or each skill directory in the directory
    /// it names; refused for a symbolic link and for a path that holds
    /// neither.
    fn listed(
        &mut self,
        tree: &SkillDirs<'_>,
        p: &super::marketplace::SkillPath,
    ) -> std::result::Result<(), String> {
        let where_ = super::marketplace::at(p);
        let shown = &self.shown;
        let d = p.dir.as_bytes();
        if tree.links.contains(d) {
            return Err(format!(
                "{where_}: plugin '{shown}': skills: '{}' is a symbolic link; not followed",
                crate::text::escape(&p.written)
            ));
        }
        if tree.skill_dirs.contains(d) && !p.dir.is_empty() {
            return self.add(&p.dir, &where_);
        }
        let Some(names) = tree.below.get(d) else {
            let dir_shown = if p.dir.is_empty() {
                "the top of the repository".to_owned()
            } else {
                crate::text::escape(&p.dir).into_owned()
            };
            return Err(format!(
                "{where_}: plugin '{shown}': skills: '{}' ({dir_shown}) holds no SKILL.md, nor directories that do",
                crate::text::escape(&p.written),
            ));
        };
        for n in names {
            let sep = if p.dir.is_empty() { "" } else { "/" };
            self.add(
                &format!("{}{sep}{}", p.dir, String::from_utf8_lossy(n)),
                &where_,
            )?;
        }
        Ok(())
    }

    /// Takes the skills of a plugin that lists none: the skill
    /// directories in its directory's (`root`'s) `skills/`, which must
    /// hold some and be no symbolic link.
    fn conventional(
        &mut self,
        tree: &SkillDirs<'_>,
        root: &str,
    ) -> std::result::Result<(), String> {
        use super::marketplace::FILE;
        let d = if root.is_empty() {
            "skills".to_owned()
        } else {
            format!("{root}/skills")
        };
        match tree.below.get(d.as_bytes()) {
            Some(names) if !tree.links.contains(d.as_bytes()) => {
                for n in names {
                    self.add(&format!("{d}/{}", String::from_utf8_lossy(n)), FILE)?;
                }
                Ok(())
            }
            _ => Err(format!(
                "{FILE}: plugin '{}' lists no skills, and {} holds no skill directories",
                self.shown,
                crate::text::escape(&d)
            )),
        }
    }

    /// Adds the skill directory `dir`, declared at `where_`: refused past
    /// the budget, for a last name that is no skill name, and for a
    /// second skill of one name.
    fn add(&mut self, dir: &str, where_: &str) -> std::result::Result<(), String> {
        use super::marketplace::FILE;
        let shown = &self.shown;
        if *self.budget == 0 {
            return Err(format!(
                "{where_}: plugin '{shown}': the plugins of {FILE} name more than {MAX_TREE_ENTRIES} skill places in all, more than a tree may list"
            ));
        }
        *self.budget -= 1;
        let name = dir.rsplit('/').next().unwrap_or(dir);
        crate::layer::check_name(name).map_err(|m| {
            format!(
                "{where_}: plugin '{shown}': '{}' is no skill name: {m}",
                crate::text::escape(name)
            )
        })?;
        match self.places.dirs.get(name) {
            Some(other) if other.trim_end_matches('/') != dir => Err(format!(
                "{where_}: plugin '{shown}' declares two skills named '{}' ({} and {}); a source takes one skill of a name",
                crate::text::escape(name),
                crate::text::escape(other.trim_end_matches('/')),
                crate::text::escape(dir)
            )),
            _ => {
                self.places.dirs.insert(name.to_owned(), format!("{dir}/"));
                Ok(())
            }
        }
    }
}

/// Refuses a plugin (`shown`, escaped) whose skill lies inside another's
/// directory, where it would be read as its files. In sorted order, a
/// directory holds another exactly when it holds the one after it, so
/// those that hold one are found in one pass; then the first of them (by
/// name) and the first (by name) it holds are named.
fn no_skill_inside_another(places: &Places, shown: &str) -> std::result::Result<(), String> {
    let mut sorted: Vec<&str> = places.dirs.values().map(String::as_str).collect();
    sorted.sort_unstable();
    let holders: std::collections::HashSet<&str> = sorted
        .windows(2)
        .filter(|w| w[1] != w[0] && w[1].starts_with(w[0]))
        .map(|w| w[0])
        .collect();
    let dirs: Vec<&String> = places.dirs.values().collect();
    if let Some(a) = dirs.iter().find(|a| holders.contains(a.as_str()))
        && let Some(b) = dirs.iter().find(|b| *b != a && b.starts_with(a.as_str()))
    {
        return Err(format!(
            "{}: plugin '{shown}': {} lies inside {}, another skill's directory; a skill cannot hold another",
            super::marketplace::FILE,
            crate::text::escape(b.trim_end_matches('/')),
            crate::text::escape(a.trim_end_matches('/'))
        ));
    }
    Ok(())
}

/// Every skill directory of a tree, the skills below each directory, and
/// its symbolic links: built once per tree, then looked up for each
/// plugin its marketplace file declares.
struct SkillDirs<'a> {
    skill_dirs: std::collections::HashSet<&'a [u8]>,
    below: std::collections::HashMap<&'a [u8], Vec<&'a [u8]>>,
    links: std::collections::HashSet<&'a [u8]>,
}

impl<'a> SkillDirs<'a> {
    fn of(entries: &'a [TreeEntry]) -> SkillDirs<'a> {
        let mut tree = SkillDirs {
            skill_dirs: std::collections::HashSet::new(),
            below: std::collections::HashMap::new(),
            links: std::collections::HashSet::new(),
        };
        for e in entries {
            if e.mode == "120000" {
                tree.links.insert(&e.path);
            }
            if let Some(dir) = e.path.strip_suffix(b"/SKILL.md") {
                tree.skill_dirs.insert(dir);
                let (parent, name) = match dir.iter().rposition(|b| *b == b'/') {
                    Some(i) => (&dir[..i], &dir[i + 1..]),
                    None => (&b""[..], dir),
                };
                tree.below.entry(parent).or_default().push(name);
            }
        }
        tree
    }
}

/// The skills of the tree at `places`, as the module docs and [`fetch`]
/// say, read with one `cat-file --batch`.
fn select(
    repo: &Path,
    entries: &[TreeEntry],
    mut places: Places,
    want: &Want<'_>,
    commit: &str,
) -> Result<Fetched> {
    let url = want.url;
    let limits = FileLimits::default();
    let mut fetched = Fetched {
        skipped: std::mem::take(&mut places.skipped),
        ..Fetched::default()
    };
    narrow(&mut places, want.skills, commit).map_err(|m| fail("selecting skills", url, m))?;
    // Each skill's directory, to find the skill a file is in.
    let by_dir: HashMap<&[u8], &str> = places
        .dirs
        .iter()
        .map(|(name, dir)| (dir.as_bytes(), name.as_str()))
        .collect();
    // The files of each skill taken, checked before any is read.
    let mut wanted: Vec<(String, String, u64)> = Vec::new();
    let mut per_skill: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for e in entries {
        let Some((skill, rest)) = skill_of(&by_dir, &e.path) else {
            continue;
        };
        let bad = |m: String| {
            let shown = crate::text::escape(&String::from_utf8_lossy(&e.path)).into_owned();
            fail("reading the tree", url, format!("{shown}: {m}"))
        };
        let Some((rest, executable)) = file_in_skill(e, rest, &limits).map_err(bad)? else {
            continue;
        };
        let size = e.size.unwrap_or(u64::MAX);
        charge(&mut per_skill, skill, size, &limits).map_err(bad)?;
        let file = format!("{skill}/{rest}");
        // Every file taken is one the lock can name and read back.
        super::lock::check_file_name(&file)
            .map_err(|m| bad(format!("not a name a lock can hold: {m}")))?;
        if executable {
            fetched.executable.insert(file.clone());
        }
        wanted.push((file, e.oid.clone(), size));
    }
    fetched.files = cat_files_in(repo, wanted, url)?;
    Ok(fetched)
}

/// Keeps of `places` the skills `asked` names (all when `None`); refused
/// when one is not there, and when no skill is left.
fn narrow(
    places: &mut Places,
    asked: Option<&[String]>,
    commit: &str,
) -> std::result::Result<(), String> {
    if let Some(asked) = asked {
        if let Some(missing) = asked.iter().find(|s| !places.dirs.contains_key(*s)) {
            return Err(format!(
                "no skill '{}' at {commit} ({}); it has: {}",
                crate::text::escape(missing),
                places.what,
                crate::text::list(places.dirs.keys().map(String::as_str), false)
            ));
        }
        places.dirs.retain(|s, _| asked.contains(s));
    }
    if places.dirs.is_empty() {
        return Err(format!(
            "no skill (a directory with a SKILL.md) at {} of {commit}",
            places.what
        ));
    }
    Ok(())
}

/// The skill a tree path lies in (the first directory of the path that
/// `by_dir` holds) and the path inside that skill.
fn skill_of<'s, 'p>(
    by_dir: &HashMap<&[u8], &'s str>,
    path: &'p [u8],
) -> Option<(&'s str, &'p [u8])> {
    path.iter()
        .enumerate()
        .filter(|(_, b)| **b == b'/')
        .find_map(|(i, _)| Some((*by_dir.get(&path[..=i])?, &path[i + 1..])))
}

/// A tree entry's path `rest` inside its skill, checked as a layer's file
/// is, and whether it has an execute bit: `None` for a hidden entry, which
/// is no part of a skill; refused for a name that is not UTF-8 or holds a
/// control character or `\`, a path deeper than the cap, and anything but
/// a regular file.
fn file_in_skill<'p>(
    e: &TreeEntry,
    rest: &'p [u8],
    limits: &FileLimits,
) -> std::result::Result<Option<(&'p str, bool)>, String> {
    let Ok(rest) = std::str::from_utf8(rest) else {
        return Err("the name is not valid UTF-8".into());
    };
    // Hidden entries are not part of a skill, as in a layer.
    if rest.split('/').any(|c| c.starts_with('.')) {
        return Ok(None);
    }
    if rest
        .split('/')
        .any(|c| c.chars().any(char::is_control) || c.contains('\\'))
    {
        return Err("the name holds a control character or '\\'".into());
    }
    if rest.split('/').count() > limits.max_depth + 1 {
        return Err(format!(
            "deeper than {} directories below the skill",
            limits.max_depth
        ));
    }
    let executable = match e.mode.as_str() {
        "100644" => false,
        "100755" => true,
        "120000" => return Err("a symlink; sources may not hold symlinks in a skill".into()),
        "160000" => return Err("a submodule; sources may not hold submodules in a skill".into()),
        _ => return Err("not a regular file".into()),
    };
    Ok(Some((rest, executable)))
}

/// Counts a file of `size` bytes against the caps of `skill` in
/// `per_skill` (files, bytes); refused past either.
fn charge(
    per_skill: &mut BTreeMap<String, (usize, u64)>,
    skill: &str,
    size: u64,
    limits: &FileLimits,
) -> std::result::Result<(), String> {
    let (count, total) = per_skill.entry(skill.to_owned()).or_default();
    *count += 1;
    *total = total.saturating_add(size);
    if *count > limits.max_files {
        return Err(format!(
            "skill '{skill}' has more than {} files",
            limits.max_files
        ));
    }
    if *total > limits.max_total_bytes {
        return Err(format!(
            "skill '{skill}' has more than {} bytes of files",
            limits.max_total_bytes
        ));
    }
    Ok(())
}

/// Reads the blobs from `repo`, one `git cat-file --batch` for all of
/// them; oids are written from a thread while the contents are read.
fn cat_files_in(
    repo: &Path,
    wanted: Vec<(String, String, u64)>,
    url: &str,
) -> Result<BTreeMap<String, Vec<u8>>> {
    let mut cmd = git(repo);
    cmd.args(["cat-file", "--batch"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().map_err(|e| spawn_error(e, url))?;
    let mut stdin = child
        .stdin
        .take()
        .ok_or_else(|| fail("reading blobs", url, "no pipe"))?;
    let oids: Vec<String> = wanted.iter().map(|(_, o, _)| o.clone()).collect();
    let writer = std::thread::spawn(move || {
        let mut w = std::io::BufWriter::new(&mut stdin);
        for o in oids {
            if writeln!(w, "{o}").is_err() {
                break;
            }
        }
        let _ = w.flush();
    });
    let stdout = child
        .stdout
        .take()
        .ok_or_else(|| fail("reading blobs", url, "no pipe"))?;
    let mut r = std::io::BufReader::new(stdout);
    let mut files = BTreeMap::new();
    let mut result = Ok(());
    for (file, oid, size) in wanted {
        let mut header = String::new();
        if r.by_ref().take(200).read_line(&mut header).is_err() {
            result = Err(fail("reading blobs", url, "git stopped answering"));
            break;
        }
        let mut f = header.split_whitespace();
        let (Some(got), Some("blob"), Some(n)) = (
            f.next(),
            f.next(),
            f.next().and_then(|n| n.parse::<u64>().ok()),
        ) else {
            result = Err(fail(
                "reading blobs",
                url,
                format!("{}: not a blob", crate::text::escape(&file)),
            ));
            break;
        };
        if got != oid || n != size {
            result = Err(fail(
                "reading blobs",
                url,
                format!(
                    "{}: git answered for another object",
                    crate::text::escape(&file)
                ),
            ));
            break;
        }
        let mut bytes = Vec::with_capacity(n as usize);
        let mut newline = [0u8; 1];
        if r.by_ref().take(n).read_to_end(&mut bytes).is_err()
            || bytes.len() as u64 != n
            || r.read_exact(&mut newline).is_err()
        {
            result = Err(fail("reading blobs", url, "git stopped answering"));
            break;
        }
        files.insert(file, bytes);
    }
    drop(r);
    let _ = writer.join();
    let _ = child.kill();
    let _ = child.wait();
    result.map(|()| files)
}
