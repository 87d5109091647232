//! `SKILL.md`: a YAML frontmatter between `---` fences, then a Markdown body.
//!
//! The body is the text after the closing fence, taken as written but for
//! the line endings that frame it: one line ending right after the fence
//! (the customary blank line) and the file's final line ending are not part
//! of it. So `---\n…---\n\n# Title\n\nText\n` has the body `# Title\n\nText`,
//! and any body, with blank lines around it, an indented first line, lines
//! that read `---` or no final newline, can be written out and read back
//! byte for byte ([`crate::output::skillmd`] writes `\n` + body + `\n`).
//!
//! The line ending of the closing fence decides the file's: a CRLF fence is
//! a CRLF file (a `core.autocrlf` checkout), whose body's `\r\n` are read as
//! `\n`, so the checkout does not change the skill; after an LF fence the
//! body is taken byte for byte, a `\r` in it included. Without a
//! frontmatter, the whole file is the body, and its first line ending
//! decides.

use crate::error::DiagnosticKind;

use super::Pos;

/// A SKILL.md split into its parts.
pub(crate) struct Split<'a> {
    /// The frontmatter text (between the fences), if there is one.
    pub frontmatter: Option<&'a str>,
    /// The 0-based line on which the frontmatter text starts.
    pub(crate) frontmatter_line: usize,
    /// The body as written, without the line endings that frame it.
    pub body: &'a str,
    /// The file's line endings are CRLF: the body's `\r\n` stand for `\n`.
    pub crlf: bool,
    /// The 1-based line of the body's first character that is not blank
    /// space (where a reader looks for it).
    pub(crate) body_line: usize,
    /// The 1-based line of the body's first line (blank or not).
    pub(crate) text_line: usize,
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// The line ending `line` (a line with its ending) ends with: `\r\n`, or
/// `\n` (also for a last line with none).
fn ending(line: &str) -> &'static str {
    if line.ends_with("\r\n") { "\r\n" } else { "\n" }
}

/// The body in `rest`, the text after the closing fence (which starts on
/// line `line`): one leading and one trailing `eol` removed.
fn framed<'a>(rest: &'a str, eol: &'static str, line: usize) -> Split<'a> {
    let (body, line) = match rest.strip_prefix(eol) {
        Some(b) => (b, line + 1),
        None => (rest, line),
    };
    let body = body.strip_suffix(eol).unwrap_or(body);
    let lead = body.len() - body.trim_start().len();
    Split {
        frontmatter: None,
        frontmatter_line: 0,
        body,
        crlf: eol == "\r\n",
        body_line: line + body[..lead].matches('\n').count(),
        text_line: line,
    }
}

/// Splits a SKILL.md.
pub(crate) fn split(text: &str) -> Result<Split<'_>, (Option<Pos>, DiagnosticKind)> {
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or("");
    if !is_fence(first) {
        // No frontmatter: all of it is body, its final line ending removed.
        let eol = ending(first);
        let body = text.strip_suffix(eol).unwrap_or(text);
        let lead = body.len() - body.trim_start().len();
        return Ok(Split {
            frontmatter: None,
            frontmatter_line: 0,
            body,
            crlf: eol == "\r\n",
            body_line: 1 + body[..lead].matches('\n').count(),
            text_line: 1,
        });
    }
    let start = first.len();
    let mut offset = start;
    let mut line_no = 1;
    for line in lines {
        line_no += 1;
        if is_fence(line) {
            let rest = &text[offset + line.len()..];
            return Ok(Split {
                frontmatter: Some(&text[start..offset]),
                frontmatter_line: 1,
                ..framed(rest, ending(line), line_no + 1)
            });
        }
        offset += line.len();
    }
    Err((Some((1, 1)), DiagnosticKind::UnterminatedFrontmatter))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(text: &str) -> (&str, bool, usize) {
        let s = split(text).ok().unwrap();
        (s.body, s.crlf, s.body_line)
    }

    #[test]
    fn frontmatter_and_body() {
        let s = split("---\r\nname: x\r\n---\r\n\r\n# Body\r\n")
            .ok()
            .unwrap();
        assert_eq!(s.frontmatter, Some("name: x\r\n"));
        assert_eq!(s.body, "# Body");
        assert!(s.crlf);
        assert_eq!(s.body_line, 5);
    }

    #[test]
    fn one_line_ending_is_taken_off_each_side_of_the_body() {
        assert_eq!(body("---\n---\n\n# T\n\nText\n"), ("# T\n\nText", false, 4));
        assert_eq!(body("---\n---\nText\n"), ("Text", false, 3));
        assert_eq!(body("---\n---\nText"), ("Text", false, 3));
        assert_eq!(body("---\n---\n"), ("", false, 3));
        assert_eq!(body("---\n---"), ("", false, 3));
        // The rest is the body's, blank lines, indentation and `---` alike.
        assert_eq!(
            body("---\n---\n\n\n  x\n---\n\n\n"),
            ("\n  x\n---\n\n", false, 5)
        );
        // After an LF fence a carriage return is the body's own.
        assert_eq!(body("---\n---\n\na\r\nb\r\n"), ("a\r\nb\r", false, 4));
        assert_eq!(body("---\r\n---\r\n\r\na\r\n\r\n"), ("a\r\n", true, 4));
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        assert_eq!(body("\n  hello\n"), ("\n  hello", false, 2));
        assert_eq!(body("hello\r\nworld\r\n"), ("hello\r\nworld", true, 1));
        assert_eq!(body("hello"), ("hello", false, 1));
        let s = split("x\n").ok().unwrap();
        assert!(s.frontmatter.is_none());
    }

    #[test]
    fn unterminated() {
        assert!(matches!(
            split("---\nname: x\n"),
            Err((_, DiagnosticKind::UnterminatedFrontmatter))
        ));
    }
}
