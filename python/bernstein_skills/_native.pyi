"""Type stubs of the engine's native module (python/src/lib.rs).

Values cross as plain Python objects; layers are their indices (0 base,
1 team, 2 user). Errors are raised as ``EngineError(kind, message,
details)``, which the package turns into its exceptions.
"""

from os import PathLike
from typing import Any

class EngineError(Exception):
    args: tuple[str, str, dict[str, Any]]

class Spec:
    @staticmethod
    def from_text(text: str, path: str, mappings_only: bool = False) -> Spec: ...
    @staticmethod
    def load(path: str) -> Spec: ...
    @property
    def path(self) -> PathLike[str]: ...
    def fields(self) -> list[tuple[str, str]]: ...
    def roles(self) -> tuple[str | None, str | None]: ...

def merge_layers(spec: Spec, fragments: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]: ...
def load_skill(spec: Spec, paths: list[str], name: str) -> tuple[dict[str, Any], list[int]]: ...
def collect_layers(spec: Spec, paths: list[str], name: str) -> list[tuple[int, dict[str, Any]]]: ...
def list_skills(paths: list[str]) -> list[tuple[str, list[int]]]: ...
def explain(spec: Spec, paths: list[str], name: str) -> list[dict[str, Any]]: ...
def validate(
    spec: Spec,
    paths: list[str],
    names: list[str] | None = None,
    targets: list[str] | None = None,
    target_dirs: list[str] = ...,
) -> tuple[list[dict[str, Any]], int, int]: ...
def targets(dirs: list[str]) -> list[tuple[str, PathLike[str]]]: ...
def export(
    spec: Spec,
    paths: list[str],
    out: str,
    format: str = "json",
    prune: bool = False,
    adopt: list[str] = ...,
    adopt_all: bool = False,
    force: bool = False,
    keep_going: bool = False,
    state_dir: str | None = None,
    strict: bool = False,
) -> dict[str, Any]: ...
