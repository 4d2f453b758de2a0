"""The `alphabet` role (`regula.roles.AlphabetChooser`): which verbs of Σ_global a task needs.

The paper asks the LLM for the verbs (Minecraft has about ten control primitives) and retrieves
the nouns by embedding (Appendix A.4). Backends: `openai` (the LLM, through `regula.llm`, with
the prompt `cedar_alphabet`; an answer naming a verb that is not offered is re-asked and, if it
never parses, unusable) and `similarity`, a stand-in that takes the verbs whose retrieval score
reaches a threshold (at least the best one). Neither reads the game's recipes.
"""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, create_model

from regula import roles

from .retrieve import Scored


@roles.register("alphabet", "similarity")
class SimilarityVerbs:
    """Stand-in: the verbs scoring at least `threshold`, and the best one in any case."""

    name = "similarity"
    uses_llm = False

    def __init__(self, threshold: float = 0.3):
        self.threshold = threshold

    def choose(self, task: str, verbs: list[Scored], nouns: list[Scored]) -> tuple[str, ...]:
        best = min(verbs, key=lambda s: (-s.score, s.name))  # the ranking's first (a tie: by name)
        return tuple(sorted({best.name} | {v.name for v in verbs if v.score >= self.threshold}))


def answer_schema(verbs) -> type[BaseModel]:
    """{"verbs": [...]}, each one of `verbs`, at least one: the JSON the LLM must give."""
    return create_model("VerbsAnswer", verbs=(list[Literal[tuple(sorted(verbs))]], Field(min_length=1)))


@roles.register("alphabet", "openai")
class LLMVerbs:
    """The LLM picks the verbs from the candidates' names and descriptions, the retrieved nouns
    given as context. An unusable answer falls back to the stand-in's choice (`fallbacks`)."""

    name = "openai"
    uses_llm = True
    ROLE = "alphabet"

    def __init__(self, client, threshold: float = 0.3):
        self.client, self.fallback = client, SimilarityVerbs(threshold)
        self.calls = self.fallbacks = 0

    def choose(self, task: str, verbs: list[Scored], nouns: list[Scored]) -> tuple[str, ...]:
        from regula import prompts
        from regula.llm import UnusableAnswer
        msgs = prompts.messages("cedar_alphabet", task=task,
                                verbs="\n".join(f"- {v.name}: {v.description}" for v in sorted(verbs, key=lambda v: v.name)),
                                nouns="\n".join(f"- {n.name}: {n.description}" for n in nouns))
        self.calls += 1
        try:
            answer = self.client.ask_json(msgs, answer_schema(v.name for v in verbs), self.ROLE)
        except UnusableAnswer:
            self.fallbacks += 1
            return self.fallback.choose(task, verbs, nouns)
        return tuple(sorted(set(answer.verbs)))
