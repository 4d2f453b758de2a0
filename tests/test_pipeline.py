"""End to end: `dvc repro` in a temporary copy of the project, a no-op rerun, an experiment."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
COPY = ["src", "flows", "tasks", "dvc.yaml", "params.yaml", ".dvc/config", ".dvcignore",
        "pyproject.toml", ".gitignore"]


def run(cmd, cwd, env, check=True):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    dst = tmp_path_factory.mktemp("project")
    for name in COPY:
        src = ROOT / name
        target = dst / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, target)
    params = yaml.safe_load((dst / "params.yaml").read_text())
    params["demos"].update(episodes=2, max_steps=300, max_skills=60)
    (dst / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(dst / "src")  # the copy's library, not the checkout's
    for cmd in (["git", "init", "-q"], ["git", "add", "-A"],
                ["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init"]):
        run(cmd, dst, env)
    return dst, env


@pytest.mark.slow
def test_repro_noop_and_experiment(project):
    dst, env = project
    run([sys.executable, "-m", "flows.serve", "dvc", "repro"], dst, env)
    files = sorted(p.name for p in (dst / "data" / "demos").iterdir())
    assert files == ["episode_00000.jsonl", "episode_00001.jsonl"]
    metrics = json.loads((dst / "metrics" / "demos.json").read_text())
    assert metrics["episodes"] == 2
    report = (dst / "reports" / "report.md").read_text()
    assert "## Demonstrations (Crafter, scripted expert)" in report
    assert "| make_wood_pickaxe |" in report
    assert (dst / "reports" / "achievements.png").stat().st_size > 1000

    again = run(["dvc", "repro"], dst, env)
    assert "Data and pipelines are up to date." in again.stdout

    run(["git", "add", "-A"], dst, env)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "repro"], dst, env)
    run([sys.executable, "-m", "flows.serve", "dvc", "exp", "run", "-S", "demos.episodes=3"], dst, env)
    metrics = json.loads((dst / "metrics" / "demos.json").read_text())
    assert metrics["episodes"] == 3
    assert len(list((dst / "data" / "demos").glob("*.jsonl"))) == 3


def test_bad_params_key_fails_in_one_line(project):
    dst, env = project
    bad = dst / "params.yaml"
    original = bad.read_text()
    try:
        bad.write_text(original.replace("episodes:", "epsiodes:"))
        proc = run([sys.executable, "-m", "flows.demos"], dst, env, check=False)
    finally:
        bad.write_text(original)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: params: unknown key 'demos.epsiodes'; known keys under 'demos': "
        "episodes, goal, max_skills, max_steps, workers"]
