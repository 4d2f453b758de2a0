"""The LLM client driven over real HTTP against a local OpenAI-compatible stub server."""
import json
import time

import pydantic
import pytest

from regula.errors import ParamsError
from regula.llm import (Accounting, CacheError, LLMClient, LLMConfig, LLMError, QueryCache, ReplayMiss,
                        UnusableAnswer, cache_key, parse_yes_no)
from regula.llm.accounting import merge as merge_accounting, read_ledger
from regula.llm.cache import LEDGER, merge
from regula.llm.client import YES_NO
from regula.llm.stub_server import StubLLMServer

Q = [{"role": "user", "content": "Does collect_wood need a tool? yes or no"}]
MODEL = "regula-stub"  # the model the stub server serves


@pytest.fixture
def server():
    with StubLLMServer() as s:
        yield s


def client(server, tmp_path, **kw):
    # a fixed form: a probe would take the first scripted answer
    cfg = LLMConfig(**{"base_url": server.base_url, "model": MODEL, "cache_dir": str(tmp_path / "cache"),
                       "timeout": 5.0, "structured": "text", **kw})
    return LLMClient(cfg, "test", Accounting())


def endpoint(server) -> str:
    return server.base_url.split("/")[2]


def key_of(c, messages=Q, sample=0, schema=None) -> str:
    return cache_key(c.config.model, c.config.endpoint, messages, c.config.request_params(sample), sample, schema)


def test_cache_hit_after_first_call(server, tmp_path):
    server.script = ["No."]
    c = client(server, tmp_path)
    assert c.ask_yes_no(Q, "teacher") is False
    assert c.ask_yes_no(Q, "teacher") is False
    assert server.calls == 1
    row = c.accounting.row("test", "teacher")
    assert (row["calls"], row["cache_hits"]) == (1, 1)
    assert row["tokens_in"] > 0 and row["tokens_out"] == 1
    entry = c.cache.get(key_of(c, schema=YES_NO))
    assert entry["request"]["messages"] == Q and entry["response"]["content"] == "No."
    assert entry["role"] == "teacher" and entry["stage"] == "test" and entry["reasks"] == []


def test_sample_index_makes_repeats_cacheable(server, tmp_path):
    server.script = ["yes", "no", "yes"]
    c = client(server, tmp_path)
    assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"]
    assert [a.text for a in c.samples(Q, "teacher", 3)] == ["yes", "no", "yes"]
    assert server.calls == 3


def test_replay_miss_is_one_line_naming_stage_role_key_and_how_to_fill_it(server, tmp_path):
    c = client(server, tmp_path, mode="replay")
    with pytest.raises(ReplayMiss) as err:
        c.complete(Q, "teacher")
    assert str(err.value) == (
        f"replay mode: no cached answer for stage 'test', role 'teacher', key {key_of(c)} ({MODEL} at "
        f"{endpoint(server)}) in {tmp_path / 'cache' / 'test'}; to fill it, run the stage with llm.mode: live "
        "against the endpoint, or get a cache that has it (`dvc pull`, `regula cache merge`)")
    assert server.calls == 0 and not (tmp_path / "cache").exists()


def test_refresh_calls_and_overwrites(server, tmp_path):
    server.script = ["yes", "no"]
    assert client(server, tmp_path).complete(Q, "r").text == "yes"
    assert client(server, tmp_path, mode="refresh").complete(Q, "r").text == "no"
    assert client(server, tmp_path, mode="replay").complete(Q, "r").text == "no"


# -- transport: the SDK's retries -------------------------------------------------------------------

def test_retries_on_429_and_500_are_the_sdks_and_are_counted(server, tmp_path):
    fast = {"Retry-After": "0.01"}
    server.script = [{"status": 429, "headers": fast}, {"status": 500, "headers": fast},
                     {"status": 503, "headers": fast}, "yes"]
    c = client(server, tmp_path, retries=3)
    assert c.ask_yes_no(Q, "t") is True
    assert server.calls == 4
    row = c.accounting.row("test", "t")
    assert (row["retries"], row["calls"], row["errors"]) == (3, 1, 0)


def test_retry_after_is_honoured(server, tmp_path):
    server.script = ["warm", {"status": 429, "headers": {"Retry-After": "0.6"}}, "yes"]
    c = client(server, tmp_path, retries=1)
    c.complete([{"role": "user", "content": "warm up"}], "t")  # the SDK's import is not timed
    t = time.perf_counter()
    assert c.complete(Q, "t").text == "yes"
    assert time.perf_counter() - t >= 0.6
    assert c.accounting.row("test", "t")["retries"] == 1


def test_gives_up_after_retries_with_a_clear_error(server, tmp_path):
    server.script = [{"status": 500, "headers": {"Retry-After": "0.01"}}] * 3
    c = client(server, tmp_path, retries=2)
    with pytest.raises(LLMError) as err:
        c.complete(Q, "t")
    assert str(err.value) == (f"LLM call for stage 'test', role 't' failed after 3 attempts at {server.base_url}: "
                              "HTTP 500 (scripted error)")
    assert server.calls == 3 and len(c.cache) == 0
    assert c.accounting.row("test", "t")["errors"] == 1


def test_client_error_is_not_retried(server, tmp_path):
    server.script = [{"status": 401, "message": "bad key"}]
    c = client(server, tmp_path)
    with pytest.raises(LLMError, match=r"refused the request for stage 'test', role 't' with HTTP 401: bad key "
                                       r"\(is \$OPENAI_API_KEY set to a valid key\?\)$"):
        c.complete(Q, "t")
    assert server.calls == 1


def test_timeout_then_success(server, tmp_path):
    server.script = [{"delay": 1.5, "then": "no"}, "yes"]
    c = client(server, tmp_path, timeout=0.5, timeout_retries=1)
    assert c.complete(Q, "t").text == "yes"
    assert c.accounting.row("test", "t")["retries"] == 1


def test_timeout_for_good(server, tmp_path):
    server.script = [{"delay": 1.0, "then": "x"}] * 2
    c = client(server, tmp_path, timeout=0.3, retries=1, timeout_retries=1)
    with pytest.raises(LLMError, match=r"failed after 2 attempts at .*: no answer within llm.timeout \(0.3 s\); "):
        c.complete(Q, "t")


def test_time_outs_are_retried_fewer_times_than_other_failures(server, tmp_path):
    # retries: 3 would take a 500 three times more; a time-out, none (timeout_retries: 0)
    server.script = [{"status": 500, "headers": {"Retry-After": "0.01"}}, {"delay": 1.0, "then": "x"}, "yes"]
    c = client(server, tmp_path, timeout=0.3, retries=3, timeout_retries=0)
    with pytest.raises(LLMError, match=r"failed after 2 attempts at .*: no answer within llm.timeout \(0.3 s\); "):
        c.complete(Q, "t")
    assert server.script == ["yes"]


def test_connection_refused(tmp_path):
    cfg = LLMConfig(base_url="http://127.0.0.1:9/v1", cache_dir=str(tmp_path), retries=0)
    with pytest.raises(LLMError, match="failed after 1 attempt at http://127.0.0.1:9/v1: connection failed"):
        LLMClient(cfg, "test").complete(Q, "t")


# -- only answers that parse are cached ------------------------------------------------------------

class Verdict(pydantic.BaseModel):
    skill: str
    succeeds: bool


def test_an_answer_that_never_parses_is_cached_as_unusable_and_raised_again(server, tmp_path):
    server.script = ["maybe", "perhaps", "who knows"]
    c = client(server, tmp_path, reasks=2)
    message = ("role 't' of stage 'test': no usable answer after 3 tries; last answer 'who knows': "
               "it says neither yes nor no")
    with pytest.raises(UnusableAnswer) as err:
        c.ask_yes_no(Q, "t")
    assert str(err.value) == message
    entry = c.cache.get(key_of(c, schema=YES_NO))
    assert (entry["unusable"], entry["response"]["content"]) == (message, "who knows")
    assert [r["answer"] for r in entry["reasks"]] == ["maybe", "perhaps"]
    for mode in ("live", "replay"):  # a hit raises it again: a replay drops what the live run dropped
        with pytest.raises(UnusableAnswer) as err:
            client(server, tmp_path, mode=mode).ask_yes_no(Q, "t")
        assert str(err.value) == message
    assert server.calls == 3
    server.script = ["yes"]
    assert client(server, tmp_path, mode="refresh").ask_yes_no(Q, "t") is True  # refresh asks again
    assert server.calls == 4


@pytest.mark.parametrize("content", [5, None, {"text": "yes"}, ["yes"]])
def test_content_that_is_not_text_is_one_line_and_not_cached(server, tmp_path, content):
    reply = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": content}}]}
    server.script = [{"raw": json.dumps(reply)}]
    c = client(server, tmp_path)
    with pytest.raises(LLMError) as err:
        c.ask_yes_no(Q, "t")
    assert str(err.value) == (f"LLM endpoint {server.base_url} ({MODEL}) sent a reply that is not a chat completion "
                              "with text for stage 'test', role 't': choices.0.message.content: Input should be a "
                              "valid string")
    assert len(c.cache) == 0 and c.accounting.row("test", "t")["errors"] == 1


def test_malformed_body_stops_with_one_line(server, tmp_path):
    server.script = [{"raw": "this is not json"}]
    c = client(server, tmp_path)
    with pytest.raises(LLMError, match=r"sent a reply that is not a chat completion with text for stage 'test', "
                                       r"role 't': the body: Invalid JSON: expected ident at line 1 column 2$"):
        c.complete(Q, "t")
    assert server.calls == 1 and len(c.cache) == 0


def test_a_reasked_answer_is_cached_under_the_question_and_replays_byte_identical(server, tmp_path):
    server.script = ["sure!", '{"skill": "collect_wood"}', '```json\n{"skill": "collect_wood", "succeeds": true}\n```']
    c = client(server, tmp_path)
    got = c.ask_json(Q, Verdict, "critic")
    assert got == Verdict(skill="collect_wood", succeeds=True)
    assert c.accounting.row("test", "critic")["reasks"] == 2
    second = server.requests[1]["messages"]
    assert "not valid JSON" in second[-1]["content"] and second[-2]["content"] == "sure!"
    third = server.requests[2]["messages"]
    assert "does not match the schema" in third[-1]["content"] and "succeeds" in third[-1]["content"]
    # one entry, under the question asked, holding the answer that parsed and the re-asks before it
    (path,) = c.cache.files()
    entry = c.cache.get(path.stem)
    assert path.stem == key_of(c, schema=Verdict.model_json_schema()) and entry["request"]["messages"] == Q
    assert entry["response"]["content"] == '```json\n{"skill": "collect_wood", "succeeds": true}\n```'
    assert [r["answer"] for r in entry["reasks"]] == ["sure!", '{"skill": "collect_wood"}']
    replay = client(server, tmp_path, mode="replay")
    assert replay.ask_json(Q, Verdict, "critic") == got and server.calls == 3


def test_schema_gives_up(server, tmp_path):
    server.script = ["no json", "still none"]
    c = client(server, tmp_path, reasks=1)
    with pytest.raises(UnusableAnswer, match=r"no usable answer after 2 tries; last answer 'still none'"):
        c.ask_json(Q, Verdict, "critic")
    assert c.cache.get(key_of(c, schema=Verdict.model_json_schema()))["unusable"].endswith(
        "last answer 'still none': not valid JSON (Expecting value)")


def test_a_cached_answer_that_does_not_parse_names_its_file(server, tmp_path):
    server.script = ["maybe"]
    c = client(server, tmp_path)
    assert c.complete(Q, "t").text == "maybe"  # any text will do for a plain completion
    entry, key = c.cache.get(key_of(c)), key_of(c, schema=YES_NO)  # the text filed as a yes/no answer
    c.cache.put(key, {**entry, "request": {**entry["request"], "schema": YES_NO}})
    with pytest.raises(CacheError, match=rf"^LLM cache entry {c.cache.path(key)} holds an answer that does "
                                         r"not parse \(it says neither yes nor no\); delete it to ask again$"):
        c.ask_yes_no(Q, "t")


@pytest.mark.parametrize("text,value", [("Yes.", True), ("**No**, it needs a pickaxe", False),
                                        ("Answer: yes", True), ("TRUE", True), ("I think not... no", False),
                                        ("maybe", None), ("", None)])
def test_parse_yes_no(text, value):
    assert parse_yes_no(text) is value


# -- the key names the model and the endpoint -----------------------------------------------------

def test_the_same_question_to_another_endpoint_is_asked_there(tmp_path):
    with StubLLMServer() as a, StubLLMServer() as b:
        a.script, b.script = ["yes"], ["no"]
        assert client(a, tmp_path).ask_yes_no(Q, "t") is True
        cb = client(b, tmp_path)
        assert cb.ask_yes_no(Q, "t") is False and b.calls == 1
        entry = cb.cache.get(key_of(cb, schema=YES_NO))
        assert entry["request"]["endpoint"] == endpoint(b) and entry["request"]["model"] == MODEL
        assert cb.accounting.to_dict()["test"]["t"]["endpoint"] == endpoint(b)
        # endpoint_id names an endpoint whatever its URL: a replay elsewhere finds its answers
        moved = client(b, tmp_path, mode="replay", endpoint_id=endpoint(a), base_url="http://127.0.0.1:9/v1")
        assert moved.ask_yes_no(Q, "t") is True


def test_endpoint_defaults_to_host_and_port_without_credentials():
    assert LLMConfig(base_url="http://example.org:8080/v1").endpoint == "example.org:8080"
    assert LLMConfig(base_url="https://api.openai.com/v1").endpoint == "api.openai.com"
    assert LLMConfig(endpoint_id="openai").endpoint == "openai"


def test_provenance_in_the_report_table_names_model_and_endpoint(server, tmp_path):
    from regula.report.tables import llm_table
    server.script = ["yes"]
    c = client(server, tmp_path)
    c.ask_yes_no(Q, "feedback")
    row = llm_table(c.accounting.to_dict()).iloc[0]
    assert (row["model"], row["endpoint"], row["calls"]) == (MODEL, endpoint(server), 1)


def test_accounting_merge_keeps_provenance():
    a = {"s": {"r": {"calls": 1, "model": "m", "endpoint": "e1"}}}
    b = {"s": {"r": {"calls": 2, "model": "m", "endpoint": "e2"}}}
    assert merge_accounting(a, b) == {"s": {"r": {"calls": 3, "model": "m", "endpoint": "e1, e2"}}}


# -- secrets ---------------------------------------------------------------------------------------

SECRET = "sk-regula-sentinel-0123456789"


def test_api_key_env_holding_a_key_is_rejected_without_echoing_it():
    with pytest.raises(ParamsError) as err:
        LLMConfig(api_key_env=SECRET)
    assert str(err.value) == ("params: llm.api_key_env must be the name of the environment variable holding the "
                              "key (letters, digits and _, such as OPENAI_API_KEY), not the key itself (the value "
                              "is not shown)")


def test_a_401_that_echoes_the_key_is_redacted(server, tmp_path, monkeypatch):
    monkeypatch.setenv("REGULA_TEST_KEY", SECRET)
    server.script = [{"status": 401, "message": f"Incorrect API key provided: {SECRET}. Bearer {SECRET}"}]
    c = client(server, tmp_path, api_key_env="REGULA_TEST_KEY")
    with pytest.raises(LLMError) as err:
        c.complete(Q, "t")
    assert str(err.value) == (f"LLM endpoint {server.base_url} refused the request for stage 'test', role 't' with "
                              "HTTP 401: Incorrect API key provided: ***. Bearer *** (is $REGULA_TEST_KEY set to a "
                              "valid key?)")


def test_key_like_tokens_are_redacted_even_when_not_ours(server, tmp_path):
    server.script = [{"status": 403, "message": "key sk-someone-elses-key-123 is disabled"}]
    with pytest.raises(LLMError, match=r"HTTP 403: key sk-\*\*\* is disabled"):
        client(server, tmp_path).complete(Q, "t")


def test_credentials_in_base_url_are_refused_without_being_shown():
    """They would be written wherever params go (dvc.lock, Prefect's records, git)."""
    with pytest.raises(ParamsError) as err:
        LLMConfig(base_url="http://alice:hunter2@example.org/v1")
    assert "hunter2" not in str(err.value) and "alice" not in str(err.value)
    assert "must not hold credentials (user:password@), got 'http://example.org/v1'" in str(err.value)


def test_api_key_is_never_written(server, tmp_path, monkeypatch):
    monkeypatch.setenv("REGULA_TEST_KEY", SECRET)
    server.script = [f"yes, and your key is {SECRET}"]
    c = client(server, tmp_path, api_key_env="REGULA_TEST_KEY")
    assert c.complete(Q, "t").text == "yes, and your key is ***"
    for path in (tmp_path / "cache").rglob("*"):
        assert not path.is_file() or SECRET not in path.read_text()
    assert SECRET not in json.dumps(c.accounting.to_dict())


# -- accounting survives a failed run ----------------------------------------------------------------

def test_calls_before_a_failure_are_in_the_ledger(server, tmp_path):
    server.script = ["yes", "no", {"status": 401}]
    c = client(server, tmp_path)
    c.complete([{"role": "user", "content": "1"}], "t")
    c.complete([{"role": "user", "content": "2"}], "t")
    c.complete([{"role": "user", "content": "1"}], "t")  # a hit costs nothing: not in the ledger
    with pytest.raises(LLMError):
        c.complete([{"role": "user", "content": "3"}], "t")
    row = read_ledger(c.cache.root / LEDGER)["test"]["t"]
    assert (row["calls"], row["errors"], row["cache_hits"]) == (2, 1, 0)
    assert (row["model"], row["endpoint"]) == (MODEL, endpoint(server))
    assert row["tokens_in"] == c.accounting.row("test", "t")["tokens_in"] > 0


def test_a_replay_leaves_the_cache_folder_as_it_was(server, tmp_path):
    from cli_run import snapshot
    server.script = ["yes"]
    client(server, tmp_path).complete(Q, "t")
    before = snapshot(tmp_path / "cache")
    assert client(server, tmp_path, mode="replay").complete(Q, "t").text == "yes"
    assert snapshot(tmp_path / "cache") == before


# -- the cache on disk ----------------------------------------------------------------------------------

def test_corrupt_entry_names_the_file(server, tmp_path):
    c = client(server, tmp_path)
    answer = c.complete(Q, "t")
    path = c.cache.path(answer.key)
    path.write_text('{"request": {"model": "m"}, "respo')
    with pytest.raises(CacheError, match=rf"corrupt LLM cache entry {path}: not valid JSON"):
        c.complete(Q, "t")
    n, bad = c.cache.verify()
    assert n == 1 and len(bad) == 1 and str(path) in bad[0]


def _entry(content="x", question="q", model="m", endpoint="e") -> tuple[str, dict]:
    request = {"model": model, "endpoint": endpoint, "messages": [{"role": "user", "content": question}],
               "params": {}, "sample": 0}
    return cache_key(model, endpoint, request["messages"], {}, 0), {"request": request, "response": {"content": content}}


def test_verify_checks_each_entrys_shape_and_key(tmp_path):
    cache = QueryCache(tmp_path)
    k1, e1 = _entry(question="a")
    k2, e2 = _entry(question="b")
    cache.put(k1, e1)
    cache.put(k2, {**e2, "response": {"content": 7}})
    (tmp_path / "zz").write_text("stray")
    n, bad = cache.verify()
    assert n == 2 and bad == [f"{tmp_path / 'zz'}: a file where a shard folder should be",
                              f"corrupt LLM cache entry {cache.path(k2)}: response.content: Input should be a valid "
                              "string; delete it to ask again"]
    with pytest.raises(CacheError, match=f"^LLM cache folder {tmp_path / 'nope'} does not exist$"):
        QueryCache(tmp_path / "nope").verify()


def test_an_entry_whose_question_was_changed_is_not_an_answer(tmp_path):
    cache = QueryCache(tmp_path)
    key, entry = _entry(question="is it safe?")
    entry["request"]["messages"][0]["content"] = "is it dangerous?"
    cache.put(key, entry)
    with pytest.raises(CacheError, match="its request does not hash to its key"):
        cache.get(key)


def test_put_never_replaces_an_answer_unless_asked(tmp_path):
    cache = QueryCache(tmp_path)
    key, entry = _entry("first")
    assert cache.put(key, entry)["response"]["content"] == "first"
    assert cache.put(key, _entry("second")[1])["response"]["content"] == "first"
    assert cache.get(key)["response"]["content"] == "first"
    assert cache.put(key, _entry("third")[1], replace=True)["response"]["content"] == "third"
    assert [p.name for p in tmp_path.rglob("*")] == [key[:2], f"{key}.json"]  # no temporaries, no locks


def test_merge_is_a_union_with_named_conflicts_whichever_way(tmp_path):
    def fill(root, entries):
        cache = QueryCache(root)
        for key, entry in entries:
            cache.put(key, entry)
        return cache
    shared, only_a, only_b = _entry("x", "q0"), _entry("y", "q1"), _entry("z", "q2")
    mine, theirs = _entry("yes", "q3"), _entry("no", "q3")
    for first, second in (("a", "b"), ("b", "a")):
        root = tmp_path / f"{first}{second}"
        fill(root / "a", [shared, only_a, mine])
        fill(root / "b", [shared, only_b, theirs])
        got = merge(root / first, root / second)
        assert got["copied"] == 1 and got["already_there"] == 1
        assert got["conflicts"] == [{"key": mine[0], "kept": "no", "dropped": "yes"}]  # '"no"' sorts first
    from cli_run import snapshot
    assert snapshot(tmp_path / "ab" / "b") == snapshot(tmp_path / "ba" / "a")
    assert len(QueryCache(tmp_path / "ab" / "b")) == 4


def test_concurrency_limit_and_map(server, tmp_path):
    server.script = [{"delay": 0.2, "then": "yes"}] * 8
    c = client(server, tmp_path, concurrency=4)
    t = time.perf_counter()
    got = c.map(lambda i: c.complete([{"role": "user", "content": str(i)}], "t").text, list(range(8)))
    elapsed = time.perf_counter() - t
    assert got == ["yes"] * 8
    assert 0.35 < elapsed < 1.5  # two waves of four, not eight at once nor one by one


def test_bad_config():
    with pytest.raises(ParamsError, match=r"^params: llm.mode: 'offline' is not one of live, refresh, replay$"):
        LLMConfig(mode="offline")


def test_an_answer_longer_than_max_tokens_can_hold_is_unusable_and_kept_cut(server, tmp_path):
    """A broken endpoint's megabyte `yes aaaa...` is no yes: re-asked, then unusable; the cache
    keeps its first 32 x max_tokens characters."""
    huge = "yes " + "a" * 300_000
    server.script = [huge] * 3  # the answer and the two re-asks
    c = client(server, tmp_path, max_tokens=64)
    with pytest.raises(UnusableAnswer) as err:
        c.ask_yes_no(Q, "teacher")
    assert "the answer is 300004 characters long, more than max_tokens (64) can hold" in str(err.value)
    assert server.calls == 3
    entry = c.cache.get(key_of(c, schema=YES_NO))
    assert entry["response"]["content"] == huge[:2048] + " [cut]"
    assert [r["answer"] for r in entry["reasks"]] == [huge[:2048] + " [cut]"] * 2
    server.script = ["yes"]
    assert client(server, tmp_path / "other", max_tokens=64).ask_yes_no(Q, "teacher") is True  # a short one is fine
