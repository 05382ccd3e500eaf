"""Memory tensors: the dtypes memory holds, and the constructor rules of HBM and DM tensors
(docs/stage-rules.md §4.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from tcpdsl.algebra import Mapping, pairs
from tcpdsl.errors import DtypeError, LayoutError
from tcpdsl.verify.cache import memoized
from tcpdsl.verify.dtypes import BITS
from tcpdsl.verify.sequencer import BITS_PER_BYTE

# Dtypes that may sit in HBM or DM, with their bits; i5 and i9 exist only inside a stream.
MATERIALIZABLE: Final[dict[str, int]] = {
    "f4e2m1": 4,
    "i4": 4,
    "i8": 8,
    "u8": 8,
    "f8e4m3": 8,
    "f8e5m2": 8,
    "i16": 16,
    "bf16": 16,
    "i32": 32,
    "f32": 32,
}
CLUSTER_SIZES: Final = (1, 2)
SLICE_SIZES: Final = (64, 128, 256)
DM_SLICE_BYTES: Final = 512 * 1024
DM_TENSOR: Final = "DmTensor"
HBM_TENSOR: Final = "HbmTensor"


def materializable_bits(stage: str, dtype: str) -> int:
    """The bits of a dtype that memory may hold; a DtypeError ``Materializable`` otherwise."""
    bits = MATERIALIZABLE.get(dtype)
    if bits is None:
        raise DtypeError(
            stage,
            "Materializable",
            f"{stage}: dtype {dtype} cannot be held in memory; memory dtypes are {', '.join(MATERIALIZABLE)}",
            hint="the zero-point dtypes i5 and i9 only feed contract_outer; cast to a memory dtype first",
        )
    return bits


def stream_bits(stage: str, dtype: str) -> int:
    """The wire bits of any stream dtype: the memory dtypes and the zero-point dtypes i5 and i9."""
    bits = MATERIALIZABLE.get(dtype, BITS.get(dtype))
    if bits is None:
        raise DtypeError(
            stage,
            "UnknownDtype",
            f"unknown dtype {dtype!r}",
            hint=f"use one of {', '.join(MATERIALIZABLE)}",
        )
    return bits


def check_grid(stage: str, cluster: Mapping, slice_: Mapping) -> None:
    """``ClusterSize`` then ``SliceSize``: 1 or 2 clusters, 64, 128 or 256 slices."""
    if cluster.size not in CLUSTER_SIZES:
        raise LayoutError(
            stage,
            "ClusterSize",
            f"{stage}: the Cluster size must be 1 or 2, got {cluster.size} (Cluster {cluster})",
            hint="map at most 2 cells to Cluster, e.g. pad it with `# 2`",
        )
    if slice_.size not in SLICE_SIZES:
        raise LayoutError(
            stage,
            "SliceSize",
            f"{stage}: the Slice size must be 64, 128 or 256, got {slice_.size} (Slice {slice_})",
            hint="pad Slice to 64, 128 or 256 cells, e.g. `# 256`",
        )


def bytes_of(bits: int, n: int) -> int:
    return -(-n * bits // BITS_PER_BYTE)


@memoized
def check_dm_tensor(dtype: str, *, chip: Mapping, cluster: Mapping, slice_: Mapping, element: Mapping) -> int:
    """A DM tensor's constructor rules; returns the bytes each slice holds."""
    bits = materializable_bits(DM_TENSOR, dtype)
    check_grid(DM_TENSOR, cluster, slice_)
    held = bytes_of(bits, element.size)
    if held > DM_SLICE_BYTES:
        raise LayoutError(
            DM_TENSOR,
            "Capacity",
            f"{DM_TENSOR}: Element {element} of {dtype} takes {held} bytes per slice, more than the "
            f"{DM_SLICE_BYTES} bytes of a DM slice",
            hint="spread the tensor over more slices or clusters, or move part of it at a time with tile views",
        )
    return held


@memoized
def check_hbm_tensor(dtype: str, *, chip: Mapping, element: Mapping) -> int:
    """An HBM tensor's constructor rule; returns its bytes per chip."""
    return bytes_of(materializable_bits(HBM_TENSOR, dtype), element.size)


@dataclass(frozen=True)
class Tier:
    """Where a tensor lives: HBM (no Cluster and Slice) or DM, with its layouts."""

    chip: Mapping
    element: Mapping
    cluster: Mapping | None = None
    slice_: Mapping | None = None

    @property
    def dm(self) -> bool:
        return self.cluster is not None

    @property
    def whole(self) -> Mapping:
        if self.cluster is None or self.slice_ is None:
            return pairs([self.chip, self.element])
        return pairs([self.chip, self.cluster, self.slice_, self.element])

    @property
    def name(self) -> str:
        return "DM" if self.dm else "HBM"
