"""Example Python pass: ``x / c`` with a constant splat ``c`` becomes ``x * (1/c)``.

A division costs several times a multiplication on most CPUs. The pass runs
on each ``cuvil.div``, reads the divisor's constant through the IR handles,
builds a ``cuvil.constant`` holding the reciprocal and a ``cuvil.mul``, and
replaces the division::

    import cuvil
    from division_by_constant import DivisionByConstantToMultiply

    pb = cuvil.PipelineBuilder()
    pb.insert_after("cuvil-fold-constants", DivisionByConstantToMultiply())
    f = cuvil.jit(model, pipeline=pb)

Only float splats are rewritten, and only when the reciprocal is exact
(powers of two) unless ``exact_only=False``: ``x / 3`` and ``x * (1/3)``
differ in the last bit, which some models notice.
"""

from __future__ import annotations

import math
import re

import cuvil

_SPLAT = re.compile(r"dense<(?P<value>[-+0-9.eE]+|0x[0-9A-Fa-f]+)>\s*:\s*(?P<type>tensor<[^>]*>)")


def _splat_value(op) -> tuple[float, str] | None:
    """(value, tensor type) of a ``cuvil.constant`` holding one float repeated."""
    if op.name != "cuvil.constant":
        return None
    match = _SPLAT.fullmatch(op.attributes.get("value", ""))
    if match is None or not re.search(r"x?f(16|32|64)>$", match["type"]):
        return None
    text = match["value"]
    if text.startswith("0x"):  # hex floats are printed for non-decimal values
        return None
    return float(text), match["type"]


class DivisionByConstantToMultiply(cuvil.Pass):
    level = "op"
    op_name = "cuvil.div"

    def __init__(self, exact_only: bool = True):
        super().__init__("division-by-constant-to-multiply")
        self.exact_only = exact_only

    def run_on_operation(self, op: cuvil.Operation) -> bool:
        numerator, divisor = op.operands
        if divisor.is_block_argument:
            return False
        splat = _splat_value(divisor.owner)
        if splat is None:
            return False
        value, tensor_type = splat
        if value == 0.0 or not math.isfinite(value):
            return False
        mantissa, _ = math.frexp(value)
        if self.exact_only and abs(mantissa) != 0.5:
            return False
        reciprocal = op.create_before(
            "cuvil.constant",
            result_types=[tensor_type],
            attributes={"value": f"dense<{1.0 / value!r}> : {tensor_type}"},
        )
        product = op.create_before(
            "cuvil.mul", [numerator, reciprocal.results[0]], [op.results[0].type]
        )
        op.replace_with(product.results)
        return True
