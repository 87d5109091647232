//! The floor for `validate` and `export`: find every fragment of a layer tree,
//! read it and parse it with the same parsers (`Fragment::from_str`), on the
//! same thread pool — and nothing else (no spec, no schema, no merge, no
//! output files).
//!
//! ```sh
//! cargo run --release --example read-parse -- DIR [-j N]
//! ```
//!
//! `-j` defaults to 2. Prints one line: files, bytes, parse failures.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::layer::Form;
use bernstein_skills::{Fragment, Layer};

/// The same allocator as the `bernstein` binary, so the floor is measured
/// under the same conditions.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Every fragment file of one layer directory (one `read_dir`, as the
/// product's catalog does; `<name>/SKILL.md` only if it exists).
fn scan(layer: Layer, dir: &Path, out: &mut Vec<(Layer, Form, PathBuf)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(ty) = entry.file_type() else { continue };
        let path = entry.path();
        if ty.is_dir() {
            let md = path.join("SKILL.md");
            if md.is_file() {
                out.push((layer, Form::SkillMd, md));
            }
            continue;
        }
        let form = match path.extension().and_then(|e| e.to_str()) {
            Some("yaml") => Form::Yaml,
            Some("yml") => Form::Yml,
            Some("toml") => Form::Toml,
            _ => continue,
        };
        out.push((layer, form, path));
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mut root, mut jobs) = (None, 2usize);
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-j" | "--jobs" => match it.next().and_then(|s| s.parse().ok()) {
                Some(j) => jobs = j,
                None => return usage(),
            },
            _ if root.is_none() => root = Some(PathBuf::from(a)),
            _ => return usage(),
        }
    }
    let Some(root) = root else {
        return usage();
    };
    let mut files = Vec::new();
    for layer in Layer::ALL {
        scan(layer, &root.join(layer.label()), &mut files);
    }
    let options = LoadOptions {
        body_field: Some("body".into()),
        ..LoadOptions::default()
    };
    let results = bernstein_skills::par::map(&files, jobs, |(layer, form, path)| {
        let Ok(text) = std::fs::read_to_string(path) else {
            return (0, false);
        };
        let len = text.len();
        (
            len,
            Fragment::from_str(text, *form, *layer, path, &options).is_ok(),
        )
    });
    let bytes: usize = results.iter().map(|r| r.0).sum();
    let failed = results.iter().filter(|r| !r.1).count();
    println!(
        "read-parse: {} file(s), {:.1} MiB, {failed} failed, {jobs} thread(s)",
        files.len(),
        bytes as f64 / (1024.0 * 1024.0)
    );
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: read-parse DIR [-j N]");
    ExitCode::from(2)
}
