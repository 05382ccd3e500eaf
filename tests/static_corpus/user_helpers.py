"""Shared by the user_* modules: numpy data, a device, and the numpy reference of a matmul."""

import numpy as np
import numpy.typing as npt

import tcpdsl as tcp


def device() -> tcp.Device:
    return tcp.Device(tcp.Topology(chips=1, pes=8))


def data(rows: int, cols: int, seed: int = 0) -> npt.NDArray[np.float32]:
    return np.random.default_rng(seed).standard_normal((rows, cols)).astype(np.float32)


def reference(x: npt.NDArray[np.float32], w: npt.NDArray[np.float32]) -> npt.NDArray[np.float32]:
    """out[a, c] = sum_b x[a, b] * w[c, b], computed by numpy."""
    out: npt.NDArray[np.float32] = np.einsum("ab,cb->ac", x, w)
    return out
