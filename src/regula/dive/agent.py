"""DiVE's online part: subgoals from the demonstrations, subtasks by strategies evolved from
the dynamics, invalid-action masking, skills executed by the spine's controller.

* Subgoal planning: the achievements in the order the demonstrations reach them (B^SG);
  the current subgoal is the first one not yet reached (and not given up on).
* Evolver (`dive.evolver`: symbolic backward chaining, or the LLM with the same critic):
  from the dynamics and the current state, the chain
  that makes the subgoal's action possible — "make_wood_pickaxe requires 1 wood, which
  collect_wood gives; it needs a table near, which place_table places" — its first step is
  the subtask. Among several actions that give what is missing, the critic ranks by chain
  length (the shortest strategy first).
* Invalid-action masking: a skill whose known requirements the state does not meet is not
  taken (with unverified dynamics, a hallucinated requirement masks a possible action).
* Upkeep: the scripted expert's survival reflex, as for every agent here.

Conditions (the paper's Table 3 ablations): `dive` (verified dynamics, evolver),
`no_verifier` (discovered dynamics, hallucinations included), `no_evolver` (verified
dynamics, the subgoal's action when unmasked, else a random unmasked skill), `no_dynamics`
(no dynamics at all: the subgoal's action or a random skill, nothing masked).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field

import pydantic

from regula import envs, episodes, roles
from regula.agents import Decision
from regula.metrics import crafter_score

from . import CONDITIONS
from .dynamics import Dynamic

CRAFTER = envs.get("crafter")

# Achievements that are not a data.yaml action, and the skill that earns them.
SKILL_OF = {"wake_up": "sleep"}


@dataclass
class Knowledge:
    """Dynamics indexed for planning."""

    requires: dict = field(default_factory=dict)  # action -> {item: n}
    near: dict = field(default_factory=dict)  # action -> {thing}
    faces: dict = field(default_factory=dict)  # action -> {material}
    givers: dict = field(default_factory=dict)  # item -> [actions that give it]

    @classmethod
    def of(cls, dynamics) -> "Knowledge":
        k = cls()
        for d in sorted(dynamics):
            if d.attribute == "requires":
                k.requires.setdefault(d.element, {})[d.arg] = max(d.value, k.requires.get(d.element, {}).get(d.arg, 0))
            elif d.attribute == "near":
                k.near.setdefault(d.element, set()).add(d.arg)
            elif d.attribute == "faces":
                k.faces.setdefault(d.element, set()).add(d.arg)
            elif d.attribute == "gives":
                k.givers.setdefault(d.arg, []).append(d.element)
        return k


def subgoal_sequence(orders: list[list[str]]) -> list[str]:
    """Achievements by their mean position of first completion across demonstrations."""
    pos: dict = {}
    for order in orders:
        for i, a in enumerate(order):
            pos.setdefault(a, []).append(i / max(len(order), 1))
    return sorted(pos, key=lambda a: (sum(pos[a]) / len(pos[a]), a))


class StrategyAnswer(pydantic.BaseModel):
    # skill names in the schema: a schema-constrained endpoint names only skills that exist
    steps: list[str] = pydantic.Field(json_schema_extra={"items": {"type": "string", "enum": CRAFTER.skill_names()}})
    why: str = ""


class StrategiesAnswer(pydantic.BaseModel):
    strategies: list[StrategyAnswer]


@roles.register("evolver", "symbolic")
class SymbolicEvolver:
    """Backward chaining over the dynamics (see the module doc)."""

    name = "symbolic"
    uses_llm = False

    def strategy(self, agent: "DiveAgent", skill: str) -> list[str] | None:
        return agent.chain(skill)


@roles.register("evolver", "openai")
class LLMEvolver:
    """The LLM derives strategies from the dynamics and the situation; the critic keeps those
    whose first step is a skill the dynamics allow now, shortest first. None usable: the
    symbolic chain (counted in `fallbacks`)."""

    name = "openai"
    uses_llm = True
    ROLE = "evolver"

    def __init__(self, client):
        self.client, self.fallbacks, self.calls = client, 0, 0

    def strategy(self, agent: "DiveAgent", skill: str) -> list[str] | None:
        from regula import prompts
        from regula.llm.client import UnusableAnswer
        k = agent.knowledge
        facts = sorted({f"{e} requires {n} {i}" for e, r in k.requires.items() for i, n in r.items()}
                       | {f"{e} near {t}" for e, ts in k.near.items() for t in ts}
                       | {f"{e} gives {i}" for i, es in k.givers.items() for e in es})
        inv = agent.world.inventory
        held = ", ".join(f"{v} {i}" for i, v in sorted(inv.items()) if v) or "nothing"
        known = ", ".join(sorted(m for m in CRAFTER.rules.materials if agent.on_map(m))) or "nothing"
        msgs = prompts.messages("dive_evolve", goal=skill, dynamics="\n".join(f"- {f}" for f in facts),
                                held=held, known=known, skills=", ".join(CRAFTER.skill_names()))
        self.calls += 1
        try:
            answer = self.client.ask_json(msgs, StrategiesAnswer, self.ROLE)
        except UnusableAnswer:
            answer = StrategiesAnswer(strategies=[])
        usable = [s.steps for s in answer.strategies
                  if s.steps and all(x in CRAFTER.skill_names() for x in s.steps) and agent.unmasked(s.steps[0])]
        if usable:
            return min(usable, key=len)
        self.fallbacks += 1
        return agent.chain(skill)


class DiveAgent:
    """DiVE as an agent (`regula.agents`): the expert's survival reflex first, else the first
    step of the evolved strategy toward the current subgoal; the expert's failure bookkeeping
    (a failed skill sends it exploring, a subgoal that keeps failing is given up)."""

    name = "dive"

    def __init__(self, world, knowledge: Knowledge | None, sequence: list[str], evolve: bool, seed: int,
                 config: CRAFTER.ExpertConfig, evolver=None):
        self.world, self.config = world, config
        self.reflex = CRAFTER.Reflex(world, config)
        self.failures = CRAFTER.Failures(config, self.all_done)
        self.knowledge, self.sequence, self.evolve = knowledge, sequence, evolve
        self.evolver = evolver or SymbolicEvolver()
        self.rng = random.Random(f"dive-agent:{seed}")
        self.strategies: list[str] = []

    # -- state ------------------------------------------------------------------------------
    def on_map(self, thing: str) -> bool:
        return self.world.memory.seen(thing)

    def unmasked(self, skill: str) -> bool:
        if self.knowledge is None:
            return True
        inv = self.world.inventory
        if any(inv.get(item, 0) < n for item, n in self.knowledge.requires.get(skill, {}).items()):
            return False
        if any(not self.on_map(s) for s in self.knowledge.near.get(skill, ())):
            return False
        faces = self.knowledge.faces.get(skill)
        return not faces or any(self.on_map(m) for m in faces)

    # -- the evolver --------------------------------------------------------------------------
    def chain(self, skill: str, depth: int = 0, seen: frozenset = frozenset()) -> list[str] | None:
        """The strategy toward `skill`: the missing things and who provides them, first step last."""
        if depth > 12 or skill in seen:
            return None
        k, inv, seen = self.knowledge, self.world.inventory, seen | {skill}
        for item, n in sorted(k.requires.get(skill, {}).items()):
            if inv.get(item, 0) < n:
                options = [c for g in k.givers.get(item, []) if (c := self.chain(g, depth + 1, seen)) is not None]
                return min(options, key=len) + [skill] if options else None  # the critic: shortest first
        for thing in sorted(k.near.get(skill, ())):
            if not self.on_map(thing):
                sub = self.chain(f"place_{thing}", depth + 1, seen) if f"place_{thing}" in CRAFTER.rules.recipes else None
                return sub + [skill] if sub is not None else None
        faces = k.faces.get(skill)
        if faces and not any(self.on_map(m) for m in faces):
            return ["explore", skill]
        return [skill]

    # -- policy ------------------------------------------------------------------------------
    def next_goal(self) -> str:
        """The first subgoal not reached nor given up on; exploring once none is left."""
        for a in self.sequence:
            if a not in self.world.unlocked and not self.failures.given_up(a):
                return a
        return "explore"

    def all_done(self) -> bool:
        """Never: with no subgoal left it explores, and Crafter's length or death ends the episode."""
        return False

    def pursue(self) -> Decision:
        goal = self.next_goal()
        skill = "explore" if goal == "explore" else self.subtask(SKILL_OF.get(goal, goal))
        return Decision(skill, None, self.reflex.interrupt(skill, goal), by=self.name, info={"goal": goal})

    def subtask(self, skill: str) -> str:
        """The evolved strategy's first step toward `skill`; without one, `skill` unless masked,
        else a random unmasked skill."""
        if self.evolve and self.knowledge is not None:
            plan = self.evolver.strategy(self, skill)
            if plan:
                self.strategies.append(" -> ".join(plan))
                return plan[0]
        if self.unmasked(skill):
            return skill
        return self.rng.choice([s for s in CRAFTER.skill_names() if self.unmasked(s)])

    # -- the Agent interface (regula.agents) ---------------------------------------------------
    def start(self, world) -> None:
        self.reflex.start()
        self.failures.start()

    def decide(self, world) -> Decision:
        try:
            return self.reflex.due() or self.pursue()
        except ValueError:
            return Decision(None, end="no plan")

    def observe(self, world, decision: Decision, step) -> str | None:
        return self.failures.after(world, decision, step)


def play(world, condition: str, dynamics: dict, sequence: list[str], seed: int, max_steps: int,
         max_skills: int, evolver=None, inputs: dict | None = None) -> dict:
    """One full episode (Crafter's length, or death, or the budgets) under a condition; returns
    the episode (`regula.episodes`), its header fingerprinting `inputs` (default: the seed)."""
    knowledge = {"dive": Knowledge.of(dynamics["verified"]), "no_verifier": Knowledge.of(dynamics["discovered"]),
                 "no_evolver": Knowledge.of(dynamics["verified"]), "no_dynamics": None}[condition]
    config = CRAFTER.ExpertConfig(goal="all", max_steps=max_steps, max_skills=max_skills, max_failures=10 ** 6)
    agent = DiveAgent(world, knowledge, sequence, condition in ("dive", "no_verifier"), seed, config, evolver)
    notes: dict = {}
    summary = CRAFTER.play_episode(world, agent, notes)
    summary = {"seed": seed, "condition": condition, "end": summary.end, "steps": summary.steps,
               "skills": summary.skills, "reward": summary.reward, "achievements": summary.achievements,
               "failed_skills": sum(not e.success and e.cause["kind"] != "interrupted" for e in world.events),
               "strategies": sorted(set(agent.strategies))[:40]}
    return episodes.record(world, inputs or {"seed": seed}, summary, f"dive:{condition}", notes, goal="all")


def summarize(episodes: list[dict]) -> dict:
    """A condition's scores over its episodes' summaries."""
    import numpy as np
    n = len(episodes)
    rates = {a: sum(a in e["achievements"] for e in episodes) / n for a in CRAFTER.rules.achievements}
    rewards = [e["reward"] for e in episodes]
    per_episode = [crafter_score([a in e["achievements"] for a in CRAFTER.rules.achievements]) for e in episodes]
    return {"episodes": n, "score": round(crafter_score(rates.values()), 2),
            "score_std": round(float(np.std(per_episode)), 2),
            "reward": round(float(np.mean(rewards)), 2), "reward_std": round(float(np.std(rewards)), 2),
            "steps": round(float(np.mean([e["steps"] for e in episodes])), 1),
            "rates": {a: round(r, 3) for a, r in rates.items()}}


__all__ = ["CONDITIONS", "Dynamic", "Knowledge", "play", "subgoal_sequence", "summarize"]
