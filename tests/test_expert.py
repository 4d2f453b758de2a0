"""The scripted expert on fixed seeds (regressions show up here first)."""
import pytest

from regula.envs.crafter.expert import Expert, play_episode
from stage_configs import expert_config
from regula.envs.crafter.world import CrafterWorld
from regula.errors import UnknownNameError


@pytest.mark.parametrize("seed", [6, 7])
def test_expert_reaches_a_diamond(seed):
    world = CrafterWorld(seed=seed)
    summary = play_episode(world, Expert(world, expert_config(goal="collect_diamond")))
    assert summary.success and summary.end == "goal reached"
    assert "collect_diamond" in world.unlocked
    # tools come in the order the rules force
    order = [summary.first_step[a] for a in ("make_wood_pickaxe", "make_stone_pickaxe",
                                             "make_iron_pickaxe", "collect_diamond")]
    assert order == sorted(order)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expert_makes_a_stone_pickaxe(seed):
    world = CrafterWorld(seed=seed)
    summary = play_episode(world, Expert(world, expert_config(goal="make_stone_pickaxe")))
    assert summary.success, summary.end
    assert summary.steps < 200


def test_expert_stops_on_budget():
    world = CrafterWorld(seed=0)
    summary = play_episode(world, Expert(world, expert_config(goal="collect_diamond", max_steps=50)))
    assert not summary.success and summary.end == "step budget"
    assert 50 <= summary.steps < 50 + 300


def test_unknown_goal():
    with pytest.raises(UnknownNameError, match="unknown goal 'diamond'.*valid goals: all, collect_coal"):
        expert_config(goal="diamond")


def test_all_goal_plays_and_stops_when_nothing_is_left():
    from regula.envs.crafter.rules import RULES
    world = CrafterWorld(seed=3)
    summary = play_episode(world, Expert(world, expert_config(goal="all", max_steps=400)))
    assert summary.goal == "all" and len(summary.achievements) >= 8
    # first_step comes from the primitive log: every unlocked achievement has one, in order
    assert set(summary.first_step) == set(summary.achievements)
    assert all(1 <= summary.first_step[a] <= summary.steps for a in summary.achievements)
    done = CrafterWorld(seed=1)
    done.unlocked = list(RULES.achievements)
    expert = Expert(done, expert_config(goal="all"))
    expert.start(done)
    decision = expert.decide(done)
    assert decision.skill is None and decision.end == "goal reached" and expert.all_done()


def test_the_expert_is_its_survival_layer_then_its_plan():
    from regula.agents import SURVIVAL, Agent
    world = CrafterWorld(seed=0)
    expert = Expert(world, expert_config(goal="collect_wood"))
    assert isinstance(expert, Agent)
    expert.start(world)
    step = expert.decide(world)
    assert (step.skill, step.by, step.info) == ("collect_wood", "expert", {"goal": "collect_wood"})
    assert step.interrupt == expert.survival.danger  # toward a goal, any danger stops it
    world.env.player.inventory["energy"] = 1  # tired: the survival layer goes first, toward no goal
    step = expert.decide(world)
    assert (step.skill, step.by, step.info) == ("sleep", SURVIVAL, {})
    assert step.interrupt == expert.survival.reflex  # a close zombie or a skeleton's line of fire


class _Step:
    def __init__(self, success=False, steps=1, kind="not_seen"):
        self.success, self.steps, self.cause = success, steps, {"kind": kind}
        self.skill, self.reason = "collect_iron", "no iron seen"


class _World:
    def __init__(self):
        self.ran, self.checks, self.done = [], [], False

    def run_skill(self, skill, interrupt=None):
        self.ran.append(skill)
        self.checks.append(interrupt)


def test_failures_explore_give_up_and_end_the_episode():
    from regula.agents import Decision
    from regula.envs.crafter.expert import Failures
    done = []
    failures = Failures(expert_config(max_failures=4, max_idle=3), lambda: bool(done))
    def danger(w):
        return None
    world, toward = _World(), Decision("collect_iron", interrupt=danger, info={"goal": "collect_iron"})
    for _ in range(3):
        assert failures.after(world, toward, _Step()) is None
    assert world.ran == ["explore"] * 3 and failures.given_up("collect_iron")
    assert world.checks == [danger] * 3  # the walk after a failure stops for what stopped the failed step
    assert failures.after(world, Decision("explore"), _Step()).startswith("stuck: collect_iron failed 4 times")
    assert world.ran == ["explore"] * 3  # a failed explore is not followed by another
    assert failures.after(world, toward, _Step(kind="interrupted")) is None and failures.in_a_row == 0
    assert failures.per_goal == {"collect_iron": 3}  # an interruption is no failure; a goalless step counts for none
    done.append(True)
    assert failures.after(world, toward, _Step()) == "goal reached"
    world.done = True  # died with nothing left: the loop reports the death, not the goal
    assert failures.after(world, toward, _Step(kind="episode_over")) is None
    done.clear()
    failures.start()
    assert failures.after(world, toward, _Step(steps=0)) is None
    assert failures.after(world, toward, _Step(steps=0)) is None
    assert failures.after(world, toward, _Step(steps=0)).startswith("stuck: 3 skills in a row could not act")


def test_all_goes_up_the_tiers_and_back_to_a_due_plant():
    from regula.envs.crafter.expert import PLANT_DUE
    world = CrafterWorld(seed=3)
    expert = Expert(world, expert_config(goal="all"))
    expert.start(world)
    assert expert.next_goal() == "collect_wood"  # not the shorter collect_sapling or collect_drink
    world.env.player.inventory.update(sapling=1, stone=9, wood_pickaxe=1)
    assert world.run_skill("place_plant").success
    world.unlocked += ["collect_wood", "place_table", "make_wood_pickaxe", "make_wood_sword", "collect_sapling", "collect_stone"]
    assert expert.next_goal() == "make_stone_pickaxe" and not expert.plant_due()
    assert expert.abstract_state().placed >= {"plant"}  # eat_plant needs no other sapling
    world.controller.plants[next(iter(world.controller.plants))][0] -= PLANT_DUE
    assert expert.plant_due() and expert.next_goal() == "eat_plant"


def test_waiting_for_a_plant_is_no_failure():
    from regula.agents import Decision
    from regula.envs.crafter.expert import Failures
    failures, world = Failures(expert_config(), lambda: False), _World()
    eat = Decision("eat_plant", info={"goal": "eat_plant"})
    assert failures.after(world, eat, _Step(kind="budget")) is None
    assert failures.per_goal == {} and world.ran == []  # no exploring away from the plant
    assert failures.after(world, eat, _Step(kind="not_in_view")) is None and failures.per_goal == {"eat_plant": 1}


def test_all_reaches_every_achievement_when_kept_alive():
    # The skills apart from survival: health is refilled after every step (deaths are the
    # survival layer's), and goal `all` plants, eats the plant ripe, fights a skeleton, makes
    # the iron sword and digs the diamond.
    from regula.envs.crafter.rules import RULES
    world = CrafterWorld(seed=1)
    act = world.act

    def kept_alive(action):
        reward = act(action)
        world.env.player.health = RULES.items["health"]["max"]
        return reward
    world.act = kept_alive
    summary = play_episode(world, Expert(world, expert_config(goal="all", max_steps=4000, max_skills=1500)))
    assert summary.success and summary.end == "goal reached" and sorted(summary.achievements) == sorted(RULES.achievements)
    steps = summary.first_step
    assert steps["collect_sapling"] < steps["place_plant"] < steps["eat_plant"]
    assert steps["make_iron_pickaxe"] < steps["make_iron_sword"]
