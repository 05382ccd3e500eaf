"""Partial logical tensors: tensors over digits of axes, tiles, writing parts back, and fitting layouts."""

from __future__ import annotations

import importlib.util
import types
from pathlib import Path

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.algebra import parse

A = tcp.axis("A", 8)
B = tcp.axis("B", 64)
R = tcp.axis("R", 8)
K = tcp.axis("K", 32)
Wp = tcp.axis("Wp", 4 * 64)
H = tcp.axis("H", 32)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

RNG = np.random.default_rng(3)


def ints(*shape: int) -> np.ndarray:
    return RNG.integers(-8, 8, size=shape)


# -- building -----------------------------------------------------------------------------------
def test_a_tensor_over_terms_has_one_dimension_per_term() -> None:
    t = tcp.Tensor(ints(8, 32), m["A, B / 2"])
    assert t.axes == ("A", "B / 2")
    assert t.shape == (8, 32) and t.sizes == {"A": 8, "B": 64}
    assert not t.whole and t.fixed == {}
    assert repr(t) == "Tensor[A=8 [B / 2]=32](int64)"


def test_names_and_whole_terms_build_the_same_tensor() -> None:
    x = ints(8, 64)
    assert tcp.Tensor(x, m["A, B"]).terms == tcp.Tensor(x, "A B").terms
    assert tcp.Tensor(x, "A B").whole


@pytest.mark.parametrize(
    ("axes", "shape", "rule"),
    [
        (m["A, B / 2"], (8, 64), "ShapeMismatch"),
        (m["A, B # 70"], (8, 70), "NotATerm"),
        (m["[A, B] / 2"], (256,), "NotATerm"),
        (m["B % 4, B / 2"], (4, 32), "DuplicateAxis"),
    ],
)
def test_bad_terms_are_refused(axes: tcp.Mapping, shape: tuple[int, ...], rule: str) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(np.zeros(shape), axes)
    assert (info.value.stage, info.value.rule) == ("Tensor", rule)


def test_sizes_do_not_go_with_a_mapping() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(ints(8, 32), m["A, B / 2"], sizes={"A": 8})
    assert info.value.rule == "AxisSizes"


def test_to_numpy_regroups_digits() -> None:
    x = ints(4, 64, 8)
    t = tcp.Tensor(x, m["Wp / 64, Wp % 64, A"])
    np.testing.assert_array_equal(t.to_numpy("A Wp"), x.reshape(256, 8).T)
    np.testing.assert_array_equal(t.to_numpy(m["A, Wp % 64, Wp / 64"]), x.transpose(2, 1, 0))
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(ints(4, 8), m["Wp / 64, Wp % 8"]).to_numpy("Wp")
    assert info.value.rule == "AxesMismatch" and "Wp / 64, Wp % 8" in info.value.detail


# -- tiles --------------------------------------------------------------------------------------
def test_a_tile_is_a_view_that_fixes_its_digit() -> None:
    x = ints(256, 32)
    t = tcp.Tensor(x, "Wp H")
    tile = t.tile(m["Wp / 64"], 2)
    assert tile.axes == ("Wp % 64", "H") and tile.fixed == {"Wp / 64": 2}
    assert np.shares_memory(tile.values, x)
    np.testing.assert_array_equal(tile.values, x[128:192])
    assert repr(tile) == "Tensor[[Wp % 64]=64 H=32 | Wp / 64 = 2](int64)"


def test_a_middle_digit_keeps_the_digits_around_it() -> None:
    x = ints(256, 32)
    tile = tcp.Tensor(x, "Wp H").tile(m["Wp / 8 % 4"], 1)
    assert tile.axes == ("Wp / 32", "Wp % 8", "H")
    np.testing.assert_array_equal(tile.values, x.reshape(8, 4, 8, 32)[:, 1])
    assert np.shares_memory(tile.values, x)


@pytest.mark.parametrize(
    ("digit", "index", "rule", "words"),
    [
        (m["Wp / 64"], 4, "TileIndex", "no tile Wp / 64 = 4"),
        (m["Wp / 64"], -1, "TileIndex", "no tile Wp / 64 = -1"),
        (m["Wp / 64"], 1.0, "TileIndex", "must be an int"),
        (m["Wp / 64"], True, "TileIndex", "must be an int"),
        (m["A"], 0, "DigitNotInTensor", "has no axis A"),
        (m["Wp, H"], 0, "NotATerm", "Wp, H is not one digit"),
        ("Wp / 64", 0, "NotAMapping", "got str"),
    ],
)
def test_bad_tiles_name_the_tensor_and_the_digit(digit: object, index: object, rule: str, words: str) -> None:
    t = tcp.Tensor(ints(256, 32), "Wp H")
    with pytest.raises(tcp.LayoutError) as info:
        t.tile(digit, index)  # type: ignore[arg-type]
    assert (info.value.stage, info.value.rule) == ("Tensor", rule)
    assert words in info.value.detail


def test_a_digit_outside_the_held_terms_is_refused() -> None:
    tile = tcp.Tensor(ints(256, 32), "Wp H").tile(m["Wp / 64"], 1)
    with pytest.raises(tcp.LayoutError) as info:
        tile.tile(m["Wp / 64"], 0)
    assert info.value.rule == "DigitFixed" and "Wp / 64 = 1" in info.value.detail
    with pytest.raises(tcp.LayoutError) as info:
        tile.tile(m["Wp / 32"], 0)
    assert info.value.rule == "DigitNotInTensor" and "Wp % 64" in info.value.detail


# -- writing back -------------------------------------------------------------------------------
def test_assign_writes_a_part_into_the_tile_it_fixes() -> None:
    full = np.zeros((256, 32))
    source = ints(256, 32).astype(float)
    part = tcp.Tensor(source, "Wp H").tile(m["Wp / 64"], 3)
    tcp.Tensor(full, "Wp H").assign(part)
    np.testing.assert_array_equal(full[192:], source[192:])
    assert not full[:192].any()


def test_assign_into_an_explicit_tile_regroups_the_part() -> None:
    full = np.zeros((32, 256))
    part = tcp.Tensor(np.arange(64 * 32, dtype=float).reshape(32, 64), m["H, Wp % 64"])
    tcp.Tensor(full, "H Wp").tile(m["Wp / 64"], 1).assign(part)
    np.testing.assert_array_equal(full[:, 64:128], part.values)
    assert not full[:, :64].any() and not full[:, 128:].any()


@pytest.mark.parametrize(
    ("target", "rule"),
    [
        (lambda full: tcp.Tensor(full, "Wp H").tile(m["Wp / 64"], 1), "TileMismatch"),
        (lambda full: tcp.Tensor(full.reshape(256, 4, 8), m["Wp, H / 8, A"]), "TileMismatch"),
        (lambda full: tcp.Tensor(full[:8], "A H"), "DigitNotInTensor"),
        (lambda full: tcp.Tensor(np.broadcast_to(full, full.shape), "Wp H"), "ReadOnly"),
    ],
)
def test_a_part_that_does_not_fit_writes_nothing(target: object, rule: str) -> None:
    full = np.zeros((256, 32))
    part = tcp.Tensor(np.ones((256, 32)), "Wp H").tile(m["Wp / 64"], 3)
    with pytest.raises(tcp.LayoutError) as info:
        target(full).assign(part)  # type: ignore[operator]
    assert (info.value.stage, info.value.rule) == ("Tensor", rule)
    assert not full.any()


def test_assign_takes_a_tensor() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(np.zeros((8, 32)), "A H").assign(np.ones((8, 32)))  # type: ignore[arg-type]
    assert info.value.rule == "NotATensor"


# -- layouts hold exactly the tensor's digits -----------------------------------------------------
Half = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["B / 2"]]


def test_a_layout_holding_part_of_an_axis_takes_a_tensor_over_that_part() -> None:
    x = ints(8, 32)
    s = Half(tcp.Device().main, tcp.Tensor(x, m["A, B / 2"]))
    assert s.to_tensor().axes == ("A", "B / 2")
    np.testing.assert_array_equal(s.physical()[0, 0, 0], x)


def test_a_whole_axis_on_a_partial_layout_says_which_tile_or_terms_fit() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        Half(tcp.Device().main, tcp.Tensor(ints(8, 64), "A B"))
    error = info.value
    assert error.rule == "AxisNotCovered"
    assert error.detail == "the layout A # 4096, B / 2 does not hold every element of the tensor over A B"
    assert 't.tile(m["B % 2"], i)' in error.hint and 'tcp.Tensor(array, m["A, B / 2"])' in error.hint


def test_digits_the_layout_lacks_are_named() -> None:
    layout = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A"], m["[B / 2 % 16] # 32"]]
    with pytest.raises(tcp.LayoutError) as info:
        layout(tcp.Device().main, tcp.Tensor(ints(8, 2, 16), m["A, B / 32, B / 2 % 16"]))
    assert info.value.rule == "DigitNotInLayout" and "B / 32 of B" in info.value.detail
    assert 't.tile(m["B / 32"], i)' in info.value.hint


def test_digits_the_tensor_lacks_are_named() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        Half(tcp.Device().main, tcp.Tensor(ints(8, 16), m["A, B / 4"]))
    assert info.value.rule == "DigitNotInTensor" and "B / 2 % 2 of B" in info.value.detail
    assert 'm["A, B / 2"]' in info.value.hint


def test_a_layout_holding_a_digit_the_tile_fixes_says_so() -> None:
    layout = tcp.CollectTensor[tcp.i8, Chip, Cluster, Slice, m["A, B / 32"], m["B % 32"]]
    tile = tcp.Tensor(ints(8, 64), "A B").tile(m["B / 32"], 1)
    with pytest.raises(tcp.LayoutError) as info:
        layout(tcp.Device().main, tile)
    assert info.value.rule == "DigitNotInTensor" and "fixes B / 32 = 1" in info.value.detail


# -- results hold exactly their layout's terms ----------------------------------------------------
def _split_reduction() -> tcp.ContractTensor:  # type: ignore[type-arg]
    """K = 32 on the slices as K / 16 and in the packet as K % 16, the packet summed away."""
    stream = tcp.CollectTensor[tcp.bf16, Chip, Cluster, m["K / 16 # 256"], m["A"], m["K % 16 # 16"]]
    weight = tcp.TrfTensor[tcp.bf16, Chip, Cluster, m["K / 16 # 256"], m["R"], m["K % 16"]]
    x = tcp.Tensor(RNG.standard_normal((8, 32)), "A K")
    w = tcp.Tensor(RNG.standard_normal((8, 32)), "R K")
    return (
        stream(tcp.Device().main, x)
        .contract_outer(weight(w), out_time=m["A"], out_packet=m["K % 16"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["R"])
    )


def test_a_result_holds_no_padding() -> None:
    result = _split_reduction().to_tensor()
    assert result.axes == ("K / 16", "A", "R") and result.shape == (2, 8, 8)


def test_a_result_of_a_tile_carries_its_fixed_digit() -> None:
    stream = tcp.CollectTensor[tcp.i8, Chip, Cluster, m["Wp / 8 % 8 # 256"], m["1"], m["H"]]
    weight = tcp.TrfTensor[tcp.i8, Chip, Cluster, m["Wp / 8 % 8 # 256"], m["Wp % 8"], m["H"]]
    x = tcp.Tensor(ints(32), "H")
    w = ints(256, 32)
    logits = np.zeros(256, dtype=np.int64)
    out = tcp.Tensor(logits, "Wp")
    for i in range(4):
        part = (
            stream(tcp.Device().main, x)
            .contract_outer(weight(tcp.Tensor(w, "Wp H").tile(m["Wp / 64"], i)), out_time=m["1"], out_packet=m["H"])
            .contract_packet(out_packet=m["1"])
            .contract_time(out_time=m["1"])
            .contract_lane(out_time=m["1"], out_packet=m["Wp % 8"])
            .to_tensor()
        )
        assert part.fixed == {"Wp / 64": i}
        out.assign(part)
    np.testing.assert_array_equal(logits, w @ x.values)



def _example(name: str) -> types.ModuleType:
    path = Path(__file__).resolve().parent.parent / "examples" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"{name}_example", path)
    assert spec is not None and spec.loader is not None
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example


def test_the_weight_groups_example_writes_each_group_back() -> None:
    example = _example("weight_groups")
    act, weight = RNG.standard_normal((16, 64)), RNG.standard_normal((16, 64))
    f8 = tcp.f8e4m3.numpy
    expected = act.astype(f8).astype(np.float64) @ weight.astype(f8).astype(np.float64).T
    np.testing.assert_allclose(example.gemm(act, weight), expected, rtol=1e-6, atol=1e-6)


def test_the_valid_size_32_example_holds_every_even_b() -> None:
    example = _example("valid_size_32")
    x, w = ints(8, 64), ints(8, 64)
    dev = tcp.Device()
    weights = example.Weights(dev.sub, tcp.Tensor(w[:, ::2], m["R, B / 2"]))
    out = example.valid_size_32(example.Stream(dev.main, example.stream_tensor(x)), weights)
    np.testing.assert_array_equal(out.to_tensor().to_numpy("A R"), x[:, ::2] @ w[:, ::2].T)


# -- issue 17: padding, axis sizes, odd arrays -----------------------------------------------------
P = tcp.axis("P", 12)


def test_a_padded_digit_is_refused_with_a_hint() -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(np.zeros((2, 8)), m["P # 16 / 8, P # 16 % 8"])
    assert info.value.rule == "PaddedDigit"
    assert str(info.value) == (
        "[Tensor] PaddedDigit: P # 16 / 8, P # 16 % 8 spells coordinates of P up to 15, but P has size 12: "
        "a logical tensor holds no padding\n"
        '  hint: hold P unpadded (m["P"], or digits that divide 12) and let the layout pad it'
    )


def test_digits_inside_the_axis_are_not_padding() -> None:
    t = tcp.Tensor(ints(3, 4), m["P / 4, P % 4"])
    assert t.to_numpy("P").shape == (12,)
    assert tcp.Tensor(ints(4), m["P % 4"]).shape == (4,)


def test_a_tile_digit_of_another_size_is_an_axis_size_conflict() -> None:
    t = tcp.Tensor(ints(256), "Wp")
    with pytest.raises(tcp.LayoutError) as info:
        t.tile(tcp.parse("Wp / 4", {"Wp": 8}), 1)
    assert info.value.rule == "AxisSizeConflict"
    assert 'axis Wp has size 256 in Tensor[Wp=256](int64) and size 8 in the tile digit m["Wp / 4"]' in str(info.value)


@pytest.mark.parametrize("array", [np.zeros(8, "V4"), np.zeros(8, [("x", "f4")]), np.array(["a"] * 8)])
def test_arrays_of_no_numbers_are_refused(array: np.ndarray) -> None:
    with pytest.raises(tcp.LayoutError) as info:
        tcp.Tensor(array, "A")
    assert info.value.rule == "NotAnArray"
    assert f"the data must be real numbers, got an array of {array.dtype}" in str(info.value)
    with pytest.raises(tcp.DtypeError) as cast:
        tcp.bf16.cast(array)
    assert cast.value.rule == "NotNumbers"
    assert f"bf16.cast takes real numbers, got an array of {array.dtype}" in str(cast.value)


def test_reshaping_the_array_in_place_leaves_the_tensor_alone() -> None:
    data = ints(8, 64)
    t = tcp.Tensor(data, "A B")
    data.shape = (64, 8)
    assert t.shape == (8, 64) and t.to_numpy("B A").shape == (64, 8)
    data[0, 0] = 99  # the tensor still shares the data: it is no copy
    assert t.values[0, 0] == 99


def test_a_name_stands_for_the_whole_axis_in_to_numpy() -> None:
    x = ints(8, 32)
    half = tcp.Tensor(x, m["A, B / 2"])
    with pytest.raises(tcp.LayoutError) as info:
        half.to_numpy("B A")
    assert str(info.value) == (
        "[Tensor] PartialAxis: to_numpy('B A') names B, but Tensor[A=8 [B / 2]=32](int64) holds only B / 2 of it "
        "(32 of its 64 coordinates)\n"
        '  hint: name the digits: to_numpy(m["B / 2, A"])'
    )
    np.testing.assert_array_equal(half.to_numpy(m["B / 2, A"]), x.T)
    tile = tcp.Tensor(ints(256), "Wp").tile(m["Wp / 64"], 1)
    with pytest.raises(tcp.LayoutError) as partial:
        tile.to_numpy("Wp")
    assert partial.value.rule == "PartialAxis" and "holds only Wp % 64 of it" in partial.value.detail


# -- issue 23: tiles of an axis zero-padded to whole tiles -------------------------------------------
V = tcp.axis("V", 10)


def test_the_last_tile_of_a_padded_digit_is_partial() -> None:
    # V = 10 as 3 tiles of 4 (V #{0} 12 / 4): tiles 0 and 1 are views, tile 2 holds V = 8, 9 and zeros
    values = ints(10, 3)
    t = tcp.Tensor(values, "V H", sizes={"H": 3})
    first, last = t.tile(m["V #{0} 12 / 4"], 1), t.tile(m["V #{0} 12 / 4"], 2)
    assert first.shape == last.shape == (4, 3) and first.fixed == {"V # 12 / 4": 1}
    assert np.shares_memory(first.values, values) and first.values.flags.writeable
    np.testing.assert_array_equal(first.values, values[4:8])
    np.testing.assert_array_equal(last.values, np.concatenate([values[8:], np.zeros((2, 3))]))
    assert not np.shares_memory(last.values, values) and not last.values.flags.writeable
    with pytest.raises(tcp.LayoutError) as info:
        t.tile(m["V #{0} 12 / 4"], 3)
    assert info.value.rule == "TileIndex" and "the values 0 to 2" in info.value.detail


@pytest.mark.parametrize("axes", ["V H", "H V"])
def test_assign_writes_the_live_cells_of_every_padded_tile(axes: str) -> None:
    values = ints(10, 3)
    source = tcp.Tensor(values, "V H", sizes={"H": 3})
    full = np.zeros((10, 3) if axes == "V H" else (3, 10))
    target = tcp.Tensor(full, axes, sizes={"H": 3})
    for i in range(3):
        target.assign(source.tile(m["V #{0} 12 / 4"], i))
    np.testing.assert_array_equal(target.to_numpy("V H"), values)


def test_a_partial_tile_is_no_place_to_write() -> None:
    source = tcp.Tensor(ints(10, 3), "V H", sizes={"H": 3})
    full = np.zeros((10, 3))
    last = tcp.Tensor(full, "V H", sizes={"H": 3}).tile(m["V #{0} 12 / 4"], 2)
    with pytest.raises(tcp.LayoutError) as info:
        last.assign(source.tile(m["V #{0} 12 / 4"], 2))
    assert str(info.value) == (
        "[Tensor] ReadOnly: Tensor[[V = 4]=4 H=3 | V # 12 / 4 = 2](float64) is a tile reaching past the end of its "
        "axis, a copy padded with zeros\n"
        "  hint: assign the part to the whole tensor: out.assign(part) writes it at the tile it fixes"
    )
    assert not full.any()


def test_a_padded_digit_reaches_past_the_end_only_of_a_run_that_ends_there() -> None:
    inner = tcp.Tensor(ints(4, 32), m["V = 4, H"])  # the first 4 cells of V: its end is not held
    with pytest.raises(tcp.LayoutError) as info:
        inner.tile(m["V #{0} 12 / 4"], 0)
    assert info.value.rule == "DigitNotInTensor"


@settings(max_examples=60, deadline=None)
@given(n=st.integers(3, 60), size=st.integers(2, 16), data=st.data())
def test_padded_tiles_read_and_write_back_every_cell(n: int, size: int, data: st.DataObject) -> None:
    # the law: the tiles of a padded digit, read and assigned one by one, rebuild the tensor, and
    # each tile holds the axis's cells from i * size on, then zeros
    count = -(-n // size)
    assume(count * size > n and count > 1)
    digit = parse(f"V #{{0}} {count * size} / {size}", {"V": n})
    values = np.arange(n * 2).reshape(n, 2) + 1
    axes = data.draw(st.sampled_from(["V H", "H V"]))
    source = tcp.Tensor(values, "V H", sizes={"V": n, "H": 2})
    out = tcp.Tensor(np.zeros((n, 2) if axes == "V H" else (2, n), np.int64), axes, sizes={"V": n, "H": 2})
    for i in range(count):
        tile = source.tile(digit, i)
        live = min(size, n - i * size)
        np.testing.assert_array_equal(tile.values[:live], values[i * size:i * size + live])
        assert not tile.values[live:].any()
        out.assign(tile)
    np.testing.assert_array_equal(out.to_numpy("V H"), values)
