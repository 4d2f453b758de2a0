"""Random formulas and traces, for the differential test and the benchmark."""
from __future__ import annotations

import random

from .formula import FALSE, TRUE, ap, binary, unary

UNARY_OPS = ("not", "X", "Xs", "F", "G")
BINARY_OPS = ("and", "or", "implies", "equiv", "xor", "U", "R", "W", "M")


def random_formula(rng: random.Random, atoms=("a", "b", "c"), depth: int = 4):
    if depth <= 0 or rng.random() < 0.2:
        r = rng.random()
        return TRUE if r < 0.04 else FALSE if r < 0.08 else ap(rng.choice(atoms))
    if rng.random() < 0.4:
        return unary(rng.choice(UNARY_OPS), random_formula(rng, atoms, depth - 1))
    return binary(rng.choice(BINARY_OPS), random_formula(rng, atoms, depth - 1),
                  random_formula(rng, atoms, depth - 1))


def random_trace(rng: random.Random, atoms=("a", "b", "c"), max_len: int = 8):
    return [frozenset(a for a in atoms if rng.random() < 0.5) for _ in range(rng.randint(1, max_len))]
