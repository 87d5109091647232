#![allow(dead_code)] // each target uses part of it
//! The pipeline every target drives: load → validate → merge → render →
//! explain, with the shipped spec. The invariants checked on the way are
//! the product's promises: nothing panics, a fragment that validates always
//! merges, and the rendering is canonical and deterministic.

use std::path::Path;
use std::sync::OnceLock;

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::merge::Resolved;
use bernstein_skills::{
    Fragment, Layer, MergeSpec, Validator, merge, output::explain, output::render,
};

pub struct Pipeline {
    pub spec: MergeSpec,
    pub validator: Validator,
    pub options: LoadOptions,
}

pub fn pipeline() -> &'static Pipeline {
    static P: OnceLock<Pipeline> = OnceLock::new();
    P.get_or_init(|| {
        let spec = MergeSpec::from_str(
            include_str!("../../spec/mergespec.yaml"),
            Path::new("spec/mergespec.yaml"),
        )
        .expect("the shipped spec loads");
        let validator = Validator::new(&spec);
        let options = LoadOptions {
            body_field: spec.body_field.clone(),
            ..LoadOptions::default()
        };
        Pipeline {
            spec,
            validator,
            options,
        }
    })
}

/// Loads `data` as one fragment of `form` in `layer`; `None` when the bytes
/// are not UTF-8 (the file loader rejects those before parsing) or the text
/// does not load or validate. Every located problem must name its file.
pub fn load(data: &[u8], form: Form, layer: Layer) -> Option<Fragment> {
    let p = pipeline();
    let text = std::str::from_utf8(data).ok()?.to_owned();
    let path = format!("{}/fuzz.{}", layer.label(), form.label());
    let fragment = match Fragment::from_str(text, form, layer, Path::new(&path), &p.options) {
        Ok(f) => f,
        Err(d) => {
            assert_eq!(d.file.as_deref(), Some(Path::new(&path)));
            let _ = d.to_string();
            return None;
        }
    };
    let problems = p.validator.validate(&p.spec, &fragment);
    for d in &problems {
        let _ = d.to_string();
    }
    problems.is_empty().then_some(fragment)
}

/// Merges, renders twice and explains the fragments (base first).
pub fn merge_and_render(fragments: Vec<Fragment>) {
    let p = pipeline();
    let effective = merge(&p.spec, "fuzz", &fragments);
    let json = render::to_json(&effective.to_value());
    assert_eq!(
        render::effective_to_json(&effective),
        json,
        "the direct rendering gives the same bytes"
    );
    assert_eq!(
        json,
        render::to_json(&merge(&p.spec, "fuzz", &fragments).to_value())
    );
    let reparsed: serde_json::Value = serde_json::from_str(&json).expect("the rendering is JSON");
    assert_eq!(
        render::to_json(&reparsed),
        json,
        "the rendering is canonical"
    );
    drop(effective);
    let resolved = Resolved::new(std::sync::Arc::new(p.spec.clone()), "fuzz", fragments);
    let _ = explain::explain(&p.spec, &resolved);
}

/// One form, loaded in the user layer over an empty base.
pub fn one_form(data: &[u8], form: Form) {
    if let Some(f) = load(data, form, Layer::User) {
        merge_and_render(vec![f]);
    }
}
