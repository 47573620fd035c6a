"""ONNX control flow: ``If`` and ``Loop`` inlined into the one straight-line Cuvil function.

``If`` with a condition known at import time imports the taken branch only;
with a run-time condition it imports both branches and selects each output
with ``cuvil.where`` (both are computed; their outputs must agree in shape
and dtype). ``Loop`` with a known trip count and a condition known at every
iteration is unrolled, up to :data:`LOOP_UNROLL_LIMIT` iterations.
"""

from __future__ import annotations

import numpy as np

from .. import composites as C
from ..builder import Value
from .importer import NodeContext, op

# The most Loop iterations unrolled: each repeats the body's ops in the IR.
LOOP_UNROLL_LIMIT = 256


def _signature(item) -> tuple:
    if isinstance(item, Value):
        return tuple(item.type.shape), item.type.dtype
    array = np.asarray(item)
    return array.shape, array.dtype.name


@op("If")
def if_(ctx: NodeContext):
    branches = {True: ctx.attr("then_branch"), False: ctx.attr("else_branch")}
    importer = ctx.importer
    if ctx.is_constant(0):
        taken = bool(np.asarray(ctx.inputs[0]).reshape(-1)[0])
        branch = "then" if taken else "else"
        return importer.run_subgraph(branches[taken], {}, f"{ctx.name}/{branch}/")
    then_out = importer.run_subgraph(branches[True], {}, f"{ctx.name}/then/")
    else_out = importer.run_subgraph(branches[False], {}, f"{ctx.name}/else/")
    condition = C.reshape(ctx.b, ctx.value(0), ())
    results = []
    for index, (a, b) in enumerate(zip(then_out, else_out)):
        if _signature(a) != _signature(b):
            raise ctx.unsupported(
                f"output {index} is {_signature(a)} in the then branch and {_signature(b)} in the "
                "else branch, and the condition is only known at run time (Cuvil computes both "
                "branches and selects, so their outputs must have equal shapes and dtypes)"
            )
        name = ctx.node.output[index]
        a, b = (importer.materialize(f"{name}/{side}", v) for side, v in (("then", a), ("else", b)))
        results.append(ctx.b.op("cuvil.where", [condition, a, b]))
    return results


@op("Loop")
def loop(ctx: NodeContext):
    body = ctx.attr("body")
    trip_count = None
    if ctx.has(0):
        trip_count = int(np.asarray(ctx.constant(0, "the trip count M")).reshape(-1)[0])
    condition = True
    if ctx.has(1):
        condition = bool(np.asarray(ctx.constant(1, "the loop condition")).reshape(-1)[0])
    if trip_count is None and not ctx.has(1):
        raise ctx.unsupported("a Loop with neither a trip count nor a condition (endless)")
    carried = list(ctx.inputs[2:])
    n_carried = len(carried)
    scans: list[list] = [[] for _ in body.output[1 + n_carried :]]
    names = [i.name for i in body.input]
    iteration = 0
    while condition and (trip_count is None or iteration < trip_count):
        if iteration >= LOOP_UNROLL_LIMIT:
            raise ctx.unsupported(
                f"more than {LOOP_UNROLL_LIMIT} iterations to unroll (trip count "
                f"{trip_count if trip_count is not None else 'unknown'}); Cuvil unrolls loops "
                "and has no run-time loop: export the model with a smaller static loop"
            )
        inputs = {names[0]: np.asarray(iteration, np.int64), names[1]: np.asarray(condition)}
        inputs.update(zip(names[2:], carried))
        outputs = ctx.importer.run_subgraph(body, inputs, f"{ctx.name}/iteration_{iteration}/")
        next_condition, carried = outputs[0], outputs[1 : 1 + n_carried]
        for scan, value in zip(scans, outputs[1 + n_carried :]):
            scan.append(value)
        if isinstance(next_condition, Value):
            raise ctx.unsupported(
                f"the loop condition computed at run time (iteration {iteration}); Cuvil unrolls "
                "loops whose condition is known when the model is imported"
            )
        condition = bool(np.asarray(next_condition).reshape(-1)[0])
        iteration += 1
    return carried + [_stack(ctx, scan, index) for index, scan in enumerate(scans)]


def _stack(ctx: NodeContext, values: list, index: int):
    """A Loop's scan output: the per-iteration values stacked along a new first axis."""
    if not values:
        raise ctx.unsupported(f"scan output {index} of a loop that ran no iteration (empty)")
    if all(not isinstance(v, Value) for v in values):
        return np.stack([np.asarray(v) for v in values])
    name = ctx.name
    parts = []
    for step, v in enumerate(values):
        v = ctx.importer.materialize(f"{name}/scan{index}/{step}", v)
        parts.append(C.reshape(ctx.b, v, (1, *v.type.shape)))
    return C.concat(ctx.b, parts, 0)
