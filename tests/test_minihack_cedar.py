"""CEDAR on MiniHack (`regula.cedar.fact_skill`, stage minihack_cedar): the teacher simulates words
over the facts it is given, the world's labels of a rollout, the learned DFA of a small task, the
stage (identical twice, its record, its params' refusals, the report's section)."""
import csv
import json
from functools import cache

import pytest

from regula import envs, params, stages
from regula.automata.dfa import DFA
from regula.cedar import fact_skill
from regula.dive import fact_study
from regula.dive.fact_agent import Knowledge
from regula.dive.facts import Fact
from regula.errors import ParamsError
from regula.minihack_demos import run_episode
from regula.report.sections import minihack as section
from regula.stages import Paths

MH = envs.get("minihack")


@cache
def demo(task: str) -> dict:
    return run_episode({"seed": 0, "env": "minihack", "task": task, "level": MH.level(task), "max_skills": 200})


def ring_facts(*drop: str) -> Knowledge:
    """Lava Crossing's chain as facts: the ring is picked up where it lies, put on, and only a
    levitating agent goes to the stairs."""
    facts = [Fact("go_to ring", "gives", "item_here"), Fact("pick_up", "requires", "item_here"),
             Fact("pick_up", "gives", "has_ring"), Fact("pick_up", "removes", "item_here"),
             Fact("put_on ring", "requires", "has_ring"), Fact("put_on ring", "gives", "levitating"),
             Fact("go_to stairs", "requires", "levitating")]
    return Knowledge(f for f in facts if f.text() not in drop)


def test_the_teacher_simulates_words_over_the_facts_it_is_given():
    teacher = fact_skill.FactTeacher(MH, ring_facts(), demo("lava_cross"))
    word = ("go_to ring", "pick_up", "put_on ring", "go_to stairs")
    assert teacher.truth(word) and teacher.refused(word) is None
    # a word missing a required skill is refused where the requirement fails
    assert not teacher.truth(("go_to ring", "put_on ring", "go_to stairs"))
    assert teacher.refused(("go_to ring", "put_on ring", "go_to stairs")) == 1
    assert not teacher.truth(("go_to stairs",)) and teacher.refused(("go_to stairs",)) == 0
    assert not teacher.truth(word[:3])  # the goal's skill never ran
    assert teacher.truth(word + ("pick_up",))  # done once the goal's skill ran, whatever follows
    # the subgoals' skills must come in the demonstration's order, even where no fact forbids another
    loose = fact_skill.FactTeacher(MH, Knowledge([]), demo("lava_cross"))
    assert loose.truth(("pick_up", "put_on ring", "go_to stairs"))
    assert not loose.truth(("put_on ring", "pick_up", "go_to stairs"))
    # without the requirement the facts say the ring can be skipped: the teacher says so too
    blind = fact_skill.FactTeacher(MH, ring_facts("go_to stairs requires levitating"), demo("lava_cross"))
    assert blind.truth(("go_to ring", "pick_up", "put_on ring", "go_to stairs"))
    assert not blind.truth(("pick_up", "put_on ring", "go_to stairs"))  # pick_up still needs the ring under it


def test_the_demonstration_and_a_rollout_label_their_words():
    record = fact_skill.demo_record(demo("lava_cross"), "reach_stairs")
    assert dict(fact_skill.labelled(record)) == {
        (): False, ("go_to ring",): False, ("go_to ring", "pick_up"): False,
        ("go_to ring", "pick_up", "put_on ring"): False, ("go_to ring", "pick_up", "put_on ring", "go_to stairs"): True}
    # a DFA that accepts only `go_to stairs`: the world refuses it (the lava), and nothing accepting is left
    letters = fact_skill.alphabet(demo("lava_cross"))
    table = {"s": {a: ("t" if a == "go_to stairs" else "x") for a in letters}, "t": {}, "x": {}}
    dfa = DFA.from_table(letters, table, "s", {"t"})
    played = fact_skill.play(MH, "lava_cross", dfa, 1, max_skills=6)
    assert ["go_to stairs"] in played["refuted"] and not played["label"]
    assert played == fact_skill.play(MH, "lava_cross", dfa, 1, max_skills=6)  # seeded by the task, DFA and world
    oracle = fact_skill.WorldEquivalence(MH, "lava_cross", (1,), max_skills=6)
    assert fact_skill.Counterexample(("go_to stairs",), False) in oracle.observe(dfa)


def test_the_learned_dfa_of_lava_crossing_accepts_the_demonstration_and_reaches_the_stairs(monkeypatch):
    def read_the_truth(*_):
        raise AssertionError("the ground truth (dynamics.yaml) is for scoring only")

    monkeypatch.setattr(MH, "ground_truth", read_the_truth)
    checks = [fact_study.explore_episode(MH, "lava_cross", s, 0.3, 100) for s in (1, 2, 3)]
    first = fact_skill.learn_skill(MH, "lava_cross", demo("lava_cross"), checks, (1, 2), noise=0.1, max_rounds=10)
    assert first.error == "" and first.rounds >= 1 and first.membership_words > 0
    assert first.dfa.accepts(fact_skill.demo_word(demo("lava_cross")))
    assert first.letters == ("go_to ring", "pick_up", "put_on ring", "go_to stairs")
    assert fact_skill.play(MH, "lava_cross", first.dfa, 110, max_skills=20)["success"]
    again = fact_skill.learn_skill(MH, "lava_cross", demo("lava_cross"), checks, (1, 2), noise=0.1, max_rounds=10)
    assert again.to_json() == first.to_json() and again.dfa == first.dfa


def run_stage(root, **cedar):
    (root / "data" / "minihack").mkdir(parents=True, exist_ok=True)
    dive = {"seeds": {"start": 110, "count": 2}, "explore": {"start": 1, "count": 3}}
    p = params.validate({"minihack": {"tasks": ["lava_cross"], "cedar": cedar, "dive": dive}})
    stages.execute("minihack_demos", p, Paths(root))
    return stages.execute("minihack_cedar", p, Paths(root))


def test_the_stage_is_identical_twice_and_its_record_sums_its_rows(tmp_path):
    small = {"worlds": {"start": 1, "count": 2}, "max_rounds": 10, "max_queries": 500}
    headline = run_stage(tmp_path / "a", **small)
    run_stage(tmp_path / "b", **small)
    for rel in ("data/minihack/cedar/episodes.csv", "data/minihack/cedar/lava_cross.json",
                "data/minihack/cedar/lava_cross.dot", "metrics/minihack_cedar_detail.json",
                "metrics/minihack_cedar.json"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    with open(tmp_path / "a" / "data/minihack/cedar/episodes.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["condition"], r["seed"]) for r in rows] == [(c, str(s)) for c in ("cedar", "demo_replay")
                                                           for s in (110, 111)]
    detail = json.loads((tmp_path / "a" / "metrics/minihack_cedar_detail.json").read_text())
    ours = [r for r in rows if r["condition"] == "cedar"]
    assert headline["minihack_cedar_success"] == detail["minihack_cedar_success"] == round(
        sum(int(r["success"]) for r in ours) / 2, 4)
    for g in detail["rows"]:
        assert g["successes"] == sum(int(r["success"]) for r in rows if r["condition"] == g["condition"])
    skill = detail["skills"][0]
    dfa = DFA.load(tmp_path / "a" / "data/minihack/cedar/lava_cross.json")
    assert dfa.size == skill["states"] and dfa.accepts(skill["demo_word"]) == skill["accepts_demo_word"]
    lines = section.cedar(Paths(tmp_path / "a"))
    assert lines[0] == "## CEDAR on MiniHack: one skill DFA per task (issue 38)"
    text = "\n".join(lines)
    assert "| lava_cross | go_to ring, pick_up, put_on ring, go_to stairs |" in text
    assert "What does not, and why" in text


@pytest.mark.parametrize("mh, message", [
    ({"tasks": ["lava_cross"], "cedar": {"tasks": ["quest"]}},
     "minihack.cedar.tasks ['quest'] are not in minihack.tasks: a skill is learned from the task's demonstration, "
     "recorded only for minihack.tasks"),
    ({"cedar": {"worlds": {"start": 99, "count": 3}}},
     "minihack.cedar.worlds [100, 101] lie in minihack.eval: the equivalence rounds must play dev seeds, never the "
     "held-out ones"),
    ({"cedar": {"noise": 0.5}}, "minihack.cedar.noise must be in [0, 0.5), got 0.5"),
    ({"cedar": {"max_rounds": 0}}, "minihack.cedar.max_rounds must be >= 1, got 0"),
])
def test_bad_cedar_params_are_one_line(mh, message):
    with pytest.raises(ParamsError) as err:
        params.validate({"minihack": mh})
    assert str(err.value).splitlines() == [f"params: {message}"]
