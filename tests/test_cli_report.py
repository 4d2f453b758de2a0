"""The CLI and the report, as a user meets them."""
import json

from cli_run import assert_one_line_error, invoke, snapshot
from regula import demos, episodes
from stage_configs import changed, params_text


def test_plan_and_unknown_goal():
    out = invoke(["plan", "make_wood_pickaxe"])
    assert out.exit_code == 0
    assert out.stdout.split("\n")[-2].strip() == f"{out.stdout.count(chr(10))}. make_wood_pickaxe"
    assert_one_line_error(invoke(["plan", "make_wod_pickaxe"]),
                          "error: unknown achievement 'make_wod_pickaxe'; valid achievements:")


def test_command_line_mistakes_are_one_line():
    assert_one_line_error(invoke(["plna"]), "No such command 'plna'")
    assert_one_line_error(invoke(["demos", "--episodes", "many"]), "Invalid value for '--episodes'", "valid integer")
    assert_one_line_error(invoke(["plan"]), "Missing argument 'goal'")


def test_demos_then_report(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(params_text({"demos": {"episodes": 2, "max_steps": 300, "max_skills": 60}}))
    out = invoke(["demos"])
    assert out.exit_code == 0, out.output
    assert "2 episodes in data/demos" in out.stdout
    metrics = json.loads((tmp_path / "metrics" / "demos_detail.json").read_text())
    assert metrics["episodes"] == 2
    rates = (tmp_path / "metrics" / "demos_achievements.csv").read_text().splitlines()
    assert rates[0] == "achievement,rate" and any(r.startswith("collect_wood,") for r in rates)
    rep = invoke(["report"])
    assert rep.exit_code == 0, rep.output
    text = (tmp_path / "reports" / "report.md").read_text()
    assert "| seed | success | end |" in text
    assert "collect_diamond | 18 |" in text  # reference plan table
    for png in ("achievements.png", "progress.png"):
        assert (tmp_path / "reports" / png).read_bytes()[:4] == b"\x89PNG"
    # Again with the same params: what it would write is there already, so it runs.
    before = snapshot(tmp_path / "data")
    assert invoke(["demos", "--resume"]).exit_code == 0
    assert snapshot(tmp_path / "data") == before
    # Fewer episodes: refused without --force (tests/test_bad_inputs_cli.py), done with it.
    out = invoke(["demos", "--episodes", "1", "--resume", "--force"])
    assert out.exit_code == 0, out.output
    assert sorted(p.name for p in (tmp_path / "data" / "demos").iterdir()) == ["episode_00000.jsonl"]


def test_demos_bad_goal_and_bad_params(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "params.yaml").write_text(params_text())
    out = invoke(["demos", "--goal", "diamonds"])
    assert out.exit_code == 2 and "error: params: demos.goal: 'diamonds' is not one of all, collect_coal" in out.output
    (tmp_path / "params.yaml").write_text("demos: {episods: 2}\n")
    out = invoke(["demos"])
    assert out.exit_code == 2 and "unknown key 'demos.episods'" in out.output
    assert not (tmp_path / "data").exists()


def test_report_without_demos_says_what_to_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = invoke(["report"])
    assert out.exit_code == 2
    assert "run `regula demos` or `dvc repro` first" in out.output


def test_play_records_a_demonstration(tmp_path):
    rec = tmp_path / "me.jsonl"
    tracked = tmp_path / "episode_00001.jsonl"  # a demonstration of seed 1 already there
    tracked.write_text("the demos stage's\n")
    out = invoke(["play", "--seed", "1", "--record", str(rec)],
                 input="a\ncollect_wood\nfly\nq\n")
    assert out.exit_code == 0, out.output
    assert tracked.read_text() == "the demos stage's\n"
    assert "collect_wood: done" in out.stdout
    assert "unknown command 'fly'" in out.stdout
    episode = episodes.read(rec)
    assert [s["skill"] for s in episode["steps"]] == ["move_left", "collect_wood"]
    assert episode["header"]["source"] == "human" and {s["by"] for s in episode["steps"]} == {"human"}
    assert episode["summary"]["achievements"] == ["collect_wood"]


def test_play_on_a_terminal_acts_on_each_key_without_enter(tmp_path):
    """With a terminal on stdin (a pty here) a key acts when pressed, no Enter; `:` starts a
    line with a skill name. The session is recorded as in line mode."""
    import os
    import pty
    import select
    import subprocess
    import sys
    import time

    rec = tmp_path / "me.jsonl"
    terminal, stdin = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from regula.cli import main; sys.exit(main(sys.argv[1:]))",
                             "play", "--seed", "1", "--record", str(rec)],
                            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path)
    os.close(stdin)
    shown = b""

    def until(marker: bytes, count: int, timeout: float = 30) -> None:
        nonlocal shown
        deadline = time.monotonic() + timeout
        while shown.count(marker) < count:
            ready, _, _ = select.select([proc.stdout], [], [], max(0.0, deadline - time.monotonic()))
            assert ready, f"waited {timeout} s for {marker!r} #{count}; the screen ends: {shown[-300:]!r}"
            shown += os.read(proc.stdout.fileno(), 65536)

    try:
        until(b"\n> ", 1, timeout=120)  # the first screen, after the imports
        os.write(terminal, b"a")  # no Enter
        until(b"\n> ", 2)
        os.write(terminal, b":")
        until(b"\n> :", 1)
        os.write(terminal, b"collect_wood\n")
        until(b"collect_wood: done", 1)
        os.write(terminal, b"q")
        assert proc.wait(timeout=30) == 0, proc.stderr.read()
    finally:
        proc.kill()
        os.close(terminal)
    shown += proc.stdout.read()
    assert b"recorded 2 steps to" in shown
    assert [s["skill"] for s in episodes.read(rec)["steps"]] == ["move_left", "collect_wood"]


def test_info_lists_names():
    out = invoke(["info"])
    assert "collect_wood" in out.stdout and "has_wood_pickaxe" in out.stdout and "wake_up" in out.stdout


def test_cache_commands(tmp_path):
    from regula.llm import QueryCache, cache_key
    a = QueryCache(tmp_path / "a" / "feedback")
    b = QueryCache(tmp_path / "b" / "feedback")

    def put(cache, model, question, answer, role):
        request = {"model": model, "endpoint": "e", "messages": [{"role": "user", "content": question}],
                   "params": {}, "sample": 0}
        key = cache_key(model, "e", request["messages"], {}, 0)
        cache.put(key, {"request": request, "response": {"content": answer}, "role": role, "stage": "feedback"})
        return key
    first = put(a, "m1", "q1", "yes", "teacher")
    put(a, "m2", "q2", "no", "critic")
    out = invoke(["cache", "stats", str(tmp_path / "a")])
    stats = json.loads(out.stdout)["feedback"]
    assert stats["entries"] == 2 and stats["models"] == {"m1": 1, "m2": 1} and stats["roles"] == {"critic": 1, "teacher": 1}
    assert stats["endpoints"] == {"e": 2} and stats["ledger"] == {}
    out = invoke(["cache", "merge", str(tmp_path / "a"), str(tmp_path / "b")])
    assert json.loads(out.stdout) == {"already_there": 0, "conflicts": 0, "copied": 2}
    assert len(b) == 2
    put(a, "m3", "q3", "yes", "teacher")
    put(b, "m3", "q3", "no", "teacher")
    out = invoke(["cache", "merge", str(tmp_path / "a"), str(tmp_path / "b")])
    conflict, totals = out.stdout.splitlines()
    assert conflict.startswith("conflict feedback/") and conflict.endswith(": kept 'no', dropped 'yes'")
    assert json.loads(totals) == {"already_there": 2, "conflicts": 1, "copied": 0}
    b.path(first).write_text("{broken")
    out = invoke(["cache", "verify", str(tmp_path / "b")])
    assert out.exit_code == 1
    assert f"corrupt LLM cache entry {b.path(first)}" in out.stdout and "3 entries, 1 corrupt" in out.stdout


def test_laws_check_prints_the_first_violation(tmp_path):
    laws = tmp_path / "pre.yaml"
    out = invoke(["laws", "crafter", str(laws)])
    assert out.exit_code == 0 and "27 laws" in out.stdout
    trace = tmp_path / "t.json"
    trace.write_text('[["has_wood"], ["tree_on_map", "collect_wood"], ["stone_on_map", "collect_stone"]]')
    out = invoke(["laws", "check", str(laws), "--trace", str(trace), "--backend", "native"])
    assert out.exit_code == 1
    assert out.stdout.splitlines()[0] == ("step 3: violated G(!has_wood_pickaxe -> !collect_stone) [hard, hand]: "
                                          "collect_stone needs 1 wood_pickaxe (Crafter's data.yaml)")
    trace.write_text('[["has_wood"], ["collect_wood"]]')
    out = invoke(["laws", "check", str(laws), "--trace", str(trace)])
    assert out.exit_code == 1 and out.stdout.startswith("step 2: violated G(!tree_on_map -> !collect_wood)")
    trace.write_text('[["has_wood"], ["tree_on_map", "collect_wood"]]')
    out = invoke(["laws", "check", str(laws), "--trace", str(trace)])
    assert out.exit_code == 0 and out.stdout.strip() == "no law violated in 2 steps (27 laws)"
    trace.write_text('{"not": "a list"}')
    out = invoke(["laws", "check", str(laws), "--trace", str(trace)])
    assert out.exit_code == 2 and "a trace is a JSON list of lists of atoms" in out.output
    missing = tmp_path / "episode_00009.jsonl"
    out = invoke(["laws", "check", str(laws), "--trace", str(missing)])
    assert out.exit_code == 2 and out.output.strip() == f"error: trace file {missing} not found"


def test_laws_dot_and_bad_backend(tmp_path):
    laws = tmp_path / "l.yaml"
    laws.write_text("- {formula: 'G(!has_wood_pickaxe -> !collect_stone)'}\n")
    out = invoke(["laws", "dot", str(laws), "--out", str(tmp_path / "dot")])
    assert out.exit_code == 0, out.output
    assert (tmp_path / "dot" / "law_1.dot").read_text().startswith("digraph law {")
    assert (tmp_path / "dot" / "law_1.svg").read_text().startswith("<?xml")
    out = invoke(["laws", "dot", str(laws), "--backend", "nusmv"])
    assert out.exit_code == 2 and "unknown logic backend 'nusmv'; valid logic backends: auto, native, spot" in out.output


def test_ltlcrit_and_dive_commands(tmp_path, small_params):
    import yaml
    small_params = changed(small_params, {
        "demos": {"episodes": 2}, "ltlcrit": {"episodes": 1, "iterations": 1, "max_skills": 15},
        "dive": {"explore_episodes": 1, "explore_max_skills": 20, "agent_episodes": 1, "agent_max_skills": 20,
                 "conditions": ["dive"]}})
    params = tmp_path / "params.yaml"
    params.write_text(yaml.safe_dump(small_params.model_dump()))
    demos.generate(small_params, tmp_path / "data" / "demos", tmp_path / "metrics")
    out = invoke(["ltlcrit", "--actor", "random", "--params", str(params), "--root", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("random: success ") and "critic rounds" in out.stdout
    assert json.loads((tmp_path / "metrics" / "ltlcrit_detail.json").read_text())["episodes"] == 1
    assert set(json.loads((tmp_path / "metrics" / "ltlcrit.json").read_text())) == {
        "expert_success_rate", "random_success_without_critic", "random_success_with_critic",
        "random_actor_share", "random_task_actions_over_optimum", "greedy_demos_success_with_critic"}
    out = invoke(["ltlcrit", "--actor", "sayno", "--params", str(params), "--root", str(tmp_path)])
    assert out.exit_code == 2 and ("error: params: ltlcrit.actors[0]: 'sayno' is not one of greedy, greedy_goal, "
                                   "inner_monologue, naive, random, saycan") in out.output
    out = invoke(["dive", "--params", str(params), "--root", str(tmp_path)])
    assert out.exit_code == 0, out.output
    assert out.stdout.startswith("discovered ") and "against data.yaml" in out.stdout
    out = invoke(["dive", "--discoverer", "oracle", "--params", str(params), "--root", str(tmp_path)])
    assert out.exit_code == 2 and "error: params: dive.discoverer: 'oracle' is not one of openai, statistical" in out.output


def test_bench_expert_counts_successes_and_ends_with_and_without_the_shelter():
    import json
    walled = json.loads(invoke(["bench", "expert", "--episodes", "2", "--first-seed", "6"]).output)
    assert walled["successes"] == 2 and walled["ends"] == {"goal reached": 2}
    bare = json.loads(invoke(["bench", "expert", "--episodes", "2", "--first-seed", "6",
                                          "--no-shelter"]).output)
    assert sum(bare["ends"].values()) == 2 and bare["successes"] == round(bare["success"] * 2)
    bad = invoke(["bench", "expert", "--goal", "diamonds"])
    assert bad.exit_code == 2 and "unknown goal 'diamonds'" in bad.output


def test_bench_survival_counts_the_living_the_dead_and_the_homes():
    import json
    out = invoke(["bench", "survival", "--episodes", "3", "--first-seed", "100", "--max-steps", "400",
                  "--home", "--retire"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["episodes"] == 3 and got["seeds"] == "100-102" and sum(got["ends"].values()) == 3
    assert got["alive_at_budget"] == got["ends"].get("length", 0) + got["ends"].get("budget", 0)
    assert 0 <= got["alive_at_budget_ci95"][0] <= got["alive_at_budget"] / 3 <= got["alive_at_budget_ci95"][1]
    assert got["pooled_score_ci95"][0] <= got["pooled_score"] <= got["pooled_score_ci95"][1]
    assert got["homes_built"] <= sum(got["home_tries"].values())
    bad = invoke(["bench", "survival", "--retire"])
    assert bad.exit_code == 2 and "--retire needs --home" in bad.output
    both = invoke(["bench", "survival", "--commute", "--retire", "--home"])
    assert both.exit_code == 2 and "pick one" in both.output
    commute = json.loads(invoke(["bench", "survival", "--episodes", "1", "--first-seed", "112", "--max-steps", "400",
                                 "--commute"]).output)
    assert "homes_built" in commute and sum(commute["ends"].values()) == 1  # --commute builds homes


def test_bench_survival_counts_the_goal_reached_and_when():
    import json
    out = invoke(["bench", "survival", "--episodes", "2", "--first-seed", "6", "--max-steps", "3000",
                  "--goal", "collect_diamond", "--max-skills", "400"])
    assert out.exit_code == 0, out.output
    got = json.loads(out.output)
    assert got["goal_reached"] == got["ends"]["goal"] == 2  # seeds 6 and 7: the expert's diamonds (test_expert)
    assert got["goal_reached_ci95"][0] < 1.0 == got["goal_reached_ci95"][1]
    assert 0 < got["goal_median_step"] <= 3000
    whole = json.loads(invoke(["bench", "survival", "--episodes", "1", "--max-steps", "50"]).output)
    assert "goal_reached" not in whole  # goal `all`: its bars are alive and the pooled score
