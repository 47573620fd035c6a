"""Differential tester: random NumPy graphs compiled by Cuvil (fused, unfused) vs float64 NumPy.

Each graph is a small program (up to ``--max-nodes`` nodes) over 1-3 inputs with
deliberately broadcast-compatible shapes, built from the ops Cuvil supports. Its form, drawn
from its seed, is one of

* ``float32``: float32 inputs, every float op (conv2d and pooling on NCHW values included);
* ``float64``: the same in float64;
* ``int32``: int32 inputs and the integer ops (wrapping arithmetic, floor division and
  remainder by constants, 0 included, integer reductions and matmul), compared exactly
  with NumPy's own result (dtype included: NumPy sums int32 into int64);
* ``dynamic``: float32 with one dim of the inputs symbolic (``n``), compiled once through
  ``to_ir_with_dynamic_shape`` and run at two sizes of ``n``; the generator keeps only ops
  that are valid at both sizes.

A closure interprets the graph; ``cuvil.jit`` traces and compiles that closure twice (with
and without fusion), and both results are compared with the same closure run by NumPy on
float64 copies of the inputs, within a tolerance from a running error analysis (``ERROR
MODEL`` in graph_ops.py, which also defines the ops) that grows with the graph's depth and
its reduction sizes.

Usage::

    .venv/bin/python tests/fuzz/random_graphs.py                  # 200 graphs, seeds 0..199
    .venv/bin/python tests/fuzz/random_graphs.py --graphs 5000 --jobs 2   # the long run
    .venv/bin/python tests/fuzz/random_graphs.py --seed 1234 --graphs 1 --show  # one graph

Graph ``i`` of a run uses seed ``--seed + i``: ``--seed <seed> --graphs 1`` (with the same
``--max-nodes``) reproduces any graph. Graphs run in child processes of ``--chunk`` graphs
each, ``--jobs`` at a time. The exit code is 1 when a graph mismatches, fails to compile,
crashes its process, falls back to NumPy or cannot be generated.
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import os
import sys
import time
import traceback
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

import numpy as np

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

# graph_ops also puts this checkout's cuvil package on the import path.
from graph_ops import (  # noqa: E402
    BINARY,
    COMPARE,
    OPS,
    UNARY,
    Reference,
    as_tuple,
    compare,
    norm_axes,  # noqa: E402
    working_precision,
)

import cuvil  # noqa: E402
from cuvil.frontend import to_ir_with_dynamic_shape  # noqa: E402

MAX_ELEMENTS = 8192  # no tensor of a graph is larger
MAX_MAGNITUDE = 8.0  # larger values are squashed (tanh) or scaled down (power of two)
MIN_ROW_STD = 0.05  # layer_norm only normalizes rows this spread out (bounded condition)
INPUT_RANGE = 2.0  # inputs are uniform in [-INPUT_RANGE, INPUT_RANGE)
SCALARS = (0.25, 0.5, 1.0, 1.5, 2.0)  # exact in float32: both sides use the same constant
INT_RANGE = 50  # int32 inputs are uniform in [-INT_RANGE, INT_RANGE]
INT_SCALARS = (-3, -1, 0, 2, 3, 7)
INT_DIVISORS = (-3, 0, 1, 2, 3, 5)
FORMS = {"float32": 50, "float64": 15, "int32": 15, "dynamic": 20}  # weights by seed
FORM_DTYPES = {"float32": "float32", "float64": "float64", "int32": "int32", "dynamic": "float32"}
SYMBOL = "n"  # the symbolic dim of a dynamic graph
# Op kinds that broadcast their operands against each other or a shape.
BROADCASTING = frozenset(
    ("add", "sub", "mul", "maximum", "minimum", "div_sq", "div_abs", "where", "scalar")
    + ("array", "broadcast_to")
)


# ----- graphs -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Node:
    """One op of a graph: ``kind`` applied to earlier values ``args`` (ids) with ``params``."""

    kind: str
    args: tuple
    params: dict
    shape: tuple


def sample_inputs(seed: int, shapes, dtype="float32", stream: int = 1) -> list:
    """A graph's inputs, drawn from its seed: floats uniform in [-INPUT_RANGE, INPUT_RANGE),
    integers in [-INT_RANGE, INT_RANGE]. ``stream`` 2 draws a dynamic graph's second set."""
    rng, dtype = np.random.default_rng([seed, stream]), np.dtype(dtype)
    if dtype.kind == "i":
        return [rng.integers(-INT_RANGE, INT_RANGE + 1, size=s).astype(dtype) for s in shapes]
    # np.array, not np.ascontiguousarray (which makes a 0-d input 1-d): a contiguous copy.
    return [np.array(rng.uniform(-INPUT_RANGE, INPUT_RANGE, size=s), dtype=dtype) for s in shapes]


def draw_form(seed: int) -> str:
    """The form of graph ``seed`` (module docstring)."""
    rng = np.random.default_rng([seed, 3])
    weights = np.array(list(FORMS.values()), dtype=np.float64)
    return list(FORMS)[int(rng.choice(len(FORMS), p=weights / weights.sum()))]


@dataclass
class Graph:
    """A random program. Value ids count the inputs ``x0..`` first, then the nodes ``v0..``.
    A dynamic graph also has ``symbolic_shapes`` (``SYMBOL`` where an input's dim is
    symbolic) and ``alternate_shapes``, the input shapes at the second size of the symbol."""

    seed: int
    input_shapes: list
    nodes: list
    outputs: tuple
    form: str = "float32"
    symbolic_shapes: list | None = None
    alternate_shapes: list | None = None

    @property
    def dtype(self) -> np.dtype:
        return np.dtype(FORM_DTYPES[self.form])

    def name(self, value: int) -> str:
        count = len(self.input_shapes)
        return f"x{value}" if value < count else f"v{value - count}"

    def make_function(self):
        """A fresh function computing the graph; ``cuvil.jit`` can trace it."""
        nodes, outputs = self.nodes, self.outputs

        def interpret(inputs):
            values = list(inputs)
            for node in nodes:
                values.append(OPS[node.kind].apply([values[i] for i in node.args], node.params))
            results = tuple(values[i] for i in outputs)
            return results[0] if len(results) == 1 else results

        def graph1(x0):
            return interpret((x0,))

        def graph2(x0, x1):
            return interpret((x0, x1))

        def graph3(x0, x1, x2):
            return interpret((x0, x1, x2))

        graph = (graph1, graph2, graph3)[len(self.input_shapes) - 1]
        graph.__name__ = graph.__qualname__ = f"graph_{self.seed}"
        return graph

    def sample_inputs(self) -> list:
        return sample_inputs(self.seed, self.input_shapes, self.dtype)

    def alternate_inputs(self) -> list:
        """A dynamic graph's inputs at the second size of its symbol."""
        return sample_inputs(self.seed, self.alternate_shapes, self.dtype, stream=2)

    def input_specs(self) -> list:
        return [cuvil.TensorSpec(shape, self.dtype.name) for shape in self.symbolic_shapes]

    def description(self) -> str:
        """The graph as Python source (using ``np`` and ``cuvil``), shapes in comments."""
        inputs = range(len(self.input_shapes))
        shown = self.symbolic_shapes or self.input_shapes
        shapes = ", ".join(
            f"{self.name(i)}: {self.dtype.name}[{', '.join(map(str, shown[i]))}]" for i in inputs
        )
        lines = [f"def graph_{self.seed}({', '.join(map(self.name, inputs))}):  # {shapes}"]
        if self.alternate_shapes:
            lines.insert(
                0, f"# run at input shapes {self.input_shapes} and {self.alternate_shapes}"
            )
        for index, node in enumerate(self.nodes, start=len(self.input_shapes)):
            expr = OPS[node.kind].text([self.name(i) for i in node.args], node.params)
            lines.append(f"    {self.name(index)} = {expr}  # {node.shape}")
        lines.append(f"    return {', '.join(map(self.name, self.outputs))}")
        return "\n".join(lines)

    def kinds(self) -> Counter:
        return Counter(node.kind for node in self.nodes)


class _Rejected(Exception):
    """An op (or a helper it needs) is not valid at a dynamic graph's second size."""


class _Generator:
    """Grows a graph op by op. It evaluates every value in float64 (integer graphs: in their
    integer dtype) on the graph's inputs, so it can choose operands whose shapes make each op
    valid and keep magnitudes bounded; a dynamic graph's values are also evaluated at the
    second size of its symbol, and an op that is not valid there is taken back."""

    FLOAT_WEIGHTS = {
        "binary": 14,
        "div": 4,
        "constant": 8,
        "unary": 14,
        "reduce": 8,
        "softmax": 3,
        "layer_norm": 3,
        "reshape": 5,
        "transpose": 4,
        "broadcast_to": 4,
        "concat": 4,
        "slice": 5,
        "where": 4,
        "matmul": 6,
        "conv2d": 4,
        "pool2d": 3,
    }
    # An integer graph's builders: the float ones that have integer forms, fewer unary ops
    # (neg, abs, relu), and floor division and remainder (INT_KINDS: the kinds they emit).
    INT_WEIGHTS = {
        **{
            kind: weight
            for kind, weight in FLOAT_WEIGHTS.items()
            if kind not in ("div", "softmax", "layer_norm", "conv2d", "pool2d")
        },
        "unary": 5,
        "int_division": 5,
    }
    INT_KINDS = (
        *("add", "sub", "mul", "maximum", "minimum", "int_division", "scalar", "array"),
        *("neg", "abs", "relu", "reduce", "reshape", "transpose", "broadcast_to", "concat"),
        *("slice", "where", "matmul"),
    )

    def __init__(self, seed: int, max_nodes: int, form: str):
        self.seed, self.max_nodes, self.form = seed, max_nodes, form
        self.integer = form == "int32"
        self.rng = np.random.default_rng(seed)
        self.values: list = []  # float64 (or integer) value of every input and node
        self.alternates: list | None = None  # a dynamic graph's values at the second size
        self.uses: list = []
        self.nodes: list = []
        self.symbolic_shapes: list | None = None
        self.alternate_shapes: list | None = None

    def dim(self, low: int = 1) -> int:
        return int(self.rng.integers(low, 10))

    def chance(self, p: float) -> bool:
        return bool(self.rng.random() < p)

    def choice(self, items):
        return items[int(self.rng.integers(len(items)))]

    def shape(self, value: int) -> tuple:
        return self.values[value].shape

    def room(self) -> int:
        return self.max_nodes - len(self.nodes)

    def pick(self, candidates=None):
        """A value id, favouring unused and recent values; ``None`` when there is none."""
        ids = list(range(len(self.values)) if candidates is None else candidates)
        if not ids:
            return None
        total = len(self.values)
        weights = np.array([(4.0 if self.uses[i] == 0 else 1.0) * (1 + 2 * i / total) for i in ids])
        return ids[int(self.rng.choice(len(ids), p=weights / weights.sum()))]

    def ranked(self, low: int = 1, high: int = 4) -> list:
        return [i for i, v in enumerate(self.values) if low <= v.ndim <= high]

    def compatible(self, shape, exclude=None) -> list:
        """Values broadcasting with ``shape`` into at most MAX_ELEMENTS elements."""
        result = []
        for i, v in enumerate(self.values):
            try:
                fits = math.prod(np.broadcast_shapes(shape, v.shape)) <= MAX_ELEMENTS
            except ValueError:
                fits = False
            if fits and i != exclude:
                result.append(i)
        return result

    def evaluate(self, kind, args, params, values=None) -> np.ndarray:
        operands = [(self.values if values is None else values)[i] for i in args]
        with np.errstate(all="ignore"):  # integer division by 0 is part of the test
            result = np.asarray(OPS[kind].apply(operands, params))
        return result if self.integer else result.astype(np.float64, copy=False)

    def alternate(self, kind, args, params):
        """The op at the second size; raises _Rejected where it is not valid there."""
        try:
            value = self.evaluate(kind, args, params, self.alternates)
        except (ValueError, IndexError, TypeError, cuvil.TraceError) as error:
            raise _Rejected(str(error)) from error
        if not 0 < value.size <= MAX_ELEMENTS:  # Cuvil refuses empty tensors
            raise _Rejected(f"{value.size} elements at the second size")
        return value

    def emit(self, kind, args, params) -> int:
        value = self.evaluate(kind, args, params)
        if self.alternates is not None:
            second = self.alternate(kind, args, params)
            if kind in BROADCASTING:
                self.check_symbolic_broadcast(args, value.shape, second.shape)
            self.alternates.append(second)
        self.nodes.append(Node(kind, tuple(args), params, value.shape))
        for i in args:
            self.uses[i] += 1
        self.values.append(value)
        self.uses.append(0)
        return len(self.values) - 1

    def check_symbolic_broadcast(self, args, shape, second) -> None:
        """A symbolic axis is never broadcast: it would be 1 at one size and not at the
        other (`x.reshape(1, 4, -1)` of an `n`-long x against a 2-wide array), which NumPy
        accepts at both sizes and a compilation for every size cannot (Cuvil refuses it,
        naming the sizes)."""
        for i in args:
            mine, other = self.shape(i), self.alternates[i].shape
            offset = len(shape) - len(mine)
            for axis, (d, e) in enumerate(zip(mine, other)):
                if d != e and (shape[offset + axis], second[offset + axis]) != (d, e):
                    raise _Rejected(f"broadcasts the symbolic axis {axis} of value {i}")

    def put(self, kind, args, params) -> bool:
        """Add the op (then bound its magnitude) if it fits the size and node budgets."""
        value = self.evaluate(kind, args, params)
        large = not self.integer and bool(np.max(np.abs(value), initial=0.0) > MAX_MAGNITUDE)
        if value.size > MAX_ELEMENTS or 1 + large > self.room():
            return False
        result = self.emit(kind, args, params)
        if large and self.chance(0.4):
            self.emit("tanh", [result], {})
        elif large:
            scale = 2.0 ** -math.ceil(math.log2(np.max(np.abs(value)) / 2.0))
            self.emit("scalar", [result], {"op": "*", "value": scale, "reversed": False})
        return True

    def make_inputs(self) -> None:
        """1-3 inputs: suffixes of one full shape with random dims set to 1 (broadcasting),
        sometimes a matmul partner (K, N) or (B, K, N) of the full shape."""
        count, rank = int(self.rng.integers(1, 4)), int(self.rng.integers(0, 5))
        if self.form == "dynamic":
            rank = max(rank, 1)
        full = [self.dim(2) if self.chance(0.8) else 1 for _ in range(rank)]
        symbolic = None
        if self.form == "dynamic":  # the symbol: a dim of the full shape, counted from its end
            symbolic = int(self.rng.integers(1, rank + 1))
            full[-symbolic] = self.dim(2)
        shapes, symbolic_shapes = [], []
        for index in range(count):
            if index > 0 and rank >= 1 and self.chance(0.3):
                shape, ends = [full[-1], self.dim()], [1, None]
                if rank >= 3 and self.chance(0.5):
                    shape.insert(0, self.choice([1, full[-3]]))
                    ends.insert(0, 3)
            else:
                keep = rank if index == 0 or self.chance(0.4) else int(self.rng.integers(rank + 1))
                shape = [d if self.chance(0.7) else 1 for d in full[rank - keep :]]
                ends = list(range(keep, 0, -1))
            # A dim at the symbol's place in the full shape, not broadcast (1), is symbolic.
            symbolic_shapes.append(
                tuple(SYMBOL if e == symbolic and d > 1 else d for d, e in zip(shape, ends))
            )
            shapes.append(tuple(shape))
        if symbolic is not None and not any(SYMBOL in shape for shape in symbolic_shapes):
            symbolic_shapes[0] = tuple(
                SYMBOL if i == rank - symbolic else d for i, d in enumerate(full)
            )
            shapes[0] = tuple(full)
        dtype = FORM_DTYPES[self.form]
        self.values = [self.widened(x) for x in sample_inputs(self.seed, shapes, dtype)]
        self.uses = [0] * count
        if symbolic is not None:
            size = full[-symbolic]
            # Larger: a static-bound slice of the symbolic axis (``x[1:4]``), which Cuvil
            # checks at each call, then holds at both sizes. By more than any stride
            # (at most 3), so a dim the symbol sizes differs at the two sizes even after
            # a strided convolution or pooling: that is how the generator tells it. By 5
            # or 7, so the sizes differ in parity and modulo 3 too: sizes equal only for
            # some residues (``n // 2 * 2`` and ``n``) differ at one of the two sizes.
            second = size + self.choice([5, 7])
            self.symbolic_shapes = symbolic_shapes
            self.alternate_shapes = [
                tuple(second if d == SYMBOL else d for d in shape) for shape in symbolic_shapes
            ]
            alternates = sample_inputs(self.seed, self.alternate_shapes, dtype, stream=2)
            self.alternates = [self.widened(x) for x in alternates]

    def widened(self, x):
        """A float graph's values are tracked in float64, an integer graph's as they are."""
        return x if self.integer else x.astype(np.float64)

    # ----- op builders: each tries to add one op (with the helpers it needs) -------------
    def build_binary(self) -> bool:
        a = self.pick()
        b = self.pick(self.compatible(self.shape(a), exclude=a) or [a])
        a, b = (b, a) if self.chance(0.5) else (a, b)
        return self.put(self.choice(["add", "sub", "mul", "maximum", "minimum"]), [a, b], {})

    def build_div(self) -> bool:
        a = self.pick()
        return self.put(
            self.choice(["div_sq", "div_abs"]), [a, self.pick(self.compatible(self.shape(a)))], {}
        )

    def build_constant(self) -> bool:
        a = self.pick()
        params = {"op": self.choice(list(BINARY)), "reversed": self.chance(0.3)}
        if self.chance(0.6):
            value = self.choice(INT_SCALARS if self.integer else SCALARS)
            return self.put("scalar", [a], {**params, "value": value})
        shape = self.shape(a)
        dims = [d if self.chance(0.6) else 1 for d in shape[len(shape) - self.dim() % 3 :]]
        while math.prod(dims) > 12:
            dims[dims.index(max(dims))] = 1
        if self.integer:
            value = self.rng.integers(-5, 6, size=dims).astype(np.int32)
        else:  # float32 constants in float64 graphs too: NumPy widens them exactly
            value = self.rng.uniform(-1.0, 1.0, size=dims).astype(np.float32)
        return self.put("array", [a], {**params, "value": value})

    def build_int_division(self) -> bool:
        params = {"op": self.choice(["//", "%"]), "value": self.choice(INT_DIVISORS)}
        return self.put("int_division", [self.pick()], params)

    def build_unary(self) -> bool:
        kind = self.choice(["neg", "abs", "relu"] if self.integer else list(UNARY))
        params = {"c": self.choice([0.5, 1.0, 2.0])} if kind == "sqrt_abs" else {}
        return self.put(kind, [self.pick()], params)

    def build_reduce(self) -> bool:
        a = self.pick(self.ranked(1))
        if a is None:
            return False
        rank, r = len(self.shape(a)), self.rng.random()
        if r < 0.2:
            axis = None
        elif r < 0.65:
            axis = int(self.rng.integers(rank)) - (rank if self.chance(0.3) else 0)
        else:
            count = int(self.rng.integers(1, rank + 1))
            axis = tuple(sorted(int(i) for i in self.rng.choice(rank, size=count, replace=False)))
        fn, keepdims, method = (
            self.choice(["sum", "max", "min"] if self.integer else ["sum", "mean", "max", "min"]),
            self.chance(0.4),
            self.chance(0.5),
        )
        return self.put(
            "reduce", [a], {"fn": fn, "axis": axis, "keepdims": keepdims, "method": method}
        )

    def build_softmax(self) -> bool:
        a = self.pick(self.ranked(1))
        if a is None:
            return False
        rank = len(self.shape(a))
        return self.put("softmax", [a], {"axis": int(self.rng.integers(-rank, rank))})

    def build_layer_norm(self) -> bool:
        a = self.pick(self.ranked(1))
        if a is None:
            return False
        rank = len(self.shape(a))
        params = {"axis": -1 if self.chance(0.7) else int(self.rng.integers(-rank, 0))}
        for values in (self.values, self.alternates or self.values):
            x = values[a]
            if np.min(np.std(x, axis=norm_axes(x, params))) < MIN_ROW_STD:
                return False  # near-constant rows: float32 normalization is ill-conditioned
        return self.put("layer_norm", [a], params)

    def factorize(self, size: int, rank: int) -> tuple:
        """A random shape of ``rank`` dims whose product is ``size``."""
        dims, p = [1] * rank, 2
        while size > 1:
            while size % p == 0:
                dims[int(self.rng.integers(rank))] *= p
                size //= p
            p += 1
        return tuple(dims)

    def build_reshape(self) -> bool:
        a = self.pick()
        size = self.values[a].size
        rank = int(self.rng.integers(0 if size == 1 else 1, 5))
        target = self.factorize(size, rank)
        if target == self.shape(a):
            return False
        if rank and self.chance(0.3):
            j = int(self.rng.integers(rank))
            target = target[:j] + (-1,) + target[j + 1 :]
        return self.put("reshape", [a], {"shape": target, "method": self.chance(0.5)})

    def build_transpose(self) -> bool:
        a = self.pick(self.ranked(2))
        if a is None:
            return False
        rank = len(self.shape(a))
        perm = tuple(int(i) for i in self.rng.permutation(rank))
        if perm == tuple(range(rank)):
            perm = perm[1:] + perm[:1]
        reverse = perm == tuple(reversed(range(rank)))
        style = "T" if reverse and self.chance(0.5) else self.choice(["np", "method"])
        return self.put("transpose", [a], {"perm": perm, "style": style})

    def build_broadcast_to(self) -> bool:
        a = self.pick()
        shape = self.shape(a)
        lead = [self.dim() for _ in range(int(self.rng.integers(0, 5 - len(shape))))]
        target = lead + [self.dim(2) if d == 1 and self.chance(0.7) else d for d in shape]
        if tuple(target) == shape and len(shape) < 4:
            target.insert(0, self.dim(2))
        elif tuple(target) == shape:
            return False
        return self.put("broadcast_to", [a], {"shape": tuple(target)})

    def build_concat(self) -> bool:
        a = self.pick(self.ranked(1))
        if a is None:
            return False
        shape = self.shape(a)
        axis = int(self.rng.integers(len(shape)))
        peers = [
            i
            for i, v in enumerate(self.values)
            if v.ndim == len(shape)
            and v.shape[:axis] + v.shape[axis + 1 :] == shape[:axis] + shape[axis + 1 :]
        ]
        parts = [a] + [self.pick(peers) for _ in range(int(self.rng.integers(1, 3)))]
        size = self.shape(parts[-1])[axis]
        # Concatenate a slice of a part (not of a symbolic axis: see build_slice).
        if size >= 2 and self.chance(0.3) and self.room() >= 3 and self.fixed(parts[-1]):
            start = int(self.rng.integers(0, size - 1))
            index = ((None, None, None),) * axis + (
                (start, int(self.rng.integers(start + 1, size)), None),
            )
            parts[-1] = self.emit("slice", [parts[-1]], {"index": index})
        order = [parts[int(i)] for i in self.rng.permutation(len(parts))]
        return self.put("concat", order, {"axis": axis - (len(shape) if self.chance(0.3) else 0)})

    def symbolic_axes(self, value: int) -> set:
        """The axes of a dynamic graph's value whose size follows the symbol."""
        if self.alternates is None:
            return set()
        pairs = enumerate(zip(self.shape(value), self.alternates[value].shape))
        return {axis for axis, (d, e) in pairs if d != e}

    def fixed(self, value: int) -> bool:
        """Whether the value has the same shape at both sizes of the symbol."""
        return not self.symbolic_axes(value)

    def build_slice(self) -> bool:
        """Slices and integer indexes; in a dynamic graph, Cuvil's symbolic tracer takes a
        symbolic axis whole and refuses integer indexes on arrays with symbolic dims."""
        a = self.pick(self.ranked(1))
        if a is None:
            return False
        index, symbolic = [], self.symbolic_axes(a)
        for axis, d in enumerate(self.shape(a)):
            r = self.rng.random()
            if r < 0.35 or axis in symbolic:
                index.append((None, None, None))
            elif r < 0.45 and not symbolic:
                index.append(int(self.rng.integers(-d, d)))
            else:
                start, step = int(self.rng.integers(d)), self.choice([1, 1, 2, 3])
                stop = int(self.rng.integers(start + 1, d + 1))
                shown_start = start - d if self.chance(0.2) else (start or None)
                shown_stop = None if stop == d and self.chance(0.5) else stop
                index.append((shown_start, shown_stop, None if step == 1 else step))
        while len(index) > 1 and index[-1] == (None, None, None) and self.chance(0.5):
            index.pop()
        params = {"index": tuple(index)}
        if self.evaluate("slice", [a], params).shape == self.shape(a):
            if symbolic:
                return False
            first = 0 if self.shape(a)[0] == 1 else (1, None, None)
            params = {"index": (first,) + tuple(index[1:])}
        return self.put("slice", [a], params)

    def build_where(self) -> bool:
        chosen = [self.pick()]
        joint = self.shape(chosen[0])
        for _ in range(3):
            chosen.append(self.pick(self.compatible(joint, exclude=chosen[-1]) or [chosen[-1]]))
            joint = np.broadcast_shapes(joint, self.shape(chosen[-1]))
        return self.put("where", chosen, {"cmp": self.choice(list(COMPARE))})

    def build_matmul(self) -> bool:
        """``a @ b`` with ``a`` 2-D/3-D (reshaped if needed) and ``b`` found or built to fit:
        a value of shape (.., K, N), the transpose of one of shape (.., N, K), or a flattened,
        sliced and reshaped value with enough elements."""
        matrices = self.ranked(2, 3)
        a = self.pick(matrices or None)
        a_shape = self.shape(a) if matrices else self.factorize(self.values[a].size, 2)
        k, batch, n = a_shape[-1], a_shape[:-2], self.dim()

        def batch_fits(i):
            try:
                return len(np.broadcast_shapes(batch, self.shape(i)[:-2])) <= 1
            except ValueError:
                return False

        routes = {
            "direct": [i for i in matrices if self.shape(i)[-2] == k and batch_fits(i)],
            "swapped": [i for i in matrices if self.shape(i)[-1] == k and batch_fits(i)],
            "flat": [i for i, v in enumerate(self.values) if v.size >= k * n and self.fixed(i)],
        }
        available = [route for route, ids in routes.items() if ids]
        if not available:
            return False
        route = self.choice(available)
        b = self.pick(routes[route])
        b_shape, steps = self.shape(b), []  # steps: (kind, params) turning b into b_shape
        if route == "swapped":
            rank = len(b_shape)
            perm = tuple(range(rank - 2)) + (rank - 1, rank - 2)
            steps.append(("transpose", {"perm": perm, "style": "np" if rank == 3 else "T"}))
            b_shape = b_shape[:-2] + (b_shape[-1], b_shape[-2])
        elif route == "flat":
            size = self.values[b].size
            b_shape = (k, n)
            if batch and self.chance(0.4) and size >= batch[0] * k * n:
                b_shape = (self.choice([1, batch[0]]), k, n)
            steps = self.flat_steps(b, b_shape)
        out_size = math.prod(np.broadcast_shapes(batch, b_shape[:-2])) * a_shape[-2] * n
        if len(steps) + (a_shape != self.shape(a)) + 2 > self.room() or out_size > MAX_ELEMENTS:
            return False
        if a_shape != self.shape(a):
            a = self.emit("reshape", [a], {"shape": a_shape, "method": False})
        for kind, params in steps:
            b = self.emit(kind, [b], params)
        return self.put("matmul", [a, b], {})

    def flat_steps(self, b: int, shape) -> list:
        """(kind, params) steps turning value ``b`` (with at least prod(shape) elements) into
        ``shape``: flattened, sliced to the size, reshaped."""
        size, steps = self.values[b].size, []
        if len(self.shape(b)) != 1:
            steps.append(("reshape", {"shape": (-1,), "method": True}))
        if size > math.prod(shape):
            start = int(self.rng.integers(0, size - math.prod(shape) + 1))
            steps.append(("slice", {"index": ((start, start + math.prod(shape), None),)}))
        steps.append(("reshape", {"shape": tuple(shape), "method": True}))
        return steps

    def image(self):
        """An NCHW value for conv2d or pooling, H and W at least 2 (a value reshaped to one if
        none is 4-D): ``(value, shape)``, or None when no value has the elements."""
        images = [i for i in self.ranked(4, 4) if min(self.shape(i)[2:]) >= 2]
        a = self.pick(images or None)
        if images:
            return a, self.shape(a)
        size = self.values[a].size
        heights = [
            d
            for d in range(2, 10)
            if size % d == 0 and any((size // d) % e == 0 for e in range(2, 10))
        ]
        if not heights:
            return None
        h = self.choice(heights)
        w = self.choice([e for e in range(2, 10) if (size // h) % e == 0])
        return a, self.factorize(size // (h * w), 2) + (h, w)

    def build_conv2d(self) -> bool:
        """A convolution: strides, padding, dilations and (depthwise) groups drawn; its weight
        a constant or a graph value reshaped to (F, C / groups, KH, KW)."""
        found = self.image()
        if found is None:
            return False
        a, (n, c, h, w) = found
        kernel = tuple(int(self.rng.integers(1, 4)) for _ in range(2))
        dilations = (self.choice([1, 1, 2]), self.choice([1, 1, 2]))
        strides = (self.choice([1, 1, 2]), self.choice([1, 1, 2]))
        padding = tuple(
            int(self.rng.integers(0, k)) for k in kernel * 2
        )  # top, left, bottom, right
        extent = [d * (k - 1) + 1 for d, k in zip(dilations, kernel)]
        if h + padding[0] + padding[2] < extent[0] or w + padding[1] + padding[3] < extent[1]:
            return False
        groups = c if c > 1 and self.chance(0.3) else 1
        weight_shape = (groups * int(self.rng.integers(1, 4)), c // groups) + kernel
        params = {"strides": strides, "padding": padding, "dilations": dilations, "groups": groups}
        steps, args = [], [a]
        candidates = [
            i
            for i, v in enumerate(self.values)
            if v.size >= math.prod(weight_shape) and self.fixed(i)
        ]
        if candidates and self.chance(0.5):
            args.append(self.pick(candidates))
            steps = self.flat_steps(args[1], weight_shape)
        else:
            weight = self.rng.uniform(-1.0, 1.0, size=weight_shape)
            params["weight"] = weight.astype(FORM_DTYPES[self.form])
        if len(steps) + ((n, c, h, w) != self.shape(a)) + 2 > self.room():
            return False
        if (n, c, h, w) != self.shape(a):
            args[0] = self.emit("reshape", [a], {"shape": (n, c, h, w), "method": False})
        for kind, step in steps:
            args[1] = self.emit(kind, [args[1]], step)
        return self.put("conv2d", args, params)

    def build_pool2d(self) -> bool:
        found = self.image()
        if found is None:
            return False
        a, (n, c, h, w) = found
        kernel = (
            int(self.rng.integers(1, min(h, 3) + 1)),
            int(self.rng.integers(1, min(w, 3) + 1)),
        )
        strides = None if self.chance(0.3) else (self.choice([1, 2]), self.choice([1, 2]))
        padding = tuple(int(self.rng.integers(0, k // 2 + 1)) for k in kernel * 2)
        params = {
            "kind": self.choice(["max", "avg"]),
            "kernel": kernel,
            "strides": strides,
            "padding": padding,
            "count_include_pad": self.chance(0.5),
        }
        if ((n, c, h, w) != self.shape(a)) + 2 > self.room():
            return False
        if (n, c, h, w) != self.shape(a):
            a = self.emit("reshape", [a], {"shape": (n, c, h, w), "method": False})
        return self.put("pool2d", [a], params)

    def attempt(self, kind: str) -> None:
        """Run one builder; in a dynamic graph, take back what it added when an op it needed
        is not valid at the second size."""
        saved = len(self.nodes), list(self.uses)
        try:
            getattr(self, "build_" + kind)()
        except _Rejected:
            count, self.uses = saved
            del self.nodes[count:]
            inputs = len(self.symbolic_shapes)
            del self.values[inputs + count :], self.alternates[inputs + count :]

    def generate(self) -> Graph:
        self.make_inputs()
        inputs = len(self.values)
        target = int(self.rng.integers(max(1, self.max_nodes // 3), self.max_nodes + 1))
        table = self.INT_WEIGHTS if self.integer else self.FLOAT_WEIGHTS
        kinds = list(table)
        weights = np.array([table[k] for k in kinds], dtype=np.float64)
        for _ in range(50 * self.max_nodes):
            if len(self.nodes) >= target:
                break
            self.attempt(kinds[int(self.rng.choice(len(kinds), p=weights / weights.sum()))])
        if not self.nodes:
            raise RuntimeError(f"seed {self.seed}: no op fits in {self.max_nodes} nodes")
        last = len(self.values) - 1
        outputs = [last] + [i for i in range(inputs, last) if self.uses[i] == 0][-2:]
        used = [i for i in range(inputs, last) if self.uses[i] > 0]
        if used and self.chance(0.2):  # also return a value that other nodes consume
            outputs.append(self.choice(used))
        shapes = [self.shape(i) for i in range(inputs)]
        return Graph(
            self.seed,
            shapes,
            self.nodes,
            tuple(outputs),
            self.form,
            self.symbolic_shapes,
            self.alternate_shapes,
        )


def generate_graph(seed: int, max_nodes: int = 20, form: str | None = None) -> Graph:
    """The random graph of ``seed`` (deterministic), with at most ``max_nodes`` nodes, in the
    form its seed draws (module docstring) unless ``form`` names one."""
    return _Generator(seed, max_nodes, form or draw_form(seed)).generate()


# ----- reference, comparison, running ---------------------------------------------------


def evaluate_reference(graph: Graph, inputs) -> Reference:
    """The graph's function on float64 copies of ``inputs``, with propagated error estimates
    in the graph's precision (a float64 graph's reference carries that error too, so it
    counts twice); an integer graph's function on ``inputs`` themselves, to be matched
    exactly."""
    if graph.dtype.kind == "i":
        with np.errstate(all="ignore"):
            values = [np.asarray(v) for v in as_tuple(graph.make_function()(*inputs))]
        return Reference(values, [np.zeros(v.shape) for v in values])
    wide = [x.astype(np.float64) for x in inputs]
    values = [np.asarray(v, dtype=np.float64) for v in as_tuple(graph.make_function()(*wide))]
    vals, errs = list(wide), [np.zeros(x.shape) for x in wide]
    with working_precision(graph.dtype):
        for node in graph.nodes:
            xs, es = [vals[i] for i in node.args], [errs[i] for i in node.args]
            vals.append(np.asarray(OPS[node.kind].apply(xs, node.params), dtype=np.float64))
            error = OPS[node.kind].error(xs, es, vals[-1], node.params)
            errs.append(np.array(np.broadcast_to(error, vals[-1].shape), dtype=np.float64))
    factor = 2.0 if graph.dtype == np.float64 else 1.0
    return Reference(values, [factor * errs[i] for i in graph.outputs])


@dataclass
class Outcome:
    """One graph's result; ``failures`` maps a label ("fused", "unfused", "c", "wasm") or
    "generator" to a message."""

    seed: int
    description: str = "<no graph>"
    form: str = ""
    # The other targets (EXTRA_TARGETS) it runs on.
    targets: tuple = ()
    kinds: Counter = field(default_factory=Counter)
    failures: dict = field(default_factory=dict)
    compile_errors: int = 0
    fallbacks: int = 0


def _poisoned_call(compiled, inputs, like):
    """Call ``compiled`` right after freeing blocks the size of its outputs filled with NaN
    (integers: their smallest value): NumPy's allocator hands those blocks to the new outputs,
    so output elements the compiled code never writes show up rather than stale (possibly
    right) values."""
    poison = [
        np.full(np.shape(v), np.iinfo(t).min if t.kind == "i" else np.nan, dtype=t)
        for v, t in like
        for _ in range(2)
    ]
    del poison
    return compiled(*inputs)


# Static graphs also run on other targets: on the c target those whose seed is 0 modulo 4
# (its code goes through the system's C compiler), on wasm those whose seed is 2 modulo 4
# (each call starts Node).
EXTRA_TARGETS = {"c": (4, 0), "wasm": (4, 2)}
# How each label compiles: (target, fusion).
LABELS = {"fused": ("cpu", True), "unfused": ("cpu", False), "c": ("c", True)}
LABELS["wasm"] = ("wasm", True)


def labels_of(graph: Graph) -> tuple:
    """The compilations a graph is checked in."""
    return ("fused", "unfused") + extra_targets_of(graph)


def extra_targets_of(graph: Graph) -> tuple:
    """The targets besides the cpu a (static) graph runs on."""
    if graph.form == "dynamic":
        return ()
    return tuple(t for t, (every, at) in EXTRA_TARGETS.items() if graph.seed % every == at)


def _compile(graph: Graph, label: str):
    """The graph's compiled function for ``label`` (LABELS): ``cuvil.jit`` (traced at the
    first call), or for a dynamic graph one compilation of its symbolic IR."""
    target, fused = LABELS[label]
    if graph.form != "dynamic":
        return cuvil.jit(graph.make_function(), target=target, enable_fusion=fused)
    module = to_ir_with_dynamic_shape(graph.make_function(), graph.input_specs(), target=target)
    return module.compile(enable_fusion=fused)


def _check_run(graph, compiled, inputs, reference) -> str | None:
    """Call ``compiled`` twice on ``inputs``; what differs from ``reference``, or None."""
    names = [graph.name(i) for i in graph.outputs]
    copies = [x.copy() for x in inputs]
    first = compiled(*inputs)  # a jitted graph traces, compiles and runs
    kinds = [v.dtype if v.dtype.kind == "i" else graph.dtype for v in reference.values]
    second = _poisoned_call(compiled, inputs, list(zip(reference.values, kinds)))
    with working_precision(np.float64 if graph.dtype == np.float64 else np.float32):
        problem = compare(first, reference, names)
        if problem is None:
            later = compare(second, reference, names)
            problem = later and f"second call (outputs over poisoned memory): {later}"
    changed = [graph.name(i) for i, x in enumerate(inputs) if not np.array_equal(x, copies[i])]
    if changed:
        problem = f"modified input {', '.join(changed)}" + (f"; {problem}" if problem else "")
    return problem


def run_graph(seed: int, max_nodes: int = 20) -> Outcome:
    """Generate the graph of ``seed``, compile it fused and unfused, compare with float64 (a
    dynamic graph at both sizes of its symbol)."""
    outcome = Outcome(seed)
    try:
        graph = generate_graph(seed, max_nodes)
        outcome.description, outcome.kinds = graph.description(), graph.kinds()
        outcome.form = graph.form
        outcome.targets = extra_targets_of(graph)
        runs = [graph.sample_inputs()] + (
            [graph.alternate_inputs()] if graph.alternate_shapes else []
        )
        runs = [(inputs, evaluate_reference(graph, inputs)) for inputs in runs]
    except Exception:  # a defect of this generator: reported, not raised
        outcome.failures["generator"] = traceback.format_exc(limit=-4).strip()
        return outcome
    for _, reference in runs:
        if not all(np.isfinite(v).all() for v in reference.values + reference.errors):
            outcome.failures["generator"] = "the float64 reference or its error is not finite"
            return outcome
    for label in labels_of(graph):
        problems = []
        try:
            compiled = _compile(graph, label)
            for inputs, reference in runs:
                problem = _check_run(graph, compiled, inputs, reference)
                if problem and len(runs) > 1:
                    problem = f"at input shapes {[x.shape for x in inputs]}: {problem}"
                problems += [problem] if problem else []
        except cuvil.CompileError as error:
            outcome.compile_errors += 1
            outcome.failures[label] = f"CompileError: {error}"
            continue
        except Exception as error:
            outcome.failures[label] = "raised " + traceback.format_exception_only(error)[-1].strip()
            continue
        reason = None if graph.form == "dynamic" else cuvil.last_fallback_reason(compiled)
        if reason is not None:  # the generator must only build graphs Cuvil compiles
            outcome.fallbacks += 1
            outcome.failures["generator"] = f"{label} call fell back to NumPy: {reason}"
            continue
        if problems:
            outcome.failures[label] = "; ".join(problems)
    return outcome


@dataclass
class Report:
    """Counts over a batch of graphs, and the outcomes that failed."""

    graphs: int = 0
    fused_mismatches: int = 0
    unfused_mismatches: int = 0
    # Per target of EXTRA_TARGETS: graphs whose results differed, graphs run.
    target_mismatches: Counter = field(default_factory=Counter)
    target_graphs: Counter = field(default_factory=Counter)
    compile_errors: int = 0
    fallbacks: int = 0
    generator_errors: int = 0
    crashes: int = 0
    seconds: float = 0.0
    kinds: Counter = field(default_factory=Counter)
    forms: Counter = field(default_factory=Counter)
    failed: list = field(default_factory=list)

    def add(self, outcome: Outcome) -> None:
        self.graphs += 1
        self.kinds.update(outcome.kinds)
        self.forms.update([outcome.form] if outcome.form else [])
        self.fused_mismatches += "fused" in outcome.failures
        self.unfused_mismatches += "unfused" in outcome.failures
        self.target_mismatches.update(t for t in outcome.targets if t in outcome.failures)
        self.target_graphs.update(outcome.targets)
        self.compile_errors += outcome.compile_errors
        self.fallbacks += outcome.fallbacks
        self.generator_errors += "generator" in outcome.failures and not outcome.fallbacks
        self.crashes += "crash" in outcome.failures
        self.failed += [outcome] if outcome.failures else []

    def merge(self, other: Report) -> None:
        for name in ("graphs", "fused_mismatches", "unfused_mismatches", "compile_errors"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        for name in ("fallbacks", "generator_errors", "crashes"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.target_mismatches.update(other.target_mismatches)
        self.target_graphs.update(other.target_graphs)
        self.seconds += other.seconds
        self.kinds.update(other.kinds)
        self.forms.update(other.forms)
        self.failed += other.failed

    def summary(self) -> str:
        return (
            f"{self.graphs} graphs in {self.seconds:.1f} s: mismatches fused "
            f"{self.fused_mismatches}, unfused {self.unfused_mismatches}, "
            + ", ".join(
                f"{t} {self.target_mismatches[t]} (of {self.target_graphs[t]} on {t})"
                for t in EXTRA_TARGETS
            )
            + "; compile errors "
            f"{self.compile_errors}; crashes {self.crashes}; fallbacks {self.fallbacks}; "
            f"generator errors {self.generator_errors}"
        )

    def format(self, max_nodes: int) -> str:
        lines = [
            self.summary(),
            "forms: " + ", ".join(f"{k} {n}" for k, n in sorted(self.forms.items())),
            "ops: " + ", ".join(f"{k} {n}" for k, n in sorted(self.kinds.items())),
        ]
        for outcome in self.failed:
            lines += [""] + [
                f"FAIL seed {outcome.seed} [{k}]: {m}" for k, m in outcome.failures.items()
            ]
            lines.append(
                f"  reproduce: .venv/bin/python tests/fuzz/random_graphs.py --seed {outcome.seed} "
                f"--graphs 1 --max-nodes {max_nodes} --show"
            )
            lines.append(outcome.description)
        return "\n".join(lines)


def run_batch(seed: int, graphs: int, max_nodes: int = 20, show=None) -> Report:
    """Run the graphs of seeds ``seed .. seed + graphs - 1``; ``show`` sees each outcome."""
    report, started = Report(), time.perf_counter()
    for index in range(graphs):
        outcome = run_graph(seed + index, max_nodes)
        report.add(outcome)
        if show is not None:
            show(outcome)
    report.seconds = time.perf_counter() - started
    return report


def _show(outcome: Outcome) -> None:
    status = "; ".join(f"{k}: {m}" for k, m in outcome.failures.items()) or "ok"
    print(f"seed {outcome.seed}: {status}\n{outcome.description}\n", flush=True)


def _chunk_process(connection, seed: int, graphs: int, max_nodes: int, show: bool) -> None:
    os.environ["CUVIL_DISABLE_DISK_CACHE"] = "1"  # thousands of one-off graphs: do not cache
    connection.send(run_batch(seed, graphs, max_nodes, _show if show else None))
    connection.close()


def run_chunk(seed: int, graphs: int, max_nodes: int = 20, show: bool = False) -> Report:
    """``run_batch`` in a child process. Every compilation stays alive as long as its process
    (``cuvil.compilations()`` keeps it), so a fresh process per chunk bounds the memory of a
    long run; and a graph that crashes its process is reported instead of ending the run."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_chunk_process, args=(sender, seed, graphs, max_nodes, show))
    child.start()
    sender.close()
    try:
        report = receiver.recv()
    except EOFError:  # the child died before sending its report
        report = None
    child.join()
    if report is not None:
        return report
    report = Report()
    if graphs > 1:  # find the graph that crashed: one process per graph
        for index in range(graphs):
            report.merge(run_chunk(seed + index, 1, max_nodes, show))
        return report
    outcome = Outcome(seed, generate_graph(seed, max_nodes).description())
    outcome.failures["crash"] = f"the process running it died (exit code {child.exitcode})"
    report.add(outcome)
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--graphs", type=int, default=200, help="number of graphs (200)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first graph (0)")
    parser.add_argument("--max-nodes", type=int, default=20, help="nodes per graph at most (20)")
    parser.add_argument("--show", action="store_true", help="print every graph and its result")
    parser.add_argument("--chunk", type=int, default=200, help="graphs per child process (200)")
    parser.add_argument("--jobs", type=int, default=1, help="child processes at once (1)")
    args = parser.parse_args(argv)
    report, started = Report(), time.perf_counter()
    chunks = [
        (s, min(args.chunk, args.seed + args.graphs - s))
        for s in range(args.seed, args.seed + args.graphs, args.chunk)
    ]

    def run(chunk):
        return run_chunk(chunk[0], chunk[1], args.max_nodes, args.show)

    with ThreadPoolExecutor(max(1, args.jobs)) as pool:
        for (first, count), part in zip(chunks, pool.map(run, chunks)):
            report.merge(part)
            if len(chunks) > 1:
                print(f"seeds {first}..{first + count - 1}: {part.summary()}", flush=True)
    report.seconds = time.perf_counter() - started
    print(report.format(args.max_nodes))
    return 0 if not report.failed else 1


if __name__ == "__main__":
    sys.exit(main())
