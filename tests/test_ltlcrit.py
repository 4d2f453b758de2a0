"""LTLCrit: law shape, gate, shield equivalence, rollouts, critics, loop and resume."""
import json
import random

import pytest

from regula import roles
from regula.logic import Law, Shield, load_laws
from regula.logic.parser import parse
from regula.ltlcrit import loop as loop_mod
from regula.ltlcrit.actors import Actor, Choice
from regula.ltlcrit.critic import CriticOutput, Evidence, Proposal, SymbolicCritic
from regula.ltlcrit.form import ShapeError, holds, normalise, read
from regula.ltlcrit.gate import gate
from regula.ltlcrit.loop import LoopConfig, improve
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import RolloutConfig, rollout, summarize
from regula.errors import RegulaError, UnknownNameError
from conftest import needs_spot_platform

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
def _evidence(states_actions, soft=()):
    log = [{"t": i, "by": "actor", "state": sorted(s), "inv": {}, "delta": {}, "action": a, "success": True,
            "reason": "", "after": sorted(s), "unlocked": [], "refused": [], "conflict": 0}
           for i, (s, a) in enumerate(states_actions)]
    return Evidence(MODEL, [{"origin": "rollout", "seed": 0, "iteration": 0, "log": log}],
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
    ep = rollout(actor, MODEL.hard_laws(), 0, MODEL, RolloutConfig(max_skills=1, upkeep=False, backend="native"))
    first = ep["log"][0]
    assert [p["why"] for p in first["refused"]] == ["unknown", "blocked"]
    assert first["action"] == "collect_wood"
    assert actor.views[0].feedback[0].startswith("there is no action 'fly'; the actions are: collect_wood, collect_stone")
    assert "collect_stone is blocked by 2 laws: G(!has_wood_pickaxe -> !collect_stone)" in actor.views[0].feedback[1]
    s = summarize([ep])
    assert s["failed_actions_pct"] == 50.0 and s["hard_blocked_pct"] == round(100 / 3, 2)


def test_over_constraint_falls_back_to_hard_laws_and_is_recorded():
    # A critic law asking for something the hard laws forbid at the start: nothing is left.
    bad = Law("G(!has_diamond -> collect_diamond)", kind="soft", source="efficiency")
    actor = Scripted(["collect_diamond", "collect_diamond", "collect_diamond", "collect_diamond"])
    ep = rollout(actor, MODEL.hard_laws() + [bad], 0, MODEL,
                 RolloutConfig(max_skills=1, upkeep=False, backend="native"))
    assert len(ep["conflicts"]) == 1
    conflict = ep["conflicts"][0]
    assert conflict["blocked"]["explore"] == ["G(!has_diamond -> collect_diamond)"]
    assert "explore" in conflict["fallback_allowed"] and "collect_diamond" not in conflict["fallback_allowed"]
    assert ep["log"][0]["refused"][-1]["why"] == "chose among allowed"


def test_unknown_actor_and_llm_actor_without_client():
    with pytest.raises(UnknownNameError, match=r"^unknown backend for role 'actor' 'sayno'; valid backend for role "
                                               r"'actor's: greedy, inner_monologue, naive, random, saycan$"):
        roles.make("actor", "sayno")
    with pytest.raises(RegulaError, match=r"^actor 'saycan' asks an LLM; configure `llm` in params.yaml$"):
        roles.make("actor", "saycan", model=MODEL)


# -- the symbolic critic ------------------------------------------------------------------------
def test_failure_reason_becomes_a_negative_law_grounded_where_it_failed():
    rec = {"t": 3, "by": "actor", "state": ["tree_on_map", "has_wood"], "inv": {"wood": 1}, "delta": {},
           "action": "place_table", "success": False, "reason": "missing wood: have 1, place_table uses wood >= 2",
           "after": ["tree_on_map", "has_wood"], "unlocked": [], "refused": [], "conflict": 0}
    ev = Evidence(MODEL, [{"origin": "rollout", "seed": 5, "iteration": 0, "log": [rec]}], [], [])
    out = SymbolicCritic().propose(ev)
    fails = [p for p in out.proposals if p.source == "environment_failure"]
    assert [p.formula for p in fails] == ["G(!has_2_wood -> !place_table)"]
    assert fails[0].grounding == {"seed": 5, "iteration": 0, "t": 3}


def test_regression_over_observed_effects_yields_the_goal_chain():
    def step(state, action, after, delta=None, unlocked=()):
        return {"t": 0, "by": "actor", "state": sorted(state), "inv": {}, "delta": delta or {}, "action": action,
                "success": True, "reason": "", "after": sorted(after), "unlocked": list(unlocked),
                "refused": [], "conflict": 0}
    pick = {"has_iron_pickaxe", "tree_on_map"}
    log = [step(pick, "explore", pick | {"diamond_on_map"}),
           step(pick | {"diamond_on_map"}, "collect_diamond", pick | {"diamond_on_map", "has_diamond"},
                {"diamond": 1}, ["collect_diamond"])]
    ev = Evidence(MODEL, [{"origin": "demo", "seed": 0, "log": log}], MODEL.hard_laws(), [])
    formulas = [p.formula for p in SymbolicCritic().propose(ev).proposals]
    assert "G(has_iron_pickaxe & !diamond_on_map -> explore)" in formulas
    assert "G(has_iron_pickaxe & diamond_on_map -> collect_diamond)" in formulas


# -- the loop, resume ----------------------------------------------------------------------------
def test_loop_writes_iterations_and_resumes_a_killed_run(tmp_path, monkeypatch):
    cfg = LoopConfig(seeds=(0, 1), iterations=1, critic_reads_demos=False)
    rcfg = RolloutConfig(max_skills=25, backend="native")
    run = improve(roles.make("actor", "random"), SymbolicCritic(), MODEL, rcfg, cfg, [], tmp_path / "laws", tmp_path / "runs")
    assert [h["iteration"] for h in run.history] == [0, 1]
    assert (tmp_path / "laws" / "random" / "iteration_0.yaml").exists()
    verdict = json.loads((tmp_path / "laws" / "random" / "critic_0.json").read_text())
    assert verdict["critic"] == "symbolic" and verdict["laws"] == run.laws
    assert all(set(r) == {"formula", "source", "reason"} for r in verdict["rejected"])
    path = tmp_path / "runs" / "random" / "iteration_1.jsonl"
    lines = path.read_text().splitlines()
    assert len(lines) == 3 and json.loads(lines[0])["actor"] == "random"
    path.write_text("\n".join(lines[:2]) + "\n" + lines[2][:50])  # killed while writing seed 1
    played = []
    real = loop_mod.rollout
    monkeypatch.setattr(loop_mod, "rollout", lambda actor, laws, seed, *a: played.append(seed) or real(actor, laws, seed, *a))
    again = improve(roles.make("actor", "random"), SymbolicCritic(), MODEL, rcfg, cfg, [], tmp_path / "laws", tmp_path / "runs")
    assert played == [1]  # iteration 0 and seed 0 of iteration 1 came from the files
    assert again.history == run.history
    assert path.read_text().splitlines()[2] == lines[2]


def test_holds_is_propositional_only():
    assert holds(parse("a & !b"), {"a"}) and not holds(parse("a -> b"), {"a"})
    with pytest.raises(ShapeError, match="is not propositional"):
        holds(parse("F a"), {"a"})


def test_expert_baseline_reports_each_world_once_and_leaves_its_reflex_out_of_task_actions():
    from regula import envs
    from regula.ltlcrit.loop import expert_baseline

    seen = []
    rcfg = RolloutConfig(max_skills=40, max_steps=400)
    out = expert_baseline(CrafterModel(), [0, 1], rcfg, lambda *a: seen.append(a[2:4]))
    assert seen == [(1, 2), (2, 2)]
    # The milestone counts skip the skills the survival reflex chose (swords, drinks, walls).
    crafter = envs.get("crafter")
    world = crafter.make(0)
    expert = crafter.Expert(world, crafter.ExpertConfig(max_steps=400, max_skills=40))
    expert.play()
    arm = min(k for k, ev in enumerate(world.events) if ev.skill == "make_wood_sword")
    assert arm in expert.reflex_events
    first = out[0]["milestones"]["wood tool"]
    pick = next(k for k, ev in enumerate(world.events) if "make_wood_pickaxe" in ev.unlocked)
    assert first["actions"] == sum(1 for k in range(pick + 1) if k not in expert.reflex_events)
