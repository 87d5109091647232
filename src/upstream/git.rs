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

use std::collections::{BTreeMap, BTreeSet};
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
    /// Only these skills.
    pub skills: Option<&'a [String]>,
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
/// directly under `want.path` that hold a `SKILL.md` (only those named in
/// `want.skills`, if given), every file under each. An unknown ref, an
/// unreachable repository, a source without skills, a skill asked for and
/// missing, a symlink or a submodule inside a skill, a name that is not
/// printable UTF-8, and a skill past the layers' caps are errors; nothing
/// is written anywhere but a temporary repository, removed after.
pub fn fetch(want: &Want<'_>) -> Result<Fetched> {
    let url = want.url;
    let tmp = new_repository(url)?;
    let repo = tmp.path();
    let (commit, kind) = fetch_rev(repo, url, want.rev)?;
    let prefix = want
        .path
        .map(|p| format!("{}/", p.trim_end_matches('/')))
        .unwrap_or_default();
    let entries = list_tree(repo, &commit, &prefix, url)?;
    let mut fetched = select(repo, entries, want, &prefix, &commit)?;
    fetched.commit = commit;
    fetched.kind = Some(kind);
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
    /// The path below the prefix, raw.
    path: Vec<u8>,
}

/// Every entry of the commit's tree below `prefix`.
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
        let Some(path) = rec[tab + 1..].strip_prefix(prefix.as_bytes()) else {
            continue;
        };
        entries.push(TreeEntry {
            mode: mode.to_owned(),
            oid: oid.to_owned(),
            size: size.parse().ok(),
            path: path.to_vec(),
        });
    }
    Ok(entries)
}

/// The skills of the tree, as the module docs and [`fetch`] say, read
/// with one `cat-file --batch`.
fn select(
    repo: &Path,
    entries: Vec<TreeEntry>,
    want: &Want<'_>,
    prefix: &str,
    commit: &str,
) -> Result<Fetched> {
    let url = want.url;
    let limits = FileLimits::default();
    let mut fetched = Fetched::default();
    // Skill directories: those directly below the prefix with a SKILL.md.
    let mut skills: BTreeSet<String> = BTreeSet::new();
    for e in &entries {
        if let Some(dir) = e.path.strip_suffix(b"/SKILL.md")
            && !dir.contains(&b'/')
        {
            let name = String::from_utf8_lossy(dir).into_owned();
            if std::str::from_utf8(dir).is_ok() && crate::layer::check_name(&name).is_ok() {
                skills.insert(name);
            } else {
                fetched
                    .skipped
                    .push(crate::text::escape(&name).into_owned());
            }
        }
    }
    if let Some(asked) = want.skills {
        if let Some(missing) = asked.iter().find(|s| !skills.contains(*s)) {
            return Err(fail(
                "selecting skills",
                url,
                format!(
                    "no skill '{}' at {commit} ({}); it has: {}",
                    crate::text::escape(missing),
                    if prefix.is_empty() {
                        "the top".to_owned()
                    } else {
                        format!("path {}", crate::text::escape(prefix))
                    },
                    crate::text::list(skills.iter().map(String::as_str), false)
                ),
            ));
        }
        skills.retain(|s| asked.contains(s));
    }
    if skills.is_empty() {
        return Err(fail(
            "selecting skills",
            url,
            format!(
                "no skill (a directory with a SKILL.md) at {} of {commit}",
                if prefix.is_empty() {
                    "the top".to_owned()
                } else {
                    format!("path {}", crate::text::escape(prefix))
                }
            ),
        ));
    }
    // The files of each skill taken, checked before any is read.
    let mut wanted: Vec<(String, String, u64)> = Vec::new();
    let mut per_skill: BTreeMap<String, (usize, u64)> = BTreeMap::new();
    for e in &entries {
        let lossy = String::from_utf8_lossy(&e.path);
        let Some((skill, rest)) = lossy.split_once('/') else {
            continue;
        };
        if !skills.contains(skill) {
            continue;
        }
        let shown = format!("{}{}", prefix, crate::text::escape(&lossy));
        let bad = |m: &str| fail("reading the tree", url, format!("{shown}: {m}"));
        if std::str::from_utf8(&e.path).is_err() {
            return Err(bad("the name is not valid UTF-8"));
        }
        // Hidden entries are not part of a skill, as in a layer.
        if rest.split('/').any(|c| c.starts_with('.')) {
            continue;
        }
        if rest
            .split('/')
            .any(|c| c.chars().any(char::is_control) || c.contains('\\'))
        {
            return Err(bad("the name holds a control character or '\\'"));
        }
        if rest.split('/').count() > limits.max_depth + 1 {
            return Err(bad(&format!(
                "deeper than {} directories below the skill",
                limits.max_depth
            )));
        }
        let executable = match e.mode.as_str() {
            "100644" => false,
            "100755" => true,
            "120000" => return Err(bad("a symlink; sources may not hold symlinks in a skill")),
            "160000" => {
                return Err(bad(
                    "a submodule; sources may not hold submodules in a skill",
                ));
            }
            _ => return Err(bad("not a regular file")),
        };
        let size = e.size.unwrap_or(u64::MAX);
        let (count, total) = per_skill.entry(skill.to_owned()).or_default();
        *count += 1;
        *total = total.saturating_add(size);
        if *count > limits.max_files {
            return Err(bad(&format!(
                "skill '{skill}' has more than {} files",
                limits.max_files
            )));
        }
        if *total > limits.max_total_bytes {
            return Err(bad(&format!(
                "skill '{skill}' has more than {} bytes of files",
                limits.max_total_bytes
            )));
        }
        let file = format!("{skill}/{rest}");
        // Every file taken is one the lock can name and read back.
        super::lock::check_file_name(&file)
            .map_err(|m| bad(&format!("not a name a lock can hold: {m}")))?;
        if executable {
            fetched.executable.insert(file.clone());
        }
        wanted.push((file, e.oid.clone(), size));
    }
    fetched.files = cat_files_in(repo, wanted, url)?;
    Ok(fetched)
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
