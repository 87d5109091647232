//! The reader against the one it replaced ([`super::legacy`]: serde_yaml's
//! values through a strict visitor), over every YAML text the repository
//! holds (fragments, SKILL.md frontmatters, specs, fuzz seeds, fixtures),
//! generated documents around every scalar-resolution edge, a deterministic
//! soup of YAML tokens, and any directory named in `YAML_DIFFERENTIAL_DIRS`
//! (colon-separated: a `gen-tree` tree, a fuzz corpus).
//!
//! Where both read a value, it must be the same value. Where one refuses and
//! the other does not, or both refuse for different reasons, the difference
//! must be one of the changes made on purpose ([`Change`]); anything else
//! fails the test. `cargo test --lib differential -- --nocapture` prints the
//! counts.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::error::DiagnosticKind;
use crate::fragment::{DEFAULT_MAX_BYTES, ParseError, markdown};

/// A difference between the two readers made on purpose.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// A tag other than the core schema's: serde_yaml dropped `!!binary`,
    /// `!!set`, `!!python/…` in silence and refused `!custom` with a
    /// message about enums; all are refused alike now.
    Tag,
    /// A core tag on what it does not fit (`!!int x`): both refuse, with a
    /// message naming the tag now.
    TagMismatch,
    /// `!!null` on an empty scalar is null by the core schema; serde_yaml
    /// refused it.
    EmptyTaggedNull,
    /// A number that does not fit: serde_yaml made `1e400` and hex past
    /// 128 bits strings, decimal integers past 128 bits floats, and refused
    /// the rest with a message about u128; all are refused alike now.
    OutOfRange,
    /// A plain `<<` key, which YAML 1.1 readers apply as a merge key.
    MergeKey,
    /// Both refuse for the same reason at another place: nodes are where
    /// yaml-rust2 marks them (as the position index always had them), and
    /// an error met while an alias is expanded is at the alias, not at the
    /// node it names.
    Position,
    /// Both refuse, each with its own parser's syntax message or position.
    SyntaxMessage,
    /// Both refuse, for different reasons, where the text has two problems
    /// and each reader meets another first.
    FirstProblem,
    /// An alias inside the node it names (`&a [*a]`): serde_yaml recursed
    /// until its limit.
    RecursiveAlias,
    /// The root is not a mapping for at least one reader and the other
    /// refuses the text: every caller refuses both (a fragment and a spec
    /// are mappings). Root block scalars with content at column 0 (YAML
    /// 1.2; libyaml wants an indent) and root plain scalars after a tab are
    /// most of these.
    RootNotAMapping,
    /// `"x"#c`: a comment must follow white space (YAML 1.2 [79]); libyaml
    /// took the `#` as a comment anyway.
    CommentAfterQuote,
    /// `a:<TAB>b` in block context: refused as by the yaml-test-suite
    /// (Y79Y) and ruamel; libyaml read it.
    TabAfterColon,
    /// `[-, x]`: a plain scalar cannot start with `-` followed by a flow
    /// indicator (YAML 1.2 [126]); libyaml read a string.
    DashBeforeFlowIndicator,
    /// `...` before any document: a document suffix may start a stream
    /// (YAML 1.2 [211]); libyaml wanted a node.
    SuffixFirst,
    /// A tab where YAML 1.2 allows separation white space (a line of only
    /// tabs, a tab before a node on its line): libyaml refused every tab
    /// outside a scalar, yaml-rust2 reads them as the yaml-test-suite does.
    Tabs,
    /// NEL, LS and PS are line breaks in YAML 1.1 (libyaml) and ordinary
    /// characters in YAML 1.2.
    Yaml11LineBreaks,
    /// A byte order mark after the start: refused now (YAML 1.2 allows it
    /// only before a document); libyaml skipped it or began a document.
    ByteOrderMark,
    /// An anchor name with a character other than a letter, digit, `_` or
    /// `-`: YAML 1.2 [102] allows any but white space and flow indicators
    /// (`&a:b`), YAML 1.1 (libyaml) ended the name there. Or an anchor right
    /// before `{` or `[` (`&b{x: 1}`): yaml-rust2 reads the anchor and the
    /// collection, libyaml refused it (the spec wants a space between; no
    /// reader sees another value).
    AnchorName,
    /// `:` or `?` starting a plain scalar in a flow collection (`{:a}`,
    /// `[?b]`), or a flow key whose `:` is on the next line: YAML 1.2 [126]
    /// and [151] read a scalar or a key where libyaml refused or read an
    /// indicator.
    FlowIndicators,
    /// A block scalar header at its key's column (`a:` then `>` on the next
    /// line): a value must be indented more than its key (YAML 1.2 [199]);
    /// libyaml read it.
    BlockHeaderIndent,
}

/// Does `text` have an anchor or alias whose name YAML 1.1 would end
/// before YAML 1.2 does?
fn has_yaml12_anchor_name(text: &str) -> bool {
    text.match_indices(['&', '*']).any(|(i, _)| {
        text[i + 1..]
            .chars()
            .take_while(|c| !c.is_whitespace() && !",]}".contains(*c))
            .any(|c| !(c.is_ascii_alphanumeric() || c == '_' || c == '-'))
    })
}

type Outcome = Result<Option<Value>, ParseError>;

fn discriminant(kind: &DiagnosticKind) -> std::mem::Discriminant<DiagnosticKind> {
    std::mem::discriminant(kind)
}

/// Why `old` and `new` may differ on `text`, or `None` if they must not.
fn explain(text: &str, old: &Outcome, new: &Outcome) -> Option<Change> {
    use DiagnosticKind as K;
    let old_message = match old {
        Err((_, K::Syntax { message })) => message.as_str(),
        _ => "",
    };
    let new_message = match new {
        Err((_, K::Syntax { message })) => message.as_str(),
        _ => "",
    };
    let not_a_mapping = |o: &Outcome| matches!(o, Ok(Some(v)) if !v.is_object());
    match (old, new) {
        (Ok(a), Ok(b)) if a == b => None,
        _ if text.contains(['\u{85}', '\u{2028}', '\u{2029}']) => Some(Change::Yaml11LineBreaks),
        (_, Err((_, K::UnsupportedTag { .. })))
            if old.is_ok() || old_message.contains("YAML tags") || old_message.contains("enum") =>
        {
            Some(Change::Tag)
        }
        (_, Err((_, K::TagMismatch { .. }))) => Some(Change::TagMismatch),
        (Err(_), Ok(_)) if old_message.contains("expected null") => Some(Change::EmptyTaggedNull),
        (_, Err((_, K::NumberOutOfRange { .. }))) => Some(Change::OutOfRange),
        (_, Err((_, K::NonStringKey { key })))
            if (old.is_ok() || matches!(old, Err((_, K::NonStringKey { .. }))))
                && matches!(
                    super::resolve::scalar(key.clone(), true, None),
                    Ok(super::resolve::Scalar::OutOfRange(_))
                ) =>
        {
            Some(Change::OutOfRange)
        }
        (Ok(_), Err((_, K::MergeKey))) => Some(Change::MergeKey),
        (Err(_), Err(_)) if new_message.contains("holds it") => Some(Change::RecursiveAlias),
        (Err((p, a)), Err((q, b))) if discriminant(a) == discriminant(b) => {
            if p == q && a == b {
                None
            } else if a == b {
                Some(Change::Position)
            } else {
                matches!(a, K::Syntax { .. }).then_some(Change::SyntaxMessage)
            }
        }
        (Err(_), Err(_)) => Some(Change::FirstProblem),
        _ if (not_a_mapping(old) || old.is_err()) && (not_a_mapping(new) || new.is_err()) => {
            Some(Change::RootNotAMapping)
        }
        (Ok(_), Err(_)) if new_message.starts_with("comments must be separated") => {
            Some(Change::CommentAfterQuote)
        }
        (Ok(_), Err(_))
            if new_message.starts_with("':' must be followed by a valid YAML whitespace") =>
        {
            Some(Change::TabAfterColon)
        }
        (Ok(_), Err(_)) if new_message.starts_with("plain scalar cannot start with '-'") => {
            Some(Change::DashBeforeFlowIndicator)
        }
        _ if text.contains('\u{feff}') => Some(Change::ByteOrderMark),
        _ if has_yaml12_anchor_name(text) => Some(Change::AnchorName),
        (Ok(_), Err(_)) if new_message == "simple key expect ':'" && text.contains(">") => {
            Some(Change::BlockHeaderIndent)
        }
        (Err(_), Ok(_)) | (Ok(_), Ok(_))
            if text.contains(['{', '['])
                && (old_message.contains("found unexpected ':'")
                    || old_message.contains("while parsing a flow")
                    || old_message.contains("NonStringKey")
                    || matches!(old, Err((_, K::NonStringKey { .. })))
                    || old.is_ok()) =>
        {
            Some(Change::FlowIndicators)
        }
        (Err(_), Ok(_)) if text.trim_start().starts_with("...") => Some(Change::SuffixFirst),
        (Err(_), Ok(_))
            if text.contains('\t')
                && (old_message.contains("cannot start any token")
                    || old_message.contains("tab character")) =>
        {
            Some(Change::Tabs)
        }
        (Ok(_), Err(_)) if new_message.starts_with("tabs disallowed") => Some(Change::Tabs),
        _ => None,
    }
}

/// The YAML texts under `dir` (recursively, hidden entries included only
/// for `.ci`): whole `.yaml`/`.yml` files, SKILL.md frontmatters, and the
/// fuzz seeds by target.
fn collect(dir: &Path, out: &mut Vec<(String, String)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.filter_map(Result::ok).map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let name = path.display().to_string();
        let parent = path.parent().and_then(Path::file_name);
        let ext = path.extension().and_then(|e| e.to_str());
        let file = path.file_name().and_then(|e| e.to_str());
        let as_yaml =
            matches!(ext, Some("yaml" | "yml")) || parent.is_some_and(|p| p == "load_yaml");
        let as_md = file == Some("SKILL.md") || parent.is_some_and(|p| p == "load_skill_md");
        if parent.is_some_and(|p| p == "merge_layers") {
            for (i, part) in bytes.split(|&b| b == 0).enumerate() {
                if let Some((&form, text)) = part.split_first() {
                    match form % 3 {
                        0 => push_text(format!("{name}#{i}"), text, false, out),
                        1 => push_text(format!("{name}#{i}"), text, true, out),
                        _ => {}
                    }
                }
            }
        } else if as_yaml || as_md {
            push_text(name, &bytes, as_md, out);
        }
    }
}

/// `bytes` as the YAML a fragment of that form would parse (none when a
/// loader refuses it before parsing).
fn push_text(name: String, bytes: &[u8], markdown: bool, out: &mut Vec<(String, String)>) {
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    if markdown {
        if let Ok(markdown::Split {
            frontmatter: Some(fm),
            ..
        }) = markdown::split(text)
        {
            out.push((name, fm.to_owned()));
        }
    } else {
        out.push((name, text.to_owned()));
    }
}

/// Scalars at every edge of the resolution rules.
const SCALARS: &[&str] = &[
    "",
    "~",
    "null",
    "Null",
    "NULL",
    "nULL",
    "true",
    "True",
    "TRUE",
    "tRUE",
    "false",
    "False",
    "FALSE",
    "yes",
    "no",
    "on",
    "off",
    "y",
    "n",
    "0",
    "-0",
    "+0",
    "00",
    "007",
    "-007",
    "+007",
    "08",
    "09.5",
    "0.",
    ".0",
    ".",
    "-.",
    "+.",
    "1.",
    "1.e5",
    "1e5",
    "1E5",
    "1e+5",
    "1e-5",
    "1e",
    "e5",
    "-e5",
    "1_000",
    "1,000",
    "0x",
    "0x0",
    "0xFF",
    "0xff",
    "0XFF",
    "-0x1",
    "+0x1",
    "0x-1",
    "0x+1",
    "+-0x1",
    "-+0x1",
    "-0x-1",
    "0o7",
    "0o8",
    "0O7",
    "-0o7",
    "+0o7",
    "0o",
    "0b1",
    "0b2",
    "-0b1",
    "+0b1",
    "0b",
    "0b1e5",
    "0x1e5",
    "0x1.5",
    "1__0",
    "1 2",
    "+",
    "-",
    "++1",
    "--1",
    "+-1",
    "-+1",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "-9223372036854775809",
    "18446744073709551615",
    "18446744073709551616",
    "-18446744073709551616",
    "340282366920938463463374607431768211455",
    "340282366920938463463374607431768211456",
    "-170141183460469231731687303715884105729",
    "123456789012345678901234567890123456789012345",
    "0xFFFFFFFFFFFFFFFF",
    "0x10000000000000000",
    "0xFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF",
    "0x100000000000000000000000000000000",
    "-0x8000000000000000",
    "-0x8000000000000001",
    "0o1777777777777777777777",
    "0o2000000000000000000000",
    "1e308",
    "1.7976931348623157e308",
    "1.7976931348623159e308",
    "1e309",
    "1e400",
    "-1e400",
    "+1e400",
    "1e-400",
    "4.9e-324",
    "2.4e-324",
    "1e99999999999999999999",
    ".inf",
    ".Inf",
    ".INF",
    "-.inf",
    "+.inf",
    "-.Inf",
    "-.INF",
    "+.INF",
    ".iNF",
    ".nan",
    ".NaN",
    ".NAN",
    "-.nan",
    "+.nan",
    ".Nan",
    "inf",
    "-inf",
    "+inf",
    "infinity",
    "Infinity",
    "-Infinity",
    "INF",
    "nan",
    "NaN",
    "+nan",
    "-nan",
    "1.5",
    "-1.5",
    "+1.5",
    "01.5",
    "-01.5",
    "00.5",
    "0.1",
    "1e5.5",
    "1.5e3",
    "1.5E-3",
    "1.5e+03",
    "5e-1",
    "12:30",
    "12:30:00",
    "1:20",
    "190:20:30",
    "2001-12-14",
    "2001-12-14t21:59:43.10-05:00",
    "<<",
    "=",
    "a b",
    "٣",
    "１",
    "0b1010",
    "0x_1",
    "1e5x",
    "x1e5",
    "true1",
    "null0",
    "~~",
    "0e0",
    "-0.0",
    "+0.0",
    "0e5",
    "01e5",
    "-01e5",
    "1.0",
    "100",
    "1e2",
];

/// Documents that put `s` in every place a scalar goes, tagged and not.
fn scalar_documents(s: &str, out: &mut Vec<(String, String)>) {
    let quoted = format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""));
    for text in [
        format!("k: {s}\n"),
        format!("{s}: v\n"),
        format!("k: [{s}, x]\n"),
        format!("- {s}\n"),
        format!("k: {quoted}\n"),
        format!("k: |\n  {s}\n"),
        format!("k: !!str {s}\n"),
        format!("k: !!int {quoted}\n"),
        format!("k: !!float {quoted}\n"),
        format!("k: !!bool {s}\n"),
        format!("k: !!null {quoted}\n"),
        format!("k: &a {s}\nl: *a\n"),
        format!("{s}\n"),
    ] {
        out.push((format!("scalar {s:?}"), text));
    }
}

/// Documents around every rule of the builder: aliases, keys, tags,
/// documents, nesting, directives and odd syntax.
const DOCUMENTS: &[&str] = &[
    "a: &x {k: [1, 2]}\nb: *x\nc: [*x, 3]\n",
    "a: &x 1\nb: &x 2\nc: *x\n",
    "a: &s str\n*s : v\n",
    "a: &l [1]\n*l : v\n",
    "a: &n 1\n*n : v\n",
    "a: &m <<\n*m : v\n",
    "a: &a [*a]\n",
    "a: &a {b: *a}\n",
    "? &k key\n: v\nb: *k\n",
    "a: &a\n  b: &b [x, y]\n  c: *b\nd: *a\ne: [*a, *b]\n",
    "<<: {a: 1}\nb: 2\n",
    "base: &b {a: 1}\nx:\n  <<: *b\n  c: 2\n",
    "'<<': v\n",
    "\"<<\": v\n",
    "!!str <<: v\n",
    "k: [<<]\n",
    "{<<: v}\n",
    "a: 1\na: 2\n",
    "a: {b: 1, b: 2}\n",
    "a: 1\n'a': 2\n",
    "1: a\n'1': b\n",
    "? [a]\n: b\n",
    "? {a: 1}\n: b\n",
    "[a]: b\n",
    "~: a\n",
    "true: a\n",
    "1.0: a\n",
    "1e400: a\n",
    ".inf: a\n",
    "0x10: a\n",
    "a: !!binary aGVsbG8=\n",
    "a: !!timestamp 2001-12-14\n",
    "a: !!set {x, y}\n",
    "a: !!omap [{x: 1}]\n",
    "a: !!python/object:os.system {x: 1}\n",
    "a: !!python/object/apply:os.system [ls]\n",
    "a: !custom x\n",
    "a: !custom {x: 1}\n",
    "a: ! x\n",
    "a: !<tag:yaml.org,2002:str> 5\n",
    "a: !<!x> 5\n",
    "a: !!map {x: 1}\n",
    "a: !!seq [1]\n",
    "a: !!map [1]\n",
    "a: !!seq {x: 1}\n",
    "a: !!str [1]\n",
    "!!map\na: 1\n",
    "--- !!map\na: 1\n",
    "%TAG !e! tag:example.com,2000:\n---\na: !e!x 1\n",
    "%TAG !! tag:example.com,2000:\n---\na: !!str 1\n",
    "%YAML 1.2\n---\na: 1\n",
    "%YAML 1.1\n---\na: 1\n",
    "a: 1\n---\nb: 2\n",
    "---\na: 1\n...\n---\nb: 2\n",
    "---\na: 1\n...\n",
    "--- a\n",
    "---\n",
    "...\n",
    "",
    "# only\n",
    "--- >\n  folded\n  text\n",
    "a: |+\n  keep\n\n",
    "a: |-\n  strip\n",
    "a: |2\n    indented\n",
    "a: >\n  folded\n\n  para\n",
    "a: \"esc \\x41 \\u00e9 \\U0001F600 \\N \\_ \\L \\P \\t \\0 \\e\"\n",
    "a: \"bad \\q\"\n",
    "a: 'it''s'\n",
    "a: \"multi\n  line\"\n",
    "a: 'multi\n\n  line'\n",
    "a:\tb\n",
    "a:\n\t- b\n",
    "a: b\r\nc: d\r\n",
    "a: [1, 2,]\n",
    "a: {b: 1,}\n",
    "a: [a, b\n",
    "a: {b\n",
    "a: b: c\n",
    "a:\n  - b\n c: d\n",
    "- a\nb: c\n",
    "a: \"unterminated\n",
    "a: 'x' y\n",
    "a: [b, c]d\n",
    "a: @x\n",
    "a: `x\n",
    "a: %x\n",
    "a: &x\n",
    "a: *x\n",
    "a: &x !!str\n",
    "a:\n  &x b: c\n",
    "? a\n? b\n: c\n",
    "? |\n  block key\n: v\n",
    "a: [? b : c]\n",
    "a: [b: c, d]\n",
    "a: {? b}\n",
    "a: {b: }\n",
    "a: {: b}\n",
    "[a, b]\n",
    "\"just a string\"\n",
    "a: - b\n",
    "- - - deep\n    - x\n  - y\n",
    "a: b # comment\n#c: d\n",
    "a: b#not comment\n",
    "a: 'x'#c\n",
    "key with spaces: v\n",
    "a: x\n  y\n  z\n",
    "a:\n  x\n  y\n",
    "a: -1\nb: - 1\n",
    "a: [-1, - 1]\n",
    "a: {x: [{y: [{z: 1}]}]}\n",
    "\u{85}a: b\n",
    "a: b\u{2028}c\n",
    "a: \u{7f}\n",
    "a: \"\\u0000\"\n",
    "a: \u{1}\n",
    "a: \"\u{9f}\"\n",
    "a: \u{fffe}\n",
    "\u{feff}a: 1\n",
    "a: x\u{feff}\n",
];

/// Block scalars at the end of the input, each with and without a last
/// line break, in every chomping, with content, blank and comment lines.
fn block_endings(out: &mut Vec<(String, String)>) {
    for header in ["|", ">", "|-", ">-", "|+", ">+", "|2", "|+2", ">2-"] {
        for body in [
            "",
            "\n",
            "\n\n",
            "\n  ",
            "\n  \n",
            "\n   ",
            "\n\n  ",
            "\n  text",
            "\n  text\n",
            "\n  text\n  ",
            "\n  text\n ",
            "\n  text\n    ",
            "\n  text\n\n",
            "\n  text\n\n  ",
            "\n  a\n  b",
            "\n  a\n\n  b\n\n",
            "\n  text\n# c",
            "\n  text\n  # c",
            "\n  text\n\n# c\n",
            " # c\n",
            " # c",
            "\n\n\n",
            "\r\n  text",
            "\r\n  text\r\n\r\n",
        ] {
            for before in [
                "k: ",
                "- ",
                "a:\n  k: ",
                "a: 1\nk: ",
                "--- ",
                "é: ",
                "ключ: ",
            ] {
                out.push(("block".into(), format!("{before}{header}{body}")));
            }
        }
    }
}

/// A deterministic soup of YAML tokens, like the property test's.
fn soup(n: usize, out: &mut Vec<(String, String)>) {
    const TOKENS: &[&str] = &[
        "[",
        "]",
        "{",
        "}",
        "- ",
        ": ",
        "\n",
        "  ",
        "&a ",
        "*a",
        "&b ",
        "*b",
        "---\n",
        "\"",
        "'",
        "# c",
        "description",
        "metadata",
        "name",
        "1",
        "1e400",
        "null",
        "? ",
        ",",
        "!!str ",
        "!x ",
        "<<",
        "|\n",
        ">\n",
        "\t",
        "0x1F",
        "~",
        "true",
        "...\n",
        "%YAML 1.2\n",
        "\\",
    ];
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for i in 0..n {
        let len = (next() % 40) as usize;
        let text: String = (0..len)
            .map(|_| TOKENS[(next() % TOKENS.len() as u64) as usize])
            .collect();
        out.push((format!("soup {i}"), text));
    }
}

fn corpus() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut out = Vec::new();
    let mut dirs: Vec<PathBuf> = [
        "tests",
        "examples",
        "benches/fixtures",
        ".ci/skills-ref/fixtures",
        "fuzz/seeds",
        "fuzz/corpus",
        "spec",
    ]
    .iter()
    .map(|d| root.join(d))
    .collect();
    if let Ok(extra) = std::env::var("YAML_DIFFERENTIAL_DIRS") {
        dirs.extend(
            extra
                .split(':')
                .filter(|d| !d.is_empty())
                .map(PathBuf::from),
        );
    }
    for dir in &dirs {
        collect(dir, &mut out);
    }
    for s in SCALARS {
        scalar_documents(s, &mut out);
    }
    out.extend(
        DOCUMENTS
            .iter()
            .map(|d| ("document".to_owned(), (*d).to_owned())),
    );
    block_endings(&mut out);
    soup(20_000, &mut out);
    out
}

#[test]
fn the_new_reader_agrees_with_serde_yaml_but_where_it_is_meant_to_differ() {
    let corpus = corpus();
    let mut changes: BTreeMap<Change, usize> = BTreeMap::new();
    let mut same = (0usize, 0usize);
    let mut wrong = Vec::new();
    for (name, text) in &corpus {
        let old = super::legacy::parse(text, DEFAULT_MAX_BYTES);
        let new = super::parse(text, DEFAULT_MAX_BYTES);
        match explain(text, &old, &new) {
            Some(change) => *changes.entry(change).or_default() += 1,
            None if old == new => {
                if old.is_ok() {
                    same.0 += 1;
                } else {
                    same.1 += 1;
                }
            }
            None => wrong.push(format!("{name}: {text:?}\n  old: {old:?}\n  new: {new:?}")),
        }
        // The spec's field order, from the same parse.
        if let (Ok((_, a)), Ok((_, b))) = (
            super::legacy::parse_keeping_order(text, DEFAULT_MAX_BYTES, "fields"),
            super::parse_keeping_order(text, DEFAULT_MAX_BYTES, "fields"),
        ) && a != b
        {
            wrong.push(format!("{name}: order {a:?} != {b:?}"));
        }
    }
    println!(
        "{} texts: {} same value, {} same error; changes: {changes:?}",
        corpus.len(),
        same.0,
        same.1
    );
    assert!(
        wrong.is_empty(),
        "{} unexplained differences:\n{}",
        wrong.len(),
        wrong[..wrong
            .len()
            .min(if std::env::var_os("YAML_DIFFERENTIAL_ALL").is_some() {
                usize::MAX
            } else {
                40
            })]
            .join("\n")
    );
}
