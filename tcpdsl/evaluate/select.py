"""Choosing the evaluator: ``with tcp.evaluator("simulate"): ...``."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from tcpdsl.evaluate.backend import Evaluator, using


@contextmanager
def evaluator(name: str) -> Iterator[Evaluator]:
    """Run every contraction inside the block with the evaluator ``name`` ("fused" or "simulate").

    An unknown name raises a ``TcpError`` listing the known evaluators.
    """
    with using(name) as chosen:
        yield chosen
