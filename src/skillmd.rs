//! An effective skill as an Agent Skills directory: `SKILL.md` (a YAML
//! frontmatter, then the Markdown body) plus the skill's files, which any
//! agent that reads the format loads as is.
//!
//! The frontmatter holds the effective fields in the spec's order, except
//! the body field and fields equal to their default, so an untouched public
//! skill comes out as it went in. The name field is always written (the
//! format requires it). Read back as a lone base layer, the directory gives
//! the same effective skill: a body that trimming would change (surrounding
//! blank space, carriage returns) or that is not a string stays in the
//! frontmatter instead of below it.

use serde_json::Value;

use crate::merge::Effective;
use crate::spec::MergeSpec;

/// The `SKILL.md` text of an effective skill.
pub fn render(spec: &MergeSpec, effective: &Effective) -> String {
    let values = effective.to_value();
    let body_field = spec.body_field.as_deref();
    let body = body_field.and_then(|f| values.get(f));
    let body_below = match body {
        Some(Value::String(s)) if !s.is_empty() && s.trim() == s && !s.contains('\r') => {
            Some(s.as_str())
        }
        _ => None,
    };
    let mut front = serde_yaml::Mapping::new();
    for name in spec.field_order() {
        let Some(field) = spec.field(name) else {
            continue;
        };
        let Some(v) = values.get(name) else { continue };
        let is_name = spec.name_field.as_deref() == Some(name);
        let is_body = body_field == Some(name);
        if is_body && (body_below.is_some() || v == &field.default) {
            continue;
        }
        if !is_name && !is_body && v == &field.default {
            continue;
        }
        front.insert(
            serde_yaml::Value::String(name.to_owned()),
            serde_yaml::to_value(v).expect("JSON values are YAML values"),
        );
    }
    let mut out = String::from("---\n");
    if !front.is_empty() {
        out.push_str(&serde_yaml::to_string(&front).expect("a mapping of JSON values serialises"));
    }
    out.push_str("---\n");
    if let Some(body) = body_below {
        out.push('\n');
        out.push_str(body);
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use std::path::Path;

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

    #[test]
    fn an_untouched_skill_comes_out_as_it_went_in() {
        let spec = crate::merge::tests::spec();
        let text = "---\nname: writer\ndescription: Writes docs.\ntrigger_keywords:\n- docs\n---\n\n# Writer\n\nDo it.\n";
        let f = load(text, &spec);
        let eff = crate::merge(&spec, "writer", std::slice::from_ref(&f));
        assert_eq!(super::render(&spec, &eff), text);
    }

    #[test]
    fn a_body_that_trimming_would_change_stays_in_the_frontmatter() {
        let spec = crate::merge::tests::spec();
        let f = load("---\nbody: \"  padded\\r\\n\"\n---\n", &spec);
        let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
        let out = super::render(&spec, &eff);
        assert!(out.ends_with("---\n"), "{out}");
        let back = load(&out, &spec);
        assert_eq!(back.fields()["body"], "  padded\r\n");
    }
}
