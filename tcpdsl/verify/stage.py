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
