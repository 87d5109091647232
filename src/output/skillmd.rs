//! An effective skill as an Agent Skills directory: `SKILL.md` (a YAML
//! frontmatter, then the Markdown body) plus the skill's files, which any
//! agent that reads the format loads as is.
//!
//! The frontmatter holds the effective fields in the spec's order, except
//! the body field and fields equal to their default, so an untouched public
//! skill comes out as it went in. The name field is always written (the
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
    let values = effective.to_value();
    let body_field = spec.body_field.as_deref();
    let body = match body_field.and_then(|f| values.get(f).map(|v| (f, v))) {
        None => "",
        Some((_, Value::String(s))) => s.as_str(),
        Some((field, other)) => {
            return Err(Error::Refused {
                path: None,
                message: format!(
                    "skill '{}': the body field '{}' holds {}, not text; a SKILL.md carries its body as Markdown, so this skill cannot be exported as one",
                    crate::text::excerpt(&effective.name, crate::text::EXCERPT_CHARS),
                    crate::text::excerpt(field, crate::text::EXCERPT_CHARS),
                    crate::fragment::describe(other)
                ),
            });
        }
    };
    let order = spec.field_order();
    // The switches say where a skill goes; they are not part of it.
    let switches = [spec.enabled_field.as_deref(), spec.targets_field.as_deref()];
    let front = order.iter().filter_map(|&name| {
        let field = spec.field(name)?;
        let v = values.get(name)?;
        let is_name = spec.name_field.as_deref() == Some(name);
        let written = body_field != Some(name)
            && !switches.contains(&Some(name))
            && (is_name || v != &field.default);
        written.then_some((name, v))
    });
    Ok(document(front, body))
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
