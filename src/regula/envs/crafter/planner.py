"""Shortest high-level plans, computed from data.yaml by search over the abstract state.

The abstract state is the inventory (resources and tools, clamped at data.yaml's maxima) and
the set of stations placed. Skills are data.yaml's collect/place/make recipes; placing a
station makes it available from then on (the abstract model ignores walking, as LTLCrit's
does). The result is the reference "optimum" that later stages divide by.
"""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from functools import lru_cache

from regula.errors import UnknownNameError

from .rules import RULES

# Achievements that are not a data.yaml recipe: the skill that earns them and what it needs.
OTHER_ACHIEVEMENTS = {
    "eat_cow": ("eat_cow", ()),
    "defeat_zombie": ("defeat_zombie", ()),
    "defeat_skeleton": ("defeat_skeleton", ()),
    "wake_up": ("sleep", ()),
    "eat_plant": ("eat_plant", ("plant",)),  # needs a planted sapling (place_plant)
}


@dataclass(frozen=True)
class AbstractState:
    items: tuple  # counts aligned with ITEM_NAMES
    placed: frozenset = frozenset()

    @classmethod
    def from_inventory(cls, inventory: dict, placed=()):
        return cls(tuple(min(int(inventory.get(k, 0)), RULES.items[k]["max"]) for k in ITEM_NAMES),
                   frozenset(placed))

    def count(self, item: str) -> int:
        return self.items[ITEM_INDEX[item]]


ITEM_NAMES = tuple(RULES.resources) + tuple(RULES.tools)
ITEM_INDEX = {k: i for i, k in enumerate(ITEM_NAMES)}


def _applicable(state: AbstractState, recipe) -> bool:
    return (all(state.count(k) >= v for k, v in recipe.require.items())
            and all(state.count(k) >= v for k, v in recipe.uses.items())
            and all(s in state.placed for s in recipe.nearby))


def _apply(state: AbstractState, recipe, caps: dict) -> AbstractState | None:
    if not _applicable(state, recipe):
        return None
    items = list(state.items)
    # Pruning that keeps plans shortest: a tool is only required (>= 1), never consumed twice
    # by one recipe, and a station, once placed, stays; so making a held tool, placing a
    # placed station, or collecting past what the relevant recipes can use never helps.
    if recipe.kind == "make" and items[ITEM_INDEX[recipe.target]] >= 1:
        return None
    if recipe.kind == "place" and recipe.target in state.placed:
        return None
    if recipe.kind == "collect" and any(items[ITEM_INDEX[k]] >= caps.get(k, 0)
                                        for k in recipe.gives if k in ITEM_INDEX):
        return None
    for k, v in recipe.uses.items():
        items[ITEM_INDEX[k]] -= v
    gained = False
    for k, v in recipe.gives.items():
        if k in ITEM_INDEX:
            new = min(items[ITEM_INDEX[k]] + v, RULES.items[k]["max"])
            gained |= new != items[ITEM_INDEX[k]]
            items[ITEM_INDEX[k]] = new
    placed = state.placed | ({recipe.target} if recipe.kind == "place" else set())
    if not gained and placed == state.placed and recipe.kind != "place":
        return None  # a no-op in the abstract model
    return AbstractState(tuple(items), frozenset(placed))


def _relevant(goal: str):
    """Recipes that can contribute to `goal` (backward closure) and useful item counts."""
    by_output: dict = {}
    for r in RULES.recipes.values():
        for k in r.gives:
            by_output.setdefault(k, []).append(r)
        if r.kind == "place":
            by_output.setdefault(r.target, []).append(r)
    relevant, todo = {}, [RULES.recipes[goal]]
    while todo:
        r = todo.pop()
        if r.skill in relevant:
            continue
        relevant[r.skill] = r
        for need in list(r.require) + list(r.uses) + list(r.nearby):
            todo += by_output.get(need, [])
    caps: dict = {}
    for r in relevant.values():
        if r.kind != "collect":  # each make/place runs at most once in a shortest plan
            for k, v in r.uses.items():
                caps[k] = min(caps.get(k, 0) + v, RULES.items[k]["max"])
        for k, v in r.require.items():
            caps[k] = max(caps.get(k, 0), v)
    order = [r for r in RULES.recipes.values() if r.skill in relevant]
    return order, caps


def achievement_names() -> list[str]:
    return list(RULES.achievements)


def shortest_plan(goal: str, start: AbstractState | None = None, max_depth: int = 40) -> list[str]:
    """The shortest skill sequence whose last skill unlocks achievement `goal`. Memoised: the
    expert asks for every achievement at every decision, from a handful of abstract states."""
    plan = _memo(goal, start or AbstractState.from_inventory({}), max_depth)
    if isinstance(plan, str):
        raise ValueError(plan)
    return list(plan)  # a fresh list: callers may change theirs


@lru_cache(maxsize=1 << 14)  # a goal-all episode asks ~300 (goal, state) pairs
def _memo(goal: str, start: AbstractState, max_depth: int) -> tuple | str:
    """`_search`'s plan as a tuple, or its error's message (lru_cache keeps no exceptions)."""
    try:
        return tuple(_search(goal, start, max_depth))
    except ValueError as e:
        return str(e)


def _search(goal: str, start: AbstractState | None = None, max_depth: int = 40) -> list[str]:
    if goal not in RULES.achievements:
        raise UnknownNameError("achievement", goal, RULES.achievements)
    start = start or AbstractState.from_inventory({})
    if goal in OTHER_ACHIEVEMENTS:
        skill, needs = OTHER_ACHIEVEMENTS[goal]
        prefix = []
        for thing in needs:
            if thing not in start.placed:
                prefix = shortest_plan(f"place_{thing}", start, max_depth)
        return prefix + [skill]
    recipes, caps = _relevant(goal)
    parents: dict = {start: None}
    frontier = deque([start])
    depth = {start: 0}
    while frontier:
        state = frontier.popleft()
        if depth[state] >= max_depth:
            break
        for recipe in recipes:
            if recipe.skill == goal and _applicable(state, recipe):
                plan = [recipe.skill]
                node = state
                while parents[node] is not None:
                    node, skill = parents[node]
                    plan.append(skill)
                return plan[::-1]
            nxt = _apply(state, recipe, caps)
            if nxt is not None and nxt not in parents:
                parents[nxt] = (state, recipe.skill)
                depth[nxt] = depth[state] + 1
                frontier.append(nxt)
    raise ValueError(f"no plan to {goal} within {max_depth} skills")


def shortest_plans() -> dict[str, list[str]]:
    """Reference plans from the initial state for every achievement."""
    return {a: shortest_plan(a) for a in RULES.achievements}


def after(state: AbstractState, skill: str) -> AbstractState | None:
    """The abstract state once `skill` is done in `state` (unchanged when it gains nothing),
    or None when it cannot be done there (not a recipe, or not applicable)."""
    r = RULES.recipes.get(skill)
    if r is None or not _applicable(state, r):
        return None
    nxt = _apply(state, r, {k: RULES.items[k]["max"] for k in RULES.items})
    return nxt if nxt is not None else state


def accomplishes(goal: str, word) -> bool:
    """Does a word of skills accomplish `goal` from a fresh start, by data.yaml's abstract rules?
    (Every skill applicable in turn, and the goal's skill among them.) The ground truth a
    rule-grounded teacher answers from."""
    recipe = RULES.recipe(goal)
    state = AbstractState.from_inventory({})
    for skill in word:
        state = after(state, skill)
        if state is None:
            return False
        if skill == recipe.skill:
            return True
    return False
