"""Run-time checking of kernels against their annotations, through beartype.

``@tcp.kernel`` checks every argument and the result on each call. A tensor annotation such as
``CollectTensor[bf16, Chip, Cluster, Slice, m["A"], m["B"]]`` is a specialised class whose
``isinstance`` compares dtype and layouts, and whose explanation (which parameter differs, declared
against actual, in canonical text) beartype appends to its violation message.
"""

from __future__ import annotations

import functools
import inspect
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, TypeVar

from beartype import BeartypeConf, beartype
from beartype.claw import beartype_package
from beartype.roar import BeartypeException

from tcpdsl.errors import TcpError
from tcpdsl.frames import user_frame
from tcpdsl.tensors.replay import MODE, Replays

F = TypeVar("F", bound=Callable[..., Any])

KERNEL_ATTRIBUTE: Final = "__tcp_kernel__"


class HintViolation(TcpError, TypeError):
    """An argument, result or annotated local whose dtype or layout differs from its declared type."""


# No colour codes: the messages end up in logs and pinned test expectations. Violations raise a
# TcpError like every other deliberate tcpdsl error.
CONF: Final = BeartypeConf(is_color=False, violation_type=HintViolation)


@dataclass(frozen=True)
class KernelInfo:
    """What a runner needs to call a kernel: its name, signature and evaluated annotations."""

    name: str
    qualname: str
    module: str
    signature: inspect.Signature
    hints: dict[str, Any]
    function: Callable[..., Any]


class KernelDefinitionError(TcpError, TypeError):
    """A ``@tcp.kernel`` applied to something that is not a function with resolvable annotations."""


def kernel(fn: F) -> F:
    """Check ``fn``'s arguments and result against their annotations on every call (via beartype); inside
    ``tcp.replay()`` a call whose argument signature was checked and recorded before is replayed (docs/replay.md)."""
    if not inspect.isfunction(fn):
        raise KernelDefinitionError(f"@tcp.kernel decorates a function, not a {type(fn).__name__}")
    try:
        hints = typing.get_type_hints(fn)
    except TcpError:
        raise
    except Exception as error:  # a broken annotation: name errors and the like
        raise KernelDefinitionError(f"cannot resolve the annotations of {fn.__qualname__}: {error}") from error
    try:
        checked = beartype(conf=CONF)(fn)
    except BeartypeException as error:  # an annotation that is no type: a mapping, a number, ...
        raise KernelDefinitionError(
            f"cannot check the annotations of {fn.__qualname__}: {str(error).splitlines()[0]}\n"
            "  hint: annotate tensors with tensor types such as CollectTensor[bf16, ...], not with bare mappings"
        ) from error
    replays = Replays(fn.__qualname__, checked)

    @functools.wraps(checked)
    def call(*args: Any, **kwargs: Any) -> Any:
        log = MODE.get()
        if log is None:  # not inside tcp.replay(): the usual call
            return checked(*args, **kwargs)
        return replays(log, args, kwargs)

    info = KernelInfo(fn.__name__, fn.__qualname__, fn.__module__, inspect.signature(fn), hints, fn)
    setattr(call, KERNEL_ATTRIBUTE, info)
    return call  # type: ignore[return-value]


def kernel_info(fn: object) -> KernelInfo | None:
    """The recorded signature of a ``@tcp.kernel`` function, or None for anything else."""
    info = getattr(fn, KERNEL_ATTRIBUTE, None)
    return info if isinstance(info, KernelInfo) else None


def install(package: str | None = None) -> None:
    """Check every annotated function and annotated local of a package at run time.

    Turns on ``beartype.claw`` for ``package`` (by default the calling module's package), so modules
    imported *afterwards* are checked, including annotated assignments such as
    ``z: CollectTensor[...] = x``. Call it from the package's ``__init__``.
    """
    if package is None:
        caller = user_frame().f_globals
        package = caller.get("__package__") or caller.get("__name__")
    if not isinstance(package, str) or not package or package == "__main__":
        raise KernelDefinitionError("tcp.install() needs a package name when called outside a package")
    beartype_package(package, conf=CONF)
