"""Active DFA learning on AALpy that survives a noisy teacher.

The learner owns the membership-query cache; AALpy runs with its own cache off and asks
through a SUL that reads ours. Two kinds of teacher error are handled:

* independent (a fresh wrong answer with some probability at each asking): each new word is
  asked up to `votes` times (sample indices 0, 1, ..., so an LLM teacher's repeats are
  cached) and the majority kept, stopping as soon as it is decided;
* persistent (the same wrong answer every time for some words, which voting cannot fix):
  a counterexample from a trusted equivalence oracle carries the word's true label and is
  pinned in the cache; when it contradicts a cached answer, the cache is repaired and
  AALpy restarts on the repaired cache (its observation table holds the wrong answer). The
  restart asks the teacher nothing it was asked before. (LAPR-style consistency.)

Angluin's counterexample handling (all prefixes into the table) makes every later
hypothesis agree with each pinned counterexample, so the rounds make progress even when
other cached answers are still wrong. AALpy stops on contradicting answers with
`SystemExit`; with its cache off it never sees one, and a stray one is caught here.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Protocol

from regula.errors import RegulaError
from regula.roles import Teacher

from .dfa import DFA


class LearningError(RegulaError):
    """Learning stopped without a hypothesis the oracle accepts; the message says why."""


@dataclass
class Counterexample:
    word: tuple
    label: bool  # the word's true membership, as the oracle saw it
    trusted: bool = True  # environment, person or exact oracle; False when the teacher labelled it


class Equivalence(Protocol):
    def counterexample(self, hypothesis: DFA) -> Counterexample | None: ...


@dataclass
class LearnResult:
    dfa: DFA
    rounds: int  # equivalence queries
    membership_words: int  # distinct words asked
    teacher_queries: int  # askings, votes included
    repairs: int  # cached answers overturned by counterexamples
    restarts: int
    seconds: float
    conflicts: list = field(default_factory=list)


class _Restart(Exception):
    pass


def word_sul(member: Callable[[tuple], bool]):
    """An AALpy SUL whose output after each letter is `member(word so far)`."""
    from aalpy.base import SUL

    class WordSUL(SUL):
        def pre(self):
            self.word = []

        def post(self):
            pass

        def step(self, letter):
            if letter is not None:
                self.word.append(letter)
            return member(tuple(self.word))

    return WordSUL()


class Learner:
    # KV is the default: it asks far fewer words than L*, so far fewer wrong answers enter the
    # cache, and each repair costs a cheap restart (measured: 20-state targets at persistent
    # noise 0.1, KV 10/10 exact, L* 0/10).
    def __init__(self, alphabet, teacher: Teacher, equivalence: Equivalence, algorithm: str = "kv",
                 votes: int = 1, max_queries: int = 30_000, max_rounds: int = 5_000, max_restarts: int = 5_000):
        if algorithm not in ("lstar", "kv"):
            from regula.errors import UnknownNameError
            raise UnknownNameError("learning algorithm", algorithm, ["kv", "lstar"])
        if votes < 1 or votes % 2 == 0:
            raise RegulaError(f"votes must be odd and >= 1, got {votes}")
        self.alphabet = list(alphabet)
        self.teacher, self.equivalence = teacher, equivalence
        self.algorithm, self.votes = algorithm, votes
        self.max_queries, self.max_rounds, self.max_restarts = max_queries, max_rounds, max_restarts
        self.cache: dict[tuple, bool] = {}
        self.pinned: set[tuple] = set()
        self.teacher_queries = self.rounds = self.repairs = self.restarts = 0
        self.conflicts: list = []

    # -- membership ------------------------------------------------------------------------
    def member(self, word) -> bool:
        word = tuple(word)
        got = self.cache.get(word)
        if got is not None:
            return got
        need = self.votes // 2 + 1
        yes = no = 0
        sample = 0
        while yes < need and no < need:  # sequential majority: stop once decided
            if self.teacher_queries >= self.max_queries:
                raise LearningError(f"membership-query budget of {self.max_queries} spent "
                                    f"after {self.rounds} rounds")
            self.teacher_queries += 1
            if self.teacher.member(word, sample):
                yes += 1
            else:
                no += 1
            sample += 1
        self.cache[word] = yes > no
        return self.cache[word]

    # -- equivalence -------------------------------------------------------------------------
    def _find_cex(self, hypothesis) -> tuple | None:
        self.rounds += 1
        if self.rounds > self.max_rounds:
            raise LearningError(f"round budget of {self.max_rounds} spent; last conflicts: {self.conflicts[-5:]}")
        hyp = DFA.from_aalpy(hypothesis)
        cex = self.equivalence.counterexample(hyp)
        if cex is None:
            return None
        word = tuple(cex.word)
        if cex.trusted:
            before = self.cache.get(word)
            self.cache[word] = cex.label
            self.pinned.add(word)
            if before is not None and before != cex.label:
                self.repairs += 1
                self.conflicts.append({"word": list(word), "cached": before, "oracle": cex.label})
                raise _Restart
        elif word not in self.cache:
            self.cache[word] = cex.label
        return word

    def learn(self) -> LearnResult:
        from aalpy.base import Oracle
        from aalpy.learning_algs import run_KV, run_Lstar

        learner = self

        class Adapter(Oracle):
            def find_cex(self, hypothesis):
                return learner._find_cex(hypothesis)

        start = time.perf_counter()
        while True:
            sul = word_sul(self.member)
            oracle = Adapter(self.alphabet, sul)
            try:
                if self.algorithm == "lstar":
                    hyp = run_Lstar(self.alphabet, sul, oracle, "dfa", cex_processing=None, e_set_suffix_closed=True,
                                    cache_and_non_det_check=False, print_level=0)
                else:
                    hyp = run_KV(self.alphabet, sul, oracle, "dfa", cache_and_non_det_check=False, print_level=0)
                break
            except _Restart:
                self.restarts += 1
                if self.restarts > self.max_restarts:
                    raise LearningError(f"{self.restarts} restarts: the teacher keeps contradicting the oracle; "
                                        f"conflicting words (cached answer vs oracle): {self.conflicts[-10:]}") from None
            except SystemExit as exc:  # AALpy's non-determinism stop, should its cache be on
                raise LearningError(f"AALpy stopped: {exc}; conflicting words: {self.conflicts[-10:]}") from None
        return LearnResult(DFA.from_aalpy(hyp), self.rounds, len(self.cache), self.teacher_queries,
                           self.repairs, self.restarts, time.perf_counter() - start, self.conflicts)


def learn(alphabet, teacher: Teacher, equivalence: Equivalence, **kwargs) -> LearnResult:
    return Learner(alphabet, teacher, equivalence, **kwargs).learn()


def learn_plain_lstar(alphabet, teacher: Teacher, equivalence: Equivalence, max_rounds: int = 400,
                      max_queries: int = 200_000) -> LearnResult:
    """The baseline: AALpy's L* (Rivest-Schapire counterexamples), each word asked once and
    its first answer kept, no votes, no repair."""
    from aalpy.base import Oracle
    from aalpy.learning_algs import run_Lstar

    cache: dict = {}
    rounds = [0]

    def member(word):
        if word not in cache:
            if len(cache) >= max_queries:
                raise LearningError(f"membership-query budget of {max_queries} spent")
            cache[word] = bool(teacher.member(word, 0))
        return cache[word]

    class Adapter(Oracle):
        def find_cex(self, hypothesis):
            rounds[0] += 1
            cex = equivalence.counterexample(DFA.from_aalpy(hypothesis))
            if cex is not None and not cex.word:  # AALpy cannot process an empty counterexample
                raise LearningError("the teacher answered the empty word wrongly; plain L* cannot recover")
            return None if cex is None else tuple(cex.word)

    start = time.perf_counter()
    sul = word_sul(member)
    # AALpy's own cache is off: ours keeps first answers, which is what it would do.
    hyp = run_Lstar(list(alphabet), sul, Adapter(list(alphabet), sul), "dfa", print_level=0,
                    max_learning_rounds=max_rounds, cache_and_non_det_check=False)
    return LearnResult(DFA.from_aalpy(hyp), rounds[0], len(cache), len(cache), 0, 0, time.perf_counter() - start)
