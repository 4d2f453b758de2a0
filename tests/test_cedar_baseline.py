"""CEDAR Table 2's free-form planner: LTLCrit's greedy actor aimed at the goal (`greedy_goal`)
under data.yaml's hard laws. It plans from what the shield's refusals say is missing, takes
primitive steps toward each task, and the stage refuses a planner episode that never moved."""
import pytest

from regula import roles
from regula.cedar import tasks
from regula.errors import EmptyEpisodeError
from regula.logic.laws import Law
from regula.ltlcrit.actors import View
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import rollout
from stage_configs import changed, rollout_config
from regula.stages import Paths


def _law(formula):
    return Law(formula=formula, kind="hard", source="hand")


def test_greedy_goal_proposes_the_goal_then_what_its_refusal_found_missing():
    actor = roles.make("actor", "greedy_goal")
    actor.reset(0)
    actions = CrafterModel().actions
    view = View(text="", state=["tree_on_map"], goal="make_wood_pickaxe", actions=actions, allowed=actions,
                unlocked=[])
    assert actor.choose(view).action == "make_wood_pickaxe"
    view.tried.append("make_wood_pickaxe")
    view.refusals["make_wood_pickaxe"] = [_law("G(!has_wood -> !make_wood_pickaxe)"),
                                          _law("G(!table_on_map -> !make_wood_pickaxe)")]
    # has_wood: collect_wood (nothing known against it); table_on_map: place_table, else found by exploring
    assert actor.plan(view) == ["collect_wood", "place_table", "explore"]
    view.tried.append("place_table")
    view.refusals["place_table"] = [_law("G(!has_2_wood -> !place_table)")]
    assert actor.plan(view) == ["collect_wood", "explore"]
    # a law that blocks for what holds (not for what is missing) names no need
    view.refusals["collect_wood"] = [_law("G(tree_on_map -> !collect_wood)")]
    assert actor.plan(view)[0] == "collect_wood" and actor.needs["collect_wood"] == set()
    # the fallback keeps to the plan among the allowed actions
    view.allowed = ["explore", "collect_sapling"]
    assert actor.choose_allowed(view).action == "explore"
    actor.reset(0)  # a new episode knows nothing yet
    assert actor.needs == {}


@pytest.mark.parametrize("goal, world, before", [("place_table", 100, ["collect_wood"]),
                                                 ("make_wood_pickaxe", 101, ["collect_wood", "place_table"])])
def test_greedy_goal_under_the_hard_laws_reaches_the_early_tasks(goal, world, before):
    model = CrafterModel(goal=goal)
    ep = rollout(roles.make("actor", "greedy_goal"), model.hard_laws(), world, model, rollout_config())
    s = ep["summary"]
    assert s["success"] and 0 < s["steps"] < 300 and s["actor_actions"] < 15
    done = [st["skill"] for st in ep["steps"] if st["by"] == "actor" and st["success"]]
    assert done[-1] == goal and set(before) <= set(done)


@pytest.fixture
def base_params(small_params):
    return changed(small_params, {"cedar": {"tasks": {"tasks": ["make_wood_pickaxe"], "trials": 2}, "worlds": "dev"}})


def test_baseline_plays_toward_each_task_and_replays_from_its_cache(tmp_path, base_params):
    paths = Paths(tmp_path, "cedar_skills")
    rows = tasks.baseline(base_params, paths, None)
    assert [(r["task"], r["world"], r["actor"], r["played"]) for r in rows] == [
        ("make_wood_pickaxe", 100, "greedy_goal", True), ("make_wood_pickaxe", 101, "greedy_goal", True),
        ("collect_diamond", 100, "greedy_goal", True), ("collect_diamond", 101, "greedy_goal", True)]
    assert all(r["steps"] > 0 for r in rows)
    wood = [r for r in rows if r["task"] == "make_wood_pickaxe"]
    assert all(r["success"] and r["first"]["place_table"] < r["first"]["make_wood_pickaxe"] for r in wood)
    # Fig. 8's diamond episodes pass the table on the way
    assert all("place_table" in r["first"] for r in rows if r["task"] == "collect_diamond")
    again = tasks.baseline(base_params, paths, None)
    assert [r["played"] for r in again] == [False] * 4
    assert [{k: v for k, v in r.items() if k != "played"} for r in again] == [
        {k: v for k, v in r.items() if k != "played"} for r in rows]
    summary = tasks.baseline_summary(rows)
    assert [(b["task"], b["episodes"], b["successes"]) for b in summary][0] == ("make_wood_pickaxe", 2, 2)
    assert summary[0]["steps"]["mean"] > 0


def test_a_cached_planner_episode_that_never_moved_is_an_error(tmp_path, base_params):
    paths = Paths(tmp_path, "cedar_skills")
    tasks.baseline(base_params, paths, None)
    cache = tmp_path / "data" / "cache" / "cedar_skills" / "baseline" / "make_wood_pickaxe.json"
    cache.write_text(cache.read_text().replace('"steps":', '"steps":0,"was":', 1))
    with pytest.raises(EmptyEpisodeError, match=r"cedar_skills \(Table 2's free-form planner, task "
                                                 r"make_wood_pickaxe\): greedy_goal on world 10[01] took 0 primitive"):
        tasks.baseline(base_params, paths, None)
