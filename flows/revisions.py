"""Bring an old revision's DVC outputs within reach of `regula diff` (DVC's side of it):

    python -m flows.revisions fetch SHA            # from the project's DVC remote into the local cache
    python -m flows.revisions replay SHA DIR       # regenerate them in a temporary git worktree at DIR

`fetch` is `dvc fetch` for that one revision (every output its dvc.lock names), from the default
remote; it exits 3 when the project has no remote. `replay` checks the revision out in a git
worktree (detached, at DIR) that shares this project's DVC cache, and runs its own pipeline there
with its own code (`src/` first on PYTHONPATH) under one Prefect server: every stage replays the
tracked caches (LLM answers, kept episodes and trainings), so no LLM is asked and nothing is
trained; the LLM client's `live` mode would ask an endpoint only for an answer the revision's
caches lack, which a release never does. What DVC prints goes to stderr, which is the progress
the person waiting sees. The caller removes the worktree (`git worktree remove --force DIR`).
"""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flows import venv_env  # (importing flows sets DO_NOT_TRACK for the server and the stages)
from regula.diff.revisions import dvc_cache

NO_REMOTE = 3


def fetch(root: Path, sha: str) -> int:
    from dvc.exceptions import DvcException
    from dvc.repo import Repo

    with Repo(str(root)) as repo:
        if not repo.config.get("core", {}).get("remote"):
            return NO_REMOTE  # the caller says what it did instead
        try:
            repo.fetch(revs=[sha])
        except DvcException as exc:
            print(f"dvc fetch at {sha[:7]} failed: {' '.join(str(exc).split())}", file=sys.stderr)
            return 1
    return 0


def replay(root: Path, sha: str, into: Path) -> int:
    cache = dvc_cache(root.resolve())  # the folder `cache.dir` names (the diff reads objects there)
    subprocess.run(["git", "-C", str(root), "worktree", "add", "--detach", "--quiet", str(into), sha], check=True)
    # The worktree writes into, and reads from, this project's cache: what it regenerates byte for
    # byte is then in reach of the next diff with no replay.
    (into / ".dvc" / "config.local").write_text(f"[cache]\n    dir = {cache}\n")
    env = venv_env({**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(into / "src"), os.environ.get("PYTHONPATH")]))})
    dvc = ["dvc", "repro"]
    command = [sys.executable, "-m", "flows.serve", *dvc] if (into / "flows" / "serve.py").is_file() else dvc
    return subprocess.call(command, cwd=into, env=env, stdout=sys.stderr)


def main(argv: list[str]) -> int:
    if len(argv) == 2 and argv[0] == "fetch":
        return fetch(Path("."), argv[1])
    if len(argv) == 3 and argv[0] == "replay":
        return replay(Path("."), argv[1], Path(argv[2]).resolve())
    print(__doc__.strip().splitlines()[2].strip() + "\n" + __doc__.strip().splitlines()[3].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
