"""The one IR builder of every front end: typed values, ops, structured locations, MLIR text.

Result types come from the ops themselves: :meth:`IRBuilder.op` asks the
cuvil dialect's shape rules (``InferTypeOpInterface``, through the compiled
extension) for every op except ``cuvil.reshape``, ``cuvil.broadcast_to`` and
``cuvil.cast``, whose result type is their parameter and is checked by the
op's verifier instead. An op the dialect rejects raises
:class:`cuvil.TraceError` naming the op, the operand shapes, the reason and
the op's location.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from .. import _dtypes, _mlir
from .._cache import disk_cache_dir
from .._errors import TraceError
from .locations import UNKNOWN, NameLoc

__all__ = [
    "TensorType",
    "IndexType",
    "INDEX",
    "Value",
    "IRBuilder",
    "GIVEN_RESULT_TYPE_OPS",
    "infer_result_type",
]

# Ops whose result type is their parameter rather than a rule's answer.
GIVEN_RESULT_TYPE_OPS = frozenset(
    {"cuvil.reshape", "cuvil.broadcast_to", "cuvil.cast", "cuvil.range"}
)


def _dim(d):
    """A dimension: an int, a symbol name (``"N"``) or ``None`` (dynamic, unnamed)."""
    return d if d is None or isinstance(d, str) else int(d)


@dataclass(frozen=True)
class TensorType:
    """A tensor type: ``shape`` and a dtype-table name (``"float32"``, ``"bfloat16"``).

    A dimension is an int, a symbol name such as ``"N"`` (dynamic, and equal
    to every other dimension of that name) or ``None`` (dynamic, unnamed);
    both are ``?`` in the MLIR type.
    """

    shape: tuple
    dtype: str

    def __str__(self) -> str:
        return self.text

    @functools.cached_property
    def text(self) -> str:
        """The MLIR text, e.g. ``tensor<?x3xf32>`` (computed once per type)."""
        dims = "".join(
            "?x" if d is None or isinstance(d, str) else f"{int(d)}x" for d in self.shape
        )
        return f"tensor<{dims}{_dtypes.by_name(self.dtype).mlir}>"

    @property
    def is_static(self) -> bool:
        return all(isinstance(d, int) for d in self.shape)

    @property
    def symbols(self) -> tuple:
        """The names of the dynamic dimensions, in order (``None`` for unnamed ones)."""
        return tuple(d for d in self.shape if not isinstance(d, int))

    @staticmethod
    def of(shape: Sequence, dtype) -> TensorType:
        """From a shape (ints, symbol names, ``None``) and a dtype name or NumPy dtype."""
        name = dtype if isinstance(dtype, str) else np.dtype(dtype).name
        return TensorType(tuple(_dim(d) for d in shape), name)

    @staticmethod
    @functools.lru_cache(maxsize=4096)
    def parse(text: str) -> TensorType:
        """From MLIR text such as ``tensor<?x3xf32>``; ``?`` dims become ``None``."""
        if not (text.startswith("tensor<") and text.endswith(">")):
            raise ValueError(f"not a tensor type: {text!r}")
        *dims, element = text[len("tensor<") : -1].split("x")
        shape = tuple(None if d == "?" else int(d) for d in dims)
        return TensorType(shape, _dtypes.by_mlir(element).name)


class IndexType:
    """The type of a size known at run time (MLIR ``index``): what ``cuvil.dim`` reads.

    Ops take such sizes as operands where a bound or a size is dynamic
    (``cuvil.range``'s limit, ``cuvil.slice`` limits, ``cuvil.reshape`` sizes).
    """

    shape = ()
    dtype = "index"
    text = "index"
    is_static = True
    symbols = ()

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return "IndexType()"


#: The one :class:`IndexType`.
INDEX = IndexType()


class Value:
    """An SSA value made by an :class:`IRBuilder`: its name (``%3``) and :class:`TensorType`
    (or :data:`INDEX` for a run-time size)."""

    __slots__ = ("name", "type")

    def __init__(self, name: str, type: TensorType):
        self.name = name
        self.type = type

    def __repr__(self) -> str:
        return f"Value({self.name}: {self.type})"


def _ask(question, name: str, operand_types: Sequence[TensorType], loc):
    """Run a dialect query; its diagnostic becomes a TraceError naming the op, shapes and loc."""
    ext = _dtypes.extension()
    try:
        return question(ext)
    except ext.TypeInferenceError as error:
        reason = str(error).replace(f"'{name}' op ", "")
        shapes = " and ".join(str(tuple(t.shape)) for t in operand_types) or "none"
        raise TraceError(f"{name}: {reason}; operand shapes {shapes}, at {loc}.") from None


def infer_result_type(name: str, operand_types: Sequence[TensorType], attributes: Mapping, loc):
    """The result type of op ``name`` on operands of these types, from the op's shape rule.

    Raises :class:`cuvil.TraceError` naming the op, the rule's reason, the
    operand shapes and ``loc`` when the rule rejects them.
    """
    types, attrs = [str(t) for t in operand_types], _mlir.format_attributes(attributes)
    text = _ask(lambda ext: ext.infer_result_type(name, types, attrs), name, operand_types, loc)
    return TensorType.parse(text)


def check_op(name, operand_types, attributes, result_type: TensorType, loc) -> None:
    """Check an op whose result type is given with the op's verifier (TraceError if invalid)."""
    types, attrs = [str(t) for t in operand_types], _mlir.format_attributes(attributes)
    _ask(lambda ext: ext.check_op(name, types, attrs, str(result_type)), name, operand_types, loc)


# Ops whose result dims are their operands' dims aligned on the right (NumPy broadcasting,
# or the same shape): a dim named in an operand is the same dim in the result.
ELEMENTWISE_OPS = frozenset(
    "cuvil." + op
    for op in (
        "add sub mul div pow max min rem compare where neg abs exp log tanh sqrt rsqrt erf "
        "sin cos floor ceil trunc round sigmoid relu gelu cast softmax layer_norm batch_norm "
        "dropout"
    ).split()
)


def keep_symbols(result: TensorType, operands: Sequence[Value]) -> TensorType:
    """``result`` of an elementwise op with the symbol names its operands give its dynamic
    dims (``tanh(x)`` of ``x: [N, 8]`` is ``[N, 8]``, not ``[?, 8]``), so later ops can state
    the sizes they assume about them (a static-bound slice of the ``N`` axis)."""
    shape = list(result.shape)
    for value in operands:
        offset = len(shape) - len(value.type.shape)
        for d, size in enumerate(value.type.shape):
            if offset >= 0 and isinstance(size, str) and shape[offset + d] is None:
                shape[offset + d] = size
    return TensorType(tuple(shape), result.dtype)


class IRBuilder:
    """Builds one ``func.func`` of Cuvil IR, op by op, each op with a structured location.

    Args:
        func_name: the function's symbol (sanitized for MLIR).
        loc: the function's location (its ``def`` line, or the model file).
    """

    def __init__(self, func_name: str, loc=UNKNOWN):
        self.func_name = _mlir.sanitize_symbol(func_name)
        self.loc = loc
        self.arguments: list[_mlir.ArgRecord] = []
        self.argument_types: list[TensorType] = []
        #: The dtype each argument is given in by the caller (float16 for a float32 argument).
        self.boundary_inputs: list[str] = []
        self.ops: list[_mlir.OpRecord] = []
        self._next_id = 0
        self._node: NameLoc | None = None
        self._default = None
        self._dims: dict[tuple[str, int], Value] = {}
        self._dim_symbols: dict[str, str] = {}  # name of a cuvil.dim result -> its symbol
        #: Symbol name -> (lowest, highest or None) size the IR's sizes assume (a static slice
        #: limit on a symbolic axis, a slice of a 16-row mask up to a symbolic length).
        self.symbol_ranges: dict[str, tuple[int, int | None]] = {}
        # The shape rules' answers kept in the disk cache folder: a new process
        # tracing a model traced before builds no MLIR context to ask them.
        _dtypes.extension().set_shape_answer_store(disk_cache_dir())

    # ----- locations ---------------------------------------------------------------
    @contextlib.contextmanager
    def node(self, name: str, source=None):
        """Ops created inside the block carry ``NameLoc(name, ...)``: a model node's name.

        ``source`` is where the node came from (``FileLineColLoc("model.onnx", 0, 0)``);
        an op's own ``loc`` given inside the block becomes the name's child instead.
        """
        outer = self._node
        self._node = NameLoc(name, source)
        try:
            yield self._node
        finally:
            self._node = outer

    @contextlib.contextmanager
    def at(self, loc):
        """Ops created inside the block without a ``loc`` of their own get ``loc``.

        For a composition (:mod:`cuvil.frontends.composites`) standing for one
        line of user code: each of its ops points at that line.
        """
        outer = self._default
        self._default = loc
        try:
            yield
        finally:
            self._default = outer

    def location(self, loc=None):
        """The location an op gets: ``loc``, named after the enclosing :meth:`node`, if any."""
        loc = self._default if loc is None else loc
        if self._node is None:
            return UNKNOWN if loc is None else loc
        if loc is None:
            return self._node
        return NameLoc(self._node.name, loc)

    # ----- values and ops ----------------------------------------------------------
    def argument(self, type: TensorType, loc=None, widen: bool = True) -> Value:
        """Add a function argument of ``type``.

        Its symbol names are recorded on the argument (``cuvil.symbols``); an
        unnamed dynamic dimension gets a name of its own, ``arg0_d2``. With
        ``widen``, a float16 input is a float32 argument (the compiled model
        converts at the boundary); without, it stays float16 (the NumPy tracer
        follows NumPy's float16 rules, then ``cuvil-widen-f16`` computes in float32).
        """
        index = len(self.arguments)
        self.boundary_inputs.append(type.dtype)
        if widen:
            type = TensorType(type.shape, _dtypes.compute_dtype(type.dtype))
        if not type.is_static:
            shape = tuple(f"arg{index}_d{i}" if d is None else d for i, d in enumerate(type.shape))
            type = TensorType(shape, type.dtype)
        value = Value(f"%arg{index}", type)
        self.argument_types.append(type)
        attributes = {"cuvil.symbols": list(type.symbols)} if type.symbols else None
        self.arguments.append(
            _mlir.ArgRecord(value.name, str(type), self.location(loc or self.loc), attributes)
        )
        return value

    def op(
        self,
        name: str,
        operands: Sequence[Value],
        attributes: Mapping | None = None,
        *,
        loc=None,
        result_type: TensorType | None = None,
    ) -> Value:
        """Append ``name(operands) {attributes}`` and return its result.

        ``attributes`` are plain Python values (see :mod:`cuvil._mlir`). The
        result type is inferred by the op's shape rule unless the op takes it as
        its parameter (:data:`GIVEN_RESULT_TYPE_OPS`), where ``result_type`` is
        required.
        """
        loc = self.location(loc)
        attributes = dict(attributes or {})
        if name in GIVEN_RESULT_TYPE_OPS:
            if result_type is None:
                raise TypeError(f"{name} takes its result type as a parameter: pass result_type")
            check_op(name, [v.type for v in operands], attributes, result_type, loc)
            if name == "cuvil.broadcast_to":
                self._assume_broadcast_sizes(operands[0].type, result_type, loc)
        else:
            result_type = self.infer(name, operands, attributes, loc)
        return self._append(name, operands, attributes, result_type, loc)

    def dim(self, value: Value, axis: int, loc=None) -> Value:
        """``cuvil.dim``: the run-time size of ``value``'s dimension ``axis`` (an index value).

        Read once per dimension; later asks reuse it.
        """
        key = (value.name, axis)
        cached = self._dims.get(key)
        if cached is None:
            cached = self._dims[key] = self._append(
                "cuvil.dim", [value], {"axis": axis}, INDEX, self.location(loc)
            )
            if isinstance(value.type.shape[axis], str):
                self._dim_symbols[cached.name] = value.type.shape[axis]
        return cached

    def assume(self, size, lowest: int = 1, highest: int | None = None) -> bool:
        """Record that the IR's sizes hold only for ``lowest <= size <= highest``.

        ``size`` is a symbol name or an index value read from a named dimension
        (:meth:`dim`); each call of the compiled model checks the range. False
        when ``size`` has no name (nothing is recorded).
        """
        from .._program import narrow_range

        symbol = size if isinstance(size, str) else self._dim_symbols.get(size.name)
        if symbol is None:
            return False
        narrow_range(self.symbol_ranges, symbol, lowest, highest)
        return True

    def _assume_broadcast_sizes(self, source: TensorType, target: TensorType, loc) -> None:
        """A symbolic dim broadcast to a static size ``t`` is that size: the code copies it
        without broadcasting it. Each call checks ``N == t`` (``x`` of ``[N]`` broadcast to
        ``(4, 3)`` needs N = 3); an unnamed dim cannot be checked and is refused."""
        offset = len(target.shape) - len(source.shape)
        for d, size in enumerate(source.shape):
            wanted = target.shape[offset + d]
            if isinstance(size, int) or not isinstance(wanted, int):
                continue
            if not (isinstance(size, str) and self.assume(size, lowest=wanted, highest=wanted)):
                raise TraceError(
                    f"cuvil.broadcast_to: cannot broadcast dim {d} of dynamic size in "
                    f"{list(source.shape)} to the static size {wanted} (target "
                    f"{list(target.shape)}) at {loc}: the dim has no symbol name to check at "
                    "run time that it is that size; fix: name the input's dim in input_spec, "
                    "or give it the static size"
                )

    def index_constant(self, value: int, loc=None) -> Value:
        """A size constant (``arith.constant 4 : index``)."""
        attributes = {"value": _mlir.IndexAttr(value)}
        return self._append("arith.constant", [], attributes, INDEX, self.location(loc))

    def index_op(self, name: str, lhs: Value, rhs: Value, loc=None) -> Value:
        """Size arithmetic: ``arith.addi``/``subi``/``muli``/``floordivsi``/``remsi`` on indexes."""
        return self._append(name, [lhs, rhs], {}, INDEX, self.location(loc))

    def symbol_size(self, name: str, loc=None) -> Value | None:
        """The run-time size of the argument dimension named ``name`` (``None`` if none is)."""
        for index, type in enumerate(self.argument_types):
            if name in type.shape:
                argument = Value(f"%arg{index}", type)
                return self.dim(argument, type.shape.index(name), loc)
        return None

    def infer(self, name: str, operands: Sequence[Value], attributes: Mapping, loc=None):
        """The result type ``name`` would have on ``operands``, from the op's shape rule;
        an elementwise op's result keeps its operands' symbol names (:func:`keep_symbols`)."""
        result = infer_result_type(name, [v.type for v in operands], attributes, self.location(loc))
        return keep_symbols(result, operands) if name in ELEMENTWISE_OPS else result

    def constant(self, array: np.ndarray, loc=None) -> Value:
        """A ``cuvil.constant`` holding ``array`` (its dtype must be in the table)."""
        array = np.asarray(array)
        type = TensorType.of(array.shape, array.dtype)
        return self._append("cuvil.constant", [], {"value": array}, type, self.location(loc))

    def _append(self, name, operands, attributes, result_type: TensorType, loc) -> Value:
        value = Value(f"%{self._next_id}", result_type)
        self._next_id += 1
        self.ops.append(
            _mlir.OpRecord(
                name=name,
                operands=[v.name for v in operands],
                operand_types=[str(v.type) for v in operands],
                attributes=attributes,
                result=value.name,
                result_type=str(result_type),
                loc=loc,
            )
        )
        return value

    # ----- the module ------------------------------------------------------------------
    def module(self, results: Sequence[Value], loc=None, large=None) -> str:
        """The module text: the function returning ``results``; ``loc`` locates the return.

        ``large``: how large constants are written (see ``_mlir.format_module``)."""
        return _mlir.format_module(
            self.func_name,
            self.arguments,
            self.ops,
            [(v.name, str(v.type)) for v in results],
            self.loc,
            self.location(loc or self.loc),
            large,
        )

    def digests_constants(self) -> bool:
        """Whether the program holds large constants: its key text (``module(...,
        large=DIGEST)``) differs from the module."""
        return any(_mlir.digests_constants(op.attributes) for op in self.ops)

    def program(self, results: Sequence[Value], input_names=None, loc=None, output_dtypes=None):
        """The function returning ``results`` as a :class:`cuvil._program.TracedProgram`.

        ``input_names`` name the arguments (default ``arg0``, ``arg1``, ...);
        ``output_dtypes`` are the dtypes the model returns (default: the
        results'): a float16 output computed as a float32 result is converted
        by the compiled model. :func:`cuvil.frontends.to_ir_module` turns the
        program into an IRModule.
        """
        from .._program import TracedProgram

        args = self.argument_types
        names = (
            list(input_names) if input_names is not None else [f"arg{i}" for i in range(len(args))]
        )
        if len(names) != len(args):
            raise ValueError(f"{len(names)} input names for {len(args)} arguments")
        return TracedProgram(
            func_name=self.func_name,
            text=self.module(results, loc),
            inputs=[(np.dtype(t.dtype), t.shape) for t in args],
            outputs=[(np.dtype(v.type.dtype), v.type.shape) for v in results],
            structure="single" if len(results) == 1 else "tuple",
            input_names=names,
            boundary_inputs=list(self.boundary_inputs),
            boundary_outputs=self._boundary_outputs(results, output_dtypes),
            symbol_ranges=dict(self.symbol_ranges),
        )

    @staticmethod
    def _boundary_outputs(results: Sequence[Value], output_dtypes) -> list[str]:
        """The dtype each result is returned in: its own, or a float16 it is computed for."""
        if output_dtypes is None:
            return [v.type.dtype for v in results]
        dtypes = [str(d) for d in output_dtypes]
        if len(dtypes) != len(results):
            raise ValueError(f"{len(dtypes)} output dtypes for {len(results)} results")
        for value, dtype in zip(results, dtypes):
            if _dtypes.compute_dtype(dtype) != value.type.dtype and dtype != value.type.dtype:
                raise ValueError(f"a {value.type.dtype} result returned as {dtype}")
        return dtypes
