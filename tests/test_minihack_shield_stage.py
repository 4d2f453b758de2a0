"""The minihack_shield stage: the random actor without and under MiniHack's hand-written laws and
the expert under them, per-episode rows in data/minihack/shield/episodes.csv, its record and the
report's section."""
import csv
import json

import pytest

from regula import envs, params, stages
from regula.errors import ParamsError
from regula.ltlcrit.actors import Actor, Choice
from regula.ltlcrit.transfer import shielded_episode
from regula.minihack_shield import rows_path
from regula.report.sections import minihack as section
from regula.stages import Paths

MH = envs.get("minihack")
LAW_NAMES = {law.name for law in MH.hard_laws()}


def run_stage(root, **shield):
    return stages.execute("minihack_shield", params.validate({"minihack": {"shield": shield}}), Paths(root))


def rows(root) -> list[dict]:
    with open(rows_path(Paths(root)), newline="") as fh:
        return list(csv.DictReader(fh))


def test_rows_are_identical_twice_and_the_record_sums_them(tmp_path):
    headline = run_stage(tmp_path / "a", episodes=3)
    run_stage(tmp_path / "b", episodes=3)
    first, second = (rows_path(Paths(tmp_path / d)).read_bytes() for d in "ab")
    assert first == second
    assert (tmp_path / "a" / "metrics" / "minihack_shield_detail.json").read_bytes() == \
        (tmp_path / "b" / "metrics" / "minihack_shield_detail.json").read_bytes()
    got = rows(tmp_path / "a")
    assert [(r["task"], r["agent"], r["shield"], r["seed"]) for r in got] == [
        (t, a, s, str(seed)) for t in ("lava_cross", "wand_of_death")
        for a, s in (("random", "none"), ("random", "laws"), ("expert", "laws")) for seed in (100, 101, 102)]
    for r in got:
        if r["shield"] == "none":
            assert r["refused"] == r["refused_steps"] == r["fallback"] == "0" and r["refused_by"] == ""
        if r["agent"] == "expert":  # the laws refuse nothing the expert does, and it finishes
            assert (r["success"], r["death"], r["refused"], r["refused_by"]) == ("1", "", "0", "")
            assert r["unlocked_by"].split()[-1] == "reach_stairs:expert"
        # every refusal is put down to the laws that made it: at least one law per refused proposal
        laws = dict(p.rsplit(":", 1) for p in r["refused_by"].split())
        assert set(laws) <= LAW_NAMES and sum(map(int, laws.values())) >= int(r["refused"])
        assert int(r["refused_steps"]) <= int(r["skills"]) and r["broken"] == "0"
    assert any(int(r["refused"]) for r in got if r["shield"] == "laws" and r["agent"] == "random")
    detail = json.loads((tmp_path / "a" / "metrics" / "minihack_shield_detail.json").read_text())
    assert detail["seeds"] == [100, 103] and detail["laws"] == 28 and detail["max_skills"] == 60
    for g in detail["rows"]:
        mine = [r for r in got if (r["task"], r["agent"], r["shield"]) == (g["task"], g["agent"], g["shield"])]
        assert g["episodes"] == 3 and g["success"] == sum(int(r["success"]) for r in mine)
        assert g["refused"] == sum(int(r["refused"]) for r in mine)
        assert sum(g["deaths"].values()) == sum(bool(r["death"]) for r in mine)
    under = [r for r in got if r["agent"] == "random" and r["shield"] == "laws"]
    assert headline == {"minihack_shield_random_success": round(sum(int(r["success"]) for r in under) / 6, 4)}
    assert json.loads((tmp_path / "a" / "metrics" / "minihack_shield.json").read_text()) == headline
    assert [sum(p[k] for k in ("both", "laws_only", "none_only", "neither")) for p in detail["paired"]] == [3, 3]

    text = "\n".join(section.shield(Paths(tmp_path / "a")))
    lines = text.splitlines()
    assert lines[0] == "## The LTLCrit shield on MiniHack (issue 38)"
    table = [line for line in lines if line.startswith("| lava_cross | random, laws | ")]
    assert len(table) == 1 and table[0].split(" | ")[2].endswith("/3 (0-56%)")  # k/n (Wilson interval)
    assert "The expert under the laws: 6/6 reached the stairs, 0 of its skills refused." in text
    assert "it has no MiniHack numbers" in text


class East(Actor):
    """Proposes `move e` and nothing else: on lava_cross it walks to the river and into it."""
    name = "east"

    def choose(self, view):
        return Choice("move e")


def test_a_refusal_is_recorded_with_the_law_that_made_it():
    laws = MH.hard_laws()
    bare = shielded_episode(MH, 0, East(), None, "reach_stairs", 12, task="lava_cross")
    assert bare["death"] == "lava" and bare["refused"] == 0
    kept = shielded_episode(MH, 0, East(), laws, "reach_stairs", 12, task="lava_cross")
    assert kept["death"] == "" and kept["refused"] > 0
    # each step at the bank: `move e` four times refused (three re-plans), then the shield's draw
    assert kept["refused_by"] == {"no_lava_e": kept["refused"]} and kept["refused"] == 4 * kept["fallback"]
    assert kept["refused_steps"] == kept["fallback"] and all(who in ("actor", "fallback")
                                                              for who in kept["unlocked_by"].values())


@pytest.mark.parametrize("shield, expected", [
    ({"episodes": 51}, "params: minihack.shield.episodes 51 is more than minihack.eval's 50 seeds: the shield is "
                       "measured on the held-out seeds only"),
    ({"episodes": 0}, "params: minihack.shield.episodes must be >= 1, got 0"),
    ({"max_skills": 0}, "params: minihack.shield.max_skills must be >= 1, got 0"),
    ({"tasks": []}, "params: minihack.shield.tasks must list at least one value, got []"),
    ({"tasks": ["lava"]}, "params: minihack.shield.tasks[0]: 'lava' is not one of lava_cross, lava_freeze, quest, wand_of_death"),
    ({"actor": "greedy"}, "params: unknown key 'minihack.shield.actor'; known keys under 'minihack.shield': episodes, "
                          "max_skills, tasks"),
])
def test_bad_shield_params_are_one_line(shield, expected):
    with pytest.raises(ParamsError) as err:
        params.validate({"minihack": {"shield": shield}})
    assert str(err.value) == expected


def test_the_report_leaves_the_section_out_before_the_stage_ran(tmp_path):
    assert section.shield(Paths(tmp_path)) == []
