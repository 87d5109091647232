//! Input within the caps that used to cost quadratic time or unbounded
//! memory ("no quadratic or unbounded work"). Each test asserts what the
//! output is — how many diagnostics, which line, which refusal — not how
//! fast it came; `QUICK` in `support.rs` only guards against a hang. The
//! figures themselves are checked by `benches/adversarial`.

use std::fmt::Write as _;

use crate::it::support::{QUICK, Run, Sandbox};

/// `validate`'s diagnostic lines about `file` (below `[ROOT]/layers/`).
fn lines_about<'a>(run: &'a Run, file: &str) -> Vec<&'a str> {
    let prefix = format!("[ROOT]/layers/{file}:");
    run.stdout
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .collect()
}

/// `path:L:C: severity: message` → `(L, C)`.
fn line_col(diagnostic: &str) -> (usize, usize) {
    let mut parts = diagnostic.splitn(4, ':').skip(1);
    let mut num = || parts.next().and_then(|s| s.parse().ok()).unwrap();
    (num(), num())
}

/// Took 89.6 s with 20,000 unknown fields (a full walk of the source to
/// locate each one, and no cap on how many were reported).
#[test]
fn twenty_thousand_unknown_fields_give_fifty_located_errors_and_a_count() {
    let sb = Sandbox::new();
    let mut text = String::from("description: fine\n");
    for i in 0..20_000 {
        let _ = writeln!(text, "u{i:05}: {i}");
    }
    sb.write("base", "s.yaml", &text);
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.elapsed < QUICK, "took {:?}", run.elapsed);
    let lines = lines_about(&run, "base/s.yaml");
    assert_eq!(lines.len(), 51, "{}", run.stdout);
    for (i, line) in lines[..50].iter().enumerate() {
        assert_eq!(line_col(line), (i + 2, 1), "{line}");
        assert!(
            line.ends_with(&format!("error: unknown field 'u{i:05}'")),
            "{line}"
        );
    }
    assert!(
        lines[50].ends_with(
            "s.yaml: error: 19950 more problem(s) in this file not shown; fix the ones above first"
        ),
        "{}",
        lines[50]
    );
    assert!(
        run.stdout
            .ends_with("51 error(s), 0 warning(s) in 1 file(s)\n")
    );
}

/// The first fifty are the first fifty in the file, whatever their names'
/// order, and every kind of problem counts towards the fifty.
#[test]
fn the_problems_shown_are_the_first_ones_in_the_file() {
    let sb = Sandbox::new();
    let mut text = String::new();
    for i in (0..200).rev() {
        let _ = writeln!(text, "u{i:03}: x");
        if i % 10 == 0 {
            let _ = writeln!(text, "author{i}: 5");
        }
    }
    text.push_str("author: 5\n");
    sb.write("base", "s.yaml", &text);
    let run = sb.run(&["validate"]);
    let lines = lines_about(&run, "base/s.yaml");
    assert_eq!(lines.len(), 51, "{}", run.stdout);
    let positions: Vec<_> = lines[..50].iter().map(|l| line_col(l)).collect();
    let expected: Vec<_> = (1..=50).map(|l| (l, 1)).collect();
    assert_eq!(positions, expected);
    assert!(lines[0].ends_with("unknown field 'u199'"), "{}", lines[0]);
    assert!(lines[50].contains("171 more problem(s)"), "{}", lines[50]);
}

#[test]
fn unknown_fields_in_toml_and_skill_md_are_capped_and_located_too() {
    let sb = Sandbox::new();
    let mut toml = String::from("description = \"fine\"\n");
    let mut md = String::from("---\ndescription: fine\n");
    for i in 0..20_000 {
        let _ = writeln!(toml, "t{i:05} = {i}");
        let _ = writeln!(md, "m{i:05}: {i}");
    }
    md.push_str("---\n\n# Body\n");
    sb.write("team", "s.toml", &toml);
    sb.write("base", "s/SKILL.md", &md);
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    for (file, first_line, name) in [("team/s.toml", 2, "t"), ("base/s/SKILL.md", 3, "m")] {
        let lines = lines_about(&run, file);
        assert_eq!(lines.len(), 51, "{file}");
        assert_eq!(line_col(lines[0]), (first_line, 1), "{}", lines[0]);
        assert_eq!(line_col(lines[49]), (first_line + 49, 1), "{}", lines[49]);
        assert!(lines[49].ends_with(&format!("unknown field '{name}00049'")));
        assert!(lines[50].contains("19950 more problem(s)"), "{}", lines[50]);
    }
}

/// A suggestion is only looked for among the errors shown, and a long name
/// is quoted as an excerpt.
#[test]
fn a_four_mib_unknown_field_name_is_quoted_as_an_excerpt() {
    let sb = Sandbox::new();
    let name = "n".repeat(4 * 1024 * 1024 - 100);
    // A simple key is at most 1024 characters long; `?` marks a longer one.
    sb.write("base", "s.yaml", format!("descripton: x\n? {name}\n: 1\n"));
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.stdout.len() < 2000, "{} bytes", run.stdout.len());
    let lines = lines_about(&run, "base/s.yaml");
    assert!(
        lines[0].ends_with("unknown field 'descripton' (did you mean 'description'?)"),
        "{}",
        lines[0]
    );
    assert_eq!(line_col(lines[1]), (2, 3));
    assert!(lines[1].ends_with(&format!("unknown field '{}…'", "n".repeat(120))));
}

/// Took 60 s with 20,000 repeated `metadata` keys (one walk of the source
/// per warning), and printed all 20,000.
#[test]
fn twenty_thousand_no_effect_warnings_give_fifty_and_a_count() {
    let sb = Sandbox::new();
    let mut text = String::from("description: d\nmetadata:\n");
    for i in 0..20_000 {
        let _ = writeln!(text, "  k{i:05}: v");
    }
    sb.write("base", "s.yaml", &text);
    sb.write("team", "s.yaml", &text);
    let run = sb.run(&["validate", "--strict"]);
    assert_eq!(run.code, Some(1), "{run:#?}");
    assert!(run.elapsed < QUICK, "took {:?}", run.elapsed);
    assert!(lines_about(&run, "base/s.yaml").is_empty());
    let lines = lines_about(&run, "team/s.yaml");
    assert_eq!(lines.len(), 51, "{}", run.stdout);
    assert_eq!(line_col(lines[0]), (1, 14));
    assert!(
        lines[0].contains("warning: 'description' is set to the same value as in the base layer")
    );
    for (i, line) in lines[1..50].iter().enumerate() {
        assert_eq!(line_col(line), (i + 3, 11), "{line}");
        assert!(
            line.contains(&format!("'metadata.k{i:05}' is set to the same value")),
            "{line}"
        );
    }
    assert!(
        lines[50]
            .ends_with("team/s.yaml: warning: and 19951 more warning(s) about this file not shown"),
        "{}",
        lines[50]
    );
    assert!(
        run.stdout
            .ends_with("0 error(s), 51 warning(s) in 2 file(s)\n")
    );
    // Without --strict the warnings do not fail the run.
    assert_eq!(sb.run(&["validate"]).code, Some(0));
}

fn twenty_thousand_keywords() -> Sandbox {
    let sb = Sandbox::new();
    let mut base = String::from("description: d\ntrigger_keywords:\n");
    for i in 0..10_000 {
        let _ = writeln!(base, "  - b{i}");
    }
    let mut user = String::from("trigger_keywords = [\n");
    for i in 0..10_000 {
        let _ = writeln!(user, "  \"u{i}\",");
    }
    user.push_str("]\n");
    sb.write("base", "s.yaml", base);
    sb.write("user", "s.toml", user);
    sb
}

/// `explain` and `show --origins` took 142 s over 40,000 keywords (a walk
/// of the source per value); one `explain` of the last one took 8 s.
#[test]
fn explain_and_origins_over_twenty_thousand_keywords_find_each_line() {
    let sb = twenty_thousand_keywords();
    let quick = |run: Run| {
        assert!(run.elapsed < QUICK, "took {:?}", run.elapsed);
        run
    };
    let run = quick(sb.run(&["explain", "s", "trigger_keywords[19999]", "--json"]));
    let v: serde_json::Value = serde_json::from_str(run.ok()).unwrap();
    let row = &v["values"][0];
    assert_eq!(row["value"], "u9999");
    assert_eq!(row["origin"]["layer"], "user");
    assert_eq!(row["origin"]["line"], 10_001);
    let run = quick(sb.run(&["explain", "s", "trigger_keywords[9999]", "--json"]));
    let v: serde_json::Value = serde_json::from_str(run.ok()).unwrap();
    assert_eq!(v["values"][0]["origin"]["line"], 10_002);

    let all = quick(sb.run(&["explain", "s", "--json"]));
    let v: serde_json::Value = serde_json::from_str(all.ok()).unwrap();
    let rows = v["values"].as_array().unwrap();
    let keyword_lines: Vec<_> = rows
        .iter()
        .filter(|r| {
            r["field"]
                .as_str()
                .unwrap()
                .starts_with("trigger_keywords[")
        })
        .map(|r| r["origin"]["line"].as_u64().unwrap())
        .collect();
    let expected: Vec<u64> = (3..10_003).chain(2..10_002).collect();
    assert_eq!(keyword_lines, expected);

    let origins = quick(sb.run(&["show", "s", "--origins"]));
    let out = origins.ok();
    let last = out.lines().find(|l| l.contains("\"u9999\"")).unwrap();
    assert!(
        last.ends_with("# user:[ROOT]/layers/user/s.toml:10001"),
        "{last}"
    );
    let first = out.lines().find(|l| l.contains("\"b0\"")).unwrap();
    assert!(
        first.ends_with("# base:[ROOT]/layers/base/s.yaml:3"),
        "{first}"
    );
}

/// A 1 MiB string and 10,000 aliases to it (a 1 MB file) passed `validate`
/// using 10 GB of memory.
#[test]
fn a_string_aliased_ten_thousand_times_is_refused_at_the_first_alias() {
    let sb = Sandbox::new();
    let mut text = String::from("description: d\nmetadata:\n  s: &s \"");
    text.push_str(&"x".repeat(1 << 20));
    text.push_str("\"\n  l: [");
    text.push_str(&vec!["*s"; 10_000].join(", "));
    text.push_str("]\n");
    sb.write("base", "s.yaml", &text);
    for args in [&["show", "s"][..], &["explain", "s"]] {
        let (line, col, msg) = sb.run(args).located_error("base/s.yaml");
        assert_eq!((line, col), (4, 7));
        assert!(
            msg.starts_with("aliases expand to more than 4354") && msg.contains("bytes of text"),
            "{msg}"
        );
    }
    let run = sb.run(&["validate"]);
    assert_eq!(run.code, Some(1));
    assert!(
        run.report()
            .starts_with("[ROOT]/layers/base/s.yaml:4:7: error: aliases expand")
    );
}

/// Three levels of thousand-fold aliases: a billion strings from 15 KB.
#[test]
fn a_billion_laughs_is_refused_at_the_first_alias() {
    let sb = Sandbox::new();
    let mut text = format!("metadata:\n  a0: &a0 [{}]\n", vec!["lol"; 1000].join(", "));
    for i in 1..3 {
        let refs = vec![format!("*a{}", i - 1); 1000].join(", ");
        let _ = writeln!(text, "  a{i}: &a{i} [{refs}]");
    }
    sb.write("team", "s.yaml", &text);
    let (line, col, msg) = sb.run(&["show", "s"]).located_error("team/s.yaml");
    assert_eq!((line, col), (3, 12));
    assert_eq!(
        msg,
        "aliases expand to more than 65537 values, the most a file of up to 65536 bytes may \
         hold (one per byte); write the values out or use fewer aliases"
    );
    // The same in a SKILL.md frontmatter, located in the whole file.
    sb.write("user", "s/SKILL.md", format!("---\n{text}---\nBody\n"));
    let (line, col, _) = sb.run(&["show", "s"]).located_error("team/s.yaml");
    assert_eq!((line, col), (3, 12));
    let run = sb.run(&["validate"]);
    assert!(
        run.stdout
            .contains("[ROOT]/layers/user/s/SKILL.md:4:12: error: aliases expand"),
        "{run:#?}"
    );
}

/// The spec is read with the same YAML parser, and given the same budget.
#[test]
fn a_spec_whose_aliases_explode_is_refused() {
    let sb = Sandbox::new();
    let mut spec =
        String::from("version: 1\nfields:\n  metadata: {strategy: DEEP_MERGE}\nx:\n  a0: &a0 [");
    spec.push_str(&vec!["lol"; 1000].join(", "));
    spec.push_str("]\n");
    for i in 1..3 {
        let refs = vec![format!("*a{}", i - 1); 1000].join(", ");
        let _ = writeln!(spec, "  a{i}: &a{i} [{refs}]");
    }
    let path = sb.write_file("spec.yaml", &spec);
    let run = sb.run(&["--spec", path.to_str().unwrap(), "validate", "--spec-only"]);
    let stderr = run.failed();
    assert!(
        stderr
            .starts_with("[ROOT]/spec.yaml:6:12: error: aliases expand to more than 65537 values"),
        "{stderr}"
    );
}

/// A spec with a million keys listed every one of them in its error (8.9 MB
/// of output).
#[test]
fn a_spec_error_names_a_handful_of_unknown_keys_and_counts_the_rest() {
    let sb = Sandbox::new();
    let mut spec = String::from("version: 1\nfields: {}\n");
    // 80,000 keys: as many as fit under the 1 MiB cap on a spec's size.
    for i in 0..80_000 {
        let _ = writeln!(spec, "k{i:06}: 0");
    }
    let path = sb.write_file("spec.yaml", &spec);
    let run = sb.run(&["--spec", path.to_str().unwrap(), "validate", "--spec-only"]);
    let stderr = run.failed();
    assert_eq!(
        stderr,
        "[ROOT]/spec.yaml:3:1: error: unknown attributes 'k000000', 'k000001', 'k000002', \
         'k000003', 'k000004' and 79995 more\n"
    );
}

/// Spec values quoted in messages are excerpts.
#[test]
fn spec_errors_quote_excerpts_of_long_values() {
    let sb = Sandbox::new();
    // Half a MiB: within the cap on a spec's size.
    let long = "W".repeat(1 << 19);
    for (spec, expected_start) in [
        (
            format!("version: 1\nfields:\n  f: {{strategy: {long}}}\n"),
            "[ROOT]/spec.yaml:3:17: error: field 'f': unknown strategy 'WWW",
        ),
        (
            format!(
                "version: 1\nfields:\n  f: {{strategy: OVERRIDE, type: string, default: [{long}]}}\n"
            ),
            "[ROOT]/spec.yaml:3:50: error: field 'f': default [\"WWW",
        ),
        (
            format!("version: 1\nname_field: {long}\nfields:\n  f: {{strategy: OVERRIDE}}\n"),
            "[ROOT]/spec.yaml:2:13: error: name_field 'WWW",
        ),
        (
            format!("version: 1\nfields:\n  ? {long}\n  : {{strategy: APPEND, items: 5}}\n"),
            "[ROOT]/spec.yaml:4:31: error: field 'WWW",
        ),
    ] {
        let path = sb.write_file("spec.yaml", &spec);
        let run = sb.run(&["--spec", path.to_str().unwrap(), "validate", "--spec-only"]);
        let stderr = run.failed();
        assert!(
            stderr.len() < 1000,
            "{} bytes: {}",
            stderr.len(),
            &stderr[..200]
        );
        assert!(stderr.starts_with(expected_start), "{stderr}");
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
}

/// Values and keys a fragment's messages quote are excerpts too.
#[test]
fn fragment_errors_and_warnings_quote_excerpts_of_long_values() {
    // The classic spec: the shipped one also caps a name at 64 characters.
    let sb = Sandbox::classic();
    let long = "q".repeat(1 << 20);
    sb.write(
        "base",
        "a.yaml",
        format!("metadata:\n  ? {long}\n  : 1\n  ? {long}\n  : 2\n"),
    );
    sb.write("base", "b.yaml", format!("name: {long}\n"));
    sb.write("base", "c.yaml", format!("references: [{long}, {long}]\n"));
    sb.write(
        "base",
        "d.toml",
        format!("\"{long}\" = 1\n\"{long}\" = 2\n"),
    );
    let run = sb.run(&["validate"]);
    assert_eq!(
        run.code,
        Some(1),
        "{}",
        &run.stdout[..run.stdout.len().min(500)]
    );
    assert!(run.stdout.len() < 4000, "{} bytes", run.stdout.len());
    let excerpt = format!("{}…", "q".repeat(120));
    for (file, contains) in [
        ("base/a.yaml", format!("duplicate key '{excerpt}'")),
        (
            "base/b.yaml",
            format!("'name' is '{excerpt}' but the file is named 'b'"),
        ),
        (
            "base/c.yaml",
            format!("repeats the identity name={excerpt} of entry 0"),
        ),
        ("base/d.toml", "duplicate key".into()),
    ] {
        let lines = lines_about(&run, file);
        assert_eq!(lines.len(), 1, "{file}: {lines:?}");
        assert!(lines[0].contains(&contains), "{file}: {}", lines[0]);
    }
}

/// A keyed-replace spec with many keys lists a handful in each message.
#[test]
fn messages_name_a_handful_of_a_specs_keys() {
    let sb = Sandbox::new();
    let keys: Vec<String> = (0..1000).map(|i| format!("key{i}")).collect();
    let spec = format!(
        "version: 1\nfields:\n  refs: {{strategy: KEYED_REPLACE, keys: [{}]}}\n",
        keys.join(", ")
    );
    let path = sb.write_file("spec.yaml", &spec);
    sb.write("base", "s.yaml", "refs: [{url: x}]\n");
    let run = sb.run(&["--spec", path.to_str().unwrap(), "show", "s"]);
    let (_, _, msg) = run.located_error("base/s.yaml");
    assert_eq!(
        msg,
        "entry 0 of 'refs' has no key: give it one of key0, key1, key2, key3, key4 and 995 more"
    );
    sb.write("base", "s.yaml", "refs: 5\n");
    let run = sb.run(&["--spec", path.to_str().unwrap(), "show", "s"]);
    let (_, _, msg) = run.located_error("base/s.yaml");
    assert!(
        msg.ends_with("with a key0, key1, key2, key3, key4 and 995 more, got an integer"),
        "{msg}"
    );
}

/// A long key above many values: every merged value's origin held the
/// whole path, so a 0.5 MB file cost gigabytes to merge and `explain`
/// printed the key in every row. Refused when read, at the file.
#[test]
fn a_long_key_above_many_values_is_refused_when_read() {
    let sb = Sandbox::new();
    let key = "k".repeat(256 * 1024);
    let mut text = format!("description: d\nmetadata:\n  ? {key}\n  :\n");
    for i in 0..20_000 {
        let _ = writeln!(text, "    v{i}: 1");
    }
    sb.write("base", "s.yaml", &text);
    for args in [&["validate"][..], &["show", "s"], &["explain", "s"]] {
        let run = sb.run(args);
        assert_eq!(run.code, Some(1), "{args:?}");
        let all = format!("{}{}", run.stdout, run.stderr);
        assert!(
            all.contains("[ROOT]/layers/base/s.yaml:1:1: error: the paths of this file's values add up to over 16777216 bytes"),
            "{args:?}: {}",
            &all[..all.len().min(400)]
        );
        assert!(all.len() < 1000, "{args:?}: {} bytes", all.len());
    }
}

/// 524,285 one-entry mappings (a 4 MiB file) took 570–767 MiB to read: a
/// mapping is a B-tree node of about 600 bytes whatever its text. A file may
/// hold one mapping per 32 bytes of the size cap; past that it is refused at
/// the mapping that passes it.
#[test]
fn a_file_of_tiny_mappings_is_refused_past_one_per_32_bytes_of_the_cap() {
    let sb = Sandbox::new();
    let maps = |n: usize| {
        format!(
            "description: d\nmetadata:\n  maps: [{}]\n",
            vec!["{a: 1}"; n].join(", ")
        )
    };
    // The root and `metadata` count: 100 mappings under a 3,200-byte cap.
    sb.write("base", "s.yaml", maps(98));
    sb.run(&["--max-fragment-bytes", "3200", "show", "s"]).ok();
    sb.write("base", "s.yaml", maps(99));
    let run = sb.run(&["--max-fragment-bytes", "3200", "show", "s"]);
    let (line, col, msg) = run.located_error("base/s.yaml");
    assert_eq!((line, col), (3, 10 + 8 * 98));
    assert_eq!(
        msg,
        "file holds more than 100 mappings, one per 32 bytes of the 3200-byte size limit; a \
         mapping costs far more memory than its text (raise the limit with --max-fragment-bytes)"
    );
}
