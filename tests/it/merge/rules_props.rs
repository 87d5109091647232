//! Property tests of rules engine v2: `$patch` directives, rules for the
//! keys of a DEEP_MERGE field, `unique` and `entries: merge`, through the
//! library's `merge` on fragments built in memory. Every generated fragment
//! puts directives where they mean something: list elements of APPEND and
//! KEYED_REPLACE lists, keyed entries, and mappings at any depth below a
//! DEEP_MERGE field.

use std::path::Path;

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::merge::{ChangeKind, Merged};
use bernstein_skills::{Effective, Fragment, Layer, MergeSpec, Validator, merge, output::render};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

const SKILL: &str = "s";
const PATCH: &str = "$patch";

/// Every strategy at the top level and below `meta`, two levels deep.
const SPEC_V2: &str = "\
version: 2
fields:
  name: {strategy: OVERRIDE, type: string}
  list: {strategy: APPEND, items: string}
  uniq: {strategy: APPEND, items: string, unique: true}
  refs: {strategy: KEYED_REPLACE, keys: [name, id]}
  tools: {strategy: KEYED_REPLACE, keys: [name], entries: merge}
  meta:
    strategy: DEEP_MERGE
    fields:
      tags: {strategy: APPEND, items: string, unique: true}
      tools: {strategy: KEYED_REPLACE, keys: [name], entries: merge}
      inner:
        strategy: DEEP_MERGE
        fields:
          list: {strategy: APPEND, items: string}
";

/// The same fields under version 1, which has no directives (and no
/// `unique`, `entries` or nested rules).
const SPEC_V1: &str = "\
version: 1
fields:
  name: {strategy: OVERRIDE, type: string}
  list: {strategy: APPEND, items: string}
  uniq: {strategy: APPEND, items: string}
  refs: {strategy: KEYED_REPLACE, keys: [name, id]}
  tools: {strategy: KEYED_REPLACE, keys: [name]}
  meta: {strategy: DEEP_MERGE}
";

fn spec(text: &str) -> MergeSpec {
    MergeSpec::from_str(text, Path::new("rules.yaml")).expect("the test spec loads")
}

fn fragment(layer: Layer, fields: Map<String, Value>) -> Fragment {
    let path = format!("{}/s.yaml", layer.label());
    Fragment::from_fields(layer, Path::new(&path), fields)
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        v => panic!("not a mapping: {v}"),
    }
}

/// The fragments of the layers present, base first.
fn fragments(layers: &[Option<Map<String, Value>>; 3]) -> Vec<Fragment> {
    Layer::ALL
        .into_iter()
        .zip(layers)
        .filter_map(|(l, f)| Some(fragment(l, f.clone()?)))
        .collect()
}

/// Does `v` hold a `$patch` key at any depth?
fn has_patch(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.contains_key(PATCH) || m.values().any(has_patch),
        Value::Array(a) => a.iter().any(has_patch),
        _ => false,
    }
}

/// `v` with every key `from` renamed `to`, at any depth.
fn rename(v: &Value, from: &str, to: &str) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let k = if k == from { to } else { k.as_str() };
                    (k.to_owned(), rename(v, from, to))
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|v| rename(v, from, to)).collect()),
        v => v.clone(),
    }
}

/// The value at `path` (keys of nested mappings).
fn at<'v>(v: &'v Value, path: &[&str]) -> Option<&'v Value> {
    path.iter().try_fold(v, |v, k| v.as_object()?.get(*k))
}

/// `value` below the keys of `path`, as a fragment's fields.
fn nest(path: &[&str], value: Value) -> Map<String, Value> {
    let v = path.iter().rev().fold(value, |v, k| {
        Value::Object(Map::from_iter([((*k).to_owned(), v)]))
    });
    object(v)
}

// ---- generators ----

fn word() -> impl Strategy<Value = Value> {
    "[abcd]".prop_map(Value::from)
}

/// An APPEND list: words, `{$patch: replace}` and `{$patch: delete, value: w}`.
fn append_list() -> BoxedStrategy<Value> {
    prop::collection::vec(
        prop_oneof![
            6 => word().boxed(),
            1 => Just(json!({PATCH: "replace"})).boxed(),
            2 => word().prop_map(|w| json!({PATCH: "delete", "value": w})).boxed(),
        ],
        0..5,
    )
    .prop_map(Value::Array)
    .boxed()
}

/// The key field of a generated entry: `name`, or also `id` for `refs`.
fn key_field(only_name: bool) -> BoxedStrategy<&'static str> {
    if only_name {
        Just("name").boxed()
    } else {
        prop_oneof![3 => Just("name"), 1 => Just("id")].boxed()
    }
}

/// A keyed entry without directives: a mapping with a payload (nested, for
/// `entries: merge` to merge), or a plain string.
fn plain_entry(only_name: bool) -> BoxedStrategy<Value> {
    prop_oneof![
        3 => (key_field(only_name), "[pqr]", 0..3i64)
            .prop_map(|(k, id, n)| json!({k: id, "v": n})).boxed(),
        2 => (key_field(only_name), "[pqr]", 0..3i64)
            .prop_map(|(k, id, n)| json!({k: id, "cfg": {"a": n, "b": [n]}})).boxed(),
        1 => "[pqr]".prop_map(Value::from).boxed(),
    ]
    .boxed()
}

/// A KEYED_REPLACE list: plain entries, deletes and replacements of
/// entries, and `{$patch: replace}`.
fn keyed_list(only_name: bool) -> BoxedStrategy<Value> {
    prop::collection::vec(
        prop_oneof![
            6 => plain_entry(only_name),
            1 => (key_field(only_name), "[pqr]")
                .prop_map(|(k, id)| json!({k: id, PATCH: "delete"})).boxed(),
            1 => (key_field(only_name), "[pqr]", 0..3i64)
                .prop_map(|(k, id, n)| json!({k: id, PATCH: "replace", "w": n})).boxed(),
            1 => Just(json!({PATCH: "replace"})).boxed(),
        ],
        0..5,
    )
    .prop_map(Value::Array)
    .boxed()
}

/// A value below a key without a rule: leaves, `null`, `{$patch: delete}`,
/// and mappings, some with `$patch: replace`.
fn implicit(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![
        (0i64..4).prop_map(Value::from).boxed(),
        word().boxed(),
        Just(Value::Null).boxed(),
        Just(json!([1, 2])).boxed(),
        Just(json!({PATCH: "delete"})).boxed(),
    ];
    if depth == 0 {
        return leaf.boxed();
    }
    let map = (
        prop::collection::btree_map("[ab]", implicit(depth - 1), 0..3),
        prop::bool::weighted(0.3),
    )
        .prop_map(|(m, replace)| {
            let mut m: Map<String, Value> = m.into_iter().collect();
            if replace {
                m.insert(PATCH.into(), json!("replace"));
            }
            Value::Object(m)
        });
    prop_oneof![leaf, map].boxed()
}

/// Sets `key` of `m` to `v` if there is one.
fn set(m: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        m.insert(key.into(), v);
    }
}

/// A value or `null`, or nothing.
fn maybe(s: BoxedStrategy<Value>) -> BoxedStrategy<Option<Value>> {
    prop_oneof![3 => Just(None), 1 => Just(Some(Value::Null)), 4 => s.prop_map(Some)].boxed()
}

/// `meta.inner`: a mapping with a `list` rule.
fn inner() -> BoxedStrategy<Value> {
    prop_oneof![
        1 => Just(json!({PATCH: "delete"})).boxed(),
        5 => (
            maybe(append_list()),
            prop::collection::btree_map("[ab]", implicit(1), 0..2),
            prop::bool::weighted(0.2),
        )
            .prop_map(|(list, m, replace)| {
                let mut m: Map<String, Value> = m.into_iter().collect();
                set(&mut m, "list", list);
                if replace {
                    m.insert(PATCH.into(), json!("replace"));
                }
                Value::Object(m)
            })
            .boxed(),
    ]
    .boxed()
}

/// `meta`: keys with rules (`tags`, `tools`, `inner`) and without.
fn meta() -> BoxedStrategy<Value> {
    let mapping = (
        maybe(append_list()),
        maybe(keyed_list(true)),
        maybe(inner()),
        prop::collection::btree_map("[ab]", implicit(2), 0..3),
        prop::bool::weighted(0.2),
    )
        .prop_map(|(tags, tools, inner, m, replace)| {
            let mut m: Map<String, Value> = m.into_iter().collect();
            set(&mut m, "tags", tags);
            set(&mut m, "tools", tools);
            set(&mut m, "inner", inner);
            if replace {
                m.insert(PATCH.into(), json!("replace"));
            }
            Value::Object(m)
        });
    prop_oneof![6 => mapping.boxed(), 1 => Just(json!({PATCH: "delete"})).boxed()].boxed()
}

/// A fragment of [`SPEC_V2`] using directives: each field absent, `null` or set.
fn v2_fragment() -> impl Strategy<Value = Map<String, Value>> {
    (
        maybe("[a-z]{1,3}".prop_map(Value::from).boxed()),
        maybe(append_list()),
        maybe(append_list()),
        maybe(keyed_list(false)),
        maybe(keyed_list(true)),
        maybe(meta()),
    )
        .prop_map(|(name, list, uniq, refs, tools, meta)| {
            let mut m = Map::new();
            set(&mut m, "name", name);
            set(&mut m, "list", list);
            set(&mut m, "uniq", uniq);
            set(&mut m, "refs", refs);
            set(&mut m, "tools", tools);
            set(&mut m, "meta", meta);
            m
        })
}

fn v2_layers() -> impl Strategy<Value = [Option<Map<String, Value>>; 3]> {
    [
        prop::option::weighted(0.8, v2_fragment()),
        prop::option::weighted(0.7, v2_fragment()),
        prop::option::weighted(0.7, v2_fragment()),
    ]
}

// ---- (a) `$patch: replace` gives exactly the higher layer's value ----

/// What kind of value a replacement target holds.
#[derive(Debug, Clone, Copy)]
enum Target {
    /// An APPEND list (`unique` or not).
    List { unique: bool },
    /// A KEYED_REPLACE list keyed by `name` only, or by `name` and `id`.
    Keyed { only_name: bool },
    /// `meta` itself.
    Meta,
    /// `meta.inner`.
    Inner,
    /// A key without a rule.
    Implicit,
}

const TARGETS: [(&[&str], Target); 10] = [
    (&["list"], Target::List { unique: false }),
    (&["uniq"], Target::List { unique: true }),
    (&["refs"], Target::Keyed { only_name: false }),
    (&["tools"], Target::Keyed { only_name: true }),
    (&["meta"], Target::Meta),
    (&["meta", "tags"], Target::List { unique: true }),
    (&["meta", "tools"], Target::Keyed { only_name: true }),
    (&["meta", "inner"], Target::Inner),
    (&["meta", "inner", "list"], Target::List { unique: false }),
    (&["meta", "a"], Target::Implicit),
];

/// A value without directives or `null`s, nested up to `depth`.
fn plain(depth: u32) -> BoxedStrategy<Value> {
    let leaf = prop_oneof![(0i64..4).prop_map(Value::from), word(), Just(json!([1, 2])),];
    if depth == 0 {
        return leaf.boxed();
    }
    let map = prop::collection::btree_map("[ab]", plain(depth - 1), 0..3)
        .prop_map(|m| Value::Object(m.into_iter().collect()));
    prop_oneof![leaf, map].boxed()
}

/// Words, without repeats when `unique`.
fn plain_list(unique: bool) -> BoxedStrategy<Vec<Value>> {
    prop::collection::vec(word(), 0..5)
        .prop_map(move |mut items| {
            if unique {
                let mut seen = Vec::new();
                items.retain(|v| {
                    let first = !seen.contains(v);
                    seen.push(v.clone());
                    first
                });
            }
            items
        })
        .boxed()
}

/// Plain entries with distinct identities.
fn plain_entries(only_name: bool) -> BoxedStrategy<Vec<Value>> {
    prop::collection::vec(plain_entry(only_name), 0..5)
        .prop_map(|entries| {
            let mut ids = Vec::new();
            entries
                .into_iter()
                .filter(|e| {
                    let id = match e {
                        Value::String(s) => ("name".to_owned(), s.clone()),
                        Value::Object(m) => m
                            .iter()
                            .find(|(k, _)| *k == "name" || *k == "id")
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                            .unwrap(),
                        _ => unreachable!(),
                    };
                    let first = !ids.contains(&id);
                    ids.push(id);
                    first
                })
                .collect()
        })
        .boxed()
}

/// The content of a replacing mapping for `target`.
fn mapping_content(target: Target) -> BoxedStrategy<Map<String, Value>> {
    let implicit_keys = prop::collection::btree_map("[ab]", plain(2), 0..3)
        .prop_map(|m| m.into_iter().collect::<Map<String, Value>>());
    match target {
        Target::Meta => (
            implicit_keys,
            prop::option::of(plain_list(true)),
            prop::option::of(plain_entries(true)),
            prop::option::of((
                prop::option::of(plain_list(false)),
                prop::collection::btree_map("[ab]", plain(1), 0..2),
            )),
        )
            .prop_map(|(mut m, tags, tools, inner)| {
                set(&mut m, "tags", tags.map(Value::Array));
                set(&mut m, "tools", tools.map(Value::Array));
                set(
                    &mut m,
                    "inner",
                    inner.map(|(list, keys)| {
                        let mut i: Map<String, Value> = keys.into_iter().collect();
                        set(&mut i, "list", list.map(Value::Array));
                        Value::Object(i)
                    }),
                );
                m
            })
            .boxed(),
        Target::Inner => (implicit_keys, prop::option::of(plain_list(false)))
            .prop_map(|(mut m, list)| {
                set(&mut m, "list", list.map(Value::Array));
                m
            })
            .boxed(),
        _ => implicit_keys.boxed(),
    }
}

/// A replacing value for `target` (with its directive) and what the
/// effective skill must hold there (the same without the directive).
fn replacement(target: Target) -> BoxedStrategy<(Value, Value)> {
    match target {
        Target::List { unique } => (plain_list(unique), any::<prop::sample::Index>())
            .prop_map(|(items, at)| {
                let mut with = items.clone();
                with.insert(at.index(items.len() + 1), json!({PATCH: "replace"}));
                (Value::Array(with), Value::Array(items))
            })
            .boxed(),
        Target::Keyed { only_name } => (plain_entries(only_name), any::<prop::sample::Index>())
            .prop_map(|(items, at)| {
                let mut with = items.clone();
                with.insert(at.index(items.len() + 1), json!({PATCH: "replace"}));
                (Value::Array(with), Value::Array(items))
            })
            .boxed(),
        t => mapping_content(t)
            .prop_map(|content| {
                let mut with = content.clone();
                with.insert(PATCH.into(), json!("replace"));
                (Value::Object(with), Value::Object(content))
            })
            .boxed(),
    }
}

fn replace_case() -> impl Strategy<Value = (usize, Value, Value)> {
    (0..TARGETS.len()).prop_flat_map(|t| {
        replacement(TARGETS[t].1).prop_map(move |(with, expected)| (t, with, expected))
    })
}

/// What `fragment` contributes at `path` that a replacement there would
/// replace: a value that is not a deletion, below mappings that are not
/// deleted (`null`, `{$patch: delete}`).
fn live_at<'v>(fragment: &'v Map<String, Value>, path: &[&str]) -> Option<&'v Value> {
    let deleted = |v: &Value| v.is_null() || v.get(PATCH) == Some(&json!("delete"));
    let mut v = fragment.get(path[0])?;
    for k in &path[1..] {
        if deleted(v) {
            return None;
        }
        v = v.as_object()?.get(*k)?;
    }
    (!deleted(v)).then_some(v)
}

// ---- (b) delete, then re-add a keyed entry ----

/// Where a keyed list is: top-level `refs` (replaced entries), `tools`
/// (merged entries), or `meta.tools` (merged entries, a nested rule).
const KEYED: [&[&str]; 3] = [&["refs"], &["tools"], &["meta", "tools"]];

fn insert_at(mut list: Vec<Value>, at: prop::sample::Index, v: Value) -> Vec<Value> {
    let i = at.index(list.len() + 1);
    list.insert(i, v);
    list
}

/// Plain entries none of which is `x`.
fn others() -> BoxedStrategy<Vec<Value>> {
    prop::collection::vec(plain_entry(true), 0..4).boxed()
}

// ---- (c) unique ----

/// Keeps the first occurrence of each item, in order.
fn first_occurrences(items: &[(Layer, usize, Value)]) -> Vec<(Layer, usize, Value)> {
    let mut out: Vec<(Layer, usize, Value)> = Vec::new();
    for item in items {
        if !out.iter().any(|o| o.2 == item.2) {
            out.push(item.clone());
        }
    }
    out
}

/// The effective skill's `uniq` and `meta.tags`.
fn unique_lists(skill: &Effective) -> (Value, Value) {
    let v = skill.to_value();
    (
        v["uniq"].clone(),
        at(&v, &["meta", "tags"]).cloned().unwrap_or(json!([])),
    )
}

fn has_repeats(list: &Value) -> bool {
    let items = list.as_array().expect("a list");
    items
        .iter()
        .enumerate()
        .any(|(i, v)| items[..i].contains(v))
}

/// Merging `uniq` and `meta.tags` again, as one layer, changes nothing.
fn assert_idempotent(spec: &MergeSpec, uniq: &Value, tags: &Value) -> Result<(), TestCaseError> {
    let again = [fragment(
        Layer::Base,
        object(json!({"uniq": uniq, "meta": {"tags": tags}})),
    )];
    let skill = merge(spec, SKILL, &again);
    let (u, t) = unique_lists(&skill);
    prop_assert_eq!(&u, uniq);
    prop_assert_eq!(&t, tags);
    prop_assert!(
        skill.fields.iter().all(|f| f.changes.is_empty()),
        "nothing is dropped from a list without repeats"
    );
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// (a) A `$patch: replace` of an APPEND list, a KEYED_REPLACE list or a
    /// DEEP_MERGE mapping, at the top level or below `meta`, gives exactly
    /// the replacing layer's value without the directive, whatever the lower
    /// layers hold; the replacement is recorded with what it replaced.
    #[test]
    fn replace_gives_exactly_the_higher_layers_value(
        lower in [prop::option::weighted(0.8, v2_fragment()), prop::option::weighted(0.8, v2_fragment())],
        (t, with, expected) in replace_case(),
    ) {
        let spec = spec(SPEC_V2);
        let (path, _) = TARGETS[t];
        let layers = [lower[0].clone(), lower[1].clone(), Some(nest(path, with))];
        let fs = fragments(&layers);
        let skill = merge(&spec, SKILL, &fs);
        let value = skill.to_value();
        prop_assert_eq!(at(&value, path), Some(&expected));

        let dotted = path.join(".");
        let field = skill.field(path[0]).expect("a spec field");
        let replaced: Vec<_> = field
            .changes
            .iter()
            .filter(|c| c.path == dotted && c.kind == ChangeKind::Replaced && c.by.layer == Layer::User)
            .collect();
        let below = lower.iter().rposition(Option::is_some);
        match below.and_then(|i| Some((i, live_at(lower[i].as_ref()?, path)?))) {
            // The layer just below set a value there: it is what was replaced first.
            Some((i, value)) => {
                prop_assert_eq!(replaced.len(), 1, "{:?}", field.changes);
                prop_assert_eq!(replaced[0].strategy, field_strategy(&spec, path));
                let first = &replaced[0].dropped[0];
                prop_assert_eq!(&*first.value, value);
                prop_assert_eq!(first.origin.layer, Layer::ALL[i]);
            }
            None => {
                let anywhere = lower.iter().flatten().any(|f| at(&Value::Object(f.clone()), path).is_some());
                if !anywhere {
                    prop_assert!(replaced.is_empty(), "nothing to replace: {:?}", replaced);
                }
            }
        }
    }

    /// (b) A keyed entry a lower layer added, deleted by `$patch: delete` and
    /// added again by a higher layer (or later in the deleting layer) is the
    /// re-adding layer's entry, whole and new (it replaced nothing, nothing
    /// merged into it, it comes after the entries before it); the deletion
    /// is recorded with the entry it removed.
    #[test]
    fn deleted_then_re_added_entry_is_the_higher_layers(
        k in 0..KEYED.len(),
        base in others(), base_at in any::<prop::sample::Index>(), n in 0..3i64,
        team in others(), delete_at in any::<prop::sample::Index>(),
        user in others(), w in 0..3i64,
        same_layer in any::<bool>(),
    ) {
        let spec = spec(SPEC_V2);
        let path = KEYED[k];
        let lower_x = json!({"name": "x", "v": n, "cfg": {"a": n, "keep": true}});
        let readded = json!({"name": "x", "w": w, "cfg": {"b": w}});
        let delete = json!({"name": "x", PATCH: "delete"});
        let base = insert_at(base, base_at, lower_x.clone());
        let mut team = insert_at(team, delete_at, delete);
        let (user, adder) = if same_layer {
            team.push(readded.clone());
            (None, Layer::Team)
        } else {
            let mut user = user;
            user.push(readded.clone());
            (Some(user), Layer::User)
        };
        let layers = [
            Some(nest(path, Value::Array(base))),
            Some(nest(path, Value::Array(team))),
            user.map(|u| nest(path, Value::Array(u))),
        ];
        let fs = fragments(&layers);
        let skill = merge(&spec, SKILL, &fs);

        let list = at(&skill.to_value(), path).cloned().expect("the list is set");
        let xs: Vec<&Value> = list
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e.get("name") == Some(&json!("x")))
            .collect();
        prop_assert_eq!(xs, vec![&readded]);

        let field = skill.field(path[0]).expect("a spec field");
        let mut merged = &field.merged;
        for key in &path[1..] {
            let Merged::Deep(tree) = merged else { panic!("{merged:?}") };
            merged = &tree[key];
        }
        let Merged::Keyed(entries) = merged else { panic!("{merged:?}") };
        let x = entries
            .iter()
            .find(|e| e.identity.is_some_and(|id| id.value == "x"))
            .expect("x is there");
        prop_assert_eq!(&*x.item.value, &readded);
        prop_assert_eq!(x.item.origin.as_ref().map(|o| o.layer), Some(adder));
        prop_assert!(x.item.overrode.is_empty(), "a new entry replaced nothing");
        prop_assert!(x.parts.is_none(), "nothing was merged into it");
        prop_assert!(std::ptr::eq(x, entries.last().unwrap()), "appended: {entries:?}");

        let deleted: Vec<_> = field
            .changes
            .iter()
            .filter(|c| c.path == format!("{}[x]", path.join(".")))
            .collect();
        prop_assert_eq!(deleted.len(), 1, "{:?}", field.changes);
        prop_assert_eq!(deleted[0].kind, ChangeKind::Deleted);
        prop_assert_eq!(deleted[0].by.layer, Layer::Team);
        let dropped: Vec<&Value> = deleted[0].dropped.iter().map(|d| &*d.value).collect();
        prop_assert_eq!(dropped, vec![&lower_x]);
    }

    /// (c) Without directives, a `unique` list (top-level or nested) is the
    /// first occurrence of each item, in order and with its own origin; each
    /// later repeat is recorded as a dropped duplicate; merging the result
    /// again as one layer changes nothing.
    #[test]
    fn unique_keeps_first_occurrences_in_order_and_is_idempotent(
        uniq in [prop::collection::vec(word(), 0..6), prop::collection::vec(word(), 0..6), prop::collection::vec(word(), 0..6)],
        tags in [prop::collection::vec(word(), 0..6), prop::collection::vec(word(), 0..6), prop::collection::vec(word(), 0..6)],
    ) {
        let spec = spec(SPEC_V2);
        let layers: Vec<Fragment> = Layer::ALL
            .into_iter()
            .enumerate()
            .map(|(i, l)| fragment(l, object(json!({"uniq": uniq[i], "meta": {"tags": tags[i]}}))))
            .collect();
        let skill = merge(&spec, SKILL, &layers);
        for (path, lists) in [(&["uniq"][..], &uniq), (&["meta", "tags"][..], &tags)] {
            let all: Vec<(Layer, usize, Value)> = Layer::ALL
                .into_iter()
                .zip(lists.iter())
                .flat_map(|(l, items)| items.iter().enumerate().map(move |(i, v)| (l, i, v.clone())))
                .collect();
            let firsts = first_occurrences(&all);
            let field = skill.field(path[0]).unwrap();
            let mut merged = &field.merged;
            for key in &path[1..] {
                let Merged::Deep(tree) = merged else { panic!("{merged:?}") };
                merged = &tree[key];
            }
            let Merged::Append(items) = merged else { panic!("{merged:?}") };
            let got: Vec<(Layer, String, Value)> = items
                .iter()
                .map(|s| {
                    let o = s.origin.as_ref().expect("every item has an origin");
                    (o.layer, o.pointer.clone(), s.value.clone().into_owned())
                })
                .collect();
            let expected: Vec<(Layer, String, Value)> = firsts
                .iter()
                .map(|(l, i, v)| (*l, format!("/{}/{i}", path.join("/")), v.clone()))
                .collect();
            prop_assert_eq!(got, expected);
            let duplicates = field
                .changes
                .iter()
                .filter(|c| c.kind == ChangeKind::Duplicate && c.path == path.join("."))
                .count();
            prop_assert_eq!(duplicates, all.len() - firsts.len());
        }
        let (u, t) = unique_lists(&skill);
        assert_idempotent(&spec, &u, &t)?;
    }

    /// (c) With directives in every layer, a `unique` list never repeats an
    /// item and merging it again as one layer changes nothing.
    #[test]
    fn unique_with_directives_has_no_repeats_and_is_idempotent(layers in v2_layers()) {
        let spec = spec(SPEC_V2);
        let fs = fragments(&layers);
        let skill = merge(&spec, SKILL, &fs);
        let (u, t) = unique_lists(&skill);
        prop_assert!(!has_repeats(&u), "{u}");
        prop_assert!(!has_repeats(&t), "{t}");
        assert_idempotent(&spec, &u, &t)?;
    }

    /// (d) Under a version 1 spec, `$patch` is an ordinary key: fragments
    /// holding it merge exactly (values, provenance and changes) as the same
    /// fragments with the key spelled otherwise.
    #[test]
    fn version_1_reads_patch_as_plain_data(layers in v2_layers()) {
        let spec = spec(SPEC_V1);
        let renamed = layers.clone().map(|l| {
            l.map(|m| object(rename(&Value::Object(m), PATCH, "$patcH")))
        });
        let with = fragments(&layers);
        let without = fragments(&renamed);
        let a = format!("{:?}", merge(&spec, SKILL, &with)).replace(PATCH, "$patcH");
        let b = format!("{:?}", merge(&spec, SKILL, &without));
        prop_assert_eq!(a, b);
    }

    /// (e) Under a version 2 spec, no directive reaches the effective skill,
    /// as a value or as rendered.
    #[test]
    fn directives_never_reach_the_effective_skill(layers in v2_layers()) {
        let spec = spec(SPEC_V2);
        let fs = fragments(&layers);
        let skill = merge(&spec, SKILL, &fs);
        let value = skill.to_value();
        prop_assert!(!has_patch(&value), "{value}");
        let rendered = render::effective_to_json(&skill);
        prop_assert!(!rendered.contains(PATCH), "{rendered}");
    }
}

/// The strategy of the rule at `path` of [`SPEC_V2`].
fn field_strategy(spec: &MergeSpec, path: &[&str]) -> bernstein_skills::spec::StrategyKind {
    let mut rule = spec.field(path[0]).expect("a spec field");
    for key in &path[1..] {
        match rule.key_rule(key) {
            Some(r) => rule = r,
            None => return bernstein_skills::spec::StrategyKind::DeepMerge,
        }
    }
    rule.strategy.kind()
}

/// The generators do produce what the properties are about (so that none
/// of them holds vacuously): the same layers mean something else under
/// each version.
#[test]
fn directives_are_read_under_version_2_only() {
    let layers = [
        Some(object(json!({
            "list": ["a", "b"],
            "refs": [{"name": "p", "v": 1}],
            "meta": {"a": {"x": 1}, "tags": ["a"]},
        }))),
        Some(object(json!({
            "list": [{PATCH: "delete", "value": "a"}],
            "refs": [{"name": "p", PATCH: "delete"}],
            "meta": {"a": {PATCH: "replace", "y": 2}, "tags": [{PATCH: "replace"}, "b"]},
        }))),
        None,
    ];
    let fs = fragments(&layers);
    let v2 = merge(&spec(SPEC_V2), SKILL, &fs).to_value();
    assert_eq!(v2["list"], json!(["b"]));
    assert_eq!(v2["refs"], json!([]));
    assert_eq!(v2["meta"], json!({"a": {"y": 2}, "tags": ["b"]}));
    let v1 = merge(&spec(SPEC_V1), SKILL, &fs).to_value();
    assert_eq!(
        v1["list"],
        json!(["a", "b", {PATCH: "delete", "value": "a"}])
    );
    assert_eq!(v1["refs"], json!([{"name": "p", PATCH: "delete"}]));
    assert_eq!(
        v1["meta"],
        json!({"a": {PATCH: "replace", "x": 1, "y": 2}, "tags": [{PATCH: "replace"}, "b"]})
    );
}

// ---- regressions: each test states a behaviour rules engine v2 promises
// that an earlier version of the interpreter or the schema got wrong ----

/// The values of `field` merged from `layers` (base first).
fn merged_field(spec: &MergeSpec, field: &str, layers: Vec<Value>) -> Value {
    let fs: Vec<Fragment> = Layer::ALL
        .into_iter()
        .zip(layers)
        .map(|(l, v)| fragment(l, object(v)))
        .collect();
    merge(spec, SKILL, &fs).to_value()[field].clone()
}

/// A layer that deletes a lower item and lists it again keeps it: without
/// `unique` the list ends with it, so with `unique` it must too. Today the
/// layer's own item is dropped as a duplicate of the lower one before the
/// delete removes that, and the item is gone.
#[test]

fn unique_keeps_an_item_its_layer_deletes_below_and_lists_again() {
    let spec = spec(SPEC_V2);
    let team = json!([{PATCH: "delete", "value": "a"}, "a"]);
    let plain = merged_field(
        &spec,
        "list",
        vec![json!({"list": ["a", "b"]}), json!({"list": team})],
    );
    assert_eq!(plain, json!(["b", "a"]));
    let unique = merged_field(
        &spec,
        "uniq",
        vec![json!({"uniq": ["a", "b"]}), json!({"uniq": team})],
    );
    assert_eq!(unique, json!(["b", "a"]));
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// The general form of the test above: the same lists merged with
    /// `unique` are the first occurrences of their merge without it.
    #[test]

    fn unique_is_the_first_occurrences_of_the_same_lists_without_unique(
        lists in [append_list(), append_list(), append_list()],
    ) {
        let spec = spec(SPEC_V2);
        let fs: Vec<Fragment> = Layer::ALL
            .into_iter()
            .zip(&lists)
            .map(|(l, v)| fragment(l, object(json!({"list": v, "uniq": v}))))
            .collect();
        let skill = merge(&spec, SKILL, &fs).to_value();
        let mut firsts: Vec<Value> = Vec::new();
        for v in skill["list"].as_array().unwrap() {
            if !firsts.contains(v) {
                firsts.push(v.clone());
            }
        }
        prop_assert_eq!(&skill["uniq"], &Value::Array(firsts));
    }
}

/// Under `entries: merge`, an entry no lower layer has is merged like any
/// other (from nothing): its directives are applied and never kept, its
/// `null`s delete. Today it is kept as written, `$patch` and `null`
/// included, while the same entry over a lower one is merged.
#[test]

fn a_new_entry_under_entries_merge_is_merged_too() {
    let spec = spec(SPEC_V2);
    let entry = json!({"name": "x", "cfg": {PATCH: "replace", "a": 1}, "gone": null});
    let over = merged_field(
        &spec,
        "tools",
        vec![json!({"tools": [{"name": "x"}]}), json!({"tools": [entry]})],
    );
    assert_eq!(over, json!([{"name": "x", "cfg": {"a": 1}}]));
    let alone = merged_field(&spec, "tools", vec![json!({"tools": [entry]})]);
    assert_eq!(alone, over);
}

/// The problems `validate` finds in one team fragment (`fields`, as YAML).
fn problems(spec: &MergeSpec, fields: Value) -> Vec<String> {
    let text = serde_json::to_string(&fields).unwrap();
    let f = Fragment::from_str(
        text,
        Form::Yaml,
        Layer::Team,
        Path::new("team/s.yaml"),
        &LoadOptions::default(),
    )
    .expect("the fragment loads");
    Validator::new(spec)
        .validate(spec, &f)
        .iter()
        .map(|d| d.to_string())
        .collect()
}

/// List directives are valid in a list whose items are typed: a version 2
/// spec promises them for every APPEND list (the shipped `trigger_keywords`
/// is a list of strings).
#[test]
fn validate_accepts_list_directives_in_a_typed_list() {
    let spec = spec(SPEC_V2);
    let found = problems(
        &spec,
        json!({"list": [{PATCH: "replace"}, "a", {PATCH: "delete", "value": "b"}]}),
    );
    assert!(found.is_empty(), "{found:?}");
}

/// A misspelled directive is an error: `merge` skips what it does not know
/// (an entry with one is dropped without a word) and relies on validation
/// to have refused it.
#[test]
fn validate_refuses_a_misspelled_directive() {
    let spec = spec(SPEC_V2);
    for fields in [
        json!({"refs": [{"name": "p", PATCH: "delet"}]}),
        json!({"meta": {"a": {PATCH: "replac", "x": 1}}}),
    ] {
        let found = problems(&spec, fields.clone());
        assert!(!found.is_empty(), "{fields} passes validation");
    }
}

/// A value of the wrong type below a DEEP_MERGE field is reported at its
/// own key, with the rule that types it (not at the field above, as a
/// mapping it expects and got).
#[test]
fn validate_names_the_nested_key_and_its_rule() {
    let spec = spec(SPEC_V2);
    for fields in [
        json!({"meta": {"tags": 5}}),
        json!({"meta": {"tags": {PATCH: "delete"}}}),
    ] {
        let found = problems(&spec, fields.clone());
        assert_eq!(found.len(), 1, "{fields}: {found:?}");
        assert!(
            found[0].contains("'meta.tags'") && found[0].contains("APPEND"),
            "{fields}: {}",
            found[0]
        );
    }
}

/// What `validate` accepts merges without a directive in the effective
/// skill. Today `$patch` inside an entry of an `entries: replace` list
/// passes validation (as if the entry were a DEEP_MERGE mapping), and the
/// entry, replaced whole, keeps it.
#[test]

fn what_validates_merges_without_directives() {
    let spec = spec(SPEC_V2);
    let team = json!({"refs": [{"name": "p", "cfg": {PATCH: "delete"}}]});
    let found = problems(&spec, team.clone());
    let skill = merged_field(
        &spec,
        "refs",
        vec![json!({"refs": [{"name": "p", "cfg": {"a": 1}}]}), team],
    );
    assert!(
        !found.is_empty() || !has_patch(&skill),
        "valid, and the effective skill holds a directive: {skill}"
    );
}

/// A keyed entry with a directive its list does not take (a misspelled
/// one, or `$patch: replace` of an entry under `entries: replace`, where
/// every entry replaces whole) is refused for its directive, not said to
/// have no key ("did you mean 'name'?") while it has one.
#[test]
fn validate_names_the_directive_an_entry_may_not_have() {
    let spec = spec(SPEC_V2);
    for entry in [
        json!({"name": "p", PATCH: "delet"}),
        json!({"name": "p", PATCH: "replace", "w": 0}),
    ] {
        let found = problems(&spec, json!({"refs": [entry]}));
        assert!(!found.is_empty(), "{entry} is refused");
        assert!(
            found.iter().all(|p| !p.contains("has no key")),
            "{entry}: {found:?}"
        );
    }
}
