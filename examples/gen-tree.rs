//! A deterministic synthetic layer tree for benchmarks.
//!
//! ```sh
//! cargo run --release --example gen-tree -- DIR N [--seed S]
//! ```
//!
//! Writes `N` skills (`skill-00000` ...) into `DIR/base`, `DIR/team` and
//! `DIR/user`:
//!
//! - base holds every skill: ~60% `<name>/SKILL.md` (YAML frontmatter and a
//!   Markdown body of a few KB), ~30% `<name>.yaml`, ~10% `<name>.yml`;
//! - team overrides ~30% of them (`.yaml`, `.toml` or `SKILL.md`);
//! - user overrides ~10% (`.toml`, `.yaml` or `.yml`);
//! - every `SKILL.md` directory holds resource files of a few KB: base has
//!   `references/*.md`, `scripts/*.sh` and sometimes a binary `assets/*.bin`;
//!   a team `SKILL.md` directory replaces one of them and adds its own.
//!
//! Every field and strategy of the shipped spec is used: OVERRIDE strings
//! (including `null` resets), APPEND keywords, KEYED_REPLACE lists of strings
//! and of mappings keyed by `name`, `id` or `code` whose overrides both
//! replace entries in place and add new ones, and `metadata` nested three
//! levels deep that overrides merge into (and delete keys from with `null`).
//! Every fragment validates without errors or warnings: overrides never
//! repeat the value below them and never set `name`.
//!
//! Each skill is generated from its own PRNG stream (seed and index), so the
//! tree for `N = 1000` is the first thousand skills of the tree for
//! `N = 10000`. Prints one summary line and nothing else.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use serde_json::{Map, Value, json};

/// splitmix64: tiny, fast, good enough for synthetic data, and fully
/// determined by its seed.
struct Rng(u64);

impl Rng {
    fn new(seed: u64, stream: u64) -> Rng {
        let mut r = Rng(seed ^ stream.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        r.next();
        r
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `lo..=hi`.
    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo + 1)
    }

    /// True with probability `percent` / 100.
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }

    fn pick<'a>(&mut self, items: &'a [&'a str]) -> &'a str {
        items[(self.next() % items.len() as u64) as usize]
    }
}

const WORDS: &[&str] = &[
    "review",
    "draft",
    "edit",
    "summarise",
    "translate",
    "plan",
    "test",
    "refactor",
    "deploy",
    "audit",
    "explain",
    "triage",
    "design",
    "profile",
    "migrate",
    "document",
    "release",
    "schema",
    "query",
    "index",
    "cache",
    "queue",
    "parser",
    "token",
    "budget",
    "latency",
    "prompt",
    "context",
    "layer",
    "merge",
    "policy",
    "style",
    "voice",
    "tone",
    "outline",
    "section",
    "example",
    "diagram",
    "metric",
    "incident",
    "runbook",
    "checklist",
    "contract",
];

const FAMILIES: &[&str] = &["sonnet", "haiku", "opus", "local", "mini"];
const TEAMS: &[&str] = &["docs", "platform", "security", "data", "infra", "support"];

fn words(rng: &mut Rng, n: u64) -> Vec<String> {
    (0..n).map(|_| rng.pick(WORDS).to_owned()).collect()
}

fn sentence(rng: &mut Rng, lo: u64, hi: u64) -> String {
    let n = rng.range(lo, hi);
    let mut s = words(rng, n).join(" ");
    if let Some(first) = s.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    s.push('.');
    s
}

/// A Markdown body of roughly `kb` KB: headings, paragraphs, a list and a
/// code block per section.
fn markdown(rng: &mut Rng, title: &str, kb: u64) -> String {
    let mut out = format!("# {title}\n\n{}\n", sentence(rng, 8, 16));
    let target = (kb * 1024) as usize;
    let mut section = 1;
    while out.len() < target {
        let _ = write!(out, "\n## {section}. {}\n\n", sentence(rng, 2, 4));
        for _ in 0..rng.range(1, 3) {
            let sentences: Vec<String> =
                (0..rng.range(3, 6)).map(|_| sentence(rng, 6, 14)).collect();
            let _ = writeln!(out, "{}\n", sentences.join(" "));
        }
        for _ in 0..rng.range(2, 5) {
            let _ = writeln!(out, "- {}", sentence(rng, 3, 8));
        }
        let _ = write!(
            out,
            "\n```sh\n{} --{} {}\n```\n",
            rng.pick(WORDS),
            rng.pick(WORDS),
            rng.pick(WORDS)
        );
        section += 1;
    }
    out
}

/// The keyed entries a base fragment has, so that overrides can replace them.
struct Keyed {
    /// `(key, value)` of each mapping entry (plain strings are keyed by `name`).
    ids: Vec<(&'static str, String)>,
    entries: Vec<Value>,
}

fn references(rng: &mut Rng, skill: &str) -> Keyed {
    let mut k = Keyed {
        ids: Vec::new(),
        entries: Vec::new(),
    };
    for j in 0..rng.range(2, 5) {
        let (entry, id) = match rng.next() % 4 {
            0 => {
                let file = format!("{}-{j}.md", rng.pick(WORDS));
                (Value::String(file.clone()), ("name", file))
            }
            1 => {
                let id = format!("ref-{skill}-{j}");
                (
                    json!({"id": id, "title": sentence(rng, 2, 5), "url": format!("https://docs.example/{id}")}),
                    ("id", id),
                )
            }
            2 => {
                let code = format!("R{j}{}", rng.range(100, 999));
                (
                    json!({"code": code, "section": rng.range(1, 40)}),
                    ("code", code),
                )
            }
            _ => {
                let name = format!("{}-{j}", rng.pick(WORDS));
                (
                    json!({"name": name, "url": format!("docs/{name}.md"), "pages": rng.range(1, 90)}),
                    ("name", name),
                )
            }
        };
        k.entries.push(entry);
        k.ids.push(id);
    }
    k
}

fn scripts(rng: &mut Rng) -> Keyed {
    let mut k = Keyed {
        ids: Vec::new(),
        entries: Vec::new(),
    };
    for j in 0..rng.range(1, 3) {
        let name = format!("{}-{j}", rng.pick(WORDS));
        k.entries.push(json!({
            "name": name,
            "run": format!("scripts/{name}.sh"),
            "args": words(rng, 2),
            "timeout_s": rng.range(5, 120),
        }));
        k.ids.push(("name", name));
    }
    k
}

fn assets(rng: &mut Rng) -> Keyed {
    let mut k = Keyed {
        ids: Vec::new(),
        entries: Vec::new(),
    };
    for j in 0..rng.range(0, 3) {
        if rng.chance(50) {
            let file = format!("{}-{j}.svg", rng.pick(WORDS));
            k.entries.push(Value::String(file.clone()));
            k.ids.push(("name", file));
        } else {
            let code = format!("A-{j}-{}", rng.range(1000, 9999));
            k.entries
                .push(json!({"code": code, "path": format!("assets/{code}.png"), "bytes": rng.range(100, 90_000)}));
            k.ids.push(("code", code));
        }
    }
    k
}

/// `metadata`, three levels deep.
fn metadata(rng: &mut Rng) -> Value {
    let mut m = json!({
        "limits": {
            "max_tokens": rng.range(5, 40) * 100,
            "temperature": rng.range(0, 5) as f64 / 10.0,
        },
        "model": {
            "family": rng.pick(FAMILIES),
            "params": {
                "top_p": rng.range(50, 99) as f64 / 100.0,
                "stop": words(rng, 2),
            },
        },
        "owner": {
            "team": rng.pick(TEAMS),
            "contact": {"channel": format!("#{}-{}", rng.pick(TEAMS), rng.pick(WORDS))},
        },
        "tags": words(rng, 3),
    });
    if rng.chance(40) {
        m["legacy"] = json!({"format": "v0", "since": format!("20{}", rng.range(18, 23))});
    }
    m
}

/// One skill across the layers, as fragments (JSON values) and forms.
struct Skill {
    name: String,
    base: (Form, Value),
    team: Option<(Form, Value)>,
    user: Option<(Form, Value)>,
}

#[derive(Clone, Copy, PartialEq)]
enum Form {
    SkillMd,
    Yaml,
    Yml,
    Toml,
}

impl Form {
    fn path(self, dir: &Path, name: &str) -> PathBuf {
        match self {
            Form::SkillMd => dir.join(name).join("SKILL.md"),
            Form::Yaml => dir.join(format!("{name}.yaml")),
            Form::Yml => dir.join(format!("{name}.yml")),
            Form::Toml => dir.join(format!("{name}.toml")),
        }
    }
}

/// An override of a keyed list: replaces one lower entry in place (same
/// identity, new content) and adds one new entry.
fn keyed_override(
    rng: &mut Rng,
    lower: &Keyed,
    layer: &str,
    skill: &str,
    new_key: &'static str,
) -> Value {
    let mut out = Vec::new();
    if !lower.ids.is_empty() {
        let (key, id) = &lower.ids[(rng.next() % lower.ids.len() as u64) as usize];
        out.push(
            json!({ *key: id, "url": format!("{layer}/{id}"), "note": format!("{layer} copy") }),
        );
    }
    let id = format!("{layer}-{skill}-{}", rng.range(0, 99));
    out.push(json!({ new_key: id, "url": format!("{layer}/{id}.md") }));
    Value::Array(out)
}

fn skill(seed: u64, i: u64, width: usize) -> Skill {
    let mut rng = Rng::new(seed, i);
    let name = format!("skill-{i:0width$}");
    let base_form = match rng.next() % 10 {
        0..=5 => Form::SkillMd,
        6..=8 => Form::Yaml,
        _ => Form::Yml,
    };
    let mut refs = references(&mut rng, &name);
    let scr = scripts(&mut rng);
    let mut ast = assets(&mut rng);
    // A plain entry names a file of the skill's directory, which only the
    // SKILL.md form has: elsewhere the same identity is written as a mapping.
    if base_form != Form::SkillMd {
        for k in [&mut refs, &mut ast] {
            for e in &mut k.entries {
                if let Value::String(file) = e {
                    *e = json!({ "name": file.clone() });
                }
            }
        }
    }
    let mut base = Map::new();
    base.insert("name".into(), json!(name));
    base.insert("description".into(), json!(sentence(&mut rng, 6, 12)));
    base.insert(
        "version".into(),
        json!(format!("1.{}.{}", rng.range(0, 9), rng.range(0, 20))),
    );
    base.insert("author".into(), json!(format!("{}-team", rng.pick(TEAMS))));
    let n_kw = rng.range(2, 5);
    base.insert("trigger_keywords".into(), json!(words(&mut rng, n_kw)));
    base.insert("references".into(), Value::Array(refs.entries.clone()));
    base.insert("scripts".into(), Value::Array(scr.entries.clone()));
    if !ast.entries.is_empty() {
        base.insert("assets".into(), Value::Array(ast.entries.clone()));
    }
    let meta = metadata(&mut rng);
    let had_legacy = meta.get("legacy").is_some();
    base.insert("metadata".into(), meta);
    let body_kb = if base_form == Form::SkillMd {
        rng.range(2, 5)
    } else {
        1
    };
    base.insert("body".into(), json!(markdown(&mut rng, &name, body_kb)));

    // Team: ~30%.
    let team = rng.chance(30).then(|| {
        let form = match rng.next() % 20 {
            0..=11 => Form::Yaml,
            12..=16 => Form::Toml,
            _ => Form::SkillMd,
        };
        let mut t = Map::new();
        t.insert(
            "description".into(),
            json!(format!("Team: {}", sentence(&mut rng, 5, 10))),
        );
        let n = rng.range(1, 3);
        t.insert(
            "trigger_keywords".into(),
            json!(
                words(&mut rng, n)
                    .into_iter()
                    .map(|w| format!("team-{w}"))
                    .collect::<Vec<_>>()
            ),
        );
        t.insert(
            "references".into(),
            keyed_override(&mut rng, &refs, "team", &name, "id"),
        );
        if rng.chance(60) {
            t.insert(
                "scripts".into(),
                keyed_override(&mut rng, &scr, "team", &name, "name"),
            );
        }
        let mut meta = json!({
            "limits": {"temperature": rng.range(6, 9) as f64 / 10.0},
            "model": {"params": {"top_p": rng.range(10, 49) as f64 / 100.0}},
            "team": {"channel": format!("#team-{}", rng.pick(WORDS)), "reviewed": true},
        });
        if had_legacy && rng.chance(50) {
            // DEEP_MERGE: null deletes the key.
            meta["legacy"] = Value::Null;
        }
        t.insert("metadata".into(), meta);
        if form == Form::SkillMd || rng.chance(20) {
            t.insert(
                "body".into(),
                json!(markdown(&mut rng, &format!("{name} (team notes)"), 1)),
            );
        }
        (form, Value::Object(t))
    });

    // User: ~10%.
    let user = rng.chance(10).then(|| {
        let form = match rng.next() % 10 {
            0..=4 => Form::Toml,
            5..=8 => Form::Yaml,
            _ => Form::Yml,
        };
        let mut u = Map::new();
        u.insert(
            "author".into(),
            json!(format!("user-{}", rng.range(1, 500))),
        );
        u.insert(
            "version".into(),
            json!(format!("2.{}.{}", rng.range(0, 9), rng.range(0, 20))),
        );
        let n = rng.range(1, 2);
        u.insert(
            "trigger_keywords".into(),
            json!(
                words(&mut rng, n)
                    .into_iter()
                    .map(|w| format!("my-{w}"))
                    .collect::<Vec<_>>()
            ),
        );
        u.insert(
            "references".into(),
            keyed_override(&mut rng, &refs, "user", &name, "code"),
        );
        if rng.chance(30) {
            // OVERRIDE/KEYED_REPLACE: null resets the field.
            u.insert("assets".into(), Value::Null);
        } else if !ast.entries.is_empty() {
            u.insert(
                "assets".into(),
                keyed_override(&mut rng, &ast, "user", &name, "code"),
            );
        }
        u.insert(
            "metadata".into(),
            json!({
                "limits": {"max_tokens": rng.range(50, 90) * 100},
                "model": {"family": "user-pick", "params": {"seed": rng.range(1, 1000)}},
            }),
        );
        (form, Value::Object(u))
    });

    Skill {
        name,
        base: (base_form, Value::Object(base)),
        team,
        user,
    }
}

/// The text of one fragment in `form`.
fn render(form: Form, fragment: &Value, modeline: bool) -> String {
    match form {
        Form::Yaml | Form::Yml => {
            let mut out = String::new();
            if modeline {
                out.push_str("# yaml-language-server: $schema=../skill-fragment.schema.json\n");
            }
            out.push_str(&serde_yaml::to_string(fragment).expect("YAML"));
            out
        }
        Form::Toml => {
            let mut out = String::new();
            if modeline {
                out.push_str("#:schema ../skill-fragment.schema.json\n");
            }
            out.push_str(&toml::to_string(fragment).expect("TOML"));
            out
        }
        Form::SkillMd => {
            let mut fm = fragment.clone();
            let body = fm
                .as_object_mut()
                .and_then(|m| m.remove("body"))
                .and_then(|b| b.as_str().map(str::to_owned))
                .unwrap_or_default();
            let yaml = serde_yaml::to_string(&fm).expect("YAML");
            format!("---\n{yaml}---\n\n{body}")
        }
    }
}

fn has_null(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Array(a) => a.iter().any(has_null),
        Value::Object(m) => m.values().any(has_null),
        _ => false,
    }
}

fn write(dir: &Path, name: &str, mut form: Form, fragment: &Value, modeline: bool) -> usize {
    if form == Form::Toml && has_null(fragment) {
        // TOML has no null: a fragment that resets or deletes is YAML.
        form = Form::Yaml;
    }
    let path = form.path(dir, name);
    if form == Form::SkillMd {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    }
    let text = render(form, fragment, modeline);
    std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.len()
}

/// Resource files of a skill directory in `layer_dir` (only for the
/// `SKILL.md` form), from their own PRNG stream: base gets two or three, a
/// team override replaces the first and adds one. Returns the bytes written.
fn resource_files(seed: u64, i: u64, layer: usize, layer_dir: &Path, name: &str) -> usize {
    let mut rng = Rng::new(seed ^ 0x5EED_F11E, i * 4 + layer as u64);
    let dir = layer_dir.join(name);
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    let reference = |rng: &mut Rng, who: &str| {
        let kb = rng.range(1, 4);
        markdown(rng, &format!("{name} reference ({who})"), kb).into_bytes()
    };
    if layer == 0 {
        files.push(("references/guide.md".into(), reference(&mut rng, "base")));
        let script = format!(
            "#!/bin/sh\n# {}\nset -eu\n{}\n",
            sentence(&mut rng, 4, 8),
            words(&mut rng, 150).join(" ")
        );
        files.push((
            format!("scripts/{}.sh", rng.pick(WORDS)),
            script.into_bytes(),
        ));
        if rng.chance(30) {
            let n = rng.range(1024, 4096) as usize;
            let bytes = (0..n).map(|_| (rng.next() & 0xff) as u8).collect();
            files.push((format!("assets/{}.bin", rng.pick(WORDS)), bytes));
        }
    } else {
        files.push(("references/guide.md".into(), reference(&mut rng, "team")));
        files.push((
            format!("references/team-{}.md", rng.pick(WORDS)),
            reference(&mut rng, "team"),
        ));
    }
    let mut bytes = 0;
    for (rel, data) in files {
        let path = dir.join(rel);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, &data).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        bytes += data.len();
    }
    bytes
}

/// The files a fragment's plain `references` and `assets` entries name
/// (`style-3.md` names `references/style-3.md`), each a few lines.
fn named_files(layer_dir: &Path, name: &str, fragment: &Value) -> usize {
    let mut bytes = 0;
    for field in ["references", "assets"] {
        let Some(Value::Array(entries)) = fragment.get(field) else {
            continue;
        };
        for file in entries.iter().filter_map(Value::as_str) {
            let path = layer_dir.join(name).join(field).join(file);
            let text = format!("{file}: a {field} file of {name}.\n");
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(&path, &text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            bytes += text.len();
        }
    }
    bytes
}

fn usage() -> ExitCode {
    eprintln!("usage: gen-tree DIR N [--seed S]");
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut seed: u64 = 42;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--seed" {
            match it.next().and_then(|s| s.parse().ok()) {
                Some(s) => seed = s,
                None => return usage(),
            }
        } else {
            positional.push(a);
        }
    }
    let [dir, n] = positional.as_slice() else {
        return usage();
    };
    let Ok(n) = n.parse::<u64>() else {
        return usage();
    };
    let root = Path::new(dir.as_str());
    let dirs = ["base", "team", "user"].map(|l| root.join(l));
    for d in &dirs {
        std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{}: {e}", d.display()));
    }
    let width = n.saturating_sub(1).to_string().len().max(5);
    let (mut bytes, mut md, mut yaml, mut yml, mut team, mut user) = (0, 0, 0, 0, 0, 0);
    let mut all_three = Vec::new();
    for i in 0..n {
        let s = skill(seed, i, width);
        match s.base.0 {
            Form::SkillMd => md += 1,
            Form::Yaml => yaml += 1,
            _ => yml += 1,
        }
        bytes += write(&dirs[0], &s.name, s.base.0, &s.base.1, false);
        if s.base.0 == Form::SkillMd {
            bytes += resource_files(seed, i, 0, &dirs[0], &s.name);
            bytes += named_files(&dirs[0], &s.name, &s.base.1);
        }
        if let Some((form, f)) = &s.team {
            team += 1;
            bytes += write(&dirs[1], &s.name, *form, f, i % 2 == 0);
            if *form == Form::SkillMd {
                bytes += resource_files(seed, i, 1, &dirs[1], &s.name);
            }
        }
        if let Some((form, f)) = &s.user {
            user += 1;
            bytes += write(&dirs[2], &s.name, *form, f, false);
        }
        if s.team.is_some() && s.user.is_some() {
            all_three.push(s.name);
        }
    }
    println!(
        "gen-tree: {n} skills in {dir} (seed {seed}): base {n} ({md} SKILL.md, {yaml} .yaml, {yml} .yml), \
         team {team}, user {user}, in all three {} (first: {}), {:.1} MiB",
        all_three.len(),
        all_three.first().map_or("none", String::as_str),
        bytes as f64 / (1024.0 * 1024.0)
    );
    ExitCode::SUCCESS
}
