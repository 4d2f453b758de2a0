"""The LLM client driven over real HTTP against a local OpenAI-compatible stub server."""
import json
import multiprocessing as mp

import pydantic
import pytest

from regula.llm import (Accounting, CacheError, LLMClient, LLMConfig, LLMError, QueryCache, ReplayMiss,
                        cache_key, parse_yes_no)
from regula.llm.cache import merge
from regula.llm.stub_server import StubLLMServer
from regula.errors import ParamsError

Q = [{"role": "user", "content": "Does collect_wood need a tool? yes or no"}]


@pytest.fixture
def server():
    with StubLLMServer() as s:
        yield s


def client(server, tmp_path, **kw):
    cfg = LLMConfig(base_url=server.base_url, model=server.model, cache_dir=str(tmp_path / "cache"), backoff=0.01,
                    **{"timeout": 5.0, **kw})
    return LLMClient(cfg, "test", Accounting())


def test_cache_hit_after_first_call(server, tmp_path):
    server.script = ["No."]
    c = client(server, tmp_path)
    assert c.ask_yes_no(Q, "teacher") is False
    assert c.ask_yes_no(Q, "teacher") is False
    assert server.calls == 1
    row = c.accounting.row("test", "teacher")
    assert (row["calls"], row["cache_hits"]) == (1, 1)
    assert row["tokens_in"] > 0 and row["tokens_out"] == 1
    entry = c.cache.get(c.complete(Q, "teacher").key)
    assert entry["request"]["messages"] == Q and entry["response"]["content"] == "No."
    assert entry["role"] == "teacher" and entry["stage"] == "test"


def test_sample_index_makes_repeats_cacheable(server, tmp_path):
    server.script = ["yes", "no", "yes"]
    c = client(server, tmp_path)
    assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"]
    assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"]
    assert server.calls == 3


def test_replay_miss_names_stage_role_and_key(server, tmp_path):
    c = client(server, tmp_path, mode="replay")
    with pytest.raises(ReplayMiss) as err:
        c.complete(Q, "teacher")
    key = cache_key(c.config.model, Q, c.config.sampling(), 0)
    assert f"stage 'test', role 'teacher', key {key}" in str(err.value)
    assert server.calls == 0


def test_refresh_calls_and_overwrites(server, tmp_path):
    server.script = ["yes", "no"]
    assert client(server, tmp_path).complete(Q, "r").text == "yes"
    assert client(server, tmp_path, mode="refresh").complete(Q, "r").text == "no"
    assert client(server, tmp_path, mode="replay").complete(Q, "r").text == "no"


def test_retries_on_429_and_500(server, tmp_path):
    server.script = [{"status": 429}, {"status": 500}, {"status": 503}, "yes"]
    c = client(server, tmp_path)
    assert c.ask_yes_no(Q, "t") is True
    assert server.calls == 4
    assert c.accounting.row("test", "t")["retries"] == 3


def test_gives_up_after_retries_with_a_clear_error(server, tmp_path):
    server.script = [{"status": 500}] * 3
    c = client(server, tmp_path, retries=2)
    with pytest.raises(LLMError, match=r"failed after 3 attempts at http://127.0.0.1:\d+/v1: HTTP 500"):
        c.complete(Q, "t")
    assert len(c.cache) == 0


def test_client_error_is_not_retried(server, tmp_path):
    server.script = [{"status": 401, "message": "bad key"}]
    c = client(server, tmp_path)
    with pytest.raises(LLMError, match=r"refused the request with HTTP 401: bad key \(is \$OPENAI_API_KEY set\?\)"):
        c.complete(Q, "t")
    assert server.calls == 1


def test_timeout_then_success(server, tmp_path):
    server.script = [{"delay": 1.5, "then": "no"}, "yes"]
    c = client(server, tmp_path, timeout=0.5)
    assert c.complete(Q, "t").text == "yes"


def test_timeout_for_good(server, tmp_path):
    server.script = [{"delay": 1.0, "then": "x"}] * 2
    c = client(server, tmp_path, timeout=0.3, retries=1)
    with pytest.raises(LLMError, match="timed out after 0.3 s"):
        c.complete(Q, "t")


def test_malformed_body_is_retried(server, tmp_path):
    server.script = [{"raw": "this is not json"}, "yes"]
    c = client(server, tmp_path)
    assert c.complete(Q, "t").text == "yes"


def test_connection_refused(tmp_path):
    cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path), retries=1, backoff=0.01)
    with pytest.raises(LLMError, match="connection failed"):
        LLMClient(cfg, "test").complete(Q, "t")


class Verdict(pydantic.BaseModel):
    skill: str
    succeeds: bool


def test_schema_reask_with_the_validation_error(server, tmp_path):
    server.script = ["sure!", '{"skill": "collect_wood"}', '```json\n{"skill": "collect_wood", "succeeds": true}\n```']
    c = client(server, tmp_path)
    got = c.ask_json(Q, Verdict, "critic")
    assert got == Verdict(skill="collect_wood", succeeds=True)
    assert c.accounting.row("test", "critic")["reasks"] == 2
    second = server.requests[1]["messages"]
    assert "not valid JSON" in second[-1]["content"] and second[-2]["content"] == "sure!"
    third = server.requests[2]["messages"]
    assert "does not match the schema" in third[-1]["content"] and "succeeds" in third[-1]["content"]
    # the whole conversation replays from the cache
    again = client(server, tmp_path, mode="replay").ask_json(Q, Verdict, "critic")
    assert again == got and server.calls == 3


def test_schema_gives_up(server, tmp_path):
    server.script = ["no json", "still none"]
    c = client(server, tmp_path, reasks=1)
    with pytest.raises(LLMError, match=r"no usable answer after 2 tries; last answer 'still none'"):
        c.ask_json(Q, Verdict, "critic")


@pytest.mark.parametrize("text,value", [("Yes.", True), ("**No**, it needs a pickaxe", False),
                                        ("Answer: yes", True), ("TRUE", True), ("I think not... no", False),
                                        ("maybe", None), ("", None)])
def test_parse_yes_no(text, value):
    assert parse_yes_no(text) is value


def test_corrupt_entry_names_the_file(server, tmp_path):
    c = client(server, tmp_path)
    answer = c.complete(Q, "t")
    path = c.cache.path(answer.key)
    path.write_text('{"request": {"model": "m"}, "respo')
    with pytest.raises(CacheError, match=rf"corrupt LLM cache entry {path}: not valid JSON"):
        c.complete(Q, "t")
    n, bad = c.cache.verify()
    assert n == 1 and len(bad) == 1 and str(path) in bad[0]


def _writer(root, worker, n):
    cache = QueryCache(root)
    for i in range(n):
        key = cache_key("m", [{"role": "user", "content": f"q{i % 40}"}], {}, 0)  # shared keys too
        cache.put(key, {"request": {"model": "m", "i": i % 40}, "response": {"content": f"a{i % 40}"},
                        "role": f"w{worker}"})


def test_concurrent_writers_lose_and_corrupt_nothing(tmp_path):
    ctx = mp.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = QueryCache(tmp_path)
    n, bad = cache.verify()
    assert (n, bad) == (40, [])
    assert not list(tmp_path.rglob(".tmp-*"))
    for i in range(40):
        assert cache.get(cache_key("m", [{"role": "user", "content": f"q{i}"}], {}, 0))["response"]["content"] == f"a{i}"


def test_merge_is_a_union(tmp_path):
    a, b = QueryCache(tmp_path / "a"), QueryCache(tmp_path / "b")
    for i in range(3):
        a.put(f"{i:02d}aa", {"request": {}, "response": {"content": "x"}})
    b.put("01aa", {"request": {}, "response": {"content": "x"}})
    b.put("09bb", {"request": {}, "response": {"content": "y"}})
    b.put("02aa", {"request": {}, "response": {"content": "different"}})
    assert merge(tmp_path / "a", tmp_path / "b") == {"copied": 1, "already_there": 1, "conflicts": 1}
    assert len(b) == 4 and b.get("02aa")["response"]["content"] == "different"


def test_concurrency_limit_and_map(server, tmp_path):
    server.script = [{"delay": 0.2, "then": "yes"}] * 8
    c = client(server, tmp_path, concurrency=4)
    import time
    t = time.perf_counter()
    got = c.map(lambda i: c.complete([{"role": "user", "content": str(i)}], "t").text, list(range(8)))
    elapsed = time.perf_counter() - t
    assert got == ["yes"] * 8
    assert 0.35 < elapsed < 1.5  # two waves of four, not eight at once nor one by one


def test_bad_config():
    with pytest.raises(ParamsError, match=r"^params: llm.mode: 'offline' is not one of live, refresh, replay$"):
        LLMConfig(mode="offline")


def test_api_key_is_never_written(server, tmp_path, monkeypatch):
    monkeypatch.setenv("REGULA_TEST_KEY", "sk-secret-123")
    c = client(server, tmp_path, api_key_env="REGULA_TEST_KEY")
    c.complete(Q, "t")
    for path in (tmp_path / "cache").rglob("*.json"):
        assert "sk-secret-123" not in path.read_text()
    assert "sk-secret-123" not in json.dumps(c.accounting.to_dict())
