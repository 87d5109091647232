//! Shell completion that knows the layers: skill names, and the field paths
//! of a skill for `explain`, computed by the binary itself when the shell
//! asks (clap_complete's dynamic completion), so they follow the layers as
//! they change instead of being frozen in a script.
//!
//! The shell calls `BERNSTEIN_COMPLETE=<shell> bernstein -- <words>`; the
//! variable has a name of its own (not clap's default `COMPLETE`) so that a
//! `COMPLETE` set for another tool never turns a CI's `validate` into a
//! completion that exits 0. The layers are the ones the words name
//! (`--layers-root`, `--base`, `--team`, `--user`, `--spec`), else the
//! usual places; nothing is printed but the candidates.

use std::ffi::OsString;
use std::sync::OnceLock;

use clap::{ArgMatches, FromArgMatches};

use crate::global::GlobalArgs;
use clap_complete::CompletionCandidate;

use bernstein_skills::Skills;
use bernstein_skills::fragment::DEFAULT_MAX_BYTES;

/// The variable that asks for completions.
pub const VAR: &str = "BERNSTEIN_COMPLETE";

/// The script that makes `shell` ask `bernstein` for completions.
pub fn registration(shell: clap_complete::Shell) -> Vec<u8> {
    let name = shell.to_string();
    let mut buf = Vec::new();
    if let Some(completer) = clap_complete::env::Shells::builtins().completer(&name) {
        // Writing into memory cannot fail.
        let _ = completer.write_registration(VAR, "bernstein", "bernstein", "bernstein", &mut buf);
    }
    buf
}

/// The command line the completion is asked of, set by [`answer`]: the
/// binary's own command, so that the words are read as a run would read
/// them. Handed over at run time because the command's definition uses
/// this module.
static COMMAND: OnceLock<fn() -> clap::Command> = OnceLock::new();

/// Answers a completion request and exits, if this run is one;
/// `command` is the binary's command line.
pub fn answer(command: fn() -> clap::Command) {
    let _ = COMMAND.set(command);
    clap_complete::CompleteEnv::with_factory(command)
        .var(VAR)
        .complete();
}

/// The words being completed (after `--`), read as the command line would
/// read them, tolerating what is not typed yet (an option with no value,
/// a missing argument); `None` if even that fails.
fn matches() -> Option<ArgMatches> {
    let args: Vec<OsString> = std::env::args_os().collect();
    let words = match args.iter().position(|a| a == "--") {
        Some(i) => &args[i + 1..],
        None => &args[..],
    };
    COMMAND.get()?()
        .ignore_errors(true)
        .try_get_matches_from(words)
        .ok()
}

/// The global options of `matches` (a global option's value is seen at
/// every level), else the defaults.
fn global(matches: Option<&ArgMatches>) -> bernstein_skills::Context {
    matches
        .and_then(|m| GlobalArgs::from_arg_matches(m).ok())
        .unwrap_or(GlobalArgs {
            spec: None,
            layers_root: None,
            base: None,
            team: None,
            user: None,
            allow_hard_links: false,
            max_fragment_bytes: DEFAULT_MAX_BYTES,
            color: crate::output::ColorChoice::Never,
        })
        .context()
}

/// Every skill name in the layers.
pub fn skill_names() -> Vec<CompletionCandidate> {
    global(matches().as_ref())
        .layers_quiet()
        .names()
        .unwrap_or_default()
        .into_iter()
        .map(|(name, _)| CompletionCandidate::new(name))
        .collect()
}

/// The field paths of the skill `explain` names, for its FIELD_PATH.
pub fn field_paths() -> Vec<CompletionCandidate> {
    let matches = matches();
    let g = global(matches.as_ref());
    let Some(name) = matches
        .as_ref()
        .and_then(|m| m.subcommand_matches("skills"))
        .and_then(|m| m.subcommand_matches("explain"))
        .and_then(|m| m.get_one::<String>("name"))
    else {
        return Vec::new();
    };
    let Ok(spec) = g.load_spec() else {
        return Vec::new();
    };
    let skills = Skills::new(spec, g.layers_quiet(), g.options().max_fragment_bytes);
    let Ok(resolved) = skills.resolve(name) else {
        return Vec::new();
    };
    bernstein_skills::output::explain::explain(skills.spec(), &resolved)
        .into_iter()
        .map(|row| CompletionCandidate::new(row.path))
        .collect()
}
