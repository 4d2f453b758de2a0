"""Semantic experience banks built from data/demos (DiVE section 3.1).

B^A: primitive transitions per data.yaml action (what the agent faced, which stations were
within reach, its inventory before, what changed); B^O: observations per object (what else
was in view, whether it was night); B^ST: the high-level steps that completed each subtask
(achievement); B^SG: the order in which each episode completed its subtasks.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula import envs

CRAFTER = envs.get("crafter")

# The material one faces to collect (`do`) -> the collect action; unique in data.yaml.
_COLLECT_BY_MATERIAL = {r.target: r.skill for r in CRAFTER.rules.recipes.values() if r.kind == "collect"}


@dataclass(frozen=True)
class Transition:
    element: str
    seed: int
    t: int  # high-level step of the episode
    k: int  # primitive action within that step
    facing: str
    near: tuple  # materials within reach before the action
    inventory: dict  # before the action
    delta: dict
    unlocked: tuple
    success: bool

    def where(self) -> str:
        return f"seed {self.seed}, step {self.t}.{self.k}"


def element_of(action: str, facing: str | None) -> str | None:
    """The data.yaml action a primitive action performs, if any (`do` facing a tree collects wood)."""
    if action in CRAFTER.rules.recipes:
        return action
    if action == "do" and facing in _COLLECT_BY_MATERIAL:
        return _COLLECT_BY_MATERIAL[facing]
    return None


def _succeeded(element: str, delta: dict, unlocked) -> bool:
    recipe = CRAFTER.rules.recipes[element]
    if recipe.kind == "place":
        return any(delta.get(k, 0) < 0 for k in recipe.uses)
    return any(delta.get(k, 0) > 0 for k in recipe.gives)


def transitions(episode: dict) -> list[Transition]:
    """Every primitive action of an episode that performs a data.yaml action, with the
    inventory before it (rebuilt backwards from each step's inventory after)."""
    seed = episode["header"]["seed"]
    out = []
    for step in episode["steps"]:
        prims = step.get("primitives", [])
        inv = dict(step["inventory"])
        before = []
        for p in reversed(prims):
            for k, v in p["inventory_delta"].items():
                inv[k] = inv.get(k, 0) - v
            before.append(dict(inv))
        before.reverse()
        for k, (p, inv_before) in enumerate(zip(prims, before)):
            element = element_of(p["action"], p.get("facing"))
            if element is None:
                continue
            out.append(Transition(element, seed, step["t"], k, p.get("facing") or "", tuple(p.get("near", ())),
                                  inv_before, dict(p["inventory_delta"]), tuple(p["unlocked"]),
                                  _succeeded(element, p["inventory_delta"], p["unlocked"])))
    return out


@dataclass(frozen=True)
class Segment:
    """A high-level step that completed a subtask (unlocked an achievement)."""

    seed: int
    t: int
    skill: str
    steps: int
    before: frozenset  # propositions true when it began
    after: frozenset
    delta: dict


@dataclass
class Banks:
    actions: dict = field(default_factory=dict)  # element -> [Transition] (successes and failures)
    objects: dict = field(default_factory=dict)  # thing -> [(seed, t, frozenset(in view), night)]
    subtasks: dict = field(default_factory=dict)  # achievement -> [Segment]
    subgoals: list = field(default_factory=list)  # per episode: achievements in the order first unlocked

    def successes(self, element: str) -> list[Transition]:
        return [x for x in self.actions.get(element, []) if x.success]

    def sizes(self) -> dict:
        return {"B^A": sum(len(v) for v in self.actions.values()),
                "B^O": sum(len(v) for v in self.objects.values()),
                "B^ST": sum(len(v) for v in self.subtasks.values()), "B^SG": len(self.subgoals)}


def build(episodes: list[dict]) -> Banks:
    banks = Banks()
    for ep in episodes:
        seed = ep["header"]["seed"]
        for x in transitions(ep):
            banks.actions.setdefault(x.element, []).append(x)
        order = []
        for step in ep["steps"]:
            view = frozenset(p[: -len("_in_view")] for p in step["props_before"] if p.endswith("_in_view"))
            night = "is_night" in step["props_before"]
            for thing in view:
                banks.objects.setdefault(thing, []).append((seed, step["t"], view, night))
            for a in step["unlocked"]:
                banks.subtasks.setdefault(a, []).append(Segment(
                    seed, step["t"], step["skill"], len(step["actions"]), frozenset(step["props_before"]),
                    frozenset(step["props_after"]), dict(step["inventory_delta"])))
                order.append(a)
        banks.subgoals.append(order)
    return banks
