"""Two-layer perceptron (64x256 -> 512 -> 128, float32) with a GELU between the layers."""

import math

import numpy as np

import cuvil

BATCH, D_IN, D_HIDDEN, D_OUT = 64, 256, 512, 128


@cuvil.jit(target="cpu", enable_fusion=True)
def mlp(x, w1, b1, w2, b2):
    hidden = cuvil.gelu(x @ w1 + b1)
    return hidden @ w2 + b2


def make_inputs():
    """Deterministic float32 input batch and weights scaled by 1/sqrt(fan_in)."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, D_IN), dtype=np.float32)
    w1 = rng.standard_normal((D_IN, D_HIDDEN), dtype=np.float32) / np.float32(math.sqrt(D_IN))
    b1 = rng.standard_normal(D_HIDDEN, dtype=np.float32) * np.float32(0.1)
    w2 = rng.standard_normal((D_HIDDEN, D_OUT), dtype=np.float32) / np.float32(math.sqrt(D_HIDDEN))
    b2 = rng.standard_normal(D_OUT, dtype=np.float32) * np.float32(0.1)
    return x, w1, b1, w2, b2


def _gelu_float64(v):
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * v * (1.0 + erf(v / math.sqrt(2.0)))


def reference(x, w1, b1, w2, b2):
    """The same network in float64 with the exact erf from the math module."""
    x, w1, b1, w2, b2 = (a.astype(np.float64) for a in (x, w1, b1, w2, b2))
    return (_gelu_float64(x @ w1 + b1) @ w2 + b2).astype(np.float32)


def main():
    inputs = make_inputs()
    result = mlp(*inputs)
    error = np.max(np.abs(result - reference(*inputs)))
    print(f"mlp: output {result.shape} {result.dtype}, max abs error {error:.3e}")
    reason = cuvil.last_fallback_reason(mlp)
    if reason:
        print(f"(ran as plain NumPy: {reason})")


if __name__ == "__main__":
    main()
