"""Issue 3's promise end to end: a live stage asks once; a fresh clone replays with zero calls.
And no key on disk: the run is given a sentinel key in the right place (the variable
llm.api_key_env names) and in the wrong ones, and its endpoint echoes it back."""
import json
import sys
from pathlib import Path

import pytest

from project_copy import commit, make_project, project_env, run, set_params
from regula.llm.stub_server import StubLLMServer


@pytest.mark.slow
def test_live_once_then_replay_on_a_fresh_clone(tmp_path, prefect_api, tmp_path_factory):
    sentinel = "sk-pipeline-sentinel-0123456789"
    with StubLLMServer() as server:
        server.script = [f"Yes. (You sent the key {sentinel}.)"]  # an endpoint that echoes the key
        dst = make_project(tmp_path / "a", {
            "demos": {"episodes": 1, "max_steps": 200, "max_skills": 40},
            "feedback": {"backend": "openai", "max_queries": 12},
            "llm": {"base_url": server.base_url, "model": server.model, "retries": 1},
            "automata_eval": {"sizes": [[6, 2]], "noises": [0.0], "targets": 1},
            "ltlcrit": {"episodes": 1, "iterations": 1, "max_skills": 10, "actors": ["random"]},
            "dive": {"explore_episodes": 1, "explore_max_skills": 20, "agent_episodes": 1,
                     "agent_max_skills": 20, "conditions": ["dive"]}})
        env = {**project_env(dst, prefect_api), "OPENAI_API_KEY": sentinel}
        serve = [sys.executable, "-m", "flows.serve"]
        original = (dst / "params.yaml").read_text()
        for wrong in ({"api_key_env": sentinel}, {"model": sentinel},
                      {"base_url": server.base_url.replace("http://", f"http://me:{sentinel}@")}):
            set_params(dst, {"llm": wrong})
            proc = run([sys.executable, "-m", "flows", "feedback"], dst, env, check=False)
            assert proc.returncode == 2 and len(proc.stderr.splitlines()) == 1, proc.stderr
            assert proc.stderr.startswith("error: params: llm.") and sentinel not in proc.stderr + proc.stdout
        (dst / "params.yaml").write_text(original)
        # Only the LLM stage and what it reads: the whole pipeline is tests/test_pipeline.py's.
        run(serve + ["dvc", "repro", "feedback"], dst, env)
        first = server.calls
        llm = json.loads((dst / "metrics" / "feedback_detail.json").read_text())["llm"]
        accounting = llm["feedback"]["feedback"]  # the distinct questions, and what they cost when asked
        assert first > 0 and accounting["questions"] == accounting["calls"] == first

        run(serve + ["dvc", "repro", "-f", "feedback"], dst, env)
        assert server.calls == first  # the second live run answers from the cache
        assert json.loads((dst / "metrics" / "feedback_detail.json").read_text())["llm"] == llm  # hits: the same record
        predictions = (dst / "data" / "feedback" / "predictions.jsonl").read_text()
        assert predictions.count("\n") == 12

        run(["dvc", "remote", "add", "-d", "team", str(tmp_path / "remote")], dst, env)
        run(["dvc", "push"], dst, env)
        commit(dst, env, "live run")

        clone = tmp_path / "b"
        run(["git", "clone", "-q", str(dst), str(clone)], tmp_path, env)
        env_b = project_env(clone, prefect_api)
        run(["dvc", "pull", "demos", "feedback"], clone, env_b)
        assert len(list((clone / "data" / "cache" / "llm" / "feedback").rglob("*.json"))) == first
        # Replay, and point at a port where nothing listens (any call would fail the stage), under
        # the name of the endpoint that answered: it is part of each answer's key.
        set_params(clone, {"llm": {"mode": "replay", "base_url": "http://127.0.0.1:9/v1",
                                   "endpoint_id": server.base_url.split("/")[2]}})
        out = run(serve + ["dvc", "repro", "feedback"], clone, env_b)
        assert "Running stage 'feedback'" in out.stdout
        assert server.calls == first
        assert (clone / "data" / "feedback" / "predictions.jsonl").read_text() == predictions
        assert json.loads((clone / "metrics" / "feedback_detail.json").read_text())["llm"] == llm
    # Nowhere on disk: the copies (dvc.lock, .prefect, data, metrics, the cache, the DVC remote)
    # and the tests' Prefect server's home (its database) are all under the session's temp root.
    leaks = [p for p in Path(tmp_path_factory.getbasetemp()).rglob("*")
             if p.is_file() and sentinel.encode() in p.read_bytes()]
    assert leaks == []
