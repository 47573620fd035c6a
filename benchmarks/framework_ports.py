"""The zoo's GPT-2 block written for JAX and TensorFlow, with the PyTorch model's weights.

One forward function serves both frameworks through their NumPy-style
namespaces (``jax.numpy`` and ``tensorflow.experimental.numpy``), so the two
ports compute exactly what ``zoo.GPT2Block`` does: embeddings, a pre-LN
causal self-attention block with a GELU-tanh MLP, the final norm and the LM
head. ``bench_models.py`` times them beside PyTorch, ONNX Runtime and Cuvil.
"""

from __future__ import annotations

import math

import numpy as np

PORTED = ("gpt2",)


def gpt2_weights(model) -> dict[str, np.ndarray]:
    """The GPT-2 block's parameters as float32 NumPy arrays, by their PyTorch names."""
    weights = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    weights["heads"] = model.attn.heads
    return weights


def _layer_norm(xp, x, gamma, beta, eps=1e-5):
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mean) * (x - mean), axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + eps) * gamma + beta


def _linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def gpt2_forward(xp, w: dict, ids):
    """``zoo.GPT2Block`` on ``ids`` (batch, length) with the NumPy-style namespace ``xp``."""
    batch, length = ids.shape
    dim, heads = w["wte.weight"].shape[1], w["heads"]
    size = dim // heads
    x = xp.take(w["wte.weight"], ids, axis=0) + w["wpe.weight"][:length]
    qkv = _linear(_layer_norm(xp, x, w["ln_1.weight"], w["ln_1.bias"]), *_pair(w, "attn.c_attn"))

    def split_heads(t):
        return xp.transpose(xp.reshape(t, (batch, length, heads, size)), (0, 2, 1, 3))

    q, k, v = (split_heads(qkv[..., i * dim : (i + 1) * dim]) for i in range(3))
    scores = (q @ xp.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(size))
    causal = np.tril(np.ones((length, length), dtype=bool))
    scores = xp.where(causal, scores, np.float32(-np.inf))
    scores = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
    attention = (scores / xp.sum(scores, axis=-1, keepdims=True)) @ v
    y = xp.reshape(xp.transpose(attention, (0, 2, 1, 3)), (batch, length, dim))
    x = x + _linear(y, *_pair(w, "attn.c_proj"))
    h = _linear(_layer_norm(xp, x, w["ln_2.weight"], w["ln_2.bias"]), *_pair(w, "mlp.0"))
    h = 0.5 * h * (1 + xp.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h * h * h)))
    x = x + _linear(h, *_pair(w, "mlp.2"))
    return _linear(_layer_norm(xp, x, w["ln_f.weight"], w["ln_f.bias"]), w["lm_head.weight"])


def _pair(w: dict, name: str):
    return w[f"{name}.weight"], w[f"{name}.bias"]


def _cuvil_engine(build, ids: np.ndarray):
    """A callable running Cuvil's import of the port (``build()`` -> IRModule), or why not."""
    try:
        compiled = build().compile()
    except Exception as error:  # an unsupported primitive or op: say which, keep the row
        return f"n/a ({type(error).__name__}: {str(error)[:60]})"
    return lambda: compiled(ids)


def jax_engines(name: str, model, ids: np.ndarray) -> dict:
    """engine name -> callable returning NumPy: ``jax.jit`` and Cuvil's import of that jaxpr."""
    import jax

    import cuvil

    weights = gpt2_weights(model)
    jitted = jax.jit(lambda t: gpt2_forward(jax.numpy, weights, t))
    jitted(ids).block_until_ready()  # compiles
    spec = jax.ShapeDtypeStruct(ids.shape, ids.dtype)
    return {
        "jax.jit": lambda: np.asarray(jitted(ids).block_until_ready()),
        "cuvil (jax)": _cuvil_engine(lambda: cuvil.compile_to_ir(jitted, spec), ids),
    }


def tensorflow_engines(name: str, model, ids: np.ndarray) -> dict:
    """engine name -> callable returning NumPy: ``tf.function`` without and with XLA, and
    Cuvil's import of the plain function."""
    import tensorflow as tf

    import cuvil

    weights = gpt2_weights(model)
    tensor = tf.constant(ids)
    functions = {
        label: tf.function(
            lambda t: gpt2_forward(tf.experimental.numpy, weights, t), jit_compile=jit
        )
        for label, jit in (("tf.function", False), ("tf.function xla", True))
    }
    engines = {}
    for label, function in functions.items():
        function(tensor)  # traces (and compiles with XLA)
        engines[label] = lambda function=function: function(tensor).numpy()
    spec = [tf.TensorSpec(ids.shape, tf.int32)]
    plain = functions["tf.function"]
    engines["cuvil (tf)"] = _cuvil_engine(
        lambda: cuvil.frontend.build_ir(model=plain, input_spec=spec), ids
    )
    return engines
