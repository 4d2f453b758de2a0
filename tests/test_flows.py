"""The flows' Prefect wiring: run names, settings from prefect.toml (no flow is run here)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import prefect.runtime.flow_run as runtime_flow_run
import pytest

from regula.params import fingerprint

ROOT = Path(__file__).resolve().parent.parent
STAGES = ["demos", "minihack_demos", "minihack_shield", "minihack_dive", "minihack_cedar", "feedback", "laws", "membership", "automata_eval",
          "ltlcrit", "dive", "cedar_skills", "specs", "household", "e2cl", "feedback_llm", "membership_llm", "ltlcrit_llm", "dive_llm",
          "cedar_skills_llm", "e2cl_llm",
          "report"]  # the pipeline's order


def test_every_stage_has_a_flow():
    from regula import stages
    assert stages.names() == STAGES


@pytest.mark.parametrize("stage", STAGES)
def test_flow_run_name_is_the_stage_and_a_hash_of_its_params(monkeypatch, stage):
    import flows
    flow = flows.flow_for(stage)
    params = {"seed": 7, stage: {"episodes": 3}}
    # What Prefect hands the callable inside a run: the flow's parameters.
    monkeypatch.setitem(runtime_flow_run.FIELDS, "parameters", lambda: {"root": "/anywhere", "params": params})
    assert flow.name == stage
    assert flow.flow_run_name() == f"{stage}-{fingerprint(params)[:8]}"
    monkeypatch.setitem(runtime_flow_run.FIELDS, "parameters", lambda: {"root": "/elsewhere", "params": params})
    assert flow.flow_run_name() == f"{stage}-{fingerprint(params)[:8]}"  # paths do not name a run


def test_prefect_settings_come_from_prefect_toml_at_the_root(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
    code = ("import json, prefect.settings as s; c = s.get_current_settings(); print(json.dumps(["
            "str(c.home), c.logging.level, c.logging.log_prints, c.server.analytics_enabled, "
            "c.server.ephemeral.startup_timeout_seconds]))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True).stdout
    assert json.loads(out) == [".prefect", "WARNING", False, False, 180]


def test_headline_of_every_stage_is_its_metrics_file():
    """The artifact each flow publishes is its stage's metrics/<stage>.json, checked on the
    committed files (a stage that cannot run here still has its headline checked): flat, one
    number per metric, one markdown row each; the numbers are the ones in the stage's record."""
    import re

    import flows
    from regula import stages

    headlines = {s: json.loads(stages.metrics_path(ROOT / "metrics", s).read_text())
                 for s in ["demos", "feedback", "laws", "automata_eval", "ltlcrit", "dive"]}
    for stage, headline in headlines.items():
        assert headline and stages.check_headline(headline) == headline, stage
        assert re.fullmatch(r"[a-z0-9-]+", flows.artifact_key(stage)), stage
        table = flows.metrics_markdown(headline).splitlines()
        assert table[:2] == ["| metric | value |", "|---|---|"] and len(table) == 2 + len(headline)
    detail = {s: json.loads(stages.detail_path(ROOT / "metrics", s).read_text())
              for s in ["demos", "feedback", "laws", "ltlcrit", "dive"]}
    assert headlines["demos"]["success_rate"] == detail["demos"]["success_rate"]
    assert "laws" not in headlines["laws"] and detail["laws"]["laws"] == 27  # a count of data.yaml's: detail only
    assert headlines["ltlcrit"]["expert_success_rate"] == detail["ltlcrit"]["expert"]["success_rate"]
    for actor, a in detail["ltlcrit"]["actors"].items():
        assert headlines["ltlcrit"][f"{actor}_success_with_critic"] == a["with_critic"]["success_rate"]
    assert headlines["dive"]["verified_precision"] == detail["dive"]["verified"]["precision"]
    assert headlines["automata_eval"]["worst_recovered_regula_adaptive"] == 1.0
    assert flows.artifact_key("automata_eval") == "automata-eval-metrics"
    assert flows.metrics_markdown({"model": None, "a|b": 1}) == "| metric | value |\n|---|---|\n| model | – |\n| a\\|b | 1 |\n"
    with pytest.raises(TypeError, match="headline entry 'rates': {'a': 1} is not a number"):
        stages.check_headline({"n": 1, "rates": {"a": 1}})


def test_the_flow_publishes_what_the_stage_returns_and_writes(tmp_path, monkeypatch):
    """One notion of headline: `run`'s return value is metrics/<stage>.json and the artifact."""
    import flows
    import tasks
    from regula import params, stages

    published = {}
    monkeypatch.setattr(flows, "publish_metrics", lambda stage, headline: published.update({stage: headline}))
    monkeypatch.setattr(tasks, "PrefectWork", lambda: stages.SerialWork(progress=lambda line: None))
    p = params.validate({"automata_eval": {"sizes": [[4, 2]], "noises": [0.0], "targets": 1}})
    returned = flows.stage_flow("automata_eval", p, str(tmp_path))
    assert returned == published["automata_eval"] == json.loads((tmp_path / "metrics" / "automata_eval.json").read_text())
    assert returned == {"worst_recovered_regula_adaptive": 1.0, "worst_queries_x_regula_adaptive": 1.0,
                        "worst_rounds_x_regula_adaptive": 1.0, "worst_recovered_regula": 1.0}


def test_a_stage_runs_here_without_prefect(tmp_path):
    """`regula.stages.execute` is the stage without Prefect or DVC: automata_eval on one tiny cell."""
    from regula import params, stages
    p = params.validate({"automata_eval": {"sizes": [[4, 2]], "noises": [0.0], "targets": 1}})
    m = stages.execute("automata_eval", p, stages.Paths(tmp_path), stages.SerialWork(progress=lambda line: None))
    assert m["worst_recovered_regula"] == m["worst_recovered_regula_adaptive"] == 1.0
    assert m == json.loads((tmp_path / "metrics" / "automata_eval.json").read_text())


def test_a_stage_without_the_demonstrations_it_reads_stops_in_one_line(tmp_path):
    from regula import params, stages
    from regula.errors import DataError
    with pytest.raises(DataError, match=r"data/demos: no demonstrations; run the demos stage first \(dvc repro demos\)$"):
        stages.execute("laws", params.validate({}), stages.Paths(tmp_path), stages.SerialWork(progress=lambda line: None))


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (from Linux's /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == pid:
                found.append(int(stat.parent.name))
        except (OSError, IndexError, ValueError):
            continue  # gone meanwhile
    return found


def _running(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"  # Z: dead, not reaped
    except OSError:
        return False


def test_under_prefect_a_user_error_is_one_line_and_the_server_dies_with_serve(tmp_path):
    """`python -m flows.serve CMD`, CMD running `python -m flows ltlcrit` with an LLM actor in
    replay mode and an empty cache: the actor's unit, a Prefect task, fails with a ReplayMiss;
    stderr holds the stage's progress lines and that error's one line, none of Prefect's lines about the failed task run (a
    traceback among them). Then serve is killed with SIGKILL: its Prefect server dies with it.
    (One subprocess chain for both: each Prefect start-up costs ~10-20 s.)"""
    import signal
    import time

    from project_copy import make_project, project_env
    dst = make_project(tmp_path / "project",
                       {"ltlcrit": {"episodes": 1, "iterations": 1, "max_skills": 10, "actors": ["naive"],
                                    "demos_ablation": []},
                        "llm": {"mode": "replay"}})
    env = {**project_env(dst), "PREFECT_HOME": str(tmp_path / "prefect")}
    result = tmp_path / "stage.json"
    command = ("import json, os, subprocess, sys, time; "
               "p = subprocess.run([sys.executable, '-m', 'flows', 'ltlcrit'], capture_output=True, text=True); "
               f"open({str(result)!r}, 'w').write(json.dumps([p.returncode, p.stderr])); "
               "print(os.getpid(), flush=True); time.sleep(600)")
    serve = subprocess.Popen([sys.executable, "-m", "flows.serve", sys.executable, "-c", command], cwd=dst, env=env,
                             stdout=subprocess.PIPE, text=True)
    waiting = []
    try:
        waiting.append(int(serve.stdout.readline()))  # the stage has run, under the server
        [server] = [pid for pid in _children(serve.pid) if pid not in waiting]
        waiting.append(server)
        serve.kill()
        serve.wait()
        deadline = time.monotonic() + 10
        while _running(server) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not _running(server), "the Prefect server outlived flows.serve"
    finally:
        serve.kill()
        for pid in waiting:
            if _running(pid):
                os.kill(pid, signal.SIGKILL)
    code, stderr = json.loads(result.read_text())
    lines = stderr.splitlines()
    assert code == 2, stderr
    assert lines[-1].startswith("error: replay mode: no cached answer for stage 'ltlcrit', role 'actor', key "), stderr
    assert lines[:-1] and all(" | INFO    | prefect.task_runs.progress - ltlcrit: " in line for line in lines[:-1]), stderr


def test_unknown_stage_is_one_line():
    proc = subprocess.run([sys.executable, "-m", "flows", "demoss"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == [
        "error: unknown stage 'demoss'; valid stages: automata_eval, cedar_skills, cedar_skills_llm, demos, dive, "
        "dive_llm, e2cl, e2cl_llm, feedback, feedback_llm, household, laws, ltlcrit, ltlcrit_llm, membership, "
        "membership_llm, minihack_cedar, minihack_demos, minihack_dive, minihack_shield, report, specs"]
