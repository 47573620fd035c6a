"""``cuvil.runtime``: run a compiled model from its executable package, without the compiler.

::

    rt = cuvil.runtime.Runtime(device="cpu")
    exe = rt.load_executable("model.cuvil")      # or cuvil.runtime.load_executable(path)
    fn = exe.get_function("main")                # the model's own name works too
    out = fn(cuvil.nd.array(x), cuvil.nd.array(y))
    out.numpy()
    rt.bind_input(fn, "x", x)                    # zero-copy binding; fn.run() uses it

    rt = cuvil.runtime.Runtime(enable_async=True)  # calls queued on the runtime's stream
    future = fn.call_async(x, y)                 # returns at once; future.result() waits

A package is read and checked by the C++ runtime (``docs/irpkg.md``): its
code is loaded from memory on the first call, only on a CPU with the features
it was compiled for. Nothing here parses or compiles IR.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import threading

import numpy as np

from . import _native, _symbolic
from ._packages import PackageError, translated
from ._targets import resolve_target
from .frontend import bind_inputs
from .nd import NDArray

__all__ = ["Runtime", "Executable", "Function", "load_executable", "PackageError"]

_API = "cuvil.runtime.Runtime"


def _packages():
    return _native.load().packages


class Runtime:
    """Where executables run and with which options (ONNX Runtime's session options, in
    Cuvil's terms).

    Args:
        device: ``"cpu"``, or ``"cuda:N"``: the GPU that functions compiled for
            ``target="cuda"`` run on (NumPy in and out, copied to the GPU and
            back).
        memory_pool_size_mb: a pool reserved once and reused by every call of this
            runtime's functions for their intermediates (the planned arena and any
            other buffer), so a call allocates nothing in the steady state; ``0``
            turns it off (every call allocates). Calls made at the same time from
            several threads: one uses the pool, the others allocate. On a GPU it
            is the device's memory pool (the driver's stream-ordered pool that
            every call's device buffers come from): that much device memory is
            reserved when the runtime is made and kept between calls (without a
            usable GPU nothing is reserved, and calls say why they cannot run).
        arena_extend_strategy: ``"grow"`` (a call that needs more takes the rest from
            the heap and the pool grows once to fit the next one) or ``"fixed"`` (such
            a call fails with a ``MemoryError`` naming the function and the size).
        num_threads: threads a call's parallel regions may use (``None``:
            ``OMP_NUM_THREADS`` or every core); set on the calling thread for the call
            only.
        enable_async: ``True`` gives the runtime a stream: a worker thread that runs
            :meth:`Function.call_async` calls one after another in the order they were
            made, while the caller goes on (preparing the next input, say); each call
            returns a :class:`concurrent.futures.Future`. The arguments are checked
            when the call is made, and must not change until its future is done.
            On a GPU the calls go on the device's stream itself: ``call_async``
            copies the inputs to pinned staging memory and queues the copies and
            kernels without waiting for them, so the GPU runs one call after
            another while the host prepares the next (the inputs may change as
            soon as ``call_async`` returns).
            :meth:`synchronize` waits for every queued call. Plain calls stay
            synchronous either way.
    """

    def __init__(
        self,
        device: str = "cpu",
        memory_pool_size_mb: float = 256,
        enable_async: bool = False,
        num_threads: int | None = None,
        arena_extend_strategy: str = "grow",
    ):
        target, index = resolve_target(device, _API)
        if target not in ("cpu", "cuda"):
            raise ValueError(
                f"{_API}: device {device!r}: this runtime runs code for the CPU and CUDA "
                "GPUs; fix: device='cpu' or device='cuda:0'"
            )
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < 1):
            raise ValueError(
                f"{_API}: num_threads must be a positive int or None, not {num_threads!r}"
            )
        if not isinstance(memory_pool_size_mb, (int, float)) or memory_pool_size_mb < 0:
            raise ValueError(
                f"{_API}: memory_pool_size_mb must be a size in MiB (0 turns the pool off), "
                f"not {memory_pool_size_mb!r}"
            )
        if arena_extend_strategy not in ("grow", "fixed"):
            raise ValueError(
                f"{_API}: arena_extend_strategy must be 'grow' or 'fixed', "
                f"not {arena_extend_strategy!r}"
            )
        self.device = f"{target}:{index}" if index else target
        self.num_threads = num_threads
        self.arena_extend_strategy = arena_extend_strategy
        size = int(memory_pool_size_mb * (1 << 20))
        self._pool = None
        if target == "cuda":
            self._reserve_device_pool(int(index or 0), size)
        elif size:
            self._pool = _packages().MemoryPool(size, arena_extend_strategy)
        self.enable_async = bool(enable_async)
        self._stream: concurrent.futures.ThreadPoolExecutor | None = None
        self._stream_lock = threading.Lock()

    def _reserve_device_pool(self, index: int, size: int) -> None:
        from . import _targets

        if _targets.unavailable_reason("cuda", index) is not None:
            return  # the calls say why nothing runs here
        try:
            _native.load().cuda.reserve_pool(index, size)
        except RuntimeError as error:
            raise MemoryError(
                f"{_API}: memory_pool_size_mb={size >> 20}: {error}; fix: a smaller pool "
                "(0 reserves nothing)"
            ) from None

    def _check_async(self, label: str) -> None:
        if not self.enable_async:
            raise RuntimeError(
                f"{label}: call_async needs a runtime made with enable_async=True; fix: "
                "cuvil.runtime.Runtime(enable_async=True), or call the function directly"
            )

    def _submit(self, label: str, run, *args) -> concurrent.futures.Future:
        self._check_async(label)
        with self._stream_lock:
            if self._stream is None:
                # One worker: the stream runs its calls in order, like a CUDA stream.
                self._stream = concurrent.futures.ThreadPoolExecutor(
                    max_workers=1, thread_name_prefix="cuvil-stream"
                )
            return self._stream.submit(run, *args)

    def synchronize(self) -> None:
        """Wait until every call queued with :meth:`Function.call_async` has finished."""
        with self._stream_lock:
            stream = self._stream
        if stream is not None:
            stream.submit(lambda: None).result()

    @property
    def memory_pool(self) -> dict | None:
        """The pool's ``capacity``, ``peak_bytes`` (the most one call needed), ``calls``,
        ``overflows`` (calls that needed more) and ``grows``; ``None`` without a pool
        (and on a GPU, whose pool is the driver's)."""
        pool = self._pool
        if pool is None:
            return None
        return {
            key: getattr(pool, key)
            for key in ("capacity", "peak_bytes", "calls", "overflows", "grows")
        }

    def load_executable(self, path, use_mmap: bool = False) -> Executable:
        """Open the executable package (``.cuvil``) at ``path``.

        ``use_mmap``: load each function's code, with the constant weights
        compiled into it, from a file named by its SHA-256 under the cache
        directory (``CUVIL_CACHE_DIR``, default ``~/.cache/cuvil``;
        ``mapped/``), written once: the loader maps it read-only, so every
        process that loads the same package shares those pages instead of
        holding a copy each. Otherwise the code is loaded from memory.

        Raises :class:`PackageError` naming the file and the field for a damaged
        package, one of another kind, or one from a newer Cuvil.
        """
        directory = ""
        if use_mmap:
            from ._cache import disk_cache_dir

            cache = disk_cache_dir()
            if not cache:
                raise ValueError(
                    f"{_API}.load_executable(use_mmap=True): the cache directory is off "
                    "(CUVIL_DISABLE_DISK_CACHE) or unusable, and the mapped code lives "
                    "there; fix: set CUVIL_CACHE_DIR to a writable directory, or "
                    "use_mmap=False"
                )
            directory = os.path.join(cache, "mapped")
        with translated():
            package = _packages().ExecutablePackage(os.fspath(path), directory)
        if self.device.startswith("cuda"):
            package.set_device(int(self.device.partition(":")[2] or 0))
        return Executable(self, package)

    def bind_input(self, function: Function, name: str, value) -> None:
        """Bind input ``name`` of ``function`` to ``value`` without copying it.

        ``value`` must already be C-contiguous with the input's dtype and a
        shape the function takes (a NumPy array, an :class:`~cuvil.nd.NDArray`
        or a DLPack tensor); later changes to its contents are seen by
        ``function.run()``.
        """
        function._bind(name, value)


class Executable:
    """An opened ``.cuvil`` package: :meth:`get_function`, ``fingerprint``, ``function_names``."""

    def __init__(self, runtime: Runtime, package):
        self.runtime = runtime
        self._package = package
        self.metadata = json.loads(package.metadata)
        self._functions: dict[str, Function] = {}

    @property
    def path(self) -> str:
        return self._package.path

    @property
    def fingerprint(self) -> str:
        """The structural SHA-256 of the IR the code was compiled from."""
        return self._package.fingerprint

    @property
    def function_names(self) -> list[str]:
        return list(self._package.function_names)

    def get_function(self, name: str = "main") -> Function:
        """The function called ``name`` (``main`` for an exported model, or the model's name).

        Raises ``KeyError`` listing the names the package has.
        """
        handle = self._package.function(name)
        function = self._functions.get(handle.name)
        if function is None:
            entry = next(f for f in self.metadata["functions"] if f.get("name") == handle.name)
            function = self._functions[handle.name] = Function(self, handle, entry)
        return function

    __getitem__ = get_function  # tvm.runtime.Module["main"]

    def verify(self) -> None:
        """Read and check every entry now (each is otherwise checked when first used).

        Raises :class:`PackageError` naming the entry that is damaged.
        """
        with translated():
            _packages().verify(self.path, "executable")

    def __repr__(self) -> str:
        return f"<cuvil.runtime.Executable {self.path!r} functions={self.function_names}>"


class Function:
    """A typed function of an :class:`Executable`: checks each argument's dtype and shape."""

    def __init__(self, executable: Executable, handle, entry: dict):
        self.executable = executable
        self._handle = handle
        self.name = handle.name
        self.input_names = list(handle.input_names)
        self._types = [(np.dtype(d), shape) for d, shape in handle.input_types]
        self._output_types = [(np.dtype(d), shape) for d, shape in handle.output_types]
        given = entry.get("given_inputs") or [d.name for d, _ in self._types]
        returned = entry.get("given_outputs") or [d.name for d, _ in self._output_types]
        self._given = [np.dtype(d) for d in given]
        self._returned = [np.dtype(d) for d in returned]
        self._structure = entry.get("structure", "single")
        self._symbolic = any(
            not isinstance(d, int) for _, shape in self._types + self._output_types for d in shape
        )
        self._bound: dict[str, np.ndarray] = {}

    @property
    def signature(self) -> str:
        """``main(x: float32[64, 256]) -> (float32[64, 128])`` (the code's dtypes)."""
        return self._handle.signature

    def load(self) -> None:
        """Load the code now (otherwise on the first call): checks the code entry and that
        this CPU has the features it was compiled for."""
        with translated():
            self._handle.load()

    def _label(self) -> str:
        return f"{os.path.basename(self.executable.path)}: {self.name}"

    def _check(self, index: int, value, copy_ok: bool) -> np.ndarray:
        name = self.input_names[index]
        dtype, shape = self._types[index]
        given = self._given[index]
        if isinstance(value, NDArray):
            value = value.numpy()
        elif hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray):
            value = np.from_dlpack(value)
        if not isinstance(value, (np.ndarray, np.generic)):
            raise TypeError(
                f"{self._label()}: input '{name}' must be an array ({given}"
                f"{list(shape)}), got {type(value).__name__}"
            )
        value = np.asarray(value)
        if value.dtype != given:
            raise TypeError(
                f"{self._label()}: input '{name}' has dtype {value.dtype}, but the function "
                f"takes {given}; fix: pass {name}.astype(np.{given.name})"
            )
        if not _symbolic.fits(shape, value.shape):
            raise ValueError(
                f"{self._label()}: input '{name}' has shape {value.shape}, but the function "
                f"takes {tuple(shape)}"
            )
        if given != dtype:
            return np.ascontiguousarray(value, dtype=dtype)
        if not value.flags.c_contiguous:
            if not copy_ok:
                raise ValueError(
                    f"{self._label()}: input '{name}' is not C-contiguous, so it cannot be "
                    f"bound without a copy; fix: np.ascontiguousarray({name})"
                )
            value = np.ascontiguousarray(value)
        return value

    def _bind(self, name: str, value) -> None:
        if name not in self.input_names:
            raise KeyError(
                f"{self._label()} has no input '{name}'; its inputs are "
                f"{', '.join(repr(n) for n in self.input_names)}"
            )
        index = self.input_names.index(name)
        if self._given[index] != self._types[index][0]:
            raise TypeError(
                f"{self._label()}: input '{name}' is converted from {self._given[index]} to "
                f"{self._types[index][0]} on every call, so it cannot be bound without a copy"
            )
        self._bound[name] = self._check(index, value, copy_ok=False)

    def run(self):
        """Run on the inputs bound with :meth:`Runtime.bind_input`."""
        missing = [n for n in self.input_names if n not in self._bound]
        if missing:
            raise TypeError(
                f"{self._label()}: input(s) {', '.join(repr(n) for n in missing)} are not "
                "bound; fix: runtime.bind_input(function, name, array) for each"
            )
        return self._run([self._bound[n] for n in self.input_names])

    def __call__(self, *args, **kwargs):
        given = bind_inputs(self._label(), self.input_names, args, kwargs)
        return self._run([self._check(i, value, True) for i, value in enumerate(given)])

    def call_async(self, *args, **kwargs) -> concurrent.futures.Future:
        """Queue a call on the runtime's stream (``Runtime(enable_async=True)``).

        The arguments are checked now (a wrong dtype or shape raises here); the
        future's ``result()`` is what calling the function returns, or raises what
        it would raise. Calls run in the order they were queued. On a GPU
        (``device="cuda:N"``) the call is on the device's stream when this
        returns: its inputs are copied to staging memory (they may change
        afterwards), and its copies and kernels run behind the calls queued
        before it while the caller goes on.
        """
        given = bind_inputs(self._label(), self.input_names, args, kwargs)
        inputs = [self._check(i, value, True) for i, value in enumerate(given)]
        runtime = self.executable.runtime
        if not runtime.device.startswith("cuda"):
            return runtime._submit(self._label(), self._run, inputs)
        runtime._check_async(self._label())
        outputs = self._outputs_for(inputs)
        future: concurrent.futures.Future = concurrent.futures.Future()
        try:
            with translated():
                queued = self._handle.enqueue(
                    inputs, outputs, runtime._pool, runtime.num_threads or 0
                )
        except Exception as error:  # noqa: BLE001 - the future raises it
            future.set_exception(error)
            return future

        def finish():
            with translated():
                queued.wait()
            return self._values(outputs)

        # The stream's thread waits for the calls in order; the caller does not.
        return runtime._submit(self._label(), finish)

    def _output_shapes(self, inputs: list) -> list:
        if not self._symbolic:
            return [shape for _, shape in self._output_types]
        try:
            shapes = self._handle.output_shapes([list(x.shape) for x in inputs])
        except ValueError as error:
            raise ValueError(f"{self._label()}: {error}") from None
        return shapes

    def _outputs_for(self, inputs: list) -> list:
        shapes = self._output_shapes(inputs)
        return [np.empty(s, d) for (d, _), s in zip(self._output_types, shapes)]

    def _values(self, outputs: list):
        values = [
            NDArray(o if o.dtype == r else o.astype(r)) for o, r in zip(outputs, self._returned)
        ]
        if self._structure == "single":
            return values[0]
        return tuple(values) if self._structure == "tuple" else list(values)

    def _run(self, inputs: list):
        outputs = self._outputs_for(inputs)
        runtime = self.executable.runtime
        with translated():
            self._handle(inputs, outputs, runtime._pool, runtime.num_threads or 0)
        return self._values(outputs)

    def __repr__(self) -> str:
        return f"<cuvil.runtime.Function {self.signature}>"


_default: Runtime | None = None


def load_executable(path, use_mmap: bool = False) -> Executable:
    """Open ``path`` with a default :class:`Runtime` on the CPU."""
    global _default
    if _default is None:
        _default = Runtime()
    return _default.load_executable(path, use_mmap=use_mmap)
