//! The fragment schema, evaluated without compiling it.
//!
//! Compiling the generated schema with `jsonschema` (its meta-schema check,
//! its validators, its patterns' automata) costs several times what a
//! `show` does besides. Most fragments are valid, and a valid fragment only
//! needs a yes. [`Quick`] walks the very schema document the validator
//! would compile, keyword by keyword, under draft 7's rules, and answers
//! [`Verdict::Valid`], [`Verdict::Invalid`] or [`Verdict::Unsure`]. Only a
//! fragment that is not plainly valid pays for compiling the schema, which
//! then finds and words its errors.
//!
//! It takes the keywords the generator writes ([`super::SHARED_KEYWORDS`])
//! and nothing else: any other keyword, a `$ref` outside the document, a
//! pattern outside [`CharPattern`]'s subset, numbers whose comparison would
//! need more than exact arithmetic, or a walk longer than its budget make
//! it unsure. A differential test (`src/validate/differential.rs`) checks it
//! against the compiled schema on generated fragments.

use std::collections::HashMap;

use serde_json::{Number, Value};

use super::pattern::CharPattern;

/// What the quick walk says of an instance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Valid,
    Invalid,
    /// The walk cannot tell: ask the compiled schema.
    Unsure,
}

/// A schema document, compiled for quick walks: each subschema a node of
/// checks, each `$ref` resolved to the node of its target.
#[derive(Debug)]
pub(crate) struct Quick {
    schema: Value,
    nodes: Vec<Node>,
    /// Every `pattern` of the document, compiled when it is in the subset.
    patterns: Vec<Option<CharPattern>>,
}

#[derive(Debug)]
enum Node {
    Bool(bool),
    /// A keyword the walk does not know, a `$ref` it cannot follow, a
    /// malformed value: reaching it makes the walk unsure.
    Unsure,
    Ref(usize),
    Checks {
        /// The `type` keyword, as a set of [`TYPE_NAMES`] bits.
        types: Option<u8>,
        checks: Vec<Check>,
    },
}

#[derive(Debug)]
enum Check {
    Enum(Vec<Value>),
    MinLength(u64),
    MaxLength(u64),
    Pattern(usize),
    Minimum(Number),
    Maximum(Number),
    MaxProperties(u64),
    Required(Vec<String>),
    /// `properties` (sorted by name) and `additionalProperties`.
    Members {
        properties: Vec<(String, usize)>,
        additional: Option<usize>,
    },
    Items(usize),
    AnyOf(Vec<usize>),
    Not(usize),
    If {
        cond: usize,
        then: Option<usize>,
        otherwise: Option<usize>,
    },
}

/// The names of `type`, in the order of their bits.
const TYPE_NAMES: [&str; 7] = [
    "null", "boolean", "object", "array", "string", "number", "integer",
];

/// How deep `$ref`s and subschemas may nest in one walk.
const MAX_DEPTH: usize = 512;

/// Schema nodes visited per instance node, beyond a fixed allowance.
const STEPS_PER_VALUE: usize = 64;

struct Unsure;

impl Quick {
    pub(crate) fn new(schema: Value) -> Quick {
        let mut c = Compiler {
            root: &schema,
            nodes: Vec::new(),
            refs: HashMap::new(),
            patterns: HashMap::new(),
        };
        c.node(&schema);
        let mut patterns: Vec<(usize, Option<CharPattern>)> = c.patterns.into_values().collect();
        patterns.sort_by_key(|(i, _)| *i);
        let nodes = c.nodes;
        Quick {
            schema,
            nodes,
            patterns: patterns.into_iter().map(|(_, p)| p).collect(),
        }
    }

    /// Is every pattern of the document in the quick subset?
    pub(crate) fn takes_every_pattern(&self) -> bool {
        self.patterns.iter().all(Option::is_some)
    }

    pub(crate) fn schema(&self) -> &Value {
        &self.schema
    }

    /// The verdict of the schema on `instance`.
    pub(crate) fn check(&self, instance: &Value) -> Verdict {
        let mut walk = Walk {
            quick: self,
            steps: 4096 + STEPS_PER_VALUE.saturating_mul(count_values(instance, 0)),
        };
        match walk.valid(0, instance, 0) {
            Ok(true) => Verdict::Valid,
            Ok(false) => Verdict::Invalid,
            Err(Unsure) => Verdict::Unsure,
        }
    }
}

struct Compiler<'s> {
    root: &'s Value,
    nodes: Vec<Node>,
    /// The node of each `$ref` target compiled so far.
    refs: HashMap<&'s str, usize>,
    /// Each distinct pattern: its index, and itself compiled.
    patterns: HashMap<&'s str, (usize, Option<CharPattern>)>,
}

impl<'s> Compiler<'s> {
    /// Compiles `schema` into a new node; its index.
    fn node(&mut self, schema: &'s Value) -> usize {
        let id = self.nodes.len();
        self.nodes.push(Node::Unsure);
        self.nodes[id] = self.build(schema);
        id
    }

    fn reference(&mut self, r: &'s str) -> usize {
        if let Some(&id) = self.refs.get(r) {
            return id;
        }
        // The node is reserved first: a target may refer to itself.
        let id = self.nodes.len();
        self.nodes.push(Node::Unsure);
        self.refs.insert(r, id);
        let root = self.root;
        if let Some(target) = r.strip_prefix('#').and_then(|p| root.pointer(p)) {
            self.nodes[id] = self.build(target);
        }
        id
    }

    fn build(&mut self, schema: &'s Value) -> Node {
        self.build_checks(schema).unwrap_or(Node::Unsure)
    }

    fn build_checks(&mut self, schema: &'s Value) -> Option<Node> {
        let s = match schema {
            Value::Bool(b) => return Some(Node::Bool(*b)),
            Value::Object(s) => s,
            _ => return None,
        };
        // Draft 7: a `$ref` stands for its target; its siblings are ignored.
        if let Some(r) = s.get("$ref") {
            return Some(Node::Ref(self.reference(r.as_str()?)));
        }
        let types = match s.get("type") {
            None => None,
            Some(Value::Array(names)) => {
                let mut bits = 0;
                for n in names {
                    bits |= type_bit(n.as_str()?)?;
                }
                Some(bits)
            }
            Some(name) => Some(type_bit(name.as_str()?)?),
        };
        let mut checks = Vec::new();
        for (k, v) in s {
            let check = match k.as_str() {
                "type" | "then" | "else" | "additionalProperties" => continue,
                "$schema" | "$id" | "$defs" | "definitions" | "title" | "description"
                | "examples" | "default" | "$comment" => continue,
                "enum" => Check::Enum(v.as_array()?.clone()),
                "minLength" => Check::MinLength(v.as_u64()?),
                "maxLength" => Check::MaxLength(v.as_u64()?),
                "pattern" => {
                    let p = v.as_str()?;
                    let next = self.patterns.len();
                    let (i, _) = self
                        .patterns
                        .entry(p)
                        .or_insert_with(|| (next, CharPattern::new(p)));
                    Check::Pattern(*i)
                }
                "minimum" => Check::Minimum(v.as_number()?.clone()),
                "maximum" => Check::Maximum(v.as_number()?.clone()),
                "maxProperties" => Check::MaxProperties(v.as_u64()?),
                "required" => Check::Required(
                    v.as_array()?
                        .iter()
                        .map(|n| n.as_str().map(str::to_owned))
                        .collect::<Option<_>>()?,
                ),
                "properties" => {
                    let mut properties = Vec::new();
                    for (name, sub) in v.as_object()? {
                        properties.push((name.clone(), self.node(sub)));
                    }
                    // For binary search, whatever the map's own order.
                    properties.sort_by(|a, b| a.0.cmp(&b.0));
                    Check::Members {
                        properties,
                        additional: None,
                    }
                }
                "items" => match v {
                    Value::Object(_) | Value::Bool(_) => Check::Items(self.node(v)),
                    _ => return None,
                },
                "anyOf" => Check::AnyOf(v.as_array()?.iter().map(|b| self.node(b)).collect()),
                "not" => Check::Not(self.node(v)),
                "if" => Check::If {
                    cond: self.node(v),
                    then: s.get("then").map(|t| self.node(t)),
                    otherwise: s.get("else").map(|e| self.node(e)),
                },
                _ => return None,
            };
            checks.push(check);
        }
        if let Some(a) = s.get("additionalProperties") {
            let a = self.node(a);
            match checks
                .iter_mut()
                .find(|c| matches!(c, Check::Members { .. }))
            {
                Some(Check::Members { additional, .. }) => *additional = Some(a),
                _ => checks.push(Check::Members {
                    properties: Vec::new(),
                    additional: Some(a),
                }),
            }
        }
        Some(Node::Checks { types, checks })
    }
}

fn type_bit(name: &str) -> Option<u8> {
    TYPE_NAMES.iter().position(|t| *t == name).map(|i| 1 << i)
}

/// The number of values in `v` (at least one), not counting below a depth
/// of 1024: only a budget depends on it.
fn count_values(v: &Value, depth: usize) -> usize {
    if depth > 1024 {
        return 1;
    }
    match v {
        Value::Array(items) => {
            1 + items
                .iter()
                .map(|v| count_values(v, depth + 1))
                .sum::<usize>()
        }
        Value::Object(m) => {
            1 + m
                .values()
                .map(|v| count_values(v, depth + 1))
                .sum::<usize>()
        }
        _ => 1,
    }
}

struct Walk<'q> {
    quick: &'q Quick,
    steps: usize,
}

impl Walk<'_> {
    fn valid(&mut self, node: usize, inst: &Value, depth: usize) -> Result<bool, Unsure> {
        self.steps = self.steps.checked_sub(1).ok_or(Unsure)?;
        if depth > MAX_DEPTH {
            return Err(Unsure);
        }
        let (types, checks) = match &self.quick.nodes[node] {
            Node::Bool(b) => return Ok(*b),
            Node::Unsure => return Err(Unsure),
            Node::Ref(target) => return self.valid(*target, inst, depth + 1),
            Node::Checks { types, checks } => (types, checks),
        };
        // The type first: it fails fastest, and spares the rest.
        if let Some(bits) = types
            && type_bits(inst) & bits == 0
        {
            return Ok(false);
        }
        for check in checks {
            let ok = match (check, inst) {
                (Check::Enum(allowed), _) => {
                    let mut any = false;
                    for a in allowed {
                        if equal(a, inst)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                (Check::MinLength(n), Value::String(text)) => text.chars().count() as u64 >= *n,
                (Check::MaxLength(n), Value::String(text)) => text.chars().count() as u64 <= *n,
                (Check::Pattern(i), Value::String(text)) => {
                    let p = self.quick.patterns[*i].as_ref().ok_or(Unsure)?;
                    p.is_match(text).ok_or(Unsure)?
                }
                (Check::Minimum(limit), Value::Number(n)) => compare(n, limit)?.is_ge(),
                (Check::Maximum(limit), Value::Number(n)) => compare(n, limit)?.is_le(),
                (Check::MaxProperties(n), Value::Object(m)) => m.len() as u64 <= *n,
                (Check::Required(names), Value::Object(m)) => {
                    names.iter().all(|n| m.contains_key(n))
                }
                (
                    Check::Members {
                        properties,
                        additional,
                    },
                    Value::Object(m),
                ) => {
                    let mut all = true;
                    for (key, value) in m {
                        let sub = properties
                            .binary_search_by(|(name, _)| name.as_str().cmp(key))
                            .ok()
                            .map(|i| properties[i].1)
                            .or(*additional);
                        if let Some(sub) = sub
                            && !self.valid(sub, value, depth + 1)?
                        {
                            all = false;
                            break;
                        }
                    }
                    all
                }
                (Check::Items(sub), Value::Array(items)) => {
                    let mut all = true;
                    for item in items {
                        if !self.valid(*sub, item, depth + 1)? {
                            all = false;
                            break;
                        }
                    }
                    all
                }
                (Check::AnyOf(branches), _) => {
                    let mut any = false;
                    for b in branches {
                        if self.valid(*b, inst, depth + 1)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
                (Check::Not(sub), _) => !self.valid(*sub, inst, depth + 1)?,
                (
                    Check::If {
                        cond,
                        then,
                        otherwise,
                    },
                    _,
                ) => {
                    let branch = if self.valid(*cond, inst, depth + 1)? {
                        then
                    } else {
                        otherwise
                    };
                    match branch {
                        Some(b) => self.valid(*b, inst, depth + 1)?,
                        None => true,
                    }
                }
                // A check of another type of value passes.
                _ => true,
            };
            if !ok {
                return Ok(false);
            }
        }
        Ok(true)
    }
}

/// The [`TYPE_NAMES`] bits `inst` has.
fn type_bits(inst: &Value) -> u8 {
    match inst {
        Value::Null => 1,
        Value::Bool(_) => 1 << 1,
        Value::Object(_) => 1 << 2,
        Value::Array(_) => 1 << 3,
        Value::String(_) => 1 << 4,
        // Draft 7: a number with a zero fractional part is an integer.
        Value::Number(n)
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            (1 << 5) | (1 << 6)
        }
        Value::Number(_) => 1 << 5,
    }
}

/// An integer of a JSON number, when it is one exactly.
fn exact(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

/// The order of two numbers, when exact arithmetic can tell it.
fn compare(a: &Number, b: &Number) -> Result<std::cmp::Ordering, Unsure> {
    if let (Some(x), Some(y)) = (exact(a), exact(b)) {
        return Ok(x.cmp(&y));
    }
    // A float against a float, or against an integer it can hold exactly.
    const SAFE: i128 = 1 << 53;
    let as_float = |n: &Number| match exact(n) {
        Some(i) if i.abs() <= SAFE => Some(i as f64),
        Some(_) => None,
        None => n.as_f64(),
    };
    match (as_float(a), as_float(b)) {
        (Some(x), Some(y)) => x.partial_cmp(&y).ok_or(Unsure),
        _ => Err(Unsure),
    }
}

/// JSON equality as JSON Schema means it (`1` equals `1.0`).
fn equal(a: &Value, b: &Value) -> Result<bool, Unsure> {
    Ok(match (a, b) {
        (Value::Number(x), Value::Number(y)) => compare(x, y)?.is_eq(),
        (Value::Array(x), Value::Array(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (x, y) in x.iter().zip(y) {
                if !equal(x, y)? {
                    return Ok(false);
                }
            }
            true
        }
        (Value::Object(x), Value::Object(y)) => {
            if x.len() != y.len() {
                return Ok(false);
            }
            for (k, x) in x {
                match y.get(k) {
                    Some(y) if equal(x, y)? => {}
                    _ => return Ok(false),
                }
            }
            true
        }
        (a, b) => a == b,
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{Quick, Verdict};

    fn verdict(schema: serde_json::Value, inst: serde_json::Value) -> Verdict {
        Quick::new(schema).check(&inst)
    }

    #[test]
    fn keywords_under_draft_7() {
        use Verdict::*;
        assert_eq!(verdict(json!({"type": "integer"}), json!(2.0)), Valid);
        assert_eq!(verdict(json!({"type": "integer"}), json!(2.5)), Invalid);
        assert_eq!(verdict(json!({"enum": [1]}), json!(1.0)), Valid);
        assert_eq!(verdict(json!({"maximum": 3}), json!(3.0)), Valid);
        assert_eq!(verdict(json!({"maximum": 3}), json!("x")), Valid);
        assert_eq!(verdict(json!({"minLength": 2}), json!("é")), Invalid);
        assert_eq!(verdict(json!({"maxLength": 1}), json!("é")), Valid);
        assert_eq!(
            verdict(
                json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false}),
                json!({"a": "x", "b": 1})
            ),
            Invalid
        );
        assert_eq!(
            verdict(
                json!({"$defs": {"d": {"type": "string"}}, "additionalProperties": {"$ref": "#/$defs/d"}}),
                json!({"b": "y"})
            ),
            Valid
        );
        assert_eq!(
            verdict(
                json!({"if": {"type": "object"}, "then": {"maxProperties": 1}, "else": false}),
                json!(1)
            ),
            Invalid
        );
        assert_eq!(
            verdict(json!({"not": {"required": ["a"]}}), json!({"a": 1})),
            Invalid
        );
    }

    #[test]
    fn what_it_does_not_know_leaves_it_unsure() {
        use Verdict::*;
        assert_eq!(verdict(json!({"const": 1}), json!(1)), Unsure);
        // Even beside a failing keyword.
        assert_eq!(verdict(json!({"maximum": 0, "const": 1}), json!(1)), Unsure);
        assert_eq!(verdict(json!({"$ref": "other.json"}), json!(1)), Unsure);
        assert_eq!(verdict(json!({"items": [{}]}), json!([1])), Unsure);
        assert_eq!(verdict(json!({"pattern": "\\bx"}), json!("x")), Unsure);
        assert_eq!(
            verdict(json!({"maximum": 9007199254740993_u64}), json!(1.5)),
            Unsure
        );
        // A $ref to itself never ends: the walk's budget does.
        assert_eq!(verdict(json!({"$ref": "#"}), json!(1)), Unsure);
    }

    #[test]
    fn a_deep_value_ends_the_walk_unsure_not_the_stack() {
        let schema = json!({"$defs": {"d": {"items": {"$ref": "#/$defs/d"}}}, "$ref": "#/$defs/d"});
        let mut deep = json!(1);
        for _ in 0..2000 {
            deep = serde_json::Value::Array(vec![deep]);
        }
        assert_eq!(verdict(schema.clone(), deep), Verdict::Unsure);
        let mut shallow = json!(1);
        for _ in 0..100 {
            shallow = serde_json::Value::Array(vec![shallow]);
        }
        assert_eq!(verdict(schema, shallow), Verdict::Valid);
    }
}
