"""Run-time checking of kernels: ``@tcp.kernel`` messages and ``tcp.install`` for annotated locals."""

from __future__ import annotations

import importlib
import sys
import textwrap
import typing
from pathlib import Path

import numpy as np
import pytest

import tcpdsl as tcp
from tcpdsl import m
from tcpdsl.errors import TcpError
from tcpdsl.tensors.checking import HintViolation, KernelDefinitionError, kernel_info
from tcpdsl.tensors.results import ContractTensor
from tcpdsl.tensors.sources import CollectTensor, TrfTensor

A = tcp.axis("A", 32)
B = tcp.axis("B", 32)
C = tcp.axis("C", 8)

Chip = m["1"]
Cluster = m["1 # 2"]
Slice = m["1 # 256"]

Stream = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["A, B / 16"], m["B % 16"]]
Weights = TrfTensor[tcp.bf16, Chip, Cluster, Slice, m["C"], m["B"]]
Out = ContractTensor[tcp.f32, Chip, Cluster, Slice, m["A"], m["C"]]


@tcp.kernel
def matmul(x: Stream, w: Weights) -> Out:
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A"], out_packet=m["C"])
    )


@tcp.kernel
def wrong_result(x: Stream, w: Weights) -> Out:
    # Sequential puts the lanes in Time: a valid chain whose type differs from the annotation.
    return (
        x.contract_outer(w, out_time=m["A"], out_packet=m["B"])
        .contract_packet(out_packet=m["1"])
        .contract_time(out_time=m["A"])
        .contract_lane(out_time=m["A, C"], out_packet=m["1 # 8"], mode=tcp.LaneMode.SEQUENTIAL)
    )


DEV = tcp.Device()
RNG = np.random.default_rng(3)


def _stream(layout: typing.Any = Stream) -> typing.Any:
    return layout(DEV.main, tcp.Tensor(RNG.standard_normal((32, 32)), "A B"))


def _weights() -> typing.Any:
    return Weights(DEV.sub, tcp.Tensor(RNG.standard_normal((8, 32)), "C B"))


def test_a_valid_call_passes() -> None:
    out = matmul(_stream(), _weights())
    assert isinstance(out, Out)


def test_layout_difference_is_named_in_the_message() -> None:
    transposed = CollectTensor[tcp.bf16, Chip, Cluster, Slice, m["B / 16, A"], m["B % 16"]]
    with pytest.raises(HintViolation) as info:
        matmul(_stream(transposed), _weights())
    message = str(info.value)
    assert "parameter x=" in message
    assert message.endswith(
        'violates type hint CollectTensor[bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]], '
        'as its Time layout m["B / 16, A"] differs from the declared m["A, B / 16"].'
    )


def test_dtype_difference_is_named_in_the_message() -> None:
    f8 = CollectTensor[tcp.f8e4m3, Chip, Cluster, Slice, m["A"], m["B"]]
    with pytest.raises(HintViolation) as info:
        matmul(_stream(f8), _weights())
    assert str(info.value).endswith("as its dtype D is f8e4m3, but the declared D is bf16.")


def test_wrong_tensor_class_is_named_in_the_message() -> None:
    with pytest.raises(HintViolation) as info:
        matmul(_stream(), _stream())
    assert str(info.value).endswith("as it is a CollectTensor, not a TrfTensor.")
    with pytest.raises(HintViolation) as info:
        matmul(np.zeros(3), _weights())
    assert str(info.value).endswith("as it is not a CollectTensor at all (got ndarray).")


def test_return_value_is_checked() -> None:
    with pytest.raises(HintViolation) as info:
        wrong_result(_stream(), _weights())
    assert str(info.value).endswith('as its Time layout m["A, C"] differs from the declared m["A"].')


def test_messages_carry_no_colour_codes() -> None:
    with pytest.raises(HintViolation) as info:
        matmul(_stream(), _stream())
    assert "\x1b[" not in str(info.value)


def test_kernel_records_its_signature() -> None:
    info = kernel_info(matmul)
    assert info is not None
    assert info.name == "matmul" and info.module == __name__
    assert list(info.signature.parameters) == ["x", "w"]
    assert info.hints["x"] is Stream and info.hints["w"] is Weights and info.hints["return"] is Out
    assert kernel_info(len) is None


def test_kernel_refuses_non_functions() -> None:
    with pytest.raises(KernelDefinitionError):
        tcp.kernel(42)  # type: ignore[type-var]


def test_kernel_reports_unresolvable_annotations() -> None:
    namespace: dict[str, object] = {}
    exec(
        compile("from __future__ import annotations\ndef k(x: Missing) -> None: ...", "<k>", "exec", dont_inherit=True),
        namespace,
    )
    with pytest.raises(KernelDefinitionError, match="cannot resolve the annotations of k"):
        tcp.kernel(namespace["k"])  # type: ignore[type-var]


def test_install_checks_annotated_locals(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "tcp_install_probe"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "kernels.py").write_text(
        textwrap.dedent(
            '''
            import tcpdsl as tcp
            from tcpdsl import m

            A = tcp.axis("A", 32)
            B = tcp.axis("B", 32)
            Stream = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["A, B / 16"], m["B % 16"]]
            Other = tcp.CollectTensor[tcp.bf16, m["1"], m["1 # 2"], m["1 # 256"], m["B / 16, A"], m["B % 16"]]

            def relabel(x: Stream) -> None:
                y: Other = x
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    tcp.install("tcp_install_probe")
    module = importlib.import_module("tcp_install_probe.kernels")
    try:
        with pytest.raises(HintViolation) as info:
            module.relabel(_stream())
        assert 'as its Time layout m["A, B / 16"] differs from the declared m["B / 16, A"]' in str(info.value)
    finally:
        for name in [n for n in sys.modules if n.startswith("tcp_install_probe")]:
            del sys.modules[name]


def test_install_outside_a_package_needs_a_name() -> None:
    namespace: dict[str, object] = {"__name__": "__main__", "tcp": tcp}
    with pytest.raises(KernelDefinitionError):
        exec("tcp.install()", namespace)


def test_violations_are_tcp_errors() -> None:
    with pytest.raises(TcpError) as info:
        matmul(_stream(), _stream())
    assert isinstance(info.value, TypeError)
