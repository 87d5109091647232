//! Up to three layers in one input, separated by `\0`; the first byte of
//! each part picks its form. Every part that loads and validates is merged
//! with the others in layer order, rendered and explained.
#![no_main]

mod common;

use bernstein_skills::Layer;
use bernstein_skills::layer::Form;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut fragments = Vec::new();
    for (layer, part) in Layer::ALL.into_iter().zip(data.split(|&b| b == 0)) {
        let Some((&selector, text)) = part.split_first() else {
            continue;
        };
        let form = match selector % 3 {
            0 => Form::Yaml,
            1 => Form::SkillMd,
            _ => Form::Toml,
        };
        if let Some(f) = common::load(text, form, layer) {
            fragments.push(f);
        }
    }
    common::merge_and_render(fragments);
});
