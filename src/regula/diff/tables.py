"""Metrics and the papers' tables: metrics/*.json by leaf (a dotted path, `[i]` for a list
item) and metrics/*.csv by row and column, old -> new with the change, grouped by file.

Numbers within `tolerance` of each other are the same value (default `TOLERANCE`: half a unit
of the fourth decimal, the precision the report prints), so a float computed in another order
or on another CPU (a BLAS sum, an embedding) is not a change.

A table's rows are matched on a key: its shortest leading run of columns that tells every row
apart in both versions (`actor, iteration` in ltlcrit.csv, `skill` in cedar_skills.csv); a
table with repeated rows is compared as a multiset of rows.
"""
from __future__ import annotations

import csv
import io
import json
from collections import Counter

from regula.errors import DataError

ABSENT = object()
TOLERANCE = 5e-5


ROOTS = ("metrics",)  # where its files lie (which unavailable outputs concern it)


def selects(path: str) -> bool:
    return path.startswith("metrics/") and path.count("/") == 1 and path.endswith((".json", ".csv"))


def _number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def same(x, y, tolerance: float = 0.0) -> bool:
    """Equal as values: 1 and 1.0 are, True and 1 are not, nor 1 and "1"; NaN equals NaN;
    numbers at most `tolerance` apart are."""
    if isinstance(x, bool) or isinstance(y, bool) or isinstance(x, str) or isinstance(y, str):
        return type(x) is type(y) and x == y
    if isinstance(x, float) and isinstance(y, float) and x != x and y != y:
        return True
    if tolerance and _number(x) and _number(y):
        return abs(x - y) <= tolerance
    return x == y


def row(path, key, old, new) -> dict:
    change = "added" if old is ABSENT else "removed" if new is ABSENT else "changed"
    old, new = (None if v is ABSENT else v for v in (old, new))
    delta = new - old if change == "changed" and _number(old) and _number(new) else None
    if isinstance(delta, float):
        delta = round(delta, 12)  # 0.3 - 0.1 is 0.19999999999999998
    return {"file": path, "key": key, "change": change, "old": old, "new": new, "delta": delta}


def leaves(data, prefix: str = "") -> dict[str, object]:
    if isinstance(data, dict) and data:
        out = {}
        for k in sorted(data, key=str):
            out.update(leaves(data[k], f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(data, list) and data:
        out = {}
        for i, v in enumerate(data):
            out.update(leaves(v, f"{prefix}[{i}]"))
        return out
    return {prefix: data}


def _json(path: str, raw: bytes | None, where: str) -> dict:
    if raw is None:
        return {}
    try:
        return leaves(json.loads(raw))
    except ValueError as exc:
        raise DataError(f"{path} at {where}: not valid JSON ({exc})") from None


def _cell(text: str):
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    return text


def _csv(path: str, raw: bytes | None, where: str) -> tuple[list[str], list[tuple]]:
    if raw is None:
        return [], []
    try:
        rows = list(csv.reader(io.StringIO(raw.decode("utf-8"))))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"{path} at {where}: not a readable CSV table ({exc})") from None
    if not rows:
        return [], []
    header, body = rows[0], rows[1:]
    return header, [tuple(_cell(c) for c in r) + ("",) * (len(header) - len(r)) for r in body]


def key_columns(header: list[str], *tables: list[dict]) -> int:
    """How many leading columns tell every row apart in each table (0: none do)."""
    for k in range(1, len(header) + 1):
        cols = header[:k]
        if all(len({tuple(r.get(c, "") for c in cols) for r in t}) == len(t) for t in tables):
            return k
    return 0


def _compare_csv(path: str, old, new, where, tolerance: float) -> list[dict]:
    (ha, ra), (hb, rb) = _csv(path, old, where[0]), _csv(path, new, where[1])
    if old is None or new is None:
        return [_whole(path, old, new, f"{len(ra if new is None else rb)} rows")]
    out = [row(path, f"(column {c})", ABSENT, "") for c in hb if c not in ha]
    out += [row(path, f"(column {c})", "", ABSENT) for c in ha if c not in hb]
    da, db = [dict(zip(ha, r)) for r in ra], [dict(zip(hb, r)) for r in rb]
    header = [c for c in hb if c in ha]
    k = key_columns(header, da, db)
    if k == 0:  # repeated rows: a multiset of whole rows
        ca, cb = (Counter(tuple(r.get(c) for c in header) for r in t) for t in (da, db))
        text = lambda r: ", ".join(f"{c}={v}" for c, v in zip(header, r))  # noqa: E731
        out += [row(path, f"({text(r)})", "row", ABSENT) for r in sorted((ca - cb).elements(), key=str)]
        out += [row(path, f"({text(r)})", ABSENT, "row") for r in sorted((cb - ca).elements(), key=str)]
        return out
    cols = header[:k]
    ka = {tuple(r[c] for c in cols): r for r in da}
    kb = {tuple(r[c] for c in cols): r for r in db}
    name = lambda key: ", ".join(f"{c}={v}" for c, v in zip(cols, key))  # noqa: E731
    for key in ka:
        if key not in kb:
            out.append(row(path, f"({name(key)})", "row", ABSENT))
    for key, r in kb.items():
        if key not in ka:
            out.append(row(path, f"({name(key)})", ABSENT, "row"))
            continue
        for c in header[k:]:
            if not same(ka[key].get(c, ""), r.get(c, ""), tolerance):
                out.append(row(path, f"{name(key)}: {c}", ka[key].get(c), r.get(c)))
    return out


def _whole(path: str, old, new, size: str) -> dict:
    """A file added or removed: one row (its size), not one per leaf or table row."""
    return row(path, "(file)", ABSENT if old is None else size, ABSENT if new is None else size)


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str],
            tolerance: float = TOLERANCE) -> list[dict]:
    if path.endswith(".csv"):
        return _compare_csv(path, old, new, where, tolerance)
    a, b = _json(path, old, where[0]), _json(path, new, where[1])
    if old is None or new is None:
        return [_whole(path, old, new, f"{len(a or b)} values")]
    keys = list(a) + [k for k in b if k not in a]
    return [row(path, k, a.get(k, ABSENT), b.get(k, ABSENT)) for k in keys
            if k not in a or k not in b or not same(a[k], b[k], tolerance)]
