//! Issue 23: a layer changes an upstream skill's instructions section by
//! section instead of copying them — in a SKILL.md, a YAML and a TOML
//! layer alike — with each section's provenance, stale directives reported
//! where they are, and the merged body exported as the body.

use proptest::prelude::*;

use crate::it::support::Sandbox;

const UPSTREAM: &str = "---\nname: pdf\ndescription: Reads PDFs.\n---\n\nUse pdfplumber.\n\n\
                        ## Usage\n\nRun scripts/extract.py.\n\n## Output\n\nWrite JSON.\n\n\
                        ```md\n## Not a heading\n```\n\n## Legacy\n\nOld advice.\n";

/// The team's changes, as a SKILL.md body.
const CHANGES: &str = "<!-- $patch: sections -->\n## House style\n<!-- $patch: add -->\n\n\
                       Also follow references/house-style.md.\n\n## Output\n\nWrite CSV.\n\n\
                       ## Legacy\n<!-- $patch: delete -->\n\n\
                       <!-- $patch: before \"Usage\" -->\nRead the house style first.\n\n\
                       <!-- $patch: end -->\nThanks.\n";

/// The body every form of [`CHANGES`] gives.
const MERGED: &str = "Use pdfplumber.\n\nRead the house style first.\n\n## Usage\n\n\
                      Run scripts/extract.py.\n\n## Output\n\nWrite CSV.\n\n## House style\n\n\
                      Also follow references/house-style.md.\n\nThanks.";

fn upstream() -> Sandbox {
    let sb = Sandbox::new();
    sb.write("base", "pdf/SKILL.md", UPSTREAM);
    sb
}

fn body(sb: &Sandbox) -> String {
    sb.run(&["show", "pdf"]).json_ignoring_stderr()["body"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_skill_md_layer_adds_replaces_deletes_and_inserts_sections() {
    let sb = upstream();
    sb.write("team", "pdf/SKILL.md", format!("---\n---\n{CHANGES}"));
    assert_eq!(body(&sb), MERGED);
    sb.run(&["validate", "--strict"]).ok();
}

#[test]
fn a_yaml_and_a_toml_layer_do_the_same() {
    for (file, text) in [
        (
            "pdf.yaml",
            format!(
                "body: {}\n",
                serde_json::to_string(CHANGES.trim_end()).unwrap()
            ),
        ),
        (
            "pdf.toml",
            format!(
                "body = {}\n",
                serde_json::to_string(CHANGES.trim_end()).unwrap()
            ),
        ),
    ] {
        let sb = upstream();
        sb.write("team", file, text);
        assert_eq!(body(&sb), MERGED, "{file}");
    }
}

#[test]
fn by_default_a_layers_body_replaces_the_lower_one_whole() {
    let sb = upstream();
    sb.write("team", "pdf/SKILL.md", "---\n---\n## Only this\n");
    assert_eq!(body(&sb), "## Only this");
}

#[test]
fn upstream_edits_to_untouched_sections_come_through() {
    let sb = upstream();
    sb.write("team", "pdf/SKILL.md", format!("---\n---\n{CHANGES}"));
    sb.write(
        "base",
        "pdf/SKILL.md",
        UPSTREAM.replace("Run scripts/extract.py.", "Run scripts/extract.py --fast."),
    );
    assert!(body(&sb).contains("Run scripts/extract.py --fast."));
    assert!(body(&sb).contains("## House style"));
}

#[test]
fn a_directive_naming_a_heading_upstream_renamed_is_a_located_warning() {
    let sb = upstream();
    sb.write(
        "team",
        "pdf/SKILL.md",
        "---\n---\n<!-- $patch: sections -->\n<!-- $patch: after \"Setup\" -->\nMore.\n\n\
         ## Usage\n<!-- $patch: replace -->\nRun it.\n\n## Examples\n<!-- $patch: delete -->\n",
    );
    // Upstream renamed "Usage" to "Using it".
    sb.write(
        "base",
        "pdf/SKILL.md",
        UPSTREAM.replace("## Usage", "## Using it"),
    );
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(0), "{run:#?}");
    let lines: Vec<&str> = run.report().lines().collect();
    assert_eq!(
        lines,
        [
            "[ROOT]/layers/team/pdf/SKILL.md:4:1: warning: 'body[Setup]': $patch: after names a \
             section no lower layer has (renamed upstream, or a typo in the heading); it did nothing",
            "[ROOT]/layers/team/pdf/SKILL.md:7:1: warning: 'body[Usage]': $patch: replace names a \
             section no lower layer has (renamed upstream, or a typo in the heading); the section \
             was added at the end",
            "[ROOT]/layers/team/pdf/SKILL.md:12:1: warning: 'body[Examples]': $patch: delete names a \
             section no lower layer has (renamed upstream, or a typo in the heading); it did nothing",
            "0 error(s), 3 warning(s) in 2 file(s)",
        ]
    );
    assert_eq!(sb.run(&["validate", "--strict"]).code, Some(1));
}

#[test]
fn a_misused_directive_is_a_located_error() {
    let sb = upstream();
    sb.write(
        "team",
        "pdf/SKILL.md",
        "---\n---\n<!-- $patch: sections -->\n<!-- $patch: befor \"Usage\" -->\nx\n",
    );
    let (line, col, msg) = sb.run(&["show", "pdf"]).located_error("team/pdf/SKILL.md");
    assert_eq!((line, col), (4, 1));
    assert!(msg.starts_with("'body': unknown directive"), "{msg}");
}

#[test]
fn headings_in_code_blocks_are_text() {
    let sb = upstream();
    sb.write(
        "team",
        "pdf/SKILL.md",
        "---\n---\n<!-- $patch: sections -->\n## Not a heading\n<!-- $patch: delete -->\n",
    );
    // The fenced "## Not a heading" is part of "Output", never a section.
    let run = sb.run(&["validate"]);
    assert!(run.stdout.contains("'body[Not a heading]'"), "{run:#?}");
    assert!(body(&sb).contains("```md\n## Not a heading\n```"));
}

#[test]
fn explain_and_origins_say_where_each_section_came_from() {
    let sb = upstream();
    sb.write("team", "pdf/SKILL.md", format!("---\n---\n{CHANGES}"));
    let v = sb.run(&["explain", "pdf", "body", "--json"]).json();
    let rows = v["values"].as_array().unwrap();
    let find = |path: &str| {
        rows.iter()
            .find(|r| r["field"] == path)
            .unwrap_or_else(|| panic!("no row {path}: {rows:#?}"))
    };
    let output = find("body[Output]");
    assert_eq!(output["strategy"], "SECTION");
    assert_eq!(output["origin"]["layer"], "team");
    assert_eq!(output["origin"]["line"], 9);
    assert_eq!(output["replaced"][0]["origin"]["layer"], "base");
    assert_eq!(output["replaced"][0]["origin"]["line"], 12);
    assert_eq!(find("body[Usage]")["origin"]["line"], 8);
    assert_eq!(find("body[Usage]")["origin"]["layer"], "base");
    let legacy = find("body[Legacy]");
    assert_eq!(legacy["removed"], true);
    assert_eq!(legacy["changes"][0]["by"]["line"], 14);
    // The section the team marked as an addition says so.
    let house = find("body[House style]");
    assert_eq!(house["origin"]["line"], 4);
    assert_eq!(house["changes"][0]["kind"], "added");
    // What it removed is shown where it was: the `## Legacy` line upstream.
    let was = &legacy["changes"][0]["dropped"][0];
    assert_eq!(was["origin"]["layer"], "base");
    assert_eq!(was["origin"]["line"], 20);
    let origins = sb.run(&["show", "pdf", "--origins"]).ok().to_owned();
    assert!(
        origins.contains(
            "  # body[Output] from team:[ROOT]/layers/team/pdf/SKILL.md:9, replacing \
             base:[ROOT]/layers/base/pdf/SKILL.md:12\n"
        ),
        "{origins}"
    );
    assert!(
        origins.contains(
            "  # body[House style] from team:[ROOT]/layers/team/pdf/SKILL.md:4, an addition ($patch: add)\n"
        ),
        "{origins}"
    );
}

#[test]
fn duplicate_headings_are_matched_in_order() {
    let sb = Sandbox::new();
    sb.write(
        "base",
        "s/SKILL.md",
        "---\n---\n## Example\none\n## Example\ntwo\n",
    );
    sb.write(
        "team",
        "s/SKILL.md",
        "---\n---\n<!-- $patch: sections -->\n<!-- $patch: after \"Example\" 2 -->\nthree\n",
    );
    assert_eq!(
        sb.resolve_value("s")["body"],
        "## Example\none\n## Example\ntwo\n\nthree"
    );
}

#[test]
fn a_spec_can_merge_every_body_by_section() {
    let spec = std::fs::read_to_string(crate::it::support::shipped_spec_path())
        .unwrap()
        .replace("    sections: on-request", "    sections: always");
    let sb = Sandbox::with_spec(&spec);
    sb.write("base", "pdf/SKILL.md", UPSTREAM);
    sb.write("team", "pdf/SKILL.md", "---\n---\n## House style\nMine.\n");
    let v = sb.resolve_value("pdf");
    let body = v["body"].as_str().unwrap();
    assert!(body.starts_with("Use pdfplumber."), "{body}");
    assert!(body.ends_with("## House style\nMine."), "{body}");
}

/// A section-merged body is exported as the body, and the export, read
/// back as a lone base layer, is the same skill.
#[test]
fn the_merged_body_is_exported_and_reads_back_the_same() {
    let sb = upstream();
    sb.write("team", "pdf/SKILL.md", format!("---\n---\n{CHANGES}"));
    sb.export_skills("out").ok();
    let exported = std::fs::read_to_string(sb.path().join("out/pdf/SKILL.md")).unwrap();
    assert!(
        exported.ends_with(&format!("---\n\n{MERGED}\n")),
        "{exported}"
    );
    let back = Sandbox::new();
    back.write("base", "pdf/SKILL.md", exported);
    assert_eq!(back.resolve_value("pdf")["body"], MERGED);
}

/// A body of sections: a preamble and headed sections, some holding a
/// fenced block with a heading-like line.
fn sectioned() -> impl Strategy<Value = Vec<(String, String)>> {
    prop::collection::vec(
        (
            "[A-Z][a-z]{1,6}",
            prop_oneof![
                "[a-z ]{1,20}".prop_map(|s| format!("{s}\n")),
                Just("```\n## fenced\n```\n".to_owned()),
            ],
        ),
        1..6,
    )
}

fn render(sections: &[(String, String)]) -> String {
    let mut out = String::from("Intro.\n\n");
    for (h, text) in sections {
        out.push_str(&format!("## {h}\n\n{text}\n"));
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, ..ProptestConfig::default() })]

    /// Upstream sections and a team's changes of every kind: exported and
    /// read back as a lone base layer, the effective body is the same.
    #[test]
    fn section_merged_bodies_round_trip_through_export(
        upstream in sectioned(),
        changes in prop::collection::vec((0usize..8, 0usize..4, "[a-z ]{1,12}"), 1..6),
    ) {
        let sb = Sandbox::new();
        sb.write("base", "s/SKILL.md", format!("---\ndescription: d\n---\n\n{}", render(&upstream)));
        let mut team = String::from("<!-- $patch: sections -->\n");
        for (i, (which, op, text)) in changes.iter().enumerate() {
            let heading = upstream
                .get(*which)
                .map_or_else(|| format!("New{i}"), |(h, _)| h.clone());
            match op {
                0 => team.push_str(&format!("## {heading}\n\n{text}\n\n")),
                1 => team.push_str(&format!("## {heading}\n<!-- $patch: delete -->\n\n")),
                2 => team.push_str(&format!("<!-- $patch: before \"{heading}\" -->\n{text}\n\n")),
                _ => team.push_str(&format!("<!-- $patch: after \"{heading}\" -->\n{text}\n\n")),
            }
        }
        sb.write("team", "s/SKILL.md", format!("---\n---\n{team}"));
        let merged = sb.resolve_value("s")["body"].clone();
        sb.export_skills("out").success();
        let back = Sandbox::new();
        back.write("base", "s/SKILL.md", std::fs::read(sb.path().join("out/s/SKILL.md")).unwrap());
        prop_assert_eq!(back.resolve_value("s")["body"].clone(), merged);
    }
}

/// Issue 42: a section with a plain heading the lower layers lack is a
/// warning until the layer says it is an addition, in every form a body is
/// written in (SKILL.md, YAML, TOML).
#[test]
fn an_addition_is_marked_in_every_form_and_an_unmarked_one_warns() {
    let sb = upstream();
    let forms = [
        (
            "pdf/SKILL.md",
            "---\n---\n<!-- $patch: sections -->\n## Notes\n<!-- $patch: add -->\nOurs.\n",
        ),
        (
            "pdf.yaml",
            "body: |\n  <!-- $patch: sections -->\n  ## Notes\n  <!-- $patch: add -->\n  Ours.\n",
        ),
        (
            "pdf.toml",
            "body = \"\"\"\n<!-- $patch: sections -->\n## Notes\n<!-- $patch: add -->\nOurs.\n\"\"\"\n",
        ),
    ];
    for (file, text) in forms {
        let sb = upstream();
        sb.write("team", file, text);
        sb.run(&["validate", "--strict"]).ok();
        assert!(
            body(&sb).trim_end().ends_with("## Notes\nOurs."),
            "{file}: {}",
            body(&sb)
        );
        let unmarked: String = text
            .lines()
            .filter(|l| !l.contains("$patch: add"))
            .map(|l| format!("{l}\n"))
            .collect();
        sb.write("team", file, unmarked);
        let run = sb.run(&["validate", "--strict"]);
        assert_eq!(run.code, Some(1), "{file}: {run:?}");
        assert!(
            run.stdout
                .contains("'body[Notes]': no lower layer has this heading"),
            "{file}: {run:?}"
        );
    }
    // A near miss says only what it is.
    sb.write(
        "team",
        "pdf/SKILL.md",
        "---\n---\n<!-- $patch: sections -->\n## usage\nOurs.\n",
    );
    let run = sb.run(&["validate"]);
    assert!(
        run.stdout.contains("differs only in case or spacing"),
        "{run:?}"
    );
    assert!(
        !run.stdout
            .contains("no lower layer has this heading, so the section is added at the end"),
        "{run:?}"
    );
}

/// Issue 42: a `$patch: end` insertion after a section that ends in a list
/// became the last item's lazy continuation (`- Read it.\nCite the page.`
/// is one list item in Markdown), and one after a paragraph or a quote
/// joined it. An insertion is a block of its own: a blank line separates
/// it from the text above unless one is there already.
#[test]
fn an_insertion_never_joins_the_block_above_it() {
    let sb = Sandbox::new();
    let steps = "## Steps\n\n- Open it.\n- Read it.\n";
    for (base, layer, merged) in [
        // A list that ends the body, as `end` finds it.
        (
            steps,
            "<!-- $patch: end -->\nCite the page.\n",
            "## Steps\n\n- Open it.\n- Read it.\n\nCite the page.",
        ),
        // The same, the text starting with a blank line: no second one.
        (
            steps,
            "<!-- $patch: end -->\n\nCite the page.\n",
            "## Steps\n\n- Open it.\n- Read it.\n\nCite the page.",
        ),
        // A list item with a lazy continuation line.
        (
            "## Steps\n\n- Open it\nand read it.\n",
            "<!-- $patch: end -->\nCite the page.\n",
            "## Steps\n\n- Open it\nand read it.\n\nCite the page.",
        ),
        // A list that ends a section, then a paragraph, then a quote.
        (
            "## Steps\n\n- Open it.\n- Read it.\n## Notes\n\nKeep it short.\n> Quoted.\n",
            "<!-- $patch: after \"Steps\" -->\nCite the page.\n\
             <!-- $patch: before \"Notes\" -->\nThen:\n<!-- $patch: end -->\nThanks.\n",
            "## Steps\n\n- Open it.\n- Read it.\n\nCite the page.\n\nThen:\n\n## Notes\n\n\
             Keep it short.\n> Quoted.\n\nThanks.",
        ),
    ] {
        sb.write(
            "base",
            "pdf/SKILL.md",
            format!("---\ndescription: d\n---\n{base}"),
        );
        sb.write(
            "team",
            "pdf/SKILL.md",
            format!("---\n---\n<!-- $patch: sections -->\n{layer}"),
        );
        assert_eq!(body(&sb), merged, "{layer}");
    }
}
