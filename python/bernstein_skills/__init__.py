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

Every call goes through the engine's one context, as the command does:
the same reading of the layers, the same checks (the spec's compiled
schema and the checks after the merge), the same export, on the engine's
threads. Bernstein's functions read Bernstein's layout (its XDG
directories, or ``paths``); :class:`Project` sees a project as the
``bernstein-skills`` command does (the ``BERNSTEIN_SKILLS_*`` variables,
the project's own ``.bernstein/skills``, its locked sources, its
``targets.toml``).

Beyond Bernstein's API: :class:`Project`, :meth:`MergeSpec.load` (a spec
file, as the command reads it), :func:`explain` (where each value came
from), :func:`validate` (diagnostics as :class:`Diagnostic` objects),
:func:`targets`, :func:`export`, and one exception class per kind of
failure, all subclasses of :class:`BernsteinSkillsError`.
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
    "BernsteinSkillsError",
    "BusyError",
    "ConflictError",
    "Diagnostic",
    "ExistsError",
    "FetchError",
    "FileAccessError",
    "InvalidInputError",
    "NoPlaceError",
    "NotFoundError",
    "Project",
    "SpecError",
    "StaleError",
    "StrictError",
    "UnsafeError",
    "UntrustedError",
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
    the table as a merge spec of its own: every KEYED_REPLACE field keyed
    by ``name``, ``id`` or ``code`` (the engine's default keys), an entry
    without a key kept after the keyed ones (``unkeyed: append``) and a
    plain string refused (``plain: refuse``), as Bernstein does;
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
            rule += ", unkeyed: append, plain: refuse"
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
            native = _native.Spec.from_text(_spec_text(spec.strategies), "<MergeSpec>")
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


class BernsteinSkillsError(Exception):
    """Every error of the engine: its ``kind`` (the ``"kind"`` the command
    prints under ``--json``), where it is (``file``, ``line``, ``column``,
    ``field``, from the first problem) and ``diagnostics``, every problem
    of the failed call. Each kind has its own subclass, so a caller tells
    them apart with ``except`` and never by the message's words."""

    kind: str = "error"
    file: Path | None
    line: int | None
    column: int | None
    field: str | None
    diagnostics: tuple[Diagnostic, ...]

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = (), file: Path | None = None) -> None:
        super().__init__(message)
        self._locate(diagnostics, file=file)

    def _locate(
        self, diagnostics: Sequence[Diagnostic], field: str | None = None, file: Path | None = None
    ) -> None:
        first = diagnostics[0] if diagnostics else None
        self.diagnostics = tuple(diagnostics)
        self.file = first.file if first and first.file is not None else file
        self.line = first.line if first else None
        self.column = first.column if first else None
        self.field = first.field if first and first.field is not None else field


class SkillError(BernsteinSkillsError, ValueError):
    """A file the engine cannot use (kind ``invalid``): a fragment that does
    not parse, a value its rule refuses, a project file or record that is
    not valid. Bernstein raises ``ValueError`` for a file it cannot parse;
    this is one."""

    kind = "invalid"


class SpecError(SkillError):
    """The merge spec is unusable (kind ``spec``), at its file and line."""

    kind = "spec"


class StrictError(SkillError):
    """A strict export wrote nothing (kind ``strict``): ``diagnostics``
    lists every problem validate reports, warnings included."""

    kind = "strict"


class SkillTypeError(BernsteinSkillsError, TypeError):
    """A value of the wrong type for its field's strategy (kind
    ``invalid``; where Bernstein raises ``TypeError``)."""

    kind = "invalid"

    def __init__(self, message: str, diagnostics: Sequence[Diagnostic] = (), file: Path | None = None) -> None:
        super().__init__(message, diagnostics, file)


class UnknownFieldError(BernsteinSkillsError, KeyError):
    """Raised when a layer carries a field not declared in :class:`MergeSpec`."""

    kind = "invalid"

    def __init__(self, field_name: str, diagnostics: Sequence[Diagnostic] = ()) -> None:
        message = f"unknown skill field {field_name!r}: extend MergeSpec to add it"
        if diagnostics and diagnostics[0].file is not None:
            d = diagnostics[0]
            where = str(d.file) + (f":{d.line}" if d.line is not None else "")
            where += f":{d.column}" if d.line is not None and d.column is not None else ""
            message = f"{where}: {message}"
        Exception.__init__(self, message)
        self.field_name = field_name
        self._locate(diagnostics, field_name)


class NotFoundError(BernsteinSkillsError, LookupError):
    """What was named is not there (kind ``not_found``): a skill, a target,
    the spec, a source, a layer directory."""

    kind = "not_found"


class SkillNotFoundError(NotFoundError, FileNotFoundError):
    """Raised when no layer provides a skill with the requested name."""

    def __init__(self, name: str, searched: list[Path]) -> None:
        joined = ", ".join(str(p) for p in searched)
        Exception.__init__(self, f"skill {name!r} not found in any layer (searched: {joined})")
        self._locate(())
        self.skill_name = name
        self.searched = searched.copy()


class InvalidInputError(BernsteinSkillsError, ValueError):
    """The request cannot be carried out as written (kind
    ``invalid_input``): a malformed name, or arguments that do not go
    together."""

    kind = "invalid_input"


class ExistsError(BernsteinSkillsError):
    """A file the engine did not write is where it would write (kind
    ``exists``)."""

    kind = "exists"


class ConflictError(BernsteinSkillsError):
    """Two places provide the same thing (kind ``conflict``): a skill in a
    source and in the local base layer, or in two sources."""

    kind = "conflict"


class StaleError(BernsteinSkillsError):
    """A lock or record is out of step with what it records (kind
    ``stale``): ``bernstein-skills skills update --yes`` writes it again."""

    kind = "stale"


class BusyError(BernsteinSkillsError):
    """Another run is writing the same files, or they changed meanwhile
    (kind ``busy``): call again."""

    kind = "busy"


class UntrustedError(BernsteinSkillsError):
    """An export would take a project's own files, which the person has
    not trusted as they are now (kind ``untrusted``)."""

    kind = "untrusted"


class UnsafeError(BernsteinSkillsError):
    """Refused to protect the person (kind ``unsafe``): a symbolic link, a
    file outside its root or not a regular one, a directory others can
    write, a cached or fetched file unlike its lock."""

    kind = "unsafe"


class NoPlaceError(BernsteinSkillsError):
    """The environment does not say where (kind ``no_place``): ``HOME`` or
    an XDG variable unset, no git work tree, a target with no place."""

    kind = "no_place"


class FetchError(BernsteinSkillsError):
    """A source could not be fetched (kind ``fetch``)."""

    kind = "fetch"


class FileAccessError(BernsteinSkillsError, OSError):
    """Reading or writing failed at the operating system (kind ``io``)."""

    kind = "io"


#: The exception class of each kind of error.
_BY_KIND: dict[str, type[BernsteinSkillsError]] = {
    cls.kind: cls
    for cls in (
        SkillError,
        SpecError,
        StrictError,
        NotFoundError,
        InvalidInputError,
        ExistsError,
        ConflictError,
        StaleError,
        BusyError,
        UntrustedError,
        UnsafeError,
        NoPlaceError,
        FetchError,
        FileAccessError,
    )
}


def _translate(
    e: BaseException, name: str | None = None, searched: list[Path] | None = None
) -> BaseException:
    """The exception for the engine's error ``e``: its kind's class, or
    Bernstein's where Bernstein's API raises one (a skill not found, an
    unknown field, a value of the wrong type)."""
    kind, message, details = e.args
    diagnostics = [_diagnostic(d) for d in details.get("diagnostics", ())]
    errors = [d for d in diagnostics if d.severity == "error"] or diagnostics
    if name is not None and (
        kind == "not_found" or (kind == "invalid_input" and details.get("name") == name)
    ):
        return SkillNotFoundError(name, searched or [])
    if kind == "invalid":
        first = next((d for d in details.get("diagnostics", ()) if d["severity"] == "error"), None)
        cls = first["class"] if first else None
        if cls == "unknown_field":
            return UnknownFieldError(errors[0].field or "", errors)
        if cls == "wrong_type":
            return SkillTypeError(str(errors[0]), errors)
        if errors:
            message = "\n".join(str(d) for d in errors)
        return SkillError(message, errors)
    file = details.get("file")
    return _BY_KIND.get(kind, BernsteinSkillsError)(
        message, diagnostics, Path(file) if file is not None else None
    )


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
        return native.merge([(layer.value, fragment) for layer, fragment in fragments.items()])
    except _native.EngineError as e:
        raise _translate(e) from None


def default_layer_root(layer: SkillLayer, *, env: dict[str, str] | None = None) -> Path:
    """Return the canonical directory for ``layer``.

    - BASE: ``$XDG_DATA_HOME/bernstein/skills/base/`` (``~/.local/share``)
    - TEAM: ``$XDG_CONFIG_HOME/bernstein/skills/team/`` (``~/.config``)
    - USER: ``$XDG_CONFIG_HOME/bernstein/skills/user/``
    """
    e = dict(env if env is not None else os.environ)
    # The home directory, as Bernstein finds it, when the variables lack it.
    e.setdefault("HOME", str(Path.home()))
    # The engine's reading of the variables: a relative XDG value is
    # ignored, as the XDG base directory spec says.
    found = _native.default_layer_roots(e)[layer.value]
    if found is None:
        raise NoPlaceError(
            f"no place for the {layer.label} layer: neither its XDG variable nor HOME is an absolute path"
        )
    return Path(found)


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


def _share_dir() -> str:
    """Where the wheel installed the shipped spec and targets."""
    return os.path.join(sys.prefix, "share", "bernstein", "skills")


def _environ(env: Mapping[str, str] | None) -> dict[str, str]:
    return dict(os.environ if env is None else env)


def _engine(
    paths: LayeredSkillPaths, env: Mapping[str, str] | None, spec: MergeSpec | None
) -> Any:
    """The engine's context for Bernstein's layer directories ``paths``,
    the variables ``env`` and ``spec``, standing in the working directory."""
    try:
        return _native.Engine(
            _environ(env), os.getcwd(), _share_dir(), _dirs(paths), _native_spec(spec)
        )
    except _native.EngineError as e:
        raise _translate(e) from None


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
        found = _engine(resolved, env, None).collect(name)
    except _native.EngineError as e:
        if e.args[0] in ("invalid_input", "not_found"):
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
        merged, present = _engine(resolved, env, spec).load(name)
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
    try:
        names = _engine(resolved, env, None).names()
    except _native.EngineError as e:
        raise _translate(e) from None
    return [(name, tuple(_BY_INDEX[i] for i in layers)) for name, layers in names]


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
        merged, present = _engine(resolved, env, spec).load(name)
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
        rows = _engine(resolved, env, spec).explain(name)
    except _native.EngineError as e:
        raise _translate(e, name, _searched(resolved)) from None
    return _origins(rows)


def _origins(rows: list[dict[str, Any]]) -> list[ValueOrigin]:
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
        found, _files, _skills = _engine(resolved, env, spec).validate(
            list(names) if names is not None else None,
            list(targets or ()),
            [os.fspath(d) for d in target_dirs] if target_dirs is not None else None,
        )
    except _native.EngineError as e:
        raise _translate(e) from None
    return [_diagnostic(d) for d in found]


def targets(
    *,
    spec: MergeSpec | None = None,
    dirs: Iterable[str | os.PathLike[str]] | None = None,
) -> dict[str, Path]:
    """The targets found (name to file): in ``dirs``, else where the
    command looks (``$XDG_CONFIG_HOME/bernstein/skills/targets``, beside a
    loaded ``spec``, the installed spec's, and where the wheel installed
    them), the first of a name winning."""
    try:
        engine = _engine(LayeredSkillPaths.defaults(), None, spec)
        found = engine.targets([os.fspath(d) for d in dirs] if dirs is not None else None)
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
    #: What :func:`validate` warns about the skills written and those left
    #: out as orphans, by skill name.
    warnings: tuple[Diagnostic, ...] = ()
    #: The directory written.
    dir: Path | None = None
    #: The skills that failed, each as the exception it would raise.
    errors: tuple[BernsteinSkillsError, ...] = ()


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
        done = _engine(resolved, env, spec).export(
            os.fspath(out),
            format=format,
            prune=prune,
            adopt=list(adopt),
            adopt_all=adopt_all,
            force=force,
            keep_going=keep_going,
            state_dir=os.fspath(state_dir) if state_dir is not None else None,
            strict=strict,
        )
    except _native.EngineError as e:
        raise _translate(e) from None
    return _export_result(done)


class _Failed(Exception):
    """An engine error as :func:`_translate` takes it."""


def _export_result(done: Mapping[str, Any]) -> ExportResult:
    errors = tuple(
        _translate(_Failed(f["kind"], f["message"], f)) for f in done["failed"]
    )
    return ExportResult(
        written=tuple(done["written"]),
        unchanged=done["unchanged"],
        removed=tuple(done["removed"]),
        failed=tuple(f["message"] for f in done["failed"]),
        refused=tuple(done["refused"]),
        kept=tuple(Path(p) for p in done["kept"]),
        warnings=tuple(_diagnostic(d) for d in done["warnings"]),
        dir=Path(done["dir"]),
        errors=errors,  # type: ignore[arg-type]
    )


class Project:
    """A project as the ``bernstein-skills`` command sees it.

    ``path`` (default: the working directory) is where the command would
    run, ``env`` (default: ``os.environ``) its environment. The project,
    its layers and why each was chosen (the ``BERNSTEIN_SKILLS_BASE``,
    ``_TEAM`` and ``_USER`` variables, the project's own
    ``.bernstein/skills`` found from ``path`` in its git work tree, the
    XDG directories), its locked upstream sources, the spec and the
    targets (``targets.toml``, and where targets are looked for) are
    decided once, by the engine's one context, exactly as the command
    decides them: :meth:`list_skills` is what ``list --json`` prints,
    :meth:`effective` what ``show NAME --json`` prints, and
    :meth:`export` writes the bytes ``export`` writes. A relative
    directory is taken from ``path``, as the command takes it from where
    it runs.
    """

    def __init__(
        self, path: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
    ) -> None:
        self.path = Path(os.path.realpath(os.fspath(path) if path is not None else os.getcwd()))
        self.env = _environ(env)
        try:
            self._engine = _native.Engine(self.env, os.fspath(self.path), _share_dir())
        except _native.EngineError as e:
            raise _translate(e) from None

    def __repr__(self) -> str:
        return f"Project({str(self.path)!r})"

    @property
    def spec(self) -> MergeSpec:
        """The merge spec in use (``BERNSTEIN_SKILLS_SPEC``, the installed
        copy, the one the wheel installed)."""
        native = self._engine.spec()
        spec = MergeSpec(strategies={name: MergeStrategy(s) for name, s in native.fields()})
        object.__setattr__(spec, "_native_spec", native)
        return spec

    def list_skills(self) -> dict[str, Any]:
        """Every skill in any layer, as ``list --json`` prints it:
        ``{"places": [...], "skills": [...]}`` (docs/json.md)."""
        try:
            return self._engine.list()
        except _native.EngineError as e:
            raise _translate(e) from None

    def effective(self, name: str) -> dict[str, Any]:
        """The effective skill ``name``, as ``show NAME --json`` prints it."""
        try:
            return self._engine.effective(name)
        except _native.EngineError as e:
            raise _translate(e) from None

    def explain(self, name: str) -> list[ValueOrigin]:
        """Where each value of skill ``name`` came from (:func:`explain`)."""
        try:
            return _origins(self._engine.explain(name))
        except _native.EngineError as e:
            raise _translate(e) from None

    def validate(
        self, names: Sequence[str] | None = None, *, targets: Sequence[str] = ()
    ) -> list[Diagnostic]:
        """Every problem ``validate`` reports (of ``names``, else of every
        skill): with ``targets``, by those consumers' rules; without, by
        the rules of the targets the project names in its ``targets.toml``,
        as warnings."""
        try:
            found, _files, _skills = self._engine.validate(
                list(names) if names is not None else None, list(targets)
            )
        except _native.EngineError as e:
            raise _translate(e) from None
        return [_diagnostic(d) for d in found]

    def targets(self) -> dict[str, Path]:
        """The targets the command finds, by name (``targets``)."""
        try:
            return {name: Path(p) for name, p in self._engine.targets()}
        except _native.EngineError as e:
            raise _translate(e) from None

    def export(
        self,
        out: str | os.PathLike[str] | None = None,
        *,
        target: str | None = None,
        scope: str = "user",
        format: str = "json",
        prune: bool = False,
        adopt: Sequence[str] = (),
        adopt_all: bool = False,
        force: bool = False,
        keep_going: bool = False,
        strict: bool = False,
    ) -> ExportResult:
        """``export --out OUT`` (``--format``), or ``export --target
        TARGET`` into ``out`` or the target's place for ``scope``
        (``"user"`` or ``"project"``): the same layers (the user layer left
        out of a directory the project commits), the same trust, ledger
        and record, the same bytes. Raises as the command fails; a skill
        that fails alone with ``keep_going`` is in the result's
        ``errors``."""
        try:
            done = self._engine.export(
                os.fspath(out) if out is not None else None,
                target,
                scope,
                format,
                prune,
                list(adopt),
                adopt_all,
                force,
                keep_going,
                None,
                strict,
            )
        except _native.EngineError as e:
            raise _translate(e) from None
        return _export_result(done)
