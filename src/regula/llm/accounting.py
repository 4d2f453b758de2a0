"""Who asked what: calls, cache hits, tokens and latency per stage and role, and which model at
which endpoint answered.

The totals reach the stage's record (`llm` in metrics/<stage>_detail.json) when the stage
ends. So that a run that fails halfway still shows what it spent, every call, retry,
re-ask and error is also appended as it happens to a ledger, one JSON line each
(`calls.jsonl` in the stage's cache folder; `regula cache stats` sums it). Cache hits cost
nothing and are not written there, so a replay run leaves the cache folder as it was.
"""
from __future__ import annotations

import json
import os
import threading
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path

FIELDS = ("calls", "cache_hits", "tokens_in", "tokens_out", "latency_s", "retries", "reasks", "errors")
SPENT = ("calls", "retries", "reasks", "errors")  # what the ledger records


class Accounting:
    def __init__(self):
        self._lock = threading.Lock()
        self._rows: dict = defaultdict(lambda: dict.fromkeys(FIELDS, 0))

    def add(self, stage: str, role: str, who: dict | None = None, ledger: Path | None = None, **counts) -> None:
        """Add `counts` to (stage, role). `who`: {"model", "endpoint"} that answered; `ledger`:
        the file this event is also appended to when it spent something."""
        with self._lock:
            row = self._rows[(stage, role)]
            for k, v in counts.items():
                row[k] += v
            row.update(who or {})
        if ledger is not None and any(counts.get(k) for k in SPENT):
            record = {"stage": stage, "role": role, **(who or {}), **counts,
                      "time": datetime.now(timezone.utc).isoformat(timespec="seconds")}
            append_line(ledger, json.dumps(record, sort_keys=True))

    def row(self, stage: str, role: str) -> dict:
        with self._lock:
            return dict(self._rows[(stage, role)])

    def to_dict(self) -> dict:
        """{stage: {role: counts}}, with `queries` = calls + cache hits (the papers' count)."""
        out: dict = {}
        with self._lock:
            for (stage, role), row in sorted(self._rows.items()):
                row = dict(row, latency_s=round(row["latency_s"], 3))
                row["queries"] = row["calls"] + row["cache_hits"]
                out.setdefault(stage, {})[role] = row
        return out


def append_line(path: Path, line: str) -> None:
    """One line appended in a single write (O_APPEND): concurrent writers never interleave."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


def read_ledger(path: Path) -> dict:
    """The ledger's totals as {stage: {role: counts}} (no ledger: {})."""
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
            acc.add(stage, role, who, **{k: v for k, v in record.items() if k in FIELDS})
    return acc.to_dict()


def merge(a: dict, b: dict) -> dict:
    """The sum of two `Accounting.to_dict()` results (stage -> role -> counts); a model or an
    endpoint that differs between them is listed as both (`a, b`)."""
    out = {stage: {role: dict(row) for role, row in roles.items()} for stage, roles in a.items()}
    for stage, roles in b.items():
        for role, counts in roles.items():
            row = out.setdefault(stage, {}).setdefault(role, {})
            for k, v in counts.items():
                if isinstance(v, str):
                    row[k] = ", ".join(sorted({*row.get(k, v).split(", "), v}))
                else:
                    row[k] = round(row.get(k, 0) + v, 3)
    return out
