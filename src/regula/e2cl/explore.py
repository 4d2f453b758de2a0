"""E2CL's exploration (seed 002, §2.2): the pre-tuned agent's steps executed, the environment's
feedback on them collected into D_f, corrections into D_c.

- Teacher-guided (TGE): along each expert trajectory, at every step t the agent proposes â_t from
  the expert's prefix j_{t-1}; the environment answers f_t for â_t tried at the expert's state (and
  undone); D_f gets (q_f, j_{t-1}, â_t, f_t), and where â_t ≠ a_t, D_c gets (q_c, j_{t-1}, â_t, f_t,
  a_t) with the expert's a_t as the correction. Then the expert's step is taken.
- Teacher-free (TFE): the agent plans each training program's task on its own; every step's feedback
  goes into D_f; a failed step goes to the corrector role, and its correction, executed in place of
  the failed step, is kept in D_c only if it executes (the paper's filter). The agent then goes on
  from the corrected step (or from its failed one when there is no executable correction).

`propose` is the agent's planning, batched: [(task, history)] -> [action]; TFE advances every
program one step per batch.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from .samples import Sample, Task, correction, end_action, feedback

Propose = Callable[[list[tuple[Task, list[str]]]], list[str]]


@dataclass
class Exploration:
    feedback: list[Sample] = field(default_factory=list)  # D_f
    correction: list[Sample] = field(default_factory=list)  # D_c
    stats: Counter = field(default_factory=Counter)
    # per D_f and per D_c sample, the program it was explored in (`Task.program`: what a planner
    # that reads the scene needs; the samples' texts do not say it)
    feedback_scenes: list = field(default_factory=list)
    correction_scenes: list = field(default_factory=list)

    def add(self, other: "Exploration") -> "Exploration":
        return Exploration(self.feedback + other.feedback, self.correction + other.correction,
                           self.stats + other.stats, self.feedback_scenes + other.feedback_scenes,
                           self.correction_scenes + other.correction_scenes)


def task_of(program) -> Task:
    return Task(program.task, program.description, program.id)


def teacher_guided(propose: Propose, programs: Sequence, make_episode: Callable, progress=None) -> Exploration:
    """TGE over `programs` (each with `.task`, `.description`, `.lines`); `make_episode(program)`
    opens its initial state."""
    out = Exploration()
    contexts = [(p, t) for p in programs for t in range(len(p.lines))]
    proposed = propose([(task_of(p), list(p.lines[:t])) for p, t in contexts])
    at = {(p.id, t): a for (p, t), a in zip(contexts, proposed)}
    for program in programs:
        task, episode = task_of(program), make_episode(program)
        for t, expert in enumerate(program.lines):
            guess, history = at[(program.id, t)], list(program.lines[:t])
            out.stats["tge_steps"] += 1
            if guess == end_action():
                out.stats["tge_ended_early"] += 1  # nothing to execute: no feedback to learn from
            else:
                step = episode.probe(guess)
                out.feedback.append(feedback(task, history, guess, step.feedback, "tge"))
                out.feedback_scenes.append(program.id)
                out.stats["tge_executable" if step.success else f"tge_error:{step.cause['error_type']}"] += 1
            if guess != expert:
                text = "" if guess == end_action() else step.feedback
                if text:
                    out.correction.append(correction(task, history, guess, text, expert, "tge"))
                    out.correction_scenes.append(program.id)
            if not episode.run_skill(expert).success:
                out.stats["tge_expert_failed"] += 1  # the program does not execute here: stop it
                break
        if progress:
            progress(1)
    return out


def teacher_free(propose: Propose, corrector, programs: Sequence, make_episode: Callable, max_steps: int,
                 progress=None) -> Exploration:
    """TFE: each program's task planned by the agent, at most `max_steps` steps."""
    out = Exploration()
    runs = [(task_of(p), make_episode(p), []) for p in programs]
    active = list(range(len(runs)))
    for _ in range(max_steps):
        if not active:
            break
        actions = propose([(runs[i][0], list(runs[i][2])) for i in active])
        still = []
        for i, action in zip(active, actions):
            task, episode, history = runs[i]
            if action == end_action():
                continue
            still.append(i)
            _explore_step(out, corrector, task, episode, history, action)
        done = len(active) - len(still)
        active = still
        if progress and done:
            progress(done)
    if progress and active:
        progress(len(active))
    out.stats["tfe_unfinished"] = len(active)  # still planning after max_steps
    return out


def _explore_step(out: Exploration, corrector, task: Task, episode, history: list, action: str) -> None:
    step = episode.run_skill(action)
    out.feedback.append(feedback(task, history, action, step.feedback, "tfe"))
    out.feedback_scenes.append(task.program)
    out.stats["tfe_steps"] += 1
    if step.success:
        out.stats["tfe_executable"] += 1
        history.append(action)
        return
    out.stats[f"tfe_error:{step.cause['error_type']}"] += 1
    fix = corrector.correct(task, list(history), action, step.feedback, cause=step.cause, scene=episode.graph())
    if fix is None:
        out.stats["tfe_no_correction"] += 1
    elif episode.run_skill(fix).success:
        out.correction.append(correction(task, history, action, step.feedback, fix, "tfe"))
        out.correction_scenes.append(task.program)
        out.stats["tfe_corrected"] += 1
        history.append(fix)
        return
    else:
        out.stats["tfe_correction_failed"] += 1
    history.append(action)


def statistics(samples: Iterable[Sample]) -> dict:
    """Counts by kind and origin (the datasets' statistics for the metrics)."""
    c = Counter(f"{s.kind}/{s.origin}" for s in samples)
    return dict(sorted(c.items()))
