"""Discoverers: world-dynamics candidates from sampled experiences (DiVE's Discoverer).

Two backends of the `discoverer` role (`regula.roles.Discoverer`) behind
`discover(banks, step) -> [Candidate]`:

* `StatisticalDiscoverer` (no network): for each action, what holds across the sampled
  successful transitions — the same inventory change in all (consumes / gives; what is
  used up is required), tools held in all (requires), what was within reach in all (near),
  what was faced before (faces: the cells an action that changes them succeeded on) and after
  (leaves). Confounders come for free (an agent that always held a sword when mining stone,
  always stood on grass when it made a pickaxe).
* `LLMDiscoverer` (`llm_discover.py`): the same sampled transitions as text, JSON answers.

Both read the experiences only (names included); wrong candidates to measure the Verifier
with are added by the stage (`hallucinate.py`), not here.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from regula import envs, roles

from .banks import Banks, Transition
from .dynamics import Dynamic

CRAFTER = envs.get("crafter")


@dataclass(frozen=True)
class Candidate:
    dynamic: Dynamic
    origin: str = "discovered"  # discovered (the discoverer's own) | a kind of hallucinate.KINDS (injected)
    support: int = 0  # sampled experiences it was read from
    step: int = 0  # discovery step that proposed it

    def to_json(self) -> dict:
        return {**self.dynamic.to_json(), "text": self.dynamic.text(), "origin": self.origin,
                "support": self.support, "step": self.step}


def holdings(banks: Banks) -> set[str]:
    """What an action can require or consume: the inventory's keys (the observation's), less
    the body stats."""
    return {k for xs in banks.actions.values() for x in xs for k in x.inventory} - set(CRAFTER.body_stats)


def tools_seen(banks: Banks) -> set[str]:
    """Items some action gives and no experience ever used up: what a recipe can require
    without consuming (pickaxes, swords), told apart by the experiences alone."""
    given, used = set(), set()
    for xs in banks.actions.values():
        for x in xs:
            given |= {k for k, v in x.delta.items() if v > 0}
            used |= {k for k, v in x.delta.items() if v < 0}
    return (given - used) & holdings(banks)


def placed_things(banks: Banks) -> set[str]:
    """What the agent's own actions put on the map (`place_table` places a table): the
    things a recipe can need nearby."""
    return {e[len("place_"):] for e in banks.actions if e.startswith("place_")}


def read_sample(element: str, sample: list[Transition], tools: set[str], placed: set[str],
                held: set[str]) -> list[Dynamic]:
    """What holds across every transition of `sample` (all successes of `element`): the same
    change in all (consumes / gives; what is used up is also required, in that amount; `held`:
    what can be), tools held in all (requires), what was within reach in all (near), what was
    faced (faces: the one material of an action named by it; for an action that changes the
    faced cell, each material it succeeded on) and what that cell became (leaves) when the same
    in all. Nearby candidates are things the agent's actions place."""
    out = []
    for item in sorted(set().union(*(x.delta for x in sample))):
        values = {x.delta.get(item, 0) for x in sample}
        if len(values) == 1:
            v = values.pop()
            if v < 0 and item in held:
                out.append(Dynamic(element, "consumes", item, -v))
                out.append(Dynamic(element, "requires", item, -v))
            elif v > 0:
                out.append(Dynamic(element, "gives", item, v))
    for tool in sorted(tools):
        if all(x.inventory.get(tool, 0) >= 1 for x in sample):
            out.append(Dynamic(element, "requires", tool, 1))
    for material in sorted(set.intersection(*(set(x.near) for x in sample)) & placed):
        out.append(Dynamic(element, "near", material))
    facing = {x.facing for x in sample}
    after = {x.after for x in sample if x.after}
    if named_by_facing(element):
        if len(facing) == 1:
            out.append(Dynamic(element, "faces", facing.pop()))
    elif acts_on_faced(sample):
        out += [Dynamic(element, "faces", m) for m in sorted(facing)]  # each a cell it may act on
    else:
        return out  # what it faced it left as it was: facing is where the player happened to stand
    if len(after) == 1:
        out.append(Dynamic(element, "leaves", after.pop()))
    return out


def named_by_facing(element: str) -> bool:
    """`do` performs an action named by the material it faces (`do` facing a tree collects
    wood): that one material is faced every time. Place and make actions are the game's own
    action names, done facing whatever is there."""
    return element not in CRAFTER.actions


def acts_on_faced(transitions: list[Transition]) -> bool:
    """Whether an action changes the cell it faces (a placed table where grass was) in every
    transition whose next observation is known: then what it faced is a condition, met by
    each material it succeeded on (`faces` names one of them). One that leaves the faced cell
    as it was (making a pickaxe) does not act on it, whatever it happened to face."""
    known = [x for x in transitions if x.after]
    return bool(known) and all(x.after != x.facing for x in known)


@roles.register("discoverer", "statistical")
class StatisticalDiscoverer:
    name = "statistical"
    uses_llm = False

    def __init__(self, samples: int = 8, seed: int = 0):
        self.samples, self.seed = samples, seed

    def discover(self, banks: Banks, step: int = 0) -> list[Candidate]:
        rng = random.Random(f"discover:{self.seed}:{step}")
        found: list[Candidate] = []
        tools, placed, held = tools_seen(banks), placed_things(banks), holdings(banks)
        for element in sorted(banks.actions):
            successes = banks.successes(element)
            if not successes:
                continue
            sample = rng.sample(successes, min(self.samples, len(successes)))
            found += [Candidate(d, "discovered", len(sample), step)
                      for d in read_sample(element, sample, tools, placed, held)]
        return found
