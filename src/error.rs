//! Typed errors and diagnostics.
//!
//! Every problem the library finds is a [`Diagnostic`]: where it is (file,
//! layer, line, column, field) and what it is ([`DiagnosticKind`]), as data.
//! `Display` renders the conventional `path:line:col: error: message` line;
//! printing and exit codes belong to the binary.

use std::fmt;
use std::path::{Path, PathBuf};

use crate::layer::Layer;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Information: what a command did that the person may want to know
    /// (a field a target leaves out). Never fails a command.
    Note,
    /// Something worth fixing that does not stop the merge.
    Warning,
    /// The input cannot be used.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// What went wrong, with the data a caller may want to act on.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// The file could not be read.
    #[error("cannot read file: {message}")]
    Io {
        /// The operating system's message.
        message: String,
    },
    /// The file was not read: it resolves outside its root, into `/proc`,
    /// `/sys` or `/dev`, or is not a regular file.
    #[error("{reason}")]
    Refused {
        /// Why, with the file and where it resolves (escaped).
        reason: String,
    },
    /// The file is larger than the configured cap.
    #[error(
        "file is {size} bytes, over the {limit}-byte limit (raise it with --max-fragment-bytes)"
    )]
    TooLarge {
        /// The file's size.
        size: u64,
        /// The cap.
        limit: u64,
    },
    /// The file is not UTF-8.
    #[error("file is not valid UTF-8")]
    InvalidUtf8,
    /// The YAML or TOML parser refused the text.
    #[error("{message}")]
    Syntax {
        /// The parser's message.
        message: String,
    },
    /// The document's top level is not a mapping.
    #[error("the top level must be a mapping of field names to values, got {found}")]
    NotAMapping {
        /// What it is instead.
        found: String,
    },
    /// More than one YAML document in one file.
    #[error("file holds more than one YAML document; a fragment is a single mapping")]
    MultipleDocuments,
    /// A key appears twice in one mapping.
    #[error("duplicate key '{key}' in one mapping; remove one of them")]
    DuplicateKey {
        /// The repeated key.
        key: String,
    },
    /// A mapping key is not a string.
    #[error("mapping key {key} is not a string; quote it")]
    NonStringKey {
        /// The key as written.
        key: String,
    },
    /// A YAML tag other than the core schema's (`!!binary`, `!!set`,
    /// `!!python/…`, `!custom`, ...): one reader would drop it, another
    /// apply it, so no reader may see it.
    #[error(
        "YAML tag {tag} is not supported; only !!str, !!int, !!float, !!bool, !!null, !!map and !!seq are (remove the tag, or quote the value to keep it as text)"
    )]
    UnsupportedTag {
        /// The tag as written (an excerpt).
        tag: String,
    },
    /// A core-schema tag on a node it does not describe (`!!int abc`,
    /// `!!map [1]`).
    #[error("YAML tag {tag} does not fit {found}")]
    TagMismatch {
        /// The tag.
        tag: String,
        /// The scalar (quoted excerpt) or the kind of collection.
        found: String,
    },
    /// A plain scalar that is a number by the YAML core schema but that
    /// JSON cannot hold: an integer outside 64 bits, a float that overflows.
    #[error(
        "number {value} is out of range (an integer must fit in 64 bits, a float be finite); quote it to keep it as text"
    )]
    NumberOutOfRange {
        /// The number as written (an excerpt).
        value: String,
    },
    /// A plain `<<` mapping key, which YAML 1.1 readers apply as a merge key.
    #[error("YAML merge keys (<<) are not supported; to use '<<' as a literal key, quote it: '<<'")]
    MergeKey,
    /// More mappings than one file may hold under the size cap: each costs
    /// hundreds of bytes of memory whatever its text.
    #[error(
        "file holds more than {limit} mappings, one per 32 bytes of the {cap}-byte size limit; a mapping costs far more memory than its text (raise the limit with --max-fragment-bytes)"
    )]
    TooManyMappings {
        /// The most mappings the file may hold.
        limit: u64,
        /// The size cap.
        cap: u64,
    },
    /// The document nests deeper than the parser's limit.
    #[error("nesting is too deep")]
    TooDeep,
    /// A SKILL.md frontmatter has no closing `---`.
    #[error("the frontmatter opened on line 1 is never closed with a '---' line")]
    UnterminatedFrontmatter,
    /// A SKILL.md sets its body field both in the frontmatter and below it.
    #[error("'{field}' is set in the frontmatter and by the Markdown below it; keep one")]
    BodyTwice {
        /// The body field.
        field: String,
    },
    /// A SKILL.md has a body, but the spec names no body field.
    #[error("this SKILL.md has a Markdown body, but the merge spec declares no body_field")]
    NoBodyField,
    /// A top-level field the spec does not declare.
    #[error("unknown field '{field}'{}", suggest(suggestion))]
    UnknownField {
        /// The field.
        field: String,
        /// The closest declared field, if any is close.
        suggestion: Option<String>,
    },
    /// A value of the wrong type for its field's rule.
    #[error("'{field}' ({strategy}) expects {expected}, got {found}")]
    WrongType {
        /// The field, or a path inside it.
        field: String,
        /// The strategy that needs the type.
        strategy: String,
        /// What the rule expects, in words.
        expected: String,
        /// What the fragment has.
        found: String,
    },
    /// A keyed entry with none of the key fields.
    #[error("entry {index} of '{field}' has no key: give it one of {}{}", crate::text::list(keys.iter().map(String::as_str), false), suggest(suggestion))]
    MissingKey {
        /// The KEYED_REPLACE field.
        field: String,
        /// The entry's index.
        index: usize,
        /// The key fields tried.
        keys: Vec<String>,
        /// A key-like field in the entry that looks like a misspelt key.
        suggestion: Option<String>,
    },
    /// A value that breaks a constraint of its field's rule in the spec
    /// (`pattern`, `min_length`, `max_length`, `enum`, `minimum`, `maximum`).
    #[error("'{field}' {problem}")]
    Constraint {
        /// The field, or a path inside it (`trigger_keywords[2]`).
        field: String,
        /// The spec attribute the value breaks: `pattern`, `min_length`, ...
        constraint: String,
        /// What is wrong, in words, with the value quoted as a short excerpt.
        problem: String,
    },
    /// A field the spec marks `required` that no layer of the skill sets.
    #[error("'{field}' is required but no layer sets it (looked at {})", looked_at.join(", "))]
    RequiredMissing {
        /// The field.
        field: String,
        /// The skill's files, lowest layer first, each as `layer/path in the layer`.
        looked_at: Vec<String>,
    },
    /// A field the spec marks `required` whose effective value is empty.
    #[error("'{field}' is required but {problem}")]
    RequiredEmpty {
        /// The field.
        field: String,
        /// Why the value counts as empty, and which file made it so.
        problem: String,
    },
    /// Two entries with the same identity in one layer.
    #[error("entry {index} of '{field}' repeats the identity {identity} of entry {first}")]
    DuplicateIdentity {
        /// The KEYED_REPLACE field.
        field: String,
        /// The identity, as `key=value`.
        identity: String,
        /// The first entry's index.
        first: usize,
        /// The repeating entry's index.
        index: usize,
    },
    /// A value set in a layer that its rule's `layers` attribute does not
    /// list (a top-level field, or a key below a DEEP_MERGE field).
    #[error(
        "'{field}' may be set only in {}",
        crate::layer::layers_phrase(allowed)
    )]
    LayerNotAllowed {
        /// The field, or a path inside it (`metadata.tools`).
        field: String,
        /// The layers that may set it, lowest first.
        allowed: Vec<Layer>,
    },
    /// A rule of a target (a consumer of effective skills) that the
    /// effective skill breaks, or a field the target leaves out.
    #[error("{target}: '{field}' {problem}")]
    TargetRule {
        /// The target's name.
        target: String,
        /// The field (escaped).
        field: String,
        /// What is wrong, in words.
        problem: String,
    },
    /// Two keys of a field that targets flatten into dotted keys (`render:
    /// string-map`) that are written as the same dotted key: the flattened
    /// file holds one of them, whichever was written last, whatever the
    /// layers' precedence.
    #[error(
        "{targets}: '{field}' key {key} and key {other} at {other_at} are both written as \
         '{flat}' when '{field}' is flattened to dotted keys, so one would replace the other \
         whatever the layers' order; write the key one way (nested, or dotted) in every layer"
    )]
    FlattenedKeys {
        /// The targets that flatten the field, `, `-separated.
        targets: String,
        /// The field (escaped).
        field: String,
        /// This key's path below the field, each key quoted (escaped).
        key: String,
        /// The other key's path below the field (escaped).
        other: String,
        /// Where the other key is written: `path:line:col`.
        other_at: String,
        /// The dotted key both are written as (escaped).
        flat: String,
    },
    /// A file of a skill under a directory whose files the spec lets only
    /// some layers provide (`files:`, or an owned field that names files).
    #[error(
        "'{file}' may be provided only by {}: the spec gives the files under '{dir}/' to {}",
        crate::layer::layers_phrase(allowed),
        if allowed.len() == 1 { "it" } else { "them" }
    )]
    FileNotAllowed {
        /// The file, relative to the skill's directory (escaped).
        file: String,
        /// The owned directory.
        dir: String,
        /// The layers that may provide files there.
        allowed: Vec<Layer>,
    },
    /// A reset (`null`, `$patch: delete` or `$patch: replace`) of a mapping
    /// that holds a key this layer may not set: it would remove that key.
    #[error(
        "'{field}' holds '{owned}', which may be set only in {}: a reset or replace of '{field}' here would remove it",
        crate::layer::layers_phrase(allowed)
    )]
    ResetOfOwned {
        /// The mapping reset.
        field: String,
        /// The owned key below it.
        owned: String,
        /// The layers that may set that key.
        allowed: Vec<Layer>,
    },
    /// More problems in this file than are reported one by one.
    #[error("{more} more problem(s) in this file not shown; fix the ones above first")]
    TooManyErrors {
        /// How many were left out.
        more: usize,
    },
    /// More warnings about this file than are reported one by one.
    #[error("and {more} more warning(s) about this file not shown")]
    TooManyWarnings {
        /// How many were left out.
        more: usize,
    },
    /// The paths of the fragment's values add up to more than the budget:
    /// a long key above many values, which would cost far more than the
    /// file's size to merge and explain.
    #[error(
        "the paths of this file's values add up to over {limit} bytes (4 times the size limit); shorten its keys or nest less"
    )]
    PathsTooLong {
        /// The running total when it passed the limit.
        total: u64,
        /// The budget.
        limit: u64,
    },
    /// Any other schema violation.
    #[error("{message}")]
    Schema {
        /// The validator's message.
        message: String,
    },
    /// A problem with the merge spec itself.
    #[error("{message}")]
    Spec {
        /// What is wrong.
        message: String,
    },
    /// Another form of the same skill in the same layer wins over this file.
    #[error("ignored: {} takes precedence in this layer", winner.display())]
    ShadowedForm {
        /// The file used instead.
        winner: PathBuf,
    },
    /// The fragment's name field differs from its file name.
    #[error("'{field}' is '{declared}' but the file is named '{file}'")]
    NameMismatch {
        /// The name field.
        field: String,
        /// The name the fragment declares.
        declared: String,
        /// The name the file gives.
        file: String,
    },
    /// A layer path that exists but is not a directory.
    #[error("layer path is not a directory; the {layer} is treated as absent")]
    LayerNotDirectory {
        /// The layer.
        layer: Layer,
    },
    /// A layer directory holding more entries than a layer may
    /// ([`crate::source::layers::MAX_LAYER_ENTRIES`]; hidden ones count):
    /// every command that lists the layer refuses it.
    #[error(
        "refusing the {layer}: its directory holds more than {limit} entries (hidden ones count); a layer holds one entry per skill"
    )]
    LayerTooManyEntries {
        /// The layer.
        layer: Layer,
        /// The cap.
        limit: usize,
    },
    /// A skill directory with no `SKILL.md` (files only) in a layer whose
    /// lower layers do not define the skill: its files would add to
    /// nothing.
    #[error(
        "this directory holds files for skill '{}' but no SKILL.md, and no lower layer defines \
         the skill; add its SKILL.md here, or define the skill in a lower layer",
        crate::text::excerpt(name, crate::text::EXCERPT_CHARS)
    )]
    FilesWithoutSkill {
        /// The skill's name.
        name: String,
    },
    /// A requested skill is in no layer.
    #[error("skill '{name}' not found in any layer{}", suggest(suggestion))]
    SkillNotFound {
        /// The name.
        name: String,
        /// The nearest skill name in the layers, if one is close enough.
        suggestion: Option<String>,
    },
    /// A requested skill name is not a valid file stem.
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: String,
    },
    /// A directory entry that looks like a skill file but whose name cannot
    /// be a skill name; it is not read.
    #[error("not read as a skill: {reason}; rename it")]
    SkippedName {
        /// Why the name is refused.
        reason: String,
    },
    /// Two skill names that differ, but not to the eye: equal after Unicode
    /// normalisation (NFC) and case folding.
    #[error(
        "skill name '{}' looks like '{}' (equal after Unicode normalisation and case folding); an override under one name does not apply to the other",
        crate::text::excerpt(name, crate::text::EXCERPT_CHARS),
        crate::text::excerpt(other, crate::text::EXCERPT_CHARS)
    )]
    LookalikeNames {
        /// This file's skill name.
        name: String,
        /// The other name.
        other: String,
    },
    /// Two skill names that differ but read the same: equal under the
    /// confusable skeleton of Unicode Technical Standard #39 (`pdf-tables`
    /// and `pdf-tаbles`, with a Cyrillic а).
    #[error(
        "skill name '{name}' reads as '{other}' ({other_file}): the two are the same under \
         Unicode's confusable skeleton (UTS #39), and an override under one name does not apply \
         to the other; rename one"
    )]
    ConfusableNames {
        /// This file's skill name, as `list` shows it (escaped, its
        /// misleading characters as code points).
        name: String,
        /// The other name, shown the same way.
        other: String,
        /// The other name's first file (escaped).
        other_file: String,
    },
    /// A skill name holding white space, or a dash other than the
    /// hyphen-minus U+002D, which read as a name without them.
    #[error("skill name '{name}' holds {problem}")]
    MisleadingName {
        /// The name, as `list` shows it.
        name: String,
        /// What it holds, the characters as code points (`U+2010`), and
        /// what to do.
        problem: String,
    },
    /// An entry naming a file of the skill that no layer provides.
    #[error(
        "'{field}' names {}, which no layer provides",
        crate::text::excerpt(path, crate::text::EXCERPT_CHARS)
    )]
    MissingFile {
        /// The field.
        field: String,
        /// The file's path in the skill directory.
        path: String,
    },
    /// A file named `SKILL.md` (in any case) below a skill's directory,
    /// among its files.
    #[error(
        "'{file}' is a SKILL.md among the skill's files: an agent would load it as a skill of \
         its own, outside the rules that judge this one (validate, the target's rules, enabled \
         and targets); rename or remove it"
    )]
    NestedSkillMd {
        /// Its path in the skill directory (escaped).
        file: String,
    },
    /// A path of the skill's output that differs only in case from
    /// another: a file system that ignores case makes them one file.
    #[error(
        "'{file}' differs only in case from {other}: on a file system that ignores case \
         (macOS, Windows) they are one file; {fix}"
    )]
    CaseCollision {
        /// Its path in the skill directory (escaped).
        file: String,
        /// The other path, and where it comes from (escaped).
        other: String,
        /// What to do.
        fix: String,
    },
    /// A file of the skill where another path of its output needs a
    /// directory (exactly, or ignoring case).
    #[error(
        "{}; export cannot write both: rename or remove one of them",
        if *file_here {
            format!("'{file}' is a file here, but {other} needs a directory of that name{}", case_note(*case_only))
        } else {
            format!("'{file}' needs a directory '{dir}'{}, but {other} is a file", case_note(*case_only))
        }
    )]
    PathConflict {
        /// The path reported at, in the skill directory (escaped).
        file: String,
        /// Is that path the file (rather than the path below it)?
        file_here: bool,
        /// The path that is a file in one and a directory in the other.
        dir: String,
        /// The other path, and where it comes from (escaped).
        other: String,
        /// Equal only when case is ignored.
        case_only: bool,
    },
    /// A directive (`$patch`) where it means nothing, or misspelled.
    #[error("'{path}': {message}")]
    Directive {
        /// Where, as explain writes paths.
        path: String,
        /// What is wrong and what to write instead.
        message: String,
    },
    /// A `$patch: delete` that found nothing to delete below it.
    #[error(
        "'{path}': $patch: delete finds nothing to delete in the lower layers (stale, or a typo in its key)"
    )]
    StaleDelete {
        /// The path deleted, as explain writes it.
        path: String,
    },
    /// A section of a value merged by section whose heading no lower layer
    /// has, but one that differs only in case or spacing: it was added as a
    /// new section, where the layer most likely meant to replace that one.
    #[error(
        "'{path}': no lower layer has this heading, so the section was added as a new one; they have '{existing}', which differs only in case or spacing: write that heading to replace it"
    )]
    NearMissHeading {
        /// The section, as explain writes it (`body[a]`).
        path: String,
        /// The lower layers' heading (escaped).
        existing: String,
    },
    /// A skill that no layer below the one introducing it defines, and
    /// that lacks what the targets found require: a misspelt override
    /// (`pfd` for `pdf`), or an override of a skill this project lacks.
    #[error("{}", orphan(skill, *layer, lacks, needed_by, *switch_only, suggestion, removed_by))]
    Orphan {
        /// The skill (escaped).
        skill: String,
        /// The lowest layer that has it.
        layer: Layer,
        /// The required fields it lacks.
        lacks: Vec<String>,
        /// The targets requiring them (escaped, joined).
        needed_by: String,
        /// The fragment sets only the fields that switch a skill.
        switch_only: bool,
        /// A skill of a similar name that a lower layer defines.
        suggestion: Option<String>,
        /// The source upstream removed the skill from (escaped), as the
        /// lock records it: the base layer no longer provides it.
        removed_by: Option<String>,
    },
    /// A skill that no layer below the one introducing it defines, whose
    /// name is one edit from a skill a lower layer defines, and that has
    /// no instructions of its own: most likely an override under a
    /// misspelt name (`pfd` for `pdf`), exported as a skill of its own.
    #[error(
        "skill '{skill}' is defined by no layer below the {layer}, and its name is one edit from '{other}', which the {other_layer} defines: it is exported as a skill of its own, not as an override of '{other}' (did you mean '{other}'?); rename it to override '{other}', or give it instructions of its own if it is meant as a new skill"
    )]
    NearName {
        /// The skill (escaped).
        skill: String,
        /// The lowest layer that has it.
        layer: Layer,
        /// The lower layer's skill one edit from it (escaped).
        other: String,
        /// The lowest layer that has that one.
        other_layer: Layer,
    },
    /// A directive of a value merged by section that names a heading the
    /// lower layers do not have.
    #[error(
        "'{path}': $patch: {directive} names a section no lower layer has (renamed upstream, or a typo in the heading); {}",
        if directive == "replace" { "the section was added at the end" } else { "it did nothing" }
    )]
    StaleSection {
        /// The section, as explain writes it (`body[Usage]`).
        path: String,
        /// The directive: `delete`, `replace`, `before` or `after`.
        directive: String,
    },
    /// A section of a value merged by section with a plain heading that no
    /// lower layer has: it was added at the end. It may be a replacement
    /// whose heading upstream removed or renamed (silently become an
    /// addition), or an addition the layer did not mark.
    #[error(
        "'{path}': no lower layer has this heading, so the section is added at the end; if it replaced a section that upstream removed or renamed, remove it or write the new heading; if it is meant as an addition, write <!-- $patch: add --> under its heading"
    )]
    UnmarkedAddition {
        /// The section, as explain writes it (`body[Notes]`).
        path: String,
    },
    /// A section marked `$patch: add` whose heading a lower layer has: it
    /// replaced that section.
    #[error(
        "'{path}': marked $patch: add, but a lower layer has this heading, so the section replaces theirs; write $patch: replace if that is meant, or give the section another heading"
    )]
    NotAnAddition {
        /// The section, as explain writes it.
        path: String,
    },
    /// A value merged by section from more sections and changes than the
    /// size cap allows ([`crate::postmerge::sections`]).
    #[error(
        "'{field}': merging it by section takes more than {limit} sections and changes (this layer's and those below it), one per 32 bytes of the {cap}-byte size limit; each costs memory and a row of explain (replace the value whole, or raise the limit with --max-fragment-bytes)"
    )]
    TooManySections {
        /// The field.
        field: String,
        /// The most sections and changes it may be merged from.
        limit: u64,
        /// The size cap.
        cap: u64,
    },
    /// A value equal to the one it overrides.
    #[error("'{field}' is set to the same value as in the {below}; the override has no effect")]
    NoEffect {
        /// The field path.
        field: String,
        /// The layer whose value it repeats.
        below: Layer,
    },
    /// A skill name too long to export: its manifest's file name,
    /// `<name>.json`, would be longer than file systems allow.
    #[error(
        "the skill name is too long to export: its manifest file name would be {bytes} bytes, \
         over the {limit}-byte limit"
    )]
    NameTooLong {
        /// The length of `<name>.json`, in bytes.
        bytes: usize,
        /// The longest file name allowed, in bytes.
        limit: usize,
    },
}

fn case_note(case_only: bool) -> &'static str {
    if case_only {
        " (ignoring case, as macOS and Windows do)"
    } else {
        ""
    }
}

/// [`DiagnosticKind::Orphan`] in words.
fn orphan(
    skill: &str,
    layer: Layer,
    lacks: &[String],
    needed_by: &str,
    switch_only: bool,
    suggestion: &Option<String>,
    removed_by: &Option<String>,
) -> String {
    let mut head = if switch_only {
        format!(
            "this only switches skill '{skill}' on or off, but no layer below the {layer} defines it"
        )
    } else {
        format!("skill '{skill}' is defined by no layer below the {layer}")
    };
    if let Some(source) = removed_by {
        head.push_str(&format!(
            ": the base layer no longer provides it, as upstream removed it from source '{source}'"
        ));
    }
    if lacks.is_empty() {
        return format!(
            "{head}, and no layer gives it a body: it is listed, but not exported; remove this override, or give the skill a body of its own to keep it"
        );
    }
    let require = if needed_by.contains(" and ") {
        "require"
    } else {
        "requires"
    };
    format!(
        "{head}, and it has no {}, which {needed_by} {require}: it is listed, but not exported{}",
        crate::text::list(lacks.iter().map(String::as_str), true),
        suggest(suggestion)
    )
}

fn suggest(s: &Option<String>) -> String {
    s.as_ref()
        .map(|s| format!(" (did you mean '{s}'?)"))
        .unwrap_or_default()
}

/// One located problem.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The file it is about.
    pub file: Option<PathBuf>,
    /// The layer of that file.
    pub layer: Option<Layer>,
    /// 1-based line, where known.
    pub line: Option<usize>,
    /// 1-based column, where known.
    pub column: Option<usize>,
    /// The field (a dotted path below the top level), where there is one.
    pub field: Option<String>,
    /// What it is.
    pub kind: DiagnosticKind,
}

impl Diagnostic {
    /// An error about `file`.
    pub fn error(file: Option<&Path>, kind: DiagnosticKind) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            file: file.map(Path::to_path_buf),
            layer: None,
            line: None,
            column: None,
            field: None,
            kind,
        }
    }

    /// A warning about `file`.
    pub fn warning(file: Option<&Path>, kind: DiagnosticKind) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(file, kind)
        }
    }

    /// Sets the layer.
    pub(crate) fn in_layer(mut self, layer: Layer) -> Self {
        self.layer = Some(layer);
        self
    }

    /// Sets line and column.
    pub fn at(mut self, pos: Option<(usize, usize)>) -> Self {
        if let Some((line, column)) = pos {
            self.line = Some(line);
            self.column = Some(column);
        }
        self
    }

    /// Sets the field.
    pub(crate) fn on_field(mut self, field: impl Into<String>) -> Self {
        self.field = Some(field.into());
        self
    }

    /// Is this an error (rather than a warning)?
    pub(crate) fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Is it about a place in a file (rather than, say, a name given on
    /// the command line)? Then its line starts with [`Diagnostic::location`].
    pub fn is_located(&self) -> bool {
        self.file.is_some() || self.line.is_some()
    }

    /// The `path:line:col` prefix (as much of it as is known).
    pub fn location(&self) -> String {
        let mut s = self
            .file
            .as_ref()
            .map(|p| crate::text::path(p))
            .unwrap_or_else(|| "<input>".into());
        if let Some(line) = self.line {
            s.push_str(&format!(":{line}"));
            if let Some(col) = self.column {
                s.push_str(&format!(":{col}"));
            }
        }
        s
    }

    /// The diagnostic as a JSON object (for `--json` output).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "severity": self.severity,
            "file": self.file.as_ref().map(|p| p.display().to_string()),
            "layer": self.layer,
            "line": self.line,
            "column": self.column,
            "field": self.field,
            "message": self.message(),
        })
    }

    /// The message, safe to print: control, bidi and invisible characters
    /// escaped, at most [`crate::text::MESSAGE_CHARS`] characters. The values
    /// it quotes were escaped where they were put in, so backslashes are
    /// left as they are ([`crate::text::sanitized_excerpt`]).
    pub fn message(&self) -> String {
        crate::text::sanitized_excerpt(&self.kind.to_string(), crate::text::MESSAGE_CHARS)
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if !self.is_located() {
            return write!(f, "{}: {}", self.severity, self.message());
        }
        write!(
            f,
            "{}: {}: {}",
            self.location(),
            self.severity,
            self.message()
        )
    }
}

/// What kind of failure an [`Error`] is, grouped by what a caller does
/// about it, so that a program tells them apart without reading words
/// ([`Error::kind`]). `--json` prints it as the error's `"kind"`
/// ([`ErrorKind::label`]); Python raises one exception class per kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum ErrorKind {
    /// A file the tool reads does not check or cannot be parsed: a layer's
    /// fragment (with its diagnostics), the project's `sources.toml` or
    /// `sources.lock`, the trust file, an export's record. Fix the file.
    Invalid,
    /// The merge spec is unusable. Fix it, or install the shipped one.
    Spec,
    /// A `--strict` command refused on what it found (validate's problems,
    /// a source's findings); nothing was written. Fix them, or drop
    /// `--strict`.
    Strict,
    /// What was named is not there: a skill, a target, the spec, a source,
    /// a layer directory, a directory never exported to.
    NotFound,
    /// The request itself cannot be carried out as written: a malformed
    /// name, URL, ref or field path, or options that do not go together.
    InvalidInput,
    /// A file the tool did not write is where it would write. Move it
    /// away, or replace it with `--force` where the command offers it.
    Exists,
    /// Two places provide the same thing (a skill in a source and in the
    /// local base layer, in two sources, a name already taken): say which
    /// one wins, or remove one.
    Conflict,
    /// A lock or a record is out of step with what it records (a source
    /// changed or not locked since, a lock written by another version):
    /// `bernstein skills update --yes` writes it again.
    Stale,
    /// Another run is writing the same files, or they changed while this
    /// one ran: run it again.
    Busy,
    /// An export would take a project's own files, which the person has
    /// not trusted as they are now: review them, then `bernstein skills
    /// trust`.
    Untrusted,
    /// Refused to protect the person: a symbolic link, a file that is not
    /// a regular one or lies outside its root, a directory others can
    /// write, a cached or fetched file that does not match its lock, a
    /// commit outside its ref, a source the allow-list refuses.
    Unsafe,
    /// The environment does not say where: `HOME` or an XDG variable is
    /// unset, the working directory is in no project or git work tree, a
    /// target names no place for the scope.
    NoPlace,
    /// A source could not be fetched (git failed, the repository has no
    /// such ref).
    Fetch,
    /// Reading or writing failed at the operating system.
    Io,
}

impl ErrorKind {
    /// Every kind, in declaration order.
    pub const ALL: [ErrorKind; 14] = [
        ErrorKind::Invalid,
        ErrorKind::Spec,
        ErrorKind::Strict,
        ErrorKind::NotFound,
        ErrorKind::InvalidInput,
        ErrorKind::Exists,
        ErrorKind::Conflict,
        ErrorKind::Stale,
        ErrorKind::Busy,
        ErrorKind::Untrusted,
        ErrorKind::Unsafe,
        ErrorKind::NoPlace,
        ErrorKind::Fetch,
        ErrorKind::Io,
    ];

    /// The kind as `--json` prints it (`not_found`).
    pub fn label(self) -> &'static str {
        match self {
            ErrorKind::Invalid => "invalid",
            ErrorKind::Spec => "spec",
            ErrorKind::Strict => "strict",
            ErrorKind::NotFound => "not_found",
            ErrorKind::InvalidInput => "invalid_input",
            ErrorKind::Exists => "exists",
            ErrorKind::Conflict => "conflict",
            ErrorKind::Stale => "stale",
            ErrorKind::Busy => "busy",
            ErrorKind::Untrusted => "untrusted",
            ErrorKind::Unsafe => "unsafe",
            ErrorKind::NoPlace => "no_place",
            ErrorKind::Fetch => "fetch",
            ErrorKind::Io => "io",
        }
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The library's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The merge spec is unusable.
    #[error("{0}")]
    Spec(Box<Diagnostic>),
    /// One or more fragments are invalid; every problem found is listed.
    #[error("{}", .0.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
    Invalid(Vec<Diagnostic>),
    /// A strict export ([`crate::export::ExportOptions::strict`]) wrote
    /// nothing: validate finds these problems, errors and warnings, in its
    /// order.
    #[error("strict: {} problem(s) that validate reports; nothing was written\n{}", problems.len(), problems.iter().map(|d| d.to_string()).collect::<Vec<_>>().join("\n"))]
    Strict {
        /// Every problem, as [`crate::Skills::validate`] lists them.
        problems: Vec<Diagnostic>,
    },
    /// No layer holds the skill.
    #[error("skill '{name}' not found in any layer (searched {}){}", searched.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(", "), suggestion.as_ref().map(|s| format!("; did you mean '{s}'?")).unwrap_or_default())]
    NotFound {
        /// The requested name.
        name: String,
        /// The layer directories searched.
        searched: Vec<PathBuf>,
        /// The nearest skill name in the layers, if one is close enough to
        /// be a typo (`did_you_mean`).
        suggestion: Option<String>,
    },
    /// The requested name is not a valid skill name.
    #[error("invalid skill name {name:?}: {reason}")]
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        reason: &'static str,
    },
    /// A request that cannot be carried out as asked (nothing was changed).
    #[error("{}{message}", path.as_ref().map(|p| format!("{}: ", p.display())).unwrap_or_default())]
    Refused {
        /// What kind of refusal it is: what a caller may do about it.
        kind: ErrorKind,
        /// The file concerned, if any.
        path: Option<PathBuf>,
        /// Why.
        message: String,
    },
    /// Writing output failed.
    #[error("{}: cannot write: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// None of the three layer directories exists: a mistyped
    /// `--layers-root` or XDG directory, which would otherwise pass as an
    /// empty tree.
    #[error("no layer directory exists; looked at {} (each layer is the first of its flag --base, --team or --user, its variable BERNSTEIN_SKILLS_BASE, _TEAM or _USER, for the team a project-local .bernstein/skills, and the XDG directory)", searched.iter().map(|p| crate::text::path(p)).collect::<Vec<_>>().join(", "))]
    NoLayers {
        /// The directories looked at, base, team, user.
        searched: Vec<PathBuf>,
    },
    /// `export --check` of a directory that does not exist.
    #[error(
        "{}: does not exist; nothing has been exported there yet",
        crate::text::path(dir)
    )]
    NotExported {
        /// The directory.
        dir: PathBuf,
    },
    /// An export into a place outside the project that would take the
    /// project's own layer, which the person has not trusted as it is now
    /// (`source::trust`). Nothing was written or removed.
    #[error("{}", untrusted(layer, out, changes.as_deref()))]
    Untrusted {
        /// The project-local layer, as the person would name it.
        layer: PathBuf,
        /// The project's root.
        project: PathBuf,
        /// The output directory.
        out: PathBuf,
        /// `None`: never trusted; else what changed since it was.
        changes: Option<Vec<FileChange>>,
    },
    /// A directory or file the tool keeps for the person (their state,
    /// their cache) is not theirs alone: another user owns it, others can
    /// write it, or it is a symbolic link or something else where the tool
    /// keeps its own (`beneath::private`). Nothing was read from it or
    /// written to it.
    #[error("{}: {reason}", crate::text::path(path))]
    NotPrivate {
        /// The directory or file.
        path: PathBuf,
        /// What is wrong, and the fix.
        reason: String,
    },
    /// An output directory's record of what export wrote
    /// (`.bernstein-skills.json`) cannot be used.
    #[error("{}{}: {message}", crate::text::path(path), at.map(|(l, c)| format!(":{l}:{c}")).unwrap_or_default())]
    BadRecord {
        /// The record file.
        path: PathBuf,
        /// Line and column, when the JSON itself is broken.
        at: Option<(usize, usize)>,
        /// What is wrong (escaped).
        message: String,
    },
}

impl Error {
    /// `refused` as an error, `variable` being the one that places the
    /// directory (`XDG_STATE_HOME`).
    pub(crate) fn not_private(
        refused: crate::beneath::private::NotPrivate,
        variable: &str,
    ) -> Error {
        Error::NotPrivate {
            reason: refused.reason(variable),
            path: refused.path().to_path_buf(),
        }
    }

    /// What kind of failure this is ([`ErrorKind`]).
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Spec(_) => ErrorKind::Spec,
            Error::Invalid(_) | Error::BadRecord { .. } => ErrorKind::Invalid,
            Error::Strict { .. } => ErrorKind::Strict,
            Error::NotFound { .. } | Error::NoLayers { .. } | Error::NotExported { .. } => {
                ErrorKind::NotFound
            }
            Error::InvalidName { .. } => ErrorKind::InvalidInput,
            Error::Refused { kind, .. } => *kind,
            Error::Write { .. } => ErrorKind::Io,
            Error::Untrusted { .. } => ErrorKind::Untrusted,
            Error::NotPrivate { .. } => ErrorKind::Unsafe,
        }
    }

    /// The file this error is about when it carries no diagnostics.
    pub fn file(&self) -> Option<&Path> {
        match self {
            Error::Refused { path, .. } => path.as_deref(),
            Error::Write { path, .. }
            | Error::BadRecord { path, .. }
            | Error::NotPrivate { path, .. } => Some(path),
            Error::NotExported { dir } => Some(dir),
            _ => None,
        }
    }

    /// A strict export's refusal of `n` problems (listed `listed`: ` above`
    /// on a terminal), in words.
    pub fn strict_refusal(n: usize, listed: &str) -> String {
        format!(
            "--strict: {n} problem(s){listed}, which `bernstein skills validate --strict` lists \
             too; nothing was written"
        )
    }

    /// Its problems as diagnostics (each as `validate --json` gives them):
    /// its own, or one made of its message and the file it names. A strict
    /// export's refusal comes first, then the problems that made it.
    fn problems_json(&self) -> Vec<serde_json::Value> {
        if let Error::Strict { problems } = self {
            let refusal = Error::refused(
                ErrorKind::Strict,
                None,
                Error::strict_refusal(problems.len(), ""),
            );
            let mut all = refusal.problems_json();
            all.extend(problems.iter().map(Diagnostic::to_json));
            return all;
        }
        let diags = self.diagnostics();
        if !diags.is_empty() {
            return diags.iter().map(Diagnostic::to_json).collect();
        }
        vec![serde_json::json!({
            "severity": "error",
            "file": self.file().map(|p| p.display().to_string()),
            "layer": null,
            "line": null,
            "column": null,
            "field": null,
            "message": crate::text::sanitized_excerpt(&self.to_string(), crate::text::MESSAGE_CHARS),
        })]
    }

    /// The error as `--json` prints it under `"error"` (docs/json.md):
    /// `{"kind", "message", "file", "layer", "line", "column", "field",
    /// "diagnostics"}`, its first problem at the top, every problem in
    /// `diagnostics`. Values are data: JSON escapes them; only messages
    /// are cut.
    pub fn to_json(&self) -> serde_json::Value {
        Error::all_to_json(std::slice::from_ref(self))
    }

    /// Several errors as one [`Error::to_json`] object (`show a b c`), of
    /// the first one's kind.
    pub fn all_to_json(errors: &[Error]) -> serde_json::Value {
        let diagnostics: Vec<serde_json::Value> =
            errors.iter().flat_map(Error::problems_json).collect();
        let mut error = diagnostics.first().cloned().unwrap_or_default();
        if let serde_json::Value::Object(m) = &mut error {
            m.remove("severity");
            if let Some(first) = errors.first() {
                m.insert("kind".into(), first.kind().label().into());
            }
            m.insert("diagnostics".into(), diagnostics.into());
        }
        error
    }

    /// A refusal of `kind`, about `path` if given.
    pub fn refused(kind: ErrorKind, path: Option<PathBuf>, message: impl Into<String>) -> Error {
        Error::Refused {
            kind,
            path,
            message: message.into(),
        }
    }

    /// The diagnostics carried by this error (empty for errors that have none).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        match self {
            Error::Spec(d) => std::slice::from_ref(d),
            Error::Invalid(ds) | Error::Strict { problems: ds } => ds,
            _ => &[],
        }
    }
}

impl Error {
    /// The same error, naming the file opened at `io` as `shown` (where a
    /// person stands: `.bernstein/sources.lock` for the absolute path the
    /// library opened), in the fields that name a file.
    pub fn shown_as(mut self, io: &Path, shown: &Path) -> Error {
        let escaped = PathBuf::from(crate::text::path(io));
        let swap = |p: &mut PathBuf| {
            if *p == io || *p == escaped {
                *p = shown.to_path_buf();
            }
        };
        match &mut self {
            Error::Spec(d) => d.file.iter_mut().for_each(swap),
            Error::Invalid(ds) | Error::Strict { problems: ds } => {
                ds.iter_mut().flat_map(|d| d.file.iter_mut()).for_each(swap)
            }
            Error::Refused { path, .. } => path.iter_mut().for_each(swap),
            Error::Write { path, .. } | Error::BadRecord { path, .. } => swap(path),
            _ => {}
        }
        self
    }
}

impl From<Diagnostic> for Error {
    fn from(d: Diagnostic) -> Self {
        Error::Invalid(vec![d])
    }
}

/// How one file differs between two states of a directory (a trusted
/// layer and the layer now).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "change", content = "file", rename_all = "lowercase")]
pub enum FileChange {
    /// A file the earlier state did not have.
    Added(String),
    /// A file the earlier state had and that is gone.
    Removed(String),
    /// A file whose content differs.
    Changed(String),
}

impl FileChange {
    /// The file, relative to the directory.
    pub fn file(&self) -> &str {
        match self {
            FileChange::Added(f) | FileChange::Removed(f) | FileChange::Changed(f) => f,
        }
    }

    /// `added`, `removed` or `changed`.
    pub fn label(&self) -> &'static str {
        match self {
            FileChange::Added(_) => "added",
            FileChange::Removed(_) => "removed",
            FileChange::Changed(_) => "changed",
        }
    }

    /// The file as a person standing where `layer` (the project's layer,
    /// as they would type it) was shown from names it, escaped: a trust
    /// snapshot names the layer's files relative to the layer
    /// (`writer.yaml`) and the project's other files beside it
    /// (`../sources.lock`), which read `.bernstein/skills/writer.yaml` and
    /// `.bernstein/sources.lock` from the project's root.
    pub fn shown(&self, layer: &Path) -> String {
        let mut dir = layer.to_path_buf();
        let mut rest = self.file();
        while let Some(r) = rest.strip_prefix("../") {
            match dir.components().next_back() {
                Some(std::path::Component::Normal(_)) => {
                    dir.pop();
                }
                _ => dir.push(".."),
            }
            rest = r;
        }
        crate::text::path(&dir.join(rest))
    }
}

/// [`Error::Untrusted`] in words: what was refused, why, and what to do.
fn untrusted(layer: &Path, out: &Path, changes: Option<&[FileChange]>) -> String {
    let dir = layer.parent().filter(|d| !d.as_os_str().is_empty());
    let head = format!(
        "refusing to export into {}, outside this project: it would take this project's {} (its team layer and upstream sources)",
        crate::text::path(out),
        crate::text::path(dir.unwrap_or(Path::new(".bernstein")))
    );
    match changes {
        None => format!(
            "{head}, which you have not trusted; review it, then run `bernstein skills trust` here"
        ),
        Some(changes) => {
            let items: Vec<String> = changes
                .iter()
                .map(|c| format!("{} {}", c.label(), c.shown(layer)))
                .collect();
            format!(
                "{head}, which changed since you trusted it ({}); review the changes, then run `bernstein skills trust` here",
                crate::text::list(items.iter().map(String::as_str), false)
            )
        }
    }
}

/// The library's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The closest of `candidates` to `word`, if it is close enough to be a typo.
/// [`did_you_mean`], else the one candidate that `word` begins
/// (`claude` for `claude-code`).
pub(crate) fn did_you_mean_or_prefix<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str> + Clone,
) -> Option<String> {
    did_you_mean(word, candidates.clone()).or_else(|| {
        let mut starts = candidates
            .into_iter()
            .filter(|c| !word.is_empty() && c.starts_with(word));
        match (starts.next(), starts.next()) {
            (Some(one), None) => Some(one.to_owned()),
            _ => None,
        }
    })
}

pub(crate) fn did_you_mean<'a>(
    word: &str,
    candidates: impl IntoIterator<Item = &'a str>,
) -> Option<String> {
    let mut best: Option<(usize, &str)> = None;
    let len = word.chars().count();
    for c in candidates {
        let c_len = c.chars().count();
        let limit = (c_len.max(len) / 3).max(1);
        // The distance is at least the difference in length: a long word
        // is not compared with short candidates at all.
        if c_len.abs_diff(len) > limit {
            continue;
        }
        // Optimal string alignment: a swap of two adjacent characters, the
        // commonest typo, counts as one edit.
        let d = strsim::osa_distance(word, c);
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trusted_file_is_shown_from_where_the_person_stands() {
        let lock = FileChange::Changed("../sources.lock".into());
        let skill = FileChange::Added("pdf/SKILL.md".into());
        assert_eq!(
            lock.shown(Path::new(".bernstein/skills")),
            ".bernstein/sources.lock"
        );
        assert_eq!(
            lock.shown(Path::new("../../.bernstein/skills")),
            "../../.bernstein/sources.lock"
        );
        assert_eq!(lock.shown(Path::new("skills")), "sources.lock");
        assert_eq!(
            skill.shown(Path::new(".bernstein/skills")),
            ".bernstein/skills/pdf/SKILL.md"
        );
        // Escaped as every path printed is.
        let evil = FileChange::Added("a\u{1b}[2J.md".into());
        assert!(!evil.shown(Path::new("s")).contains('\u{1b}'));
    }

    #[test]
    fn suggestions() {
        let fields = ["name", "description", "trigger_keywords"];
        assert_eq!(
            did_you_mean("descripton", fields).as_deref(),
            Some("description")
        );
        assert_eq!(did_you_mean("nmae", fields).as_deref(), Some("name"));
        assert_eq!(did_you_mean("colour", fields), None);
        assert_eq!(
            did_you_mean("descirption", fields).as_deref(),
            Some("description")
        );
        assert_eq!(did_you_mean(&"n".repeat(1 << 20), fields), None);
        // A swap of adjacent characters is one edit, of distant ones two.
        assert_eq!(did_you_mean("mane", fields), None);
    }

    #[test]
    fn display_is_where_then_what() {
        let d = Diagnostic::error(
            Some(Path::new("user/writer.yaml")),
            DiagnosticKind::UnknownField {
                field: "descripton".into(),
                suggestion: Some("description".into()),
            },
        )
        .at(Some((3, 1)));
        assert_eq!(
            d.to_string(),
            "user/writer.yaml:3:1: error: unknown field 'descripton' (did you mean 'description'?)"
        );
    }
}
