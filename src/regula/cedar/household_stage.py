"""The `household` stage: CEDAR's five household tasks (Table 6) on VirtualHome's evolving graph
(`regula.cedar.household`): per task the DFA learned with Σ by RAG, the teacher's formula (one call,
a second with a counterexample) and the simulator as the EQ oracle, written to
data/household/dfas/<TASK>.{json,dot,svg}; metrics/household_detail.json holds per task the teacher's
calls and clauses, the membership queries the formula answered, the rollouts (with what the
simulator said) and the outcome before and after a counterexample fix. Wall time changes on every
run, so no artifact holds it: the progress lines say it and `regula bench household` measures it.
Nothing is cached: the stand-in teacher and the simulator are deterministic and a task takes about a
second (MiniLM's first load, several more, falls in the first task's)."""
from __future__ import annotations

import shutil
from typing import TYPE_CHECKING

from regula import stages
from regula.io import write_json
from regula.stages import Paths, Work

from . import household

if TYPE_CHECKING:
    from regula.params import Params


def prepare(params: Params, paths: Paths) -> None:
    for name in params.household.tasks:
        household.task(name)  # an unknown task stops here, in one line


def run(params: Params, paths: Paths, work: Work) -> dict:
    cfg = params.household
    out = paths.data / "household" / "dfas"
    shutil.rmtree(out, ignore_errors=True)  # a task no longer listed leaves no file
    out.mkdir(parents=True)
    rows = []
    for name in cfg.tasks:
        r = household.learn_task(name, k=cfg.k, lexical_weight=cfg.lexical_weight, noise=cfg.noise, seed=cfg.seed,
                                 max_calls=cfg.max_calls, max_rounds=cfg.max_rounds)
        write_json(out / f"{name}.json", {"dfa": r.dfa.to_json(), "letters": r.atoms})
        r.dfa.save_dot(out / f"{name}.dot", title=name)
        row = r.to_json()
        rows.append(row)
        work.progress(f"household: {name}: {row['states']} states, {row['teacher_calls']} teacher call(s), "
                      f"{row['queries']} membership queries, {row['world_rounds']} rollout(s); first "
                      f"{row['outcome_before']}" + (f", after the fix {row['outcome_after']}" if row["outcome_after"]
                                                     else "") + f"; {r.seconds:.2f} s")
    record = {"tasks": rows, "params": cfg.model_dump()}
    return stages.write_metrics(paths.metrics, "household", headline(record), record)


def headline(record: dict) -> dict:
    """What metrics/household.json holds: the tasks whose DFA's policy reached the goal (the calls,
    queries, rollouts and times per task: metrics/household_detail.json; the metrics files keep to
    70 numbers)."""
    return {"household_tasks_succeeded": sum(r["success"] for r in record["tasks"])}
