//! Deterministic adversarial inputs for `benches/adversarial`: the worst
//! cases found for "no quadratic or unbounded work", each within the default
//! 4 MiB fragment cap but `translated-big`, twice it: a skill's files may
//! add up to 64 MiB, and that one must be refused by the cap before it is
//! read.
//!
//! ```sh
//! cargo run --release --example gen-adversarial -- DIR [CASE ...]
//! ```
//!
//! Writes one directory per case under `DIR` (the cases of [`CASES`], or
//! only the `CASE`s named, which may include those of [`KNOWN_MISSES`]),
//! each holding a layer tree `layers/{base,team,user}`, an empty
//! `manifests/` for `export --check`, and for the spec case a `spec.yaml`.
//! The skill is always named `s`. Prints one line per case: its name, what
//! it holds and the size of the file that makes it adversarial.
//!
//! | case | what |
//! |---|---|
//! | `unknown-yaml` | as many unknown top-level fields as fit in 4 MiB of YAML (~391k) |
//! | `unknown-toml` | the same in TOML |
//! | `no-effect` | 20,000 `metadata` keys, base and team setting identical values |
//! | `keywords` | 40,000 trigger keywords |
//! | `alias-expansion` | a 1 MiB string and a list of 10,000 aliases to it |
//! | `billion-laughs` | three levels of thousand-fold aliases: a billion strings from 15 KB |
//! | `spec-keys` | a ~4 MiB merge spec with ~600k unknown top-level keys |
//! | `deep-flow` | ~4 MiB of nested flow sequences |
//! | `plain-maps` | ~4 MiB of one-entry mappings, no alias: ~524k of them (refused past one per 32 bytes of the cap) |
//! | `long-key` | a 256 KiB key above 20,000 values: refused, its paths add up to over 4× the cap |
//! | `translated-big` | a team `agents/openai.yaml` (a file Codex's target merges `disable-model-invocation` into) of 8 MiB of one-entry mappings: twice the cap |
//! | `translated-maps` | the same file within the cap: ~524k one-entry mappings (refused past one per 32 bytes of the cap) |
//! | `dotted-keys` | as many `metadata` keys holding a dot (`k.0: v`) as fit in 4 MiB (~307k), none colliding when flattened (a known miss: `explain`) |

use std::fmt::Write as _;
use std::path::Path;
use std::process::ExitCode;

/// The default fragment cap; every file stays below it.
const CAP: usize = 4 * 1024 * 1024;

/// Every case, in the order they are written and benchmarked.
pub const CASES: &[&str] = &[
    "unknown-yaml",
    "unknown-toml",
    "no-effect",
    "keywords",
    "alias-expansion",
    "billion-laughs",
    "spec-keys",
    "deep-flow",
    "plain-maps",
    "translated-big",
    "translated-maps",
];

/// Cases the targets are known to miss, not written unless named (see
/// `benches/README.md`, "Adversarial inputs").
pub const KNOWN_MISSES: &[&str] = &["dotted-keys"];

/// As many lines made by `line(i)` as fit in `CAP - reserve` bytes, and
/// how many that is.
fn fill(reserve: usize, mut line: impl FnMut(usize, &mut String)) -> (String, usize) {
    let mut out = String::new();
    let mut scratch = String::new();
    let mut i = 0;
    loop {
        scratch.clear();
        line(i, &mut scratch);
        if out.len() + scratch.len() + reserve > CAP {
            return (out, i);
        }
        out.push_str(&scratch);
        i += 1;
    }
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().expect("a file in a directory"))?;
    std::fs::write(path, text)
}

/// Writes case `name` into `dir`; returns its one-line description.
fn case(name: &str, dir: &Path) -> std::io::Result<String> {
    let layers = dir.join("layers");
    for l in ["base", "team", "user"] {
        std::fs::create_dir_all(layers.join(l))?;
    }
    std::fs::create_dir_all(dir.join("manifests"))?;
    let base = layers.join("base");
    let (file, text, what) = match name {
        "unknown-yaml" => {
            let (text, n) = fill(0, |i, s| {
                let _ = writeln!(s, "u{i}: 0");
            });
            (base.join("s.yaml"), text, format!("{n} unknown fields"))
        }
        "unknown-toml" => {
            let (text, n) = fill(0, |i, s| {
                let _ = writeln!(s, "u{i} = 0");
            });
            (base.join("s.toml"), text, format!("{n} unknown fields"))
        }
        "no-effect" => {
            let mut text = String::from("description: d\nmetadata:\n");
            for i in 0..20_000 {
                let _ = writeln!(text, "  k{i}: v");
            }
            write(&layers.join("team/s.yaml"), &text)?;
            (
                base.join("s.yaml"),
                text,
                "20000 metadata keys, team = base".into(),
            )
        }
        "keywords" => {
            let mut text = String::from("description: d\ntrigger_keywords:\n");
            for i in 0..40_000 {
                let _ = writeln!(text, "  - kw{i}");
            }
            (base.join("s.yaml"), text, "40000 trigger keywords".into())
        }
        "alias-expansion" => {
            let mut text = String::from("metadata:\n  s: &s \"");
            text.push_str(&"x".repeat(1 << 20));
            text.push_str("\"\n  l: [");
            text.push_str(&vec!["*s"; 10_000].join(", "));
            text.push_str("]\n");
            (
                base.join("s.yaml"),
                text,
                "1 MiB string, 10000 aliases to it".into(),
            )
        }
        "billion-laughs" => {
            // Three levels of thousand-fold aliases: a billion strings.
            let mut text = format!("metadata:\n  a0: &a0 [{}]\n", vec!["lol"; 1000].join(", "));
            for i in 1..3 {
                let refs = vec![format!("*a{}", i - 1); 1000].join(", ");
                let _ = writeln!(text, "  a{i}: &a{i} [{refs}]");
            }
            (
                base.join("s.yaml"),
                text,
                "3 levels of 1000-fold aliases (10^9 strings)".into(),
            )
        }
        "spec-keys" => {
            let head = "version: 1\nname_field: name\nfields:\n  name: {strategy: OVERRIDE, type: string}\n";
            let (keys, n) = fill(head.len(), |i, s| {
                let _ = writeln!(s, "k{i:x}: 0");
            });
            write(&base.join("s.yaml"), "name: s\n")?;
            (
                dir.join("spec.yaml"),
                format!("{head}{keys}"),
                format!("spec with {n} unknown top-level keys"),
            )
        }
        "deep-flow" => {
            let head = "metadata:\n  x: ";
            let depth = (CAP - head.len() - 1) / 2;
            let text = format!("{head}{}{}\n", "[".repeat(depth), "]".repeat(depth));
            (
                base.join("s.yaml"),
                text,
                format!("flow sequences nested {depth} deep"),
            )
        }
        "plain-maps" => {
            let head = "metadata:\n  maps: [";
            let (items, n) = fill(head.len() + 3, |_, s| s.push_str("{a: 1}, "));
            (
                base.join("s.yaml"),
                format!("{head}{}]\n", items.trim_end_matches(", ")),
                format!("{n} one-entry mappings"),
            )
        }
        "translated-big" | "translated-maps" => {
            // A skill that asks not to be invoked implicitly, which Codex
            // reads from agents/openai.yaml: export merges the setting into
            // the file a layer provides there, so it parses that file.
            write(
                &base.join("s/SKILL.md"),
                "---\nname: s\ndescription: d\ndisable-model-invocation: true\n---\nbody\n",
            )?;
            let head = "interface:\n  maps: [";
            let size = if name == "translated-big" {
                2 * CAP
            } else {
                CAP
            };
            let n = (size - head.len() - 2) / 8;
            let mut text = String::with_capacity(size);
            text.push_str(head);
            for i in 0..n {
                text.push_str(if i == 0 { "{a: 1}" } else { ", {a: 1}" });
            }
            text.push_str("]\n");
            (
                layers.join("team/s/agents/openai.yaml"),
                text,
                format!("agents/openai.yaml with {n} one-entry mappings"),
            )
        }
        "dotted-keys" => {
            // Every key may collide with another when the field is
            // flattened, so each is looked at (none does).
            let head = "description: d\nmetadata:\n";
            let (keys, n) = fill(head.len(), |i, s| {
                let _ = writeln!(s, "  k.{i}: v");
            });
            (
                base.join("s.yaml"),
                format!("{head}{keys}"),
                format!("{n} metadata keys holding a dot"),
            )
        }
        "long-key" => {
            let mut text = format!("metadata:\n  ? {}\n  :\n", "k".repeat(256 * 1024));
            for i in 0..20_000 {
                let _ = writeln!(text, "    v{i}: 1");
            }
            (
                base.join("s.yaml"),
                text,
                "a 256 KiB key above 20000 values".into(),
            )
        }
        other => {
            return Err(std::io::Error::other(format!(
                "unknown case {other:?} (cases: {})",
                CASES
                    .iter()
                    .chain(KNOWN_MISSES)
                    .copied()
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    };
    write(&file, &text)?;
    Ok(format!("{name}: {what}; {} bytes", text.len()))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((dir, names)) = args.split_first() else {
        eprintln!(
            "usage: gen-adversarial DIR [CASE ...]\ncases: {}",
            CASES.join(", ")
        );
        return ExitCode::from(2);
    };
    let names: Vec<&str> = if names.is_empty() {
        CASES.to_vec()
    } else {
        names.iter().map(String::as_str).collect()
    };
    for name in names {
        match case(name, &Path::new(dir).join(name)) {
            Ok(line) => println!("{line}"),
            Err(e) => {
                eprintln!("gen-adversarial: {name}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
