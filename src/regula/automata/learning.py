"""Active DFA learning on AALpy that survives a noisy teacher.

The learner owns the membership-query cache; AALpy runs with its own cache off and asks
through a SUL that reads ours. Two kinds of teacher error are handled:

* independent (a fresh wrong answer with some probability at each asking): each new word is
  asked up to `votes` times (sample indices 0, 1, ..., so an LLM teacher's repeats are
  cached) and the majority kept, stopping as soon as it is decided;
* persistent (the same wrong answer every time for some words, which voting cannot fix):
  every word an equivalence round labels (trusted oracles: environment, person, exact) is
  pinned and overrides the teacher's answer from then on; when one contradicts an answer
  already used, AALpy restarts on the repaired cache (its tree holds the wrong answer). The
  restart asks the teacher nothing it was asked before. (LAPR-style consistency.)

Before a hypothesis is proposed it is checked against every pinned word; one it gets wrong is
handed to AALpy as a counterexample without an equivalence round, so a refuted hypothesis is
never proposed again and a round's whole batch of labels is used, not only its first
disagreement. AALpy stops on contradicting answers with `SystemExit`; with its cache off it
never sees one, and a stray one is caught here. Every choice is deterministic: the same
answers give the same queries in the same order and the same DFA.
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
    def observe(self, hypothesis: DFA) -> list[Counterexample]:
        """Every word whose label this round observed; the hypothesis is refuted by any it
        labels differently and accepted when none."""
        ...


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
    history: list = field(default_factory=list)  # per equivalence round: see Learner.history


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
                 votes: int = 1, evidence: dict | None = None, answers: dict | None = None,
                 max_queries: int = 30_000, max_rounds: int = 5_000, max_restarts: int = 5_000):
        if algorithm not in ("lstar", "kv"):
            from regula.errors import UnknownNameError
            raise UnknownNameError("learning algorithm", algorithm, ["kv", "lstar"])
        if votes < 1 or votes % 2 == 0:
            raise RegulaError(f"votes must be odd and >= 1, got {votes}")
        self.alphabet = list(alphabet)
        self.teacher, self.equivalence = teacher, equivalence
        self.algorithm, self.votes = algorithm, votes
        self.max_queries, self.max_rounds, self.max_restarts = max_queries, max_rounds, max_restarts
        # What the run produced, readable by the caller (the stage saves them): the teacher's
        # answers (earlier ones in `answers` are reused, not asked again), the trusted labels,
        # and per round: states, observed, refuting, pinned, repairs, teacher_queries, words.
        self.answers: dict[tuple, bool] = {tuple(w): bool(a) for w, a in (answers or {}).items()}
        self.pinned: dict[tuple, bool] = {}
        self.history: list[dict] = []
        self.teacher_queries = self.rounds = self.repairs = self.restarts = 0
        self.conflicts: list = []
        self._used: set[tuple] = set()  # answers AALpy has read since its last (re)start
        for word, label in sorted((evidence or {}).items()):
            self.pin(word, label)

    # -- membership ------------------------------------------------------------------------
    def member(self, word) -> bool:
        word = tuple(word)
        self._used.add(word)
        if word in self.pinned:
            return self.pinned[word]
        got = self.answers.get(word)
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
        self.answers[word] = yes > no
        return self.answers[word]

    def pin(self, word, label) -> bool:
        """A trusted label, from now on the word's answer; True when it overturns an answer
        AALpy has read since its last start (then AALpy must restart)."""
        word, label = tuple(word), bool(label)
        before = self.pinned.get(word, self.answers.get(word))
        self.pinned[word] = label
        if before is None or before == label:
            return False
        self.repairs += 1
        self.conflicts.append({"word": list(word), "cached": before, "oracle": label})
        return word in self._used

    # -- equivalence -------------------------------------------------------------------------
    def _find_cex(self, hypothesis) -> tuple | None:
        hyp = DFA.from_aalpy(hypothesis)
        wrong = [w for w, label in self.pinned.items() if hyp.accepts(w) != label]
        if wrong:  # refuted already: no round spent on it
            return min(wrong, key=lambda w: (len(w), w))
        if self.rounds >= self.max_rounds:
            raise LearningError(f"round budget of {self.max_rounds} spent; last conflicts: {self.conflicts[-5:]}")
        self.rounds += 1
        observed = self.equivalence.observe(hyp)
        refuting = sorted((c for c in observed if hyp.accepts(tuple(c.word)) != c.label),
                          key=lambda c: (len(c.word), tuple(c.word)))
        restart = False
        for c in observed:
            if c.trusted:
                restart |= self.pin(c.word, c.label)
            else:  # the teacher's own label: an answer, not a fact
                self.answers.setdefault(tuple(c.word), bool(c.label))
        self.history.append({"round": self.rounds, "states": hyp.size, "observed": len(observed),
                             "refuting": len(refuting), "pinned": len(self.pinned), "repairs": self.repairs,
                             "teacher_queries": self.teacher_queries, "words": len(self.answers)})
        if restart:
            raise _Restart
        return tuple(refuting[0].word) if refuting else None

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
            self._used = set()
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
        return LearnResult(DFA.from_aalpy(hyp), self.rounds, len(self.answers), self.teacher_queries,
                           self.repairs, self.restarts, time.perf_counter() - start, self.conflicts, self.history)


def learn(alphabet, teacher: Teacher, equivalence: Equivalence, **kwargs) -> LearnResult:
    return Learner(alphabet, teacher, equivalence, **kwargs).learn()


PLAIN = ("lstar", "kv")


def learn_plain(alphabet, teacher: Teacher, equivalence: Equivalence, algorithm: str = "lstar",
                max_rounds: int = 400, max_queries: int = 200_000) -> LearnResult:
    """The baselines: AALpy's L* or KV (Rivest-Schapire counterexamples), each word asked once
    and its first answer kept, no votes, no repair; a round's first word the hypothesis gets
    wrong (shortest first) is its counterexample."""
    from aalpy.base import Oracle
    from aalpy.learning_algs import run_KV, run_Lstar

    if algorithm not in PLAIN:
        from regula.errors import UnknownNameError
        raise UnknownNameError("plain learning algorithm", algorithm, PLAIN)
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
            hyp = DFA.from_aalpy(hypothesis)
            wrong = sorted((tuple(c.word) for c in equivalence.observe(hyp) if hyp.accepts(tuple(c.word)) != c.label),
                           key=lambda w: (len(w), w))
            if wrong and not wrong[0]:  # AALpy cannot process an empty counterexample
                raise LearningError(f"the teacher answered the empty word wrongly; plain {algorithm} cannot recover")
            return wrong[0] if wrong else None

    start = time.perf_counter()
    sul = word_sul(member)
    # AALpy's own cache is off: ours keeps first answers, which is what it would do.
    run = run_Lstar if algorithm == "lstar" else run_KV
    hyp = run(list(alphabet), sul, Adapter(list(alphabet), sul), "dfa", print_level=0,
              max_learning_rounds=max_rounds, cache_and_non_det_check=False)
    return LearnResult(DFA.from_aalpy(hyp), rounds[0], len(cache), len(cache), 0, 0, time.perf_counter() - start)
