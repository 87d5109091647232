//! The integration and property tests: one test binary, one module per theme.
//!
//! Every test builds its own layer tree in a fresh temporary directory
//! ([`it::support::Sandbox`]) and never touches the process environment: the
//! CLI gets its variables through `assert_cmd`, the library an explicit
//! `bernstein_skills::Env`.

mod it {
    pub mod support;

    mod agent_skills;
    mod agents;
    mod cli;
    mod design;
    mod directives;
    mod export_owned;
    mod export_safety;
    mod export_skill;
    mod flattened;
    mod forms;
    mod frontmatter;
    mod hardening;
    mod hostile_cost;
    mod hostile_files;
    mod hostile_layer;
    mod hostile_output;
    mod hostile_read;
    mod hostile_write;
    pub mod json;
    mod layout;
    mod lookalike_names;
    mod nothing_silent;
    mod one_pass;
    mod ownership;
    mod package;
    mod places;
    mod precedence;
    mod props;
    mod readme;
    mod rules_props;
    mod schemas;
    mod sections;
    mod sections_scale;
    mod skill_files;
    mod snapshots;
    mod spec_edit;
    mod spec_impact;
    mod standalone;
    mod state;
    mod targets;
    mod team;
    mod terminal;
    mod translated;
    mod trust;
    mod unkeyed;
    mod update_markdown;
    mod update_report;
    pub mod upstream;
    mod upstream_bytes;
    mod upstream_collections;
    mod upstream_hostile;
    mod upstream_job;
    mod upstream_team;
    mod upstream_week;
    mod validate;
    mod xdg;
}
