"""A small Transformer encoder block written in NumPy (seq 64, d_model 128, 4 heads, float32)."""

import math

import numpy as np

import cuvil

SEQ, D_MODEL, HEADS, D_FF = 64, 128, 4, 512


def layer_norm(x, gamma, beta, eps=1e-5):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * gamma + beta


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def multi_head_attention(x, wq, wk, wv, wo, heads):
    seq, d_model = x.shape
    d_head = d_model // heads

    def split_heads(t):  # (seq, d_model) -> (heads, seq, d_head)
        return t.reshape(seq, heads, d_head).transpose(1, 0, 2)

    q, k, v = split_heads(x @ wq), split_heads(x @ wk), split_heads(x @ wv)
    scores = (q @ k.transpose(0, 2, 1)) * (1.0 / math.sqrt(d_head))
    context = softmax(scores, axis=-1) @ v
    return context.transpose(1, 0, 2).reshape(seq, d_model) @ wo


@cuvil.jit(target="cpu", enable_fusion=True)
def transformer_block(x, wq, wk, wv, wo, ln1_gamma, ln1_beta, w1, b1, w2, b2, ln2_gamma, ln2_beta):
    h = layer_norm(x + multi_head_attention(x, wq, wk, wv, wo, HEADS), ln1_gamma, ln1_beta)
    ffn = cuvil.gelu(h @ w1 + b1) @ w2 + b2
    return layer_norm(h + ffn, ln2_gamma, ln2_beta)


def make_inputs():
    """Deterministic float32 activations and weights (scaled by 1/sqrt(fan_in))."""
    rng = np.random.default_rng(0)

    def weight(fan_in, fan_out):
        w = rng.standard_normal((fan_in, fan_out), dtype=np.float32)
        return w / np.float32(math.sqrt(fan_in))

    def vector(n, center):
        return (center + 0.1 * rng.standard_normal(n)).astype(np.float32)

    x = rng.standard_normal((SEQ, D_MODEL), dtype=np.float32)
    wq, wk, wv, wo = (weight(D_MODEL, D_MODEL) for _ in range(4))
    ln1_gamma, ln1_beta = vector(D_MODEL, 1.0), vector(D_MODEL, 0.0)
    w1, b1 = weight(D_MODEL, D_FF), vector(D_FF, 0.0)
    w2, b2 = weight(D_FF, D_MODEL), vector(D_MODEL, 0.0)
    ln2_gamma, ln2_beta = vector(D_MODEL, 1.0), vector(D_MODEL, 0.0)
    return x, wq, wk, wv, wo, ln1_gamma, ln1_beta, w1, b1, w2, b2, ln2_gamma, ln2_beta


def reference(x, wq, wk, wv, wo, ln1_gamma, ln1_beta, w1, b1, w2, b2, ln2_gamma, ln2_beta):
    """The block in float64, attention computed head by head, GELU with math.erf."""
    args = [a.astype(np.float64) for a in (x, wq, wk, wv, wo, ln1_gamma, ln1_beta)]
    x, wq, wk, wv, wo, g1, be1 = args
    w1, b1, w2, b2, g2, be2 = (a.astype(np.float64) for a in (w1, b1, w2, b2, ln2_gamma, ln2_beta))
    d_head = D_MODEL // HEADS

    def norm(t, gamma, beta):
        centered = t - t.mean(axis=1, keepdims=True)
        return centered / np.sqrt((centered**2).mean(axis=1, keepdims=True) + 1e-5) * gamma + beta

    heads = []
    for head in range(HEADS):
        cols = slice(head * d_head, (head + 1) * d_head)
        q, k, v = x @ wq[:, cols], x @ wk[:, cols], x @ wv[:, cols]
        scores = q @ k.T / math.sqrt(d_head)
        weights = np.exp(scores - scores.max(axis=1, keepdims=True))
        heads.append(weights / weights.sum(axis=1, keepdims=True) @ v)
    h = norm(x + np.concatenate(heads, axis=1) @ wo, g1, be1)
    pre = h @ w1 + b1
    erf = np.vectorize(math.erf, otypes=[np.float64])
    ffn = (0.5 * pre * (1.0 + erf(pre / math.sqrt(2.0)))) @ w2 + b2
    return norm(h + ffn, g2, be2).astype(np.float32)


def main():
    inputs = make_inputs()
    result = transformer_block(*inputs)
    error = np.max(np.abs(result - reference(*inputs)))
    print(f"transformer_block: output {result.shape} {result.dtype}, max abs error {error:.3e}")
    reason = cuvil.last_fallback_reason(transformer_block)
    if reason:
        print(f"(ran as plain NumPy: {reason})")


if __name__ == "__main__":
    main()
