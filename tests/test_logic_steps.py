"""Per-step monitoring against straightforward references: the native monitor's table-driven
steps against the generic driver over the same engine (the same verdict, first violation, step
count and state after every step, peek and reset), and the shield, which builds one letter per
step for all its laws, against the shield that built it once per law."""
import random

import pytest

from regula.logic import Law, Shield
from regula.logic.shield import Conflict, Decision
from regula.logic.formula import Formula
from regula.logic.monitor import Monitor, NativeMonitor, Verdict, spot_available
from regula.logic.parser import parse
from regula.logic.randomized import random_formula

ATOMS = ("a", "b", "c")


class Reference(Monitor):
    """The native engine under the driver Spot's monitor uses: a projected, memoised move a step."""

    _begin, _move, _reads = NativeMonitor._begin, NativeMonitor._move, NativeMonitor._reads


def _letter(rng: random.Random):
    """A letter in one of the forms callers give: frozenset, list, set, with atoms no law reads."""
    atoms = [a for a in (*ATOMS, "z") if rng.random() < 0.45]
    return rng.choice([frozenset(atoms), frozenset(atoms), atoms, set(atoms)])


def _observed(m: Monitor) -> tuple:
    return m.verdict, m.first_violation, m.steps, m.state


def _agree(f: Formula, rng: random.Random, actions=None, row_letters=None) -> NativeMonitor:
    native, reference = NativeMonitor(f, actions), Reference(f, actions)
    if row_letters is not None:
        native.row_letters = row_letters
    assert _observed(native) == _observed(reference), str(f)
    for _ in range(40):
        letter, r = _letter(rng), rng.random()
        if r < 0.3:
            assert native.peek(letter) == reference.peek(letter), str(f)
        elif r < 0.95:
            assert native.step(letter) == reference.step(letter), str(f)
        else:
            native.reset()
            reference.reset()
        assert _observed(native) == _observed(reference), (str(f), letter)
    return native


def test_steps_agree_with_the_generic_driver_on_random_formulas():
    rng = random.Random(40)
    violated = 0
    for _ in range(300):
        m = _agree(random_formula(rng, ATOMS, depth=rng.randint(1, 4)), rng)
        violated += m.first_violation is not None
    assert violated > 20  # the check on the violating step is not vacuous


def test_steps_agree_with_an_action_alphabet():
    rng = random.Random(41)
    for _ in range(100):
        _agree(random_formula(rng, ATOMS, depth=3), rng, actions=frozenset({"a", "b"}))


def test_rows_that_start_again_past_their_bound_keep_the_verdicts():
    rng = random.Random(42)
    for _ in range(50):
        m = _agree(random_formula(rng, ATOMS, depth=3), rng, row_letters=3)
        assert m._row_entries <= 3


def test_a_warm_step_only_looks_the_letter_up():
    m = NativeMonitor(parse("G(a -> X(b | c)) & F c"))
    trace = [frozenset(x) for x in (["a"], ["b"], ["a", "z"], ["c"], [], ["a"], ["c"])]
    first = m.run(trace), [m.peek(x) for x in trace]
    m._step = m._move = m.live = None  # a call to any of them now fails
    m.reset()
    assert (m.run(trace), [m.peek(x) for x in trace]) == first


@pytest.mark.parametrize("formula, trace, first", [("G a", [["a"], [], ["a"], []], 2), ("false", [["a"]], 0),
                                                   ("a U b", [["a"], ["a"], ["b"], []], None)])
def test_first_violation_is_the_step_that_violated(formula, trace, first):
    m = NativeMonitor(parse(formula))
    m.run([frozenset(x) for x in trace])
    assert m.first_violation == first
    assert (m.verdict == Verdict.VIOLATED) == (first is not None)


class OncePerLaw(Shield):
    """The shield before: each check filtered the laws by kind, and each monitor took its own letter."""

    def check(self, state, action, kinds=("hard", "soft")):
        letter = frozenset(state) | {action}
        violated = [law for law, m in self.monitors if law.kind in kinds and m.peek(letter) == Verdict.VIOLATED]
        return Decision(action, not violated, violated)

    def allowed(self, state, actions=None):
        actions = sorted(actions if actions is not None else self.actions)
        decisions = [self.check(state, a) for a in actions]
        ok = [d.action for d in decisions if d.allowed]
        if ok or not actions:
            return ok, decisions
        hard = [self.check(state, a, kinds=("hard",)) for a in actions]
        fallback = [d.action for d in hard if d.allowed]
        self.conflicts.append(Conflict(self.steps, sorted(state),
                                       {d.action: [law.formula for law in d.violated] for d in decisions}, fallback))
        return fallback, hard

    def commit(self, state, action):
        letter = frozenset(state) | {action}
        for law, m in self.monitors:
            if m.step(letter) == Verdict.VIOLATED:
                self.broken.append((self.steps, law.formula))
                if self.restart_violated:
                    m.reset()
        self.steps += 1


ACTIONS = ("a", "b", "c")
STATE = ("p", "q", "r", "s")


@pytest.mark.parametrize("backend", ["native"] + (["spot"] if spot_available() else []))
def test_the_shield_decides_as_it_did_when_each_law_took_its_own_letter(backend):
    rng = random.Random(43)
    conflicts = broken = 0
    for _ in range(40):
        laws, formulas = [], set()
        while len(laws) < 6:
            f = random_formula(rng, ACTIONS + STATE, depth=3)
            if f not in formulas and f.atoms():
                formulas.add(f)
                laws.append(Law(str(f), kind=rng.choice(["hard", "soft"])))
        restart = rng.random() < 0.5
        new, old = (cls(laws, ACTIONS, STATE, backend, restart_violated=restart) for cls in (Shield, OncePerLaw))
        for _ in range(12):
            state = [p for p in STATE if rng.random() < 0.5]
            got, want = new.allowed(state), old.allowed(state)
            assert got == want
            action = rng.choice(got[0] or list(ACTIONS))
            assert new.check(state, action, ("hard",)) == old.check(state, action, ("hard",))
            new.commit(state, action)
            old.commit(state, action)
        assert (new.conflicts, new.broken) == (old.conflicts, old.broken)
        conflicts += len(new.conflicts)
        broken += len(new.broken)
    assert conflicts and broken  # the fallback and the broken laws are exercised, not only plain allows
