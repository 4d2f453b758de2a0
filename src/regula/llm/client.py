"""The chat client: the `openai` package against any OpenAI-compatible `base_url`, in front of
the query cache, with a concurrency limit, structured answers, and accounting.

Structured answers (yes/no, JSON in a pydantic model's schema) are asked for in the form the
endpoint accepts (`llm.structured`): OpenAI's `json_schema` response format, llama.cpp's
`json_object` with a schema, or `text` (no response format; the answer is parsed as free
text). `auto` probes the endpoint once per process per (base_url, model), only when a live
call is needed, and says on stderr which form it chose and why. The form is provenance in
each cache entry, not part of its key: a replay needs neither the probe nor a server.

Every request asks for one answer (n=1) with a seed: sample i of a question is a call of its
own with seed `llm.seed` + i, cached under its own key.

Transport failures (429 and 5xx, refused connections) are retried by the SDK (`llm.retries`;
it backs off, honouring Retry-After); a time-out only `llm.timeout_retries` times, since an
endpoint that stalls (takes the connection, never answers) costs `llm.timeout` per try. This
client counts its retries and, when they run out, stops with one line; after a time-out that
ran out of retries, every later call of the client fails at once with the same line (the
questions queued behind it would each wait `llm.timeout` on the same silent endpoint). A
reply that is not a chat completion with text (HTML, the wrong JSON, no choices, a null or a
number for content) is the endpoint's fault: it stops the run as well. An answer that does not
parse (not yes/no, JSON off the schema) is re-asked with the reason (`llm.reasks`); the answer
is cached under the original question's key with the re-asks that led to it, so a replay
returns it at once. An answer that never
parsed is cached too, marked unusable: a replay raises UnusableAnswer again, with the same
message, so it drops what the live run dropped.
No message or file holds the API key or credentials from `base_url`.
"""
from __future__ import annotations

import json
import os
import re
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, StrictStr, ValidationError

from regula.errors import ParamsError, RegulaError
from regula.params import LLM, describe

from .accounting import Accounting
from .cache import LEDGER, CacheError, QueryCache, cache_key

MODES = ("live", "replay", "refresh")  # llm.mode (params.LLM_MODES must equal it; a test checks)
STRUCTURED = ("auto", "json_schema", "json_object", "text")  # llm.structured (params.LLM_STRUCTURED)
YES_NO = {"type": "object", "properties": {"answer": {"type": "string", "enum": ["yes", "no"]}},
          "required": ["answer"], "additionalProperties": False}
PROBE = [{"role": "user", "content": 'Is 2 greater than 1? Answer with JSON: {"answer": "yes"} or {"answer": "no"}.'}]
REFUSALS = (400, 422, 500)  # what servers answer a response format they do not take (llama.cpp: 500)

_FORMS: dict[tuple[str, str], str] = {}  # (base_url, model) -> the form the probe chose, per process
_FORMS_LOCK = threading.Lock()


# The default endpoint is the local model's: a refused connection most often means it is not served.
_SERVE_HINT = ("(the local model: `make llm-local`, then `regula llm serve-local` in another shell, or "
               "`make llm-rows`; or set llm.mode: replay to use recorded answers only)")


class LLMError(RegulaError):
    """An LLM call that failed for good (after retries), or a reply that is not an answer."""


class ReplayMiss(LLMError):
    """Replay mode met a question that the cache has no answer for."""


class UnusableAnswer(LLMError):
    """The endpoint answered, but never in a form that parses, re-asks included. A caller may
    drop such an answer and go on; a failed call or a replay miss is never dropped."""


class _Refused(LLMError):
    """The endpoint answered a request with a response format with HTTP 400, 422 or 500."""


class LLMConfig(LLM):
    """The `llm` section of params.yaml, frozen: its fields, defaults and checks are the
    schema's (`regula.params.LLM`), so a config built here holds what params.yaml would."""

    model_config = ConfigDict(frozen=True)

    def __init__(self, **values):
        try:
            super().__init__(**values)
        except ValidationError as exc:
            raise ParamsError(describe(exc, LLM, ("llm",))) from None

    @classmethod
    def from_params(cls, llm: LLM, **changes) -> "LLMConfig":
        """The config of params' `llm` section (the validated model), with `changes`."""
        return cls(**{**llm.model_dump(), **changes})

    def replace(self, **changes) -> "LLMConfig":
        return type(self)(**{**self.model_dump(), **changes})

    def sampling(self) -> dict:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}

    def request_params(self, sample: int) -> dict:
        """What a request for sample `sample` sends besides the messages (and what is keyed)."""
        return {**self.sampling(), "seed": self.seed + sample}

    def who(self) -> dict:
        """The provenance of an answer: which model, at which endpoint."""
        return {"model": self.model, "endpoint": self.endpoint}


@dataclass
class Answer:
    text: str
    cached: bool
    key: str


CHARS_PER_TOKEN = 32
_YES = re.compile(r"\b(yes|no|true|false|correct|incorrect|y|n)\b", re.I)


def parse_yes_no(text: str) -> bool | None:
    """The first yes/no word in an answer ("Yes.", "**No**, because ...", "Answer: yes")."""
    m = _YES.search(text or "")
    if not m:
        return None
    return m.group(1).lower() in ("yes", "true", "correct", "y")


def response_format(form: str, schema: dict | None) -> dict | None:
    """The request's `response_format` for `schema` asked in `form` (None: none is sent)."""
    if schema is None or form == "text":
        return None
    if form == "json_schema":
        name = re.sub(r"[^A-Za-z0-9_-]", "_", str(schema.get("title") or "answer"))[:64]
        return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": False}}
    return {"type": "json_object", "schema": schema}


class _ProbeAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    answer: str = Field(pattern="^(yes|no)$")


def extract_json(text: str):
    """JSON from a reply that may wrap it in a code fence or prose."""
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.S)
    if fence:
        text = fence.group(1)
    text = text.strip()
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        start = min((i for i in (text.find("{"), text.find("[")) if i >= 0), default=-1)
        if start < 0:
            raise
        return json.loads(text[start:text.rfind("}" if text[start] == "{" else "]") + 1])


class _Reply(BaseModel):
    """The part of a chat completion this client reads; a body without it is unreadable."""

    class Choice(BaseModel):
        class Message(BaseModel):
            content: StrictStr

        message: Message
        finish_reason: str | None = None

    choices: list[Choice] = Field(min_length=1)
    usage: dict | None = None


_TOKEN = re.compile(r"\b(sk|pk|rk)-[A-Za-z0-9_-]{6,}|(?i:bearer)\s+[^\s'\",;]+")
_USERINFO = re.compile(r"(?<=://)[^/\s@'\"]+@")


class LLMClient:
    def __init__(self, config: LLMConfig, stage: str, accounting: Accounting | None = None,
                 cache: QueryCache | None = None, log=None):
        self.config, self.stage = config, stage
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        # One folder per stage: a DVC stage owns its outputs, and a union of folders is a union.
        self.cache = cache or QueryCache(Path(config.cache_dir) / stage)
        self.accounting = accounting or Accounting()
        self._sem = threading.Semaphore(config.concurrency)
        self._client = None
        self._client_lock = threading.Lock()
        self._local = threading.local()  # HTTP requests (and time-outs) of this thread's current call
        self._stalled: str | None = None  # the line of a call that timed out for good

    # -- secrets -----------------------------------------------------------------------------
    def _key(self) -> str:
        key = os.environ.get(self.config.api_key_env) or ""
        return key if len(key) >= 4 else ""  # a value this short would blank ordinary words

    def redact(self, text: str) -> str:
        """`text` without the API key, key-like tokens, or credentials inside a URL."""
        if key := self._key():
            text = text.replace(key, "***")
        text = _TOKEN.sub(lambda m: f"{m.group(1)}-***" if m.group(1) else "Bearer ***", text)
        return _USERINFO.sub("", text)

    # -- transport -------------------------------------------------------------------------
    def _openai(self):
        with self._client_lock:
            if self._client is None:
                import openai

                local, timeout_retries = self._local, self.config.timeout_retries

                def sent(request):
                    local.sent = getattr(local, "sent", 0) + 1

                class Http(openai.DefaultHttpxClient):
                    def send(self, request, **kwargs):
                        try:
                            return super().send(request, **kwargs)
                        except Exception as exc:
                            if not _is_timeout(exc):
                                raise
                            local.timeouts = getattr(local, "timeouts", 0) + 1
                            if local.timeouts > timeout_retries:  # the SDK passes its own errors on, unretried
                                raise openai.APITimeoutError(request=request) from None
                            raise
                key = os.environ.get(self.config.api_key_env) or "not-set"  # local servers need none
                self._client = openai.OpenAI(
                    base_url=self.config.base_url, api_key=key, timeout=self.config.timeout,
                    max_retries=self.config.retries, http_client=Http(event_hooks={"request": [sent]}))
            return self._client

    def _account(self, role: str, **counts) -> None:
        self.accounting.spend(self.stage, role, self.config.who(), self.cache.root / LEDGER, **counts)

    def _call(self, messages: list, params: dict, role: str, rformat: dict | None = None,
              retries: int | None = None, account_as: str | None = None) -> dict:
        """One chat completion for `role` (the SDK's retries inside; accounted under `account_as`,
        default the role): {"text", "finish_reason", "usage", "latency_s"}; LLMError when it
        failed for good or its reply is not an answer, _Refused when the endpoint refused the
        response format `rformat`."""
        import openai
        cfg = self.config
        if self._stalled:
            raise LLMError(self._stalled)
        self._local.sent = self._local.timeouts = 0
        failure, stalled = None, False
        sdk = self._openai() if retries is None else self._openai().with_options(max_retries=retries)
        with self._sem:
            start = time.perf_counter()
            try:
                raw = sdk.chat.completions.with_raw_response.create(
                    model=cfg.model, messages=messages, n=1, **params,
                    extra_body={"response_format": rformat} if rformat else None)
                body = raw.content
            except openai.APIStatusError as exc:
                failure = exc
            except openai.APITimeoutError:
                stalled = True
                failure = (f"no answer within llm.timeout ({cfg.timeout:g} s); an endpoint that is up but slower "
                           "needs a larger llm.timeout (or llm.timeout_retries) in params.yaml")
            except openai.APIConnectionError as exc:
                failure = f"connection failed ({exc.__cause__ or exc}); is the endpoint up? {_SERVE_HINT}"
            except openai.OpenAIError as exc:
                failure = f"{type(exc).__name__} ({_short(str(exc))})"
            latency = time.perf_counter() - start
        where, role = f"stage '{self.stage}', role '{role}'", account_as or role
        attempts = max(self._local.sent, 1)
        if attempts > 1:
            self._account(role, retries=attempts - 1)
        if failure is not None:
            self._account(role, errors=1)
            if rformat and isinstance(failure, openai.APIStatusError) and failure.status_code in REFUSALS:
                raise _Refused(self.redact(f"HTTP {failure.status_code} ({_message(failure)})")) from None
            message = self.redact(self._failure(failure, attempts, where))
            if stalled:
                self._stalled = message
            raise LLMError(message) from None
        try:
            reply = _Reply.model_validate_json(body)
        except ValidationError as exc:
            self._account(role, calls=1, errors=1, latency_s=latency)
            err = exc.errors()[0]
            what = ".".join(str(p) for p in err["loc"]) or "the body"
            raise LLMError(self.redact(
                f"LLM endpoint {cfg.base_url} ({cfg.model}) sent a reply that is not a chat completion with "
                f"text for {where}: {what}: {_short(err['msg'])}")) from None
        usage = reply.usage or {}
        self._account(role, calls=1, latency_s=latency, tokens_in=_tokens(usage, "prompt_tokens"),
                      tokens_out=_tokens(usage, "completion_tokens"))
        choice = reply.choices[0]
        text = choice.message.content.replace(key, "***") if (key := self._key()) else choice.message.content
        return {"text": text, "finish_reason": choice.finish_reason, "usage": usage, "latency_s": round(latency, 4)}

    def _failure(self, failure, attempts: int, where: str) -> str:
        cfg = self.config
        failed = f"LLM call for {where} failed after {attempts} attempt{'s' * (attempts > 1)} at {cfg.base_url}"
        if isinstance(failure, str):
            return f"{failed}: {failure}"
        status, message = failure.status_code, _message(failure)
        if status in (408, 409, 429) or status >= 500:  # what the SDK retries
            return f"{failed}: HTTP {status} ({message})"
        key_hint = f" (is ${cfg.api_key_env} set to a valid key?)"
        hint = {401: key_hint, 403: key_hint, 404: f" (does it serve model '{cfg.model}'?)"}.get(status, "")
        return f"LLM endpoint {cfg.base_url} refused the request for {where} with HTTP {status}: {message}{hint}"

    # -- the structured form ------------------------------------------------------------------
    def form(self, role: str) -> str:
        """The form structured answers are asked in: llm.structured, or what the probe chose."""
        cfg = self.config
        if cfg.structured != "auto":
            return cfg.structured
        with _FORMS_LOCK:  # one probe per (base_url, model), however many clients and threads
            where = (cfg.base_url, cfg.model)
            if where not in _FORMS:
                _FORMS[where] = self._probe(role)
            return _FORMS[where]

    def _probe(self, role: str) -> str:
        """The first of json_schema and json_object that the endpoint answers with HTTP 200 and
        a reply valid in the probe's schema, else text; said in one line. Its calls are
        accounted under role `probe`; an error names the role that needed it."""
        cfg, refused = self.config, []
        for form in ("json_schema", "json_object"):
            try:  # a refusal is the answer: the SDK's retries would only repeat it
                got = self._call(PROBE, cfg.request_params(0), role, response_format(form, YES_NO), retries=0,
                                 account_as="probe")
            except _Refused as exc:
                refused.append(f"{form} refused: {exc}")
                continue
            try:
                _ProbeAnswer.model_validate_json(got["text"])
                break
            except ValidationError:
                refused.append(f"{form} not honoured: answered {_short(got['text'], 60)!r}")
        else:
            form = "text"
        why = f" ({'; '.join(refused)})" if refused else ""
        self.log(self.redact(f"LLM {cfg.model} at {cfg.endpoint}: structured answers as {form}{why}"))
        return form

    # -- cached answers --------------------------------------------------------------------------
    def complete(self, messages: list, role: str, sample: int = 0) -> Answer:
        """The answer's text (any text will do)."""
        return self._ask(messages, role, sample, None, "", None)[1]

    def _ask(self, messages: list, role: str, sample: int, parse, instruction: str, schema: dict | None):
        """(parsed value, Answer): from the cache, or asked (and re-asked until it parses)."""
        cfg = self.config
        params = cfg.request_params(sample)
        key = cache_key(cfg.model, cfg.endpoint, messages, params, sample, schema)
        if cfg.mode != "refresh" and (entry := self.cache.get(key)) is not None:
            return self._use(entry, role, parse, cached=True)
        if cfg.mode == "replay":
            raise ReplayMiss(
                f"replay mode: no cached answer for stage '{self.stage}', role '{role}', key {key} "
                f"({cfg.model} at {cfg.endpoint}) in {self.cache.root}; to fill it, run the stage with "
                "llm.mode: live against the endpoint, or get a cache that has it (`dvc pull`, "
                "`regula cache merge`)")
        with self.cache.asking(key):
            if cfg.mode != "refresh" and (entry := self.cache.get(key)) is not None:
                return self._use(entry, role, parse, cached=True)  # another process asked while this one waited
            entry = self._converse(messages, params, sample, role, parse, instruction, schema)
            # another process may have answered first: its answer stands
            stored = self.cache.put(key, entry, replace=cfg.mode == "refresh")
        return self._use(stored, role, parse, cached=False)

    def longest(self) -> int:
        """The most characters an answer of `max_tokens` tokens may hold (a token is rarely over
        a dozen characters; 32 leaves room for any tokenizer)."""
        return CHARS_PER_TOKEN * self.config.max_tokens

    def _use(self, entry: dict, role: str, parse, cached: bool):
        """(parsed value, Answer) from a cache entry, counted; UnusableAnswer for one marked so."""
        text = entry["response"]["content"]
        if entry.get("unusable") is None:
            try:
                value = parse(text) if parse else text
            except ValueError as exc:
                raise CacheError(f"LLM cache entry {self.cache.path(entry['key'])} holds an answer that does not "
                                 f"parse ({_short(str(exc))}); delete it to ask again") from None
        if cached:
            self._account(role, cache_hits=1)
        self.accounting.answered(self.stage, role, entry)
        if entry.get("unusable") is not None:
            raise UnusableAnswer(entry["unusable"])
        return value, Answer(text, cached, entry["key"])

    def _converse(self, messages: list, params: dict, sample: int, role: str, parse, instruction: str,
                  schema: dict | None) -> dict:
        """Ask, and re-ask with the reason while the answer does not parse: the cache entry."""
        cfg = self.config
        form = self.form(role) if schema is not None else "text"
        rformat = response_format(form, schema)
        msgs, reasks, usage, latency, error = list(messages), [], {}, 0.0, None
        for attempt in range(cfg.reasks + 1):
            if attempt:
                self._account(role, reasks=1)
                reasks.append({"answer": text, "error": error})
                msgs = msgs + [{"role": "assistant", "content": text},
                               {"role": "user", "content": f"That answer could not be used: {error}. {instruction}"}]
            try:
                got = self._call(msgs, params, role, rformat)
            except _Refused as exc:
                others = " or ".join(f for f in STRUCTURED if f not in (form, cfg.structured))
                raise LLMError(
                    f"LLM endpoint {cfg.base_url} ({cfg.model}) refused structured answers as {form} "
                    f"(llm.structured: {cfg.structured}) for stage '{self.stage}', role '{role}': {exc}; "
                    f"set llm.structured to {others} (auto probes what the endpoint accepts)") from None
            for k in ("prompt_tokens", "completion_tokens"):
                usage[k] = usage.get(k, 0) + _tokens(got["usage"], k)
            latency += got["latency_s"]
            text = got["text"]
            if len(text) > self.longest():  # a broken endpoint: so much text cannot be an answer
                error = (f"the answer is {len(text)} characters long, more than max_tokens ({cfg.max_tokens}) "
                         "can hold")
                text = text[:self.longest()] + " [cut]"  # what is kept of it (in the cache, in a re-ask)
                continue
            try:
                if parse:
                    parse(text)
                error = None
                break
            except ValueError as exc:
                error = str(exc)
        entry = {"request": {"model": cfg.model, "endpoint": cfg.endpoint, "messages": messages, "params": params,
                             "sample": sample, "schema": schema, "structured": form},
                 "response": {"content": text, "finish_reason": got["finish_reason"]},
                 "reasks": reasks, "usage": usage, "latency_s": round(latency, 4), "role": role,
                 "stage": self.stage, "base_url": cfg.base_url,
                 "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        if error is not None:
            entry["unusable"] = self.redact(
                f"role '{role}' of stage '{self.stage}': no usable answer after {cfg.reasks + 1} tries; "
                f"last answer {_short(text)!r}: {error}")
        return entry

    def samples(self, messages: list, role: str, n: int) -> list[Answer]:
        """The same question n times: n calls of one answer each, sample i with seed llm.seed + i,
        each cached on its own (servers such as llama.cpp ignore n > 1)."""
        return [self.complete(messages, role, sample=i) for i in range(n)]

    def map(self, fn, items: list) -> list:
        """fn over items with up to `concurrency` requests in flight, results in order."""
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(fn, items))

    # -- structured answers -------------------------------------------------------------------
    def ask_yes_no(self, messages: list, role: str, sample: int = 0) -> bool:
        """yes or no, asked in the schema {"answer": "yes" | "no"}; a text answer's first yes/no word counts."""
        def parse(text):
            value = parse_yes_no(text)
            if value is None:
                raise ValueError("it says neither yes nor no")
            return value
        return self._ask(messages, role, sample, parse, "Answer with one word: yes or no.", YES_NO)[0]

    def ask_json(self, messages: list, schema, role: str, sample: int = 0):
        """An instance of the pydantic model `schema`, re-asking with the validation error."""
        import pydantic

        def parse(text):
            try:
                return schema.model_validate(extract_json(text))
            except json.JSONDecodeError as exc:
                raise ValueError(f"not valid JSON ({exc.msg})") from None
            except pydantic.ValidationError as exc:
                raise ValueError(f"JSON does not match the schema: {_short(str(exc), 300)}") from None
        json_schema = schema.model_json_schema()
        instruction = "Answer again with JSON only, matching this JSON schema: " + json.dumps(json_schema, sort_keys=True)
        return self._ask(messages, role, sample, parse, instruction, json_schema)[0]


def _is_timeout(exc: Exception) -> bool:
    # httpx's or httpx2's (the SDK's transport, by version): both name it so
    return any(c.__name__ == "TimeoutException" for c in type(exc).__mro__)


def _tokens(usage: dict, name: str) -> int:
    value = usage.get(name)
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _message(failure) -> str:
    """An HTTP error's message, from the body's `error.message` where there is one."""
    body = failure.body if isinstance(failure.body, dict) else {}
    error = body.get("error") if isinstance(body.get("error"), dict) else body
    return _short(error.get("message") or failure.message)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."
