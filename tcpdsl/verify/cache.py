"""Memoization of verifier results, failures included.

The type checker runs the same verifier on the same layouts thousands of times. Arguments are
keyed structurally (``Mapping.key``), so no normalization is paid for a cache hit.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Final, ParamSpec, TypeVar

from tcpdsl.algebra import Mapping
from tcpdsl.errors import DtypeError, LayoutError

P = ParamSpec("P")
R = TypeVar("R")

MAX_ENTRIES: Final = 1 << 16
_Failure = LayoutError | DtypeError


def _key(value: object) -> object:
    if isinstance(value, Mapping):
        return ("mapping", value.key)
    if isinstance(value, tuple):
        return tuple(_key(v) for v in value)
    return value


def _fresh(error: _Failure) -> _Failure:
    # A new instance per raise: re-raising one object would pile up tracebacks across hits.
    return type(error)(error.stage, error.rule, error.detail, error.hint)


def memoized(fn: Callable[P, R]) -> Callable[P, R]:
    """Cache ``fn`` on its (hashable) arguments, remembering both results and rule failures."""
    results: dict[object, R] = {}
    failures: dict[object, _Failure] = {}

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        key = (tuple(_key(a) for a in args), tuple(sorted((k, _key(v)) for k, v in kwargs.items())))
        if key in results:
            return results[key]
        failure = failures.get(key)
        if failure is not None:
            raise _fresh(failure)
        if len(results) + len(failures) >= MAX_ENTRIES:
            results.clear()
            failures.clear()
        try:
            value = fn(*args, **kwargs)
        except (LayoutError, DtypeError) as error:
            failures[key] = error
            raise
        results[key] = value
        return value

    return wrapper
