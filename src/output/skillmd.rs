//! An effective skill as an Agent Skills directory: `SKILL.md` (a YAML
//! frontmatter, then the Markdown body) plus the skill's files, which any
//! agent that reads the format loads as is.
//!
//! The frontmatter holds the effective fields in the spec's order, except
//! the body field and fields equal to their default. An untouched public
//! skill is not written at all but copied: `verbatim` gives its upstream
//! text when export would write the same fields. The name field is always written (the
//! format requires it). It is written by [`crate::output::yaml_out`], so YAML 1.1
//! and 1.2 readers (PyYAML, js-yaml, this crate's) all read the same values
//! from it.
//!
//! The body is always below the frontmatter, never in it: an agent reads
//! its instructions there. It is written as `\n` + body + `\n` after the
//! closing fence, which the reader takes off again
//! ([`crate::fragment`]'s SKILL.md rule), so every body reads back byte for
//! byte, with blank lines around it, an indented first line, lines that read
//! `---`, carriage returns or no final newline. Read back as a lone base
//! layer, the directory gives the same effective skill, with one exception:
//! a body that is empty or only blank space sets nothing when read (so an
//! override that only changes the frontmatter keeps the lower body), and
//! the skill read back has the body field's default instead.

use serde_json::Value;

use crate::error::Error;
use crate::merge::Effective;
use crate::spec::MergeSpec;

/// The `SKILL.md` text of an effective skill; refused when its body field
/// holds something other than text (which a checked spec, whose body field
/// is an OVERRIDE field of type string, and validated fragments never give).
pub(crate) fn try_render(spec: &MergeSpec, effective: &Effective) -> Result<String, Error> {
    let values = match effective.to_value() {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    };
    let (front, body) = parts(spec, &effective.name, &values)?;
    Ok(document(front, body))
}

/// Frontmatter fields in the order they are written.
pub(crate) type Front<'v> = Vec<(&'v str, &'v Value)>;

/// What a `SKILL.md` written without a target holds of the effective
/// skill's `values`: its frontmatter fields, in the spec's order (the body
/// field, the switches and fields equal to their default left out, the name
/// field always written), and its body. Refused when the body field holds
/// something other than text.
pub(crate) fn parts<'v>(
    spec: &'v MergeSpec,
    name: &str,
    values: &'v serde_json::Map<String, Value>,
) -> Result<(Front<'v>, &'v str), Error> {
    let body_field = spec.body_field.as_deref();
    let body = match body_field.and_then(|f| values.get(f).map(|v| (f, v))) {
        None => "",
        Some((_, Value::String(s))) => s.as_str(),
        Some((field, other)) => {
            return Err(Error::Refused {
                kind: crate::error::ErrorKind::Invalid,
                path: None,
                message: format!(
                    "skill '{}': the body field '{}' holds {}, not text; a SKILL.md carries its body as Markdown, so this skill cannot be exported as one",
                    crate::text::excerpt(name, crate::text::EXCERPT_CHARS),
                    crate::text::excerpt(field, crate::text::EXCERPT_CHARS),
                    crate::fragment::describe(other)
                ),
            });
        }
    };
    // The switches say where a skill goes; they are not part of it.
    let switches = [spec.enabled_field.as_deref(), spec.targets_field.as_deref()];
    let front = spec
        .field_order()
        .into_iter()
        .filter_map(|name| {
            let field = spec.field(name)?;
            let (name, v) = values.get_key_value(name)?;
            let is_name = spec.name_field.as_deref() == Some(name.as_str());
            let written = body_field != Some(name.as_str())
                && !switches.contains(&Some(name.as_str()))
                && (is_name || v != &field.default);
            written.then_some((name.as_str(), v))
        })
        .collect();
    Ok((front, body))
}

/// The `SKILL.md` upstream wrote, to be exported byte for byte, when
/// neither the layers nor the export change it: the skill's fields come
/// from one `SKILL.md` of the base layer (a higher layer may only add
/// files: a directory without a `SKILL.md` or fragment of its own), that
/// file has a frontmatter and LF line endings, and `front`, the frontmatter
/// export would write, holds exactly the fields that file's frontmatter
/// sets, each with the same value, in any order. Its spelling (quotes,
/// comments, blank lines, key order, a missing final newline) is then
/// kept. A CRLF file is written again with LF: its line endings are the
/// checkout's (`core.autocrlf`), and an export must give the same bytes
/// from any checkout. A byte order mark is never written.
pub(crate) fn verbatim<'f>(
    spec: &MergeSpec,
    fragments: &'f [crate::fragment::Fragment],
    front: &[(&str, &Value)],
) -> Option<&'f str> {
    use crate::layer::{Form, Layer};
    let mut setting = fragments.iter().filter(|f| f.form != Form::Files);
    let (Some(f), None) = (setting.next(), setting.next()) else {
        return None;
    };
    if f.layer != Layer::Base || f.form != Form::SkillMd || !f.lf_frontmatter() {
        return None;
    }
    let body = spec.body_field.as_deref();
    let fields = f.fields();
    let set = fields.keys().filter(|k| Some(k.as_str()) != body).count();
    let same = set == front.len()
        && front
            .iter()
            .all(|(k, v)| Some(*k) != body && fields.get(*k) == Some(*v));
    same.then(|| f.source())
}

/// A `SKILL.md` of frontmatter fields (in order) and a body: `---`, the
/// fields as YAML every reader reads alike, `---`, then, if the body is not
/// empty, a blank line, the body and a line ending.
pub fn document<'v>(front: impl IntoIterator<Item = (&'v str, &'v Value)>, body: &str) -> String {
    let mut out = String::from("---\n");
    out.push_str(&crate::output::yaml_out::mapping(front));
    out.push_str("---\n");
    if !body.is_empty() {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out
}

/// The body of an effective skill's values, if its body field holds text.
pub(crate) fn body_of<'v>(spec: &MergeSpec, values: &'v serde_json::Map<String, Value>) -> &'v str {
    spec.body_field
        .as_deref()
        .and_then(|f| values.get(f))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `try_render` for an effective skill merged from validated fragments
/// under a checked spec, whose body is always text.
///
/// # Panics
///
/// If the body field holds something other than text (only possible when
/// unvalidated fragments were merged).
pub fn render(spec: &MergeSpec, effective: &Effective) -> String {
    try_render(spec, effective)
        .unwrap_or_else(|e| panic!("an effective skill of validated fragments: {e}"))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use serde_json::{Map, Value, json};

    use crate::fragment::{Fragment, LoadOptions};
    use crate::layer::{Form, Layer};

    fn load(text: &str, spec: &crate::MergeSpec) -> Fragment {
        let opts = LoadOptions {
            body_field: spec.body_field.clone(),
            ..LoadOptions::default()
        };
        Fragment::from_str(
            text.into(),
            Form::SkillMd,
            Layer::Base,
            Path::new("w/SKILL.md"),
            &opts,
        )
        .unwrap()
    }

    fn with_body(body: Value) -> (crate::MergeSpec, Fragment) {
        let spec = crate::merge::tests::spec();
        let mut fields = Map::new();
        fields.insert("body".into(), body);
        let f = Fragment::from_fields(Layer::Base, Path::new("w.yaml"), fields);
        (spec, f)
    }

    #[test]
    fn an_untouched_skill_comes_out_as_it_went_in() {
        let spec = crate::merge::tests::spec();
        let text = "---\nname: writer\ndescription: Writes docs.\ntrigger_keywords:\n- docs\n---\n\n# Writer\n\nDo it.\n";
        let f = load(text, &spec);
        let eff = crate::merge(&spec, "writer", std::slice::from_ref(&f));
        assert_eq!(super::render(&spec, &eff), text);
    }

    #[test]
    fn every_body_is_below_the_frontmatter_and_reads_back_byte_for_byte() {
        for body in [
            "\n\n# Title\n\n",
            "    indented first line\nthen text",
            "  padded\r\n",
            "a\n---\nb\n---\n",
            "\r\nx\r",
            "no final newline",
            "line\u{2028}separator",
        ] {
            let (spec, f) = with_body(json!(body));
            let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
            let out = super::render(&spec, &eff);
            assert!(
                out.starts_with("---\nname: w\n---\n\n"),
                "{body:?}: {out:?}"
            );
            assert!(!out.contains("body:"), "{out:?}");
            let back = load(&out, &spec);
            assert_eq!(back.fields()["body"], body, "{out:?}");
        }
    }

    #[test]
    fn an_empty_body_writes_nothing_after_the_frontmatter() {
        let (spec, f) = with_body(json!(""));
        let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
        assert_eq!(super::render(&spec, &eff), "---\nname: w\n---\n");
    }

    #[test]
    fn a_body_that_is_not_text_is_refused_not_put_in_the_frontmatter() {
        let (spec, f) = with_body(json!({"not": "text"}));
        let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
        let e = super::try_render(&spec, &eff).unwrap_err();
        assert_eq!(
            e.to_string(),
            "skill 'w': the body field 'body' holds a mapping, not text; a SKILL.md carries its body as Markdown, so this skill cannot be exported as one"
        );
    }
}
