"""Block-scaled formats: OCP MX quantization and matmul, Ascend scale/index layouts, 2:4 sparsity.

docs/block-formats.md explains every rule here; §0 maps its sections to these modules. The package
is layer 4 (docs/architecture.md): it imports ``tcpdsl.errors`` and ``tcpdsl.algebra`` (each layout
is also a mapping expression) and nothing from the contraction chain above it.
"""

from __future__ import annotations

from tcpdsl.mx.array import MxArray
from tcpdsl.mx.formats import FORMATS, ElementFormat, e8m0_decode, e8m0_encode, element_format
from tcpdsl.mx.gm_forms import scale_a_dn, scale_a_from_dn, scale_b_dn, scale_b_from_nd, scale_b_nd
from tcpdsl.mx.layouts import index_position, nn_layout, nn_offset, zn_layout, zn_offset, zz_layout, zz_offset
from tcpdsl.mx.mappings import LayoutMapping, apply_mapping, nn_mapping, zn_mapping, zz_mapping
from tcpdsl.mx.matmul import matmul
from tcpdsl.mx.packing import pack_fp4x2, pack_uint2, unpack_fp4x2, unpack_uint2
from tcpdsl.mx.quantize import Int8Clamp, dequantize, quantize
from tcpdsl.mx.sparse import densify_2of4, sparse_matmul, unpack_indices

__all__ = [
    "FORMATS",
    "ElementFormat",
    "Int8Clamp",
    "LayoutMapping",
    "MxArray",
    "apply_mapping",
    "densify_2of4",
    "dequantize",
    "e8m0_decode",
    "e8m0_encode",
    "element_format",
    "index_position",
    "matmul",
    "nn_layout",
    "nn_mapping",
    "nn_offset",
    "pack_fp4x2",
    "pack_uint2",
    "quantize",
    "scale_a_dn",
    "scale_a_from_dn",
    "scale_b_dn",
    "scale_b_from_nd",
    "scale_b_nd",
    "sparse_matmul",
    "unpack_fp4x2",
    "unpack_indices",
    "unpack_uint2",
    "zn_layout",
    "zn_mapping",
    "zn_offset",
    "zz_layout",
    "zz_mapping",
    "zz_offset",
]
