import pytest

from regula.envs.crafter.symbols import SymbolConfig, proposition_names
from regula.envs.crafter.verbalizer import verbalize
from regula.envs.crafter.world import CrafterWorld
from regula.errors import ParamsError, UnknownNameError


def test_thresholds_come_from_config():
    cfg = SymbolConfig(thresholds={"wood": [1, 5]})
    names = proposition_names(cfg)
    assert "has_wood" in names and "has_5_wood" in names and "has_2_wood" not in names
    world = CrafterWorld(seed=1, symbols=cfg)
    assert set(world.props()) == set(names)


def test_threshold_props_follow_inventory():
    world = CrafterWorld(seed=1)
    for n in range(1, 4):
        world.run_skill("collect_wood")
        props = world.props()
        assert props["has_wood"] and props["has_2_wood"] == (n >= 2) and props["has_3_wood"] == (n >= 3)


def test_bad_thresholds():
    with pytest.raises(UnknownNameError, match="unknown item 'gold'"):
        SymbolConfig(thresholds={"gold": [1]})
    with pytest.raises(ParamsError, match="levels must be integers >= 1"):
        SymbolConfig(thresholds={"wood": [0]})


def test_facing_and_in_view():
    world = CrafterWorld(seed=1)
    world.controller.run("collect_wood")  # ends facing the tree it cut... now grass
    props = world.props()
    p, f = world.env.player.pos, world.env.player.facing
    faced = world.env.world[(p[0] + f[0], p[1] + f[1])][0]
    assert props[f"facing_{faced}"]
    assert sum(props[k] for k in props if k.startswith("facing_")) == 1
    assert props["grass_in_view"]


def test_verbalizer_says_what_is_there():
    world = CrafterWorld(seed=1)
    text = world.text()
    # seed 1 starts with a tree 2 east ... whatever the world says, the text must agree with it:
    px, py = (int(v) for v in world.env.player.pos)
    trees = [(x, y) for (x, y) in world.memory.positions("tree")]
    d = min(abs(x - px) + abs(y - py) for x, y in trees)
    assert f"- tree {d} steps away" in text
    assert "Inventory: empty." in text
    assert "Status: health 9/9, food 9/9, drink 9/9, energy 9/9." in text
    assert "It is day (step 0)." in text
    world.run_skill("collect_wood")
    text = verbalize(world.env, world.memory, night=True)
    assert "Inventory: wood: 1." in text and "It is night" in text
    assert "Around you: west: " in text and "You face " in text


def test_the_catalogue_describes_every_proposition_and_skill():
    """Every name has its own line in catalogue.yaml (none falls back to its bare words)."""
    from regula import envs
    from regula.envs.crafter.symbols import _catalogue
    crafter = envs.get("crafter")
    names = crafter.proposition_names() + crafter.skill_names()
    assert [n for n in names if not any(r["match"].fullmatch(n) for r in _catalogue())] == []
    assert crafter.describe("has_2_wood") == "the agent holds at least 2 wood"
    assert crafter.describe("make_iron_pickaxe") == "make an iron pickaxe at a table and a furnace"
    assert crafter.describe("collect_drink") == "walk to a water and collect drink"
    assert crafter.describe("table_on_map").startswith("the agent knows a table it can use")
    assert crafter.describe("not_a_symbol") == "not a symbol"
