"""Tasks of the feedback flow. Not cached by Prefect: they read DVC-tracked files, and the
LLM cache already makes a repeated question free."""
from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from regula import demos, feedback, roles
from regula.llm import Accounting, LLMClient, LLMConfig


@task(name="predict-feedback", cache_policy=NO_CACHE)
def predict_feedback(root: str, params: dict) -> tuple[list[dict], dict, dict]:
    root_ = Path(root)
    cfg = params["feedback"]
    llm_cfg = LLMConfig.from_params({**params["llm"], "cache_dir": str(root_ / params["llm"]["cache_dir"])})
    accounting = Accounting()
    client = LLMClient(llm_cfg, "feedback", accounting)
    backend = roles.make("feedback", cfg["backend"], client=client, samples=cfg["samples"])
    steps = feedback.sample_steps(demos.read_episodes(root_ / "data" / "demos"), cfg["max_queries"],
                                  params["seed"])
    rows = feedback.predict_all(backend, steps, client.map if cfg["backend"] != "rules" else map)
    return rows, feedback.score(rows), accounting.to_dict()
