# Cuvil: `make run` runs the bundled example, `make test` runs every test.
# Both install what is missing and build first (scripts/setup.sh).

EXAMPLE ?= resources/examples/mlp.py

.PHONY: setup build run test lint bench bench-peers clean

setup:
	bash scripts/setup.sh

build: setup

run: setup
	.venv/bin/cuvil compile $(EXAMPLE) --print-ir-after-all
	.venv/bin/python $(EXAMPLE)

test: setup lint
	cd build && ctest -j2 --output-on-failure
	@# CTest does not print why a test skipped itself; GPU tests say it here.
	@cd build && ctest -L gpu -V 2>/dev/null | sed -n 's/^[0-9]*: \(SKIPPED: .*\)/gpu test \1/p'

# Style: clang-format (LLVM style, .clang-format) and ruff (ruff.toml).
lint: setup
	git ls-files '*.cpp' '*.h' '*.c' | xargs clang-format-19 --dry-run --Werror
	.venv/bin/ruff check .
	.venv/bin/ruff format --check .

bench: setup
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python benchmarks/bench_examples.py

# Cuvil against NumPy, PyTorch, torch.compile, ONNX Runtime, JAX and IREE
# (IREE from a cached folder, see benchmarks/setup_peers.sh). Options:
# make bench-peers BENCH_ARGS="--rounds 3 --only matmul_1024 --markdown"
bench-peers: setup
	peers=$$(bash benchmarks/setup_peers.sh) && \
	env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE PYTHONPATH="$$peers" \
	.venv/bin/python benchmarks/bench_peers.py $(BENCH_ARGS)

clean:
	rm -rf build
