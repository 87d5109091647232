//! What a YAML scalar means: the core schema of YAML 1.2, with the rules
//! of `serde_yaml` 0.10 (serde_yaml_ng), which read fragments before, so
//! that no value a skill has changed when this reader replaced it (a
//! differential test held the two readers to that until the old one was
//! removed), and its tags.
//!
//! A plain scalar is `null` (`~`, `null`, `Null`, `NULL`, or nothing), a
//! boolean (`true`, `True`, `TRUE` and the three `false`), an integer
//! (decimal without a leading zero, `0x`, `0o`, `0b`, with a sign), a float
//! (what Rust's `f64` parser reads, and the `.inf` and `.nan` forms), or else
//! a string. A number that does not fit (`1e400`, an integer past 64 bits) is
//! [`Scalar::OutOfRange`], refused, not a string or a float that another
//! reader would see as something else. A quoted or block scalar is a string.
//!
//! Tags: the core schema's are applied as the YAML spec says (`!!str`,
//! `!!int`, `!!float`, `!!bool`, `!!null` on scalars, `!!map` and `!!seq` on
//! collections); every other tag is refused, all alike: `!!binary`,
//! `!!timestamp`, `!!set` or `!!python/…` would be applied by a YAML 1.1
//! library and ignored by others, so two readers would see two values.

use serde_json::{Number, Value};
use yaml_rust2::parser::Tag;

use crate::error::DiagnosticKind;
use crate::text::{EXCERPT_CHARS, excerpt};

/// The prefix the `!!` handle stands for.
const CORE: &str = "tag:yaml.org,2002:";

/// A scalar, resolved.
#[derive(Debug, PartialEq)]
pub(super) enum Scalar {
    /// A JSON value.
    Value(Value),
    /// `.inf`, `-.inf` or `.nan`: a number JSON cannot hold.
    NonFinite(f64),
    /// A number by the core schema that does not fit: an integer outside
    /// i64 and u64, or a float that overflows (its text).
    OutOfRange(String),
}

/// The kind of a collection, for tag checks and messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Seq,
    Map,
}

impl Kind {
    pub(super) fn noun(self) -> &'static str {
        match self {
            Kind::Seq => "a list",
            Kind::Map => "a mapping",
        }
    }
}

/// Resolves a scalar's `text`: `plain` when it is written without quotes
/// or block indicator.
pub(super) fn scalar(
    text: String,
    plain: bool,
    tag: Option<&Tag>,
) -> Result<Scalar, DiagnosticKind> {
    let Some(tag) = tag else {
        return Ok(if plain {
            untagged(text)
        } else {
            Scalar::Value(Value::String(text))
        });
    };
    let resolved = match core(tag) {
        Some("str") => return Ok(Scalar::Value(Value::String(text))),
        Some("null") => (text.is_empty() || is_null(&text)).then_some(Scalar::Value(Value::Null)),
        Some("bool") => bool_of(&text).map(|b| Scalar::Value(Value::Bool(b))),
        Some("int") => int(&text),
        Some("float") => float(&text),
        _ => return Err(unsupported(tag)),
    };
    resolved.ok_or_else(|| DiagnosticKind::TagMismatch {
        tag: name(tag),
        found: format!("'{}'", excerpt(&text, EXCERPT_CHARS)),
    })
}

/// Checks the tag of a collection: `!!seq` on a list and `!!map` on a
/// mapping are what they say; every other tag is refused.
pub(super) fn collection(tag: Option<&Tag>, kind: Kind) -> Result<(), DiagnosticKind> {
    let Some(tag) = tag else { return Ok(()) };
    match (core(tag), kind) {
        (Some("seq"), Kind::Seq) | (Some("map"), Kind::Map) => Ok(()),
        (Some("seq" | "map" | "str" | "null" | "bool" | "int" | "float"), _) => {
            Err(DiagnosticKind::TagMismatch {
                tag: name(tag),
                found: kind.noun().into(),
            })
        }
        _ => Err(unsupported(tag)),
    }
}

/// Is this scalar a YAML 1.1 merge key (a plain, untagged `<<`)?
pub(super) fn is_merge_key(text: &str, plain: bool, tag: Option<&Tag>) -> bool {
    plain && tag.is_none() && text == "<<"
}

/// The suffix of a core-schema tag (`!!int` → `int`).
fn core(tag: &Tag) -> Option<&str> {
    if tag.handle == CORE {
        Some(&tag.suffix)
    } else if tag.handle.is_empty() {
        // A verbatim tag: `!<tag:yaml.org,2002:int>`.
        tag.suffix.strip_prefix(CORE)
    } else {
        None
    }
}

fn unsupported(tag: &Tag) -> DiagnosticKind {
    DiagnosticKind::UnsupportedTag { tag: name(tag) }
}

/// The tag as it is usually written, escaped: `!!binary`, `!custom`, `!`,
/// or the verbatim form `!<…>` for anything else.
fn name(tag: &Tag) -> String {
    let written = if tag.handle == CORE {
        format!("!!{}", tag.suffix)
    } else if tag.handle == "!" {
        format!("!{}", tag.suffix)
    } else if tag.handle.is_empty() && tag.suffix == "!" {
        "!".into()
    } else {
        format!("!<{}{}>", tag.handle, tag.suffix)
    };
    excerpt(&written, EXCERPT_CHARS)
}

/// A plain scalar without a tag.
fn untagged(text: String) -> Scalar {
    if text.is_empty() || is_null(&text) {
        return Scalar::Value(Value::Null);
    }
    if let Some(b) = bool_of(&text) {
        return Scalar::Value(Value::Bool(b));
    }
    if let Some(n) = int(&text) {
        return n;
    }
    if !leading_zero_digits(&text)
        && let Some(f) = float(&text)
    {
        return f;
    }
    Scalar::Value(Value::String(text))
}

fn is_null(s: &str) -> bool {
    matches!(s, "null" | "Null" | "NULL" | "~")
}

fn bool_of(s: &str) -> Option<bool> {
    match s {
        "true" | "True" | "TRUE" => Some(true),
        "false" | "False" | "FALSE" => Some(false),
        _ => None,
    }
}

/// Digits with a leading zero (`007`, `-01`): a string by YAML 1.2, which
/// has no such integers (an octal is `0o7`).
fn leading_zero_digits(s: &str) -> bool {
    let s = s.strip_prefix(['-', '+']).unwrap_or(s);
    s.len() > 1 && s.starts_with('0') && s[1..].bytes().all(|b| b.is_ascii_digit())
}

/// An integer: an optional sign, then `0x` and hex digits, `0o` and octal
/// digits, `0b` and binary digits, or decimal digits without a leading
/// zero. `None` when `s` is not shaped like one.
fn int(s: &str) -> Option<Scalar> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let (radix, digits) = if let Some(d) = body.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = body.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = body.strip_prefix("0b") {
        (2, d)
    } else if leading_zero_digits(body) {
        return None;
    } else {
        (10, body)
    };
    if digits.is_empty() || !digits.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let number = u64::from_str_radix(digits, radix).ok().and_then(|n| {
        if negative {
            0i64.checked_sub_unsigned(n).map(Number::from)
        } else {
            Some(Number::from(n))
        }
    });
    Some(match number {
        Some(n) => Scalar::Value(Value::Number(n)),
        None => Scalar::OutOfRange(s.to_owned()),
    })
}

/// A float: what Rust's `f64` parser reads (one sign at most), or a
/// `.inf`/`.nan` form. `None` when `s` is not shaped like one; a number
/// that overflows is out of range, not a string.
fn float(s: &str) -> Option<Scalar> {
    let unsigned = match s.strip_prefix('+') {
        Some(rest) if rest.starts_with(['+', '-']) => return None,
        Some(rest) => rest,
        None => s,
    };
    if let ".inf" | ".Inf" | ".INF" = unsigned {
        return Some(Scalar::NonFinite(f64::INFINITY));
    }
    if let "-.inf" | "-.Inf" | "-.INF" = s {
        return Some(Scalar::NonFinite(f64::NEG_INFINITY));
    }
    if let ".nan" | ".NaN" | ".NAN" = s {
        return Some(Scalar::NonFinite(f64::NAN));
    }
    let f = unsigned.parse::<f64>().ok()?;
    match Number::from_f64(f) {
        Some(n) => Some(Scalar::Value(Value::Number(n))),
        // `inf`, `infinity` and `nan` in any case are words, and strings.
        None if !s.bytes().any(|b| b.is_ascii_digit()) => None,
        None => Some(Scalar::OutOfRange(s.to_owned())),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn plain(s: &str) -> Scalar {
        scalar(s.into(), true, None).unwrap()
    }

    fn value(s: &str) -> Value {
        match plain(s) {
            Scalar::Value(v) => v,
            other => panic!("{s:?}: {other:?}"),
        }
    }

    fn tag(handle: &str, suffix: &str) -> Tag {
        Tag {
            handle: handle.into(),
            suffix: suffix.into(),
        }
    }

    #[test]
    fn plain_scalars_resolve_by_the_core_schema() {
        for (text, expected) in [
            ("", json!(null)),
            ("~", json!(null)),
            ("Null", json!(null)),
            ("nULL", json!("nULL")),
            ("TRUE", json!(true)),
            ("False", json!(false)),
            ("yes", json!("yes")),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("+12", json!(12)),
            ("007", json!("007")),
            ("-01", json!("-01")),
            ("0x1F", json!(31)),
            ("-0x10", json!(-16)),
            ("+0o17", json!(15)),
            ("0b101", json!(5)),
            ("0X1F", json!("0X1F")),
            ("0x", json!("0x")),
            ("0x+5", json!("0x+5")),
            ("1_000", json!("1_000")),
            ("18446744073709551615", json!(u64::MAX)),
            ("-9223372036854775808", json!(i64::MIN)),
            ("1.5", json!(1.5)),
            ("01.5", json!(1.5)),
            ("1e3", json!(1000.0)),
            ("+.5", json!(0.5)),
            ("1e-400", json!(0.0)),
            ("+-1", json!("+-1")),
            ("inf", json!("inf")),
            ("-Infinity", json!("-Infinity")),
            ("NaN", json!("NaN")),
            ("-.nan", json!("-.nan")),
            ("<<", json!("<<")),
        ] {
            assert_eq!(value(text), expected, "{text:?}");
        }
        assert_eq!(
            scalar("12".into(), false, None).unwrap(),
            Scalar::Value(json!("12"))
        );
    }

    #[test]
    fn numbers_that_do_not_fit_are_out_of_range_not_strings() {
        for text in [
            "1e400",
            "-1e400",
            "18446744073709551616",
            "-9223372036854775809",
            "0x10000000000000000",
            "123456789012345678901234567890123456789012345",
        ] {
            assert_eq!(plain(text), Scalar::OutOfRange(text.into()), "{text:?}");
        }
        assert_eq!(plain(".inf"), Scalar::NonFinite(f64::INFINITY));
        assert_eq!(plain("-.INF"), Scalar::NonFinite(f64::NEG_INFINITY));
        assert!(matches!(plain(".NaN"), Scalar::NonFinite(f) if f.is_nan()));
    }

    #[test]
    fn core_tags_apply_and_every_other_tag_is_refused() {
        let core = |suffix: &str, text: &str| scalar(text.into(), false, Some(&tag(CORE, suffix)));
        assert_eq!(core("str", "5"), Ok(Scalar::Value(json!("5"))));
        assert_eq!(core("int", "0x10"), Ok(Scalar::Value(json!(16))));
        assert_eq!(core("float", "1"), Ok(Scalar::Value(json!(1.0))));
        assert_eq!(core("bool", "true"), Ok(Scalar::Value(json!(true))));
        assert_eq!(core("null", ""), Ok(Scalar::Value(json!(null))));
        assert!(matches!(
            core("int", "x"),
            Err(DiagnosticKind::TagMismatch { tag, found }) if tag == "!!int" && found == "'x'"
        ));
        let verbatim = tag("", "tag:yaml.org,2002:str");
        assert_eq!(
            scalar("1".into(), true, Some(&verbatim)),
            Ok(Scalar::Value(json!("1")))
        );
        for (t, name) in [
            (tag(CORE, "binary"), "!!binary"),
            (tag(CORE, "timestamp"), "!!timestamp"),
            (
                tag(CORE, "python/object:os.system"),
                "!!python/object:os.system",
            ),
            (tag("!", "custom"), "!custom"),
            (tag("", "!"), "!"),
            (tag("", "!x"), "!<!x>"),
            (
                tag("tag:example.com,2000:", "a\u{1b}"),
                "!<tag:example.com,2000:a\\x1b>",
            ),
        ] {
            let expected = Err(DiagnosticKind::UnsupportedTag { tag: name.into() });
            assert_eq!(scalar("x".into(), true, Some(&t)), expected);
            assert_eq!(collection(Some(&t), Kind::Map), expected.map(|_| ()));
        }
        assert_eq!(collection(Some(&tag(CORE, "seq")), Kind::Seq), Ok(()));
        assert!(matches!(
            collection(Some(&tag(CORE, "seq")), Kind::Map),
            Err(DiagnosticKind::TagMismatch { found, .. }) if found == "a mapping"
        ));
        assert!(matches!(
            collection(Some(&tag(CORE, "set")), Kind::Map),
            Err(DiagnosticKind::UnsupportedTag { .. })
        ));
    }
}
