//! A Markdown body merged by section, when a layer asks for it.
//!
//! The body is an OVERRIDE value: by default a layer's body replaces the
//! lower one whole, as the design says. A team that wants one more section
//! in an upstream skill's instructions should not have to copy the rest
//! (and lose every later upstream edit), so a layer may instead write
//! *changes* to the lower body, section by section. Markdown already has
//! the structure people edit by: a heading and the text under it.
//!
//! How it fits the four strategies: a body is a KEYED_REPLACE list of
//! sections, keyed by heading. The text before the first heading is the
//! section with the empty key; each heading starts the next section, which
//! runs to the next heading of any level (a subsection is a section of its
//! own). A layer's section with a heading the lower body has replaces that
//! section in place; one with a new heading is appended; `$patch: delete`
//! removes one. Insertions before or after a named section, or at the
//! start or end of the body, are entries placed by an anchor instead of at
//! the end. The merged list is joined back into one string, so every
//! consumer of the effective skill still sees a plain body.
//!
//! A layer asks by starting its body with the line
//! `<!-- $patch: sections -->` (or the spec declares `sections: always` for
//! the field). Directives are HTML comments, which Markdown renderers hide:
//!
//! ```markdown
//! <!-- $patch: sections -->
//! ## House style            (a heading the lower body lacks: appended,
//! <!-- $patch: add -->       marked as an addition)
//! Follow references/house-style.md.
//!
//! ## Output                 (a heading it has: replaces that section)
//! Write CSV.
//!
//! ## Legacy
//! <!-- $patch: delete -->   (removes that section)
//!
//! <!-- $patch: before "Usage" -->
//! Read the house style first.   (inserted before the section "Usage")
//! ```
//!
//! `<!-- $patch: after "H" -->`, `<!-- $patch: start -->` and
//! `<!-- $patch: end -->` insert the text that follows them (up to the next
//! heading or directive) after section H, at the start or at the end;
//! `<!-- $patch: replace -->` under a heading says it must replace a lower
//! section (a warning if there is none, so an upstream rename is caught),
//! and `<!-- $patch: add -->` that it is an addition (a warning if a lower
//! section has its heading). A plain heading replaces, or is appended when
//! the lower body lacks it, which is a warning: a replacement whose
//! heading upstream removed must not silently become an addition
//! (the intent of a section).
//! Headings inside fenced code blocks are text. When a heading appears
//! several times, each occurrence is its own key: a layer's second
//! `## Example` is the lower body's second, and a directive names the
//! n-th with `"Example" 2`. The preamble's key is the empty text's first,
//! so a heading with no text (a lone `#`) is `"" 2`, the next `"" 3`.

use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

/// The directive line that asks for a merge by section.
pub const MARKER: &str = "<!-- $patch: sections -->";

/// A section's key: its heading's text and which occurrence of that text
/// it is (1 for the first). The text before the first heading is
/// `("", 1)`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Key {
    /// The heading's text, without its `#`s.
    pub heading: String,
    /// 1 for its first occurrence in the body, 2 for the second, ...
    pub nth: usize,
}

impl Key {
    /// The text before the first heading.
    pub fn preamble() -> Key {
        Key {
            heading: String::new(),
            nth: 1,
        }
    }

    /// How paths and messages name it: `House style`, `Example (2)`,
    /// `(preamble)` for the text before the first heading, and
    /// `(empty heading) (2)` for the first heading with no text (a lone
    /// `#`), which comes after the preamble's empty key.
    pub fn label(&self) -> String {
        match (self.heading.as_str(), self.nth) {
            ("", 1) => "(preamble)".to_owned(),
            ("", n) => format!("(empty heading) ({n})"),
            (h, 1) => h.to_owned(),
            (h, n) => format!("{h} ({n})"),
        }
    }
}

/// A section of a body: a heading line and the text under it, up to the
/// next heading.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Section<'a> {
    /// Its key.
    pub key: Key,
    /// Its text, heading line included, line endings included.
    pub text: Cow<'a, str>,
    /// The 0-based line of the body it starts on.
    pub line: usize,
}

/// The ATX heading a line is (`## Text ##` → level 2, `Text`), if it is one.
fn heading(line: &str) -> Option<(usize, &str)> {
    let trimmed = line.trim_end_matches(['\n', '\r']);
    let indent = trimmed.len() - trimmed.trim_start_matches(' ').len();
    if indent > 3 {
        return None;
    }
    let rest = &trimmed[indent..];
    let level = rest.len() - rest.trim_start_matches('#').len();
    if !(1..=6).contains(&level) {
        return None;
    }
    let after = &rest[level..];
    if !after.is_empty() && !after.starts_with([' ', '\t']) {
        return None;
    }
    let text = after.trim();
    // A closing sequence of #s (preceded by a space) is not part of it.
    let text = match text.trim_end_matches('#') {
        t if t.len() < text.len() && (t.is_empty() || t.ends_with([' ', '\t'])) => t.trim_end(),
        _ => text,
    };
    Some((level, text))
}

/// A code fence line: its character and length.
pub(crate) fn fence(line: &str) -> Option<(char, usize)> {
    let t = line.trim_start_matches(' ');
    if line.len() - t.len() > 3 {
        return None;
    }
    let c = t.chars().next().filter(|c| *c == '`' || *c == '~')?;
    let n = t.len() - t.trim_start_matches(c).len();
    (n >= 3).then_some((c, n))
}

/// The lines of `body` (with their endings), each with whether it is a
/// heading outside a fenced code block, one at a time: nothing is kept per
/// line, so a body of many short lines costs no more than its text.
fn lines(body: &str) -> impl Iterator<Item = (&str, Option<(usize, &str)>)> {
    let mut open: Option<(char, usize)> = None;
    body.split_inclusive('\n').map(move |line| {
        if let Some((c, n)) = open {
            if fence(line).is_some_and(|(c2, n2)| c2 == c && n2 >= n)
                && line.trim().chars().all(|x| x == c)
            {
                open = None;
            }
            return (line, None);
        }
        if let Some(f) = fence(line) {
            open = Some(f);
            return (line, None);
        }
        (line, heading(line))
    })
}

/// How many times each heading's text was met, for the keys of the next:
/// the preamble counts as the first of the empty text, so that an empty
/// heading (`#` alone) is never taken for it.
fn occurrences<'a>() -> HashMap<&'a str, usize> {
    HashMap::from([("", 1)])
}

/// The key of the next heading with text `text`, counted in `seen`
/// ([`occurrences`]).
fn next_key<'a>(seen: &mut HashMap<&'a str, usize>, text: &'a str) -> Key {
    let nth = seen.entry(text).or_insert(0);
    *nth += 1;
    Key {
        heading: text.to_owned(),
        nth: *nth,
    }
}

/// `body` split into sections: the preamble (possibly empty), then one per
/// heading outside fenced code blocks.
pub(crate) fn split(body: &str) -> Vec<Section<'_>> {
    let mut out = Vec::new();
    let mut seen = occurrences();
    let mut start = 0;
    let mut key = Key::preamble();
    let mut line_start = 0;
    let mut offset = 0;
    for (i, (line, h)) in lines(body).enumerate() {
        if let Some((_, text)) = h {
            out.push(Section {
                key: std::mem::replace(&mut key, Key::preamble()),
                text: Cow::Borrowed(&body[start..offset]),
                line: line_start,
            });
            key = next_key(&mut seen, text);
            start = offset;
            line_start = i;
        }
        offset += line.len();
    }
    out.push(Section {
        key,
        text: Cow::Borrowed(&body[start..]),
        line: line_start,
    });
    out
}

/// Where an insertion goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// At the start of the body.
    Start,
    /// At the end of the body.
    End,
    /// Before this section.
    Before(Key),
    /// After this section.
    After(Key),
}

/// What a layer says a section of its body is meant to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Intent {
    /// A plain heading: it replaces the lower section of that heading, or
    /// is appended when there is none, which is a warning (the heading may
    /// have been removed or renamed upstream, and the replacement silently
    /// became an addition).
    Either,
    /// `$patch: replace` under the heading: it must replace a lower
    /// section (a warning when there is none).
    Replace,
    /// `$patch: add` under the heading: it is an addition, appended (a
    /// warning when a lower section has the heading: it replaces it).
    Add,
}

/// One change a layer's body makes to the lower body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Op<'a> {
    /// A section that replaces the lower one with its key, or is appended
    /// when there is none ([`Intent`] says which the layer meant).
    Put {
        /// The section.
        section: Section<'a>,
        /// What the layer said it is for.
        intent: Intent,
    },
    /// Remove the lower section with this key.
    Delete {
        /// Its key.
        key: Key,
        /// The 0-based line of the directive in the layer's body.
        line: usize,
    },
    /// Text placed at an anchor.
    Insert {
        /// Where.
        at: Anchor,
        /// The text, directive line left out.
        text: &'a str,
        /// The 0-based line of the directive.
        line: usize,
    },
}

/// Why a layer's body cannot be read as changes by section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Problem {
    /// The 0-based line in the body.
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// A directive line: `<!-- $patch: VERB ARGS -->`.
fn directive(line: &str) -> Option<&str> {
    line.trim()
        .strip_prefix("<!--")?
        .strip_suffix("-->")?
        .trim()
        .strip_prefix("$patch:")
        .map(str::trim)
}

/// `"Heading" N` (N optional) as a key.
fn key_arg(arg: &str) -> Option<Key> {
    let arg = arg.trim();
    let rest = arg.strip_prefix('"')?;
    let end = rest.rfind('"')?;
    let heading = rest[..end].to_owned();
    let nth = match rest[end + 1..].trim() {
        "" => 1,
        n => n.parse().ok().filter(|n| *n > 0)?,
    };
    Some(Key { heading, nth })
}

/// Does `body` ask to be merged by section (its first non-blank line is
/// [`MARKER`])?
pub fn asks(body: &str) -> bool {
    body.lines().find(|l| !l.trim().is_empty()).map(str::trim) == Some(MARKER)
}

/// The changes a layer's body makes, read from its text (the marker line,
/// if there, left out). Every problem is reported, with its line.
pub(crate) fn ops(body: &str) -> Result<Vec<Op<'_>>, Vec<Problem>> {
    let mut ops = Vec::new();
    let problems = read(body, &mut |op| ops.push(op));
    if problems.is_empty() {
        Ok(ops)
    } else {
        Err(problems)
    }
}

/// The problems of a layer's body of changes ([`ops`] without the changes).
pub(crate) fn problems(body: &str) -> Vec<Problem> {
    read(body, &mut |_| {})
}

/// What the line being read in [`read`] belongs to.
enum Block<'a> {
    /// Text under no heading or directive (the layer's preamble), from
    /// line `line` (byte `start`).
    Text { line: usize, start: usize },
    /// A heading's section; `open` until its first non-blank line after
    /// the heading, which may be a `delete` or `replace` for it.
    Heading {
        key: Key,
        line: usize,
        start: usize,
        open: bool,
    },
    /// A deleted section: the directive's line, and whether anything but
    /// blank lines follows it.
    Deleted { key: Key, line: usize, text: bool },
    /// A section written with `$patch: replace` or `$patch: add`: the
    /// heading's line and byte, the bytes of the directive line, which is
    /// left out, and what the directive says.
    Marked {
        key: Key,
        line: usize,
        start: usize,
        directive: (usize, usize),
        intent: Intent,
    },
    /// The text after a directive (`None`: a directive that is a problem).
    /// `headed`: the text is a new section, whose heading (its line, byte
    /// and text) came right after the directive; `open` until the first
    /// non-blank line after it, which may be a `delete` or `replace` that
    /// makes it the section's heading after all.
    /// the directive; the next heading ends it.
    Insert {
        at: Option<Anchor>,
        line: usize,
        start: usize,
        headed: Option<Headed<'a>>,
    },
}

/// The heading an insertion starts with: line, byte, text, open.
type Headed<'a> = (usize, usize, &'a str, bool);

/// Reads a layer's body of changes in one pass over its lines, giving
/// each change to `op` in order, and returns the problems. A section ends
/// at the next heading or directive line (a directive line ends it even
/// inside a fenced code block).
fn read<'a>(body: &'a str, op: &mut dyn FnMut(Op<'a>)) -> Vec<Problem> {
    let mut reader = Reader {
        body,
        op,
        problems: Vec::new(),
        marker_seen: false,
        seen: occurrences(),
        block: Block::Text { line: 0, start: 0 },
    };
    let mut offset = 0;
    for (i, (text, heading)) in lines(body).enumerate() {
        let (start, end) = (offset, offset + text.len());
        offset = end;
        reader.line(&Line {
            i,
            text,
            heading,
            start,
            end,
        });
    }
    reader.end(body.len());
    reader.problems
}

/// A line of the body [`read`] reads.
struct Line<'a> {
    /// Its 0-based index.
    i: usize,
    /// Its text, line ending included.
    text: &'a str,
    /// The heading it is (level and text), outside fenced code blocks.
    heading: Option<(usize, &'a str)>,
    /// Its first byte in the body, and the byte after it.
    start: usize,
    end: usize,
}

/// The state of [`read`]'s one pass.
struct Reader<'a, 'o> {
    body: &'a str,
    /// Given each change, in order.
    op: &'o mut dyn FnMut(Op<'a>),
    problems: Vec<Problem>,
    /// The marker line was read (a second one is an unknown directive).
    marker_seen: bool,
    /// How many times each heading was seen so far.
    seen: HashMap<&'a str, usize>,
    /// What the line being read belongs to.
    block: Block<'a>,
}

impl<'a> Reader<'a, '_> {
    /// Reads one line: it may say what the block it is in is (a directive
    /// under a heading), start the section an insertion inserts, or end
    /// the block and start another (a heading, a directive).
    fn line(&mut self, l: &Line<'a>) {
        let blank = l.text.trim().is_empty();
        let d = if l.heading.is_some() {
            None
        } else {
            directive(l.text)
        };
        let taken = match &mut self.block {
            // A directive right under a heading applies to the section.
            Block::Heading { open: true, .. } if !blank => self.under_heading(l, d),
            Block::Deleted { text, .. } if !blank && l.heading.is_none() && d.is_none() => {
                *text = true;
                false
            }
            Block::Insert {
                headed: Some((_, _, _, open @ true)),
                ..
            } if !blank => {
                *open = false;
                self.under_inserted_heading(l, d)
            }
            _ => false,
        };
        if taken || self.heads_insertion(l) {
            return;
        }
        if let Some((_, text)) = l.heading {
            let key = next_key(&mut self.seen, text);
            self.start(
                Block::Heading {
                    key,
                    line: l.i,
                    start: l.start,
                    open: true,
                },
                l.start,
            );
        } else if let Some(d) = d {
            self.directive(l, d);
        }
    }

    /// The first line not blank under a heading, directive `d` if it is
    /// one: `delete`, `replace` or `add` there applies to the section.
    /// Whether it did (the line is read).
    fn under_heading(&mut self, l: &Line<'a>, d: Option<&str>) -> bool {
        let Block::Heading {
            key,
            line: heading,
            start: from,
            ..
        } = std::mem::replace(&mut self.block, Block::Text { line: 0, start: 0 })
        else {
            unreachable!("matched by the caller")
        };
        self.block = match d {
            Some("delete") => Block::Deleted {
                key,
                line: l.i,
                text: false,
            },
            Some(verb @ ("replace" | "add")) => Block::Marked {
                key,
                line: heading,
                start: from,
                directive: (l.start, l.end),
                intent: if verb == "add" {
                    Intent::Add
                } else {
                    Intent::Replace
                },
            },
            _ => Block::Heading {
                key,
                line: heading,
                start: from,
                open: false,
            },
        };
        matches!(d, Some("delete" | "replace" | "add"))
    }

    /// The first line not blank under the heading an insertion starts
    /// with, directive `d` if it is one: `## H` then `$patch: delete` or
    /// `replace` names a lower section, as it does anywhere else, and ends
    /// the insertion before the heading. Whether it did (the line is read).
    fn under_inserted_heading(&mut self, l: &Line<'a>, d: Option<&str>) -> bool {
        if !matches!(d, Some("delete" | "replace")) {
            return false;
        }
        let Block::Insert {
            at,
            line: from_line,
            start: from,
            headed: Some((heading, at_byte, text, _)),
        } = std::mem::replace(&mut self.block, Block::Text { line: 0, start: 0 })
        else {
            unreachable!("matched by the caller")
        };
        let insert = Block::Insert {
            at,
            line: from_line,
            start: from,
            headed: None,
        };
        self.close(insert, at_byte);
        let key = next_key(&mut self.seen, text);
        self.block = if d == Some("delete") {
            Block::Deleted {
                key,
                line: l.i,
                text: false,
            }
        } else {
            Block::Marked {
                key,
                line: heading,
                start: at_byte,
                directive: (l.start, l.end),
                intent: Intent::Replace,
            }
        };
        true
    }

    /// A heading right after an insertion's directive (blank lines
    /// aside) is the new section it inserts, up to the next heading.
    /// Whether this line is that heading.
    fn heads_insertion(&mut self, l: &Line<'a>) -> bool {
        if let Some((_, text)) = l.heading
            && let Block::Insert {
                at: Some(_),
                start: from,
                headed: headed @ None,
                ..
            } = &mut self.block
            && self.body[*from..l.start].trim().is_empty()
        {
            *headed = Some((l.i, l.start, text, true));
            return true;
        }
        false
    }

    /// A directive line (`d`, what follows `$patch:`) outside a section's
    /// first line: the marker (the first time), or an insertion's anchor,
    /// which starts the text it inserts; anything else is a problem.
    fn directive(&mut self, l: &Line<'a>, d: &str) {
        let (verb, arg) = d.split_once(' ').unwrap_or((d, ""));
        let next = if verb == "sections" && !self.marker_seen && arg.is_empty() {
            self.marker_seen = true;
            Block::Text {
                line: l.i + 1,
                start: l.end,
            }
        } else {
            let at = match verb {
                "start" if arg.is_empty() => Some(Anchor::Start),
                "end" if arg.is_empty() => Some(Anchor::End),
                "before" => key_arg(arg).map(Anchor::Before),
                "after" => key_arg(arg).map(Anchor::After),
                _ => None,
            };
            Block::Insert {
                at,
                line: l.i,
                start: l.end,
                headed: None,
            }
        };
        self.start(next, l.start);
        if matches!(self.block, Block::Insert { at: None, .. }) {
            self.problems.push(Problem {
                line: l.i,
                message: format!(
                    "unknown directive {}; in a body merged by section write \
                     <!-- $patch: before \"Heading\" -->, after \"Heading\", start or end \
                     before text, or $patch: delete, replace or add under a heading",
                    crate::text::excerpt(l.text.trim(), 60)
                ),
            });
        }
    }

    /// Starts `next`, ending the block before it at byte `end`.
    fn start(&mut self, next: Block<'a>, end: usize) {
        let ended = std::mem::replace(&mut self.block, next);
        self.close(ended, end);
    }

    /// Ends the last block, at the body's end `end`.
    fn end(&mut self, end: usize) {
        let last = std::mem::replace(&mut self.block, Block::Text { line: 0, start: 0 });
        self.close(last, end);
    }

    /// Ends `block` at byte `end`: the change it makes goes to `op`.
    fn close(&mut self, block: Block<'a>, end: usize) {
        let body = self.body;
        let op = match block {
            Block::Text { line, start } => {
                let text = &body[start..end];
                // Blank lines alone are nothing.
                if text.trim().is_empty() {
                    return;
                }
                Op::Put {
                    section: Section {
                        key: Key::preamble(),
                        text: Cow::Borrowed(text),
                        line,
                    },
                    intent: Intent::Either,
                }
            }
            Block::Heading {
                key, line, start, ..
            } => Op::Put {
                section: Section {
                    key,
                    text: Cow::Borrowed(&body[start..end]),
                    line,
                },
                intent: Intent::Either,
            },
            Block::Deleted { key, line, text } => {
                if text {
                    self.problems.push(Problem {
                        line,
                        message: format!(
                            "section '{}' is deleted, so nothing may follow the directive \
                             under its heading",
                            key.label()
                        ),
                    });
                }
                Op::Delete { key, line }
            }
            Block::Marked {
                key,
                line,
                start,
                directive: (from, to),
                intent,
            } => {
                // The heading, then what follows the directive.
                let mut text = String::with_capacity(end - start - (to - from));
                text.push_str(&body[start..from]);
                text.push_str(&body[to..end]);
                Op::Put {
                    section: Section {
                        key,
                        text: Cow::Owned(text),
                        line,
                    },
                    intent,
                }
            }
            Block::Insert {
                at: Some(at),
                line,
                start,
                ..
            } => Op::Insert {
                at,
                text: &body[start..end],
                line,
            },
            Block::Insert { at: None, .. } => return,
        };
        (self.op)(op);
    }
}

/// How many units of work `body` is for a merge by section: its changes
/// ([`ops`]) when it is a layer's body of changes, its sections ([`split`])
/// when it is a lower body split to take them; or, if it has more than
/// `limit`, the 0-based line of the one past it. One pass, nothing kept
/// but a count.
pub(crate) fn count(body: &str, changes: bool, limit: u64) -> Result<u64, usize> {
    let mut n = 0u64;
    let mut past = None;
    let mut count = |line: usize| {
        n += 1;
        if n == limit.saturating_add(1) {
            past = Some(line);
        }
    };
    if changes {
        read(body, &mut |op| {
            count(match op {
                Op::Put { section, .. } => section.line,
                Op::Delete { line, .. } | Op::Insert { line, .. } => line,
            })
        });
    } else {
        // The preamble, then one per heading.
        count(0);
        for (i, (_, h)) in lines(body).enumerate() {
            if h.is_some() {
                count(i);
            }
        }
    }
    match past {
        Some(line) => Err(line),
        None => Ok(n),
    }
}

/// One piece of a merged body, with the layer (given as `O`) it came from
/// and what it replaced.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece<'a, O> {
    // (Where a piece starts in its layer's value is part of `O`.)
    /// The section's key; `None` for inserted text.
    pub key: Option<Key>,
    /// Its text.
    pub text: Cow<'a, str>,
    /// Where it came from.
    pub origin: O,
    /// The lower sections it replaced, nearest first.
    pub replaced: Vec<(Cow<'a, str>, O)>,
}

/// What applying a layer's changes did that its author should hear of.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Applied<'a, O> {
    /// A delete, a `$patch: replace` or an anchor named a section the
    /// lower body does not have (renamed upstream, or a typo).
    Stale {
        /// The key named.
        key: Key,
        /// The 0-based line in the layer's body.
        line: usize,
        /// What the directive was.
        what: &'static str,
    },
    /// A section with a plain heading (no `$patch: replace` or `add`)
    /// that the lower body lacks was appended: a replacement whose heading
    /// went away upstream, or an addition the layer did not mark.
    Unmarked {
        /// Its key.
        key: Key,
        /// The 0-based line of its heading in the layer's body.
        line: usize,
    },
    /// A section marked `$patch: add` was appended.
    Added {
        /// Its key.
        key: Key,
        /// The 0-based line of its heading.
        line: usize,
    },
    /// A section marked `$patch: add` replaced a lower section of the
    /// same heading (upstream added one).
    NotNew {
        /// Its key.
        key: Key,
        /// The 0-based line of its heading.
        line: usize,
    },
    /// A section was removed.
    Deleted {
        /// Its key.
        key: Key,
        /// The 0-based line of the directive.
        line: usize,
        /// The piece removed.
        removed: Piece<'a, O>,
    },
}

/// Where a piece is while a layer's deletes and replacements are applied:
/// among the pieces put before the first (a new preamble) or among the
/// lower ones and those appended after them.
#[derive(Debug, Clone, Copy)]
enum Slot {
    Front(usize),
    Rest(usize),
}

/// The lower body's pieces with `ops` applied (`line_origin` gives the
/// origin of a line of the layer's body): see the module docs.
///
/// Time linear in the pieces and the ops (plus a sort of the insertions):
/// sections are found through a map from key to where they are, a delete
/// leaves a hole that is closed once at the end, and an insertion is
/// filed under the gap between two lower pieces it goes into, not inserted
/// into the list.
pub(crate) fn apply<'a, O: Clone>(
    pieces: Vec<Piece<'a, O>>,
    ops: Vec<Op<'a>>,
    line_origin: &dyn Fn(usize) -> O,
) -> (Vec<Piece<'a, O>>, Vec<Applied<'a, O>>) {
    let mut applied = Vec::new();
    let mut slots = Slots::new(pieces);
    // A body that changes none (a layer that is the first to write the
    // value) adds its sections without a word.
    let lower = !slots.rest.is_empty();
    let mut inserts = Vec::new();
    for op in ops {
        match op {
            Op::Delete { key, line } => applied.push(slots.delete(key, line)),
            Op::Put { section, intent } => {
                let new = Piece {
                    key: Some(section.key.clone()),
                    text: section.text,
                    origin: line_origin(section.line),
                    replaced: Vec::new(),
                };
                applied.extend(slots.put(section.key, section.line, new, intent, lower));
            }
            Op::Insert { at, text, line } => inserts.push((at, text, line)),
        }
    }
    let list = slots.into_list();
    if inserts.is_empty() {
        return (list, applied);
    }
    let list = insert(list, inserts, line_origin, &mut applied);
    (list, applied)
}

/// The pieces while a layer's deletes and replacements are applied, each
/// found through a map from its key to its [`Slot`].
struct Slots<'a, O> {
    /// The pieces put before the first, the latest first.
    front: Vec<Option<Piece<'a, O>>>,
    /// The lower pieces, then those appended.
    rest: Vec<Option<Piece<'a, O>>>,
    /// Where each key's pieces are, in the order of the list. A key is on
    /// one piece, but for the preamble, whose key an empty heading (`#`)
    /// may also have.
    by_key: HashMap<Key, VecDeque<Slot>>,
}

impl<'a, O> Slots<'a, O> {
    /// The lower body's `pieces`, found by key.
    fn new(pieces: Vec<Piece<'a, O>>) -> Self {
        let rest: Vec<Option<Piece<'a, O>>> = pieces.into_iter().map(Some).collect();
        let mut by_key: HashMap<Key, VecDeque<Slot>> = HashMap::with_capacity(rest.len());
        for (i, p) in rest.iter().enumerate() {
            if let Some(k) = p.as_ref().and_then(|p| p.key.as_ref()) {
                by_key
                    .entry(k.clone())
                    .or_default()
                    .push_back(Slot::Rest(i));
            }
        }
        Slots {
            front: Vec::new(),
            rest,
            by_key,
        }
    }

    /// The place of the piece in `slot` (a hole once it is deleted).
    fn at(&mut self, slot: Slot) -> &mut Option<Piece<'a, O>> {
        match slot {
            Slot::Front(i) => &mut self.front[i],
            Slot::Rest(i) => &mut self.rest[i],
        }
    }

    /// Deletes the first piece with `key`, as the layer's directive at
    /// `line` says: what became of the directive.
    fn delete(&mut self, key: Key, line: usize) -> Applied<'a, O> {
        let found = self.by_key.get_mut(&key).and_then(VecDeque::pop_front);
        match found {
            Some(slot) => {
                let removed = self.at(slot).take();
                let removed = removed.expect("a piece in the map is in the list");
                Applied::Deleted { key, line, removed }
            }
            None => Applied::Stale {
                key,
                line,
                what: "delete",
            },
        }
    }

    /// Puts `new`, the layer's section with `key` at `line`, in place of
    /// the first piece with that key (which it keeps as replaced) or, with
    /// none, first (a preamble) or last; and what is said of it, as
    /// `intent` asks (`lower`: there is a lower body it changes).
    fn put(
        &mut self,
        key: Key,
        line: usize,
        new: Piece<'a, O>,
        intent: Intent,
        lower: bool,
    ) -> Option<Applied<'a, O>> {
        if let Some(slot) = self.by_key.get(&key).and_then(|q| q.front().copied()) {
            let piece = self.at(slot).as_mut();
            let piece = piece.expect("a piece in the map is in the list");
            let old = std::mem::replace(piece, new);
            let mut replaced = vec![(old.text, old.origin)];
            replaced.extend(old.replaced);
            piece.replaced = replaced;
            return (intent == Intent::Add).then_some(Applied::NotNew { key, line });
        }
        let said = match intent {
            Intent::Replace => Some(Applied::Stale {
                key: key.clone(),
                line,
                what: "replace",
            }),
            Intent::Add => Some(Applied::Added {
                key: key.clone(),
                line,
            }),
            Intent::Either if lower && key != Key::preamble() => Some(Applied::Unmarked {
                key: key.clone(),
                line,
            }),
            Intent::Either => None,
        };
        // A new preamble goes first; a new section last. Nothing else has
        // the key (none was found).
        let preamble = key == Key::preamble();
        let q = self.by_key.entry(key).or_default();
        if preamble {
            q.push_front(Slot::Front(self.front.len()));
            self.front.push(Some(new));
        } else {
            q.push_back(Slot::Rest(self.rest.len()));
            self.rest.push(Some(new));
        }
        said
    }

    /// The pieces in order, the deleted ones gone.
    fn into_list(self) -> Vec<Piece<'a, O>> {
        let Slots { front, rest, .. } = self;
        front.into_iter().rev().chain(rest).flatten().collect()
    }
}

/// `list` with the insertions `inserts` (anchor, text, line) placed, after
/// the sections are in place, so an anchor may name a section this layer
/// added. One whose anchor names no section is stale, said in `applied`.
fn insert<'a, O: Clone>(
    list: Vec<Piece<'a, O>>,
    inserts: Vec<(Anchor, &'a str, usize)>,
    line_origin: &dyn Fn(usize) -> O,
    applied: &mut Vec<Applied<'a, O>>,
) -> Vec<Piece<'a, O>> {
    let mut gaps = Gaps::new(&list);
    let mut placed: Vec<(usize, i64, Piece<'a, O>)> = Vec::with_capacity(inserts.len());
    for (n, (anchor, text, line)) in inserts.into_iter().enumerate() {
        match (gaps.of(&anchor, n as i64 + 1), anchor) {
            (Some((g, order)), _) => placed.push((
                g,
                order,
                Piece {
                    key: None,
                    text: Cow::Borrowed(text),
                    origin: line_origin(line),
                    replaced: Vec::new(),
                },
            )),
            (None, Anchor::Before(key)) => applied.push(Applied::Stale {
                key,
                line,
                what: "before",
            }),
            (None, Anchor::After(key)) => applied.push(Applied::Stale {
                key,
                line,
                what: "after",
            }),
            (None, _) => {}
        }
    }
    drop(gaps);
    placed.sort_unstable_by_key(|&(g, order, _)| (g, order));
    let mut out = Vec::with_capacity(list.len() + placed.len());
    let mut placed = placed.into_iter().peekable();
    for (i, p) in list.into_iter().enumerate() {
        while let Some((_, _, q)) = placed.next_if(|&(g, _, _)| g == i) {
            out.push(q);
        }
        out.push(p);
    }
    out.extend(placed.map(|(_, _, q)| q));
    out
}

/// Where insertions go into a list of pieces: gap `g` is before `list[g]`
/// (gap `list.len()` at the end), and within a gap an insertion goes after
/// those already there, or (at the start) before them.
struct Gaps<'l, 'a, O> {
    list: &'l [Piece<'a, O>],
    /// The first piece with each key: the one an anchor names.
    first: HashMap<&'l Key, usize>,
    /// The gap after each piece and whatever was inserted after it: the
    /// one before the next section (inserted pieces have no key). Made
    /// when first needed.
    next_section: Vec<usize>,
    /// How many insertions went into the first gap.
    in_first_gap: usize,
}

impl<'l, 'a, O> Gaps<'l, 'a, O> {
    fn new(list: &'l [Piece<'a, O>]) -> Self {
        let mut first = HashMap::with_capacity(list.len());
        for (i, p) in list.iter().enumerate() {
            if let Some(k) = &p.key {
                first.entry(k).or_insert(i);
            }
        }
        Gaps {
            list,
            first,
            next_section: Vec::new(),
            in_first_gap: 0,
        }
    }

    /// The gap the `n`-th insertion (from 1) goes into, at `anchor`, and
    /// its order there: later insertions go after earlier ones in a gap
    /// (`n`), or before them (`-n`). `None` if the anchor names no section.
    fn of(&mut self, anchor: &Anchor, n: i64) -> Option<(usize, i64)> {
        let list = self.list;
        let gap = match anchor {
            Anchor::Start => {
                // After the preamble, which is the body's opening text.
                let after_preamble = self.in_first_gap == 0
                    && list.first().is_some_and(|p| p.key == Some(Key::preamble()));
                Some((usize::from(after_preamble), -n))
            }
            Anchor::End => Some((list.len(), n)),
            Anchor::Before(k) => self.first.get(k).map(|&i| (i, n)),
            Anchor::After(k) => self.first.get(k).copied().map(|i| {
                if self.next_section.is_empty() {
                    self.next_section = vec![list.len(); list.len()];
                    let mut next = list.len();
                    for j in (0..list.len()).rev() {
                        self.next_section[j] = next;
                        if list[j].key.is_some() {
                            next = j;
                        }
                    }
                }
                (self.next_section[i], n)
            }),
        };
        if let Some((0, _)) = gap {
            self.in_first_gap += 1;
        }
        gap
    }
}

/// The pieces joined into one body. Pieces that were written one after the
/// other (`adjacent`) are joined as they were; between others, a piece
/// that does not end a line gets one, and a heading or an insertion follows
/// a blank line.
///
/// An insertion is a block of its own. In Markdown a line that follows a
/// paragraph, a list item or a block quote without a blank line continues
/// it (a "lazy continuation line": `- Read it.` then `Cite the page.` is
/// one list item), so the text a layer inserts after a section that ends
/// in one of them would join it. A blank line ends every such block, and
/// changes nothing after one that needs none (a heading, a closed code
/// fence), so one is put before an insertion unless the text above ends
/// with one or the insertion starts with one.
pub(crate) fn join<O>(
    pieces: &[Piece<'_, O>],
    adjacent: &dyn Fn(&Piece<'_, O>, &Piece<'_, O>) -> bool,
) -> String {
    let mut out = String::with_capacity(pieces.iter().map(|p| p.text.len() + 2).sum());
    let mut prev: Option<&Piece<'_, O>> = None;
    for p in pieces {
        if p.text.is_empty() {
            continue;
        }
        let joined = prev.is_some_and(|q| adjacent(q, p));
        prev = Some(p);
        if !out.is_empty() && !joined {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            let block = match &p.key {
                Some(k) => *k != Key::preamble(),
                None => !starts_blank(&p.text),
            };
            if block && !ends_blank(&out) {
                out.push('\n');
            }
        }
        out.push_str(&p.text);
    }
    out
}

/// Does `text` (which ends a line) end with a blank line?
fn ends_blank(text: &str) -> bool {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let last = body.rsplit('\n').next().unwrap_or("");
    body.contains('\n') && last.trim_matches([' ', '\t', '\r']).is_empty()
}

/// Does `text` start with a blank line?
fn starts_blank(text: &str) -> bool {
    text.split_once('\n')
        .is_some_and(|(first, _)| first.trim_matches([' ', '\t', '\r']).is_empty())
}

/// The pieces of a body as one layer wrote it.
pub(crate) fn pieces<'a, O: Clone>(
    body: &'a str,
    line_origin: &dyn Fn(usize) -> O,
) -> Vec<Piece<'a, O>> {
    split(body)
        .into_iter()
        .filter(|s| !(s.key == Key::preamble() && s.text.is_empty()))
        .map(|s| Piece {
            key: Some(s.key),
            text: s.text,
            origin: line_origin(s.line),
            replaced: Vec::new(),
        })
        .collect()
}

#[cfg(test)]
mod tests;
