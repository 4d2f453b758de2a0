"""Logged episodes as words over a specification's letters: CEDAR's extraction (`cedar/words.py`:
each succeeded skill that is a letter, then each event letter, `is_night`, as it becomes true),
for the verifier (`regula dfa check --log`) and the person's trajectories (`regula spec learn --log`)."""
from __future__ import annotations

from pathlib import Path

from regula.errors import DataError


def episode_files(paths) -> list[Path]:
    """The files named, a folder standing for its episode_*.jsonl; none at all is an error."""
    files = [f for p in map(Path, paths) for f in (sorted(p.glob("episode_*.jsonl")) if p.is_dir() else [p])]
    if not files:
        raise DataError(f"no episode_*.jsonl in {', '.join(map(str, paths))}")
    return files


def log_words(paths, alphabet) -> list[tuple[Path, tuple]]:
    """(file, its word over `alphabet`) for each logged episode; letters no step of a log ran
    are events, read off the steps' propositions."""
    from regula.cedar.words import extract
    from regula.episodes import read
    out = []
    for f in episode_files(paths):
        steps = read(f)["steps"]
        out.append((f, extract(steps, tuple(alphabet), {s["skill"] for s in steps}).word))
    return out
