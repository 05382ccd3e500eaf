"""The mapping algebra: mapping nodes, what their cells hold, their canonical form, and the
operations the stage rules and the runtime use (docs/mapping-language.md).

Other layers import from here. Inside, the modules build on one another in this order:
``caches`` (the one registry of memos), ``cells``, ``sizes`` (the size rules), ``slots`` → ``nodes`` → ``semantics`` (cells by definition), ``form`` (the slot form of
a tree), ``decode`` → ``flat`` (plain digits read off cells) → ``canonical`` → ``render`` (the canonical text) → ``divide``, ``terms`` (what a layout
holds per axis) → ``operations`` → ``build`` and ``scope`` (text to nodes). The node methods
reach ``operations`` through one late import.
"""

from tcpdsl.algebra.caches import clear_caches
from tcpdsl.algebra.cells import OUT_OF_BOUNDS, Cell, Index, OutOfBounds, Pad, PaddingKind
from tcpdsl.algebra.decode import decode
from tcpdsl.algebra.divide import DivideTerm, divide_exact, divide_relaxed, divide_terms_or_reason
from tcpdsl.algebra.nodes import (
    IDENTITY,
    MAPPING_STAGE,
    Broadcast,
    Mapping,
    Modulo,
    Padding,
    Pair,
    Resize,
    Stride,
    StructKey,
    Symbol,
    as_int,
    as_mapping,
    pairs,
)
from tcpdsl.algebra.operations import (
    cell_at,
    equivalent,
    normalize,
    padding_per_stride,
    remove_padding,
    slots_of,
    split_at,
)
from tcpdsl.algebra.render import render_slot
from tcpdsl.algebra.scope import Axis, axis, check_axis_sizes, m, parse
from tcpdsl.algebra.slots import Bcast, Composite, Digit, Operand, Shared, Slot, Slots, joined_count, slot_strides
from tcpdsl.algebra.terms import (
    Held,
    NotATerm,
    digit_mapping,
    digit_text,
    held,
    logical_terms,
    parts_of,
    runs,
    shared_limits,
    term_of,
    text_of,
)

__all__ = [
    "Axis",
    "Bcast",
    "Broadcast",
    "Cell",
    "Composite",
    "Digit",
    "DivideTerm",
    "Held",
    "IDENTITY",
    "Index",
    "MAPPING_STAGE",
    "Mapping",
    "Modulo",
    "NotATerm",
    "OUT_OF_BOUNDS",
    "Operand",
    "OutOfBounds",
    "Pad",
    "Padding",
    "PaddingKind",
    "Pair",
    "Resize",
    "Shared",
    "Slot",
    "Slots",
    "Stride",
    "StructKey",
    "Symbol",
    "as_int",
    "as_mapping",
    "axis",
    "cell_at",
    "check_axis_sizes",
    "clear_caches",
    "decode",
    "digit_mapping",
    "digit_text",
    "divide_exact",
    "divide_relaxed",
    "divide_terms_or_reason",
    "equivalent",
    "held",
    "joined_count",
    "logical_terms",
    "m",
    "normalize",
    "padding_per_stride",
    "pairs",
    "parse",
    "parts_of",
    "remove_padding",
    "render_slot",
    "runs",
    "shared_limits",
    "slot_strides",
    "slots_of",
    "split_at",
    "term_of",
    "text_of",
]
