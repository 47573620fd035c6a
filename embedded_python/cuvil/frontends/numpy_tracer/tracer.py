"""Tracer objects: NumPy-like stand-ins that record each operation as a Cuvil IR op.

Ops are recorded through the shared :class:`cuvil.frontends.builder.IRBuilder`,
which asks the dialect's shape rules for each result type and locates each op
at the user's ``file:line:col``.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Sequence

import numpy as np

from ..._dtypes import is_traceable
from ..._errors import TraceError, UnsupportedConstructError
from ..._source import SourceLoc, user_location
from ..builder import IRBuilder, TensorType, Value

__all__ = ["Tracer", "TraceContext", "current_context", "unsupported"]

_state = threading.local()


def _stack() -> list:
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    return stack


def current_context() -> TraceContext | None:
    """The trace being recorded on this thread, if any."""
    stack = _stack()
    return stack[-1] if stack else None


def unsupported(construct: str, loc: SourceLoc | None = None) -> UnsupportedConstructError:
    """Build (and record on the active trace) an unsupported-construct error.

    Recording it means the trace falls back even if user code swallows the
    exception with a broad ``except``.
    """
    error = UnsupportedConstructError(construct, loc or user_location())
    ctx = current_context()
    if ctx is not None and ctx.unsupported is None:
        ctx.unsupported = error
    return error


class TraceContext:
    """Records the ops of one traced function, in program order."""

    def __init__(self, func_name: str, func_loc: SourceLoc):
        self.builder = IRBuilder(func_name, func_loc)
        self.func_name = self.builder.func_name
        self.func_loc = func_loc
        self.unsupported: UnsupportedConstructError | None = None
        # id(array) -> (array, Tracer): one constant op per captured array object.
        self._constants: dict[int, tuple[np.ndarray, Tracer]] = {}
        # Arrays from the user's scope baked in as constants (cuvil._captured).
        self.captured: list = []

    @contextlib.contextmanager
    def active(self):
        """Make this the current trace on this thread for the duration of the block."""
        stack = _stack()
        stack.append(self)
        try:
            yield self
        finally:
            stack.pop()

    def new_argument(self, shape: Sequence[int], dtype) -> Tracer:
        """Add a function argument of the given type and return its tracer."""
        value = self.builder.argument(TensorType.of(shape, dtype), self.func_loc, widen=False)
        return Tracer(self, value, is_input=True)

    def emit(
        self,
        name: str,
        operands: Sequence[Tracer],
        attributes: dict | None = None,
        loc: SourceLoc | None = None,
        result: tuple | None = None,
    ) -> Tracer:
        """Record ``name(operands) {attributes}`` and return its result.

        The op's shape rule gives the result type; ``result`` is the
        ``(shape, dtype)`` of the ops that take it as a parameter (reshape,
        broadcast_to, cast).
        """
        loc = loc or user_location()
        result_type = None if result is None else TensorType.of(*result)
        value = self.builder.op(
            name, [t._value for t in operands], attributes, loc=loc, result_type=result_type
        )
        dtype, shape = np.dtype(value.type.dtype), value.type.shape
        if not is_traceable(dtype):
            raise unsupported(f"{name} producing dtype {dtype}", loc)
        if any(d == 0 for d in shape):
            raise unsupported(f"{name} producing an empty array of shape {shape}", loc)
        return Tracer(self, value)

    def constant(self, array, dtype=None, loc: SourceLoc | None = None) -> Tracer:
        """A ``cuvil.constant`` holding ``array`` converted to ``dtype``.

        Arrays captured from the user's scope are baked in with the values they
        have at trace time; the same array object yields one constant op.
        """
        original = array
        array = np.asarray(array)
        dtype = array.dtype if dtype is None else np.dtype(dtype)
        key = (id(original), dtype)
        cached = self._constants.get(key)
        if cached is not None and cached[0] is original:
            return cached[1]
        if array.dtype == object or not is_traceable(array.dtype):
            raise unsupported(f"a constant of dtype {array.dtype}", loc)
        if not is_traceable(dtype):
            raise unsupported(f"a constant of dtype {dtype}", loc)
        frozen = np.array(array, dtype=dtype, copy=True)
        if any(d == 0 for d in frozen.shape):
            raise unsupported(f"a constant empty array of shape {frozen.shape}", loc)
        result = Tracer(self, self.builder.constant(frozen, loc or user_location()))
        self._constants[key] = (original, result)
        if isinstance(original, np.ndarray):
            from ..._captured import CapturedArray

            captured = CapturedArray.of(original)
            if captured is not None:
                self.captured.append(captured)
        return result

    def to_mlir(self, outputs: Sequence[Tracer], return_loc: SourceLoc, large=None) -> str:
        """The recorded function as MLIR text, returning ``outputs`` (``large``: how large
        constants are written, see ``_mlir.format_module``)."""
        return self.builder.module([t._value for t in outputs], return_loc, large)


def _binary(name):
    def method(self, other):
        return getattr(_ops, name)(self, other)

    method.__name__ = name
    return method


def _reflected(name):
    def method(self, other):
        return getattr(_ops, name)(other, self)

    method.__name__ = "r" + name
    return method


def _inplace(name):
    def method(self, other):
        return _ops.inplace(self, getattr(_ops, name)(self, other), name)

    method.__name__ = "i" + name
    return method


def _not_supported(description):
    def method(self, *args, **kwargs):
        raise unsupported(description)

    return method


class _Storage:
    """The memory a NumPy array would own; views of one array share it.

    In-place operators rebind a tracer to a new value, which is only faithful to
    NumPy when no other live tracer (a view, or the caller's argument) shares
    the memory; ``members`` tracks the live ones.
    """

    __slots__ = ("members", "is_input")

    def __init__(self, is_input: bool):
        self.members = weakref.WeakSet()
        self.is_input = is_input


class Tracer:
    """A traced array: static shape and dtype plus the IR value that computes it.

    It behaves like a read-only ``numpy.ndarray`` for the operations Cuvil can
    compile (operators, NumPy ufuncs and functions, methods such as ``.sum``).
    Anything else raises :class:`cuvil.UnsupportedConstructError`, which makes
    ``cuvil.jit`` run the original Python function instead.
    """

    __slots__ = ("_ctx", "_value", "shape", "dtype", "_storage", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, ctx, value: Value, is_input=False, storage=None):
        self._ctx = ctx
        self._rebind(value)
        self._storage = storage if storage is not None else _Storage(is_input)
        self._storage.members.add(self)

    def _rebind(self, value: Value) -> None:
        self._value = value
        self.shape = value.type.shape
        self.dtype = np.dtype(value.type.dtype)

    def _alias(self, value: Value | None = None) -> Tracer:
        """A new tracer sharing this one's memory (a NumPy view), optionally another value."""
        return Tracer(self._ctx, self._value if value is None else value, storage=self._storage)

    # ----- metadata -------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        if not all(isinstance(d, int) for d in self.shape):
            raise unsupported(f"the size of an array of symbolic shape {self.shape}")
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def mlir_type(self) -> str:
        return str(self._value.type)

    @property
    def T(self) -> Tracer:
        return _ops.transpose(self, None)

    @property
    def mT(self) -> Tracer:
        if self.ndim < 2:
            raise ValueError("matrix transpose with ndim < 2 is undefined")
        axes = list(range(self.ndim))
        axes[-2], axes[-1] = axes[-1], axes[-2]
        return _ops.transpose(self, axes)

    def __repr__(self) -> str:
        return f"Tracer({self._value.name}, shape={self.shape}, dtype={self.dtype})"

    def __format__(self, spec: str) -> str:
        if spec:
            raise unsupported(f"formatting a traced array with {spec!r} (needs its value)")
        return repr(self)

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    # ----- arithmetic operators --------------------------------------------
    __add__, __radd__, __iadd__ = _binary("add"), _reflected("add"), _inplace("add")
    __sub__, __rsub__, __isub__ = (
        _binary("subtract"),
        _reflected("subtract"),
        _inplace("subtract"),
    )
    __mul__, __rmul__, __imul__ = (
        _binary("multiply"),
        _reflected("multiply"),
        _inplace("multiply"),
    )
    __truediv__, __rtruediv__, __itruediv__ = (
        _binary("divide"),
        _reflected("divide"),
        _inplace("divide"),
    )
    __pow__, __rpow__, __ipow__ = _binary("power"), _reflected("power"), _inplace("power")
    __matmul__, __rmatmul__, __imatmul__ = (
        _binary("matmul"),
        _reflected("matmul"),
        _inplace("matmul"),
    )
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")
    __hash__ = object.__hash__

    def __neg__(self):
        return _ops.negative(self)

    def __pos__(self):
        return _ops.copy(self)

    def __abs__(self):
        return _ops.absolute(self)

    __floordiv__, __rfloordiv__, __ifloordiv__ = (
        _binary("floor_divide"),
        _reflected("floor_divide"),
        _inplace("floor_divide"),
    )
    __mod__, __rmod__, __imod__ = (
        _binary("remainder"),
        _reflected("remainder"),
        _inplace("remainder"),
    )
    __divmod__ = __rdivmod__ = _not_supported("divmod()")
    __and__ = __rand__ = __iand__ = _not_supported("the & operator")
    __or__ = __ror__ = __ior__ = _not_supported("the | operator")
    __xor__ = __rxor__ = __ixor__ = _not_supported("the ^ operator")
    __invert__ = _not_supported("the ~ operator")
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = _not_supported("bit shifts")

    # ----- conversions that need concrete data ------------------------------
    __bool__ = _not_supported(
        "Python control flow on a traced array (if/while/and/or/bool() need its value)"
    )
    __float__ = _not_supported("float() of a traced array")
    __int__ = _not_supported("int() of a traced array")
    __complex__ = _not_supported("complex() of a traced array")
    __round__ = __trunc__ = __floor__ = __ceil__ = _not_supported(
        "Python rounding (round/math.trunc/floor/ceil) of a traced array"
    )
    __index__ = _not_supported("using a traced array as an index or size")
    __setitem__ = _not_supported("item assignment (x[...] = v) on a traced array")
    __array__ = _not_supported("converting a traced array to a concrete numpy.ndarray")
    __buffer__ = _not_supported("the buffer protocol on a traced array")
    __reduce__ = __reduce_ex__ = _not_supported("pickling or copying a traced array")

    def __copy__(self):
        return _ops.copy(self)

    def __deepcopy__(self, memo):
        return _ops.copy(self)

    # ----- indexing and shape methods ---------------------------------------
    def __getitem__(self, index):
        return _ops.getitem(self, index)

    def reshape(self, *shape, order="C"):
        if order != "C":
            raise unsupported(f"reshape(order={order!r})")
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = tuple(shape[0])
        return _ops.reshape(self, shape)

    def transpose(self, *axes):
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], (int, np.integer))):
            axes = axes[0]
        return _ops.transpose(self, axes if axes != () else None)

    def swapaxes(self, axis1, axis2):
        return _ops.swapaxes(self, axis1, axis2)

    def squeeze(self, axis=None):
        return _ops.squeeze(self, axis)

    def flatten(self, order="C"):
        if order != "C":
            raise unsupported(f"flatten(order={order!r})")
        return _ops.reshape(self, (-1,), copy=True)

    def ravel(self, order="C"):
        if order != "C":
            raise unsupported(f"ravel(order={order!r})")
        return _ops.reshape(self, (-1,))

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if casting != "unsafe":
            raise unsupported(f"astype(casting={casting!r})")
        if not copy and np.dtype(dtype) == self.dtype:
            return self  # NumPy returns the array itself
        return _ops.cast(self, dtype)

    def copy(self, order="C"):
        return _ops.copy(self)

    def clip(self, min=None, max=None):
        return _ops.clip(self, min, max)

    def dot(self, other):
        return _ops.dot(self, other)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return _dispatch.take(self, indices, axis, out, mode)

    # ----- reductions ------------------------------------------------------
    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        _ops.reject_out(out, "sum")
        return _ops.reduce("sum", self, axis, keepdims, dtype)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        _ops.reject_out(out, "mean")
        return _ops.reduce("mean", self, axis, keepdims, dtype)

    def max(self, axis=None, out=None, keepdims=False):
        _ops.reject_out(out, "max")
        return _ops.reduce("max", self, axis, keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        _ops.reject_out(out, "min")
        return _ops.reduce("min", self, axis, keepdims)

    def var(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        _ops.reject_out(out, "var")
        return _ops.variance(self, axis, dtype, ddof, keepdims)

    def std(self, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
        _ops.reject_out(out, "std")
        return _ops.sqrt(_ops.variance(self, axis, dtype, ddof, keepdims))

    # ----- NumPy protocols --------------------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return _dispatch.array_ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func, types, args, kwargs):
        return _dispatch.array_function(func, args, kwargs)

    def __getattr__(self, name):
        if not name.startswith("__") and hasattr(np.ndarray, name):
            raise unsupported(f"ndarray.{name} on a traced array")
        raise AttributeError(f"'Tracer' object has no attribute {name!r}")


def check_context(values) -> TraceContext:
    """The active trace that all tracers among ``values`` belong to."""
    ctx = current_context()
    for value in values:
        if isinstance(value, Tracer) and value._ctx is not ctx:
            raise unsupported(
                "a traced array used outside the trace that created it "
                "(e.g. kept in a global between calls)"
            )
    if ctx is None:
        raise TraceError("cuvil: no active trace")
    return ctx


# Imported last: these modules use Tracer at call time (circular by design).
from . import dispatch as _dispatch  # noqa: E402
from . import ops as _ops  # noqa: E402
