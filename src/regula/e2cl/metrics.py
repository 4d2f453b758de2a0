"""E2CL's plan metrics (seed 002, §3.1): executability, affordance rate, LCS, and how plans end.

- Executability: the plan ended (the end action, or a stop rule) within the step cap and every
  step executed (parsed, allowed, its objects present, its preconditions held). A plan cut off at
  the cap does not count, however many of its steps executed: otherwise a planner that walks to the
  same room until the cap scores about 1.0 (measured here: 97 of 99 unseen plans of the `base`
  size's E2CL model, seed 0, were one walk repeated 20 times).
- Executability (any, old): every step executed, ended or not: the number reported before, kept
  beside the new one.
- Ended: the share of plans that ended within the cap. Repeats: the share with the same step twice
  in a row (8 of the 518 recorded programs have one; a looping planner's plans nearly all do).
- Affordance rate: the share of a plan's steps that executed. §3.1 says it is measured "in cases
  where the entire plan is not executable"; we average it over every plan, as Huang et al. (2022),
  whose metric it is, do (an executable plan counts 1), and say so in the report.
- LCS: the longest common subsequence of steps between the generated plan and the ground-truth plan,
  normalised by the longer of the two.
The end action is not a step of a plan. An empty plan (the agent ended at once) does nothing: it is
not executable and its affordance rate is 0 (otherwise ending at once would score Exec. and AR 1.0:
measured here, a lookup planner that ends on every unseen task did).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class PlanResult:
    task: str
    steps: tuple  # the executed plan's lines, in order (the end action excluded)
    executed: tuple  # per step: whether the environment executed it
    truth: tuple  # the ground-truth plan's lines
    ended: bool = False  # the plan ended (end action or stop rule) before the step cap

    @property
    def executable(self) -> bool:
        return self.ended and self.executable_any

    @property
    def executable_any(self) -> bool:
        return bool(self.executed) and all(self.executed)

    @property
    def repeats(self) -> bool:
        return any(a == b for a, b in zip(self.steps, self.steps[1:]))

    @property
    def affordance(self) -> float:
        return sum(self.executed) / len(self.executed) if self.executed else 0.0

    @property
    def lcs(self) -> float:
        return lcs_ratio(self.steps, self.truth)


def lcs_length(a: Sequence, b: Sequence) -> int:
    """The textbook dynamic programme, one row at a time (difflib's matcher finds matching blocks, not
    the longest common subsequence)."""
    row = [0] * (len(b) + 1)
    for x in a:
        prev_diag, row[0] = 0, 0
        for j, y in enumerate(b, 1):
            prev_diag, row[j] = row[j], prev_diag + 1 if x == y else max(row[j], row[j - 1])
    return row[-1]


def lcs_ratio(a: Sequence, b: Sequence) -> float:
    longest = max(len(a), len(b))
    return lcs_length(a, b) / longest if longest else 1.0


# summarise's means, in the tables' order
MEASURES = ("executability", "executability_any", "ended", "repeats", "affordance_rate", "lcs")


def summarise(results: Sequence[PlanResult]) -> dict:
    """Each of MEASURES over plans (means), with the count."""
    n = len(results)
    if not n:
        return {"plans": 0, **dict.fromkeys(MEASURES)}
    return {"plans": n,
            "executability": sum(r.executable for r in results) / n,
            "executability_any": sum(r.executable_any for r in results) / n,
            "ended": sum(r.ended for r in results) / n,
            "repeats": sum(r.repeats for r in results) / n,
            "affordance_rate": sum(r.affordance for r in results) / n,
            "lcs": sum(r.lcs for r in results) / n}
