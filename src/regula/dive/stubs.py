"""The stub server's answers to DiVE's prompts (`regula.llm.stub_answers` merges them): the
symbolic evolver's chain, the CoT baselines' first step of it, the statistical discoverer's
reading of the transitions shown. The chain also answers LTLCrit's actors (`plan_toward`)."""
from __future__ import annotations

import re
from functools import lru_cache

from regula.llm.stub_fields import bullets, counts, dumps, inventory_of


# -- DiVE's chain over dynamics (the symbolic evolver), for the evolver and LTLCrit's actors -------

class _Situation:
    """What `DiveAgent.chain` reads of an agent (its knowledge, inventory, explored map),
    rebuilt from a prompt, so the symbolic evolver's own chaining answers."""

    def __init__(self, knowledge, inventory: dict, on_map: set):
        from types import SimpleNamespace
        self.knowledge, self.world, self._on_map = knowledge, SimpleNamespace(inventory=inventory), on_map

    def on_map(self, thing: str) -> bool:
        return thing in self._on_map

    def chain(self, skill: str, depth: int = 0, seen: frozenset = frozenset()):
        from regula.dive.agent import DiveAgent
        return DiveAgent.chain(self, skill, depth, seen)


@lru_cache(maxsize=None)
def _rules_knowledge():
    from regula.dive.agent import Knowledge
    from regula.dive.dynamics import ground_truth
    return Knowledge.of(ground_truth())


def plan_toward(goal: str, observation: str, state: str) -> list[str]:
    """The chain toward `goal` over data.yaml's dynamics, from the inventory the observation
    shows and the things the propositions say are on the map; [] when there is none."""
    from regula.dive.agent import SKILL_OF
    on_map = {p[: -len("_on_map")] for p in state.split(", ") if p.endswith("_on_map")}
    situation = _Situation(_rules_knowledge(), inventory_of(observation), on_map)
    return situation.chain(SKILL_OF.get(goal, goal)) or []


def evolver(goal: str, dynamics: str, held: str, known: str, skills: str) -> str:
    """The symbolic evolver's chain over the dynamics the prompt lists."""
    from regula.dive.agent import Knowledge
    from regula.dive.dynamics import Dynamic
    facts = []
    for line in bullets(dynamics):
        element, attribute, rest = line.split(" ", 2)
        value, arg = rest.split(" ", 1) if attribute == "requires" else (1, rest)
        facts.append(Dynamic(element, attribute, arg, int(value)))
    inventory = {} if held == "nothing" else counts(held, " ")
    on_map = set() if known == "nothing" else set(known.split(", "))
    plan = _Situation(Knowledge.of(facts), inventory, on_map).chain(goal)
    return dumps({"strategies": [{"steps": plan, "why": f"each step provides what the next needs, up to {goal}"}]
                  if plan else []})


def cot(observation: str, unlocked: str, todo: str, known: str, dynamics: str, skills: str) -> str:
    """DiVE's CoT baselines: the first step of the chain, over data.yaml's dynamics, toward the
    first achievement not yet unlocked that has one; else explore."""
    from regula.dive.agent import SKILL_OF
    on_map = set() if known == "nothing" else set(known.split(", "))
    situation = _Situation(_rules_knowledge(), inventory_of(observation), on_map)
    for goal in todo.split(", "):
        plan = situation.chain(SKILL_OF.get(goal, goal))
        if plan:
            return dumps({"thought": f"toward {goal}: {' -> '.join(plan)}", "skill": plan[0]})
    return dumps({"thought": "nothing left within reach; explore", "skill": "explore"})


# -- DiVE's discoverer ------------------------------------------------------------------------

_TRANSITION = re.compile(r"facing (.*); within reach: (.*); holding: (.*); inventory change: (.*); facing after: (.*)")


def discoverer(element: str, n: str, transitions: str, attributes: str) -> str:
    """The statistical discoverer's reading of the transitions shown; what can be placed or
    made is read off the game's action names (the banks it reads them from are not shown)."""
    from regula import envs
    from regula.dive.banks import Transition
    from regula.dive.discover import read_sample
    actions = envs.get("crafter").actions
    sample = []
    for line in bullets(transitions):
        facing, near, held, change, after = _TRANSITION.fullmatch(line).groups()
        inventory = {} if held == "nothing" else counts(held, " ")
        sample.append(Transition(element, 0, 0, 0, facing, () if near == "nothing" else tuple(near.split(", ")),
                                 inventory, {} if change == "no change" else {k: int(v) for k, v in
                                                                             (p.split(" ") for p in change.split(", "))},
                                 (), True, "" if after == "unknown" else after))
    placed = {a[len("place_"):] for a in actions if a.startswith("place_")}
    tools = {a[len("make_"):] for a in actions if a.startswith("make_")}
    held = {k for x in sample for k in (*x.inventory, *x.delta)}
    found = read_sample(element, sample, tools, placed, held) if sample else []
    return dumps({"dynamics": [{"attribute": d.attribute, "arg": d.arg, "value": d.value} for d in found]})


# prompt template -> its answer, from the fields the role filled in
ANSWERS = {"dive_discover": discoverer, "dive_evolve": evolver, "dive_cot": cot}
