"""Compilation caches (per signature in memory, on disk across processes), IR inspection, logs."""

from __future__ import annotations

import json
import logging
import os
import textwrap

import numpy as np
import pytest
from conftest import run_python, subprocess_env

import cuvil


def _new_compilations(before: int) -> list:
    return cuvil.compilations()[before:]


def test_one_compilation_per_signature(rng):
    @cuvil.jit
    def scale(x, y):
        return x * 2.0 + y

    x = rng.standard_normal((4, 5), dtype=np.float32)
    before = len(cuvil.compilations())
    for _ in range(3):
        np.testing.assert_allclose(scale(x, x), x * 3.0, rtol=1e-6)
    assert len(_new_compilations(before)) == 1
    scale(x=x, y=x)  # keyword call, same signature
    assert len(_new_compilations(before)) == 1
    scale(x[:2].copy(), x[:2].copy())  # new shape
    scale(x.astype(np.float64), x.astype(np.float64))  # new dtype
    records = _new_compilations(before)
    assert len(records) == 3
    assert [r.input_types for r in records] == [
        (("float32", (4, 5)), ("float32", (4, 5))),
        (("float32", (2, 5)), ("float32", (2, 5))),
        (("float64", (4, 5)), ("float64", (4, 5))),
    ]
    assert records[0].function.endswith("scale") and records[0].target == "cpu"
    assert records[0].output_types == (("float32", (4, 5)),)


def test_inspect_ir_stages(rng):
    @cuvil.jit(target="cpu", enable_fusion=True)
    def affine(a, b, c):
        return a @ b + c

    a = rng.standard_normal((8, 16), dtype=np.float32)
    b = rng.standard_normal((16, 4), dtype=np.float32)
    c = rng.standard_normal(4, dtype=np.float32)
    affine(a, b, c)
    assert '"cuvil.matmul"' in cuvil.inspect_ir(affine) or "cuvil.matmul" in cuvil.inspect_ir(
        affine
    )
    for stage in cuvil.compilations()[-1].compiled.stages:  # the cpu target's stages
        assert cuvil.inspect_ir(affine, stage).strip()
    with pytest.raises(ValueError, match="unknown stage 'c' for target 'cpu'"):
        cuvil.inspect_ir(affine, "c")
    with pytest.raises(ValueError, match="unknown stage"):
        cuvil.inspect_ir(affine, "ptx")


def test_debug_logging_reports_compile_time_cache_and_fingerprint(caplog, rng):
    @cuvil.jit
    def shift(x):
        return x - 1.0

    x = rng.standard_normal(7).astype(np.float32)
    previous = logging.getLogger("cuvil").level
    try:
        cuvil.set_log_level(cuvil.LogLevel.DEBUG)
        with caplog.at_level(logging.DEBUG, logger="cuvil"):
            shift(x)
            shift(x)
    finally:
        logging.getLogger("cuvil").setLevel(previous)
    text = "\n".join(r.getMessage() for r in caplog.records if r.name == "cuvil")
    assert "compiled shift" in text or "compiled" in text
    assert " ms" in text and "fingerprint" in text
    assert "cache hit" in text


def test_log_levels_map_to_logging():
    assert int(cuvil.LogLevel.DEBUG) == logging.DEBUG
    assert int(cuvil.LogLevel.WARNING) == logging.WARNING
    with pytest.raises(ValueError):
        cuvil.set_log_level("chatty")


_CHILD = textwrap.dedent("""
    import json, numpy as np, cuvil

    @cuvil.jit
    def gemm_bias(a, b, c):
        return a @ b + c

    rng = np.random.default_rng(1)
    a = rng.standard_normal((32, 48), dtype=np.float32)
    b = rng.standard_normal((48, 16), dtype=np.float32)
    c = rng.standard_normal(16, dtype=np.float32)
    out = gemm_bias(a, b, c)
    record = cuvil.compilations()[-1]
    print(json.dumps({
        "from_cache": record.from_cache,
        "error": float(np.max(np.abs(out - (a @ b + c)))),
        "fingerprint": record.compiled.fingerprint,
        "input": cuvil.inspect_ir(gemm_bias),
        "llvm": "define void @cuvil_gemm_bias" in cuvil.inspect_ir(gemm_bias, "llvm"),
    }))
    """)


def _child_run(tmp_path, source=_CHILD, **env) -> dict:
    script = tmp_path / "child.py"
    script.write_text(source)
    result = run_python([str(script)], env=subprocess_env(**env))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_disk_cache_is_reused_by_a_second_process(tmp_path):
    cache = tmp_path / "cache"
    first = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    second = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    assert first["from_cache"] is False
    assert second["from_cache"] is True
    assert first["error"] < 1e-3 and second["error"] < 1e-3
    assert any(cache.iterdir())


def test_text_index_loads_cached_code_without_building_ir(tmp_path):
    """The first process leaves an index from its traced text to the cached code: the key
    and what loading needs, not the text (a model's weights make it megabytes); the next
    process loads through it and rebuilds its IR stages from its own text."""
    cache = tmp_path / "cache"
    first = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    (index,) = cache.glob("*.index")
    entry = json.loads(index.read_text())
    assert entry["format"] == 2 and (cache / f"{entry['key']}.so").is_file()
    assert "text" not in entry and index.stat().st_size < len(first["input"])
    assert entry["fingerprint"] == first["fingerprint"]
    assert entry["inputs"][0] == {"dtype": "float32", "shape": [32, 48]}
    second = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    assert second["from_cache"] is True and second["error"] < 1e-3
    assert second["input"] == first["input"]
    assert second["fingerprint"] == first["fingerprint"] and second["llvm"]


_WEIGHTS_CHILD = textwrap.dedent("""
    import json, numpy as np, cuvil
    from cuvil import _mlir

    formatted = []  # bytes of constants formatted as hex
    hex_of = _mlir._dense_hex
    _mlir._dense_hex = lambda array: formatted.append(array.nbytes) or hex_of(array)

    def layer(x, w):
        return np.maximum(x @ w, 0)

    rng = np.random.default_rng(3)
    w = rng.standard_normal((64, 32), dtype=np.float32)  # 8 KiB: a digest in the key text
    x = rng.standard_normal((4, 64), dtype=np.float32)
    f = cuvil.jit(layer, constants=("w",))
    out = f(x, w)
    record = cuvil.compilations()[-1]
    before_ir = sum(formatted)
    text = cuvil.inspect_ir(f)
    print(json.dumps({
        "from_cache": record.from_cache,
        "error": float(np.max(np.abs(out - np.maximum(x @ w, 0)))),
        "hex_before_ir": before_ir,
        "hex_after_ir": sum(formatted),
        "input": text,
        "record_has_weights": 'dense<"0x' in record.mlir,
    }))
    """)


def test_key_text_names_large_constants_by_the_digest_of_their_bytes():
    """A constant of DIGEST_BYTES or more stands in the key text as the BLAKE3 of its
    bytes: equal bytes give the same text, one changed element another; smaller
    constants stay literal."""
    from cuvil import _mlir, _native

    big = np.arange(2048, dtype=np.float32)
    changed = big.copy()
    changed[1000] += 1

    def key(array):
        out: list = []
        _mlir._dense_parts(array, out, large=_mlir.DIGEST)
        return "".join(out)

    assert key(big) == key(big.copy()) and key(big) != key(changed)
    digest = _native.load().content_digest(big.view(np.uint8))
    assert f'dense<"blake3:{digest}">' in key(big) and len(digest) == 64
    assert "blake3" not in key(np.arange(16, dtype=np.float32))
    with pytest.raises(ValueError, match="contiguous"):
        _native.load().content_digest(memoryview(big.view(np.uint8))[::2])


def test_compiled_in_weights_are_found_in_the_cache_before_they_are_formatted(tmp_path):
    """A program with large constants is keyed in the text index by their digests: a new
    process loads its code without formatting the weights as hex, and formats them only
    when something asks for the IR. Compiling does not format them either: the compiler
    takes their bytes."""
    cache = tmp_path / "cache"
    first = _child_run(tmp_path, _WEIGHTS_CHILD, CUVIL_CACHE_DIR=str(cache))
    assert first["from_cache"] is False and first["error"] < 1e-4
    assert first["hex_before_ir"] == 0  # the compiler took the bytes
    assert first["hex_after_ir"] == 64 * 32 * 4 and 'dense<"0x' in first["input"]
    second = _child_run(tmp_path, _WEIGHTS_CHILD, CUVIL_CACHE_DIR=str(cache))
    assert second["from_cache"] is True and second["error"] < 1e-4
    assert second["hex_before_ir"] == 0
    assert second["hex_after_ir"] == 64 * 32 * 4 and second["input"] == first["input"]
    assert second["record_has_weights"]
    # A text that cannot be produced is reported as such, not shown as an empty module.
    broken = _WEIGHTS_CHILD.replace(
        "text = cuvil.inspect_ir(f)",
        "def fail(**_):\n"
        "    raise RuntimeError('no text')\n"
        "record.program.formatter = fail\n"
        "try:\n"
        "    text = cuvil.inspect_ir(f)\n"
        "except Exception as error:\n"
        "    text = 'error: ' + str(error)",
    ).replace("""'dense<"0x' in record.mlir""", "None")
    failed = _child_run(tmp_path, broken, CUVIL_CACHE_DIR=str(cache))
    assert failed["from_cache"] is True and failed["error"] < 1e-4
    assert failed["input"].startswith("error: ") and "@layer" in failed["input"]
    assert "not available" in failed["input"]
    # Other weights are another program: compiled, not loaded.
    changed = _WEIGHTS_CHILD.replace("default_rng(3)", "default_rng(4)")
    third = _child_run(tmp_path, changed, CUVIL_CACHE_DIR=str(cache))
    assert third["from_cache"] is False and third["error"] < 1e-4


@pytest.mark.parametrize(
    "damage",
    ["garbage", "truncated", "wrong key", "unknown dtype", "huge rank", "no code"],
)
def test_a_damaged_text_index_falls_back_to_the_structural_cache(tmp_path, damage):
    cache = tmp_path / "cache"
    first = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    (index,) = cache.glob("*.index")
    text = index.read_text()
    entry = json.loads(text)
    if damage == "garbage":
        index.write_bytes(b"\x00\xff" * 100)
    elif damage == "truncated":
        index.write_text(text[: len(text) // 2])
    elif damage == "wrong key":
        index.write_text(json.dumps({**entry, "key": "0" * 64}))
    elif damage == "unknown dtype":
        entry["inputs"][0]["dtype"] = "float128"
        index.write_text(json.dumps(entry))
    elif damage == "huge rank":
        entry["inputs"][0]["shape"] = [1] * 100000
        index.write_text(json.dumps(entry))
    else:
        (cache / f"{entry['key']}.so").unlink()
    second = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    assert second["error"] < 1e-3 and second["input"] == first["input"]
    assert second["from_cache"] is (damage != "no code")
    # The index is rewritten whole by the process that did not use it.
    assert json.loads(index.read_text()) == json.loads(text)


def test_disk_cache_is_trimmed_least_recently_used_first(tmp_path):
    """Over CUVIL_CACHE_MAX_MB, a compilation removes the oldest entries until the
    folder's entries fit in 80% of it; its own, and anything not named as an entry, stay."""
    cache = tmp_path / "cache"
    cache.mkdir()
    old = [cache / f"{i:064x}.so" for i in range(6)]
    for age, path in enumerate(old):
        path.write_bytes(b"\0" * 2**20)
        os.utime(path, (1e9 + age, 1e9 + age))  # old[0] is the least recently used
    stale_tmp = cache / f"{7:064x}.so.abcdefgh.tmp"
    stale_tmp.write_bytes(b"half")
    os.utime(stale_tmp, (1e9, 1e9))
    others = [cache / "notes.txt", cache / "frameworks-0123" / "torch.py"]
    for path in others:
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"\0" * 2**20)
    first = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache), CUVIL_CACHE_MAX_MB="4")
    assert first["from_cache"] is False and first["error"] < 1e-3
    # 6 MiB of entries plus the new ones, limit 4: down to 3.2 MiB, oldest first.
    assert [p.exists() for p in old] == [False, False, False, True, True, True]
    assert not stale_tmp.exists() and all(p.exists() for p in others)
    assert len(list(cache.glob("*.index"))) == 1
    # The new entry is used again; the cache keeps it at the next trim.
    second = _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache), CUVIL_CACHE_MAX_MB="4")
    assert second["from_cache"] is True


_SHAPES_CHILD = _CHILD.replace(
    '"from_cache": record.from_cache,',
    '"from_cache": record.from_cache, "rules_run": cuvil._cuvil.shape_rules_run(),',
)


def test_shape_rules_answers_are_kept_for_the_next_process(tmp_path):
    """A trace asks the ops' shape rules for every result type; the answers go to a
    file in the cache folder, so a new process tracing the same program runs no shape
    rule (nor builds the MLIR context they need). A file that is not whole records is
    removed and the answers computed again."""
    cache = tmp_path / "cache"
    first = _child_run(tmp_path, _SHAPES_CHILD, CUVIL_CACHE_DIR=str(cache))
    (store,) = cache.glob("*.answers")
    assert len(store.stem) == 64 and b"cuvil.matmul" in store.read_bytes()
    assert first["rules_run"] == 2  # the matmul and the add
    second = _child_run(tmp_path, _SHAPES_CHILD, CUVIL_CACHE_DIR=str(cache))
    assert second["rules_run"] == 0 and second["from_cache"] is True
    assert second["input"] == first["input"] and second["error"] < 1e-3

    store.write_bytes(store.read_bytes()[:-7] + b"\x00garbage 99999999\n")
    third = _child_run(tmp_path, _SHAPES_CHILD, CUVIL_CACHE_DIR=str(cache))
    assert third["rules_run"] == 2 and third["input"] == first["input"]
    assert third["error"] < 1e-3
    assert b"garbage" not in store.read_bytes() and b"cuvil.matmul" in store.read_bytes()


def test_cuvil_cache_command_lists_and_clears_entries(tmp_path):
    cache = tmp_path / "cache"
    _child_run(tmp_path, CUVIL_CACHE_DIR=str(cache))
    (cache / "notes.txt").write_text("not an entry")
    env = subprocess_env(CUVIL_CACHE_DIR=str(cache), CUVIL_CACHE_MAX_MB="64")
    shown = run_python(["-m", "cuvil", "cache"], env=env)
    assert shown.returncode == 0, shown.stderr
    assert str(cache) in shown.stdout
    assert "1 compiled, 1 text indexes, 1 shape answer files" in shown.stdout
    assert "limit    64.0 MiB" in shown.stdout
    cleared = run_python(["-m", "cuvil", "cache", "--clear"], env=env)
    assert cleared.returncode == 0 and "removed 3 entries" in cleared.stdout
    assert [p.name for p in cache.iterdir()] == ["notes.txt"]


def test_disk_cache_can_be_disabled(tmp_path):
    cache = tmp_path / "cache"
    env = {"CUVIL_CACHE_DIR": str(cache), "CUVIL_DISABLE_DISK_CACHE": "1"}
    _child_run(tmp_path, **env)
    assert _child_run(tmp_path, **env)["from_cache"] is False


def test_cached_libraries_with_the_same_symbol_names_coexist(tmp_path):
    """Every shape of ``f`` defines ``cuvil_f``; each cached library must call its own."""
    script = tmp_path / "same_names.py"
    script.write_text(
        """
import numpy as np, cuvil
x = np.arange(91, dtype=np.float32).reshape(7, 13)
def make(axis, keepdims):
    @cuvil.jit
    def f(x):
        return np.max(x, axis=axis, keepdims=keepdims)
    return f
results = []
for axis, keepdims in [(1, False), (1, True), (-1, False), (-1, True)]:
    f = make(axis, keepdims)
    ok = np.array_equal(f(x), np.max(x, axis=axis, keepdims=keepdims))
    results.append((f._last_compiled.from_cache, ok))
print(results)
"""
    )
    env = subprocess_env(CUVIL_CACHE_DIR=str(tmp_path / "cache"))
    result = run_python([str(script)], env=env)
    assert result.returncode == 0, result.stderr
    # axis=-1 is axis=1: the same graph, so the last two come from the cache.
    assert result.stdout.strip() == "[(False, True), (False, True), (True, True), (True, True)]"
