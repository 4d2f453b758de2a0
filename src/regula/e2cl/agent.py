"""E2CL's agents: one played by a trained text-to-text model (each of plan, feedback and correct writes
its sample's source, Figure 7's layout, and takes the model's greedy output), and the prompting
baseline, an LLM asked for each next step."""
from __future__ import annotations

import re
from typing import Sequence

from regula import prompts

from .model import AgentModel
from .samples import Task, correction_source, end_action, feedback_source, planning_source, script_line


class ModelAgent:
    def __init__(self, model: AgentModel, max_new_tokens: int = 48, batch_size: int = 64, outcome: str | None = None):
        # outcome: NAT's model plans steps said to succeed (samples.planning_source)
        self.model, self.max_new_tokens, self.batch_size, self.outcome = model, max_new_tokens, batch_size, outcome

    def _generate(self, sources: list[str]) -> list[str]:
        if not sources:
            return []
        return [text.strip() for text in self.model.generate(sources, self.max_new_tokens, self.batch_size)]

    def plan(self, contexts: Sequence[tuple[Task, list]]) -> list[str]:
        return self._generate([planning_source(task, history, self.outcome) for task, history in contexts])

    def feedback(self, contexts: Sequence[tuple[Task, list, str]]) -> list[str]:
        return self._generate([feedback_source(task, history, action) for task, history, action in contexts])

    def correct(self, contexts: Sequence[tuple[Task, list, str, str]]) -> list[str]:
        return self._generate([correction_source(task, history, action, fb) for task, history, action, fb in contexts])


_WORD = re.compile(r"[a-z]+")


def _words(task: Task) -> set[str]:
    return set(_WORD.findall(f"{task.name} {task.description}".lower()))


def example_text(task: Task, lines: Sequence[str]) -> str:
    """One expert program as the prompt shows it: the task, then its steps and the end action."""
    return "\n".join([f"Task: {task.name}. Description: {task.description}",
                      *(f"Step {i}: {line}" for i, line in enumerate([*lines, end_action()], 1))])


class PromptingAgent:
    """Table 1's prompting baseline (the paper's prompting-based row: GPT-4o prompted in the style of
    Language-planner): the LLM gets one expert program of the training task whose name and description
    share the most words with the task's (ties: the first in the training order), then the planning
    sample's text, and answers the next step. Its first script line is taken; an answer with none is
    the end action when it says so, else sent as it is (and fails). It plans only: no feedback, no
    correction (no speculative inference)."""

    def __init__(self, client, examples: Sequence[tuple[Task, Sequence[str]]]):
        self.client = client
        self.examples = [(task, _words(task), example_text(task, lines)) for task, lines in examples]

    def example_for(self, task: Task) -> str:
        words = _words(task)
        return max(self.examples, key=lambda e: len(words & e[1]) / len(words | e[1]))[2]

    def plan(self, contexts: Sequence[tuple[Task, list]]) -> list[str]:
        out = []
        for task, history in contexts:
            msgs = prompts.messages("e2cl_planner", example=self.example_for(task),
                                    source=planning_source(task, history))
            text = self.client.complete(msgs, "planner").text
            out.append(script_line(text) or (end_action() if end_action() in text
                                             else (text.strip().splitlines() or [""])[0]))
        return out
