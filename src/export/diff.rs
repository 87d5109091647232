//! Short line diffs for `export --check` and refusals of hand edits: at
//! most a few changed lines, each an escaped excerpt, so a diff can neither
//! dump a file nor write control characters into a CI log.

use std::time::Duration;

use similar::{Algorithm, ChangeTag, TextDiff};

use crate::text::{EXCERPT_CHARS, excerpt};

/// How long one diff may search for the smallest edit before it settles
/// for a larger one (two files of hostile lines cannot make a check slow).
const DEADLINE: Duration = Duration::from_millis(200);

/// A unified-style line diff of `old` → `new` (`similar`'s Myers diff,
/// bounded in time), at most `max` changed lines, each an escaped excerpt
/// ([`crate::text::excerpt`]), then how many more there are.
pub(crate) fn short_diff(old: &str, new: &str, max: usize) -> Vec<String> {
    let diff = TextDiff::configure()
        .algorithm(Algorithm::Myers)
        .timeout(DEADLINE)
        .diff_lines(old, new);
    let mut out = Vec::new();
    let mut more = 0usize;
    for change in diff.iter_all_changes() {
        let sign = match change.tag() {
            ChangeTag::Equal => continue,
            ChangeTag::Delete => '-',
            ChangeTag::Insert => '+',
        };
        if out.len() < max {
            let line = change.value().trim_end_matches(['\n', '\r']);
            out.push(format!("{sign}{}", excerpt(line, EXCERPT_CHARS)));
        } else {
            more += 1;
        }
    }
    if more > 0 {
        out.push(format!("... {more} more changed line(s)"));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn diff_shows_changed_lines() {
        let d = super::short_diff("a\nb\nc\n", "a\nB\nc\nd\n", 10);
        assert_eq!(d, ["-b", "+B", "+d"]);
    }

    #[test]
    fn a_long_diff_is_cut_and_counted_and_lines_are_escaped() {
        let old: String = (0..100).map(|i| format!("{i}\n")).collect();
        let new = format!("x\u{1b}[2J\n{old}").replace("50\n", "");
        let d = super::short_diff(&old, &new, 1);
        assert_eq!(d, ["+x\\x1b[2J", "... 1 more changed line(s)"]);
    }
}
