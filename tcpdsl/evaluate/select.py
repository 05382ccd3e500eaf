"""Choosing the evaluator: ``with tcp.evaluator("simulate"): ...``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import tcpdsl.evaluate  # noqa: F401  (registers the evaluators before one is selected)
from tcpdsl.evaluate.backend import Evaluator, using


@contextmanager
def evaluator(name: str) -> Iterator[Evaluator]:
    """Run every contraction inside the block with the evaluator ``name`` ("fused" or "simulate").

    An unknown name raises a ``TcpError`` listing the registered evaluators.
    """
    with using(name) as chosen:
        yield chosen
