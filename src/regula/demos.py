"""Demonstrations: expert episodes on Crafter, one episode file each (`regula.episodes`).

A file is a header line, one line per high-level step, and a summary line; it is written
atomically, so a file that exists is complete. Contents depend only on the episode's inputs (no
clocks, no paths), so two runs produce byte-identical files.
"""
from __future__ import annotations

import csv
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING

from . import envs, episodes, stages
from .errors import DataError
from .io import write_csv
from .stages import Paths, SerialWork, Work

if TYPE_CHECKING:  # the validated params (`regula.params.validate`)
    from regula.params import Params


def episode_seeds(params: Params) -> list[int]:
    return [params.seed + i for i in range(params.demos.episodes)]


def episode_inputs(params: Params, seed: int) -> dict:
    """Everything one episode depends on: its cache key and its file header's fingerprint."""
    return {"seed": seed, "env": params.env.model_dump(),
            "expert": params.demos.model_dump(include={"goal", "max_steps", "max_skills"})}


def run_episode(inputs: dict) -> dict:
    """Play one expert episode; returns the episode (`regula.episodes`: header, steps, summary)."""
    crafter = envs.get("crafter")
    world = crafter.from_params(inputs["env"], inputs["seed"])
    # For the report only (the expert never reads the hidden map): was there a diamond at all?
    diamonds = world.hidden_count("diamond")
    expert = crafter.Expert(world, crafter.ExpertConfig(**inputs["expert"]))
    notes: dict = {}
    summary = asdict(crafter.play_episode(world, expert, notes))
    summary["world_diamonds"] = diamonds
    summary["saw_diamond"] = bool(world.memory.seen("diamond"))
    return episodes.record(world, inputs, summary, "expert", notes)


def read_episodes(directory: Path) -> list[dict]:
    """The demonstrations in a folder (data/demos), by seed; none at all is an error (a stage
    that reads them would report on nothing)."""
    found = episodes.read_all(directory)
    if not found:
        raise DataError(f"{directory}: no demonstrations; run the demos stage first (dvc repro demos)")
    return found


def overwrites(params: Params, out_dir: Path, metrics_dir: Path) -> list[Path]:
    """The files a run with `params` would replace by other ones or delete: episode files in
    `out_dir` of other seeds or inputs (or damaged), and the demos metrics in `metrics_dir`
    unless they are this run's (their table lists this run's seeds, and `out_dir` holds
    episodes of this run)."""
    store = episodes.EpisodeStore(out_dir)
    wanted = {store.path(s).name: episode_inputs(params, s) for s in episode_seeds(params)}
    found = sorted(Path(out_dir).glob("episode_*.jsonl"))
    other = [f for f in found if f.name not in wanted or store.finished(wanted[f.name]) is None]
    metrics = metrics_files(metrics_dir)
    per_episode = metrics[2]
    if len(other) < len(found) and _table_seeds(per_episode) == episode_seeds(params):
        return other
    return other + [m for m in metrics if m.exists()]


def _table_seeds(path: Path) -> list[int] | None:
    """The seeds of demos_episodes.csv, in its order; None when it cannot be read."""
    try:
        with open(path, newline="") as fh:
            return [int(row["seed"]) for row in csv.DictReader(fh)]
    except (OSError, KeyError, ValueError, csv.Error):
        return None


def generate(params: Params, out_dir: Path, metrics_dir: Path, work: Work | None = None,
             progress=None, resume: bool = False) -> dict:
    """Play the configured episodes and write the episode files, the metrics and the tables;
    returns the headline (metrics/demos.json).

    `work` plays the episodes (here, one after another; the Prefect flow's runs each as a
    task cached on its inputs and the code, in parallel processes with `demos.workers`).
    Episode files are written as each episode ends, so a killed run keeps every finished
    episode intact; with `resume`, a rerun keeps finished files whose inputs match and plays
    only the others (`regula.episodes.EpisodeStore`). (The flow resumes through Prefect's
    cache instead, which also knows when the code changed.) `progress(done, total, summary)`
    is told of each episode.
    """
    from .metrics import episodes_table  # pandas import only when needed

    work = work or SerialWork()
    out_dir, metrics_dir = Path(out_dir), Path(metrics_dir)
    inputs = [episode_inputs(params, s) for s in episode_seeds(params)]
    played = episodes.EpisodeStore(out_dir).play(
        inputs, run_episode, resume=resume, work=work, name="episode", cache=True,
        progress=progress and (lambda done, total, ep: progress(done, total, ep["summary"])))
    table = episodes_table(played)
    return write_metrics(metrics_dir, table, played, params.seed)


def metrics_files(metrics_dir: Path) -> list[Path]:
    """What `write_metrics` writes: demos.json, demos_detail.json, demos_episodes.csv,
    demos_achievements.csv."""
    metrics_dir = Path(metrics_dir)
    return [stages.metrics_path(metrics_dir, "demos"), stages.detail_path(metrics_dir, "demos"),
            metrics_dir / "demos_episodes.csv", metrics_dir / "demos_achievements.csv"]


def write_metrics(metrics_dir: Path, table, played: list[dict], seed: int = 0) -> dict:
    """metrics/demos.json (headline), demos_detail.json (the record), demos_episodes.csv (one
    row per episode) and demos_achievements.csv (one row per achievement); returns the headline.
    `seed`: the score's bootstrap draws."""
    from .metrics import achievement_table, demos_headline, demos_metrics
    record = demos_metrics(table, played, seed)
    *_, per_episode, per_achievement = metrics_files(metrics_dir)
    write_csv(per_episode, table)
    write_csv(per_achievement, achievement_table(table))
    return stages.write_metrics(metrics_dir, "demos", demos_headline(record), record)


def workers(params: Params) -> int:
    """Processes that play episodes at once (Crafter is pure Python: threads share a core)."""
    return params.demos.workers


def run(params: Params, paths: Paths, work: Work) -> dict:
    """The `demos` stage: data/demos/, metrics/demos.json (returned), demos_detail.json,
    demos_episodes.csv, demos_achievements.csv."""
    def progress(done, total, summary):
        work.progress(f"demos: episode {done}/{total} (seed {summary['seed']}): {summary['end']} after "
                      f"{summary['steps']} steps, {len(summary['achievements'])} achievements")

    return generate(params, paths.data / "demos", paths.metrics, work, progress)
