"""RAG's alphabet construction scored against annotated targets (CEDAR Appendix A.4.3, Table 4).

Per target, with A^t its annotated symbols and Â the retrieved ones:
absolute accuracy |A^t ∩ Â| / |A^t|, overlap coefficient |A^t ∩ Â| / min(|A^t|, |Â|), and the
cosine between X (X_i = 1 when the retrieved Â_i is in A^t) and D (Â_i's embedding similarity
to the task, rounded to `embed.DECIMALS`): X·D / (|X| |D|), 0 when X or D is all zeros, rounded
the same way. Each is also taken per kind (actions, objects, events), over the targets whose A^t
has that kind. The summary gives the mean, the std (n - 1) and the standard error std / sqrt(n),
as the paper's table reports "average ± standard error", from the rounded values (4 decimals).
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from typing import Callable

from .alphabet import KINDS, GlobalAlphabet, SubAlphabet
from .embed import rounded

METRICS = ("accuracy", "overlap", "cosine")
SCOPES = ("all",) + KINDS


@dataclass(frozen=True)
class Target:
    id: str
    text: str
    sub: SubAlphabet
    goal: str | None = None  # the achievement a plan-checked target asks for


@dataclass(frozen=True)
class Retrieved:
    sub: SubAlphabet
    similarity: dict  # symbol -> its embedding cosine to the task (D)


def targets(env: str) -> list[Target]:
    """The environment's annotated targets (`EnvSpec.alphabet_targets()`), symbols checked."""
    from regula import envs
    alphabet = GlobalAlphabet.of(env)
    return [Target(t["id"], t["text"], alphabet.check(SubAlphabet.from_json({k: t.get(k, ()) for k in KINDS})),
                   t.get("goal")) for t in envs.get(env).alphabet_targets()]


def halves(items: list) -> tuple[list, list]:
    """(dev, eval): even positions and odd ones, the split tuning uses."""
    return items[0::2], items[1::2]


def scores(target: set, retrieved: list[str], similarity: list[float]) -> dict:
    """The three metrics of one target over one scope; None where undefined (A^t empty)."""
    hit = [1.0 if s in target else 0.0 for s in retrieved]
    common = sum(hit)
    nx, nd = math.sqrt(sum(hit)), math.sqrt(sum(d * d for d in similarity))
    return {"accuracy": common / len(target) if target else None,
            "overlap": common / min(len(target), len(retrieved)) if target and retrieved else None,
            "cosine": rounded(sum(x * d for x, d in zip(hit, similarity)) / (nx * nd) if nx and nd else 0.0)
            if target else None}


def evaluate(items: list[Target], retrieve: Callable[[str], Retrieved]) -> tuple[list[dict], dict]:
    """(rows, summary): one row per target (its metrics per scope and what was retrieved);
    summary[scope][metric] = {mean, std, se, n}."""
    rows = []
    for t in items:
        got = retrieve(t.text)
        row = {"id": t.id, "text": t.text, "target": t.sub.to_json(), "retrieved": got.sub.to_json()}
        for scope in SCOPES:
            kinds = KINDS if scope == "all" else (scope,)
            want = {s for k in kinds for s in getattr(t.sub, k)}
            have = [s for k in kinds for s in getattr(got.sub, k)]
            row[scope] = scores(want, have, [got.similarity[s] for s in have])
        rows.append(row)
    return rows, summarize(rows)


def summarize(rows: list[dict]) -> dict:
    out: dict = {}
    for scope in SCOPES:
        out[scope] = {}
        for m in METRICS:
            values = [r[scope][m] for r in rows if r[scope][m] is not None]
            n = len(values)
            std = statistics.stdev(values) if n > 1 else None
            out[scope][m] = {"mean": _r(statistics.fmean(values) if n else None), "std": _r(std),
                             "se": _r(std / math.sqrt(n) if std is not None else None), "n": n}
    return out


def _r(x: float | None) -> float | None:
    return None if x is None else round(x, 4)
