"""Structured answers in the form the endpoint takes, the probe that picks it, seeds per sample,
and the accounting of answers that reads the same live and in a replay."""
import json

import pydantic
import pytest

import regula.llm.client as client_mod
from regula.errors import ParamsError
from regula.llm import Accounting, LLMClient, LLMConfig, LLMError, UnusableAnswer
from regula.llm.accounting import read_ledger
from regula.llm.cache import LEDGER
from regula.llm.client import PROBE, YES_NO
from regula.llm.stub_server import StubLLMServer

Q = [{"role": "user", "content": "Does collect_wood need a tool? yes or no"}]
P = [{"role": "user", "content": "Plan for wood?"}]


class Plan(pydantic.BaseModel):
    steps: list[str]


def yes_or_plan(messages):
    return "Yes." if messages == Q else json.dumps({"steps": ["collect_wood"]})


@pytest.fixture(autouse=True)
def fresh_probes(monkeypatch):
    # the probe's memo is per process: each test starts without one (a port may be reused)
    monkeypatch.setattr(client_mod, "_FORMS", {})


def client(server, tmp_path, log=None, **kw):
    cfg = LLMConfig(**{"base_url": server.base_url, "model": "regula-stub", "cache_dir": str(tmp_path / "cache"),
                       "timeout": 5.0, "retries": 0, **kw})
    return LLMClient(cfg, "test", Accounting(), log=log)


def forms(server) -> list:
    return [(r.get("response_format") or {}).get("type") for r in server.requests]


@pytest.mark.parametrize("refuse,form,why", [
    ((), "json_schema", ""),
    (("json_schema",), "json_object",
     " (json_schema refused: HTTP 500 (response_format type 'json_schema' is not supported))"),
    (("json_schema", "json_object"), "text",
     " (json_schema refused: HTTP 500 (response_format type 'json_schema' is not supported); "
     "json_object refused: HTTP 500 (response_format type 'json_object' is not supported))"),
])
def test_the_probe_picks_the_first_form_the_endpoint_takes_and_says_so(tmp_path, refuse, form, why):
    lines = []
    with StubLLMServer(responder=yes_or_plan, refuse=refuse) as server:
        c = client(server, tmp_path, log=lines.append)
        assert c.ask_yes_no(Q, "teacher") is True
        assert c.ask_json(P, Plan, "planner") == Plan(steps=["collect_wood"])
        port = server.base_url.split(":")[2].split("/")[0]
        assert lines == [f"LLM regula-stub at 127.0.0.1:{port}: structured answers as {form}{why}"]
        # the probe: json_schema, then json_object, on the tiny question; apart from the roles' requests
        assert [(r["messages"], r["response_format"]["type"]) for r in server.probes] == [
            (PROBE, f) for f in ("json_schema", "json_object")[:len(refuse) + (form != "text")]]
        assert server.probes[0]["response_format"]["json_schema"]["schema"] == YES_NO
        assert forms(server) == [None if form == "text" else form] * 2
        asked = server.requests
        if form == "json_schema":
            assert asked[0]["response_format"] == {"type": "json_schema", "json_schema": {
                "name": "answer", "schema": YES_NO, "strict": False}}
            assert asked[1]["response_format"]["json_schema"]["schema"] == Plan.model_json_schema()
        elif form == "json_object":
            assert asked[0]["response_format"] == {"type": "json_object", "schema": YES_NO}
        # the stub answers in the schema asked: a yes/no answer as {"answer": "yes"}
        entry = c.cache.get(c.complete(Q, "teacher").key)  # free text: no response format, no probe
        assert server.requests[-1].get("response_format") is None and entry["request"]["structured"] == "text"
        yes_no = next(e for _, e in c.cache.entries() if e["request"]["schema"] == YES_NO)
        assert yes_no["request"]["structured"] == form
        assert yes_no["response"]["content"] == ('{"answer": "yes"}' if form != "text" else "Yes.")
    assert c.accounting.to_dict()["test"]["teacher"]["structured"] == ", ".join(sorted({form, "text"}))
    spent = c.accounting.this_run()["test"]
    assert (spent["probe"]["calls"], spent["probe"]["errors"]) == (form != "text", len(refuse))
    ledger = read_ledger(c.cache.root / LEDGER)["test"]["probe"]
    assert (ledger["calls"], ledger["errors"]) == (form != "text", len(refuse))


def test_the_probe_runs_once_per_process_for_many_clients_and_threads(tmp_path):
    lines = []
    with StubLLMServer(responder=yes_or_plan) as server:
        clients = [client(server, tmp_path / str(i), log=lines.append) for i in range(4)]
        questions = [[{"role": "user", "content": f"question {i}"}] for i in range(8)]
        clients[0].map(lambda i: clients[i % 4].ask_json(questions[i], Plan, "planner"), range(8))
        assert len(server.probes) == 1 and len(lines) == 1 and server.calls == 8


def test_a_fixed_form_never_probes(tmp_path):
    with StubLLMServer(responder=yes_or_plan) as server:
        c = client(server, tmp_path, structured="json_object", log=pytest.fail)
        assert c.ask_yes_no(Q, "t") is True
        assert forms(server) == ["json_object"] and server.requests[0]["response_format"]["schema"] == YES_NO


def test_a_fixed_form_the_endpoint_refuses_is_one_clear_error(tmp_path):
    with StubLLMServer(responder=yes_or_plan, refuse=("json_schema",)) as server:
        c = client(server, tmp_path, structured="json_schema")
        with pytest.raises(LLMError) as err:
            c.ask_yes_no(Q, "teacher")
        assert str(err.value) == (
            f"LLM endpoint {server.base_url} (regula-stub) refused structured answers as json_schema "
            "(llm.structured: json_schema) for stage 'test', role 'teacher': HTTP 500 (response_format type "
            "'json_schema' is not supported); set llm.structured to auto or json_object or text (auto probes "
            "what the endpoint accepts)")
        assert server.calls == 1 and len(c.cache) == 0


def test_no_probe_in_replay_or_when_every_answer_is_cached(tmp_path):
    lines = []
    with StubLLMServer(responder=yes_or_plan, refuse=("json_schema",)) as server:
        live = client(server, tmp_path, log=lines.append)
        values = [live.ask_yes_no(Q, "teacher"), live.ask_json(P, Plan, "planner")]
        live_record = live.accounting.to_dict()
    assert len(lines) == 1
    client_mod._FORMS.clear()  # a new process: no memo; the server is gone
    for mode in ("replay", "live"):
        again = client(server, tmp_path, mode=mode, log=pytest.fail)
        assert [again.ask_yes_no(Q, "teacher"), again.ask_json(P, Plan, "planner")] == values
        assert again.accounting.to_dict() == live_record
        assert again.accounting.this_run()["test"]["teacher"]["calls"] == 0
    assert live_record["test"]["teacher"]["structured"] == "json_object"


def test_samples_are_separate_calls_with_seeds_from_llm_seed(tmp_path):
    with StubLLMServer(responder=yes_or_plan) as server:
        c = client(server, tmp_path, seed=7, structured="text")
        server.script = ["yes", "no", "yes"]
        assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"]
        assert [(r["seed"], r["n"]) for r in server.requests] == [(7, 1), (8, 1), (9, 1)]
        assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"] and server.calls == 3
        assert client(server, tmp_path, seed=8, structured="text", mode="refresh").complete(Q, "t").text != ""
        assert server.requests[-1]["seed"] == 8  # another seed is another question


def test_an_unusable_answer_is_counted_and_its_record_is_the_same_in_a_replay(tmp_path):
    with StubLLMServer(responder=yes_or_plan) as server:
        live = client(server, tmp_path, structured="text", reasks=1)
        server.script = ["maybe", "perhaps", "yes"]
        with pytest.raises(UnusableAnswer) as err:
            live.ask_yes_no(Q, "teacher")
        assert live.ask_yes_no([{"role": "user", "content": "other"}], "teacher") is True
        record = live.accounting.to_dict()
        assert record == {"test": {"teacher": {
            "questions": 2, "unusable": 1, "calls": 3, "reasks": 1, "tokens_in": record["test"]["teacher"]["tokens_in"],
            "tokens_out": 3, "latency_s": record["test"]["teacher"]["latency_s"], "model": "regula-stub",
            "endpoint": server.base_url.split("/")[2], "structured": "text"}}}
        replay = client(server, tmp_path, structured="text", mode="replay")
        with pytest.raises(UnusableAnswer) as again:
            replay.ask_yes_no(Q, "teacher")
        assert str(again.value) == str(err.value)
        replay.ask_yes_no([{"role": "user", "content": "other"}], "teacher")
        assert json.dumps(replay.accounting.to_dict()) == json.dumps(record) and server.calls == 3
        assert replay.accounting.this_run()["test"]["teacher"]["cache_hits"] == 2


def test_a_bad_structured_value_is_one_line():
    with pytest.raises(ParamsError) as err:
        LLMConfig(structured="grammar")
    assert "\n" not in str(err.value) and "llm.structured" in str(err.value)
    assert all(form in str(err.value) for form in ("auto", "json_schema", "json_object", "text"))
    with pytest.raises(ParamsError, match="llm.seed"):
        LLMConfig(seed=-1)


def test_the_structured_forms_are_the_schemas():
    from regula.params import LLM_STRUCTURED
    assert LLM_STRUCTURED == client_mod.STRUCTURED
