//! The three layers, the forms a skill takes in one, and what a skill may
//! be named: the small vocabulary every stage of the pipeline shares.

use std::fmt;
use std::path::{Path, PathBuf};

/// One of the three layers, ordered by precedence: `Base < Team < User`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// The skill as shipped.
    Base,
    /// A project-shared override, usually tracked in git.
    Team,
    /// A personal override.
    User,
}

impl Layer {
    /// All layers, lowest precedence first: the order fragments are merged in.
    pub const ALL: [Layer; 3] = [Layer::Base, Layer::Team, Layer::User];

    /// The short label used in tables and JSON (`base`, `team`, `user`).
    pub fn label(self) -> &'static str {
        match self {
            Layer::Base => "base",
            Layer::Team => "team",
            Layer::User => "user",
        }
    }
}

impl fmt::Display for Layer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} layer", self.label())
    }
}

impl serde::Serialize for Layer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.label())
    }
}

/// The on-disk forms of a skill in one layer, in the order they are tried.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Form {
    /// `<name>.yaml`
    Yaml,
    /// `<name>.yml`
    Yml,
    /// `<name>/SKILL.md` (or `<name>/skill.md`, which the Agent Skills
    /// reference validator accepts too): YAML frontmatter and a Markdown
    /// body.
    SkillMd,
    /// `<name>.toml`
    Toml,
    /// A `<name>/` directory with no `SKILL.md`, in a layer above base: the
    /// skill's files and no fields, as if it held an empty `SKILL.md`. It
    /// is tried last, so any other form of the skill in the layer wins and
    /// the directory is a shadowed form.
    Files,
}

/// The names of the file that makes a directory a skill, in the order they
/// win: the Agent Skills reference validator looks for `SKILL.md`, then
/// `skill.md`.
pub(crate) const SKILL_MD_NAMES: [&str; 2] = ["SKILL.md", "skill.md"];

impl Form {
    /// The forms that hold fields, in lookup order: the first that exists
    /// wins. [`Form::Files`] comes after all of them.
    pub const ALL: [Form; 4] = [Form::Yaml, Form::Yml, Form::SkillMd, Form::Toml];

    /// The path of this form of skill `name` inside `dir`.
    pub fn path_in(self, dir: &Path, name: &str) -> PathBuf {
        match self {
            Form::Yaml => dir.join(format!("{name}.yaml")),
            Form::Yml => dir.join(format!("{name}.yml")),
            Form::SkillMd => dir.join(name).join("SKILL.md"),
            Form::Toml => dir.join(format!("{name}.toml")),
            Form::Files => dir.join(name),
        }
    }

    /// The short name used by `--form` and in messages.
    pub fn label(self) -> &'static str {
        match self {
            Form::Yaml => "yaml",
            Form::Yml => "yml",
            Form::SkillMd => "md",
            Form::Toml => "toml",
            Form::Files => "files",
        }
    }

    /// Recognises a directory entry as a skill: `(name, form)`.
    /// A directory `name` is only a candidate; its `SKILL.md` must still exist.
    pub(crate) fn classify(file_name: &str, is_dir: bool) -> Option<(&str, Form)> {
        if is_dir {
            return Some((file_name, Form::SkillMd));
        }
        let (stem, ext) = file_name.rsplit_once('.')?;
        let form = match ext {
            "yaml" => Form::Yaml,
            "yml" => Form::Yml,
            "toml" => Form::Toml,
            _ => return None,
        };
        Some((stem, form))
    }
}

/// Why a skill name was refused.
pub fn check_name(name: &str) -> Result<(), &'static str> {
    if name.is_empty() {
        Err("a skill name cannot be empty")
    } else if name == ".." {
        Err("a skill name cannot be '..'")
    } else if name.contains('/') || name.contains('\\') {
        Err("a skill name cannot contain a path separator")
    } else if name.starts_with('.') {
        Err("a skill name cannot start with '.'")
    } else if name.chars().any(char::is_control) {
        Err("a skill name cannot contain control characters")
    } else if name.chars().any(crate::text::is_bidi) {
        Err("a skill name cannot contain bidirectional control characters")
    } else if name.chars().any(crate::text::is_invisible) {
        Err("a skill name cannot contain invisible characters")
    } else {
        Ok(())
    }
}

/// What about a skill name's characters misleads a reader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Misleading {
    /// White space (Unicode White_Space): `trail ` reads as `trail`.
    WhiteSpace,
    /// A dash other than the hyphen-minus U+002D (Unicode Dash_Punctuation,
    /// or a character whose confusable skeleton is `-`, as U+2212 MINUS
    /// SIGN): `pdf‐tables` reads as `pdf-tables`.
    OtherDash,
}

impl Misleading {
    /// The kind of `c`, if it is one.
    fn of(c: char) -> Option<Misleading> {
        use unicode_general_category::{GeneralCategory, get_general_category};
        if c.is_ascii() {
            return (c == ' ').then_some(Misleading::WhiteSpace);
        }
        if c.is_whitespace() {
            Some(Misleading::WhiteSpace)
        } else if get_general_category(c) == GeneralCategory::DashPunctuation
            || char_skeleton(c) == "-"
        {
            Some(Misleading::OtherDash)
        } else {
            None
        }
    }
}

/// The misleading characters of skill name `name`, by kind, in the order
/// the kinds first occur: `[(WhiteSpace, [' '])]` for `trail `.
pub(crate) fn misleading(name: &str) -> Vec<(Misleading, Vec<char>)> {
    let mut out: Vec<(Misleading, Vec<char>)> = Vec::new();
    if name.is_ascii() && !name.contains(' ') {
        return out;
    }
    for c in name.chars() {
        let Some(kind) = Misleading::of(c) else {
            continue;
        };
        match out.iter_mut().find(|(k, _)| *k == kind) {
            Some((_, chars)) if !chars.contains(&c) => chars.push(c),
            Some(_) => {}
            None => out.push((kind, vec![c])),
        }
    }
    out
}

/// The confusable skeleton of one character (UTS #39).
fn char_skeleton(c: char) -> String {
    let mut buf = [0; 4];
    unicode_security::skeleton(c.encode_utf8(&mut buf)).collect()
}

/// The confusable skeleton of skill name `name` (Unicode Technical
/// Standard #39): two names with the same one read the same (`pdf-tables`,
/// `pdf-tаbles` with a Cyrillic а, `pdf‐tables` with U+2010). An ASCII
/// name is mapped a character at a time from a table made once: the
/// skeleton of an ASCII character is ASCII or starts with a character that
/// does not combine, so the pieces join as the whole would normalise, and a
/// tree of many skills pays a look-up per character, not a normalisation.
pub(crate) fn skeleton(name: &str) -> String {
    static ASCII: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
    if !name.is_ascii() {
        return unicode_security::skeleton(name).collect();
    }
    let table = ASCII.get_or_init(|| (0..128u8).map(|b| char_skeleton(char::from(b))).collect());
    let mut out = String::with_capacity(name.len());
    for b in name.bytes() {
        out.push_str(&table[usize::from(b)]);
    }
    out
}

/// Is `c` a character that reads as an ASCII one it is not: not ASCII,
/// with an ASCII confusable skeleton (Cyrillic а reads as `a`, U+2010 as
/// `-`, U+00A0 as a space)?
fn reads_as_ascii(c: char) -> bool {
    if c.is_ascii() {
        return false;
    }
    let k = char_skeleton(c);
    !k.is_empty() && k.is_ascii()
}

/// Skill name `name` as human-readable output shows it: escaped as
/// [`crate::text::escape`] does, and every character that reads as
/// another (white space, a dash other than `-`, a character that reads as
/// an ASCII one it is not) written as its code point, `\u{430}`: so
/// `pdf-tаbles` shows as `pdf-t\u{430}bles` and `trail ` as `trail\u{20}`,
/// and no two names that differ look alike. A name of ASCII letters, digits
/// and punctuation borrows.
pub fn shown(name: &str) -> std::borrow::Cow<'_, str> {
    use std::fmt::Write;
    if name.is_ascii() && !name.contains(' ') {
        return crate::text::escape(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    for c in name.chars() {
        if Misleading::of(c).is_some() || reads_as_ascii(c) {
            let _ = write!(out, "\\u{{{:x}}}", c as u32);
        } else {
            let mut buf = [0; 4];
            out.push_str(&crate::text::escape(c.encode_utf8(&mut buf)));
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The layers in words, for messages and hover text: `the base layer`,
/// `the base and team layers`, `the base, team and user layers`.
pub(crate) fn layers_phrase(layers: &[Layer]) -> String {
    let labels: Vec<&str> = layers.iter().map(|l| l.label()).collect();
    match labels.as_slice() {
        [] => "no layer".to_owned(),
        [one] => format!("the {one} layer"),
        [init @ .., last] => format!("the {} and {last} layers", init.join(", ")),
    }
}

/// The longest file name, in bytes, that file systems allow (`NAME_MAX`).
pub(crate) const FILE_NAME_MAX: usize = 255;

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// The table an ASCII name is mapped with gives the crate's skeleton.
        #[test]
        fn an_ascii_skeleton_is_the_crates(name in "[ -~]{0,24}") {
            let theirs: String = unicode_security::skeleton(&name).collect();
            proptest::prop_assert_eq!(skeleton(&name), theirs);
        }
    }

    #[test]
    fn every_ascii_character_maps_as_the_crate_maps_it() {
        for b in 0..128u8 {
            let s = char::from(b).to_string();
            let theirs: String = unicode_security::skeleton(&s).collect();
            assert_eq!(skeleton(&s), theirs, "{b}");
        }
        // A name of several characters, each with a prototype.
        assert_eq!(
            skeleton("m1%0"),
            unicode_security::skeleton("m1%0").collect::<String>()
        );
    }

    #[test]
    fn names_that_read_alike_share_a_skeleton() {
        let k = skeleton("pdf-tables");
        for other in ["pdf-t\u{430}bles", "pdf\u{2010}tables", "pdf\u{2212}tables"] {
            assert_eq!(skeleton(other), k, "{other}");
        }
        assert_ne!(skeleton("pdf-table"), k);
    }

    #[test]
    fn misleading_characters_are_found_by_kind() {
        assert_eq!(misleading("pdf-tables"), vec![]);
        assert_eq!(misleading("écrire"), vec![]);
        assert_eq!(
            misleading("a b\u{3000}c\u{2010}d\u{2010}e\u{2212}"),
            vec![
                (Misleading::WhiteSpace, vec![' ', '\u{3000}']),
                (Misleading::OtherDash, vec!['\u{2010}', '\u{2212}']),
            ]
        );
    }

    #[test]
    fn names_are_shown_with_what_reads_as_another_character_as_code_points() {
        assert!(matches!(shown("pdf-tables"), std::borrow::Cow::Borrowed(_)));
        assert_eq!(shown("pdf-t\u{430}bles"), "pdf-t\\u{430}bles");
        assert_eq!(shown("trail "), "trail\\u{20}");
        assert_eq!(shown("a\u{2013}b\u{a0}"), "a\\u{2013}b\\u{a0}");
        // Letters that read as no ASCII one stay as they are.
        assert_eq!(shown("café 翻訳"), "café\\u{20}翻訳");
    }

    #[test]
    fn names_are_checked() {
        for bad in [
            "",
            "..",
            "../x",
            "a/b",
            "/etc/passwd",
            ".hidden",
            "a\u{7}",
            "a\\b",
        ] {
            assert!(check_name(bad).is_err(), "{bad:?} should be refused");
        }
        for good in ["writer", "my-skill_2", "écrire"] {
            assert!(check_name(good).is_ok());
        }
    }

    #[test]
    fn precedence_order() {
        assert!(Layer::Base < Layer::Team && Layer::Team < Layer::User);
        assert_eq!(Layer::Team.to_string(), "team layer");
    }
}
