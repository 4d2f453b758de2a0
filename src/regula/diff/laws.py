"""Laws compared by meaning: a law file's laws (the `laws` list, or a critic record's
`accepted` / `rejected` / `removed` lists) matched by their formulas' languages, not by their
names or places in the file.

Same formula: the same law (its kind, source or explanation may have changed). A different
formula with the same language: `rewritten`. A law gone and another come in its place (the
same name, else the most atoms in common): `replaced`, with a shortest trace on which exactly
one of the two holds. The rest: `added` or `removed`. Equal languages are decided on the
automaton of `old xor new` (the logic core's monitor, Spot where it imports): empty language,
equal laws; else its shortest accepted trace tells them apart. Letters are any valuation of
the atoms (the file says nothing of which atoms are actions).
"""
from __future__ import annotations

import json
from collections import deque

import yaml

from regula.errors import DataError
from regula.logic import FormulaError, Verdict, monitor, parse, resolve_backend
from regula.logic.formula import binary

GROUPS = ("laws", "accepted", "rejected", "removed")  # lists of laws in a law file or a critic record
FIELDS = ("kind", "source", "explanation")  # what a law says besides its formula (name: positional)


ROOTS = ("data/laws",)  # where its files lie (which unavailable outputs concern it)


def selects(path: str) -> bool:
    return path.startswith("data/laws/") and path.endswith((".yaml", ".yml", ".json"))


def _groups(path: str, raw: bytes | None, where: str) -> dict[str, list[dict]]:
    """group -> its laws ({formula, kind, source, explanation, name}); {} for no file."""
    if raw is None:
        return {}
    try:
        data = json.loads(raw) if path.endswith(".json") else yaml.safe_load(raw)
    except (ValueError, yaml.YAMLError) as exc:
        raise DataError(f"{path} at {where}: not valid {'JSON' if path.endswith('.json') else 'YAML'} "
                        f"({' '.join(str(exc).split())[:200]})") from None
    if isinstance(data, list):
        data = {"laws": data}
    out = {}
    for group in GROUPS:
        items = data.get(group) if isinstance(data, dict) else None
        if not isinstance(items, list):
            continue
        laws = []
        for i, item in enumerate(items, 1):
            item = {"formula": item} if isinstance(item, str) else item
            if not isinstance(item, dict) or not isinstance(item.get("formula"), str):
                raise DataError(f"{path} at {where}: {group} item {i} has no formula")
            try:
                parsed = parse(item["formula"])
            except FormulaError:
                parsed = None  # a critic's rejected proposal may not parse: compared as text
            laws.append({**{k: item.get(k, "") for k in ("name", *FIELDS)}, "formula": item["formula"],
                         "parsed": parsed, "key": parsed if parsed is not None else ("text", item["formula"])})
        out[group] = laws
    return out


def tell_apart(f, g, backend: str = "auto") -> tuple[bool | None, list[frozenset] | None]:
    """(same language?, a shortest trace on which exactly one of f, g holds); (None, None) where
    deciding it passes the logic core's limits."""
    try:
        m = monitor(binary("xor", f, g), backend, lazy=False)  # equivalence needs the whole automaton
        _, start, edges, accepting, _ = m.transitions("deciding whether two laws are equivalent")
    except FormulaError:
        return None, None
    out: dict = {}
    for (src, dst), letters in edges.items():
        out.setdefault(src, []).append((dst, min(letters, key=lambda x: (len(x), sorted(x)))))
    parent, queue = {start: None}, deque([start])
    while queue:  # breadth first: the first accepting node is reached by a shortest trace
        node = queue.popleft()
        if node in accepting:
            trace = []
            while parent[node] is not None:
                node, letter = parent[node]
                trace.append(letter)
            return False, trace[::-1]
        for dst, letter in sorted(out.get(node, ()), key=lambda e: e[0]):
            if dst not in parent:
                parent[dst] = (node, letter)
                queue.append(dst)
    return True, None


def _holds(f, trace, backend: str) -> bool:
    m = monitor(f, backend)
    return m.run(trace)[-1] == Verdict.ACCEPTING


def show_trace(trace) -> str:
    return " ; ".join("{" + ", ".join(sorted(letter)) + "}" for letter in trace)


def _row(label, change, old, new, detail="", **extra) -> dict:
    return {"file": label, "change": change, "old": old["formula"] if old else "", "new": new["formula"] if new else "",
            "name": (new or old)["name"], "detail": detail, **extra}


def _atoms(law: dict) -> frozenset:
    return law["parsed"].atoms() if law["parsed"] is not None else frozenset()


def _replaced(label: str, old: dict, new: dict, backend: str) -> dict:
    if old["parsed"] is None or new["parsed"] is None:
        return _row(label, "replaced", old, new, "no trace: a formula does not parse")
    same, trace = tell_apart(old["parsed"], new["parsed"], backend)
    if same is None:
        return _row(label, "replaced", old, new, "no trace: deciding it passes the logic core's limits")
    holds = "old" if _holds(old["parsed"], trace, backend) else "new"
    return _row(label, "replaced", old, new, f"only the {holds} law holds on {show_trace(trace)}",
                trace=[sorted(x) for x in trace], holds=holds)


def _pairs(gone: list[dict], came: list[dict]) -> list[tuple[dict, dict]]:
    """Laws that replace each other: the same name first, then the most atoms in common."""
    pairs, gone, came = [], list(gone), list(came)
    for old in list(gone):
        for new in came:
            if old["name"] and old["name"] == new["name"]:
                pairs.append((old, new))
                gone.remove(old)
                came.remove(new)
                break
    scored = sorted(((-len(_atoms(o) & _atoms(n)), i, j) for i, o in enumerate(gone)
                     for j, n in enumerate(came)), key=lambda s: s)
    used_o, used_n = set(), set()
    for score, i, j in scored:
        if score < 0 and i not in used_o and j not in used_n:
            used_o.add(i)
            used_n.add(j)
            pairs.append((gone[i], came[j]))
    return pairs


def compare(path: str, old: bytes | None, new: bytes | None, where: tuple[str, str],
            backend: str = "auto") -> list[dict]:
    backend = resolve_backend(backend)
    a, b = _groups(path, old, where[0]), _groups(path, new, where[1])
    rows = []
    for group in [g for g in GROUPS if g in a or g in b]:
        label = path if group == "laws" else f"{path} ({group})"
        olds, news = list(a.get(group, [])), list(b.get(group, []))
        by_formula = {law["key"]: law for law in news}
        gone = []
        for law in olds:  # the same formula (parsed: spacing and parentheses do not count)
            twin = by_formula.pop(law["key"], None)
            if twin is None:
                gone.append(law)
            else:
                changed = [f"{k}: {law[k]!r} -> {twin[k]!r}" for k in FIELDS if law[k] != twin[k]]
                if changed:
                    rows.append(_row(label, "changed", law, twin, "; ".join(changed)))
        came = [law for law in news if law["key"] in by_formula]
        for law in list(gone):  # another formula with the same language
            for twin in came:
                if law["parsed"] is not None and twin["parsed"] is not None \
                        and tell_apart(law["parsed"], twin["parsed"], backend)[0]:
                    rows.append(_row(label, "rewritten", law, twin, "same language"))
                    gone.remove(law)
                    came.remove(twin)
                    break
        for o, n in _pairs(gone, came):
            rows.append(_replaced(label, o, n, backend))
            gone.remove(o)
            came.remove(n)
        rows += [_row(label, "removed", law, None) for law in gone]
        rows += [_row(label, "added", None, law) for law in came]
    return rows
