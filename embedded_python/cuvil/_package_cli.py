"""``cuvil package FILE``: what an ``.irpkg`` or ``.cuvil`` holds, and whether it is intact."""

from __future__ import annotations

import argparse
import json
import sys

from . import _native

HELP = """\
Print what a package holds: its kind and format version, who wrote it, the
fingerprint of its IR, its functions with their signatures (executable
packages) or the model's signature (IR packages), and its entries with
their stored and raw sizes. With --verify, also read every entry (checking
its SHA-256 and decompressed size), parse an IR package's IR and compare its
structural fingerprint, and load an executable package's code (which checks
that this CPU has the features it was compiled for). Exit status 1 names the
file, the field and what was wrong (docs/irpkg.md).
"""


def add_parser(commands) -> None:
    parser = commands.add_parser(
        "package",
        help="describe and verify an executable (.cuvil) or IR (.irpkg) package",
        usage="cuvil package FILE [--verify] [--json]",
        description=HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("file", metavar="FILE", help="the package")
    parser.add_argument("--verify", action="store_true", help="read and check every part")
    parser.add_argument("--json", action="store_true", help="print the metadata as JSON")


def _size(n: int) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _describe(path: str, kind: str, metadata: dict, entries: list) -> None:
    label = "IR package" if kind == "ir" else "executable package"
    writer = metadata.get("cuvil_version", "?")
    mlir = f", MLIR {metadata['mlir_version']}" if "mlir_version" in metadata else ""
    print(f"{path}: {label}, written by Cuvil {writer}{mlir}")
    print(f"  fingerprint {metadata.get('fingerprint', '?')}")
    if kind == "ir":
        from .frontend import TensorSpec, _signature_text

        name = metadata.get("name", metadata.get("func_name", "?"))
        ins = {
            x.get("name"): TensorSpec(x.get("shape"), x.get("dtype")) for x in metadata["inputs"]
        }
        outs = [TensorSpec(x.get("shape"), x.get("dtype")) for x in metadata["outputs"]]
        print(f"  model {_signature_text(name, ins, outs)}, target {metadata.get('target', '?')}")
    else:
        host = metadata.get("host", {})
        print(f"  compiled for {host.get('cpu', '?')} ({len(host.get('features', []))} features)")
        package = _native.load().packages.ExecutablePackage(path)  # as the runtime reads it
        for entry in metadata["functions"]:
            fn = package.function(entry["name"])
            aliases = f" (also {', '.join(fn.aliases)})" if fn.aliases else ""
            signature = fn.signature[len(fn.name) :]  # "(x: float32[8, 16]) -> (...)"
            print(f"  function {fn.name}{aliases}: {signature} on {entry['target']}")
    print(f"  {len(entries)} entries:")
    for e in entries:
        print(
            f"    {e['name']:<28} {e['codec']:<5} {_size(e['size']):>10} stored, "
            f"{_size(e['raw_size']):>10} raw"
        )


def _verify(path: str, kind: str) -> None:
    from . import runtime
    from ._packages import load_irpkg

    _native.load().packages.verify(path, kind)  # every entry: digest, size
    if kind == "ir":
        load_irpkg(path)  # parse, verify, fingerprint
        print("  verified: every entry, the IR and its fingerprint")
        return
    executable = runtime.load_executable(path)
    for name in executable.function_names:
        executable.get_function(name).load()
    print("  verified: every entry, and the code loads on this CPU")


def command(args: argparse.Namespace) -> int:
    def fail(message: str) -> int:
        print(f"cuvil package: error: {message}", file=sys.stderr)
        return 1

    packages = _native.load().packages
    try:
        kind, metadata_text, entries = packages.describe(args.file)
        metadata = json.loads(metadata_text)
        if args.json:
            print(json.dumps(metadata, indent=2))
        else:
            _describe(args.file, kind, metadata, entries)
        if args.verify:
            _verify(args.file, kind)
    except ValueError as error:  # PackageError (the reader's or the Python layer's)
        return fail(str(error))
    return 0
