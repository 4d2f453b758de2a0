"""DiVE: ground truth from data.yaml, banks, the discoverers, the Verifier, the stage."""
import json

import pytest

from regula import demos as demos_mod, envs, episodes, params as params_mod, stages
from regula.dive import stage
from regula.dive.dynamics import Dynamic, ground_truth
from regula.dive.hallucinate import KINDS
from regula.errors import DataError
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer
from stage_configs import expert_config

RULES = envs.get("crafter").rules  # data.yaml: the ground truth the scores use


@pytest.fixture(scope="module")
def small_project(tmp_path_factory):
    root = tmp_path_factory.mktemp("dive")
    params = params_mod.validate({"demos": {"episodes": 3, "max_steps": 400, "max_skills": 60},
                                  "dive": {"explore_episodes": 2, "explore_max_skills": 40,
                                           "agent_episodes": 1, "agent_max_skills": 60}})
    demos_mod.generate(params, root / "data" / "demos", root / "metrics")
    return root, params


def test_stage_verified_beats_discovered_and_rejects_every_hallucination(small_project):
    root, params = small_project
    headline = stages.execute("dive", params, stages.Paths(root), stages.SerialWork(progress=lambda line: None))
    assert headline == json.loads((root / "metrics" / "dive.json").read_text())
    assert headline["verified_precision"] > headline["discovered_precision"]
    m = json.loads((root / "metrics" / "dive_detail.json").read_text())
    assert headline["verified_n"] == m["verified"]["n"]
    assert m["injected"]["n"] == sum(m["by_origin"][k]["candidates"] for k in KINDS) > 0
    steps = (root / "metrics" / "dive_steps.csv").read_text().splitlines()
    assert steps[0].startswith("step,discovered_n,discovered_precision") and len(steps) == 4
    rejections = [json.loads(line) for line in (root / "data" / "dive" / "rejections.jsonl").read_text().splitlines()]
    assert rejections and all(r["reason"] for r in rejections)
    assert sorted(m["agent"]) == sorted(params.dive.conditions)
    assert all(a["episodes"] == 1 and 0 <= a["score"] <= 100 for a in m["agent"].values())
    # the headline score is Crafter's pooled one; the per-episode mean is beside it, named
    dive = m["agent"]["dive"]
    assert (headline["agent_dive_score"], headline["agent_dive_score_per_episode"]) == (
        dive["score"], dive["score_per_episode"])
    assert dive["score_interval"][0] <= dive["score"] <= dive["score_interval"][1] and m["agent_bootstrap"] == 1000
    agents = (root / "metrics" / "dive_agents.csv").read_text().splitlines()
    assert agents[0] == "condition,achievement,unlocked,episodes,rate" and len(agents) == 1 + len(m["agent"]) * 22
    assert m["subgoals"][0] == "collect_wood"
    assert {r["origin"] for r in rejections} & set(KINDS)
    # Exploration and agent episodes are episode files; the explorer's random picks say so.
    explored = episodes.read_all(root / "data" / "dive" / "explore")
    assert [e["header"]["seed"] for e in explored] == [1000, 1001]
    assert {s["by"] for e in explored for s in e["steps"]} <= {"explorer", "random", "survival"}
    agents = sorted((root / "data" / "dive" / "agent").rglob("episode_*.jsonl"))
    assert sorted(p.parent.name for p in agents) == sorted(m["agent"])
    ep = episodes.read(root / "data" / "dive" / "agent" / "dive" / agents[0].name)
    assert ep["header"]["source"] == "dive:dive" and {s["by"] for s in ep["steps"]} <= {"dive", "survival"}
    # Both are kept when their inputs match: a rerun plays none.
    files = sorted((root / "data" / "dive").rglob("episode_*.jsonl"))
    before = {p: p.stat().st_mtime_ns for p in files}
    stage.exploration(params, root / "data" / "dive" / "explore")
    paths = stages.Paths(root, "dive")
    learned = stage.learn(params, paths, explored, log=lambda line: None)
    stage.play(params, paths, learned)
    assert before == {p: p.stat().st_mtime_ns for p in files}


def test_truncated_demonstration_names_file_and_line(small_project, tmp_path):
    root, params = small_project
    bad = tmp_path / "data" / "demos"
    bad.mkdir(parents=True)
    src = sorted((root / "data" / "demos").glob("episode_*.jsonl"))[0]
    lines = src.read_text().splitlines()
    (bad / src.name).write_text("\n".join(lines[:3]) + "\n" + lines[3][:40] + "\n")
    with pytest.raises(DataError, match=rf"{bad / src.name}:4: not valid JSON"):
        stages.execute("dive", params, stages.Paths(tmp_path), stages.SerialWork(progress=lambda line: None))


def test_evolver_chains_back_from_the_subgoal_and_masks_what_cannot_be_met():
    from regula import envs
    from regula.dive.agent import DiveAgent, Knowledge
    env = params_mod.validate({}).env.model_dump()
    world = envs.get("crafter").from_params(env, 0)
    assert world.memory.seen("tree") and not world.memory.seen("table")
    agent = DiveAgent(world, Knowledge.of(ground_truth()), ["make_wood_pickaxe"], True, 0, expert_config(goal="all"))
    assert agent.chain("make_wood_pickaxe") == ["collect_wood", "make_wood_pickaxe"]
    world.env.player.inventory["wood"] = 1
    assert agent.chain("make_wood_pickaxe") == ["collect_wood", "place_table", "make_wood_pickaxe"]
    assert not agent.unmasked("make_wood_pickaxe")  # no table on the map yet
    wrong = Knowledge.of(ground_truth() | {Dynamic("make_wood_pickaxe", "requires", "bone", 1)})
    hallucinating = DiveAgent(world, wrong, ["make_wood_pickaxe"], True, 0, expert_config(goal="all"))
    assert hallucinating.chain("make_wood_pickaxe") is None


def test_the_dive_agent_never_ends_the_episode_as_goal_reached():
    # The expert with goal `all` ends once nothing is left; DiVE explores on (length or death end it).
    from regula.agents import Agent
    from regula.dive.agent import DiveAgent, Knowledge
    crafter = envs.get("crafter")
    outcomes = {}
    for who in ("dive", "expert"):
        world = crafter.from_params(params_mod.validate({}).env.model_dump(), 0)
        world.unlocked = list(RULES.achievements)
        config = expert_config(goal="all", max_failures=10 ** 6)
        agent = (DiveAgent(world, Knowledge.of(ground_truth()), ["collect_wood"], True, 0, config) if who == "dive"
                 else crafter.Expert(world, config))
        assert isinstance(agent, Agent)
        agent.start(world)
        decision = agent.decide(world)
        step = world.run_skill("make_iron_pickaxe")  # fails: nothing to make it with
        assert not step.success
        outcomes[who] = (decision.skill or decision.end, agent.observe(world, decision, step), agent.all_done())
    assert outcomes["dive"] == ("explore", None, False)
    assert outcomes["expert"] == ("goal reached", "goal reached", True)


def test_the_explorer_wraps_the_expert_and_logs_its_random_skills():
    from regula.dive.explore import Explorer
    crafter = envs.get("crafter")
    world = crafter.from_params(params_mod.validate({}).env.model_dump(), 0)
    explorer = Explorer(world, expert_config(goal="all", max_steps=400, max_skills=60), 0.5, 0)
    survival, decide, calls = explorer.expert.survival.survival_skill, explorer.decide, {"survival": 0, "decide": 0}

    def counted(name, f):
        def call(*args):
            calls[name] += 1
            return f(*args)
        return call
    explorer.expert.survival.survival_skill = counted("survival", survival)
    explorer.decide = counted("decide", decide)
    notes: dict = {}
    crafter.play_episode(world, explorer, notes)
    assert calls["survival"] == calls["decide"] > 0  # the layer once per decision (it keeps state)
    by = [notes[t]["by"] for t in sorted(notes)]
    assert {"random", "explorer"} <= set(by) <= {"random", "explorer", "survival"}


def test_llm_evolver_keeps_the_shortest_strategy_the_dynamics_allow(tmp_path):
    from regula import envs
    from regula.dive.agent import DiveAgent, Knowledge, LLMEvolver
    world = envs.get("crafter").from_params(params_mod.validate({}).env.model_dump(), 0)
    answer = json.dumps({"strategies": [
        {"steps": ["fly_to_table", "make_wood_pickaxe"], "why": "not a skill"},
        {"steps": ["make_wood_pickaxe"], "why": "masked: no wood, no table"},
        {"steps": ["collect_wood", "collect_wood", "place_table", "make_wood_pickaxe"], "why": "long"},
        {"steps": ["collect_wood", "place_table", "make_wood_pickaxe"], "why": "short"}]})
    with StubLLMServer() as server:
        server.script = [answer, "no strategies today"]
        cfg = LLMConfig(base_url=server.base_url, model=server.model,
                        cache_dir=str(tmp_path / "c"), timeout=5.0, reasks=0)
        evolver = LLMEvolver(LLMClient(cfg, "dive", Accounting()))
        agent = DiveAgent(world, Knowledge.of(ground_truth()), ["make_wood_pickaxe"], True, 0,
                          expert_config(goal="all"), evolver)
        assert evolver.strategy(agent, "make_wood_pickaxe") == ["collect_wood", "place_table", "make_wood_pickaxe"]
        assert "make_wood_pickaxe requires 1 wood" in server.requests[0]["messages"][-1]["content"]
        world.env.player.inventory["wood"] = 1  # a new situation: a new question, answered with garbage
        assert evolver.strategy(agent, "make_wood_pickaxe") == agent.chain("make_wood_pickaxe")
        assert evolver.fallbacks == 1


def test_answer_schemas_carry_their_closed_sets():
    """What a schema-constrained endpoint may say: the evolver's skills (the discoverer's:
    tests/test_dive_learning.py)."""
    from regula.dive.agent import StrategiesAnswer
    steps = StrategiesAnswer.model_json_schema()["$defs"]["StrategyAnswer"]["properties"]["steps"]
    assert steps["items"]["enum"] == envs.get("crafter").skill_names()


def test_workers_write_every_output_as_one_process_does(small_project, tmp_path):
    import shutil

    root, params = small_project
    outputs = {}
    for workers in (1, 2):
        here = tmp_path / f"w{workers}"
        shutil.copytree(root / "data" / "demos", here / "data" / "demos")
        p = params_mod.validate(params_mod.laid_over(params.model_dump(), {"dive": {
            "agent_episodes": 2, "conditions": ["dive", "no_verifier", "random", "expert"], "workers": workers}}))
        stages.execute("dive", p, stages.Paths(here), stages.SerialWork(progress=lambda line: None))
        outputs[workers] = {f.relative_to(here).as_posix(): f.read_bytes()
                            for d in ("data/dive", "metrics") for f in sorted((here / d).rglob("*")) if f.is_file()}
    assert outputs[2] == outputs[1]
    assert sum("/agent/" in name for name in outputs[1]) == 8 and sum("/explore/" in name for name in outputs[1]) == 2
