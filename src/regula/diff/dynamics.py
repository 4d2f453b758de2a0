"""DiVE's dynamics compared fact by fact: a fact is (element, attribute, arg) with a value
(how many, for requires / consumes / gives), and its status: `verified` when the verifier kept
it, else `discovered`. Its discovery step, support and text are how it was found, not what it
says, and are not compared.
"""
from __future__ import annotations

import json

from regula.errors import DataError

PRECONDITIONS = ("requires", "near", "faces")  # DiVE's action preconditions; the rest are outcomes
STATUSES = ("discovered", "verified")  # the lists of data/dive*/dynamics.json, weakest first


ROOTS = ("data",)  # where its files lie (which unavailable outputs concern it), less the caches
NOT_UNDER = ("data/cache",)


def selects(path: str) -> bool:
    return path.startswith("data/") and path.endswith("/dynamics.json") and not path.startswith("data/cache/")


def _facts(path: str, raw: bytes | None, where: str) -> dict[tuple, tuple]:
    """(element, attribute, arg) -> (value, status)."""
    if raw is None:
        return {}
    try:
        data = json.loads(raw)
        out = {}
        for status in STATUSES:  # verified last: a verified fact's status wins
            for fact in data.get(status, []):
                out[(fact["element"], fact["attribute"], str(fact["arg"]))] = (int(fact.get("value", 1)), status)
        return out
    except (ValueError, TypeError, KeyError, AttributeError) as exc:
        raise DataError(f"{path} at {where}: not DiVE's dynamics ({type(exc).__name__}: {exc})") from None


def part(attribute: str) -> str:
    return "precondition" if attribute in PRECONDITIONS else "outcome"


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str]) -> list[dict]:
    a, b = _facts(path, old, where[0]), _facts(path, new, where[1])
    rows = []
    for key in sorted(set(a) | set(b)):
        was, now = a.get(key), b.get(key)
        if was == now:
            continue
        if was is None:
            change = "added"
        elif now is None:
            change = "removed"
        else:
            change = "changed" if was[0] != now[0] else "status"
        element, attribute, arg = key
        rows.append({"file": path, "change": change, "fact": f"{element} {attribute} {arg}", "part": part(attribute),
                     "value_old": was[0] if was else None, "value_new": now[0] if now else None,
                     "status_old": was[1] if was else None, "status_new": now[1] if now else None})
    return rows
