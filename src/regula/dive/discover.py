"""Discoverers: world-dynamics candidates from sampled experiences (DiVE's Discoverer).

Two backends of the `discoverer` role (`regula.roles.Discoverer`) behind
`discover(banks, step) -> [Candidate]`:

* `StatisticalDiscoverer` (no network): for each action, what holds across the sampled
  successful transitions — the same inventory change in all (consumes / gives; what is
  used up is required), tools held in all (requires), what was within reach in all (near),
  what was faced (faces). Confounders come for free (an agent that always held a sword
  when mining stone, always stood on grass when it made a pickaxe). It can also inject wrong candidates of the paper's kinds
  (Table 5: confounder, in-domain and out-of-domain hallucination) at a given rate, so the
  Verifier's effect can be measured without an LLM.
* `LLMDiscoverer` (`llm_discover.py`): the same sampled transitions as text, JSON answers.
"""
from __future__ import annotations

import random
from dataclasses import dataclass

from regula import envs, roles

from .banks import Banks, Transition
from .dynamics import Dynamic, ground_truth

CRAFTER = envs.get("crafter")

KINDS = ("confounder", "in_domain", "out_of_domain")
# Things a model that memorised Minecraft names, which Crafter does not have (Table 5's "bone").
NOT_IN_CRAFTER = ("bone", "gold", "plank", "stick", "cobblestone", "leather", "string", "redstone")


@dataclass(frozen=True)
class Candidate:
    dynamic: Dynamic
    origin: str = "discovered"  # discovered | confounder | in_domain | out_of_domain (injected)
    support: int = 0  # sampled experiences it was read from
    step: int = 0  # discovery step that proposed it

    def to_json(self) -> dict:
        return {**self.dynamic.to_json(), "text": self.dynamic.text(), "origin": self.origin,
                "support": self.support, "step": self.step}


def holdings() -> tuple[str, ...]:
    """What an action can require or consume: materials and tools (not body stats)."""
    return tuple(k for k in CRAFTER.rules.items if k not in CRAFTER.body_stats)


def tools_seen(banks: Banks) -> set[str]:
    """Items some action gives and no experience ever used up: what a recipe can require
    without consuming (pickaxes, swords), told apart by the experiences alone."""
    given, used = set(), set()
    for xs in banks.actions.values():
        for x in xs:
            given |= {k for k, v in x.delta.items() if v > 0}
            used |= {k for k, v in x.delta.items() if v < 0}
    return {k for k in given - used if k in holdings()}


def placed_things(banks: Banks) -> set[str]:
    """What the agent's own actions put on the map (`place_table` places a table): the
    things a recipe can need nearby."""
    return {e[len("place_"):] for e in banks.actions if e.startswith("place_")}


def read_sample(element: str, sample: list[Transition], tools: set[str], placed: set[str]) -> list[Dynamic]:
    """What holds across every transition of `sample` (all successes of `element`): the same
    change in all (consumes / gives; what is used up is also required, in that amount), tools
    held in all (requires), what was within reach in all (near), the material faced when it
    was the same in all (faces). Nearby candidates are things the agent's actions place."""
    out = []
    for item in sorted(set().union(*(x.delta for x in sample))):
        values = {x.delta.get(item, 0) for x in sample}
        if len(values) == 1:
            v = values.pop()
            if v < 0 and item in holdings():
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
    if len(facing) == 1:
        out.append(Dynamic(element, "faces", facing.pop()))
    return out


@roles.register("discoverer", "statistical")
class StatisticalDiscoverer:
    name = "statistical"
    uses_llm = False

    def __init__(self, samples: int = 8, inject: float = 0.0, seed: int = 0):
        self.samples, self.inject, self.seed = samples, inject, seed

    def discover(self, banks: Banks, step: int = 0) -> list[Candidate]:
        rng = random.Random(f"discover:{self.seed}:{step}")
        found: list[Candidate] = []
        tools, placed = tools_seen(banks), placed_things(banks)
        for element in sorted(banks.actions):
            successes = banks.successes(element)
            if not successes:
                continue
            sample = rng.sample(successes, min(self.samples, len(successes)))
            found += [Candidate(d, "discovered", len(sample), step) for d in read_sample(element, sample, tools, placed)]
        return found + inject(found, banks, self.inject, rng, step)


def inject(found: list[Candidate], banks: Banks, rate: float, rng: random.Random, step: int = 0) -> list[Candidate]:
    """round(rate * len(found)) wrong candidates, the three kinds in turn, each about an action
    that was discovered: a confounder (something that changed or was held in one of its
    transitions, but is not its dynamics), an in-domain hallucination (a Crafter item it has
    nothing to do with), an out-of-domain one (a thing Crafter does not have)."""
    n = round(rate * len(found))
    if not n:
        return []
    truth = ground_truth()
    have = {c.dynamic for c in found}
    elements = sorted({c.dynamic.element for c in found})
    out: list[Candidate] = []
    tries = 0
    while len(out) < n and tries < 50 * n:
        kind = KINDS[tries % len(KINDS)]  # in turn, so a kind with few options does not stall
        tries += 1
        element = rng.choice(elements)
        if kind == "confounder":
            x = rng.choice(banks.successes(element))
            seen = sorted(k for k, v in x.inventory.items() if v > 0) + sorted(x.delta)
            if not seen:
                continue
            item = rng.choice(seen)
            d = Dynamic(element, "gives", item, 1) if item in x.delta and x.delta[item] > 0 else \
                Dynamic(element, "requires", item, 1)
        elif kind == "in_domain":
            d = Dynamic(element, rng.choice(("gives", "requires", "consumes")), rng.choice(holdings()), 1)
        else:
            d = Dynamic(element, rng.choice(("gives", "requires")), rng.choice(NOT_IN_CRAFTER), 1)
        if d in truth or d in have:
            continue
        have.add(d)
        out.append(Candidate(d, kind, 0, step))
    return out
