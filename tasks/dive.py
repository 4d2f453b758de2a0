"""Tasks of the dive flow. Not cached by Prefect: exploration episodes are files that a rerun
keeps when their inputs match, and the LLM cache makes a repeated question free."""
from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from regula.dive import stage
from tasks import log_progress


def progress(what: str, done: int, total: int, info: dict) -> None:
    if what.startswith("agent"):
        line = (f"{what}: episode {done}/{total} (seed {info['seed']}): {info['end']} after {info['steps']} steps, "
                f"{len(info['achievements'])} achievements")
    elif what == "explore":
        line = f"exploration episode {done}/{total} (seed {info['seed']}): {info['end']} after {info['steps']} steps"
    else:
        line = (f"discovery step {done}/{total}: {info['discovered_n']} candidates (precision "
                f"{info['discovered_precision']}), {info['verified_n']} verified (precision "
                f"{info['verified_precision']}, recall {info['verified_recall']})")
    log_progress(f"dive: {line}")


@task(name="dive-explore", cache_policy=NO_CACHE)
def explore(params: dict, root: str) -> list[dict]:
    return stage.exploration(params, Path(root) / "data" / "dive" / "explore", progress)


@task(name="dive-discover-verify", cache_policy=NO_CACHE)
def discover_verify(params: dict, root: str, explored: list[dict]) -> dict:
    return stage.learn(params, Path(root), explored, progress, log_progress)


@task(name="dive-agents", cache_policy=NO_CACHE)
def play_agents(params: dict, root: str, learned: dict) -> dict:
    return stage.play(params, Path(root), learned, progress)
