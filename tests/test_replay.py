"""``tcp.replay()`` (docs/replay.md): a replayed call gives the very bits of the call as written, on every example
kernel it can replay and on the whole decoder step; each reason a call runs as written is reported and its
result stays right."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.cli.run import load
from tcpdsl.harness.kernel_spec import KernelSpec, KernelSpecError, kernels_in, random_case
from tcpdsl.tensors.replay import FIRST_CALL, SIGNATURES_PER_KERNEL

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
TRANSFORMER = EXAMPLES / "transformer"
MEMORY = ("DmTensor", "HbmTensor", "VrfTensor")
# The lm_head's tiles read the 155648-row vocabulary: a minute a kernel for the five calls here. The tile is the
# projections' kind of contraction, and final_layer its nineteen calls.
TOO_LARGE = {"lm_head_tile", "final_layer"}
H = tcp.axis("H", 1024)


def _replayable_kernels() -> list[tuple[Path, str]]:
    """Every example kernel whose tensors are all memory tensors and that a runner can drive at random."""
    found = []
    for file in [*sorted(EXAMPLES.glob("*.py")), *sorted(TRANSFORMER.glob("*.py"))]:
        for spec in kernels_in(load(file, 0)):
            if spec.skip is None and spec.params and all(p.family in MEMORY for p in spec.params) \
                    and spec.name not in TOO_LARGE:
                found.append((file, spec.name))
    return found


KERNELS = _replayable_kernels()


def _spec(file: Path, name: str) -> KernelSpec:
    (spec,) = [k for k in kernels_in(load(file, 0)) if k.name == name]
    return spec


def _inputs(spec: KernelSpec, seed: int, integers_of: int) -> dict[str, Any]:
    """Random tensors fixed by ``seed``, and the integers of seed ``integers_of`` (the same signature)."""
    tensors = random_case(spec, seed).inputs
    integers = random_case(spec, integers_of).inputs
    return {name: integers[name] if isinstance(value, int) else value for name, value in tensors.items()}


def _values(tensor: Any) -> np.ndarray[Any, Any]:
    return tensor.to_tensor().values  # type: ignore[no-any-return]


def _outputs(spec: KernelSpec, inputs: dict[str, Any]) -> list[np.ndarray[Any, Any]]:
    """The call's result (each part of a tuple) and then every tensor input, which it may have written."""
    result = spec.function(**inputs)
    parts = result if isinstance(result, tuple) else () if result is None else (result,)
    return [_values(p) for p in parts] + [_values(v) for v in inputs.values() if not isinstance(v, int)]


def _same(expected: list[np.ndarray[Any, Any]], found: list[np.ndarray[Any, Any]]) -> bool:
    return len(expected) == len(found) and all(
        e.shape == f.shape and e.dtype == f.dtype and e.tobytes() == f.tobytes() for e, f in zip(expected, found))


def test_the_examples_hold_kernels_to_replay() -> None:
    names = {name for _, name in KERNELS}
    assert {"projection", "attention_forward", "decoder", "rmsnorm", "qk_scaled"} <= names
    assert len(KERNELS) >= 20


@pytest.mark.parametrize(("file", "name"), KERNELS, ids=[f"{f.stem}::{n}" for f, n in KERNELS])
def test_a_replayed_call_gives_the_bits_of_the_call_as_written(file: Path, name: str) -> None:
    """Four calls on two inputs: the first runs as written, the second is recorded, the last two replay."""
    spec = _spec(file, name)
    try:
        seeds = [1, 2, 1, 2]
        expected = [_outputs(spec, _inputs(spec, seed, 1)) for seed in seeds[:2]]
    except KernelSpecError as error:
        pytest.skip(str(error))
    with tcp.replay() as log:
        found = [_outputs(spec, _inputs(spec, seed, 1)) for seed in seeds]
    _ran(log, spec.qualname, recorded=1, replayed=2)
    assert all(_same(expected[seed - 1], got) for seed, got in zip(seeds, found, strict=True))
    assert not _same(expected[0], expected[1]), "the two inputs must give different outputs"


def _ran(log: tcp.ReplayLog, name: str, *, recorded: int, replayed: int, first_calls: int = 1) -> None:
    """What ``log`` says of kernel ``name``: its signatures' first calls ran as written, and nothing else did."""
    assert (log.recorded[name], log.replayed[name]) == (recorded, replayed), str(log)
    assert dict(log.as_written.get(name, {})) == {FIRST_CALL: first_calls}, str(log)


@pytest.mark.parametrize(("file", "name"), KERNELS, ids=[f"{f.stem}::{n}" for f, n in KERNELS])
def test_a_replay_keeps_only_what_the_same_frozen_arguments_determine(file: Path, name: str) -> None:
    """After a call as written and one recorded, the first argument is the very same tensor on the third call
    (its frozen values, and what the graph computed from them alone, are kept) and the others are new; on the
    fourth every argument is new: still the bits of the calls as written."""
    spec = _spec(file, name)
    first_name = spec.params[0].name

    def calls() -> list[list[np.ndarray[Any, Any]]]:
        second = _inputs(spec, 2, 1)
        third = {**_inputs(spec, 3, 1), first_name: second[first_name]}
        return [_outputs(spec, _inputs(spec, 1, 1)), _outputs(spec, second), _outputs(spec, third),
                _outputs(spec, _inputs(spec, 4, 1))]

    try:
        expected = calls()
    except KernelSpecError as error:
        pytest.skip(str(error))
    with tcp.replay() as log:
        found = calls()
    _ran(log, spec.qualname, recorded=1, replayed=2)
    assert all(_same(want, got) for want, got in zip(expected, found, strict=True))


def _decoder() -> tuple[Any, Any]:
    sys.path.insert(0, str(TRANSFORMER))
    try:
        import decoder  # type: ignore[import-not-found]
        import model  # type: ignore[import-not-found]
    finally:
        sys.path.remove(str(TRANSFORMER))
    return decoder, model


def _steps(positions: tuple[int, ...]) -> tuple[tcp.ReplayLog, list[list[np.ndarray[Any, Any]]],
                                                list[list[np.ndarray[Any, Any]]]]:
    """Decoder steps at ``positions``, each on a token and cache of its own, as written and replayed: the log, and
    every step's query, attention state, stream and both caches, both ways."""
    decoder, model = _decoder()
    sizes = model.REFERENCE
    layer = decoder.LayerTensors.of(model.random_layer(sizes, 1))

    def step(seed: int, position: int) -> list[np.ndarray[Any, Any]]:
        rng = np.random.default_rng(seed)
        cache = model.KvCache.empty(sizes, 2)
        cache.k[:] = model.uniform_bf16(rng, cache.k.shape, 1.0)
        cache.v[:] = model.uniform_bf16(rng, cache.v.shape, 1.0)
        chunks = decoder.KvChunks.of(cache)
        x = decoder.Hidden(tcp.Tensor(model.uniform_bf16(rng, (sizes.H,), 1.0).astype(np.float32), m["H"]))
        done = decoder.layer_step(x, layer, position, chunks)
        written = chunks.to_model()
        return [_values(done.q), *map(_values, done.state), _values(done.stream), written.k, written.v]

    expected = [step(seed, position) for seed, position in enumerate(positions)]
    with tcp.replay() as log:
        found = [step(seed, position) for seed, position in enumerate(positions)]
    return log, expected, found


def test_the_decoder_step_replayed_over_tokens_and_cache_rows() -> None:
    """Six steps at two cache rows: the row is the scatter's data, so every kernel, the projection with its
    write into the caches included, replays from its third call at the latest. Every stream, query, attention
    state and both caches are the bits of the steps as written."""
    log, expected, found = _steps((700, 700, 701, 700, 701, 701))
    for kernel in ("projection", "attention_forward_first", "attention_forward", "decoder"):
        _replayed_after_two(log, kernel, calls=6)
    for want, got in zip(expected, found, strict=True):
        assert _same(want, got)


def _replayed_after_two(log: tcp.ReplayLog, name: str, calls: int) -> None:
    """Kernel ``name`` (shared with other tests: its signature may have been met before) was called ``calls``
    times and replayed from its third call on at the latest; nothing but a first call ran as written."""
    first = log.as_written.get(name, {})
    assert set(first) <= {FIRST_CALL} and first.get(FIRST_CALL, 0) + log.recorded[name] <= 2, str(log)
    assert first.get(FIRST_CALL, 0) + log.recorded[name] + log.replayed[name] == calls, str(log)


def test_a_loop_over_tokens_replays_the_projection() -> None:
    """Every step at a new cache row, as decoding writes them: the projection replays like the other kernels,
    still the bits of the steps as written."""
    log, expected, found = _steps((900, 901, 902, 903))  # rows no other test writes
    for kernel in ("projection", "attention_forward_first", "attention_forward", "decoder"):
        _replayed_after_two(log, kernel, calls=4)
    for want, got in zip(expected, found, strict=True):
        assert _same(want, got)


# -- what runs as written ------------------------------------------------------------------------------

A = tcp.axis("A", 32)
R = tcp.axis("R", 2)
Rows = tcp.DmTensor[tcp.bf16, m["1"], m["1 # 2"], m["A / 4 # 64"], m["A % 4"]]
Flat = tcp.HbmTensor[tcp.bf16, m["1"], m["A"]]
Wide = tcp.HbmTensor[tcp.bf16, m["1"], m["R, A"]]


def _flat(values: np.ndarray[Any, Any]) -> Any:
    return Flat(tcp.Tensor(values.astype(np.float32), m["A"]))


def _rng_flat(seed: int) -> Any:
    return _flat(np.random.default_rng(seed).standard_normal(32))


@tcp.kernel
def moved(x: Flat) -> Rows:
    return x.to_dm(cluster=m["1 # 2"], slice=m["A / 4 # 64"], element=m["A % 4"])


def _twice() -> Any:
    """A kernel of its own (a recording lasts as long as its kernel): reads its argument through a nested kernel."""
    @tcp.kernel
    def twice(x: Flat) -> Flat:
        return moved(x).to_hbm(element=m["A"])

    return twice


@tcp.kernel
def peeks(x: Flat) -> Flat:
    """Reads its argument's values from Python: a constant of whatever it builds from them."""
    scale = float(np.abs(x.to_tensor().values).max())
    return _flat(x.to_tensor().values / scale)


@tcp.kernel
def viewed(x: Flat) -> tcp.HbmView[tcp.bf16, m["1"], m["A"]]:
    return x.view()


@tcp.kernel
def row_into(x: Flat, dst: Wide, row: int) -> Wide:
    """Writes ``x`` into row ``row`` of ``dst``: the tile write a signature fixes by its int."""
    window = dst.view_mut().tile(row, index=m["R"], len=1, element=m["R = 1 #{!} 2, A"])
    return x.view().to_hbm_view(window)


def _wide(seed: int) -> Any:
    return Wide(tcp.Tensor(np.random.default_rng(seed).standard_normal((2, 32)).astype(np.float32), m["R, A"]))


def test_a_nested_kernel_is_part_of_the_recording() -> None:
    twice = _twice()
    with tcp.replay() as log:
        outs = [_values(twice(_rng_flat(seed))) for seed in (1, 2, 3)]
    _ran(log, twice.__qualname__, recorded=1, replayed=1)
    # Inside the recording and the replays the nested kernel is part of the graph; only the call as written calls it.
    assert log.as_written["moved"][FIRST_CALL] + log.recorded["moved"] + log.replayed["moved"] == 1, str(log)
    assert [o.tobytes() for o in outs] == [_values(twice(_rng_flat(seed))).tobytes() for seed in (1, 2, 3)]


def test_a_body_that_reads_values_runs_as_written_and_says_why() -> None:
    with tcp.replay() as log:
        outs = [_values(peeks(_rng_flat(seed))) for seed in (1, 2, 3)]
    assert str(log) == ("peeks: 0 recorded, 0 replayed\n  1 ran as written: " + FIRST_CALL +
                        "\n  2 ran as written: the body read values from Python (to_tensor or physical)")
    assert [o.tobytes() for o in outs] == [_values(peeks(_rng_flat(seed))).tobytes() for seed in (1, 2, 3)]


def test_a_lazy_result_runs_as_written() -> None:
    with tcp.replay() as log:
        views = [viewed(_rng_flat(seed)) for seed in (1, 2)]
    assert dict(log.as_written) == {"viewed": {FIRST_CALL: 1, "it returns a HbmView, not a memory tensor": 1}}
    assert [_values(v).tobytes() for v in views] == [_values(_rng_flat(seed)).tobytes() for seed in (1, 2)]


@tcp.kernel
def picked(x: Flat, rows: tuple[int, ...]) -> Flat:
    return x.to_hbm(element=m["A"])


def test_other_evaluators_and_arguments_run_as_written() -> None:
    twice = _twice()
    with tcp.replay() as log, tcp.evaluator("simulate"):
        twice(_rng_flat(1))
    # The body runs as written, and so does the kernel it calls.
    assert dict(log.as_written) == {twice.__qualname__: {"the simulate evaluator is selected": 1},
                                    "moved": {"the simulate evaluator is selected": 1}}
    with tcp.replay() as log:
        picked(_rng_flat(1), (0, 1))
    assert dict(log.as_written) == {"picked": {"an argument is a tuple, neither a memory tensor nor a plain value": 1}}


def test_outside_the_block_every_call_runs_as_written() -> None:
    twice = _twice()
    with tcp.replay() as log:
        pass
    twice(_rng_flat(2))
    assert str(log) == "no kernel was called"


def test_an_int_is_part_of_the_signature_and_the_write_lands_in_the_argument() -> None:
    calls = [(1, 0), (2, 1), (3, 0), (4, 1), (5, 0), (6, 1)]
    expected = []
    for seed, row in calls:
        dst = _wide(10 + seed)
        row_into(_rng_flat(seed), dst, row)
        expected.append(_values(dst))
    found = []
    with tcp.replay() as log:
        for seed, row in calls:
            dst = _wide(10 + seed)
            back = row_into(_rng_flat(seed), dst, row)
            assert back is dst  # the written argument itself, as the body returns it
            found.append(_values(dst))
    _ran(log, "row_into", recorded=2, replayed=2, first_calls=2)
    assert [f.tobytes() for f in found] == [e.tobytes() for e in expected]


def test_the_same_tensor_twice_is_a_signature_of_its_own() -> None:
    @tcp.kernel
    def swap_into(x: Wide, y: Wide) -> Wide:
        """Writes x's row 0 into y's row 1."""
        src = x.view().tile(0, index=m["R"], len=1, element=m["R = 1 # 2, A"])
        dst = y.view_mut().tile(1, index=m["R"], len=1, element=m["R = 1 #{!} 2, A"])
        return src.to_hbm_view(dst)

    def run(same: bool) -> np.ndarray[Any, Any]:
        x = _wide(5)
        y = x if same else _wide(6)
        return _values(swap_into(x, y))

    order = (False, True, False, True, False, True)
    expected = [run(same) for same in order]
    with tcp.replay() as log:
        found = [run(same) for same in order]
    _ran(log, swap_into.__qualname__, recorded=2, replayed=2, first_calls=2)
    assert [f.tobytes() for f in found] == [e.tobytes() for e in expected]


def test_a_new_signature_is_checked_with_the_words_of_a_call_as_written() -> None:
    twice = _twice()
    wrong = Wide(tcp.Tensor(np.zeros((2, 32), np.float32), m["R, A"]))
    with pytest.raises(tcp.TcpError) as outside:
        twice(wrong)
    with tcp.replay() as log, pytest.raises(tcp.TcpError) as inside:
        twice(_rng_flat(1))
        twice(_rng_flat(2))  # recorded
        twice(wrong)  # a new signature: the first call, checked as written
    assert str(inside.value) == str(outside.value)
    assert log.recorded[twice.__qualname__] == 1


def test_a_body_that_raises_records_nothing() -> None:
    failing = [True]

    @tcp.kernel
    def fragile(x: Flat) -> Flat:
        if failing[0]:
            raise tcp.LayoutError("fragile", "Test", "refused")
        return x.to_hbm(element=m["A"])

    with tcp.replay() as log:
        with pytest.raises(tcp.LayoutError, match="refused"):
            fragile(_rng_flat(1))
        failing[0] = False
        fragile(_rng_flat(2))  # the signature's second call, recorded
        out = fragile(_rng_flat(3))
    assert dict(log.recorded) == {fragile.__qualname__: 1} and dict(log.replayed) == {fragile.__qualname__: 1}
    assert _values(out).tobytes() == _values(_rng_flat(3)).tobytes()


def test_a_replayed_result_reads_as_placed_from_the_host_on_the_simulator() -> None:
    twice = _twice()
    with tcp.replay():
        twice(_rng_flat(1))
        twice(_rng_flat(2))  # recorded
        out = twice(_rng_flat(3))
    with tcp.evaluator("simulate"):
        simulated = _values(out)
    assert simulated.tobytes() == _values(out).tobytes()


@tcp.kernel
def tagged(x: Flat, tag: int) -> Flat:
    return x.to_hbm(element=m["A"])


def test_a_kernel_keeps_its_most_recent_signatures() -> None:
    with tcp.replay() as log:
        for tag in range(SIGNATURES_PER_KERNEL + 1):  # the first is forgotten
            tagged(_rng_flat(tag), tag)
            tagged(_rng_flat(tag), tag)
        tagged(_rng_flat(0), SIGNATURES_PER_KERNEL)
        tagged(_rng_flat(0), 0)  # a first call again
    _ran(log, "tagged", recorded=SIGNATURES_PER_KERNEL + 1, replayed=1, first_calls=SIGNATURES_PER_KERNEL + 2)


def test_a_graph_busy_in_another_thread_runs_as_written() -> None:
    twice = _twice()
    with tcp.replay():
        twice(_rng_flat(1))
        twice(_rng_flat(1))  # recorded
    (recording,) = [c.cell_contents for c in twice.__closure__ or () if hasattr(c.cell_contents, "recordings")][0] \
        .recordings.values()
    with recording.lock, tcp.replay() as log:  # as another thread holds it while it evaluates
        out = twice(_rng_flat(2))
    assert dict(log.as_written) == {twice.__qualname__: {"another thread is evaluating its graph": 1}}
    assert _values(out).tobytes() == _values(twice(_rng_flat(2))).tobytes()


@tcp.kernel
def keyed(x: Flat, *, scale: float) -> Flat:
    return x.to_hbm(element=m["A"])


def test_keywords_and_floats_are_part_of_the_signature_by_value() -> None:
    """-0.0 and 0.0 compare equal but are two signatures; a keyword argument is named in the signature."""
    with tcp.replay() as log:
        for scale in (0.0, -0.0, 0.0, -0.0, 0.0):
            out = keyed(_rng_flat(7), scale=scale)
    _ran(log, "keyed", recorded=2, replayed=1, first_calls=2)
    assert _values(out).tobytes() == _values(_rng_flat(7)).tobytes()
