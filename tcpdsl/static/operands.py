"""Tensor types as the checker sees them, read into the composer's :class:`TensorType` and written back.

A stage result's type carries its layouts as canonical ``Literal`` texts. A ``ContractTimeTensor``
also carries the Time it had before ``contract_time`` (what ``contract_lane`` needs to size the
accumulator), as an extra attribute of the mypy instance: mypy keeps it through assignments and in
its cache, and it takes no part in type compatibility, so a stored stage keeps what later stages
need without any change to the public type parameters.
"""

from __future__ import annotations

from typing import Final

from mypy.checker import TypeChecker
from mypy.maptype import map_instance_to_supertype
from mypy.types import ExtraAttrs, Instance, LiteralType, Type, TypeVarType, get_proper_type

from tcpdsl.algebra import Mapping
from tcpdsl.errors import TcpError
from tcpdsl.static.literals import type_text
from tcpdsl.static.names import TENSOR_CLASSES, fullname
from tcpdsl.static.phases import instance
from tcpdsl.static.resolve import Env, Unknowable, build
from tcpdsl.static.scalars import scalar_fullname, scalar_name
from tcpdsl.static.texts import literal_text
from tcpdsl.verify.families import GRID, TIME, TYPESTATE, Family, TensorType

# The extra attribute of a ContractTimeTensor instance holding its pre-reduce Time.
PRE_REDUCE_TIME: Final = "__tcpdsl_pre_reduce_time__"


class Unreadable(Exception):
    """Something the plugin cannot read statically (a computed mapping, a layout it cannot resolve)."""


def family_of(typ: Type) -> tuple[Instance, Family] | None:
    """The tensor class a type is, seen through a subclass or a type variable's bound."""
    proper = get_proper_type(typ)
    if isinstance(proper, TypeVarType):
        proper = get_proper_type(proper.upper_bound)
    if not isinstance(proper, Instance):
        return None
    base = next((info for info in proper.type.mro if info.fullname in TENSOR_CLASSES), None)
    if base is None:
        return None
    family = TENSOR_CLASSES[base.fullname]
    proper = map_instance_to_supertype(proper, base)
    # A vector pass position has one parameter more, its stash state, which only checkers read.
    if len(proper.args) not in (len(family.params), len(family.params) + TYPESTATE.get(family, 0)):
        return None
    return proper, family


def operand(typ: Type, env: Env, module: str) -> TensorType | None:
    """A tensor type whose every parameter is concrete, else None (nothing to check)."""
    found = family_of(typ)
    if found is None:
        return None
    proper, family = found
    dtypes = dtype_names(proper, family)
    if dtypes is None:
        return None
    maps: list[Mapping] = []
    for param, arg in zip(family.layouts, proper.args[len(family.dtypes) :]):
        text = literal_text(arg)
        if text is None:
            return None
        maps.append(type_layout(text, param, family, env, module))
    return TensorType(family, dtypes, tuple(maps))


def dtype_names(proper: Instance, family: Family) -> tuple[str, ...] | None:
    names = tuple(scalar_name(arg) for arg in proper.args[: len(family.dtypes)])
    return None if any(n is None for n in names) else tuple(n for n in names if n is not None)


def known_grid(typ: Type, env: Env, module: str) -> tuple[Mapping | None, ...]:
    """The Chip, Cluster and Slice of a tensor type, each None where it is not concrete."""
    found = family_of(typ)
    if found is None:
        return (None,) * len(GRID)
    proper, family = found
    grid: list[Mapping | None] = []
    for param in GRID:
        text = literal_text(proper.args[family.params.index(param)])
        try:
            grid.append(type_layout(text, param, family, env, module) if text is not None else None)
        except Unreadable:
            grid.append(None)
    return tuple(grid)


def type_layout(text: str, param: str, family: Family, env: Env, module: str) -> Mapping:
    """The mapping of a layout parameter's text, its axes found where the type could have come from."""
    try:
        return build(text, module, env)
    except (TcpError, Unknowable) as error:
        # The text was valid where it was written; only its axes are not visible from here.
        raise Unreadable(f"the {param} layout {text!r} of this {family.name} names axes not known in this module") from error


def pre_reduce_time(typ: Type) -> str | None:
    """The Time a ContractTimeTensor type had before ``contract_time``, when the type still carries it."""
    proper = get_proper_type(typ)
    extra = proper.extra_attrs if isinstance(proper, Instance) else None
    found = get_proper_type(extra.attrs.get(PRE_REDUCE_TIME)) if extra is not None else None
    return found.value if isinstance(found, LiteralType) and isinstance(found.value, str) else None


def result_type(chk: TypeChecker, t: TensorType, pre_reduce: Mapping | None = None,
                typestate: list[Type] | None = None) -> Instance:
    """The checker's type of a composed tensor type: scalar classes and canonical ``Literal`` layouts, then
    the ``typestate`` parameters the declared result carries (a vector pass position's stash state)."""
    str_type = chk.named_type("builtins.str")
    args: list[Type] = [instance(chk.modules, scalar_fullname(d), []) for d in t.dtypes]
    args += [LiteralType(type_text(m), str_type) for m in t.layouts]
    args += typestate or []
    out = instance(chk.modules, fullname(t.family), args)
    if t.family is TIME and pre_reduce is not None:
        out.extra_attrs = ExtraAttrs({PRE_REDUCE_TIME: LiteralType(type_text(pre_reduce), str_type)}, {PRE_REDUCE_TIME})
    return out
