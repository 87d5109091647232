//! The positions of every node of a fragment, found in one pass over its
//! source and looked up by JSON pointer.
//!
//! Locating one node by walking the source is linear in the file; locating
//! each of a file's problems, or each value `explain` shows, that way was
//! quadratic. A [`Fragment`](super::Fragment) builds this index the first
//! time it is asked for a position (one yaml-rust2 event walk, or one
//! span-carrying TOML parse) and answers every later question from it in
//! time proportional to the pointer.
//!
//! The index is a tree stored flat: one [`Node`] per value, with the
//! children of each mapping sorted by key for binary search, and every key
//! stored once in one string. A pointer is never stored, so a long key above
//! many values costs its length once, not once per value.

use toml::de::{DeTable, DeValue};
use yaml_rust2::parser::{Event, Parser};

use super::Pos;

/// A 1-based line and column, `(0, 0)` when absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct P(u32, u32);

impl P {
    const NONE: P = P(0, 0);

    fn new((line, col): Pos) -> P {
        let c = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).max(1);
        P(c(line), c(col))
    }

    fn get(self) -> Option<Pos> {
        (self != P::NONE).then_some((self.0 as usize, self.1 as usize))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Leaf,
    Seq,
    Map,
}

/// One value: where it and its key are, and where its children are in
/// [`Index::kids`].
#[derive(Debug, Clone)]
struct Node {
    key: P,
    value: P,
    kind: Kind,
    first: u32,
    len: u32,
}

/// A child of a container: its node and, in a mapping, its key (a range of
/// [`Index::keys`]).
#[derive(Debug, Clone, Copy)]
struct Kid {
    node: u32,
    key_at: u32,
    key_len: u32,
}

/// Positions by JSON pointer, for one fragment.
#[derive(Clone, Default)]
pub(crate) struct Index {
    nodes: Vec<Node>,
    kids: Vec<Kid>,
    keys: String,
    /// Lines added to every position (a SKILL.md frontmatter's offset).
    line_offset: usize,
}

impl std::fmt::Debug for Index {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Index({} nodes)", self.nodes.len())
    }
}

impl Index {
    /// The position of the value at `pointer`, or of its key when `key` is
    /// set and it has one. The root is at its first node, or at 1:1.
    pub(crate) fn position(&self, pointer: &str, key: bool) -> Option<Pos> {
        let pos = if pointer.is_empty() {
            Some(
                self.nodes
                    .first()
                    .and_then(|n| n.value.get())
                    .unwrap_or((1, 1)),
            )
        } else {
            let node = self.find(pointer)?;
            let found = if key { node.key.get() } else { None };
            found.or(node.value.get())
        }?;
        Some((pos.0 + self.line_offset, pos.1))
    }

    /// The keys of the root mapping in the order they are written, each
    /// with its position.
    pub(crate) fn top_level_keys(&self) -> Vec<(&str, Pos)> {
        let Some(root) = self.nodes.first().filter(|n| n.kind == Kind::Map) else {
            return Vec::new();
        };
        let mut kids = self.kids[root.first as usize..(root.first + root.len) as usize].to_vec();
        kids.sort_unstable_by_key(|k| k.node);
        kids.iter()
            .filter_map(|k| {
                let (line, col) = self.nodes[k.node as usize].key.get()?;
                Some((self.key(k), (line + self.line_offset, col)))
            })
            .collect()
    }

    fn find(&self, pointer: &str) -> Option<&Node> {
        let mut node = self.nodes.first()?;
        for seg in pointer.strip_prefix('/')?.split('/') {
            let kids = &self.kids[node.first as usize..(node.first + node.len) as usize];
            let next = match node.kind {
                Kind::Leaf => return None,
                Kind::Seq => kids.get(seg.parse::<usize>().ok()?)?,
                Kind::Map => {
                    let seg = super::unescape_pointer(seg);
                    let i = kids.partition_point(|k| self.key(k) < seg.as_str());
                    kids.get(i).filter(|k| self.key(k) == seg)?
                }
            };
            node = &self.nodes[next.node as usize];
        }
        Some(node)
    }

    fn key(&self, kid: &Kid) -> &str {
        &self.keys[kid.key_at as usize..(kid.key_at + kid.key_len) as usize]
    }

    /// The index of a YAML text.
    pub(crate) fn yaml(text: &str, line_offset: usize) -> Index {
        let mut indexer = YamlIndexer::new(line_offset);
        let mut parser = Parser::new_from_str(text);
        while let Ok((event, mark)) = parser.next_token() {
            if !indexer.event(&event, &mark) {
                break;
            }
        }
        indexer.finish()
    }

    /// The index of a TOML text, from its parse `doc`.
    pub(crate) fn toml(text: &str, doc: &toml::Spanned<DeTable<'_>>) -> Index {
        let mut b = Builder::default();
        // Positions are byte offsets (plus one, so that none is `P::NONE`)
        // until the end, then turned into lines and columns in one sweep
        // over the text.
        let off =
            |span: std::ops::Range<usize>| P(u32::try_from(span.start + 1).unwrap_or(u32::MAX), 0);
        b.node(None, off(doc.span()), Kind::Map);
        let mut stack: Vec<TomlKids<'_, '_>> = vec![toml_kids(doc.get_ref())];
        while let Some(top) = stack.last_mut() {
            let Some((k, v)) = top.next() else {
                stack.pop();
                b.close();
                continue;
            };
            let key = k.map(|k| Some((k.get_ref().as_ref(), off(k.span()))));
            let (kind, kids): (_, Option<TomlKids>) = match v.get_ref() {
                DeValue::Table(t) => (Kind::Map, Some(toml_kids(t))),
                DeValue::Array(a) => (Kind::Seq, Some(Box::new(a.iter().map(|v| (None, v))))),
                _ => (Kind::Leaf, None),
            };
            b.node(key, off(v.span()), kind);
            stack.extend(kids);
        }
        let mut index = b.finish();
        // Every offset, sorted, then one pass over the text.
        let mut slots: Vec<(u32, usize, bool)> = Vec::with_capacity(index.nodes.len() * 2);
        for (i, n) in index.nodes.iter().enumerate() {
            slots.push((n.value.0, i, false));
            if n.key != P::NONE {
                slots.push((n.key.0, i, true));
            }
        }
        slots.sort_unstable();
        let (mut at, mut line, mut col) = (0usize, 1usize, 1usize);
        for (offset, i, is_key) in slots {
            let offset = (offset as usize - 1).min(text.len());
            if offset > at {
                for c in text.get(at..offset).unwrap_or("").chars() {
                    if c == '\n' {
                        line += 1;
                        col = 1;
                    } else {
                        col += 1;
                    }
                }
                at = offset;
            }
            let p = P::new((line, col));
            if is_key {
                index.nodes[i].key = p;
            } else {
                index.nodes[i].value = p;
            }
        }
        index
    }
}

/// The children of a TOML table or array: key (for a table) and value.
type TomlKids<'a, 'i> = Box<
    dyn Iterator<
            Item = (
                Option<&'a toml::Spanned<toml::de::DeString<'i>>>,
                &'a toml::Spanned<DeValue<'i>>,
            ),
        > + 'a,
>;

fn toml_kids<'a, 'i>(t: &'a DeTable<'i>) -> TomlKids<'a, 'i> {
    Box::new(t.iter().map(|(k, v)| (Some(k), v)))
}

/// Builds an [`Index`] from nodes given in document order.
#[derive(Default)]
struct Builder {
    index: Index,
    /// The open containers: node, and the children found so far.
    open: Vec<(usize, Vec<Kid>)>,
}

impl Builder {
    /// Adds a node, a child of the innermost open container. `key` is
    /// `None` for a sequence item or the root, `Some(None)` for a mapping
    /// value whose key cannot be named. Containers stay open until
    /// [`Builder::close`].
    fn node(&mut self, key: Option<Option<(&str, P)>>, value: P, kind: Kind) -> usize {
        let id = self.index.nodes.len();
        let key_pos = key.flatten().map_or(P::NONE, |(_, p)| p);
        self.index.nodes.push(Node {
            key: key_pos,
            value,
            kind,
            first: 0,
            len: 0,
        });
        if let Some((_, kids)) = self.open.last_mut() {
            let named = match key {
                None => Some((0, 0)),
                Some(Some((name, _))) => {
                    let at = self.index.keys.len();
                    self.index.keys.push_str(name);
                    Some((at, name.len()))
                }
                Some(None) => None,
            };
            if let Some((at, len)) = named
                && let (Ok(node), Ok(key_at), Ok(key_len)) =
                    (u32::try_from(id), u32::try_from(at), u32::try_from(len))
            {
                kids.push(Kid {
                    node,
                    key_at,
                    key_len,
                });
            }
        }
        if kind != Kind::Leaf {
            self.open.push((id, Vec::new()));
        }
        id
    }

    /// Closes the innermost open container.
    fn close(&mut self) {
        let Some((id, mut kids)) = self.open.pop() else {
            return;
        };
        let index = &mut self.index;
        if index.nodes[id].kind == Kind::Map {
            let keys = &index.keys;
            let key = |k: &Kid| &keys[k.key_at as usize..(k.key_at + k.key_len) as usize];
            kids.sort_by(|a, b| key(a).cmp(key(b)));
        }
        let (Ok(first), Ok(len)) = (u32::try_from(index.kids.len()), u32::try_from(kids.len()))
        else {
            return;
        };
        index.kids.extend(kids);
        index.nodes[id].first = first;
        index.nodes[id].len = len;
    }

    fn finish(mut self) -> Index {
        while !self.open.is_empty() {
            self.close();
        }
        self.index
    }
}

/// Where the parent mapping is: waiting for a key, or holding one (`None`
/// for a key that is not a plain scalar, whose value is indexed but cannot
/// be found).
enum State {
    Seq,
    AwaitKey,
    Key(Option<(String, P)>),
    /// A container used as a key: nothing below it is a value.
    InKey,
}

/// Builds the [`Index`] of a YAML text from its parser's events, fed one by
/// one: by [`Index::yaml`]'s own pass, or by the pass that reads the
/// fragment's value when positions are known to be needed, so that the
/// text is scanned once.
pub(crate) struct YamlIndexer {
    b: Builder,
    states: Vec<State>,
    /// A block mapping's start event is marked at its first `:`; when its
    /// first key is on the same line, the key's position reads better.
    fixup: Option<(usize, P)>,
}

impl YamlIndexer {
    pub(crate) fn new(line_offset: usize) -> YamlIndexer {
        let mut b = Builder::default();
        b.index.line_offset = line_offset;
        YamlIndexer {
            b,
            states: Vec::new(),
            fixup: None,
        }
    }

    /// Takes one event; `false` at the end of the stream.
    pub(crate) fn event(&mut self, event: &Event, mark: &yaml_rust2::scanner::Marker) -> bool {
        let pos = P::new((mark.line(), mark.col() + 1));
        let states = &mut self.states;
        if let Some((node, at)) = self.fixup.take()
            && matches!(event, Event::Scalar(..))
            && matches!(states.last(), Some(State::AwaitKey))
            && pos.0 == at.0
            && pos.1 < at.1
        {
            self.b.index.nodes[node].value = pos;
        }
        let container = match event {
            Event::StreamEnd => return false,
            Event::SequenceStart(..) => Some(Kind::Seq),
            Event::MappingStart(..) => Some(Kind::Map),
            Event::Scalar(..) | Event::Alias(..) => None,
            Event::SequenceEnd | Event::MappingEnd => {
                if !matches!(states.pop(), Some(State::InKey)) {
                    self.b.close();
                }
                value_done(states);
                return true;
            }
            _ => return true,
        };
        match states.last_mut() {
            Some(State::InKey) => {
                if container.is_some() {
                    states.push(State::InKey);
                }
                return true;
            }
            Some(state @ State::AwaitKey) => {
                match (event, container) {
                    (Event::Scalar(s, ..), _) => *state = State::Key(Some((s.clone(), pos))),
                    (_, Some(_)) => states.push(State::InKey),
                    _ => *state = State::Key(None),
                }
                return true;
            }
            _ => {}
        }
        let key = match states.last_mut() {
            Some(State::Key(k)) => Some(k.take()),
            _ => None,
        };
        let key = match &key {
            Some(Some((name, at))) => Some(Some((name.as_str(), *at))),
            Some(None) => Some(None),
            None => None,
        };
        let node = self.b.node(key, pos, container.unwrap_or(Kind::Leaf));
        match container {
            Some(kind) => {
                if kind == Kind::Map && node > 0 {
                    self.fixup = Some((node, pos));
                }
                states.push(if kind == Kind::Map {
                    State::AwaitKey
                } else {
                    State::Seq
                });
            }
            None => value_done(states),
        }
        true
    }

    pub(crate) fn finish(self) -> Index {
        self.b.finish()
    }
}

fn value_done(states: &mut [State]) {
    if let Some(state) = states.last_mut() {
        match state {
            State::Key(_) => *state = State::AwaitKey,
            State::AwaitKey => *state = State::Key(None),
            State::Seq | State::InKey => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::Value;

    use super::Index;
    use crate::fragment::{Fragment, LoadOptions, Pos, Syntax, escape_pointer, locate};
    use crate::layer::{Form, Layer};

    /// Every pointer of `v`, the root first.
    fn pointers(v: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match v {
            Value::Object(m) => {
                for (k, v) in m {
                    pointers(v, format!("{at}/{}", escape_pointer(k)), out);
                }
            }
            Value::Array(a) => {
                for (i, v) in a.iter().enumerate() {
                    pointers(v, format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }

    /// The index agrees with a walk of the source for every pointer, key
    /// and value, and finds nothing that is not there.
    fn agrees(text: &str, syntax: Syntax) -> Index {
        let (index, value) = match syntax {
            Syntax::Yaml => (
                Index::yaml(text, 0),
                crate::fragment::parse_yaml(text).ok().flatten(),
            ),
            Syntax::Toml => {
                let (value, index) = super::super::toml::parse(text).expect("parses");
                (index, Some(value))
            }
        };
        let mut all = Vec::new();
        pointers(&value.expect("parses"), String::new(), &mut all);
        all.extend(["/nope".into(), "/0/1/2".into(), "/name/x".into()]);
        for p in &all {
            for key in [false, true] {
                assert_eq!(
                    index.position(p, key),
                    locate(text, syntax, p, key, 0),
                    "{p} key={key} in:\n{text}"
                );
            }
        }
        index
    }

    const YAML: &str = "\
name: writer
description: >-
  Folded
  text.
trigger_keywords:
  - write
  - 'edit'
  - {nested: [1, 2]}
metadata:
  limits: {max_tokens: 2000, t: 0.2}
  deep:
    a/b: 1
    \"q~k\": [x, [y, z]]
  list:
  - k: 1
    j: 2
  -   - 3
  empty: {}
  none:
references: [a.md, {name: b.md, url: u}]
";

    #[test]
    fn yaml_positions_of_keys_and_values() {
        let index = agrees(YAML, Syntax::Yaml);
        let at = |p: &str, key: bool| index.position(p, key);
        assert_eq!(at("", false), Some((1, 5)));
        assert_eq!(at("/name", true), Some((1, 1)));
        assert_eq!(at("/name", false), Some((1, 7)));
        // A block scalar is where its text starts.
        assert_eq!(at("/description", false), Some((3, 3)));
        assert_eq!(at("/trigger_keywords/1", false), Some((7, 5)));
        assert_eq!(at("/trigger_keywords/1", true), Some((7, 5)));
        assert_eq!(at("/trigger_keywords/2/nested/1", false), Some((8, 18)));
        assert_eq!(at("/metadata/limits/t", true), Some((10, 30)));
        assert_eq!(at("/metadata/limits/t", false), Some((10, 33)));
        assert_eq!(at("/metadata/deep/a~1b", false), Some((12, 10)));
        assert_eq!(at("/metadata/deep/q~0k/1/0", false), Some((13, 17)));
        // A block mapping is at its first key.
        assert_eq!(at("/metadata", false), Some((10, 3)));
        assert_eq!(at("/metadata/list/0", false), Some((15, 5)));
        assert_eq!(at("/metadata/list/1/0", false), Some((17, 9)));
        // An empty value is where the next token is.
        assert_eq!(at("/metadata/none", false), Some((20, 1)));
        assert_eq!(at("/references/1/url", false), Some((20, 38)));
        assert_eq!(at("/references/2", false), None);
        assert_eq!(at("/name/0", false), None);
    }

    #[test]
    fn yaml_flow_documents_aliases_and_odd_keys() {
        for text in [
            "{a: 1, b: [x, {c: 2}], d: {}}\n",
            "a: &x {k: [1, 2]}\nb: *x\nc: [*x, 3]\n",
            "? complex\n: 1\n? [l, m]\n: 2\n'': empty key\nz: 3\n",
            "top:\n- - - deep\n    - x\n  - y\n",
            "",
            "# only a comment\n",
        ] {
            if crate::fragment::parse_yaml(text).ok().flatten().is_some() {
                agrees(text, Syntax::Yaml);
            }
        }
        // A mapping key that is not a plain scalar hides its value, and
        // nothing else.
        let index = Index::yaml("? [l, m]\n: {v: 1}\nz: 3\n", 0);
        assert_eq!(index.position("/z", true), Some((3, 1)));
        assert_eq!(index.position("/v", false), None);
        let index = Index::yaml("a: &x [1]\nb: *x\n", 0);
        assert_eq!(index.position("/b", false), Some((2, 4)));
        assert_eq!(index.position("/b/0", false), None);
    }

    const TOML: &str = "\
name = \"writer\"
trigger_keywords = [\"a\", \"b\"]
metadata.limits.max = 2
metadata.\"a/b\" = { x = 1, y = [true, { z = \"é\" }] }

[[references]]
name = \"style.md\"

[[references]]
id = \"x\"
url = \"u\"

[scripts_table]
k = 1
";

    #[test]
    fn toml_tables_arrays_of_tables_and_dotted_keys() {
        let index = agrees(TOML, Syntax::Toml);
        let at = |p: &str, key: bool| index.position(p, key);
        assert_eq!(at("/name", true), Some((1, 1)));
        assert_eq!(at("/name", false), Some((1, 8)));
        assert_eq!(at("/trigger_keywords/1", false), Some((2, 26)));
        assert_eq!(at("/metadata/limits/max", true), Some((3, 17)));
        assert_eq!(at("/metadata/limits/max", false), Some((3, 23)));
        assert_eq!(at("/metadata/a~1b/y/1/z", false), Some((4, 44)));
        assert_eq!(at("/references/1/url", true), Some((11, 1)));
        assert_eq!(at("/references/1/url", false), Some((11, 7)));
        assert_eq!(at("/scripts_table/k", false), Some((14, 5)));
        assert_eq!(at("/references/2", false), None);
    }

    #[test]
    fn skill_md_positions_count_the_whole_file() {
        let text = "---\nname: writer\nmetadata:\n  a: [1, 2]\n---\n\n# Body\n";
        let opts = LoadOptions {
            body_field: Some("body".into()),
            ..LoadOptions::default()
        };
        let f = Fragment::from_str(
            text.into(),
            Form::SkillMd,
            Layer::Base,
            Path::new("base/writer/SKILL.md"),
            &opts,
        )
        .unwrap();
        let at = |p: &str, key: bool| f.position(p, key);
        assert_eq!(at("/name", true), Some((2, 1)));
        assert_eq!(at("/metadata", false), Some((4, 3)));
        assert_eq!(at("/metadata/a/1", false), Some((4, 10)));
        assert_eq!(at("/body", false), Some((7, 1)));
        assert_eq!(f.line_of("/metadata/a/0"), Some(4));
        // No frontmatter: only the body has a place.
        let f = Fragment::from_str(
            "\n# Only a body\n".into(),
            Form::SkillMd,
            Layer::Base,
            Path::new("base/writer/SKILL.md"),
            &opts,
        )
        .unwrap();
        assert_eq!(f.position("/body", false), Some((2, 1)));
        assert_eq!(f.position("", false), None);
    }

    #[test]
    fn many_positions_from_one_index() {
        let mut text = String::from("trigger_keywords:\n");
        for i in 0..20_000 {
            text.push_str(&format!("  - kw{i}\n"));
        }
        let f = Fragment::from_str(
            text,
            Form::Yaml,
            Layer::Base,
            Path::new("s.yaml"),
            &LoadOptions::default(),
        )
        .unwrap();
        for i in (0..20_000).step_by(997).chain([19_999]) {
            let p: Pos = (i + 2, 5);
            assert_eq!(
                f.position(&format!("/trigger_keywords/{i}"), false),
                Some(p)
            );
        }
    }

    #[test]
    fn positions_indexed_while_parsing_are_those_of_the_index_pass() {
        // Every YAML file the project ships as an example or fixture, and
        // shapes the index has special cases for.
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let mut texts: Vec<String> = vec![
            "a: 1\nb:\n  c: [1, {d: 2}]\n  e: |\n    text\n".into(),
            "? [complex, key]\n: v\nplain: &x {a: 1}\nref: *x\n".into(),
            "- a\n- {b: c}\n- - nested\n".into(),
            "k: v".into(),
        ];
        let mut dirs = vec![
            root.join("examples"),
            root.join("tests/fixtures"),
            root.join(".ci/skills-ref/fixtures"),
        ];
        while let Some(dir) = dirs.pop() {
            for e in std::fs::read_dir(&dir).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "yaml" || x == "yml") {
                    texts.extend(std::fs::read_to_string(&p).ok());
                } else if p.extension().is_some_and(|x| x == "md") {
                    // A SKILL.md's frontmatter.
                    let text = std::fs::read_to_string(&p).unwrap_or_default();
                    if let Some(rest) = text.strip_prefix("---\n")
                        && let Some((fm, _)) = rest.split_once("\n---")
                    {
                        texts.push(format!("{fm}\n"));
                    }
                }
            }
        }
        assert!(texts.len() > 40, "{} texts", texts.len());
        let mut compared = 0;
        for text in &texts {
            let Ok((Some(value), Some(fused))) =
                super::super::yaml::parse_indexed(text, u64::MAX, 3)
            else {
                continue;
            };
            let lazy = Index::yaml(text, 3);
            let mut all = Vec::new();
            pointers(&value, String::new(), &mut all);
            for p in &all {
                for key in [false, true] {
                    assert_eq!(
                        fused.position(p, key),
                        lazy.position(p, key),
                        "{p} in {text}"
                    );
                    compared += 1;
                }
            }
            assert_eq!(fused.top_level_keys(), lazy.top_level_keys());
        }
        assert!(compared > 100, "{compared}");
    }
}
