"""Random layer trees loaded through Bernstein 3.23.0's layered module and
through bernstein_skills: the results must be equal, except for the
differences docs/python.md lists (which these trees do not exercise:
their bodies carry no surrounding blank space, their scalars read the same
in YAML 1.1 and 1.2, no identity repeats in one layer's list)."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

import bernstein_skills as ours

from conftest import tree

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta"]


def word(rng: random.Random) -> str:
    return rng.choice(WORDS) + str(rng.randint(0, 99))


def scalar(rng: random.Random) -> Any:
    return rng.choice([word(rng), rng.randint(-1000, 1000), rng.random(), True, False])


def mapping(rng: random.Random, depth: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _ in range(rng.randint(0, 3)):
        key = rng.choice(["limits", "tone", "max", "owner", "tags", "model"])
        if depth < 3 and rng.random() < 0.4:
            out[key] = mapping(rng, depth + 1)
        elif rng.random() < 0.2:
            out[key] = [scalar(rng) for _ in range(rng.randint(0, 3))]
        else:
            out[key] = scalar(rng)
    return out


def entries(rng: random.Random) -> list[dict[str, Any]]:
    # Identities unique within one layer's list (the engine refuses a
    # repeated one; Bernstein keeps the last). Some entries have no key:
    # none of the key fields, or one that holds no name (both keep those
    # after the keyed entries).
    out = []
    for value in rng.sample(["style", "glossary", "lint", "ci"], rng.randint(0, 3)):
        out.append({rng.choice(["name", "id", "code"]): value, "url": word(rng)})
    for _ in range(rng.choice([0, 0, 1, 2])):
        entry: dict[str, Any] = {"url": word(rng)}
        if rng.random() < 0.3:
            entry[rng.choice(["name", "id", "code"])] = rng.choice(["", 7, None])
        out.insert(rng.randint(0, len(out)), entry)
    return out


def fragment(rng: random.Random) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if rng.random() < 0.3:
        fields["name"] = rng.choice(["writer", "renamed", "reviewer"])
    for f in ("description", "version", "author"):
        if rng.random() < 0.5:
            fields[f] = word(rng) + " " + word(rng)
    if rng.random() < 0.5:
        fields["trigger_keywords"] = [word(rng) for _ in range(rng.randint(0, 3))]
    for f in ("references", "scripts", "assets"):
        if rng.random() < 0.4:
            fields[f] = entries(rng)
    if rng.random() < 0.5:
        fields["metadata"] = mapping(rng, 0)
    return fields


def write(rng: random.Random, layer: str, name: str, fields: dict[str, Any]) -> tuple[str, str]:
    form = rng.choice(["yaml", "yml", "md"])
    if form == "md":
        body = None
        if rng.random() < 0.7:
            body = f"# {name}\n\n{word(rng)} {word(rng)}."
        front = yaml.safe_dump(fields, sort_keys=False) if fields else ""
        text = f"---\n{front}---\n" + (body + "\n" if body else "")
        if body:
            fields["body"] = body
        return f"{layer}/{name}/SKILL.md", text
    if rng.random() < 0.3:
        fields["body"] = f"{word(rng)} {word(rng)}."
    return f"{layer}/{name}.{form}", yaml.safe_dump(fields, sort_keys=False)


def random_tree(rng: random.Random, root: Path) -> tuple[ours.LayeredSkillPaths, dict[str, dict[str, dict[str, Any]]]]:
    files: dict[str, str] = {}
    written: dict[str, dict[str, dict[str, Any]]] = {}
    for name in rng.sample(["writer", "reviewer", "pdf-tables", "lint", "notes"], rng.randint(1, 5)):
        for layer in ("base", "team", "user"):
            if rng.random() < 0.55:
                fields = fragment(rng)
                rel, text = write(rng, layer, name, fields)
                files[rel] = text
                written.setdefault(name, {})[layer] = fields
    return tree(root, files), written


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True)


def their_paths(theirs: ModuleType, p: ours.LayeredSkillPaths) -> Any:
    return theirs.LayeredSkillPaths(base=p.base, team=p.team, user=p.user)


def labels(layers: Any) -> list[str]:
    return [layer.label for layer in layers]


@pytest.mark.parametrize("seed", range(60))
def test_random_trees_load_the_same(theirs: ModuleType, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    paths, written = random_tree(rng, tmp_path)
    tp = their_paths(theirs, paths)

    listed = [(n, labels(ls)) for n, ls in ours.list_skills(paths=paths)]
    assert listed == [(n, labels(ls)) for n, ls in theirs.list_skills(paths=tp)]

    for name in written:
        mine = ours.collect_layers(name, paths=paths)
        their = theirs.collect_layers(name, paths=tp)
        assert {k.label: v for k, v in mine.items()} == {k.label: v for k, v in their.items()}
        assert canonical(ours.per_layer_view(name, paths=paths)[list(mine)[0]]) == canonical(
            theirs.per_layer_view(name, paths=tp)[list(their)[0]]
        )

        a = ours.load_skill(name, paths=paths)
        b = theirs.load_skill(name, paths=tp)
        assert canonical(a.as_dict()) == canonical(b.as_dict()), name
        assert labels(a.layers_present) == labels(b.layers_present)

        fragments = {ours.SkillLayer[k.name]: v for k, v in their.items()}
        assert canonical(ours.merge_layers(fragments)) == canonical(theirs.merge_layers(their))


@pytest.mark.parametrize("seed", range(200))
def test_random_fragments_merge_the_same(theirs: ModuleType, seed: int) -> None:
    rng = random.Random(1000 + seed)
    layers = rng.sample(list(ours.SkillLayer), rng.randint(0, 3))
    fragments = {layer: fragment(rng) for layer in layers}
    theirs_in = {theirs.SkillLayer[k.name]: v for k, v in fragments.items()}
    assert canonical(ours.merge_layers(fragments)) == canonical(theirs.merge_layers(theirs_in))


def test_entries_without_a_key_are_kept_after_the_keyed_ones(theirs: ModuleType) -> None:
    """Bernstein's KEYED_REPLACE keeps an entry without a key, after every
    keyed entry, in the order the layers hold them; so does the default
    ``MergeSpec``, whose rules say ``unkeyed: append``."""
    fragments = {
        "BASE": {"references": [{"url": "b-note"}, {"name": "style", "url": "b"}, {"url": "b-2"}]},
        "TEAM": {"references": [{"url": "b-note"}, {"name": "", "url": "t"}, {"id": "glossary"}]},
        "USER": {"references": [{"name": "style", "url": "u"}, {"code": 7}]},
    }
    mine = ours.merge_layers({ours.SkillLayer[k]: v for k, v in fragments.items()})
    their = theirs.merge_layers({theirs.SkillLayer[k]: v for k, v in fragments.items()})
    assert mine["references"] == their["references"] == [
        {"name": "style", "url": "u"},
        {"id": "glossary"},
        {"url": "b-note"},
        {"url": "b-2"},
        {"url": "b-note"},
        {"name": "", "url": "t"},
        {"code": 7},
    ]


def test_both_raise_the_same_errors(theirs: ModuleType, tmp_path: Path) -> None:
    base = ours.SkillLayer.BASE
    with pytest.raises(ours.UnknownFieldError) as mine:
        ours.merge_layers({base: {"descripton": "typo"}})
    with pytest.raises(theirs.UnknownFieldError) as their:
        theirs.merge_layers({theirs.SkillLayer.BASE: {"descripton": "typo"}})
    assert mine.value.field_name == their.value.field_name == "descripton"
    assert isinstance(mine.value, KeyError) and isinstance(their.value, KeyError)

    for bad in ({"trigger_keywords": "one"}, {"metadata": [1]}, {"references": "x"}):
        with pytest.raises(TypeError):
            ours.merge_layers({base: bad})
        with pytest.raises(TypeError):
            theirs.merge_layers({theirs.SkillLayer.BASE: bad})

    paths = tree(tmp_path, {})
    with pytest.raises(ours.SkillNotFoundError) as nf:
        ours.load_skill("ghost", paths=paths)
    with pytest.raises(theirs.SkillNotFoundError) as tnf:
        theirs.load_skill("ghost", paths=their_paths(theirs, paths))
    assert str(nf.value) == str(tnf.value)
    assert nf.value.searched == tnf.value.searched
    assert isinstance(nf.value, FileNotFoundError)
