//! The interpreter: merges fragments field by field under a [`MergeSpec`].
//!
//! [`merge`] walks the spec's fields and dispatches on each field's
//! [`Strategy`] with one exhaustive `match`; each strategy lives in its own
//! module. The function is pure: no I/O, no hash-map iteration, so the same
//! fragments always give the same [`Effective`] skill.

mod append;
mod deep;
mod keyed;
mod override_;
pub mod provenance;
pub mod sections;

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

use serde_json::{Map, Value};

use crate::fragment::{Fragment, escape_pointer};
use crate::layer::Layer;
use crate::merge::provenance::{Origin, Shadowed, Sourced};
use crate::spec::directive::{Form, form_of};
use crate::spec::{Field, LAYERS_PRESENT, MergeSpec, Strategy, StrategyKind};

pub use keyed::{Entry, Identity, identity};

pub use crate::spec::PATCH;

/// A merged mapping: each key's merged value, in byte order of the keys.
pub(crate) type Tree<'a> = BTreeMap<&'a str, Merged<'a>>;

/// One merged value with provenance: a field of the effective skill, or a
/// key below a DEEP_MERGE field.
#[derive(Debug, Clone, PartialEq)]
pub enum Merged<'a> {
    /// An OVERRIDE value, or a DEEP_MERGE leaf (a key whose value is not a
    /// mapping): replaced whole by a higher layer.
    Override(Sourced<'a>),
    /// An APPEND list: each item with its origin.
    Append(Vec<Sourced<'a>>),
    /// A KEYED_REPLACE list: each entry with its origin and what it replaced.
    Keyed(Vec<Entry<'a>>),
    /// A DEEP_MERGE mapping: each key merged by its own rule, or deeply.
    Deep(Tree<'a>),
}

impl Merged<'_> {
    /// The value without provenance.
    pub fn to_value(&self) -> Value {
        match self {
            Merged::Override(s) => s.value.clone().into_owned(),
            Merged::Append(items) => {
                Value::Array(items.iter().map(|s| s.value.clone().into_owned()).collect())
            }
            Merged::Keyed(entries) => Value::Array(
                entries
                    .iter()
                    .map(|e| e.item.value.clone().into_owned())
                    .collect(),
            ),
            Merged::Deep(tree) => Value::Object(
                tree.iter()
                    .map(|(k, v)| ((*k).to_owned(), v.to_value()))
                    .collect(),
            ),
        }
    }
}

/// What a directive, or a `null` below a field, did to the lower layers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    /// A `$patch: delete` (or a `null` inside a mapping) removed a value,
    /// an entry or list items of the lower layers.
    Deleted,
    /// A `$patch: replace` replaced the lower layers' value whole.
    Replaced,
    /// A `$patch: delete` found nothing to delete in the lower layers.
    Stale,
    /// `unique: true` dropped an item equal to an earlier one.
    Duplicate,
    /// A section directive (`before`, `after`, `replace`, `delete` inside a
    /// body merged by section) named a heading the lower layers lack.
    Unanchored,
    /// A section marked `$patch: add` was added to the body.
    Added,
    /// A section with a plain heading that the lower layers lack was
    /// added at the end: a replacement whose heading went away, or an
    /// addition not marked `$patch: add`.
    Unmarked,
    /// A section marked `$patch: add` replaced a lower section of the same
    /// heading.
    NotNew,
}

impl ChangeKind {
    /// The words explain uses: `deleted by`, `replaced whole by`, ...
    pub(crate) fn phrase(self) -> &'static str {
        match self {
            ChangeKind::Deleted => "deleted by",
            ChangeKind::Replaced => "replaced whole by",
            ChangeKind::Stale => "nothing to delete for",
            ChangeKind::Duplicate => "duplicate dropped from",
            ChangeKind::Unanchored => "no such section for",
            ChangeKind::Added => "added ($patch: add) by",
            ChangeKind::Unmarked => {
                "added at the end (no lower section has this heading, and it is not marked $patch: add) by"
            }
            ChangeKind::NotNew => {
                "replacing the lower section of this heading (though marked $patch: add) by"
            }
        }
    }

    /// The name used in JSON: `deleted`, `replaced`, `stale`, `duplicate`.
    pub fn label(self) -> &'static str {
        match self {
            ChangeKind::Deleted => "deleted",
            ChangeKind::Replaced => "replaced",
            ChangeKind::Stale => "stale",
            ChangeKind::Duplicate => "duplicate",
            ChangeKind::Unanchored => "no-such-section",
            ChangeKind::Added => "added",
            ChangeKind::Unmarked => "unmarked-addition",
            ChangeKind::NotNew => "not-an-addition",
        }
    }
}

/// A deletion, a whole replacement, a stale delete or a dropped duplicate,
/// with the directive (or value) that caused it.
#[derive(Debug, Clone, PartialEq)]
pub struct Change<'a> {
    /// The path of what changed, as `explain` writes it:
    /// `references[style]`, `metadata.limits`, `trigger_keywords`.
    pub path: String,
    /// What happened.
    pub kind: ChangeKind,
    /// The strategy of the rule at that path.
    pub strategy: StrategyKind,
    /// The directive (or the dropped duplicate) that did it.
    pub by: Origin,
    /// The lower layers' values it removed (for a replacement, the values
    /// replaced; for a dropped duplicate, nothing).
    pub dropped: Vec<Shadowed<'a>>,
    /// For a directive inside a value merged by section: its 0-based line
    /// inside the value, and the directive (`delete`, `replace`, `before`,
    /// `after`).
    pub section: Option<(usize, &'static str)>,
    /// For a deleted section: its 0-based line inside the lower value it
    /// was removed from.
    pub dropped_line: Option<usize>,
}

/// One merged field.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldMerge<'a> {
    /// The field's name.
    pub name: &'a str,
    /// Its strategy's name (`OVERRIDE`, ...).
    pub strategy: StrategyKind,
    /// The merged value with provenance.
    pub merged: Merged<'a>,
    /// The last layer that reset the field with `null`, if any.
    pub reset_by: Option<Origin>,
    /// Deletions, whole replacements, stale deletes and dropped duplicates
    /// at or below the field, in the order the merge met them.
    pub changes: Vec<Change<'a>>,
    /// For a field merged by section (the body): each piece of the merged
    /// value with the layer and line it came from ([`sections`]).
    pub sections: Option<Vec<SectionPiece<'a>>>,
}

/// A piece of a value merged by section, and where it came from.
pub(crate) type SectionPiece<'a> = sections::Piece<'a, SectionOrigin>;

/// Where a piece of a value merged by section came from: the layer and
/// fragment ([`Origin`], pointing at the value) and the 0-based line inside
/// the value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SectionOrigin {
    /// The fragment's value.
    pub origin: Origin,
    /// The line inside the value where the piece starts.
    pub line: usize,
}

/// The effective skill: every spec field, merged, plus the layers present.
/// It borrows its values from the fragments and the spec it was merged from.
#[derive(Debug, Clone, PartialEq)]
pub struct Effective<'a> {
    /// The requested skill name.
    pub name: String,
    /// Every field of the spec, in spec (name) order.
    pub fields: Vec<FieldMerge<'a>>,
    /// The layers that contributed a fragment, base first.
    pub layers_present: Vec<Layer>,
}

impl<'a> Effective<'a> {
    /// The values-only view: a JSON object with every field and `layers_present`.
    pub fn to_value(&self) -> Value {
        let mut m: Map<String, Value> = self
            .fields
            .iter()
            .map(|f| (f.name.to_owned(), f.merged.to_value()))
            .collect();
        m.insert(
            LAYERS_PRESENT.into(),
            Value::Array(
                self.layers_present
                    .iter()
                    .map(|l| Value::String(l.label().into()))
                    .collect(),
            ),
        );
        Value::Object(m)
    }

    /// A merged field by name.
    pub fn field(&self, name: &str) -> Option<&FieldMerge<'a>> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// What a [`Resolved`] skill owns: the spec it was merged under, its name
/// and its validated fragments, base first.
#[derive(Debug)]
struct Parts {
    spec: Arc<MergeSpec>,
    name: String,
    fragments: Vec<Fragment>,
    /// Every field merged (not [`Resolved::new_only`]).
    whole: bool,
}

self_cell::self_cell!(
    /// The parts and the merge that borrows from them.
    struct Cell {
        owner: Parts,
        #[covariant]
        dependent: Effective,
    }
    impl {Debug}
);

/// A resolved skill: its validated fragments and their merge, made once.
///
/// It owns what it was made from (the fragments, and the spec by [`Arc`]),
/// so it outlives the loaded layers; the [`Effective`] skill it holds
/// borrows its values from those fragments, so the merge copies none.
#[derive(Debug)]
pub struct Resolved(Cell);

impl Resolved {
    /// Validated `fragments` (base first) of skill `name`, merged under `spec`.
    pub fn new(spec: Arc<MergeSpec>, name: &str, fragments: Vec<Fragment>) -> Resolved {
        let parts = Parts {
            spec,
            name: name.to_owned(),
            fragments,
            whole: true,
        };
        Resolved(Cell::new(parts, |p| merge(&p.spec, &p.name, &p.fragments)))
    }

    /// [`Resolved::new`] merging only the fields `keep` selects: for a
    /// caller that reads a few fields (`list`), the others are left out of
    /// [`Resolved::effective`].
    pub(crate) fn new_only(
        spec: Arc<MergeSpec>,
        name: &str,
        fragments: Vec<Fragment>,
        keep: impl Fn(&Field) -> bool,
    ) -> Resolved {
        let parts = Parts {
            spec,
            name: name.to_owned(),
            fragments,
            whole: false,
        };
        Resolved(Cell::new(parts, |p| {
            merge_only(&p.spec, &p.name, &p.fragments, keep)
        }))
    }

    /// The skill's name.
    pub fn name(&self) -> &str {
        &self.0.borrow_owner().name
    }

    /// Whether every field of the spec was merged ([`Resolved::new`]).
    pub(crate) fn is_whole(&self) -> bool {
        self.0.borrow_owner().whole
    }

    /// Each contributing layer's fragment, base first.
    pub fn fragments(&self) -> &[Fragment] {
        &self.0.borrow_owner().fragments
    }

    /// The spec the skill was merged under.
    pub fn spec(&self) -> &MergeSpec {
        &self.0.borrow_owner().spec
    }

    /// The effective skill: the merge of the fragments, made once when the
    /// skill was resolved.
    pub fn effective(&self) -> &Effective<'_> {
        self.0.borrow_dependent()
    }
}

/// The origin of `pointer` inside `fragment`.
pub(crate) fn origin(fragment: &Fragment, pointer: String) -> Origin {
    Origin {
        layer: fragment.layer,
        path: fragment.path.clone(),
        pointer,
    }
}

/// The pointer of a top-level field.
pub(crate) fn field_pointer(field: &str) -> String {
    let mut pointer = String::with_capacity(field.len() + 1);
    push_segment(&mut pointer, field);
    pointer
}

/// `base/i`: the pointer of item `i` of a list. Written without the
/// formatting machinery, which was a seventh of a merge (one per list item).
/// Public for the benchmarks' hand-written merge.
pub fn item_pointer(base: &str, i: usize) -> String {
    let mut digits = [0u8; 20];
    let (mut n, mut at) = (i, digits.len());
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut pointer = String::with_capacity(base.len() + 1 + digits.len() - at);
    pointer.push_str(base);
    pointer.push('/');
    pointer.extend(digits[at..].iter().map(|&d| char::from(d)));
    pointer
}

/// Appends `/key`, escaped, to a JSON pointer. Keys rarely need escaping,
/// so the usual case copies the key as is, without a temporary string.
pub(crate) fn push_segment(pointer: &mut String, key: &str) {
    pointer.push('/');
    if key.bytes().any(|b| b == b'~' || b == b'/') {
        pointer.push_str(&escape_pointer(key));
    } else {
        pointer.push_str(key);
    }
}

/// The path segment of a keyed entry, as `explain` writes it: `[style]`
/// for the first key, `[id=x]` for the others, `[3]` without an identity.
pub(crate) fn keyed_segment(id: Option<&Identity>, keys: &[String], index: usize) -> String {
    match id {
        Some(id) if keys.first().map(String::as_str) == Some(id.key) => format!("[{}]", id.value),
        Some(id) => format!("[{}={}]", id.key, id.value),
        None => format!("[{index}]"),
    }
}

/// Merges `fragments` (lowest layer first) into the effective skill `name`.
///
/// Fragments are expected to have passed validation; invalid ones still
/// merge without panicking (a malformed value is taken as it is). The
/// result borrows its values from `fragments` and `spec`.
pub fn merge<'a>(spec: &'a MergeSpec, name: &str, fragments: &'a [Fragment]) -> Effective<'a> {
    merge_only(spec, name, fragments, |_| true)
}

/// [`merge`] of only the fields `keep` selects, for a check that needs a
/// few fields of the effective skill (its other fields are left out).
pub(crate) fn merge_only<'a>(
    spec: &'a MergeSpec,
    name: &str,
    fragments: &'a [Fragment],
    keep: impl Fn(&Field) -> bool,
) -> Effective<'a> {
    let mut walk = Walk {
        directives: spec.directives(),
        path: String::new(),
        changes: Vec::new(),
        sections: None,
    };
    let mut values: Vec<Contribution<'a>> = Vec::with_capacity(fragments.len());
    // Each fragment's fields are walked once, in key order, alongside the
    // spec's fields (in name order too): a comparison or two per field and
    // fragment where a lookup took several, which were a tenth of a merge.
    debug_assert!(spec.fields.is_sorted_by(|a, b| a.name < b.name));
    let sorted = maps_are_sorted();
    let mut cursors: Vec<_> = fragments
        .iter()
        .map(|f| f.fields().iter().peekable())
        .collect();
    let mut fields = Vec::with_capacity(spec.fields.len());
    for field in spec.fields.iter() {
        if !keep(field) {
            continue;
        }
        // Each field's value in each fragment, looked up once.
        values.clear();
        for (f, cursor) in fragments.iter().zip(&mut cursors) {
            let value = if sorted {
                while cursor
                    .next_if(|(k, _)| k.as_str() < field.name.as_str())
                    .is_some()
                {}
                cursor.next_if(|(k, _)| **k == field.name).map(|(_, v)| v)
            } else {
                f.fields().get(&field.name)
            };
            if let Some(value) = value {
                values.push(Contribution {
                    fragment: Some(f),
                    value,
                    pointer: field_pointer(&field.name),
                    key: "",
                });
            }
        }
        // Only the fragments after the last reset contribute; the reset
        // itself starts the field again from its default.
        let mut reset_by = None;
        let mut start = 0;
        for (i, c) in values.iter().enumerate() {
            if c.value.is_null() || walk.deletes_mapping(&field.strategy, c.value) {
                start = i + 1;
                reset_by = c.origin();
            }
        }
        walk.path.clear();
        walk.path.push_str(&field.name);
        let mut merged = walk.rule(field, &mut values[start..], reset_by.clone(), true);
        if spec.name_field.as_deref() == Some(field.name.as_str())
            && let Merged::Override(s) = &mut merged
            && *s.value == field.default
        {
            s.value = std::borrow::Cow::Owned(Value::String(name.to_owned()));
        }
        fields.push(FieldMerge {
            name: &field.name,
            strategy: field.strategy.kind(),
            merged,
            reset_by,
            changes: std::mem::take(&mut walk.changes),
            sections: walk.sections.take(),
        });
    }
    let mut layers_present: Vec<Layer> = fragments.iter().map(|f| f.layer).collect();
    layers_present.dedup();
    Effective {
        name: name.to_owned(),
        fields,
        layers_present,
    }
}

/// Does serde_json keep a map's keys sorted? It does unless some crate in
/// the build turns on its `preserve_order` feature; the spec's fields are
/// sorted by name, so [`merge_only`] can then walk a fragment's fields in
/// step with them.
pub(crate) fn maps_are_sorted() -> bool {
    static SORTED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *SORTED.get_or_init(|| {
        let m: Map<String, Value> = [("b", Value::Null), ("a", Value::Null)]
            .into_iter()
            .map(|(k, v)| (k.to_owned(), v))
            .collect();
        m.keys().next().map(String::as_str) == Some("a")
    })
}

/// One layer's value at the place being merged, with its fragment and its
/// pointer in that fragment; no fragment for the spec's default.
#[derive(Debug, Clone)]
pub(crate) struct Contribution<'a> {
    pub(crate) fragment: Option<&'a Fragment>,
    pub(crate) value: &'a Value,
    pub(crate) pointer: String,
    /// Its key in the mapping above it (see [`Contribution::child`]), by
    /// which a DEEP_MERGE mapping groups its keys' values; empty elsewhere.
    pub(crate) key: &'a str,
}

impl<'a> Contribution<'a> {
    /// Where the value came from (`None` for the spec's default).
    pub(crate) fn origin(&self) -> Option<Origin> {
        self.fragment.map(|f| origin(f, self.pointer.clone()))
    }

    /// Where the value came from, taking the pointer along: for the last
    /// use of a contribution, which saves a copy of its pointer.
    pub(crate) fn take_origin(&mut self) -> Option<Origin> {
        self.fragment
            .map(|f| origin(f, std::mem::take(&mut self.pointer)))
    }

    /// The value with its origin (the last use of the contribution).
    pub(crate) fn take_sourced(&mut self) -> Sourced<'a> {
        match self.take_origin() {
            Some(o) => Sourced::new(self.value, o),
            None => Sourced::default_value(self.value),
        }
    }

    /// The value of `key` of this mapping, as a contribution.
    pub(crate) fn child(&self, key: &'a str, value: &'a Value) -> Contribution<'a> {
        let mut pointer = String::with_capacity(self.pointer.len() + key.len() + 1);
        pointer.push_str(&self.pointer);
        push_segment(&mut pointer, key);
        Contribution {
            fragment: self.fragment,
            value,
            pointer,
            key,
        }
    }

    /// What a change records of a value it removed.
    pub(crate) fn shadowed(&self) -> Option<Shadowed<'a>> {
        Some(Shadowed {
            value: std::borrow::Cow::Borrowed(self.value),
            origin: self.origin()?,
        })
    }
}

/// `sourced` replaced by `c` (a spec default replaces nothing it can name);
/// the last use of `c`.
pub(crate) fn replaced_by<'a>(sourced: Sourced<'a>, c: &mut Contribution<'a>) -> Sourced<'a> {
    match c.take_origin() {
        Some(o) => sourced.replaced_by(c.value, o),
        None => Sourced::default_value(c.value),
    }
}

/// The state of one merge: whether directives are read, the display path
/// of the value being merged, and the changes met so far.
pub(crate) struct Walk<'a> {
    pub(crate) directives: bool,
    pub(crate) path: String,
    pub(crate) changes: Vec<Change<'a>>,
    /// The pieces of the field just merged by section, if it was.
    pub(crate) sections: Option<Vec<SectionPiece<'a>>>,
}

/// The rule for a key of a DEEP_MERGE mapping that declares none.
pub(crate) static IMPLICIT: Field = Field {
    name: String::new(),
    strategy: Strategy::DeepMerge { fields: Vec::new() },
    default: Value::Null,
    required: false,
    description: None,
    examples: Vec::new(),
    files: None,
    layers: None,
    has_default: false,
    sections: None,
};

/// The rule for the key `key` of the DEEP_MERGE rule `rule`.
pub(crate) fn key_rule<'a>(rule: &'a Field, key: &str) -> &'a Field {
    rule.key_rule(key).unwrap_or(&IMPLICIT)
}

/// Is `value` a list under `strategy` holding `{$patch: replace}`?
fn replaces_list(strategy: &Strategy, value: &Value) -> bool {
    value.as_array().is_some_and(|items| {
        items
            .iter()
            .any(|v| form_of(strategy, v) == Some(Form::ListReplace))
    })
}

impl<'a> Walk<'a> {
    /// Does the first of `layers` (the lowest after the cut) start a list
    /// under `strategy` afresh with `{$patch: replace}`?
    fn list_replaced(&self, strategy: &Strategy, layers: &[Contribution<'_>]) -> bool {
        self.directives
            && layers
                .first()
                .is_some_and(|c| replaces_list(strategy, c.value))
    }

    /// Does `value` delete the whole value of a mapping rule
    /// (`{$patch: delete}`)?
    fn deletes_mapping(&self, strategy: &Strategy, value: &Value) -> bool {
        self.directives && form_of(strategy, value) == Some(Form::MapDelete)
    }

    /// Does `value` delete the lower layers' value (below the top level),
    /// or replace it whole? One look at its directive for both.
    fn deletes_or_replaces(&self, strategy: &Strategy, value: &Value) -> (bool, bool) {
        match value {
            Value::Null => (true, false),
            _ if !self.directives => (false, false),
            Value::Array(_) => (false, replaces_list(strategy, value)),
            _ => match form_of(strategy, value) {
                Some(Form::MapDelete) => (true, false),
                Some(Form::MapReplace) => (false, true),
                _ => (false, false),
            },
        }
    }

    /// Records a change at the current path (plus `suffix`).
    pub(crate) fn change(
        &mut self,
        suffix: &str,
        (kind, strategy): (ChangeKind, StrategyKind),
        by: Origin,
        dropped: Vec<Shadowed<'a>>,
    ) {
        self.changes.push(Change {
            path: format!("{}{suffix}", self.path),
            kind,
            strategy,
            by,
            dropped,
            section: None,
            dropped_line: None,
        });
    }

    /// Merges the contributions of one value under `rule`, after the
    /// contributions of a top-level field were cut at its last reset
    /// (`reset_by`). Below the top level, a `null` or a `$patch: delete`
    /// deletes the lower values and a `$patch: replace` starts again from
    /// its own; `None` when nothing is left and the rule has no default.
    pub(crate) fn rule(
        &mut self,
        rule: &'a Field,
        contributions: &mut [Contribution<'a>],
        reset_by: Option<Origin>,
        top: bool,
    ) -> Merged<'a> {
        let start = self.cut(rule, contributions, top);
        self.merge_rest(rule, &mut contributions[start..], reset_by, top)
    }

    /// Where the contributions that `rule` merges start: after the last
    /// deletion (below the top level) and at the last whole replacement.
    /// Records what each of them removed.
    fn cut(&mut self, rule: &'a Field, contributions: &[Contribution<'a>], top: bool) -> usize {
        let mut start = 0;
        for (i, c) in contributions.iter().enumerate() {
            let (deleted, replaced) = self.deletes_or_replaces(&rule.strategy, c.value);
            let deleted = deleted && !top;
            if !(deleted || replaced) {
                continue;
            }
            let dropped: Vec<Shadowed<'a>> = contributions[start..i]
                .iter()
                .rev()
                .filter_map(Contribution::shadowed)
                .collect();
            let kind = match (deleted, dropped.is_empty(), c.value.is_null()) {
                (false, false, _) => Some(ChangeKind::Replaced),
                (false, true, _) => None,
                (true, false, _) => Some(ChangeKind::Deleted),
                // A `null` on nothing is the plain way to make sure a key
                // is unset; an explicit delete of nothing is stale.
                (true, true, true) => None,
                (true, true, false) => Some(ChangeKind::Stale),
            };
            if let (Some(kind), Some(by)) = (kind, c.origin()) {
                self.change("", (kind, rule.strategy.kind()), by, dropped);
            }
            start = if deleted { i + 1 } else { i };
        }
        start
    }

    /// Merges the contributions left after [`Walk::cut`] under `rule`.
    fn merge_rest(
        &mut self,
        rule: &'a Field,
        rest: &mut [Contribution<'a>],
        reset_by: Option<Origin>,
        top: bool,
    ) -> Merged<'a> {
        match &rule.strategy {
            Strategy::Override { .. } if top && rule.sections.is_some() => {
                Merged::Override(self.merge_sections(rule, rest, reset_by))
            }
            Strategy::Override { .. } => Merged::Override(override_::merge(rule, rest, reset_by)),
            Strategy::Append { unique, .. } => {
                Merged::Append(append::merge(self, rule, *unique, rest, top))
            }
            Strategy::KeyedReplace { keys, entries, .. } => {
                Merged::Keyed(keyed::merge(self, rule, keys, *entries, rest, top))
            }
            Strategy::DeepMerge { .. } => deep::merge(self, rule, rest, top),
        }
    }

    /// Merges an OVERRIDE string field that may merge by section
    /// ([`sections`]): each layer's value replaces the lower one whole, or,
    /// when it asks (or the rule says `always`), changes it section by
    /// section. The value is the pieces joined; their provenance is kept in
    /// [`Walk::sections`] and what a directive did in the changes.
    fn merge_sections(
        &mut self,
        rule: &'a Field,
        rest: &mut [Contribution<'a>],
        reset_by: Option<Origin>,
    ) -> Sourced<'a> {
        let always = rule.sections == Some(crate::spec::Sections::Always);
        let mut pieces: Vec<SectionPiece<'a>> = Vec::new();
        let mut out = Sourced {
            origin: reset_by,
            ..Sourced::default_value(&rule.default)
        };
        let mut by_section = false;
        // A body replaced whole is split into sections only when a higher
        // layer asks to change it by section: most bodies never are.
        let mut whole: Option<(&str, Origin)> = None;
        for c in rest.iter_mut() {
            let (Some(text), Some(origin)) = (c.value.as_str(), c.origin()) else {
                // A value that is not text (only a spec without a type
                // lets one through): replaced whole.
                pieces.clear();
                whole = None;
                by_section = false;
                out = replaced_by(out, c);
                continue;
            };
            let at = |line| SectionOrigin {
                origin: origin.clone(),
                line,
            };
            match (always || sections::asks(text))
                .then(|| sections::ops(text))
                .and_then(Result::ok)
            {
                Some(ops) => {
                    if let Some((text, origin)) = whole.take() {
                        pieces = sections::pieces(text, &|line| SectionOrigin {
                            origin: origin.clone(),
                            line,
                        });
                    }
                    by_section = true;
                    let (merged, applied) = sections::apply(std::mem::take(&mut pieces), ops, &at);
                    pieces = merged;
                    for a in applied {
                        let change = section_change(a, &self.path, &origin);
                        self.changes.push(change);
                    }
                }
                None => {
                    by_section = false;
                    pieces.clear();
                    whole = Some((text, origin.clone()));
                }
            }
            out = replaced_by(out, c);
        }
        if by_section {
            out.value = std::borrow::Cow::Owned(Value::String(sections::join(&pieces, &|a, b| {
                a.origin.origin == b.origin.origin
                    && a.origin.line + a.text.split_inclusive('\n').count() == b.origin.line
            })));
        }
        self.sections = by_section.then_some(pieces);
        out
    }

    /// Merges one key below a DEEP_MERGE mapping; `None` when the key ends
    /// up unset.
    pub(crate) fn nested(
        &mut self,
        rule: &'a Field,
        contributions: &mut [Contribution<'a>],
    ) -> Option<Merged<'a>> {
        let start = self.cut(rule, contributions, false);
        // Nothing after the cut: no layer sets the key, or the last one
        // that does deletes it.
        let unset = start == contributions.len();
        (!unset || rule.has_default)
            .then(|| self.merge_rest(rule, &mut contributions[start..], None, false))
    }
}

/// One value of the effective skill met by [`visit`].
#[derive(Debug, Clone, Copy)]
pub(crate) enum Visited<'m, 'a> {
    /// An OVERRIDE value or a DEEP_MERGE leaf.
    Value(&'m Sourced<'a>),
    /// An APPEND item.
    Item(&'m Sourced<'a>),
    /// A KEYED_REPLACE entry (replaced whole, or set by one layer).
    Entry(&'m Entry<'a>),
    /// The key of an entry merged from several layers (`entries: merge`).
    Key(&'m Sourced<'a>),
    /// An empty list or mapping: no value to trace.
    Empty(&'m Merged<'a>),
}

/// Calls `f` with every value of `merged` (merged under `rule`) and its
/// path as `explain` writes it (`path` is the path of `merged` itself),
/// and the strategy of the rule that merged it. Keys below a DEEP_MERGE
/// rule without a rule of their own are reported under DEEP_MERGE.
pub(crate) fn visit<'m, 'a>(
    rule: &Field,
    merged: &'m Merged<'a>,
    path: &mut String,
    f: &mut dyn FnMut(&str, StrategyKind, Visited<'m, 'a>),
) {
    let strategy = rule.strategy.kind();
    match merged {
        Merged::Override(s) => f(path, strategy, Visited::Value(s)),
        Merged::Append(items) if items.is_empty() => f(path, strategy, Visited::Empty(merged)),
        Merged::Append(items) => {
            for (i, s) in items.iter().enumerate() {
                let len = path.len();
                path.push_str(&format!("[{i}]"));
                f(path, strategy, Visited::Item(s));
                path.truncate(len);
            }
        }
        Merged::Keyed(entries) if entries.is_empty() => f(path, strategy, Visited::Empty(merged)),
        Merged::Keyed(entries) => {
            let keys: &[String] = match &rule.strategy {
                Strategy::KeyedReplace { keys, .. } => keys,
                _ => &[],
            };
            for (i, e) in entries.iter().enumerate() {
                let len = path.len();
                path.push_str(&keyed_segment(e.identity.as_ref(), keys, i));
                match e.parts.as_deref() {
                    // An entry merged from several layers: each of its
                    // values with its own origin; its key is each layer's
                    // way to name it, not a value it sets.
                    Some(Merged::Deep(parts)) => {
                        for (k, v) in parts {
                            let len = path.len();
                            path.push('.');
                            path.push_str(k);
                            match v {
                                Merged::Override(s)
                                    if e.identity.is_some_and(|id| id.key == *k) =>
                                {
                                    f(path, strategy, Visited::Key(s))
                                }
                                v => visit_implicit(strategy, v, path, f),
                            }
                            path.truncate(len);
                        }
                    }
                    _ => f(path, strategy, Visited::Entry(e)),
                }
                path.truncate(len);
            }
        }
        Merged::Deep(tree) if tree.is_empty() => f(path, strategy, Visited::Empty(merged)),
        Merged::Deep(tree) => {
            for (k, v) in tree {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                let child = match &rule.strategy {
                    Strategy::DeepMerge { .. } => key_rule(rule, k),
                    _ => &IMPLICIT,
                };
                // A key without a rule of its own is the parent's business.
                if std::ptr::eq(child, &IMPLICIT) {
                    visit_implicit(strategy, v, path, f);
                } else {
                    visit(child, v, path, f);
                }
                path.truncate(len);
            }
        }
    }
}

/// [`visit`] below a key without a rule, reported under `strategy`.
fn visit_implicit<'m, 'a>(
    strategy: StrategyKind,
    merged: &'m Merged<'a>,
    path: &mut String,
    f: &mut dyn FnMut(&str, StrategyKind, Visited<'m, 'a>),
) {
    match merged {
        Merged::Deep(tree) if !tree.is_empty() => {
            for (k, v) in tree {
                let len = path.len();
                path.push('.');
                path.push_str(k);
                visit_implicit(strategy, v, path, f);
                path.truncate(len);
            }
        }
        Merged::Override(s) => f(path, strategy, Visited::Value(s)),
        other => f(path, strategy, Visited::Empty(other)),
    }
}

impl fmt::Display for Identity<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}={}", self.key, self.value)
    }
}

/// The change one section directive of `by` made to the field at `path`:
/// a section added, deleted (with the text it dropped), or a directive that
/// found nothing to act on.
fn section_change<'a>(
    applied: sections::Applied<'a, SectionOrigin>,
    path: &str,
    by: &Origin,
) -> Change<'a> {
    let mut dropped_line = None;
    let (key, line, kind, verb, dropped) = match applied {
        sections::Applied::Stale { key, line, what } => {
            (key, line, ChangeKind::Unanchored, what, Vec::new())
        }
        sections::Applied::Added { key, line } => (key, line, ChangeKind::Added, "add", Vec::new()),
        sections::Applied::Unmarked { key, line } => {
            (key, line, ChangeKind::Unmarked, "", Vec::new())
        }
        sections::Applied::NotNew { key, line } => {
            (key, line, ChangeKind::NotNew, "add", Vec::new())
        }
        sections::Applied::Deleted { key, line, removed } => {
            dropped_line = Some(removed.origin.line);
            (
                key,
                line,
                ChangeKind::Deleted,
                "delete",
                vec![Shadowed {
                    value: std::borrow::Cow::Owned(Value::String(removed.text.into_owned())),
                    origin: removed.origin.origin,
                }],
            )
        }
    };
    Change {
        path: format!("{path}[{}]", key.label()),
        kind,
        strategy: StrategyKind::Override,
        by: by.clone(),
        dropped,
        section: Some((line, verb)),
        dropped_line,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::Path;

    use serde_json::Value;

    use crate::fragment::Fragment;
    use crate::layer::Layer;
    use crate::spec::MergeSpec;

    pub fn spec() -> MergeSpec {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/mergespec.yaml");
        MergeSpec::load(&path).expect("shipped spec loads")
    }

    #[test]
    fn pointers() {
        assert_eq!(super::item_pointer("/refs", 0), "/refs/0");
        assert_eq!(super::item_pointer("/refs", 1207), "/refs/1207");
        assert_eq!(
            super::item_pointer("", usize::MAX),
            format!("/{}", usize::MAX)
        );
        assert_eq!(super::field_pointer("a/b~c"), "/a~1b~0c");
        assert_eq!(super::field_pointer("plain"), "/plain");
    }

    /// Fields are found in step with the spec's among keys no field has,
    /// before, between and after them, with some fields left out.
    #[test]
    fn fields_are_found_among_other_keys_and_with_fields_left_out() {
        use serde_json::json;
        let spec = spec();
        let fs = [
            frag(
                Layer::Base,
                json!({"0": 1, "author": "a", "body": "b", "bogus": 2, "version": "1", "zz": 3}),
            ),
            frag(
                Layer::User,
                json!({"assets": ["x"], "author": "u", "metadata": {"k": 1}, "~": 0}),
            ),
        ];
        let all = super::merge(&spec, "s", &fs);
        let v = all.to_value();
        assert_eq!(
            [
                &v["author"],
                &v["body"],
                &v["version"],
                &v["assets"],
                &v["metadata"]
            ],
            [
                &json!("u"),
                &json!("b"),
                &json!("1"),
                &json!(["x"]),
                &json!({"k": 1})
            ]
        );
        let some = super::merge_only(&spec, "s", &fs, |f| f.name != "author" && f.name != "body");
        assert_eq!(some.fields.len(), spec.fields.len() - 2);
        for f in &some.fields {
            assert_eq!(Some(f), all.field(f.name));
        }
    }

    /// The contributions of `fs` to `field`, as [`super::merge`] passes them.
    pub(crate) fn contributions<'a>(
        field: &crate::spec::Field,
        fs: &'a [Fragment],
    ) -> Vec<super::Contribution<'a>> {
        fs.iter()
            .filter_map(|f| {
                Some(super::Contribution {
                    fragment: Some(f),
                    value: f.fields().get(&field.name)?,
                    pointer: super::field_pointer(&field.name),
                    key: "",
                })
            })
            .collect()
    }

    /// A walk reading directives, at the path of `field`.
    pub fn walk<'a>(field: &crate::spec::Field) -> super::Walk<'a> {
        super::Walk {
            directives: true,
            path: field.name.clone(),
            changes: Vec::new(),
            sections: None,
        }
    }

    pub fn frag(layer: Layer, v: Value) -> Fragment {
        let Value::Object(m) = v else {
            panic!("object")
        };
        Fragment::from_fields(layer, Path::new(&format!("{}/x.yaml", layer.label())), m)
    }
}
