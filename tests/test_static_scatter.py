"""The plugin checks ``dm.dma_scatter(index, out, key=)`` as the runtime does: a scatter that breaks a rule is
refused at its call in the rule's words, and the reference's scatter_minimal is accepted and typed."""

from __future__ import annotations

from pathlib import Path

from static_corpus.support import corpus_report  # noqa: F401  (the corpus mypy run, as a fixture)
from static_corpus.support import error_keys
from test_static_plugin import cache, check, line_of, revealed  # noqa: F401  (cache: the plugin tests' fixture)

HEADER = '''
import tcpdsl as tcp
from tcpdsl import m

K = tcp.axis("K", 512)
D = tcp.axis("D", 128)
C = tcp.axis("C", 612)

Data = tcp.DmTensor[tcp.bf16, m["1"], m["1 # 2"], m["K / 2"], m["K % 2, D"]]
Index = tcp.HbmTensor[tcp.i32, m["1"], m["K"]]
Out = tcp.HbmTensor[tcp.bf16, m["1"], m["C, D"]]
'''


def test_scatter_minimal_is_accepted_and_typed(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    body = HEADER + '''
def scatter(data: Data, index: Index, out: Out) -> Out:
    written = data.dma_scatter(index, out, key=m["K"])
    reveal_type(written)
    return written
'''
    found = check(tmp_path, cache, {"scatter_ok": body})
    assert error_keys(found) == []
    assert list(revealed(found).values()) == [
        "tcpdsl.tensors.memory.HbmTensor[tcpdsl.numerics.scalars.bf16, Literal['1'], Literal['C, D']]"
    ]


def test_broken_scatters_are_refused_at_their_call(tmp_path: Path, cache: Path) -> None:  # noqa: F811
    body = HEADER + '''
Across = tcp.DmTensor[tcp.bf16, m["1"], m["K / 256"], m["K % 256"], m["D"]]
Rows = tcp.HbmTensor[tcp.bf16, m["1"], m["C"]]

def key_across_clusters(data: Across, index: Index, out: Out) -> None:
    data.dma_scatter(index, out, key=m["K"])  # KeyContained

def out_without_payload(data: Data, index: Index, out: Rows) -> None:
    data.dma_scatter(index, out, key=m["K"])  # Payload
'''
    found = check(tmp_path, cache, {"scatter_bad": body})
    contained, payload = line_of(body, "# KeyContained"), line_of(body, "# Payload")
    assert error_keys(found) == [(contained, "tcpdsl-layout", "KeyContained"), (payload, "tcpdsl-layout", "Payload")]
    messages = {d.line: d.message for d in found if d.severity == "error"}
    assert messages == {
        contained: "[dma_scatter] KeyContained: dma_scatter: the key axis K lies partly in the data's Cluster K / 256; "
        "a key must lie entirely within [Slice, Element] (Chip 1, Cluster K / 256, Slice K % 256, Element D), since "
        "a key split across Cluster and Element cannot be addressed",
        payload: "[dma_scatter] Payload: dma_scatter: out (Chip 1, Element C) lacks the payload axis D; out holds the "
        "payload (D) and one axis to scatter rows along",
    }
