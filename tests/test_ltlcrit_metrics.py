"""LTLCrit's declared fallback, Table 2's counts, the stage's record and the report's rows."""
import random

import pandas as pd
import pytest

from regula import params as params_mod
from regula.errors import ParamsError
from regula.ltlcrit import rollout as rollout_mod
from regula.ltlcrit.actors import Actor, Choice
from regula.ltlcrit.loop import ActorRun
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import failed_action, rollout, summarize
from regula.ltlcrit.stage import headline, history_rows, metrics
from regula.ltlcrit.report import gain_table, rates_table
from regula.report.tables import paired_difference
from stage_configs import rollout_config

MODEL = CrafterModel()


class Stubborn(Actor):
    """Always proposes the diamond (hard-blocked at the start); ranks `pick` first among the allowed."""
    name = "stubborn"

    def __init__(self, pick):
        self.pick, self.views = pick, []

    def choose(self, view):
        self.views.append(view)
        return Choice("collect_diamond")

    def choose_allowed(self, view):
        return Choice(self.pick)


@pytest.mark.parametrize("fallback, pick, policy", [("ranked", "explore", "ranked"),
                                                    ("ranked", "fly", "uniform"),  # names nothing allowed
                                                    ("uniform", "explore", "uniform")])
def test_the_declared_fallback_picks_after_the_refusals(fallback, pick, policy):
    actor = Stubborn(pick)
    ep = rollout(actor, MODEL.hard_laws(), 3, MODEL,
                 rollout_config(max_skills=1, upkeep=False, max_replans=1, fallback=fallback, backend="native"))
    step = ep["steps"][0]
    allowed = actor.views[0].allowed
    want = "explore" if policy == "ranked" else random.Random("fallback:3").choice(allowed)
    assert step["skill"] == want and step["refused"][-1] == {"action": want, "why": "fallback", "policy": policy}
    assert [p["why"] for p in step["refused"][:-1]] == ["blocked", "blocked"]
    assert step["allowed"] == len(allowed) >= 2
    s = summarize([ep])
    assert (s["decisions"], s["proposals"], s["fallback_decisions"], s["fallback_share"]) == (1, 2, 1, 1.0)
    assert s["actor_decisions"] == (policy == "ranked") and s["choice_decisions"] == 1
    assert (s["replans_per_decision"], s["hard_blocked"], s["hard_blocked_pct"]) == (2.0, 2, 100.0)


def _rec(success, cause=None, by="actor", refused=(), allowed=2, unlocked=()):
    return {"by": by, "success": success, "cause": cause, "refused": list(refused), "skill": "collect_wood",
            "allowed": allowed, "unlocked": list(unlocked)}


def test_failed_actions_count_interrupted_and_died_in_skills_not_the_episodes_end():
    assert failed_action(_rec(False, {"kind": "interrupted", "why": "zombie"}))
    assert failed_action(_rec(False, {"kind": "episode_over", "died": True}))
    assert not failed_action(_rec(False, {"kind": "episode_over", "died": False}))
    assert failed_action(_rec(False, {"kind": "missing", "item": "wood"})) and not failed_action(_rec(True))
    # The critic's `failed` (a cause the actor chose into) still leaves the survival layer's interruptions out.
    assert not rollout_mod.failed(_rec(False, {"kind": "interrupted", "why": "zombie"}))


def test_summary_counts_table2_over_decisions_and_proposals():
    soft = {"action": "explore", "why": "blocked", "kinds": ["hard", "soft"], "laws": []}
    hard = {"action": "make_iron_pickaxe", "why": "blocked", "kinds": ["hard"], "laws": []}
    steps = [_rec(True, refused=[soft], allowed=1),
             _rec(False, {"kind": "interrupted", "why": "zombie"}, refused=[{"action": "fly", "why": "unknown"}],
                  allowed=3),
             _rec(True, refused=[hard, soft, {"action": "sleep", "why": "fallback", "policy": "ranked"}]),
             _rec(True, by="survival", unlocked=["collect_drink", "wake_up"])]
    ms = {name: {"step": None, "actions": None, "task_actions": None}
          for name in ["wood tool", "stone tool", "iron tool", "diamond", "goal"]}
    ep = {"steps": steps, "summary": {"seed": 1, "success": False, "milestones": ms, "conflicts": [],
                                      "upkeep_actions": 1, "steps": 30}}
    idle = {"steps": [_rec(False, {"kind": "not_seen", "why": "no cow in view"})],
            "summary": {**ep["summary"], "seed": 2, "steps": 0, "upkeep_actions": 0}}
    assert summarize([ep, idle])["idle_episodes"] == 1  # a failure the actor never moved in, counted apart
    s = summarize([ep])
    # proposals: 2 executed own choices + 4 refused; failed: the interrupted one + the unknown name over 3 + 1
    assert (s["decisions"], s["proposals"], s["replans"], s["fallback_decisions"]) == (3, 6, 4, 1)
    assert (s["failed_actions"], s["failed_of"], s["failed_actions_pct"]) == (2, 4, 50.0)
    assert (s["critic_blocked"], s["critic_blocked_pct"], s["hard_blocked"], s["hard_blocked_pct"]) == (2, 33.33, 1, 16.67)
    assert (s["replans_per_decision"], s["fallback_share"], s["successes"], s["episodes"]) == (1.333, 0.3333, 0, 1)
    # one decision the laws made (one action allowed), two the actor (its proposal; its ranking)
    assert (s["laws_decisions"], s["choice_decisions"], s["actor_decisions"]) == (1, 2, 2)
    assert (s["laws_share"], s["choice_share"], s["actor_share"]) == (0.3333, 0.6667, 0.6667)
    assert s["unlocks_by"] == {"survival": 2}
    assert s["idle_episodes"] == 0


def _summary(wins, n, iteration, task=None):
    ms = {g: {"reached": wins, "steps": None, "actions": None, "task_actions": None}
          for g in ["wood tool", "stone tool", "iron tool", "diamond"]}
    return {"iteration": iteration, "critic_laws": iteration, "episodes": n, "successes": wins,
            "success_rate": round(wins / n, 4), "success_seeds": list(range(wins)), **ms,
            "goal": {"reached": wins, "steps": None, "actions": None, "task_actions": task},
            "failed_actions_pct": 10.0, "critic_blocked_pct": 5.0 if iteration else 0.0, "hard_blocked_pct": 1.0,
            "idle_episodes": 0 if iteration else 3,
            "fallback_share": 0.25, "replans_per_decision": 0.5, "choice_share": 0.5, "actor_share": 0.4}


def test_record_headline_and_report_rows_keep_counts_and_intervals():
    p = params_mod.validate({})
    runs = {"greedy": ActorRun("greedy", [_summary(2, 40, 0), _summary(8, 40, 1, task=27.0)], "converged", 3),
            "greedy_demos": ActorRun("greedy_demos", [_summary(2, 40, 0), _summary(20, 40, 1)], "converged", 4)}
    expert = [{"seed": s, "success": s < 30, "milestones": {g: {"step": 1, "actions": 1, "task_actions": 18}
                                                            for g in ["wood tool", "stone tool", "iron tool",
                                                                      "diamond", "goal"]}} for s in range(40)]
    # random under greedy's final laws: 5 worlds won, 3 of them greedy's too (greedy won 8)
    base = {**_summary(5, 40, 1), "actor": "random",
            "pairs": {"both": 3, "run_only": 5, "baseline_only": 2, "neither": 30}}
    m = metrics(MODEL, tuple(range(10000, 10040)), expert, runs, p, {}, {"greedy": base, "greedy_demos": None})
    assert list(m["actors"]) == ["greedy"] and list(m["demos_ablation"]) == ["greedy_demos"]
    assert m["actors"]["greedy"]["with_critic"]["task_actions_over_optimum"] == round(27 / MODEL.optimum["goal"], 4)
    assert headline(m) == {"expert_success_rate": 0.75, "greedy_success_without_critic": 0.05,
                           "greedy_success_with_critic": 0.2, "greedy_random_under_final_laws_success": 0.125,
                           "greedy_actor_share": 0.4,
                           "greedy_task_actions_over_optimum": m["actors"]["greedy"]["with_critic"][
                               "task_actions_over_optimum"], "greedy_demos_success_with_critic": 0.5}
    gains = gain_table([(m, False)]).set_index("run (measured here)")
    assert list(gains.index) == ["greedy"]
    assert gains.loc["greedy", "random under the same laws"] == "5/40 (5-26%)"
    lo, hi = paired_difference(3, 5, 2, 30)
    assert gains.loc["greedy", "gain (95% interval)"] == f"+7.5 pts ({100 * lo:+.1f} to {100 * hi:+.1f})"
    assert lo < 0 < hi  # 8/40 against 5/40 on the same worlds: not the actor's gain
    assert (gains.loc["greedy", "laws left ≥ 2 actions"], gains.loc["greedy", "actor decided"]) == ("50%", "40%")
    history = pd.DataFrame(history_rows(m))
    assert list(history["actor"]) == ["greedy", "greedy", "random under greedy's final laws", "greedy_demos",
                                      "greedy_demos"]
    rows = rates_table([(m, False)]).set_index("row (measured here)")
    assert rows.loc["scripted expert", "success (collect_diamond)"] == "30/40 (60-86%)"
    assert rows.loc["greedy, no critic", "success (collect_diamond)"] == "2/40 (1-17%)"
    assert rows.loc["greedy, no critic", "critic-blocked %"] == "N/A (no critic)"
    assert (rows.loc["greedy, no critic", "never acted"], rows.loc["scripted expert", "never acted"]) == ("3/40", "–")
    assert rows.loc["greedy + LTLCrit, iteration 1", "stone tool"] == "8/40 (10-35%)"
    ablation = "greedy + LTLCrit, iteration 1, critic also reads data/demos (ablation, not in the paper)"
    assert rows.loc[ablation, "success (collect_diamond)"] == "20/40 (35-65%)"
    assert rows.loc["random actor under greedy's final laws (the baseline)", "success (collect_diamond)"] == \
        "5/40 (5-26%)"


def test_a_twins_rows_name_the_model_and_budget_and_no_row_repeats_a_critic_that_changed_nothing():
    runs = {"naive": ActorRun("naive", [_summary(0, 40, 0)], "converged: the critic's round 0 changed no law", 0)}
    expert = [{"seed": s, "success": False, "milestones": {g: {"step": None, "actions": None, "task_actions": None}
                                                           for g in ["wood tool", "stone tool", "iron tool",
                                                                     "diamond", "goal"]}} for s in range(40)]
    p = params_mod.validate({"ltlcrit": dict(actors=["naive"], critic="openai", demos_ablation=[], iterations=1,
                                             max_replans=0, max_skills=6),
                             "llm": {"model": "smollm2-135m-instruct"}})
    m = metrics(MODEL, tuple(range(10000, 10040)), expert, runs, p, {})
    budget = "40 worlds, 6 skills, at most 1 critic rounds, 0 re-plans"
    assert list(rates_table([(m, True)])["row (measured here)"]) == [
        f"scripted expert [{budget}]",
        f"naive, no critic; the critic's first round changed no law [smollm2-135m-instruct; {budget}]"]


def test_fallback_and_demos_ablation_params():
    p = params_mod.validate({})
    assert p.ltlcrit.fallback == "ranked" and p.ltlcrit.demos_ablation == ["greedy"]
    assert p.llm_runs.ltlcrit["demos_ablation"] == []
    with pytest.raises(ParamsError, match=r"^params: ltlcrit.demos_ablation: lists greedy more than once$"):
        params_mod.validate({"ltlcrit": {"demos_ablation": ["greedy", "greedy"]}})
