"""Differential testing: random graphs compiled by Cuvil, fused and unfused, vs float64 NumPy."""

from __future__ import annotations

import pathlib
import sys

import numpy as np
import pytest

import cuvil

FUZZ_DIR = pathlib.Path(__file__).resolve().parents[1] / "fuzz"
if str(FUZZ_DIR) not in sys.path:
    sys.path.insert(0, str(FUZZ_DIR))

import random_graphs  # noqa: E402
from graph_ops import OPS, Reference, as_tuple, compare, working_precision  # noqa: E402
from random_graphs import Graph, Node, evaluate_reference, generate_graph  # noqa: E402

# The fast batch: graphs of seeds BATCH_SEED .. BATCH_SEED + BATCH_GRAPHS - 1 (about 0.1 s
# each on two cores). The long run: `.venv/bin/python tests/fuzz/random_graphs.py --graphs 5000
# --jobs 2`.
BATCH_SEED = 7000
BATCH_GRAPHS = 300
MAX_NODES = 20


@pytest.fixture
def no_disk_cache(monkeypatch):
    """Hundreds of one-off graphs would only fill the compilation cache."""
    monkeypatch.setenv("CUVIL_DISABLE_DISK_CACHE", "1")


def test_random_graphs_match_numpy(no_disk_cache):
    # In a child process: it frees the batch's compilations and survives a crashing graph.
    report = random_graphs.run_chunk(BATCH_SEED, BATCH_GRAPHS, MAX_NODES)
    print(report.summary())
    assert report.graphs == BATCH_GRAPHS
    assert set(report.kinds) == set(OPS), "the batch should exercise every op kind"
    assert set(report.forms) == set(random_graphs.FORMS), "and every form"
    for target in random_graphs.EXTRA_TARGETS:
        assert report.target_graphs[target] > 0, f"some graphs run on the {target} target"
    counts = (
        report.fused_mismatches,
        report.unfused_mismatches,
        sum(report.target_mismatches.values()),
        report.compile_errors,
        report.crashes,
        report.fallbacks,
        report.generator_errors,
    )
    assert counts == (0, 0, 0, 0, 0, 0, 0), report.format(MAX_NODES)


# Seeds that failed in long runs, each fixed: a fused integer reduction whose summed values
# folded away could not be vectorized (205711); a dynamic graph broadcast a symbolic axis
# that was 1 at one size (203309); an elementwise op combining two GEMMs was claimed as the
# fused epilogue of both (303240 int32, 308539 dynamic); a remainder tile's buffer of
# dynamic size had no static storage on wasm (320370); a vector gather from a strided
# slice of a float64 tensor could not be lowered to LLVM (320571); a vector store that may
# run past its buffer's end was left unconverted on wasm (330514).
REGRESSION_SEEDS = (205711, 203309, 303240, 308539, 320370, 320571, 330514)


def test_seeds_long_runs_found_stay_fixed(no_disk_cache):
    report = random_graphs.Report()
    for seed in REGRESSION_SEEDS:
        report.merge(random_graphs.run_chunk(seed, 1, MAX_NODES))
    assert report.graphs == len(REGRESSION_SEEDS), report.format(MAX_NODES)
    assert not report.failed, report.format(MAX_NODES)


def test_generator_is_deterministic():
    for seed in (0, 1, 17, 4242):
        first, second = generate_graph(seed), generate_graph(seed)
        assert first.description() == second.description()
        for a, b in zip(first.sample_inputs(), second.sample_inputs()):
            assert a.dtype == b.dtype == first.dtype and a.flags.c_contiguous
            np.testing.assert_array_equal(a, b)
        assert [a.shape for a in first.sample_inputs()] == first.input_shapes
    assert len({generate_graph(seed).description() for seed in range(30)}) == 30


def test_graphs_respect_their_limits():
    for seed in range(100):
        graph = generate_graph(seed, max_nodes=8)
        assert 1 <= len(graph.nodes) <= 8
        assert 1 <= len(graph.input_shapes) <= 3
        for shape in graph.input_shapes:
            assert len(shape) <= 4 and all(1 <= d <= 9 for d in shape)
        for node in graph.nodes:
            assert len(node.shape) <= 4 and np.prod(node.shape) <= random_graphs.MAX_ELEMENTS


def test_every_form_is_drawn_and_keeps_its_dtype():
    graphs = [generate_graph(seed) for seed in range(80)]
    assert {g.form for g in graphs} == set(random_graphs.FORMS)
    for graph in graphs:
        want = {"int32": np.int32, "float64": np.float64}.get(graph.form, np.float32)
        assert graph.dtype == want
        if graph.form == "int32":
            assert {n.kind for n in graph.nodes} <= set(random_graphs._Generator.INT_KINDS)
        if graph.form == "dynamic":
            # One symbol; the second size only changes the symbolic dims, and is larger.
            symbolic = [s for shape in graph.symbolic_shapes for s in shape if isinstance(s, str)]
            assert symbolic and set(symbolic) == {random_graphs.SYMBOL}
            for shape, spec, other in zip(
                graph.input_shapes, graph.symbolic_shapes, graph.alternate_shapes
            ):
                for d, s, o in zip(shape, spec, other):
                    assert (o - d in (5, 7)) if s == random_graphs.SYMBOL else (d == s == o)
        else:
            assert graph.symbolic_shapes is None and graph.alternate_shapes is None


def test_description_is_the_graph():
    """The printed source of a graph computes exactly what the interpreted graph computes."""
    for seed in range(40):
        graph = generate_graph(seed)
        namespace = {"np": np, "cuvil": cuvil}
        exec(graph.description(), namespace)
        inputs = graph.sample_inputs()
        if graph.dtype.kind == "f":
            inputs = [x.astype(np.float64) for x in inputs]
        with np.errstate(all="ignore"):
            expected = as_tuple(graph.make_function()(*inputs))
            printed = as_tuple(namespace[f"graph_{seed}"](*inputs))
        assert len(printed) == len(expected)
        for got, want in zip(printed, expected):
            np.testing.assert_array_equal(got, want)


def _single_add_graph() -> tuple[Graph, list, Reference]:
    graph = Graph(0, [(3, 4), (4,)], [Node("add", (0, 1), {}, (3, 4))], (2,))
    inputs = [np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4), np.ones(4, np.float32)]
    return graph, inputs, evaluate_reference(graph, inputs)


def test_comparison_is_tight_for_one_rounding():
    _, inputs, reference = _single_add_graph()
    exact = (inputs[0] + inputs[1]).astype(np.float32)
    assert compare(exact, reference) is None
    one_ulp = np.nextafter(exact, np.float32(np.inf))
    assert compare(one_ulp, reference) is None
    off = exact.copy()
    off[1, 2] += np.float32(1e-4) * max(abs(off[1, 2]), np.float32(1))
    assert compare(off, reference) is not None


def test_comparison_reports_wrong_results():
    _, _, reference = _single_add_graph()
    exact = reference.values[0].astype(np.float32)
    nan = exact.copy()
    nan[0, 0] = np.nan
    problems = {
        "shape": exact.reshape(4, 3),
        "dtype": exact.astype(np.float64),
        "count": (exact, exact),
        "nan": nan,
        "transposed": np.ascontiguousarray(exact[::-1]),
    }
    for what, result in problems.items():
        assert compare(result, reference) is not None, what
    message = compare(nan, reference, ["v0"])
    assert "output 0 (v0)" in message and "[0, 0]" in message


def test_comparison_detects_small_perturbations_in_random_graphs():
    """Moving one element of an output by 1e-4 of the output's scale (~800 float32 ulps; far
    more float64 ulps) must be reported for nearly every float output, and any change of an
    integer output: the tolerance is not vacuous."""
    detected, total = {"f": 0, "i": 0}, {"f": 0, "i": 0}
    for seed in range(80):
        graph = generate_graph(seed)
        reference = evaluate_reference(graph, graph.sample_inputs())
        kind = graph.dtype.kind
        exact = [v if v.dtype.kind == "i" else v.astype(graph.dtype) for v in reference.values]
        with working_precision(np.float64 if graph.dtype == np.float64 else np.float32):
            assert compare(tuple(exact), reference) is None
            for k in range(len(exact)):
                perturbed = [v.copy() for v in exact]
                flat = perturbed[k].reshape(-1)
                scale = max(float(np.max(np.abs(flat))), 1.0)
                step = 1 if flat.dtype.kind == "i" else 1e-4 * scale
                flat[int(np.argmax(np.abs(flat)))] += flat.dtype.type(step)
                detected[kind] += compare(tuple(perturbed), reference) is not None
                total[kind] += 1
    assert detected["f"] >= 0.9 * total["f"], f"only {detected} of {total} perturbations detected"
    assert detected["i"] == total["i"] > 0


def test_failures_are_counted_and_reproducible(monkeypatch, no_disk_cache):
    """A wrong compiled result is a mismatch that names the seed and how to reproduce it."""
    real_compare = random_graphs.compare

    def wrong_by_one_percent(result, reference: Reference, names=None):
        return real_compare(tuple(np.asarray(r) * 1.01 for r in as_tuple(result)), reference)

    monkeypatch.setattr(random_graphs, "compare", wrong_by_one_percent)
    report = random_graphs.run_batch(5, 2, MAX_NODES)
    assert (report.fused_mismatches, report.unfused_mismatches) == (2, 2)
    text = report.format(MAX_NODES)
    assert "FAIL seed 5 [fused]" in text and "--seed 6 --graphs 1" in text
    assert "def graph_5(" in text


# Random graphs have dims under 10; attention's chain fusion needs query blocks of 8 rows
# and keys in whole 32-wide register tiles, so its shapes are drawn here.
CHAIN_SEEDS = range(16)


def _random_chain(seed: int):
    """A random two-GEMM chain (attention-like): q·kᵀ, then a row-wise middle (softmax with
    an optional scale and mask, or an elementwise op), then ·v; and its inputs."""
    rng = np.random.default_rng(seed)
    heads, queries = int(rng.choice([1, 2, 3, 4])), int(rng.choice([8, 16, 24, 40, 64]))
    keys, d_head = int(rng.choice([32, 64, 96, 40])), int(rng.choice([4, 8, 16, 32, 48]))
    width = int(rng.choice([32, 64, 16]))
    scale, masked = float(rng.choice([1.0, 0.125, 0.5])), bool(rng.random() < 0.4)
    middle = str(rng.choice(["softmax", "softmax", "relu", "tanh_shift"]))

    def chain(q, k, v, mask):
        s = (q @ k.transpose(0, 2, 1)) * scale
        if masked:
            s = s + mask
        if middle == "softmax":
            e = np.exp(s - s.max(axis=-1, keepdims=True))
            p = e / e.sum(axis=-1, keepdims=True)
        elif middle == "relu":
            p = np.maximum(s, 0.0)
        else:
            p = np.tanh(s) + 1.0
        return p @ v

    inputs = [
        rng.standard_normal((heads, queries, d_head)).astype(np.float32),
        rng.standard_normal((heads, keys, d_head)).astype(np.float32),
        rng.standard_normal((heads, keys, width)).astype(np.float32),
        np.triu(np.full((queries, keys), -30.0, np.float32), k=1),
    ]
    name = f"{heads}x{queries}x{keys}x{d_head}->{width} {middle} scale={scale} mask={masked}"
    return chain, inputs, name


@pytest.mark.parametrize("seed", CHAIN_SEEDS)
def test_random_gemm_chains_match_numpy_fused_and_unfused(no_disk_cache, seed):
    chain, inputs, name = _random_chain(seed)
    reference = chain(*(x.astype(np.float64) for x in inputs))
    scale = 1.0 + np.abs(reference).max()
    for fusion in (True, False):
        f = cuvil.jit(chain, enable_fusion=fusion)
        result = f(*inputs)
        assert cuvil.last_fallback_reason(f) is None, name
        np.testing.assert_allclose(
            result, reference, rtol=2e-5, atol=2e-5 * scale, err_msg=f"{name} fusion={fusion}"
        )


@pytest.mark.parametrize("seed", range(8))
def test_random_sibling_projections_match_numpy_merged_or_not(no_disk_cache, seed):
    """2-4 products of one input with weights of random widths (some compiled in, merged
    into one GEMM; one sometimes an argument, left out), each followed by its own op."""
    rng = np.random.default_rng(100 + seed)
    rows, k = int(rng.choice([1, 7, 64, 100])), int(rng.choice([3, 32, 128]))
    widths = [int(rng.choice([1, 5, 32, 96, 128])) for _ in range(int(rng.integers(2, 5)))]
    x = rng.standard_normal((rows, k)).astype(np.float32)
    weights = [rng.standard_normal((k, n)).astype(np.float32) for n in widths]
    names = [f"w{i}" for i in range(len(widths))]
    constants = tuple(n for n in names if n != "w0" or rng.random() < 0.5)
    ops = [np.tanh, np.abs, lambda v: v * 2.0, np.negative]

    def projections(x, *ws):
        return tuple(ops[i % len(ops)](x @ w) for i, w in enumerate(ws))

    source = f"def f(x, {', '.join(names)}):\n    return projections(x, {', '.join(names)})\n"
    scope = {"projections": projections}
    exec(source, scope)  # named parameters, so constants= can name them
    f = cuvil.jit(scope["f"], constants=constants)
    result = f(x, *weights)
    assert cuvil.last_fallback_reason(f) is None
    reference = projections(x.astype(np.float64), *weights)
    for got, want in zip(result, reference):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * np.sqrt(k))
