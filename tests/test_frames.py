"""Names written by the user resolve in the user's frame, however many tcpdsl frames lie between."""

from __future__ import annotations

import sys
from types import FrameType

import pytest

from tcpdsl.algebra import Mapping, axis, m
from tcpdsl.errors import LayoutError
from tcpdsl.frames import user_frame


def _inside_tcpdsl(source: str, name: str) -> object:
    """A function compiled as if it were defined in a tcpdsl module."""
    scope: dict[str, object] = {"__name__": "tcpdsl.helpers", "m": m, "axis": axis, "user_frame": user_frame}
    exec(compile(source, "<tcpdsl.helpers>", "exec"), scope)
    return scope[name]


def test_user_frame_skips_every_tcpdsl_frame() -> None:
    outer = _inside_tcpdsl("def outer(f):\n    return f()\n", "outer")
    inner = _inside_tcpdsl("def inner():\n    return user_frame()\n", "inner")
    found: FrameType = outer(inner)  # type: ignore[operator]
    assert found is sys._getframe()


def test_user_frame_of_user_code_is_its_caller() -> None:
    def helper() -> FrameType:
        return user_frame()

    assert helper().f_code is helper.__code__


def test_mapping_text_in_a_tcpdsl_helper_resolves_in_the_user_scope() -> None:
    written = _inside_tcpdsl("def layout(text):\n    return m[text]\n", "layout")
    Q = axis("Q", 4)  # noqa: N806  (an axis is named as it is written in mappings)
    found = written("Q")  # type: ignore[operator]
    assert isinstance(found, Mapping) and found.size == Q.size


def test_an_axis_only_the_helper_sees_is_not_the_users() -> None:
    written = _inside_tcpdsl("def layout(text):\n    Hidden = axis('Hidden', 8)\n    return m[text]\n", "layout")
    with pytest.raises(LayoutError) as caught:
        written("Hidden")  # type: ignore[operator]
    assert caught.value.rule == "UnknownAxis"
