"""The architecture's import rule: every module imports only from its own package or from lower layers.

The layers, lowest first, are listed in docs/architecture.md. A module-level import and a deferred
import inside a function count alike; ``TYPE_CHECKING`` imports too, since checkers follow them.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tcpdsl"

# Package (or top-level module) -> layer. Equal layers may not import each other.
LAYERS: dict[str, int] = {
    "errors": 0,
    "syntax": 1,
    "algebra": 2,
    "verify": 3,
    "cost": 4,
    "pictures": 4,
    "mx": 4,
    "tensors": 5,
    "evaluate": 6,
    "planner": 7,
    "static": 7,
    "cli": 8,
    "mypy_plugin": 8,
    "testing": 8,
    "__main__": 9,
    "pytest_plugin": 9,
}
FACADE = "__init__"  # tcpdsl/__init__.py loads the public names lazily from every layer.


def _unit(path: Path) -> str:
    return path.relative_to(ROOT).parts[0].removesuffix(".py")


def _imported_units(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
            if node.module == "tcpdsl":
                # ``from tcpdsl import __version__`` reads package metadata, not the facade's names.
                names = [f"tcpdsl.{alias.name}" for alias in node.names if not alias.name.startswith("__")]
        for name in names:
            parts = name.split(".")
            if parts[0] == "tcpdsl" and len(parts) > 1:
                found.add(parts[1])
    return found


MODULES = sorted(p for p in ROOT.rglob("*.py") if _unit(p) != FACADE)


def test_every_unit_has_a_layer() -> None:
    units = {_unit(p) for p in MODULES}
    assert units <= set(LAYERS), f"give these a layer: {sorted(units - set(LAYERS))}"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(ROOT)))
def test_imports_point_downward(path: Path) -> None:
    unit = _unit(path)
    wrong = [
        other
        for other in _imported_units(ast.parse(path.read_text()))
        if other != unit and (other == FACADE or LAYERS.get(other, 99) >= LAYERS[unit])
    ]
    assert not wrong, f"{path.relative_to(ROOT)} ({unit}, layer {LAYERS[unit]}) imports upward or sideways: {wrong}"
