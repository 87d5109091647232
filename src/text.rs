//! Text that came from a layer, made safe to print.
//!
//! Every key, value, identity and file name a human-readable output shows may
//! have been written by an attacker (a team layer takes pull requests). Three
//! rules hold for all of them, in every command:
//!
//! - **No character that hides or rewrites text reaches the terminal or a CI
//!   log as is** ([`is_unsafe`]): controls (C0, DEL, C1; U+009B is a
//!   one-byte CSI), every format character (general category Cf: the
//!   bidirectional controls, zero-width characters, the tag characters
//!   U+E0000–E007F that can spell out hidden instructions, the musical
//!   format characters), the line and paragraph separators U+2028/U+2029,
//!   both blocks of variation selectors and the fillers fonts draw empty.
//!   They are written as escapes (`\n`, `\x1b`, `\u{e0041}`), so a value
//!   can neither rewrite the screen, forge a whole line such as a fake
//!   `0 error(s)`, nor carry text the reader does not see.
//! - **Escapes are unambiguous**: a backslash of the value is written `\\`,
//!   so a value holding the six characters `\x1b` never prints like one
//!   holding an escape character.
//! - **A value is only ever quoted as a short excerpt** ([`excerpt`]), so no
//!   message or diff can dump a file, even one read from inside a layer.
//!
//! A value is escaped once, where it is put into a message ([`escape`],
//! [`excerpt`]); a message assembled from such parts, or JSON text, has
//! escapes of its own and passes through [`sanitize`] (which leaves
//! backslashes alone) as a safety net for anything missed.
//!
//! JSON output needs none of this: it is escaped by its own rules and stays
//! valid JSON (`render` also writes the unsafe characters as `\u` escapes).

use std::borrow::Cow;
use std::fmt::Write;

use unicode_general_category::{GeneralCategory, get_general_category};

/// The most characters of a value any human-readable output quotes.
pub const EXCERPT_CHARS: usize = 120;

/// The most characters of one message (a diagnostic's text) printed. The
/// values a message quotes are cut far shorter ([`EXCERPT_CHARS`], lists
/// at five items); this bounds what is left, the paths it names. It
/// leaves room for a whole path of the longest Linux allows (`PATH_MAX`),
/// so a message naming a few directories is never cut before the fix it
/// suggests on a machine whose paths are long.
pub const MESSAGE_CHARS: usize = 4096;

/// The most items of a list any message names before "and N more".
pub(crate) const LIST_ITEMS: usize = 5;

/// Is `c` a character that must not be printed as is: a control character
/// (Cc) or one that renders as nothing or as something it is not
/// (`is_invisible`)?
pub fn is_unsafe(c: char) -> bool {
    c.is_control() || is_invisible(c)
}

/// The bidirectional embedding, override, isolate and mark characters
/// (all of them format characters, so also [`is_invisible`]).
pub(crate) fn is_bidi(c: char) -> bool {
    matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' | '\u{200e}' | '\u{200f}' | '\u{061c}')
}

/// Characters that render as nothing, or break a line where none is shown:
/// every format character (general category Cf: soft hyphen, zero-width
/// spaces and joiners, bidirectional controls, the BOM, the tag characters,
/// the musical format characters), the line and paragraph separators (Zl,
/// Zp), the whole tag block U+E0000–E007F (its unassigned code points
/// included), both variation-selector blocks, the combining grapheme
/// joiner, the Khmer inherent vowels and the Hangul and Mongolian fillers
/// that fonts draw empty. A name holding one is refused
/// ([`crate::layer::check_name`]).
pub(crate) fn is_invisible(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    let mut buf = [0; 4];
    let b = c.encode_utf8(&mut buf).as_bytes();
    may_be_unsafe(b[0], b[1]) && is_invisible_by_definition(c)
}

/// [`is_invisible`] without the look-up that rules out most characters at
/// once: the definition the look-up table is checked against.
fn is_invisible_by_definition(c: char) -> bool {
    matches!(
        c,
        '\u{034f}'
            | '\u{115f}'
            | '\u{1160}'
            | '\u{17b4}'
            | '\u{17b5}'
            | '\u{180b}'..='\u{180f}'
            | '\u{3164}'
            | '\u{fe00}'..='\u{fe0f}'
            | '\u{ffa0}'
            | '\u{e0000}'..='\u{e007f}'
            | '\u{e0100}'..='\u{e01ef}'
    ) || matches!(
        get_general_category(c),
        GeneralCategory::Format
            | GeneralCategory::LineSeparator
            | GeneralCategory::ParagraphSeparator
    )
}

/// Can the character whose UTF-8 encoding starts with the bytes `lead`,
/// `next` be unsafe ([`is_unsafe`])? One table look-up that rules out all
/// ASCII but the controls and nearly every other script (Devanagari, CJK,
/// emoji...), so that scanners (the JSON writer's, [`escape`]'s) decode and
/// classify only the few characters that may be unsafe. `next` is ignored
/// after an ASCII `lead`. A test checks the table against every character.
pub(crate) fn may_be_unsafe(lead: u8, next: u8) -> bool {
    if lead < 0x80 {
        return lead < 0x20 || lead == 0x7f;
    }
    let bit = next.wrapping_sub(0x80);
    bit < 64 && UNSAFE_PREFIXES[usize::from(lead)] >> bit & 1 == 1
}

/// For each lead byte of a multi-byte UTF-8 sequence, the second bytes
/// (bit `byte - 0x80`) that start the encoding of some unsafe character:
/// C1 controls and the soft hyphen (0xC2), U+034F (0xCD), the Arabic and
/// Syriac format characters (0xD8, 0xDB, 0xDC, 0xE0), the Hangul fillers,
/// Khmer vowels and Mongolian selectors (0xE1), the general punctuation
/// block's format characters and separators (0xE2), U+3164 (0xE3), the
/// variation selectors, BOM, U+FFA0 and the interlinear annotations
/// (0xEF), the supplementary format characters (0xF0), and the tag and
/// supplementary variation-selector blocks (0xF3).
const UNSAFE_PREFIXES: [u64; 256] = {
    let pairs: [(usize, u64); 12] = [
        (0xc2, 0x0000_2000_ffff_ffff),
        (0xcd, 0x0000_0000_0000_8000),
        (0xd8, 0x0000_0000_1000_003f),
        (0xdb, 0x0000_0000_2000_0000),
        (0xdc, 0x0000_0000_0000_8000),
        (0xe0, 0x0000_000c_0000_0000),
        (0xe1, 0x0000_0001_4000_0020),
        (0xe2, 0x0000_0000_0000_0003),
        (0xe3, 0x0000_0000_0000_0020),
        (0xef, 0xc900_0000_0000_0000),
        (0xf0, 0x0000_0000_280a_0000),
        (0xf3, 0x0000_0001_0000_0000),
    ];
    let mut t = [0u64; 256];
    let mut i = 0;
    while i < pairs.len() {
        t[pairs[i].0] = pairs[i].1;
        i += 1;
    }
    t
};

/// The byte offset of the first character of `s` to escape.
fn first_escape(s: &str, backslash: bool) -> Option<usize> {
    let b = s.as_bytes();
    (0..b.len()).find(|&i| match b[i] {
        b'\\' => backslash,
        lead if !may_be_unsafe(lead, b.get(i + 1).copied().unwrap_or(0)) => false,
        lead if lead < 0x80 => true,
        // A lead byte: the table admitted it, so decode and classify.
        _ => s[i..]
            .chars()
            .next()
            .is_some_and(|c| c.is_control() || is_invisible_by_definition(c)),
    })
}

/// `s` with every unsafe character ([`is_unsafe`]) escaped and every
/// backslash doubled: `\n`, `\r`, `\t` by name, other ASCII controls as
/// `\xNN`, the rest as `\u{NNNN}`, a backslash as `\\`. Borrows when there
/// is nothing to escape (the usual case).
pub fn escape(s: &str) -> Cow<'_, str> {
    escape_with(s, true)
}

/// `s` with every unsafe character escaped as [`escape`] does, but its
/// backslashes left as they are: for text that is already escaped, or has
/// escapes of its own (a message assembled from [`excerpt`]s, JSON text),
/// so that nothing is escaped twice.
pub fn sanitize(s: &str) -> Cow<'_, str> {
    escape_with(s, false)
}

fn escape_with(s: &str, backslash: bool) -> Cow<'_, str> {
    let Some(first) = first_escape(s, backslash) else {
        return Cow::Borrowed(s);
    };
    let mut out = String::with_capacity(s.len() + 8);
    out.push_str(&s[..first]);
    for c in s[first..].chars() {
        push_escaped(&mut out, c, backslash);
    }
    Cow::Owned(out)
}

fn push_escaped(out: &mut String, c: char, backslash: bool) {
    match c {
        '\\' if backslash => out.push_str("\\\\"),
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

/// At most `max` characters of `s`, escaped as [`escape`] does, with `…`
/// when cut. The count is of characters of `s`, before escaping, so an
/// excerpt is at most a few times `max` bytes whatever `s` holds.
pub fn excerpt(s: &str, max: usize) -> String {
    excerpt_with(s, max, true)
}

/// At most `max` characters of `s`, made safe as [`sanitize`] does
/// (backslashes left alone), with `…` when cut: for a message assembled
/// from parts already escaped, and for JSON text.
pub fn sanitized_excerpt(s: &str, max: usize) -> String {
    excerpt_with(s, max, false)
}

fn excerpt_with(s: &str, max: usize, backslash: bool) -> String {
    let mut out = String::new();
    for (n, c) in s.chars().enumerate() {
        if n == max {
            out.push('…');
            return out;
        }
        push_escaped(&mut out, c, backslash);
    }
    out
}

/// At most `LIST_ITEMS` of `items` for a message, each an [`excerpt`]
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

/// A JSON value as a message quotes it: its compact JSON, cut to a
/// [`sanitized_excerpt`] of `max` characters. Only about as much of the value is
/// serialised as is shown, however large it is.
pub(crate) fn json_excerpt(value: &serde_json::Value, max: usize) -> String {
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
    // JSON escapes its own backslashes and quotes.
    sanitized_excerpt(&String::from_utf8_lossy(&w.0), max)
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
        assert!(matches!(escape("plain é 日本 🙂"), Cow::Borrowed(_)));
        assert_eq!(escape("a\nb\rc\td"), "a\\nb\\rc\\td");
        assert_eq!(escape("x\u{1b}[2Jy"), "x\\x1b[2Jy");
        assert_eq!(escape("\u{7f}"), "\\x7f");
        assert_eq!(escape("\u{9b}31m"), "\\u{9b}31m");
        assert_eq!(escape("evil\u{202e}txt.exe"), "evil\\u{202e}txt.exe");
        assert_eq!(escape("a\u{2066}b\u{2069}"), "a\\u{2066}b\\u{2069}");
        assert_eq!(escape("zero\u{200b}width"), "zero\\u{200b}width");
    }

    #[test]
    fn hidden_characters_are_escaped() {
        // Tag characters spelling "hi", hidden after visible text.
        assert_eq!(
            escape("Writes docs.\u{e0001}\u{e0068}\u{e0069}\u{e007f}"),
            "Writes docs.\\u{e0001}\\u{e0068}\\u{e0069}\\u{e007f}"
        );
        assert_eq!(escape("a\u{2028}b\u{2029}c"), "a\\u{2028}b\\u{2029}c");
        assert_eq!(escape("x\u{e0100}\u{fe0f}"), "x\\u{e0100}\\u{fe0f}");
        assert_eq!(
            escape("\u{1d173}\u{600}\u{ad}"),
            "\\u{1d173}\\u{600}\\u{ad}"
        );
        // Unassigned code points of the tag block too.
        assert_eq!(escape("\u{e0002}"), "\\u{e0002}");
    }

    #[test]
    fn a_backslash_prints_unlike_an_escape() {
        assert_eq!(escape("a\\x1b"), "a\\\\x1b");
        assert_ne!(escape("a\\x1b"), escape("a\u{1b}"));
        assert_eq!(excerpt("C:\\dir", 120), "C:\\\\dir");
        // Already escaped text is not escaped again.
        let once = excerpt("\u{1b}\\", 120);
        assert_eq!(sanitize(&once), once);
        assert_eq!(sanitized_excerpt(&once, 120), once);
        assert_eq!(sanitize("\\n\n"), "\\n\\n");
    }

    #[test]
    fn escaped_text_holds_no_unsafe_character() {
        let nasty: String = (0u32..0x3000)
            .chain(0xe0000..0xe0200)
            .filter_map(char::from_u32)
            .collect();
        assert!(!escape(&nasty).chars().any(is_unsafe));
        assert!(!excerpt(&nasty, 100_000).chars().any(is_unsafe));
        assert!(!sanitize(&nasty).chars().any(is_unsafe));
    }

    #[test]
    fn the_prefix_table_admits_every_unsafe_character() {
        let mut buf = [0u8; 4];
        for c in (0..=0x10ffff).filter_map(char::from_u32) {
            let b = c.encode_utf8(&mut buf).as_bytes();
            let next = b.get(1).copied().unwrap_or(0);
            let by_definition = c.is_control() || (!c.is_ascii() && is_invisible_by_definition(c));
            assert_eq!(by_definition, is_unsafe(c), "{c:?} ({:#x} {next:#x})", b[0]);
            assert_eq!(
                escape(c.encode_utf8(&mut [0; 4])) != c.to_string(),
                by_definition || c == '\\'
            );
        }
        // Devanagari, CJK and emoji are ruled out by their first two bytes.
        for c in ['क', '日', '🙂', 'é'] {
            let b = c.encode_utf8(&mut buf).as_bytes();
            assert!(!may_be_unsafe(b[0], b[1]), "{c}");
        }
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
