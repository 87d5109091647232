//! Loading one layer's fragment of a skill from any of the four forms.
//!
//! Each loader parses text ([`Fragment::from_str`]); [`Fragment::load`] is
//! the thin I/O wrapper that enforces the size cap and UTF-8. The source text
//! is kept so that a later error can be located lazily: the happy path never
//! pays for positions. The first position asked for builds an index of them
//! all, in one pass over the source, so locating many problems (or every
//! value `explain` shows) stays linear in the file.

mod index;
mod markdown;
mod toml;
mod yaml;

use std::path::Path;
use std::sync::{Arc, OnceLock};

use serde_json::{Map, Value};

use crate::error::{Diagnostic, DiagnosticKind};
use crate::layer::{Form, Layer};
use crate::source::Located;

/// A 1-based `(line, column)`.
pub(crate) type Pos = (usize, usize);

/// The default cap on a fragment file's size: 4 MiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 * 1024 * 1024;

/// The text syntax of a fragment (a SKILL.md frontmatter is YAML).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syntax {
    /// YAML.
    Yaml,
    /// TOML.
    Toml,
}

/// How fragments are read.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Files larger than this are refused before being read.
    pub max_bytes: u64,
    /// The field a SKILL.md body goes to (the spec's `body_field`).
    pub body_field: Option<String>,
    /// Index every node's position while parsing, rather than on the first
    /// question: for callers that will locate something in most fragments.
    pub positions: bool,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_bytes: DEFAULT_MAX_BYTES,
            body_field: None,
            positions: false,
        }
    }
}

/// Where a SKILL.md's body is: the field it set, the line of its first
/// non-blank character and of its first line.
#[derive(Debug, Clone)]
struct BodyAt {
    field: String,
    line: usize,
    text_line: usize,
}

/// One layer's fragment: the top-level fields it sets, as written.
#[derive(Debug, Clone)]
pub struct Fragment {
    /// The layer it belongs to.
    pub layer: Layer,
    /// Its form.
    pub form: Form,
    /// Its file.
    pub path: Arc<Path>,
    /// The fields it sets: always a JSON object, keys sorted.
    value: Value,
    source: String,
    /// 0-based line where the parsed YAML/TOML text starts in the file.
    line_offset: usize,
    /// The field a SKILL.md body set, and the line the body starts on.
    body_at: Option<BodyAt>,
    /// Every node's position, built on first use (`None`: no text to index,
    /// as in a SKILL.md without frontmatter).
    index: OnceLock<Option<index::Index>>,
}

impl Fragment {
    /// Reads the file `located` points at. A files-only directory
    /// ([`Form::Files`]) is read as an empty fragment: it sets no field.
    pub fn load(located: &Located, options: &LoadOptions) -> Result<Fragment, Diagnostic> {
        if located.form == Form::Files {
            return Fragment::from_str(
                String::new(),
                Form::Files,
                located.layer,
                &located.path,
                options,
            );
        }
        let text = read_capped(located, options.max_bytes)
            .map_err(|(pos, kind)| error(&located.path, located.layer, pos, kind))?;
        Fragment::from_str(text, located.form, located.layer, &located.path, options)
    }

    /// Parses `text` as a fragment of form `form`; `path` is used in messages.
    pub fn from_str(
        mut text: String,
        form: Form,
        layer: Layer,
        path: &Path,
        options: &LoadOptions,
    ) -> Result<Fragment, Diagnostic> {
        if text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        let fail = |(pos, kind): ParseError| error(path, layer, pos, kind);
        let Parsed {
            value,
            index,
            line_offset,
            body,
        } = Parsed::of(&text, form, options).map_err(fail)?;
        let mut fields = fields_of(value, line_offset, options.max_bytes).map_err(fail)?;
        let body_at = match body {
            Some((body, at)) => Some(set_body(&mut fields, body, at, options).map_err(fail)?),
            None => None,
        };
        Ok(Fragment {
            layer,
            form,
            path: Arc::from(path),
            value: Value::Object(fields),
            source: text,
            line_offset,
            body_at,
            index,
        })
    }

    /// An in-memory fragment (for tests, benches and embedders).
    pub fn from_fields(layer: Layer, path: &Path, fields: Map<String, Value>) -> Fragment {
        Fragment {
            layer,
            form: Form::Yaml,
            path: Arc::from(path),
            value: Value::Object(fields),
            source: String::new(),
            line_offset: 0,
            body_at: None,
            index: OnceLock::new(),
        }
    }

    /// The fields it sets, keys sorted.
    pub fn fields(&self) -> &Map<String, Value> {
        match &self.value {
            Value::Object(m) => m,
            _ => unreachable!("a fragment's value is always an object"),
        }
    }

    /// The fields it sets, without the text they were read from.
    pub(crate) fn into_fields(self) -> Map<String, Value> {
        match self.value {
            Value::Object(m) => m,
            _ => unreachable!("a fragment's value is always an object"),
        }
    }

    /// The fields as one JSON object (what the schema validates).
    pub fn as_value(&self) -> &Value {
        &self.value
    }

    /// The source text as read (after a BOM is removed).
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Is this a `SKILL.md` with a frontmatter whose closing fence ends in
    /// LF (a CRLF one is a CRLF file, [`markdown`])?
    pub(crate) fn lf_frontmatter(&self) -> bool {
        self.form == Form::SkillMd
            && markdown::split(&self.source).is_ok_and(|s| s.frontmatter.is_some() && !s.crlf)
    }

    /// The source position of the value at JSON `pointer` (or of its key):
    /// a block mapping is at its first key, a SKILL.md body at its first
    /// line. The first call indexes the whole source; every call after it
    /// costs a lookup.
    pub fn position(&self, pointer: &str, key: bool) -> Option<Pos> {
        if let Some(at) = &self.body_at
            && pointer.strip_prefix('/') == Some(escape_pointer(&at.field).as_str())
        {
            return Some((at.line, 1));
        }
        self.index()?.position(pointer, key)
    }

    /// The position of line `line` (0-based) of the string value at
    /// `pointer`: exact for a SKILL.md body, whose lines are the file's;
    /// the value's own position for a YAML or TOML string.
    pub(crate) fn position_in_value(&self, pointer: &str, line: usize) -> Option<Pos> {
        if let Some(at) = &self.body_at
            && pointer.strip_prefix('/') == Some(escape_pointer(&at.field).as_str())
        {
            return Some((at.text_line + line, 1));
        }
        self.position(pointer, false)
    }

    /// The top-level keys in the order they are written, with their
    /// positions (`None` when there is no text to read them from).
    pub(crate) fn top_level_keys(&self) -> Option<Vec<(&str, Pos)>> {
        Some(self.index()?.top_level_keys())
    }

    fn index(&self) -> Option<&index::Index> {
        self.index
            .get_or_init(|| match self.form {
                Form::SkillMd => markdown::split(&self.source)
                    .ok()?
                    .frontmatter
                    .map(|fm| index::Index::yaml(fm, self.line_offset)),
                // Indexed as it was parsed, or no text.
                Form::Toml | Form::Files => None,
                Form::Yaml | Form::Yml => Some(index::Index::yaml(&self.source, 0)),
            })
            .as_ref()
    }

    /// The 1-based line of the value at `pointer`, for origin annotations.
    pub fn line_of(&self, pointer: &str) -> Option<usize> {
        self.position(pointer, false).map(|(l, _)| l)
    }
}

/// How many times the size cap the paths of a fragment's values may add up
/// to (the same factor as the alias budget).
const PATH_BUDGET: u64 = 4;

/// Adds the length of every value's path (its JSON pointer) to `total`,
/// giving up with the running total once it passes `limit`.
///
/// Every merged value carries its path as its origin, and `explain` prints
/// each one: a long key above many values (a 256 KiB key over 20,000 values
/// is a 0.5 MB file) would cost gigabytes there. The sum is what those cost,
/// so it is bounded by the size cap like everything else; no real skill
/// comes near it. One pass, no string built.
fn path_bytes(v: &Value, prefix: u64, total: &mut u64, limit: u64) -> Result<(), u64> {
    let mut child = |len: u64, c: &Value| {
        let p = prefix + 1 + len;
        *total += p;
        if *total > limit {
            return Err(*total);
        }
        path_bytes(c, p, total, limit)
    };
    match v {
        Value::Object(m) => m.iter().try_for_each(|(k, c)| child(k.len() as u64, c)),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .try_for_each(|(i, c)| child(i.checked_ilog10().unwrap_or(0) as u64 + 1, c)),
        _ => Ok(()),
    }
}

fn error(path: &Path, layer: Layer, pos: Option<Pos>, kind: DiagnosticKind) -> Diagnostic {
    Diagnostic::error(Some(path), kind).in_layer(layer).at(pos)
}

/// A fragment's text as parsed, before its fields are checked.
struct Parsed {
    /// What its YAML or TOML holds (`None`: nothing).
    value: Option<Value>,
    /// Every node's position, when parsing gave them.
    index: OnceLock<Option<index::Index>>,
    /// 0-based line where the parsed text starts in the file.
    line_offset: usize,
    /// A SKILL.md's body and where it is (its field not yet set).
    body: Option<(String, BodyAt)>,
}

impl Parsed {
    /// Parses `text` as form `form`: YAML (indexed while parsing when
    /// `options` asks for positions), TOML (always indexed), a SKILL.md
    /// ([`Parsed::skill_md`]), or nothing for a directory of files.
    fn of(text: &str, form: Form, options: &LoadOptions) -> Result<Parsed, ParseError> {
        let cap = options.max_bytes;
        let (value, index) = match form {
            Form::Yaml | Form::Yml if options.positions => {
                let (value, positions) = yaml::parse_indexed(text, cap, 0)?;
                (value, OnceLock::from(positions))
            }
            Form::Yaml | Form::Yml => (yaml::parse(text, cap)?, OnceLock::new()),
            Form::Files => (None, OnceLock::new()),
            Form::Toml => {
                let (value, positions) = toml::parse(text)?;
                (Some(value), OnceLock::from(Some(positions)))
            }
            Form::SkillMd => return Parsed::skill_md(text, options),
        };
        Ok(Parsed {
            value,
            index,
            line_offset: 0,
            body: None,
        })
    }

    /// A SKILL.md: its frontmatter as YAML, its positions counted from the
    /// file's top; and its body, unless blank.
    fn skill_md(text: &str, options: &LoadOptions) -> Result<Parsed, ParseError> {
        let cap = options.max_bytes;
        let split = markdown::split(text)?;
        let line_offset = split.frontmatter_line;
        let located = |(pos, kind): ParseError| (pos.map(|(l, c)| (l + line_offset, c)), kind);
        let (value, index) = match split.frontmatter {
            Some(fm) if options.positions => {
                let (value, positions) =
                    yaml::parse_indexed(fm, cap, line_offset).map_err(located)?;
                (value, OnceLock::from(positions))
            }
            Some(fm) => (yaml::parse(fm, cap).map_err(located)?, OnceLock::new()),
            None => (None, OnceLock::new()),
        };
        // A checkout with `core.autocrlf` must not change the skill. A body
        // of blank space sets nothing, so an override that only changes the
        // frontmatter keeps the lower body (and such a body cannot be
        // written out and read back).
        let body = (!split.body.trim().is_empty()).then(|| {
            let body = if split.crlf && split.body.contains('\r') {
                split.body.replace("\r\n", "\n")
            } else {
                split.body.to_owned()
            };
            (
                body,
                BodyAt {
                    field: String::new(),
                    line: split.body_line,
                    text_line: split.text_line,
                },
            )
        });
        Ok(Parsed {
            value,
            index,
            line_offset,
            body,
        })
    }
}

/// The fields a parsed value sets: refused, at the parsed text's first
/// line, when its paths together are longer than the budget for a file of
/// `max_bytes`, or when it is no mapping.
fn fields_of(
    value: Option<Value>,
    line_offset: usize,
    max_bytes: u64,
) -> Result<Map<String, Value>, ParseError> {
    let first_line = Some((1 + line_offset, 1));
    if let Some(v) = &value {
        let limit = max_bytes.saturating_mul(PATH_BUDGET);
        if let Err(total) = path_bytes(v, 0, &mut 0, limit) {
            return Err((first_line, DiagnosticKind::PathsTooLong { total, limit }));
        }
    }
    match value {
        None => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err((
            first_line,
            DiagnosticKind::NotAMapping {
                found: describe(&other).into(),
            },
        )),
    }
}

/// Sets a SKILL.md's `body` as the spec's body field (`options`) in
/// `fields`; refused, at the body's line, when the spec has none or when
/// the frontmatter sets that field too. Returns where the body is.
fn set_body(
    fields: &mut Map<String, Value>,
    body: String,
    at: BodyAt,
    options: &LoadOptions,
) -> Result<BodyAt, ParseError> {
    let line = Some((at.line, 1));
    let Some(field) = &options.body_field else {
        return Err((line, DiagnosticKind::NoBodyField));
    };
    if fields.get(field).is_some_and(|v| !v.is_null()) {
        return Err((
            line,
            DiagnosticKind::BodyTwice {
                field: field.clone(),
            },
        ));
    }
    fields.insert(field.clone(), Value::String(body));
    Ok(BodyAt {
        field: field.clone(),
        ..at
    })
}

/// Reads at most `max` bytes of a UTF-8 file, which must resolve to a
/// regular file inside its layer ([`crate::source::confine`]).
fn read_capped(located: &Located, max: u64) -> Result<String, (Option<Pos>, DiagnosticKind)> {
    use crate::source::confine::Refusal;
    let bytes = located.root.read(located.rel(), max).map_err(|r| {
        let kind = match r {
            Refusal::TooLarge { size, limit } => DiagnosticKind::TooLarge { size, limit },
            Refusal::Io(e) => DiagnosticKind::Io {
                message: e.to_string(),
            },
            r => DiagnosticKind::Refused {
                reason: r.describe(&located.path, &located.layer.to_string()),
            },
        };
        (None, kind)
    })?;
    String::from_utf8(bytes).map_err(|e| {
        let valid = e.utf8_error().valid_up_to();
        let text = String::from_utf8_lossy(&e.as_bytes()[..valid]).into_owned();
        (
            Some(offset_to_pos(&text, valid)),
            DiagnosticKind::InvalidUtf8,
        )
    })
}

/// Parses YAML text strictly, as a fragment is read (no duplicate or
/// non-string keys, no merge keys, only the core schema's tags; see
/// `yaml.rs`). As in a fragment, its aliases may expand to no more than one
/// value per byte of the text and four times its size in strings (counting
/// at least 64 KiB).
pub fn parse_yaml(text: &str) -> Result<Option<Value>, (Option<Pos>, DiagnosticKind)> {
    yaml::parse(text, u64::MAX)
}

/// Why a text did not parse, and where.
pub(crate) type ParseError = (Option<Pos>, DiagnosticKind);

/// Parses the YAML of a file that is not a fragment (the merge spec, a
/// target) as a fragment is parsed, under that file's own size cap `cap`:
/// the same alias budget, and one mapping per 32 bytes of `cap`, refused
/// with a message naming the limit for `what` ("a merge spec") rather
/// than `--max-fragment-bytes`, which does not raise it. Also gives the
/// keys of the mapping under the root's `key` in the order the text
/// writes them.
pub(crate) fn parse_yaml_keeping_order(
    text: &str,
    key: &'static str,
    cap: u64,
    what: &str,
) -> Result<(Option<Value>, Vec<String>), ParseError> {
    yaml::parse_keeping_order(text, cap, key).map_err(|(pos, kind)| match kind {
        DiagnosticKind::TooManyMappings { limit, cap } => (
            pos,
            DiagnosticKind::Spec {
                message: format!(
                    "file holds more than {limit} mappings, one per 32 bytes of the {cap}-byte \
                     limit for {what}; a mapping costs far more memory than its text"
                ),
            },
        ),
        kind => (pos, kind),
    })
}

/// The position of the node at JSON `pointer` in `text` (of its key when
/// `key` is set), with `line_offset` lines added. One pass over `text`: to
/// locate many nodes of one fragment, use [`Fragment::position`], which
/// indexes them once.
pub fn locate(
    text: &str,
    syntax: Syntax,
    pointer: &str,
    key: bool,
    line_offset: usize,
) -> Option<Pos> {
    let pos = match syntax {
        Syntax::Yaml => yaml::locate(text, pointer, key),
        Syntax::Toml => toml::locate(text, pointer, key),
    }?;
    Some((pos.0 + line_offset, pos.1))
}

/// 1-based line and column (in characters) of a byte offset.
pub(crate) fn offset_to_pos(text: &str, offset: usize) -> Pos {
    let offset = offset.min(text.len());
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (line, before[line_start..].chars().count() + 1)
}

/// Escapes a key for a JSON pointer segment (`~` → `~0`, `/` → `~1`).
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Reverses [`escape_pointer`].
pub(crate) fn unescape_pointer(seg: &str) -> String {
    seg.replace("~1", "/").replace("~0", "~")
}

/// "a string", "a list", ... for messages.
pub fn describe(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(n) if n.is_f64() => "a number",
        Value::Number(_) => "an integer",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "a mapping",
    }
}

#[cfg(test)]
mod path_tests {
    use serde_json::json;

    #[test]
    fn path_bytes_add_up_every_values_path() {
        let mut total = 0;
        // /a (2), /a/bb (5), /a/bb/0 (7), /a/bb/1 (7), /c (2)
        let v = json!({"a": {"bb": [1, 2]}, "c": 3});
        assert_eq!(super::path_bytes(&v, 0, &mut total, 100), Ok(()));
        assert_eq!(total, 23);
        let mut total = 0;
        assert_eq!(super::path_bytes(&v, 0, &mut total, 10), Err(14));
    }
}
