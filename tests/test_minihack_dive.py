"""DiVE on MiniHack: the hierarchy read from a demonstration, the evolver's chains over facts, subgoal
conditions in a skill's own frame, the stage minihack_dive (identical twice, its record, its
params' refusals, the report's section) and the adapter's reuse of NetHack envs."""
import csv
import json
from functools import cache

import pytest

from regula import envs, params, stages
from regula.dive import facts
from regula.dive.fact_agent import FactAgent, Knowledge, hierarchy
from regula.dive.facts import Bank, Condition, Fact, Step
from regula.envs.minihack import env as mh_env
from regula.errors import ParamsError
from regula.minihack_demos import run_episode
from regula.report.sections import minihack as section
from regula.stages import Paths

MH = envs.get("minihack")


@cache
def demo(task: str) -> dict:
    return run_episode({"seed": 0, "env": "minihack", "task": task, "level": MH.level(task), "max_skills": 200})


def test_the_hierarchy_is_the_demonstrations_unlocks_in_order():
    plan = hierarchy(MH, demo("lava_cross"))
    assert [(g.achievement, g.action) for g in plan.subgoals] == [
        ("pick_up_ring", "pick_up"), ("put_on_ring", "put_on ring"), ("cross_lava", "go_to stairs"),
        ("reach_stairs", "go_to stairs")]
    assert plan.replay == ["go_to ring", "pick_up", "put_on ring", "go_to stairs"]
    # an element stands for every direction; the demonstration's own skill of it comes first
    wod = hierarchy(MH, demo("wand_of_death"))
    assert ("kill_minotaur", "zap wand") in [(g.achievement, g.action) for g in wod.subgoals]
    assert wod.skills["zap wand"] == ["zap wand e"]


def test_the_evolver_chains_requirements_and_preventers_back_to_the_action():
    k = Knowledge([Fact("pick_up", "requires", "item_here"), Fact("go_to ring", "gives", "item_here"),
                   Fact("pick_up", "prevented_by", "levitating"), Fact("remove ring", "removes", "levitating"),
                   Fact("put_on ring", "requires", "has_ring")])
    assert k.chain("pick_up", frozenset()) == ["go_to ring", "pick_up"]
    assert k.chain("pick_up", frozenset({"levitating"})) == ["go_to ring", "remove ring", "pick_up"]
    assert k.chain("pick_up", frozenset({"item_here"})) == ["pick_up"]
    assert k.chain("put_on ring", frozenset()) is None  # nothing known gives has_ring


def _step(skill, before, after=(), unlocked=(), seed=0, t=0):
    return Step(MH.fact_element(skill), skill, seed, t, frozenset(before), frozenset(after), True, "", tuple(unlocked))


def test_a_subgoal_condition_is_read_in_the_skills_frame_and_must_not_be_chance():
    assert MH.relative_props("zap wand ne", {"minotaur_ne", "lava_e"}) == {"minotaur_ahead"}
    assert MH.relative_props("move e", {"minotaur_ne", "lava_e"}) == {"lava_ahead"}
    assert MH.relative_props("wait", {"lava_e"}) == frozenset()
    b = Bank()
    # two kills, zapped east and north at a minotaur in line; ten zaps at nothing
    b.steps["zap wand"] = ([_step("zap wand e", {"has_wand", "minotaur_e"}, unlocked=["kill_minotaur"], t=1),
                            _step("zap wand n", {"has_wand", "minotaur_n"}, unlocked=["kill_minotaur"], seed=1)]
                           + [_step("zap wand w", {"has_wand"}, seed=2, t=t) for t in range(10)])
    found = facts.discover_conditions(MH, b)
    assert [c.text() for c in found] == ["zap wand unlocks kill_minotaur when has_wand",
                                        "zap wand unlocks kill_minotaur when minotaur_ahead"]
    kept, rejected = facts.verify_conditions(MH, found, b)
    assert kept == [Condition("kill_minotaur", "zap wand", "minotaur_ahead")]  # before 2 of 12 zaps: (1/6)^2 < 0.05
    assert rejected[0][1].startswith("has_wand holds before 100% of zap wand's steps")
    b.steps["zap wand"].append(_step("zap wand s", {"has_wand"}, unlocked=["kill_minotaur"], seed=3))
    kept, rejected = facts.verify_conditions(MH, found, b)
    assert kept == [] and rejected[1][1] == "unlocked kill_minotaur without minotaur_ahead (seed 3, step 0 (zap wand s))"


def test_the_agent_zaps_the_way_the_condition_holds_and_waits_otherwise():
    plan = hierarchy(MH, demo("wand_of_death"))
    b = Bank()
    b.steps["wait"] = [_step("wait", {"has_wand"}, {"has_wand", "minotaur_s"})]
    k = Knowledge([], [Condition("kill_minotaur", "zap wand", "minotaur_ahead")], b)
    agent = FactAgent(MH, "dive", k, plan, seed=0)
    held = frozenset({"has_wand", "minotaur_alive"})
    assert agent.choose(held | {"minotaur_sw"}, ["pick_up_wand"]) == ("zap wand sw", "action")
    assert agent.choose(held, ["pick_up_wand"]) == ("wait", "evolved")  # what made the condition hold before
    # without the evolver nothing says to wait: the zap is tried the demonstration's way
    assert FactAgent(MH, "no_evolver", k, plan, seed=0).choose(held, ["pick_up_wand"])[1] == "random"


def run_stage(root, **dive):
    (root / "data" / "minihack").mkdir(parents=True, exist_ok=True)
    p = params.validate({"minihack": {"tasks": ["wand_of_death"], "dive": dive}})
    stages.execute("minihack_demos", p, Paths(root))
    return stages.execute("minihack_dive", p, Paths(root))


def test_the_stage_is_identical_twice_and_its_record_sums_its_rows(tmp_path):
    small = {"conditions": ["dive", "no_dynamics", "demo_replay"], "seeds": {"start": 110, "count": 2},
             "explore": {"start": 1, "count": 4}}
    headline = run_stage(tmp_path / "a", **small)
    run_stage(tmp_path / "b", **small)
    for rel in ("data/minihack/dive/episodes.csv", "data/minihack/dive/learned.json",
                "metrics/minihack_dive_detail.json"):
        assert (tmp_path / "a" / rel).read_bytes() == (tmp_path / "b" / rel).read_bytes(), rel
    with open(tmp_path / "a" / "data/minihack/dive/episodes.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert [(r["condition"], r["seed"]) for r in rows] == [(c, str(s)) for c in small["conditions"] for s in (110, 111)]
    detail = json.loads((tmp_path / "a" / "metrics/minihack_dive_detail.json").read_text())
    dive = [r for r in rows if r["condition"] == "dive"]
    assert headline == {"minihack_dive_success": round(sum(int(r["success"]) for r in dive) / 2, 4)}
    for g in detail["rows"]:
        mine = [r for r in rows if r["condition"] == g["condition"]]
        assert g["successes"] == sum(int(r["success"]) for r in mine)
        assert g["episodes"] == 2
    # every decision is counted once, by how it was made
    for d in detail["decisions"]:
        mine = [r for r in rows if r["condition"] == d["condition"]]
        assert sum(d[h] for h in ("action", "evolved", "random", "retry", "replay")) == sum(int(r["skills"]) for r in mine)
    lines = section.dive(Paths(tmp_path / "a"))
    assert lines[0] == "## DiVE on MiniHack (seed 004, Tables 2 and 4; issue 38)"
    text = "\n".join(lines)
    assert "| w/o D&V&E | 0.72±0.17 | 0.20±0.00 | 0.41±0.29 |" in text.replace("| Table 4 ", "")
    assert "copy the demonstration (baseline)" in text


@pytest.mark.parametrize("dive, message", [
    ({"seeds": {"start": 90, "count": 20}}, "minihack.dive.seeds [90, 110) lie outside minihack.eval [100, 150): "
                                            "DiVE is measured on the held-out seeds only"),
    ({"explore": {"start": 95, "count": 7}}, "minihack.dive.explore seeds [100, 101] lie in minihack.eval: the "
                                             "Verifier's exploration must come from dev seeds, never the held-out ones"),
    ({"conditions": ["dive", "cot"]}, "minihack.dive.conditions[1]: 'cot' is not one of demo_replay, dive, no_dynamics, "
                                      "no_evolver, no_verifier, no_verifier_no_evolver, random"),
])
def test_bad_dive_params_are_one_line(dive, message):
    with pytest.raises(ParamsError) as err:
        params.validate({"minihack": {"dive": dive}})
    assert str(err.value).splitlines() == [f"params: {message}"]


def test_a_reused_env_plays_and_reports_its_death_as_a_new_one():
    def burn(seed):
        ep = MH.make(seed, task="lava_cross")
        while not ep.done:
            ep.run_skill("move e")
        return ep

    mh_env._IDLE.clear()
    first = burn(0)
    env, death, screen = first.env, first.death, first.end_screen
    del first  # its env goes back to the idle ones
    again = burn(0)
    assert again.env is env  # reused, not made again
    assert (again.death, again.end_screen) == (death, screen)
    assert death == "Burned by molten lava." and screen.count("died in") == 1


def test_the_altered_dynamics_verifier_rejects_the_demonstrations_coincidence(tmp_path):
    root = tmp_path / "r"
    (root / "data" / "minihack").mkdir(parents=True)
    p = params.validate({"minihack": {"tasks": ["lava_freeze"],
                                      "dive": {"conditions": ["dive"], "seeds": {"start": 110, "count": 2}}}})
    stages.execute("minihack_demos", p, Paths(root))
    stages.execute("minihack_dive", p, Paths(root))
    f = json.loads((root / "metrics/minihack_dive_detail.json").read_text())["facts"]["lava_freeze"]
    # the demonstration zapped from the bank; an exploration zap froze lava from farther away
    assert "zap wand unlocks freeze_lava when next_to_lava" in f["discovered_conditions"]
    assert "zap wand unlocks freeze_lava when next_to_lava" not in f["verified_conditions"]
    why = {r["condition"]: r["reason"] for r in f["rejected_conditions"]}
    assert why["zap wand unlocks freeze_lava when next_to_lava"].startswith("unlocked freeze_lava without next_to_lava")
    text = "\n".join(section.dive(Paths(root)))
    assert "### Altered dynamics (seed 004, §5.4): a wand to freeze the lava" in text
    assert "| zap wand unlocks freeze_lava when next_to_lava | unlocked freeze_lava without next_to_lava" in text
