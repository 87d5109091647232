use std::path::Path;
use std::sync::Arc;

use serde_json::{Value, json};

use super::{OtherFields, Render, Target};
use crate::error::Severity;
use crate::fragment::{Fragment, LoadOptions};
use crate::layer::{Form, Layer};
use crate::spec::MergeSpec;

const STANDARD: &str = r#"version: 1
name: standard
description: A strict reader.
other_fields: refuse
fields:
  name:
    required: true
    type: string
    max_length: 64
    pattern: '^[a-z0-9]+(-[a-z0-9]+)*$'
    pattern_help: lowercase letters, digits and single hyphens
    normalize: nfkc
    matches_directory: true
  description: {required: true, type: string, min_length: 1, max_length: 20}
  metadata: {render: string-map}
  allowed-tools: {render: space-separated}
translate:
  - field: disable-model-invocation
    file: agents/openai.yaml
    key: policy.allow_implicit_invocation
    values: [{from: true, to: false}, {from: false, to: true}]
"#;

fn spec() -> MergeSpec {
    MergeSpec::from_str(
        "version: 2\nname_field: name\nbody_field: body\nfields:\n  \
         name: {strategy: OVERRIDE, type: string}\n  \
         description: {strategy: OVERRIDE, type: string}\n  \
         body: {strategy: OVERRIDE, type: string}\n  \
         metadata: {strategy: DEEP_MERGE}\n  \
         allowed-tools: {strategy: OVERRIDE, type: [string, array], items: string}\n  \
         trigger_keywords: {strategy: APPEND, items: string}\n  \
         disable-model-invocation: {strategy: OVERRIDE, type: boolean}\n",
        Path::new("spec.yaml"),
    )
    .unwrap()
}

fn fragment(layer: Layer, text: &str) -> Fragment {
    Fragment::from_str(
        text.into(),
        Form::Yaml,
        layer,
        Path::new(&format!("{}/w.yaml", layer.label())),
        &LoadOptions::default(),
    )
    .unwrap()
}

fn target() -> Target {
    Target::from_str(STANDARD, Path::new("standard.yaml")).unwrap()
}

#[test]
fn a_target_file_reads_in_order() {
    let t = target();
    let names: Vec<&str> = t.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "description", "metadata", "allowed-tools"]);
    assert_eq!(t.other_fields, OtherFields::Refuse);
    assert_eq!(t.field("metadata").unwrap().render, Render::StringMap);
    assert_eq!(t.translate[0].key, ["policy", "allow_implicit_invocation"]);
}

#[test]
fn bad_target_files_are_one_located_error() {
    for (text, says) in [
        (
            "version: 2\nname: standard\n",
            "1:10: error: unsupported target version 2",
        ),
        (
            "version: 1\nname: other\n",
            "2:7: error: the target is named 'other'",
        ),
        (
            "version: 1\nname: standard\nfields:\n  name: {pattern: '(?=a)'}\n",
            "uses a lookaround",
        ),
        (
            "version: 1\nname: standard\ntranslate:\n  - {field: a, file: ../x.yaml, key: k}\n",
            "'file' must be a .yaml file inside the skill directory",
        ),
        (
            "version: 1\nname: standard\nplaces: {project: /abs}\n",
            "the project place must be a directory relative to the project's root",
        ),
        (
            "version: 1\nname: standard\nfields: {a: {colour: red}}\n",
            "3:14: error: not a target file: unknown field `colour`",
        ),
        // The entry the parse stopped at, though serde names no place.
        (
            "version: 1\nname: standard\nfields:\n  name: {max_length: -1}\n",
            "4:22: error: not a target file: invalid value: integer `-1`",
        ),
        (
            "version: 1\nname: standard\ncolour: red\n",
            "3:1: error: not a target file: unknown field `colour`",
        ),
    ] {
        let e = Target::from_str(text, Path::new("standard.yaml")).unwrap_err();
        let line = e.to_string();
        assert!(line.contains(says), "{text}: {line}");
        assert_eq!(line.lines().count(), 1, "{line}");
    }
}

#[test]
fn the_effective_skill_is_judged_not_the_fragment() {
    let spec = spec();
    let t = target();
    // The base's description is too long; the team's override fixes it.
    let base = fragment(Layer::Base, "description: far too long for this reader\n");
    let team = fragment(Layer::Team, "description: Short.\n");
    let eff = crate::merge(&spec, "w", std::slice::from_ref(&base));
    let found = t.problems(&spec, &eff, std::slice::from_ref(&base), Severity::Error);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].to_string(),
        "base/w.yaml:1:14: error: standard: 'description' must be at most 20 characters long; got 28"
    );
    let both = [base, team];
    let eff = crate::merge(&spec, "w", &both);
    assert!(t.problems(&spec, &eff, &both, Severity::Error).is_empty());
}

#[test]
fn required_fields_names_and_other_fields() {
    let spec = spec();
    let t = target();
    let f = fragment(Layer::User, "name: Renamed\ntrigger_keywords: [a]\n");
    let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
    let found: Vec<String> = t
        .problems(&spec, &eff, std::slice::from_ref(&f), Severity::Warning)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        found,
        [
            "user/w.yaml:2:19: warning: standard: 'trigger_keywords' is not accepted (the consumer \
             refuses a skill that sets it)",
            "user/w.yaml:1:7: warning: standard: 'name' must equal the skill's directory name 'w'; \
             got 'Renamed'",
            "user/w.yaml: warning: standard: 'description' is required, but no layer sets it",
            "user/w.yaml:1:7: warning: standard: 'name' must be lowercase letters, digits and \
             single hyphens; got 'Renamed'",
        ],
    );
}

#[test]
fn values_are_rendered_for_the_consumer_and_translated() {
    let spec = spec();
    let t = target();
    let f = fragment(
        Layer::Base,
        "description: d\nmetadata: {limits: {max_tokens: 2000, t: 0.2}, owner: docs}\n\
         allowed-tools: [Read, Grep]\ndisable-model-invocation: true\nbody: text\n",
    );
    let eff = crate::merge(&spec, "w", std::slice::from_ref(&f));
    let Value::Object(values) = eff.to_value() else {
        unreachable!()
    };
    let r = t.render(&spec, &values);
    assert_eq!(
        Value::Object(r.front.into_iter().collect()),
        json!({
            "name": "w",
            "description": "d",
            "metadata": {"limits.max_tokens": "2000", "limits.t": "0.2", "owner": "docs"},
            "allowed-tools": "Read Grep",
        })
    );
    assert!(r.others.is_empty(), "{:?}", r.others);
    assert_eq!(
        r.files,
        [(
            "agents/openai.yaml".to_owned(),
            json!({"policy": {"allow_implicit_invocation": false}})
        )]
    );
}

#[test]
fn the_target_schema_describes_the_frontmatter() {
    let s = target().schema();
    assert_eq!(s["required"], json!(["name", "description"]));
    assert_eq!(s["additionalProperties"], json!(false));
    assert_eq!(s["properties"]["description"]["maxLength"], json!(20));
}

/// A target built on another: every key it leaves out is the base's; a
/// field it names replaces the base's in place or is added after them,
/// `null` removes one; places given replace the base's whole; a target
/// that changes nothing of how a skill is written writes as its base.
#[test]
fn a_target_extends_another() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("standard.yaml"), STANDARD).unwrap();
    let write = |name: &str, rest: &str| {
        let path = dir.path().join(format!("{name}.yaml"));
        std::fs::write(&path, format!("version: 1\nname: {name}\n{rest}")).unwrap();
        path
    };
    let same = Target::load(&write(
        "same",
        "extends: standard\ndisplay_name: Same\nplaces: {project: .same/skills}\n",
    ))
    .unwrap();
    let base = target();
    assert_eq!(same.renders_as, "standard");
    assert!(same.renders_like(&base));
    assert_eq!(same.description, base.description);
    assert_eq!(same.display_name.as_deref(), Some("Same"));
    assert_eq!(
        (same.user_place.as_deref(), same.project_place.as_deref()),
        (None, Some(".same/skills"))
    );
    // Read in one search, the base is read once and its compiled
    // constraints serve both.
    let search = super::TargetSearch {
        dirs: vec![dir.path().to_path_buf()],
    };
    let both = search
        .find_all(&["standard".to_owned(), "same".to_owned()])
        .unwrap();
    assert!(Arc::ptr_eq(&both[0].compiled, &both[1].compiled));
    let changed = Target::load(&write(
        "changed",
        "extends: same\nfields:\n  license: {type: string}\n  description: {required: true, max_length: 5}\n  metadata: null\n",
    ))
    .unwrap();
    let names: Vec<&str> = changed.fields.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["name", "description", "allowed-tools", "license"]);
    assert_eq!(
        changed
            .field("description")
            .unwrap()
            .rule
            .constraints
            .max_length,
        Some(5)
    );
    assert_eq!(changed.renders_as, "changed");
    assert_eq!(changed.extends.as_deref(), Some("same"));
    // Inherited: the translation and other_fields.
    assert_eq!(changed.translate, base.translate);
    assert_eq!(changed.other_fields, OtherFields::Refuse);
}
