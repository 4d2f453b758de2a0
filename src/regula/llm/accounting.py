"""Who asked what: calls, cache hits, tokens and latency per stage and role."""
from __future__ import annotations

import threading
from collections import defaultdict

FIELDS = ("calls", "cache_hits", "tokens_in", "tokens_out", "latency_s", "retries", "reasks", "errors")


class Accounting:
    def __init__(self):
        self._lock = threading.Lock()
        self._rows: dict = defaultdict(lambda: dict.fromkeys(FIELDS, 0))

    def add(self, stage: str, role: str, **counts) -> None:
        with self._lock:
            row = self._rows[(stage, role)]
            for k, v in counts.items():
                row[k] += v

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


def merge(a: dict, b: dict) -> dict:
    """The sum of two `Accounting.to_dict()` results (stage -> role -> counts)."""
    out = {stage: {role: dict(row) for role, row in roles.items()} for stage, roles in a.items()}
    for stage, roles in b.items():
        for role, counts in roles.items():
            row = out.setdefault(stage, {}).setdefault(role, {})
            for k, v in counts.items():
                row[k] = round(row.get(k, 0) + v, 3)
    return out
