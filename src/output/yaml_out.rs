//! JSON values written as block-style YAML that every YAML reader reads back
//! as the same values: the frontmatter of an exported `SKILL.md`.
//!
//! An exported skill is read by whatever YAML library an agent uses, and
//! those disagree: a YAML 1.1 reader (PyYAML, many others) takes `no`, `on`
//! and `y` for booleans, `1:30` for the integer 90, `1_000` for 1000 and
//! `017` for 15; js-yaml turns `2024-01-01` into a date; `<<` is a merge key
//! to some and a string to others. A serialiser that aims at one reader
//! (`serde_yaml` writes YAML 1.2, where `on` is a string) leaves such
//! strings plain, and other readers change their meaning. No crate emits
//! with the guarantee that YAML 1.1 and 1.2 readers agree, so this module
//! does, conservatively:
//!
//! - A string (key or value) is plain only when it is clearly a string to
//!   every reader: it starts with a letter, holds only letters, marks,
//!   digits, spaces and a few punctuation characters, has no `: `, ` #` or
//!   trailing space, and is none of the words any reader takes for a
//!   boolean or null, in any case. Numbers, dates, `<<`, `=` and `~` start
//!   with no letter. Everything else is double-quoted, with escapes for the
//!   quote, the backslash, every control character, the line and paragraph
//!   separators and every character [`crate::text::is_unsafe`] names, so
//!   the text holds nothing invisible and each string stays on one line.
//! - A float always has a `.` and a signed exponent (`1.0e+300`): YAML 1.1
//!   readers need both to see a float.
//! - Empty lists and mappings are `[]` and `{}`; a key too long to be an
//!   implicit key (YAML caps those at 1024 characters) is written after `?`.
//!
//! CI reads a generated corpus back with PyYAML and js-yaml
//! (`.ci/yaml-readers/`, corpus from `examples/yaml-corpus.rs`), and a unit
//! test reads it back with this crate's own reader.

use std::borrow::Cow;
use std::fmt::Write;

use serde_json::Value;
use unicode_general_category::{GeneralCategory, get_general_category};

/// The longest key written as an implicit key (`key: value`); longer ones
/// are explicit (`? key`). YAML allows 1024 characters, `:` included.
const IMPLICIT_KEY_CHARS: usize = 1000;

/// The block mapping of `entries`, in the order given, one entry a line
/// (nested values indented below); empty for no entries.
pub fn mapping<'a>(entries: impl IntoIterator<Item = (&'a str, &'a Value)>) -> String {
    let mut out = String::new();
    let entries: Vec<(&str, &Value)> = entries.into_iter().collect();
    write_map(&mut out, &entries, 0, false);
    out
}

/// `s` as a YAML scalar: as is when every reader reads it as this string,
/// else double-quoted.
pub fn string(s: &str) -> Cow<'_, str> {
    if is_plain(s) {
        Cow::Borrowed(s)
    } else {
        let mut out = String::with_capacity(s.len() + 2);
        push_quoted(&mut out, s);
        Cow::Owned(out)
    }
}

/// A scalar, or an empty list or mapping, in flow style; `None` for a
/// collection that has entries.
fn scalar(v: &Value) -> Option<Cow<'_, str>> {
    Some(match v {
        Value::Null => Cow::Borrowed("null"),
        Value::Bool(true) => Cow::Borrowed("true"),
        Value::Bool(false) => Cow::Borrowed("false"),
        Value::Number(n) => Cow::Owned(number(n)),
        Value::String(s) => string(s),
        Value::Array(a) if a.is_empty() => Cow::Borrowed("[]"),
        Value::Object(m) if m.is_empty() => Cow::Borrowed("{}"),
        Value::Array(_) | Value::Object(_) => return None,
    })
}

/// An integer as is; a float with a `.` and, with an exponent, a sign on
/// it (`1.0e+300`, `-0.0`, `0.1`), which YAML 1.1 and 1.2 readers alike
/// read as a float of the same value. The digits are `serde_json`'s
/// shortest round-trip form.
fn number(n: &serde_json::Number) -> String {
    let text = n.to_string();
    if !n.is_f64() {
        return text;
    }
    let (mantissa, exponent) = match text.find(['e', 'E']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text.as_str(), None),
    };
    let mut out = mantissa.to_owned();
    if !mantissa.contains('.') {
        out.push_str(".0");
    }
    if let Some(e) = exponent {
        out.push('e');
        if !e.starts_with(['-', '+']) {
            out.push('+');
        }
        out.push_str(e);
    }
    out
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// Writes the entries of a mapping at `indent`; with `inline`, the first
/// entry goes on the current line (after a sequence's `- `).
fn write_map(out: &mut String, entries: &[(&str, &Value)], indent: usize, inline: bool) {
    for (i, (k, v)) in entries.iter().enumerate() {
        if i > 0 || !inline {
            pad(out, indent);
        }
        let key = string(k);
        let explicit = key.chars().count() > IMPLICIT_KEY_CHARS;
        if explicit {
            out.push_str("? ");
            out.push_str(&key);
            out.push('\n');
            pad(out, indent);
            out.push(':');
        } else {
            out.push_str(&key);
            out.push(':');
        }
        match scalar(v) {
            Some(s) => {
                out.push(' ');
                out.push_str(&s);
                out.push('\n');
            }
            None => {
                out.push('\n');
                // A list under an implicit key may sit at the key's
                // indentation; under an explicit one it is indented.
                let nested = match v {
                    Value::Array(_) if !explicit => indent,
                    _ => indent + 2,
                };
                write_block(out, v, nested);
            }
        }
    }
}

/// Writes a list or mapping with entries, starting on a new line at `indent`.
fn write_block(out: &mut String, v: &Value, indent: usize) {
    match v {
        Value::Array(items) => write_seq(out, items, indent, false),
        Value::Object(m) => {
            let entries: Vec<(&str, &Value)> = m.iter().map(|(k, v)| (k.as_str(), v)).collect();
            write_map(out, &entries, indent, false);
        }
        _ => unreachable!("only collections are written as blocks"),
    }
}

/// Writes the items of a list at `indent`; with `inline`, the first item
/// goes on the current line (a list in a list: `- - a`).
fn write_seq(out: &mut String, items: &[Value], indent: usize, inline: bool) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 || !inline {
            pad(out, indent);
        }
        if let Some(s) = scalar(item) {
            out.push_str("- ");
            out.push_str(&s);
            out.push('\n');
            continue;
        }
        match item {
            Value::Array(inner) => {
                out.push_str("- ");
                write_seq(out, inner, indent + 2, true);
            }
            Value::Object(m) => {
                let entries: Vec<(&str, &Value)> = m.iter().map(|(k, v)| (k.as_str(), v)).collect();
                // `- key: value`, unless the first key must be explicit.
                if string(entries[0].0).chars().count() > IMPLICIT_KEY_CHARS {
                    out.push_str("-\n");
                    write_map(out, &entries, indent + 2, false);
                } else {
                    out.push_str("- ");
                    write_map(out, &entries, indent + 2, true);
                }
            }
            _ => unreachable!("scalars were written above"),
        }
    }
}

/// The words some YAML reader takes for a boolean or null (YAML 1.1:
/// `y`, `yes`, `on`...; YAML 1.2: `true`, `null`...), compared in any case.
const RESERVED: [&str; 9] = ["y", "n", "yes", "no", "true", "false", "on", "off", "null"];

/// Does every YAML reader read `s`, written plain, as the string `s`?
fn is_plain(s: &str) -> bool {
    let mut chars = s.chars().peekable();
    let Some(first) = chars.next() else {
        return false;
    };
    if !(first.is_ascii_alphabetic() || (!first.is_ascii() && is_letter(first)))
        || s.ends_with(' ')
        || (s.len() <= 5 && RESERVED.iter().any(|w| w.eq_ignore_ascii_case(s)))
    {
        return false;
    }
    let mut prev = first;
    while let Some(c) = chars.next() {
        let ok = match c {
            'a'..='z' | 'A'..='Z' | '0'..='9' | ' ' => true,
            '.' | ',' | ';' | '(' | ')' | '\'' | '"' | '-' | '_' | '/' | '!' | '?' | '&' | '+'
            | '=' | '@' | '%' | '*' | '~' | '$' | '<' | '>' | '^' => true,
            // Not `: ` (a key) nor a `:` that ends the string.
            ':' => chars.peek().is_some_and(|&n| n != ' '),
            // Not ` #` (a comment).
            '#' => prev != ' ',
            c if c.is_ascii() => false,
            c => is_visible_text(c),
        };
        if !ok {
            return false;
        }
        prev = c;
    }
    true
}

/// A letter (general category L) that is not invisible.
fn is_letter(c: char) -> bool {
    use GeneralCategory as G;
    matches!(
        get_general_category(c),
        G::UppercaseLetter
            | G::LowercaseLetter
            | G::TitlecaseLetter
            | G::ModifierLetter
            | G::OtherLetter
    ) && !crate::text::is_unsafe(c)
}

/// A non-ASCII letter, mark, number, punctuation or symbol that is not
/// invisible: text no YAML reader gives a meaning, shown as itself.
fn is_visible_text(c: char) -> bool {
    use GeneralCategory as G;
    !matches!(
        get_general_category(c),
        G::Control
            | G::Format
            | G::Surrogate
            | G::PrivateUse
            | G::Unassigned
            | G::SpaceSeparator
            | G::LineSeparator
            | G::ParagraphSeparator
    ) && !crate::text::is_unsafe(c)
}

/// Is `c` printable in YAML (the stream may hold it as is)?
fn is_yaml_printable(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}' | '\u{a0}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..)
}

/// `s` as a YAML double-quoted scalar on one line: `\"`, `\\`, `\n`, `\t`,
/// `\r` by name, other controls as `\xNN`, and every other character that
/// is unsafe to show or not printable in YAML as `\uXXXX` or `\UXXXXXXXX`.
fn push_quoted(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if c.is_control() && (c as u32) < 0x100 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if crate::text::is_unsafe(c) || !is_yaml_printable(c) => {
                if (c as u32) <= 0xffff {
                    let _ = write!(out, "\\u{:04x}", c as u32);
                } else {
                    let _ = write!(out, "\\U{:08x}", c as u32);
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn one(v: Value) -> String {
        mapping([("v", &v)])
    }

    #[test]
    fn ordinary_text_is_plain() {
        for s in [
            "Extracts text and tables from PDF files.",
            "Writes docs in the team's voice.",
            "pdf-tables",
            "Apache-2.0",
            "Bash(git:*) Read",
            "Écrit des textes — vite ✓",
            "日本語",
            "C# and F#",
            "see https://example.com/x",
        ] {
            assert_eq!(string(s), s, "{s:?}");
        }
    }

    #[test]
    fn anything_a_reader_could_take_for_another_type_is_quoted() {
        for s in [
            "",
            "no",
            "No",
            "NO",
            "nO",
            "y",
            "Y",
            "n",
            "yes",
            "on",
            "Off",
            "true",
            "False",
            "null",
            "NULL",
            "~",
            "<<",
            "=",
            "1",
            "017",
            "0o17",
            "0x1F",
            "0b101",
            "1_000",
            "1:30",
            ".5",
            "+1",
            "-1",
            "1e3",
            ".inf",
            "-.Inf",
            ".NaN",
            "2024-01-01",
            "2001-12-14t21:59:43.10-05:00",
            "a: b",
            "a #b",
            "a:",
            " a",
            "a ",
            "-a",
            "- a",
            "[a]",
            "{a}",
            "*a",
            "&a",
            "!a",
            "%a",
            "@a",
            "`a",
            "|a",
            ">a",
            "'a'",
            "\"a\"",
            "?a",
            "#a",
            "a\tb",
            "a\\b",
            "---",
            "...",
            "a\u{2028}b",
            "a\u{85}b",
            "a\u{e0001}b",
            "\u{feff}a",
            "a\u{a0}b",
            "a[b]",
            "a{b}",
            "a|b",
            "a`b",
        ] {
            assert!(string(s).starts_with('"'), "{s:?} must be quoted");
        }
    }

    #[test]
    fn quoted_strings_escape_what_is_not_visible() {
        assert_eq!(string("a\"b\\c"), r#""a\"b\\c""#);
        assert_eq!(string("a\nb\tc\rd"), r#""a\nb\tc\rd""#);
        assert_eq!(string("\u{1b}\u{7f}\u{85}\u{9b}"), r#""\x1b\x7f\x85\x9b""#);
        assert_eq!(string("\u{2028}\u{2029}"), r#""\u2028\u2029""#);
        assert_eq!(string("x\u{e0001}\u{fffe}"), r#""x\U000e0001\ufffe""#);
        assert_eq!(string("1 🙂 漢"), "\"1 🙂 漢\"");
    }

    #[test]
    fn floats_have_a_dot_and_a_signed_exponent() {
        assert_eq!(one(json!(1e300)), "v: 1.0e+300\n");
        assert_eq!(one(json!(1.5e-7)), "v: 1.5e-7\n");
        assert_eq!(one(json!(-0.0)), "v: -0.0\n");
        assert_eq!(one(json!(0.1)), "v: 0.1\n");
        assert_eq!(one(json!(100.0)), "v: 100.0\n");
        assert_eq!(one(json!(u64::MAX)), "v: 18446744073709551615\n");
        assert_eq!(one(json!(-3)), "v: -3\n");
    }

    #[test]
    fn collections_are_written_as_blocks() {
        let v = json!({"a": [1, [2, [3]], {"b": {}, "c": []}, []], "d": {"e": {"f": null}}});
        assert_eq!(
            mapping([("top", &v)]),
            "top:\n  a:\n  - 1\n  - - 2\n    - - 3\n  - b: {}\n    c: []\n  - []\n  d:\n    e:\n      f: null\n"
        );
        assert_eq!(mapping([]), "");
    }

    /// Any JSON value: strings of any characters, integers, finite floats,
    /// nested lists and mappings.
    fn any_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<String>().prop_map(Value::String),
            "[ -~]{0,8}".prop_map(Value::String),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            any::<f64>()
                .prop_filter("JSON has no NaN or infinity", |f| f.is_finite())
                .prop_map(Value::from),
            any::<bool>().prop_map(Value::from),
            Just(Value::Null),
        ];
        leaf.prop_recursive(4, 32, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map(any::<String>(), inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest::proptest! {
        /// This crate's reader reads back what was written (the corpus in
        /// tests/it/export/frontmatter.rs, read by other readers in CI, holds the
        /// values they are known to disagree on).
        #[test]
        fn any_value_reads_back(key in proptest::prelude::any::<String>(), v in any_value()) {
            let yaml = mapping([(key.as_str(), &v)]);
            let back = crate::fragment::parse_yaml(&yaml)
                .map_err(|e| proptest::test_runner::TestCaseError::fail(format!("{e:?}: {yaml}")))?;
            let mut want = serde_json::Map::new();
            want.insert(key, v);
            proptest::prop_assert_eq!(back, Some(Value::Object(want)), "{}", yaml);
        }
    }

    #[test]
    fn a_long_key_is_explicit() {
        let k = "k".repeat(IMPLICIT_KEY_CHARS + 1);
        let v = json!({ k.clone(): [1], "x": [{ k.clone(): true }] });
        assert_eq!(
            mapping([("m", &v)]),
            format!("m:\n  ? {k}\n  :\n    - 1\n  x:\n  -\n    ? {k}\n    : true\n")
        );
    }
}
