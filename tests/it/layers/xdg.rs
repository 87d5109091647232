//! Where the layers and the spec are found: `XDG_DATA_HOME`,
//! `XDG_CONFIG_HOME`, their `HOME` defaults, and `--layers-root`. The binary
//! gets its environment from `assert_cmd`; the library an explicit `Env`.

use std::path::Path;

use bernstein_skills::{Env, Layer, Layers};
use serde_json::json;

use crate::it::support::{Sandbox, create_file};

/// `bernstein skills show s` with only the given variables set (and `HOME`).
fn show_with(sb: &Sandbox, vars: &[(&str, &Path)]) -> serde_json::Value {
    let mut cmd = sb.bare();
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.args(["skills", "show", "s"]);
    sb.run_cmd(cmd).json()
}

#[test]
fn xdg_variables_place_the_three_layers() {
    let sb = Sandbox::new();
    let (data, config) = (sb.path().join("data"), sb.path().join("config"));
    create_file(
        &data.join("bernstein/skills/base/s.yaml"),
        "description: base\nauthor: b\n",
    );
    create_file(
        &config.join("bernstein/skills/team/s.yaml"),
        "description: team\n",
    );
    create_file(
        &config.join("bernstein/skills/user/s.yaml"),
        "trigger_keywords: [u]\n",
    );
    let v = show_with(
        &sb,
        &[("XDG_DATA_HOME", &data), ("XDG_CONFIG_HOME", &config)],
    );
    assert_eq!(v["description"], "team");
    assert_eq!(v["author"], "b");
    assert_eq!(v["layers_present"], json!(["base", "team", "user"]));
}

#[test]
fn unset_or_empty_xdg_variables_default_below_home() {
    let sb = Sandbox::new();
    let home = sb.path().join("home");
    create_file(
        &home.join(".local/share/bernstein/skills/base/s.yaml"),
        "description: base\n",
    );
    create_file(
        &home.join(".config/bernstein/skills/user/s.yaml"),
        "description: user\n",
    );
    let v = show_with(&sb, &[]);
    assert_eq!(v["description"], "user");
    assert_eq!(v["layers_present"], json!(["base", "user"]));
    let empty = Path::new("");
    let v = show_with(&sb, &[("XDG_DATA_HOME", empty), ("XDG_CONFIG_HOME", empty)]);
    assert_eq!(v["layers_present"], json!(["base", "user"]));
}

#[test]
fn layers_root_overrides_the_xdg_directories() {
    let sb = Sandbox::new();
    let config = sb.path().join("config");
    create_file(
        &config.join("bernstein/skills/user/s.yaml"),
        "description: xdg user\n",
    );
    sb.write("base", "s.yaml", "description: sandbox base\n");
    let mut cmd = sb.bare();
    cmd.env("XDG_CONFIG_HOME", &config);
    cmd.args(["skills", "--layers-root"])
        .arg(sb.root())
        .args(["show", "s"]);
    let v = sb.run_cmd(cmd).json();
    assert_eq!(v["description"], "sandbox base");
    assert_eq!(v["layers_present"], json!(["base"]));
}

#[test]
fn library_discovery_takes_its_environment_as_an_argument() {
    let env = Env {
        home: Some("/h".into()),
        xdg_data_home: None,
        xdg_config_home: Some("/c".into()),
        ..Env::default()
    };
    let layers = Layers::discover(&env);
    let dir = |l: Layer| {
        let d = layers.dirs().iter().find(|d| d.layer == l).unwrap();
        d.path.clone()
    };
    assert_eq!(
        dir(Layer::Base),
        Path::new("/h/.local/share/bernstein/skills/base")
    );
    assert_eq!(dir(Layer::Team), Path::new("/c/bernstein/skills/team"));
    assert_eq!(dir(Layer::User), Path::new("/c/bernstein/skills/user"));
}

#[test]
fn spec_installed_beside_the_base_layer_is_used_when_no_other_is_named() {
    let sb = Sandbox::new();
    let data = sb.path().join("data");
    create_file(&data.join("bernstein/skills/base/s.yaml"), "tags: [x]\n");
    create_file(
        &data.join("bernstein/skills/mergespec.yaml"),
        "version: 1\nfields:\n  tags: {strategy: APPEND, items: string}\n",
    );
    let mut cmd = sb.bare();
    cmd.env("XDG_DATA_HOME", &data)
        .args(["skills", "show", "s"]);
    let out = sb.run_cmd(cmd);
    assert_eq!(
        out.json_ignoring_stderr(),
        json!({"tags": ["x"], "layers_present": ["base"]})
    );
    // Not the spec this binary ships: used, and said.
    assert!(
        out.stderr
            .starts_with("[ROOT]/data/bernstein/skills/mergespec.yaml: warning: the installed merge spec is not the one"),
        "{out:#?}"
    );
}
