"""E2CL's steps on VirtualHome (seed 002, Appendix E's process), as functions of data and models:
the expert data D_p, pre-tuning on D_p', both explorations, the trainings the tables compare, and
the evaluations. `stage.py` chains them with the stage's params, paths and caches.

The conditions (models of one training seed):
- `bc`: a model from scratch trained on D_p (behaviour cloning, the paper's BC);
- `e2cl`: the pre-tuned model trained on D_p ∪ D_f ∪ D_c (the method); `no_df` and `no_dc`
  leave D_f or D_c out (Table 2);
- `nat`: a model from scratch trained on D_p's steps said to succeed and D_f's failed steps said to
  fail (NAT, Wang et al. 2024b: Table 1's negative-aware baseline); it plans steps said to succeed.
Every model of a seed shares one tokenizer, trained on D_p's texts (what exists before exploring).
"""
from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Callable, Sequence

from . import explore
from .agent import ModelAgent
from .explore import task_of
from .inference import EXECUTABLE, TaskRun, run_tasks
from .model import AgentModel, TrainOptions
from .samples import Sample, context, expert_planning, with_outcome

# condition -> the datasets it trains on: from scratch (FROM_SCRATCH) or after pre-tuning (the rest)
CONDITIONS = {"bc": ("p",), "e2cl": ("p", "f", "c"), "no_df": ("p", "c"), "no_dc": ("p", "f"),
              "nat": ("p_success", "f_failure")}
FROM_SCRATCH = ("bc", "nat")
OUTCOMES = {"nat": "success"}  # the outcome a condition's model is asked for when it plans


@dataclass(frozen=True, kw_only=True)
class Settings:
    """A run's model and training settings: params' `e2cl` section (`regula.e2cl.stage.settings`),
    no default of its own; cache keys and the record hold them, in this order."""

    preset: str
    vocab_size: int
    epochs: int
    batch_size: int
    lr: float
    pretune_samples: int
    pretune_epochs: int
    max_steps: int
    max_corrections: int

    def options(self, seed: int, epochs: int | None = None, device: str = "cpu") -> TrainOptions:
        return TrainOptions(epochs=epochs or self.epochs, batch_size=self.batch_size, lr=self.lr, seed=seed,
                            device=device)


def executable_programs(programs: Sequence, make_episode: Callable) -> tuple[list, list]:
    """(programs whose recorded script executes here, the ids of those that do not)."""
    ok, bad = [], []
    for p in programs:
        episode = make_episode(p)
        (ok if all(episode.run_skill(line).success for line in p.lines) else bad).append(p)
    return ok, [p.id for p in bad]


def planning_data(programs: Sequence) -> list[Sample]:
    """D_p (Eq. 1)."""
    return [s for p in programs for s in expert_planning(task_of(p), p.lines)]


def pairs(samples: Sequence[Sample]) -> list[tuple[str, str]]:
    return [(s.source, s.target) for s in samples]


def pretune_subset(d_p: Sequence[Sample], n: int, seed: int) -> list[Sample]:
    """D_p': n samples of D_p drawn with the seed, in D_p's order."""
    keep = sorted(random.Random(seed).sample(range(len(d_p)), min(n, len(d_p))))
    return [d_p[i] for i in keep]


def new_model(d_p: Sequence[Sample], settings: Settings, seed: int) -> AgentModel:
    return AgentModel.from_scratch((t for s in d_p for t in (s.source, s.target)), settings.preset,
                                   settings.vocab_size, seed)


def explore_both(pretuned: AgentModel, corrector, programs: Sequence, make_episode: Callable,
                 settings: Settings, progress=None) -> explore.Exploration:
    """TGE then TFE over the training programs with the pre-tuned agent: D_f and D_c."""
    agent = ModelAgent(pretuned)
    tge = explore.teacher_guided(agent.plan, programs, make_episode, progress)
    tfe = explore.teacher_free(agent.plan, corrector, programs, make_episode, settings.max_steps, progress)
    return tge.add(tfe)


def training_set(condition: str, d_p: Sequence[Sample], found: explore.Exploration) -> list[Sample]:
    parts = {"p": lambda: list(d_p), "f": lambda: found.feedback, "c": lambda: found.correction,
             "p_success": lambda: [with_outcome(s, "success") for s in d_p],
             "f_failure": lambda: [with_outcome(s, "failure") for s in found.feedback if s.target != EXECUTABLE]}
    return [s for part in CONDITIONS[condition] for s in parts[part]()]


def evaluate(model: AgentModel, programs: Sequence, make_episode: Callable, settings: Settings,
             speculative: bool, check=None, outcome: str | None = None) -> list[TaskRun]:
    return plan_with(ModelAgent(model, outcome=outcome), programs, make_episode, settings, speculative, check)


def plan_with(agent, programs: Sequence, make_episode: Callable, settings: Settings, speculative: bool = False,
              check=None) -> list[TaskRun]:
    """Each program's task planned by the agent in its own initial state."""
    runs = [TaskRun(task_of(p), make_episode(p), tuple(p.lines)) for p in programs]
    return run_tasks(agent, runs, settings.max_steps, speculative, settings.max_corrections, check)


def ground_truth_check(contexts, episodes) -> list[str]:
    """Fig. 5's 'ground truth': the environment's own feedback on the step, tried and undone."""
    return [episode.probe(action).feedback for (_, _, action), episode in zip(contexts, episodes)]


def boolean_check(contexts, episodes) -> list[str]:
    """Fig. 5's 'boolean': whether the step executes, with no reason."""
    return [EXECUTABLE if episode.probe(action).success else "False"
            for (_, _, action), episode in zip(contexts, episodes)]


def random_check(texts: Sequence[str], seed: int):
    """Fig. 5's 'random': a feedback drawn at random from all the feedback texts seen in D_f."""
    rng, pool = random.Random(seed), sorted(set(texts))

    def check(contexts, episodes):
        return [rng.choice(pool) for _ in contexts]
    return check


def correction_cases(guesser: AgentModel, programs: Sequence, make_episode: Callable, n: int,
                     seed: int) -> list[dict]:
    """Fig. 4's samples, collected as TGE does: along each expert trajectory the guesser's step is tried
    at the expert's state; a step that fails is a case (the state is replayed from the prefix when the
    case is judged). n cases drawn with the seed."""
    agent, cases = ModelAgent(guesser), []
    contexts = [(p, t) for p in programs for t in range(len(p.lines))]
    guesses = agent.plan([(task_of(p), list(p.lines[:t])) for p, t in contexts])
    episodes = {}
    for (p, t), guess in zip(contexts, guesses):
        episode = episodes.get(p.id) or episodes.setdefault(p.id, make_episode(p))
        step = episode.probe(guess)
        if not step.success:
            cases.append({"program": p.id, "t": t, "action": guess, "feedback": step.feedback,
                          "expert": p.lines[t]})
        episode.run_skill(p.lines[t])
    rng = random.Random(seed)
    return sorted(rng.sample(cases, min(n, len(cases))), key=lambda c: (c["program"], c["t"]))


def correction_accuracy(model: AgentModel, cases: Sequence[dict], programs: dict, make_episode: Callable) -> dict:
    """Of the cases, how often the model's correction is the expert's step, and how often it executes."""
    agent = ModelAgent(model)
    fixes = agent.correct([(task_of(programs[c["program"]]), list(programs[c["program"]].lines[:c["t"]]),
                            c["action"], c["feedback"]) for c in cases])
    expert = executes = 0
    for c, fix in zip(cases, fixes):
        p = programs[c["program"]]
        episode = make_episode(p)
        for line in p.lines[:c["t"]]:
            episode.run_skill(line)
        expert += fix == c["expert"]
        executes += episode.probe(fix).success
    n = len(cases)
    return {"cases": n, "expert_match": expert / n if n else None, "executable": executes / n if n else None}


# the ranker's plans a unit keeps, per test split (`ranker_unit`): (name, speculative); under speculative
# inference the judge (D_f) checks, and a correction is the correction head's (D_c) or, without D_c,
# the planner's next best
RANKER_EVALUATIONS = (("ranker_bc", False), ("ranker_e2cl", True), ("ranker_no_dc", True))


def ranker_unit(train: Sequence, tests: dict, corrector, make_episode: Callable, settings: Settings, seed: int,
                epochs: int, progress=None) -> tuple[dict, dict]:
    """The ranking planner on one fold and seed (`ranker.py`): trained on D_p (BC), it explores the
    training programs (TGE then TFE, as the T5's pre-tuned agent does) for D_f and D_c; the judge
    trains on D_f; BC plans each test split plainly, the method with speculative inference.
    Returns ({(name, split): runs}, a record of the training and exploration)."""
    from . import ranker
    from .model import _threads
    with _threads(1):  # its nets are tiny: a second thread costs 15x under load and helps nothing
        return _ranker_unit(ranker, train, tests, corrector, make_episode, settings, seed, epochs,
                            progress or (lambda line: None))


def _ranker_unit(ranker, train, tests, corrector, make_episode, settings, seed, epochs, say) -> tuple[dict, dict]:
    counts = ranker.Counts(train)
    own = ranker.scenes(train, train, other_task=True)  # a training task never retrieves itself
    net, log = ranker.train_ranker(counts, own, train, seed, epochs)
    say(f"ranker trained on {log.samples} steps, loss {log.losses[0]} -> {log.losses[-1]}")
    agent = ranker.RankerAgent(counts, own, net)
    found = explore.teacher_guided(agent.plan, train, make_episode).add(
        explore.teacher_free(agent.plan, corrector, train, make_episode, settings.max_steps))
    rows = []
    for sample, program in zip(found.feedback, found.feedback_scenes):
        task, history, action = context(sample)
        rows.append(agent.judge_row(replace(task, program=program), history, action))
    judge, accuracy = ranker.train_judge(rows, [s.target == EXECUTABLE for s in found.feedback], seed)
    say(f"judge trained on D_f ({len(rows)} steps): training accuracy {accuracy}")
    cases = []
    for sample, program in zip(found.correction, found.correction_scenes):
        task, history, action = context(sample)
        cases.append((own[program], history, action, sample.target))
    corrector, fix_log = ranker.train_corrector(counts, cases, seed, epochs)
    say(f"correction head trained on D_c ({len(cases)} cases), loss {fix_log.losses[0]} -> {fix_log.losses[-1]}")
    runs = {}
    for part, programs in tests.items():
        test_scenes = ranker.scenes(programs, train, other_task=False)
        for name, speculative in RANKER_EVALUATIONS:
            planner = ranker.RankerAgent(counts, test_scenes, net, judge if speculative else None,
                                         corrector if name == "ranker_e2cl" else None)
            runs[(name, part)] = plan_with(planner, programs, make_episode, settings, speculative)
    record = {"steps": log.samples, "losses": log.losses, "correction_losses": fix_log.losses,
              "judge_accuracy": accuracy,
              "d_f_samples": len(found.feedback), "d_c_samples": len(found.correction),
              "d_f_executed": round(sum(s.target == EXECUTABLE for s in found.feedback) / max(1, len(rows)), 4),
              "explore": dict(sorted(found.stats.items()))}
    return runs, record
