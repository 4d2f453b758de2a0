"""Running an E2CL agent on tasks: plain plan-and-execute, or speculative inference (seed 002, §2.3,
Algorithm 1).

The agent (`SelfCorrecting`: plan, predict feedback, correct; each batched over contexts) never
sees the environment's answer: each chosen step is executed and the record keeps whether it
executed, for the metrics. Under speculative inference a step is first checked, by default with
the agent's own predicted feedback; while the check says it fails, the agent proposes a correction
given that feedback and it is checked likewise, at most `max_corrections` times (Algorithm 1
corrects once); the first proposal that passes is executed, and when none passes the initial one
is (Algorithm 1's else branch). Fig. 5 swaps the check for other feedback (`check=`).

Tasks run side by side, one step each per round, so every model call is one batch.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Protocol, Sequence

from .metrics import PlanResult
from .samples import Task, end_action

EXECUTABLE = "True"  # the environment's whole message for a step that executed (§3.1)


class SelfCorrecting(Protocol):
    """E2CL's agent: pi(a | q_p, j), pi(f | q_f, j, a), pi(a_c | q_c, j, a, f), each over a batch."""

    def plan(self, contexts: Sequence[tuple[Task, list]]) -> list[str]: ...

    def feedback(self, contexts: Sequence[tuple[Task, list, str]]) -> list[str]: ...

    def correct(self, contexts: Sequence[tuple[Task, list, str, str]]) -> list[str]: ...


# check(contexts, episodes) -> feedback per (task, history, action): who judges a step before it runs
Check = Callable[[Sequence[tuple[Task, list, str]], Sequence], list[str]]


@dataclass
class StepRecord:
    proposed: str  # the agent's initial action
    executed: str  # the action sent to the environment
    success: bool  # whether the environment executed it
    error_type: str | None = None  # E2CL's error type when it did not (Fig. 6)
    checked: list = field(default_factory=list)  # speculative: (action, feedback) per check
    corrected: bool = False  # a correction was executed instead of the initial action

    def to_json(self) -> dict:
        return {"proposed": self.proposed, "executed": self.executed, "success": self.success,
                "error_type": self.error_type, "checked": [list(c) for c in self.checked],
                "corrected": self.corrected}


@dataclass
class TaskRun:
    task: Task
    episode: object  # has run_skill(line) -> a step with .success and .cause
    truth: tuple
    history: list = field(default_factory=list)
    records: list = field(default_factory=list)
    ended: bool = False

    def result(self) -> PlanResult:
        return PlanResult(self.task.name, tuple(r.executed for r in self.records),
                          tuple(r.success for r in self.records), tuple(self.truth), self.ended)


def run_tasks(agent: SelfCorrecting, runs: Sequence[TaskRun], max_steps: int, speculative: bool = False,
              max_corrections: int = 1, check: Check | None = None) -> list[TaskRun]:
    """Each run planned to the end action or `max_steps` steps; the runs, filled in."""
    check = check or (lambda contexts, episodes: agent.feedback(contexts))
    for _ in range(max_steps):
        active = [r for r in runs if not r.ended]
        if not active:
            break
        proposals = agent.plan([(r.task, list(r.history)) for r in active])
        stepping = []
        for r, action in zip(active, proposals):
            if action == end_action():
                r.ended = True
            else:
                r.records.append(StepRecord(action, action, False))
                stepping.append(r)
        if speculative and stepping:
            _speculate(agent, stepping, max_corrections, check)
        for r in stepping:
            record = r.records[-1]
            step = r.episode.run_skill(record.executed)
            record.success = bool(step.success)
            record.error_type = None if step.success else (step.cause or {}).get("error_type")
            r.history.append(record.executed)
    return list(runs)


def _speculate(agent: SelfCorrecting, runs: list, max_corrections: int, check: Check) -> None:
    """Algorithm 1 on the latest step of each run, batched."""
    candidate = {id(r): r.records[-1].proposed for r in runs}
    verdicts = check([(r.task, list(r.history), candidate[id(r)]) for r in runs], [r.episode for r in runs])
    pending = []
    for r, verdict in zip(runs, verdicts):
        r.records[-1].checked.append((candidate[id(r)], verdict))
        if verdict != EXECUTABLE:
            pending.append((r, verdict))
    for _ in range(max_corrections):
        if not pending:
            break
        fixes = agent.correct([(r.task, list(r.history), candidate[id(r)], v) for r, v in pending])
        for (r, _), fix in zip(pending, fixes):
            candidate[id(r)] = fix
        verdicts = check([(r.task, list(r.history), candidate[id(r)]) for r, _ in pending],
                         [r.episode for r, _ in pending])
        still = []
        for (r, _), verdict in zip(pending, verdicts):
            record = r.records[-1]
            record.checked.append((candidate[id(r)], verdict))
            if verdict == EXECUTABLE:
                record.executed = candidate[id(r)]
                record.corrected = record.executed != record.proposed
            else:
                still.append((r, verdict))
        pending = still
