//! What the lock needs to know of a source's history, beyond the one
//! commit it fetches: that a locked commit belongs to the ref its source
//! names, which way a new commit moves the lock, and how far the default
//! branch has moved past a pinned commit.
//!
//! A lock is committed, so a pull request can change it alone: point a
//! source at a commit of a deleted branch, or of a fork that the host
//! serves under the same URL, with matching digests for that commit's
//! files. As Nix's `fetchGit` refuses a revision its ref does not hold
//! ("Cannot find Git revision … in ref"), a commit locked for a branch, a
//! tag or the default branch must be in that ref's history, and a commit
//! pinned by its id must be in the history of a branch or tag of the
//! repository ([`check_in_ref`]).
//!
//! The history is fetched as commits only ([`git::History`]:
//! `--filter=tree:0`), at most [`git::HISTORY_DEPTH`] commits of each
//! ref. A locked commit older than that is not found, and refused as
//! such: the message says how far the search went.

use serde::Serialize;

use super::git::{self, HISTORY_DEPTH, History};
use crate::error::{Error, ErrorKind, Result};

/// Which way a new commit moves the lock from the old one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Relation {
    /// The new commit descends from the old: the usual update.
    Forward,
    /// The new commit is an ancestor of the old: the lock moves back in
    /// history (a pin to an older commit, a ref edited by hand).
    Backward,
    /// Neither descends from the other: upstream's history was rewritten
    /// (a force-push), or the ref now names another line of history; or
    /// the new commit does not descend from the old one, which upstream
    /// no longer has at all.
    Diverged,
    /// Not known within the history fetched ([`HISTORY_DEPTH`] commits of
    /// each), or the old commit cannot be fetched any more.
    Unknown,
}

/// How the lock moves for one source.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Movement {
    /// Forward, backward, diverged or unknown.
    pub relation: Relation,
    /// How many commits it moves, forward or backward.
    pub commits: Option<u64>,
}

/// A source pinned to a commit, and where the default branch is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Pin {
    /// The commit the repository's default branch (`HEAD`) names now.
    pub default_branch: String,
    /// How many commits it is ahead of the pinned one; `None` when the
    /// pinned commit is not in its last [`HISTORY_DEPTH`] commits.
    pub ahead: Option<u64>,
}

/// Is `git_ref` (as a sources file names it) a commit id rather than a
/// ref, given the commit it resolved to? A full id is; an abbreviated one
/// is when the commit starts with it (a branch named `cafe` is a branch).
pub fn is_pin(git_ref: Option<&str>, commit: &str) -> bool {
    git_ref.is_some_and(|r| {
        git::is_commit_id(r) && r == commit || git::is_abbreviated(r) && commit.starts_with(r)
    })
}

/// How `new` (the commit `rev` names now; `None`: `HEAD`) moves the lock
/// from `old`, in the history of `url`. Never an error: what cannot be
/// found out is [`Relation::Unknown`].
pub fn movement(url: &str, rev: Option<&str>, old: &str, new: &str) -> Movement {
    let unknown = Movement {
        relation: Relation::Unknown,
        commits: None,
    };
    if old == new {
        return Movement {
            relation: Relation::Forward,
            commits: Some(0),
        };
    }
    let Ok(mut h) = History::open(url) else {
        return unknown;
    };
    let by = if is_pin(rev, new) {
        new
    } else {
        rev.unwrap_or("HEAD")
    };
    let Ok(Some(tip)) = h.fetch_rev(by) else {
        return unknown;
    };
    if let Ok(Some(n)) = h.ahead(old, new) {
        return Movement {
            relation: Relation::Forward,
            commits: Some(n),
        };
    }
    let Ok(Some(old_tip)) = h.fetch_rev(old) else {
        // Upstream no longer serves the locked commit, and the new one's
        // whole history does not hold it: the history it was in was
        // rewritten (a force-push, a tag moved onto an amended commit).
        return match h.cut(&tip) {
            Ok(false) => Movement {
                relation: Relation::Diverged,
                commits: None,
            },
            _ => unknown,
        };
    };
    if let Ok(Some(n)) = h.ahead(new, &old_tip) {
        return Movement {
            relation: Relation::Backward,
            commits: Some(n),
        };
    }
    match (h.cut(&tip), h.cut(&old_tip)) {
        (Ok(false), Ok(false)) => Movement {
            relation: Relation::Diverged,
            commits: None,
        },
        _ => unknown,
    }
}

/// Where the default branch of `url` is, and how far past `pinned`.
pub fn pin(url: &str, pinned: &str) -> Result<Pin> {
    let mut h = History::open(url)?;
    let tip = h.fetch_rev("HEAD")?.ok_or_else(|| Error::Refused {
        kind: ErrorKind::Fetch,
        path: None,
        message: format!(
            "source {}: the repository has no HEAD",
            super::location::Shown(url)
        ),
    })?;
    let ahead = h.ahead(pinned, &tip)?;
    Ok(Pin {
        default_branch: tip,
        ahead,
    })
}

/// Refuses `commit` unless the ref `git_ref` (as the sources file names
/// it; `None`: the default branch) holds it: in that ref's history for a
/// branch, a tag or `HEAD`; for a commit id, the commit itself, in the
/// history of some branch or tag. `what` names where the commit comes
/// from in the message (`the lock`, `--ref`).
pub fn check_in_ref(url: &str, git_ref: Option<&str>, commit: &str, what: &str) -> Result<()> {
    let shown = super::location::Shown(url);
    let refuse = |kind: ErrorKind, m: String| {
        Err(Error::Refused {
            kind,
            path: None,
            message: format!("source {shown}: {m}"),
        })
    };
    let mut h = History::open(url)?;
    if let Some(r) = git_ref
        && (git::is_commit_id(r) || git::is_abbreviated(r) && commit.starts_with(r))
    {
        if !commit.starts_with(r) {
            return refuse(
                ErrorKind::Stale,
                format!(
                    "{what} names commit {commit}, and sources.toml pins ref = \"{}\"; run `bernstein skills update --yes` to lock the pinned commit",
                    crate::text::escape(r)
                ),
            );
        }
        h.fetch_all()?;
        if h.holds(None, commit)? {
            return Ok(());
        }
        return refuse(
            ErrorKind::Unsafe,
            format!(
                "{what} names commit {commit}, which no branch or tag of the repository holds (the last {HISTORY_DEPTH} commits of each were searched): a commit of a deleted branch, or of another repository the host serves under this URL, is refused; pin a commit a branch or tag holds"
            ),
        );
    }
    let name = git_ref.unwrap_or("HEAD");
    let shown_ref = if git_ref.is_some() {
        format!("ref {}", crate::text::escape(name))
    } else {
        "the default branch (HEAD)".to_owned()
    };
    let Some(tip) = h.fetch_rev(name)? else {
        return refuse(
            ErrorKind::Fetch,
            format!("the repository has no {shown_ref}"),
        );
    };
    if h.holds(Some(&tip), commit)? {
        return Ok(());
    }
    let depth = if h.cut(&tip)? {
        format!(" (its last {HISTORY_DEPTH} commits were searched)")
    } else {
        String::new()
    };
    refuse(
        ErrorKind::Unsafe,
        format!(
            "{what} names commit {commit}, which is not in the history of {shown_ref}{depth}: a lock may only name a commit its ref holds (was sources.lock changed by hand?); nothing of it is used; run `bernstein skills update --yes` to lock the commit the ref names"
        ),
    )
}
