"""A content-addressed store of LLM answers: one JSON file per (model, messages, sampling
parameters, sample index), sharded by key prefix and written atomically.

Files never change once written (except in `refresh` mode), so two caches merge by copying
files (a union), DVC can push and pull the directory, and concurrent writers cannot corrupt
an entry: each writes its own temporary file and renames it into place.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

from regula.io import write_atomic
from regula.errors import RegulaError

KEY_FIELDS = ("model", "messages", "params", "sample")


class CacheError(RegulaError):
    """A cache entry on disk that cannot be read; the message names the file."""


def cache_key(model: str, messages: list, params: dict, sample: int) -> str:
    blob = json.dumps({"model": model, "messages": messages, "params": params, "sample": sample},
                      sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()


class QueryCache:
    def __init__(self, root: str | Path):
        self.root = Path(root)

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> dict | None:
        path = self.path(key)
        try:
            text = path.read_text()
        except FileNotFoundError:
            return None
        return self._parse(path, text, key)

    @staticmethod
    def _parse(path: Path, text: str, key: str | None = None) -> dict:
        try:
            entry = json.loads(text)
        except json.JSONDecodeError as exc:
            raise CacheError(f"corrupt LLM cache entry {path}: not valid JSON ({exc.msg} at char {exc.pos}); "
                             "delete it to ask again") from None
        if not isinstance(entry, dict) or "response" not in entry or "request" not in entry:
            raise CacheError(f"corrupt LLM cache entry {path}: missing request or response; delete it to ask again")
        if key is not None and entry.get("key") != key:
            raise CacheError(f"corrupt LLM cache entry {path}: it holds key {entry.get('key')!r}, not its file name")
        return entry

    def put(self, key: str, entry: dict) -> Path:
        text = json.dumps({**entry, "key": key}, sort_keys=True, indent=1, ensure_ascii=False)
        return write_atomic(self.path(key), text)

    def files(self):
        if not self.root.exists():
            return
        for shard in sorted(self.root.iterdir()):
            if shard.is_dir():
                yield from sorted(p for p in shard.glob("*.json") if not p.name.startswith(".tmp-"))

    def __len__(self) -> int:
        return sum(1 for _ in self.files())

    def verify(self) -> tuple[int, list[str]]:
        """(entries read, one message per corrupt entry)."""
        n, bad = 0, []
        for path in self.files():
            n += 1
            try:
                self._parse(path, path.read_text(), path.stem)
            except CacheError as exc:
                bad.append(str(exc))
        return n, bad

    def stats(self) -> dict:
        per_model, per_role, per_stage = Counter(), Counter(), Counter()
        tokens_in = tokens_out = 0
        n, corrupt = 0, 0
        for path in self.files():
            try:
                entry = self._parse(path, path.read_text(), path.stem)
            except CacheError:
                corrupt += 1
                continue
            n += 1
            per_model[entry["request"].get("model", "?")] += 1
            per_role[entry.get("role", "?")] += 1
            per_stage[entry.get("stage", "?")] += 1
            usage = entry.get("usage") or {}
            tokens_in += int(usage.get("prompt_tokens") or 0)
            tokens_out += int(usage.get("completion_tokens") or 0)
        return {"entries": n, "corrupt": corrupt, "models": dict(per_model), "roles": dict(per_role),
                "stages": dict(per_stage), "tokens_in": tokens_in, "tokens_out": tokens_out}


def merge(source: str | Path, target: str | Path) -> dict:
    """Copy into `target` every entry of `source` it lacks (a union). Entries both hold are
    kept as they are in `target`; those whose answers differ are counted as conflicts."""
    src, dst = QueryCache(source), QueryCache(target)
    copied = same = conflicts = 0
    for path in src.files():
        entry = src._parse(path, path.read_text(), path.stem)
        mine = dst.get(path.stem)
        if mine is None:
            write_atomic(dst.path(path.stem), path.read_text())
            copied += 1
        elif mine["response"] == entry["response"]:
            same += 1
        else:
            conflicts += 1
    return {"copied": copied, "already_there": same, "conflicts": conflicts}
