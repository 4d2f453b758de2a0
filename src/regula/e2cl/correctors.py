"""E2CL's corrector role in teacher-free exploration (seed 002, §2.2): a step failed; propose the step
to take instead. The paper asks GPT-4o and keeps a correction only if it executes (the caller checks).

`openai` asks the LLM with the correction sample's text (the failed step and the environment's
feedback, as the agent model reads them) and takes the first script line of its answer.

`rules` is a rule-grounded stand-in, not the paper's corrector: it reads the failure's structured
cause and the scene graph (which GPT-4o never sees) and writes the one step the error type calls
for. It has no correction for some types (an action the target does not afford, a state that
already holds, a blocked route): then it says None and the step stays uncorrected.
"""
from __future__ import annotations

import re
from typing import Sequence

from regula import prompts, roles

from .samples import Task, correction_source, script_line

_NODE = re.compile(r"^<(?P<name>[^>]+)> \((?P<id>\d+)\)$")


@roles.register("corrector", "openai")
class LLMCorrector:
    name = "openai"
    uses_llm = True

    def __init__(self, client):
        self.client = client

    def correct(self, task: Task, history: Sequence[str], action: str, feedback: str,
                cause: dict | None = None, scene: dict | None = None) -> str | None:
        msgs = prompts.messages("e2cl_corrector", source=correction_source(task, history, action, feedback))
        return script_line(self.client.complete(msgs, "corrector").text)


@roles.register("corrector", "rules")
class RulesCorrector:
    name = "rules"
    uses_llm = False

    def correct(self, task: Task, history: Sequence[str], action: str, feedback: str,
                cause: dict | None = None, scene: dict | None = None) -> str | None:
        cause = cause or {}
        kind, thing = cause.get("error_type"), cause.get("thing")
        if kind == "Agent Proximity" and _NODE.match(thing or ""):
            return f"[WALK] {thing}"
        if kind == "Missing Object" and _NODE.match(cause.get("item") or ""):
            return f"[GRAB] {cause['item']}"
        if kind == "Over-occupied Agent" and cause.get("stat") in ("sitting", "lying"):
            return "[STANDUP]"
        if kind == "Enclosed Object" and scene and _NODE.match(thing or ""):
            box = _closed_container(scene, int(_NODE.match(thing)["id"]))
            return None if box is None else f"[OPEN] <{box['class_name']}> ({box['id']})"
        if kind == "Object availability" and scene and thing:
            named = _NODE.match(thing)
            same = _of_class(scene, named["name"] if named else thing)
            if same is not None and named:
                return action.replace(thing, f"<{same['class_name']}> ({same['id']})", 1)
        return None


def _closed_container(scene: dict, node_id: int) -> dict | None:
    nodes = {n["id"]: n for n in scene["nodes"]}
    boxes = [nodes[e["to_id"]] for e in scene["edges"]
             if e["from_id"] == node_id and e["relation_type"] == "INSIDE" and "CLOSED" in nodes[e["to_id"]]["states"]]
    return min(boxes, key=lambda n: n["id"]) if boxes else None


def _of_class(scene: dict, class_name: str) -> dict | None:
    """The scene's object of that class with the lowest id (a fixed choice: the stand-in has no
    reason to prefer another)."""
    same = [n for n in scene["nodes"] if n["class_name"] == class_name]
    return min(same, key=lambda n: n["id"]) if same else None
