"""Feedback prediction: will this skill succeed here? (E2CL's feedback model, as a probe.)

The `feedback` role (`regula.roles.FeedbackPredictor`) reads a recorded step (text
observation, skill) and predicts success; the recorded outcome scores it. Two backends: `rules`
(data.yaml's requirements against the inventory; the embedded default) and `openai` (an LLM
answering yes/no through the cache).
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

from . import envs, prompts, roles
from .llm import LLMClient


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
    """Asks the LLM; `samples` > 1 takes a majority vote over cached samples."""

    name = "openai"
    uses_llm = True

    def __init__(self, client: LLMClient, samples: int = 1):
        self.client, self.samples = client, samples

    def predict(self, step: dict) -> bool:
        msgs = prompts.messages("feedback", obs=step["obs"], skill=step["skill"])
        votes = [self.client.ask_yes_no(msgs, "feedback", sample=i) for i in range(self.samples)]
        return sum(votes) * 2 > len(votes)


def sample_steps(episodes: list[dict], n: int, seed: int) -> list[dict]:
    steps = [dict(s, seed=e["header"]["seed"]) for e in episodes for s in e["steps"]]
    rng = random.Random(seed)
    return sorted(rng.sample(steps, min(n, len(steps))), key=lambda s: (s["seed"], s["t"]))


def predict_all(backend, steps: list[dict], map_fn=map) -> list[dict]:
    preds = list(map_fn(backend.predict, steps))
    return [{"seed": s["seed"], "t": s["t"], "skill": s["skill"], "predicted": bool(p),
             "actual": bool(s["success"]), "reason": s["reason"]} for s, p in zip(steps, preds)]


def score(rows: list[dict]) -> dict:
    c = Counter((r["predicted"], r["actual"]) for r in rows)
    tp, tn, fp, fn = c[(True, True)], c[(False, False)], c[(True, False)], c[(False, True)]
    n = len(rows)
    return {"n": n, "accuracy": round((tp + tn) / n, 4) if n else None,
            "precision": round(tp / (tp + fp), 4) if tp + fp else None,
            "recall": round(tp / (tp + fn), 4) if tp + fn else None,
            "failures_recorded": fp + tn, "failures_predicted": tn}


def write_rows(path: Path, rows: list[dict]) -> None:
    from .demos import write_text_atomic
    path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(path, "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows))
