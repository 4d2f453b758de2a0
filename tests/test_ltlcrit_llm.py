"""LTLCrit's LLM actors and critic, end to end over HTTP against the local stub server."""
import json

import pytest

from regula import roles
from regula.llm import Accounting, LLMClient, LLMConfig
from regula.llm.stub_server import StubLLMServer
from regula.ltlcrit.llm_critic import LLMCritic
from regula.ltlcrit.loop import improve
from regula.ltlcrit.model import CrafterModel
from regula.ltlcrit.rollout import rollout
from stage_configs import loop_config, rollout_config

MODEL = CrafterModel()
ONE_STEP = rollout_config(max_skills=1, upkeep=False, backend="native")


@pytest.fixture
def server():
    with StubLLMServer() as s:
        yield s


def client(server, tmp_path, **kw):
    cfg = LLMConfig(base_url=server.base_url, model=server.model,
                    cache_dir=str(tmp_path / "cache"), timeout=5.0,
                    max_tokens=512, **kw)
    return LLMClient(cfg, "ltlcrit", Accounting())


def actor_for(name, c):
    return roles.make("actor", name, client=c)


def prompt(request) -> str:
    return request["messages"][-1]["content"]


def test_naive_actor_naming_no_action_gets_feedback_and_a_failure(server, tmp_path):
    server.script = ['{"thought": "up", "action": "fly"}', '{"thought": "wood first", "action": "collect_wood"}']
    actor = actor_for("naive", client(server, tmp_path))
    ep = rollout(actor, MODEL.hard_laws(), 0, MODEL, ONE_STEP)
    step = ep["steps"][0]
    assert step["skill"] == "collect_wood" and step["thought"] == "wood first"
    assert step["refused"] == [{"action": "fly", "why": "unknown"}]
    assert "there is no action 'fly'; the actions are:" in prompt(server.requests[1])
    assert "Refused at this step:\n(none)" in prompt(server.requests[0])


def test_an_actor_answer_that_never_parses_is_refused_and_the_episode_goes_on(server, tmp_path):
    """The client gives up on an answer after its re-asks (UnusableAnswer); the LLM actor then
    proposes no action, which the runner refuses like any name off the list, and asks again."""
    server.script = ["no json here", "still none", '{"thought": "", "action": "collect_wood"}']
    c = client(server, tmp_path, reasks=1, structured="text")
    ep = rollout(actor_for("naive", c), MODEL.hard_laws(), 0, MODEL, ONE_STEP)
    assert ep["steps"][0]["skill"] == "collect_wood"
    assert ep["steps"][0]["refused"] == [{"action": "(no usable answer)", "why": "unknown"}]
    assert c.accounting.to_dict()["ltlcrit"]["actor"]["unusable"] == 1
    # SayCan whose every answer is unusable: the shield's allowed set decides, the run goes on
    server.script, server.responder = [], lambda messages: '{"values": {"1.0: 9/9'
    ep = rollout(actor_for("saycan", client(server, tmp_path / "b", reasks=0, structured="text")),
                 MODEL.hard_laws(), 0, MODEL, ONE_STEP)
    assert ep["steps"][0]["refused"][-1]["why"] == "fallback"
    assert ep["steps"][0]["refused"][-1]["policy"] == "uniform"  # SayCan named no allowed action: a seeded draw
    assert [r["action"] for r in ep["steps"][0]["refused"][:-1]] == ["(no usable answer)"] * 4


def test_saycan_ranks_only_what_the_shield_affords(server, tmp_path):
    def values(messages):
        allowed = [line[2:].split(":")[0] for line in messages[-1]["content"].splitlines() if line.startswith("- ")]
        return json.dumps({"values": {a: (9 if a == "collect_wood" else 1) for a in allowed}})
    server.responder = values
    actor = actor_for("saycan", client(server, tmp_path))
    ep = rollout(actor, MODEL.hard_laws(), 0, MODEL, ONE_STEP)
    assert ep["steps"][0]["skill"] == "collect_wood"
    listed = prompt(server.requests[0])
    assert "- collect_wood\n" in listed and "- collect_diamond\n" not in listed  # hard-blocked: not afforded
    assert "walk to a tree" not in listed  # action names only: no recipe facts from data.yaml


def test_inner_monologue_carries_thoughts_actions_and_results(server, tmp_path):
    server.script = ['{"thought": "trees are near", "action": "collect_wood"}',
                     '{"thought": "again", "action": "collect_wood"}']
    actor = actor_for("inner_monologue", client(server, tmp_path))
    rollout(actor, MODEL.hard_laws(), 0, MODEL, rollout_config(max_skills=2, upkeep=False, backend="native"))
    assert "Recent steps:\n(nothing yet)" in prompt(server.requests[0])
    assert "thought: trees are near | action: collect_wood | result: succeeded" in prompt(server.requests[1])


CRITIC_ANSWER = {
    "laws": [
        {"formula": "G(has_wood -> X(", "source": "efficiency", "explanation": "cut off"},
        {"formula": "G(has_diamond & has_iron_pickaxe -> X(collect_diamond))", "source": "efficiency"},
        {"formula": "G(tree_on_map & !has_wood -> X(collect_wood))", "source": "efficiency",
         "explanation": "get wood first"},
    ],
    "remove": [{"formula": "G(!explore)", "reason": "not a law"}],
}


def test_llm_critic_malformed_and_ungrounded_laws_are_rejected_and_the_run_goes_on(server, tmp_path):
    def answer(messages):
        text = messages[-1]["content"]
        if "LTLCrit" in messages[0]["content"]:
            assert "Trajectories" in text and "episode (seed 0):" in text
            return json.dumps(CRITIC_ANSWER)
        return '{"thought": "t", "action": "collect_wood"}'
    server.responder = answer
    c = client(server, tmp_path)
    cfg = loop_config((0,), iterations=1)
    rcfg = rollout_config(max_skills=6, backend="native")
    run = improve(actor_for("naive", c), LLMCritic(c), MODEL, rcfg, cfg, [], tmp_path / "laws", tmp_path / "runs")
    verdict = json.loads((tmp_path / "laws" / "naive" / "critic_0.json").read_text())
    assert [law["formula"] for law in verdict["accepted"]] == ["G(tree_on_map & !has_wood -> collect_wood)"]
    reasons = {r["formula"]: r["reason"] for r in verdict["rejected"]}
    assert reasons["G(has_wood -> X("].startswith("malformed: ")
    assert reasons["G(has_diamond & has_iron_pickaxe -> X(collect_diamond))"].startswith("ungrounded: ")
    assert reasons["G(!explore)"] == "asks to remove a law that is not a critic law"
    assert [h["critic_laws"] for h in run.history] == [0, 1]
    calls = server.calls

    # Replay: the same run from the cache makes no call and gives the same history.
    replay = client(server, tmp_path, mode="replay")
    again = improve(actor_for("naive", replay), LLMCritic(replay), MODEL, rcfg, cfg, [],
                    tmp_path / "laws2", tmp_path / "runs2")
    assert server.calls == calls and again.history == run.history


def test_llm_critic_garbage_answer_ends_the_round_with_a_note(server, tmp_path):
    def answer(messages):
        if "LTLCrit" in messages[0]["content"]:
            return "I think the agent should try harder."
        return '{"thought": "t", "action": "explore"}'
    server.responder = answer
    c = client(server, tmp_path, reasks=1)
    cfg = loop_config((0,), iterations=2)
    run = improve(actor_for("naive", c), LLMCritic(c), MODEL, rollout_config(max_skills=3, backend="native"),
                  cfg, [], tmp_path / "laws", tmp_path / "runs")
    verdict = json.loads((tmp_path / "laws" / "naive" / "critic_0.json").read_text())
    assert verdict["accepted"] == [] and verdict["notes"][0].startswith(
        "the critic's answer could not be used: role 'critic' of stage 'ltlcrit': no usable answer after 2 tries")
    assert run.stop == "converged: the critic's round 0 changed no law"


def test_the_answer_schema_names_the_actions_offered(server, tmp_path):
    """A schema-constrained endpoint can only name an offered action: the schema sent lists
    them (the naive actor: every action; SayCan: one value per allowed action)."""
    rollout(actor_for("naive", client(server, tmp_path, structured="json_schema")), MODEL.hard_laws(), 0, MODEL,
            ONE_STEP)
    schema = server.requests[0]["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["action"]["enum"] == list(MODEL.actions)
    rollout(actor_for("saycan", client(server, tmp_path / "b", structured="json_object")), MODEL.hard_laws(), 0,
            MODEL, ONE_STEP)
    values = server.requests[-1]["response_format"]["schema"]["properties"]["values"]
    offered = values["required"]
    assert sorted(values["properties"]) == sorted(offered) and set(offered) < set(MODEL.actions)
    assert all(f"- {a}\n" in prompt(server.requests[-1]) + "\n" for a in offered)
    assert "collect_wood" in offered and "collect_diamond" not in offered  # hard-blocked at the start
