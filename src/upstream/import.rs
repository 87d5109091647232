//! `add --import`: the sources of another installer's lock
//! (`skills-lock.json`), as `add` takes them: one source per repository,
//! ref and directory, with the skills it lists.
//!
//! The file is attacker-written like every other: read under a cap, into
//! what is used of it, never into a tree of its every value.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use super::sources::{SourceSpec, parse_source};
use crate::error::{Error, ErrorKind, Result};

/// The largest `skills-lock.json` read: the fragment cap. What it names
/// becomes a sources file, itself capped at 1 MiB.
const MAX_IMPORT_BYTES: u64 = 4 << 20;

/// The sources of another installer's lock (`skills-lock.json`: `{"version":
/// 1, "skills": {NAME: {"source", "sourceType", "ref", "skillPath"}}}`):
/// one source per repository, ref and directory, with the skills it lists.
///
/// `file` is as the person typed it: a relative path is taken against
/// the working directory `cwd` (the context's, not the process's), and
/// errors name it as typed. The file is read into what is used of it,
/// never into a tree of its every value; sources are named by lookups,
/// not by walks of those named so far.
pub fn read(file: &Path, cwd: Option<&Path>) -> Result<Vec<SourceSpec>> {
    let io = match cwd {
        Some(cwd) if file.is_relative() => cwd.join(file),
        _ => file.to_path_buf(),
    };
    let text_ = super::sources::read_text(&io, MAX_IMPORT_BYTES)
        .map_err(|e| e.shown_as(&io, file))?
        .ok_or_else(|| Error::Refused {
            kind: ErrorKind::NotFound,
            path: Some(PathBuf::from(crate::text::path(file))),
            message: "does not exist".into(),
        })?;
    parse(&text_, file, cwd)
}

/// The sources of the `skills-lock.json` text `text` (of the file `file`,
/// for errors; [`read`]).
pub fn parse(text: &str, file: &Path, cwd: Option<&Path>) -> Result<Vec<SourceSpec>> {
    let bad = |m: String| Error::Refused {
        kind: ErrorKind::Invalid,
        path: Some(PathBuf::from(crate::text::path(file))),
        message: m,
    };
    let doc: doc::Doc = serde_json::from_str(text).map_err(|e| syntax(file, &e))?;
    let skills = doc
        .skills
        .ok_or_else(|| bad("no \"skills\" object: not a skills-lock.json".into()))?;
    // (url, ref, path) -> skills
    let mut groups: BTreeMap<(String, Option<String>, Option<String>), Vec<String>> =
        BTreeMap::new();
    for (name, entry) in skills {
        let at = |m: &str| bad(format!("skill '{}': {m}", crate::text::escape(&name)));
        let source = entry.source.0.ok_or_else(|| at("no \"source\""))?;
        let url = match entry.source_type.0.as_deref() {
            Some("github") | None if !source.contains("://") => {
                let (u, _) =
                    parse_source(&source, cwd).map_err(|_| at("\"source\" is not OWNER/REPO"))?;
                u
            }
            Some("github" | "git") | None => source.clone(),
            Some(other) => {
                return Err(at(&format!(
                    "source type '{}' cannot be fetched (github and git URLs can); add it by hand",
                    crate::text::escape(other)
                )));
            }
        };
        // `skills/pdf/SKILL.md`: the skill `pdf` in the directory `skills`.
        let (path, skill) = match entry.skill_path.0 {
            Some(p) => {
                let dir = p
                    .strip_suffix("/SKILL.md")
                    .or(p.strip_suffix("SKILL.md"))
                    .unwrap_or(&p);
                let dir = dir.trim_end_matches('/');
                match dir.rsplit_once('/') {
                    Some((parent, skill)) => (Some(parent.to_owned()), skill.to_owned()),
                    None if dir.is_empty() => (None, name.clone()),
                    None => (None, dir.to_owned()),
                }
            }
            None => (None, name.clone()),
        };
        groups
            .entry((url, entry.git_ref.0, path))
            .or_default()
            .push(skill);
    }
    let mut out: Vec<SourceSpec> = Vec::new();
    let mut taken = BTreeSet::new();
    // The next number to try after each base name.
    let mut next: BTreeMap<String, usize> = BTreeMap::new();
    for ((url, git_ref, path), mut skills) in groups {
        skills.sort();
        skills.dedup();
        let (_, base) = parse_source(&url, cwd)?;
        let mut name = base.clone();
        if taken.contains(&name) {
            let n = next.entry(base.clone()).or_insert(1);
            loop {
                *n += 1;
                name = format!("{base}-{n}");
                if !taken.contains(&name) {
                    break;
                }
            }
        }
        taken.insert(name.clone());
        out.push(SourceSpec {
            name,
            url,
            git_ref,
            path,
            plugin: None,
            skills: Some(skills),
        });
    }
    if out.is_empty() {
        return Err(bad("lists no skills".into()));
    }
    Ok(out)
}

/// A `skills-lock.json` that is not JSON, or whose `skills` is not an
/// object: an error at its line and column.
fn syntax(file: &Path, e: &serde_json::Error) -> Error {
    let message = e.to_string();
    // Where it is goes before the message, as for every file.
    let message = message
        .rsplit_once(" at line ")
        .map_or(message.as_str(), |(m, _)| m);
    let at = (e.line() > 0).then(|| (e.line(), e.column()));
    super::sources::located(file, at, message)
}

/// What `add --import` reads of a `skills-lock.json`: the strings it
/// uses; every other value is skipped as it is read, never built.
mod doc {
    use std::collections::BTreeMap;

    use serde::Deserialize;

    #[derive(Deserialize)]
    pub struct Doc {
        #[serde(default)]
        pub skills: Option<Skills>,
    }

    /// The `skills` object; anything else there reads as none.
    pub struct Skills(BTreeMap<String, Entry>);

    impl IntoIterator for Skills {
        type Item = (String, Entry);
        type IntoIter = std::collections::btree_map::IntoIter<String, Entry>;
        fn into_iter(self) -> Self::IntoIter {
            self.0.into_iter()
        }
    }

    impl<'de> Deserialize<'de> for Skills {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Option<BTreeMap<String, Entry>>;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("an object of skills")
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Self::Value, A::Error> {
                    // A name given twice: the last one, as a JSON object
                    // reader keeps.
                    let mut out = BTreeMap::new();
                    while let Some((k, v)) = map.next_entry::<String, Entry>()? {
                        out.insert(k, v);
                    }
                    Ok(Some(out))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Self::Value, A::Error> {
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    Ok(None)
                }
                fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
                    Ok(None)
                }
                fn visit_unit<E>(self) -> Result<Self::Value, E> {
                    Ok(None)
                }
            }
            d.deserialize_any(Visit)?
                .map(Skills)
                .ok_or_else(|| serde::de::Error::custom("\"skills\" is not an object"))
        }
    }

    /// One skill's entry: the fields `add` uses.
    #[derive(Deserialize)]
    pub struct Entry {
        #[serde(default)]
        pub source: Text,
        #[serde(default, rename = "sourceType")]
        pub source_type: Text,
        #[serde(default, rename = "ref")]
        pub git_ref: Text,
        #[serde(default, rename = "skillPath")]
        pub skill_path: Text,
    }

    /// A string, or `None` for any other value (skipped as it is read).
    #[derive(Default)]
    pub struct Text(pub Option<String>);

    impl<'de> Deserialize<'de> for Text {
        fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            struct Visit;
            impl<'de> serde::de::Visitor<'de> for Visit {
                type Value = Text;
                fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                    f.write_str("any value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Text, E> {
                    Ok(Text(Some(v.to_owned())))
                }
                fn visit_string<E>(self, v: String) -> Result<Text, E> {
                    Ok(Text(Some(v)))
                }
                fn visit_map<A: serde::de::MapAccess<'de>>(
                    self,
                    mut map: A,
                ) -> Result<Text, A::Error> {
                    while map
                        .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                        .is_some()
                    {}
                    Ok(Text(None))
                }
                fn visit_seq<A: serde::de::SeqAccess<'de>>(
                    self,
                    mut seq: A,
                ) -> Result<Text, A::Error> {
                    while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                    Ok(Text(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Text, E> {
                    Ok(Text(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Text, E> {
                    Ok(Text(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Text, E> {
                    Ok(Text(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Text, E> {
                    Ok(Text(None))
                }
                fn visit_unit<E>(self) -> Result<Text, E> {
                    Ok(Text(None))
                }
            }
            d.deserialize_any(Visit)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_str(text: &str) -> Result<Vec<SourceSpec>> {
        parse(text, Path::new("skills-lock.json"), None)
    }

    fn error(text: &str) -> String {
        parse_str(text).unwrap_err().to_string()
    }

    #[test]
    fn one_source_per_repository_ref_and_directory_with_the_skills_it_lists() {
        let sources = parse_str(
            r#"{"version": 1, "skills": {
                "pdf": {"source": "acme/skills", "sourceType": "github",
                        "skillPath": "skills/pdf/SKILL.md"},
                "docx": {"source": "acme/skills", "skillPath": "skills/docx/SKILL.md"},
                "top": {"source": "acme/skills", "skillPath": "SKILL.md"},
                "old": {"source": "acme/skills", "ref": "v1", "skillPath": "skills/old/SKILL.md"},
                "other": {"source": "https://git.example/other.git", "sourceType": "git"}
            }}"#,
        )
        .unwrap();
        let shown: Vec<_> = sources
            .iter()
            .map(|s| {
                (
                    s.name.as_str(),
                    s.url.as_str(),
                    s.git_ref.as_deref(),
                    s.path.as_deref(),
                    s.skills.clone().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            shown,
            [
                (
                    "other",
                    "https://git.example/other.git",
                    None,
                    None,
                    vec!["other".to_owned()]
                ),
                (
                    "skills",
                    "https://github.com/acme/skills",
                    None,
                    None,
                    vec!["top".to_owned()]
                ),
                (
                    "skills-2",
                    "https://github.com/acme/skills",
                    None,
                    Some("skills"),
                    vec!["docx".to_owned(), "pdf".to_owned()]
                ),
                (
                    "skills-3",
                    "https://github.com/acme/skills",
                    Some("v1"),
                    Some("skills"),
                    vec!["old".to_owned()]
                ),
            ]
        );
        assert!(sources.iter().all(|s| s.plugin.is_none()));
    }

    #[test]
    fn a_file_that_is_not_json_is_an_error_at_its_line_and_column() {
        assert_eq!(
            error("{\"skills\": {\n  \"pdf\": {\"source\": \"acme/skills\",}\n}}"),
            "skills-lock.json:2:35: error: trailing comma"
        );
        assert_eq!(
            error("{\"skills\": [1, 2]}"),
            "skills-lock.json:1:18: error: \"skills\" is not an object"
        );
        assert!(
            error("{\"skills\": {").starts_with("skills-lock.json:1:12: error: EOF"),
            "{}",
            error("{\"skills\": {")
        );
    }

    #[test]
    fn what_it_lacks_is_named_with_the_file_and_the_skill() {
        assert_eq!(
            error("{\"version\": 1}"),
            "skills-lock.json: no \"skills\" object: not a skills-lock.json"
        );
        assert_eq!(
            error("{\"skills\": {}}"),
            "skills-lock.json: lists no skills"
        );
        // A value of another type counts as none, never as text.
        assert_eq!(
            error("{\"skills\": {\"pdf\": {\"source\": {\"nested\": [1, {\"a\": 2}]}}}}"),
            "skills-lock.json: skill 'pdf': no \"source\""
        );
        assert_eq!(
            error("{\"skills\": {\"pdf\": {\"source\": \"pdf-tools\", \"sourceType\": \"npm\"}}}"),
            "skills-lock.json: skill 'pdf': source type 'npm' cannot be fetched (github and git URLs can); add it by hand"
        );
        assert_eq!(
            error("{\"skills\": {\"pdf\": {\"source\": \"not a repo\"}}}"),
            "skills-lock.json: skill 'pdf': \"source\" is not OWNER/REPO"
        );
    }

    #[test]
    fn hostile_names_never_reach_the_terminal_raw() {
        let err = error(
            "{\"skills\": {\"\\u001b[31mpdf\": {\"source\": \"x\", \"sourceType\": \"\\u001b]0;owned\\u0007\"}}}",
        );
        assert!(!err.chars().any(|c| c.is_control()), "{err:?}");
        assert!(err.starts_with("skills-lock.json: skill '"), "{err:?}");
        // A URL a git would take as an option is refused, not imported.
        assert!(
            parse_str("{\"skills\": {\"pdf\": {\"source\": \"--upload-pack=touch x\", \"sourceType\": \"git\"}}}")
                .is_err()
        );
    }

    #[test]
    fn a_relative_file_is_read_from_the_contexts_working_directory() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("skills-lock.json"),
            r#"{"skills": {"pdf": {"source": "acme/skills"}}}"#,
        )
        .unwrap();
        // Not the process's working directory, where there is no such file.
        let typed = Path::new("skills-lock.json");
        assert!(!typed.exists());
        let sources = read(typed, Some(dir.path())).unwrap();
        assert_eq!(sources[0].url, "https://github.com/acme/skills");
        // Missing there: the error names the file as typed.
        let err = read(Path::new("other.json"), Some(dir.path())).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::NotFound);
        assert_eq!(err.to_string(), "other.json: does not exist");
    }
}
