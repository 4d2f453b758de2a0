"""The LLM Discoverer: sampled transitions of each action as text, dynamics back as JSON.

An answer that is not JSON, or names an attribute, item or material Crafter does not have,
is re-asked with the reason (the client's re-asks); still unusable, that action's answer is
dropped with a log line and discovery goes on. A call that fails or a replay miss stops the
run with its error: an unreachable endpoint is not an empty answer.
"""
from __future__ import annotations

import random

import pydantic

from regula import prompts, roles
from regula.llm import LLMClient
from regula.llm.client import UnusableAnswer

from .banks import Banks, Transition
from .discover import Candidate, inject
from .dynamics import ATTRIBUTES, Dynamic
from .verify import known_names

ROLE = "discoverer"


class DynamicAnswer(pydantic.BaseModel):
    # The closed sets are in the JSON schema too, so an endpoint that constrains its output to
    # the schema (llama.cpp's grammar, OpenAI's json_schema) can only name what exists; the
    # validators give the reason a re-ask carries where nothing constrains it.
    attribute: str = pydantic.Field(json_schema_extra={"enum": list(ATTRIBUTES)})
    arg: str = pydantic.Field(json_schema_extra={"enum": sorted(known_names())})
    value: int = 1

    @pydantic.field_validator("attribute")
    @classmethod
    def _attribute(cls, v: str) -> str:
        if v not in ATTRIBUTES:
            raise ValueError(f"attribute {v!r} is not one of {', '.join(ATTRIBUTES)}")
        return v

    @pydantic.field_validator("arg")
    @classmethod
    def _arg(cls, v: str) -> str:
        if v not in known_names():
            raise ValueError(f"{v!r} is not an item or material of Crafter")
        return v


class DynamicsAnswer(pydantic.BaseModel):
    dynamics: list[DynamicAnswer]


def describe(x: Transition) -> str:
    held = ", ".join(f"{v} {k}" for k, v in sorted(x.inventory.items()) if v) or "nothing"
    change = ", ".join(f"{k} {v:+d}" for k, v in sorted(x.delta.items())) or "no change"
    return (f"- facing {x.facing}; within reach: {', '.join(x.near) or 'nothing'}; holding: {held}; "
            f"inventory change: {change}")


@roles.register("discoverer", "openai")
class LLMDiscoverer:
    name = "openai"
    uses_llm = True

    def __init__(self, client: LLMClient, samples: int = 8, inject: float = 0.0, seed: int = 0, log=print):
        self.client, self.samples, self.inject, self.seed, self.log = client, samples, inject, seed, log

    def discover(self, banks: Banks, step: int = 0) -> list[Candidate]:
        rng = random.Random(f"discover:{self.seed}:{step}")
        found: list[Candidate] = []
        for element in sorted(banks.actions):
            successes = banks.successes(element)
            if not successes:
                continue
            sample = rng.sample(successes, min(self.samples, len(successes)))
            msgs = prompts.messages("dive_discover", element=element, n=len(sample),
                                    transitions="\n".join(describe(x) for x in sample),
                                    attributes=", ".join(ATTRIBUTES))
            try:
                answer = self.client.ask_json(msgs, DynamicsAnswer, ROLE)
            except UnusableAnswer as exc:
                self.log(f"dive: dropped the discoverer's answer about {element}: {exc}")
                continue
            found += [Candidate(Dynamic(element, a.attribute, a.arg, a.value), "discovered", len(sample), step)
                      for a in answer.dynamics]
        return found + inject(found, banks, self.inject, rng, step)
