"""Op kinds of the random-graph tester: how each op runs, reads as Python, and propagates error."""

from __future__ import annotations

import contextlib
import math
import operator
import pathlib
import sys
from dataclasses import dataclass

import numpy as np

_PACKAGE_DIR = pathlib.Path(__file__).resolve().parents[2] / "embedded_python"
if str(_PACKAGE_DIR) not in sys.path:
    sys.path.insert(0, str(_PACKAGE_DIR))

import cuvil  # noqa: E402

# ----- ERROR MODEL ---------------------------------------------------------------------
# The float64 reference is evaluated node by node together with an elementwise estimate of
# the absolute error a float32 evaluation of the same node may carry (running error analysis):
#   * inputs are exact (their float64 copies hold the same values): error 0;
#   * each op propagates its operands' errors through its derivative (a*b gets |b|*ea +
#     |a|*eb + ea*eb, layer norm divides by the row's std, ...), taken at its worst over
#     the interval the operand may lie in (x +- SAFETY*e), so that large errors (a flipped
#     np.where upstream) stay bounded; and it adds its own rounding: U*|result| for + - *,
#     2U*|result| for / and sqrt,
#     TRANSCENDENTAL*U*(|result| + floor) for exp/log/tanh/erf/sigmoid/gelu and normalizations;
#   * a sum, mean or matmul over n terms adds U*acc(n)*sum|terms|, acc(n) = min(n, 2*sqrt(n))+1,
#     so the tolerance grows with the reduction sizes as well as with the depth;
#   * data movement (reshape, transpose, slice, broadcast, concat) moves the errors along;
#   * np.where may pick the other branch where |a - b| <= SAFETY * (ea + eb); there the
#     error is |x - y| plus theirs.
# An element matches when |cuvil - reference| <= SAFETY * error + U * |reference|.
# U is the unit roundoff of the graph's working precision (``working_precision``); a float64
# graph's reference is computed in float64 as well, so its tolerance counts the error twice.
# Integer graphs are compared exactly with NumPy's own integer evaluation.
UNIT_ROUNDOFF = {np.dtype(np.float32): 2.0**-23, np.dtype(np.float64): 2.0**-52}
U = UNIT_ROUNDOFF[np.dtype(np.float32)]
SAFETY = 4.0
TRANSCENDENTAL = 16.0


@contextlib.contextmanager
def working_precision(dtype):
    """Estimate errors (and judge results) for a graph computed in ``dtype`` within the block."""
    global U
    saved, U = U, UNIT_ROUNDOFF[np.dtype(dtype)]
    try:
        yield
    finally:
        U = saved


def acc(n: int) -> float:
    """Rounding growth of an n-term accumulation (worst case n, typical 2*sqrt(n))."""
    return min(float(n), 2.0 * math.sqrt(n)) + 1.0


def _count(shape, axis) -> int:
    """Number of elements a reduction over ``axis`` (None, int or tuple) combines."""
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, tuple) else (axis,)
    return math.prod(shape[a] for a in axes)


def _transcendental(out, floor):
    return TRANSCENDENTAL * U * (np.abs(out) + floor)


# ----- op kinds -----------------------------------------------------------------------------


@dataclass(frozen=True)
class OpKind:
    """One op: ``apply(args, params)`` computes it with NumPy and cuvil calls only (so it
    traces), ``text(names, params)`` writes it as Python, ``error(xs, es, out, params)``
    estimates the error of its float32 result from its operands' values and errors."""

    apply: object
    text: object
    error: object


def _sum_error(xs, es, out):
    return es[0] + es[1] + U * np.abs(out)


def _mul_error(xs, es, out):
    (a, b), (ea, eb) = xs, es
    return ea * np.abs(b) + eb * np.abs(a) + ea * eb + U * np.abs(out)


BINARY = {  # op: (function, text, error)
    "+": (operator.add, "{} + {}", _sum_error),
    "-": (operator.sub, "{} - {}", _sum_error),
    "*": (operator.mul, "{} * {}", _mul_error),
    "max": (np.maximum, "np.maximum({}, {})", lambda xs, es, out: np.maximum(*es)),
    "min": (np.minimum, "np.minimum({}, {})", lambda xs, es, out: np.maximum(*es)),
}


def _binary(op: str) -> OpKind:
    fn, text, error = BINARY[op]
    return OpKind(
        lambda a, p: fn(a[0], a[1]),
        lambda n, p: text.format(*n),
        lambda xs, es, out, p: error(xs, es, out),
    )


def _literal(value) -> str:
    """Python source for a constant operand: a Python number, or a NumPy array."""
    if isinstance(value, (float, int)):
        return repr(value)
    dtype = value.dtype

    def nested(item):
        if isinstance(item, list):
            return "[" + ", ".join(nested(i) for i in item) + "]"
        return repr(item) if dtype.kind == "i" else str(dtype.type(item))

    return f"np.array({nested(value.tolist())}, dtype=np.{dtype.name})"


def _operands(x, p):
    return (p["value"], x) if p["reversed"] else (x, p["value"])


def _constant_error(xs, es, out, p):
    c = np.asarray(p["value"], dtype=np.float64)
    xs, es = _operands(xs[0], {**p, "value": c}), _operands(es[0], {**p, "value": 0.0 * c})
    return BINARY[p["op"]][2](xs, es, out)


CONSTANT = OpKind(  # x op value or value op x, with a Python float or a float32 array
    lambda a, p: BINARY[p["op"]][0](*_operands(a[0], p)),
    lambda n, p: BINARY[p["op"]][1].format(*_operands(n[0], {**p, "value": _literal(p["value"])})),
    _constant_error,
)


def _division(xs, es, out, d, ed, least):
    """a / d where d >= least by construction and d may be off by up to SAFETY * ed."""
    low = np.maximum(d - SAFETY * ed, least)
    return es[0] / low + np.abs(xs[0]) * ed / (d * low) + 2 * U * np.abs(out)


def _div_sq_error(xs, es, out, p):
    b, eb = xs[1], es[1]
    d = 1.5 + b * b
    return _division(xs, es, out, d, 2 * np.abs(b) * eb + eb * eb + 2 * U * d, 1.5)


def _div_abs_error(xs, es, out, p):
    d = np.abs(xs[1]) + 1.0
    return _division(xs, es, out, d, es[1] + U * d, 1.0)


def _propagated(slope, x, e, extrema=(0.0,)):
    """|f'| at its largest over [x - SAFETY*e, x + SAFETY*e], times e. ``slope`` is f'; its
    largest |value| on an interval is at an end or at one of the ``extrema`` inside it."""
    low, high = x - SAFETY * e, x + SAFETY * e
    points = [low, high] + [np.clip(c, low, high) for c in extrema]
    return np.max([np.abs(slope(t)) for t in points], axis=0) * e


def _gelu_slope(x):
    cdf = 0.5 * (1.0 + cuvil.erf(np.asarray(x, dtype=np.float64) / math.sqrt(2.0)))
    return cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def _exp_tanh_slope(x):
    t = np.tanh(x)
    return np.exp(t) * (1.0 - t * t)


def _sigmoid_slope(x):
    s = 1.0 / (1.0 + np.exp(-x))
    return s * (1.0 - s)


def _erf_slope(x):
    return 2.0 / math.sqrt(math.pi) * np.exp(-x * x)


def _tanh_slope(x):
    return 1.0 - np.tanh(x) ** 2


UNARY = {  # kind: (function, text, error)
    "neg": (lambda x, p: -x, "-{}", lambda xs, es, out, p: es[0]),
    "abs": (lambda x, p: np.abs(x), "np.abs({})", lambda xs, es, out, p: es[0]),
    "relu": (lambda x, p: cuvil.relu(x), "cuvil.relu({})", lambda xs, es, out, p: es[0]),
    "tanh": (
        lambda x, p: np.tanh(x),
        "np.tanh({})",
        lambda xs, es, out, p: _propagated(_tanh_slope, xs[0], es[0]) + _transcendental(out, 1),
    ),
    "exp_tanh": (
        lambda x, p: np.exp(np.tanh(x)),
        "np.exp(np.tanh({}))",
        lambda xs, es, out, p: (
            _propagated(_exp_tanh_slope, xs[0], es[0], (math.atanh(0.5),))
            + math.e * _transcendental(np.tanh(xs[0]), 1.0)
            + _transcendental(out, 0.0)
        ),
    ),
    "sqrt_abs": (
        lambda x, p: np.sqrt(np.abs(x) + p["c"]),
        "np.sqrt(np.abs({}) + {c})",
        lambda xs, es, out, p: (
            _propagated(lambda t: 0.5 / np.sqrt(np.abs(t) + p["c"]), xs[0], es[0] + U * out * out)
            + 2 * U * out
        ),
    ),
    "log_abs": (
        lambda x, p: np.log(np.abs(x) + 1.0),
        "np.log(np.abs({}) + 1.0)",
        lambda xs, es, out, p: (
            _propagated(lambda t: 1.0 / (np.abs(t) + 1.0), xs[0], es[0])
            + U
            + _transcendental(out, 1.0)
        ),
    ),
    "sigmoid": (
        lambda x, p: cuvil.sigmoid(x),
        "cuvil.sigmoid({})",
        lambda xs, es, out, p: (
            _propagated(_sigmoid_slope, xs[0], es[0]) + _transcendental(out, 1.0)
        ),
    ),
    "erf": (
        lambda x, p: cuvil.erf(x),
        "cuvil.erf({})",
        lambda xs, es, out, p: _propagated(_erf_slope, xs[0], es[0]) + _transcendental(out, 1.0),
    ),
    "gelu": (
        lambda x, p: cuvil.gelu(x),
        "cuvil.gelu({})",
        lambda xs, es, out, p: (
            _propagated(_gelu_slope, xs[0], es[0], (-math.sqrt(2), math.sqrt(2)))
            + _transcendental(out, np.abs(xs[0]))
        ),
    ),
}


def _unary(kind: str) -> OpKind:
    fn, text, error = UNARY[kind]
    return OpKind(lambda a, p: fn(a[0], p), lambda n, p: text.format(n[0], **p), error)


def _reduce_apply(a, p):
    fn, axis, keepdims = p["fn"], p["axis"], p["keepdims"]
    if p["method"]:
        return getattr(a[0], fn)(axis=axis, keepdims=keepdims)
    return getattr(np, fn)(a[0], axis=axis, keepdims=keepdims)


def _reduce_text(n, p):
    options = [f"axis={p['axis']}"] if p["axis"] is not None else []
    options += ["keepdims=True"] if p["keepdims"] else []
    if p["method"]:
        return f"{n[0]}.{p['fn']}({', '.join(options)})"
    return f"np.{p['fn']}({', '.join([n[0], *options])})"


def _reduce_error(xs, es, out, p):
    x, e, fn = xs[0], es[0], p["fn"]
    options = {"axis": p["axis"], "keepdims": p["keepdims"]}
    if fn in ("max", "min"):
        return np.max(e, **options)
    rounding = U * acc(_count(x.shape, p["axis"])) * getattr(np, fn)(np.abs(x), **options)
    return getattr(np, fn)(e, **options) + rounding + 2 * U * np.abs(out)


def _softmax_error(xs, es, out, p):
    x, e, y, axis = xs[0], es[0], out, p["axis"]
    propagated = y * (e + np.sum(y * e, axis=axis, keepdims=True))
    # Far from x the slopes at x mean little; the row sums of |Jacobian| never exceed 1/2.
    largest_error = np.max(e, axis=axis, keepdims=True)
    propagated = np.where(SAFETY * largest_error > 0.01, 0.5 * largest_error, 0.0) + propagated
    largest = np.max(np.abs(x), axis=axis, keepdims=True)
    terms = TRANSCENDENTAL + 2.0 * (np.abs(x) + largest) + acc(x.shape[axis]) + 2.0
    return propagated + U * y * terms


def norm_axes(x, p) -> tuple:
    return tuple(range(x.ndim + p["axis"], x.ndim))


def _layer_norm_error(xs, es, out, p):
    x, e, ay, axes = xs[0], es[0], np.abs(out), norm_axes(xs[0], p)
    n, keep = _count(x.shape, axes), {"axis": axes, "keepdims": True}
    std = np.sqrt(np.var(x, **keep) + 1e-5)
    propagated = (e + np.mean(e, **keep) + ay * np.mean(ay * e, **keep)) / std
    # Errors comparable to the row's spread can move the result anywhere in |y| <= sqrt(n).
    unsure = SAFETY * np.max(e, **keep) > 0.1 * std
    propagated = np.where(unsure, np.maximum(propagated, (ay + math.sqrt(n)) / SAFETY), propagated)
    rounding = 2.0 * U * (acc(n) + 2.0) * np.max(np.abs(x), **keep) / std
    return propagated + rounding + U * (acc(n) + TRANSCENDENTAL) * ay


def _reshape(a, p):
    return a[0].reshape(p["shape"]) if p["method"] else np.reshape(a[0], p["shape"])


def _transpose(a, p):
    perm, style = p["perm"], p["style"]
    if style == "T":
        return a[0].T
    return a[0].transpose(*perm) if style == "method" else np.transpose(a[0], perm)


def _transpose_text(n, p):
    perm, style = p["perm"], p["style"]
    if style == "T":
        return f"{n[0]}.T"
    if style == "method":
        return f"{n[0]}.transpose({', '.join(map(str, perm))})"
    return f"np.transpose({n[0]}, {perm})"


def _index_text(index) -> str:
    parts = []
    for item in index:
        if isinstance(item, int):
            parts.append(str(item))
            continue
        start, stop, step = ("" if v is None else str(v) for v in item)
        parts.append(f"{start}:{stop}:{step}" if step else f"{start}:{stop}")
    return ", ".join(parts)


COMPARE = {">": operator.gt, "<": operator.lt, ">=": operator.ge, "<=": operator.le}


def _where_error(xs, es, out, p):
    (a, b, x, y), (ea, eb, ex, ey) = xs, es
    chosen = np.where(COMPARE[p["cmp"]](a, b), ex, ey)
    slack = ea + eb
    flip = (slack > 0) & (np.abs(a - b) <= SAFETY * slack)
    return np.where(flip, np.maximum(ex, ey) + np.abs(x - y), chosen)


def _matmul_error(xs, es, out, p):
    (a, b), (ea, eb) = xs, es
    aa, ab = np.abs(a), np.abs(b)
    rounding = U * acc(a.shape[-1]) * (aa @ ab) + U * np.abs(out)
    return aa @ eb + ea @ ab + ea @ eb + rounding


def _conv_apply(a, p):
    weight = a[1] if len(a) > 1 else p["weight"]
    options = {k: p[k] for k in ("strides", "padding", "dilations", "groups")}
    return cuvil.conv2d(a[0], weight, **options)


def _conv_text(n, p):
    weight = n[1] if len(n) > 1 else _literal(p["weight"])
    options = ", ".join(f"{k}={p[k]}" for k in ("strides", "padding", "dilations", "groups"))
    return f"cuvil.conv2d({n[0]}, {weight}, {options})"


def _conv_error(xs, es, out, p):
    """A convolution is a sum of (C / groups) * KH * KW products per output, like a matmul."""
    x, ex = xs[0], es[0]
    w = xs[1] if len(xs) > 1 else np.asarray(p["weight"], dtype=np.float64)
    ew = es[1] if len(es) > 1 else np.zeros(w.shape)
    ax, aw = np.abs(x), np.abs(w)

    def conv(a, b):
        return _conv_apply([a, b], p)

    terms = math.prod(w.shape[1:])
    rounding = U * acc(terms) * conv(ax, aw) + U * np.abs(out)
    return conv(ax, ew) + conv(ex, aw) + conv(ex, ew) + rounding


def _pool_options(p) -> dict:
    options = {"strides": p["strides"], "padding": p["padding"]}
    if p["kind"] == "avg":
        options["count_include_pad"] = p["count_include_pad"]
    return options


def _pool_apply(a, p):
    pool = cuvil.max_pool2d if p["kind"] == "max" else cuvil.avg_pool2d
    return pool(a[0], p["kernel"], **_pool_options(p))


def _pool_text(n, p):
    options = "".join(f", {k}={v}" for k, v in _pool_options(p).items())
    return f"cuvil.{p['kind']}_pool2d({n[0]}, {p['kernel']}{options})"


def _pool_error(xs, es, out, p):
    """Max pooling moves one operand's error; averaging sums KH * KW terms and divides."""
    if p["kind"] == "max":
        return _pool_apply([es[0]], p)
    rounding = U * acc(math.prod(p["kernel"])) * _pool_apply([np.abs(xs[0])], p)
    return _pool_apply([es[0]], p) + rounding + 2 * U * np.abs(out)


def _exact(xs, es, out, p):
    """Integer ops are compared exactly; they carry no error estimate."""
    return np.zeros(np.shape(out))


INTEGER_DIVISION = {"//": operator.floordiv, "%": operator.mod}


def _moved(apply, text) -> OpKind:
    """A data-movement op: its result's errors are its operands' errors, moved alike."""
    return OpKind(apply, text, lambda xs, es, out, p: apply(es, p))


OPS: dict[str, OpKind] = {
    "add": _binary("+"),
    "sub": _binary("-"),
    "mul": _binary("*"),
    "maximum": _binary("max"),
    "minimum": _binary("min"),
    "scalar": CONSTANT,
    "array": CONSTANT,
    "div_sq": OpKind(
        lambda a, p: a[0] / (1.5 + a[1] * a[1]),
        lambda n, p: f"{n[0]} / (1.5 + {n[1]} * {n[1]})",
        _div_sq_error,
    ),
    "div_abs": OpKind(
        lambda a, p: a[0] / (np.abs(a[1]) + 1.0),
        lambda n, p: f"{n[0]} / (np.abs({n[1]}) + 1.0)",
        _div_abs_error,
    ),
    **{kind: _unary(kind) for kind in UNARY},
    "reduce": OpKind(_reduce_apply, _reduce_text, _reduce_error),
    "softmax": OpKind(
        lambda a, p: cuvil.softmax(a[0], axis=p["axis"]),
        lambda n, p: f"cuvil.softmax({n[0]}, axis={p['axis']})",
        _softmax_error,
    ),
    "layer_norm": OpKind(
        lambda a, p: cuvil.layer_norm(a[0], axis=p["axis"]),
        lambda n, p: f"cuvil.layer_norm({n[0]}, axis={p['axis']})",
        _layer_norm_error,
    ),
    "reshape": _moved(
        _reshape,
        lambda n, p: (
            f"{n[0]}.reshape({p['shape']})" if p["method"] else f"np.reshape({n[0]}, {p['shape']})"
        ),
    ),
    "transpose": _moved(_transpose, _transpose_text),
    "broadcast_to": _moved(
        lambda a, p: np.broadcast_to(a[0], p["shape"]),
        lambda n, p: f"np.broadcast_to({n[0]}, {p['shape']})",
    ),
    "concat": _moved(
        lambda a, p: np.concatenate(list(a), axis=p["axis"]),
        lambda n, p: f"np.concatenate([{', '.join(n)}], axis={p['axis']})",
    ),
    "slice": _moved(
        lambda a, p: a[0][tuple(i if isinstance(i, int) else slice(*i) for i in p["index"])],
        lambda n, p: f"{n[0]}[{_index_text(p['index'])}]",
    ),
    "where": OpKind(
        lambda a, p: np.where(COMPARE[p["cmp"]](a[0], a[1]), a[2], a[3]),
        lambda n, p: f"np.where({n[0]} {p['cmp']} {n[1]}, {n[2]}, {n[3]})",
        _where_error,
    ),
    "matmul": OpKind(lambda a, p: a[0] @ a[1], lambda n, p: f"{n[0]} @ {n[1]}", _matmul_error),
    "conv2d": OpKind(_conv_apply, _conv_text, _conv_error),
    "pool2d": OpKind(_pool_apply, _pool_text, _pool_error),
    # Integer graphs only: floor division and remainder by a constant (0 included: NumPy
    # and Cuvil both give 0 there).
    "int_division": OpKind(
        lambda a, p: INTEGER_DIVISION[p["op"]](a[0], p["value"]),
        lambda n, p: f"{n[0]} {p['op']} {p['value']}",
        _exact,
    ),
}


# ----- comparison ---------------------------------------------------------------------------


@dataclass
class Reference:
    """The graph's outputs in float64 and the estimated error of a float32 evaluation."""

    values: list
    errors: list


def as_tuple(result) -> tuple:
    return result if isinstance(result, tuple) else (result,)


def compare(result, reference: Reference, names=None) -> str | None:
    """``None`` when ``result`` matches ``reference`` within tolerance, else what differs.
    Integer references must be matched exactly; float ones within the error estimate, in the
    precision ``working_precision`` names (float32 unless told)."""
    outputs = as_tuple(result)
    if len(outputs) != len(reference.values):
        return f"returned {len(outputs)} outputs, expected {len(reference.values)}"
    for k, (got, want, error) in enumerate(zip(outputs, reference.values, reference.errors)):
        label, got = f"output {k}" + (f" ({names[k]})" if names else ""), np.asarray(got)
        dtype = want.dtype if want.dtype.kind in "iub" else _float_type()
        if got.shape != want.shape or got.dtype != dtype:
            return f"{label}: got {got.dtype}{list(got.shape)}, expected {dtype}{list(want.shape)}"
        if dtype.kind in "iub":
            bad = got != want
            tolerance = np.zeros(want.shape)
        else:
            tolerance = SAFETY * error + U * np.abs(want)
            bad = ~(np.abs(got.astype(np.float64) - want) <= tolerance)  # NaN is bad too
        if bad.any():
            diff = np.abs(got.astype(np.float64) - want.astype(np.float64))
            worst = int(np.argmax(np.where(bad, diff - tolerance, -1.0)))  # NaN wins
            at = tuple(int(i) for i in np.unravel_index(worst, want.shape))
            shown = want[at] if dtype.kind in "iub" else dtype.type(want[at])
            return (
                f"{label}: {int(bad.sum())} of {want.size} elements outside tolerance; worst at "
                f"{list(at)}: got {got[at].item()!r}, expected {shown.item()!r} (reference "
                f"{want[at].item()!r}), tolerance {float(tolerance[at]):.3g}"
            )
    return None


def _float_type() -> np.dtype:
    return next(t for t, u in UNIT_ROUNDOFF.items() if u == U)
