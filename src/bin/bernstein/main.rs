//! The `bernstein` command line: a thin layer over the library. Each
//! subcommand lives in its own module with its arguments and a `run`.

// Doc comments on clap types are `--help` text, written for a terminal
// (`DIR/<name>.json`), not HTML.
#![allow(rustdoc::invalid_html_tags)]

mod cli;
mod explain;
mod export;
mod impact;
mod list;
mod new;
mod origins;
mod output;
mod schema;
mod show;
mod spec;
mod validate;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc instead of the system allocator: parsing builds many small
/// values, and with glibc's malloc `validate -j 2` took 1.4× as long (its
/// arenas also contend between the worker threads). Built without
/// transparent huge pages (`no_thp`): with them, the peak RSS of `export`
/// over 10,000 skills was 38 MiB instead of 16 MiB. See benches/README.md.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(1)
        }
    }
}
