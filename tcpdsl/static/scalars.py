"""Scalar classes as mypy types: reading a dtype name from a type argument, and back."""

from __future__ import annotations

from mypy.types import Instance, Type, get_proper_type

from tcpdsl.static.names import SCALAR_BASE, SCALARS_MODULE


def scalar_name(typ: Type) -> str | None:
    """The verifier dtype name of a scalar class type (``bf16`` for ``tcp.bf16``), else None."""
    proper = get_proper_type(typ)
    if isinstance(proper, Instance) and proper.type.has_base(SCALAR_BASE) and proper.type.fullname != SCALAR_BASE:
        return proper.type.name
    return None


def scalar_fullname(name: str) -> str:
    return f"{SCALARS_MODULE}.{name}"
