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
thoughts, actions and feedback kept in the prompt). Non-LLM: random and greedy. `Actor` below
is the base class they share (a seeded rng, a default `choose_allowed`: uniform, the
ranking of an actor that has none).
"""
from __future__ import annotations

import functools
import random
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

