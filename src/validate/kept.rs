//! The errors kept for one fragment: at most [`MAX_PER_FILE`], the most
//! useful first, however many the schema reports.

use crate::error::DiagnosticKind;
use crate::fragment::{Fragment, Pos};

/// The most problems reported (and located) per file, of each severity.
pub(crate) const MAX_PER_FILE: usize = 50;

/// The first `max` problems of one file by position, chosen as they come
/// (a heap of the `max` earliest), and how many more there were. Each
/// problem's kind is only built if it is kept when offered, so a file with
/// a million problems costs a million position lookups and `max` messages.
pub(crate) struct Kept<'f> {
    fragment: &'f Fragment,
    max: usize,
    heap: std::collections::BinaryHeap<Ranked>,
    seen: usize,
    /// How many problems were offered and not kept.
    pub(crate) more: usize,
}

/// A kept problem: its pointer, position and kind, ranked by position
/// (unknown last), then by order of arrival.
struct Ranked {
    rank: (Pos, usize),
    pointer: String,
    pos: Option<Pos>,
    kind: DiagnosticKind,
}

impl PartialEq for Ranked {
    fn eq(&self, other: &Self) -> bool {
        self.rank == other.rank
    }
}
impl Eq for Ranked {}
impl PartialOrd for Ranked {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl Ord for Ranked {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.rank.cmp(&other.rank)
    }
}

impl<'f> Kept<'f> {
    pub(crate) fn new(fragment: &'f Fragment, max: usize) -> Kept<'f> {
        Kept {
            fragment,
            max,
            heap: std::collections::BinaryHeap::with_capacity(max + 1),
            seen: 0,
            more: 0,
        }
    }

    /// The fragment the problems are in.
    pub(crate) fn fragment(&self) -> &'f Fragment {
        self.fragment
    }

    /// Offers the problem at `pointer` (at its key if `key` is set);
    /// `kind` is called only if it is kept, for now. False if it comes
    /// after all the problems kept and there is no room for it.
    pub(crate) fn offer(
        &mut self,
        pointer: String,
        key: bool,
        kind: impl FnOnce() -> DiagnosticKind,
    ) -> bool {
        let pos = self.fragment.position(&pointer, key);
        self.offer_at(pointer, pos, kind)
    }

    /// [`Kept::offer`] for a problem whose position is known.
    pub(crate) fn offer_at(
        &mut self,
        pointer: String,
        pos: Option<Pos>,
        kind: impl FnOnce() -> DiagnosticKind,
    ) -> bool {
        let rank = (pos.unwrap_or((usize::MAX, usize::MAX)), self.seen);
        self.seen += 1;
        if self.heap.len() == self.max && self.heap.peek().is_none_or(|top| top.rank < rank) {
            self.more += 1;
            return false;
        }
        self.heap.push(Ranked {
            rank,
            pointer,
            pos,
            kind: kind(),
        });
        if self.heap.len() > self.max {
            self.heap.pop();
            self.more += 1;
        }
        true
    }

    /// The kept problems in source order: pointer, position, kind.
    pub(crate) fn into_sorted(self) -> Vec<(String, Option<Pos>, DiagnosticKind)> {
        self.heap
            .into_sorted_vec()
            .into_iter()
            .map(|r| (r.pointer, r.pos, r.kind))
            .collect()
    }
}
