"""Fault injection on the LLM client and its cache: writer processes sharing one cache, and a
local endpoint that throttles, fails, stalls, sends garbage and echoes the key. After each:
nothing lost (every answer that arrived is kept, every call is counted), nothing poisoned (no
entry that is not a parsed answer to its own question), nothing leaked (a sentinel key appears
in no file, message or log line)."""
import json
import logging
import socket
import threading
import time

import pydantic
import pytest

from regula.bench import bench_shared_cache
from regula.llm import Accounting, LLMClient, LLMConfig, LLMError, QueryCache, UnusableAnswer, cache_key
from regula.llm.accounting import read_ledger
from regula.llm.cache import LEDGER
from regula.llm.client import YES_NO
from regula.llm.stub_server import StubLLMServer

SECRET = "sk-regula-fault-sentinel-777"
FAST = {"Retry-After": "0.01"}


@pytest.fixture
def server():
    with StubLLMServer() as s:
        yield s


@pytest.fixture
def client(server, tmp_path, monkeypatch):
    monkeypatch.setenv("REGULA_FAULT_KEY", SECRET)

    def make(**kw):
        cfg = LLMConfig(**{"base_url": server.base_url, "model": "regula-stub", "api_key_env": "REGULA_FAULT_KEY",
                           "cache_dir": str(tmp_path / "cache"), "timeout": 5.0, "retries": 2,
                           "structured": "text", **kw})  # fixed: a probe would take a scripted answer
        return LLMClient(cfg, "faults", Accounting())
    return make


def question(i) -> list:
    return [{"role": "user", "content": f"question {i}: yes or no?"}]


def assert_nothing_poisoned(cache: QueryCache) -> None:
    """Every entry is well formed, under the key of its own question, and holds a parsed answer."""
    n, bad = cache.verify()
    assert bad == []
    for path in cache.files():
        assert cache.get(path.stem)["response"]["content"] in ("yes", "no")


def assert_nothing_leaked(tmp_path, *texts) -> None:
    for path in tmp_path.rglob("*"):
        assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path
    for text in texts:
        assert SECRET not in text


def test_writer_processes_sharing_a_cache_ask_each_question_once_and_agree():
    # 4 processes x the same 300 questions; the endpoint answers each call differently, so an
    # answer asked twice, or a process keeping its own answer after another was stored, shows.
    got = bench_shared_cache(4, 300, start="fork")
    assert got["answers_used"] == 1200 and got["entries"] == 300
    assert got["answers_differing_from_cache"] == 0
    assert got["calls"] == 300 and got["ledger_calls"] == 300
    assert got["lock_or_temporary_files_left"] == 0


def test_threads_asking_one_question_make_one_call(server, client):
    server.script = [{"delay": 0.2, "then": "yes"}]
    c = client(concurrency=8)
    answers = c.map(lambda _: c.complete(question(0), "t").text, range(8))
    assert answers == ["yes"] * 8 and server.calls == 1
    row = c.accounting.row("faults", "t")
    assert (row["calls"], row["cache_hits"]) == (1, 7)


def test_a_writer_that_loses_the_race_uses_the_stored_answer(server, client):
    c = client()
    key = cache_key(c.config.model, c.config.endpoint, question(0), c.config.request_params(0), 0, YES_NO)

    def racing(messages):  # another process stores its answer while this one is being answered
        c.cache.put(key, {"request": {"model": c.config.model, "endpoint": c.config.endpoint,
                                      "messages": question(0), "params": c.config.request_params(0), "sample": 0,
                                      "schema": YES_NO},
                          "response": {"content": "no"}})
        return "yes"
    server.responder = racing
    assert c.ask_yes_no(question(0), "t") is False
    assert c.cache.get(key)["response"]["content"] == "no"
    assert not list(c.cache.root.rglob(".*"))  # no temporary, no lock left


def test_a_lock_left_by_a_killed_process_does_not_block(server, client):
    server.script = ["yes"]
    c = client()
    key = cache_key(c.config.model, c.config.endpoint, question(0), c.config.request_params(0), 0)
    lock = c.cache.path(key).with_name(f".{key}.lock")
    lock.parent.mkdir(parents=True)
    lock.write_text("")
    assert c.complete(question(0), "t").text == "yes"
    assert not lock.exists()


def test_throttling_and_failures_lose_nothing_and_poison_nothing(server, client, tmp_path):
    # Ten questions; the endpoint throttles (429 + Retry-After), fails (500) and stalls (a
    # time-out) along the way. Each question either gets its answer or fails in one line.
    c = client(timeout=0.3, retries=1, timeout_retries=1)
    server.script = [{"status": 429, "headers": FAST}, "yes",  # q0: one retry, then answered
                     {"status": 500, "headers": FAST}, {"status": 500, "headers": FAST},  # q1: fails for good
                     "no",  # q2
                     {"delay": 0.6, "then": "yes"}, "yes",  # q3: a time-out, then answered
                     {"status": 503, "headers": FAST}, {"status": 502, "headers": FAST}]  # q4: fails for good
    results = {}
    for i in range(5):
        try:
            results[i] = c.ask_yes_no(question(i), "t")
        except LLMError as exc:
            results[i] = str(exc)
    assert results[0] is True and results[2] is False and results[3] is True
    assert "failed after 2 attempts" in results[1] and "HTTP 500" in results[1]
    assert "failed after 2 attempts" in results[4] and "HTTP 502" in results[4]
    cache = c.cache
    assert len(cache) == 3
    assert_nothing_poisoned(cache)
    row = c.accounting.row("faults", "t")
    assert (row["calls"], row["retries"], row["errors"]) == (3, 4, 2)
    ledger = read_ledger(cache.root / LEDGER)["faults"]["t"]
    assert {k: ledger[k] for k in ("calls", "retries", "errors")} == {"calls": 3, "retries": 4, "errors": 2}
    # nothing lost: a rerun asks only the two that failed
    time.sleep(0.4)  # the stalled reply is done
    server.script = ["no", "yes"]
    again = client(timeout=0.3, retries=1, timeout_retries=1)
    assert [again.ask_yes_no(question(i), "t") for i in range(5)] == [True, False, False, True, True]
    assert again.accounting.row("faults", "t")["calls"] == 2
    assert_nothing_leaked(tmp_path, *[str(v) for v in results.values()])


@pytest.fixture
def stalled():
    """An endpoint that takes every connection and never answers: its URL and the connections taken."""
    listener = socket.create_server(("127.0.0.1", 0))
    taken = []

    def take():
        while True:
            try:
                taken.append(listener.accept()[0])
            except OSError:  # closed
                return
    threading.Thread(target=take, daemon=True).start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1", taken
    listener.close()
    for conn in taken:
        conn.close()


def test_the_default_time_out_budget_is_short():
    # A stalled endpoint holds a run timeout x (1 + timeout_retries) seconds (plus back-offs
    # under a second): about a minute with the defaults, not retries x timeout.
    cfg = LLMConfig()
    assert cfg.timeout * (1 + cfg.timeout_retries) <= 90
    assert cfg.timeout_retries < cfg.retries


@pytest.mark.parametrize("structured,attempts", [("text", 2), ("auto", 1)])  # auto: the probe stalls, unretried
def test_a_stalled_endpoint_stops_the_run_in_its_time_out_budget(stalled, client, structured, attempts):
    url, taken = stalled
    c = client(base_url=url, timeout=0.3, retries=4, timeout_retries=1, structured=structured)
    start = time.perf_counter()
    with pytest.raises(LLMError) as err:
        c.map(lambda i: c.ask_yes_no(question(i), "t"), range(5))
    took = time.perf_counter() - start
    line = (f"LLM call for stage 'faults', role 't' failed after {attempts} attempt{'s' * (attempts > 1)} at {url}: "
            "no answer within llm.timeout (0.3 s); an endpoint that is up but slower needs a larger llm.timeout "
            "(or llm.timeout_retries) in params.yaml")
    assert str(err.value) == line
    assert len(taken) == attempts  # the questions queued behind the first were never sent
    assert took < 0.3 * attempts + 0.5 + 2  # the time-outs, a back-off of at most 0.5 s, room for a busy machine
    with pytest.raises(LLMError) as again:  # a later call fails at once, with the same line
        c.complete(question(9), "t")
    assert str(again.value) == line and len(taken) == attempts
    assert len(c.cache) == 0


class Plan(pydantic.BaseModel):
    steps: list[str]


@pytest.mark.parametrize("script", [
    ["maybe", "perhaps", "no idea"],  # garbage text
    ['{"plan": []}', '{"steps": "collect_wood"}', "[1, 2]"],  # JSON off the schema
])
def test_answers_that_never_parse_are_cached_as_unusable(server, client, script):
    server.script = list(script)
    c = client(reasks=2)
    with pytest.raises(UnusableAnswer) as err:
        c.ask_json(question(0), Plan, "planner")
    (path,) = c.cache.files()
    assert c.cache.get(path.stem)["unusable"] == str(err.value)
    assert c.cache.verify() == (1, [])
    assert read_ledger(c.cache.root / LEDGER)["faults"]["planner"]["calls"] == 3


@pytest.mark.parametrize("body", ["<html>500</html>", '{"choices": []}', '{"object": "chat.completion"}',
                                  json.dumps({"choices": [{"message": {"role": "assistant", "content": 1}}]})])
def test_garbage_bodies_are_errors_not_answers(server, client, body):
    server.script = [{"raw": body}]
    c = client()
    with pytest.raises(LLMError, match="sent a reply that is not a chat completion with text"):
        c.complete(question(0), "t")
    assert len(c.cache) == 0


def test_an_endpoint_echoing_the_key_leaks_it_nowhere(server, client, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)  # the SDK's and httpx's own logging too
    c = client(retries=1)
    server.script = [f"yes (you sent {SECRET})",
                     {"status": 500, "message": f"upstream rejected {SECRET}", "headers": FAST},
                     {"status": 401, "message": f"Incorrect API key provided: {SECRET}"},
                     {"raw": f"<html>bad gateway for Bearer {SECRET}</html>"},
                     {"status": 401, "message": f"Bearer {SECRET}"}]
    messages = [c.complete(question(0), "t").text]
    for i in range(1, 4):
        with pytest.raises(LLMError) as err:
            c.complete(question(i), "t")
        messages.append(str(err.value))
    assert messages[0] == "yes (you sent ***)"
    assert "HTTP 401: Incorrect API key provided: ***" in messages[1]
    assert_nothing_leaked(tmp_path, *messages, caplog.text)
