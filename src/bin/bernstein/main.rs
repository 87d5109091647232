//! The `bernstein` command line: a thin layer over the library. Each
//! subcommand lives in its own module with its arguments and a `run`.

// Doc comments on clap types are `--help` text, written for a terminal
// (`DIR/<name>.json`), not HTML.
#![allow(rustdoc::invalid_html_tags)]

mod alloc;
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
mod targets;
mod validate;

use std::process::ExitCode;

use clap::Parser;

/// The C library's allocator, or mimalloc for bulk work (see [`alloc`]).
#[global_allocator]
static ALLOC: alloc::Alloc = alloc::Alloc;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    if args.command.is_bulk() {
        alloc::bulk();
    }
    match cli::run(args) {
        Ok(code) => code,
        Err(e) => {
            output::print_error(&e);
            ExitCode::from(1)
        }
    }
}
