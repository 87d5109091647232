//! The file-system floor for `export --out`: write `N` files of `BYTES` bytes
//! each (default 4500, the mean exported manifest of the `gen-tree` skills)
//! through the very code export writes with ([`OutDir`]: into a new
//! directory, files created in a staging directory renamed into place at
//! the end; into an existing one, each file written to a temporary file
//! and renamed over the old one), on the same thread pool — with nothing
//! to compute.
//!
//! ```sh
//! cargo run --release --example write-floor -- OUT N [BYTES] [-j N]
//! ```
//!
//! `OUT` is created; `-j` defaults to 2. Prints one line.

use std::path::PathBuf;
use std::process::ExitCode;

use bernstein_skills::export::OutDir;

/// The same allocator as the `bernstein` binary, so the floor is measured
/// under the same conditions.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut jobs = 2usize;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "-j" || a == "--jobs" {
            match it.next().and_then(|s| s.parse().ok()) {
                Some(j) => jobs = j,
                None => return usage(),
            }
        } else {
            positional.push(a.as_str());
        }
    }
    let (out, n, bytes) = match positional.as_slice() {
        [out, n] => (out, n.parse().ok(), Some(4500)),
        [out, n, b] => (out, n.parse().ok(), b.parse().ok()),
        _ => return usage(),
    };
    let (Some(n), Some(bytes)) = (n, bytes) else {
        return usage();
    };
    let out = PathBuf::from(out);
    let out_dir = match OutDir::open(&out, None) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("write-floor: {e}");
            return ExitCode::FAILURE;
        }
    };
    let text = "x".repeat(bytes);
    let names: Vec<String> = (0..n).map(|i: usize| format!("skill-{i:05}")).collect();
    let mut failed = bernstein_skills::par::map(&names, jobs, |name| {
        out_dir
            .write(&format!("{name}.json"), text.as_bytes(), false, false)
            .is_err()
    })
    .into_iter()
    .filter(|f| *f)
    .count();
    if out_dir.finish().is_err() {
        failed = n;
    }
    println!("write-floor: {n} file(s) of {bytes} bytes, {failed} failed, {jobs} thread(s)");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn usage() -> ExitCode {
    eprintln!("usage: write-floor OUT N [BYTES] [-j N]");
    ExitCode::from(2)
}
