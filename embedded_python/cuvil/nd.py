"""``cuvil.nd``: arrays for the deployment runtime (``cuvil.nd.array`` as ``tvm.nd.array``).

An :class:`NDArray` is a C-contiguous array on a device. On the CPU it wraps a
NumPy array without copying when that one is already C-contiguous, and
converts both ways through the buffer protocol and DLPack
(``np.from_dlpack(a)``, ``torch.from_dlpack(a)``; :func:`from_dlpack` for the
reverse), so NumPy and PyTorch tensors on the CPU pass without copies.

On a GPU (``device="cuda:0"``) it holds device memory: ``cuvil.nd.array(x,
device="cuda:0")`` copies ``x`` there once, functions compiled for
``target="cuda"`` take and return such arrays without copying, ``.numpy()``
copies back, and DLPack moves them to and from PyTorch or CuPy without copies
(``torch.from_dlpack(a)``, ``cuvil.nd.from_dlpack(t)`` for a CUDA tensor ``t``).
"""

from __future__ import annotations

import numpy as np

__all__ = ["NDArray", "array", "empty", "from_dlpack", "is_cuda_tensor"]

_DEVICES = ("cpu", "cuda")
_DLPACK_CUDA = 2  # DLPack's device type of CUDA memory


def _check_device(device: str) -> str:
    """``"cpu"`` or ``"cuda:N"`` (a bare ``"cuda"`` is device 0)."""
    name = str(device)
    kind, _, index = name.partition(":")
    if kind not in _DEVICES or (index and not index.isdigit()):
        raise ValueError(
            f"cuvil.nd: device {name!r} is not one this runtime holds arrays on "
            f"({', '.join(_DEVICES)}); fix: device='cpu' or device='cuda:0'"
        )
    return "cpu" if kind == "cpu" else f"cuda:{int(index or 0)}"


def _cuda():
    from ._jit import _extension

    return _extension().cuda


class NDArray:
    """A C-contiguous array on a device (``cpu``, ``cuda:N``): ``.numpy()``, ``.shape``,
    ``.dtype``."""

    __slots__ = ("_data", "device", "_memory", "_ptr", "_shape", "_dtype")

    def __init__(self, data: np.ndarray, device: str = "cpu"):
        self.device = _check_device(device)
        self._data = np.ascontiguousarray(data)
        self._shape, self._dtype = self._data.shape, self._data.dtype
        self._memory = self._ptr = None
        if self.device != "cpu":
            # Copied to the GPU once; no host copy is kept.
            self._memory = _cuda().DeviceBuffer(self._data.nbytes, _index(self.device))
            self._memory.upload(self._data)
            self._ptr, self._data = self._memory.ptr, None

    @classmethod
    def _on_device(cls, memory, device: str, shape, dtype, ptr: int):
        """An array over GPU memory at ``ptr`` that ``memory`` keeps alive."""
        array = cls.__new__(cls)
        array._data, array._memory, array._ptr, array.device = None, memory, ptr, device
        array._shape, array._dtype = tuple(int(s) for s in shape), np.dtype(dtype)
        return array

    @property
    def is_cuda(self) -> bool:
        return self._data is None

    @property
    def data_ptr(self) -> int:
        """The address of the first element (device memory for a GPU array)."""
        return self._ptr if self.is_cuda else self._data.ctypes.data

    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def dtype(self) -> np.dtype:
        return self._dtype

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def nbytes(self) -> int:
        return int(np.prod(self._shape, dtype=np.int64)) * self._dtype.itemsize

    def numpy(self) -> np.ndarray:
        """The array as NumPy: the same memory on the CPU, a copy from a GPU."""
        if not self.is_cuda:
            return self._data
        host = np.empty(self._shape, self._dtype)
        _cuda().copy_to_host(self._ptr, _index(self.device), host)
        return host

    def __array__(self, dtype=None, copy=None):
        data = self.numpy()
        if dtype is not None and np.dtype(dtype) != data.dtype:
            return data.astype(dtype)
        return data.copy() if copy and not self.is_cuda else data

    def __dlpack__(self, stream=None, **kwargs):
        if not self.is_cuda:
            return self._data.__dlpack__(stream=stream, **kwargs)
        # Cuvil's calls finish before they return: nothing to order on `stream`.
        return _cuda().to_dlpack(
            self, self._ptr, _index(self.device), list(self._shape), self._dtype.name
        )

    def __dlpack_device__(self):
        if not self.is_cuda:
            return self._data.__dlpack_device__()
        return (_DLPACK_CUDA, _index(self.device))

    def __repr__(self) -> str:
        return f"<cuvil.nd.NDArray {self.dtype}{list(self.shape)} on {self.device}>"


def _index(device: str) -> int:
    return int(device.partition(":")[2] or 0)


def array(data, dtype=None, device: str = "cpu") -> NDArray:
    """An :class:`NDArray` of ``data`` (a NumPy array, anything NumPy accepts, or a DLPack
    tensor) on ``device``; on the CPU no copy when it already is C-contiguous of that
    dtype, on a GPU one copy there."""
    if isinstance(data, NDArray):
        if data.is_cuda and _check_device(device) == data.device and dtype is None:
            return data
        data = data.numpy()
    elif hasattr(data, "__dlpack__") and not isinstance(data, np.ndarray):
        if is_cuda_tensor(data):
            wrapped = from_dlpack(data)
            return array(wrapped, dtype, device) if dtype is not None else wrapped
        data = np.from_dlpack(data)
    return NDArray(np.asarray(data, dtype=dtype), device)


def empty(shape, dtype="float32", device: str = "cpu") -> NDArray:
    """An uninitialized :class:`NDArray`."""
    device = _check_device(device)
    if device == "cpu":
        return NDArray(np.empty(shape, dtype), device)
    shape = tuple(int(s) for s in np.atleast_1d(shape)) if np.ndim(shape) else (int(shape),)
    nbytes = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    memory = _cuda().DeviceBuffer(nbytes, _index(device))
    return NDArray._on_device(memory, device, shape, dtype, memory.ptr)


def is_cuda_tensor(value) -> bool:
    """A ``cuvil.nd`` array on a GPU or a DLPack tensor in CUDA memory (PyTorch, CuPy)."""
    if isinstance(value, np.ndarray):
        return False
    device = getattr(value, "__dlpack_device__", None)
    try:
        return device is not None and device()[0] == _DLPACK_CUDA
    except Exception:  # noqa: BLE001 - a foreign object's method
        return False


def from_dlpack(tensor) -> NDArray:
    """An :class:`NDArray` sharing the memory of a DLPack tensor: PyTorch, NumPy or CuPy on
    the CPU, PyTorch or CuPy on a CUDA GPU (which must be C-contiguous)."""
    if isinstance(tensor, NDArray):
        return tensor
    if not is_cuda_tensor(tensor):
        return NDArray(np.from_dlpack(tensor))
    ptr, index, shape, dtype, holder = _cuda().from_dlpack(tensor.__dlpack__())
    return NDArray._on_device(holder, f"cuda:{index}", shape, dtype, ptr)
