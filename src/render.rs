//! Deterministic JSON: keys sorted at every depth, two-space indentation,
//! a trailing newline, UTF-8 as is (no `\u` escapes for non-ASCII).
//!
//! The writer sorts keys itself rather than trusting a map's iteration
//! order, so the bytes do not depend on how `serde_json` was built.

use serde_json::Value;

/// Renders `value` as canonical pretty JSON with a trailing newline.
pub fn to_json(value: &Value) -> String {
    let mut out = String::with_capacity(256);
    write_value(&mut out, value, 0);
    out.push('\n');
    out
}

fn indent(out: &mut String, depth: usize) {
    for _ in 0..depth {
        out.push_str("  ");
    }
}

fn write_str(out: &mut String, s: &str) {
    // serde_json escapes only what JSON requires; non-ASCII stays as is.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn write_value(out: &mut String, value: &Value, depth: usize) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => out.push_str(&n.to_string()),
        Value::String(s) => write_str(out, s),
        Value::Array(items) if items.is_empty() => out.push_str("[]"),
        Value::Array(items) => {
            out.push_str("[\n");
            for (i, item) in items.iter().enumerate() {
                indent(out, depth + 1);
                write_value(out, item, depth + 1);
                out.push_str(if i + 1 < items.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push(']');
        }
        Value::Object(m) if m.is_empty() => out.push_str("{}"),
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push_str("{\n");
            for (i, (k, v)) in entries.iter().enumerate() {
                indent(out, depth + 1);
                write_str(out, k);
                out.push_str(": ");
                write_value(out, v, depth + 1);
                out.push_str(if i + 1 < entries.len() { ",\n" } else { "\n" });
            }
            indent(out, depth);
            out.push('}');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn canonical_form() {
        let v = json!({"b": [1, {"d": null, "c": "é"}], "a": {}, "e": []});
        assert_eq!(
            to_json(&v),
            "{\n  \"a\": {},\n  \"b\": [\n    1,\n    {\n      \"c\": \"é\",\n      \"d\": null\n    }\n  ],\n  \"e\": []\n}\n"
        );
    }
}
