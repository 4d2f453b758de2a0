"""`regula exp show` (experiments beside their baselines, read from git refs) and `regula exp
run`'s check of -S before DVC starts."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cli_run import assert_one_line_error, invoke
from regula.experiments import compare, headline_files

ROOT = Path(__file__).resolve().parents[1]
DVC_YAML = """stages:
  feedback:
    cmd: python -m flows feedback
    metrics:
      - metrics/feedback.json:
          cache: false
  laws:
    cmd: python -m flows laws
    metrics:
      - metrics/laws.json
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


def write(repo: Path, max_queries: int, accuracy: float, n: int) -> None:
    (repo / "params.yaml").write_text(f"feedback:\n  max_queries: {max_queries}\n  backend: rules\n")
    (repo / "metrics" / "feedback.json").write_text(json.dumps({"accuracy": accuracy, "n": n}))
    (repo / "metrics" / "feedback_detail.json").write_text(json.dumps({"n": n, "failures": n // 10}))
    (repo / "metrics" / "laws.json").write_text(json.dumps({"laws": 3}))


def experiment(repo: Path, name: str, baseline: str, **values) -> None:
    """An experiment as `dvc exp run` leaves it: a commit on the baseline under refs/exps."""
    write(repo, **values)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", name)
    git(repo, "update-ref", f"refs/exps/{baseline[:2]}/{baseline[2:]}/{name}", "HEAD")
    git(repo, "reset", "-q", "--hard", baseline)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / "metrics").mkdir()
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    write(tmp_path, 200, 0.905, 200)
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "baseline")
    base = git(tmp_path, "rev-parse", "HEAD")
    experiment(tmp_path, "fewer-queries", base, max_queries=100, accuracy=0.9, n=100)
    experiment(tmp_path, "noise-only", base, max_queries=200, accuracy=0.905000001, n=200)
    return tmp_path


def test_headline_files_are_the_stages_metrics_entries(repo):
    assert headline_files(repo) == ["metrics/feedback.json", "metrics/laws.json"]


def test_each_experiment_shows_its_params_and_the_headline_metrics_that_moved(repo):
    result = compare(repo)
    assert [e["name"] for e in result["experiments"]] == ["fewer-queries", "noise-only"]
    fewer, noise = result["experiments"]
    assert fewer["baseline"] == result["head"] + " (HEAD)"
    assert [(r["key"], r["old"], r["new"]) for r in fewer["params"]] == [("feedback.max_queries", 200, 100)]
    # the record (feedback_detail.json) is not a headline; n is, in feedback.json
    assert [(r["label"], r["old"], r["new"]) for r in fewer["metrics"]] == [
        ("feedback.accuracy", 0.905, 0.9), ("feedback.n", 200, 100)]
    assert noise["params"] == [] and noise["metrics"] == []  # 1e-9 apart: within the tolerance
    strict = compare(repo, tolerance=0.0)["experiments"][1]
    assert [r["label"] for r in strict["metrics"]] == ["feedback.accuracy"]


def test_the_command_prints_markdown_into_a_pipe_and_a_table_within_160_columns(repo):
    out = invoke(["exp", "show", "--root", repo])
    assert out.exit_code == 0, out.output
    lines = out.stdout.splitlines()
    assert lines[0] == "| experiment | baseline | created (UTC) | params changed | headline metrics changed |"
    assert lines[2].startswith("| fewer-queries | ")
    assert lines[2].endswith(" | feedback.max_queries: 200 → 100 | feedback.accuracy: 0.905 → 0.9<br>feedback.n: 200 → 100 |")
    assert lines[3].endswith(" | none | none |")
    wide = invoke(["exp", "show", "--root", repo, "--format", "table"], env={"COLUMNS": "400"})
    assert "fewer-queries" in wide.stdout and max(len(x) for x in wide.stdout.splitlines()) <= 160
    data = json.loads(invoke(["exp", "show", "--root", repo, "--format", "json"]).stdout)
    assert [e["name"] for e in data["experiments"]] == ["fewer-queries", "noise-only"]
    assert_one_line_error(invoke(["exp", "show", "--root", repo, "--format", "html"]), "unknown format 'html'")


def test_no_experiments_is_said(tmp_path):
    (tmp_path / "dvc.yaml").write_text(DVC_YAML)
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "t@example.org")
    git(tmp_path, "config", "user.name", "t")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "only")
    out = invoke(["exp", "show", "--root", tmp_path])
    assert out.exit_code == 0 and out.stdout.strip() == "No experiments (`regula exp run` makes one)."


@pytest.mark.parametrize("override, expected", [
    ("feedback.max_querys=100", "-S feedback.max_querys=100: params: unknown key 'feedback.max_querys'; known keys "
                                "under 'feedback': backend, max_queries, samples"),
    ("feedback.backend=rulez", "-S feedback.backend=rulez: params: feedback.backend: 'rulez' is not one of openai, rules"),
    ("+feedback.extra=1", "-S +feedback.extra=1: params: unknown key 'feedback.extra'"),
    ("feedback.max_queries=[1", "-S feedback.max_queries=[1: no viable alternative at input '[1'"),
    ("other.yaml:x=1", "-S other.yaml:...: the pipeline's params are in params.yaml only"),
])
def test_a_bad_override_stops_exp_run_before_dvc_with_one_line(override, expected):
    """In the project itself: nothing may change, params.yaml least of all."""
    before = (ROOT / "params.yaml").read_bytes()
    status = git(ROOT, "status", "--porcelain")
    regula = Path(sys.executable).parent / "regula"  # the console entry, as a user types it
    done = subprocess.run([regula, "exp", "run", "-S", override, "--temp"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {expected}"), lines
    assert (ROOT / "params.yaml").read_bytes() == before and git(ROOT, "status", "--porcelain") == status


def test_good_overrides_pass_the_check():
    from flows.exp import check_overrides
    check_overrides(ROOT, ["feedback.max_queries=100", "ltlcrit.actors=[random]"])
    check_overrides(ROOT, [])
