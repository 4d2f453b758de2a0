"""The LLM Discoverer: sampled transitions of each action as text, dynamics back as JSON.

An answer that is not JSON, or names an attribute or a thing the experiences do not contain,
is re-asked with the reason (the client's re-asks); still unusable, that action's answer is
dropped with a log line and discovery goes on. A call that fails or a replay miss stops the
run with its error: an unreachable endpoint is not an empty answer.
"""
from __future__ import annotations

import functools
import random

import pydantic

from regula import prompts, roles
from regula.llm import LLMClient
from regula.llm.client import UnusableAnswer

from .banks import Banks, Transition
from .discover import Candidate
from .dynamics import ATTRIBUTES, Dynamic
from .verify import names_seen

ROLE = "discoverer"


class DynamicAnswer(pydantic.BaseModel):
    attribute: str = pydantic.Field(json_schema_extra={"enum": list(ATTRIBUTES)})
    arg: str
    value: int = 1

    @pydantic.field_validator("attribute")
    @classmethod
    def _attribute(cls, v: str) -> str:
        if v not in ATTRIBUTES:
            raise ValueError(f"attribute {v!r} is not one of {', '.join(ATTRIBUTES)}")
        return v


class DynamicsAnswer(pydantic.BaseModel):
    dynamics: list[DynamicAnswer]


# The closed sets are in the JSON schema too, so an endpoint that constrains its output to the
# schema (llama.cpp's grammar, OpenAI's json_schema) can only name what exists; the validator
# gives the reason a re-ask carries where nothing constrains it. The names are the ones the
# experiences contain (`verify.names_seen`), so they grow with the banks.
@functools.lru_cache(maxsize=256)
def dynamics_answer(names: tuple) -> type[DynamicsAnswer]:
    def known(cls, v: str) -> str:
        if v not in names:
            raise ValueError(f"{v!r} is nothing the experiences contain")
        return v
    item = pydantic.create_model(
        "DynamicAnswer", __base__=DynamicAnswer,
        __validators__={"_arg": pydantic.field_validator("arg")(classmethod(known))},
        arg=(str, pydantic.Field(json_schema_extra={"enum": list(names)})))
    return pydantic.create_model("DynamicsAnswer", __base__=DynamicsAnswer, dynamics=(list[item], ...))


def describe(x: Transition) -> str:
    held = ", ".join(f"{v} {k}" for k, v in sorted(x.inventory.items()) if v) or "nothing"
    change = ", ".join(f"{k} {v:+d}" for k, v in sorted(x.delta.items())) or "no change"
    return (f"- facing {x.facing}; within reach: {', '.join(x.near) or 'nothing'}; holding: {held}; "
            f"inventory change: {change}; facing after: {x.after or 'unknown'}")


@roles.register("discoverer", "openai")
class LLMDiscoverer:
    name = "openai"
    uses_llm = True

    def __init__(self, client: LLMClient, samples: int = 8, seed: int = 0, log=print):
        self.client, self.samples, self.seed, self.log = client, samples, seed, log

    def discover(self, banks: Banks, step: int = 0) -> list[Candidate]:
        rng = random.Random(f"discover:{self.seed}:{step}")
        schema = dynamics_answer(tuple(sorted(names_seen(banks))))
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
                answer = self.client.ask_json(msgs, schema, ROLE)
            except UnusableAnswer as exc:
                self.log(f"dive: dropped the discoverer's answer about {element}: {exc}")
                continue
            found += [Candidate(Dynamic(element, a.attribute, a.arg, a.value), "discovered", len(sample), step)
                      for a in answer.dynamics]
        return found
