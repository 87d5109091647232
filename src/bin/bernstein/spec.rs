//! `bernstein skills spec`.

use std::process::ExitCode;

use clap::Args;

use bernstein_skills::source::read_bounded;
use bernstein_skills::spec::{Constraints, Field, FoundSpec, MAX_SPEC_BYTES, SpecSource, Strategy};
use bernstein_skills::validate::ownership;
use bernstein_skills::{Error, ErrorKind, MergeSpec, Result, output::render};
use serde_json::{Value, json};

use crate::output::{self, Column};
use bernstein_skills::Context;

#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
#[command(
    after_help = "Examples:\n  bernstein skills spec\n  bernstein skills spec --spec ./my-mergespec.yaml\n  bernstein skills spec --install   # once, after installing the binary"
)]
pub struct SpecArgs {
    /// Write the merge spec this binary shipped with, and its targets, to
    /// $XDG_DATA_HOME/bernstein/skills/, where they are found. Needed only
    /// for a binary installed without them (`cargo install`, a copied
    /// binary): a wheel installs them beside the binary.
    #[arg(long)]
    pub install: bool,
    /// With --install: replace an installed spec that differs.
    #[arg(long, requires = "install")]
    pub force: bool,
    /// Print one JSON document (docs/json.md): the spec in use, where it
    /// was found and its fields; with --install, what was written.
    #[arg(long)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Option<SpecCommand>,
}

#[derive(Debug, clap::Subcommand)]
pub enum SpecCommand {
    /// Merge every skill under an older spec and under the spec in use, and
    /// report what the edit changes: skills, fragments that become invalid
    /// or valid.
    Impact(crate::impact::ImpactArgs),
}

/// The targets shipped with this build (`spec/targets/`), as bytes, for
/// `--install` only. A test checks the list against the directory.
pub const SHIPPED_TARGETS: [(&str, &[u8]); 82] = [
    ("adal", include_bytes!("../../../spec/targets/adal.yaml")),
    (
        "agent-skills",
        include_bytes!("../../../spec/targets/agent-skills.yaml"),
    ),
    (
        "agents",
        include_bytes!("../../../spec/targets/agents.yaml"),
    ),
    (
        "aider-desk",
        include_bytes!("../../../spec/targets/aider-desk.yaml"),
    ),
    ("amp", include_bytes!("../../../spec/targets/amp.yaml")),
    (
        "antigravity",
        include_bytes!("../../../spec/targets/antigravity.yaml"),
    ),
    (
        "antigravity-cli",
        include_bytes!("../../../spec/targets/antigravity-cli.yaml"),
    ),
    (
        "astrbot",
        include_bytes!("../../../spec/targets/astrbot.yaml"),
    ),
    (
        "augment",
        include_bytes!("../../../spec/targets/augment.yaml"),
    ),
    (
        "autohand-code",
        include_bytes!("../../../spec/targets/autohand-code.yaml"),
    ),
    (
        "bernstein",
        include_bytes!("../../../spec/targets/bernstein.yaml"),
    ),
    ("bob", include_bytes!("../../../spec/targets/bob.yaml")),
    (
        "claude-code",
        include_bytes!("../../../spec/targets/claude-code.yaml"),
    ),
    ("cline", include_bytes!("../../../spec/targets/cline.yaml")),
    (
        "codearts-agent",
        include_bytes!("../../../spec/targets/codearts-agent.yaml"),
    ),
    (
        "codebuddy",
        include_bytes!("../../../spec/targets/codebuddy.yaml"),
    ),
    (
        "codemaker",
        include_bytes!("../../../spec/targets/codemaker.yaml"),
    ),
    (
        "codestudio",
        include_bytes!("../../../spec/targets/codestudio.yaml"),
    ),
    ("codex", include_bytes!("../../../spec/targets/codex.yaml")),
    (
        "command-code",
        include_bytes!("../../../spec/targets/command-code.yaml"),
    ),
    (
        "continue",
        include_bytes!("../../../spec/targets/continue.yaml"),
    ),
    (
        "cortex",
        include_bytes!("../../../spec/targets/cortex.yaml"),
    ),
    ("crush", include_bytes!("../../../spec/targets/crush.yaml")),
    (
        "cursor",
        include_bytes!("../../../spec/targets/cursor.yaml"),
    ),
    (
        "deepagents",
        include_bytes!("../../../spec/targets/deepagents.yaml"),
    ),
    ("devin", include_bytes!("../../../spec/targets/devin.yaml")),
    ("dexto", include_bytes!("../../../spec/targets/dexto.yaml")),
    ("droid", include_bytes!("../../../spec/targets/droid.yaml")),
    ("eve", include_bytes!("../../../spec/targets/eve.yaml")),
    (
        "firebender",
        include_bytes!("../../../spec/targets/firebender.yaml"),
    ),
    (
        "forgecode",
        include_bytes!("../../../spec/targets/forgecode.yaml"),
    ),
    ("fx", include_bytes!("../../../spec/targets/fx.yaml")),
    (
        "gemini-cli",
        include_bytes!("../../../spec/targets/gemini-cli.yaml"),
    ),
    (
        "github-copilot",
        include_bytes!("../../../spec/targets/github-copilot.yaml"),
    ),
    ("goose", include_bytes!("../../../spec/targets/goose.yaml")),
    ("grok", include_bytes!("../../../spec/targets/grok.yaml")),
    (
        "hermes-agent",
        include_bytes!("../../../spec/targets/hermes-agent.yaml"),
    ),
    (
        "iflow-cli",
        include_bytes!("../../../spec/targets/iflow-cli.yaml"),
    ),
    (
        "inference-sh",
        include_bytes!("../../../spec/targets/inference-sh.yaml"),
    ),
    ("jazz", include_bytes!("../../../spec/targets/jazz.yaml")),
    ("junie", include_bytes!("../../../spec/targets/junie.yaml")),
    ("kilo", include_bytes!("../../../spec/targets/kilo.yaml")),
    (
        "kimchi",
        include_bytes!("../../../spec/targets/kimchi.yaml"),
    ),
    (
        "kimi-code-cli",
        include_bytes!("../../../spec/targets/kimi-code-cli.yaml"),
    ),
    (
        "kiro-cli",
        include_bytes!("../../../spec/targets/kiro-cli.yaml"),
    ),
    ("kode", include_bytes!("../../../spec/targets/kode.yaml")),
    (
        "lingma",
        include_bytes!("../../../spec/targets/lingma.yaml"),
    ),
    ("loaf", include_bytes!("../../../spec/targets/loaf.yaml")),
    (
        "mcpjam",
        include_bytes!("../../../spec/targets/mcpjam.yaml"),
    ),
    (
        "minimax-code",
        include_bytes!("../../../spec/targets/minimax-code.yaml"),
    ),
    (
        "mistral-vibe",
        include_bytes!("../../../spec/targets/mistral-vibe.yaml"),
    ),
    ("moxby", include_bytes!("../../../spec/targets/moxby.yaml")),
    ("mux", include_bytes!("../../../spec/targets/mux.yaml")),
    (
        "neovate",
        include_bytes!("../../../spec/targets/neovate.yaml"),
    ),
    ("ona", include_bytes!("../../../spec/targets/ona.yaml")),
    (
        "openclaw",
        include_bytes!("../../../spec/targets/openclaw.yaml"),
    ),
    (
        "opencode",
        include_bytes!("../../../spec/targets/opencode.yaml"),
    ),
    (
        "openhands",
        include_bytes!("../../../spec/targets/openhands.yaml"),
    ),
    ("pi", include_bytes!("../../../spec/targets/pi.yaml")),
    ("pochi", include_bytes!("../../../spec/targets/pochi.yaml")),
    (
        "posit-assistant",
        include_bytes!("../../../spec/targets/posit-assistant.yaml"),
    ),
    (
        "promptscript",
        include_bytes!("../../../spec/targets/promptscript.yaml"),
    ),
    ("qoder", include_bytes!("../../../spec/targets/qoder.yaml")),
    (
        "qoder-cn",
        include_bytes!("../../../spec/targets/qoder-cn.yaml"),
    ),
    (
        "qwen-code",
        include_bytes!("../../../spec/targets/qwen-code.yaml"),
    ),
    (
        "reasonix",
        include_bytes!("../../../spec/targets/reasonix.yaml"),
    ),
    (
        "replit",
        include_bytes!("../../../spec/targets/replit.yaml"),
    ),
    ("roo", include_bytes!("../../../spec/targets/roo.yaml")),
    (
        "rovodev",
        include_bytes!("../../../spec/targets/rovodev.yaml"),
    ),
    (
        "sarvam-code",
        include_bytes!("../../../spec/targets/sarvam-code.yaml"),
    ),
    (
        "tabnine-cli",
        include_bytes!("../../../spec/targets/tabnine-cli.yaml"),
    ),
    (
        "terramind",
        include_bytes!("../../../spec/targets/terramind.yaml"),
    ),
    (
        "tinycloud",
        include_bytes!("../../../spec/targets/tinycloud.yaml"),
    ),
    ("trae", include_bytes!("../../../spec/targets/trae.yaml")),
    (
        "trae-cn",
        include_bytes!("../../../spec/targets/trae-cn.yaml"),
    ),
    (
        "universal",
        include_bytes!("../../../spec/targets/universal.yaml"),
    ),
    ("warp", include_bytes!("../../../spec/targets/warp.yaml")),
    (
        "windsurf",
        include_bytes!("../../../spec/targets/windsurf.yaml"),
    ),
    ("zcode", include_bytes!("../../../spec/targets/zcode.yaml")),
    ("zed", include_bytes!("../../../spec/targets/zed.yaml")),
    (
        "zencoder",
        include_bytes!("../../../spec/targets/zencoder.yaml"),
    ),
    (
        "zenflow",
        include_bytes!("../../../spec/targets/zenflow.yaml"),
    ),
];

/// Writes the shipped spec, and the shipped targets in `targets/` beside
/// it, where they are found. Whole or nothing: a file that differs from
/// the shipped one is kept, and nothing is written, unless `force`.
fn install(force: bool, json: bool, ctx: &Context) -> Result<ExitCode> {
    let Some(path) = ctx.spec_search().installed() else {
        return Err(Error::Refused {
            kind: ErrorKind::NoPlace,
            path: None,
            message: "nowhere to install the spec: neither $XDG_DATA_HOME nor $HOME is set to an \
                      absolute path; set one (nothing was written)"
                .into(),
        });
    };
    let targets_dir = path.with_file_name("targets");
    let mut files: Vec<(std::path::PathBuf, &[u8])> =
        vec![(path.clone(), bernstein_skills::spec::SHIPPED)];
    files.extend(
        SHIPPED_TARGETS
            .iter()
            .map(|(name, bytes)| (targets_dir.join(format!("{name}.yaml")), *bytes)),
    );
    let mut to_write = Vec::new();
    for (file, bytes) in &files {
        match read_bounded(file, MAX_SPEC_BYTES) {
            Ok(old) if old == *bytes => {}
            Err(r) if r.is_not_found() => to_write.push((file, *bytes)),
            _ if !force => {
                return Err(Error::Refused {
                    kind: ErrorKind::Exists,
                    path: Some(file.clone()),
                    message: "a different file is installed here; keep it, or replace it with \
                              --force (nothing was written)"
                        .into(),
                });
            }
            _ => to_write.push((file, *bytes)),
        }
    }
    let shown = bernstein_skills::text::path(&path);
    if json {
        let written: Vec<String> = to_write
            .iter()
            .map(|(f, _)| f.display().to_string())
            .collect();
        write_all(&to_write)?;
        output::print(&render::to_json(&json!({
            "file": path.display().to_string(),
            "targets_dir": targets_dir.display().to_string(),
            "written": written,
        })));
        return Ok(ExitCode::SUCCESS);
    }
    if to_write.is_empty() {
        output::print(&format!(
            "{shown}: the shipped merge spec and targets are already installed\n"
        ));
        return Ok(ExitCode::SUCCESS);
    }
    write_all(&to_write)?;
    output::print(&format!(
        "installed the shipped merge spec to {shown}, and its targets to {}\n",
        bernstein_skills::text::path(&targets_dir)
    ));
    Ok(ExitCode::SUCCESS)
}

/// Writes each file (its directory first).
fn write_all(files: &[(&std::path::PathBuf, &[u8])]) -> Result<()> {
    for (file, bytes) in files {
        bernstein_skills::export::write_atomic_making_dirs(file, bytes)?;
    }
    Ok(())
}

impl SpecArgs {
    /// Does the command print JSON (`spec --json`, `spec impact --json`)?
    pub fn json(&self) -> bool {
        match &self.command {
            Some(SpecCommand::Impact(a)) => a.json,
            None => self.json,
        }
    }
}

/// Where the spec in use was found, as one word: `flag`, `variable` (as
/// the layers' `found_by`), `installed`, `beside-binary`, `source-tree`.
fn found_by(source: SpecSource) -> &'static str {
    match source {
        SpecSource::Explicit => "flag",
        SpecSource::EnvVar => "variable",
        SpecSource::Installed => "installed",
        SpecSource::BesideBinary => "beside-binary",
        SpecSource::SourceTree => "source-tree",
    }
}

/// `spec --json`.
fn to_json(spec: &MergeSpec, found: &FoundSpec) -> Value {
    let mut fields = Vec::new();
    for f in &spec.fields {
        push_json(f, &f.name, &mut fields);
    }
    let mut owners: Vec<_> = spec.file_owners.iter().collect();
    owners.sort_by(|a, b| a.dir.cmp(&b.dir));
    json!({
        "file": spec.path.display().to_string(),
        "found_by": found_by(found.source),
        "why": found.source.to_string(),
        "passed_over": found.passed_over,
        "version": spec.version,
        "body_field": spec.body_field,
        "name_field": spec.name_field,
        "enabled_field": spec.enabled_field,
        "targets_field": spec.targets_field,
        "fields": fields,
        "file_owners": owners.iter().map(|o| json!({
            "dir": o.dir,
            "layers": o.layers,
            "set_by": if o.by == "files" { Value::Null } else { json!(o.by) },
        })).collect::<Vec<_>>(),
    })
}

/// [`push_rows`] as JSON.
fn push_json(f: &Field, path: &str, out: &mut Vec<Value>) {
    let checks = checks(f);
    out.push(json!({
        "field": path,
        "strategy": f.strategy.name(),
        "type": f.strategy.type_description(),
        "default": if path.contains('.') && !f.has_default { Value::Null } else { f.default.clone() },
        "required": f.required,
        "checks": if checks.is_empty() { Vec::new() } else { checks.split(", ").collect() },
    }));
    if let Strategy::DeepMerge { fields } = &f.strategy {
        for key in fields {
            push_json(key, &format!("{path}.{}", key.name), out);
        }
    }
}

pub fn run(args: SpecArgs, ctx: &Context) -> Result<ExitCode> {
    if let Some(SpecCommand::Impact(a)) = args.command {
        return crate::impact::run(a, ctx);
    }
    if args.install {
        return install(args.force, args.json, ctx);
    }
    let (spec, found) = crate::global::load_found_spec(ctx)?;
    if args.json {
        output::print(&render::to_json(&to_json(&spec, &found)));
        return Ok(ExitCode::SUCCESS);
    }
    let mut out = format!(
        "spec: {}\nfrom: {}\n",
        bernstein_skills::text::path(&spec.path),
        found.source
    );
    if !found.passed_over.is_empty() {
        out.push_str(&format!("passed over: {}\n", found.passed_over.join(", ")));
    }
    out.push_str(&format!("version: {}\n", spec.version));
    if let Some(b) = &spec.body_field {
        out.push_str(&format!(
            "SKILL.md body field: {}\n",
            bernstein_skills::text::escape(b)
        ));
    }
    for (label, field) in [
        ("name field", &spec.name_field),
        ("enabled field", &spec.enabled_field),
        ("targets field", &spec.targets_field),
    ] {
        if let Some(n) = field {
            out.push_str(&format!("{label}: {}\n", bernstein_skills::text::escape(n)));
        }
    }
    out.push('\n');
    let mut rows = vec![
        ["FIELD", "STRATEGY", "TYPE", "DEFAULT", "CHECKS"]
            .map(String::from)
            .to_vec(),
    ];
    for f in &spec.fields {
        push_rows(f, &f.name, &mut rows);
    }
    out.push_str(&output::table(
        &rows,
        &[
            Column::Whole,
            Column::Whole,
            Column::Text,
            Column::Text,
            Column::Text,
        ],
    ));
    if !spec.file_owners.is_empty() {
        let mut rows = vec![
            ["FILES UNDER", "ONLY FROM", "SET BY"]
                .map(String::from)
                .to_vec(),
        ];
        let mut owners: Vec<_> = spec.file_owners.iter().collect();
        owners.sort_by(|a, b| a.dir.cmp(&b.dir));
        for o in owners {
            rows.push(vec![
                format!("{}/", bernstein_skills::text::escape(&o.dir)),
                o.layers
                    .iter()
                    .map(|l| l.label())
                    .collect::<Vec<_>>()
                    .join("+"),
                if o.by == "files" {
                    "files".into()
                } else {
                    format!("field {}", bernstein_skills::text::escape(&o.by))
                },
            ]);
        }
        out.push('\n');
        out.push_str(&output::table(&rows, &[]));
    }
    output::print(&out);
    Ok(ExitCode::SUCCESS)
}

/// The row of `f` (at `path`: `metadata.tools` for a nested key) and,
/// below a DEEP_MERGE rule, the rows of the keys it has rules for.
fn push_rows(f: &Field, path: &str, rows: &mut Vec<Vec<String>>) {
    rows.push(vec![
        bernstein_skills::text::escape(path).into_owned(),
        f.strategy.name().into(),
        f.strategy.type_description(),
        match (path.contains('.'), f.has_default) {
            // A nested key without a default is simply absent when unset.
            (true, false) => "-".into(),
            _ => f.default.to_string(),
        },
        checks(f),
    ]);
    if let Strategy::DeepMerge { fields } = &f.strategy {
        for key in fields {
            push_rows(key, &format!("{path}.{}", key.name), rows);
        }
    }
}

/// The CHECKS column: `required`, then the constraints in short.
fn checks(field: &Field) -> String {
    let mut out = Vec::new();
    if field.required {
        out.push("required".to_owned());
    }
    match &field.strategy {
        Strategy::Override { value } => {
            out.extend(short(&value.constraints));
            if let Some(items) = &value.items {
                out.extend(short(&items.constraints).map(|c| format!("items {c}")));
            }
        }
        Strategy::Append { items, unique } => {
            out.extend(short(&items.constraints).map(|c| format!("items {c}")));
            if *unique {
                out.push("unique".into());
            }
        }
        Strategy::KeyedReplace {
            entries,
            unkeyed,
            plain,
            ..
        } => {
            if *entries == bernstein_skills::spec::EntriesMode::Merge {
                out.push("entries merge".into());
            }
            if *unkeyed == bernstein_skills::spec::Unkeyed::Append {
                out.push("unkeyed append".into());
            }
            if *plain == bernstein_skills::spec::Plain::Refuse {
                out.push("plain refuse".into());
            }
        }
        Strategy::DeepMerge { .. } => {}
    }
    if let Some(layers) = ownership::owners(field) {
        let labels: Vec<&str> = layers.iter().map(|l| l.label()).collect();
        out.push(format!("only {}", labels.join("+")));
    }
    out.join(", ")
}

fn short(c: &Constraints) -> impl Iterator<Item = String> {
    let length = match (c.min_length, c.max_length) {
        (Some(min), Some(max)) => Some(format!("{min}-{max} chars")),
        (Some(min), None) => Some(format!(">= {min} chars")),
        (None, Some(max)) => Some(format!("<= {max} chars")),
        (None, None) => None,
    };
    let range = match (&c.minimum, &c.maximum) {
        (Some(min), Some(max)) => Some(format!("{min}..{max}")),
        (Some(min), None) => Some(format!(">= {min}")),
        (None, Some(max)) => Some(format!("<= {max}")),
        (None, None) => None,
    };
    [
        c.pattern.as_ref().map(|_| "pattern".to_owned()),
        length,
        c.allowed.as_ref().map(|v| format!("one of {}", v.len())),
        range,
    ]
    .into_iter()
    .flatten()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_target_in_spec_targets_is_shipped() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/targets");
        let mut on_disk: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .filter_map(|e| {
                let name = e.unwrap().file_name().into_string().unwrap();
                name.strip_suffix(".yaml").map(str::to_owned)
            })
            .collect();
        on_disk.sort();
        let shipped: Vec<&str> = super::SHIPPED_TARGETS.iter().map(|(n, _)| *n).collect();
        assert_eq!(on_disk, shipped);
    }
}
