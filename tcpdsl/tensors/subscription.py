"""Run-time subscription of the tensor classes: ``CollectTensor[bf16, Chip, ...]`` as a checkable hint.

Subscribing a tensor class with concrete arguments (a scalar class per dtype parameter and a
mapping per layout parameter) checks the constructor constraints at once and returns a cached
*specialised class*. Its metaclass answers ``isinstance`` by comparing dtype and layouts, and
explains a mismatch through ``__instancecheck_str__``, which beartype appends to its violation
message. Calling the specialised class builds a tensor of exactly that type.
"""

from __future__ import annotations

import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar, Final, TypeVar

from tcpdsl.algebra import Mapping, Symbol, Digit, logical_terms, pairs, parse
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.frames import user_frame
from tcpdsl.numerics.flow import Step
from tcpdsl.numerics.scalars import Scalar, scalar
from tcpdsl.verify.families import Family, TensorType, check_type


P = TypeVar("P")

# Distinct stage calls remembered per type; more are computed each time (mapping texts may be generated).
_STEPS_PER_SPEC: Final = 256


@dataclass(frozen=True)
class Spec:
    """A concrete tensor type at run time: the composer's :class:`TensorType` and its scalar classes.

    What depends only on the type is computed once per spec: the paired mapping, its logical
    terms, and the stage calls made from it (:meth:`step`).
    """

    tensor_type: TensorType
    dtypes: tuple[type[Scalar], ...]
    _steps: dict[tuple[object, ...], tuple[Spec, object]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    # The same answers by the identity of the arguments (see :meth:`remember_call`).
    _calls: dict[tuple[object, ...], tuple[tuple[object, ...], tuple[Spec, object]]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )
    # The stage calls recorded on a flow from this type, by the identity of their arguments: the result
    # type and the step (TensorBase._recorded).
    _stamps: dict[tuple[object, ...], tuple[tuple[object, ...], tuple[Spec, Step]]] = field(
        default_factory=dict, init=False, compare=False, hash=False, repr=False
    )

    @cached_property
    def family(self) -> Family:
        return self.tensor_type.family

    @cached_property
    def layouts(self) -> tuple[Mapping, ...]:
        return self.tensor_type.layouts

    @cached_property
    def dtype(self) -> str:
        """The name of the element type (the accumulator for contraction results)."""
        return self.tensor_type.dtype

    def step(self, key: tuple[object, ...], compose: Callable[[], tuple[TensorType, P]]) -> tuple[Spec, P]:
        """The result type of a stage called on this type and the parameters its verifier derived.

        ``key`` names the stage and its arguments (mappings as :class:`StructKey`, other types as
        :class:`Same`); ``compose`` computes them the first time. The composer is a pure function of
        its arguments, so the answer is remembered per type; a refusal is not, and is raised anew.
        """
        found = self._steps.get(key)
        if found is None:
            result, params = compose()
            found = (spec_for(result), params)
            if len(self._steps) < _STEPS_PER_SPEC:
                self._steps[key] = found
        return found  # type: ignore[return-value]

    def remember_call(self, call: tuple[object, ...], held: tuple[object, ...], found: tuple[Spec, P]) -> tuple[Spec, P]:
        """Remember :meth:`step`'s answer under ``call``, a key naming the arguments ``held`` by their ``id``.

        The entry keeps ``held`` alive, so while it is remembered no other object can take one of those
        ids: a later call with the same key passes the very same objects, and gets the answer
        :meth:`step` would give them without building its structural key.
        """
        if len(self._calls) >= _STEPS_PER_SPEC:
            self._calls.clear()
        self._calls[call] = (held, found)
        return found

    def remember_stamp(self, call: tuple[object, ...], held: tuple[object, ...], found: tuple[Spec, Step]) -> None:
        """Keep a recorded call's result type and step under ``call``, a key naming the arguments ``held``
        by their ``id`` (kept alive with it, as in :meth:`remember_call`)."""
        if len(self._stamps) >= _STEPS_PER_SPEC:
            self._stamps.clear()
        self._stamps[call] = (held, found)

    @cached_property
    def mapping(self) -> Mapping:
        """The whole physical layout: the layout parameters paired, outermost first."""
        return pairs(list(self.layouts))

    @cached_property
    def packets(self) -> int:
        """How many packets a stream position of this type passes: its Time size (1 without a Time)."""
        tt = self.tensor_type
        return tt.layout("Time").size if "Time" in tt.family.layouts else 1

    @cached_property
    def element(self) -> int:
        """The size of a memory type's Element: the cells each slice holds."""
        return self.tensor_type.layout("Element").size

    @cached_property
    def layout_text(self) -> str:
        """The layouts past the grid as reports show them, ``"Time ... | Packet ..."``."""
        tt = self.tensor_type
        return " | ".join(f"{name} {m}" for name, m in zip(tt.family.layouts[3:], tt.layouts[3:]))

    @cached_property
    def terms(self) -> tuple[Digit, ...]:
        """The dimensions of the logical view of data of this type (:func:`logical_terms`)."""
        return logical_terms(self.mapping)

    def layout(self, name: str) -> Mapping:
        return self.tensor_type.layout(name)

    def text(self) -> str:
        return self.tensor_type.text()


class Same:
    """A key part that stands for one object, compared by identity (the key keeps it alive)."""

    __slots__ = ("value",)

    def __init__(self, value: object) -> None:
        self.value = value

    def __hash__(self) -> int:
        return id(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Same) and other.value is self.value


# One spec per composed type, by the type's id (each entry keeps its type alive), so that every path to a
# type shares its remembered stage calls and a type check is an identity test.
_SPECS: dict[int, Spec] = {}
_SPECS_LIMIT: Final = 4096


def spec_for(tensor_type: TensorType) -> Spec:
    """The run-time spec of a composed type (its dtype names as scalar classes)."""
    found = _SPECS.get(id(tensor_type))
    if found is None:
        found = Spec(tensor_type, tuple(scalar(d) for d in tensor_type.dtypes))
        if len(_SPECS) >= _SPECS_LIMIT:
            _SPECS.clear()
        _SPECS[id(tensor_type)] = found
    return found


class Specialised(type):
    """Metaclass of the specialised tensor classes returned by subscription."""

    __tcp_spec__: Spec

    def __instancecheck__(cls, instance: object) -> bool:
        expected = cls.__tcp_spec__
        if isinstance(instance, Subscriptable) and getattr(instance, "_spec", None) is expected:
            return True  # the very spec: one composed type (spec_for)
        return _mismatch(expected, instance) is None

    def __instancecheck_str__(cls, instance: object) -> str:
        return _mismatch(cls.__tcp_spec__, instance) or ""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if kwargs:
            name = cls.__tcp_spec__.family.name
            raise LayoutError(
                name, "Arguments", f"{name}[...](...) takes its arguments by position, got keyword {', '.join(kwargs)}",
                hint=f"write {name}[...](dev.main, tensor)" if name == "CollectTensor" else f"write {name}[...](tensor)",
            )
        return cls.__tcp_build__(cls.__tcp_spec__, *args)  # type: ignore[attr-defined]

    def __repr__(cls) -> str:
        return cls.__tcp_spec__.text()


def spec_of(instance: object) -> Spec | None:
    """The concrete type of a tensor instance (None for anything else)."""
    found = getattr(type(instance), "__tcp_family__", None)
    if not isinstance(found, Family):
        return None
    spec = getattr(instance, "_spec", None)
    return spec if isinstance(spec, Spec) else None


def _mismatch(expected: Spec, instance: object) -> str | None:
    actual = spec_of(instance)
    if actual is not None and actual.tensor_type is expected.tensor_type and actual.dtypes == expected.dtypes:
        return None  # one composed type: the composer returns the same object for the same type
    family = expected.family
    if actual is None:
        return f"it is not a {family.name} at all (got {type(instance).__name__})"
    if actual.family is not family:
        return f"it is a {actual.family.name}, not a {family.name}"
    for name, want, got in zip(family.params, expected.dtypes, actual.dtypes):
        if want is not got:
            return f"its dtype {name} is {got.name}, but the declared {name} is {want.name}"
    for name, want_m, got_m in zip(family.layouts, expected.layouts, actual.layouts):
        if want_m != got_m:
            found = f'its {name} layout m["{got_m}"] differs from the declared m["{want_m}"]'
            if str(want_m) == str(got_m):  # one text, two meanings: an axis declared twice with two sizes
                found += f" (axis sizes {_sizes(got_m)}, declared {_sizes(want_m)})"
            return found
    return None


def _sizes(mapping: Mapping) -> str:
    return ", ".join(f"{name}={size}" for name, size in mapping.axis_sizes().items())


_SPECIALISED: dict[tuple[object, ...], type] = {}
_GENERIC_MARKERS: Final = (typing.TypeVar, typing.ForwardRef)


def _is_typing_form(value: object) -> bool:
    if isinstance(value, _GENERIC_MARKERS) or value is Any:
        return True
    return type(value).__module__ == "typing" and typing.get_origin(value) is not typing.Literal


def _literal_text(value: object) -> str | None:
    if typing.get_origin(value) is typing.Literal:
        args = typing.get_args(value)
        if len(args) == 1 and isinstance(args[0], str):
            return args[0]
    return None


def scope_sizes(frame: FrameType) -> tuple[dict[str, int], dict[str, Mapping | int]]:
    """Axis sizes and escape values visible in ``frame`` (locals shadow globals)."""
    names = {**frame.f_globals, **frame.f_locals}
    sizes = {k: v.n for k, v in names.items() if isinstance(v, Symbol) and v.name == k}
    env: dict[str, Mapping | int] = {
        k: v for k, v in names.items() if isinstance(v, Mapping) or (isinstance(v, int) and not isinstance(v, bool))
    }
    return sizes, env


def as_mapping(value: object, stage: str, what: str, frame: FrameType) -> Mapping:
    """A mapping argument: a ``Mapping``, or text parsed with the axes visible in ``frame``."""
    if isinstance(value, Mapping):
        return value
    text = value if isinstance(value, str) else _literal_text(value)
    if text is not None:
        sizes, env = scope_sizes(frame)
        return parse(text, sizes, env)
    raise LayoutError(
        stage,
        "NotAMapping",
        f"{what} must be a mapping such as m[\"A, B / 16\"], got {type(value).__name__} {value!r}",
        hint="write the layout with m[\"...\"] or a module-level alias of one",
    )


def subscribe(cls: type, params: object) -> object:
    """``cls[params]``: a specialised class for concrete arguments; a ``Generic`` alias for type variables."""
    frame = user_frame()
    family: Family | None = getattr(cls, "__tcp_family__", None)
    args = params if isinstance(params, tuple) else (params,)
    generic = super(Subscriptable, cls).__class_getitem__  # type: ignore[misc]
    if family is None:
        return generic(args)  # a base class that only checkers subscribe (a vector pass method's mixin)
    typed = args
    # Trailing parameters only checkers read (a vector pass's stash state) may be given or left out.
    extra: int = getattr(cls, "__tcp_typestate__", 0)
    if extra and len(args) == len(family.params) + extra:
        args = args[: len(family.params)]
    if len(args) != len(family.params):
        raise LayoutError(
            family.name,
            "TypeArguments",
            f"{family.name} takes {len(family.params)} type arguments [{', '.join(family.params)}], got {len(args)}",
        )
    if any(_is_typing_form(a) for a in typed):
        return generic(tuple(_as_type_argument(a) for a in typed))
    n_dtypes = len(family.dtypes)
    dtypes = tuple(_as_dtype(family, name, a) for name, a in zip(family.dtypes, args[:n_dtypes]))
    layouts = tuple(
        as_mapping(a, family.name, f"the {name} argument", frame) for name, a in zip(family.layouts, args[n_dtypes:])
    )
    key = (family.name, dtypes, layouts)
    found = _SPECIALISED.get(key)
    if found is None:
        tensor_type = check_type(family, tuple(d.name for d in dtypes), layouts)
        spec = spec_for(tensor_type)
        if spec.dtypes != dtypes:  # scalar classes other than the table's own
            spec = Spec(tensor_type, dtypes)
        found = Specialised(
            family.name,
            (cls,),
            {"__tcp_spec__": spec, "__qualname__": spec.text(), "__module__": "tcpdsl", "__slots__": ()},
        )
        _SPECIALISED[key] = found
    return found


def _as_type_argument(value: object) -> object:
    """What ``Generic`` accepts in place of a run-time mapping: its canonical text as a Literal."""
    if isinstance(value, Mapping):
        return typing.Literal[str(value)]
    if isinstance(value, str):
        return typing.Literal[value]
    return value


def _as_dtype(family: Family, name: str, value: object) -> type[Scalar]:
    if isinstance(value, type) and issubclass(value, Scalar) and value is not Scalar:
        return value
    if isinstance(value, str):
        return scalar(value)
    raise DtypeError(
        family.name,
        "NotADtype",
        f"the {name} argument of {family.name} must be a scalar type such as tcp.bf16, got {value!r}",
    )


def dtype_name(stage: str, value: object) -> str:
    """The dtype name of a stage's target dtype argument (``fetch_cast(tcp.f32)``, ``cast(tcp.bf16, ...)``)."""
    if isinstance(value, type) and issubclass(value, Scalar) and value is not Scalar:
        return value.name
    raise DtypeError(
        stage, "NotADtype", f"{stage} takes a scalar type such as tcp.f32 first, got {value!r}",
        hint=f"write {stage}(tcp.f32, ...)",
    )


class Subscriptable:
    """Base of the tensor classes: records the family that subscription specialises."""

    __tcp_family__: ClassVar[Family]
    __slots__ = ()

    if not TYPE_CHECKING:
        __class_getitem__ = classmethod(subscribe)
