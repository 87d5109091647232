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

use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// The most instructions a program may have (repetitions are unrolled).
const MAX_INSTS: usize = 4096;

/// The most character ranges all its classes may hold together. It keeps
/// the program small, and it keeps the automaton the compiled schema would
/// build from the same pattern well inside that engine's size limit.
const MAX_RANGES: usize = 16_384;

/// The most steps (characters × instructions) one match may take; a longer
/// text is left to the compiled schema.
const MAX_STEPS: usize = 1 << 22;

/// A compiled pattern.
#[derive(Debug)]
pub(crate) struct CharPattern {
    prog: Vec<Inst>,
    classes: Vec<Vec<(char, char)>>,
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
        let hir = regex_syntax::ParserBuilder::new()
            .nest_limit(64)
            .build()
            .parse(&translated)
            .ok()?;
        let mut c = CharPattern {
            prog: Vec::new(),
            classes: Vec::new(),
        };
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

    fn class(&mut self, ranges: Vec<(char, char)>) -> Option<()> {
        let total: usize = self.classes.iter().map(Vec::len).sum::<usize>() + ranges.len();
        if total > MAX_RANGES {
            return None;
        }
        self.classes.push(ranges);
        self.push(Inst::Class(self.classes.len() - 1)).map(drop)
    }

    fn compile(&mut self, hir: &Hir) -> Option<()> {
        match hir.kind() {
            HirKind::Empty => Some(()),
            HirKind::Literal(lit) => {
                for ch in std::str::from_utf8(&lit.0).ok()?.chars() {
                    self.class(vec![(ch, ch)])?;
                }
                Some(())
            }
            HirKind::Class(Class::Unicode(c)) => {
                self.class(c.ranges().iter().map(|r| (r.start(), r.end())).collect())
            }
            HirKind::Class(Class::Bytes(c)) => {
                // Only a class of ASCII bytes is a class of characters.
                let ranges = c
                    .ranges()
                    .iter()
                    .map(|r| (r.end() < 0x80).then(|| (char::from(r.start()), char::from(r.end()))))
                    .collect::<Option<Vec<_>>>()?;
                self.class(ranges)
            }
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
            HirKind::Alternation(subs) => {
                let mut jumps = Vec::new();
                for (i, sub) in subs.iter().enumerate() {
                    if i + 1 == subs.len() {
                        self.compile(sub)?;
                    } else {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.compile(sub)?;
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
            HirKind::Repetition(rep) => {
                let min = usize::try_from(rep.min).ok()?;
                if min > MAX_INSTS {
                    return None;
                }
                for _ in 0..min {
                    self.compile(&rep.sub)?;
                }
                match rep.max {
                    // Whether a text matches does not depend on greed.
                    None => {
                        let split = self.push(Inst::Split(0, 0))?;
                        self.compile(&rep.sub)?;
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
                            self.compile(&rep.sub)?;
                        }
                        let end = self.prog.len();
                        for s in splits {
                            self.prog[s] = Inst::Split(s + 1, end);
                        }
                    }
                }
                Some(())
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
                    && contains(&self.classes[k], ch)
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
