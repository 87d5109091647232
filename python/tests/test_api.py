"""Every public function and type of bernstein_skills, as a user calls them."""

from __future__ import annotations

import dataclasses
import inspect
import json
import threading
import time
from pathlib import Path

import pytest

import bernstein_skills as bs
from bernstein_skills import SkillLayer

from conftest import ROOT, bernstein_layered, tree

SHIPPED = ROOT / "spec" / "mergespec.yaml"


def demo() -> bs.LayeredSkillPaths:
    root = ROOT / "examples" / "layers"
    return bs.LayeredSkillPaths(base=root / "base", team=root / "team", user=root / "user")


def test_signatures_are_bernsteins() -> None:
    theirs = bernstein_layered()
    if theirs is None:
        pytest.skip("Bernstein 3.23.0 is not installed")
    for name in ["default_layer_root", "collect_layers", "load_skill", "list_skills",
                 "per_layer_view", "merge_layers"]:
        mine, their = inspect.signature(getattr(bs, name)), inspect.signature(getattr(theirs, name))
        assert str(mine) == str(their), name
    for cls in ["MergeSpec", "Skill", "LayeredSkillPaths"]:
        mine_fields = [(f.name, str(f.type)) for f in dataclasses.fields(getattr(bs, cls))]
        their_fields = [(f.name, str(f.type)) for f in dataclasses.fields(getattr(theirs, cls))]
        assert mine_fields == their_fields, cls
    for cls in ["SkillLayer", "MergeStrategy"]:
        assert [(m.name, m.value) for m in getattr(bs, cls)] == [
            (m.name, m.value) for m in getattr(theirs, cls)
        ]
    assert str(inspect.signature(bs.LayeredSkillPaths.defaults)) == str(
        inspect.signature(theirs.LayeredSkillPaths.defaults)
    )
    assert issubclass(bs.UnknownFieldError, KeyError)
    assert issubclass(bs.SkillNotFoundError, FileNotFoundError)


def test_merge_layers_fills_every_field_of_the_spec() -> None:
    merged = bs.merge_layers({})
    assert merged == {
        "name": "", "description": "", "version": "", "author": "", "body": "",
        "trigger_keywords": [], "references": [], "scripts": [], "assets": [], "metadata": {},
    }
    spec = bs.MergeSpec(strategies={"tags": bs.MergeStrategy.APPEND})
    assert bs.merge_layers({SkillLayer.TEAM: {"tags": ["b"]}, SkillLayer.BASE: {"tags": ["a"]}}, spec=spec) == {
        "tags": ["a", "b"]
    }
    with pytest.raises(bs.UnknownFieldError):
        bs.merge_layers({SkillLayer.BASE: {"name": "x"}}, spec=spec)


def test_merge_layers_refuses_values_it_cannot_merge() -> None:
    with pytest.raises(TypeError):
        bs.merge_layers({SkillLayer.BASE: {"metadata": {"when": object()}}})
    with pytest.raises(TypeError):
        bs.merge_layers({SkillLayer.BASE: {"metadata": {1: "x"}}})
    with pytest.raises(ValueError):
        bs.merge_layers({SkillLayer.BASE: {"metadata": {"x": float("nan")}}})
    deep: dict = {}
    cur = deep
    for _ in range(1000):
        cur["k"] = {}
        cur = cur["k"]
    with pytest.raises(ValueError):
        bs.merge_layers({SkillLayer.BASE: {"metadata": deep}})


def test_keyed_entries_need_one_identity_each(tmp_path: Path) -> None:
    # Bernstein's table keeps an entry without a key, after the keyed ones
    # (`unkeyed: append`); the shipped spec refuses it, at its line.
    assert bs.merge_layers({SkillLayer.BASE: {"scripts": [{"run": "x"}, {"name": "a"}]}})["scripts"] == [
        {"name": "a"},
        {"run": "x"},
    ]
    shipped = bs.MergeSpec.load(SHIPPED)
    with pytest.raises(bs.SkillTypeError) as e:
        bs.merge_layers({SkillLayer.BASE: {"scripts": [{"run": "x"}]}}, spec=shipped)
    assert e.value.field == "scripts[0]" and "has no key" in str(e.value)
    paths = tree(tmp_path, {"team/w.yaml": "description: d\nscripts:\n  - {name: a}\n  - run: x\n"})
    assert bs.load_skill("w", paths=paths).scripts == ({"name": "a"}, {"run": "x"})
    with pytest.raises(TypeError) as e1:
        bs.load_skill("w", paths=paths, spec=shipped)
    assert (e1.value.file, e1.value.line) == (tmp_path / "team" / "w.yaml", 4)
    with pytest.raises(bs.SkillError) as e2:
        bs.merge_layers({SkillLayer.BASE: {"assets": [{"id": "a"}, {"id": "a", "x": 1}]}})
    assert "repeats the identity id=a of entry 0" in str(e2.value)
    # One identity, given by different keys in different layers.
    merged = bs.merge_layers(
        {SkillLayer.BASE: {"assets": [{"code": "a", "v": 1}]}, SkillLayer.USER: {"assets": [{"code": "a", "v": 2}]}}
    )
    assert merged["assets"] == [{"code": "a", "v": 2}]


def test_keyed_entries_must_be_mappings_in_bernsteins_table(tmp_path: Path) -> None:
    with pytest.raises(bs.SkillTypeError) as e:
        bs.merge_layers({SkillLayer.USER: {"references": ["style.md"]}})
    # The entry, as the engine's compiled schema locates it (`plain: refuse`).
    assert e.value.field == "references[0]"
    paths = tree(tmp_path, {"team/w.yaml": "description: d\nreferences:\n  - style.md\n"})
    with pytest.raises(TypeError) as e2:
        bs.load_skill("w", paths=paths)
    assert (e2.value.file, e2.value.line) == (tmp_path / "team" / "w.yaml", 3)


def test_default_layer_root_and_paths(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "d"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "c"))
    assert bs.default_layer_root(SkillLayer.TEAM) == tmp_path / "c" / "bernstein" / "skills" / "team"
    paths = bs.LayeredSkillPaths.defaults()
    assert paths.base == tmp_path / "d" / "bernstein" / "skills" / "base"
    # load_skill and list_skills read the defaults when no paths are given.
    paths.base.mkdir(parents=True)
    (paths.base / "hello.yaml").write_text("description: hi\n")
    assert bs.list_skills() == [("hello", (SkillLayer.BASE,))]
    assert bs.load_skill("hello").description == "hi"
    env = {"XDG_DATA_HOME": str(tmp_path / "e")}
    assert bs.list_skills(env=env) == []


def test_list_collect_load_on_the_demo() -> None:
    names = [n for n, _ in bs.list_skills(paths=demo())]
    assert names == ["pdf-tables", "reviewer", "writer"]
    reviewer = bs.load_skill("reviewer", paths=demo())
    assert reviewer.trigger_keywords == ("review", "pr")
    assert reviewer.as_dict()["layers_present"] == ["base"]
    assert set(bs.collect_layers("writer", paths=demo())) == set(SkillLayer)
    assert bs.collect_layers("ghost", paths=demo()) == {}
    assert bs.collect_layers("../escape", paths=demo()) == {}
    assert bs.per_layer_view("reviewer", paths=demo())[SkillLayer.BASE]["author"] == "core"


def test_not_found_for_every_name_no_layer_has(tmp_path: Path) -> None:
    paths = tree(tmp_path, {"base/w.yaml": "description: d\n"})
    for name in ["ghost", "../w", ".hidden", ""]:
        with pytest.raises(bs.SkillNotFoundError) as e:
            bs.load_skill(name, paths=paths)
        assert e.value.skill_name == name
    missing = bs.LayeredSkillPaths(tmp_path / "no", tmp_path / "nope", tmp_path / "none")
    with pytest.raises(bs.SkillNotFoundError):
        bs.load_skill("w", paths=missing)
    assert bs.list_skills(paths=missing) == []


def test_errors_carry_file_line_and_field(tmp_path: Path) -> None:
    paths = tree(tmp_path, {"user/w.yaml": "author: me\nmetadata: [1]\n"})
    with pytest.raises(bs.SkillTypeError) as e:
        bs.load_skill("w", paths=paths)
    assert (e.value.file, e.value.line, e.value.field) == (tmp_path / "user" / "w.yaml", 2, "metadata")
    assert e.value.diagnostics[0].layer is SkillLayer.USER
    paths = tree(tmp_path, {"user/w.yaml": "- not a mapping\n"})
    with pytest.raises(bs.SkillError) as e2:
        bs.collect_layers("w", paths=paths)
    assert isinstance(e2.value, ValueError) and e2.value.file == tmp_path / "user" / "w.yaml"


def test_a_spec_file_loads_and_drives_every_function(tmp_path: Path) -> None:
    spec = bs.MergeSpec.load(SHIPPED)
    assert spec.path == SHIPPED and "license" in spec.strategies
    assert bs.MergeSpec().path is None
    pdf = bs.load_skill("pdf-tables", paths=demo(), spec=spec)
    assert pdf.layers_present == (SkillLayer.BASE, SkillLayer.TEAM)
    json.dumps(pdf.as_dict())
    bad = tmp_path / "mergespec.yaml"
    bad.write_text("version: 2\nfields:\n  name: {strategy: OVERWRITE}\n")
    with pytest.raises(bs.SkillError) as e:
        bs.MergeSpec.load(bad)
    assert e.value.file == bad and e.value.line == 3
    with pytest.raises(bs.SkillError):
        bs.MergeSpec.load(tmp_path / "missing.yaml")


def test_effective_holds_every_field_of_the_spec(tmp_path: Path) -> None:
    spec = bs.MergeSpec.load(SHIPPED)
    writer = bs.effective("writer", paths=demo(), spec=spec)
    assert set(writer) == set(spec.strategies) | {"layers_present"}
    assert writer["author"] == "me" and writer["layers_present"] == ["base", "team", "user"]
    plain = bs.effective("reviewer", paths=demo())
    assert plain == bs.load_skill("reviewer", paths=demo()).as_dict()
    with pytest.raises(bs.SkillNotFoundError):
        bs.effective("ghost", paths=demo())


def test_explain_says_where_each_value_came_from() -> None:
    rows = bs.explain("writer", paths=demo(), spec=bs.MergeSpec.load(SHIPPED))
    by_path = {r.path: r for r in rows}
    assert by_path["description"].layer is SkillLayer.TEAM
    assert by_path["description"].file == demo().team / "writer.yaml"
    with pytest.raises(bs.SkillNotFoundError):
        bs.explain("ghost", paths=demo())


def test_validate_targets_export(tmp_path: Path) -> None:
    spec = bs.MergeSpec.load(SHIPPED)
    assert bs.validate(paths=demo(), spec=spec) == []
    assert bs.validate(["writer"], paths=demo(), spec=spec) == []
    long = tree(tmp_path / "long", {"base/w.yaml": "description: " + "x" * 1100 + "\n"})
    found = bs.validate(paths=long, spec=spec, targets=["agent-skills"])
    assert found and str(found[0]).startswith(f"{long.base / 'w.yaml'}:1:14: error: ")
    with pytest.raises(bs.NotFoundError) as nf:
        bs.validate(paths=demo(), spec=spec, targets=["no-such-target"])
    assert nf.value.kind == "not_found" and isinstance(nf.value, bs.BernsteinSkillsError)
    assert bs.targets(dirs=[tmp_path]) == {}
    assert "codex" in bs.targets(dirs=[ROOT / "spec" / "targets"])
    done = bs.export(tmp_path / "out", paths=demo(), spec=spec)
    assert done.written == ("pdf-tables", "reviewer", "writer")
    assert json.loads((tmp_path / "out" / "writer.json").read_text())["author"] == "me"
    # Nothing export did not write is touched: a stranger's file is refused.
    (tmp_path / "own").mkdir()
    (tmp_path / "own" / "writer.json").write_text("mine\n")
    refused = bs.export(tmp_path / "own", paths=demo(), spec=spec)
    assert (tmp_path / "own" / "writer.json").read_text() == "mine\n"
    assert any("writer.json" in r for r in refused.refused)
    adopted = bs.export(tmp_path / "own", paths=demo(), spec=spec, adopt=["writer"])
    assert "writer" in adopted.written
    with pytest.raises(ValueError):
        bs.export(tmp_path / "x", paths=demo(), format="yaml")


def test_strict_export_writes_nothing_while_validate_reports_a_problem(tmp_path: Path) -> None:
    spec = bs.MergeSpec.load(SHIPPED)
    # A user override with the base's value: a warning, which strict refuses.
    paths = tree(
        tmp_path / "layers",
        {"base/w.yaml": "description: Writes.\n", "user/w.yaml": "description: Writes.\n"},
    )
    found = bs.validate(paths=paths, spec=spec)
    assert [d.severity for d in found] == ["warning"]
    with pytest.raises(bs.SkillError) as e:
        bs.export(tmp_path / "out", paths=paths, spec=spec, strict=True)
    assert [str(d) for d in e.value.diagnostics] == [str(d) for d in found]
    assert str(e.value).startswith("strict: 1 problem(s)")
    assert not (tmp_path / "out").exists()
    # Without strict the skill is written, with validate's warning about it.
    loose = bs.export(tmp_path / "loose", paths=paths, spec=spec)
    assert loose.written == ("w",)
    assert [str(d) for d in loose.warnings] == [str(d) for d in found]
    # Without a problem, a strict export writes as any export does.
    (paths.user / "w.yaml").write_text("description: Writes well.\n")
    assert bs.export(tmp_path / "out", paths=paths, spec=spec, strict=True).written == ("w",)


def test_calls_from_many_threads_agree(tmp_path: Path) -> None:
    files = {f"base/s{i}.yaml": f"description: d{i}\ntrigger_keywords: [k{i}]\n" for i in range(50)}
    files.update({f"user/s{i}.yaml": f"author: u{i}\n" for i in range(0, 50, 2)})
    paths = tree(tmp_path, files)
    expected = {n: bs.load_skill(n, paths=paths).as_dict() for n, _ in bs.list_skills(paths=paths)}
    failures: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(5):
                for n, d in expected.items():
                    assert bs.load_skill(n, paths=paths).as_dict() == d
                bs.merge_layers({SkillLayer.BASE: {"metadata": {"a": {"b": 1}}}})
        except BaseException as e:  # noqa: BLE001 - reported below
            failures.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_the_gil_is_released_while_the_engine_works(tmp_path: Path) -> None:
    """Another thread runs Python while the engine reads and parses one
    large fragment: it records the time at each step, and some of those
    times fall well inside the native call."""
    big = "metadata:\n" + "".join(f"  k{i}: {{a: [1, 2, 3], b: text}}\n" for i in range(100000))
    paths = tree(tmp_path, {"base/big.yaml": big})
    seen: list[float] = []
    stop = threading.Event()

    def count() -> None:
        while not stop.is_set():
            seen.append(time.perf_counter())
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    try:
        time.sleep(0.02)
        start = time.perf_counter()
        bs._engine(paths, None, None).collect("big")
        end = time.perf_counter()
    finally:
        stop.set()
        t.join()
    assert end - start > 0.03, "the call is too short to tell"
    inside = [x for x in seen if start + 0.01 < x < end - 0.01]
    assert len(inside) >= 3, (end - start, len(inside))
