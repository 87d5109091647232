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
    fn excerpts_are_short() {
        assert_eq!(excerpt("short", 120), "short");
        let long = "x".repeat(10_000);
        let e = excerpt(&long, EXCERPT_CHARS);
        assert_eq!(e.chars().count(), EXCERPT_CHARS + 1);
        assert!(e.ends_with('…'));
        assert_eq!(excerpt("a\u{1b}b", 2), "a\\x1b…");
    }
}
