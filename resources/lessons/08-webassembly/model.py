"""Lesson 8: the MLP of the examples compiled for WebAssembly (it runs in Node)."""

import numpy as np

import cuvil


@cuvil.jit(target="wasm")
def mlp(x, w1, b1, w2, b2):
    hidden = cuvil.gelu(x @ w1 + b1)
    return hidden @ w2 + b2


rng = np.random.default_rng(0)
x = rng.standard_normal((16, 64), dtype=np.float32)
w1 = rng.standard_normal((64, 128), dtype=np.float32) * 0.1
b1 = np.zeros(128, np.float32)
w2 = rng.standard_normal((128, 32), dtype=np.float32) * 0.1
b2 = np.zeros(32, np.float32)
print("output", mlp(x, w1, b1, w2, b2).shape)
