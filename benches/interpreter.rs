//! Interpreter overhead: the spec-driven [`merge`] against a merge of the
//! same fields and strategies written by hand for the shipped spec, as one
//! would without a merge spec.
//!
//! The comparison is like for like. The real merge records provenance (an
//! `Origin` with a JSON pointer for every OVERRIDE field, APPEND item, keyed
//! entry and DEEP_MERGE leaf, and the chain of values each replaced), so the
//! hand-written one builds the very same `Effective` value, provenance
//! included — the bench asserts the two are equal before timing anything.
//! Since rules engine v2 that includes the `changes` (deletions, whole
//! replacements, dropped duplicates) and the `$patch` directives of a
//! version 2 spec, which the shipped spec is. What is left to measure is
//! what the data-driven design costs: walking the spec's field list,
//! dispatching on each field's strategy, reading keys and defaults from the
//! spec instead of constants.
//!
//! A second comparison does the same for nested rules: the spec in
//! `benches/fixtures/rules-v2/` gives `metadata.tags` (APPEND, unique) and
//! `metadata.tools` (KEYED_REPLACE, entries merged) rules of their own, and
//! its skill's layers use every directive; the hand-written merge of those
//! rules must again give the identical `Effective`.
//!
//! A third line, `hand-written, values only`, merges plain JSON with no
//! provenance at all. It is not part of the ratio; it shows what provenance
//! itself costs.
//!
//! `cargo bench --bench interpreter`; see `benches/README.md` for figures.

mod common;

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value, json};

use bernstein_skills::fragment::escape_pointer;
use bernstein_skills::layer::Form;
use bernstein_skills::merge::provenance::{Origin, Shadowed, Sourced};
use bernstein_skills::merge::{
    Change, ChangeKind, Entry, FieldMerge, Identity, Merged, item_pointer,
};
use bernstein_skills::spec::StrategyKind;
use bernstein_skills::{Effective, Fragment, Layer, MergeSpec, merge};

/// The same allocator as the `bernstein` binary, so the figures are those
/// of the binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The hand-written merges, provenance included: one function per strategy,
/// with the shipped spec's key fields and the rule of each field written
/// as constants and `match` arms. Nothing here reads a spec.
mod hand {
    use super::*;

    /// The key fields of every KEYED_REPLACE field of the shipped spec.
    pub const KEYS: [&str; 3] = ["name", "id", "code"];
    /// The key field of `scripts` and `metadata.tools` in the rules spec.
    pub const NAME: [&str; 1] = ["name"];
    /// The default of every field of the shipped spec that may be a string.
    static EMPTY: Value = Value::String(String::new());
    /// The default of its boolean fields.
    static NULL: Value = Value::Null;
    static TRUE: Value = Value::Bool(true);
    /// The key of a directive.
    const PATCH: &str = "$patch";
    /// Above this many comparisons, a list is searched through an index.
    const SCAN_LIMIT: usize = 4096;

    fn origin(f: &Fragment, pointer: String) -> Origin {
        Origin {
            layer: f.layer,
            path: f.path.clone(),
            pointer,
        }
    }

    fn push_segment(pointer: &mut String, key: &str) {
        pointer.push('/');
        if key.contains(['~', '/']) {
            pointer.push_str(&escape_pointer(key));
        } else {
            pointer.push_str(key);
        }
    }

    /// One layer's value at the place being merged, with its pointer.
    #[derive(Clone)]
    pub struct At<'a> {
        f: &'a Fragment,
        v: &'a Value,
        ptr: String,
    }

    impl<'a> At<'a> {
        fn origin(&self) -> Origin {
            origin(self.f, self.ptr.clone())
        }

        fn shadowed(&self) -> Shadowed<'a> {
            Shadowed {
                value: Cow::Borrowed(self.v),
                origin: self.origin(),
            }
        }

        fn child(&self, key: &str, v: &'a Value) -> At<'a> {
            let mut ptr = String::with_capacity(self.ptr.len() + key.len() + 1);
            ptr.push_str(&self.ptr);
            push_segment(&mut ptr, key);
            At { f: self.f, v, ptr }
        }

        fn item(&self, i: usize, v: &'a Value) -> At<'a> {
            At {
                f: self.f,
                v,
                ptr: item_pointer(&self.ptr, i),
            }
        }
    }

    /// The path (as `explain` writes it) of the value being merged, and the
    /// deletions, replacements and dropped duplicates met so far.
    #[derive(Default)]
    pub struct Log<'a> {
        path: String,
        changes: Vec<Change<'a>>,
    }

    impl<'a> Log<'a> {
        fn change(
            &mut self,
            suffix: &str,
            kind: ChangeKind,
            strategy: StrategyKind,
            by: Origin,
            dropped: Vec<Shadowed<'a>>,
        ) {
            let mut path = String::with_capacity(self.path.len() + suffix.len());
            path.push_str(&self.path);
            path.push_str(suffix);
            self.changes.push(Change {
                path,
                kind,
                strategy,
                by,
                dropped,
                section: None,
                dropped_line: None,
            });
        }
    }

    /// The directive of a mapping: `$patch`'s value.
    fn patch(v: &Value) -> Option<&str> {
        match v {
            Value::Object(m) => m.get(PATCH).map(|p| p.as_str().unwrap_or("")),
            _ => None,
        }
    }

    /// `{$patch: replace}`, the list element that replaces the lower items.
    fn is_list_replace(v: &Value) -> bool {
        matches!(v, Value::Object(m) if m.len() == 1 && patch(v) == Some("replace"))
    }

    fn replaces_list(v: &Value) -> bool {
        v.as_array().is_some_and(|a| a.iter().any(is_list_replace))
    }

    fn replaces_mapping(v: &Value) -> bool {
        patch(v) == Some("replace")
    }

    fn deletes_mapping(v: &Value) -> bool {
        v.is_null() || patch(v) == Some("delete")
    }

    /// The values of top-level field `name` after its last reset (`null`,
    /// or `{$patch: delete}` for a mapping), and who reset it.
    fn after_reset<'a>(
        fs: &'a [Fragment],
        name: &str,
        mapping: bool,
    ) -> (Vec<At<'a>>, Option<Origin>) {
        let mut pointer = String::with_capacity(name.len() + 1);
        push_segment(&mut pointer, name);
        let mut values = Vec::with_capacity(fs.len());
        let mut reset_by = None;
        for f in fs {
            match f.fields().get(name) {
                Some(v) if v.is_null() || (mapping && patch(v) == Some("delete")) => {
                    values.clear();
                    reset_by = Some(origin(f, pointer.clone()));
                }
                Some(v) => values.push(At {
                    f,
                    v,
                    ptr: pointer.clone(),
                }),
                None => {}
            }
        }
        (values, reset_by)
    }

    /// The values after the last deletion (`deletes`; never at the top
    /// level, where the field was reset instead) and from the last
    /// replacement (`replaces`), recording what each of them removed.
    fn cut<'a, 'c>(
        log: &mut Log<'a>,
        cs: &'c [At<'a>],
        strategy: StrategyKind,
        top: bool,
        deletes: fn(&Value) -> bool,
        replaces: fn(&Value) -> bool,
    ) -> &'c [At<'a>] {
        let mut start = 0;
        for (i, c) in cs.iter().enumerate() {
            let deleted = !top && deletes(c.v);
            if !deleted && !replaces(c.v) {
                continue;
            }
            let dropped: Vec<Shadowed<'a>> = cs[start..i].iter().rev().map(At::shadowed).collect();
            let kind = match (deleted, dropped.is_empty()) {
                (true, false) => Some(ChangeKind::Deleted),
                (false, false) => Some(ChangeKind::Replaced),
                // An explicit delete of nothing is stale; a `null` is not.
                (true, true) if !c.v.is_null() => Some(ChangeKind::Stale),
                _ => None,
            };
            if let Some(kind) = kind {
                log.change("", kind, strategy, c.origin(), dropped);
            }
            start = if deleted { i + 1 } else { i };
        }
        &cs[start..]
    }

    // ---- the four strategies ----

    fn override_<'a>(cs: &[At<'a>], default: &'a Value, reset_by: Option<Origin>) -> Sourced<'a> {
        let mut out = Sourced {
            origin: reset_by,
            ..Sourced::default_value(default)
        };
        for c in cs {
            out = out.replaced_by(c.v, c.origin());
        }
        out
    }

    /// Is `v` among `out`? Long lists keep a set of the items' JSON text.
    fn seen_before(out: &[Sourced], seen: &mut Option<BTreeSet<String>>, v: &Value) -> bool {
        if seen.is_none() && out.len() * out.len() <= SCAN_LIMIT {
            return out.iter().any(|s| *s.value == *v);
        }
        seen.get_or_insert_with(|| out.iter().map(|s| s.value.to_string()).collect())
            .contains(&v.to_string())
    }

    /// An entry set by one layer that holds a `null` or a `$patch` below
    /// its top is merged too, so that neither reaches the result.
    fn holds_reset(v: &Value) -> bool {
        fn below(v: &Value) -> bool {
            v.as_object().is_some_and(|m| {
                m.iter()
                    .any(|(k, v)| v.is_null() || k == "$patch" || below(v))
            })
        }
        v.as_object().is_some_and(|m| {
            m.iter()
                .any(|(k, v)| k != "$patch" && (v.is_null() || below(v)))
        })
    }

    fn append<'a>(log: &mut Log<'a>, cs: &[At<'a>], unique: bool) -> Vec<Sourced<'a>> {
        let mut out: Vec<Sourced<'a>> = Vec::new();
        let mut seen: Option<BTreeSet<String>> = None;
        for c in cs {
            match c.v {
                Value::Array(items) => {
                    // The layer's deletes act on the lower items first.
                    let deletes: Vec<(&'a Value, usize)> = items
                        .iter()
                        .enumerate()
                        .filter(|(_, v)| patch(v) == Some("delete"))
                        .filter_map(|(i, v)| Some((v.get("value")?, i)))
                        .collect();
                    if !deletes.is_empty() {
                        let lower = out.len();
                        delete_items(log, &mut out, lower, &deletes, c);
                        seen = None;
                    }
                    for (i, v) in items.iter().enumerate() {
                        if patch(v).is_some() {
                            continue;
                        }
                        let at = origin(c.f, item_pointer(&c.ptr, i));
                        if unique && seen_before(&out, &mut seen, v) {
                            log.change(
                                "",
                                ChangeKind::Duplicate,
                                StrategyKind::Append,
                                at,
                                Vec::new(),
                            );
                            continue;
                        }
                        if let Some(set) = &mut seen {
                            set.insert(v.to_string());
                        }
                        out.push(Sourced::new(v, at));
                    }
                }
                Value::Null => {}
                v => out.push(Sourced::new(v, c.origin())),
            }
        }
        out
    }

    /// Removes the lower layers' items (`out[..lower]`) equal to one of
    /// `deletes` (`{$patch: delete, value: X}` of layer `c`).
    fn delete_items<'a>(
        log: &mut Log<'a>,
        out: &mut Vec<Sourced<'a>>,
        lower: usize,
        deletes: &[(&'a Value, usize)],
        c: &At<'a>,
    ) {
        let by_text: Option<BTreeMap<String, usize>> =
            (lower * deletes.len() > SCAN_LIMIT).then(|| {
                let mut m = BTreeMap::new();
                for (d, (v, _)) in deletes.iter().enumerate() {
                    m.entry(v.to_string()).or_insert(d);
                }
                m
            });
        let mut removed: Vec<Vec<Shadowed<'a>>> = vec![Vec::new(); deletes.len()];
        let mut hit = vec![false; deletes.len()];
        let mut pos = 0;
        out.retain_mut(|s| {
            pos += 1;
            if pos > lower {
                return true;
            }
            let d = match &by_text {
                Some(m) => m.get(&s.value.to_string()).copied(),
                None => deletes.iter().position(|(d, _)| **d == *s.value),
            };
            let Some(d) = d else { return true };
            hit[d] = true;
            if let Some(o) = s.origin.take() {
                removed[d].push(Shadowed {
                    value: std::mem::take(&mut s.value),
                    origin: o,
                });
            }
            false
        });
        for (d, (_, i)) in deletes.iter().enumerate() {
            let kind = if hit[d] {
                ChangeKind::Deleted
            } else {
                ChangeKind::Stale
            };
            let by = origin(c.f, item_pointer(&c.ptr, *i));
            log.change(
                "",
                kind,
                StrategyKind::Append,
                by,
                std::mem::take(&mut removed[d]),
            );
        }
    }

    fn identity<'a>(entry: &'a Value, keys: &'static [&'static str]) -> Option<Identity<'a>> {
        match entry {
            Value::String(s) if !s.is_empty() => Some(Identity {
                key: keys[0],
                value: s,
            }),
            Value::Object(m) => keys.iter().find_map(|k| match m.get(*k) {
                Some(Value::String(v)) if !v.is_empty() => Some(Identity { key: k, value: v }),
                _ => None,
            }),
            _ => None,
        }
    }

    /// `[style]`, `[id=x]`, or `[3]` for an entry without an identity.
    fn segment(id: Option<Identity>, keys: &[&str], i: usize) -> String {
        let mut s = String::from("[");
        match id {
            Some(id) if id.key == keys[0] => s.push_str(id.value),
            Some(id) => {
                s.push_str(id.key);
                s.push('=');
                s.push_str(id.value);
            }
            None => s.push_str(&i.to_string()),
        }
        s.push(']');
        s
    }

    /// An entry being merged; under `entries: merge`, with the versions of
    /// it merged key by key at the end.
    struct Slot<'a> {
        id: Option<Identity<'a>>,
        item: Sourced<'a>,
        parts: Vec<At<'a>>,
    }

    fn keyed<'a>(
        log: &mut Log<'a>,
        cs: &[At<'a>],
        keys: &'static [&'static str],
        merge_entries: bool,
    ) -> Vec<Entry<'a>> {
        // `None` for an entry a higher layer deleted.
        let mut out: Vec<Option<Slot<'a>>> = Vec::new();
        for c in cs {
            let Value::Array(items) = c.v else { continue };
            let lower = out.len();
            let index: Option<BTreeMap<Identity, usize>> =
                (lower * items.len() > SCAN_LIMIT).then(|| {
                    let mut m = BTreeMap::new();
                    for (pos, e) in out.iter().enumerate() {
                        if let Some(id) = e.as_ref().and_then(|e| e.id) {
                            m.entry(id).or_insert(pos);
                        }
                    }
                    m
                });
            let find = |out: &[Option<Slot<'a>>], id: Option<Identity<'a>>| {
                let id = id?;
                let pos = match &index {
                    Some(m) => m.get(&id).copied(),
                    None => out[..lower]
                        .iter()
                        .position(|e| e.as_ref().is_some_and(|e| e.id == Some(id))),
                }?;
                out[pos].is_some().then_some(pos)
            };
            for (i, v) in items.iter().enumerate() {
                let id = identity(v, keys);
                let mut whole = !merge_entries;
                let mut value = Cow::Borrowed(v);
                match patch(v) {
                    None => {}
                    Some("delete") => {
                        let seg = segment(id, keys, i);
                        let by = origin(c.f, item_pointer(&c.ptr, i));
                        match find(&out, id) {
                            Some(pos) => {
                                let gone = out[pos].take().expect("found entries are live");
                                let mut dropped: Vec<Shadowed<'a>> = Vec::new();
                                if let Some(o) = gone.item.origin {
                                    dropped.push(Shadowed {
                                        value: gone.item.value,
                                        origin: o,
                                    });
                                }
                                dropped.extend(gone.item.overrode);
                                log.change(
                                    &seg,
                                    ChangeKind::Deleted,
                                    StrategyKind::KeyedReplace,
                                    by,
                                    dropped,
                                );
                            }
                            None => log.change(
                                &seg,
                                ChangeKind::Stale,
                                StrategyKind::KeyedReplace,
                                by,
                                Vec::new(),
                            ),
                        }
                        continue;
                    }
                    Some("replace") if !is_list_replace(v) => {
                        whole = true;
                        let mut m = v.as_object().expect("a directive is a mapping").clone();
                        m.remove(PATCH);
                        value = Cow::Owned(Value::Object(m));
                    }
                    // `{$patch: replace}`: the cut started the list here.
                    Some(_) => continue,
                }
                let part = c.item(i, v);
                let at = part.origin();
                match find(&out, id) {
                    Some(pos) => {
                        let slot = out[pos].as_mut().expect("found entries are live");
                        let old = std::mem::take(&mut slot.item);
                        slot.item = old.replaced_by(v, at);
                        slot.item.value = value;
                        if merge_entries {
                            if whole {
                                slot.parts.clear();
                            }
                            slot.parts.push(part);
                        }
                    }
                    None => out.push(Some(Slot {
                        id,
                        item: Sourced {
                            value,
                            ..Sourced::new(v, at)
                        },
                        parts: if merge_entries {
                            vec![part]
                        } else {
                            Vec::new()
                        },
                    })),
                }
            }
        }
        let base = log.path.len();
        out.into_iter()
            .flatten()
            .enumerate()
            .map(|(i, slot)| {
                let mut item = slot.item;
                let single_with_resets = slot.parts.iter().any(|p| holds_reset(p.v));
                let parts = (slot.parts.len() > 1 || single_with_resets).then(|| {
                    log.path.push_str(&segment(slot.id, keys, i));
                    let merged = mapping(log, &slot.parts, implicit);
                    log.path.truncate(base);
                    item.value = Cow::Owned(merged.to_value());
                    Box::new(merged)
                });
                Entry {
                    identity: slot.id,
                    item,
                    parts,
                }
            })
            .collect()
    }

    /// What merges the values of one key of a mapping (`None`: the key is unset).
    type KeyRule<'a> = fn(&mut Log<'a>, &str, &[At<'a>]) -> Option<Merged<'a>>;

    /// A mapping's values, merged key by key (each key by `rule`); a value
    /// that is not a mapping replaces everything below it whole.
    fn mapping<'a>(log: &mut Log<'a>, cs: &[At<'a>], rule: KeyRule<'a>) -> Merged<'a> {
        let from = cs
            .iter()
            .rposition(|c| !c.v.is_object())
            .map_or(0, |i| i + 1);
        if from == cs.len() && from > 0 {
            let run = cs[..from]
                .iter()
                .rposition(|c| c.v.is_object())
                .map_or(0, |i| i + 1);
            let mut out = Sourced::new(cs[run].v, cs[run].origin());
            for c in &cs[run + 1..] {
                out = out.replaced_by(c.v, c.origin());
            }
            return Merged::Override(out);
        }
        let mut keys: BTreeMap<&'a str, Vec<At<'a>>> = BTreeMap::new();
        for c in &cs[from..] {
            let Value::Object(m) = c.v else { continue };
            for (k, v) in m {
                if k != PATCH {
                    keys.entry(k.as_str()).or_default().push(c.child(k, v));
                }
            }
        }
        let mut tree = BTreeMap::new();
        let len = log.path.len();
        for (k, values) in keys {
            log.path.push('.');
            log.path.push_str(k);
            if let Some(m) = rule(log, k, &values) {
                tree.insert(k, m);
            }
            log.path.truncate(len);
        }
        Merged::Deep(tree)
    }

    /// A key without a rule of its own: merged deeply, `null` or
    /// `{$patch: delete}` deletes it.
    fn implicit<'a>(log: &mut Log<'a>, _key: &str, cs: &[At<'a>]) -> Option<Merged<'a>> {
        let rest = cut(
            log,
            cs,
            StrategyKind::DeepMerge,
            false,
            deletes_mapping,
            replaces_mapping,
        );
        (!rest.is_empty()).then(|| mapping(log, rest, implicit))
    }

    // ---- top-level fields ----

    fn field<'a>(
        log: &mut Log<'a>,
        name: &'static str,
        strategy: StrategyKind,
        merged: Merged<'a>,
        reset_by: Option<Origin>,
    ) -> FieldMerge<'a> {
        FieldMerge {
            name,
            strategy,
            merged,
            reset_by,
            changes: std::mem::take(&mut log.changes),
            sections: None,
        }
    }

    fn start(log: &mut Log, name: &str) {
        log.path.clear();
        log.path.push_str(name);
    }

    fn string_field<'a>(
        log: &mut Log<'a>,
        fs: &'a [Fragment],
        name: &'static str,
        default: Option<&str>,
    ) -> FieldMerge<'a> {
        override_field(log, fs, name, &EMPTY, default)
    }

    fn bool_field<'a>(log: &mut Log<'a>, fs: &'a [Fragment], name: &'static str) -> FieldMerge<'a> {
        override_field(log, fs, name, &NULL, None)
    }

    fn override_field<'a>(
        log: &mut Log<'a>,
        fs: &'a [Fragment],
        name: &'static str,
        empty: &'static Value,
        default: Option<&str>,
    ) -> FieldMerge<'a> {
        let (values, reset_by) = after_reset(fs, name, false);
        let mut out = override_(&values, empty, reset_by.clone());
        if let Some(d) = default
            && out.value.as_str() == Some("")
        {
            out.value = Cow::Owned(Value::String(d.to_owned()));
        }
        field(
            log,
            name,
            StrategyKind::Override,
            Merged::Override(out),
            reset_by,
        )
    }

    fn append_field<'a>(
        log: &mut Log<'a>,
        fs: &'a [Fragment],
        name: &'static str,
        unique: bool,
    ) -> FieldMerge<'a> {
        start(log, name);
        let (values, reset_by) = after_reset(fs, name, false);
        let rest = cut(
            log,
            &values,
            StrategyKind::Append,
            true,
            Value::is_null,
            replaces_list,
        );
        let merged = Merged::Append(append(log, rest, unique));
        field(log, name, StrategyKind::Append, merged, reset_by)
    }

    fn keyed_field<'a>(
        log: &mut Log<'a>,
        fs: &'a [Fragment],
        name: &'static str,
        keys: &'static [&'static str],
        merge_entries: bool,
    ) -> FieldMerge<'a> {
        start(log, name);
        let (values, reset_by) = after_reset(fs, name, false);
        let rest = cut(
            log,
            &values,
            StrategyKind::KeyedReplace,
            true,
            Value::is_null,
            replaces_list,
        );
        let merged = Merged::Keyed(keyed(log, rest, keys, merge_entries));
        field(log, name, StrategyKind::KeyedReplace, merged, reset_by)
    }

    fn deep_field<'a>(
        log: &mut Log<'a>,
        fs: &'a [Fragment],
        name: &'static str,
        rule: KeyRule<'a>,
    ) -> FieldMerge<'a> {
        start(log, name);
        let (values, reset_by) = after_reset(fs, name, true);
        let rest = cut(
            log,
            &values,
            StrategyKind::DeepMerge,
            true,
            deletes_mapping,
            replaces_mapping,
        );
        let merged = mapping(log, rest, rule);
        field(log, name, StrategyKind::DeepMerge, merged, reset_by)
    }

    fn effective<'a>(name: &str, fs: &[Fragment], fields: Vec<FieldMerge<'a>>) -> Effective<'a> {
        let mut layers_present: Vec<Layer> = fs.iter().map(|f| f.layer).collect();
        layers_present.dedup();
        Effective {
            name: name.to_owned(),
            fields,
            layers_present,
        }
    }

    /// The shipped spec's fields, by name, each with its strategy.
    pub fn merge<'a>(name: &str, fs: &'a [Fragment]) -> Effective<'a> {
        let log = &mut Log::default();
        let fields = vec![
            string_field(log, fs, "agent", None),
            string_field(log, fs, "allowed-tools", None),
            string_field(log, fs, "argument-hint", None),
            keyed_field(log, fs, "assets", &KEYS, false),
            string_field(log, fs, "author", None),
            string_field(log, fs, "body", None),
            string_field(log, fs, "compatibility", None),
            string_field(log, fs, "context", None),
            bool_field(log, fs, "default-enabled"),
            string_field(log, fs, "description", None),
            bool_field(log, fs, "disable-model-invocation"),
            string_field(log, fs, "display-name", None),
            override_field(log, fs, "enabled", &TRUE, None),
            string_field(log, fs, "fallback", None),
            deep_field(log, fs, "hooks", implicit),
            string_field(log, fs, "license", None),
            deep_field(log, fs, "metadata", implicit),
            string_field(log, fs, "model", None),
            string_field(log, fs, "name", Some(name)),
            keyed_field(log, fs, "references", &KEYS, false),
            keyed_field(log, fs, "scripts", &KEYS, false),
            deep_field(log, fs, "targets", implicit),
            append_field(log, fs, "trigger_keywords", false),
            bool_field(log, fs, "user-invocable"),
            string_field(log, fs, "version", None),
        ];
        effective(name, fs, fields)
    }

    /// The keys of `metadata` in the rules spec: `tags` (APPEND, unique)
    /// and `tools` (KEYED_REPLACE by name, entries merged); others deeply.
    fn metadata_key<'a>(log: &mut Log<'a>, key: &str, cs: &[At<'a>]) -> Option<Merged<'a>> {
        match key {
            "tags" => {
                let rest = cut(
                    log,
                    cs,
                    StrategyKind::Append,
                    false,
                    Value::is_null,
                    replaces_list,
                );
                (!rest.is_empty()).then(|| Merged::Append(append(log, rest, true)))
            }
            "tools" => {
                let rest = cut(
                    log,
                    cs,
                    StrategyKind::KeyedReplace,
                    false,
                    Value::is_null,
                    replaces_list,
                );
                (!rest.is_empty()).then(|| Merged::Keyed(keyed(log, rest, &NAME, true)))
            }
            key => implicit(log, key, cs),
        }
    }

    /// The fields of `benches/fixtures/rules-v2/mergespec.yaml`.
    pub fn merge_rules<'a>(name: &str, fs: &'a [Fragment]) -> Effective<'a> {
        let log = &mut Log::default();
        let fields = vec![
            string_field(log, fs, "author", None),
            string_field(log, fs, "body", None),
            string_field(log, fs, "description", None),
            deep_field(log, fs, "hooks", implicit),
            deep_field(log, fs, "metadata", metadata_key),
            string_field(log, fs, "name", Some(name)),
            keyed_field(log, fs, "references", &KEYS, false),
            keyed_field(log, fs, "scripts", &NAME, true),
            append_field(log, fs, "trigger_keywords", true),
            string_field(log, fs, "version", None),
        ];
        effective(name, fs, fields)
    }
}

/// The hand-written merge on plain JSON, no provenance: a reference point
/// for what provenance costs, not part of the overhead ratio.
mod values_only {
    use super::*;

    fn deep(lower: &mut Value, higher: &Map<String, Value>) {
        let Value::Object(lower) = lower else {
            *lower = Value::Object(strip_nulls(higher));
            return;
        };
        for (k, v) in higher {
            match (lower.get_mut(k), v) {
                (_, Value::Null) => {
                    lower.remove(k);
                }
                (Some(l @ Value::Object(_)), Value::Object(m)) => deep(l, m),
                (_, Value::Object(m)) => {
                    lower.insert(k.clone(), Value::Object(strip_nulls(m)));
                }
                (_, v) => {
                    lower.insert(k.clone(), v.clone());
                }
            }
        }
    }

    fn strip_nulls(m: &Map<String, Value>) -> Map<String, Value> {
        m.iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| match v {
                Value::Object(inner) => (k.clone(), Value::Object(strip_nulls(inner))),
                v => (k.clone(), v.clone()),
            })
            .collect()
    }

    fn key_of(v: &Value) -> Option<(&'static str, &str)> {
        match v {
            Value::String(s) if !s.is_empty() => Some(("name", s)),
            Value::Object(m) => ["name", "id", "code"]
                .into_iter()
                .find_map(|k| match m.get(k) {
                    Some(Value::String(s)) if !s.is_empty() => Some((k, s.as_str())),
                    _ => None,
                }),
            _ => None,
        }
    }

    pub fn merge(name: &str, fs: &[Fragment]) -> Value {
        let mut out = Map::new();
        let strings = [
            "agent",
            "allowed-tools",
            "argument-hint",
            "author",
            "body",
            "compatibility",
            "context",
            "description",
            "display-name",
            "fallback",
            "license",
            "model",
            "name",
            "version",
        ];
        let booleans = [
            "default-enabled",
            "disable-model-invocation",
            "user-invocable",
        ];
        for field in strings.into_iter().chain(booleans) {
            let empty = if booleans.contains(&field) {
                Value::Null
            } else {
                Value::String(String::new())
            };
            let mut v = empty.clone();
            for f in fs {
                match f.fields().get(field) {
                    Some(Value::Null) => v = empty.clone(),
                    Some(x) => v = x.clone(),
                    None => {}
                }
            }
            if field == "name" && v.as_str() == Some("") {
                v = Value::String(name.to_owned());
            }
            out.insert(field.to_owned(), v);
        }
        let mut kw = Vec::new();
        for f in fs {
            match f.fields().get("trigger_keywords") {
                Some(Value::Array(items)) => kw.extend(items.iter().cloned()),
                Some(Value::Null) => kw.clear(),
                Some(v) => kw.push(v.clone()),
                None => {}
            }
        }
        out.insert("trigger_keywords".into(), Value::Array(kw));
        for field in ["assets", "references", "scripts"] {
            let mut list: Vec<Value> = Vec::new();
            for f in fs {
                match f.fields().get(field) {
                    Some(Value::Array(items)) => {
                        let lower = list.len();
                        for v in items {
                            let key = key_of(v);
                            match key.and_then(|k| {
                                list[..lower].iter().position(|e| key_of(e) == Some(k))
                            }) {
                                Some(pos) => list[pos] = v.clone(),
                                None => list.push(v.clone()),
                            }
                        }
                    }
                    Some(Value::Null) => list.clear(),
                    _ => {}
                }
            }
            out.insert(field.to_owned(), Value::Array(list));
        }
        // `enabled`: a boolean whose default is true (a null resets it).
        let mut enabled = Value::Bool(true);
        for f in fs {
            match f.fields().get("enabled") {
                Some(Value::Null) => enabled = Value::Bool(true),
                Some(x) => enabled = x.clone(),
                None => {}
            }
        }
        out.insert("enabled".into(), enabled);
        for field in ["hooks", "metadata", "targets"] {
            let mut meta = Value::Object(Map::new());
            for f in fs {
                match f.fields().get(field) {
                    Some(Value::Object(m)) => deep(&mut meta, m),
                    Some(Value::Null) => meta = Value::Object(Map::new()),
                    Some(v) => meta = v.clone(),
                    None => {}
                }
            }
            out.insert(field.into(), meta);
        }
        let mut layers: Vec<Layer> = fs.iter().map(|f| f.layer).collect();
        layers.dedup();
        out.insert(
            "layers_present".into(),
            Value::Array(
                layers
                    .iter()
                    .map(|l| Value::String(l.label().into()))
                    .collect(),
            ),
        );
        Value::Object(out)
    }
}

/// Each layer alone, each pair and all three: the fragments `mask` selects.
fn subsets(fragments: &[Fragment]) -> impl Iterator<Item = Vec<Fragment>> + '_ {
    (1..1u32 << fragments.len()).map(move |mask| {
        fragments
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, f)| f.clone())
            .collect()
    })
}

/// `fragments` with some fields set anew (`edits[i]` for layer `i`): a
/// field set to a value replaces the fragment's own.
fn edited(fragments: &[Fragment], edits: [Value; 3]) -> Vec<Fragment> {
    fragments
        .iter()
        .zip(edits)
        .map(|(f, edit)| {
            let mut fields = f.fields().clone();
            fields.extend(edit.as_object().expect("edits are mappings").clone());
            Fragment::from_fields(f.layer, &f.path, fields)
        })
        .collect()
}

/// The shipped spec's fixture with directives (the shipped spec is version
/// 2): the hand-written merge follows them as the interpreter does.
fn shipped_with_directives(fragments: &[Fragment]) -> [Vec<Fragment>; 2] {
    let a = edited(
        fragments,
        [
            json!({}),
            json!({
                "references": [
                    {"id": "ref-skill-00081-0", "$patch": "delete"},
                    {"name": "ghost", "$patch": "delete"},
                    {"code": "R1550", "note": "team copy"},
                ],
                "scripts": [{"name": "review-0", "$patch": "replace", "run": "team.sh"}],
                "metadata": {
                    "legacy": null,
                    "model": {"$patch": "replace", "family": "team-pick"},
                    "owner": {"$patch": "delete"},
                    "tags": null,
                    "ghost": {"$patch": "delete"},
                    "nothing": null,
                },
            }),
            json!({
                "trigger_keywords": [
                    {"$patch": "delete", "value": "translate"},
                    {"$patch": "delete", "value": "nope"},
                    "mine",
                ],
                "assets": [{"$patch": "replace"}, "logo.svg"],
                "references": [{"code": "R1550", "$patch": "delete"}],
                "hooks": {"$patch": "replace", "Stop": [{"hooks": []}]},
                "metadata": {
                    "limits": {"$patch": "replace", "max_tokens": 1},
                    "team": null,
                    "model": {"params": {"top_p": null}},
                },
            }),
        ],
    );
    let b = edited(
        fragments,
        [
            json!({"hooks": {"PreToolUse": [{"matcher": "Bash"}], "Stop": 1}}),
            json!({
                "trigger_keywords": [{"$patch": "replace"}, "team-only"],
                "metadata": {"$patch": "delete"},
                "hooks": {"Stop": {"a": 1}, "PreToolUse": {"$patch": "delete"}},
            }),
            json!({
                "references": null,
                "metadata": {"a": {"b": 1}, "$patch": "replace"},
                "hooks": {"Stop": 2},
            }),
        ],
    );
    [a, b]
}

/// The shipped spec's fixture, after checking that the three merges agree.
fn fixture() -> (MergeSpec, Vec<Fragment>) {
    let spec = common::spec();
    let options = common::options(&spec);
    let fragments: Vec<Fragment> = common::three_layers()
        .iter()
        .map(|s| s.parse(&options))
        .collect();
    let real = merge(&spec, common::SKILL, &fragments);
    assert!(
        !real
            .field("metadata")
            .expect("a spec field")
            .changes
            .is_empty(),
        "the fixture deletes a lower layer's metadata key"
    );
    assert_eq!(
        hand::merge(common::SKILL, &fragments),
        real,
        "the hand-written merge must give the same Effective, provenance included"
    );
    assert_eq!(
        values_only::merge(common::SKILL, &fragments),
        real.to_value(),
        "the values-only merge must give the same values"
    );
    // Each layer alone and each pair too, so that single-layer skills agree.
    for some in subsets(&fragments) {
        assert_eq!(hand::merge("x", &some), merge(&spec, "x", &some));
        assert_eq!(
            values_only::merge("x", &some),
            merge(&spec, "x", &some).to_value()
        );
    }
    for variant in shipped_with_directives(&fragments) {
        for some in subsets(&variant) {
            assert_eq!(hand::merge("x", &some), merge(&spec, "x", &some));
        }
    }
    (spec, fragments)
}

/// The skill of the rules-engine-v2 comparison.
const RULES_SKILL: &str = "review";

/// The rules-engine-v2 fixture (`benches/fixtures/rules-v2/`: its spec,
/// with rules for keys of `metadata`, and a skill in all three layers that
/// uses every directive), after checking that both merges agree.
fn rules_fixture() -> (MergeSpec, Vec<Fragment>) {
    let dir = common::root().join("benches/fixtures/rules-v2");
    let spec = MergeSpec::load(&dir.join("mergespec.yaml")).expect("the rules spec loads");
    assert!(spec.directives(), "the rules spec is version 2");
    let options = common::options(&spec);
    let fragments: Vec<Fragment> = [
        ("base/review.yaml", Form::Yaml, Layer::Base),
        ("team/review.yaml", Form::Yaml, Layer::Team),
        ("user/review.toml", Form::Toml, Layer::User),
    ]
    .into_iter()
    .map(|(rel, form, layer)| {
        let path = dir.join(rel);
        let text = std::fs::read_to_string(&path).expect("fixture reads");
        Fragment::from_str(text, form, layer, &path, &options).expect("fixture parses")
    })
    .collect();
    let real = merge(&spec, RULES_SKILL, &fragments);
    // The fixture exercises what it is meant to: a deleted keyed entry, a
    // mapping replaced whole, dropped duplicates, merged entries.
    let kinds: BTreeSet<(String, &str)> = real
        .fields
        .iter()
        .flat_map(|f| &f.changes)
        .map(|c| (c.path.clone(), c.kind.label()))
        .collect();
    for expected in [
        ("metadata.tools[curl]", "deleted"),
        ("references[style]", "deleted"),
        ("metadata.model", "replaced"),
        ("metadata.owner", "deleted"),
        ("metadata.tags", "duplicate"),
        ("metadata.tags", "deleted"),
        ("trigger_keywords", "duplicate"),
    ] {
        assert!(
            kinds.contains(&(expected.0.to_owned(), expected.1)),
            "{expected:?} in {kinds:?}"
        );
    }
    let Some(Merged::Deep(meta)) = real.field("metadata").map(|f| &f.merged) else {
        panic!("metadata is a mapping")
    };
    let Some(Merged::Keyed(tools)) = meta.get("tools") else {
        panic!("metadata.tools is keyed: {meta:?}")
    };
    assert!(tools.iter().any(|e| e.parts.is_some()), "a merged entry");
    assert_eq!(
        hand::merge_rules(RULES_SKILL, &fragments),
        real,
        "the hand-written merge of the rules spec must give the same Effective"
    );
    let variant = edited(
        &fragments,
        [
            json!({}),
            json!({
                "trigger_keywords": [{"$patch": "replace"}, "a", "a", "review"],
                "scripts": [
                    {"name": "lint", "$patch": "replace", "run": "x"},
                    {"name": "ghost", "$patch": "delete"},
                ],
                "metadata": {
                    "tags": null,
                    "tools": [{"$patch": "replace"}, {"name": "rg"}, {"name": "grep"}],
                    "model": {"$patch": "delete"},
                },
            }),
            json!({
                "scripts": [{"name": "lint", "timeout_s": null}, "test"],
                "metadata": {
                    "tags": ["z", {"$patch": "delete", "value": "z"}, "tone"],
                    "tools": [
                        {"name": "rg", "opts": {"x": null}},
                        {"name": "grep", "limits": {"$patch": "replace", "x": 1}},
                        {"name": "jq", "$patch": "delete"},
                    ],
                },
            }),
        ],
    );
    for fs in [fragments.clone(), variant] {
        for some in subsets(&fs) {
            assert_eq!(
                hand::merge_rules("x", &some),
                merge(&spec, "x", &some),
                "the hand-written merge of the rules spec must agree on every subset"
            );
        }
    }
    (spec, fragments)
}

fn benches(c: &mut Criterion) {
    let (spec, fragments) = fixture();
    let mut g = c.benchmark_group("merge three layers");
    g.bench_function("spec-driven (bernstein_skills::merge)", |b| {
        b.iter(|| merge(black_box(&spec), common::SKILL, black_box(&fragments)))
    });
    g.bench_function("hand-written, same provenance", |b| {
        b.iter(|| hand::merge(common::SKILL, black_box(&fragments)))
    });
    g.bench_function("hand-written, values only", |b| {
        b.iter(|| values_only::merge(common::SKILL, black_box(&fragments)))
    });
    g.finish();

    let (spec, fragments) = rules_fixture();
    let mut g = c.benchmark_group("rules v2: nested rules and directives");
    g.bench_function("spec-driven (bernstein_skills::merge)", |b| {
        b.iter(|| merge(black_box(&spec), RULES_SKILL, black_box(&fragments)))
    });
    g.bench_function("hand-written, same provenance", |b| {
        b.iter(|| hand::merge_rules(RULES_SKILL, black_box(&fragments)))
    });
    g.finish();
}

// `--count N [spec|hand|values|rules-spec|rules-hand]` runs each merge (or
// one) N times (result dropped, as in the timed loop) and nothing else, for
// instruction counts that do not depend on the machine's load. The release
// profile strips symbols, which the toggle needs:
//
//   CARGO_PROFILE_BENCH_STRIP=none CARGO_PROFILE_BENCH_DEBUG=line-tables-only \
//       cargo bench --bench interpreter --no-run
//   valgrind --tool=callgrind --toggle-collect='interpreter::count_*' \
//       target/release/deps/interpreter-<hash> --count 1000
//   callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep count_
//
// Each `count_*` line's Ir divided by N is instructions per merge.
#[inline(never)]
fn count_spec(spec: &MergeSpec, name: &str, fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(merge(black_box(spec), name, black_box(fs)));
    }
}

#[inline(never)]
fn count_hand(fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(hand::merge(common::SKILL, black_box(fs)));
    }
}

#[inline(never)]
fn count_values_only(fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(values_only::merge(common::SKILL, black_box(fs)));
    }
}

// Its own loop: a call to `count_spec` would toggle callgrind's collection off.
#[inline(never)]
fn count_rules_spec(spec: &MergeSpec, fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(merge(black_box(spec), RULES_SKILL, black_box(fs)));
    }
}

#[inline(never)]
fn count_rules_hand(fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(hand::merge_rules(RULES_SKILL, black_box(fs)));
    }
}

criterion_group! {
    name = interpreter;
    config = Criterion::default()
        .sample_size(60)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--count") {
        let n = args
            .get(i + 1)
            .and_then(|s| s.parse().ok())
            .expect("--count N");
        // An optional last argument runs only one of them.
        let only = args.get(i + 2).map(String::as_str);
        let run = |name: &str| only.is_none_or(|o| o == name);
        let (spec, fragments) = fixture();
        if run("spec") {
            count_spec(&spec, common::SKILL, &fragments, n);
        }
        if run("hand") {
            count_hand(&fragments, n);
        }
        if run("values") {
            count_values_only(&fragments, n);
        }
        let (spec, fragments) = rules_fixture();
        if run("rules-spec") {
            count_rules_spec(&spec, &fragments, n);
        }
        if run("rules-hand") {
            count_rules_hand(&fragments, n);
        }
        return;
    }
    interpreter();
    Criterion::default().configure_from_args().final_summary();
}
