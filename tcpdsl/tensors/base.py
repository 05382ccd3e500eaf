"""What every tensor of the contraction chain has: its type, a logical view, the physical buffer, an explanation.

The six tensor classes derive from :class:`TensorBase`; :mod:`tcpdsl.tensors.sources` holds the
two that carry data (a collected stream, TRF weights) and :mod:`tcpdsl.tensors.results` the four
stage results. Each class has only the next stage's method, so calling a stage out of order is an
attribute error for type checkers and at run time alike::

    CollectTensor --contract_outer--> ContractOuterTensor --contract_packet--> ContractPacketTensor
        --contract_time--> ContractTimeTensor --contract_lane--> ContractTensor
    CollectTensor --to_trf--> TrfTensor

To checkers the classes are generic over a scalar class and ``Literal`` mapping strings; at run
time a subscription with concrete arguments is a checked, callable hint
(:mod:`tcpdsl.tensors.subscription`). Every type is checked, and every stage composed, by
:mod:`tcpdsl.verify.compose`, the same code the mypy plugin runs.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Final, TypeVar

import numpy.typing as npt

from tcpdsl.algebra import Mapping, StructKey
from tcpdsl.errors import LayoutError
from tcpdsl.frames import user_frame
from tcpdsl.numerics.fit import check_fit
from tcpdsl.numerics.flow import Flow, Step
from tcpdsl.numerics.kept import freeze
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.scalars import Scalar, cast
from tcpdsl.pictures import tensor_svg
from tcpdsl.tensors.filled import FLOW_SERIAL, STEP_SERIAL, filled
from tcpdsl.tensors.subscription import Same, Spec, Subscriptable, as_mapping, spec_for
from tcpdsl.verify.families import TensorType
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.stages import STAGES, compose_stage

D = TypeVar("D", bound=Scalar)
Acc = TypeVar("Acc", bound=Scalar)
Storage = TypeVar("Storage", bound=Scalar)
ChipT = TypeVar("ChipT")
ClusterT = TypeVar("ClusterT")
SliceT = TypeVar("SliceT")
LaneT = TypeVar("LaneT")
ElementT = TypeVar("ElementT")
TimeT = TypeVar("TimeT")
PacketT = TypeVar("PacketT")

Array = npt.NDArray[Any]
T = TypeVar("T")

# One object per value for the options a kernel builds afresh on every call (a switch configuration, a
# constant operand's type), so that its stage calls are found by identity (TensorBase._compose).
_INTERNED: dict[object, object] = {}
_INTERNED_LIMIT: Final = 1024


def interned(value: T) -> T:
    """The first object seen equal to ``value`` (a frozen value object, hashable and compared by value)."""
    found = _INTERNED.get(value)
    if found is None:
        if len(_INTERNED) >= _INTERNED_LIMIT:
            _INTERNED.clear()
        _INTERNED[value] = found = value
    return found  # type: ignore[return-value]


def unspecialised(name: str) -> LayoutError:
    return LayoutError(
        name, "Unspecialised", f"a bare {name} has no dtype or layout",
        hint=f"subscribe it first: {name}[tcp.bf16, Chip, Cluster, Slice, ...](...)",
    )


def step_of(
    stage: Stage, spec: Spec, params: object, unit: str | None = None, relu: bool = False, source: Spec | None = None
) -> Step:
    """The step a stage call records: the new position's mapping, dtype and packet count, and the parameters;
    with ``source``, the receiver's type, the layouts before and after it too."""
    return filled(Step, {
        "stage": stage, "mapping": spec.mapping, "dtype": spec.dtype, "params": params, "context": unit,
        "packets": spec.packets, "layout": spec.layout_text, "relu": relu,
        "source": source.layouts if source is not None else (), "layouts": spec.layouts,
    })


def lay_out_logical(spec: Spec, tensor: object, stage: str) -> Tensor:
    """Check ``tensor`` against a source layout and cast it to the dtype."""
    if not isinstance(tensor, Tensor):
        raise LayoutError(
            stage, "NotATensor", f"expected a tcp.Tensor to lay out, got {type(tensor).__name__}",
            hint="wrap the array: tcp.Tensor(array, \"A B\")",
        )
    check_fit(tensor, spec.mapping, stage)
    # The cast is the typed tensor's own copy; frozen, so what is derived from it can be kept.
    return tensor.with_values(freeze(cast(tensor.values, spec.dtypes[0])))


class TensorBase(Subscriptable):
    """What every pipeline tensor has: its type, a logical view, the physical buffer, an explanation."""

    __slots__ = ("_spec",)
    _spec: Spec

    @property
    def dtype(self) -> type[Scalar]:
        """The element type (the accumulator for contraction results)."""
        return self._spec.dtypes[0]

    @property
    def layout(self) -> dict[str, Mapping]:
        """Every layout parameter by name, e.g. ``{"Chip": ..., "Time": ..., "Packet": ...}``."""
        return dict(zip(self._spec.family.layouts, self._spec.layouts))

    @property
    def mapping(self) -> Mapping:
        """The whole physical layout: the layout parameters paired, outermost first."""
        return self._spec.mapping

    def _dims(self) -> tuple[int, ...]:
        return tuple(m.size for m in self._spec.layouts)

    @staticmethod
    def _mappings(stage: Stage, **arguments: object) -> dict[str, Mapping]:
        """A stage call's mapping arguments by name; text resolves in the scope of the user's code that
        made the call. Mappings already (the usual call) are the arguments as given."""
        for value in arguments.values():
            if not isinstance(value, Mapping):
                break
        else:
            return arguments  # type: ignore[return-value]
        row = STAGES[stage]
        ready: dict[str, Mapping] = {}
        for name in row.mappings:
            value = arguments[name]
            if isinstance(value, Mapping):
                ready[name] = value
            elif value is not None or name not in row.optional:  # text to resolve: only then walk out to the user's frame
                frame = user_frame()
                return {n: as_mapping(arguments[n], stage, f"{n}=", frame) for n in row.mappings
                        if not (n in row.optional and arguments[n] is None)}
        # An optional mapping left out (``dm.to_dm`` keeps its Cluster) is the composer's default.
        return ready

    def _compose(
        self, stage: Stage, mappings: dict[str, Mapping], *operands: Spec, **others: Any
    ) -> tuple[Spec, Any]:
        """The result type and derived parameters of a stage call on this tensor (rules: the stage's
        row of the stage table), remembered per type and arguments: first by the arguments' identity,
        then by their structure."""
        spec = self._spec
        held = (*mappings.values(), *operands, *others.values())
        call = (stage, *mappings, *others, *map(id, held))
        found = spec._calls.get(call)
        if found is not None:
            return found[1]
        key = (stage, *mappings, *map(Same, operands), *map(StructKey, mappings.values()))
        if others:
            key += tuple(StructKey(v) if isinstance(v, Mapping) else v for v in others.values())

        def compose() -> tuple[TensorType, Any]:
            return compose_stage(stage, spec.tensor_type, *(operand.tensor_type for operand in operands), **mappings,
                                 **others)

        try:
            hash(key)
        except TypeError:  # an unhashable option (a list where a pair is due): its rule refuses it, nothing is kept
            result, params = compose()
            return spec_for(result), params
        return spec.remember_call(call, held, spec.step(key, compose))

    def _recorded(self, flow: Flow, stage: Stage, mappings: dict[str, Any], operands: tuple[Spec, ...] = (),
                  others: dict[str, Any] | None = None, unit: str | None = None, relu: bool = False,
                  source: bool = False) -> tuple[Spec, Flow]:
        """Compose a stage call on this tensor (:meth:`_compose`) and record its step on ``flow``: the result
        type and ``flow`` one stage further. ``mappings`` are the call's mapping arguments as given: text
        (or a left-out optional) is read by :meth:`_mappings`. ``unit`` names the context a stream begins in, ``relu`` is the
        commit adapter's clamp, and ``source`` keeps this tensor's layouts in the step (:func:`step_of`).

        Every field of the step but its serial is a function of the call, so a call made before with the
        same argument objects records a copy of that step with a fresh serial. The copy and the flow are
        written field by field, as ``tensors.filled`` does (the step is numbered before the flow, as
        ``flow.then(step_of(...))`` numbers them)."""
        spec = self._spec
        if others is None:
            others = {}
        # Looked up by the arguments as given, before any is read: a call is kept only when every mapping
        # argument was a Mapping already (text resolves in the caller's scope), so a hit passes those very
        # Mappings and options, which the entry keeps alive.
        held = (*mappings.values(), *operands, *others.values())
        call = (stage, *mappings, *others, *map(id, held), unit, relu, source)
        found = spec._stamps.get(call)
        if found is None:
            for value in mappings.values():
                if not isinstance(value, Mapping):
                    mappings = self._mappings(stage, **mappings)
                    break
            out, params = self._compose(stage, mappings, *operands, **others)
            step = step_of(stage, out, params, unit, relu, spec if source else None)
            # Kept when the composer kept this very key by identity: then the arguments as given were the
            # Mappings it composed (text's key names the strings), and its options are hashable.
            if call[:-3] in spec._calls:
                spec.remember_stamp(call, held, (out, step))
        else:
            out, template = found[1]
            step = object.__new__(Step)
            fields = step.__dict__
            fields.update(template.__dict__)
            fields["serial"] = STEP_SERIAL()
        extended = object.__new__(Flow)
        fields = extended.__dict__
        fields["root"] = flow.root
        fields["steps"] = (*flow.steps, step)
        fields["cache"] = {}
        fields["serial"] = FLOW_SERIAL()
        return out, extended

    @staticmethod
    def __tcp_build__(spec: Spec, *args: object) -> Any:
        """Calling a subscribed class builds a tensor; contraction results come only from stage methods."""
        raise LayoutError(
            spec.family.name, "NotConstructible", f"a {spec.family.name} is produced by a stage method, not built directly",
            hint="build a CollectTensor or TrfTensor from a tcp.Tensor and call the stages on it",
        )

    def to_tensor(self) -> Tensor:
        raise NotImplementedError

    def physical(self) -> Array:
        """The buffer over the physical layout, padding included, one numpy dimension per layout parameter."""
        raise NotImplementedError

    def explain(self, svg: str | os.PathLike[str] | None = None) -> str:
        """The derived stage parameters as text; with ``svg``, also draw the layout to that file."""
        if svg is not None:
            Path(svg).write_text(tensor_svg(self.layout, title=self._spec.text()))
        return self._describe()

    def _describe(self) -> str:
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"<{self._spec.text()}>"
