//! The update report for people, rendered from the same
//! [`UpdateReport`](super::report::UpdateReport) that `update --json`
//! serialises: every front end (the command line, the Python module)
//! prints these, and none renders its own.
//!
//! Every name and heading in a report is upstream's or a layer's, so
//! attacker-written: the text report escapes each one
//! ([`crate::text::escape`]).

use std::fmt::Write;

use super::report::{Change, Impact, OverrideImpact, SourceReport, UpdateReport};
use super::review::Finding;
use crate::text;

/// The report as the terminal shows it. `accept` is the command that
/// accepts the update (`bernstein skills update --yes`), suggested when
/// upstream moved and nothing was written; `None` (a `--check`) says only
/// that upstream has moved.
pub fn text(report: &UpdateReport, accept: Option<&str>) -> String {
    let mut out = String::new();
    for r in &report.sources {
        source_text(&mut out, r);
    }
    let findings: Vec<&Finding> = report.findings().collect();
    if !findings.is_empty() {
        let _ = writeln!(out, "{} thing(s) a reviewer must see:", findings.len());
        out.push_str(&findings_text(findings, "  "));
    }
    for d in &report.dropped {
        let _ = writeln!(
            out,
            "{}: no longer in sources.toml; dropped from the lock",
            text::escape(d)
        );
    }
    if report.refused {
        out.push_str("refused under --strict: review the content above; nothing written\n");
    } else if report.written && report.sources.iter().any(|r| r.sets_ref.is_some()) {
        let _ = writeln!(
            out,
            "wrote {} and {}",
            text::path(&report.lock.with_file_name(super::SOURCES_FILE)),
            text::path(&report.lock)
        );
    } else if report.written {
        let _ = writeln!(out, "wrote {}", text::path(&report.lock));
    } else if report.moved {
        match accept {
            Some(cmd) => {
                let _ = writeln!(out, "nothing written; run `{cmd}` to accept this update");
            }
            None => out.push_str("upstream has moved; nothing written\n"),
        }
    }
    out
}

/// One source's part of [`text`].
fn source_text(out: &mut String, r: &SourceReport) {
    let list = |v: &[String]| text::list(v.iter().map(String::as_str), false);
    if !r.moved {
        let _ = writeln!(
            out,
            "{}: up to date at {}",
            text::escape(&r.source),
            short(&r.to)
        );
        lock_text(out, r);
        return;
    }
    let from = r.from.as_deref().map(short).unwrap_or("(not locked)");
    if r.from.as_deref() == Some(r.to.as_str()) {
        let _ = writeln!(out, "{}: at {}", text::escape(&r.source), short(&r.to));
    } else {
        let _ = writeln!(
            out,
            "{}: {} -> {}",
            text::escape(&r.source),
            from,
            short(&r.to)
        );
    }
    lock_text(out, r);
    if !r.overrides.is_empty() {
        out.push_str("  overrides affected:\n");
        for o in &r.overrides {
            let _ = writeln!(
                out,
                "    {} {} ({}): {}",
                o.layer.label(),
                text::escape(&o.skill),
                o.file,
                impact_text(o)
            );
        }
    }
    for s in &r.skills {
        let _ = writeln!(out, "  {} {}", s.change.name(), text::escape(&s.skill));
        let mut line = |label: &str, v: &[String]| {
            if !v.is_empty() {
                let _ = writeln!(out, "    {label}: {}", list(v));
            }
        };
        line("fields changed", &s.fields);
        line("sections added", &s.sections_added);
        line("sections removed", &s.sections_removed);
        let renamed: Vec<String> = s
            .sections_renamed
            .iter()
            .map(|[a, b]| format!("{a} -> {b}"))
            .collect();
        line("sections renamed", &renamed);
        line("sections changed", &s.sections_changed);
        if s.change != Change::Added {
            line("files added", &s.files_added);
        }
        line("files removed", &s.files_removed);
        line("files changed", &s.files_changed);
        line("made executable", &s.made_executable);
        line("no longer executable", &s.no_longer_executable);
        for t in &s.targets {
            let _ = writeln!(out, "    the next export refuses it: {}", t.message);
        }
    }
}

/// What a source's report says of its lock beyond the files: sources.toml
/// edited since the lock, the way the lock moves when that is not simply
/// forward, a moved tag, a pin and the default branch.
fn lock_text(out: &mut String, r: &SourceReport) {
    use super::history::Relation;
    let (from, to) = (r.from.as_deref().map(short).unwrap_or(""), short(&r.to));
    if let Some(r) = &r.sets_ref {
        let _ = writeln!(
            out,
            "  ref = \"{}\" in sources.toml: the next update keeps to it",
            text::escape(r)
        );
    }
    if !r.out_of_step.is_empty() {
        let _ = writeln!(
            out,
            "  sources.toml changed its {} since the lock was written: the lock is written again to match",
            r.out_of_step.join(", ")
        );
    }
    if let Some(m) = r.history {
        match (m.relation, m.commits) {
            (Relation::Backward, n) => {
                let _ = writeln!(
                    out,
                    "  back {} commit(s): {to} is an ancestor of {from}; the lock moves backwards in history",
                    n.map_or("some".to_owned(), |n| n.to_string())
                );
            }
            (Relation::Diverged, _) => {
                let _ = writeln!(
                    out,
                    "  {to} does not descend from {from}: upstream's history was rewritten"
                );
            }
            (Relation::Unknown, _) => {
                let _ = writeln!(
                    out,
                    "  whether {to} descends from {from} is not known (not within the last {} commits of each)",
                    super::git::HISTORY_DEPTH
                );
            }
            (Relation::Forward, _) => {}
        }
    }
    if let Some(tag) = &r.tag_moved {
        let _ = writeln!(
            out,
            "  tag {} was moved upstream: it named {from}, it now names {to}; git refuses to clobber a tag, so this is a rewrite to review (accepted only with --accept-moved-tag)",
            text::escape(tag)
        );
    }
    if let Some(p) = &r.pin {
        let branch = match p.ahead {
            Some(0) => format!(
                "the default branch is at it too ({})",
                short(&p.default_branch)
            ),
            Some(n) => format!(
                "the default branch has moved {n} commit(s) past it, to {}",
                short(&p.default_branch)
            ),
            None => format!(
                "the default branch (at {}) does not hold it in its last {} commits",
                short(&p.default_branch),
                super::git::HISTORY_DEPTH
            ),
        };
        let _ = writeln!(out, "  pinned to {to} by its ref in sources.toml; {branch}");
    }
}

/// What an override now sits on, in words.
fn impact_text(o: &OverrideImpact) -> String {
    let what = text::escape(&o.what);
    match o.kind {
        Impact::StaleValue => {
            format!("sets '{what}', whose upstream value changed: check it is still wanted")
        }
        Impact::HeadingGone => {
            format!("a section directive names '{what}', a heading upstream no longer has")
        }
        Impact::ReplacedFileChanged => format!("replaces {what}, which changed upstream"),
        Impact::SkillRemoved => "overrides a skill upstream removed".to_owned(),
        Impact::ReplacedSectionChanged => format!(
            "replaces section '{what}', which changed upstream: its new text is hidden by this layer's"
        ),
        Impact::DeletedSectionChanged => {
            format!("deletes section '{what}', which changed upstream: check it is still unwanted")
        }
        Impact::ReplacementNowAdded => format!(
            "its section '{what}' replaced upstream's, which upstream removed: it will be added at the end of the skill; mark it <!-- $patch: add --> if it is meant as an addition, or remove it"
        ),
        Impact::AdditionNowReplaces => format!(
            "its section '{what}', marked $patch: add, has a heading upstream now has too: it will replace upstream's new section; write $patch: replace if that is meant, or rename it"
        ),
    }
}

/// The first twelve digits of a commit.
pub fn short(commit: &str) -> &str {
    &commit[..commit.len().min(12)]
}

/// Findings, one per line: `INDENT SKILL/PATH:LINE: KIND: DETAIL`.
pub fn findings_text<'a>(findings: impl IntoIterator<Item = &'a Finding>, indent: &str) -> String {
    let mut out = String::new();
    for f in findings {
        let _ = writeln!(
            out,
            "{indent}{}{}: {}: {}",
            text::escape(&f.file),
            f.line.map(|l| format!(":{l}")).unwrap_or_default(),
            f.kind.name(),
            f.detail
        );
    }
    out
}
