"""A two-layer JAX MLP with random weights, declared for `cuvil compile` and the Workbench.

    cuvil compile jax_mlp.py            # the Cuvil IR imported from the jaxpr
    cuvil-workbench jax_mlp.py          # passes, graph, execute: Cuvil vs JAX

The declaration is a function ``cuvil_model()`` returning ``(model,
example_inputs)``; a JAX model is a ``jax.jit`` function (a plain function
using ``jax.numpy`` would be traced as NumPy code instead).
"""

import jax
import jax.numpy as jnp
import numpy as np


def cuvil_model():
    rng = np.random.default_rng(0)  # the same random weights and input on every run
    w1 = jnp.asarray(rng.standard_normal((16, 32), dtype=np.float32) * 0.25)
    b1 = jnp.asarray(rng.standard_normal(32, dtype=np.float32) * 0.1)
    w2 = jnp.asarray(rng.standard_normal((32, 4), dtype=np.float32) * 0.25)
    b2 = jnp.asarray(rng.standard_normal(4, dtype=np.float32) * 0.1)

    @jax.jit
    def mlp(x):
        hidden = jax.nn.gelu(x @ w1 + b1)
        return jax.nn.softmax(hidden @ w2 + b2, axis=-1)

    return mlp, (jnp.asarray(rng.standard_normal((8, 16), dtype=np.float32)),)
