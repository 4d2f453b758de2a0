"""Skills succeed and fail as data.yaml's rules say, with reasons that name what is missing."""
import crafter.constants as C
import pytest

from regula.envs.crafter.world import CrafterWorld
from regula.errors import UnknownNameError


@pytest.fixture
def world():
    return CrafterWorld(seed=1)


def test_collect_wood_adds_one_wood(world):
    step = world.run_skill("collect_wood")
    assert step.success, step.reason
    assert step.inventory_delta == C.collect["tree"]["receive"]
    assert step.unlocked == ["collect_wood"]
    assert step.actions[-1] == "do"
    assert world.primitive_log[-1]["facing"] == "tree"


def test_collect_stone_without_pickaxe_fails_naming_the_tool(world):
    step = world.run_skill("collect_stone")
    need = C.collect["stone"]["require"]
    tool, amount = next(iter(need.items()))
    assert not step.success
    assert step.reason == f"missing {tool}: have 0, collect_stone requires {tool} >= {amount}"
    assert step.steps == 0


def test_place_table_needs_the_wood_data_yaml_says(world):
    wood_needed = C.place["table"]["uses"]["wood"]
    for _ in range(wood_needed - 1):
        assert world.run_skill("collect_wood").success
    step = world.run_skill("place_table")
    assert not step.success
    assert step.reason == f"missing wood: have {wood_needed - 1}, place_table uses wood >= {wood_needed}"
    assert world.run_skill("collect_wood").success
    step = world.run_skill("place_table")
    assert step.success, step.reason
    assert step.inventory_delta == {"wood": -wood_needed}
    assert "near_table" in step.props_after


def test_make_without_a_table_seen_fails(world):
    world.run_skill("collect_wood")
    step = world.run_skill("make_wood_pickaxe")
    assert not step.success
    assert step.reason.startswith("no table seen")


def test_chain_to_a_stone_pickaxe(world):
    for skill in ["collect_wood"] * 5 + ["place_table", "make_wood_pickaxe", "collect_stone",
                                         "make_stone_pickaxe"]:
        step = world.run_skill(skill)
        assert step.success, (skill, step.reason)
    assert world.inventory["stone_pickaxe"] == 1
    assert {"make_wood_pickaxe", "collect_stone", "make_stone_pickaxe"} <= set(world.unlocked)


def test_target_never_seen_is_reported(world):
    step = world.run_skill("collect_diamond")
    assert not step.success and "iron_pickaxe" in step.reason
    world.env.player.inventory["iron_pickaxe"] = 1
    step = world.run_skill("collect_diamond")
    assert step.reason == "no diamond seen"


def test_unknown_skill_lists_valid_ones(world):
    with pytest.raises(UnknownNameError) as err:
        world.run_skill("collect_woood")
    assert "unknown skill 'collect_woood'" in str(err.value)
    assert "collect_wood" in str(err.value) and "explore" in str(err.value)


def test_unknown_action_lists_valid_ones(world):
    with pytest.raises(UnknownNameError, match="valid actions: .*move_left"):
        world.act("jump")


def test_explore_reveals_new_cells(world):
    before = int(world.memory.known().sum())
    step = world.run_skill("explore")
    assert step.success, step.reason
    assert 0 < step.steps <= world.controller.explore_steps + 8
    assert int(world.memory.known().sum()) > before


def test_event_log_records_primitives_and_propositions(world):
    step = world.run_skill("collect_wood")
    assert [p["action"] for p in step.primitives] == step.actions
    assert "has_wood" not in step.props_before and "has_wood" in step.props_after
    assert step.primitives[-1]["inventory_delta"] == {"wood": 1}
    assert step.obs.startswith("You see:")
