"""Records of the numerics layer built without their ``__init__``: a stage call builds a few on every call.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``, which costs
more than the rest of a stage call. :func:`filled` writes the same fields into a new instance's
``__dict__`` at once, the same shortcut ``Chain.with_stage`` takes, and is tested against each class's
constructor.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import MISSING, fields, is_dataclass
from typing import Any, Final, TypeVar

from tcpdsl.numerics.flow import Flow, Step

T = TypeVar("T")

# Per class: the fields without a default factory, the fields with a default value, and the fields with a
# default factory.
_Plan = tuple[frozenset[str], dict[str, object], tuple[tuple[str, Callable[[], object]], ...]]
_plans: dict[type, _Plan] = {}


def filled(cls: type[T], values: dict[str, object]) -> T:
    """A new ``cls`` with ``values`` for its fields and every field left out at its default, as
    ``cls(**values)`` would build it (``values`` is a dict, not keywords: keywords cost a second dict)."""
    plan = _plans.get(cls)
    if plan is None:
        plan = _plans[cls] = _plan(cls)
    plain, defaults, factories = plan
    out: Any = object.__new__(cls)
    state = out.__dict__
    if not values.keys() >= plain:  # a field left out takes its default
        state.update(defaults)
    state.update(values)
    for name, factory in factories:
        if name not in values:
            state[name] = factory()
    return out  # type: ignore[no-any-return]


def _serial(cls: type) -> Callable[[], int]:
    """The default factory of ``cls``'s ``serial`` field: the count steps and flows are numbered by."""
    factory = next(f.default_factory for f in fields(cls) if f.name == "serial")
    assert callable(factory)
    return factory


# What a stage call on a seen path numbers the step and the flow it builds field by field with
# (TensorBase._recorded): the generic path's plan lookup and loops cost as much as the constructor
# on records this small.
STEP_SERIAL: Final = _serial(Step)
FLOW_SERIAL: Final = _serial(Flow)


def _plan(cls: type) -> _Plan:
    # Only a plain dataclass: a __post_init__ or slots would make the shortcut differ from the constructor.
    if not is_dataclass(cls) or hasattr(cls, "__post_init__") or "__slots__" in vars(cls):
        raise TypeError(f"{cls.__name__} is not a plain dataclass")
    defaults = {f.name: f.default for f in fields(cls) if f.default is not MISSING}
    factories = tuple((f.name, f.default_factory) for f in fields(cls) if callable(f.default_factory))
    plain = frozenset(f.name for f in fields(cls)) - {name for name, _ in factories}
    return plain, defaults, factories
