//! The documents a front end prints or hands back, built once.
//!
//! `list --json` prints what [`list`] builds, and Python's
//! `Project.list_skills()` returns the same value converted to its own
//! types: the command line and Python cannot disagree about what a project
//! holds, because neither builds the answer itself (docs/json.md gives the
//! shape).

use serde_json::{Value, json};

use crate::digest::Digest;
use crate::engine::Skills;
use crate::layer::Layer;
use crate::merge::Effective;
use crate::source::Layers;

/// The field `list` describes a skill by.
pub const DESCRIPTION: &str = "description";

/// Where each layer is and why: `[{"layer", "dir", "found_by", "why",
/// "exists"}]` (docs/json.md, `places`).
pub fn places(layers: &Layers) -> Value {
    layers.dirs().iter().map(|d| d.to_json()).collect()
}

/// `list --json`: `{"places": [...], "skills": [...]}`, every skill of
/// the layers with the layers that hold it and, resolved once each on up
/// to `jobs` threads, its description, switch, digest and whether it is
/// an orphan; a skill that fails carries its error ([`crate::Error::to_json`]).
///
/// # Errors
///
/// When a layer's directory holds more entries than a layer may
/// ([`Layers::catalog`]).
pub fn list(skills: &Skills, jobs: usize) -> crate::Result<Value> {
    let layers = skills.layers();
    let catalog = layers.catalog()?;
    let entries = crate::par::map(&catalog, jobs, |(name, located)| {
        let ls: Vec<Layer> = located.iter().map(|l| l.layer).collect();
        let mut entry = json!({
            "skill": name,
            "layers": ls,
            "description": null,
            "enabled": null,
            "enabled_by": null,
            "off_for": [],
            "digest": null,
            "orphan": null,
            "error": null,
        });
        match skills.resolve_located(name, located) {
            Ok(r) => {
                let eff = r.effective();
                let sw = crate::target::switch(skills.spec(), eff);
                let digest = Digest::of(crate::output::render::effective_to_json(eff));
                entry["description"] = description(eff);
                entry["enabled"] = json!(sw.enabled);
                entry["enabled_by"] = json!(sw.set_by);
                entry["off_for"] = sw
                    .off_for
                    .iter()
                    .map(|(t, l)| json!({"target": t, "layer": l}))
                    .collect();
                entry["digest"] = json!(digest.to_string());
                entry["orphan"] = json!(skills.is_orphan(&r));
            }
            Err(e) => entry["error"] = e.to_json(),
        }
        entry
    });
    Ok(json!({
        "places": places(layers),
        "skills": entries,
    }))
}

/// The effective skill's description, `null` when it has none.
pub fn description(eff: &Effective) -> Value {
    eff.field(DESCRIPTION)
        .map(|f| f.merged.to_value())
        .unwrap_or(Value::Null)
}
