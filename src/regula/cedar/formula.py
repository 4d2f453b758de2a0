"""The teacher as a formula in CEDAR's loop (`cedar.teacher_form: formula`, issue 37): the teacher
role is CALLED once per alphabet for LTLf clauses over the skill's letters
(`regula.automata.teachers.FormulaTeacher`: the logic core compiles them, never code run from an
answer), and every membership query the learner asks is the compiled monitor's verdict. When a
round of the world's rollouts labels a word the formula gets wrong, the teacher is called once
more with that word (the shortest) as a counterexample, and the learner starts again on the
refined formula, the world's labels kept; past `cedar.formula_calls` calls per skill it learns
around the formula's errors as around a noisy teacher (the world's labels are pinned over its
answers). The teacher is first called on a Σ only after the world explored it (`learn.learn_skill`:
rollouts of a hypothesis that accepts nothing) and did not show it too small; a Σ widened later
is a new task for the teacher: a call, while calls remain; else the formula it has is read over
the wider Σ (a letter no clause names is unconstrained).

Letters: a library call `@s` is the atom `call_s` (the law syntax's atoms are `[a-z_][a-z0-9_]*`).

The stand-in (`CedarRulesFormula`, the `rules` teacher's twin) writes data.yaml's recipes as
`recipe_clauses` writes them with `calls=CALL`: a call `@s` (atom `call_s`) needs nothing (it
gathers what it needs itself, as the rules teacher reads it) and gives what s's shortest plan ends
with (its item or tool, and the stations it placed). It is wrong on round(cedar.noise x clauses)
clauses, chosen by the seed (`RulesFormula`).
"""
from __future__ import annotations

from regula.automata import teachers
from regula.automata.learning import LearningError
from regula.automata.teachers import FormulaTeacher, RulesFormula

from .words import MACRO, is_macro

CALL = "call_"  # `@s` -> `call_s`: no Crafter skill starts so (a test checks)


def atom(letter: str) -> str:
    return CALL + letter[len(MACRO):] if is_macro(letter) else letter


def letter_of(name: str) -> str:
    return MACRO + name[len(CALL):] if name.startswith(CALL) else name


def glossary(atoms) -> str:
    """One line per call atom, for the LLM's task description (`Library.glossary`'s, in atoms)."""
    return "".join(f"\n{a}: the learned skill {a[len(CALL):]}, run until it is done (it gathers what it needs "
                   "itself)" for a in atoms if a.startswith(CALL))


class CedarRulesFormula(RulesFormula):
    """`RulesFormula` (its noise on clauses and its refinement) over atoms, `call_s` a call of s
    (`recipe_clauses` with `calls=CALL`)."""

    def __init__(self, goal: str, alphabet, noise: float = 0.0, seed: int = 0, ignore=()):
        if not 0 <= noise < 0.5:
            from regula.errors import ParamsError
            raise ParamsError(f"teacher noise must be in [0, 0.5), got {noise}")
        self.goal, self.alphabet, self.noise, self.seed = goal, tuple(alphabet), noise, seed
        self.truth = teachers.recipe_clauses(goal, self.alphabet, ignore, calls=CALL)
        n = round(noise * len(self.truth))
        order = sorted(range(len(self.truth)), key=lambda i: teachers.unit(seed, goal, self.truth[i]["text"]))
        self.wrong = {i: "dropped" if teachers.unit(seed, goal, self.truth[i]["text"], "how") < 0.5 else "negated"
                      for i in order[:n]}


class Silent:
    """A teacher that knows nothing: its formula is `false` and stays so when asked again. The
    skill is then taught by the world's labels alone (the learner learns around the formula), the
    baseline beside a model's formulas (`cedar.formula_baseline`)."""

    uses_llm = False

    def formula(self) -> list[str]:
        return ["false"]

    def refine(self, clauses, word, label) -> list[str]:
        return ["false"]


class _Said:
    """A formula already given, taken again over another alphabet: not a call of the teacher."""

    def __init__(self, clauses, source):
        self.clauses, self.uses_llm = list(clauses), source.uses_llm

    def formula(self) -> list[str]:
        return self.clauses


class _NoCache:
    """The formula's answers are a function of its clauses (recorded in the stage's detail): no MQ cache."""

    def save(self) -> None:
        pass


class FormulaTeachers:
    """The teacher role for one skill as the learner sees it (`member`), its formula asked for per
    alphabet (`on_alphabet`) and refined by the world's labels (`refine_on`), with at most
    `max_calls` calls in all. `source_for(atoms)`: the formula source over those atoms (a
    `CedarRulesFormula`, or `LLMFormula`). `calls`: every call, {why, letters, clauses, usable,
    reason}; `queries`: membership queries the formula answered; `dropped`: clauses the world refuted
    past the calls (`drop`)."""

    def __init__(self, source_for, max_calls: int = 2, backend: str = "native", drop: bool = False):
        self.source_for, self.max_calls, self.backend, self.drop = source_for, max_calls, backend, drop
        self.dropped: list[dict] = []  # {clause, word}: clauses a world's member word refuted, past the calls
        self.cache = _NoCache()
        self.teacher: FormulaTeacher | None = None
        self.letters: tuple = ()
        self.calls: list[dict] = []
        self.queries = 0
        self.replayed = 0  # RecordedTeacher's count: the formula's answers are never cached
        self.clauses: list[str] | None = None

    @property
    def asked(self) -> int:
        """What this run asked the teacher: its calls (the stand-in's are made on every run; an
        LLM's come back from the LLM cache on a replay, and its accounting says so)."""
        return len(self.calls)

    @property
    def uses_llm(self) -> bool:
        return bool(self.teacher is not None and self.teacher.uses_llm)

    def _record(self, why: str, ft: FormulaTeacher, before: int, before_bad: int, word=None, label=None) -> None:
        for _ in range(ft.calls - before):
            usable = ft.unusable == before_bad
            self.calls.append({"why": why, "letters": [letter_of(a) for a in ft.alphabet],
                               "clauses": list(ft.clauses or []) if usable else None,
                               "usable": usable, "reason": None if usable else ft.reason,
                               **({"counterexample": list(word), "label": label} if word is not None else {})})

    def on_alphabet(self, letters) -> None:
        """Learning starts on Σ `letters`: the teacher is called for it while calls remain (else
        the formula it has is read over Σ). LearningError when there is no usable formula."""
        letters = tuple(letters)
        if letters == self.letters and self.teacher is not None:
            return
        atoms = tuple(atom(a) for a in letters)
        self.letters = letters
        if len(self.calls) < self.max_calls:
            asked = FormulaTeacher(self.source_for(atoms), atoms, self.backend)  # one call
            self._record("first" if not self.calls else "wider alphabet", asked, 0, 0)
            if asked.clauses is not None or self.clauses is None:
                self.teacher = asked
                self.clauses = asked.clauses
                return self._usable()
        if self.clauses is not None:  # no call left, or a failed one: the last formula, read over the wider Σ
            self.teacher = FormulaTeacher(_Said(self.clauses, self.teacher.source), atoms, self.backend)
        self._usable()

    def _usable(self) -> None:
        """LearningError, one line, when the teacher never gave a usable formula."""
        if self.teacher is None or self.teacher.clauses is None:
            reason = self.teacher.reason if self.teacher is not None else "no call left"
            raise LearningError(f"the formula teacher gave no usable formula: {reason}")

    def member(self, word, sample: int = 0) -> bool:
        self.queries += 1
        return self.teacher.member(tuple(atom(a) for a in word), sample)

    def refine_on(self, labels: dict) -> bool:
        """After a round: a word the world labelled that the formula gets wrong (the shortest, then
        by letters) is the counterexample of one more call, while calls remain; past them, with
        `drop`, each clause that refuses a word the world says does the skill is dropped (no call:
        the world refuted it). True when the formula changed (the learner starts again on it)."""
        if self.teacher is None or self.teacher.clauses is None:
            return False
        wrong = sorted((w for w, y in labels.items()
                        if self.teacher.member(tuple(atom(a) for a in w)) != bool(y)), key=lambda w: (len(w), w))
        if not wrong:
            return False
        if len(self.calls) >= self.max_calls:
            return self.drop and self._drop([w for w in wrong if labels[w]])
        word = wrong[0]
        ft = self.teacher
        before, before_bad, old = ft.calls, ft.unusable, ft.clauses
        ft.refine(tuple(atom(a) for a in word), bool(labels[word]))
        self._record("counterexample", ft, before, before_bad, word, bool(labels[word]))
        self.clauses = ft.clauses
        return ft.clauses != old

    def _drop(self, members: list) -> bool:
        """The clauses that refuse one of `members` (words the world says do the skill), dropped."""
        if not members:
            return False
        alphabet = self.teacher.alphabet
        keep = []
        for clause in self.teacher.clauses:
            mon = teachers.compile_clauses([clause], alphabet, self.backend)
            refused = next((w for w in members if not teachers.accepts(mon, tuple(atom(a) for a in w))), None)
            if refused is None:
                keep.append(clause)
            else:
                self.dropped.append({"clause": clause, "word": list(refused)})
        if len(keep) == len(self.teacher.clauses):
            return False
        self.clauses = keep or ["true"]  # every clause refuted: the formula says yes to all
        self.teacher = FormulaTeacher(_Said(self.clauses, self.teacher.source), alphabet, self.backend)
        return True
