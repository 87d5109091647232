//! TOML fragments: values and positions from one span-carrying parse.
//!
//! `toml` itself reads a document in two steps: a parse into a tree with
//! spans, then a deserialisation of that tree. The positions of every node
//! are taken from the tree in between, so that locating an error later never
//! parses the text again (a second parse of a 4 MiB file, on top of the
//! value already held, was the largest peak of memory a TOML file caused).

use serde::Deserialize;
use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};

use crate::error::DiagnosticKind;

use super::Pos;
use super::index::Index;

/// Parses a TOML document into a JSON mapping, and indexes the positions of
/// its nodes. Datetimes become RFC 3339 strings.
pub(crate) fn parse(text: &str) -> Result<(Value, Index), (Option<Pos>, DiagnosticKind)> {
    let fail = |e: toml::de::Error| {
        let pos = e.span().map(|s| super::offset_to_pos(text, s.start));
        (
            pos,
            DiagnosticKind::Syntax {
                message: crate::text::excerpt(e.message().trim(), crate::text::MESSAGE_CHARS),
            },
        )
    };
    let doc = DeTable::parse(text).map_err(fail)?;
    let index = Index::toml(text, &doc);
    let table = toml::Table::deserialize(toml::de::Deserializer::from(doc)).map_err(fail)?;
    let mut out = Map::new();
    for (k, v) in table {
        out.insert(
            k,
            convert(v).map_err(|m| (None, DiagnosticKind::Syntax { message: m }))?,
        );
    }
    Ok((Value::Object(out), index))
}

fn convert(v: toml::Value) -> Result<Value, String> {
    Ok(match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::Number(i.into()),
        toml::Value::Float(f) => Value::Number(
            Number::from_f64(f).ok_or_else(|| format!("{f} cannot be represented in JSON"))?,
        ),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(a) => {
            Value::Array(a.into_iter().map(convert).collect::<Result<_, _>>()?)
        }
        toml::Value::Table(t) => Value::Object(
            t.into_iter()
                .map(|(k, v)| Ok((k, convert(v)?)))
                .collect::<Result<_, String>>()?,
        ),
    })
}

/// The position of the node at `pointer` (its key, if `key` is set).
pub(crate) fn locate(text: &str, pointer: &str, key: bool) -> Option<Pos> {
    let doc = DeTable::parse(text).ok()?;
    let mut table: &DeTable<'_> = doc.get_ref();
    let mut value: Option<&DeValue<'_>> = None;
    let mut span = doc.span();
    let segments: Vec<String> = pointer
        .split('/')
        .skip(1)
        .map(super::unescape_pointer)
        .collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        let next = match value {
            None | Some(DeValue::Table(_)) => {
                if let Some(DeValue::Table(t)) = value {
                    table = t;
                }
                let (k, v) = table
                    .iter()
                    .find(|(k, _)| k.get_ref().as_ref() == seg.as_str())?;
                if last && key {
                    span = k.span();
                    break;
                }
                v
            }
            Some(DeValue::Array(items)) => items.get(seg.parse::<usize>().ok()?)?,
            Some(_) => return None,
        };
        span = next.span();
        value = Some(next.get_ref());
    }
    Some(super::offset_to_pos(text, span.start))
}
