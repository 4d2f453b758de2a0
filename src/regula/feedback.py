"""Feedback prediction: will this skill succeed here? (E2CL's feedback model, as a probe.)

The `feedback` role (`regula.roles.FeedbackPredictor`) reads a recorded step (text
observation, skill) and predicts success; the recorded outcome scores it. Two backends: `rules`
(data.yaml's requirements against the inventory; the embedded default) and `openai` (an LLM
answering yes/no through the cache).
"""
from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from . import envs, prompts, roles, stages
from .io import write_jsonl
from .llm import LLMClient, UnusableAnswer
from .stages import Paths, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params


@roles.register("feedback", "rules")
class RulesFeedback:
    """Predicts success iff the inventory before the step meets the recipe's needs."""

    name = "rules"
    uses_llm = False

    def predict(self, step: dict) -> bool:
        recipe = envs.get("crafter").rules.recipes.get(step["skill"])
        if recipe is None:
            return True  # explore, sleep, fights: no recipe to check
        before = {k: v - step["inventory_delta"].get(k, 0) for k, v in step["inventory"].items()}
        needs = {**recipe.require, **recipe.uses}
        return all(before.get(k, 0) >= v for k, v in needs.items())


@roles.register("feedback", "openai")
class LLMFeedback:
    """Asks the LLM; `samples` > 1 takes a majority vote over cached samples. An answer that
    never parsed is no vote; with no vote at all the prediction is None (scored as wrong)."""

    name = "openai"
    uses_llm = True

    def __init__(self, client: LLMClient, samples: int = 1):
        self.client, self.samples = client, samples

    def predict(self, step: dict) -> bool | None:
        msgs = prompts.messages("feedback", obs=step["obs"], skill=step["skill"])
        votes = []
        for i in range(self.samples):
            try:
                votes.append(self.client.ask_yes_no(msgs, "feedback", sample=i))
            except UnusableAnswer:
                pass
        return sum(votes) * 2 > len(votes) if votes else None


def sample_steps(episodes: list[dict], n: int, seed: int) -> list[dict]:
    steps = [dict(s, seed=e["header"]["seed"]) for e in episodes for s in e["steps"]]
    rng = random.Random(seed)
    return sorted(rng.sample(steps, min(n, len(steps))), key=lambda s: (s["seed"], s["t"]))


def predict_all(backend, steps: list[dict], map_fn=map) -> list[dict]:
    preds = list(map_fn(backend.predict, steps))
    return [{"seed": s["seed"], "t": s["t"], "skill": s["skill"], "predicted": None if p is None else bool(p),
             "actual": bool(s["success"]), "reason": s["reason"]} for s, p in zip(steps, preds)]


def score(rows: list[dict]) -> dict:
    c = Counter((r["predicted"], r["actual"]) for r in rows)
    tp, tn, fp, fn = c[(True, True)], c[(False, False)], c[(True, False)], c[(False, True)]
    n = len(rows)
    return {"n": n, "accuracy": round((tp + tn) / n, 4) if n else None,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "failures_recorded": fp + tn, "failures_predicted": tn,
            "unusable": sum(r["predicted"] is None for r in rows)}


def prepare(params: Params, paths: Paths) -> None:
    # The stage's LLM cache folder is a DVC output: it must exist even when no call is made.
    (paths.llm_cache(params) / paths.stage).mkdir(parents=True, exist_ok=True)


def run(params: Params, paths: Paths, work: Work) -> dict:
    """The `feedback` stage (or its twin, under `paths.stage`): data/feedback/predictions.jsonl,
    metrics/feedback.json (the scores, returned) and metrics/feedback_detail.json (the record:
    scores, backend, the model and the endpoint that answered, and the LLM's accounting under
    `llm`)."""
    from . import demos
    from .llm import Accounting, LLMConfig

    cfg = params.feedback
    llm_cfg = LLMConfig.from_params(params.llm, cache_dir=str(paths.llm_cache(params)))
    accounting = Accounting()
    client = LLMClient(llm_cfg, paths.stage, accounting)
    backend = roles.make("feedback", cfg.backend, client=client, samples=cfg.samples)
    steps = sample_steps(demos.read_episodes(paths.data / "demos"), cfg.max_queries, params.seed)
    rows = predict_all(backend, steps, client.map if roles.uses_llm("feedback", cfg.backend) else map)
    scores = score(rows)
    write_jsonl(paths.data / paths.stage / "predictions.jsonl", rows)
    record = {**scores, "backend": cfg.backend,
              "model": f"{llm_cfg.model} at {llm_cfg.endpoint}" if cfg.backend != "rules" else None,
              "llm": accounting.to_dict()}
    unusable = f" ({scores['unusable']} with no usable answer, counted wrong)" if scores["unusable"] else ""
    work.progress(f"{paths.stage}: {scores['n']} predictions by {cfg.backend}, accuracy {scores['accuracy']}"
                  + unusable)
    return stages.write_metrics(paths.metrics, paths.stage,
                                stages.headline_for(paths.stage, headline(record), lambda key: key == "accuracy"), record)


def headline(record: dict) -> dict:
    """What metrics/feedback.json holds: how well the backend predicted (on how many steps, a
    params echo: metrics/feedback_detail.json)."""
    return {k: record[k] for k in ("accuracy", "precision", "recall")}
