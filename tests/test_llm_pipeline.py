"""Issue 3's promise end to end: a live stage asks once; a fresh clone replays with zero calls."""
import json
import sys

import pytest

from project_copy import commit, make_project, project_env, run, set_params
from regula.llm.stub_server import StubLLMServer


@pytest.mark.slow
def test_live_once_then_replay_on_a_fresh_clone(tmp_path, prefect_api):
    with StubLLMServer() as server:
        dst = make_project(tmp_path / "a", {
            "demos": {"episodes": 1, "max_steps": 200, "max_skills": 40},
            "feedback": {"backend": "openai", "max_queries": 12},
            "llm": {"base_url": server.base_url, "model": server.model, "retries": 1},
            "automata_eval": {"states": [6], "letters": [2], "noises": [0.0], "targets": 1},
            "ltlcrit": {"episodes": 1, "iterations": 1, "max_skills": 10, "actors": ["random"]},
            "dive": {"explore_episodes": 1, "explore_max_skills": 20, "agent_episodes": 1,
                     "agent_max_skills": 20, "conditions": ["dive"]}})
        env = project_env(dst, prefect_api)
        serve = [sys.executable, "-m", "flows.serve"]
        # Only the LLM stage and what it reads: the whole pipeline is tests/test_pipeline.py's.
        run(serve + ["dvc", "repro", "feedback"], dst, env)
        first = server.calls
        accounting = json.loads((dst / "metrics" / "feedback_detail.json").read_text())["llm"]["feedback"]["feedback"]
        assert first > 0 and accounting["calls"] == first and accounting["cache_hits"] == 12 - first

        run(serve + ["dvc", "repro", "-f", "feedback"], dst, env)
        assert server.calls == first  # the second live run answers from the cache
        accounting = json.loads((dst / "metrics" / "feedback_detail.json").read_text())["llm"]["feedback"]["feedback"]
        assert accounting["calls"] == 0 and accounting["cache_hits"] == 12
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
        accounting = json.loads((clone / "metrics" / "feedback_detail.json").read_text())["llm"]["feedback"]["feedback"]
        assert accounting["calls"] == 0 and accounting["queries"] == 12
