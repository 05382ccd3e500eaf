"""The error codes the plugin reports under, so users can enable, disable or ignore each one."""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

_CATEGORY: Final = "tcpdsl"

LAYOUT: Final = ErrorCode("tcpdsl-layout", "A layout breaks a tcpdsl stage or constructor rule", _CATEGORY)
DTYPE: Final = ErrorCode("tcpdsl-dtype", "A dtype pair the Multiplier has no MAC for", _CATEGORY)
SYNTAX: Final = ErrorCode("tcpdsl-syntax", "A malformed mapping expression", _CATEGORY)
AXIS: Final = ErrorCode("tcpdsl-axis", "An axis declaration the static checker rejects", _CATEGORY)
UNCHECKED: Final = ErrorCode("tcpdsl-unchecked", "A mapping the plugin cannot read statically", _CATEGORY)
INTERNAL: Final = ErrorCode("tcpdsl-internal", "An internal failure of the tcpdsl plugin", _CATEGORY)
