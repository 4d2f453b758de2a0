"""The local OpenAI-compatible test server: one model of its own, other names refused as real
servers refuse them, and every role's prompt answered in the role's schema by the rule-grounded
stand-ins, so `openai` backends run every stage end to end against it (tests/test_pipeline.py does,
through `dvc repro`, and checks what each role asked)."""
import json
import socket
import urllib.error
import urllib.request
from pathlib import Path

import openai
import pytest
import yaml

from cli_run import check_bad_input, invoke
from regula import demos as demos_mod, envs, params as params_mod, roles
from regula.dive.agent import DiveAgent, Knowledge, LLMEvolver
from regula.dive.banks import Banks, Transition
from regula.dive.dynamics import ground_truth
from regula.llm import Accounting, LLMClient, LLMConfig, LLMError
from regula.llm.stub_answers import ANSWERS
from regula.llm.stub_server import MODEL, StubLLMServer
from regula.logic.laws import Law
from regula.ltlcrit.critic import Evidence
from regula.ltlcrit.gate import gate
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import rollout
from stage_configs import expert_config, params_text, rollout_config

CRAFTER = envs.get("crafter")
LTL = CrafterModel()


@pytest.fixture
def server():
    with StubLLMServer() as s:
        yield s


def client(server, tmp_path, **kw) -> LLMClient:
    """No retries and no re-asks: an answer that does not parse in the role's schema fails."""
    cfg = LLMConfig(base_url=server.base_url, cache_dir=str(tmp_path / "cache"),
                    **{"model": server.model, "retries": 0, "reasks": 0, "timeout": 10.0, "max_tokens": 1024, **kw})
    return LLMClient(cfg, "stub", Accounting())


def no_reasks(c: LLMClient) -> bool:
    return all(row["reasks"] == row["unusable"] == 0 for row in c.accounting.to_dict()["stub"].values())


# -- the model ------------------------------------------------------------------------------------

def test_it_serves_its_own_model_and_answers_under_that_name(server):
    api = openai.OpenAI(base_url=server.base_url, api_key="none")
    assert MODEL == "regula-stub" and [m.id for m in api.models.list()] == [MODEL]
    assert api.models.retrieve(MODEL).id == MODEL
    with pytest.raises(openai.NotFoundError):
        api.models.retrieve("gpt-4o-mini")
    msgs = [{"role": "system", "content": "?"}, {"role": "user", "content": "hello"}]
    reply = api.chat.completions.create(model=MODEL, messages=msgs)
    assert reply.model == MODEL
    assert reply.choices[0].message.content.startswith("This test server answers only regula's role prompts")


def test_another_model_is_refused_as_real_servers_refuse_it(server):
    server.script = ["Yes."]
    request = urllib.request.Request(f"{server.base_url}/chat/completions", method="POST",
                                     data=json.dumps({"model": "gpt-4o-mini", "messages": []}).encode(),
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=5)
    assert err.value.code == 404
    assert json.loads(err.value.read()) == {"error": {
        "message": "The model `gpt-4o-mini` does not exist", "type": "invalid_request_error",
        "code": "model_not_found"}}
    assert server.script == ["Yes."]  # a refused request takes no scripted step


def test_the_client_turns_the_refusal_into_one_line_without_retrying(server, tmp_path):
    c = client(server, tmp_path, model="gpt-4o-mini", retries=3)
    with pytest.raises(LLMError) as err:
        roles.make("feedback", "openai", client=c).predict({"obs": "Inventory: empty.", "skill": "collect_wood"})
    assert str(err.value) == (f"LLM endpoint {server.base_url} refused the request for stage 'stub', role "
                              "'feedback' with HTTP 404: The model `gpt-4o-mini` does not exist (does it serve "
                              "model 'gpt-4o-mini'?)")
    # the probe of structured answers met it first, and named the role that needed it
    assert (len(server.probes), server.calls, len(c.cache)) == (1, 0, 0)


# -- each role's prompt, answered in the role's schema -------------------------------------------

def test_every_prompt_template_has_an_answer():
    templates = Path(__file__).resolve().parent.parent / "src" / "regula" / "prompts"
    assert sorted(ANSWERS) == sorted(p.stem for p in templates.glob("*.yaml"))


def test_two_systems_answering_one_template_is_refused(monkeypatch):
    """Each system's answers come from its package: a template answered twice would silently
    take the later answer."""
    from regula.llm import stub_answers
    monkeypatch.setattr(stub_answers, "SYSTEM_STUBS", ("regula.cedar.stubs", "regula.dive.stubs", "regula.cedar.stubs"))
    with pytest.raises(ValueError, match="regula.cedar.stubs answers the prompt template 'membership'"):
        stub_answers._merged()


def test_membership_answers_as_the_rules_teacher(server, tmp_path):
    c = client(server, tmp_path)
    words = [(), ("collect_wood",), ("collect_wood", "place_table", "make_wood_pickaxe"),
             ("collect_wood", "collect_wood", "place_table", "collect_wood", "make_wood_pickaxe"),
             ("make_wood_pickaxe", "collect_wood")]
    rules = roles.make("teacher", "rules", goal="make_wood_pickaxe")
    truth = [rules.member(w) for w in words]
    assert truth == [False, False, False, True, False]
    for description in ("make a wood pickaxe", "make_wood_pickaxe"):
        teacher = roles.make("teacher", "openai", client=c, description=description)
        assert [teacher.member(w) for w in words] == truth
    nothing = roles.make("teacher", "openai", client=c, description="build a rocket")
    assert nothing.member(words[3]) is False  # a task naming no achievement accomplishes nothing
    assert no_reasks(c)


def test_feedback_answers_as_the_rules_predictor_from_the_observation(server, tmp_path):
    c = client(server, tmp_path)
    llm, rules = roles.make("feedback", "openai", client=c), roles.make("feedback", "rules")
    world = CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 0)
    asked = ("collect_wood", "place_table", "make_wood_pickaxe", "collect_stone", "explore")
    got, want = [], []
    for skill in ("collect_wood", "collect_wood", "collect_wood", "place_table", "collect_wood"):
        for s in asked:
            got.append(llm.predict({"obs": world.text(), "skill": s}))
            want.append(rules.predict({"skill": s, "inventory": dict(world.inventory), "inventory_delta": {}}))
        world.run_skill(skill)
    assert got == want and set(want) == {True, False}
    assert no_reasks(c)


@pytest.mark.parametrize("name", ["naive", "saycan", "inner_monologue"])
def test_llm_actors_take_the_rule_grounded_plan_toward_the_goal(server, tmp_path, name):
    c = client(server, tmp_path)
    ep = rollout(roles.make("actor", name, client=c), LTL.hard_laws(), 0, LTL,
                 rollout_config(max_skills=5, upkeep=False, backend="native"))
    steps = [s for s in ep["steps"] if s["by"] == "actor"]
    # Seed 0 shows trees: data.yaml's chain toward the diamond starts with wood, then a table.
    assert [s["skill"] for s in steps] == ["collect_wood", "collect_wood", "place_table", "collect_wood",
                                           "make_wood_pickaxe"]
    assert all(s["success"] and s["refused"] == [] for s in steps)
    assert steps[0]["thought"].startswith("value 10" if name == "saycan" else "toward collect_diamond: collect_wood")
    assert no_reasks(c) and {r["model"] for r in server.requests} == {MODEL}


def _step(props, skill, success, reason=""):
    return {"by": "actor", "t": 0, "props_before": sorted(props), "props_after": sorted(props), "skill": skill,
            "success": success, "reason": reason, "refused": [],
            "cause": None if success else {"kind": "missing", "item": "wood_pickaxe", "have": 0, "need": 1},
            "inventory": {}, "inventory_delta": {}}


def test_critic_proposes_data_yamls_law_for_an_observed_failure_and_the_gate_keeps_it(server, tmp_path):
    critic = roles.make("critic", "openai", client=client(server, tmp_path))
    state = {"has_wood", "stone_on_map", "tree_on_map"}
    steps = [_step(state, "collect_wood", True),
             _step(state, "collect_stone", False, "missing wood_pickaxe: have 0, collect_stone requires 1")]
    ev = Evidence(LTL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": steps}], hard=[], soft=[])
    out = critic.propose(ev)
    assert [(p.formula, p.source) for p in out.proposals] == [
        ("G(!has_wood_pickaxe -> X(!collect_stone))", "environment_failure")]
    assert out.removals == []
    assert [law.formula for law in gate(out, ev, 0, "openai").accepted] == ["G(!has_wood_pickaxe -> !collect_stone)"]
    # Already a hard law: nothing to propose.
    assert critic.propose(Evidence(LTL, ev.episodes, hard=LTL.hard_laws(), soft=[])).proposals == []


def test_critic_removes_its_law_where_the_laws_left_no_action(server, tmp_path):
    critic = roles.make("critic", "openai", client=client(server, tmp_path))
    state = {"tree_on_map"}
    soft = [Law("G(tree_on_map -> collect_wood)", kind="soft", source="efficiency"),
            Law("G(has_wood -> place_table)", kind="soft", source="efficiency")]
    ev = Evidence(LTL, [{"origin": "rollout", "seed": 0, "iteration": 0, "steps": [_step(state, "explore", True)]}],
                  hard=[], soft=soft, conflicts=[{"state": sorted(state), "blocked": {}}])
    out = critic.propose(ev)
    assert out.proposals == [] and [f for f, _ in out.removals] == ["G(tree_on_map -> collect_wood)"]
    assert [r["formula"] for r in gate(out, ev, 0, "openai").removed] == ["G(tree_on_map -> collect_wood)"]


def _x(element, inventory, delta, facing="grass", near=("grass",)):
    return Transition(element, 0, 0, 0, facing, tuple(near), inventory, delta, (), True)


def test_discoverer_reads_the_transitions_as_the_statistical_discoverer(server, tmp_path):
    banks = Banks()
    xs = [_x("make_wood_pickaxe", {"wood": w, "wood_sword": 1}, {"wood": -1, "wood_pickaxe": 1},
             near=("grass", "table")) for w in (1, 3, 2)]
    xs += [_x("make_wood_sword", {"wood": 1}, {"wood": -1, "wood_sword": 1}, near=("table",))]
    xs += [_x("collect_wood", {"sapling": 1}, {"wood": 1}, facing="tree")] * 3
    xs += [_x("place_table", {"wood": w}, {"wood": -1}, near=("tree",)) for w in (1, 4)]
    for x in xs:
        banks.actions.setdefault(x.element, []).append(x)
    c = client(server, tmp_path)
    llm = roles.make("discoverer", "openai", client=c, samples=8, seed=5)
    statistical = roles.make("discoverer", "statistical", samples=8, seed=5)
    found = llm.discover(banks, step=2)
    assert found == statistical.discover(banks, step=2)
    assert {"make_wood_pickaxe requires 1 wood_sword", "collect_wood faces tree"} <= {
        cand.dynamic.text() for cand in found}
    assert no_reasks(c)


def test_evolver_answers_the_symbolic_chain_over_the_listed_dynamics(server, tmp_path):
    c = client(server, tmp_path)
    evolver = LLMEvolver(c)
    world = CRAFTER.from_params(params_mod.validate({}).env.model_dump(), 0)
    agent = DiveAgent(world, Knowledge.of(ground_truth()), ["make_wood_pickaxe"], True, 0,
                      expert_config(goal="all"), evolver)
    assert evolver.strategy(agent, "make_wood_pickaxe") == agent.chain("make_wood_pickaxe") == [
        "collect_wood", "make_wood_pickaxe"]
    world.env.player.inventory["wood"] = 1
    for skill in ("make_wood_pickaxe", "collect_diamond", "make_stone_sword"):
        assert evolver.strategy(agent, skill) == agent.chain(skill)
    assert evolver.fallbacks == 0 and no_reasks(c)


# -- the command ---------------------------------------------------------------------------------

def test_stub_server_command_serves_until_interrupted(monkeypatch):
    def interrupt(seconds):
        raise KeyboardInterrupt
    monkeypatch.setattr("time.sleep", interrupt)
    result = invoke(["llm", "stub-server", "--port", "0", "--model", "local-test"])
    assert result.exit_code == 0
    assert result.stdout.startswith("stub LLM at http://127.0.0.1:") and result.stdout.endswith(
        "/v1, model local-test (Ctrl-C to stop)\n")


def test_stub_server_bad_port_is_one_line(tmp_path):
    check_bad_input(["llm", "stub-server", "--port", "70000"], tmp_path, "'--port'", "65535")
    check_bad_input(["llm", "stub-server", "--port", "eighty"], tmp_path, "'--port'", "integer")
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        check_bad_input(["llm", "stub-server", "--port", port], tmp_path,
                        f"cannot serve on 127.0.0.1:{port}: Address already in use")


@pytest.fixture(scope="module")
def tiny_demos(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("demos") / "demos"
    p = params_mod.validate({"demos": {"episodes": 1, "max_steps": 300, "max_skills": 40}})
    demos_mod.generate(p, folder, folder.parent / "metrics")
    return folder


def test_a_stage_whose_model_the_endpoint_lacks_stops_in_one_line(server, tmp_path, tiny_demos):
    import shutil
    shutil.copytree(tiny_demos, tmp_path / "data" / "demos")
    params = tmp_path / "params.yaml"
    # The cache folder is outside the checked tree: its ledger rightly records the refused call.
    params.write_text(params_text({"llm": {"base_url": server.base_url, "model": "gpt-4o-mini", "retries": 0,
                                           "cache_dir": str(tmp_path.parent / f"{tmp_path.name}-cache")},
                                   "dive": {"explore_episodes": 0}}))
    check_bad_input(["dive", "--discoverer", "openai", "--params", params, "--root", tmp_path], tmp_path,
                    f"LLM endpoint {server.base_url} refused the request for stage 'dive', role 'discoverer' "
                    "with HTTP 404: The model `gpt-4o-mini` does not exist")


def test_corrector_answers_a_walk_to_what_the_agent_is_not_close_to(server, tmp_path):
    from regula.e2cl.samples import Task
    corrector = roles.make("corrector", "openai", client=client(server, tmp_path))
    task = Task("Drink", "get a glass of water")
    assert corrector.correct(task, ["[WALK] <kitchen> (205)"], "[GRAB] <water_glass> (1000)",
                             "Error, Robot agent is not close to water_glass") == "[WALK] <water_glass> (1000)"
    assert corrector.correct(task, [], "[GRAB] <cup> (1)", "cup isn't available in the environment.") == \
        "[GRAB] <cup> (1)"
