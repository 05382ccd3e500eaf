"""A kernel-style module for the lexical-scope tests: axes, aliases and annotated functions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tcpdsl.algebra import axis

# The package facade's ``m``: ``typing.Literal`` to checkers, the run-time parser otherwise.
if TYPE_CHECKING:
    from typing import Literal as m
else:
    from tcpdsl.algebra import m

A = axis("A", 32)
B = axis("B", 64)
Out = axis("Out", 64)
N = 8

Chip = m["1"]
Cluster = m["1 # 2"]
Tile = m["A, B / 16"]
Wrong = axis("Other", 4)

AT_IMPORT = m["{Chip}, {Cluster}, A / {N}, B % 16"]


def annotated(x: m["A, B / {N}"], y: m["{Tile}, Out #{0} 128"]) -> None:
    del x, y


def local_shadowing() -> object:
    # A local axis shadows the module-level A, as Python scoping does.
    A = axis("A", 4)  # noqa: N806
    return m["A, B % 4"], A


def uses_module_axes() -> object:
    return m["B, A"]
