//! The integration and property tests: one test binary, one folder of
//! `tests/it/` per capability, one module per thing that capability does.
//! `tests/README.md` says which folder a new test goes in.
//!
//! Every test builds its own layer tree in a fresh temporary directory
//! ([`it::support::Sandbox`]) and never touches the process environment: the
//! CLI gets its variables through `assert_cmd`, the library an explicit
//! `bernstein_skills::Env`.

mod it {
    pub mod support;

    /// How the layers of a skill merge into one: precedence, strategies,
    /// rules and directives, sections, keyed and unkeyed entries.
    mod merge {
        mod agent_skills;
        mod design;
        mod directives;
        mod one_pass;
        mod ownership;
        mod precedence;
        pub mod props;
        mod rules_props;
        mod sections;
        mod unkeyed;
    }

    /// Where the layers are found and what a layer may hold: the forms of a
    /// fragment, the places and variables, a skill's files.
    mod layers {
        mod forms;
        mod places;
        mod skill_files;
        mod xdg;
    }

    /// The spec as data: which spec file is used, and what an edit changes.
    mod spec {
        mod files;
        mod impact;
    }

    /// What `export` writes: targets and agents, the files it owns, the
    /// formats and renderings, and upstream's bytes kept.
    mod export {
        mod agents;
        mod claims;
        mod flattened;
        mod frontmatter;
        mod owned;
        mod skill_dirs;
        mod targets;
        mod translated;
        mod upstream_bytes;
    }

    /// Upstream sources and a team's project: `add`, `verify`, `update`
    /// and its reports, pins, collections, clones and scheduled jobs.
    mod upstream {
        mod collections;
        mod markdown;
        mod pins;
        mod report;
        mod scheduled_job;
        mod sources;
        mod team;
        mod week;
    }

    /// What an attacker-written layer, record, state file or upstream tree
    /// cannot do: bad input, bounded costs, reads, writes, printed text,
    /// lookalike names, trust and the person's own state.
    mod security {
        mod bad_input;
        mod bounded_cost;
        mod bounded_sections;
        mod layer_walks;
        mod lookalike_names;
        mod printed;
        mod reads;
        mod skill_files;
        mod state;
        mod trust;
        mod upstream;
        mod writes;
    }

    /// The command line as users and scripts see it: commands and their
    /// output, `--json`, the terminal, `validate`, warnings, the installed
    /// binary.
    mod cli {
        mod commands;
        mod json;
        mod snapshots;
        mod standalone;
        mod terminal;
        mod validate;
        mod warnings;
    }

    /// The repository itself: the source layout, the package, the
    /// documents' examples and the committed schemas.
    mod repo {
        mod layout;
        mod package;
        mod readme;
        mod schemas;
    }
}
