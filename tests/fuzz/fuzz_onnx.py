"""Structure-aware fuzzing of the ONNX importer: mutated models in, a clear error or a result out.

The importer is Python over the onnx package's protobuf parser, so this is not a libFuzzer
target: it mutates small seed models (shapes, element types, attributes, initializer data,
node wiring, op types, opsets) and their serialized bytes, and feeds each to
``cuvil.load_onnx`` and ``compile()``, then calls the result with inputs of the declared
shapes. A case passes when it imports and runs, or stops with one of Cuvil's errors
(``OnnxModelError``, ``UnsupportedConstructError``, ``TraceError``, ``CompileError``, the
``InputSpecError`` of an input dtype Cuvil lacks). Any
other exception, a crash (the worker process dies) or a case running past its time limit is
a finding: the model is saved under ``OUT/<kind>-<sha1>.onnx`` with the traceback beside it.

    python tests/fuzz/fuzz_onnx.py --seconds 60 --out build-fuzz/fuzz-crashes/onnx-importer
    python tests/fuzz/fuzz_onnx.py --replay tests/fuzz/regressions/onnx-importer

Cases run in a worker process that is restarted after a crash or a hang; the same ``--seed``
gives the same cases.
"""

from __future__ import annotations

import argparse
import hashlib
import multiprocessing as mp
import queue
import random
import sys
import time
import traceback
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

CASE_SECONDS = 20.0  # a case slower than this is a hang
MAX_ELEMENTS = 1 << 16  # inputs larger than this are not fed (the model still compiles)
CLEAR_ERRORS = (
    "OnnxModelError",
    "UnsupportedConstructError",
    "TraceError",
    "CompileError",
    "InputSpecError",
    "ShapeSpecError",
)


# ----- seeds ------------------------------------------------------------------------------------


def _value(name, dims, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, dims)


def _init(name, array):
    return helper.make_tensor(name, TensorProto.FLOAT, array.shape, array.reshape(-1).tolist())


def seeds() -> list[onnx.ModelProto]:
    """Small models covering the importer's paths: CNN, attention, shape arithmetic, resize."""
    rng = np.random.default_rng(0)
    w = rng.standard_normal

    def model(nodes, inputs, outputs, inits, opset=17):
        graph = helper.make_graph(nodes, "seed", inputs, outputs, inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])

    cnn = model(
        [
            helper.make_node("Conv", ["x", "w1", "b1"], ["c"], name="conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["c"], ["r"], name="relu"),
            helper.make_node(
                "MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]
            ),
            helper.make_node("Flatten", ["p"], ["f"], name="flat"),
            helper.make_node("Gemm", ["f", "w2"], ["y"], name="fc", transB=1),
        ],
        [_value("x", [1, 2, 6, 6])],
        [_value("y", [1, 3])],
        [
            _init("w1", w((4, 2, 3, 3))),
            _init("b1", w(4)),
            _init("w2", w((3, 36))),
        ],
    )
    attention = model(
        [
            helper.make_node("MatMul", ["q", "kt"], ["s"], name="scores"),
            helper.make_node("Div", ["s", "scale"], ["d"], name="scale"),
            helper.make_node("Softmax", ["d"], ["a"], name="softmax", axis=-1),
            helper.make_node("MatMul", ["a", "v"], ["o"], name="mix"),
            helper.make_node("Transpose", ["o"], ["t"], name="heads", perm=[0, 2, 1, 3]),
            helper.make_node("Reshape", ["t", "shape"], ["y"], name="merge"),
        ],
        [
            _value("q", ["B", 2, "T", 4]),
            _value("kt", ["B", 2, 4, "T"]),
            _value("v", ["B", 2, "T", 4]),
        ],
        [_value("y", ["B", "T", 8])],
        [
            _init("scale", np.asarray(2.0)),
            helper.make_tensor("shape", TensorProto.INT64, [3], [0, 0, 8]),
        ],
    )
    shapes = model(
        [
            helper.make_node("Shape", ["x"], ["s"], name="shape"),
            helper.make_node("Gather", ["s", "first"], ["n"], name="batch", axis=0),
            helper.make_node("Unsqueeze", ["n", "zero"], ["n1"], name="unsq"),
            helper.make_node("Concat", ["n1", "six"], ["target"], name="cat", axis=0),
            helper.make_node("Reshape", ["x", "target"], ["r"], name="reshape"),
            helper.make_node("Slice", ["r", "one", "five", "one"], ["sl"], name="slice"),
            helper.make_node("LayerNormalization", ["sl", "g", "b"], ["ln"], name="ln", axis=-1),
            helper.make_node("Where", ["mask", "ln", "zero_f"], ["y"], name="where"),
        ],
        [_value("x", ["N", 2, 3]), _value("mask", [1, 4], TensorProto.BOOL)],
        [_value("y", ["N", 4])],
        [
            helper.make_tensor("first", TensorProto.INT64, [], [0]),
            helper.make_tensor("zero", TensorProto.INT64, [1], [0]),
            helper.make_tensor("one", TensorProto.INT64, [1], [1]),
            helper.make_tensor("five", TensorProto.INT64, [1], [5]),
            helper.make_tensor("six", TensorProto.INT64, [1], [6]),
            _init("g", w(4)),
            _init("b", w(4)),
            _init("zero_f", np.zeros(1)),
        ],
    )
    resize = model(
        [
            helper.make_node("Resize", ["x", "", "scales"], ["u"], name="up", mode="linear"),
            helper.make_node("ReduceMean", ["u", "axes"], ["m"], name="mean", keepdims=0),
            helper.make_node("Expand", ["m", "to"], ["e"], name="expand"),
            helper.make_node("Cast", ["e"], ["y"], name="cast", to=TensorProto.INT32),
        ],
        [_value("x", [1, 1, 3, 4])],
        [_value("y", [2, 1, 1])],
        [
            helper.make_tensor("scales", TensorProto.FLOAT, [4], [1, 1, 2, 1.5]),
            helper.make_tensor("axes", TensorProto.INT64, [2], [2, 3]),
            helper.make_tensor("to", TensorProto.INT64, [3], [2, 1, 1]),
        ],
        opset=18,
    )
    return [cnn, attention, shapes, resize]


# ----- mutations --------------------------------------------------------------------------------

SIZES = [0, 1, 2, 3, 7, -1, -5, 1 << 31, 1 << 40, 1 << 62]
OP_TYPES = [
    "Relu",
    "Conv",
    "MatMul",
    "Reshape",
    "Gather",
    "Slice",
    "Loop",
    "If",
    "Scan",
    "NoSuchOp",
    "Resize",
    "Concat",
    "Split",
    "TopK",
    "Einsum",
    "Identity",
]


def _mutate_dims(rng, model):
    values = [*model.graph.input, *model.graph.output, *model.graph.value_info]
    dims = [d for v in values for d in v.type.tensor_type.shape.dim]
    if dims:
        dim = rng.choice(dims)
        if rng.random() < 0.3:
            dim.dim_param = rng.choice(["N", "T", "", "N*2", "é"])
        else:
            dim.dim_value = rng.choice(SIZES)


def _mutate_elem_type(rng, model):
    values = [*model.graph.input, *model.graph.output]
    rng.choice(values).type.tensor_type.elem_type = rng.choice([0, 1, 2, 6, 7, 9, 10, 11, 16, 99])


def _mutate_attribute(rng, model):
    attrs = [a for n in model.graph.node for a in n.attribute]
    if not attrs:
        return
    a = rng.choice(attrs)
    if a.type == onnx.AttributeProto.INT:
        a.i = rng.choice(SIZES + [-(1 << 63)])
    elif a.type == onnx.AttributeProto.INTS:
        del a.ints[:]
        a.ints.extend(rng.choice(SIZES) for _ in range(rng.randrange(0, 6)))
    elif a.type == onnx.AttributeProto.FLOAT:
        a.f = rng.choice([float("nan"), float("inf"), -1.0, 0.0, 1e30])
    elif a.type == onnx.AttributeProto.STRING:
        a.s = rng.choice([b"", b"nearest", b"bogus", b"\xff\xfe"])


def _mutate_initializer(rng, model):
    if not model.graph.initializer:
        return
    t = rng.choice(model.graph.initializer)
    choice = rng.randrange(4)
    if choice == 0:
        t.dims[:] = [rng.choice(SIZES) for _ in range(rng.randrange(0, 4))]
    elif choice == 1:
        data = onnx.numpy_helper.to_array(t).tobytes()
        del t.float_data[:], t.int64_data[:], t.int32_data[:]
        t.raw_data = data[: rng.randrange(0, len(data) + 1)]
    elif choice == 2:
        t.data_type = rng.choice([0, 1, 3, 7, 9, 11, 17, 99])
    else:
        t.name = rng.choice(["", "x", t.name + "_renamed"])


def _mutate_wiring(rng, model):
    nodes = list(model.graph.node)
    if not nodes:
        return
    node = rng.choice(nodes)
    names = [v.name for v in model.graph.input] + [o for n in nodes for o in n.output]
    choice = rng.randrange(4)
    if choice == 0 and node.input:
        node.input[rng.randrange(len(node.input))] = rng.choice(names + ["missing", ""])
    elif choice == 1:
        node.input.append(rng.choice(names + [""]))
    elif choice == 2 and node.input:
        del node.input[rng.randrange(len(node.input))]
    else:
        node.input.append(node.output[0])  # a cycle through the node itself


def _mutate_op(rng, model):
    if model.graph.node:
        rng.choice(list(model.graph.node)).op_type = rng.choice(OP_TYPES)


def _mutate_opset(rng, model):
    model.opset_import[0].version = rng.choice([1, 6, 9, 10, 11, 13, 18, 21, 99])


def _mutate_graph(rng, model):
    choice = rng.randrange(3)
    if choice == 0 and model.graph.node:
        del model.graph.node[rng.randrange(len(model.graph.node))]
    elif choice == 1 and model.graph.node:
        model.graph.node.append(rng.choice(list(model.graph.node)))
    else:
        model.graph.output.append(_value(rng.choice(["y", "nothing"]), [1]))


MUTATORS = [
    _mutate_dims,
    _mutate_elem_type,
    _mutate_attribute,
    _mutate_initializer,
    _mutate_wiring,
    _mutate_op,
    _mutate_opset,
    _mutate_graph,
]


def _mutate_bytes(rng, data: bytes) -> bytes:
    data = bytearray(data)
    for _ in range(rng.randrange(1, 8)):
        if not data:
            break
        at = rng.randrange(len(data))
        kind = rng.randrange(4)
        if kind == 0:
            data[at] ^= 1 << rng.randrange(8)
        elif kind == 1:
            data[at] = rng.choice([0, 0x7F, 0x80, 0xFF])
        elif kind == 2:
            del data[at : at + rng.randrange(1, 16)]
        else:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 8)))
    return bytes(data)


def mutated(rng: random.Random, seed_models: list) -> bytes:
    """One case: a seed with 1-4 structural mutations, and sometimes its bytes damaged too."""
    model = onnx.ModelProto()
    model.CopyFrom(rng.choice(seed_models))
    for _ in range(rng.randrange(1, 5)):
        try:
            rng.choice(MUTATORS)(rng, model)
        except Exception:  # noqa: BLE001, S112 - a mutation that does not apply to this model
            continue
    data = model.SerializeToString()
    return _mutate_bytes(rng, data) if rng.random() < 0.25 else data


# ----- running ----------------------------------------------------------------------------------


def run_case(data: bytes) -> tuple[str, str | None]:
    """How the case ended (``"ran"``, ``"compiled"`` when its inputs are too large to feed, or
    the name of the Cuvil error), and the traceback of an unexpected exception, else None."""
    import cuvil

    try:
        module = cuvil.load_onnx(data)
        compiled = module.compile()
        rng = np.random.default_rng(0)
        inputs = []
        ranges = module.symbol_ranges  # a size the model bounds: called within its range
        for spec in module.input_spec.values():
            shape = tuple(
                d if isinstance(d, int) else max(2, ranges.get(d, (2, None))[0]) for d in spec.shape
            )
            if any(d < 0 for d in shape) or np.prod([float(d) for d in shape]) > MAX_ELEMENTS:
                return "compiled", None
            inputs.append(rng.standard_normal(shape).astype(spec.dtype))
        compiled(*inputs)
    except Exception as error:  # noqa: BLE001 - sorting expected from unexpected is the point
        name = type(error).__name__
        return name, None if name in CLEAR_ERRORS else traceback.format_exc()
    return "ran", None


def _worker(cases: mp.Queue, results: mp.Queue) -> None:
    while True:
        data = cases.get()
        if data is None:
            return
        results.put(run_case(data))


class Runner:
    """Runs cases in a worker process; a crash or a hang is a finding and a fresh worker."""

    def __init__(self):
        self.context = mp.get_context("spawn")
        self.process = None
        self.outcomes: dict[str, int] = {}  # how the cases that ended ended: "ran", an error

    def _start(self):
        self.cases, self.results = self.context.Queue(), self.context.Queue()
        self.process = self.context.Process(target=_worker, args=(self.cases, self.results))
        self.process.start()

    def run(self, data: bytes) -> tuple[str, str] | None:
        if self.process is None or not self.process.is_alive():
            self._start()
        self.cases.put(data)
        deadline = time.monotonic() + CASE_SECONDS
        while time.monotonic() < deadline:
            try:
                result = self.results.get(timeout=0.2)
            except queue.Empty:
                if not self.process.is_alive():
                    code = self.process.exitcode
                    self.process = None
                    return "crash", f"the worker died (exit code {code})"
                continue
            self.outcomes[result[0]] = self.outcomes.get(result[0], 0) + 1
            return ("exception", result[1]) if result[1] else None
        self.process.kill()
        self.process = None
        return "hang", f"the case ran past {CASE_SECONDS} s"

    def close(self):
        if self.process is not None and self.process.is_alive():
            self.cases.put(None)
            self.process.join(5)
            if self.process.is_alive():
                self.process.kill()


def save(out: Path, kind: str, data: bytes, report: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{kind}-{hashlib.sha1(data).hexdigest()}.onnx"
    path.write_bytes(data)
    path.with_suffix(".txt").write_text(report)
    return path


def fuzz(seconds: float, seed: int, out: Path | None, max_cases: int | None = None) -> list:
    """Run mutated cases for ``seconds``; the findings as ``(kind, report, data)``."""
    rng = random.Random(seed)
    seed_models = seeds()
    runner, findings, count = Runner(), [], 0
    start = time.monotonic()
    try:
        while time.monotonic() - start < seconds and (max_cases is None or count < max_cases):
            data = mutated(rng, seed_models)
            count += 1
            finding = runner.run(data)
            if finding:
                kind, report = finding
                findings.append((kind, report, data))
                if out is not None:
                    print(f"{kind}: {save(out, kind, data, report)}", file=sys.stderr)
    finally:
        runner.close()
    ended = sorted(runner.outcomes.items(), key=lambda item: -item[1])
    print(
        f"fuzz-onnx: {count} cases in {time.monotonic() - start:.0f} s, {len(findings)} "
        f"finding(s); ended: " + ", ".join(f"{n} {kind}" for kind, n in ended),
        file=sys.stderr,
    )
    return findings


def replay(folder: Path) -> list:
    """Run each saved case of ``folder`` once; the ones that still fail."""
    runner, failing = Runner(), []
    try:
        for path in sorted(folder.glob("*.onnx")):
            finding = runner.run(path.read_bytes())
            if finding:
                failing.append((path.name, *finding))
    finally:
        runner.close()
    return failing


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, help="where findings are saved")
    parser.add_argument("--replay", type=Path, help="run the saved cases of this folder instead")
    args = parser.parse_args(argv)
    if args.replay:
        failing = replay(args.replay)
        for name, kind, report in failing:
            print(f"{name}: {kind}\n{report}", file=sys.stderr)
        return 1 if failing else 0
    return 1 if fuzz(args.seconds, args.seed, args.out) else 0


if __name__ == "__main__":
    sys.exit(main())
