//! The update report for people, rendered from the same
//! [`super::report::UpdateReport`] that `update --json`
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
    let v = Voice::Text;
    if !r.moved {
        let _ = writeln!(
            out,
            "{}: up to date at {}",
            text::escape(&r.source),
            short(&r.to)
        );
        for note in lock_notes(r, v) {
            let _ = writeln!(out, "  {note}");
        }
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
    for note in lock_notes(r, v) {
        let _ = writeln!(out, "  {note}");
    }
    if !r.overrides.is_empty() {
        out.push_str("  overrides affected:\n");
        for o in &r.overrides {
            let _ = writeln!(
                out,
                "    {} {} ({}): {}",
                o.layer.label(),
                text::escape(&o.skill),
                o.file,
                impact_words(o, v)
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

/// How a report quotes what is not its own words: the terminal's text
/// escapes it ([`text::escape`]); Markdown puts it in a code span
/// ([`code`]), where nothing of it is markup, HTML, a link or a mention.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Voice {
    Text,
    Markdown,
}

impl Voice {
    /// A name in a sentence (a field, a section): `'NAME'` in text.
    fn quoted(self, raw: &str) -> String {
        match self {
            Voice::Text => format!("'{}'", text::escape(raw)),
            Voice::Markdown => code(&text::excerpt(raw, VALUE_CHARS)),
        }
    }

    /// A name that reads without quotes (a file, a tag, a skill).
    fn bare(self, raw: &str) -> String {
        match self {
            Voice::Text => text::escape(raw).into_owned(),
            Voice::Markdown => code(&text::excerpt(raw, VALUE_CHARS)),
        }
    }

    /// Text escaped already, or words of the tool's own that are
    /// syntax (`<!-- $patch: add -->`, a flag): as is in text.
    fn literal(self, escaped: &str) -> String {
        match self {
            Voice::Text => escaped.to_owned(),
            Voice::Markdown => code(&text::sanitized_excerpt(escaped, MESSAGE_CHARS)),
        }
    }

    /// A commit, by its first twelve digits.
    fn commit(self, commit: &str) -> String {
        match self {
            Voice::Text => short(commit).to_owned(),
            Voice::Markdown => code(&text::escape(short(commit))),
        }
    }
}

/// What a source's report says of its lock beyond the files, one note a
/// line: sources.toml edited since the lock, the way the lock moves when
/// that is not simply forward, a moved tag, a pin and the default branch.
fn lock_notes(r: &SourceReport, v: Voice) -> Vec<String> {
    use super::history::Relation;
    let mut out = Vec::new();
    let from = r.from.as_deref().map(|c| v.commit(c)).unwrap_or_default();
    let to = v.commit(&r.to);
    if let Some(git_ref) = &r.sets_ref {
        out.push(format!(
            "{} in {}: the next update keeps to it",
            v.literal(&format!("ref = \"{}\"", text::escape(git_ref))),
            v.literal("sources.toml")
        ));
    }
    if !r.out_of_step.is_empty() {
        out.push(format!(
            "{} changed its {} since the lock was written: the lock is written again to match",
            v.literal("sources.toml"),
            r.out_of_step.join(", ")
        ));
    }
    if let Some(m) = r.history {
        match (m.relation, m.commits) {
            (Relation::Backward, n) => out.push(format!(
                "back {} commit(s): {to} is an ancestor of {from}; the lock moves backwards in history",
                n.map_or("some".to_owned(), |n| n.to_string())
            )),
            (Relation::Diverged, _) => out.push(format!(
                "{to} does not descend from {from}: upstream's history was rewritten"
            )),
            (Relation::Unknown, _) => out.push(format!(
                "whether {to} descends from {from} is not known (not within the last {} commits of each)",
                super::git::HISTORY_DEPTH
            )),
            (Relation::Forward, _) => {}
        }
    }
    if let Some(tag) = &r.tag_moved {
        out.push(format!(
            "tag {} was moved upstream: it named {from}, it now names {to}; git refuses to clobber a tag, so this is a rewrite to review (accepted only with {})",
            v.bare(tag),
            v.literal("--accept-moved-tag")
        ));
    }
    if let Some(p) = &r.pin {
        let branch = match p.ahead {
            Some(0) => format!(
                "the default branch is at it too ({})",
                v.commit(&p.default_branch)
            ),
            Some(n) => format!(
                "the default branch has moved {n} commit(s) past it, to {}",
                v.commit(&p.default_branch)
            ),
            None => format!(
                "the default branch (at {}) does not hold it in its last {} commits",
                v.commit(&p.default_branch),
                super::git::HISTORY_DEPTH
            ),
        };
        out.push(format!(
            "pinned to {to} by its ref in {}; {branch}",
            v.literal("sources.toml")
        ));
    }
    out
}

/// What an override now sits on, in words.
fn impact_words(o: &OverrideImpact, v: Voice) -> String {
    match o.kind {
        Impact::StaleValue => format!(
            "sets {}, whose upstream value changed: check it is still wanted",
            v.quoted(&o.what)
        ),
        Impact::HeadingGone => format!(
            "a section directive names {}, a heading upstream no longer has",
            v.quoted(&o.what)
        ),
        Impact::ReplacedFileChanged => {
            format!("replaces {}, which changed upstream", v.bare(&o.what))
        }
        Impact::SkillRemoved => "overrides a skill upstream removed".to_owned(),
        Impact::ReplacedSectionChanged => format!(
            "replaces section {}, which changed upstream: its new text is hidden by this layer's",
            v.quoted(&o.what)
        ),
        Impact::DeletedSectionChanged => format!(
            "deletes section {}, which changed upstream: check it is still unwanted",
            v.quoted(&o.what)
        ),
        Impact::ReplacementNowAdded => format!(
            "its section {} replaced upstream's, which upstream removed: it will be added at the end of the skill; mark it {} if it is meant as an addition, or remove it",
            v.quoted(&o.what),
            v.literal("<!-- $patch: add -->")
        ),
        Impact::AdditionNowReplaces => format!(
            "its section {}, marked {}, has a heading upstream now has too: it will replace upstream's new section; write {} if that is meant, or rename it",
            v.quoted(&o.what),
            v.literal("$patch: add"),
            v.literal("$patch: replace")
        ),
    }
}

/// The most bytes of a Markdown report. GitHub takes a pull request's
/// body up to 65,536 characters (and so does GitLab's merge request
/// description, up to a million); a longer report is cut at a line,
/// saying so and where the whole report is.
pub const MARKDOWN_MAX: usize = 60_000;

/// The most characters of a name or heading a Markdown report quotes.
const VALUE_CHARS: usize = 200;

/// The most characters of a message (a target's refusal, a finding's
/// detail) a Markdown report quotes.
const MESSAGE_CHARS: usize = 400;

/// The most items of one list (the files added to a skill, its fields
/// changed) a Markdown report names before "and N more".
const MARKDOWN_ITEMS: usize = 20;

/// The report as Markdown, for the body of a pull request (GitHub
/// Flavored Markdown, which also renders HTML): the sources and how each
/// lock moves, the overrides affected first, then what the project's
/// targets refuse, what a reviewer must see, and the changes per skill.
/// At most [`MARKDOWN_MAX`] bytes, the same for the same report.
///
/// Every name, heading, path and message in it is upstream's or a
/// layer's: each is escaped as the text report escapes it and put in a
/// code span, where no character is markup, HTML, a link, a
/// mention or a table's pipe; the tool's own words are the only Markdown.
/// `accept` is as for [`text()`].
pub fn markdown(report: &UpdateReport, accept: Option<&str>) -> String {
    let mut out = String::new();
    let moved: Vec<&SourceReport> = report.sources.iter().filter(|r| r.moved).collect();
    let findings: Vec<&Finding> = report.findings().collect();
    out.push_str("## Upstream skills update\n\n");
    let status = markdown_status(report, moved.len(), findings.len(), accept);
    let _ = writeln!(out, "{status}\n");
    markdown_sources(&mut out, report);
    if !report.moved {
        return bounded(out, MARKDOWN_MAX);
    }
    markdown_overrides(&mut out, &moved);
    markdown_refusals(&mut out, &moved);
    markdown_findings(&mut out, &findings);
    markdown_changes(&mut out, &moved, report.sources.len() > 1);
    bounded(out, MARKDOWN_MAX)
}

/// The Markdown report's opening line: refused, written, to accept
/// (`accept` says how), or nothing to do; `moved` of the sources moved,
/// and `findings` things a reviewer must see.
fn markdown_status(
    report: &UpdateReport,
    moved: usize,
    findings: usize,
    accept: Option<&str>,
) -> String {
    let v = Voice::Markdown;
    let lock = v.literal("sources.lock");
    if report.refused {
        format!(
            "**Refused under {}**: the new content has {findings} thing(s) a reviewer must see (below); nothing was written.",
            v.literal("--strict"),
        )
    } else if report.written {
        let also = if report.sources.iter().any(|r| r.sets_ref.is_some()) {
            format!(" and {}", v.literal("sources.toml"))
        } else {
            String::new()
        };
        format!(
            "{moved} of {} source(s) moved upstream; this update wrote {lock}{also}.",
            report.sources.len()
        )
    } else if report.moved {
        let how = match accept {
            Some(cmd) => format!("; {} accepts it", v.literal(cmd)),
            None => String::new(),
        };
        format!(
            "{moved} of {} source(s) moved upstream; nothing is written yet{how}.",
            report.sources.len()
        )
    } else {
        format!("Every source is up to date; {lock} stays as it is.")
    }
}

/// The Markdown report's sources, and how each lock moves; the sources
/// dropped from the lock.
fn markdown_sources(out: &mut String, report: &UpdateReport) {
    let v = Voice::Markdown;
    out.push_str("### Sources\n\n");
    for r in &report.sources {
        let name = v.bare(&r.source);
        let to = v.commit(&r.to);
        let line = match r.from.as_deref() {
            _ if !r.moved => format!("{name}: up to date at {to}"),
            Some(from) if from == r.to => format!("{name}: at {to}"),
            Some(from) => {
                let forward = r.history.and_then(|m| {
                    (m.relation == super::history::Relation::Forward)
                        .then_some(m.commits)
                        .flatten()
                });
                let how = forward
                    .map(|n| format!(", {n} commit(s) forward"))
                    .unwrap_or_default();
                format!("{name}: {} → {to}{how}", v.commit(from))
            }
            None => format!("{name}: not locked yet → {to}"),
        };
        let _ = writeln!(out, "- {line}");
        for note in lock_notes(r, v) {
            let _ = writeln!(out, "  - {note}");
        }
    }
    for d in &report.dropped {
        let _ = writeln!(
            out,
            "- {}: no longer in {}; dropped from the lock",
            v.bare(d),
            v.literal("sources.toml")
        );
    }
    out.push('\n');
}

/// The team's and the person's customisations the `moved` sources touch:
/// what a team must look at before it accepts.
fn markdown_overrides(out: &mut String, moved: &[&SourceReport]) {
    let v = Voice::Markdown;
    let overrides: Vec<&OverrideImpact> = moved.iter().flat_map(|r| &r.overrides).collect();
    let _ = writeln!(out, "### Overrides affected ({})\n", overrides.len());
    if overrides.is_empty() {
        out.push_str("No team or user override is touched.\n\n");
    }
    for o in &overrides {
        let _ = writeln!(
            out,
            "- {} {} ({}): {}",
            o.layer.label(),
            v.bare(&o.skill),
            v.literal(&o.file),
            impact_words(o, v)
        );
    }
    if !overrides.is_empty() {
        out.push('\n');
    }
}

/// What the next export of the skills of the `moved` sources would
/// refuse, per target.
fn markdown_refusals(out: &mut String, moved: &[&SourceReport]) {
    let v = Voice::Markdown;
    let refusals: Vec<(&str, &super::report::TargetRefusal)> = moved
        .iter()
        .flat_map(|r| &r.skills)
        .flat_map(|s| s.targets.iter().map(move |t| (s.skill.as_str(), t)))
        .collect();
    if refusals.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "### The project's targets refuse ({})\n\nAs the skills will be merged; the next export to that target fails:\n",
        refusals.len()
    );
    // The message names the target.
    for (skill, t) in refusals {
        let _ = writeln!(out, "- {}: {}", v.bare(skill), v.literal(&t.message));
    }
    out.push('\n');
}

/// What a reviewer must see in the new content (`findings`).
fn markdown_findings(out: &mut String, findings: &[&Finding]) {
    let v = Voice::Markdown;
    if findings.is_empty() {
        return;
    }
    let _ = writeln!(out, "### A reviewer must see ({})\n", findings.len());
    for f in findings {
        let line = f.line.map(|l| format!(" line {l}")).unwrap_or_default();
        // A script's detail is the tool's words; the others quote the
        // file.
        let detail = if f.kind == super::review::Rule::Script {
            f.detail.clone()
        } else {
            v.literal(&f.detail)
        };
        let _ = writeln!(
            out,
            "- {}{line}: {}: {detail}",
            v.bare(&f.file),
            f.kind.name()
        );
    }
    out.push('\n');
}

/// What changed upstream in the `moved` sources, per skill (under each
/// source's name, when the report has `several`).
fn markdown_changes(out: &mut String, moved: &[&SourceReport], several: bool) {
    let v = Voice::Markdown;
    let changed: Vec<&SourceReport> = moved
        .iter()
        .copied()
        .filter(|r| !r.skills.is_empty())
        .collect();
    if !changed.is_empty() {
        out.push_str("### Changes upstream\n\n");
    }
    for r in changed {
        if several {
            let _ = writeln!(out, "{}:\n", v.bare(&r.source));
        }
        for s in &r.skills {
            markdown_skill_changes(out, s);
        }
        out.push('\n');
    }
}

/// What changed upstream in one skill (`s`): a line, then one per kind of
/// change.
fn markdown_skill_changes(out: &mut String, s: &super::report::SkillChange) {
    let v = Voice::Markdown;
    let files = if s.change == Change::Added {
        format!(", {} file(s)", s.files_added.len())
    } else {
        String::new()
    };
    let _ = writeln!(out, "- {} {}{files}", s.change.name(), v.bare(&s.skill));
    let mut line = |label: &str, items: &mut dyn Iterator<Item = String>| {
        let shown = names(items);
        if !shown.is_empty() {
            let _ = writeln!(out, "  - {label}: {shown}");
        }
    };
    let each = |v_: &[String]| v_.iter().map(|x| v.bare(x)).collect::<Vec<_>>();
    line("fields changed", &mut each(&s.fields).into_iter());
    line("sections added", &mut each(&s.sections_added).into_iter());
    line(
        "sections removed",
        &mut each(&s.sections_removed).into_iter(),
    );
    line(
        "sections renamed",
        &mut s
            .sections_renamed
            .iter()
            .map(|[a, b]| format!("{} → {}", v.bare(a), v.bare(b))),
    );
    line(
        "sections changed",
        &mut each(&s.sections_changed).into_iter(),
    );
    if s.change != Change::Added {
        line("files added", &mut each(&s.files_added).into_iter());
    }
    line("files removed", &mut each(&s.files_removed).into_iter());
    line("files changed", &mut each(&s.files_changed).into_iter());
    line("made executable", &mut each(&s.made_executable).into_iter());
    line(
        "no longer executable",
        &mut each(&s.no_longer_executable).into_iter(),
    );
}

/// At most [`MARKDOWN_ITEMS`] of `items`, joined with `, `, then `and N
/// more`.
fn names(items: &mut dyn Iterator<Item = String>) -> String {
    let mut out = String::new();
    let mut more = 0usize;
    for (n, item) in items.enumerate() {
        if n >= MARKDOWN_ITEMS {
            more += 1;
            continue;
        }
        if n > 0 {
            out.push_str(", ");
        }
        out.push_str(&item);
    }
    if more > 0 {
        let _ = write!(out, " and {more} more");
    }
    out
}

/// `doc` cut at a line so that it and a note saying so fit in `max`
/// bytes; `doc` itself when it fits.
fn bounded(mut doc: String, max: usize) -> String {
    if doc.len() <= max {
        return doc;
    }
    let lines = |s: &str| s.lines().filter(|l| !l.trim().is_empty()).count();
    let total = lines(&doc);
    // The note is at most this long, whatever the counts.
    let room = max.saturating_sub(200);
    let cut = doc.as_bytes()[..room.min(doc.len())]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |i| i + 1);
    doc.truncate(cut);
    let left = total - lines(&doc);
    let _ = writeln!(
        doc,
        "\n**The report is cut here** to fit in {max} bytes, as a pull request's body must: {left} more line(s) are not shown. `bernstein skills update --check` prints all of it."
    );
    doc
}

/// `escaped` (text already escaped: one line, no control or invisible
/// character) as a Markdown code span: fenced by one more backtick than
/// its longest run of backticks, and padded with a space where it starts
/// or ends with a backtick or a space (CommonMark strips one from each
/// side), so that its text shows exactly as it is. Nothing in a code
/// span is markup, an HTML tag, an entity, a link or a mention.
fn code(escaped: &str) -> String {
    if escaped.is_empty() {
        return "` `".to_owned();
    }
    let (mut longest, mut run) = (0, 0);
    for c in escaped.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest + 1);
    let spaced = escaped.starts_with('`')
        || escaped.ends_with('`')
        || (escaped.starts_with(' ') && escaped.ends_with(' ') && escaped.trim() != "");
    if spaced {
        format!("{fence} {escaped} {fence}")
    } else {
        format!("{fence}{escaped}{fence}")
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::layer::Layer;
    use crate::upstream::report::{OverrideImpact, SkillChange};
    use crate::upstream::review::Rule;

    /// The text of every code span of `doc`, parsed as CommonMark.
    fn spans(doc: &str) -> Vec<String> {
        pulldown_cmark::Parser::new(doc)
            .filter_map(|e| match e {
                pulldown_cmark::Event::Code(c) => Some(c.into_string()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn a_code_span_shows_its_text_exactly_whatever_backticks_and_spaces_it_holds() {
        for s in [
            "plain",
            "`",
            "``",
            "a`b",
            "a``b```c",
            "`starts",
            "ends`",
            " both ",
            " left",
            "right ",
            "   ",
            "<b>&amp;</b> @x [l](u) | p",
        ] {
            let span = code(s);
            assert_eq!(spans(&span), [s], "{s:?} as {span:?}");
        }
        assert_eq!(spans(&code("")), [" "]);
    }

    /// A report with more than a pull request's body holds: cut at a
    /// line, under the limit, the overrides (which come first) kept, and
    /// the note saying so.
    #[test]
    fn a_markdown_report_past_the_limit_is_cut_at_a_line_and_says_so() {
        let source = SourceReport {
            source: "up".into(),
            from: Some("a".repeat(40)),
            to: "b".repeat(40),
            moved: true,
            overrides: vec![OverrideImpact {
                skill: "pdf".into(),
                layer: Layer::Team,
                file: ".bernstein/skills/pdf.yaml".into(),
                kind: Impact::StaleValue,
                what: "description".into(),
            }],
            review: (0..5000)
                .map(|n| Finding {
                    file: format!("s{n:04}/scripts/run.sh"),
                    line: None,
                    kind: Rule::Script,
                    detail: "added".into(),
                })
                .collect(),
            skills: (0..5000)
                .map(|n| SkillChange {
                    skill: format!("s{n:04}"),
                    change: Change::Added,
                    files_added: vec!["SKILL.md".into(), "scripts/run.sh".into()],
                    ..SkillChange::default()
                })
                .collect(),
            ..SourceReport::default()
        };
        let report = UpdateReport {
            moved: true,
            written: false,
            lock: ".bernstein/sources.lock".into(),
            sources: vec![source],
            dropped: Vec::new(),
            refused: false,
        };
        let doc = markdown(&report, None);
        assert!(doc.len() <= MARKDOWN_MAX, "{}", doc.len());
        assert!(doc.len() > MARKDOWN_MAX - 400, "{}", doc.len());
        assert!(doc.contains("- team `pdf` (`.bernstein/skills/pdf.yaml`): sets `description`"));
        let (kept, note) = doc.rsplit_once("\n\n").unwrap();
        assert!(kept.ends_with("`: script: added"), "{kept}");
        assert_eq!(
            note,
            "**The report is cut here** to fit in 60000 bytes, as a pull request's body must: 8515 more line(s) are not shown. `bernstein skills update --check` prints all of it.\n"
        );
        // The same report, the same bytes.
        assert_eq!(markdown(&report, None), doc);
    }
}
