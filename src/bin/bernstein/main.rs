//! The `bernstein` command line: a thin layer over the library. Each
//! subcommand lives in its own module with its arguments and a `run`.

// Doc comments on clap types are `--help` text, written for a terminal
// (`DIR/<name>.json`), not HTML.
#![allow(rustdoc::invalid_html_tags)]
#![forbid(unsafe_code)]

mod audit;
mod cli;
mod complete;
mod explain;
mod export;
mod global;
mod impact;
mod list;
mod new;
mod origins;
mod output;
mod schema;
mod show;
mod sources;
mod spec;
mod sync;
mod targets;
mod trust;
mod validate;

use std::process::ExitCode;

use clap::Parser;

/// mimalloc, chosen at build time for every command: parsing builds many
/// small values, and it runs fewer instructions than the C library's
/// allocator for bulk commands and `show` alike (benches/README.md).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    // Answers a completion request and exits, if this run is one.
    complete::answer(<cli::Cli as clap::CommandFactory>::command);
    let args = match cli::Cli::try_parse() {
        Ok(args) => args,
        Err(e) => return cli::usage_error(e),
    };
    output::set_json(args.json());
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(1)
        }
    }
}
