"""DMA moves between HBM and DM (docs/stage-rules.md §4.1).

A DMA is a tensor move: the destination holds the same logical tensor in another layout. The
destination is walked as a loop nest over the source (docs/stage-rules.md §4.2); an axis the
destination names but the source lacks is a broadcast. Writes into DM must move whole 8-byte
words, and tcpdsl also asks that of reads out of DM (docs/stage-rules.md §4.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from math import gcd, prod
from typing import Final

from tcpdsl.algebra import Digit, Mapping, slots_of
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.memory import Tier, bytes_of, check_dm_tensor, materializable_bits
from tcpdsl.verify.sequencer import BITS_PER_BYTE, Entry, Piece, Unmatched, merge, pieces
from tcpdsl.verify.stage import Stage

SRAM_WORD_BYTES: Final = 8
# Sizes are products of small primes; trial division stops here so that no size can stall a check.
_TRIAL_LIMIT: Final = 1 << 16


@dataclass(frozen=True)
class DmaParams:
    """A DMA command: the shared innermost run ``tail`` (elements and bytes), the destination's loop
    nest over the source (``count:stride`` in source cells, outermost first), the bytes written (the
    destination without its padding factors), and whether source and destination sit in one tier
    (their requests then serialise)."""

    tail: int
    tail_bytes: int
    entries: tuple[Entry, ...]
    bytes: int
    same_tier: bool


@memoized
def verify_dma(stage: str, dtype: str, *, source: Tier, destination: Tier) -> DmaParams:
    """Check a move ``source -> destination`` (any pair of tiers) and derive its command.

    Rules in order: the dtype, the destination's constructor rules, ``DmToDmPreserve``,
    ``Unreadable`` / ``Decomposition``, ``Unread``, ``TailAlign``, ``StrideAlign``.
    """
    bits = materializable_bits(stage, dtype)
    if destination.cluster is not None and destination.slice_ is not None:
        check_dm_tensor(dtype, chip=destination.chip, cluster=destination.cluster, slice_=destination.slice_,
                        element=destination.element)
    if source.dm and destination.dm:
        _check_preserve(stage, source, destination)
    src, dst = source.whole, destination.whole
    try:
        walked = pieces(src, dst, dummy_stride=0, absent_is_broadcast=True)
    except Unmatched as missing:
        raise _unreadable(stage, missing, src, dst) from None
    dropped = _dropped(src, dst)
    if dropped is not None:
        raise LayoutError(
            stage,
            "Unread",
            f"{stage}: the source {source.name} layout {src} holds {dropped}, which the destination "
            f"{destination.name} layout {dst} does not hold; a move cannot drop data",
            hint="name every source axis in the destination, or move a tile view of the part you need",
        )
    tail = dma_tail(source.element, destination.element)
    aligned = destination.dm or source.dm
    if aligned:
        check_tail_align(stage, dtype, bits, tail, source.element, destination.element)
        _check_strides(stage, walked, tail, bits, source, destination)
    return DmaParams(
        tail=tail,
        tail_bytes=bytes_of(bits, tail),
        entries=merge(walked),
        bytes=bytes_of(bits, dst.size // prod(p.count for p in walked if p.dummy)),
        same_tier=source.dm == destination.dm,
    )


def check_tail_align(stage: str, dtype: str, bits: int, tail: int, source: Mapping, destination: Mapping) -> None:
    """``TailAlign``: a move into or out of SRAM goes in whole 8-byte words, so the innermost run the two Element
    layouts share (``tail`` elements of ``bits`` each) is a multiple of 8 bytes."""
    if (tail * bits) % (SRAM_WORD_BYTES * BITS_PER_BYTE):
        raise LayoutError(
            stage,
            "TailAlign",
            f"{stage}: DMA tail alignment violation: source Element {source} and destination Element "
            f"{destination} share an innermost run of {tail} elements of {dtype} "
            f"({tail * bits / BITS_PER_BYTE:g} bytes), not a multiple of {SRAM_WORD_BYTES} bytes",
            hint="keep the innermost axis of both layouts the same, or pad it to a multiple of 8 bytes on both "
            "sides (e.g. `X # 8` for i32)",
        )


def _check_preserve(stage: str, source: Tier, destination: Tier) -> None:
    for name, a, b in (
        ("Chip", source.chip, destination.chip),
        ("Cluster", source.cluster, destination.cluster),
        ("Slice", source.slice_, destination.slice_),
    ):
        assert a is not None and b is not None
        if a.size != b.size:
            raise LayoutError(
                stage,
                "DmToDmPreserve",
                f"{stage}: a DM to DM move keeps the {name} size, got {a.size} ({a}) to {b.size} ({b})",
                hint=f"relayout within {name} size {a.size}, or go through HBM to change the distribution",
            )


def _unreadable(stage: str, missing: Unmatched, src: Mapping, dst: Mapping) -> LayoutError:
    d = missing.digit
    if missing.cut:
        return LayoutError(
            stage,
            "Decomposition",
            f"{stage}: axis {d.axis} is split one way in the source {src} and another way in the destination "
            f"{dst} (digit of stride {d.stride}, {d.count} values); neither split refines the other",
            hint=f"split {d.axis} at the same points on both sides, or at points that divide each other",
        )
    return LayoutError(
        stage,
        "Unreadable",
        f"{stage}: the destination {dst} holds an opaque factor that the source {src} does not hold",
        hint="write the destination with plain axis digits",
    )


def _dropped(src: Mapping, dst: Mapping) -> str | None:
    """A live source digit the destination lacks (as text), if any."""
    dst_axes = {s.live.axis for s in slots_of(dst) if isinstance(s.live, Digit)}
    for slot in slots_of(src):
        live = slot.live
        if isinstance(live, Digit) and live.axis not in dst_axes:
            return live.axis
    try:
        pieces(dst, src, dummy_stride=0, absent_is_broadcast=True)
    except Unmatched as missing:
        return missing.digit.axis
    return None


def dma_tail(source: Mapping, destination: Mapping) -> int:
    """The longest innermost run ``n`` (in elements) that the two Element layouts hold alike:
    ``source % n == destination % n``, with ``n`` dividing both sizes.

    The canonical slots agree from the inside out up to the first that differs. If that one is a
    digit of the same axis and stride on both sides, the run goes on into its common values: up to
    the smaller live count, or through equal padding too.
    """
    run = 1
    for a, b in zip(slots_of(source), slots_of(destination)):
        if a == b:
            run *= a.extent
            continue
        x, y = a.live, b.live
        if isinstance(x, Digit) and isinstance(y, Digit) and (x.axis, x.stride) == (y.axis, y.stride):
            same_padding = x.count == y.count and a.kind == b.kind
            bound = min(a.extent, b.extent) if same_padding else min(x.count, y.count)
            run *= _largest_divisor(gcd(source.size // run, destination.size // run), bound)
        break
    return run


def _largest_divisor(n: int, bound: int) -> int:
    """The largest divisor of ``n`` that is at most ``bound``."""
    primes: list[int] = []
    rest, p = n, 2
    while p * p <= rest and p <= _TRIAL_LIMIT:
        while rest % p == 0:
            primes.append(p)
            rest //= p
        p += 1
    if rest > 1:
        primes.append(rest)  # treated as prime past the trial limit: at worst a shorter run
    divisors = {1}
    for q in primes:
        divisors |= {d * q for d in divisors if d * q <= bound}
    return max(divisors)


def _check_strides(stage: str, walked: list[Piece], tail: int, bits: int, source: Tier, destination: Tier) -> None:
    word = SRAM_WORD_BYTES * BITS_PER_BYTE
    for p in walked:
        if p.count == 1:
            continue
        dst_bits = p.at * bits
        src_bits = p.stride * bits
        bad_dst = destination.dm and tail <= p.at < destination.element.size and dst_bits % word
        bad_src = source.dm and tail <= p.stride < source.element.size and src_bits % word
        if bad_dst or bad_src:
            side, stride = ("destination", dst_bits) if bad_dst else ("source", src_bits)
            raise LayoutError(
                stage,
                "StrideAlign",
                f"{stage}: a {side} stride of {stride / BITS_PER_BYTE:g} bytes past the shared tail of {tail} "
                f"elements is not a multiple of {SRAM_WORD_BYTES} bytes (source {source.element}, destination "
                f"{destination.element})",
                hint="pad the axes inside that stride so each step moves whole 8-byte words",
            )


def verify_to_dm(
    dtype: str, *, source: Tier, cluster: Mapping, slice_: Mapping, element: Mapping, view: bool = False
) -> DmaParams:
    """``hbm.to_dm(cluster=, slice=, element=)``, ``dm.to_dm(slice=, element=)`` and ``to_dm_view``."""
    stage = Stage.TO_DM_VIEW if view else Stage.TO_DM
    return verify_dma(stage, dtype, source=source,
                      destination=Tier(source.chip, element, cluster, slice_))


def verify_to_hbm(dtype: str, *, source: Tier, element: Mapping, view: bool = False) -> DmaParams:
    """``dm.to_hbm(element=)``, ``hbm.to_hbm(element=)`` and ``to_hbm_view``."""
    stage = Stage.TO_HBM_VIEW if view else Stage.TO_HBM
    return verify_dma(stage, dtype, source=source, destination=Tier(source.chip, element))
