"""The algebra's shape: other layers use its public face, and its modules import in one direction.

``tcpdsl/algebra/__init__.py`` exports what the rest of the package uses; inside, the modules form
a chain with one exception, the deferred import through which the node methods reach the
operations built on them (docs/architecture.md).
"""

from __future__ import annotations

import ast
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import tcpdsl.algebra

ROOT = Path(__file__).resolve().parent.parent / "tcpdsl"
ALGEBRA = ROOT / "algebra"
SEAM = ("nodes", "operations")  # the one deferred import


def imports(path: Path, *, deferred: bool) -> set[str]:
    """The ``tcpdsl.algebra.*`` modules ``path`` imports at module level, or inside functions."""
    tree = ast.parse(path.read_text())
    top = set(map(id, tree.body))
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or not node.module:
            continue
        if (id(node) in top) == deferred:
            continue
        if node.module.startswith("tcpdsl.algebra."):
            found.add(node.module.split(".")[2])
        elif node.module == "tcpdsl.algebra":
            found.update(alias.name for alias in node.names if (ALGEBRA / f"{alias.name}.py").exists())
    return found


def test_other_layers_import_the_public_face() -> None:
    inside = [p for p in ROOT.rglob("*.py") if ALGEBRA not in p.parents]
    offenders = {str(p.relative_to(ROOT)): sorted(found) for p in inside
                 if (found := imports(p, deferred=False) | imports(p, deferred=True))}
    assert offenders == {}


def test_the_face_exports_what_is_imported_from_it() -> None:
    for path in ROOT.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module == "tcpdsl.algebra":
                for alias in node.names:
                    if not (ALGEBRA / f"{alias.name}.py").exists():  # a submodule is the seam's business
                        assert alias.name in tcpdsl.algebra.__all__, (path, alias.name)


def test_algebra_modules_import_in_one_direction_but_for_one_seam() -> None:
    modules = [p for p in ALGEBRA.glob("*.py") if p.stem != "__init__"]
    graph = {p.stem: imports(p, deferred=False) for p in modules}
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as cycle:
        raise AssertionError(f"the algebra's modules import in a cycle: {cycle.args[1]}") from None
    deferred = {(p.stem, other) for p in modules for other in imports(p, deferred=True)}
    assert deferred == {SEAM}
