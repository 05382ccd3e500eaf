"""``tcp.Tensor(array, axes)``: the names of a literal text or tuple, checked statically with the runtime's rules.

The runtime finds a name given as text where the call is written (the function's locals, then the
module's globals); the plugin reads the same scopes and reports the runtime's error at the text. Axes
passed as objects carry their own sizes, so they need not be bound to a variable of their name.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import tcpdsl as tcp
from static_corpus.support import corpus_report  # noqa: F401  (the corpus mypy run, as a fixture)
from test_static_plugin import cache, check, line_of  # noqa: F401  (cache: the plugin tests' fixture)
from tcpdsl.errors import LayoutError
from tcpdsl.verify.tensor_axes import named_axes

Q = tcp.axis("Q", 4)
R = tcp.axis("R", 2)

BODY = '''
import numpy as np
import tcpdsl as tcp
from tcpdsl import m

A = tcp.axis("A", 4)
B = tcp.axis("B", 2)
Tile = m["A, B"]
x = np.zeros((4, 2))

ok_text = tcp.Tensor(x, "A B")
ok_objects = tcp.Tensor(x, (A, B))
ok_mixed = tcp.Tensor(x, ["A", B])
ok_sizes = tcp.Tensor(x, "A K", sizes={"K": 2})
ok_mapping = tcp.Tensor(x, m["A, B"])
unknown = tcp.Tensor(x, "A K")
alias = tcp.Tensor(x, "Tile")
keyword = tcp.Tensor(x, axes="K B")
bad_name = tcp.Tensor(x, "A b")
twice = tcp.Tensor(x, (A, "A"))


def local(n: int, sizes: dict[str, int]) -> None:
    K = tcp.axis("K", 2)
    N = tcp.axis("N", n)
    tcp.Tensor(x, "A K")
    tcp.Tensor(x, "N K")
    tcp.Tensor(x, "A Z", sizes=sizes)
    tcp.Tensor(x, "A Z")
'''

UNKNOWN = "[Tensor] UnknownAxis: axis {} is not declared in the calling module"


def test_tensor_axes_are_checked_where_written(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    found = check(tmp_path, cache, {"logical": BODY})
    errors = sorted((d.line, d.message) for d in found if d.severity == "error")
    assert errors == [
        (line_of(BODY, "unknown ="), UNKNOWN.format("K")),
        (line_of(BODY, "alias ="), UNKNOWN.format("Tile")),  # an alias is not an axis
        (line_of(BODY, "keyword ="), UNKNOWN.format("K")),
        (line_of(BODY, "bad_name ="), "[Tensor] AxisNames: 'b' is not an axis name"),
        (line_of(BODY, "twice ="), "[Tensor] DuplicateAxis: axes A A name an axis twice"),
        (line_of(BODY, 'tcp.Tensor(x, "A Z")'), UNKNOWN.format("Z")),
    ]
    assert {d.code for d in found if d.severity == "error"} == {"tcpdsl-layout"}
    hint = [d.message for d in found if d.line == line_of(BODY, "unknown =") and d.severity == "note"]
    assert hint == ['  hint: declare it, e.g. K = tcp.axis("K", <size>), pass the axis itself, or pass sizes=']


def test_the_error_is_reported_at_the_text(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    found = check(tmp_path, cache, {"logical_column": BODY}, extra=("--show-column-numbers",))
    line = line_of(BODY, "unknown =")
    assert [d.column for d in found if d.line == line and d.severity == "error"] == [BODY.splitlines()[line - 1].index('"A K"') + 1]


def test_the_runtime_raises_the_same_errors() -> None:
    x = np.zeros((4, 2))
    with pytest.raises(LayoutError) as unknown:
        tcp.Tensor(x, "Q K")
    assert str(unknown.value).splitlines()[0] == UNKNOWN.format("K")
    with pytest.raises(LayoutError) as twice:
        tcp.Tensor(x, (Q, "Q"))
    assert str(twice.value).splitlines()[0] == "[Tensor] DuplicateAxis: axes Q Q name an axis twice"


def test_axis_objects_carry_their_sizes() -> None:
    """An axis passed as an object needs no variable of its name where the call is written."""
    held = {"Rows": tcp.axis("Rows", 4), "Cols": tcp.axis("Cols", 2)}
    x = np.arange(8).reshape(4, 2)
    t = tcp.Tensor(x, (held["Rows"], held["Cols"]))
    assert t.axes == ("Rows", "Cols") and t.sizes == {"Rows": 4, "Cols": 2}
    assert np.array_equal(t.to_numpy((held["Cols"], held["Rows"])), x.T)
    assert tcp.Tensor(x, ["Q", R]).sizes == {"Q": 4, "R": 2}


NAMES = st.lists(st.sampled_from(["A", "B", "Cd", "K_1", "L2"]), max_size=5, unique=True)


@given(NAMES, st.sampled_from([" ", ", ", ","]))
def test_a_text_and_its_names_name_the_same_axes(names: list[str], sep: str) -> None:
    assert named_axes(sep.join(names)) == named_axes(tuple(names)) == (tuple(names), {})


@given(NAMES, st.data())
def test_axis_objects_give_names_and_sizes(names: list[str], data: st.DataObject) -> None:
    sizes = {n: data.draw(st.integers(1, 64)) for n in names}
    assert named_axes(tuple(tcp.axis(n, s) for n, s in sizes.items())) == (tuple(names), sizes)

