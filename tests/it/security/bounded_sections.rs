//! Issue 28, items 2 and 9: section and explain inputs cost time linear in
//! their size, and a value merged by section is bounded by the size cap.
//! These check the results on large shapes, and the bound; the time and
//! memory are `benches/adversarial`'s.

use crate::it::support::Sandbox;

const MARKER: &str = "<!-- $patch: sections -->\n";

/// `n` sections, `## h0` to `## h{n-1}`, each over one line of text.
fn headings(n: usize) -> String {
    (0..n).map(|i| format!("## h{i}\nx\n")).collect()
}

/// A base `SKILL.md` whose body is `body` (its first line is the file's 4th).
fn base(sb: &Sandbox, body: &str) {
    sb.write(
        "base",
        "s/SKILL.md",
        format!("---\ndescription: d\n---\n{body}"),
    );
}

/// Under a 3,200-byte cap, a value may be merged by section from 100
/// sections and changes (one per 32 bytes).
const CAP: &str = "3200";

#[test]
fn a_layer_whose_changes_pass_the_sections_cap_is_refused_at_the_change() {
    let sb = Sandbox::new();
    // The preamble and 99 sections: 100, the most the cap allows.
    base(&sb, &headings(99));
    // The team's first change is the 101st.
    sb.write(
        "team",
        "s/SKILL.md",
        format!("---\n---\n{MARKER}## h5\nnew\n"),
    );
    for cmd in ["show", "explain"] {
        let (line, _, message) = sb
            .run(&["--max-fragment-bytes", CAP, cmd, "s"])
            .located_error("team/s/SKILL.md");
        assert_eq!(line, 4, "{cmd}: at the change's line");
        assert!(
            message.contains("'body': merging it by section takes more than 100 sections"),
            "{message}"
        );
        assert!(message.contains("--max-fragment-bytes"), "{message}");
    }
    let run = sb.run(&["--max-fragment-bytes", CAP, "validate"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.report().starts_with(
            "[ROOT]/layers/team/s/SKILL.md:4:1: error: 'body': merging it by section takes more than 100"
        ),
        "{}",
        run.stdout
    );
    // The suggestion works: a larger cap allows more.
    let run = sb.run(&["--max-fragment-bytes", "6400", "show", "s"]);
    let body = run.json()["body"].as_str().unwrap().to_owned();
    assert!(body.contains("## h5\nnew\n"), "{body}");
    sb.run(&["--max-fragment-bytes", "6400", "validate", "--strict"])
        .ok();
}

#[test]
fn a_lower_body_split_past_the_sections_cap_is_refused_at_its_heading() {
    let sb = Sandbox::new();
    base(&sb, &headings(150));
    sb.write(
        "team",
        "s/SKILL.md",
        format!("---\n---\n{MARKER}## h5\nnew\n"),
    );
    let (line, _, message) = sb
        .run(&["--max-fragment-bytes", CAP, "show", "s"])
        .located_error("base/s/SKILL.md");
    // The 101st: the preamble, then h0 to h99, which is on body line 198.
    assert_eq!(line, 4 + 198);
    assert!(message.contains("more than 100 sections"), "{message}");
}

#[test]
fn the_sections_cap_counts_only_what_is_merged_by_section() {
    let sb = Sandbox::new();
    // Not merged by section: any number of headings.
    base(&sb, &headings(150));
    sb.run(&["--max-fragment-bytes", CAP, "show", "s"]).ok();
    // A team body that replaces it whole starts the count again.
    sb.write("team", "s/SKILL.md", "---\n---\n## a\nteam\n");
    sb.write(
        "user",
        "s/SKILL.md",
        format!("---\n---\n{MARKER}## b\n<!-- $patch: add -->\nuser\n"),
    );
    let run = sb.run(&["--max-fragment-bytes", CAP, "show", "s"]);
    assert_eq!(run.json()["body"], "## a\nteam\n\n## b\nuser");
}

#[test]
fn many_sections_and_directives_merge_as_written() {
    // 2,000 sections, `## E` and `## O` in turn; the team writes each
    // again, by occurrence: it deletes every 10th, replaces every 10th from
    // the 5th, inserts before 10 and after 3 of them by occurrence, and
    // names 10 sections no layer has.
    let sb = Sandbox::new();
    let name = |i: usize| if i.is_multiple_of(2) { "E" } else { "O" };
    let mut lower = String::from("Intro.\n");
    for i in 0..2000 {
        lower.push_str(&format!("## {}\nx{i}\n", name(i)));
    }
    base(&sb, &lower);
    let mut team = String::from(MARKER);
    for i in 0..2000 {
        let h = name(i);
        match i % 10 {
            0 => team.push_str(&format!("## {h}\n<!-- $patch: delete -->\n")),
            5 => team.push_str(&format!("## {h}\n<!-- $patch: replace -->\ny{i}\n")),
            _ => team.push_str(&format!("## {h}\nx{i}\n")),
        }
    }
    // The n-th `## E` is section 2(n - 1), the n-th `## O` section 2n - 1.
    for n in (2..=1000).step_by(100) {
        team.push_str(&format!(
            "<!-- $patch: before \"E\" {n} -->\nbefore E {n}\n"
        ));
    }
    for n in [2, 500, 1000] {
        team.push_str(&format!("<!-- $patch: after \"O\" {n} -->\nafter O {n}\n"));
    }
    for n in 0..10 {
        team.push_str(&format!("<!-- $patch: after \"gone{n}\" -->\nnothing\n"));
    }
    sb.write("team", "s/SKILL.md", format!("---\n---\n{team}"));
    let body = sb.run(&["show", "s"]).json_ignoring_stderr()["body"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(body.starts_with("Intro.\n"), "the lower preamble stays");
    assert!(
        !body.contains("\nx0\n") && !body.contains("\nx10\n"),
        "deleted"
    );
    assert!(
        body.contains("## O\ny5\n") && !body.contains("x5\n"),
        "replaced"
    );
    assert!(
        body.contains("## E\nx2\n") && body.contains("## O\nx1999\n"),
        "kept"
    );
    for n in (2..=1000).step_by(100) {
        let i = 2 * (n - 1);
        assert!(
            body.contains(&format!("before E {n}\n\n## E\nx{i}\n")),
            "before E {n}"
        );
    }
    for n in [2, 500, 1000] {
        let i = 2 * n - 1;
        assert!(
            body.contains(&format!("## O\nx{i}\n\nafter O {n}\n")),
            "after O {n}"
        );
    }
    assert!(!body.contains("nothing"));
    assert_eq!(body.matches("## ").count(), 2000 - 200, "each section once");
    // Each stale directive is a warning at its line.
    let run = sb.run(&["validate"]);
    let stale = run
        .stdout
        .matches("names a section no lower layer has")
        .count();
    assert_eq!(stale, 10, "{}", run.stdout);
}

#[test]
fn explain_notes_each_delete_and_a_whole_replacement_only_below_it() {
    let sb = Sandbox::new();
    let keywords: String = (0..2000).map(|i| format!("  - kw{i}\n")).collect();
    let metadata: String = (0..200).map(|i| format!("  k{i}: {{x: {i}}}\n")).collect();
    sb.write(
        "base",
        "s.yaml",
        format!("description: d\ntrigger_keywords:\n{keywords}metadata:\n{metadata}"),
    );
    let deletes: String = (0..1000)
        .map(|i| format!("  - {{$patch: delete, value: kw{}}}\n", 2 * i))
        .collect();
    // `k1` replaced whole: `k10` to `k19` and `k100` to `k199` start with
    // its path but are not below it.
    sb.write(
        "team",
        "s.yaml",
        format!("trigger_keywords:\n{deletes}metadata:\n  k1: {{$patch: replace, a: 1}}\n"),
    );
    let doc = sb.run(&["explain", "s", "--json"]).json();
    let values = doc["values"].as_array().unwrap();
    let removed: Vec<&serde_json::Value> = values.iter().filter(|v| v["removed"] == true).collect();
    assert_eq!(removed.len(), 1000);
    assert!(removed.iter().all(|v| v["changes"][0]["kind"] == "deleted"));
    let kept = values
        .iter()
        .filter(|v| {
            v["field"]
                .as_str()
                .unwrap()
                .starts_with("trigger_keywords[")
                && v["removed"] == false
        })
        .count();
    assert_eq!(kept, 1000);
    let noted: Vec<&str> = values
        .iter()
        .filter(|v| {
            v["changes"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["kind"] == "replaced")
        })
        .map(|v| v["field"].as_str().unwrap())
        .collect();
    assert_eq!(noted, ["metadata.k1.a"]);
}
