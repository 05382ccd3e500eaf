"""Replaying kernels: inside ``with tcp.replay():`` a kernel called again with the same argument signature records
what its body builds, and later calls evaluate that on their own arguments' values (docs/replay.md).

Every rule of a stage call depends only on the types of its tensors and its other arguments, so a body
called again with arguments of the same types builds the same graph of flows, contraction chains and
vector passes, each of which an evaluator computes from its inputs' values alone. A recording runs the
body on stand-ins for the tensor arguments (memory tensors whose values are read from a slot), so the
graph it builds refers to the slots and not to the caller's tensors. A replay puts the new arguments'
values in the slots, forgets the values the graph's nodes kept that depend on them, and evaluates the outputs
again; the evaluator's plans are found by the identity of the very same nodes, so nothing is planned twice.

What a call returns and writes are memory tensors holding the computed values, as if placed from the
host (docs/runtime.md §4, "Writes read once").
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from collections import Counter
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Final, TypeVar
import threading
import weakref

from tcpdsl.evaluate.backend import DEFAULT, get as get_evaluator, selected
from tcpdsl.evaluate.stream import kept_as_placed
from tcpdsl.numerics.flow import Flow, Root
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.kept import unwritable
from tcpdsl.tensors import recording
from tcpdsl.tensors.base import Array, interned
from tcpdsl.tensors.filled import FLOW_SERIAL, filled
from tcpdsl.tensors.memory import DmTensor, HbmTensor, VrfTensor
from tcpdsl.tensors.replay_graph import graph_of
from tcpdsl.tensors.stream import FlowTensor

# Outside ``tcp.replay()`` (and inside a recording, where nested kernels run as written): None.
MODE: ContextVar[ReplayLog | None] = ContextVar("tcpdsl_replay", default=None)

# The tensors a replay takes as arguments and gives back: memory tensors, whose values are a flow's.
_MEMORY: Final = (DmTensor, HbmTensor, VrfTensor)
# Other arguments are part of the signature by value (their type too: 1, 1.0 and True differ).
_STATIC: Final = (int, float, bool, str, type(None))
# Signatures kept per kernel, the oldest forgotten first: a kernel called with many int arguments (a cache row
# per token) meets a new signature on most calls.
SIGNATURES_PER_KERNEL: Final = 16
FUSED: Final = DEFAULT  # replays evaluate on the fused evaluator, the one selected by default
T = TypeVar("T")


@dataclass
class ReplayLog:
    """What the kernels called inside one ``tcp.replay()`` block did, by kernel name: the signatures recorded,
    the calls replayed, and the calls that ran as written with the reason (docs/replay.md §3)."""

    recorded: Counter[str] = field(default_factory=Counter)
    replayed: Counter[str] = field(default_factory=Counter)
    as_written: dict[str, Counter[str]] = field(default_factory=dict)

    def ran_as_written(self, kernel: str, reason: str) -> None:
        self.as_written.setdefault(kernel, Counter())[reason] += 1

    def __str__(self) -> str:
        names = dict.fromkeys([*self.recorded, *self.replayed, *self.as_written])
        if not names:
            return "no kernel was called"
        lines = []
        for name in names:
            lines.append(f"{name}: {self.recorded[name]} recorded, {self.replayed[name]} replayed")
            for reason, calls in self.as_written.get(name, Counter()).items():
                lines.append(f"  {calls} ran as written: {reason}")
        return "\n".join(lines)


@contextmanager
def replay() -> Iterator[ReplayLog]:
    """Replay the kernels called inside the block (docs/replay.md): a ``@tcp.kernel`` called a second time with
    the same argument signature (the types of its tensor arguments, the values of the others) records what its
    body builds, and evaluates that on later calls. On the fused evaluator; a call that is not replayed runs
    as written, and the log the block yields says which and why."""
    log = ReplayLog()
    token = MODE.set(log)
    try:
        yield log
    finally:
        MODE.reset(token)


def _signature(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[tuple[object, ...], list[FlowTensor]] | str:
    """The call's signature and its distinct tensor arguments in order, or why it has none: an argument that is
    neither a memory tensor nor a plain value."""
    key: list[object] = [tuple(kwargs)]
    tensors: list[FlowTensor] = []
    places: dict[int, int] = {}  # id of each distinct tensor argument -> its place among them
    for value in (*args, *kwargs.values()):
        kind = type(value)
        if kind in _MEMORY:
            index = places.setdefault(id(value), len(tensors))
            if index == len(tensors):
                tensors.append(value)
            root = value._flow.root
            # One spec per composed type, and the terms the values are held over (they decide how the evaluator
            # reads them), by the id of one tuple per value. The recording keeps them, so their ids stay theirs.
            key.append((kind, id(value._spec), index, id(_one(root.terms)), id(_one(root.fixed))))
        elif kind in _STATIC or isinstance(value, Enum):
            key.append((kind, value.hex() if kind is float else value))  # -0.0 is not 0.0
        else:
            return f"an argument is a {kind.__name__}, neither a memory tensor nor a plain value"
    return tuple(key), tensors


_ONE_LIMIT: Final = 4096
_one_by_identity: dict[int, tuple[tuple[object, ...], tuple[object, ...]]] = {}


def _one(value: tuple[T, ...]) -> tuple[T, ...]:
    """:func:`~tcpdsl.tensors.base.interned` for a tuple of terms, found by identity first (the tensors of a type
    share theirs): it hashes every term only for a tuple not seen before."""
    seen = _one_by_identity.get(id(value))
    if seen is not None and seen[0] is value:
        return seen[1]  # type: ignore[return-value]
    if len(_one_by_identity) >= _ONE_LIMIT:
        _one_by_identity.clear()  # a recording keeps the tuples its key names, so no other tuple takes their ids
    found = interned(value)
    _one_by_identity[id(value)] = (value, found)
    return found


def _leaf(tensor: FlowTensor, logical: Callable[[str], Array], source: object, cache: dict[str, Any],
          root: Root | None = None) -> Flow:
    """A flow without steps holding what ``tensor``'s flow holds at its end: its mapping and dtype, over the terms
    of ``root`` (its flow's own root by default), with values from ``logical``."""
    flow = tensor._flow
    held = flow.root if root is None else root
    leaf = filled(Root, {"mapping": flow.mapping, "dtype": flow.dtype, "terms": held.terms, "fixed": held.fixed,
                         "logical": logical, "physical": None, "source": source})
    return filled(Flow, {"root": leaf, "steps": (), "cache": cache, "serial": FLOW_SERIAL()})


def _placed(tensor: FlowTensor, values: Array, computed: Flow) -> Flow:
    """``tensor``'s flow end as values placed from the host: ``values``, which ``computed`` computed (and may
    have marked as converted), over ``computed``'s terms (a scatter into a tensor filled by a broadcast holds
    its values over an axis the tensor before it did not)."""
    root = computed.root
    return _leaf(tensor, lambda name: values, Tensor.of_terms(values, root.terms, root.fixed),
                 kept_as_placed(computed, values, FUSED), root)


class _Recording:
    """A kernel body built once on stand-ins: how to evaluate it on new arguments and what to hand back."""

    def __init__(self, tensors: list[FlowTensor], proxies: list[FlowTensor], leaves: list[Flow],
                 slots: list[Array | None], result: object, log: recording.Log) -> None:
        self.slots = slots
        # Kept, so that their ids in the signature stay theirs.
        self.identities = [(t._spec, _one(t._flow.root.terms), _one(t._flow.root.fixed)) for t in tensors]
        self.leaves = leaves
        # An argument the body wrote into: its stand-in's flow changed.
        self.written = [(i, p._flow) for i, p in enumerate(proxies) if p._flow is not leaves[i]]
        by_proxy = {id(p): i for i, p in enumerate(proxies)}
        parts = result if isinstance(result, tuple) else (result,)
        self.tuple_type: type[tuple[Any, ...]] | None = type(result) if isinstance(result, tuple) else None
        # Each part of the result: an argument (its index), or a new memory tensor (its type and flow are the
        # answer's, its values the graph's).
        self.parts: list[int | FlowTensor] = []
        self.reason = log.baked
        for part in parts:
            if id(part) in by_proxy:
                self.parts.append(by_proxy[id(part)])
            elif type(part) in _MEMORY:
                assert isinstance(part, FlowTensor)
                self.parts.append(part)
            elif self.reason is None:
                self.reason = f"it returns a {type(part).__name__}, not a memory tensor"
        outputs = [flow for _, flow in self.written] + [part._flow for part in self.parts if not isinstance(part, int)]
        self.graph = graph_of(outputs, leaves, log.sources)
        # The values each slot held last (weakly: they are the caller's): what the graph's nodes still hold.
        self.held: list[weakref.ref[Array] | None] = [_kept_ref(values) for values in slots]
        # The slots whose values were new on the call before (the recording computed every node from its own).
        self.fresh_before = frozenset(range(len(slots)))
        self.caches_of: dict[frozenset[int], list[dict[str, Any]]] = {}
        self.lock = threading.Lock()

    def run(self, tensors: list[FlowTensor]) -> Any:
        """Evaluate the graph on ``tensors``' values: write into each argument the body wrote into, and return
        the result as the body's, with new memory tensors holding their values.

        A node keeps its values from one call to the next only while every argument it depends on holds the
        very same frozen array as the call before (the weights): what new values determine is forgotten when
        the run ends, however it ends, and computed again (with the operands read from it) on the next."""
        fused = get_evaluator(FUSED)
        values = [fused.flow_logical(tensor._flow) for tensor in tensors]
        graph, slots, held = self.graph, self.slots, self.held
        fresh = frozenset(i for i, v in enumerate(values) if (ref := held[i]) is None or ref() is not v)
        done = False
        try:
            # What depends on a slot that was new on the call before was forgotten when that call ended.
            for cache in self._caches(fresh - self.fresh_before):
                cache.clear()
            for i in fresh:
                slots[i] = values[i]
                held[i] = None  # until the operands read from it are read again
            for i in fresh:  # each stand-in holds its argument's values, and their mark
                self.leaves[i].cache.update(kept_as_placed(tensors[i]._flow, values[i], FUSED))
            for flow, operands, depends in graph.operands:  # what the contractions read, computed again
                if depends & fresh:
                    before = operands[0].tensor
                    assert before is not None  # the operands of a collected stream hold its tensor
                    read = before.with_values(fused.flow_logical(flow))
                    for operand in operands:
                        fields = operand.__dict__  # a frozen record: written as Chain.with_stage writes it
                        fields["tensor"] = read
                        fields.pop("values", None)  # derived from the tensor when first read
            written = [(i, _placed(tensors[i], fused.flow_logical(flow), flow)) for i, flow in self.written]
            parts: list[Any] = []
            for part in self.parts:
                if isinstance(part, int):
                    parts.append(tensors[part])
                else:
                    flow = part._flow
                    parts.append(type(part)._of_flow(part._spec, _placed(part, fused.flow_logical(flow), flow)))
            done = True
        finally:
            for cache in self._caches(fresh):  # what new values determine is forgotten: what the same determine stays
                cache.clear()
            for i in fresh:
                held[i] = _kept_ref(values[i]) if done else None  # a failed call keeps nothing for the next
                if held[i] is None:
                    slots[i] = None
            self.fresh_before = fresh
        for i, placed in written:
            tensors[i]._flow = placed
        if self.tuple_type is None:
            return parts[0]
        return self.tuple_type(parts) if self.tuple_type is tuple else self.tuple_type(*parts)

    def _caches(self, slots: frozenset[int]) -> list[dict[str, Any]]:
        """The caches of the nodes that depend on any of ``slots``, each once (kept per set: a kernel called in a
        loop passes new values in the same arguments every time)."""
        found = self.caches_of.get(slots)
        if found is None:
            unique = {id(cache): cache for i in sorted(slots) for cache in self.graph.caches[i]}
            found = self.caches_of[slots] = list(unique.values())
        return found


def _kept_ref(values: Array | None) -> weakref.ref[Array] | None:
    """A weak reference to ``values`` when nothing can change them (a weight's frozen array), else None."""
    return weakref.ref(values) if values is not None and unwritable(values) else None


FIRST_CALL: Final = "the first call of its signature (the next is recorded)"


class Replays:
    """A kernel's signatures (at most :data:`SIGNATURES_PER_KERNEL`, the oldest forgotten first): None for one
    called once, then its recording, or why its calls run as written.

    A signature's first call runs as written: recording costs about twice a call, and a signature seen once (a
    cache row written once in a loop over tokens) would pay it for nothing."""

    def __init__(self, name: str, checked: Callable[..., Any]) -> None:
        self.name = name
        self.checked = checked
        self.recordings: dict[tuple[object, ...], _Recording | str | None] = {}

    def __call__(self, log: ReplayLog, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if selected() != FUSED:
            log.ran_as_written(self.name, f"the {selected()} evaluator is selected")
            return self.checked(*args, **kwargs)
        signature = _signature(args, kwargs)
        if isinstance(signature, str):
            log.ran_as_written(self.name, signature)
            return self.checked(*args, **kwargs)
        key, tensors = signature
        found = self.recordings.get(key, FIRST_CALL)
        if found is FIRST_CALL:
            self._remember(key, None)
            log.ran_as_written(self.name, FIRST_CALL)
            return self.checked(*args, **kwargs)
        if found is None:
            return self._record(log, key, tensors, args, kwargs)
        if isinstance(found, str):
            log.ran_as_written(self.name, found)
            return self.checked(*args, **kwargs)
        if not found.lock.acquire(blocking=False):  # a graph holds one call's values at a time
            log.ran_as_written(self.name, "another thread is evaluating its graph")
            return self.checked(*args, **kwargs)
        try:
            log.replayed[self.name] += 1
            return found.run(tensors)
        finally:
            found.lock.release()

    def _record(self, log: ReplayLog, key: tuple[object, ...], tensors: list[FlowTensor], args: tuple[Any, ...],
                kwargs: dict[str, Any]) -> Any:
        """Run the body on stand-ins for ``tensors``, keep what it built, and evaluate it on their values."""
        slots: list[Array | None] = [None] * len(tensors)
        proxies = [type(t)._of_flow(t._spec, _leaf(t, _slot_reader(slots, i), None, {})) for i, t in enumerate(tensors)]
        leaves = [p._flow for p in proxies]
        standing = {id(t): p for t, p in zip(tensors, proxies)}
        built, fused = recording.Log(), get_evaluator(FUSED)
        mode, active = MODE.set(None), recording.ACTIVE.set(built)
        try:
            for i, tensor in enumerate(tensors):
                slots[i] = fused.flow_logical(tensor._flow)
            result = self.checked(*(standing.get(id(a), a) for a in args),
                                  **{k: standing.get(id(v), v) for k, v in kwargs.items()})
            found = _Recording(tensors, proxies, leaves, slots, result, built)
        finally:
            MODE.reset(mode)
            recording.ACTIVE.reset(active)
        self._remember(key, found if found.reason is None else found.reason)
        if found.reason is None:
            log.recorded[self.name] += 1
            return found.run(tensors)
        log.ran_as_written(self.name, found.reason)
        # Built on stand-ins all the same: the writes are carried to the arguments, and the result holds the
        # stand-ins' values, which are the arguments'.
        for i, flow in found.written:
            tensors[i]._flow = _placed(tensors[i], fused.flow_logical(flow), flow)
        return result

    def _remember(self, key: tuple[object, ...], found: _Recording | str | None) -> None:
        if key not in self.recordings and len(self.recordings) >= SIGNATURES_PER_KERNEL:
            del self.recordings[next(iter(self.recordings))]
        self.recordings[key] = found


def _slot_reader(slots: list[Array | None], index: int) -> Callable[[str], Array]:
    def read(name: str) -> Array:
        values = slots[index]
        assert values is not None, "a recorded graph is evaluated only while its slots hold values"
        return values

    return read
