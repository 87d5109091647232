//! The reader this one replaced: values from `serde_yaml` (strict visitor,
//! three thread-locals), positions from a walk of yaml-rust2's events. Kept
//! only for the differential test (`differential.rs`), which runs both over
//! every YAML text the repository holds and a set of generated scalars.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use yaml_rust2::parser::Event;

use crate::error::DiagnosticKind;

use super::super::Pos;
use super::{Budget, flow_too_deep, walk};

thread_local! {
    /// The structured cause of the last error our visitor raised, so it
    /// survives serde's string-only custom errors, and whether it is best
    /// located at the first alias rather than where the parser stopped.
    static CAUSE: RefCell<Option<(DiagnosticKind, bool)>> = const { RefCell::new(None) };
    /// What is left of the budget of the parse running on this thread.
    static BUDGET: Cell<Budget> = const { Cell::new(Budget::UNLIMITED) };
    /// While [`parse_keeping_order`] runs on this thread: what it records.
    static ORDER: RefCell<Option<Order>> = const { RefCell::new(None) };
}

/// The keys of the mapping under one key of the root mapping, in the order
/// the text writes them (a JSON object forgets it).
struct Order {
    key: &'static str,
    /// How many mappings and lists the value being built is inside.
    depth: usize,
    /// Is the value of the root's `key` being built?
    inside: bool,
    keys: Vec<String>,
}

/// Runs `f` on the order probe, if a parse on this thread records one.
fn probe(f: impl FnOnce(&mut Order)) {
    ORDER.with(|o| {
        if let Some(order) = o.borrow_mut().as_mut() {
            f(order);
        }
    });
}

fn fail<E: de::Error>(kind: DiagnosticKind) -> E {
    fail_with(kind, false)
}

fn fail_with<E: de::Error>(kind: DiagnosticKind, at_alias: bool) -> E {
    let msg = kind.to_string();
    CAUSE.with(|c| *c.borrow_mut() = Some((kind, at_alias)));
    E::custom(msg)
}

/// Charges one value (unless it is a key) holding `bytes` bytes of text.
fn charge<E: de::Error>(bytes: usize, value: bool) -> Result<(), E> {
    let mut b = BUDGET.with(Cell::get);
    let bytes = bytes as u64;
    let over = |what: String| {
        fail_with(
            DiagnosticKind::Syntax {
                message: format!(
                    "aliases expand to {what}; write the values out or use fewer aliases"
                ),
            },
            true,
        )
    };
    if value && b.values == 0 {
        return Err(over(format!(
            "more than {} values, the most {} may hold (one per byte)",
            b.size.saturating_add(1),
            b.file()
        )));
    }
    if bytes > b.bytes {
        return Err(over(format!(
            "more than {} bytes of text, four times {}",
            b.size.saturating_mul(4),
            b.file()
        )));
    }
    b.bytes -= bytes;
    b.values -= u64::from(value);
    BUDGET.with(|c| c.set(b));
    Ok(())
}

/// A JSON value built from a self-describing format, refusing duplicate
/// keys, non-string keys and non-finite numbers.
pub(crate) struct Strict(pub Value);

impl<'de> Deserialize<'de> for Strict {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(StrictVisitor).map(Strict)
    }
}

struct StrictVisitor;

impl<'de> Visitor<'de> for StrictVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a YAML value")
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        charge(0, true)?;
        Ok(Value::Bool(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        charge(0, true)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        charge(0, true)?;
        Ok(Value::Number(v.into()))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        charge(0, true)?;
        Number::from_f64(v).map(Value::Number).ok_or_else(|| {
            fail(DiagnosticKind::Syntax {
                message: format!("{v} is not a finite number and cannot be represented in JSON"),
            })
        })
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        charge(v.len(), true)?;
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        charge(v.len(), true)?;
        Ok(Value::String(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        charge(0, true)?;
        Ok(Value::Null)
    }
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        charge(0, true)?;
        Ok(Value::Null)
    }
    fn visit_some<D: de::Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        Strict::deserialize(d).map(|s| s.0)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        charge(0, true)?;
        probe(|o| o.depth += 1);
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1024));
        while let Some(Strict(v)) = seq.next_element()? {
            items.push(v);
        }
        probe(|o| o.depth -= 1);
        Ok(Value::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        charge(0, true)?;
        probe(|o| o.depth += 1);
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(KeySeed)? {
            probe(|o| match o.depth {
                1 => o.inside = key == o.key,
                2 if o.inside => o.keys.push(key.clone()),
                _ => {}
            });
            let Strict(v) = map.next_value()?;
            probe(|o| {
                if o.depth == 1 {
                    o.inside = false;
                }
            });
            match out.entry(key) {
                serde_json::map::Entry::Vacant(e) => {
                    e.insert(v);
                }
                serde_json::map::Entry::Occupied(e) => {
                    return Err(fail(DiagnosticKind::DuplicateKey {
                        key: crate::text::excerpt(e.key(), crate::text::EXCERPT_CHARS),
                    }));
                }
            }
        }
        probe(|o| o.depth -= 1);
        Ok(Value::Object(out))
    }
    fn visit_enum<A: de::EnumAccess<'de>>(self, _data: A) -> Result<Value, A::Error> {
        Err(fail(DiagnosticKind::Syntax {
            message: "YAML tags (`!tag`) are not supported in skill fragments".into(),
        }))
    }
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = String;
    fn deserialize<D: de::Deserializer<'de>>(self, d: D) -> Result<String, D::Error> {
        d.deserialize_any(KeyVisitor)
    }
}

struct KeyVisitor;

impl KeyVisitor {
    fn non_string<E: de::Error>(key: impl fmt::Display) -> E {
        fail(DiagnosticKind::NonStringKey {
            key: crate::text::excerpt(&key.to_string(), crate::text::EXCERPT_CHARS),
        })
    }
}

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = String;
    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a string key")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<String, E> {
        charge(v.len(), false)?;
        Ok(v.to_owned())
    }
    fn visit_string<E: de::Error>(self, v: String) -> Result<String, E> {
        charge(v.len(), false)?;
        Ok(v)
    }
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<String, E> {
        Err(Self::non_string(v))
    }
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<String, E> {
        Err(Self::non_string(v))
    }
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<String, E> {
        Err(Self::non_string(v))
    }
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<String, E> {
        Err(Self::non_string(v))
    }
    fn visit_unit<E: de::Error>(self) -> Result<String, E> {
        Err(Self::non_string("null"))
    }
    fn visit_none<E: de::Error>(self) -> Result<String, E> {
        Err(Self::non_string("null"))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(Self::non_string("(a list)"))
    }
    fn visit_map<A: MapAccess<'de>>(self, _: A) -> Result<String, A::Error> {
        Err(Self::non_string("(a mapping)"))
    }
}

/// Parses one YAML document, its aliases expanding to no more than its
/// [`Budget`] under a size cap of `cap` bytes allows. `Ok(None)` for an
/// empty or comment-only text.
pub(crate) fn parse(text: &str, cap: u64) -> Result<Option<Value>, (Option<Pos>, DiagnosticKind)> {
    CAUSE.with(|c| c.borrow_mut().take());
    if let Some(pos) = flow_too_deep(text) {
        return Err((Some(pos), DiagnosticKind::TooDeep));
    }
    let mut docs = serde_yaml::Deserializer::from_str(text);
    let Some(first) = docs.next() else {
        return Ok(None);
    };
    BUDGET.with(|b| b.set(Budget::of(text, cap)));
    let parsed = Strict::deserialize(first);
    BUDGET.with(|b| b.set(Budget::UNLIMITED));
    let value = match parsed {
        Ok(Strict(v)) => v,
        Err(e) => return Err(explain(text, e)),
    };
    if docs.next().is_some() {
        let pos = document_start(text, 2);
        return Err((pos, DiagnosticKind::MultipleDocuments));
    }
    Ok(match value {
        Value::Null => None,
        v => Some(v),
    })
}

/// Parses like [`parse`], and also gives the keys of the mapping under the
/// root's `key` in the order the text writes them (empty when there is no
/// such mapping), without parsing the text twice.
pub(crate) fn parse_keeping_order(
    text: &str,
    cap: u64,
    key: &'static str,
) -> Result<(Option<Value>, Vec<String>), super::super::ParseError> {
    let order = Order {
        key,
        depth: 0,
        inside: false,
        keys: Vec::new(),
    };
    ORDER.with(|o| *o.borrow_mut() = Some(order));
    let parsed = parse(text, cap);
    let order = ORDER.with(|o| o.borrow_mut().take());
    let keys = match (&parsed, order) {
        (Ok(Some(Value::Object(root))), Some(order))
            if root.get(key).is_some_and(Value::is_object) =>
        {
            order.keys
        }
        _ => Vec::new(),
    };
    parsed.map(|v| (v, keys))
}

fn explain(text: &str, e: serde_yaml::Error) -> (Option<Pos>, DiagnosticKind) {
    let cause = CAUSE.with(|c| c.borrow_mut().take());
    let mark = e.location().map(|l| (l.line(), l.column()));
    match cause {
        Some((kind @ DiagnosticKind::DuplicateKey { .. }, _)) => {
            (first_duplicate_key(text).or(mark), kind)
        }
        Some((kind, true)) => (first_alias(text).or(mark), kind),
        Some((kind, false)) => (mark, kind),
        None => {
            let message = without_position(&e.to_string());
            if message.ends_with("recursion limit exceeded") {
                (mark, DiagnosticKind::TooDeep)
            } else if message.ends_with("repetition limit exceeded") {
                (
                    mark.or_else(|| first_alias(text)),
                    DiagnosticKind::Syntax {
                        message: "aliases expand to too many values (an alias bomb?)".into(),
                    },
                )
            } else {
                let message = crate::text::excerpt(&message, crate::text::MESSAGE_CHARS);
                (mark, DiagnosticKind::Syntax { message })
            }
        }
    }
}

/// The parser's message without its positions (` at line L column C`, once
/// for the problem and once for its context): the diagnostic carries the
/// position, relative to the whole file, which for a SKILL.md frontmatter the
/// parser's is not.
fn without_position(message: &str) -> String {
    const AT: &str = " at line ";
    let digits = |s: &str| s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let mut out = String::with_capacity(message.len());
    let mut rest = message;
    while let Some(at) = rest.find(AT) {
        let after = &rest[at + AT.len()..];
        let after_line = &after[digits(after)..];
        let Some(col) = after_line.strip_prefix(" column ") else {
            break;
        };
        out.push_str(&rest[..at]);
        rest = &col[digits(col)..];
    }
    out.push_str(rest);
    out
}

/// The position of the first alias (`*name`).
fn first_alias(text: &str) -> Option<Pos> {
    walk(text, |event, pos, _, _| {
        matches!(event, Event::Alias(..)).then_some(pos)
    })
}

/// The position of the first key repeated within one mapping.
fn first_duplicate_key(text: &str) -> Option<Pos> {
    let mut open: Vec<Option<std::collections::BTreeSet<String>>> = Vec::new();
    walk(text, |event, pos, _, is_key| {
        match event {
            Event::MappingStart(..) => open.push(Some(Default::default())),
            Event::SequenceStart(..) => open.push(None),
            Event::MappingEnd | Event::SequenceEnd => {
                open.pop();
            }
            Event::Scalar(s, ..) if is_key => {
                if let Some(Some(keys)) = open.last_mut()
                    && !keys.insert(s.clone())
                {
                    return Some(pos);
                }
            }
            _ => {}
        }
        None
    })
}

/// The position of the `n`th document start (1-based).
fn document_start(text: &str, n: usize) -> Option<Pos> {
    let mut count = 0;
    walk(text, |event, pos, _, _| {
        if let Event::DocumentStart = event {
            count += 1;
            if count == n {
                return Some(pos);
            }
        }
        None
    })
}
