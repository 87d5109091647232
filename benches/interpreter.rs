//! Interpreter overhead: the spec-driven [`merge`] against a merge of the
//! same fields and strategies written by hand for the shipped spec, as one
//! would without a merge spec.
//!
//! The comparison is like for like. The real merge records provenance (an
//! `Origin` with a JSON pointer for every OVERRIDE field, APPEND item, keyed
//! entry and DEEP_MERGE leaf, and the chain of values each replaced), so the
//! hand-written one builds the very same `Effective` value, provenance
//! included — the bench asserts the two are equal before timing anything.
//! What is left to measure is what the data-driven design costs: walking the
//! spec's field list, dispatching on each field's strategy, reading keys and
//! defaults from the spec instead of constants.
//!
//! A third line, `hand-written, values only`, merges plain JSON with no
//! provenance at all. It is not part of the ratio; it shows what provenance
//! itself costs.
//!
//! `cargo bench --bench interpreter`; see `benches/README.md` for figures.

mod common;

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group};
use serde_json::{Map, Value};

use bernstein_skills::fragment::escape_pointer;
use bernstein_skills::merge::{Entry, FieldMerge, Identity, Merged};
use bernstein_skills::provenance::{Origin, Sourced};
use bernstein_skills::{Effective, Fragment, Layer, merge};

/// The same allocator as the `bernstein` binary, so the figures are those
/// of the binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The hand-written merge, provenance included.
mod hand {
    use super::*;

    const KEYS: [&str; 3] = ["name", "id", "code"];
    /// The default of every field of the shipped spec that may be a string.
    static EMPTY: Value = Value::String(String::new());
    /// The default of its boolean fields.
    static NULL: Value = Value::Null;

    fn origin(f: &Fragment, pointer: String) -> Origin {
        Origin {
            layer: f.layer,
            path: f.path.clone(),
            pointer,
        }
    }

    /// The values of `field` after its last `null` reset, and who reset it.
    fn after_reset<'a>(
        fs: &'a [Fragment],
        field: &str,
    ) -> (Vec<(&'a Fragment, &'a Value)>, Option<Origin>) {
        let mut values = Vec::with_capacity(fs.len());
        let mut reset_by = None;
        for f in fs {
            match f.fields().get(field) {
                Some(Value::Null) => {
                    values.clear();
                    reset_by = Some(origin(f, format!("/{field}")));
                }
                Some(v) => values.push((f, v)),
                None => {}
            }
        }
        (values, reset_by)
    }

    fn field<'a>(
        name: &'a str,
        strategy: &'static str,
        merged: Merged<'a>,
        reset_by: Option<Origin>,
    ) -> FieldMerge<'a> {
        FieldMerge {
            name,
            strategy,
            merged,
            reset_by,
            changes: Vec::new(),
        }
    }

    fn string_field<'a>(
        fs: &'a [Fragment],
        name: &'static str,
        default: Option<&str>,
    ) -> FieldMerge<'a> {
        override_field(fs, name, &EMPTY, default)
    }

    fn bool_field<'a>(fs: &'a [Fragment], name: &'static str) -> FieldMerge<'a> {
        override_field(fs, name, &NULL, None)
    }

    fn override_field<'a>(
        fs: &'a [Fragment],
        name: &'static str,
        empty: &'static Value,
        default: Option<&str>,
    ) -> FieldMerge<'a> {
        let (values, reset_by) = after_reset(fs, name);
        let mut out = Sourced {
            origin: reset_by.clone(),
            ..Sourced::default_value(empty)
        };
        for (f, v) in values {
            out = out.replaced_by(v, origin(f, format!("/{name}")));
        }
        if let Some(d) = default
            && out.value.as_str() == Some("")
        {
            out.value = Cow::Owned(Value::String(d.to_owned()));
        }
        field(name, "OVERRIDE", Merged::Override(out), reset_by)
    }

    fn keywords(fs: &[Fragment]) -> FieldMerge<'_> {
        let (values, reset_by) = after_reset(fs, "trigger_keywords");
        let mut out = Vec::new();
        for (f, v) in values {
            match v {
                Value::Array(items) => {
                    for (i, v) in items.iter().enumerate() {
                        out.push(Sourced::new(v, origin(f, format!("/trigger_keywords/{i}"))));
                    }
                }
                v => out.push(Sourced::new(v, origin(f, "/trigger_keywords".into()))),
            }
        }
        field("trigger_keywords", "APPEND", Merged::Append(out), reset_by)
    }

    fn identity(entry: &Value) -> Option<Identity<'_>> {
        match entry {
            Value::String(s) if !s.is_empty() => Some(Identity {
                key: KEYS[0],
                value: s,
            }),
            Value::Object(m) => KEYS.iter().find_map(|k| match m.get(*k) {
                Some(Value::String(v)) if !v.is_empty() => Some(Identity { key: k, value: v }),
                _ => None,
            }),
            _ => None,
        }
    }

    fn keyed<'a>(fs: &'a [Fragment], name: &'static str) -> FieldMerge<'a> {
        let (values, reset_by) = after_reset(fs, name);
        let mut out: Vec<Entry> = Vec::new();
        for (f, v) in values {
            let Value::Array(items) = v else {
                continue;
            };
            let lower = out.len();
            let index: Option<BTreeMap<Identity, usize>> =
                (lower * items.len() > 4096).then(|| {
                    let mut m = BTreeMap::new();
                    for (pos, e) in out.iter().enumerate() {
                        if let Some(id) = e.identity {
                            m.entry(id).or_insert(pos);
                        }
                    }
                    m
                });
            for (i, v) in items.iter().enumerate() {
                let id = identity(v);
                let at = origin(f, format!("/{name}/{i}"));
                let existing = id.and_then(|id| match &index {
                    Some(m) => m.get(&id).copied(),
                    None => out[..lower].iter().position(|e| e.identity == Some(id)),
                });
                match existing {
                    Some(pos) => {
                        let old = std::mem::take(&mut out[pos].item);
                        out[pos].item = old.replaced_by(v, at);
                    }
                    None => out.push(Entry {
                        identity: id,
                        item: Sourced::new(v, at),
                        parts: None,
                    }),
                }
            }
        }
        field(name, "KEYED_REPLACE", Merged::Keyed(out), reset_by)
    }

    fn push_segment(pointer: &mut String, key: &str) {
        pointer.push('/');
        if key.contains(['~', '/']) {
            pointer.push_str(&escape_pointer(key));
        } else {
            pointer.push_str(key);
        }
    }

    fn tree_of_map<'a>(
        m: &'a Map<String, Value>,
        f: &Fragment,
        pointer: &mut String,
    ) -> Merged<'a> {
        let mut out = BTreeMap::new();
        for (k, v) in m {
            if v.is_null() {
                continue;
            }
            let len = pointer.len();
            push_segment(pointer, k);
            out.insert(k.as_str(), tree(v, f, pointer));
            pointer.truncate(len);
        }
        Merged::Deep(out)
    }

    fn tree<'a>(v: &'a Value, f: &Fragment, pointer: &mut String) -> Merged<'a> {
        match v {
            Value::Object(m) => tree_of_map(m, f, pointer),
            v => Merged::Override(Sourced::new(v, origin(f, pointer.clone()))),
        }
    }

    fn apply<'a>(
        node: &mut Merged<'a>,
        higher: &'a Map<String, Value>,
        f: &Fragment,
        pointer: &mut String,
    ) {
        let Merged::Deep(lower) = node else {
            *node = tree_of_map(higher, f, pointer);
            return;
        };
        for (k, v) in higher {
            let len = pointer.len();
            push_segment(pointer, k);
            match (lower.get_mut(k.as_str()), v) {
                (_, Value::Null) => {
                    lower.remove(k.as_str());
                }
                (Some(n @ Merged::Deep(_)), Value::Object(m)) => apply(n, m, f, pointer),
                (Some(Merged::Override(old)), v) if !v.is_object() => {
                    let old = std::mem::take(old);
                    *lower.get_mut(k.as_str()).expect("present") =
                        Merged::Override(old.replaced_by(v, origin(f, pointer.clone())));
                }
                (_, v) => {
                    lower.insert(k.as_str(), tree(v, f, pointer));
                }
            }
            pointer.truncate(len);
        }
    }

    fn deep_field<'a>(fs: &'a [Fragment], name: &'static str) -> FieldMerge<'a> {
        let (values, reset_by) = after_reset(fs, name);
        let mut out = Merged::Deep(BTreeMap::new());
        for (f, v) in values {
            let mut pointer = format!("/{name}");
            match v {
                Value::Object(m) => apply(&mut out, m, f, &mut pointer),
                v => out = tree(v, f, &mut pointer),
            }
        }
        field(name, "DEEP_MERGE", out, reset_by)
    }

    /// The shipped spec's fields, by name, each with its strategy.
    pub fn merge<'a>(name: &str, fs: &'a [Fragment]) -> Effective<'a> {
        let fields = vec![
            string_field(fs, "agent", None),
            string_field(fs, "allowed-tools", None),
            string_field(fs, "argument-hint", None),
            keyed(fs, "assets"),
            string_field(fs, "author", None),
            string_field(fs, "body", None),
            string_field(fs, "compatibility", None),
            string_field(fs, "context", None),
            string_field(fs, "description", None),
            bool_field(fs, "disable-model-invocation"),
            deep_field(fs, "hooks"),
            string_field(fs, "license", None),
            deep_field(fs, "metadata"),
            string_field(fs, "model", None),
            string_field(fs, "name", Some(name)),
            keyed(fs, "references"),
            keyed(fs, "scripts"),
            keywords(fs),
            bool_field(fs, "user-invocable"),
            string_field(fs, "version", None),
        ];
        let mut layers_present: Vec<Layer> = fs.iter().map(|f| f.layer).collect();
        layers_present.dedup();
        Effective {
            name: name.to_owned(),
            fields,
            layers_present,
        }
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
            "license",
            "model",
            "name",
            "version",
        ];
        let booleans = ["disable-model-invocation", "user-invocable"];
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
        for field in ["hooks", "metadata"] {
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

/// The fixture's three fragments, after checking that the three merges agree.
fn fixture() -> (bernstein_skills::MergeSpec, Vec<Fragment>) {
    let spec = common::spec();
    let options = common::options(&spec);
    let fragments: Vec<Fragment> = common::three_layers()
        .iter()
        .map(|s| s.parse(&options))
        .collect();
    let real = merge(&spec, common::SKILL, &fragments);
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
    for mask in 1..8u32 {
        let some: Vec<Fragment> = fragments
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(_, f)| f.clone())
            .collect();
        assert_eq!(hand::merge("x", &some), merge(&spec, "x", &some));
        assert_eq!(
            values_only::merge("x", &some),
            merge(&spec, "x", &some).to_value()
        );
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
}

// `--count N [spec|hand|values]` runs each merge (or one) N times (result dropped, as in the timed
// loop) and nothing else, for instruction counts that do not depend on the
// machine's load:
//
//   valgrind --tool=callgrind --toggle-collect='interpreter::count_*' \
//       target/release/deps/interpreter-<hash> --count 1000
//   callgrind_annotate --inclusive=yes callgrind.out.<pid> | grep count_
//
// Each `count_*` line's Ir divided by N is instructions per merge.
#[inline(never)]
fn count_spec(spec: &bernstein_skills::MergeSpec, fs: &[Fragment], n: usize) {
    for _ in 0..n {
        black_box(merge(black_box(spec), common::SKILL, black_box(fs)));
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
        let (spec, fragments) = fixture();
        if only.is_none_or(|o| o == "spec") {
            count_spec(&spec, &fragments, n);
        }
        if only.is_none_or(|o| o == "hand") {
            count_hand(&fragments, n);
        }
        if only.is_none_or(|o| o == "values") {
            count_values_only(&fragments, n);
        }
        return;
    }
    interpreter();
    Criterion::default().configure_from_args().final_summary();
}
