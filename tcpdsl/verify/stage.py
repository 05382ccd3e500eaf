"""The stages of the tensor unit, by the names their methods and errors carry."""

from __future__ import annotations

import enum


class Stage(enum.StrEnum):
    """A stage call. Its value is the method name, which ``LayoutError.stage`` also carries."""

    TO_TRF = "to_trf"
    CONTRACT_OUTER = "contract_outer"
    CONTRACT_PACKET = "contract_packet"
    CONTRACT_TIME = "contract_time"
    CONTRACT_LANE = "contract_lane"
    SWITCH = "switch"
    TRANSPOSE = "transpose"
    BEGIN = "begin"
    FETCH = "fetch"
    FETCH_CAST = "fetch_cast"
    COLLECT = "collect"
    TO_VRF = "to_vrf"
    CAST = "cast"
    COMMIT_TRIM = "commit_trim"
    COMMIT_CAST = "commit_cast"
    COMMIT_CAST_RELU = "commit_cast_relu"
    COMMIT = "commit"
    COMMIT_VIEW = "commit_view"
    TO_DM = "to_dm"
    TO_DM_VIEW = "to_dm_view"
    TO_HBM = "to_hbm"
    TO_HBM_VIEW = "to_hbm_view"
    RESHAPE = "reshape"
    TILE = "tile"
    PAD = "pad"


class VectorStage(enum.StrEnum):
    """A method of a vector pass (docs/stage-rules.md §6), by the name ``LayoutError.stage`` carries.

    Kept apart from :class:`Stage` while the tensor classes, the plugin and the composer, which walk
    every ``Stage``, know only the contraction chain.
    """

    VECTOR_INIT = "vector_init"
    VECTOR_INTRA_SLICE_TAG = "vector_intra_slice_tag"
    VECTOR_LOGIC = "vector_logic"
    VECTOR_FXP = "vector_fxp"
    VECTOR_FXP_TO_FP = "vector_fxp_to_fp"
    VECTOR_NARROW_SPLIT = "vector_narrow_split"
    VECTOR_NARROW_TRIM = "vector_narrow_trim"
    VECTOR_FP_UNARY = "vector_fp_unary"
    VECTOR_FP_BINARY = "vector_fp_binary"
    VECTOR_FP_TERNARY = "vector_fp_ternary"
    VECTOR_INTRA_SLICE_REDUCE = "vector_intra_slice_reduce"
    VECTOR_FP_DIV = "vector_fp_div"
    VECTOR_WIDEN_CONCAT = "vector_widen_concat"
    VECTOR_WIDEN_PAD = "vector_widen_pad"
    VECTOR_FP_TO_FXP = "vector_fp_to_fxp"
    VECTOR_CLIP = "vector_clip"
    VECTOR_REINTERPRET = "vector_reinterpret"
    VECTOR_STASH = "vector_stash"
    VECTOR_INTER_SLICE_REDUCE = "vector_inter_slice_reduce"
    VECTOR_FINAL = "vector_final"
