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
use std::path::PathBuf;

use clap_complete::CompletionCandidate;

use bernstein_skills::Skills;
use bernstein_skills::fragment::DEFAULT_MAX_BYTES;

use crate::global::Global;

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

/// The words being completed (after `--`), or this run's arguments.
fn words() -> Vec<OsString> {
    let args: Vec<OsString> = std::env::args_os().collect();
    match args.iter().position(|a| a == "--") {
        Some(i) => args[i + 1..].to_vec(),
        None => args,
    }
}

/// The global options the words give, as far as they name places.
fn global(words: &[OsString]) -> Global {
    let mut g = Global {
        spec: None,
        layers_root: None,
        base: None,
        team: None,
        user: None,
        allow_hard_links: words.iter().any(|w| w == "--allow-hard-links"),
        max_fragment_bytes: DEFAULT_MAX_BYTES,
        color: crate::output::ColorChoice::Never,
    };
    let mut it = words.iter().map(|w| w.to_string_lossy().into_owned());
    while let Some(w) = it.next() {
        let (flag, value) = match w.split_once('=') {
            Some((f, v)) if f.starts_with("--") => (f.to_owned(), Some(v.to_owned())),
            _ => (w.clone(), None),
        };
        let slot = match flag.as_str() {
            "--spec" => &mut g.spec,
            "--layers-root" => &mut g.layers_root,
            "--base" => &mut g.base,
            "--team" => &mut g.team,
            "--user" => &mut g.user,
            _ => continue,
        };
        if let Some(v) = value.or_else(|| it.next()) {
            *slot = Some(PathBuf::from(v));
        }
    }
    g
}

/// Every skill name in the layers.
pub fn skill_names() -> Vec<CompletionCandidate> {
    global(&words())
        .layers_quiet()
        .names()
        .into_iter()
        .map(|(name, _)| CompletionCandidate::new(name))
        .collect()
}

/// The field paths of the skill `explain` names, for its FIELD_PATH.
pub fn field_paths() -> Vec<CompletionCandidate> {
    let words = words();
    let g = global(&words);
    // The first word after `explain` that is not an option is the skill.
    let Some(name) = words
        .iter()
        .map(|w| w.to_string_lossy())
        .skip_while(|w| w != "explain")
        .skip(1)
        .find(|w| !w.starts_with('-'))
    else {
        return Vec::new();
    };
    let Ok(spec) = g.load_spec() else {
        return Vec::new();
    };
    let skills = Skills::new(spec, g.layers_quiet(), g.max_fragment_bytes);
    let Ok(resolved) = skills.resolve(&name) else {
        return Vec::new();
    };
    bernstein_skills::output::explain::explain(skills.spec(), &resolved)
        .into_iter()
        .map(|row| CompletionCandidate::new(row.path))
        .collect()
}
