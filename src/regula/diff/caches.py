"""LLM answer caches (data/cache/llm/<stage>/<xx>/<key>.json, regula.llm.cache): entries added
and removed per stage, and conflicts: one key (one question) holding a different answer. An
answer is the response's content and whether it was unusable; usage, timing and the rest of
an entry are how it was asked, not what was answered.
"""
from __future__ import annotations

import json

from regula.errors import DataError

ROOT = "data/cache/llm/"


ROOTS = ("data/cache/llm",)  # where its files lie (which unavailable outputs concern it)


def selects(path: str) -> bool:
    parts = path.split("/")
    return path.startswith(ROOT) and len(parts) == 6 and path.endswith(".json") and parts[4] == parts[5][:2]


def stage(path: str) -> str:
    return path.split("/")[3]


def _answer(path: str, raw: bytes | None, where: str) -> dict | None:
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
        return {"content": entry["response"]["content"], "unusable": entry.get("unusable")}
    except (ValueError, TypeError, KeyError) as exc:
        raise DataError(f"corrupt LLM cache entry {path} at {where} ({type(exc).__name__}: {exc}); "
                        "`regula cache verify` names what is wrong") from None


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str]) -> list[dict]:
    a, b = _answer(path, old, where[0]), _answer(path, new, where[1])
    if a == b:
        return []
    change = "added" if a is None else "removed" if b is None else "conflict"
    key = path.rsplit("/", 1)[1].removesuffix(".json")
    return [{"file": ROOT + stage(path), "change": change, "key": key, "old": a, "new": b}]
