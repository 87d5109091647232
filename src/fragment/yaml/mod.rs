//! YAML: the value of a text, built in one pass over yaml-rust2's events,
//! with the positions of what is wrong with it. The same parser indexes
//! positions when one is asked for ([`super::index`]), so a value and its
//! place never come from two readers that could disagree.
//!
//! The builder is strict: duplicate keys, non-string keys, merge keys
//! (`<<`), tags other than the core schema's, numbers JSON cannot hold and
//! more than one document are errors, each at the node it is about. Scalars
//! resolve by the YAML 1.2 core schema ([`resolve`]).
//!
//! Aliases are expanded: an alias replays the events of its anchor, which
//! were logged as they went by (only events inside an anchored node are
//! kept). So a small text can stand for a huge value; what one text may
//! expand to is bounded by a [`Budget`] tied to its size and the size cap,
//! charged value by value as the value is built, and the parse stops as
//! soon as it is spent: a text without aliases never reaches it. Nesting,
//! through aliases too, stops at [`MAX_DEPTH`], so neither building nor
//! dropping a value recurses deeper.

mod resolve;

use std::ops::Range;

use serde_json::{Map, Value};
use yaml_rust2::parser::{Event, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};

use crate::error::DiagnosticKind;
use crate::text::{EXCERPT_CHARS, MESSAGE_CHARS, excerpt};

use self::resolve::{Kind, Scalar};
use super::index::{Index, YamlIndexer};
use super::{ParseError, Pos};

/// The deepest nesting of lists and mappings a value may have (the limit
/// serde_yaml had, which no skill comes near).
const MAX_DEPTH: usize = 128;

/// Parses one YAML document, its aliases expanding to no more than its
/// [`Budget`] under a size cap of `cap` bytes allows. `Ok(None)` for an
/// empty or comment-only text, or a document that is only `null`.
pub(crate) fn parse(text: &str, cap: u64) -> Result<Option<Value>, ParseError> {
    read(text, cap, None, None).map(|(v, _, _)| v)
}

/// Parses like [`parse`], and indexes every node's position in the same
/// pass (positions `line_offset` lines down): for a fragment whose
/// positions are known to be needed, one scan of the text instead of two.
pub(crate) fn parse_indexed(
    text: &str,
    cap: u64,
    line_offset: usize,
) -> Result<(Option<Value>, Option<Index>), ParseError> {
    read(text, cap, None, Some(line_offset)).map(|(v, _, index)| (v, index))
}

/// Parses like [`parse`], and also gives the keys of the mapping under the
/// root's `key` in the order the text writes them (empty when there is no
/// such mapping), in the same pass.
pub(crate) fn parse_keeping_order(
    text: &str,
    cap: u64,
    key: &'static str,
) -> Result<(Option<Value>, Vec<String>), ParseError> {
    read(text, cap, Some(key), None).map(|(v, keys, _)| (v, keys))
}

/// What one pass over a YAML text gives: its value, the key order asked
/// for, and its positions if asked.
type Read = (Option<Value>, Vec<String>, Option<Index>);

fn read(
    text: &str,
    cap: u64,
    order: Option<&'static str>,
    index: Option<usize>,
) -> Result<Read, ParseError> {
    // A byte order mark starts the stream, not the text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if let Some(pos) = flow_too_deep(text) {
        return Err((Some(pos), DiagnosticKind::TooDeep));
    }
    if let Some((pos, c)) = control_character(text) {
        let message = if c == '\u{feff}' {
            "a byte order mark (U+FEFF) may only start the file; write it as \\uFEFF in a double-quoted string".into()
        } else {
            format!(
                "control character U+{:04X} is not allowed in YAML; write it as an escape in a double-quoted string",
                c as u32
            )
        };
        return Err((Some(pos), DiagnosticKind::Syntax { message }));
    }
    // The parser is given a text that ends with a line break (see
    // `Builder::block_at_end`); an error past the end of the file is put
    // at its end.
    let terminated;
    let input = if text.is_empty() || text.ends_with(['\n', '\r']) {
        text
    } else {
        terminated = format!("{text}\n");
        &terminated
    };
    let mut builder = Builder::new(text, input, cap, order);
    builder.indexer = index.map(YamlIndexer::new);
    builder.run().map_err(|(pos, kind)| {
        let end = || super::offset_to_pos(text, text.len());
        (
            pos.map(|p| {
                if input.len() > text.len() {
                    p.min(end())
                } else {
                    p
                }
            }),
            kind,
        )
    })
}

/// The first character YAML does not allow in a text (outside `c-printable`:
/// C0 and C1 controls but tab, line feed, carriage return and next line;
/// DEL; U+FFFE and U+FFFF), or a byte order mark after its start (not a
/// content character, `nb-char`), and where it is. libyaml refused the
/// first and read the second as white space or a new document; yaml-rust2
/// reads both as text, so two readers would see two values.
fn control_character(text: &str) -> Option<(Pos, char)> {
    let printable = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | ' '..='~' | '\u{85}')
            || (('\u{a0}'..='\u{fffd}').contains(&c) && c != '\u{feff}')
            || c >= '\u{10000}'
    };
    // Every character the test refuses starts with a byte below 0x20, 0x7f,
    // 0xc2 (C1) or 0xef (U+FFFE/F): most texts are passed over bytewise.
    let bytes = text.as_bytes();
    let mut at = 0;
    while let Some(i) = bytes[at..]
        .iter()
        .position(|&b| b < 0x20 || b == 0x7f || b == 0xc2 || b == 0xef)
    {
        let i = at + i;
        let c = text[i..].chars().next()?;
        if !printable(c) {
            return Some((super::offset_to_pos(text, i), c));
        }
        at = i + c.len_utf8();
    }
    None
}

/// Builds the value of one text from the parser's events.
struct Builder<'t> {
    /// The text as written.
    text: &'t str,
    /// What the parser reads: `text`, with a line break added when it does
    /// not end with one.
    input: &'t str,
    /// How many characters `input` has, once needed.
    input_chars: Option<usize>,
    parser: Parser<std::str::Chars<'t>>,
    budget: Budget,
    /// The open lists and mappings, outermost first.
    stack: Vec<Frame>,
    root: Option<Value>,
    /// Where the first alias is: what the budget's errors point at.
    first_alias: Option<Pos>,
    /// The events of anchored nodes, in order, for aliases to replay.
    log: Vec<Logged>,
    /// Each anchor's events in [`Builder::log`] (by the parser's anchor id),
    /// once its node is complete.
    anchors: Vec<Option<Range<usize>>>,
    /// How many of the open frames are anchored: events are logged while
    /// any is.
    anchored: usize,
    /// Is an alias being replayed (its events are in the log already)?
    replaying: bool,
    /// The root key whose mapping's key order is recorded, and that order.
    order: Option<(&'static str, Vec<String>)>,
    /// The positions of the nodes, indexed from the same events, when asked.
    indexer: Option<YamlIndexer>,
}

/// An open list or mapping.
struct Frame {
    node: Node,
    /// Its anchor id and where its events start in the log.
    anchor: Option<(usize, usize)>,
}

enum Node {
    Seq(Vec<Value>),
    /// A mapping, and the key whose value comes next, with its place.
    Map(Map<String, Value>, Option<(String, Pos)>),
}

/// An event of an anchored node, as an alias replays it.
#[derive(Clone)]
enum Logged {
    Open(Kind),
    Close,
    /// A resolved scalar; `merge` for a plain `<<`.
    Scalar {
        value: Value,
        merge: bool,
    },
    Alias(usize),
}

/// What a person writes to fix the commonest YAML mistakes, from the
/// parser's message and the line it points at (`at`: line and column,
/// counted from 1).
fn syntax_advice(info: &str, text: &str, at: Pos) -> Option<&'static str> {
    let line = text.lines().nth(at.0.saturating_sub(1)).unwrap_or("");
    let indent = &line[..line.len() - line.trim_start().len()];
    if indent.contains('\t') || line.trim_start().starts_with('\t') {
        return Some("YAML indents with spaces, never tabs: replace the tab with spaces");
    }
    let value_holds_colon = line
        .split_once(": ")
        .is_some_and(|(_, value)| value.contains(": ") || value.trim_end().ends_with(':'));
    if info.contains("mapping values are not allowed") && value_holds_colon {
        return Some(
            "a value holding ': ' must be quoted: put it in double quotes, as \
             `description: \"Use for: this\"`",
        );
    }
    if info.contains("mapping values are not allowed")
        || info.contains("did not find expected key")
        || info.contains("did not find expected '-'")
        || info.contains("invalid indentation")
        || info.contains("block sequence entries are not allowed")
    {
        return Some(
            "check the indentation: the keys of one mapping, and the '-' of one list, \
             start in the same column",
        );
    }
    if info.contains("cannot start any token") && line.contains('\t') {
        return Some("YAML indents with spaces, never tabs: replace the tab with spaces");
    }
    None
}

fn pos(mark: &Marker) -> Pos {
    (mark.line(), mark.col() + 1)
}

impl<'t> Builder<'t> {
    fn new(text: &'t str, input: &'t str, cap: u64, order: Option<&'static str>) -> Builder<'t> {
        Builder {
            text,
            input,
            input_chars: None,
            parser: Parser::new_from_str(input),
            budget: Budget::of(text, cap),
            stack: Vec::new(),
            root: None,
            first_alias: None,
            log: Vec::new(),
            anchors: Vec::new(),
            anchored: 0,
            replaying: false,
            order: order.map(|k| (k, Vec::new())),
            indexer: None,
        }
    }

    fn run(mut self) -> Result<Read, ParseError> {
        let mut documents = 0;
        loop {
            let (event, mark) = self.parser.next_token().map_err(|e| {
                let at = pos(e.marker());
                let mut message = excerpt(e.info(), MESSAGE_CHARS);
                if let Some(fix) = syntax_advice(e.info(), self.text, at) {
                    message.push_str("; ");
                    message.push_str(fix);
                }
                (Some(at), DiagnosticKind::Syntax { message })
            })?;
            if let Some(indexer) = self.indexer.as_mut() {
                indexer.event(&event, &mark);
            }
            let at = pos(&mark);
            match event {
                Event::StreamEnd => break,
                Event::DocumentStart => {
                    documents += 1;
                    if documents > 1 {
                        return Err((Some(at), DiagnosticKind::MultipleDocuments));
                    }
                }
                Event::Nothing | Event::StreamStart | Event::DocumentEnd => {}
                Event::SequenceStart(anchor, tag) => {
                    resolve::collection(tag.as_ref(), Kind::Seq).map_err(|k| (Some(at), k))?;
                    self.open(Kind::Seq, anchor, at)?;
                }
                Event::MappingStart(anchor, tag) => {
                    if let Err(kind) = resolve::collection(tag.as_ref(), Kind::Map) {
                        return Err((Some(self.mapping_at(at)), kind));
                    }
                    self.open(Kind::Map, anchor, at)?;
                }
                Event::SequenceEnd | Event::MappingEnd => self.close()?,
                Event::Scalar(mut text, style, anchor, tag) => {
                    let plain = style == TScalarStyle::Plain;
                    if matches!(style, TScalarStyle::Literal | TScalarStyle::Folded) {
                        text = self.block_at_end(text, &mark);
                    }
                    let merge = resolve::is_merge_key(&text, plain, tag.as_ref());
                    let scalar =
                        resolve::scalar(text, plain, tag.as_ref()).map_err(|k| (Some(at), k))?;
                    self.scalar(scalar, merge, anchor, at)?;
                }
                Event::Alias(id) => self.alias(id, at)?,
            }
        }
        let value = self.root.take().filter(|v| !v.is_null());
        let keys = match (&value, self.order.take()) {
            (Some(Value::Object(root)), Some((key, keys)))
                if root.get(key).is_some_and(Value::is_object) =>
            {
                keys
            }
            _ => Vec::new(),
        };
        Ok((value, keys, self.indexer.map(YamlIndexer::finish)))
    }

    /// The value of a block scalar (`|`, `>`) that ends the input, as the
    /// YAML spec (and libyaml, which serde_yaml used) reads it. yaml-rust2
    /// 0.13 gives one line break too many there: a block scalar without
    /// content ends in one (`k: |` at the end is `""`, and `k: |+` is `""`
    /// when no empty line follows), and a last line without a line break
    /// gets one (`k: |` then `  text` at the end is `"text"`). The second
    /// never happens because the parser reads the text with a line break
    /// added; this takes back what that break added to the last scalar.
    fn block_at_end(&mut self, mut value: String, mark: &Marker) -> String {
        let ends_input = match self.parser.peek() {
            Ok((_, next)) => {
                let chars = *self
                    .input_chars
                    .get_or_insert_with(|| self.input.chars().count());
                next.index() >= chars
            }
            Err(_) => false,
        };
        if !ends_input {
            return value;
        }
        if !value.is_empty() && value.bytes().all(|b| b == b'\n') {
            // No content: the parser marks the header (`|+2`, ...).
            let Some((start, _)) = self.input.char_indices().nth(mark.index()) else {
                return value;
            };
            let header = &self.input[start..];
            if !header.starts_with(['|', '>']) {
                return value;
            }
            if !header[1..].chars().take(2).any(|c| c == '+') {
                return String::new();
            }
            // Keep: one line feed for each empty line after the header's.
            let after = self.text.get(start..).unwrap_or("");
            let breaks = after.matches('\n').count() + after.matches('\r').count()
                - after.matches("\r\n").count();
            return "\n".repeat(breaks.saturating_sub(1));
        }
        if self.input.len() > self.text.len() {
            // The last line was not ended; the parser read it as if it were.
            let last = self.text.rsplit(['\n', '\r']).next().unwrap_or("");
            let indent = mark.col();
            let lead = last.chars().take_while(|&c| c == ' ').count();
            let len = last.chars().count();
            if lead >= indent && len > indent {
                // A content line: its added line break goes.
                if value.ends_with('\n') {
                    value.pop();
                }
            } else if lead == len && value.ends_with("\n\n") {
                // A blank line, which counted as an empty line kept.
                value.pop();
            }
        }
        value
    }

    /// Where a mapping that starts at `at` is best pointed at: a block
    /// mapping's start is marked at its first `:`, and its first key, on
    /// the same line, reads better.
    fn mapping_at(&mut self, at: Pos) -> Pos {
        match self.parser.peek() {
            Ok((Event::Scalar(..), mark)) if mark.line() == at.0 && mark.col() + 1 < at.1 => {
                pos(mark)
            }
            _ => at,
        }
    }

    /// Are events being logged for an alias to replay?
    fn logging(&self) -> bool {
        self.anchored > 0 && !self.replaying
    }

    /// Does the next node fill a mapping's key?
    fn at_key(&self) -> bool {
        matches!(
            self.stack.last(),
            Some(Frame {
                node: Node::Map(_, None),
                ..
            })
        )
    }

    /// Charges one value (unless it is a key) holding `bytes` bytes of text;
    /// an overdraft is reported at the first alias, the cause of it.
    fn charge(&mut self, bytes: usize, value: bool, at: Pos) -> Result<(), ParseError> {
        self.budget
            .charge(bytes as u64, value)
            .map_err(|kind| (Some(self.first_alias.unwrap_or(at)), kind))
    }

    fn open(&mut self, kind: Kind, anchor: usize, at: Pos) -> Result<(), ParseError> {
        if self.stack.len() >= MAX_DEPTH {
            let at = if kind == Kind::Map && !self.replaying {
                self.mapping_at(at)
            } else {
                at
            };
            return Err((Some(at), DiagnosticKind::TooDeep));
        }
        if self.at_key() {
            let key = format!("({})", kind.noun());
            return Err((Some(at), DiagnosticKind::NonStringKey { key }));
        }
        self.charge(0, true, at)?;
        if kind == Kind::Map
            && let Err(e) = self.budget.charge_mapping()
        {
            let at = if self.replaying {
                at
            } else {
                self.mapping_at(at)
            };
            return Err((Some(at), e));
        }
        let anchor = (anchor != 0).then(|| {
            self.anchored += 1;
            (anchor, self.log.len())
        });
        if self.logging() {
            self.log.push(Logged::Open(kind));
        }
        let node = match kind {
            Kind::Seq => Node::Seq(Vec::new()),
            Kind::Map => Node::Map(Map::new(), None),
        };
        self.stack.push(Frame { node, anchor });
        Ok(())
    }

    fn close(&mut self) -> Result<(), ParseError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        if self.logging() {
            self.log.push(Logged::Close);
        }
        if let Some((id, start)) = frame.anchor {
            self.anchored -= 1;
            self.anchor_done(id, start);
        }
        self.place(match frame.node {
            Node::Seq(items) => Value::Array(items),
            Node::Map(map, _) => Value::Object(map),
        })
    }

    fn anchor_done(&mut self, id: usize, start: usize) {
        if self.anchors.len() <= id {
            self.anchors.resize(id + 1, None);
        }
        self.anchors[id] = Some(start..self.log.len());
    }

    /// Puts a finished value where the next value goes. A key the mapping
    /// has already is an error at the key (found here, with the one look-up
    /// that inserts).
    fn place(&mut self, value: Value) -> Result<(), ParseError> {
        match self.stack.last_mut() {
            None => self.root = Some(value),
            Some(Frame {
                node: Node::Seq(items),
                ..
            }) => items.push(value),
            Some(Frame {
                node: Node::Map(map, slot),
                ..
            }) => {
                if let Some((key, at)) = slot.take() {
                    match map.entry(key) {
                        serde_json::map::Entry::Vacant(e) => {
                            e.insert(value);
                        }
                        serde_json::map::Entry::Occupied(e) => {
                            let key = excerpt(e.key(), EXCERPT_CHARS);
                            return Err((Some(at), DiagnosticKind::DuplicateKey { key }));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// A scalar from the text, as a key or a value.
    fn scalar(
        &mut self,
        scalar: Scalar,
        merge: bool,
        anchor: usize,
        at: Pos,
    ) -> Result<(), ParseError> {
        let value = if self.at_key() {
            let key = match scalar {
                Scalar::Value(v) => v,
                Scalar::NonFinite(f) => return Err(non_string_key(f.to_string(), at)),
                Scalar::OutOfRange(text) => return Err(non_string_key(text, at)),
            };
            self.charge(text_len(&key), false, at)?;
            let logged = self.logged(&key, merge, anchor);
            self.key(key, merge, at)?;
            logged
        } else {
            let value = match scalar {
                Scalar::Value(v) => v,
                Scalar::NonFinite(f) => {
                    let message =
                        format!("{f} is not a finite number and cannot be represented in JSON");
                    return Err((Some(at), DiagnosticKind::Syntax { message }));
                }
                Scalar::OutOfRange(text) => {
                    let value = excerpt(&text, EXCERPT_CHARS);
                    return Err((Some(at), DiagnosticKind::NumberOutOfRange { value }));
                }
            };
            self.charge(text_len(&value), true, at)?;
            let logged = self.logged(&value, merge, anchor);
            self.place(value)?;
            logged
        };
        if let Some(start) = value {
            self.anchor_done(anchor, start);
        }
        Ok(())
    }

    /// Logs a scalar if it is inside an anchored node or anchored itself;
    /// gives where it is logged when it is anchored.
    fn logged(&mut self, value: &Value, merge: bool, anchor: usize) -> Option<usize> {
        if !self.logging() && anchor == 0 {
            return None;
        }
        let start = self.log.len();
        self.log.push(Logged::Scalar {
            value: value.clone(),
            merge,
        });
        (anchor != 0).then_some(start)
    }

    /// Takes `key` as the next key of the innermost mapping.
    fn key(&mut self, key: Value, merge: bool, at: Pos) -> Result<(), ParseError> {
        let key = match key {
            Value::String(s) => s,
            Value::Number(n) => {
                // As a float prints: `1.0` is `1`.
                let shown = n
                    .as_f64()
                    .filter(|_| n.is_f64())
                    .map_or(n.to_string(), |f| f.to_string());
                return Err(non_string_key(shown, at));
            }
            other => return Err(non_string_key(other.to_string(), at)),
        };
        if merge {
            return Err((Some(at), DiagnosticKind::MergeKey));
        }
        let depth = self.stack.len();
        let (ordered, rest) = self.stack.split_at_mut(depth.saturating_sub(1));
        let Some(Frame {
            node: Node::Map(_, slot),
            ..
        }) = rest.last_mut()
        else {
            return Ok(());
        };
        if let Some((root_key, keys)) = &mut self.order
            && let [
                Frame {
                    node: Node::Map(_, Some((k, _))),
                    ..
                },
            ] = ordered
            && k == root_key
        {
            keys.push(key.clone());
        }
        *slot = Some((key, at));
        Ok(())
    }

    /// Expands alias `id` by replaying its anchor's events.
    fn alias(&mut self, id: usize, at: Pos) -> Result<(), ParseError> {
        self.first_alias.get_or_insert(at);
        if self.logging() {
            self.log.push(Logged::Alias(id));
        }
        let Some(range) = self.anchors.get(id).cloned().flatten() else {
            let message = "an alias refers to the node that holds it".to_owned();
            return Err((Some(at), DiagnosticKind::Syntax { message }));
        };
        self.replaying = true;
        let replayed = self.replay(range, at);
        self.replaying = false;
        replayed
    }

    /// Feeds the logged events in `range` to the builder again, aliases
    /// among them expanded in turn; every error is at `at`, the alias.
    /// Each nested alias is inside a list or mapping it replays, so the
    /// cursors are never more than [`MAX_DEPTH`] deep.
    fn replay(&mut self, range: Range<usize>, at: Pos) -> Result<(), ParseError> {
        let mut cursors = vec![range];
        while let Some(cursor) = cursors.last_mut() {
            let Some(i) = cursor.next() else {
                cursors.pop();
                continue;
            };
            match &self.log[i] {
                Logged::Open(kind) => self.open(*kind, 0, at)?,
                Logged::Close => self.close()?,
                Logged::Alias(id) => {
                    if let Some(Some(range)) = self.anchors.get(*id) {
                        cursors.push(range.clone());
                    }
                }
                Logged::Scalar { value, merge } => {
                    let (len, merge) = (text_len(value), *merge);
                    let key = self.at_key();
                    // Charged before it is copied, so an overdraft copies nothing.
                    self.charge(len, !key, at)?;
                    let Logged::Scalar { value, .. } = &self.log[i] else {
                        unreachable!("the same entry")
                    };
                    let value = value.clone();
                    if key {
                        self.key(value, merge, at)?;
                    } else {
                        self.place(value)?;
                    }
                }
            }
        }
        Ok(())
    }
}

/// The bytes of text a scalar holds, for the budget.
fn text_len(v: &Value) -> usize {
    match v {
        Value::String(s) => s.len(),
        _ => 0,
    }
}

fn non_string_key(shown: String, at: Pos) -> ParseError {
    let key = excerpt(&shown, EXCERPT_CHARS);
    (Some(at), DiagnosticKind::NonStringKey { key })
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
    /// The size cap, and how many more mappings the text may hold under it
    /// ([`CAP_BYTES_PER_MAPPING`]).
    cap: u64,
    mappings: u64,
}

/// Bytes of the size cap per mapping a text may hold. A mapping is a
/// B-tree node of about 600 bytes however few entries it has, so a text of
/// tiny mappings (`{a: 1}, ` is 8 bytes) would cost 80 times its size, 370
/// MiB at the 4 MiB cap before anything else was done with it. One mapping
/// per 32 bytes of the cap (131,072 under the default cap, a value of about
/// 90 MiB) is far more than any skill has, and what is merged and explained
/// from it stays within the memory target (`benches/README.md`).
const CAP_BYTES_PER_MAPPING: u64 = 32;

#[derive(Debug, Clone, Copy)]
enum Counted {
    AsIs,
    Floor,
    Cap,
}

impl Budget {
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
            cap,
            mappings: cap / CAP_BYTES_PER_MAPPING,
        }
    }

    /// Charges one mapping.
    fn charge_mapping(&mut self) -> Result<(), DiagnosticKind> {
        if self.mappings == 0 {
            return Err(DiagnosticKind::TooManyMappings {
                limit: self.cap / CAP_BYTES_PER_MAPPING,
                cap: self.cap,
            });
        }
        self.mappings -= 1;
        Ok(())
    }

    /// "a 1088603-byte file", as the budget counts it.
    fn file(&self) -> String {
        match self.counted {
            Counted::AsIs => format!("a {}-byte file", self.size),
            Counted::Floor => format!("a file of up to {} bytes", self.size),
            Counted::Cap => format!("a file within the {}-byte size limit", self.size),
        }
    }

    /// Charges one value (unless it is a key) holding `bytes` bytes of text.
    fn charge(&mut self, bytes: u64, value: bool) -> Result<(), DiagnosticKind> {
        let over = |what: String| DiagnosticKind::Syntax {
            message: format!("aliases expand to {what}; write the values out or use fewer aliases"),
        };
        if value && self.values == 0 {
            return Err(over(format!(
                "more than {} values, the most {} may hold (one per byte)",
                self.size.saturating_add(1),
                self.file()
            )));
        }
        if bytes > self.bytes {
            return Err(over(format!(
                "more than {} bytes of text, four times {}",
                self.size.saturating_mul(4),
                self.file()
            )));
        }
        self.bytes -= bytes;
        self.values -= u64::from(value);
        Ok(())
    }
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
        assert_eq!(
            parse("fields: {b: 1}", u64::MAX).unwrap().unwrap()["fields"]["b"],
            1
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
                // (A text of tiny mappings may pass the bound on mappings,
                // which is the cap's, not the alias budget.)
                assert!(
                    parsed.is_ok() || matches!(parsed, Err(DiagnosticKind::TooManyMappings { .. })),
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
    fn mappings_are_bounded_by_the_cap_through_aliases_too() {
        let maps = |n: usize| format!("l: [{}]\n", vec!["{a: 1}"; n].join(", "));
        // The root mapping counts: 100 in all under a 3,200-byte cap.
        assert!(parse(&maps(99), 3200).is_ok());
        let (pos, kind) = parse(&maps(100), 3200).unwrap_err();
        assert_eq!(pos, Some((1, 5 + 8 * 99)));
        assert_eq!(
            kind,
            DiagnosticKind::TooManyMappings {
                limit: 100,
                cap: 3200
            }
        );
        let aliased = format!("a: &a {{b: 1}}\nl: [{}]\n", vec!["*a"; 99].join(", "));
        let (pos, _) = parse(&aliased, 3200).unwrap_err();
        assert_eq!(pos, Some((2, 5 + 4 * 98)));
        assert!(parse(&maps(100_000), u64::MAX).is_ok());
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
