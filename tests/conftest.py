import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from regula import params as params_mod


# `make test` runs the suite on every core (pytest-xdist, `--dist loadfile`): a module's tests run on
# one worker, in their order (they share module-scoped fixtures, and some build on the ones before).
# The modules that take longest (make test's durations) are sent first, so that the workers finish
# together; a module not listed here only starts later.
LONGEST_FIRST = ["test_pipeline.py", "test_e2cl_stage.py", "test_runners.py", "test_schedule.py", "test_remote.py",
                 "test_team_experiments.py", "test_llm_pipeline.py", "test_stub_server.py", "test_flows.py", "test_virtualhome.py",
                 "test_local_model.py"]


def pytest_collection_modifyitems(items):
    rank = {name: i for i, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: each module keeps its order


@pytest.fixture
def small_params():
    """Defaults with a short episode budget, for fast end-to-end checks."""
    return params_mod.validate({"demos": {"episodes": 2, "max_steps": 400, "max_skills": 80}})


# spottl (Spot) is a dependency wherever it has wheels; only elsewhere may Spot tests skip.
# On Linux x86_64 a missing Spot makes them fail instead of hiding the gap.
SPOT_PLATFORM = platform.system() == "Linux" and platform.machine() == "x86_64"
needs_spot_platform = pytest.mark.skipif(not SPOT_PLATFORM, reason="spottl has wheels for Linux x86_64 only")


@pytest.fixture(scope="session")
def prefect_api(tmp_path_factory):
    """One Prefect server for every test that runs flows in subprocesses: without it each
    process starts a temporary one (~13 s), `flows.serve` its own (~10 s). Started by
    `flows.serve` itself, around a process that waits for the end of the session."""
    root = Path(__file__).resolve().parent.parent
    home = tmp_path_factory.mktemp("prefect_home")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env.update(PREFECT_HOME=str(home), PYTHONPATH=f"{root}{os.pathsep}{root / 'src'}")
    wait = "import os, sys; print(os.environ['PREFECT_API_URL'], flush=True); sys.stdin.read()"
    proc = subprocess.Popen([sys.executable, "-m", "flows.serve", sys.executable, "-c", wait], cwd=home, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    url = proc.stdout.readline().strip()
    assert url.startswith("http://127.0.0.1:"), f"no Prefect server (see {home}/server.log)"
    yield url
    proc.stdin.close()
    proc.wait(timeout=60)
