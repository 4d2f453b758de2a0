"""The LTLCrit shield on MiniHack: the hand-written safety laws (src/regula/envs/minihack/laws.yaml)
over the adapter's propositions, checked through the same shield and the same family interface
as on Crafter (`regula.ltlcrit.transfer`)."""
import pytest

from regula import envs
from regula.errors import RegulaError
from regula.logic import Shield
from regula.logic.laws import LawError
from regula.ltlcrit.actors import RandomActor
from regula.ltlcrit.transfer import expert_under_shield, shielded_episode, tally

MH = envs.get("minihack")
LAWS = MH.hard_laws()
ATOMS = [envs.action_atom(s) for s in MH.skill_names()]


def shield():
    return Shield(LAWS, ATOMS, MH.proposition_names())


def state(ep):
    return envs.true_props(ep.props())


def test_the_laws_load_over_the_adapters_atoms():
    assert len(LAWS) == 28 and all(law.kind == "hard" and law.source == "hand" for law in LAWS)
    assert envs.action_atom("zap wand e") == "zap_wand_e" and envs.action_atom("collect_wood") == "collect_wood"
    used = set().union(*(law.parsed.atoms() for law in LAWS))
    assert {"move_e", "lava_e", "levitating", "over_lava", "remove_ring"} <= used
    assert used <= set(MH.proposition_names()) | set(ATOMS)


def test_the_shield_refuses_lava_without_levitation_and_allows_it_levitating():
    ep = MH.make(0, task="lava_cross")
    sh = shield()
    while not ep.props()["lava_e"]:  # east to the river's bank
        now = state(ep)
        assert sh.check(now, "move_e").allowed
        sh.commit(now, "move_e")
        assert ep.run_skill("move e").success
    now = state(ep)
    blocked = sh.check(now, "move_e")
    assert not blocked.allowed and [law.name for law in blocked.violated] == ["no_lava_e"]
    assert "move_e is blocked by 1 law: G(lava_e & !levitating -> !move_e)" in blocked.explain()
    assert sh.check(now, "move_w").allowed
    for skill in ("go_to ring", "pick_up", "put_on ring"):
        sh.commit(state(ep), envs.action_atom(skill))
        assert ep.run_skill(skill).success
    while not ep.props()["lava_e"]:  # back to the bank, floating now
        sh.commit(state(ep), "move_e")
        ep.run_skill("move e")
    assert ep.props()["levitating"] and sh.check(state(ep), "move_e").allowed
    sh.commit(state(ep), "move_e")
    assert ep.run_skill("move e").success and not ep.dead
    over = state(ep)
    assert "over_lava" in over
    assert [law.name for law in sh.check(over, "remove_ring").violated] == ["keep_ring_over_lava"]
    ep.run_skill("remove ring")  # what the law forbids: the agent drops into the lava
    assert ep.dead and ep.death == "Burned by molten lava."
    assert MH.death_cause(ep) == "lava"


def test_with_the_wand_and_the_minotaur_in_line_the_laws_leave_the_zap_alone():
    sh = shield()
    allowed, _ = sh.allowed(["has_wand", "minotaur_alive", "minotaur_e", "minotaur_in_view", "stairs_seen"])
    assert allowed == ["zap_wand_e"]
    allowed, _ = sh.allowed(["minotaur_alive", "minotaur_adjacent", "minotaur_e", "minotaur_in_view"])
    assert {"fight", "go_to_minotaur", "go_to_stairs"}.isdisjoint(allowed) and "move_w" in allowed
    assert [a for a in allowed if a.startswith("zap_wand")] == ["zap_wand_e"]  # at the minotaur alone


@pytest.mark.parametrize("text, says", [
    ("- G(lava_up & !levitating -> !move_e)\n", "law 1 (G(lava_up & !levitating -> !move_e)) uses unknown atom lava_up"),
    ("- G(lava_e -> !move e)\n", "law 1: "),
    ("- {formula: G(!fight), name: a}\n- {formula: G(fight), name: b}\n", "hard laws 1 (a) and 2 (b) contradict"),
])
def test_a_bad_law_file_is_refused_in_one_line(tmp_path, text, says):
    path = tmp_path / "laws.yaml"
    path.write_text(text)
    from regula.envs.minihack.laws import hard_laws
    with pytest.raises(LawError) as err:
        hard_laws(path)
    assert says in str(err.value) and "\n" not in str(err.value) and str(path) in str(err.value)


@pytest.mark.parametrize("task", ["lava_cross", "wand_of_death", "quest"])
def test_the_laws_refuse_nothing_the_expert_does(task):
    for seed in (1, 2, 3):
        out = expert_under_shield(MH, seed, LAWS, task=task)
        assert out["success"] and out["refused"] == [] and out["death"] == "", out


def test_the_shield_keeps_a_random_actor_out_of_the_lava():
    seeds = range(5)
    bare = tally([shielded_episode(MH, s, RandomActor(), None, "reach_stairs", 60, task="lava_cross") for s in seeds])
    kept = tally([shielded_episode(MH, s, RandomActor(), LAWS, "reach_stairs", 60, task="lava_cross") for s in seeds])
    assert bare["deaths"].get("lava", 0) >= 2 and bare["refused"] == 0
    assert kept["deaths"] == {} and kept["refused"] > 0 and kept["broken"] == 0
    assert sum(v for k, v in kept["refused_by"].items() if k.startswith("no_lava_")) > 0


def test_bad_budgets_are_refused():
    with pytest.raises(RegulaError, match="max_skills must be >= 1"):
        shielded_episode(MH, 0, RandomActor(), LAWS, "reach_stairs", 0, task="lava_cross")
