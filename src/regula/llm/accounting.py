"""Who asked what, in two books kept apart.

The answers' cost (`to_dict()`, what a stage writes under `llm` in metrics/<stage>_detail.json):
per stage and role, the distinct questions answered and what they cost when they were asked,
read from their cache entries (calls = 1 + re-asks, tokens, latency, which model at which
endpoint answered, in which structured form). A replay reads the same entries, so its record
equals the live run's byte for byte.

This run's spending (`this_run()`, for progress lines): calls made now, cache hits, retries,
re-asks, errors, probe calls. So that a run that fails halfway still shows what it spent,
every call, retry, re-ask and error is also appended as it happens to a ledger, one JSON line
each (`calls.jsonl` in the stage's cache folder; `regula cache stats` sums it). Cache hits
cost nothing and are not written there, so a replay run leaves the cache folder as it was.
"""
from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

ANSWERS = ("questions", "unusable", "calls", "reasks", "tokens_in", "tokens_out", "latency_s")
PROVENANCE = ("model", "endpoint", "structured")
SPENDING = ("calls", "cache_hits", "retries", "reasks", "errors", "tokens_in", "tokens_out", "latency_s")
SPENT = ("calls", "retries", "reasks", "errors")  # what the ledger records
_TICK = 10_000  # latencies are summed in 0.1 ms ticks: integers, so the order of answers never shows


class Accounting:
    def __init__(self):
        self._lock = threading.Lock()
        self._seen: dict = defaultdict(set)  # (stage, role) -> keys answered
        self._answers: dict = defaultdict(lambda: {**dict.fromkeys(ANSWERS, 0), **{k: set() for k in PROVENANCE}})
        self._spent: dict = defaultdict(lambda: dict.fromkeys(SPENDING, 0))

    def answered(self, stage: str, role: str, entry: dict) -> None:
        """Count the answer in cache `entry` (asked now or read back) once per question."""
        request, usage = entry["request"], entry.get("usage") if isinstance(entry.get("usage"), dict) else {}
        reasks = len(entry.get("reasks") or [])
        with self._lock:
            if entry["key"] in self._seen[(stage, role)]:
                return
            self._seen[(stage, role)].add(entry["key"])
            row = self._answers[(stage, role)]
            row["questions"] += 1
            row["unusable"] += bool(entry.get("unusable"))
            row["calls"] += 1 + reasks
            row["reasks"] += reasks
            row["tokens_in"] += _count(usage.get("prompt_tokens"))
            row["tokens_out"] += _count(usage.get("completion_tokens"))
            latency = entry.get("latency_s")
            row["latency_s"] += round(latency * _TICK) if isinstance(latency, (int, float)) else 0
            for k in PROVENANCE:
                if isinstance(request.get(k), str):
                    row[k].add(request[k])

    def spend(self, stage: str, role: str, who: dict | None = None, ledger: Path | None = None, **counts) -> None:
        """Add `counts` to this run's spending for (stage, role). `who`: {"model", "endpoint"};
        `ledger`: the file this event is also appended to when it spent something."""
        with self._lock:
            row = self._spent[(stage, role)]
            for k, v in counts.items():
                row[k] += v
            row.update(who or {})
        if ledger is not None and any(counts.get(k) for k in SPENT):
            record = {"stage": stage, "role": role, **(who or {}), **counts,
                      "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            append_line(ledger, json.dumps(record, sort_keys=True))

    def row(self, stage: str, role: str) -> dict:
        """What this run spent for (stage, role)."""
        with self._lock:
            return dict(self._spent[(stage, role)])

    def to_dict(self) -> dict:
        """{stage: {role: the answers' cost}}: the same for a live run and its replay."""
        out: dict = {}
        with self._lock:
            for (stage, role), row in sorted(self._answers.items()):
                out.setdefault(stage, {})[role] = {
                    **{k: row[k] for k in ANSWERS}, "latency_s": round(row["latency_s"] / _TICK, 3),
                    **{k: ", ".join(sorted(row[k])) for k in PROVENANCE}}
        return out

    def this_run(self) -> dict:
        """{stage: {role: what this run spent}}: calls made now, cache hits, retries, re-asks,
        errors, tokens, latency, model and endpoint; the probe's calls under role `probe`."""
        out: dict = {}
        with self._lock:
            for (stage, role), row in sorted(self._spent.items()):
                out.setdefault(stage, {})[role] = dict(row, latency_s=round(row["latency_s"], 3))
        return out


def _count(value) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def append_line(path: Path, line: str) -> None:
    """One line appended in a single write (O_APPEND): concurrent writers never interleave."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def read_ledger(path: Path) -> dict:
    """The ledger's totals as {stage: {role: spending}} (no ledger: {})."""
    from .cache import CacheError
    acc = Accounting()
    if Path(path).is_file():
        for n, line in enumerate(Path(path).read_text().splitlines(), 1):
            try:
                record = json.loads(line)
                stage, role = record["stage"], record["role"]
            except (json.JSONDecodeError, TypeError, KeyError):
                raise CacheError(f"LLM call ledger {path}, line {n}: not a JSON record with stage and role") from None
            who = {k: record[k] for k in ("model", "endpoint") if k in record}
            acc.spend(stage, role, who, **{k: v for k, v in record.items() if k in SPENDING})
    return acc.this_run()


def merge(a: dict, b: dict) -> dict:
    """The sum of two `Accounting.to_dict()` results (stage -> role -> counts); a model, an
    endpoint or a form that differs between them is listed as both (`a, b`)."""
    out = {stage: {role: dict(row) for role, row in roles.items()} for stage, roles in a.items()}
    for stage, roles in b.items():
        for role, counts in roles.items():
            row = out.setdefault(stage, {}).setdefault(role, {})
            for k, v in counts.items():
                if isinstance(v, str):
                    row[k] = ", ".join(sorted({*filter(None, row.get(k, v).split(", ")), *filter(None, [v])}))
                else:
                    row[k] = round(row.get(k, 0) + v, 3)
    return out
