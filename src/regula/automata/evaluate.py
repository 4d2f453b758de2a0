"""Learning under noise on random targets: exact recovery, held-out agreement, cost.

Each run draws a random target with AALpy's generator, wraps it in a noisy teacher, and
learns it with an exact equivalence oracle, once with the noise-handling learner and once
with plain L* (AALpy's own cache, one asking per word, no repair) as the baseline.
"""
from __future__ import annotations

import itertools
import random
import time

from regula.errors import RegulaError

from .dfa import DFA
from .learning import learn, learn_plain_lstar
from .oracles import ExactOracle
from .ops import equivalent
from .teachers import NoisyTeacher


def random_target(states: int, letters: int, seed: int) -> DFA:
    from aalpy.utils import generate_random_dfa
    random.seed(seed)  # AALpy's generator draws from the global RNG
    alphabet = [chr(ord("a") + i) for i in range(letters)]
    return DFA.from_aalpy(generate_random_dfa(num_states=states, alphabet=alphabet,
                                              num_accepting_states=max(1, states // 4)))


def held_out_agreement(a: DFA, b: DFA, seed: int, words: int = 1000, max_len: int = 30) -> float:
    rng = random.Random(seed)
    hits = 0
    for _ in range(words):
        w = tuple(rng.choice(a.alphabet) for _ in range(rng.randint(0, max_len)))
        hits += a.accepts(w) == b.accepts(w)
    return hits / words


def one_run(states: int, letters: int, noise: float, kind: str, seed: int, method: str,
            votes: int, max_queries: int) -> dict:
    target = random_target(states, letters, seed)
    teacher = NoisyTeacher(target.accepts, noise, kind, seed)
    row = {"states": states, "letters": letters, "noise": noise, "kind": kind, "seed": seed, "method": method}
    start = time.perf_counter()
    try:
        if method == "plain_lstar":
            result = learn_plain_lstar(target.alphabet, teacher, ExactOracle(target), max_rounds=200,
                                       max_queries=max_queries)
        else:
            # Votes only help against independent errors; a persistent teacher repeats itself.
            result = learn(target.alphabet, teacher, ExactOracle(target), votes=votes if kind == "independent" else 1,
                           max_queries=max_queries)
    except (RegulaError, SystemExit, RecursionError) as exc:
        return {**row, "recovered": False, "agreement": None, "queries": teacher.asked, "rounds": None,
                "seconds": round(time.perf_counter() - start, 3), "error": str(exc)[:120]}
    return {**row, "recovered": bool(equivalent(result.dfa, target)[0]),
            "agreement": held_out_agreement(result.dfa, target, seed),
            "queries": result.teacher_queries, "rounds": result.rounds, "learned_states": result.dfa.size,
            "seconds": round(time.perf_counter() - start, 3), "error": ""}


def evaluate(sizes=(20,), letters=(5,), noises=(0.0, 0.1), kinds=("independent", "persistent"),
             targets: int = 20, votes: int = 5, max_queries: int = 30_000, methods=("regula", "plain_lstar"),
             progress=None):
    import pandas as pd
    rows = []
    grid = list(itertools.product(sizes, letters, noises, kinds, range(targets), methods))
    for i, (n, k, noise, kind, seed, method) in enumerate(grid, 1):
        if noise == 0 and kind == "persistent":
            continue  # the same runs as independent at noise 0
        rows.append(one_run(n, k, noise, kind, seed, method, votes, max_queries))
        if progress:
            progress(i, len(grid))
    return pd.DataFrame(rows)


def summary(table, seconds: bool = False):
    """One row per cell and method: runs, exact recovery, held-out agreement, median queries and
    rounds; with `seconds`, the median wall time (benchmarks only: it is not reproducible, so no
    tracked artifact holds it)."""
    grouped = table.groupby(["states", "letters", "noise", "kind", "method"], as_index=False)
    columns = dict(runs=("recovered", "size"), recovered=("recovered", "mean"),
                   agreement=("agreement", "mean"), queries=("queries", "median"), rounds=("rounds", "median"))
    if seconds:
        columns["seconds"] = ("seconds", "median")
    return grouped.agg(**columns).round({"recovered": 3, "agreement": 4, "seconds": 3})
