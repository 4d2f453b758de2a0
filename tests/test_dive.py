"""DiVE: ground truth from data.yaml, banks, the discoverers, the Verifier, the stage."""
import json
import random

import pytest

from regula import demos as demos_mod, envs, episodes, params as params_mod, stages
from regula.dive import stage
from regula.dive.banks import Banks, Transition, build, element_of, transitions
from regula.dive.discover import KINDS, NOT_IN_CRAFTER, Candidate, StatisticalDiscoverer, inject
from regula.dive.dynamics import Dynamic, ground_truth, score
from regula.dive.llm_discover import LLMDiscoverer
from regula.dive.verify import Verifier
from regula.errors import DataError
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer

RULES = envs.get("crafter").rules  # data.yaml: the ground truth the scores use


def test_ground_truth_is_data_yaml():
    truth = ground_truth()
    table = RULES.recipes["place_table"]
    assert Dynamic("place_table", "consumes", "wood", table.uses["wood"]) in truth
    assert Dynamic("make_iron_pickaxe", "near", "furnace") in truth
    assert Dynamic("collect_diamond", "requires", "iron_pickaxe", 1) in truth
    assert Dynamic("collect_wood", "faces", "tree") in truth
    assert Dynamic("collect_iron", "requires", "wood_pickaxe", 1) not in truth
    s = score({Dynamic("collect_wood", "faces", "tree"), Dynamic("collect_wood", "gives", "bone", 1)})
    assert (s["precision"], s["correct"], s["truth"]) == (0.5, 1, len(truth))


def _step(t, inventory_after, prims, props=()):
    return {"t": t, "inventory": inventory_after, "primitives": prims, "props_before": list(props),
            "unlocked": [u for p in prims for u in p["unlocked"]], "skill": "x", "actions": [p["action"] for p in prims]}


def _prim(action, facing, delta, unlocked=(), near=()):
    return {"action": action, "facing": facing, "inventory_delta": delta, "unlocked": list(unlocked),
            "near": list(near)}


def test_transitions_rebuild_the_inventory_before_each_action():
    ep = {"header": {"seed": 3}, "steps": [_step(0, {"wood": 2, "health": 9}, [
        _prim("move_left", "grass", {}), _prim("do", "tree", {"wood": 1}, ["collect_wood"]),
        _prim("do", "tree", {"wood": 1})])]}
    xs = transitions(ep)
    assert [x.element for x in xs] == ["collect_wood", "collect_wood"]
    assert [x.inventory["wood"] for x in xs] == [0, 1]
    assert all(x.success for x in xs) and xs[0].where() == "seed 3, step 0.1"
    assert element_of("do", "water") == "collect_drink" and element_of("do", "cow") is None
    assert element_of("make_wood_pickaxe", "grass") == "make_wood_pickaxe"


def _x(element, inventory, delta, facing="grass", near=("grass",), seed=0):
    return Transition(element, seed, 0, 0, facing, tuple(near), inventory, delta, (), True)


def _banks(xs):
    b = Banks()
    for x in xs:
        b.actions.setdefault(x.element, []).append(x)
    return b


def test_statistical_discoverer_reads_what_holds_in_every_sample():
    xs = [_x("make_wood_pickaxe", {"wood": w, "wood_sword": 1}, {"wood": -1, "wood_pickaxe": 1},
             near=("grass", "table")) for w in (1, 3, 2)]
    xs += [_x("make_wood_sword", {"wood": 1}, {"wood": -1, "wood_sword": 1}, near=("table",))]
    found = {c.dynamic for c in StatisticalDiscoverer(samples=8).discover(_banks(xs))}
    assert Dynamic("make_wood_pickaxe", "consumes", "wood", 1) in found
    assert Dynamic("make_wood_pickaxe", "requires", "wood", 1) in found
    assert Dynamic("make_wood_pickaxe", "gives", "wood_pickaxe", 1) in found
    assert Dynamic("make_wood_pickaxe", "requires", "wood_sword", 1) in found  # a confounder, for the Verifier
    assert Dynamic("make_wood_pickaxe", "near", "grass") not in found  # nothing places grass
    assert Dynamic("make_wood_pickaxe", "faces", "grass") in found


def test_injection_rate_kinds_and_none_true():
    xs = [_x("collect_wood", {"wood": 1, "health": 9}, {"wood": 1, "health": 1}, facing="tree")] * 3
    banks = _banks(xs)
    found = [Candidate(Dynamic("collect_wood", "gives", "wood", 1))] * 10
    wrong = inject(found, banks, 0.6, random.Random(0))
    assert len(wrong) == 6 and {c.origin for c in wrong} == set(KINDS)
    assert not {c.dynamic for c in wrong} & ground_truth()
    assert all(c.dynamic.arg in NOT_IN_CRAFTER for c in wrong if c.origin == "out_of_domain")


def test_verifier_rejects_with_reasons_and_evidence():
    xs = [_x("collect_stone", {"wood_pickaxe": 1, "wood_sword": s, "food": 5}, {"stone": 1}, facing="stone", seed=i)
          for i, s in enumerate([1, 0, 1, 1])]
    xs += [_x("collect_wood", {"food": 5}, {"wood": 1}, facing="tree", seed=9) for _ in range(20)]
    xs += [_x("collect_wood", {"food": 5}, {"wood": 1}, facing="tree", seed=8)]
    banks = _banks(xs)
    cands = [Candidate(Dynamic("collect_stone", *d)) for d in [
        ("requires", "wood_pickaxe", 1), ("requires", "wood_sword", 1), ("requires", "food", 1),
        ("gives", "stone", 1), ("gives", "bone", 1), ("consumes", "stone", 1), ("faces", "stone", 1)]]
    v = Verifier(samples=16).verify(cands, banks)
    assert sorted(c.dynamic.text() for c in v.verified) == [
        "collect_stone faces stone", "collect_stone gives 1 stone", "collect_stone requires 1 wood_pickaxe"]
    reasons = {r["candidate"].dynamic.text(): (r["reason"], r["evidence"]) for r in v.rejected}
    assert reasons["collect_stone gives 1 bone"][0] == "names 'bone', which no experience contains"
    assert reasons["collect_stone requires 1 wood_sword"] == ("succeeded holding 0 wood_sword", "seed 1, step 0.0")
    assert reasons["collect_stone consumes 1 stone"][0] == "changed stone by 1, not -1"
    assert reasons["collect_stone requires 1 food"][0].startswith("1 food is held in 100% of all experiences")


def test_verifier_drops_a_requirement_another_implies():
    xs = [_x("collect_iron", {"wood_pickaxe": 1, "stone_pickaxe": 1}, {"iron": 1}, facing="iron")] * 8
    xs += [_x("collect_stone", {"wood_pickaxe": 1}, {"stone": 1}, facing="stone")] * 4
    xs += [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 8
    cands = [Candidate(Dynamic("collect_iron", "requires", t, 1)) for t in ("wood_pickaxe", "stone_pickaxe")]
    v = Verifier().verify(cands, _banks(xs))
    assert [c.dynamic.arg for c in v.verified] == ["stone_pickaxe"]
    assert v.rejected[0]["reason"].startswith("implied by collect_iron requires 1 stone_pickaxe in every experience")


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
    for kind in ("in_domain", "out_of_domain"):
        assert m["by_origin"][kind]["candidates"] > 0 and m["by_origin"][kind]["verified"] == 0
    steps = (root / "metrics" / "dive_steps.csv").read_text().splitlines()
    assert steps[0].startswith("step,discovered_n,discovered_precision") and len(steps) == 4
    rejections = [json.loads(line) for line in (root / "data" / "dive" / "rejections.jsonl").read_text().splitlines()]
    assert rejections and all(r["reason"] for r in rejections)
    assert sorted(m["agent"]) == sorted(params["dive"]["conditions"])
    assert all(a["episodes"] == 1 and 0 <= a["score"] <= 100 for a in m["agent"].values())
    assert headline["agent_dive_score"] == m["agent"]["dive"]["score"]
    agents = (root / "metrics" / "dive_agents.csv").read_text().splitlines()
    assert agents[0] == "condition,achievement,rate" and len(agents) == 1 + len(m["agent"]) * 22
    assert m["subgoals"][0] == "collect_wood"
    assert {r["origin"] for r in rejections} >= {"in_domain", "out_of_domain"}
    # Exploration and agent episodes are episode files; the explorer's random picks say so.
    explored = episodes.read_all(root / "data" / "dive" / "explore")
    assert [e["header"]["seed"] for e in explored] == [1000, 1001]
    assert {s["by"] for e in explored for s in e["steps"]} <= {"explorer", "random", "reflex"}
    agents = sorted((root / "data" / "dive" / "agent").rglob("episode_*.jsonl"))
    assert sorted(p.parent.name for p in agents) == sorted(m["agent"])
    ep = episodes.read(root / "data" / "dive" / "agent" / "dive" / agents[0].name)
    assert ep["header"]["source"] == "dive:dive" and {s["by"] for s in ep["steps"]} <= {"dive", "reflex"}
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


def test_llm_discoverer_reasks_then_drops_with_a_log_line(tmp_path):
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    xs += [_x("place_table", {"wood": 2}, {"wood": -2}, facing="grass")] * 3
    with StubLLMServer() as server:
        server.script = [
            '{"dynamics": [{"attribute": "gives", "arg": "wood", "value": 1}, '
            '{"attribute": "faces", "arg": "tree"}]}',  # collect_wood: usable at once
            '{"dynamics": [{"attribute": "consumes", "arg": "plank", "value": 2}]}',  # place_table: unknown item
            "not json at all",
            '{"dynamics": [{"attribute": "smells", "arg": "wood"}]}',
        ]
        cfg = LLMConfig(base_url=server.base_url, model=server.model,
                        cache_dir=str(tmp_path / "cache"), timeout=5.0,
                        reasks=2)
        lines = []
        found = LLMDiscoverer(LLMClient(cfg, "dive", Accounting()), log=lines.append).discover(_banks(xs))
        assert {c.dynamic.text() for c in found} == {"collect_wood gives 1 wood", "collect_wood faces tree"}
        assert len(lines) == 1 and lines[0].startswith("dive: dropped the discoverer's answer about place_table")
        assert "'plank' is not an item or material of Crafter" in server.requests[2]["messages"][-1]["content"]
        assert server.calls == 4


def test_evolver_chains_back_from_the_subgoal_and_masks_what_cannot_be_met():
    from regula import envs
    from regula.dive.agent import DiveAgent, Knowledge
    ExpertConfig = envs.get("crafter").ExpertConfig
    env = params_mod.validate({})["env"]
    world = envs.get("crafter").from_params(env, 0)
    assert world.memory.seen("tree") and not world.memory.seen("table")
    agent = DiveAgent(world, Knowledge.of(ground_truth()), ["make_wood_pickaxe"], True, 0, ExpertConfig(goal="all"))
    assert agent.chain("make_wood_pickaxe") == ["collect_wood", "make_wood_pickaxe"]
    world.env.player.inventory["wood"] = 1
    assert agent.chain("make_wood_pickaxe") == ["collect_wood", "place_table", "make_wood_pickaxe"]
    assert not agent.unmasked("make_wood_pickaxe")  # no table on the map yet
    wrong = Knowledge.of(ground_truth() | {Dynamic("make_wood_pickaxe", "requires", "bone", 1)})
    hallucinating = DiveAgent(world, wrong, ["make_wood_pickaxe"], True, 0, ExpertConfig(goal="all"))
    assert hallucinating.chain("make_wood_pickaxe") is None


def test_the_dive_agent_never_ends_the_episode_as_goal_reached():
    # The expert with goal `all` ends once nothing is left; DiVE explores on (length or death end it).
    from regula.agents import Agent
    from regula.dive.agent import DiveAgent, Knowledge
    crafter = envs.get("crafter")
    outcomes = {}
    for who in ("dive", "expert"):
        world = crafter.from_params(params_mod.validate({})["env"], 0)
        world.unlocked = list(RULES.achievements)
        config = crafter.ExpertConfig(goal="all", max_failures=10 ** 6)
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
    world = crafter.from_params(params_mod.validate({})["env"], 0)
    explorer = Explorer(world, crafter.ExpertConfig(goal="all", max_steps=400, max_skills=60), 0.5, 0)
    survival, decide, calls = explorer.expert.reflex.survival_skill, explorer.decide, {"reflex": 0, "decide": 0}

    def counted(name, f):
        def call(*args):
            calls[name] += 1
            return f(*args)
        return call
    explorer.expert.reflex.survival_skill = counted("reflex", survival)
    explorer.decide = counted("decide", decide)
    notes: dict = {}
    crafter.play_episode(world, explorer, notes)
    assert calls["reflex"] == calls["decide"] > 0  # the reflex once per decision (it keeps state)
    by = [notes[t]["by"] for t in sorted(notes)]
    assert {"random", "explorer"} <= set(by) <= {"random", "explorer", "reflex"}


def test_llm_discoverer_replays_from_the_cache_with_no_call(tmp_path):
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    answer = '{"dynamics": [{"attribute": "gives", "arg": "wood", "value": 1}]}'
    with StubLLMServer() as server:
        server.script = [answer]
        live = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "cache"), timeout=5.0)
        first = LLMDiscoverer(LLMClient(live, "dive", Accounting())).discover(_banks(xs))
        assert server.calls == 1
    # Replay against a port where nothing listens (any call would fail), under the model and the
    # endpoint's name that answered: both are part of each answer's key.
    replay = LLMConfig(base_url="http://127.0.0.1:9/v1", model=live.model, endpoint_id=live.endpoint,
                       cache_dir=str(tmp_path / "cache"), mode="replay")
    accounting = Accounting()
    again = LLMDiscoverer(LLMClient(replay, "dive", accounting)).discover(_banks(xs))
    assert again == first and accounting.row("dive", "discoverer")["calls"] == 0


def test_llm_evolver_keeps_the_shortest_strategy_the_dynamics_allow(tmp_path):
    from regula import envs
    from regula.dive.agent import DiveAgent, Knowledge, LLMEvolver
    ExpertConfig = envs.get("crafter").ExpertConfig
    world = envs.get("crafter").from_params(params_mod.validate({})["env"], 0)
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
                          ExpertConfig(goal="all"), evolver)
        assert evolver.strategy(agent, "make_wood_pickaxe") == ["collect_wood", "place_table", "make_wood_pickaxe"]
        assert "make_wood_pickaxe requires 1 wood" in server.requests[0]["messages"][-1]["content"]
        world.env.player.inventory["wood"] = 1  # a new situation: a new question, answered with garbage
        assert evolver.strategy(agent, "make_wood_pickaxe") == agent.chain("make_wood_pickaxe")
        assert evolver.fallbacks == 1


def test_upper_levels_truth_order_and_objects():
    from regula.dive import hierarchy
    truth = hierarchy.subtask_truth()
    assert truth["make_wood_pickaxe"] == {"has_wood", "table_on_map"}
    assert truth["collect_diamond"] == {"has_iron_pickaxe", "diamond_on_map"}
    assert hierarchy.order_violations(["collect_wood", "place_table", "make_wood_pickaxe"]) == []
    assert hierarchy.order_violations(["make_wood_pickaxe", "collect_wood"]) == [("make_wood_pickaxe", "collect_wood")]
    b = Banks()
    for i in range(10):
        night = i < 5
        view = frozenset({"zombie", "grass"} if night else {"grass"})
        for thing in view:
            b.objects.setdefault(thing, []).append((0, i, view, night))
    assert hierarchy.object_relations(b) == {("at_night", "zombie", "")}


def test_llm_discoverer_does_not_swallow_a_replay_miss_or_a_dead_endpoint(tmp_path):
    from regula.llm import LLMError, ReplayMiss
    xs = [_x("collect_wood", {}, {"wood": 1}, facing="tree")] * 3
    replay = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path / "empty"), mode="replay")
    with pytest.raises(ReplayMiss, match="replay mode: no cached answer for stage 'dive', role 'discoverer'"):
        LLMDiscoverer(LLMClient(replay, "dive", Accounting())).discover(_banks(xs))
    dead = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path / "c"), retries=0, timeout=1.0)
    with pytest.raises(LLMError, match="failed after"):
        LLMDiscoverer(LLMClient(dead, "dive", Accounting())).discover(_banks(xs))


def test_answer_schemas_carry_their_closed_sets():
    """What a schema-constrained endpoint may say: DiVE's attributes and Crafter's names, the
    evolver's skills; validation still names what is wrong where nothing constrained the answer."""
    from regula.dive.agent import StrategiesAnswer
    from regula.dive.dynamics import ATTRIBUTES
    from regula.dive.llm_discover import DynamicsAnswer
    from regula.dive.verify import known_names
    item = DynamicsAnswer.model_json_schema()["$defs"]["DynamicAnswer"]["properties"]
    assert item["attribute"]["enum"] == list(ATTRIBUTES) and item["arg"]["enum"] == sorted(known_names())
    steps = StrategiesAnswer.model_json_schema()["$defs"]["StrategyAnswer"]["properties"]["steps"]
    assert steps["items"]["enum"] == envs.get("crafter").skill_names()
    with pytest.raises(ValueError, match="'plank' is not an item or material of Crafter"):
        DynamicsAnswer.model_validate({"dynamics": [{"attribute": "requires", "arg": "plank"}]})
