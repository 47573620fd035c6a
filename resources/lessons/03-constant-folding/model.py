"""Lesson 3: a convolution followed by batch normalization with constant weights."""

import numpy as np

import cuvil

rng = np.random.default_rng(0)
# Weights are module-level constants: the traced program holds their values.
W = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
SCALE = rng.random(8).astype(np.float32) + 0.5
BIAS = rng.standard_normal(8).astype(np.float32)
MEAN = rng.standard_normal(8).astype(np.float32)
VAR = rng.random(8).astype(np.float32) + 0.5


@cuvil.jit(target="cpu")
def conv_bn_relu(x):
    y = cuvil.conv2d(x, W, padding=(1, 1, 1, 1))
    return cuvil.relu(cuvil.batch_norm(y, SCALE, BIAS, MEAN, VAR))


x = rng.standard_normal((1, 3, 16, 16)).astype(np.float32)
print("output shape", conv_bn_relu(x).shape)
