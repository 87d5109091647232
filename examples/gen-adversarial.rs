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
//! | `section-hashes` | a base body and a team body merged by section, each of 65,535 `#` lines (empty headings): the sections cap together |
//! | `section-hashes-4mib` | the same, each ~4 MiB of `#` lines (2 million sections): refused for the sections cap |
//! | `section-hashes-20k` | the report's case: a 20 KB team body of 10,000 `#` lines merged by section |
//! | `section-before` | the report's case: a base body of 100,000 headings and 6,000 team `before` directives |
//! | `section-anchors` | a base body of 100,000 headings; a team body of 31,071 `before` / `after` directives naming them |
//! | `section-duplicates` | a base body of one heading 100,000 times; a team body deleting the first occurrences and inserting before and after the n-th ones (`"H" n`) |
//! | `section-stale` | a base body of 100,000 headings; a team body of 31,071 deletes, replaces and anchors naming headings it lacks |
//! | `section-one-anchor` | a team body of 131,069 insertions before, after, at the start and at the end of one section |
//! | `section-levels` | 100,000 headings of every level, `#` to `######`, and fences; the team replaces 31,071 of them |
//! | `keyword-deletes` | the report's case: 50,000 trigger keywords and 25,000 deletes |
//! | `append-deletes` | 200,000 trigger keywords and 60,000 `{$patch: delete, value: …}` entries naming them |
//! | `keyed-deletes` | 60,000 `references` and a `{name: …, $patch: delete}` entry for each |
//! | `deep-deletes` | 100,000 `metadata` keys and 60,000 `{$patch: delete}` values |
//! | `record-skills` | a committed export record (`manifests/.bernstein-skills.json`, JSON format) as large as the record cap allows, minified, listing one manifest for each of as many skills as fit |
//! | `record-files` | the same, skill format: skills `s0`, `s1`, … (which the base layer provides, each with an empty directory in `manifests/`) claiming 2,000 files each, the most a record lists for one skill |
//!
//! The record cases fill `RECORD_BYTES` bytes (an environment variable;
//! default the record cap, 64 MiB), to measure a build with another cap.
//! | `translated-big` | a team `agents/openai.yaml` (a file Codex's target merges `disable-model-invocation` into) of 8 MiB of one-entry mappings: twice the cap |
//! | `translated-maps` | the same file within the cap: ~524k one-entry mappings (refused past one per 32 bytes of the cap) |
//! | `dotted-keys` | as many `metadata` keys holding a dot (`k.0: v`) as fit in 4 MiB (~307k), none colliding when flattened (a known miss: `explain`) |
//!
//! The cases of the files beside the layers (issue 44, item 7), each also
//! written at its ordinary size into `DIR/CASE/floor/`, which
//! `benches/adversarial` runs the same commands on:
//!
//! | case | what |
//! |---|---|
//! | `lock-comments` | `layers/sources.lock`: a good lock padded with `#` comment lines (`#` alone, 16 million of them) to the lock's cap (32 MiB) |
//! | `lock-comments-64mib` | the report's lock: the same padded to 64 MiB |
//! | `lock-files` | a lock in the tool's own form listing as many files as its entry cap allows (199,999 and the source) |
//! | `lock-files-64mib` | the report's lock: 64 MiB of file lines in the tool's own form (~768k files) |
//! | `lock-entries` | the lock's cap (32 MiB) of file lines: refused at the line past the entry cap |
//! | `lock-sources` | `sources.toml` at its cap (1 MiB) of sources, each locked |
//! | `lock-skills` | a source of 199,999 one-file skills, beside a base layer of 2,000 skills |
//! | `sources-allow` | `sources.toml` at its cap: ~8k sources and an `[allow]` of ~30k hosts, the one they name last |
//! | `sources-prefer` | `sources.toml` at its cap: ~8k sources and ~31k `[prefer]` entries naming the last |
//! | `import-groups` | a `skills-lock.json` at its cap (4 MiB) of skills of one repository, each in its own directory: a source each (`add --import`) |
//! | `schema-values` | `layers/skill-fragment.schema.json` (which `new` reads to tell whether it wrote it) at the 16 MiB it reads: 8 million `0` values |
//! | `trust-store` | a project (`project/`) and its person's trust file (`state/…/trusted.json`) at its cap (16 MiB) of short file names with empty digests |
//! | `trust-digests` | the same with every digest 64 hexadecimal digits, as the trust file's reader requires |
//! | `marketplace-paths` | an upstream repository (`upstream/`, which `benches/adversarial` commits) whose `.claude-plugin/marketplace.json` has a plugin listing 10,000 paths, one a line (`add --plugin many`) |
//! | `marketplace-plugins` | an upstream of 1,000 skills in `skills/` whose marketplace file declares as many plugins as fit in its 1 MiB, each taking them all (`add`, which describes every plugin) |

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
    "section-hashes",
    "section-hashes-4mib",
    "section-hashes-20k",
    "section-before",
    "section-anchors",
    "section-duplicates",
    "section-stale",
    "section-one-anchor",
    "section-levels",
    "keyword-deletes",
    "append-deletes",
    "keyed-deletes",
    "deep-deletes",
    "record-skills",
    "record-files",
    "translated-big",
    "translated-maps",
    "lock-comments",
    "lock-comments-64mib",
    "lock-files",
    "lock-files-64mib",
    "lock-entries",
    "lock-sources",
    "lock-skills",
    "sources-allow",
    "sources-prefer",
    "import-groups",
    "schema-values",
    "trust-store",
    "trust-digests",
    "marketplace-paths",
    "marketplace-plugins",
];

/// Cases the targets are known to miss, not written unless named (see
/// `benches/README.md`, "Adversarial inputs").
pub const KNOWN_MISSES: &[&str] = &["dotted-keys"];

/// The most sections and changes a value merged by section may be merged
/// from under the default cap (one per 32 bytes of it).
const SECTIONS: usize = CAP / 32;

/// `n` sections `## h0` ... `## h{n-1}`.
fn headings(n: usize) -> String {
    let mut out = String::new();
    for i in 0..n {
        let _ = writeln!(out, "## h{i}");
    }
    out
}

/// The frontmatter of a base `SKILL.md`.
const FM: &str = "---\ndescription: d\n---\n";

/// The line that asks for a merge by section.
const MARKER: &str = "<!-- $patch: sections -->\n";

/// The `i`-th of a sequence that visits `0..n` in no simple order (a
/// multiplicative step coprime with most `n`), so that anchors and deletes
/// are not met in the order of the body they name.
fn spread(i: usize, n: usize) -> usize {
    (i.wrapping_mul(7_919) + i / n) % n
}

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

/// The record cap (`MAX_RECORD_BYTES` in `src/export/record.rs`).
const RECORD_CAP: usize = 64 << 20;

/// The most files a record lists for one skill (`MAX_SKILL_FILES` in
/// `src/export/record.rs`).
const SKILL_FILES: usize = 2_000;

/// A minified export record of `RECORD_BYTES` bytes at most (default the
/// cap): for the skill format, skills `s<k>` claiming `s<k>/f<i>`,
/// [`SKILL_FILES`] each; for JSON, skills `s<i>` claiming `s<i>.json`.
/// Returns it, how many files it lists and, for the skill format, how many
/// skills.
fn record(skill: bool) -> (String, usize, usize) {
    let cap = std::env::var("RECORD_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(RECORD_CAP);
    let sha = "0".repeat(64);
    let tail = format!(",\"spec_sha256\":\"{sha}\",\"tool\":\"x\",\"version\":1}}\n");
    let mut out = String::from(if skill {
        "{\"format\":\"skill\",\"skills\":{"
    } else {
        "{\"format\":\"json\",\"skills\":{"
    });
    let mut entry = String::new();
    let mut n = 0;
    loop {
        entry.clear();
        let (k, i) = (n / SKILL_FILES, n % SKILL_FILES);
        if skill {
            // A new skill opens after the last one closes.
            match (n, i) {
                (0, _) => {}
                (_, 0) => entry.push_str("}},"),
                _ => entry.push(','),
            }
            if i == 0 {
                let _ = write!(entry, "\"s{k}\":{{\"files\":{{");
            }
            let _ = write!(entry, "\"s{k}/f{i:x}\":{{\"sha256\":\"{sha}\",\"size\":0}}");
        } else {
            if n > 0 {
                entry.push(',');
            }
            let _ = write!(
                entry,
                "\"s{n:x}\":{{\"files\":{{\"s{n:x}.json\":{{\"sha256\":\"{sha}\",\"size\":0}}}}}}"
            );
        }
        if out.len() + entry.len() + "}}}".len() + tail.len() > cap {
            break;
        }
        out.push_str(&entry);
        n += 1;
    }
    out.push_str(if skill && n > 0 { "}}}" } else { "}" });
    out.push_str(&tail);
    let skills = if skill { n.div_ceil(SKILL_FILES) } else { 0 };
    (out, n, skills)
}

/// The lock's cap (`MAX_BYTES` in `src/upstream/lock.rs`).
const LOCK_CAP: usize = 32 << 20;

/// The most entries a lock holds (`MAX_ENTRIES` there).
const LOCK_ENTRIES: usize = 200_000;

/// The sources file's cap (`MAX_BYTES` in `src/upstream/sources.rs`).
const SOURCES_CAP: usize = 1 << 20;

/// A file's digest as a lock writes it.
fn digest() -> String {
    format!("sha256:{}", "0".repeat(64))
}

/// A source's table in `sources.toml`.
fn source_entry(name: &str) -> String {
    format!("[[source]]\nname = \"{name}\"\nurl = \"/nonexistent/{name}\"\n")
}

/// A source's tables in `sources.lock`, up to its files.
fn lock_entry(name: &str) -> String {
    format!(
        "\n[source.{name}]\nurl = \"/nonexistent/{name}\"\ncommit = \"{}\"\n\n[source.{name}.files]\n",
        "0".repeat(40)
    )
}

/// The head of a lock as the tool writes it.
const LOCK_HEAD: &str = "# Written by `bernstein skills add` and `bernstein skills update --yes`; do not edit.\n# What each source of sources.toml resolved to: the commit and the SHA-256 of every file taken.\nversion = 1\n";

/// Sources named `s0`, `s1`, ... until they fill half the sources file's
/// cap (one alone for the floor): the text and how many.
fn sources_to_half(floor: bool) -> (String, usize) {
    let mut text = String::new();
    let half = if floor { 0 } else { SOURCES_CAP / 2 };
    let mut n = 0;
    while n == 0 || text.len() < half {
        let _ = write!(
            text,
            "[[source]]\nname = \"s{n}\"\nurl = \"https://z.example/acme/s{n}\"\n"
        );
        n += 1;
    }
    (text, n)
}

/// `n` lines made by `line(i)`, or as many as fit in `cap` bytes with
/// `text` before them, appended to `text`; returns how many.
fn append_lines(
    text: &mut String,
    cap: usize,
    n: usize,
    mut line: impl FnMut(usize, &mut String),
) -> usize {
    let mut scratch = String::new();
    for i in 0..n {
        scratch.clear();
        line(i, &mut scratch);
        if text.len() + scratch.len() > cap {
            return i;
        }
        text.push_str(&scratch);
    }
    n
}

/// A project-file case: writes it, and its floor (the same at its
/// ordinary size) into `dir/floor`; `None` for a case of the layers.
fn project_case(name: &str, dir: &Path) -> Option<std::io::Result<String>> {
    let what = match name {
        "lock-comments"
        | "lock-comments-64mib"
        | "lock-files"
        | "lock-files-64mib"
        | "lock-entries"
        | "lock-sources"
        | "lock-skills"
        | "sources-allow"
        | "sources-prefer"
        | "import-groups"
        | "schema-values"
        | "trust-store"
        | "trust-digests"
        | "marketplace-paths"
        | "marketplace-plugins" => project_files(name, dir, false).and_then(|what| {
            project_files(name, &dir.join("floor"), true)?;
            Ok(what)
        }),
        _ => return None,
    };
    Some(what.map(|what| format!("{name}: {what}")))
}

/// Writes case `name` into `dir` (at its ordinary size when `floor`);
/// returns what it holds.
fn project_files(name: &str, dir: &Path, floor: bool) -> std::io::Result<String> {
    let layers = dir.join("layers");
    for l in ["base", "team", "user"] {
        std::fs::create_dir_all(layers.join(l))?;
    }
    std::fs::create_dir_all(dir.join("manifests"))?;
    write(&layers.join("base/s.yaml"), "description: d\n")?;
    let one_source = |layers: &Path| -> std::io::Result<String> {
        write(&layers.join("sources.toml"), &source_entry("acme"))?;
        let mut lock = format!("{LOCK_HEAD}{}", lock_entry("acme"));
        let _ = writeln!(lock, "\"s/SKILL.md\" = \"{}\"", digest());
        Ok(lock)
    };
    let d = digest();
    let (file, text, what) = match name {
        "lock-comments" | "lock-comments-64mib" => {
            let mut lock = one_source(&layers)?;
            let cap = if name == "lock-comments" {
                LOCK_CAP
            } else {
                64 << 20
            };
            let n = if floor { 0 } else { usize::MAX };
            // The shortest comment line: the most lines for the bytes.
            let n = append_lines(&mut lock, cap, n, |_, s| s.push_str("#\n"));
            (
                layers.join("sources.lock"),
                lock,
                format!("a lock padded with {n} comment lines"),
            )
        }
        "lock-files" | "lock-files-64mib" | "lock-entries" => {
            write(&layers.join("sources.toml"), &source_entry("acme"))?;
            let mut lock = format!("{LOCK_HEAD}{}", lock_entry("acme"));
            let (cap, n) = match (name, floor) {
                (_, true) => (LOCK_CAP, 1),
                ("lock-files", _) => (LOCK_CAP, LOCK_ENTRIES - 1),
                ("lock-entries", _) => (LOCK_CAP, usize::MAX),
                _ => (64 << 20, usize::MAX),
            };
            // Names in the order a lock sorts them.
            let n = append_lines(&mut lock, cap, n, |i, s| {
                let _ = writeln!(s, "\"s{:04}/f{:04}\" = \"{d}\"", i / 1000, i % 1000);
            });
            (
                layers.join("sources.lock"),
                lock,
                format!("a lock of {n} files"),
            )
        }
        "lock-sources" => {
            let mut sources = String::new();
            let n = if floor { 1 } else { usize::MAX };
            let n = append_lines(&mut sources, SOURCES_CAP, n, |i, s| {
                s.push_str(&source_entry(&format!("s{i:06}")));
            });
            write(&layers.join("sources.toml"), &sources)?;
            let mut lock = LOCK_HEAD.to_owned();
            for i in 0..n {
                lock.push_str(&lock_entry(&format!("s{i:06}")));
                let _ = writeln!(lock, "\"k{i:06}/SKILL.md\" = \"{d}\"");
            }
            (
                layers.join("sources.lock"),
                lock,
                format!("{n} sources, each locked"),
            )
        }
        "lock-skills" => {
            write(&layers.join("sources.toml"), &source_entry("acme"))?;
            let locals = if floor { 1 } else { 2_000 };
            for i in 0..locals {
                write(
                    &layers.join(format!("base/l{i:04}.yaml")),
                    "description: d\n",
                )?;
            }
            let mut lock = format!("{LOCK_HEAD}{}", lock_entry("acme"));
            let n = if floor { 1 } else { LOCK_ENTRIES - 1 };
            for i in 0..n {
                let _ = writeln!(lock, "\"k{i:06}/SKILL.md\" = \"{d}\"");
            }
            (
                layers.join("sources.lock"),
                lock,
                format!("{n} locked skills, {locals} local ones"),
            )
        }
        "sources-allow" => {
            let (mut text, n) = sources_to_half(floor);
            text.push_str("[allow]\nowners = [\"acme\"]\nhosts = [");
            let m = if floor { 0 } else { usize::MAX };
            let m = append_lines(&mut text, SOURCES_CAP - 16, m, |i, s| {
                let _ = write!(s, "\"h{i}.example\", ");
            });
            text.push_str("\"z.example\"]\n");
            (
                layers.join("sources.toml"),
                text,
                format!("{n} sources, {m} allowed hosts before theirs"),
            )
        }
        "sources-prefer" => {
            let (mut text, n) = sources_to_half(floor);
            text.push_str("[prefer]\n");
            let m = if floor { 1 } else { usize::MAX };
            let m = append_lines(&mut text, SOURCES_CAP, m, |i, s| {
                let _ = writeln!(s, "p{i} = \"s{}\"", n - 1);
            });
            (
                layers.join("sources.toml"),
                text,
                format!("{n} sources, {m} prefer entries naming the last"),
            )
        }
        "import-groups" => {
            let mut text = String::from("{\"version\":1,\"skills\":{");
            let n = if floor { 1 } else { usize::MAX };
            let n = append_lines(&mut text, CAP - 2, n, |i, s| {
                let _ = write!(
                    s,
                    "{}\"k{i}\":{{\"source\":\"https://example.invalid/acme/r\",\"sourceType\":\"git\",\"skillPath\":\"p{i}/k{i}/SKILL.md\"}}",
                    if i == 0 { "" } else { "," }
                );
            });
            text.push_str("}}");
            (
                dir.join("skills-lock.json"),
                text,
                format!("{n} skills in as many directories of one repository"),
            )
        }
        "schema-values" => {
            let text = if floor {
                "{}".to_owned()
            } else {
                let n = ((16 << 20) - 2) / 2;
                let mut t = String::with_capacity(16 << 20);
                t.push('[');
                for i in 0..n {
                    t.push_str(if i == 0 { "0" } else { ",0" });
                }
                t.push(']');
                t
            };
            (
                layers.join("skill-fragment.schema.json"),
                text,
                "a schema file of small values".into(),
            )
        }
        "trust-store" | "trust-digests" => {
            use std::os::unix::fs::PermissionsExt;
            let project = dir.join("project");
            std::fs::create_dir_all(project.join(".git"))?;
            write(
                &project.join(".bernstein/skills/s.yaml"),
                "description: d\n",
            )?;
            let state = dir.join("state/bernstein/skills");
            std::fs::create_dir_all(&state)?;
            for d in [dir.join("state/bernstein"), state.clone()] {
                std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700))?;
            }
            let mut text = String::from("{\"version\":1,\"projects\":{\"/elsewhere\":{\"files\":{");
            let n = if floor { 1 } else { usize::MAX };
            // Empty digests, or what a digest must be.
            let value = if name == "trust-store" {
                String::new()
            } else {
                "0".repeat(64)
            };
            let n = append_lines(&mut text, (16 << 20) - 4, n, |i, s| {
                let _ = write!(s, "{}\"{i:x}\":\"{value}\"", if i == 0 { "" } else { "," });
            });
            text.push_str("}}}}");
            let file = state.join("trusted.json");
            write(&file, &text)?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600))?;
            return Ok(format!("a trust file of {n} files; {} bytes", text.len()));
        }
        "marketplace-paths" | "marketplace-plugins" => {
            let up = dir.join("upstream");
            let skill = |name: &str| format!("---\nname: {name}\ndescription: d\n---\nBody.\n");
            let mut text = String::from("{\"name\":\"m\",\"plugins\":[");
            let what = if name == "marketplace-paths" {
                write(&up.join("skills/s0/SKILL.md"), &skill("s0"))?;
                // Paths that name no skill: every one is located before the
                // first is looked for in the tree.
                let n = if floor { 1 } else { 10_000 };
                text.push_str("{\"name\":\"many\",\"skills\":[\n");
                for i in 0..n {
                    let _ = write!(
                        text,
                        "{}\"./skills/{}{i}\"",
                        if i == 0 { "" } else { ",\n" },
                        "x".repeat(80)
                    );
                }
                text.push_str("]}]}");
                format!("a plugin listing {n} paths")
            } else {
                for i in 0..1_000 {
                    write(
                        &up.join(format!("skills/s{i:04}/SKILL.md")),
                        &skill(&format!("s{i:04}")),
                    )?;
                }
                let n = if floor { 1 } else { usize::MAX };
                let n = append_lines(&mut text, SOURCES_CAP - 4, n, |i, s| {
                    let _ = write!(s, "{}{{\"name\":\"p{i}\"}}", if i == 0 { "" } else { "," });
                });
                text.push_str("]}");
                format!("{n} plugins, each taking the 1000 skills")
            };
            (up.join(".claude-plugin/marketplace.json"), text, what)
        }
        other => unreachable!("{other} is a project case"),
    };
    write(&file, &text)?;
    Ok(format!("{what}; {} bytes", text.len()))
}

fn write(path: &Path, text: &str) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().expect("a file in a directory"))?;
    std::fs::write(path, text)
}

/// Writes case `name` into `dir`; returns its one-line description.
fn case(name: &str, dir: &Path) -> std::io::Result<String> {
    if let Some(done) = project_case(name, dir) {
        return done;
    }
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
        "record-skills" | "record-files" => {
            write(&base.join("s.yaml"), "description: d\n")?;
            let (text, n, skills) = record(name == "record-files");
            for k in 0..skills {
                write(&base.join(format!("s{k}.yaml")), "description: d\n")?;
                std::fs::create_dir_all(dir.join(format!("manifests/s{k}")))?;
            }
            (
                dir.join("manifests/.bernstein-skills.json"),
                text,
                format!("a record listing {n} files"),
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
        "section-hashes" => {
            // Every line an empty heading, on both sides, as many as the
            // sections cap allows together.
            let n = SECTIONS / 2 - 1;
            let body = "#\n".repeat(n);
            write(&base.join("s/SKILL.md"), &format!("{FM}{body}"))?;
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("base and team bodies of {n} '#' lines, merged by section"),
            )
        }
        "section-hashes-4mib" => {
            // A body of '#' lines as large as the size cap: 2 million
            // sections, refused for the sections cap.
            let (body, n) = fill(FM.len(), |_, s| s.push_str("#\n"));
            write(&base.join("s/SKILL.md"), &format!("{FM}{body}"))?;
            let (body, m) = fill(MARKER.len() + 8, |_, s| s.push_str("#\n"));
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("base body of {n} '#' lines, team body of {m} merged by section"),
            )
        }
        "section-hashes-20k" => {
            // The report's case: a 20 KB team body of 10,000 '#' lines.
            write(&base.join("s/SKILL.md"), &format!("{FM}Intro.\n"))?;
            let body = "#\n".repeat(10_000);
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                "a team body of 10000 '#' lines merged by section".into(),
            )
        }
        "section-before" => {
            // The report's case: 100,000 headings, 6,000 `before`.
            let n = 100_000;
            write(&base.join("s/SKILL.md"), &format!("{FM}{}", headings(n)))?;
            let mut body = String::new();
            for i in 0..6_000 {
                let _ = writeln!(body, "<!-- $patch: before \"h{}\" -->\nx", spread(i, n));
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("{n} base headings, 6000 team `before` naming them"),
            )
        }
        "section-anchors" => {
            // The report's 100,000 headings, and as many anchors naming
            // them as the sections cap allows.
            let n = 100_000;
            write(&base.join("s/SKILL.md"), &format!("{FM}{}", headings(n)))?;
            let m = SECTIONS - n - 1;
            let mut body = String::new();
            for i in 0..m {
                let verb = ["before", "after"][i % 2];
                let _ = writeln!(body, "<!-- $patch: {verb} \"h{}\" -->\nx", spread(i, n));
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("{n} base headings, {m} team anchors naming them"),
            )
        }
        "section-duplicates" => {
            let n = 100_000;
            write(
                &base.join("s/SKILL.md"),
                &format!("{FM}{}", "## H\n".repeat(n)),
            )?;
            // The first occurrences deleted (a layer's n-th `## H` is the
            // lower body's n-th), then insertions by occurrence after them.
            let m = SECTIONS - n - 1;
            let deletes = m / 3;
            let mut body = String::new();
            for i in 0..m {
                if i < deletes {
                    body.push_str("## H\n<!-- $patch: delete -->\n");
                } else {
                    let at = deletes + 1 + spread(i, n - deletes);
                    let verb = ["before", "after"][i % 2];
                    let _ = writeln!(body, "<!-- $patch: {verb} \"H\" {at} -->\nx");
                }
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!(
                    "{n} base '## H', {deletes} team deletes and {} anchors by occurrence",
                    m - deletes
                ),
            )
        }
        "section-stale" => {
            let n = 100_000;
            write(&base.join("s/SKILL.md"), &format!("{FM}{}", headings(n)))?;
            let m = SECTIONS - n - 1;
            let mut body = String::new();
            for i in 0..m {
                let _ = match i % 4 {
                    0 => writeln!(body, "## gone{i}\n<!-- $patch: delete -->"),
                    1 => writeln!(body, "## gone{i}\n<!-- $patch: replace -->"),
                    2 => writeln!(body, "<!-- $patch: before \"gone{i}\" -->\nx"),
                    _ => writeln!(body, "<!-- $patch: after \"h{}\" 2 -->\nx", spread(i, n)),
                };
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("{n} base headings, {m} team directives naming none of them"),
            )
        }
        "section-one-anchor" => {
            write(
                &base.join("s/SKILL.md"),
                &format!("{FM}Intro.\n\n## A\n\nText.\n\n## B\n\nMore.\n"),
            )?;
            let m = SECTIONS - 3;
            let mut body = String::new();
            for i in 0..m {
                let at = ["before \"A\"", "after \"A\"", "start", "end"][i % 4];
                let _ = writeln!(body, "<!-- $patch: {at} -->\nx");
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("{m} team insertions around one section"),
            )
        }
        "section-levels" => {
            // Every level, a fenced block among them, nothing repeated.
            let n = 100_000;
            let mut body = String::new();
            for i in 0..n {
                let hashes = &"######"[..1 + i % 6];
                let _ = writeln!(body, "{hashes} l{i}");
                if i % 64 == 0 {
                    body.push_str("```\n# not a heading\n```\n");
                }
            }
            write(&base.join("s/SKILL.md"), &format!("{FM}{body}"))?;
            let m = SECTIONS - n - 1;
            let mut body = String::new();
            for i in 0..m {
                let i = 3 * i;
                let hashes = &"######"[..1 + i % 6];
                let _ = writeln!(body, "{hashes} l{i}\n<!-- $patch: replace -->\ny");
            }
            (
                layers.join("team/s/SKILL.md"),
                format!("---\n---\n{MARKER}{body}"),
                format!("{n} base headings of levels 1-6, {m} team replacements"),
            )
        }
        "keyword-deletes" => {
            // The report's case: 50,000 keywords, 25,000 deletes.
            let (n, m) = (50_000, 25_000);
            let mut text = String::from("description: d\ntrigger_keywords:\n");
            for i in 0..n {
                let _ = writeln!(text, "  - kw{i}");
            }
            write(&base.join("s.yaml"), &text)?;
            let mut items = String::from("trigger_keywords:\n");
            for i in 0..m {
                let _ = writeln!(items, "  - {{$patch: delete, value: kw{}}}", spread(i, n));
            }
            (
                layers.join("team/s.yaml"),
                items,
                format!("{n} keywords, {m} deletes"),
            )
        }
        "append-deletes" => {
            // The figures of the report that found `explain` quadratic in
            // deletes (a file may hold one mapping per 32 bytes of the cap).
            let (n, m) = (200_000, 60_000);
            let mut text = String::from("description: d\ntrigger_keywords:\n");
            for i in 0..n {
                let _ = writeln!(text, "  - kw{i}");
            }
            write(&base.join("s.yaml"), &text)?;
            let mut items = String::from("trigger_keywords:\n");
            for i in 0..m {
                let _ = writeln!(items, "  - {{$patch: delete, value: kw{}}}", spread(i, n));
            }
            (
                layers.join("team/s.yaml"),
                items,
                format!("{n} keywords, {m} deletes"),
            )
        }
        "keyed-deletes" => {
            let (n, m) = (60_000, 60_000);
            let mut text = String::from("description: d\nreferences:\n");
            for i in 0..n {
                let _ = writeln!(text, "  - {{name: r{i}, url: u}}");
            }
            write(&base.join("s.yaml"), &text)?;
            let mut items = String::from("references:\n");
            for i in 0..m {
                let _ = writeln!(items, "  - {{name: r{}, $patch: delete}}", spread(i, n));
            }
            (
                layers.join("team/s.yaml"),
                items,
                format!("{n} references, {m} deletes"),
            )
        }
        "deep-deletes" => {
            let (n, m) = (100_000, 60_000);
            let mut text = String::from("description: d\nmetadata:\n");
            for i in 0..n {
                let _ = writeln!(text, "  k{i}: v");
            }
            write(&base.join("s.yaml"), &text)?;
            // Each key once: a mapping holds no key twice.
            let mut items = String::from("metadata:\n");
            for i in 0..m {
                let _ = writeln!(items, "  k{}: {{$patch: delete}}", spread(i, n));
            }
            (
                layers.join("team/s.yaml"),
                items,
                format!("{n} metadata keys, {m} deletes"),
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
