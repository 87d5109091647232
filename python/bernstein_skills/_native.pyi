"""Type stubs of the engine's native module (python/src/lib.rs).

Values cross as plain Python objects; layers are their indices (0 base,
1 team, 2 user). Errors are raised as ``EngineError(kind, message,
details)``, ``kind`` one of ``ERROR_KINDS``, which the package turns into
its exceptions.
"""

from os import PathLike
from typing import Any

class EngineError(Exception):
    args: tuple[str, str, dict[str, Any]]

#: Every kind an error may have, as ``--json`` prints it.
ERROR_KINDS: list[str]

class Spec:
    @staticmethod
    def from_text(text: str, path: str) -> Spec: ...
    @staticmethod
    def load(path: str) -> Spec: ...
    @property
    def path(self) -> PathLike[str]: ...
    def fields(self) -> list[tuple[str, str]]: ...
    def roles(self) -> tuple[str | None, str | None]: ...
    def merge(self, fragments: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]: ...

class Engine:
    def __init__(
        self,
        env: dict[str, str],
        cwd: str,
        share_dir: str | None = None,
        layers: list[str] | None = None,
        spec: Spec | None = None,
    ) -> None: ...
    def spec(self) -> Spec: ...
    def names(self) -> list[tuple[str, list[int]]]: ...
    def list(self) -> dict[str, Any]: ...
    def effective(self, name: str) -> dict[str, Any]: ...
    def load(self, name: str) -> tuple[dict[str, Any], list[int]]: ...
    def collect(self, name: str) -> list[tuple[int, dict[str, Any]]]: ...
    def explain(self, name: str) -> list[dict[str, Any]]: ...
    def validate(
        self,
        names: list[str] | None = None,
        targets: list[str] = ...,
        target_dirs: list[str] | None = None,
    ) -> tuple[list[dict[str, Any]], int, int]: ...
    def targets(self, dirs: list[str] | None = None) -> list[tuple[str, PathLike[str]]]: ...
    def export(
        self,
        out: str | None = None,
        target: str | None = None,
        scope: str = "user",
        format: str = "json",
        prune: bool = False,
        adopt: list[str] = ...,
        adopt_all: bool = False,
        force: bool = False,
        keep_going: bool = False,
        state_dir: str | None = None,
        strict: bool = False,
    ) -> dict[str, Any]: ...

def default_layer_roots(env: dict[str, str]) -> list[str | None]: ...
