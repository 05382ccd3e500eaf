"""What the testing tools need to know of kernels and tensor types, in one place.

The pytest plugin, the hypothesis strategies and :func:`check_kernel` build on ``tcp.try_kernel``
and on the few facts gathered here: which values of a module are kernels, which digits a tensor
type holds, the random inputs ``tcpdsl run`` gives a kernel, and how a result compares with the
oracle cell by cell.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Sequence
from typing import Any

from tcpdsl.harness.oracle import OracleCheck, check
from tcpdsl.evaluate.select import evaluator as using
import numpy as np

from tcpdsl.algebra import Digit
from tcpdsl.tensors.checking import kernel_info
from tcpdsl.tensors.device import Device, Topology
from tcpdsl.harness.kernel_spec import TensorParam, _param, describe, kernels_in, random_case
from tcpdsl.harness.run import compare_outputs
from tcpdsl.numerics.logical import Tensor
from tcpdsl.numerics.scalars import cast

__all__ = ["OracleCheck", "TensorParam", "compare", "defines_kernel", "kernels_of", "lay_out", "rerun", "tensor_param"]


def kernels_of(module: types.ModuleType) -> list[tuple[str, Callable[..., Any]]]:
    """The ``@tcp.kernel`` functions defined in ``module`` (not imported into it), in definition order."""
    return [(spec.name, spec.function) for spec in kernels_in(module)]


def defines_kernel(module: types.ModuleType, value: object) -> bool:
    """Whether ``value`` is a ``@tcp.kernel`` function defined in ``module`` (not imported into it)."""
    info = kernel_info(value)
    return info is not None and info.module == module.__name__


def tensor_param(tensor_type: object) -> TensorParam:
    """The dtype and the digits a ``CollectTensor[...]`` or ``TrfTensor[...]`` type holds.

    Anything else raises the runner's ``KernelSpecError`` (a ``TcpError``) saying what it needs.
    """
    return _param("value", tensor_type, "tcpdsl.testing.inputs")


def lay_out(param: TensorParam, values: np.ndarray[Any, Any], tiles: tuple[tuple[Digit, int], ...] = ()) -> object:
    """``values`` (one dimension per held term), cast to the dtype and laid out as the parameter's
    type, on a device of its own; ``tiles`` are digits the tensor fixes, as a tile does."""
    tensor = Tensor.of_terms(cast(values, param.dtype), param.terms, tiles)
    device = Device(Topology(chips=param.spec.layout("Chip").size))
    return param.build(tensor, device.main)


def compare(result: object, inputs: Sequence[object] = ()) -> OracleCheck:
    """``result`` against the oracle; a result that is no contraction is compared with its one input."""
    logical = [value.to_tensor() for value in inputs if hasattr(value, "to_tensor")]
    return check(result, [t for t in logical if isinstance(t, Tensor)])


def rerun(fn: Callable[..., Any], seed: int, evaluator: str) -> OracleCheck:
    """The comparison ``tcp.try_kernel(fn, seed=seed, evaluator=evaluator)`` made, made again: of the first
    output that differs from the oracle (of the result when none does)."""
    spec = describe(fn)
    with using(evaluator):
        _, checks = compare_outputs(spec, random_case(spec, seed))
    return next((c for _, c in checks if not c.passed), checks[0][1])
