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
