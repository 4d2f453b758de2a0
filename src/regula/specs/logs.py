"""Logged episodes as words over a specification's letters: CEDAR's extraction (`cedar/words.py`:
each succeeded skill that is a letter, then each event letter, `is_night`, as it becomes true;
`not_is_night` where `is_night` is false),
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
        steps = negated(read(f)["steps"], alphabet)
        out.append((f, extract(steps, tuple(alphabet), {s["skill"] for s in steps}).word))
    return out


NOT = "not_"  # `not_<event>`: an event letter that holds where <event> does not (regula.specs.study.NOT)


def negated(steps, alphabet) -> list:
    """The steps with each `not_<event>` letter of `alphabet` among their true propositions where
    <event> does not hold (`not_is_night`: daylight), as the studies' monitor reads them."""
    from regula.cedar.words import event_holds
    negations = [a for a in alphabet if a.startswith(NOT)]
    if not negations:
        return steps
    out = []
    for step in steps:
        props = set(step.get("props_after", ()))
        extra = [a for a in negations if not event_holds(a[len(NOT):], step.get("inventory", {}), props)]
        out.append({**step, "props_after": sorted(props | set(extra))})
    return out
