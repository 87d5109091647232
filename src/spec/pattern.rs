//! Patterns in a spec: ECMA-262 regular expressions (as JSON Schema and
//! every editor's validator read them), run in linear time.
//!
//! A spec may come from a pull request like any layer, and its patterns run
//! on every value of every fragment. Two engines share the work, each for
//! what it is made for:
//!
//! - **Syntax**: `regress`, an ECMA-262 regular expression implementation,
//!   parses the pattern in Unicode mode (the `u` flag JSON Schema
//!   validators use). What it refuses, Ajv and yaml-language-server refuse
//!   too: `\p{Greek}` (a script needs `\p{Script=Greek}`), `\pL`, `(?i)`,
//!   POSIX classes.
//! - **Matching**: the `regex` crate, through `jsonschema`, which matches in
//!   time linear in the input. It has no backreferences and no lookaround,
//!   whose ECMA-262 meaning needs backtracking (a backreference costs
//!   seconds on a thousand items): a pattern with one is refused, located,
//!   rather than matched with other semantics or at exponential cost.
//!
//! The Unicode tables of the two, and of editors' validators, follow their
//! own Unicode versions: a character assigned in the newest version may be
//! classed differently by an older validator.

use std::sync::Arc;

use jsonschema::PatternOptions;

/// The longest pattern a spec may hold, in characters.
pub(crate) const MAX_PATTERN_CHARS: usize = 1000;

/// The compiled size a pattern may reach (the `regex` crate's own default
/// is 10 MiB; a spec's patterns are small).
const MAX_COMPILED_BYTES: usize = 2 * 1024 * 1024;

/// Why a pattern cannot be used, in words that complete "'pattern' P …".
pub fn supported(pattern: &str) -> Result<(), String> {
    let chars = pattern.chars().count();
    if chars > MAX_PATTERN_CHARS {
        return Err(format!(
            "is {chars} characters long, over the {MAX_PATTERN_CHARS}-character limit"
        ));
    }
    if let Err(e) = regress::Regex::with_flags(pattern, "u") {
        return Err(format!(
            "is not an ECMA-262 regular expression ({e}), as JSON Schema and editors read it"
        ));
    }
    if let Some(what) = backtracking(pattern) {
        return Err(format!(
            "uses {what}, which cannot be matched in linear time; write the pattern without it"
        ));
    }
    let schema = serde_json::json!({"type": "string", "pattern": pattern});
    match jsonschema::draft7::options()
        .with_pattern_options(engine())
        .build(&schema)
    {
        Ok(_) => Ok(()),
        Err(e) => Err(format!(
            "cannot be compiled: {}",
            crate::text::excerpt(&e.to_string(), crate::text::EXCERPT_CHARS)
        )),
    }
}

/// The pattern engine every compiled schema uses: `regex`, linear time,
/// bounded in size.
pub(crate) fn engine() -> PatternOptions<jsonschema::Regex> {
    PatternOptions::regex().size_limit(MAX_COMPILED_BYTES)
}

/// A backreference or a lookaround in an ECMA-262 pattern, found on the
/// pattern as `jsonschema` translates it for the `regex` crate, by the
/// parser of that crate: exactly the constructs it cannot match.
fn backtracking(pattern: &str) -> Option<&'static str> {
    use regex_syntax::ast::ErrorKind;
    let translated = jsonschema_regex::to_rust_regex(pattern).ok()?;
    let err = regex_syntax::ast::parse::Parser::new()
        .parse(&translated)
        .err()?;
    match err.kind() {
        ErrorKind::UnsupportedBackreference => Some("a backreference"),
        ErrorKind::UnsupportedLookAround => Some("a lookaround"),
        _ => None,
    }
}

/// A schema compiled under draft 7 with the pattern engine above.
pub(crate) fn compile_draft7(
    schema: &serde_json::Value,
) -> Result<Arc<jsonschema::Validator>, jsonschema::ValidationError<'static>> {
    jsonschema::draft7::options()
        .with_pattern_options(engine())
        .build(schema)
        .map(Arc::new)
}

#[cfg(test)]
mod tests {
    use super::supported;

    #[test]
    fn ecma_patterns_pass() {
        for p in [
            r"^[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+(?:-[\p{Ll}\p{Lm}\p{Lo}\p{Nd}]+)*$",
            r"^\p{Script=Greek}+$",
            r"^\p{gc=Lu}\p{Lowercase_Letter}*$",
            r"^\d{4}-\d{2}$",
            "^(?:[a-z]+|[0-9]+)$",
        ] {
            assert_eq!(supported(p), Ok(()), "{p}");
        }
    }

    #[test]
    fn what_ecma_refuses_is_refused() {
        for (p, says) in [
            (r"^\p{Greek}+$", "not an ECMA-262 regular expression"),
            (r"\pL", "not an ECMA-262"),
            ("(?i)a", "not an ECMA-262"),
            ("[[:alpha:]]", "not an ECMA-262"),
            (r"\z", "not an ECMA-262"),
            ("a{2,1}", "not an ECMA-262"),
        ] {
            let e = supported(p).unwrap_err();
            assert!(e.contains(says), "{p}: {e}");
        }
    }

    #[test]
    fn backreferences_and_lookaround_are_refused() {
        for (p, what) in [
            (r"^(?:(a)|b)+\1$", "a backreference"),
            ("^(?=a)a$", "a lookaround"),
            ("^a(?!b)", "a lookaround"),
            ("(?<=a)b", "a lookaround"),
        ] {
            let e = supported(p).unwrap_err();
            assert!(e.contains(what), "{p}: {e}");
            assert!(e.contains("linear time"), "{p}: {e}");
        }
    }

    #[test]
    fn huge_patterns_are_refused() {
        let long = "a".repeat(super::MAX_PATTERN_CHARS + 1);
        assert!(
            supported(&long)
                .unwrap_err()
                .contains("over the 1000-character limit")
        );
        // Small to write, large to compile.
        let e = supported(r"^(?:\p{L}{100}){100}$").unwrap_err();
        assert!(e.contains("cannot be compiled"), "{e}");
    }
}
