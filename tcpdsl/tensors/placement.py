"""Where each logical element sits in a physical buffer: a vectorised position plan per mapping.

The plan follows the position-additive semantics of the algebra: every digit that reaches the same
sub-expression adds to one position there, and a position is dead if any padding or bound on its
way is hit. A mapping is a product of factors (the leaves of its Pair spine); each factor is
evaluated on its own small range, and the whole buffer is their broadcast combination, so
the cost of a large layout is a few passes over the buffer. The tensor layer needs this to lay
logical tensors out and to read results back; evaluators keep their own copy of the job.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from tcpdsl.algebra.nodes import Broadcast, Mapping, Modulo, Pair, Padding, Resize, Stride, Symbol, children
from tcpdsl.errors import LayoutError

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]


@dataclass(frozen=True)
class Factor:
    """One factor of a layout over its own positions: which are live, and their coordinates."""

    size: int
    live: BoolArray | None  # None: every position is live
    coords: dict[str, IntArray]


@dataclass(frozen=True)
class Plan:
    """A mapping as a product of factors, outermost first; full-size arrays are built on demand."""

    size: int
    sizes: dict[str, int]
    factors: tuple[Factor, ...]
    shared: tuple[str, ...]  # axes whose coordinate sums over several factors
    _memo: dict[object, object] = field(default_factory=dict, compare=False, repr=False)

    def _spread(self, parts: Sequence[tuple[int, npt.NDArray[Any]]], dtype: type) -> npt.NDArray[Any]:
        """Sum per-factor arrays, each broadcast along its own factor, into one full-size array."""
        shape = tuple(f.size for f in self.factors)
        out: npt.NDArray[Any] = np.zeros(shape, dtype=dtype)
        for i, values in parts:
            view = [1] * len(shape)
            view[i] = shape[i]
            out += values.reshape(view)
        return out.reshape(-1)

    def coordinate(self, axis: str) -> IntArray:
        """The coordinate of ``axis`` at every position (meaningful on live positions)."""
        parts = [(i, f.coords[axis]) for i, f in enumerate(self.factors) if axis in f.coords]
        return self._spread(parts, np.int64)

    @property
    def live(self) -> BoolArray | None:
        """Which positions hold a logical element (None when all do)."""
        if "live" not in self._memo:
            self._memo["live"] = self._live()
        return self._memo["live"]  # type: ignore[return-value]

    def _live(self) -> BoolArray | None:
        dead = [(i, ~f.live) for i, f in enumerate(self.factors) if f.live is not None and not f.live.all()]
        live: BoolArray | None = None
        if dead:
            live = self._spread([(i, d.astype(np.int8)) for i, d in dead], np.int8) == 0
        for axis in self.shared:
            ok = self.coordinate(axis) < self.sizes[axis]
            live = ok if live is None else live & ok
        return live

    def index(self, axes: tuple[str, ...]) -> IntArray:
        """The row-major index over ``axes`` of the logical element at every position."""
        key = ("index", axes)
        found = self._memo.get(key)
        if found is None:
            shape = [self.sizes[a] for a in axes]
            strides = [int(np.prod(shape[i + 1 :], dtype=np.int64)) for i in range(len(axes))]
            parts = []
            for i, f in enumerate(self.factors):
                contribution = np.zeros(f.size, dtype=np.int64)
                for a, stride in zip(axes, strides):
                    if a in f.coords:
                        contribution += f.coords[a] * stride
                if contribution.any():
                    parts.append((i, contribution))
            found = self._spread(parts, np.int64)
            if len(self._memo) > 8:
                self._memo.clear()
            self._memo[key] = found
        return found  # type: ignore[return-value]

    def live_index(self, axes: tuple[str, ...]) -> tuple[BoolArray | None, IntArray]:
        """The live mask and the logical index of the live positions."""
        live = self.live
        index = self.index(axes)
        return live, index if live is None else index[live]

    def coverage(self, axes: tuple[str, ...]) -> bool:
        """Whether every logical index over ``axes`` has at least one live position."""
        total = int(np.prod([self.sizes[a] for a in axes], dtype=np.int64))
        _, index = self.live_index(axes)
        if index.size == 0:
            return False
        seen = np.zeros(total, dtype=np.bool_)
        seen[index] = True
        return bool(seen.all())


def _structure(root: Mapping) -> list[tuple[Mapping, tuple[int, ...]]]:
    """Every distinct sub-expression of ``root`` with its most major rank, parents before children."""
    ranks: dict[object, tuple[Mapping, tuple[int, ...]]] = {root.key: (root, ())}
    frontier = [root]
    while frontier:
        frontier.sort(key=lambda n: n.height)
        node = frontier.pop()
        rank = ranks[node.key][1]
        for offset, child in enumerate(children(node)):
            child_rank = (*rank, offset) if isinstance(node, Pair) else rank
            known = ranks.get(child.key)
            if known is None:
                ranks[child.key] = (child, child_rank)
                frontier.append(child)
            elif child_rank < known[1]:
                ranks[child.key] = (child, child_rank)
    return sorted(ranks.values(), key=lambda e: -e[0].height)


def _evaluate(root: Mapping) -> Factor:
    """The position-additive semantics at every position of ``root`` (for small mappings)."""
    size = root.size
    positions: dict[object, IntArray] = {root.key: np.arange(size, dtype=np.int64)}
    dead = np.zeros(size, dtype=np.bool_)
    coords: dict[str, IntArray] = {}

    def push(child: Mapping, pos: IntArray) -> None:
        known = positions.get(child.key)
        positions[child.key] = pos if known is None else known + pos

    for node, _ in _structure(root):
        pos = positions.get(node.key)
        if pos is None:
            continue
        invalid = pos >= node.size
        if invalid.any():
            dead |= invalid
            pos = np.where(invalid, 0, pos)
        if isinstance(node, Symbol):
            coords[node.name] = coords[node.name] + pos if node.name in coords else pos
        elif isinstance(node, Pair):
            below = node.right.size
            push(node.left, pos // below)
            push(node.right, pos % below)
        elif isinstance(node, Stride):
            push(node.inner, pos * node.s)
        elif isinstance(node, (Modulo, Resize)):
            push(node.inner, pos)
        elif isinstance(node, Padding):
            padded = pos >= node.inner.size
            dead |= padded
            push(node.inner, np.where(padded, 0, pos))
        elif not isinstance(node, Broadcast):
            raise LayoutError("mapping", "UnknownNode", f"cannot place a {type(node).__name__} node")
    for name, n in root.axis_sizes().items():
        dead |= coords[name] >= n
    return Factor(size, None if not dead.any() else ~dead, coords)


def _spine(node: Mapping) -> list[Mapping]:
    if isinstance(node, Pair):
        return _spine(node.left) + _spine(node.right)
    return [node]


def _inner_keys(node: Mapping, out: set[object]) -> set[object]:
    if not isinstance(node, (Symbol, Broadcast)):
        out.add(node.key)
    for child in children(node):
        _inner_keys(child, out)
    return out


@functools.lru_cache(maxsize=512)
def _plan_for(mapping: _Keyed) -> Plan:
    root = mapping.node
    sizes = root.axis_sizes()
    parts = _spine(root)
    keys = [_inner_keys(p, set()) for p in parts]
    seen: set[object] = set()
    independent = True
    for k in keys:
        if seen & k:
            independent = False
            break
        seen |= k
    if not independent:
        # Factors sharing a padded or strided sub-expression add positions inside it: evaluate whole.
        return Plan(root.size, sizes, (_evaluate(root),), ())
    factors = tuple(_evaluate(p) for p in parts)
    counts: dict[str, int] = {}
    for f in factors:
        for a in f.coords:
            counts[a] = counts.get(a, 0) + 1
    shared = tuple(a for a, c in counts.items() if c > 1)
    return Plan(root.size, sizes, factors, shared)


class _Keyed:
    """Hash a mapping by its raw structure (its ``==`` compares normalized forms)."""

    __slots__ = ("node",)

    def __init__(self, node: Mapping) -> None:
        self.node = node

    def __hash__(self) -> int:
        return hash(self.node.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Keyed) and other.node.key == self.node.key


def plan(mapping: Mapping) -> Plan:
    """The cached position plan of ``mapping``."""
    return _plan_for(_Keyed(mapping))


def to_physical(values: npt.NDArray[np.generic], axes: tuple[str, ...], mapping: Mapping, fill: object = 0) -> npt.NDArray[np.generic]:
    """Lay ``values`` (array over ``axes``) out through ``mapping``: a 1-D buffer of ``mapping.size`` cells.

    Axes of the mapping missing from ``axes`` replicate the value; padding cells take ``fill``.
    """
    p = plan(mapping)
    live, index = p.live_index(axes)
    flat = values.reshape(-1)
    if live is None:
        return flat[index]
    out = np.full(p.size, fill, dtype=values.dtype)
    out[live] = flat[index]
    return out


def to_logical(physical: npt.NDArray[np.generic], mapping: Mapping, axes: tuple[str, ...]) -> npt.NDArray[np.generic]:
    """Read the logical tensor over ``axes`` back from a 1-D buffer laid out by ``mapping``.

    Logical indices that no live position holds read as zero.
    """
    p = plan(mapping)
    if physical.size != p.size:
        raise LayoutError("tensor", "BufferSize", f"a buffer of {physical.size} cells cannot hold {mapping} ({p.size} cells)")
    shape = tuple(p.sizes[a] for a in axes)
    live, index = p.live_index(axes)
    flat = physical.reshape(-1)
    held = flat if live is None else flat[live]
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=physical.dtype)
    out[index] = held
    return out.reshape(shape)


def held(mapping: Mapping, axes: tuple[str, ...]) -> BoolArray:
    """Which logical cells over ``axes`` some live position of ``mapping`` holds."""
    p = plan(mapping)
    shape = tuple(p.sizes[a] for a in axes)
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), dtype=np.bool_)
    out[p.live_index(axes)[1]] = True
    return out.reshape(shape)
