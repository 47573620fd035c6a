"""Seed example: one float32 GEMM, (1024x512) @ (512x256), compiled by Cuvil for the CPU."""

import numpy as np

import cuvil


@cuvil.jit(target="cpu", enable_fusion=True)
def matmul_inference(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    return A @ B  # GEMM recognised, vectorized


def make_inputs():
    """Deterministic float32 inputs: A is 1024x512, B is 512x256."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((1024, 512), dtype=np.float32)
    b = rng.standard_normal((512, 256), dtype=np.float32)
    return a, b


def reference(A, B):
    """The product computed by NumPy in float64, rounded to float32."""
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.float32)


def main():
    inputs = make_inputs()
    result = matmul_inference(*inputs)
    error = np.max(np.abs(result - reference(*inputs)))
    print(f"matmul_inference: output {result.shape} {result.dtype}, max abs error {error:.3e}")
    reason = cuvil.last_fallback_reason(matmul_inference)
    if reason:
        print(f"(ran as plain NumPy: {reason})")


if __name__ == "__main__":
    main()
