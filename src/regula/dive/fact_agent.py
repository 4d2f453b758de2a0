"""DiVE's online part on propositional facts (`regula.dive.facts`): the agent of the paper's
Tables 2 and 4 for a family that gives `FactSpec` (MiniHack). Crafter's DiVE agent (`agent.py`)
plans over inventory dynamics instead; this one plans over `requires` / `prevented_by` /
`gives` / `removes` facts between the family's propositions. No family is named here.

* Hierarchy (B^SG, from the demonstration): the task's achievements in the order the
  demonstration unlocked them, each with the element whose step unlocked it (the subgoal's
  action). Every condition has it, as every row of the paper's Table 4 keeps H; what the
  demonstration did between two unlocks is not in it (that would be copying the demonstration,
  a baseline of its own: `demo_replay`).
* Evolver (symbolic): backward chaining over the facts from the subgoal's action: a requirement
  that does not hold is given by some element, a preventing proposition that holds is removed
  by one; the first step of the shortest chain is the subtask.
* Subgoal conditions (`facts.discover_conditions`, verified like facts): what held, in the
  skill's own frame, before every step that unlocked the subgoal's achievement ("zap wand unlocks
  kill_minotaur when minotaur_ahead"). The subgoal's action is grounded to a skill whose frame
  meets them (zap the way the minotaur stands); while none does, the evolver takes the element
  that most often made them hold in the experience it learned from (the minotaur comes into line
  while the agent waits), a strategy read from the bank, not from a rule.
* Masking: an element whose known requirements do not hold (or which a known preventer blocks)
  is not taken. Without the evolver the subtask is the subgoal's action when unmasked, else a
  seeded random unmasked skill (Crafter's DiVE agent's rule).
* A skill that failed in a state is not tried again in that same state (the state: the
  propositions that hold and the family's text of the observation, which places the agent: a
  move into a wall fails here, not everywhere), so no condition loops on one refusal.

Grounding an element to a skill: the demonstration's own skills of that element first (it
zapped east), then the family's other skills of the element. The agent reads what the family's
episode shows (`props()`, `unlocked`, `done`), never the level's hidden state.

Conditions, the paper's Table 4 rows:

  row          condition                  facts          evolver
  DiVE         `dive`                     verified       yes
  w/o E        `no_evolver`               verified       no
  w/o V        `no_verifier`              discovered     yes
  w/o V&E      `no_verifier_no_evolver`   discovered     no
  w/o D&V&E    `no_dynamics`              none           no

and two baselines that could explain a result: `demo_replay` runs the demonstration's skills in
its order, whatever happens (copying the one training example), and `random` takes a seeded
uniformly random skill each time.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field

from regula.errors import RegulaError, UnknownNameError

from . import FACT_CONDITIONS
from .facts import Bank, relative

CONDITIONS = {"dive": ("verified", True), "no_evolver": ("verified", False), "no_verifier": ("discovered", True),
              "no_verifier_no_evolver": ("discovered", False), "no_dynamics": ("none", False),
              "demo_replay": ("none", False), "random": ("none", False)}
ROWS = {"dive": "DiVE", "no_evolver": "w/o E", "no_verifier": "w/o V", "no_verifier_no_evolver": "w/o V&E",
        "no_dynamics": "w/o D&V&E", "demo_replay": "copy the demonstration", "random": "random skills"}
assert tuple(CONDITIONS) == FACT_CONDITIONS == tuple(ROWS)  # params.py checks names against the package's tuple
MAX_CHAIN = 4  # evolved strategies longer than this are not looked for (the tasks' longest needs 3)


@dataclass(frozen=True)
class Subgoal:
    achievement: str
    action: str  # the element whose step unlocked it in the demonstration


@dataclass
class Hierarchy:
    subgoals: list  # [Subgoal], in the demonstration's order
    skills: dict = field(default_factory=dict)  # element -> the demonstration's skills of it, most used first
    replay: list = field(default_factory=list)  # the demonstration's skills in order (`demo_replay` only)

    def to_json(self) -> dict:
        return {"subgoals": [{"achievement": g.achievement, "action": g.action} for g in self.subgoals],
                "skills": self.skills}


def hierarchy(spec, demo: dict) -> Hierarchy:
    """B^SG from one demonstration in the common episode log."""
    subgoals, used, replay = [], {}, []
    for s in demo["steps"]:
        if "props_after" not in s:
            continue
        element = spec.fact_element(s["skill"])
        used.setdefault(element, Counter())[s["skill"]] += 1
        replay.append(s["skill"])
        subgoals += [Subgoal(a, element) for a in s.get("unlocked") or []]
    if not subgoals:
        raise RegulaError(f"the demonstration (seed {demo['header']['seed']}) unlocked no achievement: no subgoals")
    skills = {e: [k for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))] for e, c in sorted(used.items())}
    return Hierarchy(subgoals, skills, replay)


class Knowledge:
    """The facts an agent plans with, indexed for the evolver and the mask; the subgoal conditions
    and the experience (`bank`) they were read from."""

    def __init__(self, facts, conditions=(), bank: Bank | None = None):
        self.facts = sorted(set(facts))
        self.conditions: dict = {}  # achievement -> {prop}
        for c in conditions:
            self.conditions.setdefault(c.achievement, set()).add(c.prop)
        self.bank = bank or Bank()
        self.requires, self.prevented_by, self.gives, self.removes = {}, {}, {}, {}
        for f in self.facts:
            table = getattr(self, f.attribute, None)
            if isinstance(table, dict) and not f.when and not f.unless:
                table.setdefault(f.element, set()).add(f.arg)

    def unmet(self, element: str, state: frozenset) -> list[tuple[str, bool]]:
        """What keeps `element` from running in `state`: (p, True) a requirement p that does not
        hold, (p, False) a preventer p that holds."""
        return ([(p, True) for p in sorted(self.requires.get(element, ())) if p not in state]
                + [(p, False) for p in sorted(self.prevented_by.get(element, ())) if p in state])

    def providers(self, prop: str, need: bool) -> list[str]:
        """Elements that make `prop` hold (need) or stop holding (not need)."""
        table = self.gives if need else self.removes
        return sorted(e for e, ps in table.items() if prop in ps)

    def chain(self, element: str, state: frozenset, depth: int = 0, seen: frozenset = frozenset()) -> list | None:
        """The shortest strategy that makes `element` runnable and runs it, as elements; None when
        the facts give none within MAX_CHAIN. Each step's effects are assumed (its `gives` hold after
        it, its `removes` do not)."""
        missing = self.unmet(element, state)
        if not missing:
            return [element]
        if depth >= MAX_CHAIN:
            return None
        prop, need = missing[0]
        best = None
        for e in self.providers(prop, need):
            if e in seen or e == element:
                continue
            sub = self.chain(e, state, depth + 1, seen | {element})
            if sub is None:
                continue
            after = (state | self.gives.get(e, set())) - self.removes.get(e, set())
            rest = self.chain(element, frozenset(after), depth + len(sub), seen | {e})
            if rest is not None and (best is None or len(sub) + len(rest) < len(best)):
                best = sub + rest
        return best


class FactAgent:
    """One condition's agent for one episode of a task."""

    def __init__(self, spec, condition: str, knowledge: Knowledge | None, plan: Hierarchy, seed: int):
        if condition not in CONDITIONS:
            raise UnknownNameError("DiVE fact-agent condition", condition, CONDITIONS)
        self.spec, self.condition, self.plan = spec, condition, plan
        self.knowledge = knowledge if CONDITIONS[condition][0] != "none" else None
        self.evolve = CONDITIONS[condition][1]
        self.rng = random.Random(f"fact-agent:{condition}:{seed}")
        self.failed: set = set()  # (skill, observation text) that failed
        self.elements = []
        for s in spec.skill_names():
            e = spec.fact_element(s)
            if e not in self.elements:
                self.elements.append(e)
        self.here = ""  # the observation's text, where failures are remembered
        self._skills: dict = {}  # element -> skills_of(element)
        self._helped: dict = {}  # (element, needs) -> helpers' ranking before masking
        self.decisions = Counter()  # how each skill was chosen: evolved | action | random | retry | replay

    def subgoal(self, unlocked) -> Subgoal | None:
        return next((g for g in self.plan.subgoals if g.achievement not in unlocked), None)

    def masked(self, element: str, state: frozenset) -> bool:
        return self.knowledge is not None and bool(self.knowledge.unmet(element, state))

    def skills_of(self, element: str) -> list[str]:
        """The demonstration's skills of `element` first, then the family's others."""
        if element not in self._skills:
            own = self.plan.skills.get(element, [])
            self._skills[element] = own + [s for s in self.spec.skill_names()
                                           if self.spec.fact_element(s) == element and s not in own]
        return self._skills[element]

    def _first_untried(self, element: str, state: frozenset, needs=frozenset(), ranked=()) -> str | None:
        """The first skill of `element` (those in `ranked` first) not failed here whose frame
        meets `needs`."""
        skills = [s for s in ranked if s in self.skills_of(element)] + self.skills_of(element)
        return next((s for s in skills
                     if (s, self.here) not in self.failed and needs <= relative(self.spec, s, state)), None)

    def _meets(self, element: str, needs: frozenset, state: frozenset) -> bool:
        return any(needs <= relative(self.spec, s, state) for s in self.skills_of(element))

    def _runnable(self, element: str, needs: frozenset, state: frozenset) -> bool:
        return not self.masked(element, state) and self._meets(element, needs, state)

    def helpers(self, element: str, needs: frozenset, state: frozenset) -> list[str]:
        """The skills that made `element` runnable (its known requirements and `needs` met) in the
        bank, most often first (before the step they were not, after it they were), of elements
        not masked now; ties by name."""
        key = (element, needs)
        if key not in self._helped:  # the bank does not change during an episode
            counts = Counter()
            for e, xs in self.knowledge.bank.steps.items():
                for x in xs:
                    if (e != element and x.success and not self._runnable(element, needs, x.before)
                            and self._runnable(element, needs, x.after)):
                        counts[x.skill] += 1
            self._helped[key] = sorted(counts, key=lambda k: (-counts[k], k))
        return [k for k in self._helped[key] if not self.masked(self.spec.fact_element(k), state)]

    def choose(self, state: frozenset, unlocked) -> tuple[str, str]:
        """(skill, how it was chosen) for the state."""
        goal = self.subgoal(unlocked)
        ordered: list[tuple] = []  # (element, how, needs[, skills ranked first])
        if goal is not None:
            needs = frozenset(self.knowledge.conditions.get(goal.achievement, ())) if self.knowledge else frozenset()
            if self.evolve and self.knowledge is not None and not self._runnable(goal.action, needs, state):
                strategy = self.knowledge.chain(goal.action, state)
                if strategy and len(strategy) > 1:
                    ordered.append((strategy[0], "evolved", frozenset()))
                helpers = self.helpers(goal.action, needs, state)
                for e in dict.fromkeys(self.spec.fact_element(k) for k in helpers):
                    ordered.append((e, "evolved", frozenset(), helpers))
            ordered.append((goal.action, "action", needs))
        shuffled = list(self.elements)
        self.rng.shuffle(shuffled)
        ordered += [(e, "random", frozenset()) for e in shuffled]
        for element, how, needs, *ranked in ordered:
            if self.masked(element, state):
                continue
            skill = self._first_untried(element, state, needs, *ranked)
            if skill is not None:
                return skill, how
        # every unmasked skill failed here: try again what the demonstration did
        return self.skills_of(goal.action if goal else self.elements[0])[0], "retry"

    def play(self, episode, max_skills: int) -> dict:
        """Run the episode with skills to its end (or `max_skills`); the record of what happened."""
        replay = list(self.plan.replay)
        while not episode.done and len(episode.events) < max_skills and self.subgoal(episode.unlocked) is not None:
            state = frozenset(k for k, v in episode.props().items() if v)
            self.here = episode.text()
            if self.condition == "demo_replay":
                if not replay:
                    break
                skill, how = replay.pop(0), "replay"
            elif self.condition == "random":
                skill, how = self.rng.choice(self.spec.skill_names()), "random"
            else:
                skill, how = self.choose(state, episode.unlocked)
            self.decisions[how] += 1
            step = episode.run_skill(skill)
            if not step.success:
                self.failed.add((skill, self.here))
        return {"decisions": dict(sorted(self.decisions.items()))}
