"""The environment as CEDAR's equivalence oracle: a round plays the hypothesis as a policy on a
batch of worlds (`rollout.play`) and returns every word it saw with the world's label.

Round r plays worlds r*B, ..., r*B + B - 1 of the oracle's worlds (cycling), so successive
rounds see new worlds. A rollout's random choices are seeded by the hypothesis and the world,
which makes the EQ cache exact: the same hypothesis on the same world is read back, not played.
"""
from __future__ import annotations

import random
from dataclasses import asdict

from regula import envs
from regula.automata.dfa import DFA
from regula.automata.learning import Counterexample
from regula.params import fingerprint

from .caches import EQCache, hypothesis_key
from .rollout import Budget, play

CRAFTER = envs.get("crafter")


class CrafterEquivalence:
    def __init__(self, goal: str, worlds, per_round: int, budget: Budget, env: dict, cache: EQCache):
        self.goal, self.worlds, self.per_round = goal, tuple(worlds), per_round
        self.budget, self.env, self.cache = budget, env, cache
        # What a rollout depends on besides the hypothesis and the world: a changed setting
        # never reads another's rollouts.
        self.setting = fingerprint(goal, env, asdict(budget))[:8]
        self.rounds = 0
        self.played = self.replayed = 0
        self.steps_played = self.steps_seen = 0  # primitive steps: stepped now; of every rollout used
        self.last: list[dict] = []  # the last round's rollouts

    def rollout(self, hypothesis: DFA, world: int) -> dict:
        key = f"{self.setting}-{hypothesis_key(hypothesis)}"
        record = self.cache.get(key, world)
        if record is not None:
            self.replayed += 1
        else:
            w = CRAFTER.from_params(self.env, world)
            record = play(w, hypothesis, self.goal, self.budget, random.Random(f"{key}:{world}"))
            self.played += 1
            self.steps_played += record["steps"]
            self.cache.put(key, world, record)
        self.steps_seen += record["steps"]
        return record

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        start = self.rounds * self.per_round
        self.rounds += 1
        seeds = [self.worlds[(start + i) % len(self.worlds)] for i in range(self.per_round)]
        self.last = [self.rollout(hypothesis, s) for s in seeds]
        self.cache.save()
        return [Counterexample(tuple(r["word"]), r["label"]) for r in self.last]
