"""Equivalence oracles: each returns a counterexample with its label, or None.

Trusted ones (exact target, labelled environment logs, a person) pin their labels in the
learner's cache; random testing labels words with the
teacher itself and is not trusted.
"""
from __future__ import annotations

import json
import random
from pathlib import Path

from regula.errors import RegulaError

from .dfa import DFA
from .learning import Counterexample
from .ops import equivalent


class ExactOracle:
    """Knows the target: the shortest word where the hypothesis is wrong."""

    def __init__(self, target: DFA):
        self.target = target

    def counterexample(self, hypothesis: DFA):
        same, word = equivalent(hypothesis, self.target)
        return None if same else Counterexample(tuple(word), self.target.accepts(word))


class TraceOracle:
    """Labelled traces (environment logs): the shortest one the hypothesis gets wrong."""

    def __init__(self, traces):
        self.traces = sorted(((tuple(w), bool(label)) for w, label in traces), key=lambda t: (len(t[0]), t[0]))

    def counterexample(self, hypothesis: DFA):
        for word, label in self.traces:
            if hypothesis.accepts(word) != label:
                return Counterexample(word, label)
        return None


class RandomWordOracle:
    """Random testing against the teacher (untrusted labels)."""

    def __init__(self, alphabet, teacher, num_words: int = 500, max_len: int = 15, seed: int = 0):
        self.alphabet, self.teacher, self.num, self.max_len = list(alphabet), teacher, num_words, max_len
        self.rng = random.Random(seed)

    def counterexample(self, hypothesis: DFA):
        for _ in range(self.num):
            word = tuple(self.rng.choice(self.alphabet) for _ in range(self.rng.randint(1, self.max_len)))
            label = bool(self.teacher.member(word, 0))
            if hypothesis.accepts(word) != label:
                return Counterexample(word, label, trusted=False)
        return None


class WMethodOracle:
    """W-method conformance testing (AALpy's `WMethodEqOracle`) against the teacher: complete
    for targets with at most `max_states` states if the teacher were right (untrusted labels)."""

    def __init__(self, alphabet, teacher, max_states: int):
        from aalpy.oracles import WMethodEqOracle

        from .learning import word_sul
        self.teacher = teacher
        self.oracle = WMethodEqOracle(list(alphabet), word_sul(lambda w: bool(teacher.member(w, 0))),
                                      max_number_of_states=max_states)

    def counterexample(self, hypothesis: DFA):
        aal = hypothesis.to_aalpy()
        aal.compute_prefixes()  # AALpy's learners set these; a converted DFA has none yet
        cex = self.oracle.find_cex(aal)
        if cex is None:
            return None
        word = tuple(cex)
        return Counterexample(word, bool(self.teacher.member(word, 0)), trusted=False)


class PersonOracle:
    """Counterexamples from a person: a JSON file of [[symbols...], label] pairs, or typed at a
    prompt as `sym sym sym ; yes|no` (an empty line accepts the hypothesis)."""

    def __init__(self, alphabet, path: str | Path | None = None, read=input, write=print):
        self.alphabet = set(alphabet)
        self.read, self.write = read, write
        self.file = None
        if path is not None:
            try:
                pairs = json.loads(Path(path).read_text())
            except (OSError, json.JSONDecodeError) as exc:
                raise RegulaError(f"{path}: cannot read counterexamples ({exc})") from None
            self.file = TraceOracle([(self._check(w, path), label) for w, label in pairs])

    def _check(self, word, where) -> tuple:
        bad = [a for a in word if a not in self.alphabet]
        if bad:
            from regula.errors import UnknownNameError
            raise UnknownNameError("symbol", bad[0], self.alphabet)
        return tuple(word)

    def counterexample(self, hypothesis: DFA):
        if self.file is not None:
            return self.file.counterexample(hypothesis)
        self.write(hypothesis.to_dot())
        while True:
            line = self.read("counterexample (symbols ; yes|no), empty to accept: ").strip()
            if not line:
                return None
            try:
                symbols, answer = line.rsplit(";", 1)
                word = self._check(symbols.split(), "prompt")
                label = {"yes": True, "no": False}[answer.strip().lower()]
            except (ValueError, KeyError):
                self.write("write the symbols, a semicolon, then yes or no")
                continue
            except RegulaError as exc:
                self.write(str(exc))
                continue
            if hypothesis.accepts(word) == label:
                self.write("the hypothesis already answers that; give a word it gets wrong")
                continue
            return Counterexample(word, label)
