"""The zoo's GPT-2 block and BERT layer written for JAX and TensorFlow, with the PyTorch weights.

One forward function per model serves both frameworks through their
NumPy-style namespaces (``jax.numpy`` and ``tensorflow.experimental.numpy``),
so the ports compute what ``zoo.GPT2Block`` (embeddings, a pre-LN causal
self-attention block with a GELU-tanh MLP, the final norm and the LM head)
and ``zoo.BertEncoderLayer`` (post-LN self-attention and an exact-GELU
feed-forward) do. ``bench_models.py`` times them beside PyTorch, ONNX
Runtime and Cuvil.
"""

from __future__ import annotations

import math

import numpy as np


def model_weights(model) -> dict:
    """The model's parameters as float32 NumPy arrays by their PyTorch names, and its heads."""
    weights = {k: v.detach().numpy().astype(np.float32) for k, v in model.state_dict().items()}
    weights["heads"] = model.attn.heads if hasattr(model, "attn") else model.heads
    return weights


def _layer_norm(xp, x, gamma, beta, eps=1e-5):
    mean = xp.mean(x, axis=-1, keepdims=True)
    var = xp.mean((x - mean) * (x - mean), axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + eps) * gamma + beta


def _linear(x, w, b=None):
    y = x @ w.T
    return y if b is None else y + b


def _attention(xp, q, k, v, heads: int, causal: bool):
    """Multi-head softmax attention of (batch, length, dim) projections, heads merged back."""
    batch, length, dim = q.shape
    size = dim // heads

    def split_heads(t):
        return xp.transpose(xp.reshape(t, (batch, length, heads, size)), (0, 2, 1, 3))

    q, k, v = (split_heads(t) for t in (q, k, v))
    scores = (q @ xp.transpose(k, (0, 1, 3, 2))) * (1.0 / math.sqrt(size))
    if causal:
        mask = np.tril(np.ones((length, length), dtype=bool))
        scores = xp.where(mask, scores, np.float32(-np.inf))
    scores = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
    attention = (scores / xp.sum(scores, axis=-1, keepdims=True)) @ v
    return xp.reshape(xp.transpose(attention, (0, 2, 1, 3)), (batch, length, dim))


def gpt2_forward(xp, erf, w: dict, ids):
    """``zoo.GPT2Block`` on ``ids`` (batch, length) with the NumPy-style namespace ``xp``."""
    length = ids.shape[1]
    dim = w["wte.weight"].shape[1]
    x = xp.take(w["wte.weight"], ids, axis=0) + w["wpe.weight"][:length]
    qkv = _linear(_layer_norm(xp, x, w["ln_1.weight"], w["ln_1.bias"]), *_pair(w, "attn.c_attn"))
    q, k, v = (qkv[..., i * dim : (i + 1) * dim] for i in range(3))
    y = _attention(xp, q, k, v, w["heads"], causal=True)
    x = x + _linear(y, *_pair(w, "attn.c_proj"))
    h = _linear(_layer_norm(xp, x, w["ln_2.weight"], w["ln_2.bias"]), *_pair(w, "mlp.0"))
    h = 0.5 * h * (1 + xp.tanh(math.sqrt(2 / math.pi) * (h + 0.044715 * h * h * h)))
    x = x + _linear(h, *_pair(w, "mlp.2"))
    return _linear(_layer_norm(xp, x, w["ln_f.weight"], w["ln_f.bias"]), w["lm_head.weight"])


def bert_forward(xp, erf, w: dict, hidden):
    """``zoo.BertEncoderLayer`` (inference) on ``hidden`` (batch, length, dim); ``erf`` is the
    framework's error function (exact GELU)."""
    q, k, v = (_linear(hidden, *_pair(w, name)) for name in ("query", "key", "value"))
    context = _attention(xp, q, k, v, w["heads"], causal=False)
    hidden = hidden + _linear(context, *_pair(w, "output"))
    hidden = _layer_norm(xp, hidden, w["ln_attn.weight"], w["ln_attn.bias"], eps=1e-12)
    h = _linear(hidden, *_pair(w, "intermediate"))
    h = 0.5 * h * (1 + erf(h * (1 / math.sqrt(2))))
    hidden = hidden + _linear(h, *_pair(w, "ffn_output"))
    return _layer_norm(xp, hidden, w["ln_ffn.weight"], w["ln_ffn.bias"], eps=1e-12)


def _pair(w: dict, name: str):
    return w[f"{name}.weight"], w[f"{name}.bias"]


FORWARD = {"gpt2": gpt2_forward, "bert": bert_forward}
PORTED = tuple(FORWARD)


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

    weights, forward = model_weights(model), FORWARD[name]
    jitted = jax.jit(lambda t: forward(jax.numpy, jax.scipy.special.erf, weights, t))
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

    weights, forward = model_weights(model), FORWARD[name]
    tensor = tf.constant(ids)
    functions = {
        label: tf.function(
            lambda t: forward(tf.experimental.numpy, tf.math.erf, weights, t), jit_compile=jit
        )
        for label, jit in (("tf.function", False), ("tf.function xla", True))
    }
    engines = {}
    for label, function in functions.items():
        function(tensor)  # traces (and compiles with XLA)
        engines[label] = lambda function=function: function(tensor).numpy()
    spec = [tf.TensorSpec(ids.shape, tf.as_dtype(ids.dtype))]
    plain = functions["tf.function"]
    engines["cuvil (tf)"] = _cuvil_engine(
        lambda: cuvil.frontend.build_ir(model=plain, input_spec=spec), ids
    )
    return engines
