"""E2CL's training samples as text (seed 002, §2.2 and Appendix A): planning (q_p, j_{t-1}) -> a_t,
feedback (q_f, j_{t-1}, â_t) -> f_t, correction (q_c, j_{t-1}, â_t, f_t) -> a_t.

A sample is a `(source, target)` pair of strings, the agent model's input and output. The layout
follows Figure 7 (templates.yaml says which words are quoted and which are ours). A trajectory
j_{t-1} is the actions taken so far. Figure 7 interleaves observations; here there are none, because
at test time the agent gets nothing from the environment (§3.1: "we do not expect the agents to
access such environmental feedback"), so what it learns to condition on is its own steps.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Sequence

import yaml

KINDS = ("planning", "feedback", "correction")
_SCRIPT_LINE = re.compile(r"\[[A-Z_]+\](?: <[^<>]+> \(\d+\)){0,2}")


@lru_cache(maxsize=1)
def templates() -> dict:
    return yaml.safe_load(Path(__file__).with_name("templates.yaml").read_text())


def end_action() -> str:
    """The action that says the plan is done."""
    return templates()["end"]


@dataclass(frozen=True)
class Task:
    name: str
    description: str
    # the recorded program whose scene the task is planned in: what a planner grounded in the scene
    # reads (`ranker.py`); not part of the task's identity or of any sample's text
    program: int | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Sample:
    kind: str  # one of KINDS
    source: str
    target: str
    task: str  # the task's name, for splits and statistics
    origin: str = ""  # where it came from: expert | tge | tfe


def _instruction(kind: str, task: Task, outcome: str | None = None) -> str:
    said = f" {templates()['outcomes'][outcome]}" if outcome else ""
    return f"{templates()['instructions'][kind]}{said} Task: {task.name}. Description: {task.description}"


def _history(history: Sequence[str]) -> list[str]:
    return ["Interaction history:", *(f"Step {i}: {action}" for i, action in enumerate(history, 1))]


def _source(kind: str, task: Task, history, tail: list[str], outcome: str | None = None) -> str:
    return "\n".join(["### Instruction:", _instruction(kind, task, outcome), "", "### Input:", *_history(history),
                      *tail, "", "### Output:"])


def planning_source(task: Task, history: Sequence[str], outcome: str | None = None) -> str:
    """`outcome` (NAT's: success | failure, templates.yaml) is said after the instruction; None: not at all."""
    return _source("planning", task, history, [f"Next action prefix: Step {len(history) + 1}:"], outcome)


def feedback_source(task: Task, history, action: str) -> str:
    return _source("feedback", task, history,
                   ["Initial Action:", f"Step {len(history) + 1}: {action}", "Feedback prefix: Feedback:"])


def correction_source(task: Task, history, action: str, feedback: str) -> str:
    return _source("correction", task, history,
                   ["Initial Action:", f"Step {len(history) + 1}: {action}", "Environment feedback:",
                    f"Feedback: {feedback}", "Correction action prefix: A corrective step would be:"])


def planning(task: Task, history, action: str, origin: str = "expert") -> Sample:
    return Sample("planning", planning_source(task, history), action, task.name, origin)


def feedback(task: Task, history, action: str, text: str, origin: str) -> Sample:
    return Sample("feedback", feedback_source(task, history, action), text, task.name, origin)


def correction(task: Task, history, action: str, text: str, corrected: str, origin: str) -> Sample:
    return Sample("correction", correction_source(task, history, action, text), corrected, task.name, origin)


def expert_planning(task: Task, lines: Sequence[str]) -> list[Sample]:
    """D_p for one expert trajectory (Eq. 1): every prefix j_{t-1} with its next action a_t, and the
    whole trajectory followed by the end action."""
    return [planning(task, lines[:t], action) for t, action in enumerate([*lines, end_action()])]


_TASK = re.compile(r" Task: (?P<name>.*?)\. Description: (?P<description>.*)$")
_STEP = re.compile(r"Step \d+: (?P<action>.*)$")


def context(sample: Sample) -> tuple[Task, list[str], str]:
    """(task, history, action) of a sample, read back from its source: the action is a planning
    sample's target, a feedback or correction sample's initial action. Kept datasets hold only the
    texts (data/e2cl/*.jsonl), and the layout is this module's own, so reading it back lets NAT
    reuse D_f, and the ranking planner D_f and D_c, without exploring again."""
    if sample.kind not in KINDS:
        raise ValueError(f"no planning context in a {sample.kind} sample")
    lines = sample.source.split("\n")
    found = _TASK.search(lines[1])
    task = Task(found["name"], found["description"])
    start = lines.index("Interaction history:") + 1
    planning = sample.kind == "planning"
    end = len(lines) - 3 if planning else lines.index("Initial Action:")
    history = [_STEP.match(line)["action"] for line in lines[start:end]]
    action = sample.target if planning else _STEP.match(lines[end + 1])["action"]
    return task, history, action


def with_outcome(sample: Sample, outcome: str) -> Sample:
    """A planning sample for NAT: the step of a planning or feedback sample, its outcome said."""
    task, history, action = context(sample)
    return Sample("planning", planning_source(task, history, outcome), action, sample.task, sample.origin)


def script_line(text: str) -> str | None:
    """The first VirtualHome script line in a text (an LLM's answer), or None."""
    found = _SCRIPT_LINE.search(text)
    return found.group(0) if found else None
