"""``cuvil.nd``: arrays for the deployment runtime (``cuvil.nd.array`` as ``tvm.nd.array``).

An :class:`NDArray` is a C-contiguous host array with its device. It wraps a
NumPy array without copying when that one is already C-contiguous, and
converts both ways through the buffer protocol and DLPack
(``np.from_dlpack(a)``, ``torch.from_dlpack(a)``; :func:`from_dlpack` for the
reverse), so NumPy and PyTorch tensors on the CPU pass without copies.
"""

from __future__ import annotations

import numpy as np

__all__ = ["NDArray", "array", "empty", "from_dlpack"]

_DEVICES = ("cpu",)


def _check_device(device: str) -> str:
    name = str(device)
    if name.split(":")[0] not in _DEVICES:
        raise ValueError(
            f"cuvil.nd: device {name!r} is not one this runtime holds arrays on "
            f"({', '.join(_DEVICES)}); fix: device='cpu'"
        )
    return "cpu"


class NDArray:
    """A C-contiguous array on a device (``cpu``): ``.numpy()``, ``.shape``, ``.dtype``."""

    __slots__ = ("_data", "device")

    def __init__(self, data: np.ndarray, device: str = "cpu"):
        self._data = np.ascontiguousarray(data)
        self.device = _check_device(device)

    @property
    def shape(self) -> tuple[int, ...]:
        return self._data.shape

    @property
    def dtype(self) -> np.dtype:
        return self._data.dtype

    @property
    def ndim(self) -> int:
        return self._data.ndim

    def numpy(self) -> np.ndarray:
        """The array as NumPy (the same memory, no copy)."""
        return self._data

    def __array__(self, dtype=None, copy=None):
        if dtype is not None and np.dtype(dtype) != self._data.dtype:
            return self._data.astype(dtype)
        return self._data.copy() if copy else self._data

    def __dlpack__(self, **kwargs):
        return self._data.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._data.__dlpack_device__()

    def __repr__(self) -> str:
        return f"<cuvil.nd.NDArray {self.dtype}{list(self.shape)} on {self.device}>"


def array(data, dtype=None, device: str = "cpu") -> NDArray:
    """An :class:`NDArray` of ``data`` (a NumPy array, anything NumPy accepts, or a DLPack
    tensor); no copy when it already is C-contiguous of that dtype."""
    if hasattr(data, "__dlpack__") and not isinstance(data, (np.ndarray, NDArray)):
        data = np.from_dlpack(data)
    if isinstance(data, NDArray):
        data = data.numpy()
    return NDArray(np.asarray(data, dtype=dtype), device)


def empty(shape, dtype="float32", device: str = "cpu") -> NDArray:
    """An uninitialized :class:`NDArray`."""
    return NDArray(np.empty(shape, dtype), device)


def from_dlpack(tensor) -> NDArray:
    """An :class:`NDArray` sharing the memory of a DLPack tensor (PyTorch, NumPy, CuPy on CPU)."""
    return NDArray(np.from_dlpack(tensor))
