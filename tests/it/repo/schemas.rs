//! The committed schemas under `schemas/` are exactly what the current spec
//! and code generate, and they say what editors need.

use std::path::Path;

use bernstein_skills::output::render;
use bernstein_skills::spec::{fragment_schema, mergespec_schema};

use crate::it::support::{Sandbox, shipped_spec};

fn committed(file: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("schemas")
        .join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

const REGENERATE: &str = "regenerate with `cargo run -- skills schema --out schemas` and commit";

/// The shipped targets, as an editor's schema lists their rules.
fn shipped_targets() -> Vec<bernstein_skills::target::Target> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("spec/targets");
    let search = bernstein_skills::target::TargetSearch { dirs: vec![dir] };
    search
        .all()
        .into_iter()
        .map(|(n, t)| t.unwrap_or_else(|e| panic!("{n}: {e}")))
        .collect()
}

#[test]
fn committed_fragment_schema_is_current() {
    let mut schema = fragment_schema(&shipped_spec());
    bernstein_skills::target::annotate_fragment_schema(&mut schema, &shipped_targets());
    let fresh = render::to_json(&schema);
    assert!(
        committed("skill-fragment.schema.json") == fresh,
        "schemas/skill-fragment.schema.json is stale: {REGENERATE}"
    );
}

#[test]
fn committed_mergespec_schema_is_current() {
    let fresh = render::to_json(&mergespec_schema());
    assert!(
        committed("mergespec.schema.json") == fresh,
        "schemas/mergespec.schema.json is stale: {REGENERATE}"
    );
}

#[test]
fn committed_target_schema_is_current() {
    let fresh = render::to_json(&bernstein_skills::target::target_schema());
    assert!(
        committed("target.schema.json") == fresh,
        "schemas/target.schema.json is stale: {REGENERATE}"
    );
}

#[test]
fn committed_target_frontmatter_schemas_are_current() {
    // One per target that writes skills its own way; a target that writes
    // as another (cursor as agents) has that one's.
    let targets = shipped_targets();
    let distinct: Vec<&bernstein_skills::target::Target> =
        bernstein_skills::target::distinct(&targets).collect();
    for t in &distinct {
        let file = format!("targets/{}.schema.json", t.name);
        assert!(
            committed(&file) == render::to_json(&t.schema()),
            "schemas/{file} is stale: {REGENERATE}"
        );
    }
    let mut files: Vec<String> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("schemas/targets"))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
    files.sort();
    let expected: Vec<String> = distinct
        .iter()
        .map(|t| format!("{}.schema.json", t.name))
        .collect();
    assert_eq!(files, expected, "{REGENERATE}");
}

#[test]
fn every_shipped_target_loads_and_says_where_its_rules_come_from() {
    let names: Vec<String> = shipped_targets()
        .into_iter()
        .map(|t| {
            assert!(!t.source.is_empty(), "{}: no source", t.name);
            assert!(t.description.is_some(), "{}: no description", t.name);
            t.name
        })
        .collect();
    // The standard, the shared folder, Bernstein's manifests, and the 79
    // agents of the skills installer's table (tests/it/export/agents.rs).
    assert_eq!(names.len(), 82);
    for name in [
        "agent-skills",
        "agents",
        "bernstein",
        "claude-code",
        "codex",
        "gemini-cli",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}");
    }
}

#[test]
fn schema_command_prints_and_writes_the_same_files() {
    let sb = Sandbox::new();
    let printed = sb.run(&["schema"]).ok().to_owned();
    assert_eq!(printed, committed("skill-fragment.schema.json"));
    let out = sb.path().join("out");
    sb.run(&["schema", "--out", out.to_str().unwrap()])
        .success();
    for f in [
        "skill-fragment.schema.json",
        "mergespec.schema.json",
        "target.schema.json",
    ] {
        assert_eq!(
            std::fs::read_to_string(out.join(f)).unwrap(),
            committed(f),
            "{f}"
        );
    }
}

#[test]
fn fragment_schema_is_closed_typed_and_documented_for_editors() {
    let v: serde_json::Value =
        serde_json::from_str(&committed("skill-fragment.schema.json")).unwrap();
    assert_eq!(v["$schema"], "https://json-schema.org/draft/2020-12/schema");
    assert!(v["$id"].as_str().is_some_and(|s| !s.is_empty()));
    assert!(v["title"].as_str().is_some_and(|s| !s.is_empty()));
    assert_eq!(v["additionalProperties"], false);
    let props = v["properties"].as_object().unwrap();
    for field in [
        "name",
        "description",
        "version",
        "author",
        "body",
        "trigger_keywords",
        "references",
        "scripts",
        "assets",
        "metadata",
        "license",
        "compatibility",
        "allowed-tools",
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "model",
        "context",
        "agent",
        "hooks",
    ] {
        let p = &props[field];
        let d = p["description"]
            .as_str()
            .unwrap_or_else(|| panic!("{field}: no description"));
        let strategy = ["OVERRIDE", "APPEND", "KEYED_REPLACE", "DEEP_MERGE"]
            .iter()
            .find(|s| d.contains(*s));
        assert!(
            strategy.is_some(),
            "{field}: the description names no strategy: {d}"
        );
        assert!(
            p["examples"].as_array().is_some_and(|e| !e.is_empty()),
            "{field}: no examples"
        );
    }
    // `null` is allowed everywhere: it resets the field at that layer.
    assert_eq!(
        props["description"]["type"],
        serde_json::json!(["string", "null"])
    );
    assert_eq!(
        props["trigger_keywords"]["type"],
        serde_json::json!(["array", "null"])
    );
    assert_eq!(
        props["metadata"]["type"],
        serde_json::json!(["object", "null"])
    );
}
