"""An E2CL agent played by a trained text-to-text model: each of plan, feedback and correct writes its
sample's source (Figure 7's layout) and takes the model's greedy output."""
from __future__ import annotations

from typing import Sequence

from .model import AgentModel
from .samples import Task, correction_source, feedback_source, planning_source


class ModelAgent:
    def __init__(self, model: AgentModel, max_new_tokens: int = 48, batch_size: int = 64):
        self.model, self.max_new_tokens, self.batch_size = model, max_new_tokens, batch_size

    def _generate(self, sources: list[str]) -> list[str]:
        if not sources:
            return []
        return [text.strip() for text in self.model.generate(sources, self.max_new_tokens, self.batch_size)]

    def plan(self, contexts: Sequence[tuple[Task, list]]) -> list[str]:
        return self._generate([planning_source(task, history) for task, history in contexts])

    def feedback(self, contexts: Sequence[tuple[Task, list, str]]) -> list[str]:
        return self._generate([feedback_source(task, history, action) for task, history, action in contexts])

    def correct(self, contexts: Sequence[tuple[Task, list, str, str]]) -> list[str]:
        return self._generate([correction_source(task, history, action, fb) for task, history, action, fb in contexts])
