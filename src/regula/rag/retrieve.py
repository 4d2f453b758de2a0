"""Retrieval of symbols for a task text (CEDAR §3.1 "Sub-alphabet construction", Appendix A.4).

A symbol's document is its name (underscores as spaces) and its description. Its score for a
task is (1 - w) * cosine + w * lexical: cosine between all-MiniLM-L6-v2 embeddings of the task
and the document, lexical the BM25 (Okapi, `rank_bm25`) score of the task's words against the
documents of the same candidates, divided by the best of them (so in [0, 1]; 0 when no word is
shared), w = `rag.lexical_weight`. Score and cosine are rounded to `embed.DECIMALS`, and symbols
are ranked by the rounded score, then by name: a near-tie falls the same way on every CPU.
Words: lowercase runs of letters and digits, a plural `s` dropped ("stones" is "stone").
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np
from rank_bm25 import BM25Okapi

from .alphabet import GlobalAlphabet
from .embed import model, rounded

NOUN_KINDS = ("objects", "events")


@dataclass(frozen=True)
class Scored:
    name: str
    kind: str  # actions | objects | events
    description: str
    score: float  # the combined score ranking uses (rounded)
    cosine: float  # the embedding similarity alone (Table 4's D; rounded)


def words(text: str) -> list[str]:
    return [w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w
            for w in re.findall(r"[a-z0-9]+", text.lower())]


def document(name: str, description: str) -> str:
    return f"{name.replace('_', ' ')}: {description}"


class Retriever:
    """Scores Σ_global's symbols of some kinds against a task (`rank`)."""

    def __init__(self, alphabet: GlobalAlphabet, lexical_weight: float, encoder=None):
        self.alphabet, self.weight = alphabet, float(lexical_weight)
        self.encoder = encoder or model()
        self._indexes: dict[tuple, tuple] = {}

    def _index(self, kinds: tuple[str, ...]):
        if kinds not in self._indexes:
            names = [n for k in kinds for n in self.alphabet.names(k)]
            docs = [document(n, self.alphabet.describe(n)) for n in names]
            self._indexes[kinds] = (names, self.encoder.encode(docs), BM25Okapi([words(d) for d in docs]))
        return self._indexes[kinds]

    def rank(self, task: str, kinds: tuple[str, ...]) -> list[Scored]:
        """Every symbol of `kinds`, best first by the rounded score (ties by name)."""
        names, vectors, bm25 = self._index(tuple(kinds))
        cosine = vectors @ self.encoder.encode([task])[0]
        lexical = bm25.get_scores(words(task))
        top = lexical.max() if len(lexical) else 0.0
        lexical = lexical / top if top > 0 else np.zeros_like(lexical)
        score = (1 - self.weight) * cosine + self.weight * lexical
        out = [Scored(n, self.alphabet.kind(n), self.alphabet.describe(n), rounded(s), rounded(c))
               for n, s, c in zip(names, score, cosine)]
        return sorted(out, key=lambda s: (-s.score, s.name))
