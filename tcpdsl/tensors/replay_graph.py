"""What a recorded kernel body built, as a replay needs it (docs/replay.md §2): every place its nodes keep values,
and which of the body's arguments each depends on.

The graph is found by walking from its outputs through the links the evaluators follow (a root's source, a
window's or write's parent, a chain's operands, a pass's source and operands) and through what closures hold.
A node kept values of one call; on the next, only the nodes that depend on an argument whose values may differ
forget theirs, so what the weights alone determine (their streams into the tensor register file) is computed
once.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import CellType, FunctionType, MethodType
from collections.abc import Callable
from typing import Any

from tcpdsl.numerics.chain import Chain, Operand
from tcpdsl.numerics.flow import Flow, Root, Scattered, Window, Written
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.vector_chain import PassSource, PassStep, VectorChain, VrfValues
from tcpdsl.tensors.base import TensorBase


@dataclass
class Graph:
    """Per argument (slot), the caches of the nodes that depend on it; and in the order the body built them, the
    contraction operands that hold values of a collected stream: the stream's flow, the operands, and the slots
    it depends on. Read again in that order, no contraction reads an operand before it is read again."""

    caches: list[list[dict[str, Any]]]
    operands: list[tuple[Flow, list[Operand], frozenset[int]]]


def _contents(cell: CellType) -> object:
    try:
        return cell.cell_contents
    except ValueError:  # a name the function refers to that was never bound
        return None


def _tensor_links(node: Any) -> tuple[object, ...]:
    return tuple(getattr(node, name, None) for name in ("_flow", "_chain", "_parent"))


# What each kind of node reads its values through, by its exact type (a walk meets thousands of nodes).
_LINKS: dict[type, Callable[[Any], tuple[object, ...]]] = {
    Flow: lambda node: (node.root,),
    Root: lambda node: (node.source, node.logical, node.physical),
    Window: lambda node: (node.parent,),
    Written: lambda node: (node.parent, node.written),
    Scattered: lambda node: (node.parent, node.data, node.moved, node.index),
    Chain: lambda node: (node.stream, node.weight),
    Operand: lambda node: (node.origin,),
    VectorChain: lambda node: (node.source, *node.steps),
    PassSource: lambda node: (node.origin, node.logical, node.physical),
    PassStep: lambda node: node.operands,
    VrfValues: lambda node: (node.read, node.origin),
    FunctionType: lambda node: tuple(map(_contents, node.__closure__ or ())),
    MethodType: lambda node: (node.__self__,),
    tuple: tuple,
    list: tuple,
}
# Every other type: a tensor class reads through its flow, chain or parent; anything else is no node.
_NOT_A_NODE: set[type] = set()


def _linker(kind: type) -> Callable[[Any], tuple[object, ...]] | None:
    """How a node of type ``kind`` reads its values, or None when it is no node of a graph (a mapping, an array...)."""
    found = _LINKS.get(kind)
    if found is None and kind not in _NOT_A_NODE:
        if issubclass(kind, TensorBase):
            found = _LINKS[kind] = _tensor_links
        else:
            _NOT_A_NODE.add(kind)
    return found


def _caches(node: object) -> list[dict[str, Any]]:
    """The dicts ``node`` keeps values in."""
    if isinstance(node, (Flow, VectorChain)):
        return [node.cache]
    if isinstance(node, TensorBase):  # a contraction result read from Python keeps its values per evaluator
        return [found for name in ("_buffers", "_logical") if isinstance(found := getattr(node, name, None), dict)]
    return []


def graph_of(outputs: list[Flow], leaves: list[Flow], sources: list[tuple[Tensor, Flow]]) -> Graph:
    """The graph behind ``outputs``, whose argument ``i`` is read through ``leaves[i]``; ``sources`` are the
    collected streams a contraction read while it was built, with the tensors it made of them."""
    links: dict[int, list[int]] = {}
    nodes: dict[int, object] = {}
    # A TRF's operand names its load, not the stream whose values it holds: each such stream is walked too.
    stack: list[object] = [*outputs, *leaves, *(flow for _, flow in sources)]
    while stack:
        node = stack.pop()
        if id(node) in nodes:
            continue
        linker = _linker(type(node))
        if linker is None:
            continue
        found = [n for n in linker(node) if _linker(type(n)) is not None]
        nodes[id(node)] = node
        links[id(node)] = [id(n) for n in found]
        stack += found
    # A stream continuing a tensor shares its root: the root is what reads the slot.
    depends = _dependencies(links, {id(node): i for i, leaf in enumerate(leaves) for node in (leaf, leaf.root)})
    caches: list[list[dict[str, Any]]] = [[] for _ in leaves]
    operands: list[Operand] = []
    for key, node in nodes.items():
        for slot in depends[key]:
            caches[slot] += _caches(node)
        if isinstance(node, Operand):
            operands.append(node)
    groups = [(flow, [o for o in operands if o.tensor is tensor], frozenset(depends.get(id(flow), ())))
              for tensor, flow in sources]
    return Graph(caches, [group for group in groups if group[1]])


def _dependencies(links: dict[int, list[int]], leaves: dict[int, int]) -> dict[int, set[int]]:
    """For each node, the slots of the leaves it reaches: a search from each leaf against the links (which
    may form cycles, through what closures hold)."""
    readers: dict[int, list[int]] = {}
    for key, found in links.items():
        for linked in found:
            readers.setdefault(linked, []).append(key)
    depends: dict[int, set[int]] = {key: set() for key in links}
    for leaf, slot in leaves.items():
        stack = [leaf]
        while stack:
            key = stack.pop()
            if slot in depends[key]:
                continue
            depends[key].add(slot)
            stack += readers.get(key, ())
    return depends
