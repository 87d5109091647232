//! Directives (`$patch`, spec version 2): the one definition of where a
//! fragment may write one, what may stand beside it, and what it does.
//!
//! Three stages read this table and nothing else: the schema generator
//! builds each form's JSON Schema from it, `validate` words a misused
//! directive with it, and the merge recognises each form through
//! `form_of`.

use serde_json::{Map, Value};

use super::{EntriesMode, Strategy};
use crate::text::{EXCERPT_CHARS, excerpt, list};

/// The key of a directive in a fragment: `$patch`.
pub const PATCH: &str = "$patch";

/// What a directive says, its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `delete`: remove what the lower layers have there.
    Delete,
    /// `replace`: replace it whole instead of merging into it.
    Replace,
}

impl Verb {
    /// The verb as a fragment writes it.
    pub fn name(self) -> &'static str {
        match self {
            Verb::Delete => "delete",
            Verb::Replace => "replace",
        }
    }

    /// Reads a directive's value; `None` for a verb that does not exist.
    pub fn of(value: &Value) -> Option<Verb> {
        match value.as_str()? {
            "delete" => Some(Verb::Delete),
            "replace" => Some(Verb::Replace),
            _ => None,
        }
    }

    /// The verb of `value` when it is a mapping holding a known `$patch`.
    pub(crate) fn of_mapping(value: &Value) -> Option<Verb> {
        Verb::of(value.as_object()?.get(PATCH)?)
    }
}

/// Where a directive stands and what it does there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `{$patch: replace}` alone in an APPEND or KEYED_REPLACE list: the
    /// layer's items replace the lower layers' items.
    ListReplace,
    /// `{$patch: delete, value: X}` in an APPEND list: the lower layers'
    /// items equal to X are removed.
    ItemDelete,
    /// `{KEY: X, $patch: delete}` in a KEYED_REPLACE list: the lower
    /// layers' entry X is removed.
    EntryDelete,
    /// `{KEY: X, $patch: replace, ...}` in a KEYED_REPLACE list whose
    /// entries merge: the entry replaces the lower one whole.
    EntryReplace,
    /// `$patch: replace` in a mapping that merges: the layer's mapping
    /// replaces the lower layers' whole.
    MapReplace,
    /// `{$patch: delete}` as a mapping that merges: the lower layers'
    /// mapping is removed.
    MapDelete,
}

/// What may stand beside `$patch` in a form.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Beside {
    /// Nothing.
    Nothing,
    /// `value`, the item to remove (required), and nothing else.
    Item,
    /// One of the list's key fields naming the entry (required), and
    /// nothing else.
    Key,
    /// One of the list's key fields naming the entry (required), and the
    /// entry's other keys.
    Entry,
    /// Any keys of the mapping.
    Keys,
}

/// The key beside `$patch` that names the item an APPEND delete removes.
pub(crate) const ITEM: &str = "value";

impl Form {
    /// Its verb.
    pub fn verb(self) -> Verb {
        match self {
            Form::ItemDelete | Form::EntryDelete | Form::MapDelete => Verb::Delete,
            Form::ListReplace | Form::EntryReplace | Form::MapReplace => Verb::Replace,
        }
    }

    /// What may stand beside `$patch`.
    pub fn beside(self) -> Beside {
        match self {
            Form::ListReplace | Form::MapDelete => Beside::Nothing,
            Form::ItemDelete => Beside::Item,
            Form::EntryDelete => Beside::Key,
            Form::EntryReplace => Beside::Entry,
            Form::MapReplace => Beside::Keys,
        }
    }

    /// The form as a fragment writes it; `key` is the first key field of
    /// a KEYED_REPLACE list.
    pub fn shape(self, key: &str) -> String {
        match self {
            Form::ListReplace => "{$patch: replace}".into(),
            Form::ItemDelete => "{$patch: delete, value: <item>}".into(),
            Form::EntryDelete => format!("{{{key}: <entry>, $patch: delete}}"),
            Form::EntryReplace => format!("{{{key}: <entry>, $patch: replace, ...}}"),
            Form::MapReplace => "$patch: replace".into(),
            Form::MapDelete => "{$patch: delete}".into(),
        }
    }

    /// What it does, as the end of "write ... to ...".
    pub fn does(self) -> &'static str {
        match self {
            Form::ListReplace => "replace the list",
            Form::ItemDelete => "remove items",
            Form::EntryDelete => "remove an entry",
            Form::EntryReplace => "replace that entry whole",
            Form::MapReplace => "replace the lower layers' mapping whole",
            Form::MapDelete => "remove it",
        }
    }

    /// The rule a value breaks when it holds more beside `$patch` than
    /// this form takes.
    fn too_much(self) -> &'static str {
        match self {
            Form::ListReplace => "{$patch: replace} stands alone in the list",
            Form::ItemDelete => "a delete holds only $patch and value",
            Form::EntryDelete => "a delete holds only $patch and the entry's key",
            Form::MapDelete => {
                "$patch: delete removes the whole mapping, so nothing may be set beside it"
            }
            Form::EntryReplace | Form::MapReplace => "",
        }
    }

    /// The rule a value breaks when it lacks what this form needs beside
    /// `$patch`; `keys` are the list's key fields.
    fn lacking(self, keys: &[String]) -> String {
        let first = first_key(keys);
        match self {
            Form::ItemDelete => {
                format!("a delete names the item to remove: {}", self.shape(&first))
            }
            Form::EntryDelete => format!(
                "a delete names the entry by its {}: {}",
                or_list(keys),
                self.shape(&first)
            ),
            Form::EntryReplace => format!(
                "$patch: replace on an entry names it by its {}: {}",
                or_list(keys),
                self.shape(&first)
            ),
            Form::ListReplace | Form::MapReplace | Form::MapDelete => String::new(),
        }
    }
}

/// The forms a value under `strategy` takes: in its list's elements
/// (APPEND, KEYED_REPLACE), or as its mapping (DEEP_MERGE). OVERRIDE
/// takes none: its value is replaced whole.
pub fn forms(strategy: &Strategy) -> &'static [Form] {
    match strategy {
        Strategy::Override { .. } => &[],
        Strategy::Append { .. } => &[Form::ItemDelete, Form::ListReplace],
        Strategy::KeyedReplace {
            entries: EntriesMode::Replace,
            ..
        } => &[Form::EntryDelete, Form::ListReplace],
        Strategy::KeyedReplace {
            entries: EntriesMode::Merge,
            ..
        } => &[Form::EntryDelete, Form::ListReplace, Form::EntryReplace],
        Strategy::DeepMerge { .. } => &[Form::MapReplace, Form::MapDelete],
    }
}

/// Where the forms of `strategy` stand, as the start of "... write".
fn place(strategy: &Strategy) -> &'static str {
    match strategy {
        Strategy::Override { .. } => "in an OVERRIDE value",
        Strategy::Append { .. } => "in an APPEND list",
        Strategy::KeyedReplace { .. } => "in a KEYED_REPLACE list",
        Strategy::DeepMerge { .. } => "in a mapping",
    }
}

/// The key fields of `strategy` (KEYED_REPLACE), empty otherwise.
fn keys(strategy: &Strategy) -> &[String] {
    match strategy {
        Strategy::KeyedReplace { keys, .. } => keys,
        _ => &[],
    }
}

/// The first key field of a KEYED_REPLACE list, for a message.
fn first_key(keys: &[String]) -> String {
    excerpt(keys.first().map_or("name", String::as_str), EXCERPT_CHARS)
}

/// `a`, `a or b`, `a, b or c` (each an excerpt); past a handful, [`list`].
fn or_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => excerpt(one, EXCERPT_CHARS),
        [rest @ .., last] if items.len() <= 5 => format!(
            "{} or {}",
            rest.iter()
                .map(|k| excerpt(k, EXCERPT_CHARS))
                .collect::<Vec<_>>()
                .join(", "),
            excerpt(last, EXCERPT_CHARS)
        ),
        _ => list(items.iter().map(String::as_str), false),
    }
}

/// Does `map` name an entry by one of `keys` (a non-empty string)?
fn named(map: &Map<String, Value>, keys: &[String]) -> bool {
    keys.iter().any(|k| {
        map.get(k)
            .and_then(Value::as_str)
            .is_some_and(|v| !v.is_empty())
    })
}

/// The keys of `map` that `form` does not take beside `$patch`.
fn extra<'m>(form: Form, map: &'m Map<String, Value>, keys: &[String]) -> Vec<&'m str> {
    let taken = |k: &str| match form.beside() {
        Beside::Nothing => false,
        Beside::Item => k == ITEM,
        Beside::Key => keys.iter().any(|key| key == k),
        Beside::Entry | Beside::Keys => true,
    };
    map.keys()
        .map(String::as_str)
        .filter(|k| *k != PATCH && !taken(k))
        .collect()
}

/// Does `map` hold what `form` needs beside `$patch`?
fn complete(form: Form, map: &Map<String, Value>, keys: &[String]) -> bool {
    match form.beside() {
        Beside::Item => map.contains_key(ITEM),
        Beside::Key | Beside::Entry => named(map, keys),
        Beside::Nothing | Beside::Keys => true,
    }
}

/// The form of `map` (a mapping holding `$patch`) under `strategy`, or
/// what is wrong with it, in words.
pub(crate) fn classify(strategy: &Strategy, map: &Map<String, Value>) -> Result<Form, Misuse> {
    let keys = keys(strategy);
    let verb = map.get(PATCH).and_then(Verb::of);
    let mut candidates = forms(strategy)
        .iter()
        .copied()
        .filter(|f| Some(f.verb()) == verb)
        .peekable();
    if candidates.peek().is_none() {
        return Err(Misuse::Unknown);
    }
    let mut why = Vec::new();
    for form in candidates {
        let extra = extra(form, map, keys);
        if !complete(form, map, keys) {
            why.push(form.lacking(keys));
        } else if !extra.is_empty() {
            why.push(format!(
                "{} (remove {})",
                form.too_much(),
                list(extra, false)
            ));
        } else {
            return Ok(form);
        }
    }
    Err(Misuse::Broken(why.join(", or ")))
}

/// The form the merge applies to `value` under `strategy`, when it is a
/// mapping holding a `$patch`: its form as `classify` finds it (a
/// validated fragment holds no other). One leniency keeps the merge total
/// on a fragment nobody validated: a named entry with `$patch: replace` in
/// a list whose entries replace (validation refuses it, as such an entry
/// replaces the lower one whole already) is taken for what it says.
pub fn form_of(strategy: &Strategy, value: &Value) -> Option<Form> {
    let map = value.as_object().filter(|m| m.contains_key(PATCH))?;
    match classify(strategy, map) {
        Ok(form) => Some(form),
        Err(_)
            if matches!(strategy, Strategy::KeyedReplace { .. })
                && map.get(PATCH).and_then(Verb::of) == Some(Verb::Replace)
                && named(map, keys(strategy)) =>
        {
            Some(Form::EntryReplace)
        }
        Err(_) => None,
    }
}

/// Is `value` a mapping holding `$patch`, in any form?
pub(crate) fn is_directive(value: &Value) -> bool {
    value.as_object().is_some_and(|m| m.contains_key(PATCH))
}

/// Why a mapping holding `$patch` is in none of its place's forms.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Misuse {
    /// Its verb is none that the place takes.
    Unknown,
    /// Its verb is right, but it lacks or holds too much: the rules it
    /// breaks, in words.
    Broken(String),
}

impl Misuse {
    /// The whole message for `verb` (shown as written) under `strategy`.
    pub fn message(&self, strategy: &Strategy, shown_verb: &str) -> String {
        match self {
            Misuse::Broken(why) => {
                // An entry of a list whose entries replace already replaces
                // the lower one whole: say so to whoever tries.
                let hint = matches!(
                    strategy,
                    Strategy::KeyedReplace {
                        entries: EntriesMode::Replace,
                        ..
                    }
                ) && why.starts_with(Form::ListReplace.too_much());
                if hint {
                    format!("{why}; an entry already replaces the lower one whole")
                } else {
                    why.clone()
                }
            }
            Misuse::Unknown => format!(
                "unknown directive $patch: {shown_verb}; {} {}",
                place(strategy),
                choices(strategy)
            ),
        }
    }
}

/// What a value under `strategy` may write, in words: `write A to a or B
/// to b`.
fn choices(strategy: &Strategy) -> String {
    let key = first_key(keys(strategy));
    let mut out = String::from("write");
    for (i, f) in forms(strategy).iter().enumerate() {
        out.push_str(match i {
            0 => " ",
            1 => " or ",
            _ => ", or ",
        });
        out.push_str(&format!("{} to {}", f.shape(&key), f.does()));
    }
    out
}

/// The directives of `strategy` in a sentence, for hover text; `None`
/// when it takes none.
pub fn help(strategy: &Strategy) -> Option<String> {
    if forms(strategy).is_empty() {
        return None;
    }
    let mut place = place(strategy).to_owned();
    place[..1].make_ascii_uppercase();
    Some(format!("{place}, {}.", choices(strategy)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::{Field, ValueRule};
    use serde_json::json;

    fn keyed(entries: EntriesMode) -> Strategy {
        Strategy::KeyedReplace {
            keys: vec!["name".into(), "id".into()],
            entries,
            unkeyed: crate::spec::Unkeyed::Refuse,
            plain: crate::spec::Plain::Keep,
        }
    }

    fn of(strategy: &Strategy, v: Value) -> Result<Form, Misuse> {
        classify(strategy, v.as_object().unwrap())
    }

    #[test]
    fn every_form_is_recognised_where_its_strategy_takes_it() {
        let append = Strategy::Append {
            items: ValueRule::default(),
            unique: false,
        };
        let deep = Strategy::DeepMerge {
            fields: Vec::<Field>::new(),
        };
        let merge = keyed(EntriesMode::Merge);
        let replace = keyed(EntriesMode::Replace);
        assert_eq!(
            of(&append, json!({PATCH: "replace"})),
            Ok(Form::ListReplace)
        );
        assert_eq!(
            of(&append, json!({PATCH: "delete", "value": 1})),
            Ok(Form::ItemDelete)
        );
        assert_eq!(
            of(&replace, json!({PATCH: "delete", "id": "x"})),
            Ok(Form::EntryDelete)
        );
        assert_eq!(
            of(&merge, json!({PATCH: "replace", "name": "x", "u": 1})),
            Ok(Form::EntryReplace)
        );
        assert_eq!(of(&merge, json!({PATCH: "replace"})), Ok(Form::ListReplace));
        assert_eq!(
            of(&deep, json!({PATCH: "replace", "a": 1})),
            Ok(Form::MapReplace)
        );
        assert_eq!(of(&deep, json!({PATCH: "delete"})), Ok(Form::MapDelete));
        for (s, v) in [
            (&append, json!({PATCH: "delete"})),
            (&append, json!({PATCH: "delete", "value": 1, "x": 2})),
            (&replace, json!({PATCH: "delete", "name": ""})),
            (&merge, json!({PATCH: "delete", "name": "x", "u": 1})),
            (&deep, json!({PATCH: "delete", "a": 1})),
            (&deep, json!({PATCH: "merge"})),
            (&deep, json!({PATCH: 1})),
        ] {
            assert!(of(s, v.clone()).is_err(), "{s:?} {v}");
            assert_eq!(form_of(s, &v), None);
        }
        // Refused by validation, but merged for what it says.
        let named = json!({PATCH: "replace", "name": "x"});
        assert!(of(&replace, named.clone()).is_err());
        assert_eq!(form_of(&replace, &named), Some(Form::EntryReplace));
        let over = Strategy::Override {
            value: ValueRule::default(),
        };
        assert_eq!(of(&over, json!({PATCH: "replace"})), Err(Misuse::Unknown));
        assert_eq!(help(&over), None);
    }

    #[test]
    fn misuses_say_which_rule_they_break() {
        let merge = keyed(EntriesMode::Merge);
        let replace = keyed(EntriesMode::Replace);
        let said = |s: &Strategy, v: Value| of(s, v).unwrap_err().message(s, "\"x\"");
        assert_eq!(
            said(&replace, json!({PATCH: "replace", "name": "a"})),
            "{$patch: replace} stands alone in the list (remove name); an entry already replaces the lower one whole"
        );
        assert_eq!(
            said(&merge, json!({PATCH: "replace", "url": "u"})),
            "{$patch: replace} stands alone in the list (remove url), or $patch: replace on an entry \
             names it by its name or id: {name: <entry>, $patch: replace, ...}"
        );
        assert_eq!(
            said(&merge, json!({PATCH: "x"})),
            "unknown directive $patch: \"x\"; in a KEYED_REPLACE list write {name: <entry>, $patch: delete} \
             to remove an entry or {$patch: replace} to replace the list, or \
             {name: <entry>, $patch: replace, ...} to replace that entry whole"
        );
        assert_eq!(
            help(&replace).unwrap(),
            "In a KEYED_REPLACE list, write {name: <entry>, $patch: delete} to remove an entry or \
             {$patch: replace} to replace the list."
        );
    }
}
