//! Deterministic JSON: keys sorted at every depth, two-space indentation,
//! a trailing newline, UTF-8 as is (no `\u` escapes for non-ASCII), except
//! the characters no terminal or log should receive raw ([`crate::text::is_unsafe`]:
//! DEL, C1 controls, format characters such as the bidi controls and the tag
//! characters, line and paragraph separators, variation selectors), which
//! are written as `\uXXXX` (a character past U+FFFF as its UTF-16
//! surrogate pair, as JSON requires). The JSON means the same; only the bytes on screen are safe.
//!
//! The writer sorts keys itself rather than trusting a map's iteration
//! order, so the bytes do not depend on how `serde_json` was built.

use serde_json::Value;

use crate::merge::Effective;

/// Renders `value` as canonical pretty JSON with a trailing newline.
pub fn to_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

/// `s` as a JSON string, escaped as every JSON this tool writes is (see
/// the module documentation).
pub(crate) fn write_json_str(out: &mut String, s: &str) {
    write_str(out, s)
}

/// Writes `s` as a JSON string with the escapes `serde_json` uses (`\"`,
/// `\\`, `\b \f \n \r \t`, and `\u00XX` for the other C0 controls), plus
/// `\uXXXX` for DEL and the non-ASCII characters [`crate::text::is_unsafe`]
/// names; everything else as is. Runs of plain characters are found eight
/// bytes at a time and copied in one piece.
fn write_str(out: &mut String, s: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.reserve(s.len() + 2);
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    while let Some(i) = next_escape(bytes, start) {
        // `i` starts a character (an ASCII byte or a UTF-8 lead byte).
        out.push_str(&s[start..i]);
        let c = s[i..]
            .chars()
            .next()
            .expect("a character at a char boundary");
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c => {
                // A character past U+FFFF (a tag character) as its
                // surrogate pair, as JSON writes it.
                for unit in c.encode_utf16(&mut [0; 2]) {
                    out.push_str("\\u");
                    for shift in [12, 8, 4, 0] {
                        out.push(char::from(HEX[usize::from((*unit >> shift) & 0xf)]));
                    }
                }
            }
        }
        start = i + c.len_utf8();
    }
    out.push_str(&s[start..]);
    out.push('"');
}

/// Does the character starting at `bytes[i]` need an escape? ASCII is
/// decided by the byte; of the non-ASCII characters only those
/// [`crate::text::is_unsafe`] names do, and they all start with one of a few
/// pairs of first bytes ([`crate::text::may_be_unsafe`]), so other text
/// costs one table look-up per byte.
fn special_at(bytes: &[u8], i: usize) -> bool {
    match bytes[i] {
        b if b < 0x20 || b == b'"' || b == b'\\' || b == 0x7f => true,
        b if b >= 0x80 && crate::text::may_be_unsafe(b, bytes.get(i + 1).copied().unwrap_or(0)) => {
            let end = (i + 4).min(bytes.len());
            let lead = match std::str::from_utf8(&bytes[i..end]) {
                Ok(s) => s,
                Err(e) => std::str::from_utf8(&bytes[i..i + e.valid_up_to()]).unwrap_or(""),
            };
            lead.chars().next().is_some_and(crate::text::is_unsafe)
        }
        _ => false,
    }
}

/// The index of the first character at or after `from` that must be
/// escaped ([`special_at`]).
fn next_escape(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
    const HIGH: u64 = u64::from_ne_bytes([0x80; 8]);
    // The high bit of a byte is set if that byte is zero; a byte above a
    // zero byte may be flagged too, so a flagged word is rescanned by byte.
    let zero = |w: u64| w.wrapping_sub(ONES) & !w & HIGH;
    let mut i = from;
    while let Some(chunk) = bytes.get(i..i + 8) {
        let w = u64::from_ne_bytes(chunk.try_into().expect("eight bytes"));
        let below_space = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
        // DEL and every non-ASCII byte: rescanned, most found harmless.
        let del_or_high = zero(w ^ (ONES * 0x7f)) | (w & HIGH);
        let flagged = below_space
            | del_or_high
            | zero(w ^ (ONES * u64::from(b'"')))
            | zero(w ^ (ONES * u64::from(b'\\')));
        if flagged != 0
            && let Some(j) = (i..i + 8).find(|&j| special_at(bytes, j))
        {
            return Some(j);
        }
        i += 8;
    }
    (i.min(bytes.len())..bytes.len()).find(|&j| special_at(bytes, j))
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => {
            use std::fmt::Write;
            let _ = write!(out, "{n}");
        }
        Value::String(s) => write_str(out, s),
        Value::Array(items) => write_array(out, items.iter(), depth, write_value),
        Value::Object(m) => {
            // The map is sorted already unless serde_json was built with
            // `preserve_order`; only then is a sorted copy made.
            if m.keys().is_sorted() {
                write_object(out, m.iter(), depth, write_value);
            } else {
                let mut entries: Vec<(&String, &Value)> = m.iter().collect();
                entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
                write_object(out, entries.into_iter(), depth, write_value);
            }
        }
    }
}

/// A JSON array of `items`, each written by `item` at `depth + 1`.
fn write_array<T>(
    out: &mut String,
    items: impl ExactSizeIterator<Item = T>,
    depth: usize,
    mut item: impl FnMut(&mut String, T, usize),
) {
    let len = items.len();
    if len == 0 {
        out.push_str("[]");
        return;
    }
    out.push_str("[\n");
    for (i, v) in items.enumerate() {
        indent(out, depth + 1);
        item(out, v, depth + 1);
        out.push_str(if i + 1 < len { ",\n" } else { "\n" });
    }
    indent(out, depth);
    out.push(']');
}

/// A JSON object of `entries`, which must be in key order, each value
/// written by `value` at `depth + 1`.
fn write_object<K: AsRef<str>, T>(
    out: &mut String,
    entries: impl ExactSizeIterator<Item = (K, T)>,
    depth: usize,
    mut value: impl FnMut(&mut String, T, usize),
) {
    let len = entries.len();
    if len == 0 {
        out.push_str("{}");
        return;
    }
    out.push_str("{\n");
    for (i, (k, v)) in entries.enumerate() {
        indent(out, depth + 1);
        write_str(out, k.as_ref());
        out.push_str(": ");
        value(out, v, depth + 1);
        out.push_str(if i + 1 < len { ",\n" } else { "\n" });
    }
    indent(out, depth);
    out.push('}');
}

/// An effective skill as [`to_json`] renders its [`Effective::to_value`].
pub fn effective_to_json(effective: &Effective) -> String {
    to_json(&effective.to_value())
}

/// Several effective skills as one JSON object keyed by name (`show a b c`):
/// each value exactly what [`effective_to_json`] gives for that skill,
/// indented one level. `skills` must be sorted by name, without repeats.
pub fn effectives_to_json(skills: &[(&str, &Effective)]) -> String {
    let mut out = String::with_capacity(4096 * skills.len());
    write_object(&mut out, skills.iter().copied(), 0, |out, e, depth| {
        write_value(out, &e.to_value(), depth)
    });
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_form() {
        let v = json!({"b": [1, {"d": null, "c": "é"}], "a": {}, "e": []});
        assert_eq!(
            to_json(&v),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": \"é\",\n      \"d\": null\n    }\n  ],\n  \"e\": []\n}\n"
        );
    }

    /// What the escaper must give: serde_json's bytes, with the unsafe
    /// non-ASCII characters and DEL then written as `\uXXXX`.
    fn reference(s: &str) -> String {
        serde_json::to_string(s)
            .unwrap()
            .chars()
            .map(|c| {
                if crate::text::is_unsafe(c) {
                    c.encode_utf16(&mut [0; 2])
                        .iter()
                        .map(|u| format!("\\u{u:04x}"))
                        .collect()
                } else {
                    c.to_string()
                }
            })
            .collect()
    }

    fn ours(s: &str) -> String {
        let mut out = String::new();
        write_str(&mut out, s);
        out
    }

    /// The hand-written escaper gives serde_json's bytes for every ASCII
    /// character alone and inside text, and for non-ASCII, except that
    /// unsafe characters are escaped too; the JSON means the same string.
    #[test]
    fn strings_escape_like_serde_json() {
        let mut cases: Vec<String> = (0u8..=0x7f).map(|b| char::from(b).to_string()).collect();
        cases.extend((0u8..=0x7f).map(|b| format!("ab{}cd\u{e9}{}", char::from(b), char::from(b))));
        cases.extend(
            [
                "",
                "plain",
                "é ü 漢字 \u{1f600}",
                "\u{2028}\u{2029}",
                "\u{7f}\u{80}\u{9f}",
                "ab\u{202e}cd\u{2066}\u{200b}\u{feff}\u{ad}\u{9b}31m",
                "\u{c2}\u{e2}\u{2022}\u{ef}\u{fffd}",
                "Writes docs.\u{e0001}\u{e0068}\u{e0069}\u{e007f}",
                "\u{fe0f}\u{e0100}\u{1d173}\u{600}\u{6dd}\u{8e2}",
            ]
            .map(String::from),
        );
        for s in cases {
            assert_eq!(ours(&s), reference(&s), "{s:?}");
            assert_eq!(serde_json::from_str::<String>(&ours(&s)).unwrap(), s);
        }
        assert_eq!(ours("\u{9b}"), "\"\\u009b\"");
        assert_eq!(ours("a\u{202e}b"), "\"a\\u202eb\"");
        assert_eq!(ours("\u{e0041}"), "\"\\udb40\\udc41\"");
        assert_eq!(ours("\u{2028}"), "\"\\u2028\"");
    }

    proptest::proptest! {
        #[test]
        fn any_string_escapes_like_serde_json(s in proptest::prelude::any::<String>()) {
            proptest::prop_assert_eq!(ours(&s), reference(&s));
            proptest::prop_assert_eq!(serde_json::from_str::<String>(&ours(&s)).unwrap(), s);
        }
    }
}
