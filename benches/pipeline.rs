//! Micro-benchmarks of each step of the pipeline, on one typical skill:
//! loading the spec and compiling its schema, parsing each form, validating
//! a fragment, the pure merge of three layers and rendering the JSON.
//!
//! `cargo bench --bench pipeline`; see `benches/README.md` for figures.

mod common;

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};

use bernstein_skills::{MergeSpec, Validator, merge, output::render};

/// The same allocator as the `bernstein` binary, so the figures are those
/// of the binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn benches(c: &mut Criterion) {
    let spec = common::spec();
    let options = common::options(&spec);
    let validator = Validator::new(&spec);
    let sources = common::three_layers();
    let fragments: Vec<_> = sources.iter().map(|s| s.parse(&options)).collect();
    for f in &fragments {
        assert!(validator.validate(&spec, f).is_empty(), "fixture is valid");
    }

    let path = common::spec_path();
    c.bench_function("spec/load+compile", |b| {
        b.iter(|| {
            let spec = MergeSpec::load(black_box(&path)).unwrap();
            Validator::new(&spec)
        })
    });
    c.bench_function("spec/load", |b| {
        b.iter(|| MergeSpec::load(black_box(&path)).unwrap())
    });

    let mut parse = c.benchmark_group("parse");
    let base_yaml = common::base_yaml();
    for (label, src) in [
        ("yaml (team, 0.4 KB)", &sources[1]),
        ("yaml (base, 2.1 KB)", &base_yaml),
        ("SKILL.md (base, 4.6 KB)", &sources[0]),
        ("toml (user, 0.5 KB)", &sources[2]),
    ] {
        parse.bench_function(label, |b| {
            // The text is moved into the fragment, so each run gets a copy;
            // the copy (a memcpy of a few KB) is part of the figure.
            b.iter(|| src.parse(black_box(&options)))
        });
    }
    parse.finish();

    let mut validate = c.benchmark_group("validate");
    for (label, f) in [
        ("SKILL.md (base)", &fragments[0]),
        ("yaml (team)", &fragments[1]),
        ("toml (user)", &fragments[2]),
    ] {
        validate.bench_function(label, |b| {
            b.iter(|| validator.validate(black_box(&spec), black_box(f)))
        });
    }
    validate.finish();

    c.bench_function("merge/three layers", |b| {
        b.iter(|| merge(black_box(&spec), common::SKILL, black_box(&fragments)))
    });

    let effective = merge(&spec, common::SKILL, &fragments);
    c.bench_function("render/to_value+to_json", |b| {
        b.iter(|| render::to_json(&black_box(&effective).to_value()))
    });
    c.bench_function("render/effective_to_json", |b| {
        b.iter(|| render::effective_to_json(black_box(&effective)))
    });
    let value = effective.to_value();
    c.bench_function("render/to_json", |b| {
        b.iter(|| render::to_json(black_box(&value)))
    });
}

criterion_group! {
    name = pipeline;
    // A shared 2-core machine: more samples, a little longer, to tame noise.
    config = Criterion::default()
        .sample_size(60)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(pipeline);
