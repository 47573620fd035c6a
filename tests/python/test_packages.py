"""IR packages (.irpkg), executable packages (.cuvil) and cuvil.runtime: round trips in
this process and in another one, and hostile packages refused with the file, field and
reason (docs/irpkg.md)."""

from __future__ import annotations

import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import cuvil
from cuvil import _native

packages = _native.load().packages


def mlp(x, w1, w2):
    return np.maximum(x @ w1, 0.0) @ w2


SPEC = {"x": (8, 16), "w1": (16, 32), "w2": (32, 4)}


def _args(rng, spec=SPEC):
    return [rng.standard_normal(s).astype(np.float32) for s in spec.values()]


@pytest.fixture(scope="module")
def module():
    return cuvil.frontend.build_ir(mlp, SPEC)


@pytest.fixture(scope="module")
def exported(module, tmp_path_factory):
    path = tmp_path_factory.mktemp("pkg") / "mlp.cuvil"
    module.compile().export(path)
    return path


def test_irpkg_round_trip_keeps_fingerprint_and_result(module, tmp_path):
    path = tmp_path / "mlp.irpkg"
    module.save(path)
    loaded = cuvil.load_irpkg(path)
    assert loaded.fingerprint == module.fingerprint
    assert loaded.input_spec == module.input_spec
    assert loaded.output_spec == module.output_spec
    assert packages.load_irpkg(str(path))[2] == "bytecode"
    args = _args(np.random.default_rng(0))
    np.testing.assert_allclose(loaded.compile()(*args), mlp(*args), rtol=1e-5, atol=1e-5)


def _rewrite(path, out, *, metadata=None, entries=None, kind="ir"):
    """The package at ``path`` written again with its metadata or entries changed."""
    content = packages.read(str(path), kind)
    meta = json.loads(content["metadata"])
    meta.update(metadata or {})
    items = dict(content["entries"])
    items.update(entries or {})
    packages.write(str(out), kind, json.dumps(meta), [(k, v, True) for k, v in items.items()])


def test_irpkg_from_another_mlir_major_reads_the_text(module, tmp_path):
    path, other = tmp_path / "a.irpkg", tmp_path / "b.irpkg"
    module.save(path)
    _rewrite(path, other, metadata={"mlir_version": "24.0"})
    text, _, form = packages.load_irpkg(str(other))
    assert form == "text"
    assert cuvil.load_irpkg(other).fingerprint == module.fingerprint


def test_irpkg_with_changed_ir_fails_its_fingerprint(module, tmp_path):
    path, bad = tmp_path / "a.irpkg", tmp_path / "bad.irpkg"
    module.save(path)
    text = packages.read(str(path), "ir")["entries"]["ir/module.mlir"].decode()
    changed = text.replace("cuvil.max", "cuvil.min")
    assert changed != text
    _rewrite(
        path,
        bad,
        metadata={"mlir_version": "24.0"},
        entries={"ir/module.mlir": changed.encode()},
    )
    with pytest.raises(cuvil.PackageError, match=r"bad\.irpkg: fingerprint: .* metadata names"):
        cuvil.load_irpkg(bad)


LEGACY = os.path.join(os.path.dirname(__file__), "data", "tiny_mlp_scheme1.irpkg")


def tiny_mlp_seed7(x):
    """What the legacy package computes: two dense layers with seed-7 weights."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((16, 32)).astype(np.float32)
    b1 = rng.standard_normal(32).astype(np.float32)
    w2 = rng.standard_normal((32, 8)).astype(np.float32)
    return np.maximum(x @ w1 + b1, 0.0) @ w2


def test_irpkg_records_its_fingerprint_scheme(module, tmp_path):
    path = tmp_path / "mlp.irpkg"
    module.save(path)
    assert json.loads(packages.read(str(path), "ir")["metadata"])["fingerprint_scheme"] == 2


def test_irpkg_with_the_first_fingerprint_scheme_still_loads_and_is_checked(tmp_path):
    # Written by Cuvil 0.1.0 before the field existed: its fingerprint hashes the
    # weights as hex text (scheme 1).
    meta = json.loads(packages.read(LEGACY, "ir")["metadata"])
    assert "fingerprint_scheme" not in meta
    loaded = cuvil.load_irpkg(LEGACY)
    x = np.random.default_rng(0).standard_normal((4, 16)).astype(np.float32)
    np.testing.assert_allclose(loaded.compile()(x), tiny_mlp_seed7(x), rtol=1e-5, atol=1e-5)
    # Reported in today's scheme, as build_ir gives it for the same graph.
    assert loaded.fingerprint != meta["fingerprint"]
    again = tmp_path / "again.irpkg"
    loaded.save(again)
    assert cuvil.load_irpkg(again).fingerprint == loaded.fingerprint
    # One weight changed in the text (read, as from another MLIR major): scheme 1
    # still catches it.
    text = packages.read(LEGACY, "ir")["entries"]["ir/module.mlir"].decode()
    start = text.index('dense<"0x') + len('dense<"0x')
    digit = "0" if text[start] != "0" else "1"
    bad = tmp_path / "bad.irpkg"
    _rewrite(
        LEGACY,
        bad,
        metadata={"mlir_version": "24.0"},
        entries={"ir/module.mlir": (text[:start] + digit + text[start + 1 :]).encode()},
    )
    with pytest.raises(cuvil.PackageError, match=r"bad\.irpkg: fingerprint: .* metadata names"):
        cuvil.load_irpkg(bad)


def test_irpkg_from_a_newer_fingerprint_scheme_is_refused_by_name(module, tmp_path):
    path, newer = tmp_path / "a.irpkg", tmp_path / "newer.irpkg"
    module.save(path)
    _rewrite(path, newer, metadata={"fingerprint_scheme": 9})
    with pytest.raises(
        cuvil.PackageError, match=r"newer\.irpkg: metadata field fingerprint_scheme: 9"
    ):
        cuvil.load_irpkg(newer)


def test_runtime_runs_an_exported_model(exported):
    rt = cuvil.runtime.Runtime(device="cpu")
    exe = rt.load_executable(exported)
    assert exe.function_names == ["main"]
    fn = exe.get_function("main")
    assert exe.get_function("mlp") is fn and exe["main"] is fn
    args = _args(np.random.default_rng(1))
    out = fn(*[cuvil.nd.array(a) for a in args])
    assert isinstance(out, cuvil.nd.NDArray)
    np.testing.assert_allclose(out.numpy(), mlp(*args), rtol=1e-5, atol=1e-5)
    for name, value in zip(fn.input_names, args):
        rt.bind_input(fn, name, value)
    args[0][:] = 1.0  # bound without a copy: run() sees the change
    np.testing.assert_allclose(fn.run().numpy(), mlp(*args), rtol=1e-5, atol=1e-5)


def test_runtime_errors_name_the_argument_and_the_names(exported):
    exe = cuvil.runtime.load_executable(exported)
    fn = exe.get_function()
    args = _args(np.random.default_rng(2))
    with pytest.raises(KeyError, match="no function 'nope'; it has 'main' \\(also 'mlp'\\)"):
        exe.get_function("nope")
    with pytest.raises(TypeError, match="input 'w1' has dtype float64.*astype"):
        fn(args[0], args[1].astype(np.float64), args[2])
    with pytest.raises(ValueError, match=r"input 'x' has shape \(4, 16\)"):
        fn(args[0][:4], args[1], args[2])
    with pytest.raises(ValueError, match="not C-contiguous"):
        cuvil.runtime.Runtime().bind_input(fn, "w1", np.asfortranarray(args[1]))
    with pytest.raises(RuntimeError, match="call_async needs a runtime made with enable_async"):
        fn.call_async(*args)
    with pytest.raises(ValueError, match="arena_extend_strategy"):
        cuvil.runtime.Runtime(arena_extend_strategy="double")


def test_async_calls_run_in_order_on_the_runtimes_stream(exported):
    rt = cuvil.runtime.Runtime(enable_async=True)
    fn = rt.load_executable(exported).get_function()
    rng = np.random.default_rng(8)
    batches = [_args(rng) for _ in range(6)]
    futures = [fn.call_async(*args) for args in batches]
    rt.synchronize()
    assert all(f.done() for f in futures)
    for future, args in zip(futures, batches):
        np.testing.assert_allclose(future.result().numpy(), mlp(*args), rtol=1e-5, atol=1e-5)
    # They ran on the runtime's one stream thread, not the caller's.
    streams = [t for t in threading.enumerate() if t.name.startswith("cuvil-stream")]
    assert streams
    # Arguments are checked when the call is made; plain calls stay synchronous.
    with pytest.raises(ValueError, match=r"input 'x' has shape \(4, 16\)"):
        fn.call_async(batches[0][0][:4], *batches[0][1:])
    np.testing.assert_allclose(fn(*batches[0]).numpy(), mlp(*batches[0]), rtol=1e-5, atol=1e-5)


def test_memory_pool_serves_every_call_and_grows_once(exported):
    rt = cuvil.runtime.Runtime(memory_pool_size_mb=0.0001)  # 128 bytes: too small
    fn = rt.load_executable(exported).get_function()
    args = _args(np.random.default_rng(6))
    expected = mlp(*args)
    for _ in range(3):
        np.testing.assert_allclose(fn(*args).numpy(), expected, rtol=1e-5, atol=1e-5)
    pool = rt.memory_pool
    assert pool["calls"] == 3 and pool["overflows"] == 1 and pool["grows"] == 1, pool
    assert pool["capacity"] >= pool["peak_bytes"] >= 1024, pool

    fixed = cuvil.runtime.Runtime(memory_pool_size_mb=0.0001, arena_extend_strategy="fixed")
    fn = fixed.load_executable(exported).get_function()
    with pytest.raises(MemoryError, match="main' could not allocate"):
        fn(*args)
    roomy = cuvil.runtime.Runtime(memory_pool_size_mb=1, arena_extend_strategy="fixed")
    fn = roomy.load_executable(exported).get_function()
    np.testing.assert_allclose(fn(*args).numpy(), expected, rtol=1e-5, atol=1e-5)
    assert roomy.memory_pool["overflows"] == 0


def test_num_threads_gives_the_same_result(exported):
    args = _args(np.random.default_rng(7))
    one = cuvil.runtime.Runtime(num_threads=1).load_executable(exported).get_function()
    two = cuvil.runtime.Runtime(num_threads=2).load_executable(exported).get_function()
    np.testing.assert_array_equal(one(*args).numpy(), two(*args).numpy())


def test_symbolic_model_runs_at_every_size(tmp_path):
    def scale(x, w):
        return np.tanh(x @ w) * 2.0

    module = cuvil.frontend.to_ir_with_dynamic_shape(scale, {"x": ("N", 16), "w": (16, 8)})
    module._program.symbol_ranges = {"N": (1, 40)}  # as torch.export would bound it
    path = tmp_path / "scale.cuvil"
    module.compile().export(path)
    fn = cuvil.runtime.load_executable(path).get_function()
    assert "N" in fn.signature
    rng = np.random.default_rng(3)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    for n in (1, 5, 33):
        x = rng.standard_normal((n, 16)).astype(np.float32)
        np.testing.assert_allclose(fn(x, w).numpy(), scale(x, w), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="symbol 'N' is 41, but the model allows 1 <= N <= 40"):
        fn(np.zeros((41, 16), np.float32), w)


def test_use_mmap_shares_one_mapped_file_between_processes(exported, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("CUVIL_CACHE_DIR", str(cache))
    args = _args(np.random.default_rng(5))
    np.savez(tmp_path / "args.npz", *args)
    # Two processes load the package mapped and hold it open together; each
    # reports the mapped file it runs from (device and inode, from its maps).
    script = textwrap.dedent(
        f"""
        import os, sys, numpy as np, cuvil
        a = np.load({str(tmp_path / "args.npz")!r})
        fn = cuvil.runtime.load_executable({str(exported)!r}, use_mmap=True).get_function()
        out = fn(*[a[k] for k in sorted(a.files)]).numpy()
        maps = [l.split() for l in open("/proc/self/maps") if "/mapped/" in l]
        print(sorted({{(m[3], m[4], m[5]) for m in maps}}))
        np.save(sys.argv[1], out)
        sys.stdout.flush()
        sys.stdin.read()  # stay loaded until told to go
        """
    )
    env = dict(os.environ, CUVIL_CACHE_DIR=str(cache))
    runs = [
        subprocess.Popen(
            [sys.executable, "-c", script, str(tmp_path / f"out{i}.npy")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for i in range(2)
    ]
    try:
        mapped = [run.stdout.readline().strip() for run in runs]
    finally:
        for run in runs:
            run.communicate("", timeout=120)
    assert mapped[0] == mapped[1] and "mapped" in mapped[0]  # one file, one inode
    files = list((cache / "mapped").iterdir())
    assert len(files) == 1 and files[0].suffix == ".so"
    expected = cuvil.runtime.load_executable(exported).get_function()(*args).numpy()
    for i in range(2):
        np.testing.assert_array_equal(np.load(tmp_path / f"out{i}.npy"), expected)
    # A file there with other bytes is replaced, never run.
    files[0].write_bytes(b"not a library")
    fn = cuvil.runtime.Runtime().load_executable(exported, use_mmap=True).get_function()
    np.testing.assert_array_equal(fn(*args).numpy(), expected)
    assert files[0].read_bytes()[:4] == b"\x7fELF"
    monkeypatch.setenv("CUVIL_DISABLE_DISK_CACHE", "1")
    with pytest.raises(ValueError, match="use_mmap=True.*cache directory is off"):
        cuvil.runtime.load_executable(exported, use_mmap=True)


def test_a_second_process_gets_the_same_result(exported, tmp_path):
    args = _args(np.random.default_rng(4))
    np.savez(tmp_path / "args.npz", *args)
    script = textwrap.dedent(
        f"""
        import numpy as np, cuvil
        a = np.load({str(tmp_path / "args.npz")!r})
        fn = cuvil.runtime.load_executable({str(exported)!r}).get_function("main")
        np.save({str(tmp_path / "out.npy")!r}, fn(*[a[k] for k in sorted(a.files)]).numpy())
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    here = cuvil.runtime.load_executable(exported).get_function()(*args).numpy()
    np.testing.assert_array_equal(np.load(tmp_path / "out.npy"), here)


# --- hostile packages -----------------------------------------------------------------


def _container(kind: int, metadata: bytes, index: list, blobs: list, major=1, minor=0):
    """Container bytes as docs/irpkg.md lays them out, for crafting hostile files."""
    body = bytearray(b"\0" * 128)
    for entry, blob in zip(index, blobs):
        body += b"\0" * (-len(body) % 64)
        entry.setdefault("offset", len(body))
        body += blob
    body += b"\0" * (-len(body) % 64)
    index_bytes = json.dumps(index).encode()
    meta_offset = len(body)
    body += metadata + index_bytes
    header = struct.pack(
        "<8sHHHHQQQQQ",
        b"CUVILPKG",
        major,
        minor,
        kind,
        0,
        len(body),
        meta_offset,
        len(metadata),
        meta_offset + len(metadata),
        len(index_bytes),
    )
    body[: len(header)] = header
    body[56:88] = hashlib.sha256(metadata + index_bytes).digest()
    return bytes(body)


def _entry(name, blob, raw=None, codec="none", raw_size=None):
    raw = blob if raw is None else raw
    return {
        "name": name,
        "codec": codec,
        "size": len(blob),
        "raw_size": len(raw) if raw_size is None else raw_size,
        "sha256": hashlib.sha256(blob).hexdigest(),
    }


def _refusal(tmp_path, data: bytes, kind="ir") -> str:
    path = tmp_path / "hostile.pkg"
    path.write_bytes(data)
    with pytest.raises(ValueError) as info:
        packages.read(str(path), kind)
    message = str(info.value)
    assert "hostile.pkg" in message
    return message


def test_truncated_and_bit_flipped_packages_are_refused(exported, tmp_path):
    data = exported.read_bytes()
    assert "truncated" in _refusal(tmp_path, data[: len(data) // 2], "executable")
    assert "truncated" in _refusal(tmp_path, data[:100], "executable")
    # One bit in every third byte: header, entries, padding, metadata and index.
    for position in range(0, len(data), 3):
        flipped = bytearray(data)
        flipped[position] ^= 1 << (position % 8)
        path = tmp_path / "flipped.cuvil"
        path.write_bytes(bytes(flipped))
        with pytest.raises(cuvil.PackageError, match="flipped.cuvil"):
            exe = cuvil.runtime.load_executable(path)
            exe.get_function().load()  # the code entry is checked when read
            exe.verify()  # and every other one


def test_version_kind_and_names_are_checked(tmp_path):
    meta = b"{}"
    newer = _refusal(tmp_path, _container(1, meta, [], [], minor=1))
    assert "newer Cuvil (format 1.1); this Cuvil reads up to (1.0)" in newer
    assert "format 2.0" in _refusal(tmp_path, _container(1, meta, [], [], major=2))
    assert "executable package (.cuvil), not an IR package" in _refusal(
        tmp_path, _container(2, meta, [], [])
    )
    for name in ["../escape", "/etc/passwd", "a//b", ".hidden", "a/../../b", "x" * 300]:
        message = _refusal(tmp_path, _container(1, meta, [_entry(name, b"x")], [b"x"]))
        assert "not a valid entry name" in message
    with pytest.raises(ValueError, match="invalid package entry name"):
        packages.write(str(tmp_path / "w.irpkg"), "ir", "{}", [("../x", b"", False)])
    moved = _entry("a", b"x")
    moved["offset"] = 0  # pointing into the header
    assert "must start at byte 128" in _refusal(tmp_path, _container(1, meta, [moved], [b"x"]))


def _memory_kib(field: str) -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith(field))


def test_bombs_are_refused_fast_and_small(tmp_path):
    import zstandard as zstd

    huge = _entry("weights/w", b"", codec="zstd", raw_size=64 << 30)
    declared = tmp_path / "declared.irpkg"
    declared.write_bytes(_container(1, b"{}", [huge], [b"\0" * 16]))
    # A frame of 1 MiB without its size that asks for a 1 GiB window.
    params = zstd.ZstdCompressionParameters(
        window_log=30, compression_level=1, write_content_size=False
    )
    stream = io.BytesIO()
    with zstd.ZstdCompressor(compression_params=params).stream_writer(stream, closefd=False) as w:
        w.write(b"\0" * (1 << 20))
    payload = stream.getvalue()
    window = _entry("weights/w", payload, raw=b"\0" * (1 << 20), codec="zstd")
    windowed = tmp_path / "window.irpkg"
    windowed.write_bytes(_container(1, b"{}", [window], [payload]))
    for path, reason in [(declared, "more than the limit"), (windowed, "window")]:
        # In a child, so the peak resident memory measured is this read's alone.
        code = textwrap.dedent(
            f"""
            import time
            from cuvil import _native
            from test_packages import _memory_kib
            packages = _native.load().packages
            before, started = _memory_kib("VmRSS:"), time.perf_counter()
            try:
                packages.read({str(path)!r}, "ir")
            except ValueError as error:
                message = str(error)
            seconds = time.perf_counter() - started
            print((_memory_kib("VmHWM:") - before) // 1024, seconds, message, sep="|")
            """
        )
        result = subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=os.path.dirname(__file__),
        )
        mib, seconds, message = result.stdout.strip().split("|", 2)
        assert reason in message, message
        assert float(seconds) < 2 and int(mib) < 256, (seconds, mib)


def test_cli_emits_both_packages(tmp_path):
    example = os.path.join(os.path.dirname(__file__), "../../resources/examples/mlp.py")
    for kind in ("cuvil", "irpkg"):
        out = tmp_path / f"mlp.{kind}"
        result = subprocess.run(
            [sys.executable, "-m", "cuvil", "compile", example, "--emit", kind, "-o", str(out)],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr
        assert f"wrote {kind} to" in result.stdout
    fn = cuvil.runtime.load_executable(tmp_path / "mlp.cuvil").get_function()
    assert fn.input_names[0] == "x"
    assert cuvil.load_irpkg(tmp_path / "mlp.irpkg").name == "mlp"

    def package(path):
        return subprocess.run(
            [sys.executable, "-m", "cuvil", "package", str(path), "--verify"],
            capture_output=True,
            text=True,
            timeout=120,
        )

    described = package(tmp_path / "mlp.cuvil")
    assert described.returncode == 0, described.stderr
    assert "function main (also mlp): (x: float32[64, 256]" in described.stdout
    assert "verified: every entry, and the code loads on this CPU" in described.stdout
    described = package(tmp_path / "mlp.irpkg")
    assert described.returncode == 0, described.stderr
    assert "verified: every entry, the IR and its fingerprint" in described.stdout
    cut = tmp_path / "cut.cuvil"
    cut.write_bytes((tmp_path / "mlp.cuvil").read_bytes()[:1000])
    described = package(cut)
    assert described.returncode == 1
    assert "cut.cuvil: file size: " in described.stderr
