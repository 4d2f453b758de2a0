"""The scripted expert on fixed seeds (regressions show up here first)."""
import pytest

from regula.envs.crafter.expert import Expert, ExpertConfig
from regula.envs.crafter.world import CrafterWorld
from regula.errors import UnknownNameError


@pytest.mark.parametrize("seed", [6, 7])
def test_expert_reaches_a_diamond(seed):
    world = CrafterWorld(seed=seed)
    summary = Expert(world, ExpertConfig(goal="collect_diamond")).play()
    assert summary.success and summary.end == "goal reached"
    assert "collect_diamond" in world.unlocked
    # tools come in the order the rules force
    order = [summary.first_step[a] for a in ("make_wood_pickaxe", "make_stone_pickaxe",
                                             "make_iron_pickaxe", "collect_diamond")]
    assert order == sorted(order)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_expert_makes_a_stone_pickaxe(seed):
    world = CrafterWorld(seed=seed)
    summary = Expert(world, ExpertConfig(goal="make_stone_pickaxe")).play()
    assert summary.success, summary.end
    assert summary.steps < 200


def test_expert_stops_on_budget():
    world = CrafterWorld(seed=0)
    summary = Expert(world, ExpertConfig(goal="collect_diamond", max_steps=50)).play()
    assert not summary.success and summary.end == "step budget"
    assert 50 <= summary.steps < 50 + 300


def test_unknown_goal():
    with pytest.raises(UnknownNameError, match="unknown goal 'diamond'.*valid goals: all, collect_coal"):
        ExpertConfig(goal="diamond")


def test_all_goal_plays_and_stops_when_nothing_is_left():
    from regula.envs.crafter.rules import RULES
    world = CrafterWorld(seed=3)
    summary = Expert(world, ExpertConfig(goal="all", max_steps=400)).play()
    assert summary.goal == "all" and len(summary.achievements) >= 8
    # first_step comes from the primitive log: every unlocked achievement has one, in order
    assert set(summary.first_step) == set(summary.achievements)
    assert all(1 <= summary.first_step[a] <= summary.steps for a in summary.achievements)
    done = CrafterWorld(seed=1)
    done.unlocked = list(RULES.achievements)
    expert = Expert(done, ExpertConfig(goal="all"))
    expert.start(done)
    assert expert.choose() == (None, None)
