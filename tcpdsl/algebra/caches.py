"""The algebra's memos, in one registry: each is registered where it is defined, and
:func:`clear_caches` forgets them all (for cold-start measurements and tests)."""

from __future__ import annotations

from collections.abc import Callable
from functools import _lru_cache_wrapper, lru_cache
from typing import TypeVar

T = TypeVar("T")

_clears: list[Callable[[], None]] = []


def memo(maxsize: int) -> Callable[[Callable[..., T]], _lru_cache_wrapper[T]]:
    """``lru_cache(maxsize)``, registered with :func:`clear_caches`."""

    def wrap(function: Callable[..., T]) -> _lru_cache_wrapper[T]:
        cached = lru_cache(maxsize=maxsize)(function)
        _clears.append(cached.cache_clear)
        return cached

    return wrap


def register(clear: Callable[[], None]) -> None:
    """Register the ``clear`` of a memo that is no ``lru_cache``."""
    _clears.append(clear)


def clear_caches() -> None:
    """Forget every cached result of the algebra."""
    for clear in _clears:
        clear()
