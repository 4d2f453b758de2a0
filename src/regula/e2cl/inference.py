"""Running an E2CL agent on a task: plain plan-and-execute, or speculative inference (seed 002,
§2.3, Algorithm 1).

The agent (`SelfCorrecting`: plan, predict feedback, correct) never sees the environment's answer:
each proposed step is executed, and the record keeps whether it executed, for the metrics. Under
speculative inference a step is first checked by the agent's own predicted feedback; while that
says it fails, the agent proposes a correction and checks it likewise, at most `max_corrections`
times (Algorithm 1 corrects once); the first proposal its own check passes is executed, and when
none passes the initial one is (as in Algorithm 1's else branch).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from .metrics import PlanResult
from .samples import Task, end_action

EXECUTABLE = "True"  # the environment's whole message for a step that executed (§3.1)


class SelfCorrecting(Protocol):
    """E2CL's agent: pi(a | q_p, j), pi(f | q_f, j, a), pi(a_c | q_c, j, a, f)."""

    def plan(self, task: Task, history: Sequence[str]) -> str: ...

    def feedback(self, task: Task, history: Sequence[str], action: str) -> str: ...

    def correct(self, task: Task, history: Sequence[str], action: str, feedback: str) -> str: ...


@dataclass
class StepRecord:
    proposed: str  # the agent's initial action
    executed: str  # the action sent to the environment
    success: bool  # whether the environment executed it
    predicted: list = field(default_factory=list)  # speculative: (action, predicted feedback) per check
    corrected: bool = False  # a correction was executed instead of the initial action

    def to_json(self) -> dict:
        return {"proposed": self.proposed, "executed": self.executed, "success": self.success,
                "predicted": [list(p) for p in self.predicted], "corrected": self.corrected}


def run_task(agent: SelfCorrecting, task: Task, execute: Callable[[str], bool], truth: Sequence[str],
             max_steps: int, speculative: bool = False, max_corrections: int = 1) -> tuple[PlanResult, list]:
    """One plan for `task`, its steps executed by `execute(line) -> executed?` as they come;
    ends at the end action or after `max_steps` steps."""
    history: list[str] = []
    records: list[StepRecord] = []
    for _ in range(max_steps):
        proposed = agent.plan(task, history)
        if proposed == end_action():
            break
        action, record = proposed, StepRecord(proposed, proposed, False)
        if speculative:
            action = _speculate(agent, task, history, proposed, max_corrections, record)
        record.executed, record.corrected = action, action != proposed
        record.success = bool(execute(action))
        records.append(record)
        history.append(action)
    result = PlanResult(task.name, tuple(r.executed for r in records), tuple(r.success for r in records),
                        tuple(truth))
    return result, records


def _speculate(agent, task, history, proposed, max_corrections, record) -> str:
    predicted = agent.feedback(task, history, proposed)
    record.predicted.append((proposed, predicted))
    action, verdict = proposed, predicted
    for _ in range(max_corrections):
        if verdict == EXECUTABLE:
            break
        candidate = agent.correct(task, history, action, verdict)
        verdict = agent.feedback(task, history, candidate)
        record.predicted.append((candidate, verdict))
        action = candidate
    return action if verdict == EXECUTABLE else proposed
