"""The composers of the fetch adapter, the register store and the stream back: ``fetch_cast``, ``to_vrf``,
``cast``, ``commit_trim``, ``commit`` and ``commit_view`` (docs/stage-rules.md §4.4-4.8).

Each runs its stage's rules (the pure verifiers of its own module) and returns the next position's
type with the derived parameters.
"""

from __future__ import annotations

from dataclasses import dataclass

from tcpdsl.algebra import Mapping
from tcpdsl.errors import LayoutError
from tcpdsl.verify.cast import CastParams, verify_cast
from tcpdsl.verify.commit import CommitParams, verify_commit, verify_commit_cast, verify_commit_trim
from tcpdsl.verify.compose import meeting
from tcpdsl.verify.families import CAST, COMMIT_CAST, COMMIT_TRIM, DM, DM_VIEW_MUT, FETCH_CAST, VRF, TensorType, check_type
from tcpdsl.verify.fetch import FLIT_BITS
from tcpdsl.verify.fetch_adapter import verify_fetch_cast
from tcpdsl.verify.stage import Stage
from tcpdsl.verify.to_vrf import VrfParams, verify_to_vrf


@dataclass(frozen=True)
class FetchCastParams:
    """The fetch adapter's output bits, and the fetch read size once one read casts into at most one flit."""

    out_bits: int
    read_size: int | None


def _stream(src: TensorType) -> tuple[Mapping, Mapping, Mapping, Mapping, Mapping]:
    chip, cluster, slice_ = src.grid
    return chip, cluster, slice_, src.layout("Time"), src.layout("Packet")


def fetch_cast(src: TensorType, *, dtype: str, read_size: int | None = None) -> tuple[TensorType, FetchCastParams]:
    """``fetch_cast(D)``: each element cast by the fetch adapter; Time and Packet stay (§4.4).

    ``read_size`` is the fetch's, when known: the adapter casts one read into at most one flit, so a
    widening cast halves it until it does.
    """
    out_bits = verify_fetch_cast(src.dtype, dtype)
    read = read_size
    while read is not None and read * out_bits > FLIT_BITS and read % 2 == 0:
        read //= 2
    return check_type(FETCH_CAST, (dtype,), src.layouts), FetchCastParams(out_bits, read)


def to_vrf(src: TensorType, *, element: Mapping) -> tuple[TensorType, VrfParams]:
    """``to_vrf(element=)``: store the collected stream into the vector register file (§4.6)."""
    meeting(src, element=element)
    chip, cluster, slice_, time, packet = _stream(src)
    params = verify_to_vrf(src.dtype, time=time, packet=packet, element=element)
    return check_type(VRF, src.dtypes, (chip, cluster, slice_, element)), params


def cast(src: TensorType, *, dtype: str, out_packet: Mapping) -> tuple[TensorType, CastParams]:
    """``cast(D, out_packet=)``: the cast engine narrows one flit into one flit (§4.7)."""
    meeting(src, out_packet=out_packet)
    chip, cluster, slice_, time, packet = _stream(src)
    params = verify_cast(src.dtype, dtype, packet=packet, out_packet=out_packet)
    return check_type(CAST, (dtype,), (chip, cluster, slice_, time, out_packet)), params


def commit_trim(src: TensorType, *, out_packet: Mapping) -> tuple[TensorType, int]:
    """``commit_trim(out_packet=)``: keep the first 8, 16, 24 or 32 bytes of each packet (§4.8)."""
    meeting(src, out_packet=out_packet)
    chip, cluster, slice_, time, packet = _stream(src)
    kept = verify_commit_trim(src.dtype, packet=packet, out_packet=out_packet)
    return check_type(COMMIT_TRIM, src.dtypes, (chip, cluster, slice_, time, out_packet)), kept


def commit_cast(src: TensorType, *, dtype: str, context: str = "main") -> tuple[TensorType, int]:
    """``commit_cast(D)``: the commit adapter narrows f32 to bf16 on the way into DM (§4.8); returns the bytes
    written per packet."""
    written = verify_commit_cast(src.dtype, dtype, packet=src.layout("Packet"), context=context)
    return check_type(COMMIT_CAST, (dtype,), src.layouts), written


def commit_cast_relu(src: TensorType, *, dtype: str, context: str = "main") -> tuple[TensorType, int]:
    """``commit_cast_relu(D)``: ``commit_cast`` of ``max(x, 0)`` (§4.8)."""
    written = verify_commit_cast(src.dtype, dtype, packet=src.layout("Packet"), context=context, relu=True)
    return check_type(COMMIT_CAST, (dtype,), src.layouts), written


def commit(src: TensorType, *, element: Mapping, context: str = "main") -> tuple[TensorType, CommitParams]:
    """``commit(element=)``: write the stream into a new DM tensor over ``[Chip, Cluster, Slice, Element]`` (§4.8)."""
    meeting(src, element=element)
    chip, cluster, slice_, time, packet = _stream(src)
    params = verify_commit(src.dtype, time=time, packet=packet, element=element, context=context)
    return check_type(DM, src.dtypes, (chip, cluster, slice_, element)), params


def commit_view(src: TensorType, dst: TensorType, *, context: str = "main") -> tuple[TensorType, CommitParams]:
    """``commit_view(dst)``: write the stream into a write view of a DM tensor, on the stream's grid (§4.8)."""
    stage = Stage.COMMIT_VIEW
    if dst.family is not DM_VIEW_MUT:
        raise LayoutError(stage, "NotAWriteView", f"commit_view writes into a write view of a DM tensor, got a "
                          f"{dst.family.name}", hint="pass dm.view_mut() or a tile of it")
    if dst.dtype != src.dtype:
        raise LayoutError(
            stage, "DtypeMismatch", f"commit_view: the stream is {src.dtype} but the view holds {dst.dtype}",
            hint="cast the stream to the view's dtype first",
        )
    for name, a, b in zip(("Chip", "Cluster", "Slice"), src.grid, dst.grid):
        if a != b:
            raise LayoutError(
                stage, f"{name}Mismatch", f"commit_view: the view's {name} {b} differs from the stream's {name} {a}",
                hint=f"write into a view with the stream's {name} layout",
            )
    meeting(src, dst)
    chip, cluster, slice_, time, packet = _stream(src)
    params = verify_commit(src.dtype, time=time, packet=packet, element=dst.layout("Element"), context=context,
                           view=True)
    return dst, params
