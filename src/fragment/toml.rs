//! TOML fragments: values from `toml`, positions from the same crate's
//! span-carrying parse, run only to locate an error.

use serde_json::{Map, Number, Value};
use toml::de::{DeTable, DeValue};

use crate::error::DiagnosticKind;

use super::Pos;

/// Parses a TOML document into a JSON mapping. Datetimes become RFC 3339 strings.
pub(crate) fn parse(text: &str) -> Result<Value, (Option<Pos>, DiagnosticKind)> {
    let table: toml::Table = toml::from_str(text).map_err(|e| {
        let pos = e.span().map(|s| super::offset_to_pos(text, s.start));
        (
            pos,
            DiagnosticKind::Syntax {
                message: e.message().trim().to_owned(),
            },
        )
    })?;
    let mut out = Map::new();
    for (k, v) in table {
        out.insert(
            k,
            convert(v).map_err(|m| (None, DiagnosticKind::Syntax { message: m }))?,
        );
    }
    Ok(Value::Object(out))
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
