//! Text that came from a layer, made safe to print.
//!
//! Every key, value, identity and file name a human-readable output shows may
//! have been written by an attacker (a team layer takes pull requests). Two
//! rules hold for all of them, in every command:
//!
//! - **No control character reaches the terminal or a CI log as is**: C0
//!   controls, DEL, C1 controls (U+0080–U+009F, U+009B is a one-byte CSI),
//!   the bidirectional overrides and isolates (U+202A–U+202E, U+2066–U+2069)
//!   and the invisible formatting characters are written as escapes
//!   (`\n`, `\x1b`, `\u{202e}`), so a value can neither rewrite the screen
//!   nor forge a whole line such as a fake `0 error(s)`.
//! - **A value is only ever quoted as a short excerpt** ([`excerpt`]), so no
//!   message or diff can dump a file, even one read from inside a layer.
//!
//! JSON output needs neither: it is escaped by its own rules and stays valid
//! JSON.

use std::borrow::Cow;
use std::fmt::Write;

/// The most characters of a value any human-readable output quotes.
pub const EXCERPT_CHARS: usize = 120;

/// The most characters of one message (a diagnostic's text) printed.
pub const MESSAGE_CHARS: usize = 400;

/// The most items of a list any message names before "and N more".
pub const LIST_ITEMS: usize = 5;

/// Is `c` a character that must not be printed as is: a C0 or C1 control,
/// DEL, a bidirectional control, or an invisible formatting character?
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_bidi(c) || is_invisible(c)
}

/// The bidirectional embedding, override, isolate and mark characters.
pub fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Characters that render as nothing: zero-width spaces and joiners, word
/// joiners and invisible operators, the BOM, the soft hyphen, and the
/// Hangul and Mongolian fillers that fonts draw empty.
pub fn is_invisible(c: char) -> bool {
    matches!(
        c,
        '\u{00ad}'
            | '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{200b}'..='\u{200d}'
            | '\u{2060}'..='\u{2064}'
            | '\u{206a}'..='\u{206f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{feff}'
            | '\u{ffa0}'
            | '\u{fff9}'..='\u{fffb}'
    )
}

/// `s` with every unsafe character ([`is_unsafe`]) escaped: `\n`, `\r`, `\t`
/// by name, other ASCII controls as `\xNN`, the rest as `\u{NNNN}`. Borrows
/// when there is nothing to escape (the usual case).
pub fn escape(s: &str) -> Cow<'_, str> {
    let Some(first) = s.find(is_unsafe) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        push_escaped(&mut out, c);
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 && is_unsafe(c) => {
            let _ = write!(out, "\\x{:02x}", c as u32);
        }
        c if is_unsafe(c) => {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        }
        c => out.push(c),
    }
}

/// At most `max` characters of `s`, escaped, with `…` when cut. The count is
/// of characters of `s`, before escaping, so an excerpt is at most a few times
/// `max` bytes whatever `s` holds.
pub fn excerpt(s: &str, max: usize) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            return out;
        }
        push_escaped(&mut out, c);
    }
    out
}

/// At most [`LIST_ITEMS`] of `items` for a message, each an [`excerpt`]
/// (in single quotes when `quote` is set), joined with `, `, then `and N
/// more` for the rest. Items past the last one shown are only counted, so a
/// list of a million names costs a count.
pub fn list<'a>(items: impl IntoIterator<Item = &'a str>, quote: bool) -> String {
    let mut out = String::new();
    let mut more = 0usize;
    for (n, item) in items.into_iter().enumerate() {
        if n >= LIST_ITEMS {
            more += 1;
            continue;
        }
        if n > 0 {
            out.push_str(", ");
        }
        let item = excerpt(item, EXCERPT_CHARS);
        if quote {
            let _ = write!(out, "'{item}'");
        } else {
            out.push_str(&item);
        }
    }
    if more > 0 {
        let _ = write!(out, " and {more} more");
    }
    out
}

/// A JSON value as a message quotes it: its compact JSON, cut to an
/// [`excerpt`] of `max` characters. Only about as much of the value is
/// serialised as is shown, however large it is.
pub fn json_excerpt(value: &serde_json::Value, max: usize) -> String {
    /// A writer that takes a fixed number of bytes, then fails.
    struct Capped(Vec<u8>, usize);
    impl std::io::Write for Capped {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            let room = self.1 - self.0.len();
            if room == 0 {
                return Err(std::io::Error::other("enough"));
            }
            let n = b.len().min(room);
            self.0.extend_from_slice(&b[..n]);
            Ok(n)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    // Enough bytes for `max + 1` characters of up to four bytes each, so a
    // cut text is always longer than `max` characters and gets its `…`.
    let mut w = Capped(Vec::new(), max.saturating_add(1).saturating_mul(4));
    let _ = serde_json::to_writer(&mut w, value);
    excerpt(&String::from_utf8_lossy(&w.0), max)
}

/// A path as a human-readable output shows it: lossy UTF-8, escaped.
pub fn path(p: &std::path::Path) -> String {
    escape(&p.display().to_string()).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped_and_plain_text_borrowed() {
        assert!(matches!(escape("plain é 日本"), Cow::Borrowed(_)));
        assert_eq!(escape("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(escape("x\u{1b}[2Jy"), "x\\x1b[2Jy");
        assert_eq!(escape("\u{7f}"), "\\x7f");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(escape("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
        assert_eq!(escape("zero\u{200b}width"), "zero\\u{200b}width");
    }

    #[test]
    fn escaped_text_holds_no_unsafe_character() {
        let nasty: String = (0u32..0x3000).filter_map(char::from_u32).collect();
        assert!(!escape(&nasty).chars().any(is_unsafe));
        assert!(!excerpt(&nasty, 10_000).chars().any(is_unsafe));
    }

    #[test]
    fn lists_name_a_few_items_and_count_the_rest() {
        assert_eq!(list(["a", "b"], false), "a, b");
        assert_eq!(list(["a", "b"], true), "'a', 'b'");
        let many: Vec<String> = (0..1_000_000).map(|i| format!("k{i}")).collect();
        assert_eq!(
            list(many.iter().map(String::as_str), true),
            "'k0', 'k1', 'k2', 'k3', 'k4' and 999995 more"
        );
        let long = "y".repeat(10_000);
        assert!(list([long.as_str()], false).chars().count() <= EXCERPT_CHARS + 1);
    }

    #[test]
    fn json_excerpts_are_short() {
        let v = serde_json::json!({"a": [1, "x"]});
        assert_eq!(json_excerpt(&v, 120), r#"{"a":[1,"x"]}"#);
        let big = serde_json::Value::String("é".repeat(1 << 20));
        let e = json_excerpt(&big, 10);
        assert_eq!(e, format!("\"{}…", "é".repeat(9)));
    }

    #[test]
    fn excerpts_are_short() {
        assert_eq!(excerpt("short", 120), "short");
        let long = "x".repeat(10_000);
        let e = excerpt(&long, EXCERPT_CHARS);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
        assert_eq!(excerpt("a\u{1b}b", 2), "a\\x1b…");
    }
}
