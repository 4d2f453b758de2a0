"""Commands in a toy DVC project made by a test (tests/test_diff_fill.py, test_team_experiments.py):
this venv's dvc and regula first on PATH, no one's Prefect or DVC settings, a git identity."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent  # this venv's dvc and regula


def sh(repo: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "DVC_"))}
    env.update(PATH=os.pathsep.join([str(BIN), env.get("PATH", "")]), DVC_NO_ANALYTICS="1",
               GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@t")
    done = subprocess.run([str(a) for a in args], cwd=repo, env=env, capture_output=True, text=True, timeout=300)
    if check and done.returncode != 0:
        raise AssertionError(f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}")
    return done
