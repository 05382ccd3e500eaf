"""``tcpdsl.testing.check_kernel``: a kernel on given inputs, compared with the oracle."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tcpdsl.testing.cells import mismatch_report
from tcpdsl.testing.kernels import compare


def check_kernel(kernel: Callable[..., Any], *inputs: object) -> None:
    """Run ``kernel(*inputs)`` and compare its result with the oracle, as ``tcpdsl run`` does.

    Raises an ``AssertionError`` naming the first differing cells when the result is outside the
    oracle's bound. A kernel that refuses its inputs raises its own ``tcp.TcpError`` (a layout the
    hardware cannot run is a bug of the kernel, not a wrong number).
    """
    verdict = compare(kernel(*inputs), inputs)
    if not verdict.passed:
        name = getattr(kernel, "__qualname__", repr(kernel))
        raise AssertionError(f"{name}: {mismatch_report(verdict)}")
