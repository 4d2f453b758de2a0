"""A temporary copy of the project as a git + DVC repository, for end-to-end tests."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
COPY = ["src", "flows", "tasks", "dvc.yaml", "params.yaml", "prefect.toml", ".dvc/config", ".dvc/plots", ".dvcignore",
        "pyproject.toml", ".gitignore", "data/specs/answers"]


def run(cmd, cwd, env, check=True):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if check and proc.returncode != 0:
        raise AssertionError(f"{cmd} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def project_env(dst: Path, prefect_api: str | None = None) -> dict:
    """The environment of a command run in the copy; `prefect_api` (conftest's fixture): flows
    talk to that server instead of starting their own."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    if prefect_api:
        env["PREFECT_API_URL"] = prefect_api
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    env["PYTHONPATH"] = str(dst / "src")  # the copy's library, not the checkout's
    return env


def set_params(dst: Path, updates: dict) -> None:
    """Lay `updates` over the copy's params.yaml key by key, at any depth (a params file gives
    every setting, so a nested section is changed, never replaced)."""
    params = yaml.safe_load((dst / "params.yaml").read_text())
    _merge(params, updates)
    (dst / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))


def _merge(into: dict, updates: dict) -> None:
    for key, value in updates.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            _merge(into[key], value)
        else:
            into[key] = value


def commit(dst: Path, env: dict, message: str) -> None:
    run(["git", "add", "-A"], dst, env)
    run(["git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message], dst, env)


def make_project(dst: Path, updates: dict) -> Path:
    for name in COPY:
        src, target = ROOT / name, dst / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if src.is_dir():
            shutil.copytree(src, target, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, target)
    set_params(dst, updates)
    env = project_env(dst)
    run(["git", "init", "-q"], dst, env)
    commit(dst, env, "init")
    return dst
