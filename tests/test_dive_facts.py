"""DiVE's propositional discovery and verification (`regula.dive.facts`) on MiniHack's
demonstrations (the stage's seed 0, played here: data/minihack/demos is a DVC output a fresh
clone does not hold) and the expert's episodes on eval seeds 100-109."""
from functools import cache

import pytest

from regula import envs
from regula.dive import facts
from regula.errors import RegulaError
from regula.minihack_demos import run_episode

MH = envs.get("minihack")


@cache
def _demo(task):
    return run_episode({"seed": 0, "env": "minihack", "task": task, "level": MH.level(task), "max_skills": 200})


def demos(task):
    return [_demo(task)]


@pytest.fixture(scope="module")
def lava_checks():
    level = MH.level("lava_cross")
    return [run_episode({"seed": s, "env": "minihack", "task": "lava_cross", "level": level, "max_skills": 200})
            for s in range(100, 110)]


def test_the_demonstration_shows_the_ring_and_the_result_is_deterministic():
    first = facts.learn(MH, "lava_cross", demos("lava_cross"), [])
    assert first == facts.learn(MH, "lava_cross", demos("lava_cross"), [])
    for true in ("put_on ring gives levitating", "put_on ring gives ring_worn", "pick_up gives has_ring"):
        assert true in first["verified_facts"]
    assert (first["discovered"]["found"], first["discovered"]["correct"]) == (30, 5)
    assert (first["verified"]["found"], first["verified"]["correct"]) == (13, 3)
    # one success of pick_up: holding item_here once is no evidence it is needed (the chance test)
    assert "pick_up requires item_here" not in first["verified_facts"]


def test_further_episodes_reject_what_the_one_demonstration_happened_to_show(lava_checks):
    r = facts.learn(MH, "lava_cross", demos("lava_cross"), lava_checks)
    rejected = {x["fact"]: x for x in r["rejected"]}
    # the demo's agent stood next to lava when it went for the ring; seed 103's did not
    assert rejected["go_to ring requires next_to_lava"]["reason"] == "succeeded without next_to_lava"
    assert rejected["go_to ring requires next_to_lava"]["evidence"].startswith("seed 1")
    assert "go_to stairs gives over_lava" in rejected
    # ten more successes of pick_up make item_here's requirement evidence
    assert "pick_up requires item_here" in r["verified_facts"]
    assert (r["verified"]["found"], r["verified"]["correct"], r["verified"]["truth"]) == (9, 5, 13)
    # the ring worn implies the ring held in every state: the weaker requirement goes
    assert rejected["go_to stairs requires has_ring"]["reason"].startswith("implied by go_to stairs requires")
    assert r["verified"]["precision"] > r["discovered"]["precision"]
    assert r["missed"]["lava kills agent unless levitating"].startswith("`kills` is an outcome")
    assert r["missed"]["remove ring removes ring_worn"] == "the demonstration has no successful remove ring"


def test_a_name_no_experience_saw_is_rejected():
    b = facts.bank(MH, demos("wand_of_death"))
    wrong = facts.Candidate(facts.Fact("zap wand", "requires", "next_to_lava"), 1)
    right = facts.Candidate(facts.Fact("pick_up", "gives", "has_wand"), 1)
    v = facts.Verifier().verify([wrong, right], b)
    assert [c.fact for c in v.verified] == [right.fact]
    assert v.reason(wrong.fact) == "names 'next_to_lava', which no experience saw true"


def step(t, skill, before, after, success=True, cause=None):
    return {"t": t, "skill": skill, "props_before": before, "props_after": after, "success": success,
            "cause": cause}


def test_a_refusal_the_successes_never_saw_is_a_prevention():
    ep = {"header": {"seed": 7}, "steps": [
        step(0, "descend", ["levitating", "on_stairs"], ["levitating", "on_stairs"], False, {"kind": "invalid"}),
        step(1, "remove ring", ["levitating", "on_stairs"], ["on_stairs"]),
        step(2, "descend", ["on_stairs"], []),
        step(3, "zap wand w", ["has_wand"], ["has_wand"]),
    ]}
    b = facts.bank(MH, [ep])
    assert sorted(b.steps) == ["descend", "remove ring", "zap wand"]
    found = {c.fact for c in facts.Discoverer().discover(b)}
    assert facts.Fact("descend", "prevented_by", "levitating") in found
    assert facts.Fact("remove ring", "removes", "levitating") in found
    v = facts.Verifier(chance=1.0).verify(facts.Discoverer().discover(b), b)
    assert facts.Fact("descend", "prevented_by", "levitating") in {c.fact for c in v.verified}


def test_a_family_without_propositional_facts_is_refused_in_one_line():
    with pytest.raises(RegulaError, match="'crafter' gives no propositional facts") as e:
        facts.learn(envs.get("crafter"), "any", [], [])
    assert "\n" not in str(e.value)
    assert isinstance(MH, envs.FactSpec) and not isinstance(envs.get("crafter"), envs.FactSpec)


def test_a_fact_names_a_skill_without_its_direction():
    assert MH.fact_element("zap wand e") == "zap wand" and MH.fact_element("move nw") == "move"
    assert MH.fact_element("put_on ring") == "put_on ring" and MH.fact_element("go_to stairs") == "go_to stairs"
    assert {"requires", "gives", "removes", "prevented_by", "kills"} <= set(MH.fact_attributes())


def test_of_two_requirements_one_implies_the_more_specific_stays():
    steps = [step(t, "fight", ["monster_adjacent", "monster_in_view"], ["monster_in_view"]) for t in range(3)]
    steps += [step(t, "wait", ["monster_in_view"] if t % 2 else [], []) for t in range(3, 9)]
    b = facts.bank(MH, [{"header": {"seed": 1}, "steps": steps}])
    v = facts.Verifier(chance=1.0).verify(facts.Discoverer().discover(b), b)
    fight = sorted(c.fact.text() for c in v.verified if c.fact.element == "fight")
    assert fight == ["fight removes monster_adjacent", "fight requires monster_adjacent"]
    assert v.reason(facts.Fact("fight", "requires", "monster_in_view")).startswith(
        "implied by fight requires monster_adjacent")
