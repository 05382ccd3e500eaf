"""Testing kernels: hypothesis strategies for tensor types, an oracle assertion, and a pytest plugin.

``tcpdsl.testing.inputs(Stream)`` draws inputs a kernel taking ``Stream`` accepts;
``tcpdsl.testing.check_kernel(kernel, x, w)`` fails with the first differing cells when the
kernel disagrees with the oracle; ``pytest --tcpdsl`` collects every ``@tcp.kernel`` as a test
(docs/ci.md).
"""

from __future__ import annotations

from tcpdsl.testing.checks import check_kernel
from tcpdsl.testing.strategies import inputs

__all__ = ["check_kernel", "inputs"]
