"""The switch engine's configurations (docs/stage-rules.md §5.1).

A named configuration splits the input Slice into ``[slice2, slice1, slice0]`` (outer to inner)
and, for some, the input Time; ``CustomBroadcast`` names only the ring and lets the layouts say
the rest. Each is a small frozen value, so verifier results can be cached on it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import ClassVar, Final, Union

from tcpdsl.errors import LayoutError
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.SWITCH


class _Config:
    """Checks that every field is a plain int; the rules on their values run in the verifier."""

    name: ClassVar[str]

    def __post_init__(self) -> None:
        for field in fields(self):  # type: ignore[arg-type]
            value = getattr(self, field.name)
            if type(value) is not int:
                raise LayoutError(
                    STAGE,
                    "ConfigField",
                    f"switch: {self.name}.{field.name} must be an int, got {value!r}",
                    hint=f"pass {field.name} as a positive power of two, e.g. {self.name}({field.name}=4, ...)",
                )

    @property
    def text(self) -> str:
        args = ", ".join(f"{f.name}={getattr(self, f.name)}" for f in fields(self))  # type: ignore[arg-type]
        return f"{self.name}({args})"


@dataclass(frozen=True, kw_only=True)
class Forwarding(_Config):
    """Every slice keeps its own data: Slice and Time unchanged, ring size 1."""

    name: ClassVar[str] = "Forwarding"


@dataclass(frozen=True, kw_only=True)
class Broadcast01(_Config):
    """``[s2, s1, s0] / [t1, t0]`` becomes ``[s2, X, Y] / [t1, s1, t0, s0]`` (``|t0| = time0``)."""

    name: ClassVar[str] = "Broadcast01"
    slice1: int
    slice0: int
    time0: int


@dataclass(frozen=True, kw_only=True)
class Broadcast1(_Config):
    """``[s2, s1, s0] / t0`` becomes ``[s2, X, s0] / [t0, s1]``."""

    name: ClassVar[str] = "Broadcast1"
    slice1: int
    slice0: int


@dataclass(frozen=True, kw_only=True)
class Transpose(_Config):
    """``[s2, s1, s0]`` becomes ``[s2, s0, s1]``; Time unchanged."""

    name: ClassVar[str] = "Transpose"
    slice1: int
    slice0: int


@dataclass(frozen=True, kw_only=True)
class InterTranspose(_Config):
    """``[s2, s1, s0] / [t2, t1, t0]`` becomes ``[s2, t1, s0] / [t2, t0, s1]`` (``|t1| = slice1``, ``|t0| = time0``)."""

    name: ClassVar[str] = "InterTranspose"
    slice1: int
    slice0: int
    time0: int


@dataclass(frozen=True, kw_only=True)
class TransposedBroadcast1(_Config):
    """``[s2, s1, s0] / t0`` becomes ``[s2, Y, s1] / [t0, s0]``."""

    name: ClassVar[str] = "TransposedBroadcast1"
    slice1: int
    slice0: int


@dataclass(frozen=True, kw_only=True)
class CustomBroadcast(_Config):
    """Any routing the custom rules accept; ``ring_size`` must equal the one the layouts imply."""

    name: ClassVar[str] = "CustomBroadcast"
    ring_size: int


NamedConfig = Union[Forwarding, Broadcast01, Broadcast1, Transpose, InterTranspose, TransposedBroadcast1]
SwitchConfig = Union[NamedConfig, CustomBroadcast]
CONFIGS: Final = (Forwarding, Broadcast01, Broadcast1, Transpose, InterTranspose, TransposedBroadcast1, CustomBroadcast)
