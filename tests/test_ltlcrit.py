"""LTLCrit: law shape, gate, shield equivalence, rollouts, critics, loop and resume."""
import json
import random

import pytest

from regula import envs, episodes, params as params_mod, roles
from regula.logic import Law, Shield, load_laws
from regula.logic.parser import parse
from regula.ltlcrit import loop as loop_mod
from regula.ltlcrit.actors import Actor, Choice
from regula.ltlcrit.critic import CriticOutput, Evidence, Proposal, SymbolicCritic
from regula.ltlcrit.form import ShapeError, holds, normalise, read
from regula.ltlcrit.gate import gate
from regula.ltlcrit.loop import improve
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import rollout, summarize
from regula.errors import RegulaError, UnknownNameError
from conftest import needs_spot_platform
from stage_configs import loop_config, rollout_config

CRAFTER = envs.get("crafter")

MODEL = CrafterModel()
ATOMS, ACTIONS = MODEL.state_atoms, MODEL.actions


# -- the law shape ---------------------------------------------------------------------------
def test_both_forms_of_the_paper_law_read_the_same():
    assert normalise("G(has_wood & !has_2_wood -> X(collect_wood))", ATOMS, ACTIONS) == \
        "G(has_wood & !has_2_wood -> collect_wood)"
    assert normalise("G(has_wood & !has_2_wood -> collect_wood)", ATOMS, ACTIONS) == \
        "G(has_wood & !has_2_wood -> collect_wood)"
    assert normalise("G(!sleep)", ATOMS, ACTIONS) == "G(!sleep)"
    sa = read(Law("G(has_wood -> X(collect_wood | place_table))", kind="soft", source="efficiency"), ATOMS, ACTIONS)
    assert sa.applies({"has_wood"}) and not sa.applies(set())
    assert sa.permits("place_table") and not sa.permits("explore")


@pytest.mark.parametrize("formula, message", [
    ("F(collect_wood)", "does not start with G"),
    ("G(has_wood -> X(X(collect_wood)))", "phi_a (X collect_wood) must be a Boolean formula"),
    ("G(collect_wood -> X(place_table))", "phi_s may only use state propositions; it uses actions collect_wood"),
    ("G(has_wood -> X(has_2_wood))", "phi_a may only use actions; it uses state propositions has_2_wood"),
    ("G(has_wood -> X(fly))", "phi_a may only use actions; it uses unknown atoms fly"),
    ("G(has_wood -> X(collect_wood & place_table))", "no single action satisfies phi_a"),
])
def test_bad_shapes_say_what_is_wrong(formula, message):
    with pytest.raises(ShapeError, match=message.replace("(", r"\(").replace(")", r"\)")):
        normalise(formula, ATOMS, ACTIONS)


def _random_law(rng):
    def lit(pool):
        a = rng.choice(pool)
        return f"!{a}" if rng.random() < 0.5 else a
    phi_s = " & ".join(lit(ATOMS[:12]) for _ in range(rng.randint(1, 3)))
    acts = rng.sample(ACTIONS, rng.randint(1, 3))
    phi_a = f"!({' | '.join(acts)})" if rng.random() < 0.5 else " | ".join(acts)
    return Law(normalise(f"G({phi_s} -> X({phi_a}))", ATOMS, ACTIONS), kind="soft", source="efficiency")


@pytest.mark.parametrize("backend", ["native", pytest.param("spot", marks=needs_spot_platform)])
def test_shield_decisions_equal_propositional_evaluation(backend):
    """The shield runs monitors (Spot's automata or native progression); the gate evaluates the
    same (letter-form) laws propositionally. They must agree on every state and action."""
    rng = random.Random(7)
    laws = [_random_law(rng) for _ in range(12)]
    shield = Shield(laws, ACTIONS, ATOMS, backend)
    split = [read(law, ATOMS, ACTIONS) for law in laws]
    for _ in range(60):
        state = {a for a in ATOMS[:12] if rng.random() < 0.5}
        for action in ACTIONS:
            assert shield.check(state, action).allowed == all(s.allows(state, action) for s in split)


def test_shield_restarts_a_law_a_committed_action_broke():
    law = Law("G(has_wood -> collect_wood)", kind="soft", source="efficiency")
    for restart, expect in ((True, True), (False, False)):
        shield = Shield([law], ACTIONS, ATOMS, "native", restart_violated=restart)
        shield.commit({"has_wood"}, "explore")  # the fallback took an action the law forbids
        assert shield.broken == [(0, "G(has_wood -> collect_wood)")]
        assert shield.check({"has_wood"}, "collect_wood").allowed is expect


# -- the gate -----------------------------------------------------------------------------------
def _step(state, skill, after=None, success=True, cause=None, reason="", delta=None, unlocked=(), t=0, by="actor"):
    """A step record as `regula.episodes` writes it (what the critic and the gate read)."""
    return {"type": "step", "t": t, "by": by, "props_before": sorted(state), "skill": skill, "success": success,
            "reason": reason, "cause": cause, "props_after": sorted(state if after is None else after),
            "inventory": {k: max(v, 0) for k, v in (delta or {}).items()}, "inventory_delta": delta or {},
            "unlocked": list(unlocked), "refused": [], "conflict": 0}


def _evidence(states_actions, soft=()):
    steps = [_step(s, a, t=i) for i, (s, a) in enumerate(states_actions)]
    return Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": steps}],
                    MODEL.hard_laws(), list(soft))


def test_gate_rejects_with_reasons_and_keeps_the_rest(tmp_path):
    ev = _evidence([({"tree_on_map"}, "explore"), ({"tree_on_map", "has_wood"}, "collect_wood"),
                    ({"tree_on_map", "has_wood", "has_2_wood"}, "place_table")])
    out = CriticOutput(proposals=[
        Proposal("G(has_wood -> X(", "efficiency"),
        Proposal("G(has_wood -> X(fly))", "efficiency"),
        Proposal("G(has_iron_pickaxe -> X(collect_diamond))", "efficiency"),
        Proposal("G(has_wood & !has_2_wood -> X(collect_wood))", "efficiency", "more wood"),
        Proposal("G(has_wood & !has_2_wood -> X(collect_wood))", "efficiency"),
        Proposal("G(tree_on_map -> X(collect_stone))", "efficiency"),
        Proposal("G(has_2_wood -> X(place_table))", "vibes"),
    ])
    res = gate(out, ev, 0, "test")
    reasons = [r["reason"] for r in res.rejected]
    assert reasons[0].startswith("malformed: ")
    assert reasons[1].startswith("not of the form G(phi_s -> X(phi_a)): phi_a may only use actions")
    assert reasons[2] == "ungrounded: phi_s holds in none of the 3 observed states"
    assert reasons[3] == "already a law"
    assert reasons[4].startswith("over-constrains 3 observed states: with the kept laws no action would be left")
    assert reasons[5].startswith("unknown source 'vibes'")
    assert [law.formula for law in res.accepted] == ["G(has_wood & !has_2_wood -> collect_wood)"]
    assert res.accepted[0].provenance == {"iteration": 0, "critic": "test"}
    path = tmp_path / "laws.yaml"
    from regula.logic import save_laws
    save_laws(path, MODEL.hard_laws() + res.laws)
    assert [law.formula for law in load_laws(path, MODEL.atoms, frozenset(ACTIONS))][-1] == res.accepted[0].formula


def test_gate_bound_and_removals():
    kept = Law("G(has_wood -> collect_wood)", kind="soft", source="efficiency")
    ev = _evidence([({"tree_on_map", "has_wood"}, "collect_wood")], soft=[kept])
    out = CriticOutput(proposals=[Proposal("G(tree_on_map -> X(!sleep))", "efficiency"),
                                  Proposal("G(tree_on_map -> X(!eat_cow))", "efficiency")],
                       removals=[("G(has_wood -> X(collect_wood))", "too strict"), ("G(!explore)", "?")])
    res = gate(out, ev, 1, "test")
    assert res.removed == [{"formula": "G(has_wood -> collect_wood)", "reason": "too strict"}]
    assert res.rejected[0]["reason"] == "asks to remove a law that is not a critic law"
    assert res.bound == 1 and [law.formula for law in res.laws] == ["G(tree_on_map -> !sleep)"]
    assert res.rejected[-1]["reason"] == "over the bound: at most 1 critic laws (distinct state-action pairs read)"


# -- rollouts -----------------------------------------------------------------------------------
class Scripted(Actor):
    name = "scripted"

    def __init__(self, plan):
        self.plan = list(plan)

    def choose(self, view):
        self.views = getattr(self, "views", []) + [view]
        return Choice(self.plan.pop(0) if self.plan else "explore")


def test_unknown_action_is_a_failure_with_feedback_and_blocked_proposals_replan():
    actor = Scripted(["fly", "collect_stone", "collect_wood"])
    ep = rollout(actor, MODEL.hard_laws(), 0, MODEL, rollout_config(max_skills=1, upkeep=False, backend="native"))
    first = ep["steps"][0]
    assert [p["why"] for p in first["refused"]] == ["unknown", "blocked"]
    assert first["skill"] == "collect_wood" and first["by"] == "actor" and first["cause"] is None
    assert actor.views[0].feedback[0].startswith("there is no action 'fly'; the actions are: collect_wood, collect_stone")
    assert "collect_stone is blocked by 2 laws: G(!has_wood_pickaxe -> !collect_stone)" in actor.views[0].feedback[1]
    s = summarize([ep])
    assert s["failed_actions_pct"] == 50.0 and s["hard_blocked_pct"] == round(100 / 3, 2)
    assert (s["decisions"], s["proposals"], s["replans_per_decision"], s["fallback_share"]) == (1, 3, 2.0, 0.0)


def test_over_constraint_falls_back_to_hard_laws_and_is_recorded():
    # A critic law asking for something the hard laws forbid at the start: nothing is left.
    bad = Law("G(!has_diamond -> collect_diamond)", kind="soft", source="efficiency")
    actor = Scripted(["collect_diamond", "collect_diamond", "collect_diamond", "collect_diamond"])
    ep = rollout(actor, MODEL.hard_laws() + [bad], 0, MODEL,
                 rollout_config(max_skills=1, upkeep=False, backend="native"))
    assert len(ep["summary"]["conflicts"]) == 1 and ep["steps"][0]["conflict"] == 1
    conflict = ep["summary"]["conflicts"][0]
    assert conflict["blocked"]["explore"] == ["G(!has_diamond -> collect_diamond)"]
    assert "explore" in conflict["fallback_allowed"] and "collect_diamond" not in conflict["fallback_allowed"]
    assert ep["steps"][0]["refused"][-1] == {"action": ep["steps"][0]["skill"], "why": "fallback", "policy": "ranked"}


def test_unknown_actor_and_llm_actor_without_client():
    with pytest.raises(UnknownNameError, match=r"^unknown backend for role 'actor' 'sayno'; valid backend for role "
                                               r"'actor's: greedy, greedy_goal, inner_monologue, naive, random, saycan$"):
        roles.make("actor", "sayno")
    with pytest.raises(RegulaError, match=r"^actor 'saycan' asks an LLM; configure `llm` in params.yaml$"):
        roles.make("actor", "saycan")


# -- the symbolic critic ------------------------------------------------------------------------
def test_failure_cause_becomes_a_negative_law_grounded_where_it_failed():
    rec = _step(["tree_on_map", "has_wood"], "place_table", success=False, t=3,
                reason="missing wood: have 1, place_table uses wood >= 2",
                cause={"kind": "missing", "item": "wood", "have": 1, "need": 2})
    ev = Evidence(MODEL, [{"origin": "rollout", "seed": 5, "iteration": 0, "steps": [rec]}], [], [])
    out = SymbolicCritic().propose(ev)
    fails = [p for p in out.proposals if p.source == "environment_failure"]
    assert [p.formula for p in fails] == ["G(!has_2_wood -> !place_table)"]
    assert fails[0].grounding == {"seed": 5, "iteration": 0, "t": 3}
    assert fails[0].explanation == "place_table failed with 'missing wood: have 1, place_table uses wood >= 2' " \
                                   "when has_2_wood was false"


# Each failure the Crafter adapter reports, as (reason, cause), and the law the critic induced
# from it when it parsed the reason with regular expressions (None: a note, no law).
FAILURES = [
    ("collect_stone", "missing wood_pickaxe: have 0, collect_stone requires wood_pickaxe >= 1",
     {"kind": "missing", "item": "wood_pickaxe", "have": 0, "need": 1}, "G(!has_wood_pickaxe -> !collect_stone)"),
    ("make_stone_pickaxe", "missing stone: have 0, make_stone_pickaxe uses stone >= 1",
     {"kind": "missing", "item": "stone", "have": 0, "need": 1}, "G(!has_stone -> !make_stone_pickaxe)"),
    ("make_wood_pickaxe", "no table seen (make_wood_pickaxe needs table nearby)",
     {"kind": "not_seen", "thing": "table"}, "G(!table_on_map -> !make_wood_pickaxe)"),
    ("collect_diamond", "no diamond seen", {"kind": "not_seen", "thing": "diamond"},
     "G(!diamond_on_map -> !collect_diamond)"),
    ("eat_cow", "no cow in view", {"kind": "not_in_view", "thing": "cow"}, "G(!cow_in_view -> !eat_cow)"),
    ("eat_plant", "no ripe plant in view", {"kind": "not_in_view", "thing": "plant"},
     "G(!plant_in_view -> !eat_plant)"),
    ("collect_wood", "no known route to tree", {"kind": "no_route", "to": "tree"}, None),
    ("place_table", "place_table had no effect", {"kind": "no_effect", "skill": "place_table"}, None),
    ("explore", "step budget of 300 exhausted", {"kind": "budget", "steps": 300}, None),
    ("sleep", "energy is full", {"kind": "no_need", "stat": "energy"}, None),
]


@pytest.mark.parametrize("skill, reason, cause, law", FAILURES, ids=[f[2]["kind"] + ":" + f[0] for f in FAILURES])
def test_the_critic_reads_the_cause_and_induces_what_it_read_from_the_reason(skill, reason, cause, law):
    rec = _step(["tree_on_map"], skill, success=False, reason=reason, cause=cause)
    out = SymbolicCritic().propose(Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": [rec]}],
                                            [], []))
    fails = [p.formula for p in out.proposals if p.source == "environment_failure"]
    assert fails == ([law] if law else [])
    if law is None:
        assert f"{skill} failed ({reason}): no proposition says why" in out.notes


@pytest.mark.parametrize("kind", ["interrupted", "episode_over"])
def test_steps_the_actor_did_not_fail_teach_nothing(kind):
    rec = _step([], "collect_stone", success=False, reason="x", cause={"kind": kind})
    out = SymbolicCritic().propose(Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": [rec]}],
                                            [], []))
    assert not [p for p in out.proposals if p.source == "environment_failure"] and not out.notes


def test_regression_over_observed_effects_yields_the_goal_chain():
    pick = {"has_iron_pickaxe", "tree_on_map"}
    steps = [_step(pick, "explore", pick | {"diamond_on_map"}, by="expert"),
             _step(pick | {"diamond_on_map"}, "collect_diamond", pick | {"diamond_on_map", "has_diamond"},
                   delta={"diamond": 1}, unlocked=["collect_diamond"], by="survival")]
    ev = Evidence(MODEL, [{"origin": "demo", "seed": 0, "steps": steps}], MODEL.hard_laws(), [])
    formulas = [p.formula for p in SymbolicCritic(efficiency="plan").propose(ev).proposals]
    assert "G(has_iron_pickaxe & !diamond_on_map -> explore)" in formulas
    assert "G(has_iron_pickaxe & diamond_on_map -> collect_diamond)" in formulas
    # The paper's critic (the default) asks for no action: it only blocks.
    assert SymbolicCritic().propose(ev).proposals == []
    # A demonstration's every step counts as chosen (the gate's bound), whoever in the expert chose it.
    assert len(list(ev.chosen())) == 2


def test_the_restricting_critic_blocks_what_gained_nothing_where_it_gained_nothing():
    """A second wooden pickaxe spends wood and gains nothing (the paper's example law); an
    exploration that found nothing new is blocked in the states told apart from where it did."""
    pick = {"has_wood_pickaxe", "has_wood", "table_on_map", "tree_on_map"}
    steps = [_step({"tree_on_map"}, "explore", {"tree_on_map", "water_on_map"}, t=0),
             _step(pick, "make_wood_pickaxe", pick - {"has_wood"}, delta={"wood": -1}, t=1),
             _step(pick, "explore", pick, t=2),
             _step({"tree_on_map", "has_wood", "table_on_map"}, "make_wood_pickaxe", pick, delta={"wood": -1},
                   unlocked=["make_wood_pickaxe"], t=3)]
    ev = Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": steps}], MODEL.hard_laws(), [])
    out = SymbolicCritic().propose(ev)
    laws = {p.formula: p.source for p in out.proposals}
    assert laws == {"G(has_wood_pickaxe -> !make_wood_pickaxe)": "efficiency", "G(has_wood -> !explore)": "efficiency"}
    # The plan option counts spending as a change: no law against the second pickaxe there.
    assert "G(has_wood_pickaxe -> !make_wood_pickaxe)" not in {
        p.formula for p in SymbolicCritic(efficiency="plan").propose(ev).proposals}
    # The way to the diamond was never seen to its end: no action is called off it.
    assert "diamond_on_map, has_iron_pickaxe never seen true; no action is called off the way" in out.notes
    with pytest.raises(ValueError, match="unknown efficiency source 'greedy'; one of restrict, plan"):
        SymbolicCritic(efficiency="greedy")


def test_who_decided_counts_the_laws_the_actor_and_the_uniform_draw_apart():
    from regula.ltlcrit.rollout import decided_by

    def rec(allowed, refused=()):
        return {"allowed": allowed, "refused": list(refused)}
    steps = [rec(1), rec(1, [{"why": "fallback", "policy": "ranked"}]), rec(3),
             rec(2, [{"action": "x", "why": "blocked"}, {"why": "fallback", "policy": "ranked"}]),
             rec(4, [{"why": "fallback", "policy": "uniform"}])]
    assert decided_by(steps) == {"laws": 2, "actor": 2, "uniform": 1}


def test_an_action_off_the_way_to_the_goal_is_blocked_once_the_way_is_seen_to_its_end():
    """Every need of the goal (read off the hard laws) seen made true by some action: an
    action that only ever made unneeded propositions true is blocked everywhere."""
    steps, held = [], {"tree_on_map", "stone_on_map", "coal_on_map"}  # seen true from the start
    for action, gain in [("collect_wood", "has_wood"), ("collect_wood", "has_2_wood"), ("place_table", "table_on_map"),
                         ("make_wood_pickaxe", "has_wood_pickaxe"), ("make_wood_sword", "has_wood_sword"),
                         ("collect_stone", "has_stone"), ("collect_stone", "has_4_stone"),
                         ("make_stone_pickaxe", "has_stone_pickaxe"),
                         ("place_furnace", "furnace_on_map"), ("explore", "iron_on_map"), ("collect_coal", "has_coal"),
                         ("collect_iron", "has_iron"), ("make_iron_pickaxe", "has_iron_pickaxe"),
                         ("explore", "diamond_on_map"), ("collect_sapling", "has_sapling")]:
        steps.append(_step(held, action, held | {gain}, unlocked=[action], t=len(steps)))
        held = held | {gain}
    ev = Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": steps}], MODEL.hard_laws(), [])
    out = SymbolicCritic().propose(ev)
    off = {p.formula: p.explanation for p in out.proposals if p.formula.startswith("G(!")}
    assert off == {
        "G(!make_wood_sword)": "make_wood_sword is off the way to collect_diamond: it was seen making has_wood_sword, "
                               "none of which the goal needs",
        "G(!collect_sapling)": "collect_sapling is off the way to collect_diamond: it was seen making has_sapling, "
                               "none of which the goal needs"}


# -- the loop, resume ----------------------------------------------------------------------------
def test_loop_writes_iterations_and_resumes_a_killed_run(tmp_path, monkeypatch):
    cfg = loop_config((0, 1), iterations=1)
    rcfg = rollout_config(max_skills=25, backend="native")
    run = improve(roles.make("actor", "random"), SymbolicCritic(), MODEL, rcfg, cfg, [], tmp_path / "laws", tmp_path / "runs")
    assert [h["iteration"] for h in run.history] == [0, 1]
    assert (tmp_path / "laws" / "random" / "iteration_0.yaml").exists()
    verdict = json.loads((tmp_path / "laws" / "random" / "critic_0.json").read_text())
    assert verdict["critic"] == "symbolic" and verdict["laws"] == run.laws
    assert all(set(r) == {"formula", "source", "reason"} for r in verdict["rejected"])
    folder = tmp_path / "runs" / "random" / "iteration_1"
    assert sorted(p.name for p in folder.iterdir()) == ["episode_00000.jsonl", "episode_00001.jsonl"]
    ep = episodes.read(folder / "episode_00001.jsonl")
    assert ep["header"]["source"] == "ltlcrit:random" and {s["by"] for s in ep["steps"]} <= {"actor", "survival"}
    path = folder / "episode_00001.jsonl"
    good = path.read_bytes()
    path.write_bytes(good[: len(good) // 2])  # a file torn in the middle (written by hand: writes are atomic)
    played = []
    real = loop_mod.rollout
    monkeypatch.setattr(loop_mod, "rollout", lambda actor, laws, seed, *a: played.append(seed) or real(actor, laws, seed, *a))
    again = improve(roles.make("actor", "random"), SymbolicCritic(), MODEL, rcfg, cfg, [], tmp_path / "laws", tmp_path / "runs")
    assert played == [1]  # iteration 0 and seed 0 of iteration 1 came from the files
    assert again.history == run.history
    assert path.read_bytes() == good


def test_holds_is_propositional_only():
    assert holds(parse("a & !b"), {"a"}) and not holds(parse("a -> b"), {"a"})
    with pytest.raises(ShapeError, match="is not propositional"):
        holds(parse("F a"), {"a"})


def test_expert_baseline_saves_its_episodes_and_leaves_its_survival_layer_out_of_task_actions(tmp_path):
    from regula.ltlcrit.loop import expert_baseline

    seen = []
    rcfg = rollout_config(max_skills=40, max_steps=400)
    out = expert_baseline(CrafterModel(), [0, 1], rcfg, tmp_path / "expert", lambda *a: seen.append(a[2:4]))
    assert seen == [(1, 2), (2, 2)]
    ep = episodes.read(tmp_path / "expert" / "episode_00000.jsonl")
    counted = ("unlocks_by", "attribution", "deaths", "alive")  # counted from the steps, beside the stored summary
    assert ep["summary"] == {"type": "summary", **{k: v for k, v in out[0].items() if k not in counted}}
    assert {k: out[0][k] for k in ("deaths", "alive")} == CRAFTER.census([ep])
    assert ep["header"]["source"] == "expert" and out[0]["unlocks_by"] == episodes.unlocks_by([ep])
    assert out[0]["attribution"] == episodes.attribution([ep])
    assert set(out[0]["unlocks_by"]) <= {"expert", "survival"} and sum(out[0]["unlocks_by"].values()) == sum(
        len(s["unlocked"]) for s in ep["steps"])
    # The milestone counts skip the skills the survival layer chose (swords, drinks, walls).
    steps = ep["steps"]
    arm = min(k for k, s in enumerate(steps) if s["skill"] == "make_wood_sword")
    assert steps[arm]["by"] == "survival"
    first = out[0]["milestones"]["wood tool"]
    pick = next(k for k, s in enumerate(steps) if "make_wood_pickaxe" in s["unlocked"])
    assert first["actions"] == sum(1 for k in range(pick + 1) if steps[k]["by"] != "survival")
    # A rerun with the same inputs plays nothing.
    before = {p: p.stat().st_mtime_ns for p in (tmp_path / "expert").iterdir()}
    assert expert_baseline(CrafterModel(), [0, 1], rcfg, tmp_path / "expert") == out
    assert before == {p: p.stat().st_mtime_ns for p in (tmp_path / "expert").iterdir()}


def _files(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_workers_play_the_same_episodes_laws_and_history_as_one_process(tmp_path):
    from regula.ltlcrit.loop import expert_baseline, under_laws

    rcfg = rollout_config(max_skills=25, backend="native")
    runs = {}
    for workers in (1, 2):
        out, cfg = tmp_path / f"w{workers}", loop_config((0, 1, 2), iterations=1, workers=workers)
        run = improve(roles.make("actor", "random"), SymbolicCritic(), MODEL, rcfg, cfg, [], out / "laws", out / "runs")
        base = under_laws(roles.make("actor", "greedy"), run, MODEL, rcfg, cfg, out / "runs")
        expert = expert_baseline(MODEL, cfg.seeds, rollout_config(max_skills=25), out / "expert", workers=workers)
        runs[workers] = (run.to_json(), base, expert, _files(out))
    assert runs[2] == runs[1]
    assert len(runs[1][0]["history"]) == 2 and len(runs[1][3]) > 9  # two rounds, every episode a file


def test_an_llm_actors_episodes_play_in_this_process(tmp_path, monkeypatch):
    asked = []
    real = episodes.forked_map
    monkeypatch.setattr(episodes, "forked_map", lambda fn, items, workers=1: asked.append(workers) or real(fn, items, 1))
    cfg, rcfg = loop_config((0, 1), workers=2), rollout_config(max_skills=5, backend="native")
    actor = roles.make("actor", "random")
    loop_mod._episodes(actor, [], MODEL, rcfg, cfg, tmp_path / "a", lambda *a: None)
    # a client, as an LLM actor has (its calls are counted in this process); the random actor asks it nothing
    from types import SimpleNamespace
    from regula.llm import LLMConfig
    actor.client = SimpleNamespace(config=LLMConfig.from_params(params_mod.validate({}).llm, cache_dir=str(tmp_path)))
    actor.history_len = 0
    loop_mod._episodes(actor, [], MODEL, rcfg, cfg, tmp_path / "b", lambda *a: None)
    assert asked == [2, 1]
