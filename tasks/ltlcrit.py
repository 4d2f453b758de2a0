"""Tasks of the ltlcrit flow. Not cached by Prefect: the loop resumes from its own episode
files (same laws, seeds and settings), and the LLM cache makes a repeated question free."""
from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from regula.ltlcrit import stage
from tasks import log_progress


def progress(actor: str, iteration: int, done: int, total: int, episode: dict) -> None:
    what = "expert baseline" if actor == "expert" else f"{actor}, iteration {iteration}"
    log_progress(f"ltlcrit: {what}: episode {done}/{total} (seed {episode['seed']}): {episode['end']} after "
                 f"{episode['steps']} steps")


@task(name="ltlcrit-expert-baseline", cache_policy=NO_CACHE)
def expert_baseline(params: dict, root: str) -> list[dict]:
    return stage.run_expert(stage.context(params, Path(root)), progress)


@task(name="ltlcrit-improve-actor", cache_policy=NO_CACHE)
def improve_actor(params: dict, root: str, actor: str) -> tuple[dict, dict]:
    ctx = stage.context(params, Path(root))
    run = stage.run_actor(ctx, actor, progress)
    log_progress(f"ltlcrit: {actor}: stopped after {len(run.history) - 1} critic rounds ({run.stop}); "
                 f"{run.laws} critic laws; success {run.history[0]['success_rate']} -> {run.history[-1]['success_rate']}")
    return run.to_json(), ctx.accounting.to_dict()
