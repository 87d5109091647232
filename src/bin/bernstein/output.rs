//! Writing to stdout and stderr: whole outputs at once, so an error never
//! leaves half a document on stdout, and a closed pipe is not an error.
//!
//! **Colour** is decided as clap decides it for its own messages, by
//! `anstream`: `--color always|never`, else `NO_COLOR` (off),
//! `CLICOLOR_FORCE` (on), `CLICOLOR=0` (off), then a terminal whose `TERM`
//! is not `dumb`. The decision is made once per stream ([`set_color`]), and
//! the escape codes (`anstyle`'s) are only ever written when it is yes: no
//! filter strips them afterwards, so what reaches a pipe (JSON above all)
//! is byte for byte what was built.
//!
//! **Tables** are measured in terminal columns (`unicode-width`: a CJK
//! character or an emoji takes two, a combining mark none), after escaping,
//! so the width of a cell is the width of what is printed. On a terminal,
//! or wherever `COLUMNS` is set, a table is fitted to the width
//! ([`width_limit`]): free text is cut first, the widest such column
//! before the others, then paths, in the middle; names are never cut (a
//! person types them back). Anywhere else (pipes, files, CI logs) nothing
//! is cut, so scripts read whole values.

use std::borrow::Cow;
use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicBool, Ordering};

use anstyle::AnsiColor;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use bernstein_skills::{Diagnostic, Error, Severity};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour on a terminal (not `TERM=dumb`) or with `CLICOLOR_FORCE`;
    /// never with `NO_COLOR` or `CLICOLOR=0`.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

/// Is colour on for stdout, for stderr? Off until [`set_color`].
static COLOR_OUT: AtomicBool = AtomicBool::new(false);
static COLOR_ERR: AtomicBool = AtomicBool::new(false);

/// Decides, once, whether each stream is coloured.
pub fn set_color(choice: ColorChoice) {
    anstream::ColorChoice::write_global(match choice {
        ColorChoice::Auto => anstream::ColorChoice::Auto,
        ColorChoice::Always => anstream::ColorChoice::Always,
        ColorChoice::Never => anstream::ColorChoice::Never,
    });
    let on = |choice| choice != anstream::ColorChoice::Never;
    COLOR_OUT.store(
        on(anstream::AutoStream::choice(&std::io::stdout())),
        Ordering::Relaxed,
    );
    COLOR_ERR.store(
        on(anstream::AutoStream::choice(&std::io::stderr())),
        Ordering::Relaxed,
    );
}

#[derive(Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

fn color_on(stream: Stream) -> bool {
    match stream {
        Stream::Out => COLOR_OUT.load(Ordering::Relaxed),
        Stream::Err => COLOR_ERR.load(Ordering::Relaxed),
    }
}

/// The styles used here.
#[derive(Clone, Copy)]
pub enum Style {
    Bold,
    Red,
    Yellow,
    Dim,
}

impl Style {
    fn anstyle(self) -> anstyle::Style {
        match self {
            Style::Bold => anstyle::Style::new().bold(),
            Style::Red => AnsiColor::Red.on_default().bold(),
            Style::Yellow => AnsiColor::Yellow.on_default().bold(),
            Style::Dim => anstyle::Style::new().dimmed(),
        }
    }
}

/// `text` in `style`, if colour is on for `stream`.
pub fn paint(text: &str, style: Style, stream: Stream) -> String {
    if !color_on(stream) {
        return text.to_owned();
    }
    let style = style.anstyle();
    format!("{style}{text}{style:#}")
}

/// A diagnostic line, `path:line:col: error: message` (`error: message`
/// when it is about no file), coloured.
pub fn diagnostic(d: &Diagnostic, stream: Stream) -> String {
    let sev = match d.severity {
        Severity::Error => paint("error", Style::Red, stream),
        Severity::Warning => paint("warning", Style::Yellow, stream),
        Severity::Note => paint("note", Style::Dim, stream),
    };
    if !d.is_located() {
        return format!("{sev}: {}", d.message());
    }
    format!(
        "{}: {sev}: {}",
        paint(&d.location(), Style::Bold, stream),
        d.message()
    )
}

/// Prints diagnostics to stderr, one line each.
pub fn warn_diagnostics(diagnostics: &[Diagnostic]) {
    warn(diagnostics.iter().map(|d| diagnostic(d, Stream::Err)));
}

/// Writes `text` to stdout in one go. A closed pipe (`| head`) is fine.
pub fn print(text: &str) {
    if let Some(buf) = CAPTURED.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        buf.push_str(text);
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// What [`print()`] printed while [`capture`] ran: a command made of other
/// commands (`sync`, `audit`) nests their JSON documents in its own.
static CAPTURED: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Runs one command of a command made of several: under `--json` what it
/// prints is kept and parsed as its document (printed by the caller inside
/// its own), else it prints as it does alone.
pub fn nested(
    json: bool,
    step: impl FnOnce() -> bernstein_skills::Result<std::process::ExitCode>,
) -> bernstein_skills::Result<(std::process::ExitCode, serde_json::Value)> {
    if !json {
        return Ok((step()?, serde_json::Value::Null));
    }
    let (code, text) = capture(step);
    let code = code?;
    let doc = serde_json::from_str(&text).unwrap_or(serde_json::Value::Null);
    Ok((code, doc))
}

/// A library report as the JSON value it serialises to (docs/json.md),
/// for printing with [`bernstein_skills::output::render::to_json`].
pub fn value(report: &impl serde::Serialize) -> serde_json::Value {
    serde_json::to_value(report).expect("a report serialises to JSON")
}

/// Runs `f` with what it prints to stdout kept instead, and returns both.
pub fn capture<T>(f: impl FnOnce() -> T) -> (T, String) {
    *CAPTURED.lock().unwrap_or_else(|e| e.into_inner()) = Some(String::new());
    let out = f();
    let text = CAPTURED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .take()
        .unwrap_or_default();
    (out, text)
}

/// Prints warning lines to stderr.
pub fn warn(lines: impl IntoIterator<Item = String>) {
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "{line}");
    }
}

/// Is the command's output JSON (`--json`)? Then an error is JSON on
/// stdout too ([`print_error`]). Off until [`set_json`].
static JSON: AtomicBool = AtomicBool::new(false);

/// Says that the command prints JSON, errors included.
pub fn set_json(on: bool) {
    JSON.store(on, Ordering::Relaxed);
}

/// Does the command print JSON?
pub fn json_mode() -> bool {
    JSON.load(Ordering::Relaxed)
}

/// An error as JSON (docs/json.md): `{"error": {"kind", "message", ...}}`
/// ([`Error::to_json`]).
pub fn error_json(e: &Error) -> serde_json::Value {
    serde_json::json!({ "error": e.to_json() })
}

/// Several errors as one [`error_json`] document (`show a b c`), of the
/// first error's kind.
pub fn errors_json(errors: &[Error]) -> serde_json::Value {
    serde_json::json!({ "error": Error::all_to_json(errors) })
}

/// A usage error (exit 2) as JSON: [`error_json`]'s shape, no location,
/// of kind `invalid_input`.
pub fn usage_error_json(message: &str) -> String {
    bernstein_skills::output::render::to_json(&serde_json::json!({"error": {
        "kind": bernstein_skills::ErrorKind::InvalidInput.label(),
        "message": message,
        "file": null,
        "layer": null,
        "line": null,
        "column": null,
        "field": null,
        "diagnostics": [{
            "severity": "error",
            "file": null,
            "layer": null,
            "line": null,
            "column": null,
            "field": null,
            "message": message,
        }],
    }}))
}

/// Prints an error: under `--json`, [`error_json`] on stdout; else each
/// located diagnostic on its own line on stderr, else `error: ...`.
pub fn print_error(e: &Error) {
    if json_mode() {
        print(&bernstein_skills::output::render::to_json(&error_json(e)));
        return;
    }
    if let Error::Strict { problems } = e {
        // The problems as validate prints them, then what was refused.
        warn_diagnostics(problems);
        let refused = Error::strict_refusal(problems.len(), " above");
        warn([format!(
            "{}: {refused}",
            paint("error", Style::Red, Stream::Err)
        )]);
        return;
    }
    let mut err = std::io::stderr().lock();
    let diags = e.diagnostics();
    if diags.is_empty() {
        let message =
            // Its parts were escaped where they were put in the message.
            bernstein_skills::text::sanitized_excerpt(
                &e.to_string(),
                bernstein_skills::text::MESSAGE_CHARS,
            );
        let _ = writeln!(
            err,
            "{}: {message}",
            paint("error", Style::Red, Stream::Err)
        );
    } else {
        for d in diags {
            let _ = writeln!(err, "{}", diagnostic(d, Stream::Err));
        }
    }
}

/// The width human-readable output is fitted to: `COLUMNS` when it is set
/// (to test, or to fit a pipe into a known width), else the terminal's
/// when stdout is one; none otherwise (nothing is cut).
pub fn width_limit() -> Option<usize> {
    if let Some(c) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
    {
        return Some(c);
    }
    if !std::io::stdout().is_terminal() {
        return None;
    }
    terminal_width()
}

#[cfg(unix)]
fn terminal_width() -> Option<usize> {
    rustix::termios::tcgetwinsize(std::io::stdout())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|&c| c > 0)
}

#[cfg(not(unix))]
fn terminal_width() -> Option<usize> {
    None
}

/// How many terminal columns `s` takes.
pub fn width(s: &str) -> usize {
    s.width()
}

/// `s` padded with spaces to `columns` terminal columns.
pub fn pad(s: &str, columns: usize) -> String {
    let mut out = String::with_capacity(s.len() + columns);
    out.push_str(s);
    out.extend(std::iter::repeat_n(' ', columns.saturating_sub(width(s))));
    out
}

/// The longest start of `s` that takes at most `columns` columns.
fn head(s: &str, columns: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices() {
        used += c.width().unwrap_or(0);
        if used > columns {
            return &s[..i];
        }
    }
    s
}

/// The longest end of `s` that takes at most `columns` columns.
fn tail(s: &str, columns: usize) -> &str {
    let mut used = 0;
    for (i, c) in s.char_indices().rev() {
        used += c.width().unwrap_or(0);
        if used > columns {
            return &s[i + c.len_utf8()..];
        }
    }
    s
}

/// `s` in at most `columns` terminal columns: its start and `…` when it is
/// wider.
pub fn cut_end(s: &str, columns: usize) -> Cow<'_, str> {
    if width(s) <= columns {
        return Cow::Borrowed(s);
    }
    let keep = head(s, columns.saturating_sub(1));
    // A character measured alone can take more than in the string (a
    // sequence the width tables know); drop more until it fits.
    let mut keep = keep;
    while width(keep) + 1 > columns && !keep.is_empty() {
        keep = &keep[..keep.char_indices().last().map_or(0, |(i, _)| i)];
    }
    Cow::Owned(format!("{keep}…"))
}

/// `s` in at most `columns` terminal columns: its first third, `…`, and
/// its end, when it is wider (a path keeps its root and its file name).
pub fn cut_middle(s: &str, columns: usize) -> Cow<'_, str> {
    if width(s) <= columns {
        return Cow::Borrowed(s);
    }
    let room = columns.saturating_sub(1);
    let start = head(s, room / 3);
    let end = tail(&s[start.len()..], room - width(start));
    let out = format!("{start}…{end}");
    if width(&out) <= columns {
        Cow::Owned(out)
    } else {
        cut_end(s, columns)
    }
}

/// What a table may do with a column that does not fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Column {
    /// Never cut: a name, a field path, a label, a short fixed word.
    Whole,
    /// Free text (a description, a value, checks): cut at the end, first.
    Text,
    /// A path: cut in the middle, only when cutting the free text is not
    /// enough.
    Path,
}

impl Column {
    /// The fewest columns a cut column keeps while another can give
    /// (more if its header is wider): enough of a text to recognise it,
    /// enough of a path for the start of its root and its file name.
    fn floor(self) -> usize {
        match self {
            Column::Whole => usize::MAX,
            Column::Text => 12,
            Column::Path => 20,
        }
    }

    /// The fewest columns it keeps when the table does not fit otherwise:
    /// a line wider than the terminal wraps, and the whole table with it.
    fn last_floor(self) -> usize {
        match self {
            Column::Whole => usize::MAX,
            Column::Text => 6,
            Column::Path => 12,
        }
    }
}

/// Pads columns to their widest cell, two spaces apart; the first row is a
/// header, printed bold. `columns` says, for each column, what may be cut
/// to fit [`width_limit`] (a column not named is [`Column::Whole`]). Cells
/// that quote a value come escaped ([`bernstein_skills::text::escape`]);
/// the table only makes sure nothing unsafe is left
/// ([`bernstein_skills::text::sanitize`]).
pub fn table(rows: &[Vec<String>], columns: &[Column]) -> String {
    layout(rows, columns, width_limit())
}

fn layout(rows: &[Vec<String>], columns: &[Column], limit: Option<usize>) -> String {
    let mut measure = Layout::new(columns);
    for row in rows {
        measure.measure(row);
    }
    let layout = measure.fit(limit);
    let mut out = String::new();
    for (r, row) in rows.iter().enumerate() {
        layout.line(row, r == 0, &mut out);
    }
    out
}

/// A table laid out row by row ([`table`] in two passes): every row is
/// measured, then written, so that a caller with very many rows need not
/// hold them all as cells at once.
pub struct Layout {
    columns: Vec<Column>,
    widths: Vec<usize>,
    /// The widths of the first row's cells (the header's).
    header: Vec<usize>,
    rows: usize,
}

impl Layout {
    /// An empty layout for these columns (see [`table`]).
    pub fn new(columns: &[Column]) -> Layout {
        Layout {
            columns: columns.to_vec(),
            widths: Vec::new(),
            header: Vec::new(),
            rows: 0,
        }
    }

    fn kind(&self, c: usize) -> Column {
        self.columns.get(c).copied().unwrap_or(Column::Whole)
    }

    /// Counts a row's cells in the widths; the first row is the header.
    pub fn measure(&mut self, row: &[String]) {
        let cells = row
            .iter()
            .map(|c| width(&bernstein_skills::text::sanitize(c)));
        if self.rows == 0 {
            self.header = cells.clone().collect();
        }
        self.rows += 1;
        for (c, w) in cells.enumerate() {
            match self.widths.get_mut(c) {
                Some(m) => *m = (*m).max(w),
                None => self.widths.push(w),
            }
        }
    }

    /// The widths, narrowed to `limit` columns where they may be.
    pub fn fit(mut self, limit: Option<usize>) -> Layout {
        if let Some(limit) = limit {
            let cols = self.widths.len();
            let header = |c: usize| self.header.get(c).copied().unwrap_or(0);
            let floors: Vec<usize> = (0..cols)
                .map(|c| header(c).max(self.kind(c).floor()))
                .collect();
            let last: Vec<usize> = (0..cols)
                .map(|c| header(c).max(self.kind(c).last_floor()))
                .collect();
            let kinds: Vec<Column> = (0..cols).map(|c| self.kind(c)).collect();
            // Free text first, then paths; below their usual floors only if
            // the table does not fit otherwise.
            for (floors, pass) in [
                (&floors, Column::Text),
                (&floors, Column::Path),
                (&last, Column::Text),
                (&last, Column::Path),
            ] {
                shrink(&mut self.widths, floors, limit, |c| kinds[c] == pass);
            }
        }
        self
    }

    /// Appends `row`'s line to `out` (bold for the header).
    pub fn line(&self, row: &[String], header: bool, out: &mut String) {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            let cell = bernstein_skills::text::sanitize(cell);
            let cell = match self.kind(c) {
                Column::Whole => cell,
                Column::Text => Cow::Owned(cut_end(&cell, self.widths[c]).into_owned()),
                Column::Path => Cow::Owned(cut_middle(&cell, self.widths[c]).into_owned()),
            };
            if c + 1 < row.len() {
                line.push_str(&pad(&cell, self.widths[c] + 2));
            } else {
                line.push_str(&cell);
            }
        }
        let line = line.trim_end();
        if header {
            out.push_str(&paint(line, Style::Bold, Stream::Out));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
}

/// Narrows the columns `cut` selects, the widest first and none below its
/// floor, until the table's lines (two spaces between columns) take at
/// most `limit` columns, or those columns are all at their floors.
fn shrink(widths: &mut [usize], floors: &[usize], limit: usize, cut: impl Fn(usize) -> bool) {
    let total = |w: &[usize]| w.iter().sum::<usize>() + 2 * w.len().saturating_sub(1);
    let mut excess = total(widths).saturating_sub(limit);
    while excess > 0 {
        // The widest column that can still give a column.
        let Some(c) = (0..widths.len())
            .filter(|&c| cut(c) && widths[c] > floors[c])
            .max_by_key(|&c| (widths[c], std::cmp::Reverse(c)))
        else {
            return;
        };
        widths[c] -= 1;
        excess -= 1;
    }
}

/// `text`, printed after `indent` columns, cut at the end to fit
/// [`width_limit`], if there is one.
pub fn fit(text: &str, indent: usize) -> Cow<'_, str> {
    match width_limit() {
        Some(limit) => cut_end(text, limit.saturating_sub(indent)),
        None => Cow::Borrowed(text),
    }
}

/// `1 skill`, `10,000 skills`.
pub fn count(n: usize, one: &str, many: &str) -> String {
    format!("{} {}", thousands(n), if n == 1 { one } else { many })
}

/// `10000` → `10,000`.
pub fn thousands(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(rows: &[&[&str]]) -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    #[test]
    fn wide_characters_take_two_columns() {
        assert_eq!(width("日本語"), 6);
        assert_eq!(width("🙂"), 2);
        assert_eq!(width("e\u{301}"), 1);
        assert_eq!(pad("日本", 6), "日本  ");
        let t = layout(
            &rows(&[&["NAME", "X"], &["日本語", "a"], &["abc", "b"]]),
            &[],
            None,
        );
        assert_eq!(t, "NAME    X\n日本語  a\nabc     b\n");
    }

    #[test]
    fn cuts_keep_within_the_width() {
        assert_eq!(cut_end("abcdef", 6), "abcdef");
        assert_eq!(cut_end("abcdefg", 6), "abcde…");
        // A wide character that does not fit whole is left out.
        assert_eq!(cut_end("ab日本語", 5), "ab日…");
        assert_eq!(cut_end("ab日本語", 6), "ab日…");
        assert_eq!(
            cut_middle("/home/a/skills/base/writer.yaml", 16),
            "/home…riter.yaml"
        );
        for s in ["日本語のパス/ファイル.yaml", "abc", "🙂🙂🙂🙂🙂🙂🙂🙂"]
        {
            for w in 1..20 {
                assert!(width(&cut_end(s, w)) <= w, "{s} {w}");
                assert!(width(&cut_middle(s, w)) <= w, "{s} {w}");
            }
        }
    }

    #[test]
    fn free_text_is_cut_before_paths_and_names_never() {
        let table = rows(&[
            &["NAME", "SOURCE", "DESCRIPTION"],
            &[
                "a-rather-long-skill-name",
                "/home/someone/.config/bernstein/skills/team/a-rather-long-skill-name.yaml",
                "Writes documentation in the house style, with examples.",
            ],
        ]);
        let kinds = [Column::Whole, Column::Path, Column::Text];
        // Cutting the description is enough.
        let t = layout(&table, &kinds, Some(120));
        let line = t.lines().nth(1).unwrap();
        assert_eq!(width(line), 120, "{t}");
        assert!(
            line.contains("a-rather-long-skill-name.yaml  Writes"),
            "{t}"
        );
        assert!(line.ends_with('…'), "{t}");
        // At 80 columns the path is cut too, in the middle; the name never.
        let t = layout(&table, &kinds, Some(80));
        for line in t.lines() {
            assert!(width(line) <= 80, "{t}");
        }
        let line = t.lines().nth(1).unwrap();
        assert!(line.starts_with("a-rather-long-skill-name  /home/"), "{t}");
        assert!(line.contains("…"), "{t}");
        // Below the usual floors only when nothing else fits.
        let t = layout(&table, &kinds, Some(52));
        for line in t.lines() {
            assert!(width(line) <= 52, "{t}");
        }
        // Nothing more to cut: the line is as long as it must be.
        let t = layout(&table, &kinds, Some(20));
        let line = t.lines().nth(1).unwrap();
        assert_eq!(
            line, "a-rather-long-skill-name  /ho…ame.yaml  Writes doc…",
            "{t}"
        );
        // No limit, no cut.
        let t = layout(&table, &kinds, None);
        assert!(!t.contains('…'));
    }

    #[test]
    fn escaped_cells_are_measured_as_printed() {
        let t = layout(&rows(&[&["A", "B"], &["x\u{1b}y", "z"]]), &[], None);
        assert_eq!(t, "A       B\nx\\x1by  z\n");
    }
}
