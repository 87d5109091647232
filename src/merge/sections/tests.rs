use super::*;

const UPSTREAM: &str = "Intro.\n\n## Usage\n\nRun it.\n\n## Output\n\nWrite JSON.\n\n```md\n## Not a heading\n```\n\n## Legacy\n\nOld.\n";

type Origin = (&'static str, usize);

fn merged(lower: &str, layer: &str) -> (String, Vec<Applied<'static, Origin>>) {
    let lower: &'static str = Box::leak(lower.to_owned().into_boxed_str());
    let layer: &'static str = Box::leak(layer.to_owned().into_boxed_str());
    let base = pieces(lower, &|l| ("base", l));
    let ops = ops(layer).unwrap();
    let (out, applied) = apply(base, ops, &|l| ("team", l));
    let adjacent = |a: &Piece<Origin>, b: &Piece<Origin>| {
        a.origin.0 == b.origin.0 && a.origin.1 + a.text.lines().count() == b.origin.1
    };
    (join(&out, &adjacent), applied)
}

#[test]
fn sections_split_at_headings_outside_code_fences() {
    let s = split(UPSTREAM);
    let keys: Vec<String> = s.iter().map(|s| s.key.label()).collect();
    assert_eq!(keys, ["(preamble)", "Usage", "Output", "Legacy"]);
    assert!(s[2].text.contains("## Not a heading"));
    assert_eq!(s[1].line, 2);
    assert_eq!(
        s.iter().map(|s| s.text.as_ref()).collect::<String>(),
        UPSTREAM,
        "the sections are the body, byte for byte"
    );
}

#[test]
fn headings_are_atx_with_optional_closing_hashes() {
    assert_eq!(heading("## Usage ##\n"), Some((2, "Usage")));
    assert_eq!(heading("###### C#\n"), Some((6, "C#")));
    assert_eq!(heading("#hashtag\n"), None);
    assert_eq!(heading("    ## code\n"), None);
    assert_eq!(heading("####### seven\n"), None);
    assert_eq!(heading("#\n"), Some((1, "")));
}

#[test]
fn add_replace_delete_and_insert() {
    let layer = "<!-- $patch: sections -->\n\
                 ## House style\n\nFollow references/house-style.md.\n\n\
                 ## Output\n\nWrite CSV.\n\n\
                 ## Legacy\n<!-- $patch: delete -->\n\n\
                 <!-- $patch: before \"Usage\" -->\nRead the house style first.\n\n\
                 <!-- $patch: end -->\nThanks.\n";
    let (body, applied) = merged(UPSTREAM, layer);
    assert_eq!(
        body,
        "Intro.\n\nRead the house style first.\n\n## Usage\n\nRun it.\n\n## Output\n\nWrite CSV.\n\n\
         ## House style\n\nFollow references/house-style.md.\n\nThanks.\n"
    );
    let [Applied::Deleted { key, line, removed }] = applied.as_slice() else {
        panic!("{applied:?}");
    };
    assert_eq!((key.label().as_str(), *line), ("Legacy", 10));
    assert_eq!(removed.text, "## Legacy\n\nOld.\n");
    assert_eq!(removed.origin, ("base", 14));
}

#[test]
fn start_goes_after_the_preamble_and_after_follows_a_section() {
    let layer = "<!-- $patch: sections -->\n<!-- $patch: start -->\nFirst.\n\
                 <!-- $patch: after \"Usage\" -->\nAlso this.\n";
    let (body, _) = merged(UPSTREAM, layer);
    assert!(
        body.starts_with("Intro.\n\nFirst.\n\n## Usage\n\nRun it.\n\nAlso this.\n"),
        "{body}"
    );
}

#[test]
fn a_directive_naming_a_missing_heading_is_stale() {
    let layer = "<!-- $patch: sections -->\n## Gone\n<!-- $patch: delete -->\n\
                 <!-- $patch: after \"Renamed\" -->\nx\n\
                 ## Setup\n<!-- $patch: replace -->\nNew.\n";
    let (body, applied) = merged(UPSTREAM, layer);
    let stale: Vec<(&str, &str)> = applied
        .iter()
        .filter_map(|a| match a {
            Applied::Stale { key, what, .. } => Some((key.heading.as_str(), *what)),
            _ => None,
        })
        .collect();
    assert_eq!(
        stale,
        [
            ("Gone", "delete"),
            ("Setup", "replace"),
            ("Renamed", "after")
        ]
    );
    // The replace that found nothing still adds its section, without the
    // directive line.
    assert!(body.ends_with("## Setup\nNew.\n"), "{body}");
}

#[test]
fn duplicate_headings_are_matched_in_order() {
    let lower = "## Example\none\n## Example\ntwo\n";
    let layer = "<!-- $patch: sections -->\n## Example\nuno\n## Example\ndos\n";
    assert_eq!(
        merged(lower, layer).0,
        // Written one after the other by the layer, they stay as written.
        "## Example\nuno\n## Example\ndos\n"
    );
    let layer = "<!-- $patch: sections -->\n<!-- $patch: after \"Example\" 2 -->\nthree\n";
    assert_eq!(
        merged(lower, layer).0,
        "## Example\none\n## Example\ntwo\nthree\n"
    );
}

#[test]
fn the_preamble_is_replaced_by_a_layer_preamble() {
    let layer = "<!-- $patch: sections -->\nNew intro.\n\n";
    assert!(
        merged(UPSTREAM, layer)
            .0
            .starts_with("New intro.\n\n## Usage")
    );
}

#[test]
fn unknown_directives_and_text_under_a_delete_are_problems() {
    let e = ops("<!-- $patch: sections -->\n<!-- $patch: befor \"Usage\" -->\nx\n## L\n<!-- $patch: delete -->\ntext\n")
        .unwrap_err();
    assert_eq!(e.len(), 2);
    assert_eq!(e[0].line, 1);
    assert!(
        e[0].message.contains("unknown directive"),
        "{}",
        e[0].message
    );
    assert!(e[1].message.contains("is deleted"), "{}", e[1].message);
}

#[test]
fn asking_is_the_first_non_blank_line() {
    assert!(asks("\n<!-- $patch: sections -->\n## A\n"));
    assert!(!asks("## A\n<!-- $patch: sections -->\n"));
    assert!(!asks("Plain body.\n"));
}
