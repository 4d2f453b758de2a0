"""Tasks of the report flow (not cached: they read DVC-tracked files, see DESIGN.md)."""
from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from regula import demos, report


@task(name="build-report", cache_policy=NO_CACHE)
def build_report(root: str, title: str) -> str:
    root_ = Path(root)
    episodes = demos.read_episodes(root_ / "data" / "demos")
    path = report.build_report(root_ / "metrics" / "demos.json", root_ / "metrics" / "demos_episodes.csv",
                               episodes, root_ / "reports", title)
    return str(path)
