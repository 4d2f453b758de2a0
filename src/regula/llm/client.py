"""The chat client: the `openai` package against any OpenAI-compatible `base_url`, in front of
the query cache, with retries, a concurrency limit, structured answers, and accounting."""
from __future__ import annotations

import json
import os
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ConfigDict, ValidationError

from regula.errors import ParamsError, RegulaError
from regula.params import LLM, describe

from .accounting import Accounting
from .cache import QueryCache, cache_key

MODES = ("live", "replay", "refresh")  # llm.mode (params.LLM_MODES must equal it; a test checks)


class LLMError(RegulaError):
    """An LLM call that failed for good (after retries), or answers that never parsed."""


class ReplayMiss(LLMError):
    """Replay mode met a question that the cache has no answer for."""


class UnusableAnswer(LLMError):
    """The endpoint answered, but never in a form that parses, re-asks included. A caller may
    drop such an answer and go on; a failed call or a replay miss is never dropped."""


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
    def from_params(cls, llm: dict) -> "LLMConfig":
        return cls(**llm)

    def replace(self, **changes) -> "LLMConfig":
        return type(self)(**{**self.model_dump(), **changes})

    def sampling(self) -> dict:
        return {"temperature": self.temperature, "max_tokens": self.max_tokens}


@dataclass
class Answer:
    text: str
    cached: bool
    key: str


_YES = re.compile(r"\b(yes|no|true|false|correct|incorrect|y|n)\b", re.I)


def parse_yes_no(text: str) -> bool | None:
    """The first yes/no word in an answer ("Yes.", "**No**, because ...", "Answer: yes")."""
    m = _YES.search(text or "")
    if not m:
        return None
    return m.group(1).lower() in ("yes", "true", "correct", "y")


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


class LLMClient:
    def __init__(self, config: LLMConfig, stage: str, accounting: Accounting | None = None,
                 cache: QueryCache | None = None):
        self.config, self.stage = config, stage
        # One folder per stage: a DVC stage owns its outputs, and a union of folders is a union.
        self.cache = cache or QueryCache(Path(config.cache_dir) / stage)
        self.accounting = accounting or Accounting()
        self._sem = threading.Semaphore(config.concurrency)
        self._client = None
        self._client_lock = threading.Lock()

    # -- transport -------------------------------------------------------------------------
    def _openai(self):
        with self._client_lock:
            if self._client is None:
                import openai
                key = os.environ.get(self.config.api_key_env) or "not-set"  # local servers need none
                self._client = openai.OpenAI(base_url=self.config.base_url, api_key=key,
                                             timeout=self.config.timeout, max_retries=0)
            return self._client

    def _call(self, messages: list, params: dict, role: str) -> dict:
        import openai
        cfg, last = self.config, None
        for attempt in range(cfg.retries + 1):
            if attempt:
                self.accounting.add(self.stage, role, retries=1)
                time.sleep(cfg.backoff * 2 ** (attempt - 1))
            with self._sem:
                start = time.perf_counter()
                try:
                    resp = self._openai().chat.completions.create(
                        model=cfg.model, messages=messages, n=1, **params)
                    text = resp.choices[0].message.content
                    if text is None:
                        raise ValueError("the reply has no message content")
                except openai.APITimeoutError:
                    last = f"timed out after {cfg.timeout:g} s"
                    continue
                except openai.APIConnectionError as exc:
                    last = f"connection failed ({exc.__cause__ or exc})"
                    continue
                except openai.APIStatusError as exc:
                    if exc.status_code == 429 or exc.status_code >= 500:
                        last = f"HTTP {exc.status_code}"
                        continue
                    self.accounting.add(self.stage, role, errors=1)
                    body = exc.body if isinstance(exc.body, dict) else {}
                    raise LLMError(f"LLM endpoint {cfg.base_url} refused the request with HTTP "
                                   f"{exc.status_code}: {_short(body.get('message') or exc.message)}"
                                   + (f" (is ${cfg.api_key_env} set?)" if exc.status_code in (401, 403) else "")
                                   ) from None
                except (openai.APIResponseValidationError, ValueError, AttributeError, IndexError,
                        TypeError) as exc:
                    last = f"unreadable reply ({_short(str(exc))})"
                    continue
                latency = time.perf_counter() - start
            usage = resp.usage.model_dump() if getattr(resp, "usage", None) else {}
            return {"text": text, "finish_reason": resp.choices[0].finish_reason, "usage": usage,
                    "latency_s": round(latency, 4)}
        self.accounting.add(self.stage, role, errors=1)
        raise LLMError(f"LLM call for stage '{self.stage}', role '{role}' failed after "
                       f"{cfg.retries + 1} attempts at {cfg.base_url}: {last}")

    # -- cached completion ---------------------------------------------------------------------
    def complete(self, messages: list, role: str, sample: int = 0) -> Answer:
        cfg = self.config
        params = cfg.sampling()
        key = cache_key(cfg.model, messages, params, sample)
        if cfg.mode != "refresh":
            entry = self.cache.get(key)
            if entry is not None:
                self.accounting.add(self.stage, role, cache_hits=1)
                return Answer(entry["response"]["content"], True, key)
        if cfg.mode == "replay":
            raise ReplayMiss(f"replay mode: no cached answer for stage '{self.stage}', role '{role}', "
                             f"key {key} (model {cfg.model}) in {self.cache.root}; run with "
                             "llm.mode: live to ask, or `dvc pull` the team's cache")
        got = self._call(messages, params, role)
        usage = got["usage"]
        self.accounting.add(self.stage, role, calls=1, latency_s=got["latency_s"],
                            tokens_in=int(usage.get("prompt_tokens") or 0),
                            tokens_out=int(usage.get("completion_tokens") or 0))
        self.cache.put(key, {
            "request": {"model": cfg.model, "messages": messages, "params": params, "sample": sample},
            "response": {"content": got["text"], "finish_reason": got["finish_reason"]},
            "usage": usage, "latency_s": got["latency_s"], "role": role, "stage": self.stage,
            "base_url": cfg.base_url, "time": datetime.now(timezone.utc).isoformat(timespec="seconds")})
        return Answer(got["text"], False, key)

    def samples(self, messages: list, role: str, n: int) -> list[Answer]:
        """The same question n times; each sample index is cached on its own."""
        return [self.complete(messages, role, sample=i) for i in range(n)]

    def map(self, fn, items: list) -> list:
        """fn over items with up to `concurrency` requests in flight, results in order."""
        with ThreadPoolExecutor(max_workers=self.config.concurrency) as pool:
            return list(pool.map(fn, items))

    # -- structured answers -------------------------------------------------------------------
    def _ask_parsed(self, messages: list, role: str, sample: int, parse, instruction: str):
        msgs, text, error = list(messages), "", ""
        for attempt in range(self.config.reasks + 1):
            if attempt:
                self.accounting.add(self.stage, role, reasks=1)
            text = self.complete(msgs, role, sample).text
            try:
                return parse(text)
            except ValueError as exc:
                error = str(exc)
            msgs = msgs + [{"role": "assistant", "content": text},
                           {"role": "user", "content": f"That answer could not be used: {error}. {instruction}"}]
        raise UnusableAnswer(f"role '{role}' of stage '{self.stage}': no usable answer after "
                       f"{self.config.reasks + 1} tries; last answer {_short(text)!r}: {error}")

    def ask_yes_no(self, messages: list, role: str, sample: int = 0) -> bool:
        def parse(text):
            value = parse_yes_no(text)
            if value is None:
                raise ValueError("it says neither yes nor no")
            return value
        return self._ask_parsed(messages, role, sample, parse, "Answer with one word: yes or no.")

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
        instruction = ("Answer again with JSON only, matching this JSON schema: "
                       + json.dumps(schema.model_json_schema(), sort_keys=True))
        return self._ask_parsed(messages, role, sample, parse, instruction)


def _short(text: str, n: int = 160) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= n else text[: n - 3] + "..."

