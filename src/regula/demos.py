"""Demonstrations: expert episodes on Crafter, stored one JSONL file per episode.

A file is a header line, one line per high-level step, and a summary line; it is written to
a temporary name and renamed, so a file that exists is complete. Contents depend only on the
episode's inputs (no clocks, no paths), so two runs produce byte-identical files.
"""
from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from . import envs, stages
from .errors import DataError
from .io import write_csv, write_jsonl
from .params import fingerprint
from .stages import Paths, SerialWork, Work

FORMAT = 1


def episode_seeds(params: dict) -> list[int]:
    return [params["seed"] + i for i in range(params["demos"]["episodes"])]


def episode_inputs(params: dict, seed: int) -> dict:
    """Everything one episode depends on: its cache key and its file header."""
    return {"seed": seed, "env": params["env"],
            "expert": {k: params["demos"][k] for k in ("goal", "max_steps", "max_skills")}}


def run_episode(inputs: dict) -> dict:
    """Play one expert episode; returns {"header", "steps", "summary"} (JSON-able)."""
    crafter = envs.get("crafter")
    world = crafter.from_params(inputs["env"], inputs["seed"])
    # For the report only (the expert never reads the hidden map): was there a diamond at all?
    diamonds = world.hidden_count("diamond")
    summary = asdict(crafter.Expert(world, crafter.ExpertConfig(**inputs["expert"])).play())
    summary["world_diamonds"] = diamonds
    summary["saw_diamond"] = bool(world.memory.seen("diamond"))
    return episode_record(world, inputs, summary, source="expert")


def episode_record(world: envs.Environment, inputs: dict, summary: dict, source: str) -> dict:
    """The JSON-able episode: header, one record per high-level step, summary."""
    header = {"type": "episode", "format": FORMAT, "seed": inputs["seed"], "source": source,
              "inputs": fingerprint(inputs), "goal": summary.get("goal", ""),
              "propositions": world.proposition_names()}
    steps = [{"type": "step", **e.to_json()} for e in world.events]
    return {"header": header, "steps": steps, "summary": {"type": "summary", **summary}}


def episode_path(directory: Path, seed: int) -> Path:
    return Path(directory) / f"episode_{seed:05d}.jsonl"


def write_episode(directory: Path, episode: dict) -> Path:
    lines = [episode["header"], *episode["steps"], episode["summary"]]
    return write_jsonl(episode_path(directory, episode["header"]["seed"]), lines, fsync=True)


def read_episode(path: Path) -> dict:
    """Parse and check one episode file; errors name the file and the line."""
    path = Path(path)
    header, steps, summary = None, [], None
    with open(path) as fh:
        for n, line in enumerate(fh, 1):
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{n}: not valid JSON ({exc.msg})") from None
            kind = rec.get("type") if isinstance(rec, dict) else None
            if n == 1 and kind != "episode":
                raise DataError(f"{path}:1: expected the episode header, got {kind!r}")
            if kind == "episode":
                header = rec
            elif kind == "step":
                steps.append(rec)
            elif kind == "summary":
                summary = rec
            else:
                raise DataError(f"{path}:{n}: unknown record type {kind!r}")
    if header is None:
        raise DataError(f"{path}: empty file")
    if summary is None:
        raise DataError(f"{path}: truncated (no summary line after line {len(steps) + 1})")
    return {"header": header, "steps": steps, "summary": summary}


def read_episodes(directory: Path) -> list[dict]:
    return [read_episode(p) for p in sorted(Path(directory).glob("episode_*.jsonl"))]


def clean_partial(directory: Path) -> int:
    """Remove temporaries a killed run left behind."""
    n = 0
    for tmp in Path(directory).glob(".tmp-*"):
        tmp.unlink()
        n += 1
    return n


def is_complete(path: Path, inputs: dict) -> bool:
    """A finished episode file for exactly these inputs (what `resume` may keep)."""
    try:
        episode = read_episode(path)
    except (OSError, DataError):
        return False
    return episode["header"].get("inputs") == fingerprint(inputs)


def generate(params: dict, out_dir: Path, metrics_dir: Path, work: Work | None = None,
             progress=None, resume: bool = False) -> dict:
    """Play the configured episodes and write the episode files, the metrics and the tables;
    returns the headline (metrics/demos.json).

    `work` plays the episodes (here, one after another; the Prefect flow's runs each as a
    task cached on its inputs and the code, in parallel processes with `demos.workers`).
    Episode files are written as each episode ends, so a killed run keeps every finished
    episode intact; with `resume`, a rerun keeps finished files whose inputs match and plays
    only the others. (The flow resumes through Prefect's cache instead, which also knows
    when the code changed.) `progress(done, total, summary)` is told of each episode.
    """
    from .metrics import episodes_table  # pandas import only when needed

    work = work or SerialWork()
    out_dir, metrics_dir = Path(out_dir), Path(metrics_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    clean_partial(out_dir)
    seeds = episode_seeds(params)
    wanted = {episode_path(out_dir, s).name for s in seeds}
    for stale in out_dir.glob("episode_*.jsonl"):
        if stale.name not in wanted:
            stale.unlink()
    inputs = [episode_inputs(params, s) for s in seeds]
    if resume:
        inputs = [i for i in inputs if not is_complete(episode_path(out_dir, i["seed"]), i)]
    played = work.map(run_episode, inputs, name="episode", label=lambda i: f"seed={i['seed']}", cache=True)
    for done, episode in enumerate(played, 1):
        write_episode(out_dir, episode)
        if progress:
            progress(done, len(inputs), episode["summary"])
    episodes = read_episodes(out_dir)
    table = episodes_table(episodes)
    return write_metrics(metrics_dir, table, episodes)


def write_metrics(metrics_dir: Path, table, episodes: list[dict]) -> dict:
    """metrics/demos.json (headline), demos_detail.json (the record), demos_episodes.csv (one
    row per episode) and demos_achievements.csv (one row per achievement); returns the headline."""
    from .metrics import achievement_table, demos_headline, demos_metrics
    record = demos_metrics(table, episodes)
    write_csv(Path(metrics_dir) / "demos_episodes.csv", table)
    write_csv(Path(metrics_dir) / "demos_achievements.csv", achievement_table(table))
    return stages.write_metrics(metrics_dir, "demos", demos_headline(record), record)


def workers(params: dict) -> int:
    """Processes that play episodes at once (Crafter is pure Python: threads share a core)."""
    return params["demos"]["workers"]


def run(params: dict, paths: Paths, work: Work) -> dict:
    """The `demos` stage: data/demos/, metrics/demos.json (returned), demos_detail.json,
    demos_episodes.csv, demos_achievements.csv."""
    def progress(done, total, summary):
        work.progress(f"demos: episode {done}/{total} (seed {summary['seed']}): {summary['end']} after "
                      f"{summary['steps']} steps, {len(summary['achievements'])} achievements")

    return generate(params, paths.data / "demos", paths.metrics, work, progress)
