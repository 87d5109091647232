//! Writing to stdout and stderr: whole outputs at once, so an error never
//! leaves half a document on stdout, and a closed pipe is not an error.
//! Colour only on a terminal, never with `NO_COLOR`, as `--color` says.

use std::io::{IsTerminal, Write};
use std::sync::atomic::{AtomicU8, Ordering};

use bernstein_skills::{Diagnostic, Error, Severity};

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ColorChoice {
    /// Colour when writing to a terminal and `NO_COLOR` is unset.
    Auto,
    /// Always colour.
    Always,
    /// Never colour.
    Never,
}

// 0 = never, 1 = always, 2 = auto
static COLOR: AtomicU8 = AtomicU8::new(2);

pub fn set_color(choice: ColorChoice) {
    let v = match choice {
        ColorChoice::Never => 0,
        ColorChoice::Always => 1,
        ColorChoice::Auto => 2,
    };
    COLOR.store(v, Ordering::Relaxed);
}

#[derive(Clone, Copy)]
pub enum Stream {
    Out,
    Err,
}

fn color_on(stream: Stream) -> bool {
    match COLOR.load(Ordering::Relaxed) {
        0 => false,
        1 => true,
        _ => {
            let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
            let tty = match stream {
                Stream::Out => std::io::stdout().is_terminal(),
                Stream::Err => std::io::stderr().is_terminal(),
            };
            tty && !no_color
        }
    }
}

/// ANSI styles used here.
#[derive(Clone, Copy)]
pub enum Style {
    Bold,
    Red,
    Yellow,
    Dim,
}

/// `text` in `style`, if colour is on for `stream`.
pub fn paint(text: &str, style: Style, stream: Stream) -> String {
    if !color_on(stream) {
        return text.to_owned();
    }
    let code = match style {
        Style::Bold => "1",
        Style::Red => "1;31",
        Style::Yellow => "1;33",
        Style::Dim => "2",
    };
    format!("\x1b[{code}m{text}\x1b[0m")
}

/// A diagnostic line, `path:line:col: error: message`, coloured.
pub fn diagnostic(d: &Diagnostic, stream: Stream) -> String {
    let sev = match d.severity {
        Severity::Error => paint("error", Style::Red, stream),
        Severity::Warning => paint("warning", Style::Yellow, stream),
        Severity::Note => paint("note", Style::Dim, stream),
    };
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
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Prints warning lines to stderr.
pub fn warn(lines: impl IntoIterator<Item = String>) {
    let mut err = std::io::stderr().lock();
    for line in lines {
        let _ = writeln!(err, "{line}");
    }
}

/// Prints an error: each located diagnostic on its own line, else `error: ...`.
pub fn print_error(e: &Error) {
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

/// The terminal's width, when stdout is one.
pub fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    if let Some(c) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(c);
    }
    #[cfg(unix)]
    {
        // SAFETY: TIOCGWINSZ fills a plain-data winsize struct we own.
        let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
        let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
        if ok && ws.ws_col > 0 {
            return Some(ws.ws_col as usize);
        }
    }
    None
}

/// Pads columns to their widest cell; the first row is a header. On a
/// terminal, the last column is cut to fit its width. Cells that quote a
/// value come escaped ([`bernstein_skills::text::escape`]); the table only
/// makes sure nothing unsafe is left ([`bernstein_skills::text::sanitize`]).
pub fn table(rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| bernstein_skills::text::sanitize(c).into_owned())
                .collect()
        })
        .collect();
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| s.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let limit = terminal_width();
    let mut out = String::new();
    for (r, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 < row.len() {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            } else {
                let used = line.chars().count();
                match limit {
                    Some(w) if used + cell.chars().count() > w && w > used + 1 => {
                        let keep: String = cell.chars().take(w - used - 1).collect();
                        line.push_str(&keep);
                        line.push('…');
                    }
                    _ => line.push_str(cell),
                }
            }
        }
        let line = line.trim_end();
        if r == 0 {
            out.push_str(&paint(line, Style::Bold, Stream::Out));
        } else {
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}
