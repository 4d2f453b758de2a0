"""Equivalence oracles: `observe(hypothesis)` returns every word whose label the round saw
(the hypothesis is refuted by any it labels differently, accepted when none).

Trusted ones (exact target, labelled environment logs, the synthetic batch round; a person is
`regula.specs.person.PersonOracle`) pin their labels in the learner's cache; random testing
labels words with the teacher itself and is not trusted.
"""
from __future__ import annotations

import random

from .dfa import DFA
from .learning import Counterexample
from .ops import equivalent


class ExactOracle:
    """Knows the target: the shortest word where the hypothesis is wrong."""

    def __init__(self, target: DFA):
        self.target = target

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        same, word = equivalent(hypothesis, self.target)
        return [] if same else [Counterexample(tuple(word), self.target.accepts(word))]


class BatchOracle:
    """A synthetic environment round for the bench: `per_round` walks, each following the
    hypothesis's shortest path to acceptance with a random letter instead at rate `deviate`,
    up to `max_len` letters; every prefix of every walk comes back labelled by the target,
    as a rollout's events do. Rounds draw from one seeded stream, so a run is reproducible."""

    def __init__(self, target: DFA, per_round: int = 20, deviate: float = 0.3, max_len: int | None = None,
                 seed: int = 0):
        self.target, self.per_round, self.deviate = target, per_round, deviate
        self.max_len = max_len or 2 * target.size
        self.rng = random.Random(seed)

    def _walk(self, hypothesis: DFA) -> tuple:
        from .ops import shortest_accepted
        word: tuple = ()
        while len(word) < self.max_len:
            state = hypothesis.run(word)
            if state in hypothesis.accepting and self.rng.random() >= self.deviate:
                break
            plan = shortest_accepted(DFA(hypothesis.alphabet, hypothesis.delta, state, hypothesis.accepting))
            if plan and self.rng.random() >= self.deviate:
                word += plan[:1]
            else:
                word += (self.rng.choice(hypothesis.alphabet),)
        return word

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        seen: dict = {}
        for _ in range(self.per_round):
            walk = self._walk(hypothesis)
            for i in range(len(walk) + 1):
                seen.setdefault(walk[:i], self.target.accepts(walk[:i]))
        return [Counterexample(word, label) for word, label in seen.items()]


class TraceOracle:
    """Labelled traces (environment logs): every one, each round."""

    def __init__(self, traces):
        self.traces = sorted(((tuple(w), bool(label)) for w, label in traces), key=lambda t: (len(t[0]), t[0]))

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        return [Counterexample(word, label) for word, label in self.traces]


class RandomWordOracle:
    """Random testing against the teacher (untrusted labels)."""

    def __init__(self, alphabet, teacher, num_words: int = 500, max_len: int = 15, seed: int = 0):
        self.alphabet, self.teacher, self.num, self.max_len = list(alphabet), teacher, num_words, max_len
        self.rng = random.Random(seed)

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        """The first word found where the teacher and the hypothesis disagree, or none."""
        for _ in range(self.num):
            word = tuple(self.rng.choice(self.alphabet) for _ in range(self.rng.randint(1, self.max_len)))
            label = bool(self.teacher.member(word, 0))
            if hypothesis.accepts(word) != label:
                return [Counterexample(word, label, trusted=False)]
        return []


class WMethodOracle:
    """W-method conformance testing (AALpy's `WMethodEqOracle`) against the teacher: complete
    for targets with at most `max_states` states if the teacher were right (untrusted labels)."""

    def __init__(self, alphabet, teacher, max_states: int):
        from aalpy.oracles import WMethodEqOracle

        from .learning import word_sul
        self.teacher = teacher
        self.oracle = WMethodEqOracle(list(alphabet), word_sul(lambda w: bool(teacher.member(w, 0))),
                                      max_number_of_states=max_states)

    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        aal = hypothesis.to_aalpy()
        aal.compute_prefixes()  # AALpy's learners set these; a converted DFA has none yet
        cex = self.oracle.find_cex(aal)
        if cex is None:
            return []
        word = tuple(cex)
        return [Counterexample(word, bool(self.teacher.member(word, 0)), trusted=False)]
