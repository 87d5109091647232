//! A collection's own declaration of its skills: Claude Code's plugin
//! marketplace file, `.claude-plugin/marketplace.json` at the top of the
//! repository (Anthropic's `skills` repository carries one). It lists
//! plugins, and each plugin the skill directories it takes:
//!
//! ```json
//! {"name": "anthropic-agent-skills",
//!  "plugins": [{"name": "document-skills", "source": "./",
//!               "skills": ["./skills/xlsx", "./skills/docx"]}]}
//! ```
//!
//! A source that names a plugin (`plugin = "document-skills"` in
//! `sources.toml`) takes the skills the file declares for it at the commit
//! fetched, so an update follows what upstream declares. A path of
//! `skills` is relative to the plugin's `source` directory (itself below
//! `metadata.pluginRoot` when it is a bare name), and names either a skill
//! directory (one holding a `SKILL.md`) or a directory of them; a plugin
//! whose entry lists no `skills` takes its directory's `skills/`.
//!
//! The file is written by whoever pushes to the repository, so it is read
//! as data: at most [`MAX_BYTES`], a regular file of the tree (never a
//! symlink, which [`super::git`] checks), and every path it names is
//! confined to the repository as written: relative, no `..`, no hidden
//! component, no `\`. Nothing is ever looked up on disk: the paths name
//! entries of the commit's tree, where no symlink is followed either. A
//! plugin that comes from another repository (an object `source`) is
//! refused, naming that repository: add it as a source of its own.

use serde_json::Value;

/// Where the file is, from the top of the repository.
pub const FILE: &str = ".claude-plugin/marketplace.json";

/// The largest marketplace file read.
pub const MAX_BYTES: u64 = 1 << 20;

/// The most paths one plugin may list.
const MAX_PATHS: usize = 10_000;

/// The longest path read.
const MAX_PATH_BYTES: usize = 1024;

/// The file, parsed.
#[derive(Debug, Clone)]
pub struct Marketplace {
    /// Its text, to say where a value is.
    text: String,
    /// Its plugins that have a name, in the file's order.
    plugins: Vec<(String, Value)>,
    /// Each name's plugins: where the first is in `plugins`, and how many
    /// there are (a plugin is looked up, not searched for, once per name).
    by_name: std::collections::HashMap<String, (usize, usize)>,
    /// `metadata.pluginRoot`, normalised: the base of bare sources.
    plugin_root: Option<String>,
}

/// One plugin's skills, as the file declares them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plugin {
    /// Its name.
    pub name: String,
    /// Its directory, from the top of the repository (`""`: the top).
    pub root: String,
    /// The paths its entry lists under `skills`; `None` when it lists
    /// none (its directory's `skills/` holds them).
    pub skills: Option<Vec<SkillPath>>,
}

/// One path a plugin lists under `skills`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillPath {
    /// As written (escaped when shown).
    pub written: String,
    /// The directory it names, from the top of the repository (`""`: the
    /// top).
    pub dir: String,
    /// Where it is written in the file: line and column.
    pub at: Option<(usize, usize)>,
}

impl Marketplace {
    /// Parses the file's bytes. An error is the file's name, the line and
    /// column when there is one, and what is wrong.
    pub fn parse(bytes: &[u8]) -> Result<Marketplace, String> {
        if bytes.len() as u64 > MAX_BYTES {
            return Err(too_large());
        }
        let text = String::from_utf8_lossy(bytes).into_owned();
        let doc: Value = serde_json::from_str(&text).map_err(|e| {
            format!(
                "{FILE}:{}:{}: {}",
                e.line(),
                e.column(),
                crate::text::sanitized_excerpt(&e.to_string(), crate::text::MESSAGE_CHARS)
            )
        })?;
        let Some(list) = doc.get("plugins").and_then(Value::as_array) else {
            return Err(format!(
                "{FILE}: no \"plugins\" list: not a Claude Code marketplace file"
            ));
        };
        let plugins: Vec<(String, Value)> = list
            .iter()
            .filter_map(|p| Some((p.get("name")?.as_str()?.to_owned(), p.clone())))
            .collect();
        let mut by_name = std::collections::HashMap::new();
        for (i, (name, _)) in plugins.iter().enumerate() {
            by_name
                .entry(name.clone())
                .and_modify(|(_, n)| *n += 1)
                .or_insert((i, 1));
        }
        let plugin_root = match doc.pointer("/metadata/pluginRoot") {
            None | Some(Value::Null) => None,
            Some(Value::String(r)) => Some(inside(r).map_err(|m| {
                format!(
                    "{}: metadata.pluginRoot '{}': {m}",
                    located(&text, None, r),
                    crate::text::escape(r)
                )
            })?),
            Some(_) => return Err(format!("{FILE}: metadata.pluginRoot: not a path")),
        };
        Ok(Marketplace {
            text,
            plugins,
            by_name,
            plugin_root,
        })
    }

    /// The names of the plugins it declares, in its order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.plugins.iter().map(|(n, _)| n.as_str())
    }

    /// Plugin `name`'s skills as declared: an error when the file does not
    /// declare it (naming those it does), declares it twice, takes it from
    /// another repository, or names a path that is not confined to the
    /// repository.
    pub fn plugin(&self, name: &str) -> Result<Plugin, String> {
        let entry = self.entry(name)?;
        let root = self.plugin_dir(name, entry)?;
        let skills = match self.written_skills(name, entry)? {
            None => None,
            Some(paths) => Some(self.skill_paths(name, &root, paths)?),
        };
        Ok(Plugin {
            name: name.to_owned(),
            root,
            skills,
        })
    }

    /// Plugin `name`'s entry in the file; refused when the file does not
    /// declare it (naming those it does, and the one meant when a name is
    /// near), or declares it twice.
    fn entry(&self, name: &str) -> Result<&Value, String> {
        let found = self
            .by_name
            .get(name)
            .map(|&(i, n)| (&self.plugins[i].1, n));
        let Some((entry, count)) = found else {
            let names: Vec<&str> = self.names().collect();
            let suggestion = crate::error::did_you_mean_or_prefix(name, names.iter().copied())
                .map(|s| format!(" (did you mean '{}'?)", crate::text::escape(&s)))
                .unwrap_or_default();
            return Err(format!(
                "{FILE}: no plugin '{}'{suggestion}; it declares {}",
                crate::text::escape(name),
                if names.is_empty() {
                    "none".to_owned()
                } else {
                    crate::text::list(names.iter().copied(), true)
                }
            ));
        };
        if count > 1 {
            return Err(format!(
                "{}: plugin '{}' is declared twice; refused, as it cannot be told which is meant",
                located(&self.text, None, name),
                crate::text::escape(name)
            ));
        }
        Ok(entry)
    }

    /// Where `value` is written in plugin `name`'s entry, as an error
    /// starts: `FILE:LINE:COLUMN`.
    fn here(&self, name: &str, value: &str) -> String {
        located(&self.text, Some(name), value)
    }

    /// The directory of plugin `name` (its `entry`'s `source`), from the
    /// top of the repository: the file's `pluginRoot` without one, and a
    /// source not written `./...` is below that root. Refused for a path
    /// that leaves the repository and for a source in another repository.
    fn plugin_dir(&self, name: &str, entry: &Value) -> Result<String, String> {
        let shown = crate::text::escape(name);
        match entry.get("source") {
            None | Some(Value::Null) => Ok(self.plugin_root.clone().unwrap_or_default()),
            Some(Value::String(s)) => {
                let dir = inside(s).map_err(|m| {
                    format!(
                        "{}: plugin '{shown}': source '{}': {m}",
                        self.here(name, s),
                        crate::text::escape(s)
                    )
                })?;
                Ok(match &self.plugin_root {
                    Some(base) if !s.starts_with("./") => join(base, &dir),
                    _ => dir,
                })
            }
            Some(other) => Err(format!(
                "{}: plugin '{shown}' comes from another repository ({}): a source takes skills from its own repository only; add that repository as a source of its own",
                self.here(name, name),
                crate::text::json_excerpt(other, crate::text::EXCERPT_CHARS)
            )),
        }
    }

    /// The paths plugin `name`'s `entry` lists under `skills`, as written
    /// (`None`: it lists none); refused for anything but a path or a list
    /// of at most [`MAX_PATHS`] paths.
    fn written_skills<'e>(
        &self,
        name: &str,
        entry: &'e Value,
    ) -> Result<Option<Vec<&'e str>>, String> {
        let shown = crate::text::escape(name);
        let not_paths = || {
            format!(
                "{}: plugin '{shown}': skills: not a path or a list of paths",
                self.here(name, name)
            )
        };
        let paths = match entry.get("skills") {
            None | Some(Value::Null) => return Ok(None),
            Some(Value::String(s)) => vec![s.as_str()],
            Some(Value::Array(items)) => items
                .iter()
                .map(Value::as_str)
                .collect::<Option<Vec<&str>>>()
                .ok_or_else(not_paths)?,
            Some(_) => return Err(not_paths()),
        };
        if paths.len() > MAX_PATHS {
            return Err(format!(
                "{}: plugin '{shown}': skills: more than {MAX_PATHS} paths",
                self.here(name, name)
            ));
        }
        Ok(Some(paths))
    }

    /// Plugin `name`'s skill paths, each as the directory it names below
    /// the plugin's `root` and where it is written; refused for a path not
    /// confined to the repository. The paths are written in this order:
    /// each is looked for after the one before, in one pass over the text.
    fn skill_paths(
        &self,
        name: &str,
        root: &str,
        paths: Vec<&str>,
    ) -> Result<Vec<SkillPath>, String> {
        let shown = crate::text::escape(name);
        let mut finder = Finder::after(&self.text, name);
        paths
            .into_iter()
            .map(|p| {
                let dir = inside(p).map_err(|m| {
                    format!(
                        "{}: plugin '{shown}': skills: '{}': {m}",
                        self.here(name, p),
                        crate::text::escape(p)
                    )
                })?;
                Ok(SkillPath {
                    written: p.to_owned(),
                    dir: join(root, &dir),
                    at: finder.next(p),
                })
            })
            .collect()
    }
}

/// The error of a file over [`MAX_BYTES`].
pub fn too_large() -> String {
    format!("{FILE}: larger than {} KiB; refused", MAX_BYTES >> 10)
}

/// A path the file writes, relative to the top of the repository (or of a
/// plugin's directory), as the directory it names there: `./skills/pdf/`
/// is `skills/pdf`, `./` is `""`. Refused: an absolute path, `..`, a
/// hidden component (`.git`, as a layer takes none), `\`, a control
/// character, and a path over 1,024 bytes.
pub fn inside(written: &str) -> Result<String, &'static str> {
    if written.len() > MAX_PATH_BYTES {
        return Err("longer than 1024 bytes");
    }
    if written.starts_with('/') {
        return Err(
            "an absolute path: paths are relative to the repository's top ('./skills/pdf'), and stay inside it",
        );
    }
    if written.contains('\\') {
        return Err("holds '\\': paths are written with '/'");
    }
    if written.chars().any(char::is_control) {
        return Err("holds a control character");
    }
    let mut out: Vec<&str> = Vec::new();
    for c in written.split('/') {
        match c {
            "" | "." => {}
            ".." => {
                return Err(
                    "holds '..': every path stays inside the repository, written without '..'",
                );
            }
            c if c.starts_with('.') => {
                return Err("a hidden component ('.git', '.claude'): not taken, as in a layer");
            }
            c => out.push(c),
        }
    }
    Ok(out.join("/"))
}

/// `dir` below `base` (either may be the top, `""`).
fn join(base: &str, dir: &str) -> String {
    match (base.is_empty(), dir.is_empty()) {
        (true, _) => dir.to_owned(),
        (_, true) => base.to_owned(),
        _ => format!("{base}/{dir}"),
    }
}

/// Where the string `value` is first written in `text` (after plugin
/// `after`'s name when given): its line and column.
fn position(text: &str, after: Option<&str>, value: &str) -> Option<(usize, usize)> {
    let quoted = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let from = after.and_then(|a| text.find(&quoted(a))).unwrap_or(0);
    let at = from + text[from..].find(&quoted(value))?;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    Some((line, col))
}

/// The places of strings written one after another, found in one pass:
/// each after the one before, the line counted from there. A string not
/// found (written with other escapes) and every one after it have none,
/// so no search runs over the rest of the text twice.
struct Finder<'t> {
    text: &'t str,
    /// Where the next search starts; `None` once one failed.
    from: Option<usize>,
    /// The line at `counted`, where it starts, and `counted`.
    line: usize,
    line_start: usize,
    counted: usize,
}

impl<'t> Finder<'t> {
    /// Strings after plugin `name`'s name (or from the start).
    fn after(text: &'t str, name: &str) -> Finder<'t> {
        let quoted = serde_json::to_string(name).unwrap_or_default();
        Finder {
            text,
            from: Some(text.find(&quoted).unwrap_or(0)),
            line: 1,
            line_start: 0,
            counted: 0,
        }
    }

    fn next(&mut self, value: &str) -> Option<(usize, usize)> {
        let from = self.from?;
        let quoted = serde_json::to_string(value).unwrap_or_default();
        let Some(found) = self.text[from..].find(&quoted) else {
            self.from = None;
            return None;
        };
        let at = from + found;
        let passed = &self.text[self.counted..at];
        self.line += passed.matches('\n').count();
        if let Some(i) = passed.rfind('\n') {
            self.line_start = self.counted + i + 1;
        }
        self.counted = at;
        self.from = Some(at + quoted.len());
        Some((self.line, at - self.line_start + 1))
    }
}

/// The file, at the line and column of `value` when it is found.
pub fn located(text: &str, after: Option<&str>, value: &str) -> String {
    match position(text, after, value) {
        Some((l, c)) => format!("{FILE}:{l}:{c}"),
        None => FILE.to_owned(),
    }
}

/// [`FILE`] at a [`SkillPath`]'s place.
pub fn at(path: &SkillPath) -> String {
    match path.at {
        Some((l, c)) => format!("{FILE}:{l}:{c}"),
        None => FILE.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ANTHROPIC: &str = r#"{"name": "m", "plugins": [
  {"name": "document-skills", "source": "./", "skills": ["./skills/xlsx", "./skills/pdf/"]},
  {"name": "bare", "source": "tools"},
  {"source": "./nameless"}
], "metadata": {"pluginRoot": "./plugins"}}"#;

    #[test]
    fn a_plugins_skills_are_its_paths_below_its_directory() {
        let m = Marketplace::parse(ANTHROPIC.as_bytes()).unwrap();
        assert_eq!(m.names().collect::<Vec<_>>(), ["document-skills", "bare"]);
        let p = m.plugin("document-skills").unwrap();
        assert_eq!(p.root, "");
        let dirs: Vec<&str> = p.skills.iter().flatten().map(|s| s.dir.as_str()).collect();
        assert_eq!(dirs, ["skills/xlsx", "skills/pdf"]);
        assert_eq!(p.skills.unwrap()[0].at, Some((2, 58)));
        // A bare source is below metadata.pluginRoot; no skills listed.
        let p = m.plugin("bare").unwrap();
        assert_eq!((p.root.as_str(), p.skills), ("plugins/tools", None));
    }

    #[test]
    fn paths_stay_inside_the_repository() {
        assert_eq!(inside("./a/./b/"), Ok("a/b".to_owned()));
        assert_eq!(inside("./"), Ok(String::new()));
        for bad in ["/etc", "a/../../b", "..", "./.git/x", "a\\b", "a\nb"] {
            assert!(inside(bad).is_err(), "{bad}");
        }
        assert!(inside(&"a/".repeat(600)).is_err());
    }

    #[test]
    fn what_cannot_be_read_is_one_located_error() {
        let e = Marketplace::parse(b"{\"plugins\": [\n {\"name\": \"p\",,}]}").unwrap_err();
        assert!(e.starts_with(".claude-plugin/marketplace.json:2:"), "{e}");
        let e = Marketplace::parse(b"[]").unwrap_err();
        assert!(e.contains("no \"plugins\" list"), "{e}");
        let m = Marketplace::parse(
            br#"{"plugins": [{"name": "p", "source": {"source": "github", "repo": "evil/x"}}]}"#,
        )
        .unwrap();
        assert!(m.plugin("p").unwrap_err().contains("another repository"));
        let m = Marketplace::parse(br#"{"plugins": [{"name": "p", "skills": ["../x"]}]}"#).unwrap();
        let e = m.plugin("p").unwrap_err();
        assert!(
            e.starts_with(".claude-plugin/marketplace.json:1:39: plugin 'p': skills: '../x'"),
            "{e}"
        );
        let e = m.plugin("q").unwrap_err();
        assert!(
            e.contains("no plugin 'q' (did you mean 'p'?); it declares 'p'"),
            "{e}"
        );
        let big = format!(
            "{{\"plugins\": [], \"x\": \"{}\"}}",
            "y".repeat(MAX_BYTES as usize)
        );
        assert!(
            Marketplace::parse(big.as_bytes())
                .unwrap_err()
                .contains("larger than")
        );
    }
}
