"""BERT's encoder (transformers' ``BertModel`` in eval mode) as numpy arithmetic.

Why: importing torch and sentence-transformers takes seconds, longer than a first write should wait; numpy is
imported anyway (by the Neo4j driver), and the forward pass of a small BERT is a few matrix products that
OpenBLAS does about as fast as torch does on a CPU (the figures:
docs/performance.md#bench_first_writepy-the-first-write-and-the-numpy-embedding-runtime).  Only what a
post-LN, absolute-position BERT with an exact-erf GELU computes is implemented;
:mod:`kg_neo4j.embeddings.numpy_support` refuses every other configuration, so the caller falls back to
sentence-transformers.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from kg_neo4j.embeddings.numpy_support import BertConfig, Unsupported, weight_names

F32 = npt.NDArray[np.float32]

#: Additive attention bias for padded keys: exp() of it is exactly 0, and adding a logit to it
#: cannot overflow float32.
_MASKED = np.float32(-1e30)


#: Abramowitz & Stegun 7.1.26: erfc(z) = t (a1 + t (a2 + ...)) exp(-z^2), t = 1 / (1 + P z), z >= 0,
#: absolute error below 1.5e-7 (float32's own rounding is 6e-8 relative).
_AS_P = np.float32(0.3275911)
_AS_A = tuple(np.float32(c) for c in (1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592))
_INV_SQRT2 = np.float32(1.0 / math.sqrt(2.0))


def gelu(x: F32) -> F32:
    """BERT's exact GELU ``x/2 (1 + erf(x/sqrt 2))``, float32 throughout (``x`` is overwritten).

    numpy has no erf (scipy's would add its import time to the first write, and is slower than
    this); the tanh approximation would change the vectors.  Written branch-free, as
    ``max(x, 0) - |x|/2 erfc(|x|/sqrt 2)`` (masked ufuncs are much slower), and called on
    passes of at most 1,024 tokens (numpy_encoder.MAX_TOKENS) so that its ~20 passes stay in cache."""
    z = np.abs(x)
    half_abs = z * np.float32(0.5)
    z *= _INV_SQRT2
    t = z * _AS_P
    t += np.float32(1.0)
    np.divide(np.float32(1.0), t, out=t)
    poly = t * _AS_A[0]
    for c in _AS_A[1:]:
        poly += c
        poly *= t
    np.square(z, out=z)
    np.negative(z, out=z)
    np.exp(z, out=z)
    poly *= z  # erfc(|x| / sqrt 2)
    poly *= half_abs
    np.maximum(x, np.float32(0.0), out=x)
    x -= poly
    return x


def _layer_norm(x: F32, weight: F32, bias: F32, eps: float) -> F32:
    mean = x.mean(axis=-1, keepdims=True)
    centred = x - mean
    var = np.mean(centred * centred, axis=-1, keepdims=True)
    out: F32 = centred / np.sqrt(var + np.float32(eps)) * weight + bias
    return out


class _Layer:
    """One encoder layer's weights, laid out for ``x @ W``: query, key and value fused into one
    product, and the attention scale 1/sqrt(head size) folded into the query's weights."""

    def __init__(self, t: dict[str, F32], p: str, scale: np.float32) -> None:
        q_w, q_b = t[f"{p}attention.self.query.weight"] * scale, t[f"{p}attention.self.query.bias"] * scale
        self.qkv_w = np.ascontiguousarray(
            np.concatenate(
                [q_w, t[f"{p}attention.self.key.weight"], t[f"{p}attention.self.value.weight"]], axis=0
            ).T
        )
        self.qkv_b = np.concatenate(
            [q_b, t[f"{p}attention.self.key.bias"], t[f"{p}attention.self.value.bias"]]
        )
        self.out_w = np.ascontiguousarray(t[f"{p}attention.output.dense.weight"].T)
        self.out_b = np.array(t[f"{p}attention.output.dense.bias"])
        self.ln1 = (
            np.array(t[f"{p}attention.output.LayerNorm.weight"]),
            np.array(t[f"{p}attention.output.LayerNorm.bias"]),
        )
        self.up_w = np.ascontiguousarray(t[f"{p}intermediate.dense.weight"].T)
        self.up_b = np.array(t[f"{p}intermediate.dense.bias"])
        self.down_w = np.ascontiguousarray(t[f"{p}output.dense.weight"].T)
        self.down_b = np.array(t[f"{p}output.dense.bias"])
        self.ln2 = (np.array(t[f"{p}output.LayerNorm.weight"]), np.array(t[f"{p}output.LayerNorm.bias"]))


class NumpyBert:
    """The encoder's last hidden state, mean-pooled over the attended tokens.

    The weights are copied out of the file's memory map (as float32), except the word-embedding
    table, which stays mapped (a text reads only its own rows)."""

    def __init__(self, cfg: BertConfig, tensors: dict[str, F32]) -> None:
        missing = [n for n in weight_names(cfg) if n not in tensors]
        if missing:
            raise Unsupported(f"the weights lack {len(missing)} tensor(s), e.g. {missing[0]!r}")
        for name in weight_names(cfg):
            if tensors[name].dtype not in (np.float32, np.float16):
                raise Unsupported(
                    f"tensor {name!r} is {tensors[name].dtype}; the numpy runtime reads float32 or float16"
                )
        self.cfg = cfg
        self.head_dim = cfg.hidden // cfg.heads
        scale = np.float32(1.0 / math.sqrt(self.head_dim))
        # float16 weights (the packaged model's) are upcast to float32 here, once; all arithmetic is
        # float32.  The word table stays as stored, memory-mapped; its rows are upcast as a text reads them.
        self.words = tensors["embeddings.word_embeddings.weight"]
        tensors = {
            n: t.astype(np.float32) for n, t in tensors.items() if n != "embeddings.word_embeddings.weight"
        }
        self.positions = np.array(tensors["embeddings.position_embeddings.weight"])
        self.types = np.array(tensors["embeddings.token_type_embeddings.weight"])
        self.ln0 = (
            np.array(tensors["embeddings.LayerNorm.weight"]),
            np.array(tensors["embeddings.LayerNorm.bias"]),
        )
        self.layers = [_Layer(tensors, f"encoder.layer.{i}.", scale) for i in range(cfg.layers)]

    def mean_pooled(
        self, ids: npt.NDArray[np.int64], type_ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]
    ) -> F32:
        """(batch, hidden) means of the last hidden state over tokens with ``mask`` 1, as
        sentence-transformers' mean pooling computes them.  Callers keep batch x length to a few
        thousand tokens (cache-sized intermediates; see numpy_encoder.MAX_TOKENS)."""
        batch, length = ids.shape
        h, nh, hd, eps = self.cfg.hidden, self.cfg.heads, self.head_dim, self.cfg.eps
        x = self.words[ids].astype(np.float32) + self.positions[:length][None, :, :] + self.types[type_ids]
        x = _layer_norm(x.reshape(batch * length, h), *self.ln0, eps)
        padded = not bool(mask.all())
        bias = (
            np.where(mask[:, None, None, :] > 0, np.float32(0.0), _MASKED).astype(np.float32)
            if padded
            else None
        )
        for layer in self.layers:
            qkv = x @ layer.qkv_w
            qkv += layer.qkv_b
            heads = qkv.reshape(batch, length, 3, nh, hd).transpose(2, 0, 3, 1, 4)  # (3, B, nh, L, hd)
            scores = heads[0] @ heads[1].transpose(0, 1, 3, 2)  # (B, nh, L, L), already scaled
            if bias is not None:
                scores += bias
            scores -= scores.max(axis=-1, keepdims=True)
            np.exp(scores, out=scores)
            total = scores.sum(axis=-1, keepdims=True)
            ctx = scores @ heads[2]
            ctx /= total  # softmax's division, on (L, hd) instead of (L, L)
            y = ctx.transpose(0, 2, 1, 3).reshape(batch * length, h) @ layer.out_w
            y += layer.out_b
            y += x
            x = _layer_norm(y, *layer.ln1, eps)
            up = x @ layer.up_w
            up += layer.up_b
            y = gelu(up) @ layer.down_w
            y += layer.down_b
            y += x
            x = _layer_norm(y, *layer.ln2, eps)
        weights = mask.astype(np.float32)[:, :, None]
        summed = (x.reshape(batch, length, h) * weights).sum(axis=1)
        pooled: F32 = summed / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return pooled
