"""The rule-grounded corrector (a stand-in for the paper's GPT-4o): one step per error type, read
from the failure's cause and the scene, on real failures of the VirtualHome adapter."""
import pytest

from regula import envs, roles
from regula.e2cl.samples import Task

VH = envs.get("virtualhome")
DRINK = "file286_2"
TASK = Task("Drink", "get a glass of water")


def corrected(*lines):
    """The rules corrector's step for the last line's failure, and whether it executes there."""
    env = VH.make(0, program=DRINK)
    for line in lines[:-1]:
        assert env.run_skill(line).success, line
    step = env.run_skill(lines[-1])
    assert not step.success
    fix = roles.make("corrector", "rules").correct(TASK, list(lines[:-1]), lines[-1], step.feedback,
                                                   cause=step.cause, scene=env.graph())
    return fix, (fix is not None and env.run_skill(fix).success)


@pytest.mark.parametrize("lines,fix", [
    (["[GRAB] <water_glass> (1000)"], "[WALK] <water_glass> (1000)"),  # Agent Proximity
    (["[WALK] <water_glass> (1000)", "[GRAB] <water_glass> (1000)"], "[OPEN] <cupboard> (229)"),  # Enclosed
    (["[WALK] <cupboard> (229)", "[PUTBACK] <water_glass> (1000) <cupboard> (229)"],
     "[GRAB] <water_glass> (1000)"),  # Missing Object: enclosed still, so it does not execute
])
def test_each_error_type_gets_its_step(lines, fix):
    got, executes = corrected(*lines)
    assert got == fix
    assert executes == (fix != "[GRAB] <water_glass> (1000)")


@pytest.mark.parametrize("wrong", ["(1000)", "(99999)"])  # the water glass's id; no object's
def test_a_wrong_id_is_replaced_by_an_object_of_that_class(wrong):
    got, executes = corrected(f"[WALK] <cupboard> {wrong}")
    assert got == "[WALK] <cupboard> (229)" and executes


def test_no_rule_no_correction():
    got, _ = corrected("[WALK] <cupboard> (229)", "[GRAB] <cupboard> (229)")  # Invalid Action
    assert got is None


def test_the_llm_corrector_asks_over_http_and_takes_the_first_script_line(tmp_path):
    from regula.llm import Accounting, LLMClient, LLMConfig
    from regula.llm.stub_server import StubLLMServer
    with StubLLMServer() as server:
        client = LLMClient(LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path),
                                     timeout=5.0), "e2cl", Accounting())
        corrector = roles.make("corrector", "openai", client=client)
        server.script = ["Walk there first: [WALK] <water_glass> (1000), then grab it.", "I cannot help."]
        assert corrector.correct(TASK, [], "[GRAB] <water_glass> (1000)",
                                 "Error, Robot agent is not close to water_glass") == "[WALK] <water_glass> (1000)"
        assert corrector.correct(TASK, [], "[GRAB] <cup> (1)", "Error, cup isn't available") is None
        prompt = server.requests[0]["messages"][1]["content"]
        assert "Feedback: Error, Robot agent is not close to water_glass" in prompt
