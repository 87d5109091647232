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
        return;
    }
    let from = r.from.as_deref().map(short).unwrap_or("(not locked)");
    let _ = writeln!(
        out,
        "{}: {} -> {}",
        text::escape(&r.source),
        from,
        short(&r.to)
    );
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
