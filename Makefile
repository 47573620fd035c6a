# Cuvil: `make run` runs the bundled example, `make test` runs every test.
# Both install what is missing and build first (scripts/setup.sh).

EXAMPLE ?= resources/examples/mlp.py

.PHONY: setup build run test lint bench bench-peers clean fuzz fuzz-build fuzz-smoke endurance test-asan package

setup:
	bash scripts/setup.sh

build: setup

run: setup
	.venv/bin/cuvil compile $(EXAMPLE) --print-ir-after-all
	.venv/bin/python $(EXAMPLE)

test: setup lint
	cd build && ctest -j2 --output-on-failure
	@# CTest does not print why a test skipped itself; GPU tests say it here.
	@cd build && ctest -L gpu -V 2>/dev/null | sed -n 's/^[0-9]*: \(SKIPPED[: ].*\)/gpu test \1/p'
	$(MAKE) fuzz-smoke CUVIL_SETUP_DONE=1

# Style: clang-format (LLVM style, .clang-format) and ruff (ruff.toml).
lint: setup
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format-19 --dry-run --Werror
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

# The Debian package: build/cuvil_<version>_amd64.deb (packaging/).
package: setup
	cmake --build build --target package -- -j2

bench: setup
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/bench_examples.py

# libFuzzer targets (tests/fuzz/README.md): a clang-19 ASan+UBSan build of
# the readers only, in build-fuzz. `make fuzz` fuzzes each target for
# FUZZ_SECONDS (default 100: 12 minutes for the seven), FUZZ_TARGETS to pick
# some; the corpus grows in build-fuzz/fuzz-corpus, crashes land in
# build-fuzz/fuzz-crashes. `make fuzz-smoke` (part of `make test`) runs each
# for FUZZ_SMOKE_SECONDS (default 5) on its seeds and regressions.
FUZZ_SECONDS ?= 100
FUZZ_SMOKE_SECONDS ?= 5
FUZZ_TARGETS ?=

fuzz-build:
	@# `make test` has just run the set-up; a direct `make fuzz` installs what is missing.
	@[ -n "$(CUVIL_SETUP_DONE)" ] || bash scripts/setup.sh --packages-only
	@[ -f build-fuzz/build.ninja ] || cmake -G Ninja -S . -B build-fuzz \
	  -DCUVIL_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19 \
	  -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir
	ninja -C build-fuzz -j2 cuvil-fuzzers cuvil-asan-quick

fuzz: fuzz-build
	python3 tests/fuzz/run_fuzzers.py --build build-fuzz \
	  --seconds $(FUZZ_SECONDS) $(FUZZ_TARGETS)
	@# The ONNX importer is Python: a structure-aware mutator, not libFuzzer.
	.venv/bin/python tests/fuzz/fuzz_onnx.py --seconds $(FUZZ_SECONDS) \
	  --out build-fuzz/fuzz-crashes/onnx-importer

# AddressSanitizer + UndefinedBehaviorSanitizer build of Cuvil (compiler,
# runtime, profiler, bindings, Workbench) in build-asan, and its C++, lit and
# Python tests (not the model frameworks': they do not run under a preloaded
# ASan runtime). docs/reliability.md has what it found.
test-asan: setup
	@[ -f build-asan/build.ninja ] || cmake -G Ninja -S . -B build-asan \
	  -DCMAKE_BUILD_TYPE=Release -DCUVIL_SANITIZE=ON \
	  -DMLIR_DIR=/usr/lib/llvm-19/lib/cmake/mlir -DPython3_EXECUTABLE=/usr/bin/python3
	ninja -C build-asan -j2
	cd build-asan && CUVIL_EXTENSION_DIR=$(CURDIR)/build-asan/python CUVIL_DEEPBIND=0 \
	  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ctest -j2 --output-on-failure

# With the fuzz targets it runs CI's quick sanitizer subset (label asan): the
# profiler's GoogleTest suites under ASan + UBSan, leaks reported.
fuzz-smoke: fuzz-build
	cd build-fuzz && FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) \
	  ASAN_OPTIONS=detect_leaks=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/asan/lsan.supp \
	  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest -L 'fuzz|asan' -j2 --output-on-failure

# The worker endurance run (docs/reliability.md): ENDURANCE_CYCLES cycles of
# user code that raises, hangs, segfaults, exits, runs out of memory, floods
# output and profiles; `make test` runs 2.
ENDURANCE_CYCLES ?= 100
endurance: build
	cd build && QT_QPA_PLATFORM=offscreen CUVIL_APP_TEST_DATA=$(CURDIR)/tests/app \
	  CUVIL_SOURCE_DIR=$(CURDIR) CUVIL_ENDURANCE_CYCLES=$(ENDURANCE_CYCLES) \
	  QTEST_FUNCTION_TIMEOUT=7200000 tests/app/WorkerEnduranceTest

# Cuvil against NumPy, PyTorch, torch.compile, ONNX Runtime, JAX and IREE
# (IREE from a cached folder, see benchmarks/setup_peers.sh). Options:
# make bench-peers BENCH_ARGS="--rounds 3 --only matmul_1024 --markdown"
bench-peers: setup
	peers=$$(bash benchmarks/setup_peers.sh) && \
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH="$$peers" \
	.venv/bin/python benchmarks/bench_peers.py $(BENCH_ARGS)

clean:
	rm -rf build build-fuzz build-asan
