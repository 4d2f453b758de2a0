"""Experiments that travel: A runs one and `regula exp push`es it; B clones, `regula exp pull`s,
sees it beside its baseline (`regula exp show`), diffs it with no replay (its outputs and DVC's
run cache came with it), extends it and pushes; A pulls B's.
One bare git repository and one shared-folder DVC remote; a toy one-stage pipeline with this
project's flows/ (`regula exp` runs `python -m flows.exp` in the project)."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from toy_project import BIN, sh

ROOT = Path(__file__).resolve().parents[1]
MAKE = """import json, pathlib, yaml
n = yaml.safe_load(open("params.yaml"))["n"]
pathlib.Path("data").mkdir(exist_ok=True)
pathlib.Path("data/out.txt").write_text("x" * n)
pathlib.Path("metrics").mkdir(exist_ok=True)
pathlib.Path("metrics/toy.json").write_text(json.dumps({"value": n * 1.5}))
"""
PIPELINE = """stages:
  toy:
    cmd: python make.py
    deps: [make.py]
    params: [n]
    outs: [data/out.txt]
    metrics: [{metrics/toy.json: {cache: false}}]
"""


def regula(repo: Path, *args, check: bool = True) -> subprocess.CompletedProcess:
    return sh(repo, BIN / "regula", *args, check=check)


def runs(repo: Path) -> list[str]:
    return sorted(p.name for p in (repo / ".dvc" / "cache" / "runs").rglob("*") if p.is_file())


@pytest.mark.slow
def test_a_teammate_pulls_shows_diffs_and_extends_an_experiment(tmp_path):
    a, b, origin, store = tmp_path / "a", tmp_path / "b", tmp_path / "origin.git", tmp_path / "dvc-store"
    (a / "flows").mkdir(parents=True)
    for name in ("__init__.py", "exp.py", "serve.py", "revisions.py"):
        shutil.copy(ROOT / "flows" / name, a / "flows" / name)
    (a / "make.py").write_text(MAKE)
    (a / "dvc.yaml").write_text(PIPELINE)
    (a / "params.yaml").write_text("n: 3\n")
    sh(a, "git", "init", "-q", "-b", "main")
    sh(a, "dvc", "init", "-q")
    sh(a, "dvc", "remote", "add", "-d", "team", store)
    sh(a, "dvc", "repro", "-q")
    sh(a, "git", "add", "-A")
    sh(a, "git", "commit", "-qm", "n=3")
    sh(a, "dvc", "push", "-q")
    sh(tmp_path, "git", "init", "-q", "--bare", "-b", "main", origin)
    sh(a, "git", "remote", "add", "origin", origin)
    sh(a, "git", "push", "-q", "origin", "main")

    # A: an experiment, shared with one command
    sh(a, "dvc", "exp", "run", "-q", "-S", "n=5", "--name", "more")
    regula(a, "exp", "push")
    assert "more" in sh(tmp_path, "git", "ls-remote", origin).stdout

    # B: clone, pull, see it beside the baseline, diff it with nothing missing
    sh(tmp_path, "git", "clone", "-q", origin, b)
    regula(b, "exp", "pull")
    shown = json.loads(regula(b, "exp", "show", "--format", "json").stdout)
    [more] = shown["experiments"]
    assert more["name"] == "more" and more["baseline"].endswith("(HEAD)")
    assert [(r["key"], r["old"], r["new"]) for r in more["params"]] == [("n", 3, 5)]
    assert [(r["label"], r["old"], r["new"]) for r in more["metrics"]] == [("toy.value", 4.5, 7.5)]
    # the experiment's outputs came with it; HEAD's were never pulled here: fetched for the diff
    diff = regula(b, "diff", "HEAD", "more", "--format", "json", check=False)
    assert diff.returncode == 1, diff.stderr
    assert diff.stderr.splitlines() == ["note: HEAD: its outputs were fetched from the DVC remote"]
    assert json.loads(diff.stdout)["unavailable"] == []

    # DVC's run cache came too: A's record of each stage run, by its inputs
    assert runs(b) == runs(a) and len(runs(a)) == 2  # n=3 and n=5

    # B extends it and shares back; A takes B's
    sh(b, "dvc", "exp", "apply", "-q", "more")
    sh(b, "dvc", "exp", "run", "-q", "-S", "n=6", "--name", "more-b")
    sh(b, "git", "checkout", "-q", "--", ".")
    regula(b, "exp", "push", "origin", "more-b")
    regula(a, "exp", "pull", "origin", "more-b")
    names = [e["name"] for e in json.loads(regula(a, "exp", "show", "--format", "json").stdout)["experiments"]]
    assert sorted(names) == ["more", "more-b"]
