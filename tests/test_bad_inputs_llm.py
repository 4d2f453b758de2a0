"""Bad inputs on the LLM surface (#14's corpus): the `llm` params, what an endpoint may send,
and the cache on disk. Each goes through a `regula` command: `regula dive` with the `openai`
discoverer on tiny params (no exploration, so asking is the first thing it does) or a `regula
cache` command. Each ends in exit 2 and one line naming what is wrong, changes no file of the
project, adds no cache entry, and never shows the API key (a sentinel set in the environment).
The project's params files and the LLM cache live beside it, so its snapshot is the project's
own files; the cache is checked on its own (a failed call is recorded in its ledger, nothing else).
"""
import json
import shutil
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from cli_run import check_bad_input, snapshot
from regula import demos, params as params_mod
from regula.llm import QueryCache
from regula.llm.cache import LEDGER
from regula.llm.stub_server import StubLLMServer

SECRET = "sk-regula-corpus-sentinel-4242"
ENV = {"REGULA_CORPUS_KEY": SECRET}
FAST = {"Retry-After": "0.01"}


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llm_corpus")
    root = tmp / "project"
    # One short demonstration of its own: data/demos is DVC's, absent from a fresh clone (CI).
    demos.generate(params_mod.validate({"demos": {"episodes": 1, "max_steps": 300, "max_skills": 60}}),
                   root / "data" / "demos", tmp / "metrics")
    with StubLLMServer() as server:
        yield SimpleNamespace(tmp=tmp, root=root, server=server, n=0)


def params_file(project, llm: dict | None = None, raw_llm=None) -> Path:
    """Tiny params beside the project: the discoverer asks at once, the key is the sentinel."""
    project.n += 1
    llm = {"base_url": project.server.base_url, "model": "regula-stub", "api_key_env": "REGULA_CORPUS_KEY",
           "retries": 0, "timeout": 5.0, "cache_dir": str(project.tmp / "cache"),
           "structured": "text", **(llm or {})}  # fixed: a probe would take the scripted fault
    # every key, as a params file must give (the defaults, with these over them)
    params = params_mod.laid_over(params_mod.defaults(), {"llm": llm, "dive": {
        "discoverer": "openai", "explore_episodes": 0, "agent_episodes": 1, "conditions": ["dive"]}})
    if raw_llm is not None:
        params["llm"] = raw_llm
    path = project.tmp / f"params_{project.n}.yaml"
    path.write_text(yaml.safe_dump(params))
    return path


def dive(project, params: Path) -> list:
    return ["dive", "--params", params, "--root", project.root]


def no_secret(line: str, *folders: Path) -> None:
    assert SECRET not in line and "hunter2" not in line
    for folder in folders:
        for path in folder.rglob("*"):
            assert not path.is_file() or SECRET.encode() not in path.read_bytes(), path


# -- the endpoint ------------------------------------------------------------------------------------

def reply(**message) -> dict:
    return {"raw": json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "regula-stub",
                               "choices": [{"index": 0, "finish_reason": "stop", "message": message}]})}


NOT_A_COMPLETION = "sent a reply that is not a chat completion with text for stage 'dive', role 'discoverer'"
ENDPOINT = [
    ("401 echoing the key", [{"status": 401, "message": f"Incorrect API key provided: {SECRET}"}], {},
     ["with HTTP 401: Incorrect API key provided: *** (is $REGULA_CORPUS_KEY set to a valid key?)"]),
    ("401 echoing a bearer token", [{"status": 401, "message": f"bad header Authorization: Bearer {SECRET}"}], {},
     ["HTTP 401: bad header Authorization: Bearer ***"]),
    ("401 echoing someone else's key", [{"status": 401, "message": "key sk-abcdef123456 revoked"}], {},
     ["HTTP 401: key sk-*** revoked"]),
    ("403", [{"status": 403, "message": "project has no access"}], {},
     ["refused the request for stage 'dive', role 'discoverer' with HTTP 403: project has no access"]),
    ("404 model not found", [{"status": 404, "message": "The model `regula-stub` does not exist"}], {},
     ["HTTP 404: The model `regula-stub` does not exist (does it serve model 'regula-stub'?)"]),
    ("400", [{"status": 400, "message": "max_tokens is too large"}], {}, ["HTTP 400: max_tokens is too large"]),
    ("422", [{"status": 422, "message": "unprocessable"}], {}, ["HTTP 422: unprocessable"]),
    ("429 forever", [{"status": 429, "headers": FAST}] * 2, {"retries": 1},
     ["failed after 2 attempts at", "HTTP 429 (scripted error)"]),
    ("429 with a Retry-After over two minutes", [{"status": 429, "headers": {"Retry-After": "3600"}}], {"retries": 3},
     ["failed after 1 attempt at", "HTTP 429"]),
    ("500 forever", [{"status": 500, "headers": FAST}] * 2, {"retries": 1}, ["failed after 2 attempts", "HTTP 500"]),
    ("502 forever", [{"status": 502, "headers": FAST}], {}, ["failed after 1 attempt", "HTTP 502"]),
    ("time-outs", [{"delay": 0.4, "then": "x"}], {"timeout": 0.2},
     ["failed after 1 attempt", "no answer within llm.timeout (0.2 s); an endpoint that is up but slower needs a "
      "larger llm.timeout (or llm.timeout_retries) in params.yaml"]),
    ("time-outs, retried as timeout_retries says, not as retries", [{"delay": 0.4, "then": "x"}] * 2,
     {"timeout": 0.2, "retries": 4, "timeout_retries": 1}, ["failed after 2 attempts", "no answer within llm.timeout"]),
    ("connection refused", [], {"base_url": "http://127.0.0.1:9/v1"},
     ["failed after 1 attempt at http://127.0.0.1:9/v1: connection failed"]),
    ("non-JSON body", [{"raw": "this is not json"}], {}, [NOT_A_COMPLETION, "the body: Invalid JSON"]),
    ("HTML error page", [{"raw": "<html><body><h1>502 Bad Gateway</h1></body></html>"}], {},
     [NOT_A_COMPLETION, "the body: Invalid JSON"]),
    ("empty body", [{"raw": ""}], {}, [NOT_A_COMPLETION, "the body: Invalid JSON"]),
    ("a JSON list", [{"raw": "[1, 2]"}], {}, [NOT_A_COMPLETION, "the body: Input should be an object"]),
    ("wrong schema", [{"raw": '{"answer": "yes"}'}], {}, [NOT_A_COMPLETION, "choices: Field required"]),
    ("choices not a list", [{"raw": '{"choices": "yes"}'}], {}, [NOT_A_COMPLETION, "choices: Input should be a valid array"]),
    ("empty choices", [{"raw": '{"choices": []}'}], {}, [NOT_A_COMPLETION, "choices: List should have at least 1 item"]),
    ("no message", [{"raw": '{"choices": [{"index": 0}]}'}], {}, [NOT_A_COMPLETION, "choices.0.message: Field required"]),
    ("null content", [reply(role="assistant", content=None)], {},
     [NOT_A_COMPLETION, "choices.0.message.content: Input should be a valid string"]),
    ("a number as content", [reply(role="assistant", content=5)], {},
     [NOT_A_COMPLETION, "choices.0.message.content: Input should be a valid string"]),
    ("an object as content", [reply(role="assistant", content={"dynamics": []})], {},
     [NOT_A_COMPLETION, "choices.0.message.content: Input should be a valid string"]),
    ("replay miss", [], {"mode": "replay"},
     ["replay mode: no cached answer for stage 'dive', role 'discoverer', key ", "to fill it, run the stage with "
      "llm.mode: live"]),
]


@pytest.mark.parametrize("script,llm,expected", [c[1:] for c in ENDPOINT], ids=[c[0] for c in ENDPOINT])
def test_endpoint_fault(project, script, llm, expected):
    server, cache = project.server, project.tmp / "cache"
    server.script = list(script)
    ledger = cache / "dive" / LEDGER
    spent = ledger.read_text().splitlines() if ledger.exists() else []
    line = check_bad_input(dive(project, params_file(project, llm)), project.root, *expected, env=ENV)
    if "timeout" in llm:
        time.sleep(0.4)  # the stub's late reply lands before the next case runs
    assert server.script == []  # every scripted reply was asked for, no more
    assert len(QueryCache(cache / "dive")) == 0  # nothing cached
    no_secret(line, cache)
    if llm.get("mode") != "replay":  # the failed call is in the ledger
        new = [json.loads(x) for x in ledger.read_text().splitlines()[len(spent):]]
        assert sum(r.get("errors", 0) for r in new) == 1


# -- the llm params ------------------------------------------------------------------------------------

PARAMS = [
    ("base_url not http", {"base_url": "ftp://example.org/v1"},
     "params: llm.base_url must be an http:// or https:// URL with a host, such as http://127.0.0.1:8000/v1, "
     "got 'ftp://example.org/v1'"),
    ("base_url without a scheme", {"base_url": "localhost:8000"}, "llm.base_url must be an http:// or https:// URL"),
    ("base_url without a host", {"base_url": "http:///v1"}, "llm.base_url must be an http:// or https:// URL"),
    ("base_url with a port that is no number", {"base_url": "http://127.0.0.1:port/v1"}, "got 'http://127.0.0.1:port/v1'"),
    ("base_url with credentials and no host", {"base_url": "http://alice:hunter2@:9/v1"}, "got 'http://:9/v1'"),
    ("base_url not a string", {"base_url": 8000}, "params: llm.base_url must be str, got 8000"),
    ("base_url with credentials", {"base_url": "http://alice:hunter2@127.0.0.1:9/v1"},
     "params: llm.base_url must not hold credentials (user:password@), got 'http://127.0.0.1:9/v1'; put the key in "
     "the environment variable that llm.api_key_env names"),
    # A key pasted into any other value: the variable's own value, or anything shaped like a key.
    ("the key as the model", {"model": SECRET}, "params: llm.model holds what looks like an API key (not shown)"),
    ("the key as the endpoint's name", {"endpoint_id": "sk-0123456789abcdefghij"},
     "params: llm.endpoint_id holds what looks like an API key (not shown); a key belongs in the environment "
     "variable that llm.api_key_env names, never in params"),
    ("the key inside the URL's path", {"base_url": f"http://127.0.0.1:9/v1/{SECRET}"},
     "params: llm.base_url holds what looks like an API key (not shown)"),
    ("api_key_env holding a key", {"api_key_env": SECRET},
     "params: llm.api_key_env must be the name of the environment variable holding the key (letters, digits and _, "
     "such as OPENAI_API_KEY), not the key itself (the value is not shown)"),
    ("api_key_env with a dollar", {"api_key_env": "$OPENAI_API_KEY"}, "llm.api_key_env must be the name of"),
    ("api_key_env empty", {"api_key_env": ""}, "llm.api_key_env must be the name of"),
    ("api_key_env with spaces", {"api_key_env": "OPENAI API KEY"}, "llm.api_key_env must be the name of"),
    ("negative timeout", {"timeout": -1.0}, "params: llm.timeout must be > 0.0, got -1.0"),
    ("zero timeout", {"timeout": 0}, "params: llm.timeout must be > 0.0, got 0"),
    ("negative retries", {"retries": -1}, "params: llm.retries must be >= 0, got -1"),
    ("retries as text", {"retries": "4"}, "params: llm.retries must be int, got '4'"),
    ("zero concurrency", {"concurrency": 0}, "params: llm.concurrency must be >= 1, got 0"),
    ("negative concurrency", {"concurrency": -2}, "params: llm.concurrency must be >= 1, got -2"),
    ("unknown mode", {"mode": "offline"}, "params: llm.mode: 'offline' is not one of live, refresh, replay"),
    ("negative reasks", {"reasks": -1}, "params: llm.reasks must be >= 0, got -1"),
    ("negative temperature", {"temperature": -0.5}, "params: llm.temperature must be within 0..2, got -0.5"),
    ("temperature beyond the API's", {"temperature": 2.5}, "params: llm.temperature must be within 0..2, got 2.5"),
    ("zero max_tokens", {"max_tokens": 0}, "params: llm.max_tokens must be >= 1, got 0"),
    ("empty model", {"model": ""}, "params: llm.model: String should have at least 1 character"),
    ("empty cache_dir", {"cache_dir": ""}, "params: llm.cache_dir: String should have at least 1 character"),
    ("endpoint_id not a string", {"endpoint_id": 5}, "params: llm.endpoint_id must be str, got 5"),
    ("the old backoff key", {"backoff": 1.0}, "params: unknown key 'llm.backoff'; known keys under 'llm': api_key_env"),
]


@pytest.mark.parametrize("llm,expected", [c[1:] for c in PARAMS], ids=[c[0] for c in PARAMS])
def test_llm_param(project, llm, expected):
    before = project.server.calls
    line = check_bad_input(dive(project, params_file(project, llm)), project.root, expected, env=ENV)
    no_secret(line)
    assert project.server.calls == before


def test_llm_section_not_a_mapping(project):
    check_bad_input(dive(project, params_file(project, raw_llm=["base_url"])), project.root,
                    "params: llm must be a mapping, got list", env=ENV)


# -- cache entries on disk ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def first_entry(project):
    """A cache holding one entry: the discoverer's first question, answered."""
    cache = project.tmp / "cache_one"
    project.server.script = ['{"dynamics": []}', {"status": 400, "message": "stop here"}]
    check_bad_input(dive(project, params_file(project, {"cache_dir": str(cache)})), project.root, "stop here", env=ENV)
    (path,) = QueryCache(cache / "dive").files()
    return cache, path.relative_to(cache)


def damage(path: Path, how: str) -> None:
    entry = json.loads(path.read_text())
    edits = {
        "invalid JSON": lambda: path.write_text(path.read_text()[:40]),
        "binary": lambda: path.write_bytes(b"\x89PNG\r\n\x1a\n\x00\xff\xfe"),
        "empty file": lambda: path.write_text(""),
        "a JSON list": lambda: path.write_text("[]"),
        "no response": lambda: path.write_text(json.dumps({k: v for k, v in entry.items() if k != "response"})),
        "content a number": lambda: path.write_text(json.dumps({**entry, "response": {"content": 1}})),
        "content null": lambda: path.write_text(json.dumps({**entry, "response": {"content": None}})),
        "messages not a list": lambda: path.write_text(json.dumps(
            {**entry, "request": {**entry["request"], "messages": "hi"}})),
        "negative sample": lambda: path.write_text(json.dumps({**entry, "request": {**entry["request"], "sample": -1}})),
        "no endpoint (an old entry)": lambda: path.write_text(json.dumps(
            {**entry, "request": {k: v for k, v in entry["request"].items() if k != "endpoint"}})),
        "key not its name": lambda: path.write_text(json.dumps({**entry, "key": "0" * 64})),
        "question changed": lambda: path.write_text(json.dumps({**entry, "request": {
            **entry["request"], "messages": [{"role": "user", "content": "something else"}]}})),
        "answer that does not parse": lambda: path.write_text(json.dumps(
            {**entry, "response": {"content": "I would rather not say"}})),
        "a folder in its place": lambda: (path.unlink(), path.mkdir()),
        "a file where its shard should be": lambda: (shutil.rmtree(path.parent), path.parent.write_text("x")),
    }
    edits[how]()


CORRUPT = "corrupt LLM cache entry"
ENTRIES = [
    ("invalid JSON", [CORRUPT, "not valid JSON (Unterminated string"]),
    ("binary", [CORRUPT, "not UTF-8 text; delete it to ask again"]),
    ("empty file", [CORRUPT, "an empty file"]),
    ("a JSON list", [CORRUPT, "the entry: Input should be a valid dictionary"]),
    ("no response", [CORRUPT, "response: Field required"]),
    ("content a number", [CORRUPT, "response.content: Input should be a valid string"]),
    ("content null", [CORRUPT, "response.content: Input should be a valid string"]),
    ("messages not a list", [CORRUPT, "request.messages: Input should be a valid list"]),
    ("negative sample", [CORRUPT, "request.sample: Input should be greater than or equal to 0"]),
    ("no endpoint (an old entry)", [CORRUPT, "request.endpoint: Field required"]),
    ("key not its name", [CORRUPT, "it holds key 0000000000000000..., not its file name"]),
    ("question changed", [CORRUPT, "its request does not hash to its key"]),
    ("answer that does not parse", ["holds an answer that does not parse (not valid JSON", "delete it to ask again"]),
    ("a folder in its place", ["cannot be read (Is a directory); remove what is in its place"]),
    ("a file where its shard should be", ["cannot be read (Not a directory)"]),
]


@pytest.mark.parametrize("how,expected", ENTRIES, ids=[c[0] for c in ENTRIES])
def test_cache_entry(project, first_entry, how, expected):
    source, entry = first_entry
    cache = project.tmp / f"cache_{how.replace(' ', '_')}"
    shutil.copytree(source, cache)
    damage(cache / entry, how)
    before = snapshot(cache)
    params = params_file(project, {"cache_dir": str(cache), "mode": "replay"})
    line = check_bad_input(dive(project, params), project.root, *expected, env=ENV)
    assert str(cache / entry.parts[0]) in line and snapshot(cache) == before


# -- regula cache commands ------------------------------------------------------------------------------------

def test_verify_a_missing_folder(tmp_path):
    check_bad_input(["cache", "verify", tmp_path / "nope"], tmp_path, f"LLM cache folder {tmp_path / 'nope'} does not exist")


def test_verify_a_file(tmp_path):
    (tmp_path / "f").write_text("x")
    check_bad_input(["cache", "verify", tmp_path / "f"], tmp_path, f"LLM cache folder {tmp_path / 'f'} is not a folder")


def test_stats_a_missing_folder(tmp_path):
    check_bad_input(["cache", "stats", tmp_path / "nope"], tmp_path, "does not exist")


def test_stats_a_damaged_ledger(tmp_path, first_entry):
    shutil.copytree(first_entry[0], tmp_path / "c")
    (tmp_path / "c" / "dive" / LEDGER).write_text('{"stage": "dive"')
    check_bad_input(["cache", "stats", tmp_path / "c"], tmp_path,
                    f"LLM call ledger {tmp_path / 'c' / 'dive' / LEDGER}, line 1: not a JSON record with stage and role")


def test_merge_from_a_missing_folder(tmp_path):
    check_bad_input(["cache", "merge", tmp_path / "nope", tmp_path / "t"], tmp_path, "does not exist")


def test_merge_a_damaged_entry_merges_nothing(tmp_path, first_entry):
    source, entry = first_entry
    shutil.copytree(source, tmp_path / "src")
    damage(tmp_path / "src" / entry, "content a number")
    (tmp_path / "t" / "dive").mkdir(parents=True)
    check_bad_input(["cache", "merge", tmp_path / "src", tmp_path / "t"], tmp_path, CORRUPT,
                    "response.content: Input should be a valid string", "(nothing was merged)")


def test_merge_into_a_file(tmp_path, first_entry):
    shutil.copytree(first_entry[0] / "dive", tmp_path / "src")
    (tmp_path / "t").write_text("x")
    check_bad_input(["cache", "merge", tmp_path / "src", tmp_path / "t"], tmp_path, f"{tmp_path / 't'} is not a folder")


@pytest.mark.parametrize("how", ["under a file", "a file"])
def test_a_cache_dir_that_cannot_hold_a_cache(project, how):
    blocker = project.tmp / f"blocker_{how.replace(' ', '_')}"
    blocker.write_text("x")
    cache = blocker / "cache" if how == "under a file" else blocker
    before = project.server.calls
    # the stage's cache folder under it cannot be made: the line names it and why
    check_bad_input(dive(project, params_file(project, {"cache_dir": str(cache)})), project.root,
                    f"{cache / 'dive'}: Not a directory", env=ENV)
    assert project.server.calls == before and blocker.read_text() == "x"
