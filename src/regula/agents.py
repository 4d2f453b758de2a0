"""One agent interface and one episode loop, for every agent on every environment.

An agent is asked for a `Decision` (a skill, or a reason to stop), the environment runs the
skill, and the agent is told what happened. The scripted expert, LTLCrit's shielded actors,
DiVE's agents and the explorers are agents; `run_episode` is the only loop that plays them,
so budgets and end reasons mean the same everywhere. Given a `notes` dict, it also records who
chose each step and what the agent wants the episode log to keep beside it (`regula.episodes`).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol, runtime_checkable

# How an episode ends, whoever plays it; agents add their own (`stuck: ...`, `no plan`).
DIED, LENGTH, GOAL, BUDGET = "died", "episode length reached", "goal reached", "step budget"
# Who a survival layer's decisions are logged by, whatever agent it keeps alive: its unlocks are
# counted apart from the agent's own.
SURVIVAL = "survival"


@dataclass
class Decision:
    """What to do next: `skill` (None: stop, because of `end`), an `until(env)` that ends the
    skill early, an `interrupt(env)` checked after each primitive step (a reason string stops
    the skill), who chose it (`by`: expert, survival, actor, ...), what the agent wants to
    remember about the choice (`info`), and what the episode log keeps beside the step (`note`,
    JSON-able; the agent may add to it in `observe`)."""

    skill: str | None
    until: Callable | None = None
    interrupt: Callable | None = None
    by: str = "agent"
    end: str = ""
    info: dict = field(default_factory=dict)
    note: dict = field(default_factory=dict)


@runtime_checkable
class Agent(Protocol):
    def start(self, env) -> None:
        """Fresh per-episode state."""

    def decide(self, env) -> Decision: ...

    def observe(self, env, decision: Decision, step: Any) -> str | None:
        """Learn from the step just run; a string ends the episode with that reason. Skills the
        agent runs itself here (the expert explores after a failure) are logged as chosen by
        its `name`."""


@dataclass(frozen=True)
class Budget:
    max_steps: int  # primitive steps
    max_skills: int  # high-level steps
    goal: str | None = None  # the episode ends once this is unlocked (None: no single goal)


def run_episode(env, agent: Agent, budget: Budget, notes: dict | None = None) -> str:
    """Play until the environment ends, the goal is reached, a budget runs out or the agent
    stops; returns why the episode ended. Every step is in `env.events`; `notes`, if given,
    gets for each step's index `{"by": who chose it, **decision.note}`."""
    agent.start(env)
    while True:
        if env.done:
            return DIED if env.dead else LENGTH
        if budget.goal is not None and budget.goal in env.unlocked:
            return GOAL
        if env.steps >= budget.max_steps or len(env.events) >= budget.max_skills:
            return BUDGET
        decision = agent.decide(env)
        if decision.skill is None:
            return decision.end
        step = env.run_skill(decision.skill, decision.until, interrupt=decision.interrupt)
        t = len(env.events) - 1
        end = agent.observe(env, decision, step)
        if notes is not None:
            notes[t] = {"by": decision.by, **decision.note}
            for extra in range(t + 1, len(env.events)):
                notes[extra] = {"by": getattr(agent, "name", "agent")}
        if end:
            return end
