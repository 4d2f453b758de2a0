"""The survival layer (`envs/crafter/survival.py`): a component of the Crafter adapter any agent
may run before its own decisions, whose steps are logged `by=survival` (their unlocks are counted
apart from the agent's), and what it chooses in the recorded death situations of tests/data/deaths."""
import json
from pathlib import Path

import pytest

from regula import envs
from regula.agents import SURVIVAL, Decision
from regula.envs.crafter import expert
from regula.envs.crafter.survival import Survival, SurvivalConfig
from regula.envs.crafter.world import CrafterWorld
from stage_configs import expert_config
from crafter_scene import paint

CRAFTER = envs.get("crafter")
DEATHS = Path(__file__).parent / "data" / "deaths"


def test_the_layer_is_the_adapters_and_the_expert_config_carries_its_knobs():
    assert CRAFTER.Survival is Survival and CRAFTER.SurvivalConfig is SurvivalConfig
    assert not hasattr(CRAFTER, "Reflex") and not hasattr(expert, "Reflex")
    cfg = expert_config(goal="all", swords=(), low=4)  # the knobs callers pass, beside the goal
    assert isinstance(cfg, SurvivalConfig) and (cfg.swords, cfg.low, cfg.goal) == ((), 4, "all")
    assert Survival(CrafterWorld(seed=0)).config == SurvivalConfig()  # no agent's config needed


def test_its_steps_are_logged_by_survival_and_only_its_reflexes_stop_them():
    world = CrafterWorld(seed=0)
    survival = Survival(world)
    survival.start()
    assert survival.due() is None  # fresh and fed: nothing due, the agent decides
    world.env.player.inventory["energy"] = 1
    decision = survival.due()
    assert (decision.skill, decision.by, decision.info) == ("sleep", SURVIVAL, {})
    assert decision.interrupt == survival.reflex  # a close zombie, or a skeleton's line of fire
    assert survival.interrupt("defeat_zombie", None) is None  # the zombie being fought stops nothing
    assert survival.interrupt("defeat_skeleton", None) == survival.zombie_close  # nor the skeleton
    assert survival.interrupt("collect_wood", "collect_wood") == survival.danger  # toward a goal, any danger


def _skeleton_in_line(world, dx: int, sword: bool):
    """A skeleton `dx` cells east of the player on bare grass, the player armed or not."""
    import numpy as np
    from crafter import objects
    env = world.env
    px, py = paint(world, (6, 4), lambda x, y: "grass", clear=9)
    env.world.add(objects.Skeleton(env.world, np.array((px + dx, py)), env.player))
    env.player.inventory["wood_sword"] = int(sword)
    world.memory.observe(env.world, env.player.pos)


@pytest.mark.parametrize("dx,sword,due", [(3, True, "defeat_skeleton"), (3, False, None), (6, True, None)])
def test_a_skeleton_whose_arrows_reach_the_player_is_met_when_armed(dx, sword, due):
    world = CrafterWorld(seed=0)
    survival = Survival(world, SurvivalConfig(skeleton_reflex=True))  # an option, off by default
    survival.start()
    _skeleton_in_line(world, dx, sword)  # 6 east: out of its range (navigation.ARROW_RANGE)
    assert (survival.due() or Decision(None)).skill == due
    assert bool(survival.under_fire(world)) == (due is not None)
    off = Survival(world)
    off.start()
    assert off.due() is None


@pytest.mark.parametrize("cause,before,skill", [("zombie", 127, "defeat_zombie"), ("thirst", 120, "collect_drink")])
def test_in_a_recorded_death_the_layer_meets_the_cause(cause, before, skill):
    # The situations a noop or random player died in: once the cause is there (a zombie next to it;
    # drink low at dusk with water seen), the layer's step meets it, and not a step sooner.
    case = json.loads((DEATHS / f"{cause}.json").read_text())
    world = CrafterWorld(seed=case["seed"])
    survival = Survival(world)
    for action in case["actions"][:before]:
        world.act(action)
    assert survival.due().skill == skill
    world = CrafterWorld(seed=case["seed"])
    survival = Survival(world)
    for action in case["actions"][:before - 1]:
        world.act(action)
    assert (survival.survival_skill() or ("",))[0] != skill  # not a step sooner
