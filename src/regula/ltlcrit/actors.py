"""Actors (the `actor` role, `regula.roles.Actor`): pick the next high-level action from the
state; the LLM and non-LLM ones side by side, chosen by `roles.make("actor", name, ...)`.

`choose(view)` proposes an action. When the shield blocks it, or it names no action, the
runner adds the reason to `view.feedback` and asks again (bounded, counted); after the last
re-plan the runner's declared fallback picks (`rollout.FALLBACKS`), with `ranked` asking
`choose_allowed(view)`: the actor's own ranking restricted to the actions the shield allows.
`observe(text)` hands the actor what the environment said about the action it took.

No actor reads data.yaml's facts (recipes, requirements, what an action gives or needs,
shortest plans): only the environment's interface, the skill and achievement names, the
observation and what executing a skill says.

LLM actors: naive (one prompt, one action), SayCan (the shield is the affordance filter,
the LLM ranks the allowed actions by value), InnerMonologue (thought + action, with past
thoughts, actions and feedback kept in the prompt). Non-LLM: random, greedy, and greedy_goal
(greedy aimed at the goal through what the shield's refusals said was missing). `Actor` below
is the base class they share (a seeded rng, a default `choose_allowed`: uniform, the
ranking of an actor that has none).
"""
from __future__ import annotations

import functools
import random
import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import pydantic

from regula import prompts, roles
from regula.llm import LLMClient, UnusableAnswer

from .model import EXPLORE, UPKEEP

ROLE = "actor"
NO_ANSWER = "(no usable answer)"  # what an LLM actor proposes when its answer never parsed


@dataclass
class View:
    """What an actor sees at one decision."""

    text: str  # the verbalized observation
    state: list  # true propositions
    goal: str
    actions: list
    allowed: list  # what the shield allows (SayCan's affordances)
    unlocked: list  # achievements so far this episode
    feedback: list = field(default_factory=list)  # why earlier proposals at this step were refused
    tried: list = field(default_factory=list)  # actions proposed at this step
    refusals: dict = field(default_factory=dict)  # action -> the laws that refused it at this step


@dataclass
class Choice:
    action: str
    thought: str = ""


class Actor(ABC):
    name = ""
    uses_llm = False

    def reset(self, seed: int) -> None:
        self.rng = random.Random(f"{self.name}:{seed}")

    @abstractmethod
    def choose(self, view: View) -> Choice:
        """The proposed action (and a thought, for LLM actors)."""

    def choose_allowed(self, view: View) -> Choice:
        return Choice(self.rng.choice(view.allowed))

    def observe(self, text: str) -> None:
        pass


@roles.register("actor", "random")
class RandomActor(Actor):
    """Uniform over the actions not yet refused at this step."""

    name = "random"

    def choose(self, view: View) -> Choice:
        left = [a for a in view.actions if a not in view.tried] or view.actions
        return Choice(self.rng.choice(left))


@roles.register("actor", "greedy")
class GreedyActor(Actor):
    """Prefers an action that would unlock an achievement not yet had this episode (make, then
    place, then collect), else explores; random among equals."""

    name = "greedy"
    ORDER = ("make_", "place_", "collect_")

    def _rank(self, action: str, unlocked) -> tuple:
        new = action not in unlocked and action not in UPKEEP
        kind = next((i for i, p in enumerate(self.ORDER) if action.startswith(p)), len(self.ORDER))
        if action == EXPLORE:
            return (1, 0, 0.0)
        return (0 if new and kind < len(self.ORDER) else 2, kind, self.rng.random())

    def choose(self, view: View) -> Choice:
        left = [a for a in view.actions if a not in view.tried] or view.actions
        return Choice(min(left, key=lambda a: self._rank(a, view.unlocked)))

    def choose_allowed(self, view: View) -> Choice:
        return Choice(min(view.allowed, key=lambda a: self._rank(a, view.unlocked)))


# What a state proposition names, read off its name as a player reads it: has_<n>_<item> (an item
# held), <thing>_on_map (a thing seen).
HAS, ON_MAP = re.compile(r"has_(?:\d+_)?(\w+)"), re.compile(r"(\w+)_on_map")


@roles.register("actor", "greedy_goal")
class GoalGreedyActor(GreedyActor):
    """Greedy aimed at the goal, a free-form planner without an LLM: it proposes the goal
    action; when the shield refuses an action, the propositions the refusing laws found false
    are what that action needs (kept for the episode), and it proposes an action that gets one
    of them, depth first from the goal. What gets a proposition is read off the names only:
    `has_wood` from `collect_wood` or `make_wood`, `table_on_map` from `place_table` or from
    exploring (a thing may be found). It knows no recipe beyond what refusals said; greedy's order
    ranks the rest."""

    name = "greedy_goal"

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.needs: dict[str, set] = {}

    def _learn(self, view: View) -> None:
        for action, laws in view.refusals.items():
            for law in laws:
                self.needs.setdefault(action, set()).update(
                    a for a in law.parsed.atoms() if a not in view.actions and a not in view.state)

    @staticmethod
    def _getters(atom: str, actions: list) -> list:
        if m := ON_MAP.fullmatch(atom):
            return [a for a in (f"place_{m[1]}",) if a in actions] + [EXPLORE]
        if m := HAS.fullmatch(atom):
            return [a for a in (f"collect_{m[1]}", f"make_{m[1]}") if a in actions]
        return []

    def plan(self, view: View) -> list:
        """The actions that could come next toward the goal, the nearest first: depth first from
        the goal through what each was refused for lacking; one with nothing known lacking is a
        leaf. Exploring comes last (it only looks around)."""
        self._learn(view)
        have, order, seen = set(view.state), [], set()

        def visit(action: str) -> None:
            if action in seen:
                return
            seen.add(action)
            lacking = sorted(self.needs.get(action, set()) - have)
            if not lacking:
                order.append(action)
            for atom in lacking:
                for getter in self._getters(atom, view.actions):
                    visit(getter)

        visit(view.goal)
        return sorted(order, key=lambda a: a == EXPLORE)

    def choose(self, view: View) -> Choice:
        left = [a for a in self.plan(view) if a not in view.tried]
        return Choice(left[0]) if left else super().choose(view)

    def choose_allowed(self, view: View) -> Choice:
        left = [a for a in self.plan(view) if a in view.allowed]
        return Choice(left[0]) if left else super().choose_allowed(view)


# -- LLM actors --------------------------------------------------------------------------------
class ActionAnswer(pydantic.BaseModel):
    thought: str = ""
    action: str


class ValueAnswer(pydantic.BaseModel):
    values: dict[str, float]


# The answer's schema names the actions offered (an endpoint that constrains its output to the
# schema, such as llama.cpp's grammar, can only name one of them); validation stays the base
# model's, so where nothing constrains the answer the runner refuses a name off the list with
# its reason, as it always did.
@functools.lru_cache(maxsize=4096)
def action_answer(actions: tuple) -> type[ActionAnswer]:
    return pydantic.create_model("ActionAnswer", __base__=ActionAnswer,
                                 action=(str, pydantic.Field(json_schema_extra={"enum": list(actions)})))


@functools.lru_cache(maxsize=4096)
def value_answer(options: tuple) -> type[ValueAnswer]:
    schema = {"properties": {a: {"type": "number"} for a in options}, "required": list(options)}
    return pydantic.create_model("ValueAnswer", __base__=ValueAnswer,
                                 values=(dict[str, float], pydantic.Field(json_schema_extra=schema)))


@roles.register("actor", "naive")
class LLMActor(Actor):
    name = "naive"
    uses_llm = True
    prompt = "ltlcrit_actor"

    def __init__(self, client: LLMClient, history: int = 6):
        self.client, self.history_len = client, history
        self.history: list[str] = []

    def reset(self, seed: int) -> None:
        super().reset(seed)
        self.history = []

    def _fields(self, view: View, actions: list) -> dict:
        return dict(goal=view.goal, text=view.text, state=", ".join(view.state) or "(none)",
                    actions="\n".join(f"- {a}" for a in actions),  # names only: no recipe facts
                    feedback="\n".join(f"- {f}" for f in view.feedback) or "(none)",
                    history="\n".join(self.history[-self.history_len:]) or "(nothing yet)")

    def _ask(self, msgs: list, schema):
        """The answer, or None when it never parsed (counted by the client; the turn goes on)."""
        try:
            return self.client.ask_json(msgs, schema, ROLE)
        except UnusableAnswer:
            return None

    def choose(self, view: View) -> Choice:
        answer = self._ask(prompts.messages(self.prompt, **self._fields(view, view.actions)),
                           action_answer(tuple(view.actions)))
        if answer is None:  # refused as naming no action, like any name off the list
            return Choice(NO_ANSWER)
        return Choice(answer.action.strip(), answer.thought)

    def choose_allowed(self, view: View) -> Choice:
        """Asked with only the allowed actions listed; an answer off that list goes back to the
        runner as it is (its fallback then draws uniformly)."""
        answer = self._ask(prompts.messages(self.prompt, **self._fields(view, view.allowed)),
                           action_answer(tuple(view.allowed)))
        return Choice(answer.action.strip(), answer.thought) if answer else Choice(NO_ANSWER)


@roles.register("actor", "saycan")
class SayCanActor(LLMActor):
    """Affordance (the shield's allowed set) times value (the LLM's score per allowed action)."""

    name = "saycan"
    prompt = "ltlcrit_saycan"

    def choose(self, view: View) -> Choice:
        options = [a for a in view.allowed if a not in view.tried] or view.allowed
        answer = self._ask(prompts.messages(self.prompt, **self._fields(view, options)), value_answer(tuple(options)))
        if answer is None:
            return Choice(NO_ANSWER)
        values = answer.values
        scored = [(values.get(a, float("-inf")), -i, a) for i, a in enumerate(options)]
        best = max(scored)
        if best[0] == float("-inf"):
            named = ", ".join(sorted(values)) or "nothing"
            return Choice(f"(no allowed action scored; the reply named {named})")
        return Choice(best[2], f"value {best[0]:g}")

    choose_allowed = choose


@roles.register("actor", "inner_monologue")
class InnerMonologueActor(LLMActor):
    """Thought, action and the environment's feedback go back into the next prompt."""

    name = "inner_monologue"
    prompt = "ltlcrit_monologue"

    def choose(self, view: View) -> Choice:
        choice = super().choose(view)
        self.history.append(f"thought: {choice.thought} | action: {choice.action}")
        return choice

    def observe(self, text: str) -> None:
        if self.history:
            self.history[-1] += f" | result: {text}"

