"""A small OpenAI-compatible HTTP server on 127.0.0.1 that serves one model, `regula-stub`.

For tests and for trying the LLM path without a key: `regula llm stub-server`. A request for
another model is refused as real servers refuse it (HTTP 404, `model_not_found`). Each request
takes the next scripted behaviour (an answer text, an HTTP status, a delay, a malformed
body); with the script empty, `responder(messages)` answers: by default, each role's prompt
gets a schema-valid answer from the rule-grounded stand-ins (`stub_answers.py`, imported on
the first answer so the server starts light). It counts what it was asked and keeps each
request's body.

Structured answers: a request whose `response_format` carries a JSON schema (OpenAI's
`json_schema`, llama.cpp's `json_object` with `schema`) gets the responder's answer in that
schema (a yes/no answer as {"answer": "yes"}); scripted answers are sent as they are.
`refuse=("json_schema",)` plays llama.cpp's server, which answers that form with HTTP 500.
The client's probe of the forms (`client.PROBE`) is answered apart: it takes no scripted
step and is kept in `probes`, not in `requests` (nor `calls`), so what a test scripts and
counts is the roles' questions whichever form the client chose.
"""
from __future__ import annotations

import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Callable


class _Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # a late reply to a client that timed out and hung up is no error of the server's
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


MODEL = "regula-stub"


def default_responder(messages: list) -> str:
    from .stub_answers import answer
    return answer(messages)


def schema_of(response_format) -> dict | None:
    """The JSON schema a request's `response_format` asks for, if any."""
    if not isinstance(response_format, dict):
        return None
    if response_format.get("type") == "json_schema":
        return (response_format.get("json_schema") or {}).get("schema")
    return response_format.get("schema")


def shaped(content: str, schema: dict | None) -> str:
    """The responder's answer in the schema asked for: a yes/no schema gets {"answer": ...};
    the role answers are JSON in their schema already."""
    from .client import parse_yes_no
    answer = (schema or {}).get("properties", {}).get("answer", {})
    if answer.get("enum") == ["yes", "no"] and (yes := parse_yes_no(content)) is not None:
        return json.dumps({"answer": "yes" if yes else "no"})
    return content


def refusal(form: str) -> bytes:
    """The body llama-cpp-python's server sends with its HTTP 500 for a response format it cannot
    turn into a grammar (its ErrorResponse: message, type, param, code)."""
    return json.dumps({"error": {"message": f"response_format type '{form}' is not supported",
                                 "type": "internal_server_error", "param": None, "code": None}}).encode()


def model_not_found(model) -> bytes:
    """The error body an OpenAI-compatible server sends for a model it does not serve."""
    return json.dumps({"error": {"message": f"The model `{model}` does not exist", "type": "invalid_request_error",
                                 "code": "model_not_found"}}).encode()


class StubLLMServer:
    def __init__(self, responder: Callable[[list], str] = default_responder, port: int = 0, model: str = MODEL,
                 refuse: tuple[str, ...] = ()):
        self.responder, self.model, self.refuse = responder, model, tuple(refuse)
        self.script: list = []
        self.requests: list[dict] = []
        self.probes: list[dict] = []
        self._lock = threading.Lock()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def _send(self, status: int, body: bytes, ctype="application/json"):
                self.send_response(status)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):
                card = {"id": server.model, "object": "model", "created": 0, "owned_by": "regula"}
                path = self.path.rstrip("/")
                if path.endswith("/models"):
                    self._send(200, json.dumps({"object": "list", "data": [card]}).encode())
                elif path.endswith(f"/models/{server.model}"):
                    self._send(200, json.dumps(card).encode())
                elif "/models/" in path:
                    self._send(404, model_not_found(path.split("/models/", 1)[1]))
                else:
                    self._send(404, b'{"error": {"message": "not found"}}')

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                from .client import PROBE
                form = (body.get("response_format") or {}).get("type")
                served = body.get("model") == server.model and form not in server.refuse
                probe = body.get("messages") == PROBE
                with server._lock:  # a refused request takes no scripted step
                    (server.probes if probe else server.requests).append(body)
                    step = server.script.pop(0) if server.script and served and not probe else None
                if body.get("model") != server.model:
                    self._send(404, model_not_found(body.get("model")))
                    return
                if not served:
                    self._send(500, refusal(form))
                    return
                if isinstance(step, dict) and "delay" in step:
                    time.sleep(step["delay"])
                    step = step.get("then")
                if isinstance(step, dict) and "status" in step:
                    error = json.dumps({"error": {"message": step.get("message", "scripted error"), "type": "stub"}})
                    self.send_response(step["status"])
                    for name, value in {"Content-Type": "application/json", "Content-Length": str(len(error)),
                                        **step.get("headers", {})}.items():  # e.g. Retry-After
                        self.send_header(name, value)
                    self.end_headers()
                    self.wfile.write(error.encode())
                    return
                if isinstance(step, dict) and "raw" in step:
                    self._send(200, step["raw"].encode())
                    return
                schema = schema_of(body.get("response_format"))
                if isinstance(step, str):
                    content = step  # a scripted answer is sent as it is
                else:
                    content = shaped("yes" if probe else server.responder(body.get("messages", [])), schema)
                words = sum(len(str(m.get("content", "")).split()) for m in body.get("messages", []))
                reply = {"id": f"stub-{len(server.requests) + len(server.probes)}", "object": "chat.completion",
                         "created": 0, "model": server.model,
                         "choices": [{"index": 0, "finish_reason": "stop",
                                      "message": {"role": "assistant", "content": content}}],
                         "usage": {"prompt_tokens": words, "completion_tokens": len(content.split()),
                                   "total_tokens": words + len(content.split())}}
                self._send(200, json.dumps(reply).encode())

        self.httpd = _Server(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        with self._lock:
            return len(self.requests)

    def start(self) -> "StubLLMServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
