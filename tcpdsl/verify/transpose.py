"""``transpose``: a small matrix in the innermost time steps and the packet (docs/stage-rules.md §5.2).

``Time [outer, Rows, PPC] / Packet [Cols # F]`` becomes ``Time [outer, (PPC, Cols) = out_rows] /
Packet [Rows # F]``. The rows are found from the output: the live part of OutPacket must sit in
Time at one stride, ``packets_per_col``, which fixes the whole placement. The verifier rebuilds
OutTime from that placement and compares it with what was declared.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, divide_terms_or_reason, remove_padding, slots_of, split_at
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.dtypes import bits_of, flit_elements
from tcpdsl.verify.stage import Stage

STAGE: Final = Stage.TRANSPOSE
# Element bits -> (valid_size, max in_rows, legal in_cols): a row of the output holds at most 8 bytes.
WIDTHS: Final[dict[int, tuple[int, int, frozenset[int]]]] = {
    4: (16, 16, frozenset({16, 32})),
    8: (8, 8, frozenset({8, 16, 32})),
    16: (8, 4, frozenset({8, 16, 32})),
    32: (8, 2, frozenset({8, 16, 32})),
}
# The zero-point-subtracted stagings hold 5- and 9-bit values in 4- and 8-bit containers; the engine
# has no width for them (they only feed the contraction).
VALUE_BITS: Final[dict[str, int]] = {"i5": 5, "i9": 9}
BUFFER_COLUMNS: Final = 16


@dataclass(frozen=True)
class TransposeParams:
    """The engine's configuration: an ``in_rows x in_cols`` matrix, ``in_cols = packets_per_col *
    valid_size``, trimmed to ``out_rows`` output rows; ``double_buffered`` when ``in_cols`` fits one buffer."""

    valid_size: int
    in_rows: int
    in_cols: int
    packets_per_col: int
    out_rows: int
    iterations: int
    double_buffered: bool


def check_transpose_config(bits: int, params: TransposeParams) -> None:
    """The consistency of a configuration with the element width (also a backstop on derived ones)."""
    valid_size, _, legal = WIDTHS[bits]
    if params.valid_size != valid_size:
        raise LayoutError(
            STAGE,
            "ConfigPacketWidth",
            f"transpose: valid_size {params.valid_size} must be the {bits}-bit packet width {valid_size}",
            hint=f"{bits}-bit elements are read {valid_size} per flit",
        )
    if params.in_cols != params.packets_per_col * valid_size or params.in_cols not in legal:
        raise LayoutError(
            STAGE,
            "ConfigColumns",
            f"transpose: in_cols {params.in_cols} must be packets_per_col {params.packets_per_col} * valid_size "
            f"{valid_size} and one of {', '.join(map(str, sorted(legal)))} for {bits}-bit elements",
            hint="gather fewer packets per column: put fewer Time steps inside the row axis",
        )
    if params.out_rows > params.in_cols:
        raise LayoutError(
            STAGE,
            "ConfigRows",
            f"transpose: out_rows {params.out_rows} must be at most in_cols {params.in_cols}",
            hint="the output has one row per input column: shorten the columns part of OutTime",
        )


@memoized
def verify_transpose(
    dtype: str, *, time: Mapping, packet: Mapping, out_time: Mapping, out_packet: Mapping
) -> TransposeParams:
    """Check ``[Time, Packet] -> [OutTime, OutPacket]`` and derive the engine's configuration."""
    bits = VALUE_BITS.get(dtype) or bits_of(dtype, STAGE)
    if bits not in WIDTHS:
        raise DtypeError(
            STAGE,
            "UnsupportedElementBits",
            f"transpose: element bits ({bits}) must be one of 4, 8, 16, 32",
            hint=f"{dtype} only feeds contract_outer; transpose a 4, 8, 16 or 32-bit dtype",
        )
    valid_size, max_rows, _ = WIDTHS[bits]
    flit = flit_elements(bits)
    if packet.size != flit:
        raise LayoutError(
            STAGE,
            "InputPacketSize",
            f"transpose: the input packet must be 32 bytes, got {packet.size} elements (expected {flit}) "
            f"(Packet {packet} of {dtype})",
            hint=f"pad the input packet to one flit, `# {flit}`",
        )
    if out_packet.size != flit:
        raise LayoutError(
            STAGE,
            "OutputPacketSize",
            f"transpose: the output packet must be 32 bytes, got {out_packet.size} elements (expected {flit}) "
            f"(OutPacket {out_packet} of {dtype})",
            hint=f"pad OutPacket to one flit, `# {flit}`",
        )
    beyond, cols = split_at(packet, valid_size)
    if _live(beyond):
        raise LayoutError(
            STAGE,
            "InputPacketPadding",
            f"transpose: the input packet beyond valid_size ({valid_size}) must be `1 # n` pure padding, got: "
            f"{beyond} (Packet {packet})",
            hint=f"keep the live elements in the first {valid_size} lanes and pad the rest with `#`",
        )
    beyond, rows_cells = split_at(out_packet, max_rows)
    if _live(beyond):
        raise LayoutError(
            STAGE,
            "OutputPacketPadding",
            f"transpose: the output packet beyond max in_rows ({max_rows}) must be `1 # n` pure padding, got: "
            f"{beyond} (OutPacket {out_packet})",
            hint=f"an output row holds at most {max_rows} elements (8 bytes): transpose fewer rows at once",
        )
    rows = remove_padding(rows_cells)
    ppc = _packets_per_col(rows, time)
    if time.size % ppc:
        raise LayoutError(
            STAGE,
            "PacketsPerColDoesNotSplitTime",
            f"transpose: packets_per_col ({ppc}) does not split Time ({time})",
            hint="make the Time steps inside the row axis a divisor of Time",
        )
    rest, gathered = split_at(time, ppc)
    if rest.size % rows.size:
        raise LayoutError(
            STAGE,
            "InRowsDoesNotSplitTime",
            f"transpose: in_rows ({rows.size}) does not split Time rest ({rest})",
            hint="the rows of OutPacket must be whole Time steps",
        )
    outer, placed = split_at(rest, rows.size)
    out_rows = out_time.size // outer.size if out_time.size % outer.size == 0 else 0
    in_cols = ppc * valid_size
    columns = gathered.pair(cols)
    expected = outer.pair(columns.resize(out_rows)) if 0 < out_rows <= in_cols else None
    if placed != rows or (expected is not None and expected != out_time) or out_rows == 0:
        raise LayoutError(
            STAGE,
            "CannotPlaceInRows",
            f"transpose: cannot place in_rows in Time ({time}) consistently with OutTime ({out_time}) | "
            f"OutPacket ({out_packet})",
            hint=f"with rows {rows} at Time stride {ppc}, declare OutTime as {outer.pair(columns)} "
            "(its columns part may be cut short)",
        )
    params = TransposeParams(
        valid_size=valid_size,
        in_rows=rows.size,
        in_cols=in_cols,
        packets_per_col=ppc,
        out_rows=out_rows,
        iterations=outer.size,
        double_buffered=in_cols <= BUFFER_COLUMNS,
    )
    check_transpose_config(bits, params)
    return params


def _live(part: Mapping) -> bool:
    return any(slot.live is not None for slot in slots_of(part))


def _packets_per_col(rows: Mapping, time: Mapping) -> int:
    """The Time stride of the rows: every live row term must sit in Time at the same multiple."""
    if rows.size == 1:
        return 1
    found = divide_terms_or_reason(time, rows)
    if isinstance(found, str):
        raise LayoutError(
            STAGE,
            "RowEvidenceNotPresent",
            f"transpose: the row evidence ({rows}) is not present in Time ({time}): {found}",
            hint="OutPacket's rows must be Time steps of the input",
        )
    if not found:
        raise LayoutError(
            STAGE,
            "NoLiveRowTerms",
            f"transpose: the row evidence ({rows}) has no live row terms",
            hint="name the input Time axis the rows come from in OutPacket",
        )
    if any(term.dividend_stride % term.divisor_stride for term in found):
        raise LayoutError(
            STAGE,
            "RowEvidenceNotAligned",
            f"transpose: the row evidence ({rows}) is not aligned in Time ({time})",
            hint="the rows must sit in Time at a whole multiple of their OutPacket stride",
        )
    strides = {term.dividend_stride // term.divisor_stride for term in found}
    if len(strides) > 1:
        raise LayoutError(
            STAGE,
            "InconsistentPacketsPerCol",
            f"transpose: the row evidence ({rows}) implies inconsistent packets_per_col sizes in Time ({time})",
            hint="keep the row axes together in Time, in OutPacket's order",
        )
    return strides.pop()


