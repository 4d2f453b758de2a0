"""End to end: `dvc repro` in a temporary copy of the project, a no-op rerun, an experiment."""
import json
import sys

import pytest

from project_copy import commit, project_env, make_project, run
from regula.llm.stub_answers import recognise
from regula.llm.stub_server import StubLLMServer


@pytest.fixture(scope="module")
def stub():
    """The `_llm` twins ask an LLM: here the stub, over HTTP from dvc's stage processes."""
    with StubLLMServer() as server:
        yield server


@pytest.fixture(scope="module")
def project(tmp_path_factory, stub):
    dst = make_project(tmp_path_factory.mktemp("project"),
                       {"llm": {"base_url": stub.base_url, "model": stub.model, "retries": 0},
                        "llm_runs": {"feedback": {"backend": "openai", "max_queries": 5},
                                     "membership": {"backend": "openai", "words": 2},
                                     "ltlcrit": {"actors": ["naive", "saycan", "inner_monologue"], "critic": "openai",
                                                 "episodes": 1, "iterations": 1, "max_skills": 6},
                                     "dive": {"discoverer": "openai", "evolver": "openai", "explore_episodes": 1,
                                              "explore_max_skills": 30, "steps": 1, "conditions": ["dive"],
                                              "agent_episodes": 1, "agent_max_skills": 10},
                                     "cedar": {"teacher": "openai", "skills": ["collect_wood"], "explore_worlds": 2,
                                               "rollouts": 2, "max_skills": 20, "episodes": 2, "simulations": 0,
                                               "max_queries": 50, "max_rounds": 5, "tasks": {"trials": 0}},
                                     # the twin's own budget trains nothing; here it also explores, its corrector on the stub
                                     "e2cl": {"seeds": [0], "corrector": "openai", "prompting_programs": 1, "sizes": []}},
                        "feedback": {"max_queries": 5},  # the stand-in's, on the twin's steps
                        "demos": {"episodes": 2, "max_steps": 300, "max_skills": 60},
                        # the study's goal a skill the small curriculum learns, a day on one world
                        "specs": {"studies": [{"name": "wood", "goal": "collect_wood", "spec": "sleep_at_night",
                                               "trials": 1, "days": 1}]},
                        "minihack": {"shield": {"episodes": 2, "max_skills": 20},
                                     "dive": {"conditions": ["dive", "demo_replay"], "seeds": {"start": 110, "count": 2},
                                              "explore": {"start": 1, "count": 3}},
                                     "cedar": {"tasks": ["lava_cross"], "worlds": {"start": 1, "count": 2},
                                               "max_rounds": 5, "max_queries": 300}},
                        "automata_eval": {"sizes": [[8, 3]], "noises": [0.0, 0.05], "targets": 1},
                        "ltlcrit": {"episodes": 2, "iterations": 1, "max_skills": 20, "actors": ["random"]},
                        "dive": {"explore_episodes": 1, "explore_max_skills": 30, "agent_episodes": 1,
                                 "agent_max_skills": 40, "conditions": ["dive", "no_dynamics"]},
                        "cedar": {"skills": ["collect_wood"], "explore_worlds": 4, "rollouts": 2, "max_skills": 20,
                                  "episodes": 2, "mutants": 2, "simulations": 4,
                                  "tasks": {"tasks": ["collect_wood"], "trials": 1}},
                        "e2cl": {"seeds": [0], "epochs": 1, "pretune_samples": 20, "pretune_epochs": 1, "ranker_epochs": 2,
                                 "train_programs": 2, "test_programs": 1, "max_steps": 2, "correction_cases": 2,
                                 "sizes": []}})
    return dst, project_env(dst)


@pytest.mark.slow
def test_repro_noop_and_experiment(project, prefect_api, stub):
    dst, env = project
    run([sys.executable, "-m", "flows.serve", "dvc", "repro"], dst, env)
    asked = stub.calls
    files = sorted(p.name for p in (dst / "data" / "demos").iterdir())
    assert files == ["episode_00000.jsonl", "episode_00001.jsonl"]
    metrics = json.loads((dst / "metrics" / "demos_detail.json").read_text())
    assert metrics["episodes"] == 2
    report = (dst / "reports" / "report.md").read_text()
    assert "## Demonstrations (Crafter, scripted expert)" in report
    assert "| make_wood_pickaxe |" in report
    assert (dst / "reports" / "achievements.png").stat().st_size > 1000
    assert "## MiniHack demonstrations (DiVE §4.2, issue 38)" in report
    assert (dst / "data" / "minihack" / "demos" / "quest" / "episode_00000.jsonl").exists()
    assert "## The LTLCrit shield on MiniHack (issue 38)" in report
    assert "| wand_of_death | expert, laws (audit) | 2/2 (" in report
    assert len((dst / "data" / "minihack" / "shield" / "episodes.csv").read_text().splitlines()) == 1 + 2 * 3 * 2
    assert "## DiVE on MiniHack (seed 004, Tables 2 and 4; issue 38)" in report
    assert len((dst / "data" / "minihack" / "dive" / "episodes.csv").read_text().splitlines()) == 1 + 4 * 2 * 2
    assert "## CEDAR on MiniHack: one skill DFA per task (issue 38)" in report
    assert len((dst / "data" / "minihack" / "cedar" / "episodes.csv").read_text().splitlines()) == 1 + 1 * 2 * 2
    assert "### Specification studies (CEDAR §4.1, Figs. 4-6; Table 1)" in report
    assert (dst / "reports" / "specs_studies.png").stat().st_size > 1000
    assert "## Learning DFAs under a noisy teacher" in report and "| 8 | 3 | 0.05 | persistent | exact | regula |" in report
    assert "## LTLCrit on Crafter" in report and ("| InnerMonologue + LTLCrit (Gokhale et al., LTLCrit (seed 003), Table 1; Minecraft, 5 runs "
                                                   "each) | 9.4 (5/5)") in report
    ltl = json.loads((dst / "metrics" / "ltlcrit_detail.json").read_text())
    assert list(ltl["actors"]) == ["random"] and ltl["episodes"] == 2
    assert (dst / "data" / "laws" / "ltlcrit" / "random" / "iteration_0.yaml").exists()
    assert (dst / "reports" / "ltlcrit.png").stat().st_size > 1000
    assert "## DiVE: world dynamics discovered, verified, scored against data.yaml" in report
    dive = json.loads((dst / "metrics" / "dive_detail.json").read_text())
    assert dive["steps"] == 2 and dive["injected"]["n"] == sum(v["candidates"] for k, v in dive["by_origin"].items()
                                                               if k != "discovered")
    assert set(dive["agent"]) == {"dive", "no_dynamics"} and "| DiVE |" in report
    assert (dst / "data" / "dive" / "explore" / "episode_01000.jsonl").exists()
    assert "## Laws: Crafter's preconditions as LTLf hard laws" in report
    assert "## CEDAR: Crafter skills learned as DFAs" in report and "| collect_wood | chop a tree for wood |" in report
    assert (dst / "data" / "cedar_skills" / "skills" / "collect_wood.svg").read_text().startswith("<?xml")
    assert "## Every LLM role against a real model" in report and f"{stub.model} at 127.0.0.1:" in report
    twin = json.loads((dst / "metrics" / "ltlcrit_llm_detail.json").read_text())
    assert twin["critic"] == "openai" and twin["episodes"] == 1 and "naive" in twin["actors"]
    assert asked > 0 and (dst / "data" / "cache" / "llm" / "dive_llm").is_dir()
    assert "| collect_wood | cedar_skills_llm | LLM: " in report
    assert list((dst / "data" / "cache" / "llm" / "cedar_skills_llm").rglob("*.json"))
    assert "## E2CL: exploration, feedback and self-correction on VirtualHome (seed 002)" in report
    assert f"| prompting: {stub.model} at 127.0.0.1:" in report  # the twin e2cl_llm's row in Table 1
    assert len(list((dst / "data" / "e2cl" / "seed0" / "models").iterdir())) == 5  # bc, e2cl, nat, no_dc, no_df
    assert (dst / "reports" / "report.html").read_text().startswith("<!DOCTYPE html>")
    every_llm_role_asked_the_stub(dst, stub)

    again = run(["dvc", "repro"], dst, env)
    assert "Data and pipelines are up to date." in again.stdout
    assert stub.calls == asked

    commit(dst, env, "repro")
    # An experiment on the first stage only (the stages after it are the first run's business).
    # (flows.serve started its own server above; this one talks to the tests' shared server)
    run(["dvc", "exp", "run", "-S", "demos.episodes=3", "demos"], dst, project_env(dst, prefect_api))
    metrics = json.loads((dst / "metrics" / "demos_detail.json").read_text())
    assert metrics["episodes"] == 3
    assert len(list((dst / "data" / "demos").glob("*.jsonl"))) == 3


def every_llm_role_asked_the_stub(dst, stub):
    """Every LLM-backed role (the `_llm` twins, on small `llm_runs` budgets) asked the stub over HTTP,
    from the stage processes dvc ran, and only the twins asked."""
    cache = dst / "data" / "cache" / "llm"
    entries = {d.name: [json.loads(f.read_text()) for f in sorted(d.rglob("*.json"))] for d in sorted(cache.iterdir())}
    assert sorted(name for name, e in entries.items() if e) == sorted(
        ["feedback_llm", "membership_llm", "ltlcrit_llm", "dive_llm", "cedar_skills_llm", "e2cl_llm"])
    assert sum(map(len, entries.values())) == stub.calls
    assert {r["model"] for r in stub.requests} == {e["request"]["model"] for es in entries.values() for e in es} == {
        stub.model}
    assert len(stub.probes) == 5  # once per stage process asking for a schema (E2CL's roles answer text)
    asked = {recognise(r["messages"])[0] for r in stub.requests}
    assert asked == {"feedback", "membership", "membership_formula", "ltlcrit_actor", "ltlcrit_saycan", "ltlcrit_monologue",
                     "ltlcrit_critic", "dive_discover", "dive_evolve", "e2cl_corrector", "e2cl_planner"}
    accounting = {}
    for stage in ("feedback_llm", "membership_llm", "ltlcrit_llm", "dive_llm", "cedar_skills_llm", "e2cl_llm"):
        accounting.update({(stage, role): row for role, row in
                           json.loads((dst / "metrics" / f"{stage}_detail.json").read_text())["llm"][stage].items()})
    assert sorted(accounting) == [("cedar_skills_llm", "teacher"), ("cedar_skills_llm", "teacher_formula"),
                                  ("dive_llm", "discoverer"), ("dive_llm", "evolver"),
                                  ("e2cl_llm", "corrector"), ("e2cl_llm", "planner"), ("feedback_llm", "feedback"),
                                  ("ltlcrit_llm", "actor"), ("ltlcrit_llm", "critic"), ("membership_llm", "teacher"),
                                  ("membership_llm", "teacher_formula")]
    assert all(row["calls"] > 0 and row["reasks"] == row["unusable"] == 0 for row in accounting.values())
    # the stub takes json_schema; E2CL's roles answer a script line, as text
    assert {k: row["structured"] for k, row in accounting.items() if row["structured"] != "json_schema"} == {
        ("e2cl_llm", "corrector"): "text", ("e2cl_llm", "planner"): "text"}
    # The stub's feedback answers are the rules backend's, prediction for prediction.
    assert ((dst / "data" / "feedback_llm" / "predictions.jsonl").read_text()
            == (dst / "data" / "feedback" / "predictions.jsonl").read_text())
    # CEDAR's twin: its teacher asked the stub membership questions, and (cedar.compare_formula) for
    # each skill's formula, through caches of its own; its headline named after it
    assert {recognise(e["request"]["messages"])[0] for e in entries["cedar_skills_llm"]} == {
        "membership", "membership_formula"}
    cedar = json.loads((dst / "metrics" / "cedar_skills_llm_detail.json").read_text())
    assert [(r["skill"], r["teacher_llm"]["questions"]) for r in cedar["skills"]] == [
        ("collect_wood", accounting[("cedar_skills_llm", "teacher")]["questions"])]
    assert cedar["tasks"] == [] and cedar["baseline"] == []  # Table 2 is the stand-in's
    assert (dst / "data" / "cache" / "cedar_skills_llm" / "mq" / "collect_wood.json").exists()
    assert (dst / "data" / "cedar_skills_llm" / "skills" / "collect_wood.json").exists()
    assert all(key.startswith("cedar_skills_llm_")
               for key in json.loads((dst / "metrics" / "cedar_skills_llm.json").read_text()))
    report = (dst / "reports" / "report.md").read_text()
    assert "### The teacher on a real model (`cedar_skills_llm`)" in report


def test_bad_params_key_fails_in_one_line(project):
    dst, env = project
    bad = dst / "params.yaml"
    original = bad.read_text()
    try:
        bad.write_text(original.replace("episodes:", "epsiodes:"))
        proc = run([sys.executable, "-m", "flows", "demos"], dst, env, check=False)
    finally:
        bad.write_text(original)
    assert proc.returncode == 2
    assert proc.stderr.strip().splitlines() == [
        "error: params: unknown key 'demos.epsiodes'; known keys under 'demos': "
        "episodes, goal, max_skills, max_steps, workers"]
