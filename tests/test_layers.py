"""The architecture's import rule: every module imports only from its own package or from lower layers.

The layers, lowest first, are listed in docs/architecture.md. A module-level import and a deferred
import inside a function count alike; ``TYPE_CHECKING`` imports too, since checkers follow them.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent / "tcpdsl"

# Package (or top-level module) -> layer. Equal layers may not import each other.
LAYERS: dict[str, int] = {
    "errors": 0,
    "frames": 0,
    "syntax": 1,
    "algebra": 2,
    "verify": 3,
    "cost": 4,
    "pictures": 4,
    "mx": 4,
    "numerics": 5,
    "evaluate": 6,
    "tensors": 7,
    "harness": 8,
    "planner": 9,
    "static": 9,
    "cli": 10,
    "mypy_plugin": 10,
    "testing": 10,
    "__main__": 11,
    "pytest_plugin": 11,
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


def _module_name(path: Path) -> str:
    parts = ("tcpdsl", *path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _module_edges(path: Path, names: set[str]) -> list[tuple[str, bool]]:
    """The tcpdsl modules ``path`` imports, each with whether the import is deferred into a function."""
    tree = ast.parse(path.read_text())
    top = {id(node) for node in ast.walk(tree)} - {
        id(inner) for fn in ast.walk(tree) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for inner in ast.walk(fn)
    }
    found: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # ``from package import submodule`` depends on the submodule, anything else on the module itself.
            targets = [f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in names else node.module for a in node.names]
        found += [(t, id(node) not in top) for t in targets if t in names and t != "tcpdsl"]
    return found


def test_the_import_graph_has_no_cycle_but_the_algebra_seam() -> None:
    """Every module of tcpdsl/ (the lazy facade aside) imports in one direction; the one exception is
    the deferred import inside the algebra through which node methods reach the operations
    (docs/architecture.md)."""
    names = {_module_name(p): p for p in MODULES}
    edges = {name: _module_edges(path, set(names)) for name, path in names.items()}
    seams = {(name, to) for name, found in edges.items() for to, deferred in found
             if deferred and name.startswith("tcpdsl.algebra.") and to.startswith("tcpdsl.algebra.")}
    assert len(seams) <= 1, f"the algebra has one late-bound seam, not {sorted(seams)}"
    graph = {name: {to for to, _ in found if (name, to) not in seams} for name, found in edges.items()}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as cycle:
        raise AssertionError(f"modules import each other in a cycle: {' -> '.join(cycle.args[1])}") from None


DIRECT_IMPORTS = '''
import numpy as np
from tcpdsl.algebra import axis, m
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.scalars import bf16
from tcpdsl.tensors.device import Device
from tcpdsl.tensors.sources import CollectTensor

A, B, C = axis("A", 32), axis("B", 32), axis("C", 8)
grid = (m["1"], m["1 # 2"], m["1 # 256"])
x = np.arange(32 * 32, dtype=np.float32).reshape(32, 32) % 7
w = np.arange(8 * 32, dtype=np.float32).reshape(8, 32) % 5
dev = Device()
stream = CollectTensor[bf16, *grid, m["A, B / 16"], m["B % 16"]](dev.main, Tensor(x, "A B"))
weights = CollectTensor[bf16, *grid, m["C, B / 16"], m["B % 16"]](dev.main, Tensor(w, "C B"))
out = (
    stream.contract_outer(weights.to_trf(lane=m["C"], element=m["B"]), out_time=m["A"], out_packet=m["B"])
    .contract_packet(out_packet=m["1"])
    .contract_time(out_time=m["A"])
    .contract_lane(out_time=m["A"], out_packet=m["C"])
)
assert np.array_equal(out.to_tensor().to_numpy("A C"), x @ w.T)
print("evaluated")
'''


def test_a_result_built_through_direct_imports_evaluates() -> None:
    """No module registers anything on import: the tensor modules alone reach their evaluators."""
    done = subprocess.run([sys.executable, "-c", DIRECT_IMPORTS], capture_output=True, text=True, cwd=ROOT.parent)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "evaluated"
