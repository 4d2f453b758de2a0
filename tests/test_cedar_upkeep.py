"""CEDAR's rollouts with the survival layer (`cedar.upkeep`) and the witness check as a param."""
import random
from dataclasses import asdict

import pytest

from regula import params as P
from regula.cedar import stage
from regula.cedar.library import Library, SkillWorld
from stage_configs import cedar_budget
from regula.errors import ParamsError


class _Step:
    def __init__(self, skill, success, kind=None):
        self.skill, self.success = skill, success
        self.cause = None if success else {"kind": kind}


class _Base:
    """A world whose `letter` is interrupted by a zombie once, then succeeds."""

    done = False

    def __init__(self):
        self.ran, self.interrupted = [], False

    def run_skill(self, skill, until=None, interrupt=None):
        self.ran.append((skill, interrupt is not None))
        if skill == "collect_wood" and not self.interrupted:
            self.interrupted = True
            return _Step(skill, False, "interrupted")
        return _Step(skill, True)


class _Survival:
    def __init__(self, due):
        self.due = list(due)

    def survival_skill(self):
        skill = self.due.pop(0) if self.due else None  # None in the list: nothing due at that asking
        return (skill, None) if skill else None

    def interrupt(self, skill, goal):
        return None

    def zombie_close(self, world):
        return None


def test_upkeep_runs_survival_outside_the_word_and_retries_an_interrupted_letter():
    base = _Base()
    world = SkillWorld(base, Library(), cedar_budget(upkeep=True), random.Random(0),
                       survival=_Survival(["collect_drink", None, "defeat_zombie"]))
    step = world.run_skill("collect_wood")
    assert step.success
    # survival first, the letter (interrupted), the zombie fought, the letter again
    assert base.ran == [("collect_drink", False), ("collect_wood", True), ("defeat_zombie", False),
                        ("collect_wood", True)]
    assert [e.skill for e in world.events] == ["collect_wood"]  # the word sees the letter only
    assert world.calls == [1]


def test_without_upkeep_a_letter_runs_alone():
    base = _Base()
    world = SkillWorld(base, Library(), cedar_budget(), random.Random(0))
    assert world.survival is None
    assert not world.run_skill("collect_wood").success  # interrupted stays failed: no survival layer to retry
    assert base.ran == [("collect_wood", False)]


def test_budget_key_unchanged_when_upkeep_is_off():
    off = cedar_budget(max_calls=7)
    assert off.key() == {k: v for k, v in asdict(off).items() if k not in ("upkeep", "dig", "dug_calls", "seek", "arm", "call_retry", "call_held", "forage")}  # the EQ caches' old keys
    assert cedar_budget(max_calls=7, upkeep=True).key() == {**off.key(), "upkeep": True}


def test_stage_passes_witnesses_and_upkeep(monkeypatch):
    params = P.load("params.yaml", {"cedar.witnesses": 5, "cedar.upkeep": True})
    assert stage.budget(params).upkeep is True
    seen = {}

    def fake_learn(letters_for, teacher, oracle_for, expansions, options, **kw):
        seen.update(options)
        raise RuntimeError("stop")

    monkeypatch.setattr(stage, "learn_skill", fake_learn)

    class _Retriever:
        alphabet = type("A", (), {"names": lambda self, kind: [], "split_skill": lambda self, a: type(
            "S", (), {"objects": ()})()})()

        def task_text(self, skill):
            return skill

    with pytest.raises(RuntimeError):
        stage.learn(params, __import__("pathlib").Path("/nonexistent"), "collect_wood", _Retriever(), None,
                    Library(), None)
    assert seen["witnesses"] == 5


def test_witnesses_must_not_be_negative():
    with pytest.raises(ParamsError, match="witnesses"):
        P.load("params.yaml", {"cedar.witnesses": -1})
