//! YAML: values from serde_yaml (strict: duplicate and non-string keys are
//! errors), positions from yaml-rust2's event parser, run only when there is
//! an error to locate.
//!
//! Aliases are expanded by the parser, so a small text can stand for a huge
//! value. What one text may expand to is bounded by a [`Budget`] tied to its
//! size and the size cap, counted as the value is built, and the parse stops
//! as soon as it is spent: a text without aliases never reaches it.

use std::cell::{Cell, RefCell};
use std::fmt;

use serde::de::{self, Deserialize, DeserializeSeed, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Number, Value};
use yaml_rust2::parser::{Event, Parser};

use crate::error::DiagnosticKind;

use super::Pos;

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

/// The least budget of any text: small files may use aliases freely.
const FLOOR: u64 = 64 * 1024;

/// What a YAML text may expand to, from its size: with `size` the text's
/// length in bytes (at least 64 KiB, at most the size cap), its strings
/// (keys included) may hold `4 × size` bytes and it may hold `size + 1`
/// values (keys not included).
///
/// Without aliases a text's strings take at most 1.5 times its bytes (an
/// escape such as `\L` is two bytes for three) and each value but the root
/// needs at least one byte of its own (a `,`, a `-`, a key), so no text
/// without aliases reaches its budget; with aliases, the parse stops as soon
/// as the budget is spent, before building more. Tying the budget to the
/// text, not only to the cap, means a small file cannot stand for a large
/// one: what a file expands to is never more than a file of four times its
/// size could hold.
#[derive(Debug, Clone, Copy)]
struct Budget {
    size: u64,
    /// Why `size` is what it is, for messages.
    counted: Counted,
    bytes: u64,
    values: u64,
}

#[derive(Debug, Clone, Copy)]
enum Counted {
    AsIs,
    Floor,
    Cap,
}

impl Budget {
    const UNLIMITED: Budget = Budget {
        size: u64::MAX,
        counted: Counted::AsIs,
        bytes: u64::MAX,
        values: u64::MAX,
    };

    /// The budget of `text` under a size cap of `cap` bytes.
    fn of(text: &str, cap: u64) -> Budget {
        let len = text.len() as u64;
        let (size, counted) = if len.max(FLOOR) > cap {
            (cap.max(1), Counted::Cap)
        } else if len < FLOOR {
            (FLOOR, Counted::Floor)
        } else {
            (len, Counted::AsIs)
        };
        Budget {
            size,
            counted,
            bytes: size.saturating_mul(4),
            values: size.saturating_add(1),
        }
    }

    /// "a 1088603-byte file", as the budget counts it.
    fn file(&self) -> String {
        match self.counted {
            Counted::AsIs => format!("a {}-byte file", self.size),
            Counted::Floor => format!("a file of up to {} bytes", self.size),
            Counted::Cap => format!("a file within the {}-byte size limit", self.size),
        }
    }
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
) -> Result<(Option<Value>, Vec<String>), super::ParseError> {
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

/// The deepest flow nesting (`[` / `{`) libyaml is asked to parse. Its
/// scanner does work proportional to the flow depth for every token, so a
/// deeply nested flow collection costs quadratic time before the parser's own
/// recursion limit (128) applies. Anything deeper than the recursion limit is
/// an error anyway; this only finds it first, in one linear pass.
const MAX_FLOW_DEPTH: usize = 128;

/// The position of the first flow indicator nested deeper than
/// [`MAX_FLOW_DEPTH`], if any. A byte count gates the scan, so a text with
/// few brackets costs one pass of a simple loop.
pub(crate) fn flow_too_deep(text: &str) -> Option<Pos> {
    let bytes = text.as_bytes();
    if bytes.iter().filter(|&&b| b == b'[' || b == b'{').count() <= MAX_FLOW_DEPTH {
        return None;
    }
    let mut depth = 0usize;
    let mut i = 0;
    // The last byte that was not a space or tab on the current line.
    let mut prev: Option<u8> = None;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\n' => prev = None,
            b' ' | b'\t' => {}
            b'#' if i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n') => {
                i += bytes[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .unwrap_or(bytes.len() - i);
                continue;
            }
            b'"' | b'\'' if depth > 0 => {
                // A quoted scalar inside a flow collection: skip it.
                let mut j = i + 1;
                while j < bytes.len() && bytes[j] != b {
                    j += if b == b'"' && bytes[j] == b'\\' { 2 } else { 1 };
                }
                i = j + 1;
                prev = Some(b);
                continue;
            }
            b'[' | b'{'
                if depth > 0
                    || matches!(prev, None | Some(b':' | b'-' | b'?'))
                        && (i == 0 || matches!(bytes[i - 1], b' ' | b'\t' | b'\n')) =>
            {
                depth += 1;
                if depth > MAX_FLOW_DEPTH {
                    return Some(super::offset_to_pos(text, i));
                }
                prev = Some(b);
            }
            b']' | b'}' if depth > 0 => {
                depth -= 1;
                prev = Some(b);
            }
            _ => prev = Some(b),
        }
        i += 1;
    }
    None
}

/// The position of the first alias (`*name`).
fn first_alias(text: &str) -> Option<Pos> {
    walk(text, |event, pos, _, _| {
        matches!(event, Event::Alias(..)).then_some(pos)
    })
}

/// Walks the event stream; `visit` sees each event with its position and the
/// JSON pointer of the node it belongs to. Stops at the first scan error or
/// when `visit` returns `Some`. The pointer is one string, extended and cut
/// back as the walk goes, so each event costs its own key, not its path.
fn walk<T>(text: &str, mut visit: impl FnMut(&Event, Pos, &str, bool) -> Option<T>) -> Option<T> {
    enum Frame {
        Seq(usize),
        Map { key: Option<String> },
    }
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<(Frame, usize)> = Vec::new(); // frame, pointer length before it
    let mut pointer = String::new();
    loop {
        let (event, mark) = parser.next_token().ok()?;
        let pos = (mark.line(), mark.col() + 1);
        if matches!(event, Event::StreamEnd) {
            return None;
        }
        // Is this event a mapping key?
        let is_key = matches!(stack.last(), Some((Frame::Map { key: None }, _)));
        // The pointer of the node this event starts.
        let base_len = pointer.len();
        if !is_key && !matches!(event, Event::SequenceEnd | Event::MappingEnd) {
            match stack.last_mut() {
                Some((Frame::Seq(i), _)) => {
                    pointer.push('/');
                    pointer.push_str(&i.to_string());
                    *i += 1;
                }
                Some((Frame::Map { key }, _)) => {
                    pointer.push('/');
                    pointer.push_str(&super::escape_pointer(key.as_deref().unwrap_or("")));
                }
                None => {}
            }
        }
        if let Some(found) = visit(&event, pos, &pointer, is_key) {
            return Some(found);
        }
        match event {
            Event::SequenceStart(..) => stack.push((Frame::Seq(0), base_len)),
            Event::MappingStart(..) => stack.push((Frame::Map { key: None }, base_len)),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((_, len)) = stack.pop() {
                    pointer.truncate(len);
                }
                value_done(&mut stack);
            }
            Event::Scalar(s, ..) if is_key => {
                if let Some((Frame::Map { key }, _)) = stack.last_mut() {
                    *key = Some(s);
                }
            }
            Event::Scalar(..) | Event::Alias(..) => {
                pointer.truncate(base_len);
                value_done(&mut stack);
            }
            _ => pointer.truncate(base_len),
        }
    }
    fn value_done(stack: &mut [(Frame, usize)]) {
        if let Some((Frame::Map { key }, _)) = stack.last_mut() {
            *key = None;
        }
    }
}

/// The position of the node at `pointer` (its key, if `key` is set).
pub(crate) fn locate(text: &str, pointer: &str, key: bool) -> Option<Pos> {
    if pointer.is_empty() {
        return walk(text, |event, pos, _, _| {
            matches!(
                event,
                Event::MappingStart(..) | Event::SequenceStart(..) | Event::Scalar(..)
            )
            .then_some(pos)
        })
        .or(Some((1, 1)));
    }
    // A block mapping's start event is marked where its first `:` is; the
    // first key's position reads better.
    let mut mapping_at: Option<Pos> = None;
    walk(text, |event, pos, p, is_key| {
        if let Some(at) = mapping_at {
            return Some(match event {
                Event::Scalar(..) if is_key && pos.0 == at.0 && pos.1 < at.1 => pos,
                _ => at,
            });
        }
        if key {
            // The key event of the last segment: its parent pointer matches and it names the key.
            let (parent, last) = pointer.rsplit_once('/')?;
            if is_key
                && let Event::Scalar(s, ..) = event
                && p == parent
                && super::escape_pointer(s) == last
            {
                return Some(pos);
            }
            None
        } else if !is_key
            && p == pointer
            && !matches!(event, Event::SequenceEnd | Event::MappingEnd)
        {
            if let Event::MappingStart(..) = event {
                mapping_at = Some(pos);
                return None;
            }
            Some(pos)
        } else {
            None
        }
    })
    .or(mapping_at)
    .or_else(|| {
        if key {
            locate(text, pointer, false)
        } else {
            None
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_order_of_one_mappings_keys_is_kept_in_the_same_parse() {
        let order = |text: &str| parse_keeping_order(text, u64::MAX, "fields").map(|(_, o)| o);
        let text = "version: 2\nzeta: {b: 1, a: 2}\nfields:\n  zz: {strategy: OVERRIDE, \
                    fields: {y: 1, x: 2}}\n  aa: [{k: 1}]\n  mm: {}\nafter: {q: 1}\n";
        assert_eq!(order(text).unwrap(), ["zz", "aa", "mm"]);
        assert_eq!(order("{fields: {b: 1, a: 2}}").unwrap(), ["b", "a"]);
        // Only the root's key counts, and only when it holds a mapping.
        assert!(order("x: {fields: {b: 1, a: 2}}").unwrap().is_empty());
        assert!(order("- fields: {b: 1}").unwrap().is_empty());
        assert!(order("fields: [{b: 1}]").unwrap().is_empty());
        assert!(order("fields: {b: 1, b: 2}").is_err());
        // Nothing is left recording for the next parse on this thread.
        assert!(ORDER.with(|o| o.borrow().is_none()));
        assert_eq!(
            parse("fields: {b: 1}", u64::MAX).unwrap().unwrap()["fields"]["b"],
            1
        );
    }

    #[test]
    fn parser_positions_are_cut_from_messages() {
        assert_eq!(
            without_position("did not find expected ',' at line 3 column 1, while parsing a flow"),
            "did not find expected ',', while parsing a flow"
        );
        assert_eq!(without_position("no position here"), "no position here");
        assert_eq!(without_position("x at line 4 column 2"), "x");
        assert_eq!(
            without_position("a at line 2 column 9, while parsing b at line 1 column 3"),
            "a, while parsing b"
        );
    }

    /// The densest texts without aliases: most values per byte, most
    /// string bytes per byte. None reaches its budget, even at the cap.
    #[test]
    fn plain_text_never_reaches_its_budget() {
        let n = 100_000;
        let texts = [
            format!("[{}a]", "a,".repeat(n)),
            format!("[{}[]]", "[],".repeat(n)),
            "-\n".repeat(n),
            format!("[{}{{a}}]", "{a},".repeat(n)),
            format!("k: \"{}\"\n", "\\L".repeat(n)),
            format!("k: [{}]\n", "\"\\L\",".repeat(n)),
            format!("? {}\n: x\n", "y".repeat(n)),
            "[a]".into(),
            "~".into(),
            "".into(),
        ];
        for text in &texts {
            for cap in [text.len() as u64, super::super::DEFAULT_MAX_BYTES] {
                let parsed = parse(text, cap).map_err(|(_, kind)| kind);
                assert!(
                    parsed.is_ok(),
                    "cap {cap}: {}: {parsed:?}",
                    &text[..text.len().min(40)]
                );
            }
        }
    }

    #[test]
    fn aliases_that_expand_past_the_budget_are_refused_at_the_first_alias() {
        let big = "x".repeat(100_000);
        let strings = format!("a: 1\ns: &s \"{big}\"\nl: [*s, *s, *s, *s, *s]\n");
        let (pos, kind) = parse(&strings, 4 << 20).unwrap_err();
        assert_eq!(pos, Some((3, 5)));
        let msg = kind.to_string();
        assert!(msg.contains("aliases expand to more than 400"), "{msg}");
        // Four copies fit (the text counts once, its copies four times).
        let four = format!("s: &s \"{big}\"\nl: [*s, *s, *s]\n");
        assert!(parse(&four, 4 << 20).is_ok());

        let values = format!(
            "a: &a [{}]\nb: &b [{}]\n",
            vec!["x"; 1000].join(", "),
            vec!["*a"; 1000].join(", ")
        );
        let (pos, kind) = parse(&values, 4 << 20).unwrap_err();
        assert_eq!(pos, Some((2, 8)));
        assert!(
            kind.to_string().contains("more than 65537 values"),
            "{kind}"
        );
        // A smaller cap makes a smaller budget.
        let (_, kind) = parse(&strings, 70_000).unwrap_err();
        assert!(kind.to_string().contains("280000 bytes"), "{kind}");
    }

    #[test]
    fn deep_flow_nesting_is_found_before_parsing() {
        let deep = format!("a:\n  b: {}{}\n", "[".repeat(200), "]".repeat(200));
        assert_eq!(flow_too_deep(&deep), Some((2, 6 + MAX_FLOW_DEPTH)));
        let shallow = format!(
            "a: {}{}\n",
            "[".repeat(MAX_FLOW_DEPTH),
            "]".repeat(MAX_FLOW_DEPTH)
        );
        assert_eq!(flow_too_deep(&shallow), None);
    }

    #[test]
    fn brackets_that_open_no_flow_collection_do_not_count() {
        // Inside plain and quoted scalars, comments, and balanced pairs.
        let many = "[".repeat(300);
        for text in [
            format!("a: x{many}\n"),
            format!("a: \"{many}\"\n"),
            format!("a: ok # {many}\n"),
            format!("a: [\"{many}\", '{many}']\n"),
            "k: [a]\n".repeat(300),
        ] {
            assert_eq!(flow_too_deep(&text), None, "{text}");
        }
    }
}
