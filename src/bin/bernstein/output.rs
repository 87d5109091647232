//! Writing to stdout and stderr: whole outputs at once, so an error never
//! leaves half a document on stdout, and a closed pipe is not an error.

use std::io::Write;

use bernstein_skills::Error;

/// Writes `text` to stdout in one go. A closed pipe (`| head`) is fine.
pub fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// Prints warnings to stderr.
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
        let _ = writeln!(err, "error: {e}");
    } else {
        for d in diags {
            let _ = writeln!(err, "{d}");
        }
    }
}

/// Pads columns to their widest cell; the last column is not padded.
pub fn table(rows: &[Vec<String>]) -> String {
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
    let mut out = String::new();
    for row in rows {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 < row.len() {
                line.push_str(cell);
                line.push_str(&" ".repeat(widths[c] - cell.chars().count() + 2));
            } else {
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}
