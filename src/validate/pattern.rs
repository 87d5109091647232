//! A spec's `pattern`, matched without compiling a regex automaton.
//!
//! The fragment schema's validator translates a JSON Schema pattern
//! (ECMA-262) into Rust regex syntax and compiles it into automata over
//! UTF-8 bytes. For a pattern of Unicode classes (the shipped name pattern
//! is four of them, twice) that compilation costs more than everything
//! else a `show` does. Here the same translation is parsed into its
//! high-level form, whose classes are ranges of characters, and run as a
//! Thompson program over characters (a Pike VM: every thread advances
//! together, so time is the text's length times the program's, never
//! exponential).
//!
//! Only a subset is taken: literals, classes, concatenation, alternation,
//! repetition, groups, and the anchors `^` and `$`. Only what the
//! validator's meta-schema takes as an ECMA-262 regular expression is taken. Anything else (word
//! boundaries, byte classes beyond ASCII, lookaround that the translation
//! refuses) gives `None` at construction, and the caller falls back to the
//! compiled schema. The agreement with the compiled schema is checked by a
//! differential test (`src/validate/differential.rs`).

use std::collections::HashMap;

use regex_syntax::ast::{self, Ast};
use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// The most instructions a program may have (repetitions are unrolled).
const MAX_INSTS: usize = 4096;

/// The most character ranges its classes may hold, each use of a class
/// counted. It keeps the program small, and it keeps the automaton the
/// compiled schema would build from the same pattern well inside that
/// engine's size limit.
const MAX_RANGES: usize = 16_384;

/// The most steps (characters × instructions) one match may take; a longer
/// text is left to the compiled schema.
const MAX_STEPS: usize = 1 << 22;

/// A compiled pattern.
#[derive(Debug)]
pub(crate) struct CharPattern {
    prog: Vec<Inst>,
    classes: Vec<ClassSet>,
    /// The class of each class item already translated, by its text.
    translated: HashMap<String, usize>,
    /// The character ranges of every use of a class, added up.
    ranges: usize,
}

/// A set of characters.
#[derive(Debug)]
enum ClassSet {
    /// Sorted, disjoint ranges.
    Ranges(Vec<(char, char)>),
    /// The union of other classes (by index), or its complement. A bracket
    /// `[\p{Ll}\p{Lo}]` is kept as the union of its items: each item is
    /// translated alone, once per pattern, and never merged with the others
    /// (merging Unicode tables is most of what translating a pattern costs).
    Union { negated: bool, members: Vec<usize> },
}

#[derive(Debug, Clone, Copy)]
enum Inst {
    /// Consume one character of class `.0`.
    Class(usize),
    Split(usize, usize),
    Jump(usize),
    Assert(Anchor),
    Match,
}

#[derive(Debug, Clone, Copy)]
enum Anchor {
    Start,
    End,
}

impl CharPattern {
    /// Translates and compiles `pattern` as the schema validator does;
    /// `None` when it is outside the subset taken here (or invalid).
    pub(crate) fn new(pattern: &str) -> Option<CharPattern> {
        // What the validator's meta-schema takes as a regular expression.
        if !jsonschema_regex::is_valid_ecma_regex(pattern) {
            return None;
        }
        let translated = jsonschema_regex::to_rust_regex(pattern).ok()?;
        CharPattern::from_ast(&translated).or_else(|| CharPattern::from_hir(&translated))
    }

    fn empty() -> CharPattern {
        CharPattern {
            prog: Vec::new(),
            classes: Vec::new(),
            translated: HashMap::new(),
            ranges: 0,
        }
    }

    /// From the syntax tree of a translated pattern, each class item
    /// translated alone; `None` for anything but the plain forms (a flag,
    /// a word boundary), which [`CharPattern::from_hir`] then tries.
    pub(super) fn from_ast(translated: &str) -> Option<CharPattern> {
        let ast = ast::parse::ParserBuilder::new()
            .nest_limit(64)
            .build()
            .parse(translated)
            .ok()?;
        let mut c = CharPattern::empty();
        c.compile_ast(&ast, translated)?;
        c.push(Inst::Match)?;
        Some(c)
    }

    /// From the high-level form of a translated pattern, as the validator's
    /// engine reads it.
    pub(super) fn from_hir(translated: &str) -> Option<CharPattern> {
        let hir = regex_syntax::ParserBuilder::new()
            .nest_limit(64)
            .build()
            .parse(translated)
            .ok()?;
        let mut c = CharPattern::empty();
        c.compile(&hir)?;
        c.push(Inst::Match)?;
        Some(c)
    }

    fn push(&mut self, inst: Inst) -> Option<usize> {
        if self.prog.len() >= MAX_INSTS {
            return None;
        }
        self.prog.push(inst);
        Some(self.prog.len() - 1)
    }

    /// Adds a class; its index.
    fn add_class(&mut self, class: ClassSet) -> Option<usize> {
        self.classes.push(class);
        Some(self.classes.len() - 1)
    }

    /// The ranges class `id` holds, all members counted.
    fn weight(&self, id: usize) -> usize {
        match &self.classes[id] {
            ClassSet::Ranges(r) => r.len(),
            ClassSet::Union { members, .. } => members.iter().map(|&m| self.weight(m)).sum(),
        }
    }

    /// Consumes one character of class `id`. Each use counts its ranges
    /// against [`MAX_RANGES`], as the validator's engine compiles each.
    fn use_class(&mut self, id: usize) -> Option<()> {
        self.ranges += self.weight(id);
        if self.ranges > MAX_RANGES {
            return None;
        }
        self.push(Inst::Class(id)).map(drop)
    }

    /// Consumes one character of `class`.
    fn class(&mut self, class: ClassSet) -> Option<()> {
        let id = self.add_class(class)?;
        self.use_class(id)
    }

    /// The class of one class item (`\p{Ll}`, `\d`, `.`),
    /// translated alone as the validator's engine translates it.
    fn item(&mut self, text: &str) -> Option<usize> {
        if let Some(&id) = self.translated.get(text) {
            return Some(id);
        }
        let hir = regex_syntax::Parser::new().parse(&format!("[{text}]")).ok();
        let hir = match text {
            // A dot is not a class item; alone, it is the dot.
            "." => regex_syntax::Parser::new().parse(".").ok(),
            _ => hir,
        }?;
        let ranges = match hir.kind() {
            HirKind::Class(c) => class_ranges(c)?,
            _ => return None,
        };
        let id = self.add_class(ClassSet::Ranges(ranges))?;
        self.translated.insert(text.to_owned(), id);
        Some(id)
    }

    fn compile_ast(&mut self, ast: &Ast, text: &str) -> Option<()> {
        let span_text = |span: &ast::Span| text.get(span.start.offset..span.end.offset);
        match ast {
            Ast::Empty(_) => Some(()),
            Ast::Literal(lit) => self.class(ClassSet::Ranges(vec![(lit.c, lit.c)])),
            Ast::Dot(_) => self.item(".").and_then(|id| self.use_class(id)),
            Ast::ClassUnicode(c) => self
                .item(span_text(&c.span)?)
                .and_then(|id| self.use_class(id)),
            Ast::ClassPerl(c) => self
                .item(span_text(&c.span)?)
                .and_then(|id| self.use_class(id)),
            Ast::ClassBracketed(b) => self.bracket(b, text).and_then(|id| self.use_class(id)),
            Ast::Assertion(a) => {
                // Without the multi-line flag (a translated ECMA-262
                // pattern has none), `^` and `$` are the text's ends.
                let anchor = match a.kind {
                    ast::AssertionKind::StartLine | ast::AssertionKind::StartText => Anchor::Start,
                    ast::AssertionKind::EndLine | ast::AssertionKind::EndText => Anchor::End,
                    _ => return None,
                };
                self.push(Inst::Assert(anchor)).map(drop)
            }
            Ast::Group(g) => match &g.kind {
                ast::GroupKind::CaptureIndex(_) | ast::GroupKind::CaptureName { .. } => {
                    self.compile_ast(&g.ast, text)
                }
                ast::GroupKind::NonCapturing(flags) if flags.items.is_empty() => {
                    self.compile_ast(&g.ast, text)
                }
                ast::GroupKind::NonCapturing(_) => None,
            },
            Ast::Concat(c) => c.asts.iter().try_for_each(|a| self.compile_ast(a, text)),
            Ast::Alternation(a) => {
                self.alternate(a.asts.len(), |c, i| c.compile_ast(&a.asts[i], text))
            }
            Ast::Repetition(r) => {
                use ast::{RepetitionKind as K, RepetitionRange as R};
                let (min, max) = match &r.op.kind {
                    K::ZeroOrOne => (0, Some(1)),
                    K::ZeroOrMore => (0, None),
                    K::OneOrMore => (1, None),
                    K::Range(R::Exactly(n)) => (*n, Some(*n)),
                    K::Range(R::AtLeast(n)) => (*n, None),
                    K::Range(R::Bounded(m, n)) => (*m, Some(*n)),
                };
                self.repeat(min, max, |c| c.compile_ast(&r.ast, text))
            }
            Ast::Flags(_) => None,
        }
    }

    /// The class of a bracket: the union of its items, or its complement.
    fn bracket(&mut self, b: &ast::ClassBracketed, text: &str) -> Option<usize> {
        let ast::ClassSet::Item(item) = &b.kind else {
            return None;
        };
        let mut members = Vec::new();
        self.set_item(item, text, &mut members)?;
        self.add_class(ClassSet::Union {
            negated: b.negated,
            members,
        })
    }

    fn set_item(
        &mut self,
        item: &ast::ClassSetItem,
        text: &str,
        members: &mut Vec<usize>,
    ) -> Option<()> {
        use ast::ClassSetItem as I;
        let id = match item {
            I::Empty(_) => return Some(()),
            I::Literal(lit) => self.add_class(ClassSet::Ranges(vec![(lit.c, lit.c)]))?,
            I::Range(r) if r.start.c <= r.end.c => {
                self.add_class(ClassSet::Ranges(vec![(r.start.c, r.end.c)]))?
            }
            I::Range(_) => return None,
            I::Unicode(c) => self.item(text.get(c.span.start.offset..c.span.end.offset)?)?,
            I::Perl(c) => self.item(text.get(c.span.start.offset..c.span.end.offset)?)?,
            // The translation writes `\d` and `\w` as nested classes.
            I::Bracketed(b) => self.bracket(b, text)?,
            // Not ECMA-262: a translated pattern escapes `[:`.
            I::Ascii(_) => return None,
            I::Union(u) => {
                return u
                    .items
                    .iter()
                    .try_for_each(|i| self.set_item(i, text, members));
            }
        };
        members.push(id);
        Some(())
    }

    /// `n` alternatives, the `i`-th compiled by `each(self, i)`.
    fn alternate(
        &mut self,
        n: usize,
        mut each: impl FnMut(&mut Self, usize) -> Option<()>,
    ) -> Option<()> {
        let mut jumps = Vec::new();
        for i in 0..n {
            if i + 1 == n {
                each(self, i)?;
            } else {
                let split = self.push(Inst::Split(0, 0))?;
                each(self, i)?;
                jumps.push(self.push(Inst::Jump(0))?);
                self.prog[split] = Inst::Split(split + 1, self.prog.len());
            }
        }
        let end = self.prog.len();
        for j in jumps {
            self.prog[j] = Inst::Jump(end);
        }
        Some(())
    }

    /// `min` to `max` (unbounded when `None`) copies of what `sub` compiles.
    fn repeat(
        &mut self,
        min: u32,
        max: Option<u32>,
        mut sub: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        let min = usize::try_from(min).ok()?;
        if min > MAX_INSTS {
            return None;
        }
        for _ in 0..min {
            sub(self)?;
        }
        match max {
            // Whether a text matches does not depend on greed.
            None => {
                let split = self.push(Inst::Split(0, 0))?;
                sub(self)?;
                self.push(Inst::Jump(split))?;
                self.prog[split] = Inst::Split(split + 1, self.prog.len());
            }
            Some(max) => {
                let extra = usize::try_from(max).ok()?.checked_sub(min)?;
                if extra > MAX_INSTS {
                    return None;
                }
                let mut splits = Vec::new();
                for _ in 0..extra {
                    splits.push(self.push(Inst::Split(0, 0))?);
                    sub(self)?;
                }
                let end = self.prog.len();
                for s in splits {
                    self.prog[s] = Inst::Split(s + 1, end);
                }
            }
        }
        Some(())
    }

    fn compile(&mut self, hir: &Hir) -> Option<()> {
        match hir.kind() {
            HirKind::Empty => Some(()),
            HirKind::Literal(lit) => {
                for ch in std::str::from_utf8(&lit.0).ok()?.chars() {
                    self.class(ClassSet::Ranges(vec![(ch, ch)]))?;
                }
                Some(())
            }
            HirKind::Class(c) => self.class(ClassSet::Ranges(class_ranges(c)?)),
            HirKind::Look(look) => {
                let anchor = match look {
                    Look::Start => Anchor::Start,
                    Look::End => Anchor::End,
                    _ => return None,
                };
                self.push(Inst::Assert(anchor)).map(drop)
            }
            HirKind::Capture(cap) => self.compile(&cap.sub),
            HirKind::Concat(subs) => subs.iter().try_for_each(|h| self.compile(h)),
            HirKind::Alternation(subs) => self.alternate(subs.len(), |c, i| c.compile(&subs[i])),
            HirKind::Repetition(rep) => self.repeat(rep.min, rep.max, |c| c.compile(&rep.sub)),
        }
    }

    /// Is `c` in class `id`?
    fn contains(&self, id: usize, c: char) -> bool {
        match &self.classes[id] {
            ClassSet::Ranges(ranges) => contains(ranges, c),
            ClassSet::Union { negated, members } => {
                members.iter().any(|&m| self.contains(m, c)) != *negated
            }
        }
    }

    /// Does `text` hold a match (anywhere, as JSON Schema's `pattern`
    /// means)? `None` when that would take more than [`MAX_STEPS`].
    pub(crate) fn is_match(&self, text: &str) -> Option<bool> {
        let n = self.prog.len();
        if text.len().saturating_add(1).saturating_mul(n) > MAX_STEPS {
            return None;
        }
        let mut current = Threads::new(n);
        let mut next = Threads::new(n);
        let mut stack = Vec::new();
        let mut prev: Option<char> = None;
        let mut chars = text.chars().peekable();
        loop {
            let here = chars.peek().copied();
            // A match may start at every position.
            if self.add(&mut current, &mut stack, 0, prev, here) {
                return Some(true);
            }
            let Some(ch) = chars.next() else {
                return Some(false);
            };
            let after = chars.peek().copied();
            for i in 0..current.len {
                let pc = current.dense[i];
                if let Inst::Class(k) = self.prog[pc]
                    && self.contains(k, ch)
                    && self.add(&mut next, &mut stack, pc + 1, Some(ch), after)
                {
                    return Some(true);
                }
            }
            std::mem::swap(&mut current, &mut next);
            next.clear();
            prev = Some(ch);
        }
    }

    /// Adds the thread at `pc` and every thread reachable from it without
    /// consuming a character, between `prev` and `next`. True when one of
    /// them is a match.
    fn add(
        &self,
        threads: &mut Threads,
        stack: &mut Vec<usize>,
        pc: usize,
        prev: Option<char>,
        next: Option<char>,
    ) -> bool {
        stack.clear();
        stack.push(pc);
        while let Some(pc) = stack.pop() {
            if !threads.insert(pc) {
                continue;
            }
            match self.prog[pc] {
                Inst::Class(_) => {}
                Inst::Match => return true,
                Inst::Jump(t) => stack.push(t),
                Inst::Split(a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Inst::Assert(anchor) => {
                    let holds = match anchor {
                        Anchor::Start => prev.is_none(),
                        Anchor::End => next.is_none(),
                    };
                    if holds {
                        stack.push(pc + 1);
                    }
                }
            }
        }
        false
    }
}

/// The ranges of a translated class, as characters (a class of bytes only
/// when they are ASCII).
fn class_ranges(class: &Class) -> Option<Vec<(char, char)>> {
    match class {
        Class::Unicode(c) => Some(c.ranges().iter().map(|r| (r.start(), r.end())).collect()),
        Class::Bytes(c) => c
            .ranges()
            .iter()
            .map(|r| (r.end() < 0x80).then(|| (char::from(r.start()), char::from(r.end()))))
            .collect(),
    }
}

fn contains(ranges: &[(char, char)], c: char) -> bool {
    ranges
        .binary_search_by(|&(lo, hi)| {
            if hi < c {
                std::cmp::Ordering::Less
            } else if lo > c {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// A set of program counters, in insertion order, cleared in O(1).
struct Threads {
    dense: Vec<usize>,
    sparse: Vec<usize>,
    len: usize,
}

impl Threads {
    fn new(n: usize) -> Threads {
        Threads {
            dense: vec![0; n],
            sparse: vec![0; n],
            len: 0,
        }
    }

    fn insert(&mut self, pc: usize) -> bool {
        let i = self.sparse[pc];
        if i < self.len && self.dense[i] == pc {
            return false;
        }
        self.dense[self.len] = pc;
        self.sparse[pc] = self.len;
        self.len += 1;
        true
    }

    fn clear(&mut self) {
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::CharPattern;

    fn is_match(pattern: &str, text: &str) -> bool {
        CharPattern::new(pattern)
            .unwrap_or_else(|| panic!("{pattern} is taken"))
            .is_match(text)
            .unwrap()
    }

    #[test]
    fn matches_as_a_search_not_a_whole_match() {
        assert!(is_match("b", "abc"));
        assert!(!is_match("^b", "abc"));
        assert!(is_match("c$", "abc"));
        assert!(!is_match("b$", "abc"));
        assert!(is_match("", ""));
        assert!(is_match("^$", ""));
        assert!(!is_match("^$", "a"));
        assert!(!is_match("^b$", "a\nb\nc"));
    }

    #[test]
    fn repetitions_alternations_and_classes() {
        let name = r"^[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+)*$";
        for ok in ["writer", "a-b-c", "日本-ー", "x1", "ß"] {
            assert!(is_match(name, ok), "{ok}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a b", "a\n", "\u{0301}"] {
            assert!(!is_match(name, bad), "{bad:?}");
        }
        assert!(is_match("^a{2,3}$", "aaa"));
        assert!(!is_match("^a{2,3}$", "aaaa"));
        assert!(!is_match("^a{2,3}$", "a"));
        assert!(is_match("^(ab|cd)+e?$", "abcdab"));
        assert!(!is_match("^(ab|cd)+e?$", "abce"));
        assert!(is_match("^(a*)*b$", "aaab"));
        assert!(!is_match("^(a*)*b$", &"a".repeat(5000)));
        // ECMA-262 `\d` is ASCII, as the validator translates it.
        assert!(is_match(r"^\d+$", "123"));
        assert!(!is_match(r"^\d+$", "١٢٣"));
    }

    #[test]
    fn what_is_not_taken_is_refused_not_guessed() {
        // Not ECMA-262 (inline flags), or outside the subset.
        for p in [r"\bword\b", r"(?=a)a", r"(a)\1", "(", "(?i)a", "(?m)^a$"] {
            assert!(CharPattern::new(p).is_none(), "{p}");
        }
        // Too large a program, too long a text.
        assert!(CharPattern::new("a{5000}").is_none());
        assert!(CharPattern::new(r"[\p{L}]{200}").is_none());
        let p = CharPattern::new("^a+$").unwrap();
        assert_eq!(p.is_match(&"a".repeat(2 << 20)), None);
    }
}
