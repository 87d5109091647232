//! Short line diffs for `export --check` and refusals of hand edits: at
//! most a few changed lines, each an escaped excerpt, so a diff can neither
//! dump a file nor write control characters into a CI log.

use crate::text::{EXCERPT_CHARS, excerpt};

/// A unified-style line diff of `old` → `new`, at most `max` changed lines,
/// each an escaped excerpt ([`crate::text::excerpt`]): a diff can neither
/// dump a file nor write control characters into a CI log.
pub fn short_diff(old: &str, new: &str, max: usize) -> Vec<String> {
    let a: Vec<&str> = old.lines().collect();
    let b: Vec<&str> = new.lines().collect();
    // The walk below matches the lines the two share at the start one by
    // one, so they need no table: it is built for the rest only. (Lines
    // shared at the end do need it: where a line repeats, which of its
    // copies the walk matches depends on them.)
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let (a, b) = (&a[prefix..], &b[prefix..]);
    // Longest common subsequence table, one row after another.
    let (n, m) = (a.len(), b.len());
    if n.saturating_mul(m) > 4_000_000 {
        return vec![format!("- ({n} lines)"), format!("+ ({m} lines)")];
    }
    let w = m + 1;
    let mut lcs = vec![0u32; (n + 1) * w];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            lcs[i * w + j] = if a[i] == b[j] {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    let mut more = 0;
    let mut emit = |line: String, out: &mut Vec<String>| {
        if out.len() < max {
            out.push(line);
        } else {
            more += 1;
        }
    };
    while i < n || j < m {
        if i < n && j < m && a[i] == b[j] {
            i += 1;
            j += 1;
        } else if i < n && (j == m || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            emit(format!("-{}", excerpt(a[i], EXCERPT_CHARS)), &mut out);
            i += 1;
        } else {
            emit(format!("+{}", excerpt(b[j], EXCERPT_CHARS)), &mut out);
            j += 1;
        }
    }
    if more > 0 {
        out.push(format!("... {more} more changed line(s)"));
    }
    out
}

#[cfg(test)]
mod tests {
    /// `short_diff` as it was before the common start was left out of the table.
    fn full_table_diff(old: &str, new: &str, max: usize) -> Vec<String> {
        use crate::text::{EXCERPT_CHARS, excerpt};
        let a: Vec<&str> = old.lines().collect();
        let b: Vec<&str> = new.lines().collect();
        let (n, m) = (a.len(), b.len());
        let mut lcs = vec![vec![0u32; m + 1]; n + 1];
        for i in (0..n).rev() {
            for j in (0..m).rev() {
                lcs[i][j] = if a[i] == b[j] {
                    lcs[i + 1][j + 1] + 1
                } else {
                    lcs[i + 1][j].max(lcs[i][j + 1])
                };
            }
        }
        let (mut i, mut j) = (0, 0);
        let mut out = Vec::new();
        while i < n || j < m {
            if i < n && j < m && a[i] == b[j] {
                i += 1;
                j += 1;
            } else if i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1]) {
                out.push(format!("-{}", excerpt(a[i], EXCERPT_CHARS)));
                i += 1;
            } else {
                out.push(format!("+{}", excerpt(b[j], EXCERPT_CHARS)));
                j += 1;
            }
        }
        if out.len() > max {
            let more = out.len() - max;
            out.truncate(max);
            out.push(format!("... {more} more changed line(s)"));
        }
        out
    }

    #[test]
    fn leaving_out_the_common_start_changes_no_diff() {
        // Every pair of texts of up to 6 lines over a 3-line alphabet, in a
        // fixed pseudo-random sample.
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        let mut next = |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % k
        };
        for _ in 0..20_000 {
            let mut text = || {
                (0..next(7))
                    .map(|_| ["x", "y", "z"][next(3) as usize])
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            let (a, b) = (text(), text());
            let max = 1 + next(5) as usize;
            assert_eq!(
                super::short_diff(&a, &b, max),
                full_table_diff(&a, &b, max),
                "{a:?} -> {b:?}"
            );
        }
    }

    #[test]
    fn diff_shows_changed_lines() {
        let d = super::short_diff("a\nb\nc\n", "a\nB\nc\nd\n", 10);
        assert_eq!(d, ["-b", "+B", "+d"]);
    }
}
