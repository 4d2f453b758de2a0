"""Shortest plans from data.yaml: valid, minimal (checked against unpruned search), exact."""
from collections import deque

import crafter.constants as C
import pytest

from regula.envs.crafter.planner import AbstractState, _applicable, shortest_plan, shortest_plans
from regula.envs.crafter.rules import RULES
from regula.errors import UnknownNameError


def simulate(plan, state=None):
    """Apply a plan with the recipes' plain semantics; fail on an inapplicable step."""
    inv = dict(state or {})
    placed = set()
    for skill in plan:
        r = RULES.recipes[skill]
        assert all(inv.get(k, 0) >= v for k, v in r.require.items()), skill
        assert all(inv.get(k, 0) >= v for k, v in r.uses.items()), skill
        assert all(s in placed for s in r.nearby), skill
        for k, v in r.uses.items():
            inv[k] -= v
        for k, v in r.gives.items():
            inv[k] = inv.get(k, 0) + v
        if r.kind == "place":
            placed.add(r.target)
    return inv, placed


def brute_force_length(goal, max_depth=12):
    """BFS without any pruning, for small goals."""
    start = AbstractState.from_inventory({})
    frontier, seen = deque([(start, 0)]), {start}
    while frontier:
        state, d = frontier.popleft()
        for r in RULES.recipes.values():
            if not _applicable(state, r):
                continue
            if r.skill == goal:
                return d + 1
            items = list(state.items)
            from regula.envs.crafter.planner import ITEM_INDEX
            for k, v in r.uses.items():
                items[ITEM_INDEX[k]] -= v
            for k, v in r.gives.items():
                if k in ITEM_INDEX:
                    items[ITEM_INDEX[k]] = min(items[ITEM_INDEX[k]] + v, 9)
            nxt = AbstractState(tuple(items), state.placed | ({r.target} if r.kind == "place" else set()))
            if nxt not in seen and d + 1 < max_depth:
                seen.add(nxt)
                frontier.append((nxt, d + 1))
    return None


@pytest.mark.parametrize("goal", ["place_table", "make_wood_pickaxe", "collect_stone", "make_stone_pickaxe"])
def test_pruned_search_is_still_shortest(goal):
    assert len(shortest_plan(goal)) == brute_force_length(goal)


def test_every_recipe_plan_is_valid_and_ends_on_its_goal():
    for goal, plan in shortest_plans().items():
        if goal in RULES.recipes:
            simulate(plan)
            assert plan[-1] == goal


def test_diamond_plan_length_follows_data_yaml():
    wood = (C.place["table"]["uses"]["wood"] + sum(C.make[t]["uses"].get("wood", 0)
            for t in ("wood_pickaxe", "stone_pickaxe", "iron_pickaxe")))
    stone = C.place["furnace"]["uses"]["stone"] + C.make["stone_pickaxe"]["uses"]["stone"]
    plan = shortest_plan("collect_diamond")
    assert plan.count("collect_wood") == wood
    assert plan.count("collect_stone") == stone
    # wood + stone + coal + iron + diamond collects, table + furnace, three pickaxes
    assert len(plan) == wood + stone + 3 + 2 + 3


def test_plan_from_a_midway_state():
    state = AbstractState.from_inventory({"wood": 3, "wood_pickaxe": 1}, ["table"])
    plan = shortest_plan("make_stone_pickaxe", state)
    assert plan == ["collect_stone", "make_stone_pickaxe"]


def test_non_recipe_achievements():
    assert shortest_plan("wake_up") == ["sleep"]
    assert shortest_plan("eat_plant") == ["collect_sapling", "place_plant", "eat_plant"]


def test_unknown_goal():
    with pytest.raises(UnknownNameError, match="valid achievements: collect_coal"):
        shortest_plan("collect_gold")
