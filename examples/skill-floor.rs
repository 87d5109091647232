//! The floor for `export --format skill`: for every skill of a layer tree,
//! read and parse its fragments with the same parsers, list its files with
//! the same code ([`bernstein_skills::files`]), read them with the same
//! confined reader, and write the highest layer's fragment text as
//! `NAME/SKILL.md` plus the files through the same writer (`OutDir`) into a
//! new directory — and nothing else: no schema, no merge, no rendering.
//!
//! ```sh
//! cargo run --release --example skill-floor -- DIR OUT [-j N]
//! ```
//!
//! `-j` defaults to 2. Prints one line: skills, files, bytes written.

use std::path::PathBuf;
use std::process::ExitCode;

use bernstein_skills::Fragment;
use bernstein_skills::export::{OutDir, OutFile};
use bernstein_skills::fragment::LoadOptions;
use bernstein_skills::source::Layers;
use bernstein_skills::source::files::FileLimits;

/// The same allocator as the `bernstein` binary.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut jobs = 2usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "-j" | "--jobs" => match it.next().and_then(|s| s.parse().ok()) {
                Some(j) => jobs = j,
                None => return usage(),
            },
            _ => positional.push(PathBuf::from(a)),
        }
    }
    let [root, out] = positional.as_slice() else {
        return usage();
    };
    let layers = Layers::from_root(root);
    let catalog = match layers.catalog() {
        Ok(catalog) => catalog,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = LoadOptions {
        body_field: Some("body".into()),
        ..LoadOptions::default()
    };
    let limits = FileLimits::default();
    let out_dir = match OutDir::open(out, None) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("skill-floor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let results = bernstein_skills::par::map(&catalog, jobs, |(name, located)| {
        let mut top = Vec::new();
        for l in located {
            let fragment = Fragment::load(l, &options).ok()?;
            top = fragment.source().as_bytes().to_vec();
        }
        let mut files = vec![OutFile::new(format!("{name}/SKILL.md"), top)];
        for f in bernstein_skills::source::files::collect(located, &limits).ok()? {
            let bytes =
                bernstein_skills::source::read_in_root(&f.root, &f.source.path, f.source.size)
                    .ok()?;
            files.push(OutFile {
                rel: format!("{name}/{}", f.rel),
                bytes,
                executable: f.source.executable,
            });
        }
        let bytes: usize = files.iter().map(|f| f.bytes.len()).sum();
        let n = files.len();
        for f in &files {
            out_dir.write(&f.rel, &f.bytes, f.executable, false).ok()?;
        }
        Some((n, bytes))
    });
    if results.iter().any(Option::is_none) {
        eprintln!("skill-floor: a skill failed");
        return ExitCode::FAILURE;
    }
    if let Err(e) = out_dir.finish() {
        eprintln!("skill-floor: {e}");
        return ExitCode::FAILURE;
    }
    let files: usize = results.iter().flatten().map(|r| r.0).sum();
    let bytes: usize = results.iter().flatten().map(|r| r.1).sum();
    println!(
        "skill-floor: {} skill(s), {files} file(s), {:.1} MiB, {jobs} thread(s)",
        catalog.len(),
        bytes as f64 / (1024.0 * 1024.0)
    );
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: skill-floor DIR OUT [-j N]");
    ExitCode::from(2)
}
