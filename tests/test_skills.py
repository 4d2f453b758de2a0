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


# -- failure causes: what programs read instead of the reason ------------------------------------
def test_missing_items_give_item_have_and_need(world):
    step = world.run_skill("collect_stone")
    tool, amount = next(iter(C.collect["stone"]["require"].items()))
    assert step.cause == {"kind": "missing", "item": tool, "have": 0, "need": amount}
    assert world.run_skill("collect_wood").success
    step = world.run_skill("place_table")
    assert step.cause == {"kind": "missing", "item": "wood", "have": 1, "need": C.place["table"]["uses"]["wood"]}
    assert world.run_skill("collect_wood").success and world.run_skill("collect_wood").cause is None


def test_things_not_seen_and_not_in_view(world):
    world.run_skill("collect_wood")
    assert world.run_skill("make_wood_pickaxe").cause == {"kind": "not_seen", "thing": "table"}
    world.env.player.inventory["iron_pickaxe"] = 1
    assert world.run_skill("collect_diamond").cause == {"kind": "not_seen", "thing": "diamond"}
    assert world.run_skill("defeat_zombie").cause == {"kind": "not_in_view", "thing": "zombie"}
    step = world.run_skill("eat_plant")
    assert step.reason == "no ripe plant in view" and step.cause == {"kind": "not_in_view", "thing": "plant"}


def test_interrupt_budget_episode_end_and_needless_sleep():
    world = CrafterWorld(seed=1)
    step = world.run_skill("explore", interrupt=lambda w: "zombie close")
    assert step.reason == "interrupted: zombie close"
    assert step.cause == {"kind": "interrupted", "why": "zombie close"} and step.steps == 1
    assert world.run_skill("sleep").cause == {"kind": "no_need", "stat": "energy"}
    assert world.run_skill("shelter").cause == {"kind": "no_place", "what": "shelter"}  # no stone, no pickaxe
    step = CrafterWorld(seed=1, max_skill_steps=3).run_skill("explore")
    assert (step.reason, step.cause) == ("step budget of 3 exhausted", {"kind": "budget", "steps": 3})
    short = CrafterWorld(seed=1, length=2)
    short.run_skill("explore")
    step = short.run_skill("explore")
    assert (step.reason, step.cause) == ("episode over", {"kind": "episode_over", "died": False})


def test_no_route_and_no_effect(world, monkeypatch):
    from regula.envs.crafter import skills
    monkeypatch.setattr(skills, "plan_path", lambda *a, **k: None)  # the map offers no way there
    step = world.run_skill("collect_wood")
    assert (step.reason, step.cause) == ("no known route to tree", {"kind": "no_route", "to": "tree"})
    monkeypatch.undo()
    monkeypatch.setattr(skills.Controller, "_achieved", lambda self, name: 0)  # the game never counts it
    step = world.run_skill("collect_wood")
    assert step.reason == "do on tree gave no wood"
    assert step.cause == {"kind": "no_effect", "skill": "collect_wood", "item": "wood"}


def test_every_failure_in_the_skills_names_a_documented_kind():
    import ast
    from pathlib import Path

    from regula.envs import CAUSE_KINDS
    from regula.envs.crafter import skills
    tree = ast.parse(Path(skills.__file__).read_text())
    kinds = [call.args[1].value for call in ast.walk(tree) if isinstance(call, ast.Call)
             and getattr(call.func, "id", None) == "Failed"]
    # Every kind but those for simulators that do not walk to their targets (base.py says which).
    assert set(kinds) == set(CAUSE_KINDS) - {"too_far", "invalid", "enclosed", "occupied", "other"}
    with pytest.raises(ValueError, match="unknown failure kind 'oops'"):
        skills.Failed("x", "oops")


def _give(world, **items):
    world.env.player.inventory.update(items)


def test_a_sapling_is_planted_walled_in_and_eaten_ripe():
    world = CrafterWorld(seed=3)
    _give(world, sapling=1, stone=9, wood_pickaxe=1)
    step = world.run_skill("place_plant")
    assert step.success, step.reason
    assert "place_plant" in step.unlocked and "place_stone" in step.unlocked
    (cell,) = world.controller.plants
    plant = world.env.world[cell][1]
    assert type(plant).__name__ == "Plant"
    assert world.controller._open_sides(cell) == []  # no cow or zombie can step next to it
    # Not ripe yet: the skill goes back, waits next to it (walled in at night) and eats it.
    step = world.run_skill("eat_plant")
    assert step.success, step.reason
    assert step.unlocked[-1] == "eat_plant" and 300 < world.controller.plant_growth(cell) < world.steps
    assert world.steps < 350


def test_a_plant_seen_gone_is_forgotten():
    world = CrafterWorld(seed=3)
    _give(world, sapling=1, stone=9, wood_pickaxe=1)
    assert world.run_skill("place_plant").success
    (cell,) = world.controller.plants
    world.env.world.remove(world.env.world[cell][1])  # trampled
    step = world.run_skill("eat_plant")
    assert step.cause == {"kind": "not_in_view", "thing": "plant"} and world.controller.plants == {}


def test_defeat_skeleton_with_a_sword():
    from crafter import objects
    world = CrafterWorld(seed=1)
    player = world.env.player
    cell = (int(player.pos[0]) + 2 * player.facing[0], int(player.pos[1]) + 2 * player.facing[1])
    world.env.world[cell] = "path"
    world.env.world.add(objects.Skeleton(world.env.world, cell, player))
    world.memory.observe(world.env.world, player.pos)
    _give(world, wood_sword=1)
    step = world.run_skill("defeat_skeleton")
    assert step.success and step.unlocked == ["defeat_skeleton"], step.reason


def test_two_irons_make_the_pickaxe_and_the_sword():
    world = CrafterWorld(seed=1)
    pick, sword = C.make["iron_pickaxe"]["uses"], C.make["iron_sword"]["uses"]
    _give(world, wood=C.place["table"]["uses"]["wood"] + pick["wood"] + sword["wood"],
          stone=C.place["furnace"]["uses"]["stone"], coal=pick["coal"] + sword["coal"], iron=pick["iron"] + sword["iron"])
    for skill in ("place_table", "place_furnace", "make_iron_pickaxe", "make_iron_sword"):
        step = world.run_skill(skill)
        assert step.success and step.unlocked == [skill], step.reason
    assert world.inventory["iron"] == 0 and world.inventory["iron_sword"] == 1
