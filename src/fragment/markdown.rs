//! `SKILL.md`: a YAML frontmatter between `---` fences, then a Markdown body.

use crate::error::DiagnosticKind;

use super::Pos;

/// A SKILL.md split into its parts.
pub(crate) struct Split<'a> {
    /// The frontmatter text (between the fences), if there is one.
    pub frontmatter: Option<&'a str>,
    /// The 0-based line on which the frontmatter text starts.
    pub frontmatter_line: usize,
    /// The body, trimmed.
    pub body: &'a str,
    /// The 1-based line on which the body starts.
    pub body_line: usize,
}

fn is_fence(line: &str) -> bool {
    line.trim_end() == "---"
}

/// Splits a SKILL.md. CRLF line endings are fine.
pub(crate) fn split(text: &str) -> Result<Split<'_>, (Option<Pos>, DiagnosticKind)> {
    let mut lines = text.split_inclusive('\n');
    match lines.next() {
        Some(first) if is_fence(first) => {}
        _ => {
            let lead = text.len() - text.trim_start().len();
            return Ok(Split {
                frontmatter: None,
                frontmatter_line: 0,
                body: text.trim(),
                body_line: 1 + text[..lead].matches('\n').count(),
            });
        }
    }
    let start = text.split_inclusive('\n').next().map_or(0, str::len);
    let mut offset = start;
    let mut line_no = 1;
    for line in lines {
        line_no += 1;
        if is_fence(line) {
            let frontmatter = &text[start..offset];
            let rest = &text[offset + line.len()..];
            let lead = rest.len() - rest.trim_start().len();
            return Ok(Split {
                frontmatter: Some(frontmatter),
                frontmatter_line: 1,
                body: rest.trim(),
                body_line: line_no + 1 + rest[..lead].matches('\n').count(),
            });
        }
        offset += line.len();
    }
    Err((Some((1, 1)), DiagnosticKind::UnterminatedFrontmatter))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontmatter_and_body() {
        let s = split("---\r\nname: x\r\n---\r\n\r\n# Body\r\n")
            .ok()
            .unwrap();
        assert_eq!(s.frontmatter, Some("name: x\r\n"));
        assert_eq!(s.body, "# Body");
        assert_eq!(s.body_line, 5);
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let s = split("\n  hello\n").ok().unwrap();
        assert!(s.frontmatter.is_none());
        assert_eq!(s.body, "hello");
    }

    #[test]
    fn unterminated() {
        assert!(matches!(
            split("---\nname: x\n"),
            Err((_, DiagnosticKind::UnterminatedFrontmatter))
        ));
    }
}
