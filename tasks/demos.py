"""Tasks of the demos flow."""
from __future__ import annotations

import hashlib
from pathlib import Path

from prefect import task

import regula
from regula.params import fingerprint
from regula import demos

_CODE = Path(regula.__file__).parent


def code_fingerprint() -> str:
    """Hash of the library code an episode runs, so an edited expert never hits an old cache."""
    h = hashlib.sha256()
    for path in sorted(_CODE.rglob("*.py")):
        h.update(path.relative_to(_CODE).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()[:16]


def _episode_key(context, parameters) -> str:
    # Keyed on the episode's inputs (values, not file paths) and the code: DVC decides when
    # the stage reruns, and a rerun with unchanged inputs gets the same episode back.
    return f"episode-{fingerprint(parameters['inputs'], code_fingerprint())}"


@task(name="play-episode", cache_key_fn=_episode_key, persist_result=True,
      task_run_name="episode seed={inputs[seed]}")
def play_episode(inputs: dict) -> dict:
    return demos.run_episode(inputs)
