"""CEDAR's active loop for one skill (§3.2): membership queries to the teacher, equivalence
rounds in the world, and a wider alphabet when the world shows the current one cannot do.

The alphabet is too small when the learned hypothesis accepts nothing the world can do: no
accepting state, or no rollout of its last round reached the goal. Then the retriever is asked
for the next Σ, given what the rollouts' failed letters lacked (an item, a station never seen:
the symbols the counterexamples show missing), and learning restarts on it, keeping every label
the world gave (a word over the old letters is a word over the new ones). A budget spent ends
the skill unlearned, with the reason; the stage goes on with the next.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from regula.automata.dfa import DFA
from regula.automata.learning import Learner, LearningError
from regula.automata.ops import is_empty

from .caches import RecordedTeacher
from .equivalence import CrafterEquivalence


@dataclass
class SkillRun:
    dfa: DFA
    letters: tuple
    alphabets: list  # every Σ tried, in order, as letters
    rounds: int = 0  # equivalence rounds (batches of rollouts), all alphabets
    teacher_queries: int = 0  # askings the learner made (cached ones included)
    membership_words: int = 0
    repairs: int = 0
    reached: bool = False  # a rollout of the accepted round reached the goal
    error: str = ""  # why learning stopped without a hypothesis (a budget spent)
    evidence: dict = field(default_factory=dict)  # word -> the world's label
    examples: dict = field(default_factory=dict)  # D: the last alphabet's answers, the world's labels over them
    history: list = field(default_factory=list)  # per alphabet: its counts


class _Widen(Exception):
    """The world showed the skill's letter lacking what no letter of Σ gets: Σ is widened now."""


class _Refined(Exception):
    """The teacher as a formula was called again with a word of the round: learning restarts on its new answers."""


class _Checkpoint:
    """The oracle, saving the MQ cache after each round as the oracle saves the EQ cache;
    `stop(oracle)` true after a round: learning on this Σ ends (`_Widen`), the round's labels kept.
    A teacher with `refine_on` (`cedar.formula.FormulaTeachers`) sees the round's labels first: when
    it changed its formula, the learner starts again (`_Refined`), the labels kept."""

    def __init__(self, oracle: CrafterEquivalence, teacher: RecordedTeacher, stop=None):
        self.oracle, self.teacher, self.stop = oracle, teacher, stop
        self.labels: dict = {}

    def observe(self, hypothesis):
        out = self.oracle.observe(hypothesis)
        self.teacher.cache.save()
        self.labels = {tuple(c.word): bool(c.label) for c in out}
        if self.stop is not None and self.stop(self.oracle):
            raise _Widen
        refine = getattr(self.teacher, "refine_on", None)
        if refine is not None and refine(self.labels):
            raise _Refined
        return out


def learn_skill(letters_for: Callable[[int, tuple], tuple], teacher: RecordedTeacher,
                oracle_for: Callable[[tuple], CrafterEquivalence], expansions: int,
                learner_options: dict, progress=None, prior: dict | None = None,
                uncovered: Callable[[tuple, dict], set] | None = None) -> SkillRun:
    """Learn on `letters_for(0, ())`, then on `letters_for(1, lacked)`, ... while the world says Σ
    is too small (at most `expansions` times); `lacked`: what failed letters lacked so far.
    `prior`: answers taken as the teacher's without asking it (an adapted template's D).
    `uncovered(letters, lacks)`: of what failed letters lacked (`lacks`: letter -> items), what
    matters and no letter of Σ gets; when given, Σ is widened by it even after the goal was
    reached (the level stays), since a rollout that reached the goal with an item the word never
    names (stone left over from a pickaxe) is luck the DFA would have to count."""
    lacked: set = set()
    lacks: dict = {}
    run = None
    level = 0
    for step in range(expansions + 1):
        letters = tuple(letters_for(level, tuple(sorted(lacked))))
        if run is None:
            run = SkillRun(DFA(letters, (tuple([0] * len(letters)),), 0, frozenset()), letters, [])
        elif set(letters) <= set(run.alphabets[-1]):
            break  # the retriever has nothing more to add
        run.alphabets.append(letters)
        oracle = oracle_for(letters)
        usable = {w: y for w, y in run.evidence.items() if set(w) <= set(letters)}
        stop = None
        if uncovered is not None and step < expansions:
            def stop(o, letters=letters):
                return bool(uncovered(letters, _merged(lacks, o.lacks)))
        checkpoint = _Checkpoint(oracle, teacher, stop)
        spent = 0  # askings of learners a refined formula restarted
        learner = None
        try:
            if hasattr(teacher, "on_alphabet"):  # the teacher as a formula: called for this Σ
                # ... once the world has had its say on Σ: the rollouts of a hypothesis that accepts
                # nothing explore the letters, and a Σ they show too small is widened before any
                # call (a call on it would be spent on a formula the wider Σ needs asked again, leaving
                # none for a counterexample: seed 1's make_iron_pickaxe, docs/cedar.md).
                if stop is not None:
                    nothing = DFA(letters, (tuple([0] * len(letters)),), 0, frozenset())
                    checkpoint.labels = {tuple(c.word): bool(c.label) for c in oracle.observe(nothing)}
                    if stop(oracle):
                        raise _Widen
                    usable = {**usable, **checkpoint.labels}
                teacher.on_alphabet(letters)
            while True:
                options = dict(learner_options)
                if "max_queries" in options:  # one budget per alphabet, over the restarts
                    options["max_queries"] -= spent
                learner = Learner(letters, teacher, checkpoint, evidence=usable, answers=prior, **options)
                try:
                    result = learner.learn()
                    break
                except _Refined:  # the world's labels and the pinned ones carry over to the new formula
                    usable = {**usable, **learner.pinned, **checkpoint.labels}
                    spent += learner.teacher_queries
                    if progress:
                        progress(f"{len(letters)} letters: the formula changed by the world's labels after "
                                 f"{oracle.rounds} rounds")
        except _Widen:
            # §3.2 step 4: the counterexamples show a symbol outside Σ; restart on the wider Σ,
            # keeping every label the world gave.
            teacher.cache.save()
            oracle.cache.save()
            asked = spent  # none when the world widened Σ before the teacher was asked on it
            if learner is not None:
                run.evidence.update(learner.pinned)
                asked += learner.teacher_queries
            run.evidence.update(checkpoint.labels)
            lacks = _merged(lacks, oracle.lacks)
            shown = uncovered(letters, lacks)
            lacked |= shown
            run.rounds += oracle.rounds
            run.teacher_queries += asked
            run.letters = letters
            run.history.append({"letters": list(letters), "rounds": oracle.rounds, "states": None,
                                "teacher_queries": asked, "reached": False, "empty": None, "widened": sorted(shown)})
            if progress:
                progress(f"{len(letters)} letters: the skill's letter lacked {sorted(shown)}, which no letter "
                         f"gets, after {oracle.rounds} rounds")
            continue
        except LearningError as exc:
            teacher.cache.save()
            oracle.cache.save()
            asked = spent + (learner.teacher_queries if learner is not None else 0)
            run.rounds += oracle.rounds
            run.teacher_queries += asked
            run.letters, run.error, run.reached = letters, str(exc), False
            run.history.append({"letters": list(letters), "rounds": oracle.rounds, "states": None,
                                "teacher_queries": asked, "reached": False, "empty": None,
                                "error": str(exc)})
            if progress:
                progress(f"{len(letters)} letters: {exc}")
            return run
        run.evidence.update(learner.pinned)
        run.examples = {**learner.answers, **learner.pinned}
        lacks = _merged(lacks, oracle.lacks)
        run.dfa, run.letters = result.dfa, letters
        run.reached = any(r["label"] for r in oracle.last)
        run.rounds += oracle.rounds
        run.teacher_queries += spent + result.teacher_queries
        run.membership_words += result.membership_words
        run.repairs += result.repairs
        run.history.append({"letters": list(letters), "rounds": oracle.rounds, "states": result.dfa.size,
                            "teacher_queries": spent + result.teacher_queries, "reached": run.reached,
                            "empty": is_empty(result.dfa)})
        if progress:
            progress(f"{len(letters)} letters: {result.dfa.size} states, {oracle.rounds} rounds, "
                     f"{'goal reached' if run.reached else 'goal not reached'}")
        if run.reached and not is_empty(result.dfa):
            shown = uncovered(letters, lacks) if uncovered else set()
            if not shown:
                break
            lacked |= shown
            if progress:
                progress(f"goal reached, but rollouts lacked {sorted(shown)}, which no letter gets")
        else:
            lacked |= oracle.missing
            level += 1
    run.reached = run.reached and not is_empty(run.dfa)  # a rollout's luck under a DFA that accepts nothing
    return run


def _merged(lacks: dict, more: dict) -> dict:
    """letter -> items, `more`'s added."""
    return {a: set(lacks.get(a, ())) | set(more.get(a, ())) for a in set(lacks) | set(more)}
