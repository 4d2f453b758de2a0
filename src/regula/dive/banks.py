"""Semantic experience banks built from data/demos (DiVE section 3.1).

B^A: primitive transitions per action (what the agent faced, which things were within reach,
its inventory before, what changed, what it faced afterwards); B^O: observations per object (what else
was in view, whether it was night); B^ST: the high-level steps that completed each subtask
(achievement); B^SG: the order in which each episode completed its subtasks.

Everything here comes from the episodes and the game's interface (action and achievement
names, inventory keys), never from data.yaml: which material `do` collects is read off the
experiences where doing it unlocked a `collect_<item>` achievement.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from regula import envs
from regula.agents import SURVIVAL

CRAFTER = envs.get("crafter")


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
    after: str = ""  # what it faced after the action ("" at an episode's end: unknown)

    def where(self) -> str:
        return f"seed {self.seed}, step {self.t}.{self.k}"


def collected(episodes: list[dict]) -> dict[str, str]:
    """material -> the collect action doing it performs: `do` facing the material unlocked
    the achievement `collect_<item>` in some experience."""
    out = {}
    for ep in episodes:
        for step in ep["steps"]:
            for p in step.get("primitives", []):
                for a in p["unlocked"]:
                    if p["action"] == "do" and a.startswith("collect_") and p.get("facing"):
                        out.setdefault(p["facing"], a)
    return out


def element_of(action: str, facing: str | None, collects: dict[str, str]) -> str | None:
    """The action a primitive performs, if it is one DiVE learns: a place or make action, or
    `do` facing a material `collects` knows (`do` facing a tree collects wood)."""
    if action.startswith(("place_", "make_")):
        return action
    if action == "do":
        return collects.get(facing)
    return None


def succeeded(element: str, delta: dict) -> bool:
    """Whether the action did what its name says: made or collected the named item (an
    inventory key), or placed something (an item that is not a body stat was used up)."""
    kind, _, item = element.partition("_")
    if kind == "place":
        return any(v < 0 and k not in CRAFTER.body_stats for k, v in delta.items())
    return delta.get(item, 0) > 0


def transitions(episode: dict, collects: dict[str, str]) -> list[Transition]:
    """Every primitive action of an episode that performs an action DiVE learns, with the
    inventory before it (rebuilt backwards from each step's inventory after) and what was
    faced after it (what the next primitive action faced; unknown where that is a creature the
    action did not place: one that walked in)."""
    seed = episode["header"]["seed"]
    flat = []
    for step in episode["steps"]:
        prims = step.get("primitives", [])
        inv = dict(step["inventory"])
        before = []
        for p in reversed(prims):
            for k, v in p["inventory_delta"].items():
                inv[k] = inv.get(k, 0) - v
            before.append(dict(inv))
        before.reverse()
        flat += [(step["t"], k, p, inv_before) for k, (p, inv_before) in enumerate(zip(prims, before))]
    out = []
    for i, (t, k, p, inv_before) in enumerate(flat):
        element = element_of(p["action"], p.get("facing"), collects)
        if element is None:
            continue
        after = flat[i + 1][2].get("facing") or "" if i + 1 < len(flat) else ""
        if after in CRAFTER.creatures and element != f"place_{after}":
            after = ""
        out.append(Transition(element, seed, t, k, p.get("facing") or "", tuple(p.get("near", ())),
                              inv_before, dict(p["inventory_delta"]), tuple(p["unlocked"]),
                              succeeded(element, p["inventory_delta"]), after))
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
    # per episode: achievements in the order first unlocked by the demonstrator's own steps (those
    # its survival layer made, waking up or a zombie that came close, the agent's own layer makes)
    subgoals: list = field(default_factory=list)

    def successes(self, element: str) -> list[Transition]:
        return [x for x in self.actions.get(element, []) if x.success]

    def sizes(self) -> dict:
        return {"B^A": sum(len(v) for v in self.actions.values()),
                "B^O": sum(len(v) for v in self.objects.values()),
                "B^ST": sum(len(v) for v in self.subtasks.values()), "B^SG": len(self.subgoals)}


def build(episodes: list[dict]) -> Banks:
    banks = Banks()
    collects = collected(episodes)
    for ep in episodes:
        seed = ep["header"]["seed"]
        for x in transitions(ep, collects):
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
                if step.get("by") != SURVIVAL:
                    order.append(a)
        banks.subgoals.append(order)
    return banks
