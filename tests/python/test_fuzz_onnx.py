"""The ONNX importer under tests/fuzz/fuzz_onnx.py: its regressions replayed, then a short run.

Each regression input once crashed, hung or raised something other than Cuvil's errors
(tests/fuzz/README.md lists what each was); the short run (fixed seed, 20 s) fuzzes from the
seed models with every mutation.
"""

from __future__ import annotations

import sys

from conftest import REPO_ROOT as ROOT

import cuvil

sys.path.insert(0, str(ROOT / "tests" / "fuzz"))

import fuzz_onnx  # noqa: E402

REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions" / "onnx-importer"


def test_saved_findings_end_in_cuvil_errors_or_results():
    assert len(list(REGRESSIONS.glob("*.onnx"))) >= 10
    assert fuzz_onnx.replay(REGRESSIONS) == []


def test_seed_models_import_and_compile():
    # Mutations start from models that work, so what breaks is what the mutation did.
    for model in fuzz_onnx.seeds():
        cuvil.load_onnx(model).compile()


def test_a_short_fuzz_run_finds_nothing(tmp_path):
    findings = fuzz_onnx.fuzz(seconds=20, seed=11, out=tmp_path)
    assert findings == [], [(kind, report) for kind, report, _ in findings]
