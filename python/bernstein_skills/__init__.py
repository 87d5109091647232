"""Bernstein's layered-skills API, backed by the bernstein-skills engine.

The names, signatures, return types and exceptions are those of
``bernstein.core.skills.layered`` (Bernstein 3.23.0), so a module that
imports them from here instead keeps working::

    from bernstein_skills import load_skill, list_skills, SkillLayer

The reading of the layers, the validation of each fragment and the merge
are the engine's (a native extension, ``bernstein_skills._native``); it
releases the GIL while it works, and every call may be made from any
thread. Where the engine deliberately differs from Bernstein, the
differences are listed in the project's ``docs/python.md``.

Beyond Bernstein's API: :meth:`MergeSpec.load` (a spec file, as the
``bernstein-skills`` command reads it), :func:`explain` (where each value
came from), :func:`validate` (diagnostics as :class:`Diagnostic` objects),
:func:`targets` and :func:`export`.
"""

from __future__ import annotations

import enum
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from . import _native

__all__ = [
    "Diagnostic",
    "ExportResult",
    "LayeredSkillPaths",
    "MergeSpec",
    "MergeStrategy",
    "Skill",
    "SkillError",
    "SkillLayer",
    "SkillNotFoundError",
    "SkillTypeError",
    "UnknownFieldError",
    "ValueOrigin",
    "collect_layers",
    "default_layer_root",
    "effective",
    "explain",
    "export",
    "list_skills",
    "load_skill",
    "merge_layers",
    "per_layer_view",
    "targets",
    "validate",
]

_LAYERS = (0, 1, 2)


class SkillLayer(enum.Enum):
    """Origin layer of a skill fragment.

    Layers are ordered from lowest to highest precedence by their
    integer value. ``SkillLayer.USER`` always wins on conflict.
    """

    BASE = 0
    TEAM = 1
    USER = 2

    @property
    def label(self) -> str:
        """Lowercase human label used in CLI output and on-disk paths."""
        return self.name.lower()


_BY_INDEX = (SkillLayer.BASE, SkillLayer.TEAM, SkillLayer.USER)
_BY_LABEL = {layer.label: layer for layer in _BY_INDEX}


class MergeStrategy(enum.Enum):
    """Per-field merge strategy."""

    OVERRIDE = "override"
    DEEP_MERGE = "deep-merge"
    KEYED_REPLACE = "keyed-replace"
    APPEND = "append"


_SPEC_NAMES = {
    MergeStrategy.OVERRIDE: "OVERRIDE",
    MergeStrategy.DEEP_MERGE: "DEEP_MERGE",
    MergeStrategy.KEYED_REPLACE: "KEYED_REPLACE",
    MergeStrategy.APPEND: "APPEND",
}


def _default_strategies() -> dict[str, MergeStrategy]:
    return {
        "name": MergeStrategy.OVERRIDE,
        "description": MergeStrategy.OVERRIDE,
        "version": MergeStrategy.OVERRIDE,
        "author": MergeStrategy.OVERRIDE,
        "body": MergeStrategy.OVERRIDE,
        "trigger_keywords": MergeStrategy.APPEND,
        "references": MergeStrategy.KEYED_REPLACE,
        "scripts": MergeStrategy.KEYED_REPLACE,
        "assets": MergeStrategy.KEYED_REPLACE,
        "metadata": MergeStrategy.DEEP_MERGE,
    }


@dataclass(frozen=True)
class MergeSpec:
    """Per-field merge strategy table.

    The default spec mirrors the shape of :class:`Skill`. A field not
    listed here is refused (:class:`UnknownFieldError`). The engine runs
    the table as a merge spec of its own (with ``keys: [name, id, code]``
    and ``unkeyed: append`` for every KEYED_REPLACE field, so an entry
    without a key is kept after the keyed ones, as Bernstein keeps it);
    :meth:`MergeSpec.load` reads a spec
    file instead, with its types, rules and targets.
    """

    strategies: dict[str, MergeStrategy] = field(default_factory=_default_strategies)

    def for_field(self, name: str) -> MergeStrategy:
        """Return the strategy for ``name`` or raise."""
        try:
            return self.strategies[name]
        except KeyError as exc:
            raise UnknownFieldError(name) from exc

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> MergeSpec:
        """Read the merge spec file ``path`` (``mergespec.yaml``).

        Raises :class:`SkillError` (with ``file``, ``line`` and
        ``column``) if it is not a valid spec.
        """
        try:
            native = _native.Spec.load(os.fspath(path))
        except _native.EngineError as e:
            raise _translate(e) from None
        strategies = {name: MergeStrategy(s) for name, s in native.fields()}
        spec = cls(strategies=strategies)
        object.__setattr__(spec, "_native_spec", native)
        return spec

    @property
    def path(self) -> Path | None:
        """The file a loaded spec was read from (``None`` for a table)."""
        native = self.__dict__.get("_native_spec")
        return Path(native.path) if native is not None else None


_SPEC_CACHE: dict[tuple[tuple[str, MergeStrategy], ...], Any] = {}
_DEFAULT_NATIVE: Any = None


def _spec_text(strategies: Mapping[str, MergeStrategy]) -> str:
    lines = ["version: 2"]
    if "body" in strategies:
        lines.append("body_field: body")
    if "name" in strategies:
        lines.append("name_field: name")
    lines.append("fields:" if strategies else "fields: {}")
    for name, strategy in strategies.items():
        if not isinstance(strategy, MergeStrategy):
            strategy = MergeStrategy(strategy)
        rule = f"strategy: {_SPEC_NAMES[strategy]}"
        if strategy is MergeStrategy.KEYED_REPLACE:
            rule += ", keys: [name, id, code], unkeyed: append"
        lines.append(f"  {json.dumps(name)}: {{{rule}}}")
    return "\n".join(lines) + "\n"


def _native_spec(spec: MergeSpec | None) -> Any:
    """The engine's spec for ``spec`` (the default table when ``None``)."""
    if spec is None or spec is _DEFAULT_SPEC:
        global _DEFAULT_NATIVE
        if _DEFAULT_NATIVE is None:
            _DEFAULT_NATIVE = _native_spec(MergeSpec())
        return _DEFAULT_NATIVE
    native = spec.__dict__.get("_native_spec")
    if native is not None:
        return native
    key = tuple(spec.strategies.items())
    native = _SPEC_CACHE.get(key)
    if native is None:
        try:
            native = _native.Spec.from_text(_spec_text(spec.strategies), "<MergeSpec>", True)
        except _native.EngineError as e:
            raise _translate(e) from None
        if len(_SPEC_CACHE) >= 64:
            _SPEC_CACHE.clear()
        _SPEC_CACHE[key] = native
    return native


@dataclass(frozen=True)
class Diagnostic:
    """One problem the engine found, located."""

    file: Path | None
    line: int | None
    column: int | None
    field: str | None
    message: str
    severity: str
    layer: SkillLayer | None = None

    def __str__(self) -> str:
        # About no file (a name given as an argument): no place to name.
        if self.file is None and self.line is None:
            return f"{self.severity}: {self.message}"
        where = str(self.file) if self.file is not None else "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        return f"{where}: {self.severity}: {self.message}"


def _diagnostic(d: Mapping[str, Any]) -> Diagnostic:
    file = d.get("file")
    if file is not None and str(file).startswith("<"):
        file = None
    return Diagnostic(
        file=Path(file) if file is not None else None,
        line=d.get("line"),
        column=d.get("column"),
        field=d.get("field"),
        message=d["message"],
        severity=d["severity"],
        layer=_BY_LABEL.get(d.get("layer") or ""),
    )


class _Located:
    """Where an error is: ``file``, ``line``, ``column``, ``field``, and
    every diagnostic of the failed call."""

    file: Path | None
    line: int | None
    column: int | None
    field: str | None
    diagnostics: tuple[Diagnostic, ...]

    def _locate(self, diagnostics: Sequence[Diagnostic], field: str | None = None) -> None:
        first = diagnostics[0] if diagnostics else None
        self.diagnostics = tuple(diagnostics)
        self.file = first.file if first else None
        self.line = first.line if first else None
        self.column = first.column if first else None
        self.field = first.field if first and first.field is not None else field


class SkillError(_Located, ValueError):
    """A skill, a fragment or a spec the engine cannot use (a file that
    does not parse, a value its rule refuses). Bernstein raises
    ``ValueError`` for a file it cannot parse; this is one."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self._locate(diagnostics)


class SkillTypeError(_Located, TypeError):
    """A value of the wrong type for its field's strategy (where Bernstein
    raises ``TypeError``)."""

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        super().__init__(message)
        self._locate(diagnostics)


class UnknownFieldError(_Located, KeyError):
    """Raised when a layer carries a field not declared in :class:`MergeSpec`."""

    def __init__(self, field_name: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        message = f"unknown skill field {field_name!r}: extend MergeSpec to add it"
        if diagnostics and diagnostics[0].file is not None:
            d = diagnostics[0]
            where = str(d.file) + (f":{d.line}" if d.line is not None else "")
            where += f":{d.column}" if d.line is not None and d.column is not None else ""
            message = f"{where}: {message}"
        super().__init__(message)
        self.field_name = field_name
        self._locate(diagnostics, field_name)


class SkillNotFoundError(FileNotFoundError):
    """Raised when no layer provides a skill with the requested name."""

    def __init__(self, name: str, searched: list[Path]) -> None:
        joined = ", ".join(str(p) for p in searched)
        super().__init__(f"skill {name!r} not found in any layer (searched: {joined})")
        self.skill_name = name
        self.searched = searched.copy()


def _translate(
    e: BaseException, name: str | None = None, searched: list[Path] | None = None
) -> BaseException:
    kind, message, details = e.args
    diagnostics = [_diagnostic(d) for d in details.get("diagnostics", ())]
    errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
    if kind in ("not_found", "invalid_name", "no_layers") and name is not None:
        return SkillNotFoundError(name, searched or [])
    if kind == "strict":
        # Warnings count too: every problem is listed, in validate's order.
        return SkillError(message, diagnostics)
    if kind == "unknown_field":
        return UnknownFieldError(errors[0].field or "", errors)
    if kind == "wrong_type":
        return SkillTypeError(str(errors[0]) if errors else message, errors)
    if errors:
        message = "\n".join(str(d) for d in errors)
    return SkillError(message, errors)


@dataclass(frozen=True)
class Skill:
    """The effective, merged skill returned by :func:`load_skill`.

    All fields are populated even when absent from on-disk data: the
    string fields fall back to ``""``, the array fields fall back to
    ``[]``, and ``metadata`` falls back to ``{}``.
    """

    name: str
    description: str
    version: str
    author: str
    body: str
    trigger_keywords: tuple[str, ...]
    references: tuple[dict[str, Any], ...]
    scripts: tuple[dict[str, Any], ...]
    assets: tuple[dict[str, Any], ...]
    metadata: dict[str, Any]
    layers_present: tuple[SkillLayer, ...]

    def as_dict(self) -> dict[str, Any]:
        """Return a JSON-stable serialisation of the skill (no tuples)."""
        return {
            "name": self.name,
            "description": self.description,
            "version": self.version,
            "author": self.author,
            "body": self.body,
            "trigger_keywords": list(self.trigger_keywords),
            "references": [_copy(r) for r in self.references],
            "scripts": [_copy(s) for s in self.scripts],
            "assets": [_copy(a) for a in self.assets],
            "metadata": _deep_copy(self.metadata),
            "layers_present": [layer.label for layer in self.layers_present],
        }


def _copy(entry: Any) -> Any:
    # A spec file's KEYED_REPLACE lists may also hold plain names.
    return entry.copy() if isinstance(entry, dict) else entry


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(item) for item in value]
    return value


_DEFAULT_SPEC = MergeSpec()


def merge_layers(
    fragments: dict[SkillLayer, dict[str, Any]],
    *,
    spec: MergeSpec | None = None,
) -> dict[str, Any]:
    """Merge per-layer fragments into a single dict using ``spec``.

    Returns a dict with every field declared in ``spec``, populated either
    from the layers or with the documented fallback default.

    Raises:
        UnknownFieldError: if any layer carries a key not in ``spec``.
        TypeError: a value of the wrong type for its strategy
            (:class:`SkillTypeError`).
    """
    native = _native_spec(spec)
    try:
        return _native.merge_layers(
            native, [(layer.value, fragment) for layer, fragment in fragments.items()]
        )
    except _native.EngineError as e:
        raise _translate(e) from None


def default_layer_root(layer: SkillLayer, *, env: dict[str, str] | None = None) -> Path:
    """Return the canonical directory for ``layer``.

    - BASE: ``$XDG_DATA_HOME/bernstein/skills/base/`` (``~/.local/share``)
    - TEAM: ``$XDG_CONFIG_HOME/bernstein/skills/team/`` (``~/.config``)
    - USER: ``$XDG_CONFIG_HOME/bernstein/skills/user/``
    """
    e = env if env is not None else os.environ
    xdg_data = e.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    xdg_config = e.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    if layer == SkillLayer.BASE:
        return Path(xdg_data) / "bernstein" / "skills" / "base"
    if layer == SkillLayer.TEAM:
        return Path(xdg_config) / "bernstein" / "skills" / "team"
    if layer == SkillLayer.USER:
        return Path(xdg_config) / "bernstein" / "skills" / "user"
    raise AssertionError(f"unhandled layer {layer!r}")


@dataclass(frozen=True)
class LayeredSkillPaths:
    """Resolved on-disk directories for the three layers."""

    base: Path
    team: Path
    user: Path

    @classmethod
    def defaults(cls, *, env: dict[str, str] | None = None) -> LayeredSkillPaths:
        return cls(
            base=default_layer_root(SkillLayer.BASE, env=env),
            team=default_layer_root(SkillLayer.TEAM, env=env),
            user=default_layer_root(SkillLayer.USER, env=env),
        )

    def for_layer(self, layer: SkillLayer) -> Path:
        if layer == SkillLayer.BASE:
            return self.base
        if layer == SkillLayer.TEAM:
            return self.team
        if layer == SkillLayer.USER:
            return self.user
        raise AssertionError(f"unhandled layer {layer!r}")


def _paths(paths: LayeredSkillPaths | None, env: dict[str, str] | None) -> LayeredSkillPaths:
    return paths or LayeredSkillPaths.defaults(env=env)


def _dirs(paths: LayeredSkillPaths) -> list[str]:
    return [os.fspath(paths.base), os.fspath(paths.team), os.fspath(paths.user)]


def _searched(paths: LayeredSkillPaths) -> list[Path]:
    return [paths.for_layer(layer) for layer in SkillLayer]


def collect_layers(
    name: str,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
) -> dict[SkillLayer, dict[str, Any]]:
    """Load every available fragment for ``name`` keyed by its layer.

    Layers that have no on-disk file are simply absent from the result.
    A file that does not parse raises :class:`SkillError` (a ``ValueError``).
    """
    resolved = _paths(paths, env)
    try:
        found = _native.collect_layers(_native_spec(None), _dirs(resolved), name)
    except _native.EngineError as e:
        if e.args[0] in ("invalid_name", "no_layers"):
            return {}
        raise _translate(e) from None
    return {_BY_INDEX[i]: fragment for i, fragment in found}


def load_skill(
    name: str,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
    spec: MergeSpec | None = None,
) -> Skill:
    """Load ``name`` from every layer and return the merged :class:`Skill`.

    Raises:
        SkillNotFoundError: when no layer provides a fragment.
        UnknownFieldError: a layer sets a field ``spec`` does not declare.
        TypeError: a value of the wrong type (:class:`SkillTypeError`).
        ValueError: a file that does not parse (:class:`SkillError`).
    """
    resolved = _paths(paths, env)
    try:
        merged, present = _native.load_skill(_native_spec(spec), _dirs(resolved), name)
    except _native.EngineError as e:
        raise _translate(e, name, _searched(resolved)) from None
    return Skill(
        name=merged.get("name") or name,
        description=str(merged.get("description") or ""),
        version=str(merged.get("version") or ""),
        author=str(merged.get("author") or ""),
        body=str(merged.get("body") or ""),
        trigger_keywords=tuple(merged.get("trigger_keywords") or []),
        references=tuple(merged.get("references") or []),
        scripts=tuple(merged.get("scripts") or []),
        assets=tuple(merged.get("assets") or []),
        metadata=dict(merged.get("metadata") or {}),
        layers_present=tuple(_BY_INDEX[i] for i in present),
    )


def list_skills(
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
) -> list[tuple[str, tuple[SkillLayer, ...]]]:
    """Return every (name, layers-of-origin) pair across the three layers,
    sorted by name."""
    resolved = _paths(paths, env)
    return [
        (name, tuple(_BY_INDEX[i] for i in layers))
        for name, layers in _native.list_skills(_dirs(resolved))
    ]


def per_layer_view(
    name: str,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
) -> dict[SkillLayer, dict[str, Any]]:
    """Return raw fragments for ``name`` keyed by layer (as
    :func:`collect_layers`)."""
    return collect_layers(name, paths=paths, env=env)


# ---------------------------------------------------------------------------
# What this project adds
# ---------------------------------------------------------------------------


def effective(
    name: str,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
    spec: MergeSpec | None = None,
) -> dict[str, Any]:
    """The whole effective skill ``name`` as a plain dict: every field of
    ``spec`` (a field no layer sets with :func:`merge_layers`' default),
    and ``layers_present`` as labels. :class:`Skill` holds Bernstein's
    eleven fields only; this holds those of a spec file too (``license``,
    ``allowed-tools``, …). Raises as :func:`load_skill` does."""
    resolved = _paths(paths, env)
    try:
        merged, present = _native.load_skill(_native_spec(spec), _dirs(resolved), name)
    except _native.EngineError as e:
        raise _translate(e, name, _searched(resolved)) from None
    if not merged.get("name") and "name" in merged:
        merged["name"] = name
    merged["layers_present"] = [_BY_INDEX[i].label for i in present]
    return merged


@dataclass(frozen=True)
class ValueOrigin:
    """Where one value of an effective skill came from (:func:`explain`).

    ``path`` is the value's place in the skill (``metadata.limits.max``,
    ``references[style]``); ``strategy`` how it was merged; ``layer``,
    ``file`` and ``line`` where it was set (``None`` for a default);
    ``replaced`` the lower layers' values it replaced, each a dict with
    ``layer``, ``file``, ``line`` and ``value``.
    """

    path: str
    strategy: str
    value: Any
    layer: SkillLayer | None
    file: Path | None
    line: int | None
    replaced: tuple[dict[str, Any], ...]
    removed: bool = False


def explain(
    name: str,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
    spec: MergeSpec | None = None,
) -> list[ValueOrigin]:
    """Where each value of skill ``name`` came from, one row per value."""
    resolved = _paths(paths, env)
    try:
        rows = _native.explain(_native_spec(spec), _dirs(resolved), name)
    except _native.EngineError as e:
        raise _translate(e, name, _searched(resolved)) from None
    out = []
    for r in rows:
        origin = r["origin"]
        replaced = tuple(
            {
                "layer": _BY_LABEL[x["layer"]],
                "file": Path(x["file"]),
                "line": x["line"],
                "value": x["value"],
            }
            for x in r["replaced"]
        )
        out.append(
            ValueOrigin(
                path=r["path"],
                strategy=r["kind"],
                value=r["value"],
                layer=_BY_LABEL[origin["layer"]] if origin else None,
                file=Path(origin["file"]) if origin else None,
                line=origin["line"] if origin else None,
                replaced=replaced,
                removed=r["removed"],
            )
        )
    return out


def _target_dirs(spec: MergeSpec | None, dirs: Iterable[str | os.PathLike[str]] | None) -> list[str]:
    if dirs is not None:
        return [os.fspath(d) for d in dirs]
    found = []
    if spec is not None and spec.path is not None:
        found.append(os.fspath(spec.path.parent / "targets"))
    found.append(os.path.join(sys.prefix, "share", "bernstein", "skills", "targets"))
    return found


def validate(
    names: Sequence[str] | None = None,
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
    spec: MergeSpec | None = None,
    targets: Sequence[str] | None = None,
    target_dirs: Iterable[str | os.PathLike[str]] | None = None,
) -> list[Diagnostic]:
    """Check every fragment of every skill (or of ``names``) as the
    command's ``validate`` does, and for ``targets``' rules if given.
    Returns the errors and warnings found (an empty list: all is well)."""
    resolved = _paths(paths, env)
    try:
        found, _files, _skills = _native.validate(
            _native_spec(spec),
            _dirs(resolved),
            list(names) if names is not None else None,
            list(targets) if targets is not None else None,
            _target_dirs(spec, target_dirs),
        )
    except _native.EngineError as e:
        raise _translate(e) from None
    return [_diagnostic(d) for d in found]


def targets(
    *,
    spec: MergeSpec | None = None,
    dirs: Iterable[str | os.PathLike[str]] | None = None,
) -> dict[str, Path]:
    """The targets found (name to file): in ``dirs``, else beside a loaded
    ``spec`` (``targets/``) and where the wheel installed them."""
    try:
        found = _native.targets(_target_dirs(spec, dirs))
    except _native.EngineError as e:
        raise _translate(e) from None
    return {name: Path(p) for name, p in found}


@dataclass(frozen=True)
class ExportResult:
    """What :func:`export` did."""

    written: tuple[str, ...]
    unchanged: int
    removed: tuple[str, ...]
    failed: tuple[str, ...]
    refused: tuple[str, ...]
    kept: tuple[Path, ...]
    #: What :func:`validate` warns about the skills written, in their order.
    warnings: tuple[Diagnostic, ...] = ()


def export(
    out: str | os.PathLike[str],
    *,
    paths: LayeredSkillPaths | None = None,
    env: dict[str, str] | None = None,
    spec: MergeSpec | None = None,
    format: str = "json",
    prune: bool = False,
    adopt: Sequence[str] = (),
    adopt_all: bool = False,
    force: bool = False,
    keep_going: bool = False,
    state_dir: str | os.PathLike[str] | None = None,
    strict: bool = False,
) -> ExportResult:
    """Write every effective skill into ``out`` (``format``: ``"json"``, one
    ``NAME.json`` each, or ``"skill"``, one ``NAME/SKILL.md`` directory
    each). Export owns only what it wrote: a skill whose output it did not
    write, or that was edited by hand, is refused (listed in ``refused``)
    unless ``adopt``/``adopt_all``/``force`` say otherwise. With ``strict``,
    nothing is written if :func:`validate` would report any problem, error
    or warning: :class:`SkillError` is raised with every one of them."""
    resolved = _paths(paths, env)
    try:
        done = _native.export(
            _native_spec(spec),
            _dirs(resolved),
            os.fspath(out),
            format,
            prune,
            list(adopt),
            adopt_all,
            force,
            keep_going,
            os.fspath(state_dir) if state_dir is not None else None,
            strict,
        )
    except _native.EngineError as e:
        raise _translate(e) from None
    return ExportResult(
        written=tuple(done["written"]),
        unchanged=done["unchanged"],
        removed=tuple(done["removed"]),
        failed=tuple(done["failed"]),
        refused=tuple(done["refused"]),
        kept=tuple(Path(p) for p in done["kept"]),
        warnings=tuple(_diagnostic(d) for d in done["warnings"]),
    )
