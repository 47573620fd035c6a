"""Writes Cuvil IR as MLIR text: the one place that knows the textual syntax.

The output is a ``builtin.module`` holding one ``func.func`` whose body uses
MLIR's generic op form, e.g.::

    %0 = "cuvil.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<3xf32>)
        -> tensor<2x3xf32> loc("/m.py":4:12)

(printed on one line).

Op attributes are plain Python values and map to MLIR attributes as follows:
``bool`` -> ``true``/``false``; ``int`` -> ``N : i64``; ``float`` -> ``X : f64``;
``str`` -> a string; ``tuple``/``list`` of ints -> ``array<i64: ...>``;
``numpy.ndarray`` -> a dense elements attribute typed by the array;
:class:`IndexAttr` -> ``N : index`` (an ``arith.constant`` size).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._dtypes import mlir_element_type

__all__ = [
    "tensor_type",
    "escape_string",
    "format_loc",
    "format_attribute",
    "format_attributes",
    "OpRecord",
    "ArgRecord",
    "format_module",
    "sanitize_symbol",
    "IndexAttr",
]


class IndexAttr(int):
    """An int attribute of type ``index`` (``4 : index``), the value of a size constant."""


def tensor_type(shape: Sequence[int], dtype) -> str:
    """``tensor<2x3xf32>``; rank 0 is ``tensor<f32>``; a symbolic dim (a name, None) is ``?``."""
    element = mlir_element_type(dtype)
    dims = "".join("?x" if d is None or isinstance(d, str) else f"{int(d)}x" for d in shape)
    return f"tensor<{dims}{element}>"


@functools.lru_cache(maxsize=4096)
def escape_string(text: str) -> str:
    """An MLIR string literal: quotes, backslashes and non-ASCII bytes as ``\\XX``."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in ('"', "\\") or byte < 0x20 or byte >= 0x7F:
            out.append(f"\\{byte:02X}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def format_loc(loc) -> str:
    """``loc(...)`` for any structured location (:mod:`cuvil.frontends.locations`)."""
    return f"loc({loc.to_mlir()})"


def sanitize_symbol(name: str) -> str:
    """A valid bare MLIR symbol name derived from a Python function name."""
    cleaned = "".join(c if (c.isascii() and (c.isalnum() or c in "_$.")) else "_" for c in name)
    cleaned = cleaned.strip("_") or "function"
    if not (cleaned[0].isalpha() or cleaned[0] == "_"):
        cleaned = "_" + cleaned
    return cleaned


def _format_float(value: float, bits: int = 64) -> str:
    """A float literal MLIR accepts; non-finite values use the hexadecimal bit pattern."""
    value = float(value)
    if not math.isfinite(value):
        if bits == 32:
            raw = struct.unpack("<I", struct.pack("<f", value))[0]
            return f"0x{raw:08X}"
        raw = struct.unpack("<Q", struct.pack("<d", value))[0]
        return f"0x{raw:016X}"
    text = repr(value)
    mantissa, exponent_mark, exponent = text.partition("e")
    if "." not in mantissa:
        mantissa += ".0"
    return mantissa + (exponent_mark + exponent if exponent_mark else "")


def _raw_bytes(array: np.ndarray) -> np.ndarray:
    """The bytes MLIR stores for ``array`` (little-endian; i1 bit-packed, least
    significant bit first), as a contiguous array (a buffer, not copied where it is one)."""
    if array.dtype == np.bool_:
        return np.packbits(array.reshape(-1), bitorder="little")
    return np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).reshape(-1)


def _dense_hex(array: np.ndarray) -> str:
    """The raw bytes as hex digits (no quotes, no ``0x``), lower case: MLIR reads either,
    and upper-casing a model's weights took as long as the hex itself."""
    return _raw_bytes(array).tobytes().hex()


def _dense_scalar(value: np.generic) -> str:
    if isinstance(value, np.bool_):
        return "true" if bool(value) else "false"
    if isinstance(value, np.integer):
        return str(int(value))
    bits = 32 if value.dtype == np.float32 else 64
    return _format_float(float(value), bits)


#: Constants of at least this many bytes are "large": named by their digest in a key
#: text, or handed to the compiler as bytes (see ``format_module``).
DIGEST_BYTES = 4096

#: ``large`` of ``format_module``: each large constant as the BLAKE3 of its bytes.
DIGEST = "digest"


def digests_constants(attributes) -> bool:
    """Whether ``attributes`` hold a large constant (one a key text names by its digest)."""
    return any(isinstance(v, np.ndarray) and v.nbytes >= DIGEST_BYTES for v in attributes.values())


def _dense_parts(array: np.ndarray, out: list, large=None) -> None:
    """Appends the pieces of ``format_dense(array)`` to ``out``: a model's weights make
    megabytes of hex, which are joined into the module's text once, not at every level.

    An array of DIGEST_BYTES or more is written as ``large`` says (see ``format_module``):
    as hex (None), as the BLAKE3 of its bytes (DIGEST; not MLIR: a key naming the
    module), or, unless a splat or boolean, as ``dense_resource<name>`` with ``(name,
    bytes)`` appended to ``large`` (a list)."""
    array = np.asarray(array)
    is_large = large is not None and array.nbytes >= DIGEST_BYTES
    if is_large and large == DIGEST:
        from . import _native

        digest = _native.load().content_digest(_raw_bytes(array).view(np.uint8))
        out.append(f'dense<"blake3:{digest}"> : {tensor_type(array.shape, array.dtype)}')
        return
    flat = array.reshape(-1)
    splat = flat.size > 0 and bool(np.all(flat == flat[0]))
    if not splat and flat.size > 0 and array.dtype.kind == "f" and np.isnan(flat[0]):
        splat = bool(np.all(np.isnan(flat)))
    if splat:
        out += ("dense<", _dense_scalar(flat[0]))
    elif is_large and array.dtype != np.bool_:
        name = f"__cuvil_constant_{len(large)}"
        large.append((name, _raw_bytes(array).view(np.uint8)))
        out.append(f"dense_resource<{name}> : {tensor_type(array.shape, array.dtype)}")
        return
    else:
        out += ('dense<"0x', _dense_hex(array), '"')
    out.append(f"> : {tensor_type(array.shape, array.dtype)}")


def format_dense(array: np.ndarray) -> str:
    """``dense<...> : tensor<...>`` for a NumPy array of a supported dtype.

    Scalars and splats (all elements equal) use a literal; other arrays use the
    raw little-endian bytes as a hex string.
    """
    out: list = []
    _dense_parts(array, out)
    return "".join(out)


def format_attribute(value) -> str:
    """MLIR attribute text for one op attribute value (see the module docstring)."""
    out: list = []
    _attribute_parts(value, out)
    return "".join(out)


def _attribute_parts(value, out: list, large=None) -> None:
    """Appends the pieces of ``format_attribute(value)`` to ``out``."""
    if isinstance(value, np.ndarray):
        _dense_parts(value, out, large)
    else:
        out.append(_scalar_attribute(value))


def _scalar_attribute(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, IndexAttr):
        return f"{int(value)} : index"
    if isinstance(value, (int, np.integer)):
        return f"{int(value)} : i64"
    if isinstance(value, (float, np.floating)):
        return f"{_format_float(float(value))} : f64"
    if isinstance(value, str):
        return escape_string(value)
    if isinstance(value, (tuple, list)):
        if not value:
            return "array<i64>"
        return "array<i64: " + ", ".join(str(int(v)) for v in value) + ">"
    raise TypeError(f"no MLIR attribute form for {type(value).__name__}")


def format_attributes(attributes) -> str:
    """``{a = 1 : i64, b = true}`` for a dict of op attributes; ``""`` when there are none."""
    out: list = []
    _attributes_parts(attributes, out)
    return "".join(out)


def _attributes_parts(attributes, out: list, large=None) -> None:
    """Appends the pieces of ``format_attributes(attributes)`` to ``out``."""
    if not attributes:
        return
    out.append("{")
    for i, (key, value) in enumerate(attributes.items()):
        out.append(f"{', ' if i else ''}{key} = ")
        _attribute_parts(value, out, large)
    out.append("}")


@dataclass
class ArgRecord:
    """A function argument: its SSA name, tensor type text and source location."""

    value: str
    type: str
    loc: object
    attributes: dict | None = None

    def format(self) -> str:
        """``%arg0: tensor<?x3xf32> {cuvil.symbols = ["N"]} loc(...)``."""
        attrs = ""
        if self.attributes:
            items = ", ".join(
                f"{k} = [{', '.join(escape_string(n) for n in v)}]"
                for k, v in self.attributes.items()
            )
            attrs = f" {{{items}}}"
        return f"{self.value}: {self.type}{attrs} {format_loc(self.loc)}"


@dataclass
class OpRecord:
    """One traced op, ready to print in generic form."""

    name: str
    operands: list[str]
    operand_types: list[str]
    attributes: dict
    result: str
    result_type: str
    loc: object

    def format(self) -> str:
        """The op as one line of generic MLIR syntax."""
        out: list = []
        self.parts(out)
        return "".join(out)

    def parts(self, out: list, large=None) -> None:
        """Appends the pieces of :meth:`format` to ``out`` (``large``: see format_module)."""
        out.append(f'{self.result} = "{self.name}"({", ".join(self.operands)})')
        if self.attributes:
            out.append(" <")
            _attributes_parts(self.attributes, out, large)
            out.append(">")
        signature = f"({', '.join(self.operand_types)}) -> {self.result_type}"
        out.append(f" : {signature} {format_loc(self.loc)}")


def format_module(
    func_name: str,
    args: Sequence[ArgRecord],
    ops: Sequence[OpRecord],
    results: Sequence[tuple[str, str]],
    func_loc,
    return_loc,
    large=None,
) -> str:
    """A ``module`` with one ``func.func @func_name`` returning ``results`` (value, type).

    ``large`` says how constants of DIGEST_BYTES or more are written: as hex (None); as
    the BLAKE3 of their bytes (DIGEST), a key for the module rather than MLIR, which a
    new process computes in a fraction of the time the hex of a model's weights takes
    (it finds compiled code by this key before it formats the weights, see cuvil.jit);
    or, given a list, as ``dense_resource<name>``, their ``(name, bytes)`` appended to
    the list for the compiler (``constants`` of ``cuvil._cuvil.compile``), which then
    neither formats nor parses the weights' hex."""
    arg_text = ", ".join(a.format() for a in args)
    result_types = ", ".join(t for _, t in results)
    out = [f"module {{\n  func.func @{func_name}({arg_text}) -> ({result_types}) {{\n"]
    for op in ops:
        out.append("    ")
        op.parts(out, large)
        out.append("\n")
    values = ", ".join(v for v, _ in results)
    out.append(f'    "func.return"({values}) : ({result_types}) -> () {format_loc(return_loc)}\n')
    out.append(f"  }} {format_loc(func_loc)}\n}}\n")
    return "".join(out)
