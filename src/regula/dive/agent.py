"""DiVE's online part: subgoals from the demonstrations, subtasks by strategies evolved from
the dynamics, invalid-action masking, skills executed by the spine's controller; and the
baselines the paper compares it with (its Tables 1 and 3).

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
* Upkeep: the survival layer (`Survival`), as for every agent here (not Random).

Agents see the game's interface only (skill and achievement names, the observation, what
executing a skill did, the survival layer), never data.yaml's facts: what they know of the rules
is the dynamics they are handed. Conditions, and the paper's row each one plays:

  Table 3                   condition                     dynamics        evolver
  DiVE                      `dive`                        verified        yes
  w/o E                     `no_evolver`                  verified        no
  w/o V                     `no_verifier`                 discovered      yes
  w/o V&E                   `no_verifier_no_evolver`      discovered      no
  w/o D&V&E                 `no_dynamics`                 none            no
  w/o D&V&E + H†            `human_dynamics`              H† (data.yaml)  no
  w/o D&V + S†              `manual_dynamics`             S† (manual)     yes
  w/o D&V&E + S†            `manual_dynamics_no_evolver`  S† (manual)     no
  CoT                       `cot`                         none            the LLM picks each skill
  CoT + D&V                 `cot_dynamics`                verified        the LLM picks each skill
  Table 1 Random            `random`                      uniformly random primitive actions (Crafter's
                                                          Random, which the paper quotes), no survival layer
  (not in the paper)        `expert`                      the scripted expert (plans with data.yaml)
  (not in the paper)        `human_dynamics_evolved`      H† (data.yaml)  yes: this agent's ceiling, what
                                                          it does when the dynamics are all true
  (not in the paper)        `dive_no_survival`            verified        yes: DiVE with the survival layer
                                                          off (none of its decisions, no interrupts)

Without the evolver the subtask is the subgoal's action when unmasked, else a random
unmasked skill. H† and S† are handed in by the stage (`stage.play_conditions`): H† is
`dynamics.ground_truth()`, S† the facts of `manual_dynamics.yaml`.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pydantic
import yaml

from regula import envs, episodes, roles
from regula.agents import Decision
from regula.errors import RegulaError, UnknownNameError
from regula.metrics import score_record, unlocked

from . import CONDITIONS
from .dynamics import Dynamic

CRAFTER = envs.get("crafter")
SKILLS = CRAFTER.skill_names()

# Achievements that are not a data.yaml action, and the skill that earns them.
SKILL_OF = {"wake_up": "sleep"}

# condition -> (the dynamics it plans with: a key of `play`'s `dynamics`, or None; whether the
# evolver derives strategies). The other conditions are `random`, `expert`, `cot`, `cot_dynamics`.
PLANNERS = {"dive": ("verified", True), "no_evolver": ("verified", False), "no_verifier": ("discovered", True),
            "no_verifier_no_evolver": ("discovered", False), "no_dynamics": (None, False),
            "human_dynamics": ("human", False), "human_dynamics_evolved": ("human", True),
            "manual_dynamics": ("manual", True),
            "manual_dynamics_no_evolver": ("manual", False), "dive_no_survival": ("verified", True)}
NO_SURVIVAL = {"dive_no_survival"}  # planners played with the survival layer off
COT = {"cot": None, "cot_dynamics": "verified"}  # the CoT baselines and the dynamics in their prompt
LLM_CONDITIONS = tuple(COT)
# condition -> the dynamics it reads (None: none; random and the expert read none)
DYNAMICS_OF = {**{c: source for c, (source, _) in PLANNERS.items()}, **COT}


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


MANUAL = Path(__file__).with_name("manual_dynamics.yaml")


def manual_dynamics() -> list[Dynamic]:
    """S†: the game manual's dynamics as transcribed in manual_dynamics.yaml (its header names
    the source, and how little of it could be found)."""
    return [Dynamic.from_json(d) for d in yaml.safe_load(MANUAL.read_text())["dynamics"]]


def seen_materials(world) -> list[str]:
    """The materials the agent has seen so far, by the names its observation uses."""
    return [m for m in world.memory.names if m and world.memory.seen(m)]


def subgoal_sequence(orders: list[list[str]]) -> list[str]:
    """Achievements by their mean position of first completion across demonstrations."""
    pos: dict = {}
    for order in orders:
        for i, a in enumerate(order):
            pos.setdefault(a, []).append(i / max(len(order), 1))
    return sorted(pos, key=lambda a: (sum(pos[a]) / len(pos[a]), a))


class StrategyAnswer(pydantic.BaseModel):
    # skill names in the schema: a schema-constrained endpoint names only skills that exist
    steps: list[str] = pydantic.Field(json_schema_extra={"items": {"type": "string", "enum": SKILLS}})
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
        known = ", ".join(sorted(seen_materials(agent.world))) or "nothing"
        msgs = prompts.messages("dive_evolve", goal=skill, dynamics="\n".join(f"- {f}" for f in facts),
                                held=held, known=known, skills=", ".join(SKILLS))
        self.calls += 1
        try:
            answer = self.client.ask_json(msgs, StrategiesAnswer, self.ROLE)
        except UnusableAnswer:
            answer = StrategiesAnswer(strategies=[])
        usable = [s.steps for s in answer.strategies
                  if s.steps and all(x in SKILLS for x in s.steps) and agent.unmasked(s.steps[0])]
        if usable:
            return min(usable, key=len)
        self.fallbacks += 1
        return agent.chain(skill)


class DiveAgent:
    """DiVE as an agent (`regula.agents`): the survival layer first, else the first
    step of the evolved strategy toward the current subgoal; the expert's failure bookkeeping
    (a failed skill sends it exploring, a subgoal that keeps failing is given up). `survival`
    False: the survival layer neither decides nor interrupts (the `dive_no_survival` row)."""

    name = "dive"

    def __init__(self, world, knowledge: Knowledge | None, sequence: list[str], evolve: bool, seed: int,
                 config: CRAFTER.ExpertConfig, evolver=None, survival: bool = True):
        self.world, self.config, self.use_survival = world, config, survival
        self.survival = CRAFTER.Survival(world, config)
        self.failures = CRAFTER.Failures(config, self.all_done)
        self.knowledge, self.sequence, self.evolve = knowledge, sequence, evolve
        self.evolver = evolver or SymbolicEvolver()
        self.rng = random.Random(f"dive-agent:{seed}")
        self.strategies: list[str] = []

    # -- state ------------------------------------------------------------------------------
    def on_map(self, thing: str) -> bool:
        """Seen on the map; a thing the observation has no name for (a hallucinated one) never is."""
        return thing in self.world.memory.ids and self.world.memory.seen(thing)

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
                sub = self.chain(f"place_{thing}", depth + 1, seen) if f"place_{thing}" in SKILLS else None
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
        interrupt = self.survival.interrupt(skill, goal) if self.use_survival else None
        return Decision(skill, None, interrupt, by=self.name, info={"goal": goal})

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
        return self.rng.choice([s for s in SKILLS if self.unmasked(s)])

    # -- the Agent interface (regula.agents) ---------------------------------------------------
    def start(self, world) -> None:
        self.survival.start()
        self.failures.start()

    def decide(self, world) -> Decision:
        try:
            return (self.use_survival and self.survival.due()) or self.pursue()
        except ValueError:
            return Decision(None, end="no plan")

    def observe(self, world, decision: Decision, step) -> str | None:
        return self.failures.after(world, decision, step)


class CoTAnswer(pydantic.BaseModel):
    thought: str
    skill: str = pydantic.Field(json_schema_extra={"enum": SKILLS})


class CoTAgent:
    """The paper's CoT baseline (Wei et al. 2022): the LLM reads the observation, what is
    unlocked and what is not, what it has seen, and (CoT + D&V) the verified dynamics, thinks
    step by step and names the next skill; no subgoals, no evolver, no masking. The survival layer and
    the failure bookkeeping are DiveAgent's. An unusable answer explores (counted in `fallbacks`)."""

    name = "cot"
    ROLE = "actor"

    def __init__(self, world, client, dynamics: list, config: CRAFTER.ExpertConfig):
        self.world, self.client, self.config = world, client, config
        self.dynamics = "\n".join(f"- {d.text()}" for d in sorted(dynamics)) or "(none)"
        self.survival = CRAFTER.Survival(world, config)
        self.failures = CRAFTER.Failures(config, self.all_done)
        self.calls = self.fallbacks = 0

    def all_done(self) -> bool:
        return False

    def choose(self) -> str:
        from regula import prompts
        from regula.llm.client import UnusableAnswer
        unlocked = self.world.unlocked
        msgs = prompts.messages(
            "dive_cot", observation=self.world.text(), unlocked=", ".join(unlocked) or "nothing",
            todo=", ".join(a for a in CRAFTER.achievement_names() if a not in unlocked) or "nothing",
            known=", ".join(seen_materials(self.world)) or "nothing", dynamics=self.dynamics,
            skills=", ".join(SKILLS))
        self.calls += 1
        try:
            return self.client.ask_json(msgs, CoTAnswer, self.ROLE).skill
        except UnusableAnswer:
            self.fallbacks += 1
            return "explore"

    def start(self, world) -> None:
        self.survival.start()
        self.failures.start()

    def decide(self, world) -> Decision:
        due = self.survival.due()
        if due:
            return due
        skill = self.choose()
        return Decision(skill, None, self.survival.interrupt(skill, skill), by=self.name, info={"goal": skill})

    def observe(self, world, decision: Decision, step) -> str | None:
        return self.failures.after(world, decision, step)


class RandomAgent:
    """Crafter's Random baseline (the paper's Table 1 quotes it): a uniformly random primitive
    action every step, no survival layer. Played on `Keystrokes`, one primitive action per step."""

    name = "random"

    def __init__(self, seed: int, config: CRAFTER.ExpertConfig):
        self.config, self.rng = config, random.Random(f"random-agent:{seed}")

    def all_done(self) -> bool:
        return False

    def start(self, world) -> None:
        pass

    def decide(self, world) -> Decision:
        return Decision(self.rng.choice(CRAFTER.actions), by=self.name)

    def observe(self, world, decision: Decision, step) -> None:
        return None


class Keystrokes:
    """A world whose skills are the game's primitive actions, so that Random is played by the
    one episode loop (`regula.agents.run_episode`) like every other agent."""

    def __init__(self, world):
        self.world = world

    def __getattr__(self, name):
        return getattr(self.world, name)

    def run_skill(self, action: str, until=None, interrupt=None):
        return self.world.run_skill_primitive(action)


def make_agent(world, condition: str, dynamics: dict, sequence: list[str], seed: int,
               config: CRAFTER.ExpertConfig, evolver=None, client=None):
    """The agent that plays `condition` (see the module doc)."""
    if condition == "random":
        return RandomAgent(seed, config)
    if condition == "expert":
        return CRAFTER.Expert(world, config)
    if condition in COT:
        if client is None:
            raise RegulaError(f"dive condition '{condition}' asks an LLM; configure `llm` in params.yaml")
        return CoTAgent(world, client, dynamics[COT[condition]] if COT[condition] else [], config)
    source, evolve = PLANNERS[condition]
    knowledge = Knowledge.of(dynamics[source]) if source else None
    return DiveAgent(world, knowledge, sequence, evolve, seed, config, evolver, survival=condition not in NO_SURVIVAL)


def play(world, condition: str, dynamics: dict, sequence: list[str], seed: int, max_steps: int,
         max_skills: int, evolver=None, inputs: dict | None = None, client=None) -> dict:
    """One full episode (Crafter's length, or death, or the budgets) under a condition; returns
    the episode (`regula.episodes`), its header fingerprinting `inputs` (default: the seed).
    `dynamics`: {"verified", "discovered", "human", "manual"} -> lists of `Dynamic`."""
    if condition not in CONDITIONS:
        raise UnknownNameError("dive condition", condition, CONDITIONS)
    config = CRAFTER.ExpertConfig(goal="all", max_steps=max_steps, max_skills=max_skills, max_failures=10 ** 6)
    agent = make_agent(world, condition, dynamics, sequence, seed, config, evolver, client)
    notes: dict = {}
    summary = CRAFTER.play_episode(Keystrokes(world) if condition == "random" else world, agent, notes)
    summary = {"seed": seed, "condition": condition, "end": summary.end, "steps": summary.steps,
               "skills": summary.skills, "reward": summary.reward, "achievements": summary.achievements,
               "failed_skills": sum(not e.success and (e.cause or {}).get("kind") != "interrupted"
                                    for e in world.events),
               "strategies": sorted(set(getattr(agent, "strategies", [])))[:40],
               **({"llm_calls": agent.calls, "llm_fallbacks": agent.fallbacks} if condition in COT else {})}
    return episodes.record(world, inputs or {"seed": seed}, summary, f"dive:{condition}", notes, goal="all")


def summarize(episodes: list[dict], resamples: int, seed: int, groups: int = 4) -> dict:
    """A condition's numbers over its episodes' summaries, in world order: the Crafter score
    statistics of `metrics.score_record` (`score` pooled as the paper computes it, seed 004
    §4.1, with its 95% bootstrap interval from `resamples` draws seeded by `seed`; the pooled
    score of `groups` groups of consecutive worlds, at most one per episode, and their mean ±
    std; the per-episode mean, a different statistic never above `score`; BALROG's
    progression). The reward is the episodes' mean ± std. `unlocked` and `rates`: each
    achievement's episodes and success rate, the pooled score's inputs."""
    names = CRAFTER.achievement_names()
    episodes = sorted(episodes, key=lambda e: e["seed"])  # the bootstrap and the groups go by world order
    n = len(episodes)
    hits = unlocked([e["achievements"] for e in episodes], names)
    rewards = [e["reward"] for e in episodes]
    return {"episodes": n, **score_record(hits, resamples, seed, min(groups, n)),
            "reward": round(float(np.mean(rewards)), 2), "reward_std": round(float(np.std(rewards)), 2),
            "steps": round(float(np.mean([e["steps"] for e in episodes])), 1),
            "seeds": [min(e["seed"] for e in episodes), max(e["seed"] for e in episodes)],
            "unlocked": {a: int(k) for a, k in zip(names, hits.sum(axis=0))},
            "rates": {a: round(float(r), 3) for a, r in zip(names, hits.mean(axis=0))}}


__all__ = ["CONDITIONS", "Dynamic", "Knowledge", "LLM_CONDITIONS", "manual_dynamics", "play", "subgoal_sequence", "summarize"]
