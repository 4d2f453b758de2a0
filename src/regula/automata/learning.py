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
disagreement.

Then the witness check (`witnesses`; off by default, so the stages learn as they did until
their params turn it on with budgets for its askings; `regula bench learning` uses 11): persistent errors are per word, so the
answers to *different* words are independent. Each answer AALpy read, `u s` with `u` a state's
access string, is compared with `m s` for up to `witnesses` other words `m` the hypothesis
sends to that state and that answer like `u` elsewhere; a clear majority against the
teacher's answer overturns it (an untrusted correction that a pinned label overrides) and
AALpy restarts, with no round spent. It starts once a trusted label has caught the teacher
out, so a teacher never caught wrong is asked nothing beyond KV's own questions. Measured on
20 held-out AALpy random targets at persistent noise 0.1 (exact oracle; docs/automata.md):
30 x 10 in a median of 42.5 rounds, 50 x 10 in 76.5 (without it: about 205 and 395), for
about 20 times the teacher askings.

The adaptive mode (`adaptive=True`; `votes` and `witnesses` unused) spends extra askings only
where the teacher has been caught out, and tells the noise kind from its answers: each word is
asked once until a trusted label contradicts an answer; that word is asked again (the next
sample index), and a teacher that now answers differently has independent noise (right with its
accuracy at each asking), one that repeats itself persistent noise (`Learner.noise`, the
majority of such repeats). Independent: every answer AALpy read, and each new word, is asked
until one answer leads by `margin` (a sequential test). Persistent: each answer is put to a
vote of witness words (as the witness check's, the first two screened on `screen` of the state's
questions, any further one on `later`) asked one at a time only until backed or overturned
(`_verdict`), and, while undecided, at shorter cuts of the word (`cuts`). In both, a changed answer
restarts AALpy with no round spent. A teacher never caught wrong is asked exactly what KV asks.

AALpy stops on contradicting answers with `SystemExit`; with its cache off it never sees one,
and a stray one is caught here. Every choice is deterministic: the same answers give the same
queries in the same order and the same DFA.
"""
from __future__ import annotations

import time
from collections import Counter
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


class _Screened:
    """The witnesses of one state for the adaptive vote, screened only as a vote reaches them
    (most votes stop after two or three): candidates in order, kept when they answer like the
    access string on all but the scaled `fit` of its first `screen` questions; from the third on,
    of its first `later` (a third witness only settles the few votes the first two split, yet
    screening it on every question cost most of the askings; 27, not 20: fewer rounds at 50 x 10
    (eval 2.01x -> 1.93x the noiseless median) for askings still under 10x, 8.9x -> 9.7x)."""

    def __init__(self, learner, prefix, candidates, suffixes, count):
        self.learner, self.count = learner, count
        self.key = tuple(candidates)
        self._rest = iter(candidates)
        self.own = [(s, learner.answers[prefix + s]) for s in suffixes[:learner.screen]]
        self.most = min(learner.fit, learner.scale * learner._wrong / (learner._checked + 1)) * len(self.own)
        self.kept: list = []

    def _next(self):
        for m in self._rest:
            own, most = self.own, self.most
            if self.learner.later and len(self.kept) >= 2:
                own = own[:self.learner.later]
                most = self.most * len(own) / max(1, len(self.own))
            off = 0
            for s, a in own:
                off += self.learner._answer(m + s) != a
                if off > most:
                    break
            else:
                self.kept.append(m)
                return True
        return False

    def __iter__(self):
        i = 0
        while i < self.count and (i < len(self.kept) or self._next()):
            yield self.kept[i]
            i += 1


def word_sul(member: Callable[[tuple], bool], prefixes: bool = True):
    """An AALpy SUL whose output after each letter is `member(word so far)`; without
    `prefixes`, a query asks only the whole word (its last output, all a DFA learner reads)."""
    from aalpy.base import SUL

    class WordSUL(SUL):
        def query(self, word):
            if prefixes:
                return super().query(word)
            self.num_queries += 1
            return [member(tuple(word))]

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
                 max_queries: int = 30_000, max_rounds: int = 5_000, max_restarts: int = 5_000,
                 witnesses: int = 0, agree: float = 0.7, fit: float = 0.25, pool: int = 3,
                 sample: int = 40, max_flips: int = 3, scale: float = 2.5, adaptive: bool = False,
                 margin: int = 3, screen: int = 60, later: int = 27, cuts: int = 20):
        if algorithm not in ("lstar", "kv"):
            from regula.errors import UnknownNameError
            raise UnknownNameError("learning algorithm", algorithm, ["kv", "lstar"])
        if votes < 1 or votes % 2 == 0:
            raise RegulaError(f"votes must be odd and >= 1, got {votes}")
        self.alphabet = list(alphabet)
        self.teacher, self.equivalence = teacher, equivalence
        self.algorithm, self.votes = algorithm, votes
        if witnesses < 0 or not 0.5 < agree <= 1 or not 0 <= fit < 1 or pool < 1:
            raise RegulaError(f"witness check: need witnesses >= 0, agree in (0.5, 1], fit in [0, 1), pool >= 1; "
                              f"got {witnesses}, {agree}, {fit}, {pool}")
        # The witness check (`_check`); witnesses=0: off, the learner as it was before it.
        # `corrections` counts its changes (answers overturned and corrections withdrawn).
        # KV only (its hypotheses' states carry access strings and it reads whole words).
        self.witnesses = witnesses if algorithm == "kv" else 0
        self.agree, self.fit, self.pool = agree, fit, pool
        self.sample, self.max_flips = sample, max_flips
        self.max_queries, self.max_rounds, self.max_restarts = max_queries, max_rounds, max_restarts
        # What the run produced, readable by the caller (the stage saves them): the teacher's
        # answers (earlier ones in `answers` are reused, not asked again), the trusted labels,
        # and per round: states, observed, refuting, pinned, repairs, teacher_queries, words.
        self.answers: dict[tuple, bool] = {tuple(w): bool(a) for w, a in (answers or {}).items()}
        self.pinned: dict[tuple, bool] = {}
        # Answers overturned by the witness check (untrusted: a pinned label overrides them).
        self.corrected: dict[tuple, bool] = {}
        self._flips: Counter = Counter()  # corrections made and undone, per word
        self._seen: set = set()
        self._checked = self._wrong = 0  # trusted labels of words the teacher answered; those it got wrong
        self.scale = scale
        # The adaptive mode (`_doubt`): `votes` and `witnesses` unused; each word asked once until a
        # trusted label catches the teacher out, then the noise kind read off its repeats.
        if margin < 2 or screen < 0 or later < 0 or cuts < 0:
            raise RegulaError(f"adaptive mode: need margin >= 2 and screen, later, cuts >= 0, "
                              f"got {margin}, {screen}, {later}, {cuts}")
        self.adaptive, self.margin, self.screen, self.later, self.cuts = adaptive, margin, screen, later, cuts
        self._cuts: dict = {}  # word -> its shorter cuts' (suffix, witnesses), the vote's fallbacks
        self.tally: dict[tuple, list] = {}  # word -> [no, yes] askings (adaptive mode)
        self.repeats = [0, 0]  # caught words asked again: [same wrong answer, a different one]
        self._settled: set = set()  # answers decided by repeats (independent noise)
        self._voted: dict = {}  # word -> the witnesses its last vote asked (persistent noise)
        self.history: list[dict] = []
        self.teacher_queries = self.rounds = self.repairs = self.restarts = self.corrections = 0
        self.conflicts: list = []
        self._used: set[tuple] = set()  # answers AALpy has read since its last (re)start
        for word, label in sorted((evidence or {}).items()):
            self.pin(word, label)

    # -- membership ------------------------------------------------------------------------
    def member(self, word) -> bool:
        word = tuple(word)
        self._used.add(word)
        return self._answer(word)

    def _answer(self, word: tuple) -> bool:
        """The word's answer (pinned, corrected, cached, else asked) without marking it read."""
        if word in self.pinned:
            return self.pinned[word]
        if word in self.corrected:
            return self.corrected[word]
        got = self.answers.get(word)
        if got is not None:
            return got
        if self.adaptive:
            self._ask(word)
            if self.noise == "independent":
                self._decide(word)
            return self.answers[word]
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

    # -- the adaptive mode ----------------------------------------------------------------------
    @property
    def noise(self) -> str | None:
        """The teacher's noise as its repeats show it: a word it was caught wrong on, asked again,
        answers differently under independent noise (right with the teacher's accuracy) and the
        same under persistent noise. None until a caught word was asked again."""
        same, other = self.repeats
        if same + other == 0:
            return None
        return "independent" if other > same else "persistent"

    def _ask(self, word: tuple) -> bool:
        """One more asking of the word (the next sample index); its answer is the majority so far
        (a tie keeps the answer it had)."""
        if self.teacher_queries >= self.max_queries:
            raise LearningError(f"membership-query budget of {self.max_queries} spent after {self.rounds} rounds")
        counts = self.tally.setdefault(word, [0, 0] if word not in self.answers else
                                       [int(not self.answers[word]), int(self.answers[word])])
        self.teacher_queries += 1
        got = bool(self.teacher.member(word, sum(counts)))
        counts[got] += 1
        if counts[0] != counts[1]:
            self.answers[word] = counts[1] > counts[0]
        else:
            self.answers.setdefault(word, got)
        return got

    def _decide(self, word: tuple) -> None:
        """Independent noise: ask until one answer leads by `margin` (a sequential test: the
        chance it leads wrongly is about (p / (1 - p)) ** margin), at most 4 * margin + 1 askings."""
        counts = self.tally.get(word) or [int(not self.answers[word]), int(self.answers[word])]
        while abs(counts[1] - counts[0]) < self.margin and sum(counts) < 4 * self.margin + 1:
            self._ask(word)
            counts = self.tally[word]

    def _doubt(self, hypothesis) -> bool:
        """Before a hypothesis costs a round: once the teacher is caught, settle each answer AALpy
        read, by repeats under independent noise and by witnesses under persistent noise; True when
        an answer changed (AALpy restarts, no round spent)."""
        kind = self.noise
        if kind is None:
            return False
        changed = False
        todo = sorted((w for w in self._used if w not in self.pinned and w not in self._settled),
                      key=lambda w: (len(w), w))
        if kind == "independent":
            for word in todo:
                before = self.answers.get(word)
                if before is None:
                    continue
                if word in self.corrected:
                    continue
                self._decide(word)
                self._settled.add(word)
                changed |= self.answers[word] != before
            return changed
        return self.algorithm == "kv" and self._witness_vote(hypothesis, todo)

    def _witness_vote(self, hypothesis, todo) -> bool:
        """Persistent noise: each answer in `todo` put to its witnesses' vote (`_verdict`), at its
        longest cut, then, while undecided, at shorter ones (`_with_witnesses`); the loser is
        overturned (untrusted: a pinned label overrides it). A word is voted on again only when its
        witnesses change. True when an answer changed."""
        changed = False
        for word, cut in self._with_witnesses(hypothesis, todo).items():
            options = [cut] + self._cuts.get(word, [])
            key = tuple(getattr(chosen, "key", None) or tuple(chosen) for _, chosen in options)
            if self._voted.get(word) == key:
                continue
            self._voted[word] = key
            for suffix, chosen in options:
                majority = self._verdict(word, suffix, chosen)
                if majority is not None:
                    changed |= self._settle(word, majority)
                    break
        return changed

    def _into_states(self, hypothesis) -> tuple[set, dict]:
        """The states' access strings, and for each the words of the transitions into its
        state, shortest first (the access string itself left out)."""
        access = {state.prefix for state in hypothesis.states}
        into: dict = {prefix: set() for prefix in access}
        for state in hypothesis.states:
            for letter in self.alphabet:
                into[state.transitions[letter].prefix].add(state.prefix + (letter,))
        key = lambda w: (len(w), w)  # noqa: E731
        return access, {prefix: sorted(words - {prefix}, key=key) for prefix, words in into.items()}

    def _with_witnesses(self, hypothesis, words) -> dict:
        """word -> (suffix, its witnesses) for each word: `u s` with `u` the longest prefix that is a state's
        access string, and words `m` the hypothesis sends to `u`'s state (transition words into it,
        then two steps away, shortest first), kept when they answer like `u` on all but the scaled
        `fit` of `u`'s first `screen` questions among `words` (0: unscreened). Kept in `_cuts`: for
        each word, up to two shorter cuts `u' s'` at access strings whose states have at least
        `cuts` questions (0: none). A state whose hypothesis merges several of the target's has no
        witness that passes the screen, and its wrong answers cost a round each; the same word cut
        at an earlier state on its path often has witnesses."""
        key = lambda w: (len(w), w)  # noqa: E731
        access, one = self._into_states(hypothesis)
        groups: dict = {}
        for word in words:
            if word in self.answers:
                cut = next(i for i in range(len(word), -1, -1) if word[:i] in access)
                groups.setdefault(word[:cut], []).append(word[cut:])
        count = self.witnesses or 4 * self.margin
        table = {}
        for prefix, suffixes in groups.items():
            two = sorted({m + w[-1:] for w in one[prefix] for m in one[w[:-1]]} - set(one[prefix]) - {prefix}, key=key)
            candidates = (one[prefix] + two)[:count]
            chosen = _Screened(self, prefix, candidates, suffixes, count) if self.screen else candidates
            for suffix in suffixes:
                table[prefix + suffix] = suffix, chosen
        self._cuts = {}
        if self.cuts:
            voters = {prefix: table[prefix + suffixes[0]][1] for prefix, suffixes in groups.items()
                      if len(suffixes) >= self.cuts}
            for word, (suffix, _) in table.items():
                shorter = [(word[i:], voters[word[:i]]) for i in range(len(word) - len(suffix) - 1, -1, -1)
                           if word[:i] in voters]
                if shorter:
                    self._cuts[word] = shorter[:2]
        return table

    def _verdict(self, word, suffix, chosen) -> bool | None:
        """The answer the witnesses give `word`, asked one at a time only until the teacher's is
        backed (`margin` - 1 of them answer like it, more than against it) or overturned (more than
        `margin` against, at least `agree` of those asked); None: undecided."""
        raw = self.answers[word]
        same = other = 0
        for m in chosen:
            if m + suffix in self.pinned or m + suffix == word:
                continue
            if self._answer(m + suffix) == raw:
                same += 1
            else:
                other += 1
            if same >= self.margin - 1 and same > other:
                return raw
            if other > self.margin and other >= self.agree * (same + other):
                return not raw
        return None

    def _settle(self, word, majority) -> bool:
        current = self.corrected.get(word, self.answers[word])
        if majority == current or self._flips[word] >= self.max_flips:
            return False
        if majority == self.answers[word]:
            del self.corrected[word]
        else:
            self.corrected[word] = majority
        self._flips[word] += 1
        self.corrections += 1
        return True

    def pin(self, word, label) -> bool:
        """A trusted label, from now on the word's answer; True when it overturns an answer
        AALpy has read since its last start (then AALpy must restart)."""
        word, label = tuple(word), bool(label)
        before = self.pinned.get(word, self.corrected.get(word, self.answers.get(word)))
        self.pinned[word] = label
        if word in self.answers and word not in self._seen:
            self._seen.add(word)
            self._checked += 1
            self._wrong += self.answers[word] != label
            if self.adaptive and self.answers[word] != label:  # caught: does it say the same again?
                self.repeats[self._ask(word) == label] += 1
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
        # The witness check, once a trusted label has caught the teacher out (before that it
        # would only spend queries: witnesses may differ from the access string in nothing).
        if self.adaptive and self._doubt(hypothesis):
            raise _Restart
        if self.witnesses and not self.adaptive and self._wrong and self._check(hypothesis):
            raise _Restart  # answers the hypothesis was built on were overturned: rebuild, no round spent
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

    def _check(self, hypothesis) -> bool:
        """The witness check, run before a hypothesis costs a round. Persistent errors are
        per word, so the answers to different words are independent. Each answer AALpy read,
        for `u s` with `u` the longest prefix that is a state's access string, is compared
        with the answers for `m s`, where the witnesses `m` are words the hypothesis sends to
        the same state (the words `u_r b` of the transitions into it, then words two steps
        away, shortest first) that answer like `u` on all but `fit` of `u`'s questions (a
        word of another state differs on many). Where at least `agree` of three or more
        witnesses contradict the teacher's answer it is overturned (`corrected`, untrusted: a
        pinned label overrides it); where they back a corrected answer the correction goes
        (a word flips at most `max_flips` times). True when anything changed: AALpy then
        restarts on the corrected answers, no round spent."""
        key = lambda w: (len(w), w)  # noqa: E731
        access, one = self._into_states(hypothesis)
        groups: dict = {}
        for word in sorted(self._used, key=key):
            if word not in self.pinned and word in self.answers:
                cut = next(i for i in range(len(word), -1, -1) if word[:i] in access)
                groups.setdefault(word[:cut], []).append(word[cut:])
        changed = False
        for prefix, suffixes in groups.items():
            two = sorted({m + w[-1:] for w in one[prefix] for m in one[w[:-1]]} - set(one[prefix]) - {prefix}, key=key)
            witnesses = self._witnesses(prefix, (one[prefix] + two)[:self.pool * self.witnesses], suffixes)
            if len(witnesses) < 3:
                continue
            against, back = [], []
            need = self.agree * len(witnesses)
            for suffix in suffixes:
                word = prefix + suffix
                raw = self.answers[word]
                same = other = 0
                for m in witnesses:  # ask no further once the verdict cannot change
                    if self._answer(m + suffix) == raw:
                        same += 1
                    else:
                        other += 1
                    if word not in self.corrected and len(witnesses) - same < need:
                        break
                if other >= need:
                    against.append((word, not raw))
                elif same >= need and word in self.corrected:
                    back.append(word)
            for word, majority in against:
                if word not in self.corrected and self._flips[word] < self.max_flips:
                    self.corrected[word] = majority
                    self._flips[word] += 1
                    self.corrections += 1
                    changed = True
            for word in back:
                if self._flips[word] < self.max_flips:
                    del self.corrected[word]
                    self._flips[word] += 1
                    self.corrections += 1
                    changed = True
        return changed

    def _witnesses(self, prefix, candidates, suffixes, count=None, sample=None):
        """The first `witnesses` candidates whose answers on the access string's questions
        differ from its own (the teacher's) in at most `fit` of them."""
        own = [(s, self.answers[prefix + s]) for s in suffixes[:sample or self.sample]]
        # How far a witness may differ grows with the teacher's error rate as the trusted labels
        # show it: a teacher they never contradicted has no room for a witness that differs.
        most = min(self.fit, self.scale * self._wrong / (self._checked + 1)) * len(own)
        keep = []
        for m in candidates:
            off = 0
            for s, a in own:
                off += self._answer(m + s) != a
                if off > most:
                    break
            else:
                keep.append(m)
                if len(keep) == (count or self.witnesses):
                    break
        return keep

    def learn(self) -> LearnResult:
        from aalpy.base import Oracle
        from aalpy.learning_algs import run_KV, run_Lstar

        learner = self

        class Adapter(Oracle):
            def find_cex(self, hypothesis):
                return learner._find_cex(hypothesis)

        start = time.perf_counter()
        while True:
            sul = word_sul(self.member, prefixes=not (self.witnesses or self.adaptive))
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
