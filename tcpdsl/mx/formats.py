"""MX element formats and the E8M0 shared-scale type (docs/block-formats.md §1.2, §1.3).

An E8M0 code ``c`` in ``0..254`` means ``2**(c - 127)``; ``255`` is NaN; there is no zero and no
infinity. Codes are kept as ``uint8`` and always built from integer exponents: casting a float to
``ml_dtypes.float8_e8m0fnu`` rounds to the nearest power of two (ties up) and maps 0 to NaN, which
is not the MX scale rule.

Code 0 decodes to ``2**-127`` here, the OCP reading; one Ascend host library reads 0.0
(docs/block-formats.md §8).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import ml_dtypes
import numpy as np
import numpy.typing as npt

from tcpdsl.errors import DtypeError, LayoutError

E8M0_BIAS: Final = 127
E8M0_NAN: Final = 255
E8M0_MIN_EXPONENT: Final = -127
E8M0_MAX_EXPONENT: Final = 127
MX_STAGE: Final = "mx"


@dataclass(frozen=True)
class ElementFormat:
    """One MX element type: its storage dtype and the constants the quantizer needs.

    ``emax`` is the exponent of the largest normal (``floor(log2(max_normal))``); ``mantissa_bits``
    and ``min_normal`` give the spacing of representable values (``ulp``). MXINT8 stores ``P`` as
    ``int8`` with an implicit factor ``2**-6``; its ``ulp`` is that factor everywhere.
    """

    name: str
    dtype: np.dtype[Any]
    emax: int
    mantissa_bits: int
    max_normal: float
    min_normal: float
    min_subnormal: float
    is_int: bool = False

    def ulp(self, magnitude: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """Spacing of representable values at each ``|q|`` in element units (below saturation)."""
        if self.is_int:
            return np.full(magnitude.shape, self.min_subnormal)
        _, exp = np.frexp(np.maximum(magnitude, self.min_normal))
        spacing: npt.NDArray[np.float64] = np.ldexp(1.0, exp - 1 - self.mantissa_bits)
        return spacing


def _fmt(name: str, dtype: Any, emax: int, mbits: int, maxn: float, minn: float, mins: float) -> ElementFormat:
    return ElementFormat(name, np.dtype(dtype), emax, mbits, maxn, minn, mins)


FORMATS: Final[dict[str, ElementFormat]] = {
    "e4m3": _fmt("e4m3", ml_dtypes.float8_e4m3fn, 8, 3, 448.0, 2.0**-6, 2.0**-9),
    "e5m2": _fmt("e5m2", ml_dtypes.float8_e5m2, 15, 2, 57344.0, 2.0**-14, 2.0**-16),
    "e3m2": _fmt("e3m2", ml_dtypes.float6_e3m2fn, 4, 2, 28.0, 0.25, 0.0625),
    "e2m3": _fmt("e2m3", ml_dtypes.float6_e2m3fn, 2, 3, 7.5, 1.0, 0.125),
    "e2m1": _fmt("e2m1", ml_dtypes.float4_e2m1fn, 2, 1, 6.0, 1.0, 0.5),
    "int8": ElementFormat("int8", np.dtype(np.int8), 0, 6, 127.0 / 64.0, 2.0**-6, 2.0**-6, is_int=True),
}

_ALIASES: Final = {
    "fp8_e4m3": "e4m3",
    "fp8_e5m2": "e5m2",
    "fp6_e3m2": "e3m2",
    "fp6_e2m3": "e2m3",
    "fp4_e2m1": "e2m1",
    "mxint8": "int8",
}

INT8_SCALE: Final = 64.0  # MXINT8 element value = P / 64


def element_format(name: str) -> ElementFormat:
    """The format called ``name`` (``"e4m3"``, ``"fp8_e4m3"``, ...); DtypeError for unknown names."""
    fmt = FORMATS.get(_ALIASES.get(name, name)) if isinstance(name, str) else None
    if fmt is None:
        raise DtypeError(
            MX_STAGE,
            "UnknownElementFormat",
            f"{name!r} is not an MX element format",
            hint="use one of " + ", ".join(sorted(FORMATS)),
        )
    return fmt


def e8m0_decode(codes: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """The value of each E8M0 code: ``2**(code - 127)``, NaN for 255."""
    c = _codes(codes)
    out: npt.NDArray[np.float64] = np.where(c == E8M0_NAN, np.nan, np.ldexp(1.0, c.astype(np.int32) - E8M0_BIAS))
    return out


def e8m0_encode(exponent: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    """The E8M0 code of ``2**exponent`` for integer exponents in ``-127..127``."""
    e = read_array(exponent, MX_STAGE, "the exponents")
    if e.dtype.kind not in "iu":
        raise DtypeError(MX_STAGE, "ScaleExponentNotInteger", f"E8M0 exponents must be integers, got {e.dtype}")
    bad = (e < E8M0_MIN_EXPONENT) | (e > E8M0_MAX_EXPONENT)
    if np.any(bad):
        first = int(e[bad].flat[0])
        raise LayoutError(
            MX_STAGE,
            "ScaleExponentRange",
            f"exponent {first} is outside the E8M0 range {E8M0_MIN_EXPONENT}..{E8M0_MAX_EXPONENT}",
            hint="clamp the shared exponent before encoding",
        )
    return (e.astype(np.int32) + E8M0_BIAS).astype(np.uint8)


def read_array(data: object, stage: str, what: str) -> npt.NDArray[Any]:
    """``np.asarray(data)``, or a LayoutError when numpy cannot read it (ragged lists, odd objects)."""
    try:
        return np.asarray(data)
    except (TypeError, ValueError, OverflowError) as error:
        raise LayoutError(
            stage, "NotAnArray", f"cannot read {what} as an array: {str(error).splitlines()[0]}",
            hint="pass a numpy array or a rectangular nested list of numbers",
        ) from None


def _codes(codes: npt.ArrayLike) -> npt.NDArray[np.uint8]:
    c = read_array(codes, MX_STAGE, "the E8M0 codes")
    if c.dtype != np.uint8:
        raise DtypeError(MX_STAGE, "ScaleDtype", f"E8M0 codes must be uint8, got {c.dtype}", hint="store scales as uint8 codes")
    return c
